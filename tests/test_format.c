/* test_format.c - the format layer: every encoder against the hand-built bytes of
 * tests/fixtures.h (both layouts), every decoder back, round trips, decode errors, and the
 * result names and error line. */
#include "atf.h"
#include "harness.h"
#include "fixtures.h"
#include "scratch_dir.h"

#include <stdlib.h>

/* ---- expected structs, from the fixture formulas ---- */
static atf_index_header expected_index_header(const fx_index_spec *s) {
    atf_index_header h;
    memset(&h, 0, sizeof h);
    h.endian = 1;
    h.version = (uint8_t)s->layout;
    h.arch = FX_ARCH;
    h.os = FX_OS;
    h.flags = s->stride ? 1u : 0u;
    h.thread_id = s->thread_id ? s->thread_id : FX_THREAD_ID;
    h.clock_type = FX_CLOCK;
    h.event_size = 32;
    h.events_offset = fx_index_events_offset(s);
    if (s->finalized) {
        h.event_count = s->count;
        h.footer_offset = fx_index_footer_pos(s);
        h.time_start_ns = s->count ? fx_ts(0) : 0;
        h.time_end_ns = s->count ? fx_ts(s->count - 1) : 0;
    }
    return h;
}

static atf_index_event expected_index_event(int layout, uint64_t i, uint64_t stride) {
    atf_index_event e;
    memset(&e, 0, sizeof e);
    e.timestamp_ns = fx_ts(i);
    e.function_id = fx_function_id(i);
    e.detail_seq = fx_detail_seq_of(stride, i);
    e.kind = fx_kind(i);
    if (layout == 1) {
        e.thread_id = FX_THREAD_ID;
        e.call_depth = fx_call_depth(i);
    }
    return e;
}

static atf_detail_header expected_detail_header(const fx_detail_spec *s) {
    atf_detail_header h;
    memset(&h, 0, sizeof h);
    h.endian = 1;
    h.version = (uint8_t)s->layout;
    h.arch = FX_ARCH;
    h.os = FX_OS;
    h.thread_id = FX_THREAD_ID;
    h.events_offset = fx_detail_events_offset(s);
    if (s->finalized) {
        h.event_count = s->count;
        h.bytes_length = fx_detail_bytes(s->count);
        h.index_seq_start = s->count ? fx_detail_index_seq(s->stride, 0) : 0;
        h.index_seq_end = s->count ? fx_detail_index_seq(s->stride, s->count - 1) : 0;
    }
    return h;
}

static atf_detail_event_header expected_record_header(int layout, uint64_t j, uint64_t stride) {
    atf_detail_event_header e;
    uint64_t k = fx_detail_index_seq(stride, j);
    memset(&e, 0, sizeof e);
    e.total_length = fx_record_length(j);
    e.type = (uint16_t)(fx_kind(k) == FX_KIND_CALL ? ATF_DETAIL_FUNCTION_CALL
                                                   : ATF_DETAIL_FUNCTION_RETURN);
    e.flags = fx_detail_flags(j);
    e.index_seq = k;
    e.thread_id = layout == 1 ? FX_THREAD_ID : 0;
    e.timestamp_ns = fx_ts(k);
    return e;
}

/* The stack bytes of record j, for payload encoding. */
static const uint8_t *stack_bytes(uint64_t j) {
    static uint8_t buf[64];
    size_t b;
    for (b = 0; b < fx_stack_size(j); b++) buf[b] = fx_stack_byte(j, b);
    return buf;
}

static atf_detail_payload expected_payload(uint64_t j, uint64_t stride) {
    atf_detail_payload p;
    uint64_t k = fx_detail_index_seq(stride, j);
    unsigned r;
    memset(&p, 0, sizeof p);
    p.function_id = fx_function_id(k);
    for (r = 0; r < 8; r++) p.x[r] = fx_reg(j, r);
    p.lr = fx_lr(k);
    p.fp = fx_fp(j);
    p.sp = fx_sp(j);
    p.stack_size = fx_stack_size(j);
    p.stack = stack_bytes(j);
    return p;
}

#define CHECK_INDEX_HEADER(a, b) do { \
    CHECK_EQ((a).endian, (b).endian); CHECK_EQ((a).version, (b).version); \
    CHECK_EQ((a).arch, (b).arch); CHECK_EQ((a).os, (b).os); CHECK_EQ((a).flags, (b).flags); \
    CHECK_EQ((a).thread_id, (b).thread_id); CHECK_EQ((a).clock_type, (b).clock_type); \
    CHECK_EQ((a).event_size, (b).event_size); CHECK_EQ((a).event_count, (b).event_count); \
    CHECK_EQ((a).events_offset, (b).events_offset); \
    CHECK_EQ((a).footer_offset, (b).footer_offset); \
    CHECK_EQ((a).time_start_ns, (b).time_start_ns); CHECK_EQ((a).time_end_ns, (b).time_end_ns); \
} while (0)

