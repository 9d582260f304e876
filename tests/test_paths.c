/* test_paths.c - the platform layer end to end: a session recorded under a root whose
 * name is not ASCII, given with the platform's own separator, read back through the
 * session reader, the thread reader (mapped and read whole) and the merge; the drain as a
 * thread and by hand; a reader opening files the writer still holds; the clock and its
 * clock_type. On Windows this is CreateFileW / MapViewOfFile / FindFirstFileW / QPC /
 * CreateThread with UTF-8 names turned into UTF-16. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "scratch_dir.h"

#include <stdlib.h>
#if defined(_WIN32)
#  define SEP "\\"
#else
#  include <sys/stat.h>
#  include <unistd.h>
#  define SEP "/"
#endif

/* "träce_日本" and "séance" in UTF-8 (split so that no hex escape swallows a letter) */
#define ROOT_LEAF "tr\xC3\xA4" "ce_\xE6\x97\xA5\xE6\x9C\xAC"
#define SESSION_NAME "s\xC3\xA9" "ance"
#define SYMBOL_NAME "f\xC3\xBC" "nf \"quoted\" \\ done"

#if defined(ATF__OS_WINDOWS)
#  define EXPECTED_CLOCK ATF_CLOCK_QPC
#elif defined(ATF__OS_APPLE)
#  define EXPECTED_CLOCK ATF_CLOCK_MACH_CONTINUOUS
#elif defined(ATF__OS_LINUX)
#  define EXPECTED_CLOCK ATF_CLOCK_BOOTTIME
#else
#  define EXPECTED_CLOCK atf_clock_type()
#endif

/* Whether a file or directory exists, asked with the OS's native name encoding. */
static int native_path_exists(const char *path) {
#if defined(_WIN32)
    wchar_t *w = atf__utf8_to_wide(path);
    DWORD attr = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    ATF_FREE(w);
    return attr != INVALID_FILE_ATTRIBUTES;
#else
    struct stat st;
    return stat(path, &st) == 0;
#endif
}

static void path_remove(const char *path, int is_dir) {
#if defined(_WIN32)
    wchar_t *w = atf__utf8_to_wide(path);
    if (w) {
        if (is_dir) RemoveDirectoryW(w);
        else DeleteFileW(w);
    }
    ATF_FREE(w);
#else
    if (is_dir) rmdir(path);
    else unlink(path);
#endif
}

static void sleep_ms(unsigned ms) {
#if defined(_WIN32)
    Sleep(ms);
#else
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {}
#endif
}

/* <scratch base><SEP>paths_<pid>_träce_日本 */
static void paths_root(char *buf, size_t cap) {
    snprintf(buf, cap, "%s" SEP "paths_%u_" ROOT_LEAF, scratch_base(), atf__os_pid());
}

static void remove_session(const char *root, const char *pid_dir) {
    char path[1400];
    snprintf(path, sizeof path, "%s" SEP "thread_0" SEP "index.atf", pid_dir);
    path_remove(path, 0);
    snprintf(path, sizeof path, "%s" SEP "thread_0" SEP "detail.atf", pid_dir);
    path_remove(path, 0);
    snprintf(path, sizeof path, "%s" SEP "thread_0", pid_dir);
    path_remove(path, 1);
    snprintf(path, sizeof path, "%s" SEP "manifest.json", pid_dir);
    path_remove(path, 0);
    path_remove(pid_dir, 1);
    snprintf(path, sizeof path, "%s" SEP SESSION_NAME, root);
    path_remove(path, 1);
    path_remove(root, 1);
}

enum { HALF = 1500 };

/* Records 2 * HALF calls and returns on this thread (every 8th call with a detail payload
 * when detail is on), pumping half way in manual mode and opening the files the writer
 * still holds; then closes and reads everything back through separator-native paths. */
