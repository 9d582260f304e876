/* test_symbolize.c - naming functions offline from their module files (tools/symbolize.c,
 * tools/elf_symbols.h): ELF64 files built here byte by byte (which symbol holds an offset,
 * which tables and types count, versions, the tie rule of aliases, the build id note), the
 * same files damaged in every field that points somewhere, and truncated or scrambled
 * copies of this program's own file, which must never crash a lookup; then on Linux this
 * program's own functions, looked up by their address minus the load bias, and a session
 * whose manifest lists functions by location only, which `atf stats` must show by name
 * (and not when the build id differs). */
#include "atf.h"
#include "cli_embed.h"

#include "harness.h"
#include "cli_run.h"
#include "scratch_dir.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#  include <link.h>
#endif

/* ==== ELF64 files built in memory ===================================================== */
/* Layout: header, string table, symbol table, build id note, section headers (null,
 * symbol table, string table, note). The offsets of the parts are kept so that a test
 * can damage one field. */
enum { FE_CAP = 8192, FE_SYMS_MAX = 16 };

typedef struct fe_sym {
    const char *name;
    unsigned type;                   /* 2 FUNC, 10 GNU_IFUNC, 1 OBJECT, ... */
    uint16_t shndx;                  /* 0: undefined */
    uint64_t value, size;
    int local;                       /* 1: STB_LOCAL, 0: STB_GLOBAL */
} fe_sym;

typedef struct fe_file {
    uint8_t b[FE_CAP];
    size_t size;
    size_t strtab, symtab, note, shdrs;   /* where each part starts */
} fe_file;

