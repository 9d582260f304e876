/* record_cmd.c - atf record: runs a program built with -finstrument-functions under the
 * auto-tracer (libatf_instrument.so, preloaded), waits for it, passes its exit status
 * through and summarizes the session it recorded (every process of the tree: the tracer
 * follows fork()) through the session reader.
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
int cli_cmd_record(const cli_command *cmd, int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(cli_err(), "atf %s: needs fork, exec and LD_PRELOAD (not on this platform)\n",
            cmd->name);
    return CLI_EXIT_USAGE;
}
#else
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "signal_names.h"

/* Exit statuses of record's own failures, as env(1) and timeout(1) have them: the
 * program's own statuses pass through unchanged. */
enum { RECORD_EXIT_FAILED = 125, RECORD_EXIT_CANNOT_RUN = 126, RECORD_EXIT_NOT_FOUND = 127 };

/* ---- whether the program can be traced ---------------------------------------------- */
/* Where execvp would find `prog` (a name without '/' through $PATH) into buf; 0 when
 * nowhere (execvp says so then). */
static int record_which(const char *prog, char *buf, size_t cap) {
    const char *path = getenv("PATH"), *p, *end;
    if (strchr(prog, '/')) {
        snprintf(buf, cap, "%s", prog);
        return 1;
    }
    for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
        end = strchr(p, ':');
        if (!end) end = p + strlen(p);
        snprintf(buf, cap, "%.*s/%s", (int)(end - p), end > p ? p : ".", prog);
        if (access(buf, X_OK) == 0 && cli_is_file(buf)) return 1;
    }
    return 0;
}

/* Where the dynamic linker would find library `name` of a program in directory
 * `origin`: its run path ($ORIGIN expanded), LD_LIBRARY_PATH, then the usual
 * directories. 0 when not found. */
static int record_find_library(const char *name, const char *runpath, const char *origin,
                               char *buf, size_t cap) {
    static const char *const usual[] = {
#if defined(__x86_64__)
        "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
        "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
        "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
    };
    const char *lists[2], *p, *end;
    size_t l, i;
    if (strchr(name, '/')) {
        snprintf(buf, cap, "%s", name);
        return cli_is_file(buf);
    }
    lists[0] = runpath ? runpath : "";
    lists[1] = getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "";
    for (l = 0; l < 2; l++)
        for (p = lists[l]; *p; p = *end ? end + 1 : end) {
            end = strchr(p, ':');
            if (!end) end = p + strlen(p);
            int n, origin_len = end - p >= 7 && strncmp(p, "$ORIGIN", 7) == 0 ? 7 : 0;
            n = snprintf(buf, cap, "%s%.*s/%s", origin_len ? origin : "",
                         (int)(end - p - origin_len), p + origin_len, name);
            if (n > 0 && (size_t)n < cap && cli_is_file(buf)) return 1;
        }
    for (i = 0; i < sizeof usual / sizeof usual[0]; i++) {
        snprintf(buf, cap, "%s/%s", usual[i], name);
        if (cli_is_file(buf)) return 1;
    }
    return 0;
}

/* Whether a library of p (a program in `origin`) calls the hooks: 1 yes, 0 no, -1 when
 * one of them could not be found or read (then nobody can tell). */
static int record_libraries_hooked(const sym_program *p, const char *origin) {
    char path[CLI_PATH_MAX];
    size_t i;
    int unknown = 0;
    for (i = 0; i < p->needed_count; i++) {
        sym_program lib;
        if (!record_find_library(p->needed[i], p->runpath, origin, path, sizeof path) ||
            sym_program_read(&lib, path) != ATF_OK) {
            unknown = 1;
            continue;
        }
        if (lib.hooks == 1) { /* calls them (the C library defines empty ones) */
            sym_program_free(&lib);
            return 1;
        }
        sym_program_free(&lib);
    }
    return unknown ? -1 : 0;
}

/* What the preloaded tracer can do with `prog`. A program this cannot read (a script,
 * not ELF64) is taken as traceable: what it runs may be. */
enum { RECORD_TRACEABLE = 0, RECORD_STATIC, RECORD_NO_HOOKS };

