/* parquet.h - a small streaming Parquet file writer for the atf command: flat tables of
 * INT32, INT64 and BYTE_ARRAY columns, required or optional (nullable), uncompressed,
 * with no dependency.
 * SPDX-License-Identifier: MIT
 *
 * Use: pq_writer_open() with the columns, then for each row one pq_writer_put_int(),
 * pq_writer_put_bytes() or (optional columns) pq_writer_put_null() per column (any order)
 * and pq_writer_end_row(), or one pq_writer_put_row(); then pq_writer_close(), which
 * writes the footer. Only the current
 * row group is held in memory, so memory is bounded by the row group size whatever the
 * number of rows. docs/PARQUET.md says which Parquet features the file uses.
 *
 * Errors: every call returns an atf_result; the writer keeps the first error with the
 * errno and what failed (pq_writer_error()); once a call failed, later calls return the
 * same code and write nothing more. A writer is used by one thread at a time. */
#ifndef ATF_TOOLS_PARQUET_H
#define ATF_TOOLS_PARQUET_H

#include "atf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Physical types; the values are Parquet's own numbers for them. */
typedef enum pq_type { PQ_INT32 = 1, PQ_INT64 = 2, PQ_BYTE_ARRAY = 6 } pq_type;

/* What the values mean to a reader (Parquet's logical type annotation). */
typedef enum pq_logical {
    PQ_LOGICAL_NONE = 0,         /* raw: plain integers, or bytes written as given */
    PQ_LOGICAL_INTEGER,          /* signed integer of the column's width */
    PQ_LOGICAL_STRING,           /* UTF-8 text: BYTE_ARRAY only; bad bytes are replaced */
    PQ_LOGICAL_TIMESTAMP_NS,     /* INT64 nanoseconds of a clock not anchored to UTC */
    PQ_LOGICAL_TIMESTAMP_NS_UTC  /* INT64 nanoseconds since the Unix epoch, UTC */
} pq_logical;

/* How a column's values are encoded in its data pages. */
typedef enum pq_encoding {
    PQ_ENCODING_AUTO = 0,        /* INT64: delta; INT32 and BYTE_ARRAY: dictionary */
    PQ_ENCODING_PLAIN,           /* little-endian values; length-prefixed bytes */
    PQ_ENCODING_DICTIONARY,      /* dictionary page + RLE/bit-packed indices, per chunk;
                                    a chunk with too many distinct values falls back to
                                    PLAIN (see pq_config) */
    PQ_ENCODING_DELTA            /* DELTA_BINARY_PACKED: INT64 only */
} pq_encoding;

/* One column of the table, flat: REQUIRED (a value in every row) or OPTIONAL (a row may
 * hold null: its data pages then carry definition levels, and its statistics the nulls). */
typedef struct pq_column {
    const char *name;            /* copied by pq_writer_open */
    pq_type type;
    pq_logical logical;          /* PQ_LOGICAL_NONE by default */
    pq_encoding encoding;        /* PQ_ENCODING_AUTO by default */
    int optional;                /* 0 (default): REQUIRED; 1: OPTIONAL, nulls allowed */
} pq_column;

/* Zero means default for every field. */
typedef struct pq_config {
    size_t row_group_rows;       /* rows per row group; default 1048576 */
    size_t page_values;          /* values per data page at most; default 65536 */
    size_t page_bytes;           /* PLAIN data page body cut near this; default 1 MiB */
    size_t dict_max_values;      /* distinct values a dictionary holds; default 65536 */
    size_t dict_max_bytes;       /* dictionary page bytes at most; default 1 MiB */
    size_t stat_max_bytes;       /* BYTE_ARRAY min/max longer than this are not written
                                    (a truncated bound would need care); default 1024 */
    const char *created_by;      /* footer's created_by; default "atf parquet writer" */
} pq_config;

/* The first error of a writer. */
typedef struct pq_error {
    atf_result result;           /* ATF_OK when none */
    int errno_value;             /* errno of a failed system call, else 0 */
    char what[192];              /* what failed, with the path or column name */
} pq_error;

/* One value of a row, for pq_writer_put_row: i for integer columns, s/len for bytes;
 * is_null (an optional column only) for null. */
typedef struct pq_value {
    int64_t i;
    const char *s;
    size_t len;
    int is_null;
} pq_value;

typedef struct pq_writer pq_writer;

/* Creates `path` (truncating it) and writes the file header.
 * out: the writer, NULL on failure. columns/count: the schema (count >= 1, names not
 * empty and unique). cfg: optional. err: optional, filled on failure.
 * Returns ATF_OK, ATF_E_ARG for a bad schema, ATF_E_NOMEM, ATF_E_IO (errno in err). */
atf_result pq_writer_open(pq_writer **out, const char *path, const pq_column *columns,
                          size_t count, const pq_config *cfg, pq_error *err);

/* As pq_writer_open, on a stream open for writing at its start; pq_writer_close flushes
 * it but does not close it. */
atf_result pq_writer_open_file(pq_writer **out, FILE *file, const pq_column *columns,
                               size_t count, const pq_config *cfg, pq_error *err);

/* Sets column `col` of the current row to `v`. INT32 columns take values in int32 range.
 * Returns ATF_OK, ATF_E_ARG (wrong column type or index), ATF_E_RANGE (value outside
 * INT32), ATF_E_STATE (value already given for this row), or the writer's first error. */
atf_result pq_writer_put_int(pq_writer *w, size_t col, int64_t v);

/* Sets BYTE_ARRAY column `col` of the current row to the len bytes at s (s may be NULL
 * when len is 0). Returns as pq_writer_put_int. */
atf_result pq_writer_put_bytes(pq_writer *w, size_t col, const void *s, size_t len);

/* Sets optional column `col` of the current row to null. Returns as pq_writer_put_int
 * (ATF_E_ARG for a required column). */
atf_result pq_writer_put_null(pq_writer *w, size_t col);

/* Ends the current row; every column must have its value (else ATF_E_STATE). Writes a
 * row group when it is full. Returns ATF_OK or the first error (ATF_E_IO, ATF_E_NOMEM). */
atf_result pq_writer_end_row(pq_writer *w);

/* Puts one value (or null) per column from row[0..count-1] and ends the row. */
atf_result pq_writer_put_row(pq_writer *w, const pq_value *row);

/* Rows ended so far. */
uint64_t pq_writer_rows(const pq_writer *w);

/* The first error, or one with result ATF_OK. */
const pq_error *pq_writer_error(const pq_writer *w);

/* Writes the last row group and the footer, flushes, closes the file when the writer
 * opened it, and frees the writer (w may be NULL). A row left unfinished is an
 * ATF_E_STATE error and the file is left without a footer. err: optional, receives the
 * first error. Returns ATF_OK or the first error. */
atf_result pq_writer_close(pq_writer *w, pq_error *err);

#endif
