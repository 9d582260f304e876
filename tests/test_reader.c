/* test_reader.c - the index, detail and thread readers against the hand-built fixtures of
 * tests/fixtures.h: header checks, footer search, recovery rules, CRC states, O(1) access,
 * both-way links, and 2000 mutated files.
 *
 * Every single-file fixture is opened three ways, which must agree: open_memory over an
 * exact-size heap copy (so a sanitizer sees any over-read), open through mmap, and open
 * with no_mmap. Expected values come from the fixture formulas or from reading the
 * fixture's bytes by hand with fx_get*, never from atf.h's decoders. What the two file
 * readers must make of a fixture is one table (file_cases): each row a fixture, what is
 * changed in it and what it opens as (and what verify_crc says), run on the kinds and
 * layouts it names by one loop (run_file_cases); a test is the rows of its name. */
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

/* Opens counted so, with count events and torn bytes, CRC state crc; fails with rc
 * (at offset). */
#define OPENS(counted, count, torn, crc) \
    { ATF_OK, (counted), (count), (torn), (crc), (counted) != ATF_COUNT_FROM_SIZE, ANY }
#define FAILS_AT(rc, offset) { (rc), ATF_COUNT_FROM_SIZE, 0, 0, ATF_CRC_NO_FOOTER, 0, (offset) }
#define FAILS(rc) FAILS_AT((rc), ANY)

static expect ok(atf_count_source recovery, uint64_t count, uint64_t torn, atf_crc_state crc) {
    expect x = OPENS(recovery, count, torn, crc);
    return x;
}

