/* test_merge.c - the session reader and the k-way merge: manifests of every kind (ours,
 * the original tracer's, missing, unreadable, incomplete), the merge against a reference
 * sorted by (timestamp, slot, seq), filters, time seek, JSON robustness, detail links.
 * Every fixture file is written byte by byte by this program (own little-endian helpers,
 * own CRC32-C), never through the library's encoders or writer. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "fixtures.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.h"
#include "scratch_dir.h"

/* ---- little-endian bytes and CRC32-C, written here, not taken from atf.h --------------- */
static void put16(uint8_t *p, uint64_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint64_t v) {
    put16(p, v);
    put16(p + 2, v >> 16);
}
static void put64(uint8_t *p, uint64_t v) {
    put32(p, v);
    put32(p + 4, v >> 32);
}


/* A growing text, for manifests. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void text_add(text *t, const char *s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1) cap *= 2;
        t->p = (char *)realloc(t->p, cap);
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void text_str(text *t, const char *s) { text_add(t, s, strlen(s)); }

static void text_u64(text *t, uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    text_str(t, b);
}

/* ---- fixtures --------------------------------------------------------------------------- */
#define FX_NONE UINT64_MAX

typedef struct fx_ev {
    uint64_t ts, fid;
    uint64_t detail_seq;        /* FX_NONE when the event has no detail record */
    uint32_t kind, depth;
} fx_ev;

enum { FX_FINAL = 0, FX_CRASHED = 1, FX_FOOTER_AT_END = 2, FX_HEADER_ONLY = 3 };

typedef struct fx_thread {
    uint32_t slot, tid;
    int layout;                 /* 1 or 2 */
    int state;                  /* FX_FINAL, FX_CRASHED (no footer, torn tail), ... */
    uint64_t events_offset;     /* 0 = 64 */
    int detail;                 /* write detail.atf for the events that have detail_seq */
    int crc;                    /* store a real CRC32-C (else 0, "not computed") */
    size_t n;
    fx_ev *ev;
} fx_thread;

#define FX_MAX_THREADS 80

typedef struct fx_session {
    char root[256];             /* the mkdtemp directory */
    char dir[320];              /* root/pid_4242 */
    fx_thread t[FX_MAX_THREADS];
    size_t count;
} fx_session;

static int fx_begin(fx_session *s) {
    memset(s, 0, sizeof *s);
    snprintf(s->root, sizeof s->root, "/tmp/atf_test_merge_XXXXXX");
    if (!mkdtemp(s->root)) return 0;
    snprintf(s->dir, sizeof s->dir, "%s/pid_4242", s->root);
    return mkdir(s->dir, 0755) == 0;
}

static void fx_end(fx_session *s) {
    size_t i;
    for (i = 0; i < s->count; i++) free(s->t[i].ev);
    remove_tree(s->root);
    memset(s, 0, sizeof *s);
}

/* Adds a thread with n events whose timestamps start near `start` and advance by 0..step
 * (so equal timestamps occur inside a thread and across threads). Every third event or so
 * gets a detail record when `detail` is set. */
static fx_thread *fx_add(fx_session *s, uint32_t slot, int layout, size_t n, uint64_t start,
                         uint64_t step, int detail) {
    fx_thread *t = &s->t[s->count++];
    uint64_t ts = start, d = 0;
    size_t i;
    memset(t, 0, sizeof *t);
    t->slot = slot;
    t->tid = 1000 + slot * 7;
    t->layout = layout;
    t->detail = detail;
    t->n = n;
    t->ev = (fx_ev *)calloc(n ? n : 1, sizeof *t->ev);
    for (i = 0; i < n; i++) {
        fx_ev *e = &t->ev[i];
        ts += rng_below(step + 1);
        e->ts = ts;
        e->fid = (rng_below(3) << 32) | rng_below(9);
        e->kind = (uint32_t)(1 + rng_below(3));
        e->depth = (uint32_t)rng_below(40);
        e->detail_seq = detail && rng_below(3) == 0 ? d++ : FX_NONE;
    }
    return t;
}

/* Makes a thread's timestamps not time-ordered: swaps, a reversed block, and duplicates,
 * with detail_seq kept increasing in file order (detail.atf stays dense). */
static void fx_shuffle(fx_thread *t) {
    size_t i, n = t->n;
    if (n < 4) return;
    for (i = 0; i < n / 3; i++) {
        size_t a = (size_t)rng_below(n), b = (size_t)rng_below(n);
        uint64_t tmp = t->ev[a].ts;
        t->ev[a].ts = t->ev[b].ts;
        t->ev[b].ts = tmp;
    }
    for (i = 0; i < n / 8; i++) t->ev[n / 2 + i].ts = t->ev[n / 2 - 1 - i].ts; /* duplicates */
    if (t->ev[0].ts <= t->ev[1].ts) t->ev[1].ts = t->ev[0].ts - 1;          /* surely unsorted */
}

static void fx_write_index(const char *path, const fx_thread *t) {
    uint64_t eo = t->events_offset ? t->events_offset : 64, n = t->n, i;
    int final = t->state == FX_FINAL, footer = t->state == FX_FINAL || t->state == FX_FOOTER_AT_END;
    size_t total = (size_t)(eo + n * 32 + (footer ? 64 : t->state == FX_CRASHED ? 13 : 0));
    uint8_t *b = (uint8_t *)calloc(total, 1), *f;
    uint32_t crc;
    if (t->state == FX_HEADER_ONLY) n = 0, total = (size_t)eo;
    memcpy(b, "ATI2", 4);
    b[4] = 1;
    b[5] = (uint8_t)t->layout;
    b[6] = 1;
    b[7] = 4;
    put32(b + 8, t->detail ? 1 : 0);
    put32(b + 12, t->tid);
    b[16] = 3;
    if (t->layout == 1) {
        put32(b + 24, 32);
        put32(b + 28, final ? n : 0);
    } else {
        put32(b + 20, 32);
        put64(b + 24, final ? n : 0);
    }
    put64(b + 32, eo);
    put64(b + 40, final ? eo + n * 32 : 0);
    put64(b + 48, final && n ? t->ev[0].ts : 0);
    put64(b + 56, final && n ? t->ev[n - 1].ts : 0);
    for (i = 0; i < n; i++) {
        uint8_t *p = b + eo + 32 * i;
        const fx_ev *e = &t->ev[i];
        put64(p, e->ts);
        put64(p + 8, e->fid);
        if (t->layout == 1) {
            put32(p + 16, t->tid);
            put32(p + 20, e->kind);
            put32(p + 24, e->depth);
            put32(p + 28, e->detail_seq == FX_NONE ? 0xFFFFFFFFu : e->detail_seq);
        } else {
            put64(p + 16, e->detail_seq);
            p[24] = (uint8_t)e->kind;
        }
    }
    crc = t->crc ? fx_crc32c(b + eo, (size_t)(n * 32)) : 0;
    f = b + eo + n * 32;
    if (footer) {
        memcpy(f, "2ITA", 4);
        put32(f + 4, crc);
        put64(f + 8, n);
        put64(f + 16, n ? t->ev[0].ts : 0);
        put64(f + 24, n ? t->ev[n - 1].ts : 0);
        put64(f + 32, n * 32);
    } else if (t->state == FX_CRASHED) {
        memset(f, 0xAB, 13); /* a torn last record */
    }
    write_file(path, b, total);
    free(b);
}

static void fx_write_detail(const char *path, const fx_thread *t) {
    size_t cap = 64 + 64, len = 64, i, count = 0;
    uint8_t *b, *h;
    uint64_t first_seq = 0, last_seq = 0, first_ts = 0, last_ts = 0;
    for (i = 0; i < t->n; i++) cap += 24 + 100 + 32;
    b = (uint8_t *)calloc(cap, 1);
    for (i = 0; i < t->n; i++) {
        const fx_ev *e = &t->ev[i];
        uint8_t *r = b + len, *p = r + 24;
        uint32_t stack = (uint32_t)(i % 33), k, total = 24 + 100 + stack;
        if (e->detail_seq == FX_NONE) continue;
        put32(r, total);
        put16(r + 4, e->kind == 2 ? 4 : 3);
        if (t->layout == 1) {
            put32(r + 8, i);
            put32(r + 12, t->tid);
        } else {
            put64(r + 8, i);
        }
        put64(r + 16, e->ts);
        put64(p, e->fid);
        put64(p + 8, i);          /* x0: the index seq, checked by the link test */
        put64(p + 16, e->ts);     /* x1 */
        put64(p + 72, 0x1000 + i); /* lr */
        put16(p + 96, stack);
        for (k = 0; k < stack; k++) p[100 + k] = (uint8_t)(k ^ i);
        if (!count) first_seq = i, first_ts = e->ts;
        last_seq = i;
        last_ts = e->ts;
        count++;
        len += total;
    }
    h = b;
    memcpy(h, "ATD2", 4);
    h[4] = 1;
    h[5] = (uint8_t)t->layout;
    h[6] = 1;
    h[7] = 4;
    put32(h + 12, t->tid);
    put64(h + 20, 64);
    put64(h + 28, count);
    put64(h + 36, len - 64);
    put64(h + 44, first_seq);
    put64(h + 52, last_seq);
    memcpy(b + len, "2DTA", 4);
    put32(b + len + 4, t->crc ? fx_crc32c(b + 64, len - 64) : 0);
    put64(b + len + 8, count);
    put64(b + len + 16, len - 64);
    put64(b + len + 24, first_ts);
    put64(b + len + 32, last_ts);
    write_file(path, b, len + 64);
    free(b);
}

static void fx_write_thread(const fx_session *s, const fx_thread *t) {
    char path[512];
    snprintf(path, sizeof path, "%s/thread_%u", s->dir, t->slot);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/thread_%u/index.atf", s->dir, t->slot);
    fx_write_index(path, t);
    if (t->detail) {
        snprintf(path, sizeof path, "%s/thread_%u/detail.atf", s->dir, t->slot);
        fx_write_detail(path, t);
    }
}

static void fx_write_all(const fx_session *s) {
    size_t i;
    for (i = 0; i < s->count; i++) fx_write_thread(s, &s->t[i]);
}

static void fx_write_manifest_text(const fx_session *s, const char *json, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/manifest.json", s->dir);
    unlink(path); /* a fresh file: truncating one in place can make the file system flush */
    write_file(path, json, len);
}

static uint64_t fx_min_ts(const fx_session *s) {
    uint64_t v = UINT64_MAX;
    size_t i, k;
    for (i = 0; i < s->count; i++)
        for (k = 0; k < s->t[i].n; k++)
            if (s->t[i].ev[k].ts < v) v = s->t[i].ev[k].ts;
    return v;
}

/* The smallest first timestamp and the largest last one of the threads' files: the
 * session's range as the open sees it, before any thread's order is checked. */
static uint64_t fx_first_ts(const fx_session *s) {
    uint64_t v = UINT64_MAX;
    size_t i;
    for (i = 0; i < s->count; i++)
        if (s->t[i].n && s->t[i].ev[0].ts < v) v = s->t[i].ev[0].ts;
    return v;
}

