/* cut_trace - what tests/window_checks.sh compares the atf command's windows with, built
 * with the library alone (none of the atf command's code).
 * SPDX-License-Identifier: MIT
 *
 * usage: cut_trace cut SRC DST FROM TO
 *          Writes the pid_* directory DST: SRC's manifest.json as it is, and for each
 *          thread of SRC a thread_N/index.atf holding only its events with
 *          FROM <= timestamp <= TO (ns on the trace clock), in file order, finalized with
 *          the library's encoders and CRC32-C. SRC must have no detail.atf and no gaps.atf:
 *          the cut drops them.
 *        cut_trace offset DIR NAME
 *          Prints value - host_ns of the exact anchor NAME (in ns: timescale 1e9) of the
 *          pid_* directory DIR: what an event's time on that clock exceeds its trace time by.
 *        cut_trace rows FILE [COLUMN]
 *          Prints the Parquet file FILE (read with tests/parquet_decode.h) a row per line,
 *          "name=value" per column, leaving out COLUMN: to compare two tables by content.
 * Exits 1 with a message on stderr when something fails. */
#include "atf.h"
#include "parquet_decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#if defined(_WIN32)
#  include <direct.h>
#  define cut_mkdir(path) _mkdir(path)
#else
#  define cut_mkdir(path) mkdir(path, 0755)
#endif

static void cut_die(const char *what, const char *detail) {
    fprintf(stderr, "cut_trace: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void cut_make_dir(const char *path) {
    if (cut_mkdir(path) != 0 && errno != EEXIST) cut_die(path, strerror(errno));
}

static uint64_t cut_number(const char *s) {
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end) cut_die("not a number", s);
    return (uint64_t)v;
}

/* Copies the file src to dst byte for byte. */
static void cut_copy(const char *src, const char *dst) {
    char buf[65536];
    size_t n;
    FILE *in = fopen(src, "rb"), *out;
    if (!in) cut_die(src, strerror(errno));
    if ((out = fopen(dst, "wb")) == NULL) cut_die(dst, strerror(errno));
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) cut_die(dst, "write failed");
    if (ferror(in) || fclose(out) != 0) cut_die(dst, "copy failed");
    fclose(in);
}

/* thread_N/index.atf of t cut to [from, to], under the pid_* directory dst. */
static void cut_thread(const atf_session_thread *t, const char *dst, uint64_t from, uint64_t to) {
    const atf_index_reader *ix = &t->reader.index;
    atf_index_header h = ix->header;
    atf_index_footer foot;
    uint8_t block[64], *events = (uint8_t *)malloc(ix->event_count * ATF_INDEX_EVENT_SIZE + 1);
    uint64_t i, n = 0, first = 0, last = 0;
    char path[4096];
    FILE *f;
    if (!events) cut_die("out of memory", NULL);
    if (t->reader.has_detail || t->reader.gap_count) cut_die(t->reader.index.path, "has detail or gaps");
    for (i = 0; i < ix->event_count; i++) {
        const uint8_t *rec = ix->events + i * ATF_INDEX_EVENT_SIZE;
        atf_index_event ev;
        atf_index_reader_get(ix, i, &ev);
        if (ev.timestamp_ns < from || ev.timestamp_ns > to) continue;
        if (n == 0) first = ev.timestamp_ns;
        last = ev.timestamp_ns;
        memcpy(events + n++ * ATF_INDEX_EVENT_SIZE, rec, ATF_INDEX_EVENT_SIZE);
    }
    h.event_count = n;
    h.events_offset = ATF_HEADER_SIZE;
    h.footer_offset = ATF_HEADER_SIZE + n * ATF_INDEX_EVENT_SIZE;
    h.time_start_ns = first;
    h.time_end_ns = last;
    memset(&foot, 0, sizeof foot);
    foot.checksum = atf_crc32c(events, (size_t)(n * ATF_INDEX_EVENT_SIZE));
    foot.event_count = n;
    foot.time_start_ns = first;
    foot.time_end_ns = last;
    foot.bytes_written = n * ATF_INDEX_EVENT_SIZE;
    snprintf(path, sizeof path, "%s/thread_%u", dst, t->slot);
    cut_make_dir(path);
    snprintf(path, sizeof path, "%s/thread_%u/index.atf", dst, t->slot);
    if ((f = fopen(path, "wb")) == NULL) cut_die(path, strerror(errno));
    atf_index_header_encode(&h, block);
    if (fwrite(block, 1, sizeof block, f) != sizeof block ||
        fwrite(events, 1, (size_t)(n * ATF_INDEX_EVENT_SIZE), f) != n * ATF_INDEX_EVENT_SIZE)
        cut_die(path, "write failed");
    atf_index_footer_encode(&foot, block);
    if (fwrite(block, 1, sizeof block, f) != sizeof block || fclose(f) != 0)
        cut_die(path, "write failed");
    free(events);
}

static int cut(const char *src, const char *dst, uint64_t from, uint64_t to) {
    atf_session_reader r;
    char a[4096], b[4096];
    size_t i;
    if (atf_session_reader_open(&r, src, NULL) != ATF_OK) cut_die(src, "cannot open the session");
    cut_make_dir(dst);
    snprintf(a, sizeof a, "%s/manifest.json", src);
    snprintf(b, sizeof b, "%s/manifest.json", dst);
    cut_copy(a, b);
    for (i = 0; i < r.thread_count; i++) {
        if (r.threads[i].open_result != ATF_OK) cut_die(src, "a thread does not open");
        cut_thread(&r.threads[i], dst, from, to);
    }
    atf_session_reader_close(&r);
    return 0;
}

static int offset(const char *dir, const char *name) {
    atf_session_reader r;
    const atf_session_anchor *a;
    if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) cut_die(dir, "cannot open the session");
    a = atf_session_reader_anchor(&r, name);
    if (!a || a->timescale != 1000000000) cut_die(name, "no exact anchor in ns");
    printf("%lld\n", (long long)(a->value - (int64_t)a->host_ns));
    atf_session_reader_close(&r);
    return 0;
}

static int rows(const char *path, const char *skip) {
    pqd_file f;
    int64_t r;
    size_t c;
    if (pqd_open(&f, path) != 0) cut_die(path, f.error);
    for (r = 0; r < f.num_rows; r++) {
        for (c = 0; c < f.ncols; c++) {
            if (skip && strcmp(f.cols[c].name, skip) == 0) continue;
            if (f.nulls[c][r])
                printf("%s=null|", f.cols[c].name);
            else if (f.cols[c].type == 6)
                printf("%s=%.*s|", f.cols[c].name, (int)f.bytes[c][r].len,
                       (const char *)f.bytes[c][r].p);
            else
                printf("%s=%lld|", f.cols[c].name, (long long)f.ints[c][r]);
        }
        printf("\n");
    }
    pqd_close(&f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "cut") == 0)
        return cut(argv[2], argv[3], cut_number(argv[4]), cut_number(argv[5]));
    if (argc == 4 && strcmp(argv[1], "offset") == 0) return offset(argv[2], argv[3]);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "rows") == 0)
        return rows(argv[2], argc == 4 ? argv[3] : NULL);
    fprintf(stderr, "usage: cut_trace cut SRC DST FROM TO | cut_trace offset DIR NAME | "
                    "cut_trace rows FILE [COLUMN]\n");
    return 2;
}
