/* test_ktrace.c - the Darwin ktrace v3 reader: files built byte by byte from ktrace(5)
 * (the man page's typical file, no chunks, unknown tags), every header and chunk error,
 * the timebase and wall-clock helpers, random mutations of valid files, and opening from
 * a file on disk. */
#include "atf.h"
#include "harness.h"
#include "scratch_dir.h"

#include <stdlib.h>
#if !defined(_WIN32)
#  include <unistd.h>
#endif

/* ---- a byte builder, independent of the header's store helpers ---- */
typedef struct kbuf {
    uint8_t b[2048];
    size_t n;
} kbuf;

static void put8(kbuf *k, unsigned v) {
    if (k->n < sizeof k->b) k->b[k->n] = (uint8_t)(v & 0xFFu);
    k->n++;
}
static void put16(kbuf *k, unsigned v) {
    put8(k, v);
    put8(k, v >> 8);
}
static void put32(kbuf *k, uint32_t v) {
    put16(k, (unsigned)(v & 0xFFFFu));
    put16(k, (unsigned)(v >> 16));
}
static void put64(kbuf *k, uint64_t v) {
    put32(k, (uint32_t)(v & 0xFFFFFFFFu));
    put32(k, (uint32_t)(v >> 32));
}
static void put_zeros(kbuf *k, size_t n) {
    while (n--) put8(k, 0);
}
/* n data bytes whose values depend on `seed` and the position. */
static void put_data(kbuf *k, unsigned seed, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) put8(k, (unsigned)(seed * 31u + i * 7u + 1u));
}
static int data_matches(const uint8_t *p, unsigned seed, uint64_t n) {
    uint64_t i;
    for (i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed * 31u + i * 7u + 1u)) return 0;
    return 1;
}

/* The values of the typical file's header. */
#define K_MAJOR 3u
#define K_MINOR 0x0102u
#define K_NUMER 125u
#define K_DENOM 3u
#define K_TIMESTAMP 0x0123456789ABCDEFull
#define K_SECS 1581292800ull /* February 10, 2020 */
#define K_USECS 123456u
#define K_WEST 480u
#define K_DST 1u
#define K_FLAGS 0x80000005u

/* The 64-byte file header of ktrace(5). */
static void put_file_header(kbuf *k, uint32_t magic, uint64_t header_size) {
    put32(k, magic);
    put16(k, K_MAJOR);
    put16(k, K_MINOR);
    put64(k, header_size);
    put32(k, K_NUMER);
    put32(k, K_DENOM);
    put64(k, K_TIMESTAMP);
    put64(k, K_SECS);
    put32(k, K_USECS);
    put32(k, K_WEST);
    put32(k, K_DST);
    put32(k, K_FLAGS);
    put_zeros(k, 8); /* bytes 56..63 */
}

static void put_chunk_header(kbuf *k, uint32_t tag, unsigned major, unsigned minor,
                             uint64_t size) {
    put32(k, tag);
    put16(k, major);
    put16(k, minor);
    put64(k, size);
}

/* A chunk with its data and the padding up to the next multiple of 8. */
static void put_chunk(kbuf *k, uint32_t tag, unsigned major, unsigned minor, size_t size,
                      unsigned seed) {
    put_chunk_header(k, tag, major, minor, size);
    put_data(k, seed, size);
    put_zeros(k, (8 - (k->n & 7)) & 7);
}

/* The typical file of ktrace(5):
 *   64 header structure
 *   16 header chunk header, 32 header chunk data
 *   16 header chunk header, 14 header chunk data, 2 padding
 *   16 normal chunk header, 128 normal chunk data
 *   16 normal chunk header, 252 normal chunk data, 4 optional padding (when `padded`) */
