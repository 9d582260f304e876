/* test_session.c - the session writer end to end: many threads recording through the drain
 * thread or manual pumping, both layouts, every file verified (CRC32-C, finalized) and read
 * back identical to what each thread produced minus exactly the events it was told were
 * dropped (drop counts checked against manifest.json); detail ALWAYS and WINDOWED with known
 * triggers and exact links both ways; manifest JSON escaping; thread exit releasing a slot;
 * shared-memory style rings attached in process; configuration and error paths. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#include <pthread.h>
#include <sched.h>
#if defined(_WIN32) /* 64-byte aligned ring memory from the C runtime's aligned heap */
#  define posix_memalign(p, align, size) ((*(p) = _aligned_malloc((size), (align))) ? 0 : 12)
#  define ring_mem_free(p) _aligned_free(p)
#else
#  define ring_mem_free(p) free(p)
#endif

#ifdef REC_SANITIZED
#  define BIG_THREADS 8
#  define BIG_EVENTS 100000u
#else
#  define BIG_THREADS 16
#  define BIG_EVENTS 1000000u
#endif

static char test_root[256];

static const char *root_dir(void) {
    if (!test_root[0]) scratch_root(test_root, sizeof test_root, "session");
    return test_root;
}

/* ---- many threads ------------------------------------------------------------------- */

typedef struct producer {
    atf_session *s;
    uint32_t k;                 /* generator thread number */
    uint64_t n;                 /* events to produce */
    uint8_t *dropped;           /* bit i: event i was refused with ATF_E_FULL */
    uint64_t dropped_count;
    uint32_t slot;
    int with_detail;            /* push every third event with a payload */
    uint8_t *has_detail;        /* bit i: event i went in with its detail */
    atf_result attach_rc;
    volatile int *done_flag;
} producer;

static void *producer_main(void *arg) {
    producer *p = (producer *)arg;
    atf_producer *w = NULL;
    gen_state g = {0};
    uint64_t i, full_run = 0;
    char name[32];
    snprintf(name, sizeof name, "worker-%02u", p->k);
    p->attach_rc = atf_session_attach(p->s, name, &w);
    if (p->attach_rc != ATF_OK) return NULL;
    p->slot = w->slot;
    for (i = 0; i < p->n; i++) {
        atf_result rc;
        if (p->with_detail && i % 3 == 0) {
            uint64_t before = w->detail_dropped;
            rc = gen_push_detail(w, p->k, i, &g);
            if (rc == ATF_OK && w->detail_dropped == before) bits_set(p->has_detail, i);
        } else {
            rc = gen_push(w, p->k, i, &g);
        }
        if (rc == ATF_E_FULL) {
            bits_set(p->dropped, i);
            p->dropped_count++;
            /* let the drain run when the ring keeps refusing (the event stays dropped) */
            if (++full_run % 16 == 0) {
                struct timespec pause = {0, 200000};
                nanosleep(&pause, NULL);
            }
        } else {
            full_run = 0;
        }
    }
    atf_session_detach(p->s);
    if (p->done_flag) __atomic_store_n(p->done_flag, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Verifies thread_<slot> of session directory `dir` against producer p. */
static void verify_producer(const char *dir, const char *manifest, const producer *p, int layout) {
    char path[1200];
    atf_thread_reader tr;
    atf_reader_options opt;
    const char *obj = manifest ? manifest_thread(manifest, p->slot) : NULL;
    uint64_t v = 0;
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(path, sizeof path, "%s/thread_%u", dir, p->slot);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, path, &opt));
    if (tr.index.event_count == 0 && p->n) {
        printf("  cannot read %s\n", path);
        return;
    }
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(ATF_CRC_OK, tr.index.crc_state);
    CHECK_EQ(layout, tr.index.layout);
    CHECK_EQ(p->n - p->dropped_count, tr.index.event_count);
    CHECK_EQ(tr.index.event_count, check_index_against(&tr, p->k, p->n, p->dropped, layout));
    CHECK(obj != NULL);
    CHECK(manifest_u64(obj, "events_dropped", &v));
    CHECK_EQ(p->dropped_count, v);
    CHECK(manifest_u64(obj, "events_written", &v));
    CHECK_EQ(tr.index.event_count, v);
    CHECK(manifest_u64(obj, "os_thread_id", &v));
    CHECK_EQ(tr.index.header.thread_id, v);
    if (obj) {
        char name[48];
        snprintf(name, sizeof name, "\"name\":\"worker-%02u\"", p->k);
        CHECK(strstr(obj, name) != NULL && strstr(obj, name) < strchr(obj, '}'));
    }
    if (tr.index.event_count) {
        CHECK_EQ(gen_ts(p->k, 0) <= tr.index.header.time_start_ns, 1);
        CHECK(tr.index.header.time_end_ns >= tr.index.header.time_start_ns);
    }
    atf_thread_reader_close(&tr);
}

/* n_threads producers, n events each, through a session with `cfg`; in manual mode the
 * calling thread pumps until they are done. Checks everything against the generator. */
static void run_many(const atf_session_config *cfg, uint32_t n_threads, uint64_t n, const char *name) {
    atf_session *s = NULL;
    atf_session_config c = *cfg;
    producer p[BIG_THREADS];
    pthread_t t[BIG_THREADS];
    volatile int done[BIG_THREADS];
    char dir[1100], mpath[1200];
    char *manifest;
    atf_error err;
    uint64_t total_dropped = 0, v = 0;
    uint32_t i;
    c.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    for (i = 0; i < n_threads; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].s = s;
        p[i].k = i;
        p[i].n = n;
        p[i].dropped = bits_new(n);
        done[i] = 0;
        p[i].done_flag = &done[i];
        CHECK_EQ(0, pthread_create(&t[i], NULL, producer_main, &p[i]));
    }
    if (c.drain_mode == ATF_DRAIN_MANUAL) {
        for (;;) {
            uint32_t finished = 0;
            CHECK_RESULT(ATF_OK, atf_session_pump(s));
            for (i = 0; i < n_threads; i++) finished += (uint32_t)__atomic_load_n(&done[i], __ATOMIC_ACQUIRE);
            if (finished == n_threads) break;
            sched_yield();
        }
    }
    for (i = 0; i < n_threads; i++) {
        pthread_join(t[i], NULL);
        CHECK_RESULT(ATF_OK, p[i].attach_rc);
        total_dropped += p[i].dropped_count;
    }
    CHECK_EQ(n_threads, atf_session_thread_count(s));
    CHECK_RESULT(ATF_OK, atf_session_close_ex(s, &err));
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    manifest = read_text(mpath);
    CHECK(manifest != NULL);
    if (manifest) {
        CHECK(json_valid(manifest));
        CHECK(strstr(manifest, "\"state\":\"closed\"") != NULL);
    }
    for (i = 0; i < n_threads; i++) verify_producer(dir, manifest, &p[i], c.layout ? (int)c.layout : 1);
    if (manifest) {
        const char *tail = strstr(manifest, "],\"time_start_ns\":");
        CHECK(tail != NULL);
        if (tail && manifest_u64(tail, "events_dropped", &v)) CHECK_EQ(total_dropped, v);
    }
    printf("  %s: %u threads x %llu events, %llu dropped\n", name, n_threads, (unsigned long long)n,
           (unsigned long long)total_dropped);
    free(manifest);
    for (i = 0; i < n_threads; i++) free(p[i].dropped);
    rm_rf(dir);
}

static void test_many_threads_layout1(void) {
    atf_session_config c;
    memset(&c, 0, sizeof c);
    run_many(&c, BIG_THREADS, BIG_EVENTS, "many_l1");
}

static void test_many_threads_layout2(void) {
    atf_session_config c;
    memset(&c, 0, sizeof c);
    c.layout = ATF_LAYOUT_2;
    c.index_ring_events = 1u << 18;
    run_many(&c, BIG_THREADS, BIG_EVENTS, "many_l2");
}

static void test_manual_drain(void) {
    atf_session_config c;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.index_ring_events = 4096; /* small: pumping has to keep up, drops are counted */
    run_many(&c, 4, BIG_EVENTS / 4, "manual");
}

/* ---- detail ------------------------------------------------------------------------- */

/* Checks links both ways against the expectation: index event seq (generated event i) has
 * detail iff expect(i); detail records are numbered densely in index order. */
typedef int (*expect_fn)(const void *ctx, uint64_t i);

static void verify_detail(const char *thread_dir, uint32_t k, uint64_t n, const uint8_t *dropped,
                          expect_fn expect, const void *ctx, int layout) {
    atf_thread_reader tr;
    atf_reader_options opt;
    uint64_t i, seq = 0, d = 0, first = UINT64_MAX, last = 0;
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, thread_dir, &opt));
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(ATF_CRC_OK, tr.index.crc_state);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    for (i = 0; i < n && !harness__failures_in_test; i++) {
        atf_index_event ev;
        atf_detail_event de;
        if (dropped && bits_get(dropped, i)) continue;
        CHECK_RESULT(ATF_OK, atf_index_reader_get(&tr.index, seq, &ev));
        CHECK_EQ(gen_ts(k, i), ev.timestamp_ns);
        if (expect(ctx, i)) {
            uint8_t want[80];
            size_t len = gen_payload(k, i, want);
            CHECK_EQ(d, ev.detail_seq);
            CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(&tr, seq, &de));
            CHECK_EQ(seq, de.header.index_seq);
            CHECK_EQ(gen_ts(k, i), de.header.timestamp_ns);
            CHECK_EQ(len, de.payload_len);
            if (de.payload_len == len) CHECK_MEM(want, de.payload, len);
            CHECK_EQ(ev.kind == ATF_EVENT_CALL ? 3 : 4, de.header.type);
            if (layout == ATF_LAYOUT_1) CHECK_EQ(tr.index.header.thread_id, de.header.thread_id);
            CHECK_RESULT(ATF_OK, atf_thread_reader_index_of(&tr, d, &ev));
            if (first == UINT64_MAX) first = seq;
            last = seq;
            d++;
        } else {
            CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
            CHECK_RESULT(ATF_E_NO_DETAIL, atf_thread_reader_detail_of(&tr, seq, &de));
        }
        seq++;
    }
    CHECK_EQ(seq, tr.index.event_count);
    CHECK_EQ(d ? 1 : 0, tr.has_detail);
    CHECK_EQ(d ? 1 : 0, (tr.index.header.flags & ATF_INDEX_FLAG_HAS_DETAIL_FILE) != 0);
    if (tr.has_detail) {
        CHECK_EQ(d, tr.detail.event_count); /* dense: nothing but the linked records */
        CHECK_EQ(ATF_COUNT_FINALIZED, tr.detail.counted);
        CHECK_EQ(ATF_CRC_OK, tr.detail.crc_state);
        CHECK_EQ(first, tr.detail.header.index_seq_start);
        CHECK_EQ(last, tr.detail.header.index_seq_end);
        CHECK_EQ(d, tr.detail.header.event_count);
    }
    atf_thread_reader_close(&tr);
}

