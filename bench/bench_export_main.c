/* bench_export_main.c - runs bench/bench_export.h alone and prints its figures:
 *     make build/bench_export && build/bench_export */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "bench_export.h"

static void print_figure(const char *name, double value) {
    printf("  %-34s %10.3f\n", name, value);
    fflush(stdout);
}

int main(void) {
    bench_export(print_figure);
    return 0;
}
