/* scratch_dir.h - what the test programs share besides the harness: scratch directories, files
 * written and read whole, and deterministic pseudo-random numbers. Every helper is static;
 * a program uses some of them. Include after atf.h. */
#ifndef ATF_TESTS_SCRATCH_DIR_H
#define ATF_TESTS_SCRATCH_DIR_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.h"

#if defined(__GNUC__) || defined(__clang__)
#  define UTIL_UNUSED __attribute__((unused))
#else
#  define UTIL_UNUSED
#endif

/* ---- scratch directories -------------------------------------------------------------- */

/* Where scratch sessions go: $ATF_TEST_TMP, else $BUILD (set by make test), else build. */
static UTIL_UNUSED const char *scratch_base(void) {
    const char *v = getenv("ATF_TEST_TMP");
    if (!v || !*v) v = getenv("BUILD");
    return v && *v ? v : "build";
}

/* <scratch base>/<what>_<pid>: a directory of this run's own (not made here). */
static UTIL_UNUSED void scratch_root(char *buf, size_t cap, const char *what) {
    snprintf(buf, cap, "%s/%s_%d", scratch_base(), what, (int)getpid());
}

/* Makes <$TMPDIR or /tmp>/atf_test_<suite>_XXXXXX into dir; 0, or -1 (and says so). */
static UTIL_UNUSED int scratch_dir_make(char *dir, size_t cap, const char *suite) {
    const char *base = getenv("TMPDIR");
#if defined(_WIN32)
    if (!base || !*base) base = getenv("TEMP");
#endif
    snprintf(dir, cap, "%s/atf_test_%s_XXXXXX", base && *base ? base : "/tmp", suite);
    if (mkdtemp(dir)) return 0;
    printf("%s: mkdtemp %s failed\n", suite, dir);
    return -1;
}

/* Removes `path`: a file, a link, or a directory and everything below it (links are
 * removed, never followed). */
static UTIL_UNUSED void remove_tree(const char *path) {
    struct stat st;
    DIR *d;
    struct dirent *e;
    char child[1200];
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    d = opendir(path);
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        remove_tree(child);
    }
    if (d) closedir(d);
    rmdir(path);
}

/* ---- files ------------------------------------------------------------------------------ */

static UTIL_UNUSED int path_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* The size of the file at path, 0 when it does not exist. */
static UTIL_UNUSED uint64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Writes len bytes to path, replacing it; 0, or -1 when any step fails. */
static UTIL_UNUSED int write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return -1;
    ok = len == 0 || fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The whole file at path, NUL-terminated (so text can be read as a string), its size in
 * *len (optional); NULL when it cannot be read. The caller frees it. */
static UTIL_UNUSED char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = (char *)malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        if (buf) {
            buf[n] = '\0';
            if (len) *len = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

/* ---- deterministic pseudo-random numbers (splitmix64) ------------------------------------ */

/* One sequence per program; a test that wants its own numbers whatever ran before seeds it. */
static UTIL_UNUSED uint64_t util_rng_state = 0x243F6A8885A308D3ull;

static UTIL_UNUSED void rng_seed(uint64_t seed) { util_rng_state = seed; }

static UTIL_UNUSED uint64_t rng_next(void) {
    uint64_t z = (util_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform enough in [0, n); 0 when n is 0. */
static UTIL_UNUSED size_t rng_below(size_t n) { return n ? (size_t)(rng_next() % n) : 0; }

static UTIL_UNUSED void rng_fill(uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = (uint8_t)rng_next();
}

#endif
