/* test_stress.c - many producers, few cores, small rings: for every thread, produced =
 * persisted + dropped exactly, and the persisted events keep the order they were produced in.
 *
 * Each producer thread attaches to one session (drain thread on, 1024-slot index rings,
 * the default overflow policy ATF_OVERFLOW_BLOCK), waits for the others, then pushes
 * STRESS_EVENTS call/return events whose function_id carries its own number and the
 * event's sequence number, yielding the CPU every STRESS_YIELD events (as a traced thread
 * runs code between events); in the detail variant every event numbered 0 or 3 modulo 8
 * also carries a payload naming it, through a small detail ring. A producer that finds
 * its ring full drains it itself. When done the producer reads its writer's counts.
 * After close every thread is read back:
 *   - its sequence numbers strictly increase (order kept, nothing duplicated or invented),
 *     kinds, depths and timestamps are what was pushed;
 *   - persisted + the writer's dropped = produced, and the manifest reports the same
 *     written and dropped counts (and no event lost to I/O);
 *   - BLOCK: nothing dropped (persisted = produced, every detail record persisted too),
 *     no gaps.atf, no timeout;
 *   - every hole in the sequence numbers is a gap of gaps.atf at that index position with
 *     exactly the events (and detail records) missing there, one at the end included;
 *   - detail: every link is exact both ways and names the right payload, and
 *     detail_written + detail_dropped = the detail events among the persisted ones.
 * No timing is asserted: the machine's speed only moves how often a producer drains its
 * own ring (or, with DROP, how many events are dropped).
 * A third case pushes from one thread into many writers on rings in caller memory with
 * ATF_OVERFLOW_DROP and pumps by hand, so that events are dropped in a pattern that
 * depends on nothing but the code (the same checks; it is the only case with
 * ATF_NO_THREADS).
 *
 * Environment: STRESS_THREADS (default 8), STRESS_EVENTS (default 50000), STRESS_RING
 * (index ring slots per thread, default 1024), STRESS_YIELD (default 256; 0 = never),
 * ATF_TEST_TMP or BUILD (scratch, default build). `make stress` runs 64 threads x 1000000
 * events. */
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#include <time.h>
#if !defined(ATF_NO_THREADS)
#  include <pthread.h>
#  include <sched.h>
#endif

#define STRESS_MAX_THREADS 1024
#define SEQ_BITS 40
#define SEQ_MASK ((((uint64_t)1) << SEQ_BITS) - 1u)
#define DETAIL_RING_BYTES 4096u