static uint64_t fx_last_ts(const fx_session *s) {
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < s->count; i++)
        if (s->t[i].n && s->t[i].ev[s->t[i].n - 1].ts > v) v = s->t[i].ev[s->t[i].n - 1].ts;
    return v;
}

static uint64_t fx_max_ts(const fx_session *s) {
    uint64_t v = 0;
    size_t i, k;
    for (i = 0; i < s->count; i++)
        for (k = 0; k < s->t[i].n; k++)
            if (s->t[i].ev[k].ts > v) v = s->t[i].ev[k].ts;
    return v;
}

/* A manifest as atf.h's session writer shapes it: every thread of the session (plus the
 * slots in `extra`, which have no directory), symbols with escaped names. */
static void fx_manifest_modern(const fx_session *s, const uint32_t *extra, size_t extra_n,
                               size_t skip_last, text *out) {
    size_t i, listed = s->count - skip_last;
    text_str(out, "{\"format_version\":2,\"layout\":1,\"clock_type\":3,\"clock\":\"boottime\",");
    text_str(out, "\"pid\":4242,\"arch\":\"x86_64\",\"os\":\"linux\",\"state\":\"closed\",\"threads\":[");
    for (i = 0; i < listed + extra_n; i++) {
        const fx_thread *t = i < listed ? &s->t[i] : NULL;
        uint32_t slot = t ? t->slot : extra[i - listed];
        if (i) text_str(out, ",");
        text_str(out, "{\"id\":");
        text_u64(out, slot);
        text_str(out, t && t->detail ? ",\"has_detail\":true" : ",\"has_detail\":false");
        text_str(out, ",\"os_thread_id\":");
        text_u64(out, t ? t->tid : 99999);
        text_str(out, ",\"name\":\"worker ");
        text_u64(out, slot);
        text_str(out, "\",\"events_written\":");
        text_u64(out, t ? t->n : 0);
        text_str(out, ",\"events_dropped\":");
        text_u64(out, slot * 3 + 1);
        text_str(out, ",\"finalized\":true}");
    }
    text_str(out, "],\"time_start_ns\":");
    text_u64(out, s->count ? fx_min_ts(s) : 0);
    text_str(out, ",\"time_end_ns\":");
    text_u64(out, s->count ? fx_max_ts(s) : 0);
    text_str(out, ",\"events_dropped\":7,\"attach_failures\":0,\"modules\":[{\"module_id\":0,"
                  "\"path\":\"/usr/bin/app\",\"base_address\":\"0x400000\",\"size\":4096}],"
                  "\"symbols\":[{\"function_id\":\"0x0000000000000001\",\"module_id\":0,"
                  "\"symbol_index\":1,\"name\":\"main\"},{\"function_id\":\"0x0000000100000002\","
                  "\"module_id\":1,\"symbol_index\":2,\"name\":\"q\\\"uote\\\\back\\nnl\\u00e9\\ud83d\\ude00\"},"
                  "{\"function_id\":\"0x0000000200000008\",\"module_id\":2,\"symbol_index\":8,"
                  "\"name\":\"ns::cls<int>::op()\"}],\"timing_anchors\":[{\"name\":\"wall\","
                  "\"host_ns\":5,\"value\":1.7e9,\"rate\":1}]}\n");
}

/* ---- the reference: everything collected and sorted by (ts, slot, seq) ------------------- */
typedef struct ref_item {
    uint64_t ts, seq;
    uint32_t slot, tid;
    int layout;
    const fx_ev *ev;
} ref_item;

typedef struct ref_list {
    ref_item *v;
    size_t n;
} ref_list;

static int ref_cmp(const void *a, const void *b) {
    const ref_item *x = (const ref_item *)a, *y = (const ref_item *)b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ref_wants(const atf_merge_filter *f, uint32_t slot, const fx_ev *e) {
    size_t i;
    if (f && f->slots) {
        for (i = 0; i < f->slot_count && f->slots[i] != slot; i++) {}
        if (i == f->slot_count) return 0;
    }
    if (f && f->kinds && (e->kind >= 32 || !(f->kinds & (1u << e->kind)))) return 0;
    if (f && e->ts < f->from_ns) return 0;
    if (f && f->to_ns && e->ts > f->to_ns) return 0;
    return 1;
}

static ref_list ref_build(const fx_session *s, const atf_merge_filter *f) {
    ref_list r;
    size_t i, k, total = 0;
    for (i = 0; i < s->count; i++) total += s->t[i].n;
    r.v = (ref_item *)calloc(total ? total : 1, sizeof *r.v);
    r.n = 0;
    for (i = 0; i < s->count; i++) {
        const fx_thread *t = &s->t[i];
        size_t n = t->state == FX_HEADER_ONLY ? 0 : t->n;
        for (k = 0; k < n; k++) {
            ref_item *x;
            if (!ref_wants(f, t->slot, &t->ev[k])) continue;
            x = &r.v[r.n++];
            x->ts = t->ev[k].ts;
            x->seq = k;
            x->slot = t->slot;
            x->tid = t->tid;
            x->layout = t->layout;
            x->ev = &t->ev[k];
        }
    }
    qsort(r.v, r.n, sizeof *r.v, ref_cmp);
    return r;
}

/* Whether a merged item is exactly the reference item, every decoded field included. */
static int item_is(const atf_merge_item *it, const ref_item *x) {
    uint64_t detail = x->ev->detail_seq;
    return it->slot == x->slot && it->seq == x->seq && it->thread && it->thread->slot == x->slot &&
           it->event.timestamp_ns == x->ts && it->event.function_id == x->ev->fid &&
           it->event.kind == x->ev->kind && it->event.detail_seq == detail &&
           it->event.call_depth == (x->layout == 1 ? x->ev->depth : 0) &&
           it->event.thread_id == (x->layout == 1 ? x->tid : 0);
}

/* Runs the merge to its end and compares it with ref[from..]; reports the first
 * difference only. Returns 1 when equal. */
static int merge_matches(atf_merge *m, const ref_list *ref, size_t from, const char *what) {
    atf_merge_item it;
    size_t i = from;
    atf_result rc;
    while ((rc = atf_merge_next(m, &it)) == ATF_OK) {
        if (i >= ref->n) {
            printf("  %s: merge yields more than the %zu reference events\n", what, ref->n);
            CHECK(i < ref->n);
            return 0;
        }
        if (!item_is(&it, &ref->v[i])) {
            printf("  %s: event %zu differs: merge (ts %" PRIu64 ", slot %u, seq %" PRIu64
                   "), reference (ts %" PRIu64 ", slot %u, seq %" PRIu64 ")\n",
                   what, i, it.event.timestamp_ns, it.slot, it.seq, ref->v[i].ts, ref->v[i].slot,
                   ref->v[i].seq);
            CHECK(item_is(&it, &ref->v[i]));
            return 0;
        }
        i++;
    }
    CHECK_RESULT(ATF_E_RANGE, rc);
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(m, &it)); /* stays at the end */
    if (i != ref->n) {
        printf("  %s: merge ended early\n", what);
        CHECK_EQ(ref->n, i);
        return 0;
    }
    return 1;
}

static int session_merge_matches(atf_session_reader *r, const fx_session *s,
                                 const atf_merge_filter *f, const char *what) {
    atf_merge m;
    ref_list ref = ref_build(s, f);
    int ok = 0;
    atf_result rc = atf_merge_init(&m, r, f);
    CHECK_RESULT(ATF_OK, rc);
    if (rc == ATF_OK) {
        ok = merge_matches(&m, &ref, 0, what);
        atf_merge_deinit(&m);
    }
    free(ref.v);
    return ok;
}

static uint64_t ceil_log2_plus1(uint64_t n) { /* ceil(log2(n + 1)) */
    uint64_t bits = 0;
    while (n) {
        bits++;
        n >>= 1;
    }
    return bits;
}

/* Seeks to `count` random instants (and the edges) and checks the first events after
 * each against the reference. Returns 1 when all agree. */
static int seeks_match(atf_session_reader *r, const fx_session *s, const atf_merge_filter *f,
                       size_t count, const char *what) {
    atf_merge m;
    ref_list ref = ref_build(s, f);
    uint64_t lo = fx_min_ts(s), hi = fx_max_ts(s);
    size_t i, k;
    int ok = 1;
    if (atf_merge_init(&m, r, f) != ATF_OK) {
        free(ref.v);
        CHECK(0);
        return 0;
    }
    for (i = 0; ok && i < count; i++) {
        uint64_t t = i == 0 ? 0 : i == 1 ? UINT64_MAX : i == 2 ? hi : i == 3 ? lo
                   : i % 3 == 0 && ref.n ? ref.v[rng_below(ref.n)].ts
                   : lo + rng_below(hi - lo < UINT64_MAX - 1 ? hi - lo + 2 : hi - lo);
        size_t first = 0;
        while (first < ref.n && ref.v[first].ts < t) first++;
        atf_merge_seek(&m, t);
        for (k = 0; k < 4; k++) {
            atf_merge_item it;
            atf_result rc = atf_merge_next(&m, &it);
            if (first + k >= ref.n) {
                if (rc != ATF_E_RANGE) ok = 0;
                break;
            }
            if (rc != ATF_OK || !item_is(&it, &ref.v[first + k])) {
                ok = 0;
                break;
            }
        }
        if (!ok) printf("  %s: seek to %" PRIu64 " differs at event %zu after it\n", what, t, k);
    }
    CHECK(ok);
    atf_merge_deinit(&m);
    free(ref.v);
    return ok;
}

/* A session of `k` threads with mixed layouts and ties, one of them not time-ordered. */
static void fx_standard(fx_session *s, size_t k, size_t per_thread, int with_detail) {
    size_t i;
    for (i = 0; i < k; i++) {
        /* slots with a gap (0,1,2,4,...): slots need not be dense */
        uint32_t slot = (uint32_t)(i < 3 ? i : i + 1);
        fx_thread *t = fx_add(s, slot, (i % 2) ? 2 : 1, per_thread + i * 7, 1000 + i, 3,
                              with_detail && i != 1);
        t->crc = (int)(i % 2);
        if (i == 2) fx_shuffle(t);
    }
}

/* ---- tests ------------------------------------------------------------------------------ */
static void test_crc_helper_known_answer(void) {
    CHECK_EQ(0xE3069283u, fx_crc32c((const uint8_t *)"123456789", 9));
}

