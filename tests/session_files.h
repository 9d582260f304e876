/* session_files.h - pid_* session directories written byte by byte for the harnesses of
 * the session reader (test_manifest.c: the open, manifests and thread directories;
 * test_merge.c: the k-way merge): index and detail files of chosen layouts, states
 * (finalized, crashed with a torn tail, a footer found at the end, a header alone),
 * events, detail records and CRCs; manifests as the session writer shapes them; and the
 * reference a merge must equal, every event of the files sorted by (timestamp, slot,
 * seq). Every byte is placed here (own little-endian helpers; the CRC32-C of fixtures.h),
 * never through the library's encoders or writer. Every helper is static; a harness uses
 * some of them. Include after atf.h and harness.h. */
#ifndef ATF_TESTS_SESSION_FILES_H
#define ATF_TESTS_SESSION_FILES_H

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fixtures.h"
#include "posix_compat.h"
#include "scratch_dir.h"

/* ---- little-endian bytes and CRC32-C, written here, not taken from atf.h --------------- */
FX_FN void put16(uint8_t *p, uint64_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
FX_FN void put32(uint8_t *p, uint64_t v) {
    put16(p, v);
    put16(p + 2, v >> 16);
}
FX_FN void put64(uint8_t *p, uint64_t v) {
    put32(p, v);
    put32(p + 4, v >> 32);
}


/* A growing text, for manifests. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

FX_FN void text_add(text *t, const char *s, size_t n) {
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

FX_FN void text_str(text *t, const char *s) { text_add(t, s, strlen(s)); }

FX_FN void text_u64(text *t, uint64_t v) {
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

FX_FN int fx_begin(fx_session *s) {
    memset(s, 0, sizeof *s);
    if (scratch_dir_make(s->root, sizeof s->root, "session") != 0) return 0;
    snprintf(s->dir, sizeof s->dir, "%s/pid_4242", s->root);
    return mkdir(s->dir, 0755) == 0;
}

FX_FN void fx_end(fx_session *s) {
    size_t i;
    for (i = 0; i < s->count; i++) free(s->t[i].ev);
    remove_tree(s->root);
    memset(s, 0, sizeof *s);
}

/* Adds a thread with n events whose timestamps start near `start` and advance by 0..step
 * (so equal timestamps occur inside a thread and across threads). Every third event or so
 * gets a detail record when `detail` is set. */
FX_FN fx_thread *fx_add(fx_session *s, uint32_t slot, int layout, size_t n, uint64_t start,
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
FX_FN void fx_shuffle(fx_thread *t) {
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

FX_FN void fx_write_index(const char *path, const fx_thread *t) {
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

FX_FN void fx_write_detail(const char *path, const fx_thread *t) {
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

FX_FN void fx_write_thread(const fx_session *s, const fx_thread *t) {
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

FX_FN void fx_write_all(const fx_session *s) {
    size_t i;
    for (i = 0; i < s->count; i++) fx_write_thread(s, &s->t[i]);
}

FX_FN void fx_write_manifest_text(const fx_session *s, const char *json, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/manifest.json", s->dir);
    unlink(path); /* a fresh file: truncating one in place can make the file system flush */
    write_file(path, json, len);
}

FX_FN uint64_t fx_min_ts(const fx_session *s) {
    uint64_t v = UINT64_MAX;
    size_t i, k;
    for (i = 0; i < s->count; i++)
        for (k = 0; k < s->t[i].n; k++)
            if (s->t[i].ev[k].ts < v) v = s->t[i].ev[k].ts;
    return v;
}

/* The smallest first timestamp and the largest last one of the threads' files: the
 * session's range as the open sees it, before any thread's order is checked. */
FX_FN uint64_t fx_first_ts(const fx_session *s) {
    uint64_t v = UINT64_MAX;
    size_t i;
    for (i = 0; i < s->count; i++)
        if (s->t[i].n && s->t[i].ev[0].ts < v) v = s->t[i].ev[0].ts;
    return v;
}

FX_FN uint64_t fx_last_ts(const fx_session *s) {
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < s->count; i++)
        if (s->t[i].n && s->t[i].ev[s->t[i].n - 1].ts > v) v = s->t[i].ev[s->t[i].n - 1].ts;
    return v;
}

FX_FN uint64_t fx_max_ts(const fx_session *s) {
    uint64_t v = 0;
    size_t i, k;
    for (i = 0; i < s->count; i++)
        for (k = 0; k < s->t[i].n; k++)
            if (s->t[i].ev[k].ts > v) v = s->t[i].ev[k].ts;
    return v;
}

/* A manifest as atf.h's session writer shapes it: every thread of the session (plus the
 * slots in `extra`, which have no directory), symbols with escaped names. */
FX_FN void fx_manifest_modern(const fx_session *s, const uint32_t *extra, size_t extra_n,
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

FX_FN int ref_cmp(const void *a, const void *b) {
    const ref_item *x = (const ref_item *)a, *y = (const ref_item *)b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

FX_FN int ref_wants(const atf_merge_filter *f, uint32_t slot, const fx_ev *e) {
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

FX_FN ref_list ref_build(const fx_session *s, const atf_merge_filter *f) {
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
FX_FN int item_is(const atf_merge_item *it, const ref_item *x) {
    uint64_t detail = x->ev->detail_seq;
    return it->slot == x->slot && it->seq == x->seq && it->thread && it->thread->slot == x->slot &&
           it->event.timestamp_ns == x->ts && it->event.function_id == x->ev->fid &&
           it->event.kind == x->ev->kind && it->event.detail_seq == detail &&
           it->event.call_depth == (x->layout == 1 ? x->ev->depth : 0) &&
           it->event.thread_id == (x->layout == 1 ? x->tid : 0);
}

/* Runs the merge to its end and compares it with ref[from..]; reports the first
 * difference only. Returns 1 when equal. */
FX_FN int merge_matches(atf_merge *m, const ref_list *ref, size_t from, const char *what) {
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

FX_FN int session_merge_matches(atf_session_reader *r, const fx_session *s,
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

/* A session of `k` threads with mixed layouts and ties, one of them not time-ordered. */
FX_FN void fx_standard(fx_session *s, size_t k, size_t per_thread, int with_detail) {
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

#endif /* ATF_TESTS_SESSION_FILES_H */
