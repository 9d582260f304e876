/* test_bounds.c - the bounds of a recording (atf_session_config max_bytes,
 * max_duration_ns, disk_reserve): a thread recorded past each bound keeps exactly the
 * events before the cut, read back identical and verified, and ends with one gap of reason
 * "stopped" that counts every event after it; the files stay within max_bytes; the stop's
 * reason and stamp reach atf_session_stopped, the thread's stats and the manifest; the
 * disk guard is on by default and off with ATF_DISK_RESERVE_OFF. And events left out by
 * choice (atf_producer_skipped), and the flight recorder (keep_last_bytes, keep_last_ns):
 * what a trigger and the close write are the most recent events, after a gap of reason
 * "discarded" that counts the others. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#include <pthread.h>
#include <sys/stat.h>

static char root[256];

/* One thread recording n events of generator thread 0 through a manual drain, pumped
 * every 1024 events; with `step`, stamped from the first push on `step` ns apart instead
 * of the generator's stamps; a detail payload on every third event when `detail`. */
typedef struct bounded_run {
    atf_session_config cfg;
    uint64_t n, step;
    int detail;
    uint64_t t0;                  /* the first stamp (taken after the open) */
    uint32_t stopped;             /* atf_session_stopped before the close */
    uint64_t stopped_at;
    atf_thread_stats st;          /* thread 0's, before the close */
    char session[1100], thread[1200];
} bounded_run;

static uint64_t run_ts(const bounded_run *b, uint64_t i) {
    return b->step ? b->t0 + i * b->step : gen_ts(0, i);
}

static atf_result run_push(atf_producer *w, const bounded_run *b, uint64_t i, gen_state *g) {
    uint32_t depth, kind = gen_kind(0, i, g, &depth);
    uint64_t ts = run_ts(b, i), fid = gen_fid(0, i);
    if (b->detail && i % 3 == 0) {
        uint8_t p[80];
        size_t len = gen_payload(0, i, p);
        return atf_producer_event_detail(w, kind, fid, ts,
                                         kind == ATF_EVENT_CALL ? ATF_DETAIL_FUNCTION_CALL
                                                                : ATF_DETAIL_FUNCTION_RETURN,
                                         p, len);
    }
    if (kind == ATF_EVENT_CALL) return atf_producer_call(w, fid, ts);
    if (kind == ATF_EVENT_RETURN) return atf_producer_return(w, fid, ts);
    return atf_producer_exception(w, fid, ts);
}

static void run_record(bounded_run *b) {
    atf_session *s = NULL;
    atf_producer *w = NULL;
    gen_state g = {0};
    uint64_t i;
    b->cfg.drain_mode = ATF_DRAIN_MANUAL;
    b->cfg.index_ring_events = 4096;
    if (b->detail) b->cfg.detail_mode = ATF_DETAIL_ALWAYS;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &b->cfg));
    if (!s) return;
    b->t0 = atf_now_ns();
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "bounded", &w));
    for (i = 0; w && i < b->n && !harness__failures_in_test; i++) {
        CHECK_RESULT(ATF_OK, run_push(w, b, i, &g));
        if ((i & 1023) == 1023) atf_session_pump(s);
    }
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    b->stopped = atf_session_stopped(s, &b->stopped_at);
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 0, &b->st));
    snprintf(b->session, sizeof b->session, "%s", atf_session_path(s));
    snprintf(b->thread, sizeof b->thread, "%s/thread_0", b->session);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
}

