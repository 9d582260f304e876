/* bench_export.h - throughput of `atf export` (and `atf stats`) on a 10 M-event session.
 *
 * Include once, after atf.h with ATF_IMPLEMENTATION, in a benchmark program; it compiles
 * the atf command (tools/embed.h) into that program and defines
 *     static void bench_export(void (*report)(const char *name, double value));
 * which records a session of 4 threads and 10 M call/return events (1000 named
 * functions, depth up to 24, interleaved timestamps) with the library in manual drain
 * mode under /tmp, exports it to /dev/null, reports million events per second (median
 * of 3 runs) and deletes the session. Figures:
 *   export_merge_scan_mevents_per_s  atf_merge_next over every event: the floor that
 *                                    every command pays, for ratios
 *   export_stats_mevents_per_s       atf stats (pairing + per-function figures)
 *   export_chrome_mevents_per_s      atf export --format chrome -o /dev/null
 *   export_perfetto_mevents_per_s    atf export --format perfetto -o /dev/null
 *   export_parquet_mevents_per_s     atf export --format parquet -o /dev/null (the slices
 *                                    table; events of the session per second, as above)
 *   export_parquet_slices_vs_index_bytes  the slices table's file size over the bytes of
 *                                    the session's index.atf files (the same events)
 *   export_tree_s                    seconds of atf tree (to /dev/null)
 *   export_report_s                  seconds of atf report -o (a file under /tmp)
 *   export_report_vs_tree            their ratio (target: at most 1.2)
 *   export_report_html_bytes         the size of that report.html
 *   export_report_html_vs_5mb        that size over 5 MB (target: at most 1) */
#ifndef ATF_BENCH_EXPORT_H
#define ATF_BENCH_EXPORT_H

#include "../tools/embed.h"
/* the commands run through the command table: argv[0] names the command */

#include <time.h>
#include <unistd.h>

enum {
    BX_THREADS = 4,
    BX_EVENTS = 10000000,
    BX_FUNCTIONS = 1000,
    BX_MAX_DEPTH = 24,
    BX_RING = 1 << 18,           /* slots per thread ring */
    BX_PUMP_EVERY = 1 << 17,     /* events between pumps (all threads) */
    BX_REPS = 3
};

static double bx_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t bx_rand(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Records the session under root; its pid_* directory goes to dir. Returns the number
 * of events written, 0 on failure. */
static uint64_t bx_record(const char *root, char *dir, size_t cap) {
    atf_session_config cfg;
    atf_session *s;
    atf_producer w[BX_THREADS];
    void *raw[BX_THREADS];
    uint64_t stack[BX_THREADS][BX_MAX_DEPTH], ts[BX_THREADS], seed = 0x9E3779B97F4A7C15ull;
    uint64_t n = 0, i;
    uint32_t depth[BX_THREADS];
    size_t size = atf_ring_memory_size(ATF_RING_INDEX, BX_RING);
    int t, ok = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.session_name = "bench_export";
    if (atf_session_open(&s, root, &cfg) != ATF_OK) return 0;
    snprintf(dir, cap, "%s", atf_session_path(s));
    for (i = 0; i < BX_FUNCTIONS; i++) {
        char name[64];
        snprintf(name, sizeof name, "bench_function_%04u", (unsigned)i);
        atf_session_add_symbol(s, i + 1, name);
    }
    for (t = 0; t < BX_THREADS; t++) {
        char name[32];
        uint8_t *mem;
        raw[t] = malloc(size + 64);
        if (!raw[t]) return 0;
        mem = (uint8_t *)raw[t] + (64 - ((uintptr_t)raw[t] & 63));
        snprintf(name, sizeof name, "worker %d", t);
        ok &= atf_ring_init(mem, size, ATF_RING_INDEX, BX_RING, ATF_LAYOUT_1, 100000u + (uint32_t)t) == ATF_OK;
        ok &= atf_session_attach_rings(s, mem, size, NULL, 0, name, NULL) == ATF_OK;
        ok &= atf_producer_init(&w[t], mem, size, NULL, 0, ATF_DETAIL_OFF) == ATF_OK;
        ok &= atf_producer_set_overflow(&w[t], ATF_OVERFLOW_DROP, 0) == ATF_OK; /* pumped by this thread */
        depth[t] = 0;
        ts[t] = 1000000000ull + (uint64_t)t * 7;
    }
    /* one event per thread per round: the threads interleave in time */
    while (ok && n < BX_EVENTS) {
        for (t = 0; t < BX_THREADS && n < BX_EVENTS; t++, n++) {
            uint64_t r = bx_rand(&seed);
            int call = depth[t] == 0 || (depth[t] < BX_MAX_DEPTH && (r & 1));
            ts[t] += 20 + (r >> 8) % 60;
            if (call) {
                uint64_t fid = 1 + (r >> 20) % BX_FUNCTIONS;
                stack[t][depth[t]++] = fid;
                atf_producer_call(&w[t], fid, ts[t]);
            } else {
                atf_producer_return(&w[t], stack[t][--depth[t]], ts[t]);
            }
        }
        if (n % BX_PUMP_EVERY < BX_THREADS) ok &= atf_session_pump(s) == ATF_OK;
    }
    for (t = 0; t < BX_THREADS; t++) /* leave every thread balanced */
        while (depth[t]) {
            ts[t] += 30;
            atf_producer_return(&w[t], stack[t][--depth[t]], ts[t]);
            n++;
        }
    ok &= atf_session_close(s) == ATF_OK;
    for (t = 0; t < BX_THREADS; t++) free(raw[t]);
    return ok ? n : 0;
}

static int bx_compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*bx_command)(FILE *out, FILE *err, int argc, char **argv);

