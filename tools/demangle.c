/* demangle.c - C++ names as people read them (see demangle.h): the runtime's
 * __cxa_demangle found at run time, the short form cut from its answer, the matching.
 * SPDX-License-Identifier: MIT
 *
 * Compiled into the atf command as it is, and into the tracer, which includes it with
 * DEMANGLE_STATIC (nothing exported from a library preloaded into any program): every
 * function carries ATF_NO_INSTRUMENT, since the tracer's hooks reach them. */
#include "atf.h"
#include "demangle.h"

#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#  include <windows.h>
#else
#  include <dlfcn.h>
#endif

#define DEMANGLE__FN static ATF_NO_INSTRUMENT
#define DEMANGLE__API DEMANGLE_DEF ATF_NO_INSTRUMENT

/* ==== the runtime's demangler ======================================================== */
/* char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status): the
 * C++ ABI's (libstdc++, libc++abi); a malloc'ed answer when buf is NULL. */
typedef char *(*demangle__cxa_fn)(const char *mangled, char *buf, size_t *len, int *status);

static demangle__cxa_fn demangle__cxa;
static int demangle__looked;        /* 1: in the process; 2: and in a library loaded */

#if !defined(_WIN32) && !defined(RTLD_DEFAULT)
#  define RTLD_DEFAULT ((void *)0)
#endif

/* The runtime's __cxa_demangle: in the process (may_load 0), else in the first runtime
 * library that loads; NULL when none. */
DEMANGLE__FN void *demangle__find(int may_load) {
#if defined(_WIN32)
    static const char *const libs[] = { "libstdc++-6.dll", "libc++.dll" };
    size_t i;
    for (i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        HMODULE h = GetModuleHandleA(libs[i]);
        FARPROC p;
        if (!h && may_load) h = LoadLibraryA(libs[i]);
        if (h && (p = GetProcAddress(h, "__cxa_demangle")) != NULL) {
            void *v;
            memcpy(&v, &p, sizeof v);
            return v;
        }
    }
    return NULL;
#else
    static const char *const libs[] = {
        "libstdc++.so.6", "libc++abi.so.1", "libc++.so.1", "libcxxrt.so.1",
        "libc++abi.dylib", "/usr/lib/libc++abi.dylib"
    };
    size_t i;
    void *p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    for (i = 0; !p && may_load && i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL); /* kept open: it is in use */
        if (h) p = dlsym(h, "__cxa_demangle");
    }
    return p;
#endif
}

DEMANGLE__API int demangle_runtime(int may_load) {
    int want = may_load ? 2 : 1;
    if (!demangle__cxa && demangle__looked < want) {
        void *p = demangle__find(may_load);
        if (p) memcpy(&demangle__cxa, &p, sizeof p); /* a data pointer to a function's */
        demangle__looked = want;
    }
    return demangle__cxa != NULL;
}

DEMANGLE__API int demangle_parse_mode(const char *text, demangle_mode *mode) {
    if (strcmp(text, "full") == 0) *mode = DEMANGLE_FULL;
    else if (strcmp(text, "short") == 0) *mode = DEMANGLE_SHORT;
    else if (strcmp(text, "none") == 0) *mode = DEMANGLE_NONE;
    else return 0;
    return 1;
}

DEMANGLE__API int demangle_is_mangled(const char *name) {
    if (name[0] == '_' && name[1] == '_' && name[2] == 'Z') name++; /* macOS: "__Z..." */
    return name[0] == '_' && name[1] == 'Z' && name[2] != '\0';
}

DEMANGLE__API char *demangle_alloc(const char *name, demangle_mode mode) {
    int status = -1;
    char *full;
    if (mode == DEMANGLE_NONE || !demangle__cxa || !demangle_is_mangled(name)) return NULL;
    if (name[1] == '_') name++;
    full = demangle__cxa(name, NULL, NULL, &status);
    if (status != 0 || !full) {
        free(full);
        return NULL;
    }
    if (mode == DEMANGLE_SHORT) {
        size_t n = strlen(full) + 1;
        char *brief = (char *)malloc(n);
        if (brief) demangle_shorten(full, brief, n);
        free(full);
        return brief;
    }
    return full;
}

/* ==== reading a demangled name ======================================================= */
DEMANGLE__FN int demangle__ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$';
}

/* The length of the operator whose keyword "operator" is at s + i: the keyword and its
 * symbol ("operator<<=", "operator()", "operator\"\""), or the keyword alone when a
 * word follows (a conversion, new, delete); 0 when no keyword "operator" is there. */
