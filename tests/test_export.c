/* test_export.c - the stats, tree, export and diff commands (tools/stats_cmd.c,
 * tree_cmd.c, export_cmd.c, diff_cmd.c, over the pairing of tools/walk.c and the figures
 * of tools/profile.c), run in-process, on sessions recorded here with the library's
 * writer in manual drain mode: exact stats figures for known nested, recursive and
 * unbalanced traces; folded stacks line for line in each thread-frame mode, and atf
 * diff's functions and paths, in order, figure for figure; Chrome JSON that parses and is
 * balanced per thread; Perfetto protobuf decoded field by field against Perfetto's
 * schema, with balanced slices and resolving interned names; both Parquet tables decoded
 * row by row against the merged session and `atf stats --json`; detail records as slice
 * arguments in both viewer formats (equal to what was recorded) and Chrome output byte
 * for byte as before for a trace without detail; process and thread names in both, and
 * what `atf info` says of a session's command line, modules and anchors (text and
 * --json); PATH kinds and command-line handling; a session_* directory of several
 * processes (made with fork() here, and one `atf record` makes of tests/programs/forks.c)
 * exported whole, each process counted against `atf stats --json --pid N`. */
#define ATF_IMPLEMENTATION
#include "atf.h"

/* A small depth limit, so that the skipping of too-deep calls is tested. */
#define WALK_MAX_DEPTH 8u
#include "../tools/embed.h"

#include "harness.h"
#include "cli_run.h"
#include "json_decode.h"
#include "parquet_decode.h"
#include "proto_decode.h"
#include "scratch_dir.h"

#include <stdlib.h>
#include <unistd.h>

static char g_root[256];
static int g_session_number;

/* ==== recording ====================================================================== */
/* A session whose threads are caller-memory rings with chosen thread ids, written from
 * this one OS thread: every figure of the trace is fixed by the test. */
enum { REC_THREADS_MAX = 8, REC_RING_EVENTS = 4096 };

typedef struct rec {
    atf_session *s;
    atf_producer w[REC_THREADS_MAX];
    void *raw[REC_THREADS_MAX];
    size_t count;
    char dir[1024];              /* the pid_* directory */
} rec;

/* A session in g_root/name/pid_<this process>. */
static void rec_open_named(rec *r, uint32_t layout, const char *name) {
    atf_session_config cfg;
    memset(r, 0, sizeof *r);
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.layout = layout;
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&r->s, g_root, &cfg));
    if (r->s) snprintf(r->dir, sizeof r->dir, "%s", atf_session_path(r->s));
}

static void rec_open(rec *r, uint32_t layout) {
    char name[64];
    snprintf(name, sizeof name, "session_%d", ++g_session_number);
    rec_open_named(r, layout, name);
}

/* Adds thread slot r->count with OS thread id tid and a ring of ring_events slots;
 * returns its writer. */
static atf_producer *rec_thread_ring(rec *r, uint32_t tid, const char *name, uint32_t layout,
                                   uint64_t ring_events) {
    size_t size = atf_ring_memory_size(ATF_RING_INDEX, ring_events);
    uint8_t *raw = (uint8_t *)malloc(size + 64), *mem;
    uint32_t slot = 0;
    size_t i = r->count++;
    mem = raw + (64 - ((uintptr_t)raw & 63));
    r->raw[i] = raw;
    CHECK_RESULT(ATF_OK, atf_ring_init(mem, size, ATF_RING_INDEX, ring_events, layout, tid));
    CHECK_RESULT(ATF_OK, atf_session_attach_rings(r->s, mem, size, NULL, 0, name, &slot));
    CHECK_EQ(i, slot);
    CHECK_RESULT(ATF_OK, atf_producer_init(&r->w[i], mem, size, NULL, 0, ATF_DETAIL_OFF));
    return &r->w[i];
}

static atf_producer *rec_thread(rec *r, uint32_t tid, const char *name, uint32_t layout) {
    return rec_thread_ring(r, tid, name, layout, REC_RING_EVENTS);
}

static void rec_close(rec *r) {
    size_t i;
    CHECK_RESULT(ATF_OK, atf_session_close(r->s));
    for (i = 0; i < r->count; i++) free(r->raw[i]);
}

#define CALL(w, fid, ts) CHECK_RESULT(ATF_OK, atf_producer_call((w), (fid), (ts)))
#define RET(w, fid, ts) CHECK_RESULT(ATF_OK, atf_producer_return((w), (fid), (ts)))
#define EXC(w, fid, ts) CHECK_RESULT(ATF_OK, atf_producer_exception((w), (fid), (ts)))

enum { F_MAIN = 1, F_A = 2, F_B = 3, F_R = 4, F_E = 5, F_F = 6, F_G = 7, F_ZZ = 8, F_X = 9 };
enum { T0 = 1000000 };               /* base timestamp: 1000.000 us */

/* main { a { b } a } r { r }: every figure known (see test_stats_nested). */
static void write_nested(atf_producer *w) {
    CALL(w, F_MAIN, T0 + 0);
    CALL(w, F_A, T0 + 100);
    CALL(w, F_B, T0 + 200);
    RET(w, F_B, T0 + 500);
    RET(w, F_A, T0 + 1000);
    CALL(w, F_A, T0 + 1100);
    RET(w, F_A, T0 + 1400);
    RET(w, F_MAIN, T0 + 2000);
    CALL(w, F_R, T0 + 3000);
    CALL(w, F_R, T0 + 3100);
    RET(w, F_R, T0 + 3200);
    RET(w, F_R, T0 + 4000);
}

/* Starts inside a call, returns across a frame, returns from nowhere, throws, and ends
 * with two frames open (see test_stats_unbalanced). */
static void write_unbalanced(atf_producer *w) {
    RET(w, F_X, T0 + 50);            /* no call: ignored */
    CALL(w, F_A, T0 + 100);
    CALL(w, F_B, T0 + 200);
    RET(w, F_A, T0 + 300);           /* b unwound at 300, then a returns */
    RET(w, F_ZZ, T0 + 350);          /* not on the stack: ignored */
    CALL(w, F_B + 100, T0 + 400);    /* fid 103 */
    EXC(w, F_B + 100, T0 + 450);     /* an exception unwinds like a return */
    CALL(w, F_G, T0 + 460);
    RET(w, F_G, T0 + 480);
    CALL(w, F_E, T0 + 500);
    CALL(w, F_F, T0 + 600);          /* e and f open at the end (last ts 600) */
}

static void add_symbols(rec *r) {
    atf_session_add_symbol(r->s, F_MAIN, "main");
    atf_session_add_symbol(r->s, F_A, "a");
    atf_session_add_symbol(r->s, F_B, "b");
    atf_session_add_symbol(r->s, F_R, "recurse");
    atf_session_add_symbol(r->s, F_G, "g");
}

/* A session with one thread (tid 4242, "main") holding the nested trace. */
static void make_nested(rec *r, uint32_t layout) {
    atf_producer *w;
    rec_open(r, layout);
    add_symbols(r);
    w = rec_thread(r, 4242, "main", layout);
    write_nested(w);
    rec_close(r);
}

/* A "ts" literal in microseconds ("1234.567") back to nanoseconds. */
static uint64_t j_ts_ns(const jdoc *d, long obj) {
    const char *s = j_str(d, obj, "ts"), *dot = strchr(s, '.');
    uint64_t ns = strtoull(s, NULL, 10) * 1000;
    if (dot) ns += strtoull(dot + 1, NULL, 10);
    CHECK(dot && strlen(dot + 1) == 3);
    return ns;
}

static size_t count_of(const char *hay, const char *needle);

/* ==== stats ========================================================================== */
static const profile_fn *fn_of(const profile_fns *st, uint64_t fid) {
    return profile_fns_find(st, fid);
}

#define CHECK_FN(st, fid, calls_, total_, self_, min_, max_) do { \
    const profile_fn *fn_ = fn_of((st), (fid)); \
    CHECK(fn_ != NULL); \
    if (fn_) { \
        CHECK_EQ((calls_), fn_->calls); CHECK_EQ((total_), fn_->total_ns); \
        CHECK_EQ((self_), fn_->self_ns); CHECK_EQ((min_), fn_->min_ns); \
        CHECK_EQ((max_), fn_->max_ns); \
    } } while (0)

/* Collects the stats of path into st/w (the source stays open in src). */
static int collect(const char *path, cli_trace *src, profile_fns *st, walk_ctx *w) {
    static const cli_command stats = { "stats", cli_cmd_stats, "", "" };
    cli_progress p;
    FILE *err = tmpfile();
    int status;
    cli_io_begin(NULL, err);
    status = cli_trace_open(&stats, src, path);
    fclose(err);
    cli_io_begin(NULL, NULL);
    CHECK_EQ(CLI_EXIT_OK, status);
    if (status != CLI_EXIT_OK) return 0;
    cli_progress_init(&p, "test", 0, NULL);
    memset(st, 0, sizeof *st);
    CHECK_RESULT(ATF_OK, profile_collect(src, w, st, NULL, 0, PROFILE_FRAME_NONE, &p));
    return 1;
}

static void collect_free(cli_trace *src, profile_fns *st, walk_ctx *w) {
    profile_fns_free(st);
    walk_deinit(w);
    cli_trace_close(src);
}

static void check_nested_figures(const char *path) {
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    if (!collect(path, &src, &st, &w)) return;
    CHECK_EQ(4, st.count);
    /* main [0, 2000]: callees a 900 + a 300 */
    CHECK_FN(&st, F_MAIN, 1, 2000, 800, 2000, 2000);
    /* a [100, 1000] with b 300 inside, a [1100, 1400] */
    CHECK_FN(&st, F_A, 2, 1200, 900, 300, 900);
    CHECK_FN(&st, F_B, 1, 300, 300, 300, 300);
    /* r [3000, 4000] around r [3100, 3200]: total counts the outer call once */
    CHECK_FN(&st, F_R, 2, 1000, 1000, 100, 1000);
    CHECK_EQ(1, w.count);
    CHECK_EQ(12, w.threads[0].events);
    CHECK_EQ(T0, w.threads[0].first_ns);
    CHECK_EQ(T0 + 4000, w.threads[0].last_ns);
    CHECK_EQ(0, w.threads[0].unmatched + w.threads[0].unwound + w.threads[0].cut_short);
    collect_free(&src, &st, &w);
}

static void test_stats_nested(void) {
    rec r;
    make_nested(&r, ATF_LAYOUT_1);
    check_nested_figures(r.dir);
}

static void test_stats_layout2(void) {
    rec r;
    make_nested(&r, ATF_LAYOUT_2);
    check_nested_figures(r.dir);
}

static void test_stats_unbalanced(void) {
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    rec_open(&r, ATF_LAYOUT_1);
    add_symbols(&r);
    write_unbalanced(rec_thread(&r, 77, "u", ATF_LAYOUT_1));
    rec_close(&r);
    if (!collect(r.dir, &src, &st, &w)) return;
    CHECK_EQ(6, st.count);
    CHECK_FN(&st, F_A, 1, 200, 100, 200, 200);       /* [100, 300], b inside */
    CHECK_FN(&st, F_B, 1, 100, 100, 100, 100);       /* [200, 300], unwound */
    CHECK_FN(&st, F_B + 100, 1, 50, 50, 50, 50);     /* closed by the exception */
    CHECK_FN(&st, F_G, 1, 20, 20, 20, 20);           /* the rest still counts exactly */
    CHECK_FN(&st, F_E, 1, 100, 100, 100, 100);       /* open: closed at 600 */
    CHECK_FN(&st, F_F, 1, 0, 0, 0, 0);
    CHECK(fn_of(&st, F_X) == NULL);
    CHECK(fn_of(&st, F_ZZ) == NULL);
    CHECK_EQ(2, w.threads[0].unmatched);
    CHECK_EQ(1, w.threads[0].unwound);
    CHECK_EQ(2, w.threads[0].cut_short);
    CHECK_EQ(11, w.threads[0].events);
    collect_free(&src, &st, &w);
}

static void test_stats_depth_limit(void) {
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    atf_producer *wr;
    uint64_t i;
    rec_open(&r, ATF_LAYOUT_1);
    wr = rec_thread(&r, 78, "deep", ATF_LAYOUT_1);
    for (i = 0; i < 10; i++) CALL(wr, 100 + i, T0 + i * 10);      /* 10 deep, limit 8 */
    for (i = 10; i-- > 0;) RET(wr, 100 + i, T0 + 200 - i * 10);
    CALL(wr, 200, T0 + 300);
    RET(wr, 200, T0 + 310);
    rec_close(&r);
    if (!collect(r.dir, &src, &st, &w)) return;
    CHECK_EQ(9, st.count);
    CHECK_FN(&st, 100, 1, 200, 20, 200, 200);        /* [0, 200] around 101 [10, 190] */
    CHECK_FN(&st, 107, 1, 60, 60, 60, 60);           /* [70, 130]: 108, 109 not tracked */
    CHECK(fn_of(&st, 108) == NULL);
    CHECK(fn_of(&st, 109) == NULL);
    CHECK_FN(&st, 200, 1, 10, 10, 10, 10);
    CHECK_EQ(2, w.threads[0].too_deep);
    CHECK_EQ(0, w.threads[0].unmatched);
    collect_free(&src, &st, &w);
}

/* File order differs from time order: pairing follows time. */
static void test_stats_out_of_order_file(void) {
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    atf_producer *wr;
    rec_open(&r, ATF_LAYOUT_1);
    wr = rec_thread(&r, 79, "ooo", ATF_LAYOUT_1);
    CALL(wr, F_A, T0 + 100);
    RET(wr, F_A, T0 + 400);
    CALL(wr, F_B, T0 + 200);
    RET(wr, F_B, T0 + 300);
    rec_close(&r);
    if (!collect(r.dir, &src, &st, &w)) return;
    CHECK_EQ(1, src.reader.threads[0].out_of_order);
    CHECK_FN(&st, F_A, 1, 300, 200, 300, 300);
    CHECK_FN(&st, F_B, 1, 100, 100, 100, 100);
    collect_free(&src, &st, &w);
}

/* The fids of "functions" in a stats --json output, in order. */
static size_t json_fids(const jdoc *d, uint64_t *fids, size_t cap) {
    long fns = j_get(d, 0, "functions"), it;
    size_t n = 0;
    if (fns < 0) return 0;
    for (it = d->nodes[fns].child; it >= 0 && n < cap; it = d->nodes[it].next)
        fids[n++] = strtoull(j_str(d, it, "fid") + 2, NULL, 16);
    return n;
}

/* A relative window counts from the thread's smallest time, not from its first event in
 * file order (the session reader knows it only once it checked the order). */
static void test_window_from_smallest_time(void) {
    rec r;
    run_result o;
    jdoc d;
    uint64_t fids[4];
    atf_producer *wr;
    rec_open(&r, ATF_LAYOUT_1);
    wr = rec_thread(&r, 80, "ooo", ATF_LAYOUT_1);
    CALL(wr, F_A, T0 + 200);
    RET(wr, F_A, T0 + 300);
    CALL(wr, F_B, T0 + 100);
    RET(wr, F_B, T0 + 150);
    rec_close(&r);
    o = run(cli_main, "stats", r.dir, "--json", "--to", "+60ns", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK_EQ(1, json_fids(&d, fids, 4)); /* [T0 + 100, T0 + 160]: b alone */
    CHECK_EQ(F_B, fids[0]);
    j_free(&d);
    run_free(&o);
}

/* Writes thread_<slot>/pauses.atf of session dir with the n pauses p (what a recorder
 * whose thread drained its own ring leaves). */
static void write_pauses(const char *dir, unsigned slot, const atf_pause *p, size_t n) {
    char path[1200];
    uint8_t b[ATF_PAUSES_HEADER_SIZE + 4 * ATF_PAUSE_RECORD_SIZE];
    size_t i;
    FILE *f;
    snprintf(path, sizeof path, "%s/thread_%u/pauses.atf", dir, slot);
    atf_pauses_header_encode(80, b);
    for (i = 0; i < n && i < 4; i++) atf_pause_encode(&p[i], b + ATF_PAUSES_HEADER_SIZE + i * ATF_PAUSE_RECORD_SIZE);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ(1, fwrite(b, ATF_PAUSES_HEADER_SIZE + i * ATF_PAUSE_RECORD_SIZE, 1, f));
    fclose(f);
}

/* The recorder's pauses are no function's time: main { a } with a pause of 50 ns in main
 * before a and one of 500 ns inside a. stats leaves them out of total and self times and
 * lists them under "pauses"; tree says how much it left out; the Chrome export keeps the
 * real times and draws each pause as a slice of its own. */
static void test_stats_pauses_left_out(void) {
    static const atf_pause pauses[2] = {
        { 1, T0 + 10, T0 + 60, ATF_PAUSE_SELF_DRAIN },   /* after call main */
        { 2, T0 + 200, T0 + 700, ATF_PAUSE_SELF_DRAIN }, /* after call a */
    };
    rec r;
    run_result o;
    jdoc d;
    long fns, it;
    atf_producer *w;
    int seen = 0;
    rec_open(&r, ATF_LAYOUT_1);
    w = rec_thread(&r, 80, "main", ATF_LAYOUT_1);
    CALL(w, F_MAIN, T0);
    CALL(w, F_A, T0 + 100);
    RET(w, F_A, T0 + 1100);
    RET(w, F_MAIN, T0 + 2000);
    rec_close(&r);
    write_pauses(r.dir, 0, pauses, 2);
    o = run(cli_main, "stats", r.dir, "--json", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    fns = j_get(&d, 0, "functions");
    for (it = fns >= 0 ? d.nodes[fns].child : -1; it >= 0; it = d.nodes[it].next) {
        uint64_t fid = strtoull(j_str(&d, it, "fid") + 2, NULL, 16);
        seen++;
        if (fid == F_A) {
            CHECK_EQ(500, j_u64(&d, it, "total_ns")); /* 1000 - 500 */
            CHECK_EQ(500, j_u64(&d, it, "self_ns"));
            CHECK_EQ(500, j_u64(&d, it, "max_ns"));
        } else {
            CHECK_EQ(F_MAIN, fid);
            CHECK_EQ(1450, j_u64(&d, it, "total_ns")); /* 2000 - 50 - 500 */
            CHECK_EQ(950, j_u64(&d, it, "self_ns"));   /* 1450 - a's 500 */
        }
    }
    CHECK_EQ(2, seen);
    CHECK_EQ(2, j_u64(&d, j_get(&d, 0, "pauses"), "count"));
    CHECK_EQ(550, j_u64(&d, j_get(&d, 0, "pauses"), "total_ns"));
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "(tracer paused 550ns, left out)") != NULL); /* main */
    CHECK(strstr(o.out, "(tracer paused 500ns, left out)") != NULL); /* a */
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "\"ts\":1000.200,\"ph\":\"B\",\"name\":\"tracer pause\"") != NULL);
    CHECK(strstr(o.out, "\"ts\":1000.700,\"ph\":\"E\"}") != NULL);
    run_free(&o);
}