#define T_HEADER_SIZE 128u /* 64 + 48 + 32 + 2 - 16 */
static void build_typical(kbuf *k, int padded) {
    k->n = 0;
    put_file_header(k, ATF_KTRACE_MAGIC, T_HEADER_SIZE);
    put_chunk_header(k, 0x1c00u, 1, 0, 32);
    put_data(k, 1, 32);
    put_chunk_header(k, 0x1d00u, 2, 1, 14);
    put_data(k, 2, 14);
    put_zeros(k, 2);
    put_chunk_header(k, 0x1e00u, 3, 2, 128);
    put_data(k, 3, 128);
    put_chunk_header(k, 0x8000u, 0xFFFFu, 0xABCDu, 252);
    put_data(k, 4, 252);
    if (padded) put_zeros(k, 4);
}

/* An exact-size heap copy, so that a read past the end is a sanitizer error. */
static uint8_t *exact_copy(const uint8_t *p, size_t n) {
    uint8_t *c = (uint8_t *)malloc(n ? n : 1);
    if (c && n) memcpy(c, p, n);
    return c;
}

static void check_header_fields(const atf_ktrace_reader *r, uint64_t header_size) {
    CHECK_EQ(ATF_KTRACE_MAGIC, r->header.magic);
    CHECK_EQ(K_MAJOR, r->header.major);
    CHECK_EQ(K_MINOR, r->header.minor);
    CHECK_EQ(header_size, r->header.header_size);
    CHECK_EQ(K_NUMER, r->header.timebase_numer);
    CHECK_EQ(K_DENOM, r->header.timebase_denom);
    CHECK_EQ(K_TIMESTAMP, r->header.timestamp);
    CHECK_EQ(K_SECS, r->header.walltime_secs);
    CHECK_EQ(K_USECS, r->header.walltime_usecs);
    CHECK_EQ(K_WEST, r->header.minutes_west);
    CHECK_EQ(K_DST, r->header.dst);
    CHECK_EQ(K_FLAGS, r->header.flags);
}

/* Checks every chunk of the typical file read from `base`. */
static void check_typical_chunks(atf_ktrace_reader *r, const uint8_t *base) {
    static const struct {
        uint64_t offset;
        uint32_t tag;
        unsigned major, minor;
        uint64_t size;
        atf_ktrace_section section;
    } want[] = {
        {64, 0x1c00u, 1, 0, 32, ATF_KTRACE_HEADER_CHUNK},
        {112, 0x1d00u, 2, 1, 14, ATF_KTRACE_HEADER_CHUNK},
        {144, 0x1e00u, 3, 2, 128, ATF_KTRACE_BODY_CHUNK},
        {288, 0x8000u, 0xFFFFu, 0xABCDu, 252, ATF_KTRACE_BODY_CHUNK},
    };
    atf_ktrace_chunk c;
    size_t i;
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(r, &c));
        CHECK_EQ(want[i].offset, c.offset);
        CHECK_EQ(want[i].tag, c.tag);
        CHECK_EQ(want[i].major, c.major);
        CHECK_EQ(want[i].minor, c.minor);
        CHECK_EQ(want[i].size, c.size);
        CHECK_EQ(want[i].section, c.section);
        CHECK(c.data == base + want[i].offset + 16);
        CHECK(c.data && data_matches(c.data, (unsigned)(i + 1), c.size));
    }
    CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(r, &c));
    CHECK_EQ(0, c.size);
    CHECK(c.data == NULL);
    CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(r, &c));
    CHECK_RESULT(ATF_OK, r->error.code);
}

/* ---- tests ---- */

static void typical_file_layout(void) {
    kbuf k;
    build_typical(&k, 1);
    CHECK_EQ(560, k.n);
    /* the offsets the man page's table adds up to */
    CHECK_EQ(0x00u, k.b[0]);
    CHECK_EQ(0x03u, k.b[1]);
    CHECK_EQ(0xAAu, k.b[2]);
    CHECK_EQ(0x55u, k.b[3]);
    CHECK_EQ(0x1du, k.b[112 + 1]);
    CHECK_EQ(14, k.b[112 + 8]);
    CHECK_EQ(0x1eu, k.b[144 + 1]);
    CHECK_EQ(0x80u, k.b[288 + 1]);
    CHECK_EQ(252, k.b[288 + 8]);
}