static int record_traceable(const char *prog, char *path, size_t cap) {
    char origin[CLI_PATH_MAX];
    sym_program p;
    int how = RECORD_TRACEABLE;
    if (!record_which(prog, path, cap) || sym_program_read(&p, path) != ATF_OK)
        return RECORD_TRACEABLE;
    cli_parent_dir(path, origin, sizeof origin);
    if (!p.dynamic) how = RECORD_STATIC;
    else if (!p.hooks && record_libraries_hooked(&p, origin) == 0) how = RECORD_NO_HOOKS;
    sym_program_free(&p);
    return how;
}

/* Up front: a statically linked program is out of a preload's reach (unless --force, for
 * one that execs dynamically linked ones). CLI_CONTINUE, or RECORD_EXIT_FAILED having
 * said what to do instead. */
static int record_check_program(const char *prog) {
    char path[CLI_PATH_MAX];
    if (record_traceable(prog, path, sizeof path) != RECORD_STATIC) return CLI_CONTINUE;
    fprintf(cli_err(), "atf record: %s is statically linked: a preloaded tracer cannot reach "
                       "it. Link the tracer in instead (cc -finstrument-functions ... "
                       "tools/instrument/atf_instrument.c -ldl -lpthread; see "
                       "tools/instrument/README.md) and run it with ATF_TRACE_DIR=DIR %s; "
                       "--force runs it anyway (for one that runs other programs)\n",
            path, prog);
    return RECORD_EXIT_FAILED;
}

/* After a run that traced no process: why, when the program says. 1 when it has no
 * -finstrument-functions code (nor do the libraries it links): that was said. */
static int record_explain_untraced(const char *prog) {
    char path[CLI_PATH_MAX];
    if (record_traceable(prog, path, sizeof path) != RECORD_NO_HOOKS) return 0;
    fprintf(cli_err(), "atf record: %s has no code built with -finstrument-functions (neither "
                       "it nor the libraries it links call __cyg_profile_func_enter), and it "
                       "ran none: nothing was recorded. Rebuild it with "
                       "-finstrument-functions (e.g. CFLAGS=-finstrument-functions)\n",
            path);
    return 1;
}

#define RECORD_PRELOAD_NAME "libatf_instrument.so"

typedef struct record_options {
    const char *output, *overflow, *preload, *filter, *notrace, *layout, *toggle_signal;
    const char *trigger_on, *trigger_off, *keep_last, *snapshot_signal;
    uint64_t ring_events, depth;
    uint64_t max_size, duration, disk_reserve, min_duration;
    uint64_t keep_bytes, keep_ns;    /* --keep-last as a size or as a time */
    int has_ring_events, has_depth, no_follow, has_max_size, has_duration, has_disk_reserve;
    int has_min_duration;
    int force, start_off;
} record_options;

/* The index of the first "--" in argv, or argc when there is none. */
static int record_split(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) return i;
    return argc;
}

