/* aliases_part.c - the versioned half of the aliases sample (aliases_main.c), built into
 * libaliases_part.so with the version script aliases_part.map. As libraries that keep old
 * versions of a function do, the code's own names are hidden and the symbol table names
 * the same addresses with versions:
 *   part_v2         "part_value@@ALIASES_2" (the default version: what programs link)
 *   part_v1         "part_value@ALIASES_1" (an older one, which part_both calls)
 *   part_next_impl  exported as it is and as "part_next@ALIASES_1" (a versioned name
 *                   before a plain one)
 * A trace names the first two part_value and the third part_next. */
#include <stdint.h>

uint64_t part_v1(uint64_t x);
uint64_t part_v2(uint64_t x);
uint64_t part_next_impl(uint64_t x);
uint64_t part_both(uint64_t x);
__asm__(".symver part_v1, part_value@ALIASES_1");
__asm__(".symver part_v2, part_value@@ALIASES_2");
__asm__(".symver part_next_impl, part_next@ALIASES_1");

__attribute__((noinline)) uint64_t part_v1(uint64_t x) { return x + 1; }
__attribute__((noinline)) uint64_t part_v2(uint64_t x) { return x + 2; }
__attribute__((noinline)) uint64_t part_next_impl(uint64_t x) { return x * 5; }

/* both versions of part_value, as a caller built against each would reach them */
uint64_t part_both(uint64_t x) { return part_v1(x) + part_v2(x); }
