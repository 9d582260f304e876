/* bench_instrument.h - what the auto-tracer (tools/instrument/atf_instrument.c) costs
 * per traced call, next to uftrace and LTTng-UST when they are installed. Linux.
 *
 *   static void bench_instrument(void (*report)(const char *name, double value));
 *
 * Times whole processes (fork, exec, wait; wall clock; the median of BENCH_INSTRUMENT_RUNS
 * interleaved runs) of programs the Makefile builds from bench/bench_fib.c into
 * BENCH_INSTRUMENT_DIR (default build/bench_progs; the environment variable
 * ATF_BENCH_PROGS overrides it):
 *   fib_plain N                        no tracing: the baseline (and fib_plain N THREADS,
 *                                      fib_traced N THREADS: fib(N) in each of THREADS
 *                                      threads, twice as many as cores)
 *   fib_traced N                       -finstrument-functions + atf_instrument.c, writing
 *                                      a session into a temporary directory
 *   ATF_TRACE_NOTRACE=fib fib_traced N the same with fib left out by the filters, and
 *                                      both this and fib_plain on fib(1)
 *   fib_cyg N                          the same -finstrument-functions code, no tracer
 *   uftrace record -d DIR fib_cyg N    the same -finstrument-functions code without our
 *                                      hooks (glibc's empty ones, which uftrace replaces)
 *   uftrace record -d DIR fib_pg N     -pg, uftrace's other way in
 *   LD_PRELOAD=liblttng-ust-cyg-profile-fast.so fib_cyg N
 *                                      inside an LTTng session (created, started before and
 *                                      stopped, destroyed after each run, untimed); a
 *                                      session daemon is started for the benchmark when
 *                                      none answers, and stopped at the end
 *   fib_funtrace N [THREADS]           fib_traced's object (fib_hooked.o) linked with
 *                                      funtrace's runtime instead of ours; built and run
 *                                      when make is given FUNTRACE_SRC (see the Makefile)
 * fib(N) makes 2 fib(N + 1) - 1 calls, main one more; N is 30 (ATF_BENCH_FIB_N overrides).
 * A peer that is not installed is skipped with a note.
 *
 * Our traced runs write the packed layout, as atf record does.
 *
 * Figures, in ns per traced call (extra wall time over the baseline / calls):
 *   instrument_overhead_ns_per_call     ours, start-up and finalization included
 *   instrument_cpu_ns_per_call          extra CPU time (user + system, every thread, the
 *                                       drain included): less sensitive to a busy machine
 *   instrument_clock_floor_ns_per_call  two atf_now_ns() reads: what timestamping the
 *                                       entry and the exit of a call costs on this machine,
 *                                       a floor for any tracer that does it
 *   instrument_tick_floor_ns_per_call   two atf_ticks() reads: the same floor for the tick
 *                                       stamps the auto-tracer uses (converted by the drain)
 *   instrument_vs_tick_floor            overhead / tick floor (wall time)
 *   floor_ns_per_call                   two atf_ticks() reads and two 32-byte stores into an
 *                                       L1-resident ring: what recording a call's entry and
 *                                       exit cannot cost less than on this machine
 *   instrument_vs_floor                 instrument_cpu_ns_per_call / floor (target <= 1.5):
 *                                       every thread's CPU, the drain's included
 *   bare_recorder_cpu_ns_per_call       every thread's CPU a call of a bare recorder made
 *                                       of this library's steps (bi_bare_recorder_ns): the
 *                                       floor's producer, and a consumer thread that
 *                                       converts, checks, packs, evicts and writes each
 *                                       batch; no hooks, no session
 *   bare_recorder_vs_floor              that / floor: what those steps cost beside the floor
 *   instrument_vs_bare_recorder         instrument_cpu_ns_per_call / that
 *   instrument_paused_ns                the thread's pauses in the last traced run (its
 *                                       own full ring written out: pauses.atf)
 *   instrument_threads_cpu_ns_per_call  the same CPU figure for fib(N - 2) in each of twice
 *   instrument_threads_vs_floor         as many threads as cores (target <= 1.5), with the
 *   instrument_threads_events_lost      last run's events lost (expected 0) and pauses
 *   instrument_threads_paused_ns
 *   instrument_threads_valid            1 when that run kept every event, else 0
 *   instrument_events_dropped           in the last traced run (expected 0)
 *   instrument_events_lost              dropped + lost to I/O, in the last traced run
 *   instrument_overhead_valid           1 when that run kept every event (the session
 *                                       holds 2 events per call, none lost), else 0:
 *                                       the overhead figures then measure a lossy trace
 *   instrument_filtered_ns_per_call     a call the filters leave out: fib_traced run with
 *                                       ATF_TRACE_NOTRACE=fib (main alone is recorded;
 *                                       ATF_TRACE_FILTER=main takes the same path: the
 *                                       function is cached as left out at its first call),
 *                                       extra CPU time (user + system, every thread) over
 *                                       the baseline per call, less the tracer's fixed
 *                                       cost (the same two programs run on fib(1):
 *                                       start-up and finalization, which would otherwise
 *                                       be spread over the calls). CPU time, not wall:
 *                                       a few ns per call is a few ms per run, which wall
 *                                       time on a busy two-core machine swings by 2-3x
 *   instrument_fixed_ms                 that fixed cost, CPU ms
 *   instrument_hook_floor_ns_per_call   fib_cyg without a tracer: the hooks called and
 *                                       returning at once (glibc's empty ones, through
 *                                       the PLT), extra CPU time over the baseline per
 *                                       call: what a filtered-out call would cost if the
 *                                       tracer did nothing but find it in its per-thread
 *                                       cache for free
 *   instrument_filtered_vs_hook_floor   filtered / hook floor (target <= 1.25)
 *   instrument_filtered_valid           1 when the last filtered run's session holds no
 *                                       event of fib (counted through the session reader:
 *                                       every event that is not main's), main's call and
 *                                       return, none lost; else 0
 *   uftrace_overhead_ns_per_call        uftrace on fib_cyg, and its CPU time the same way
 *   uftrace_cpu_ns_per_call
 *   instrument_vs_uftrace               uftrace / ours (target >= 3), and in CPU time
 *   instrument_vs_uftrace_cpu
 *   uftrace_pg_overhead_ns_per_call     uftrace on fib_pg, and uftrace / ours
 *   instrument_vs_uftrace_pg
 *   lttng_overhead_ns_per_call          LTTng-UST's fast cyg-profile tracer on fib_cyg
 *   instrument_vs_lttng                 LTTng / ours (target >= 5)
 *   lttng_events_lost                   entry and exit events missing from LTTng's trace of
 *                                       the last run (babeltrace2 counts what it kept)
 * Against funtrace (when built), which keeps only the last 1 MiB of events of each thread
 * (16 bytes an event): fib(N + 2) on one thread and fib(N) in each of twice as many
 * threads as cores, plain, ours and funtrace, each program also on fib(1) with as many
 * threads: its fixed cost (start-up and exit; funtrace's includes a 100-ms calibration
 * sleep where the CPU does not name its TSC rate).
 * Wall time per call, each fixed cost subtracted: ((fib(n) - fib(1)) - the same for
 * plain) / the calls beyond fib(1)'s:
 *   instrument_net_ns_per_call          ours, one thread
 *   funtrace_ns_per_call                funtrace, and its CPU time the same way (user +
 *   funtrace_cpu_ns_per_call            system)
 *   instrument_vs_funtrace              funtrace / ours (target >= 1: below funtrace's
 *                                       while keeping every event)
 *   instrument_threads_net_ns_per_call  the same for the threads
 *   funtrace_threads_ns_per_call
 *   instrument_threads_vs_funtrace
 *   instrument_net_valid                1 when ours kept every event in the last runs of
 *                                       both sizes, else 0
 *
 * Then the whole of a multi-threaded CPU-bound run, from tests/programs/busy.c (one
 * busy thread per core, each counting its own calls), built as busy_plain, busy_traced
 * (the auto-tracer, default settings: ATF_OVERFLOW_BLOCK) and busy_cyg (the same
 * -finstrument-functions code without the auto-tracer: glibc's empty hooks, which
 * uftrace's libmcount replaces). Wall time of the program run, median of
 * BENCH_COMPLETE_RUNS interleaved runs:
 *   complete_trace_plain_s              busy_plain
 *   complete_trace_s                    busy_traced, finalized session included
 *   complete_trace_events               index events in the last traced session
 *   complete_trace_dropped              its events_dropped + events_lost_io (manifest)
 *   complete_trace_valid                1 when events = 2 x the calls the program counted,
 *                                       none dropped, no gap
 *   complete_trace_uftrace_s            uftrace record -d DIR busy_cyg (when installed)
 *   complete_trace_vs_uftrace           uftrace time / ours
 * Include atf.h (with ATF_IMPLEMENTATION in one file) before this file.
 */
