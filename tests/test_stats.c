/* test_stats.c - `atf stats` (tools/stats_cmd.c, over the pairing of tools/walk.c and the
 * figures of tools/profile.c), run in-process on sessions recorded here (cli_traces.h):
 * exact figures for known nested, recursive and unbalanced traces in both layouts, calls
 * deeper than the walk tracks, a file whose order is not time order, a relative window,
 * the recorder's pauses left out of every function's time (and what tree and the Chrome
 * export make of them), and --json with its orders and limits. */
#include "atf.h"
#include "cli_traces.h"

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

static const test_case tests[] = {
    {"stats_nested", test_stats_nested},
    {"stats_layout2", test_stats_layout2},
    {"stats_unbalanced", test_stats_unbalanced},
    {"stats_depth_limit", test_stats_depth_limit},
    {"stats_out_of_order_file", test_stats_out_of_order_file},
    {"window_from_smallest_time", test_window_from_smallest_time},
    {"stats_pauses_left_out", test_stats_pauses_left_out},
    {"stats_json", test_stats_json},
};

CLI_TRACES_MAIN("stats", tests)