static uint64_t env_u64(const char *name, uint64_t fallback, uint64_t lo, uint64_t hi) {
    const char *v = getenv(name);
    char *end;
    unsigned long long x;
    if (!v || !*v) return fallback;
    x = strtoull(v, &end, 10);
    if (*end || x < lo || x > hi) {
        printf("  %s=%s is not a number in [%llu, %llu]: using %llu\n", name, v,
               (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)fallback);
        return fallback;
    }
    return (uint64_t)x;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whether event `seq` carries a detail payload (in the detail variants). */
static int has_detail(uint64_t seq) { return seq % 8 == 0 || seq % 8 == 3; }

/* ---- one producer ------------------------------------------------------------------- */

typedef struct producer {
    uint32_t index;              /* its number, in the function ids */
    uint32_t slot;               /* the session's slot for it */
    uint64_t events;
    int detail;                  /* push detail with some events */
    uint64_t yield_every;        /* sched_yield() after every so many events (0: never) */
    int may_drop;                /* ATF_OVERFLOW_DROP; else BLOCK: nothing may be lost */
    uint32_t policy;             /* the writer's overflow policy */
    uint64_t dropped;            /* the writer's counts once done */
    uint64_t detail_dropped;
    uint64_t timeouts;
    atf_result attached;
} producer;

/* Pushes event `seq` of producer p. */
static void push_event(atf_producer *w, const producer *p, uint64_t seq) {
    uint64_t fid = ((uint64_t)(p->index + 1) << SEQ_BITS) | seq, ts = atf_now_ns();
    if (p->detail && has_detail(seq)) {
        uint8_t payload[16];
        atf__store_le64(payload, seq);
        atf__store_le64(payload + 8, fid);
        atf_producer_event_detail(w, seq & 1u ? ATF_EVENT_RETURN : ATF_EVENT_CALL, fid, ts,
                                seq & 1u ? ATF_DETAIL_FUNCTION_RETURN : ATF_DETAIL_FUNCTION_CALL,
                                payload, sizeof payload);
    } else if (seq & 1u) {
        atf_producer_return(w, fid, ts);
    } else {
        atf_producer_call(w, fid, ts);
    }
}

/* ---- read-back ---------------------------------------------------------------------- */

typedef struct stress_totals {
    uint64_t produced, persisted, dropped, detail_written, detail_dropped, gaps, waits;
} stress_totals;

/* Checks the gaps of a thread against the holes in its sequence numbers: `seq` is the
 * sequence number of index event j (p->events and j = the event count at the end), `next`
 * the one expected after the previous event. A hole must be exactly one gap at j (its
 * events, the detail events among them, reason dropped), and no gap without a hole (the
 * caller compares the number of holes with the number of gaps). Returns 0 after the first
 * mismatch (printed). */
static int check_hole(const atf_thread_reader *tr, const producer *p, uint64_t j, uint64_t seq,
                      uint64_t next) {
    const atf_gap *g = atf_thread_reader_gap_before(tr, j);
    uint64_t hole = seq - next, detail = 0, s;
    if (p->detail)
        for (s = next; s < seq; s++) detail += (uint64_t)has_detail(s);
    if (!hole && !g) return 1;
    if (hole && g && g->index_lost == hole && g->detail_lost == detail && g->reason == ATF_GAP_DROPPED)
        return 1;
    printf("  producer %u: index event %llu (seq %llu after %llu): %llu events missing "
           "(%llu with detail), gap %s: %llu lost, %llu detail, reason %s\n", p->index,
           (unsigned long long)j, (unsigned long long)seq, (unsigned long long)next,
           (unsigned long long)hole, (unsigned long long)detail, g ? "found" : "none",
           g ? (unsigned long long)g->index_lost : 0ull, g ? (unsigned long long)g->detail_lost : 0ull,
           g ? atf_gap_reason_str(g->reason) : "-");
    CHECK(0);
    return 0;
}

/* Checks thread_<p->slot> of session `dir` against what p produced (layout `layout`). */
static void check_producer(const char *dir, atf_session_reader *session, const producer *p,
                           int layout, stress_totals *tt) {
    char tdir[1200];
    atf_thread_reader tr;
    atf_result rc;
    const atf_session_thread *st;
    uint64_t j, n, prev_seq = 0, prev_ts = 0, attempts = 0, linked = 0, holes = 0;
    uint64_t written = 0, dropped = 0, dwritten = 0, ddropped = 0, lost = 1;
    uint64_t gaps = 1, waits = 0, timeouts = 1;
    int holes_ok = 1;
    snprintf(tdir, sizeof tdir, "%s/thread_%u", dir, p->slot);
    rc = atf_thread_reader_open(&tr, tdir, NULL);
    CHECK_RESULT(ATF_OK, rc);
    if (rc != ATF_OK) return;
    n = tr.index.event_count;
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&tr.index));
    CHECK_EQ(layout, tr.index.layout);
    for (j = 0; j < n; j++) {
        atf_index_event ev;
        uint64_t seq;
        atf_index_reader_get(&tr.index, j, &ev);
        seq = ev.function_id & SEQ_MASK;
        if ((ev.function_id >> SEQ_BITS) != p->index + 1u || (j > 0 && seq <= prev_seq) ||
            seq >= p->events || ev.timestamp_ns < prev_ts ||
            ev.kind != (seq & 1u ? (uint32_t)ATF_EVENT_RETURN : (uint32_t)ATF_EVENT_CALL) ||
            (layout == ATF_LAYOUT_1 && (ev.call_depth != 0 || ev.thread_id != tr.index.header.thread_id))) {
            printf("  thread_%u (producer %u): event %llu: fid 0x%llx kind %u depth %u ts %llu "
                   "after seq %llu ts %llu: out of order, foreign or not as pushed\n", p->slot,
                   p->index, (unsigned long long)j, (unsigned long long)ev.function_id, ev.kind,
                   ev.call_depth, (unsigned long long)ev.timestamp_ns,
                   (unsigned long long)prev_seq, (unsigned long long)prev_ts);
            CHECK(0);
            break;
        }
        /* the events missing before this one: one gap right here */
        if (holes_ok) holes_ok = check_hole(&tr, p, j, seq, j > 0 ? prev_seq + 1 : 0);
        holes += seq != (j > 0 ? prev_seq + 1 : 0);
        prev_seq = seq;
        prev_ts = ev.timestamp_ns;
        if (p->detail && has_detail(seq)) attempts++;
        if (ev.detail_seq != ATF_NO_DETAIL) {
            atf_detail_event de;
            linked++;
            CHECK(p->detail && has_detail(seq));
            CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(&tr, j, &de));
            CHECK_EQ(16, de.payload_len);
            if (de.payload_len == 16) {
                CHECK_EQ(seq, atf__load_le64(de.payload));
                CHECK_EQ(ev.function_id, atf__load_le64(de.payload + 8));
            }
            CHECK_EQ(j, de.header.index_seq);
        }
        if (harness__failures_in_test) break;
    }
    if (tr.has_detail) {
        CHECK_EQ(ATF_COUNT_FINALIZED, tr.detail.counted);
        CHECK_RESULT(ATF_OK, atf_detail_reader_verify_crc(&tr.detail));
        CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    }
    CHECK_EQ(linked, tr.has_detail ? tr.detail.event_count : 0);
    /* the events missing after the last one: the gap at the end */
    if (!harness__failures_in_test) {
        uint64_t next = n ? prev_seq + 1 : 0;
        if (holes_ok) check_hole(&tr, p, n, p->events, next);
        holes += p->events != next;
    }
    CHECK_EQ(holes, tr.gap_count);
    CHECK_EQ(p->dropped, tr.events_lost);
    /* the guarantee: every produced event is in the file or counted as dropped */
    CHECK_EQ(p->events, n + p->dropped);
    /* and with BLOCK nothing is dropped: no gap, no gaps.atf, no timeout */
    if (!p->may_drop) {
        CHECK_EQ(ATF_OVERFLOW_BLOCK, p->policy);
        CHECK_EQ(0, p->dropped);
        CHECK_EQ(p->events, n);
        CHECK_EQ(0, p->timeouts);
        CHECK_EQ(0, tr.gap_count);
        {
            char gpath[1300];
            snprintf(gpath, sizeof gpath, "%s/gaps.atf", tdir);
            CHECK(!path_exists(gpath));
        }
    }
    /* the manifest's figures, as the session reader reads them */
    st = atf_session_reader_thread(session, p->slot);
    CHECK(st != NULL && st->in_manifest && st->manifest_finalized); /* the session closed */
    if (st) {
        written = st->events_written;
        dropped = st->events_dropped;
        dwritten = st->detail_written;
        ddropped = st->detail_dropped;
        lost = st->events_lost_io;
        gaps = st->gaps;
        waits = st->waits;
        timeouts = st->timeouts;
    }
    CHECK_EQ(tr.gap_count, gaps);
    CHECK_EQ(p->timeouts, timeouts);
    if (!p->may_drop) CHECK_EQ(0, ddropped); /* BLOCK keeps detail ALWAYS whole too */
    CHECK_EQ(n, written);
    CHECK_EQ(p->dropped, dropped);
    CHECK_EQ(0, lost);
    CHECK_EQ(linked, dwritten);
    CHECK_EQ(p->detail_dropped, ddropped);
    /* a dropped index event takes its detail with it; a kept one has its detail or a count */
    CHECK_EQ(attempts, dwritten + ddropped);
    tt->produced += p->events;
    tt->persisted += n;
    tt->dropped += p->dropped;
    tt->detail_written += dwritten;
    tt->detail_dropped += ddropped;
    tt->gaps += gaps;
    tt->waits += waits;
    atf_thread_reader_close(&tr);
}

