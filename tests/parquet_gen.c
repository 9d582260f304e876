/* parquet_gen.c - writes a deterministic table of call slices with tools/parquet.c and
 * prints, as JSON on stdout, what a reader must find in it: the row count, count and
 * sum(self_ns) per function name, the start_ns range of each row group, and one
 * start_ns window with the rows inside it. tests/parquet_duckdb.sh checks these against
 * DuckDB. Two more tables hold the edge cases: --edges (int64 and int32 extremes in
 * every encoding, empty, long and non-UTF-8 strings, raw bytes, optional columns with
 * nulls: scattered, and a whole page of them) and --empty (0 rows).
 *
 * usage: parquet_gen OUT.parquet [ROWS [ROW_GROUP_ROWS]]   (defaults 300000, 65536)
 *        parquet_gen --edges OUT.parquet
 *        parquet_gen --empty OUT.parquet */
#include "atf.h"
#include "tools/parquet.h"

#include <stdlib.h>
#include <string.h>

enum { GEN_NAMES = 40, GEN_THREADS = 5, GEN_DEPTH_MAX = 12 };

typedef enum gen_col {
    COL_PID, COL_TID, COL_THREAD_SLOT, COL_THREAD_NAME, COL_FUNCTION_ID, COL_NAME, COL_DEPTH,
    COL_START_NS, COL_END_NS, COL_DUR_NS, COL_SELF_NS, COL_ENDED_BY, COL_HAS_DETAIL, COL_COUNT
} gen_col;

