/* scratch_dir.h - a harness's own temporary directory: made under $TMPDIR (else /tmp) with
 * mkdtemp, removed with everything in it when the harness ends. Include after
 * posix_compat.h (mkdtemp on Windows). */
#ifndef ATF_TESTS_SCRATCH_DIR_H
#define ATF_TESTS_SCRATCH_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Removes `path`, a file or a directory and everything below it. */
static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char child[1200];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Makes <$TMPDIR or /tmp>/atf_test_<suite>_XXXXXX into dir; 0, or -1 (and says so). */
static int scratch_dir_make(char *dir, size_t cap, const char *suite) {
    const char *base = getenv("TMPDIR");
    snprintf(dir, cap, "%s/atf_test_%s_XXXXXX", base && *base ? base : "/tmp", suite);
    if (mkdtemp(dir)) return 0;
    printf("%s: mkdtemp %s failed\n", suite, dir);
    return -1;
}

#endif