static void test_stats_json(void) {
    rec r;
    run_result o;
    jdoc d;
    uint64_t fids[8];
    long fns, th, it;
    int seen = 0;
    make_nested(&r, ATF_LAYOUT_1);
    o = run(cli_main, "stats", r.dir, "--json", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    fns = j_get(&d, 0, "functions");
    th = j_get(&d, 0, "threads");
    CHECK(fns >= 0 && th >= 0);
    /* default order: self time, largest first: r 1000, a 900, main 800, b 300 */
    CHECK_EQ(4, json_fids(&d, fids, 8));
    CHECK_EQ(F_R, fids[0]);
    CHECK_EQ(F_A, fids[1]);
    CHECK_EQ(F_MAIN, fids[2]);
    CHECK_EQ(F_B, fids[3]);
    for (it = fns >= 0 ? d.nodes[fns].child : -1; it >= 0; it = d.nodes[it].next) {
        if (strcmp(j_str(&d, it, "fid"), "0x0000000000000002") != 0) continue;
        seen = 1;
        CHECK(strcmp(j_str(&d, it, "name"), "a") == 0);
        CHECK_EQ(2, j_u64(&d, it, "calls"));
        CHECK_EQ(1200, j_u64(&d, it, "total_ns"));
        CHECK_EQ(900, j_u64(&d, it, "self_ns"));
        CHECK_EQ(300, j_u64(&d, it, "min_ns"));
        CHECK_EQ(900, j_u64(&d, it, "max_ns"));
    }
    CHECK(seen);
    it = th >= 0 ? d.nodes[th].child : -1;
    CHECK(it >= 0);
    if (it >= 0) {
        CHECK_EQ(0, j_u64(&d, it, "slot"));
        CHECK_EQ(4242, j_u64(&d, it, "tid"));
        CHECK_EQ(12, j_u64(&d, it, "events"));
        CHECK_EQ(0, j_u64(&d, it, "dropped"));
        CHECK_EQ(T0, j_u64(&d, it, "start_ns"));
        CHECK_EQ(T0 + 4000, j_u64(&d, it, "end_ns"));
        CHECK_EQ(-1, d.nodes[it].next);
    }
    j_free(&d);
    run_free(&o);

    /* calls: a 2, r 2 (ties by id), main 1, b 1 */
    o = run(cli_main, "stats", "--sort", "calls", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK_EQ(4, json_fids(&d, fids, 8));
    CHECK_EQ(F_A, fids[0]);
    CHECK_EQ(F_R, fids[1]);
    CHECK_EQ(F_MAIN, fids[2]);
    CHECK_EQ(F_B, fids[3]);
    j_free(&d);
    run_free(&o);

    o = run(cli_main, "stats", "--sort=name", "--limit", "3", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK_EQ(3, json_fids(&d, fids, 8));
    CHECK_EQ(F_A, fids[0]);
    CHECK_EQ(F_B, fids[1]);
    CHECK_EQ(F_MAIN, fids[2]);
    j_free(&d);
    run_free(&o);

    o = run(cli_main, "stats", "--sort", "total", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "main") != NULL);
    run_free(&o);
}

/* ==== a multi-thread session for the exporters ======================================= */
/* Slot 0 (tid 5001): nested; slot 1 (tid 5002): unbalanced; slot 2 (tid 5003): no
 * events; names that need escaping, UTF-8 and invalid UTF-8; interleaved timestamps. */
static const char name_quote[] = "quote\"back\\slash\nnew\ttab\x01";
static const char name_utf8[] = "gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x98\x80";
static const char name_bad[] = "bad\xff\xfe" "end";
static const char name_bad_clean[] = "bad\xef\xbf\xbd\xef\xbf\xbd" "end";

static void make_multi(rec *r) {
    atf_producer *w0, *w1;
    rec_open(r, ATF_LAYOUT_1);
    add_symbols(r);
    atf_session_add_symbol(r->s, F_E, name_quote);
    atf_session_add_symbol(r->s, F_F, name_utf8);
    atf_session_add_symbol(r->s, F_B + 100, name_bad);
    w0 = rec_thread(r, 5001, "main \"thread\"", ATF_LAYOUT_1);
    w1 = rec_thread(r, 5002, "worker", ATF_LAYOUT_1);
    rec_thread(r, 5003, NULL, ATF_LAYOUT_1);
    write_nested(w0);
    write_unbalanced(w1);
    rec_close(r);
}

/* Expected B (begin) events per thread: 6 nested calls; 6 unbalanced frames. */
static void test_export_chrome(void) {
    rec r;
    jdoc d;
    char out[1200];
    char *text;
    size_t len;
    long evs, it;
    uint64_t depth[3] = {0, 0, 0}, begins[3] = {0, 0, 0}, ends[3] = {0, 0, 0}, last[3] = {0, 0, 0};
    int names_seen = 0, quote_seen = 0, utf8_seen = 0, bad_seen = 0, ts_seen = 0;
    run_result o;
    make_multi(&r);
    snprintf(out, sizeof out, "%s/../chrome.json", r.dir);
    o = run(cli_main, "export", "--format", "chrome", "-o", out, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(0, o.out_len);
    run_free(&o);
    text = read_file(out, &len);
    CHECK(text != NULL);
    if (!text) return;
    CHECK(j_parse(&d, text, len));
    evs = j_get(&d, 0, "traceEvents");
    CHECK(evs >= 0 && d.nodes[evs].type == J_ARR);
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph"), *name = j_str(&d, it, "name");
        uint64_t tid = j_u64(&d, it, "tid");
        size_t k = tid >= 5001 && tid <= 5003 ? (size_t)(tid - 5001) : 0;
        CHECK(j_u64(&d, it, "pid") == strtoull(strrchr(r.dir, '_') + 1, NULL, 10));
        if (strcmp(ph, "M") == 0) {
            long args = j_get(&d, it, "args");
            if (strcmp(name, "thread_name") == 0) {
                const char *tn = j_str(&d, args, "name");
                names_seen++;
                if (tid == 5001) CHECK(strcmp(tn, "main \"thread\"") == 0);
                if (tid == 5002) CHECK(strcmp(tn, "worker") == 0);
                if (tid == 5003) CHECK(strcmp(tn, "thread_2") == 0);
            }
            continue;
        }
        CHECK(tid >= 5001 && tid <= 5003);
        CHECK(j_ts_ns(&d, it) >= last[k]); /* time order within each thread */
        last[k] = j_ts_ns(&d, it);
        if (strcmp(ph, "B") == 0) {
            depth[k]++;
            begins[k]++;
            if (strcmp(name, name_quote) == 0) quote_seen++;
            if (strcmp(name, name_utf8) == 0) utf8_seen++;
            if (strcmp(name, name_bad_clean) == 0) bad_seen++;
            if (tid == 5001 && strcmp(name, "b") == 0) {
                CHECK(strstr(text, "\"ts\":1000.200,") != NULL);
                CHECK_EQ(T0 + 200, j_ts_ns(&d, it));
                ts_seen = 1;
            }
        } else if (strcmp(ph, "E") == 0) {
            CHECK(depth[k] > 0); /* never closes what is not open */
            if (depth[k]) depth[k]--;
            ends[k]++;
        } else {
            harness__fail(__FILE__, __LINE__, "unexpected phase");
        }
    }
    CHECK_EQ(3, names_seen);
    CHECK_EQ(0, depth[0]);
    CHECK_EQ(0, depth[1]);
    CHECK_EQ(6, begins[0]);
    CHECK_EQ(6, ends[0]);
    CHECK_EQ(6, begins[1]);
    CHECK_EQ(6, ends[1]);
    CHECK_EQ(0, begins[2]);
    CHECK_EQ(1, quote_seen);
    CHECK_EQ(1, utf8_seen);
    CHECK_EQ(1, bad_seen);
    CHECK(ts_seen);
    j_free(&d);
    /* a second opinion when python3 is there */
    if (system("python3 -c 'pass' >/dev/null 2>&1") == 0) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' '%s'", out);
        CHECK_EQ(0, system(cmd));
    }
    free(text);

    /* to stdout by default */
    o = run(cli_main, "export", r.dir, "--format=chrome", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
}

/* ==== perfetto: a protobuf wire-format decoder and Perfetto's schema ================= */
/* Field numbers and types of the messages the exporter writes, as published in
 * google/perfetto protos/perfetto/trace/: trace.proto, trace_packet.proto,
 * track_event/{track_event,track_descriptor,process_descriptor,thread_descriptor,
 * debug_annotation}.proto, interned_data/interned_data.proto. A field the exporter writes
 * that is not listed here, or with another wire type, fails the test. */
enum { M_TRACE, M_PACKET, M_TRACK_DESC, M_PROCESS, M_THREAD, M_TRACK_EVENT, M_INTERNED,
       M_EVENT_NAME, M_ANNOTATION, M_NONE = PD_NO_MESSAGE };

static const pd_spec pf_specs[] = {
    {M_TRACE, 1, 2, M_PACKET, "Trace.packet"},
    {M_PACKET, 8, 0, M_NONE, "TracePacket.timestamp"},
    {M_PACKET, 10, 0, M_NONE, "TracePacket.trusted_packet_sequence_id"},
    {M_PACKET, 11, 2, M_TRACK_EVENT, "TracePacket.track_event"},
    {M_PACKET, 12, 2, M_INTERNED, "TracePacket.interned_data"},
    {M_PACKET, 13, 0, M_NONE, "TracePacket.sequence_flags"},
    {M_PACKET, 41, 0, M_NONE, "TracePacket.incremental_state_cleared"},
    {M_PACKET, 60, 2, M_TRACK_DESC, "TracePacket.track_descriptor"},
    {M_PACKET, 87, 0, M_NONE, "TracePacket.first_packet_on_sequence"},
    {M_TRACK_DESC, 1, 0, M_NONE, "TrackDescriptor.uuid"},
    {M_TRACK_DESC, 2, 2, M_NONE, "TrackDescriptor.name"},
    {M_TRACK_DESC, 3, 2, M_PROCESS, "TrackDescriptor.process"},
    {M_TRACK_DESC, 4, 2, M_THREAD, "TrackDescriptor.thread"},
    {M_TRACK_DESC, 5, 0, M_NONE, "TrackDescriptor.parent_uuid"},
    {M_PROCESS, 1, 0, M_NONE, "ProcessDescriptor.pid"},
    {M_PROCESS, 2, 2, M_NONE, "ProcessDescriptor.cmdline"},
    {M_PROCESS, 6, 2, M_NONE, "ProcessDescriptor.process_name"},
    {M_THREAD, 1, 0, M_NONE, "ThreadDescriptor.pid"},
    {M_THREAD, 2, 0, M_NONE, "ThreadDescriptor.tid"},
    {M_THREAD, 5, 2, M_NONE, "ThreadDescriptor.thread_name"},
    {M_TRACK_EVENT, 9, 0, M_NONE, "TrackEvent.type"},
    {M_TRACK_EVENT, 10, 0, M_NONE, "TrackEvent.name_iid"},
    {M_TRACK_EVENT, 11, 0, M_NONE, "TrackEvent.track_uuid"},
    {M_TRACK_EVENT, 23, 2, M_NONE, "TrackEvent.name"},
    {M_TRACK_EVENT, 4, 2, M_ANNOTATION, "TrackEvent.debug_annotations"},
    {M_ANNOTATION, 10, 2, M_NONE, "DebugAnnotation.name"},
    {M_ANNOTATION, 2, 0, M_NONE, "DebugAnnotation.bool_value"},
    {M_ANNOTATION, 3, 0, M_NONE, "DebugAnnotation.uint_value"},
    {M_ANNOTATION, 6, 2, M_NONE, "DebugAnnotation.string_value"},
    {M_ANNOTATION, 7, 0, M_NONE, "DebugAnnotation.pointer_value"},
    {M_INTERNED, 2, 2, M_EVENT_NAME, "InternedData.event_names"},
    {M_EVENT_NAME, 1, 0, M_NONE, "EventName.iid"},
    {M_EVENT_NAME, 2, 2, M_NONE, "EventName.name"},
};

static const pd_schema pf_schema = { pf_specs, sizeof pf_specs / sizeof pf_specs[0] };

/* The next field of message `msg`, checked against Perfetto's schema; 0 at the end, and
 * a failure of the test for a field the schema does not have or of another wire type. */
static int pf_next(pd_reader *r, int msg, pd_field *out) {
    int rc = pd_next(r, &pf_schema, msg, out);
    if (rc == PD_UNKNOWN) {
        printf("  unexpected field %u (wire type %u) in message kind %d\n", out->number,
               out->wire, msg);
        harness__failures_in_test++;
    } else if (rc == PD_WIRE) {
        printf("  %s: wire type %u, schema says %u\n", out->spec->what, out->wire,
               out->spec->wire);
        harness__failures_in_test++;
    }
    return rc == PD_FIELD;
}

static int pf_utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t k = j_utf8_len(s + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

typedef struct pf_track {
    uint64_t uuid, parent, pid, tid;
    size_t seq;                  /* the sequence of its descriptor (pf_state.sequence_ids) */
    char name[128];
    char cmdline[256];           /* a process's: its words joined by spaces */
    int is_process;
    uint64_t open, begins, ends, instants, last_ts;
} pf_track;

/* One track event, as decoded: type 1 begin, 2 end, 3 instant. */
typedef struct pf_logged {
    uint64_t uuid, ts, type;
    char name[64];               /* begin: the interned name; instant: TrackEvent.name */
} pf_logged;

/* One debug annotation of a track event, as decoded. */
typedef struct pf_annot {
    uint64_t ts, type;           /* of its track event */
    char name[24];
    uint32_t field;              /* its value's field: 2 bool, 3 uint, 6 string, 7 pointer */
    uint64_t v;                  /* 2, 3, 7: the value */
    char str[40];                /* 6: the text */
} pf_annot;

enum { PF_SEQ_MAX = 8 };         /* packet sequences a decoded trace may have */

typedef struct pf_state {
    pf_track tracks[16];
    size_t track_count;
    pf_logged log[512];          /* the first 512 track events */
    size_t log_count;
    char *names[PF_SEQ_MAX][64]; /* interned event names by sequence and iid */
    uint64_t packets, events;
    pf_annot *annots;            /* every debug annotation, in order */
    size_t annot_count, annot_cap;
    uint64_t sequence_ids[PF_SEQ_MAX]; /* trusted_packet_sequence_id, in order of first use */
    size_t sequences;
    int saw_event;
    int quote_seen, utf8_seen, bad_seen;
} pf_state;

static pf_track *pf_track_of(pf_state *s, uint64_t uuid) {
    size_t i;
    for (i = 0; i < s->track_count; i++)
        if (s->tracks[i].uuid == uuid) return &s->tracks[i];
    return NULL;
}

/* A TrackDescriptor on sequence seq. With one sequence all descriptors come before the
 * first event; with several (one per process), those of a sequence before its events. */
static void pf_descriptor(pf_state *s, size_t seq, const uint8_t *data, size_t len) {
    pd_reader r, sub;
    pd_field f, g;
    pf_track t;
    memset(&t, 0, sizeof t);
    t.seq = seq;
    r = pd_open(data, len);
    CHECK(!s->saw_event); /* descriptors come before the events that use them */
    while (pf_next(&r, M_TRACK_DESC, &f)) {
        if (f.spec->number == 1) t.uuid = f.v;
        else if (f.spec->number == 5) t.parent = f.v;
        else if (f.spec->number == 3 || f.spec->number == 4) {
            t.is_process = f.spec->number == 3;
            sub = pd_open(f.data, f.len);
            while (pf_next(&sub, f.spec->sub, &g)) {
                if (g.spec->number == 1) t.pid = g.v;
                else if (g.spec->wire == PD_VARINT) t.tid = g.v;  /* ThreadDescriptor.tid */
                else if (t.is_process && g.spec->number == 2) {  /* a word of the cmdline */
                    size_t at = strlen(t.cmdline);
                    CHECK(pf_utf8_valid(g.data, g.len));
                    snprintf(t.cmdline + at, sizeof t.cmdline - at, "%s%.*s", at ? " " : "",
                             (int)g.len, (const char *)g.data);
                } else {
                    CHECK(pf_utf8_valid(g.data, g.len));
                    snprintf(t.name, sizeof t.name, "%.*s", (int)g.len, (const char *)g.data);
                }
            }
            CHECK(!sub.bad);
        }
    }
    CHECK(!r.bad);
    CHECK(t.uuid != 0);
    CHECK(pf_track_of(s, t.uuid) == NULL);
    if (s->track_count < 16) s->tracks[s->track_count++] = t;
}

static void pf_interned(pf_state *s, size_t seq, const uint8_t *data, size_t len) {
    pd_reader r, sub;
    pd_field f, g;
    r = pd_open(data, len);
    while (pf_next(&r, M_INTERNED, &f)) {
        uint64_t iid = 0;
        char *name = NULL;
        sub = pd_open(f.data, f.len);
        while (pf_next(&sub, M_EVENT_NAME, &g)) {
            if (g.spec->number == 1) iid = g.v;
            else {
                CHECK(pf_utf8_valid(g.data, g.len));
                free(name);
                name = (char *)malloc(g.len + 1);
                if (name) {
                    memcpy(name, g.data, g.len);
                    name[g.len] = '\0';
                }
            }
        }
        CHECK(!sub.bad);
        CHECK(iid > 0 && iid < 64);
        CHECK(name != NULL);
        if (iid > 0 && iid < 64 && name) {
            CHECK(s->names[seq][iid] == NULL); /* an iid is never redefined */
            free(s->names[seq][iid]);
            s->names[seq][iid] = name;
            name = NULL;
        }
        free(name);
    }
    CHECK(!r.bad);
}

/* A DebugAnnotation of a track event at ts: exactly a name and one value. The event's
 * type is filled in by pf_track_event once it has read the whole event. */
static void pf_read_annotation(pf_state *s, uint64_t ts, const uint8_t *data, size_t len) {
    pd_reader r = pd_open(data, len);
    pd_field f;
    pf_annot a;
    int names = 0, values = 0;
    memset(&a, 0, sizeof a);
    a.ts = ts;
    while (pf_next(&r, M_ANNOTATION, &f)) {
        if (f.spec->number == 10) {
            names++;
            CHECK(f.len < sizeof a.name && pf_utf8_valid(f.data, f.len));
            snprintf(a.name, sizeof a.name, "%.*s", (int)f.len, (const char *)f.data);
            continue;
        }
        values++;
        a.field = f.spec->number;
        if (f.spec->number == 6) {
            CHECK(f.len < sizeof a.str && pf_utf8_valid(f.data, f.len));
            snprintf(a.str, sizeof a.str, "%.*s", (int)f.len, (const char *)f.data);
        } else {
            a.v = f.v;
        }
    }
    CHECK(!r.bad);
    CHECK_EQ(1, names);
    CHECK_EQ(1, values);
    if (s->annot_count == s->annot_cap) {
        size_t cap = s->annot_cap ? s->annot_cap * 2 : 64;
        pf_annot *m = (pf_annot *)realloc(s->annots, cap * sizeof *m);
        CHECK(m != NULL);
        if (!m) return;
        s->annots = m;
        s->annot_cap = cap;
    }
    s->annots[s->annot_count++] = a;
}

static void pf_track_event(pf_state *s, size_t seq, uint64_t ts, const uint8_t *data,
                           size_t len) {
    pd_reader r;
    pd_field f;
    uint64_t type = 0, uuid = 0, iid = 0;
    const uint8_t *name_data = NULL;
    size_t name_len = 0;
    pf_logged *lg = s->log_count < 512 ? &s->log[s->log_count++] : NULL;
    pf_track *t;
    size_t first_annot = s->annot_count;
    r = pd_open(data, len);
    s->saw_event = 1;
    s->events++;
    while (pf_next(&r, M_TRACK_EVENT, &f)) {
        if (f.spec->number == 4) pf_read_annotation(s, ts, f.data, f.len);
        else if (f.spec->number == 9) type = f.v;
        else if (f.spec->number == 10) iid = f.v;
        else if (f.spec->number == 11) uuid = f.v;
        else if (f.spec->number == 23) {
            name_data = f.data;
            name_len = f.len;
        }
    }
    CHECK(!r.bad);
    for (; first_annot < s->annot_count; first_annot++) s->annots[first_annot].type = type;
    if (lg) {
        memset(lg, 0, sizeof *lg);
        lg->uuid = uuid;
        lg->ts = ts;
        lg->type = type;
        if (type == 1 && iid < 64 && s->names[seq][iid])
            snprintf(lg->name, sizeof lg->name, "%s", s->names[seq][iid]);
        if (name_data)
            snprintf(lg->name, sizeof lg->name, "%.*s", (int)name_len, (const char *)name_data);
    }
    t = pf_track_of(s, uuid);
    CHECK(t != NULL && !t->is_process);
    if (!t) return;
    CHECK_EQ(t->seq, seq); /* an event is on the sequence of its track's descriptor */
    CHECK(ts >= t->last_ts);
    t->last_ts = ts;
    if (type == 3) { /* TYPE_INSTANT (a gap): named in place */
        CHECK_EQ(0, iid);
        CHECK(name_data != NULL && pf_utf8_valid(name_data, name_len));
        t->instants++;
    } else if (type == 1) { /* TYPE_SLICE_BEGIN: named through an interned iid */
        const char *name = iid < 64 ? s->names[seq][iid] : NULL;
        CHECK(iid != 0);
        CHECK(name != NULL);
        if (name && strcmp(name, name_quote) == 0) s->quote_seen++;
        if (name && strcmp(name, name_utf8) == 0) s->utf8_seen++;
        if (name && strcmp(name, name_bad_clean) == 0) s->bad_seen++;
        t->open++;
        t->begins++;
    } else if (type == 2) { /* TYPE_SLICE_END */
        CHECK_EQ(0, iid);
        CHECK(t->open > 0);
        if (t->open) t->open--;
        t->ends++;
    } else {
        harness__fail(__FILE__, __LINE__, "unexpected TrackEvent.type");
    }
}

/* Decodes a whole Perfetto trace file of at most max_seqs packet sequences into s,
 * checking every field: the first packet of each sequence clears its incremental state,
 * every later one needs it. */
static void pf_decode_seqs(pf_state *s, const uint8_t *data, size_t len, size_t max_seqs) {
    pd_reader trace, pk;
    pd_field f, g;
    memset(s, 0, sizeof *s);
    trace = pd_open(data, len);
    while (pf_next(&trace, M_TRACE, &f)) {
        uint64_t ts = 0, seq = 0, flags = 0, cleared = 0, first = 0;
        const uint8_t *te = NULL, *idata = NULL, *desc = NULL;
        size_t te_len = 0, id_len = 0, desc_len = 0, k;
        int has_ts = 0;
        pk = pd_open(f.data, f.len);
        while (pf_next(&pk, M_PACKET, &g)) {
            switch (g.spec->number) {
            case 8: ts = g.v; has_ts = 1; break;
            case 10: seq = g.v; break;
            case 13: flags = g.v; break;
            case 41: cleared = g.v; break;
            case 87: first = g.v; break;
            case 60: desc = g.data; desc_len = g.len; break;
            case 11: te = g.data; te_len = g.len; break;
            case 12: idata = g.data; id_len = g.len; break;
            default: break;
            }
        }
        CHECK(!pk.bad);
        CHECK(seq != 0);
        for (k = 0; k < s->sequences && s->sequence_ids[k] != seq; k++) continue;
        if (k == s->sequences) { /* the first packet of its sequence */
            CHECK(s->sequences < max_seqs);
            CHECK_EQ(1, flags);           /* SEQ_INCREMENTAL_STATE_CLEARED */
            CHECK_EQ(1, cleared);
            CHECK_EQ(1, first);
            if (s->sequences < PF_SEQ_MAX) s->sequence_ids[s->sequences++] = seq;
            else k = PF_SEQ_MAX - 1; /* failed above */
            s->saw_event = 0; /* a new sequence starts with its descriptors */
        } else {
            CHECK_EQ(2, flags);           /* SEQ_NEEDS_INCREMENTAL_STATE */
            CHECK_EQ(0, cleared);
            CHECK_EQ(0, first);
        }
        if (desc) pf_descriptor(s, k, desc, desc_len);
        if (idata) pf_interned(s, k, idata, id_len); /* valid for this packet on */
        if (te) {
            CHECK(has_ts);
            pf_track_event(s, k, ts, te, te_len);
        }
        s->packets++;
    }
    CHECK(!trace.bad);
    CHECK(trace.p == trace.end);
}

/* A trace of one process: one packet sequence. */
static void pf_decode(pf_state *s, const uint8_t *data, size_t len) {
    pf_decode_seqs(s, data, len, 1);
}

static void pf_free(pf_state *s) {
    size_t i, k;
    for (k = 0; k < PF_SEQ_MAX; k++)
        for (i = 0; i < 64; i++) free(s->names[k][i]);
    free(s->annots);
}

static void test_export_perfetto(void) {
    rec r;
    pf_state s;
    char out[1200];
    uint8_t *data;
    size_t len, i;
    uint64_t pid;
    run_result o;
    int threads = 0;
    make_multi(&r);
    pid = strtoull(strrchr(r.dir, '_') + 1, NULL, 10);
    snprintf(out, sizeof out, "%s/../trace.pftrace", r.dir);
    o = run(cli_main, "export", "--format", "perfetto", "-o", out, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
    data = (uint8_t *)read_file(out, &len);
    CHECK(data != NULL && len > 0);
    if (!data) return;
    pf_decode(&s, data, len);
    CHECK_EQ(4, s.track_count);
    CHECK(s.tracks[0].is_process);
    CHECK_EQ(pid, s.tracks[0].pid);
    for (i = 1; i < s.track_count; i++) {
        pf_track *t = &s.tracks[i];
        CHECK(!t->is_process);
        CHECK_EQ(s.tracks[0].uuid, t->parent);
        CHECK_EQ(pid, t->pid);
        CHECK_EQ(0, t->open); /* balanced */
        CHECK_EQ(t->begins, t->ends);
        if (t->tid == 5001) {
            threads++;
            CHECK(strcmp(t->name, "main \"thread\"") == 0);
            CHECK_EQ(6, t->begins);
        } else if (t->tid == 5002) {
            threads++;
            CHECK(strcmp(t->name, "worker") == 0);
            CHECK_EQ(6, t->begins);
        } else if (t->tid == 5003) {
            threads++;
            CHECK(strcmp(t->name, "thread_2") == 0);
            CHECK_EQ(0, t->begins);
        }
    }
    CHECK_EQ(3, threads);
    CHECK_EQ(2 * (6 + 6), s.events);
    CHECK_EQ(1, s.quote_seen);
    CHECK_EQ(1, s.utf8_seen);
    CHECK_EQ(1, s.bad_seen);
    pf_free(&s);
    free(data);

    /* stdout is a file here, so no -o is needed */
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(2 * (6 + 6), s.events);
    pf_free(&s);
    run_free(&o);
}

/* ==== detail records as slice arguments ============================================== */
/* One thread recorded with detail ALWAYS: function payloads (stack windows of 0, 8 and
 * 256 bytes, values with the top bit set), a record of another type, calls without
 * detail and returns with detail (which must not show). Each call has its own timestamp,
 * so a slice begin finds what its call carried by ts. */
enum { DX_NONE = 0, DX_FUNCTION = 1, DX_OTHER = 2 };
enum { DX_CALLS = 5, DX_OTHER_TYPE = 9, DX_OTHER_BYTES = 16 };

typedef struct dx_call {
    uint64_t ts, fid;
    int kind;
    atf_detail_payload p;        /* DX_FUNCTION: what the record holds */
} dx_call;

static dx_call g_dx[DX_CALLS];
static const char *const dx_regs[8] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };

static void dx_payload(dx_call *c, uint64_t k, uint16_t stack_size) {
    size_t i;
    memset(&c->p, 0, sizeof c->p);
    c->p.function_id = c->fid;
    for (i = 0; i < 8; i++) c->p.x[i] = (k + 1) * 0x0101010101010101ull + i;
    c->p.lr = 0x400000ull + k;
    c->p.fp = 0x7ffd0000ull - k * 0x100;
    c->p.sp = c->p.fp - stack_size;
    c->p.stack_size = stack_size;
    if (k == 2) { /* values that take every bit */
        c->p.x[7] = UINT64_MAX;
        c->p.lr = 1ull << 63;
    }
}

/* A call of fid at ts with detail of `kind`, as g_dx[k]. */
static void dx_call_event(atf_producer *w, size_t k, uint64_t fid, uint64_t ts, int kind,
                          uint16_t stack_size) {
    static uint8_t stack[ATF_DETAIL_STACK_MAX], buf[ATF_DETAIL_PAYLOAD_SIZE + ATF_DETAIL_STACK_MAX];
    dx_call *c = &g_dx[k];
    size_t len;
    memset(c, 0, sizeof *c);
    c->ts = ts;
    c->fid = fid;
    c->kind = kind;
    if (kind == DX_NONE) {
        CALL(w, fid, ts);
        return;
    }
    if (kind == DX_OTHER) {
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, fid, ts, DX_OTHER_TYPE,
                                                     stack, DX_OTHER_BYTES));
        return;
    }
    dx_payload(c, k, stack_size);
    c->p.stack = stack;
    len = atf_detail_payload_encode(&c->p, buf, sizeof buf);
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, fid, ts,
                                                 ATF_DETAIL_FUNCTION_CALL, buf, len));
}

