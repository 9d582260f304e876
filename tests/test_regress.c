/* test_regress.c - inputs that once broke a reader (most found by fuzz/), each opened
 * through the public API with the result it must give now. The same inputs sit in
 * fuzz/corpus/<target>/crash-*, where make fuzz-replay runs them under the sanitizers. */
#include "atf.h"
#include "harness.h"
#include "fixtures.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "posix_compat.h"
#include "scratch_dir.h"

static char tmp_dir[512];

/* tmp_dir/pid_1 with a valid thread_0 (and no manifest); returns its path. */
static const char *session_dir(void) {
    static char pid[600];
    char dir[700], path[800];
    fx_buf ix = { NULL, 0, 0 }, dt = { NULL, 0, 0 };
    snprintf(pid, sizeof pid, "%s/pid_1", tmp_dir);
    snprintf(dir, sizeof dir, "%s/thread_0", pid);
    mkdir(pid, 0755);
    mkdir(dir, 0755);
    fx_entry_build(fx_catalog_find("thread_l1_detail"), &ix, &dt);
    snprintf(path, sizeof path, "%s/index.atf", dir);
    CHECK(write_file(path, ix.data, ix.len) == 0);
    snprintf(path, sizeof path, "%s/detail.atf", dir);
    CHECK(write_file(path, dt.data, dt.len) == 0);
    fx_buf_free(&ix);
    fx_buf_free(&dt);
    return pid;
}

/* The manifest state the session reader reports for manifest text `text` (len bytes). */
static atf_manifest_state manifest_state(const char *pid, const char *text, size_t len) {
    char path[700];
    atf_session_reader r;
    atf_manifest_state s;
    atf_result rc;
    snprintf(path, sizeof path, "%s/manifest.json", pid);
    CHECK(write_file(path, text, len) == 0);
    rc = atf_session_reader_open(&r, pid, NULL);
    CHECK_RESULT(ATF_OK, rc);
    if (rc != ATF_OK) return ATF_MANIFEST_MISSING;
    s = r.manifest;
    atf_session_reader_close(&r);
    return s;
}

#define MANIFEST(text) text, sizeof(text) - 1

/* manifest.json numbers follow RFC 8259 exactly: the parser once took any run of
 * "0123456789.eE+-" (and a NUL byte, which strchr finds) after a digit as a number. */
static void json_number_grammar(void) {
    static const struct { const char *text; size_t len; } bad[] = {
        { MANIFEST("{\"threads\":[{\"id\":0}],\"n\":1\0\0}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"time_end_ns\":12+0}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":1.2.3}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":01}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":1.}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":2e}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":1e+}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":-}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":1-2}") },
        { MANIFEST("{\"threads\":[{\"id\":0}],\"v\":.5}") },
    };
    static const char *const good[] = {
        "{\"threads\":[{\"id\":0}],\"v\":0}",
        "{\"threads\":[{\"id\":0}],\"v\":-0}",
        "{\"threads\":[{\"id\":0}],\"v\":1.5e+3}",
        "{\"threads\":[{\"id\":0}],\"v\":0.0E-0}",
        "{\"threads\":[{\"id\":0}],\"v\":-12.25e7}",
        "{\"threads\":[{\"id\":0}],\"v\":[1,-1,0.5,1e9]}",
    };
    const char *pid = session_dir();
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        atf_manifest_state s = manifest_state(pid, bad[i].text, bad[i].len);
        if (s != ATF_MANIFEST_UNREADABLE) printf("  accepted: %s\n", bad[i].text);
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, s);
    }
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        atf_manifest_state s = manifest_state(pid, good[i], strlen(good[i]));
        if (s != ATF_MANIFEST_OK) printf("  refused: %s\n", good[i]);
        CHECK_EQ(ATF_MANIFEST_OK, s);
    }
}

/* A backslash followed by a NUL byte is no escape (strchr("\"\\/bfnrt", 0) is not NULL). */
static void json_escape_nul(void) {
    const char *pid = session_dir();
    CHECK_EQ(ATF_MANIFEST_UNREADABLE,
             manifest_state(pid, MANIFEST("{\"threads\":[{\"id\":0}],\"s\":\"\\\0\"}")));
    CHECK_EQ(ATF_MANIFEST_OK, manifest_state(pid, MANIFEST("{\"threads\":[{\"id\":0}],\"s\":\"\\\\\"}")));
}

/* A pid directory path longer than atf_session_reader.path is refused; it was cut to fit
 * and the cut path (another directory) read for the manifest and the threads. */
static void session_path_too_long(void) {
    char dir[1400];
    atf_session_reader r;
    size_t n;
    n = (size_t)snprintf(dir, sizeof dir, "%s/", tmp_dir);
    memset(dir + n, 'd', sizeof dir - n - 1);
    dir[sizeof dir - 1] = '\0';
    CHECK_RESULT(ATF_E_ARG, atf_session_reader_open(&r, dir, NULL));
    CHECK_RESULT(ATF_E_ARG, r.error.code);
    CHECK(r.threads == NULL);
}

/* Seconds to open pid with a manifest listing n threads (ids n..1, none present but
 * thread_0), best of three. */
static double open_seconds(const char *pid, uint32_t n) {
    char path[700];
    FILE *f;
    uint32_t i;
    int k;
    double best = 1e9;
    snprintf(path, sizeof path, "%s/manifest.json", pid);
    f = fopen(path, "wb");
    if (!f) return -1;
    fputs("{\"threads\":[{\"id\":0}", f);
    for (i = n; i > 0; i--) fprintf(f, ",{\"id\":%u}", (unsigned)i);
    fputs("]}", f);
    if (fclose(f) != 0) return -1;
    for (k = 0; k < 3; k++) {
        atf_session_reader r;
        struct timespec a, b;
        double t;
        clock_gettime(CLOCK_MONOTONIC, &a);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, pid, NULL));
        clock_gettime(CLOCK_MONOTONIC, &b);
        CHECK_EQ(n + 1u, r.thread_count);
        atf_session_reader_close(&r);
        t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (t < best) best = t;
    }
    return best;
}

/* A manifest listing 20000 threads (all but one missing) opens with every entry kept.
 * Opening used to walk the list for every entry (O(n^2)); the join is now a sort. */
static void manifest_many_threads(void) {
    CHECK(open_seconds(session_dir(), 20000) >= 0);
}

static const test_case tests[] = {
    { "json_number_grammar", json_number_grammar },
    { "json_escape_nul", json_escape_nul },
    { "session_path_too_long", session_path_too_long },
    { "manifest_many_threads", manifest_many_threads },
};

int main(int argc, char **argv) {
    int rc;
    if (scratch_dir_make(tmp_dir, sizeof tmp_dir, "regress") != 0) return 1;
    rc = harness_run("regress", tests, sizeof tests / sizeof tests[0], argc, argv);
    remove_tree(tmp_dir);
    return rc;
}
