/* core.c - the core of the atf command (see core.h): arguments, output, progress, error
 * lines, PATH kinds and opening a trace with its damage reported.
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "symbolize.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(_WIN32)
#  include <direct.h>
#  include <io.h>
#  define cli_mkdir1(path) _mkdir(path)
#  define cli_rmdir1(path) _rmdir(path)
#  define cli_isatty_fd(fd) _isatty(fd)
#  define cli_fileno(f) _fileno(f)
#  if !defined(S_ISDIR)
#    define S_ISDIR(m) (((m) & _S_IFMT) == _S_IFDIR)
#  endif
#  if !defined(S_ISREG)
#    define S_ISREG(m) (((m) & _S_IFMT) == _S_IFREG)
#  endif
#else
#  include <dirent.h>
#  include <unistd.h>
#  define cli_mkdir1(path) mkdir(path, 0777)
#  define cli_rmdir1(path) rmdir(path)
#  define cli_isatty_fd(fd) isatty(fd)
#  define cli_fileno(f) fileno(f)
#endif

/* ==== arguments ====================================================================== */
int cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

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

/* A quantity: N[.F] and a unit from `units` (the empty name: a plain number of the base
 * unit), converted exactly (no floating point). NULL when s is one, else why not. */
typedef struct cli_unit {
    const char *name;
    uint64_t scale;                 /* base units per unit */
} cli_unit;

static const char *cli_parse_quantity(const char *s, const cli_unit *units, size_t nunits,
                                      uint64_t *out) {
    uint64_t whole = 0, frac = 0, denom = 1;
    size_t u;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits = 1) {
        if (whole > (UINT64_MAX - 9) / 10) return "is too large";
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, digits = 1) {
            if (denom >= 1000000000u) return "has too many decimals";
            frac = frac * 10 + (uint64_t)(*s - '0');
            denom *= 10;
        }
    if (!digits) return "is not a number";
    for (u = 0; u < nunits; u++)
        if (strcmp(s, units[u].name) == 0) break;
    if (u == nunits) return "has an unknown unit";
    if (frac > UINT64_MAX / units[u].scale) return "is too large";
    frac *= units[u].scale;
    if (frac % denom != 0) return "is finer than the smallest unit";
    frac /= denom;
    if (whole > (UINT64_MAX - frac) / units[u].scale) return "is too large";
    *out = whole * units[u].scale + frac;
    return NULL;
}

static const cli_unit cli_size_units[] = {
    { "", 1 }, { "K", (uint64_t)1 << 10 }, { "M", (uint64_t)1 << 20 }, { "G", (uint64_t)1 << 30 },
};
static const cli_unit cli_time_units[] = {
    { "ns", 1 }, { "us", 1000u }, { "ms", 1000000u }, { "s", 1000000000u },
    { "min", (uint64_t)60 * 1000000000u },
};

const char *cli_parse_size(const char *s, uint64_t *bytes) {
    return cli_parse_quantity(s, cli_size_units, sizeof cli_size_units / sizeof cli_size_units[0],
                              bytes)
               ? "is not a size (bytes, or a number with K, M or G: \"512M\", \"1.5G\")"
               : NULL;
}

const char *cli_parse_duration(const char *s, uint64_t *ns) {
    return cli_parse_quantity(s, cli_time_units, sizeof cli_time_units / sizeof cli_time_units[0],
                              ns)
               ? "is not a time (a number with ns, us, ms, s or min: \"500ms\", \"1.5s\")"
               : NULL;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(cli_err(), "atf %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(cli_err(), fmt, ap);
    va_end(ap);
    fprintf(cli_err(), "\n\n%s", cmd->usage);
    return CLI_EXIT_USAGE;
}

int cli_parse_layout(const cli_command *cmd, const char *text, uint32_t *layout) {
    if (strcmp(text, "1") == 0) *layout = ATF_LAYOUT_1;
    else if (strcmp(text, "2") == 0) *layout = ATF_LAYOUT_2;
    else if (strcmp(text, "packed") == 0 || strcmp(text, "3") == 0) *layout = ATF_LAYOUT_PACKED;
    else return cli_usage_error(cmd, "--layout: '%s' is not packed, 1 or 2", text);
    return CLI_CONTINUE;
}

const char *cli_layout_str(uint32_t layout) {
    return layout == ATF_LAYOUT_PACKED ? "packed" : layout == ATF_LAYOUT_2 ? "2" : "1";
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
    case CLI_OPT_SIZE:
    case CLI_OPT_TIME: {
        const char *why = f->kind == CLI_OPT_SIZE ? cli_parse_size(value, (uint64_t *)f->arg)
                                                  : cli_parse_duration(value, (uint64_t *)f->arg);
        return why ? cli_usage_error(cmd, "%s: '%s' %s", f->name, value, why) : CLI_CONTINUE;
    }
    case CLI_OPT_STR_LIST: {
        cli_str_list *l = (cli_str_list *)f->arg;
        if (l->count == CLI_LIST_MAX)
            return cli_usage_error(cmd, "%s given more than %d times", f->name, CLI_LIST_MAX);
        l->items[l->count++] = value;
        return CLI_CONTINUE;
    }
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
            cli_print(cmd->usage);
            return CLI_EXIT_OK;
        }
        eq = strchr(a, '=');
        name_len = eq ? (size_t)(eq - a) : strlen(a);
        for (f = 0; f < nflags; f++)
            if (strlen(flags[f].name) == name_len && strncmp(a, flags[f].name, name_len) == 0)
                break;
        if (f == nflags || (eq && flags[f].kind == CLI_OPT_FLAG)) {
            fprintf(cli_err(), "atf %s: unknown option '%s'\n\n%s", cmd->name, a, cmd->usage);
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
        fprintf(cli_err(), "atf %s: %s\n\n%s", cmd->name,
                n < min_ops ? "missing PATH" : "too many PATHs", cmd->usage);
        return CLI_EXIT_USAGE;
    }
    *nops = n;
    return CLI_CONTINUE;
}

/* ==== the view's options ============================================================= */
/* A time of --from / --to: plain ns on the trace clock, or "+N[.F]UNIT" after the trace's
 * first event, converted exactly (no floating point). NULL when s is one, else why not. */
static const char *cli_parse_time(const char *s, int *relative, uint64_t *ns) {
    *relative = s[0] == '+';
    if (!*relative)
        return cli_parse_u64(s, ns) ? NULL
                                    : "is not a number (ns on the trace clock) nor +N with a "
                                      "unit (ns, us, ms, s, min)";
    return cli_parse_duration(s + 1, ns) ? "needs a unit: +N followed by ns, us, ms, s or min "
                                           "(\"+1.5s\", \"+200ms\")"
                                         : NULL;
}

/* Checks the form of a time option's value: CLI_CONTINUE or the usage error's status. */
static int cli_check_time(const cli_command *cmd, const char *name, const char *value) {
    int relative;
    uint64_t ns;
    const char *why = value ? cli_parse_time(value, &relative, &ns) : NULL;
    return why ? cli_usage_error(cmd, "%s: '%s' %s", name, value, why) : CLI_CONTINUE;
}

/* Whether s is "0x" and 1 to 16 hex digits: the id into *id. */
static int cli_parse_hex_id(const char *s, uint64_t *id) {
    uint64_t v = 0;
    size_t n = 0;
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return 0;
    for (s += 2; *s; s++, n++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0'
              : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
              : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
        if (d < 0 || n == 16) return 0;
        v = v << 4 | (uint64_t)d;
    }
    *id = v;
    return n > 0;
}

int cli_parse_view_args(const cli_command *cmd, int argc, char **argv, const cli_flag *flags,
                        size_t nflags, cli_view *v, unsigned takes) {
    return cli_parse_view_ops(cmd, argc, argv, flags, nflags, v, takes, 1);
}

