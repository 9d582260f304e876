/* symbolize.c - names, offline, the functions a manifest lists by location only (see
 * symbolize.h): ELF64 little-endian symbol tables and build ids, read with stdio.
 * SPDX-License-Identifier: MIT */
#include "symbolize.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ==== ELF64, the rest of what we read ================================================ */
/* Beside the symbol tables (elf_symbols.h): the build id note and what a program links.
 * From the System V gABI and the GNU build-id note; offsets are of the fields in the file. */
enum {
    ELF_PHDR_SIZE = 56,              /* Elf64_Phdr */
    ELF_SHT_NOTE = 7,
    ELF_PT_NOTE = 4,
    ELF_NT_GNU_BUILD_ID = 3
};

/* Limits that keep a hostile file from costing much: a section count far above any real
 * file's, and notes (a build id is 20 bytes) read only when small. (e_phnum is 16 bits.) */
enum { SYM_MAX_SECTIONS = 1 << 20, SYM_MAX_NOTES_BYTES = 1 << 16 };

/* ==== reading: a file or bytes in memory, every range checked ======================== */
typedef struct sym_src {
    FILE *f;                         /* the file, or NULL for mem */
    const uint8_t *mem;
    uint64_t size;
} sym_src;

/* 1 when the n bytes at off are all inside the source and were read into buf. */
static int sym_read(const sym_src *s, uint64_t off, void *buf, uint64_t n) {
    if (off > s->size || n > s->size - off) return 0;
    if (!s->f) {
        if (n) memcpy(buf, s->mem + off, (size_t)n);
        return 1;
    }
    if (off > (uint64_t)LONG_MAX || fseek(s->f, (long)off, SEEK_SET) != 0) return 0;
    return fread(buf, 1, (size_t)n, s->f) == (size_t)n;
}

/* The n bytes at off in a malloc'd buffer (one byte more, set to 0), or NULL: out of the
 * source (*rc ATF_E_CORRUPT) or out of memory (*rc ATF_E_NOMEM). */
static uint8_t *sym_read_alloc(const sym_src *s, uint64_t off, uint64_t n, atf_result *rc) {
    uint8_t *p;
    *rc = ATF_E_CORRUPT;
    if (off > s->size || n > s->size - off || n >= SIZE_MAX) return NULL;
    p = (uint8_t *)malloc((size_t)n + 1);
    if (!p) {
        *rc = ATF_E_NOMEM;
        return NULL;
    }
    p[n] = 0;
    if (!sym_read(s, off, p, n)) {
        free(p);
        *rc = s->f ? ATF_E_IO : ATF_E_CORRUPT;
        return NULL;
    }
    *rc = ATF_OK;
    return p;
}

/* ==== sections ======================================================================== */
typedef struct sym_elf {
    const sym_src *src;
    elf_header header;
    elf_section *sections;
    size_t section_count;
} sym_elf;

/* The section count (elf_section_count), section 0 read when it holds it. */
static uint64_t sym_section_count(const sym_src *s, const elf_header *h) {
    uint8_t raw[ELF_SHDR_SIZE];
    elf_section first;
    if (h->shoff == 0 || h->shnum || !sym_read(s, h->shoff, raw, sizeof raw))
        return elf_section_count(h, NULL);
    elf_section_decode(raw, &first);
    return elf_section_count(h, &first);
}

/* The header and section headers of the ELF64 little-endian file at s into *e. */
static atf_result sym_elf_open(sym_elf *e, const sym_src *s) {
    uint8_t h[ELF_EHDR_SIZE], *table;
    uint64_t count, i;
    atf_result rc;
    memset(e, 0, sizeof *e);
    e->src = s;
    if (!sym_read(s, 0, h, sizeof h) || !elf_header_decode(h, &e->header)) return ATF_E_MAGIC;
    count = sym_section_count(s, &e->header);
    if (count == 0) return ATF_OK; /* no sections: the program headers may still say */
    if (e->header.shentsize < ELF_SHDR_SIZE || count > SYM_MAX_SECTIONS) return ATF_E_CORRUPT;
    table = sym_read_alloc(s, e->header.shoff, count * e->header.shentsize, &rc);
    if (!table) return rc;
    e->sections = (elf_section *)calloc((size_t)count, sizeof *e->sections);
    if (!e->sections) {
        free(table);
        return ATF_E_NOMEM;
    }
    for (i = 0; i < count; i++)
        elf_section_decode(table + i * e->header.shentsize, &e->sections[i]);
    e->section_count = (size_t)count;
    free(table);
    return ATF_OK;
}

static void sym_elf_close(sym_elf *e) { free(e->sections); }

