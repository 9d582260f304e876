/* bench_instrument.h - what the auto-tracer (examples/instrument/atf_instrument.c) costs
 * per traced call, next to uftrace when it is installed. Linux.
 *
 *   static void bench_instrument(void (*report)(const char *name, double value));
 *
 * Times whole processes (fork, exec, wait; wall clock; the median of BENCH_INSTRUMENT_RUNS
 * interleaved runs) of programs the Makefile builds from bench/bench_fib.c into
 * BENCH_INSTRUMENT_DIR (default build/bench_progs; the environment variable
 * ATF_BENCH_PROGS overrides it):
 *   fib_plain N                        no tracing: the baseline
 *   fib_traced N                       -finstrument-functions + atf_instrument.c, writing
 *                                      a session into a temporary directory
 *   uftrace record -d DIR fib_pg N     -pg, under uftrace (only when uftrace is on PATH)
 * fib(N) makes 2 fib(N + 1) - 1 calls, main one more; N is 30 (ATF_BENCH_FIB_N overrides).
 *
 * Figures, in ns per traced call (extra wall time over the baseline / calls):
 *   instrument_overhead_ns_per_call     ours, start-up and finalization included
 *   uftrace_overhead_ns_per_call        uftrace, the same way
 *   instrument_vs_uftrace_ratio         uftrace / ours
 *   instrument_cpu_ns_per_call          extra CPU time (user + system, every thread,
 *   uftrace_cpu_ns_per_call             the drain and uftrace's recorder included): less
 *   instrument_vs_uftrace_cpu_ratio     sensitive than wall time to a busy machine
 *   instrument_clock_floor_ns_per_call  two atf_now_ns() reads: what timestamping the
 *                                       entry and the exit of a call costs on this machine,
 *                                       a floor for any tracer that does it
 *   instrument_tick_floor_ns_per_call   two atf_ticks() reads: the same floor for the tick
 *                                       stamps the auto-tracer uses (converted by the drain)
 *   instrument_events_dropped           in the last traced run (expected 0)
 *   instrument_events_lost              dropped + lost to I/O, in the last traced run
 *   instrument_overhead_valid           1 when that run kept every event (the session
 *                                       holds 2 events per call, none lost), else 0:
 *                                       the overhead figures then measure a lossy trace
 *
 * Then the whole of a multi-threaded CPU-bound run, from examples/instrument/busy.c (one
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

/* Wall seconds of one run of argv (stdout to the file `out` when given, else with stderr
 * to /dev/null; working directory cwd), with ATF_TRACE_DIR=trace_dir when given; a
 * negative value when it failed. *cpu receives the user + system seconds of the process,
 * its threads and the children it waited for (uftrace's recorder included). */
static double bi_run(char *const argv[], const char *cwd, const char *trace_dir,
                     const char *out, double *cpu) {
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
        }
        if (chdir(cwd) != 0) _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid) return -1;
    t1 = bi_now();
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t1 - t0 : -1;
}

/* Index events of the one pid_* session under root (0 when unreadable); *dropped, *lost
 * and *gaps receive the manifest's events_dropped, events_dropped + events_lost_io and
 * gaps, summed over the threads. */
