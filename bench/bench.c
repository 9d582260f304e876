/* bench.c - benchmark figures for atf.h, printed as a table and written as one flat JSON
 * object of named figures:   build/bench build/bench.json
 *
 * Each benchmark is a function in the `benches` table that measures something and records
 * figures with figure_put(). Timings are medians of several repetitions; machine limits
 * (memory read and copy, a bare store per event, clock and tick reads, file writes) and
 * the peers (uftrace, LTTng-UST, ISA-L, each when installed) are measured in the same run,
 * because on a shared VM absolute figures drift and only ratios compare. The run ends with
 * a summary: each figure beside its floor or peer, their ratio, and the target it met or
 * missed. A benchmark never fails on a time. */
#define ATF_IMPLEMENTATION
#include "atf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ISA-L's crc32_iscsi (CRC32-C), the peer of the hardware path, when libisal-dev is
 * installed; the Makefile links -lisal then. */
#if defined(__has_include)
#  if __has_include(<isa-l/crc.h>)
#    include <isa-l/crc.h>
#    define BENCH_HAVE_ISAL 1
#  endif
#endif

#include "bench_record.h"
#include "bench_merge.h"
#include "bench_export.h"
#include "bench_instrument.h"

#define REPS 7                    /* repetitions per timing; the median is reported */
#define MIN_REP_SECONDS 0.02      /* each repetition runs long enough to dwarf the clock */

/* ---- figures ------------------------------------------------------------------------ */
typedef struct figure {
    char name[48];               /* copied: some benchmarks format names on the stack */
    double value;
    const char *unit;
} figure;

static figure figures[160];
static size_t figure_count;

static void figure_put(const char *name, double value, const char *unit) {
    if (figure_count < sizeof figures / sizeof figures[0]) {
        snprintf(figures[figure_count].name, sizeof figures[figure_count].name, "%s", name);
        figures[figure_count].value = value;
        figures[figure_count].unit = unit;
        figure_count++;
    }
    printf("  %-28s %12.3f %s\n", name, value, unit);
    fflush(stdout);
}

/* A recorded figure, or 0 when absent (a benchmark that could not run). */
static double figure_get(const char *name) {
    size_t i;
    for (i = 0; i < figure_count; i++)
        if (strcmp(figures[i].name, name) == 0) return figures[i].value;
    return 0;
}

static int figures_write_json(const char *path) {
    FILE *f = fopen(path, "w");
    size_t i;
    if (!f) return -1;
    fprintf(f, "{\n");
    for (i = 0; i < figure_count; i++)
        fprintf(f, "  \"%s\": %.6g%s\n", figures[i].name, figures[i].value,
                i + 1 < figure_count ? "," : "");
    fprintf(f, "}\n");
    return fclose(f);
}

/* ---- timing ------------------------------------------------------------------------- */
static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Results land here so that the compiler cannot drop the work that produced them. */
static volatile uint64_t sink;

typedef void (*bench_fn)(void *ctx);

/* Median seconds of one call to fn, over REPS repetitions. Short calls are batched: the
 * batch size is grown until one batch takes MIN_REP_SECONDS. */
static double time_median(bench_fn fn, void *ctx) {
    double samples[REPS];
    size_t calls = 1, i;
    int rep;
    fn(ctx); /* warm caches, page tables and the CRC dispatch */
    for (;;) {
        double t0 = now_seconds(), t;
        for (i = 0; i < calls; i++) fn(ctx);
        t = now_seconds() - t0;
        if (t >= MIN_REP_SECONDS || calls >= ((size_t)1 << 30)) break;
        calls *= t > MIN_REP_SECONDS / 16 ? 2 : 8;
    }
    for (rep = 0; rep < REPS; rep++) {
        double t0 = now_seconds();
        for (i = 0; i < calls; i++) fn(ctx);
        samples[rep] = (now_seconds() - t0) / (double)calls;
    }
    qsort(samples, REPS, sizeof samples[0], compare_doubles);
    return samples[REPS / 2];
}

/* GB/s (10^9 bytes per second) of fn over `bytes` per call. */
static double time_gbps(bench_fn fn, void *ctx, double bytes) {
    return bytes / time_median(fn, ctx) / 1e9;
}

/* ---- crc32c ------------------------------------------------------------------------- */
typedef struct crc_job {
    atf_crc32c_impl impl;
    const uint8_t *data;
    size_t len;
} crc_job;

