/* atf - command-line tool for ADA Trace Format (ATF v2) files and sessions.
 * SPDX-License-Identifier: MIT
 *
 * One program, one function per subcommand, all listed in cli_commands[] with their help.
 * info, dump and verify take the same PATH kinds: an index.atf file, a detail.atf file
 * (told apart by their magic, "ATI2" / "ATD2"), a thread_N directory (index.atf, and
 * detail.atf when the thread persisted detail) or a session pid_* directory (whose side
 * lives in session_cmds.c). gen, recover and ktrace live in their own files; cli.h lists
 * what the files share.
 * Exit status: 0 ok, 1 bad or damaged data, 2 usage error.
 *
 * The library's implementation is compiled here; other files of tools/ include atf.h
 * without ATF_IMPLEMENTATION. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "cli.h"
#include "analyze.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#if !defined(_WIN32)
#  include <dirent.h>
#endif

#if defined(_WIN32) && !defined(S_ISDIR)
#  define S_ISDIR(m) (((m) & _S_IFMT) == _S_IFDIR)
#endif

/* ==== command table ================================================================== */
static int cli_cmd_info(const cli_command *cmd, int argc, char **argv);
static int cli_cmd_dump(const cli_command *cmd, int argc, char **argv);
static int cli_cmd_verify(const cli_command *cmd, int argc, char **argv);
static int cli_cmd_help(const cli_command *cmd, int argc, char **argv);

/* stats, tree and export live in analyze.c and parse their own options. */
static int cli_cmd_stats(const cli_command *cmd, int argc, char **argv) {
    (void)cmd;
    return atf_cmd_stats(argc, argv);
}
static int cli_cmd_tree(const cli_command *cmd, int argc, char **argv) {
    (void)cmd;
    return atf_cmd_tree(argc, argv);
}
static int cli_cmd_export(const cli_command *cmd, int argc, char **argv) {
    (void)cmd;
    return atf_cmd_export(argc, argv);
}

static const cli_command cli_commands[] = {
    { "info", cli_cmd_info, "header, event count, time range, footer and CRC state",
      "usage: atf info PATH...\n"
      "\n"
      "Prints, for each file, the layout, version, arch, os, thread id, clock, flags,\n"
      "event count, time range, events offset, footer state (how the event count was\n"
      "established: finalized, footer at end, recovered from size, footer mismatch),\n"
      "torn bytes and CRC state (the CRC is verified). A thread directory shows its\n"
      "index.atf and, when present, its detail.atf and its gaps.atf (where the recorder\n"
      "lost events: gaps, events_lost, detail_lost).\n"
      "\n"
      "A session pid_* directory (manifest.json or thread_* directories inside, and no\n"
      "index.atf) shows the manifest state, layout, clock, time range and totals, then\n"
      "one row per thread: slot, OS thread id, events, events dropped (from the\n"
      "manifest), gaps and events lost in them (from its gaps.atf), detail records,\n"
      "whether its timestamps ever decrease, the recovery and CRC state of its index.atf\n"
      "and detail.atf, and its name.\n"
      "\n"
      "Exit status: 0 ok (also for a file recovered after a crash), 1 a file cannot be\n"
      "read, its footer disagrees with it, its CRC does not match or a gaps.atf is\n"
      "damaged, 2 usage error.\n" },
    { "dump", cli_cmd_dump, "print the events, as a table or as JSON lines",
      "usage: atf dump [--json] [--detail] [--from NS] [--to NS] [--limit N]\n"
      "                [--thread SLOT]... PATH\n"
      "\n"
      "Prints every index event as a table (seq, ts, fid, kind, tid, depth, detail).\n"
      "For a session pid_* directory the events of all its threads are merged in\n"
      "(timestamp, thread, seq) order and each carries its thread slot.\n"
      "\n"
      "  --json         one JSON object per line and per index event:\n"
      "                 {\"seq\":N,\"ts\":N,\"fid\":\"0x...\",\n"
      "                  \"kind\":\"call|return|exception|unknown\",\"tid\":N,\"depth\":N,\n"
      "                  \"detail_seq\":N}\n"
      "                 tid and depth are null in layout 2 files, detail_seq is null when\n"
      "                 the event has no detail record. Events of a session end with\n"
      "                 ,\"thread\":SLOT}; seq is then the event's place in its own thread.\n"
      "  --detail       also print the detail records, after the index events:\n"
      "                 {\"detail_seq\":N,\"index_seq\":N,\"type\":N,\"flags\":N,\"ts\":N,\n"
      "                  \"payload_len\":N}\n"
      "                 (files and thread directories only)\n"
      "  --from NS      only events with timestamp >= NS\n"
      "  --to NS        only events with timestamp <= NS\n"
      "  --limit N      at most N events\n"
      "  --thread SLOT  only the thread thread_SLOT of a session; repeatable\n"
      "\n"
      "For a detail.atf PATH only the detail records are printed.\n"
      "Exit status: 0 ok, 1 the file cannot be read, 2 usage error.\n" },
    { "verify", cli_cmd_verify, "check structure, CRCs and index<->detail links",
      "usage: atf verify [--strict] PATH...\n"
      "\n"
      "Checks that every file is structurally valid and every non-zero CRC matches, and\n"
      "for a thread directory that the links between index and detail agree both ways\n"
      "and that its gaps.atf, when present, is valid (a damaged one is a problem).\n"
      "Prints \"OK PATH (...)\" for a good file, \"recovered PATH (...)\" for a file left\n"
      "by a crash (no footer or a placeholder header; a torn last record is ignored),\n"
      "and one line \"PATH: offset N: what\" per problem. A footer that disagrees with\n"
      "its file is a problem. The line of a thread directory that lost events while\n"
      "recording ends with \"; N gaps, N events lost\".\n"
      "\n"
      "A session pid_* directory: every thread directory is verified as above, then one\n"
      "line for the session with the manifest state and the manifest's drop counts\n"
      "(informational), and the gaps and events lost in them when there are any. A\n"
      "manifest.json that is not readable JSON, a thread it lists whose directory is\n"
      "missing, and, when its state is \"closed\", per-thread counts that disagree with\n"
      "the files (events and detail records written, gaps, and events_dropped +\n"
      "events_lost_io against the events lost in gaps.atf) are problems. A missing or\n"
      "incomplete manifest (a crash) is reported, not a problem.\n"
      "\n"
      "  --strict  also fail files that were not finalized (footer not found through\n"
      "            the header) and files whose CRC was not computed (checksum 0).\n"
      "\n"
      "Exit status: 0 every PATH is valid, 1 at least one problem, 2 usage error.\n" },
    /* these three keep their usage text next to their code */
    { "gen", cli_cmd_gen, "record a synthetic session through the session writer",
      cli_usage_gen },
    { "recover", cli_cmd_recover, "finalize files left by a crash, in place",
      cli_usage_recover },
    { "ktrace", cli_cmd_ktrace, "Darwin ktrace v3 file: header, chunks, session clock",
      cli_usage_ktrace },
    { "stats", cli_cmd_stats, "per-function calls, total and self time; per-thread figures",
      "usage: atf stats PATH [--sort self|total|calls|name] [--limit N] [--json]\n"
      "Run 'atf stats --help' for the details.\n" },
    { "tree", cli_cmd_tree, "the call tree of each thread, with durations",
      "usage: atf tree PATH [--thread SLOT] [--max-depth N]\n"
      "Run 'atf tree --help' for the details.\n" },
    { "export", cli_cmd_export, "convert to Chrome JSON or a Perfetto protobuf trace",
      "usage: atf export --format chrome|perfetto [-o OUT] PATH\n"
      "Run 'atf export --help' for the details.\n" },
    { "help", cli_cmd_help, "show the help of atf or of one command",
      "usage: atf help [COMMAND]\n" },
};
static const size_t cli_command_count = sizeof cli_commands / sizeof cli_commands[0];