static void fe_le16(uint8_t *p, uint64_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void fe_le32(uint8_t *p, uint64_t v) { fe_le16(p, v); fe_le16(p + 2, v >> 16); }
static void fe_le64(uint8_t *p, uint64_t v) { fe_le32(p, v); fe_le32(p + 4, v >> 32); }

static void fe_shdr(fe_file *f, size_t i, uint32_t type, uint64_t off, uint64_t size,
                    uint32_t link, uint64_t entsize) {
    uint8_t *h = f->b + f->shdrs + 64 * i;
    fe_le32(h + 4, type);
    fe_le64(h + 24, off);
    fe_le64(h + 32, size);
    fe_le32(h + 40, link);
    fe_le64(h + 56, entsize);
}

/* An ELF64 little-endian file with the symbols (after the null entry) in a table of type
 * tab_type (2 .symtab, 11 .dynsym) and a build id note of id_len bytes (none when 0). */
static void fe_build(fe_file *f, const fe_sym *syms, size_t n, uint32_t tab_type,
                     const uint8_t *id, size_t id_len) {
    size_t at, i, nsym = n + 1;
    memset(f, 0, sizeof *f);
    memcpy(f->b, "\177ELF", 4);
    f->b[4] = 2;                     /* ELFCLASS64 */
    f->b[5] = 1;                     /* little-endian */
    f->b[6] = 1;
    fe_le16(f->b + 16, 3);           /* ET_DYN */
    fe_le16(f->b + 18, 62);
    f->strtab = at = 64;
    f->b[at++] = 0;
    for (i = 0; i < n; i++) {
        size_t len = strlen(syms[i].name) + 1;
        memcpy(f->b + at, syms[i].name, len);
        at += len;
    }
    f->symtab = at = (at + 7) & ~(size_t)7;
    for (i = 0; i < n; i++) {
        uint8_t *s = f->b + f->symtab + 24 * (i + 1);
        size_t name = 1, k;
        for (k = 0; k < i; k++) name += strlen(syms[k].name) + 1;
        fe_le32(s, name);
        s[4] = (uint8_t)((syms[i].local ? 0x00 : 0x10) | syms[i].type); /* binding, type */
        fe_le16(s + 6, syms[i].shndx);
        fe_le64(s + 8, syms[i].value);
        fe_le64(s + 16, syms[i].size);
    }
    f->note = at = f->symtab + 24 * nsym;
    if (id_len) {
        fe_le32(f->b + at, 4);
        fe_le32(f->b + at + 4, id_len);
        fe_le32(f->b + at + 8, 3); /* NT_GNU_BUILD_ID */
        memcpy(f->b + at + 12, "GNU", 4);
        memcpy(f->b + at + 16, id, id_len);
        at += 16 + ((id_len + 3) & ~(size_t)3);
    }
    f->shdrs = at = (at + 7) & ~(size_t)7;
    fe_le64(f->b + 40, f->shdrs);    /* e_shoff */
    fe_le16(f->b + 58, 64);          /* e_shentsize */
    fe_le16(f->b + 60, 4);           /* e_shnum */
    fe_shdr(f, 1, tab_type, f->symtab, 24 * nsym, 2, 24);
    fe_shdr(f, 2, 3, f->strtab, f->symtab - f->strtab, 0, 0);
    fe_shdr(f, 3, 7, f->note, id_len ? 16 + ((id_len + 3) & ~(size_t)3) : 0, 0, 0);
    f->size = at + 4 * 64;
}

/* The name lookup gives for offset in f, "" when none (or when f does not open). */
static const char *fe_lookup(const fe_file *f, uint64_t offset, char *buf, size_t cap) {
    sym_module m;
    const char *name;
    buf[0] = '\0';
    if (sym_module_open_memory(&m, f->b, f->size) != ATF_OK) return buf;
    name = sym_module_lookup(&m, offset);
    if (name) snprintf(buf, cap, "%s", name);
    sym_module_close(&m);
    return buf;
}

/* Whether the lookup of offset in f gives `want`; what it gave is printed when not. */
static int fe_names(const fe_file *f, uint64_t offset, const char *want) {
    char buf[64];
    if (strcmp(fe_lookup(f, offset, buf, sizeof buf), want) == 0) return 1;
    printf("  offset 0x%" PRIx64 ": expected \"%s\", found \"%s\"\n", offset, want, buf);
    return 0;
}

static const fe_sym fe_syms[] = {
    {"big", 2, 1, 0x1000, 0x100, 0},       /* holds small and the label */
    {"small", 2, 1, 0x1040, 0x10, 0},
    {"label", 2, 1, 0x1080, 0, 0},         /* size 0: only its own address */
    {"ifunc", 10, 1, 0x2000, 0x20, 0},
    {"object", 1, 1, 0x3000, 0x100, 0},    /* data: never a function's name */
    {"undefined", 2, 0, 0x4000, 0x100, 0}, /* an import: not in this file */
    {"tail", 2, 1, 0xFFFFFFFFFFFFFFF0ull, 0x10, 0},
};
enum { FE_NSYMS = sizeof fe_syms / sizeof fe_syms[0] };

static void test_lookup(void) {
    static const uint8_t id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                    11, 12, 13, 14, 15, 0xff };
    static fe_file f;
    sym_module m;
    char buf[64];
    fe_build(&f, fe_syms, FE_NSYMS, 2, id, sizeof id);
    CHECK_RESULT(ATF_OK, sym_module_open_memory(&m, f.b, f.size));
    CHECK_EQ(5, m.count); /* big, small, label, ifunc, tail */
    CHECK(strcmp(m.build_id, "deadbeef0102030405060708090a0b0c0d0e0fff") == 0);
    sym_module_close(&m);
    CHECK(strcmp(fe_lookup(&f, 0x1000, buf, sizeof buf), "big") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x1001, buf, sizeof buf), "big") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x1040, buf, sizeof buf), "small") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x104F, buf, sizeof buf), "small") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x1050, buf, sizeof buf), "big") == 0); /* past small */
    CHECK(strcmp(fe_lookup(&f, 0x1080, buf, sizeof buf), "label") == 0); /* exact wins */
    CHECK(strcmp(fe_lookup(&f, 0x1081, buf, sizeof buf), "big") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x10FF, buf, sizeof buf), "big") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x1100, buf, sizeof buf), "") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x0FFF, buf, sizeof buf), "") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x2010, buf, sizeof buf), "ifunc") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x3000, buf, sizeof buf), "") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x4000, buf, sizeof buf), "") == 0);
    CHECK(strcmp(fe_lookup(&f, UINT64_MAX, buf, sizeof buf), "tail") == 0);
    CHECK(strcmp(fe_lookup(&f, 0, buf, sizeof buf), "") == 0);

    /* .dynsym serves when there is no .symtab; .symtab wins when both are there */
    fe_build(&f, fe_syms, 2, 11, NULL, 0);
    CHECK(strcmp(fe_lookup(&f, 0x1041, buf, sizeof buf), "small") == 0);
    CHECK_RESULT(ATF_OK, sym_module_open_memory(&m, f.b, f.size));
    CHECK(m.build_id[0] == '\0');
    sym_module_close(&m);
    fe_shdr(&f, 3, 2, f.symtab, 24 * 2, 2, 24); /* a .symtab of big alone, after it */
    CHECK(strcmp(fe_lookup(&f, 0x1041, buf, sizeof buf), "big") == 0);
}

