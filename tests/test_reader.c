/* test_reader.c - the index, detail and thread readers against the hand-built fixtures of
 * tests/fixtures.h: header checks, footer search, recovery rules, CRC states, O(1) access,
 * both-way links, and 2000 mutated files.
 *
 * Every single-file fixture is opened three ways, which must agree: open_memory over an
 * exact-size heap copy (so a sanitizer sees any over-read), open through mmap, and open
 * with no_mmap. Expected values come from the fixture formulas or from reading the
 * fixture's bytes by hand with fx_get*, never from atf.h's decoders. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "fixtures.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#if defined(_WIN32) /* the POSIX calls below, through the C runtime */
#  include <direct.h>
#  include <io.h>
#  define mkdir(path, mode) _mkdir(path)
#  define rmdir(path) _rmdir(path)
static char *mkdtemp(char *t) { return _mktemp(t) && _mkdir(t) == 0 ? t : NULL; }
#else
#  include <unistd.h>
#endif

#define ANY UINT64_MAX /* an expectation that is not checked */
#define FAIL(msg) harness__fail(__FILE__, __LINE__, msg)

static char tmp_dir[512];

static void tmp_path(char *buf, size_t cap, const char *leaf) {
    snprintf(buf, cap, "%s/%s", tmp_dir, leaf);
}

static int write_bytes(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    if (len && fwrite(data, 1, len, f) != len) {
        fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- what a fixture must open as ---- */
typedef struct expect {
    atf_result rc;
    atf_recovery recovery;
    uint64_t count;          /* ANY: not checked */
    uint64_t torn;           /* ANY: not checked */
    atf_crc_state crc;       /* state right after open */
    int has_footer;
    uint64_t err_offset;     /* failures: error.offset, ANY: not checked */
} expect;

static expect ok(atf_recovery recovery, uint64_t count, uint64_t torn, atf_crc_state crc) {
    expect x;
    x.rc = ATF_OK;
    x.recovery = recovery;
    x.count = count;
    x.torn = torn;
    x.crc = crc;
    x.has_footer = recovery != ATF_RECOVERY_FROM_SIZE;
    x.err_offset = ANY;
    return x;
}

static expect fails(atf_result rc) {
    expect x = ok(ATF_RECOVERY_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER);
    x.rc = rc;
    return x;
}

static expect fails_at(atf_result rc, uint64_t offset) {
    expect x = fails(rc);
    x.err_offset = offset;
    return x;
}

enum { MODE_MEMORY = 0, MODE_MMAP = 1, MODE_READ = 2, MODE_COUNT = 3 };
static const char *const mode_names[MODE_COUNT] = { "open_memory", "open (mmap)",
                                                    "open (no_mmap)" };

/* Prints where a failed check came from when checks failed since `before`. */
static void blame(int before, const char *file, int line, const char *what) {
    if (harness__failures_in_test != before) printf("    ^ %s, fixture at %s:%d\n", what, file, line);
}

/* ---- hand decoding of the fixture bytes (independent of atf.h) ---- */
static atf_index_event hand_index_event(int layout, const uint8_t *p) {
    atf_index_event e;
    memset(&e, 0, sizeof e);
    e.timestamp_ns = fx_get64(p, 0);
    e.function_id = fx_get64(p, 8);
    if (layout == 2) {
        e.detail_seq = fx_get64(p, 16);
        e.kind = p[24];
    } else {
        uint32_t d = fx_get32(p, 28);
        e.thread_id = fx_get32(p, 16);
        e.kind = fx_get32(p, 20);
        e.call_depth = fx_get32(p, 24);
        e.detail_seq = d == 0xFFFFFFFFu ? UINT64_MAX : d;
    }
    return e;
}

static atf_detail_event_header hand_record_header(int layout, const uint8_t *p) {
    atf_detail_event_header h;
    memset(&h, 0, sizeof h);
    h.total_length = fx_get32(p, 0);
    h.type = fx_get16(p, 4);
    h.flags = fx_get16(p, 6);
    if (layout == 2) {
        h.index_seq = fx_get64(p, 8);
    } else {
        h.index_seq = fx_get32(p, 8);
        h.thread_id = fx_get32(p, 12);
    }
    h.timestamp_ns = fx_get64(p, 16);
    return h;
}

#define CHECK_INDEX_EVENT(a, b) do { \
    CHECK_EQ((a).timestamp_ns, (b).timestamp_ns); CHECK_EQ((a).function_id, (b).function_id); \
    CHECK_EQ((a).detail_seq, (b).detail_seq); CHECK_EQ((a).thread_id, (b).thread_id); \
    CHECK_EQ((a).call_depth, (b).call_depth); CHECK_EQ((a).kind, (b).kind); \
} while (0)

#define CHECK_RECORD_HEADER(a, b) do { \
    CHECK_EQ((a).total_length, (b).total_length); CHECK_EQ((a).type, (b).type); \
    CHECK_EQ((a).flags, (b).flags); CHECK_EQ((a).index_seq, (b).index_seq); \
    CHECK_EQ((a).thread_id, (b).thread_id); CHECK_EQ((a).timestamp_ns, (b).timestamp_ns); \
} while (0)

/* ---- index: open one of three ways ---- */
typedef struct index_handle {
    atf_index_reader r;
    uint8_t *copy;
    char path[600];
    int mode;
} index_handle;

static atf_result index_open_mode(index_handle *h, const fx_buf *b, int mode, int verify) {
    atf_reader_options opt;
    memset(&opt, 0, sizeof opt);
    memset(&h->r, 0xA5, sizeof h->r); /* open must not rely on a zeroed struct */
    h->copy = NULL;
    h->mode = mode;
    opt.verify_crc = verify;
    opt.no_mmap = mode == MODE_READ;
    if (mode == MODE_MEMORY) {
        h->copy = (uint8_t *)malloc(b->len ? b->len : 1);
        if (!h->copy) abort();
        if (b->len) memcpy(h->copy, b->data, b->len);
        strcpy(h->path, "memory-index");
        return atf_index_reader_open_memory(&h->r, h->copy, b->len, h->path, &opt);
    }
    tmp_path(h->path, sizeof h->path, "index.atf");
    if (write_bytes(h->path, b->data, b->len) != 0) {
        FAIL("writing the fixture file failed");
        return ATF_E_IO;
    }
    return atf_index_reader_open(&h->r, h->path, &opt);
}

static void index_release(index_handle *h, atf_result rc) {
    if (rc == ATF_OK) atf_index_reader_close(&h->r);
    free(h->copy);
    h->copy = NULL;
    if (h->mode != MODE_MEMORY) remove(h->path);
}

/* Every readable event equals the fixture's bytes, and nothing past the count reads. */
static void check_index_events(const atf_index_reader *r, const fx_buf *b) {
    uint64_t eo = fx_get64(b->data, 32), i;
    int layout = b->data[5];
    atf_index_event ev;
    CHECK_EQ(layout, r->layout);
    if (eo > b->len || r->event_count > (b->len - eo) / 32u) {
        FAIL("event_count exceeds the file");
        return;
    }
    for (i = 0; i < r->event_count; i++) {
        const uint8_t *p = b->data + eo + 32u * i;
        const uint8_t *raw = atf_index_reader_raw(r, i);
        atf_index_event want = hand_index_event(layout, p);
        atf_result rc = atf_index_reader_get(r, i, &ev);
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) return;
        CHECK_INDEX_EVENT(want, ev);
        CHECK(raw != NULL);
        if (raw) CHECK_MEM(p, raw, 32);
    }
    CHECK_RESULT(ATF_E_RANGE, atf_index_reader_get(r, r->event_count, &ev));
    CHECK_RESULT(ATF_E_RANGE, atf_index_reader_get(r, r->event_count + 1000u, &ev));
    CHECK_RESULT(ATF_E_RANGE, atf_index_reader_get(r, UINT64_MAX, &ev));
    CHECK(atf_index_reader_raw(r, r->event_count) == NULL);
    CHECK(atf_index_reader_raw(r, UINT64_MAX) == NULL);
}

static void check_index_at(const char *file, int line, const fx_buf *b, expect x) {
    int mode;
    for (mode = 0; mode < MODE_COUNT; mode++) {
        int before = harness__failures_in_test;
        index_handle h;
        atf_result rc = index_open_mode(&h, b, mode, 0);
        CHECK_RESULT(x.rc, rc);
        if (rc == ATF_OK && x.rc == ATF_OK) {
            CHECK_EQ(x.recovery, h.r.recovery);
            if (x.count != ANY) CHECK_EQ(x.count, h.r.event_count);
            if (x.torn != ANY) CHECK_EQ(x.torn, h.r.torn_bytes);
            CHECK_EQ(x.crc, h.r.crc_state);
            CHECK_EQ(x.has_footer, h.r.has_footer);
            CHECK_RESULT(ATF_OK, h.r.error.code);
            check_index_events(&h.r, b);
        } else if (rc != ATF_OK) {
            CHECK_RESULT(rc, h.r.error.code);
            CHECK(strstr(h.r.error.path, mode == MODE_MEMORY ? "memory-index" : "index.atf") != NULL);
            if (x.err_offset != ANY) CHECK_EQ(x.err_offset, h.r.error.offset);
        }
        index_release(&h, rc);
        blame(before, file, line, mode_names[mode]);
    }
}
#define CHECK_INDEX(b, x) check_index_at(__FILE__, __LINE__, (b), (x))

/* After a plain open, verify_crc gives `rc` and `state`; on a mismatch error.expected is
 * the footer's checksum and error.found the computed one. With verify_crc at open, a
 * mismatch fails open the same way. */
