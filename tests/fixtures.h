/* fixtures.h - hand-built ATF files for the reader, format, CLI and fuzz tests.
 *
 * Every byte of every file is placed here with fx_put8/16/32/64 at the offsets of the format
 * tables (docs/FORMAT.md), without atf.h's encoders, decoders or structs, so that an encoder
 * bug and a decoder bug cannot cancel out. The CRC32-C is a bit-at-a-time reference of its
 * own. Contents are deterministic: event i of an index file has timestamp fx_ts(i), function
 * fx_function_id(i), kind fx_kind(i), ...; detail record j links to index event
 * fx_detail_index_seq(stride, j). A test computes from the same functions what each field
 * must read back as.
 *
 * Needs only the C library (atf.h is not required). Every function is static. */
#ifndef ATF_TEST_FIXTURES_H
#define ATF_TEST_FIXTURES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define FX_FN static __attribute__((unused))
#else
#  define FX_FN static
#endif

/* ---- sizes and constants, spelled out independently of atf.h ---- */
#define FX_HEADER_SIZE 64u
#define FX_FOOTER_SIZE 64u
#define FX_EVENT_SIZE 32u
#define FX_RECORD_HEADER_SIZE 24u
#define FX_PAYLOAD_SIZE 100u
#define FX_NO_DETAIL_U32 0xFFFFFFFFu
#define FX_NO_DETAIL UINT64_MAX

#define FX_ARCH 2u               /* arm64 */
#define FX_OS 3u                 /* macOS */
#define FX_CLOCK 1u              /* mach_continuous */
#define FX_THREAD_ID 0x0A0B0C0Du /* four distinct bytes: a swapped field shows */
#define FX_KIND_CALL 1u
#define FX_KIND_RETURN 2u
#define FX_TYPE_CALL 3u          /* detail event_type of a call */
#define FX_TYPE_RETURN 4u

/* ---- little-endian byte placement ---- */
FX_FN void fx_put8(uint8_t *buf, size_t off, uint8_t v) { buf[off] = v; }

FX_FN void fx_put16(uint8_t *buf, size_t off, uint16_t v) {
    buf[off + 0] = (uint8_t)(v & 0xFFu);
    buf[off + 1] = (uint8_t)(v >> 8);
}

FX_FN void fx_put32(uint8_t *buf, size_t off, uint32_t v) {
    buf[off + 0] = (uint8_t)(v & 0xFFu);
    buf[off + 1] = (uint8_t)((v >> 8) & 0xFFu);
    buf[off + 2] = (uint8_t)((v >> 16) & 0xFFu);
    buf[off + 3] = (uint8_t)(v >> 24);
}

FX_FN void fx_put64(uint8_t *buf, size_t off, uint64_t v) {
    size_t k;
    for (k = 0; k < 8; k++) buf[off + k] = (uint8_t)((v >> (8 * k)) & 0xFFu);
}

FX_FN void fx_put_magic(uint8_t *buf, size_t off, const char *m) {
    buf[off + 0] = (uint8_t)m[0];
    buf[off + 1] = (uint8_t)m[1];
    buf[off + 2] = (uint8_t)m[2];
    buf[off + 3] = (uint8_t)m[3];
}

FX_FN uint16_t fx_get16(const uint8_t *buf, size_t off) {
    return (uint16_t)(buf[off] | (buf[off + 1] << 8));
}

FX_FN uint32_t fx_get32(const uint8_t *buf, size_t off) {
    return (uint32_t)buf[off] | ((uint32_t)buf[off + 1] << 8) | ((uint32_t)buf[off + 2] << 16) |
           ((uint32_t)buf[off + 3] << 24);
}

FX_FN uint64_t fx_get64(const uint8_t *buf, size_t off) {
    uint64_t v = 0;
    size_t k;
    for (k = 8; k-- > 0;) v = (v << 8) | buf[off + k];
    return v;
}

/* ---- CRC32-C reference: one bit at a time, reflected 0x82F63B78, init/xorout ~0 ---- */
FX_FN uint32_t fx_crc32c(const uint8_t *p, size_t n) {
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    int bit;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (bit = 0; bit < 8; bit++) crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return crc ^ 0xFFFFFFFFu;
}

/* ---- a growable byte buffer; allocation failure aborts (this is test code) ---- */
typedef struct fx_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} fx_buf;

FX_FN void fx_buf_free(fx_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Appends n zero bytes and returns the offset of the first. */
FX_FN size_t fx_buf_grow(fx_buf *b, size_t n) {
    size_t off = b->len;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *p;
        while (cap < b->len + n) cap *= 2;
        p = (uint8_t *)realloc(b->data, cap);
        if (!p) {
            fprintf(stderr, "fixtures.h: out of memory\n");
            abort();
        }
        b->data = p;
        b->cap = cap;
    }
    if (n) memset(b->data + b->len, 0, n);
    b->len += n;
    return off;
}