/* Reads back every producer of the closed session `dir` and prints the totals. */
static void check_session(const char *dir, const producer *ps, uint32_t count, int layout,
                          double wall, const char *what) {
    stress_totals tt;
    atf_session_reader r;
    atf_result rc;
    uint32_t k;
    memset(&tt, 0, sizeof tt);
    rc = atf_session_reader_open(&r, dir, NULL);
    CHECK_RESULT(ATF_OK, rc);
    if (rc != ATF_OK) return;
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    for (k = 0; k < count && !harness__failures_in_test; k++) check_producer(dir, &r, &ps[k], layout, &tt);
    atf_session_reader_close(&r);
    printf("  %s: %u writers x %llu events: produced %llu = persisted %llu + dropped %llu "
           "(%.1f%%) in %llu gaps; detail written %llu, dropped %llu; %llu waits (a full ring "
           "drained by its producer); %.2f s, %.1f M events/s\n", what, count,
           (unsigned long long)(count ? ps[0].events : 0), (unsigned long long)tt.produced,
           (unsigned long long)tt.persisted, (unsigned long long)tt.dropped,
           tt.produced ? 100.0 * (double)tt.dropped / (double)tt.produced : 0.0,
           (unsigned long long)tt.gaps, (unsigned long long)tt.detail_written,
           (unsigned long long)tt.detail_dropped, (unsigned long long)tt.waits, wall,
           wall > 0 ? (double)tt.produced / wall * 1e-6 : 0.0);
}