#ifndef BENCH_INSTRUMENT_H
#define BENCH_INSTRUMENT_H

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_INSTRUMENT_DIR
#  define BENCH_INSTRUMENT_DIR "build/bench_progs"
#endif
#ifndef BENCH_INSTRUMENT_RUNS
#  define BENCH_INSTRUMENT_RUNS 7
#endif
#ifndef BENCH_COMPLETE_RUNS
#  define BENCH_COMPLETE_RUNS 3
#endif

static double bi_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bi_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bi_median(double *v, size_t n) {
    qsort(v, n, sizeof *v, bi_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bi_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void bi_rm_tree(const char *path) {
    nftw(path, bi_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* User + system seconds of a struct rusage. */
static double bi_rusage_s(const struct rusage *ru) {
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Wall seconds of one run of argv (stdout to the file `out` when given, else with stderr
 * to /dev/null; working directory cwd), with ATF_TRACE_DIR=trace_dir, LD_PRELOAD=preload
 * and the NAME=value strings of env (NULL-terminated) when given; a negative value when
 * it failed. *cpu receives the user + system seconds of the process, its threads and the
 * children it waited for (uftrace's recorder included). */
static double bi_run(char *const argv[], const char *cwd, const char *trace_dir,
                     const char *out, const char *preload, char *const env[], double *cpu) {
    double t0 = bi_now(), t1;
    int status = 0;
    struct rusage ru;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (out && (fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) dup2(fd, 1);
        if (trace_dir) {
            setenv("ATF_TRACE_DIR", trace_dir, 1);
            setenv("ATF_TRACE_QUIET", "1", 1);
            setenv("ATF_TRACE_LAYOUT", "packed", 1); /* as atf record records */
        }
        if (preload) setenv("LD_PRELOAD", preload, 1);
        while (env && *env) putenv(*env++);
        if (chdir(cwd) != 0) _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid) return -1;
    t1 = bi_now();
    *cpu = bi_rusage_s(&ru);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t1 - t0 : -1;
}

/* Opens the one pid_* session under root; 1 when it did. */
static int bi_session_open(atf_session_reader *r, const char *root) {
    char cmd[2048], dir[1024] = "";
    FILE *p;
    snprintf(cmd, sizeof cmd, "ls -d '%s'/session_*/pid_* 2>/dev/null", root);
    p = popen(cmd, "r");
    if (!p) return 0;
    if (!fgets(dir, sizeof dir, p)) dir[0] = '\0';
    pclose(p);
    dir[strcspn(dir, "\n")] = '\0';
    return dir[0] && atf_session_reader_open(r, dir, NULL) == ATF_OK;
}

/* Index events of the one pid_* session under root (0 when unreadable); *dropped, *lost
 * and *gaps receive the manifest's events_dropped, events_dropped + events_lost_io and
 * gaps, summed over the threads. */
static uint64_t bi_session_events(const char *root, uint64_t *dropped, uint64_t *lost,
                                  uint64_t *gaps) {
    atf_session_reader r;
    uint64_t events = 0;
    size_t i;
    *dropped = *lost = *gaps = 0;
    if (!bi_session_open(&r, root)) return 0;
    for (i = 0; i < r.thread_count; i++) {
        if (!r.threads[i].missing) events += r.threads[i].reader.index.event_count;
        *dropped += r.threads[i].events_dropped;
        *lost += r.threads[i].events_dropped + r.threads[i].events_lost_io;
        *gaps += r.threads[i].gaps;
    }
    atf_session_reader_close(&r);
    return events;
}

/* The events of the one pid_* session under root whose function the manifest names
 * `name` (into *named), and all the others, unnamed ones included (returned); -1 when
 * the session or one of its threads does not open. */
static int64_t bi_session_events_not_of(const char *root, const char *name, uint64_t *named) {
    atf_session_reader r;
    int64_t others = 0;
    size_t i;
    uint64_t k;
    *named = 0;
    if (!bi_session_open(&r, root)) return -1;
    for (i = 0; i < r.thread_count && others >= 0; i++) {
        const atf_index_reader *ix = &r.threads[i].reader.index;
        if (r.threads[i].open_result != ATF_OK) {
            others = -1;
            break;
        }
        for (k = 0; k < ix->event_count; k++) {
            atf_index_event e;
            const char *fn;
            if (atf_index_reader_get(ix, k, &e) != ATF_OK) {
                others = -1;
                break;
            }
            fn = atf_session_reader_symbol(&r, e.function_id);
            if (fn && strcmp(fn, name) == 0) (*named)++;
            else others++;
        }
    }
    atf_session_reader_close(&r);
    return others;
}

/* ns per atf_now_ns() call, median of 5 batches. */
static double bi_clock_ns(void) {
    double v[5];
    size_t k, i, n = 1000000;
    volatile uint64_t sink = 0;
    for (k = 0; k < 5; k++) {
        double t0 = bi_now();
        for (i = 0; i < n; i++) sink += atf_now_ns();
        v[k] = (bi_now() - t0) / (double)n * 1e9;
    }
    (void)sink;
    return bi_median(v, 5);
}

/* ns per atf_ticks() call, median of 5 batches. */
static double bi_ticks_ns(void) {
    double v[5];
    size_t k, i, n = 1000000;
    volatile uint64_t sink = 0;
    for (k = 0; k < 5; k++) {
        double t0 = bi_now();
        for (i = 0; i < n; i++) sink += atf_ticks();
        v[k] = (bi_now() - t0) / (double)n * 1e9;
    }
    (void)sink;
    return bi_median(v, 5);
}

/* ns per call of the floor: two atf_ticks() reads and two 32-byte stores (a call's entry
 * and exit records) into a 4 KiB ring that stays in L1, median of 5 batches. The stores
 * go through a volatile pointer, so that they are made as written. */
static double bi_floor_ns(void) {
    static uint64_t ring[512];
    volatile uint64_t *q = ring;
    double v[5];
    size_t k, i, n = 1000000;
    for (k = 0; k < 5; k++) {
        double t0 = bi_now();
        for (i = 0; i < n; i++) {
            size_t at = (i * 8) & 511;
            uint64_t a = atf_ticks();
            q[at] = a, q[at + 1] = i, q[at + 2] = 1, q[at + 3] = 0;
            a = atf_ticks();
            q[at + 4] = a, q[at + 5] = i, q[at + 6] = 2, q[at + 7] = 0;
        }
        v[k] = (bi_now() - t0) / (double)n * 1e9;
    }
    return bi_median(v, 5);
}

/* ---- a bare recorder ------------------------------------------------------------------ */
/* A complete recorder made of this library's own steps and nothing else: a producer
 * thread at the floor (two atf_ticks() and two 32-byte records a call, as bi_floor_ns)
 * into a 4-MiB single-producer single-consumer ring, and a consumer thread doing what no
 * drain can skip, on batches of up to 8192 events: each stamp converted (a
 * multiply-shift), the CRC32-C of the records (an index footer's), the records coded
 * packed (atf__pack_run), the ring lines it read evicted (atf__mem_evict), the packed
 * bytes written to a file; it polls every 50 us when the ring is empty. No hooks,
 * session, bookkeeping or second file. The figure: every thread's CPU a call. It is not
 * a floor (the auto-tracer's drain is more tuned than this consumer), but it shows what
 * the steps themselves cost beside the floor, in the same run. */
enum { BI_PIPE_EVENTS = 1 << 17, BI_PIPE_BATCH = 8192 };

typedef struct bi_pipe {
    uint8_t *ring;           /* BI_PIPE_EVENTS records of 32 bytes */
    uint64_t head, tail;     /* published with release stores */
    int stop, fd;
    uint32_t crc;            /* the consumer's CRC, kept: a result nobody reads could let
                                the compiler drop the work it measures */
} bi_pipe;

static void bi_pipe_put(bi_pipe *p, uint64_t *head, uint64_t *tail, uint64_t ts, uint64_t fn,
                        uint32_t kind, uint32_t depth) {
    uint8_t *rec;
    uint64_t v[4];
    while (*head - *tail >= BI_PIPE_EVENTS) *tail = __atomic_load_n(&p->tail, __ATOMIC_ACQUIRE);
    v[0] = ts; /* the layout-1 record, in host order: a little-endian host's file order */
    v[1] = fn;
    v[2] = 1u | (uint64_t)kind << 32;
    v[3] = depth | (uint64_t)ATF_NO_DETAIL_U32 << 32;
    rec = p->ring + ((*head & (BI_PIPE_EVENTS - 1)) << 5);
    memcpy(rec, &v[0], 8); /* one store each (a 32-byte copy from v goes through memory) */
    memcpy(rec + 8, &v[1], 8);
    memcpy(rec + 16, &v[2], 8);
    memcpy(rec + 24, &v[3], 8);
    __atomic_store_n(&p->head, ++*head, __ATOMIC_RELEASE);
}

/* The consumer's work on n records at `in`: converted into `piece`, checked, packed,
 * evicted, written. */
static void bi_pipe_batch(bi_pipe *p, const uint8_t *in, size_t n, uint8_t *piece,
                          uint8_t *packed, atf__pack_state *st, uint32_t *crc, uint64_t *off) {
    size_t k, len;
    for (k = 0; k < n; k++) { /* ns = base + ticks * 3/2: the shape of the drain's step */
        uint64_t t = atf__pack_load_le64(in + (k << 5)), ns = 1000 + ((t * 3) >> 1);
        memcpy(piece + (k << 5), &ns, 8);
        memcpy(piece + (k << 5) + 8, in + (k << 5) + 8, 24);
    }
    *crc = atf_crc32c_update(*crc, piece, n << 5);
    len = (size_t)(atf__pack_run(st, piece, n, packed) - packed);
    atf__mem_evict(in, n << 5);
    if (pwrite(p->fd, packed, len, (off_t)*off) == (ssize_t)len) *off += len;
}

static void *bi_pipe_consume(void *arg) {
    bi_pipe *p = (bi_pipe *)arg;
    uint64_t pos = 0, off = 0;
    uint32_t crc = 0;
    uint8_t *piece = (uint8_t *)malloc((size_t)BI_PIPE_BATCH << 5);
    uint8_t *packed = (uint8_t *)malloc((size_t)BI_PIPE_BATCH * (ATF_PACKED_EVENT_MAX + 1));
    atf__pack_state st;
    atf__pack_state_init(&st, 1);
    while (piece && packed) {
        uint64_t head = __atomic_load_n(&p->head, __ATOMIC_ACQUIRE);
        if (pos == head) {
            if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) break;
            atf__sleep_us(50);
            continue;
        }
        while (pos < head) {
            uint64_t at = pos & (BI_PIPE_EVENTS - 1), n = head - pos;
            if (n > BI_PIPE_EVENTS - at) n = BI_PIPE_EVENTS - at;
            if (n > BI_PIPE_BATCH) n = BI_PIPE_BATCH;
            bi_pipe_batch(p, p->ring + (at << 5), (size_t)n, piece, packed, &st, &crc, &off);
            pos += n;
            __atomic_store_n(&p->tail, pos, __ATOMIC_RELEASE);
        }
    }
    p->crc = crc;
    free(piece);
    free(packed);
    return NULL;
}

static double bi_cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return bi_rusage_s(&u);
}

/* The median over 5 runs of 4 M calls; 0 when it cannot run. `path`: the file written. */
static double bi_bare_recorder_ns(const char *path) {
    enum { CALLS = 4000000 };
    double v[5];
    size_t r, i;
    bi_pipe p;
    memset(&p, 0, sizeof p);
    if (posix_memalign((void **)&p.ring, (size_t)1 << 21, (size_t)BI_PIPE_EVENTS << 5) != 0) return 0;
    atf__mem_hugepages(p.ring, (size_t)BI_PIPE_EVENTS << 5); /* as the rings are */
    memset(p.ring, 0, (size_t)BI_PIPE_EVENTS << 5); /* faulted in before the clock starts */
    for (r = 0; r < 5; r++) {
        pthread_t consumer;
        uint64_t head = 0, tail = 0;
        double c0;
        p.head = p.tail = 0;
        p.stop = 0;
        p.fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        c0 = bi_cpu_s();
        if (p.fd < 0 || pthread_create(&consumer, NULL, bi_pipe_consume, &p) != 0) {
            if (p.fd >= 0) close(p.fd);
            free(p.ring);
            return 0;
        }
        for (i = 0; i < CALLS; i++) {
            bi_pipe_put(&p, &head, &tail, atf_ticks(), 1, ATF_EVENT_CALL, 0);
            bi_pipe_put(&p, &head, &tail, atf_ticks(), 1, ATF_EVENT_RETURN, 0);
        }
        __atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
        pthread_join(consumer, NULL);
        v[r] = (bi_cpu_s() - c0) / CALLS * 1e9;
        close(p.fd);
        unlink(path);
    }
    free(p.ring);
    return bi_median(v, 5);
}

/* The manifest's paused_ns of every thread of the one pid_* session under root. */
static uint64_t bi_session_paused(const char *root) {
    atf_session_reader r;
    uint64_t paused = 0;
    size_t i;
    if (!bi_session_open(&r, root)) return 0;
    for (i = 0; i < r.thread_count; i++) paused += r.threads[i].paused_ns;
    atf_session_reader_close(&r);
    return paused;
}

/* The calls busy printed in its "busy: total N" line in file `path`, 0 when absent. */
static uint64_t bi_busy_total(const char *path) {
    char line[256];
    unsigned long long total = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "busy: total %llu", &total) == 1) break;
    fclose(f);
    return total;
}

/* The busy sample traced whole (see the top of the file); programs in dir. */
static void bi_complete_trace(const char *dir, int have_uftrace,
                              void (*report)(const char *name, double value)) {
    char plain[PATH_MAX + 32], traced[PATH_MAX + 32], cyg[PATH_MAX + 32];
    char tmp[] = "/tmp/atf_bench_complete_XXXXXX", trace_dir[128], ud[128], out[128];
    double t_plain[BENCH_COMPLETE_RUNS], t_traced[BENCH_COMPLETE_RUNS];
    double t_uftrace[BENCH_COMPLETE_RUNS], cpu, ours;
    uint64_t total, events, dropped, lost, gaps;
    size_t r;
    int valid;
    snprintf(plain, sizeof plain, "%s/busy_plain", dir);
    snprintf(traced, sizeof traced, "%s/busy_traced", dir);
    snprintf(cyg, sizeof cyg, "%s/busy_cyg", dir);
    if (access(plain, X_OK) != 0 || access(traced, X_OK) != 0) {
        fprintf(stderr, "bench_instrument: no %s or %s (build them with make bench)\n", plain,
                traced);
        return;
    }
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "bench_instrument: mkdtemp failed\n");
        return;
    }
    snprintf(trace_dir, sizeof trace_dir, "%s/traces", tmp);
    snprintf(ud, sizeof ud, "%s/uftrace.data", tmp);
    snprintf(out, sizeof out, "%s/busy.out", tmp);
    if (!have_uftrace)
        printf("  (uftrace not installed: complete_trace_uftrace_s and complete_trace_vs_uftrace "
               "skipped)\n");
    else if (access(cyg, X_OK) != 0) {
        printf("  (no %s: the uftrace figures skipped)\n", cyg);
        have_uftrace = 0;
    }
    for (r = 0; r < BENCH_COMPLETE_RUNS; r++) { /* interleaved: drift hits all alike */
        char *a_plain[] = {plain, NULL};
        char *a_traced[] = {traced, NULL};
        char *a_uftrace[] = {(char *)"uftrace", (char *)"record", (char *)"-d", ud, cyg, NULL};
        t_plain[r] = bi_run(a_plain, tmp, NULL, out, NULL, NULL, &cpu);
        bi_rm_tree(trace_dir); /* the last run's session is kept for the check below */
        t_traced[r] = bi_run(a_traced, tmp, trace_dir, NULL, NULL, NULL, &cpu);
        if (have_uftrace) {
            bi_rm_tree(ud);
            t_uftrace[r] = bi_run(a_uftrace, tmp, NULL, NULL, NULL, NULL, &cpu);
            bi_rm_tree(ud); /* ~150 MB: not kept while ours runs */
        }
        if (t_plain[r] < 0 || t_traced[r] < 0 || (have_uftrace && t_uftrace[r] < 0)) {
            fprintf(stderr, "bench_instrument: a busy run failed (plain %.3f, traced %.3f, "
                            "uftrace %.3f)\n",
                    t_plain[r], t_traced[r], have_uftrace ? t_uftrace[r] : 0.0);
            bi_rm_tree(tmp);
            return;
        }
    }
    total = bi_busy_total(out);
    events = bi_session_events(trace_dir, &dropped, &lost, &gaps);
    valid = total > 0 && events == 2 * total && lost == 0 && gaps == 0;
    if (!valid)
        fprintf(stderr, "bench_instrument: INVALID complete trace: %llu events (%llu lost in "
                        "%llu gaps), expected %llu and none lost\n",
                (unsigned long long)events, (unsigned long long)lost, (unsigned long long)gaps,
                (unsigned long long)(2 * total));
    ours = bi_median(t_traced, BENCH_COMPLETE_RUNS);
    report("complete_trace_plain_s", bi_median(t_plain, BENCH_COMPLETE_RUNS));
    report("complete_trace_s", ours);
    report("complete_trace_events", (double)events);
    report("complete_trace_dropped", (double)lost);
    report("complete_trace_valid", valid);
    if (have_uftrace) {
        double theirs = bi_median(t_uftrace, BENCH_COMPLETE_RUNS);
        report("complete_trace_uftrace_s", theirs);
        report("complete_trace_vs_uftrace", ours > 0 ? theirs / ours : 0);
    }
    bi_rm_tree(tmp);
}