FX_FN void fx_buf_append(fx_buf *b, const uint8_t *src, size_t n) {
    size_t off = fx_buf_grow(b, n);
    if (n) memcpy(b->data + off, src, n);
}

/* Cuts the buffer to n bytes (n <= len). */
FX_FN void fx_buf_truncate(fx_buf *b, size_t n) {
    if (n < b->len) b->len = n;
}

/* ---- the deterministic contents ---- */
/* Index event i: calls at even i, returns at odd i; a call and its return share a function. */
FX_FN uint64_t fx_ts(uint64_t i) { return 1000u + 10u * i; }
FX_FN uint32_t fx_kind(uint64_t i) { return (i % 2u) == 0 ? FX_KIND_CALL : FX_KIND_RETURN; }
FX_FN uint64_t fx_function_id(uint64_t i) {
    uint64_t pair = i / 2u;
    return ((pair % 4u) << 32) | (0x10u + 7u * (pair & 0xFFFFFFu));
}
FX_FN uint32_t fx_call_depth(uint64_t i) { return (uint32_t)((i / 2u) % 5u); }

/* Links with stride s (0 = no detail at all): index event i has a detail record when
 * i % s == 1 % s, and that record is number i / s. */
FX_FN int fx_has_detail(uint64_t stride, uint64_t i) {
    return stride != 0 && i % stride == 1u % stride;
}
FX_FN uint64_t fx_detail_seq_of(uint64_t stride, uint64_t i) {
    return fx_has_detail(stride, i) ? i / stride : FX_NO_DETAIL;
}
FX_FN uint64_t fx_detail_index_seq(uint64_t stride, uint64_t j) {
    if (stride == 0) stride = 1;
    return j * stride + 1u % stride;
}
/* Detail records an index file of n events with stride s links to. */
FX_FN uint64_t fx_detail_count(uint64_t stride, uint64_t n) {
    uint64_t phase;
    if (stride == 0) return 0;
    phase = 1u % stride;
    return n > phase ? (n - phase - 1u) / stride + 1u : 0;
}

/* Detail record j (payload: function_id, x0..x7, lr, fp, sp, stack_size, reserved, stack). */
FX_FN uint16_t fx_detail_flags(uint64_t j) { return (uint16_t)(0x8000u | (j & 0x7FFu)); }
FX_FN uint16_t fx_stack_size(uint64_t j) { return (uint16_t)((j * 11u) % 40u); }
FX_FN uint32_t fx_record_length(uint64_t j) {
    return FX_RECORD_HEADER_SIZE + FX_PAYLOAD_SIZE + fx_stack_size(j);
}
FX_FN uint64_t fx_reg(uint64_t j, unsigned r) { return 0x0102030405060708ull * (r + 1u) + j; }
FX_FN uint64_t fx_fp(uint64_t j) { return 0x000000016FD00000ull - 64u * j; }
FX_FN uint64_t fx_sp(uint64_t j) { return fx_fp(j) - 32u; }
FX_FN uint64_t fx_lr(uint64_t k) { return 0x0000000100004000ull + 4u * k; }
FX_FN uint8_t fx_stack_byte(uint64_t j, size_t b) { return (uint8_t)((j * 31u + b) & 0xFFu); }
/* Bytes of records 0..n-1. */
FX_FN uint64_t fx_detail_bytes(uint64_t n) {
    uint64_t j, sum = 0;
    for (j = 0; j < n; j++) sum += fx_record_length(j);
    return sum;
}

/* ---- single records ---- */
/* Index event i (32 bytes) of a file of thread `tid` whose links use `stride`. */
FX_FN void fx_index_event(int layout, uint64_t i, uint32_t tid, uint64_t stride, uint8_t out[32]) {
    uint64_t dseq = fx_detail_seq_of(stride, i);
    memset(out, 0, 32);
    fx_put64(out, 0, fx_ts(i));
    fx_put64(out, 8, fx_function_id(i));
    if (layout == 2) {
        fx_put64(out, 16, dseq);
        fx_put8(out, 24, (uint8_t)fx_kind(i));
    } else {
        fx_put32(out, 16, tid);
        fx_put32(out, 20, fx_kind(i));
        fx_put32(out, 24, fx_call_depth(i));
        fx_put32(out, 28, dseq == FX_NO_DETAIL ? FX_NO_DETAIL_U32 : (uint32_t)dseq);
    }
}

