/* test_ticks.c - tick stamps (stamp_clock ATF_STAMP_TICKS): atf_ticks() itself; the
 * calibration map (exact at each pair, monotone, the identity when ticks are ns, bounded,
 * restarted by a counter that goes back); and sessions whose producers stamp atf_ticks():
 * every time in the files lies within a few microseconds of atf_now_ns() read around the
 * event, also across a long pause of the drain, in order per thread, with detail records
 * carrying their index event's time, windowed detail triggered through
 * atf_session_ticks_to_ns(), rings in caller memory; the files verify like any other. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#if !defined(ATF_NO_THREADS)
#  include <pthread.h>
#endif
#include <sched.h>
#include <time.h>

static char test_root[256];

static const char *root_dir(void) {
    if (!test_root[0]) scratch_root(test_root, sizeof test_root, "ticks");
    return test_root;
}

static void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* How far a converted time may stray from the atf_now_ns() reads around its event: 5 us,
 * plus what reading one pair takes here (wide under emulators and sanitizers). */
static uint64_t tolerance_ns(void) {
    static uint64_t tol;
    uint64_t best = UINT64_MAX, width = 0;
    int i;
    if (tol) return tol;
    for (i = 0; i < 32; i++) {
        uint64_t a = atf_now_ns(), b;
        (void)atf__tick_pair_read(&width);
        b = atf_now_ns();
        if (b - a < best) best = b - a;
    }
    tol = 5000 + 4 * best;
    return tol;
}

/* One event's stamp and the trace-clock reads around it. */
typedef struct stamp { uint64_t before, ticks, after; } stamp;

static uint64_t stamp_now(stamp *st) {
    st->before = atf_now_ns();
    st->ticks = atf_ticks();
    st->after = atf_now_ns();
    return st->ticks;
}

/* Counts the events of thread_<slot> under dir whose time is outside [before - tol,
 * after + tol] of st[i] or below the previous one; checks the files are finalized with
 * good CRCs and links; *worst receives the largest distance outside [before, after]. */
static uint64_t check_thread(const char *dir, uint32_t slot, const stamp *st, uint64_t n,
                             uint64_t *worst) {
    char path[1200];
    atf_thread_reader tr;
    atf_reader_options opt;
    uint64_t i, bad = 0, prev = 0, tol = tolerance_ns();
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(path, sizeof path, "%s/thread_%u", dir, slot);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, path, &opt));
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(ATF_CRC_OK, tr.index.crc_state);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    CHECK_EQ(n, tr.index.event_count);
    for (i = 0; i < tr.index.event_count && i < n; i++) {
        atf_index_event ev;
        uint64_t t, off = 0;
        if (atf_index_reader_get(&tr.index, i, &ev) != ATF_OK) {
            bad++;
            continue;
        }
        t = ev.timestamp_ns;
        if (t < st[i].before) off = st[i].before - t;
        if (t > st[i].after) off = t - st[i].after;
        if (off > *worst) *worst = off;
        if (ATF_TICKS_ARE_NS && t != st[i].ticks) bad++; /* the identity */
        if (off > tol || t < prev) {
            if (bad < 3)
                printf("  event %" PRIu64 ": %" PRIu64 " not in [%" PRIu64 ", %" PRIu64
                       "] +- %" PRIu64 " or below %" PRIu64 "\n",
                       i, t, st[i].before, st[i].after, tol, prev);
            bad++;
        }
        prev = t;
    }
    if (tr.index.event_count) {
        CHECK_EQ(tr.index.header.time_start_ns, atf__load_le64(atf_index_reader_raw(&tr.index, 0)));
        CHECK(tr.index.header.time_end_ns >= tr.index.header.time_start_ns);
    }
    atf_thread_reader_close(&tr);
    return bad;
}

static atf_session *open_session(const char *name, uint32_t drain_mode, uint32_t detail_mode,
                                 uint32_t layout) {
    atf_session *s = NULL;
    atf_session_config c;
    memset(&c, 0, sizeof c);
    c.stamp_clock = ATF_STAMP_TICKS;
    c.drain_mode = drain_mode;
    c.detail_mode = detail_mode;
    c.layout = layout;
    c.index_ring_events = 1u << 18;
    c.detail_ring_bytes = 4u << 20;
    c.pre_roll_ns = 20000;
    c.post_roll_ns = 20000;
    c.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    return s;
}

