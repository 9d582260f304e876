/* cli_traces.h - what the harnesses of the atf command's commands share (test_stats.c,
 * test_tree.c, test_info.c, test_diff.c, test_core.c, test_walk.c, test_export.c): the
 * command linked in (tests/cli_embed.h and .c, with a walk depth limit of 8 so that the
 * skipping of deeper calls is tested); sessions recorded here with the library's writer in
 * manual drain mode, threads on caller-memory rings with chosen thread ids, so that every
 * figure of a trace is fixed by the test (a nested trace, an unbalanced one, three threads of
 * both, a named process, a lossy thread); the profile of a session collected in-process;
 * and a main() that keeps the sessions under a scratch directory of the harness's own.
 * Every helper is static; a harness uses some of them. Include after atf.h. */
#ifndef ATF_TESTS_CLI_TRACES_H
#define ATF_TESTS_CLI_TRACES_H

#include "cli_embed.h"

#include "harness.h"
#include "cli_run.h"
#include "json_decode.h"
#include "scratch_dir.h"

#include <stdlib.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#  define TRACES_UNUSED __attribute__((unused))
#else
#  define TRACES_UNUSED
#endif

static char g_root[256];         /* the harness's scratch directory: sessions go below */
static int g_session_number;

/* ==== recording ====================================================================== */
enum { REC_THREADS_MAX = 8, REC_RING_EVENTS = 4096 };

typedef struct rec {
    atf_session *s;
    atf_producer w[REC_THREADS_MAX];
    void *raw[REC_THREADS_MAX];
    size_t count;
    char dir[1024];              /* the pid_* directory */
} rec;

/* A session opened with cfg (drained by hand, whatever cfg says) in
 * g_root/name/pid_<this process>. */
static TRACES_UNUSED void rec_open_config(rec *r, const atf_session_config *cfg,
                                          const char *name) {
    atf_session_config c = *cfg;
    memset(r, 0, sizeof *r);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&r->s, g_root, &c));
    if (r->s) snprintf(r->dir, sizeof r->dir, "%s", atf_session_path(r->s));
}

/* A session in g_root/name/pid_<this process>. */
static TRACES_UNUSED void rec_open_named(rec *r, uint32_t layout, const char *name) {
    atf_session_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = layout;
    rec_open_config(r, &cfg, name);
}

/* A session of its own name, "session_<N>", with cfg. */
static TRACES_UNUSED void rec_open_new(rec *r, const atf_session_config *cfg) {
    char name[64];
    snprintf(name, sizeof name, "session_%d", ++g_session_number);
    rec_open_config(r, cfg, name);
}

static TRACES_UNUSED void rec_open(rec *r, uint32_t layout) {
    atf_session_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = layout;
    rec_open_new(r, &cfg);
}

/* Adds thread slot r->count with OS thread id tid and a ring of ring_events slots;
 * returns its writer. */