static uint64_t leaf_size(const char *dir, const char *leaf) {
    char path[1300];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The thread's files after a stop: the events before the cut, each as generated, then
 * one gap of reason "stopped" at the end that holds all the others. Returns the number
 * of events kept. */
static uint64_t check_cut(const bounded_run *b, uint32_t reason) {
    atf_thread_reader tr;
    atf_reader_options opt;
    atf_index_event ev;
    uint64_t kept, i;
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    CHECK_EQ(reason, b->stopped);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, b->thread, &opt));
    if (harness__failures_in_test) return 0;
    kept = tr.index.event_count;
    CHECK(kept > 0 && kept < b->n);
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(ATF_CRC_OK, tr.index.crc_state);
    if (b->step) {
        for (i = 0; i < kept && !harness__failures_in_test; i++) {
            CHECK_RESULT(ATF_OK, atf_index_reader_get(&tr.index, i, &ev));
            CHECK_EQ(run_ts(b, i), ev.timestamp_ns);
            CHECK_EQ(gen_fid(0, i), ev.function_id);
        }
    } else {
        int layout = tr.index.header.version == 2 ? ATF_LAYOUT_2 : ATF_LAYOUT_1;
        CHECK_EQ(kept, check_index_against(&tr, 0, b->n, NULL, layout));
    }
    /* the cut: everything before the stamp kept, nothing from it on */
    CHECK(run_ts(b, kept - 1) < b->stopped_at);
    CHECK(run_ts(b, kept) >= b->stopped_at);
    CHECK_EQ(b->n - kept, b->st.events_stopped);
    CHECK_EQ(kept, b->st.events_written);
    CHECK_EQ(1, tr.gap_count);
    if (tr.gap_count == 1) {
        CHECK_EQ(kept, tr.gaps[0].index_seq);
        CHECK_EQ(b->n - kept, tr.gaps[0].index_lost);
        CHECK_EQ(ATF_GAP_STOPPED, tr.gaps[0].reason);
        CHECK_EQ(run_ts(b, kept), tr.gaps[0].first_lost_ns);
    }
    if (tr.has_detail) CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    atf_thread_reader_close(&tr);
    return kept;
}

/* The manifest says which bound stopped the recording, where, and the thread's count. */
static void check_manifest(const bounded_run *b) {
    atf_session_reader r;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, b->session, NULL));
    if (harness__failures_in_test) return;
    CHECK(strcmp(r.stopped, atf_stop_reason_str(b->stopped)) == 0);
    CHECK_EQ(b->stopped_at, r.stopped_at_ns);
    CHECK_EQ(b->cfg.max_bytes, r.max_bytes);
    CHECK_EQ(b->cfg.max_duration_ns, r.max_duration_ns);
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count == 1) CHECK_EQ(b->st.events_stopped, r.threads[0].events_stopped);
    atf_session_reader_close(&r);
}

/* max_bytes: the event bytes on disk stay within it and come within a few records of it
 * (a thread alone has no slack to use: it stops writing at the cut). */
static void max_bytes_run(uint32_t layout, uint64_t max, uint64_t n) {
    bounded_run b;
    uint64_t bytes, kept;
    memset(&b, 0, sizeof b);
    b.cfg.layout = layout;
    b.cfg.max_bytes = max;
    b.cfg.disk_reserve = ATF_DISK_RESERVE_OFF;
    b.n = n;
    run_record(&b);
    if (harness__failures_in_test) return;
    kept = check_cut(&b, ATF_STOP_MAX_SIZE);
    check_manifest(&b);
    bytes = leaf_size(b.thread, "index.atf") - 2 * ATF_HEADER_SIZE;
    if (layout == ATF_LAYOUT_PACKED) /* lane header and block table: not event bytes */
        bytes -= ATF_PACKED_LANE_SIZE + 8 * (kept / ATF_PACKED_BLOCK_EVENTS + 1);
    CHECK(bytes <= max);
    CHECK(bytes + 2048 >= max);
}

static void test_max_bytes_layout1(void) { max_bytes_run(ATF_LAYOUT_1, 1u << 20, 200000); }
static void test_max_bytes_layout2(void) { max_bytes_run(ATF_LAYOUT_2, 1u << 20, 200000); }
static void test_max_bytes_packed(void) { max_bytes_run(ATF_LAYOUT_PACKED, 256u << 10, 400000); }

/* Detail records count too, and those whose index events are cut go with them. Detail
 * is drained first: the index events of the records granted may then use the slack. */
static void test_max_bytes_detail(void) {
    bounded_run b;
    memset(&b, 0, sizeof b);
    b.cfg.max_bytes = 2u << 20;
    b.cfg.disk_reserve = ATF_DISK_RESERVE_OFF;
    b.n = 200000;
    b.detail = 1;
    run_record(&b);
    if (harness__failures_in_test) return;
    check_cut(&b, ATF_STOP_MAX_SIZE);
    CHECK(leaf_size(b.thread, "index.atf") + leaf_size(b.thread, "detail.atf") <=
          b.cfg.max_bytes + b.cfg.max_bytes / 100 + (512u << 10) + 4 * ATF_HEADER_SIZE);
}

/* max_duration_ns: the cut is the first event's stamp plus the duration; events are kept
 * exactly up to it. */