static void crc_run(void *ctx) {
    const crc_job *j = (const crc_job *)ctx;
    sink += atf_crc32c_update_with(j->impl, 0, j->data, j->len, NULL);
}

#if defined(ATF__CRC32C_X64)
static void crc_run_3way(void *ctx) {
    const crc_job *j = (const crc_job *)ctx;
    sink += ~atf__crc32c__sse42(~0u, j->data, j->len);
}
#endif

#if defined(BENCH_HAVE_ISAL)
static void crc_run_isal(void *ctx) {
    const crc_job *j = (const crc_job *)ctx;
    sink += crc32_iscsi((unsigned char *)(uintptr_t)j->data, (int)j->len, 0xFFFFFFFFu);
}
#endif

/* ISA-L's crc32_iscsi on the same 64 KiB; it returns the register without the final
 * inversion, which is checked against ours once. */
static void bench_crc32c_isal(const uint8_t *buf) {
#if defined(BENCH_HAVE_ISAL)
    crc_job job;
    job.impl = ATF_CRC32C_AUTO;
    job.data = buf;
    job.len = 65536;
    if (~crc32_iscsi((unsigned char *)(uintptr_t)buf, 65536, 0xFFFFFFFFu) !=
        atf_crc32c(buf, 65536))
        printf("  (ISA-L's crc32_iscsi disagrees with atf_crc32c: its figure is not comparable)\n");
    figure_put("crc32c_isal_gbps_64k", time_gbps(crc_run_isal, &job, (double)job.len), "GB/s");
#else
    (void)buf;
    printf("  (ISA-L not installed: crc32c_isal_gbps_64k and crc32c_hw_vs_isal skipped)\n");
#endif
}

static void bench_crc32c(void) {
    static const struct {
        const char *name;
        size_t len;
    } hw_sizes[] = {{"crc32c_hw_gbps_4k", 4096},
                    {"crc32c_hw_gbps_64k", 65536},
                    {"crc32c_hw_gbps_1m", 1 << 20}};
    size_t len = 1 << 20, i;
    uint8_t *buf = (uint8_t *)malloc(len);
    crc_job job;
    atf_crc32c_impl hw = atf_crc32c_available(ATF_CRC32C_SSE42)   ? ATF_CRC32C_SSE42
                         : atf_crc32c_available(ATF_CRC32C_ARMV8) ? ATF_CRC32C_ARMV8
                                                                  : ATF_CRC32C_SW;
    if (!buf) return;
    for (i = 0; i < len; i++) buf[i] = (uint8_t)(i * 2654435761u >> 13);
    printf("  (hardware path: %s)\n",
           hw == ATF_CRC32C_SW ? "none on this CPU" : atf_crc32c_impl_str(hw));
    job.data = buf;
    if (hw != ATF_CRC32C_SW) {
        job.impl = hw;
        for (i = 0; i < sizeof hw_sizes / sizeof hw_sizes[0]; i++) {
            job.len = hw_sizes[i].len;
            figure_put(hw_sizes[i].name, time_gbps(crc_run, &job, (double)job.len), "GB/s");
        }
    }
#if defined(ATF__CRC32C_X64)
    /* The 3-way crc32 path alone: what CPUs without VPCLMULQDQ get. */
    if (hw == ATF_CRC32C_SSE42) {
        job.len = 65536;
        figure_put("crc32c_3way_gbps_64k", time_gbps(crc_run_3way, &job, (double)job.len),
                   "GB/s");
    }
#endif
    job.impl = ATF_CRC32C_SW;
    job.len = 65536;
    figure_put("crc32c_sw_gbps_64k", time_gbps(crc_run, &job, (double)job.len), "GB/s");
    bench_crc32c_isal(buf);
    free(buf);
}

/* ---- memory read: the limit every scan is held against ------------------------------ */
typedef struct mem_job {
    const uint64_t *words;
    size_t count;
} mem_job;

/* Four sums, so that the adds keep up with the loads and memory is what limits. */
static void mem_run(void *ctx) {
    const mem_job *j = (const mem_job *)ctx;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i;
    for (i = 0; i + 4 <= j->count; i += 4) {
        s0 += j->words[i];
        s1 += j->words[i + 1];
        s2 += j->words[i + 2];
        s3 += j->words[i + 3];
    }
    for (; i < j->count; i++) s0 += j->words[i];
    sink += s0 + s1 + s2 + s3;
}