static void check_index_crc_at(const char *file, int line, const fx_buf *b, atf_result want_rc,
                               atf_crc_state state, uint32_t footer_crc, uint32_t computed) {
    int mode, verify;
    for (verify = 0; verify <= 1; verify++) {
        for (mode = 0; mode < MODE_COUNT; mode++) {
            int before = harness__failures_in_test;
            index_handle h;
            atf_result rc = index_open_mode(&h, b, mode, verify);
            if (verify && want_rc != ATF_OK) {
                CHECK_RESULT(want_rc, rc);
                CHECK_RESULT(want_rc, h.r.error.code);
                CHECK_EQ(1, h.r.error.has_values);
                CHECK_EQ(footer_crc, h.r.error.expected);
                CHECK_EQ(computed, h.r.error.found);
            } else {
                CHECK_RESULT(ATF_OK, rc);
                if (rc == ATF_OK) {
                    if (verify) CHECK_EQ(state, h.r.crc_state);
                    CHECK_RESULT(want_rc, atf_index_reader_verify_crc(&h.r));
                    CHECK_EQ(state, h.r.crc_state);
                    if (state == ATF_CRC_OK || state == ATF_CRC_MISMATCH)
                        CHECK_EQ(computed, h.r.crc_found);
                    if (want_rc != ATF_OK) {
                        CHECK_RESULT(want_rc, h.r.error.code);
                        CHECK_EQ(1, h.r.error.has_values);
                        CHECK_EQ(footer_crc, h.r.error.expected);
                        CHECK_EQ(computed, h.r.error.found);
                    }
                    /* a second call says the same */
                    CHECK_RESULT(want_rc, atf_index_reader_verify_crc(&h.r));
                    CHECK_EQ(state, h.r.crc_state);
                    check_index_events(&h.r, b);
                }
            }
            index_release(&h, rc);
            blame(before, file, line, verify ? "verify_crc at open" : mode_names[mode]);
        }
    }
}
#define CHECK_INDEX_CRC(b, rc, st, fcrc, comp) \
    check_index_crc_at(__FILE__, __LINE__, (b), (rc), (st), (fcrc), (comp))

/* ---- detail: open one of three ways ---- */
typedef struct detail_handle {
    atf_detail_reader r;
    uint8_t *copy;
    char path[600];
    int mode;
} detail_handle;

static atf_result detail_open_mode(detail_handle *h, const fx_buf *b, int mode, int verify) {
    atf_reader_options opt;
    memset(&opt, 0, sizeof opt);
    memset(&h->r, 0xA5, sizeof h->r);
    h->copy = NULL;
    h->mode = mode;
    opt.verify_crc = verify;
    opt.no_mmap = mode == MODE_READ;
    if (mode == MODE_MEMORY) {
        h->copy = (uint8_t *)malloc(b->len ? b->len : 1);
        if (!h->copy) abort();
        if (b->len) memcpy(h->copy, b->data, b->len);
        strcpy(h->path, "memory-detail");
        return atf_detail_reader_open_memory(&h->r, h->copy, b->len, h->path, &opt);
    }
    tmp_path(h->path, sizeof h->path, "detail.atf");
    if (write_bytes(h->path, b->data, b->len) != 0) {
        FAIL("writing the fixture file failed");
        return ATF_E_IO;
    }
    return atf_detail_reader_open(&h->r, h->path, &opt);
}

static void detail_release(detail_handle *h, atf_result rc) {
    if (rc == ATF_OK) atf_detail_reader_close(&h->r);
    free(h->copy);
    h->copy = NULL;
    if (h->mode != MODE_MEMORY) remove(h->path);
}

/* Walks the fixture by hand alongside the reader: offsets, headers, payload bytes. */
static void check_detail_events(const detail_handle *h, const fx_buf *b) {
    const atf_detail_reader *r = &h->r;
    uint64_t o = fx_get64(b->data, 20), i;
    int layout = b->data[5];
    atf_detail_event ev;
    CHECK_EQ(layout, r->layout);
    for (i = 0; i < r->event_count; i++) {
        uint32_t tl;
        atf_detail_event_header want;
        atf_result rc;
        if (o > b->len || b->len - o < 24) {
            FAIL("event_count exceeds the records in the file");
            return;
        }
        tl = fx_get32(b->data, (size_t)o);
        if (tl < 24 || tl > b->len - o) {
            FAIL("the reader counts a record the walk cannot have accepted");
            return;
        }
        want = hand_record_header(layout, b->data + o);
        rc = atf_detail_reader_get(r, i, &ev);
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) return;
        CHECK_EQ(o, ev.offset);
        CHECK_RECORD_HEADER(want, ev.header);
        CHECK_EQ(tl - 24u, ev.payload_len);
        if (h->mode == MODE_MEMORY) CHECK(ev.payload == h->copy + o + 24);
        if (ev.payload && ev.payload_len == tl - 24u)
            CHECK_MEM(b->data + o + 24, ev.payload, tl - 24u);
        o += tl;
    }
    CHECK_EQ(o - fx_get64(b->data, 20), r->bytes_length);
    CHECK_RESULT(ATF_E_RANGE, atf_detail_reader_get(r, r->event_count, &ev));
    CHECK_RESULT(ATF_E_RANGE, atf_detail_reader_get(r, UINT64_MAX, &ev));
}

static void check_detail_at(const char *file, int line, const fx_buf *b, expect x) {
    int mode;
    for (mode = 0; mode < MODE_COUNT; mode++) {
        int before = harness__failures_in_test;
        detail_handle h;
        atf_result rc = detail_open_mode(&h, b, mode, 0);
        CHECK_RESULT(x.rc, rc);
        if (rc == ATF_OK && x.rc == ATF_OK) {
            CHECK_EQ(x.recovery, h.r.recovery);
            if (x.count != ANY) CHECK_EQ(x.count, h.r.event_count);
            if (x.torn != ANY) CHECK_EQ(x.torn, h.r.torn_bytes);
            CHECK_EQ(x.crc, h.r.crc_state);
            CHECK_EQ(x.has_footer, h.r.has_footer);
            CHECK_RESULT(ATF_OK, h.r.error.code);
            check_detail_events(&h, b);
        } else if (rc != ATF_OK) {
            CHECK_RESULT(rc, h.r.error.code);
            CHECK(strstr(h.r.error.path, mode == MODE_MEMORY ? "memory-detail" : "detail.atf") != NULL);
            if (x.err_offset != ANY) CHECK_EQ(x.err_offset, h.r.error.offset);
        }
        detail_release(&h, rc);
        blame(before, file, line, mode_names[mode]);
    }
}
#define CHECK_DETAIL(b, x) check_detail_at(__FILE__, __LINE__, (b), (x))

static void check_detail_crc_at(const char *file, int line, const fx_buf *b, atf_result want_rc,
                                atf_crc_state state, uint32_t footer_crc, uint32_t computed) {
    int mode, verify;
    for (verify = 0; verify <= 1; verify++) {
        for (mode = 0; mode < MODE_COUNT; mode++) {
            int before = harness__failures_in_test;
            detail_handle h;
            atf_result rc = detail_open_mode(&h, b, mode, verify);
            if (verify && want_rc != ATF_OK) {
                CHECK_RESULT(want_rc, rc);
                CHECK_RESULT(want_rc, h.r.error.code);
                CHECK_EQ(1, h.r.error.has_values);
                CHECK_EQ(footer_crc, h.r.error.expected);
                CHECK_EQ(computed, h.r.error.found);
            } else {
                CHECK_RESULT(ATF_OK, rc);
                if (rc == ATF_OK) {
                    if (verify) CHECK_EQ(state, h.r.crc_state);
                    CHECK_RESULT(want_rc, atf_detail_reader_verify_crc(&h.r));
                    CHECK_EQ(state, h.r.crc_state);
                    if (state == ATF_CRC_OK || state == ATF_CRC_MISMATCH)
                        CHECK_EQ(computed, h.r.crc_found);
                    if (want_rc != ATF_OK) {
                        CHECK_RESULT(want_rc, h.r.error.code);
                        CHECK_EQ(1, h.r.error.has_values);
                        CHECK_EQ(footer_crc, h.r.error.expected);
                        CHECK_EQ(computed, h.r.error.found);
                    }
                    CHECK_RESULT(want_rc, atf_detail_reader_verify_crc(&h.r));
                    CHECK_EQ(state, h.r.crc_state);
                    check_detail_events(&h, b);
                }
            }
            detail_release(&h, rc);
            blame(before, file, line, verify ? "verify_crc at open" : mode_names[mode]);
        }
    }
}
#define CHECK_DETAIL_CRC(b, rc, st, fcrc, comp) \
    check_detail_crc_at(__FILE__, __LINE__, (b), (rc), (st), (fcrc), (comp))

/* ---- spec shorthands ---- */
static fx_index_spec ispec(int layout, uint64_t count, int finalized, int footer, int crc,
                           size_t torn) {
    fx_index_spec s;
    memset(&s, 0, sizeof s);
    s.layout = layout;
    s.count = count;
    s.finalized = finalized;
    s.footer = footer;
    s.crc = crc;
    s.torn = torn;
    return s;
}

static fx_detail_spec dspec(int layout, uint64_t count, int finalized, int footer, int crc,
                            size_t torn) {
    fx_detail_spec s;
    memset(&s, 0, sizeof s);
    s.layout = layout;
    s.count = count;
    s.finalized = finalized;
    s.footer = footer;
    s.crc = crc;
    s.torn = torn;
    s.stride = 2;
    return s;
}

static fx_buf build_index(const fx_index_spec *s) {
    fx_buf b = { NULL, 0, 0 };
    fx_index_build(&b, s);
    return b;
}

static fx_buf build_detail(const fx_detail_spec *s) {
    fx_buf b = { NULL, 0, 0 };
    fx_detail_build(&b, s);
    return b;
}

/* ======================= index reader ======================= */

static void index_finalized(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        uint32_t crc = fx_crc32c(b.data + 64, 20 * 32);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FINALIZED, 20, 0, ATF_CRC_UNCHECKED));
        CHECK_INDEX_CRC(&b, ATF_OK, ATF_CRC_OK, crc, crc);
        fx_buf_free(&b);
    }
}

/* Decoded fields equal the fixture formulas; layout 1's 0xFFFFFFFF reads as ATF_NO_DETAIL,
 * layout 2 has no thread id or depth; the header and footer are decoded. */