int cli_parse_view_ops(const cli_command *cmd, int argc, char **argv, const cli_flag *flags,
                       size_t nflags, cli_view *v, unsigned takes, int ops) {
    enum { CLI_OWN_FLAGS_MAX = 24 }; /* a command has a handful; more are not seen */
    cli_flag all[CLI_OWN_FLAGS_MAX + 7];
    const char *demangle = NULL;
    size_t n = 0, i;
    int nops = 0, status;
    memset(v, 0, sizeof *v);
    for (i = 0; i < nflags && i < CLI_OWN_FLAGS_MAX; i++) all[n++] = flags[i];
    if (takes & CLI_VIEW_WINDOW) {
        cli_flag from = { "--from", NULL, CLI_OPT_STR, &v->from };
        cli_flag to = { "--to", NULL, CLI_OPT_STR, &v->to };
        all[n++] = from;
        all[n++] = to;
    }
    if (takes & CLI_VIEW_THREAD) {
        cli_flag f = { "--thread", NULL, CLI_OPT_U64_LIST, &v->threads };
        all[n++] = f;
    }
    if (takes & CLI_VIEW_PID) {
        cli_flag f = { "--pid", &v->has_pid, CLI_OPT_U64, &v->pid };
        all[n++] = f;
        v->takes_pid = 1;
    }
    if (takes & CLI_VIEW_FUNCTION) {
        cli_flag f = { "--function", NULL, CLI_OPT_STR_LIST, &v->functions };
        all[n++] = f;
    }
    if (takes & CLI_VIEW_CLOCK) {
        cli_flag f = { "--clock", NULL, CLI_OPT_STR, &v->clock };
        all[n++] = f;
    }
    {
        cli_flag f = { "--demangle", NULL, CLI_OPT_STR, &demangle };
        all[n++] = f;
    }
    status = cli_parse_args(cmd, argc, argv, all, n, ops, ops, &nops);
    if (status != CLI_CONTINUE) return status;
    if (demangle && !demangle_parse_mode(demangle, &v->demangle))
        return cli_usage_error(cmd, "--demangle: '%s' is none of full, short, none", demangle);
    if ((status = cli_check_time(cmd, "--from", v->from)) != CLI_CONTINUE ||
        (status = cli_check_time(cmd, "--to", v->to)) != CLI_CONTINUE)
        return status;
    for (i = 0; i < v->threads.count; i++)
        if (v->threads.items[i] > UINT32_MAX)
            return cli_usage_error(cmd, "--thread: %llu is not a thread slot",
                                   (cli_ull)v->threads.items[i]);
    if (v->has_pid && v->pid > UINT32_MAX)
        return cli_usage_error(cmd, "--pid: %llu is not a process id", (cli_ull)v->pid);
    for (i = 0; i < v->functions.count; i++)
        if (!v->functions.items[i][0]) return cli_usage_error(cmd, "--function needs a name");
    if (v->clock && !v->clock[0]) return cli_usage_error(cmd, "--clock needs a clock's name");
    return CLI_CONTINUE;
}

/* One end of the window: `text` as given (NULL: open), relative to start_ns when "+...". */
static int cli_view_bound(const cli_command *cmd, const char *name, const char *text,
                          uint64_t start_ns, uint64_t *ns, int *has) {
    int relative;
    uint64_t t;
    if (!text) return CLI_CONTINUE;
    if (cli_parse_time(text, &relative, &t) != NULL) /* cli_parse_view_args checked it */
        return cli_usage_error(cmd, "%s: '%s' is not a time", name, text);
    if (relative && t > UINT64_MAX - start_ns)
        return cli_usage_error(cmd, "%s: '%s' is past the end of time", name, text);
    *ns = relative ? start_ns + t : t;
    *has = 1;
    return CLI_CONTINUE;
}

int cli_view_window(const cli_command *cmd, const cli_view *v, uint64_t start_ns, cli_window *w) {
    int status;
    memset(w, 0, sizeof *w);
    w->to_ns = UINT64_MAX;
    if ((status = cli_view_bound(cmd, "--from", v->from, start_ns, &w->from_ns,
                                 &w->has_from)) != CLI_CONTINUE ||
        (status = cli_view_bound(cmd, "--to", v->to, start_ns, &w->to_ns, &w->has_to)) !=
            CLI_CONTINUE)
        return status;
    if (w->from_ns > w->to_ns)
        return cli_usage_error(cmd, "--from (%llu ns) is after --to (%llu ns)",
                               (cli_ull)w->from_ns, (cli_ull)w->to_ns);
    return CLI_CONTINUE;
}

int cli_window_has(const cli_window *w, uint64_t ts) {
    return ts >= w->from_ns && ts <= w->to_ns;
}

/* ==== errors and small helpers ======================================================= */
/* Errors that name a place in a file carry its offset; a missing path, an argument or an
 * out-of-memory error, an I/O failure at offset 0 with an errno, and a fact about a whole
 * file (CLI_NO_OFFSET) name none. */
static int cli_error_has_offset(const atf_error *e) {
    if (e->offset == CLI_NO_OFFSET) return 0;
    switch (e->code) {
    case ATF_E_NOT_FOUND:
    case ATF_E_ARG:
    case ATF_E_NOMEM:
        return 0;
    case ATF_E_IO:
        return e->offset != 0 || e->sys_errno == 0;
    default:
        return 1;
    }
}

char *cli_error_line(const atf_error *e, char *buf, size_t cap) {
    char values[96] = "", sys[96] = "", offset[40] = "";
    const char *what = e->what ? e->what : "";
    if (cap == 0) return buf;
    if (e->has_values)
        snprintf(values, sizeof values, " (expected %llu [0x%llx], found %llu [0x%llx])",
                 (cli_ull)e->expected, (cli_ull)e->expected, (cli_ull)e->found,
                 (cli_ull)e->found);
    if (e->sys_errno && !(e->code == ATF_E_NOT_FOUND && e->sys_errno == ENOENT))
        snprintf(sys, sizeof sys, " (errno %d: %s)", e->sys_errno, strerror(e->sys_errno));
    if (cli_error_has_offset(e))
        snprintf(offset, sizeof offset, "offset %llu: ", (cli_ull)e->offset);
    if (!what[0] && !values[0] && !sys[0])
        snprintf(buf, cap, "%s: %s%s", e->path[0] ? e->path : "-", offset,
                 atf_result_str(e->code));
    else
        snprintf(buf, cap, "%s: %s%s%s%s: %s", e->path[0] ? e->path : "-", offset, what, values,
                 sys, atf_result_str(e->code));
    return buf;
}

void cli_print_error(FILE *out, const char *prefix, const atf_error *e) {
    char line[CLI_LINE_MAX + 600];
    cli_error_line(e, line, sizeof line);
    if (out) fprintf(out, "%s%s\n", prefix, line);
    else cli_printf("%s%s\n", prefix, line);
}

int cli_report(const atf_error *e) {
    cli_print_error(cli_err(), "atf: ", e);
    return CLI_EXIT_DATA;
}

void cli_report_thread(uint32_t slot, const atf_error *e) {
    char prefix[40];
    snprintf(prefix, sizeof prefix, "atf: thread_%u: ", slot);
    cli_print_error(cli_err(), prefix, e);
}

void cli_error_init(atf_error *e, atf_result code, const char *path, uint64_t offset,
                    const char *what) {
    size_t n = strlen(path);
    memset(e, 0, sizeof *e);
    e->code = code;
    if (n >= sizeof e->path) n = sizeof e->path - 1; /* a longer path is cut */
    memcpy(e->path, path, n);
    e->path[n] = '\0';
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

static int cli_is_sep(char c) { return c == '/' || c == '\\'; }

/* Cuts the path of length n in buf (trailing separators ignored) to its parent
 * directory; the parent's length. */
static size_t cli_parent_of(char *buf, size_t n) {
    while (n > 0 && cli_is_sep(buf[n - 1])) n--;
    while (n > 0 && !cli_is_sep(buf[n - 1])) n--;
    while (n > 0 && cli_is_sep(buf[n - 1])) n--;
    buf[n] = '\0';
    return n;
}

int cli_make_dirs(const char *path, size_t *made_from) {
    char buf[CLI_PATH_MAX];
    size_t i, n = strlen(path), first = 0;
    if (made_from) *made_from = 0;
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++) {
        if (!cli_is_sep(buf[i]) && buf[i] != '\0') continue;
        if (cli_is_sep(buf[i - 1])) continue; /* no name: "a//b", "a/" */
        buf[i] = '\0';
        /* "C:" names a drive; only what lies below the last directory there counts as
         * made ("new/../old/x" made x, not old) */
        if (buf[i - 1] == ':' || cli_is_dir(buf)) {
            first = 0;
        } else if (cli_mkdir1(buf) == 0) {
            if (!first) first = i;
        } else {
            int why = errno;
            if (!cli_is_dir(buf)) { /* (made meanwhile by another process: fine) */
                cli_parent_of(buf, i);
                cli_remove_made_dirs(buf, first);
                errno = why;
                return -1;
            }
            first = 0;
        }
        buf[i] = path[i];
    }
    if (made_from) *made_from = first;
    return 0;
}

void cli_remove_made_dirs(const char *path, size_t made_from) {
    char buf[CLI_PATH_MAX];
    size_t n;
    if (!path || !made_from || (n = strlen(path)) >= sizeof buf) return;
    memcpy(buf, path, n + 1);
    /* the deepest first; each only if empty, up to the shallowest one made */
    while (n >= made_from && cli_rmdir1(buf) == 0) n = cli_parent_of(buf, n);
}