static void test_max_duration(void) {
    bounded_run b;
    uint64_t kept;
    memset(&b, 0, sizeof b);
    b.cfg.max_duration_ns = 1000000000u;
    b.cfg.disk_reserve = ATF_DISK_RESERVE_OFF;
    b.n = 200000;
    b.step = 10000; /* 2 s of events */
    run_record(&b);
    if (harness__failures_in_test) return;
    kept = check_cut(&b, ATF_STOP_DURATION);
    CHECK_EQ(b.t0 + b.cfg.max_duration_ns, b.stopped_at);
    CHECK_EQ((b.stopped_at - b.t0 + b.step - 1) / b.step, kept);
    check_manifest(&b);
}

/* The disk guard: a reserve that leaves 1 MiB of the file system free to the trace, and
 * 128 MB of events. Other processes share the file system (a parallel build frees and
 * fills it), so only the stop and its order of magnitude are checked here; the exact
 * bound is checked on a private tmpfs (tests/bounds_checks.sh). */
static void test_disk_reserve(void) {
    bounded_run b;
    uint64_t avail = 0, size = 0;
    memset(&b, 0, sizeof b);
    CHECK_EQ(0, atf__fs_space(root, &avail, &size));
    if (avail < (256u << 20)) {
        printf("  (left out: %llu bytes free)\n", (unsigned long long)avail);
        return;
    }
    b.cfg.disk_reserve = avail - (1u << 20);
    b.n = 4000000;
    run_record(&b);
    if (harness__failures_in_test) return;
    check_cut(&b, ATF_STOP_DISK_RESERVE);
    check_manifest(&b);
    CHECK(leaf_size(b.thread, "index.atf") < (64u << 20));
}

/* The guard is on by default (at least 1 GiB kept, said in the manifest), off on request;
 * neither stops a small recording. */
static void guard_run(uint64_t reserve, int on) {
    bounded_run b;
    atf_session_reader r;
    memset(&b, 0, sizeof b);
    b.cfg.disk_reserve = reserve;
    b.n = 5000;
    run_record(&b);
    if (harness__failures_in_test) return;
    CHECK_EQ(ATF_STOP_NONE, b.stopped);
    CHECK_EQ(0, b.st.events_stopped);
    CHECK_EQ(b.n, b.st.events_written);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, b.session, NULL));
    if (harness__failures_in_test) return;
    if (on) CHECK(r.disk_reserve_bytes >= ((uint64_t)1 << 30));
    else CHECK_EQ(0, r.disk_reserve_bytes);
    CHECK_EQ(0, r.stopped[0]);
    atf_session_reader_close(&r);
}

static void test_disk_guard_default(void) { guard_run(0, 1); }
static void test_disk_guard_off(void) { guard_run(ATF_DISK_RESERVE_OFF, 0); }

/* atf_producer_skipped: a gap of reason "skipped" before the next event, counted apart
 * from lost events, and the depth restarting at 0. */
static void test_skipped(void) {
    atf_session_config c;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    atf_thread_stats st;
    atf_thread_reader tr;
    atf_session_reader r;
    atf_index_event ev;
    char session[1100], thread[1200];
    uint64_t i;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &c));
    if (!s) return;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "skipping", &w));
    if (!w) return;
    for (i = 0; i < 10; i++) CHECK_RESULT(ATF_OK, atf_producer_call(w, 7, 1000 + i));
    CHECK_RESULT(ATF_E_ARG, atf_producer_skipped(w, 0, 2000));
    CHECK_RESULT(ATF_OK, atf_producer_skipped(w, 5, 2000));
    CHECK_EQ(0, w->depth);
    CHECK_RESULT(ATF_OK, atf_producer_call(w, 8, 3000));
    CHECK_RESULT(ATF_OK, atf_producer_return(w, 8, 3001));
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 0, &st));
    CHECK_EQ(5, st.events_skipped);
    CHECK_EQ(0, st.events_dropped);
    snprintf(session, sizeof session, "%s", atf_session_path(s));
    snprintf(thread, sizeof thread, "%s/thread_0", session);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, thread, NULL));
    if (harness__failures_in_test) return;
    CHECK_EQ(12, tr.index.event_count);
    CHECK_EQ(1, tr.gap_count);
    if (tr.gap_count == 1) {
        CHECK_EQ(10, tr.gaps[0].index_seq);
        CHECK_EQ(5, tr.gaps[0].index_lost);
        CHECK_EQ(ATF_GAP_SKIPPED, tr.gaps[0].reason);
        CHECK_EQ(2000, tr.gaps[0].first_lost_ns);
    }
    CHECK_RESULT(ATF_OK, atf_index_reader_get(&tr.index, 10, &ev));
    CHECK_EQ(0, ev.call_depth);
    atf_thread_reader_close(&tr);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, session, NULL));
    if (harness__failures_in_test) return;
    CHECK_EQ(5, r.threads[0].events_skipped);
    atf_session_reader_close(&r);
}