/* A return of fid at ts carrying a function payload of its own. */
static void dx_return_event(atf_producer *w, uint64_t fid, uint64_t ts) {
    uint8_t buf[ATF_DETAIL_PAYLOAD_SIZE];
    atf_detail_payload p;
    memset(&p, 0, sizeof p);
    p.function_id = fid;
    p.x[0] = 0xdeadull;
    CHECK_EQ(ATF_DETAIL_PAYLOAD_SIZE, atf_detail_payload_encode(&p, buf, sizeof buf));
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_RETURN, fid, ts,
                                                 ATF_DETAIL_FUNCTION_RETURN, buf, sizeof buf));
}

static void make_detail_session(rec *r, uint32_t layout) {
    atf_session_config cfg;
    atf_producer *w = NULL;
    char name[64];
    memset(r, 0, sizeof *r);
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.layout = layout;
    cfg.detail_mode = ATF_DETAIL_ALWAYS;
    snprintf(name, sizeof name, "session_%d", ++g_session_number);
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&r->s, g_root, &cfg));
    if (!r->s) return;
    snprintf(r->dir, sizeof r->dir, "%s", atf_session_path(r->s));
    add_symbols(r);
    CHECK_RESULT(ATF_OK, atf_session_attach(r->s, "detail", &w));
    if (w) {
        dx_call_event(w, 0, F_MAIN, T0 + 0, DX_FUNCTION, 0);
        dx_call_event(w, 1, F_A, T0 + 10, DX_NONE, 0);
        dx_call_event(w, 2, F_B, T0 + 20, DX_FUNCTION, ATF_DETAIL_STACK_MAX);
        dx_return_event(w, F_B, T0 + 30);
        RET(w, F_A, T0 + 40);
        dx_call_event(w, 3, F_E, T0 + 50, DX_OTHER, 0);
        RET(w, F_E, T0 + 60);
        dx_call_event(w, 4, F_F, T0 + 70, DX_FUNCTION, 8); /* open at the end */
    }
    atf_session_detach(r->s);
    rec_close(r);
}

static const dx_call *dx_at(uint64_t ts) {
    size_t i;
    for (i = 0; i < DX_CALLS; i++)
        if (g_dx[i].ts == ts) return &g_dx[i];
    return NULL;
}

static int dx_hex_is(const char *s, uint64_t v) {
    char hex[24];
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)v);
    return strcmp(s, hex) == 0;
}

static size_t j_members(const jdoc *d, long obj) {
    size_t n = 0;
    long c;
    for (c = obj >= 0 ? d->nodes[obj].child : -1; c >= 0; c = d->nodes[c].next) n++;
    return n;
}

/* The args of one B event against what its call carried. */
static void dx_check_chrome_args(const jdoc *d, long ev, const dx_call *c) {
    long args = j_get(d, ev, "args");
    size_t i;
    if (c->kind == DX_NONE) {
        CHECK(args < 0);
        return;
    }
    CHECK(args >= 0 && d->nodes[args].type == J_OBJ);
    if (c->kind == DX_OTHER) {
        CHECK_EQ(2, j_members(d, args));
        CHECK_EQ(DX_OTHER_TYPE, j_u64(d, args, "detail_type"));
        CHECK_EQ(DX_OTHER_BYTES, j_u64(d, args, "detail_bytes"));
        return;
    }
    CHECK_EQ(13, j_members(d, args));
    CHECK(dx_hex_is(j_str(d, args, "function_id"), c->p.function_id));
    for (i = 0; i < 8; i++) CHECK(dx_hex_is(j_str(d, args, dx_regs[i]), c->p.x[i]));
    CHECK(dx_hex_is(j_str(d, args, "lr"), c->p.lr));
    CHECK(dx_hex_is(j_str(d, args, "fp"), c->p.fp));
    CHECK(dx_hex_is(j_str(d, args, "sp"), c->p.sp));
    CHECK(d->nodes[j_get(d, args, "stack_size")].type == J_NUM);
    CHECK_EQ(c->p.stack_size, j_u64(d, args, "stack_size"));
}

static void dx_check_chrome(const char *dir) {
    run_result o = run(cli_main, "export", "--format", "chrome", dir, (const char *)NULL);
    jdoc d;
    long evs, it, args;
    size_t begins = 0, with_args = 0, cut = 0;
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    evs = j_get(&d, 0, "traceEvents");
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph");
        const dx_call *c;
        if (strcmp(ph, "M") == 0) continue;
        if (strcmp(ph, "B") != 0) { /* E events carry no detail (the return's neither), */
            if ((args = j_get(&d, it, "args")) >= 0) { /* only the mark of a cut frame */
                CHECK_EQ(1, j_members(&d, args));
                CHECK(j_get(&d, args, "cut_short") >= 0 &&
                      d.nodes[j_get(&d, args, "cut_short")].type == J_BOOL);
                cut++;
            }
            continue;
        }
        begins++;
        c = dx_at(j_ts_ns(&d, it));
        CHECK(c != NULL);
        if (!c) continue;
        with_args += j_get(&d, it, "args") >= 0;
        dx_check_chrome_args(&d, it, c);
    }
    CHECK_EQ(DX_CALLS, begins);
    CHECK_EQ(4, with_args);
    CHECK_EQ(2, cut); /* main and f, open at the end */
    CHECK_EQ(2, count_of(o.out, "\"ph\":\"E\",\"args\":{\"cut_short\":true}}"));
    j_free(&d);
    run_free(&o);
}

/* The annotation `name` among the n annotations at a, or NULL. */
static const pf_annot *dx_annot(const pf_annot *a, size_t n, const char *name) {
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(a[i].name, name) == 0) return &a[i];
    return NULL;
}

static int dx_annot_is(const pf_annot *a, size_t n, const char *name, uint32_t field, uint64_t v) {
    const pf_annot *x = dx_annot(a, n, name);
    return x && x->field == field && x->v == v;
}

/* The n annotations of the slice begin at ts against what its call carried. */
static void dx_check_annotations(const pf_annot *a, size_t n, const dx_call *c) {
    const pf_annot *fid = dx_annot(a, n, "function_id");
    size_t i;
    if (c->kind == DX_NONE) {
        CHECK_EQ(0, n);
        return;
    }
    if (c->kind == DX_OTHER) {
        CHECK_EQ(2, n);
        CHECK(dx_annot_is(a, n, "detail_type", 3, DX_OTHER_TYPE));
        CHECK(dx_annot_is(a, n, "detail_bytes", 3, DX_OTHER_BYTES));
        return;
    }
    CHECK_EQ(13, n);
    CHECK(fid != NULL && fid->field == 6 && dx_hex_is(fid->str, c->p.function_id));
    for (i = 0; i < 8; i++) CHECK(dx_annot_is(a, n, dx_regs[i], 7, c->p.x[i]));
    CHECK(dx_annot_is(a, n, "lr", 7, c->p.lr));
    CHECK(dx_annot_is(a, n, "fp", 7, c->p.fp));
    CHECK(dx_annot_is(a, n, "sp", 7, c->p.sp));
    CHECK(dx_annot_is(a, n, "stack_size", 3, c->p.stack_size));
}

static void dx_check_perfetto(const char *dir) {
    run_result o = run(cli_main, "export", "--format", "perfetto", dir, (const char *)NULL);
    pf_state s;
    size_t i, k, begins = 0, cut = 0;
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    for (i = 0; i < s.annot_count; i++) { /* detail on begins; on ends only the cut mark */
        if (s.annots[i].type == 1) continue;
        CHECK_EQ(2, s.annots[i].type);
        CHECK(strcmp(s.annots[i].name, "cut_short") == 0);
        CHECK_EQ(2, s.annots[i].field);
        CHECK_EQ(1, s.annots[i].v);
        cut++;
    }
    CHECK_EQ(2, cut); /* main and f, open at the end */
    for (i = 0; i < s.log_count; i++) {
        const dx_call *c;
        size_t first = s.annot_count, n = 0;
        if (s.log[i].type != 1) continue;
        begins++;
        c = dx_at(s.log[i].ts);
        CHECK(c != NULL);
        if (!c) continue;
        for (k = 0; k < s.annot_count; k++) {
            if (s.annots[k].ts != c->ts || s.annots[k].type != 1) continue;
            if (first == s.annot_count) first = k;
            n++;
        }
        dx_check_annotations(s.annots + first, n, c);
    }
    CHECK_EQ(DX_CALLS, begins);
    pf_free(&s);
    run_free(&o);
}

static int64_t pq_check_session(const char *dir);

static void test_export_detail(void) {
    rec r;
    make_detail_session(&r, ATF_LAYOUT_1);
    dx_check_chrome(r.dir);
    dx_check_perfetto(r.dir);
    make_detail_session(&r, ATF_LAYOUT_2);
    dx_check_chrome(r.dir);
    dx_check_perfetto(r.dir);
    /* the parquet slices say the same calls have detail */
    CHECK_EQ(4, pq_check_session(r.dir));
}

/* What the Chrome export wrote before slices had arguments, for a trace without detail:
 * the same bytes still (PID stands for the pid). */
static const char chrome_nested_golden[] =
    "{\"traceEvents\":[\n"
    "{\"pid\":PID,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"pid_PID\"}},\n"
    "{\"pid\":PID,\"tid\":4242,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"main\"}},\n"
    "{\"pid\":PID,\"tid\":4242,\"ph\":\"M\",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":0}},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.000,\"ph\":\"B\",\"name\":\"main\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.100,\"ph\":\"B\",\"name\":\"a\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.200,\"ph\":\"B\",\"name\":\"b\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.500,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1001.000,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1001.100,\"ph\":\"B\",\"name\":\"a\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1001.400,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1002.000,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1003.000,\"ph\":\"B\",\"name\":\"recurse\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1003.100,\"ph\":\"B\",\"name\":\"recurse\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1003.200,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1004.000,\"ph\":\"E\"}\n"
    "],\"displayTimeUnit\":\"ns\"}\n";

/* The golden text with each PID replaced by pid, into a malloc'd string. */
static char *golden_with_pid(const char *golden, const char *pid) {
    size_t n = strlen(golden) + 64 * strlen(pid) + 1, k = 0;
    char *out = (char *)malloc(n);
    const char *s = golden;
    if (!out) return NULL;
    while (*s && k + strlen(pid) + 1 < n) {
        if (strncmp(s, "PID", 3) == 0) {
            memcpy(out + k, pid, strlen(pid));
            k += strlen(pid);
            s += 3;
        } else {
            out[k++] = *s++;
        }
    }
    out[k] = '\0';
    return out;
}

static void test_export_chrome_unchanged(void) {
    rec r;
    run_result o;
    char *want;
    make_nested(&r, ATF_LAYOUT_1);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    want = golden_with_pid(chrome_nested_golden, strrchr(r.dir, '_') + 1);
    CHECK(want != NULL && o.out != NULL);
    if (want && o.out) {
        CHECK_EQ(strlen(want), o.out_len);
        CHECK(strcmp(want, o.out) == 0);
    }
    free(want);
    run_free(&o);
}

/* ==== names: the process, its threads, modules and anchors =========================== */
/* A session with a command line (a non-ASCII word in it), named and unnamed threads, a
 * module with a build id and one without, an exact and an inexact timing anchor (besides
 * the wall clock's, which the session writer adds). */
static const char names_cmdline[] = "/opt/tools/traced_app --mode fast in\xc3\xa9.txt";
static const char names_build_id[] = "0123456789abcdef0123456789abcdef01234567";

static void make_named(rec *r) {
    atf_producer *w0, *w1;
    rec_open(r, ATF_LAYOUT_2);
    add_symbols(r);
    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(r->s, names_cmdline));
    CHECK_RESULT(ATF_OK, atf_session_add_module(r->s, 0, "/opt/tools/traced_app",
                                                0x555500000000ull, 0x2000));
    CHECK_RESULT(ATF_OK, atf_session_set_module_build_id(r->s, 0,
                                                         "0123456789ABCDEF0123456789abcdef01234567"));
    CHECK_RESULT(ATF_OK, atf_session_add_module(r->s, 1, "/lib/libm.so.6", 0x7f0000000000ull, 0x1000));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor_exact(r->s, "studio_ns", T0,
                                                      1700000000123456789ll, 1000000000));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor(r->s, "audio", T0 + 5, 1.5, 44100.5));
    w0 = rec_thread(r, 7001, "main", ATF_LAYOUT_2);
    w1 = rec_thread(r, 7002, "worker \"w\"", ATF_LAYOUT_2);
    rec_thread(r, 7003, NULL, ATF_LAYOUT_2);
    write_nested(w0);
    CALL(w1, F_A, T0 + 50);
    RET(w1, F_A, T0 + 60);
    rec_close(r);
}

/* The process_name and thread_name metadata of a Chrome export of dir: the process's
 * into pname, the three threads' (tids base+0..2) into tnames. */
static void names_chrome(const char *dir, uint64_t base, char *pname, size_t cap,
                         char tnames[3][64]) {
    run_result o = run(cli_main, "export", "--format", "chrome", dir, (const char *)NULL);
    jdoc d;
    long evs, it;
    pname[0] = '\0';
    memset(tnames, 0, 3 * sizeof tnames[0]);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    evs = j_get(&d, 0, "traceEvents");
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *name = j_str(&d, it, "name");
        long args = j_get(&d, it, "args");
        uint64_t tid = j_u64(&d, it, "tid");
        if (strcmp(j_str(&d, it, "ph"), "M") != 0) continue;
        if (strcmp(name, "process_name") == 0) snprintf(pname, cap, "%s", j_str(&d, args, "name"));
        if (strcmp(name, "thread_name") == 0 && tid >= base && tid < base + 3)
            snprintf(tnames[tid - base], 64, "%s", j_str(&d, args, "name"));
    }
    j_free(&d);
    run_free(&o);
}