/* Versioned names (.symver) read as the tracer names them: without the version, and on
 * one address the default version ("@@") before another, before a plain name. */
static void test_versions(void) {
    static const fe_sym syms[] = {
        {"plain_alias", 2, 1, 0x1000, 0x10, 0},
        {"open@V_1", 2, 1, 0x1000, 0x10, 0},
        {"open@@V_2", 2, 1, 0x1000, 0x10, 0},
        {"close@V_1", 2, 1, 0x2000, 0x10, 0}, /* no default version: its own name */
        {"@V_3", 2, 1, 0x3000, 0x10, 0},      /* nothing before the '@': kept whole */
    };
    static fe_file f;
    char buf[64];
    fe_build(&f, syms, sizeof syms / sizeof syms[0], 2, NULL, 0);
    CHECK(strcmp(fe_lookup(&f, 0x1004, buf, sizeof buf), "open") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x2000, buf, sizeof buf), "close") == 0);
    CHECK(strcmp(fe_lookup(&f, 0x3000, buf, sizeof buf), "@V_3") == 0);
    fe_build(&f, syms, 1, 2, NULL, 0);
    CHECK(strcmp(fe_lookup(&f, 0x1000, buf, sizeof buf), "plain_alias") == 0);
}

/* Aliases (tools/elf_symbols.h's tie rule): a sized symbol before a label, a global
 * before a local, fewer leading underscores, then the name's bytes; the same answer
 * whatever the order in the file. (Versions: test_versions.) */
static void test_aliases(void) {
    static const fe_sym syms[] = {
        {"a_static_impl", 2, 1, 0x1000, 0x10, 1},
        {"z_exported", 2, 1, 0x1000, 0x10, 0},   /* global: before the local */
        {"__libc_read", 2, 1, 0x2000, 0x10, 0},
        {"read", 2, 1, 0x2000, 0x10, 0},         /* no leading underscore */
        {"__read", 2, 1, 0x2000, 0x10, 0},
        {"scale_zeta", 2, 1, 0x3000, 0x10, 0},
        {"scale_alpha", 2, 1, 0x3000, 0x10, 0},  /* the first by its bytes */
        {"a_label", 2, 1, 0x4000, 0, 0},
        {"b_body", 2, 1, 0x4000, 0x20, 0},       /* sized: before the label */
    };
    static const struct { uint64_t offset; const char *name; } expected[] = {
        {0x1000, "z_exported"}, {0x1008, "z_exported"}, {0x2000, "read"},
        {0x3004, "scale_alpha"}, {0x4000, "b_body"}, {0x4010, "b_body"},
    };
    enum { N = sizeof syms / sizeof syms[0] };
    static fe_file f;
    fe_sym reversed[N];
    size_t i, round;
    for (i = 0; i < N; i++) reversed[i] = syms[N - 1 - i];
    for (round = 0; round < 2; round++) {
        fe_build(&f, round ? reversed : syms, N, 2, NULL, 0);
        for (i = 0; i < sizeof expected / sizeof expected[0]; i++)
            CHECK(fe_names(&f, expected[i].offset, expected[i].name));
    }
    /* a local alone is named */
    fe_build(&f, syms, 1, 2, NULL, 0);
    CHECK(fe_names(&f, 0x1000, "a_static_impl"));
}