static void typical_file(void) {
    kbuf k;
    atf_ktrace_reader r;
    uint8_t *copy;
    build_typical(&k, 1);
    copy = exact_copy(k.b, k.n);
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "typical", NULL));
    check_header_fields(&r, T_HEADER_SIZE);
    CHECK_EQ(560, r.file_size);
    CHECK(strcmp(r.path, "typical") == 0);
    check_typical_chunks(&r, copy);
    atf_ktrace_reader_close(&r);
    free(copy);
}

static void typical_file_optional_padding(void) {
    /* without the last 4 bytes of padding, and with only part of them */
    size_t cut[] = {556, 557, 558, 559};
    size_t i;
    kbuf k;
    build_typical(&k, 1);
    for (i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        atf_ktrace_reader r;
        uint8_t *copy = exact_copy(k.b, cut[i]);
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, cut[i], NULL, NULL));
        CHECK(strcmp(r.path, "<memory>") == 0);
        check_typical_chunks(&r, copy);
        atf_ktrace_reader_close(&r);
        free(copy);
    }
}

static void zero_chunks(void) {
    kbuf k;
    size_t tail;
    /* header only, then up to 15 bytes of trailing padding: still no chunk */
    for (tail = 0; tail < 16; tail++) {
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        uint8_t *copy;
        k.n = 0;
        put_file_header(&k, ATF_KTRACE_MAGIC, 48);
        put_zeros(&k, tail);
        copy = exact_copy(k.b, k.n);
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "empty", NULL));
        check_header_fields(&r, 48);
        CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(&r, &c));
        CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(&r, &c));
        CHECK_RESULT(ATF_OK, r.error.code);
        atf_ktrace_reader_close(&r);
        free(copy);
    }
    /* 16 zero bytes after the header are a chunk: tag 0, size 0 */
    {
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        uint8_t *copy;
        k.n = 0;
        put_file_header(&k, ATF_KTRACE_MAGIC, 48);
        put_zeros(&k, 16);
        copy = exact_copy(k.b, k.n);
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "zero", NULL));
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(&r, &c));
        CHECK_EQ(64, c.offset);
        CHECK_EQ(0, c.tag);
        CHECK_EQ(0, c.size);
        CHECK_EQ(ATF_KTRACE_BODY_CHUNK, c.section);
        CHECK(c.data == copy + 80);
        CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(&r, &c));
        atf_ktrace_reader_close(&r);
        free(copy);
    }
}

static void unknown_tags(void) {
    static const uint32_t tags[] = {0xFFFFFFFFu, 0u, 0xDEADBEEFu, 0x12345678u, 0x00010000u};
    static const size_t sizes[] = {1, 0, 7, 8, 9};
    kbuf k;
    atf_ktrace_reader r;
    atf_ktrace_chunk c;
    uint64_t expect_at = 64;
    uint8_t *copy;
    size_t i;
    k.n = 0;
    put_file_header(&k, ATF_KTRACE_MAGIC, 48 + 16 + 8); /* one header chunk of 1 byte */
    for (i = 0; i < sizeof tags / sizeof tags[0]; i++)
        put_chunk(&k, tags[i], (unsigned)(i + 9), (unsigned)(i * 2), sizes[i], (unsigned)(50 + i));
    copy = exact_copy(k.b, k.n);
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "unknown", NULL));
    for (i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(&r, &c));
        CHECK_EQ(expect_at, c.offset);
        CHECK_EQ(tags[i], c.tag);
        CHECK_EQ(i + 9, c.major);
        CHECK_EQ(i * 2, c.minor);
        CHECK_EQ(sizes[i], c.size);
        CHECK_EQ(i == 0 ? ATF_KTRACE_HEADER_CHUNK : ATF_KTRACE_BODY_CHUNK, c.section);
        CHECK(data_matches(c.data, (unsigned)(50 + i), c.size));
        expect_at += 16 + ((sizes[i] + 7) & ~(size_t)7);
    }
    CHECK_EQ(k.n, expect_at);
    CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(&r, &c));
    atf_ktrace_reader_close(&r);
    free(copy);
}