static void test_export_names(void) {
    rec r;
    pf_state s;
    run_result o;
    char pname[256], tnames[3][64], want[64];
    size_t i, threads = 0;
    make_named(&r);
    names_chrome(r.dir, 7001, pname, sizeof pname, tnames);
    CHECK(strcmp(pname, "traced_app") == 0);
    CHECK(strcmp(tnames[0], "main") == 0);
    CHECK(strcmp(tnames[1], "worker \"w\"") == 0);
    CHECK(strcmp(tnames[2], "thread_2") == 0);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(4, s.track_count);
    CHECK(s.tracks[0].is_process);
    CHECK(strcmp(s.tracks[0].name, "traced_app") == 0);
    CHECK(strcmp(s.tracks[0].cmdline, names_cmdline) == 0);
    CHECK_EQ(strtoull(strrchr(r.dir, '_') + 1, NULL, 10), s.tracks[0].pid);
    for (i = 1; i < s.track_count; i++) {
        const pf_track *t = &s.tracks[i];
        CHECK(t->tid >= 7001 && t->tid <= 7003);
        if (t->tid < 7001 || t->tid > 7003) continue;
        threads++;
        CHECK(strcmp(t->name, t->tid == 7001 ? "main" : t->tid == 7002 ? "worker \"w\"" : "thread_2") == 0);
    }
    CHECK_EQ(3, threads);
    pf_free(&s);
    run_free(&o);

    /* no command line: the process is named after its directory, in both */
    make_nested(&r, ATF_LAYOUT_1);
    snprintf(want, sizeof want, "pid_%s", strrchr(r.dir, '_') + 1);
    names_chrome(r.dir, 4242, pname, sizeof pname, tnames);
    CHECK(strcmp(pname, want) == 0);
    CHECK(strcmp(tnames[0], "main") == 0);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK(s.track_count > 0 && s.tracks[0].is_process);
    CHECK(strcmp(s.tracks[0].name, want) == 0);
    CHECK(s.tracks[0].cmdline[0] == '\0');
    pf_free(&s);
    run_free(&o);
}

/* The element of array arr whose member key is the text want, or -1. */
static long j_find(const jdoc *d, long arr, const char *key, const char *want) {
    long c;
    for (c = arr >= 0 ? d->nodes[arr].child : -1; c >= 0; c = d->nodes[c].next)
        if (strcmp(j_str(d, c, key), want) == 0) return c;
    return -1;
}

static int j_is_null(const jdoc *d, long obj, const char *key) {
    long n = j_get(d, obj, key);
    return n >= 0 && d->nodes[n].type == J_NULL;
}

static size_t count_of(const char *hay, const char *needle);

static void test_info_names(void) {
    rec r;
    run_result o;
    jdoc d;
    long mods, m, anchors, a, threads, t;
    make_named(&r);
    o = run(cli_main, "info", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "\ncmdline:         /opt/tools/traced_app --mode fast in\xc3\xa9.txt\n") != NULL);
    CHECK(strstr(o.out, "\nmodule:          0 base 0x0000555500000000 size 8192 build_id "
                        "0123456789abcdef0123456789abcdef01234567 path /opt/tools/traced_app\n") != NULL);
    CHECK(strstr(o.out, "\nmodule:          1 base 0x00007f0000000000 size 4096 path /lib/libm.so.6\n") != NULL);
    CHECK(strstr(o.out, "\nanchor:          studio_ns host_ns 1000000 value 1700000000123456789 "
                        "timescale 1000000000\n") != NULL);
    CHECK(strstr(o.out, "\nanchor:          audio host_ns 1000005 value 1.5 rate 44100.5") != NULL);
    CHECK(strstr(o.out, "  worker \"w\"\n") != NULL);
    run_free(&o);

    o = run(cli_main, "info", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(o.out_len > 0 && o.out[o.out_len - 1] == '\n' && strchr(o.out, '\n') == o.out + o.out_len - 1);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK(strcmp(j_str(&d, 0, "cmdline"), names_cmdline) == 0);
    CHECK(strcmp(j_str(&d, 0, "session"), r.dir) == 0);
    CHECK_EQ(5, j_u64(&d, 0, "symbols"));
    CHECK_EQ(0, j_u64(&d, 0, "symbols_by_location_only"));
    mods = j_get(&d, 0, "modules");
    m = j_find(&d, mods, "module_id", "0");
    CHECK(strcmp(j_str(&d, m, "path"), "/opt/tools/traced_app") == 0);
    CHECK(strcmp(j_str(&d, m, "base_address"), "0x0000555500000000") == 0);
    CHECK_EQ(0x2000, j_u64(&d, m, "size"));
    CHECK(strcmp(j_str(&d, m, "build_id"), names_build_id) == 0);
    m = j_find(&d, mods, "module_id", "1");
    CHECK(strcmp(j_str(&d, m, "path"), "/lib/libm.so.6") == 0);
    CHECK(j_is_null(&d, m, "build_id"));
    anchors = j_get(&d, 0, "anchors");
    a = j_find(&d, anchors, "name", "studio_ns");
    CHECK_EQ(T0, j_u64(&d, a, "host_ns"));
    CHECK(strcmp(j_str(&d, a, "value"), "1700000000123456789") == 0);
    CHECK_EQ(1000000000, j_u64(&d, a, "timescale"));
    a = j_find(&d, anchors, "name", "audio");
    CHECK_EQ(T0 + 5, j_u64(&d, a, "host_ns"));
    CHECK(strtod(j_str(&d, a, "value"), NULL) == 1.5);
    CHECK(strtod(j_str(&d, a, "rate"), NULL) == 44100.5);
    CHECK_EQ(0, j_u64(&d, a, "timescale"));
    threads = j_get(&d, 0, "threads");
    t = j_find(&d, threads, "os_tid", "7002");
    CHECK(strcmp(j_str(&d, t, "name"), "worker \"w\"") == 0);
    CHECK_EQ(2, j_u64(&d, t, "events"));
    t = j_find(&d, threads, "os_tid", "7003");
    CHECK(j_is_null(&d, t, "name"));
    j_free(&d);
    run_free(&o);

    /* a session without any of them; and --json is for session directories only */
    make_nested(&r, ATF_LAYOUT_1);
    o = run(cli_main, "info", "--json", r.dir, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "\"cmdline\":null") != NULL);
    CHECK(strstr(o.out, "\"modules\":[]") != NULL);
    CHECK(strstr(o.out, "\"anchors\":[") != NULL);
    CHECK_EQ(2, count_of(o.out, "\n"));
    run_free(&o);
    {
        char thread_dir[1200];
        snprintf(thread_dir, sizeof thread_dir, "%s/thread_0", r.dir);
        o = run(cli_main, "info", "--json", thread_dir, (const char *)NULL);
        CHECK_EQ(2, o.status);
        CHECK_EQ(0, o.out_len);
        run_free(&o);
    }
}

/* ==== tree =========================================================================== */
static void test_tree_nested(void) {
    static const char *expect[] = {
        "         time_us     duration_us  call",
        "           0.000                  main {",
        "           0.100                    a {",
        "           0.200           0.300      b",
        "           1.000           0.900    } a",
        "           1.100           0.300    a",
        "           2.000           2.000  } main",
        "           3.000                  recurse {",
        "           3.100           0.100    recurse",
        "           4.000           1.000  } recurse",
    };
    static const char *expect_depth1[] = {
        "         time_us     duration_us  call",
        "           0.000           2.000  main",
        "           3.000           1.000  recurse",
    };
    rec r;
    run_result o;
    char *line, *save = NULL;
    size_t i = 0;
    make_nested(&r, ATF_LAYOUT_1);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strncmp(o.out, "thread 0  tid 4242  main  12 events\n", 36) == 0);
    for (line = strtok_r(o.out, "\n", &save), line = strtok_r(NULL, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save), i++) {
        CHECK(i < sizeof expect / sizeof expect[0]);
        if (i < sizeof expect / sizeof expect[0] && strcmp(line, expect[i]) != 0) {
            printf("  line %zu: expected '%s', found '%s'\n", i, expect[i], line);
            harness__failures_in_test++;
        }
    }
    CHECK_EQ(sizeof expect / sizeof expect[0], i);
    run_free(&o);

    o = run(cli_main, "tree", "--max-depth", "1", "--thread", "0", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    i = 0;
    save = NULL;
    for (line = strtok_r(o.out, "\n", &save), line = strtok_r(NULL, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save), i++)
        CHECK(i < 3 && strcmp(line, expect_depth1[i]) == 0);
    CHECK_EQ(3, i);
    run_free(&o);
}

static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (; (hay = strstr(hay, needle)) != NULL; hay++) n++;
    return n;
}

static void test_tree_unbalanced_and_threads(void) {
    rec r;
    run_result o;
    char thread_dir[1200];
    make_multi(&r);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(3, count_of(o.out, "\nthread ") + (strncmp(o.out, "thread ", 7) == 0));
    CHECK_EQ(2, count_of(o.out, "! return from "));
    CHECK_EQ(1, count_of(o.out, "(unwound)"));
    CHECK_EQ(2, count_of(o.out, "(cut short)"));
    /* names are made printable: control characters escaped, bad UTF-8 replaced */
    CHECK_EQ(2, count_of(o.out, "quote\"back\\slash\\nnew\\ttab\\x01"));
    CHECK_EQ(1, count_of(o.out, name_bad_clean));
    run_free(&o);
    o = run(cli_main, "tree", "--thread", "1", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strncmp(o.out, "thread 1  tid 5002  worker", 26) == 0);
    CHECK_EQ(0, count_of(o.out, "\nthread "));
    run_free(&o);
    /* a thread directory as PATH: that thread only */
    snprintf(thread_dir, sizeof thread_dir, "%s/thread_1", r.dir);
    o = run(cli_main, "tree", thread_dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strncmp(o.out, "thread 1  tid 5002  worker", 26) == 0);
    CHECK_EQ(0, count_of(o.out, "\nthread "));
    run_free(&o);
    o = run(cli_main, "tree", "--thread", "9", r.dir, (const char *)NULL);
    CHECK_EQ(2, o.status); /* as dump --thread: the value names no thread */
    run_free(&o);
}

/* ==== PATH kinds ===================================================================== */
/* ==== folded stacks and diff ========================================================= */
/* The nested trace changed (see test_diff_nested): main { a { b } a a { b } g }, no
 * recurse. */
static void write_nested_changed(atf_producer *w) {
    CALL(w, F_MAIN, T0 + 0);
    CALL(w, F_A, T0 + 100);
    CALL(w, F_B, T0 + 200);
    RET(w, F_B, T0 + 500);
    RET(w, F_A, T0 + 1000);
    CALL(w, F_A, T0 + 1100);
    RET(w, F_A, T0 + 1400);
    CALL(w, F_A, T0 + 1500);
    CALL(w, F_B, T0 + 1600);
    RET(w, F_B, T0 + 2400);
    RET(w, F_A, T0 + 2500);
    CALL(w, F_G, T0 + 2600);
    RET(w, F_G, T0 + 2700);
    RET(w, F_MAIN, T0 + 3000);
}

/* found is want, else both printed. */
#define CHECK_TEXT(want, found) do { \
    if (strcmp((want), (found)) != 0) { \
        harness__fail(__FILE__, __LINE__, "text differs"); \
        printf("  expected:\n%s  found:\n%s", (want), (found)); \
    } } while (0)

static long diff_item(const jdoc *d, const char *array, size_t k) {
    long it = j_get(d, 0, array);
    for (it = it >= 0 ? d->nodes[it].child : -1; it >= 0 && k; k--) it = d->nodes[it].next;
    return it;
}

