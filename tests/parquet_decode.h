/* parquet_decode.h - a strict Parquet reader for the tests of tools/parquet.c, written
 * apart from the writer so that the two cannot share a mistake.
 *
 * What it reads: the "PAR1" magics and the footer length; FileMetaData in the Thrift
 * compact protocol, parsed into a generic tree (every Thrift type, so unknown fields are
 * skipped like any reader would); the schema (flat: a root group and leaf columns, with
 * converted and logical types); each row group's column chunks (offsets, sizes, codec,
 * encodings, statistics); then every page of every chunk: dictionary pages (PLAIN) and
 * data pages v1 in PLAIN, RLE_DICTIONARY / PLAIN_DICTIONARY and DELTA_BINARY_PACKED, for
 * INT32, INT64 and BYTE_ARRAY columns, REQUIRED or OPTIONAL (the definition levels of an
 * optional column's page: their 4-byte length, then the RLE / bit-packed hybrid of width
 * 1). All values come back per column and row: integers widened to int64, byte arrays
 * pointing into the file image, and a null flag per row (0 for a null's value).
 *
 * Strict where the writer must be exact: a page body must be consumed to its last byte,
 * pages must tile their chunk exactly, counts must agree everywhere; any disagreement is
 * an error with a message (pqd_file.error), never a crash: reads are bounds-checked.
 *
 * Use: pqd_file f; if (pqd_open(&f, path) != 0) puts(f.error); ... pqd_close(&f);
 * Single-file, static functions only: include it in one test program. */
#ifndef ATF_TESTS_PARQUET_DECODE_H
#define ATF_TESTS_PARQUET_DECODE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Thrift compact protocol, as a tree ============================================= */
enum {
    PQD_T_STOP = 0, PQD_T_TRUE = 1, PQD_T_FALSE = 2, PQD_T_BYTE = 3, PQD_T_I16 = 4,
    PQD_T_I32 = 5, PQD_T_I64 = 6, PQD_T_DOUBLE = 7, PQD_T_BINARY = 8, PQD_T_LIST = 9,
    PQD_T_SET = 10, PQD_T_MAP = 11, PQD_T_STRUCT = 12
};

typedef struct pqd_node {
    int type;                    /* PQD_T_*; TRUE/FALSE both mean bool, value in i */
    int id;                      /* field id (struct members), element index (lists) */
    int64_t i;                   /* integers and bools */
    const uint8_t *bin;          /* binary */
    size_t len;
    struct pqd_node *kids;       /* struct fields, list/set elements, map keys+values */
    size_t nkids;
} pqd_node;

typedef struct pqd_cursor {
    const uint8_t *p, *end;
    int bad;
} pqd_cursor;

static uint8_t pqd__byte(pqd_cursor *c) {
    if (c->p >= c->end) {
        c->bad = 1;
        return 0;
    }
    return *c->p++;
}

static uint64_t pqd__varint(pqd_cursor *c) {
    uint64_t v = 0;
    unsigned shift;
    for (shift = 0; shift < 70; shift += 7) {
        uint8_t b = pqd__byte(c);
        if (shift == 63 && b > 1) c->bad = 1;
        if (shift < 64) v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) return v;
    }
    c->bad = 1;
    return 0;
}