/* ==== damaged files =================================================================== */
/* Opens data and, when it opens, looks up offsets all over: whatever the bytes, no crash
 * (the sanitizers watch), and every name found is a NUL-terminated string. */
static atf_result fuzz_open(const uint8_t *data, size_t size) {
    static const uint64_t offsets[] = { 0, 1, 0x1000, 0x1040, 0x1080, 0x2000, 0x10000,
                                        0x7FFFFFFFFFFFFFFFull, UINT64_MAX };
    sym_module m;
    size_t i;
    atf_result rc = sym_module_open_memory(&m, data, size);
    if (rc != ATF_OK) return rc;
    for (i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        const char *name = sym_module_lookup(&m, offsets[i]);
        if (name) CHECK(strlen(name) < m.strtab_size);
    }
    for (i = 0; i < m.count; i++) {
        const char *name = sym_module_lookup(&m, m.funcs[i].value);
        CHECK(name != NULL);
    }
    sym_module_close(&m);
    return rc;
}

/* Each field of a built file that points somewhere, set to values that lie. */
static void test_damaged_fields(void) {
    static const uint64_t lies[] = { 0, 1, 23, 24, 63, 64, 0x7FFFFFFF, 0xFFFFFFFFull,
                                     0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFF0ull, UINT64_MAX };
    static const uint8_t id[4] = { 1, 2, 3, 4 };
    /* (offset in the file, width) of each field: header offsets and counts, then the
     * symbol table's, string table's and note's section header fields */
    static fe_file base, f;
    size_t fields[32][2], nf = 0, i, k;
    fe_build(&base, fe_syms, FE_NSYMS, 2, id, sizeof id);
#define FIELD(off, w) (fields[nf][0] = (off), fields[nf][1] = (w), nf++)
    FIELD(32, 8); FIELD(40, 8); FIELD(54, 2); FIELD(56, 2); FIELD(58, 2); FIELD(60, 2);
    for (k = 1; k < 4; k++) {
        size_t h = base.shdrs + 64 * k;
        FIELD(h + 4, 4); FIELD(h + 24, 8); FIELD(h + 32, 8); FIELD(h + 40, 4); FIELD(h + 56, 8);
    }
    FIELD(base.symtab + 24, 4);      /* the first symbol's name */
    FIELD(base.note, 4);             /* the note's namesz, descsz */
    FIELD(base.note + 4, 4);
#undef FIELD
    for (i = 0; i < nf; i++) {
        for (k = 0; k < sizeof lies / sizeof lies[0]; k++) {
            f = base;
            if (fields[i][1] == 2) fe_le16(f.b + fields[i][0], lies[k]);
            else if (fields[i][1] == 4) fe_le32(f.b + fields[i][0], lies[k]);
            else fe_le64(f.b + fields[i][0], lies[k]);
            fuzz_open(f.b, f.size);
        }
    }
    /* a string table without its final NUL: the last name ends at the table's end */
    f = base;
    fe_le64(f.b + base.shdrs + 64 * 2 + 32, base.symtab - base.strtab - 1);
    fuzz_open(f.b, f.size);
    /* more than 0xff00 sections: the count in section 0, here far too large */
    f = base;
    fe_le16(f.b + 60, 0);
    fe_le64(f.b + base.shdrs + 32, 1ull << 40);
    CHECK_RESULT(ATF_E_CORRUPT, fuzz_open(f.b, f.size));
}

