/* shlib_part.c - the half of the shared-library sample that lives in a shared library
 * (built -fPIC -shared -finstrument-functions into libshlib_part.so, with the version
 * script shlib_part.map). shlib_main.c calls into it, and it calls back into a static
 * function of its own, so a trace of shlib_main holds functions of two modules: the
 * executable and this library. shlib_sum is a versioned symbol, as libraries keeping
 * old versions of a function have them: the library's symbol table names it
 * "shlib_sum@@SHLIB_1" (and shlib_sum_v1, the code's own name), traces name it shlib_sum. */
#include <stdint.h>

uint64_t shlib_mix(uint64_t x, unsigned rounds);
uint64_t shlib_sum_v1(uint64_t x, unsigned n);
__asm__(".symver shlib_sum_v1, shlib_sum@@SHLIB_1");

/* one xorshift round: static, so only the library's .symtab names it */
static uint64_t shlib_round(uint64_t x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

uint64_t shlib_mix(uint64_t x, unsigned rounds) {
    unsigned i;
    for (i = 0; i < rounds; i++) x = shlib_round(x);
    return x;
}

/* shlib_sum(x, n): x + (x + 1) + ... + (x + n - 1), through shlib_mix(.., 0) */
uint64_t shlib_sum_v1(uint64_t x, unsigned n) {
    uint64_t acc = 0;
    unsigned i;
    for (i = 0; i < n; i++) acc += shlib_mix(x + i, 0);
    return acc;
}