/* Median seconds of running a command (stdout/stderr to /dev/null); < 0 on failure. */
static double bx_time_command(bx_command fn, int argc, char **argv) {
    double t[BX_REPS];
    char *args[16];
    int i;
    FILE *null = fopen("/dev/null", "w");
    if (!null || argc > 15) return -1;
    for (i = 0; i < BX_REPS; i++) {
        double t0;
        /* a fresh copy each run: the command packs its operands into the array it gets */
        memcpy(args, argv, (size_t)argc * sizeof *args);
        args[argc] = NULL;
        t0 = bx_seconds();
        if (fn(null, null, argc, args) != 0) {
            fclose(null);
            return -1;
        }
        t[i] = bx_seconds() - t0;
    }
    fclose(null);
    qsort(t, BX_REPS, sizeof t[0], bx_compare);
    return t[BX_REPS / 2];
}

static volatile uint64_t bx_sink; /* keeps the merge loop's work alive */

/* Median seconds of merging every event of the session (open included). */
static double bx_time_merge(const char *dir, uint64_t *count) {
    double t[BX_REPS];
    int i;
    for (i = 0; i < BX_REPS; i++) {
        atf_session_reader r;
        atf_merge m;
        atf_merge_item it;
        uint64_t n = 0, sum = 0;
        double t0 = bx_seconds();
        if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) return -1;
        if (atf_merge_init(&m, &r, NULL) != ATF_OK) {
            atf_session_reader_close(&r);
            return -1;
        }
        while (atf_merge_next(&m, &it) == ATF_OK) {
            n++;
            sum += it.event.function_id;
        }
        atf_merge_deinit(&m);
        atf_session_reader_close(&r);
        t[i] = bx_seconds() - t0;
        bx_sink += sum;
        *count = n;
    }
    qsort(t, BX_REPS, sizeof t[0], bx_compare);
    return t[BX_REPS / 2];
}

/* The slices table's bytes over the index.atf bytes of the session; < 0 on failure. */
static double bx_parquet_size_ratio(const char *root, const char *dir) {
    char out[512], index[1200];
    char *argv[] = {(char *)"export", (char *)"--format", (char *)"parquet", (char *)"-o", out,
                    (char *)dir, NULL};
    uint64_t index_bytes = 0;
    int t;
    FILE *null = fopen("/dev/null", "w");
    snprintf(out, sizeof out, "%s/slices.parquet", root);
    if (!null) return -1;
    t = cli_main(null, null, 6, argv);
    fclose(null);
    if (t != 0) return -1;
    for (t = 0; t < BX_THREADS; t++) {
        snprintf(index, sizeof index, "%s/thread_%d/index.atf", dir, t);
        index_bytes += cli_file_size(index);
    }
    return index_bytes ? (double)cli_file_size(out) / (double)index_bytes : -1;
}

/* atf report against atf tree on the session: their times, ratio and the page's size. */
static void bx_report_vs_tree(void (*report)(const char *name, double value), const char *root,
                              char *dir) {
    char html[400];
    char *tree_argv[] = {(char *)"tree", dir, NULL};
    char *report_argv[] = {(char *)"report", (char *)"-o", html, dir, NULL};
    double tree, page;
    snprintf(html, sizeof html, "%s/report.html", root);
    if ((tree = bx_time_command(cli_main, 2, tree_argv)) > 0) report("export_tree_s", tree);
    if ((page = bx_time_command(cli_main, 4, report_argv)) > 0) {
        report("export_report_s", page);
        if (tree > 0) report("export_report_vs_tree", page / tree);
        report("export_report_html_bytes", (double)cli_file_size(html));
        report("export_report_html_vs_5mb", (double)cli_file_size(html) / 5e6);
    }
}

static void bench_export(void (*report)(const char *name, double value)) {
    char root[256], dir[1024], cmd[400];
    char *stats_argv[] = {(char *)"stats", dir, NULL};
    char *chrome_argv[] = {(char *)"export", (char *)"--format", (char *)"chrome", (char *)"-o",
                           (char *)"/dev/null", dir, NULL};
    char *perfetto_argv[] = {(char *)"export", (char *)"--format", (char *)"perfetto", (char *)"-o",
                             (char *)"/dev/null", dir, NULL};
    char *parquet_argv[] = {(char *)"export", (char *)"--format", (char *)"parquet", (char *)"-o",
                            (char *)"/dev/null", dir, NULL};
    uint64_t events, merged = 0;
    double t;
    snprintf(root, sizeof root, "/tmp/atf_bench_export_%d", (int)getpid());
    events = bx_record(root, dir, sizeof dir);
    if (events) {
        if ((t = bx_time_merge(dir, &merged)) > 0 && merged == events)
            report("export_merge_scan_mevents_per_s", (double)events / t / 1e6);
        if ((t = bx_time_command(cli_main, 2, stats_argv)) > 0)
            report("export_stats_mevents_per_s", (double)events / t / 1e6);
        if ((t = bx_time_command(cli_main, 6, chrome_argv)) > 0)
            report("export_chrome_mevents_per_s", (double)events / t / 1e6);
        if ((t = bx_time_command(cli_main, 6, perfetto_argv)) > 0)
            report("export_perfetto_mevents_per_s", (double)events / t / 1e6);
        if ((t = bx_time_command(cli_main, 6, parquet_argv)) > 0)
            report("export_parquet_mevents_per_s", (double)events / t / 1e6);
        if ((t = bx_parquet_size_ratio(root, dir)) > 0)
            report("export_parquet_slices_vs_index_bytes", t);
        bx_report_vs_tree(report, root, dir);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "bench_export: could not remove %s\n", root);
}

#endif
