/* bench_merge_main.c - runs bench_merge.h alone and prints "name value" lines.
 *   cc -std=c99 -O2 -D_GNU_SOURCE -I. -o build/bench_merge bench/bench_merge_main.c -lpthread */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "bench_merge.h"

static void print_figure(const char *name, double value) {
    printf("%-26s %8.3f\n", name, value);
    fflush(stdout);
}

int main(void) {
    bench_merge(print_figure);
    return 0;
}
