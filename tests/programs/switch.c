/* switch.c - a program that switches its own recording on and off, at known points, by
 * sending itself the tracer's toggle signal (atf record --start-paused,
 * --toggle-signal): what a trace of it holds is known exactly.
 *
 *   build/programs/switch_hooked [SIGNAL [own]]
 *
 * Calls before() 100 times, sends itself SIGNAL (default USR1), calls during() 50 times,
 * sends it again, calls after() 30 times. Recorded with --start-paused, the trace holds
 * main (its call opened again when recording comes on) and the 50 calls of during()
 * only, between two gaps of reason "skipped": 201 events before (main's call and
 * before()'s 100 calls), 61 after (after()'s 30 calls and main's return). With "own" it
 * first sets a handler of its own for SIGNAL (the tracer says so on stderr), so nothing
 * is switched on. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOI __attribute__((no_instrument_function))

static volatile unsigned sink;

__attribute__((noinline)) static void before(unsigned i) { sink += i; }
__attribute__((noinline)) static void during(unsigned i) { sink += 2 * i; }
__attribute__((noinline)) static void after(unsigned i) { sink += 3 * i; }

NOI static void own_handler(int sig) { (void)sig; }

NOI static int signal_of(const char *name) {
    if (strcmp(name, "USR2") == 0) return SIGUSR2;
    if (strcmp(name, "HUP") == 0) return SIGHUP;
    return SIGUSR1;
}

int main(int argc, char **argv) {
    int sig = signal_of(argc > 1 ? argv[1] : "USR1");
    unsigned i;
    if (argc > 2 && strcmp(argv[2], "own") == 0) signal(sig, own_handler);
    for (i = 0; i < 100; i++) before(i);
    raise(sig);
    for (i = 0; i < 50; i++) during(i);
    raise(sig);
    for (i = 0; i < 30; i++) after(i);
    printf("switch: %u\n", sink);
    return 0;
}
