/* cli_run.h - runs a command of tools/ in-process (cli_main, linked in), its output and
 * messages captured, for the harnesses that check the atf command's output.
 * SPDX-License-Identifier: MIT */
#ifndef ATF_TESTS_CLI_RUN_H
#define ATF_TESTS_CLI_RUN_H

#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cmd_fn)(FILE *out, FILE *err, int argc, char **argv);

typedef struct run_result {
    int status;
    char *out, *err;
    size_t out_len;
} run_result;

static inline char *slurp(FILE *f, size_t *len) {
    long n;
    char *buf;
    fflush(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)n + 1);
    if (!buf) return NULL;
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    buf[n] = '\0';
    if (len) *len = (size_t)n;
    return buf;
}

/* Runs fn with argv[0..argc), capturing stdout and stderr. */
static inline run_result run_argv(cmd_fn fn, int argc, char **argv) {
    run_result r;
    FILE *out = tmpfile(), *err = tmpfile();
    memset(&r, 0, sizeof r);
    if (!out || !err) {
        harness__fail(__FILE__, __LINE__, "tmpfile failed");
        if (out) fclose(out);
        if (err) fclose(err);
        r.status = -1;
        return r;
    }
    r.status = fn(out, err, argc, argv);
    r.out = slurp(out, &r.out_len);
    r.err = slurp(err, NULL);
    fclose(out);
    fclose(err);
    return r;
}

/* Runs fn with the NULL-terminated arguments after name. */
static inline run_result run(cmd_fn fn, const char *name, ...) {
    char *argv[32];
    int argc = 0;
    va_list ap;
    const char *a;
    argv[argc++] = (char *)name;
    va_start(ap, name);
    while ((a = va_arg(ap, const char *)) != NULL && argc < 31) argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return run_argv(fn, argc, argv);
}

static inline void run_free(run_result *r) {
    free(r->out);
    free(r->err);
}

#endif /* ATF_TESTS_CLI_RUN_H */