/* The 100 + stack_size payload bytes of detail record j, linked to index event k. */
FX_FN void fx_detail_payload(uint64_t j, uint64_t k, uint8_t *out) {
    unsigned r;
    size_t b;
    uint16_t ss = fx_stack_size(j);
    fx_put64(out, 0, fx_function_id(k));
    for (r = 0; r < 8; r++) fx_put64(out, 8 + 8 * (size_t)r, fx_reg(j, r));
    fx_put64(out, 72, fx_lr(k));
    fx_put64(out, 80, fx_fp(j));
    fx_put64(out, 88, fx_sp(j));
    fx_put16(out, 96, ss);
    fx_put16(out, 98, 0);
    for (b = 0; b < ss; b++) out[FX_PAYLOAD_SIZE + b] = fx_stack_byte(j, b);
}

/* Detail record j, fx_record_length(j) bytes (at most 24 + 100 + 39). */
FX_FN void fx_detail_record(int layout, uint64_t j, uint32_t tid, uint64_t stride, uint8_t *out) {
    uint64_t k = fx_detail_index_seq(stride, j);
    memset(out, 0, FX_RECORD_HEADER_SIZE);
    fx_put32(out, 0, fx_record_length(j));
    fx_put16(out, 4, (uint16_t)(fx_kind(k) == FX_KIND_CALL ? FX_TYPE_CALL : FX_TYPE_RETURN));
    fx_put16(out, 6, fx_detail_flags(j));
    if (layout == 2) {
        fx_put64(out, 8, k);
    } else {
        fx_put32(out, 8, (uint32_t)k);
        fx_put32(out, 12, tid);
    }
    fx_put64(out, 16, fx_ts(k));
    fx_detail_payload(j, k, out + FX_RECORD_HEADER_SIZE);
}

/* ---- index files ---- */
typedef struct fx_index_spec {
    int layout;                 /* 1 or 2 (the version byte) */
    uint64_t count;             /* whole events */
    int finalized;              /* header rewritten at close; else the placeholder */
    int footer;                 /* a footer follows the events and torn bytes */
    int crc;                    /* footer checksum = CRC32-C of the events; else 0 */
    size_t torn;                /* first `torn` bytes (0..31) of event `count` appended */
    uint64_t stride;            /* detail links (see fx_has_detail); 0 = none */
    uint64_t events_offset;     /* 0 means 64; larger leaves a zero gap after the header */
    uint32_t thread_id;         /* 0 means FX_THREAD_ID */
    int64_t footer_count_delta; /* added to the footer's event_count */
    int64_t footer_bytes_delta; /* added to the footer's bytes_written */
} fx_index_spec;

FX_FN uint64_t fx_index_events_offset(const fx_index_spec *s) {
    return s->events_offset ? s->events_offset : FX_HEADER_SIZE;
}
/* Where the footer goes (also what a finalized header records without one). */
FX_FN uint64_t fx_index_footer_pos(const fx_index_spec *s) {
    return fx_index_events_offset(s) + s->count * FX_EVENT_SIZE + s->torn;
}

/* Appends the file described by s to b. The header says placeholder (event_count 0,
 * footer_offset 0, times 0) unless finalized. */
FX_FN void fx_index_build(fx_buf *b, const fx_index_spec *s) {
    uint32_t tid = s->thread_id ? s->thread_id : FX_THREAD_ID;
    uint64_t eo = fx_index_events_offset(s), i;
    uint64_t t0 = s->count ? fx_ts(0) : 0, t1 = s->count ? fx_ts(s->count - 1) : 0;
    size_t base = fx_buf_grow(b, (size_t)eo), ev0;
    uint8_t *h = b->data + base;
    uint8_t ev[32];
    uint32_t crc;

    fx_put_magic(h, 0, "ATI2");
    fx_put8(h, 4, 1);
    fx_put8(h, 5, (uint8_t)s->layout);
    fx_put8(h, 6, FX_ARCH);
    fx_put8(h, 7, FX_OS);
    fx_put32(h, 8, s->stride ? 1u : 0u);
    fx_put32(h, 12, tid);
    fx_put8(h, 16, FX_CLOCK);
    if (s->layout == 2) {
        fx_put32(h, 20, FX_EVENT_SIZE);
        fx_put64(h, 24, s->finalized ? s->count : 0);
    } else {
        fx_put32(h, 24, FX_EVENT_SIZE);
        fx_put32(h, 28, s->finalized ? (uint32_t)s->count : 0);
    }
    fx_put64(h, 32, eo);
    fx_put64(h, 40, s->finalized ? fx_index_footer_pos(s) : 0);
    fx_put64(h, 48, s->finalized ? t0 : 0);
    fx_put64(h, 56, s->finalized ? t1 : 0);

    ev0 = b->len;
    for (i = 0; i < s->count; i++) {
        fx_index_event(s->layout, i, tid, s->stride, ev);
        fx_buf_append(b, ev, 32);
    }
    crc = s->crc ? fx_crc32c(b->data + ev0, b->len - ev0) : 0;
    if (s->torn) {
        fx_index_event(s->layout, s->count, tid, s->stride, ev);
        fx_buf_append(b, ev, s->torn < 32 ? s->torn : 31);
    }
    if (s->footer) {
        size_t at = fx_buf_grow(b, FX_FOOTER_SIZE);
        uint8_t *f = b->data + at;
        fx_put_magic(f, 0, "2ITA");
        fx_put32(f, 4, crc);
        fx_put64(f, 8, s->count + (uint64_t)s->footer_count_delta);
        fx_put64(f, 16, t0);
        fx_put64(f, 24, t1);
        fx_put64(f, 32, s->count * FX_EVENT_SIZE + (uint64_t)s->footer_bytes_delta);
    }
}