static void index_get_fields(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 30, 1, 1, 1, 0);
        fx_buf b;
        atf_index_reader r;
        atf_result rc;
        uint64_t i;
        s.stride = 3;
        b = build_index(&s);
        rc = atf_index_reader_open_memory(&r, b.data, b.len, "fields", NULL);
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) {
            fx_buf_free(&b);
            continue;
        }
        CHECK_EQ(layout, r.layout);
        CHECK_EQ(layout, r.header.version);
        CHECK_EQ(1, r.header.endian);
        CHECK_EQ(FX_ARCH, r.header.arch);
        CHECK_EQ(FX_OS, r.header.os);
        CHECK_EQ(1, r.header.flags);
        CHECK_EQ(FX_THREAD_ID, r.header.thread_id);
        CHECK_EQ(FX_CLOCK, r.header.clock_type);
        CHECK_EQ(32, r.header.event_size);
        CHECK_EQ(30, r.header.event_count);
        CHECK_EQ(64, r.header.events_offset);
        CHECK_EQ(64 + 30 * 32, r.header.footer_offset);
        CHECK_EQ(fx_ts(0), r.header.time_start_ns);
        CHECK_EQ(fx_ts(29), r.header.time_end_ns);
        CHECK_EQ(30, r.footer.event_count);
        CHECK_EQ(30 * 32, r.footer.bytes_written);
        CHECK_EQ(fx_ts(0), r.footer.time_start_ns);
        CHECK_EQ(fx_ts(29), r.footer.time_end_ns);
        CHECK_EQ(fx_crc32c(b.data + 64, 30 * 32), r.footer.checksum);
        for (i = 0; i < 30; i++) {
            atf_index_event ev;
            CHECK_RESULT(ATF_OK, atf_index_reader_get(&r, i, &ev));
            CHECK_EQ(fx_ts(i), ev.timestamp_ns);
            CHECK_EQ(fx_function_id(i), ev.function_id);
            CHECK_EQ(fx_kind(i), ev.kind);
            CHECK_EQ(fx_detail_seq_of(3, i), ev.detail_seq);
            CHECK_EQ(layout == 1 ? FX_THREAD_ID : 0, ev.thread_id);
            CHECK_EQ(layout == 1 ? fx_call_depth(i) : 0, ev.call_depth);
            if (!fx_has_detail(3, i)) CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
        }
        atf_index_reader_close(&r);
        fx_buf_free(&b);
    }
}

/* A wider header: events_offset 200 with a gap after the header. */
static void index_events_offset_gap(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 9, 1, 1, 1, 0);
        fx_buf b;
        s.events_offset = 200;
        b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FINALIZED, 9, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
        s.finalized = s.footer = 0;
        s.torn = 5;
        b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 9, 5, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

static void index_crc_zero(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 0, 0);
        fx_buf b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FINALIZED, 20, 0, ATF_CRC_NOT_COMPUTED));
        CHECK_INDEX_CRC(&b, ATF_OK, ATF_CRC_NOT_COMPUTED, 0, 0);
        fx_buf_free(&b);
    }
}

static void index_no_footer(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 0, 0, 0, 0);
        fx_buf b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 20, 0, ATF_CRC_NO_FOOTER));
        CHECK_INDEX_CRC(&b, ATF_OK, ATF_CRC_NO_FOOTER, 0, 0);
        fx_buf_free(&b);
        /* a finalized header whose footer never made it: footer_offset + 64 > size */
        s.finalized = 1;
        b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 20, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

/* 1..31 stray bytes of a half-written event are ignored. */
static void index_torn(void) {
    int layout;
    size_t torn;
    for (layout = 1; layout <= 2; layout++) {
        for (torn = 1; torn < 32; torn++) {
            fx_index_spec s = ispec(layout, 20, 0, 0, 0, torn);
            fx_buf b = build_index(&s);
            CHECK_EQ(64 + 20 * 32 + torn, b.len);
            CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 20, torn, ATF_CRC_NO_FOOTER));
            fx_buf_free(&b);
        }
    }
}

/* A finalized file cut in the middle of its footer: 30 footer bytes remain. */
static void index_footer_cut(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        fx_buf_truncate(&b, 64 + 20 * 32 + 30);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 20, 30, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

/* Cut in the second half of its footer: 40 footer bytes remain, so the last whole
 * 32-byte slot is the footer's first half. It must not be read as an event. */
static void index_footer_cut_late(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 0, 1, 1, 0);
        fx_buf b = build_index(&s);
        fx_buf_truncate(&b, 64 + 20 * 32 + 40);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 20, 40, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

static void index_footer_at_end(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 0, 1, 1, 0);
        fx_buf b = build_index(&s);
        uint32_t crc = fx_crc32c(b.data + 64, 20 * 32);
        CHECK_EQ(0, fx_get64(b.data, 40));
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 20, 0, ATF_CRC_UNCHECKED));
        CHECK_INDEX_CRC(&b, ATF_OK, ATF_CRC_OK, crc, crc);
        fx_buf_free(&b);
        /* legacy writer: footer at the end with checksum 0 */
        s.crc = 0;
        b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 20, 0, ATF_CRC_NOT_COMPUTED));
        fx_buf_free(&b);
    }
}

/* A header footer_offset that does not lead to a footer (pointing into the events, or so
 * large that adding 64 overflows) falls back to the last 64 bytes. */
static void index_stale_footer_offset(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        fx_put64(b.data, 40, 64 + 5 * 32);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 20, 0, ATF_CRC_UNCHECKED));
        fx_put64(b.data, 40, UINT64_MAX - 10u);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 20, 0, ATF_CRC_UNCHECKED));
        fx_put64(b.data, 40, b.len - 63u);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 20, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
    }
}

/* Found through footer_offset, the footer wins even with bytes after it. */
static void index_bytes_after_footer(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        size_t at = fx_buf_grow(&b, 77);
        memset(b.data + at, 0x3C, 77);
        memcpy(b.data + at + 5, "2ITA", 4);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FINALIZED, 20, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
    }
}

static void index_footer_mismatch(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        expect x = ok(ATF_RECOVERY_FOOTER_MISMATCH, 20, 0, ATF_CRC_NO_FOOTER);
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b;
        /* footer claims 25 events and 25*32 bytes: disagrees with where it sits */
        s.footer_count_delta = 5;
        s.footer_bytes_delta = 5 * 32;
        b = build_index(&s);
        CHECK_INDEX(&b, x);
        CHECK_INDEX_CRC(&b, ATF_OK, ATF_CRC_NO_FOOTER, 0, 0);
        fx_buf_free(&b);
        /* bytes_written != event_count * 32 */
        s.footer_count_delta = 0;
        s.footer_bytes_delta = 1;
        b = build_index(&s);
        CHECK_INDEX(&b, x);
        fx_buf_free(&b);
        /* fewer events claimed than present */
        s.footer_count_delta = -3;
        s.footer_bytes_delta = -3 * 32;
        b = build_index(&s);
        CHECK_INDEX(&b, x);
        fx_buf_free(&b);
        /* the same, found at the end of a placeholder file */
        s.finalized = 0;
        b = build_index(&s);
        CHECK_INDEX(&b, x);
        fx_buf_free(&b);
        /* 7 torn bytes, then a footer at the end: counts from footer_pos, torn = 7 */
        s = ispec(layout, 20, 0, 1, 1, 7);
        b = build_index(&s);
        x.torn = 7;
        CHECK_INDEX(&b, x);
        fx_buf_free(&b);
        /* finalized header pointing at the same footer */
        s.finalized = 1;
        b = build_index(&s);
        CHECK_INDEX(&b, x);
        fx_buf_free(&b);
    }
}

/* A footer magic inside the header gap, before events_offset. No writer puts a footer
 * before the events, so a footer_offset below events_offset is not a candidate (like one
 * past the end of the file): the reader falls back to the last 64 bytes, where the real
 * footer agrees. */
static void index_footer_before_events(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 3, 1, 1, 1, 0);
        fx_buf b;
        s.events_offset = 192;
        b = build_index(&s);
        memcpy(b.data + 64, "2ITA", 4); /* a zero footer: count 0, bytes 0 */
        fx_put64(b.data, 40, 64);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 3, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
    }
}

/* The last 64 bytes count only when size >= events_offset + 64: here they start inside
 * the header (at offset 40), where the bytes happen to read "2ITA". */
static void index_footer_overlapping_header(void) {
    fx_index_spec s = ispec(1, 1, 0, 0, 0, 8);
    fx_buf b = build_index(&s);
    CHECK_EQ(104, b.len);
    memcpy(b.data + 40, "2ITA", 4);
    CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 1, 8, ATF_CRC_NO_FOOTER));
    fx_buf_free(&b);
}

static void index_zero_events(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 0, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        CHECK_EQ(128, b.len);
        /* the CRC of nothing is 0, which reads as "not computed" */
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FINALIZED, 0, 0, ATF_CRC_NOT_COMPUTED));
        fx_buf_free(&b);
        /* the placeholder header alone, and with a few torn bytes */
        s = ispec(layout, 0, 0, 0, 0, 0);
        b = build_index(&s);
        CHECK_EQ(64, b.len);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
        s.torn = 10;
        b = build_index(&s);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 0, 10, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

static void index_crc_mismatch(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        uint32_t good = fx_crc32c(b.data + 64, 20 * 32), bad;
        b.data[fx_flip_offset(0)] ^= 0xFFu;
        bad = fx_crc32c(b.data + 64, 20 * 32);
        CHECK(good != bad);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FINALIZED, 20, 0, ATF_CRC_UNCHECKED));
        CHECK_INDEX_CRC(&b, ATF_E_CRC, ATF_CRC_MISMATCH, good, bad);
        fx_buf_free(&b);
        /* the same through a footer at the end, and with a flip in the last event */
        s.finalized = 0;
        b = build_index(&s);
        b.data[64 + 19 * 32 + 31 - (layout == 2 ? 8 : 0)] ^= 0x01u;
        bad = fx_crc32c(b.data + 64, 20 * 32);
        CHECK_INDEX_CRC(&b, ATF_E_CRC, ATF_CRC_MISMATCH, good, bad);
        fx_buf_free(&b);
    }
}

