/* symbolize.h - names, offline, the functions a manifest lists by location only.
 * SPDX-License-Identifier: MIT
 *
 * A traced program resolves its function names when it exits; one that is killed
 * (SIGKILL, a crash) leaves a manifest whose functions have a module and an offset (the
 * address minus the module's load bias, i.e. the ELF symbol value) but no name. The
 * tools then read the module file themselves: an ELF64 little-endian file, its .symtab
 * (else .dynsym), the function symbol that names the offset, chosen as the tracer chooses
 * it (elf_symbols.h: which symbols count, the tie rule of aliases, versioned names), and
 * its NT_GNU_BUILD_ID note, which must match the manifest's build id when both are known.
 *
 * Only standard C file I/O, every on-disk field through explicit little-endian loads
 * and every offset and size checked against the file's size: a module file may be
 * anything. A function that cannot be named keeps its hex id (cli_trace_name). */
#ifndef ATF_TOOLS_SYMBOLIZE_H
#define ATF_TOOLS_SYMBOLIZE_H

#include "core.h"
#include "elf_symbols.h"

/* What a module file says about functions. */
typedef struct sym_module {
    elf_symbol *funcs;               /* sorted by value, then the tie rule; each name ends
                                        before its version ("f@@V_2" reads "f") */
    size_t count;
    char *strtab;                    /* the symbol table's string table, names in funcs */
    size_t strtab_size;
    char build_id[65];               /* its NT_GNU_BUILD_ID as lowercase hex, "" when none */
} sym_module;

/* Reads the ELF64 little-endian file at path into *m (which needs sym_module_close on
 * ATF_OK only). ATF_E_IO when it cannot be read, ATF_E_MAGIC when it is no ELF64
 * little-endian file, ATF_E_CORRUPT when its section headers or symbol table lie
 * outside it, ATF_E_NOMEM. A file without a symbol table opens with count 0. */
atf_result sym_module_open(sym_module *m, const char *path);
/* The same from size bytes at data (not kept). */
atf_result sym_module_open_memory(sym_module *m, const void *data, size_t size);
void sym_module_close(sym_module *m);
/* The name of the function holding `offset`, or NULL. O(log n). */
const char *sym_module_lookup(const sym_module *m, uint64_t offset);

/* Names every function of r that the manifest lists by location only, from its module
 * file; a module whose build id differs from the manifest's names nothing and is said
 * once on err ("atf: PATH: build id ... does not match ..."). A module file that is
 * missing or not ELF names nothing, silently. Returns how many functions were named. */
size_t sym_name_functions(atf_session_reader *r, FILE *err);

/* What `atf record` asks of a program before running it (an ELF64 little-endian file). */
typedef struct sym_program {
    int dynamic;                     /* it has an interpreter: LD_PRELOAD reaches it */
    int hooks;                       /* how its dynamic symbols (else its symbols) name
                                        __cyg_profile_func_enter: 0 not at all, 1 as called
                                        (-finstrument-functions code), 2 as defined (hooks
                                        of its own: a tracer linked in) */
    char **needed;                   /* the libraries it links (DT_NEEDED) */
    size_t needed_count;
    char *runpath;                   /* DT_RUNPATH, else DT_RPATH; NULL when none */
} sym_program;

/* Reads those facts of the file at path into *p (sym_program_free on ATF_OK only); the
 * errors as sym_module_open's. */
atf_result sym_program_read(sym_program *p, const char *path);
void sym_program_free(sym_program *p);

#endif /* ATF_TOOLS_SYMBOLIZE_H */
