/* fuzz_packed.c - the packed index lane (version 3): any bytes as a packed index file, and
 * the same bytes as one block's payload.
 *
 * As a file: opened with atf_index_reader_open_memory. When it opens packed, every event
 * (up to FUZZ_MAX_EVENTS) is read through get and raw, the counts are checked against the
 * size, each block decoded on its own holds what the reader gave (zero records for one
 * that does not decode), reads that cycle through more blocks than the reader's cache
 * holds, and a second reader's, give the same records, seek stays in bounds and the CRC
 * verifies or not, the same answer twice; a second open has verify_crc set. The decoded events go through the round trip below. A file
 * that opens finalized with a good CRC is also unpacked (scratch files): when
 * atf_index_unpack accepts it, the layout-1 file holds the same events, and packing that
 * file and unpacking it again gives it back byte for byte.
 *
 * As a payload: u16 count (its low 12 bits), u32 thread id, then the payload, decoded by
 * atf_packed_decode into exact-size records. When it decodes, the round trip: the records
 * coded by atf_packed_encode (into exactly count * ATF_PACKED_EVENT_MAX bytes, at least 2
 * per event, which is what readers demand of a block) decode to the same records, and
 * coding those gives the same bytes again. The input's own bytes need not come back: a
 * payload may spell a varint longer than the encoder does. See fuzz_common.h for the
 * replay driver. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"

#define FUZZ_PACKED_COUNT_MASK 0x0FFFu /* payload counts 0..4095: records stay small */

/* An exact-size heap block (one byte for n == 0), so that a sanitizer sees any overrun. */
static uint8_t *fuzz_packed_alloc(size_t n) {
    uint8_t *p = (uint8_t *)malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

/* count layout-1 records -> encode -> decode: the same records, the same bytes twice. */
static void fuzz_packed_round_trip(const uint8_t *records, size_t count, uint32_t thread_id) {
    size_t cap = count * ATF_PACKED_EVENT_MAX, len, len2;
    uint8_t *coded = fuzz_packed_alloc(cap), *coded2 = fuzz_packed_alloc(cap);
    uint8_t *back = fuzz_packed_alloc(count * ATF_INDEX_EVENT_SIZE);
    len = atf_packed_encode(records, count, thread_id, coded);
    FUZZ_CHECK(len <= cap && len >= 2 * count);
    FUZZ_CHECK(atf_packed_decode(coded, len, count, thread_id, back) == ATF_OK);
    FUZZ_CHECK(count == 0 || memcmp(back, records, count * ATF_INDEX_EVENT_SIZE) == 0);
    len2 = atf_packed_encode(back, count, thread_id, coded2);
    FUZZ_CHECK(len2 == len && (len == 0 || memcmp(coded2, coded, len) == 0));
    free(coded);
    free(coded2);
    free(back);
}

static void fuzz_packed_payload(const uint8_t *data, size_t size) {
    size_t count;
    uint32_t thread_id;
    uint8_t *records;
    if (size < 6) return;
    count = fuzz_le16(data) & FUZZ_PACKED_COUNT_MASK;
    thread_id = fuzz_le32(data + 2);
    records = fuzz_packed_alloc(count * ATF_INDEX_EVENT_SIZE);
    if (atf_packed_decode(data + 6, size - 6, count, thread_id, records) == ATF_OK) {
        FUZZ_CHECK(size - 6 >= 2 * count); /* a tag and a stamp at least */
        fuzz_packed_round_trip(records, count, thread_id);
    }
    free(records);
}

/* Reads a scratch file whole; aborts when it cannot (the disk, not the input). */
static uint8_t *fuzz_packed_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) abort();
    buf = fuzz_packed_alloc((size_t)n);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) abort();
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* A finalized packed file with a good CRC: unpack, pack, unpack. `events` are its records. */
static void fuzz_packed_convert(const uint8_t *data, size_t size, const uint8_t *events,
                                uint64_t count) {
    char in[600], l1[600], packed[600], l1_again[600];
    atf_index_reader r;
    atf_error err;
    atf_result rc;
    uint8_t *a, *b;
    size_t a_len, b_len;
    snprintf(in, sizeof in, "%s/in.atf", fuzz_scratch_dir());
    snprintf(l1, sizeof l1, "%s/l1.atf", fuzz_scratch_dir());
    snprintf(packed, sizeof packed, "%s/packed.atf", fuzz_scratch_dir());
    snprintf(l1_again, sizeof l1_again, "%s/l1_again.atf", fuzz_scratch_dir());
    fuzz_write_file(in, data, size);
    /* err given: atf.h's conversions dereference a NULL one when they refuse (a bug) */
    memset(&err, 0, sizeof err);
    rc = atf_index_unpack(in, l1, &err);
    FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_ARG); /* ARG: bytes a conversion would not keep */
    FUZZ_CHECK(err.code == rc);
    if (rc != ATF_OK) return;
    FUZZ_CHECK(atf_index_reader_open(&r, l1, NULL) == ATF_OK);
    FUZZ_CHECK(!r.packed && r.layout == ATF_LAYOUT_1 && r.counted == ATF_COUNT_FINALIZED);
    FUZZ_CHECK(r.event_count == count);
    FUZZ_CHECK(count == 0 || memcmp(atf_index_reader_raw(&r, 0), events,
                                    (size_t)count * ATF_INDEX_EVENT_SIZE) == 0);
    atf_index_reader_close(&r);
    FUZZ_CHECK(atf_index_pack(l1, packed, &err) == ATF_OK);
    FUZZ_CHECK(atf_index_unpack(packed, l1_again, &err) == ATF_OK);
    a = fuzz_packed_read(l1, &a_len);
    b = fuzz_packed_read(l1_again, &b_len);
    FUZZ_CHECK(a_len == b_len && memcmp(a, b, a_len) == 0);
    free(a);
    free(b);
}

