/* test_golden.c - the committed files of tests/golden/ (made on x86-64 Linux by
 * tests/golden_gen.c) against this host: its encoders produce them byte for byte, its
 * readers read every value back, and its session writer (rings, drain, file writer)
 * records the same inputs into identical files, the header bytes that name the host aside.
 * On a big-endian host this is the proof that the disk format stays little-endian. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "golden.h"
#include "scratch_dir.h"

#include <stdlib.h>
#if defined(_WIN32)
#  include <direct.h>
#  define GOLDEN_RMDIR(path) _rmdir(path)
#else
#  include <unistd.h>
#  define GOLDEN_RMDIR(path) rmdir(path)
#endif

#define GOLDEN_DIR "tests/golden"

/* Reads a whole (small) file; returns its size, or 0 when it cannot. */
static size_t read_small_file(const char *path, uint8_t *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return 0;
    n = fread(buf, 1, cap, f);
    if (n == cap && fgetc(f) != EOF) n = 0; /* larger than expected */
    fclose(f);
    return n;
}

static void check_same_bytes(const char *what, const uint8_t *want, size_t want_n,
                             const uint8_t *got, size_t got_n) {
    size_t i;
    CHECK_EQ(want_n, got_n);
    for (i = 0; i < want_n && i < got_n; i++) {
        if (want[i] != got[i]) {
            printf("  %s: first difference at byte %zu\n", what, i);
            CHECK_EQ(want[i], got[i]);
            return;
        }
    }
}

static void test_host_note(void) {
    const uint16_t probe = 0x0102;
    uint8_t first;
    memcpy(&first, &probe, 1);
    printf("  host: %s-endian, arch %s, os %s, clock %s\n", first == 0x01 ? "big" : "little",
           atf_arch_str(ATF__ARCH_CODE), atf_os_str(ATF__OS_CODE), atf_clock_str(atf_clock_type()));
    CHECK(GOLDEN_EVENT_COUNT == 10);
}

/* The encoders rebuild every committed file exactly. */
static void test_encoders_reproduce_golden(void) {
    int layout, which;
    for (layout = ATF_LAYOUT_1; layout <= ATF_LAYOUT_2; layout++) {
        for (which = 0; which < 2; which++) {
            uint8_t want[GOLDEN_MAX_FILE], got[GOLDEN_MAX_FILE];
            char path[256];
            size_t want_n, got_n;
            golden_path(path, sizeof path, GOLDEN_DIR, layout, which);
            want_n = read_small_file(path, want, sizeof want);
            got_n = golden_build(layout, which, got, sizeof got);
            if (want_n == 0) printf("  cannot read %s\n", path);
            CHECK(want_n > 0);
            check_same_bytes(path, want, want_n, got, got_n);
        }
    }
}

