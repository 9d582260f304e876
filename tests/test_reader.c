/* test_reader.c - the index, detail and thread readers against the hand-built fixtures of
 * tests/fixtures.h: header checks, footer search, recovery rules, CRC states, O(1) access,
 * both-way links, and 2000 mutated files.
 *
 * Every single-file fixture is opened three ways, which must agree: open_memory over an
 * exact-size heap copy (so a sanitizer sees any over-read), open through mmap, and open
 * with no_mmap. Expected values come from the fixture formulas or from reading the
 * fixture's bytes by hand with fx_get*, never from atf.h's decoders. */
#include "atf.h"
#include "harness.h"
#include "fixtures.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "scratch_dir.h"

#define ANY UINT64_MAX /* an expectation that is not checked */
#define FAIL(msg) harness__fail(__FILE__, __LINE__, msg)

static char tmp_dir[512];

static void tmp_path(char *buf, size_t cap, const char *leaf) {
    snprintf(buf, cap, "%s/%s", tmp_dir, leaf);
}


/* ---- what a fixture must open as ---- */
typedef struct expect {
    atf_result rc;
    atf_count_source counted;
    uint64_t count;          /* ANY: not checked */
    uint64_t torn;           /* ANY: not checked */
    atf_crc_state crc;       /* state right after open */
    int has_footer;
    uint64_t err_offset;     /* failures: error.offset, ANY: not checked */
} expect;

static expect ok(atf_count_source recovery, uint64_t count, uint64_t torn, atf_crc_state crc) {
    expect x;
    x.rc = ATF_OK;
    x.counted = recovery;
    x.count = count;
    x.torn = torn;
    x.crc = crc;
    x.has_footer = recovery != ATF_COUNT_FROM_SIZE;
    x.err_offset = ANY;
    return x;
}