/* The tracer library: --preload, else next to this binary, else in ../lib/atf/. */
static int record_find_preload(const record_options *o, char *buf, size_t cap) {
    char exe[CLI_PATH_MAX], dir[CLI_PATH_MAX];
    atf_error e;
    ssize_t n;
    if (o->preload) {
        snprintf(buf, cap, "%s", o->preload);
        return cli_is_file(buf);
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    cli_parent_dir(exe, dir, sizeof dir);
    if (cli_join(buf, cap, dir, RECORD_PRELOAD_NAME, &e) == ATF_OK && cli_is_file(buf)) return 1;
    return cli_join(buf, cap, dir, "../lib/atf/" RECORD_PRELOAD_NAME, &e) == ATF_OK &&
           cli_is_file(buf);
}

/* The tracer's environment, in the child before exec. The tracer library goes first in
 * LD_PRELOAD, ahead of what the caller preloads. */
/* The toggle and snapshot signals sent to record itself go on to the program. */
static volatile pid_t record_child;
static void record_forward(int sig) {
    if (record_child > 0) kill(record_child, sig);
}

/* Sets `name` to the decimal number v. */
static void record_setenv_u64(const char *name, uint64_t v) {
    char num[32];
    snprintf(num, sizeof num, "%llu", (cli_ull)v);
    setenv(name, num, 1);
}

static void record_set_env(const record_options *o, const char *preload, const char *name) {
    char buf[CLI_PATH_MAX * 2];
    const char *old = getenv("LD_PRELOAD");
    if (old && old[0]) snprintf(buf, sizeof buf, "%s:%s", preload, old);
    else snprintf(buf, sizeof buf, "%s", preload);
    setenv("LD_PRELOAD", buf, 1);
    setenv("ATF_TRACE_DIR", o->output, 1);
    setenv("ATF_TRACE_SESSION", name, 1);
    setenv("ATF_TRACE_QUIET", "1", 0); /* the summary below replaces the tracer's lines */
    unsetenv("ATF_TRACE");             /* an ATF_TRACE=0 left in the shell would record nothing */
    if (o->overflow) setenv("ATF_TRACE_OVERFLOW", o->overflow, 1);
    setenv("ATF_TRACE_LAYOUT", o->layout, 1);
    if (o->has_ring_events) record_setenv_u64("ATF_TRACE_RING_EVENTS", o->ring_events);
    if (o->filter) setenv("ATF_TRACE_FILTER", o->filter, 1);
    if (o->notrace) setenv("ATF_TRACE_NOTRACE", o->notrace, 1);
    if (o->no_follow) setenv("ATF_TRACE_FOLLOW", "0", 1);
    if (o->has_depth) record_setenv_u64("ATF_TRACE_DEPTH", o->depth);
    /* the bounds: record's own, never ones left in the shell */
    unsetenv("ATF_TRACE_MAX_BYTES");
    unsetenv("ATF_TRACE_MAX_DURATION_NS");
    unsetenv("ATF_TRACE_DISK_RESERVE");
    unsetenv("ATF_TRACE_MIN_DURATION_NS");
    unsetenv("ATF_TRACE_KEEP_LAST_BYTES");
    unsetenv("ATF_TRACE_KEEP_LAST_NS");
    unsetenv("ATF_TRACE_SNAPSHOT_SIGNAL");
    if (o->keep_bytes) record_setenv_u64("ATF_TRACE_KEEP_LAST_BYTES", o->keep_bytes);
    if (o->keep_ns) record_setenv_u64("ATF_TRACE_KEEP_LAST_NS", o->keep_ns);
    if (o->snapshot_signal) setenv("ATF_TRACE_SNAPSHOT_SIGNAL", o->snapshot_signal, 1);
    if (o->has_min_duration) record_setenv_u64("ATF_TRACE_MIN_DURATION_NS", o->min_duration);
    if (o->has_max_size) record_setenv_u64("ATF_TRACE_MAX_BYTES", o->max_size);
    if (o->has_duration) record_setenv_u64("ATF_TRACE_MAX_DURATION_NS", o->duration);
    if (o->has_disk_reserve) record_setenv_u64("ATF_TRACE_DISK_RESERVE", o->disk_reserve);
    /* switching recording on and off */
    unsetenv("ATF_TRACE_START_PAUSED");
    unsetenv("ATF_TRACE_TOGGLE_SIGNAL");
    unsetenv("ATF_TRACE_TRIGGER_ON");
    unsetenv("ATF_TRACE_TRIGGER_OFF");
    if (o->trigger_on) setenv("ATF_TRACE_TRIGGER_ON", o->trigger_on, 1);
    if (o->trigger_off) setenv("ATF_TRACE_TRIGGER_OFF", o->trigger_off, 1);
    if (o->start_off) setenv("ATF_TRACE_START_PAUSED", "1", 1);
    if (o->toggle_signal) setenv("ATF_TRACE_TOGGLE_SIGNAL", o->toggle_signal, 1);
}

/* Runs argv[0] with the tracer; its exit status (128 + N for signal N), or one of the
 * RECORD_EXIT_* statuses when it could not run. */
static int record_run(const record_options *o, const char *preload, const char *name, char **argv) {
    void (*old_int)(int), (*old_quit)(int), (*old_toggle)(int) = SIG_DFL;
    void (*old_snapshot)(int) = SIG_DFL;
    int toggle = 0, snapshot = 0;
    int status;
    pid_t pid, got;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(cli_err(), "atf record: fork: %s\n", strerror(errno));
        return RECORD_EXIT_FAILED;
    }
    if (pid == 0) {
        record_set_env(o, preload, name);
        execvp(argv[0], argv);
        fprintf(stderr, "atf record: %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? RECORD_EXIT_NOT_FOUND : RECORD_EXIT_CANNOT_RUN);
    }
    /* a ^C or ^\ is the program's to handle; record reports what it left */
    old_int = signal(SIGINT, SIG_IGN);
    old_quit = signal(SIGQUIT, SIG_IGN);
    if (o->toggle_signal) {
        fprintf(cli_err(), "atf record: recording is %s; kill -%s %d switches it %s, and "
                           "again back (sent to record, it goes on to the program)\n",
                o->start_off ? "paused" : "on", o->toggle_signal, (int)pid,
                o->start_off ? "on" : "off");
        record_child = pid;
        toggle = signal_number(o->toggle_signal);
        old_toggle = signal(toggle, record_forward);
    }
    if (o->snapshot_signal) {
        fprintf(cli_err(), "atf record: the flight recorder keeps the last %s; kill -%s %d "
                           "writes what it holds now (sent to record, it goes on to the "
                           "program)\n", o->keep_last, o->snapshot_signal, (int)pid);
        record_child = pid;
        snapshot = signal_number(o->snapshot_signal);
        old_snapshot = signal(snapshot, record_forward);
    }
    do got = waitpid(pid, &status, 0);
    while (got < 0 && errno == EINTR);
    if (toggle) signal(toggle, old_toggle);
    if (snapshot) signal(snapshot, old_snapshot);
    signal(SIGINT, old_int);
    signal(SIGQUIT, old_quit);
    if (got < 0) {
        fprintf(cli_err(), "atf record: waitpid: %s\n", strerror(errno));
        return RECORD_EXIT_FAILED;
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : RECORD_EXIT_FAILED;
}

/* ---- the summary ------------------------------------------------------------------ */
typedef struct record_totals {
    size_t processes, threads;
    size_t incomplete;               /* processes whose counts cannot be trusted */
    uint64_t events, lost, first_ns, last_ns;
    uint64_t not_recorded;           /* events after a bound stopped recording */
    uint64_t skipped;                /* events left out while recording was off */
    uint64_t discarded;              /* events the flight recorder discarded */
    char stopped[16];                /* which bound stopped the first process it stopped */
    uint64_t stopped_at_ns;          /*   and from when */
    uint64_t paused_ns;              /* threads draining their own full rings */
} record_totals;

/* Whether r's trace is whole: its manifest completed (by the tracer, or by recovery) and
 * every thread readable. A manifest still "recording" once record has tried to finish it
 * (a full disk, a process still running) holds no count of what was lost. */
static int record_is_complete(const atf_session_reader *r) {
    size_t i;
    if (strcmp(r->state, "closed") != 0 && strcmp(r->state, "recovered") != 0) return 0;
    for (i = 0; i < r->thread_count; i++)
        if (r->threads[i].open_result != ATF_OK) return 0;
    return 1;
}

static void record_add_process(record_totals *t, const atf_session_reader *r) {
    size_t i;
    t->processes++;
    t->threads += r->thread_count;
    if (!record_is_complete(r)) t->incomplete++;
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *th = &r->threads[i];
        if (th->open_result == ATF_OK) t->events += th->reader.index.event_count;
        t->lost += th->events_dropped + th->events_lost_io;
        t->not_recorded += th->events_stopped;
        t->skipped += th->events_skipped;
        t->discarded += th->events_discarded;
        t->paused_ns += th->paused_ns;
    }
    if (r->stopped[0] && (!t->stopped[0] || r->stopped_at_ns < t->stopped_at_ns)) {
        snprintf(t->stopped, sizeof t->stopped, "%s", r->stopped);
        t->stopped_at_ns = r->stopped_at_ns;
    }
    if (r->time_end_ns == 0) return; /* no events */
    if (t->first_ns == 0 || r->time_start_ns < t->first_ns) t->first_ns = r->time_start_ns;
    if (r->time_end_ns > t->last_ns) t->last_ns = r->time_end_ns;
}

static uint64_t record_disk_bytes;

static int record_count_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F) record_disk_bytes += (uint64_t)st->st_blocks * 512u;
    return 0;
}