static void index_bad_identity(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 4, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        b.data[3] = '3';
        CHECK_INDEX(&b, fails(ATF_E_MAGIC));
        b.data[4] = 0; /* magic still decides */
        CHECK_INDEX(&b, fails(ATF_E_MAGIC));
        b.data[3] = '2';
        CHECK_INDEX(&b, fails(ATF_E_ENDIAN));
        b.data[4] = 2;
        b.data[5] = 9; /* endian before version */
        CHECK_INDEX(&b, fails(ATF_E_ENDIAN));
        b.data[4] = 1;
        CHECK_INDEX(&b, fails(ATF_E_VERSION));
        b.data[5] = 0;
        CHECK_INDEX(&b, fails(ATF_E_VERSION));
        b.data[5] = 3;
        CHECK_INDEX(&b, fails(ATF_E_VERSION));
        b.data[5] = 255;
        CHECK_INDEX(&b, fails(ATF_E_VERSION));
        fx_buf_free(&b);
    }
    {   /* a detail file is not an index file */
        fx_detail_spec d = dspec(1, 3, 1, 1, 1, 0);
        fx_buf b = build_detail(&d);
        CHECK_INDEX(&b, fails(ATF_E_MAGIC));
        fx_buf_free(&b);
    }
}

static void index_bad_event_size(void) {
    static const uint32_t sizes[] = { 0, 24, 31, 33, 64, 0xFFFFFFFFu };
    int layout;
    size_t k;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 4, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            fx_put32(b.data, layout == 2 ? 20 : 24, sizes[k]);
            CHECK_INDEX(&b, fails(ATF_E_CORRUPT));
        }
        fx_buf_free(&b);
    }
    {   /* event_size is read at the layout's own offset: a layout-1 file with 32 at
           offset 20 only is corrupt, and a layout-2 file ignores offset 24 */
        fx_index_spec s = ispec(1, 4, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        fx_put32(b.data, 20, 32);
        fx_put32(b.data, 24, 0);
        CHECK_INDEX(&b, fails(ATF_E_CORRUPT));
        fx_buf_free(&b);
    }
}

static void index_bad_events_offset(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 4, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        fx_put64(b.data, 32, 0);
        CHECK_INDEX(&b, fails(ATF_E_CORRUPT));
        fx_put64(b.data, 32, 32);
        CHECK_INDEX(&b, fails(ATF_E_CORRUPT));
        fx_put64(b.data, 32, 63);
        CHECK_INDEX(&b, fails(ATF_E_CORRUPT));
        fx_put64(b.data, 32, b.len + 1u);
        CHECK_INDEX(&b, fails(ATF_E_TRUNCATED));
        fx_put64(b.data, 32, UINT64_MAX);
        CHECK_INDEX(&b, fails(ATF_E_TRUNCATED));
        fx_put64(b.data, 32, UINT64_MAX - 63u);
        CHECK_INDEX(&b, fails(ATF_E_TRUNCATED));
        /* exactly at the end: a valid, empty events section */
        fx_put64(b.data, 32, b.len);
        fx_put64(b.data, 40, 0);
        CHECK_INDEX(&b, ok(ATF_RECOVERY_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

static void index_short_files(void) {
    fx_index_spec s = ispec(2, 4, 1, 1, 1, 0);
    fx_buf b = build_index(&s);
    size_t n;
    for (n = 63; n > 0; n -= 9) {
        fx_buf_truncate(&b, n);
        CHECK_INDEX(&b, fails(ATF_E_TRUNCATED));
    }
    fx_buf_truncate(&b, 0);
    CHECK_INDEX(&b, fails(ATF_E_TRUNCATED));
    /* 63 bytes of garbage: size is checked before the magic */
    fx_buf_grow(&b, 63);
    memset(b.data, 'z', 63);
    CHECK_INDEX(&b, fails(ATF_E_TRUNCATED));
    fx_buf_free(&b);
}

static void index_open_errors(void) {
    atf_index_reader r;
    char path[600];
    tmp_path(path, sizeof path, "does-not-exist.atf");
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_index_reader_open(&r, path, NULL));
    CHECK_RESULT(ATF_E_NOT_FOUND, r.error.code);
    CHECK(strstr(r.error.path, "does-not-exist.atf") != NULL);
}

/* ======================= detail reader ======================= */

static void detail_finalized(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        uint32_t crc = fx_crc32c(b.data + 64, (size_t)fx_detail_bytes(8));
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FINALIZED, 8, 0, ATF_CRC_UNCHECKED));
        CHECK_DETAIL_CRC(&b, ATF_OK, ATF_CRC_OK, crc, crc);
        fx_buf_free(&b);
    }
}

static void detail_get_fields(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 12, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        atf_detail_reader r;
        atf_result rc = atf_detail_reader_open_memory(&r, b.data, b.len, "fields", NULL);
        uint64_t j;
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) {
            fx_buf_free(&b);
            continue;
        }
        CHECK_EQ(layout, r.layout);
        CHECK_EQ(layout, r.header.version);
        CHECK_EQ(FX_ARCH, r.header.arch);
        CHECK_EQ(FX_OS, r.header.os);
        CHECK_EQ(FX_THREAD_ID, r.header.thread_id);
        CHECK_EQ(64, r.header.events_offset);
        CHECK_EQ(12, r.header.event_count);
        CHECK_EQ(fx_detail_bytes(12), r.header.bytes_length);
        CHECK_EQ(fx_detail_index_seq(2, 0), r.header.index_seq_start);
        CHECK_EQ(fx_detail_index_seq(2, 11), r.header.index_seq_end);
        CHECK_EQ(12, r.footer.event_count);
        CHECK_EQ(fx_detail_bytes(12), r.footer.bytes_length);
        CHECK_EQ(fx_ts(fx_detail_index_seq(2, 0)), r.footer.time_start_ns);
        CHECK_EQ(fx_ts(fx_detail_index_seq(2, 11)), r.footer.time_end_ns);
        CHECK_EQ(fx_detail_bytes(12), r.bytes_length);
        for (j = 0; j < 12; j++) {
            atf_detail_event ev;
            atf_detail_payload p;
            uint64_t k = fx_detail_index_seq(2, j);
            unsigned reg;
            size_t n;
            memset(&ev, 0, sizeof ev);
            CHECK_RESULT(ATF_OK, atf_detail_reader_get(&r, j, &ev));
            CHECK_EQ(fx_detail_record_offset(&s, j), ev.offset);
            CHECK_EQ(fx_record_length(j), ev.header.total_length);
            CHECK_EQ(fx_kind(k) == FX_KIND_CALL ? ATF_DETAIL_FUNCTION_CALL
                                                : ATF_DETAIL_FUNCTION_RETURN, ev.header.type);
            CHECK_EQ(fx_detail_flags(j), ev.header.flags);
            CHECK_EQ(k, ev.header.index_seq);
            CHECK_EQ(layout == 1 ? FX_THREAD_ID : 0, ev.header.thread_id);
            CHECK_EQ(fx_ts(k), ev.header.timestamp_ns);
            CHECK_EQ(fx_record_length(j) - 24u, ev.payload_len);
            CHECK(ev.payload == b.data + ev.offset + 24);
            CHECK_RESULT(ATF_OK, atf_detail_payload_decode(ev.payload, ev.payload_len, &p));
            CHECK_EQ(fx_function_id(k), p.function_id);
            for (reg = 0; reg < 8; reg++) CHECK_EQ(fx_reg(j, reg), p.x[reg]);
            CHECK_EQ(fx_lr(k), p.lr);
            CHECK_EQ(fx_fp(j), p.fp);
            CHECK_EQ(fx_sp(j), p.sp);
            CHECK_EQ(fx_stack_size(j), p.stack_size);
            for (n = 0; n < p.stack_size; n++) CHECK_EQ(fx_stack_byte(j, n), p.stack[n]);
        }
        atf_detail_reader_close(&r);
        fx_buf_free(&b);
    }
}

static void detail_events_offset_gap(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 5, 1, 1, 1, 0);
        fx_buf b;
        s.events_offset = 160;
        b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FINALIZED, 5, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
        s.finalized = 0;
        b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 5, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
    }
}

static void detail_crc_zero(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 1, 1, 0, 0);
        fx_buf b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FINALIZED, 8, 0, ATF_CRC_NOT_COMPUTED));
        CHECK_DETAIL_CRC(&b, ATF_OK, ATF_CRC_NOT_COMPUTED, 0, 0);
        fx_buf_free(&b);
    }
}

static void detail_no_footer(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 0, 0, 0, 0);
        fx_buf b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 8, 0, ATF_CRC_NO_FOOTER));
        CHECK_DETAIL_CRC(&b, ATF_OK, ATF_CRC_NO_FOOTER, 0, 0);
        fx_buf_free(&b);
        /* finalized header, footer lost */
        s.finalized = 1;
        b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 8, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

/* A partial record header (1..23 bytes) at the end is ignored. */
static void detail_torn_header(void) {
    int layout;
    size_t torn;
    for (layout = 1; layout <= 2; layout++) {
        for (torn = 1; torn < 24; torn++) {
            fx_detail_spec s = dspec(layout, 8, 0, 0, 0, torn);
            fx_buf b = build_detail(&s);
            CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 8, torn, ATF_CRC_NO_FOOTER));
            fx_buf_free(&b);
        }
    }
}

/* A whole record header whose total_length runs past the end of the file. */
static void detail_torn_record(void) {
    static const size_t cuts[] = { 24, 25, 60, 123, 124 };
    int layout;
    size_t k;
    for (layout = 1; layout <= 2; layout++) {
        for (k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            fx_detail_spec s = dspec(layout, 8, 0, 0, 0, cuts[k]);
            fx_buf b = build_detail(&s);
            CHECK(cuts[k] < fx_record_length(8));
            CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 8, cuts[k], ATF_CRC_NO_FOOTER));
            fx_buf_free(&b);
        }
        {   /* the last record claims one byte more than the file has */
            fx_detail_spec s = dspec(layout, 6, 0, 0, 0, 0);
            fx_buf b = build_detail(&s);
            size_t off = (size_t)fx_detail_record_offset(&s, 5);
            fx_put32(b.data, off, (uint32_t)(b.len - off + 1u));
            CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 5, fx_record_length(5),
                                ATF_CRC_NO_FOOTER));
            /* the first record claims 4 GiB */
            fx_put32(b.data, 64, 0xFFFFFFFFu);
            CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 0, b.len - 64u, ATF_CRC_NO_FOOTER));
            fx_buf_free(&b);
        }
    }
}

