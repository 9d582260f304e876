/* fuzz_manifest.c - session reader: any bytes as manifest.json.
 *
 * The input becomes pid_1/manifest.json in a scratch directory whose pid_1/thread_0 is a
 * valid thread (index.atf + detail.atf, built once from tests/fixtures.h). The session is
 * opened (the manifest read into an exact-size heap buffer), every symbol is looked up,
 * every thread found by slot, and the whole session merged; the merge must yield each
 * event of each present thread once, in time order. See fuzz_common.h for the replay. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"
#include "tests/fixtures.h"

static char pid_dir[1024];

static void write_fixture_thread(const char *dir, const char *name) {
    fx_buf index = { NULL, 0, 0 }, detail = { NULL, 0, 0 };
    char path[1200];
    fx_entry_build(fx_catalog_find(name), &index, &detail);
    fuzz_mkdir(dir);
    snprintf(path, sizeof path, "%s/index.atf", dir);
    fuzz_write_file(path, index.data, index.len);
    if (detail.len) {
        snprintf(path, sizeof path, "%s/detail.atf", dir);
        fuzz_write_file(path, detail.data, detail.len);
    }
    fx_buf_free(&index);
    fx_buf_free(&detail);
}

static void setup(void) {
    char dir[1100];
    if (pid_dir[0]) return;
    snprintf(pid_dir, sizeof pid_dir, "%s/pid_1", fuzz_scratch_dir());
    fuzz_mkdir(pid_dir);
    snprintf(dir, sizeof dir, "%s/thread_0", pid_dir);
    write_fixture_thread(dir, "thread_l1_detail");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[1100];
    atf_session_reader r;
    atf_reader_options opt;
    atf_merge m;
    atf_merge_item item;
    atf_result rc;
    uint64_t expected = 0, seen = 0, last_ts = 0;
    size_t i;
    setup();
    snprintf(path, sizeof path, "%s/manifest.json", pid_dir);
    fuzz_write_file(path, data, size);
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = 1;
    rc = atf_session_reader_open(&r, pid_dir, &opt);
    FUZZ_CHECK(rc == ATF_OK); /* thread_0 is always there and valid */
    FUZZ_CHECK(r.manifest <= ATF_MANIFEST_INCOMPLETE);
    (void)atf_manifest_state_str(r.manifest);
    FUZZ_CHECK(r.thread_count >= 1);
    for (i = 0; i < r.thread_count; i++) {
        atf_session_thread *t = &r.threads[i];
        if (i) FUZZ_CHECK(r.threads[i - 1].slot < t->slot);
        FUZZ_CHECK(atf_session_reader_thread(&r, t->slot) == t);
        FUZZ_CHECK(memchr(t->name, '\0', sizeof t->name) != NULL);
        if (t->slot == 0) FUZZ_CHECK(!t->missing && t->reader.index.event_count == 24);
        else FUZZ_CHECK(t->missing);
        if (!t->missing) expected += t->reader.index.event_count;
    }
    for (i = 0; i < r.symbol_count; i++) {
        const char *name = atf_session_reader_symbol(&r, r.symbols[i].function_id);
        FUZZ_CHECK(name != NULL);
        if (i) FUZZ_CHECK(r.symbols[i - 1].function_id <= r.symbols[i].function_id);
        FUZZ_CHECK(strlen(r.symbols[i].name) < 512);
    }
    (void)atf_session_reader_symbol(&r, 0);
    (void)atf_session_reader_symbol(&r, UINT64_MAX);
    (void)atf_session_reader_symbol(&r, fx_function_id(3));
    FUZZ_CHECK(atf_merge_init(&m, &r, NULL) == ATF_OK);
    while (atf_merge_next(&m, &item) == ATF_OK) {
        FUZZ_CHECK(item.event.timestamp_ns >= last_ts);
        FUZZ_CHECK(item.thread && !item.thread->missing && item.slot == item.thread->slot);
        last_ts = item.event.timestamp_ns;
        seen++;
    }
    FUZZ_CHECK(seen == expected);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    return 0;
}
