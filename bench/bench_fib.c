/* bench_fib.c - the recursive program bench_instrument.h times: built plain, with the
 * auto-tracer (-finstrument-functions + atf_instrument.c; also run with fib left out by
 * its filters), with -finstrument-functions alone (for uftrace and LTTng-UST's preloaded
 * tracer, and as the floor under a filtered-out call) and with -pg (for uftrace).
 *
 *   fib_plain N      prints fib(N); fib makes 2 * fib(N + 1) - 1 calls
 *
 * Built with -fno-optimize-sibling-calls so that no build turns part of the recursion
 * into a loop: every build makes the same calls. */
#include <stdio.h>
#include <stdlib.h>

unsigned long fib(unsigned n);

__attribute__((noinline)) unsigned long fib(unsigned n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 30;
    printf("fib(%u) = %lu\n", n, fib(n));
    return 0;
}
