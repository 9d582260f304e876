/* parquet.c - the Parquet writer of parquet.h: Thrift compact encoding of page headers
 * and footer, PLAIN / dictionary / DELTA_BINARY_PACKED pages (with definition levels for
 * optional columns), row groups with statistics.
 * SPDX-License-Identifier: MIT */
#include "parquet.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum {
    PQ_DEFAULT_ROW_GROUP_ROWS = 1 << 20,
    PQ_DEFAULT_PAGE_VALUES = 1 << 16,
    PQ_DEFAULT_PAGE_BYTES = 1 << 20,
    PQ_DEFAULT_DICT_VALUES = 1 << 16,
    PQ_DEFAULT_DICT_BYTES = 1 << 20,
    PQ_DEFAULT_STAT_BYTES = 1024
};

/* Parquet's enumerations, as numbered in parquet.thrift. */
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_DELTA_BINARY_PACKED = 5, ENC_RLE_DICTIONARY = 8 };
enum { CONVERTED_UTF8 = 0, CONVERTED_INT_32 = 17, CONVERTED_INT_64 = 18 };
enum { REPETITION_REQUIRED = 0, REPETITION_OPTIONAL = 1 };

/* DELTA_BINARY_PACKED block layout: 128 values in 4 miniblocks of 32. */
enum { DELTA_BLOCK = 128, DELTA_MINIBLOCKS = 4, DELTA_MINI = DELTA_BLOCK / DELTA_MINIBLOCKS };

/* ==== growable byte buffer =========================================================== */
/* Encoders append here without checking each step; `failed` records an allocation
 * failure, checked once per page. */
typedef struct pq_buf {
    uint8_t *p;
    size_t len, cap;
    int failed;
} pq_buf;

static uint8_t *buf_grow(pq_buf *b, size_t n) {
    if (b->failed || n == 0) return NULL;
    if (n > SIZE_MAX - b->len) {
        b->failed = 1;
        return NULL;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *m;
        while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        m = (uint8_t *)realloc(b->p, cap);
        if (!m) {
            b->failed = 1;
            return NULL;
        }
        b->p = m;
        b->cap = cap;
    }
    b->len += n;
    return b->p + b->len - n;
}

static void buf_put(pq_buf *b, const void *src, size_t n) {
    uint8_t *d = buf_grow(b, n);
    if (d && n) memcpy(d, src, n);
}

static void buf_byte(pq_buf *b, unsigned v) {
    uint8_t c = (uint8_t)v;
    buf_put(b, &c, 1);
}

static void buf_le(pq_buf *b, uint64_t v, size_t bytes) {
    uint8_t tmp[8];
    size_t i;
    for (i = 0; i < bytes; i++) tmp[i] = (uint8_t)(v >> (8 * i));
    buf_put(b, tmp, bytes);
}

static void buf_varint(pq_buf *b, uint64_t v) {
    while (v >= 0x80) {
        buf_byte(b, (unsigned)(v & 0x7F) | 0x80u);
        v >>= 7;
    }
    buf_byte(b, (unsigned)v);
}