static expect fails(atf_result rc) {
    expect x = FAILS(rc);
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

/* What the file cases need to know about a file kind. */
typedef struct file_kind {
    int reader;                /* KIND_INDEX or KIND_DETAIL: the reader_kinds entry */
    const char *name;          /* named when the kind's checks fail */
    uint64_t count;            /* events of the usual fixture (K_COUNT below) */
    uint64_t small_count;      /* events of a fixture whose header is what is wrong (K_SMALL) */
    size_t events_offset_at;   /* header field events_offset */
    size_t footer_field_at;    /* header field leading to the footer (0 in a placeholder) */
    uint64_t footer_field_base; /* that field + base = where the footer starts */
    const char *footer_magic;
    uint8_t last_flip;         /* flips a bit of the last decoded byte (flip_last_byte) */
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
    { KIND_INDEX, "index", 20, 4, 32, 40, 0, "2ITA", 0x01u, index_build, index_bytes,
      index_last_byte },
    { KIND_DETAIL, "detail", 8, 3, 20, 36, 64, "2DTA", 0x80u, detail_build, detail_bytes,
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

/* ---- the file cases: a fixture, what is changed in it, what it opens as ---- */
/* Stand-ins in a case for what depends on the kind or on the fixture built. */
#define K_COUNT (UINT64_MAX - 1)     /* count: the kind's usual count */
#define K_SMALL (UINT64_MAX - 2)     /* count: the kind's small count */
#define TORN_SPEC (UINT64_MAX - 3)   /* torn: the torn bytes the fixture was built with */
#define FROM_CHANGE (UINT64_MAX - 4) /* torn: every byte from the last change on */
#define AT_CHANGE (UINT64_MAX - 5)   /* error offset: where the last change wrote */

/* The fixture a change applies to. */
typedef struct change_ctx {
    const file_kind *kind;
    file_spec spec;            /* layout and counts resolved */
} change_ctx;

/* A change of the built fixture; it returns the offset it wrote at. */
typedef size_t (*change_fn)(fx_buf *b, const change_ctx *c, uint64_t a, uint64_t v);

typedef struct change {
    change_fn apply;           /* NULL: no change */
    uint64_t a, v;             /* its arguments */
} change;

static size_t set_footer_field(fx_buf *b, const change_ctx *c, uint64_t value, uint64_t v) {
    (void)v;
    fx_put64(b->data, c->kind->footer_field_at, value);
    return c->kind->footer_field_at;
}

/* The footer field one byte short of leading to a footer in the last 64 bytes. */
static size_t footer_field_one_short(fx_buf *b, const change_ctx *c, uint64_t a, uint64_t v) {
    (void)a;
    (void)v;
    return set_footer_field(b, c, b->len - 63u - c->kind->footer_field_base, 0);
}

/* len bytes of fill after the end. */
static size_t append_tail(fx_buf *b, const change_ctx *c, uint64_t len, uint64_t fill) {
    size_t at = fx_buf_grow(b, (size_t)len);
    (void)c;
    memset(b->data + at, (int)fill, (size_t)len);
    return at;
}

static size_t put_footer_magic_at(fx_buf *b, const change_ctx *c, uint64_t at, uint64_t v) {
    (void)v;
    memcpy(b->data + at, c->kind->footer_magic, 4);
    return (size_t)at;
}

static size_t put_footer_magic_from_end(fx_buf *b, const change_ctx *c, uint64_t back,
                                        uint64_t v) {
    return put_footer_magic_at(b, c, b->len - back, v);
}

/* A byte of the first event, which the CRC covers. */
static size_t flip_first_event(fx_buf *b, const change_ctx *c, uint64_t a, uint64_t v) {
    size_t at = fx_flip_offset(c->kind->reader == KIND_DETAIL);
    (void)a;
    (void)v;
    b->data[at] ^= 0xFFu;
    return at;
}

/* The last byte the reader decodes of the last event. */
static size_t flip_last_byte(fx_buf *b, const change_ctx *c, uint64_t a, uint64_t v) {
    size_t at = c->kind->last_byte(c->spec.layout, c->spec.count);
    (void)a;
    (void)v;
    b->data[at] ^= c->kind->last_flip;
    return at;
}

/* Bytes 0 and 3 of the magic, the endian byte and the version: IDENT(...), whose KEEP
 * leaves a byte as built. */
#define KEEP 0x100u
#define IDENT(m0, m3, endian, version) \
    (((uint64_t)(m0) << 48) | ((uint64_t)(m3) << 32) | ((uint64_t)(endian) << 16) | (version))
static size_t set_identity(fx_buf *b, const change_ctx *c, uint64_t ident, uint64_t v) {
    static const size_t at[4] = { 0, 3, 4, 5 };
    size_t i;
    (void)c;
    (void)v;
    for (i = 0; i < 4; i++) {
        uint64_t byte = (ident >> (48 - 16 * i)) & 0xFFFFu;
        if (byte != KEEP) b->data[at[i]] = (uint8_t)byte;
    }
    return 0;
}

static size_t set_events_offset(fx_buf *b, const change_ctx *c, uint64_t value, uint64_t v) {
    (void)v;
    fx_put64(b->data, c->kind->events_offset_at, value);
    return c->kind->events_offset_at;
}

static size_t set_events_offset_past_end(fx_buf *b, const change_ctx *c, uint64_t beyond,
                                         uint64_t v) {
    return set_events_offset(b, c, b->len + beyond, v);
}

/* events_offset at the end of the file and no footer: a valid, empty events section. */
static size_t events_section_empty(fx_buf *b, const change_ctx *c, uint64_t a, uint64_t v) {
    set_events_offset(b, c, b->len, 0);
    (void)a;
    (void)v;
    return set_footer_field(b, c, 0, 0);
}

static size_t truncate_to(fx_buf *b, const change_ctx *c, uint64_t len, uint64_t v) {
    (void)c;
    (void)v;
    fx_buf_truncate(b, (size_t)len);
    return (size_t)len;
}

static size_t set_u32_at(fx_buf *b, const change_ctx *c, uint64_t at, uint64_t value) {
    (void)c;
    fx_put32(b->data, (size_t)at, (uint32_t)value);
    return (size_t)at;
}

/* An index header's event_size, at its layout's offset. */
static size_t set_event_size(fx_buf *b, const change_ctx *c, uint64_t size, uint64_t v) {
    (void)v;
    return set_u32_at(b, c, c->spec.layout == 2 ? 20u : 24u, size);
}

/* Detail record j's total_length. */
static size_t set_record_length(fx_buf *b, const change_ctx *c, uint64_t j, uint64_t len) {
    fx_detail_spec s = detail_spec_of(&c->spec);
    return set_u32_at(b, c, fx_detail_record_offset(&s, j), len);
}

/* Detail record j claims one byte more than the file has after it. */
static size_t record_past_end(fx_buf *b, const change_ctx *c, uint64_t j, uint64_t v) {
    fx_detail_spec s = detail_spec_of(&c->spec);
    size_t off = (size_t)fx_detail_record_offset(&s, j);
    (void)v;
    return set_u32_at(b, c, off, b->len - off + 1u);
}

/* n detail records of 24 bytes (no payload), linked to index events 0, 5, 10, ... */
static size_t append_empty_records(fx_buf *b, const change_ctx *c, uint64_t n, uint64_t v) {
    size_t first = b->len;
    uint64_t j;
    (void)v;
    for (j = 0; j < n; j++) {
        size_t at = fx_buf_grow(b, 24);
        fx_put32(b->data, at, 24);
        fx_put16(b->data, at + 4, 99);
        fx_put_link(b->data, at + 8, c->spec.layout, j * 5u);
        fx_put64(b->data, at + 16, fx_ts(j * 5u));
    }
    return first;
}

/* The fixture replaced by a file of the other kind (its small count, finalized). */
static size_t to_other_kind(fx_buf *b, const change_ctx *c, uint64_t a, uint64_t v) {
    const file_kind *other = &file_kinds[c->kind->reader == KIND_INDEX ? KIND_DETAIL : KIND_INDEX];
    file_spec s = fspec(c->spec.layout, other->small_count, 1, 1, 1, 0);
    (void)a;
    (void)v;
    fx_buf_free(b);
    *b = other->build(&s);
    return 0;
}

/* What verify_crc must say of a case's fixture: the footer's checksum and the computed
 * one are 0, or the CRC32-C of the events before or after the changes. */
enum { CRC_ZERO, CRC_BEFORE, CRC_AFTER };
typedef struct crc_want {
    int checked;
    atf_result rc;
    atf_crc_state state;
    int footer_crc, computed;
} crc_want;

enum { ON_INDEX = 1 << KIND_INDEX, ON_DETAIL = 1 << KIND_DETAIL, ON_BOTH = ON_INDEX | ON_DETAIL };

/* One row: the test it belongs to; the fixture (spec.layout 0: both layouts; with
 * torn_last, every torn size from spec.torn to it) of each kind it names; up to two
 * changes, in order; what each open must find, and what verify_crc must say. */
typedef struct file_case {
    const char *test;
    const char *what;
    int kinds;
    file_spec spec;
    size_t torn_last;
    change changes[2];
    expect want;
    crc_want crc;
} file_case;

#define SPEC(count, fin, footer, crc, torn) { 0, (count), (fin), (footer), (crc), (torn), 0, 0, 0 }
#define SPEC_L(layout, count, fin, footer, crc, torn) \
    { (layout), (count), (fin), (footer), (crc), (torn), 0, 0, 0 }
#define SPEC_AT(count, fin, footer, crc, torn, events_offset) \
    { 0, (count), (fin), (footer), (crc), (torn), (events_offset), 0, 0 }
/* a footer (with a CRC) whose event count and byte count differ from the events' */
#define SPEC_OFF(count, fin, torn, count_delta, bytes_delta) \
    { 0, (count), (fin), 1, 1, (torn), 0, (count_delta), (bytes_delta) }
#define NO_CHANGE { NO_CHANGE_FN, 0, 0 }
#define NO_CHANGE_FN ((change_fn)0)
#define CHANGE(fn, a, v) { (fn), (a), (v) }
#define UNCHANGED { NO_CHANGE, NO_CHANGE }
#define CHANGED(fn, a, v) { CHANGE(fn, a, v), NO_CHANGE }
#define NO_CRC { 0, ATF_OK, ATF_CRC_UNCHECKED, CRC_ZERO, CRC_ZERO }
#define CRC(rc, state, footer_crc, computed) { 1, (rc), (state), (footer_crc), (computed) }

#define FIN ATF_COUNT_FINALIZED
#define END ATF_COUNT_FOOTER_AT_END
#define SIZE ATF_COUNT_FROM_SIZE
#define MISM ATF_COUNT_FOOTER_MISMATCH
#define UNCHECKED ATF_CRC_UNCHECKED
#define NOT_COMPUTED ATF_CRC_NOT_COMPUTED
#define NO_FOOTER ATF_CRC_NO_FOOTER
static const file_case file_cases[] = {
    { "finalized", "finalized", ON_BOTH, SPEC(K_COUNT, 1, 1, 1, 0), 0, UNCHANGED,
      OPENS(FIN, K_COUNT, 0, UNCHECKED), CRC(ATF_OK, ATF_CRC_OK, CRC_BEFORE, CRC_AFTER) },

    /* a wider header: a gap after it */
    { "events_offset_gap", "finalized", ON_INDEX, SPEC_AT(9, 1, 1, 1, 0, 200), 0, UNCHANGED,
      OPENS(FIN, 9, 0, UNCHECKED), NO_CRC },
    { "events_offset_gap", "a placeholder, footer at the end", ON_INDEX,
      SPEC_AT(9, 0, 1, 1, 0, 200), 0, UNCHANGED, OPENS(END, 9, 0, UNCHECKED), NO_CRC },
    { "events_offset_gap", "crashed, torn bytes", ON_INDEX, SPEC_AT(9, 0, 0, 1, 5, 200), 0,
      UNCHANGED, OPENS(SIZE, 9, 5, NO_FOOTER), NO_CRC },
    { "events_offset_gap", "finalized", ON_DETAIL, SPEC_AT(5, 1, 1, 1, 0, 160), 0, UNCHANGED,
      OPENS(FIN, 5, 0, UNCHECKED), NO_CRC },
    { "events_offset_gap", "a placeholder, footer at the end", ON_DETAIL,
      SPEC_AT(5, 0, 1, 1, 0, 160), 0, UNCHANGED, OPENS(END, 5, 0, UNCHECKED), NO_CRC },
    { "events_offset_gap", "crashed, torn bytes", ON_DETAIL, SPEC_AT(5, 0, 0, 1, 5, 160), 0,
      UNCHANGED, OPENS(SIZE, 5, 5, NO_FOOTER), NO_CRC },

    { "crc_zero", "checksum 0", ON_BOTH, SPEC(K_COUNT, 1, 1, 0, 0), 0, UNCHANGED,
      OPENS(FIN, K_COUNT, 0, NOT_COMPUTED), CRC(ATF_OK, NOT_COMPUTED, CRC_ZERO, CRC_ZERO) },

    { "no_footer", "a placeholder header", ON_BOTH, SPEC(K_COUNT, 0, 0, 0, 0), 0, UNCHANGED,
      OPENS(SIZE, K_COUNT, 0, NO_FOOTER), CRC(ATF_OK, NO_FOOTER, CRC_ZERO, CRC_ZERO) },
    { "no_footer", "a finalized header whose footer never made it", ON_BOTH,
      SPEC(K_COUNT, 1, 0, 0, 0), 0, UNCHANGED, OPENS(SIZE, K_COUNT, 0, NO_FOOTER), NO_CRC },

    /* the stray bytes of a half-written event (index) or record header (detail) */
    { "torn", "1 to 31 bytes of an event", ON_INDEX, SPEC(K_COUNT, 0, 0, 0, 1), 31, UNCHANGED,
      OPENS(SIZE, K_COUNT, TORN_SPEC, NO_FOOTER), NO_CRC },
    { "torn", "1 to 23 bytes of a record header", ON_DETAIL, SPEC(K_COUNT, 0, 0, 0, 1), 23,
      UNCHANGED, OPENS(SIZE, K_COUNT, TORN_SPEC, NO_FOOTER), NO_CRC },

    { "footer_at_end", "a placeholder header, a footer at the end", ON_BOTH,
      SPEC(K_COUNT, 0, 1, 1, 0), 0, UNCHANGED, OPENS(END, K_COUNT, 0, UNCHECKED),
      CRC(ATF_OK, ATF_CRC_OK, CRC_BEFORE, CRC_AFTER) },
    { "footer_at_end", "the legacy writer's: checksum 0", ON_BOTH, SPEC(K_COUNT, 0, 1, 0, 0), 0,
      UNCHANGED, OPENS(END, K_COUNT, 0, NOT_COMPUTED), NO_CRC },

    /* a finalized header whose footer field leads to no footer falls back to the last 64
     * bytes (in a detail header, event_count alone marks it finalized) */
#define STALE(what, change, value) { "stale_footer_field", what, ON_BOTH, \
    SPEC(K_COUNT, 1, 1, 1, 0), 0, CHANGED(change, value, 0), OPENS(END, K_COUNT, 0, UNCHECKED), \
    NO_CRC }
    STALE("into the events", set_footer_field, 64 + 5 * 32),
    STALE("inside an event", set_footer_field, 100),
    STALE("UINT64_MAX - 10: adding to it overflows", set_footer_field, UINT64_MAX - 10u),
    STALE("UINT64_MAX - 20: adding to it overflows", set_footer_field, UINT64_MAX - 20u),
    STALE("zero", set_footer_field, 0),
    STALE("one byte short of room", footer_field_one_short, 0),
#undef STALE

    /* found through the header, the footer wins even with bytes after it */
    { "bytes_after_footer", "77 bytes, a footer magic 5 bytes in", ON_BOTH,
      SPEC(K_COUNT, 1, 1, 1, 0), 0,
      { CHANGE(append_tail, 77, 0x3C), CHANGE(put_footer_magic_from_end, 72, 0) },
      OPENS(FIN, K_COUNT, 0, UNCHECKED), NO_CRC },
    { "bytes_after_footer", "50 bytes", ON_BOTH, SPEC(K_COUNT, 1, 1, 1, 0), 0,
      CHANGED(append_tail, 50, 0xEE), OPENS(FIN, K_COUNT, 0, UNCHECKED), NO_CRC },

    /* a footer that disagrees with the events before it: they are counted from its
     * position; the first case of each kind also verifies the CRC (no footer to trust) */
    { "footer_mismatch", "25 events and 25*32 bytes: not where it sits", ON_INDEX,
      SPEC_OFF(K_COUNT, 1, 0, 5, 5 * 32), 0, UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER),
      CRC(ATF_OK, NO_FOOTER, CRC_ZERO, CRC_ZERO) },
    { "footer_mismatch", "bytes_written != event_count * 32", ON_INDEX,
      SPEC_OFF(K_COUNT, 1, 0, 0, 1), 0, UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER), NO_CRC },
    { "footer_mismatch", "fewer events claimed than present", ON_INDEX,
      SPEC_OFF(K_COUNT, 1, 0, -3, -3 * 32), 0, UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER),
      NO_CRC },
    { "footer_mismatch", "the same, found at the end of a placeholder file", ON_INDEX,
      SPEC_OFF(K_COUNT, 0, 0, -3, -3 * 32), 0, UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER),
      NO_CRC },
    { "footer_mismatch", "7 torn bytes, then a footer at the end", ON_INDEX,
      SPEC_OFF(K_COUNT, 0, 7, 0, 0), 0, UNCHANGED, OPENS(MISM, K_COUNT, 7, NO_FOOTER), NO_CRC },
    { "footer_mismatch", "a finalized header pointing at the same footer", ON_INDEX,
      SPEC_OFF(K_COUNT, 1, 7, 0, 0), 0, UNCHANGED, OPENS(MISM, K_COUNT, 7, NO_FOOTER), NO_CRC },
    { "footer_mismatch", "footer count one too many", ON_DETAIL, SPEC_OFF(K_COUNT, 1, 0, 1, 0),
      0, UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER),
      CRC(ATF_OK, NO_FOOTER, CRC_ZERO, CRC_ZERO) },
    { "footer_mismatch", "one too few", ON_DETAIL, SPEC_OFF(K_COUNT, 1, 0, -1, 0), 0,
      UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER), NO_CRC },
    { "footer_mismatch", "bytes_length wrong, at the end of a placeholder file", ON_DETAIL,
      SPEC_OFF(K_COUNT, 0, 0, 0, 8), 0, UNCHANGED, OPENS(MISM, K_COUNT, 0, NO_FOOTER), NO_CRC },
    { "footer_mismatch", "a torn record before a footer at the end: the walk decides",
      ON_DETAIL, SPEC_OFF(K_COUNT, 0, 30, 0, 0), 0, UNCHANGED,
      OPENS(MISM, K_COUNT, ANY, NO_FOOTER), NO_CRC },
    { "footer_mismatch", "bytes_length agrees with the position, the count does not",
      ON_DETAIL, SPEC_OFF(K_COUNT, 0, 0, 3, 0), 0, UNCHANGED,
      OPENS(MISM, K_COUNT, 0, NO_FOOTER), NO_CRC },

    /* the CRC of nothing is 0, which reads as "not computed"; a finalized empty detail
     * file has a placeholder-looking header (count 0, bytes 0): its footer is found at
     * the end */
    { "zero_events", "finalized", ON_INDEX, SPEC(0, 1, 1, 1, 0), 0, UNCHANGED,
      OPENS(FIN, 0, 0, NOT_COMPUTED), NO_CRC },
    { "zero_events", "finalized", ON_DETAIL, SPEC(0, 1, 1, 1, 0), 0, UNCHANGED,
      OPENS(END, 0, 0, NOT_COMPUTED), NO_CRC },
    { "zero_events", "the placeholder header alone", ON_BOTH, SPEC(0, 0, 0, 0, 0), 0,
      UNCHANGED, OPENS(SIZE, 0, 0, NO_FOOTER), NO_CRC },
    { "zero_events", "the placeholder header and 10 torn bytes", ON_BOTH, SPEC(0, 0, 0, 0, 10),
      0, UNCHANGED, OPENS(SIZE, 0, 10, NO_FOOTER), NO_CRC },

    { "crc_mismatch", "a byte of the first event flipped", ON_BOTH, SPEC(K_COUNT, 1, 1, 1, 0),
      0, CHANGED(flip_first_event, 0, 0), OPENS(FIN, K_COUNT, 0, UNCHECKED),
      CRC(ATF_E_CRC, ATF_CRC_MISMATCH, CRC_BEFORE, CRC_AFTER) },
    { "crc_mismatch", "the last decoded byte flipped, a footer at the end", ON_BOTH,
      SPEC(K_COUNT, 0, 1, 1, 0), 0, CHANGED(flip_last_byte, 0, 0),
      OPENS(END, K_COUNT, 0, UNCHECKED), CRC(ATF_E_CRC, ATF_CRC_MISMATCH, CRC_BEFORE, CRC_AFTER) },

    /* magic, then endian, then version decide */