#define MEM_BYTES ((size_t)256 << 20)

static void bench_mem_read(void) {
    mem_job job;
    uint64_t *words = (uint64_t *)malloc(MEM_BYTES);
    size_t i;
    if (!words) return;
    for (i = 0; i < MEM_BYTES / 8; i++) words[i] = i; /* touch every page before timing */
    job.words = words;
    job.count = MEM_BYTES / 8;
    figure_put("mem_read_gbps", time_gbps(mem_run, &job, (double)MEM_BYTES), "GB/s");
    free(words);
}

/* ---- memory copy: the limit of anything that moves bytes (the drain) ---------------- */
typedef struct copy_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
} copy_job;

static void copy_run(void *ctx) {
    const copy_job *j = (const copy_job *)ctx;
    memcpy(j->dst, j->src, j->len);
    sink += j->dst[j->len - 1];
}

/* memcpy of 256 MiB between two buffers touched beforehand: far beyond the caches, as the
 * drain's copy from the rings into the page cache is. */
static void bench_memcpy(void) {
    copy_job job;
    uint8_t *src = (uint8_t *)malloc(MEM_BYTES), *dst = (uint8_t *)malloc(MEM_BYTES);
    if (src && dst) {
        memset(src, 0x5A, MEM_BYTES);
        memset(dst, 0, MEM_BYTES);
        job.dst = dst;
        job.src = src;
        job.len = MEM_BYTES;
        figure_put("memcpy_gbps", time_gbps(copy_run, &job, (double)MEM_BYTES), "GB/s");
    }
    free(src);
    free(dst);
}

/* ---- index scan: every event of a hot, mapped index file ---------------------------- */
#define SCAN_EVENTS ((uint64_t)MEM_BYTES / ATF_INDEX_EVENT_SIZE)

/* Writes an index file of `count` events with the library's encoders; 0 on success. */
static int write_index_file(const char *path, uint64_t count) {
    enum { CHUNK_EVENTS = 32768 };
    static uint8_t chunk[CHUNK_EVENTS * ATF_INDEX_EVENT_SIZE];
    uint8_t rec[64];
    atf_index_header h;
    atf_index_footer ft;
    atf_index_event ev;
    uint64_t seq = 0;
    uint32_t crc = 0;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    memset(&h, 0, sizeof h);
    h.endian = ATF_ENDIAN_LITTLE;
    h.version = ATF_LAYOUT_2;
    h.arch = ATF_ARCH_X86_64;
    h.os = ATF_OS_LINUX;
    h.thread_id = 1;
    h.clock_type = ATF_CLOCK_BOOTTIME;
    h.event_size = ATF_INDEX_EVENT_SIZE;
    h.event_count = count;
    h.events_offset = ATF_HEADER_SIZE;
    h.footer_offset = ATF_HEADER_SIZE + count * ATF_INDEX_EVENT_SIZE;
    h.time_start_ns = 1000;
    h.time_end_ns = 1000 + (count ? count - 1 : 0) * 10;
    atf_index_header_encode(&h, rec);
    if (fwrite(rec, 1, ATF_HEADER_SIZE, f) != ATF_HEADER_SIZE) goto fail;
    memset(&ev, 0, sizeof ev);
    while (seq < count) {
        size_t n = 0;
        for (; n < CHUNK_EVENTS && seq < count; n++, seq++) {
            ev.timestamp_ns = 1000 + seq * 10;
            ev.function_id = ((uint64_t)(seq % 7) << 32) | (seq % 1000);
            ev.kind = (seq & 1) ? ATF_EVENT_RETURN : ATF_EVENT_CALL;
            ev.detail_seq = ATF_NO_DETAIL;
            atf_index_event_encode(ATF_LAYOUT_2, &ev, chunk + n * ATF_INDEX_EVENT_SIZE);
        }
        crc = atf_crc32c_update(crc, chunk, n * ATF_INDEX_EVENT_SIZE);
        if (fwrite(chunk, ATF_INDEX_EVENT_SIZE, n, f) != n) goto fail;
    }
    memset(&ft, 0, sizeof ft);
    ft.checksum = crc;
    ft.event_count = count;
    ft.time_start_ns = h.time_start_ns;
    ft.time_end_ns = h.time_end_ns;
    ft.bytes_written = count * ATF_INDEX_EVENT_SIZE;
    atf_index_footer_encode(&ft, rec);
    if (fwrite(rec, 1, ATF_FOOTER_SIZE, f) != ATF_FOOTER_SIZE) goto fail;
    return fclose(f);
fail:
    fclose(f);
    return -1;
}