/* ---- atf_ticks and the map ------------------------------------------------------------ */

static void test_ticks_advance(void) {
    uint64_t a = atf_now_ns(), t0 = atf_ticks(), t1, b;
    sleep_ms(2);
    t1 = atf_ticks();
    b = atf_now_ns();
    CHECK(t1 > t0);
    if (ATF_TICKS_ARE_NS) CHECK(t0 >= a && t1 <= b);
}

static void map_add(atf__tick_map *m, uint64_t ticks, uint64_t ns) {
    atf__tick_pair q;
    q.ticks = ticks;
    q.ns = ns;
    atf__tick_map_add(m, q);
}

static void test_map_exact_and_monotone(void) {
    atf__tick_map m;
    uint64_t tk[10], ns[10], t, prev = 0, bad = 0;
    size_t i, hint = 0;
    memset(&m, 0, sizeof m);
    for (i = 0; i < 10; i++) { /* rates that change: 1/2.6 ns per tick and around it */
        tk[i] = 10000000u + i * 2600000u + (i % 3) * 77777u;
        ns[i] = 7000000000u + i * 1000000u + (i % 2) * 1300u;
        map_add(&m, tk[i], ns[i]);
    }
    CHECK_EQ(10, m.count);
    for (i = 0; i < 10; i++) CHECK_EQ(ns[i], atf__tick_map_ns(&m, tk[i], 0, &hint));
    for (t = tk[0] - 50000; t < tk[9] + 50000; t += 97) {
        uint64_t v = atf__tick_map_ns(&m, t, 0, &hint);
        if (v < prev) bad++;
        prev = v;
    }
    CHECK_EQ(0, bad);
    /* halfway through a segment: halfway in ns (within rounding) */
    t = tk[3] + (tk[4] - tk[3]) / 2;
    CHECK(atf__tick_map_ns(&m, t, 0, &hint) + 1 >= ns[3] + (ns[4] - ns[3]) / 2);
    CHECK(atf__tick_map_ns(&m, t, 0, &hint) <= ns[3] + (ns[4] - ns[3]) / 2 + 1);
    /* past the newest pair: its ns, or extrapolated with the overall rate */
    CHECK_EQ(ns[9], atf__tick_map_ns(&m, tk[9] + 2600000u, 0, &hint));
    t = atf__tick_map_ns(&m, tk[9] + 2600000u, 1, &hint);
    CHECK(t > ns[9] + 990000u && t < ns[9] + 1010000u);
    /* before the oldest: extrapolated back, saturating at 0 */
    t = atf__tick_map_ns(&m, tk[0] - 2600000u, 0, &hint);
    CHECK(t < ns[0] - 990000u && t > ns[0] - 1010000u);
    CHECK_EQ(0, atf__tick_map_ns(&m, 0, 0, &hint) > ns[0]);
    /* a pair less than ATF__TICK_SPAN_NS after the one before the newest replaces it */
    map_add(&m, tk[9] + 1000u, ns[9] + 500u);
    CHECK_EQ(11, m.count);
    map_add(&m, tk[9] + 2000u, ns[9] + 900u);
    CHECK_EQ(11, m.count);
    CHECK_EQ(ns[9] + 900u, atf__tick_map_ns(&m, tk[9] + 2000u, 0, &hint));
    CHECK_EQ(ns[9], atf__tick_map_ns(&m, tk[9], 0, &hint));
    /* the same ticks again: ignored; ns that went back: held */
    map_add(&m, tk[9] + 2000u, ns[9] + 5000000u);
    CHECK_EQ(ns[9] + 900u, atf__tick_map_ns(&m, tk[9] + 2000u, 0, &hint));
}

/* Within 1 ns (the double product is truncated). */
static int within_1ns(uint64_t expected, uint64_t found) {
    return found + 1 >= expected && found <= expected + 1;
}

