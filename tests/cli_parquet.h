/* cli_parquet.h - a table of `atf export --format parquet`, exported in-process and read
 * back with parquet_decode.h (written apart from the writer), for the harnesses that check
 * what the tables say (test_export.c, test_walk.c): the columns of both tables by name
 * and position, the ways a slice ends, and a few readers of rows. Include after
 * cli_traces.h. */
#ifndef ATF_TESTS_CLI_PARQUET_H
#define ATF_TESTS_CLI_PARQUET_H

#include "cli_traces.h"
#include "parquet_decode.h"

static const char *const pq_slice_columns[] = {
    "pid", "tid", "thread_slot", "thread_name", "function_id", "fid", "name", "mangled",
    "module", "depth", "start_ns", "end_ns", "dur_ns", "self_ns", "ended_by", "has_detail", "paused_ns",
    "start_wall", "end_wall"
};
static const char *const pq_event_columns[] = {
    "pid", "thread_slot", "seq", "ts_ns", "function_id", "fid", "name", "mangled", "kind",
    "depth", "detail_seq", "ts_wall"
};
static const char *const pq_endings[] = { "return", "unwound", "cut", "gap", "exception" };
enum { PQ_LOGICAL_TIMESTAMP_FIELD = 8, PQ_LOGICAL_INTEGER_FIELD = 10, PQ_NANOS_FIELD = 3,
       PQ_FNS_MAX = 64, PQ_SLICE_COLUMNS = 19, PQ_NAME = 6, PQ_MODULE = 8, PQ_DEPTH = 9,
       PQ_START = 10, PQ_END = 11, PQ_DUR = 12, PQ_SELF = 13, PQ_ENDED_BY = 14,
       PQ_HAS_DETAIL = 15, PQ_PAUSED = 16, PQ_START_WALL = 17, PQ_END_WALL = 18,
       PQ_EVENT_COLUMNS = 12, PQ_KIND = 8, PQ_EV_DEPTH = 9, PQ_DETAIL_SEQ = 10,
       PQ_TS_WALL = 11 };

/* Exports `table` of dir to a file beside it and decodes it: 1, else 0 after a failure. */
static TRACES_UNUSED int pq_export(const char *dir, const char *table, pqd_file *f) {
    char out[1200];
    run_result o;
    snprintf(out, sizeof out, "%s/../%s.parquet", dir, table);
    o = run(cli_main, "export", "--format", "parquet", "--table", table, "-o", out, dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
    if (pqd_open(f, out) == 0) return 1;
    harness__fail(__FILE__, __LINE__, f->error);
    pqd_close(f);
    return 0;
}

/* 1 when the byte array b is the text s. */
static TRACES_UNUSED int pq_is(pqd_bytes b, const char *s) {
    return b.len == strlen(s) && memcmp(b.p, s, b.len) == 0;
}

/* The rows of a slices table whose ended_by is `how`. */
static TRACES_UNUSED size_t pq_count_ended(const pqd_file *f, const char *how) {
    size_t r, n = 0;
    for (r = 0; r < (size_t)f->num_rows; r++) n += (size_t)pq_is(f->bytes[PQ_ENDED_BY][r], how);
    return n;
}

#endif /* ATF_TESTS_CLI_PARQUET_H */
