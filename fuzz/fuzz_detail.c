/* fuzz_detail.c - detail reader: any bytes as a detail file.
 *
 * Opens the input (an exact-size heap copy) with atf_detail_reader_open_memory, reads every
 * record (up to FUZZ_MAX_EVENTS) and decodes its payload, verifies the CRC, and opens it
 * again with verify_crc set. Checks that every record handed out lies inside the input and
 * that the records tile the events section. See fuzz_common.h for the replay driver. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    atf_detail_reader r;
    atf_reader_options opt;
    atf_detail_event ev;
    atf_detail_payload pl;
    atf_result rc;
    uint64_t i, n, next;
    memset(&opt, 0, sizeof opt);
    rc = atf_detail_reader_open_memory(&r, data, size, "fuzz.atf", NULL);
    if (rc != ATF_OK) {
        FUZZ_CHECK(r.error.code == rc);
        FUZZ_CHECK(r.event_count == 0);
        atf_detail_reader_close(&r);
        return 0;
    }
    FUZZ_CHECK(r.layout == ATF_LAYOUT_1 || r.layout == ATF_LAYOUT_2);
    FUZZ_CHECK(r.header.events_offset >= ATF_HEADER_SIZE && r.header.events_offset <= size);
    FUZZ_CHECK(r.bytes_length <= size - r.header.events_offset);
    FUZZ_CHECK(r.event_count <= r.bytes_length / ATF_DETAIL_EVENT_HEADER_SIZE);
    n = r.event_count < FUZZ_MAX_EVENTS ? r.event_count : FUZZ_MAX_EVENTS;
    next = r.header.events_offset;
    for (i = 0; i < n; i++) {
        FUZZ_CHECK(atf_detail_reader_get(&r, i, &ev) == ATF_OK);
        FUZZ_CHECK(ev.offset == next); /* records follow each other with no gap */
        FUZZ_CHECK(ev.header.total_length >= ATF_DETAIL_EVENT_HEADER_SIZE);
        FUZZ_CHECK(ev.payload_len == ev.header.total_length - ATF_DETAIL_EVENT_HEADER_SIZE);
        FUZZ_CHECK(ev.offset + ev.header.total_length <= r.header.events_offset + r.bytes_length);
        FUZZ_CHECK(ev.payload == data + ev.offset + ATF_DETAIL_EVENT_HEADER_SIZE);
        if (r.layout == ATF_LAYOUT_2) FUZZ_CHECK(ev.header.thread_id == 0);
        rc = atf_detail_payload_decode(ev.payload, ev.payload_len, &pl);
        FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_TRUNCATED);
        if (rc == ATF_OK) {
            FUZZ_CHECK(pl.stack_size <= ev.payload_len - ATF_DETAIL_PAYLOAD_SIZE);
            FUZZ_CHECK(pl.stack == ev.payload + ATF_DETAIL_PAYLOAD_SIZE);
            if (pl.stack_size) { /* touch the stack window's last byte */
                volatile uint8_t last = pl.stack[pl.stack_size - 1];
                (void)last;
            }
        }
        next = ev.offset + ev.header.total_length;
    }
    if (n == r.event_count) FUZZ_CHECK(next == r.header.events_offset + r.bytes_length);
    FUZZ_CHECK(atf_detail_reader_get(&r, r.event_count, &ev) == ATF_E_RANGE);
    rc = atf_detail_reader_verify_crc(&r);
    FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CRC);
    FUZZ_CHECK(atf_detail_reader_verify_crc(&r) == rc);
    {
        char line[1024];
        atf_error_format(&r.error, line, sizeof line);
    }
    atf_detail_reader_close(&r);

    opt.verify_crc = 1;
    rc = atf_detail_reader_open_memory(&r, data, size, "fuzz.atf", &opt);
    FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CRC);
    atf_detail_reader_close(&r);
    return 0;
}