/* The readers see every value of the inputs, through mmap and through plain reads. */
static void test_readers_read_golden(void) {
    int layout, no_mmap;
    for (layout = ATF_LAYOUT_1; layout <= ATF_LAYOUT_2; layout++) {
        for (no_mmap = 0; no_mmap < 2; no_mmap++) {
            atf_reader_options opt;
            atf_thread_reader t;
            char dir[256];
            size_t i;
            uint64_t d = 0;
            memset(&opt, 0, sizeof opt);
            opt.verify_crc = 1;
            opt.no_mmap = no_mmap;
            snprintf(dir, sizeof dir, "%s/layout%d", GOLDEN_DIR, layout);
            CHECK_RESULT(ATF_OK, atf_thread_reader_open(&t, dir, &opt));
            if (t.error.code != ATF_OK) continue;
            CHECK_EQ(layout, t.index.layout);
            CHECK_EQ(GOLDEN_EVENT_COUNT, t.index.event_count);
            CHECK_EQ(ATF_COUNT_FINALIZED, t.index.counted);
            CHECK_EQ(ATF_CRC_OK, t.index.crc_state);
            CHECK_EQ(GOLDEN_THREAD_ID, t.index.header.thread_id);
            CHECK_EQ(GOLDEN_CLOCK, t.index.header.clock_type);
            CHECK_EQ(golden_events[0].timestamp_ns, t.index.header.time_start_ns);
            CHECK_EQ(golden_events[GOLDEN_EVENT_COUNT - 1].timestamp_ns, t.index.header.time_end_ns);
            CHECK(t.has_detail);
            CHECK_EQ(golden_detail_count(), t.detail.event_count);
            CHECK_EQ(ATF_CRC_OK, t.detail.crc_state);
            for (i = 0; i < GOLDEN_EVENT_COUNT; i++) {
                atf_index_event want, got, back;
                atf_detail_event de;
                golden_index_event(i, &want);
                if (layout == ATF_LAYOUT_2) want.thread_id = want.call_depth = 0;
                CHECK_RESULT(ATF_OK, atf_index_reader_get(&t.index, i, &got));
                CHECK_EQ(want.timestamp_ns, got.timestamp_ns);
                CHECK_EQ(want.function_id, got.function_id);
                CHECK_EQ(want.kind, got.kind);
                CHECK_EQ(want.thread_id, got.thread_id);
                CHECK_EQ(want.call_depth, got.call_depth);
                CHECK_EQ(want.detail_seq, got.detail_seq);
                if (!golden_events[i].has_detail) {
                    CHECK_RESULT(ATF_E_NO_DETAIL, atf_thread_reader_detail_of(&t, i, &de));
                    continue;
                }
                CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(&t, i, &de));
                CHECK_EQ(i, de.header.index_seq);
                CHECK_EQ(golden_events[i].timestamp_ns, de.header.timestamp_ns);
                CHECK_EQ(golden_detail_type(golden_events[i].kind), de.header.type);
                CHECK_EQ(layout == ATF_LAYOUT_1 ? GOLDEN_THREAD_ID : 0u, de.header.thread_id);
                {
                    uint8_t payload[ATF_DETAIL_PAYLOAD_SIZE + ATF_DETAIL_STACK_MAX];
                    size_t len = golden_payload(i, payload, sizeof payload);
                    atf_detail_payload p;
                    CHECK_EQ(len, de.payload_len);
                    if (len == de.payload_len) CHECK_MEM(payload, de.payload, len);
                    CHECK_RESULT(ATF_OK, atf_detail_payload_decode(de.payload, de.payload_len, &p));
                    CHECK_EQ(golden_events[i].function_id, p.function_id);
                    CHECK_EQ(0x0F1E2D3C4B5A6978ull * (uint64_t)(i * 8 + 8), p.x[7]);
                    CHECK_EQ(0x00007FFF12340000ull + (uint64_t)i * 4, p.lr);
                    CHECK_EQ(golden_events[i].stack_size, p.stack_size);
                }
                CHECK_RESULT(ATF_OK, atf_thread_reader_index_of(&t, d, &back));
                CHECK_EQ(golden_events[i].timestamp_ns, back.timestamp_ns);
                d++;
            }
            CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&t));
            atf_thread_reader_close(&t);
        }
    }
}

/* 64-byte aligned block for a ring; *raw is what to free. */
static void *ring_alloc(size_t size, void **raw) {
    uint8_t *p = (uint8_t *)malloc(size + 64);
    *raw = p;
    return p ? p + (64 - ((uintptr_t)p & 63u)) : NULL;
}

static void remove_session(const char *root, const char *pid_dir) {
    char path[1200];
    static const char *const leaves[] = {"thread_0/index.atf", "thread_0/detail.atf",
                                         "manifest.json", "manifest.json.tmp"};
    size_t i;
    for (i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", pid_dir, leaves[i]);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/thread_0", pid_dir);
    GOLDEN_RMDIR(path);
    GOLDEN_RMDIR(pid_dir);
    snprintf(path, sizeof path, "%s/s", root);
    GOLDEN_RMDIR(path);
    GOLDEN_RMDIR(root);
}

/* Records the inputs through a session (caller rings carrying the golden thread id, manual
 * drain, a pump after event `pump_after` when it is in range) and compares the files. */