/* The first section of type `type`, or NULL. */
static const elf_section *sym_find_section(const sym_elf *e, uint32_t type) {
    size_t i;
    for (i = 0; i < e->section_count; i++)
        if (e->sections[i].type == type) return &e->sections[i];
    return NULL;
}

/* The symbol table to name functions from (elf_symbol_table_worth), or NULL. */
static const elf_section *sym_symbol_table(const sym_elf *e) {
    const elf_section *best = NULL;
    size_t i;
    for (i = 0; i < e->section_count; i++)
        if (elf_symbol_table_worth(e->sections[i].type) >
            (best ? elf_symbol_table_worth(best->type) : 0))
            best = &e->sections[i];
    return best;
}

/* ==== the build id ==================================================================== */
/* The notes in n bytes at p: the GNU build id's bytes as lowercase hex into m->build_id
 * (at most 32 bytes of it). 1 when found. */
static int sym_notes_build_id(sym_module *m, const uint8_t *p, uint64_t n) {
    static const char hex[] = "0123456789abcdef";
    uint64_t at = 0;
    while (n - at >= 12) {
        uint64_t namesz = atf__load_le32(p + at), descsz = atf__load_le32(p + at + 4);
        uint32_t type = atf__load_le32(p + at + 8);
        uint64_t name_at = at + 12, desc_at = name_at + ((namesz + 3) & ~(uint64_t)3);
        uint64_t next = desc_at + ((descsz + 3) & ~(uint64_t)3);
        if (desc_at > n || descsz > n - desc_at) return 0; /* a note past the end */
        if (type == ELF_NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name_at, "GNU", 4) == 0 &&
            descsz > 0) {
            size_t i, len = descsz > 32 ? 32 : (size_t)descsz;
            for (i = 0; i < len; i++) {
                m->build_id[2 * i] = hex[p[desc_at + i] >> 4];
                m->build_id[2 * i + 1] = hex[p[desc_at + i] & 15];
            }
            m->build_id[2 * len] = '\0';
            return 1;
        }
        if (next >= n) return 0; /* that was the last one (n - at must not wrap) */
        at = next;
    }
    return 0;
}

/* The notes of n bytes at off, when small enough to be notes: 1 when a build id was in. */
static int sym_read_notes(sym_module *m, const sym_src *s, uint64_t off, uint64_t n) {
    atf_result rc;
    uint8_t *p;
    int found;
    if (n == 0 || n > SYM_MAX_NOTES_BYTES) return 0;
    p = sym_read_alloc(s, off, n, &rc);
    if (!p) return 0;
    found = sym_notes_build_id(m, p, n);
    free(p);
    return found;
}

/* The build id from the note sections, else from the PT_NOTE program headers (a file
 * stripped of its section headers). Nothing found leaves it "". */
static void sym_build_id(sym_module *m, const sym_elf *e) {
    uint8_t ph[ELF_PHDR_SIZE];
    size_t i;
    for (i = 0; i < e->section_count; i++)
        if (e->sections[i].type == ELF_SHT_NOTE &&
            sym_read_notes(m, e->src, e->sections[i].offset, e->sections[i].size))
            return;
    if (e->header.phoff == 0 || e->header.phentsize < ELF_PHDR_SIZE) return;
    for (i = 0; i < e->header.phnum; i++) {
        uint64_t at = e->header.phoff + (uint64_t)i * e->header.phentsize;
        if (!sym_read(e->src, at, ph, sizeof ph)) return;
        if (atf__load_le32(ph) == ELF_PT_NOTE &&
            sym_read_notes(m, e->src, atf__load_le64(ph + 8), atf__load_le64(ph + 32)))
            return;
    }
}

/* ==== the function symbols ============================================================ */
/* Ends each function's name before its version, in m's copy of the string table, so that
 * lookups give "f" for "f@@V_2" as the tracer names it. Done once they are sorted (the
 * tie rule reads the versions). A string the linker shares as another's tail holds the
 * same '@', so cutting it there is right for both. */
static void sym_cut_versions(sym_module *m) {
    size_t i;
    for (i = 0; i < m->count; i++)
        m->strtab[(size_t)(m->funcs[i].name - m->strtab) + m->funcs[i].name_len] = '\0';
}