static void test_merge_interleaved_ties_and_layouts(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    size_t i;
    rng_seed(1);
    CHECK(fx_begin(&s));
    for (i = 0; i < 6; i++) {
        /* steps of 0..2 from nearby starts: many equal timestamps in and across threads */
        fx_add(&s, (uint32_t)(i * 2), i % 3 == 2 ? 2 : 1, 300 + i * 31, 50 + i, 2, 0);
    }
    s.t[3].events_offset = 128; /* bytes between the header and the events are skipped */
    s.t[4].crc = 1;
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 0, &man);
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(6, r.thread_count);
    CHECK_EQ(2, r.format_version);
    CHECK_EQ(1, r.layout);
    CHECK_EQ(3, r.clock_type);
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    for (i = 0; i < r.thread_count && i < 6; i++) {
        atf_session_thread *t = &r.threads[i];
        char name[32];
        CHECK_EQ(s.t[i].slot, t->slot);
        CHECK_EQ(s.t[i].tid, t->os_thread_id);
        CHECK_EQ(s.t[i].slot * 3 + 1, t->events_dropped);
        CHECK(t->in_manifest);
        CHECK(!t->missing);
        CHECK_EQ(ATF_ORDER_UNKNOWN, t->out_of_order); /* the open reads the two ends only */
        CHECK_EQ(s.t[i].ev[0].ts, t->time_min_ns);
        CHECK_EQ(s.t[i].ev[s.t[i].n - 1].ts, t->time_max_ns);
        CHECK_EQ(s.t[i].n, t->reader.index.event_count);
        snprintf(name, sizeof name, "worker %u", s.t[i].slot);
        CHECK(strcmp(name, t->name) == 0);
        CHECK(atf_session_reader_thread(&r, s.t[i].slot) == t);
    }
    CHECK_EQ(0, atf_session_reader_check_order(&r, NULL));
    for (i = 0; i < r.thread_count && i < 6; i++) {
        CHECK(!r.threads[i].out_of_order);
        CHECK_EQ(s.t[i].ev[0].ts, r.threads[i].time_min_ns);
        CHECK_EQ(s.t[i].ev[s.t[i].n - 1].ts, r.threads[i].time_max_ns);
    }
    CHECK(atf_session_reader_thread(&r, 1) == NULL);
    session_merge_matches(&r, &s, NULL, "all threads");
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_merge_out_of_order_thread(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    size_t i;
    rng_seed(2);
    CHECK(fx_begin(&s));
    fx_standard(&s, 4, 400, 0);
    fx_shuffle(&s.t[0]); /* two unsorted threads, one of each layout */
    fx_shuffle(&s.t[3]);
    s.t[3].layout = 2;
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(4, r.thread_count);
    for (i = 0; i < r.thread_count; i++)
        CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[i].out_of_order);
    CHECK_EQ(fx_first_ts(&s), r.time_start_ns); /* the files' ends, until checked */
    CHECK_EQ(fx_last_ts(&s), r.time_end_ns);
    session_merge_matches(&r, &s, NULL, "out of order"); /* checks every thread it merges */
    for (i = 0; i < r.thread_count; i++)
        CHECK_EQ(i == 0 || i == 2 || i == 3, r.threads[i].out_of_order);
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    CHECK_EQ(1, atf_session_reader_check_order(&r, NULL)); /* checked already: the same */
    CHECK_EQ(0, atf_session_reader_check_order(&r, &r.threads[1]));
    CHECK_EQ(1, atf_session_reader_check_order(&r, &r.threads[2]));
    /* twice: the permutation built by the first merge is reused */
    session_merge_matches(&r, &s, NULL, "out of order again");
    /* two merges side by side over one reader */
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    session_merge_matches(&r, &s, NULL, "second merge");
    {
        ref_list ref = ref_build(&s, NULL);
        merge_matches(&m, &ref, 0, "first merge after the second");
        free(ref.v);
    }
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_session_without_manifest(void) {
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(3);
    CHECK(fx_begin(&s));
    fx_standard(&s, 5, 200, 1);
    s.t[4].state = FX_CRASHED; /* no footer, torn tail: counted from the size */
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(5, r.thread_count);
    CHECK_EQ(3, r.clock_type);
    CHECK_EQ(1, r.layout); /* taken from the files: slot 0 is layout 1 */
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    for (i = 0; i < r.thread_count; i++) {
        CHECK(!r.threads[i].in_manifest);
        CHECK(!r.threads[i].missing);
        CHECK_EQ(s.t[i].slot, r.threads[i].slot);
        CHECK_EQ(s.t[i].tid, r.threads[i].os_thread_id); /* from the index header */
        CHECK_EQ(s.t[i].detail, r.threads[i].reader.has_detail);
    }
    CHECK_EQ(ATF_COUNT_FROM_SIZE, r.threads[4].reader.index.counted);
    CHECK(atf_session_reader_symbol(&r, 1) == NULL);
    session_merge_matches(&r, &s, NULL, "no manifest");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_manifest_lists_missing_thread(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    const uint32_t extra[] = {9, 3};
    atf_session_thread *t;
    char path[512];
    rng_seed(4);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 100, 0);
    fx_write_all(&s);
    /* thread 3: listed, its directory exists but holds no index.atf */
    snprintf(path, sizeof path, "%s/thread_3", s.dir);
    mkdir(path, 0755);
    fx_manifest_modern(&s, extra, 2, 0, &man);
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(5, r.thread_count);
    t = atf_session_reader_thread(&r, 9);
    CHECK(t != NULL);
    if (t) {
        CHECK(t->in_manifest);
        CHECK(t->missing);
        CHECK_EQ(0, t->reader.index.event_count);
    }
    t = atf_session_reader_thread(&r, 3);
    CHECK(t != NULL);
    if (t) CHECK(t->missing);
    CHECK(r.threads[r.thread_count - 1].slot == 9); /* sorted by slot */
    session_merge_matches(&r, &s, NULL, "missing thread skipped");
    {   /* a filter naming only the missing thread yields nothing */
        const uint32_t only[] = {9};
        atf_merge_filter f;
        memset(&f, 0, sizeof f);
        f.slots = only;
        f.slot_count = 1;
        session_merge_matches(&r, &s, &f, "only the missing thread");
    }
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_original_tracer_manifest(void) {
    fx_session s;
    atf_session_reader r;
    const char *json =
        "{\n  \"format_version\": 1,\n  \"clock_type\": 1,\n  \"time_start_ns\": 0,\n"
        "  \"time_end_ns\": 0,\n  \"threads\": [\n    {\"id\": 0, \"has_detail\": true},\n"
        "    {\"id\": 1, \"has_detail\": true}\n  ],\n"
        "  \"modules\": [{\"module_id\": 0, \"path\": \"/app/bin\", \"base_address\": "
        "\"0x0000000100000000\", \"size\": 65536}],\n"
        "  \"symbols\": [\n"
        "    {\"function_id\": \"0x0000000000000003\", \"module_id\": 0, \"symbol_index\": 3, "
        "\"name\": \"main\"},\n"
        "    {\"function_id\": \"0x00000001000000ff\", \"module_id\": 1, \"symbol_index\": 255, "
        "\"name\": \"-[NSObject init]\"},\n"
        "    {\"function_id\": \"0x00000001000000FE\", \"module_id\": 1, \"symbol_index\": 254, "
        "\"name\": \"upper\"}\n  ]\n}\n";
    size_t i;
    rng_seed(5);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 300, 5000, 4, 0);
    fx_add(&s, 1, 1, 250, 5001, 4, 0);
    fx_shuffle(&s.t[1]); /* the original tracer's files are not time-ordered */
    fx_write_all(&s);
    fx_write_manifest_text(&s, json, strlen(json));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(1, r.format_version);
    CHECK_EQ(1, r.clock_type);  /* the manifest's value wins over the files' */
    CHECK_EQ(1, r.layout);      /* from the files */
    CHECK_EQ(fx_first_ts(&s), r.time_start_ns); /* 0 in the manifest: from the files */
    CHECK_EQ(fx_last_ts(&s), r.time_end_ns);
    CHECK_EQ(1, atf_session_reader_check_order(&r, NULL));
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);   /* the files' true range, once checked */
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    CHECK_EQ(2, r.thread_count);
    for (i = 0; i < r.thread_count; i++) {
        CHECK(r.threads[i].manifest_has_detail);
        CHECK(!r.threads[i].reader.has_detail);   /* no detail.atf: no detail */
        CHECK_EQ(s.t[i].tid, r.threads[i].os_thread_id);
        CHECK_EQ(0, r.threads[i].events_dropped);
        CHECK_EQ(0, r.threads[i].name[0]);
    }
    CHECK_EQ(1, r.threads[1].out_of_order);
    CHECK_EQ(3, r.symbol_count);
    CHECK(r.symbol_count == 3 && strcmp(atf_session_reader_symbol(&r, 3), "main") == 0);
    CHECK(r.symbol_count == 3 &&
          strcmp(atf_session_reader_symbol(&r, 0x1000000FFull), "-[NSObject init]") == 0);
    CHECK(r.symbol_count == 3 && strcmp(atf_session_reader_symbol(&r, 0x1000000FEull), "upper") == 0);
    CHECK(atf_session_reader_symbol(&r, 4) == NULL);
    CHECK(atf_session_reader_symbol(&r, 0x100000000ull) == NULL);
    session_merge_matches(&r, &s, NULL, "original tracer");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_manifest_incomplete(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    const char *empty_list = "{\"format_version\":2,\"threads\":[],\"time_start_ns\":0}";
    rng_seed(6);
    CHECK(fx_begin(&s));
    fx_standard(&s, 4, 120, 0);
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 2, &man); /* lists the first two of four */
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
    CHECK_EQ(4, r.thread_count);
    if (r.thread_count == 4) {
        CHECK(r.threads[0].in_manifest && r.threads[1].in_manifest);
        CHECK(!r.threads[2].in_manifest && !r.threads[3].in_manifest);
        CHECK_EQ(s.t[3].tid, r.threads[3].os_thread_id);
    }
    CHECK_EQ(3, r.symbol_count); /* what the manifest says is still used */
    session_merge_matches(&r, &s, NULL, "incomplete");
    atf_session_reader_close(&r);
    /* a manifest that lists no thread at all, with four on disk */
    fx_write_manifest_text(&s, empty_list, strlen(empty_list));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
    CHECK_EQ(4, r.thread_count);
    session_merge_matches(&r, &s, NULL, "empty thread list");
    atf_session_reader_close(&r);
    {   /* the time range: the manifest's when it lists everything, else the files' */
        const char *all = "{\"threads\":[{\"id\":0},{\"id\":1},{\"id\":2},{\"id\":4}],"
                          "\"time_start_ns\":5,\"time_end_ns\":6}";
        const char *some = "{\"threads\":[{\"id\":0},{\"id\":1}],\"time_start_ns\":5,"
                           "\"time_end_ns\":6}";
        fx_write_manifest_text(&s, all, strlen(all));
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
        CHECK_EQ(5, r.time_start_ns);
        CHECK_EQ(6, r.time_end_ns);
        atf_session_reader_close(&r);
        fx_write_manifest_text(&s, some, strlen(some));
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
        CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
        CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
        atf_session_reader_close(&r);
    }
    free(man.p);
    fx_end(&s);
}