static void record_and_read(uint32_t drain_mode, uint32_t detail_mode, int no_mmap) {
    atf_session_config cfg;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    atf_reader_options opt;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    char root[512], pid_dir[1100], path[1400];
    uint64_t i, n = 0, prev = 0, details = 0;
    int sorted = 1;

    paths_root(root, sizeof root);
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = drain_mode;
    cfg.detail_mode = detail_mode;
    cfg.session_name = SESSION_NAME;
    cfg.index_ring_events = 4 * HALF; /* nothing is dropped: the counts below are exact */
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = no_mmap;
    opt.verify_crc = 1;

    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &cfg));
    if (!s) return;
    snprintf(pid_dir, sizeof pid_dir, "%s" SEP SESSION_NAME SEP "pid_%u", root, atf__os_pid());
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 2, SYMBOL_NAME));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "main \xE2\x9C\x93", &w));
    if (!w) {
        atf_session_close(s);
        return;
    }
    for (i = 0; i < 2 * HALF; i++) {
        if (detail_mode != ATF_DETAIL_OFF && i % 8 == 0) {
            uint8_t payload[16];
            memset(payload, (int)(i & 0xFF), sizeof payload);
            CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, 2, atf_now_ns(),
                                                         ATF_DETAIL_FUNCTION_CALL, payload,
                                                         sizeof payload));
            details++;
        } else {
            CHECK_RESULT(ATF_OK, atf_producer_call(w, 2, atf_now_ns()));
        }
        CHECK_RESULT(ATF_OK, atf_producer_return(w, 2, atf_now_ns()));
        if (i + 1 == HALF && drain_mode == ATF_DRAIN_MANUAL) {
            atf_thread_reader live;
            CHECK_RESULT(ATF_OK, atf_session_pump(s));
            /* the writer still holds the files open: a reader sees what is on disk */
            snprintf(path, sizeof path, "%s" SEP "thread_0", pid_dir);
            CHECK_RESULT(ATF_OK, atf_thread_reader_open(&live, path, &opt));
            if (live.error.code == ATF_OK) {
                CHECK_EQ(2 * HALF, live.index.event_count);
                CHECK_EQ(ATF_COUNT_FROM_SIZE, live.index.counted);
                atf_thread_reader_close(&live);
            }
        }
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));

    snprintf(path, sizeof path, "%s" SEP "manifest.json", pid_dir);
    CHECK(native_path_exists(path));
    snprintf(path, sizeof path, "%s" SEP "thread_0" SEP "index.atf", pid_dir);
    CHECK(native_path_exists(path));

    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, pid_dir, &opt));
    if (r.error.code != ATF_OK) {
        char line[1024];
        printf("  %s\n", atf_error_format(&r.error, line, sizeof line));
        remove_session(root, pid_dir);
        return;
    }
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(atf_clock_type(), r.clock_type);
    CHECK_EQ(EXPECTED_CLOCK, r.clock_type);
    CHECK_EQ(1, r.thread_count);
    CHECK(strcmp(r.threads[0].name, "main \xE2\x9C\x93") == 0);
    CHECK(atf_session_reader_symbol(&r, 2) != NULL &&
          strcmp(atf_session_reader_symbol(&r, 2), SYMBOL_NAME) == 0);
    CHECK_EQ(4 * HALF, r.threads[0].reader.index.event_count);
    CHECK_EQ(ATF_COUNT_FINALIZED, r.threads[0].reader.index.counted);
    CHECK_EQ(ATF_CRC_OK, r.threads[0].reader.index.crc_state);
    CHECK_EQ(EXPECTED_CLOCK, r.threads[0].reader.index.header.clock_type);
    CHECK_EQ(atf__os_thread_id(), r.threads[0].reader.index.header.thread_id);
    CHECK_EQ(detail_mode != ATF_DETAIL_OFF, r.threads[0].reader.has_detail);
    if (r.threads[0].reader.has_detail) {
        CHECK_EQ(details, r.threads[0].reader.detail.event_count);
        CHECK_EQ(ATF_CRC_OK, r.threads[0].reader.detail.crc_state);
        CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&r.threads[0].reader));
    }
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        if (it.event.timestamp_ns < prev) sorted = 0;
        prev = it.event.timestamp_ns;
        if (it.event.kind != (n % 2 == 0 ? (uint32_t)ATF_EVENT_CALL : (uint32_t)ATF_EVENT_RETURN) ||
            it.event.function_id != 2 || it.event.call_depth != 0)
            sorted = 0;
        n++;
    }
    CHECK_EQ(4 * HALF, n);
    CHECK(sorted);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    remove_session(root, pid_dir);
    CHECK(!native_path_exists(root));
}

static void test_manual_drain_non_ascii_root(void) {
    record_and_read(ATF_DRAIN_MANUAL, ATF_DETAIL_OFF, 0);
}

static void test_manual_drain_detail_read_whole(void) {
    record_and_read(ATF_DRAIN_MANUAL, ATF_DETAIL_ALWAYS, 1);
}

static void test_drain_thread_non_ascii_root(void) {
#if defined(ATF_NO_THREADS)
    atf_session_config cfg;
    atf_session *s = (atf_session *)&cfg;
    char root[512];
    paths_root(root, sizeof root);
    memset(&cfg, 0, sizeof cfg);
    cfg.session_name = SESSION_NAME;
    /* no drain thread in this build: asking for one is refused, nothing is left behind */
    CHECK_RESULT(ATF_E_UNSUPPORTED, atf_session_open(&s, root, &cfg));
    CHECK(s == NULL);
    CHECK(!native_path_exists(root));
    printf("  ATF_NO_THREADS: drain thread refused as documented\n");
#else
    record_and_read(ATF_DRAIN_THREAD, ATF_DETAIL_ALWAYS, 0);
#endif
}

/* A directory that does not exist is reported as such, whatever the separators. */
static void test_missing_directory(void) {
    atf_session_reader r;
    atf_thread_reader t;
    char root[512], path[700];
    paths_root(root, sizeof root);
    snprintf(path, sizeof path, "%s" SEP "nowhere" SEP "pid_1", root);
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, path, NULL));
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_thread_reader_open(&t, path, NULL));
}

static void test_clock(void) {
    uint64_t prev = atf_now_ns(), t0, t1, wall = atf_wall_ns();
    int i, monotonic = 1;
    CHECK_EQ(EXPECTED_CLOCK, atf_clock_type());
    for (i = 0; i < 100000; i++) {
        uint64_t now = atf_now_ns();
        if (now < prev) monotonic = 0;
        prev = now;
    }
    CHECK(monotonic);
    t0 = atf_now_ns();
    sleep_ms(5);
    t1 = atf_now_ns();
    CHECK(t1 - t0 >= 4000000u);        /* slept 5 ms, allow the clock's granularity */
    CHECK(t1 - t0 < 5000000000ull);    /* and not an absurd unit error */
    CHECK(wall > 1600000000ull * 1000000000ull); /* after September 2020 */
    printf("  clock: %s, resolution probe %llu ns over a 5 ms sleep\n",
           atf_clock_str(atf_clock_type()), (unsigned long long)(t1 - t0));
}

static const test_case tests[] = {
    {"clock", test_clock},
    {"manual_drain_non_ascii_root", test_manual_drain_non_ascii_root},
    {"manual_drain_detail_read_whole", test_manual_drain_detail_read_whole},
    {"drain_thread_non_ascii_root", test_drain_thread_non_ascii_root},
    {"missing_directory", test_missing_directory},
};

HARNESS_MAIN("paths", tests)
