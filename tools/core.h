/* core.h - the core of the atf command: what every command file of tools/ shares.
 * SPDX-License-Identifier: MIT
 *
 * The atf command is this core plus one file per command (or per family of commands
 * that share real logic), each registered in the one command table of main.c, which
 * also holds every summary and usage text (`atf --help`, `atf help NAME` and
 * `atf NAME --help` all print from it):
 *   core.h, core.c    arguments, exit codes, output (one buffer: text and JSON, the one
 *                     JSON string escaper), progress on a terminal, error lines, PATH
 *                     kinds and opening a trace with its damage reported
 *   main.c            the command table, help, main()
 *   demangle.h, demangle.c  C++ names demangled (full, short) and matched: the tree's
 *                     one demangler, which the tracer compiles in too
 *   symbolize.h, symbolize.c  functions named offline from their module files, through
 *                     elf_symbols.h: the tree's one reader of ELF symbols and their tie
 *                     rule, which the tracer compiles in too
 *   facts.h, facts.c  what info and verify judge about one file (recovery, CRC, footer)
 *   walk.h, walk.c    call/return pairing per thread, shared by stats, tree, export, diff
 *   profile.h, profile.c  per function and per call path figures from the walk, shared
 *                     by stats, export (folded stacks), diff and report
 *   info_cmd.c        info     dump_cmd.c    dump      verify_cmd.c  verify
 *   stats_cmd.c       stats    tree_cmd.c    tree      export_cmd.c  export
 *   diff_cmd.c        diff     pack_cmd.c    pack, unpack
 *   report_cmd.c      report (its page: report.html, compiled in as report_page.h,
 *                     which report_page.sh makes from it)
 *   gen_cmd.c         gen      recover_cmd.c recover   ktrace_cmd.c  ktrace
 *   record_cmd.c      record
 *   gen_model.h       what gen records (crash trials regenerate it)
 *   embed.h           all of the above in one translation unit, without main(), for
 *                     tests and benchmarks that run the commands in-process
 * A command file calls the core and the shared files, never another command's file.
 * The library's implementation is compiled once elsewhere; no file here defines
 * ATF_IMPLEMENTATION.
 *
 * Exit status everywhere: 0 ok, 1 bad or damaged data (or an output error), 2 usage
 * error. Messages go to stderr as "atf: PATH: offset N: what: result" (no offset where
 * none applies); a damaged thread of a session is named: "atf: thread_N: ...". */
#ifndef ATF_TOOLS_CORE_H
#define ATF_TOOLS_CORE_H

#include "atf.h"
#include "demangle.h"

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

/* Runs `atf argv[0] argv[1..]` (argv[0] a command, --help or --version) with its output
 * on out and its messages on err; returns the exit status. main.c. */
int cli_main(FILE *out, FILE *err, int argc, char **argv);

/* The commands, defined in their files and listed in main.c. */
int cli_cmd_info(const cli_command *cmd, int argc, char **argv);
int cli_cmd_dump(const cli_command *cmd, int argc, char **argv);
int cli_cmd_verify(const cli_command *cmd, int argc, char **argv);
int cli_cmd_stats(const cli_command *cmd, int argc, char **argv);
int cli_cmd_tree(const cli_command *cmd, int argc, char **argv);
int cli_cmd_export(const cli_command *cmd, int argc, char **argv);
int cli_cmd_gen(const cli_command *cmd, int argc, char **argv);
int cli_cmd_recover(const cli_command *cmd, int argc, char **argv);
int cli_cmd_ktrace(const cli_command *cmd, int argc, char **argv);
int cli_cmd_record(const cli_command *cmd, int argc, char **argv);
int cli_cmd_pack(const cli_command *cmd, int argc, char **argv);
int cli_cmd_unpack(const cli_command *cmd, int argc, char **argv);
int cli_cmd_diff(const cli_command *cmd, int argc, char **argv);
int cli_cmd_report(const cli_command *cmd, int argc, char **argv);