static void test_not_elf(void) {
    static fe_file f;
    sym_module m;
    static const uint8_t junk[] = "not an ELF file at all, just text";
    fe_build(&f, fe_syms, 1, 2, NULL, 0);
    CHECK_RESULT(ATF_E_MAGIC, sym_module_open_memory(&m, f.b, 0));
    CHECK_RESULT(ATF_E_MAGIC, sym_module_open_memory(&m, f.b, 4));
    CHECK_RESULT(ATF_E_MAGIC, sym_module_open_memory(&m, f.b, 63));
    CHECK_RESULT(ATF_E_MAGIC, sym_module_open_memory(&m, junk, sizeof junk));
    f.b[4] = 1; /* ELFCLASS32 */
    CHECK_RESULT(ATF_E_MAGIC, sym_module_open_memory(&m, f.b, f.size));
    f.b[4] = 2;
    f.b[5] = 2; /* big-endian */
    CHECK_RESULT(ATF_E_MAGIC, sym_module_open_memory(&m, f.b, f.size));
    f.b[5] = 1;
    CHECK_RESULT(ATF_E_CORRUPT, sym_module_open_memory(&m, f.b, f.size - 1)); /* headers cut */
    CHECK_RESULT(ATF_E_IO, sym_module_open(&m, "/nonexistent/module/file"));
}

/* ==== this program's own file ========================================================= */
/* Two functions of this program to look up by address: kept out of line and apart (they
 * are called through volatile pointers, so no clone of them is made for a constant).
 * Built as C++ their symbols are mangled names that hold these. */
#if defined(__GNUC__) && !defined(__clang__)
#  define SELF_FN __attribute__((noinline, noclone, used))
#elif defined(__clang__)
#  define SELF_FN __attribute__((noinline, used))
#else
#  define SELF_FN
#endif

static SELF_FN uint64_t symtest_known_one(uint64_t x) { return x * 0x9E3779B97F4A7C15ull + 1; }
static SELF_FN uint64_t symtest_known_two(uint64_t x) {
    return (x ^ (x >> 7)) + symtest_known_one(x ^ 0x55);
}

static uint64_t (*volatile self_one)(uint64_t) = symtest_known_one;
static uint64_t (*volatile self_two)(uint64_t) = symtest_known_two;

#if defined(__linux__)
static int self_first_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_addr;
    return 1; /* the first object is the program itself */
}

/* This program's file and load bias: 1, or 0 when they cannot be had here or the host's
 * files are not ELF64 little-endian (a 32-bit or big-endian target). */
static int self_module(char *path, size_t cap, uint64_t *bias) {
    uint16_t one = 1;
    uint8_t low;
    ssize_t n = readlink("/proc/self/exe", path, cap - 1);
    memcpy(&low, &one, 1);
    if (n <= 0 || sizeof(void *) != 8 || low != 1) return 0;
    path[n] = '\0';
    *bias = 0;
    dl_iterate_phdr(self_first_object, bias);
    return 1;
}
#else
static int self_module(char *path, size_t cap, uint64_t *bias) {
    (void)path, (void)cap, (void)bias;
    return 0;
}
#endif

/* The offsets of the two functions in this program's file (address minus load bias). */
static uint64_t self_offset(uint64_t (*fn)(uint64_t), uint64_t bias) {
    return (uint64_t)(uintptr_t)fn - bias;
}

