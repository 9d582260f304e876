/* recover_cmd.c - atf recover: finalizes, in place, the files a crash left behind. The
 * library decides and does everything (atf_recover_*); this file picks the call for each
 * PATH and prints its report, one line per file.
 * SPDX-License-Identifier: MIT */
#include "atf.h"
#include "core.h"

#include <string.h>

static const char *recover_state_text(atf_count_source r) {
    switch (r) {
    case ATF_COUNT_FINALIZED: return "finalized";
    case ATF_COUNT_FOOTER_AT_END:
        return "found with a placeholder header and a footer at the end";
    case ATF_COUNT_FROM_SIZE: return "found without a footer";
    case ATF_COUNT_FOOTER_MISMATCH: return "found with a footer that disagrees with it";
    }
    return "found in an unknown state";
}

static const char *recover_records_text(const atf_recover_item *it) {
    return it->kind == ATF_RECOVER_DETAIL ? "detail records" : "events";
}

static void recover_print_finalize(const atf_recover_item *it, int dry_run) {
    cli_printf("%s %s (%llu %s; %s", dry_run ? "would recover" : "recovered", it->path,
               (cli_ull)it->records, recover_records_text(it), recover_state_text(it->found));
    if (it->bytes_cut)
        cli_printf("; cut %llu bytes after the last kept record", (cli_ull)it->bytes_cut);
    if (it->records_cut)
        cli_printf("; cut %llu trailing records whose index event is not in index.atf",
                   (cli_ull)it->records_cut);
    if (it->links_cleared)
        cli_printf("; cleared %llu link%s to detail records not in detail.atf",
                   (cli_ull)it->links_cleared, it->links_cleared == 1 ? "" : "s");
    if (it->links_restored)
        cli_printf("; restored %llu link%s", (cli_ull)it->links_restored,
                   it->links_restored == 1 ? "" : "s");
    cli_printf("; footer at offset %llu, crc 0x%08x; header rewritten)\n",
               (cli_ull)it->footer_offset, it->crc);
}

static void recover_print_fill_crc(const atf_recover_item *it, int dry_run) {
    cli_printf("%s %s (%llu %s; finalized, footer checksum 0 (not computed): crc 0x%08x %s in "
               "the footer at offset %llu)\n", dry_run ? "would recover" : "recovered", it->path,
               (cli_ull)it->records, recover_records_text(it), it->crc,
               dry_run ? "would be written" : "written", (cli_ull)it->footer_offset);
}

/* Whether item `tmp` is the index.atf.tmp of the unborn directory that `next` removes:
 * then the directory's line tells of it. */
static int recover_tmp_of_unborn(const atf_recover_item *tmp, const atf_recover_item *next) {
    size_t n = strlen(next->path);
    return next->kind == ATF_RECOVER_UNBORN_DIR && next->action == ATF_RECOVER_REMOVE &&
           strncmp(tmp->path, next->path, n) == 0 && (tmp->path[n] == '/' || tmp->path[n] == '\\') &&
           strcmp(tmp->path + n + 1, "index.atf.tmp") == 0;
}

static void recover_print_remove(const atf_recover_item *it, const atf_recover_item *prev, int dry_run) {
    const char *verb = dry_run ? "would remove" : "removed";
    switch (it->kind) {
    case ATF_RECOVER_DETAIL:
        cli_printf("%s %s (no detail record left: the writer creates no detail.atf then)\n",
                   verb, it->path);
        break;
    case ATF_RECOVER_UNBORN_DIR:
        cli_printf("%s %s (no index.atf%s: stopped before its first file was in place, no "
                   "event lost)\n", verb, it->path,
                   prev && prev->kind == ATF_RECOVER_TMP && recover_tmp_of_unborn(prev, it)
                       ? ", only index.atf.tmp" : "");
        break;
    default:
        cli_printf("%s %s (left under its temporary name by a crash: holds no record)\n", verb,
                   it->path);
        break;
    }
}

/* A side file of a thread: gaps.atf or pauses.atf. */
static int recover_is_side(const atf_recover_item *it) {
    return it->kind == ATF_RECOVER_GAPS || it->kind == ATF_RECOVER_PAUSES;
}

/* One line per item of the report (the one of a TMP item folded into its unborn
 * directory's); a whole side file of a thread goes unmentioned, a lone one (`lone`) not. */
