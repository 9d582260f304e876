/* bench_fib.c - the recursive program bench_instrument.h times: built plain, with the
 * auto-tracer (-finstrument-functions + atf_instrument.c; also run with fib left out by
 * its filters), with -finstrument-functions alone (for uftrace and LTTng-UST's preloaded
 * tracer, and as the floor under a filtered-out call) and with -pg (for uftrace).
 *
 *   fib_plain N [THREADS]   prints fib(N), computed by each of THREADS threads (default
 *                           1: by main itself); fib(N) makes 2 * fib(N + 1) - 1 calls,
 *                           and each thread's function one more
 *
 * Built with -fno-optimize-sibling-calls so that no build turns part of the recursion
 * into a loop: every build makes the same calls. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long fib(unsigned n);

__attribute__((noinline)) unsigned long fib(unsigned n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned fib_n;

static void *worker(void *arg) {
    *(unsigned long *)arg = fib(fib_n);
    return NULL;
}

int main(int argc, char **argv) {
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1, i;
    pthread_t t[64];
    unsigned long v[64];
    fib_n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 30;
    if (threads <= 1) {
        printf("fib(%u) = %lu\n", fib_n, fib(fib_n));
        return 0;
    }
    if (threads > 64) threads = 64;
    for (i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, &v[i]) != 0) return 1;
    for (i = 0; i < threads; i++) pthread_join(t[i], NULL);
    printf("fib(%u) = %lu in each of %u threads\n", fib_n, v[0], threads);
    return 0;
}