#define CHECK_DETAIL_HEADER(a, b) do { \
    CHECK_EQ((a).endian, (b).endian); CHECK_EQ((a).version, (b).version); \
    CHECK_EQ((a).arch, (b).arch); CHECK_EQ((a).os, (b).os); CHECK_EQ((a).flags, (b).flags); \
    CHECK_EQ((a).thread_id, (b).thread_id); CHECK_EQ((a).events_offset, (b).events_offset); \
    CHECK_EQ((a).event_count, (b).event_count); CHECK_EQ((a).bytes_length, (b).bytes_length); \
    CHECK_EQ((a).index_seq_start, (b).index_seq_start); \
    CHECK_EQ((a).index_seq_end, (b).index_seq_end); \
} while (0)

#define CHECK_PAYLOAD(a, b) do { \
    unsigned r_; \
    CHECK_EQ((a).function_id, (b).function_id); \
    for (r_ = 0; r_ < 8; r_++) CHECK_EQ((a).x[r_], (b).x[r_]); \
    CHECK_EQ((a).lr, (b).lr); CHECK_EQ((a).fp, (b).fp); CHECK_EQ((a).sp, (b).sp); \
    CHECK_EQ((a).stack_size, (b).stack_size); \
    if ((a).stack_size == (b).stack_size && (a).stack_size) \
        CHECK_MEM((a).stack, (b).stack, (a).stack_size); \
} while (0)

/* Layout 1 stores event_count in 32 bits: the encoder saturates. */
static void index_header_l1_count_saturates(void) {
    atf_index_header h;
    uint8_t out[64];
    fx_index_spec s;
    memset(&s, 0, sizeof s);
    s.layout = 1;
    h = expected_index_header(&s);
    h.event_count = (uint64_t)UINT32_MAX + 5u;
    atf_index_header_encode(&h, out);
    CHECK_EQ(0xFFFFFFFFu, fx_get32(out, 28));
    CHECK_EQ(32, fx_get32(out, 24));
    h.version = 2;
    atf_index_header_encode(&h, out);
    CHECK_EQ((uint64_t)UINT32_MAX + 5u, fx_get64(out, 24));
    CHECK_EQ(32, fx_get32(out, 20));
}

static void index_event_encode_decode(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        uint64_t i;
        for (i = 0; i < 40; i++) {
            uint8_t want[32], out[32];
            atf_index_event e = expected_index_event(layout, i, 3), d;
            fx_index_event(layout, i, FX_THREAD_ID, 3, want);
            memset(out, 0xAA, sizeof out);
            atf_index_event_encode(layout, &e, out);
            CHECK_MEM(want, out, 32);
            memset(&d, 0x55, sizeof d);
            atf_index_event_decode(layout, want, &d);
            CHECK_INDEX_EVENT(e, d);
        }
    }
}

/* Layout 2 ignores thread_id/call_depth on encode and reads them as 0; reserved is zero. */
static void index_event_l2_narrow_fields(void) {
    atf_index_event e = expected_index_event(1, 3, 0), d;
    uint8_t out[32];
    size_t k;
    memset(out, 0xEE, sizeof out);
    atf_index_event_encode(2, &e, out);
    for (k = 25; k < 32; k++) CHECK_EQ(0, out[k]);
    CHECK_EQ(UINT64_MAX, fx_get64(out, 16));
    atf_index_event_decode(2, out, &d);
    CHECK_EQ(0, d.thread_id);
    CHECK_EQ(0, d.call_depth);
    CHECK_EQ(FX_KIND_RETURN, d.kind);
    /* a kind byte of 255 is widened, not sign-extended */
    out[24] = 0xFF;
    atf_index_event_decode(2, out, &d);
    CHECK_EQ(255, d.kind);
}

/* Layout 1: ATF_NO_DETAIL <-> 0xFFFFFFFF; other values keep their low 32 bits. */
static void index_event_l1_no_detail(void) {
    atf_index_event e = expected_index_event(1, 0, 0), d;
    uint8_t out[32];
    e.detail_seq = ATF_NO_DETAIL;
    atf_index_event_encode(1, &e, out);
    CHECK_EQ(0xFFFFFFFFu, fx_get32(out, 28));
    atf_index_event_decode(1, out, &d);
    CHECK_EQ(ATF_NO_DETAIL, d.detail_seq);
    e.detail_seq = 0xFFFFFFFEu;
    atf_index_event_encode(1, &e, out);
    atf_index_event_decode(1, out, &d);
    CHECK_EQ(0xFFFFFFFEu, d.detail_seq);
    e.detail_seq = 0;
    atf_index_event_encode(1, &e, out);
    atf_index_event_decode(1, out, &d);
    CHECK_EQ(0, d.detail_seq);
    /* a large kind stays whole in layout 1 */
    fx_put32(out, 20, 0x01000003u);
    atf_index_event_decode(1, out, &d);
    CHECK_EQ(0x01000003u, d.kind);
}