static int expect_from_bits(const void *ctx, uint64_t i) { return bits_get((const uint8_t *)ctx, i); }

static void detail_always_run(int layout) {
    atf_session *s = NULL;
    atf_session_config c;
    producer p[3];
    pthread_t t[3];
    char dir[1100], td[1200], *manifest;
    uint32_t i;
    uint64_t n = BIG_EVENTS / 5;
    memset(&c, 0, sizeof c);
    c.layout = (uint32_t)layout;
    c.detail_mode = ATF_DETAIL_ALWAYS;
    c.detail_ring_bytes = 64 * 1024; /* small enough that some detail is dropped */
    c.session_name = "always";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    for (i = 0; i < 3; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].s = s;
        p[i].k = i;
        p[i].n = n;
        p[i].with_detail = 1;
        p[i].dropped = bits_new(n);
        p[i].has_detail = bits_new(n);
        CHECK_EQ(0, pthread_create(&t[i], NULL, producer_main, &p[i]));
    }
    for (i = 0; i < 3; i++) pthread_join(t[i], NULL);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(td, sizeof td, "%s/manifest.json", dir);
    manifest = read_text(td);
    CHECK(manifest && json_valid(manifest));
    for (i = 0; i < 3; i++) {
        snprintf(td, sizeof td, "%s/thread_%u", dir, p[i].slot);
        verify_detail(td, i, n, p[i].dropped, expect_from_bits, p[i].has_detail, layout);
        if (manifest) {
            const char *obj = manifest_thread(manifest, p[i].slot);
            const char *hd = obj ? strstr(obj, "\"has_detail\":") : NULL;
            CHECK(hd && strncmp(hd, "\"has_detail\":true", 17) == 0);
        }
        free(p[i].dropped);
        free(p[i].has_detail);
    }
    free(manifest);
    rm_rf(dir);
}

static void test_detail_always_layout1(void) { detail_always_run(ATF_LAYOUT_1); }
static void test_detail_always_layout2(void) { detail_always_run(ATF_LAYOUT_2); }

/* Windowed, known triggers: synthetic timestamps far in the past, triggers registered
 * first, so exactly the events inside a window keep their detail. */
typedef struct window_ctx {
    uint32_t k;
    const uint64_t *t;
    size_t nt;
    uint64_t pre, post;
    const uint8_t *has_detail; /* detail pushed (ring not full) */
} window_ctx;

static int expect_in_window(const void *ctx, uint64_t i) {
    const window_ctx *w = (const window_ctx *)ctx;
    uint64_t ts = gen_ts(w->k, i);
    size_t j;
    if (!bits_get(w->has_detail, i)) return 0;
    for (j = 0; j < w->nt; j++)
        if (ts + w->pre >= w->t[j] && ts <= w->t[j] + w->post) return 1;
    return 0;
}

static void windowed_known_run(int layout, uint32_t drain_mode) {
    static const uint64_t triggers[] = {1000000 + 8 * 5000, 1000000 + 8 * 5050, 1000000 + 8 * 33333,
                                        1000000 + 8 * 99990, 1000000 + 8 * 60000 + 3};
    atf_session *s = NULL;
    atf_session_config c;
    producer p[2];
    pthread_t t[2];
    volatile int done[2] = {0, 0};
    window_ctx wc[2];
    char dir[1100], td[1200];
    uint64_t n = 100000, persisted = 0, j;
    uint32_t i;
    size_t q;
    memset(&c, 0, sizeof c);
    c.layout = (uint32_t)layout;
    c.detail_mode = ATF_DETAIL_WINDOWED;
    c.pre_roll_ns = 800;
    c.post_roll_ns = 400;
    c.drain_mode = drain_mode;
    c.detail_ring_bytes = 4u << 20;
    c.session_name = "windowed";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    for (q = 0; q < sizeof triggers / sizeof triggers[0]; q++) atf_session_trigger(s, triggers[q]);
    for (i = 0; i < 2; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].s = s;
        p[i].k = i;
        p[i].n = n;
        p[i].with_detail = 1;
        p[i].dropped = bits_new(n);
        p[i].has_detail = bits_new(n);
        p[i].done_flag = &done[i];
        CHECK_EQ(0, pthread_create(&t[i], NULL, producer_main, &p[i]));
    }
    if (drain_mode == ATF_DRAIN_MANUAL)
        while (!__atomic_load_n(&done[0], __ATOMIC_ACQUIRE) || !__atomic_load_n(&done[1], __ATOMIC_ACQUIRE))
            atf_session_pump(s);
    for (i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    for (i = 0; i < 2; i++) {
        wc[i].k = i;
        wc[i].t = triggers;
        wc[i].nt = sizeof triggers / sizeof triggers[0];
        wc[i].pre = c.pre_roll_ns;
        wc[i].post = c.post_roll_ns;
        wc[i].has_detail = p[i].has_detail;
        for (j = 0; j < n; j++) persisted += (uint64_t)expect_in_window(&wc[i], j);
        snprintf(td, sizeof td, "%s/thread_%u", dir, p[i].slot);
        verify_detail(td, i, n, p[i].dropped, expect_in_window, &wc[i], layout);
        free(p[i].dropped);
        free(p[i].has_detail);
    }
    CHECK(persisted > 150); /* the windows did hold events */
    rm_rf(dir);
}

static void test_windowed_known_triggers_manual_l1(void) { windowed_known_run(1, ATF_DRAIN_MANUAL); }
static void test_windowed_known_triggers_manual_l2(void) { windowed_known_run(2, ATF_DRAIN_MANUAL); }
static void test_windowed_known_triggers_thread(void) { windowed_known_run(1, ATF_DRAIN_THREAD); }

/* Windowed detail decided after its index events reached the disk: the links are patched
 * in index.atf in place and the footer CRC still matches (it is corrected, not reread). */
static void windowed_patch_run(int layout) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    char dir[1100], td[1200];
    uint64_t base = atf_now_ns() + 10000000000ull, i; /* 10 s ahead: pending, not released */
    uint8_t payload[16];
    atf_thread_reader tr;
    atf_reader_options opt;
    uint64_t nl = (60 - 40 + 1) + (199 - 181 + 1), at = 0;
    memset(&c, 0, sizeof c);
    memset(payload, 7, sizeof payload);
    c.layout = (uint32_t)layout;
    c.detail_mode = ATF_DETAIL_WINDOWED;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.pre_roll_ns = 100;
    c.post_roll_ns = 100;
    c.session_name = "patch";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "patcher", &w));
    for (i = 0; i < 200; i++)
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, i & 1 ? 2u : 1u, 77, base + i * 10, 3, payload, 16));
    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* index events written, detail pending */
    atf_session_trigger(s, base + 500);        /* events 40..60 */
    atf_session_trigger(s, base + 1910);       /* events 181..199 */
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK(s->slots[0]->windows != NULL); /* the slot's copy of the triggers */
    atf_session_detach(s);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    /* a finished thread keeps no buffer until the session closes */
    CHECK_EQ(1, s->slots[0]->finalized);
    CHECK(s->slots[0]->stage == NULL && s->slots[0]->windows == NULL);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, &opt));
    CHECK_EQ(ATF_CRC_OK, tr.index.crc_state);
    CHECK_EQ(ATF_CRC_OK, tr.detail.crc_state);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    CHECK_EQ(nl, tr.detail.event_count);
    for (i = 0; i < tr.index.event_count; i++) {
        atf_index_event ev;
        atf_index_reader_get(&tr.index, i, &ev);
        if ((i >= 40 && i <= 60) || (i >= 181 && i <= 199)) {
            CHECK_EQ(at, ev.detail_seq);
            at++;
        } else {
            CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
        }
    }
    CHECK_EQ(nl, at);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

/* A pre-roll as long as the clock allows: detail of any age stays pending until a trigger
 * reaches it (the release horizon saturates at 0 instead of wrapping round). */