static void recover_print(const atf_recover_report *rep, int dry_run, int lone) {
    size_t i;
    for (i = 0; i < rep->item_count; i++) {
        const atf_recover_item *it = &rep->items[i], *prev = i ? &rep->items[i - 1] : NULL;
        switch (it->action) {
        case ATF_RECOVER_NOTHING:
            if (recover_is_side(it) && lone)
                cli_printf("OK %s (whole, nothing to do)\n", it->path);
            else if (!recover_is_side(it))
                cli_printf("OK %s (finalized, nothing to do)\n", it->path);
            break;
        case ATF_RECOVER_FINALIZE: recover_print_finalize(it, dry_run); break;
        case ATF_RECOVER_FILL_CRC: recover_print_fill_crc(it, dry_run); break;
        case ATF_RECOVER_CUT:
            cli_printf("%s %s (%llu %s record%s; cut %llu bytes of a torn last record)\n",
                       dry_run ? "would recover" : "recovered", it->path, (cli_ull)it->records,
                       it->kind == ATF_RECOVER_PAUSES ? "pause" : "gap",
                       it->records == 1 ? "" : "s", (cli_ull)it->bytes_cut);
            break;
        case ATF_RECOVER_REMOVE:
            if (it->kind == ATF_RECOVER_TMP && i + 1 < rep->item_count &&
                recover_tmp_of_unborn(it, &rep->items[i + 1]))
                break;
            recover_print_remove(it, prev, dry_run);
            break;
        case ATF_RECOVER_FAIL: cli_report(&it->error); break;
        }
    }
}

/* The manifest: rewritten by recovery (a session killed while recording), or left as it
 * is, said when it does not tell of a closed session. */
static void recover_manifest_note(const char *dir, int rewritten, int dry_run) {
    atf_session_reader r;
    int opened;
    if (rewritten) {
        cli_printf("%s %s/manifest.json (state recovered: each thread's counts, finalized and "
                   "the time range from the files)\n", dry_run ? "would rewrite" : "rewrote", dir);
        return;
    }
    opened = atf_session_reader_open(&r, dir, NULL) == ATF_OK;
    if (r.manifest != ATF_MANIFEST_MISSING && strcmp(r.state, "closed") != 0 &&
        strcmp(r.state, "recovered") != 0)
        cli_printf("note %s/manifest.json: state %s, left as is (its counts may lag the files)\n",
                   dir, r.state[0] ? r.state : "unknown");
    if (opened) atf_session_reader_close(&r);
}

/* Recovers one PATH of a known kind (a session_* directory aside); the exit status. */
static int recover_path(const char *path, cli_kind kind, const atf_recover_options *opt) {
    atf_recover_report rep;
    atf_result rc;
    int status;
    if (kind == CLI_KIND_PID) rc = atf_recover_session_dir(path, opt, &rep);
    else if (kind == CLI_KIND_THREAD) rc = atf_recover_thread_dir(path, opt, &rep);
    else rc = atf_recover_file(path, opt, &rep);
    recover_print(&rep, opt->dry_run, kind == CLI_KIND_SIDE);
    if (rc != ATF_OK && rep.failed == 0) cli_report(&rep.error); /* failed before any item */
    status = rc != ATF_OK || rep.failed ? CLI_EXIT_DATA : CLI_EXIT_OK;
    if (kind == CLI_KIND_PID) recover_manifest_note(path, rep.manifest_rewritten, opt->dry_run);
    atf_recover_report_deinit(&rep);
    return status;
}

/* One pid_* directory of a session_* directory. */
static int recover_pid(void *opt, const char *pid_dir, size_t i) {
    (void)i;
    return recover_path(pid_dir, CLI_KIND_PID, (const atf_recover_options *)opt);
}

/* A session_* directory: each of its pid_* directories. */
static int recover_root(const char *path, const atf_recover_options *opt) {
    return cli_each_pid_dir(path, recover_pid, (void *)opt); /* recover_pid only reads it */
}

int cli_cmd_recover(const cli_command *cmd, int argc, char **argv) {
    int dry_run = 0, nops = 0, i, rc, status = CLI_EXIT_OK;
    const cli_flag flags[] = { { "--dry-run", &dry_run, CLI_OPT_FLAG, NULL } };
    atf_recover_options opt;
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    memset(&opt, 0, sizeof opt);
    opt.dry_run = dry_run;
    for (i = 1; i <= nops; i++) {
        cli_kind kind;
        atf_error e;
        int s;
        if (cli_classify(argv[i], &kind, &e) != ATF_OK) s = cli_report(&e);
        else if (kind == CLI_KIND_ROOT) s = recover_root(argv[i], &opt);
        else s = recover_path(argv[i], kind, &opt);
        if (status == CLI_EXIT_OK) status = s;
    }
    return status;
}
