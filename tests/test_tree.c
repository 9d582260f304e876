/* test_tree.c - `atf tree` (tools/tree_cmd.c), run in-process on sessions recorded here
 * (cli_traces.h): the call tree of a known nested trace line for line, --max-depth and
 * --thread; unbalanced frames (returns from nowhere, frames unwound or cut short) marked,
 * names made printable, and a thread directory as PATH. */
#include "atf.h"
#include "cli_traces.h"

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

static const test_case tests[] = {
    {"tree_nested", test_tree_nested},
    {"tree_unbalanced_and_threads", test_tree_unbalanced_and_threads},
};

CLI_TRACES_MAIN("tree", tests)