#define IDENTITY(what, ident, rc) { "bad_identity", what, ON_BOTH, SPEC(K_SMALL, 1, 1, 1, 0), \
    0, CHANGED(set_identity, ident, 0), FAILS(rc), NO_CRC }
    IDENTITY("magic", IDENT('A', '3', 1, KEEP), ATF_E_MAGIC),
    IDENTITY("magic and endian", IDENT('A', '3', 0, KEEP), ATF_E_MAGIC),
    IDENTITY("endian 0", IDENT('A', '2', 0, KEEP), ATF_E_ENDIAN),
    IDENTITY("endian 2", IDENT('A', '2', 2, KEEP), ATF_E_ENDIAN),
    IDENTITY("endian before version", IDENT('A', '2', 2, 9), ATF_E_ENDIAN),
    IDENTITY("version 9", IDENT('A', '2', 1, 9), ATF_E_VERSION),
    IDENTITY("version 0", IDENT('A', '2', 1, 0), ATF_E_VERSION),
    IDENTITY("version 4", IDENT('A', '2', 1, 4), ATF_E_VERSION),
    IDENTITY("version 255", IDENT('A', '2', 1, 255), ATF_E_VERSION),
    IDENTITY("magic and version", IDENT('a', '2', 1, 255), ATF_E_MAGIC),
    IDENTITY("magic, endian and version", IDENT('a', '2', 7, 255), ATF_E_MAGIC),
    IDENTITY("endian and version", IDENT('A', '2', 7, 255), ATF_E_ENDIAN),
    IDENTITY("endian and version 0", IDENT('A', '2', 7, 0), ATF_E_ENDIAN),
