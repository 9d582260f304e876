/* busy.c - a CPU-bound multi-threaded program that counts its own calls, to check that a
 * trace of it has every call.
 *
 *   build/programs/busy [THREADS [ROUNDS]]          plain
 *   build/programs/busy_traced [THREADS [ROUNDS]]   compiled with -finstrument-functions,
 *                                                   linked with the auto-tracer
 *
 * THREADS busy threads (default: one per online core) each run ROUNDS rounds (default
 * 250) of deterministic work through a few small functions: a recursive Fibonacci, a
 * recursive gcd, Collatz sequences walked one step per call, and a xorshift generator.
 * About 2.5 million calls per thread at the default, all on the CPU: no I/O, no locks.
 *
 * Every instrumented function counts its own calls in a per-thread table (the counting
 * code is no_instrument_function, so it adds no events); main sums the tables and prints
 * one line per function, by name, then the total:
 *
 *   busy: collatz_len 2000
 *   ...
 *   busy: total 4823561
 *
 * The counts depend only on THREADS and ROUNDS, so the plain and the traced build print
 * the same lines, and a trace has exactly that many call events per function name. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOI __attribute__((no_instrument_function))

/* the instrumented functions, in name order (the order of the printed lines) */
enum { F_COLLATZ_LEN, F_COLLATZ_STEP, F_FIB, F_GCD, F_MAIN, F_NEXT_RANDOM, F_ROUND_WORK,
       F_WORKER, F_COUNT };
static const char *const names[F_COUNT] = {"collatz_len", "collatz_step", "fib", "gcd",
                                           "main", "next_random", "round_work", "worker"};

/* extern functions need prototypes under -Wmissing-prototypes */
uint64_t fib(unsigned n);
uint64_t gcd(uint64_t a, uint64_t b);
int main(int argc, char **argv);

/* ---- counting (not instrumented) ------------------------------------------------- */
static __thread uint64_t calls[F_COUNT];  /* this thread's calls per function */

NOI static inline void counted(int f) { calls[f]++; }

typedef struct job {
    unsigned id, rounds;
    uint64_t result;
    uint64_t calls[F_COUNT];      /* the thread's table, copied when it is done */
} job;

NOI static void calls_save(uint64_t *out) {
    int f;
    for (f = 0; f < F_COUNT; f++) out[f] = calls[f];
}

NOI static void calls_print(const job *jobs, unsigned n) {
    uint64_t total = 0, sum;
    unsigned i;
    int f;
    for (f = 0; f < F_COUNT; f++) {
        sum = calls[f]; /* the main thread's own */
        for (i = 0; i < n; i++) sum += jobs[i].calls[f];
        printf("busy: %s %llu\n", names[f], (unsigned long long)sum);
        total += sum;
    }
    printf("busy: total %llu\n", (unsigned long long)total);
}

/* ---- the work (instrumented) ------------------------------------------------------- */
static uint64_t next_random(uint64_t *state) {
    uint64_t x = *state;
    counted(F_NEXT_RANDOM);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

uint64_t fib(unsigned n) {
    counted(F_FIB);
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

uint64_t gcd(uint64_t a, uint64_t b) {
    counted(F_GCD);
    return b == 0 ? a : gcd(b, a % b);
}

static uint64_t collatz_step(uint64_t x) {
    counted(F_COLLATZ_STEP);
    return x & 1 ? 3 * x + 1 : x / 2;
}

static unsigned collatz_len(uint64_t x) {
    unsigned steps = 0;
    counted(F_COLLATZ_LEN);
    while (x != 1) {
        x = collatz_step(x);
        steps++;
    }
    return steps;
}

/* One round: fib(16..19), then twenty numbers through gcd and Collatz. */
static uint64_t round_work(uint64_t *state, unsigned round) {
    uint64_t acc = fib(16 + round % 4);
    int k;
    counted(F_ROUND_WORK);
    for (k = 0; k < 20; k++) {
        uint64_t a = next_random(state), b = next_random(state);
        acc += gcd(a % 1000000007u, b % 1000003u);
        acc += collatz_len(a % 100000u + 1);
    }
    return acc;
}

static void *worker(void *arg) {
    job *j = (job *)arg;
    uint64_t state = 0x9E3779B97F4A7C15ull ^ (uint64_t)(j->id + 1) * 0x2545F4914F6CDD1Dull;
    unsigned r;
    counted(F_WORKER);
    for (r = 0; r < j->rounds; r++) j->result += round_work(&state, r + j->id);
    calls_save(j->calls);
    return NULL;
}

int main(int argc, char **argv) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : (unsigned)(cores > 0 ? cores : 1);
    unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 250, i;
    pthread_t *threads;
    job *jobs;
    uint64_t result = 0;
    counted(F_MAIN);
    if (n < 1 || n > 1024) {
        fprintf(stderr, "usage: busy [THREADS (1-1024, default: one per core) [ROUNDS]]\n");
        return 2;
    }
    threads = (pthread_t *)calloc(n, sizeof *threads);
    jobs = (job *)calloc(n, sizeof *jobs);
    if (!threads || !jobs) {
        fprintf(stderr, "busy: out of memory\n");
        return 1;
    }
    for (i = 0; i < n; i++) {
        jobs[i].id = i;
        jobs[i].rounds = rounds;
        if (pthread_create(&threads[i], NULL, worker, &jobs[i]) != 0) {
            fprintf(stderr, "busy: pthread_create failed\n");
            return 1;
        }
    }
    for (i = 0; i < n; i++) {
        pthread_join(threads[i], NULL);
        result += jobs[i].result;
    }
    calls_print(jobs, n);
    printf("busy %u threads, %u rounds: result %016llx\n", n, rounds, (unsigned long long)result);
    free(threads);
    free(jobs);
    return 0;
}