static expect fails(atf_result rc) {
    expect x = ok(ATF_COUNT_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER);
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
static void blame(int before, const char *file, int line, const char *what, const char *name) {
    if (harness__failures_in_test != before)
        printf("    ^ %s of %s, fixture at %s:%d\n", what, name, file, line);
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

/* ---- the two file readers, one table: open one of three ways, check what opened ---- */
struct reader_kind;

/* An index or a detail reader opened on a fixture (the kind says which member is live). */
typedef struct opened {
    const struct reader_kind *kind;
    atf_index_reader ix;
    atf_detail_reader dt;
    uint8_t *copy;           /* MODE_MEMORY: the exact-size heap copy the reader reads */
    char path[600];
    int mode;
} opened;

/* The fields both readers have. */
typedef struct reader_state {
    atf_count_source counted;
    uint64_t event_count, torn_bytes;
    atf_crc_state crc_state;
    int has_footer;
    uint32_t crc_found;
    const atf_error *error;
} reader_state;

typedef struct reader_kind {
    const char *memory_name;   /* the name an in-memory open is given */
    const char *file_name;     /* the file written for the other modes */
    atf_result (*open_memory)(opened *h, size_t len, const atf_reader_options *opt);
    atf_result (*open_file)(opened *h, const atf_reader_options *opt);
    void (*close)(opened *h);
    atf_result (*verify_crc)(opened *h);
    reader_state (*state)(const opened *h);
    /* every readable event against the fixture's bytes, nothing past the count */
    void (*check_events)(const opened *h, const fx_buf *b);
} reader_kind;

#define READER_STATE_OF(r) do { \
    st.counted = (r).counted; st.event_count = (r).event_count; \
    st.torn_bytes = (r).torn_bytes; st.crc_state = (r).crc_state; \
    st.has_footer = (r).has_footer; st.crc_found = (r).crc_found; st.error = &(r).error; \
} while (0)

static atf_result index_open_memory(opened *h, size_t len, const atf_reader_options *opt) {
    return atf_index_reader_open_memory(&h->ix, h->copy, len, h->path, opt);
}
static atf_result index_open_file(opened *h, const atf_reader_options *opt) {
    return atf_index_reader_open(&h->ix, h->path, opt);
}
static void index_close(opened *h) { atf_index_reader_close(&h->ix); }
static atf_result index_verify_crc(opened *h) { return atf_index_reader_verify_crc(&h->ix); }
static reader_state index_state(const opened *h) {
    reader_state st;
    READER_STATE_OF(h->ix);
    return st;
}

/* Every readable event equals the fixture's bytes, and nothing past the count reads. */
static void index_check_events(const opened *h, const fx_buf *b) {
    const atf_index_reader *r = &h->ix;
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

static atf_result detail_open_memory(opened *h, size_t len, const atf_reader_options *opt) {
    return atf_detail_reader_open_memory(&h->dt, h->copy, len, h->path, opt);
}
static atf_result detail_open_file(opened *h, const atf_reader_options *opt) {
    return atf_detail_reader_open(&h->dt, h->path, opt);
}
static void detail_close(opened *h) { atf_detail_reader_close(&h->dt); }
static atf_result detail_verify_crc(opened *h) { return atf_detail_reader_verify_crc(&h->dt); }
static reader_state detail_state(const opened *h) {
    reader_state st;
    READER_STATE_OF(h->dt);
    return st;
}

/* Walks the fixture by hand alongside the reader: offsets, headers, payload bytes. */
static void detail_check_events(const opened *h, const fx_buf *b) {
    const atf_detail_reader *r = &h->dt;
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

enum { KIND_INDEX, KIND_DETAIL, KIND_COUNT };
static const reader_kind reader_kinds[KIND_COUNT] = {
    { "memory-index", "index.atf", index_open_memory, index_open_file, index_close,
      index_verify_crc, index_state, index_check_events },
    { "memory-detail", "detail.atf", detail_open_memory, detail_open_file, detail_close,
      detail_verify_crc, detail_state, detail_check_events },
};

static atf_result open_mode(opened *h, const reader_kind *kind, const fx_buf *b, int mode, int verify) {
    atf_reader_options opt;
    memset(&opt, 0, sizeof opt);
    memset(&h->ix, 0xA5, sizeof h->ix); /* open must not rely on a zeroed struct */
    memset(&h->dt, 0xA5, sizeof h->dt);
    h->kind = kind;
    h->copy = NULL;
    h->mode = mode;
    opt.verify_crc = verify;
    opt.no_mmap = mode == MODE_READ;
    if (mode == MODE_MEMORY) {
        h->copy = (uint8_t *)malloc(b->len ? b->len : 1);
        if (!h->copy) abort();
        if (b->len) memcpy(h->copy, b->data, b->len);
        strcpy(h->path, kind->memory_name);
        return kind->open_memory(h, b->len, &opt);
    }
    tmp_path(h->path, sizeof h->path, kind->file_name);
    if (write_file(h->path, b->data, b->len) != 0) {
        FAIL("writing the fixture file failed");
        return ATF_E_IO;
    }
    return kind->open_file(h, &opt);
}

static void release(opened *h, atf_result rc) {
    if (rc == ATF_OK) h->kind->close(h);
    free(h->copy);
    h->copy = NULL;
    if (h->mode != MODE_MEMORY) remove(h->path);
}

/* Opens b in every mode and checks it against x. */
static void check_open_at(const char *file, int line, int kind, const fx_buf *b, expect x) {
    const reader_kind *k = &reader_kinds[kind];
    int mode;
    for (mode = 0; mode < MODE_COUNT; mode++) {
        int before = harness__failures_in_test;
        opened h;
        atf_result rc = open_mode(&h, k, b, mode, 0);
        reader_state st = k->state(&h);
        CHECK_RESULT(x.rc, rc);
        if (rc == ATF_OK && x.rc == ATF_OK) {
            CHECK_EQ(x.counted, st.counted);
            if (x.count != ANY) CHECK_EQ(x.count, st.event_count);
            if (x.torn != ANY) CHECK_EQ(x.torn, st.torn_bytes);
            CHECK_EQ(x.crc, st.crc_state);
            CHECK_EQ(x.has_footer, st.has_footer);
            CHECK_RESULT(ATF_OK, st.error->code);
            k->check_events(&h, b);
        } else if (rc != ATF_OK) {
            CHECK_RESULT(rc, st.error->code);
            CHECK(strstr(st.error->path, mode == MODE_MEMORY ? k->memory_name : k->file_name) != NULL);
            if (x.err_offset != ANY) CHECK_EQ(x.err_offset, st.error->offset);
        }
        release(&h, rc);
        blame(before, file, line, mode_names[mode], k->file_name);
    }
}
#define CHECK_INDEX(b, x) check_open_at(__FILE__, __LINE__, KIND_INDEX, (b), (x))
#define CHECK_DETAIL(b, x) check_open_at(__FILE__, __LINE__, KIND_DETAIL, (b), (x))

/* The CRC error of a mismatch: error.expected is the footer's checksum, error.found the
 * computed one. */
static void check_crc_error(const atf_error *e, atf_result want_rc, uint32_t footer_crc, uint32_t computed) {
    CHECK_RESULT(want_rc, e->code);
    CHECK_EQ(1, e->has_values);
    CHECK_EQ(footer_crc, e->expected);
    CHECK_EQ(computed, e->found);
}

/* After a plain open, verify_crc gives `want_rc` and `state` (twice: a second call says
 * the same). With verify_crc at open, a mismatch fails open the same way. */
static void check_crc_at(const char *file, int line, int kind, const fx_buf *b, atf_result want_rc,
                         atf_crc_state state, uint32_t footer_crc, uint32_t computed) {
    const reader_kind *k = &reader_kinds[kind];
    int mode, verify, call;
    for (verify = 0; verify <= 1; verify++) {
        for (mode = 0; mode < MODE_COUNT; mode++) {
            int before = harness__failures_in_test;
            opened h;
            atf_result rc = open_mode(&h, k, b, mode, verify);
            if (verify && want_rc != ATF_OK) {
                CHECK_RESULT(want_rc, rc);
                check_crc_error(k->state(&h).error, want_rc, footer_crc, computed);
            } else {
                CHECK_RESULT(ATF_OK, rc);
                if (rc == ATF_OK) {
                    if (verify) CHECK_EQ(state, k->state(&h).crc_state);
                    for (call = 0; call < 2; call++) {
                        reader_state st;
                        CHECK_RESULT(want_rc, k->verify_crc(&h));
                        st = k->state(&h);
                        CHECK_EQ(state, st.crc_state);
                        if (state == ATF_CRC_OK || state == ATF_CRC_MISMATCH)
                            CHECK_EQ(computed, st.crc_found);
                        if (want_rc != ATF_OK) check_crc_error(st.error, want_rc, footer_crc, computed);
                    }
                    k->check_events(&h, b);
                }
            }
            release(&h, rc);
            blame(before, file, line, verify ? "verify_crc at open" : mode_names[mode],
                  k->file_name);
        }
    }
}
#define CHECK_INDEX_CRC(b, rc, st, fcrc, comp) \
    check_crc_at(__FILE__, __LINE__, KIND_INDEX, (b), (rc), (st), (fcrc), (comp))
#define CHECK_DETAIL_CRC(b, rc, st, fcrc, comp) \
    check_crc_at(__FILE__, __LINE__, KIND_DETAIL, (b), (rc), (st), (fcrc), (comp))

/* ---- spec shorthands ---- */
/* The fields both fixture specs have. */
typedef struct file_spec {
    int layout;
    uint64_t count;
    int finalized, footer, crc;
    size_t torn;
    uint64_t events_offset;        /* 0 means 64 */
    int64_t footer_count_delta, footer_bytes_delta;
} file_spec;

static file_spec fspec(int layout, uint64_t count, int finalized, int footer, int crc, size_t torn) {
    file_spec s;
    memset(&s, 0, sizeof s);
    s.layout = layout;
    s.count = count;
    s.finalized = finalized;
    s.footer = footer;
    s.crc = crc;
    s.torn = torn;
    return s;
}

/* Copies the fields of f into s, an fx_index_spec or an fx_detail_spec. */
#define SPEC_FROM(s, f) do { \
    memset(&(s), 0, sizeof (s)); \
    (s).layout = (f)->layout; (s).count = (f)->count; (s).finalized = (f)->finalized; \
    (s).footer = (f)->footer; (s).crc = (f)->crc; (s).torn = (f)->torn; \
    (s).events_offset = (f)->events_offset; (s).footer_count_delta = (f)->footer_count_delta; \
    (s).footer_bytes_delta = (f)->footer_bytes_delta; \
} while (0)

static fx_index_spec index_spec_of(const file_spec *f) {
    fx_index_spec s;
    SPEC_FROM(s, f);
    return s;
}

/* Detail records link to every second index event. */
static fx_detail_spec detail_spec_of(const file_spec *f) {
    fx_detail_spec s;
    SPEC_FROM(s, f);
    s.stride = 2;
    return s;
}

static fx_index_spec ispec(int layout, uint64_t count, int finalized, int footer, int crc,
                           size_t torn) {
    file_spec f = fspec(layout, count, finalized, footer, crc, torn);
    return index_spec_of(&f);
}

static fx_detail_spec dspec(int layout, uint64_t count, int finalized, int footer, int crc,
                            size_t torn) {
    file_spec f = fspec(layout, count, finalized, footer, crc, torn);
    return detail_spec_of(&f);
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

/* ======================= both file readers ======================= */

/* What a scenario shared by the two readers needs to know about a file kind. */
typedef struct file_kind {
    int reader;                /* KIND_INDEX or KIND_DETAIL: the reader_kinds entry */
    const char *name;          /* named when the kind's checks fail */
    uint64_t count;            /* events of the usual fixture */
    size_t torn_below;         /* a half-written event leaves 1 .. torn_below - 1 bytes */
    size_t events_offset_at;   /* header field events_offset */
    size_t footer_field_at;    /* header field leading to the footer (0 in a placeholder) */
    uint64_t footer_field_base; /* that field + base = where the footer starts */
    const char *footer_magic;
    fx_buf (*build)(const file_spec *s);
    uint64_t (*bytes)(uint64_t count);             /* size of `count` events */
    size_t (*last_byte)(int layout, uint64_t count); /* last decoded byte of the events */
} file_kind;

static fx_buf index_build(const file_spec *f) {
    fx_index_spec s = index_spec_of(f);
    return build_index(&s);
}
static uint64_t index_bytes(uint64_t count) { return count * 32u; }
/* the last byte of the last event's detail link (layout 2 ends with kind and reserved) */
static size_t index_last_byte(int layout, uint64_t count) {
    return (size_t)(64u + (count - 1u) * 32u) + (layout == 2 ? 23u : 31u);
}

static fx_buf detail_build(const file_spec *f) {
    fx_detail_spec s = detail_spec_of(f);
    return build_detail(&s);
}
static uint64_t detail_bytes(uint64_t count) { return fx_detail_bytes(count); }
static size_t detail_last_byte(int layout, uint64_t count) {
    (void)layout;
    return (size_t)(64u + fx_detail_bytes(count) - 1u);
}

static const file_kind file_kinds[KIND_COUNT] = {
    { KIND_INDEX, "index", 20, 32, 32, 40, 0, "2ITA", index_build, index_bytes,
      index_last_byte },
    { KIND_DETAIL, "detail", 8, 24, 20, 36, 64, "2DTA", detail_build, detail_bytes,
      detail_last_byte },
};

#define CHECK_FILE(k, b, x) check_open_at(__FILE__, __LINE__, (k)->reader, (b), (x))
#define CHECK_FILE_CRC(k, b, rc, st, fcrc, comp) \
    check_crc_at(__FILE__, __LINE__, (k)->reader, (b), (rc), (st), (fcrc), (comp))

/* Runs a scenario for each file kind; a kind whose checks failed is named. */
static void each_kind(void (*scenario)(const file_kind *)) {
    int k;
    for (k = 0; k < KIND_COUNT; k++) {
        int before = harness__failures_in_test;
        scenario(&file_kinds[k]);
        if (harness__failures_in_test != before)
            printf("  FAIL for the %s file kind\n", file_kinds[k].name);
    }
}
/* The test `name` runs name_kind over both kinds. */
#define BOTH_KINDS(name) static void name(void) { each_kind(name##_kind); }

static void finalized_kind(const file_kind *k) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, k->count, 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        uint32_t crc = fx_crc32c(b.data + 64, (size_t)k->bytes(k->count));
        CHECK_FILE(k, &b, ok(ATF_COUNT_FINALIZED, k->count, 0, ATF_CRC_UNCHECKED));
        CHECK_FILE_CRC(k, &b, ATF_OK, ATF_CRC_OK, crc, crc);
        fx_buf_free(&b);
    }
}
BOTH_KINDS(finalized)

/* A wider header: a gap after the header, in a finalized file, a placeholder with a
 * footer at the end, and a crashed file with torn bytes. */
static void events_offset_gap_kind(const file_kind *k) {
    static const struct { uint64_t offset, count; } gap[KIND_COUNT] = { { 200, 9 }, { 160, 5 } };
    uint64_t n = gap[k->reader].count;
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, n, 1, 1, 1, 0);
        fx_buf b;
        s.events_offset = gap[k->reader].offset;
        b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FINALIZED, n, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
        s.finalized = 0;
        b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FOOTER_AT_END, n, 0, ATF_CRC_UNCHECKED));
        fx_buf_free(&b);
        s.footer = 0;
        s.torn = 5;
        b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, n, 5, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}