/* What an option takes. A value is the next argument or follows '=' ("--from=5"). */
typedef enum cli_opt_kind {
    CLI_OPT_FLAG = 0,               /* no value */
    CLI_OPT_U64 = 1,                /* a decimal number into *(uint64_t *)arg */
    CLI_OPT_STR = 2,                /* the text into *(const char **)arg */
    CLI_OPT_U64_LIST = 3,           /* repeatable: appended to *(cli_u64_list *)arg */
    CLI_OPT_STR_LIST = 4,           /* repeatable: appended to *(cli_str_list *)arg */
    CLI_OPT_SIZE = 5,               /* a size (cli_parse_size) into *(uint64_t *)arg */
    CLI_OPT_TIME = 6                /* a time (cli_parse_duration) into *(uint64_t *)arg */
} cli_opt_kind;

typedef struct cli_u64_list {
    uint64_t items[CLI_LIST_MAX];
    size_t count;
} cli_u64_list;

typedef struct cli_str_list {
    const char *items[CLI_LIST_MAX];
    size_t count;
} cli_str_list;

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
/* A size: bytes, or N[.F] followed by K, M or G (powers of 1024), case-sensitive: "512M",
 * "1.5G". A time: N[.F] followed by ns, us, ms, s or min: "500ms", "2min". Exact (no
 * floating point). NULL and *out set, else why not (a phrase after the value). */
const char *cli_parse_size(const char *s, uint64_t *bytes);
const char *cli_parse_duration(const char *s, uint64_t *ns);
/* "atf NAME: <text>" and the usage on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* The value of --layout: "1", "2" or "packed" (also "3", its version byte, as atf info
 * prints it) into *layout (ATF_LAYOUT_*); CLI_CONTINUE,
 * else CLI_EXIT_USAGE after saying so. */
int cli_parse_layout(const cli_command *cmd, const char *text, uint32_t *layout);
/* "1", "2" or "packed". */
const char *cli_layout_str(uint32_t layout);
int cli_is_help(const char *arg);

/* ==== output: one buffer for stdout, errors on stderr ================================ */
/* Every command writes its results through these calls into one large buffer (tens of
 * bytes per event: one fwrite per MiB beats stdio's per-call cost). The first write
 * error sticks; cli_io_end reports it. main() brackets a command with begin/end; tests
 * point them at files of their own. */
void cli_io_begin(FILE *out, FILE *err);
/* Flushes; CLI_EXIT_OK, or CLI_EXIT_DATA after saying on stderr that a write failed. */
int cli_io_end(void);
FILE *cli_err(void);
/* Sends what follows to f: 1 when what came before was written, else 0 with its errno
 * in *sys_errno (optional); the failure is then the caller's to report. */
