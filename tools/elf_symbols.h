/* elf_symbols.h - the functions an ELF64 little-endian module defines, read from its symbol
 * table, and the one rule that names an address where several symbols start.
 * SPDX-License-Identifier: MIT
 *
 * Included by the tracer (tools/instrument/atf_instrument.c: names at exit, filters at a
 * function's first call) and by the atf command (tools/symbolize.c: names, offline, what
 * a killed program left by location only), so that a function gets the same name both
 * ways. Each brings the bytes (the tracer maps the module file, symbolize.c reads it with
 * stdio); here they are decoded, every field through little-endian loads, every name
 * checked to end inside its string table. Private to each includer (static functions).
 *
 * Which symbols are functions: STT_FUNC and STT_GNU_IFUNC entries that are defined (not
 * SHN_UNDEF), at a value other than 0, with a name. A versioned name (".symver":
 * "f@@V_2" the default version, "f@V_1" an older one) names the function f: the version
 * is not part of the name; a name with nothing before its '@' is kept whole.
 *
 * The tie rule. Aliases (several symbols starting at one address: `__attribute__((alias))`,
 * .symver, a C++ constructor's C1 and C2 forms) give the address the name that reads best,
 * the first of them in this order:
 *   1. a symbol with a size before one without: a size 0 symbol is a label marking a
 *      place, and the sized one names the function's inside too, so it keeps one name;
 *   2. a global or weak symbol before a local one: the name callers outside its file use
 *      (a static implementation behind an exported alias is named by the alias);
 *   3. a versioned name before a plain one, the default version ("@@") before an older one
 *      ("@"): the name the library exports it under, not the code's own name;
 *   4. fewer leading underscores: "read" before "__read" before "__libc_read" (names
 *      reserved to the implementation come last);
 *   5. the name's bytes (strcmp, version included): the same answer whatever the order of
 *      the entries in the file.
 * An address where no symbol starts is named by the innermost one holding it (the latest
 * start whose [value, value + size) contains it), of the aliases there that hold it the
 * first by the rule. */
#ifndef ATF_TOOLS_ELF_SYMBOLS_H
#define ATF_TOOLS_ELF_SYMBOLS_H

#include "atf.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define ELF_SYMBOLS__FN static ATF_NO_INSTRUMENT __attribute__((unused))
#else
#  define ELF_SYMBOLS__FN static ATF_NO_INSTRUMENT
#endif

/* From the System V gABI (ELF-64 Object File Format): sizes of the records read, and the
 * values of the fields that decide. Offsets in the code are of the fields in the file. */
enum {
    ELF_EHDR_SIZE = 64,              /* Elf64_Ehdr */
    ELF_SHDR_SIZE = 64,              /* Elf64_Shdr */
    ELF_SYM_SIZE = 24,               /* Elf64_Sym */
    ELF_CLASS64 = 2, ELF_DATA_LSB = 1,    /* e_ident[4], e_ident[5] */
    ELF_SHT_SYMTAB = 2, ELF_SHT_STRTAB = 3, ELF_SHT_DYNSYM = 11,
    ELF_STT_FUNC = 2, ELF_STT_GNU_IFUNC = 10,
    ELF_STB_LOCAL = 0,
    ELF_SHN_UNDEF = 0
};

/* Symbols looked at below the last one starting at or before an address, for one that
 * holds it (symbols rarely nest; this bounds the cost when they do). */
enum { ELF_SYMBOLS_SCAN_BACK = 64 };

/* The fields of the file header the readers use. */
typedef struct elf_header {
    uint64_t phoff, shoff;           /* program and section header tables, 0 when none */
    uint16_t phentsize, phnum, shentsize, shnum;
} elf_header;

/* A section header's fields the readers use. */
typedef struct elf_section {
    uint32_t type, link;
    uint64_t offset, size, entsize;
} elf_section;