static void cli_usage(FILE *out) {
    size_t i;
    fputs("usage: atf COMMAND [OPTIONS] PATH...\n"
          "\n"
          "Reads ADA Trace Format (ATF v2) files, layout 1 and layout 2.\n"
          "PATH is an index.atf file, a detail.atf file, a thread_N directory or a\n"
          "session pid_* directory.\n"
          "\n"
          "commands:\n", out);
    for (i = 0; i < cli_command_count; i++)
        fprintf(out, "  %-8s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fputs("\n"
          "Run 'atf COMMAND --help' for the options of a command.\n"
          "Exit status: 0 ok, 1 bad or damaged data, 2 usage error.\n", out);
}

static const cli_command *cli_find_command(const char *name) {
    size_t i;
    for (i = 0; i < cli_command_count; i++)
        if (strcmp(cli_commands[i].name, name) == 0) return &cli_commands[i];
    return NULL;
}

static int cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* ==== arguments ====================================================================== */
/* Drops the trailing slashes of a PATH ("thread_0/" -> "thread_0"; "/" stays). */
static void cli_trim_slashes(char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') path[--n] = '\0';
}

int cli_parse_u64(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        unsigned d;
        if (*s < '0' || *s > '9') return 0;
        d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "atf %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", cmd->usage);
    return CLI_EXIT_USAGE;
}

/* Stores the value of option f; CLI_CONTINUE or CLI_EXIT_USAGE. */
static int cli_take_value(const cli_command *cmd, const cli_flag *f, const char *value) {
    uint64_t v;
    switch (f->kind) {
    case CLI_OPT_STR:
        *(const char **)f->arg = value;
        return CLI_CONTINUE;
    case CLI_OPT_U64:
    case CLI_OPT_U64_LIST:
        if (!cli_parse_u64(value, &v))
            return cli_usage_error(cmd, "%s: '%s' is not a number", f->name, value);
        if (f->kind == CLI_OPT_U64) {
            *(uint64_t *)f->arg = v;
        } else {
            cli_u64_list *l = (cli_u64_list *)f->arg;
            if (l->count == CLI_LIST_MAX)
                return cli_usage_error(cmd, "%s given more than %d times", f->name, CLI_LIST_MAX);
            l->items[l->count++] = v;
        }
        return CLI_CONTINUE;
    case CLI_OPT_FLAG:
        break;
    }
    return cli_usage_error(cmd, "option '%s' takes no value", f->name);
}

int cli_parse_args(const cli_command *cmd, int argc, char **argv, const cli_flag *flags,
                   size_t nflags, int min_ops, int max_ops, int *nops) {
    int i, n = 0, only_ops = 0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *eq;
        size_t f, name_len;
        if (only_ops || a[0] != '-' || a[1] == '\0') {
            cli_trim_slashes(argv[i]);
            argv[1 + n++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_ops = 1;
            continue;
        }
        if (cli_is_help(a)) {
            fputs(cmd->usage, stdout);
            return CLI_EXIT_OK;
        }
        eq = strchr(a, '=');
        name_len = eq ? (size_t)(eq - a) : strlen(a);
        for (f = 0; f < nflags; f++)
            if (strlen(flags[f].name) == name_len && strncmp(a, flags[f].name, name_len) == 0)
                break;
        if (f == nflags || (eq && flags[f].kind == CLI_OPT_FLAG)) {
            fprintf(stderr, "atf %s: unknown option '%s'\n\n%s", cmd->name, a, cmd->usage);
            return CLI_EXIT_USAGE;
        }
        if (flags[f].value) *flags[f].value = 1;
        if (flags[f].kind != CLI_OPT_FLAG) {
            int rc;
            if (!eq && i + 1 >= argc)
                return cli_usage_error(cmd, "option '%s' needs a value", flags[f].name);
            rc = cli_take_value(cmd, &flags[f], eq ? eq + 1 : argv[++i]);
            if (rc != CLI_CONTINUE) return rc;
        }
    }
    if (n < min_ops || (max_ops > 0 && n > max_ops)) {
        fprintf(stderr, "atf %s: %s\n\n%s", cmd->name,
                n < min_ops ? "missing PATH" : "too many PATHs", cmd->usage);
        return CLI_EXIT_USAGE;
    }
    *nops = n;
    return CLI_CONTINUE;
}

/* ==== errors and small helpers ======================================================= */
void cli_print_error(FILE *out, const char *prefix, const atf_error *e) {
    char line[CLI_LINE_MAX];
    fprintf(out, "%s%s\n", prefix, atf_error_format(e, line, sizeof line));
}

int cli_report(const atf_error *e) {
    cli_print_error(stderr, "atf: ", e);
    return CLI_EXIT_DATA;
}

void cli_error_init(atf_error *e, atf_result code, const char *path, uint64_t offset,
                    const char *what) {
    memset(e, 0, sizeof *e);
    e->code = code;
    snprintf(e->path, sizeof e->path, "%s", path);
    e->offset = offset;
    e->what = what;
}

