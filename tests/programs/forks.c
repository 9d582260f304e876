/* forks.c - a program that forks, for tracing whole process trees: the parent forks two
 * children, and the second child forks a grandchild. Every process calls work() (a
 * recursive fib) a known number of times and exits with status 0 when its children
 * did. Traced, each process records into its own pid_<pid>/ of one session directory.
 *
 *   forks [EXIT_STATUS]   the parent exits with EXIT_STATUS (default 0) when all went well
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned long fib(unsigned n);

unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static unsigned long work(unsigned rounds) {
    unsigned long sum = 0;
    unsigned i;
    for (i = 0; i < rounds; i++) sum += fib(12);
    return sum;
}

/* Waits for child `pid`; 1 when it exited with status 0. */
static int child_ok(pid_t pid) {
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int grandchild(void) {
    return work(2) ? 0 : 1;
}

static int second_child(void) {
    pid_t pid = fork();
    if (pid == 0) exit(grandchild());
    work(3);
    return child_ok(pid) ? 0 : 1;
}

static int first_child(void) {
    return work(1) ? 0 : 1;
}

int main(int argc, char **argv) {
    pid_t a, b;
    int ok;
    work(4);
    a = fork();
    if (a == 0) exit(first_child());
    b = fork();
    if (b == 0) exit(second_child());
    ok = child_ok(a) & child_ok(b);
    printf("forks: %s\n", ok ? "children ok" : "a child failed");
    return ok ? (argc > 1 ? atoi(argv[1]) : 0) : 1;
}