/* The block cache against the blocks themselves: each block, decoded here on its own,
 * holds what the reader gave for its events (a block that passed its CRC but does not
 * decode reads as zero records, and the reader says damaged once it read it); only the
 * last block is short. Then the events again with the blocks visited out of order (0,
 * half, 1, half + 1, ...: more blocks than the cache holds, each visited twice), and a
 * second reader over the same bytes read in turn with the first, far apart: every read
 * gives the records of the first pass. */
static void fuzz_packed_blocks(const atf_index_reader *r, const uint8_t *events) {
    uint64_t per = r->block_events, n = r->event_count, blocks = (n + per - 1) / per;
    uint64_t half = (blocks + 1) / 2, j, k, i;
    uint8_t *dec = fuzz_packed_alloc((size_t)per * ATF_INDEX_EVENT_SIZE);
    atf_index_reader r2;
    int damaged = 0;
    FUZZ_CHECK(r->block_count == blocks);
    for (k = 0; k < blocks; k++) {
        const uint8_t *h = r->image.data + r->block_at[k];
        uint64_t first = k * per, m = n - first < per ? n - first : per;
        FUZZ_CHECK(atf__load_le32(h) == m && (m == per || k == blocks - 1));
        if (atf_packed_decode(h + ATF_PACKED_BLOCK_HEADER_SIZE, atf__load_le32(h + 4), (size_t)m,
                              r->header.thread_id, dec) == ATF_OK) {
            FUZZ_CHECK(memcmp(dec, events + first * ATF_INDEX_EVENT_SIZE, (size_t)m * ATF_INDEX_EVENT_SIZE) == 0);
        } else {
            damaged = 1;
            for (i = 0; i < m * ATF_INDEX_EVENT_SIZE; i++)
                FUZZ_CHECK(events[first * ATF_INDEX_EVENT_SIZE + i] == 0);
        }
    }
    FUZZ_CHECK(r->cache->damaged == damaged);
    free(dec);
    for (j = 0; j < 4 * half; j++) {
        uint64_t first, m, seq;
        const uint8_t *raw;
        k = (j / 2) % half + (j % 2 ? half : 0);
        if (k >= blocks) continue;
        first = k * per;
        m = n - first < per ? n - first : per;
        seq = first + (j * 7919) % m;
        raw = atf_index_reader_raw(r, seq);
        FUZZ_CHECK(raw && memcmp(raw, events + seq * ATF_INDEX_EVENT_SIZE, ATF_INDEX_EVENT_SIZE) == 0);
    }
    if (n == 0 || atf_index_reader_open_memory(&r2, r->image.data, r->image.size, "fuzz.atf", NULL) != ATF_OK)
        return;
    FUZZ_CHECK(r2.event_count == n);
    for (j = 0; j < 2 * blocks && r2.event_count == n; j++) {
        uint64_t a = (j * per + j) % n, b = n - 1 - a;
        const uint8_t *ra = atf_index_reader_raw(r, a);
        FUZZ_CHECK(memcmp(ra, events + a * ATF_INDEX_EVENT_SIZE, ATF_INDEX_EVENT_SIZE) == 0);
        ra = atf_index_reader_raw(&r2, b);
        FUZZ_CHECK(memcmp(ra, events + b * ATF_INDEX_EVENT_SIZE, ATF_INDEX_EVENT_SIZE) == 0);
    }
    atf_index_reader_close(&r2);
}