static void test_map_bounded_and_reset(void) {
    atf__tick_map m;
    uint64_t i;
    size_t hint = 0;
    memset(&m, 0, sizeof m);
    for (i = 0; i < 200; i++) map_add(&m, 5000u + i * 3000000u, 1000000000u + i * 2000000u);
    CHECK_EQ(ATF__TICK_PAIRS, m.count);
    CHECK_EQ(5000u + (200 - ATF__TICK_PAIRS) * 3000000u, m.p[0].ticks);
    for (i = 200 - ATF__TICK_PAIRS; i < 200; i++)
        CHECK_EQ(1000000000u + i * 2000000u, atf__tick_map_ns(&m, 5000u + i * 3000000u, 0, &hint));
    /* older than every pair kept: extrapolated with the rate over them (2/3 ns per tick) */
    CHECK(within_1ns(1000000000u + 2000000u, atf__tick_map_ns(&m, 5000u + 3000000u, 0, &hint)));
    /* the counter went back: the map starts again from that pair, keeping the rate */
    map_add(&m, 100u, 5000000000u);
    CHECK_EQ(1, m.count);
    CHECK_EQ(5000000000u, atf__tick_map_ns(&m, 100u, 0, &hint));
    CHECK_EQ(5000000000u, atf__tick_map_ns(&m, 3100u, 0, &hint));
    CHECK(within_1ns(5000000000u + 2000u, atf__tick_map_ns(&m, 3100u, 1, &hint)));
}

/* The fixed-point slopes against exact 128-bit arithmetic: d ticks over a segment of
 * `ticks` ticks and `ns` ns give floor(d * ns / ticks) to within d / 2^30 + 2 ns (the
 * fraction has 32 bits; a segment of 2^32 ticks or more is scaled down to compute it),
 * and UINT64_MAX exactly when the true value does not fit 64 bits. */
static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
#endif

static void test_fixed_point_rate(void) {
#if defined(__SIZEOF_INT128__)
    uint64_t x = 0x9E3779B97F4A7C15ull, bad = 0, i;
    for (i = 0; i < 200000; i++) {
        uint64_t ticks = next_random(&x) >> (next_random(&x) % 64), ns, d, got;
        u128 exact;
        if (!ticks) ticks = 1;
        /* rates around what counters give (0.04 .. 50 ns per tick), and any */
        ns = i % 4 ? ticks / (1 + next_random(&x) % 25) * (1 + next_random(&x) % 50) : next_random(&x);
        d = i % 3 ? next_random(&x) % (ticks + 1) : next_random(&x) >> (next_random(&x) % 64);
        exact = (u128)d * ns / ticks;
        got = atf__tick_scale(d, atf__tick_rate_of(ns, ticks));
        if (exact > (u128)UINT64_MAX) {
            bad += got != UINT64_MAX && (u128)got + (d >> 30) + 2 < exact;
        } else {
            uint64_t e = (uint64_t)exact, slack = (d >> 30) + 2;
            bad += got + slack < e || got > e + slack;
        }
    }
    CHECK_EQ(0, bad);
#endif
    /* a counter of about 3 GHz over 1 ms, then 24 MHz (arm64's counter) over 1 s */
    CHECK(within_1ns(1000000u, atf__tick_scale(3000000u, atf__tick_rate_of(1000000u, 3000000u))));
    CHECK(within_1ns(500000u, atf__tick_scale(1500000u, atf__tick_rate_of(1000000u, 3000000u))));
    CHECK(within_1ns(1000000000u, atf__tick_scale(24000000u, atf__tick_rate_of(1000000000u, 24000000u))));
    CHECK_EQ(UINT64_MAX, atf__tick_scale(UINT64_MAX, atf__tick_rate_of(3u, 2u)));
    CHECK_EQ(UINT64_MAX, atf__tick_forward(UINT64_MAX - 5u, 100u, atf__tick_rate_of(1u, 1u)));
    CHECK_EQ(0, atf__tick_back(5u, 100u, atf__tick_rate_of(1u, 1u)));
}

/* Pairs whose ticks are their ns (what ATF_TICKS_ARE_NS builds read) convert every
 * tick to itself: between pairs, before them and after them. */
static void test_map_identity(void) {
    atf__tick_map m;
    uint64_t i, t, bad = 0, base = 123456789012345ull;
    size_t hint = 0;
    memset(&m, 0, sizeof m);
    for (i = 0; i < 40; i++) {
        t = base + i * 1300017u + (i * i) % 1000u;
        map_add(&m, t, t);
    }
    for (t = base - 3000000u; t < base + 60000000u; t += 4099) {
        if (atf__tick_map_ns(&m, t, 1, &hint) != t) bad++;
        if (t < m.p[m.count - 1].ticks && atf__tick_map_ns(&m, t, 0, &hint) != t) bad++;
    }
    CHECK_EQ(0, bad);
}

