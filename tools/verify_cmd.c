/* verify_cmd.c - atf verify: structure, CRCs, index<->detail links and gaps.atf of files,
 * thread directories and sessions, and a closed session's manifest counts against its
 * files.
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "facts.h"
#include "walk.h"

#include <stdlib.h>
#include <string.h>

/* ==== files and thread directories ================================================== */
/* Whether a file is whole as written: finalized, nothing torn. */
static int verify_file_whole(atf_count_source recovery, uint64_t torn_bytes) {
    return recovery == ATF_COUNT_FINALIZED && torn_bytes == 0;
}

static int verify_whole(const cli_facts *f) {
    return verify_file_whole(f->counted, f->torn_bytes);
}

/* Whether every file of an open thread is whole, from the readers' own fields (their
 * CRCs are checked by the thread's own pass). */
static int verify_thread_whole(const atf_thread_reader *t) {
    return verify_file_whole(t->index.counted, t->index.torn_bytes) &&
           (!t->has_detail || verify_file_whole(t->detail.counted, t->detail.torn_bytes));
}

/* The word that starts the line of a directory or session without problems: "OK" only
 * when everything in it is whole, so that a crash's leftovers never read as OK. */
static const char *verify_word(int whole) {
    return whole ? "OK" : "recovered";
}

/* The line for a file without problems: "OK" or "recovered". */
static void verify_good(const cli_facts *f) {
    char crc[128];
    const char *noun = f->is_detail ? "detail records" : "events";
    cli_crc_text(f, crc, sizeof crc);
    if (verify_whole(f)) {
        cli_printf("OK %s (%llu %s, crc %s)\n", f->path, (cli_ull)f->count, noun, crc);
        return;
    }
    cli_printf("recovered %s (%llu %s: %s", f->path, (cli_ull)f->count, noun, cli_counted_text(f));
    if (f->torn_bytes) cli_printf("; %llu torn bytes ignored", (cli_ull)f->torn_bytes);
    cli_printf("; crc %s)\n", crc);
}

/* Each verify_* function prints its lines and returns its number of problems. */
static int verify_facts(const cli_facts *f, int strict) {
    int n = cli_problems(f, strict, NULL, "");
    if (n == 0) verify_good(f);
    return n;
}

static int verify_index_file(const char *path, int strict) {
    atf_index_reader r;
    cli_facts f;
    int n;
    if (atf_index_reader_open(&r, path, NULL) != ATF_OK) {
        cli_print_error(NULL, "", &r.error);
        return 1;
    }
    cli_facts_index(&f, &r);
    n = verify_facts(&f, strict);
    atf_index_reader_close(&r);
    return n;
}

static int verify_detail_file(const char *path, int strict) {
    atf_detail_reader r;
    cli_facts f;
    int n;
    if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) {
        cli_print_error(NULL, "", &r.error);
        return 1;
    }
    cli_facts_detail(&f, &r);
    n = verify_facts(&f, strict);
    atf_detail_reader_close(&r);
    return n;
}

/* "; N gaps, L events lost" and ", M not recorded by choice" when some were (L counts
 * only the others). */
static void verify_gaps_text(char *out, size_t cap, uint64_t gaps, uint64_t lost,
                             uint64_t not_recorded) {
    int n = snprintf(out, cap, "; %llu gap%s, %llu events lost", (cli_ull)gaps,
                     gaps == 1 ? "" : "s", (cli_ull)(lost - not_recorded));
    if (not_recorded && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, ", %llu not recorded by choice", (cli_ull)not_recorded);
}

/* Each file of the directory, its gaps.atf, then the links between them in both
 * directions (an index event naming a detail record when there is no detail.atf is a
 * broken link too). */
