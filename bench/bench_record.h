/* bench_record.h - recording benchmarks, included by bench/bench.c (after atf.h with
 * ATF_IMPLEMENTATION). One entry point:
 *
 *     static void bench_record(void (*report)(const char *name, double value));
 *
 * Figures (each the median of BR_RUNS runs; limits measured in the same run; the
 * producer and store-floor figures are the median of their BR_RUNS x 64 batches of 65534
 * events, each batch timed alone: on a busy machine a preemption then spoils the few
 * batches it lands in, where it would lengthen nearly every run of 64 batches; and the
 * store floor's batches alternate with the producer's):
 *   clock_ns                      one atf_now_ns()
 *   store_floor_ns                the floor under produce_ns_caller_ts: the same loop storing
 *                                 each 32-byte event with four scalar 8-byte stores (never
 *                                 vectorized, as the producer's) into a power-of-two ring
 *                                 (no atomics, no full check), batch for batch in turn
 *                                 with the producer
 *   produce_vs_store_floor        produce_ns_caller_ts / store_floor_ns (target <= 1.3)
 *   produce_ns_caller_ts          producer cost per event, caller timestamp, ring never full
 *                                 (64K-slot ring, emptied between batches outside the timing)
 *   drain_ns_per_event            drain cost per event, ring to page cache: BR_DRAIN_EVENTS
 *                                 events pushed into one thread's ring of a manual-drain
 *                                 session (untimed), then one atf_session_pump moving them
 *                                 into the thread's index.atf (timed; creates the files)
 *   drain_vs_produce              drain_ns_per_event / produce_ns_caller_ts (target <= 0.5:
 *                                 a drain thread keeps up with two producers)
 *   drain_limit_ns_per_event      the machine's limit for that: the same ring bytes written
 *   drain_vs_limit                with plain pwrite() calls of 256 KiB at page-aligned
 *                                 offsets into a fresh file in the same directory, in the
 *                                 same runs (before the pump in odd runs, after it in even
 *                                 ones); the ratio is drain / limit. Before each run two
 *                                 untimed files of that size are written and removed: on a
 *                                 VM the first use of fresh memory for the page cache
 *                                 costs several times more (host faults), and whichever
 *                                 writer came first would pay it
 *   drain_ns_per_event_ticks      the same with atf_ticks() stamps (stamp_clock
 *                                 ATF_STAMP_TICKS, as the auto-tracer): the drain converts
 *                                 them to the trace clock
 *   produce_ns_lib_clock          produce_ns_caller_ts with atf_now_ns() per event
 *   produce_lib_clock_over_clock_ns  produce_ns_lib_clock - clock_ns (target <= 2)
 *   produce_ns_drained            producer cost per event while a consumer thread drains the
 *                                 same ring lazily (no event dropped)
 *   write_gbps                    plain write() of 1 MiB blocks to the session filesystem
 *   record_mevents_per_s          1 producer + drain thread, a real session, 100 M events,
 *                                 caller timestamps; the producer waits when the ring is full
 *   record_gbps, record_vs_write  the same in index bytes per second, and its ratio to write_gbps
 *   record_events_lost            events produced but not in the files, over all runs, and
 *   record_valid                  1 when none were lost, else 0 (the figures then measure
 *                                 a lossy recording)
 *   record_mevents_per_s_4threads 4 producers, 25 M events each, the default overflow policy
 *   record_dropped_pct_4threads   (ATF_OVERFLOW_BLOCK: a producer whose ring is full drains it
 *                                 itself): events written per second, and the share of events
 *                                 dropped because a ring was full (0 unless a file failed)
 *   record_4threads_valid         1 when no run dropped an event
 * The session directory is BR_DIR (default /tmp), removed after each run. */
