/* demangle.h - C++ names as people read them: the Itanium C++ ABI symbols of gcc and clang
 * ("_ZN4work4evalERKSt6vectorIiSaIiEERmi") demangled, in full or short, and matched.
 * SPDX-License-Identifier: MIT
 *
 * The one demangler of the tree, compiled into the atf command (the names it shows and
 * exports, what --function selects) and into the tracer (tools/instrument/, what its
 * filters and triggers select; it includes this file's .c with DEMANGLE_STATIC).
 *
 * The demangling itself is the C++ runtime's __cxa_demangle (libstdc++, libc++abi, or
 * libstdc++-6.dll of mingw), looked up at run time: first in the process (a C++ program has
 * it), else in a runtime library loaded for it (the atf command is C). Nothing is linked:
 * where no runtime is found, a name stays as it is. The full form is the runtime's
 * answer (gcc's runtime gives c++filt's); the short form is cut from it here:
 *   full   "std::vector<int, std::allocator<int> > work::make<int>(unsigned long) const"
 *   short  "work::make"
 * no return type, parameters, qualifiers, template arguments, ABI tags ("[abi:cxx11]")
 * or clone suffixes ("[clone .cold]"), so that the instances of a template read as one
 * name (as uftrace prints them). Kept: operators ("operator<", "operator()"), the
 * anonymous namespace, lambdas ("{lambda(int)#1}", clang's "'lambda'(int)"), the
 * enclosing function of a local class ("f(int)::Local::run()" is "f::Local::run") and a
 * thunk's words ("non-virtual thunk to X::f").
 *
 * A pattern (a name, or a glob in the tracer's filters) matches a function when it matches
 * its symbol as is, its full or its short name. */
#ifndef ATF_TOOLS_DEMANGLE_H
#define ATF_TOOLS_DEMANGLE_H

#include <stddef.h>

#if defined(DEMANGLE_STATIC) && (defined(__GNUC__) || defined(__clang__))
#  define DEMANGLE_DEF static __attribute__((unused)) /* what the includer leaves unused */
#elif defined(DEMANGLE_STATIC)
#  define DEMANGLE_DEF static
#else
#  define DEMANGLE_DEF extern
#endif

typedef enum demangle_mode {
    DEMANGLE_FULL = 0,               /* the runtime's demangled name (the default) */
    DEMANGLE_SHORT = 1,              /* the name alone, as above */
    DEMANGLE_NONE = 2                /* the symbol as it is */
} demangle_mode;

/* "full", "short" or "none" into *mode: 1, else 0. */
DEMANGLE_DEF int demangle_parse_mode(const char *text, demangle_mode *mode);

/* Whether name may be an Itanium C++ ABI symbol: "_Z" and more ("_ZN...", "_Znwm"), or
 * the "__Z" macOS puts before it (the runtime decides whether it is one). */
DEMANGLE_DEF int demangle_is_mangled(const char *name);

/* Looks for the runtime's __cxa_demangle once: in the process, and (may_load) in a C++
 * runtime library loaded for it when the process has none. 1 when there is one. Not
 * thread-safe the first time: call it before threads do (the tracer: when its settings
 * are read; the command: before it shows a name). */
DEMANGLE_DEF int demangle_runtime(int may_load);

/* name in mode, newly allocated (free it); NULL when it stays as it is: mode
 * DEMANGLE_NONE, not a mangled name, no runtime, a symbol the runtime cannot read, or out
 * of memory. Uses only a runtime demangle_runtime found. */
DEMANGLE_DEF char *demangle_alloc(const char *name, demangle_mode mode);

/* The short form of the demangled name full into dst (not full itself; cap > 0): at most
 * cap - 1 bytes and a NUL, never longer than full; full itself when no name can be told
 * in it. Returns its length. */
DEMANGLE_DEF size_t demangle_shorten(const char *full, char *dst, size_t cap);

/* A function's three names: its symbol, and when that demangles, the full and the short
 * form (else NULL). demangle_forms_free frees what demangle_forms_make made. */
typedef struct demangle_forms {
    const char *symbol;
    char *full, *brief;
} demangle_forms;

DEMANGLE_DEF void demangle_forms_make(demangle_forms *f, const char *symbol);
DEMANGLE_DEF void demangle_forms_free(demangle_forms *f);
/* Whether pattern is one of the forms, or (match, optional) match(pattern, form) != 0
 * for one of them (the tracer passes a glob matcher). */
DEMANGLE_DEF int demangle_forms_match(const demangle_forms *f, const char *pattern,
                                      int (*match)(const char *pattern, const char *name));

/* The next item of a comma-separated list of names at *cursor, split in place: a comma
 * inside brackets ("f<int, long>", "g(int, int)", "{lambda(int, int)#1}") or in an
 * operator's name ("operator,") does not split. NULL at the end; empty items skipped. */
DEMANGLE_DEF char *demangle_list_next(char **cursor);

#endif /* ATF_TOOLS_DEMANGLE_H */
