/* longjmp.c - calls that never return: a longjmp leaves them without their exit hooks.
 * Built with -finstrument-functions and no tracer (`make` builds
 * build/programs/longjmp_hooked): run it under `atf record` or with
 * LD_PRELOAD=libatf_instrument.so. The tracer sees such calls left behind and closes
 * them itself (exception events, which readers pair like returns), so the call tree stays
 * the program's:
 *   longjmp_hooked            main sets a jump point; three times mid() goes six calls
 *                             deep (deep) and the deepest one longjmps back to main,
 *                             which calls tally() (a larger frame than mid's) after the
 *                             first two and returns after the third: every mid() and
 *                             tally() sits right under main
 *   longjmp_hooked altstack   the same from sig_rounds(), with a siglongjmp out of a
 *                             SIGUSR1 handler (raised by the deepest call) that runs on a
 *                             sigaltstack: the handler's calls sit under the deepest one
 *   longjmp_hooked coroutine  no longjmp: a coroutine (makecontext, swapcontext) on a
 *                             stack of its own yields from inside its calls three times
 *                             and is resumed; nothing may be closed early there
 * Prints what it did, so a traced run can be compared with an untraced one. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#  include <ucontext.h>
#endif

#define NOINLINE __attribute__((noinline))

static volatile unsigned sink;
static volatile int jumping = 1; /* always: a base case that returns, as far as the
                                    compiler knows */

/* ---- longjmp back to main ------------------------------------------------------------ */
static jmp_buf back;

NOINLINE static void deep(unsigned n) {
    sink += n;
    if (n == 0) {
        if (jumping) longjmp(back, 1);
        return;
    }
    deep(n - 1);
    sink++; /* not a tail call: each level is a frame of its own */
}

NOINLINE static void mid(void) {
    deep(5);
    sink++;
}

NOINLINE static void tally(unsigned round) {
    volatile char note[512]; /* a frame larger than mid's, whose place it takes */
    note[0] = (char)round;
    note[511] = 1;
    sink += (unsigned)note[0] + (unsigned)note[511];
}

/* ---- siglongjmp out of a handler on sigaltstack ---------------------------------------- */
static sigjmp_buf sig_back;

NOINLINE static void in_handler(int sig) {
    sink += (unsigned)sig;
    siglongjmp(sig_back, 1);
}

NOINLINE static void on_signal(int sig) {
    in_handler(sig);
}

NOINLINE static void sig_deep(unsigned n) {
    sink += n;
    if (n == 0) raise(SIGUSR1);
    else sig_deep(n - 1);
    sink++;
}

NOINLINE static void sig_mid(void) {
    sig_deep(3);
    sink++;
}

NOINLINE static int sig_rounds(void) {
    static long alt[16384]; /* 128 KiB, aligned for any use */
    volatile unsigned round = 0;
    struct sigaction sa;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("longjmp: sigaltstack");
        return 1;
    }
    (void)sigsetjmp(sig_back, 1); /* the mask too: SIGUSR1 is blocked in the handler */
    if (round < 3) {
        round++;
        sig_mid();
    }
    printf("longjmp: %u rounds out of a handler\n", round);
    return 0;
}

/* ---- a coroutine ------------------------------------------------------------------------ */
#if defined(__GLIBC__)
static ucontext_t main_ctx, co_ctx;

NOINLINE static void co_yield(void) {
    swapcontext(&co_ctx, &main_ctx);
}

NOINLINE static void co_step(unsigned i) {
    sink += i;
    co_yield();
    sink++;
}

NOINLINE static void co_body(void) {
    unsigned i;
    for (i = 0; i < 3; i++) co_step(i);
}

NOINLINE static void co_resume(void) {
    swapcontext(&main_ctx, &co_ctx);
}

NOINLINE static void between(unsigned i) {
    sink += i;
}

NOINLINE static int co_rounds(void) {
    static long stack[16384];
    unsigned i;
    if (getcontext(&co_ctx) != 0) {
        perror("longjmp: getcontext");
        return 1;
    }
    co_ctx.uc_stack.ss_sp = stack;
    co_ctx.uc_stack.ss_size = sizeof stack;
    co_ctx.uc_link = &main_ctx; /* where the coroutine goes when co_body returns */
    makecontext(&co_ctx, co_body, 0);
    for (i = 0; i < 4; i++) { /* three yields, then the end of co_body */
        co_resume();
        between(i);
    }
    printf("longjmp: a coroutine resumed %u times\n", i);
    return 0;
}
#else
static int co_rounds(void) {
    printf("longjmp: no makecontext in this C library\n");
    return 0;
}
#endif

int main(int argc, char **argv) {
    volatile unsigned round = 0;
    if (argc > 1 && strcmp(argv[1], "altstack") == 0) return sig_rounds();
    if (argc > 1 && strcmp(argv[1], "coroutine") == 0) return co_rounds();
    (void)setjmp(back); /* each longjmp comes back here */
    if (round > 0 && round < 3) tally(round);
    if (round < 3) {
        round++;
        mid();
    }
    printf("longjmp: %u rounds, sink %u\n", round, sink);
    return 0;
}