int cli_out_switch(FILE *f, int *sys_errno);
/* Where the output goes now. */
FILE *cli_out_file(void);
/* Whether a write failed so far. */
int cli_out_failed(void);
void cli_write(const void *p, size_t n);
void cli_print(const char *s);
void cli_printf(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Room for n bytes (n <= 64 KiB): write them at the returned pointer, then commit the end. */
char *cli_reserve(size_t n);
void cli_commit(const char *end);
/* The n bytes at s as a quoted JSON string into dst (room for CLI_JSON_ROOM(n) bytes):
 * ", \ and control characters escaped, invalid UTF-8 bytes replaced by U+FFFD, so the
 * output is always valid JSON. The one JSON string escaper; returns the length. */
#define CLI_JSON_ROOM(n) ((n) * 6 + 2)
size_t cli_json_escape(const char *s, size_t n, char *dst);
/* s, escaped as above, to the output. */
void cli_json_str(const char *s);
/* s on a text line: control characters as \n, \t, \r or \xNN, invalid UTF-8 as U+FFFD. */
void cli_text(const char *s);
/* Copies s into dst as valid UTF-8 (invalid bytes become U+FFFD), stopping before a
 * sequence that would not fit in cap bytes. Returns the length (no NUL written). */
size_t cli_utf8_clean(const char *s, char *dst, size_t cap);

/* Hand-rolled formatting into a line buffer (each returns the end of what it wrote). */
size_t cli_digits(uint64_t v);
char *cli_put_str(char *p, const char *s);
char *cli_put_u64(char *p, uint64_t v);
char *cli_put_spaces(char *p, size_t n);
char *cli_put_u64_right(char *p, uint64_t v, size_t width);
/* s right-aligned (right != 0) or left-aligned in `width` columns. */
char *cli_put_str_aligned(char *p, const char *s, size_t width, int right);
/* "0x" and 16 lowercase hex digits. */
char *cli_put_hex64(char *p, uint64_t v);
/* Nanoseconds as microseconds with three decimals ("1234.567"), exactly. */
char *cli_put_us(char *p, uint64_t ns);
/* Ends the line at p and writes line[0..p) out. */
void cli_emit(char *line, char *p);
size_t cli_max_size(size_t a, size_t b);
/* "key:" padded to a column, then the formatted value. */
void cli_kv(const char *key, const char *fmt, ...) CLI_PRINTF(2, 3);
/* "N ns (S.NNNNNNNNN s)" of last - first, or a note when last < first. */
void cli_kv_duration(uint64_t first, uint64_t last);
/* A duration for people: "850ns", "12.345us", "1.500ms", "2.000s". */
const char *cli_fmt_dur(char *buf, size_t cap, uint64_t ns);
int cli_isatty(FILE *f);

/* ==== progress ======================================================================= */
/* A percentage on stderr for long work (a million events or more), only when stderr is a
 * terminal that is not also where the output goes: never in pipes, files or logs. */
typedef struct cli_progress {
    const char *what;
    uint64_t total, done, next, step;
    int on;
} cli_progress;

void cli_progress_init(cli_progress *p, const char *what, uint64_t total, FILE *out);
void cli_progress_show(cli_progress *p);
#define CLI_PROGRESS_TICK(p) do { if (++(p)->done >= (p)->next) cli_progress_show(p); } while (0)
void cli_progress_end(cli_progress *p);

/* ==== errors ========================================================================= */
/* e as one line: "PATH: offset N: what (expected, found): result", without the offset
 * when it means nothing (a missing path, an I/O or memory failure at no position, or an
 * offset of CLI_NO_OFFSET: a fact about a file as a whole). */
#define CLI_NO_OFFSET UINT64_MAX
char *cli_error_line(const atf_error *e, char *buf, size_t cap);
/* "atf: <error line>" on stderr; returns CLI_EXIT_DATA. */
int cli_report(const atf_error *e);
/* "atf: thread_N: <error line>" on stderr. */
void cli_report_thread(uint32_t slot, const atf_error *e);
/* The line (prefix first) on `out`, or on the output when out is NULL (verify prints its
 * problems there). */
void cli_print_error(FILE *out, const char *prefix, const atf_error *e);
void cli_error_init(atf_error *e, atf_result code, const char *path, uint64_t offset,
                    const char *what);
void cli_error_errno(atf_error *e, const char *path, const char *what, int sys_errno);
/* dir + "/" + name into buf; ATF_E_ARG (in *e) when it does not fit. */
atf_result cli_join(char *buf, size_t cap, const char *dir, const char *name, atf_error *e);
int cli_exists(const char *path);
int cli_is_dir(const char *path);
/* Makes the directory `path` and those above it that do not exist (mkdir -p): 0, or -1
 * with errno set. `made_from` (optional) receives the length of the shallowest one it
 * made (0: none), for cli_remove_made_dirs. */
int cli_make_dirs(const char *path, size_t *made_from);
/* Removes `path` and the directories above it down to the one of length `made_from`,
 * each only while it is empty: what cli_make_dirs made, when it went unused. */
void cli_remove_made_dirs(const char *path, size_t made_from);
int cli_is_file(const char *path);          /* a regular file */
uint64_t cli_file_size(const char *path);

/* ==== PATH kinds ===================================================================== */
typedef enum cli_kind {
    CLI_KIND_INDEX,                 /* a file that is none of the two below */
    CLI_KIND_DETAIL,                /* a file starting with "ATD2" */
    CLI_KIND_SIDE,                  /* a side file of a thread: gaps.atf ("ATG2") or
                                       pauses.atf ("ATP2") */
    CLI_KIND_THREAD,                /* a thread_N directory (or a directory of no kind) */
    CLI_KIND_PID,                   /* a pid_* directory: manifest.json or thread_* inside,
                                       and no index.atf */
    CLI_KIND_ROOT                   /* a session_* directory: pid_* directories inside */
} cli_kind;

/* The kind of PATH; on failure the error names PATH (missing: no offset). */
atf_result cli_classify(const char *path, cli_kind *kind, atf_error *e);
/* The directory part of path ("." when it has none). */
void cli_parent_dir(const char *path, char *buf, size_t cap);
/* path's directory ("." when none) and last name, each into cap bytes. */
void cli_split_path(const char *path, char *dir, char *base, size_t cap);
/* The pid_* subdirectories of a session_* directory, sorted by name, as joined paths
 * (free with cli_pid_dirs_free); -1 when dir cannot be read or out of memory. */
int cli_pid_dirs(const char *dir, char ***paths, size_t *count);
void cli_pid_dirs_free(char **paths, size_t count);
/* Runs fn on each pid_* directory of the session_* directory root (i counts from 0), in
 * cli_pid_dirs order; the first exit status that is not CLI_EXIT_OK, else CLI_EXIT_OK.
 * When root cannot be read, says so on stderr and returns that exit status. */
int cli_each_pid_dir(const char *root, int (*fn)(void *ctx, const char *pid_dir, size_t i),
                     void *ctx);
/* The path of the only pid_* directory of a session_* PATH into buf; when it has none or
 * several, says on stderr which to give instead and returns the exit status. */
int cli_pick_pid_dir(const cli_command *cmd, const char *path, char *buf, size_t cap);

/* ==== the view: the part of a trace a command shows ================================== */
/* The options that choose it, shared by stats, tree, export, dump and diff, parsed and
 * checked here once (main.c's CLI_VIEW_*_TEXT describe them to users):
 *   --from T, --to T  the window: only events with from <= timestamp <= to. T is ns on the
 *                     trace clock, as dump prints it, or "+" a decimal number and a unit
 *                     (s, ms, us, ns): that long after the trace's first event ("+1.5s",
 *                     "+200ms"); the first event of every thread of PATH counts, whatever
 *                     --thread picks, so "+1s" is the same instant with or without it
 *                     (export of every process of a session_* PATH: of every process,
 *                     through cli_view.has_start).
 *   --thread N        only thread_N; repeatable. A PATH that names one thread takes only
 *                     its own slot.
 *   --pid N           of a session_* PATH holding several pid_* directories, pid_N.
 *   --function F      only the calls of F and what they call: the subtrees rooted at its
 *                     calls (walk.h). F is a name (every function whose symbol, full or
 *                     short name it is: "work::eval" selects every overload of it) or an
 *                     id 0x...; repeatable.
 *   --demangle M      how C++ names read (demangle.h): full (the default), short (no
 *                     parameters nor template arguments: a template's instances are one
 *                     name, which stats, folded stacks and diff add up as one function),
 *                     none (the symbols as they are). Every command that parses a view
 *                     takes it.
 *   --clock C         times on clock C: trace (the default), wall (the manifest's anchor
 *                     "wall_clock_ns": ns since 1970, UTC) or any exact anchor's name, in
 *                     ns (an anchor in other units is read to the ns).
 * The trace seen is the whole trace cut to the window: what lies outside is not walked
 * (the merge seeks to the window by binary search; opening a session still reads every
 * timestamp once, in the library), and the walk's rules (walk.h) treat
 * the edges as the ends of the trace: a return whose call came before the window is a
 * return without a matching call, a call still open at its end is cut short at its
 * process's last event in it. A window outside the trace shows nothing (and is no error). */
enum {
    CLI_VIEW_WINDOW = 1u << 0,      /* --from, --to */
    CLI_VIEW_THREAD = 1u << 1,      /* --thread */
    CLI_VIEW_PID = 1u << 2,         /* --pid */
    CLI_VIEW_FUNCTION = 1u << 3,    /* --function */
    CLI_VIEW_CLOCK = 1u << 4        /* --clock */
};

typedef struct cli_view {
    const char *from, *to;          /* --from, --to as given; NULL: not given */
    int takes_pid;                  /* the command has --pid (set by the parser) */
    int has_pid;
    uint64_t pid;
    cli_u64_list threads;           /* --thread */
    cli_str_list functions;         /* --function */
    const char *clock;              /* --clock as given; NULL: not given */
    demangle_mode demangle;         /* --demangle */
    /* Set by a command that shows several processes of one session_* directory, each
     * opened on its own (export): */
    int has_start;                  /* "+T" counts from start_ns (the session's first
                                       event), not from PATH's first event */
    uint64_t start_ns;
    int functions_lenient;          /* --function: a name PATH does not know selects
                                       nothing of it instead of being a usage error (then
                                       fid_count may be 0: see cli_trace_names_function) */
} cli_view;

/* A window on the trace clock: from_ns <= ts <= to_ns (0 and UINT64_MAX when open). */
typedef struct cli_window {
    int has_from, has_to;
    uint64_t from_ns, to_ns;
} cli_window;

/* cli_parse_args with the options `takes` of a view (in *v, zeroed first) after the
 * command's own, for a command of one PATH (argv[1] afterwards). Checks what can be
 * checked without the trace (a time's form, --thread and --pid in range, no empty
 * name): CLI_CONTINUE, or the exit status after a usage message. */
int cli_parse_view_args(const cli_command *cmd, int argc, char **argv, const cli_flag *flags,
                        size_t nflags, cli_view *v, unsigned takes);
/* The same for a command of `ops` PATHs (argv[1..ops] afterwards), each seen through v. */
int cli_parse_view_ops(const cli_command *cmd, int argc, char **argv, const cli_flag *flags,
                       size_t nflags, cli_view *v, unsigned takes, int ops);
/* --from and --to of v against a trace whose first event is at start_ns: CLI_CONTINUE, or
 * CLI_EXIT_USAGE after saying why (a relative time past 2^64 ns, --from after --to). */
int cli_view_window(const cli_command *cmd, const cli_view *v, uint64_t start_ns, cli_window *w);
/* Whether ts lies in the window. */
int cli_window_has(const cli_window *w, uint64_t ts);

/* ==== a trace: any PATH but a lone detail or gaps file, as a session ================= */
/* A pid_* directory opens as itself; a session_* directory as its only pid_* directory
 * (or the one --pid names); a thread_N directory or its index.atf as that thread of its
 * session (names, thread names and drop counts still come from the parent's manifest when
 * it opens as a session), else as a session of that one thread. */
typedef struct cli_trace {
    atf_session_reader reader;
    const char *path;               /* as the user typed it */
    int only_one;                   /* PATH named one thread: slot */
    uint32_t slot;
    int slot_named;                 /*   by its thread_N directory (not a lone file) */
    uint64_t pid;                   /* from the pid_<N> directory name; 1 when unknown */
    int whole_session;              /* PATH was a pid_* or session_* directory */
    /* the view, resolved against the trace by cli_trace_open_view */
    cli_window window;              /* --from, --to on the trace clock */
    uint32_t *slots;                /* --thread: only these (slot_count); NULL: all */
    size_t slot_count;
    uint64_t *fids;                 /* --function: these ids, sorted (fid_count); NULL */
    size_t fid_count;
    int has_clock;                  /* --clock names an anchor: */
    int clock_is_wall;              /*   the wall clock */
    int clock_negative;             /*   on which the trace's first event reads < 0 */
    atf_session_anchor clock;       /*   the anchor, in ns (timescale 1e9) */
    uint64_t clock_shift;           /*   its reading minus the trace time (int64 bits) */
    int has_wall;                   /* the manifest has an exact wall_clock_ns anchor that */
    uint64_t wall_shift;            /*   reads every event: ns since 1970 minus the trace
                                       time (int64 bits); see cli_trace_wall */
    demangle_mode demangle;         /* how names read (--demangle) */
    char **shown;                   /* per symbol (reader.symbols' order): its name as
                                       shown, made on first use; NULL: not yet */
    uint64_t *alias;                /* per symbol: the smallest id of its shown name
                                       (cli_trace_by_name); NULL: not made */
} cli_trace;

/* Opens PATH; on failure (also when no thread of it opens) reports on stderr and returns
 * the exit status. */
int cli_trace_open(const cli_command *cmd, cli_trace *t, const char *path);
/* The same, then applies the view v (optional): --pid picks the pid_* directory, the rest
 * is resolved against the trace. Exit status 2 after a usage message when v names what
 * the trace lacks (a thread, a pid_* directory, a function, an anchor), 1 for a thread
 * that is there but damaged; the trace is closed then. */
int cli_trace_open_view(const cli_command *cmd, cli_trace *t, const char *path,
                        const cli_view *v);
void cli_trace_close(cli_trace *t);
/* Whether slot is in the selection: the thread PATH names, and --thread. */
int cli_trace_wanted(const cli_trace *t, uint32_t slot);
/* Whether thread i takes part: present, and wanted. */
int cli_trace_selected(const cli_trace *t, size_t i);
/* The merge filter of the trace: the wanted threads and the window. (The merge reads
 * to_ns 0 as no bound: a reader of the window --to 0 stops after window.to_ns itself.) */
void cli_trace_filter(const cli_trace *t, atf_merge_filter *f);
/* The events of the selected threads in the window; of thread i alone. */
uint64_t cli_trace_events(cli_trace *t);
uint64_t cli_trace_thread_events(cli_trace *t, size_t i);
/* Whether fid is one of --function's. */
int cli_trace_focus(const cli_trace *t, uint64_t fid);
/* Whether --function F selects anything of t: a name its manifest gives, or an id 0x.... */
int cli_trace_names_function(const cli_trace *t, const char *f);
/* The time of t's first event: of every thread of PATH that opened, whatever --thread
 * picks (0 when none has events). What "+T" counts from (unless cli_view.has_start). */
uint64_t cli_trace_start(const cli_trace *t);
/* cli_warn_damage for the wanted threads of t, a file left by a crash (not finalized,
 * torn bytes) counted as damage whatever PATH was: a session_* or pid_* directory, a
 * thread_N directory or one of its files. A thread PATH names by no thread_N (a lone
 * file, a directory of another name) is named by its file alone ("atf: FILE: ..."). */
size_t cli_trace_warn_damage(const cli_trace *t);
/* The same rule for a lone detail file: 1 with *e set (the file, the byte offset) when
 * its CRC was found not to match, its footer disagrees, it has torn bytes or it was not
 * finalized; else 0. */
int cli_detail_damage(const atf_detail_reader *r, atf_error *e);

/* ==== times on the view's clock (--clock) ============================================ */
/* A trace-clock time ts on the clock of t (NULL: the trace clock): ts itself, or the
 * anchored clock's reading in ns, an int64 given as its bits. */
uint64_t cli_trace_time(const cli_trace *t, uint64_t ts);
/* A trace-clock time ts on the wall clock, whatever --clock says: ns since 1970 (UTC), from
 * the process's first exact "wall_clock_ns" anchor (read to the ns, as --clock wall
 * reads it), into *wall: 1; 0 when the trace has no such anchor, or one whose readings
 * of its events do not fit an int64. */
int cli_trace_wall(const cli_trace *t, uint64_t ts, int64_t *wall);
/* ts on that clock in decimal ns: unsigned on the trace clock, signed on an anchor's. */
char *cli_put_time(char *p, const cli_trace *t, uint64_t ts);
/* The same in microseconds with three decimals ("-12.345"), exactly. */
char *cli_put_time_us(char *p, const cli_trace *t, uint64_t ts);
/* For people: on the wall clock ISO 8601 UTC to the ns ("2025-01-31T12:34:56.123456789Z"),
 * else as cli_put_time. At most CLI_TIME_TEXT_MAX bytes. */
enum { CLI_TIME_TEXT_MAX = 40 };
char *cli_put_time_text(char *p, const cli_trace *t, uint64_t ts);
/* The function's name as --demangle says (the manifest's symbol demangled in full by
 * default), or its id as 0x%016llx (into hex[19+]). Valid while t is open. */
const char *cli_trace_name(const cli_trace *t, uint64_t fid, char *hex, size_t cap);
/* The function's symbol as the manifest has it (mangled), or NULL when it has none. */
const char *cli_trace_symbol(const cli_trace *t, uint64_t fid);
/* Prepares cli_trace_alias: 1 when some functions of t share their shown name (template
 * instances under --demangle short), 0 when none do (or out of memory: then each id
 * stands for itself). */
int cli_trace_by_name(cli_trace *t);
/* The id that stands for fid's shown name: the smallest id of that name once
 * cli_trace_by_name said 1, else fid itself. */
uint64_t cli_trace_alias(const cli_trace *t, uint64_t fid);
/* The OS thread id of a thread, or its slot when the files do not say. */
uint32_t cli_thread_tid(const atf_session_thread *t);
/* A thread as the exports name it: its name, else "thread_<slot>" (into buf; returns buf). */
const char *cli_thread_name(const atf_session_thread *t, char *buf, size_t cap);
/* The process's pid: the manifest's, else the one its pid_N directory is named after (1
 * when neither says). */
uint64_t cli_trace_pid(const cli_trace *t);

/* How many threads of r opened (a session opens on its manifest alone). */
size_t cli_opened_threads(const atf_session_reader *r);
/* The manifest's state for people: "ok (state closed)", "missing", ... */
const char *cli_manifest_text(const atf_session_reader *r, char *buf, size_t cap);
/* 1 with *e set (manifest.json, the byte offset where reading stopped, what) when the
 * session's manifest.json is unreadable; else 0. */
int cli_manifest_problem(const atf_session_reader *r, atf_error *e);

/* Checks that --thread SLOT names a thread of r that opened: CLI_CONTINUE, else says
 * "atf NAME: PATH has no thread_N" (CLI_EXIT_USAGE) or reports its damage (CLI_EXIT_DATA). */
int cli_check_slot(const cli_command *cmd, const char *path, const atf_session_reader *r,
                   uint64_t slot);

/* The damage of one thread of a session: 1 with *e set (its file and byte offset) when
 * it is listed but missing, cannot be opened, has a damaged gaps.atf, a footer that
 * disagrees or a CRC found not to match, or (crash_left) a file that was not finalized or
 * has torn bytes; else 0. */
int cli_thread_damage(const atf_session_reader *r, const atf_session_thread *t, int crash_left,
                      atf_error *e);
/* Warns on stderr about an unreadable manifest.json ("atf: ...manifest.json: offset N: ...")
 * and every damaged thread of r ("atf: thread_N: ..."), only the one slot when only_one;
 * returns how many. */
size_t cli_warn_damage(const atf_session_reader *r, int only_one, uint32_t slot, int crash_left);
/* Whether a trace is a whole session (a pid_* or session_* PATH), not one thread. */
int cli_trace_is_session(const cli_trace *t);

#endif /* ATF_TOOLS_CORE_H */