void cli_error_errno(atf_error *e, const char *path, const char *what, int sys_errno) {
    cli_error_init(e, sys_errno == ENOENT ? ATF_E_NOT_FOUND : ATF_E_IO, path, 0, what);
    e->sys_errno = sys_errno;
}

atf_result cli_join(char *buf, size_t cap, const char *dir, const char *name, atf_error *e) {
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) {
        cli_error_init(e, ATF_E_ARG, dir, 0, "path too long");
        return ATF_E_ARG;
    }
    return ATF_OK;
}

int cli_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

int cli_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

uint64_t cli_file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* ==== PATH kinds ===================================================================== */
int cli_scan_thread_dirs(const char *dir, void (*fn)(void *ctx, uint32_t slot), void *ctx) {
#if defined(_WIN32)
    (void)dir, (void)fn, (void)ctx;
    return -1;
#else
    DIR *d = opendir(dir);
    struct dirent *ent;
    if (!d) return -1;
    while ((ent = readdir(d)) != NULL) {
        char path[CLI_PATH_MAX];
        struct stat st;
        uint64_t slot;
        if (strncmp(ent->d_name, "thread_", 7) != 0 || !cli_parse_u64(ent->d_name + 7, &slot) ||
            slot > UINT32_MAX)
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, ent->d_name) >= (int)sizeof path ||
            stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        fn(ctx, (uint32_t)slot);
    }
    closedir(d);
    return 0;
#endif
}

static void cli_count_slot(void *ctx, uint32_t slot) {
    (void)slot;
    ++*(size_t *)ctx;
}

/* A directory holding index.atf is a thread directory; one holding manifest.json or
 * thread_* directories is a session; any other directory is taken for a thread
 * directory, so that the reader says what is missing. A file starting with "ATD2" is a
 * detail file; any other file is taken for an index file, so that the index reader says
 * what is wrong with it (bad magic, too short). */
atf_result cli_classify(const char *path, cli_kind *kind, atf_error *e) {
    struct stat st;
    unsigned char magic[4];
    char sub[CLI_PATH_MAX];
    size_t got, threads = 0;
    FILE *f;
    if (stat(path, &st) != 0) {
        cli_error_errno(e, path, "stat", errno);
        return e->code;
    }
    if (S_ISDIR(st.st_mode)) {
        *kind = CLI_KIND_DIR;
        if (cli_join(sub, sizeof sub, path, "index.atf", e) != ATF_OK) return e->code;
        if (cli_exists(sub)) return ATF_OK;
        if (cli_join(sub, sizeof sub, path, "manifest.json", e) != ATF_OK) return e->code;
        if (cli_exists(sub) ||
            (cli_scan_thread_dirs(path, cli_count_slot, &threads) == 0 && threads > 0))
            *kind = CLI_KIND_SESSION;
        return ATF_OK;
    }
    f = fopen(path, "rb");
    if (!f) {
        cli_error_errno(e, path, "open", errno);
        return e->code;
    }
    got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    *kind = got == sizeof magic && memcmp(magic, ATF_DETAIL_MAGIC, 4) == 0 ? CLI_KIND_DETAIL
                                                                           : CLI_KIND_INDEX;
    return ATF_OK;
}

/* An opened PATH of a kind other than a session. */
typedef struct cli_target {
    cli_kind kind;
    atf_thread_reader thread;       /* a directory; its members also hold a lone file */
    atf_index_reader *index;        /* NULL when PATH has no index file */
    atf_detail_reader *detail;      /* NULL when PATH has no detail file */
} cli_target;

/* Opens PATH, of kind `kind`; on failure reports on stderr and returns CLI_EXIT_DATA. */
static int cli_target_open(cli_target *t, const char *path, cli_kind kind) {
    memset(t, 0, sizeof *t);
    t->kind = kind;
    switch (t->kind) {
    case CLI_KIND_INDEX:
        if (atf_index_reader_open(&t->thread.index, path, NULL) != ATF_OK)
            return cli_report(&t->thread.index.error);
        t->index = &t->thread.index;
        break;
    case CLI_KIND_DETAIL:
        if (atf_detail_reader_open(&t->thread.detail, path, NULL) != ATF_OK)
            return cli_report(&t->thread.detail.error);
        t->detail = &t->thread.detail;
        break;
    case CLI_KIND_DIR:
    case CLI_KIND_SESSION:
        if (atf_thread_reader_open(&t->thread, path, NULL) != ATF_OK)
            return cli_report(&t->thread.error);
        t->index = &t->thread.index;
        t->detail = t->thread.has_detail ? &t->thread.detail : NULL;
        break;
    }
    return CLI_EXIT_OK;
}

static void cli_target_close(cli_target *t) {
    switch (t->kind) {
    case CLI_KIND_INDEX: atf_index_reader_close(&t->thread.index); break;
    case CLI_KIND_DETAIL: atf_detail_reader_close(&t->thread.detail); break;
    case CLI_KIND_DIR:
    case CLI_KIND_SESSION: atf_thread_reader_close(&t->thread); break;
    }
}

/* ==== facts: what info and verify judge about one file, from either reader ========== */
/* The footer's place: where the header says, else the last 64 bytes. */
static uint64_t cli_footer_offset(uint64_t hinted, uint64_t file_size) {
    if (hinted) return hinted;
    return file_size >= ATF_FOOTER_SIZE ? file_size - ATF_FOOTER_SIZE : 0;
}

/* Fills *f from an open index reader, verifying its CRC. */
void cli_facts_index(cli_facts *f, atf_index_reader *r) {
    memset(f, 0, sizeof *f);
    atf_index_reader_verify_crc(r);  /* the outcome is in r->crc_state and r->error */
    f->path = r->path;
    f->count = r->event_count;
    f->torn_bytes = r->torn_bytes;
    f->events_offset = r->header.events_offset;
    f->section_bytes = r->event_count * ATF_INDEX_EVENT_SIZE + r->torn_bytes;
    f->file_size = cli_file_size(r->path);
    f->footer_offset = cli_footer_offset(r->header.footer_offset, f->file_size);
    f->final_mark_offset = 40;       /* footer_offset, 0 in the placeholder */
    f->footer_count = r->footer.event_count;
    f->footer_bytes = r->footer.bytes_written;
    f->recovery = r->recovery;
    f->crc_state = r->crc_state;
    f->crc_expected = r->footer.checksum;
    f->crc_found = r->crc_found;
    f->crc_error = r->error;
}

