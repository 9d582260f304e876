/* exits.c - processes that end without running destructors, which is where the
 * auto-tracer would otherwise finalize their traces. `make` builds it twice with
 * -finstrument-functions: build/programs/exits_hooked (no tracer: run it under
 * `atf record` or with LD_PRELOAD=libatf_instrument.so) and build/programs/exits_traced
 * (linked with atf_instrument.o).
 *
 * The parent works one round (fib(12): 465 calls), forks a child that works one round
 * and ends with _exit(0), then one that works two rounds and ends with _Exit(0), and
 * vforks a child that ends with _exit(0) at once (on the parent's memory: it must leave
 * the parent's trace alone); then it works two rounds more and ends as its argument says:
 *   exits_hooked           returns from main (exit status 0)
 *   exits_hooked _exit     _exit(3)
 *   exits_hooked handler   _exit(4) from a SIGUSR2 handler (the tracer leaves the trace
 *                          to `atf record`/`atf recover` there: finalizing it from a
 *                          handler could hang)
 * Traced, each process that worked has a pid_* directory, finalized by the tracer, with
 * 465 fib calls per round. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned long fib(unsigned n);

unsigned long fib(unsigned n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static volatile unsigned long sink;

static void work(unsigned rounds) {
    unsigned i;
    for (i = 0; i < rounds; i++) sink += fib(12);
}

static void on_usr2(int sig) {
    (void)sig;
    _exit(4);
}

/* Waits for child pid; 1 when it exited with status 0. */
static int reaped(pid_t pid) {
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

/* A vfork child that ends at once; 1 when it exited with status 0. In a function of its
 * own: a call that returns twice (vfork) makes gcc 12 drop code of the function holding
 * it when built with -finstrument-functions (the _exit(3) of main, once). */
static int vforked(void) {
    pid_t pid = vfork();
    if (pid == 0) _exit(0);
    return reaped(pid);
}

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "return";
    pid_t pid;
    int ok = 1;
    work(1);
    fflush(stdout);
    if ((pid = fork()) == 0) {
        work(1);
        _exit(0);
    }
    ok &= reaped(pid);
    if ((pid = fork()) == 0) {
        work(2);
        _Exit(0);
    }
    ok &= reaped(pid);
    ok &= vforked();
    work(2);
    printf("exits: children %s, ending by %s\n", ok ? "ok" : "FAILED", how);
    fflush(stdout);
    if (strcmp(how, "_exit") == 0) _exit(3);
    if (strcmp(how, "handler") == 0) {
        signal(SIGUSR2, on_usr2);
        raise(SIGUSR2);
    }
    return ok ? 0 : 1;
}
