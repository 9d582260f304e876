/* parquet_count.c - how many rows of a Parquet file's text column hold a value, read with
 * the tests' own reader (tests/parquet_decode.h), for the shell checks of exported
 * traces (tests/cpp_checks.sh: the slices whose ended_by is "exception").
 *   parquet_count FILE COLUMN VALUE   prints the count; exit 1 when the file cannot be
 *                                     read or has no such text column, 2 on usage */
#include "parquet_decode.h"

int main(int argc, char **argv) {
    pqd_file f;
    size_t col, row, n = 0, len;
    if (argc != 4) {
        fprintf(stderr, "usage: parquet_count FILE COLUMN VALUE\n");
        return 2;
    }
    if (pqd_open(&f, argv[1]) != 0) {
        fprintf(stderr, "parquet_count: %s: %s\n", argv[1], f.error);
        pqd_close(&f);
        return 1;
    }
    for (col = 0; col < f.ncols && strcmp(f.cols[col].name, argv[2]) != 0; col++) {}
    if (col == f.ncols || f.cols[col].type != 6) {
        fprintf(stderr, "parquet_count: %s: no text column %s\n", argv[1], argv[2]);
        pqd_close(&f);
        return 1;
    }
    len = strlen(argv[3]);
    for (row = 0; row < (size_t)f.num_rows; row++)
        n += !f.nulls[col][row] && f.bytes[col][row].len == len &&
             memcmp(f.bytes[col][row].p, argv[3], len) == 0;
    printf("%zu\n", n);
    pqd_close(&f);
    return 0;
}
