/* cpp_host.c - a C program that loads a C++ library with dlopen(RTLD_LOCAL), as an
 * interpreter loads an extension: cpp_host PLUGIN ROUNDS calls plugin_run(3) (an exception
 * through 4 frames, caught in the library) ROUNDS times and prints the sum of its results
 * (tests/cpp_checks.sh). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    union { void *p; int (*f)(int); } run;
    void *lib;
    long rounds, i, sum = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: cpp_host PLUGIN ROUNDS\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib || !(run.p = dlsym(lib, "plugin_run"))) {
        fprintf(stderr, "cpp_host: %s\n", dlerror());
        return 1;
    }
    rounds = atol(argv[2]);
    for (i = 0; i < rounds; i++) sum += run.f(3);
    printf("cpp_host: %ld rounds, sum %ld\n", rounds, sum);
    return 0;
}
