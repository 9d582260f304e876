/* golden.h - the deterministic inputs behind tests/golden/ and the encoder-built file images.
 *
 * One thread's recording, fixed once: the index events (kind, function id, timestamp), which
 * of them carry a detail payload, and every payload byte. golden_build() lays the files out
 * with the library's encoders exactly as the session writer does in ATF_DETAIL_ALWAYS mode
 * (depths from call/return nesting, detail numbers in push order, links both ways, footer
 * CRC32-C). The host-dependent header bytes are fixed to an x86-64 Linux writer, so the files
 * are the same wherever they are built. tests/golden_gen.c writes them; tests/test_golden.c
 * re-encodes, reads back and records them on the running host. Include after atf.h. */
#ifndef ATF_TEST_GOLDEN_H
#define ATF_TEST_GOLDEN_H

#include <stdio.h>
#include <string.h>

#define GOLDEN_THREAD_ID 0x00C0FFEEu
#define GOLDEN_ARCH ATF_ARCH_X86_64
#define GOLDEN_OS ATF_OS_LINUX
#define GOLDEN_CLOCK ATF_CLOCK_BOOTTIME
#define GOLDEN_MAX_FILE 4096u

/* Header bytes that name the writing host: arch, os (both headers), clock_type (index). */
#define GOLDEN_HOST_BYTE_ARCH 6
#define GOLDEN_HOST_BYTE_OS 7
#define GOLDEN_HOST_BYTE_CLOCK 16

typedef struct golden_event {
    uint32_t kind;           /* ATF_EVENT_* */
    uint64_t function_id;
    uint64_t timestamp_ns;   /* every byte distinct from its neighbours: byte order shows */
    int has_detail;
    uint16_t stack_size;     /* detail stack window bytes */
} golden_event;

static const golden_event golden_events[] = {
    {ATF_EVENT_CALL, 0x0000000000000001ull, 0x0102030405060708ull, 0, 0},
    {ATF_EVENT_CALL, 0x0000000100000002ull, 0x0102030405061122ull, 1, 16},
    {ATF_EVENT_CALL, 0x0000000100000003ull, 0x0102030405073344ull, 1, 0},
    {ATF_EVENT_RETURN, 0x0000000100000003ull, 0x0102030405085566ull, 1, 40},
    {ATF_EVENT_RETURN, 0x0000000100000002ull, 0x0102030405097788ull, 0, 0},
    {ATF_EVENT_CALL, 0xDEADBEEFCAFEF00Dull, 0x01020304050A99AAull, 0, 0},
    {ATF_EVENT_EXCEPTION, 0xDEADBEEFCAFEF00Dull, 0x01020304050BBBCCull, 0, 0},
    {ATF_EVENT_CALL, 0x00000002FFFFFFFFull, 0x01020304050CDDEEull, 1, 8},
    {ATF_EVENT_RETURN, 0x00000002FFFFFFFFull, 0x01020304050DF001ull, 0, 0},
    {ATF_EVENT_RETURN, 0x0000000000000001ull, 0x01020304050E1234ull, 1, ATF_DETAIL_STACK_MAX},
};
#define GOLDEN_EVENT_COUNT (sizeof golden_events / sizeof golden_events[0])

/* Payload of event i (registers and stack window, every value derived from i). */
static size_t golden_payload(size_t i, uint8_t *out, size_t cap) {
    uint8_t stack[ATF_DETAIL_STACK_MAX];
    atf_detail_payload p;
    size_t k;
    memset(&p, 0, sizeof p);
    p.function_id = golden_events[i].function_id;
    for (k = 0; k < 8; k++) p.x[k] = 0x0F1E2D3C4B5A6978ull * (uint64_t)(i * 8 + k + 1);
    p.lr = 0x00007FFF12340000ull + (uint64_t)i * 4;
    p.fp = 0x00007FFEE0000000ull + (uint64_t)i * 0x40;
    p.sp = p.fp - 0x80;
    p.stack_size = golden_events[i].stack_size;
    for (k = 0; k < p.stack_size; k++) stack[k] = (uint8_t)(i * 31 + k * 7 + 3);
    p.stack = stack;
    return atf_detail_payload_encode(&p, out, cap);
}

/* The detail type the writer is given for an event of `kind`. */
static uint16_t golden_detail_type(uint32_t kind) {
    return kind == ATF_EVENT_CALL ? (uint16_t)ATF_DETAIL_FUNCTION_CALL
                                  : (uint16_t)ATF_DETAIL_FUNCTION_RETURN;
}

/* The index event i as the writer produces it: depth from nesting, detail numbered in order. */
static void golden_index_event(size_t i, atf_index_event *e) {
    size_t k;
    uint32_t depth = 0, here = 0;
    uint64_t detail = 0;
    for (k = 0; k <= i; k++) {
        if (golden_events[k].kind == ATF_EVENT_CALL) here = depth++;
        else here = depth ? --depth : 0;
        if (k < i && golden_events[k].has_detail) detail++;
    }
    memset(e, 0, sizeof *e);
    e->timestamp_ns = golden_events[i].timestamp_ns;
    e->function_id = golden_events[i].function_id;
    e->kind = golden_events[i].kind;
    e->thread_id = GOLDEN_THREAD_ID;
    e->call_depth = here;
    e->detail_seq = golden_events[i].has_detail ? detail : ATF_NO_DETAIL;
}