/* ---- sessions --------------------------------------------------------------------------- */

static void test_config(void) {
    atf_session *s = NULL;
    atf_session_config c;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.stamp_clock = ATF_STAMP_TICKS + 1;
    CHECK_RESULT(ATF_E_ARG, atf_session_open(&s, root_dir(), &c));
    CHECK(s == NULL);
}

/* ns stamps stay exactly what the producer gave (ATF_STAMP_NS, the default), and so do
 * stamps of a tick session where ticks are ns. */
static void test_ns_stamps_untouched(void) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    atf_thread_reader tr;
    char dir[1100], td[1200];
    uint64_t i;
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "ns";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    for (i = 0; i < 1000 && w; i++) atf_producer_call(w, i, 77 + i * 3); /* not any clock */
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, NULL));
    CHECK_EQ(1000, tr.index.event_count);
    for (i = 0; i < tr.index.event_count; i++) {
        atf_index_event ev;
        atf_index_reader_get(&tr.index, i, &ev);
        if (ev.timestamp_ns != 77 + i * 3) {
            CHECK_EQ(77 + i * 3, ev.timestamp_ns);
            break;
        }
    }
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

/* One thread, manual drain: batches pumped now and then, a long pause with events on
 * both sides of it and no pump, then more. */
static void test_manual_with_long_pause(void) {
    atf_session *s = open_session("pause", ATF_DRAIN_MANUAL, ATF_DETAIL_OFF, ATF_LAYOUT_1);
    atf_producer *w = NULL;
    const uint64_t n = 60000;
    stamp *st = (stamp *)calloc((size_t)n, sizeof *st);
    char dir[1100];
    uint64_t i, worst = 0;
    if (!s || !st) {
        free(st);
        if (s) atf_session_close(s);
        return;
    }
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    for (i = 0; i < n && w; i++) {
        uint64_t t = stamp_now(&st[i]);
        CHECK_RESULT(ATF_OK, i % 2 ? atf_producer_return(w, i / 2, t) : atf_producer_call(w, i / 2, t));
        if (i % 5000 == 4999 && (i < 20000 || i >= 40000)) atf_session_pump(s);
        if (i == 30000) sleep_ms(1500); /* no pump since event 19999 */
        if (i >= 40000 && i % 100 == 0) { /* spread out: 10 us apart */
            uint64_t until = atf_now_ns() + 10000;
            while (atf_now_ns() < until) {}
        }
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_EQ(0, check_thread(dir, 0, st, n, &worst));
    printf("  (worst distance outside the reads around an event: %" PRIu64 " ns)\n", worst);
    free(st);
    rm_rf(dir);
}

/* Rings in caller memory drained by a session that converts (as a process draining
 * another one's rings would): the same agreement. */
static void test_attached_rings(void) {
    atf_session *s = open_session("rings", ATF_DRAIN_MANUAL, ATF_DETAIL_OFF, ATF_LAYOUT_2);
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 4096);
    uint8_t *raw = (uint8_t *)malloc(isz + 64), *imem;
    atf_producer w;
    const uint64_t n = 20000;
    stamp *st = (stamp *)calloc((size_t)n, sizeof *st);
    char dir[1100];
    uint64_t i, worst = 0;
    uint32_t slot = 99;
    if (!s || !st || !raw) {
        free(st);
        free(raw);
        if (s) atf_session_close(s);
        return;
    }
    imem = raw + (64 - (uintptr_t)raw % 64) % 64; /* rings want 64-byte alignment */
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 4096, ATF_LAYOUT_2, 4242));
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, NULL, 0, ATF_DETAIL_OFF));
    CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, imem, isz, NULL, 0, "rings", &slot));
    for (i = 0; i < n; i++) {
        uint64_t t = stamp_now(&st[i]);
        CHECK_RESULT(ATF_OK, atf_producer_push(&w, ATF_EVENT_CALL, i, t, 0));
        if (i % 2048 == 2047) atf_session_pump(s); /* the ring holds 4096 */
    }
    atf_producer_close(&w);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_EQ(0, check_thread(dir, slot, st, n, &worst));
    free(raw);
    free(st);
    rm_rf(dir);
}

