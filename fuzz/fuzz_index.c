/* fuzz_index.c - index reader: any bytes as an index file.
 *
 * Opens the input (an exact-size heap copy) with atf_index_reader_open_memory, then reads
 * every event (up to FUZZ_MAX_EVENTS) through get and raw, seeks, and verifies the CRC;
 * opens it a second time with verify_crc set. Checks that whatever the reader accepts
 * lies inside the input. See fuzz_common.h for the replay driver. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    atf_index_reader r;
    atf_reader_options opt;
    atf_index_event ev;
    atf_result rc;
    uint64_t i, n;
    memset(&opt, 0, sizeof opt);
    rc = atf_index_reader_open_memory(&r, data, size, "fuzz.atf", NULL);
    if (rc != ATF_OK) {
        FUZZ_CHECK(r.error.code == rc);
        FUZZ_CHECK(r.event_count == 0);
        atf_index_reader_close(&r); /* safe on a failed open */
        return 0;
    }
    FUZZ_CHECK(r.layout == ATF_LAYOUT_1 || r.layout == ATF_LAYOUT_2);
    FUZZ_CHECK(r.header.events_offset >= ATF_HEADER_SIZE && r.header.events_offset <= size);
    /* a packed file's events are decoded into memory of their own (fuzz_packed checks
     * them); the bounds below are those of events read in place */
    FUZZ_CHECK(r.packed || r.event_count <= (size - r.header.events_offset) / ATF_INDEX_EVENT_SIZE);
    FUZZ_CHECK(r.packed ||
               r.torn_bytes <= size - r.header.events_offset - r.event_count * ATF_INDEX_EVENT_SIZE);
    n = r.event_count < FUZZ_MAX_EVENTS ? r.event_count : FUZZ_MAX_EVENTS;
    for (i = 0; i < n; i++) {
        const uint8_t *raw = atf_index_reader_raw(&r, i);
        FUZZ_CHECK(raw);
        FUZZ_CHECK(r.packed || (raw >= data + ATF_HEADER_SIZE && raw + ATF_INDEX_EVENT_SIZE <= data + size));
        FUZZ_CHECK(atf_index_reader_get(&r, i, &ev) == ATF_OK);
        if (r.layout == ATF_LAYOUT_2) FUZZ_CHECK(ev.kind <= 0xFFu && ev.thread_id == 0);
    }
    FUZZ_CHECK(atf_index_reader_get(&r, r.event_count, &ev) == ATF_E_RANGE);
    FUZZ_CHECK(atf_index_reader_raw(&r, r.event_count) == NULL);
    /* seek to the first, middle and last event's time and past the end: a position in
     * [0, count] after at most 65 probes (files need not be ordered, so only bounds) */
    for (i = 0; i < 4 && r.event_count; i++) {
        uint64_t t = i == 3 ? UINT64_MAX : atf__load_le64(atf_index_reader_raw(&r, (r.event_count - 1) * i / 2));
        uint64_t probes = 0, pos = atf_index_reader_seek(&r, t, &probes);
        FUZZ_CHECK(pos <= r.event_count && probes <= 65);
    }
    rc = atf_index_reader_verify_crc(&r);
    FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CRC);
    FUZZ_CHECK(rc == ATF_OK || r.crc_state == ATF_CRC_MISMATCH);
    FUZZ_CHECK(atf_index_reader_verify_crc(&r) == rc); /* settled: the same answer again */
    {
        char line[1024];
        atf_error_format(&r.error, line, sizeof line);
        (void)atf_count_source_str(r.counted);
        (void)atf_crc_state_str(r.crc_state);
    }
    atf_index_reader_close(&r);

    opt.verify_crc = 1;
    rc = atf_index_reader_open_memory(&r, data, size, "fuzz.atf", &opt);
    FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CRC);
    atf_index_reader_close(&r);
    return 0;
}