#undef IDENTITY
    /* version 3 names a packed index file: a layout-1 body has no lane header */
    { "bad_identity", "version 3", ON_INDEX, SPEC_L(1, K_SMALL, 1, 1, 1, 0), 0,
      CHANGED(set_identity, IDENT('A', '2', 1, 3), 0), FAILS(ATF_E_CORRUPT), NO_CRC },
    { "bad_identity", "version 3", ON_DETAIL, SPEC_L(1, K_SMALL, 1, 1, 1, 0), 0,
      CHANGED(set_identity, IDENT('A', '2', 1, 3), 0), FAILS(ATF_E_VERSION), NO_CRC },
    { "bad_identity", "a file of the other kind", ON_BOTH, SPEC_L(1, K_SMALL, 1, 1, 1, 0), 0,
      CHANGED(to_other_kind, 0, 0), FAILS(ATF_E_MAGIC), NO_CRC },

    /* events_offset inside the header is corrupt, past the end truncated; exactly at the
     * end (with the footer field cleared) it is a valid, empty events section */
#define EVENTS_OFFSET(what, change, value, rc) { "bad_events_offset", what, ON_BOTH, \
    SPEC(K_SMALL, 1, 1, 1, 0), 0, CHANGED(change, value, 0), FAILS(rc), NO_CRC }
    EVENTS_OFFSET("0", set_events_offset, 0, ATF_E_CORRUPT),
    EVENTS_OFFSET("32", set_events_offset, 32, ATF_E_CORRUPT),
    EVENTS_OFFSET("63", set_events_offset, 63, ATF_E_CORRUPT),
    EVENTS_OFFSET("one past the end", set_events_offset_past_end, 1, ATF_E_TRUNCATED),
    EVENTS_OFFSET("UINT64_MAX", set_events_offset, UINT64_MAX, ATF_E_TRUNCATED),
    EVENTS_OFFSET("UINT64_MAX - 63", set_events_offset, UINT64_MAX - 63u, ATF_E_TRUNCATED),
