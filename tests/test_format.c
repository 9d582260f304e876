/* test_format.c - the format layer: every encoder against the hand-built bytes of
 * tests/fixtures.h (both layouts), every decoder back, round trips, decode errors, and the
 * result names and error line. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "fixtures.h"

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

#define CHECK_INDEX_EVENT(a, b) do { \
    CHECK_EQ((a).timestamp_ns, (b).timestamp_ns); CHECK_EQ((a).function_id, (b).function_id); \
    CHECK_EQ((a).detail_seq, (b).detail_seq); CHECK_EQ((a).thread_id, (b).thread_id); \
    CHECK_EQ((a).call_depth, (b).call_depth); CHECK_EQ((a).kind, (b).kind); \
} while (0)

#define CHECK_DETAIL_HEADER(a, b) do { \
    CHECK_EQ((a).endian, (b).endian); CHECK_EQ((a).version, (b).version); \
    CHECK_EQ((a).arch, (b).arch); CHECK_EQ((a).os, (b).os); CHECK_EQ((a).flags, (b).flags); \
    CHECK_EQ((a).thread_id, (b).thread_id); CHECK_EQ((a).events_offset, (b).events_offset); \
    CHECK_EQ((a).event_count, (b).event_count); CHECK_EQ((a).bytes_length, (b).bytes_length); \
    CHECK_EQ((a).index_seq_start, (b).index_seq_start); \
    CHECK_EQ((a).index_seq_end, (b).index_seq_end); \
} while (0)

#define CHECK_RECORD_HEADER(a, b) do { \
    CHECK_EQ((a).total_length, (b).total_length); CHECK_EQ((a).type, (b).type); \
    CHECK_EQ((a).flags, (b).flags); CHECK_EQ((a).index_seq, (b).index_seq); \
    CHECK_EQ((a).thread_id, (b).thread_id); CHECK_EQ((a).timestamp_ns, (b).timestamp_ns); \
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

/* ---- index records ---- */
static void index_header_encode_matches_fixture(void) {
    int layout, fin;
    for (layout = 1; layout <= 2; layout++) {
        for (fin = 0; fin <= 1; fin++) {
            fx_index_spec s;
            fx_buf b = { NULL, 0, 0 };
            atf_index_header h;
            uint8_t out[64];
            memset(&s, 0, sizeof s);
            s.layout = layout;
            s.count = 9;
            s.finalized = fin;
            s.footer = fin;
            s.stride = 2;
            fx_index_build(&b, &s);
            h = expected_index_header(&s);
            memset(out, 0xAA, sizeof out);
            atf_index_header_encode(&h, out);
            CHECK_MEM(b.data, out, 64);
            fx_buf_free(&b);
        }
    }
}

static void index_header_decode_fixture(void) {
    int layout, fin;
    for (layout = 1; layout <= 2; layout++) {
        for (fin = 0; fin <= 1; fin++) {
            fx_index_spec s;
            fx_buf b = { NULL, 0, 0 };
            atf_index_header h, x;
            memset(&s, 0, sizeof s);
            s.layout = layout;
            s.count = 11;
            s.finalized = fin;
            s.footer = 1;
            s.events_offset = 128;
            fx_index_build(&b, &s);
            x = expected_index_header(&s);
            CHECK_RESULT(ATF_OK, atf_index_header_decode(b.data, &h));
            CHECK_INDEX_HEADER(x, h);
            fx_buf_free(&b);
        }
    }
}

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

static void index_footer_encode_decode(void) {
    int layout, crc;
    for (layout = 1; layout <= 2; layout++) {
        for (crc = 0; crc <= 1; crc++) {
            fx_index_spec s;
            fx_buf b = { NULL, 0, 0 };
            atf_index_footer f, d;
            uint8_t out[64];
            const uint8_t *want;
            memset(&s, 0, sizeof s);
            s.layout = layout;
            s.count = 7;
            s.finalized = s.footer = 1;
            s.crc = crc;
            fx_index_build(&b, &s);
            want = b.data + b.len - 64;
            memset(&f, 0, sizeof f);
            f.checksum = crc ? fx_crc32c(b.data + 64, 7 * 32) : 0;
            f.event_count = 7;
            f.time_start_ns = fx_ts(0);
            f.time_end_ns = fx_ts(6);
            f.bytes_written = 7 * 32;
            memset(out, 0xAA, sizeof out);
            atf_index_footer_encode(&f, out);
            CHECK_MEM(want, out, 64);
            CHECK_RESULT(ATF_OK, atf_index_footer_decode(want, &d));
            CHECK_EQ(f.checksum, d.checksum);
            CHECK_EQ(f.event_count, d.event_count);
            CHECK_EQ(f.time_start_ns, d.time_start_ns);
            CHECK_EQ(f.time_end_ns, d.time_end_ns);
            CHECK_EQ(f.bytes_written, d.bytes_written);
            fx_buf_free(&b);
        }
    }
}

