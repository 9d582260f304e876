/* test_parquet.c - the Parquet writer of tools/parquet.c, read back with the separate
 * decoder of tests/parquet_decode.h: every value, every statistic, the schema, row group
 * boundaries, page cuts and the encoding of each chunk, for random tables from a seeded
 * generator, 0 rows, extreme integers, empty / long / non-UTF-8 strings, optional columns
 * (nulls at every rate, pages and chunks of nulls only), and the errors. */
#include "atf.h"
#include "../tools/parquet.c"

#include "harness.h"
#include "parquet_decode.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static char g_path[512];

/* splitmix64: a fixed seed gives the same tables on every run. */
static uint64_t rng_state = 0x5851F42D4C957F2Dull;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rng_below(uint64_t n) { return n ? rng_next() % n : 0; }

/* A file in $ATF_TEST_TMP, else $BUILD (set by make test), else $TMPDIR, else /tmp. */
static const char *scratch_path(const char *name) {
    static const char *const vars[] = {"ATF_TEST_TMP", "BUILD", "TMPDIR"};
    const char *dir = "/tmp";
    size_t k;
    for (k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *v = getenv(vars[k]);
        if (v && *v) {
            dir = v;
            break;
        }
    }
    snprintf(g_path, sizeof g_path, "%s/test_parquet_%ld_%s.parquet", dir, (long)getpid(),
             name);
    return g_path;
}

/* ==== the expected table ============================================================= */
enum { TABLE_COLS_MAX = 20 };

typedef struct table {
    pq_column cols[TABLE_COLS_MAX];
    size_t ncols, rows;
    int64_t *ints[TABLE_COLS_MAX];
    pqd_bytes *bytes[TABLE_COLS_MAX]; /* each value malloc'ed (p may be NULL for len 0) */
    uint8_t *nulls[TABLE_COLS_MAX];   /* optional columns: 1 where the row is null */
} table;

static int is_null(const table *t, size_t c, size_t r) { return t->nulls[c] && t->nulls[c][r]; }

static void table_init(table *t, const pq_column *cols, size_t ncols, size_t rows) {
    size_t c;
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->rows = rows;
    for (c = 0; c < ncols; c++) {
        t->cols[c] = cols[c];
        if (cols[c].type == PQ_BYTE_ARRAY)
            t->bytes[c] = (pqd_bytes *)calloc(rows ? rows : 1, sizeof *t->bytes[c]);
        else
            t->ints[c] = (int64_t *)calloc(rows ? rows : 1, sizeof *t->ints[c]);
        if (cols[c].optional) t->nulls[c] = (uint8_t *)calloc(rows ? rows : 1, 1);
    }
}

static void table_set_bytes(table *t, size_t c, size_t row, const void *p, size_t len) {
    uint8_t *copy = (uint8_t *)malloc(len ? len : 1);
    if (len) memcpy(copy, p, len);
    t->bytes[c][row].p = copy;
    t->bytes[c][row].len = len;
}

static void table_free(table *t) {
    size_t c, r;
    for (c = 0; c < t->ncols; c++) {
        if (t->bytes[c])
            for (r = 0; r < t->rows; r++) free((void *)t->bytes[c][r].p);
        free(t->bytes[c]);
        free(t->ints[c]);
        free(t->nulls[c]);
    }
}

/* Writes the table: even rows through pq_writer_put_row, odd rows column by column in
 * reverse order, so both ways of giving a row are covered. */
static atf_result table_write(const table *t, const char *path, const pq_config *cfg) {
    pq_writer *w;
    pq_error err;
    pq_value row[TABLE_COLS_MAX];
    size_t r, c;
    atf_result res = pq_writer_open(&w, path, t->cols, t->ncols, cfg, &err);
    if (res != ATF_OK) return res;
    for (r = 0; r < t->rows && res == ATF_OK; r++) {
        for (c = 0; c < t->ncols; c++) {
            memset(&row[c], 0, sizeof row[c]);
            if (is_null(t, c, r)) {
                row[c].is_null = 1;
            } else if (t->bytes[c]) {
                row[c].s = (const char *)t->bytes[c][r].p;
                row[c].len = t->bytes[c][r].len;
            } else {
                row[c].i = t->ints[c][r];
            }
        }
        if (r % 2 == 0) {
            res = pq_writer_put_row(w, row);
            continue;
        }
        for (c = t->ncols; c-- > 0 && res == ATF_OK;)
            res = row[c].is_null ? pq_writer_put_null(w, c)
                  : t->bytes[c]  ? pq_writer_put_bytes(w, c, row[c].s, row[c].len)
                                 : pq_writer_put_int(w, c, row[c].i);
        if (res == ATF_OK) res = pq_writer_end_row(w);
    }
    CHECK_EQ(t->rows, pq_writer_rows(w));
    if (res != ATF_OK) {
        pq_writer_close(w, NULL);
        return res;
    }
    return pq_writer_close(w, NULL);
}