int cli_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

uint64_t cli_file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* ==== PATH kinds ===================================================================== */
static void cli_count_slot(void *ctx, uint32_t slot) {
    (void)slot;
    ++*(size_t *)ctx;
}

/* Whether `name` is prefix followed by decimal digits only (at most UINT32_MAX). */
static int cli_name_number(const char *name, const char *prefix, uint64_t *v) {
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 && cli_parse_u64(name + n, v) && *v <= UINT32_MAX;
}

/* A process directory's name: pid_<pid>, or pid_<pid>_<K> (the same pid recorded again
 * after an exec); its pid into *pid. */
static int cli_pid_dir_name(const char *name, uint64_t *pid) {
    char head[32];
    const char *second;
    uint64_t k;
    if (strncmp(name, "pid_", 4) != 0) return 0;
    second = strchr(name + 4, '_');
    if (!second) return cli_name_number(name, "pid_", pid);
    if ((size_t)(second - name) >= sizeof head || !cli_parse_u64(second + 1, &k)) return 0;
    memcpy(head, name, (size_t)(second - name));
    head[second - name] = '\0';
    return cli_name_number(head, "pid_", pid);
}

static int cli_path_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cli_pid_dirs_free(char **paths, size_t count) {
    size_t i;
    for (i = 0; i < count; i++) free(paths[i]);
    free(paths);
}

int cli_pid_dirs(const char *dir, char ***paths, size_t *count) {
    char **list = NULL;
    size_t n = 0, cap = 0;
#if !defined(_WIN32)
    DIR *d = opendir(dir);
    struct dirent *ent;
    if (!d) return -1;
    while ((ent = readdir(d)) != NULL) {
        char path[CLI_PATH_MAX];
        uint64_t pid;
        if (!cli_pid_dir_name(ent->d_name, &pid)) continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, ent->d_name) >= (int)sizeof path ||
            !cli_is_dir(path))
            continue;
        if (n == cap) {
            char **more = (char **)realloc(list, (cap = cap ? cap * 2 : 8) * sizeof *list);
            if (!more) break;
            list = more;
        }
        if ((list[n] = (char *)malloc(strlen(path) + 1)) == NULL) break;
        memcpy(list[n++], path, strlen(path) + 1);
    }
    closedir(d);
    if (ent != NULL) {
        cli_pid_dirs_free(list, n);
        return -1;
    }
#else
    (void)dir, (void)cap;
#endif
    if (n) qsort(list, n, sizeof *list, cli_path_cmp);
    *paths = list;
    *count = n;
    return 0;
}

int cli_each_pid_dir(const char *root, int (*fn)(void *ctx, const char *pid_dir, size_t i),
                     void *ctx) {
    char **pids = NULL;
    size_t n = 0, i;
    int status = CLI_EXIT_OK;
    if (cli_pid_dirs(root, &pids, &n) != 0) {
        atf_error e;
        cli_error_errno(&e, root, "read directory", 0);
        return cli_report(&e);
    }
    for (i = 0; i < n; i++) {
        int s = fn(ctx, pids[i], i);
        if (status == CLI_EXIT_OK) status = s; /* the first failure decides */
    }
    cli_pid_dirs_free(pids, n);
    return status;
}

/* Whether the last component of path is pid_<pid> (or pid_<pid>_<K>). */
static int cli_is_pid_dir_of(const char *path, uint64_t pid) {
    const char *base = strrchr(path, '/');
    uint64_t v;
    return cli_pid_dir_name(base ? base + 1 : path, &v) && v == pid;
}

/* cli_pick_pid_dir, or the pid_* directory of process *pid when pid is not NULL;
 * `pid_option`: the command has --pid, which the message then offers. */
static int cli_pick_pid(const cli_command *cmd, const char *path, const uint64_t *pid,
                        int pid_option, char *buf, size_t cap) {
    char **pids = NULL;
    size_t n = 0, i;
    if (cli_pid_dirs(path, &pids, &n) != 0) {
        atf_error e;
        cli_error_errno(&e, path, "read directory", errno);
        return cli_report(&e);
    }
    for (i = 0; i < n; i++) {
        if (pid ? !cli_is_pid_dir_of(pids[i], *pid) : n != 1) continue;
        snprintf(buf, cap, "%s", pids[i]);
        cli_pid_dirs_free(pids, n);
        return CLI_EXIT_OK;
    }
    if (pid)
        fprintf(cli_err(), "atf %s: %s has no pid_%llu: give --pid with one of\n", cmd->name,
                path, (cli_ull)*pid);
    else
        fprintf(cli_err(), "atf %s: %s is a session_* directory of %llu processes: give one "
                           "of%s\n", cmd->name, path, (cli_ull)n,
                pid_option ? " (or --pid N)" : "");
    for (i = 0; i < n; i++) fprintf(cli_err(), "  %s\n", pids[i]);
    cli_pid_dirs_free(pids, n);
    return CLI_EXIT_USAGE;
}

int cli_pick_pid_dir(const cli_command *cmd, const char *path, char *buf, size_t cap) {
    return cli_pick_pid(cmd, path, NULL, 0, buf, cap);
}

/* A directory holding index.atf is a thread directory; one holding manifest.json or
 * thread_* directories is a pid_* directory; one holding pid_* directories is a session_*
 * directory; any other directory is taken for a thread directory, so that the reader says
 * what is missing. A file is told by its magic; one of no known magic is taken for an
 * index file, so that the index reader says what is wrong with it. */
atf_result cli_classify(const char *path, cli_kind *kind, atf_error *e) {
    struct stat st;
    unsigned char magic[4];
    char sub[CLI_PATH_MAX];
    char **pids = NULL;
    size_t got, threads = 0, npids = 0;
    FILE *f;
    if (stat(path, &st) != 0) {
        cli_error_errno(e, path, errno == ENOENT ? NULL : "stat", errno);
        return e->code;
    }
    if (S_ISDIR(st.st_mode)) {
        *kind = CLI_KIND_THREAD;
        if (cli_join(sub, sizeof sub, path, "index.atf", e) != ATF_OK) return e->code;
        if (cli_exists(sub)) return ATF_OK;
        if (cli_join(sub, sizeof sub, path, "manifest.json", e) != ATF_OK) return e->code;
        if (cli_exists(sub) ||
            (atf_session_scan_threads(path, cli_count_slot, &threads) == 0 && threads > 0))
            *kind = CLI_KIND_PID;
        else if (cli_pid_dirs(path, &pids, &npids) == 0 && npids > 0)
            *kind = CLI_KIND_ROOT;
        cli_pid_dirs_free(pids, npids);
        return ATF_OK;
    }
    f = fopen(path, "rb");
    if (!f) {
        cli_error_errno(e, path, errno == ENOENT ? NULL : "open", errno);
        return e->code;
    }
    got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    *kind = CLI_KIND_INDEX;
    if (got == sizeof magic && memcmp(magic, ATF_DETAIL_MAGIC, 4) == 0) *kind = CLI_KIND_DETAIL;
    if (got == sizeof magic &&
        (memcmp(magic, ATF_GAPS_MAGIC, 4) == 0 || memcmp(magic, ATF_PAUSES_MAGIC, 4) == 0))
        *kind = CLI_KIND_SIDE;
    return ATF_OK;
}

/* ==== output ========================================================================= */
enum { CLI_OUT_BUFFER = 1 << 20 };

/* The one output of the command: a buffer over a FILE, and where errors go. */
static struct {
    FILE *f, *err;
    char buf[CLI_OUT_BUFFER];
    size_t len;
    int failed;                     /* a write failed */
    int sys_errno;                  /* its errno */
} cli_io;

void cli_io_begin(FILE *out, FILE *err) {
    cli_io.f = out;
    cli_io.err = err;
    cli_io.len = 0;
    cli_io.failed = 0;
    cli_io.sys_errno = 0;
}

FILE *cli_err(void) { return cli_io.err ? cli_io.err : stderr; }

static void cli_flush(void) {
    if (cli_io.len && !cli_io.failed && fwrite(cli_io.buf, 1, cli_io.len, cli_io.f) != cli_io.len) {
        cli_io.failed = 1;
        cli_io.sys_errno = errno;
    }
    cli_io.len = 0;
    if (!cli_io.failed && fflush(cli_io.f) != 0) {
        cli_io.failed = 1;
        cli_io.sys_errno = errno;
    }
}

int cli_out_switch(FILE *f, int *sys_errno) {
    int ok;
    cli_flush();
    ok = !cli_io.failed;
    if (sys_errno) *sys_errno = cli_io.sys_errno;
    cli_io.f = f;
    cli_io.failed = 0;
    cli_io.sys_errno = 0;
    return ok;
}