/* The flight recorder: one thread pushing `phases[k]` events (stamped 1000 + their number,
 * a call and a return each in turn) then triggering, through a manual drain; the thread's
 * file holds, for each phase, a gap of reason "discarded" counting what it does not keep,
 * then the phase's most recent events. Returns the events kept of the last phase. */
static uint64_t keep_run(const atf_session_config *cfg, const uint64_t *phases, size_t n,
                         uint64_t *kept) {
    atf_session_config c = *cfg;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    atf_session_reader r;
    atf_thread_reader tr;
    atf_index_event ev;
    char session[1100], thread[1200];
    uint64_t i = 0, end = 0, at = 0, discarded = 0;
    size_t k;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.index_ring_events = 4096;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &c));
    if (!s) return 0;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "keeping", &w));
    for (k = 0; w && k < n; k++) {
        for (end += phases[k]; i < end; i++) {
            CHECK_RESULT(ATF_OK, i & 1 ? atf_producer_return(w, i - 1, 1000 + i)
                                       : atf_producer_call(w, i, 1000 + i));
            if ((i & 1023) == 1023) atf_session_pump(s);
        }
        if (k + 1 < n) atf_session_trigger(s, 0);
        CHECK_RESULT(ATF_OK, atf_session_pump(s));
    }
    snprintf(session, sizeof session, "%s", atf_session_path(s));
    snprintf(thread, sizeof thread, "%s/thread_0", session);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, thread, NULL));
    if (harness__failures_in_test) return 0;
    CHECK_EQ(n, tr.gap_count);
    for (k = 0, end = 0; k < n && k < tr.gap_count && !harness__failures_in_test; k++) {
        uint64_t next = k + 1 < tr.gap_count ? tr.gaps[k + 1].index_seq : tr.index.event_count;
        const atf_gap *g = &tr.gaps[k];
        kept[k] = next - g->index_seq;
        CHECK_EQ(at, g->index_seq);
        CHECK_EQ(ATF_GAP_DISCARDED, g->reason);
        CHECK_EQ(phases[k], g->index_lost + kept[k]); /* every event kept or counted */
        CHECK_EQ(1000 + end, g->first_lost_ns);
        end += phases[k];
        for (i = 0; i < kept[k] && !harness__failures_in_test; i++) { /* the most recent */
            CHECK_RESULT(ATF_OK, atf_index_reader_get(&tr.index, at + i, &ev));
            CHECK_EQ(1000 + end - kept[k] + i, ev.timestamp_ns);
        }
        at = next;
        discarded += g->index_lost;
    }
    atf_thread_reader_close(&tr);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, session, NULL));
    if (harness__failures_in_test) return 0;
    CHECK_EQ(discarded, r.threads[0].events_discarded);
    CHECK_EQ(c.keep_last_bytes ? c.keep_last_bytes : (uint64_t)1 << 30, r.keep_last_bytes);
    CHECK_EQ(c.keep_last_ns, r.keep_last_ns);
    atf_session_reader_close(&r);
    return n ? kept[n - 1] : 0;
}

/* keep_last_bytes of four chunks: each write holds between three and four chunks' worth
 * of the most recent events (2048 events of 32 bytes a chunk). */
static void test_keep_last_bytes(void) {
    atf_session_config c;
    uint64_t phases[3] = { 50000, 30001, 20000 }, kept[3], k;
    memset(&c, 0, sizeof c);
    c.keep_last_bytes = 4 * 2048 * 32;
    keep_run(&c, phases, 3, kept);
    for (k = 0; k < 3 && !harness__failures_in_test; k++) CHECK(kept[k] > 3 * 2048 && kept[k] <= 4 * 2048);
}

