/* Functions whose stack frame is not the same size at every call: a variable-length
 * array before an inlined instrumented helper, and a local aligned beyond the ABI's
 * stack alignment (its prologue realigns the stack), called from callers of different
 * frame sizes. No longjmp: a trace of it must hold no exception event.
 * frames [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned leaf(unsigned x) { return x * 2654435761u + 1; }

static inline __attribute__((always_inline)) unsigned fill(char *buf, unsigned n) {
    unsigned i, h = 0;
    for (i = 0; i < n; i++) buf[i] = (char)(i * 7);
    for (i = 0; i < n; i += 61) h = h * 31 + (unsigned char)buf[i];
    return leaf(h);
}

/* the array's size moves the stack pointer at fill's hook from call to call */
__attribute__((noinline)) static unsigned vla(unsigned n) {
    char buf[n];
    unsigned h = fill(buf, n);
    return h + leaf(n);
}

/* a 64-byte aligned local: the prologue rounds the stack pointer down */
__attribute__((noinline)) static unsigned aligned(unsigned x) {
    char block[64] __attribute__((aligned(64)));
    memset(block, (int)x, sizeof block);
    return leaf((unsigned char)block[x % 64]) + (unsigned char)block[0];
}

__attribute__((noinline)) static unsigned small_caller(unsigned x) { return aligned(x); }

__attribute__((noinline)) static unsigned big_caller(unsigned x) {
    volatile char pad[200];
    pad[x % 200] = (char)x;
    return aligned(x + (unsigned)pad[x % 200]);
}

__attribute__((noinline)) static unsigned odd_caller(unsigned x) {
    volatile char pad[40];
    pad[x % 40] = (char)x;
    return aligned(x + (unsigned)pad[x % 40]);
}

/* the work, under a frame large enough that a misplaced call would still lie on the
 * thread's stack */
__attribute__((noinline)) static unsigned work(unsigned rounds) {
    static const unsigned sizes[] = { 4096, 16, 1000, 24, 65536, 8, 333 };
    volatile char room[128 * 1024];
    unsigned r, calls = 0;
    room[rounds % sizeof room] = 1;
    for (r = 0; r < rounds; r++) {
        unsigned k;
        for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            sink += vla(sizes[k] + r % 17);
            calls++;
        }
        sink += small_caller(r) + big_caller(r) + odd_caller(r);
        calls += 3;
    }
    return calls + (unsigned)room[rounds % sizeof room] - 1;
}

int main(int argc, char **argv) {
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100;
    printf("frames: %u rounds, %u calls of vla and the aligned callers\n", rounds, work(rounds));
    return 0;
}