static void detail_record_encode_decode(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        uint64_t j;
        for (j = 0; j < 12; j++) {
            uint8_t want[256], out[256];
            atf_detail_event_header e = expected_record_header(layout, j, 2), dh;
            atf_detail_payload p = expected_payload(j, 2), dp;
            size_t n;
            fx_detail_record(layout, j, FX_THREAD_ID, 2, want);
            memset(out, 0xAA, sizeof out);
            atf_detail_event_header_encode(layout, &e, out);
            n = atf_detail_payload_encode(&p, out + 24, sizeof out - 24);
            CHECK_EQ(fx_record_length(j) - 24u, n);
            CHECK_MEM(want, out, 24);
            CHECK_MEM(want + 24, out + 24, fx_record_length(j) - 24u);
            memset(&dh, 0x55, sizeof dh);
            atf_detail_event_header_decode(layout, want, &dh);
            CHECK_RECORD_HEADER(e, dh);
            CHECK_RESULT(ATF_OK, atf_detail_payload_decode(want + 24, fx_record_length(j) - 24u,
                                                            &dp));
            CHECK_PAYLOAD(p, dp);
            CHECK(dp.stack == want + 24 + 100);
        }
    }
}

/* Layout 1 keeps index_seq in 32 bits and the thread id; layout 2 has 64 bits and no thread. */
static void detail_record_widths(void) {
    atf_detail_event_header e = expected_record_header(2, 0, 1), d;
    uint8_t out[24];
    e.index_seq = 0x1122334455667788ull;
    e.thread_id = 77;
    atf_detail_event_header_encode(2, &e, out);
    CHECK_EQ(0x1122334455667788ull, fx_get64(out, 8));
    atf_detail_event_header_decode(2, out, &d);
    CHECK_EQ(0x1122334455667788ull, d.index_seq);
    CHECK_EQ(0, d.thread_id);
    atf_detail_event_header_encode(1, &e, out);
    CHECK_EQ(0x55667788u, fx_get32(out, 8));
    CHECK_EQ(77, fx_get32(out, 12));
    atf_detail_event_header_decode(1, out, &d);
    CHECK_EQ(0x55667788u, d.index_seq);
    CHECK_EQ(77, d.thread_id);
}

static void payload_decode_short(void) {
    uint8_t rec[256];
    uint64_t j = 3; /* stack_size 33 */
    size_t full = fx_record_length(j) - 24u, len;
    atf_detail_payload p;
    fx_detail_record(1, j, FX_THREAD_ID, 1, rec);
    CHECK_EQ(33, fx_stack_size(j));
    for (len = 0; len < full; len++)
        CHECK_RESULT(ATF_E_TRUNCATED, atf_detail_payload_decode(rec + 24, len, &p));
    CHECK_RESULT(ATF_OK, atf_detail_payload_decode(rec + 24, full, &p));
    CHECK_EQ(33, p.stack_size);
    CHECK_RESULT(ATF_OK, atf_detail_payload_decode(rec + 24, full + 5, &p));
    /* a payload announcing the maximum stack with none present */
    fx_put16(rec, 24 + 96, 256);
    CHECK_RESULT(ATF_E_TRUNCATED, atf_detail_payload_decode(rec + 24, full, &p));
    /* zero stack: exactly 100 bytes are enough */
    fx_put16(rec, 24 + 96, 0);
    CHECK_RESULT(ATF_OK, atf_detail_payload_decode(rec + 24, 100, &p));
    CHECK_EQ(0, p.stack_size);
}

/* ---- headers and footers: the same tests for both file kinds ---- */

/* The fields both fixture specs have; a file kind builds its own spec from them. */
typedef struct file_spec {
    int layout;
    uint64_t count, stride, events_offset;
    int finalized, footer, crc;
} file_spec;

/* A footer's five fields by meaning (bytes: the index footer's bytes_written, the detail
 * footer's bytes_length). */
typedef struct footer_values {
    uint32_t checksum;
    uint64_t event_count, bytes, time_start_ns, time_end_ns;
} footer_values;

/* What a header decode fills in even when the version fails. */
typedef struct header_values {
    uint8_t version;
    uint32_t thread_id;
    uint64_t events_offset;
} header_values;

/* An index or a detail file, as the shared tests see it. */
typedef struct format_kind {
    const char *name;                  /* named when the kind's checks fail */
    const char *magic, *footer_magic;
    void (*build)(fx_buf *b, const file_spec *s);
    uint64_t (*bytes)(uint64_t count);                 /* size of `count` events */
    uint64_t (*event_ts)(uint64_t stride, uint64_t j); /* timestamp of event j */
    /* encodes the expected header into out; decodes in and checks it against the same */
    void (*header_check)(const file_spec *s, uint8_t *out, const uint8_t *in);
    atf_result (*header_decode)(const uint8_t *in, header_values *v);
    void (*footer_encode)(const footer_values *f, uint8_t *out);
    atf_result (*footer_decode)(const uint8_t *in, footer_values *f);
} format_kind;