DEMANGLE__FN size_t demangle__operator(const char *s, size_t i) {
    /* longest first: a symbol is the longest of these its text starts with (a literal
       operator's "\"\" " with the space before its suffix: operator"" _km) */
    static const char *const ops[] = {
        "->*", "<<=", ">>=", "<=>", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=",
        "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
        "\"\" ", "\"\"", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "=", ","
    };
    size_t k;
    if (strncmp(s + i, "operator", 8) != 0 || (i && demangle__ident(s[i - 1])) ||
        demangle__ident(s[i + 8]))
        return 0;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t n = strlen(ops[k]);
        if (strncmp(s + i + 8, ops[k], n) == 0) return 8 + n;
    }
    return 8;
}

DEMANGLE__FN int demangle__opens(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
DEMANGLE__FN int demangle__closes(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }

/* Past the bracketed group that opens at s + i (its closer, or the end of s when it has
 * none): brackets of every kind nest, an operator's symbol ("operator<") and an arrow
 * ("->") are no brackets, a quoted word ("'lambda'") is skipped. */
DEMANGLE__FN size_t demangle__group_end(const char *s, size_t i) {
    size_t depth = 0, op;
    while (s[i]) {
        if ((op = demangle__operator(s, i)) != 0) {
            i += op;
        } else if (s[i] == '-' && s[i + 1] == '>') {
            i += 2;
        } else if (s[i] == '\'' && depth) {
            const char *q = strchr(s + i + 1, '\'');
            i = q ? (size_t)(q - s) + 1 : strlen(s);
        } else if (demangle__opens(s[i])) {
            depth++;
            i++;
        } else if (demangle__closes(s[i])) {
            i++;
            if (depth <= 1) return i;
            depth--;
        } else {
            i++;
        }
    }
    return i;
}

/* Words a thunk's or a clone's name starts with, kept before the short name. */
static const char *const demangle__prefixes[] = {
    "non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
    "transaction clone for "
};

/* The output of demangle_shorten: dst[0..n), cut at cap - 1. */
typedef struct demangle__out {
    char *dst;
    size_t n, cap;
} demangle__out;

DEMANGLE__FN void demangle__put(demangle__out *o, const char *s, size_t n) {
    size_t room = o->cap - 1 - o->n;
    if (n > room) n = room;
    memcpy(o->dst + o->n, s, n);
    o->n += n;
}

/* Whether the parameters "(...)" ending at s + j belong to an enclosing function:
 * qualifiers (" const", " volatile", " &", " &&") and then "::" follow. Past them in *next. */
DEMANGLE__FN int demangle__enclosing(const char *s, size_t j, size_t *next) {
    static const char *const quals[] = { " const", " volatile", " &&", " &" };
    size_t k;
    for (;;) {
        for (k = 0; k < sizeof quals / sizeof quals[0]; k++) {
            size_t n = strlen(quals[k]);
            if (strncmp(s + j, quals[k], n) == 0 && !demangle__ident(s[j + n])) break;
        }
        if (k == sizeof quals / sizeof quals[0]) break;
        j += strlen(quals[k]);
    }
    *next = j;
    return s[j] == ':' && s[j + 1] == ':';
}

DEMANGLE__API size_t demangle_shorten(const char *full, char *dst, size_t cap) {
    demangle__out o;
    size_t i = 0, base = 0, k, op, end, word = 0; /* word: where the text since the last
                                                    space starts */
    int after_decltype = 0;
    o.dst = dst;
    o.n = 0;
    o.cap = cap;
    for (k = 0; k < sizeof demangle__prefixes / sizeof demangle__prefixes[0]; k++) {
        size_t n = strlen(demangle__prefixes[k]);
        if (strncmp(full, demangle__prefixes[k], n) == 0) {
            demangle__put(&o, full, n);
            i = word = base = o.n;
            break;
        }
    }
    while (full[i]) {
        char c = full[i];
        if ((op = demangle__operator(full, i)) != 0) {
            demangle__put(&o, full + i, op);
            i += op;
            if (op == 8) { /* a conversion, new or delete: its words up to the parameters */
                while (full[i] && full[i] != '(') {
                    end = demangle__opens(full[i]) ? demangle__group_end(full, i) : i + 1;
                    demangle__put(&o, full + i, end - i);
                    i = end;
                }
            } else if (full[i] == ' ' && full[i + 1] == '<') {
                i++; /* "operator< <int>": the template's arguments follow, dropped below */
            }
            continue;
        }
        switch (c) {
        case '(':
            if (strncmp(full + i, "(anonymous namespace)", 21) == 0) {
                demangle__put(&o, full + i, 21);
                i += 21;
            } else if (full[i + 1] == '*' || full[i + 1] == '&') {
                /* "void (*f(int))(int)": a return type's declarator, the name inside */
                o.n = base;
                for (i++; full[i] == '*' || full[i] == '&' || full[i] == ' '; i++) {}
                word = i;
            } else if (after_decltype) { /* "decltype (...) f(...)": the return type */
                i = demangle__group_end(full, i);
                after_decltype = 0;
            } else {
                end = demangle__group_end(full, i);
                if (!demangle__enclosing(full, end, &end)) goto done; /* the parameters */
                i = end; /* "f(int)::Local::g()": f's parameters, dropped */
            }
            break;
        case '<':
            i = demangle__group_end(full, i); /* template arguments: dropped */
            break;
        case '[':
            if (strncmp(full + i, "[clone ", 7) == 0) goto done;
            end = demangle__group_end(full, i);
            if (strncmp(full + i, "[abi:", 5) != 0) demangle__put(&o, full + i, end - i);
            i = end;
            break;
        case '{': /* "{lambda(int)#1}", "{unnamed type#1}": a name */
            end = demangle__group_end(full, i);
            demangle__put(&o, full + i, end - i);
            i = end;
            break;
        case '\'': { /* clang's "'lambda'(int)", "'unnamed'": a name */
            const char *q = strchr(full + i + 1, '\'');
            end = q ? (size_t)(q - full) + 1 : strlen(full);
            if (full[end] == '(') end = demangle__group_end(full, end);
            demangle__put(&o, full + i, end - i);
            i = end;
            break;
        }
        case ' ':
            if (full[i + 1] == '[') goto done; /* " [clone .cold]" */
            /* what came before was a return type (or "decltype") */
            after_decltype = i - word == 8 && strncmp(full + word, "decltype", 8) == 0;
            o.n = base;
            word = ++i;
            break;
        case ')':
            goto done;
        default:
            demangle__put(&o, full + i, 1);
            i++;
        }
    }
done:
    if (o.n == base) { /* nothing told: the text as it is */
        o.n = 0;
        demangle__put(&o, full, strlen(full));
    }
    o.dst[o.n] = '\0';
    return o.n;
}

/* ==== matching ======================================================================= */
DEMANGLE__API void demangle_forms_make(demangle_forms *f, const char *symbol) {
    f->symbol = symbol;
    f->brief = NULL;
    if ((f->full = demangle_alloc(symbol, DEMANGLE_FULL)) != NULL) {
        size_t n = strlen(f->full) + 1;
        if ((f->brief = (char *)malloc(n)) != NULL) demangle_shorten(f->full, f->brief, n);
    }
}

DEMANGLE__API void demangle_forms_free(demangle_forms *f) {
    free(f->full);
    free(f->brief);
    f->full = f->brief = NULL;
}

DEMANGLE__API int demangle_forms_match(const demangle_forms *f, const char *pattern,
                                       int (*match)(const char *pattern, const char *name)) {
    const char *forms[3];
    size_t k;
    forms[0] = f->symbol;
    forms[1] = f->full;
    forms[2] = f->brief;
    for (k = 0; k < 3; k++)
        if (forms[k] && (strcmp(pattern, forms[k]) == 0 || (match && match(pattern, forms[k]))))
            return 1;
    return 0;
}

DEMANGLE__API char *demangle_list_next(char **cursor) {
    char *s = *cursor, *item;
    size_t i = 0, depth = 0, op;
    while (s && *s == ',') s++;
    if (!s || !*s) {
        *cursor = NULL;
        return NULL;
    }
    item = s;
    while (s[i] && (s[i] != ',' || depth)) {
        if ((op = demangle__operator(s, i)) != 0) i += op;
        else if (s[i] == '-' && s[i + 1] == '>') i += 2;
        else {
            if (demangle__opens(s[i])) depth++;
            else if (demangle__closes(s[i]) && depth) depth--;
            i++;
        }
    }
    if (s[i]) {
        s[i] = '\0';
        *cursor = s + i + 1;
    } else {
        *cursor = NULL;
    }
    return item;
}