BOTH_KINDS(events_offset_gap)

static void crc_zero_kind(const file_kind *k) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, k->count, 1, 1, 0, 0);
        fx_buf b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FINALIZED, k->count, 0, ATF_CRC_NOT_COMPUTED));
        CHECK_FILE_CRC(k, &b, ATF_OK, ATF_CRC_NOT_COMPUTED, 0, 0);
        fx_buf_free(&b);
    }
}
BOTH_KINDS(crc_zero)

static void no_footer_kind(const file_kind *k) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, k->count, 0, 0, 0, 0);
        fx_buf b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, k->count, 0, ATF_CRC_NO_FOOTER));
        CHECK_FILE_CRC(k, &b, ATF_OK, ATF_CRC_NO_FOOTER, 0, 0);
        fx_buf_free(&b);
        /* a finalized header whose footer never made it */
        s.finalized = 1;
        b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, k->count, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}
BOTH_KINDS(no_footer)

/* The stray bytes of a half-written event (index) or record header (detail) are ignored. */
static void torn_kind(const file_kind *k) {
    int layout;
    size_t torn;
    for (layout = 1; layout <= 2; layout++) {
        for (torn = 1; torn < k->torn_below; torn++) {
            file_spec s = fspec(layout, k->count, 0, 0, 0, torn);
            fx_buf b = k->build(&s);
            CHECK_EQ(64 + k->bytes(k->count) + torn, b.len);
            CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, k->count, torn, ATF_CRC_NO_FOOTER));
            fx_buf_free(&b);
        }
    }
}
BOTH_KINDS(torn)

