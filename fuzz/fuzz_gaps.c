/* fuzz_gaps.c - the side files of a thread (gaps.atf, pauses.atf), read by the thread
 * reader beside a fixed, valid index.atf.
 *
 * Input: the bytes of gaps.atf. A thread directory holding an index file of 16 events
 * (made once per process) gets the input as its gaps.atf, and is opened mapped and read.
 * Whatever the input, the open succeeds (the events are valid), the gaps kept are a
 * prefix of the records in index_seq order, each lost something, events_lost is their
 * sum, a damaged file is reported in the reader's error, and atf_thread_reader_gap_before
 * finds every gap kept. Then the same bytes, their magic made the pauses' when it was the
 * gaps', are its pauses.atf (the two files share their shape): the pauses kept are a
 * prefix of the records in index_seq order, none ends before it starts, paused_ns is their
 * length in all, and a damaged file is reported. See fuzz_common.h for the replay. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"

#define FUZZ_GAPS_EVENTS 16u

/* thread_0/index.atf: a placeholder header and 16 events (counted from the size). */
static const char *fuzz_gaps_thread_dir(void) {
    static char dir[600];
    if (!dir[0]) {
        uint8_t file[ATF_HEADER_SIZE + FUZZ_GAPS_EVENTS * ATF_INDEX_EVENT_SIZE];
        char path[700];
        atf_index_header h;
        atf_index_event e;
        uint32_t i;
        memset(&h, 0, sizeof h);
        h.endian = ATF_ENDIAN_LITTLE;
        h.version = ATF_LAYOUT_1;
        h.event_size = ATF_INDEX_EVENT_SIZE;
        h.events_offset = ATF_HEADER_SIZE;
        atf_index_header_encode(&h, file);
        for (i = 0; i < FUZZ_GAPS_EVENTS; i++) {
            memset(&e, 0, sizeof e);
            e.timestamp_ns = 1000u + i;
            e.function_id = i / 2;
            e.kind = i % 2 ? ATF_EVENT_RETURN : ATF_EVENT_CALL;
            e.detail_seq = ATF_NO_DETAIL;
            atf_index_event_encode(ATF_LAYOUT_1, &e, file + ATF_HEADER_SIZE + i * ATF_INDEX_EVENT_SIZE);
        }
        snprintf(dir, sizeof dir, "%s/thread_0", fuzz_scratch_dir());
        fuzz_mkdir(dir);
        snprintf(path, sizeof path, "%s/index.atf", dir);
        fuzz_write_file(path, file, sizeof file);
    }
    return dir;
}

static void fuzz_gaps_check(const uint8_t *data, size_t size, int no_mmap) {
    atf_thread_reader t;
    atf_reader_options opt;
    uint64_t records = size >= ATF_GAPS_HEADER_SIZE ? (size - ATF_GAPS_HEADER_SIZE) / ATF_GAP_RECORD_SIZE : 0;
    uint64_t sum = 0;
    size_t i;
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = no_mmap;
    FUZZ_CHECK(atf_thread_reader_open(&t, fuzz_gaps_thread_dir(), &opt) == ATF_OK);
    FUZZ_CHECK(t.index.event_count == FUZZ_GAPS_EVENTS);
    FUZZ_CHECK(t.gap_count <= records);
    for (i = 0; i < t.gap_count; i++) {
        atf_gap g;
        const atf_gap *found = atf_thread_reader_gap_before(&t, t.gaps[i].index_seq);
        atf_gap_decode(data + ATF_GAPS_HEADER_SIZE + i * ATF_GAP_RECORD_SIZE, &g);
        FUZZ_CHECK(g.index_seq == t.gaps[i].index_seq && g.index_lost == t.gaps[i].index_lost &&
                   g.detail_lost == t.gaps[i].detail_lost && g.reason == t.gaps[i].reason &&
                   g.first_lost_ns == t.gaps[i].first_lost_ns);
        FUZZ_CHECK(t.gaps[i].index_lost > 0);
        FUZZ_CHECK(i == 0 || t.gaps[i].index_seq >= t.gaps[i - 1].index_seq);
        FUZZ_CHECK(found && found->index_seq == t.gaps[i].index_seq);
        sum += t.gaps[i].index_lost;
    }
    FUZZ_CHECK(sum == t.events_lost);
    /* every record kept, or the file's damage is reported */
    if (size >= ATF_GAPS_HEADER_SIZE && t.gap_count < records) FUZZ_CHECK(t.error.code != ATF_OK);
    if (size < ATF_GAPS_HEADER_SIZE || atf_gaps_header_decode(data, NULL) != ATF_OK)
        FUZZ_CHECK(t.gap_count == 0 && t.error.code != ATF_OK);
    atf_thread_reader_close(&t);
}

static void fuzz_pauses_check(const uint8_t *data, size_t size, int no_mmap) {
    atf_thread_reader t;
    atf_reader_options opt;
    uint64_t records = size >= ATF_PAUSES_HEADER_SIZE ? (size - ATF_PAUSES_HEADER_SIZE) / ATF_PAUSE_RECORD_SIZE : 0;
    uint64_t sum = 0;
    size_t i;
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = no_mmap;
    FUZZ_CHECK(atf_thread_reader_open(&t, fuzz_gaps_thread_dir(), &opt) == ATF_OK);
    FUZZ_CHECK(t.pause_count <= records && t.gap_count == 0);
    for (i = 0; i < t.pause_count; i++) {
        atf_pause p;
        atf_pause_decode(data + ATF_PAUSES_HEADER_SIZE + i * ATF_PAUSE_RECORD_SIZE, &p);
        FUZZ_CHECK(p.index_seq == t.pauses[i].index_seq && p.start_ns == t.pauses[i].start_ns &&
                   p.end_ns == t.pauses[i].end_ns && p.reason == t.pauses[i].reason);
        FUZZ_CHECK(t.pauses[i].start_ns <= t.pauses[i].end_ns);
        FUZZ_CHECK(i == 0 || t.pauses[i].index_seq >= t.pauses[i - 1].index_seq);
        sum += t.pauses[i].end_ns - t.pauses[i].start_ns;
    }
    FUZZ_CHECK(sum == t.paused_ns);
    if (size >= ATF_PAUSES_HEADER_SIZE && t.pause_count < records) FUZZ_CHECK(t.error.code != ATF_OK);
    if (size < ATF_PAUSES_HEADER_SIZE || atf_pauses_header_decode(data, NULL) != ATF_OK)
        FUZZ_CHECK(t.pause_count == 0 && t.error.code != ATF_OK);
    atf_thread_reader_close(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char gaps[700], pauses[700];
    uint8_t *copy = (uint8_t *)malloc(size ? size : 1);
    snprintf(gaps, sizeof gaps, "%s/gaps.atf", fuzz_gaps_thread_dir());
    snprintf(pauses, sizeof pauses, "%s/pauses.atf", fuzz_gaps_thread_dir());
    fuzz_write_file(gaps, data, size);
    fuzz_gaps_check(data, size, 0);
    fuzz_gaps_check(data, size, 1);
    remove(gaps);
    if (copy) {
        memcpy(copy, data, size);
        if (size >= 4 && memcmp(copy, ATF_GAPS_MAGIC, 4) == 0) memcpy(copy, ATF_PAUSES_MAGIC, 4);
        fuzz_write_file(pauses, copy, size);
        fuzz_pauses_check(copy, size, 0);
        fuzz_pauses_check(copy, size, 1);
        remove(pauses);
        free(copy);
    }
    return 0;
}