/* ==== what the file must say ========================================================= */
static size_t cfg_or(size_t v, size_t dflt) { return v ? v : dflt; }

static int bytes_cmp(pqd_bytes a, pqd_bytes b) {
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.p, b.p, n) : 0;
    return r ? r : (a.len > b.len) - (a.len < b.len);
}

static const table *g_sort_table;
static size_t g_sort_col;
static int compare_rows(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (g_sort_table->bytes[g_sort_col])
        return bytes_cmp(g_sort_table->bytes[g_sort_col][a], g_sort_table->bytes[g_sort_col][b]);
    return (g_sort_table->ints[g_sort_col][a] > g_sort_table->ints[g_sort_col][b]) -
           (g_sort_table->ints[g_sort_col][a] < g_sort_table->ints[g_sort_col][b]);
}

/* Distinct values of column c in rows [from, to) (nulls aside) and the bytes of their
 * PLAIN images. */
static size_t distinct_values(const table *t, size_t c, size_t from, size_t to, size_t *bytes) {
    size_t *order = (size_t *)malloc((to - from + 1) * sizeof *order), k, n = 0, m = 0;
    size_t width = t->cols[c].type == PQ_INT32 ? 4 : 8;
    for (k = from; k < to; k++)
        if (!is_null(t, c, k)) order[m++] = k;
    g_sort_table = t;
    g_sort_col = c;
    qsort(order, m, sizeof *order, compare_rows);
    *bytes = 0;
    for (k = 0; k < m; k++) {
        if (k && compare_rows(&order[k - 1], &order[k]) == 0) continue;
        n++;
        *bytes += t->bytes[c] ? 4 + t->bytes[c][order[k]].len : width;
    }
    free(order);
    return n;
}

/* Whether the data page of rows [from, to) holds no value (nulls only). */
static int page_all_null(const table *t, size_t c, size_t from, size_t to) {
    size_t r;
    for (r = from; r < to; r++)
        if (!is_null(t, c, r)) return 0;
    return 1;
}

/* The encodings the data pages of the chunk of column c over rows [from, to) must use: its
 * own, and PLAIN for a page of nulls only (pages of page_values rows but for PLAIN). */
static unsigned expected_page_encodings(const table *t, size_t c, size_t from, size_t to,
                                        const pq_config *cfg, int *dictionary) {
    pq_encoding e = t->cols[c].encoding;
    size_t bytes, n, r, page_values = cfg_or(cfg->page_values, 65536);
    unsigned own, all = 0;
    *dictionary = 0;
    if (e == PQ_ENCODING_AUTO) e = t->cols[c].type == PQ_INT64 ? PQ_ENCODING_DELTA
                                                               : PQ_ENCODING_DICTIONARY;
    if (e == PQ_ENCODING_PLAIN) return 1u << 0;
    if (e == PQ_ENCODING_DELTA) {
        own = 1u << 5;
    } else {
        n = distinct_values(t, c, from, to, &bytes);
        if (n == 0 || n > cfg_or(cfg->dict_max_values, 65536) ||
            bytes > cfg_or(cfg->dict_max_bytes, 1 << 20))
            return 1u << 0;
        *dictionary = 1;
        own = 1u << 8;
    }
    for (r = from; r < to; r += page_values)
        all |= page_all_null(t, c, r, r + page_values < to ? r + page_values : to) ? 1u : own;
    return all;
}

static void check_int_stats(const pqd_chunk *ch, const table *t, size_t c, size_t from,
                            size_t to) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint64_t mask;
    size_t r, width = t->cols[c].type == PQ_INT32 ? 4 : 8, values = 0;
    for (r = from; r < to; r++) {
        if (is_null(t, c, r)) continue;
        values++;
        if (t->ints[c][r] < lo) lo = t->ints[c][r];
        if (t->ints[c][r] > hi) hi = t->ints[c][r];
    }
    if (!values) { /* nulls only: no bounds */
        CHECK(!ch->stats.has_min_max);
        return;
    }
    CHECK(ch->stats.has_min_max);
    if (!ch->stats.has_min_max) return;
    CHECK_EQ(width, ch->stats.min.len);
    CHECK_EQ(width, ch->stats.max.len);
    mask = width == 4 ? 0xFFFFFFFFu : UINT64_MAX; /* INT32 statistics are 4 bytes */
    CHECK_EQ((uint64_t)lo & mask, pqd__le(ch->stats.min.p, width));
    CHECK_EQ((uint64_t)hi & mask, pqd__le(ch->stats.max.p, width));
}