static void scan_run(void *ctx) {
    const atf_index_reader *r = (const atf_index_reader *)ctx;
    uint64_t s = 0, seq;
    for (seq = 0; seq < r->event_count; seq++) {
        const uint8_t *p = atf_index_reader_raw(r, seq);
        uint64_t ts;
        memcpy(&ts, p, 8); /* timestamp_ns: the first 8 bytes, little-endian on this host */
        s += ts;
    }
    sink += s;
}

static void bench_index_scan(void) {
    char path[64];
    atf_index_reader r;
    atf_result rc;
    uint64_t expected;
    double seconds;
    snprintf(path, sizeof path, "/tmp/atf_bench_index_%ld.atf", (long)getpid());
    if (write_index_file(path, SCAN_EVENTS) != 0) {
        printf("  index_scan: cannot write %s\n", path);
        remove(path);
        return;
    }
    rc = atf_index_reader_open(&r, path, NULL);
    if (rc != ATF_OK) {
        char line[700];
        printf("  index_scan: open failed: %s\n", atf_error_format(&r.error, line, sizeof line));
        remove(path);
        return;
    }
    /* The scan must see every event: check the sum once against the closed form. */
    expected = 1000 * SCAN_EVENTS + 10 * (SCAN_EVENTS * (SCAN_EVENTS - 1) / 2);
    sink = 0;
    scan_run(&r);
    if (r.event_count != SCAN_EVENTS || sink != expected)
        printf("  index_scan: WARNING: read %llu events, sum mismatch\n",
               (unsigned long long)r.event_count);
    seconds = time_median(scan_run, &r);
    figure_put("index_scan_gbps", (double)r.event_count * ATF_INDEX_EVENT_SIZE / seconds / 1e9,
               "GB/s");
    figure_put("index_scan_mevents_per_s", (double)r.event_count / seconds / 1e6, "M events/s");
    atf_index_reader_close(&r);
    remove(path);
}

/* ---- packed index lane ------------------------------------------------------------ */
/* The events of a traced fib(N) as the tracer records them (call at depth d, return at d,
 * one function, 15-78 ns apart), coded and decoded one block at a time in cache, as the
 * drain codes them and as a reader decodes them. Mixed: the same tree with the two
 * shapes a real program's events add (about half of the SQLite shell's events have one
 * of them): another function than the last call at the same depth (the call of a fib(k) node
 * is a call of function 7 + k % 3), and a stamp delta of 128 ns or more (the return of each
 * fib(2) node and the call of each fib(1) node, 130-385 ns after the event before), each
 * where the tree puts it, as a program's code puts them, not at random. fib's tree puts
 * them in an order harder to foresee than a program's loops do (the SQLite shell's own
 * events code at 2.8 ns an event, this mix at 3.4-5.6): the mixed figures follow the
 * encoder's and decoder's second tiers, and carry no target. */
#define PACK_EVENTS (ATF_PACKED_BLOCK_EVENTS * 256u)

typedef struct pack_bench {
    uint8_t *events, *payload, *back;
    size_t lens[PACK_EVENTS / ATF_PACKED_BLOCK_EVENTS];
    uint64_t ts, n, rng;
    int mixed;
} pack_bench;

/* Events of the call tree of fib(k): 2 per call. */
static uint64_t pack_fib_size(unsigned k) {
    return k > 1 ? 2 + pack_fib_size(k - 1) + pack_fib_size(k - 2) : 2;
}

/* The gap before an event: 15 ns plus up to 63 (or 31), or, when mixed and `slow`,
 * 130-385 ns. */
static uint64_t pack_gap(const pack_bench *b, unsigned shift, int slow) {
    if (b->mixed && slow) return 130 + (b->rng >> 56);
    return 15 + (b->rng >> shift);
}