FILE *cli_out_file(void) { return cli_io.f; }

int cli_out_failed(void) { return cli_io.failed; }

int cli_io_end(void) {
    cli_flush();
    if (!cli_io.failed) return CLI_EXIT_OK;
    fprintf(cli_err(), "atf: error writing the output: %s\n",
            cli_io.sys_errno ? strerror(cli_io.sys_errno) : "I/O error");
    return CLI_EXIT_DATA;
}

char *cli_reserve(size_t n) {
    if (sizeof cli_io.buf - cli_io.len < n) cli_flush();
    return cli_io.buf + cli_io.len;
}

void cli_commit(const char *end) { cli_io.len = (size_t)(end - cli_io.buf); }

void cli_write(const void *p, size_t n) {
    if (sizeof cli_io.buf - cli_io.len < n) {
        cli_flush();
        if (n > sizeof cli_io.buf) {
            if (!cli_io.failed && fwrite(p, 1, n, cli_io.f) != n) {
                cli_io.failed = 1;
                cli_io.sys_errno = errno;
            }
            return;
        }
    }
    memcpy(cli_io.buf + cli_io.len, p, n);
    cli_io.len += n;
}

void cli_print(const char *s) { cli_write(s, strlen(s)); }

void cli_printf(const char *fmt, ...) {
    char line[CLI_LINE_MAX + CLI_PATH_MAX];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) cli_write(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Nanoseconds as microseconds with three decimals ("1234.567"), exactly. */
char *cli_put_us(char *p, uint64_t ns) {
    char *q = cli_put_u64(p, ns / 1000);
    uint64_t f = ns % 1000;
    *q++ = '.';
    *q++ = (char)('0' + (int)(f / 100));
    *q++ = (char)('0' + (int)(f / 10 % 10));
    *q++ = (char)('0' + (int)(f % 10));
    return q;
}

/* s as a quoted JSON string: ", \ and control characters escaped, invalid UTF-8 bytes
 * replaced by U+FFFD, so the output is always valid JSON. */
size_t cli_json_escape(const char *s, size_t n, char *dst) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, k;
    char *q = dst;
    *q++ = '"';
    while (i < n) {
        unsigned c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            *q++ = (char)c;
            i++;
        } else if (c == '"' || c == '\\') {
            *q++ = '\\';
            *q++ = (char)c;
            i++;
        } else if (c < 0x20) {
            *q++ = '\\';
            if (c == '\n') *q++ = 'n';
            else if (c == '\t') *q++ = 't';
            else if (c == '\r') *q++ = 'r';
            else {
                q = cli_put_str(q, "u00");
                *q++ = hex[c >> 4];
                *q++ = hex[c & 15];
            }
            i++;
        } else if ((k = atf_utf8_sequence(p + i, n - i)) != 0) {
            memcpy(q, p + i, k);
            q += k;
            i += k;
        } else {
            q = cli_put_str(q, "\\ufffd");
            i++;
        }
    }
    *q++ = '"';
    return (size_t)(q - dst);
}

void cli_json_str(const char *s) {
    size_t n = strlen(s), room = CLI_JSON_ROOM(n);
    char *tmp;
    if (room <= CLI_OUT_BUFFER / 2) {
        char *p = cli_reserve(room);
        cli_commit(p + cli_json_escape(s, n, p));
        return;
    }
    tmp = (char *)malloc(room);
    if (!tmp) { /* too long to escape: an empty string keeps the output valid JSON */
        cli_write("\"\"", 2);
        return;
    }
    cli_write(tmp, cli_json_escape(s, n, tmp));
    free(tmp);
}

/* s for a text line: control characters as \n, \t, \r or \xNN, invalid UTF-8 bytes as
 * U+FFFD, so that a name can never break the line structure or the terminal. */
void cli_text(const char *s) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t k;
        if (c >= 0x20 && c < 0x7F) {
            size_t j = i + 1;
            while (j < n && p[j] >= 0x20 && p[j] < 0x7F) j++;
            cli_write(p + i, j - i);
            i = j;
        } else if (c < 0x20 || c == 0x7F) {
            char e[4];
            e[0] = '\\';
            e[1] = 'x';
            e[2] = hex[c >> 4];
            e[3] = hex[c & 15];
            if (c == '\n') cli_write("\\n", 2);
            else if (c == '\t') cli_write("\\t", 2);
            else if (c == '\r') cli_write("\\r", 2);
            else cli_write(e, 4);
            i++;
        } else if ((k = atf_utf8_sequence(p + i, n - i)) != 0) {
            cli_write(p + i, k);
            i += k;
        } else {
            cli_write("\xef\xbf\xbd", 3);
            i++;
        }
    }
}

/* Copies s into dst (cap >= 4) as valid UTF-8: invalid bytes become U+FFFD (EF BF BD);
 * stops before a sequence that would not fit. Returns the length (no NUL written). */
size_t cli_utf8_clean(const char *s, char *dst, size_t cap) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, o = 0;
    while (i < n) {
        size_t k = atf_utf8_sequence(p + i, n - i);
        if (k) {
            if (o + k > cap) break;
            memcpy(dst + o, p + i, k);
            o += k;
            i += k;
        } else {
            if (o + 3 > cap) break;
            dst[o++] = (char)0xEF;
            dst[o++] = (char)0xBF;
            dst[o++] = (char)0xBD;
            i++;
        }
    }
    return o;
}

/* A duration for people: "850ns", "12.345us", "1.500ms", "2.000s". */
const char *cli_fmt_dur(char *buf, size_t cap, uint64_t ns) {
    if (ns < 1000) snprintf(buf, cap, "%lluns", (cli_ull)ns);
    else if (ns < 1000000) snprintf(buf, cap, "%llu.%03lluus", (cli_ull)(ns / 1000), (cli_ull)(ns % 1000));
    else if (ns < 1000000000) snprintf(buf, cap, "%llu.%03llums", (cli_ull)(ns / 1000000), (cli_ull)(ns / 1000 % 1000));
    else snprintf(buf, cap, "%llu.%03llus", (cli_ull)(ns / 1000000000), (cli_ull)(ns / 1000000 % 1000));
    return buf;
}

int cli_isatty(FILE *f) { return f && cli_isatty_fd(cli_fileno(f)); }


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

/* Ends the line at p and writes line[0..p) out. */
void cli_emit(char *line, char *p) {
    *p++ = '\n';
    cli_write(line, (size_t)(p - line));
}

size_t cli_max_size(size_t a, size_t b) { return a > b ? a : b; }


/* ==== key: value lines ================================================================ */
#define CLI_KEY_WIDTH 16