/* ---- detail files ---- */
typedef struct fx_detail_spec {
    int layout;                 /* 1 or 2 */
    uint64_t count;             /* whole records */
    int finalized;              /* header carries event_count, bytes_length, seq range */
    int footer;                 /* a footer follows the records and torn bytes */
    int crc;                    /* footer checksum = CRC32-C of the records; else 0 */
    size_t torn;                /* first `torn` bytes of record `count` appended
                                   (< 24: a partial header; else a record cut short) */
    uint64_t stride;            /* record j links to index event fx_detail_index_seq(); 0 = 1 */
    uint64_t events_offset;     /* 0 means 64 */
    uint32_t thread_id;         /* 0 means FX_THREAD_ID */
    int64_t footer_count_delta; /* added to the footer's event_count */
    int64_t footer_bytes_delta; /* added to the footer's bytes_length */
} fx_detail_spec;

FX_FN uint64_t fx_detail_events_offset(const fx_detail_spec *s) {
    return s->events_offset ? s->events_offset : FX_HEADER_SIZE;
}
/* File offset of record j. */
FX_FN uint64_t fx_detail_record_offset(const fx_detail_spec *s, uint64_t j) {
    return fx_detail_events_offset(s) + fx_detail_bytes(j);
}
FX_FN uint64_t fx_detail_footer_pos(const fx_detail_spec *s) {
    return fx_detail_record_offset(s, s->count) + s->torn;
}

FX_FN void fx_detail_build(fx_buf *b, const fx_detail_spec *s) {
    uint32_t tid = s->thread_id ? s->thread_id : FX_THREAD_ID;
    uint64_t eo = fx_detail_events_offset(s), j, bytes = fx_detail_bytes(s->count);
    uint64_t first = s->count ? fx_detail_index_seq(s->stride, 0) : 0;
    uint64_t last = s->count ? fx_detail_index_seq(s->stride, s->count - 1) : 0;
    size_t base = fx_buf_grow(b, (size_t)eo), ev0;
    uint8_t *h = b->data + base;
    uint8_t rec[FX_RECORD_HEADER_SIZE + FX_PAYLOAD_SIZE + 64];
    uint32_t crc;

    fx_put_magic(h, 0, "ATD2");
    fx_put8(h, 4, 1);
    fx_put8(h, 5, (uint8_t)s->layout);
    fx_put8(h, 6, FX_ARCH);
    fx_put8(h, 7, FX_OS);
    fx_put32(h, 8, 0);
    fx_put32(h, 12, tid);
    fx_put32(h, 16, 0);
    fx_put64(h, 20, eo);
    fx_put64(h, 28, s->finalized ? s->count : 0);
    fx_put64(h, 36, s->finalized ? bytes : 0);
    fx_put64(h, 44, s->finalized ? first : 0);
    fx_put64(h, 52, s->finalized ? last : 0);

    ev0 = b->len;
    for (j = 0; j < s->count; j++) {
        fx_detail_record(s->layout, j, tid, s->stride, rec);
        fx_buf_append(b, rec, fx_record_length(j));
    }
    crc = s->crc ? fx_crc32c(b->data + ev0, b->len - ev0) : 0;
    if (s->torn) {
        size_t n = s->torn < fx_record_length(s->count) ? s->torn : fx_record_length(s->count) - 1;
        fx_detail_record(s->layout, s->count, tid, s->stride, rec);
        fx_buf_append(b, rec, n);
    }
    if (s->footer) {
        size_t at = fx_buf_grow(b, FX_FOOTER_SIZE);
        uint8_t *f = b->data + at;
        fx_put_magic(f, 0, "2DTA");
        fx_put32(f, 4, crc);
        fx_put64(f, 8, s->count + (uint64_t)s->footer_count_delta);
        fx_put64(f, 16, bytes + (uint64_t)s->footer_bytes_delta);
        fx_put64(f, 24, s->count ? fx_ts(first) : 0);
        fx_put64(f, 32, s->count ? fx_ts(last) : 0);
    }
}