#undef EVENTS_OFFSET
    { "bad_events_offset", "at the end, no footer", ON_BOTH, SPEC(K_SMALL, 1, 1, 1, 0), 0,
      CHANGED(events_section_empty, 0, 0), OPENS(SIZE, 0, 0, NO_FOOTER), NO_CRC },

    /* a finalized file cut in the middle of its footer: 30 footer bytes remain */
    { "index_footer_cut", "30 footer bytes", ON_INDEX, SPEC(20, 1, 1, 1, 0), 0,
      CHANGED(truncate_to, 64 + 20 * 32 + 30, 0), OPENS(SIZE, 20, 30, NO_FOOTER), NO_CRC },
    /* cut in its second half: the last whole 32-byte slot is the footer's first half,
     * which must not be read as an event */
    { "index_footer_cut_late", "40 footer bytes", ON_INDEX, SPEC(20, 0, 1, 1, 0), 0,
      CHANGED(truncate_to, 64 + 20 * 32 + 40, 0), OPENS(SIZE, 20, 40, NO_FOOTER), NO_CRC },
    /* a footer magic inside the header gap (a zero footer: count 0, bytes 0) and the header
     * leading to it: no writer puts a footer before the events, so it is no candidate
     * (like one past the end of the file); the last 64 bytes hold the real footer */
    { "index_footer_before_events", "a footer in the header gap", ON_INDEX,
      SPEC_AT(3, 1, 1, 1, 0, 192), 0,
      { CHANGE(put_footer_magic_at, 64, 0), CHANGE(set_footer_field, 64, 0) },
      OPENS(END, 3, 0, UNCHECKED), NO_CRC },
    /* the last 64 bytes count only when size >= events_offset + 64: here they start inside
     * the header (at offset 40), where the bytes happen to read "2ITA" */
    { "index_footer_overlapping_header", "the last 64 bytes start in the header", ON_INDEX,
      SPEC_L(1, 1, 0, 0, 0, 8), 0, CHANGED(put_footer_magic_at, 40, 0),
      OPENS(SIZE, 1, 8, NO_FOOTER), NO_CRC },