static void truncated_chunk(void) {
    /* the typical file cut inside the last chunk's data, and inside its header */
    static const size_t cuts[] = {304 + 251, 304, 288 + 15, 288 + 9};
    kbuf k;
    size_t i;
    build_typical(&k, 1);
    for (i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        uint8_t *copy = exact_copy(k.b, cuts[i]);
        int j;
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, cuts[i], "cut", NULL));
        for (j = 0; j < 3; j++) CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(&r, &c));
        if (cuts[i] >= 304) {
            CHECK_RESULT(ATF_E_TRUNCATED, atf_ktrace_reader_next(&r, &c));
            CHECK_EQ(0, c.size);
            CHECK(c.data == NULL);
            CHECK_RESULT(ATF_E_TRUNCATED, r.error.code);
            CHECK_EQ(288, r.error.offset);
            CHECK(r.error.has_values);
            CHECK_EQ(cuts[i] - 304, r.error.expected); /* bytes left */
            CHECK_EQ(252, r.error.found);
            CHECK(strcmp(r.error.path, "cut") == 0);
            /* the walk stays stopped, the first error stays */
            CHECK_RESULT(ATF_E_TRUNCATED, atf_ktrace_reader_next(&r, &c));
            CHECK_EQ(288, r.error.offset);
        } else {
            /* fewer than 16 bytes left: the end, as trailing padding */
            CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(&r, &c));
            CHECK_RESULT(ATF_OK, r.error.code);
        }
        atf_ktrace_reader_close(&r);
        free(copy);
    }
    /* a size that would wrap around an offset computation */
    {
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        uint8_t *copy;
        k.n = 0;
        put_file_header(&k, ATF_KTRACE_MAGIC, 48);
        put_chunk_header(&k, 7, 0, 0, UINT64_MAX - 8);
        put_zeros(&k, 8);
        copy = exact_copy(k.b, k.n);
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "huge", NULL));
        CHECK_RESULT(ATF_E_TRUNCATED, atf_ktrace_reader_next(&r, &c));
        CHECK_EQ(64, r.error.offset);
        CHECK_EQ(UINT64_MAX - 8, r.error.found);
        atf_ktrace_reader_close(&r);
        free(copy);
    }
}

static void header_chunk_crossing_header_end(void) {
    kbuf k;
    atf_ktrace_reader r;
    atf_ktrace_chunk c;
    uint8_t *copy;
    /* header_size ends inside the first header chunk's data */
    build_typical(&k, 1);
    k.b[8] = 48 + 16 + 16;
    copy = exact_copy(k.b, k.n);
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "cross", NULL));
    CHECK_RESULT(ATF_E_CORRUPT, atf_ktrace_reader_next(&r, &c));
    CHECK_EQ(64, r.error.offset);
    CHECK_EQ(16, r.error.expected);
    CHECK_EQ(32, r.error.found);
    CHECK_RESULT(ATF_E_CORRUPT, atf_ktrace_reader_next(&r, &c));
    atf_ktrace_reader_close(&r);
    free(copy);
    /* header_size ends inside the second chunk header */
    build_typical(&k, 1);
    k.b[8] = 48 + 48 + 8;
    copy = exact_copy(k.b, k.n);
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "cross", NULL));
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(&r, &c));
    CHECK_RESULT(ATF_E_CORRUPT, atf_ktrace_reader_next(&r, &c));
    CHECK_EQ(112, r.error.offset);
    atf_ktrace_reader_close(&r);
    free(copy);
    /* header_size without the last header chunk's padding: same chunks as the typical file */
    build_typical(&k, 1);
    k.b[8] = T_HEADER_SIZE - 2;
    copy = exact_copy(k.b, k.n);
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, copy, k.n, "nopad", NULL));
    check_typical_chunks(&r, copy);
    atf_ktrace_reader_close(&r);
    free(copy);
}

