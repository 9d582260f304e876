// cpp_smoke.cpp - the header from C++: records a session through the public API (drain
// thread and manual drain), reads it back with the session reader and the merge, and checks
// the counts, order and names. Built by `make configs` as C++11 and C++17, g++ and clang++.
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string scratch_root(const char *what) {
    const char *tmp = std::getenv("ATF_TEST_TMP");
    if (!tmp || !*tmp) tmp = std::getenv("BUILD");
    return std::string(tmp && *tmp ? tmp : "build") + "/cpp_" + what + "_" +
           std::to_string(atf__os_pid());
}

void remove_dir(const std::string &d) {
#if defined(_WIN32)
    RemoveDirectoryA(d.c_str());
#else
    rmdir(d.c_str());
#endif
}

void record_and_read(uint32_t drain_mode, const char *what) {
    atf_session_config cfg = atf_session_config();
    cfg.drain_mode = drain_mode;
    cfg.session_name = "s";
    atf_session *s = nullptr;
    std::string root = scratch_root(what);
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root.c_str(), &cfg));
    if (!s) return;
    std::string dir = atf_session_path(s);
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 7, "cpp::work"));
    atf_producer *w = atf_session_producer(s);
    CHECK(w != nullptr);
    const uint64_t calls = 1000;
    for (uint64_t i = 0; w && i < calls; i++) {
        CHECK_RESULT(ATF_OK, atf_producer_call(w, 7, atf_now_ns()));
        CHECK_RESULT(ATF_OK, atf_producer_return(w, 7, atf_now_ns()));
        if (i == calls / 2 && drain_mode == ATF_DRAIN_MANUAL) CHECK_RESULT(ATF_OK, atf_session_pump(s));
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));

    atf_session_reader r;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir.c_str(), nullptr));
    if (r.error.code != ATF_OK) return;
    CHECK_EQ(1, r.thread_count);
    CHECK_EQ(atf_clock_type(), r.clock_type);
    const char *name = atf_session_reader_symbol(&r, 7);
    CHECK(name != nullptr && std::string(name) == "cpp::work");
    atf_merge m;
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, nullptr));
    std::vector<uint64_t> times;
    atf_merge_item it;
    while (atf_merge_next(&m, &it) == ATF_OK) times.push_back(it.event.timestamp_ns);
    CHECK_EQ(2 * calls, times.size());
    for (size_t i = 1; i < times.size(); i++)
        if (times[i] < times[i - 1]) {
            CHECK(times[i] >= times[i - 1]);
            break;
        }
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);

    const char *leaves[] = {"/thread_0/index.atf", "/manifest.json"};
    for (const char *leaf : leaves) std::remove((dir + leaf).c_str());
    const std::string dirs[] = {dir + "/thread_0", dir, root + "/s", root};
    for (const std::string &d : dirs) remove_dir(d);
}

void test_manual_drain() { record_and_read(ATF_DRAIN_MANUAL, "manual"); }

void test_drain_thread() {
#if defined(ATF_NO_THREADS)
    std::printf("  ATF_NO_THREADS: no drain thread to test\n");
#else
    record_and_read(ATF_DRAIN_THREAD, "thread");
#endif
}

void test_crc_and_format() {
    CHECK_EQ(0xE3069283u, atf_crc32c("123456789", 9));
    atf_index_event e = atf_index_event();
    e.timestamp_ns = 0x0102030405060708ull;
    e.function_id = 42;
    e.kind = ATF_EVENT_CALL;
    e.detail_seq = ATF_NO_DETAIL;
    uint8_t bytes[32];
    atf_index_event_encode(ATF_LAYOUT_1, &e, bytes);
    CHECK_EQ(0x08, bytes[0]);
    atf_index_event back;
    atf_index_event_decode(ATF_LAYOUT_1, bytes, &back);
    CHECK_EQ(e.timestamp_ns, back.timestamp_ns);
    CHECK_EQ(ATF_NO_DETAIL, back.detail_seq);
}

const test_case tests[] = {
    {"crc_and_format", test_crc_and_format},
    {"manual_drain", test_manual_drain},
    {"drain_thread", test_drain_thread},
};

} // namespace

HARNESS_MAIN("cpp_smoke", tests)