static void pack_fib_events(pack_bench *b, uint32_t depth, unsigned k) {
    atf_index_event e;
    memset(&e, 0, sizeof e);
    b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
    b->ts += pack_gap(b, 58, k == 1);
    e.timestamp_ns = b->ts, e.function_id = b->mixed ? 7 + k % 3 : 7, e.thread_id = 42;
    e.call_depth = depth;
    e.kind = ATF_EVENT_CALL, e.detail_seq = ATF_NO_DETAIL;
    atf_index_event_encode(ATF_LAYOUT_1, &e, b->events + b->n++ * ATF_INDEX_EVENT_SIZE);
    if (k > 1) {
        pack_fib_events(b, depth + 1, k - 1);
        pack_fib_events(b, depth + 1, k - 2);
    }
    b->ts += pack_gap(b, 59, k == 2);
    e.timestamp_ns = b->ts, e.kind = ATF_EVENT_RETURN;
    atf_index_event_encode(ATF_LAYOUT_1, &e, b->events + b->n++ * ATF_INDEX_EVENT_SIZE);
}

static void pack_encode_run(void *ctx) {
    pack_bench *b = (pack_bench *)ctx;
    size_t k;
    for (k = 0; k < PACK_EVENTS / ATF_PACKED_BLOCK_EVENTS; k++)
        b->lens[k] = atf_packed_encode(b->events + k * ATF_PACKED_BLOCK_EVENTS * ATF_INDEX_EVENT_SIZE,
                                       ATF_PACKED_BLOCK_EVENTS, 42,
                                       b->payload + k * ATF_PACKED_BLOCK_EVENTS * ATF_PACKED_EVENT_MAX);
}

static void pack_decode_run(void *ctx) {
    pack_bench *b = (pack_bench *)ctx;
    size_t k;
    for (k = 0; k < PACK_EVENTS / ATF_PACKED_BLOCK_EVENTS; k++)
        if (atf_packed_decode(b->payload + k * ATF_PACKED_BLOCK_EVENTS * ATF_PACKED_EVENT_MAX,
                              b->lens[k], ATF_PACKED_BLOCK_EVENTS, 42,
                              b->back + (k % 4) * ATF_PACKED_BLOCK_EVENTS * ATF_INDEX_EVENT_SIZE) != ATF_OK)
            sink++;
}

/* Codes and decodes fib's events (mixed: shaped as a real program's), figures named with
 * `suffix`. */
static void bench_packed_events(int mixed, const char *suffix) {
    pack_bench b;
    size_t k, bytes = 0;
    unsigned tree = 20;
    char name[64];
    memset(&b, 0, sizeof b);
    b.mixed = mixed;
    b.events = (uint8_t *)malloc(PACK_EVENTS * ATF_INDEX_EVENT_SIZE);
    b.payload = (uint8_t *)malloc(PACK_EVENTS * ATF_PACKED_EVENT_MAX);
    b.back = (uint8_t *)malloc(4 * ATF_PACKED_BLOCK_EVENTS * ATF_INDEX_EVENT_SIZE);
    if (!b.events || !b.payload || !b.back) {
        printf("  packed: out of memory\n");
    } else {
        while (tree > 0) { /* whole trees, smaller ones to fill the end */
            if (b.n + pack_fib_size(tree) <= PACK_EVENTS) pack_fib_events(&b, 0, tree);
            else tree--;
        }
        memset(b.events + b.n * ATF_INDEX_EVENT_SIZE, 0, (PACK_EVENTS - b.n) * ATF_INDEX_EVENT_SIZE);
        pack_encode_run(&b);
        for (k = 0; k < PACK_EVENTS / ATF_PACKED_BLOCK_EVENTS; k++)
            bytes += b.lens[k] + ATF_PACKED_BLOCK_HEADER_SIZE + 8; /* block header, table */
        snprintf(name, sizeof name, "packed_bytes_per_event%s", suffix);
        figure_put(name, (double)bytes / PACK_EVENTS, "bytes (layout 1: 32)");
        snprintf(name, sizeof name, "packed_encode_ns_per_event%s", suffix);
        figure_put(name, time_median(pack_encode_run, &b) * 1e9 / PACK_EVENTS,
                   mixed ? "ns" : "ns (target <= 3)");
        snprintf(name, sizeof name, "packed_decode_mevents_per_s%s", suffix);
        figure_put(name, PACK_EVENTS / time_median(pack_decode_run, &b) / 1e6,
                   mixed ? "M events/s" : "M events/s (target >= 300)");
    }
    free(b.events);
    free(b.payload);
    free(b.back);
}