/* total_length below 24 (0, 17, 23) fails open as corrupt at that record's offset, in a
 * crashed file as well as inside the section a footer covers. */
static void detail_bad_total_length(void) {
    static const uint32_t lens[] = { 0, 1, 17, 23 };
    int layout, fin;
    size_t k;
    for (layout = 1; layout <= 2; layout++) {
        for (fin = 0; fin <= 1; fin++) {
            fx_detail_spec s = dspec(layout, 6, fin, fin, fin, 0);
            fx_buf b = build_detail(&s);
            uint64_t off = fx_detail_record_offset(&s, 2);
            for (k = 0; k < sizeof lens / sizeof lens[0]; k++) {
                fx_put32(b.data, (size_t)off, lens[k]);
                CHECK_DETAIL(&b, fails_at(ATF_E_CORRUPT, off));
            }
            fx_put32(b.data, (size_t)off, fx_record_length(2));
            fx_put32(b.data, 64, 0); /* the very first record */
            CHECK_DETAIL(&b, fails_at(ATF_E_CORRUPT, 64));
            fx_buf_free(&b);
        }
    }
}

/* Records of exactly 24 bytes (no payload) are valid. */
static void detail_empty_payloads(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 0, 0, 0, 0, 0);
        fx_buf b = build_detail(&s);
        size_t j;
        for (j = 0; j < 3; j++) {
            size_t at = fx_buf_grow(&b, 24);
            fx_put32(b.data, at, 24);
            fx_put16(b.data, at + 4, 99);
            fx_put_link(b.data, at + 8, layout, j * 5u);
            fx_put64(b.data, at + 16, fx_ts(j * 5u));
        }
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 3, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

static void detail_footer_at_end(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 0, 1, 1, 0);
        fx_buf b = build_detail(&s);
        uint32_t crc = fx_crc32c(b.data + 64, (size_t)fx_detail_bytes(8));
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 8, 0, ATF_CRC_UNCHECKED));
        CHECK_DETAIL_CRC(&b, ATF_OK, ATF_CRC_OK, crc, crc);
        fx_buf_free(&b);
        s.crc = 0;
        b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 8, 0, ATF_CRC_NOT_COMPUTED));
        fx_buf_free(&b);
    }
}

/* A finalized header whose bytes_length does not lead to a footer: the last 64 bytes. */
static void detail_stale_header(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        fx_put64(b.data, 36, 100);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 8, 0, ATF_CRC_UNCHECKED));
        fx_put64(b.data, 36, UINT64_MAX - 20u);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 8, 0, ATF_CRC_UNCHECKED));
        /* event_count alone marks the header finalized */
        fx_put64(b.data, 36, 0);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 8, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
    }
}

/* Bytes after a footer found through the header are ignored. */
static void detail_bytes_after_footer(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        size_t at = fx_buf_grow(&b, 50);
        memset(b.data + at, 0xEE, 50);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FINALIZED, 8, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
    }
}

static void detail_footer_mismatch(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        expect x = ok(ATF_RECOVERY_FOOTER_MISMATCH, 8, 0, ATF_CRC_NO_FOOTER);
        fx_detail_spec s = dspec(layout, 8, 1, 1, 1, 0);
        fx_buf b;
        /* footer count one too many, one too few */
        s.footer_count_delta = 1;
        b = build_detail(&s);
        CHECK_DETAIL(&b, x);
        CHECK_DETAIL_CRC(&b, ATF_OK, ATF_CRC_NO_FOOTER, 0, 0);
        fx_buf_free(&b);
        s.footer_count_delta = -1;
        b = build_detail(&s);
        CHECK_DETAIL(&b, x);
        fx_buf_free(&b);
        /* footer bytes_length wrong, at the end of a placeholder file */
        s.footer_count_delta = 0;
        s.footer_bytes_delta = 8;
        s.finalized = 0;
        b = build_detail(&s);
        CHECK_DETAIL(&b, x);
        fx_buf_free(&b);
        /* a torn record before a footer at the end: the walk of [64, footer) decides */
        s = dspec(layout, 8, 0, 1, 1, 30);
        b = build_detail(&s);
        x.torn = ANY;
        CHECK_DETAIL(&b, x);
        fx_buf_free(&b);
        /* footer bytes_length consistent with its position but the count is not */
        s = dspec(layout, 8, 0, 1, 1, 0);
        s.footer_count_delta = 3;
        b = build_detail(&s);
        x.torn = 0;
        CHECK_DETAIL(&b, x);
        fx_buf_free(&b);
    }
}

static void detail_zero_events(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        /* a finalized empty file still has a placeholder-looking header (count 0,
           bytes 0), so its footer is found at the end */
        fx_detail_spec s = dspec(layout, 0, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        CHECK_EQ(128, b.len);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FOOTER_AT_END, 0, 0, ATF_CRC_NOT_COMPUTED));
        fx_buf_free(&b);
        s = dspec(layout, 0, 0, 0, 0, 0);
        b = build_detail(&s);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}

static void detail_crc_mismatch(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 8, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        size_t n = (size_t)fx_detail_bytes(8);
        uint32_t good = fx_crc32c(b.data + 64, n), bad;
        b.data[fx_flip_offset(1)] ^= 0xFFu;
        bad = fx_crc32c(b.data + 64, n);
        CHECK(good != bad);
        CHECK_DETAIL(&b, ok(ATF_RECOVERY_FINALIZED, 8, 0, ATF_CRC_UNCHECKED));
        CHECK_DETAIL_CRC(&b, ATF_E_CRC, ATF_CRC_MISMATCH, good, bad);
        fx_buf_free(&b);
        /* the last stack byte of the last record, found at the end */
        s.finalized = 0;
        b = build_detail(&s);
        b.data[64 + n - 1] ^= 0x80u;
        bad = fx_crc32c(b.data + 64, n);
        CHECK_DETAIL_CRC(&b, ATF_E_CRC, ATF_CRC_MISMATCH, good, bad);
        fx_buf_free(&b);
    }
}

static void detail_bad_identity(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 3, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        b.data[0] = 'a';
        CHECK_DETAIL(&b, fails(ATF_E_MAGIC));
        b.data[4] = 7;
        CHECK_DETAIL(&b, fails(ATF_E_MAGIC));
        b.data[0] = 'A';
        CHECK_DETAIL(&b, fails(ATF_E_ENDIAN));
        b.data[5] = 0;
        CHECK_DETAIL(&b, fails(ATF_E_ENDIAN));
        b.data[4] = 1;
        CHECK_DETAIL(&b, fails(ATF_E_VERSION));
        b.data[5] = 3;
        CHECK_DETAIL(&b, fails(ATF_E_VERSION));
        fx_buf_free(&b);
    }
    {   /* an index file is not a detail file */
        fx_index_spec s = ispec(1, 4, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        CHECK_DETAIL(&b, fails(ATF_E_MAGIC));
        fx_buf_free(&b);
    }
}

static void detail_bad_events_offset(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s = dspec(layout, 3, 1, 1, 1, 0);
        fx_buf b = build_detail(&s);
        fx_put64(b.data, 20, 0);
        CHECK_DETAIL(&b, fails(ATF_E_CORRUPT));
        fx_put64(b.data, 20, 63);
        CHECK_DETAIL(&b, fails(ATF_E_CORRUPT));
        fx_put64(b.data, 20, b.len + 1u);
        CHECK_DETAIL(&b, fails(ATF_E_TRUNCATED));
        fx_put64(b.data, 20, UINT64_MAX);
        CHECK_DETAIL(&b, fails(ATF_E_TRUNCATED));
        fx_buf_free(&b);
    }
}

static void detail_short_files(void) {
    fx_detail_spec s = dspec(1, 3, 1, 1, 1, 0);
    fx_buf b = build_detail(&s);
    fx_buf_truncate(&b, 63);
    CHECK_DETAIL(&b, fails(ATF_E_TRUNCATED));
    fx_buf_truncate(&b, 1);
    CHECK_DETAIL(&b, fails(ATF_E_TRUNCATED));
    fx_buf_truncate(&b, 0);
    CHECK_DETAIL(&b, fails(ATF_E_TRUNCATED));
    fx_buf_free(&b);
}

/* ======================= thread reader ======================= */

/* Writes dir/index.atf (when index) and dir/detail.atf (when detail) under tmp_dir. */
static void write_thread_dir(const char *leaf, const fx_buf *index, const fx_buf *detail,
                             char *dir, size_t cap) {
    char path[700];
    tmp_path(dir, cap, leaf);
    if (mkdir(dir, 0700) != 0) FAIL("mkdir failed");
    if (index) {
        snprintf(path, sizeof path, "%s/index.atf", dir);
        if (write_bytes(path, index->data, index->len) != 0) FAIL("write index failed");
    }
    if (detail) {
        snprintf(path, sizeof path, "%s/detail.atf", dir);
        if (write_bytes(path, detail->data, detail->len) != 0) FAIL("write detail failed");
    }
}

static void remove_thread_dir(const char *dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/index.atf", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/detail.atf", dir);
    remove(path);
    rmdir(dir);
}

static atf_result thread_open(atf_thread_reader *t, const char *dir, int no_mmap) {
    atf_reader_options opt;
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = no_mmap;
    memset(t, 0xA5, sizeof *t);
    return atf_thread_reader_open(t, dir, &opt);
}