static void check_bytes_stats(const pqd_chunk *ch, const table *t, size_t c, size_t from,
                              size_t to, const pq_config *cfg) {
    pqd_bytes lo = {NULL, 0}, hi = {NULL, 0};
    size_t r, limit = cfg_or(cfg->stat_max_bytes, 1024), values = 0;
    for (r = from; r < to; r++) {
        if (is_null(t, c, r)) continue;
        if (!values++) lo = hi = t->bytes[c][r];
        if (bytes_cmp(t->bytes[c][r], lo) < 0) lo = t->bytes[c][r];
        if (bytes_cmp(t->bytes[c][r], hi) > 0) hi = t->bytes[c][r];
    }
    if (!values || lo.len > limit || hi.len > limit) {
        CHECK(!ch->stats.has_min_max);
        return;
    }
    CHECK(ch->stats.has_min_max);
    if (!ch->stats.has_min_max) return;
    CHECK(bytes_cmp(lo, ch->stats.min) == 0);
    CHECK(bytes_cmp(hi, ch->stats.max) == 0);
}

static void check_chunk(const pqd_chunk *ch, const table *t, size_t c, size_t from, size_t to,
                        const pq_config *cfg) {
    int dictionary;
    unsigned enc = expected_page_encodings(t, c, from, to, cfg, &dictionary);
    size_t page_values = cfg_or(cfg->page_values, 65536), nulls = 0, r;
    for (r = from; r < to; r++) nulls += (size_t)is_null(t, c, r);
    CHECK_EQ(0, ch->codec);
    CHECK_EQ(to - from, ch->num_values);
    CHECK_EQ(ch->total_compressed, ch->total_uncompressed);
    CHECK_EQ(enc, ch->page_encodings);
    CHECK_EQ(enc | (dictionary ? 1u : 0u), ch->encodings);
    CHECK_EQ(dictionary, ch->dict_offset >= 0);
    if (dictionary && t->cols[c].type != PQ_BYTE_ARRAY) {
        size_t bytes;
        CHECK_EQ(distinct_values(t, c, from, to, &bytes), ch->dict_entries);
    }
    if (enc != 1u) CHECK_EQ((to - from + page_values - 1) / page_values, ch->data_pages);
    CHECK(ch->stats.present);
    CHECK(!ch->stats.has_deprecated);
    CHECK_EQ(nulls, ch->stats.null_count);
    if (t->bytes[c]) check_bytes_stats(ch, t, c, from, to, cfg);
    else check_int_stats(ch, t, c, from, to);
}

static void check_schema(const pqd_file *f, const table *t) {
    size_t c;
    CHECK_EQ(t->ncols, f->ncols);
    CHECK_EQ(t->ncols, f->column_orders);
    for (c = 0; c < t->ncols && c < f->ncols; c++) {
        const pqd_column *col = &f->cols[c];
        pq_logical lg = t->cols[c].logical;
        CHECK(strcmp(t->cols[c].name, col->name) == 0);
        CHECK_EQ(t->cols[c].type, col->type);
        CHECK_EQ(t->cols[c].optional, col->repetition);
        if (lg == PQ_LOGICAL_NONE) {
            CHECK_EQ(0, col->logical);
            CHECK_EQ((uint64_t)-1, (uint64_t)(int64_t)col->converted);
        } else if (lg == PQ_LOGICAL_STRING) {
            CHECK_EQ(1, col->logical);
            CHECK_EQ(0, col->converted);
        } else if (lg == PQ_LOGICAL_INTEGER) {
            CHECK_EQ(10, col->logical);
            CHECK_EQ(t->cols[c].type == PQ_INT32 ? 32 : 64, col->int_bits);
            CHECK_EQ(1, col->int_signed);
            CHECK_EQ(t->cols[c].type == PQ_INT32 ? 17 : 18, col->converted);
        } else {
            CHECK_EQ(8, col->logical);
            CHECK_EQ(3, col->ts_unit);
            CHECK_EQ(lg == PQ_LOGICAL_TIMESTAMP_NS_UTC, col->ts_utc);
        }
    }
}

static void check_values(const pqd_file *f, const table *t) {
    size_t c, r, bad;
    for (c = 0; c < t->ncols; c++) {
        for (r = 0, bad = 0; r < t->rows && bad < 3; r++) {
            if (is_null(t, c, r) != f->nulls[c][r]) {
                printf("  column %s row %zu: null %d, expected %d\n", t->cols[c].name, r,
                       f->nulls[c][r], is_null(t, c, r));
                CHECK(0);
                bad++;
            } else if (is_null(t, c, r)) {
                continue;
            } else if (t->bytes[c]) {
                if (bytes_cmp(t->bytes[c][r], f->bytes[c][r]) != 0) {
                    printf("  column %s row %zu: bytes differ\n", t->cols[c].name, r);
                    CHECK(0);
                    bad++;
                }
            } else if (t->ints[c][r] != f->ints[c][r]) {
                printf("  column %s row %zu:\n", t->cols[c].name, r);
                CHECK_EQ(t->ints[c][r], f->ints[c][r]);
                bad++;
            }
        }
    }
}