static void test_windowed_unbounded_pre_roll(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    atf_thread_reader tr;
    uint8_t payload[16];
    char dir[1100], td[1200];
    uint64_t now;
    memset(&c, 0, sizeof c);
    memset(payload, 3, sizeof payload);
    c.detail_mode = ATF_DETAIL_WINDOWED;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.pre_roll_ns = UINT64_MAX;
    c.session_name = "pre_roll_max";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "old", &w));
    now = atf_now_ns();
    CHECK(now > 2000000000u);
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, 5, now - 1000000000u, 0, payload, 16));
    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* a second old: still pending */
    atf_session_trigger(s, now);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    atf_session_detach(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK(tr.has_detail);
    if (tr.has_detail) CHECK_EQ(1, tr.detail.event_count);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

static void test_windowed_links_patched_on_disk_l1(void) { windowed_patch_run(ATF_LAYOUT_1); }
static void test_windowed_links_patched_on_disk_l2(void) { windowed_patch_run(ATF_LAYOUT_2); }

/* Real time: the producer triggers on some of its own events (t = that event's
 * timestamp); exactly the events within [t - pre, t + post] keep their detail. */
static void test_windowed_realtime_triggers(void) {
    enum { N = 60000 };
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    static uint64_t ts[N];
    uint64_t trig[3], d = 0, i;
    size_t nt = 0, j;
    uint8_t payload[16];
    char dir[1100], td[1200];
    atf_thread_reader tr;
    memset(&c, 0, sizeof c);
    memset(payload, 3, sizeof payload);
    c.detail_mode = ATF_DETAIL_WINDOWED;
    c.pre_roll_ns = 200000;
    c.post_roll_ns = 100000;
    c.detail_ring_bytes = 16u << 20;
    c.index_ring_events = 1u << 17;
    c.session_name = "realtime";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "rt", &w));
    for (i = 0; i < N; i++) {
        uint64_t spin;
        ts[i] = atf_now_ns();
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, 1, i, ts[i], 3, payload, sizeof payload));
        if (i == 15000 || i == 30000 || i == 52000) {
            trig[nt++] = ts[i];
            atf_session_trigger(s, ts[i]);
        }
        for (spin = 0; spin < 100; spin++) __asm__ __volatile__("" ::: "memory");
    }
    CHECK_EQ(0, w->detail_dropped);
    atf_session_detach(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    CHECK_EQ(N, tr.index.event_count);
    for (i = 0; i < N && i < tr.index.event_count; i++) {
        atf_index_event ev;
        int in = 0;
        for (j = 0; j < nt; j++) in |= ts[i] + c.pre_roll_ns >= trig[j] && ts[i] <= trig[j] + c.post_roll_ns;
        atf_index_reader_get(&tr.index, i, &ev);
        if (in) {
            CHECK_EQ(d, ev.detail_seq);
            d++;
        } else {
            CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
        }
        if (harness__failures_in_test) break;
    }
    CHECK(d > 100);
    CHECK_EQ(d, tr.detail.event_count);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

/* ---- manifest ------------------------------------------------------------------------ */

typedef struct named { atf_session *s; const char *name; uint32_t slot; } named;

static void *named_main(void *arg) {
    named *x = (named *)arg;
    atf_producer *w = NULL;
    if (atf_session_attach(x->s, x->name, &w) == ATF_OK) {
        x->slot = w->slot;
        atf_producer_call(w, 1, atf_now_ns());
        atf_session_detach(x->s);
    }
    return NULL;
}

static void test_manifest_escaping(void) {
    static const char *names[] = {
        "quote\"back\\slash/",
        "ctl\x01\x1f\x7f\n\t\r\b\f",
        "utf8 \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89",
        "bad\xff\xc3(\xed\xa0\x80\xf4\x90\x80\x80!",
        /* 44 three-byte characters: longer than the 127 bytes kept, cut between characters */
        "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
        "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
        "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
        "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
        "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
        "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac",
    };
    static const char *escaped[] = {
        "\"name\":\"quote\\\"back\\\\slash/\"",
        "\"name\":\"ctl\\u0001\\u001f\\u007f\\n\\t\\r\\b\\f\"",
        "\"name\":\"utf8 \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89\"",
        "\"name\":\"bad\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd!\"",
    };
    atf_session *s = NULL;
    atf_session_config c;
    named x[5];
    pthread_t t;
    char dir[1100], path[1200], *m;
    size_t i;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "escape";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    for (i = 0; i < 5; i++) {
        x[i].s = s;
        x[i].name = names[i];
        CHECK_EQ(0, pthread_create(&t, NULL, named_main, &x[i]));
        pthread_join(t, NULL);
    }
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 0, "C:\\prog\\a \"b\".exe", 0x400000, 0x1000));
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 0x0000000100000002ull, "operator\"\"\n"));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(s, "audio \"48k\"", 123, 0.5, 48000.0));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(s, "nan", 124, 0.0 / 0.0, 1.0 / 0.0));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    m = read_text(path);
    CHECK(m != NULL);
    if (!m) return;
    CHECK(json_valid(m));
    for (i = 0; i < 4; i++) {
        const char *obj = manifest_thread(m, x[i].slot);
        CHECK(obj && strstr(obj, escaped[i]) != NULL);
        if (!obj || !strstr(obj, escaped[i])) printf("  missing %s\n", escaped[i]);
    }
    {   /* the long name: 42 whole characters (126 bytes), never a cut one */
        const char *obj = manifest_thread(m, x[4].slot), *q = obj ? strstr(obj, "\"name\":\"") : NULL;
        CHECK(q != NULL);
        if (q) {
            q += 8;
            CHECK_MEM(names[4], q, 126);
            CHECK_EQ('"', q[126]);
        }
    }
    CHECK(strstr(m, "\"path\":\"C:\\\\prog\\\\a \\\"b\\\".exe\",\"base_address\":\"0x400000\",\"size\":4096") != NULL);
    CHECK(strstr(m, "{\"function_id\":\"0x0000000100000002\",\"module_id\":1,\"symbol_index\":2,"
                    "\"name\":\"operator\\\"\\\"\\n\"}") != NULL);
    CHECK(strstr(m, "{\"name\":\"audio \\\"48k\\\"\",\"host_ns\":123,\"value\":0.5,\"rate\":48000}") != NULL);
    CHECK(strstr(m, "{\"name\":\"nan\",\"host_ns\":124,\"value\":null,\"rate\":null}") != NULL);
    CHECK(strstr(m, "\"format_version\":2") != NULL);
    CHECK(strstr(m, "\"wall_clock_ns\"") != NULL);
    { /* this host's clock and arch (boottime / QPC / mach; unknown on s390x) */
        char want[64];
        snprintf(want, sizeof want, "\"clock_type\":%u", (unsigned)atf_clock_type());
        CHECK(strstr(m, want) != NULL);
        snprintf(want, sizeof want, "\"arch\":\"%s\"", atf_arch_str(ATF__ARCH_CODE));
        CHECK(strstr(m, want) != NULL);
    }
    free(m);
    rm_rf(dir);
}

static void test_json_validator_rejects(void) {
    /* the validator that vouches for the manifest must itself refuse bad JSON */
    CHECK(json_valid("{\"a\":[1,2.5,-3e4,true,false,null,\"x\\u00e9\"]}"));
    CHECK(!json_valid("{\"a\":\"\x01\"}"));
    CHECK(!json_valid("{\"a\":\"\xff\"}"));
    CHECK(!json_valid("{\"a\":nan}"));
    CHECK(!json_valid("{\"a\":1,}"));
    CHECK(!json_valid("{\"a\":\"\\x\"}"));
    CHECK(!json_valid("{\"a\":01}"));
}

/* What the session writer puts in manifest.json comes back through the session reader:
 * state (while recording and after close), overflow policy, process facts, modules and
 * timing anchors in their order, with exact integer values where the text has them. */
static void test_manifest_read_back(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_session_reader r;
    atf_producer *w = NULL;
    char dir[1100];
    const atf_session_anchor *a;
    const uint64_t big = 1ull << 60; /* an integer double with an infinite rate */
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.overflow = ATF_OVERFLOW_DROP;
    c.session_name = "read_back";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "main", &w));
    if (w) {
        atf_producer_call(w, 0x100000001ull, atf_now_ns());
        atf_producer_return(w, 0x100000001ull, atf_now_ns());
    }
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 0, "/bin/\"q\" \xc3\xa9", 0x400000, 0x1000));
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 7, "", 0xFFFFFFFFFFFF0000ull, 0));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(s, "frames", 1000, 1234567890123.0, 48000.0));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(s, "half", 2000, 0.5, 0.0));       /* rate 0: default */
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(s, "nan", 3000, 0.0 / 0.0, 1.0));  /* value null: skipped */
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(s, "big", 4000, (double)big, 1.0 / 0.0));
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK(strcmp(r.state, "recording") == 0);
    atf_session_reader_close(&r);
    if (w) atf_session_detach(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));

    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_RESULT(ATF_OK, r.manifest_error.code);
    CHECK(strcmp(r.state, "closed") == 0);
    CHECK(strcmp(r.overflow, "drop") == 0);
    CHECK_EQ((uint64_t)getpid(), r.pid);
    CHECK(strcmp(r.arch, atf_arch_str(ATF__ARCH_CODE)) == 0);
    CHECK(strcmp(r.os, atf_os_str(ATF__OS_CODE)) == 0);
    CHECK_EQ(0, r.attach_failures);
    CHECK(r.recording_error == NULL);
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count == 1) CHECK(r.threads[0].manifest_finalized && strcmp(r.threads[0].name, "main") == 0);
    CHECK_EQ(2, r.module_count);
    if (r.module_count == 2) {
        CHECK_EQ(0, r.modules[0].module_id);
        CHECK(strcmp(r.modules[0].path, "/bin/\"q\" \xc3\xa9") == 0);
        CHECK_EQ(0x400000, r.modules[0].base_address);
        CHECK_EQ(0x1000, r.modules[0].size);
        CHECK_EQ(7, r.modules[1].module_id);
        CHECK(strcmp(r.modules[1].path, "") == 0);
        CHECK_EQ(0xFFFFFFFFFFFF0000ull, r.modules[1].base_address);
        CHECK_EQ(0, r.modules[1].size);
    }
    /* the session's own wall clock anchor first, then ours in order, the NaN one left out */
    CHECK_EQ(4, r.anchor_count);
    if (r.anchor_count == 4) {
        a = &r.anchors[0];
        CHECK(strcmp(a->name, "wall_clock_ns") == 0 && a->rate == 1e9);
        CHECK_EQ(1000000000, a->timescale);
        a = &r.anchors[1];
        CHECK(strcmp(a->name, "frames") == 0);
        CHECK_EQ(1000, a->host_ns);
        CHECK(a->value_f == 1234567890123.0 && a->rate == 48000.0);
        CHECK_EQ(48000, a->timescale); /* integer value and rate: kept exact */
        CHECK_EQ(1234567890123ll, a->value);
        a = &r.anchors[2];
        CHECK(strcmp(a->name, "half") == 0 && a->value_f == 0.5);
        CHECK_EQ(0, a->timescale);
        CHECK(a->rate == 1e9);
        a = &r.anchors[3];
        CHECK(strcmp(a->name, "big") == 0 && a->rate == 1e9); /* rate null: the default */
        CHECK_EQ(1000000000, a->timescale);
        CHECK_EQ((int64_t)big, a->value);
    }
    atf_session_reader_close(&r);
    rm_rf(dir);
}

/* ---- manifest metadata: names, command line, modules, locations, exact anchors ------- */

typedef struct namer {
    atf_session *s;
    const char *attach_name;     /* NULL: attach without a name */
    const char *later_name;      /* then atf_session_name_thread */
    atf_result attach_rc, name_rc;
    uint32_t slot;
} namer;

static void *namer_main(void *arg) {
    namer *x = (namer *)arg;
    atf_producer *w = NULL;
    x->attach_rc = atf_session_attach(x->s, x->attach_name, &w);
    if (w) x->slot = w->slot;
    x->name_rc = atf_session_name_thread(x->s, x->later_name);
    if (w) atf_session_detach(x->s);
    return NULL;
}

/* Runs one namer thread to its end. */
static void run_namer(namer *x) {
    pthread_t t;
    CHECK_EQ(0, pthread_create(&t, NULL, namer_main, x));
    pthread_join(t, NULL);
}

/* Whether a (possibly NULL) string is `want`. */
static int same_text(const char *s, const char *want) { return s && strcmp(s, want) == 0; }

static const int64_t wall_near_2_61 = ((int64_t)1 << 61) + 123456789; /* ~2043 in ns */
static const int64_t frames_48k = 123456789012345ll;                   /* ~81 years at 48 kHz */

/* What test_manifest_metadata recorded, as the session reader must give it back (while
 * recording and after close alike). */
