/* A program whose work its argument changes in one place: load() parses RECORDS records,
 * and each parse() normalizes its record N times (N the argument, default 1). Two runs
 * with different N differ in normalize's calls and time, that is in the call path
 * main;load;parse;normalize, and nowhere else: every other function is called as often,
 * doing the same work, whatever N is. No threads, no fork (tests/profile_checks.sh
 * compares two recordings of it with atf diff).
 * pipeline [N] */
#include <stdio.h>
#include <stdlib.h>

enum { RECORDS = 16, NORMALIZE_ROUNDS = 50000, CHECKSUM_ROUNDS = 2000 };

__attribute__((noinline)) static unsigned normalize(unsigned x) {
    unsigned i;
    for (i = 0; i < NORMALIZE_ROUNDS; i++) x = x * 1664525u + 1013904223u;
    return x;
}

__attribute__((noinline)) static unsigned parse(unsigned record, unsigned n) {
    unsigned i, h = record;
    for (i = 0; i < n; i++) h ^= normalize(h + i);
    return h;
}

__attribute__((noinline)) static unsigned load(unsigned n) {
    unsigned r, h = 0;
    for (r = 0; r < RECORDS; r++) h += parse(r, n);
    return h;
}

__attribute__((noinline)) static unsigned checksum(unsigned h) {
    unsigned i;
    for (i = 0; i < CHECKSUM_ROUNDS; i++) h = (h << 5 | h >> 27) ^ i;
    return h;
}

__attribute__((noinline)) static unsigned report(unsigned h) {
    return checksum(h) + checksum(h * 2654435761u);
}

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
    unsigned h = load(n);
    printf("pipeline: %u records, %u rounds each: %08x\n", (unsigned)RECORDS, n, report(h));
    return 0;
}