/* Reads the file back and checks everything against the table. */
static void check_file(const char *path, const table *t, const pq_config *cfg) {
    pqd_file f;
    size_t g, c, from = 0, group_rows = cfg_or(cfg->row_group_rows, 1u << 20);
    if (pqd_open(&f, path) != 0) {
        printf("  decode: %s\n", f.error);
        CHECK(0);
        pqd_close(&f);
        return;
    }
    CHECK_EQ(t->rows, f.num_rows);
    CHECK_EQ((t->rows + group_rows - 1) / group_rows, f.ngroups);
    check_schema(&f, t);
    for (g = 0; g < f.ngroups && f.ncols == t->ncols; g++) {
        size_t to = from + (t->rows - from < group_rows ? t->rows - from : group_rows);
        CHECK_EQ(to - from, f.groups[g].num_rows);
        for (c = 0; c < t->ncols; c++) check_chunk(&f.groups[g].chunks[c], t, c, from, to, cfg);
        from = to;
    }
    if (f.ncols == t->ncols && (size_t)f.num_rows == t->rows) check_values(&f, t);
    pqd_close(&f);
}

static void round_trip(const table *t, const pq_config *cfg, const char *name) {
    const char *path = scratch_path(name);
    CHECK_RESULT(ATF_OK, table_write(t, path, cfg));
    check_file(path, t, cfg);
    remove(path);
}

/* ==== tables ========================================================================= */
/* Valid UTF-8 text of 0..max_len bytes from a small alphabet with 2-, 3- and 4-byte
 * characters. */
static size_t random_text(char *dst, size_t max_len) {
    static const char *const pieces[] = {"a", "Z", "_", " ", "0", "\xC3\xA9", "\xE2\x82\xAC",
                                         "\xF0\x9F\x98\x80", "::", "<int>"};
    size_t n = 0, want = (size_t)rng_below(max_len + 1);
    while (n < want) {
        const char *p = pieces[rng_below(sizeof pieces / sizeof pieces[0])];
        size_t k = strlen(p);
        if (n + k > max_len) break;
        memcpy(dst + n, p, k);
        n += k;
    }
    return n;
}

static const pq_column mixed_schema[] = {
    {"ts", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS, PQ_ENCODING_AUTO, 0},
    {"ts_utc", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 0},
    {"big", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_PLAIN, 0},
    {"fid", PQ_INT64, PQ_LOGICAL_NONE, PQ_ENCODING_DICTIONARY, 0},
    {"depth", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"runs", PQ_INT32, PQ_LOGICAL_NONE, PQ_ENCODING_DICTIONARY, 0},
    {"i32", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_PLAIN, 0},
    {"name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_AUTO, 0},
    {"text", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_PLAIN, 0},
    {"blob", PQ_BYTE_ARRAY, PQ_LOGICAL_NONE, PQ_ENCODING_DICTIONARY, 0},
};
enum { MIXED_COLS = sizeof mixed_schema / sizeof mixed_schema[0] };

static void fill_mixed_row(table *t, size_t r, int64_t *ts, int64_t *run_value) {
    char text[64];
    uint8_t blob[24];
    size_t k, n;
    *ts += (int64_t)rng_below(5000) - (rng_below(50) == 0 ? 3000 : 0); /* near-sorted */
    t->ints[0][r] = *ts;
    t->ints[1][r] = *ts + 1700000000000000000ll;
    t->ints[2][r] = (int64_t)rng_next();
    t->ints[3][r] = (int64_t)(0x400000u + 16 * rng_below(300));
    t->ints[4][r] = (int64_t)rng_below(40);
    if (rng_below(20) == 0) *run_value = (int64_t)rng_below(1500) - 700;
    t->ints[5][r] = rng_below(6) ? *run_value : (int64_t)rng_below(1500) - 700;
    t->ints[6][r] = (int64_t)(int32_t)(uint32_t)rng_next();
    snprintf(text, sizeof text, "fn_%u", (unsigned)rng_below(90));
    table_set_bytes(t, 7, r, text, r % 97 == 0 ? 0 : strlen(text));
    n = random_text(text, sizeof text - 1);
    table_set_bytes(t, 8, r, text, n);
    n = (size_t)rng_below(sizeof blob + 1);
    for (k = 0; k < n; k++) blob[k] = (uint8_t)rng_next(); /* any bytes: not text */
    table_set_bytes(t, 9, r, blob, n);
}

static void make_mixed(table *t, size_t rows) {
    size_t r;
    int64_t ts = 5000000000ll, run_value = 3;
    table_init(t, mixed_schema, MIXED_COLS, rows);
    for (r = 0; r < rows; r++) fill_mixed_row(t, r, &ts, &run_value);
}

/* ==== tests ========================================================================== */
/* Several row groups (the last one short) and several pages per chunk; the random blob
 * column has too many distinct values for its dictionary in all but the last group. */
static void test_random_table(void) {
    table t;
    pq_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 7000;
    cfg.page_values = 1000;
    cfg.dict_max_values = 2500;
    make_mixed(&t, 7000 * 3 + 1234);
    round_trip(&t, &cfg, "random");
    table_free(&t);
}

/* The defaults: one row group, AUTO encodings, default limits. */
static void test_defaults_one_group(void) {
    table t;
    pq_config cfg;
    memset(&cfg, 0, sizeof cfg);
    make_mixed(&t, 70001);
    round_trip(&t, &cfg, "defaults");
    table_free(&t);
}

/* Row group sizes around the boundary: exactly full, one over, one row per group. */
static void test_row_group_boundaries(void) {
    static const size_t cases[][2] = {{100, 100}, {101, 100}, {99, 100}, {5, 1}, {1, 1000}};
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        table t;
        pq_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.row_group_rows = cases[k][1];
        cfg.page_values = 7;
        make_mixed(&t, cases[k][0]);
        round_trip(&t, &cfg, "boundaries");
        table_free(&t);
    }
}