static void test_export_folded(void) {
    static const char *const none =
        "main 800\nmain;a 900\nmain;a;b 300\nrecurse 900\nrecurse;recurse 100\n";
    rec r, u;
    run_result o, f;
    char want[512], out[1200];
    size_t n = 0;
    const char *line;
    make_nested(&r, ATF_LAYOUT_1);
    /* self times: main 2000 - 900 - 300; a's two calls 600 + 300; recurse's outer 900 */
    o = run(cli_main, "export", "--format", "folded", "--thread-frame", "none", r.dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_TEXT(none, o.out);
    run_free(&o);
    /* the default: the thread's name ("main") as the first frame */
    o = run(cli_main, "export", "--format", "folded", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_TEXT("main;main 800\nmain;main;a 900\nmain;main;a;b 300\nmain;recurse 900\n"
               "main;recurse;recurse 100\n", o.out);
    run_free(&o);
    o = run(cli_main, "export", "--format", "folded", "--thread-frame", "tid", r.dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    for (line = none; *line; line = strchr(line, '\n') + 1) /* every line under NAME-PID/TID */
        n += (size_t)snprintf(want + n, sizeof want - n, "main-%d/4242;%.*s", (int)getpid(),
                              (int)(strchr(line, '\n') - line + 1), line);
    CHECK_TEXT(want, o.out);
    run_free(&o);
    /* -o, --function (the subtrees of a: b in a's first call) */
    snprintf(out, sizeof out, "%s/nested.folded", r.dir);
    o = run(cli_main, "export", "--format", "folded", "-o", out, "--thread-frame", "none",
            r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(0, o.out_len);
    f = run(cli_main, "export", "--format", "folded", "--thread-frame", "none", "--function",
            "a", r.dir, (const char *)NULL);
    CHECK_EQ(0, f.status);
    CHECK_TEXT("a 900\na;b 300\n", f.out);
    run_free(&o);
    run_free(&f);
    {
        FILE *fp = fopen(out, "rb");
        size_t len = 0;
        char *text = fp ? slurp(fp, &len) : NULL;
        CHECK(text != NULL);
        if (text) CHECK_TEXT(none, text);
        free(text);
        if (fp) fclose(fp);
    }
    /* what no format of folded's takes, and what only folded takes */
    o = run(cli_main, "export", "--format", "folded", "--clock", "wall", r.dir, (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "folded", "--thread-frame", "all", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", "--thread-frame", "none", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);

    /* unbalanced input: the frames as stats closes them (b unwound, 103 by its
     * exception, e and f open at the end); the returns without a call add nothing */
    rec_open(&u, ATF_LAYOUT_1);
    add_symbols(&u);
    write_unbalanced(rec_thread(&u, 77, "u", ATF_LAYOUT_1));
    rec_close(&u);
    o = run(cli_main, "export", "--format", "folded", u.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_TEXT("u;0x0000000000000005 100\nu;0x0000000000000005;0x0000000000000006 0\n"
               "u;0x0000000000000067 50\nu;a 100\nu;a;b 100\nu;g 20\n", o.out);
    run_free(&o);

    /* names with the format's separators: one frame for "x;y" and "x_y", and a thread
     * named with a line break; diff keeps the two functions apart */
    {
        rec x;
        atf_producer *w;
        jdoc d;
        rec_open(&x, ATF_LAYOUT_1);
        atf_session_add_symbol(x.s, F_MAIN, "main");
        atf_session_add_symbol(x.s, F_A, "x;y");
        atf_session_add_symbol(x.s, F_B, "x_y");
        w = rec_thread(&x, 78, "two\nlines", ATF_LAYOUT_1);
        CALL(w, F_MAIN, T0);
        CALL(w, F_A, T0 + 100);
        RET(w, F_A, T0 + 200);
        CALL(w, F_B, T0 + 300);
        RET(w, F_B, T0 + 500);
        RET(w, F_MAIN, T0 + 1000);
        rec_close(&x);
        o = run(cli_main, "export", "--format", "folded", x.dir, (const char *)NULL);
        CHECK_EQ(0, o.status);
        CHECK_TEXT("two_lines;main 700\ntwo_lines;main;x_y 300\n", o.out);
        run_free(&o);
        o = run(cli_main, "diff", "--json", x.dir, x.dir, (const char *)NULL);
        CHECK_EQ(0, o.status);
        CHECK(j_parse(&d, o.out, o.out_len));
        for (n = 0; diff_item(&d, "functions", n) >= 0; n++) {}
        CHECK_EQ(3, n);                                /* main, x;y and x_y */
        for (n = 0; diff_item(&d, "paths", n) >= 0; n++) {}
        CHECK_EQ(2, n);                                /* main and main;x_y */
        j_free(&d);
        run_free(&o);
    }
}


static int64_t j_i64(const jdoc *d, long obj, const char *key) {
    return (int64_t)strtoll(j_str(d, obj, key), NULL, 10);
}

/* One row of atf diff --json: the figures of A and B, and the deltas B - A. */
#define CHECK_DIFF_ROW(d, it, key, a, b) do { \
    char k_[64]; \
    snprintf(k_, sizeof k_, "%s_a", (key)); CHECK_EQ((a), j_u64((d), (it), k_)); \
    snprintf(k_, sizeof k_, "%s_b", (key)); CHECK_EQ((b), j_u64((d), (it), k_)); \
    snprintf(k_, sizeof k_, "%s_delta", (key)); \
    CHECK_EQ((int64_t)(b) - (int64_t)(a), j_i64((d), (it), k_)); } while (0)

static void test_diff_nested(void) {
    /* functions by the change in self time (ties by name), paths by the change in total
     * time (ties in folded order): name, calls, total and self in A and in B */
    static const struct { const char *name; uint64_t ca, cb, ta, tb, sa, sb; } fns[] = {
        { "recurse", 2, 0, 1000, 0, 1000, 0 },
        { "b", 1, 2, 300, 1100, 300, 1100 },
        { "a", 2, 3, 1200, 2200, 900, 1100 },
        { "g", 0, 1, 0, 100, 0, 100 },
        { "main", 1, 1, 2000, 3000, 800, 700 },
    };
    static const struct { const char *path; uint64_t ca, cb, ta, tb; } paths[] = {
        { "main", 1, 1, 2000, 3000 },
        { "main;a", 2, 3, 1200, 2200 },
        { "recurse", 1, 0, 1000, 0 },
        { "main;a;b", 1, 2, 300, 1100 },
        { "main;g", 0, 1, 0, 100 },
        { "recurse;recurse", 1, 0, 100, 0 },
    };
    rec a, b;
    run_result o;
    jdoc d;
    size_t k;
    long it;
    make_nested(&a, ATF_LAYOUT_1);
    rec_open(&b, ATF_LAYOUT_1);
    add_symbols(&b);
    write_nested_changed(rec_thread(&b, 4243, "main", ATF_LAYOUT_1));
    rec_close(&b);
    o = run(cli_main, "diff", "--json", a.dir, b.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK_EQ(3000, j_u64(&d, 0, "total_ns_a"));   /* main 2000 + recurse 1000 */
    CHECK_EQ(3000, j_u64(&d, 0, "total_ns_b"));
    for (k = 0; k < sizeof fns / sizeof fns[0]; k++) {
        it = diff_item(&d, "functions", k);
        CHECK(it >= 0);
        if (it < 0) break;
        CHECK(strcmp(fns[k].name, j_str(&d, it, "name")) == 0);
        CHECK_DIFF_ROW(&d, it, "calls", fns[k].ca, fns[k].cb);
        CHECK_DIFF_ROW(&d, it, "total_ns", fns[k].ta, fns[k].tb);
        CHECK_DIFF_ROW(&d, it, "self_ns", fns[k].sa, fns[k].sb);
    }
    CHECK(diff_item(&d, "functions", k) < 0);
    it = diff_item(&d, "functions", 2); /* a: 1100 / 900 */
    CHECK(strncmp(j_str(&d, it, "self_ratio"), "1.222222", 8) == 0);
    it = diff_item(&d, "functions", 3); /* g: none in A */
    CHECK(it >= 0 && d.nodes[j_get(&d, it, "self_ratio")].type == J_NULL);
    for (k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        it = diff_item(&d, "paths", k);
        CHECK(it >= 0);
        if (it < 0) break;
        CHECK(strcmp(paths[k].path, j_str(&d, it, "path")) == 0);
        CHECK_DIFF_ROW(&d, it, "calls", paths[k].ca, paths[k].cb);
        CHECK_DIFF_ROW(&d, it, "total_ns", paths[k].ta, paths[k].tb);
    }
    CHECK(diff_item(&d, "paths", k) < 0);
    j_free(&d);
    run_free(&o);

    /* the text: the same order, --top cuts both lists */
    o = run(cli_main, "diff", "--top", "2", a.dir, b.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "\noutermost calls: 3.000us -> 3.000us (0ns, 1.00x)\n") != NULL);
    CHECK(strstr(o.out, "functions: 5 in a or b (first 2 shown)") != NULL);
    CHECK(strstr(o.out, "paths: 6 in a or b (first 2 shown)") != NULL);
    CHECK(strstr(o.out, "  -1.000us     gone     1.000us         0ns  recurse\n") != NULL);
    CHECK(strstr(o.out, "  +800ns    3.67x       300ns     1.100us  b\n") != NULL);
    CHECK(strstr(o.out, "2.200us  a\n") == NULL); /* a is third: not shown */
    CHECK(strstr(o.out, "main;a\n") != NULL && strstr(o.out, "main;a;b") == NULL);
    run_free(&o);

    /* a trace against itself: every change 0 */
    o = run(cli_main, "diff", "--json", b.dir, b.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    for (k = 0; (it = diff_item(&d, "functions", k)) >= 0; k++) {
        CHECK_EQ(0, j_i64(&d, it, "calls_delta"));
        CHECK_EQ(0, j_i64(&d, it, "total_ns_delta"));
        CHECK_EQ(0, j_i64(&d, it, "self_ns_delta"));
    }
    CHECK_EQ(4, k);
    for (k = 0; (it = diff_item(&d, "paths", k)) >= 0; k++) {
        CHECK_EQ(0, j_i64(&d, it, "calls_delta"));
        CHECK_EQ(0, j_i64(&d, it, "total_ns_delta"));
    }
    CHECK_EQ(4, k);
    j_free(&d);
    run_free(&o);

    /* --function: a in both; g in B only; x in neither (exit 2) */
    o = run(cli_main, "diff", "--json", "--function", "a", a.dir, b.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK(strcmp("b", j_str(&d, diff_item(&d, "functions", 0), "name")) == 0);
    CHECK(strcmp("a;b", j_str(&d, diff_item(&d, "paths", 1), "path")) == 0);
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "diff", "--json", "--function", "g", a.dir, b.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK_EQ(1, j_u64(&d, diff_item(&d, "functions", 0), "calls_b"));
    CHECK(diff_item(&d, "functions", 1) < 0);
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "diff", "--function", "nowhere", a.dir, b.dir, (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    /* --thread-frame name: the paths under the thread's name, which both call "main" */
    o = run(cli_main, "diff", "--json", "--thread-frame", "name", a.dir, b.dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    CHECK(strcmp("main;main", j_str(&d, diff_item(&d, "paths", 0), "path")) == 0);
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "diff", a.dir, (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "diff", a.dir, b.dir, a.dir, (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
}

static void test_path_kinds(void) {
    rec r;
    run_result o;
    jdoc d;
    char path[1200], lone[1200];
    long fns, th;
    make_multi(&r);
    /* thread_N: one thread, names and drop counts from the session's manifest */
    snprintf(path, sizeof path, "%s/thread_0", r.dir);
    o = run(cli_main, "stats", "--json", path, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    fns = j_get(&d, 0, "functions");
    th = j_get(&d, 0, "threads");
    CHECK(fns >= 0 && th >= 0);
    if (fns >= 0 && th >= 0) {
        long t = d.nodes[th].child;
        CHECK(t >= 0 && d.nodes[t].next < 0);
        CHECK_EQ(5001, j_u64(&d, t, "tid"));
        CHECK_EQ(12, j_u64(&d, t, "events"));
        CHECK(strcmp(j_str(&d, d.nodes[fns].child, "name"), "recurse") == 0);
    }
    j_free(&d);
    run_free(&o);
    /* thread_N/index.atf: the same */
    snprintf(path, sizeof path, "%s/thread_0/index.atf", r.dir);
    o = run(cli_main, "stats", "--json", path, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "\"tid\":5001") != NULL && strstr(o.out, "\"tid\":5002") == NULL);
    run_free(&o);
    /* a thread directory outside any session: ids in hex */
    snprintf(path, sizeof path, "%s/thread_0", r.dir);
    snprintf(lone, sizeof lone, "%s/../lone_thread", r.dir);
    CHECK_EQ(0, rename(path, lone));
    o = run(cli_main, "stats", "--json", lone, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strstr(o.out, "\"name\":\"0x0000000000000004\"") != NULL);
    CHECK(strstr(o.out, "\"tid\":5001") != NULL);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", lone, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
    /* the session without that thread still opens, but the manifest lists it: the figures
     * of the rest, and the missing thread named on stderr (status 1) */
    o = run(cli_main, "stats", r.dir, (const char *)NULL);
    CHECK_EQ(1, o.status);
    CHECK(strstr(o.out, "functions: ") == o.out);
    CHECK(strstr(o.err, "thread_0") != NULL);
    run_free(&o);
}

/* An empty thread and an empty session export as valid, empty traces. */
static void test_empty(void) {
    rec r;
    run_result o;
    jdoc d;
    pf_state s;
    rec_open(&r, ATF_LAYOUT_1);
    rec_thread(&r, 61, "idle", ATF_LAYOUT_1);
    rec_close(&r);
    o = run(cli_main, "stats", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(0, s.events);
    CHECK_EQ(2, s.packets);
    pf_free(&s);
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
}

/* ==== command line =================================================================== */
static void test_command_line(void) {
    rec r;
    run_result o;
    char bad_dir[1200], bad_file[1300], out[1300];
    FILE *f;
    make_nested(&r, ATF_LAYOUT_1);
#define EXPECT_STATUS(want, ...) do { o = run(__VA_ARGS__, (const char *)NULL); \
        CHECK_EQ((want), o.status); run_free(&o); } while (0)
    o = run(cli_main, "stats", "--help", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strncmp(o.out, "usage: atf stats", 16) == 0);
    CHECK_EQ(0, strlen(o.err));
    run_free(&o);
    o = run(cli_main, "tree", "--help", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strncmp(o.out, "usage: atf tree", 15) == 0);
    run_free(&o);
    o = run(cli_main, "export", "--help", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(strncmp(o.out, "usage: atf export", 17) == 0);
    run_free(&o);
    o = run(cli_main, "stats", "--bogus", r.dir, (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK_EQ(0, o.out_len);
    CHECK(strstr(o.err, "usage: atf stats") != NULL);
    run_free(&o);
    EXPECT_STATUS(2, cli_main, "stats");
    EXPECT_STATUS(2, cli_main, "stats", r.dir, r.dir);
    EXPECT_STATUS(2, cli_main, "stats", "--sort", "speed", r.dir);
    EXPECT_STATUS(2, cli_main, "stats", "--sort");
    EXPECT_STATUS(2, cli_main, "stats", "--limit", "ten", r.dir);
    EXPECT_STATUS(2, cli_main, "tree", "--max-depth", "-1", r.dir);
    EXPECT_STATUS(2, cli_main, "tree", "--thread", r.dir);
    EXPECT_STATUS(2, cli_main, "tree", "-x", r.dir);
    EXPECT_STATUS(2, cli_main, "export", r.dir);
    EXPECT_STATUS(2, cli_main, "export", "--format", "svg", r.dir);
    EXPECT_STATUS(2, cli_main, "export", "--format", "chrome", "-o");
    EXPECT_STATUS(2, cli_main, "export", "--format", "chrome");
    EXPECT_STATUS(1, cli_main, "stats", "/nonexistent/atf/pid_1");
    EXPECT_STATUS(1, cli_main, "tree", "/nonexistent/atf/pid_1");
    EXPECT_STATUS(1, cli_main, "export", "--format", "perfetto", "-o", "/dev/null",
                  "/nonexistent/atf/pid_1");
    /* a damaged file: exit 1, and the message names the file */
    snprintf(bad_dir, sizeof bad_dir, "%s/../bad/pid_7/thread_0", r.dir);
#if defined(_WIN32) /* cmd.exe: mkdir makes every level; backslashes in the path */
    snprintf(bad_file, sizeof bad_file, "mkdir \"%s\"", bad_dir);
    {
        char *c;
        for (c = bad_file + 7; *c; c++) if (*c == '/') *c = '\\';
    }
#else
    snprintf(bad_file, sizeof bad_file, "mkdir -p '%s'", bad_dir);
#endif
    CHECK_EQ(0, system(bad_file));
    snprintf(bad_file, sizeof bad_file, "%s/index.atf", bad_dir);
    f = fopen(bad_file, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("this is not an ATF index file, just text long enough for a header.........", f);
        fclose(f);
    }
    o = run(cli_main, "stats", bad_dir, (const char *)NULL);
    CHECK_EQ(1, o.status);
    CHECK(strstr(o.err, "index.atf") != NULL);
    run_free(&o);
    *strrchr(bad_dir, '/') = '\0';
    o = run(cli_main, "export", "--format", "chrome", bad_dir, (const char *)NULL);
    CHECK_EQ(1, o.status);
    CHECK(strstr(o.err, "index.atf") != NULL);
    run_free(&o);
    /* an output that cannot be written: exit 1 */
    snprintf(out, sizeof out, "%s/no/such/dir/x.json", r.dir);
    EXPECT_STATUS(1, cli_main, "export", "--format", "chrome", "-o", out, r.dir);
    /* "--" ends the options */
    EXPECT_STATUS(0, cli_main, "stats", "--json", "--", r.dir);
#undef EXPECT_STATUS
}

/* ==== gaps: nothing is paired across events the recorder lost ======================= */
/* One thread on a 64-slot ring with ATF_OVERFLOW_DROP, drained by hand: the ring fills
 * while main, a, b and c are open; the returns of c and b are dropped (gap 1); after the
 * drain a returns (its call is before the gap), c is called and returns, main returns;
 * then e and f are open when the ring fills again and their returns are dropped (gap 2,
 * at the end). A reference model below derives the expected figures and exports from the
 * same script, independently of tools/walk.c. Pairing across the holes instead would
 * give c a 4100 ns maximum (called at 900, "returning" at 5000 by a's return unwinding
 * it) and a 4900 ns total. */
enum { OP_CALL, OP_RET, OP_PUMP };
enum { F_C = 10, GAP_RING = 64, GAP_TID = 6001 };

typedef struct gap_op {
    int op;
    uint64_t fid, ts;
    int dropped;                 /* the push must find the ring full */
} gap_op;

static size_t gap_script(gap_op *ops, size_t cap) {
    size_t n = 0;
    uint64_t k;
#define OP(o, f, t, d) do { if (n < cap) { ops[n].op = (o); ops[n].fid = (f); \
        ops[n].ts = T0 + (t); ops[n].dropped = (d); n++; } } while (0)
    OP(OP_CALL, F_MAIN, 0, 0);
    OP(OP_CALL, F_A, 100, 0);
    for (k = 0; k < 30; k++) {                  /* 60 events of g, 10 ns each */
        OP(OP_CALL, F_G, 200 + 20 * k, 0);
        OP(OP_RET, F_G, 210 + 20 * k, 0);
    }
    OP(OP_CALL, F_B, 800, 0);
    OP(OP_CALL, F_C, 900, 0);                   /* the 64th event: the ring is full */
    OP(OP_RET, F_C, 1000, 1);                   /* gap 1: first lost at 1000 */
    OP(OP_RET, F_B, 1100, 1);
    OP(OP_PUMP, 0, 0, 0);
    OP(OP_RET, F_A, 5000, 0);                   /* its call is before the gap */
    OP(OP_CALL, F_C, 6000, 0);
    OP(OP_RET, F_C, 6100, 0);
    OP(OP_RET, F_MAIN, 7000, 0);                /* its call is before the gap */
    OP(OP_CALL, F_E, 7500, 0);
    for (k = 0; k < 29; k++) {                  /* 58 events of g inside e */
        OP(OP_CALL, F_G, 7600 + 20 * k, 0);
        OP(OP_RET, F_G, 7610 + 20 * k, 0);
    }
    OP(OP_CALL, F_F, 8800, 0);                  /* the 64th event since the drain */
    OP(OP_RET, F_F, 8900, 1);                   /* gap 2, at the end: first lost at 8900 */
    OP(OP_RET, F_E, 9000, 1);
#undef OP
    return n;
}

/* ---- the reference model ---- */
typedef struct model_fn {
    uint64_t fid, calls, total, self, min, max;
} model_fn;

typedef struct model_ev {
    char ph;                     /* 'B' call, 'E' frame closed, 'i' gap */
    uint64_t ts, fid, lost;
} model_ev;

typedef struct model {
    model_fn fns[16];
    size_t nfns;
    model_ev evs[512];
    size_t nevs;
    struct { uint64_t fid, start, child; } stack[64];
    size_t depth;
    uint64_t unmatched, cut, cut_short, gaps, lost;
} model;

static void model_emit(model *m, char ph, uint64_t ts, uint64_t fid, uint64_t lost) {
    if (m->nevs < 512) {
        m->evs[m->nevs].ph = ph;
        m->evs[m->nevs].ts = ts;
        m->evs[m->nevs].fid = fid;
        m->evs[m->nevs].lost = lost;
        m->nevs++;
    }
}

static void model_pop(model *m, uint64_t end) {
    uint64_t fid = m->stack[m->depth - 1].fid, dur = end - m->stack[m->depth - 1].start;
    uint64_t self = dur - m->stack[m->depth - 1].child;
    size_t i;
    int outer = 1;
    model_fn *f = NULL;
    m->depth--;
    for (i = 0; i < m->depth; i++) outer &= m->stack[i].fid != fid;
    if (m->depth) m->stack[m->depth - 1].child += dur;
    for (i = 0; i < m->nfns && !f; i++)
        if (m->fns[i].fid == fid) f = &m->fns[i];
    if (!f && m->nfns < 16) {
        f = &m->fns[m->nfns++];
        memset(f, 0, sizeof *f);
        f->fid = fid;
        f->min = UINT64_MAX;
    }
    if (f) {
        f->calls++;
        f->total += outer ? dur : 0;
        f->self += self;
        f->min = dur < f->min ? dur : f->min;
        f->max = dur > f->max ? dur : f->max;
    }
    model_emit(m, 'E', end, fid, 0);
}

/* Runs the script: frames open at a gap are closed at the last kept event before it,
 * then the gap shows at its first lost stamp; a return pairs only with a frame on the
 * stack. */
static void model_run(model *m, const gap_op *ops, size_t n) {
    uint64_t last = 0, first_lost = 0, lost = 0;
    size_t i, k;
    memset(m, 0, sizeof *m);
    for (i = 0; i <= n; i++) {
        const gap_op *o = i < n ? &ops[i] : NULL;
        if (o && o->op == OP_PUMP) continue;
        if (o && o->dropped) {
            if (!lost) first_lost = o->ts;
            lost++;
            continue;
        }
        if (lost) { /* a gap before this event (or at the end) */
            for (; m->depth; m->cut++) model_pop(m, last);
            model_emit(m, 'i', first_lost, 0, lost);
            m->gaps++;
            m->lost += lost;
            lost = 0;
        }
        if (!o) break;
        last = o->ts > last ? o->ts : last;
        if (o->op == OP_CALL) {
            m->stack[m->depth].fid = o->fid;
            m->stack[m->depth].start = o->ts;
            m->stack[m->depth].child = 0;
            m->depth++;
            model_emit(m, 'B', o->ts, o->fid, 0);
            continue;
        }
        for (k = m->depth; k > 0 && m->stack[k - 1].fid != o->fid; k--) {}
        if (k == 0) m->unmatched++;
        else while (m->depth >= k) model_pop(m, o->ts);
    }
    for (; m->depth; m->cut_short++) model_pop(m, last);
}

/* Records the script into a session; returns the number of events kept. */
static uint64_t make_gap_session(rec *r, const gap_op *ops, size_t n) {
    atf_producer *w;
    uint64_t kept = 0;
    size_t i;
    rec_open(r, ATF_LAYOUT_1);
    w = rec_thread_ring(r, GAP_TID, "lossy", ATF_LAYOUT_1, GAP_RING);
    /* this thread also drains: a full ring must drop, not wait for itself */
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(w, ATF_OVERFLOW_DROP, 0));
    for (i = 0; i < n; i++) {
        atf_result rc;
        if (ops[i].op == OP_PUMP) {
            CHECK_RESULT(ATF_OK, atf_session_pump(r->s));
            continue;
        }
        rc = ops[i].op == OP_CALL ? atf_producer_call(w, ops[i].fid, ops[i].ts)
                                  : atf_producer_return(w, ops[i].fid, ops[i].ts);
        CHECK_RESULT(ops[i].dropped ? ATF_E_FULL : ATF_OK, rc);
        kept += !ops[i].dropped;
    }
    atf_producer_close(w);
    rec_close(r);
    return kept;
}

static void test_gaps(void) {
    static gap_op ops[256];
    static model m;
    size_t n = gap_script(ops, 256), i, k;
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    run_result o;
    jdoc d;
    pf_state ps;
    long evs, it;
    char path[1200];
    int before;
    uint64_t kept = make_gap_session(&r, ops, n);
    model_run(&m, ops, n);
    /* the model itself, by hand: the frames cut, and c never longer than 100 ns */
    CHECK_EQ(2, m.gaps);
    CHECK_EQ(4, m.lost);
    CHECK_EQ(6, m.cut);                          /* c, b, a, main; then f, e */
    CHECK_EQ(2, m.unmatched);                    /* the returns of a and main */
    CHECK_EQ(0, m.cut_short);

    /* what the files say */
    if (!collect(r.dir, &src, &st, &w)) return;
    CHECK_EQ(kept, src.reader.threads[0].reader.index.event_count);
    CHECK_EQ(2, src.reader.threads[0].reader.gap_count);
    CHECK_EQ(4, src.reader.threads[0].reader.events_lost);
    CHECK_EQ(4, src.reader.threads[0].events_dropped);
    /* stats: every function against the model */
    CHECK_EQ(m.nfns, st.count);
    for (i = 0; i < m.nfns; i++)
        CHECK_FN(&st, m.fns[i].fid, m.fns[i].calls, m.fns[i].total, m.fns[i].self, m.fns[i].min,
                 m.fns[i].max);
    CHECK_FN(&st, F_C, 2, 100, 100, 0, 100);     /* [900, 900] cut; [6000, 6100] */
    CHECK_FN(&st, F_A, 1, 800, 400, 800, 800);   /* [100, 900] cut; g 300 and b 100 inside */
    CHECK_FN(&st, F_MAIN, 1, 900, 100, 900, 900);
    CHECK_FN(&st, F_E, 1, 1300, 1010, 1300, 1300); /* [7500, 8800] cut at the end gap */
    CHECK_EQ(m.unmatched, w.threads[0].unmatched);
    CHECK_EQ(m.cut, w.threads[0].cut_by_gap);
    CHECK_EQ(m.cut_short, w.threads[0].cut_short);
    CHECK_EQ(0, w.threads[0].unwound);
    CHECK_EQ(2, w.threads[0].gaps);
    collect_free(&src, &st, &w);
    /* the same through the thread directory (that thread walked alone) */
    snprintf(path, sizeof path, "%s/thread_0", r.dir);
    if (!collect(path, &src, &st, &w)) return;
    CHECK_FN(&st, F_C, 2, 100, 100, 0, 100);
    CHECK_EQ(m.cut, w.threads[0].cut_by_gap);
    collect_free(&src, &st, &w);

    /* stats --json: the thread's gap figures */
    o = run(cli_main, "stats", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    it = j_get(&d, 0, "threads");
    it = it >= 0 ? d.nodes[it].child : -1;
    CHECK(it >= 0);
    if (it >= 0) {
        CHECK_EQ(2, j_u64(&d, it, "gaps"));
        CHECK_EQ(4, j_u64(&d, it, "events_lost"));
        CHECK_EQ(m.cut, j_u64(&d, it, "cut_by_gap"));
    }
    j_free(&d);
    run_free(&o);

    /* chrome: this thread's B, E and gap events, in order, exactly the model's */
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    evs = j_get(&d, 0, "traceEvents");
    k = 0;
    before = harness__failures_in_test;
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph");
        const model_ev *e = k < m.nevs ? &m.evs[k] : NULL;
        if (strcmp(ph, "M") == 0) continue;
        CHECK_EQ(GAP_TID, j_u64(&d, it, "tid"));
        CHECK(e != NULL);
        if (!e) break;
        k++;
        CHECK_EQ(e->ph, ph[0]);
        CHECK_EQ(1, strlen(ph));
        CHECK_EQ(e->ts, j_ts_ns(&d, it));
        if (e->ph == 'B') {
            char hex[24];
            snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)e->fid);
            CHECK(strcmp(j_str(&d, it, "name"), hex) == 0);
        } else if (e->ph == 'i') {
            long args = j_get(&d, it, "args");
            CHECK(strcmp(j_str(&d, it, "s"), "t") == 0);
            CHECK(strncmp(j_str(&d, it, "name"), "gap: ", 5) == 0);
            CHECK(args >= 0);
            if (args >= 0) {
                CHECK_EQ(e->lost, j_u64(&d, args, "index_lost"));
                CHECK(strcmp(j_str(&d, args, "reason"), "dropped") == 0);
            }
        }
        if (harness__failures_in_test > before) break; /* one report per test is enough */
    }
    CHECK_EQ(m.nevs, k);
    j_free(&d);
    run_free(&o);

    /* perfetto: the same sequence on the thread's track */
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&ps, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(m.nevs, ps.log_count);
    before = harness__failures_in_test;
    for (k = 0; k < ps.log_count && k < m.nevs; k++) {
        const model_ev *e = &m.evs[k];
        const pf_logged *l = &ps.log[k];
        CHECK_EQ(e->ph == 'B' ? 1 : e->ph == 'E' ? 2 : 3, l->type);
        CHECK_EQ(e->ts, l->ts);
        if (e->ph == 'B') {
            char hex[24];
            snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)e->fid);
            CHECK(strcmp(l->name, hex) == 0);
        } else if (e->ph == 'i') {
            CHECK(strncmp(l->name, "gap: ", 5) == 0);
        }
        if (harness__failures_in_test > before) break;
    }
    for (k = 0; k < ps.track_count; k++) CHECK_EQ(0, ps.tracks[k].open);
    pf_free(&ps);
    run_free(&o);

    /* tree: the cut frames and the gaps are marked */
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(m.cut, count_of(o.out, "(cut by a gap)"));
    CHECK_EQ(m.gaps, count_of(o.out, "~ gap: 2 events lost (dropped)\n"));
    CHECK_EQ(m.unmatched, count_of(o.out, "! return from "));
    CHECK_EQ(0, count_of(o.out, "(unwound)"));
    CHECK_EQ(0, count_of(o.out, "(cut short)"));
    CHECK(strstr(o.out, "  2 gaps, 4 events lost\n") != NULL);
    /* c after the gap: one line, 100 ns, at 6.000 us */
    CHECK(strstr(o.out, "           6.000           0.100  0x000000000000000a\n") != NULL);
    run_free(&o);
}

/* ==== robustness ===================================================================== */
static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The stack's function set against a plain array, through growth and deletions. */
static void test_fidset(void) {
    walk_fidset set;
    static uint64_t ref[3000];
    size_t n = 0, i, k;
    uint64_t seed = 12345;
    memset(&set, 0, sizeof set);
    for (i = 0; i < 200000; i++) {
        uint64_t r = rnd(&seed), key = (r >> 8) % 4000;
        int present = 0;
        if (key == 3999) key = WALK_FID_EMPTY;            /* the marker value is a valid id */
        else key = key * 1024;                          /* many share their low bits */
        for (k = 0; k < n; k++)
            if (ref[k] == key) present = 1;
        CHECK_EQ(present, walk_fidset_has(&set, key));
        if ((r & 3) != 0 && n < 3000) {
            CHECK_EQ(!present, walk_fidset_add(&set, key));
            if (!present) ref[n++] = key;
        } else if (present) {
            walk_fidset_del(&set, key);
            for (k = 0; ref[k] != key; k++) {}
            ref[k] = ref[--n];
        }
        if (harness__failures_in_test) break;
    }
    for (k = 0; k < n; k++) CHECK(walk_fidset_has(&set, ref[k]));
    CHECK_EQ(n, set.count + (size_t)set.has_max);
    free(set.keys);
}

/* Random kinds (unknown ones too), ids and times: nothing crashes, every call is counted
 * once (or skipped for depth), and both exports stay balanced. */
static void test_random_events(void) {
    rec r;
    atf_producer *w[2];
    cli_trace src;
    profile_fns st;
    walk_ctx wk;
    run_result o;
    jdoc d;
    pf_state ps;
    uint64_t seed = 987654321, calls = 0, counted = 0, too_deep = 0, i, b = 0, e = 0;
    size_t k;
    long it;
    rec_open(&r, ATF_LAYOUT_2);
    w[0] = rec_thread(&r, 901, "r0", ATF_LAYOUT_2);
    w[1] = rec_thread(&r, 902, "r1", ATF_LAYOUT_2);
    for (i = 0; i < 3000; i++) {
        uint64_t x = rnd(&seed);
        uint32_t kind = (uint32_t)(x % 5);              /* 0 and 4 are not call/return */
        uint64_t fid = (x >> 8) % 6, ts = T0 + (x >> 20) % 100000;
        if (kind == ATF_EVENT_CALL) calls++;
        CHECK_RESULT(ATF_OK, atf_producer_push(w[i & 1], kind, fid, ts, 0));
    }
    rec_close(&r);
    if (!collect(r.dir, &src, &st, &wk)) return;
    for (k = 0; k < st.count; k++) counted += st.fns[k].calls;
    for (k = 0; k < wk.count; k++) too_deep += wk.threads[k].too_deep;
    CHECK_EQ(calls, counted + too_deep);
    collect_free(&src, &st, &wk);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    it = j_get(&d, 0, "traceEvents");
    for (it = it >= 0 ? d.nodes[it].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph");
        b += strcmp(ph, "B") == 0;
        e += strcmp(ph, "E") == 0;
    }
    CHECK_EQ(counted, b);
    CHECK_EQ(b, e);
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&ps, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(2 * counted, ps.events);
    for (k = 0; k < ps.track_count; k++) CHECK_EQ(0, ps.tracks[k].open);
    pf_free(&ps);
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
}

/* ==== export parquet ================================================================= */
/* Both tables of a session, decoded by tests/parquet_decode.h (written apart from the
 * writer): every slice row against the session's threads and names, with count and
 * sum(self_ns) per function equal to `atf stats --json`, the ended_by counts equal to
 * the walk's and has_detail equal to its call event's; every event row against the merged
 * session's event at the same position. */
static const char *const pq_slice_columns[] = {
    "pid", "tid", "thread_slot", "thread_name", "function_id", "fid", "name", "mangled",
    "module", "depth", "start_ns", "end_ns", "dur_ns", "self_ns", "ended_by", "has_detail", "paused_ns",
    "start_wall", "end_wall"
};
static const char *const pq_event_columns[] = {
    "pid", "thread_slot", "seq", "ts_ns", "function_id", "fid", "name", "mangled", "kind",
    "depth", "detail_seq", "ts_wall"
};
static const char *const pq_endings[] = { "return", "unwound", "cut", "gap", "exception" };
enum { PQ_LOGICAL_TIMESTAMP_FIELD = 8, PQ_LOGICAL_INTEGER_FIELD = 10, PQ_NANOS_FIELD = 3,
       PQ_FNS_MAX = 64, PQ_SLICE_COLUMNS = 19, PQ_MODULE = 8, PQ_DEPTH = 9, PQ_START = 10,
       PQ_END = 11, PQ_DUR = 12, PQ_SELF = 13, PQ_ENDED_BY = 14, PQ_HAS_DETAIL = 15,
       PQ_PAUSED = 16, PQ_START_WALL = 17, PQ_END_WALL = 18, PQ_EVENT_COLUMNS = 12,
       PQ_KIND = 8, PQ_EV_DEPTH = 9, PQ_DETAIL_SEQ = 10, PQ_TS_WALL = 11 };

/* Exports `table` of dir to a file beside it and decodes it: 1, else 0 after a failure. */
static int pq_export(const char *dir, const char *table, pqd_file *f) {
    char out[1200];
    run_result o;
    snprintf(out, sizeof out, "%s/../%s.parquet", dir, table);
    o = run(cli_main, "export", "--format", "parquet", "--table", table, "-o", out, dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
    if (pqd_open(f, out) == 0) return 1;
    harness__fail(__FILE__, __LINE__, f->error);
    pqd_close(f);
    return 0;
}

static int pq_is(pqd_bytes b, const char *s) {
    return b.len == strlen(s) && memcmp(b.p, s, b.len) == 0;
}

/* The columns' names; the times of the trace clock (from time_col on, `times` of them)
 * plain INT64 nanoseconds, which count from no date; the wall clock's (from wall_col on)
 * TIMESTAMP(NANOS) adjusted to UTC and OPTIONAL; mangled OPTIONAL; every other column
 * REQUIRED. */
static void pq_check_columns(const pqd_file *f, const char *const *names, size_t n,
                             size_t time_col, size_t times, size_t wall_col) {
    size_t i;
    CHECK_EQ(n, f->ncols);
    for (i = 0; i < n && i < f->ncols; i++) {
        const pqd_column *c = &f->cols[i];
        CHECK(strcmp(names[i], c->name) == 0);
        CHECK_EQ(i >= wall_col || strcmp(names[i], "mangled") == 0, c->repetition);
        if (i >= time_col && i < time_col + times) {
            CHECK_EQ(PQ_LOGICAL_INTEGER_FIELD, c->logical);
            CHECK_EQ(64, c->int_bits);
            CHECK_EQ(1, c->int_signed);
        } else if (i >= wall_col) {
            CHECK_EQ(2, c->type);
            CHECK_EQ(PQ_LOGICAL_TIMESTAMP_FIELD, c->logical);
            CHECK_EQ(PQ_NANOS_FIELD, c->ts_unit);
            CHECK_EQ(1, c->ts_utc);
        }
    }
}

/* Trace time ts on the wall clock of src (its manifest's wall_clock_ns anchor, read here
 * by the library alone): 1 with *wall set, 0 when it has no such anchor. */
static int pq_wall_of(const cli_trace *src, int64_t ts, int64_t *wall) {
    const atf_session_anchor *a = atf_session_reader_anchor(&src->reader, "wall_clock_ns");
    if (!a) return 0;
    CHECK_EQ(1000000000, a->timescale); /* the library writes it in ns */
    return atf_anchor_value_at(a, (uint64_t)ts, wall) == ATF_OK;
}

/* Column col of row r holds ts on the wall clock, or null when there is none. */
static void pq_check_wall(const pqd_file *f, const cli_trace *src, size_t col, size_t r,
                          int64_t ts) {
    int64_t wall = 0;
    int has = pq_wall_of(src, ts, &wall);
    CHECK_EQ(!has, f->nulls[col][r]);
    if (has) {
        CHECK_EQ(wall, f->ints[col][r]);
        CHECK(wall > 1500000000000000000ll); /* after 2017: a date, not boot time */
    }
}

/* The function columns of a row (function_id, fid, name, mangled at col_id, +1, +2, +3)
 * name fid: its name as the tools show it, its symbol (null when it has none). */
static void pq_check_function(const pqd_file *f, const cli_trace *src, size_t row,
                              size_t col_id) {
    uint64_t fid = (uint64_t)f->ints[col_id][row];
    const char *sym;
    char hex[24], name[4096];
    size_t n = cli_utf8_clean(cli_trace_name(src, fid, hex, sizeof hex), name, sizeof name - 1);
    name[n] = '\0';
    snprintf(hex, sizeof hex, "0x%016llx", (cli_ull)fid);
    CHECK(pq_is(f->bytes[col_id + 1][row], hex));
    CHECK(pq_is(f->bytes[col_id + 2][row], name));
    sym = cli_trace_symbol(src, fid);
    CHECK_EQ(sym == NULL, f->nulls[col_id + 3][row]);
    if (sym) CHECK(pq_is(f->bytes[col_id + 3][row], sym));
}

static const atf_session_thread *pq_thread(const cli_trace *src, int64_t slot) {
    size_t i;
    for (i = 0; i < src->reader.thread_count; i++)
        if ((int64_t)src->reader.threads[i].slot == slot) return &src->reader.threads[i];
    return NULL;
}

/* Per function of the slices: rows and sum of self_ns. */
typedef struct pq_fn_sums {
    uint64_t fid[PQ_FNS_MAX], rows[PQ_FNS_MAX], self_ns[PQ_FNS_MAX];
    size_t count;
} pq_fn_sums;

static void pq_add(pq_fn_sums *s, uint64_t fid, uint64_t self_ns) {
    size_t i = 0;
    while (i < s->count && s->fid[i] != fid) i++;
    if (i == PQ_FNS_MAX) {
        CHECK(i < PQ_FNS_MAX);
        return;
    }
    if (i == s->count) s->fid[s->count++] = fid;
    s->rows[i]++;
    s->self_ns[i] += self_ns;
}

/* count(*) and sum(self_ns) per function equal `atf stats --json`'s calls and self_ns. */
static void pq_check_against_stats_json(const char *dir, const pq_fn_sums *s) {
    run_result o = run(cli_main, "stats", "--json", dir, (const char *)NULL);
    jdoc d;
    long fns, it;
    size_t seen = 0, i;
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    fns = j_get(&d, 0, "functions");
    for (it = fns >= 0 ? d.nodes[fns].child : -1; it >= 0; it = d.nodes[it].next) {
        uint64_t fid = strtoull(j_str(&d, it, "fid") + 2, NULL, 16);
        for (i = 0; i < s->count && s->fid[i] != fid; i++) {}
        CHECK(i < s->count);
        if (i == s->count) continue;
        CHECK_EQ(j_u64(&d, it, "calls"), s->rows[i]);
        CHECK_EQ(j_u64(&d, it, "self_ns"), s->self_ns[i]);
        seen++;
    }
    CHECK_EQ(s->count, seen);
    j_free(&d);
    run_free(&o);
}

/* The call events of a session: thread slot, timestamp, function and detail link. */
typedef struct pq_call {
    uint64_t slot, ts, fid, detail_seq;
} pq_call;

/* The call events of src in merged order (*n of them); NULL when there are none. */
static pq_call *pq_calls(cli_trace *src, size_t *n) {
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter flt;
    pq_call *calls = NULL;
    size_t cap = 0;
    *n = 0;
    cli_trace_filter(src, &flt);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &src->reader, &flt));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        if (it.event.kind != ATF_EVENT_CALL) continue;
        if (*n == cap) {
            pq_call *more;
            cap = cap ? cap * 2 : 256;
            more = (pq_call *)realloc(calls, cap * sizeof *calls);
            CHECK(more != NULL);
            if (!more) break;
            calls = more;
        }
        calls[*n].slot = it.slot;
        calls[*n].ts = it.event.timestamp_ns;
        calls[*n].fid = it.event.function_id;
        calls[*n].detail_seq = it.event.detail_seq;
        (*n)++;
    }
    atf_merge_deinit(&m);
    return calls;
}

/* has_detail of a slice row (0 or 1) says what a call event of its thread, function and
 * start carries: one with a detail link for 1, one without for 0. */
static void pq_check_has_detail(const pqd_file *f, size_t r, const pq_call *calls, size_t n) {
    int64_t has = f->ints[PQ_HAS_DETAIL][r];
    size_t i, with = 0, without = 0;
    for (i = 0; i < n; i++) {
        if ((int64_t)calls[i].slot != f->ints[2][r] ||
            (int64_t)calls[i].ts != f->ints[PQ_START][r] ||
            (int64_t)calls[i].fid != f->ints[4][r])
            continue;
        if (calls[i].detail_seq != ATF_NO_DETAIL) with++;
        else without++;
    }
    CHECK(has == 0 || has == 1);
    CHECK(with + without > 0);
    if (has == 1) CHECK(with > 0);
    else CHECK(without > 0);
}

/* Checks the slices table of dir; returns its sum(has_detail). */
static int64_t pq_check_slices(const char *dir) {
    static pq_fn_sums sums;
    pq_call *calls;
    size_t ncalls = 0;
    int64_t detailed = 0;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    pqd_file f;
    uint64_t ended[5] = { 0, 0, 0, 0, 0 };
    int64_t row;
    size_t i, k;
    memset(&sums, 0, sizeof sums);
    if (!pq_export(dir, "slices", &f)) return -1;
    pq_check_columns(&f, pq_slice_columns, PQ_SLICE_COLUMNS, PQ_START, 2, PQ_START_WALL);
    if (f.ncols != PQ_SLICE_COLUMNS || !collect(dir, &src, &st, &w)) {
        pqd_close(&f);
        return -1;
    }
    CHECK_EQ(1, f.cols[PQ_HAS_DETAIL].type); /* INT32, INTEGER(32, signed) */
    CHECK_EQ(PQ_LOGICAL_INTEGER_FIELD, f.cols[PQ_HAS_DETAIL].logical);
    CHECK_EQ(32, f.cols[PQ_HAS_DETAIL].int_bits);
    CHECK_EQ(1, f.cols[PQ_HAS_DETAIL].int_signed);
    calls = pq_calls(&src, &ncalls);
    for (row = 0; row < f.num_rows; row++) {
        size_t r = (size_t)row;
        const atf_session_thread *t = pq_thread(&src, f.ints[2][r]);
        int64_t start = f.ints[PQ_START][r], end = f.ints[PQ_END][r], dur = f.ints[PQ_DUR][r];
        char tname[80];
        CHECK(t != NULL);
        if (!t) break;
        if (t->name[0]) snprintf(tname, sizeof tname, "%s", t->name);
        else snprintf(tname, sizeof tname, "thread_%u", t->slot);
        CHECK_EQ((int64_t)src.pid, f.ints[0][r]);
        CHECK_EQ((int64_t)cli_thread_tid(t), f.ints[1][r]);
        CHECK(pq_is(f.bytes[3][r], tname));
        pq_check_function(&f, &src, r, 4);
        CHECK(pq_is(f.bytes[PQ_MODULE][r], "")); /* these sessions register no module */
        CHECK(f.ints[PQ_DEPTH][r] >= 0 && f.ints[PQ_DEPTH][r] < (int64_t)WALK_MAX_DEPTH);
        CHECK(start <= end && (uint64_t)start >= t->reader.index.header.time_start_ns);
        CHECK_EQ(end - start, dur);
        pq_check_wall(&f, &src, PQ_START_WALL, r, start);
        pq_check_wall(&f, &src, PQ_END_WALL, r, end);
        /* the recorder's pauses inside the frame: in dur_ns, left out of self_ns */
        CHECK(f.ints[PQ_PAUSED][r] >= 0 && f.ints[PQ_PAUSED][r] <= dur);
        CHECK(f.ints[PQ_SELF][r] >= 0 && f.ints[PQ_SELF][r] <= dur - f.ints[PQ_PAUSED][r]);
        for (k = 0; k < 5 && !pq_is(f.bytes[PQ_ENDED_BY][r], pq_endings[k]); k++) {}
        CHECK(k < 5);
        if (k < 5) ended[k]++;
        pq_add(&sums, (uint64_t)f.ints[4][r], (uint64_t)f.ints[PQ_SELF][r]);
        pq_check_has_detail(&f, r, calls, ncalls);
        detailed += f.ints[PQ_HAS_DETAIL][r];
    }
    free(calls);
    for (i = 0; i < w.count; i++) {
        ended[1] -= w.threads[i].unwound;
        ended[2] -= w.threads[i].cut_short;
        ended[3] -= w.threads[i].cut_by_gap;
    }
    CHECK_EQ(0, ended[1]);
    CHECK_EQ(0, ended[2]);
    CHECK_EQ(0, ended[3]);
    for (i = 0, k = 0; i < st.count; i++) k += st.fns[i].calls;
    CHECK_EQ((int64_t)k, f.num_rows);
    pq_check_against_stats_json(dir, &sums);
    collect_free(&src, &st, &w);
    pqd_close(&f);
    return detailed;
}

static void pq_check_events(const char *dir) {
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    pqd_file f;
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter flt;
    size_t r = 0;
    if (!pq_export(dir, "events", &f)) return;
    pq_check_columns(&f, pq_event_columns, PQ_EVENT_COLUMNS, 3, 1, PQ_TS_WALL);
    if (f.ncols != PQ_EVENT_COLUMNS || !collect(dir, &src, &st, &w)) {
        pqd_close(&f);
        return;
    }
    CHECK_EQ((int64_t)cli_trace_events(&src), f.num_rows);
    cli_trace_filter(&src, &flt);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &src.reader, &flt));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        CHECK((int64_t)r < f.num_rows);
        if ((int64_t)r >= f.num_rows) break;
        CHECK_EQ((int64_t)src.pid, f.ints[0][r]);
        CHECK_EQ((int64_t)it.slot, f.ints[1][r]);
        CHECK_EQ((int64_t)it.seq, f.ints[2][r]);
        CHECK_EQ((int64_t)it.event.timestamp_ns, f.ints[3][r]);
        CHECK_EQ((int64_t)it.event.function_id, f.ints[4][r]);
        pq_check_function(&f, &src, r, 4);
        CHECK(pq_is(f.bytes[PQ_KIND][r], atf_event_kind_str(it.event.kind)));
        CHECK_EQ((int64_t)it.event.call_depth, f.ints[PQ_EV_DEPTH][r]);
        CHECK_EQ(it.event.detail_seq == ATF_NO_DETAIL ? -1 : (int64_t)it.event.detail_seq,
                 f.ints[PQ_DETAIL_SEQ][r]);
        pq_check_wall(&f, &src, PQ_TS_WALL, r, (int64_t)it.event.timestamp_ns);
        r++;
    }
    atf_merge_deinit(&m);
    CHECK_EQ(f.num_rows, (int64_t)r);
    collect_free(&src, &st, &w);
    pqd_close(&f);
}

/* Checks both tables of dir; returns the slices' sum(has_detail). */
static int64_t pq_check_session(const char *dir) {
    int64_t detailed = pq_check_slices(dir);
    pq_check_events(dir);
    return detailed;
}

/* One thread (tid of the writer's OS thread) recorded with detail ALWAYS in `layout`: of
 * the calls, main, b, the a that b's return unwinds and e (open at the end) carry detail;
 * so do two returns, which must not count. Returns the calls with detail: 4. */
static int64_t pq_make_detail(rec *r, uint32_t layout) {
    static const uint8_t payload[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    atf_session_config cfg;
    atf_producer *w = NULL;
    char name[64];
    memset(r, 0, sizeof *r);
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.layout = layout;
    cfg.detail_mode = ATF_DETAIL_ALWAYS;
    snprintf(name, sizeof name, "session_%d", ++g_session_number);
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&r->s, g_root, &cfg));
    if (!r->s) return 0;
    snprintf(r->dir, sizeof r->dir, "%s", atf_session_path(r->s));
    add_symbols(r);
    CHECK_RESULT(ATF_OK, atf_session_attach(r->s, "detail", &w));
    if (w) {
#define DCALL(fid, ts) CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, (fid), \
                                                        (ts), 3, payload, sizeof payload))
#define DRET(fid, ts) CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_RETURN, (fid), \
                                                       (ts), 4, payload, sizeof payload))
        DCALL(F_MAIN, T0 + 0);
        CALL(w, F_A, T0 + 100);
        DCALL(F_B, T0 + 200);
        DRET(F_B, T0 + 500);
        RET(w, F_A, T0 + 1000);
        DCALL(F_A, T0 + 1100);
        CALL(w, F_B, T0 + 1200);
        RET(w, F_A, T0 + 1400);      /* b unwound */
        DRET(F_MAIN, T0 + 2000);
        CALL(w, F_R, T0 + 3000);
        RET(w, F_R, T0 + 3100);
        DCALL(F_E, T0 + 3200);
        CALL(w, F_F, T0 + 3300);     /* e and f open at the end */