/* ---- LTTng-UST: liblttng-ust-cyg-profile-fast.so preloaded into fib_cyg ------------- */
#define BI_LTTNG_LIB "liblttng-ust-cyg-profile-fast.so"
#define BI_LTTNG_SESSION "atf_bench"

static int bi_sh(const char *cmd) { return system(cmd) == 0; }

/* 1 when lttng, lttng-sessiond, babeltrace2 and the preload library are all installed. */
static int bi_lttng_installed(void) {
    return bi_sh("command -v lttng >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1"
                 " && command -v babeltrace2 >/dev/null 2>&1") &&
           bi_sh("ldconfig -p 2>/dev/null | grep -q " BI_LTTNG_LIB " || "
                 "ls /usr/lib/*/" BI_LTTNG_LIB " /usr/lib/" BI_LTTNG_LIB " >/dev/null 2>&1");
}

/* Starts a session daemon for this benchmark when none answers; 1 when this call started
 * one (stopped by bi_lttng_daemon_stop), 0 when one was there, -1 when none can run. */
static int bi_lttng_daemon_start(void) {
    int i;
    if (bi_sh("lttng list >/dev/null 2>&1")) return 0;
    if (!bi_sh("lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1")) return -1;
    for (i = 0; i < 50; i++) { /* up to 5 s for it to answer */
        struct timespec ts = {0, 100000000};
        if (bi_sh("lttng list >/dev/null 2>&1")) return 1;
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void bi_lttng_daemon_stop(int started) {
    if (started == 1 && !bi_sh("pkill -x lttng-sessiond >/dev/null 2>&1"))
        fprintf(stderr, "bench_instrument: could not stop the lttng-sessiond it started\n");
}

/* A session writing into out, with the cyg-profile-fast events enabled, started. */
static int bi_lttng_session_start(const char *out) {
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "lttng create " BI_LTTNG_SESSION " --output='%s' >/dev/null 2>&1 && "
             "lttng enable-event -u -s " BI_LTTNG_SESSION " 'lttng_ust_cyg_profile_fast:*' "
             ">/dev/null 2>&1 && lttng start " BI_LTTNG_SESSION " >/dev/null 2>&1",
             out);
    return bi_sh(cmd);
}

/* Stops (flushing every buffer) and destroys the session. */
static void bi_lttng_session_stop(void) {
    bi_sh("lttng stop " BI_LTTNG_SESSION " >/dev/null 2>&1; "
          "lttng destroy " BI_LTTNG_SESSION " >/dev/null 2>&1");
}

/* The function entry and exit events of the trace in dir, counted by babeltrace2. */
static uint64_t bi_lttng_events(const char *dir) {
    char cmd[1400], line[64] = "";
    unsigned long long n = 0;
    FILE *p;
    snprintf(cmd, sizeof cmd,
             "babeltrace2 '%s' 2>/dev/null | grep -c 'lttng_ust_cyg_profile_fast:func_'", dir);
    p = popen(cmd, "r");
    if (!p) return 0;
    if (fgets(line, sizeof line, p)) n = strtoull(line, NULL, 10);
    pclose(p);
    return n;
}

/* ---- fib under each tracer ---------------------------------------------------------------- */
/* One way of running fib: its command line, an optional LD_PRELOAD and environment, a
 * session directory for ours, an LTTng session around each run; the wall and CPU seconds
 * of every run. */
typedef struct bi_runner {
    const char *name;
    char *argv[8];
    const char *trace_dir, *preload;
    char *env[2];                /* NAME=value strings, NULL-terminated */
    const char *lttng_out;       /* LTTng's output directory, when LTTng traces this run */
    const char *cleanup;         /* removed before each run */
    double wall[BENCH_INSTRUMENT_RUNS], cpu[BENCH_INSTRUMENT_RUNS];
} bi_runner;

static int bi_runner_run(bi_runner *x, const char *cwd, size_t r) {
    if (x->cleanup) bi_rm_tree(x->cleanup);
    if (x->lttng_out && !bi_lttng_session_start(x->lttng_out)) {
        fprintf(stderr, "bench_instrument: cannot start an LTTng session\n");
        bi_lttng_session_stop();
        return 0;
    }
    x->wall[r] = bi_run(x->argv, cwd, x->trace_dir, NULL, x->preload, x->env, &x->cpu[r]);
    if (x->lttng_out) bi_lttng_session_stop();
    if (x->wall[r] < 0) fprintf(stderr, "bench_instrument: a %s run failed\n", x->name);
    return x->wall[r] >= 0;
}

/* Extra ns per call over the plain runs, wall and CPU (calls 1e9: extra seconds). */
static double bi_overhead(bi_runner *x, bi_runner *plain, double calls, int cpu) {
    double *a = cpu ? x->cpu : x->wall, *b = cpu ? plain->cpu : plain->wall;
    return (bi_median(a, BENCH_INSTRUMENT_RUNS) - bi_median(b, BENCH_INSTRUMENT_RUNS)) / calls *
           1e9;
}

/* The calls fib(n) makes, main included: 2 fib(n + 1) - 1, and one. */
static double bi_fib_calls(unsigned n) {
    double f0 = 0, f1 = 1;
    unsigned i;
    for (i = 0; i <= n; i++) { /* f0 = fib(n + 1) */
        double f = f0 + f1;
        f1 = f0;
        f0 = f;
    }
    return 2 * f0 - 1 + 1;
}

/* Extra ns per call of x over plain (wall or CPU time), each less its fixed cost (x_1 and
 * plain_1: the same programs on a run of calls_1 calls, fib(1)), over the extra calls. */
static double bi_net(bi_runner *x, bi_runner *x_1, bi_runner *plain, bi_runner *plain_1,
                     double calls, double calls_1, int cpu) {
    double extra = bi_overhead(x, plain, 1e9, cpu) - bi_overhead(x_1, plain_1, 1e9, cpu);
    return extra / (calls - calls_1) * 1e9;
}

/* The runners against funtrace: for each size (fib(n + 2), fib(1), fib(n) in threads,
 * fib(1) in threads) the plain program, ours, funtrace; ours writes into ft_dir[size]. */
#define BI_FT_PROGS 3
#define BI_FT_SIZES 4
#define BI_FT_RUNNERS (BI_FT_PROGS * BI_FT_SIZES)
#define BI_FT_DIRS BI_FT_SIZES
static void bi_ft_runner(bi_runner *x, int k, char *progs[BI_FT_PROGS],
                         char *sizes[BI_FT_SIZES], char *threads, char ft_dir[][128]) {
    static const char *names[BI_FT_RUNNERS] = {
        "plain fib(n + 2)", "traced fib(n + 2)", "funtrace fib(n + 2)",
        "plain fib(1)", "traced fib(1)", "funtrace fib(1)",
        "plain, threads", "traced, threads", "funtrace, threads",
        "plain fib(1), threads", "traced fib(1), threads", "funtrace fib(1), threads"};
    int prog = k % BI_FT_PROGS, size = k / BI_FT_PROGS;
    x->name = names[k];
    x->argv[0] = progs[prog];
    x->argv[1] = sizes[size];
    x->argv[2] = size >= 2 ? threads : NULL;
    if (prog == 1) x->trace_dir = x->cleanup = ft_dir[size];
}

/* Wall (or CPU) ns per call of the runner `prog` (1: ours, 2: funtrace) over plain at
 * size `size` (0: one thread, 2: threads), each less its fixed cost (the next size: the
 * same programs on fib(1)), over the calls beyond fib(1)'s. */
static double bi_ft_net(bi_runner *ft, int prog, int size, double calls, double calls_1,
                        int cpu) {
    bi_runner *big = &ft[size * BI_FT_PROGS], *small = &ft[(size + 1) * BI_FT_PROGS];
    return bi_net(&big[prog], &small[prog], &big[0], &small[0], calls, calls_1, cpu);
}

/* The figures against funtrace (see the top of the file), from the runners above. */
static void bi_against_funtrace(bi_runner *ft, unsigned n, unsigned threads,
                                char ft_dir[][128],
                                void (*report)(const char *name, double value)) {
    double calls = bi_fib_calls(n + 2), calls_1 = bi_fib_calls(1);
    double calls_t = threads * bi_fib_calls(n) + 1, calls_1t = threads * calls_1 + 1;
    double ours = bi_ft_net(ft, 1, 0, calls, calls_1, 0);
    double theirs = bi_ft_net(ft, 2, 0, calls, calls_1, 0);
    double ours_t = bi_ft_net(ft, 1, 2, calls_t, calls_1t, 0);
    double theirs_t = bi_ft_net(ft, 2, 2, calls_t, calls_1t, 0);
    uint64_t dropped, lost, gaps;
    int valid = bi_session_events(ft_dir[0], &dropped, &lost, &gaps) == (uint64_t)(2 * calls) &&
                lost == 0;
    valid = valid && bi_session_events(ft_dir[2], &dropped, &lost, &gaps) ==
                         (uint64_t)(2 * calls_t) && lost == 0;
    if (!valid)
        fprintf(stderr, "bench_instrument: INVALID: a traced run against funtrace lost events "
                        "(or its session is unreadable)\n");
    report("instrument_net_ns_per_call", ours);
    report("funtrace_ns_per_call", theirs);
    report("funtrace_cpu_ns_per_call", bi_ft_net(ft, 2, 0, calls, calls_1, 1));
    report("instrument_vs_funtrace", ours > 0 ? theirs / ours : 0);
    report("instrument_threads_net_ns_per_call", ours_t);
    report("funtrace_threads_ns_per_call", theirs_t);
    report("instrument_threads_vs_funtrace", ours_t > 0 ? theirs_t / ours_t : 0);
    report("instrument_net_valid", valid);
}

/* The filtered-out call (see the top of the file): `filtered` and `plain` ran fib(n),
 * which makes `calls` calls, the *_1 runners fib(1); `hooks` (optional) ran fib_cyg on
 * fib(n); the last filtered session is under filtered_dir. */
static void bi_filtered(bi_runner *filtered, bi_runner *filtered_1, bi_runner *plain,
                        bi_runner *plain_1, bi_runner *hooks, double calls,
                        const char *filtered_dir,
                        void (*report)(const char *name, double value)) {
    /* the fixed cost: extra CPU over plain at fib(1); per call: the extra CPU at fib(n)
     * less that, per extra call */
    double fixed = bi_overhead(filtered_1, plain_1, 1e9, 1);
    double per_call = bi_net(filtered, filtered_1, plain, plain_1, calls, bi_fib_calls(1), 1);
    uint64_t main_events, dropped, lost, gaps;
    int64_t fib_events = bi_session_events_not_of(filtered_dir, "main", &main_events);
    int valid;
    bi_session_events(filtered_dir, &dropped, &lost, &gaps);
    valid = fib_events == 0 && main_events == 2 && lost == 0;
    if (!valid)
        fprintf(stderr, "bench_instrument: INVALID filtered run: %lld events of fib (-1: "
                        "unreadable), %llu of main, %llu lost (expected 0, 2 and 0)\n",
                (long long)fib_events, (unsigned long long)main_events,
                (unsigned long long)lost);
    report("instrument_filtered_ns_per_call", per_call);
    report("instrument_fixed_ms", fixed * 1e3);
    if (hooks) {
        double floor = bi_overhead(hooks, plain, calls, 1);
        report("instrument_hook_floor_ns_per_call", floor);
        if (floor > 0) report("instrument_filtered_vs_hook_floor", per_call / floor);
    }
    report("instrument_filtered_valid", valid);
}

static void bench_instrument(void (*report)(const char *name, double value)) {
    /* FILTERED: fib left out by ATF_TRACE_NOTRACE; HOOKS: the hooks alone; the two *_1
     * run fib(1), for the fixed cost of the filtered run */
    enum { PLAIN, OURS, FILTERED, HOOKS, PLAIN_1, FILTERED_1, UFTRACE_PG, UFTRACE_CYG, LTTNG,
           PLAIN_T, OURS_T, BOUNDED, STOPPED, PAUSED, MIN_DURATION, KEEP_LAST,
           FT_FIRST, RUNNERS = FT_FIRST + BI_FT_RUNNERS };
    const char *dir_env = getenv("ATF_BENCH_PROGS"), *n_env = getenv("ATF_BENCH_FIB_N");
    char dir[PATH_MAX], plain[PATH_MAX + 32], traced[PATH_MAX + 32], pg[PATH_MAX + 32];
    char cyg[PATH_MAX + 32], tmp[] = "/tmp/atf_bench_instrument_XXXXXX", trace_dir[128];
    char funtrace[PATH_MAX + 32], nbuf_ft[16], ft_dir[BI_FT_DIRS][128];
    char filtered_dir[128], filtered_1_dir[128], ud[128], lt[128], nbuf[16];
    char threads_dir[128], nbuf_t[16], tbuf[16], modes_dir[128];
    static char notrace[] = "ATF_TRACE_NOTRACE=fib";
    /* the bounds: one never reached (the cost of checking), one reached at once (the cost
     * of the events past it), recording off all along (the hooks' cost meanwhile) */
    static char bound_far[] = "ATF_TRACE_MAX_BYTES=1099511627776";
    static char bound_near[] = "ATF_TRACE_MAX_BYTES=1048576";
    static char start_paused[] = "ATF_TRACE_START_PAUSED=1";
    static char min_duration[] = "ATF_TRACE_MIN_DURATION_NS=1000000"; /* fib's calls: shorter */
    static char keep_last[] = "ATF_TRACE_KEEP_LAST_BYTES=33554432"; /* the flight recorder */
    bi_runner run[RUNNERS];
    int enabled[RUNNERS], lttng_daemon = -1, valid, k;
    double calls, calls_t, ours, ours_cpu, tick_floor, floor, bare;
    char bare_file[128];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cores > 0 && cores < 32 ? 2 * (unsigned)cores : 4;
    uint64_t events, dropped, lost, gaps;
    unsigned n = n_env ? (unsigned)strtoul(n_env, NULL, 10) : 30;
    size_t r;

    if (!realpath(dir_env ? dir_env : BENCH_INSTRUMENT_DIR, dir)) {
        fprintf(stderr, "bench_instrument: no %s (build it with make bench)\n",
                dir_env ? dir_env : BENCH_INSTRUMENT_DIR);
        return;
    }
    snprintf(plain, sizeof plain, "%s/fib_plain", dir);
    snprintf(traced, sizeof traced, "%s/fib_traced", dir);
    snprintf(pg, sizeof pg, "%s/fib_pg", dir);
    snprintf(cyg, sizeof cyg, "%s/fib_cyg", dir);
    snprintf(funtrace, sizeof funtrace, "%s/fib_funtrace", dir);
    snprintf(nbuf, sizeof nbuf, "%u", n);
    snprintf(nbuf_t, sizeof nbuf_t, "%u", n > 2 ? n - 2 : n);
    snprintf(tbuf, sizeof tbuf, "%u", threads);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "bench_instrument: mkdtemp failed\n");
        return;
    }
    calls = bi_fib_calls(n);
    /* each thread's function and its fib calls, and main */
    calls_t = threads * bi_fib_calls(n > 2 ? n - 2 : n) + 1;
    snprintf(threads_dir, sizeof threads_dir, "%s/threads", tmp);
    snprintf(modes_dir, sizeof modes_dir, "%s/modes", tmp);
    snprintf(trace_dir, sizeof trace_dir, "%s/traces", tmp);
    snprintf(filtered_dir, sizeof filtered_dir, "%s/filtered", tmp);
    snprintf(filtered_1_dir, sizeof filtered_1_dir, "%s/filtered_1", tmp);
    for (k = 0; k < BI_FT_DIRS; k++) snprintf(ft_dir[k], sizeof ft_dir[k], "%s/ft%d", tmp, k);
    snprintf(nbuf_ft, sizeof nbuf_ft, "%u", n + 2);
    snprintf(ud, sizeof ud, "%s/uftrace.data", tmp);
    snprintf(lt, sizeof lt, "%s/lttng", tmp);

    memset(run, 0, sizeof run);
    run[PLAIN] = (bi_runner){.name = "plain", .argv = {plain, nbuf}};
    run[OURS] = (bi_runner){.name = "traced", .argv = {traced, nbuf}, .trace_dir = trace_dir,
                            .cleanup = trace_dir};
    run[FILTERED] = (bi_runner){.name = "filtered", .argv = {traced, nbuf},
                                .trace_dir = filtered_dir, .env = {notrace},
                                .cleanup = filtered_dir};
    run[HOOKS] = (bi_runner){.name = "hooks alone", .argv = {cyg, nbuf}};
    run[PLAIN_1] = (bi_runner){.name = "plain fib(1)", .argv = {plain, (char *)"1"}};
    run[FILTERED_1] = (bi_runner){.name = "filtered fib(1)", .argv = {traced, (char *)"1"},
                                  .trace_dir = filtered_1_dir, .env = {notrace},
                                  .cleanup = filtered_1_dir};
    run[UFTRACE_PG] = (bi_runner){.name = "uftrace (-pg)",
                                  .argv = {(char *)"uftrace", (char *)"record", (char *)"-d",
                                           ud, pg, nbuf},
                                  .cleanup = ud};
    run[UFTRACE_CYG] = (bi_runner){.name = "uftrace",
                                   .argv = {(char *)"uftrace", (char *)"record", (char *)"-d",
                                            ud, cyg, nbuf},
                                   .cleanup = ud};
    run[LTTNG] = (bi_runner){.name = "LTTng", .argv = {cyg, nbuf}, .preload = BI_LTTNG_LIB,
                             .lttng_out = lt, .cleanup = lt};
    run[PLAIN_T] = (bi_runner){.name = "plain, threads", .argv = {plain, nbuf_t, tbuf}};
    run[OURS_T] = (bi_runner){.name = "traced, threads", .argv = {traced, nbuf_t, tbuf},
                              .trace_dir = threads_dir, .cleanup = threads_dir};
    run[BOUNDED] = (bi_runner){.name = "bounded", .argv = {traced, nbuf}, .trace_dir = modes_dir,
                               .env = {bound_far}, .cleanup = modes_dir};
    run[STOPPED] = (bi_runner){.name = "stopped", .argv = {traced, nbuf}, .trace_dir = modes_dir,
                               .env = {bound_near}, .cleanup = modes_dir};
    run[PAUSED] = (bi_runner){.name = "paused", .argv = {traced, nbuf}, .trace_dir = modes_dir,
                              .env = {start_paused}, .cleanup = modes_dir};
    enabled[PLAIN] = enabled[OURS] = enabled[PLAIN_T] = enabled[OURS_T] = 1;
    run[MIN_DURATION] = (bi_runner){.name = "min duration", .argv = {traced, nbuf},
                                    .trace_dir = modes_dir, .env = {min_duration},
                                    .cleanup = modes_dir};
    run[KEEP_LAST] = (bi_runner){.name = "keep last", .argv = {traced, nbuf},
                                 .trace_dir = modes_dir, .env = {keep_last}, .cleanup = modes_dir};
    enabled[BOUNDED] = enabled[STOPPED] = enabled[PAUSED] = enabled[MIN_DURATION] = 1;
    enabled[KEEP_LAST] = 1;
    {
        char *progs[BI_FT_PROGS] = {plain, traced, funtrace};
        char *sizes[BI_FT_SIZES] = {nbuf_ft, (char *)"1", nbuf, (char *)"1"};
        const char *src = getenv("FUNTRACE_SRC");
        int have = src && *src && access(funtrace, X_OK) == 0;
        if (!have)
            printf("  (no FUNTRACE_SRC or no %s: the funtrace figures skipped; make bench "
                   "FUNTRACE_SRC=DIR builds it from funtrace's source tree)\n", funtrace);
        for (k = 0; k < BI_FT_RUNNERS; k++)
            bi_ft_runner(&run[FT_FIRST + k], k, progs, sizes, tbuf, ft_dir);
        for (k = FT_FIRST; k < RUNNERS; k++) enabled[k] = have;
    }
    enabled[FILTERED] = enabled[PLAIN_1] = enabled[FILTERED_1] = 1;
    enabled[HOOKS] = access(cyg, X_OK) == 0;
    if (!enabled[HOOKS]) printf("  (no %s: the filtered-call floor skipped)\n", cyg);
    enabled[UFTRACE_PG] = enabled[UFTRACE_CYG] =
        system("command -v uftrace >/dev/null 2>&1") == 0;
    if (!enabled[UFTRACE_PG]) printf("  (uftrace not installed: its figures skipped)\n");
    enabled[LTTNG] = bi_lttng_installed();
    if (!enabled[LTTNG])
        printf("  (LTTng-UST, lttng-tools or babeltrace2 not installed: the LTTng figures "
               "skipped)\n");
    else if ((lttng_daemon = bi_lttng_daemon_start()) < 0) {
        printf("  (no LTTng session daemon could be started: the LTTng figures skipped)\n");
        enabled[LTTNG] = 0;
    }
    if (access(cyg, X_OK) != 0) enabled[UFTRACE_CYG] = enabled[LTTNG] = 0;

    for (r = 0; r < BENCH_INSTRUMENT_RUNS; r++) /* interleaved: drift hits all alike */
        for (k = 0; k < RUNNERS; k++)
            if (enabled[k] && !bi_runner_run(&run[k], tmp, r)) {
                if (k <= OURS) goto done;
                enabled[k] = 0;
            }

    events = bi_session_events(trace_dir, &dropped, &lost, &gaps);
    valid = events == (uint64_t)(2 * calls) && lost == 0;
    if (!valid)
        fprintf(stderr, "bench_instrument: INVALID: the session has %llu events (%llu lost in "
                        "%llu gaps), expected %.0f and none lost\n",
                (unsigned long long)events, (unsigned long long)lost, (unsigned long long)gaps,
                2 * calls);
    ours = bi_overhead(&run[OURS], &run[PLAIN], calls, 0);
    ours_cpu = bi_overhead(&run[OURS], &run[PLAIN], calls, 1);
    tick_floor = 2 * bi_ticks_ns();
    floor = bi_floor_ns();
    snprintf(bare_file, sizeof bare_file, "%s/bare.atf", tmp);
    bare = bi_bare_recorder_ns(bare_file);
    report("instrument_overhead_ns_per_call", ours);
    report("instrument_cpu_ns_per_call", ours_cpu);
    report("floor_ns_per_call", floor);
    if (floor > 0) report("instrument_vs_floor", ours_cpu / floor);
    if (bare > 0) {
        report("bare_recorder_cpu_ns_per_call", bare);
        if (floor > 0) report("bare_recorder_vs_floor", bare / floor);
        report("instrument_vs_bare_recorder", ours_cpu / bare);
    }
    report("instrument_paused_ns", (double)bi_session_paused(trace_dir));
    report("instrument_clock_floor_ns_per_call", 2 * bi_clock_ns());
    report("instrument_tick_floor_ns_per_call", tick_floor);
    if (tick_floor > 0) report("instrument_vs_tick_floor", ours / tick_floor);
    report("instrument_events_dropped", (double)dropped);
    report("instrument_events_lost", (double)lost);
    report("instrument_overhead_valid", valid);
    if (enabled[OURS_T] && enabled[PLAIN_T]) { /* twice as many busy threads as cores */
        double cpu_t = bi_overhead(&run[OURS_T], &run[PLAIN_T], calls_t, 1);
        events = bi_session_events(threads_dir, &dropped, &lost, &gaps);
        report("instrument_threads_cpu_ns_per_call", cpu_t);
        if (floor > 0) report("instrument_threads_vs_floor", cpu_t / floor);
        report("instrument_threads_events_lost", (double)lost);
        report("instrument_threads_paused_ns", (double)bi_session_paused(threads_dir));
        report("instrument_threads_valid", events == (uint64_t)(2 * calls_t) && lost == 0);
    }
    { /* the bounds, each per call next to the unbounded recorder (CPU: every thread) */
        static const struct { int k; const char *name, *ratio; } modes[] = {
            { BOUNDED, "instrument_bounded_cpu_ns_per_call", "instrument_bounded_vs_unbounded" },
            { STOPPED, "instrument_stopped_cpu_ns_per_call", "instrument_stopped_vs_unbounded" },
            { PAUSED, "instrument_paused_cpu_ns_per_call", "instrument_paused_vs_unbounded" },
            { MIN_DURATION, "instrument_min_duration_cpu_ns_per_call",
              "instrument_min_duration_vs_unbounded" },
            { KEEP_LAST, "instrument_keep_last_cpu_ns_per_call", /* target <= 1.2 */
              "instrument_keep_last_vs_unbounded" },
        };
        size_t m;
        for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            double v;
            if (!enabled[modes[m].k]) continue;
            v = bi_overhead(&run[modes[m].k], &run[PLAIN], calls, 1);
            report(modes[m].name, v);
            if (ours_cpu > 0) report(modes[m].ratio, v / ours_cpu);
        }
    }
    if (enabled[FILTERED] && enabled[FILTERED_1] && enabled[PLAIN_1])
        bi_filtered(&run[FILTERED], &run[FILTERED_1], &run[PLAIN], &run[PLAIN_1],
                    enabled[HOOKS] ? &run[HOOKS] : NULL, calls, filtered_dir, report);
    if (enabled[UFTRACE_PG]) {
        double theirs = bi_overhead(&run[UFTRACE_PG], &run[PLAIN], calls, 0);
        report("uftrace_pg_overhead_ns_per_call", theirs);
        report("instrument_vs_uftrace_pg", ours > 0 ? theirs / ours : 0);
    }
    if (enabled[UFTRACE_CYG]) {
        double theirs = bi_overhead(&run[UFTRACE_CYG], &run[PLAIN], calls, 0);
        double theirs_cpu = bi_overhead(&run[UFTRACE_CYG], &run[PLAIN], calls, 1);
        report("uftrace_overhead_ns_per_call", theirs);
        report("instrument_vs_uftrace", ours > 0 ? theirs / ours : 0);
        report("uftrace_cpu_ns_per_call", theirs_cpu);
        report("instrument_vs_uftrace_cpu", ours_cpu > 0 ? theirs_cpu / ours_cpu : 0);
    }
    for (k = FT_FIRST; k < RUNNERS && enabled[k]; k++) {} /* every one of them ran */
    if (k == RUNNERS) bi_against_funtrace(&run[FT_FIRST], n, threads, ft_dir, report);
    if (enabled[LTTNG]) {
        double theirs = bi_overhead(&run[LTTNG], &run[PLAIN], calls, 0);
        uint64_t kept = bi_lttng_events(lt); /* of the last run */
        report("lttng_overhead_ns_per_call", theirs);
        report("instrument_vs_lttng", ours > 0 ? theirs / ours : 0);
        report("lttng_events_lost", kept < 2 * calls ? 2 * calls - (double)kept : 0);
    }
done:
    bi_lttng_daemon_stop(lttng_daemon);
    bi_rm_tree(tmp);
    bi_complete_trace(dir, enabled[UFTRACE_PG], report);
}

#endif /* BENCH_INSTRUMENT_H */