static int verify_dir(const char *dir, int strict) {
    atf_thread_reader t;
    cli_facts f;
    char gaps[96] = "", pauses[96] = "";
    int n = 0, whole;
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) {
        cli_print_error(NULL, "", &t.error);
        return 1;
    }
    /* an open thread keeps one error only: a damaged side file (gaps.atf, pauses.atf).
     * Reported, then cleared so that a broken link below is reported as itself. */
    if (t.error.code != ATF_OK) {
        cli_print_error(NULL, "", &t.error);
        memset(&t.error, 0, sizeof t.error);
        n++;
    }
    if (t.gap_count) verify_gaps_text(gaps, sizeof gaps, t.gap_count, t.events_lost,
                                      walk_not_recorded(&t));
    if (t.pause_count) {
        char d[32];
        snprintf(pauses, sizeof pauses, "; %llu tracer pause%s, %s", (cli_ull)t.pause_count,
                 t.pause_count == 1 ? "" : "s", cli_fmt_dur(d, sizeof d, t.paused_ns));
    }
    cli_facts_index(&f, &t.index);
    n += verify_facts(&f, strict);
    whole = verify_whole(&f);
    if (t.has_detail) {
        cli_facts_detail(&f, &t.detail);
        n += verify_facts(&f, strict);
        whole = whole && verify_whole(&f);
    }
    if (atf_thread_reader_verify_links(&t) != ATF_OK) {
        cli_print_error(NULL, "", &t.error);
        n++;
    } else if (n == 0) {
        if (t.has_detail)
            cli_printf("%s %s (links ok both ways: %llu events, %llu detail records%s%s)\n",
                       verify_word(whole), dir, (cli_ull)t.index.event_count,
                       (cli_ull)t.detail.event_count, gaps, pauses);
        else
            cli_printf("%s %s (%llu events, no detail%s%s)\n", verify_word(whole), dir,
                       (cli_ull)t.index.event_count, gaps, pauses);
    }
    atf_thread_reader_close(&t);
    return n;
}

static int verify_session(const char *dir, int strict);

/* A side file (gaps.atf, pauses.atf): its thread directory, which judges it with the rest. */
static int verify_side_file(const char *path, int strict) {
    char dir[CLI_PATH_MAX];
    cli_parent_dir(path, dir, sizeof dir);
    return verify_dir(dir, strict);
}

/* A session_* directory: each of its pid_* directories. */
static int verify_root(const char *path, int strict) {
    char **pids = NULL;
    size_t n = 0, i;
    int problems = 0;
    if (cli_pid_dirs(path, &pids, &n) != 0) {
        atf_error e;
        cli_error_errno(&e, path, "read directory", 0);
        cli_print_error(NULL, "", &e);
        return 1;
    }
    for (i = 0; i < n; i++) problems += verify_session(pids[i], strict);
    cli_pid_dirs_free(pids, n);
    return problems;
}

static int verify_path(const char *path, int strict) {
    cli_kind kind;
    atf_error e;
    if (cli_classify(path, &kind, &e) != ATF_OK) {
        cli_print_error(NULL, "", &e);
        return 1;
    }
    switch (kind) {
    case CLI_KIND_INDEX: return verify_index_file(path, strict);
    case CLI_KIND_DETAIL: return verify_detail_file(path, strict);
    case CLI_KIND_SIDE: return verify_side_file(path, strict);
    case CLI_KIND_THREAD: return verify_dir(path, strict);
    case CLI_KIND_PID: return verify_session(path, strict);
    case CLI_KIND_ROOT: return verify_root(path, strict);
    }
    return 1;
}

int cli_cmd_verify(const cli_command *cmd, int argc, char **argv) {
    int strict = 0, nops = 0, i, rc, problems = 0, bad_paths = 0;
    const cli_flag flags[] = { { "--strict", &strict, CLI_OPT_FLAG, NULL } };
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    for (i = 1; i <= nops; i++) {
        int n = verify_path(argv[i], strict);
        problems += n;
        bad_paths += n > 0;
    }
    if (problems == 0) return CLI_EXIT_OK;
    fprintf(cli_err(), "atf verify: %d problem%s in %d of %d PATH%s\n", problems,
            problems == 1 ? "" : "s", bad_paths, nops, nops == 1 ? "" : "s");
    return CLI_EXIT_DATA;
}

/* ==== sessions ====================================================================== */
/* One count of a closed manifest against the files: 1 (and the problem printed) when
 * they disagree. */
static int verify_count(const char *dir, uint32_t slot, const char *what, uint64_t files,
                            uint64_t manifest) {
    char path[CLI_PATH_MAX];
    atf_error e;
    if (manifest == files) return 0;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    cli_error_init(&e, ATF_E_CORRUPT, path, CLI_NO_OFFSET, what);
    e.expected = files;
    e.found = manifest;
    e.has_values = 1;
    cli_printf("thread_%u: ", slot);
    cli_print_error(NULL, "", &e);
    return 1;
}

/* A closed manifest's counts of one thread against its files. The lost events are
 * compared only when gaps.atf read whole (a damaged one is reported already). */
