/* make_fixtures.c - writes every fixture of tests/fixtures.h as a file under a directory.
 *
 *   build/tests/make_fixtures DIR
 *
 * Creates DIR (and its subdirectories) as needed. Index files and detail files land at the
 * catalog's relative names ("l1_finalized/index.atf", "bad_magic.atf", ...); a thread entry
 * is a directory holding index.atf and, when it has links, detail.atf. Prints one line per
 * file written; exits non-zero on the first I/O failure. */
#include "fixtures.h"

#include <errno.h>
#if defined(_WIN32)
#  include <direct.h>
#  define FX_MKDIR(path) _mkdir(path)
#else
#  include <sys/stat.h>
#  include <sys/types.h>
#  define FX_MKDIR(path) mkdir(path, 0777)
#endif

/* Creates every directory along `path` up to its last '/' (exclusive when !whole). */
static int make_dirs(const char *path, int whole) {
    char tmp[1024];
    size_t n = strlen(path), i;
    if (n >= sizeof tmp) return -1;
    memcpy(tmp, path, n + 1);
    for (i = 1; i <= n; i++) {
        if (tmp[i] == '/' || (whole && tmp[i] == '\0')) {
            char saved = tmp[i];
            tmp[i] = '\0';
            if (FX_MKDIR(tmp) != 0 && errno != EEXIST) {
                fprintf(stderr, "make_fixtures: mkdir %s: %s\n", tmp, strerror(errno));
                return -1;
            }
            tmp[i] = saved;
        }
    }
    return 0;
}

static int write_file(const char *dir, const char *name, const fx_buf *b) {
    char path[1024];
    FILE *f;
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "make_fixtures: path too long: %s/%s\n", dir, name);
        return -1;
    }
    if (make_dirs(path, 0) != 0) return -1;
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "make_fixtures: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if ((b->len && fwrite(b->data, 1, b->len, f) != b->len) || fclose(f) != 0) {
        fprintf(stderr, "make_fixtures: writing %s failed\n", path);
        return -1;
    }
    printf("%s (%zu bytes)\n", path, b->len);
    return 0;
}

int main(int argc, char **argv) {
    size_t count, i;
    const fx_entry *cat = fx_catalog(&count);
    int rc = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    if (make_dirs(argv[1], 1) != 0) return 1;
    for (i = 0; i < count && rc == 0; i++) {
        const fx_entry *e = &cat[i];
        fx_buf index = { NULL, 0, 0 }, detail = { NULL, 0, 0 };
        char name[512];
        fx_entry_build(e, &index, &detail);
        if (e->kind == FX_KIND_INDEX) {
            rc = write_file(argv[1], e->name, &index);
        } else if (e->kind == FX_KIND_DETAIL) {
            rc = write_file(argv[1], e->name, &detail);
        } else {
            snprintf(name, sizeof name, "%s/index.atf", e->name);
            rc = write_file(argv[1], name, &index);
            if (rc == 0 && e->stride) {
                snprintf(name, sizeof name, "%s/detail.atf", e->name);
                rc = write_file(argv[1], name, &detail);
            }
        }
        fx_buf_free(&index);
        fx_buf_free(&detail);
    }
    return rc == 0 ? 0 : 1;
}