static void bad_magic(void) {
    static const uint32_t magics[] = {0, 0x55aa0200u, 0x55aa0301u, 0x00aa0300u, 0xFFFFFFFFu};
    size_t i;
    for (i = 0; i < sizeof magics / sizeof magics[0]; i++) {
        kbuf k;
        atf_ktrace_reader r;
        k.n = 0;
        put_file_header(&k, magics[i], 48);
        CHECK_RESULT(ATF_E_MAGIC, atf_ktrace_reader_open_memory(&r, k.b, k.n, "magic", NULL));
        CHECK_RESULT(ATF_E_MAGIC, r.error.code);
        CHECK_EQ(0, r.error.offset);
        CHECK_EQ(ATF_KTRACE_MAGIC, r.error.expected);
        CHECK_EQ(magics[i], r.error.found);
        CHECK(strcmp(r.error.path, "magic") == 0);
        atf_ktrace_reader_close(&r); /* harmless after a failed open */
    }
}

static void swapped_magic(void) {
    kbuf k;
    atf_ktrace_reader r;
    atf_ktrace_chunk c;
    k.n = 0;
    /* a big-endian writer: 55 aa 03 00 on disk */
    put8(&k, 0x55);
    put8(&k, 0xAA);
    put8(&k, 0x03);
    put8(&k, 0x00);
    put_zeros(&k, 60);
    CHECK_RESULT(ATF_E_ENDIAN, atf_ktrace_reader_open_memory(&r, k.b, k.n, "be", NULL));
    CHECK_EQ(0, r.error.offset);
    CHECK_EQ(ATF_KTRACE_MAGIC, r.error.expected);
    CHECK_EQ(0x0003AA55u, r.error.found);
    /* iteration after a failed open repeats the failure */
    CHECK_RESULT(ATF_E_ENDIAN, atf_ktrace_reader_next(&r, &c));
}

static void short_file(void) {
    kbuf k;
    size_t n;
    build_typical(&k, 1);
    for (n = 0; n < 64; n++) {
        atf_ktrace_reader r;
        uint8_t *copy = exact_copy(k.b, n);
        CHECK_RESULT(ATF_E_TRUNCATED, atf_ktrace_reader_open_memory(&r, copy, n, "short", NULL));
        CHECK_EQ(64, r.error.expected);
        CHECK_EQ(n, r.error.found);
        free(copy);
    }
    {
        atf_ktrace_reader r;
        CHECK_RESULT(ATF_E_TRUNCATED, atf_ktrace_reader_open_memory(&r, NULL, 0, "null", NULL));
        CHECK_RESULT(ATF_E_ARG, atf_ktrace_reader_open_memory(&r, NULL, 64, "null", NULL));
    }
}

static void header_size_past_eof(void) {
    static const uint64_t sizes[] = {T_HEADER_SIZE + 560, 560 - 16 + 1, UINT64_MAX,
                                     UINT64_MAX - 15};
    size_t i;
    kbuf k;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        atf_ktrace_reader r;
        uint8_t *copy;
        build_typical(&k, 1);
        k.n = 0;
        put_file_header(&k, ATF_KTRACE_MAGIC, sizes[i]);
        k.n = 560;
        copy = exact_copy(k.b, k.n);
        CHECK_RESULT(ATF_E_TRUNCATED,
                     atf_ktrace_reader_open_memory(&r, copy, k.n, "hsize", NULL));
        CHECK_EQ(8, r.error.offset);
        CHECK_EQ(560 - 16, r.error.expected);
        CHECK_EQ(sizes[i], r.error.found);
        free(copy);
    }
    /* exactly the whole file is header: one header chunk, no body */
    {
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        k.n = 0;
        put_file_header(&k, ATF_KTRACE_MAGIC, 48 + 16 + 16);
        put_chunk(&k, 0x1c00u, 1, 0, 16, 9);
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, k.b, k.n, "all", NULL));
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(&r, &c));
        CHECK_EQ(ATF_KTRACE_HEADER_CHUNK, c.section);
        CHECK_RESULT(ATF_E_RANGE, atf_ktrace_reader_next(&r, &c));
        atf_ktrace_reader_close(&r);
    }
}