static void check_metadata(const atf_session_reader *r, const namer *by_call, const namer *by_attach) {
    const atf_session_thread *t;
    const atf_session_anchor *a;
    size_t i;
    CHECK(r->cmdline && strcmp(r->cmdline, "prog --flag \"two words\"") == 0);
    t = atf_session_reader_thread((atf_session_reader *)r, by_call->slot);
    CHECK(t && strcmp(t->name, "renamed") == 0);
    t = atf_session_reader_thread((atf_session_reader *)r, by_attach->slot);
    CHECK(t && strcmp(t->name, "given") == 0); /* the attach name wins */
    CHECK_EQ(2, r->module_count);
    if (r->module_count == 2) {
        CHECK(strcmp(r->modules[0].build_id, "00ff11ee22dd33cc44bb55aa6699778800112233") == 0);
        CHECK(strcmp(r->modules[1].build_id, "") == 0);
        CHECK(strcmp(r->modules[1].path, "/lib/libx.so") == 0);
    }
    CHECK_EQ(3, r->symbol_count);
    for (i = 0; i < r->symbol_count; i++) {
        const atf_session_symbol *y = &r->symbols[i];
        if (y->function_id == 0x100000007ull) { /* location only */
            CHECK(y->name == NULL && y->has_offset);
            CHECK_EQ(1, y->module_id);
            CHECK_EQ(0x1234, y->offset);
        } else if (y->function_id == 0x8ull) { /* name and location, given in either order */
            CHECK(y->name && strcmp(y->name, "main") == 0 && y->has_offset);
            CHECK_EQ(0, y->module_id);
            CHECK_EQ(0xFFFFFFFFFFFFFFF0ull, y->offset);
        } else { /* a name only */
            CHECK_EQ(0x9ull, y->function_id);
            CHECK(y->name && strcmp(y->name, "named") == 0 && !y->has_offset);
            CHECK_EQ(0, y->module_id);
        }
    }
    a = atf_session_reader_anchor(r, "wall_clock_ns");
    CHECK(a != NULL && a == &r->anchors[0]); /* the session's own, first */
    a = atf_session_reader_anchor(r, "later wall");
    CHECK(a != NULL);
    if (a) {
        CHECK_EQ(1000000000, a->timescale);
        CHECK_EQ((uint64_t)wall_near_2_61, (uint64_t)a->value); /* a double would be off */
        CHECK_EQ(5000, a->host_ns);
    }
    a = atf_session_reader_anchor(r, "audio");
    CHECK(a != NULL);
    if (a) {
        CHECK_EQ(48000, a->timescale);
        CHECK_EQ((uint64_t)frames_48k, (uint64_t)a->value);
        CHECK(a->rate == 48000.0);
    }
    a = atf_session_reader_anchor(r, "negative");
    CHECK(a != NULL);
    if (a) CHECK_EQ((uint64_t)-5, (uint64_t)a->value);
    CHECK(atf_session_reader_anchor(r, "absent") == NULL);
}

/* Every metadata call reaches manifest.json at the next pump (while recording) and at
 * close, and comes back through the session reader unchanged. */
static void test_manifest_metadata(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_session_reader r;
    namer by_call, by_attach;
    char dir[1100];
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "metadata";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    memset(&by_call, 0, sizeof by_call);
    by_call.s = s;
    by_call.later_name = "renamed";
    run_namer(&by_call);
    CHECK_RESULT(ATF_OK, by_call.name_rc);
    by_attach = by_call;
    by_attach.attach_name = "given";
    by_attach.later_name = "ignored";
    run_namer(&by_attach);
    CHECK_RESULT(ATF_OK, by_attach.name_rc);
    CHECK_RESULT(ATF_E_STATE, atf_session_name_thread(s, "not attached")); /* this thread */

    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(s, "first"));
    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(s, "prog --flag \"two words\""));
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 0, "/bin/prog", 0x400000, 0x1000));
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 1, "/lib/libx.so", 0x7f0000000000ull, 0x2000));
    CHECK_RESULT(ATF_OK, atf_session_set_module_build_id(s, 0, "00FF11EE22DD33CC44BB55AA6699778800112233"));
    CHECK_RESULT(ATF_E_ARG, atf_session_set_module_build_id(s, 1, "12g4"));
    CHECK_RESULT(ATF_E_ARG, atf_session_set_module_build_id(s, 1, ""));
    CHECK_RESULT(ATF_E_ARG, atf_session_set_module_build_id(s, 1, NULL));
    CHECK_RESULT(ATF_E_ARG, atf_session_set_module_build_id(s, 1, /* 65 digits */
        "00000000000000000000000000000000000000000000000000000000000000000"));
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_set_module_build_id(s, 2, "abcd"));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, 0x100000007ull, 1, 0x1234));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, 0x8ull, 0, 0x99));
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 0x8ull, "not main"));
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 0x8ull, "main"));                  /* replaces */
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, 0x8ull, 0, 0xFFFFFFFFFFFFFFF0ull)); /* too */
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 0x9ull, "named"));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor_exact(s, "later wall", 5000, wall_near_2_61, 1000000000));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor_exact(s, "audio", 6000, frames_48k, 48000));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor_exact(s, "negative", 7000, -5, 1));
    CHECK_RESULT(ATF_E_ARG, atf_session_add_anchor_exact(s, "no scale", 8000, 1, 0));
    CHECK_RESULT(ATF_E_ARG, atf_session_add_anchor_exact(s, "negative scale", 8000, 1, -48000));

    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* while recording */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK(strcmp(r.state, "recording") == 0);
    check_metadata(&r, &by_call, &by_attach);
    atf_session_reader_close(&r);

    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK(strcmp(r.state, "closed") == 0);
    check_metadata(&r, &by_call, &by_attach);
    /* naming offline: only the entry listed by location takes a name */
    CHECK_RESULT(ATF_OK, atf_session_reader_name_symbol(&r, 0x100000007ull, "found"));
    CHECK(same_text(atf_session_reader_symbol(&r, 0x100000007ull), "found"));
    CHECK_RESULT(ATF_OK, atf_session_reader_name_symbol(&r, 0x8ull, "other"));
    CHECK(same_text(atf_session_reader_symbol(&r, 0x8ull), "main"));
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_name_symbol(&r, 0x5ull, "none"));
    CHECK_RESULT(ATF_E_ARG, atf_session_reader_name_symbol(&r, 0x8ull, NULL));
    atf_session_reader_close(&r);
    rm_rf(dir);
}

/* The drain thread carries what arrives while recording to the disk within its 100 ms
 * cadence: a burst of 5000 function locations is on disk well within a few seconds. */
static void test_manifest_follows_recording(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_session_reader r;
    char dir[1100];
    uint64_t i, deadline;
    int complete = 0;
    memset(&c, 0, sizeof c);
    c.session_name = "follows";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 0, "/bin/many", 0x400000, 0x100000));
    for (i = 0; i < 5000; i++) CHECK_RESULT(ATF_OK, atf_session_add_function(s, i, 0, 0x1000 + 16 * i));
    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(s, "many"));
    deadline = atf_now_ns() + 5000000000ull;
    while (!complete && atf_now_ns() < deadline) {
        if (atf_session_reader_open(&r, dir, NULL) == ATF_OK) {
            complete = r.symbol_count == 5000 && r.cmdline && r.module_count == 1;
            if (complete) CHECK_EQ(0x1000 + 16 * 4999, r.symbols[4999].offset);
            atf_session_reader_close(&r);
        }
        if (!complete) atf__sleep_us(10000);
    }
    CHECK(complete);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    rm_rf(dir);
}

/* A reader that holds manifest.json open while the drain replaces it: the replace goes
 * through once the reader closes it (Windows refuses it while the file is open), it does
 * not fail the session. */
static void *close_later(void *fd) {
    atf__sleep_us(50000);
    atf__fd_close(*(atf__fd *)fd);
    return NULL;
}

static void test_replace_while_read(void) {
    char dir[512], target[600], next[600], *text;
    atf__fd held;
    pthread_t t;
    int started;
    snprintf(dir, sizeof dir, "%s/replace", root_dir());
    snprintf(target, sizeof target, "%s/manifest.json", dir);
    snprintf(next, sizeof next, "%s/manifest.json.tmp", dir);
    CHECK_EQ(0, atf__mkdir_all(dir));
    CHECK_EQ(0, write_file(target, "old", 3));
    CHECK_EQ(0, write_file(next, "new", 3));
    held = atf__fd_open_read(target);
    CHECK(held != ATF__FD_NONE);
    if (held == ATF__FD_NONE) return;
    started = pthread_create(&t, NULL, close_later, &held);
    CHECK_EQ(0, started);
    if (started != 0) {
        atf__fd_close(held);
        return;
    }
    CHECK_EQ(0, atf__rename_replace(next, target));
    CHECK_EQ(0, pthread_join(t, NULL));
    text = read_text(target);
    CHECK(text && strcmp(text, "new") == 0);
    free(text);
    rm_rf(dir);
}

/* A reference for atf_anchor_value_at in 128-bit arithmetic (where the compiler has it). */
#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 i128;
static int anchor_reference(const atf_session_anchor *a, uint64_t t, int64_t *out) {
    i128 d = (i128)t - (i128)a->host_ns, q, r;
    i128 prod = d * a->timescale;
    q = prod / 1000000000;
    r = prod % 1000000000;
    if (r < 0) q -= 1; /* floor */
    q += a->value;
    if (q > INT64_MAX || q < INT64_MIN) return 0;
    *out = (int64_t)q;
    return 1;
}
#endif