/* Fills *f from an open detail reader, verifying its CRC. */
void cli_facts_detail(cli_facts *f, atf_detail_reader *r) {
    memset(f, 0, sizeof *f);
    atf_detail_reader_verify_crc(r);
    f->path = r->path;
    f->is_detail = 1;
    f->count = r->event_count;
    f->torn_bytes = r->torn_bytes;
    f->events_offset = r->header.events_offset;
    f->section_bytes = r->bytes_length + r->torn_bytes;
    f->file_size = cli_file_size(r->path);
    f->footer_offset = cli_footer_offset(r->header.event_count || r->header.bytes_length
                                             ? r->header.events_offset + r->header.bytes_length
                                             : 0,
                                         f->file_size);
    f->final_mark_offset = 28;       /* event_count, 0 in the placeholder */
    f->footer_count = r->footer.event_count;
    f->footer_bytes = r->footer.bytes_length;
    f->recovery = r->recovery;
    f->crc_state = r->crc_state;
    f->crc_expected = r->footer.checksum;
    f->crc_found = r->crc_found;
    f->crc_error = r->error;
}

const char *cli_recovery_text(const cli_facts *f) {
    switch (f->recovery) {
    case ATF_RECOVERY_FINALIZED: return "finalized";
    case ATF_RECOVERY_FOOTER_AT_END: return "footer at end, header still the placeholder";
    case ATF_RECOVERY_FROM_SIZE:
        return f->is_detail ? "no footer, records counted by walking them"
                            : "no footer, events counted from the file size";
    case ATF_RECOVERY_FOOTER_MISMATCH: return "footer mismatch, events counted as without one";
    }
    return "unknown";
}

const char *cli_crc_text(const cli_facts *f, char *buf, size_t cap) {
    switch (f->crc_state) {
    case ATF_CRC_NO_FOOTER:
        snprintf(buf, cap, f->recovery == ATF_RECOVERY_FOOTER_MISMATCH
                 ? "not checked (the footer disagrees with the file)" : "none (no footer)");
        break;
    case ATF_CRC_NOT_COMPUTED: snprintf(buf, cap, "not computed (footer checksum 0)"); break;
    case ATF_CRC_UNCHECKED: snprintf(buf, cap, "not verified (0x%08x)", f->crc_expected); break;
    case ATF_CRC_OK: snprintf(buf, cap, "ok (0x%08x)", f->crc_found); break;
    case ATF_CRC_MISMATCH:
        snprintf(buf, cap, "mismatch (expected 0x%08x, found 0x%08x)", f->crc_expected,
                 f->crc_found);
        break;
    default: snprintf(buf, cap, "unknown state %d", (int)f->crc_state); break;
    }
    return buf;
}

/* Prints one line per problem of the file to `out`, each preceded by `prefix`, and
 * returns how many. Without `strict` a file left by a crash is no problem. */
int cli_problems(const cli_facts *f, int strict, FILE *out, const char *prefix) {
    int n = 0;
    if (f->recovery == ATF_RECOVERY_FOOTER_MISMATCH) {
        atf_error e;
        n++;
        if (f->footer_count != f->count) {
            cli_error_init(&e, ATF_E_CORRUPT, f->path, f->footer_offset + 8,
                           "footer event_count disagrees with the events in the file");
            e.expected = f->count;
            e.found = f->footer_count;
        } else {
            cli_error_init(&e, ATF_E_CORRUPT, f->path, f->footer_offset + (f->is_detail ? 16 : 32),
                           "footer byte count disagrees with the events section");
            e.expected = f->section_bytes;
            e.found = f->footer_bytes;
        }
        e.has_values = 1;
        cli_print_error(out, prefix, &e);
    }
    if (f->crc_state == ATF_CRC_MISMATCH) {
        n++;
        cli_print_error(out, prefix, &f->crc_error);
    }
    if (!strict) return n;
    if (f->recovery == ATF_RECOVERY_FOOTER_AT_END || f->recovery == ATF_RECOVERY_FROM_SIZE) {
        n++;
        fprintf(out, "%s%s: offset %llu: not finalized: %s (--strict)\n", prefix, f->path,
                (cli_ull)f->final_mark_offset, cli_recovery_text(f));
    }
    /* the CRC32-C of an empty section is 0 too: that is a computed checksum */
    if (f->crc_state == ATF_CRC_NOT_COMPUTED && f->section_bytes > 0) {
        n++;
        fprintf(out, "%s%s: offset %llu: CRC32-C not computed (footer checksum 0) (--strict)\n",
                prefix, f->path, (cli_ull)(f->footer_offset + 4));
    }
    return n;
}

/* ==== output: a large stdout buffer and hand-rolled number formatting ================= */
static char cli_stdout_buffer[1 << 20];

size_t cli_digits(uint64_t v) {
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

char *cli_put_str(char *p, const char *s) {
    while (*s) *p++ = *s++;
    return p;
}

char *cli_put_u64(char *p, uint64_t v) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

char *cli_put_spaces(char *p, size_t n) {
    while (n--) *p++ = ' ';
    return p;
}

/* v right-aligned in `width` columns. */
char *cli_put_u64_right(char *p, uint64_t v, size_t width) {
    size_t d = cli_digits(v);
    return cli_put_u64(cli_put_spaces(p, d < width ? width - d : 0), v);
}

/* s right-aligned (right != 0) or left-aligned in `width` columns. */
char *cli_put_str_aligned(char *p, const char *s, size_t width, int right) {
    size_t len = strlen(s), pad = len < width ? width - len : 0;
    if (right) p = cli_put_spaces(p, pad);
    p = cli_put_str(p, s);
    return right ? p : cli_put_spaces(p, pad);
}

/* "0x" and 16 lowercase hex digits. */
char *cli_put_hex64(char *p, uint64_t v) {
    static const char hex[] = "0123456789abcdef";
    int shift;
    *p++ = '0';
    *p++ = 'x';
    for (shift = 60; shift >= 0; shift -= 4) *p++ = hex[(v >> shift) & 15u];
    return p;
}

/* Ends the line at p and writes line[0..p) to stdout. */
void cli_emit(char *line, char *p) {
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), stdout);
}

size_t cli_max_size(size_t a, size_t b) { return a > b ? a : b; }

