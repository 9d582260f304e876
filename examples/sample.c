/* sample.c - a small multi-threaded program to trace with atf_instrument.c.
 *
 *   build/examples/sample           plain
 *   build/examples/sample_traced    compiled with -finstrument-functions, linked with the
 *                                   auto-tracer: writes a session under $ATF_TRACE_DIR
 *
 * Four worker threads each fill a block of numbers, sort it, count the primes in it and
 * compute a recursive Fibonacci number, through a few levels of static and extern
 * functions. Prints one line per worker; traced, it runs in a few tens of milliseconds.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define WORKERS 4
#define BLOCK 600

/* extern functions (they need prototypes under -Wmissing-prototypes) */
unsigned long fib(unsigned n);
unsigned count_primes(const uint32_t *v, unsigned n);
uint64_t checksum(const uint32_t *v, unsigned n);

typedef struct job {
    unsigned id;
    uint32_t data[BLOCK];
    unsigned long fib_value;
    unsigned primes;
    uint64_t sum;
} job;

/* xorshift step: the data of a block */
static uint32_t mix(uint32_t x) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

static void fill_block(uint32_t *v, unsigned n, uint32_t seed) {
    unsigned i;
    for (i = 0; i < n; i++) v[i] = (seed = mix(seed)) % 100000u;
}

static void swap_u32(uint32_t *a, uint32_t *b) {
    uint32_t t = *a;
    *a = *b;
    *b = t;
}

/* quicksort, Lomuto partition: recursive, with a static helper per level */
static unsigned partition(uint32_t *v, unsigned n) {
    unsigned i, store = 0;
    swap_u32(&v[n / 2], &v[n - 1]);
    for (i = 0; i + 1 < n; i++)
        if (v[i] < v[n - 1]) swap_u32(&v[i], &v[store++]);
    swap_u32(&v[store], &v[n - 1]);
    return store;
}

static void sort_block(uint32_t *v, unsigned n) {
    unsigned p;
    if (n < 2) return;
    p = partition(v, n);
    sort_block(v, p);
    sort_block(v + p + 1, n - p - 1);
}

static int is_prime(uint32_t x) {
    uint32_t d;
    if (x < 2) return 0;
    for (d = 2; d * d <= x; d++)
        if (x % d == 0) return 0;
    return 1;
}

unsigned count_primes(const uint32_t *v, unsigned n) {
    unsigned i, c = 0;
    for (i = 0; i < n; i++) c += (unsigned)is_prime(v[i]);
    return c;
}

uint64_t checksum(const uint32_t *v, unsigned n) {
    uint64_t h = 1469598103934665603ull;
    unsigned i;
    for (i = 0; i < n; i++) h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

unsigned long fib(unsigned n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void *worker(void *arg) {
    job *j = (job *)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%u", j->id);
    pthread_setname_np(pthread_self(), name); /* the tracer puts it in the manifest */
    fill_block(j->data, BLOCK, 2463534242u + j->id);
    sort_block(j->data, BLOCK);
    j->primes = count_primes(j->data, BLOCK);
    j->sum = checksum(j->data, BLOCK);
    j->fib_value = fib(16 + j->id);
    return NULL;
}

int main(void) {
    static job jobs[WORKERS];
    pthread_t threads[WORKERS];
    unsigned i;
    for (i = 0; i < WORKERS; i++) {
        jobs[i].id = i;
        if (pthread_create(&threads[i], NULL, worker, &jobs[i]) != 0) {
            fprintf(stderr, "sample: pthread_create failed\n");
            return 1;
        }
    }
    for (i = 0; i < WORKERS; i++) pthread_join(threads[i], NULL);
    for (i = 0; i < WORKERS; i++)
        printf("worker %u: fib(%u) = %lu, %u primes, checksum %016llx\n", jobs[i].id,
               16 + jobs[i].id, jobs[i].fib_value, jobs[i].primes,
               (unsigned long long)jobs[i].sum);
    return 0;
}