/* Copies the fields a fixture spec (fx_index_spec or fx_detail_spec) shares with file_spec. */
#define SPEC_FROM(s, f) do { \
    memset(&(s), 0, sizeof (s)); \
    (s).layout = (f)->layout; (s).count = (f)->count; (s).stride = (f)->stride; \
    (s).events_offset = (f)->events_offset; (s).finalized = (f)->finalized; \
    (s).footer = (f)->footer; (s).crc = (f)->crc; \
} while (0)

/* Copies a footer's fields between a footer struct and footer_values; the byte count is
 * named differently on each side. */
#define FOOTER_COPY(to, from, to_bytes, from_bytes) do { \
    (to).checksum = (from).checksum; (to).event_count = (from).event_count; \
    (to).time_start_ns = (from).time_start_ns; (to).time_end_ns = (from).time_end_ns; \
    (to).to_bytes = (from).from_bytes; \
} while (0)

#define HEADER_VALUES_OF(v, h) do { \
    (v)->version = (h).version; (v)->thread_id = (h).thread_id; \
    (v)->events_offset = (h).events_offset; \
} while (0)

static fx_index_spec index_spec_of(const file_spec *f) {
    fx_index_spec s;
    SPEC_FROM(s, f);
    return s;
}
static void index_build(fx_buf *b, const file_spec *f) {
    fx_index_spec s = index_spec_of(f);
    fx_index_build(b, &s);
}
static uint64_t index_bytes(uint64_t count) { return count * 32u; }
static uint64_t index_ts(uint64_t stride, uint64_t i) {
    (void)stride;
    return fx_ts(i);
}
/* Encodes the expected header into out; decodes in and checks it against the same. */
static void index_header_check(const file_spec *f, uint8_t *out, const uint8_t *in) {
    fx_index_spec s = index_spec_of(f);
    atf_index_header x = expected_index_header(&s), h;
    atf_index_header_encode(&x, out);
    CHECK_RESULT(ATF_OK, atf_index_header_decode(in, &h));
    CHECK_INDEX_HEADER(x, h);
}
static atf_result index_header_decode(const uint8_t *in, header_values *v) {
    atf_index_header h;
    atf_result rc;
    memset(&h, 0, sizeof h);
    rc = atf_index_header_decode(in, &h);
    HEADER_VALUES_OF(v, h);
    return rc;
}
static void index_footer_encode(const footer_values *v, uint8_t *out) {
    atf_index_footer f;
    FOOTER_COPY(f, *v, bytes_written, bytes);
    atf_index_footer_encode(&f, out);
}
static atf_result index_footer_decode(const uint8_t *in, footer_values *v) {
    atf_index_footer f;
    atf_result rc;
    memset(&f, 0, sizeof f);
    rc = atf_index_footer_decode(in, &f);
    FOOTER_COPY(*v, f, bytes, bytes_written);
    return rc;
}

static fx_detail_spec detail_spec_of(const file_spec *f) {
    fx_detail_spec s;
    SPEC_FROM(s, f);
    return s;
}
static void detail_build(fx_buf *b, const file_spec *f) {
    fx_detail_spec s = detail_spec_of(f);
    fx_detail_build(b, &s);
}
static uint64_t detail_bytes(uint64_t count) { return fx_detail_bytes(count); }
static uint64_t detail_ts(uint64_t stride, uint64_t j) {
    return fx_ts(fx_detail_index_seq(stride, j));
}
static void detail_header_check(const file_spec *f, uint8_t *out, const uint8_t *in) {
    fx_detail_spec s = detail_spec_of(f);
    atf_detail_header x = expected_detail_header(&s), h;
    atf_detail_header_encode(&x, out);
    CHECK_RESULT(ATF_OK, atf_detail_header_decode(in, &h));
    CHECK_DETAIL_HEADER(x, h);
}
static atf_result detail_header_decode(const uint8_t *in, header_values *v) {
    atf_detail_header h;
    atf_result rc;
    memset(&h, 0, sizeof h);
    rc = atf_detail_header_decode(in, &h);
    HEADER_VALUES_OF(v, h);
    return rc;
}
static void detail_footer_encode(const footer_values *v, uint8_t *out) {
    atf_detail_footer f;
    FOOTER_COPY(f, *v, bytes_length, bytes);
    atf_detail_footer_encode(&f, out);
}
static atf_result detail_footer_decode(const uint8_t *in, footer_values *v) {
    atf_detail_footer f;
    atf_result rc;
    memset(&f, 0, sizeof f);
    rc = atf_detail_footer_decode(in, &f);
    FOOTER_COPY(*v, f, bytes, bytes_length);
    return rc;
}

enum { KIND_INDEX, KIND_DETAIL, KIND_COUNT };
static const format_kind format_kinds[KIND_COUNT] = {
    { "index", "ATI2", "2ITA", index_build, index_bytes, index_ts, index_header_check,
      index_header_decode, index_footer_encode, index_footer_decode },
    { "detail", "ATD2", "2DTA", detail_build, detail_bytes, detail_ts, detail_header_check,
      detail_header_decode, detail_footer_encode, detail_footer_decode },
};