/* Every link of a good thread resolves both ways, to the right records. */
static void check_links_good(const atf_thread_reader *t, uint64_t n, uint64_t stride) {
    uint64_t i, j, dcount = fx_detail_count(stride, n);
    atf_detail_event d;
    atf_index_event ev;
    CHECK_EQ(n, t->index.event_count);
    CHECK_EQ(stride != 0, t->has_detail);
    if (stride) CHECK_EQ(dcount, t->detail.event_count);
    for (i = 0; i < n; i++) {
        atf_result rc = atf_thread_reader_detail_of(t, i, &d);
        if (fx_has_detail(stride, i)) {
            CHECK_RESULT(ATF_OK, rc);
            if (rc == ATF_OK) {
                CHECK_EQ(i, d.header.index_seq);
                CHECK_EQ(fx_ts(i), d.header.timestamp_ns);
                CHECK_EQ(fx_record_length(i / stride), d.header.total_length);
            }
        } else {
            CHECK_RESULT(ATF_E_NO_DETAIL, rc);
        }
    }
    CHECK_RESULT(ATF_E_RANGE, atf_thread_reader_detail_of(t, n, &d));
    CHECK_RESULT(ATF_E_RANGE, atf_thread_reader_detail_of(t, UINT64_MAX, &d));
    for (j = 0; j < dcount; j++) {
        atf_result rc = atf_thread_reader_index_of(t, j, &ev);
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) {
            CHECK_EQ(j, ev.detail_seq);
            CHECK_EQ(fx_ts(fx_detail_index_seq(stride, j)), ev.timestamp_ns);
            CHECK_EQ(fx_function_id(fx_detail_index_seq(stride, j)), ev.function_id);
        }
    }
    CHECK_RESULT(ATF_E_RANGE, atf_thread_reader_index_of(t, dcount, &ev));
    CHECK_RESULT(ATF_E_RANGE, atf_thread_reader_index_of(t, UINT64_MAX, &ev));
}

static void thread_links(void) {
    int layout, fin, no_mmap;
    for (layout = 1; layout <= 2; layout++) {
        for (fin = 0; fin <= 1; fin++) {
            fx_index_spec is;
            fx_detail_spec ds;
            fx_buf ib, db;
            char dir[600];
            fx_thread_specs(layout, 24, 3, fin, fin, &is, &ds);
            ib = build_index(&is);
            db = build_detail(&ds);
            write_thread_dir("thread_links", &ib, &db, dir, sizeof dir);
            for (no_mmap = 0; no_mmap <= 1; no_mmap++) {
                int before = harness__failures_in_test;
                atf_thread_reader t;
                atf_result rc = thread_open(&t, dir, no_mmap);
                CHECK_RESULT(ATF_OK, rc);
                if (rc == ATF_OK) {
                    CHECK_EQ(1, t.has_detail);
                    CHECK_EQ(fin ? ATF_RECOVERY_FINALIZED : ATF_RECOVERY_FROM_SIZE,
                             t.index.recovery);
                    CHECK_EQ(fin ? ATF_RECOVERY_FINALIZED : ATF_RECOVERY_FROM_SIZE,
                             t.detail.recovery);
                    check_links_good(&t, 24, 3);
                    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&t));
                    CHECK_RESULT(ATF_OK, t.error.code);
                    atf_thread_reader_close(&t);
                }
                if (harness__failures_in_test != before)
                    printf("    ^ layout %d, finalized %d, no_mmap %d\n", layout, fin, no_mmap);
            }
            remove_thread_dir(dir);
            fx_buf_free(&ib);
            fx_buf_free(&db);
        }
    }
}

/* Every event has detail (stride 1). */
static void thread_links_dense(void) {
    fx_index_spec is;
    fx_detail_spec ds;
    fx_buf ib, db;
    char dir[600];
    atf_thread_reader t;
    fx_thread_specs(2, 17, 1, 1, 1, &is, &ds);
    ib = build_index(&is);
    db = build_detail(&ds);
    CHECK_EQ(17, ds.count);
    write_thread_dir("thread_dense", &ib, &db, dir, sizeof dir);
    CHECK_RESULT(ATF_OK, thread_open(&t, dir, 0));
    if (t.error.code == ATF_OK) {
        check_links_good(&t, 17, 1);
        CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&t));
        atf_thread_reader_close(&t);
    }
    remove_thread_dir(dir);
    fx_buf_free(&ib);
    fx_buf_free(&db);
}

static void thread_index_only(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec is;
        fx_detail_spec ds;
        fx_buf ib;
        char dir[600];
        atf_thread_reader t;
        atf_result rc;
        fx_thread_specs(layout, 10, 0, 1, 1, &is, &ds);
        ib = build_index(&is);
        write_thread_dir("thread_index_only", &ib, NULL, dir, sizeof dir);
        rc = thread_open(&t, dir, 0);
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) {
            atf_index_event ev;
            CHECK_EQ(0, t.has_detail);
            check_links_good(&t, 10, 0);
            CHECK_RESULT(ATF_E_RANGE, atf_thread_reader_index_of(&t, 0, &ev));
            CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&t));
            atf_thread_reader_close(&t);
        }
        remove_thread_dir(dir);
        fx_buf_free(&ib);
    }
}

static void thread_open_errors(void) {
    fx_index_spec is;
    fx_detail_spec ds;
    fx_buf ib, db;
    char dir[600];
    atf_thread_reader t;
    fx_thread_specs(1, 12, 3, 1, 1, &is, &ds);
    ib = build_index(&is);
    db = build_detail(&ds);

    /* no directory at all */
    tmp_path(dir, sizeof dir, "no_such_thread");
    CHECK_RESULT(ATF_E_NOT_FOUND, thread_open(&t, dir, 0));
    CHECK_RESULT(ATF_E_NOT_FOUND, t.error.code);

    /* detail.atf without index.atf */
    write_thread_dir("thread_no_index", NULL, &db, dir, sizeof dir);
    CHECK_RESULT(ATF_E_NOT_FOUND, thread_open(&t, dir, 0));
    CHECK(strstr(t.error.path, "index.atf") != NULL);
    remove_thread_dir(dir);

    /* a present but invalid detail.atf fails open with its own code */
    db.data[0] = 'X';
    write_thread_dir("thread_bad_detail", &ib, &db, dir, sizeof dir);
    CHECK_RESULT(ATF_E_MAGIC, thread_open(&t, dir, 0));
    CHECK(strstr(t.error.path, "detail.atf") != NULL);
    remove_thread_dir(dir);
    db.data[0] = 'A';

    fx_put32(db.data, (size_t)fx_detail_record_offset(&ds, 1), 5);
    write_thread_dir("thread_corrupt_detail", &ib, &db, dir, sizeof dir);
    CHECK_RESULT(ATF_E_CORRUPT, thread_open(&t, dir, 1));
    CHECK_EQ(fx_detail_record_offset(&ds, 1), t.error.offset);
    remove_thread_dir(dir);

    fx_buf_truncate(&db, 63);
    write_thread_dir("thread_short_detail", &ib, &db, dir, sizeof dir);
    CHECK_RESULT(ATF_E_TRUNCATED, thread_open(&t, dir, 0));
    remove_thread_dir(dir);

    /* an invalid index.atf, a valid detail.atf */
    fx_buf_free(&db);
    db = build_detail(&ds);
    ib.data[5] = 7;
    write_thread_dir("thread_bad_index", &ib, &db, dir, sizeof dir);
    CHECK_RESULT(ATF_E_VERSION, thread_open(&t, dir, 0));
    remove_thread_dir(dir);
    fx_buf_free(&ib);
    fx_buf_free(&db);
}

/* Broken links: each kind gives ATF_E_CORRUPT where it is met and in verify_links. */
typedef struct broken_case {
    const char *what;
    int in_detail;        /* patch the detail file (else the index file) */
    uint64_t seq;         /* record / event whose link is rewritten */
    uint64_t value;       /* the new link value */
    uint64_t bad_forward; /* index_seq whose detail_of is CORRUPT, ANY: none */
    uint64_t bad_back;    /* detail_seq whose index_of is CORRUPT, ANY: none */
} broken_case;

static void thread_broken_links(void) {
    /* stride 3, 24 events: events 1, 4, 7, ..., 22 have detail 0..7 */
    static const broken_case cases[] = {
        { "record 1 points back to event 5", 1, 1, 5, 4, 1 },
        { "record 2 points back past the index", 1, 2, 1000, 7, 2 },
        { "record 7 points back to UINT32/64 max-1", 1, 7, 0xFFFFFFFEu, 22, 7 },
        { "event 4 points to record 99", 0, 4, 99, 4, 1 },
        { "event 0 (no detail) points to record 1", 0, 0, 1, 0, ANY },
        { "event 7 points to record 1 (shared)", 0, 7, 1, 7, 2 },
    };
    int layout;
    size_t c;
    for (layout = 1; layout <= 2; layout++) {
        for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const broken_case *k = &cases[c];
            fx_index_spec is;
            fx_detail_spec ds;
            fx_buf ib, db;
            char dir[600];
            atf_thread_reader t;
            atf_result rc;
            int before = harness__failures_in_test;
            fx_thread_specs(layout, 24, 3, 1, 0, &is, &ds);
            ib = build_index(&is);
            db = build_detail(&ds);
            if (k->in_detail) fx_put_link(db.data, fx_detail_index_seq_off(&ds, k->seq), layout, k->value);
            else fx_put_link(ib.data, fx_index_detail_seq_off(&is, k->seq), layout, k->value);
            write_thread_dir("thread_broken", &ib, &db, dir, sizeof dir);
            rc = thread_open(&t, dir, 0);
            CHECK_RESULT(ATF_OK, rc);
            if (rc == ATF_OK) {
                atf_detail_event d;
                atf_index_event ev;
                uint64_t i, j;
                for (i = 0; i < 24; i++) {
                    atf_result r1 = atf_thread_reader_detail_of(&t, i, &d);
                    if (i == k->bad_forward) CHECK_RESULT(ATF_E_CORRUPT, r1);
                    else if (fx_has_detail(3, i)) CHECK_RESULT(ATF_OK, r1);
                    else CHECK_RESULT(ATF_E_NO_DETAIL, r1);
                }
                for (j = 0; j < 8; j++) {
                    atf_result r2 = atf_thread_reader_index_of(&t, j, &ev);
                    if (j == k->bad_back) CHECK_RESULT(ATF_E_CORRUPT, r2);
                    else CHECK_RESULT(ATF_OK, r2);
                }
                CHECK_RESULT(ATF_E_CORRUPT, atf_thread_reader_verify_links(&t));
                CHECK_RESULT(ATF_E_CORRUPT, t.error.code);
                atf_thread_reader_close(&t);
            }
            remove_thread_dir(dir);
            fx_buf_free(&ib);
            fx_buf_free(&db);
            if (harness__failures_in_test != before)
                printf("    ^ layout %d: %s\n", layout, k->what);
        }
    }
}

