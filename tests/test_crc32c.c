/* test_crc32c.c - CRC32-C: known answers, every implementation against the portable one
 * and against a bit-at-a-time reference, incremental use, bounds, and the dispatch. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "scratch_dir.h"

#include <stdlib.h>

#if defined(ATF__ARCH_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
#  include <cpuid.h>
#elif defined(ATF__ARCH_X64) && defined(ATF__CC_MSVC)
#  include <intrin.h>
#endif
#if defined(ATF__ARCH_ARM64) && defined(ATF__OS_LINUX)
#  include <sys/auxv.h>
#endif

/* Every path a caller can force; the two folding widths are SSE42 held to one of them. */
static const atf_crc32c_impl all_impls[] = {ATF_CRC32C_SW, ATF_CRC32C_SSE42, ATF_CRC32C_ARMV8,
                                            ATF_CRC32C_AVX2, ATF_CRC32C_AVX512};
#define IMPL_COUNT (sizeof all_impls / sizeof all_impls[0])

/* The definition itself, one bit at a time: nothing shared with the code under test. */
static uint32_t reference_crc(uint32_t crc, const uint8_t *p, size_t n) {
    size_t i;
    int bit;
    crc = ~crc;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (bit = 0; bit < 8; bit++) crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

/* CRC of buf through `impl`; the test fails when the implementation is unavailable. */
static uint32_t crc_with(atf_crc32c_impl impl, uint32_t crc, const void *buf, size_t len) {
    int ok = -1;
    uint32_t r = atf_crc32c_update_with(impl, crc, buf, len, &ok);
    CHECK_EQ(1, ok);
    return r;
}

static void test_known_answer(void) {
    size_t i;
    CHECK_EQ(0xE3069283u, atf_crc32c("123456789", 9));
    CHECK_EQ(0xE3069283u, atf_crc32c_update(0, "123456789", 9));
    CHECK_EQ(0xE3069283u, crc_with(ATF_CRC32C_AUTO, 0, "123456789", 9));
    for (i = 0; i < IMPL_COUNT; i++) {
        if (!atf_crc32c_available(all_impls[i])) continue;
        CHECK_EQ(0xE3069283u, crc_with(all_impls[i], 0, "123456789", 9));
    }
    CHECK_EQ(0xE3069283u, reference_crc(0, (const uint8_t *)"123456789", 9));
    CHECK_EQ(0u, atf_crc32c(NULL, 0));
    CHECK_EQ(0x12345678u, atf_crc32c_update(0x12345678u, NULL, 0));
}

/* RFC 3720 (iSCSI), appendix B.4. */
static void test_rfc3720_vectors(void) {
    uint8_t zeros[32], ones[32], up[32], down[32];
    size_t i;
    memset(zeros, 0, sizeof zeros);
    memset(ones, 0xFF, sizeof ones);
    for (i = 0; i < 32; i++) {
        up[i] = (uint8_t)i;
        down[i] = (uint8_t)(31 - i);
    }
    CHECK_EQ(0x8A9136AAu, atf_crc32c(zeros, 32));
    CHECK_EQ(0x62A8AB43u, atf_crc32c(ones, 32));
    CHECK_EQ(0x46DD794Eu, atf_crc32c(up, 32));
    CHECK_EQ(0x113FDB5Cu, atf_crc32c(down, 32));
    for (i = 0; i < IMPL_COUNT; i++) {
        atf_crc32c_impl impl = all_impls[i];
        if (!atf_crc32c_available(impl)) continue;
        CHECK_EQ(0x8A9136AAu, crc_with(impl, 0, zeros, 32));
        CHECK_EQ(0x62A8AB43u, crc_with(impl, 0, ones, 32));
        CHECK_EQ(0x46DD794Eu, crc_with(impl, 0, up, 32));
        CHECK_EQ(0x113FDB5Cu, crc_with(impl, 0, down, 32));
    }
}

#if defined(ATF__CRC32C_X64)
/* x^n mod P, reflected; the same definition as tools/gen/crc32c_tables.c, written again. */
static uint32_t xpow_mod(unsigned n) {
    uint32_t v = 0x80000000u;
    while (n--) v = (v & 1u) ? (v >> 1) ^ 0x82F63B78u : v >> 1;
    return v;
}
#endif

/* The pasted tables agree with their definition (a stale paste fails here first). */
static void test_generated_tables(void) {
    unsigned k, b;
    int bad = 0;
    for (b = 0; b < 256; b++) {
        uint8_t msg[16];
        memset(msg, 0, sizeof msg);
        msg[0] = (uint8_t)b;
        /* The raw register after byte b and k zero bytes, from a zero register. */
        for (k = 0; k < 16; k++) {
            uint32_t want = ~reference_crc(0xFFFFFFFFu, msg, k + 1);
            if (atf__crc32c__table[k][b] != want && bad++ < 5)
                CHECK_EQ(want, atf__crc32c__table[k][b]);
        }
    }
    CHECK_EQ(0, bad);
#if defined(ATF__CRC32C_X64)
    {
        static const size_t blocks[ATF__CRC32C_LEVELS] = {ATF__CRC32C_BLOCKS};
        size_t i;
        for (i = 0; i < ATF__CRC32C_LEVELS; i++) {
            CHECK(blocks[i] % 8 == 0 && blocks[i] >= 16);
            CHECK(i == 0 || blocks[i] < blocks[i - 1]);
            CHECK_EQ(xpow_mod((unsigned)(16 * blocks[i] - 33)), atf__crc32c__merge[i][0]);
            CHECK_EQ(xpow_mod((unsigned)(8 * blocks[i] - 33)), atf__crc32c__merge[i][1]);
        }
    }
#endif
#if defined(ATF__CRC32C_AVX2)
    {
        /* the mixed steps' jumps, and the 3-way levels whose merge constants they use */
        static const size_t blocks[ATF__CRC32C_LEVELS] = {ATF__CRC32C_BLOCKS};
        CHECK_EQ(512, blocks[1]);
        CHECK_EQ(64, blocks[2]);
        CHECK_EQ(ATF__CRC32C_MIX_LONG, 1536 + 3 * blocks[1]);
        CHECK_EQ(ATF__CRC32C_MIX_SHORT, 256 + 3 * blocks[2]);
        CHECK_EQ(xpow_mod(8 * (256 + 3 * 512) + 31), atf__crc32c__mix_jump[0][0]);
        CHECK_EQ(xpow_mod(8 * (256 + 3 * 512) - 33), atf__crc32c__mix_jump[0][1]);
        CHECK_EQ(xpow_mod(8 * (256 + 3 * 64) + 31), atf__crc32c__mix_jump[1][0]);
        CHECK_EQ(xpow_mod(8 * (256 + 3 * 64) - 33), atf__crc32c__mix_jump[1][1]);
    }
#endif
#if defined(ATF__CRC32C_AVX512)
    {
        static const unsigned dist[5] = {2048, 512, 384, 256, 128};
        size_t i;
        for (i = 0; i < 5; i++) {
            CHECK_EQ(xpow_mod(dist[i] + 31), atf__crc32c__fold[i][0]);
            CHECK_EQ(xpow_mod(dist[i] - 33), atf__crc32c__fold[i][1]);
        }
    }
#endif
}

#if defined(ATF__CRC32C_X64)
/* The private x86-64 paths, called directly on the raw register: the 3-way path (which
 * the public SSE42 reaches only below the folding minimum on CPUs with VPCLMULQDQ) and
 * each folding width this CPU runs. */
typedef uint32_t (*raw_path_fn)(uint32_t crc, const uint8_t *p, size_t n);
typedef struct raw_path {
    const char *name;
    raw_path_fn fn;
    atf_crc32c_impl needs; /* the bit of atf__crc32c__hw_paths() the path needs */
    size_t min_len;        /* the path's smallest input */
    size_t max_len;        /* the longest input of the every-length sweep */
} raw_path;

static const raw_path raw_paths[] = {
    {"3-way", atf__crc32c__sse42, ATF_CRC32C_SSE42, 0, 3 * 4096 + 600},
#  if defined(ATF__CRC32C_AVX2)
    /* past two long mixed steps, then the short ones */
    {"avx2 folding", atf__crc32c__avx2, ATF_CRC32C_AVX2, ATF__CRC32C_FOLD_MIN,
     256 + 2 * ATF__CRC32C_MIX_LONG + 4 * ATF__CRC32C_MIX_SHORT},
#  endif
#  if defined(ATF__CRC32C_AVX512)
    {"avx512 folding", atf__crc32c__avx512, ATF_CRC32C_AVX512, ATF__CRC32C_FOLD_MIN, 4096},
#  endif
};

static void test_x64_paths_agree(void) {
    enum { MAXBUF = 1 << 20 };
    uint8_t *mem = (uint8_t *)malloc(MAXBUF + 64);
    long hw = atf__crc32c__hw_paths();
    int reported = 0;
    size_t i, len, align, round;
    if (!mem) {
        CHECK(mem != NULL);
        return;
    }
    rng_fill(mem, MAXBUF + 64);
    for (i = 0; i < sizeof raw_paths / sizeof raw_paths[0]; i++) {
        const raw_path *path = &raw_paths[i];
        if (!(hw >> path->needs & 1L)) {
            printf("  %s: not on this CPU, skipped\n", path->name);
            continue;
        }
        printf("  %s: runs here\n", path->name);
        for (round = 0; round < 40; round++) {
            uint32_t seed = (uint32_t)rng_next();
            size_t n = round < 4 ? (size_t)MAXBUF - round
                                 : 1 + rng_below(round < 20 ? 20000 : MAXBUF);
            const uint8_t *p = mem + rng_below(64);
            uint32_t want = atf__crc32c__sw(seed, p, n);
            if (n >= path->min_len && path->fn(seed, p, n) != want && reported++ < 5) {
                printf("  %s: len %zu\n", path->name, n);
                CHECK_EQ(want, path->fn(seed, p, n));
            }
        }
        /* Every length around the block and accumulator boundaries, at a few alignments. */
        for (align = 0; align < 64; align += 9)
            for (len = path->min_len; len <= path->max_len; len++) {
                const uint8_t *p = mem + align;
                uint32_t seed = (uint32_t)(len * 0x9E3779B1u);
                uint32_t want = atf__crc32c__sw(seed, p, len);
                if (path->fn(seed, p, len) != want && reported++ < 5) {
                    printf("  %s: len %zu align %zu\n", path->name, len, align);
                    CHECK_EQ(want, path->fn(seed, p, len));
                }
            }
    }
    CHECK_EQ(0, reported);
    free(mem);
}
#endif

/* Every length 0..4096 at every start alignment 0..63: each hardware path == software. */
static void test_hw_matches_sw_every_length_and_alignment(void) {
    enum { MAXLEN = 4096, ALIGNS = 64 };
    uint8_t *mem = (uint8_t *)malloc(MAXLEN + ALIGNS + 64);
    uint8_t *base;
    size_t i, len, align;
    int reported = 0;
    if (!mem) {
        CHECK(mem != NULL);
        return;
    }
    base = mem + (64 - ((uintptr_t)mem & 63u)); /* 64-byte aligned: offsets are alignments */
    rng_fill(base, MAXLEN + ALIGNS - 1);
    for (i = 0; i < IMPL_COUNT; i++) {
        atf_crc32c_impl impl = all_impls[i];
        if (impl == ATF_CRC32C_SW) continue;
        if (!atf_crc32c_available(impl)) {
            printf("  %s: not on this CPU or build, skipped\n", atf_crc32c_impl_str(impl));
            continue;
        }
        for (align = 0; align < ALIGNS; align++) {
            for (len = 0; len <= MAXLEN; len++) {
                uint32_t seed = (uint32_t)(len * 2654435761u);
                uint32_t want = crc_with(ATF_CRC32C_SW, seed, base + align, len);
                uint32_t got = crc_with(impl, seed, base + align, len);
                if (want != got && reported++ < 5) {
                    printf("  %s: len %zu align %zu\n", atf_crc32c_impl_str(impl), len, align);
                    CHECK_EQ(want, got);
                }
            }
        }
    }
    CHECK_EQ(0, reported);
    /* And the software path itself against the definition, on the short lengths. */
    for (len = 0; len <= 300; len++)
        for (align = 0; align < 8; align++)
            CHECK_EQ(reference_crc(7, base + align, len),
                     crc_with(ATF_CRC32C_SW, 7, base + align, len));
    free(mem);
}

/* Random buffers up to 1 MiB, fed in random pieces, through every path: all agree with
 * the one-shot software result and with the bit-at-a-time reference. */
static void test_random_buffers_in_random_pieces(void) {
    enum { MAXBUF = 1 << 20, ROUNDS = 12 };
    uint8_t *buf = (uint8_t *)malloc(MAXBUF + 8);
    size_t round, i;
    if (!buf) {
        CHECK(buf != NULL);
        return;
    }
    for (round = 0; round < ROUNDS; round++) {
        size_t len = round == 0   ? (size_t)MAXBUF
                     : round == 1 ? (size_t)MAXBUF - 1
                                  : 1 + rng_below(MAXBUF);
        size_t start = rng_below(8);
        const uint8_t *p = buf + start;
        uint32_t want, ref;
        rng_fill(buf, len + start);
        want = crc_with(ATF_CRC32C_SW, 0, p, len);
        ref = reference_crc(0, p, len);
        CHECK_EQ(ref, want);
        for (i = 0; i < IMPL_COUNT + 1; i++) {
            atf_crc32c_impl impl = i < IMPL_COUNT ? all_impls[i] : ATF_CRC32C_AUTO;
            size_t done = 0;
            uint32_t crc = 0;
            if (!atf_crc32c_available(impl)) continue;
            CHECK_EQ(want, crc_with(impl, 0, p, len));
            while (done < len) {
                /* Mostly short pieces, sometimes long ones, so every block size is hit. */
                size_t cap = (rng_next() & 3) ? 300 : len - done;
                size_t piece = 1 + rng_below(cap < len - done ? cap : len - done);
                crc = crc_with(impl, crc, p + done, piece);
                done += piece;
            }
            CHECK_EQ(want, crc);
        }
    }
    free(buf);
}

/* update(update(0, a), b) == crc(a||b) at every split point, for each path. */
static void test_incremental_equals_one_shot(void) {
    uint8_t buf[1500];
    size_t i, split, split2;
    rng_fill(buf, sizeof buf);
    for (i = 0; i < IMPL_COUNT + 1; i++) {
        atf_crc32c_impl impl = i < IMPL_COUNT ? all_impls[i] : ATF_CRC32C_AUTO;
        uint32_t whole;
        if (!atf_crc32c_available(impl)) continue;
        whole = crc_with(impl, 0, buf, sizeof buf);
        for (split = 0; split <= sizeof buf; split++) {
            uint32_t c = crc_with(impl, 0, buf, split);
            CHECK_EQ(whole, crc_with(impl, c, buf + split, sizeof buf - split));
        }
        for (split = 0; split <= 200; split += 7)
            for (split2 = split; split2 <= 1400; split2 += 61) {
                uint32_t c = crc_with(impl, 0, buf, split);
                c = crc_with(impl, c, buf + split, split2 - split);
                CHECK_EQ(whole, crc_with(impl, c, buf + split2, sizeof buf - split2));
            }
    }
    CHECK_EQ(atf_crc32c(buf, sizeof buf),
             atf_crc32c_update(atf_crc32c_update(0, buf, 700), buf + 700, sizeof buf - 700));
}

#if !defined(ATF__OS_WINDOWS)
/* Data placed flush against inaccessible pages: a read before the start or past the end
 * of the buffer faults, whatever the length and whichever path. */
static void test_reads_stay_in_bounds(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len, i;
    uint8_t *map = (uint8_t *)mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *mid;
    int reported = 0;
    if (map == (uint8_t *)MAP_FAILED) {
        CHECK(map != (uint8_t *)MAP_FAILED);
        return;
    }
    mid = map + page;
    rng_fill(mid, page);
    CHECK_EQ(0, mprotect(map, page, PROT_NONE));
    CHECK_EQ(0, mprotect(mid + page, page, PROT_NONE));
    for (i = 0; i < IMPL_COUNT; i++) {
        atf_crc32c_impl impl = all_impls[i];
        if (!atf_crc32c_available(impl)) continue;
        for (len = 0; len <= page; len++) {
            uint32_t at_end = crc_with(impl, 0, mid + page - len, len);
            uint32_t at_start = crc_with(impl, 0, mid, len);
            if (at_end != reference_crc(0, mid + page - len, len) && reported++ < 5)
                CHECK_EQ(reference_crc(0, mid + page - len, len), at_end);
            if (at_start != reference_crc(0, mid, len) && reported++ < 5)
                CHECK_EQ(reference_crc(0, mid, len), at_start);
        }
    }
    CHECK_EQ(0, reported);
    munmap(map, 3 * page);
}
#endif

static void test_select_and_active(void) {
    atf_crc32c_impl before = atf_crc32c_active();
    size_t i;
    int ok = -1;
    CHECK(before != ATF_CRC32C_AUTO);
    CHECK(atf_crc32c_available(before));

    CHECK_RESULT(ATF_OK, atf_crc32c_select(ATF_CRC32C_SW));
    CHECK_EQ(ATF_CRC32C_SW, atf_crc32c_active());
    CHECK_EQ(0xE3069283u, atf_crc32c("123456789", 9));

    CHECK_RESULT(ATF_OK, atf_crc32c_select(ATF_CRC32C_AUTO));
    CHECK(atf_crc32c_active() != ATF_CRC32C_AUTO);
    CHECK_EQ(atf__crc32c__best(), atf_crc32c_active());

    for (i = 0; i < IMPL_COUNT; i++) {
        atf_crc32c_impl impl = all_impls[i];
        if (atf_crc32c_available(impl)) {
            CHECK_RESULT(ATF_OK, atf_crc32c_select(impl));
            CHECK_EQ(impl, atf_crc32c_active());
            CHECK_EQ(0xE3069283u, atf_crc32c("123456789", 9));
        } else {
            atf_crc32c_impl was = atf_crc32c_active();
            CHECK_RESULT(ATF_E_UNSUPPORTED, atf_crc32c_select(impl));
            CHECK_EQ(was, atf_crc32c_active());
            CHECK_EQ(0u, atf_crc32c_update_with(impl, 0, "123456789", 9, &ok));
            CHECK_EQ(0, ok);
            CHECK_EQ(0u, atf_crc32c_update_with(impl, 0, "123456789", 9, NULL));
        }
    }
    /* On any machine one of the two hardware paths is missing, and a folding width runs
     * only where the path it holds to that width does. */
    CHECK(!atf_crc32c_available(ATF_CRC32C_SSE42) || !atf_crc32c_available(ATF_CRC32C_ARMV8));
    CHECK(!atf_crc32c_available(ATF_CRC32C_AVX2) || atf_crc32c_available(ATF_CRC32C_SSE42));
    CHECK(!atf_crc32c_available(ATF_CRC32C_AVX512) || atf_crc32c_available(ATF_CRC32C_SSE42));
    CHECK(atf_crc32c_available(ATF_CRC32C_AUTO));
    CHECK(atf_crc32c_available(ATF_CRC32C_SW));
#ifndef __cplusplus /* values outside an enum's range: what a C caller can pass */
    CHECK(!atf_crc32c_available((atf_crc32c_impl)99));
    CHECK_RESULT(ATF_E_ARG, atf_crc32c_select((atf_crc32c_impl)99));
    CHECK_RESULT(ATF_E_ARG, atf_crc32c_select((atf_crc32c_impl)-1));
#endif

    CHECK(strcmp(atf_crc32c_impl_str(ATF_CRC32C_SW), "sw") == 0);
    CHECK(strcmp(atf_crc32c_impl_str(ATF_CRC32C_SSE42), "sse42") == 0);
    CHECK(strcmp(atf_crc32c_impl_str(ATF_CRC32C_ARMV8), "armv8") == 0);
    CHECK(strcmp(atf_crc32c_impl_str(ATF_CRC32C_AVX2), "avx2") == 0);
    CHECK(strcmp(atf_crc32c_impl_str(ATF_CRC32C_AVX512), "avx512") == 0);
#ifndef __cplusplus
    CHECK(atf_crc32c_impl_str((atf_crc32c_impl)99) != NULL);
#endif

    CHECK_RESULT(ATF_OK, atf_crc32c_select(before));
    CHECK_EQ(before, atf_crc32c_active());
}

/* The first-use choice takes the hardware path whenever the CPU has it. Runs first in the
 * table, so nothing has selected a path yet. */
static void test_auto_dispatch_chooses_hardware(void) {
    atf_crc32c_impl expected = ATF_CRC32C_SW;
#if defined(ATF__ARCH_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 20 & 1u) && (c >> 1 & 1u))
        expected = ATF_CRC32C_SSE42;
    printf("  cpu: sse4.2+pclmulqdq %s\n", expected == ATF_CRC32C_SSE42 ? "yes" : "no");
#elif defined(ATF__ARCH_X64) && defined(ATF__CC_MSVC)
    int r[4];
    __cpuid(r, 1);
    if (((unsigned)r[2] >> 20 & 1u) && ((unsigned)r[2] >> 1 & 1u)) expected = ATF_CRC32C_SSE42;
#elif defined(ATF__ARCH_ARM64) && defined(ATF__OS_LINUX)
    if (getauxval(AT_HWCAP) & (1u << 7)) expected = ATF_CRC32C_ARMV8; /* HWCAP_CRC32 */
    printf("  cpu: crc32 %s\n", expected == ATF_CRC32C_ARMV8 ? "yes" : "no");
#elif defined(ATF__ARCH_ARM64) && defined(ATF__OS_APPLE)
    expected = ATF_CRC32C_ARMV8;
#endif
#if defined(ATF_NO_HW_CRC)
    expected = ATF_CRC32C_SW;
#endif
    CHECK_EQ(expected, atf__crc32c__best());
    CHECK(atf_crc32c_available(expected));
#if defined(ATF_CRC32C_FORCE_SW)
    CHECK_EQ(ATF_CRC32C_SW, atf_crc32c_active());
#else
    CHECK_EQ(expected, atf_crc32c_active());
#endif
    printf("  active: %s\n", atf_crc32c_impl_str(atf_crc32c_active()));
}

/* The folding widths are offered exactly where the CPU and OS run them: cpuid read again
 * here, by the test's own code. */
static void test_folding_widths_follow_cpu(void) {
    int avx2 = 0, avx512 = 0;
#if defined(ATF__ARCH_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG) || \
                               defined(ATF__CC_MSVC))
    unsigned l1[4] = {0, 0, 0, 0}, l7[4] = {0, 0, 0, 0};
    uint64_t xcr0 = 0;
#  if defined(ATF__CC_MSVC)
    int r[4], i;
    __cpuid(r, 0);
    if (r[0] >= 7) {
        __cpuidex(r, 7, 0);
        for (i = 0; i < 4; i++) l7[i] = (unsigned)r[i];
    }
    __cpuid(r, 1);
    for (i = 0; i < 4; i++) l1[i] = (unsigned)r[i];
    if (l1[2] >> 27 & 1u) xcr0 = _xgetbv(0);
#  else
    if (!__get_cpuid(1, &l1[0], &l1[1], &l1[2], &l1[3])) l1[2] = 0;
    if (!__get_cpuid_count(7, 0, &l7[0], &l7[1], &l7[2], &l7[3])) l7[1] = l7[2] = 0;
    if (l1[2] >> 27 & 1u) {
        unsigned lo, hi;
        __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (uint64_t)hi << 32 | lo;
    }
#  endif
    {
        int base = (l1[2] >> 20 & 1u) && (l1[2] >> 1 & 1u);   /* SSE4.2, PCLMULQDQ */
        int vpclmul = base && (l7[2] >> 10 & 1u);             /* VPCLMULQDQ */
        avx2 = vpclmul && (l1[2] >> 28 & 1u) && (l7[1] >> 5 & 1u) && (xcr0 & 6u) == 6u;
        avx512 = vpclmul && (l7[1] >> 16 & 1u) && (xcr0 & 0xE6u) == 0xE6u;
    }
    printf("  cpu: avx2+vpclmulqdq %s, avx512f+vpclmulqdq %s\n", avx2 ? "yes" : "no",
           avx512 ? "yes" : "no");
#endif
#if !defined(ATF__CRC32C_AVX2)
    avx2 = 0;
#endif
#if !defined(ATF__CRC32C_AVX512)
    avx512 = 0;
#endif
    CHECK_EQ(avx2, atf_crc32c_available(ATF_CRC32C_AVX2));
    CHECK_EQ(avx512, atf_crc32c_available(ATF_CRC32C_AVX512));
    /* AUTO takes SSE42, which uses the widest of them by itself. */
    CHECK(atf__crc32c__best() != ATF_CRC32C_AVX2 && atf__crc32c__best() != ATF_CRC32C_AVX512);
}