#define EVENT_SIZE(size) { "index_bad_event_size", #size, ON_INDEX, SPEC(4, 1, 1, 1, 0), 0, \
    CHANGED(set_event_size, size, 0), FAILS(ATF_E_CORRUPT), NO_CRC }
    EVENT_SIZE(0), EVENT_SIZE(24), EVENT_SIZE(31), EVENT_SIZE(33), EVENT_SIZE(64),
    EVENT_SIZE(0xFFFFFFFFu),
#undef EVENT_SIZE
    /* event_size is read at the layout's own offset: layout 1 with 32 at layout 2's */
    { "index_bad_event_size", "32 at offset 20 only", ON_INDEX, SPEC_L(1, 4, 1, 1, 1, 0), 0,
      { CHANGE(set_u32_at, 20, 32), CHANGE(set_u32_at, 24, 0) }, FAILS(ATF_E_CORRUPT), NO_CRC },

    /* a whole record header whose total_length runs past the end of the file */
#define TORN_RECORD(bytes) { "detail_torn_record", #bytes " bytes of record 8", ON_DETAIL, \
    SPEC(8, 0, 0, 0, bytes), 0, UNCHANGED, OPENS(SIZE, 8, bytes, NO_FOOTER), NO_CRC }
    TORN_RECORD(24), TORN_RECORD(25), TORN_RECORD(60), TORN_RECORD(123), TORN_RECORD(124),