static void session_root(char *buf, size_t cap) {
    snprintf(buf, cap, "%s/stress_%d", scratch_base(), (int)getpid());
}

/* ---- threads, drain thread ----------------------------------------------------------- */
#if !defined(ATF_NO_THREADS)
typedef struct stress_run {
    atf_session *s;
    producer *ps;
    int ready, go;
} stress_run;

typedef struct producer_arg {
    stress_run *run;
    producer *p;
} producer_arg;

static void *producer_main(void *arg) {
    producer_arg *a = (producer_arg *)arg;
    producer *p = a->p;
    atf_producer *w = NULL;
    char name[32];
    uint64_t seq;
    snprintf(name, sizeof name, "stress-%u", p->index);
    p->attached = atf_session_attach(a->run->s, name, &w);
    if (w) p->slot = w->slot;
    __atomic_add_fetch(&a->run->ready, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&a->run->go, __ATOMIC_ACQUIRE)) sched_yield();
    if (p->attached != ATF_OK || !w) return NULL;
    for (seq = 0; seq < p->events; seq++) {
        push_event(w, p, seq);
        if (p->yield_every && seq % p->yield_every == p->yield_every - 1) sched_yield();
    }
    p->dropped = w->dropped;
    p->detail_dropped = w->detail_dropped;
    p->timeouts = w->timeouts;
    p->policy = w->overflow;
    atf_session_detach(a->run->s);
    return NULL;
}

static void run_threads(int layout, int detail, const char *what) {
    uint32_t count = (uint32_t)env_u64("STRESS_THREADS", 8, 1, STRESS_MAX_THREADS), k;
    uint64_t events = env_u64("STRESS_EVENTS", 50000, 1, SEQ_MASK);
    uint64_t ring = env_u64("STRESS_RING", 1024, 64, (uint64_t)1 << 30);
    uint64_t yield_every = env_u64("STRESS_YIELD", 256, 0, UINT64_MAX);
    producer *ps = (producer *)calloc(count, sizeof *ps);
    producer_arg *args = (producer_arg *)calloc(count, sizeof *args);
    pthread_t *threads = (pthread_t *)calloc(count, sizeof *threads);
    atf_session_config cfg;
    stress_run run;
    char root[600], dir[1024];
    uint32_t started = 0;
    double t0, wall;
    CHECK(ps && args && threads);
    if (!ps || !args || !threads) goto done;
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = (uint32_t)layout;
    cfg.index_ring_events = ring;
    cfg.detail_mode = detail ? ATF_DETAIL_ALWAYS : ATF_DETAIL_OFF;
    cfg.detail_ring_bytes = DETAIL_RING_BYTES;
    cfg.max_threads = count; /* overflow: 0, the default policy (BLOCK) */
    memset(&run, 0, sizeof run);
    run.ps = ps;
    session_root(root, sizeof root);
    rm_rf(root);
    CHECK_RESULT(ATF_OK, atf_session_open(&run.s, root, &cfg));
    if (!run.s) goto done;
    snprintf(dir, sizeof dir, "%s", atf_session_path(run.s));
    for (k = 0; k < count; k++) {
        ps[k].index = k;
        ps[k].events = events;
        ps[k].detail = detail;
        ps[k].yield_every = yield_every;
        args[k].run = &run;
        args[k].p = &ps[k];
        if (pthread_create(&threads[k], NULL, producer_main, &args[k]) != 0) break;
        started++;
    }
    CHECK_EQ(count, started);
    while (__atomic_load_n(&run.ready, __ATOMIC_ACQUIRE) < (int)started) sched_yield();
    t0 = seconds();
    __atomic_store_n(&run.go, 1, __ATOMIC_RELEASE);
    for (k = 0; k < started; k++) pthread_join(threads[k], NULL);
    CHECK_RESULT(ATF_OK, atf_session_close(run.s));
    wall = seconds() - t0;
    for (k = 0; k < started; k++) CHECK_RESULT(ATF_OK, ps[k].attached);
    if (!harness__failures_in_test) check_session(dir, ps, started, layout, wall, what);
    if (!harness__failures_in_test) rm_rf(root);
    else printf("  files kept in %s\n", dir);
done:
    free(ps);
    free(args);
    free(threads);
}

