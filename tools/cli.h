/* cli.h - what the files of the atf command (the .c files of tools/) share: the command and option
 * types, argument parsing, error reporting, PATH kinds, the facts info and verify judge a
 * file by, hand-rolled output formatting and a minimal manifest.json scan.
 * SPDX-License-Identifier: MIT
 *
 * tools/atf.c compiles the library (ATF_IMPLEMENTATION) and holds the command table, the
 * helpers declared here and info/dump/verify of files and thread directories. The other
 * files each hold commands or the session side of a command:
 *   session_cmds.c   info, dump and verify of a session pid_* directory; manifest scan
 *   gen_cmd.c        gen: record a synthetic session through the session writer
 *   recover_cmd.c    recover: finalize files left by a crash in place
 *   ktrace_cmd.c     ktrace: Darwin ktrace v3 files, and their place on a session's clock
 * Exit status everywhere: 0 ok, 1 bad or damaged data, 2 usage error. */
#ifndef ATF_CLI_H
#define ATF_CLI_H

#include "atf.h"

#include <stdio.h>

#if defined(__GNUC__) || defined(__clang__)
#  define CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#  define CLI_PRINTF(fmt, args)
#endif

enum { CLI_EXIT_OK = 0, CLI_EXIT_DATA = 1, CLI_EXIT_USAGE = 2 };
enum { CLI_CONTINUE = -1 };         /* cli_parse_args: go on with the command */
enum { CLI_PATH_MAX = 4096, CLI_LINE_MAX = 1024 };
enum { CLI_LIST_MAX = 1024 };       /* values of one repeatable option */

typedef unsigned long long cli_ull; /* for printf's %llu / %llx */
typedef long long cli_ll;

/* ==== commands and options =========================================================== */
typedef struct cli_command cli_command;
struct cli_command {
    const char *name;
    int (*run)(const cli_command *cmd, int argc, char **argv); /* argv[0] is the name */
    const char *summary;            /* one line, for `atf --help` */
    const char *usage;              /* the whole text, for `atf NAME --help` */
};

/* What an option takes. A value is the next argument or follows '=' ("--from=5"). */
typedef enum cli_opt_kind {
    CLI_OPT_FLAG = 0,               /* no value */
    CLI_OPT_U64 = 1,                /* a decimal number into *(uint64_t *)arg */
    CLI_OPT_STR = 2,                /* the text into *(const char **)arg */
    CLI_OPT_U64_LIST = 3            /* repeatable: appended to *(cli_u64_list *)arg */
} cli_opt_kind;

typedef struct cli_u64_list {
    uint64_t items[CLI_LIST_MAX];
    size_t count;
} cli_u64_list;

typedef struct cli_flag {
    const char *name;               /* "--json" */
    int *value;                     /* set to 1 when given; may be NULL for value options */
    cli_opt_kind kind;              /* CLI_OPT_FLAG when left out */
    void *arg;                      /* where a value goes (see cli_opt_kind) */
} cli_flag;

/* Sets the options found in argv[1..argc-1] and packs the operands (every other argument,
 * and everything after "--") into argv[1..*nops], trailing slashes dropped. Returns
 * CLI_CONTINUE when the command should run, CLI_EXIT_OK after printing the usage for
 * --help, CLI_EXIT_USAGE after complaining on stderr about an unknown option, a missing
 * or malformed value or a wrong operand count (max_ops 0 is no limit). */
int cli_parse_args(const cli_command *cmd, int argc, char **argv, const cli_flag *flags,
                   size_t nflags, int min_ops, int max_ops, int *nops);
/* A decimal number with no sign, no spaces and no overflow: 1, else 0. */
int cli_parse_u64(const char *s, uint64_t *out);
/* "atf NAME: <text>" and the usage on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* The commands that live outside atf.c, with their usage texts. */
int cli_cmd_gen(const cli_command *cmd, int argc, char **argv);
int cli_cmd_recover(const cli_command *cmd, int argc, char **argv);
int cli_cmd_ktrace(const cli_command *cmd, int argc, char **argv);
extern const char cli_usage_gen[];
extern const char cli_usage_recover[];
extern const char cli_usage_ktrace[];

/* ==== errors and small helpers ======================================================= */
void cli_print_error(FILE *out, const char *prefix, const atf_error *e);
/* Reports a failure as "atf: <error line>" on stderr; returns CLI_EXIT_DATA. */
int cli_report(const atf_error *e);
void cli_error_init(atf_error *e, atf_result code, const char *path, uint64_t offset,
                    const char *what);
void cli_error_errno(atf_error *e, const char *path, const char *what, int sys_errno);
/* dir + "/" + name into buf; ATF_E_ARG (in *e) when it does not fit. */
atf_result cli_join(char *buf, size_t cap, const char *dir, const char *name, atf_error *e);
int cli_exists(const char *path);
int cli_is_dir(const char *path);
uint64_t cli_file_size(const char *path);

/* ==== PATH kinds ===================================================================== */
typedef enum cli_kind {
    CLI_KIND_INDEX,                 /* a file that is not a detail file */
    CLI_KIND_DETAIL,                /* a file starting with "ATD2" */
    CLI_KIND_DIR,                   /* a thread directory (or a directory of neither kind) */
    CLI_KIND_SESSION                /* a pid_* directory: manifest.json or thread_* inside,
                                       and no index.atf */
} cli_kind;