static void footer_at_end_kind(const file_kind *k) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, k->count, 0, 1, 1, 0);
        fx_buf b = k->build(&s);
        uint32_t crc = fx_crc32c(b.data + 64, (size_t)k->bytes(k->count));
        CHECK_EQ(0, fx_get64(b.data, k->footer_field_at));
        CHECK_FILE(k, &b, ok(ATF_COUNT_FOOTER_AT_END, k->count, 0, ATF_CRC_UNCHECKED));
        CHECK_FILE_CRC(k, &b, ATF_OK, ATF_CRC_OK, crc, crc);
        fx_buf_free(&b);
        /* legacy writer: footer at the end with checksum 0 */
        s.crc = 0;
        b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FOOTER_AT_END, k->count, 0, ATF_CRC_NOT_COMPUTED));
        fx_buf_free(&b);
    }
}
BOTH_KINDS(footer_at_end)

/* A finalized header whose footer field does not lead to a footer (into the events, so
 * large that adding to it overflows, zero, or one byte short of room) falls back to the
 * last 64 bytes. In a detail header, event_count alone marks it finalized. */
static void stale_footer_field_kind(const file_kind *k) {
    static const uint64_t stale[] = { 64 + 5 * 32, 100, UINT64_MAX - 10u, UINT64_MAX - 20u, 0 };
    int layout;
    size_t v;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, k->count, 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        for (v = 0; v <= sizeof stale / sizeof stale[0]; v++) {
            fx_put64(b.data, k->footer_field_at, v < sizeof stale / sizeof stale[0]
                         ? stale[v] : b.len - 63u - k->footer_field_base);
            CHECK_FILE(k, &b, ok(ATF_COUNT_FOOTER_AT_END, k->count, 0, ATF_CRC_UNCHECKED));
        }
        fx_buf_free(&b);
    }
}
BOTH_KINDS(stale_footer_field)