static int64_t pqd__unzigzag(uint64_t v) {
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void pqd__node_free(pqd_node *n) {
    size_t k;
    for (k = 0; k < n->nkids; k++) pqd__node_free(&n->kids[k]);
    free(n->kids);
    n->kids = NULL;
    n->nkids = 0;
}

static int pqd__value(pqd_cursor *c, pqd_node *n, int type, int depth);

static int pqd__add_kid(pqd_node *n, pqd_node **kid) {
    pqd_node *m = (pqd_node *)realloc(n->kids, (n->nkids + 1) * sizeof *m);
    if (!m) return 0;
    n->kids = m;
    *kid = &m[n->nkids++];
    memset(*kid, 0, sizeof **kid);
    return 1;
}

static int pqd__struct(pqd_cursor *c, pqd_node *n, int depth) {
    int last = 0;
    n->type = PQD_T_STRUCT;
    for (;;) {
        uint8_t h = pqd__byte(c);
        int type = h & 0x0F, id;
        pqd_node *kid;
        if (c->bad) return 0;
        if (h == 0) return 1;
        id = (h >> 4) ? last + (h >> 4) : (int)pqd__unzigzag(pqd__varint(c));
        last = id;
        if (!pqd__add_kid(n, &kid)) return 0;
        kid->id = id;
        if (type == PQD_T_TRUE || type == PQD_T_FALSE) {
            kid->type = type;
            kid->i = type == PQD_T_TRUE;
        } else if (!pqd__value(c, kid, type, depth + 1)) {
            return 0;
        }
    }
}

static int pqd__elements(pqd_cursor *c, pqd_node *n, size_t count, int t1, int t2, int depth) {
    size_t k;
    for (k = 0; k < count; k++) {
        pqd_node *kid;
        int t = (t2 >= 0 && (k & 1)) ? t2 : t1;
        if (c->bad || !pqd__add_kid(n, &kid)) return 0;
        kid->id = (int)k;
        if (t == PQD_T_TRUE || t == PQD_T_FALSE) { /* bools in containers are one byte */
            kid->type = PQD_T_TRUE;
            kid->i = pqd__byte(c) == 1;
        } else if (!pqd__value(c, kid, t, depth + 1)) {
            return 0;
        }
    }
    return !c->bad;
}

static int pqd__value(pqd_cursor *c, pqd_node *n, int type, int depth) {
    uint64_t len;
    if (depth > 64) return 0;
    n->type = type;
    switch (type) {
    case PQD_T_BYTE: n->i = (int8_t)pqd__byte(c); break;
    case PQD_T_I16: case PQD_T_I32: case PQD_T_I64: n->i = pqd__unzigzag(pqd__varint(c)); break;
    case PQD_T_DOUBLE: if ((size_t)(c->end - c->p) < 8) c->bad = 1; else c->p += 8; break;
    case PQD_T_BINARY:
        len = pqd__varint(c);
        if (c->bad || len > (uint64_t)(c->end - c->p)) return 0;
        n->bin = c->p;
        n->len = (size_t)len;
        c->p += len;
        break;
    case PQD_T_LIST: case PQD_T_SET: {
        uint8_t h = pqd__byte(c);
        len = h >> 4;
        if (len == 15) len = pqd__varint(c);
        if (len > (uint64_t)(c->end - c->p)) return 0; /* each element takes a byte or more */
        return pqd__elements(c, n, (size_t)len, h & 0x0F, -1, depth);
    }
    case PQD_T_MAP: {
        uint8_t kv;
        len = pqd__varint(c);
        if (len == 0) return !c->bad;
        kv = pqd__byte(c);
        if (len > (uint64_t)(c->end - c->p)) return 0;
        return pqd__elements(c, n, (size_t)len * 2, kv >> 4, kv & 0x0F, depth);
    }
    case PQD_T_STRUCT: return pqd__struct(c, n, depth);
    default: return 0;
    }
    return !c->bad;
}

static const pqd_node *pqd__field(const pqd_node *s, int id) {
    size_t k;
    if (!s || s->type != PQD_T_STRUCT) return NULL;
    for (k = 0; k < s->nkids; k++)
        if (s->kids[k].id == id) return &s->kids[k];
    return NULL;
}

static int64_t pqd__int(const pqd_node *s, int id, int64_t dflt) {
    const pqd_node *f = pqd__field(s, id);
    return f && f->type != PQD_T_STRUCT && f->type != PQD_T_BINARY && f->type != PQD_T_LIST
               ? f->i : dflt;
}

/* ==== the file model ================================================================= */
typedef struct pqd_bytes {
    const uint8_t *p;
    size_t len;
} pqd_bytes;

typedef struct pqd_column {
    char name[256];
    int type;                    /* 1 INT32, 2 INT64, 6 BYTE_ARRAY */
    int repetition;              /* 0 REQUIRED, 1 OPTIONAL */
    int converted;               /* -1 when absent */
    int logical;                 /* LogicalType union field id; 0 when absent */
    int ts_utc, ts_unit;         /* TIMESTAMP: isAdjustedToUTC; unit field id (3 NANOS) */
    int int_bits, int_signed;    /* INTEGER */
} pqd_column;

typedef struct pqd_stats {
    int present;
    int has_min_max;             /* min_value and max_value (fields 6 and 5) */
    int has_deprecated;          /* old min/max (fields 1 and 2) */
    pqd_bytes min, max;
    int64_t null_count;          /* -1 when absent */
} pqd_stats;

typedef struct pqd_chunk {
    int type, codec;
    int64_t num_values, data_offset, dict_offset; /* dict_offset -1: none */
    int64_t total_compressed, total_uncompressed;
    unsigned encodings;          /* bit per Encoding listed in the metadata */
    unsigned page_encodings;     /* bit per Encoding found in data pages */
    size_t data_pages, dict_entries; /* dict_entries 0: no dictionary page */
    char path[256];
    pqd_stats stats;
} pqd_chunk;

typedef struct pqd_group {
    int64_t num_rows, total_byte_size;
    pqd_chunk *chunks;
} pqd_group;

typedef struct pqd_file {
    uint8_t *data;
    size_t size;
    int version;
    int64_t num_rows;
    char created_by[128];
    pqd_column *cols;
    size_t ncols;
    pqd_group *groups;
    size_t ngroups;
    size_t column_orders;        /* entries of column_orders holding TYPE_DEFINED_ORDER */
    int64_t **ints;              /* [col][row] for integer columns */
    pqd_bytes **bytes;           /* [col][row] for BYTE_ARRAY columns */
    uint8_t **nulls;             /* [col][row]: 1 where the row holds null */
    char error[256];
} pqd_file;

static int pqd__fail(pqd_file *f, const char *fmt, ...) {
    va_list ap;
    if (f->error[0]) return -1;
    va_start(ap, fmt);
    vsnprintf(f->error, sizeof f->error, fmt, ap);
    va_end(ap);
    return -1;
}

static void pqd__copy_name(char *dst, size_t cap, const pqd_node *bin) {
    size_t n = bin && bin->type == PQD_T_BINARY ? bin->len : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, bin->bin, n);
    dst[n] = 0;
}

