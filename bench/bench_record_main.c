/* bench_record_main.c - runs the recording benchmarks alone (bench/bench.c runs them with
 * the others):  cc -std=c99 -O2 -D_GNU_SOURCE -I. bench/bench_record_main.c -lpthread */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "bench/bench_record.h"

static void report(const char *name, double value) {
    printf("  %-32s %12.3f\n", name, value);
    fflush(stdout);
}

int main(void) {
    printf("atf.h recording benchmarks (median of %d runs, CRC32-C path: %s)\n", BR_RUNS,
           atf_crc32c_impl_str(atf_crc32c_active()));
    bench_record(report);
    return 0;
}