#undef DCALL
#undef DRET
    }
    atf_session_detach(r->s);
    rec_close(r);
    return 4;
}

/* Removes the timing anchors from the manifest of the pid_* directory dir: a session
 * without a wall clock. */
static void strip_anchors(const char *dir) {
    char path[1200], *text, *at, *end;
    FILE *fp;
    long n;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (!fp) return;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    text = (char *)calloc((size_t)n + 1, 1);
    CHECK(text != NULL && fread(text, 1, (size_t)n, fp) == (size_t)n);
    fclose(fp);
    if (!text) return;
    at = strstr(text, "\"timing_anchors\":[");
    end = at ? strchr(at, ']') : NULL; /* an anchor holds no array */
    CHECK(at != NULL && end != NULL);
    if (at && end) {
        fp = fopen(path, "wb");
        CHECK(fp != NULL);
        if (fp) {
            fwrite(text, 1, (size_t)(at - text), fp);
            fputs("\"timing_anchors\":[", fp);
            fputs(end, fp);
            fclose(fp);
        }
    }
    free(text);
}

/* Threads with and without names, unbalanced frames, names to clean; layout 2; gaps; calls
 * with detail in both layouts; an id with its top bit set; a session without a wall
 * clock; and what the command refuses. */
static void test_export_parquet(void) {
    static gap_op ops[256];
    const uint64_t high = 0x8000000000000001ull;
    rec r;
    run_result o;
    pqd_file f;
    char path[1200];
    make_multi(&r);
    CHECK_EQ(0, pq_check_session(r.dir)); /* recorded without detail */
    strip_anchors(r.dir);                 /* start_wall, end_wall, ts_wall: null */
    CHECK_EQ(0, pq_check_session(r.dir));
    if (pq_export(r.dir, "events", &f)) {
        int64_t k;
        CHECK(f.num_rows > 0);
        for (k = 0; k < f.num_rows; k++) CHECK_EQ(1, f.nulls[PQ_TS_WALL][k]);
        pqd_close(&f);
    }
    make_nested(&r, ATF_LAYOUT_2);
    CHECK_EQ(0, pq_check_session(r.dir));
    make_gap_session(&r, ops, gap_script(ops, 256));
    CHECK_EQ(0, pq_check_session(r.dir));
    {
        int64_t want = pq_make_detail(&r, ATF_LAYOUT_1);
        CHECK_EQ(want, pq_check_session(r.dir));
        want = pq_make_detail(&r, ATF_LAYOUT_2);
        CHECK_EQ(want, pq_check_session(r.dir));
    }

    rec_open(&r, ATF_LAYOUT_2);
    {
        atf_producer *w = rec_thread(&r, 77, "high", ATF_LAYOUT_2);
        CALL(w, high, T0);
        RET(w, high, T0 + 10);
    }
    rec_close(&r);
    CHECK_EQ(0, pq_check_session(r.dir));
    if (pq_export(r.dir, "slices", &f)) {
        CHECK_EQ(1, f.num_rows);
        if (f.num_rows == 1) {
            CHECK_EQ(INT64_MIN + 1, f.ints[4][0]); /* the id's bits, read as signed */
            CHECK(pq_is(f.bytes[5][0], "0x8000000000000001"));
        }
        pqd_close(&f);
    }

    /* an output that fills up: exit 1; usage errors: exit 2 */
    o = run(cli_main, "export", "--format", "parquet", "-o", "/dev/full", r.dir, (const char *)NULL);
    CHECK_EQ(1, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "parquet", "--table", "frames", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", "--table", "events", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    snprintf(path, sizeof path, "%s/../none", r.dir);
    o = run(cli_main, "export", "--format", "parquet", "-o", path, path, (const char *)NULL);
    CHECK(o.status != 0);
    CHECK(!cli_exists(path));
    run_free(&o);
}

/* ==== a session of several processes ================================================= */
/* A session_* directory holding a pid_* directory per process, as a program that forks
 * records it, exported whole: every process with its own pid, names and every call, in
 * Chrome JSON, Perfetto (a packet sequence and a track group per process) and Parquet,
 * counted per pid against `atf stats --json --pid N`; --pid still picks one; --thread
 * needs --pid; "+T" counts from the session's first event; --function per process; a
 * damaged process is named and the others still exported. fork() makes the second
 * process here, so these are POSIX only (the tools list pid_* directories there only). */
#if !defined(_WIN32)
#include <sys/wait.h>

enum { PROCS_MAX = 4 };

typedef struct procs {
    char root[1000];             /* the session_* directory */
    char dir[2][1100];           /* the pid_* directories: this process's, the child's */
    uint64_t pid[2];
} procs;

/* The child's thread: child_main { child_a } child_a, 10 us after the parent's start. */
static void write_child(atf_producer *w) {
    CALL(w, F_MAIN, T0 + 10000);
    CALL(w, F_A, T0 + 10100);
    RET(w, F_A, T0 + 10200);
    CALL(w, F_A, T0 + 10300);
    RET(w, F_A, T0 + 10400);
    RET(w, F_MAIN, T0 + 10500);
}

/* Two processes in one session_* directory: a child forked here (thread 8001 "child",
 * write_child, the ids of main and a named child_main and child_a: ids are per process),
 * then this one (thread 7001 "main" with the nested trace, 7002 "worker" with the
 * unbalanced one, add_symbols' names). 1 when both were recorded. */
static int make_procs(procs *p) {
    char name[64];
    rec r;
    pid_t child;
    int status = 0;
    memset(p, 0, sizeof *p);
    snprintf(name, sizeof name, "session_procs_%d", ++g_session_number);
    fflush(stdout);
    child = fork();
    if (child == 0) {
        rec_open_named(&r, ATF_LAYOUT_1, name);
        atf_session_add_symbol(r.s, F_MAIN, "child_main");
        atf_session_add_symbol(r.s, F_A, "child_a");
        write_child(rec_thread(&r, 8001, "child", ATF_LAYOUT_1));
        rec_close(&r);
        fflush(stdout);
        _exit(harness__failures_in_test ? 1 : 0);
    }
    CHECK(child > 0);
    if (child <= 0) return 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rec_open_named(&r, ATF_LAYOUT_1, name);
    add_symbols(&r);
    write_nested(rec_thread(&r, 7001, "main", ATF_LAYOUT_1));
    write_unbalanced(rec_thread(&r, 7002, "worker", ATF_LAYOUT_1));
    rec_close(&r);
    snprintf(p->dir[0], sizeof p->dir[0], "%s", r.dir);
    cli_parent_dir(r.dir, p->root, sizeof p->root);
    p->pid[0] = (uint64_t)getpid();
    p->pid[1] = (uint64_t)child;
    snprintf(p->dir[1], sizeof p->dir[1], "%s/pid_%llu", p->root, (cli_ull)child);
    CHECK(cli_is_dir(p->dir[1]));
    return cli_is_dir(p->dir[0]) && cli_is_dir(p->dir[1]);
}

/* What one export shows of each process. */
typedef struct proc_view {
    size_t n;
    uint64_t pid[PROCS_MAX];
    uint64_t begins[PROCS_MAX], ends[PROCS_MAX];     /* slices opened and closed */
    uint64_t process_names[PROCS_MAX], thread_names[PROCS_MAX];
    uint64_t child_named[PROCS_MAX];                  /* slices named child_* */
    uint64_t tids[PROCS_MAX][4];                      /* its threads' tids */
    size_t tid_count[PROCS_MAX];
    uint64_t events;                                  /* B and E events */
} proc_view;

/* The index of pid in v, added when new (PROCS_MAX: no room). */
static size_t pv_index(proc_view *v, uint64_t pid) {
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->pid[i] == pid) return i;
    CHECK(v->n < PROCS_MAX);
    if (v->n == PROCS_MAX) return PROCS_MAX;
    v->pid[v->n] = pid;
    return v->n++;
}