static int pqd__schema(pqd_file *f, const pqd_node *list) {
    const pqd_node *root;
    size_t k;
    if (!list || list->type != PQD_T_LIST || list->nkids < 1)
        return pqd__fail(f, "schema missing");
    root = &list->kids[0];
    if (pqd__field(root, 1)) return pqd__fail(f, "schema root has a type");
    if (pqd__int(root, 5, -1) != (int64_t)list->nkids - 1)
        return pqd__fail(f, "schema root num_children %lld for %zu leaves",
                         (long long)pqd__int(root, 5, -1), list->nkids - 1);
    f->ncols = list->nkids - 1;
    f->cols = (pqd_column *)calloc(f->ncols ? f->ncols : 1, sizeof *f->cols);
    if (!f->cols) return pqd__fail(f, "out of memory");
    for (k = 0; k < f->ncols; k++) {
        const pqd_node *e = &list->kids[k + 1], *lt = pqd__field(e, 10), *x;
        pqd_column *c = &f->cols[k];
        if (pqd__field(e, 5)) return pqd__fail(f, "nested schema not expected");
        pqd__copy_name(c->name, sizeof c->name, pqd__field(e, 4));
        c->type = (int)pqd__int(e, 1, -1);
        c->repetition = (int)pqd__int(e, 3, -1);
        if (c->repetition != 0 && c->repetition != 1)
            return pqd__fail(f, "column %s: repetition %d is neither REQUIRED nor OPTIONAL",
                             c->name, c->repetition);
        c->converted = (int)pqd__int(e, 6, -1);
        if (lt && lt->nkids == 1) {
            c->logical = lt->kids[0].id;
            x = &lt->kids[0];
            if (c->logical == 8) {
                const pqd_node *unit = pqd__field(x, 2);
                c->ts_utc = (int)pqd__int(x, 1, -1);
                c->ts_unit = unit && unit->nkids == 1 ? unit->kids[0].id : 0;
            } else if (c->logical == 10) {
                c->int_bits = (int)pqd__int(x, 1, 0);
                c->int_signed = (int)pqd__int(x, 2, -1);
            }
        } else if (lt) {
            return pqd__fail(f, "column %s: LogicalType union with %zu members", c->name,
                             lt->nkids);
        }
    }
    return 0;
}

static void pqd__stats(pqd_stats *s, const pqd_node *st) {
    const pqd_node *mn = pqd__field(st, 6), *mx = pqd__field(st, 5);
    memset(s, 0, sizeof *s);
    s->null_count = -1;
    if (!st) return;
    s->present = 1;
    s->null_count = pqd__int(st, 3, -1);
    s->has_deprecated = pqd__field(st, 1) || pqd__field(st, 2);
    if (mn && mx && mn->type == PQD_T_BINARY && mx->type == PQD_T_BINARY) {
        s->has_min_max = 1;
        s->min.p = mn->bin;
        s->min.len = mn->len;
        s->max.p = mx->bin;
        s->max.len = mx->len;
    }
}

