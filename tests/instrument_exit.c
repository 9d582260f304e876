/* instrument_exit.c - the auto-tracer when a process ends while its threads still run.
 * Built by tests/examples_checks.sh with -finstrument-functions and atf_instrument.o.
 *
 * Three threads call instrumented functions without end; one of them also forks a child
 * that runs instrumented code and ends with _exit (the child records into a pid_*
 * directory of its own, which the tracer's _exit finalizes, and leaves the parent's files
 * alone); a short-lived thread exits early (its slot is finalized before the end). Once
 * every running thread has made progress (not after a fixed delay: under a sanitizer a
 * thread's first event, which allocates its ring, can take long), main calls exit() with
 * the threads still running: the tracer must close the session without a crash and with
 * files that verify. With the argument "nofork" the forker thread does not fork: under the
 * sanitizers a child forked while other threads run can deadlock in ASan's allocator (see
 * tests/instrument_checks.sh), and a deadlocked child would outlive the check. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

unsigned spin(unsigned n);
static volatile unsigned sink;

unsigned spin(unsigned n) { return n < 2 ? n : spin(n - 1) + 1; }

static unsigned rounds[3]; /* per forever thread (arg 0..2): loops done */

static void *forever(void *arg) {
    unsigned i = 0, k = (unsigned)(size_t)arg;
    for (;;) {
        sink += spin(8 + (i++ & 7) + k);
        __atomic_store_n(&rounds[k], i, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int no_fork;

static void *forker(void *arg) {
    pid_t pid = no_fork ? -1 : fork();
    (void)arg;
    if (pid == 0) {
        sink += spin(20);
        _exit(0);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
    return forever((void *)0);
}

static void *short_lived(void *arg) {
    sink += spin(30 + (unsigned)(size_t)arg);
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t t;
    struct timespec ts = {0, 10 * 1000 * 1000};
    unsigned waited = 0, k;
    no_fork = argc > 1 && strcmp(argv[1], "nofork") == 0;
    pthread_create(&t, NULL, short_lived, NULL);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, forever, (void *)1);
    pthread_create(&t, NULL, forever, (void *)2);
    pthread_create(&t, NULL, forker, NULL);
    /* at least 30 ms, then until each thread looped 100 times (at most 10 s) */
    for (k = 0; k < 3 || waited < 3; waited++) {
        nanosleep(&ts, NULL);
        for (k = 0; k < 3 && __atomic_load_n(&rounds[k], __ATOMIC_RELAXED) >= 100; k++) {}
        if (waited >= 1000) break;
    }
    printf("exiting with threads running\n");
    exit(0);
}