static void header_size_too_small(void) {
    uint64_t hs;
    for (hs = 0; hs < 48; hs++) {
        kbuf k;
        atf_ktrace_reader r;
        k.n = 0;
        put_file_header(&k, ATF_KTRACE_MAGIC, hs);
        CHECK_RESULT(ATF_E_CORRUPT, atf_ktrace_reader_open_memory(&r, k.b, k.n, "hs", NULL));
        CHECK_EQ(8, r.error.offset);
        CHECK_EQ(48, r.error.expected);
        CHECK_EQ(hs, r.error.found);
    }
}

static void zero_timebase(void) {
    kbuf k;
    atf_ktrace_reader r;
    k.n = 0;
    put_file_header(&k, ATF_KTRACE_MAGIC, 48);
    k.b[16] = k.b[17] = k.b[18] = k.b[19] = 0;
    CHECK_RESULT(ATF_E_CORRUPT, atf_ktrace_reader_open_memory(&r, k.b, k.n, "tb", NULL));
    CHECK_EQ(16, r.error.offset);
    k.n = 0;
    put_file_header(&k, ATF_KTRACE_MAGIC, 48);
    k.b[20] = k.b[21] = k.b[22] = k.b[23] = 0;
    CHECK_RESULT(ATF_E_CORRUPT, atf_ktrace_reader_open_memory(&r, k.b, k.n, "tb", NULL));
    CHECK_EQ(20, r.error.offset);
}

static void time_conversion(void) {
    kbuf k;
    atf_ktrace_reader r;
    const uint64_t kmax = UINT64_MAX / 125; /* 147573952589676412 */
    k.n = 0;
    put_file_header(&k, ATF_KTRACE_MAGIC, 48);
    CHECK_RESULT(ATF_OK, atf_ktrace_reader_open_memory(&r, k.b, k.n, "t", NULL));
    /* 125/3: the Apple silicon timebase, 24 MHz ticks */
    CHECK_EQ(0, atf_ktrace_time_ns(&r, 0));
    CHECK_EQ(41, atf_ktrace_time_ns(&r, 1));
    CHECK_EQ(125, atf_ktrace_time_ns(&r, 3));
    CHECK_EQ(1000000000u, atf_ktrace_time_ns(&r, 24000000u));
    CHECK_EQ(147573952589676412ull, kmax);
    CHECK_EQ(125 * kmax, atf_ktrace_time_ns(&r, 3 * kmax));
    CHECK_EQ(125 * kmax + 83, atf_ktrace_time_ns(&r, 3 * kmax + 2)); /* 250 / 3 */
    CHECK_EQ(UINT64_MAX, atf_ktrace_time_ns(&r, 3 * kmax + 3));
    CHECK_EQ(UINT64_MAX, atf_ktrace_time_ns(&r, UINT64_MAX));
    /* a product far beyond 64 bits that divides back into range */
    r.header.timebase_numer = 0xFFFFFFFFu;
    r.header.timebase_denom = 0xFFFFFFFEu;
    CHECK_EQ(UINT64_MAX / 2 + (UINT64_MAX / 2) / 0xFFFFFFFEu,
             atf_ktrace_time_ns(&r, UINT64_MAX / 2));
    r.header.timebase_numer = 1;
    r.header.timebase_denom = 1;
    CHECK_EQ(UINT64_MAX, atf_ktrace_time_ns(&r, UINT64_MAX));
    CHECK_EQ(K_TIMESTAMP, atf_ktrace_time_ns(&r, K_TIMESTAMP));
    /* wall time */
    CHECK_EQ(K_SECS * 1000000000u + K_USECS * 1000u, atf_ktrace_wall_ns(&r));
    r.header.walltime_secs = UINT64_MAX / 1000000000u;
    r.header.walltime_usecs = 999999;
    CHECK_EQ(UINT64_MAX, atf_ktrace_wall_ns(&r));
    r.header.walltime_usecs = 0;
    CHECK_EQ((UINT64_MAX / 1000000000u) * 1000000000u, atf_ktrace_wall_ns(&r));
    atf_ktrace_reader_close(&r);
}

/* ---- random mutations ---- */