static void test_zero_rows(void) {
    table t;
    pq_config cfg;
    memset(&cfg, 0, sizeof cfg);
    make_mixed(&t, 0);
    round_trip(&t, &cfg, "empty");
    table_free(&t);
}

/* The int64 and int32 extremes, in every encoding: deltas that wrap around 2^64. */
static void test_extreme_integers(void) {
    static const int64_t i64[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1};
    static const int64_t i32[] = {INT32_MIN, INT32_MAX, 0, -1, 1};
    static const pq_column cols[] = {
        {"delta", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0},
        {"plain", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_PLAIN, 0},
        {"dict", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0},
        {"dict32", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0},
        {"plain32", PQ_INT32, PQ_LOGICAL_NONE, PQ_ENCODING_PLAIN, 0},
    };
    table t;
    pq_config cfg;
    size_t r, rows = 1000;
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 300;
    cfg.page_values = 130; /* pages ending inside delta blocks and miniblocks */
    table_init(&t, cols, 5, rows);
    for (r = 0; r < rows; r++) {
        int64_t v = rng_below(3) ? i64[rng_below(7)] : (int64_t)rng_next();
        t.ints[0][r] = v;
        t.ints[1][r] = v;
        t.ints[2][r] = i64[rng_below(7)];
        t.ints[3][r] = i32[rng_below(5)];
        t.ints[4][r] = rng_below(2) ? i32[rng_below(5)] : (int64_t)(int32_t)(uint32_t)rng_next();
    }
    round_trip(&t, &cfg, "extremes");
    /* constant columns: a zero-width delta and a one-entry dictionary */
    for (r = 0; r < rows; r++) t.ints[0][r] = t.ints[2][r] = t.ints[3][r] = 42;
    round_trip(&t, &cfg, "constant");
    table_free(&t);
}

/* Empty strings, strings with NUL bytes, and strings longer than a page and than the
 * statistics limit (whose chunk then has no min/max). */
static void test_long_and_empty_strings(void) {
    static const pq_column cols[] = {
        {"s_dict", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0},
        {"s_plain", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_PLAIN, 0},
        {"raw", PQ_BYTE_ARRAY, PQ_LOGICAL_NONE, PQ_ENCODING_PLAIN, 0},
    };
    table t;
    pq_config cfg;
    size_t r, rows = 300, k;
    char *big = (char *)malloc(200000);
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 100;
    cfg.page_bytes = 50000;
    cfg.stat_max_bytes = 5000;
    for (k = 0; k < 200000; k++) big[k] = (char)('a' + k % 26);
    table_init(&t, cols, 3, rows);
    for (r = 0; r < rows; r++) {
        size_t len = r < 100 ? (size_t)rng_below(4) : (size_t)rng_below(200000);
        table_set_bytes(&t, 0, r, big + rng_below(3), r % 3 ? 0 : (size_t)rng_below(3000));
        table_set_bytes(&t, 1, r, big, r % 5 ? len : 0);
        table_set_bytes(&t, 2, r, "a\0b\0", r % 2 ? 4 : 0);
    }
    round_trip(&t, &cfg, "strings");
    table_free(&t);
    free(big);
}

/* STRING columns replace each byte that starts no valid UTF-8 sequence with U+FFFD;
 * raw BYTE_ARRAY columns keep the bytes as given. */