static int pqd__chunk(pqd_file *f, pqd_chunk *ch, const pqd_node *cc, size_t col) {
    const pqd_node *md = pqd__field(cc, 3), *enc, *path;
    size_t k;
    if (!md) return pqd__fail(f, "column chunk without meta_data");
    ch->type = (int)pqd__int(md, 1, -1);
    ch->codec = (int)pqd__int(md, 4, -1);
    ch->num_values = pqd__int(md, 5, -1);
    ch->total_uncompressed = pqd__int(md, 6, -1);
    ch->total_compressed = pqd__int(md, 7, -1);
    ch->data_offset = pqd__int(md, 9, -1);
    ch->dict_offset = pqd__int(md, 11, -1);
    enc = pqd__field(md, 2);
    path = pqd__field(md, 3);
    for (k = 0; enc && k < enc->nkids; k++)
        if (enc->kids[k].i >= 0 && enc->kids[k].i < 32) ch->encodings |= 1u << enc->kids[k].i;
    if (!path || path->type != PQD_T_LIST || path->nkids != 1)
        return pqd__fail(f, "path_in_schema is not one name");
    pqd__copy_name(ch->path, sizeof ch->path, &path->kids[0]);
    if (strcmp(ch->path, f->cols[col].name) != 0 || ch->type != f->cols[col].type)
        return pqd__fail(f, "chunk %s does not match column %s", ch->path, f->cols[col].name);
    pqd__stats(&ch->stats, pqd__field(md, 12));
    return 0;
}

static int pqd__row_groups(pqd_file *f, const pqd_node *list) {
    size_t g, k;
    if (!list || list->type != PQD_T_LIST) return pqd__fail(f, "row_groups missing");
    f->ngroups = list->nkids;
    f->groups = (pqd_group *)calloc(f->ngroups ? f->ngroups : 1, sizeof *f->groups);
    if (!f->groups) return pqd__fail(f, "out of memory");
    for (g = 0; g < f->ngroups; g++) {
        const pqd_node *rg = &list->kids[g], *cols = pqd__field(rg, 1);
        pqd_group *grp = &f->groups[g];
        grp->num_rows = pqd__int(rg, 3, -1);
        grp->total_byte_size = pqd__int(rg, 2, -1);
        if (!cols || cols->nkids != f->ncols)
            return pqd__fail(f, "row group %zu: column count differs from the schema", g);
        grp->chunks = (pqd_chunk *)calloc(f->ncols ? f->ncols : 1, sizeof *grp->chunks);
        if (!grp->chunks) return pqd__fail(f, "out of memory");
        for (k = 0; k < f->ncols; k++)
            if (pqd__chunk(f, &grp->chunks[k], &cols->kids[k], k) != 0) return -1;
    }
    return 0;
}

/* ==== value decoding ================================================================= */
/* Reads `width` bits (<= 64), least significant first, from bit position *bit of p. */
static uint64_t pqd__bits(const uint8_t *p, size_t *bit, unsigned width) {
    uint64_t v = 0;
    unsigned k;
    for (k = 0; k < width; k++, (*bit)++)
        if (p[*bit >> 3] >> (*bit & 7) & 1) v |= (uint64_t)1 << k;
    return v;
}