static void test_manifest_unreadable(void) {
    static const char *bad[] = {
        "",
        "not json",
        "{\"threads\":[{\"id\":0},]}",           /* trailing comma */
        "{\"threads\":[],}",
        "{\"threads\":[{\"id\":01}]}",           /* leading zero */
        "{\"threads\":[{\"id\":1.}]}",
        "{\"threads\":[{\"id\":.5}]}",
        "{\"threads\":[{\"id\":-}]}",
        "{\"threads\":[{\"id\":1e}]}",
        "{\"threads\":[{\"id\":1e+}]}",
        "{\"threads\":[{\"id\":1-2}]}",
        "{\"threads\":[{\"id\":+1}]}",
        "{\"threads\":[{\"id\":0x10}]}",
        "{\"threads\":[]} x",
        "{\"threads\":[]}}",
        "{\"threads\":[{\"id\":0,\"name\":\"a\tb\"}]}", /* raw control character */
        "{\"threads\":[{\"id\":0,\"name\":\"\\x\"}]}",  /* bad escape */
        "{\"threads\":[{\"id\":0,\"name\":\"\\u12G4\"}]}",
        "{\"threads\":[{\"id\":0,\"name\":\"\\u12\"}]}",
        "{\"threads\":[{\"id\":0,\"name\":\"open}]}",
        "{\"threads\":[{\"id\":tru}]}",
        "{\"threads\":[{\"id\":nul}]}",
        "{\"threads\":[{\"id\":True}]}",
        "{'threads':[]}",
        "{\"threads\" [] }",
        "{\"threads\":[] \"x\":1}",
        "{threads:[]}",
        "{\"threads\":{}}",                      /* wrong shape */
        "{\"threads\":5}",
        "[{\"threads\":[]}]",
        "\"threads\"",
        ("{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"threads\":[]}"), /* too deep */
        "{\"threads\":[]}\x01",
    };
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(7);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 60, 0);
    fx_write_all(&s);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        atf_result rc;
        fx_write_manifest_text(&s, bad[i], strlen(bad[i]));
        rc = atf_session_reader_open(&r, s.dir, NULL);
        CHECK_RESULT(ATF_OK, rc);
        if (r.manifest != ATF_MANIFEST_UNREADABLE) printf("  accepted: %s\n", bad[i]);
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK_EQ(3, r.thread_count);
        if (rc == ATF_OK) session_merge_matches(&r, &s, NULL, bad[i]);
        atf_session_reader_close(&r);
    }
    {   /* a NUL byte inside the text */
        static const char nul[] = "{\"threads\":[{\"id\":0\0}]}";
        fx_write_manifest_text(&s, nul, sizeof nul - 1);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        atf_session_reader_close(&r);
    }
    {   /* a directory where manifest.json should be: there, but unreadable */
        char path[512];
        snprintf(path, sizeof path, "%s/manifest.json", s.dir);
        unlink(path);
        mkdir(path, 0755);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK_EQ(3, r.thread_count);
        atf_session_reader_close(&r);
        rmdir(path);
    }
    fx_end(&s);
}

/* An unreadable manifest says where reading stopped: the byte the JSON reader refused,
 * or the value that does not make a manifest. The error names manifest.json. */
static void test_manifest_error_offset(void) {
#define BAD(json, offset) { json, sizeof json - 1, offset }
    static const struct { const char *text; size_t len; uint64_t offset; } bad[] = {
        BAD("", 0),
        BAD("{\"threads\":[{\"id\":0},]}", 21),            /* the ']' after a comma */
        BAD("{\"threads\":[]} x", 15),                     /* text after the value */
        BAD("{\"threads\":[{\"id\":01}]}", 19),            /* the digit after a 0 */
        BAD("{\"threads\":[{\"id\":1.}]}", 20),            /* no digit after '.' */
        BAD("{\"threads\":[{\"id\":0,\"name\":\"a\tb\"}]}", 29), /* raw tab */
        BAD("{\"threads\":[{\"id\":0,\"name\":\"\\u12G4\"}]}", 32), /* 'G' */
        BAD("{\"threads\":[{\"id\":0,\"name\":\"open}]}", 35), /* unterminated */
        BAD("{\"threads\":[{\"id\":0\0}]}", 19),           /* a NUL byte */
        BAD("{\"threads\":{}}", 11),                       /* "threads" not an array */
        BAD("  {\"x\":1}", 2),                              /* no "threads": the object */
        BAD("[{\"threads\":[]}]", 0),                      /* not an object */
    };
#undef BAD
    char deep[200];
    fx_session s;
    atf_session_reader r;
    size_t i, k, n = 0;
    rng_seed(11);
    CHECK(fx_begin(&s));
    fx_standard(&s, 2, 20, 0);
    fx_write_all(&s);
    for (i = 0; i <= sizeof bad / sizeof bad[0]; i++) {
        const char *json = i < sizeof bad / sizeof bad[0] ? bad[i].text : deep;
        size_t len = i < sizeof bad / sizeof bad[0] ? bad[i].len : 0;
        uint64_t offset = i < sizeof bad / sizeof bad[0] ? bad[i].offset : 0;
        if (json == deep) { /* the container 33 deep: the root and 32 arrays above it */
            n = (size_t)snprintf(deep, sizeof deep, "{\"a\":");
            for (k = 0; k < 40; k++) deep[n++] = '[';
            len = n;
            offset = 5 + 31;
        }
        fx_write_manifest_text(&s, json, len);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK_RESULT(ATF_E_CORRUPT, r.manifest_error.code);
        CHECK_EQ(offset, r.manifest_error.offset);
        if (r.manifest_error.offset != offset) printf("  case %u\n", (unsigned)i);
        CHECK(strstr(r.manifest_error.path, "/manifest.json") != NULL);
        CHECK(r.manifest_error.what != NULL);
        CHECK_RESULT(ATF_OK, r.error.code); /* the session itself is fine */
        atf_session_reader_close(&r);
    }
    {   /* readable, missing, and a directory in its place */
        char path[512];
        fx_write_manifest_text(&s, "{\"threads\":[]}", 14);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_RESULT(ATF_OK, r.manifest_error.code);
        atf_session_reader_close(&r);
        snprintf(path, sizeof path, "%s/manifest.json", s.dir);
        unlink(path);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
        CHECK_RESULT(ATF_OK, r.manifest_error.code);
        atf_session_reader_close(&r);
        mkdir(path, 0755);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK(r.manifest_error.code != ATF_OK);
        CHECK(strstr(r.manifest_error.path, "/manifest.json") != NULL);
        atf_session_reader_close(&r);
        rmdir(path);
    }
    fx_end(&s);
}

static void test_manifest_valid_but_unusual(void) {
    static const char *good[] = {
        " \t\r\n{ \"threads\" : [ { \"id\" : 0 } , {\"id\":1},{\"id\":2} ] } \n",
        ("{\"x\":{\"y\":[1,-2.5e+10,0.0,-0,1E3,true,false,null,\"\\/\\b\\f\\r\\t\"]},"
         "\"threads\":[{\"id\":0},{\"id\":1},{\"id\":2}]}"),
        "{\"threads\":[{\"id\":0,\"extra\":{\"deep\":[[[[[[[[[[]]]]]]]]]]}},{\"id\":1},{\"id\":2}]}",
        "{\"threads\":[{\"id\":2},{\"id\":0},{\"id\":1},{\"id\":0}]}",  /* unsorted, repeated */
        "{\"threads\":[{\"id\":0},{\"id\":1},{\"id\":2},7,\"x\",[],{\"no_id\":1}]}",
    };
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(8);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 50, 10, 3, 0);
    fx_add(&s, 1, 2, 50, 10, 3, 0);
    fx_add(&s, 2, 1, 50, 10, 3, 0);
    fx_write_all(&s);
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        fx_write_manifest_text(&s, good[i], strlen(good[i]));
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        if (r.manifest != ATF_MANIFEST_OK) printf("  refused: %s\n", good[i]);
        CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
        CHECK_EQ(3, r.thread_count);
        session_merge_matches(&r, &s, NULL, good[i]);
        atf_session_reader_close(&r);
    }
    fx_end(&s);
}

static void test_manifest_escaped_names(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    char longname[3000];
    size_t i;
    const char *sym;
    rng_seed(9);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 10, 10, 3, 0);
    fx_add(&s, 1, 1, 10, 10, 3, 0);
    fx_write_all(&s);
    for (i = 0; i < 2500; i++) longname[i] = (char)('a' + i % 26);
    longname[2500] = '\0';
    text_str(&man, "{\"threads\":[{\"id\":0,\"name\":\"t\\\"q\\\\b\\nn\\u00e9\\ud83d\\ude00\"},"
                   "{\"id\":1,\"name\":\"lone \\ud800 high, lone \\udc00 low\"}],\"symbols\":["
                   "{\"function_id\":\"0x0000000000000001\",\"name\":\"a\\\"b\\\\c\\nd\\u00e9"
                   "\\uD83D\\uDE00\\u0041\\/\"},{\"function_id\":17,\"name\":\"");
    text_str(&man, longname);
    text_str(&man, "\"},{\"function_id\":\"0x0000000000000002\",\"name\":\"\\u20ac\\u0000cut\"}]}");
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(2, r.thread_count);
    if (r.thread_count == 2) {
        CHECK(strcmp(r.threads[0].name, "t\"q\\b\nn\xC3\xA9\xF0\x9F\x98\x80") == 0);
        /* unpaired surrogates are not valid UTF-8: each becomes U+FFFD */
        CHECK(strcmp(r.threads[1].name, "lone \xEF\xBF\xBD high, lone \xEF\xBF\xBD low") == 0);
    }
    sym = atf_session_reader_symbol(&r, 1);
    CHECK(sym && strcmp(sym, "a\"b\\c\nd\xC3\xA9\xF0\x9F\x98\x80" "A/") == 0);
    sym = atf_session_reader_symbol(&r, 17);
    CHECK(sym && strcmp(sym, longname) == 0); /* long C++ names are kept whole */
    sym = atf_session_reader_symbol(&r, 2);
    CHECK(sym && strcmp(sym, "\xE2\x82\xAC") == 0); /* \u0000 ends the C string */
    atf_session_reader_close(&r);
    free(man.p);
    /* a thread name longer than the field is cut on a UTF-8 character boundary */
    man.p = NULL;
    man.len = man.cap = 0;
    text_str(&man, "{\"threads\":[{\"id\":0,\"name\":\"");
    for (i = 0; i < 40; i++) text_str(&man, "\\u00e9");
    text_str(&man, "\"},{\"id\":1,\"name\":\"");
    for (i = 0; i < 40; i++) text_str(&man, "\xC3\xA9");
    text_str(&man, "\"}]}");
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    for (i = 0; i < r.thread_count; i++) {
        size_t len = strlen(r.threads[i].name), k;
        CHECK(len >= 60 && len < sizeof r.threads[i].name);
        CHECK_EQ(0, len % 2);
        for (k = 0; k + 1 < len; k += 2)
            CHECK((unsigned char)r.threads[i].name[k] == 0xC3 &&
                  (unsigned char)r.threads[i].name[k + 1] == 0xA9);
    }
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_manifest_odd_values(void) {
    /* ids that are not slot numbers are ignored (the directories are then found by the
     * scan); has_detail as a number; huge numbers do not wrap into small slots */
    const char *json =
        "{\"threads\":[{\"id\":0,\"has_detail\":1},{\"id\":4294967297},{\"id\":-1},"
        "{\"id\":1.5},{\"id\":18446744073709551617},{\"id\":1e0},{\"id\":\"0x0\"}],"
        "\"time_start_ns\":99999999999999999999999,\"clock_type\":\"boottime\"}";
    fx_session s;
    atf_session_reader r;
    rng_seed(10);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 20, 10, 3, 0);
    fx_add(&s, 1, 1, 20, 10, 3, 0);
    fx_write_all(&s);
    fx_write_manifest_text(&s, json, strlen(json));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(2, r.thread_count);
    if (r.thread_count == 2) {
        CHECK(r.threads[0].in_manifest);
        CHECK(r.threads[0].manifest_has_detail); /* the first listing of a slot wins */
        CHECK_EQ(1, r.threads[1].slot);
        CHECK(!r.threads[1].in_manifest); /* no id above named slot 1 */
    }
    CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
    CHECK_EQ(3, r.clock_type); /* not a number in the manifest: from the files */
    session_merge_matches(&r, &s, NULL, "odd values");
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* The keys of this writer and the older spellings: symbols by location only (offset as
 * "0x..." or a number), a symbol with neither name nor location skipped, build ids
 * validated and lowercased, the command line, and anchors exact when they can be. */