static int verify_counts(const char *dir, const atf_session_thread *t) {
    uint64_t ndetail = t->reader.has_detail ? t->reader.detail.event_count : 0;
    int n = 0;
    n += verify_count(dir, t->slot, "events_written of a thread disagrees with its index.atf",
                          t->reader.index.event_count, t->events_written);
    n += verify_count(dir, t->slot, "detail_written of a thread disagrees with its detail.atf",
                          ndetail, t->detail_written);
    if (t->reader.error.code == ATF_OK) {
        n += verify_count(dir, t->slot, "gaps of a thread disagrees with its gaps.atf",
                              t->reader.gap_count, t->gaps);
        n += verify_count(dir, t->slot,
                              "events_dropped + events_lost_io + events_stopped + "
                              "events_skipped + events_discarded of a thread disagrees with "
                              "the events lost in its gaps.atf",
                              t->reader.events_lost,
                              t->events_dropped + t->events_lost_io + t->events_stopped +
                                  t->events_skipped + t->events_discarded);
    }
    return n;
}

/* Each thread of an open session, and a closed manifest's counts against its files. */
static int verify_threads(const atf_session_reader *r, const char *dir, int strict) {
    char path[CLI_PATH_MAX];
    atf_error e;
    size_t i;
    int n = 0, closed = strcmp(r->state, "closed") == 0;
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        if (snprintf(path, sizeof path, "%s/thread_%u", dir, t->slot) >= (int)sizeof path) {
            cli_error_init(&e, ATF_E_ARG, dir, 0, "path too long");
            cli_print_error(NULL, "", &e);
            n++;
            continue;
        }
        if (t->missing && t->in_manifest) { /* else the thread's own check says what is missing */
            cli_error_init(&e, ATF_E_NOT_FOUND, path, 0,
                           "listed in manifest.json, but the directory or its index.atf "
                           "is missing");
            cli_print_error(NULL, "", &e);
            n++;
            continue;
        }
        n += verify_dir(path, strict);
        if (closed && t->in_manifest && t->open_result == ATF_OK) n += verify_counts(dir, t);
    }
    return n;
}

static int verify_session(const char *dir, int strict) {
    atf_session_reader r;
    atf_error e;
    char text[160];
    uint64_t events = 0, dropped = 0, detail_dropped = 0, gaps = 0, lost = 0, not_recorded = 0;
    size_t i;
    int n, whole;
    if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) { /* no manifest, no thread_N */
        cli_print_error(NULL, "", &r.error);
        return 1;
    }
    if (r.thread_count == 0) { /* closed, or stopped, before any thread attached */
        cli_printf("OK %s (session: manifest lists no thread (state %s), 0 threads, no event "
                   "recorded)\n", dir, r.state[0] ? r.state : "unknown");
        atf_session_reader_close(&r);
        return 0;
    }
    n = verify_threads(&r, dir, strict);
    cli_warn_damage(&r, 0, 0, 0); /* what cannot be read, on stderr too */
    if (cli_manifest_problem(&r, &e)) {
        cli_print_error(NULL, "", &e);
        n++;
    }
    /* whole: the manifest completed (by the writer, or by atf recover) and every file */
    whole = strcmp(r.state, "closed") == 0 || strcmp(r.state, "recovered") == 0;
    for (i = 0; i < r.thread_count; i++) {
        const atf_session_thread *t = &r.threads[i];
        dropped += t->events_dropped;
        detail_dropped += t->detail_dropped;
        if (t->open_result != ATF_OK) continue;
        events += t->reader.index.event_count;
        gaps += t->reader.gap_count;
        lost += t->reader.events_lost;
        not_recorded += walk_not_recorded(&t->reader);
        whole = whole && verify_thread_whole(&t->reader);
    }
    if (n == 0) {
        cli_printf("%s %s (session: manifest %s, %llu thread%s, %llu events; manifest drop "
                   "counts: %llu events, %llu detail records", verify_word(whole),
                   dir, cli_manifest_text(&r, text, sizeof text), (cli_ull)r.thread_count,
                   r.thread_count == 1 ? "" : "s", (cli_ull)events, (cli_ull)dropped,
                   (cli_ull)detail_dropped);
        if (gaps) {
            char line[96];
            verify_gaps_text(line, sizeof line, gaps, lost, not_recorded);
            cli_print(line);
        }
        cli_print(")\n");
    }
    atf_session_reader_close(&r);
    return n;
}