#ifndef ATF_BENCH_RECORD_H
#define ATF_BENCH_RECORD_H

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BR_RUNS
#  define BR_RUNS 5
#endif
#ifndef BR_DIR
#  define BR_DIR "/tmp"
#endif
#ifndef BR_RECORD_EVENTS
#  define BR_RECORD_EVENTS 100000000ull
#endif
#ifndef BR_DRAIN_EVENTS
#  define BR_DRAIN_EVENTS (1ull << 22) /* 128 MiB of index events */
#endif

static double br_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int br_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double br_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, br_cmp);
    return v[n / 2];
}

static volatile uint64_t br_sink;

static void br_rm_rf(const char *path) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "bench_record: could not remove %s\n", path);
}

/* ---- producer cost ------------------------------------------------------------------- */

/* A private 64K-slot ring with its writer. */
typedef struct br_ring { void *mem; size_t size; atf_producer w; atf_ring c; } br_ring;

static int br_ring_make(br_ring *r, uint64_t slots) {
    r->size = atf_ring_memory_size(ATF_RING_INDEX, slots);
    if (posix_memalign(&r->mem, 64, r->size) != 0) return 0;
    memset(r->mem, 0, r->size);
    return atf_ring_init(r->mem, r->size, ATF_RING_INDEX, slots, ATF_LAYOUT_1, 1) == ATF_OK &&
           atf_producer_init(&r->w, r->mem, r->size, NULL, 0, ATF_DETAIL_OFF) == ATF_OK &&
           atf_producer_set_overflow(&r->w, ATF_OVERFLOW_DROP, 0) == ATF_OK && /* emptied by this thread */
           atf_ring_attach(&r->c, r->mem, r->size, 0) == ATF_OK;
}

/* Empties the ring at once (a consumer that keeps up), outside any timing. */
static void br_ring_empty(br_ring *r) {
    atf__store_release_u64(&r->c.shared->tail, atf__load_acquire_u64(&r->c.shared->head));
}

enum { BR_SLOTS = 65536, BR_BATCH = BR_SLOTS - 2 };

/* One batch: BR_BATCH calls/returns into the warm ring (emptied first, untimed); ns per
 * event. */
static double br_produce_batch(br_ring *r, int lib_clock) {
    uint64_t i, t0 = 1000;
    double start;
    br_ring_empty(r);
    start = br_seconds();
    if (lib_clock) {
        for (i = 0; i < BR_BATCH; i += 2) {
            atf_producer_call(&r->w, i, atf_now_ns());
            atf_producer_return(&r->w, i, atf_now_ns());
        }
    } else {
        for (i = 0; i < BR_BATCH; i += 2) {
            atf_producer_call(&r->w, i, t0 + i);
            atf_producer_return(&r->w, i, t0 + i + 1);
        }
    }
    return (br_seconds() - start) / BR_BATCH * 1e9;
}

/* The floor under produce_ns_caller_ts: the same batch into a power-of-two ring of as
 * many slots, storing each 32-byte event with four plain 8-byte stores, no atomics, no
 * full check, no head publication: what any in-memory tracer pays; ns per event. The
 * stores go through a volatile pointer, which keeps them scalar and in order: left
 * alone, the compiler vectorizes them (gcc 12 -O2 writes the two constant words of each
 * event with one 16-byte store; a vectorizer may also cover several events with one),
 * which a producer does not do: its words are computed per event, and it publishes each
 * event (a release store of its head) before writing the next. The floor would then sit
 * below any real producer's and the ratio would mean little. On x86-64 a volatile store
 * is the same single `mov` as a plain one (objdump -d shows eight 8-byte movs per
 * call/return pair of this loop, no vector store). */
static double br_floor_batch(volatile uint64_t *ring, uint64_t *pos) {
    uint64_t i, t0 = 1000, p = *pos;
    double start = br_seconds();
    for (i = 0; i < BR_BATCH; i += 2) {
        volatile uint64_t *call = ring + (p++ & (BR_SLOTS - 1)) * 4;
        volatile uint64_t *ret = ring + (p++ & (BR_SLOTS - 1)) * 4;
        call[0] = t0 + i, call[1] = i, call[2] = ATF_EVENT_CALL, call[3] = ATF_NO_DETAIL;
        ret[0] = t0 + i + 1, ret[1] = i, ret[2] = ATF_EVENT_RETURN, ret[3] = ATF_NO_DETAIL;
    }
    *pos = p;
    return (br_seconds() - start) / BR_BATCH * 1e9;
}

