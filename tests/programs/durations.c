/* durations.c - calls whose durations are fixed by construction, for
 * `atf record --min-duration` (tests/bounds_checks.sh).
 *
 *   build/programs/durations_hooked
 *
 * main calls slow() twice directly (each sleeps 30 ms), outer() once (it calls slow()
 * once, and quick() 100 times), and busy() once (1000 calls of quick(), well under a
 * millisecond in all). With --min-duration 10ms the trace holds exactly: main, outer,
 * slow (3 calls): the long calls and their callers; neither quick nor busy. */
#include <stdio.h>
#include <time.h>

static volatile unsigned sink;

__attribute__((noinline)) static void quick(unsigned i) { sink += i; }

__attribute__((noinline)) static void slow(void) {
    struct timespec ts = { 0, 30000000 };
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void outer(void) {
    unsigned i;
    for (i = 0; i < 100; i++) quick(i);
    slow();
}

__attribute__((noinline)) static void busy(void) {
    unsigned i;
    for (i = 0; i < 1000; i++) quick(i);
}

int main(void) {
    slow();
    outer();
    busy();
    slow();
    printf("durations: %u\n", sink);
    return 0;
}