static void test_self(void) {
    char path[CLI_PATH_MAX];
    uint64_t bias, one, two;
    sym_module m;
    const char *name;
    if (!self_module(path, sizeof path, &bias)) {
        printf("  self: skipped (no ELF64 little-endian /proc/self/exe here)\n");
        return;
    }
    CHECK_EQ(symtest_known_one(3) + symtest_known_two(3), self_one(3) + self_two(3));
    one = self_offset(self_one, bias);
    two = self_offset(self_two, bias);
    CHECK_RESULT(ATF_OK, sym_module_open(&m, path));
    CHECK(m.count > 0);
    name = sym_module_lookup(&m, one);
    CHECK(name && strstr(name, "symtest_known_one") != NULL);
    name = sym_module_lookup(&m, one + 1); /* inside it */
    CHECK(name && strstr(name, "symtest_known_one") != NULL);
    name = sym_module_lookup(&m, two);
    CHECK(name && strstr(name, "symtest_known_two") != NULL);
    sym_module_close(&m);
}

/* This program's file cut at many lengths and scrambled where its tables are described:
 * any result but a crash. */
static void test_self_damaged(void) {
    char path[CLI_PATH_MAX];
    uint64_t bias, shoff;
    size_t len = 0, i, cut, shnum, region;
    uint8_t *data;
    if (!self_module(path, sizeof path, &bias)) {
        printf("  self_damaged: skipped (no ELF64 little-endian /proc/self/exe here)\n");
        return;
    }
    data = (uint8_t *)read_file(path, &len);
    CHECK(data != NULL && len > 64);
    if (!data || len <= 64) {
        free(data);
        return;
    }
    CHECK_RESULT(ATF_OK, fuzz_open(data, len));
    for (cut = 0; cut < 256; cut++) fuzz_open(data, cut);
    for (i = 0; i <= 200; i++) fuzz_open(data, (size_t)((uint64_t)len * i / 200));
    shoff = (uint64_t)data[40] | (uint64_t)data[41] << 8 | (uint64_t)data[42] << 16 |
            (uint64_t)data[43] << 24;
    shnum = (size_t)(data[60] | data[61] << 8);
    region = shoff < len && shnum * 64 <= len - shoff ? shnum * 64 : 0;
    rng_seed(0x5EED);
    for (i = 0; i < 2000; i++) { /* a few bytes of the header or section headers changed */
        size_t at[4], k;
        uint8_t was[4];
        for (k = 0; k < 4; k++) {
            at[k] = region && rng_below(2) ? (size_t)shoff + rng_below(region) : rng_below(64);
            was[k] = data[at[k]];
            data[at[k]] = (uint8_t)rng_next();
        }
        fuzz_open(data, len);
        for (k = 4; k > 0; k--) data[at[k - 1]] = was[k - 1];
    }
    free(data);
}

/* ==== a session named offline ========================================================= */
/* Runs `atf argv...` in-process, its output and messages captured. */
static run_result run_atf(int argc, const char **argv) {
    return run_argv(cli_main, argc, (char **)argv);
}

static size_t count_lines(const char *s) {
    size_t n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

enum { FN_ONE = 0x101, FN_TWO = 0x102, FN_NOWHERE = 0x103, FN_NAMED = 0x104 };

/* A session under root whose manifest gives FN_ONE and FN_TWO by location only in module
 * 0 (path, bias, build id when not NULL), FN_NOWHERE at an offset no function holds, and
 * FN_NAMED both a name and a location; one thread calls each. Its pid_* path into dir. */
static void make_located(const char *root, int number, const char *path, uint64_t bias,
                         const char *build_id, char *dir, size_t cap) {
    atf_session_config cfg;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    char name[32];
    uint64_t ts = 1000;
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    snprintf(name, sizeof name, "session_%d", number);
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, root, &cfg));
    if (!s) return;
    snprintf(dir, cap, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 0, path, bias, 0));
    if (build_id) CHECK_RESULT(ATF_OK, atf_session_set_module_build_id(s, 0, build_id));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, FN_ONE, 0, self_offset(self_one, bias)));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, FN_TWO, 0, self_offset(self_two, bias)));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, FN_NOWHERE, 0, 0x10)); /* the ELF header */
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, FN_NAMED, "named_by_the_program"));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, FN_NAMED, 0, self_offset(self_one, bias)));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "main", &w));
    if (w) {
        uint64_t fids[4] = { FN_ONE, FN_TWO, FN_NOWHERE, FN_NAMED };
        size_t i;
        for (i = 0; i < 4; i++) {
            CHECK_RESULT(ATF_OK, atf_producer_call(w, fids[i], ts));
            CHECK_RESULT(ATF_OK, atf_producer_return(w, fids[i], ts + 10));
            ts += 100;
        }
        atf_session_detach(s);
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
}

