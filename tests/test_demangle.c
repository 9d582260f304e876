/* test_demangle.c - C++ names (tools/demangle.c): the full names of tests/data/
 * demangle_full.tsv (a sample of real binaries' symbols) against what c++filt printed for
 * them, through the C++ runtime's demangler found at run time (skipped, and said, where
 * this host has none); the short forms of tests/data/demangle_short.tsv, checked by hand,
 * and of every full name of the sample; the three names a pattern matches; the splitting
 * of a list of names at its commas. Run from the repository's root (make test does). */
#include "atf.h"
#include "../tools/demangle.c"

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define FULL_TSV "tests/data/demangle_full.tsv"
#define SHORT_TSV "tests/data/demangle_short.tsv"

enum { LINE_MAX_BYTES = 8192, SHOW_MAX = 5 };

/* The next "A<tab>B" line of f (comments and blank lines skipped) into line, split: 1, or
 * 0 at the end. A line without a tab fails the test. */
static int next_pair(FILE *f, char *line, size_t cap, char **a, char **b) {
    while (fgets(line, (int)cap, f)) {
        char *tab;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        tab = strchr(line, '\t');
        CHECK(tab != NULL);
        if (!tab) continue;
        *tab = '\0';
        *a = line;
        *b = tab + 1;
        return 1;
    }
    return 0;
}

static FILE *open_data(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) printf("  %s: cannot be opened (run from the repository's root)\n", path);
    CHECK(f != NULL);
    return f;
}

static void test_modes_and_symbols(void) {
    demangle_mode m = DEMANGLE_NONE;
    CHECK(demangle_parse_mode("full", &m) && m == DEMANGLE_FULL);
    CHECK(demangle_parse_mode("short", &m) && m == DEMANGLE_SHORT);
    CHECK(demangle_parse_mode("none", &m) && m == DEMANGLE_NONE);
    CHECK(!demangle_parse_mode("Full", &m));
    CHECK(!demangle_parse_mode("", &m));
    CHECK(demangle_is_mangled("_ZN4work4evalEi"));
    CHECK(demangle_is_mangled("_Znwm"));                 /* operator new(unsigned long) */
    CHECK(demangle_is_mangled("__ZN4work4evalEi"));      /* macOS */
    CHECK(!demangle_is_mangled("main"));
    CHECK(!demangle_is_mangled("_Z"));
    CHECK(!demangle_is_mangled("Z4work"));
    CHECK(!demangle_is_mangled(""));
    /* what stays as it is: no mangled name, or the mode says so */
    CHECK(demangle_alloc("main", DEMANGLE_FULL) == NULL);
    CHECK(demangle_alloc("_ZN4work4evalEi", DEMANGLE_NONE) == NULL);
}

/* Every symbol of the sample demangles to what c++filt printed. */
static void test_full_names_as_cxxfilt(void) {
    static char line[LINE_MAX_BYTES];
    char *sym, *want;
    size_t n = 0, differ = 0;
    FILE *f;
    if (!demangle_runtime(1)) {
        printf("  full names: skipped (no C++ runtime's __cxa_demangle on this host)\n");
        return;
    }
    if ((f = open_data(FULL_TSV)) == NULL) return;
    while (next_pair(f, line, sizeof line, &sym, &want)) {
        char *got = demangle_alloc(sym, DEMANGLE_FULL);
        n++;
        if (!got || strcmp(got, want) != 0) {
            if (differ++ < SHOW_MAX)
                printf("  %s:\n    expected %s\n    found    %s\n", sym, want,
                       got ? got : "(none)");
        }
        free(got);
    }
    fclose(f);
    CHECK_EQ(0, differ);
    CHECK(n >= 300); /* a sample of a few hundred names */
    /* not a name the runtime reads: stays as it is */
    CHECK(demangle_alloc("_Zbogus", DEMANGLE_FULL) == NULL);
    CHECK(demangle_alloc("_Zbogus", DEMANGLE_SHORT) == NULL);
}