static const char *record_plural(size_t n, const char *one, const char *many) {
    return n == 1 ? one : many;
}

/* A process of the session that ended without closing its trace (SIGKILL, an unhandled
 * SIGINT or SIGTERM, _exit, a crash) left its manifest "recording" and its files open:
 * finalized here as `atf recover` would, once that process is gone. A process still
 * running (a daemon the program started) is left alone. */
static void record_finish_unclosed(const char *pid_dir) {
    atf_session_reader r;
    atf_recover_report rep;
    pid_t pid;
    int recording;
    char error[512] = ""; /* the error the trace stopped on: closed on it, or killed after */
    if (atf_session_reader_open(&r, pid_dir, NULL) != ATF_OK) return; /* reported later */
    recording = strcmp(r.state, "recording") == 0;
    if (r.recording_error) snprintf(error, sizeof error, "%s", r.recording_error);
    pid = (pid_t)r.pid;
    atf_session_reader_close(&r);
    if (!recording) return;
    if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) {
        fprintf(cli_err(), "atf record: %s: process %d is still running; run `atf recover` "
                           "on it once it has exited\n", pid_dir, (int)pid);
        return;
    }
    if (atf_recover_session_dir(pid_dir, NULL, &rep) != ATF_OK)
        cli_report(&rep.error);
    else if (error[0])
        fprintf(cli_err(), "atf record: %s: the trace stopped on an error (%s): recovered, "
                           "what was lost counted\n", pid_dir, error);
    else
        fprintf(cli_err(), "atf record: %s: the process ended without closing its trace "
                           "(killed?): recovered\n", pid_dir);
    atf_recover_report_deinit(&rep);
}