/* ---- a thread directory: index events linked to detail records with one stride ---- */
FX_FN void fx_thread_specs(int layout, uint64_t n, uint64_t stride, int finalized, int crc,
                           fx_index_spec *is, fx_detail_spec *ds) {
    memset(is, 0, sizeof *is);
    memset(ds, 0, sizeof *ds);
    is->layout = ds->layout = layout;
    is->finalized = is->footer = ds->finalized = ds->footer = finalized;
    is->crc = ds->crc = crc;
    is->stride = ds->stride = stride;
    is->count = n;
    ds->count = fx_detail_count(stride, n);
}

/* Offsets of link fields, for tests that break them on purpose. */
FX_FN size_t fx_index_detail_seq_off(const fx_index_spec *s, uint64_t i) {
    return (size_t)(fx_index_events_offset(s) + i * FX_EVENT_SIZE) + (s->layout == 2 ? 16u : 28u);
}
FX_FN size_t fx_detail_index_seq_off(const fx_detail_spec *s, uint64_t j) {
    return (size_t)fx_detail_record_offset(s, j) + 8u;
}
/* Writes a link value in the layout's width. */
FX_FN void fx_put_link(uint8_t *buf, size_t off, int layout, uint64_t v) {
    if (layout == 2) fx_put64(buf, off, v);
    else fx_put32(buf, off, (uint32_t)v);
}

/* ---- the catalog: every named fixture, for make_fixtures, CLI tests and fuzz seeds ---- */
enum {
    FX_PATCH_NONE = 0,
    FX_PATCH_MAGIC,         /* byte 0 := 'X' */
    FX_PATCH_ENDIAN,        /* endian := 2 */
    FX_PATCH_VERSION,       /* version := 4 (3 is a packed index file) */
    FX_PATCH_EVENT_SIZE,    /* index event_size := 24 */
    FX_PATCH_OFFSET_EOF,    /* events_offset := file size + 1 */
    FX_PATCH_OFFSET_SMALL,  /* events_offset := 32 */
    FX_PATCH_FLIP_EVENT,    /* one byte of the events section inverted, after the CRC
                               (fx_flip_offset) */
    FX_PATCH_LEN0,          /* total_length of detail record 2 := 0 */
    FX_PATCH_LEN17,         /* total_length of detail record 2 := 17 */
    FX_PATCH_LEN_PAST_EOF,  /* total_length of the last detail record := runs past EOF */
    FX_PATCH_CUT63,         /* file cut to 63 bytes */
    FX_PATCH_CUT0,          /* file cut to 0 bytes */
    FX_PATCH_BROKEN_LINK    /* detail record 1 points back to the wrong index event */
};

enum { FX_KIND_INDEX = 1, FX_KIND_DETAIL = 2, FX_KIND_THREAD = 3 };

typedef struct fx_entry {
    const char *name;   /* relative path: "x.atf", or a directory for FX_KIND_THREAD */
    int kind;           /* FX_KIND_* */
    int layout;
    uint64_t count;     /* index events (detail records for FX_KIND_DETAIL) */
    int finalized, footer, crc;
    size_t torn;
    uint64_t stride;    /* FX_KIND_THREAD: links; FX_KIND_DETAIL: back links */
    int64_t footer_count_delta;
    int patch;          /* FX_PATCH_*: applied to the detail file for FX_KIND_THREAD */
} fx_entry;