void cli_kv(const char *key, const char *fmt, ...) {
    char value[CLI_LINE_MAX + CLI_PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    cli_printf("%s:%*s%s\n", key, (int)(CLI_KEY_WIDTH - strlen(key)), "", value);
}

void cli_kv_duration(uint64_t first, uint64_t last) {
    if (last < first)
        cli_kv("duration", "- (last event is older than the first: not in time order)");
    else
        cli_kv("duration", "%llu ns (%llu.%09llu s)", (cli_ull)(last - first),
               (cli_ull)((last - first) / 1000000000u), (cli_ull)((last - first) % 1000000000u));
}

/* ==== progress ======================================================================= */
/* Refreshed every 1/64 of the work. `out` is where the results go (NULL: the output). */
void cli_progress_init(cli_progress *p, const char *what, uint64_t total, FILE *out) {
    memset(p, 0, sizeof *p);
    p->what = what;
    p->total = total;
    if (!out) out = cli_io.f;
    p->on = total >= 1000000 && cli_isatty(cli_err()) && !cli_isatty(out);
    p->step = total / 64 + 1;
    p->next = p->on ? p->step : UINT64_MAX;
}

void cli_progress_show(cli_progress *p) {
    fprintf(cli_err(), "\r%s: %3u%%", p->what,
            (unsigned)(p->done * 100 / (p->total ? p->total : 1)));
    fflush(cli_err());
    p->next = p->done + p->step;
}

void cli_progress_end(cli_progress *p) {
    if (p->on) {
        fprintf(cli_err(), "\r%*s\r", (int)strlen(p->what) + 7, "");
        fflush(cli_err());
    }
}

/* ==== a trace: the PATH of stats, tree, export and dump ============================== */
/* Splits path (trailing separators ignored) into its directory and last component. */
void cli_split_path(const char *path, char *dir, char *base, size_t cap) {
    size_t n = strlen(path), end, start;
    while (n > 1 && (path[n - 1] == '/' || path[n - 1] == '\\')) n--;
    end = n;
    start = end;
    while (start > 0 && path[start - 1] != '/' && path[start - 1] != '\\') start--;
    snprintf(base, cap, "%.*s", (int)(end - start), path + start);
    if (start == 0) snprintf(dir, cap, ".");
    else if (start == 1) snprintf(dir, cap, "%c", path[0]);
    else snprintf(dir, cap, "%.*s", (int)(start - 1), path);
}

void cli_parent_dir(const char *path, char *buf, size_t cap) {
    char base[CLI_PATH_MAX];
    cli_split_path(path, buf, base, cap < sizeof base ? cap : sizeof base);
}

/* The session fields of a reader built around one thread, from its index file. */
static void cli_trace_lone_fields(atf_session_reader *r, atf_session_thread *t) {
    atf_index_event ev;
    uint64_t i, prev = 0;
    r->thread_count = 1;
    r->manifest = ATF_MANIFEST_MISSING;
    t->os_thread_id = t->reader.index.header.thread_id;
    r->layout = (uint32_t)t->reader.index.layout;
    r->format_version = 2;
    r->clock_type = t->reader.index.header.clock_type;
    for (i = 0; i < t->reader.index.event_count; i++) {
        atf_index_reader_get(&t->reader.index, i, &ev);
        if (ev.timestamp_ns < prev) t->out_of_order = 1;
        if (i == 0 || ev.timestamp_ns < r->time_start_ns) r->time_start_ns = ev.timestamp_ns;
        if (ev.timestamp_ns > r->time_end_ns) r->time_end_ns = ev.timestamp_ns;
        prev = ev.timestamp_ns;
    }
    t->time_min_ns = r->time_start_ns;
    t->time_max_ns = r->time_end_ns;
}

/* A session reader around one thread directory (file 0) or one index file (file 1), for
 * a thread outside a readable session. Its thread array is malloc'd and freed by
 * atf_session_reader_close(), which uses the library's default allocator, as every tool
 * does. On failure the error, naming the file, is in r->error. */
static atf_result cli_trace_lone(cli_trace *t, const char *path, int file) {
    atf_session_reader *r = &t->reader;
    atf_session_thread *th;
    atf_result rc;
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    r->threads = (atf_session_thread *)calloc(1, sizeof *r->threads);
    if (!r->threads) return ATF_E_NOMEM;
    th = &r->threads[0];
    th->slot = t->slot;
    rc = file ? atf_index_reader_open(&th->reader.index, path, NULL)
              : atf_thread_reader_open(&th->reader, path, NULL);
    if (rc != ATF_OK) {
        r->error = file ? th->reader.index.error : th->reader.error;
        free(r->threads);
        r->threads = NULL;
        return rc;
    }
    cli_trace_lone_fields(r, th);
    return ATF_OK;
}

/* A thread directory: that thread of its session when the parent opens as one. */
static int cli_trace_open_thread(cli_trace *t, const char *tdir, int file) {
    char dir[CLI_PATH_MAX], base[CLI_PATH_MAX], pdir[CLI_PATH_MAX], pbase[CLI_PATH_MAX];
    uint64_t v;
    atf_result rc;
    cli_split_path(tdir, dir, base, sizeof dir);
    t->only_one = 1;
    t->slot = cli_name_number(base, "thread_", &v) ? (uint32_t)v : 0;
    t->slot_named = !file && cli_name_number(base, "thread_", &v);
    cli_split_path(dir, pdir, pbase, sizeof pdir);
    if (cli_pid_dir_name(pbase, &v)) t->pid = v;
    if (t->slot_named && atf_session_reader_open(&t->reader, dir, NULL) == ATF_OK) {
        atf_session_thread *th = atf_session_reader_thread(&t->reader, t->slot);
        if (th && th->open_result == ATF_OK) return CLI_EXIT_OK;
        atf_session_reader_close(&t->reader);
    }
    rc = cli_trace_lone(t, tdir, file);
    if (rc == ATF_E_NOMEM) cli_error_init(&t->reader.error, ATF_E_NOMEM, tdir, 0, "thread list");
    return rc == ATF_OK ? CLI_EXIT_OK : cli_report(&t->reader.error);
}

/* Opens PATH as cli_trace_open says, a session_* PATH as its pid_* directory of process
 * *pid when pid is not NULL (`pid_option`: the command has --pid). t->pid stays 0 unless
 * a pid_<N> name gives it. */
static int cli_trace_open_at(const cli_command *cmd, cli_trace *t, const char *path,
                             const uint64_t *pid, int pid_option) {
    char pid_dir[CLI_PATH_MAX], dir[CLI_PATH_MAX], base[CLI_PATH_MAX];
    const char *session = path;
    cli_kind kind;
    atf_error e;
    uint64_t v;
    int status;
    if (cli_classify(path, &kind, &e) != ATF_OK) return cli_report(&e);
    switch (kind) {
    case CLI_KIND_INDEX:
        cli_split_path(path, dir, base, sizeof dir);
        if (strcmp(base, "index.atf") == 0) return cli_trace_open_thread(t, dir, 0);
        return cli_trace_open_thread(t, path, 1);
    case CLI_KIND_DETAIL:
    case CLI_KIND_SIDE:
        cli_split_path(path, dir, base, sizeof dir);
        return cli_trace_open_thread(t, dir, 0);
    case CLI_KIND_THREAD:
        return cli_trace_open_thread(t, path, 0);
    case CLI_KIND_ROOT:
        status = cli_pick_pid(cmd, path, pid, pid_option, pid_dir, sizeof pid_dir);
        if (status != CLI_EXIT_OK) return status;
        session = pid_dir;
        break;
    case CLI_KIND_PID:
        break;
    }
    t->whole_session = 1;
    cli_split_path(session, dir, base, sizeof dir);
    if (cli_pid_dir_name(base, &v)) t->pid = v;
    if (atf_session_reader_open(&t->reader, session, NULL) != ATF_OK)
        return cli_report(&t->reader.error);
    if (cli_opened_threads(&t->reader) == 0) { /* no thread opens: nothing to read */
        e = t->reader.error;
        if (e.code == ATF_OK)
            cli_error_init(&e, ATF_E_NOT_FOUND, session, 0, "no readable thread_N/index.atf");
        atf_session_reader_close(&t->reader);
        return cli_report(&e);
    }
    return CLI_EXIT_OK;
}

int cli_trace_open(const cli_command *cmd, cli_trace *t, const char *path) {
    return cli_trace_open_view(cmd, t, path, NULL);
}

size_t cli_opened_threads(const atf_session_reader *r) {
    size_t i, n = 0;
    for (i = 0; i < r->thread_count; i++) n += r->threads[i].open_result == ATF_OK;
    return n;
}

int cli_trace_is_session(const cli_trace *t) { return t->whole_session; }

void cli_trace_close(cli_trace *t) {
    size_t k;
    if (t->shown)
        for (k = 0; k < t->reader.symbol_count; k++)
            if (t->shown[k] != t->reader.symbols[k].name) free(t->shown[k]);
    atf_session_reader_close(&t->reader);
    free(t->slots);
    free(t->fids);
    free(t->shown);
    free(t->alias);
    t->slots = NULL;
    t->fids = NULL;
    t->shown = NULL;
    t->alias = NULL;
}

int cli_trace_wanted(const cli_trace *t, uint32_t slot) {
    size_t i;
    if (t->only_one && slot != t->slot) return 0;
    if (!t->slots) return 1;
    for (i = 0; i < t->slot_count; i++)
        if (t->slots[i] == slot) return 1;
    return 0;
}

void cli_trace_filter(const cli_trace *t, atf_merge_filter *f) {
    memset(f, 0, sizeof *f);
    if (t->slots) {
        f->slots = t->slots;
        f->slot_count = t->slot_count;
    } else if (t->only_one) {
        f->slots = &t->slot;
        f->slot_count = 1;
    }
    f->from_ns = t->window.from_ns;
    f->to_ns = t->window.to_ns == UINT64_MAX ? 0 : t->window.to_ns;
}

int cli_trace_selected(const cli_trace *t, size_t i) {
    const atf_session_thread *th = &t->reader.threads[i];
    return th->open_result == ATF_OK && cli_trace_wanted(t, th->slot);
}

/* Counted by binary search when the thread's file is in time order, else one by one. */
uint64_t cli_trace_thread_events(cli_trace *t, size_t i) {
    atf_session_thread *th = &t->reader.threads[i];
    const atf_index_reader *ix = &th->reader.index;
    const cli_window *w = &t->window;
    uint64_t lo = 0, hi = ix->event_count, k, n = 0;
    atf_index_event ev;
    if (!cli_trace_selected(t, i)) return 0;
    if (!w->has_from && !w->has_to) return ix->event_count;
    if (!atf_session_reader_check_order(&t->reader, th)) {
        if (w->has_from) lo = atf_index_reader_seek(ix, w->from_ns, NULL);
        if (w->has_to && w->to_ns < UINT64_MAX) hi = atf_index_reader_seek(ix, w->to_ns + 1, NULL);
        return hi > lo ? hi - lo : 0;
    }
    for (k = 0; k < ix->event_count; k++) {
        atf_index_reader_get(ix, k, &ev);
        n += (uint64_t)cli_window_has(w, ev.timestamp_ns);
    }
    return n;
}

uint64_t cli_trace_events(cli_trace *t) {
    uint64_t n = 0;
    size_t i;
    for (i = 0; i < t->reader.thread_count; i++) n += cli_trace_thread_events(t, i);
    return n;
}

int cli_trace_focus(const cli_trace *t, uint64_t fid) {
    size_t lo = 0, hi = t->fid_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->fids[mid] < fid) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->fid_count && t->fids[lo] == fid;
}