/* keep_last_ns: exactly the events of the last keep_last_ns before the newest. */
static void test_keep_last_ns(void) {
    atf_session_config c;
    uint64_t phases[2] = { 40000, 40000 }, kept[2];
    memset(&c, 0, sizeof c);
    c.keep_last_ns = 5000;
    keep_run(&c, phases, 2, kept);
    CHECK_EQ(5001, kept[0]);
    CHECK_EQ(5001, kept[1]);
}

/* The tests of threads that end or record at once: not with ATF_NO_THREADS (one thread
 * records there, and no drain thread runs). */
#if defined(ATF_NO_THREADS)
#  define KEEP_NEEDS_THREADS()                                                              \
      do {                                                                                  \
          printf("  %s: skipped (ATF_NO_THREADS: one thread records)\n", __func__);        \
          return;                                                                           \
      } while (0)
#else
#  define KEEP_NEEDS_THREADS() do {} while (0)
#endif

/* A thread of its own that pushes `n` calls stamped from `t0` on, one ns apart, and
 * ends. */
typedef struct keep_thread { atf_session *s; uint64_t n, t0; } keep_thread;

static void *keep_thread_main(void *arg) {
    const keep_thread *k = (const keep_thread *)arg;
    atf_producer *w = NULL;
    uint64_t i;
    if (atf_session_attach(k->s, "ended", &w) != ATF_OK || !w) return NULL;
    for (i = 0; i < k->n; i++) atf_producer_call(w, i, k->t0 + i);
    atf_session_detach(k->s);
    return NULL;
}

static void keep_thread_run(atf_session *s, uint64_t n, uint64_t t0) {
    keep_thread k;
    pthread_t t;
    k.s = s;
    k.n = n;
    k.t0 = t0;
    CHECK_EQ(0, pthread_create(&t, NULL, keep_thread_main, &k));
    pthread_join(t, NULL);
}

/* A flight-recorder session of 4 chunks (2048 events of 32 bytes each), a manual drain. */
static atf_session *keep_open(void) {
    atf_session_config c;
    atf_session *s = NULL;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.index_ring_events = 8192;
    c.keep_last_bytes = 4 * 2048 * 32;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &c));
    return s;
}

/* Closes s and opens what it wrote as r. */
static void keep_close_read(atf_session *s, atf_session_reader *r) {
    char session[1100];
    snprintf(session, sizeof session, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(r, session, NULL));
}

/* The session keeps its most recent events whichever thread made them: a thread that
 * ended holds its events until newer ones of another thread need the room, and then
 * they go, the last of its chunks too. */
static void test_keep_last_ended_thread(void) {
    atf_session *s;
    atf_producer *w = NULL;
    atf_session_reader r;
    uint64_t i;
    KEEP_NEEDS_THREADS();
    s = keep_open();
    if (!s) return;
    keep_thread_run(s, 8192, 1000);
    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* all 8192 held: the budget */
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "late", &w));
    for (i = 0; w && i < 30000; i++) {
        CHECK_RESULT(ATF_OK, atf_producer_call(w, i, 100000 + i));
        if ((i & 1023) == 1023) atf_session_pump(s);
    }
    keep_close_read(s, &r);
    if (harness__failures_in_test) return;
    CHECK_EQ(2, r.thread_count);
    if (r.thread_count == 2) {
        CHECK_EQ(0, r.threads[0].events_written); /* the ended thread's: all older */
        CHECK_EQ(8192, r.threads[0].events_discarded);
        CHECK(r.threads[1].events_written > 3 * 2048 && r.threads[1].events_written <= 4 * 2048);
        CHECK_EQ(30000, r.threads[1].events_written + r.threads[1].events_discarded);
    }
    atf_session_reader_close(&r);
}

/* A trigger met in the pass that finds a thread ended writes what that thread held. */
static void test_keep_last_trigger_at_end(void) {
    atf_session *s;
    atf_thread_stats st;
    KEEP_NEEDS_THREADS();
    s = keep_open();
    if (!s) return;
    keep_thread_run(s, 3000, 1000);
    atf_session_trigger(s, 0);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 0, &st));
    CHECK_EQ(3000, st.events_written);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
}

/* A live thread holding a few events (its one chunk, being filled) keeps them, and does
 * not keep the newest thread from taking an ended thread's older chunks. */