/* ns per event of the producer into a 64K-slot ring: the median of BR_RUNS runs of 64
 * batches, each batch timed alone. With floor_ns, each batch follows one of the store
 * floor, whose median goes there: interleaved, a slower phase of a busy machine (other
 * programs taking the shared cache or the memory bus) weighs on both alike. */
static double br_produce_ns(int lib_clock, double *floor_ns) {
    br_ring r;
    double produced[BR_RUNS * 64], floors[BR_RUNS * 64];
    uint64_t *mem = NULL, pos = 0;
    int run, n = 0;
    if (!br_ring_make(&r, BR_SLOTS)) return 0;
    if (floor_ns) {
        mem = (uint64_t *)malloc((size_t)BR_SLOTS * 4 * sizeof(uint64_t));
        if (!mem) {
            free(r.mem);
            return 0;
        }
        memset(mem, 0, (size_t)BR_SLOTS * 4 * sizeof(uint64_t));
    }
    for (run = -1; run < BR_RUNS; run++) { /* run -1 warms the rings and the caches */
        int round;
        for (round = 0; round < 64; round++) {
            double f = mem ? br_floor_batch(mem, &pos) : 0;
            double t = br_produce_batch(&r, lib_clock);
            if (run >= 0) {
                floors[n] = f;
                produced[n++] = t;
            }
        }
    }
    if (floor_ns) {
        *floor_ns = br_median(floors, n);
        br_sink += mem[((pos - 1) & (BR_SLOTS - 1)) * 4];
        free(mem);
    }
    br_sink += r.w.dropped;
    free(r.mem);
    return br_median(produced, n);
}

static double br_clock_ns(void) {
    double runs[BR_RUNS];
    int run;
    for (run = -1; run < BR_RUNS; run++) {
        uint64_t i, acc = 0;
        double start = br_seconds();
        for (i = 0; i < 2000000; i++) acc += atf_now_ns();
        br_sink += acc;
        if (run >= 0) runs[run] = (br_seconds() - start) / 2e6 * 1e9;
    }
    return br_median(runs, BR_RUNS);
}

/* A lazy consumer on another thread: sleeps ~50 us when the ring is empty, then takes
 * everything (what the drain does, minus the files). */
typedef struct br_consumer { br_ring *r; volatile int stop; uint64_t taken; } br_consumer;