/* ==== info =========================================================================== */
#define CLI_KEY_WIDTH 16

void cli_kv(const char *key, const char *fmt, ...) {
    va_list ap;
    printf("%s:%*s", key, (int)(CLI_KEY_WIDTH - strlen(key)), "");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* time_first_ns, time_last_ns and duration of the first and last event. */
static void cli_info_time_range(uint64_t count, uint64_t first, uint64_t last) {
    if (count == 0) {
        cli_kv("time_first_ns", "-");
        cli_kv("time_last_ns", "-");
        cli_kv("duration", "-");
        return;
    }
    cli_kv("time_first_ns", "%llu", (cli_ull)first);
    cli_kv("time_last_ns", "%llu", (cli_ull)last);
    cli_kv_duration(first, last);
}

void cli_kv_duration(uint64_t first, uint64_t last) {
    if (last < first)
        cli_kv("duration", "- (last event is older than the first: not in time order)");
    else
        cli_kv("duration", "%llu ns (%llu.%09llu s)", (cli_ull)(last - first),
               (cli_ull)((last - first) / 1000000000u), (cli_ull)((last - first) % 1000000000u));
}

static void cli_info_identity(const char *path, const char *kind, int layout, uint8_t version,
                              uint8_t arch, uint8_t os, uint32_t thread_id) {
    cli_kv("file", "%s", path);
    cli_kv("kind", "%s", kind);
    cli_kv("layout", "%d (%s)", layout,
           layout == ATF_LAYOUT_1 ? "deployed structs of TRACE_SCHEMA.md" : "atf-format-spec.txt");
    cli_kv("version", "%u", version);
    cli_kv("arch", "%s (%u)", atf_arch_str(arch), arch);
    cli_kv("os", "%s (%u)", atf_os_str(os), os);
    cli_kv("thread_id", "%u", thread_id);
}

/* The footer, torn_bytes and crc lines, then the problems on stderr; returns the exit
 * status (damaged data is 1, a file recovered after a crash is 0). */
static int cli_info_state(const cli_facts *f) {
    char crc[128];
    cli_kv("events_offset", "%llu", (cli_ull)f->events_offset);
    cli_kv("file_size", "%llu", (cli_ull)f->file_size);
    switch (f->recovery) {
    case ATF_RECOVERY_FINALIZED:
        cli_kv("footer", "finalized (footer at offset %llu)", (cli_ull)f->footer_offset);
        break;
    case ATF_RECOVERY_FOOTER_AT_END:
        cli_kv("footer", "footer at end (offset %llu; header still the placeholder)",
               (cli_ull)f->footer_offset);
        break;
    case ATF_RECOVERY_FROM_SIZE:
        cli_kv("footer", "recovered from size (%s)", cli_recovery_text(f));
        break;
    case ATF_RECOVERY_FOOTER_MISMATCH:
        cli_kv("footer", "footer mismatch (footer says %llu events in %llu bytes; the file "
               "holds %llu events in %llu bytes)", (cli_ull)f->footer_count,
               (cli_ull)f->footer_bytes, (cli_ull)f->count, (cli_ull)f->section_bytes);
        break;
    }
    cli_kv("torn_bytes", "%llu", (cli_ull)f->torn_bytes);
    cli_kv("crc", "%s", cli_crc_text(f, crc, sizeof crc));
    return cli_problems(f, 0, stderr, "atf: ") ? CLI_EXIT_DATA : CLI_EXIT_OK;
}

static int cli_info_index(const char *path) {
    atf_index_reader r;
    atf_index_event first, last;
    cli_facts f;
    const atf_index_header *h = &r.header;
    int status;
    if (atf_index_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    cli_facts_index(&f, &r);
    cli_info_identity(path, "index", r.layout, h->version, h->arch, h->os, h->thread_id);
    cli_kv("clock_type", "%s (%u)", atf_clock_str(h->clock_type), h->clock_type);
    cli_kv("flags", "0x%08x%s", h->flags,
           (h->flags & ATF_INDEX_FLAG_HAS_DETAIL_FILE) ? " (has_detail_file)" : "");
    cli_kv("event_size", "%u", h->event_size);
    cli_kv("events", "%llu", (cli_ull)r.event_count);
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    if (r.event_count > 0) {
        atf_index_reader_get(&r, 0, &first);
        atf_index_reader_get(&r, r.event_count - 1, &last);
    }
    cli_info_time_range(r.event_count, first.timestamp_ns, last.timestamp_ns);
    status = cli_info_state(&f);
    atf_index_reader_close(&r);
    return status;
}

static int cli_info_detail(const char *path) {
    atf_detail_reader r;
    atf_detail_event first, last;
    cli_facts f;
    const atf_detail_header *h = &r.header;
    int status;
    if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    cli_facts_detail(&f, &r);
    cli_info_identity(path, "detail", r.layout, h->version, h->arch, h->os, h->thread_id);
    cli_kv("flags", "0x%08x", h->flags);
    cli_kv("events", "%llu", (cli_ull)r.event_count);
    cli_kv("bytes_length", "%llu", (cli_ull)r.bytes_length);
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    if (r.event_count > 0) {
        atf_detail_reader_get(&r, 0, &first);
        atf_detail_reader_get(&r, r.event_count - 1, &last);
        cli_kv("index_seq", "%llu .. %llu", (cli_ull)first.header.index_seq,
               (cli_ull)last.header.index_seq);
    } else {
        cli_kv("index_seq", "-");
    }
    cli_info_time_range(r.event_count, first.header.timestamp_ns, last.header.timestamp_ns);
    status = cli_info_state(&f);
    atf_detail_reader_close(&r);
    return status;
}

/* The gaps.atf of thread directory dir (at path), read by the thread reader: its totals;
 * a damaged file is reported on stderr (status 1) after the gaps before the damage. */
static int cli_info_gaps(const char *dir, const char *path) {
    atf_thread_reader t;
    uint64_t detail_lost = 0;
    size_t i;
    int status = CLI_EXIT_OK;
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) return CLI_EXIT_OK; /* said above */
    for (i = 0; i < t.gap_count; i++) detail_lost += t.gaps[i].detail_lost;
    cli_kv("file", "%s", path);
    cli_kv("kind", "gaps");
    cli_kv("gaps", "%llu", (cli_ull)t.gap_count);
    cli_kv("events_lost", "%llu", (cli_ull)t.events_lost);
    cli_kv("detail_lost", "%llu", (cli_ull)detail_lost);
    if (t.error.code != ATF_OK) status = cli_report(&t.error);
    atf_thread_reader_close(&t);
    return status;
}

/* A thread directory: its index.atf, then its detail.atf and gaps.atf when there are. */
static int cli_info_dir(const char *dir) {
    char path[CLI_PATH_MAX];
    atf_error e;
    int status;
    if (cli_join(path, sizeof path, dir, "index.atf", &e) != ATF_OK) return cli_report(&e);
    status = cli_info_index(path);
    if (cli_join(path, sizeof path, dir, "detail.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int detail_status;
        putchar('\n');
        detail_status = cli_info_detail(path);
        if (status == CLI_EXIT_OK) status = detail_status;
    }
    if (cli_join(path, sizeof path, dir, "gaps.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int gaps_status;
        putchar('\n');
        gaps_status = cli_info_gaps(dir, path);
        if (status == CLI_EXIT_OK) status = gaps_status;
    }
    return status;
}

static int cli_info_path(const char *path) {
    cli_kind kind;
    atf_error e;
    if (cli_classify(path, &kind, &e) != ATF_OK) return cli_report(&e);
    switch (kind) {
    case CLI_KIND_INDEX: return cli_info_index(path);
    case CLI_KIND_DETAIL: return cli_info_detail(path);
    case CLI_KIND_DIR: return cli_info_dir(path);
    case CLI_KIND_SESSION: return cli_info_session(path);
    }
    return CLI_EXIT_DATA;
}

static int cli_cmd_info(const cli_command *cmd, int argc, char **argv) {
    int i, nops = 0, status = CLI_EXIT_OK;
    int rc = cli_parse_args(cmd, argc, argv, NULL, 0, 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    for (i = 1; i <= nops; i++) {
        int s;
        if (i > 1) putchar('\n');
        s = cli_info_path(argv[i]);
        if (status == CLI_EXIT_OK) status = s;
    }
    return status;
}

/* ==== dump =========================================================================== */
/* Column widths of the index table: each column as wide as its widest value or title. */
typedef struct cli_index_widths {
    size_t seq, ts, tid, depth, detail;
} cli_index_widths;

static cli_index_widths cli_index_table_widths(const atf_index_reader *r) {
    cli_index_widths w;
    uint64_t i, ts = 0, tid = 0, depth = 0, detail = 0;
    atf_index_event ev;
    for (i = 0; i < r->event_count; i++) {
        atf_index_reader_get(r, i, &ev);
        if (ev.timestamp_ns > ts) ts = ev.timestamp_ns;
        if (ev.thread_id > tid) tid = ev.thread_id;
        if (ev.call_depth > depth) depth = ev.call_depth;
        if (ev.detail_seq != ATF_NO_DETAIL && ev.detail_seq > detail) detail = ev.detail_seq;
    }
    w.seq = cli_max_size(strlen("seq"), cli_digits(r->event_count ? r->event_count - 1 : 0));
    w.ts = cli_max_size(strlen("ts"), cli_digits(ts));
    w.tid = cli_max_size(strlen("tid"), cli_digits(tid));
    w.depth = cli_max_size(strlen("depth"), cli_digits(depth));
    w.detail = cli_max_size(strlen("detail"), cli_digits(detail));
    return w;
}

#define CLI_KIND_WIDTH 9            /* "exception" */
#define CLI_FID_WIDTH 18            /* "0x" + 16 digits */

/* Whether --from / --to let a record with timestamp ts through. */
static int cli_dump_keep(const cli_dump_opts *o, uint64_t ts) {
    return (!o->has_from || ts >= o->from_ns) && (!o->has_to || ts <= o->to_ns);
}

static void cli_dump_index_table(const atf_index_reader *r, const cli_dump_opts *o) {
    char line[CLI_LINE_MAX], *p;
    cli_index_widths w = cli_index_table_widths(r);
    int has_tid = r->layout == ATF_LAYOUT_1;
    uint64_t i, n = 0;
    atf_index_event ev;
    p = cli_put_str_aligned(line, "seq", w.seq, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "ts", w.ts, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "fid", CLI_FID_WIDTH, 0);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "kind", CLI_KIND_WIDTH, 0);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "tid", w.tid, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "depth", w.depth, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "detail", w.detail, 1);
    cli_emit(line, p);
    for (i = 0; i < r->event_count && (!o->has_limit || n < o->limit); i++) {
        atf_index_reader_get(r, i, &ev);
        if (!cli_dump_keep(o, ev.timestamp_ns)) continue;
        n++;
        p = cli_put_u64_right(line, i, w.seq);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.timestamp_ns, w.ts);
        p = cli_put_hex64(cli_put_str(p, "  "), ev.function_id);
        p = cli_put_str_aligned(cli_put_str(p, "  "), atf_event_kind_str(ev.kind),
                                CLI_KIND_WIDTH, 0);
        p = cli_put_str(p, "  ");
        if (has_tid) {
            p = cli_put_u64_right(p, ev.thread_id, w.tid);
            p = cli_put_u64_right(cli_put_str(p, "  "), ev.call_depth, w.depth);
        } else {
            p = cli_put_str_aligned(p, "-", w.tid, 1);
            p = cli_put_str_aligned(cli_put_str(p, "  "), "-", w.depth, 1);
        }
        p = cli_put_str(p, "  ");
        if (ev.detail_seq == ATF_NO_DETAIL) p = cli_put_str_aligned(p, "-", w.detail, 1);
        else p = cli_put_u64_right(p, ev.detail_seq, w.detail);
        cli_emit(line, p);
    }
}

static void cli_dump_index_json(const atf_index_reader *r, const cli_dump_opts *o) {
    char line[CLI_LINE_MAX], *p;
    int has_tid = r->layout == ATF_LAYOUT_1;
    uint64_t i, n = 0;
    atf_index_event ev;
    for (i = 0; i < r->event_count && (!o->has_limit || n < o->limit); i++) {
        atf_index_reader_get(r, i, &ev);
        if (!cli_dump_keep(o, ev.timestamp_ns)) continue;
        n++;
        p = cli_put_u64(cli_put_str(line, "{\"seq\":"), i);
        p = cli_put_u64(cli_put_str(p, ",\"ts\":"), ev.timestamp_ns);
        p = cli_put_hex64(cli_put_str(p, ",\"fid\":\""), ev.function_id);
        p = cli_put_str(cli_put_str(p, "\",\"kind\":\""), atf_event_kind_str(ev.kind));
        if (has_tid) {
            p = cli_put_u64(cli_put_str(p, "\",\"tid\":"), ev.thread_id);
            p = cli_put_u64(cli_put_str(p, ",\"depth\":"), ev.call_depth);
        } else {
            p = cli_put_str(p, "\",\"tid\":null,\"depth\":null");
        }
        p = cli_put_str(p, ",\"detail_seq\":");
        p = ev.detail_seq == ATF_NO_DETAIL ? cli_put_str(p, "null") : cli_put_u64(p, ev.detail_seq);
        cli_emit(line, cli_put_str(p, "}"));
    }
}

typedef struct cli_detail_widths {
    size_t seq, index_seq, type, ts, payload_len;
} cli_detail_widths;

static cli_detail_widths cli_detail_table_widths(const atf_detail_reader *r) {
    cli_detail_widths w;
    uint64_t i, index_seq = 0, type = 0, ts = 0, len = 0;
    atf_detail_event ev;
    for (i = 0; i < r->event_count; i++) {
        atf_detail_reader_get(r, i, &ev);
        if (ev.header.index_seq > index_seq) index_seq = ev.header.index_seq;
        if (ev.header.type > type) type = ev.header.type;
        if (ev.header.timestamp_ns > ts) ts = ev.header.timestamp_ns;
        if (ev.payload_len > len) len = ev.payload_len;
    }
    w.seq = cli_max_size(strlen("detail_seq"), cli_digits(r->event_count ? r->event_count - 1 : 0));
    w.index_seq = cli_max_size(strlen("index_seq"), cli_digits(index_seq));
    w.type = cli_max_size(strlen("type"), cli_digits(type));
    w.ts = cli_max_size(strlen("ts"), cli_digits(ts));
    w.payload_len = cli_max_size(strlen("payload_len"), cli_digits(len));
    return w;
}

#define CLI_FLAGS_WIDTH 6           /* "0x" + 4 digits */

static void cli_dump_detail_table(const atf_detail_reader *r, const cli_dump_opts *o) {
    static const char hex[] = "0123456789abcdef";
    char line[CLI_LINE_MAX], *p;
    cli_detail_widths w = cli_detail_table_widths(r);
    uint64_t i, n = 0;
    atf_detail_event ev;
    p = cli_put_str_aligned(line, "detail_seq", w.seq, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "index_seq", w.index_seq, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "type", w.type, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "flags", CLI_FLAGS_WIDTH, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "ts", w.ts, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "payload_len", w.payload_len, 1);
    cli_emit(line, p);
    for (i = 0; i < r->event_count && (!o->has_limit || n < o->limit); i++) {
        atf_detail_reader_get(r, i, &ev);
        if (!cli_dump_keep(o, ev.header.timestamp_ns)) continue;
        n++;
        p = cli_put_u64_right(line, i, w.seq);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.header.index_seq, w.index_seq);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.header.type, w.type);
        p = cli_put_str(p, "  0x");
        *p++ = hex[(ev.header.flags >> 12) & 15u];
        *p++ = hex[(ev.header.flags >> 8) & 15u];
        *p++ = hex[(ev.header.flags >> 4) & 15u];
        *p++ = hex[ev.header.flags & 15u];
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.header.timestamp_ns, w.ts);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.payload_len, w.payload_len);
        cli_emit(line, p);
    }
}