/* Runs a test for each file kind; a kind whose checks failed is named. */
static void each_kind(void (*test)(const format_kind *, int kind)) {
    int k;
    for (k = 0; k < KIND_COUNT; k++) {
        int before = harness__failures_in_test;
        test(&format_kinds[k], k);
        if (harness__failures_in_test != before)
            printf("  FAIL for the %s file kind\n", format_kinds[k].name);
    }
}
/* The test `name` runs name_kind over both kinds. */
#define BOTH_KINDS(name) static void name(void) { each_kind(name##_kind); }

#define CHECK_FOOTER_VALUES(a, b) do { \
    CHECK_EQ((a).checksum, (b).checksum); CHECK_EQ((a).event_count, (b).event_count); \
    CHECK_EQ((a).bytes, (b).bytes); CHECK_EQ((a).time_start_ns, (b).time_start_ns); \
    CHECK_EQ((a).time_end_ns, (b).time_end_ns); \
} while (0)

/* The expected header encodes to the fixture's bytes, and the fixture's bytes decode to
 * it: placeholder and finalized, with and without detail links, with a gap after it. */
static void header_encode_decode_kind(const format_kind *k, int kind) {
    static const struct { uint64_t count, stride, events_offset; int footer_always; } cases[] = {
        { 9, 2, 0, 0 }, { 11, 0, 128, 1 }, { 5, 3, 0, 0 } };
    int layout, fin;
    size_t c;
    (void)kind;
    for (layout = 1; layout <= 2; layout++) {
        for (fin = 0; fin <= 1; fin++) {
            for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                file_spec s;
                fx_buf b = { NULL, 0, 0 };
                uint8_t out[64];
                memset(&s, 0, sizeof s);
                s.layout = layout;
                s.count = cases[c].count;
                s.stride = cases[c].stride;
                s.events_offset = cases[c].events_offset;
                s.finalized = fin;
                s.footer = cases[c].footer_always || fin;
                k->build(&b, &s);
                memset(out, 0xAA, sizeof out);
                k->header_check(&s, out, b.data);
                CHECK_MEM(b.data, out, 64);
                fx_buf_free(&b);
            }
        }
    }
}
BOTH_KINDS(header_encode_decode)

/* The footer the fixture ends with, with and without a checksum. */
static void footer_encode_decode_kind(const format_kind *k, int kind) {
    static const struct { uint64_t count, stride; } files[KIND_COUNT] = { { 7, 0 }, { 6, 2 } };
    uint64_t n = files[kind].count, stride = files[kind].stride;
    int layout, crc;
    for (layout = 1; layout <= 2; layout++) {
        for (crc = 0; crc <= 1; crc++) {
            file_spec s;
            fx_buf b = { NULL, 0, 0 };
            footer_values f, d;
            uint8_t out[64];
            const uint8_t *want;
            memset(&s, 0, sizeof s);
            s.layout = layout;
            s.count = n;
            s.stride = stride;
            s.finalized = s.footer = 1;
            s.crc = crc;
            k->build(&b, &s);
            want = b.data + b.len - 64;
            f.checksum = crc ? fx_crc32c(b.data + 64, (size_t)k->bytes(n)) : 0;
            f.event_count = n;
            f.bytes = k->bytes(n);
            f.time_start_ns = k->event_ts(stride, 0);
            f.time_end_ns = k->event_ts(stride, n - 1);
            memset(out, 0xAA, sizeof out);
            k->footer_encode(&f, out);
            CHECK_MEM(want, out, 64);
            CHECK_RESULT(ATF_OK, k->footer_decode(want, &d));
            CHECK_FOOTER_VALUES(f, d);
            fx_buf_free(&b);
        }
    }
}
BOTH_KINDS(footer_encode_decode)

/* ---- header decode errors: magic, then endian, then version ---- */
/* One byte changed at a time (from a fresh header where `fresh`); a failed version still
 * fills in the rest of the header. A file of the other kind fails on its magic, and
 * footers check their magic only. */