static TRACES_UNUSED atf_producer *rec_thread_ring(rec *r, uint32_t tid, const char *name,
                                                   uint32_t layout, uint64_t ring_events) {
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

static TRACES_UNUSED atf_producer *rec_thread(rec *r, uint32_t tid, const char *name,
                                              uint32_t layout) {
    return rec_thread_ring(r, tid, name, layout, REC_RING_EVENTS);
}

static TRACES_UNUSED void rec_close(rec *r) {
    size_t i;
    CHECK_RESULT(ATF_OK, atf_session_close(r->s));
    for (i = 0; i < r->count; i++) free(r->raw[i]);
}

#define CALL(w, fid, ts) CHECK_RESULT(ATF_OK, atf_producer_call((w), (fid), (ts)))
#define RET(w, fid, ts) CHECK_RESULT(ATF_OK, atf_producer_return((w), (fid), (ts)))
#define EXC(w, fid, ts) CHECK_RESULT(ATF_OK, atf_producer_exception((w), (fid), (ts)))

/* ==== the traces ===================================================================== */
enum { F_MAIN = 1, F_A = 2, F_B = 3, F_R = 4, F_E = 5, F_F = 6, F_G = 7, F_ZZ = 8, F_X = 9 };
enum { T0 = 1000000 };               /* base timestamp: 1000.000 us */

/* main { a { b } a } r { r }: every figure known (see test_stats.c, stats_nested). */
static TRACES_UNUSED void write_nested(atf_producer *w) {
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
 * with two frames open (see test_stats.c, stats_unbalanced). */
static TRACES_UNUSED void write_unbalanced(atf_producer *w) {
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

static TRACES_UNUSED void add_symbols(rec *r) {
    atf_session_add_symbol(r->s, F_MAIN, "main");
    atf_session_add_symbol(r->s, F_A, "a");
    atf_session_add_symbol(r->s, F_B, "b");
    atf_session_add_symbol(r->s, F_R, "recurse");
    atf_session_add_symbol(r->s, F_G, "g");
}

/* A session with one thread (tid 4242, "main") holding the nested trace. */
static TRACES_UNUSED void make_nested(rec *r, uint32_t layout) {
    atf_producer *w;
    rec_open(r, layout);
    add_symbols(r);
    w = rec_thread(r, 4242, "main", layout);
    write_nested(w);
    rec_close(r);
}

/* Three threads: slot 0 (tid 5001) nested; slot 1 (tid 5002) unbalanced; slot 2 (tid
 * 5003) no events; names that need escaping, UTF-8 and invalid UTF-8 (which the tools
 * show cleaned: name_bad_clean); interleaved timestamps. */
static const char name_quote[] = "quote\"back\\slash\nnew\ttab\x01";
static const char name_utf8[] = "gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x98\x80";
static const char name_bad[] = "bad\xff\xfe" "end";
static const char name_bad_clean[] = "bad\xef\xbf\xbd\xef\xbf\xbd" "end";

static TRACES_UNUSED void make_multi(rec *r) {
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

/* A session with a command line (a non-ASCII word in it), named and unnamed threads
 * (tids 7001-7003), a module with a build id and one without, an exact and an inexact
 * timing anchor (besides the wall clock's, which the session writer adds). */
static const char names_cmdline[] = "/opt/tools/traced_app --mode fast in\xc3\xa9.txt";
static const char names_build_id[] = "0123456789abcdef0123456789abcdef01234567";

static TRACES_UNUSED void make_named(rec *r) {
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

/* ---- a lossy thread: nothing is paired across events the recorder lost ---- */
/* One thread on a 64-slot ring with ATF_OVERFLOW_DROP, drained by hand: the ring fills
 * while main, a, b and c are open; the returns of c and b are dropped (gap 1); after the
 * drain a returns (its call is before the gap), c is called and returns, main returns;
 * then e and f are open when the ring fills again and their returns are dropped (gap 2,
 * at the end). test_walk.c derives the expected figures and exports from the same script
 * with a reference model of its own. */
enum { OP_CALL, OP_RET, OP_PUMP };
enum { F_C = 10, GAP_RING = 64, GAP_TID = 6001, GAP_OPS_MAX = 256 };

typedef struct gap_op {
    int op;
    uint64_t fid, ts;
    int dropped;                 /* the push must find the ring full */
} gap_op;

/* The script into ops (room for cap); returns its length. */
static TRACES_UNUSED size_t gap_script(gap_op *ops, size_t cap) {
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

/* Records the script into a session; returns the number of events kept. */
static TRACES_UNUSED uint64_t make_gap_session(rec *r, const gap_op *ops, size_t n) {
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

/* ==== the profile, collected in-process ============================================== */
static TRACES_UNUSED const profile_fn *fn_of(const profile_fns *st, uint64_t fid) {
    return profile_fns_find(st, fid);
}

/* Function fid's figures in st: calls, total, self, min and max (ns). */
#define CHECK_FN(st, fid, calls_, total_, self_, min_, max_) do { \
    const profile_fn *fn_ = fn_of((st), (fid)); \
    CHECK(fn_ != NULL); \
    if (fn_) { \
        CHECK_EQ((calls_), fn_->calls); CHECK_EQ((total_), fn_->total_ns); \
        CHECK_EQ((self_), fn_->self_ns); CHECK_EQ((min_), fn_->min_ns); \
        CHECK_EQ((max_), fn_->max_ns); \
    } } while (0)

/* Collects the stats of path into st/w (the source stays open in src): 1, else 0 after
 * a failure. collect_free releases all three. */
static TRACES_UNUSED int collect(const char *path, cli_trace *src, profile_fns *st,
                                 walk_ctx *w) {
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

static TRACES_UNUSED void collect_free(cli_trace *src, profile_fns *st, walk_ctx *w) {
    profile_fns_free(st);
    walk_deinit(w);
    cli_trace_close(src);
}

/* ==== what the commands print ======================================================== */
/* How often needle occurs in hay. */
static TRACES_UNUSED size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (; (hay = strstr(hay, needle)) != NULL; hay++) n++;
    return n;
}

/* A Chrome event's "ts" literal in microseconds ("1234.567") back to nanoseconds. */
static TRACES_UNUSED uint64_t j_ts_ns(const jdoc *d, long obj) {
    const char *s = j_str(d, obj, "ts"), *dot = strchr(s, '.');
    uint64_t ns = strtoull(s, NULL, 10) * 1000;
    if (dot) ns += strtoull(dot + 1, NULL, 10);
    CHECK(dot && strlen(dot + 1) == 3);
    return ns;
}

/* ==== main =========================================================================== */
/* Runs the harness with its sessions under a scratch directory, removed afterwards (kept
 * when ATF_TEST_KEEP is set, for a look at the files). */
static TRACES_UNUSED int cli_traces_run(const char *suite, const test_case *tests,
                                        size_t count, int argc, char **argv) {
    int rc;
    if (scratch_dir_make(g_root, sizeof g_root, suite) != 0) {
        printf("%s: 0 passed, 1 failed\n", suite);
        return 1;
    }
    rc = harness_run(suite, tests, count, argc, argv);
    if (getenv("ATF_TEST_KEEP")) printf("kept %s\n", g_root);
    else remove_tree(g_root);
    return rc;
}

#define CLI_TRACES_MAIN(suite, table) \
    int main(int argc, char **argv) { \
        return cli_traces_run(suite, table, sizeof(table) / sizeof(table[0]), argc, argv); \
    }

#endif /* ATF_TESTS_CLI_TRACES_H */