static void cli_dump_detail_json(const atf_detail_reader *r, const cli_dump_opts *o) {
    char line[CLI_LINE_MAX], *p;
    uint64_t i, n = 0;
    atf_detail_event ev;
    for (i = 0; i < r->event_count && (!o->has_limit || n < o->limit); i++) {
        atf_detail_reader_get(r, i, &ev);
        if (!cli_dump_keep(o, ev.header.timestamp_ns)) continue;
        n++;
        p = cli_put_u64(cli_put_str(line, "{\"detail_seq\":"), i);
        p = cli_put_u64(cli_put_str(p, ",\"index_seq\":"), ev.header.index_seq);
        p = cli_put_u64(cli_put_str(p, ",\"type\":"), ev.header.type);
        p = cli_put_u64(cli_put_str(p, ",\"flags\":"), ev.header.flags);
        p = cli_put_u64(cli_put_str(p, ",\"ts\":"), ev.header.timestamp_ns);
        p = cli_put_u64(cli_put_str(p, ",\"payload_len\":"), ev.payload_len);
        cli_emit(line, cli_put_str(p, "}"));
    }
}

/* Options are parsed into a static: the --thread list is large. */
static cli_dump_opts cli_dump_options;

static int cli_cmd_dump(const cli_command *cmd, int argc, char **argv) {
    cli_dump_opts *o = &cli_dump_options;
    const cli_flag flags[] = {
        { "--json", &o->json, CLI_OPT_FLAG, NULL },
        { "--detail", &o->detail, CLI_OPT_FLAG, NULL },
        { "--from", &o->has_from, CLI_OPT_U64, &o->from_ns },
        { "--to", &o->has_to, CLI_OPT_U64, &o->to_ns },
        { "--limit", &o->has_limit, CLI_OPT_U64, &o->limit },
        { "--thread", &o->has_threads, CLI_OPT_U64_LIST, &o->threads },
    };
    int nops = 0, rc;
    cli_kind kind;
    atf_error e;
    cli_target t;
    memset(o, 0, sizeof *o);
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 1, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (cli_classify(argv[1], &kind, &e) != ATF_OK) return cli_report(&e);
    if (kind == CLI_KIND_SESSION) {
        if (o->detail)
            return cli_usage_error(cmd, "--detail is for files and thread directories; "
                                        "dump %s/thread_N for its detail records", argv[1]);
        return cli_dump_session(argv[1], o);
    }
    if (o->has_threads)
        return cli_usage_error(cmd, "--thread is for a session pid_* directory; %s is not one",
                               argv[1]);
    rc = cli_target_open(&t, argv[1], kind);
    if (rc != CLI_EXIT_OK) return rc;
    if (t.index) {
        if (o->json) cli_dump_index_json(t.index, o);
        else cli_dump_index_table(t.index, o);
    }
    if (t.detail && (o->detail || !t.index)) {
        if (o->json) {
            cli_dump_detail_json(t.detail, o);
        } else {
            if (t.index) putchar('\n');
            cli_dump_detail_table(t.detail, o);
        }
    }
    cli_target_close(&t);
    return CLI_EXIT_OK;
}