/* ==== names: demangled as --demangle says (demangle.h) ================================ */
/* The position of fid among the reader's symbols (sorted by id), or SIZE_MAX. */
static size_t cli_symbol_index(const atf_session_reader *r, uint64_t fid) {
    size_t lo = 0, hi = r->symbol_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->symbols[mid].function_id < fid) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->symbol_count && r->symbols[lo].function_id == fid ? lo : SIZE_MAX;
}

/* Whether symbol k of r is named f: its symbol, full or short name (demangle.h). */
static int cli_symbol_is(const atf_session_reader *r, size_t k, const char *f) {
    demangle_forms forms;
    int is;
    if (!r->symbols[k].name || !r->symbols[k].name[0]) return 0;
    if (strcmp(r->symbols[k].name, f) == 0) return 1;
    if (!demangle_is_mangled(r->symbols[k].name) || !demangle_runtime(1)) return 0;
    demangle_forms_make(&forms, r->symbols[k].name);
    is = demangle_forms_match(&forms, f, NULL);
    demangle_forms_free(&forms);
    return is;
}

int cli_trace_names_function(const cli_trace *t, const char *f) {
    uint64_t id;
    size_t k;
    for (k = 0; k < t->reader.symbol_count; k++)
        if (cli_symbol_is(&t->reader, k, f)) return 1;
    return cli_parse_hex_id(f, &id);
}

/* Symbol k's name as shown: made once (the symbol itself when it does not demangle). */
static const char *cli_symbol_shown(const cli_trace *t, size_t k) {
    const char *sym = t->reader.symbols[k].name;
    char *d;
    if (t->demangle == DEMANGLE_NONE || !t->shown || !demangle_is_mangled(sym)) return sym;
    if (t->shown[k]) return t->shown[k];
    d = demangle_runtime(1) ? demangle_alloc(sym, t->demangle) : NULL;
    t->shown[k] = d ? d : (char *)(uintptr_t)sym; /* the symbol itself: never freed */
    return t->shown[k];
}

const char *cli_trace_symbol(const cli_trace *t, uint64_t fid) {
    size_t k = cli_symbol_index(&t->reader, fid);
    const char *n = k == SIZE_MAX ? NULL : t->reader.symbols[k].name;
    return n && *n ? n : NULL;
}

const char *cli_trace_name(const cli_trace *t, uint64_t fid, char *hex, size_t cap) {
    size_t k = cli_symbol_index(&t->reader, fid);
    const char *n = k == SIZE_MAX ? NULL : t->reader.symbols[k].name;
    if (n && *n) return cli_symbol_shown(t, k);
    snprintf(hex, cap, "0x%016llx", (cli_ull)fid);
    return hex;
}

typedef struct cli_named {
    const char *name;
    size_t k;
} cli_named;

static int cli_named_cmp(const void *a, const void *b) {
    const cli_named *x = (const cli_named *)a, *y = (const cli_named *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->k > y->k) - (x->k < y->k);
}

int cli_trace_by_name(cli_trace *t) {
    const atf_session_reader *r = &t->reader;
    cli_named *v;
    size_t i, j, n = 0;
    int shared = 0;
    if (t->alias) return 1;
    if (t->demangle != DEMANGLE_SHORT || r->symbol_count < 2) return 0;
    if ((v = (cli_named *)malloc(r->symbol_count * sizeof *v)) == NULL) return 0;
    for (i = 0; i < r->symbol_count; i++) {
        if (!r->symbols[i].name || !r->symbols[i].name[0]) continue;
        v[n].name = cli_symbol_shown(t, i);
        v[n++].k = i;
    }
    qsort(v, n, sizeof *v, cli_named_cmp);
    for (i = 1; i < n && !shared; i++) shared = strcmp(v[i - 1].name, v[i].name) == 0;
    if (shared && (t->alias = (uint64_t *)malloc(r->symbol_count * sizeof *t->alias)) != NULL) {
        for (i = 0; i < r->symbol_count; i++) t->alias[i] = r->symbols[i].function_id;
        for (i = 0; i < n; i = j) { /* a run of one name: ids ascend with k */
            for (j = i + 1; j < n && strcmp(v[i].name, v[j].name) == 0; j++)
                t->alias[v[j].k] = r->symbols[v[i].k].function_id;
        }
    }
    free(v);
    return t->alias != NULL;
}

uint64_t cli_trace_alias(const cli_trace *t, uint64_t fid) {
    size_t k;
    if (!t->alias || (k = cli_symbol_index(&t->reader, fid)) == SIZE_MAX) return fid;
    return t->alias[k];
}

/* ==== a trace seen through a view ===================================================== */
/* "atf NAME: <text>" on stderr, without the usage (the options were well formed, the
 * trace lacks what they name); returns CLI_EXIT_USAGE. */