static size_t golden_detail_count(void) {
    size_t i, n = 0;
    for (i = 0; i < GOLDEN_EVENT_COUNT; i++) n += golden_events[i].has_detail != 0;
    return n;
}

/* The whole index.atf of `layout`; returns its size. */
static size_t golden_build_index(int layout, uint8_t *out, size_t cap) {
    atf_index_header h;
    atf_index_footer f;
    size_t i, n = GOLDEN_EVENT_COUNT, size = ATF_HEADER_SIZE + n * 32 + ATF_FOOTER_SIZE;
    if (size > cap) return 0;
    for (i = 0; i < n; i++) {
        atf_index_event e;
        golden_index_event(i, &e);
        if (layout == ATF_LAYOUT_2) e.thread_id = e.call_depth = 0;
        atf_index_event_encode(layout, &e, out + ATF_HEADER_SIZE + i * 32);
    }
    memset(&h, 0, sizeof h);
    h.endian = ATF_ENDIAN_LITTLE;
    h.version = (uint8_t)layout;
    h.arch = GOLDEN_ARCH;
    h.os = GOLDEN_OS;
    h.flags = golden_detail_count() ? ATF_INDEX_FLAG_HAS_DETAIL_FILE : 0;
    h.thread_id = GOLDEN_THREAD_ID;
    h.clock_type = GOLDEN_CLOCK;
    h.event_size = ATF_INDEX_EVENT_SIZE;
    h.event_count = n;
    h.events_offset = ATF_HEADER_SIZE;
    h.footer_offset = ATF_HEADER_SIZE + n * 32;
    h.time_start_ns = golden_events[0].timestamp_ns;
    h.time_end_ns = golden_events[n - 1].timestamp_ns;
    atf_index_header_encode(&h, out);
    memset(&f, 0, sizeof f);
    f.checksum = atf_crc32c(out + ATF_HEADER_SIZE, n * 32);
    f.event_count = n;
    f.time_start_ns = h.time_start_ns;
    f.time_end_ns = h.time_end_ns;
    f.bytes_written = n * 32;
    atf_index_footer_encode(&f, out + ATF_HEADER_SIZE + n * 32);
    return size;
}

/* The whole detail.atf of `layout`; returns its size. */
static size_t golden_build_detail(int layout, uint8_t *out, size_t cap) {
    atf_detail_header h;
    atf_detail_footer f;
    size_t i, at = ATF_HEADER_SIZE, count = 0;
    uint64_t seq_first = 0, seq_last = 0, t_first = 0, t_last = 0;
    for (i = 0; i < GOLDEN_EVENT_COUNT; i++) {
        atf_detail_event_header e;
        size_t len;
        if (!golden_events[i].has_detail) continue;
        if (at + ATF_DETAIL_EVENT_HEADER_SIZE + ATF_DETAIL_PAYLOAD_SIZE + ATF_DETAIL_STACK_MAX +
                ATF_FOOTER_SIZE > cap)
            return 0;
        len = golden_payload(i, out + at + ATF_DETAIL_EVENT_HEADER_SIZE,
                             cap - at - ATF_DETAIL_EVENT_HEADER_SIZE);
        memset(&e, 0, sizeof e);
        e.total_length = (uint32_t)(ATF_DETAIL_EVENT_HEADER_SIZE + len);
        e.type = golden_detail_type(golden_events[i].kind);
        e.index_seq = i;
        e.thread_id = GOLDEN_THREAD_ID;
        e.timestamp_ns = golden_events[i].timestamp_ns;
        atf_detail_event_header_encode(layout, &e, out + at);
        if (count == 0) {
            seq_first = i;
            t_first = e.timestamp_ns;
        }
        seq_last = i;
        t_last = e.timestamp_ns;
        count++;
        at += e.total_length;
    }
    memset(&h, 0, sizeof h);
    h.endian = ATF_ENDIAN_LITTLE;
    h.version = (uint8_t)layout;
    h.arch = GOLDEN_ARCH;
    h.os = GOLDEN_OS;
    h.thread_id = GOLDEN_THREAD_ID;
    h.events_offset = ATF_HEADER_SIZE;
    h.event_count = count;
    h.bytes_length = at - ATF_HEADER_SIZE;
    h.index_seq_start = seq_first;
    h.index_seq_end = seq_last;
    atf_detail_header_encode(&h, out);
    memset(&f, 0, sizeof f);
    f.checksum = atf_crc32c(out + ATF_HEADER_SIZE, at - ATF_HEADER_SIZE);
    f.event_count = count;
    f.bytes_length = at - ATF_HEADER_SIZE;
    f.time_start_ns = t_first;
    f.time_end_ns = t_last;
    atf_detail_footer_encode(&f, out + at);
    return at + ATF_FOOTER_SIZE;
}

/* File `which` (0 = index.atf, 1 = detail.atf) of `layout`. */
static size_t golden_build(int layout, int which, uint8_t *out, size_t cap) {
    return which == 0 ? golden_build_index(layout, out, cap) : golden_build_detail(layout, out, cap);
}

/* Path of a golden file below `dir` ("tests/golden"): DIR/layoutN/index.atf, .../detail.atf. */
static void golden_path(char *buf, size_t cap, const char *dir, int layout, int which) {
    snprintf(buf, cap, "%s/layout%d/%s", dir, layout, which == 0 ? "index.atf" : "detail.atf");
}

#endif
