/* harness.h - the tiny test harness shared by every tests/test_*.c program.
 *
 * A harness is a table of test functions; each check that fails prints file:line with the
 * expected and found values, and marks the running test failed. main() ends with
 *   "<suite>: N passed, M failed"
 * and exits non-zero when any test failed. Include after atf.h. */
#ifndef ATF_TEST_HARNESS_H
#define ATF_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

static int harness__failures_in_test;

static void harness__fail(const char *file, int line, const char *what) {
    printf("  %s:%d: %s\n", file, line, what);
    harness__failures_in_test++;
}

static void harness__fail_u64(const char *file, int line, const char *expr, uint64_t expected,
                              uint64_t found) {
    printf("  %s:%d: %s: expected %" PRIu64 " (0x%" PRIx64 "), found %" PRIu64 " (0x%" PRIx64
           ")\n", file, line, expr, expected, expected, found, found);
    harness__failures_in_test++;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused)) /* a harness of no result codes (test_demangle.c) */
#endif
static void harness__fail_result(const char *file, int line, const char *expr, atf_result expected,
                                 atf_result found) {
    printf("  %s:%d: %s: expected %s, found %s\n", file, line, expr, atf_result_name(expected),
           atf_result_name(found));
    harness__failures_in_test++;
}

#define CHECK(cond) \
    do { if (!(cond)) harness__fail(__FILE__, __LINE__, "CHECK(" #cond ") failed"); } while (0)

#define CHECK_EQ(expected, found) \
    do { uint64_t e_ = (uint64_t)(expected), f_ = (uint64_t)(found); \
         if (e_ != f_) harness__fail_u64(__FILE__, __LINE__, #found, e_, f_); } while (0)

#define CHECK_RESULT(expected, found) \
    do { atf_result e_ = (expected), f_ = (found); \
         if (e_ != f_) harness__fail_result(__FILE__, __LINE__, #found, e_, f_); } while (0)

#define CHECK_MEM(expected, found, len) \
    do { if (memcmp((expected), (found), (len)) != 0) \
             harness__fail(__FILE__, __LINE__, "bytes differ: " #expected " vs " #found); } while (0)

/* Every field of a decoded index event / detail record header, a against b. */
#define CHECK_INDEX_EVENT(a, b) do { \
    CHECK_EQ((a).timestamp_ns, (b).timestamp_ns); CHECK_EQ((a).function_id, (b).function_id); \
    CHECK_EQ((a).detail_seq, (b).detail_seq); CHECK_EQ((a).thread_id, (b).thread_id); \
    CHECK_EQ((a).call_depth, (b).call_depth); CHECK_EQ((a).kind, (b).kind); \
} while (0)

#define CHECK_RECORD_HEADER(a, b) do { \
    CHECK_EQ((a).total_length, (b).total_length); CHECK_EQ((a).type, (b).type); \
    CHECK_EQ((a).flags, (b).flags); CHECK_EQ((a).index_seq, (b).index_seq); \
    CHECK_EQ((a).thread_id, (b).thread_id); CHECK_EQ((a).timestamp_ns, (b).timestamp_ns); \
} while (0)

/* Runs every test (or only those whose name contains argv[1]) and prints the summary. */
static int harness_run(const char *suite, const test_case *tests, size_t count, int argc,
                       char **argv) {
    size_t i, passed = 0, failed = 0;
    const char *filter = argc > 1 ? argv[1] : NULL;
    for (i = 0; i < count; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        harness__failures_in_test = 0;
        tests[i].fn();
        if (harness__failures_in_test == 0) {
            passed++;
        } else {
            printf("FAIL %s.%s\n", suite, tests[i].name);
            failed++;
        }
        fflush(stdout);
    }
    printf("%s: %zu passed, %zu failed\n", suite, passed, failed);
    return failed ? 1 : 0;
}

#define HARNESS_MAIN(suite, table) \
    int main(int argc, char **argv) { \
        return harness_run(suite, table, sizeof(table) / sizeof(table[0]), argc, argv); \
    }

#endif