static const pq_column gen_schema[COL_COUNT] = {
    {"pid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"tid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0},
    {"thread_slot", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"thread_name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_AUTO, 0},
    {"function_id", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0},
    {"name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_AUTO, 0},
    {"depth", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"start_ns", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS, PQ_ENCODING_AUTO, 0},
    {"end_ns", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS, PQ_ENCODING_AUTO, 0},
    {"dur_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"self_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
    {"ended_by", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_AUTO, 0},
    {"has_detail", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0},
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rng_below(uint64_t n) { return rng_next() % n; }

typedef struct name_total {
    char name[48];
    uint64_t count, self_ns;
} name_total;

typedef struct group_range {
    int64_t lo, hi;
} group_range;

static name_total totals[GEN_NAMES];

/* Names with spaces, quotes and non-ASCII text, as demangled symbols have. */
static void make_names(void) {
    size_t i;
    for (i = 0; i < GEN_NAMES; i++) {
        if (i % 7 == 3) snprintf(totals[i].name, sizeof totals[i].name, "ns::f\xC3\xA9%zu()", i);
        else if (i % 7 == 5) snprintf(totals[i].name, sizeof totals[i].name, "op\"%zu\" <int>", i);
        else snprintf(totals[i].name, sizeof totals[i].name, "func_%zu", i);
    }
}

static int put_row(pq_writer *w, size_t i, int64_t start, group_range *g) {
    static const char *const ended[] = {"return", "return", "return", "gap", "cut"};
    char thread_name[32];
    size_t slot = (size_t)rng_below(GEN_THREADS), fn = (size_t)rng_below(GEN_NAMES);
    int64_t dur = (int64_t)(rng_below(1000) * rng_below(1000)) + 1;
    int64_t self = dur - (int64_t)rng_below((uint64_t)dur);
    pq_value row[COL_COUNT];
    memset(row, 0, sizeof row);
    snprintf(thread_name, sizeof thread_name, "worker-%zu", slot);
    row[COL_PID].i = 4242;
    row[COL_TID].i = 100000 + (int64_t)slot * 17;
    row[COL_THREAD_SLOT].i = (int64_t)slot;
    row[COL_THREAD_NAME].s = thread_name;
    row[COL_THREAD_NAME].len = strlen(thread_name);
    row[COL_FUNCTION_ID].i = (int64_t)(0x7F0000001000ull + fn * 0x40);
    row[COL_NAME].s = totals[fn].name;
    row[COL_NAME].len = strlen(totals[fn].name);
    row[COL_DEPTH].i = (int64_t)rng_below(GEN_DEPTH_MAX);
    row[COL_START_NS].i = start;
    row[COL_END_NS].i = start + dur;
    row[COL_DUR_NS].i = dur;
    row[COL_SELF_NS].i = self;
    row[COL_ENDED_BY].s = ended[i % 5];
    row[COL_ENDED_BY].len = strlen(ended[i % 5]);
    row[COL_HAS_DETAIL].i = rng_below(10) == 0;
    totals[fn].count++;
    totals[fn].self_ns += (uint64_t)self;
    if (start < g->lo) g->lo = start;
    if (start > g->hi) g->hi = start;
    return pq_writer_put_row(w, row) == ATF_OK;
}

static void print_json(size_t rows, const group_range *groups, size_t ngroups, int64_t lo,
                       int64_t hi, size_t in_window) {
    size_t i;
    printf("{\"kind\":\"slices\",\"rows\":%zu,\"row_groups\":[", rows);
    for (i = 0; i < ngroups; i++)
        printf("%s{\"min\":\"%lld\",\"max\":\"%lld\"}", i ? "," : "", (long long)groups[i].lo,
               (long long)groups[i].hi);
    printf("],\"window\":{\"lo\":\"%lld\",\"hi\":\"%lld\",\"rows\":%zu},\"names\":[",
           (long long)lo, (long long)hi, in_window);
    for (i = 0; i < GEN_NAMES; i++) {
        const char *p;
        printf("%s{\"name\":\"", i ? "," : "");
        for (p = totals[i].name; *p; p++) printf(*p == '"' ? "\\\"" : "%c", *p);
        printf("\",\"count\":%llu,\"self_ns\":\"%llu\"}", (unsigned long long)totals[i].count,
               (unsigned long long)totals[i].self_ns);
    }
    printf("]}\n");
}

static int write_slices(const char *path, size_t rows, size_t group_rows) {
    size_t ngroups, i, in_window = 0;
    pq_config cfg;
    pq_error err;
    pq_writer *w;
    group_range *groups;
    int64_t *starts;
    int64_t start = 1000000000000000ll, lo, hi;
    ngroups = (rows + group_rows - 1) / group_rows;
    groups = (group_range *)malloc(ngroups * sizeof *groups);
    starts = (int64_t *)malloc(rows * sizeof *starts);
    if (!groups || !starts) return 1;
    for (i = 0; i < ngroups; i++) {
        groups[i].lo = INT64_MAX;
        groups[i].hi = INT64_MIN;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = group_rows;
    cfg.page_values = 20000;
    if (pq_writer_open(&w, path, gen_schema, COL_COUNT, &cfg, &err) != ATF_OK) {
        fprintf(stderr, "parquet_gen: %s: %s\n", err.what, atf_result_str(err.result));
        return 1;
    }
    /* the window: a tenth of the rows, starting inside the second row group or later */
    lo = hi = 0;
    for (i = 0; i < rows; i++) {
        start += (int64_t)rng_below(2000);
        if (i == rows * 4 / 10) lo = start;
        if (i == rows / 2) hi = start;
        starts[i] = start;
        if (!put_row(w, i, start, &groups[i / group_rows])) break;
    }
    if (pq_writer_close(w, &err) != ATF_OK) {
        fprintf(stderr, "parquet_gen: %s: %s\n", err.what, atf_result_str(err.result));
        return 1;
    }
    /* rows inside [lo, hi), counted on the starts kept aside */
    for (i = 0; i < rows; i++) in_window += starts[i] >= lo && starts[i] < hi;
    print_json(rows, groups, ngroups, lo, hi, in_window);
    free(groups);
    free(starts);
    return 0;
}

/* ==== edge cases ===================================================================== */
typedef struct edge_totals {
    uint64_t xor64, xor_dict, text_bytes, raw_bytes;
    int64_t min64, max64, sum32;
    size_t empty_texts, bad_texts;
    /* the optional columns: values (not null), and their xor, bytes and sum */
    size_t wall_values, text_values, small_values;
    uint64_t xor_wall, maybe_text_bytes;
    int64_t sum_maybe_small;
} edge_totals;

/* Inputs with their UTF-8 cleaned length: each bad byte becomes U+FFFD (3 bytes). */
static const struct { const char *in; size_t cleaned; } edge_texts[] = {
    {"", 0}, {"plain", 5}, {"a\xFF" "b", 5}, {"\xC0\xAF", 6}, {"\xED\xA0\x80", 9},
    {"caf\xC3\xA9", 5}, {"\xF0\x9F\x98\x80", 4},
};
enum { EDGE_TEXTS = sizeof edge_texts / sizeof edge_texts[0] };

static const pq_column edge_schema[] = {
    {"big", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0},
    {"big_plain", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_PLAIN, 0},
    {"big_dict", PQ_INT64, PQ_LOGICAL_NONE, PQ_ENCODING_DICTIONARY, 0},
    {"small", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0},
    {"text", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_AUTO, 0},
    {"long_text", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_PLAIN, 0},
    {"raw", PQ_BYTE_ARRAY, PQ_LOGICAL_NONE, PQ_ENCODING_PLAIN, 0},
    {"maybe_wall", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 1},
    {"maybe_text", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 1},
    {"maybe_small", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_PLAIN, 1},
};
enum { EDGE_COLS = sizeof edge_schema / sizeof edge_schema[0], EDGE_ROWS = 5000 };

static int put_edge_row(pq_writer *w, size_t i, const char *big_text, edge_totals *t) {
    static const int64_t i64[] = {INT64_MIN, INT64_MAX, 0, -1, 1};
    static const int64_t i32[] = {INT32_MIN, INT32_MAX, 0, -7};
    int64_t v = rng_below(2) ? i64[rng_below(5)] : (int64_t)rng_next();
    size_t k = (size_t)rng_below(EDGE_TEXTS);
    size_t long_len = (size_t)rng_below(i % 50 ? 40 : 100000); /* some past a page */
    uint8_t raw[16];
    size_t raw_len = (size_t)rng_below(sizeof raw + 1), b;
    pq_value row[EDGE_COLS];
    memset(row, 0, sizeof row);
    for (b = 0; b < raw_len; b++) raw[b] = (uint8_t)rng_next();
    row[0].i = row[1].i = v;
    row[2].i = i64[(i * 7 + (size_t)rng_below(2)) % 5];
    t->xor_dict ^= (uint64_t)row[2].i;
    row[3].i = i32[rng_below(4)];
    row[4].s = edge_texts[k].in;
    row[4].len = strlen(edge_texts[k].in);
    row[5].s = big_text;
    row[5].len = long_len;
    row[6].s = (const char *)raw;
    row[6].len = raw_len;
    t->xor64 ^= (uint64_t)v;
    if (v < t->min64) t->min64 = v;
    if (v > t->max64) t->max64 = v;
    t->sum32 += row[3].i;
    t->text_bytes += edge_texts[k].cleaned + long_len;
    t->raw_bytes += raw_len;
    t->empty_texts += row[4].len == 0;
    t->bad_texts += edge_texts[k].cleaned != row[4].len;
    /* nulls every third row, and in rows 1500 .. 2199: the first page of row group 1 */
    row[7].i = 1700000000000000000ll + (int64_t)i * 1000 * (int64_t)(1 + rng_below(9));
    row[7].is_null = i % 3 == 0 || (i >= 1500 && i < 2200);
    if (!row[7].is_null) {
        t->wall_values++;
        t->xor_wall ^= (uint64_t)row[7].i;
    }
    row[8].s = edge_texts[k].in;
    row[8].len = strlen(edge_texts[k].in);
    row[8].is_null = i % 4 == 1;
    if (!row[8].is_null) {
        t->text_values++;
        t->maybe_text_bytes += edge_texts[k].cleaned;
    }
    row[9].i = i32[rng_below(4)];
    row[9].is_null = i % 5 == 2;
    if (!row[9].is_null) {
        t->small_values++;
        t->sum_maybe_small += row[9].i;
    }
    return pq_writer_put_row(w, row) == ATF_OK;
}

static int write_edges(const char *path) {
    edge_totals t;
    pq_config cfg;
    pq_error err;
    pq_writer *w;
    size_t i;
    char *big_text = (char *)malloc(100000);
    if (!big_text) return 1;
    for (i = 0; i < 100000; i++) big_text[i] = (char)('a' + i % 26);
    memset(&t, 0, sizeof t);
    t.min64 = INT64_MAX;
    t.max64 = INT64_MIN;
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = 1500;
    cfg.page_values = 700;
    if (pq_writer_open(&w, path, edge_schema, EDGE_COLS, &cfg, &err) != ATF_OK) {
        fprintf(stderr, "parquet_gen: %s: %s\n", err.what, atf_result_str(err.result));
        free(big_text);
        return 1;
    }
    for (i = 0; i < EDGE_ROWS; i++)
        if (!put_edge_row(w, i, big_text, &t)) break;
    free(big_text);
    if (pq_writer_close(w, &err) != ATF_OK) {
        fprintf(stderr, "parquet_gen: %s: %s\n", err.what, atf_result_str(err.result));
        return 1;
    }
    /* 64-bit figures as strings: JSON numbers lose them */
    printf("{\"kind\":\"edges\",\"rows\":%d,\"xor_big\":\"%lld\",", EDGE_ROWS,
           (long long)t.xor64);
    printf("\"min_big\":\"%lld\",\"max_big\":\"%lld\",\"xor_big_dict\":\"%lld\",",
           (long long)t.min64, (long long)t.max64, (long long)t.xor_dict);
    printf("\"sum_small\":\"%lld\",\"text_bytes\":\"%llu\",\"raw_bytes\":\"%llu\",",
           (long long)t.sum32, (unsigned long long)t.text_bytes,
           (unsigned long long)t.raw_bytes);
    printf("\"empty_texts\":%zu,\"bad_texts\":%zu,", t.empty_texts, t.bad_texts);
    printf("\"wall_values\":%zu,\"xor_wall\":\"%lld\",\"text_values\":%zu,"
           "\"maybe_text_bytes\":\"%llu\",\"small_values\":%zu,\"sum_maybe_small\":\"%lld\"}\n",
           t.wall_values, (long long)t.xor_wall, t.text_values,
           (unsigned long long)t.maybe_text_bytes, t.small_values, (long long)t.sum_maybe_small);
    return 0;
}

static int write_empty(const char *path) {
    pq_error err;
    pq_writer *w;
    if (pq_writer_open(&w, path, gen_schema, COL_COUNT, NULL, &err) != ATF_OK ||
        pq_writer_close(w, &err) != ATF_OK) {
        fprintf(stderr, "parquet_gen: %s: %s\n", err.what, atf_result_str(err.result));
        return 1;
    }
    printf("{\"kind\":\"empty\",\"rows\":0}\n");
    return 0;
}

int main(int argc, char **argv) {
    size_t rows = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 300000;
    size_t group_rows = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 65536;
    if (argc == 3 && strcmp(argv[1], "--edges") == 0) return write_edges(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--empty") == 0) return write_empty(argv[2]);
    if (argc < 2 || argv[1][0] == '-' || rows == 0 || group_rows == 0) {
        fprintf(stderr, "usage: parquet_gen OUT.parquet [ROWS [ROW_GROUP_ROWS]]\n"
                        "       parquet_gen --edges OUT.parquet\n"
                        "       parquet_gen --empty OUT.parquet\n");
        return 2;
    }
    make_names();
    return write_slices(argv[1], rows, group_rows);
}