static void pv_add_tid(proc_view *v, size_t k, uint64_t tid) {
    size_t i;
    for (i = 0; i < v->tid_count[k]; i++)
        if (v->tids[k][i] == tid) return;
    if (v->tid_count[k] < 4) v->tids[k][v->tid_count[k]++] = tid;
}

/* The slices of pid in v (0 when v does not show it). */
static uint64_t pv_begins(const proc_view *v, uint64_t pid) {
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->pid[i] == pid) return v->begins[i];
    return 0;
}

static int pv_has(const proc_view *v, uint64_t pid) {
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->pid[i] == pid) return 1;
    return 0;
}

/* A Chrome export (JSON text) per process: every event's pid, balance per pid and thread,
 * time order per thread. */
static void pv_chrome(proc_view *v, const char *text, size_t len) {
    jdoc d;
    long evs, it;
    uint64_t depth[PROCS_MAX][4], last[PROCS_MAX][4];
    size_t k, t;
    memset(v, 0, sizeof *v);
    memset(depth, 0, sizeof depth);
    memset(last, 0, sizeof last);
    CHECK(j_parse(&d, text, len));
    evs = j_get(&d, 0, "traceEvents");
    CHECK(evs >= 0 && d.nodes[evs].type == J_ARR);
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph"), *name = j_str(&d, it, "name");
        uint64_t tid = j_u64(&d, it, "tid");
        k = pv_index(v, j_u64(&d, it, "pid"));
        if (k == PROCS_MAX) continue;
        if (strcmp(ph, "M") == 0) {
            if (strcmp(name, "process_name") == 0) v->process_names[k]++;
            if (strcmp(name, "thread_name") == 0) v->thread_names[k]++;
            continue;
        }
        pv_add_tid(v, k, tid);
        for (t = 0; t < v->tid_count[k] && v->tids[k][t] != tid; t++) continue;
        CHECK(t < 4);
        if (t == 4) continue;
        CHECK(j_ts_ns(&d, it) >= last[k][t]);
        last[k][t] = j_ts_ns(&d, it);
        v->events++;
        if (strcmp(ph, "B") == 0) {
            v->begins[k]++;
            depth[k][t]++;
            if (strncmp(name, "child_", 6) == 0) v->child_named[k]++;
        } else {
            CHECK(strcmp(ph, "E") == 0);
            CHECK(depth[k][t] > 0);
            if (depth[k][t]) depth[k][t]--;
            v->ends[k]++;
        }
    }
    for (k = 0; k < PROCS_MAX; k++)
        for (t = 0; t < 4; t++) CHECK_EQ(0, depth[k][t]);
    j_free(&d);
}

/* A Perfetto export per process: one process track per pid (each pid once), its thread
 * tracks under it with its pid and on its packet sequence, and at most `seqs`
 * sequences. */
static void pv_perfetto(proc_view *v, const uint8_t *data, size_t len, size_t seqs) {
    pf_state *s = (pf_state *)malloc(sizeof *s);
    size_t i, k;
    memset(v, 0, sizeof *v);
    CHECK(s != NULL);
    if (!s) return;
    pf_decode_seqs(s, data, len, seqs);
    for (i = 0; i < s->track_count; i++) {
        const pf_track *t = &s->tracks[i];
        const pf_track *parent = t->is_process ? NULL : pf_track_of(s, t->parent);
        k = pv_index(v, t->pid);
        if (k == PROCS_MAX) continue;
        if (t->is_process) {
            v->process_names[k]++;
            continue;
        }
        CHECK(parent != NULL && parent->is_process);
        if (!parent) continue;
        CHECK_EQ(parent->pid, t->pid);
        CHECK_EQ(parent->seq, t->seq);
        v->thread_names[k]++;
        pv_add_tid(v, k, t->tid);
        CHECK_EQ(0, t->open);
        v->begins[k] += t->begins;
        v->ends[k] += t->ends;
        v->events += t->begins + t->ends;
    }
    for (k = 0; k < v->n; k++) CHECK_EQ(1, v->process_names[k]);
    CHECK(s->sequences == v->n || v->n == 0);
    for (i = 0; i < s->log_count; i++) { /* begins named child_* are the child's alone */
        const pf_track *t = pf_track_of(s, s->log[i].uuid);
        if (!t || s->log[i].type != 1 || strncmp(s->log[i].name, "child_", 6) != 0) continue;
        k = pv_index(v, t->pid);
        if (k < PROCS_MAX) v->child_named[k]++;
    }
    pf_free(s);
    free(s);
}

/* `atf stats --json --pid pid PATH`: the calls of every function, and the events of
 * every thread, summed. */
static void stats_of_pid(const char *path, uint64_t pid, uint64_t *calls, uint64_t *events) {
    char pid_text[24];
    run_result o;
    jdoc d;
    long arr, it;
    snprintf(pid_text, sizeof pid_text, "%llu", (cli_ull)pid);
    o = run(cli_main, "stats", "--json", "--pid", pid_text, path, (const char *)NULL);
    *calls = *events = 0;
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    arr = j_get(&d, 0, "functions");
    for (it = arr >= 0 ? d.nodes[arr].child : -1; it >= 0; it = d.nodes[it].next)
        *calls += j_u64(&d, it, "calls");
    arr = j_get(&d, 0, "threads");
    for (it = arr >= 0 ? d.nodes[arr].child : -1; it >= 0; it = d.nodes[it].next)
        *events += j_u64(&d, it, "events");
    j_free(&d);
    run_free(&o);
}

/* Exports PATH as Chrome JSON with the NULL-terminated options into v; the status. */
static int chrome_view(proc_view *v, const char *path, const char *a, const char *b,
                       const char *c, const char *e) {
    run_result o = run(cli_main, "export", "--format", "chrome", path, a, b, c, e,
                       (const char *)NULL);
    int status = o.status;
    memset(v, 0, sizeof *v);
    if (status == 0 || status == 1) pv_chrome(v, o.out, o.out_len);
    run_free(&o);
    return status;
}

/* Every process of a whole-session export against its stats: its slices, one process
 * name, its threads (2 for the parent, 1 for the child), the child's names its own. */
static void check_procs_view(const proc_view *v, const procs *p, const char *what) {
    uint64_t calls, events;
    size_t i, k;
    CHECK_EQ(2, v->n);
    for (i = 0; i < 2; i++) {
        for (k = 0; k < v->n && v->pid[k] != p->pid[i]; k++) continue;
        CHECK(k < v->n);
        if (k == v->n) {
            printf("  %s: pid %llu missing\n", what, (cli_ull)p->pid[i]);
            continue;
        }
        stats_of_pid(p->root, p->pid[i], &calls, &events);
        CHECK_EQ(i == 0 ? 12 : 3, calls);
        CHECK_EQ(calls, v->begins[k]);
        CHECK_EQ(calls, v->ends[k]);
        CHECK_EQ(1, v->process_names[k]);
        CHECK_EQ(i == 0 ? 2 : 1, v->thread_names[k]);
        CHECK_EQ(i == 0 ? 0 : 3, v->child_named[k]); /* names are per process */
    }
}

