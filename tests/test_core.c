/* test_core.c - tools/core.c as the commands use it, run in-process on sessions recorded
 * here (cli_traces.h): the kinds of PATH (a pid_* directory, a thread_N directory, its
 * index.atf, a thread directory outside any session, a session missing a thread its
 * manifest lists), and the command line of stats, tree and export: --help, usage errors
 * (exit 2), files that cannot be read or written (exit 1, the file named), "--". */
#include "atf.h"
#include "cli_traces.h"

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

static const test_case tests[] = {
    {"path_kinds", test_path_kinds},
    {"command_line", test_command_line},
};

CLI_TRACES_MAIN("core", tests)
