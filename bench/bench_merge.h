/* bench_merge.h - k-way merge throughput against a sequential scan of the same bytes.
 *
 *   static void bench_merge(void (*report)(const char *name, double value));
 *
 * For K = 2, 4, 16 and 64 threads holding 8 Mi events in total, writes a session into a
 * temporary directory (library encoders, layout 1, finalized files), opens it once, and
 * measures, each as the median of BENCH_MERGE_RUNS runs interleaved in the same process:
 *   merge_ns_bursty_k{K}   atf_merge_next over every event, threads taking turns in runs
 *                          of 16-256 events, ns per event
 *   merge_ns_uniform_k{K}  the same when every next event comes from a random thread
 *   scan_ns                one sequential pass over the same mapped bytes, thread after
 *                          thread, reading each event's timestamp and function id (the
 *                          median over every session's scans)
 *   merge_ratio_{bursty,uniform}_k16
 *                          merge_ns / scan_ns, both measured on that same session
 * The merge consumer reads the same two fields from each item. Times are the measuring
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that other processes on a shared
 * machine do not count. Targets: bursty K=16 <=
 * 1.5 x scan, uniform K=16 <= 8 x scan. Include after atf.h (the implementation is
 * compiled elsewhere). POSIX only (mkdtemp, clock_gettime). */
#ifndef ATF_BENCH_MERGE_H
#define ATF_BENCH_MERGE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_MERGE_EVENTS
#define BENCH_MERGE_EVENTS (8u << 20)
#endif
#ifndef BENCH_MERGE_RUNS
#define BENCH_MERGE_RUNS 5
#endif

static uint64_t bench_merge__rng = 0x1234567887654321ull;

static uint64_t bench_merge__rand(void) { /* xorshift64* */
    bench_merge__rng ^= bench_merge__rng >> 12;
    bench_merge__rng ^= bench_merge__rng << 25;
    bench_merge__rng ^= bench_merge__rng >> 27;
    return bench_merge__rng * 0x2545F4914F6CDD1Dull;
}

static uint64_t bench_merge__le64(const uint8_t *p) {
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
           ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) |
           ((uint64_t)p[7] << 56);
}

/* CPU time of the calling thread in ns: other processes sharing the machine do not
 * inflate it (wall time does, by whole time slices). */