/* The detail file lost its last records in a crash while the index kept its links. */
static void thread_detail_shorter_than_links(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec is;
        fx_detail_spec ds;
        fx_buf ib, db;
        char dir[600];
        atf_thread_reader t;
        atf_result rc;
        fx_thread_specs(layout, 24, 3, 1, 1, &is, &ds);
        ib = build_index(&is);
        ds.count = 6;      /* records 6 and 7 never reached the disk */
        ds.finalized = ds.footer = ds.crc = 0;
        ds.torn = 30;
        db = build_detail(&ds);
        write_thread_dir("thread_short_detail", &ib, &db, dir, sizeof dir);
        rc = thread_open(&t, dir, 0);
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) {
            atf_detail_event d;
            CHECK_EQ(6, t.detail.event_count);
            CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(&t, 16, &d));
            CHECK_RESULT(ATF_E_CORRUPT, atf_thread_reader_detail_of(&t, 19, &d));
            CHECK_RESULT(ATF_E_CORRUPT, atf_thread_reader_detail_of(&t, 22, &d));
            CHECK_RESULT(ATF_E_CORRUPT, atf_thread_reader_verify_links(&t));
            atf_thread_reader_close(&t);
        }
        remove_thread_dir(dir);
        fx_buf_free(&ib);
        fx_buf_free(&db);
    }
}

/* ======================= the catalog, as make_fixtures writes it ======================= */

typedef struct catalog_expect {
    const char *name;
    atf_result rc;
    atf_recovery recovery;
    uint64_t count;        /* index events (detail records for a detail file) */
    uint64_t torn;
    atf_result links;      /* thread entries: verify_links */
} catalog_expect;