static void test_manifest_locations_and_anchors(void) {
    const char *json =
        "{\"threads\":[],\"cmdline\":\"a b\\tc\","
        "\"modules\":[{\"module_id\":0,\"path\":\"/x\",\"build_id\":\"ABCDEF01\"},"
        "{\"module_id\":1,\"build_id\":\"xyz\"},{\"module_id\":2,\"build_id\":7}],"
        "\"symbols\":[{\"function_id\":\"0x0000000100000002\",\"offset\":\"0x40\"},"
        "{\"function_id\":\"0x3\",\"module_id\":5,\"offset\":16},"
        "{\"function_id\":\"0x4\"},{\"function_id\":\"0x5\",\"name\":\"\"},"
        "{\"function_id\":\"0x6\",\"offset\":-1}],"
        "\"timing_anchors\":["
        "{\"name\":\"exact\",\"host_ns\":1,\"value\":-9223372036854775808,\"timescale\":48000,\"rate\":1},"
        "{\"name\":\"old int\",\"host_ns\":2,\"value\":1234,\"rate\":48000},"
        "{\"name\":\"old double\",\"host_ns\":3,\"value\":1.7954915830846867e+18,\"rate\":1e9},"
        "{\"name\":\"fraction\",\"host_ns\":4,\"value\":0.25,\"rate\":1000},"
        "{\"name\":\"fast\",\"host_ns\":5,\"value\":7,\"rate\":4294967296},"
        "{\"name\":\"huge\",\"host_ns\":6,\"value\":9223372036854775808,\"rate\":1},"
        "{\"name\":\"bad scale\",\"host_ns\":7,\"value\":3,\"timescale\":0,\"rate\":10}]}";
    fx_session s;
    atf_session_reader r;
    const atf_session_anchor *a;
    CHECK(fx_begin(&s));
    fx_write_manifest_text(&s, json, strlen(json));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK(r.cmdline && strcmp(r.cmdline, "a b\tc") == 0);
    CHECK_EQ(3, r.module_count);
    if (r.module_count == 3) {
        CHECK(strcmp(r.modules[0].build_id, "abcdef01") == 0);
        CHECK(strcmp(r.modules[1].build_id, "") == 0);
        CHECK(strcmp(r.modules[2].build_id, "") == 0);
    }
    CHECK_EQ(3, r.symbol_count); /* 0x4 has neither; 0x6's offset is no offset */
    if (r.symbol_count == 3) {
        CHECK(r.symbols[0].function_id == 3 && r.symbols[0].name == NULL && r.symbols[0].has_offset);
        CHECK_EQ(5, r.symbols[0].module_id);
        CHECK_EQ(16, r.symbols[0].offset);
        CHECK(r.symbols[1].function_id == 5 && r.symbols[1].name && !r.symbols[1].has_offset);
        CHECK(r.symbols[2].function_id == 0x100000002ull && r.symbols[2].name == NULL);
        CHECK_EQ(1, r.symbols[2].module_id); /* from the function id */
        CHECK_EQ(0x40, r.symbols[2].offset);
    }
    CHECK(atf_session_reader_symbol(&r, 3) == NULL); /* a location is no name */
    CHECK_EQ(7, r.anchor_count);
    a = atf_session_reader_anchor(&r, "exact");
    CHECK(a && a->timescale == 48000 && a->value == INT64_MIN && a->rate == 48000.0);
    a = atf_session_reader_anchor(&r, "old int");
    CHECK(a && a->timescale == 48000 && a->value == 1234);
    a = atf_session_reader_anchor(&r, "old double"); /* an integer double: exact */
    CHECK(a && a->timescale == 1000000000 && a->value == 1795491583084686592ll);
    a = atf_session_reader_anchor(&r, "fraction");
    CHECK(a && a->timescale == 0 && a->value_f == 0.25 && a->rate == 1000.0);
    a = atf_session_reader_anchor(&r, "fast"); /* rate beyond int32: not exact */
    CHECK(a && a->timescale == 0 && a->value_f == 7.0 && a->rate == 4294967296.0);
    a = atf_session_reader_anchor(&r, "huge"); /* beyond int64 */
    CHECK(a && a->timescale == 0 && a->value_f == 9223372036854775808.0);
    a = atf_session_reader_anchor(&r, "bad scale"); /* timescale 0: the rate decides */
    CHECK(a && a->timescale == 10 && a->value == 3);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_json_mutations_never_crash(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    char *buf;
    size_t i, counts[4] = {0, 0, 0, 0};
    rng_seed(11);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 30, 10, 3, 0);
    fx_add(&s, 1, 2, 30, 10, 3, 0);
    fx_add(&s, 2, 1, 30, 10, 3, 0);
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 0, &man);
    buf = (char *)malloc(man.len + 20000);
    for (i = 0; i < 2000; i++) {
        size_t len = man.len, k, pos = (size_t)rng_below(man.len);
        atf_result rc;
        memcpy(buf, man.p, man.len);
        switch (i % 8) {
        case 0: /* byte flips */
            for (k = 0; k <= rng_below(4); k++) buf[rng_below(len)] = (char)rng_below(256);
            break;
        case 1: /* bit flip */
            buf[pos] = (char)(buf[pos] ^ (1 << rng_below(8)));
            break;
        case 2: /* truncation */
            len = pos;
            break;
        case 3: /* a structural character replaced by another */
            buf[pos] = "{}[]\":,\\0-e."[rng_below(12)];
            break;
        case 4: /* deep nesting inserted */
            {
                size_t depth = i % 16 == 4 ? 10000 : (size_t)rng_below(80);
                char open = rng_below(2) ? '[' : '{';
                memmove(buf + pos + depth, buf + pos, len - pos);
                for (k = 0; k < depth; k++) buf[pos + k] = open;
                len += depth;
            }
            break;
        case 5: /* a range deleted */
            k = (size_t)rng_below(len - pos + 1);
            memmove(buf + pos, buf + pos + k, len - pos - k);
            len -= k;
            break;
        case 6: /* a range duplicated */
            k = (size_t)rng_below(len - pos + 1);
            if (k > 10000) k = 10000;
            memmove(buf + pos + k, buf + pos, len - pos);
            len += k;
            break;
        default: /* digits and quotes */
            for (k = 0; k <= rng_below(3); k++) buf[rng_below(len)] = "0123456789\"\\"[rng_below(12)];
            break;
        }
        if (i == 1999) { /* the extreme case, plain: 10000 '[' and nothing else */
            memset(buf, '[', 10000);
            len = 10000;
        }
        fx_write_manifest_text(&s, buf, len);
        rc = atf_session_reader_open(&r, s.dir, NULL);
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) break;
        /* INCOMPLETE too: a mutation can leave valid JSON with an id changed or dropped */
        CHECK(r.manifest == ATF_MANIFEST_OK || r.manifest == ATF_MANIFEST_UNREADABLE ||
              r.manifest == ATF_MANIFEST_INCOMPLETE);
        counts[r.manifest]++;
        {   /* every thread on disk is still found and merged */
            atf_merge m;
            atf_merge_item it;
            size_t n = 0;
            CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
            while (atf_merge_next(&m, &it) == ATF_OK) n++;
            CHECK_EQ(90, n);
            atf_merge_deinit(&m);
        }
        atf_session_reader_close(&r);
    }
    CHECK(counts[ATF_MANIFEST_OK] > 100);         /* the mutations were not all fatal */
    CHECK(counts[ATF_MANIFEST_UNREADABLE] > 1000);
    free(buf);
    free(man.p);
    fx_end(&s);
}

static void test_empty_threads(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    atf_merge m;
    atf_merge_item it;
    rng_seed(12);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 0, 10, 3, 0);                /* finalized, no events */
    fx_add(&s, 1, 2, 0, 10, 3, 0)->state = FX_HEADER_ONLY; /* placeholder header only */
    fx_add(&s, 2, 1, 40, 10, 3, 0);
    fx_add(&s, 3, 2, 0, 10, 3, 0)->state = FX_CRASHED;     /* header and a torn record */
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(4, r.thread_count);
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    session_merge_matches(&r, &s, NULL, "with empty threads");
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_OK, atf_merge_seek(&m, 0));
    CHECK_RESULT(ATF_OK, atf_merge_next(&m, &it));
    CHECK_EQ(2, it.slot);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    /* every thread empty: the session opens, the merge yields nothing */
    s.t[2].n = 0;
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 0, &man);
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    CHECK_RESULT(ATF_OK, atf_merge_seek(&m, 12345));
    CHECK_EQ(0, m.probes);
    it.thread = r.threads; /* stale from an earlier call: the end clears it */
    it.event.timestamp_ns = 7;
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    CHECK(it.thread == NULL);
    CHECK_EQ(0, it.event.timestamp_ns);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

/* Neither a manifest was read nor is there a thread_N directory: the open fails, saying
 * what it found. */
static void test_no_thread_at_all(void) {
    fx_session s;
    atf_session_reader r;
    const char *broken = "{\"threads\":[{\"id\":0}";
    CHECK(fx_begin(&s));
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_E_NOT_FOUND, r.error.code);
    CHECK_EQ(0, r.thread_count);
    CHECK(r.threads == NULL);
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    fx_write_manifest_text(&s, broken, strlen(broken)); /* a manifest that cannot be read */
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(0, r.thread_count);
    CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest); /* kept after the failure */
    CHECK_RESULT(ATF_E_CORRUPT, r.manifest_error.code);
    CHECK(strstr(r.manifest_error.path, "manifest.json") != NULL);
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, "/nonexistent/atf/pid_1", NULL));
    CHECK_RESULT(ATF_E_ARG, atf_session_reader_open(&r, NULL, NULL));
    fx_end(&s);
}

/* Without a readable manifest, thread_N directories alone open the session, none of them
 * opening: each is listed with why, the first error in r->error. A file named thread_N is
 * no thread directory. */