/* How a symbol's name is versioned: the order of rule 3. */
typedef enum elf_version {
    ELF_VERSION_DEFAULT = 0,         /* "f@@V" */
    ELF_VERSION_OLDER = 1,           /* "f@V" */
    ELF_VERSION_NONE = 2             /* "f" */
} elf_version;

/* A function symbol. */
typedef struct elf_symbol {
    uint64_t value, size;            /* its start (the address minus the module's load
                                        bias) and length (rule 1); 0: it holds its start
                                        alone */
    const char *name;                /* in the string table, version included */
    size_t name_len;                 /* the name without its version: "f@@V_2" is 1 long */
    uint8_t local;                   /* STB_LOCAL: rule 2 */
    uint8_t version;                 /* elf_version: rule 3 */
    uint8_t underscores;             /* leading '_' of the name: rule 4 */
} elf_symbol;

/* 1 when the 64 bytes at h start an ELF64 little-endian file; its fields then into *out. */
ELF_SYMBOLS__FN int elf_header_decode(const uint8_t *h, elf_header *out) {
    if (memcmp(h, "\177ELF", 4) != 0 || h[4] != ELF_CLASS64 || h[5] != ELF_DATA_LSB) return 0;
    out->phoff = atf__load_le64(h + 32);
    out->shoff = atf__load_le64(h + 40);
    out->phentsize = atf__load_le16(h + 54);
    out->phnum = atf__load_le16(h + 56);
    out->shentsize = atf__load_le16(h + 58);
    out->shnum = atf__load_le16(h + 60);
    return 1;
}

/* The section header at h (ELF_SHDR_SIZE bytes) into *out. */
ELF_SYMBOLS__FN void elf_section_decode(const uint8_t *h, elf_section *out) {
    out->type = atf__load_le32(h + 4);
    out->offset = atf__load_le64(h + 24);
    out->size = atf__load_le64(h + 32);
    out->link = atf__load_le32(h + 40);
    out->entsize = atf__load_le64(h + 56);
}

/* The number of sections: e_shnum, or, when a file has more than 0xff00 of them and
 * e_shnum is 0, section 0's sh_size (`first`, NULL when it could not be read). */
ELF_SYMBOLS__FN uint64_t elf_section_count(const elf_header *h, const elf_section *first) {
    if (h->shoff == 0) return 0;
    if (h->shnum) return h->shnum;
    return first ? first->size : 0;
}

/* How much a section of this type is worth as the symbol table to read: .symtab (it has
 * the static functions too) over .dynsym (all a stripped file keeps); 0 for the others. */
ELF_SYMBOLS__FN int elf_symbol_table_worth(uint32_t type) {
    return type == ELF_SHT_SYMTAB ? 2 : type == ELF_SHT_DYNSYM ? 1 : 0;
}

/* The size of one entry of symbol table `tab`; 0 when it is too small to be one. */
ELF_SYMBOLS__FN uint64_t elf_symbol_entry_size(const elf_section *tab) {
    uint64_t size = tab->entsize ? tab->entsize : (uint64_t)ELF_SYM_SIZE;
    return size < ELF_SYM_SIZE ? 0 : size;
}

/* The version and the unversioned length of `name` (see elf_symbol). */
ELF_SYMBOLS__FN elf_version elf_symbol_version(const char *name, size_t *len) {
    const char *at = strchr(name, '@');
    if (!at || at == name) {
        *len = strlen(name);
        return ELF_VERSION_NONE;
    }
    *len = (size_t)(at - name);
    return at[1] == '@' ? ELF_VERSION_DEFAULT : ELF_VERSION_OLDER;
}

ELF_SYMBOLS__FN uint8_t elf_symbol_underscores(const char *name) {
    uint8_t n = 0;
    while (name[n] == '_' && n < UINT8_MAX) n++;
    return n;
}

/* 1 when the symbol table entry at entry (ELF_SYM_SIZE bytes) is a function (see the top
 * of this file) whose name ends inside the strtab_size bytes at strtab; it is then in *out. */