/* The short forms checked by hand, through a buffer of the right size and through short
 * ones (cut, never past the buffer). */
static void test_short_forms(void) {
    static char line[LINE_MAX_BYTES], got[LINE_MAX_BYTES];
    char *full, *want;
    size_t n = 0;
    FILE *f = open_data(SHORT_TSV);
    if (!f) return;
    while (next_pair(f, line, sizeof line, &full, &want)) {
        size_t len = demangle_shorten(full, got, sizeof got), cap;
        n++;
        if (strcmp(got, want) != 0)
            printf("  %s:\n    expected %s\n    found    %s\n", full, want, got);
        CHECK(strcmp(got, want) == 0);
        CHECK_EQ(strlen(want), len);
        for (cap = 1; cap < strlen(want) + 1; cap += 3) { /* cut: a prefix, NUL ended */
            char small[LINE_MAX_BYTES];
            memset(small, 'x', sizeof small);
            len = demangle_shorten(full, small, cap);
            CHECK_EQ(cap - 1, len);
            CHECK_EQ(0, small[cap - 1]);
            CHECK_EQ('x', small[cap]);
            if (strncmp(small, want, cap - 1) != 0)
                printf("  cut at %u: %s -> %s\n", (unsigned)cap, full, small);
            CHECK(strncmp(small, want, cap - 1) == 0);
        }
    }
    fclose(f);
    CHECK(n >= 40);
}

/* The short form of every full name of the sample: never longer; without parameters or
 * template arguments outside the parts kept whole (lambdas, the anonymous namespace,
 * clang's quoted names, conversion operators' types); what demangle_alloc gives in short. */
static void test_short_forms_of_the_sample(void) {
    static char line[LINE_MAX_BYTES], got[LINE_MAX_BYTES];
    char *sym, *full;
    size_t n = 0, bad = 0;
    FILE *f = open_data(FULL_TSV);
    if (!f) return;
    while (next_pair(f, line, sizeof line, &sym, &full)) {
        size_t len = demangle_shorten(full, got, sizeof got), i, depth = 0;
        int ok = len <= strlen(full) && len > 0;
        n++;
        for (i = 0; ok && got[i]; i++) {
            if (strncmp(got + i, "(anonymous namespace)", 21) == 0) i += 20;
            else if (got[i] == '{') depth++;
            else if (got[i] == '}') depth--;
            else if (strncmp(got + i, "operator", 8) == 0 && strchr(" (<", got[i + 8]))
                break; /* an operator's own name follows */
            else if (!depth && (got[i] == '(' || got[i] == '<')) ok = 0;
        }
        if (!ok && bad++ < SHOW_MAX) printf("  %s: short form %s\n", full, got);
        if (demangle_runtime(1)) {
            char *s = demangle_alloc(sym, DEMANGLE_SHORT);
            CHECK(s != NULL && strcmp(s, got) == 0);
            free(s);
        }
    }
    fclose(f);
    CHECK_EQ(0, bad);
    CHECK(n > 0);
}

/* A tiny glob for the test ('*' only), standing for the tracer's fnmatch. */
static int star_match(const char *p, const char *s) {
    if (!*p) return !*s;
    if (*p == '*') return star_match(p + 1, s) || (*s && star_match(p, s + 1));
    return *s == *p && star_match(p + 1, s + 1);
}