/* One of the interesting sizes for a u64 field. */
static uint64_t rng_size(size_t size) {
    switch (rng_below(8)) {
    case 0: return 0;
    case 1: return UINT64_MAX - rng_below(32);
    case 2: return (uint64_t)size + rng_below(32) - 16;
    case 3: return (uint64_t)1 << rng_below(64);
    case 4: return rng_next();
    default: return rng_below(size + 16);
    }
}

/* A valid file of a few random chunks, header chunks included. */
static void build_random_valid(kbuf *k) {
    size_t headers = rng_below(3), bodies = rng_below(5), i;
    size_t at = 64;
    size_t sizes[8];
    for (i = 0; i < headers + bodies; i++) {
        sizes[i] = rng_below(100);
        if (i < headers) at += 16 + ((sizes[i] + 7) & ~(size_t)7);
    }
    k->n = 0;
    put_file_header(k, ATF_KTRACE_MAGIC, at - 16);
    for (i = 0; i < headers + bodies; i++)
        put_chunk(k, (uint32_t)rng_next(), (unsigned)rng_below(4), 0, sizes[i], (unsigned)i);
    if (rng_below(2)) put_zeros(k, rng_below(16));
}

static void mutate(kbuf *k) {
    size_t m, edits = 1 + rng_below(4);
    for (m = 0; m < edits && k->n; m++) {
        switch (rng_below(6)) {
        case 0: /* a random byte */
            k->b[rng_below(k->n)] = (uint8_t)rng_next();
            break;
        case 1: /* a bit */
            k->b[rng_below(k->n)] ^= (uint8_t)(1u << rng_below(8));
            break;
        case 2: { /* a u64 at an 8-aligned place: chunk sizes, header_size */
            size_t at = rng_below(k->n / 8) * 8;
            if (at + 8 <= k->n) {
                size_t saved = k->n;
                k->n = at;
                put64(k, rng_size(saved));
                k->n = saved;
            }
            break;
        }
        case 3: { /* header_size */
            size_t saved = k->n;
            k->n = 8;
            put64(k, rng_size(saved));
            k->n = saved;
            break;
        }
        case 4: /* cut the file */
            k->n = rng_below(k->n + 1);
            break;
        default: /* grow it with noise */
            if (k->n + 16 < sizeof k->b) {
                size_t add = rng_below(16), i;
                for (i = 0; i < add; i++) k->b[k->n++] = (uint8_t)rng_next();
            }
            break;
        }
    }
}

static void mutations_never_crash(void) {
    int iter, opened = 0, clean_end = 0, chunk_errors = 0;
    rng_seed(0x6B74726163653333ull); /* the same mutants on every run */
    for (iter = 0; iter < 2000; iter++) {
        kbuf k;
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        uint8_t *copy;
        atf_result rc;
        uint64_t steps = 0, last = 0;
        build_random_valid(&k);
        mutate(&k);
        copy = exact_copy(k.b, k.n);
        rc = atf_ktrace_reader_open_memory(&r, copy, k.n, "mutant", NULL);
        if (rc != ATF_OK) {
            CHECK(rc < 0);
            CHECK_RESULT(rc, r.error.code);
            free(copy);
            continue;
        }
        opened++;
        /* every step advances by 16 bytes or more: the walk is bounded by size / 16 */
        while ((rc = atf_ktrace_reader_next(&r, &c)) == ATF_OK && steps <= k.n / 16) {
            CHECK(c.offset >= 64 && c.offset % 8 == 0);
            CHECK(steps == 0 || c.offset >= last + 16);
            CHECK(c.data == copy + c.offset + 16);
            CHECK(c.size <= k.n - c.offset - 16);
            CHECK_EQ(c.offset < 16 + r.header.header_size ? ATF_KTRACE_HEADER_CHUNK
                                                          : ATF_KTRACE_BODY_CHUNK,
                     c.section);
            if (c.size) CHECK(c.data[c.size - 1] == copy[c.offset + 16 + c.size - 1]);
            last = c.offset;
            steps++;
        }
        CHECK(steps <= k.n / 16);
        CHECK(rc != ATF_OK);
        if (rc == ATF_E_RANGE) {
            clean_end++;
            CHECK_RESULT(ATF_OK, r.error.code);
        } else {
            chunk_errors++;
            CHECK(rc == ATF_E_TRUNCATED || rc == ATF_E_CORRUPT);
            CHECK_RESULT(rc, r.error.code);
            CHECK(r.error.offset >= 64 && r.error.offset < k.n);
        }
        CHECK_RESULT(rc, atf_ktrace_reader_next(&r, &c));
        atf_ktrace_reader_close(&r);
        free(copy);
    }
    /* the mutations reach every outcome */
    CHECK(opened > 200);
    CHECK(clean_end > 100);
    CHECK(chunk_errors > 50);
}

