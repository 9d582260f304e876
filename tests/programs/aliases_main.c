/* aliases_main.c - functions known by several symbols, for tests/elf_symbols_checks.sh:
 * the tracer names them when the program exits, the atf command names them offline from
 * the module files, and both must give each the same name, the one the tie rule of
 * tools/elf_symbols.h gives. Here, in the executable, one case of each rule:
 *   add_pair    a global alias of a static function (a global before a local)
 *   mul_pair    a weak alias of __mul_impl (fewer leading underscores)
 *   scale_alpha a second global name of scale_zeta (then by the bytes of the name)
 * Versioned names are in libaliases_part.so (aliases_part.c), which it links. Built with
 * -finstrument-functions and no tracer; prints its result, the same traced or not. */
#include <stdint.h>
#include <stdio.h>

uint64_t add_pair(uint64_t a, uint64_t b);
uint64_t __mul_impl(uint64_t a, uint64_t b);
uint64_t mul_pair(uint64_t a, uint64_t b);
uint64_t scale_zeta(uint64_t x);
uint64_t scale_alpha(uint64_t x);
/* of libaliases_part.so */
uint64_t part_value(uint64_t x);
uint64_t part_next_impl(uint64_t x);
uint64_t part_both(uint64_t x);

__attribute__((noinline)) static uint64_t add_impl(uint64_t a, uint64_t b) { return a + b; }
uint64_t add_pair(uint64_t a, uint64_t b) __attribute__((alias("add_impl")));

__attribute__((noinline)) uint64_t __mul_impl(uint64_t a, uint64_t b) { return a * b; }
uint64_t mul_pair(uint64_t a, uint64_t b) __attribute__((weak, alias("__mul_impl")));

__attribute__((noinline)) uint64_t scale_zeta(uint64_t x) { return x * 3; }
uint64_t scale_alpha(uint64_t x) __attribute__((alias("scale_zeta")));

int main(void) {
    uint64_t acc = add_pair(1, 2) + mul_pair(3, 4) + scale_alpha(5) + scale_zeta(6);
    acc += part_value(7) + part_next_impl(8) + part_both(9);
    printf("aliases: %llu\n", (unsigned long long)acc);
    return 0;
}