static void test_patterns_match_any_name(void) {
    demangle_forms f;
    demangle_forms_make(&f, "main");
    CHECK(f.full == NULL && f.brief == NULL);
    CHECK(demangle_forms_match(&f, "main", NULL));
    CHECK(!demangle_forms_match(&f, "mai", NULL));
    CHECK(demangle_forms_match(&f, "ma*", star_match));
    demangle_forms_free(&f);
    if (!demangle_runtime(1)) {
        printf("  patterns on C++ names: skipped (no C++ runtime's __cxa_demangle)\n");
        return;
    }
    demangle_forms_make(&f, "_ZN4work4evalERKSt6vectorIiSaIiEERmi");
    CHECK(f.full && strcmp(f.full, "work::eval(std::vector<int, std::allocator<int> > const&, "
                                    "unsigned long&, int)") == 0);
    CHECK(f.brief && strcmp(f.brief, "work::eval") == 0);
    CHECK(demangle_forms_match(&f, "_ZN4work4evalERKSt6vectorIiSaIiEERmi", NULL));
    CHECK(demangle_forms_match(&f, "work::eval", NULL));
    CHECK(demangle_forms_match(&f, "work::eval(std::vector<int, std::allocator<int> > const&, "
                                   "unsigned long&, int)", NULL));
    CHECK(!demangle_forms_match(&f, "work::eval(int)", NULL));
    CHECK(!demangle_forms_match(&f, "work::*", NULL));      /* no glob without a matcher */
    CHECK(demangle_forms_match(&f, "work::*", star_match));
    CHECK(demangle_forms_match(&f, "_ZN4work*", star_match));
    CHECK(demangle_forms_match(&f, "*eval", star_match));   /* the short name only ends so */
    CHECK(!demangle_forms_match(&f, "eval*", star_match));
    demangle_forms_free(&f);
    /* a template function: its full name starts with its return type, its short not */
    demangle_forms_make(&f, "_ZN4work3sumIiEET_RNS_4GridIS1_EE");
    CHECK(f.full && strcmp(f.full, "int work::sum<int>(work::Grid<int>&)") == 0);
    CHECK(demangle_forms_match(&f, "work::*", star_match));
    CHECK(demangle_forms_match(&f, "work::sum", NULL));
    CHECK(!demangle_forms_match(&f, "work::sum<double>*", star_match));
    demangle_forms_free(&f);
}

/* The items demangle_list_next makes of text, joined by '|'. */
static void split(const char *text, char *out, size_t cap) {
    char buf[512], *cursor = buf, *item;
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", text);
    out[0] = '\0';
    while ((item = demangle_list_next(&cursor)) != NULL) {
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "|" : "", item);
        if (n >= cap) break;
    }
}

static void test_lists_of_names(void) {
    static const char *const cases[][2] = {
        { "fib,sort_*", "fib|sort_*" },
        { ",,a,,b,", "a|b" },
        { "", "" },
        { "work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int),main",
          "work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int)|main" },
        { "f<int, long>,g", "f<int, long>|g" },
        { "main::{lambda(int, int)#1}::operator(),x", "main::{lambda(int, int)#1}::operator()|x" },
        { "work::operator<,work::operator,,y", "work::operator<|work::operator,|y" },
        { "work::operator<<(int, int),z", "work::operator<<(int, int)|z" },
        { "a->b,c", "a->b|c" },
        { "[ab]*,c", "[ab]*|c" },
        { "unbalanced<,c", "unbalanced<,c" },   /* a pattern with an open bracket: one */
    };
    size_t i;
    char out[512];
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        split(cases[i][0], out, sizeof out);
        if (strcmp(out, cases[i][1]) != 0)
            printf("  '%s': expected '%s', found '%s'\n", cases[i][0], cases[i][1], out);
        CHECK(strcmp(out, cases[i][1]) == 0);
    }
}

static const test_case tests[] = {
    { "modes_and_symbols", test_modes_and_symbols },
    { "full_names_as_cxxfilt", test_full_names_as_cxxfilt },
    { "short_forms", test_short_forms },
    { "short_forms_of_the_sample", test_short_forms_of_the_sample },
    { "patterns_match_any_name", test_patterns_match_any_name },
    { "lists_of_names", test_lists_of_names },
};

int main(int argc, char **argv) {
    return harness_run("demangle", tests, sizeof tests / sizeof tests[0], argc, argv);
}