static void test_anchor_value_at(void) {
    atf_session_anchor a;
    int64_t v = 0;
    uint64_t h;
    memset(&a, 0, sizeof a);
    a.host_ns = 1000000000000ull;
    a.value = frames_48k;
    a.timescale = 48000;
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns, &v));
    CHECK_EQ((uint64_t)frames_48k, (uint64_t)v);
    /* one 48 kHz frame is 20833.33 ns: the reading turns over between 20833 and 20834 */
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns + 20833, &v));
    CHECK_EQ((uint64_t)frames_48k, (uint64_t)v);
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns + 20834, &v));
    CHECK_EQ((uint64_t)(frames_48k + 1), (uint64_t)v);
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns + 1000000000, &v));
    CHECK_EQ((uint64_t)(frames_48k + 48000), (uint64_t)v);
    /* before host_ns the reading floors too: one ns before is the previous frame */
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns - 1, &v));
    CHECK_EQ((uint64_t)(frames_48k - 1), (uint64_t)v);
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns - 20833, &v));
    CHECK_EQ((uint64_t)(frames_48k - 1), (uint64_t)v);
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns - 20834, &v));
    CHECK_EQ((uint64_t)(frames_48k - 2), (uint64_t)v);
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, 0, &v)); /* 1000 s before: 48 000 000 frames */
    CHECK_EQ((uint64_t)(frames_48k - 48000000), (uint64_t)v);
    /* a wall clock in ns: the difference itself */
    a.value = wall_near_2_61;
    a.timescale = 1000000000;
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns + 7, &v));
    CHECK_EQ((uint64_t)(wall_near_2_61 + 7), (uint64_t)v);
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns - 7, &v));
    CHECK_EQ((uint64_t)(wall_near_2_61 - 7), (uint64_t)v);
    /* overflow of the result, either way, and of the scaled difference */
    a.value = INT64_MAX - 1;
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns + 1, &v));
    CHECK_EQ((uint64_t)INT64_MAX, (uint64_t)v);
    CHECK_RESULT(ATF_E_RANGE, atf_anchor_value_at(&a, a.host_ns + 2, &v));
    a.value = INT64_MIN;
    CHECK_RESULT(ATF_OK, atf_anchor_value_at(&a, a.host_ns, &v));
    CHECK_EQ((uint64_t)INT64_MIN, (uint64_t)v);
    CHECK_RESULT(ATF_E_RANGE, atf_anchor_value_at(&a, a.host_ns - 1, &v));
    a.value = 0;
    a.host_ns = 0;
    a.timescale = INT32_MAX;
    CHECK_RESULT(ATF_E_RANGE, atf_anchor_value_at(&a, UINT64_MAX, &v));
    a.timescale = 0;
    CHECK_RESULT(ATF_E_ARG, atf_anchor_value_at(&a, 5, &v));
    a.timescale = 1;
    CHECK_RESULT(ATF_E_ARG, atf_anchor_value_at(NULL, 5, &v));
    CHECK_RESULT(ATF_E_ARG, atf_anchor_value_at(&a, 5, NULL));
#if defined(__SIZEOF_INT128__)
    { /* random anchors and times against the 128-bit reference, overflow included */
        uint64_t x = 0x9E3779B97F4A7C15ull;
        int k, mismatches = 0;
        for (k = 0; k < 200000; k++) {
            int64_t want = 0, got = 0;
            int fits;
            atf_result rc;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a.host_ns = x >> (x & 63);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a.value = (int64_t)(x >> (x & 63)) * ((x & 64) ? -1 : 1);
            a.timescale = (int32_t)(1 + (x >> 33) % INT32_MAX);
            if (k & 1) a.timescale = (int32_t)(1 + (x >> 40) % 96000);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            h = (k & 2) ? a.host_ns + (x >> (x & 63)) : a.host_ns - (x >> (x & 63));
            if ((k & 2) ? h < a.host_ns : h > a.host_ns) h = a.host_ns;
            fits = anchor_reference(&a, h, &want);
            rc = atf_anchor_value_at(&a, h, &got);
            if (fits ? rc != ATF_OK || got != want : rc != ATF_E_RANGE) mismatches++;
        }
        CHECK_EQ(0, mismatches);
    }
#else
    (void)h;
#endif
}

/* ---- threads come and go --------------------------------------------------------------- */

typedef struct lazy { atf_session *s; uint64_t n; uint32_t slot; int ok; } lazy;

static void *lazy_main(void *arg) {
    lazy *x = (lazy *)arg;
    uint64_t i;
    gen_state g = {0};
    for (i = 0; i < x->n; i++) {
        atf_producer *w = atf_session_producer(x->s); /* the way a hook finds its writer */
        if (!w) return NULL;
        x->slot = w->slot;
        gen_push(w, 5, i, &g);
    }
    x->ok = 1;
    return NULL; /* no detach: thread exit releases the slot */
}

static void test_thread_exit_releases(void) {
    atf_session *s = NULL;
    atf_session_config c;
    lazy x;
    pthread_t t;
    atf_thread_stats st;
    char dir[1100], td[1200];
    atf_thread_reader tr;
    int k;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "exit";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    memset(&x, 0, sizeof x);
    x.s = s;
    x.n = 3000;
    CHECK_EQ(0, pthread_create(&t, NULL, lazy_main, &x));
    pthread_join(t, NULL);
    CHECK(x.ok);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 0, &st));
    CHECK_EQ(1, st.finalized); /* before close: the exit closed the writer, the pump finished it */
    CHECK_EQ(3000, st.events_written);
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(3000, check_index_against(&tr, 5, 3000, NULL, 1));
    atf_thread_reader_close(&tr);
    /* a second thread that attaches lazily, still alive at close: close finalizes it */
    for (k = 0; k < 2; k++) {
        memset(&x, 0, sizeof x);
        x.s = s;
        x.n = 10;
        CHECK_EQ(0, pthread_create(&t, NULL, lazy_main, &x));
        pthread_join(t, NULL);
    }
    CHECK_EQ(3, atf_session_thread_count(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(td, sizeof td, "%s/thread_2", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(10, tr.index.event_count);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

typedef struct late { atf_session *s; pthread_mutex_t m; pthread_cond_t cv; int stage; } late;

static void *late_main(void *arg) {
    late *x = (late *)arg;
    atf_producer *w = atf_session_producer(x->s);
    if (w) atf_producer_call(w, 1, 1);
    pthread_mutex_lock(&x->m);
    x->stage = 1;
    pthread_cond_broadcast(&x->cv);
    while (x->stage != 2) pthread_cond_wait(&x->cv, &x->m);
    pthread_mutex_unlock(&x->m);
    return NULL; /* exits after its session closed: the exit hook must leave it alone */
}

static void test_thread_exit_after_close(void) {
    atf_session *s = NULL;
    atf_session_config c;
    late x;
    pthread_t t;
    char dir[1100];
    memset(&c, 0, sizeof c);
    c.session_name = "late";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    memset(&x, 0, sizeof x);
    x.s = s;
    pthread_mutex_init(&x.m, NULL);
    pthread_cond_init(&x.cv, NULL);
    CHECK_EQ(0, pthread_create(&t, NULL, late_main, &x));
    pthread_mutex_lock(&x.m);
    while (x.stage != 1) pthread_cond_wait(&x.cv, &x.m);
    pthread_mutex_unlock(&x.m);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    /* reuse the memory the session had, so a stale write would land somewhere visible */
    {
        void *junk[64];
        int i;
        for (i = 0; i < 64; i++) junk[i] = calloc(1, 1u << 16);
        pthread_mutex_lock(&x.m);
        x.stage = 2;
        pthread_cond_broadcast(&x.cv);
        pthread_mutex_unlock(&x.m);
        pthread_join(t, NULL);
        for (i = 0; i < 64; i++) {
            size_t b;
            for (b = 0; junk[i] && b < (1u << 16); b += 8) {
                if (((uint8_t *)junk[i])[b] != 0) {
                    CHECK(0);
                    break;
                }
            }
            free(junk[i]);
        }
    }
    rm_rf(dir);
}

typedef struct two { atf_session *a, *b; uint32_t slot_a, slot_b; int same; } two;

static void *two_main(void *arg) {
    two *x = (two *)arg;
    int i;
    x->same = 1;
    for (i = 0; i < 100; i++) {
        atf_producer *wa = atf_session_producer(x->a), *wb = atf_session_producer(x->b);
        if (!wa || !wb) {
            x->same = 0;
            return NULL;
        }
        if (i == 0) {
            x->slot_a = wa->slot;
            x->slot_b = wb->slot;
        }
        x->same &= wa->slot == x->slot_a && wb->slot == x->slot_b && wa != wb;
        atf_producer_call(wa, 1, (uint64_t)i);
        atf_producer_call(wb, 2, (uint64_t)i);
    }
    return NULL;
}

typedef struct crowd {
    atf_session *s;
    volatile int attached, release;
    uint64_t capacity;           /* the ring the thread got (0: no writer) */
} crowd;

static void *crowd_main(void *arg) {
    crowd *x = (crowd *)arg;
    atf_producer *w = atf_session_producer(x->s);
    x->capacity = w ? w->index.mask + 1 : 0;
    if (w) atf_producer_call(w, 1, 1);
    __atomic_store_n(&x->attached, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&x->release, __ATOMIC_ACQUIRE)) sched_yield();
    return NULL; /* its writer closes at thread exit */
}

/* The session counts the processors the opening thread may run on: pinned to one
 * (taskset -c 0), its drain shares the producers' core, and it counts one. */
static void test_cpus_follow_affinity(void) {
#if defined(__linux__) && defined(CPU_COUNT)
    atf_session *s = NULL;
    cpu_set_t was, one;
    size_t cpu = 0;
    CHECK_EQ(0, sched_getaffinity(0, sizeof was, &was));
    if (harness__failures_in_test) return;
    while (!CPU_ISSET(cpu, &was)) cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK_EQ(0, sched_setaffinity(0, sizeof one, &one));
    if (harness__failures_in_test) return;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), NULL));
    CHECK_EQ(0, sched_setaffinity(0, sizeof was, &was));
    if (!s) return;
    CHECK_EQ(1, s->cpus);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), NULL));
    if (!s) return;
    CHECK_EQ((uint64_t)CPU_COUNT(&was), s->cpus);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
#else
    printf("  cpus_follow_affinity: no affinity mask here: left out\n");
#endif
}

/* index_ring_events_crowded: a thread that attaches while as many threads as there are
 * processors produce gets the smaller ring; once fewer produce, a new thread gets the
 * full one again. */