/* Detail ALWAYS: each detail record has its index event's time, links exact. */
static void test_detail_always(void) {
    atf_session *s = open_session("always", ATF_DRAIN_MANUAL, ATF_DETAIL_ALWAYS, ATF_LAYOUT_2);
    atf_producer *w = NULL;
    atf_thread_reader tr;
    atf_reader_options opt;
    const uint64_t n = 30000;
    stamp *st = (stamp *)calloc((size_t)n, sizeof *st);
    char dir[1100], td[1200];
    uint64_t i, worst = 0, linked = 0, bad = 0;
    if (!s || !st) {
        free(st);
        if (s) atf_session_close(s);
        return;
    }
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    for (i = 0; i < n && w; i++) {
        uint64_t t = stamp_now(&st[i]), payload = i * 7;
        if (i % 3 == 0)
            CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, i, t, 5, &payload,
                                                         sizeof payload));
        else
            CHECK_RESULT(ATF_OK, atf_producer_call(w, i, t));
        if (i % 4096 == 4095) atf_session_pump(s);
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_EQ(0, check_thread(dir, 0, st, n, &worst));
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, &opt));
    CHECK(tr.has_detail);
    CHECK_EQ(ATF_CRC_OK, tr.detail.crc_state);
    for (i = 0; i < tr.index.event_count && tr.has_detail; i++) {
        atf_index_event ev;
        atf_detail_event de;
        atf_index_reader_get(&tr.index, i, &ev);
        if (ev.detail_seq == ATF_NO_DETAIL) continue;
        linked++;
        if (atf_detail_reader_get(&tr.detail, ev.detail_seq, &de) != ATF_OK ||
            de.header.timestamp_ns != ev.timestamp_ns || de.header.index_seq != i)
            bad++;
    }
    CHECK_EQ(0, bad);
    CHECK_EQ((n + 2) / 3, linked);
    atf_thread_reader_close(&tr);
    free(st);
    rm_rf(dir);
}

/* Windowed detail triggered at the converted time of one event's tick stamp: the records
 * kept are exactly those whose converted time falls in the window, that event among them. */
static void test_windowed_trigger(void) {
    atf_session *s = open_session("windowed", ATF_DRAIN_MANUAL, ATF_DETAIL_WINDOWED, ATF_LAYOUT_1);
    atf_producer *w = NULL;
    atf_thread_reader tr;
    atf_reader_options opt;
    const uint64_t n = 20000, k = 12345;
    stamp *st = (stamp *)calloc((size_t)n, sizeof *st);
    uint8_t *has = bits_new(n);
    char dir[1100], td[1200];
    uint64_t i, trig = 0, kept = 0, wrong = 0, worst = 0;
    if (!s || !st || !has) {
        free(st);
        free(has);
        if (s) atf_session_close(s);
        return;
    }
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    for (i = 0; i < n && w; i++) {
        uint64_t t = stamp_now(&st[i]), before = w->detail_dropped;
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, i, t, 5, &i, sizeof i));
        if (w->detail_dropped == before) bits_set(has, i);
        if (i == k) {
            trig = atf_session_ticks_to_ns(s, t);
            CHECK(trig + tolerance_ns() >= st[i].before && trig <= st[i].after + tolerance_ns());
            atf_session_trigger(s, trig);
        }
        if (i % 2000 == 1999) atf_session_pump(s);
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    CHECK_EQ(0, check_thread(dir, 0, st, n, &worst));
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(td, sizeof td, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, td, &opt));
    CHECK(tr.has_detail);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    for (i = 0; i < tr.index.event_count; i++) {
        atf_index_event ev;
        int in = 0;
        atf_index_reader_get(&tr.index, i, &ev);
        in = bits_get(has, i) && ev.timestamp_ns + 20000 >= trig && ev.timestamp_ns <= trig + 20000;
        if (ev.detail_seq != ATF_NO_DETAIL) kept++;
        if (in != (ev.detail_seq != ATF_NO_DETAIL)) wrong++;
        if (i == k) CHECK(ev.detail_seq != ATF_NO_DETAIL);
    }
    CHECK_EQ(0, wrong);
    CHECK(kept >= 1);
    CHECK_EQ(kept, tr.has_detail ? tr.detail.event_count : 0);
    atf_thread_reader_close(&tr);
    free(st);
    free(has);
    rm_rf(dir);
}