static void header_decode_errors_kind(const format_kind *k, int kind) {
    static const struct { int fresh; size_t at; uint8_t byte; atf_result rc; } steps[] = {
        { 1, 4, 2, ATF_E_ENDIAN }, { 0, 5, 9, ATF_E_ENDIAN }, { 0, 0, 'a', ATF_E_MAGIC },
        { 1, 4, 0, ATF_E_ENDIAN }, { 0, 5, 7, ATF_E_ENDIAN }, { 0, 3, '3', ATF_E_MAGIC },
        { 1, 5, 4, ATF_E_VERSION }, { 0, 5, 0, ATF_E_VERSION }, { 0, 5, 255, ATF_E_VERSION },
    };
    const format_kind *other = &format_kinds[kind == KIND_INDEX ? KIND_DETAIL : KIND_INDEX];
    fx_buf b = { NULL, 0, 0 }, ob = { NULL, 0, 0 };
    file_spec s;
    header_values v;
    footer_values f;
    uint8_t in[64];
    size_t i;
    memset(&s, 0, sizeof s);
    s.layout = 2;
    s.count = 2;
    k->build(&b, &s);
    other->build(&ob, &s);
    for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (steps[i].fresh) memcpy(in, b.data, 64);
        in[steps[i].at] = steps[i].byte;
        CHECK_RESULT(steps[i].rc, k->header_decode(in, &v));
        if (steps[i].rc == ATF_E_VERSION) {
            CHECK_EQ(steps[i].byte, v.version);
            CHECK_EQ(FX_THREAD_ID, v.thread_id);
            CHECK_EQ(64, v.events_offset);
        }
    }
    memcpy(in, b.data, 64); /* version 3: a packed file, of index files only */
    in[5] = 3;
    CHECK_RESULT(kind == KIND_INDEX ? ATF_OK : ATF_E_VERSION, k->header_decode(in, &v));
    CHECK_RESULT(ATF_E_MAGIC, k->header_decode(ob.data, &v));
    memset(in, 0, sizeof in);
    memcpy(in, k->footer_magic, 4);
    CHECK_RESULT(ATF_OK, k->footer_decode(in, &f));
    CHECK_RESULT(ATF_E_MAGIC, other->footer_decode(in, &f));
    memcpy(in, k->magic, 4);
    CHECK_RESULT(ATF_E_MAGIC, k->footer_decode(in, &f));
    fx_buf_free(&b);
    fx_buf_free(&ob);
}
BOTH_KINDS(header_decode_errors)

/* ---- round trips over pseudo-random values ---- */
/* The fields both headers have, at random (h: either header struct). */
#define RANDOM_HEADER_START(h, layout) do { \
    memset(&(h), 0, sizeof (h)); \
    (h).endian = 1; \
    (h).version = (uint8_t)(layout); \
    (h).arch = (uint8_t)rng_next(); \
    (h).os = (uint8_t)rng_next(); \
    (h).flags = (uint32_t)rng_next(); \
    (h).thread_id = (uint32_t)rng_next(); \
} while (0)

static void round_trips(void) {
    int n, kind;
    rng_seed(42);
    for (n = 0; n < 500; n++) {
        int layout = (n & 1) ? 2 : 1;
        uint8_t buf[64];
        {
            atf_index_header h, d;
            RANDOM_HEADER_START(h, layout);
            h.clock_type = (uint8_t)rng_next();
            h.event_size = (uint32_t)rng_next();
            h.event_count = layout == 1 ? (uint32_t)rng_next() : rng_next();
            h.events_offset = rng_next();
            h.footer_offset = rng_next();
            h.time_start_ns = rng_next();
            h.time_end_ns = rng_next();
            atf_index_header_encode(&h, buf);
            CHECK_RESULT(ATF_OK, atf_index_header_decode(buf, &d));
            CHECK_INDEX_HEADER(h, d);
        }
        {
            atf_index_event e, d;
            memset(&e, 0, sizeof e);
            e.timestamp_ns = rng_next();
            e.function_id = rng_next();
            e.detail_seq = layout == 1 ? (uint32_t)rng_next() : rng_next();
            if (layout == 1 && e.detail_seq == 0xFFFFFFFFu) e.detail_seq = ATF_NO_DETAIL;
            e.kind = layout == 1 ? (uint32_t)rng_next() : (uint8_t)rng_next();
            if (layout == 1) {
                e.thread_id = (uint32_t)rng_next();
                e.call_depth = (uint32_t)rng_next();
            }
            atf_index_event_encode(layout, &e, buf);
            atf_index_event_decode(layout, buf, &d);
            CHECK_INDEX_EVENT(e, d);
        }
        for (kind = 0; kind < KIND_COUNT; kind++) {
            footer_values f, d;
            f.checksum = (uint32_t)rng_next();
            f.event_count = rng_next();
            f.bytes = rng_next();
            f.time_start_ns = rng_next();
            f.time_end_ns = rng_next();
            format_kinds[kind].footer_encode(&f, buf);
            CHECK_RESULT(ATF_OK, format_kinds[kind].footer_decode(buf, &d));
            CHECK_FOOTER_VALUES(f, d);
        }
        {
            atf_detail_header h, d;
            RANDOM_HEADER_START(h, layout);
            h.events_offset = rng_next();
            h.event_count = rng_next();
            h.bytes_length = rng_next();
            h.index_seq_start = rng_next();
            h.index_seq_end = rng_next();
            atf_detail_header_encode(&h, buf);
            CHECK_EQ(0, fx_get32(buf, 16));
            CHECK_EQ(0, fx_get32(buf, 60));
            CHECK_RESULT(ATF_OK, atf_detail_header_decode(buf, &d));
            CHECK_DETAIL_HEADER(h, d);
        }
        {
            atf_detail_event_header e, d;
            memset(&e, 0, sizeof e);
            e.total_length = (uint32_t)rng_next();
            e.type = (uint16_t)rng_next();
            e.flags = (uint16_t)rng_next();
            e.index_seq = layout == 1 ? (uint32_t)rng_next() : rng_next();
            e.thread_id = layout == 1 ? (uint32_t)rng_next() : 0;
            e.timestamp_ns = rng_next();
            atf_detail_event_header_encode(layout, &e, buf);
            atf_detail_event_header_decode(layout, buf, &d);
            CHECK_RECORD_HEADER(e, d);
        }
        {
            uint8_t stack[256], out[356];
            atf_detail_payload p, d;
            unsigned r;
            size_t k;
            memset(&p, 0, sizeof p);
            p.function_id = rng_next();
            for (r = 0; r < 8; r++) p.x[r] = rng_next();
            p.lr = rng_next();
            p.fp = rng_next();
            p.sp = rng_next();
            p.stack_size = (uint16_t)(rng_next() % 257u);
            for (k = 0; k < p.stack_size; k++) stack[k] = (uint8_t)rng_next();
            p.stack = stack;
            CHECK_EQ(100u + p.stack_size, atf_detail_payload_encode(&p, out, sizeof out));
            CHECK_EQ(0, fx_get16(out, 98));
            CHECK_RESULT(ATF_OK, atf_detail_payload_decode(out, 100u + p.stack_size, &d));
            CHECK_PAYLOAD(p, d);
        }
    }
}