/* ==== verify ========================================================================= */
/* The line for a file without problems: "OK" or "recovered". */
static void cli_verify_good(const cli_facts *f) {
    char crc[128];
    const char *noun = f->is_detail ? "detail records" : "events";
    cli_crc_text(f, crc, sizeof crc);
    if (f->recovery == ATF_RECOVERY_FINALIZED && f->torn_bytes == 0) {
        printf("OK %s (%llu %s, crc %s)\n", f->path, (cli_ull)f->count, noun, crc);
        return;
    }
    printf("recovered %s (%llu %s: %s", f->path, (cli_ull)f->count, noun, cli_recovery_text(f));
    if (f->torn_bytes) printf("; %llu torn bytes ignored", (cli_ull)f->torn_bytes);
    printf("; crc %s)\n", crc);
}

/* Each verify_* function prints its lines and returns its number of problems. */
static int cli_verify_facts(const cli_facts *f, int strict) {
    int n = cli_problems(f, strict, stdout, "");
    if (n == 0) cli_verify_good(f);
    return n;
}

static int cli_verify_index_file(const char *path, int strict) {
    atf_index_reader r;
    cli_facts f;
    int n;
    if (atf_index_reader_open(&r, path, NULL) != ATF_OK) {
        cli_print_error(stdout, "", &r.error);
        return 1;
    }
    cli_facts_index(&f, &r);
    n = cli_verify_facts(&f, strict);
    atf_index_reader_close(&r);
    return n;
}