static void test_crowded_rings(void) {
    enum { MOST = 64 };
    atf_session *s = NULL;
    atf_session_config c;
    crowd x[MOST + 2];
    pthread_t t[MOST + 2];
    int i, n;
    memset(&c, 0, sizeof c);
    c.index_ring_events = 1024;
    c.index_ring_events_crowded = 64;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    if (s->cpus > MOST) { /* the processors the session counted at open */
        printf("  crowded_rings: %llu processors: left out\n", (unsigned long long)s->cpus);
        CHECK_RESULT(ATF_OK, atf_session_close(s));
        return;
    }
    n = (int)s->cpus;
    memset(x, 0, sizeof x);
    for (i = 0; i <= n; i++) { /* one at a time: each sees the ones before it attached */
        x[i].s = s;
        CHECK_EQ(0, pthread_create(&t[i], NULL, crowd_main, &x[i]));
        while (!__atomic_load_n(&x[i].attached, __ATOMIC_ACQUIRE)) sched_yield();
        CHECK_EQ(i < n ? 1024 : 64, x[i].capacity);
    }
    __atomic_store_n(&x[0].release, 1, __ATOMIC_RELEASE); /* n - 1 producing then */
    __atomic_store_n(&x[n].release, 1, __ATOMIC_RELEASE);
    pthread_join(t[0], NULL);
    pthread_join(t[n], NULL);
    x[n + 1].s = s;
    x[n + 1].release = 1;
    CHECK_EQ(0, pthread_create(&t[n + 1], NULL, crowd_main, &x[n + 1]));
    pthread_join(t[n + 1], NULL);
    CHECK_EQ(1024, x[n + 1].capacity);
    for (i = 1; i < n; i++) {
        __atomic_store_n(&x[i].release, 1, __ATOMIC_RELEASE);
        pthread_join(t[i], NULL);
    }
    CHECK_EQ((uint64_t)n + 2, atf_session_thread_count(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
}

/* One thread in two sessions, and two sessions of one name: no slot twice, no overwrite;
 * a given name is joined, so the second gets pid_<pid>_1 in the same directory. */
static void test_two_sessions(void) {
    atf_session *a = NULL, *b = NULL;
    atf_session_config c;
    two x;
    pthread_t t;
    char da[1100], db[1100], td[1200];
    atf_thread_reader tr;
    memset(&c, 0, sizeof c);
    c.session_name = "twin";
    CHECK_RESULT(ATF_OK, atf_session_open(&a, root_dir(), &c));
    CHECK_RESULT(ATF_OK, atf_session_open(&b, root_dir(), &c));
    if (!a || !b) return;
    snprintf(da, sizeof da, "%s", atf_session_path(a));
    snprintf(db, sizeof db, "%s", atf_session_path(b));
    CHECK(strcmp(da, db) != 0);
    {
        char want_a[64], want_b[64];
        size_t la, lb;
        snprintf(want_a, sizeof want_a, "/twin/pid_%u", (unsigned)getpid());
        snprintf(want_b, sizeof want_b, "/twin/pid_%u_1", (unsigned)getpid());
        la = strlen(want_a);
        lb = strlen(want_b);
        CHECK(strlen(da) > la && strcmp(da + strlen(da) - la, want_a) == 0);
        CHECK(strlen(db) > lb && strcmp(db + strlen(db) - lb, want_b) == 0);
    }
    memset(&x, 0, sizeof x);
    x.a = a;
    x.b = b;
    CHECK_EQ(0, pthread_create(&t, NULL, two_main, &x));
    pthread_join(t, NULL);
    CHECK(x.same);
    CHECK_EQ(1, atf_session_thread_count(a));
    CHECK_EQ(1, atf_session_thread_count(b));
    CHECK_RESULT(ATF_OK, atf_session_close(a));
    CHECK_RESULT(ATF_OK, atf_session_close(b));
    snprintf(td, sizeof td, "%s/thread_0", da);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK_EQ(100, tr.index.event_count);
    atf_thread_reader_close(&tr);
    snprintf(td, sizeof td, "%s/thread_0", db);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK_EQ(100, tr.index.event_count);
    atf_thread_reader_close(&tr);
    rm_rf(da);
    rm_rf(db);
}

static void test_attach_detach_and_limits(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL, *w2 = NULL;
    named x;
    pthread_t t;
    char dir[1100], path[1200], *m;
    uint64_t v = 0;
    memset(&c, 0, sizeof c);
    c.max_threads = 2;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "limits";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "main", &w));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "again", &w2)); /* attached: same writer */
    CHECK(w == w2);
    CHECK(atf_session_producer(s) == w);
    atf_producer_call(w, 1, 1);
    atf_session_detach(s);
    CHECK(atf_session_producer(s) == NULL); /* detached: no silent re-attach */
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "second life", &w2)); /* explicit: new slot */
    CHECK(w2 != NULL && w2 != w);
    if (w2) CHECK_EQ(1, w2->slot);
    x.s = s;
    x.name = "third";
    x.slot = 99;
    CHECK_EQ(0, pthread_create(&t, NULL, named_main, &x));
    pthread_join(t, NULL);
    CHECK_EQ(99, x.slot); /* out of slots */
    CHECK_EQ(2, atf_session_thread_count(s));
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    atf_producer_close(w2); /* the public close from the producing thread works as detach */
    CHECK(atf_session_producer(s) == NULL);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    m = read_text(path);
    CHECK(m && json_valid(m));
    CHECK(m && manifest_u64(strstr(m, "\"attach_failures\""), "attach_failures", &v));
    CHECK_EQ(1, v);
    free(m);
    rm_rf(dir);
}

static void test_config_validation(void) {
    atf_session *s = (atf_session *)1;
    atf_session_config c;
    memset(&c, 0, sizeof c);
    CHECK_RESULT(ATF_E_ARG, atf_session_open(NULL, root_dir(), &c));
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, NULL, &c));
    CHECK(s == NULL);
    c.layout = 4;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.layout = ATF_LAYOUT_PACKED; /* windowed links are patched into index.atf */
    c.detail_mode = ATF_DETAIL_WINDOWED;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.layout = 0;
    c.detail_mode = 3;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.detail_mode = 0;
    c.drain_mode = 2;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.drain_mode = 0;
    c.fsync_mode = 2;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.fsync_mode = 0;
    c.index_ring_events = ((uint64_t)1 << 40) + 1;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.index_ring_events = 0;
    c.index_ring_events_crowded = ((uint64_t)1 << 40) + 1;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    c.index_ring_events_crowded = 0;
    CHECK_RESULT(ATF_E_IO, atf_session_open(&s, "/proc/atf_cannot_create_this", &c));
    CHECK(s == NULL);
}

/* atf_session_open_ex says what was refused: the config field, or the directory with its
 * errno; nothing is filled in when the open succeeds. */
static void test_open_error_detail(void) {
    atf_session *s = (atf_session *)1;
    atf_session_config c;
    atf_error e;
    memset(&c, 0, sizeof c);
    c.stamp_clock = 7;
    CHECK_RESULT(ATF_E_ARG, atf_session_open_ex(&s, root_dir(), &c, &e));
    CHECK(s == NULL);
    CHECK_RESULT(ATF_E_ARG, e.code);
    CHECK(e.what && strstr(e.what, "stamp_clock") != NULL);
    c.stamp_clock = 0;
    c.max_threads = (1u << 20) + 1; /* the slot table's size would overflow on 32-bit hosts */
    CHECK_RESULT(ATF_E_ARG, atf_session_open_ex(&s, root_dir(), &c, &e));
    CHECK(e.what && strstr(e.what, "max_threads") != NULL);
    c.max_threads = 0;
    c.detail_ring_bytes = ((uint64_t)1 << 40) + 1;
    CHECK_RESULT(ATF_E_ARG, atf_session_open_ex(&s, root_dir(), &c, &e));
    CHECK(e.what && strstr(e.what, "detail_ring_bytes") != NULL);
    c.detail_ring_bytes = 0;
    CHECK_RESULT(ATF_E_IO, atf_session_open_ex(&s, "/proc/atf_cannot_create_this/x", &c, &e));
    CHECK_RESULT(ATF_E_IO, e.code);
    CHECK(strstr(e.path, "atf_cannot_create_this") != NULL);
    CHECK(e.sys_errno != 0);
    CHECK_RESULT(ATF_E_ARG, atf_session_open_ex(&s, NULL, &c, NULL)); /* no error_out: fine */
    c.drain_mode = ATF_DRAIN_MANUAL;
    memset(&e, 0x5A, sizeof e);
    CHECK_RESULT(ATF_OK, atf_session_open_ex(&s, root_dir(), &c, &e));
    CHECK(s != NULL);
    CHECK_EQ(0x5A, ((unsigned char *)&e)[0]); /* untouched */
    if (s) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s", atf_session_path(s));
        CHECK_RESULT(ATF_OK, atf_session_close(s));
        rm_rf(dir);
    }
}

/* With detail off a payload is refused, never swallowed: ATF_E_DETAIL_OFF, nothing
 * recorded or counted, the depth unmoved; in a session and on a bare writer alike. */
static void test_detail_off_refused(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_session_reader r;
    atf_producer *w = NULL, bare;
    uint8_t payload[16] = {1, 2, 3};
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64), dsz = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    void *imem = NULL, *dmem = NULL;
    char dir[1100];
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "detail_off";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    if (w) {
        CHECK_RESULT(ATF_OK, atf_producer_call(w, 1, 10));
        CHECK_RESULT(ATF_E_DETAIL_OFF, atf_producer_event_detail(w, ATF_EVENT_CALL, 2, 20, 3, payload, sizeof payload));
        CHECK_RESULT(ATF_E_DETAIL_OFF, atf_producer_event_detail(w, ATF_EVENT_RETURN, 1, 30, 4, payload, sizeof payload));
        CHECK_EQ(1, w->depth);
        CHECK_EQ(0, w->detail_count);
        CHECK_EQ(0, w->detail_dropped);
        CHECK_EQ(0, w->dropped);
        CHECK_RESULT(ATF_OK, atf_producer_return(w, 1, 40));
        atf_session_detach(s);
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count == 1) {
        const atf_session_thread *t = &r.threads[0];
        CHECK_EQ(2, t->events_written);
        CHECK_EQ(2, t->reader.index.event_count);
        CHECK_EQ(0, t->detail_written);
        CHECK_EQ(0, t->detail_dropped);
        CHECK_EQ(0, t->events_dropped);
        CHECK(!t->manifest_has_detail);
    }
    atf_session_reader_close(&r);
    rm_rf(dir);
    /* a bare writer: without detail memory, and with it but mode OFF */
    CHECK_EQ(0, posix_memalign(&imem, 64, isz));
    CHECK_EQ(0, posix_memalign(&dmem, 64, dsz));
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 1, 1));
    CHECK_RESULT(ATF_OK, atf_producer_init(&bare, imem, isz, NULL, 0, ATF_DETAIL_ALWAYS));
    CHECK_RESULT(ATF_E_DETAIL_OFF, atf_producer_event_detail(&bare, ATF_EVENT_CALL, 1, 1, 3, payload, 8));
    CHECK_EQ(0, bare.index.pos);
    CHECK_EQ(0, bare.depth);
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 1, 1));
    CHECK_RESULT(ATF_OK, atf_producer_init(&bare, imem, isz, dmem, dsz, ATF_DETAIL_OFF));
    CHECK_RESULT(ATF_E_DETAIL_OFF, atf_producer_event_detail(&bare, ATF_EVENT_CALL, 1, 1, 3, payload, 8));
    CHECK_EQ(0, bare.index.pos);
    CHECK_EQ(0, bare.detail.pos);
    CHECK_RESULT(ATF_OK, atf_producer_init(&bare, imem, isz, dmem, dsz, ATF_DETAIL_ALWAYS));
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&bare, ATF_EVENT_CALL, 1, 1, 3, payload, 8));
    CHECK_EQ(1, bare.index.pos);
    CHECK_EQ(1, bare.detail_count);
    CHECK(atf_result_str(ATF_E_DETAIL_OFF) != atf_result_str(ATF_E_STATE));
    ring_mem_free(imem);
    ring_mem_free(dmem);
}