static void test_keep_last_idle_thread(void) {
    atf_session *s;
    atf_producer *w = NULL;
    atf_thread_stats idle, ended, late;
    uint64_t i;
    KEEP_NEEDS_THREADS();
    s = keep_open();
    if (!s) return;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "idle", &w));
    for (i = 0; w && i < 100; i++) CHECK_RESULT(ATF_OK, atf_producer_call(w, i, 100 + i));
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    keep_thread_run(s, 6000, 10000);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    keep_thread_run(s, 30000, 100000);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    atf_session_trigger(s, 0); /* written now, as they are */
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 0, &idle));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 1, &ended));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 2, &late));
    CHECK_EQ(100, idle.events_written);
    CHECK_EQ(0, ended.events_written);        /* older than every event of the last */
    CHECK_EQ(6000, ended.events_discarded);
    CHECK(late.events_written > 2 * 2048);    /* the budget less the idle thread's chunk */
    CHECK_EQ(30000, late.events_written + late.events_discarded);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
}

/* Four threads at once under the drain thread, taking each other's chunks: each keeps the
 * end of what it pushed (its last event is its last push), every event is kept or counted
 * discarded, and the session holds its budget and a chunk a thread at most. */
static void test_keep_last_threads(void) {
    atf_session_config c;
    atf_session *s = NULL;
    atf_session_reader r;
    keep_thread k[4];
    pthread_t t[4];
    uint64_t kept = 0;
    size_t i;
    KEEP_NEEDS_THREADS();
    memset(&c, 0, sizeof c);
    c.index_ring_events = 4096;
    c.keep_last_bytes = 8 * 2048 * 32;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &c));
    if (!s) return;
    for (i = 0; i < 4; i++) {
        k[i].s = s;
        k[i].n = 50000;
        k[i].t0 = 1000 + i * 1000000;
        CHECK_EQ(0, pthread_create(&t[i], NULL, keep_thread_main, &k[i]));
    }
    for (i = 0; i < 4; i++) pthread_join(t[i], NULL);
    keep_close_read(s, &r);
    if (harness__failures_in_test) return;
    CHECK_EQ(4, r.thread_count);
    for (i = 0; i < r.thread_count && !harness__failures_in_test; i++) {
        const atf_session_thread *th = &r.threads[i];
        atf_index_event ev;
        CHECK_EQ(50000, th->events_written + th->events_discarded);
        kept += th->events_written;
        if (!th->events_written) continue;
        CHECK_RESULT(ATF_OK, atf_index_reader_get(&th->reader.index, th->events_written - 1, &ev));
        CHECK_EQ(49999, (ev.timestamp_ns - 1000) % 1000000); /* its last push */
    }
    CHECK(kept <= 8 * 2048 + 4 * 2048);
    CHECK(kept > 4 * 2048);
    atf_session_reader_close(&r);
}

/* The flight recorder with detail: one thread pushes 20000 calls (stamped 1000 + their
 * number i, a detail record with payload gen_payload(0, i) on every third), a trigger
 * writes what is held (windowed: the trigger's window is the last 100 stamps), then 10000
 * more and the close. Every kept event with a record (ALWAYS: every third; windowed:
 * those in the window) links to it both ways, with its payload; no other event links;
 * the records of the events discarded count as dropped. */
static void keep_detail_run(uint32_t layout, uint32_t mode) {
    atf_session_config c;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    atf_thread_reader tr;
    atf_thread_stats st;
    char thread[1200];
    uint64_t i, linked = 0, want = 0;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.index_ring_events = 4096;
    c.layout = layout;
    c.detail_mode = mode;
    c.pre_roll_ns = 100;
    c.keep_last_bytes = 4 * 2048 * 32;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &c));
    if (!s) return;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "detail", &w));
    for (i = 0; w && i < 30000 && !harness__failures_in_test; i++) {
        if (i % 3 == 0) {
            uint8_t payload[80];
            size_t len = gen_payload(0, i, payload);
            CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, i, 1000 + i,
                                                           ATF_DETAIL_FUNCTION_CALL, payload, len));
        } else {
            CHECK_RESULT(ATF_OK, atf_producer_call(w, i, 1000 + i));
        }
        if ((i & 1023) == 1023) atf_session_pump(s);
        if (i + 1 == 20000) {
            atf_session_trigger(s, 1000 + i);
            CHECK_RESULT(ATF_OK, atf_session_pump(s));
        }
    }
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, 0, &st));
    snprintf(thread, sizeof thread, "%s/thread_0", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, thread, NULL));
    if (harness__failures_in_test) return;
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    CHECK_EQ(2, tr.gap_count);
    for (i = 0; i < tr.index.event_count && !harness__failures_in_test; i++) {
        atf_index_event ev;
        atf_detail_event d;
        uint64_t k;
        int in_window;
        CHECK_RESULT(ATF_OK, atf_index_reader_get(&tr.index, i, &ev));
        k = ev.timestamp_ns - 1000; /* the event's number as pushed */
        in_window = mode == ATF_DETAIL_ALWAYS || (k <= 19999 && k >= 19899);
        if (k % 3 == 0 && in_window) {
            uint8_t payload[80];
            size_t len = gen_payload(0, k, payload);
            want++;
            CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(&tr, i, &d));
            CHECK_EQ(i, d.header.index_seq);
            CHECK_EQ(len, d.payload_len);
            if (d.payload_len == len) CHECK(memcmp(d.payload, payload, len) == 0);
            linked++;
        } else {
            CHECK_RESULT(ATF_E_NO_DETAIL, atf_thread_reader_detail_of(&tr, i, &d));
        }
    }
    CHECK_EQ(want, linked);
    CHECK(linked > 0);
    CHECK_EQ(linked, tr.has_detail ? tr.detail.event_count : 0);
    atf_thread_reader_close(&tr);
}