static void test_export_processes(void) {
    procs p;
    proc_view v;
    run_result o;
    char out[1200], pid_text[2][24], *text;
    uint8_t *data;
    size_t len;
    uint64_t calls, events;
    pqd_file f;
    if (!make_procs(&p)) return;
    snprintf(pid_text[0], sizeof pid_text[0], "%llu", (cli_ull)p.pid[0]);
    snprintf(pid_text[1], sizeof pid_text[1], "%llu", (cli_ull)p.pid[1]);

    /* chrome: both processes, to a file */
    snprintf(out, sizeof out, "%s/../procs.json", p.root);
    o = run(cli_main, "export", "--format", "chrome", "-o", out, p.root, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(o.err[0] == '\0');
    run_free(&o);
    text = read_file(out, &len);
    CHECK(text != NULL);
    if (text) {
        pv_chrome(&v, text, len);
        check_procs_view(&v, &p, "chrome");
        free(text);
    }

    /* perfetto: a sequence and a track group per process */
    snprintf(out, sizeof out, "%s/../procs.pftrace", p.root);
    o = run(cli_main, "export", "--format", "perfetto", "-o", out, p.root, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
    data = (uint8_t *)read_file(out, &len);
    CHECK(data != NULL);
    if (data) {
        pv_perfetto(&v, data, len, 2);
        check_procs_view(&v, &p, "perfetto");
        free(data);
    }

    /* parquet: both tables hold both processes, told apart by pid */
    if (pq_export(p.root, "slices", &f)) {
        int64_t rows[2] = {0, 0};
        size_t r;
        for (r = 0; r < (size_t)f.num_rows; r++) {
            CHECK(f.ints[0][r] == (int64_t)p.pid[0] || f.ints[0][r] == (int64_t)p.pid[1]);
            rows[f.ints[0][r] == (int64_t)p.pid[1]]++;
            if (f.ints[0][r] == (int64_t)p.pid[1]) CHECK(memcmp(f.bytes[6][r].p, "child_", 6) == 0);
            else CHECK(f.bytes[6][r].len < 6 || memcmp(f.bytes[6][r].p, "child_", 6) != 0);
        }
        CHECK_EQ(12, rows[0]);
        CHECK_EQ(3, rows[1]);
        pqd_close(&f);
    }
    if (pq_export(p.root, "events", &f)) {
        int64_t rows[2] = {0, 0};
        size_t r;
        for (r = 0; r < (size_t)f.num_rows; r++) rows[f.ints[0][r] == (int64_t)p.pid[1]]++;
        stats_of_pid(p.root, p.pid[0], &calls, &events);
        CHECK_EQ((int64_t)events, rows[0]);
        stats_of_pid(p.root, p.pid[1], &calls, &events);
        CHECK_EQ((int64_t)events, rows[1]);
        pqd_close(&f);
    }

    /* --pid still picks one process, in both viewer formats */
    CHECK_EQ(0, chrome_view(&v, p.root, "--pid", pid_text[1], NULL, NULL));
    CHECK_EQ(1, v.n);
    CHECK(pv_has(&v, p.pid[1]));
    CHECK_EQ(3, pv_begins(&v, p.pid[1]));
    o = run(cli_main, "export", "--format", "perfetto", "--pid", pid_text[0], p.root,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    pv_perfetto(&v, (const uint8_t *)o.out, o.out_len, 1);
    CHECK_EQ(1, v.n);
    CHECK_EQ(12, pv_begins(&v, p.pid[0]));
    run_free(&o);

    /* --thread: thread numbers are per process, so it needs --pid */
    snprintf(out, sizeof out, "%s/../thread.json", p.root);
    o = run(cli_main, "export", "--format", "chrome", "--thread", "0", "-o", out, p.root,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK(strstr(o.err, "--pid") != NULL);
    CHECK(strstr(o.err, p.dir[1]) != NULL); /* the processes are listed */
    CHECK(!cli_exists(out));
    run_free(&o);
    CHECK_EQ(0, chrome_view(&v, p.root, "--pid", pid_text[0], "--thread", "1"));
    CHECK_EQ(1, v.n);
    CHECK_EQ(6, pv_begins(&v, p.pid[0]));
    CHECK_EQ(1, v.tid_count[0]);
    CHECK_EQ(7002, v.tids[0][0]);

    /* "+T" counts from the session's first event (the parent's, at T0), not each
     * process's own: +5us leaves the parent (done by T0 + 4us) nothing, the child all */
    CHECK_EQ(0, chrome_view(&v, p.root, "--from", "+5us", NULL, NULL));
    CHECK_EQ(2, v.n);
    CHECK_EQ(0, pv_begins(&v, p.pid[0]));
    CHECK_EQ(3, pv_begins(&v, p.pid[1]));
    CHECK_EQ(0, chrome_view(&v, p.root, "--to", "+10200ns", NULL, NULL));
    CHECK_EQ(12, pv_begins(&v, p.pid[0]));
    CHECK_EQ(2, pv_begins(&v, p.pid[1])); /* child_main and the first child_a */

    /* --function: each process's own name; a process without it shows no calls */
    CHECK_EQ(0, chrome_view(&v, p.root, "--function", "child_a", NULL, NULL));
    CHECK_EQ(2, v.n);
    CHECK_EQ(0, pv_begins(&v, p.pid[0]));
    CHECK_EQ(2, pv_begins(&v, p.pid[1]));
    CHECK_EQ(0, chrome_view(&v, p.root, "--function", "recurse", NULL, NULL));
    CHECK_EQ(2, pv_begins(&v, p.pid[0]));
    CHECK_EQ(0, pv_begins(&v, p.pid[1]));
    o = run(cli_main, "export", "--format", "chrome", "--function", "nowhere", p.root,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK(o.out_len == 0);
    CHECK(strstr(o.err, "nowhere") != NULL);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", "--clock", "no_such_anchor", p.root,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK(o.out_len == 0); /* refused before anything is written */
    run_free(&o);

    /* a copied pid_* directory (its manifest names the child's pid): a process of its
     * own, by its directory's pid */
    {
        char copy[1200], cmd[2600];
        snprintf(copy, sizeof copy, "%s/pid_1", p.root);
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", p.dir[1], copy);
        CHECK_EQ(0, system(cmd));
        CHECK_EQ(0, chrome_view(&v, p.root, NULL, NULL, NULL, NULL));
        CHECK_EQ(3, v.n);
        CHECK_EQ(12, pv_begins(&v, p.pid[0]));
        CHECK_EQ(3, pv_begins(&v, p.pid[1]));
        CHECK_EQ(3, pv_begins(&v, 1));
        o = run(cli_main, "export", "--format", "perfetto", p.root, (const char *)NULL);
        CHECK_EQ(0, o.status);
        pv_perfetto(&v, (const uint8_t *)o.out, o.out_len, 3);
        CHECK_EQ(3, v.n);
        CHECK_EQ(3, pv_begins(&v, 1));
        CHECK_EQ(3, pv_begins(&v, p.pid[1]));
        run_free(&o);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", copy);
        CHECK_EQ(0, system(cmd));
    }

    /* a damaged process is named, the other still exported whole: exit status 1 */
    {
        char index[1200];
        FILE *fp;
        snprintf(index, sizeof index, "%s/thread_0/index.atf", p.dir[1]);
        fp = fopen(index, "wb");
        CHECK(fp != NULL);
        if (fp) {
            fwrite("ATI2", 1, 4, fp);
            fclose(fp);
        }
        snprintf(out, sizeof out, "%s/../damaged.json", p.root);
        o = run(cli_main, "export", "--format", "chrome", "-o", out, p.root, (const char *)NULL);
        CHECK_EQ(1, o.status);
        CHECK(strstr(o.err, p.dir[1]) != NULL);
        run_free(&o);
        text = read_file(out, &len);
        CHECK(text != NULL);
        if (text) {
            pv_chrome(&v, text, len);
            CHECK_EQ(12, pv_begins(&v, p.pid[0]));
            CHECK(!pv_has(&v, p.pid[1]));
            free(text);
        }
        o = run(cli_main, "export", "--format", "perfetto", p.root, (const char *)NULL);
        CHECK_EQ(1, o.status);
        pv_perfetto(&v, (const uint8_t *)o.out, o.out_len, 1);
        CHECK_EQ(1, v.n);
        CHECK_EQ(12, pv_begins(&v, p.pid[0]));
        run_free(&o);
    }
}

/* A real forking program (tests/programs/forks.c: a parent, two children, a
 * grandchild), recorded with `atf record` when make test built it (ATF and BUILD set;
 * not under the sanitizers, where a fork can hang in the child: see
 * tests/instrument_checks.sh), exported whole: each process's slices equal its stats. */
static void test_export_forks_recorded(void) {
    const char *atf = getenv("ATF"), *build = getenv("BUILD");
    char prog[1024], so[1024], out_dir[1024], cmd[4096], session[1024], **pids = NULL;
    size_t npids = 0, i;
    run_result o;
    proc_view chrome, perfetto;
    int status;
    if (!atf || !build || getenv("ATF_CHECKS_SANITIZED")) {
        printf("  export_forks_recorded: skipped (no ATF and BUILD, or sanitized)\n");
        return;
    }
    snprintf(prog, sizeof prog, "%s/programs/forks_hooked", build);
    snprintf(so, sizeof so, "%s/libatf_instrument.so", build);
    if (!cli_is_file(atf) || !cli_is_file(prog) || !cli_is_file(so)) {
        printf("  export_forks_recorded: skipped (%s, %s or %s not built)\n", atf, prog, so);
        return;
    }
    snprintf(out_dir, sizeof out_dir, "%s/forks", g_root);
    snprintf(cmd, sizeof cmd, "'%s' record --output '%s' -- '%s' >/dev/null 2>&1", atf, out_dir,
             prog);
    status = system(cmd);
    CHECK_EQ(0, status);
    if (status != 0) return;
    { /* the one session_* directory record made */
        char line[1024];
        FILE *ls;
        snprintf(cmd, sizeof cmd, "ls -d '%s'/session_*", out_dir);
        ls = popen(cmd, "r");
        CHECK(ls != NULL);
        if (!ls) return;
        if (!fgets(line, sizeof line, ls)) line[0] = '\0';
        pclose(ls);
        line[strcspn(line, "\n")] = '\0';
        snprintf(session, sizeof session, "%s", line);
    }
    CHECK_EQ(0, cli_pid_dirs(session, &pids, &npids));
    CHECK_EQ(4, npids);
    o = run(cli_main, "export", "--format", "chrome", session, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pv_chrome(&chrome, o.out, o.out_len);
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", session, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pv_perfetto(&perfetto, (const uint8_t *)o.out, o.out_len, PROCS_MAX);
    run_free(&o);
    CHECK_EQ(npids, chrome.n);
    CHECK_EQ(npids, perfetto.n);
    for (i = 0; i < npids; i++) {
        uint64_t pid = strtoull(strrchr(pids[i], '/') + 5, NULL, 10), calls, events; /* pid_N */
        stats_of_pid(session, pid, &calls, &events);
        CHECK(calls > 0);
        CHECK(pv_has(&chrome, pid));
        CHECK_EQ(calls, pv_begins(&chrome, pid));
        CHECK(pv_has(&perfetto, pid));
        CHECK_EQ(calls, pv_begins(&perfetto, pid));
    }
    cli_pid_dirs_free(pids, npids);
}
#endif

/* ==== frames cut short ============================================================== */
/* A process that ended with calls open in its threads (killed, say): thread 0's only
 * event is the call of main, the worker's last calls are still open at its end, a third
 * thread goes on until T0 + 1000, the process's last event. Every frame open at its
 * thread's end ends when the process was last seen, whatever the view shows of it, and
 * every output says that it was cut short. */
enum { F_WORK = 10 };

static void make_cut_short(rec *r) {
    atf_producer *m, *w, *g;
    rec_open(r, ATF_LAYOUT_1);
    add_symbols(r);
    atf_session_add_symbol(r->s, F_WORK, "work");
    m = rec_thread(r, 6001, "main", ATF_LAYOUT_1);
    w = rec_thread(r, 6002, "worker", ATF_LAYOUT_1);
    g = rec_thread(r, 6003, "other", ATF_LAYOUT_1);
    CALL(m, F_MAIN, T0);
    CALL(w, F_WORK, T0 + 100);
    CALL(w, F_B, T0 + 200);
    RET(w, F_B, T0 + 300);
    RET(w, F_WORK, T0 + 400);
    CALL(w, F_WORK, T0 + 500);
    CALL(w, F_B, T0 + 600);              /* work and b open at the worker's end */
    CALL(g, F_G, T0 + 700);
    RET(g, F_G, T0 + 1000);              /* the process's last event */
    rec_close(r);
}

/* The "total_ns" of function fid in a `stats --json` output; UINT64_MAX when absent. */
static uint64_t stats_total_of(const run_result *o, uint64_t fid) {
    jdoc d;
    long fns, it;
    char hex[24];
    uint64_t total = UINT64_MAX;
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)fid);
    if (!j_parse(&d, o->out, o->out_len)) return UINT64_MAX;
    fns = j_get(&d, 0, "functions");
    for (it = fns >= 0 ? d.nodes[fns].child : -1; it >= 0; it = d.nodes[it].next)
        if (strcmp(j_str(&d, it, "fid"), hex) == 0) total = j_u64(&d, it, "total_ns");
    j_free(&d);
    return total;
}

/* The rows of a slices table whose ended_by is `how`. */
static size_t pq_count_ended(const pqd_file *f, const char *how) {
    size_t r, n = 0;
    for (r = 0; r < (size_t)f->num_rows; r++) n += (size_t)pq_is(f->bytes[PQ_ENDED_BY][r], how);
    return n;
}

/* The marks `arg` (true) of the viewer formats: chrome's E events, perfetto's SLICE_END
 * annotations. */
static void check_end_marks(const char *dir, const char *arg, size_t want) {
    run_result o = run(cli_main, "export", "--format", "chrome", dir, (const char *)NULL);
    pf_state ps;
    char chrome[96];
    size_t i, n = 0;
    snprintf(chrome, sizeof chrome, "\"ph\":\"E\",\"args\":{\"%s\":true}}", arg);
    CHECK_EQ(0, o.status);
    CHECK_EQ(want, count_of(o.out, chrome));
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&ps, (const uint8_t *)o.out, o.out_len);
    for (i = 0; i < ps.annot_count; i++)
        n += ps.annots[i].type == 2 && strcmp(ps.annots[i].name, arg) == 0 &&
             ps.annots[i].field == 2 && ps.annots[i].v == 1 ? 1u : 0u;
    CHECK_EQ(want, n);
    pf_free(&ps);
    run_free(&o);
}

static void check_cut_marks(const char *dir, size_t want) {
    check_end_marks(dir, "cut_short", want);
}

static void test_cut_short(void) {
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    run_result o;
    pqd_file f;
    char to[32];
    make_cut_short(&r);
    if (collect(r.dir, &src, &st, &w)) {
        CHECK_EQ(T0 + 1000, w.end_ns);
        CHECK_FN(&st, F_MAIN, 1, 1000, 1000, 1000, 1000);   /* [0, 1000], not 0 */
        CHECK_FN(&st, F_WORK, 2, 800, 300, 300, 500);       /* [100, 400], [500, 1000] */
        CHECK_FN(&st, F_B, 2, 500, 500, 100, 400);          /* [200, 300], [600, 1000] */
        CHECK_FN(&st, F_G, 1, 300, 300, 300, 300);
        CHECK_EQ(1, w.threads[0].cut_short);
        CHECK_EQ(2, w.threads[1].cut_short);
        CHECK_EQ(0, w.threads[2].cut_short);
        CHECK_EQ(T0, w.threads[0].last_ns);                 /* the thread's own span stays */
        collect_free(&src, &st, &w);
    }
    /* what --thread shows of a thread does not change when its frames end */
    o = run(cli_main, "stats", "--json", "--thread", "0", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(1000, stats_total_of(&o, F_MAIN));
    run_free(&o);
    /* in a window, the process was last seen at its latest event in it: b's call at 600 */
    snprintf(to, sizeof to, "%llu", (unsigned long long)(T0 + 650));
    o = run(cli_main, "stats", "--json", "--to", to, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(600, stats_total_of(&o, F_MAIN));
    CHECK_EQ(400, stats_total_of(&o, F_WORK));              /* 300 + [500, 600] */
    run_free(&o);
    o = run(cli_main, "stats", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(1, count_of(o.out, "\n  3 frames cut short ("));
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(3, count_of(o.out, "(cut short)"));
    CHECK_EQ(1, count_of(o.out, "  main  (cut short)\n"));  /* a call with no callee shown */
    run_free(&o);
    if (pq_export(r.dir, "slices", &f)) {
        size_t k;
        CHECK_EQ(3, pq_count_ended(&f, "cut"));
        for (k = 0; k < (size_t)f.num_rows; k++)
            if (pq_is(f.bytes[6][k], "main")) CHECK_EQ(1000, f.ints[PQ_DUR][k]);
        pqd_close(&f);
    }
    check_cut_marks(r.dir, 3);
}

/* A bounded recording's stop: the frames open in every thread then are cut short at the
 * process's last event before it, not at a gap. */
static void test_cut_short_stopped(void) {
    rec r;
    atf_session_config cfg;
    atf_producer *m, *w;
    cli_trace src;
    profile_fns st;
    walk_ctx wk;
    run_result o;
    char name[64];
    uint64_t base;
    memset(&r, 0, sizeof r);
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.max_duration_ns = 1000000000u; /* events stamped 1 s after the open: not recorded */
    snprintf(name, sizeof name, "session_%d", ++g_session_number);
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&r.s, g_root, &cfg));
    if (!r.s) return;
    snprintf(r.dir, sizeof r.dir, "%s", atf_session_path(r.s));
    add_symbols(&r);
    atf_session_add_symbol(r.s, F_WORK, "work");
    m = rec_thread(&r, 6101, "main", ATF_LAYOUT_1);
    w = rec_thread(&r, 6102, "worker", ATF_LAYOUT_1);
    base = atf_now_ns();
    CALL(m, F_MAIN, base);
    CALL(m, F_A, base + 100);
    CALL(w, F_WORK, base + 50);
    RET(w, F_WORK, base + 200);
    CALL(w, F_B, base + 300);             /* the last event before the stop */
    RET(m, F_A, base + 3000000000u);      /* after it: not recorded */
    RET(w, F_B, base + 3000000100u);
    rec_close(&r);
    if (collect(r.dir, &src, &st, &wk)) {
        CHECK_EQ(base + 300, wk.end_ns);
        CHECK_FN(&st, F_MAIN, 1, 300, 100, 300, 300);
        CHECK_FN(&st, F_A, 1, 200, 200, 200, 200);
        CHECK_FN(&st, F_B, 1, 0, 0, 0, 0);
        CHECK_EQ(2, wk.threads[0].cut_short);
        CHECK_EQ(1, wk.threads[1].cut_short);
        CHECK_EQ(0, wk.threads[0].cut_by_gap + wk.threads[1].cut_by_gap);
        CHECK_EQ(1, wk.threads[0].not_recorded);
        CHECK_EQ(1, wk.threads[1].not_recorded);
        collect_free(&src, &st, &wk);
    }
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(3, count_of(o.out, "(cut short)"));
    CHECK_EQ(0, count_of(o.out, "(cut by a gap)"));
    CHECK_EQ(2, count_of(o.out, "~ gap: 1 events not recorded (stopped)\n"));
    run_free(&o);
    check_cut_marks(r.dir, 3);
}

/* ==== frames left by an exception ===================================================== */
/* main { a { b } } where an exception leaves b and a (exception events), then main { g }
 * and main's return: tree, Parquet and both viewer formats mark exactly those two frames,
 * and nothing else. */
static void test_exception_marks(void) {
    rec r;
    atf_producer *m;
    run_result o;
    pqd_file f;
    rec_open(&r, ATF_LAYOUT_1);
    add_symbols(&r);
    m = rec_thread(&r, 7001, "main", ATF_LAYOUT_1);
    CALL(m, F_MAIN, T0);
    CALL(m, F_A, T0 + 100);
    CALL(m, F_B, T0 + 200);
    EXC(m, F_B, T0 + 300);
    EXC(m, F_A, T0 + 400);
    CALL(m, F_G, T0 + 500);              /* the catching frame goes on */
    RET(m, F_G, T0 + 600);
    RET(m, F_MAIN, T0 + 700);
    rec_close(&r);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(2, count_of(o.out, "(exception)"));
    CHECK_EQ(1, count_of(o.out, "} a  (exception)\n"));
    CHECK_EQ(1, count_of(o.out, "  b  (exception)\n"));
    CHECK_EQ(1, count_of(o.out, "} main\n"));
    run_free(&o);
    if (pq_export(r.dir, "slices", &f)) {
        size_t k;
        CHECK_EQ(4, f.num_rows);
        CHECK_EQ(2, pq_count_ended(&f, "exception"));
        CHECK_EQ(2, pq_count_ended(&f, "return"));
        for (k = 0; k < (size_t)f.num_rows; k++)
            if (pq_is(f.bytes[6][k], "a")) CHECK(pq_is(f.bytes[PQ_ENDED_BY][k], "exception"));
        pqd_close(&f);
    }
    check_end_marks(r.dir, "exception", 2);
    check_end_marks(r.dir, "cut_short", 0);
}

static const test_case tests[] = {
    {"stats_nested", test_stats_nested},
    {"stats_layout2", test_stats_layout2},
    {"stats_unbalanced", test_stats_unbalanced},
    {"stats_depth_limit", test_stats_depth_limit},
    {"stats_out_of_order_file", test_stats_out_of_order_file},
    {"window_from_smallest_time", test_window_from_smallest_time},
    {"stats_pauses_left_out", test_stats_pauses_left_out},
    {"stats_json", test_stats_json},
    {"export_chrome", test_export_chrome},
    {"export_perfetto", test_export_perfetto},
    {"export_parquet", test_export_parquet},
    {"export_detail", test_export_detail},
    {"export_chrome_unchanged", test_export_chrome_unchanged},
    {"export_names", test_export_names},
    {"info_names", test_info_names},
    {"tree_nested", test_tree_nested},
    {"tree_unbalanced_and_threads", test_tree_unbalanced_and_threads},
    {"export_folded", test_export_folded},
    {"diff_nested", test_diff_nested},
    {"path_kinds", test_path_kinds},
    {"empty", test_empty},
    {"command_line", test_command_line},
    {"fidset", test_fidset},
    {"random_events", test_random_events},
    {"gaps", test_gaps},
    {"cut_short", test_cut_short},
    {"cut_short_stopped", test_cut_short_stopped},
    {"exception_marks", test_exception_marks},
#if !defined(_WIN32)
    {"export_processes", test_export_processes},
    {"export_forks_recorded", test_export_forks_recorded},
#endif
};

int main(int argc, char **argv) {
    char cmd[400];
    int rc;
    snprintf(g_root, sizeof g_root, "/tmp/atf_test_export_%d", (int)getpid());
    rc = harness_run("export", tests, sizeof tests / sizeof tests[0], argc, argv);
#if defined(_WIN32)
    snprintf(cmd, sizeof cmd, "rmdir /s /q \"%s\"", g_root);
    {
        char *c;
        for (c = cmd + 10; *c; c++) if (*c == '/') *c = '\\';
    }
#else
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
#endif
    if (getenv("ATF_TEST_KEEP")) printf("kept %s\n", g_root); /* for a look at the files */
    else if (system(cmd) != 0) printf("could not remove %s\n", g_root);
    return rc;
}