static void test_threads_layout1(void) { run_threads(ATF_LAYOUT_1, 0, "layout 1, no detail"); }
static void test_threads_layout2_detail(void) {
    run_threads(ATF_LAYOUT_2, 1, "layout 2, detail always");
}
#endif

/* ---- one thread, rings in caller memory, manual pump ------------------------------------ */

/* Memory aligned to 64 bytes for a ring: the block to free in *raw. */
static void *alloc_ring(size_t size, void **raw) {
    uint8_t *p = (uint8_t *)malloc(size + 64);
    *raw = p;
    if (!p) return NULL;
    return p + (64 - ((uintptr_t)p & 63u));
}

/* 16 writers fed in bursts of uneven length, a pump every few bursts: the rings overflow
 * in a pattern that depends on nothing but the code. */
static void test_one_thread_manual_pump(void) {
    enum { WRITERS = 16 };
    uint64_t events = env_u64("STRESS_EVENTS", 50000, 1, SEQ_MASK) / 4 + 1, rng = 12345;
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 256);
    size_t dsz = atf_ring_memory_size(ATF_RING_DETAIL, DETAIL_RING_BYTES);
    void *iraw[WRITERS], *draw[WRITERS];
    atf_producer w[WRITERS];
    producer ps[WRITERS];
    uint64_t next[WRITERS];
    atf_session *s = NULL;
    atf_session_config cfg;
    char root[600], dir[1024], name[32];
    uint32_t k, done = 0;
    double t0;
    memset(&cfg, 0, sizeof cfg);
    memset(ps, 0, sizeof ps);
    memset(iraw, 0, sizeof iraw);
    memset(draw, 0, sizeof draw);
    cfg.layout = ATF_LAYOUT_1;
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    session_root(root, sizeof root);
    rm_rf(root);
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &cfg));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    for (k = 0; k < WRITERS; k++) {
        void *imem = alloc_ring(isz, &iraw[k]), *dmem = alloc_ring(dsz, &draw[k]);
        int detail = k & 1;
        CHECK(imem && dmem);
        if (!imem || !dmem) goto done;
        CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 256, ATF_LAYOUT_1, 5000 + k));
        CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, DETAIL_RING_BYTES,
                                           ATF_LAYOUT_1, 5000 + k));
        snprintf(name, sizeof name, "pumped-%u", k);
        CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, imem, isz, detail ? dmem : NULL,
                                                      detail ? dsz : 0, name, &ps[k].slot));
        CHECK_RESULT(ATF_OK, atf_producer_init(&w[k], imem, isz, detail ? dmem : NULL,
                                             detail ? dsz : 0, ATF_DETAIL_ALWAYS));
        /* the consumer is this very thread: waiting for it could only time out */
        CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w[k], ATF_OVERFLOW_DROP, 0));
        ps[k].index = k;
        ps[k].events = events;
        ps[k].detail = detail;
        ps[k].may_drop = 1;
        next[k] = 0;
    }
    if (harness__failures_in_test) goto done;
    t0 = seconds();
    while (done < WRITERS) {
        for (k = 0; k < WRITERS; k++) {
            uint64_t burst = 1 + gen_hash(k, rng++) % 600, b;
            if (next[k] == events) continue;
            for (b = 0; b < burst && next[k] < events; b++) push_event(&w[k], &ps[k], next[k]++);
            if (next[k] == events) {
                ps[k].dropped = w[k].dropped;
                ps[k].detail_dropped = w[k].detail_dropped;
                ps[k].timeouts = w[k].timeouts;
                ps[k].policy = w[k].overflow;
                atf_producer_close(&w[k]);
                done++;
            }
        }
        if (rng % 3 == 0) CHECK_RESULT(ATF_OK, atf_session_pump(s));
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    s = NULL;
    check_session(dir, ps, WRITERS, ATF_LAYOUT_1, seconds() - t0, "one thread, 16 pumped writers");
    if (!harness__failures_in_test) rm_rf(root);
    else printf("  files kept in %s\n", dir);
done:
    if (s) atf_session_close(s);
    for (k = 0; k < WRITERS; k++) {
        free(iraw[k]);
        free(draw[k]);
    }
}

static const test_case tests[] = {
#if !defined(ATF_NO_THREADS)
    { "threads_layout1", test_threads_layout1 },
    { "threads_layout2_detail", test_threads_layout2_detail },
#endif
    { "one_thread_manual_pump", test_one_thread_manual_pump },
};

HARNESS_MAIN("stress", tests)