/* Found through the header, the footer wins even with bytes after it (one run of them
 * holding a footer magic). */
static void bytes_after_footer_kind(const file_kind *k) {
    static const struct { size_t len; uint8_t fill; int magic; } tails[] = {
        { 77, 0x3C, 1 }, { 50, 0xEE, 0 } };
    int layout;
    size_t t;
    for (layout = 1; layout <= 2; layout++) {
        for (t = 0; t < sizeof tails / sizeof tails[0]; t++) {
            file_spec s = fspec(layout, k->count, 1, 1, 1, 0);
            fx_buf b = k->build(&s);
            size_t at = fx_buf_grow(&b, tails[t].len);
            memset(b.data + at, tails[t].fill, tails[t].len);
            if (tails[t].magic) memcpy(b.data + at + 5, k->footer_magic, 4);
            CHECK_FILE(k, &b, ok(ATF_COUNT_FINALIZED, k->count, 0, ATF_CRC_UNCHECKED));
            fx_buf_free(&b);
        }
    }
}
BOTH_KINDS(bytes_after_footer)

/* A footer that disagrees with the events before it: the events are counted from the
 * footer's position. The first case also verifies the CRC (there is no footer to trust). */
typedef struct mismatch_case {
    int finalized;
    size_t torn;
    int64_t count_delta, bytes_delta;  /* added to the footer's fields */
    uint64_t want_torn;                /* ANY: not checked */
} mismatch_case;

static const mismatch_case index_mismatches[] = {
    { 1, 0, 5, 5 * 32, 0 },     /* 25 events and 25*32 bytes: not where it sits */
    { 1, 0, 0, 1, 0 },          /* bytes_written != event_count * 32 */
    { 1, 0, -3, -3 * 32, 0 },   /* fewer events claimed than present */
    { 0, 0, -3, -3 * 32, 0 },   /* the same, found at the end of a placeholder file */
    { 0, 7, 0, 0, 7 },          /* 7 torn bytes, then a footer at the end */
    { 1, 7, 0, 0, 7 },          /* a finalized header pointing at the same footer */
};
static const mismatch_case detail_mismatches[] = {
    { 1, 0, 1, 0, 0 },          /* footer count one too many */
    { 1, 0, -1, 0, 0 },         /* one too few */
    { 0, 0, 0, 8, 0 },          /* bytes_length wrong, at the end of a placeholder file */
    { 0, 30, 0, 0, ANY },       /* a torn record before a footer at the end: the walk decides */
    { 0, 0, 3, 0, 0 },          /* bytes_length agrees with the position, the count does not */
};

