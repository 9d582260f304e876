/* fuzz_thread.c - thread reader: an index file and a detail file, and the links between.
 *
 * Input: a u32 little-endian prefix, then the index file's bytes, then the detail file's.
 *   bits 0..28  length of the index part (clamped to what the input holds)
 *   bit 29      open with verify_crc
 *   bit 30      map the files (default: read into exact-size heap buffers)
 *   bit 31      no detail.atf at all
 * An input shorter than 4 bytes is an index file alone.
 *
 * The pair is opened twice: as files (thread_0/index.atf + detail.atf in a scratch
 * directory, through atf_thread_reader_open) and from exact-size heap copies (the two
 * readers' open_memory, joined in an atf_thread_reader by hand). Both must agree; then
 * every link is followed both ways (detail_of, index_of, up to FUZZ_MAX_EVENTS) and
 * verify_links must agree with what was followed. See fuzz_common.h for the replay. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"

/* Follows every link of an open thread reader and checks verify_links against it. */
static void walk_links(atf_thread_reader *t) {
    uint64_t i, n, broken = 0;
    atf_index_event ev, back;
    atf_detail_event d;
    atf_result rc, links;
    n = t->index.event_count < FUZZ_MAX_EVENTS ? t->index.event_count : FUZZ_MAX_EVENTS;
    for (i = 0; i < n; i++) {
        FUZZ_CHECK(atf_index_reader_get(&t->index, i, &ev) == ATF_OK);
        rc = atf_thread_reader_detail_of(t, i, &d);
        if (ev.detail_seq == ATF_NO_DETAIL) {
            FUZZ_CHECK(rc == ATF_E_NO_DETAIL);
            continue;
        }
        FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CORRUPT);
        if (rc == ATF_OK) {
            FUZZ_CHECK(t->has_detail && ev.detail_seq < t->detail.event_count);
            FUZZ_CHECK(d.header.index_seq == i);
            FUZZ_CHECK(atf_thread_reader_index_of(t, ev.detail_seq, &back) == ATF_OK);
            FUZZ_CHECK(back.detail_seq == ev.detail_seq);
        } else {
            broken++;
        }
    }
    n = t->has_detail ? t->detail.event_count : 0;
    if (n > FUZZ_MAX_EVENTS) n = FUZZ_MAX_EVENTS;
    for (i = 0; i < n; i++) {
        rc = atf_thread_reader_index_of(t, i, &back);
        FUZZ_CHECK(rc == ATF_OK || rc == ATF_E_CORRUPT);
        if (rc == ATF_OK) FUZZ_CHECK(back.detail_seq == i);
        else broken++;
    }
    FUZZ_CHECK(atf_thread_reader_index_of(t, t->has_detail ? t->detail.event_count : 0, &back) ==
               ATF_E_RANGE);
    links = atf_thread_reader_verify_links(t);
    FUZZ_CHECK(links == ATF_OK || links == ATF_E_CORRUPT);
    if (t->index.event_count <= FUZZ_MAX_EVENTS && (!t->has_detail || t->detail.event_count <= FUZZ_MAX_EVENTS))
        FUZZ_CHECK((links == ATF_OK) == (broken == 0));
    if (links != ATF_OK) FUZZ_CHECK(t->error.code == links);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *scratch = fuzz_scratch_dir();
    char dir[1024], index_path[1100], detail_path[1100];
    const uint8_t *index_part = data, *detail_part = NULL;
    size_t index_len = size, detail_len = 0;
    int with_detail = 0;
    atf_reader_options opt;
    atf_thread_reader t, m;
    atf_result rc_file, rc_mem;
    memset(&opt, 0, sizeof opt);
    if (size >= 4) {
        uint32_t prefix = fuzz_le32(data);
        index_part = data + 4;
        index_len = prefix & 0x1FFFFFFFu;
        if (index_len > size - 4) index_len = size - 4;
        opt.verify_crc = (prefix >> 29) & 1u;
        opt.no_mmap = !((prefix >> 30) & 1u);
        with_detail = !((prefix >> 31) & 1u);
        detail_part = index_part + index_len;
        detail_len = size - 4 - index_len;
    }

    /* as files */
    snprintf(dir, sizeof dir, "%s/thread_0", scratch);
    fuzz_mkdir(dir);
    snprintf(index_path, sizeof index_path, "%s/index.atf", dir);
    snprintf(detail_path, sizeof detail_path, "%s/detail.atf", dir);
    fuzz_write_file(index_path, index_part, index_len);
    if (with_detail) fuzz_write_file(detail_path, detail_part, detail_len);
    else unlink(detail_path);
    rc_file = atf_thread_reader_open(&t, dir, &opt);
    if (rc_file == ATF_OK) {
        FUZZ_CHECK(t.has_detail == with_detail);
        walk_links(&t);
    } else {
        FUZZ_CHECK(t.error.code == rc_file);
    }

    /* from exact-size heap copies */
    memset(&m, 0, sizeof m);
    {
        uint8_t *ix = fuzz_copy(index_part, index_len);
        uint8_t *dt = with_detail ? fuzz_copy(detail_part, detail_len) : NULL;
        rc_mem = atf_index_reader_open_memory(&m.index, ix, index_len, index_path, &opt);
        if (rc_mem == ATF_OK && with_detail) {
            rc_mem = atf_detail_reader_open_memory(&m.detail, dt, detail_len, detail_path, &opt);
            if (rc_mem == ATF_OK) m.has_detail = 1;
            else atf_index_reader_close(&m.index);
        }
        FUZZ_CHECK(rc_mem == rc_file);
        if (rc_mem == ATF_OK) {
            FUZZ_CHECK(m.index.event_count == t.index.event_count);
            FUZZ_CHECK(m.index.counted == t.index.counted && m.index.crc_state == t.index.crc_state);
            FUZZ_CHECK(!m.has_detail || (m.detail.event_count == t.detail.event_count &&
                                         m.detail.counted == t.detail.counted));
            walk_links(&m);
            atf_thread_reader_close(&m);
        }
        free(ix);
        free(dt);
    }
    if (rc_file == ATF_OK) atf_thread_reader_close(&t);
    return 0;
}