#undef TORN_RECORD
    { "detail_torn_record", "the last record claims one byte more than the file has",
      ON_DETAIL, SPEC(6, 0, 0, 0, 0), 0, CHANGED(record_past_end, 5, 0),
      OPENS(SIZE, 5, FROM_CHANGE, NO_FOOTER), NO_CRC },
    { "detail_torn_record", "and the first record claims 4 GiB", ON_DETAIL,
      SPEC(6, 0, 0, 0, 0), 0,
      { CHANGE(record_past_end, 5, 0), CHANGE(set_record_length, 0, 0xFFFFFFFFu) },
      OPENS(SIZE, 0, FROM_CHANGE, NO_FOOTER), NO_CRC },

    /* total_length below 24 fails open as corrupt at that record's offset, in a crashed
     * file as well as inside the section a footer covers */
#define TOTAL_LENGTH(fin, record, length, offset) { "detail_bad_total_length", \
    "record " #record ": " #length ", finalized " #fin, ON_DETAIL, SPEC(6, fin, fin, fin, 0), 0, \
    CHANGED(set_record_length, record, length), FAILS_AT(ATF_E_CORRUPT, offset), NO_CRC }
    TOTAL_LENGTH(0, 2, 0, AT_CHANGE), TOTAL_LENGTH(0, 2, 1, AT_CHANGE),
    TOTAL_LENGTH(0, 2, 17, AT_CHANGE), TOTAL_LENGTH(0, 2, 23, AT_CHANGE),
    TOTAL_LENGTH(0, 0, 0, 64),
    TOTAL_LENGTH(1, 2, 0, AT_CHANGE), TOTAL_LENGTH(1, 2, 1, AT_CHANGE),
    TOTAL_LENGTH(1, 2, 17, AT_CHANGE), TOTAL_LENGTH(1, 2, 23, AT_CHANGE),
    TOTAL_LENGTH(1, 0, 0, 64),
#undef TOTAL_LENGTH

    /* records of exactly 24 bytes (no payload) are valid */
    { "detail_empty_payloads", "three records of 24 bytes", ON_DETAIL, SPEC(0, 0, 0, 0, 0), 0,
      CHANGED(append_empty_records, 3, 0), OPENS(SIZE, 3, 0, NO_FOOTER), NO_CRC },
};
#undef FIN
#undef END
#undef SIZE
#undef MISM
#undef UNCHECKED
#undef NOT_COMPUTED
#undef NO_FOOTER

/* A count of a case: the kind's for K_COUNT and K_SMALL. */
static uint64_t kind_count(const file_kind *k, uint64_t count) {
    return count == K_COUNT ? k->count : count == K_SMALL ? k->small_count : count;
}

/* The fixture is what its spec says: header (and gap), events, torn bytes and footer in
 * so many bytes; a header not finalized leads to no footer. */