/* `atf stats` of dir: whether the two functions show by name, with the other checks
 * that hold either way; stderr into *err_lines. */
static int stats_names_them(const char *dir, size_t *err_lines, const char *module) {
    const char *argv[3];
    run_result o;
    int named;
    argv[0] = "stats";
    argv[1] = dir;
    argv[2] = NULL;
    o = run_atf(2, argv);
    CHECK_EQ(0, o.status);
    if (!o.out || !o.err) {
        run_free(&o);
        return 0;
    }
    named = strstr(o.out, "symtest_known_one") != NULL && strstr(o.out, "symtest_known_two") != NULL;
    if (!named) { /* neither then: both keep their ids */
        CHECK(strstr(o.out, "symtest_known") == NULL);
        CHECK(strstr(o.out, "0x0000000000000101") != NULL);
        CHECK(strstr(o.out, "0x0000000000000102") != NULL);
    }
    CHECK(strstr(o.out, "0x0000000000000103") != NULL); /* no function there */
    CHECK(strstr(o.out, "named_by_the_program") != NULL); /* the program's name stays */
    *err_lines = count_lines(o.err);
    if (*err_lines) CHECK(strstr(o.err, module) != NULL);
    run_free(&o);
    return named;
}

static void test_session_named_offline(void) {
    char root[1024], path[CLI_PATH_MAX], dir[1024];
    uint64_t bias;
    size_t err_lines = 0;
    sym_module m;
    char real_id[65];
    if (!self_module(path, sizeof path, &bias)) {
        printf("  session_named_offline: skipped (no ELF64 little-endian /proc/self/exe here)\n");
        return;
    }
    real_id[0] = '\0';
    if (sym_module_open(&m, path) == ATF_OK) {
        snprintf(real_id, sizeof real_id, "%s", m.build_id);
        sym_module_close(&m);
    }
    if (scratch_dir_make(root, sizeof root, "symbolize") != 0) {
        harness__fail(__FILE__, __LINE__, "no scratch directory");
        return;
    }
    /* no build id in the manifest: named */
    make_located(root, 1, path, bias, NULL, dir, sizeof dir);
    CHECK(stats_names_them(dir, &err_lines, path));
    CHECK_EQ(0, err_lines);
    if (real_id[0]) {
        /* the file's own build id: named; another one: not, and said once */
        make_located(root, 2, path, bias, real_id, dir, sizeof dir);
        CHECK(stats_names_them(dir, &err_lines, path));
        CHECK_EQ(0, err_lines);
        make_located(root, 3, path, bias, "00112233445566778899aabbccddeeff00112233", dir,
                     sizeof dir);
        CHECK(!stats_names_them(dir, &err_lines, path));
        CHECK_EQ(1, err_lines);
    } else {
        printf("  session_named_offline: this program has no build id; that part skipped\n");
    }
    /* a module file that is not there: ids, silently */
    make_located(root, 4, "/nonexistent/program", bias, NULL, dir, sizeof dir);
    CHECK(!stats_names_them(dir, &err_lines, path));
    CHECK_EQ(0, err_lines);
    remove_tree(root);
}

static const test_case tests[] = {
    {"lookup", test_lookup},
    {"versions", test_versions},
    {"aliases", test_aliases},
    {"damaged_fields", test_damaged_fields},
    {"not_elf", test_not_elf},
    {"self", test_self},
    {"self_damaged", test_self_damaged},
    {"session_named_offline", test_session_named_offline},
};

HARNESS_MAIN("symbolize", tests)
