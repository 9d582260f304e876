/* signal_names.h - the signals a user names to atf record (--toggle-signal,
 * --snapshot-signal) and to the tracer (ATF_TRACE_TOGGLE_SIGNAL, _SNAPSHOT_SIGNAL): a
 * number, or a name with or without "SIG". One table for both: record checks a name the
 * way the tracer will read it. Included by each, private to it.
 * SPDX-License-Identifier: MIT */
#ifndef ATF_TOOLS_SIGNAL_NAMES_H
#define ATF_TOOLS_SIGNAL_NAMES_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* The signal `v` names ("USR1", "SIGUSR1", "10"); 0 when none a program can be sent and
 * handle (SIGKILL and SIGSTOP cannot be handled). */
__attribute__((unused, no_instrument_function)) static int signal_number(const char *v) {
    static const struct { const char *name; int sig; } names[] = {
        { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP }, { "INT", SIGINT },
        { "QUIT", SIGQUIT }, { "TERM", SIGTERM }, { "ALRM", SIGALRM }, { "WINCH", SIGWINCH },
        { "PROF", SIGPROF }, { "VTALRM", SIGVTALRM }, { "URG", SIGURG },
    };
    char *end;
    long n;
    size_t i;
    if (strncmp(v, "SIG", 3) == 0) v += 3;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i].name) == 0) return names[i].sig;
    n = strtol(v, &end, 10);
    return *v && !*end && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP ? (int)n : 0;
}

#endif