/* name, kind, layout, count, finalized, footer, crc, torn, stride, footer delta, patch */
#define FX__CATALOG(X) \
    X("l1_finalized/index.atf",        FX_KIND_INDEX, 1, 20, 1, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("l2_finalized/index.atf",        FX_KIND_INDEX, 2, 20, 1, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("l1_crc0/index.atf",             FX_KIND_INDEX, 1, 20, 1, 1, 0, 0, 0, 0, FX_PATCH_NONE) \
    X("l2_crc0/index.atf",             FX_KIND_INDEX, 2, 20, 1, 1, 0, 0, 0, 0, FX_PATCH_NONE) \
    X("l1_no_footer/index.atf",        FX_KIND_INDEX, 1, 20, 0, 0, 0, 0, 0, 0, FX_PATCH_NONE) \
    X("l2_no_footer/index.atf",        FX_KIND_INDEX, 2, 20, 0, 0, 0, 0, 0, 0, FX_PATCH_NONE) \
    X("l1_torn/index.atf",             FX_KIND_INDEX, 1, 20, 0, 0, 0, 13, 0, 0, FX_PATCH_NONE) \
    X("l2_torn/index.atf",             FX_KIND_INDEX, 2, 20, 0, 0, 0, 31, 0, 0, FX_PATCH_NONE) \
    X("l1_footer_at_end/index.atf",    FX_KIND_INDEX, 1, 20, 0, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("l2_footer_at_end/index.atf",    FX_KIND_INDEX, 2, 20, 0, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("l1_footer_mismatch/index.atf",  FX_KIND_INDEX, 1, 20, 1, 1, 1, 0, 0, 5, FX_PATCH_NONE) \
    X("l2_footer_mismatch/index.atf",  FX_KIND_INDEX, 2, 20, 1, 1, 1, 0, 0, 5, FX_PATCH_NONE) \
    X("l1_crc_mismatch/index.atf",     FX_KIND_INDEX, 1, 20, 1, 1, 1, 0, 0, 0, FX_PATCH_FLIP_EVENT) \
    X("l2_crc_mismatch/index.atf",     FX_KIND_INDEX, 2, 20, 1, 1, 1, 0, 0, 0, FX_PATCH_FLIP_EVENT) \
    X("l1_zero_events/index.atf",      FX_KIND_INDEX, 1, 0, 1, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("l2_zero_events/index.atf",      FX_KIND_INDEX, 2, 0, 1, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("l1_header_only/index.atf",      FX_KIND_INDEX, 1, 0, 0, 0, 0, 0, 0, 0, FX_PATCH_NONE) \
    X("bad_magic.atf",                 FX_KIND_INDEX, 1, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_MAGIC) \
    X("bad_endian.atf",                FX_KIND_INDEX, 1, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_ENDIAN) \
    X("bad_version.atf",               FX_KIND_INDEX, 1, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_VERSION) \
    X("bad_event_size.atf",            FX_KIND_INDEX, 2, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_EVENT_SIZE) \
    X("events_offset_past_eof.atf",    FX_KIND_INDEX, 1, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_OFFSET_EOF) \
    X("events_offset_small.atf",       FX_KIND_INDEX, 2, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_OFFSET_SMALL) \
    X("empty.atf",                     FX_KIND_INDEX, 1, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_CUT0) \
    X("short63.atf",                   FX_KIND_INDEX, 1, 4, 1, 1, 1, 0, 0, 0, FX_PATCH_CUT63) \
    X("l1_detail_finalized/detail.atf",   FX_KIND_DETAIL, 1, 8, 1, 1, 1, 0, 2, 0, FX_PATCH_NONE) \
    X("l2_detail_finalized/detail.atf",   FX_KIND_DETAIL, 2, 8, 1, 1, 1, 0, 2, 0, FX_PATCH_NONE) \
    X("l1_detail_no_footer/detail.atf",   FX_KIND_DETAIL, 1, 8, 0, 0, 0, 0, 2, 0, FX_PATCH_NONE) \
    X("l2_detail_no_footer/detail.atf",   FX_KIND_DETAIL, 2, 8, 0, 0, 0, 0, 2, 0, FX_PATCH_NONE) \
    X("l1_detail_torn_header/detail.atf", FX_KIND_DETAIL, 1, 8, 0, 0, 0, 17, 2, 0, FX_PATCH_NONE) \
    X("l2_detail_torn_header/detail.atf", FX_KIND_DETAIL, 2, 8, 0, 0, 0, 23, 2, 0, FX_PATCH_NONE) \
    X("l1_detail_torn_record/detail.atf", FX_KIND_DETAIL, 1, 8, 0, 0, 0, 60, 2, 0, FX_PATCH_NONE) \
    X("l2_detail_torn_record/detail.atf", FX_KIND_DETAIL, 2, 8, 0, 0, 0, 24, 2, 0, FX_PATCH_NONE) \
    X("l1_detail_footer_at_end/detail.atf", FX_KIND_DETAIL, 1, 8, 0, 1, 1, 0, 2, 0, FX_PATCH_NONE) \
    X("l2_detail_footer_at_end/detail.atf", FX_KIND_DETAIL, 2, 8, 0, 1, 1, 0, 2, 0, FX_PATCH_NONE) \
    X("l1_detail_footer_mismatch/detail.atf", FX_KIND_DETAIL, 1, 8, 1, 1, 1, 0, 2, 1, FX_PATCH_NONE) \
    X("l2_detail_footer_mismatch/detail.atf", FX_KIND_DETAIL, 2, 8, 1, 1, 1, 0, 2, 1, FX_PATCH_NONE) \
    X("l1_detail_crc_mismatch/detail.atf", FX_KIND_DETAIL, 1, 8, 1, 1, 1, 0, 2, 0, FX_PATCH_FLIP_EVENT) \
    X("l2_detail_crc_mismatch/detail.atf", FX_KIND_DETAIL, 2, 8, 1, 1, 1, 0, 2, 0, FX_PATCH_FLIP_EVENT) \
    X("l1_detail_len0/detail.atf",     FX_KIND_DETAIL, 1, 6, 0, 0, 0, 0, 2, 0, FX_PATCH_LEN0) \
    X("l2_detail_len0/detail.atf",     FX_KIND_DETAIL, 2, 6, 0, 0, 0, 0, 2, 0, FX_PATCH_LEN0) \
    X("l1_detail_len17/detail.atf",    FX_KIND_DETAIL, 1, 6, 1, 1, 1, 0, 2, 0, FX_PATCH_LEN17) \
    X("l2_detail_len17/detail.atf",    FX_KIND_DETAIL, 2, 6, 1, 1, 1, 0, 2, 0, FX_PATCH_LEN17) \
    X("l1_detail_len_past_eof/detail.atf", FX_KIND_DETAIL, 1, 6, 0, 0, 0, 0, 2, 0, FX_PATCH_LEN_PAST_EOF) \
    X("l2_detail_len_past_eof/detail.atf", FX_KIND_DETAIL, 2, 6, 0, 0, 0, 0, 2, 0, FX_PATCH_LEN_PAST_EOF) \
    X("l1_detail_zero_events/detail.atf", FX_KIND_DETAIL, 1, 0, 1, 1, 1, 0, 2, 0, FX_PATCH_NONE) \
    X("detail_bad_magic.atf",          FX_KIND_DETAIL, 1, 3, 1, 1, 1, 0, 2, 0, FX_PATCH_MAGIC) \
    X("detail_bad_endian.atf",         FX_KIND_DETAIL, 2, 3, 1, 1, 1, 0, 2, 0, FX_PATCH_ENDIAN) \
    X("detail_bad_version.atf",        FX_KIND_DETAIL, 1, 3, 1, 1, 1, 0, 2, 0, FX_PATCH_VERSION) \
    X("detail_offset_past_eof.atf",    FX_KIND_DETAIL, 2, 3, 1, 1, 1, 0, 2, 0, FX_PATCH_OFFSET_EOF) \
    X("detail_offset_small.atf",       FX_KIND_DETAIL, 1, 3, 1, 1, 1, 0, 2, 0, FX_PATCH_OFFSET_SMALL) \
    X("detail_short63.atf",            FX_KIND_DETAIL, 1, 3, 1, 1, 1, 0, 2, 0, FX_PATCH_CUT63) \
    X("thread_l1_detail",              FX_KIND_THREAD, 1, 24, 1, 1, 1, 0, 3, 0, FX_PATCH_NONE) \
    X("thread_l2_detail",              FX_KIND_THREAD, 2, 24, 1, 1, 1, 0, 3, 0, FX_PATCH_NONE) \
    X("thread_l1_crashed",             FX_KIND_THREAD, 1, 24, 0, 0, 0, 0, 3, 0, FX_PATCH_NONE) \
    X("thread_l1_index_only",          FX_KIND_THREAD, 1, 24, 1, 1, 1, 0, 0, 0, FX_PATCH_NONE) \
    X("thread_l1_broken_link",         FX_KIND_THREAD, 1, 24, 1, 1, 1, 0, 3, 0, FX_PATCH_BROKEN_LINK) \
    X("thread_l2_broken_link",         FX_KIND_THREAD, 2, 24, 1, 1, 1, 0, 3, 0, FX_PATCH_BROKEN_LINK)

#define FX__CATALOG_ENTRY(name, kind, layout, count, fin, foot, crc, torn, stride, delta, patch) \
    { name, kind, layout, count, fin, foot, crc, torn, stride, delta, patch },

/* The catalog; *count receives its length. */
FX_FN const fx_entry *fx_catalog(size_t *count) {
    static const fx_entry entries[] = { FX__CATALOG(FX__CATALOG_ENTRY) };
    *count = sizeof entries / sizeof entries[0];
    return entries;
}

FX_FN const fx_entry *fx_catalog_find(const char *name) {
    size_t n, i;
    const fx_entry *e = fx_catalog(&n);
    for (i = 0; i < n; i++)
        if (strcmp(e[i].name, name) == 0) return &e[i];
    return NULL;
}

FX_FN void fx_entry_index_spec(const fx_entry *e, fx_index_spec *s) {
    memset(s, 0, sizeof *s);
    s->layout = e->layout;
    s->count = e->count;
    s->finalized = e->finalized;
    s->footer = e->footer;
    s->crc = e->crc;
    s->torn = e->torn;
    s->stride = e->kind == FX_KIND_THREAD ? e->stride : 0;
    s->footer_count_delta = e->footer_count_delta;
    s->footer_bytes_delta = e->footer_count_delta * (int64_t)FX_EVENT_SIZE;
}

FX_FN void fx_entry_detail_spec(const fx_entry *e, fx_detail_spec *s) {
    memset(s, 0, sizeof *s);
    s->layout = e->layout;
    s->count = e->kind == FX_KIND_THREAD ? fx_detail_count(e->stride, e->count) : e->count;
    s->finalized = e->finalized;
    s->footer = e->footer;
    s->crc = e->crc;
    s->torn = e->kind == FX_KIND_THREAD ? 0 : e->torn;
    s->stride = e->stride;
    s->footer_count_delta = e->footer_count_delta;
}

/* The byte FX_PATCH_FLIP_EVENT inverts: byte 1 of event 0's function_id (index), or byte 0
 * of record 0's x1 (detail), so that only the CRC notices. */
FX_FN size_t fx_flip_offset(int detail) {
    return detail ? FX_HEADER_SIZE + FX_RECORD_HEADER_SIZE + 16u : FX_HEADER_SIZE + 9u;
}

/* Applies a patch to a built file (index or detail, per `detail`). */
FX_FN void fx_apply_patch(fx_buf *b, int patch, int detail, const fx_detail_spec *ds) {
    size_t eo = detail ? 20u : 32u;
    switch (patch) {
    case FX_PATCH_MAGIC: b->data[0] = 'X'; break;
    case FX_PATCH_ENDIAN: b->data[4] = 2; break;
    case FX_PATCH_VERSION: b->data[5] = 4; break;
    case FX_PATCH_EVENT_SIZE: fx_put32(b->data, b->data[5] == 2 ? 20u : 24u, 24); break;
    case FX_PATCH_OFFSET_EOF: fx_put64(b->data, eo, (uint64_t)b->len + 1u); break;
    case FX_PATCH_OFFSET_SMALL: fx_put64(b->data, eo, 32); break;
    case FX_PATCH_FLIP_EVENT: b->data[fx_flip_offset(detail)] ^= 0xFFu; break;
    case FX_PATCH_LEN0: fx_put32(b->data, (size_t)fx_detail_record_offset(ds, 2), 0); break;
    case FX_PATCH_LEN17: fx_put32(b->data, (size_t)fx_detail_record_offset(ds, 2), 17); break;
    case FX_PATCH_LEN_PAST_EOF: {
        size_t off = (size_t)fx_detail_record_offset(ds, ds->count - 1);
        fx_put32(b->data, off, (uint32_t)(b->len - off + 1u));
        break;
    }
    case FX_PATCH_CUT63: fx_buf_truncate(b, 63); break;
    case FX_PATCH_CUT0: fx_buf_truncate(b, 0); break;
    case FX_PATCH_BROKEN_LINK:
        fx_put_link(b->data, fx_detail_index_seq_off(ds, 1), ds->layout,
                    fx_detail_index_seq(ds->stride, 1) + 1u);
        break;
    default: break;
    }
}

/* Builds entry e: the file into *index (FX_KIND_INDEX) or *detail (FX_KIND_DETAIL), or both
 * files of a thread directory (the detail file only when stride != 0). Buffers are appended
 * to, so pass empty ones. */
FX_FN void fx_entry_build(const fx_entry *e, fx_buf *index, fx_buf *detail) {
    fx_index_spec is;
    fx_detail_spec ds;
    fx_entry_index_spec(e, &is);
    fx_entry_detail_spec(e, &ds);
    if (e->kind == FX_KIND_INDEX) {
        fx_index_build(index, &is);
        fx_apply_patch(index, e->patch, 0, &ds);
    } else if (e->kind == FX_KIND_DETAIL) {
        fx_detail_build(detail, &ds);
        fx_apply_patch(detail, e->patch, 1, &ds);
    } else {
        fx_index_build(index, &is);
        if (e->stride) {
            fx_detail_build(detail, &ds);
            fx_apply_patch(detail, e->patch, 1, &ds);
        }
    }
}

#endif