static void test_thread_dirs_without_manifest(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    char path[1200];
    const char *junk = "not an index file, not at all";
    const char *broken = "{\"threads\":[";
    CHECK(fx_begin(&s));
    snprintf(path, sizeof path, "%s/thread_9", s.dir);
    CHECK(write_file(path, junk, strlen(junk)) == 0); /* a file: no thread */
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(0, r.thread_count);
    snprintf(path, sizeof path, "%s/thread_2", s.dir);
    CHECK(mkdir(path, 0755) == 0); /* no index.atf */
    snprintf(path, sizeof path, "%s/thread_5", s.dir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/thread_5/index.atf", s.dir);
    CHECK(write_file(path, junk, strlen(junk)) == 0); /* not an index file */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(2, r.thread_count);
    CHECK(r.error.code != ATF_OK);
    CHECK(strstr(r.error.path, "thread_5") != NULL);
    if (r.thread_count == 2) {
        CHECK_EQ(2, r.threads[0].slot);
        CHECK_EQ(5, r.threads[1].slot);
        CHECK(r.threads[0].missing && !r.threads[1].missing);
        CHECK(!r.threads[0].in_manifest && !r.threads[1].in_manifest);
        CHECK_RESULT(ATF_E_NOT_FOUND, r.threads[0].open_result);
        CHECK_RESULT(r.error.code, r.threads[1].open_result);
    }
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);

    fx_write_manifest_text(&s, broken, strlen(broken)); /* unreadable: the scan still counts */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
    CHECK_EQ(2, r.thread_count);
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* The scan names each thread_N directory once, skipping files and names that are not a
 * slot (leading zero, too large, trailing text). */
static void scan_count(void *ctx, uint32_t slot) {
    uint64_t *sum = (uint64_t *)ctx;
    sum[0]++;
    sum[1] += slot;
}

static void test_scan_threads(void) {
    fx_session s;
    uint64_t sum[2] = {0, 0};
    const char *dirs[] = {"thread_0", "thread_7", "thread_4294967295", "thread_07",
                          "thread_4294967296", "thread_3x", "thread_", "pid_3"};
    char path[1200];
    size_t i;
    CHECK(fx_begin(&s));
    for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", s.dir, dirs[i]);
        CHECK(mkdir(path, 0755) == 0);
    }
    snprintf(path, sizeof path, "%s/thread_8", s.dir);
    CHECK(write_file(path, "x", 1) == 0);
    CHECK_EQ(0, atf_session_scan_threads(s.dir, scan_count, sum));
    CHECK_EQ(3, sum[0]);
    CHECK_EQ(7 + (uint64_t)UINT32_MAX, sum[1]);
    CHECK(atf_session_scan_threads("/nonexistent/atf/pid_1", scan_count, sum) != 0);
    CHECK_EQ(3, sum[0]);
    fx_end(&s);
}

/* A manifest that was read opens the session though no thread opens: a session stopped
 * before any thread attached lists none; listed threads that are not there are missing. */
static void test_manifest_without_an_opening_thread(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    const char *none = "{\"threads\":[],\"state\":\"recording\",\"timing_anchors\":"
                       "[{\"name\":\"wall_clock_ns\",\"host_ns\":5,\"value\":7}]}";
    const char *listed = "{\"threads\":[{\"id\":3},{\"id\":0}],\"state\":\"closed\"}";
    CHECK(fx_begin(&s));
    fx_write_manifest_text(&s, none, strlen(none));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(0, r.thread_count);
    CHECK_RESULT(ATF_OK, r.error.code);
    CHECK(strcmp(r.state, "recording") == 0);
    CHECK_EQ(1, r.anchor_count);
    if (r.anchor_count == 1) { /* an integer without a rate: exact, in ns */
        CHECK_EQ(7, r.anchors[0].value);
        CHECK_EQ(1000000000, r.anchors[0].timescale);
    }
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);

    fx_write_manifest_text(&s, listed, strlen(listed));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(2, r.thread_count);
    CHECK_RESULT(ATF_OK, r.error.code); /* missing is no error of the files */
    if (r.thread_count == 2) {
        CHECK_EQ(0, r.threads[0].slot);
        CHECK_EQ(3, r.threads[1].slot);
        CHECK(r.threads[0].missing && r.threads[1].missing);
        CHECK(r.threads[0].in_manifest && r.threads[1].in_manifest);
        CHECK_RESULT(ATF_E_NOT_FOUND, r.threads[1].open_result);
    }
    CHECK(strcmp(r.state, "closed") == 0);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* Every thread invalid: the session opens, with or without a manifest; each thread says
 * why, the first error is kept. */
static void test_manifest_with_only_invalid_threads(void) {
    fx_session s;
    atf_session_reader r;
    char path[512];
    const char *listed = "{\"threads\":[{\"id\":0}],\"state\":\"recording\"}";
    static const uint8_t garbage[10] = {'A', 'T', 'I', '2', 1, 1, 0, 0, 0, 0};
    CHECK(fx_begin(&s));
    snprintf(path, sizeof path, "%s/thread_0", s.dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/thread_0/index.atf", s.dir);
    write_file(path, garbage, sizeof garbage); /* torn inside the header */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_E_TRUNCATED, r.error.code);
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count == 1) {
        CHECK(!r.threads[0].in_manifest);
        CHECK_RESULT(ATF_E_TRUNCATED, r.threads[0].open_result);
    }
    atf_session_reader_close(&r);
    fx_write_manifest_text(&s, listed, strlen(listed));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(1, r.thread_count);
    CHECK_RESULT(ATF_E_TRUNCATED, r.error.code);
    CHECK(strstr(r.error.path, "thread_0/index.atf") != NULL);
    if (r.thread_count == 1) {
        CHECK(!r.threads[0].missing);
        CHECK_RESULT(ATF_E_TRUNCATED, r.threads[0].open_result);
    }
    CHECK(strcmp(r.state, "recording") == 0);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_invalid_thread_file_does_not_sink_the_session(void) {
    fx_session s;
    atf_session_reader r;
    atf_session_thread *t;
    char path[512];
    static const uint8_t garbage[10] = {'A', 'T', 'I', '2', 1, 1, 0, 0, 0, 0};
    rng_seed(13);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 80, 0);
    fx_write_all(&s);
    snprintf(path, sizeof path, "%s/thread_7", s.dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/thread_7/index.atf", s.dir);
    write_file(path, garbage, sizeof garbage); /* torn inside the header */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(4, r.thread_count);
    CHECK_RESULT(ATF_E_TRUNCATED, r.error.code); /* the first problem is kept */
    CHECK(strstr(r.error.path, "thread_7/index.atf") != NULL);
    t = atf_session_reader_thread(&r, 7);
    CHECK(t != NULL);
    if (t) {
        CHECK_RESULT(ATF_E_TRUNCATED, t->open_result);
        CHECK(!t->missing);
    }
    if (r.thread_count) {
        CHECK_RESULT(ATF_OK, r.threads[0].open_result);
        session_merge_matches(&r, &s, NULL, "bad thread skipped");
    }
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_filters(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    uint64_t lo, hi;
    size_t i;
    const uint32_t some[] = {4, 0, 2};
    const uint32_t unknown[] = {77};
    rng_seed(14);
    CHECK(fx_begin(&s));
    fx_standard(&s, 6, 300, 0);
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    lo = fx_min_ts(&s);
    hi = fx_max_ts(&s);
    memset(&f, 0, sizeof f);
    session_merge_matches(&r, &s, &f, "zero filter");
    f.slots = some;
    f.slot_count = 3;
    session_merge_matches(&r, &s, &f, "slots");
    f.slots = unknown;
    f.slot_count = 1;
    session_merge_matches(&r, &s, &f, "unknown slot");
    f.slot_count = 0;
    session_merge_matches(&r, &s, &f, "empty slot set");
    memset(&f, 0, sizeof f);
    f.kinds = 1u << ATF_EVENT_CALL;
    session_merge_matches(&r, &s, &f, "calls");
    f.kinds = (1u << ATF_EVENT_RETURN) | (1u << ATF_EVENT_EXCEPTION);
    session_merge_matches(&r, &s, &f, "returns and exceptions");
    f.kinds = 1u << 9;
    session_merge_matches(&r, &s, &f, "an unused kind");
    memset(&f, 0, sizeof f);
    f.from_ns = lo + (hi - lo) / 3;
    session_merge_matches(&r, &s, &f, "from");
    f.to_ns = lo + (hi - lo) / 2;
    session_merge_matches(&r, &s, &f, "from-to");
    f.from_ns = 0;
    session_merge_matches(&r, &s, &f, "to");
    f.from_ns = f.to_ns = s.t[3].ev[5].ts; /* one instant */
    session_merge_matches(&r, &s, &f, "one instant");
    f.from_ns = hi + 1;
    f.to_ns = 0;
    session_merge_matches(&r, &s, &f, "after the end");
    for (i = 0; i < 200; i++) { /* random combinations */
        uint32_t slots[6];
        size_t n = 0, k;
        memset(&f, 0, sizeof f);
        for (k = 0; k < 6; k++)
            if (rng_below(2)) slots[n++] = s.t[k].slot;
        if (rng_below(3)) {
            f.slots = slots;
            f.slot_count = n;
        }
        if (rng_below(2)) f.kinds = (uint32_t)rng_below(16);
        if (rng_below(2)) f.from_ns = lo + rng_below(hi - lo + 10) - 5;
        if (rng_below(2)) f.to_ns = lo + rng_below(hi - lo + 10);
        if (!session_merge_matches(&r, &s, &f, "random filter")) break;
    }
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_seek(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    ref_list ref;
    uint64_t lo, hi, bound = 0;
    size_t i, k;
    rng_seed(15);
    CHECK(fx_begin(&s));
    fx_standard(&s, 7, 700, 0);
    s.t[5].n = 0; /* an empty thread too */
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[2].out_of_order);
    ref = ref_build(&s, NULL);
    for (i = 0; i < s.count; i++) bound += ceil_log2_plus1(s.t[i].n);
    lo = fx_min_ts(&s);
    hi = fx_max_ts(&s);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_EQ(1, r.threads[2].out_of_order); /* checked by the merge */
    for (i = 0; i < 1000; i++) {
        uint64_t t = i == 0 ? 0 : i == 1 ? UINT64_MAX : i == 2 ? hi : i == 3 ? lo
                   : i % 4 == 0 ? ref.v[rng_below(ref.n)].ts /* an existing instant */
                   : lo - 10 + rng_below(hi - lo + 20);
        size_t first = 0;
        atf_merge_item it;
        atf_result rc;
        while (first < ref.n && ref.v[first].ts < t) first++;
        CHECK_RESULT(ATF_OK, atf_merge_seek(&m, t));
        if (m.probes > bound) {
            CHECK(m.probes <= bound);
            break;
        }
        for (k = 0; k < 5; k++) { /* the first events after the seek */
            rc = atf_merge_next(&m, &it);
            if (first + k >= ref.n) {
                CHECK_RESULT(ATF_E_RANGE, rc);
                break;
            }
            CHECK_RESULT(ATF_OK, rc);
            if (rc != ATF_OK || !item_is(&it, &ref.v[first + k])) {
                printf("  seek to %" PRIu64 ": event %zu after it differs\n", t, k);
                CHECK(0);
                i = 1000;
                break;
            }
        }
    }
    /* after a seek, the rest of the merge is the rest of the reference */
    CHECK_RESULT(ATF_OK, atf_merge_seek(&m, ref.v[ref.n / 2].ts));
    for (k = ref.n / 2; k > 0 && ref.v[k - 1].ts == ref.v[k].ts; k--) {}
    merge_matches(&m, &ref, k, "rest after seek");
    atf_merge_deinit(&m);
    {   /* seek with a filter: the first selected event with ts >= t */
        atf_merge_filter f;
        ref_list fr;
        memset(&f, 0, sizeof f);
        f.kinds = 1u << ATF_EVENT_RETURN;
        f.from_ns = lo + (hi - lo) / 4;
        f.to_ns = lo + (hi - lo) * 3 / 4;
        fr = ref_build(&s, &f);
        CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, &f));
        for (i = 0; i < 200; i++) { /* also before from_ns: the filter still holds */
            uint64_t t = lo + rng_below(hi - lo);
            size_t first = 0;
            atf_merge_item it;
            atf_result rc;
            while (first < fr.n && fr.v[first].ts < t) first++;
            atf_merge_seek(&m, t);
            rc = atf_merge_next(&m, &it);
            if (first == fr.n) {
                CHECK_RESULT(ATF_E_RANGE, rc);
            } else if (rc != ATF_OK || !item_is(&it, &fr.v[first])) {
                printf("  filtered seek to %" PRIu64 " differs\n", t);
                CHECK(0);
                break;
            }
        }
        atf_merge_deinit(&m);
        free(fr.v);
    }
    {   /* atf_index_reader_seek on one time-ordered file */
        const atf_index_reader *ix = &r.threads[0].reader.index;
        for (i = 0; i < 300; i++) {
            uint64_t t = lo + rng_below(hi - lo), probes = 0, p, want = 0;
            while (want < s.t[0].n && s.t[0].ev[want].ts < t) want++;
            p = atf_index_reader_seek(ix, t, &probes);
            CHECK_EQ(want, p);
            CHECK(probes <= ceil_log2_plus1(s.t[0].n));
        }
    }
    free(ref.v);
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* ---- the order of a file, checked lazily ------------------------------------------------ */
/* Hides disorder where the open does not look: the first and last events stay as they
 * were, event n/4 is stamped `late` and event 3n/4 `early`. A binary search over the file
 * misses both. */