static int cli_verify_detail_file(const char *path, int strict) {
    atf_detail_reader r;
    cli_facts f;
    int n;
    if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) {
        cli_print_error(stdout, "", &r.error);
        return 1;
    }
    cli_facts_detail(&f, &r);
    n = cli_verify_facts(&f, strict);
    atf_detail_reader_close(&r);
    return n;
}

/* Each file of the directory, its gaps.atf, then the links between them in both
 * directions (an index event naming a detail record when there is no detail.atf is a
 * broken link too). */
int cli_verify_dir(const char *dir, int strict) {
    atf_thread_reader t;
    cli_facts f;
    char gaps[96] = "";
    int n = 0;
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) {
        cli_print_error(stdout, "", &t.error);
        return 1;
    }
    /* an open thread keeps one error only: a damaged gaps.atf. Reported, then cleared so
     * that a broken link below is reported as itself. */
    if (t.error.code != ATF_OK) {
        cli_print_error(stdout, "", &t.error);
        memset(&t.error, 0, sizeof t.error);
        n++;
    }
    if (t.gap_count)
        snprintf(gaps, sizeof gaps, "; %llu gap%s, %llu events lost", (cli_ull)t.gap_count,
                 t.gap_count == 1 ? "" : "s", (cli_ull)t.events_lost);
    cli_facts_index(&f, &t.index);
    n += cli_verify_facts(&f, strict);
    if (t.has_detail) {
        cli_facts_detail(&f, &t.detail);
        n += cli_verify_facts(&f, strict);
    }
    if (atf_thread_reader_verify_links(&t) != ATF_OK) {
        cli_print_error(stdout, "", &t.error);
        n++;
    } else if (n == 0) {
        if (t.has_detail)
            printf("OK %s (links ok both ways: %llu events, %llu detail records%s)\n", dir,
                   (cli_ull)t.index.event_count, (cli_ull)t.detail.event_count, gaps);
        else
            printf("OK %s (%llu events, no detail%s)\n", dir, (cli_ull)t.index.event_count,
                   gaps);
    }
    atf_thread_reader_close(&t);
    return n;
}

static int cli_verify_path(const char *path, int strict) {
    cli_kind kind;
    atf_error e;
    if (cli_classify(path, &kind, &e) != ATF_OK) {
        cli_print_error(stdout, "", &e);
        return 1;
    }
    switch (kind) {
    case CLI_KIND_INDEX: return cli_verify_index_file(path, strict);
    case CLI_KIND_DETAIL: return cli_verify_detail_file(path, strict);
    case CLI_KIND_DIR: return cli_verify_dir(path, strict);
    case CLI_KIND_SESSION: return cli_verify_session(path, strict);
    }
    return 1;
}

static int cli_cmd_verify(const cli_command *cmd, int argc, char **argv) {
    int strict = 0, nops = 0, i, rc, problems = 0, bad_paths = 0;
    const cli_flag flags[] = { { "--strict", &strict, CLI_OPT_FLAG, NULL } };
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    for (i = 1; i <= nops; i++) {
        int n = cli_verify_path(argv[i], strict);
        problems += n;
        bad_paths += n > 0;
    }
    if (problems == 0) return CLI_EXIT_OK;
    fflush(stdout);
    fprintf(stderr, "atf verify: %d problem%s in %d of %d PATH%s\n", problems,
            problems == 1 ? "" : "s", bad_paths, nops, nops == 1 ? "" : "s");
    return CLI_EXIT_DATA;
}

/* ==== help and main ================================================================== */
static int cli_cmd_help(const cli_command *cmd, int argc, char **argv) {
    const cli_command *topic;
    int nops = 0;
    int rc = cli_parse_args(cmd, argc, argv, NULL, 0, 0, 1, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (nops == 0) {
        cli_usage(stdout);
        return CLI_EXIT_OK;
    }
    topic = cli_find_command(argv[1]);
    if (!topic) {
        fprintf(stderr, "atf help: unknown command '%s'\n\n", argv[1]);
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    fputs(topic->usage, stdout);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv) {
    const cli_command *cmd;
    int status;
    setvbuf(stdout, cli_stdout_buffer, _IOFBF, sizeof cli_stdout_buffer);
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (cli_is_help(argv[1])) {
        cli_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("atf %d.%d.%d\n", ATF_VERSION_MAJOR, ATF_VERSION_MINOR, ATF_VERSION_PATCH);
        return CLI_EXIT_OK;
    }
    cmd = cli_find_command(argv[1]);
    if (!cmd) {
        fprintf(stderr, "atf: unknown command '%s'\n\n", argv[1]);
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    status = cmd->run(cmd, argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "atf: error writing to standard output: %s\n", strerror(errno));
        return CLI_EXIT_DATA;
    }
    return status;
}