#if defined(ATF__CRC32C_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
enum { XSTATE_YMM_HI128 = 1u << 2, XSTATE_ZMM_HI256 = 1u << 6 };

/* The state components in use (XGETBV with ECX = 1, XINUSE), or 0 when the CPU cannot
 * say (then *known is 0). */
static uint64_t xstate_in_use(int *known) {
    unsigned a = 0, b = 0, c = 0, d = 0, lo, hi;
    *known = __get_cpuid_count(0xD, 1, &a, &b, &c, &d) && (a >> 2 & 1u);
    if (!*known) return 0;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return (uint64_t)hi << 32 | lo;
}

/* The folding paths hand back the upper halves of the vector registers clean (VZEROUPPER
 * before the 3-way tail). Left in use, every later SSE instruction of the thread, the
 * tail's own and the caller's, pays a state transition: on a Xeon guest that cost 180 ns
 * a call, a 4 KiB buffer at 18 GB/s instead of 85. */
static void test_folding_leaves_upper_state_clean(void) {
    static const atf_crc32c_impl folding[] = {ATF_CRC32C_AVX512, ATF_CRC32C_AVX2};
    static const size_t lens[] = {256, 4096, 65536 + 13};
    const uint64_t upper = XSTATE_YMM_HI128 | XSTATE_ZMM_HI256;
    uint8_t *buf = (uint8_t *)malloc(65536 + 13);
    size_t i, j;
    int known;
    if (!buf) {
        CHECK(buf != NULL);
        return;
    }
    rng_fill(buf, 65536 + 13);
    for (i = 0; i < sizeof folding / sizeof folding[0]; i++) {
        if (!atf_crc32c_available(folding[i])) {
            printf("  %s: not on this CPU or build, skipped\n", atf_crc32c_impl_str(folding[i]));
            continue;
        }
        for (j = 0; j < sizeof lens / sizeof lens[0]; j++) {
            uint64_t before, after;
            __asm__ __volatile__("vzeroupper"); /* AVX is there: the path is available */
            before = xstate_in_use(&known) & upper;
            (void)crc_with(folding[i], 0, buf, lens[j]);
            after = xstate_in_use(&known) & upper;
            if (!known) {
                printf("  XINUSE not readable on this CPU, skipped\n");
                free(buf);
                return;
            }
            if (before) printf("  upper state reads in use after VZEROUPPER: not telling\n");
            if (after & ~before) printf("  %s, %zu bytes\n", atf_crc32c_impl_str(folding[i]), lens[j]);
            CHECK_EQ(0, after & ~before);
        }
    }
    free(buf);
}
#endif

static const test_case tests[] = {
    {"auto_dispatch_chooses_hardware", test_auto_dispatch_chooses_hardware},
    {"folding_widths_follow_cpu", test_folding_widths_follow_cpu},
    {"known_answer", test_known_answer},
    {"rfc3720_vectors", test_rfc3720_vectors},
    {"generated_tables", test_generated_tables},
    {"hw_matches_sw_every_length_and_alignment", test_hw_matches_sw_every_length_and_alignment},
#if defined(ATF__CRC32C_X64)
    {"x64_paths_agree", test_x64_paths_agree},
#endif
#if defined(ATF__CRC32C_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
    {"folding_leaves_upper_state_clean", test_folding_leaves_upper_state_clean},
#endif
    {"random_buffers_in_random_pieces", test_random_buffers_in_random_pieces},
    {"incremental_equals_one_shot", test_incremental_equals_one_shot},
#if !defined(ATF__OS_WINDOWS)
    {"reads_stay_in_bounds", test_reads_stay_in_bounds},
#endif
    {"select_and_active", test_select_and_active},
};

HARNESS_MAIN("crc32c", tests)
