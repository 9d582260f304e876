/* test_info.c - `atf info` (tools/info_cmd.c), run in-process on sessions recorded here
 * (cli_traces.h): what it says of a session's command line, modules (with and without a
 * build id), timing anchors (exact and not) and threads, as text and --json; a session
 * without any of them; --json for session directories only. */
#include "atf.h"
#include "cli_traces.h"

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

static const test_case tests[] = {
    {"info_names", test_info_names},
};

CLI_TRACES_MAIN("info", tests)