/* ---- detail records ---- */
static void detail_header_encode_decode(void) {
    int layout, fin;
    for (layout = 1; layout <= 2; layout++) {
        for (fin = 0; fin <= 1; fin++) {
            fx_detail_spec s;
            fx_buf b = { NULL, 0, 0 };
            atf_detail_header h, d;
            uint8_t out[64];
            memset(&s, 0, sizeof s);
            s.layout = layout;
            s.count = 5;
            s.stride = 3;
            s.finalized = s.footer = fin;
            fx_detail_build(&b, &s);
            h = expected_detail_header(&s);
            memset(out, 0xAA, sizeof out);
            atf_detail_header_encode(&h, out);
            CHECK_MEM(b.data, out, 64);
            CHECK_RESULT(ATF_OK, atf_detail_header_decode(b.data, &d));
            CHECK_DETAIL_HEADER(h, d);
            fx_buf_free(&b);
        }
    }
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

static void detail_footer_encode_decode(void) {
    int layout;
    for (layout = 1; layout <= 2; layout++) {
        fx_detail_spec s;
        fx_buf b = { NULL, 0, 0 };
        atf_detail_footer f, d;
        uint8_t out[64];
        const uint8_t *want;
        memset(&s, 0, sizeof s);
        s.layout = layout;
        s.count = 6;
        s.stride = 2;
        s.finalized = s.footer = s.crc = 1;
        fx_detail_build(&b, &s);
        want = b.data + b.len - 64;
        memset(&f, 0, sizeof f);
        f.checksum = fx_crc32c(b.data + 64, (size_t)fx_detail_bytes(6));
        f.event_count = 6;
        f.bytes_length = fx_detail_bytes(6);
        f.time_start_ns = fx_ts(fx_detail_index_seq(2, 0));
        f.time_end_ns = fx_ts(fx_detail_index_seq(2, 5));
        memset(out, 0xAA, sizeof out);
        atf_detail_footer_encode(&f, out);
        CHECK_MEM(want, out, 64);
        CHECK_RESULT(ATF_OK, atf_detail_footer_decode(want, &d));
        CHECK_EQ(f.checksum, d.checksum);
        CHECK_EQ(f.event_count, d.event_count);
        CHECK_EQ(f.bytes_length, d.bytes_length);
        CHECK_EQ(f.time_start_ns, d.time_start_ns);
        CHECK_EQ(f.time_end_ns, d.time_end_ns);
        fx_buf_free(&b);
    }
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

/* ---- header decode errors: magic, then endian, then version ---- */
static void header_decode_errors(void) {
    fx_index_spec is;
    fx_detail_spec ds;
    fx_buf ib = { NULL, 0, 0 }, db = { NULL, 0, 0 };
    atf_index_header ih;
    atf_detail_header dh;
    uint8_t in[64];
    memset(&is, 0, sizeof is);
    memset(&ds, 0, sizeof ds);
    is.layout = ds.layout = 2;
    is.count = ds.count = 2;
    fx_index_build(&ib, &is);
    fx_detail_build(&db, &ds);

    memcpy(in, ib.data, 64);
    in[4] = 2;
    in[5] = 9;
    CHECK_RESULT(ATF_E_ENDIAN, atf_index_header_decode(in, &ih));
    in[0] = 'a';
    CHECK_RESULT(ATF_E_MAGIC, atf_index_header_decode(in, &ih));
    memcpy(in, ib.data, 64);
    in[5] = 3;
    CHECK_RESULT(ATF_E_VERSION, atf_index_header_decode(in, &ih));
    CHECK_EQ(FX_THREAD_ID, ih.thread_id); /* filled even when the version fails */
    CHECK_EQ(3, ih.version);
    in[5] = 0;
    CHECK_RESULT(ATF_E_VERSION, atf_index_header_decode(in, &ih));
    memcpy(in, db.data, 64); /* a detail header is not an index header */
    CHECK_RESULT(ATF_E_MAGIC, atf_index_header_decode(in, &ih));

    CHECK_RESULT(ATF_E_MAGIC, atf_detail_header_decode(ib.data, &dh));
    memcpy(in, db.data, 64);
    in[4] = 0;
    in[5] = 7;
    CHECK_RESULT(ATF_E_ENDIAN, atf_detail_header_decode(in, &dh));
    in[3] = '3';
    CHECK_RESULT(ATF_E_MAGIC, atf_detail_header_decode(in, &dh));
    memcpy(in, db.data, 64);
    in[5] = 255;
    CHECK_RESULT(ATF_E_VERSION, atf_detail_header_decode(in, &dh));
    CHECK_EQ(FX_THREAD_ID, dh.thread_id);
    CHECK_EQ(64, dh.events_offset);

    {   /* footers check their magic only */
        atf_index_footer f;
        atf_detail_footer g;
        memset(in, 0, sizeof in);
        memcpy(in, "2ITA", 4);
        CHECK_RESULT(ATF_OK, atf_index_footer_decode(in, &f));
        CHECK_RESULT(ATF_E_MAGIC, atf_detail_footer_decode(in, &g));
        memcpy(in, "2DTA", 4);
        CHECK_RESULT(ATF_OK, atf_detail_footer_decode(in, &g));
        CHECK_RESULT(ATF_E_MAGIC, atf_index_footer_decode(in, &f));
        memcpy(in, "ATI2", 4);
        CHECK_RESULT(ATF_E_MAGIC, atf_index_footer_decode(in, &f));
    }
    fx_buf_free(&ib);
    fx_buf_free(&db);
}

/* ---- round trips over pseudo-random values ---- */
static uint64_t rng_state;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void round_trips(void) {
    int n;
    rng_state = 42;
    for (n = 0; n < 500; n++) {
        int layout = (n & 1) ? 2 : 1;
        uint8_t buf[64];
        {
            atf_index_header h, d;
            memset(&h, 0, sizeof h);
            h.endian = 1;
            h.version = (uint8_t)layout;
            h.arch = (uint8_t)rng_next();
            h.os = (uint8_t)rng_next();
            h.flags = (uint32_t)rng_next();
            h.thread_id = (uint32_t)rng_next();
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
        {
            atf_index_footer f, d;
            f.checksum = (uint32_t)rng_next();
            f.event_count = rng_next();
            f.time_start_ns = rng_next();
            f.time_end_ns = rng_next();
            f.bytes_written = rng_next();
            atf_index_footer_encode(&f, buf);
            CHECK_RESULT(ATF_OK, atf_index_footer_decode(buf, &d));
            CHECK_EQ(f.checksum, d.checksum);
            CHECK_EQ(f.event_count, d.event_count);
            CHECK_EQ(f.time_start_ns, d.time_start_ns);
            CHECK_EQ(f.time_end_ns, d.time_end_ns);
            CHECK_EQ(f.bytes_written, d.bytes_written);
        }
        {
            atf_detail_header h, d;
            memset(&h, 0, sizeof h);
            h.endian = 1;
            h.version = (uint8_t)layout;
            h.arch = (uint8_t)rng_next();
            h.os = (uint8_t)rng_next();
            h.flags = (uint32_t)rng_next();
            h.thread_id = (uint32_t)rng_next();
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
            atf_detail_footer f, d;
            f.checksum = (uint32_t)rng_next();
            f.event_count = rng_next();
            f.bytes_length = rng_next();
            f.time_start_ns = rng_next();
            f.time_end_ns = rng_next();
            atf_detail_footer_encode(&f, buf);
            CHECK_RESULT(ATF_OK, atf_detail_footer_decode(buf, &d));
            CHECK_EQ(f.checksum, d.checksum);
            CHECK_EQ(f.event_count, d.event_count);
            CHECK_EQ(f.bytes_length, d.bytes_length);
            CHECK_EQ(f.time_start_ns, d.time_start_ns);
            CHECK_EQ(f.time_end_ns, d.time_end_ns);
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
    CHECK_EQ(16, n);
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

static const test_case tests[] = {
    { "sizes", sizes },
    { "index_header_encode_matches_fixture", index_header_encode_matches_fixture },
    { "index_header_decode_fixture", index_header_decode_fixture },
    { "index_header_l1_count_saturates", index_header_l1_count_saturates },
    { "index_event_encode_decode", index_event_encode_decode },
    { "index_event_l2_narrow_fields", index_event_l2_narrow_fields },
    { "index_event_l1_no_detail", index_event_l1_no_detail },
    { "index_footer_encode_decode", index_footer_encode_decode },
    { "detail_header_encode_decode", detail_header_encode_decode },
    { "detail_record_encode_decode", detail_record_encode_decode },
    { "detail_record_widths", detail_record_widths },
    { "detail_footer_encode_decode", detail_footer_encode_decode },
    { "payload_decode_short", payload_decode_short },
    { "header_decode_errors", header_decode_errors },
    { "round_trips", round_trips },
    { "result_names", result_names },
    { "error_format_line", error_format_line },
    { "enum_strings", enum_strings },
    { "crc_reference", crc_reference },
};

HARNESS_MAIN("format", tests)