static void check_built(const file_kind *k, const file_spec *s, const fx_buf *b) {
    uint64_t eo = s->events_offset ? s->events_offset : 64u;
    CHECK_EQ(eo + k->bytes(s->count) + s->torn + (s->footer ? 64u : 0u), b->len);
    if (!s->finalized) CHECK_EQ(0, fx_get64(b->data, k->footer_field_at));
}

/* The CRC32-C of the events of a fixture whose events start at 64. */
static uint32_t events_crc(const file_kind *k, const file_spec *s, const fx_buf *b) {
    size_t n = (size_t)k->bytes(s->count);
    CHECK(b->len >= 64u + n);
    return b->len >= 64u + n ? fx_crc32c(b->data + 64, n) : 0;
}

static uint32_t crc_of(int which, uint32_t before, uint32_t after) {
    return which == CRC_BEFORE ? before : which == CRC_AFTER ? after : 0;
}

/* One case on one fixture: built, checked, changed, opened every way, its CRC verified. */
static void run_file_case(const file_case *fc, const file_kind *k, int layout, size_t torn) {
    int before = harness__failures_in_test;
    change_ctx c;
    fx_buf b;
    expect x = fc->want;
    uint32_t crc_before = 0, crc_after = 0;
    size_t i, changed_at = 0;
    c.kind = k;
    c.spec = fc->spec;
    c.spec.layout = layout;
    c.spec.count = kind_count(k, fc->spec.count);
    c.spec.torn = torn;
    b = k->build(&c.spec);
    check_built(k, &c.spec, &b);
    if (fc->crc.checked) crc_before = events_crc(k, &c.spec, &b);
    for (i = 0; i < 2 && fc->changes[i].apply; i++)
        changed_at = fc->changes[i].apply(&b, &c, fc->changes[i].a, fc->changes[i].v);
    x.count = kind_count(k, x.count);
    if (x.torn == TORN_SPEC) x.torn = torn;
    if (x.torn == FROM_CHANGE) x.torn = b.len - changed_at;
    if (x.err_offset == AT_CHANGE) x.err_offset = changed_at;
    CHECK_FILE(k, &b, x);
    if (fc->crc.checked) {
        crc_after = events_crc(k, &c.spec, &b);
        if (fc->crc.rc == ATF_E_CRC) CHECK(crc_before != crc_after);
        CHECK_FILE_CRC(k, &b, fc->crc.rc, fc->crc.state, crc_of(fc->crc.footer_crc, crc_before,
                       crc_after), crc_of(fc->crc.computed, crc_before, crc_after));
    }
    fx_buf_free(&b);
    if (harness__failures_in_test != before)
        printf("    ^ %s: %s (%s file, layout %d, %zu torn bytes)\n", fc->test, fc->what,
               k->name, layout, torn);
}

/* Every case of the test `test`: on each kind and layout it names, each torn size of its
 * range. */
static void run_file_cases(const char *test) {
    size_t i, torn, runs = 0;
    int kind, layout;
    for (i = 0; i < sizeof file_cases / sizeof file_cases[0]; i++) {
        const file_case *fc = &file_cases[i];
        if (strcmp(fc->test, test) != 0) continue;
        for (kind = 0; kind < KIND_COUNT; kind++) {
            if (!(fc->kinds & (1 << kind))) continue;
            for (layout = 1; layout <= 2; layout++) {
                if (fc->spec.layout && fc->spec.layout != layout) continue;
                for (torn = fc->spec.torn; torn == fc->spec.torn || torn <= fc->torn_last;
                     torn++, runs++)
                    run_file_case(fc, &file_kinds[kind], layout, torn);
            }
        }
    }
    CHECK(runs > 0); /* the test has cases */
}

/* The test `name` runs the file cases named so. */
#define FILE_CASES(name) static void name(void) { run_file_cases(#name); }
FILE_CASES(finalized)
FILE_CASES(events_offset_gap)
FILE_CASES(crc_zero)
FILE_CASES(no_footer)
FILE_CASES(torn)
FILE_CASES(footer_at_end)
FILE_CASES(stale_footer_field)
FILE_CASES(bytes_after_footer)
FILE_CASES(footer_mismatch)
FILE_CASES(zero_events)
FILE_CASES(crc_mismatch)
FILE_CASES(bad_identity)
FILE_CASES(bad_events_offset)
FILE_CASES(index_footer_cut)
FILE_CASES(index_footer_cut_late)
FILE_CASES(index_footer_before_events)
FILE_CASES(index_footer_overlapping_header)
FILE_CASES(index_bad_event_size)
FILE_CASES(detail_torn_record)
FILE_CASES(detail_bad_total_length)
FILE_CASES(detail_empty_payloads)

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