/* ---- a file on disk ---- */
static int temp_path(char *buf, size_t cap) {
#if defined(_WIN32)
    const char *dir = getenv("TEMP");
    return snprintf(buf, cap, "%s\\atf_test_ktrace_%u.ktrace", dir ? dir : ".",
                    (unsigned)rand()) < (int)cap ? 0 : -1;
#else
    const char *dir = getenv("TMPDIR");
    int fd;
    if (snprintf(buf, cap, "%s/atf_test_ktrace_XXXXXX", dir && dir[0] ? dir : "/tmp") >= (int)cap)
        return -1;
    fd = mkstemp(buf);
    if (fd < 0) return -1;
    close(fd);
    return 0;
#endif
}

static void file_open(void) {
    char path[512];
    kbuf k;
    int no_mmap;
    build_typical(&k, 1);
    CHECK(temp_path(path, sizeof path) == 0);
    CHECK(write_file(path, k.b, k.n) == 0);
    for (no_mmap = 0; no_mmap < 2; no_mmap++) {
        atf_reader_options opt;
        atf_ktrace_reader r;
        memset(&opt, 0, sizeof opt);
        opt.no_mmap = no_mmap;
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open(&r, path, &opt));
        CHECK(strcmp(r.path, path) == 0);
        CHECK_EQ(560, r.file_size);
        check_header_fields(&r, T_HEADER_SIZE);
        check_typical_chunks(&r, r.image.data);
        atf_ktrace_reader_close(&r);
    }
    {
        atf_ktrace_reader r;
        atf_ktrace_chunk c;
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_open(&r, path, NULL));
        CHECK_RESULT(ATF_OK, atf_ktrace_reader_next(&r, &c));
        atf_ktrace_reader_close(&r);
    }
    /* an empty file, then a missing one */
    CHECK(write_file(path, k.b, 0) == 0);
    {
        atf_ktrace_reader r;
        CHECK_RESULT(ATF_E_TRUNCATED, atf_ktrace_reader_open(&r, path, NULL));
        CHECK(strcmp(r.error.path, path) == 0);
    }
    CHECK(remove(path) == 0);
    {
        atf_ktrace_reader r;
        CHECK_RESULT(ATF_E_NOT_FOUND, atf_ktrace_reader_open(&r, path, NULL));
        CHECK(strcmp(r.error.path, path) == 0);
        CHECK(r.error.sys_errno != 0);
        CHECK_RESULT(ATF_E_ARG, atf_ktrace_reader_open(&r, NULL, NULL));
    }
}

static const test_case tests[] = {
    { "typical_file_layout", typical_file_layout },
    { "typical_file", typical_file },
    { "typical_file_optional_padding", typical_file_optional_padding },
    { "zero_chunks", zero_chunks },
    { "unknown_tags", unknown_tags },
    { "truncated_chunk", truncated_chunk },
    { "header_chunk_crossing_header_end", header_chunk_crossing_header_end },
    { "bad_magic", bad_magic },
    { "swapped_magic", swapped_magic },
    { "short_file", short_file },
    { "header_size_past_eof", header_size_past_eof },
    { "header_size_too_small", header_size_too_small },
    { "zero_timebase", zero_timebase },
    { "time_conversion", time_conversion },
    { "mutations_never_crash", mutations_never_crash },
    { "file_open", file_open },
};

HARNESS_MAIN("ktrace", tests)