/* Zigzag maps small negative and positive numbers to small unsigned ones. */
static uint64_t zigzag(int64_t v) {
    return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

static void buf_free(pq_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ==== Thrift compact protocol ======================================================== */
/* Just what page headers and FileMetaData need: structs, i32/i64, binary, bool, lists.
 * A field header carries the delta from the previous field id of the same struct, so
 * each open struct keeps its last id. */
enum {
    TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I32 = 5, TC_I64 = 6, TC_BINARY = 8,
    TC_LIST = 9, TC_STRUCT = 12
};
enum { TC_DEPTH_MAX = 16 };

typedef struct tc_writer {
    pq_buf *out;
    int last[TC_DEPTH_MAX];
    int depth;
} tc_writer;

static void tc_field(tc_writer *t, int id, unsigned type) {
    int delta = id - t->last[t->depth];
    if (delta > 0 && delta <= 15) {
        buf_byte(t->out, ((unsigned)delta << 4) | type);
    } else {
        buf_byte(t->out, type);
        buf_varint(t->out, zigzag(id));
    }
    t->last[t->depth] = id;
}

static void tc_i32(tc_writer *t, int id, int32_t v) {
    tc_field(t, id, TC_I32);
    buf_varint(t->out, zigzag(v));
}

static void tc_i64(tc_writer *t, int id, int64_t v) {
    tc_field(t, id, TC_I64);
    buf_varint(t->out, zigzag(v));
}

static void tc_byte(tc_writer *t, int id, int v) {
    tc_field(t, id, TC_BYTE);
    buf_byte(t->out, (unsigned)v & 0xFFu);
}

static void tc_bool(tc_writer *t, int id, int v) { tc_field(t, id, v ? TC_TRUE : TC_FALSE); }

static void tc_raw_binary(tc_writer *t, const void *p, size_t n) {
    buf_varint(t->out, n);
    buf_put(t->out, p, n);
}

static void tc_binary(tc_writer *t, int id, const void *p, size_t n) {
    tc_field(t, id, TC_BINARY);
    tc_raw_binary(t, p, n);
}

static void tc_string(tc_writer *t, int id, const char *s) { tc_binary(t, id, s, strlen(s)); }

/* A struct opens a new field-id scope; a list element struct too (tc_struct_open). */
static void tc_struct_open(tc_writer *t) {
    if (t->depth + 1 >= TC_DEPTH_MAX) {
        t->out->failed = 1;
        return;
    }
    t->last[++t->depth] = 0;
}

static void tc_struct_begin(tc_writer *t, int id) {
    tc_field(t, id, TC_STRUCT);
    tc_struct_open(t);
}

static void tc_struct_end(tc_writer *t) {
    buf_byte(t->out, 0); /* STOP */
    if (t->depth > 0) t->depth--;
}

static void tc_list_begin(tc_writer *t, int id, unsigned elem_type, size_t n) {
    tc_field(t, id, TC_LIST);
    if (n < 15) {
        buf_byte(t->out, ((unsigned)n << 4) | elem_type);
    } else {
        buf_byte(t->out, 0xF0u | elem_type);
        buf_varint(t->out, n);
    }
}

/* ==== writer state =================================================================== */
/* Per row group and column, what the footer needs. */
typedef struct chunk_meta {
    unsigned encodings;          /* bit per Parquet encoding number used */
    uint64_t chunk_offset, data_offset, dict_offset; /* dict_offset 0: no dictionary */
    uint64_t total_bytes;        /* page headers and bodies */
    int has_min_max;             /* else only null_count is written */
    uint8_t *min, *max;          /* statistics as Parquet stores them (PLAIN, no prefix) */
    size_t min_len, max_len;
    uint64_t null_count;
} chunk_meta;

typedef struct group_meta {
    uint64_t rows, offset, total_bytes;
    chunk_meta *chunks;          /* one per column */
} group_meta;

/* The buffered values of one column in the current row group: `count` values (nulls take
 * none) in `rows` rows. */
typedef struct column_state {
    pq_column def;
    char *name;
    int64_t *ints;               /* integer columns */
    pq_buf heap;                 /* BYTE_ARRAY bytes, value after value */
    size_t *ends;                /* BYTE_ARRAY: end of value i in heap */
    size_t count, cap;
    uint8_t *defined;            /* optional columns: 1 per row with a value, 0 per null */
    size_t rows, rows_cap;
} column_state;

struct pq_writer {
    FILE *file;
    int owns_file;
    pq_config cfg;
    pq_error err;
    column_state *cols;
    size_t ncols;
    size_t row_in_group;         /* rows ended in the current row group */
    uint64_t rows;               /* rows ended in all */
    uint64_t pos;                /* bytes written so far */
    group_meta *groups;
    size_t ngroups, groups_cap;
    pq_buf page, header, scratch;
    uint32_t *dict_slots;        /* dictionary hash table: value index + 1, 0 = empty */
    uint32_t *indices;           /* dictionary index of each value of a chunk */
    size_t dict_slots_cap, indices_cap;
    uint32_t *levels;            /* the definition levels of a page */
    size_t levels_cap;
};

/* Records the first error only: a later, generic failure never hides its cause. */
static atf_result fail(pq_writer *w, atf_result r, int errno_value, const char *what,
                       const char *subject) {
    if (w->err.result == ATF_OK) {
        w->err.result = r;
        w->err.errno_value = errno_value;
        snprintf(w->err.what, sizeof w->err.what, "%s%s%s", what, subject ? ": " : "",
                 subject ? subject : "");
    }
    return w->err.result;
}

static atf_result fail_nomem(pq_writer *w, const char *what) {
    return fail(w, ATF_E_NOMEM, ENOMEM, what, NULL);
}

static void write_bytes(pq_writer *w, const void *p, size_t n) {
    if (w->err.result != ATF_OK || n == 0) return;
    if (fwrite(p, 1, n, w->file) != n) {
        fail(w, ATF_E_IO, errno, "writing the Parquet file", NULL);
        return;
    }
    w->pos += n;
}

/* ==== values of a chunk ============================================================== */
static const uint8_t *value_bytes(const column_state *c, size_t i, size_t *len) {
    size_t start = i ? c->ends[i - 1] : 0;
    *len = c->ends[i] - start;
    return c->heap.p ? c->heap.p + start : (const uint8_t *)"";
}

static int bytes_compare(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    int r = n ? memcmp(a, b, n) : 0;
    if (r) return r;
    return alen < blen ? -1 : alen > blen;
}

static int values_equal(const column_state *c, size_t i, size_t j) {
    size_t li, lj;
    const uint8_t *a, *b;
    if (c->def.type != PQ_BYTE_ARRAY) return c->ints[i] == c->ints[j];
    a = value_bytes(c, i, &li);
    b = value_bytes(c, j, &lj);
    return li == lj && (li == 0 || memcmp(a, b, li) == 0);
}

static uint64_t value_hash(const column_state *c, size_t i) {
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a */
    size_t n, k;
    const uint8_t *p;
    if (c->def.type != PQ_BYTE_ARRAY) {
        h ^= (uint64_t)c->ints[i];
        h *= 0x9E3779B97F4A7C15ull;
        return h ^ (h >> 29);
    }
    p = value_bytes(c, i, &n);
    for (k = 0; k + 8 <= n; k += 8) { /* a word at a time: names are tens of bytes */
        uint64_t x;
        memcpy(&x, p + k, 8);
        h = (h ^ x) * 0x100000001B3ull;
        h ^= h >> 32;
    }
    for (; k < n; k++) h = (h ^ p[k]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static size_t plain_width(const column_state *c) { return c->def.type == PQ_INT32 ? 4 : 8; }

/* Appends value i PLAIN-encoded: little-endian integer, or u32 length + bytes. */
static void plain_put(pq_buf *b, const column_state *c, size_t i) {
    if (c->def.type == PQ_BYTE_ARRAY) {
        size_t n;
        const uint8_t *p = value_bytes(c, i, &n);
        buf_le(b, n, 4);
        buf_put(b, p, n);
    } else {
        buf_le(b, (uint64_t)c->ints[i], plain_width(c));
    }
}

/* ==== statistics ===================================================================== */
/* Min and max of the chunk, stored PLAIN without the length prefix; integers compare
 * signed, bytes compare unsigned lexicographically (the types' defined orders). */
static int set_stat(uint8_t **dst, size_t *dst_len, const void *src, size_t n) {
    *dst = (uint8_t *)malloc(n ? n : 1);
    if (!*dst) return 0;
    if (n) memcpy(*dst, src, n);
    *dst_len = n;
    return 1;
}

static int chunk_stats(pq_writer *w, const column_state *c, chunk_meta *m) {
    size_t i, lo = 0, hi = 0;
    m->null_count = c->rows - c->count;
    if (c->count == 0) return 1; /* nulls only: no min and max */
    for (i = 1; i < c->count; i++) {
        if (c->def.type == PQ_BYTE_ARRAY) {
            size_t li, ll, lh;
            const uint8_t *v = value_bytes(c, i, &li);
            const uint8_t *l = value_bytes(c, lo, &ll), *h = value_bytes(c, hi, &lh);
            if (bytes_compare(v, li, l, ll) < 0) lo = i;
            if (bytes_compare(v, li, h, lh) > 0) hi = i;
        } else {
            if (c->ints[i] < c->ints[lo]) lo = i;
            if (c->ints[i] > c->ints[hi]) hi = i;
        }
    }
    if (c->def.type == PQ_BYTE_ARRAY) {
        size_t ln, hn;
        const uint8_t *l = value_bytes(c, lo, &ln), *h = value_bytes(c, hi, &hn);
        if (ln > w->cfg.stat_max_bytes || hn > w->cfg.stat_max_bytes) return 1;
        if (!set_stat(&m->min, &m->min_len, l, ln) || !set_stat(&m->max, &m->max_len, h, hn))
            return 0;
    } else {
        uint8_t lb[8], hb[8];
        size_t k, width = plain_width(c);
        for (k = 0; k < width; k++) {
            lb[k] = (uint8_t)((uint64_t)c->ints[lo] >> (8 * k));
            hb[k] = (uint8_t)((uint64_t)c->ints[hi] >> (8 * k));
        }
        if (!set_stat(&m->min, &m->min_len, lb, width) ||
            !set_stat(&m->max, &m->max_len, hb, width))
            return 0;
    }
    m->has_min_max = 1;
    return 1;
}

/* ==== bit packing and the RLE / bit-packing hybrid ==================================== */
/* Packs n values (n a multiple of 8) of `width` bits, least significant bit first. */
static void bitpack(pq_buf *b, const uint64_t *v, size_t n, unsigned width) {
    uint64_t acc = 0, mask = width >= 64 ? UINT64_MAX : (((uint64_t)1 << width) - 1);
    unsigned used = 0;
    size_t i;
    if (width == 0) return;
    for (i = 0; i < n; i++) {
        uint64_t x = v[i] & mask;
        acc |= x << used;
        if (used + width >= 64) {
            unsigned left = used + width - 64;
            buf_le(b, acc, 8);
            acc = left ? x >> (width - left) : 0;
            used = left;
        } else {
            used += width;
        }
    }
    buf_le(b, acc, (used + 7) / 8);
}

static unsigned bits_needed(uint64_t v) {
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

static size_t run_length(const uint32_t *v, size_t from, size_t n) {
    size_t k = from + 1;
    while (k < n && v[k] == v[from]) k++;
    return k - from;
}

/* Bit-packed runs of whole groups of 8 (the last group padded with zeros), switching to
 * an RLE run wherever a group starts a run of 8 or more equal values. */
static void rle_hybrid(pq_buf *b, const uint32_t *v, size_t n, unsigned width) {
    enum { GROUPS_MAX = 63 }; /* keeps each bit-packed header one byte long */
    uint64_t group[8 * GROUPS_MAX];
    size_t i = 0;
    while (i < n) {
        size_t run = run_length(v, i, n), groups = 0, k;
        if (run >= 8) {
            buf_varint(b, (uint64_t)run << 1);
            buf_le(b, v[i], (width + 7) / 8);
            i += run;
            continue;
        }
        while (i < n && groups < GROUPS_MAX && (groups == 0 || run_length(v, i, n) < 8)) {
            for (k = 0; k < 8; k++) group[groups * 8 + k] = i + k < n ? v[i + k] : 0;
            groups++;
            i = i + 8 < n ? i + 8 : n;
        }
        buf_varint(b, ((uint64_t)groups << 1) | 1u);
        bitpack(b, group, groups * 8, width);
    }
}

/* ==== DELTA_BINARY_PACKED ============================================================= */
/* Header (block size, miniblocks, count, first value), then per block of 128 deltas: the
 * minimum delta, the 4 miniblock bit widths, and each non-empty miniblock of 32 packed
 * (delta - minimum). Arithmetic wraps in 64 bits, as the encoding defines. */
static void delta_block(pq_buf *b, const int64_t *v, size_t n) {
    uint64_t d[DELTA_BLOCK];
    int64_t min;
    size_t k, m;
    unsigned widths[DELTA_MINIBLOCKS];
    for (k = 0; k < DELTA_BLOCK; k++) d[k] = k < n ? (uint64_t)v[k + 1] - (uint64_t)v[k] : 0;
    min = (int64_t)d[0];
    for (k = 1; k < n; k++)
        if ((int64_t)d[k] < min) min = (int64_t)d[k];
    buf_varint(b, zigzag(min));
    for (k = 0; k < DELTA_BLOCK; k++) d[k] = k < n ? d[k] - (uint64_t)min : 0;
    for (m = 0; m < DELTA_MINIBLOCKS; m++) {
        uint64_t all = 0;
        for (k = m * DELTA_MINI; k < (m + 1) * DELTA_MINI; k++) all |= d[k];
        widths[m] = m * DELTA_MINI < n ? bits_needed(all) : 0;
        buf_byte(b, widths[m]);
    }
    for (m = 0; m < DELTA_MINIBLOCKS && m * DELTA_MINI < n; m++)
        bitpack(b, d + m * DELTA_MINI, DELTA_MINI, widths[m]);
}

static void delta_encode(pq_buf *b, const int64_t *v, size_t n) {
    size_t i;
    buf_varint(b, DELTA_BLOCK);
    buf_varint(b, DELTA_MINIBLOCKS);
    buf_varint(b, n);
    buf_varint(b, zigzag(n ? v[0] : 0));
    for (i = 0; i + 1 < n; i += DELTA_BLOCK) {
        size_t deltas = n - 1 - i < (size_t)DELTA_BLOCK ? n - 1 - i : (size_t)DELTA_BLOCK;
        delta_block(b, v + i, deltas);
    }
}

/* ==== pages ========================================================================== */
static int fits_i32(size_t n) { return n <= (size_t)INT32_MAX; }

/* Writes one page: its Thrift header, then w->page as the (uncompressed) body. */
static void write_page(pq_writer *w, chunk_meta *m, int page_type, size_t values,
                       int encoding) {
    tc_writer t;
    size_t body = w->page.len;
    if (w->page.failed) {
        fail_nomem(w, "encoding a page");
        return;
    }
    if (!fits_i32(body) || !fits_i32(values)) {
        fail(w, ATF_E_ARG, 0, "page larger than 2 GiB", NULL);
        return;
    }
    memset(&t, 0, sizeof t);
    w->header.len = 0;
    t.out = &w->header;
    tc_i32(&t, 1, page_type);
    tc_i32(&t, 2, (int32_t)body); /* uncompressed size */
    tc_i32(&t, 3, (int32_t)body); /* compressed size: no compression */
    if (page_type == PAGE_DICTIONARY) {
        tc_struct_begin(&t, 7);
        tc_i32(&t, 1, (int32_t)values);
        tc_i32(&t, 2, encoding);
        tc_struct_end(&t);
    } else {
        tc_struct_begin(&t, 5);
        tc_i32(&t, 1, (int32_t)values);
        tc_i32(&t, 2, encoding);
        tc_i32(&t, 3, ENC_RLE); /* definition levels: only an optional column has them */
        tc_i32(&t, 4, ENC_RLE); /* repetition levels: none, the columns are flat */
        tc_struct_end(&t);
    }
    buf_byte(&w->header, 0);
    if (w->header.failed) {
        fail_nomem(w, "encoding a page header");
        return;
    }
    if (page_type == PAGE_DATA && !m->data_offset) m->data_offset = w->pos;
    if (page_type == PAGE_DICTIONARY) m->dict_offset = w->pos;
    m->encodings |= 1u << encoding;
    m->total_bytes += w->header.len + body;
    write_bytes(w, w->header.p, w->header.len);
    write_bytes(w, w->page.p, body);
}

/* The next data page of a chunk: rows [row, *row_end) holding values [val, *val_end);
 * page_values rows at most, and for PLAIN values near page_bytes (always at least one
 * row). */
static void page_next(const pq_writer *w, const column_state *c, size_t row, size_t val,
                      int plain, size_t *row_end, size_t *val_end) {
    size_t end = row + (c->rows - row < w->cfg.page_values ? c->rows - row : w->cfg.page_values);
    size_t bytes = 0, i;
    if (!plain && !c->defined) {
        *row_end = end;
        *val_end = val + (end - row);
        return;
    }
    for (i = row; i < end; i++) {
        if (c->defined && !c->defined[i]) continue;
        if (plain) {
            size_t n = plain_width(c);
            if (c->def.type == PQ_BYTE_ARRAY) {
                value_bytes(c, val, &n);
                n += 4; /* the length prefix */
            }
            if (i > row && bytes + n > w->cfg.page_bytes) break;
            bytes += n;
        }
        val++;
    }
    *row_end = i;
    *val_end = val;
}

/* Starts a data page of rows [from, to): for an optional column, its definition levels
 * (1 a value, 0 a null) as DataPage v1 has them: their byte length (4 bytes, little-
 * endian), then the RLE / bit-packed hybrid of width 1. */
static void page_start(pq_writer *w, const column_state *c, size_t from, size_t to) {
    size_t i, at;
    w->page.len = 0;
    if (!c->defined) return;
    if (to - from > w->levels_cap) {
        uint32_t *m = (uint32_t *)realloc(w->levels, (to - from) * sizeof *m);
        if (!m) {
            w->page.failed = 1; /* reported by write_page */
            return;
        }
        w->levels = m;
        w->levels_cap = to - from;
    }
    for (i = from; i < to; i++) w->levels[i - from] = c->defined[i];
    buf_le(&w->page, 0, 4);
    at = w->page.len;
    rle_hybrid(&w->page, w->levels, to - from, 1);
    if (!w->page.failed) {
        size_t n = w->page.len - at, k;
        for (k = 0; k < 4; k++) w->page.p[at - 4 + k] = (uint8_t)(n >> (8 * k));
    }
}

static void write_plain_pages(pq_writer *w, const column_state *c, chunk_meta *m) {
    size_t row = 0, val = 0;
    while (row < c->rows && w->err.result == ATF_OK) {
        size_t row_end, val_end, i;
        page_next(w, c, row, val, 1, &row_end, &val_end);
        page_start(w, c, row, row_end);
        for (i = val; i < val_end; i++) plain_put(&w->page, c, i);
        write_page(w, m, PAGE_DATA, row_end - row, ENC_PLAIN);
        row = row_end;
        val = val_end;
    }
}

/* A page of nulls only holds no value to encode: PLAIN, which every reader takes empty. */
static void write_delta_pages(pq_writer *w, const column_state *c, chunk_meta *m) {
    size_t row = 0, val = 0;
    while (row < c->rows && w->err.result == ATF_OK) {
        size_t row_end, val_end;
        page_next(w, c, row, val, 0, &row_end, &val_end);
        page_start(w, c, row, row_end);
        if (val_end > val) delta_encode(&w->page, c->ints + val, val_end - val);
        write_page(w, m, PAGE_DATA, row_end - row,
                   val_end > val ? ENC_DELTA_BINARY_PACKED : ENC_PLAIN);
        row = row_end;
        val = val_end;
    }
}

/* ==== dictionary ===================================================================== */
static int dict_tables_reserve(pq_writer *w, size_t values, size_t slots) {
    if (values > w->indices_cap) {
        uint32_t *m = (uint32_t *)realloc(w->indices, values * sizeof *m);
        if (!m) return 0;
        w->indices = m;
        w->indices_cap = values;
    }
    if (slots > w->dict_slots_cap) {
        uint32_t *m = (uint32_t *)realloc(w->dict_slots, slots * sizeof *m);
        if (!m) return 0;
        w->dict_slots = m;
        w->dict_slots_cap = slots;
    }
    memset(w->dict_slots, 0, slots * sizeof *w->dict_slots);
    return 1;
}

/* Builds the chunk's dictionary: w->indices[i] is value i's entry, w->scratch holds the
 * PLAIN dictionary page body. Returns the number of entries, or 0 when the dictionary
 * would pass its limits (or memory ran out: w->err says which). */
static size_t dict_build(pq_writer *w, const column_state *c) {
    size_t slots = 16, entries = 0, i;
    size_t *first = NULL; /* value index of each entry */
    while (slots < 2 * (c->count < w->cfg.dict_max_values ? c->count : w->cfg.dict_max_values))
        slots *= 2;
    first = (size_t *)malloc((w->cfg.dict_max_values + 1) * sizeof *first);
    if (!first || !dict_tables_reserve(w, c->count, slots)) {
        free(first);
        fail_nomem(w, "building a dictionary");
        return 0;
    }
    w->scratch.len = 0;
    for (i = 0; i < c->count; i++) {
        size_t s;
        if (i && values_equal(c, i - 1, i)) { /* a run of one value costs no lookup */
            w->indices[i] = w->indices[i - 1];
            continue;
        }
        s = (size_t)value_hash(c, i) & (slots - 1);
        while (w->dict_slots[s] && !values_equal(c, first[w->dict_slots[s] - 1], i))
            s = (s + 1) & (slots - 1);
        if (!w->dict_slots[s]) {
            if (entries == w->cfg.dict_max_values) break;
            first[entries] = i;
            w->dict_slots[s] = (uint32_t)++entries;
            plain_put(&w->scratch, c, i);
            if (w->scratch.len > w->cfg.dict_max_bytes) break;
        }
        w->indices[i] = w->dict_slots[s] - 1;
    }
    free(first);
    if (w->scratch.failed) {
        fail_nomem(w, "building a dictionary");
        return 0;
    }
    return i == c->count ? entries : 0;
}

/* The dictionary page (PLAIN entries), then data pages of one bit-width byte followed by
 * the RLE / bit-packed hybrid of the indices (after the levels of an optional column). */
static void write_dict_pages(pq_writer *w, const column_state *c, chunk_meta *m,
                             size_t entries) {
    unsigned width = bits_needed(entries - 1);
    size_t row = 0, val = 0;
    pq_buf swap;
    if (width == 0) width = 1; /* one entry: a width of 1 is valid and read everywhere */
    swap = w->page; /* the dictionary body is in scratch: send it as the page */
    w->page = w->scratch;
    w->scratch = swap;
    write_page(w, m, PAGE_DICTIONARY, entries, ENC_PLAIN);
    while (row < c->rows && w->err.result == ATF_OK) {
        size_t row_end, val_end;
        page_next(w, c, row, val, 0, &row_end, &val_end);
        page_start(w, c, row, row_end);
        if (val_end > val) { /* a page of nulls only: PLAIN, as in write_delta_pages */
            buf_byte(&w->page, width);
            rle_hybrid(&w->page, w->indices + val, val_end - val, width);
        }
        write_page(w, m, PAGE_DATA, row_end - row,
                   val_end > val ? ENC_RLE_DICTIONARY : ENC_PLAIN);
        row = row_end;
        val = val_end;
    }
}

/* ==== row groups ===================================================================== */
static pq_encoding effective_encoding(const pq_column *col) {
    if (col->encoding != PQ_ENCODING_AUTO) return col->encoding;
    return col->type == PQ_INT64 ? PQ_ENCODING_DELTA : PQ_ENCODING_DICTIONARY;
}

static void write_chunk(pq_writer *w, const column_state *c, chunk_meta *m) {
    pq_encoding enc = effective_encoding(&c->def);
    m->chunk_offset = w->pos;
    if (!chunk_stats(w, c, m)) {
        fail_nomem(w, "column statistics");
        return;
    }
    if (enc == PQ_ENCODING_DICTIONARY) {
        size_t entries = dict_build(w, c);
        if (entries) {
            write_dict_pages(w, c, m, entries);
            return;
        }
        if (w->err.result != ATF_OK) return;
    }
    if (enc == PQ_ENCODING_DELTA) write_delta_pages(w, c, m);
    else write_plain_pages(w, c, m);
}

static void clear_column(column_state *c) {
    c->count = 0;
    c->rows = 0;
    c->heap.len = 0;
}

static atf_result flush_row_group(pq_writer *w) {
    group_meta *g;
    size_t i;
    if (w->row_in_group == 0 || w->err.result != ATF_OK) return w->err.result;
    if (w->ngroups == w->groups_cap) {
        size_t cap = w->groups_cap ? w->groups_cap * 2 : 8;
        group_meta *m = (group_meta *)realloc(w->groups, cap * sizeof *m);
        if (!m) return fail_nomem(w, "row group list");
        w->groups = m;
        w->groups_cap = cap;
    }
    g = &w->groups[w->ngroups];
    memset(g, 0, sizeof *g);
    g->chunks = (chunk_meta *)calloc(w->ncols, sizeof *g->chunks);
    if (!g->chunks) return fail_nomem(w, "row group metadata");
    w->ngroups++;
    g->rows = w->row_in_group;
    g->offset = w->pos;
    for (i = 0; i < w->ncols && w->err.result == ATF_OK; i++) {
        write_chunk(w, &w->cols[i], &g->chunks[i]);
        g->total_bytes += g->chunks[i].total_bytes;
        clear_column(&w->cols[i]);
    }
    w->row_in_group = 0;
    return w->err.result;
}

/* ==== footer ========================================================================= */
static void footer_schema_element(tc_writer *t, const pq_column *c) {
    tc_struct_open(t);
    tc_i32(t, 1, (int32_t)c->type);
    tc_i32(t, 3, c->optional ? REPETITION_OPTIONAL : REPETITION_REQUIRED);
    tc_string(t, 4, c->name);
    if (c->logical == PQ_LOGICAL_STRING) tc_i32(t, 6, CONVERTED_UTF8);
    if (c->logical == PQ_LOGICAL_INTEGER)
        tc_i32(t, 6, c->type == PQ_INT32 ? CONVERTED_INT_32 : CONVERTED_INT_64);
    if (c->logical != PQ_LOGICAL_NONE) {
        tc_struct_begin(t, 10); /* LogicalType union */
        if (c->logical == PQ_LOGICAL_STRING) {
            tc_struct_begin(t, 1);
            tc_struct_end(t);
        } else if (c->logical == PQ_LOGICAL_INTEGER) {
            tc_struct_begin(t, 10);
            tc_byte(t, 1, c->type == PQ_INT32 ? 32 : 64);
            tc_bool(t, 2, 1);
            tc_struct_end(t);
        } else {
            tc_struct_begin(t, 8); /* TimestampType */
            tc_bool(t, 1, c->logical == PQ_LOGICAL_TIMESTAMP_NS_UTC);
            tc_struct_begin(t, 2); /* TimeUnit union: NANOS */
            tc_struct_begin(t, 3);
            tc_struct_end(t);
            tc_struct_end(t);
            tc_struct_end(t);
        }
        tc_struct_end(t);
    }
    tc_struct_end(t);
}

static void footer_schema(pq_writer *w, tc_writer *t) {
    size_t i;
    tc_list_begin(t, 2, TC_STRUCT, w->ncols + 1);
    tc_struct_open(t); /* the root: a group holding every column */
    tc_string(t, 4, "schema");
    tc_i32(t, 5, (int32_t)w->ncols);
    tc_struct_end(t);
    for (i = 0; i < w->ncols; i++) footer_schema_element(t, &w->cols[i].def);
}

static unsigned count_bits(unsigned v) {
    unsigned n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

static void footer_column_meta(tc_writer *t, const column_state *c, const chunk_meta *m,
                               uint64_t rows) {
    unsigned e;
    tc_struct_begin(t, 3);
    tc_i32(t, 1, (int32_t)c->def.type);
    tc_list_begin(t, 2, TC_I32, count_bits(m->encodings));
    for (e = 0; e < 32; e++)
        if (m->encodings & (1u << e)) buf_varint(t->out, zigzag((int64_t)e));
    tc_list_begin(t, 3, TC_BINARY, 1);
    tc_raw_binary(t, c->def.name, strlen(c->def.name));
    tc_i32(t, 4, 0); /* UNCOMPRESSED */
    tc_i64(t, 5, (int64_t)rows);
    tc_i64(t, 6, (int64_t)m->total_bytes);
    tc_i64(t, 7, (int64_t)m->total_bytes);
    tc_i64(t, 9, (int64_t)m->data_offset);
    if (m->dict_offset) tc_i64(t, 11, (int64_t)m->dict_offset);
    tc_struct_begin(t, 12);
    tc_i64(t, 3, (int64_t)m->null_count);
    if (m->has_min_max) {
        tc_binary(t, 5, m->max, m->max_len);
        tc_binary(t, 6, m->min, m->min_len);
    }
    tc_struct_end(t);
    tc_struct_end(t);
}

static void footer_row_group(pq_writer *w, tc_writer *t, const group_meta *g, size_t ordinal) {
    size_t i;
    tc_struct_open(t);
    tc_list_begin(t, 1, TC_STRUCT, w->ncols);
    for (i = 0; i < w->ncols; i++) {
        tc_struct_open(t);
        tc_i64(t, 2, (int64_t)g->chunks[i].chunk_offset);
        footer_column_meta(t, &w->cols[i], &g->chunks[i], g->rows);
        tc_struct_end(t);
    }
    tc_i64(t, 2, (int64_t)g->total_bytes);
    tc_i64(t, 3, (int64_t)g->rows);
    tc_i64(t, 5, (int64_t)g->offset);
    tc_i64(t, 6, (int64_t)g->total_bytes);
    if (ordinal <= INT16_MAX) {
        tc_field(t, 7, 4); /* i16 */
        buf_varint(t->out, zigzag((int64_t)ordinal));
    }
    tc_struct_end(t);
}

/* FileMetaData, its length and the closing magic. */
static void write_footer(pq_writer *w) {
    tc_writer t;
    size_t i;
    memset(&t, 0, sizeof t);
    w->header.len = 0;
    t.out = &w->header;
    tc_i32(&t, 1, 2); /* version */
    footer_schema(w, &t);
    tc_i64(&t, 3, (int64_t)w->rows);
    tc_list_begin(&t, 4, TC_STRUCT, w->ngroups);
    for (i = 0; i < w->ngroups; i++) footer_row_group(w, &t, &w->groups[i], i);
    tc_string(&t, 6, w->cfg.created_by);
    /* column_orders: TYPE_DEFINED_ORDER for each column, so min_value/max_value hold */
    tc_list_begin(&t, 7, TC_STRUCT, w->ncols);
    for (i = 0; i < w->ncols; i++) {
        tc_struct_open(&t);
        tc_struct_begin(&t, 1);
        tc_struct_end(&t);
        tc_struct_end(&t);
    }
    buf_byte(&w->header, 0);
    if (w->header.failed) {
        fail_nomem(w, "encoding the footer");
        return;
    }
    if (!fits_i32(w->header.len)) {
        fail(w, ATF_E_ARG, 0, "footer larger than 2 GiB", NULL);
        return;
    }
    buf_le(&w->header, w->header.len, 4);
    buf_put(&w->header, "PAR1", 4);
    if (w->header.failed) {
        fail_nomem(w, "encoding the footer");
        return;
    }
    write_bytes(w, w->header.p, w->header.len);
}

/* ==== UTF-8 ========================================================================== */
/* Appends s to the heap, each byte that starts no valid sequence replaced by U+FFFD:
 * readers reject STRING columns that are not UTF-8. */
static void heap_put_utf8(pq_buf *heap, const uint8_t *s, size_t n) {
    size_t from = 0, i = 0;
    while (i < n) {
        size_t k = s[i] < 0x80 ? 1 : atf_utf8_sequence(s + i, n - i);
        if (k) {
            i += k;
            continue;
        }
        buf_put(heap, s + from, i - from); /* each valid run in one copy, not per byte */
        buf_put(heap, "\xEF\xBF\xBD", 3);
        from = ++i;
    }
    buf_put(heap, s + from, n - from);
}

/* ==== public API ===================================================================== */
static void apply_defaults(pq_config *c) {
    if (!c->row_group_rows) c->row_group_rows = PQ_DEFAULT_ROW_GROUP_ROWS;
    if (!c->page_values) c->page_values = PQ_DEFAULT_PAGE_VALUES;
    if (!c->page_bytes) c->page_bytes = PQ_DEFAULT_PAGE_BYTES;
    if (!c->dict_max_values) c->dict_max_values = PQ_DEFAULT_DICT_VALUES;
    if (!c->dict_max_bytes) c->dict_max_bytes = PQ_DEFAULT_DICT_BYTES;
    if (!c->stat_max_bytes) c->stat_max_bytes = PQ_DEFAULT_STAT_BYTES;
    if (!c->created_by) c->created_by = "atf parquet writer";
    /* dictionary indices are uint32 and the hash table needs headroom */
    if (c->dict_max_values > (size_t)1 << 30) c->dict_max_values = (size_t)1 << 30;
}

static int column_valid(const pq_column *c) {
    if (!c->name || !c->name[0]) return 0;
    if (c->type != PQ_INT32 && c->type != PQ_INT64 && c->type != PQ_BYTE_ARRAY) return 0;
    if (c->logical == PQ_LOGICAL_STRING && c->type != PQ_BYTE_ARRAY) return 0;
    if (c->logical == PQ_LOGICAL_INTEGER && c->type == PQ_BYTE_ARRAY) return 0;
    if ((c->logical == PQ_LOGICAL_TIMESTAMP_NS || c->logical == PQ_LOGICAL_TIMESTAMP_NS_UTC) &&
        c->type != PQ_INT64)
        return 0;
    if ((int)c->logical < 0 || c->logical > PQ_LOGICAL_TIMESTAMP_NS_UTC) return 0;
    if ((int)c->encoding < 0 || c->encoding > PQ_ENCODING_DELTA) return 0;
    if (c->optional != 0 && c->optional != 1) return 0;
    return c->encoding != PQ_ENCODING_DELTA || c->type == PQ_INT64;
}

static const char *schema_problem(const pq_column *cols, size_t count) {
    size_t i, j;
    if (!cols || count == 0) return "no columns";
    if (count > INT32_MAX) return "too many columns";
    for (i = 0; i < count; i++) {
        if (!column_valid(&cols[i])) return "bad column (name, type, logical type or encoding)";
        for (j = 0; j < i; j++)
            if (strcmp(cols[i].name, cols[j].name) == 0) return "duplicate column name";
    }
    return NULL;
}

static void copy_error(pq_error *dst, const pq_error *src) {
    if (dst) *dst = *src;
}

static void free_groups(pq_writer *w) {
    size_t g, c;
    for (g = 0; g < w->ngroups; g++) {
        for (c = 0; c < w->ncols; c++) {
            free(w->groups[g].chunks[c].min);
            free(w->groups[g].chunks[c].max);
        }
        free(w->groups[g].chunks);
    }
    free(w->groups);
}

static void writer_free(pq_writer *w) {
    size_t i;
    if (!w) return;
    free_groups(w);
    for (i = 0; i < w->ncols; i++) {
        free(w->cols[i].name);
        free(w->cols[i].ints);
        free(w->cols[i].ends);
        free(w->cols[i].defined);
        buf_free(&w->cols[i].heap);
    }
    free(w->cols);
    buf_free(&w->page);
    buf_free(&w->header);
    buf_free(&w->scratch);
    free(w->dict_slots);
    free(w->indices);
    free(w->levels);
    free(w);
}

static pq_writer *writer_new(const pq_column *columns, size_t count, const pq_config *cfg) {
    pq_writer *w = (pq_writer *)calloc(1, sizeof *w);
    size_t i;
    if (!w) return NULL;
    if (cfg) w->cfg = *cfg;
    apply_defaults(&w->cfg);
    w->cols = (column_state *)calloc(count, sizeof *w->cols);
    if (!w->cols) {
        free(w);
        return NULL;
    }
    w->ncols = count;
    for (i = 0; i < count; i++) {
        size_t n = strlen(columns[i].name) + 1;
        w->cols[i].def = columns[i];
        w->cols[i].name = (char *)malloc(n);
        if (!w->cols[i].name) {
            writer_free(w);
            return NULL;
        }
        memcpy(w->cols[i].name, columns[i].name, n);
        w->cols[i].def.name = w->cols[i].name;
    }
    return w;
}

static atf_result open_common(pq_writer **out, FILE *file, int owns, const char *path,
                              const pq_column *columns, size_t count, const pq_config *cfg,
                              pq_error *err) {
    pq_error e;
    const char *problem = schema_problem(columns, count);
    pq_writer *w;
    memset(&e, 0, sizeof e);
    *out = NULL;
    if (problem) {
        e.result = ATF_E_ARG;
        snprintf(e.what, sizeof e.what, "%s", problem);
    } else if (!(w = writer_new(columns, count, cfg))) {
        e.result = ATF_E_NOMEM;
        e.errno_value = ENOMEM;
        snprintf(e.what, sizeof e.what, "creating the Parquet writer");
    } else {
        w->file = file;
        w->owns_file = owns;
        write_bytes(w, "PAR1", 4);
        if (w->err.result == ATF_OK) {
            *out = w;
            return ATF_OK;
        }
        e = w->err;
        if (path) snprintf(e.what, sizeof e.what, "writing %s", path);
        writer_free(w);
    }
    if (owns) fclose(file);
    copy_error(err, &e);
    return e.result;
}

atf_result pq_writer_open(pq_writer **out, const char *path, const pq_column *columns,
                          size_t count, const pq_config *cfg, pq_error *err) {
    FILE *f;
    if (!out || !path) {
        pq_error e;
        memset(&e, 0, sizeof e);
        e.result = ATF_E_ARG;
        snprintf(e.what, sizeof e.what, "no output path");
        copy_error(err, &e);
        if (out) *out = NULL;
        return ATF_E_ARG;
    }
    f = fopen(path, "wb");
    if (!f) {
        pq_error e;
        memset(&e, 0, sizeof e);
        e.errno_value = errno;
        e.result = errno == ENOENT ? ATF_E_NOT_FOUND : ATF_E_IO;
        snprintf(e.what, sizeof e.what, "creating %s", path);
        copy_error(err, &e);
        *out = NULL;
        return e.result;
    }
    return open_common(out, f, 1, path, columns, count, cfg, err);
}

atf_result pq_writer_open_file(pq_writer **out, FILE *file, const pq_column *columns,
                               size_t count, const pq_config *cfg, pq_error *err) {
    if (!out || !file) {
        pq_error e;
        memset(&e, 0, sizeof e);
        e.result = ATF_E_ARG;
        snprintf(e.what, sizeof e.what, "no output stream");
        copy_error(err, &e);
        if (out) *out = NULL;
        return ATF_E_ARG;
    }
    return open_common(out, file, 0, NULL, columns, count, cfg, err);
}

/* The column about to take the value (null: is_null) of its row number `rows`; NULL (and
 * an error) when it can't. Room for its definition level, and for a value unless null. */
static column_state *column_for_put(pq_writer *w, size_t col, pq_type want_bytes, int is_null) {
    column_state *c;
    if (w->err.result != ATF_OK) return NULL;
    if (col >= w->ncols) {
        fail(w, ATF_E_ARG, 0, "column index out of range", NULL);
        return NULL;
    }
    c = &w->cols[col];
    if (is_null && !c->def.optional) {
        fail(w, ATF_E_ARG, 0, "null for the required column", c->name);
        return NULL;
    }
    if (!is_null && (want_bytes == PQ_BYTE_ARRAY) != (c->def.type == PQ_BYTE_ARRAY)) {
        fail(w, ATF_E_ARG, 0, "value of the wrong type for column", c->name);
        return NULL;
    }
    if (c->rows != w->row_in_group) {
        fail(w, ATF_E_STATE, 0, "second value in one row for column", c->name);
        return NULL;
    }
    if (c->def.optional && c->rows == c->rows_cap) {
        size_t cap = c->rows_cap ? c->rows_cap * 2 : 1024;
        uint8_t *m = (uint8_t *)realloc(c->defined, cap);
        if (!m) goto nomem;
        c->defined = m;
        c->rows_cap = cap;
    }
    if (is_null) return c;
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        if (c->def.type == PQ_BYTE_ARRAY) {
            size_t *m = (size_t *)realloc(c->ends, cap * sizeof *m);
            if (!m) goto nomem;
            c->ends = m;
        } else {
            int64_t *m = (int64_t *)realloc(c->ints, cap * sizeof *m);
            if (!m) goto nomem;
            c->ints = m;
        }
        c->cap = cap;
    }
    return c;
nomem:
    fail_nomem(w, "buffering a row group");
    return NULL;
}

/* The value just stored ends the column's row. */
static void column_row_done(column_state *c, int defined) {
    if (c->defined) c->defined[c->rows] = (uint8_t)defined;
    c->rows++;
}

atf_result pq_writer_put_int(pq_writer *w, size_t col, int64_t v) {
    column_state *c = column_for_put(w, col, PQ_INT64, 0);
    if (!c) return w->err.result;
    if (c->def.type == PQ_INT32 && (v < INT32_MIN || v > INT32_MAX))
        return fail(w, ATF_E_RANGE, 0, "value outside INT32 for column", c->name);
    c->ints[c->count++] = v;
    column_row_done(c, 1);
    return ATF_OK;
}

atf_result pq_writer_put_null(pq_writer *w, size_t col) {
    column_state *c = column_for_put(w, col, PQ_INT64, 1);
    if (!c) return w->err.result;
    column_row_done(c, 0);
    return ATF_OK;
}

atf_result pq_writer_put_bytes(pq_writer *w, size_t col, const void *s, size_t len) {
    column_state *c = column_for_put(w, col, PQ_BYTE_ARRAY, 0);
    if (!c) return w->err.result;
    if (len && !s) return fail(w, ATF_E_ARG, 0, "NULL bytes for column", c->name);
    if (c->def.logical == PQ_LOGICAL_STRING) heap_put_utf8(&c->heap, (const uint8_t *)s, len);
    else buf_put(&c->heap, s, len);
    if (c->heap.failed) return fail_nomem(w, "buffering a row group");
    c->ends[c->count++] = c->heap.len;
    column_row_done(c, 1);
    return ATF_OK;
}

atf_result pq_writer_end_row(pq_writer *w) {
    size_t i;
    if (w->err.result != ATF_OK) return w->err.result;
    for (i = 0; i < w->ncols; i++)
        if (w->cols[i].rows != w->row_in_group + 1)
            return fail(w, ATF_E_STATE, 0, "row ended without a value for column",
                        w->cols[i].name);
    w->row_in_group++;
    w->rows++;
    if (w->row_in_group >= w->cfg.row_group_rows) flush_row_group(w);
    return w->err.result;
}

atf_result pq_writer_put_row(pq_writer *w, const pq_value *row) {
    size_t i;
    if (!row) return fail(w, ATF_E_ARG, 0, "no row", NULL);
    for (i = 0; i < w->ncols && w->err.result == ATF_OK; i++) {
        if (row[i].is_null)
            pq_writer_put_null(w, i);
        else if (w->cols[i].def.type == PQ_BYTE_ARRAY)
            pq_writer_put_bytes(w, i, row[i].s, row[i].len);
        else
            pq_writer_put_int(w, i, row[i].i);
    }
    if (w->err.result != ATF_OK) return w->err.result;
    return pq_writer_end_row(w);
}

uint64_t pq_writer_rows(const pq_writer *w) { return w->rows; }

const pq_error *pq_writer_error(const pq_writer *w) { return &w->err; }

atf_result pq_writer_close(pq_writer *w, pq_error *err) {
    atf_result r;
    size_t i;
    if (!w) return ATF_OK;
    for (i = 0; i < w->ncols && w->err.result == ATF_OK; i++)
        if (w->cols[i].rows != w->row_in_group)
            fail(w, ATF_E_STATE, 0, "closed in the middle of a row", NULL);
    flush_row_group(w);
    if (w->err.result == ATF_OK) write_footer(w);
    if (fflush(w->file) != 0) fail(w, ATF_E_IO, errno, "flushing the Parquet file", NULL);
    if (w->owns_file && fclose(w->file) != 0)
        fail(w, ATF_E_IO, errno, "closing the Parquet file", NULL);
    copy_error(err, &w->err);
    r = w->err.result;
    writer_free(w);
    return r;
}