/* ---- result codes, names and the error line ---- */
static void result_names(void) {
#define LIST_CODE(name, value, text) name,
    static const atf_result codes[] = { ATF_RESULT_LIST(LIST_CODE) };
#undef LIST_CODE
    size_t n = sizeof codes / sizeof codes[0], i, k;
    CHECK_EQ(17, n);
    CHECK_EQ(0, ATF_OK);
    for (i = 0; i < n; i++) {
        const char *s = atf_result_str(codes[i]), *nm = atf_result_name(codes[i]);
        CHECK(s != NULL && s[0] != '\0');
        CHECK(nm != NULL && strncmp(nm, "ATF_", 4) == 0);
        if (i > 0) CHECK((int)codes[i] < 0);
        for (k = 0; k < i; k++) {
            CHECK(codes[i] != codes[k]);
            if (nm && atf_result_name(codes[k])) CHECK(strcmp(nm, atf_result_name(codes[k])) != 0);
            CHECK(strcmp(s, atf_result_str(codes[k])) != 0);
        }
    }
    CHECK_EQ(0, strcmp("ATF_E_CRC", atf_result_name(ATF_E_CRC)));
#ifndef __cplusplus /* values outside an enum's range: what a C caller can pass */
    CHECK(atf_result_str((atf_result)-99) != NULL);
    CHECK(atf_result_name((atf_result)-99) != NULL);
#endif
    CHECK(atf_result_str((atf_result)7) != NULL);
}

static void error_format_line(void) {
    atf_error e;
    char buf[256], small[8];
    memset(&e, 0, sizeof e);
    e.code = ATF_E_CRC;
    strcpy(e.path, "/some/dir/thread_3/index.atf");
    e.offset = 64;
    e.has_values = 1;
    e.expected = 0x1234;
    e.found = 0x5678;
    e.what = "footer checksum";
    CHECK(atf_error_format(&e, buf, sizeof buf) == buf);
    CHECK(buf[0] != '\0');
    CHECK(strlen(buf) < sizeof buf);
    CHECK(strstr(buf, "/some/dir/thread_3/index.atf") != NULL);
    CHECK(strchr(buf, '\n') == NULL);
    /* a small buffer is cut and still terminated */
    memset(small, 'z', sizeof small);
    CHECK(atf_error_format(&e, small, sizeof small) == small);
    CHECK(memchr(small, '\0', sizeof small) != NULL);
    /* cap 0 writes nothing */
    small[0] = 'q';
    atf_error_format(&e, small, 0);
    CHECK_EQ('q', small[0]);
    /* no path, no values, an errno */
    memset(&e, 0, sizeof e);
    e.code = ATF_E_IO;
    e.sys_errno = 2;
    atf_error_format(&e, buf, sizeof buf);
    CHECK(buf[0] != '\0');
    memset(&e, 0, sizeof e);
    atf_error_format(&e, buf, sizeof buf);
    CHECK(buf[0] != '\0');
}

static void enum_strings(void) {
    uint32_t v;
    for (v = 0; v < 300; v++) {
        CHECK(atf_event_kind_str(v) != NULL);
        CHECK(atf_arch_str(v) != NULL);
        CHECK(atf_os_str(v) != NULL);
        CHECK(atf_clock_str(v) != NULL);
    }
    CHECK(strcmp(atf_event_kind_str(ATF_EVENT_CALL), atf_event_kind_str(ATF_EVENT_RETURN)) != 0);
    CHECK(strcmp(atf_arch_str(ATF_ARCH_X86_64), atf_arch_str(ATF_ARCH_ARM64)) != 0);
}