static void *br_consumer_main(void *arg) {
    br_consumer *x = (br_consumer *)arg;
    atf_ring *c = &x->r->c;
    for (;;) {
        uint64_t head = atf__load_acquire_u64(&c->shared->head);
        if (head != c->pos) {
            x->taken += head - c->pos;
            c->pos = head;
            atf__store_release_u64(&c->shared->tail, head);
            continue;
        }
        if (x->stop) break;
        {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* The producer waits when the ring is full (ATF_OVERFLOW_BLOCK on caller memory): with
 * the drop policy every drop would open a gap whose record this bare consumer never takes,
 * and once the writer's gap queue is full every later event would be dropped too. */
static double br_produce_drained_ns(void) {
    br_ring r;
    double runs[BR_RUNS];
    int run;
    if (!br_ring_make(&r, 65536) || atf_producer_set_overflow(&r.w, ATF_OVERFLOW_BLOCK, 0) != ATF_OK)
        return 0;
    for (run = 0; run < BR_RUNS; run++) {
        br_consumer x;
        pthread_t t;
        uint64_t i, n = 20000000, full = 0;
        double start;
        memset(&x, 0, sizeof x);
        x.r = &r;
        x.r->c.pos = atf__load_acquire_u64(&r.c.shared->tail);
        pthread_create(&t, NULL, br_consumer_main, &x);
        start = br_seconds();
        for (i = 0; i < n; i += 2) {
            while (atf_producer_call(&r.w, i, i) != ATF_OK) full++;
            while (atf_producer_return(&r.w, i, i + 1) != ATF_OK) full++;
        }
        runs[run] = (br_seconds() - start) / (double)n * 1e9;
        x.stop = 1;
        pthread_join(t, NULL);
        br_sink += full + x.taken;
    }
    free(r.mem);
    return br_median(runs, BR_RUNS);
}

/* ---- drain cost ------------------------------------------------------------------------ */

/* Seconds to write `n` bytes of `data` with 256 KiB pwrite() calls into a fresh file
 * `path` (removed after unless keep); negative on failure. */
static double br_write_file(const char *path, const uint8_t *data, size_t n, int keep) {
    enum { CHUNK = 1 << 18 };
    size_t off;
    double start;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    start = br_seconds();
    for (off = 0; off < n; off += CHUNK) {
        size_t len = n - off < CHUNK ? n - off : CHUNK;
        if (pwrite(fd, data + off, len, (off_t)off) != (ssize_t)len) break;
    }
    start = off >= n ? br_seconds() - start : -1;
    close(fd);
    if (!keep) unlink(path);
    return start;
}

static double br_write_fresh(const char *path, const uint8_t *data, size_t n) {
    return br_write_file(path, data, n, 0);
}

/* Two files of n bytes in dir, written and then removed: 2 n bytes of page cache the
 * kernel has handed out before and hands out again to the timed writers. */
static void br_warm_page_cache(const char *dir, const uint8_t *data, size_t n) {
    char a[1100], b[1100];
    snprintf(a, sizeof a, "%s/warm_a", dir);
    snprintf(b, sizeof b, "%s/warm_b", dir);
    if (br_write_file(a, data, n, 1) < 0 || br_write_file(b, data, n, 1) < 0)
        fprintf(stderr, "bench_record: cannot write %s\n", a);
    unlink(a);
    unlink(b);
}

/* ns per event of one pump that moves BR_DRAIN_EVENTS events (pushed beforehand, in a
 * ring that holds them all) from the ring into a fresh index.atf; median of BR_RUNS
 * sessions. 0 on failure. *limit (optional) receives the ns per event of plain writes of
 * the same bytes (see drain_limit_ns_per_event at the top). */
static double br_drain_ns(uint32_t stamp_clock, double *limit) {
    double runs[BR_RUNS], limits[BR_RUNS];
    int run;
    for (run = 0; run < BR_RUNS; run++) {
        atf_session *s = NULL;
        atf_session_config cfg;
        atf_thread_stats st;
        atf_producer *w;
        char dir[1024], name[64], plain[1100];
        uint64_t i, n = BR_DRAIN_EVENTS - 2;
        double start, elapsed, raw = 0;
        memset(&cfg, 0, sizeof cfg);
        cfg.index_ring_events = BR_DRAIN_EVENTS;
        cfg.drain_mode = ATF_DRAIN_MANUAL;
        cfg.stamp_clock = stamp_clock;
        snprintf(name, sizeof name, "atf_bench_drain_%d", (int)getpid());
        cfg.session_name = name;
        snprintf(dir, sizeof dir, "%s/%s", BR_DIR, name);
        if (atf_session_open(&s, BR_DIR, &cfg) != ATF_OK) return 0;
        w = atf_session_producer(s);
        if (!w) {
            atf_session_close(s);
            br_rm_rf(dir);
            return 0;
        }
        for (i = 0; i < n; i += 2) { /* the whole ring is touched here, not in the timing */
            uint64_t t = stamp_clock == ATF_STAMP_TICKS ? atf_ticks() : 1000 + i;
            atf_producer_call(w, i & 1023, t);
            atf_producer_return(w, i & 1023, stamp_clock == ATF_STAMP_TICKS ? atf_ticks() : t + 1);
        }
        snprintf(plain, sizeof plain, "%s/plain_write", dir);
        br_warm_page_cache(dir, w->index.data, (size_t)n * 32); /* see the top */
        if (limit && run % 2) raw = br_write_fresh(plain, w->index.data, (size_t)n * 32);
        start = br_seconds();
        atf_session_pump(s);
        elapsed = br_seconds() - start;
        if (limit && !(run % 2)) raw = br_write_fresh(plain, w->index.data, (size_t)n * 32);
        if (limit && raw <= 0) elapsed = 0;
        if (atf_session_thread_stats(s, 0, &st) != ATF_OK || st.events_written != n) {
            fprintf(stderr, "bench_record: the drain wrote %llu events of %llu\n",
                    (unsigned long long)st.events_written, (unsigned long long)n);
            elapsed = 0;
        }
        atf_session_close(s);
        br_rm_rf(dir);
        if (elapsed <= 0) return 0;
        runs[run] = elapsed / (double)n * 1e9;
        limits[run] = raw / (double)n * 1e9;
    }
    if (limit) *limit = br_median(limits, BR_RUNS);
    return br_median(runs, BR_RUNS);
}

/* ---- the file system's limit ---------------------------------------------------------- */

static double br_write_gbps(void) {
    enum { BLOCK = 1 << 20, BLOCKS = 2048 };
    char path[256];
    double runs[BR_RUNS];
    uint8_t *buf = (uint8_t *)malloc(BLOCK);
    int run;
    if (!buf) return 0;
    memset(buf, 0x5A, BLOCK);
    snprintf(path, sizeof path, "%s/atf_bench_write_%d", BR_DIR, (int)getpid());
    for (run = 0; run < BR_RUNS; run++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), k;
        double start = br_seconds();
        if (fd < 0) break;
        for (k = 0; k < BLOCKS; k++)
            if (write(fd, buf, BLOCK) != BLOCK) break;
        runs[run] = (double)BLOCK * BLOCKS / (br_seconds() - start) / 1e9;
        close(fd);
        unlink(path);
    }
    free(buf);
    return run == BR_RUNS ? br_median(runs, BR_RUNS) : 0;
}

/* ---- whole sessions ------------------------------------------------------------------- */

static uint64_t br_ring_events = 1u << 18; /* 8 MiB per thread */

typedef struct br_producer {
    atf_session *s;
    uint64_t n, dropped;
    int wait_when_full;
} br_producer;

static void *br_producer_main(void *arg) {
    br_producer *p = (br_producer *)arg;
    atf_producer *w = atf_session_producer(p->s);
    uint64_t i;
    if (!w) return NULL;
    for (i = 0; i < p->n; i += 2) {
        if (p->wait_when_full) {
            while (atf_producer_call(w, i, i) != ATF_OK) {
                w->depth--;
                sched_yield();
            }
            while (atf_producer_return(w, i, i + 1) != ATF_OK) {
                w->depth++;
                sched_yield();
            }
        } else {
            atf_producer_call(w, i, i);
            atf_producer_return(w, i, i + 1);
        }
    }
    p->dropped = p->wait_when_full ? 0 : w->dropped; /* waiting: refused pushes were retried */
    atf_session_detach(p->s);
    return NULL;
}

/* Seconds from the first event to a closed session with `threads` producers of `n`
 * events each; *written and *dropped receive the totals. 0 on failure. */
static double br_session_run(int threads, uint64_t n, int wait_when_full, uint64_t *written,
                             uint64_t *dropped) {
    atf_session *s = NULL;
    atf_session_config cfg;
    br_producer p[8];
    pthread_t t[8];
    char dir[1024], name[64];
    double start, elapsed;
    int i;
    uint32_t slot;
    memset(&cfg, 0, sizeof cfg);
    cfg.index_ring_events = br_ring_events;
    snprintf(name, sizeof name, "atf_bench_record_%d", (int)getpid());
    cfg.session_name = name;
    if (atf_session_open(&s, BR_DIR, &cfg) != ATF_OK) return 0;
    snprintf(dir, sizeof dir, "%s/%s", BR_DIR, name);
    *written = *dropped = 0;
    start = br_seconds();
    for (i = 0; i < threads; i++) {
        p[i].s = s;
        p[i].n = n;
        p[i].dropped = 0;
        p[i].wait_when_full = wait_when_full;
        pthread_create(&t[i], NULL, br_producer_main, &p[i]);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        *dropped += p[i].dropped;
    }
    for (slot = 0; slot < atf_session_thread_count(s); slot++) {
        atf_thread_stats st;
        atf_session_pump(s);
        if (atf_session_thread_stats(s, slot, &st) == ATF_OK) *written += st.events_written;
    }
    if (atf_session_close(s) != ATF_OK) {
        br_rm_rf(dir);
        return 0;
    }
    elapsed = br_seconds() - start;
    br_rm_rf(dir);
    return elapsed;
}

static void bench_record(void (*report)(const char *name, double value)) {
    double clock_ns = br_clock_ns(), floor_ns = 0, wr, runs[BR_RUNS];
    double drops[BR_RUNS], produce, drain, limit = 0, lib_clock;
    uint64_t written = 0, dropped = 0, lost = 0;
    int run, ok = 1;
    report("clock_ns", clock_ns);
    produce = br_produce_ns(0, &floor_ns);
    report("store_floor_ns", floor_ns);
    drain = br_drain_ns(ATF_STAMP_NS, &limit);
    report("produce_ns_caller_ts", produce);
    if (produce > 0 && floor_ns > 0) report("produce_vs_store_floor", produce / floor_ns);
    report("drain_ns_per_event", drain);
    if (produce > 0 && drain > 0) report("drain_vs_produce", drain / produce);
    report("drain_limit_ns_per_event", limit);
    if (limit > 0 && drain > 0) report("drain_vs_limit", drain / limit);
    report("drain_ns_per_event_ticks", br_drain_ns(ATF_STAMP_TICKS, NULL));
    lib_clock = br_produce_ns(1, NULL);
    report("produce_ns_lib_clock", lib_clock);
    if (lib_clock > 0) report("produce_lib_clock_over_clock_ns", lib_clock - clock_ns);
    report("produce_ns_drained", br_produce_drained_ns());
    wr = br_write_gbps();
    report("write_gbps", wr);
    for (run = 0; run < BR_RUNS && ok; run++) {
        double t = br_session_run(1, BR_RECORD_EVENTS, 1, &written, &dropped);
        ok = t > 0;
        lost += BR_RECORD_EVENTS - (written < BR_RECORD_EVENTS ? written : BR_RECORD_EVENTS);
        runs[run] = ok ? (double)written / t : 0;
    }
    if (ok) {
        double eps = br_median(runs, BR_RUNS);
        report("record_mevents_per_s", eps / 1e6);
        report("record_gbps", eps * ATF_INDEX_EVENT_SIZE / 1e9);
        if (wr > 0) report("record_vs_write", eps * ATF_INDEX_EVENT_SIZE / 1e9 / wr);
        report("record_events_lost", (double)lost);
        report("record_valid", lost == 0);
    }
    for (run = 0, ok = 1, lost = 0; run < BR_RUNS && ok; run++) {
        double t = br_session_run(4, BR_RECORD_EVENTS / 4, 0, &written, &dropped);
        ok = t > 0;
        lost += dropped;
        runs[run] = ok ? (double)written / t : 0;
        drops[run] = 100.0 * (double)dropped / (double)BR_RECORD_EVENTS;
    }
    if (ok) {
        report("record_mevents_per_s_4threads", br_median(runs, BR_RUNS) / 1e6);
        report("record_dropped_pct_4threads", br_median(drops, BR_RUNS));
        report("record_4threads_valid", lost == 0);
    }
}

#endif