static uint64_t bi_session_events(const char *root, uint64_t *dropped, uint64_t *lost,
                                  uint64_t *gaps) {
    char cmd[2048], dir[1024] = "";
    FILE *p;
    atf_session_reader r;
    uint64_t events = 0;
    size_t i;
    *dropped = *lost = *gaps = 0;
    snprintf(cmd, sizeof cmd, "ls -d '%s'/session_*/pid_* 2>/dev/null", root);
    p = popen(cmd, "r");
    if (!p) return 0;
    if (!fgets(dir, sizeof dir, p)) dir[0] = '\0';
    pclose(p);
    dir[strcspn(dir, "\n")] = '\0';
    if (!dir[0] || atf_session_reader_open(&r, dir, NULL) != ATF_OK) return 0;
    for (i = 0; i < r.thread_count; i++) {
        if (!r.threads[i].missing) events += r.threads[i].reader.index.event_count;
        *dropped += r.threads[i].events_dropped;
        *lost += r.threads[i].events_dropped + r.threads[i].events_lost_io;
        *gaps += r.threads[i].gaps;
    }
    atf_session_reader_close(&r);
    return events;
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
        t_plain[r] = bi_run(a_plain, tmp, NULL, out, &cpu);
        bi_rm_tree(trace_dir); /* the last run's session is kept for the check below */
        t_traced[r] = bi_run(a_traced, tmp, trace_dir, NULL, &cpu);
        if (have_uftrace) {
            bi_rm_tree(ud);
            t_uftrace[r] = bi_run(a_uftrace, tmp, NULL, NULL, &cpu);
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

static void bench_instrument(void (*report)(const char *name, double value)) {
    const char *dir_env = getenv("ATF_BENCH_PROGS"), *n_env = getenv("ATF_BENCH_FIB_N");
    char dir[PATH_MAX], plain[PATH_MAX + 32], traced[PATH_MAX + 32], pg[PATH_MAX + 32];
    char tmp[] = "/tmp/atf_bench_instrument_XXXXXX", trace_dir[128], ud[128], nbuf[16];
    double t_plain[BENCH_INSTRUMENT_RUNS], t_traced[BENCH_INSTRUMENT_RUNS];
    double t_uftrace[BENCH_INSTRUMENT_RUNS], c_plain[BENCH_INSTRUMENT_RUNS];
    double c_traced[BENCH_INSTRUMENT_RUNS], c_uftrace[BENCH_INSTRUMENT_RUNS];
    double m_plain, m_traced, ours, ours_cpu, calls, f0 = 0, f1 = 1;
    uint64_t events, dropped, lost, gaps;
    int valid;
    unsigned n = n_env ? (unsigned)strtoul(n_env, NULL, 10) : 30, i;
    int have_uftrace = system("command -v uftrace >/dev/null 2>&1") == 0;
    size_t r;

    if (!realpath(dir_env ? dir_env : BENCH_INSTRUMENT_DIR, dir)) {
        fprintf(stderr, "bench_instrument: no %s (build it with make bench)\n",
                dir_env ? dir_env : BENCH_INSTRUMENT_DIR);
        return;
    }
    snprintf(plain, sizeof plain, "%s/fib_plain", dir);
    snprintf(traced, sizeof traced, "%s/fib_traced", dir);
    snprintf(pg, sizeof pg, "%s/fib_pg", dir);
    snprintf(nbuf, sizeof nbuf, "%u", n);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "bench_instrument: mkdtemp failed\n");
        return;
    }
    for (i = 0; i <= n; i++) { /* f0 = fib(n + 1) */
        double f = f0 + f1;
        f1 = f0;
        f0 = f;
    }
    calls = 2 * f0 - 1 + 1; /* fib's calls, and main */
    snprintf(trace_dir, sizeof trace_dir, "%s/traces", tmp);
    snprintf(ud, sizeof ud, "%s/uftrace.data", tmp);

    for (r = 0; r < BENCH_INSTRUMENT_RUNS; r++) { /* interleaved: drift hits all alike */
        char *a_plain[] = {plain, nbuf, NULL};
        char *a_traced[] = {traced, nbuf, NULL};
        char *a_uftrace[] = {(char *)"uftrace", (char *)"record", (char *)"-d", ud, pg, nbuf, NULL};
        bi_rm_tree(trace_dir);
        t_plain[r] = bi_run(a_plain, tmp, NULL, NULL, &c_plain[r]);
        t_traced[r] = bi_run(a_traced, tmp, trace_dir, NULL, &c_traced[r]);
        if (have_uftrace) {
            bi_rm_tree(ud);
            t_uftrace[r] = bi_run(a_uftrace, tmp, NULL, NULL, &c_uftrace[r]);
        }
        if (t_plain[r] < 0 || t_traced[r] < 0 || (have_uftrace && t_uftrace[r] < 0)) {
            fprintf(stderr, "bench_instrument: a run failed (plain %.3f, traced %.3f, uftrace %.3f)\n",
                    t_plain[r], t_traced[r], have_uftrace ? t_uftrace[r] : 0.0);
            bi_rm_tree(tmp);
            return;
        }
    }
    events = bi_session_events(trace_dir, &dropped, &lost, &gaps);
    valid = events == (uint64_t)(2 * calls) && lost == 0;
    if (!valid)
        fprintf(stderr, "bench_instrument: INVALID: the session has %llu events (%llu lost in "
                        "%llu gaps), expected %.0f and none lost\n",
                (unsigned long long)events, (unsigned long long)lost, (unsigned long long)gaps,
                2 * calls);
    m_plain = bi_median(t_plain, BENCH_INSTRUMENT_RUNS);
    m_traced = bi_median(t_traced, BENCH_INSTRUMENT_RUNS);
    ours = (m_traced - m_plain) / calls * 1e9;
    ours_cpu = (bi_median(c_traced, BENCH_INSTRUMENT_RUNS) - bi_median(c_plain, BENCH_INSTRUMENT_RUNS)) /
               calls * 1e9;
    report("instrument_overhead_ns_per_call", ours);
    report("instrument_cpu_ns_per_call", ours_cpu);
    report("instrument_clock_floor_ns_per_call", 2 * bi_clock_ns());
    report("instrument_tick_floor_ns_per_call", 2 * bi_ticks_ns());
    report("instrument_events_dropped", (double)dropped);
    report("instrument_events_lost", (double)lost);
    report("instrument_overhead_valid", valid);
    if (have_uftrace) {
        double theirs = (bi_median(t_uftrace, BENCH_INSTRUMENT_RUNS) - m_plain) / calls * 1e9;
        double theirs_cpu = (bi_median(c_uftrace, BENCH_INSTRUMENT_RUNS) -
                             bi_median(c_plain, BENCH_INSTRUMENT_RUNS)) / calls * 1e9;
        report("uftrace_overhead_ns_per_call", theirs);
        report("instrument_vs_uftrace_ratio", ours > 0 ? theirs / ours : 0);
        report("uftrace_cpu_ns_per_call", theirs_cpu);
        report("instrument_vs_uftrace_cpu_ratio", ours_cpu > 0 ? theirs_cpu / ours_cpu : 0);
    }
    bi_rm_tree(tmp);
    bi_complete_trace(dir, have_uftrace, report);
}

#endif /* BENCH_INSTRUMENT_H */