static void footer_mismatch_kind(const file_kind *k) {
    const mismatch_case *cases = k->reader == KIND_INDEX ? index_mismatches : detail_mismatches;
    size_t n = k->reader == KIND_INDEX ? sizeof index_mismatches / sizeof index_mismatches[0]
                                       : sizeof detail_mismatches / sizeof detail_mismatches[0];
    int layout;
    size_t c;
    for (layout = 1; layout <= 2; layout++) {
        for (c = 0; c < n; c++) {
            expect x = ok(ATF_COUNT_FOOTER_MISMATCH, k->count, cases[c].want_torn,
                          ATF_CRC_NO_FOOTER);
            file_spec s = fspec(layout, k->count, cases[c].finalized, 1, 1, cases[c].torn);
            fx_buf b;
            s.footer_count_delta = cases[c].count_delta;
            s.footer_bytes_delta = cases[c].bytes_delta;
            b = k->build(&s);
            CHECK_FILE(k, &b, x);
            if (c == 0) CHECK_FILE_CRC(k, &b, ATF_OK, ATF_CRC_NO_FOOTER, 0, 0);
            fx_buf_free(&b);
        }
    }
}
BOTH_KINDS(footer_mismatch)

static void zero_events_kind(const file_kind *k) {
    /* a finalized empty detail file still has a placeholder-looking header (count 0,
       bytes 0), so its footer is found at the end */
    static const atf_count_source finalized_empty[KIND_COUNT] = { ATF_COUNT_FINALIZED,
                                                             ATF_COUNT_FOOTER_AT_END };
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, 0, 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        CHECK_EQ(128, b.len);
        /* the CRC of nothing is 0, which reads as "not computed" */
        CHECK_FILE(k, &b, ok(finalized_empty[k->reader], 0, 0, ATF_CRC_NOT_COMPUTED));
        fx_buf_free(&b);
        /* the placeholder header alone, and with a few torn bytes */
        s = fspec(layout, 0, 0, 0, 0, 0);
        b = k->build(&s);
        CHECK_EQ(64, b.len);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
        s.torn = 10;
        b = k->build(&s);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, 0, 10, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}
BOTH_KINDS(zero_events)

/* A flipped byte in the first event, then in the last decoded byte of the last one (found
 * through a footer at the end). */
static void crc_mismatch_kind(const file_kind *k) {
    static const uint8_t last_flip[KIND_COUNT] = { 0x01u, 0x80u };
    size_t n = (size_t)k->bytes(k->count);
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, k->count, 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        uint32_t good = fx_crc32c(b.data + 64, n), bad;
        b.data[fx_flip_offset(k->reader == KIND_DETAIL)] ^= 0xFFu;
        bad = fx_crc32c(b.data + 64, n);
        CHECK(good != bad);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FINALIZED, k->count, 0, ATF_CRC_UNCHECKED));
        CHECK_FILE_CRC(k, &b, ATF_E_CRC, ATF_CRC_MISMATCH, good, bad);
        fx_buf_free(&b);
        s.finalized = 0;
        b = k->build(&s);
        b.data[k->last_byte(layout, k->count)] ^= last_flip[k->reader];
        bad = fx_crc32c(b.data + 64, n);
        CHECK(good != bad);
        CHECK_FILE_CRC(k, &b, ATF_E_CRC, ATF_CRC_MISMATCH, good, bad);
        fx_buf_free(&b);
    }
}
BOTH_KINDS(crc_mismatch)

/* Magic, then endian, then version decide, one byte changed at a time; a file of the
 * other kind fails on its magic. */
static void bad_identity_kind(const file_kind *k) {
    static const struct { size_t at; uint8_t byte; atf_result rc; } steps[] = {
        { 3, '3', ATF_E_MAGIC }, { 4, 0, ATF_E_MAGIC },     /* magic still decides */
        { 3, '2', ATF_E_ENDIAN }, { 4, 2, ATF_E_ENDIAN },
        { 5, 9, ATF_E_ENDIAN },                              /* endian before version */
        { 4, 1, ATF_E_VERSION }, { 5, 0, ATF_E_VERSION }, { 5, 4, ATF_E_VERSION },
        { 5, 255, ATF_E_VERSION },
        { 0, 'a', ATF_E_MAGIC }, { 4, 7, ATF_E_MAGIC }, { 0, 'A', ATF_E_ENDIAN },
        { 5, 0, ATF_E_ENDIAN }, { 4, 1, ATF_E_VERSION }, { 5, 4, ATF_E_VERSION },
    };
    static const uint64_t counts[KIND_COUNT] = { 4, 3 };
    const file_kind *other = &file_kinds[k->reader == KIND_INDEX ? KIND_DETAIL : KIND_INDEX];
    int layout;
    size_t i;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, counts[k->reader], 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            b.data[steps[i].at] = steps[i].byte;
            CHECK_FILE(k, &b, fails(steps[i].rc));
        }
        fx_buf_free(&b);
    }
    { /* version 3 names a packed index file: a layout-1 body has no lane header */
        file_spec s = fspec(1, counts[k->reader], 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        b.data[5] = 3;
        CHECK_FILE(k, &b, fails(k->reader == KIND_INDEX ? ATF_E_CORRUPT : ATF_E_VERSION));
        fx_buf_free(&b);
    }
    {
        file_spec s = fspec(1, counts[other->reader], 1, 1, 1, 0);
        fx_buf b = other->build(&s);
        CHECK_FILE(k, &b, fails(ATF_E_MAGIC));
        fx_buf_free(&b);
    }
}
BOTH_KINDS(bad_identity)

