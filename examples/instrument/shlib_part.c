/* shlib_part.c - the half of the shared-library sample that lives in a shared library
 * (built -fPIC -shared -finstrument-functions into libshlib_part.so). shlib_main.c calls
 * into it, and it calls back into a static function of its own, so a trace of
 * shlib_main holds functions of two modules: the executable and this library. */
#include <stdint.h>

uint64_t shlib_mix(uint64_t x, unsigned rounds);

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