/* The functions of symbol table `tab` (its strings in section tab->link) into m. */
static atf_result sym_load_functions(sym_module *m, const sym_elf *e, const elf_section *tab) {
    const elf_section *str;
    uint64_t entsize = elf_symbol_entry_size(tab), count;
    uint8_t *syms;
    atf_result rc;
    if (entsize == 0 || tab->link >= e->section_count) return ATF_E_CORRUPT;
    str = &e->sections[tab->link];
    if (str->type != ELF_SHT_STRTAB) return ATF_E_CORRUPT;
    m->strtab = (char *)sym_read_alloc(e->src, str->offset, str->size, &rc);
    if (!m->strtab) return rc;
    m->strtab_size = (size_t)str->size;
    count = tab->size / entsize;
    syms = sym_read_alloc(e->src, tab->offset, count * entsize, &rc);
    if (!syms) return rc;
    m->funcs = (elf_symbol *)malloc((size_t)(count ? count : 1) * sizeof *m->funcs);
    if (!m->funcs) {
        free(syms);
        return ATF_E_NOMEM;
    }
    m->count = elf_symbols_read(syms, count, entsize, m->strtab, m->strtab_size, m->funcs);
    free(syms);
    sym_cut_versions(m);
    return ATF_OK;
}

static atf_result sym_module_load(sym_module *m, const sym_src *s) {
    const elf_section *tab;
    sym_elf e;
    atf_result rc;
    memset(m, 0, sizeof *m);
    rc = sym_elf_open(&e, s);
    if (rc == ATF_OK) {
        sym_build_id(m, &e);
        tab = sym_symbol_table(&e);
        if (tab) rc = sym_load_functions(m, &e, tab);
    }
    sym_elf_close(&e);
    if (rc != ATF_OK) sym_module_close(m);
    return rc;
}

atf_result sym_module_open_memory(sym_module *m, const void *data, size_t size) {
    sym_src s;
    s.f = NULL;
    s.mem = (const uint8_t *)data;
    s.size = size;
    return sym_module_load(m, &s);
}

/* The file at path as a source (to fclose), or ATF_E_IO. */
static atf_result sym_src_open(sym_src *s, const char *path) {
    long size;
    s->mem = NULL;
    s->f = fopen(path, "rb");
    if (!s->f) return ATF_E_IO;
    if (fseek(s->f, 0, SEEK_END) != 0 || (size = ftell(s->f)) < 0) {
        fclose(s->f);
        return ATF_E_IO;
    }
    s->size = (uint64_t)size;
    return ATF_OK;
}

atf_result sym_module_open(sym_module *m, const char *path) {
    sym_src s;
    atf_result rc;
    memset(m, 0, sizeof *m);
    if (sym_src_open(&s, path) != ATF_OK) return ATF_E_IO;
    rc = sym_module_load(m, &s);
    fclose(s.f);
    return rc;
}

void sym_module_close(sym_module *m) {
    free(m->funcs);
    free(m->strtab);
    memset(m, 0, sizeof *m);
}

const char *sym_module_lookup(const sym_module *m, uint64_t offset) {
    const elf_symbol *f = elf_symbols_find(m->funcs, m->count, offset);
    return f ? f->name : NULL;
}

/* ==== naming a session's functions ==================================================== */
/* Whether r has a function listed by location only in module `id`. */
static int sym_module_wanted(const atf_session_reader *r, uint64_t id) {
    size_t i;
    for (i = 0; i < r->symbol_count; i++)
        if (!r->symbols[i].name && r->symbols[i].has_offset && r->symbols[i].module_id == id)
            return 1;
    return 0;
}

/* Names the functions of module `mod` that r lists by location only; returns how many. */
static size_t sym_name_module(atf_session_reader *r, const atf_session_module *mod, FILE *err) {
    sym_module m;
    size_t i, named = 0;
    if (!mod->path[0] || sym_module_open(&m, mod->path) != ATF_OK) return 0;
    if (mod->build_id[0] && m.build_id[0] && strcmp(mod->build_id, m.build_id) != 0) {
        fprintf(err, "atf: %s: build id %s does not match the manifest's %s: its functions "
                     "stay unnamed\n", mod->path, m.build_id, mod->build_id);
        sym_module_close(&m);
        return 0;
    }
    for (i = 0; i < r->symbol_count; i++) {
        const atf_session_symbol *y = &r->symbols[i];
        const char *name;
        if (y->name || !y->has_offset || y->module_id != mod->module_id) continue;
        name = sym_module_lookup(&m, y->offset);
        if (name && atf_session_reader_name_symbol(r, y->function_id, name) == ATF_OK) named++;
    }
    sym_module_close(&m);
    return named;
}

size_t sym_name_functions(atf_session_reader *r, FILE *err) {
    size_t i, named = 0;
    for (i = 0; i < r->module_count; i++)
        if (sym_module_wanted(r, r->modules[i].module_id))
            named += sym_name_module(r, &r->modules[i], err);
    return named;
}

/* ==== what a program links ============================================================ */
enum {
    ELF_PT_INTERP = 3, ELF_SHT_DYNAMIC = 6, ELF_DYN_SIZE = 16,
    ELF_DT_NEEDED = 1, ELF_DT_RPATH = 15, ELF_DT_RUNPATH = 29
};

