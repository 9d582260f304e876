/* golden_gen.c - writes the golden files of tests/golden.h under a directory.
 *
 *   build/tests/golden_gen [DIR]        (default tests/golden)
 *
 * Produces DIR/layout1/{index,detail}.atf and DIR/layout2/{index,detail}.atf from the fixed
 * inputs through the library's encoders. The committed files were made on x86-64 Linux;
 * tests/test_golden.c checks that every host encodes, records and reads them identically. */
#include "atf.h"
#include "golden.h"

#include <errno.h>
#include <stdio.h>
#if defined(_WIN32)
#  include <direct.h>
#  define GOLDEN_MKDIR(path) _mkdir(path)
#else
#  include <sys/stat.h>
#  define GOLDEN_MKDIR(path) mkdir(path, 0777)
#endif

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/golden";
    int layout, which;
    if (GOLDEN_MKDIR(dir) != 0 && errno != EEXIST) {
        fprintf(stderr, "golden_gen: mkdir %s: %s\n", dir, strerror(errno));
        return 1;
    }
    for (layout = ATF_LAYOUT_1; layout <= ATF_LAYOUT_2; layout++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/layout%d", dir, layout);
        if (GOLDEN_MKDIR(path) != 0 && errno != EEXIST) {
            fprintf(stderr, "golden_gen: mkdir %s: %s\n", path, strerror(errno));
            return 1;
        }
        for (which = 0; which < 2; which++) {
            uint8_t buf[GOLDEN_MAX_FILE];
            size_t n = golden_build(layout, which, buf, sizeof buf);
            FILE *f;
            golden_path(path, sizeof path, dir, layout, which);
            f = fopen(path, "wb");
            if (n == 0 || !f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
                fprintf(stderr, "golden_gen: %s: cannot write\n", path);
                return 1;
            }
            printf("%s: %zu bytes\n", path, n);
        }
    }
    return 0;
}