/* events_offset inside the header is corrupt, past the end truncated; exactly at the
 * end (with the footer field cleared) it is a valid, empty events section. */
static void bad_events_offset_kind(const file_kind *k) {
    static const struct { uint64_t value; int past_len; atf_result rc; } offsets[] = {
        { 0, 0, ATF_E_CORRUPT }, { 32, 0, ATF_E_CORRUPT }, { 63, 0, ATF_E_CORRUPT },
        { 1, 1, ATF_E_TRUNCATED }, { UINT64_MAX, 0, ATF_E_TRUNCATED },
        { UINT64_MAX - 63u, 0, ATF_E_TRUNCATED },
    };
    static const uint64_t counts[KIND_COUNT] = { 4, 3 };
    int layout;
    size_t i;
    for (layout = 1; layout <= 2; layout++) {
        file_spec s = fspec(layout, counts[k->reader], 1, 1, 1, 0);
        fx_buf b = k->build(&s);
        for (i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
            fx_put64(b.data, k->events_offset_at,
                     offsets[i].past_len ? b.len + offsets[i].value : offsets[i].value);
            CHECK_FILE(k, &b, fails(offsets[i].rc));
        }
        fx_put64(b.data, k->events_offset_at, b.len);
        fx_put64(b.data, k->footer_field_at, 0);
        CHECK_FILE(k, &b, ok(ATF_COUNT_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
}
BOTH_KINDS(bad_events_offset)

/* Anything under 64 bytes is truncated; size is checked before the magic. */
static void short_files_kind(const file_kind *k) {
    static const struct { int layout; uint64_t count; } specs[KIND_COUNT] = { { 2, 4 }, { 1, 3 } };
    file_spec s = fspec(specs[k->reader].layout, specs[k->reader].count, 1, 1, 1, 0);
    fx_buf b = k->build(&s);
    size_t n;
    for (n = 63; n > 0; n -= 9) {
        fx_buf_truncate(&b, n);
        CHECK_FILE(k, &b, fails(ATF_E_TRUNCATED));
    }
    fx_buf_truncate(&b, 1);
    CHECK_FILE(k, &b, fails(ATF_E_TRUNCATED));
    fx_buf_truncate(&b, 0);
    CHECK_FILE(k, &b, fails(ATF_E_TRUNCATED));
    /* 63 bytes of garbage */
    fx_buf_grow(&b, 63);
    memset(b.data, 'z', 63);
    CHECK_FILE(k, &b, fails(ATF_E_TRUNCATED));
    fx_buf_free(&b);
}
BOTH_KINDS(short_files)

static void open_errors_kind(const file_kind *k) {
    const reader_kind *rk = &reader_kinds[k->reader];
    opened h;
    reader_state st;
    memset(&h, 0, sizeof h);
    h.kind = rk;
    h.mode = MODE_MMAP;
    tmp_path(h.path, sizeof h.path, "does-not-exist.atf");
    CHECK_RESULT(ATF_E_NOT_FOUND, rk->open_file(&h, NULL));
    st = rk->state(&h);
    CHECK_RESULT(ATF_E_NOT_FOUND, st.error->code);
    CHECK(strstr(st.error->path, "does-not-exist.atf") != NULL);
}
BOTH_KINDS(open_errors)

/* ======================= index reader only ======================= */

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

/* A finalized file cut in the middle of its footer: 30 footer bytes remain. */
static void index_footer_cut(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_index_spec s = ispec(layout, 20, 1, 1, 1, 0);
        fx_buf b = build_index(&s);
        fx_buf_truncate(&b, 64 + 20 * 32 + 30);
        CHECK_INDEX(&b, ok(ATF_COUNT_FROM_SIZE, 20, 30, ATF_CRC_NO_FOOTER));
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
        CHECK_INDEX(&b, ok(ATF_COUNT_FROM_SIZE, 20, 40, ATF_CRC_NO_FOOTER));
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
        CHECK_INDEX(&b, ok(ATF_COUNT_FOOTER_AT_END, 3, 0, ATF_CRC_UNCHECKED));
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
    CHECK_INDEX(&b, ok(ATF_COUNT_FROM_SIZE, 1, 8, ATF_CRC_NO_FOOTER));
    fx_buf_free(&b);
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

/* ======================= detail reader only ======================= */

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
            CHECK_DETAIL(&b, ok(ATF_COUNT_FROM_SIZE, 8, cuts[k], ATF_CRC_NO_FOOTER));
            fx_buf_free(&b);
        }
        {   /* the last record claims one byte more than the file has */
            fx_detail_spec s = dspec(layout, 6, 0, 0, 0, 0);
            fx_buf b = build_detail(&s);
            size_t off = (size_t)fx_detail_record_offset(&s, 5);
            fx_put32(b.data, off, (uint32_t)(b.len - off + 1u));
            CHECK_DETAIL(&b, ok(ATF_COUNT_FROM_SIZE, 5, fx_record_length(5),
                                ATF_CRC_NO_FOOTER));
            /* the first record claims 4 GiB */
            fx_put32(b.data, 64, 0xFFFFFFFFu);
            CHECK_DETAIL(&b, ok(ATF_COUNT_FROM_SIZE, 0, b.len - 64u, ATF_CRC_NO_FOOTER));
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
        CHECK_DETAIL(&b, ok(ATF_COUNT_FROM_SIZE, 3, 0, ATF_CRC_NO_FOOTER));
        fx_buf_free(&b);
    }
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
        if (write_file(path, index->data, index->len) != 0) FAIL("write index failed");
    }
    if (detail) {
        snprintf(path, sizeof path, "%s/detail.atf", dir);
        if (write_file(path, detail->data, detail->len) != 0) FAIL("write detail failed");
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
                    CHECK_EQ(fin ? ATF_COUNT_FINALIZED : ATF_COUNT_FROM_SIZE,
                             t.index.counted);
                    CHECK_EQ(fin ? ATF_COUNT_FINALIZED : ATF_COUNT_FROM_SIZE,
                             t.detail.counted);
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
    atf_count_source counted;
    uint64_t count;        /* index events (detail records for a detail file) */
    uint64_t torn;
    atf_result links;      /* thread entries: verify_links */
} catalog_expect;

#define FIN ATF_COUNT_FINALIZED
#define END ATF_COUNT_FOOTER_AT_END
#define SIZE ATF_COUNT_FROM_SIZE
#define MISM ATF_COUNT_FOOTER_MISMATCH
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
            expect want = x->rc == ATF_OK ? ok(x->counted, x->count, x->torn, ATF_CRC_NO_FOOTER)
                                          : fails(x->rc);
            const reader_kind *rk = &reader_kinds[e->kind == FX_KIND_INDEX ? KIND_INDEX : KIND_DETAIL];
            int mode;
            for (mode = 0; mode < MODE_COUNT; mode++) {
                opened h;
                atf_result rc = open_mode(&h, rk, b, mode, 0);
                CHECK_RESULT(want.rc, rc);
                if (rc == ATF_OK) {
                    reader_state st = rk->state(&h);
                    CHECK_EQ(want.counted, st.counted);
                    CHECK_EQ(want.count, st.event_count);
                    CHECK_EQ(want.torn, st.torn_bytes);
                }
                release(&h, rc);
            }
        } else {
            char dir[600];
            atf_thread_reader t;
            atf_result rc;
            write_thread_dir("catalog_thread", &ib, e->stride ? &db : NULL, dir, sizeof dir);
            rc = thread_open(&t, dir, 0);
            CHECK_RESULT(x->rc, rc);
            if (rc == ATF_OK) {
                CHECK_EQ(x->counted, t.index.counted);
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
    rng_seed(0x5EED);
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
    { "finalized", finalized },
    { "events_offset_gap", events_offset_gap },
    { "crc_zero", crc_zero },
    { "no_footer", no_footer },
    { "torn", torn },
    { "footer_at_end", footer_at_end },
    { "stale_footer_field", stale_footer_field },
    { "bytes_after_footer", bytes_after_footer },
    { "footer_mismatch", footer_mismatch },
    { "zero_events", zero_events },
    { "crc_mismatch", crc_mismatch },
    { "bad_identity", bad_identity },
    { "bad_events_offset", bad_events_offset },
    { "short_files", short_files },
    { "open_errors", open_errors },
    { "index_get_fields", index_get_fields },
    { "index_footer_cut", index_footer_cut },
    { "index_footer_cut_late", index_footer_cut_late },
    { "index_footer_before_events", index_footer_before_events },
    { "index_footer_overlapping_header", index_footer_overlapping_header },
    { "index_bad_event_size", index_bad_event_size },
    { "detail_get_fields", detail_get_fields },
    { "detail_torn_record", detail_torn_record },
    { "detail_bad_total_length", detail_bad_total_length },
    { "detail_empty_payloads", detail_empty_payloads },
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
    int rc;
    if (scratch_dir_make(tmp_dir, sizeof tmp_dir, "reader") != 0) {
        printf("reader: 0 passed, 1 failed\n");
        return 1;
    }
    rc = harness_run("reader", tests, sizeof tests / sizeof tests[0], argc, argv);
    if (rmdir(tmp_dir) != 0) printf("reader: temporary directory %s left behind\n", tmp_dir);
    return rc;
}