static void test_bad_utf8(void) {
    static const struct { const char *in, *out; } cases[] = {
        {"ok", "ok"},
        {"a\xFF" "b", "a\xEF\xBF\xBD" "b"},
        {"\xC3", "\xEF\xBF\xBD"},                                 /* truncated */
        {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                 /* overlong */
        {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* surrogate */
        {"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"\xF0\x9F\x98\x80\xE2\x82\xAC", "\xF0\x9F\x98\x80\xE2\x82\xAC"},
    };
    static const pq_column cols[] = {
        {"text", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_PLAIN, 0},
        {"raw", PQ_BYTE_ARRAY, PQ_LOGICAL_NONE, PQ_ENCODING_PLAIN, 0},
    };
    enum { CASES = sizeof cases / sizeof cases[0] };
    const char *path = scratch_path("utf8");
    pq_writer *w;
    pqd_file f;
    size_t k;
    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, cols, 2, NULL, NULL));
    for (k = 0; k < CASES; k++) {
        CHECK_RESULT(ATF_OK, pq_writer_put_bytes(w, 0, cases[k].in, strlen(cases[k].in)));
        CHECK_RESULT(ATF_OK, pq_writer_put_bytes(w, 1, cases[k].in, strlen(cases[k].in)));
        CHECK_RESULT(ATF_OK, pq_writer_end_row(w));
    }
    CHECK_RESULT(ATF_OK, pq_writer_close(w, NULL));
    if (pqd_open(&f, path) != 0) {
        printf("  decode: %s\n", f.error);
        CHECK(0);
    } else {
        for (k = 0; k < CASES && (size_t)f.num_rows == CASES; k++) {
            CHECK_EQ(strlen(cases[k].out), f.bytes[0][k].len);
            CHECK_EQ(strlen(cases[k].in), f.bytes[1][k].len);
            if (f.bytes[0][k].len == strlen(cases[k].out))
                CHECK_MEM(cases[k].out, f.bytes[0][k].p, f.bytes[0][k].len);
            if (f.bytes[1][k].len == strlen(cases[k].in))
                CHECK_MEM(cases[k].in, f.bytes[1][k].p, f.bytes[1][k].len);
        }
        CHECK_EQ(CASES, f.num_rows);
    }
    pqd_close(&f);
    remove(path);
}

/* A dictionary holding exactly its limit of entries or bytes is kept; one more entry or
 * byte and the chunk falls back to PLAIN. */
static void test_dictionary_limits(void) {
    static const pq_column cols[] = {
        {"k", PQ_INT32, PQ_LOGICAL_NONE, PQ_ENCODING_DICTIONARY, 0},
        {"s", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0},
    };
    enum { DISTINCT = 37 };
    table t;
    size_t r, slack, bytes;
    table_init(&t, cols, 2, 1000);
    for (r = 0; r < 1000; r++) {
        char text[16];
        snprintf(text, sizeof text, "v%u", (unsigned)(rng_below(DISTINCT)));
        t.ints[0][r] = (int64_t)rng_below(DISTINCT) * 1000;
        table_set_bytes(&t, 1, r, text, strlen(text));
    }
    distinct_values(&t, 1, 0, 1000, &bytes);
    for (slack = 0; slack < 2; slack++) {
        pq_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.dict_max_values = DISTINCT - slack;
        round_trip(&t, &cfg, "dict_values");
        memset(&cfg, 0, sizeof cfg);
        cfg.dict_max_bytes = bytes - slack; /* the 148 bytes of the integers stay under */
        round_trip(&t, &cfg, "dict_bytes");
    }
    table_free(&t);
}

/* Lists of 14, 15 and more elements (schema, row groups, chunks): Thrift's short and
 * long list headers. */
static void wide_table(size_t ncols, size_t groups) {
    pq_column cols[TABLE_COLS_MAX] = {{NULL, PQ_INT64, PQ_LOGICAL_NONE, PQ_ENCODING_AUTO, 0}};
    char names[TABLE_COLS_MAX][32]; /* "col_" and any size_t */
    table t;
    pq_config cfg;
    size_t c, r, rows = groups * 10;
    for (c = 0; c < ncols; c++) {
        snprintf(names[c], sizeof names[c], "col_%zu", c);
        cols[c].name = names[c];
        cols[c].type = PQ_INT64;
        cols[c].logical = c % 2 ? PQ_LOGICAL_INTEGER : PQ_LOGICAL_NONE;
        cols[c].encoding = (pq_encoding)(c % 4);
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 10;
    table_init(&t, cols, ncols, rows);
    for (c = 0; c < ncols; c++)
        for (r = 0; r < rows; r++) t.ints[c][r] = (int64_t)(r * c) - (int64_t)rng_below(5);
    round_trip(&t, &cfg, "wide");
    table_free(&t);
}

static void test_wide_table(void) {
    wide_table(14, 15);
    wide_table(15, 14);
    wide_table(TABLE_COLS_MAX, 16);
}

/* Optional columns of every type and encoding: nulls at several rates, in runs (RLE
 * levels) and scattered (bit-packed ones), whole pages and a whole row group of nulls, a
 * column of nulls only; the required columns beside them are unchanged. */
static void test_optional_columns(void) {
    static const pq_column cols[] = {
        {"wall", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 1},
        {"n_plain", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_PLAIN, 1},
        {"n_dict", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 1},
        {"i32", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 1},
        {"s_dict", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 1},
        {"s_plain", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_PLAIN, 1},
        {"never", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 1},
        {"required", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    };
    enum { COLS = sizeof cols / sizeof cols[0] };
    table t;
    pq_config cfg;
    size_t r, c, rows = 5000;
    int64_t ts = 1700000000000000000ll;
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 1200;
    cfg.page_values = 100;
    cfg.page_bytes = 300; /* PLAIN pages cut by bytes, with and without nulls */
    table_init(&t, cols, COLS, rows);
    for (r = 0; r < rows; r++) {
        char text[32];
        size_t n;
        ts += (int64_t)rng_below(1000);
        t.ints[0][r] = ts;
        t.ints[1][r] = (int64_t)rng_next();
        t.ints[2][r] = (int64_t)rng_below(7) - 3;
        t.ints[3][r] = (int64_t)(int32_t)(uint32_t)rng_next();
        n = (size_t)snprintf(text, sizeof text, "f%u", (unsigned)rng_below(20));
        table_set_bytes(&t, 4, r, text, n);
        n = random_text(text, sizeof text - 1);
        table_set_bytes(&t, 5, r, text, n);
        t.nulls[6][r] = 1;
        t.ints[7][r] = (int64_t)r;
        for (c = 0; c < 6; c++) {
            uint64_t rate = 2 + c; /* one row in 2 .. 7 */
            t.nulls[c][r] = (uint8_t)(rng_below(rate) == 0);
        }
        if (r >= 1300 && r < 1500) t.nulls[0][r] = t.nulls[2][r] = t.nulls[4][r] = 1; /* pages */
        if (r >= 2400 && r < 3600) t.nulls[3][r] = 1;                                 /* a group */
        if (r >= 4000 && r < 4040) t.nulls[1][r] = t.nulls[5][r] = 1;                 /* a run */
    }
    round_trip(&t, &cfg, "optional");
    /* no null at all, and nulls only, in optional columns */
    for (r = 0; r < rows; r++)
        for (c = 0; c < 6; c++) t.nulls[c][r] = (uint8_t)(c % 2);
    round_trip(&t, &cfg, "optional_extremes");
    table_free(&t);
}

static const pq_column two_cols[] = {
    {"n", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"s", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_AUTO, 0},
};

static void test_bad_schemas(void) {
    pq_column bad[2];
    pq_writer *w = (pq_writer *)&w;
    pq_error err;
    const char *path = scratch_path("schema");
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, two_cols, 0, NULL, &err));
    CHECK(w == NULL);
    CHECK_RESULT(ATF_E_ARG, err.result);
    memcpy(bad, two_cols, sizeof bad);
    bad[1].name = "n";
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, bad, 2, NULL, NULL));
    memcpy(bad, two_cols, sizeof bad);
    bad[0].encoding = PQ_ENCODING_DELTA; /* INT32 has no delta here */
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, bad, 2, NULL, NULL));
    memcpy(bad, two_cols, sizeof bad);
    bad[0].logical = PQ_LOGICAL_STRING;
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, bad, 2, NULL, NULL));
    memcpy(bad, two_cols, sizeof bad);
    bad[1].logical = PQ_LOGICAL_TIMESTAMP_NS;
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, bad, 2, NULL, NULL));
    memcpy(bad, two_cols, sizeof bad);
    bad[0].name = "";
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, bad, 2, NULL, NULL));
    memcpy(bad, two_cols, sizeof bad);
    bad[1].optional = 2;
    CHECK_RESULT(ATF_E_ARG, pq_writer_open(&w, path, bad, 2, NULL, NULL));
    remove(path);
}