static void test_ticks_to_ns(void) {
    atf_session *s = open_session("convert", ATF_DRAIN_MANUAL, ATF_DETAIL_OFF, ATF_LAYOUT_1);
    stamp a, b;
    char dir[1100];
    uint64_t tol = tolerance_ns(), v;
    if (!s) return;
    stamp_now(&a);
    v = atf_session_ticks_to_ns(s, a.ticks); /* younger than every pair: a pair read now */
    CHECK(v + tol >= a.before && v <= a.after + tol);
    sleep_ms(3);
    atf_session_pump(s);
    stamp_now(&b);
    sleep_ms(3);
    atf_session_pump(s);
    v = atf_session_ticks_to_ns(s, a.ticks); /* between pairs (or before them) */
    CHECK(v + tol >= a.before && v <= a.after + tol);
    v = atf_session_ticks_to_ns(s, b.ticks); /* between two pumps' pairs */
    CHECK(v + tol >= b.before && v <= b.after + tol);
    if (ATF_TICKS_ARE_NS) CHECK_EQ(b.ticks, atf_session_ticks_to_ns(s, b.ticks));
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    rm_rf(dir);
}

#if !defined(ATF_NO_THREADS)
/* Threads stamping ticks through the drain thread, each checked against its reads. */
#  define THREADS 4
typedef struct worker {
    atf_session *s;
    stamp *st;
    uint64_t n, kept;
    uint32_t slot;
} worker;

static void *worker_main(void *arg) {
    worker *x = (worker *)arg;
    atf_producer *w = NULL;
    uint64_t i;
    if (atf_session_attach(x->s, NULL, &w) != ATF_OK) return NULL;
    x->slot = w->slot;
    for (i = 0; i < x->n; i++) {
        uint64_t t = stamp_now(&x->st[x->kept]);
        if (atf_producer_call(w, i, t) == ATF_OK) x->kept++;
        else sched_yield(); /* the ring is full: let the drain run (the event is dropped) */
        if (i % 1024 == 0) sched_yield();
    }
    atf_session_detach(x->s);
    return NULL;
}

static void test_threads_drain_thread(void) {
    atf_session *s = open_session("threads", ATF_DRAIN_THREAD, ATF_DETAIL_OFF, ATF_LAYOUT_1);
    worker x[THREADS];
    pthread_t t[THREADS];
    char dir[1100];
    uint64_t worst = 0;
    int i;
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    memset(x, 0, sizeof x);
    for (i = 0; i < THREADS; i++) {
        x[i].s = s;
        x[i].n = 100000;
        x[i].st = (stamp *)calloc((size_t)x[i].n, sizeof(stamp));
        CHECK(x[i].st != NULL);
        if (x[i].st) CHECK_EQ(0, pthread_create(&t[i], NULL, worker_main, &x[i]));
    }
    for (i = 0; i < THREADS; i++)
        if (x[i].st) pthread_join(t[i], NULL);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    for (i = 0; i < THREADS; i++) {
        if (x[i].st) CHECK_EQ(0, check_thread(dir, x[i].slot, x[i].st, x[i].kept, &worst));
        free(x[i].st);
    }
    rm_rf(dir);
}
#endif

static void test_cleanup(void) { rm_rf(root_dir()); }

static const test_case tests[] = {
    {"ticks_advance", test_ticks_advance},
    {"map_exact_and_monotone", test_map_exact_and_monotone},
    {"map_bounded_and_reset", test_map_bounded_and_reset},
    {"map_identity", test_map_identity},
    {"fixed_point_rate", test_fixed_point_rate},
    {"config", test_config},
    {"ns_stamps_untouched", test_ns_stamps_untouched},
    {"manual_with_long_pause", test_manual_with_long_pause},
    {"attached_rings", test_attached_rings},
    {"detail_always", test_detail_always},
    {"windowed_trigger", test_windowed_trigger},
    {"ticks_to_ns", test_ticks_to_ns},
#if !defined(ATF_NO_THREADS)
    {"threads_drain_thread", test_threads_drain_thread},
#endif
    {"cleanup", test_cleanup},
};

HARNESS_MAIN("ticks", tests)