/* "session DIR" and one line of totals on stderr (a process's directory that does not
 * open is reported and left out of them). A session left empty by a program that could
 * not be run, or that has no instrumented code (said), is removed instead. Returns
 * record's exit status: the program's, or RECORD_EXIT_FAILED when it ended well but had
 * nothing to record. */
static int record_summarize(const char *dir, int status, uint32_t layout, const char *prog) {
    record_totals t;
    char **pids = NULL, dur[32], lost[32];
    size_t n = 0, i;
    memset(&t, 0, sizeof t);
    if (cli_pid_dirs(dir, &pids, &n) != 0) {
        fprintf(cli_err(), "atf record: %s: cannot read the session directory\n", dir);
        return status;
    }
    for (i = 0; i < n; i++) {
        atf_session_reader r;
        record_finish_unclosed(pids[i]);
        if (atf_session_reader_open(&r, pids[i], NULL) != ATF_OK) {
            cli_report(&r.error);
            t.incomplete++;
            continue;
        }
        record_add_process(&t, &r);
        atf_session_reader_close(&r);
    }
    cli_pid_dirs_free(pids, n);
    if (n == 0 && (status == RECORD_EXIT_CANNOT_RUN || status == RECORD_EXIT_NOT_FOUND) &&
        rmdir(dir) == 0)
        return status;
    if (n == 0 && record_explain_untraced(prog)) { /* an empty session says nothing more */
        rmdir(dir);
        return status == 0 ? RECORD_EXIT_FAILED : status;
    }
    record_disk_bytes = 0;
    nftw(dir, record_count_file, 16, FTW_PHYS);
    fprintf(cli_err(), "atf record: session %s\n", dir);
    if (t.incomplete == 0)
        snprintf(lost, sizeof lost, "%llu lost", (cli_ull)t.lost);
    else
        snprintf(lost, sizeof lost, "lost unknown");
    fprintf(cli_err(), "atf record: %zu %s, %zu %s, %llu events, %s, %s, %llu KiB on disk "
                       "(layout %s, %.1f bytes per event)\n",
            t.processes, record_plural(t.processes, "process", "processes"), t.threads,
            record_plural(t.threads, "thread", "threads"), (cli_ull)t.events, lost,
            cli_fmt_dur(dur, sizeof dur, t.last_ns - t.first_ns),
            (cli_ull)((record_disk_bytes + 1023) / 1024), cli_layout_str(layout),
            t.events ? (double)record_disk_bytes / (double)t.events : 0.0);
    if (t.stopped[0])
        fprintf(cli_err(), "atf record: stopped at the %s, %s after the first event: "
                           "%llu events after it not recorded (the program ran on)\n",
                t.stopped,
                cli_fmt_dur(dur, sizeof dur,
                            t.stopped_at_ns > t.first_ns ? t.stopped_at_ns - t.first_ns : 0),
                (cli_ull)t.not_recorded);
    if (t.skipped)
        fprintf(cli_err(), "atf record: %llu events left out while recording was off (each "
                           "thread's gap of reason \"skipped\")\n", (cli_ull)t.skipped);
    if (t.discarded)
        fprintf(cli_err(), "atf record: the flight recorder kept the most recent events: %llu "
                           "earlier ones discarded (each thread's gap of reason "
                           "\"discarded\")\n", (cli_ull)t.discarded);
    if (t.paused_ns)
        fprintf(cli_err(), "atf record: threads paused %s in all writing their own full rings "
                           "(recorded in pauses.atf: the tools leave it out of the functions' "
                           "times; a larger --ring-events makes it rarer)\n", cli_fmt_dur(dur, sizeof dur, t.paused_ns));
    if (t.incomplete > 0)
        fprintf(cli_err(), "atf record: the trace of %zu %s is incomplete (see above): "
                           "the counts are only what the files hold\n",
                t.incomplete, record_plural(t.incomplete, "process", "processes"));
    if (t.processes == 0)
        fprintf(cli_err(), "atf record: no process was traced (is the program dynamically "
                           "linked?)\n");
    else if (t.events == 0)
        fprintf(cli_err(), "atf record: no events (was the program built with "
                           "-finstrument-functions?)\n");
    return status;
}