static void fx_hide_disorder(fx_thread *t, uint64_t late, uint64_t early) {
    t->ev[t->n / 4].ts = late;
    t->ev[t->n * 3 / 4].ts = early;
}

static uint64_t fx_thread_min(const fx_thread *t) {
    uint64_t v = UINT64_MAX;
    size_t k;
    for (k = 0; k < t->n; k++) v = t->ev[k].ts < v ? t->ev[k].ts : v;
    return v;
}

static uint64_t fx_thread_max(const fx_thread *t) {
    uint64_t v = 0;
    size_t k;
    for (k = 0; k < t->n; k++) v = t->ev[k].ts > v ? t->ev[k].ts : v;
    return v;
}

/* Opens s with the open's own view checked: every thread unknown, its range the ends of
 * its file. */
static int open_unchecked(atf_session_reader *r, const fx_session *s, const atf_reader_options *o) {
    size_t i;
    atf_result rc = atf_session_reader_open(r, s->dir, o);
    CHECK_RESULT(ATF_OK, rc);
    if (rc != ATF_OK) return 0;
    CHECK_EQ(s->count, r->thread_count);
    for (i = 0; i < r->thread_count && i < s->count; i++) {
        const fx_thread *t = &s->t[i];
        CHECK_EQ(ATF_ORDER_UNKNOWN, r->threads[i].out_of_order);
        CHECK_EQ(t->ev[0].ts, r->threads[i].time_min_ns);
        CHECK_EQ(t->ev[t->n - 1].ts, r->threads[i].time_max_ns);
    }
    CHECK_EQ(fx_first_ts(s), r->time_start_ns); /* no manifest: the threads' range */
    CHECK_EQ(fx_last_ts(s), r->time_end_ns);
    return 1;
}

/* A file that looks ordered at both ends and is not, merged, filtered and sought into
 * first thing after the open (nothing checked its order before): the merge checks it, and
 * only the threads it selects. Slot 1 is large enough to be read through the file when
 * mapped; read into memory it is checked there. */
static void test_order_checked_when_merged(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    const uint32_t only1[] = {1}, only02[] = {0, 2};
    uint64_t hi;
    int mapped;
    rng_seed(31);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 3000, 1000, 3, 0);
    fx_add(&s, 1, 2, 20000, 1000, 3, 0);
    fx_add(&s, 2, 1, 3000, 1000, 3, 0);
    hi = fx_max_ts(&s);
    fx_hide_disorder(&s.t[1], hi - 5, 500);
    fx_write_all(&s);
    for (mapped = 0; mapped < 2; mapped++) {
        atf_reader_options o;
        memset(&o, 0, sizeof o);
        o.no_mmap = !mapped;
        /* a window at the end, slot 1 only: its event n/4 is in it */
        memset(&f, 0, sizeof f);
        f.slots = only1;
        f.slot_count = 1;
        f.from_ns = hi - 20;
        if (open_unchecked(&r, &s, &o)) {
            ref_list ref = ref_build(&s, &f);
            CHECK(ref.n > 0);
            free(ref.v);
            session_merge_matches(&r, &s, &f, "window of a file out of order");
            CHECK_EQ(1, r.threads[1].out_of_order);
            CHECK_EQ(500, r.threads[1].time_min_ns);
            CHECK_EQ(fx_thread_max(&s.t[1]), r.threads[1].time_max_ns);
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[0].out_of_order); /* not selected */
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[2].out_of_order);
            CHECK_EQ(500, r.time_start_ns); /* the session's range follows the check */
            CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
            atf_session_reader_close(&r);
        }
        /* an upper bound below every first event: the early event alone */
        memset(&f, 0, sizeof f);
        f.to_ns = 600;
        if (open_unchecked(&r, &s, &o)) {
            session_merge_matches(&r, &s, &f, "bound below the first events");
            atf_session_reader_close(&r);
        }
        /* both bounds, the other slots: they are checked and ordered */
        memset(&f, 0, sizeof f);
        f.slots = only02;
        f.slot_count = 2;
        f.from_ns = 1500;
        f.to_ns = 4000;
        if (open_unchecked(&r, &s, &o)) {
            session_merge_matches(&r, &s, &f, "ordered slots, both bounds");
            CHECK_EQ(0, r.threads[0].out_of_order);
            CHECK_EQ(0, r.threads[2].out_of_order);
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[1].out_of_order);
            atf_session_reader_close(&r);
        }
        /* seeks, unfiltered and filtered, first thing after the open */
        if (open_unchecked(&r, &s, &o)) {
            seeks_match(&r, &s, NULL, 300, "seeks into a file out of order");
            atf_session_reader_close(&r);
        }
        memset(&f, 0, sizeof f);
        f.from_ns = 800;
        f.to_ns = hi - 2;
        f.kinds = (1u << ATF_EVENT_CALL) | (1u << ATF_EVENT_EXCEPTION);
        if (open_unchecked(&r, &s, &o)) {
            seeks_match(&r, &s, &f, 300, "filtered seeks into a file out of order");
            atf_session_reader_close(&r);
        }
        /* on request: one thread, then all */
        if (open_unchecked(&r, &s, &o)) {
            CHECK_EQ(0, atf_session_reader_check_order(&r, &r.threads[2]));
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[1].out_of_order);
            CHECK_EQ(fx_first_ts(&s), r.time_start_ns);
            CHECK_EQ(1, atf_session_reader_check_order(&r, NULL));
            CHECK_EQ(0, r.threads[0].out_of_order);
            CHECK_EQ(1, r.threads[1].out_of_order);
            CHECK_EQ(fx_thread_min(&s.t[0]), r.threads[0].time_min_ns);
            CHECK_EQ(fx_thread_max(&s.t[0]), r.threads[0].time_max_ns);
            CHECK_EQ(500, r.threads[1].time_min_ns);
            CHECK_EQ(500, r.time_start_ns);
            CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
            session_merge_matches(&r, &s, NULL, "after the check");
            atf_session_reader_close(&r);
        }
    }
    fx_end(&s);
}

/* Threads with at most one event are ordered from the open; a thread whose files did not
 * open stays 0 and the check leaves it alone. */
static void test_order_of_tiny_and_missing_threads(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    const uint32_t extra[] = {9};
    rng_seed(32);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 0, 1000, 3, 0);
    fx_add(&s, 1, 2, 1, 1000, 3, 0);
    fx_add(&s, 2, 1, 2, 1000, 3, 0);
    s.t[2].ev[1].ts = s.t[2].ev[0].ts - 1;
    fx_write_all(&s);
    fx_manifest_modern(&s, extra, 1, 0, &man); /* slot 9 listed, never written */
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(4, r.thread_count);
    if (r.thread_count == 4) {
        CHECK_EQ(0, r.threads[0].out_of_order);
        CHECK_EQ(0, r.threads[0].time_min_ns);
        CHECK_EQ(0, r.threads[0].time_max_ns);
        CHECK_EQ(0, r.threads[1].out_of_order);
        CHECK_EQ(s.t[1].ev[0].ts, r.threads[1].time_min_ns);
        CHECK_EQ(s.t[1].ev[0].ts, r.threads[1].time_max_ns);
        CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[2].out_of_order);
        CHECK(r.threads[3].missing);
        CHECK_EQ(0, r.threads[3].out_of_order);
        CHECK_EQ(0, atf_session_reader_check_order(&r, &r.threads[3]));
        CHECK_EQ(1, atf_session_reader_check_order(&r, NULL));
        CHECK_EQ(s.t[2].ev[1].ts, r.threads[2].time_min_ns);
        CHECK_EQ(s.t[2].ev[0].ts, r.threads[2].time_max_ns);
        CHECK_EQ(0, r.threads[3].out_of_order);
        session_merge_matches(&r, &s, NULL, "tiny threads");
    }
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

#if !defined(_WIN32) /* a mapped file cannot be renamed over there */
/* The check reads a mapped file through a descriptor of its own: when the file at the
 * path is no longer the one mapped (replaced by a rename after the open), the check sees
 * other ends and reads the mapping instead. */
static void test_order_check_reads_the_open_file(void) {
    fx_session s;
    atf_session_reader r;
    char path[400], tmp[420];
    int variant;
    for (variant = 0; variant < 2; variant++) {
        fx_thread other;
        size_t k;
        rng_seed(33);
        CHECK(fx_begin(&s));
        fx_add(&s, 0, 1, 20000, 1000, 3, 0);
        fx_hide_disorder(&s.t[0], fx_max_ts(&s) - 5, 500);
        fx_write_all(&s);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        /* the same events in order, one end moved: variant 0 the first, 1 the last */
        other = s.t[0];
        other.ev = (fx_ev *)malloc(other.n * sizeof *other.ev);
        memcpy(other.ev, s.t[0].ev, other.n * sizeof *other.ev);
        for (k = 0; k < other.n; k++) other.ev[k].ts = 1000 + k;
        if (variant == 0) other.ev[0].ts = 999;
        else other.ev[other.n - 1].ts += 7;
        snprintf(path, sizeof path, "%s/thread_0/index.atf", s.dir);
        snprintf(tmp, sizeof tmp, "%s.new", path);
        fx_write_index(tmp, &other);
        CHECK_EQ(0, rename(tmp, path));
        CHECK_EQ(1, atf_session_reader_check_order(&r, NULL)); /* the mapped file's answer */
        CHECK_EQ(500, r.threads[0].time_min_ns);
        session_merge_matches(&r, &s, NULL, "merge of the mapped file");
        atf_session_reader_close(&r);
        free(other.ev);
        fx_end(&s);
    }
}
#endif