static void test_keep_last_detail_layout1(void) { keep_detail_run(ATF_LAYOUT_1, ATF_DETAIL_ALWAYS); }
static void test_keep_last_detail_layout2(void) { keep_detail_run(ATF_LAYOUT_2, ATF_DETAIL_ALWAYS); }
static void test_keep_last_detail_packed(void) { keep_detail_run(ATF_LAYOUT_PACKED, ATF_DETAIL_ALWAYS); }
static void test_keep_last_detail_windowed(void) { keep_detail_run(ATF_LAYOUT_1, ATF_DETAIL_WINDOWED); }

static void test_reason_names(void) {
    CHECK(strcmp("max size", atf_stop_reason_str(ATF_STOP_MAX_SIZE)) == 0);
    CHECK(strcmp("duration", atf_stop_reason_str(ATF_STOP_DURATION)) == 0);
    CHECK(strcmp("disk reserve", atf_stop_reason_str(ATF_STOP_DISK_RESERVE)) == 0);
    CHECK(strcmp("", atf_stop_reason_str(ATF_STOP_NONE)) == 0);
    CHECK(strcmp("stopped", atf_gap_reason_str(ATF_GAP_STOPPED)) == 0);
    CHECK(strcmp("skipped", atf_gap_reason_str(ATF_GAP_SKIPPED)) == 0);
    CHECK(strcmp("discarded", atf_gap_reason_str(ATF_GAP_DISCARDED)) == 0);
    CHECK_EQ(ATF_STOP_DISK_RESERVE, atf__stop_reason_code("disk reserve"));
    CHECK_EQ(ATF_STOP_NONE, atf__stop_reason_code("full"));
}

static const test_case tests[] = {
    { "max_bytes_layout1", test_max_bytes_layout1 },
    { "max_bytes_layout2", test_max_bytes_layout2 },
    { "max_bytes_packed", test_max_bytes_packed },
    { "max_bytes_detail", test_max_bytes_detail },
    { "max_duration", test_max_duration },
    { "disk_reserve", test_disk_reserve },
    { "disk_guard_default", test_disk_guard_default },
    { "disk_guard_off", test_disk_guard_off },
    { "skipped", test_skipped },
    { "keep_last_bytes", test_keep_last_bytes },
    { "keep_last_ns", test_keep_last_ns },
    { "keep_last_ended_thread", test_keep_last_ended_thread },
    { "keep_last_trigger_at_end", test_keep_last_trigger_at_end },
    { "keep_last_idle_thread", test_keep_last_idle_thread },
    { "keep_last_threads", test_keep_last_threads },
    { "keep_last_detail_layout1", test_keep_last_detail_layout1 },
    { "keep_last_detail_layout2", test_keep_last_detail_layout2 },
    { "keep_last_detail_packed", test_keep_last_detail_packed },
    { "keep_last_detail_windowed", test_keep_last_detail_windowed },
    { "reason_names", test_reason_names },
};

int main(int argc, char **argv) {
    int rc;
    if (scratch_dir_make(root, sizeof root, "bounds") != 0) return 1;
    rc = harness_run("bounds", tests, sizeof tests / sizeof tests[0], argc, argv);
    remove_tree(root);
    return rc;
}