ELF_SYMBOLS__FN int elf_symbol_decode(const uint8_t *entry, const char *strtab,
                                      uint64_t strtab_size, elf_symbol *out) {
    uint32_t name = atf__load_le32(entry);
    unsigned type = entry[4] & 15u;
    if ((type != ELF_STT_FUNC && type != ELF_STT_GNU_IFUNC) ||
        atf__load_le16(entry + 6) == ELF_SHN_UNDEF)
        return 0;
    if (name == 0 || name >= strtab_size || strtab[name] == '\0' ||
        !memchr(strtab + name, 0, (size_t)(strtab_size - name)))
        return 0;
    out->value = atf__load_le64(entry + 8);
    out->size = atf__load_le64(entry + 16);
    if (out->value == 0) return 0; /* nothing of a loaded module's code starts at 0 */
    out->name = strtab + name;
    out->local = (entry[4] >> 4) == ELF_STB_LOCAL;
    out->version = (uint8_t)elf_symbol_version(out->name, &out->name_len);
    out->underscores = elf_symbol_underscores(out->name);
    return 1;
}

/* qsort's order of elf_symbol: by value, then by the tie rule (the top of this file). */
ELF_SYMBOLS__FN int elf_symbol_order(const void *a, const void *b) {
    const elf_symbol *x = (const elf_symbol *)a, *y = (const elf_symbol *)b;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    if ((x->size == 0) != (y->size == 0)) return x->size == 0 ? 1 : -1;
    if (x->local != y->local) return x->local - y->local;
    if (x->version != y->version) return x->version - y->version;
    if (x->underscores != y->underscores) return x->underscores - y->underscores;
    return strcmp(x->name, y->name);
}

/* The functions of a symbol table: its `count` entries, entsize bytes apart at table, with
 * their names in the strtab_size bytes at strtab. They go to out (room for count), sorted
 * by elf_symbol_order; returns how many. Both tables must stay while out is used. */
ELF_SYMBOLS__FN size_t elf_symbols_read(const uint8_t *table, uint64_t count, uint64_t entsize,
                                        const char *strtab, uint64_t strtab_size,
                                        elf_symbol *out) {
    uint64_t i;
    size_t n = 0;
    for (i = 0; i < count; i++)
        if (elf_symbol_decode(table + i * entsize, strtab, strtab_size, &out[n])) n++;
    if (n > 1) qsort(out, n, sizeof *out, elf_symbol_order);
    return n;
}

/* Whether s names the address `offset`: it starts there or holds it. */
ELF_SYMBOLS__FN int elf_symbol_holds(const elf_symbol *s, uint64_t offset) {
    return offset == s->value || (offset > s->value && offset - s->value < s->size);
}

/* The symbol naming `offset` among the n sorted ones at s (see the top of this file), or
 * NULL. O(log n). */
ELF_SYMBOLS__FN const elf_symbol *elf_symbols_find(const elf_symbol *s, size_t n,
                                                   uint64_t offset) {
    size_t lo = 0, hi = n, i, stop, best;
    while (lo < hi) { /* lo: the first symbol starting after offset */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].value <= offset) lo = mid + 1;
        else hi = mid;
    }
    stop = lo > ELF_SYMBOLS_SCAN_BACK ? lo - ELF_SYMBOLS_SCAN_BACK : 0;
    for (i = lo; i > stop && !elf_symbol_holds(&s[i - 1], offset); i--) {}
    if (i == stop) return NULL;
    best = i - 1; /* the innermost; of its aliases (before it), the first that holds too */
    for (i = best; i > 0 && s[i - 1].value == s[best].value; i--)
        if (elf_symbol_holds(&s[i - 1], offset)) best = i - 1;
    return &s[best];
}

#endif /* ATF_TOOLS_ELF_SYMBOLS_H */