static uint64_t bench_merge__now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int bench_merge__cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double bench_merge__median(double *v, size_t n) {
    qsort(v, n, sizeof *v, bench_merge__cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Writes pid_1/thread_<k>/index.atf for k < threads under root: `total` events with
 * increasing timestamps, dealt to the threads in runs (bursty) or one by one at random.
 * Returns 0 on failure. */
static int bench_merge__write_session(const char *root, size_t threads, size_t total, int bursty) {
    uint8_t **buf = (uint8_t **)calloc(threads, sizeof *buf);
    size_t *count = (size_t *)calloc(threads, sizeof *count), *cap = (size_t *)calloc(threads, sizeof *cap);
    size_t i, k, cur = 0, left = 0;
    uint64_t ts = 1000000;
    char path[1024];
    int ok = buf && count && cap;
    for (k = 0; ok && k < threads; k++) {
        cap[k] = total / threads + total / threads / 4 + 1024;
        buf[k] = (uint8_t *)malloc(cap[k] * ATF_INDEX_EVENT_SIZE);
        ok = buf[k] != NULL;
    }
    for (i = 0; ok && i < total; i++) {
        atf_index_event e;
        if (bursty) {
            if (left == 0) {
                size_t next = (size_t)(bench_merge__rand() % (threads - 1));
                cur = next >= cur ? next + 1 : next; /* another thread */
                left = 16 + (size_t)(bench_merge__rand() % 241);
            }
            left--;
        } else {
            cur = (size_t)(bench_merge__rand() % threads);
        }
        if (count[cur] == cap[cur]) {
            uint8_t *p = (uint8_t *)realloc(buf[cur], cap[cur] * 2 * ATF_INDEX_EVENT_SIZE);
            if (!p) {
                ok = 0;
                break;
            }
            buf[cur] = p;
            cap[cur] *= 2;
        }
        ts += 1 + bench_merge__rand() % 40;
        memset(&e, 0, sizeof e);
        e.timestamp_ns = ts;
        e.function_id = ((uint64_t)(i & 3) << 32) | (i & 1023);
        e.thread_id = (uint32_t)(100 + cur);
        e.kind = (uint32_t)(1 + (i & 1));
        e.call_depth = (uint32_t)(i & 31);
        e.detail_seq = ATF_NO_DETAIL;
        atf_index_event_encode(ATF_LAYOUT_1, &e, buf[cur] + count[cur] * ATF_INDEX_EVENT_SIZE);
        count[cur]++;
    }
    snprintf(path, sizeof path, "%s/pid_1", root);
    ok = ok && mkdir(path, 0755) == 0;
    for (k = 0; ok && k < threads; k++) {
        atf_index_header h;
        atf_index_footer f;
        uint8_t head[64], foot[64];
        FILE *out;
        size_t n = count[k];
        const uint8_t *ev = buf[k];
        snprintf(path, sizeof path, "%s/pid_1/thread_%zu", root, k);
        if (mkdir(path, 0755) != 0) {
            ok = 0;
            break;
        }
        memset(&h, 0, sizeof h);
        h.endian = ATF_ENDIAN_LITTLE;
        h.version = ATF_LAYOUT_1;
        h.thread_id = (uint32_t)(100 + k);
        h.clock_type = ATF_CLOCK_BOOTTIME;
        h.event_size = ATF_INDEX_EVENT_SIZE;
        h.event_count = n;
        h.events_offset = ATF_HEADER_SIZE;
        h.footer_offset = ATF_HEADER_SIZE + (uint64_t)n * ATF_INDEX_EVENT_SIZE;
        h.time_start_ns = n ? bench_merge__le64(ev) : 0;
        h.time_end_ns = n ? bench_merge__le64(ev + (n - 1) * ATF_INDEX_EVENT_SIZE) : 0;
        memset(&f, 0, sizeof f);
        f.event_count = n;
        f.time_start_ns = h.time_start_ns;
        f.time_end_ns = h.time_end_ns;
        f.bytes_written = (uint64_t)n * ATF_INDEX_EVENT_SIZE;
        atf_index_header_encode(&h, head);
        atf_index_footer_encode(&f, foot);
        snprintf(path, sizeof path, "%s/pid_1/thread_%zu/index.atf", root, k);
        out = fopen(path, "wb");
        ok = out && fwrite(head, 1, 64, out) == 64 &&
             fwrite(ev, ATF_INDEX_EVENT_SIZE, n, out) == n && fwrite(foot, 1, 64, out) == 64;
        if (out && fclose(out) != 0) ok = 0;
    }
    for (k = 0; buf && k < threads; k++) free(buf[k]);
    free(buf);
    free(count);
    free(cap);
    return ok;
}

static void bench_merge__remove_session(const char *root, size_t threads) {
    char path[1024];
    size_t k;
    for (k = 0; k < threads; k++) {
        snprintf(path, sizeof path, "%s/pid_1/thread_%zu/index.atf", root, k);
        unlink(path);
        snprintf(path, sizeof path, "%s/pid_1/thread_%zu", root, k);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/pid_1", root);
    rmdir(path);
}

static volatile uint64_t bench_merge__sink;

/* One sequential pass over every thread's events: ns per event. */
static double bench_merge__scan(atf_session_reader *r, size_t total) {
    uint64_t t0 = bench_merge__now(), sum = 0, n = 0;
    size_t k;
    for (k = 0; k < r->thread_count; k++) {
        const atf_index_reader *ix = &r->threads[k].reader.index;
        const uint8_t *p = atf_index_reader_raw(ix, 0);
        uint64_t i;
        for (i = 0; p && i < ix->event_count; i++, p += ATF_INDEX_EVENT_SIZE)
            sum += bench_merge__le64(p) ^ bench_merge__le64(p + 8);
        n += ix->event_count;
    }
    bench_merge__sink = sum;
    if (n != total) fprintf(stderr, "bench_merge: scan saw %llu events, not %zu\n", (unsigned long long)n, total);
    return (double)(bench_merge__now() - t0) / (double)total;
}

/* One whole merge: ns per event. */
static double bench_merge__merge(atf_session_reader *r, size_t total) {
    atf_merge m;
    atf_merge_item it;
    uint64_t t0 = bench_merge__now(), sum = 0, n = 0, last = 0;
    int sorted = 1;
    if (atf_merge_init(&m, r, NULL) != ATF_OK) return -1;
    while (atf_merge_next(&m, &it) == ATF_OK) {
        sorted &= it.event.timestamp_ns >= last;
        last = it.event.timestamp_ns;
        sum += it.event.timestamp_ns ^ it.event.function_id;
        n++;
    }
    atf_merge_deinit(&m);
    bench_merge__sink = sum;
    if (n != total || !sorted)
        fprintf(stderr, "bench_merge: merge saw %llu events (of %zu), %s\n", (unsigned long long)n, total,
                sorted ? "in order" : "NOT IN ORDER");
    return (double)(bench_merge__now() - t0) / (double)total;
}

static void bench_merge(void (*report)(const char *name, double value)) {
    static const size_t ks[] = {2, 4, 16, 64};
    const size_t total = BENCH_MERGE_EVENTS;
    double scans[2 * 4 * BENCH_MERGE_RUNS];
    size_t scan_count = 0, ki;
    int bursty;
    char root[256], name[64], dir[300];
    snprintf(root, sizeof root, "/tmp/atf_bench_merge_XXXXXX");
    if (!mkdtemp(root)) {
        fprintf(stderr, "bench_merge: cannot create a temporary directory\n");
        return;
    }
    snprintf(dir, sizeof dir, "%s/pid_1", root);
    for (ki = 0; ki < 4; ki++) {
        for (bursty = 1; bursty >= 0; bursty--) {
            atf_session_reader r;
            double merge[BENCH_MERGE_RUNS], scan[BENCH_MERGE_RUNS], ms, ss;
            size_t run;
            if (!bench_merge__write_session(root, ks[ki], total, bursty) ||
                atf_session_reader_open(&r, dir, NULL) != ATF_OK) {
                fprintf(stderr, "bench_merge: cannot write or open the K=%zu session\n", ks[ki]);
                bench_merge__remove_session(root, ks[ki]);
                continue;
            }
            bench_merge__scan(&r, total); /* warm-up: every page mapped and cached */
            bench_merge__merge(&r, total);
            for (run = 0; run < BENCH_MERGE_RUNS; run++) {
                scan[run] = bench_merge__scan(&r, total);
                merge[run] = bench_merge__merge(&r, total);
                scans[scan_count++] = scan[run];
            }
            ms = bench_merge__median(merge, BENCH_MERGE_RUNS);
            ss = bench_merge__median(scan, BENCH_MERGE_RUNS);
            snprintf(name, sizeof name, "merge_ns_%s_k%zu", bursty ? "bursty" : "uniform", ks[ki]);
            report(name, ms);
            if (ks[ki] == 16) {
                snprintf(name, sizeof name, "merge_ratio_%s_k16", bursty ? "bursty" : "uniform");
                report(name, ms / ss);
            }
            atf_session_reader_close(&r);
            bench_merge__remove_session(root, ks[ki]);
        }
    }
    if (scan_count) report("scan_ns", bench_merge__median(scans, scan_count));
    rmdir(root);
}

#endif
