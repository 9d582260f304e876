/* shlib_main.c - the executable half of the shared-library sample: its own functions
 * call shlib_mix() and shlib_sum() of libshlib_part.so (shlib_part.c). Both halves are
 * compiled with -finstrument-functions and neither is linked with the tracer: run it
 * with LD_PRELOAD=libatf_instrument.so (or `atf record`), and the trace names functions
 * of both modules. Prints the result, so a run can be compared with an untraced one. */
#include <stdint.h>
#include <stdio.h>

uint64_t shlib_mix(uint64_t x, unsigned rounds);
uint64_t shlib_sum(uint64_t x, unsigned n);

static uint64_t mix_many(unsigned n) {
    uint64_t acc = 0;
    unsigned i;
    for (i = 0; i < n; i++) acc += shlib_mix(i + 1u, 3);
    return acc;
}

int main(void) {
    printf("shlib: %llu %llu\n", (unsigned long long)mix_many(10),
           (unsigned long long)shlib_sum(5, 4));
    return 0;
}