atf_result cli_classify(const char *path, cli_kind *kind, atf_error *e);
/* Calls fn(ctx, slot) for every thread_<N> subdirectory of dir; -1 when dir cannot be
 * read. */
int cli_scan_thread_dirs(const char *dir, void (*fn)(void *ctx, uint32_t slot), void *ctx);

/* ==== facts: what info and verify judge about one file, from either reader ========== */
typedef struct cli_facts {
    const char *path;               /* the reader's path */
    int is_detail;
    uint64_t count;                 /* events readable */
    uint64_t torn_bytes;
    uint64_t events_offset;
    uint64_t section_bytes;         /* events section up to the footer (or the end) */
    uint64_t file_size;
    uint64_t footer_offset;         /* where the footer is, or would be */
    uint64_t final_mark_offset;     /* header field that a clean close rewrites */
    uint64_t footer_count;          /* what the footer says, when there is one */
    uint64_t footer_bytes;
    atf_recovery recovery;
    atf_crc_state crc_state;
    uint32_t crc_expected, crc_found;
    atf_error crc_error;            /* the reader's error when crc_state is MISMATCH */
} cli_facts;

/* Fill *f from an open reader, verifying its CRC. */
void cli_facts_index(cli_facts *f, atf_index_reader *r);
void cli_facts_detail(cli_facts *f, atf_detail_reader *r);
const char *cli_recovery_text(const cli_facts *f);
const char *cli_crc_text(const cli_facts *f, char *buf, size_t cap);
/* Prints one line per problem of the file to `out`, each preceded by `prefix`, and
 * returns how many. Without `strict` a file left by a crash is no problem. */
int cli_problems(const cli_facts *f, int strict, FILE *out, const char *prefix);
/* verify of a thread directory (its files, its gaps.atf, the links): its lines on stdout;
 * returns the number of problems. */
int cli_verify_dir(const char *dir, int strict);

/* ==== output ========================================================================= */
size_t cli_digits(uint64_t v);
char *cli_put_str(char *p, const char *s);
char *cli_put_u64(char *p, uint64_t v);
char *cli_put_spaces(char *p, size_t n);
/* v right-aligned in `width` columns. */
char *cli_put_u64_right(char *p, uint64_t v, size_t width);
/* s right-aligned (right != 0) or left-aligned in `width` columns. */
char *cli_put_str_aligned(char *p, const char *s, size_t width, int right);
/* "0x" and 16 lowercase hex digits. */
char *cli_put_hex64(char *p, uint64_t v);
/* Ends the line at p and writes line[0..p) to stdout. */
void cli_emit(char *line, char *p);
size_t cli_max_size(size_t a, size_t b);
/* "key:" padded to a column, then the formatted value, on stdout. */
void cli_kv(const char *key, const char *fmt, ...) CLI_PRINTF(2, 3);
/* "N ns (S.NNNNNNNNN s)" of last - first, or a note when last < first. */
void cli_kv_duration(uint64_t first, uint64_t last);

/* ==== dump options, and the session side of info / dump / verify ===================== */
typedef struct cli_dump_opts {
    int json, detail;
    int has_from, has_to, has_limit, has_threads;
    uint64_t from_ns, to_ns, limit;
    cli_u64_list threads;           /* --thread SLOT, repeatable */
} cli_dump_opts;

int cli_info_session(const char *dir);
int cli_dump_session(const char *dir, const cli_dump_opts *o);
/* Returns the number of problems, like cli_verify_dir. */
int cli_verify_session(const char *dir, int strict);

/* ==== manifest.json, scanned ========================================================= */
/* The tool's own minimal reading of what the session reader does not expose (the state,
 * per-thread write counts, timing anchors). Text that is not JSON of the expected shape
 * leaves the fields unset, never a crash. */
typedef struct cli_manifest_thread {
    uint32_t id;
    int has_counts;                 /* events_written etc. were present */
    uint64_t events_written, events_dropped, detail_written, detail_dropped, events_lost_io;
    int finalized;
} cli_manifest_thread;

typedef struct cli_anchor {
    char name[64];
    uint64_t host_ns;
    double value, rate;
    uint64_t value_u64;             /* `value` exactly, when it is a whole number >= 0 */
    int value_is_u64;
} cli_anchor;

typedef struct cli_manifest {
    int present;                    /* the file was read */
    int parsed;                     /* its top level is a JSON object */
    char state[32];                 /* "closed", "recording", "" when absent */
    int has_threads;                /* it has a "threads" array (perhaps empty) */
    cli_manifest_thread *threads;
    size_t thread_count;
    cli_anchor *anchors;
    size_t anchor_count;
} cli_manifest;

/* Reads <dir>/manifest.json, or `dir` itself when it is a file. ATF_OK also when the file
 * is missing (present = 0) or not parseable (parsed = 0); an error only for I/O or memory. */
atf_result cli_manifest_load(cli_manifest *m, const char *dir, atf_error *e);
void cli_manifest_free(cli_manifest *m);
const cli_manifest_thread *cli_manifest_thread_of(const cli_manifest *m, uint32_t id);
const cli_anchor *cli_manifest_anchor(const cli_manifest *m, const char *name);

#endif /* ATF_CLI_H */