/* An empty session, fsync options, nested root: valid files and manifest. */
static void test_empty_and_fsync(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    char root[400], dir[1100], path[1200], *m;
    atf_thread_reader tr;
    uint64_t i;
    memset(&c, 0, sizeof c);
    c.fsync_mode = ATF_FSYNC_CLOSE;
    c.fsync_every_bytes = 4096;
    c.detail_mode = ATF_DETAIL_ALWAYS;
    snprintf(root, sizeof root, "%s/nested/deeper", root_dir());
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK(strstr(dir, "/session_") != NULL);
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    for (i = 0; i < 1000; i++) atf_producer_event_detail(w, 1 + (i & 1), i, i, 3, &i, sizeof i);
    atf_session_detach(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(path, sizeof path, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, path, NULL));
    CHECK_EQ(1000, tr.index.event_count);
    CHECK_EQ(1000, tr.detail.event_count);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    atf_thread_reader_close(&tr);
    CHECK(!path_exists(strcat(path, "/index.atf.tmp")));
    /* nothing recorded at all */
    memset(&c, 0, sizeof c);
    c.session_name = "empty";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    m = read_text(path);
    CHECK(m && json_valid(m));
    CHECK(m && strstr(m, "\"threads\":[]") != NULL);
    CHECK(m && strstr(m, "\"time_start_ns\":0,\"time_end_ns\":0") != NULL);
    free(m);
    snprintf(path, sizeof path, "%s/manifest.json.tmp", dir);
    CHECK(!path_exists(path));
    {   /* the session reader opens it on its manifest alone */
        atf_session_reader r;
        atf_merge mg;
        atf_merge_item it;
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
        CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
        CHECK_EQ(0, r.thread_count);
        CHECK_RESULT(ATF_OK, r.error.code);
        CHECK(strcmp(r.state, "closed") == 0);
        CHECK_EQ((uint64_t)getpid(), r.pid);
        CHECK_RESULT(ATF_OK, atf_merge_init(&mg, &r, NULL));
        CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&mg, &it));
        atf_merge_deinit(&mg);
        atf_session_reader_close(&r);
    }
}

/* ---- rings in caller memory ---------------------------------------------------------- */

typedef struct shm_prod { void *imem, *dmem; size_t isz, dsz; uint64_t n; uint8_t *has; atf_result rc; } shm_prod;

static void *shm_prod_main(void *arg) {
    shm_prod *x = (shm_prod *)arg;
    atf_producer w;
    gen_state g = {0};
    uint64_t i;
    x->rc = atf_producer_init(&w, x->imem, x->isz, x->dmem, x->dsz, ATF_DETAIL_WINDOWED);
    if (x->rc != ATF_OK) return NULL;
    for (i = 0; i < x->n; i++) {
        uint64_t before = w.detail_dropped;
        gen_state g0 = g;
        uint32_t d0 = w.depth;
        while (gen_push_detail(&w, 9, i, &g) == ATF_E_FULL) {
            g = g0; /* the retry pushes the same event from the same depth */
            w.depth = d0;
            sched_yield();
        }
        if (w.detail_dropped == before) bits_set(x->has, i);
    }
    atf_producer_close(&w);
    return NULL;
}

/* A producer binding its own writer to caller rings (as a child process would through
 * shared memory), windowed detail, while the session itself records no detail. */
static void test_attach_rings_in_process(void) {
    atf_session *s = NULL;
    atf_session_config c;
    shm_prod x;
    pthread_t t;
    uint32_t slot = 99;
    char dir[1100], td[1200];
    window_ctx wc;
    uint64_t trig[2];
    memset(&x, 0, sizeof x);
    x.n = 50000;
    x.isz = atf_ring_memory_size(ATF_RING_INDEX, 4096);
    x.dsz = atf_ring_memory_size(ATF_RING_DETAIL, 1u << 20);
    CHECK_EQ(0, posix_memalign(&x.imem, 64, x.isz));
    CHECK_EQ(0, posix_memalign(&x.dmem, 64, x.dsz));
    x.has = bits_new(x.n);
    CHECK_RESULT(ATF_OK, atf_ring_init(x.imem, x.isz, ATF_RING_INDEX, 4096, 2, 4242));
    CHECK_RESULT(ATF_OK, atf_ring_init(x.dmem, x.dsz, ATF_RING_DETAIL, 1u << 20, 2, 4242));
    memset(&c, 0, sizeof c);
    c.layout = ATF_LAYOUT_2;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.pre_roll_ns = 1000;
    c.post_roll_ns = 1000;
    c.session_name = "rings";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    trig[0] = gen_ts(9, 20000);
    trig[1] = gen_ts(9, 45000);
    atf_session_trigger(s, trig[0]);
    atf_session_trigger(s, trig[1]);
    CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, x.imem, x.isz, x.dmem, x.dsz, "ring \"child\"", &slot));
    CHECK_EQ(0, slot);
    CHECK_EQ(0, pthread_create(&t, NULL, shm_prod_main, &x));
    while (!atf__load_acquire_u64(&((atf_ring_header *)x.imem)->closed)) atf_session_pump(s);
    pthread_join(t, NULL);
    CHECK_RESULT(ATF_OK, x.rc);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    wc.k = 9;
    wc.t = trig;
    wc.nt = 2;
    wc.pre = 1000;
    wc.post = 1000;
    wc.has_detail = x.has;
    snprintf(td, sizeof td, "%s/thread_0", dir);
    verify_detail(td, 9, x.n, NULL, expect_in_window, &wc, 2);
    ring_mem_free(x.imem);
    ring_mem_free(x.dmem);
    free(x.has);
    rm_rf(dir);
}