static void bench_packed(void) {
    bench_packed_events(0, "");
    bench_packed_events(1, "_mixed");
}

/* ---- derived figures and targets ---------------------------------------------------- */
/* Ratios between figures of different benchmarks, and against the targets in PERF-NOTES.md. */
static void bench_ratios(void) {
    double mem = figure_get("mem_read_gbps");
    double copy = figure_get("memcpy_gbps");
    double scan = figure_get("index_scan_gbps");
    double hw = figure_get("crc32c_hw_gbps_64k");
    double sw = figure_get("crc32c_sw_gbps_64k");
    double isal = figure_get("crc32c_isal_gbps_64k");
    double drain = figure_get("drain_ns_per_event");
    if (mem > 0 && scan > 0) figure_put("index_scan_vs_mem_read", scan / mem, "x");
    if (hw > 0) figure_put("crc32c_hw_64k_vs_target_19", hw / 19.0, "x");
    if (figure_get("crc32c_3way_gbps_64k") > 0)
        figure_put("crc32c_3way_64k_vs_target_19", figure_get("crc32c_3way_gbps_64k") / 19.0, "x");
    if (sw > 0) figure_put("crc32c_sw_64k_vs_target_2_5", sw / 2.5, "x");
    if (hw > 0 && mem > 0) figure_put("crc32c_hw_64k_vs_mem_read", hw / mem, "x");
    if (hw > 0 && isal > 0) figure_put("crc32c_hw_vs_isal", hw / isal, "x");
    /* the drain's time per event against copying its 32 bytes at memcpy speed */
    if (drain > 0 && copy > 0)
        figure_put("drain_vs_memcpy", drain / (ATF_INDEX_EVENT_SIZE / copy), "x");
}

/* One line of the summary: a figure, what it is held against (a floor of this machine or
 * a peer, measured in the same run), their ratio and its target. */
typedef struct target {
    const char *figure, *against, *ratio;
    const char *valid;           /* a figure that must be 1 for the ratio to count, or NULL */
    int at_most;                 /* the ratio must be <= goal (else >= goal) */
    double goal;                 /* 0: no target, shown for reference */
} target;

static const target targets[] = {
    {"produce_ns_caller_ts", "store_floor_ns", "produce_vs_store_floor", NULL, 1, 1.3},
    {"produce_ns_lib_clock", "clock_ns", "produce_lib_clock_over_clock_ns", NULL, 1, 2.0},
    {"drain_ns_per_event", "drain_limit_ns_per_event", "drain_vs_limit", NULL, 1, 0},
    {"drain_ns_per_event", "memcpy_gbps", "drain_vs_memcpy", NULL, 1, 0},
    {"record_gbps", "write_gbps", "record_vs_write", "record_valid", 0, 0.8},
    {"instrument_cpu_ns_per_call", "floor_ns_per_call", "instrument_vs_floor",
     "instrument_overhead_valid", 1, 1.5},
    {"instrument_threads_cpu_ns_per_call", "floor_ns_per_call", "instrument_threads_vs_floor",
     "instrument_threads_valid", 1, 1.5},
    /* the same steps with no hooks or session: what they cost beside the floor */
    {"bare_recorder_cpu_ns_per_call", "floor_ns_per_call", "bare_recorder_vs_floor", NULL, 1, 0},
    {"instrument_overhead_ns_per_call", "instrument_tick_floor_ns_per_call",
     "instrument_vs_tick_floor", "instrument_overhead_valid", 1, 0},
    {"instrument_filtered_ns_per_call", "instrument_hook_floor_ns_per_call",
     "instrument_filtered_vs_hook_floor", "instrument_filtered_valid", 1, 1.25},
    {"instrument_overhead_ns_per_call", "uftrace_overhead_ns_per_call", "instrument_vs_uftrace",
     "instrument_overhead_valid", 0, 3.0},
    {"instrument_overhead_ns_per_call", "lttng_overhead_ns_per_call", "instrument_vs_lttng",
     "instrument_overhead_valid", 0, 5.0},
    /* funtrace keeps only each thread's last 1 MiB of events; ours every event */
    {"instrument_net_ns_per_call", "funtrace_ns_per_call", "instrument_vs_funtrace",
     "instrument_net_valid", 0, 1.0},
    {"instrument_threads_net_ns_per_call", "funtrace_threads_ns_per_call",
     "instrument_threads_vs_funtrace", "instrument_net_valid", 0, 1.0},
    {"complete_trace_s", "complete_trace_uftrace_s", "complete_trace_vs_uftrace",
     "complete_trace_valid", 0, 1.0},
    {"crc32c_hw_gbps_64k", "crc32c_isal_gbps_64k", "crc32c_hw_vs_isal", NULL, 0, 1.0},
    {"crc32c_sw_gbps_64k", NULL, "crc32c_sw_64k_vs_target_2_5", NULL, 0, 1.0},
    {"index_scan_gbps", "mem_read_gbps", "index_scan_vs_mem_read", NULL, 0, 0.8},
    {"export_report_s", "export_tree_s", "export_report_vs_tree", NULL, 1, 1.2},
    {"export_report_html_bytes", NULL, "export_report_html_vs_5mb", NULL, 1, 1.0},
};

