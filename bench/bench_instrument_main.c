/* bench_instrument_main.c - the auto-tracer benchmark on its own:
 *   make bench-instrument      (builds the fib programs and runs this)
 * Prints each figure of bench_instrument.h. */
#define ATF_IMPLEMENTATION
#include "atf.h"

#include "bench_instrument.h"

static void print_figure(const char *name, double value) {
    printf("  %-36s %12.3f\n", name, value);
    fflush(stdout);
}

int main(void) {
    printf("auto-tracer overhead (fib; medians of %d process runs)\n", BENCH_INSTRUMENT_RUNS);
    bench_instrument(print_figure);
    return 0;
}