static void test_attach_rings_refusals(void) {
    atf_session *s = NULL;
    atf_session_config c;
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64), dsz = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    void *imem = NULL, *dmem = NULL;
    char dir[1100];
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "refuse";
    CHECK_EQ(0, posix_memalign(&imem, 64, isz));
    CHECK_EQ(0, posix_memalign(&dmem, 64, dsz));
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    memset(imem, 0, isz);
    CHECK_RESULT(ATF_E_ARG, atf_session_attach_rings(s, NULL, isz, NULL, 0, NULL, NULL));
    CHECK_RESULT(ATF_E_MAGIC, atf_session_attach_rings(s, imem, isz, NULL, 0, NULL, NULL));
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 1, 1));
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 2, 1));
    CHECK_RESULT(ATF_E_ARG, atf_session_attach_rings(s, imem, isz, dmem, dsz, NULL, NULL)); /* layouts */
    CHECK_RESULT(ATF_E_ARG, atf_session_attach_rings(s, dmem, dsz, NULL, 0, NULL, NULL));   /* kind */
    ((atf_ring_header *)imem)->head = ((atf_ring_header *)imem)->tail = 5; /* consumed before */
    CHECK_RESULT(ATF_E_STATE, atf_session_attach_rings(s, imem, isz, NULL, 0, NULL, NULL));
    CHECK_EQ(0, atf_session_thread_count(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    ring_mem_free(imem);
    ring_mem_free(dmem);
    rm_rf(dir);
}

/* ---- CRC arithmetic behind the in-place link patches --------------------------------- */

static void test_crc_patch_arithmetic(void) {
    uint8_t buf[1000], old[8], now[8], delta[8];
    uint32_t crc, fixed;
    size_t i, at, n;
    for (i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 7 + 3);
    /* shifting the raw register over zeros equals running the CRC over zeros */
    for (n = 0; n < 300; n += 37) {
        uint8_t zeros[300] = {0};
        uint32_t raw = ~atf_crc32c_update(0xFFFFFFFFu, buf, 17); /* some register value */
        CHECK_EQ(~atf_crc32c_update(~raw, zeros, n), atf__crc32c_shift(raw, n));
    }
    CHECK_EQ(0, atf__crc32c_shift(0, 12345));
    /* a patch anywhere, of 4 or 8 bytes: the corrected CRC equals the CRC of the result */
    for (at = 0; at + 8 <= sizeof buf; at += 61) {
        for (n = 4; n <= 8; n += 4) {
            crc = atf_crc32c(buf, sizeof buf);
            memcpy(old, buf + at, n);
            for (i = 0; i < n; i++) now[i] = (uint8_t)(old[i] ^ (0x5A + i));
            for (i = 0; i < n; i++) delta[i] = (uint8_t)(old[i] ^ now[i]);
            fixed = crc ^ atf__crc32c_shift(~atf_crc32c_update(0xFFFFFFFFu, delta, n), sizeof buf - at - n);
            memcpy(buf + at, now, n);
            CHECK_EQ(atf_crc32c(buf, sizeof buf), fixed);
        }
    }
}

/* The trigger list: sorted, disjoint, merged when windows overlap or touch, never
 * forgetting a window, and past 4096 windows merging the two closest. */
static void test_trigger_windows(void) {
    enum { CAP = ATF__MAX_WINDOWS + 1, N = 6000 };
    atf__window *w = (atf__window *)malloc(CAP * sizeof *w);
    static uint64_t lo[N], hi[N];
    size_t count = 0, i, j;
    uint64_t x = 88172645463325252ull;
    if (!w) return;
    for (i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        lo[i] = (i < 400 ? x % 100000 : x % 100000000000ull); /* dense first, then sparse */
        hi[i] = lo[i] + x % 300;
        atf__windows_add(w, &count, lo[i], hi[i]);
        CHECK(count <= ATF__MAX_WINDOWS);
        if (i % 97 == 0 || i == N - 1) {
            for (j = 0; j < count; j++) {
                CHECK(w[j].lo <= w[j].hi);
                if (j) CHECK(w[j - 1].hi + 1 < w[j].lo); /* disjoint, not touching */
            }
            for (j = 0; j <= i; j++) { /* every trigger is still covered at both ends */
                CHECK(atf__in_windows(w, count, lo[j]));
                CHECK(atf__in_windows(w, count, hi[j]));
            }
            if (harness__failures_in_test) break;
        }
    }
    CHECK_EQ(ATF__MAX_WINDOWS, count);
    /* exact merging of a few, and lookups between and around them */
    count = 0;
    atf__windows_add(w, &count, 100, 200);
    atf__windows_add(w, &count, 300, 400);
    atf__windows_add(w, &count, 201, 250);  /* touches the first */
    atf__windows_add(w, &count, 0, 10);
    atf__windows_add(w, &count, 390, 500);  /* overlaps the third */
    atf__windows_add(w, &count, UINT64_MAX - 5, UINT64_MAX);
    CHECK_EQ(4, count);
    CHECK_EQ(0, w[0].lo);
    CHECK_EQ(10, w[0].hi);
    CHECK_EQ(100, w[1].lo);
    CHECK_EQ(250, w[1].hi);
    CHECK_EQ(300, w[2].lo);
    CHECK_EQ(500, w[2].hi);
    CHECK(!atf__in_windows(w, count, 11));
    CHECK(atf__in_windows(w, count, 250));
    CHECK(!atf__in_windows(w, count, 251));
    CHECK(atf__in_windows(w, count, UINT64_MAX));
    atf__windows_add(w, &count, 11, 299);   /* bridges the first three */
    CHECK_EQ(2, count);
    CHECK_EQ(0, w[0].lo);
    CHECK_EQ(500, w[0].hi);
    CHECK(!atf__in_windows(NULL, 0, 5));
    free(w);
}

#if defined(_WIN32)
#  include <direct.h>
#  define SESSION_MKDIR(path) _mkdir(path)
#else
#  include <sys/stat.h>
#  define SESSION_MKDIR(path) mkdir(path, 0755)
#endif

/* The bytes of text after its last non-space character. */
static size_t trailing_space(const char *text) {
    size_t n = strlen(text), k = n;
    while (k && (text[k - 1] == ' ' || text[k - 1] == '\n')) k--;
    return n - k;
}

/* While recording, manifest.json keeps room after its text (spaces, then a newline) for a
 * full disk: when no manifest.json.tmp can be written (here a directory of that name is in
 * the way), the next manifest goes over the old file in place, the close's too, and the
 * session sees no error. Without that way either, the error is the session's, and its
 * close leaves the manifest "recording". A clean close writes the text alone. */
static void test_manifest_room(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_session_reader r;
    char dir[1100], path[1200], tmp[1200];
    char *m;
    uint64_t room;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "room";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    snprintf(tmp, sizeof tmp, "%s/manifest.json.tmp", dir);
    m = read_text(path);
    room = file_size(path);
    CHECK(m && json_valid(m));
    CHECK(m && trailing_space(m) >= 16384);
    CHECK(m && room == strlen(m) && m[room - 1] == '\n');
    free(m);

    CHECK_EQ(0, SESSION_MKDIR(tmp));
    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(s, "prog --in-place"));
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_EQ(room, file_size(path));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK(strcmp(r.state, "recording") == 0);
    CHECK(r.cmdline && strcmp(r.cmdline, "prog --in-place") == 0);
    atf_session_reader_close(&r);
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 7, "named_at_close"));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_EQ(room, file_size(path));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK(strcmp(r.state, "closed") == 0);
    CHECK(atf_session_reader_symbol(&r, 7) && strcmp(atf_session_reader_symbol(&r, 7), "named_at_close") == 0);
    CHECK(r.recording_error == NULL);
    atf_session_reader_close(&r);
    rm_rf(tmp);

    /* no way at all (no manifest.json to write over): an error, and a close after an
     * error leaves the state "recording", as a crash would, for recovery to complete */
    c.session_name = "room_failed";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    snprintf(tmp, sizeof tmp, "%s/manifest.json.tmp", dir);
    CHECK_EQ(0, remove(path));
    CHECK_EQ(0, SESSION_MKDIR(tmp));
    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(s, "prog --failed"));
    CHECK_RESULT(ATF_E_IO, atf_session_pump(s));
    rm_rf(tmp);
    CHECK_RESULT(ATF_E_IO, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK(strcmp(r.state, "recording") == 0);
    CHECK(r.recording_error != NULL);
    CHECK(r.cmdline && strcmp(r.cmdline, "prog --failed") == 0);
    atf_session_reader_close(&r);

    /* a clean close: the text alone, ending with its newline */
    c.session_name = "room_clean";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(path, sizeof path, "%s/manifest.json", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    m = read_text(path);
    CHECK(m && json_valid(m) && trailing_space(m) == 1);
    free(m);
}

/* A session's own index ring is faulted in ahead of its producer (atf__slot_populate):
 * the slots the attach faulted in are resident and no more while the thread records
 * little; pushes into them, then into those a pump faulted in ahead of the head, take no
 * page fault in the producing thread (its minor faults; not under a sanitizer, whose
 * shadow memory faults in as the ring is written). Each loop writes 4 MiB or more:
 * faulted in at the first store, about a thousand faults (4 KiB pages). Linux only;
 * where the system says it populates and does not (an emulator), nothing is checked. */
#if defined(__linux__)
#  include <sys/mman.h>
#  include <sys/resource.h>
#  include <unistd.h>

/* How many of the whole pages within the n bytes from p are resident, of *pages. */
static size_t resident_pages(const void *p, size_t n, size_t *pages) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), i, count, resident = 0;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
    unsigned char *v;
    *pages = 0;
    if (hi <= lo) return 0;
    count = (hi - lo) / page;
    v = (unsigned char *)malloc(count);
    if (v && mincore((void *)lo, hi - lo, v) == 0) {
        *pages = count;
        for (i = 0; i < count; i++) resident += v[i] & 1;
    }
    free(v);
    return resident;
}

static int all_resident(const void *p, size_t n) {
    size_t pages, resident = resident_pages(p, n, &pages);
    return pages > 0 && resident == pages;
}

/* Whether atf__mem_populate really faults memory in here. */
static int populate_works(void) {
    size_t n = (size_t)1 << 20;
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int works;
    if (m == MAP_FAILED) return 0;
    works = atf__mem_populate(m, n) == 0 && all_resident(m, n);
    munmap(m, n);
    return works;
}

static uint64_t thread_minor_faults(void) {
    struct rusage u;
    return getrusage(RUSAGE_THREAD, &u) == 0 ? (uint64_t)u.ru_minflt : 0;
}

static uint64_t push_counting_faults(atf_producer *w, uint64_t n) {
    uint64_t i, before = thread_minor_faults();
    for (i = 0; i < n; i++) atf_producer_push(w, ATF_EVENT_CALL, 1, i, 0);
    return thread_minor_faults() - before;
}

static void test_ring_faulted_in_ahead(void) {
    const size_t first = ATF__POPULATE_FIRST * ATF_INDEX_EVENT_SIZE, two_mib = (size_t)2 << 20;
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    size_t pages;
    uint64_t faults;
    if (!populate_works()) return;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.index_ring_events = (uint64_t)1 << 20;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    if (w) {
        CHECK(all_resident(w->index.data, first));
        push_counting_faults(w, 16); /* the loop's own code and stack, faulted in once */
        CHECK_RESULT(ATF_OK, atf_session_pump(s));
        /* a thread that records little: nothing past the first slots (a huge page at
         * their end aside) */
        CHECK_EQ(0, resident_pages(w->index.data + first + two_mib, 2 * two_mib, &pages));
        faults = push_counting_faults(w, ATF__POPULATE_FIRST - 16);
        CHECK_RESULT(ATF_OK, atf_session_pump(s));
        CHECK(all_resident(w->index.data + first, ATF__POPULATE_AHEAD * ATF_INDEX_EVENT_SIZE));
        faults += push_counting_faults(w, ATF__POPULATE_AHEAD / 2);
        CHECK_RESULT(ATF_OK, atf_session_pump(s));
        CHECK_EQ(ATF__POPULATE_FIRST + ATF__POPULATE_AHEAD / 2, w->index.pos);
#if !defined(REC_SANITIZED)
        CHECK(faults < 16);
#else
        (void)faults;
#endif
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
}
#else
static void test_ring_faulted_in_ahead(void) {}
#endif

static void test_cleanup(void) { rm_rf(root_dir()); }

static const test_case tests[] = {
    {"crc_patch_arithmetic", test_crc_patch_arithmetic},
    {"cpus_follow_affinity", test_cpus_follow_affinity},
    {"crowded_rings", test_crowded_rings},
    {"trigger_windows", test_trigger_windows},
    {"json_validator_rejects", test_json_validator_rejects},
    {"config_validation", test_config_validation},
    {"open_error_detail", test_open_error_detail},
    {"many_threads_layout1", test_many_threads_layout1},
    {"many_threads_layout2", test_many_threads_layout2},
    {"manual_drain", test_manual_drain},
    {"detail_always_layout1", test_detail_always_layout1},
    {"detail_always_layout2", test_detail_always_layout2},
    {"windowed_known_triggers_manual_l1", test_windowed_known_triggers_manual_l1},
    {"windowed_known_triggers_manual_l2", test_windowed_known_triggers_manual_l2},
    {"windowed_known_triggers_thread", test_windowed_known_triggers_thread},
    {"windowed_unbounded_pre_roll", test_windowed_unbounded_pre_roll},
    {"windowed_links_patched_on_disk_l1", test_windowed_links_patched_on_disk_l1},
    {"windowed_links_patched_on_disk_l2", test_windowed_links_patched_on_disk_l2},
    {"windowed_realtime_triggers", test_windowed_realtime_triggers},
    {"manifest_escaping", test_manifest_escaping},
    {"manifest_read_back", test_manifest_read_back},
    {"manifest_metadata", test_manifest_metadata},
    {"manifest_follows_recording", test_manifest_follows_recording},
    {"replace_while_read", test_replace_while_read},
    {"manifest_room", test_manifest_room},
    {"anchor_value_at", test_anchor_value_at},
    {"thread_exit_releases", test_thread_exit_releases},
    {"thread_exit_after_close", test_thread_exit_after_close},
    {"two_sessions", test_two_sessions},
    {"attach_detach_and_limits", test_attach_detach_and_limits},
    {"empty_and_fsync", test_empty_and_fsync},
    {"detail_off_refused", test_detail_off_refused},
    {"attach_rings_in_process", test_attach_rings_in_process},
    {"attach_rings_refusals", test_attach_rings_refusals},
    {"ring_faulted_in_ahead", test_ring_faulted_in_ahead},
    {"cleanup", test_cleanup},
};

HARNESS_MAIN("session", tests)