/* Misuse is reported with a specific code, and the first error sticks. */
static void test_misuse(void) {
    const char *path = scratch_path("misuse");
    pq_writer *w;
    pq_error err;
    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_E_ARG, pq_writer_put_bytes(w, 0, "x", 1));
    CHECK_RESULT(ATF_E_ARG, pq_writer_put_int(w, 1, 5)); /* the first error stays */
    CHECK_RESULT(ATF_E_ARG, pq_writer_close(w, &err));
    CHECK_RESULT(ATF_E_ARG, err.result);

    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_OK, pq_writer_put_int(w, 0, 5));
    CHECK_RESULT(ATF_E_STATE, pq_writer_put_int(w, 0, 6));
    pq_writer_close(w, NULL);

    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_OK, pq_writer_put_int(w, 0, 5));
    CHECK_RESULT(ATF_E_STATE, pq_writer_end_row(w));
    pq_writer_close(w, NULL);

    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_E_RANGE, pq_writer_put_int(w, 0, (int64_t)INT32_MAX + 1));
    CHECK_RESULT(ATF_E_RANGE, pq_writer_error(w)->result);
    pq_writer_close(w, NULL);

    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_E_ARG, pq_writer_put_int(w, 2, 5));
    pq_writer_close(w, NULL);

    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_OK, pq_writer_put_int(w, 0, 5));
    CHECK_RESULT(ATF_E_STATE, pq_writer_close(w, NULL)); /* a row left half done */

    CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, two_cols, 2, NULL, NULL));
    CHECK_RESULT(ATF_E_ARG, pq_writer_put_null(w, 0)); /* a required column */
    pq_writer_close(w, NULL);

    {
        pq_column opt[2];
        pq_value row[2];
        memcpy(opt, two_cols, sizeof opt);
        opt[1].optional = 1;
        CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, opt, 2, NULL, NULL));
        CHECK_RESULT(ATF_OK, pq_writer_put_null(w, 1));
        CHECK_RESULT(ATF_E_STATE, pq_writer_put_bytes(w, 1, "x", 1)); /* a second value */
        pq_writer_close(w, NULL);
        CHECK_RESULT(ATF_OK, pq_writer_open(&w, path, opt, 2, NULL, NULL));
        memset(row, 0, sizeof row);
        row[0].is_null = 1; /* a null in the required column of a row */
        CHECK_RESULT(ATF_E_ARG, pq_writer_put_row(w, row));
        pq_writer_close(w, NULL);
    }
    remove(path);
}

