/* test_diff.c - `atf diff` (tools/diff_cmd.c, over the figures of tools/profile.c), run
 * in-process on sessions recorded here (cli_traces.h): a known trace against a changed
 * one, its functions and its paths in order, figure for figure (calls, total and self
 * time in A and B, the deltas, the ratio), the text and --top, a trace against itself,
 * --function, --thread-frame, and the arguments it refuses. */
#include "atf.h"
#include "cli_traces.h"

/* The nested trace changed: main { a { b } a a { b } g }, no recurse. */
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

/* Element k of the array `array` of a diff --json output, or -1. */
static long diff_item(const jdoc *d, const char *array, size_t k) {
    return j_at(d, j_get(d, 0, array), k);
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

static const test_case tests[] = {
    {"diff_nested", test_diff_nested},
};

CLI_TRACES_MAIN("diff", tests)