#if defined(__linux__)
#include <fcntl.h>

/* Drops the pages of thread k's index.atf from the page cache (those not mapped), so
 * that a fault maps what the kernel reads around it, not a large cached folio. */
static void fx_evict_index(const fx_session *s, size_t k) {
    char path[400];
    int fd;
    snprintf(path, sizeof path, "%s/thread_%u/index.atf", s->dir, s->t[k].slot);
    fd = open(path, O_RDONLY);
    if (fd < 0) return;
    if (fdatasync(fd) == 0) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

/* Resident pages of mapped files in this process (RssFile + RssShmem, /proc/self/statm's
 * third field); 0 when it cannot be read. */
static uint64_t resident_file_pages(void) {
    unsigned long size = 0, resident = 0, shared = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu %lu %lu", &size, &resident, &shared) != 3) shared = 0;
    fclose(f);
    return shared;
}
#endif

/* Opening maps in O(1) pages of each file however large it is (the header and both ends),
 * the order check none (it reads through a descriptor), and a merge that seeks into a
 * narrow window near the end O(log n) pages per file; a full merge maps them all, which
 * shows that the count sees the pages the reader touches. Linux only: it counts resident
 * pages of mapped files. */
static void test_open_maps_only_the_ends(void) {
#if defined(__linux__)
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    uint64_t before, opened, all_pages, n = 300000;
    rng_seed(34);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, (size_t)n, 1000, 3, 0);
    fx_add(&s, 1, 2, (size_t)n, 1000, 3, 0);
    fx_write_all(&s);
    fx_evict_index(&s, 0);
    fx_evict_index(&s, 1);
    all_pages = 2 * n * 32 / 4096; /* 4687 */
    before = resident_file_pages();
    CHECK(before > 0);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    opened = resident_file_pages() - before;
    CHECK(opened < all_pages / 16);
    CHECK_EQ(0, atf_session_reader_check_order(&r, NULL));
    CHECK(resident_file_pages() - before < opened + 8);
    fx_evict_index(&s, 0);
    fx_evict_index(&s, 1);
    memset(&f, 0, sizeof f);
    f.from_ns = fx_max_ts(&s) - 30;
    session_merge_matches(&r, &s, &f, "window at the end");
    CHECK(resident_file_pages() - before < all_pages / 2);
    session_merge_matches(&r, &s, NULL, "everything");
    CHECK(resident_file_pages() - before >= all_pages - 64);
    atf_session_reader_close(&r);
    fx_end(&s);
#else
    printf("  open_maps_only_the_ends: skipped (counts pages through /proc/self/statm)\n");
#endif
}

static void test_detail_links_from_merge(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    size_t with = 0, without = 0;
    rng_seed(16);
    CHECK(fx_begin(&s));
    fx_standard(&s, 4, 300, 1); /* details on slots 0, 2 (unsorted), 4 */
    s.t[3].layout = 2;
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        atf_detail_event d;
        atf_detail_payload p;
        atf_result rc = atf_thread_reader_detail_of(&it.thread->reader, it.seq, &d);
        if (it.event.detail_seq == ATF_NO_DETAIL) {
            CHECK_RESULT(ATF_E_NO_DETAIL, rc);
            without++;
            continue;
        }
        with++;
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) break;
        CHECK_EQ(it.seq, d.header.index_seq);
        CHECK_EQ(it.event.timestamp_ns, d.header.timestamp_ns);
        CHECK_RESULT(ATF_OK, atf_detail_payload_decode(d.payload, d.payload_len, &p));
        CHECK_EQ(it.event.function_id, p.function_id);
        CHECK_EQ(it.seq, p.x[0]);
        CHECK_EQ(it.seq % 33, p.stack_size);
        {   /* and back */
            atf_index_event back;
            CHECK_RESULT(ATF_OK, atf_thread_reader_index_of(&it.thread->reader, it.event.detail_seq,
                                                            &back));
            CHECK_EQ(it.event.timestamp_ns, back.timestamp_ns);
        }
    }
    CHECK(with > 100);
    CHECK(without > 100);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_crc_verified_through_session(void) {
    fx_session s;
    atf_session_reader r;
    atf_reader_options opt;
    size_t i;
    rng_seed(17);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 100, 1);
    for (i = 0; i < s.count; i++) s.t[i].crc = 1;
    fx_write_all(&s);
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    opt.no_mmap = 1;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, &opt));
    for (i = 0; i < r.thread_count; i++) CHECK_EQ(ATF_CRC_OK, r.threads[i].reader.index.crc_state);
    session_merge_matches(&r, &s, NULL, "read, not mapped");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_many_threads_random_interleaving(void) {
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(18);
    CHECK(fx_begin(&s));
    for (i = 0; i < 70; i++) {
        fx_thread *t = fx_add(&s, (uint32_t)(69 - i) * 3, (int)(1 + i % 2), (size_t)rng_below(200),
                              rng_below(500), rng_below(2) ? 1 : 40, 0);
        if (i % 9 == 0) fx_shuffle(t);
    }
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(70, r.thread_count);
    for (i = 1; i < r.thread_count; i++) CHECK(r.threads[i - 1].slot < r.threads[i].slot);
    session_merge_matches(&r, &s, NULL, "70 threads");
    seeks_match(&r, &s, NULL, 300, "70 threads");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_extreme_timestamps(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    size_t i;
    rng_seed(19);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 6, 0, 0, 0);
    fx_add(&s, 1, 2, 6, 0, 0, 0);
    fx_add(&s, 2, 1, 6, 0, 0, 0);
    for (i = 0; i < 6; i++) {
        s.t[0].ev[i].ts = i < 3 ? 0 : UINT64_MAX;
        s.t[1].ev[i].ts = i < 2 ? 0 : UINT64_MAX;
        s.t[2].ev[i].ts = UINT64_MAX - 1 + (i > 3);
    }
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    session_merge_matches(&r, &s, NULL, "0 and UINT64_MAX");
    seeks_match(&r, &s, NULL, 50, "0 and UINT64_MAX");
    memset(&f, 0, sizeof f);
    f.from_ns = UINT64_MAX;
    session_merge_matches(&r, &s, &f, "from UINT64_MAX");
    f.from_ns = 1;
    f.to_ns = UINT64_MAX - 1;
    session_merge_matches(&r, &s, &f, "inside");
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* A time span too wide for the merge's 64-bit keys (a corrupt timestamp, say): the merge
 * picks threads by a linear scan instead, with the same results. */
static void test_merge_wide_time_span(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    size_t i;
    rng_seed(20);
    CHECK(fx_begin(&s));
    for (i = 0; i < 12; i++) {
        fx_thread *t = fx_add(&s, (uint32_t)i, (int)(1 + i % 2), 150 + i * 5, 100 + i, 2, 0);
        if (i == 4) fx_shuffle(t);
    }
    s.t[3].ev[s.t[3].n - 1].ts = UINT64_MAX - 3;
    s.t[7].ev[s.t[7].n - 1].ts = UINT64_MAX - 3; /* a tie up there too */
    s.t[9].ev[0].ts = 0;
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    session_merge_matches(&r, &s, NULL, "wide span");
    {
        atf_merge m;
        CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
        CHECK(m.linear); /* the path this test is about */
        atf_merge_deinit(&m);
    }
    seeks_match(&r, &s, NULL, 300, "wide span");
    for (i = 0; i < 60; i++) {
        uint32_t slots[12];
        size_t n = 0, k;
        memset(&f, 0, sizeof f);
        for (k = 0; k < 12; k++)
            if (rng_below(2)) slots[n++] = (uint32_t)k;
        if (rng_below(2)) {
            f.slots = slots;
            f.slot_count = n;
        }
        if (rng_below(2)) f.kinds = (uint32_t)rng_below(16);
        if (rng_below(2)) f.from_ns = 100 + rng_below(400);
        if (rng_below(2)) f.to_ns = 300 + rng_below(400);
        if (!session_merge_matches(&r, &s, &f, "wide span, filtered")) break;
    }
    atf_session_reader_close(&r);
    fx_end(&s);
    {   /* ties between the runner-up candidates: slot 0 and slot 2 both at 10, slot 1
         * leading at 3 must stop before its own 10 */
        static const uint64_t t0[] = {10, 10}, t1[] = {3, 10, 10, 11}, t2[] = {10, UINT64_MAX};
        const uint64_t *ts[3] = {t0, t1, t2};
        const size_t n[3] = {2, 4, 2};
        CHECK(fx_begin(&s));
        for (i = 0; i < 3; i++) {
            fx_thread *t = fx_add(&s, (uint32_t)i, 1, n[i], 0, 0, 0);
            size_t k;
            for (k = 0; k < n[i]; k++) t->ev[k].ts = ts[i][k];
        }
        fx_write_all(&s);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        session_merge_matches(&r, &s, NULL, "runner-up ties");
        seeks_match(&r, &s, NULL, 40, "runner-up ties");
        atf_session_reader_close(&r);
        fx_end(&s);
    }
}

static const test_case tests[] = {
    {"crc_helper_known_answer", test_crc_helper_known_answer},
    {"merge_interleaved_ties_and_layouts", test_merge_interleaved_ties_and_layouts},
    {"merge_out_of_order_thread", test_merge_out_of_order_thread},
    {"session_without_manifest", test_session_without_manifest},
    {"manifest_lists_missing_thread", test_manifest_lists_missing_thread},
    {"original_tracer_manifest", test_original_tracer_manifest},
    {"manifest_incomplete", test_manifest_incomplete},
    {"manifest_unreadable", test_manifest_unreadable},
    {"manifest_error_offset", test_manifest_error_offset},
    {"manifest_valid_but_unusual", test_manifest_valid_but_unusual},
    {"manifest_escaped_names", test_manifest_escaped_names},
    {"manifest_odd_values", test_manifest_odd_values},
    {"manifest_locations_and_anchors", test_manifest_locations_and_anchors},
    {"json_mutations_never_crash", test_json_mutations_never_crash},
    {"empty_threads", test_empty_threads},
    {"no_thread_at_all", test_no_thread_at_all},
    {"thread_dirs_without_manifest", test_thread_dirs_without_manifest},
    {"scan_threads", test_scan_threads},
    {"manifest_without_an_opening_thread", test_manifest_without_an_opening_thread},
    {"manifest_with_only_invalid_threads", test_manifest_with_only_invalid_threads},
    {"invalid_thread_file_does_not_sink_the_session", test_invalid_thread_file_does_not_sink_the_session},
    {"filters", test_filters},
    {"seek", test_seek},
    {"order_checked_when_merged", test_order_checked_when_merged},
    {"order_of_tiny_and_missing_threads", test_order_of_tiny_and_missing_threads},
#if !defined(_WIN32)
    {"order_check_reads_the_open_file", test_order_check_reads_the_open_file},
#endif
    {"open_maps_only_the_ends", test_open_maps_only_the_ends},
    {"detail_links_from_merge", test_detail_links_from_merge},
    {"crc_verified_through_session", test_crc_verified_through_session},
    {"many_threads_random_interleaving", test_many_threads_random_interleaving},
    {"extreme_timestamps", test_extreme_timestamps},
    {"merge_wide_time_span", test_merge_wide_time_span},
};

HARNESS_MAIN("merge", tests)