/* I/O errors carry errno: a missing directory, and a full device. */
static void test_io_errors(void) {
    pq_writer *w;
    pq_error err;
    FILE *full;
    size_t r;
    atf_result res = ATF_OK;
    pq_config cfg;
    CHECK_RESULT(ATF_E_NOT_FOUND, pq_writer_open(&w, "/nonexistent-dir/x.parquet", two_cols, 2,
                                                 NULL, &err));
    CHECK_EQ(ENOENT, err.errno_value);
    full = fopen("/dev/full", "wb");
    if (!full) return; /* not Linux: the device does not exist */
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 1000;
    CHECK_RESULT(ATF_OK, pq_writer_open_file(&w, full, two_cols, 2, &cfg, NULL));
    for (r = 0; r < 100000 && res == ATF_OK; r++) {
        pq_writer_put_int(w, 0, (int64_t)r);
        pq_writer_put_bytes(w, 1, "some text", 9);
        res = pq_writer_end_row(w);
    }
    CHECK_RESULT(ATF_E_IO, pq_writer_close(w, &err));
    CHECK_EQ(ENOSPC, err.errno_value);
    fclose(full);
}

/* A FILE* the caller owns stays open and holds the whole file. */
static void test_open_file_stream(void) {
    const char *path = scratch_path("stream");
    FILE *out = fopen(path, "wb");
    pq_writer *w;
    table t;
    pq_config cfg;
    size_t r;
    memset(&cfg, 0, sizeof cfg);
    table_init(&t, two_cols, 2, 500);
    for (r = 0; r < 500; r++) {
        t.ints[0][r] = (int64_t)r * 3;
        table_set_bytes(&t, 1, r, "stream", r % 6);
    }
    CHECK_RESULT(ATF_OK, pq_writer_open_file(&w, out, two_cols, 2, NULL, NULL));
    for (r = 0; r < 500; r++) {
        pq_writer_put_int(w, 0, t.ints[0][r]);
        pq_writer_put_bytes(w, 1, t.bytes[1][r].p, t.bytes[1][r].len);
        pq_writer_end_row(w);
    }
    CHECK_RESULT(ATF_OK, pq_writer_close(w, NULL));
    CHECK_EQ(0, fputs("", out) < 0); /* still open: the caller closes it */
    CHECK_EQ(0, fclose(out));
    check_file(path, &t, &cfg);
    table_free(&t);
    remove(path);
}

static const test_case tests[] = {
    {"random_table", test_random_table},
    {"defaults_one_group", test_defaults_one_group},
    {"row_group_boundaries", test_row_group_boundaries},
    {"zero_rows", test_zero_rows},
    {"extreme_integers", test_extreme_integers},
    {"long_and_empty_strings", test_long_and_empty_strings},
    {"bad_utf8", test_bad_utf8},
    {"optional_columns", test_optional_columns},
    {"dictionary_limits", test_dictionary_limits},
    {"wide_table", test_wide_table},
    {"bad_schemas", test_bad_schemas},
    {"misuse", test_misuse},
    {"io_errors", test_io_errors},
    {"open_file_stream", test_open_file_stream},
};

HARNESS_MAIN("parquet", tests)