/* --keep-last SIZE|TIME (a size has K, M or G, a time ns, us, ms, s or min) and its
 * --snapshot-signal (USR2 by default). */
static int record_keep_last(const cli_command *cmd, record_options *o) {
    if (!o->keep_last) {
        if (o->snapshot_signal) return cli_usage_error(cmd, "--snapshot-signal needs --keep-last");
        return CLI_CONTINUE;
    }
    if (cli_parse_size(o->keep_last, &o->keep_bytes) &&
        cli_parse_duration(o->keep_last, &o->keep_ns))
        return cli_usage_error(cmd, "--keep-last: '%s' is neither a size (\"64M\") nor a time "
                                    "(\"2s\")", o->keep_last);
    if (!o->keep_bytes && !o->keep_ns)
        return cli_usage_error(cmd, "--keep-last must be more than 0");
    if (!o->snapshot_signal) o->snapshot_signal = "USR2";
    if (!signal_number(o->snapshot_signal))
        return cli_usage_error(cmd, "--snapshot-signal: '%s' is no signal a program can be "
                                    "sent (USR1, USR2, HUP, ... or a number)", o->snapshot_signal);
    if (o->toggle_signal && signal_number(o->toggle_signal) ==
                                signal_number(o->snapshot_signal))
        return cli_usage_error(cmd, "--toggle-signal and --snapshot-signal are the same signal");
    return CLI_CONTINUE;
}