static int figure_has(const char *name) {
    size_t i;
    for (i = 0; i < figure_count; i++)
        if (strcmp(figures[i].name, name) == 0) return 1;
    return 0;
}

/* "met", "missed", "INVALID" (the measurement lost events), "-" (no target) or "not
 * measured" (a benchmark or a peer did not run). */
static const char *target_verdict(const target *t) {
    double r = figure_get(t->ratio);
    if (!figure_has(t->ratio)) return "not measured";
    if (t->valid && figure_get(t->valid) != 1) return "INVALID";
    if (t->goal == 0) return "-";
    return (t->at_most ? r <= t->goal : r >= t->goal) ? "met" : "missed";
}

static void bench_summary(void) {
    size_t i;
    printf("  %-32s %10s  %-34s %10s  %-12s %s\n", "figure", "value", "against", "value",
           "ratio", "target");
    for (i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        const target *t = &targets[i];
        char goal[32] = "", ratio[48];
        if (t->goal > 0) snprintf(goal, sizeof goal, "%s %.2f", t->at_most ? "<=" : ">=", t->goal);
        snprintf(ratio, sizeof ratio, "%.3f", figure_get(t->ratio));
        printf("  %-32s %10.3f  %-34s %10.3f  %-12s %-8s %s (%s)\n", t->figure,
               figure_get(t->figure), t->against ? t->against : "(fixed target)",
               t->against ? figure_get(t->against) : t->goal,
               figure_has(t->ratio) ? ratio : "-", goal, target_verdict(t), t->ratio);
    }
}

/* The recording, merge, export and auto-tracer benchmarks report through this. */
static void report_figure(const char *name, double value) { figure_put(name, value, ""); }

static void bench_recording(void) { bench_record(report_figure); }
static void bench_merging(void) { bench_merge(report_figure); }
static void bench_exporting(void) { bench_export(report_figure); }
static void bench_instrumenting(void) { bench_instrument(report_figure); }

static const struct {
    const char *name;
    void (*run)(void);
} benches[] = {
    {"crc32c", bench_crc32c},
    {"memory read (256 MiB, one core)", bench_mem_read},
    {"memory copy (256 MiB, one core)", bench_memcpy},
    {"index scan (256 MiB mapped file)", bench_index_scan},
    {"packed index lane (fib's events, then mixed as a real program's; a block at a time)", bench_packed},
    {"recording (producer, drain, session files)", bench_recording},
    {"session merge (K threads, 8 M events)", bench_merging},
    {"export (10 M events)", bench_exporting},
    {"auto-tracer (fib overhead; the busy sample traced whole)", bench_instrumenting},
    {"ratios", bench_ratios},
    {"summary (every ratio from this run; a target per line)", bench_summary},
};

int main(int argc, char **argv) {
    const char *json = argc > 1 ? argv[1] : "bench.json";
    size_t i;
    printf("atf.h %d.%d.%d benchmarks (median of %d repetitions; crc32c default path: %s)\n",
           ATF_VERSION_MAJOR, ATF_VERSION_MINOR, ATF_VERSION_PATCH, REPS,
           atf_crc32c_impl_str(atf_crc32c_active()));
    for (i = 0; i < sizeof benches / sizeof benches[0]; i++) {
        printf("%s\n", benches[i].name);
        benches[i].run();
    }
    if (figures_write_json(json) != 0) {
        printf("cannot write %s\n", json);
        return 1;
    }
    printf("figures written to %s\n", json);
    return 0;
}