static void record_and_compare(int layout, size_t pump_after) {
    atf_session_config cfg;
    atf_session *s = NULL;
    atf_producer w;
    void *index_raw = NULL, *detail_raw = NULL, *index_mem, *detail_mem;
    size_t index_size = atf_ring_memory_size(ATF_RING_INDEX, 64);
    size_t detail_size = atf_ring_memory_size(ATF_RING_DETAIL, 8192), i;
    char root[256], pid_dir[1100];
    uint32_t slot = 99;
    int which;
    scratch_root(root, sizeof root, "golden");
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = (uint32_t)layout;
    cfg.detail_mode = ATF_DETAIL_ALWAYS;
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.session_name = "s";
    index_mem = ring_alloc(index_size, &index_raw);
    detail_mem = ring_alloc(detail_size, &detail_raw);
    CHECK(index_mem && detail_mem);
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &cfg));
    if (!s || !index_mem || !detail_mem) goto done;
    snprintf(pid_dir, sizeof pid_dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_ring_init(index_mem, index_size, ATF_RING_INDEX, 64, (uint32_t)layout,
                                       GOLDEN_THREAD_ID));
    CHECK_RESULT(ATF_OK, atf_ring_init(detail_mem, detail_size, ATF_RING_DETAIL, 8192,
                                       (uint32_t)layout, GOLDEN_THREAD_ID));
    CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, index_mem, index_size, detail_mem, detail_size,
                                                  "golden", &slot));
    CHECK_EQ(0, slot);
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, index_mem, index_size, detail_mem, detail_size,
                                         ATF_DETAIL_ALWAYS));
    for (i = 0; i < GOLDEN_EVENT_COUNT; i++) {
        const golden_event *e = &golden_events[i];
        if (e->has_detail) {
            uint8_t payload[ATF_DETAIL_PAYLOAD_SIZE + ATF_DETAIL_STACK_MAX];
            size_t len = golden_payload(i, payload, sizeof payload);
            CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, e->kind, e->function_id, e->timestamp_ns,
                                                         golden_detail_type(e->kind), payload, len));
        } else if (e->kind == ATF_EVENT_CALL) {
            CHECK_RESULT(ATF_OK, atf_producer_call(&w, e->function_id, e->timestamp_ns));
        } else if (e->kind == ATF_EVENT_RETURN) {
            CHECK_RESULT(ATF_OK, atf_producer_return(&w, e->function_id, e->timestamp_ns));
        } else {
            CHECK_RESULT(ATF_OK, atf_producer_exception(&w, e->function_id, e->timestamp_ns));
        }
        if (i == pump_after) CHECK_RESULT(ATF_OK, atf_session_pump(s));
    }
    atf_producer_close(&w);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    for (which = 0; which < 2; which++) {
        uint8_t want[GOLDEN_MAX_FILE], got[GOLDEN_MAX_FILE];
        char path[1200];
        size_t want_n, got_n;
        golden_path(path, sizeof path, GOLDEN_DIR, layout, which);
        want_n = read_small_file(path, want, sizeof want);
        snprintf(path, sizeof path, "%s/thread_0/%s", pid_dir, which == 0 ? "index.atf" : "detail.atf");
        got_n = read_small_file(path, got, sizeof got);
        CHECK(want_n > 0 && got_n > ATF_HEADER_SIZE);
        if (got_n <= ATF_HEADER_SIZE) continue;
        /* the bytes naming the host are this host's; the rest must be the golden bytes */
        CHECK_EQ(ATF__ARCH_CODE, got[GOLDEN_HOST_BYTE_ARCH]);
        CHECK_EQ(ATF__OS_CODE, got[GOLDEN_HOST_BYTE_OS]);
        got[GOLDEN_HOST_BYTE_ARCH] = GOLDEN_ARCH;
        got[GOLDEN_HOST_BYTE_OS] = GOLDEN_OS;
        if (which == 0) {
            CHECK_EQ(atf_clock_type(), got[GOLDEN_HOST_BYTE_CLOCK]);
            got[GOLDEN_HOST_BYTE_CLOCK] = GOLDEN_CLOCK;
        }
        check_same_bytes(path, want, want_n, got, got_n);
    }
    remove_session(root, pid_dir);
done:
    free(index_raw);
    free(detail_raw);
}

static void test_session_writer_reproduces_golden_layout1(void) {
    record_and_compare(ATF_LAYOUT_1, (size_t)-1);
    record_and_compare(ATF_LAYOUT_1, 4);
}

static void test_session_writer_reproduces_golden_layout2(void) {
    record_and_compare(ATF_LAYOUT_2, (size_t)-1);
    record_and_compare(ATF_LAYOUT_2, 6);
}

static const test_case tests[] = {
    {"host_note", test_host_note},
    {"encoders_reproduce_golden", test_encoders_reproduce_golden},
    {"readers_read_golden", test_readers_read_golden},
    {"session_writer_reproduces_golden_layout1", test_session_writer_reproduces_golden_layout1},
    {"session_writer_reproduces_golden_layout2", test_session_writer_reproduces_golden_layout2},
};

HARNESS_MAIN("golden", tests)