/* The fixtures' reference CRC and the library's agree, on the known answer and on files. */
static void crc_reference(void) {
    fx_index_spec s;
    fx_buf b = { NULL, 0, 0 };
    memset(&s, 0, sizeof s);
    CHECK_EQ(0xE3069283u, fx_crc32c((const uint8_t *)"123456789", 9));
    CHECK_EQ(0xE3069283u, atf_crc32c("123456789", 9));
    CHECK_EQ(0, fx_crc32c(NULL, 0));
    s.layout = 2;
    s.count = 33;
    s.finalized = s.footer = s.crc = 1;
    fx_index_build(&b, &s);
    CHECK_EQ(fx_get32(b.data, b.len - 60), atf_crc32c(b.data + 64, 33 * 32));
    CHECK_EQ(fx_crc32c(b.data + 64, 33 * 32), atf_crc32c(b.data + 64, 33 * 32));
    fx_buf_free(&b);
}

/* The sizes the format layer announces are the fixture's. */
static void sizes(void) {
    CHECK_EQ(FX_HEADER_SIZE, ATF_HEADER_SIZE);
    CHECK_EQ(FX_FOOTER_SIZE, ATF_FOOTER_SIZE);
    CHECK_EQ(FX_EVENT_SIZE, ATF_INDEX_EVENT_SIZE);
    CHECK_EQ(FX_RECORD_HEADER_SIZE, ATF_DETAIL_EVENT_HEADER_SIZE);
    CHECK_EQ(FX_PAYLOAD_SIZE, ATF_DETAIL_PAYLOAD_SIZE);
    CHECK_EQ(FX_NO_DETAIL_U32, ATF_NO_DETAIL_U32);
    CHECK_EQ(FX_NO_DETAIL, ATF_NO_DETAIL);
    CHECK_EQ(0, memcmp(ATF_INDEX_MAGIC, "ATI2", 4));
    CHECK_EQ(0, memcmp(ATF_INDEX_FOOTER_MAGIC, "2ITA", 4));
    CHECK_EQ(0, memcmp(ATF_DETAIL_MAGIC, "ATD2", 4));
    CHECK_EQ(0, memcmp(ATF_DETAIL_FOOTER_MAGIC, "2DTA", 4));
}

/* One UTF-8 check for the library and the tools: well-formed sequences of each length,
 * and what RFC 3629 excludes (a stray continuation byte, overlong forms, surrogates,
 * code points above U+10FFFF, a sequence cut short by n or by a NUL). */
static void utf8_sequence(void) {
    CHECK_EQ(1, atf_utf8_sequence("a", 1));
    CHECK_EQ(1, atf_utf8_sequence("", 4)); /* the NUL itself is a 1-byte character */
    CHECK_EQ(2, atf_utf8_sequence("\xC3\xA9", 2));          /* é */
    CHECK_EQ(3, atf_utf8_sequence("\xE2\x82\xAC", 3));      /* € */
    CHECK_EQ(4, atf_utf8_sequence("\xF0\x9F\x98\x80", 4));  /* U+1F600 */
    CHECK_EQ(0, atf_utf8_sequence("\x80", 1));              /* continuation byte alone */
    CHECK_EQ(0, atf_utf8_sequence("\xC0\xAF", 2));          /* overlong '/' */
    CHECK_EQ(0, atf_utf8_sequence("\xE0\x80\xAF", 3));      /* overlong */
    CHECK_EQ(0, atf_utf8_sequence("\xED\xA0\x80", 3));      /* surrogate U+D800 */
    CHECK_EQ(0, atf_utf8_sequence("\xF4\x90\x80\x80", 4));  /* above U+10FFFF */
    CHECK_EQ(0, atf_utf8_sequence("\xF5\x80\x80\x80", 4));  /* no such lead byte */
    CHECK_EQ(0, atf_utf8_sequence("\xE2\x82\xAC", 2));      /* cut short by n */
    CHECK_EQ(0, atf_utf8_sequence("\xE2\x82", 4));          /* cut short by the NUL */
}

static const test_case tests[] = {
    { "utf8_sequence", utf8_sequence },
    { "sizes", sizes },
    { "index_header_l1_count_saturates", index_header_l1_count_saturates },
    { "index_event_encode_decode", index_event_encode_decode },
    { "index_event_l2_narrow_fields", index_event_l2_narrow_fields },
    { "index_event_l1_no_detail", index_event_l1_no_detail },
    { "detail_record_encode_decode", detail_record_encode_decode },
    { "detail_record_widths", detail_record_widths },
    { "payload_decode_short", payload_decode_short },
    { "header_encode_decode", header_encode_decode },
    { "footer_encode_decode", footer_encode_decode },
    { "header_decode_errors", header_decode_errors },
    { "round_trips", round_trips },
    { "result_names", result_names },
    { "error_format_line", error_format_line },
    { "enum_strings", enum_strings },
    { "crc_reference", crc_reference },
};

HARNESS_MAIN("format", tests)