int cli_cmd_record(const cli_command *cmd, int argc, char **argv) {
    record_options o;
    char preload[CLI_PATH_MAX], name[256], dir[CLI_PATH_MAX];
    int dash = record_split(argc, argv), nops, rc;
    uint32_t layout;
    atf_error e;
    cli_flag flags[] = {
        { "--output", NULL, CLI_OPT_STR, &o.output },
        { "--overflow", NULL, CLI_OPT_STR, &o.overflow },
        { "--layout", NULL, CLI_OPT_STR, &o.layout },
        { "--ring-events", &o.has_ring_events, CLI_OPT_U64, &o.ring_events },
        { "--preload", NULL, CLI_OPT_STR, &o.preload },
        { "--filter", NULL, CLI_OPT_STR, &o.filter },
        { "--notrace", NULL, CLI_OPT_STR, &o.notrace },
        { "--depth", &o.has_depth, CLI_OPT_U64, &o.depth },
        { "--no-follow", &o.no_follow, CLI_OPT_FLAG, NULL },
        { "--max-size", &o.has_max_size, CLI_OPT_SIZE, &o.max_size },
        { "--duration", &o.has_duration, CLI_OPT_TIME, &o.duration },
        { "--disk-reserve", &o.has_disk_reserve, CLI_OPT_SIZE, &o.disk_reserve },
        { "--min-duration", &o.has_min_duration, CLI_OPT_TIME, &o.min_duration },
        { "--force", &o.force, CLI_OPT_FLAG, NULL },
        { "--start-paused", &o.start_off, CLI_OPT_FLAG, NULL },
        { "--toggle-signal", NULL, CLI_OPT_STR, &o.toggle_signal },
        { "--trigger-on", NULL, CLI_OPT_STR, &o.trigger_on },
        { "--trigger-off", NULL, CLI_OPT_STR, &o.trigger_off },
        { "--keep-last", NULL, CLI_OPT_STR, &o.keep_last },
        { "--snapshot-signal", NULL, CLI_OPT_STR, &o.snapshot_signal },
    };
    memset(&o, 0, sizeof o);
    o.output = "traces";
    o.layout = "packed";
    /* only what comes before "--" is record's: the program's arguments stay as given */
    rc = cli_parse_args(cmd, dash, argv, flags, sizeof flags / sizeof flags[0], 0, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (nops > 0) return cli_usage_error(cmd, "the program goes after \"--\"");
    if (dash + 1 >= argc) return cli_usage_error(cmd, "no program after \"--\"");
    if (o.overflow && strcmp(o.overflow, "block") != 0 && strcmp(o.overflow, "drop") != 0)
        return cli_usage_error(cmd, "--overflow is block or drop, not '%s'", o.overflow);
    if ((rc = cli_parse_layout(cmd, o.layout, &layout)) != CLI_CONTINUE) return rc;
    o.layout = cli_layout_str(layout); /* the tracer's spelling: "3" is "packed" */
    if (o.has_ring_events && o.ring_events == 0)
        return cli_usage_error(cmd, "--ring-events must be at least 1");
    if (o.start_off && !o.toggle_signal) o.toggle_signal = "USR1";
    if (o.toggle_signal && !signal_number(o.toggle_signal))
        return cli_usage_error(cmd, "--toggle-signal: '%s' is no signal a program can be "
                                    "sent (USR1, USR2, HUP, ... or a number)", o.toggle_signal);
    if ((rc = record_keep_last(cmd, &o)) != CLI_CONTINUE) return rc;
    if ((o.has_max_size && o.max_size == 0) || (o.has_duration && o.duration == 0))
        return cli_usage_error(cmd, "%s must be more than 0", o.has_duration && o.duration == 0
                                                                 ? "--duration" : "--max-size");
    if (!o.force && (rc = record_check_program(argv[dash + 1])) != CLI_CONTINUE) return rc;
    if (!record_find_preload(&o, preload, sizeof preload)) {
        fprintf(cli_err(), "atf record: %s not found%s (give --preload PATH)\n",
                o.preload ? o.preload : RECORD_PRELOAD_NAME,
                o.preload ? "" : " next to the atf binary or in ../lib/atf/");
        return RECORD_EXIT_FAILED;
    }
    if (atf_session_dir_make(o.output, name, sizeof name, &e) != ATF_OK) {
        cli_report(&e);
        return RECORD_EXIT_FAILED;
    }
    snprintf(dir, sizeof dir, "%s/%s", o.output, name);
    rc = record_run(&o, preload, name, argv + dash + 1);
    return record_summarize(dir, rc, layout, argv[dash + 1]);
}
#endif
