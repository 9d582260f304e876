/* fuzz_ktrace.c - Darwin ktrace v3 reader: any bytes as a ktrace file.
 *
 * Opens the input (an exact-size heap copy) with atf_ktrace_reader_open_memory and walks
 * every chunk; each must lie inside the input, start on a multiple of 8 after the last
 * one ended, and the walk must end (at most one chunk per 16 bytes) with the same code on
 * every later call. The timebase helpers run on a few values. See fuzz_common.h. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    atf_ktrace_reader r;
    atf_ktrace_chunk c;
    atf_result rc;
    uint64_t chunks = 0, prev_end = ATF_KTRACE_FILE_HEADER_SIZE;
    int in_body = 0;
    rc = atf_ktrace_reader_open_memory(&r, data, size, "fuzz.ktrace", NULL);
    if (rc != ATF_OK) {
        FUZZ_CHECK(r.error.code == rc);
        FUZZ_CHECK(atf_ktrace_reader_next(&r, &c) == rc); /* a failed open walks nothing */
        atf_ktrace_reader_close(&r);
        return 0;
    }
    FUZZ_CHECK(r.header.header_size >= 48 && 16 + r.header.header_size <= size);
    FUZZ_CHECK(r.header.timebase_numer && r.header.timebase_denom);
    while ((rc = atf_ktrace_reader_next(&r, &c)) == ATF_OK) {
        FUZZ_CHECK(++chunks <= size / ATF_KTRACE_CHUNK_HEADER_SIZE);
        FUZZ_CHECK(c.offset >= prev_end && c.offset - prev_end < 8 && (c.offset & 7u) == 0);
        FUZZ_CHECK(c.offset + ATF_KTRACE_CHUNK_HEADER_SIZE <= size);
        FUZZ_CHECK(c.size <= size - c.offset - ATF_KTRACE_CHUNK_HEADER_SIZE);
        FUZZ_CHECK(c.data == data + c.offset + ATF_KTRACE_CHUNK_HEADER_SIZE);
        if (c.section == ATF_KTRACE_HEADER_CHUNK) {
            FUZZ_CHECK(!in_body);
            FUZZ_CHECK(c.offset + ATF_KTRACE_CHUNK_HEADER_SIZE + c.size <= 16 + r.header.header_size);
        } else {
            FUZZ_CHECK(c.section == ATF_KTRACE_BODY_CHUNK);
            FUZZ_CHECK(c.offset >= 16 + r.header.header_size);
            in_body = 1;
        }
        if (c.size) { /* touch the last data byte */
            volatile uint8_t last = c.data[c.size - 1];
            (void)last;
        }
        prev_end = c.offset + ATF_KTRACE_CHUNK_HEADER_SIZE + c.size;
    }
    FUZZ_CHECK(rc == ATF_E_RANGE || rc == ATF_E_TRUNCATED || rc == ATF_E_CORRUPT);
    FUZZ_CHECK(c.data == NULL && c.size == 0);
    FUZZ_CHECK(atf_ktrace_reader_next(&r, &c) == rc);
    if (rc != ATF_E_RANGE) FUZZ_CHECK(r.error.code == rc);
    {
        uint64_t t[5] = { 0, 1, r.header.timestamp, UINT64_MAX / 3, UINT64_MAX };
        int k;
        for (k = 0; k < 5; k++) {
            uint64_t ns = atf_ktrace_time_ns(&r, t[k]);
            /* exact floor(t * numer / denom) when it fits, else saturated */
            if (t[k] <= UINT32_MAX)
                FUZZ_CHECK(ns == t[k] * r.header.timebase_numer / r.header.timebase_denom);
        }
        (void)atf_ktrace_wall_ns(&r);
    }
    atf_ktrace_reader_close(&r);
    return 0;
}