static char *sym_strdup(const char *text) {
    size_t n = strlen(text) + 1;
    char *p = (char *)malloc(n);
    if (p) memcpy(p, text, n);
    return p;
}

static int sym_has_interpreter(const sym_elf *e) {
    uint8_t h[4];
    uint16_t i;
    if (e->header.phentsize < ELF_PHDR_SIZE) return 0;
    for (i = 0; i < e->header.phnum; i++)
        if (sym_read(e->src, e->header.phoff + (uint64_t)i * e->header.phentsize, h, sizeof h) &&
            atf__load_le32(h) == ELF_PT_INTERP)
            return 1;
    return 0;
}

/* How symbol table `tab` names `name`: 0 not at all, 1 undefined, 2 defined. */
static int sym_table_names(const sym_elf *e, const elf_section *tab, const char *name) {
    uint64_t entsize = elf_symbol_entry_size(tab), count, i;
    uint8_t *syms = NULL, *str = NULL;
    atf_result rc;
    int found = 0;
    if (entsize == 0 || tab->link >= e->section_count) return 0;
    count = tab->size / entsize;
    str = sym_read_alloc(e->src, e->sections[tab->link].offset, e->sections[tab->link].size, &rc);
    if (str) syms = sym_read_alloc(e->src, tab->offset, count * entsize, &rc);
    for (i = 0; syms && i < count && !found; i++) {
        const uint8_t *h = syms + i * entsize;
        uint32_t at = atf__load_le32(h);
        if (at < e->sections[tab->link].size && strcmp((const char *)str + at, name) == 0)
            found = atf__load_le16(h + 6) == ELF_SHN_UNDEF ? 1 : 2;
    }
    free(syms);
    free(str);
    return found;
}

/* The DT_NEEDED names and the run path of dynamic section `dyn` into p. */
static atf_result sym_read_dynamic(const sym_elf *e, const elf_section *dyn, sym_program *p) {
    uint64_t count = dyn->size / ELF_DYN_SIZE, i;
    uint8_t *ents, *str;
    atf_result rc;
    if (dyn->link >= e->section_count) return ATF_E_CORRUPT;
    str = sym_read_alloc(e->src, e->sections[dyn->link].offset, e->sections[dyn->link].size, &rc);
    if (!str) return rc;
    ents = sym_read_alloc(e->src, dyn->offset, count * ELF_DYN_SIZE, &rc);
    p->needed = (char **)calloc((size_t)count + 1, sizeof *p->needed);
    for (i = 0; ents && p->needed && i < count; i++) {
        const uint8_t *ent = ents + i * ELF_DYN_SIZE;
        uint64_t tag = atf__load_le64(ent), at = atf__load_le64(ent + 8);
        char *text;
        if ((tag != ELF_DT_NEEDED && tag != ELF_DT_RUNPATH && tag != ELF_DT_RPATH) ||
            at >= e->sections[dyn->link].size)
            continue;
        if (!(text = sym_strdup((const char *)str + at))) break;
        if (tag == ELF_DT_NEEDED) {
            p->needed[p->needed_count++] = text;
        } else if (!p->runpath || tag == ELF_DT_RUNPATH) { /* RUNPATH wins over RPATH */
            free(p->runpath);
            p->runpath = text;
        } else {
            free(text);
        }
    }
    rc = ents && p->needed && i == count ? ATF_OK : ents ? ATF_E_NOMEM : rc;
    free(ents);
    free(str);
    return rc;
}

atf_result sym_program_read(sym_program *p, const char *path) {
    const elf_section *tab, *dyn;
    sym_src s;
    sym_elf e;
    atf_result rc;
    memset(p, 0, sizeof *p);
    if (sym_src_open(&s, path) != ATF_OK) return ATF_E_IO;
    rc = sym_elf_open(&e, &s);
    if (rc == ATF_OK) {
        p->dynamic = sym_has_interpreter(&e);
        tab = sym_find_section(&e, ELF_SHT_DYNSYM);
        if (!tab) tab = sym_find_section(&e, ELF_SHT_SYMTAB);
        p->hooks = tab ? sym_table_names(&e, tab, "__cyg_profile_func_enter") : 0;
        dyn = sym_find_section(&e, ELF_SHT_DYNAMIC);
        if (dyn) rc = sym_read_dynamic(&e, dyn, p);
    }
    sym_elf_close(&e);
    fclose(s.f);
    if (rc != ATF_OK) sym_program_free(p);
    return rc;
}

void sym_program_free(sym_program *p) {
    size_t i;
    for (i = 0; i < p->needed_count; i++) free(p->needed[i]);
    free(p->needed);
    free(p->runpath);
    memset(p, 0, sizeof *p);
}