static uint64_t pqd__le(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    size_t k;
    for (k = 0; k < n; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* Stores value `row` of column `col` (integers sign-extended from their width). */
static void pqd__put_int(pqd_file *f, size_t col, size_t row, uint64_t v) {
    if (f->cols[col].type == 1) v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
    f->ints[col][row] = (int64_t)v;
}

static int pqd__plain(pqd_file *f, pqd_cursor *c, size_t col, size_t row, size_t n,
                      pqd_bytes *out) {
    size_t k, width = f->cols[col].type == 1 ? 4 : 8;
    for (k = 0; k < n; k++) {
        if (f->cols[col].type == 6) {
            uint64_t len;
            if ((size_t)(c->end - c->p) < 4) return pqd__fail(f, "PLAIN: truncated length");
            len = pqd__le(c->p, 4);
            c->p += 4;
            if (len > (uint64_t)(c->end - c->p)) return pqd__fail(f, "PLAIN: truncated bytes");
            out[row + k].p = c->p;
            out[row + k].len = (size_t)len;
            c->p += len;
        } else {
            if ((size_t)(c->end - c->p) < width) return pqd__fail(f, "PLAIN: truncated value");
            if (out) { /* dictionary of integers: kept as 8-byte little-endian images */
                out[row + k].p = c->p;
                out[row + k].len = width;
            } else {
                pqd__put_int(f, col, row + k, pqd__le(c->p, width));
            }
            c->p += width;
        }
    }
    return 0;
}

/* RLE / bit-packing hybrid: n values of `width` bits into idx. */
static int pqd__hybrid(pqd_file *f, pqd_cursor *c, unsigned width, uint32_t *idx, size_t n) {
    size_t got = 0;
    while (got < n) {
        uint64_t h = pqd__varint(c);
        if (c->bad) return pqd__fail(f, "hybrid: truncated run header");
        if (h & 1) {
            uint64_t groups = h >> 1;
            size_t bytes, bit = 0, k;
            if (groups == 0 || groups > (uint64_t)(c->end - c->p))
                return pqd__fail(f, "hybrid: bad bit-packed run");
            bytes = (size_t)groups * width; /* 8 values of width bits per group */
            if (bytes > (size_t)(c->end - c->p)) return pqd__fail(f, "hybrid: truncated");
            for (k = 0; k < groups * 8; k++) {
                uint64_t v = pqd__bits(c->p, &bit, width);
                if (got < n) idx[got++] = (uint32_t)v;
                else if (v != 0) return pqd__fail(f, "hybrid: nonzero padding");
            }
            c->p += bytes;
        } else {
            uint64_t run = h >> 1, v;
            size_t vb = (width + 7) / 8;
            if (run == 0 || run > n - got) return pqd__fail(f, "hybrid: bad RLE run length");
            if (vb > (size_t)(c->end - c->p)) return pqd__fail(f, "hybrid: truncated");
            v = pqd__le(c->p, vb);
            c->p += vb;
            while (run--) idx[got++] = (uint32_t)v;
        }
    }
    return 0;
}

static int pqd__dict_page(pqd_file *f, pqd_cursor *c, size_t col, size_t n, size_t row,
                          const pqd_bytes *dict, size_t entries) {
    unsigned width;
    size_t k;
    uint32_t *tmp = (uint32_t *)malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp) return pqd__fail(f, "out of memory");
    width = pqd__byte(c);
    if (c->bad || width > 32) {
        free(tmp);
        return pqd__fail(f, "dictionary page: bad bit width");
    }
    if (pqd__hybrid(f, c, width, tmp, n) != 0) {
        free(tmp);
        return -1;
    }
    for (k = 0; k < n; k++) {
        if (tmp[k] >= entries) {
            uint32_t bad = tmp[k];
            free(tmp);
            return pqd__fail(f, "index %u outside a dictionary of %zu", bad, entries);
        }
        if (f->cols[col].type == 6) f->bytes[col][row + k] = dict[tmp[k]];
        else pqd__put_int(f, col, row + k, pqd__le(dict[tmp[k]].p, dict[tmp[k]].len));
    }
    free(tmp);
    return 0;
}

static int pqd__delta(pqd_file *f, pqd_cursor *c, size_t col, size_t row, size_t n) {
    uint64_t block = pqd__varint(c), minis = pqd__varint(c), total = pqd__varint(c);
    uint64_t prev = (uint64_t)pqd__unzigzag(pqd__varint(c)), per_mini;
    size_t got = 0, m, k;
    if (c->bad || block == 0 || block % 128 || minis == 0 || block % minis ||
        (block / minis) % 32)
        return pqd__fail(f, "delta: bad header");
    if (total != n) return pqd__fail(f, "delta: %llu values in a page of %zu",
                                     (unsigned long long)total, n);
    per_mini = block / minis;
    if (n == 0) return 0;
    pqd__put_int(f, col, row + got++, prev);
    while (got < n) {
        uint64_t min = (uint64_t)pqd__unzigzag(pqd__varint(c));
        uint8_t widths[256];
        if (minis > sizeof widths) return pqd__fail(f, "delta: too many miniblocks");
        for (m = 0; m < minis; m++) widths[m] = pqd__byte(c);
        if (c->bad) return pqd__fail(f, "delta: truncated block header");
        for (m = 0; m < minis && got < n; m++) {
            size_t bytes = (size_t)per_mini * widths[m] / 8, bit = 0;
            if (widths[m] > 64 || bytes > (size_t)(c->end - c->p))
                return pqd__fail(f, "delta: bad or truncated miniblock");
            for (k = 0; k < per_mini; k++) {
                uint64_t d = pqd__bits(c->p, &bit, widths[m]);
                if (got < n) {
                    prev += min + d;
                    pqd__put_int(f, col, row + got++, prev);
                }
            }
            c->p += bytes;
        }
    }
    return 0;
}

/* ==== pages ========================================================================== */
/* Decoding state of one column chunk. */
typedef struct pqd_pages {
    pqd_chunk *ch;
    size_t col, row0, got;       /* values decoded so far, from row row0 */
    pqd_bytes *dict;
    size_t entries;
} pqd_pages;

static int pqd__dictionary_page(pqd_file *f, pqd_pages *s, const pqd_node *dh,
                                pqd_cursor *body) {
    int64_t n = pqd__int(dh, 1, -1), enc = pqd__int(dh, 2, -1);
    if (s->dict || s->got) return pqd__fail(f, "chunk %s: dictionary page not first", s->ch->path);
    if (n <= 0 || n > body->end - body->p || (enc != 0 && enc != 2))
        return pqd__fail(f, "chunk %s: bad dictionary page header", s->ch->path);
    s->dict = (pqd_bytes *)calloc((size_t)n, sizeof *s->dict);
    if (!s->dict) return pqd__fail(f, "out of memory");
    s->entries = (size_t)n;
    s->ch->dict_entries = s->entries;
    return pqd__plain(f, body, s->col, 0, s->entries, s->dict);
}

/* The definition levels of the cnt rows of an optional column's page from row `row`:
 * each 0 (null: flagged in f->nulls) or 1; *vals the values the page holds. The levels'
 * length prefix must cover them exactly. */
static int pqd__levels(pqd_file *f, pqd_cursor *body, size_t col, size_t row, size_t cnt,
                       size_t *vals) {
    pqd_cursor lc;
    uint32_t *lv;
    size_t len, k;
    int rc = 0;
    if ((size_t)(body->end - body->p) < 4) return pqd__fail(f, "levels: truncated length");
    len = (size_t)pqd__le(body->p, 4);
    body->p += 4;
    if (len > (size_t)(body->end - body->p)) return pqd__fail(f, "levels: length past the page");
    lc.p = body->p;
    lc.end = body->p + len;
    lc.bad = 0;
    body->p += len;
    if ((lv = (uint32_t *)malloc((cnt ? cnt : 1) * sizeof *lv)) == NULL)
        return pqd__fail(f, "out of memory");
    if (pqd__hybrid(f, &lc, 1, lv, cnt) != 0) rc = -1;
    else if (lc.p != lc.end) rc = pqd__fail(f, "levels: %ld bytes after them", (long)(lc.end - lc.p));
    for (k = 0, *vals = 0; rc == 0 && k < cnt; k++) {
        if (lv[k] > 1) rc = pqd__fail(f, "levels: level %u of a flat column", lv[k]);
        f->nulls[col][row + k] = (uint8_t)(lv[k] == 0);
        *vals += lv[k];
    }
    free(lv);
    return rc;
}

/* Moves the vals values decoded at rows [row, row + vals) to the rows of the cnt that are
 * not null, last first (a value only ever moves down the column), and zeroes the nulls. */
static void pqd__scatter(pqd_file *f, size_t col, size_t row, size_t cnt, size_t vals) {
    size_t i = cnt, k = vals;
    while (i-- > 0) {
        if (f->nulls[col][row + i]) { /* no value left unmoved lies here: k <= i */
            if (f->bytes[col]) {
                f->bytes[col][row + i].p = NULL;
                f->bytes[col][row + i].len = 0;
            } else {
                f->ints[col][row + i] = 0;
            }
            continue;
        }
        k--;
        if (f->bytes[col]) f->bytes[col][row + i] = f->bytes[col][row + k];
        else f->ints[col][row + i] = f->ints[col][row + k];
    }
}

static int pqd__data_page(pqd_file *f, pqd_pages *s, const pqd_node *dh, pqd_cursor *body) {
    int64_t n = pqd__int(dh, 1, -1), enc = pqd__int(dh, 2, -1);
    size_t cnt, vals, row = s->row0 + s->got;
    int type = f->cols[s->col].type, rc;
    if (n <= 0 || (uint64_t)n > (uint64_t)s->ch->num_values - s->got)
        return pqd__fail(f, "chunk %s: bad data page value count", s->ch->path);
    if (pqd__int(dh, 3, -1) < 0 || pqd__int(dh, 4, -1) < 0)
        return pqd__fail(f, "chunk %s: level encodings missing", s->ch->path);
    cnt = vals = (size_t)n;
    s->ch->data_pages++;
    if (enc >= 0 && enc < 32) s->ch->page_encodings |= 1u << enc;
    if (f->cols[s->col].repetition == 1 && pqd__levels(f, body, s->col, row, cnt, &vals) != 0)
        return -1;
    if (enc == 0)
        rc = pqd__plain(f, body, s->col, row, vals, type == 6 ? f->bytes[s->col] : NULL);
    else if ((enc == 8 || enc == 2) && s->dict)
        rc = pqd__dict_page(f, body, s->col, vals, row, s->dict, s->entries);
    else if (enc == 5 && type != 6)
        rc = pqd__delta(f, body, s->col, row, vals);
    else
        rc = pqd__fail(f, "chunk %s: encoding %lld not expected", s->ch->path, (long long)enc);
    if (rc == 0 && vals != cnt) pqd__scatter(f, s->col, row, cnt, vals);
    s->got += cnt;
    return rc;
}

/* One page at *p (header and body); moves *p past it. */
static int pqd__page(pqd_file *f, pqd_pages *s, const uint8_t **p, const uint8_t *end) {
    pqd_cursor hc, body;
    pqd_node h;
    int64_t size, type, at = *p - f->data;
    int rc = 0;
    memset(&h, 0, sizeof h);
    hc.p = *p;
    hc.end = end;
    hc.bad = 0;
    if (!pqd__struct(&hc, &h, 0)) {
        pqd__node_free(&h);
        return pqd__fail(f, "chunk %s: bad page header at %lld", s->ch->path, (long long)at);
    }
    type = pqd__int(&h, 1, -1);
    size = pqd__int(&h, 3, -1);
    body.p = hc.p;
    body.end = hc.p + (size > 0 && size <= end - hc.p ? size : 0);
    body.bad = 0;
    if (size < 0 || size != pqd__int(&h, 2, -1) || size > end - hc.p)
        rc = pqd__fail(f, "chunk %s: bad page sizes", s->ch->path);
    else if (type == 0 && s->ch->data_pages == 0 && s->ch->data_offset != at)
        rc = pqd__fail(f, "chunk %s: data_page_offset is not the first data page", s->ch->path);
    else if (type == 2 && s->ch->dict_offset != at)
        rc = pqd__fail(f, "chunk %s: dictionary page not at its offset", s->ch->path);
    else if (type == 2 && pqd__field(&h, 7))
        rc = pqd__dictionary_page(f, s, pqd__field(&h, 7), &body);
    else if (type == 0 && pqd__field(&h, 5))
        rc = pqd__data_page(f, s, pqd__field(&h, 5), &body);
    else
        rc = pqd__fail(f, "chunk %s: unexpected page type %lld", s->ch->path, (long long)type);
    if (rc == 0 && body.p != body.end)
        rc = pqd__fail(f, "chunk %s: page body not consumed (%ld bytes left)", s->ch->path,
                       (long)(body.end - body.p));
    *p = body.end;
    pqd__node_free(&h);
    return rc;
}

/* Every page of a chunk: they must tile [first page, first page + total size) exactly
 * and hold num_values values. */
static int pqd__chunk_pages(pqd_file *f, pqd_chunk *ch, size_t col, size_t row0) {
    int64_t start = ch->dict_offset >= 0 ? ch->dict_offset : ch->data_offset;
    int64_t end = start + ch->total_compressed;
    pqd_pages s;
    const uint8_t *p;
    int rc = 0;
    if (start < 4 || ch->total_compressed <= 0 || end > (int64_t)f->size - 8)
        return pqd__fail(f, "chunk %s: outside the file", ch->path);
    if (ch->dict_offset >= 0 && ch->data_offset <= ch->dict_offset)
        return pqd__fail(f, "chunk %s: data before dictionary", ch->path);
    memset(&s, 0, sizeof s);
    s.ch = ch;
    s.col = col;
    s.row0 = row0;
    for (p = f->data + start; rc == 0 && p < f->data + end;)
        rc = pqd__page(f, &s, &p, f->data + end);
    free(s.dict);
    if (rc == 0 && s.got != (size_t)ch->num_values)
        rc = pqd__fail(f, "chunk %s: %zu values in pages, %lld in metadata", ch->path, s.got,
                       (long long)ch->num_values);
    return rc;
}

static int pqd__values(pqd_file *f) {
    size_t col, g, rows = (size_t)f->num_rows, row0;
    f->ints = (int64_t **)calloc(f->ncols ? f->ncols : 1, sizeof *f->ints);
    f->bytes = (pqd_bytes **)calloc(f->ncols ? f->ncols : 1, sizeof *f->bytes);
    f->nulls = (uint8_t **)calloc(f->ncols ? f->ncols : 1, sizeof *f->nulls);
    if (!f->ints || !f->bytes || !f->nulls) return pqd__fail(f, "out of memory");
    for (col = 0; col < f->ncols; col++) {
        if (f->cols[col].type == 6)
            f->bytes[col] = (pqd_bytes *)calloc(rows ? rows : 1, sizeof **f->bytes);
        else
            f->ints[col] = (int64_t *)calloc(rows ? rows : 1, sizeof **f->ints);
        f->nulls[col] = (uint8_t *)calloc(rows ? rows : 1, 1);
        if ((!f->bytes[col] && !f->ints[col]) || !f->nulls[col])
            return pqd__fail(f, "out of memory");
    }
    for (g = 0, row0 = 0; g < f->ngroups; g++) {
        if (f->groups[g].num_rows <= 0 || (uint64_t)f->groups[g].num_rows > rows - row0)
            return pqd__fail(f, "row group %zu: bad num_rows", g);
        for (col = 0; col < f->ncols; col++) {
            if (f->groups[g].chunks[col].num_values != f->groups[g].num_rows)
                return pqd__fail(f, "row group %zu: num_values differs from num_rows", g);
            if (pqd__chunk_pages(f, &f->groups[g].chunks[col], col, row0) != 0) return -1;
        }
        row0 += (size_t)f->groups[g].num_rows;
    }
    if (row0 != rows) return pqd__fail(f, "row groups hold %zu rows, footer says %zu", row0, rows);
    return 0;
}

/* ==== open and close ================================================================= */
static int pqd__read_file(pqd_file *f, const char *path) {
    FILE *in = fopen(path, "rb");
    long n;
    if (!in) return pqd__fail(f, "cannot open %s", path);
    if (fseek(in, 0, SEEK_END) != 0 || (n = ftell(in)) < 0 || fseek(in, 0, SEEK_SET) != 0) {
        fclose(in);
        return pqd__fail(f, "cannot size %s", path);
    }
    f->size = (size_t)n;
    f->data = (uint8_t *)malloc(f->size ? f->size : 1);
    if (!f->data || fread(f->data, 1, f->size, in) != f->size) {
        fclose(in);
        return pqd__fail(f, "cannot read %s", path);
    }
    fclose(in);
    return 0;
}

static int pqd__footer(pqd_file *f) {
    pqd_cursor c;
    pqd_node meta;
    const pqd_node *orders;
    size_t len, k;
    int rc = 0;
    if (f->size < 12 || memcmp(f->data, "PAR1", 4) || memcmp(f->data + f->size - 4, "PAR1", 4))
        return pqd__fail(f, "no PAR1 magic at both ends");
    len = (size_t)pqd__le(f->data + f->size - 8, 4);
    if (len > f->size - 12) return pqd__fail(f, "footer length %zu too large", len);
    memset(&meta, 0, sizeof meta);
    c.p = f->data + f->size - 8 - len;
    c.end = f->data + f->size - 8;
    c.bad = 0;
    if (!pqd__struct(&c, &meta, 0) || c.p != c.end) {
        pqd__node_free(&meta);
        return pqd__fail(f, "FileMetaData does not parse to its exact length");
    }
    f->version = (int)pqd__int(&meta, 1, -1);
    f->num_rows = pqd__int(&meta, 3, -1);
    pqd__copy_name(f->created_by, sizeof f->created_by, pqd__field(&meta, 6));
    orders = pqd__field(&meta, 7);
    for (k = 0; orders && k < orders->nkids; k++)
        f->column_orders += pqd__field(&orders->kids[k], 1) != NULL;
    if (f->num_rows < 0) rc = pqd__fail(f, "num_rows missing");
    if (rc == 0) rc = pqd__schema(f, pqd__field(&meta, 2));
    if (rc == 0) rc = pqd__row_groups(f, pqd__field(&meta, 4));
    pqd__node_free(&meta);
    return rc;
}

static void pqd_close(pqd_file *f) {
    size_t k;
    for (k = 0; f->groups && k < f->ngroups; k++) free(f->groups[k].chunks);
    for (k = 0; k < f->ncols; k++) {
        if (f->ints) free(f->ints[k]);
        if (f->bytes) free(f->bytes[k]);
        if (f->nulls) free(f->nulls[k]);
    }
    free(f->ints);
    free(f->bytes);
    free(f->nulls);
    free(f->groups);
    free(f->cols);
    free(f->data);
    memset(f, 0, sizeof *f);
}

/* Reads the whole file at path. Returns 0, or -1 with f->error set (call pqd_close
 * either way). */
static int pqd_open(pqd_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    if (pqd__read_file(f, path) != 0) return -1;
    if (pqd__footer(f) != 0) return -1;
    return pqd__values(f);
}

#endif