static void fuzz_packed_file(const uint8_t *data, size_t size) {
    atf_index_reader r;
    atf_reader_options opt;
    atf_index_event ev, raw_ev;
    atf_result rc;
    uint64_t i, n, room;
    uint8_t *events;
    if (atf_index_reader_open_memory(&r, data, size, "fuzz.atf", NULL) != ATF_OK) return;
    if (!r.packed) { /* layouts 1 and 2 are fuzz_index's */
        FUZZ_CHECK(r.header.version != ATF_LAYOUT_PACKED);
        atf_index_reader_close(&r);
        return;
    }
    FUZZ_CHECK(r.header.version == ATF_LAYOUT_PACKED && r.layout == ATF_LAYOUT_1);
    FUZZ_CHECK(r.header.events_offset >= ATF_HEADER_SIZE && r.header.events_offset <= size);
    room = size - r.header.events_offset;
    FUZZ_CHECK(r.torn_bytes <= room);
    /* every event costs two payload bytes or more, every block a 16-byte header */
    FUZZ_CHECK(r.event_count == 0 ||
               (room >= ATF_PACKED_LANE_SIZE + ATF_PACKED_BLOCK_HEADER_SIZE &&
                r.event_count <= (room - ATF_PACKED_LANE_SIZE - ATF_PACKED_BLOCK_HEADER_SIZE) / 2));
    if (r.counted == ATF_COUNT_FINALIZED || r.counted == ATF_COUNT_FOOTER_AT_END)
        FUZZ_CHECK(r.torn_bytes == 0 && r.has_footer && r.footer.event_count == r.event_count);
    n = r.event_count < FUZZ_MAX_EVENTS ? r.event_count : FUZZ_MAX_EVENTS;
    events = fuzz_packed_alloc((size_t)n * ATF_INDEX_EVENT_SIZE);
    for (i = 0; i < n; i++) {
        const uint8_t *raw = atf_index_reader_raw(&r, i);
        FUZZ_CHECK(raw != NULL);
        FUZZ_CHECK(atf_index_reader_get(&r, i, &ev) == ATF_OK);
        atf_index_event_decode(ATF_LAYOUT_1, raw, &raw_ev);
        FUZZ_CHECK(ev.timestamp_ns == raw_ev.timestamp_ns && ev.function_id == raw_ev.function_id &&
                   ev.detail_seq == raw_ev.detail_seq && ev.thread_id == raw_ev.thread_id &&
                   ev.call_depth == raw_ev.call_depth && ev.kind == raw_ev.kind);
        memcpy(events + i * ATF_INDEX_EVENT_SIZE, raw, ATF_INDEX_EVENT_SIZE);
    }
    if (n == r.event_count) fuzz_packed_blocks(&r, events);
    FUZZ_CHECK(atf_index_reader_get(&r, r.event_count, &ev) == ATF_E_RANGE);
    FUZZ_CHECK(atf_index_reader_raw(&r, r.event_count) == NULL);
    for (i = 0; i < 4 && r.event_count; i++) {
        uint64_t t = i == 3 ? UINT64_MAX : atf__load_le64(atf_index_reader_raw(&r, (r.event_count - 1) * i / 2));
        uint64_t probes = 0, pos = atf_index_reader_seek(&r, t, &probes);
        FUZZ_CHECK(pos <= r.event_count && probes <= 65);
    }
    rc = atf_index_reader_verify_crc(&r);
    FUZZ_CHECK(rc == ATF_OK || (rc == ATF_E_CRC && r.crc_state == ATF_CRC_MISMATCH));
    FUZZ_CHECK(atf_index_reader_verify_crc(&r) == rc);
    fuzz_packed_round_trip(events, (size_t)n, r.header.thread_id);
    if (r.counted == ATF_COUNT_FINALIZED && r.crc_state == ATF_CRC_OK && n == r.event_count)
        fuzz_packed_convert(data, size, events, n);
    free(events);
    atf_index_reader_close(&r);

    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    rc = atf_index_reader_open_memory(&r, data, size, "fuzz.atf", &opt);
    FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CRC);
    atf_index_reader_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_packed_file(data, size);
    fuzz_packed_payload(data, size);
    return 0;
}
