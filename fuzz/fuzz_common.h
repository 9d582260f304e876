/* fuzz_common.h - what the fuzz targets share: the plain main() that replays a corpus when
 * the target is built without libFuzzer, a scratch directory made once per process, file
 * writes, and the check that turns a broken invariant into a crash the fuzzer reports.
 *
 * Each fuzz_*.c defines ATF_IMPLEMENTATION, includes atf.h, then this file, then defines
 * LLVMFuzzerTestOneInput. Built with -DATF_FUZZ_LIBFUZZER (and -fsanitize=fuzzer) there is
 * no main; otherwise
 *     fuzz_x FILE_OR_DIR...
 * runs every file given, and every file of every directory given (one level), each from an
 * exact-size heap copy so that a sanitizer sees any read past the input. */
#ifndef ATF_FUZZ_COMMON_H
#define ATF_FUZZ_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(__GNUC__) || defined(__clang__)
#  define FUZZ_FN static __attribute__((unused))
#else
#  define FUZZ_FN static
#endif

/* An invariant of the library's contract that an input broke: abort, so that the fuzzer
 * (or the replay driver under a sanitizer) reports it with the input. */
#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            abort(); \
        } \
    } while (0)

/* The largest number of events a target walks per input: keeps every input fast. */
#define FUZZ_MAX_EVENTS 1000000u

static char fuzz__scratch[512];

FUZZ_FN void fuzz__remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char child[1024];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            fuzz__remove_tree(child);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

FUZZ_FN void fuzz__cleanup(void) {
    if (fuzz__scratch[0]) fuzz__remove_tree(fuzz__scratch);
}

/* A directory of this process under $TMPDIR (or /tmp), made on first use and removed at
 * exit. Aborts when it cannot be made: no input can run without it. */
FUZZ_FN const char *fuzz_scratch_dir(void) {
    if (!fuzz__scratch[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz__scratch, sizeof fuzz__scratch, "%s/atf_fuzz_XXXXXX",
                 tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(fuzz__scratch)) {
            fprintf(stderr, "fuzz: mkdtemp %s: %s\n", fuzz__scratch, strerror(errno));
            abort();
        }
        atexit(fuzz__cleanup);
    }
    return fuzz__scratch;
}

/* Writes len bytes to path (replacing it); aborts on failure (the disk, not the input). */
FUZZ_FN void fuzz_write_file(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        fprintf(stderr, "fuzz: writing %s: %s\n", path, strerror(errno));
        abort();
    }
}

FUZZ_FN void fuzz_mkdir(const char *path) {
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz: mkdir %s: %s\n", path, strerror(errno));
        abort();
    }
}

/* Little-endian reads of the inputs' own framing (length prefixes, flags). */
FUZZ_FN uint32_t fuzz_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
FUZZ_FN uint32_t fuzz_le16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }

/* An exact-size heap copy of [p, p + n) (one byte allocated for n == 0, none readable). */
FUZZ_FN uint8_t *fuzz_copy(const uint8_t *p, size_t n) {
    uint8_t *c = (uint8_t *)malloc(n ? n : 1);
    if (!c) abort();
    if (n) memcpy(c, p, n);
    return c;
}

#if !defined(ATF_FUZZ_LIBFUZZER)
static int fuzz__run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL, *exact;
    size_t len = 0, cap = 0;
    if (!f) {
        fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (;;) {
        size_t got;
        if (len == cap) {
            uint8_t *p;
            cap = cap ? cap * 2 : 65536;
            p = (uint8_t *)realloc(buf, cap);
            if (!p) abort();
            buf = p;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    exact = fuzz_copy(buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int fuzz__name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir, in name order. Returns the count, or -1. */
static long fuzz__run_dir(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    long count = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            char **p;
            cap = cap ? cap * 2 : 64;
            p = (char **)realloc(names, cap * sizeof *names);
            if (!p) abort();
            names = p;
        }
        names[n] = (char *)malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (!names[n]) abort();
        sprintf(names[n], "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, fuzz__name_cmp);
    for (i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (fuzz__run_file(names[i]) != 0) count = -1;
            else if (count >= 0) count++;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv) {
    long total = 0;
    int i, bad = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    for (i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz: %s: %s\n", argv[i], strerror(errno));
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            long n = fuzz__run_dir(argv[i]);
            if (n < 0) bad = 1;
            else total += n;
        } else if (fuzz__run_file(argv[i]) != 0) {
            bad = 1;
        } else {
            total++;
        }
    }
    printf("%s: %ld inputs replayed%s\n", argv[0], total, bad ? ", some unreadable" : "");
    return bad ? 1 : 0;
}
#endif

#endif