static int cli_view_error(const cli_command *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
static int cli_view_error(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(cli_err(), "atf %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(cli_err(), fmt, ap);
    va_end(ap);
    fputc('\n', cli_err());
    return CLI_EXIT_USAGE;
}

/* The threads cli_trace_start and cli_trace_end read, checked for time order: their
 * smallest and largest times are then known, not only their first and last events'
 * (the same for a file in time order, which the library's writer makes). For a view
 * that counts from the start or converts to another clock. */
static void cli_trace_check_ends(cli_trace *t) {
    size_t i;
    for (i = 0; i < t->reader.thread_count; i++) {
        atf_session_thread *th = &t->reader.threads[i];
        if (th->open_result != ATF_OK || (t->only_one && th->slot != t->slot)) continue;
        atf_session_reader_check_order(&t->reader, th);
    }
}

uint64_t cli_trace_start(const cli_trace *t) {
    uint64_t start = UINT64_MAX;
    size_t i;
    for (i = 0; i < t->reader.thread_count; i++) {
        const atf_session_thread *th = &t->reader.threads[i];
        if (th->open_result != ATF_OK || !th->reader.index.event_count) continue;
        if (t->only_one && th->slot != t->slot) continue;
        if (th->time_min_ns < start) start = th->time_min_ns;
    }
    return start == UINT64_MAX ? 0 : start;
}

/* --pid against a PATH that is not a session_* directory (there it picked the pid_*
 * directory already): it must name the process PATH is of. */
static int cli_trace_check_pid(const cli_command *cmd, const cli_trace *t, const cli_view *v,
                               int pid_known) {
    if (!v->has_pid || (pid_known && t->pid == v->pid)) return CLI_CONTINUE;
    if (!pid_known)
        return cli_view_error(cmd, "--pid: %s is in no pid_* directory", t->path);
    return cli_view_error(cmd, "--pid: %s is pid_%llu's, not pid_%llu's", t->path,
                          (cli_ull)t->pid, (cli_ull)v->pid);
}

/* --thread: each slot a thread of the trace that opened. */
static int cli_trace_apply_threads(const cli_command *cmd, cli_trace *t, const cli_view *v) {
    size_t i;
    if (!v->threads.count) return CLI_CONTINUE;
    t->slots = (uint32_t *)malloc(v->threads.count * sizeof *t->slots);
    if (!t->slots) {
        atf_error e;
        cli_error_init(&e, ATF_E_NOMEM, t->path, 0, "--thread");
        return cli_report(&e);
    }
    for (i = 0; i < v->threads.count; i++) {
        uint64_t slot = v->threads.items[i];
        if (t->only_one && !t->slot_named)
            return cli_usage_error(cmd, "--thread is for a session or a thread_N directory; "
                                        "%s is neither", t->path);
        if (t->only_one && slot != t->slot)
            return cli_view_error(cmd, "%s has no thread_%llu", t->path, (cli_ull)slot);
        if (!t->only_one) {
            int status = cli_check_slot(cmd, t->path, &t->reader, slot);
            if (status != CLI_CONTINUE) return status;
        }
        t->slots[i] = (uint32_t)slot;
    }
    t->slot_count = v->threads.count;
    return CLI_CONTINUE;
}

static int cli_fid_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* --function: every id the manifest names F, else F's own id (0x...). */
static int cli_trace_apply_functions(const cli_command *cmd, cli_trace *t, const cli_view *v) {
    const atf_session_reader *r = &t->reader;
    size_t i, k, n = 0;
    if (!v->functions.count) return CLI_CONTINUE;
    t->fids = (uint64_t *)malloc((r->symbol_count + v->functions.count) * sizeof *t->fids);
    if (!t->fids) {
        atf_error e;
        cli_error_init(&e, ATF_E_NOMEM, t->path, 0, "--function");
        return cli_report(&e);
    }
    for (i = 0; i < v->functions.count; i++) {
        const char *f = v->functions.items[i];
        size_t before = n;
        for (k = 0; k < r->symbol_count; k++)
            if (cli_symbol_is(r, k, f)) t->fids[n++] = r->symbols[k].function_id;
        if (n == before && cli_parse_hex_id(f, &t->fids[n])) n++;
        if (n == before && v->functions_lenient) continue; /* selects nothing here */
        if (n == before)
            return cli_view_error(cmd, "--function: %s has no function named '%s' (give a name "
                                       "as atf stats prints it, or an id 0x...)", t->path, f);
    }
    qsort(t->fids, n, sizeof *t->fids, cli_fid_cmp);
    for (i = k = 0; i < n; i++)
        if (k == 0 || t->fids[k - 1] != t->fids[i]) t->fids[k++] = t->fids[i];
    t->fid_count = k;
    return CLI_CONTINUE;
}

/* The last event of the trace's threads (those PATH names; --thread aside), or 0. */
static uint64_t cli_trace_end(const cli_trace *t) {
    uint64_t end = 0;
    size_t i;
    for (i = 0; i < t->reader.thread_count; i++) {
        const atf_session_thread *th = &t->reader.threads[i];
        if (th->open_result != ATF_OK || !th->reader.index.event_count) continue;
        if (t->only_one && th->slot != t->slot) continue;
        if (th->time_max_ns > end) end = th->time_max_ns;
    }
    return end;
}

/* An exact anchor made one in ns: its value (in 1/timescale s) rounded down to the ns, so
 * that the library reads its clock at the trace clock's resolution. 0 when that value
 * does not fit an int64. */
static int cli_anchor_in_ns(atf_session_anchor *a) {
    const int64_t ns = 1000000000;
    int64_t q = a->value / a->timescale, r = a->value % a->timescale, add;
    if (a->timescale == ns) return 1;
    if (r < 0) { /* floor division */
        q--;
        r += a->timescale;
    }
    if (q > INT64_MAX / ns || q < INT64_MIN / ns) return 0;
    add = r * ns / a->timescale; /* r < 2^31: no overflow */
    if (q * ns > INT64_MAX - add) return 0;
    a->value = q * ns + add;
    a->timescale = (int32_t)ns;
    a->value_f = (double)a->value;
    a->rate = 1e9;
    return 1;
}

/* The anchors of the trace, on stderr after a message about --clock. */
static int cli_clock_missing(const cli_command *cmd, const cli_trace *t, const char *name) {
    size_t i;
    fprintf(cli_err(), "atf %s: --clock: %s has no timing anchor named %s; ", cmd->name,
            t->path, name);
    if (!t->reader.anchor_count) fprintf(cli_err(), "it has none");
    else fprintf(cli_err(), "its anchors:");
    for (i = 0; i < t->reader.anchor_count; i++)
        fprintf(cli_err(), "%s %s", i ? "," : "", t->reader.anchors[i].name);
    fprintf(cli_err(), " (--clock trace|wall|NAME)\n");
    return CLI_EXIT_USAGE;
}

/* --clock: the anchor it names, which must be exact and read the trace's every event. */
static int cli_trace_apply_clock(const cli_command *cmd, cli_trace *t, const cli_view *v) {
    const char *name = v->clock;
    const atf_session_anchor *a;
    int64_t first, last;
    if (!name || strcmp(name, "trace") == 0) return CLI_CONTINUE;
    if (strcmp(name, "wall") == 0) name = "wall_clock_ns";
    if ((a = atf_session_reader_anchor(&t->reader, name)) == NULL)
        return cli_clock_missing(cmd, t, name);
    if (a->timescale <= 0)
        return cli_view_error(cmd, "--clock: the anchor %s of %s is not exact (its value is "
                                   "not an integer of its units)", name, t->path);
    t->clock = *a;
    if (!cli_anchor_in_ns(&t->clock) ||
        atf_anchor_value_at(&t->clock, cli_trace_start(t), &first) != ATF_OK ||
        atf_anchor_value_at(&t->clock, cli_trace_end(t), &last) != ATF_OK)
        return cli_view_error(cmd, "--clock: the times of %s on %s do not fit 64-bit ns",
                              t->path, name);
    t->has_clock = 1;
    t->clock_is_wall = strcmp(name, "wall_clock_ns") == 0;
    t->clock_negative = first < 0;
    t->clock_shift = (uint64_t)first - cli_trace_start(t);
    return CLI_CONTINUE;
}

/* The wall clock of cli_trace_wall: the first exact wall_clock_ns anchor, when its
 * readings of the trace's first and last events fit an int64 in ns. */
static void cli_trace_apply_wall(cli_trace *t) {
    const atf_session_anchor *a = atf_session_reader_anchor(&t->reader, "wall_clock_ns");
    atf_session_anchor ns;
    int64_t first, last;
    if (!a || a->timescale <= 0) return;
    ns = *a;
    if (!cli_anchor_in_ns(&ns) || atf_anchor_value_at(&ns, cli_trace_start(t), &first) != ATF_OK ||
        atf_anchor_value_at(&ns, cli_trace_end(t), &last) != ATF_OK)
        return;
    t->has_wall = 1;
    t->wall_shift = (uint64_t)first - cli_trace_start(t);
}

int cli_trace_open_view(const cli_command *cmd, cli_trace *t, const char *path,
                        const cli_view *v) {
    int status, pid_known;
    memset(t, 0, sizeof *t);
    t->path = path;
    t->window.to_ns = UINT64_MAX;
    status = cli_trace_open_at(cmd, t, path, v && v->has_pid ? &v->pid : NULL,
                               v && v->takes_pid);
    if (status == CLI_EXIT_OK) {
        sym_name_functions(&t->reader, cli_err()); /* before names */
        cli_trace_apply_wall(t);
        t->demangle = v ? v->demangle : DEMANGLE_FULL;
        if (t->reader.symbol_count) /* NULL when out of memory: names stay symbols */
            t->shown = (char **)calloc(t->reader.symbol_count, sizeof *t->shown);
    }
    pid_known = t->pid != 0;
    if (!pid_known) t->pid = 1;
    if (status != CLI_EXIT_OK || !v) return status;
    if ((v->from && v->from[0] == '+') || (v->to && v->to[0] == '+') || v->clock)
        cli_trace_check_ends(t);
    if ((status = cli_trace_check_pid(cmd, t, v, pid_known)) == CLI_CONTINUE &&
        (status = cli_trace_apply_threads(cmd, t, v)) == CLI_CONTINUE &&
        (status = cli_view_window(cmd, v, v->has_start ? v->start_ns : cli_trace_start(t),
                                  &t->window)) == CLI_CONTINUE &&
        (status = cli_trace_apply_functions(cmd, t, v)) == CLI_CONTINUE &&
        (status = cli_trace_apply_clock(cmd, t, v)) == CLI_CONTINUE)
        return CLI_EXIT_OK;
    cli_trace_close(t);
    return status;
}

uint32_t cli_thread_tid(const atf_session_thread *t) {
    return t->os_thread_id ? t->os_thread_id : t->slot;
}

const char *cli_thread_name(const atf_session_thread *t, char *buf, size_t cap) {
    if (t->name[0]) snprintf(buf, cap, "%s", t->name);
    else snprintf(buf, cap, "thread_%u", t->slot);
    return buf;
}

uint64_t cli_trace_pid(const cli_trace *t) {
    return t->reader.pid ? t->reader.pid : t->pid;
}

/* ==== times on the view's clock ====================================================== */
/* On an anchor in ns the library's reading (atf_anchor_value_at) is value + (ts - host_ns)
 * exactly, a shift taken from it at open: one addition per time, which a large export
 * makes millions of. Exact for every time whose reading fits an int64 (the trace's events
 * all do: checked at open). */
uint64_t cli_trace_time(const cli_trace *t, uint64_t ts) {
    return t && t->has_clock ? ts + t->clock_shift : ts;
}

int cli_trace_wall(const cli_trace *t, uint64_t ts, int64_t *wall) {
    if (!t->has_wall) return 0;
    *wall = (int64_t)(ts + t->wall_shift); /* exact: see cli_trace_time */
    return 1;
}

/* The magnitude of a time on t's clock; *neg when it is below 0. */
static uint64_t cli_time_abs(const cli_trace *t, uint64_t ts, int *neg) {
    uint64_t v = cli_trace_time(t, ts);
    *neg = t && t->has_clock && v >= (uint64_t)1 << 63;
    return *neg ? ~v + 1 : v;
}

char *cli_put_time(char *p, const cli_trace *t, uint64_t ts) {
    int neg;
    uint64_t v = cli_time_abs(t, ts, &neg);
    if (neg) *p++ = '-';
    return cli_put_u64(p, v);
}

char *cli_put_time_us(char *p, const cli_trace *t, uint64_t ts) {
    int neg;
    uint64_t v = cli_time_abs(t, ts, &neg);
    if (neg) *p++ = '-';
    return cli_put_us(p, v);
}

/* Days since 1970-01-01 as a proleptic Gregorian date (H. Hinnant's civil_from_days). */
static void cli_civil_date(int64_t days, int64_t *y, unsigned *m, unsigned *d) {
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

char *cli_put_time_text(char *p, const cli_trace *t, uint64_t ts) {
    const int64_t ns_per_s = 1000000000, s_per_day = 86400;
    int64_t v, secs, days, y;
    unsigned mo, d, sod;
    if (!t || !t->clock_is_wall) return cli_put_time(p, t, ts);
    v = (int64_t)cli_trace_time(t, ts);
    secs = v / ns_per_s - (v % ns_per_s < 0); /* floor */
    days = secs / s_per_day - (secs % s_per_day < 0);
    sod = (unsigned)(secs - days * s_per_day);
    cli_civil_date(days, &y, &mo, &d);
    return p + sprintf(p, "%04lld-%02u-%02uT%02u:%02u:%02u.%09lldZ", (cli_ll)y, mo, d, sod / 3600,
                       sod / 60 % 60, sod % 60, (cli_ll)(v - secs * ns_per_s));
}

/* ==== damage of a session's threads ================================================== */
/* Where a file was left by a crash (torn bytes, no footer) or its footer disagrees with
 * it: 1 with *e set. */
static int cli_file_damage(const char *path, atf_count_source recovery, uint64_t torn_bytes,
                           uint64_t torn_offset, uint64_t mark_offset, atf_error *e) {
    if (recovery == ATF_COUNT_FOOTER_MISMATCH) {
        cli_error_init(e, ATF_E_CORRUPT, path, mark_offset,
                       "the footer disagrees with the file");
        return 1;
    }
    if (torn_bytes) {
        cli_error_init(e, ATF_E_TRUNCATED, path, torn_offset,
                       "a torn last record (left by a crash; ignored)");
        return 1;
    }
    if (recovery != ATF_COUNT_FINALIZED) {
        cli_error_init(e, ATF_E_TRUNCATED, path, mark_offset,
                       "not finalized (left by a crash; atf recover finalizes it)");
        return 1;
    }
    return 0;
}

int cli_thread_damage(const atf_session_reader *r, const atf_session_thread *t, int crash_left,
                      atf_error *e) {
    const atf_thread_reader *tr = &t->reader;
    if (t->missing) {
        if (!t->in_manifest) return 0;
        char dir[CLI_PATH_MAX];
        int n = snprintf(dir, sizeof dir, "%s/thread_%u", r->path, t->slot);
        cli_error_init(e, ATF_E_NOT_FOUND, n > 0 && (size_t)n < sizeof e->path ? dir : r->path,
                       0, NULL);
        e->what = "listed in manifest.json, but the directory or its index.atf is missing";
        return 1;
    }
    if (t->open_result != ATF_OK) {
        *e = tr->error;
        if (e->code == ATF_OK) cli_error_init(e, t->open_result, r->path, CLI_NO_OFFSET, "thread");
        return 1;
    }
    if (tr->error.code != ATF_OK) { /* a damaged side file: the records before it are used */
        *e = tr->error;
        return 1;
    }
    if (tr->index.crc_state == ATF_CRC_MISMATCH) {
        *e = tr->index.error;
        return 1;
    }
    if (tr->has_detail && tr->detail.crc_state == ATF_CRC_MISMATCH) {
        *e = tr->detail.error;
        return 1;
    }
    if (tr->index.counted == ATF_COUNT_FOOTER_MISMATCH ||
        (tr->has_detail && tr->detail.counted == ATF_COUNT_FOOTER_MISMATCH))
        crash_left = 1; /* a footer that disagrees is damage in any case */
    if (!crash_left) return 0;
    if (cli_file_damage(tr->index.path, tr->index.counted, tr->index.torn_bytes,
                        tr->index.header.events_offset +
                            tr->index.event_count * ATF_INDEX_EVENT_SIZE,
                        40, e))
        return 1;
    return tr->has_detail &&
           cli_file_damage(tr->detail.path, tr->detail.counted, tr->detail.torn_bytes,
                           tr->detail.header.events_offset + tr->detail.bytes_length, 28, e);
}

const char *cli_manifest_text(const atf_session_reader *r, char *buf, size_t cap) {
    if (r->state[0] && r->manifest != ATF_MANIFEST_MISSING)
        snprintf(buf, cap, "%s (state %s)", atf_manifest_state_str(r->manifest), r->state);
    else
        snprintf(buf, cap, "%s", atf_manifest_state_str(r->manifest));
    return buf;
}

int cli_manifest_problem(const atf_session_reader *r, atf_error *e) {
    if (r->manifest != ATF_MANIFEST_UNREADABLE) return 0;
    *e = r->manifest_error;
    if (e->code == ATF_OK)
        cli_error_init(e, ATF_E_CORRUPT, r->path, CLI_NO_OFFSET, "manifest.json is unreadable");
    return 1;
}

int cli_check_slot(const cli_command *cmd, const char *path, const atf_session_reader *r,
                   uint64_t slot) {
    size_t i;
    for (i = 0; i < r->thread_count && slot <= UINT32_MAX; i++) {
        const atf_session_thread *t = &r->threads[i];
        if (t->slot != slot) continue;
        if (t->open_result == ATF_OK) return CLI_CONTINUE;
        if (t->missing) break;
        cli_warn_damage(r, 1, t->slot, 0);
        return CLI_EXIT_DATA;
    }
    fprintf(cli_err(), "atf %s: %s has no thread_%llu%s\n", cmd->name, path, (cli_ull)slot,
            i < r->thread_count ? " (listed in manifest.json, but missing)" : "");
    return CLI_EXIT_USAGE;
}

/* cli_warn_damage for the threads `sel` wants (NULL: only_one and slot say which). A
 * thread that PATH names by no thread_N (a lone file, a directory of another name) is
 * named by its file alone. */
static size_t cli_warn_damage_of(const atf_session_reader *r, const cli_trace *sel, int only_one,
                                 uint32_t slot, int crash_left) {
    size_t i, n = 0;
    atf_error e;
    if (cli_manifest_problem(r, &e)) { /* names and counts are lost with it */
        cli_report(&e);
        n++;
    }
    for (i = 0; i < r->thread_count; i++) {
        if (sel ? !cli_trace_wanted(sel, r->threads[i].slot)
                : only_one && r->threads[i].slot != slot)
            continue;
        if (!cli_thread_damage(r, &r->threads[i], crash_left, &e)) continue;
        if (sel && sel->only_one && !sel->slot_named) cli_report(&e);
        else cli_report_thread(r->threads[i].slot, &e);
        n++;
    }
    return n;
}

size_t cli_warn_damage(const atf_session_reader *r, int only_one, uint32_t slot, int crash_left) {
    return cli_warn_damage_of(r, NULL, only_one, slot, crash_left);
}

/* One rule for every PATH: a file left by a crash is damage whether PATH is its session,
 * its pid_* directory, its thread's directory or the file itself. */
size_t cli_trace_warn_damage(const cli_trace *t) {
    return cli_warn_damage_of(&t->reader, t, 0, 0, 1);
}

int cli_detail_damage(const atf_detail_reader *r, atf_error *e) {
    if (r->crc_state == ATF_CRC_MISMATCH) {
        *e = r->error;
        return 1;
    }
    return cli_file_damage(r->path, r->counted, r->torn_bytes,
                           r->header.events_offset + r->bytes_length, 28, e);
}