#define FIN ATF_RECOVERY_FINALIZED
#define END ATF_RECOVERY_FOOTER_AT_END
#define SIZE ATF_RECOVERY_FROM_SIZE
#define MISM ATF_RECOVERY_FOOTER_MISMATCH
static const catalog_expect catalog_expects[] = {
    { "l1_finalized/index.atf", ATF_OK, FIN, 20, 0, ATF_OK },
    { "l2_finalized/index.atf", ATF_OK, FIN, 20, 0, ATF_OK },
    { "l1_crc0/index.atf", ATF_OK, FIN, 20, 0, ATF_OK },
    { "l2_crc0/index.atf", ATF_OK, FIN, 20, 0, ATF_OK },
    { "l1_no_footer/index.atf", ATF_OK, SIZE, 20, 0, ATF_OK },
    { "l2_no_footer/index.atf", ATF_OK, SIZE, 20, 0, ATF_OK },
    { "l1_torn/index.atf", ATF_OK, SIZE, 20, 13, ATF_OK },
    { "l2_torn/index.atf", ATF_OK, SIZE, 20, 31, ATF_OK },
    { "l1_footer_at_end/index.atf", ATF_OK, END, 20, 0, ATF_OK },
    { "l2_footer_at_end/index.atf", ATF_OK, END, 20, 0, ATF_OK },
    { "l1_footer_mismatch/index.atf", ATF_OK, MISM, 20, 0, ATF_OK },
    { "l2_footer_mismatch/index.atf", ATF_OK, MISM, 20, 0, ATF_OK },
    { "l1_crc_mismatch/index.atf", ATF_OK, FIN, 20, 0, ATF_OK },
    { "l2_crc_mismatch/index.atf", ATF_OK, FIN, 20, 0, ATF_OK },
    { "l1_zero_events/index.atf", ATF_OK, FIN, 0, 0, ATF_OK },
    { "l2_zero_events/index.atf", ATF_OK, FIN, 0, 0, ATF_OK },
    { "l1_header_only/index.atf", ATF_OK, SIZE, 0, 0, ATF_OK },
    { "bad_magic.atf", ATF_E_MAGIC, SIZE, 0, 0, ATF_OK },
    { "bad_endian.atf", ATF_E_ENDIAN, SIZE, 0, 0, ATF_OK },
    { "bad_version.atf", ATF_E_VERSION, SIZE, 0, 0, ATF_OK },
    { "bad_event_size.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "events_offset_past_eof.atf", ATF_E_TRUNCATED, SIZE, 0, 0, ATF_OK },
    { "events_offset_small.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "empty.atf", ATF_E_TRUNCATED, SIZE, 0, 0, ATF_OK },
    { "short63.atf", ATF_E_TRUNCATED, SIZE, 0, 0, ATF_OK },
    { "l1_detail_finalized/detail.atf", ATF_OK, FIN, 8, 0, ATF_OK },
    { "l2_detail_finalized/detail.atf", ATF_OK, FIN, 8, 0, ATF_OK },
    { "l1_detail_no_footer/detail.atf", ATF_OK, SIZE, 8, 0, ATF_OK },
    { "l2_detail_no_footer/detail.atf", ATF_OK, SIZE, 8, 0, ATF_OK },
    { "l1_detail_torn_header/detail.atf", ATF_OK, SIZE, 8, 17, ATF_OK },
    { "l2_detail_torn_header/detail.atf", ATF_OK, SIZE, 8, 23, ATF_OK },
    { "l1_detail_torn_record/detail.atf", ATF_OK, SIZE, 8, 60, ATF_OK },
    { "l2_detail_torn_record/detail.atf", ATF_OK, SIZE, 8, 24, ATF_OK },
    { "l1_detail_footer_at_end/detail.atf", ATF_OK, END, 8, 0, ATF_OK },
    { "l2_detail_footer_at_end/detail.atf", ATF_OK, END, 8, 0, ATF_OK },
    { "l1_detail_footer_mismatch/detail.atf", ATF_OK, MISM, 8, 0, ATF_OK },
    { "l2_detail_footer_mismatch/detail.atf", ATF_OK, MISM, 8, 0, ATF_OK },
    { "l1_detail_crc_mismatch/detail.atf", ATF_OK, FIN, 8, 0, ATF_OK },
    { "l2_detail_crc_mismatch/detail.atf", ATF_OK, FIN, 8, 0, ATF_OK },
    { "l1_detail_len0/detail.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "l2_detail_len0/detail.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "l1_detail_len17/detail.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "l2_detail_len17/detail.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "l1_detail_len_past_eof/detail.atf", ATF_OK, SIZE, 5, 124 + 15, ATF_OK },
    { "l2_detail_len_past_eof/detail.atf", ATF_OK, SIZE, 5, 124 + 15, ATF_OK },
    { "l1_detail_zero_events/detail.atf", ATF_OK, END, 0, 0, ATF_OK },
    { "detail_bad_magic.atf", ATF_E_MAGIC, SIZE, 0, 0, ATF_OK },
    { "detail_bad_endian.atf", ATF_E_ENDIAN, SIZE, 0, 0, ATF_OK },
    { "detail_bad_version.atf", ATF_E_VERSION, SIZE, 0, 0, ATF_OK },
    { "detail_offset_past_eof.atf", ATF_E_TRUNCATED, SIZE, 0, 0, ATF_OK },
    { "detail_offset_small.atf", ATF_E_CORRUPT, SIZE, 0, 0, ATF_OK },
    { "detail_short63.atf", ATF_E_TRUNCATED, SIZE, 0, 0, ATF_OK },
    { "thread_l1_detail", ATF_OK, FIN, 24, 0, ATF_OK },
    { "thread_l2_detail", ATF_OK, FIN, 24, 0, ATF_OK },
    { "thread_l1_crashed", ATF_OK, SIZE, 24, 0, ATF_OK },
    { "thread_l1_index_only", ATF_OK, FIN, 24, 0, ATF_OK },
    { "thread_l1_broken_link", ATF_OK, FIN, 24, 0, ATF_E_CORRUPT },
    { "thread_l2_broken_link", ATF_OK, FIN, 24, 0, ATF_E_CORRUPT },
};
#undef FIN
#undef END
#undef SIZE
#undef MISM

/* Every catalog entry has an expectation, and opens as it says. */
static void catalog(void) {
    size_t n, i, k;
    const fx_entry *cat = fx_catalog(&n);
    CHECK_EQ(n, sizeof catalog_expects / sizeof catalog_expects[0]);
    for (i = 0; i < n; i++) {
        const fx_entry *e = &cat[i];
        const catalog_expect *x = NULL;
        fx_buf ib = { NULL, 0, 0 }, db = { NULL, 0, 0 };
        int before = harness__failures_in_test;
        for (k = 0; k < sizeof catalog_expects / sizeof catalog_expects[0]; k++)
            if (strcmp(catalog_expects[k].name, e->name) == 0) x = &catalog_expects[k];
        CHECK(x != NULL);
        if (!x) {
            printf("    ^ no expectation for %s\n", e->name);
            continue;
        }
        fx_entry_build(e, &ib, &db);
        CHECK(ib.len < 65536 && db.len < 65536);
        if (e->kind != FX_KIND_THREAD) {
            const fx_buf *b = e->kind == FX_KIND_INDEX ? &ib : &db;
            expect want = x->rc == ATF_OK ? ok(x->recovery, x->count, x->torn, ATF_CRC_NO_FOOTER)
                                          : fails(x->rc);
            int mode;
            for (mode = 0; mode < MODE_COUNT; mode++) {
                atf_result rc;
                if (e->kind == FX_KIND_INDEX) {
                    index_handle h;
                    rc = index_open_mode(&h, b, mode, 0);
                    CHECK_RESULT(want.rc, rc);
                    if (rc == ATF_OK) {
                        CHECK_EQ(want.recovery, h.r.recovery);
                        CHECK_EQ(want.count, h.r.event_count);
                        CHECK_EQ(want.torn, h.r.torn_bytes);
                    }
                    index_release(&h, rc);
                } else {
                    detail_handle h;
                    rc = detail_open_mode(&h, b, mode, 0);
                    CHECK_RESULT(want.rc, rc);
                    if (rc == ATF_OK) {
                        CHECK_EQ(want.recovery, h.r.recovery);
                        CHECK_EQ(want.count, h.r.event_count);
                        CHECK_EQ(want.torn, h.r.torn_bytes);
                    }
                    detail_release(&h, rc);
                }
            }
        } else {
            char dir[600];
            atf_thread_reader t;
            atf_result rc;
            write_thread_dir("catalog_thread", &ib, e->stride ? &db : NULL, dir, sizeof dir);
            rc = thread_open(&t, dir, 0);
            CHECK_RESULT(x->rc, rc);
            if (rc == ATF_OK) {
                CHECK_EQ(x->recovery, t.index.recovery);
                CHECK_EQ(x->count, t.index.event_count);
                CHECK_EQ(e->stride != 0, t.has_detail);
                CHECK_RESULT(x->links, atf_thread_reader_verify_links(&t));
                atf_thread_reader_close(&t);
            }
            remove_thread_dir(dir);
        }
        if (harness__failures_in_test != before) printf("    ^ catalog entry %s\n", e->name);
        fx_buf_free(&ib);
        fx_buf_free(&db);
    }
}

/* ======================= mutated files ======================= */

static uint64_t rng_state;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t rng_below(size_t n) { return n ? (size_t)(rng_next() % n) : 0; }

/* One random change: a byte flip, a field set to an edge value, a cut, an extension, or
 * a footer magic dropped somewhere. */
static void mutate(fx_buf *b) {
    static const uint64_t edges[] = { 0, 1, 17, 23, 24, 31, 32, 33, 63, 64, 65, 100, 124,
                                      0x7FFFFFFFu, 0xFFFFFFFFu, 0x100000000ull,
                                      UINT64_MAX, UINT64_MAX - 63u };
    size_t what = rng_below(7), at;
    switch (what) {
    case 0:
    case 1:
        if (b->len) b->data[rng_below(b->len)] ^= (uint8_t)(1u + rng_below(255));
        break;
    case 2: {   /* a field of 4 or 8 bytes, often in the header */
        uint64_t v = edges[rng_below(sizeof edges / sizeof edges[0])];
        size_t width = rng_below(2) ? 8u : 4u;
        if (rng_below(3) == 0) v = (uint64_t)b->len + (uint64_t)rng_below(80) - 40u;
        if (b->len < width) break;
        at = rng_below(2) ? rng_below(b->len < 64 ? b->len - width + 1 : 64 - width + 1)
                          : rng_below(b->len - width + 1);
        if (width == 8) fx_put64(b->data, at, v);
        else fx_put32(b->data, at, (uint32_t)v);
        break;
    }
    case 3:
        fx_buf_truncate(b, rng_below(b->len + 1));
        break;
    case 4: {
        size_t n = rng_below(100), k;
        at = fx_buf_grow(b, n);
        for (k = 0; k < n; k++) b->data[at + k] = (uint8_t)rng_next();
        break;
    }
    case 5:
        if (b->len >= 4) {
            at = rng_below(2) && b->len >= 64 ? b->len - 64 + rng_below(61)
                                              : rng_below(b->len - 3);
            memcpy(b->data + at, rng_below(2) ? "2ITA" : "2DTA", 4);
        }
        break;
    default:    /* the CRC-covered bytes change but the file stays well-formed */
        if (b->len > 64) b->data[64 + rng_below(b->len - 64)] ^= 0x10u;
        break;
    }
}

static void garbage_index(const uint8_t *data, size_t size) {
    atf_index_reader r;
    atf_reader_options opt;
    atf_result rc;
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = (int)(size & 1u);
    rc = atf_index_reader_open_memory(&r, data, size, "garbage", &opt);
    CHECK(rc <= 0 && rc >= ATF_E_STATE);
    if (rc == ATF_OK) {
        uint64_t i;
        atf_index_event ev;
        CHECK(r.event_count <= size / 32u);
        for (i = 0; i < r.event_count; i++) {
            atf_result g = atf_index_reader_get(&r, i, &ev);
            CHECK_RESULT(ATF_OK, g);
            if (g != ATF_OK) break;
            CHECK(atf_index_reader_raw(&r, i) != NULL);
        }
        CHECK_RESULT(ATF_E_RANGE, atf_index_reader_get(&r, r.event_count, &ev));
        rc = atf_index_reader_verify_crc(&r);
        CHECK(rc == ATF_OK || rc == ATF_E_CRC);
        atf_index_reader_close(&r);
    } else {
        CHECK_RESULT(rc, r.error.code);
    }
}

static void garbage_detail(const uint8_t *data, size_t size) {
    atf_detail_reader r;
    atf_reader_options opt;
    atf_result rc;
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = (int)((size >> 1) & 1u);
    rc = atf_detail_reader_open_memory(&r, data, size, "garbage", &opt);
    CHECK(rc <= 0 && rc >= ATF_E_STATE);
    if (rc == ATF_OK) {
        uint64_t i;
        atf_detail_event ev;
        memset(&ev, 0, sizeof ev);
        CHECK(r.event_count <= size / 24u);
        for (i = 0; i < r.event_count; i++) {
            atf_detail_payload p;
            atf_result g = atf_detail_reader_get(&r, i, &ev);
            CHECK_RESULT(ATF_OK, g);
            if (g != ATF_OK) break;
            CHECK(ev.offset + 24u + ev.payload_len <= size);
            CHECK(ev.header.total_length >= 24);
            g = atf_detail_payload_decode(ev.payload, ev.payload_len, &p);
            CHECK(g == ATF_OK || g == ATF_E_TRUNCATED);
        }
        CHECK_RESULT(ATF_E_RANGE, atf_detail_reader_get(&r, r.event_count, &ev));
        rc = atf_detail_reader_verify_crc(&r);
        CHECK(rc == ATF_OK || rc == ATF_E_CRC);
        atf_detail_reader_close(&r);
    } else {
        CHECK_RESULT(rc, r.error.code);
    }
}

/* 2000 mutated copies of valid fixtures, each opened by both readers from an exact-size
 * heap copy: every call returns a code, and an opened file reads at every seq. */
static void garbage(void) {
    size_t n, i, seeds = 0;
    const fx_entry *cat = fx_catalog(&n);
    const fx_entry *valid[64];
    for (i = 0; i < n && seeds < 64; i++)
        if (cat[i].patch == FX_PATCH_NONE) valid[seeds++] = &cat[i];
    rng_state = 0x5EED;
    for (i = 0; i < 2000; i++) {
        const fx_entry *e = valid[rng_below(seeds)];
        fx_buf ib = { NULL, 0, 0 }, db = { NULL, 0, 0 };
        fx_buf *b;
        size_t m, muts = 1 + rng_below(4);
        uint8_t *copy;
        int before = harness__failures_in_test;
        fx_entry_build(e, &ib, &db);
        b = (e->kind == FX_KIND_DETAIL || (e->kind == FX_KIND_THREAD && e->stride && (i & 1)))
                ? &db : &ib;
        for (m = 0; m < muts; m++) mutate(b);
        copy = (uint8_t *)malloc(b->len ? b->len : 1);
        if (!copy) abort();
        if (b->len) memcpy(copy, b->data, b->len);
        garbage_index(copy, b->len);
        garbage_detail(copy, b->len);
        free(copy);
        fx_buf_free(&ib);
        fx_buf_free(&db);
        if (harness__failures_in_test != before) {
            printf("    ^ mutation %zu of %s\n", i, e->name);
            break;
        }
    }
}

static const test_case tests[] = {
    { "index_finalized", index_finalized },
    { "index_get_fields", index_get_fields },
    { "index_events_offset_gap", index_events_offset_gap },
    { "index_crc_zero", index_crc_zero },
    { "index_no_footer", index_no_footer },
    { "index_torn", index_torn },
    { "index_footer_cut", index_footer_cut },
    { "index_footer_cut_late", index_footer_cut_late },
    { "index_footer_at_end", index_footer_at_end },
    { "index_stale_footer_offset", index_stale_footer_offset },
    { "index_bytes_after_footer", index_bytes_after_footer },
    { "index_footer_mismatch", index_footer_mismatch },
    { "index_footer_before_events", index_footer_before_events },
    { "index_footer_overlapping_header", index_footer_overlapping_header },
    { "index_zero_events", index_zero_events },
    { "index_crc_mismatch", index_crc_mismatch },
    { "index_bad_identity", index_bad_identity },
    { "index_bad_event_size", index_bad_event_size },
    { "index_bad_events_offset", index_bad_events_offset },
    { "index_short_files", index_short_files },
    { "index_open_errors", index_open_errors },
    { "detail_finalized", detail_finalized },
    { "detail_get_fields", detail_get_fields },
    { "detail_events_offset_gap", detail_events_offset_gap },
    { "detail_crc_zero", detail_crc_zero },
    { "detail_no_footer", detail_no_footer },
    { "detail_torn_header", detail_torn_header },
    { "detail_torn_record", detail_torn_record },
    { "detail_bad_total_length", detail_bad_total_length },
    { "detail_empty_payloads", detail_empty_payloads },
    { "detail_footer_at_end", detail_footer_at_end },
    { "detail_stale_header", detail_stale_header },
    { "detail_bytes_after_footer", detail_bytes_after_footer },
    { "detail_footer_mismatch", detail_footer_mismatch },
    { "detail_zero_events", detail_zero_events },
    { "detail_crc_mismatch", detail_crc_mismatch },
    { "detail_bad_identity", detail_bad_identity },
    { "detail_bad_events_offset", detail_bad_events_offset },
    { "detail_short_files", detail_short_files },
    { "thread_links", thread_links },
    { "thread_links_dense", thread_links_dense },
    { "thread_index_only", thread_index_only },
    { "thread_open_errors", thread_open_errors },
    { "thread_broken_links", thread_broken_links },
    { "thread_detail_shorter_than_links", thread_detail_shorter_than_links },
    { "catalog", catalog },
    { "garbage", garbage },
};

int main(int argc, char **argv) {
    const char *base = getenv("TMPDIR");
    int rc;
#if defined(_WIN32)
    if (!base || !*base) base = getenv("TEMP");
#endif
    snprintf(tmp_dir, sizeof tmp_dir, "%s/atf_test_reader_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp_dir)) {
        printf("reader: mkdtemp %s failed\n", tmp_dir);
        printf("reader: 0 passed, 1 failed\n");
        return 1;
    }
    rc = harness_run("reader", tests, sizeof tests / sizeof tests[0], argc, argv);
    if (rmdir(tmp_dir) != 0) printf("reader: temporary directory %s left behind\n", tmp_dir);
    return rc;
}
