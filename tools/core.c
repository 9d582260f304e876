/* core.c - the core of the atf command (see core.h): arguments, output, progress, error
 * lines, PATH kinds and opening a trace with its damage reported.
 * SPDX-License-Identifier: MIT */
#include "core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(_WIN32)
#  include <io.h>
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

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(cli_err(), "atf %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(cli_err(), fmt, ap);
    va_end(ap);
    fprintf(cli_err(), "\n\n%s", cmd->usage);
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
        if (!cli_name_number(ent->d_name, "pid_", &pid)) continue;
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

int cli_pick_pid_dir(const cli_command *cmd, const char *path, char *buf, size_t cap) {
    char **pids = NULL;
    size_t n = 0, i;
    if (cli_pid_dirs(path, &pids, &n) != 0) {
        atf_error e;
        cli_error_errno(&e, path, "read directory", errno);
        return cli_report(&e);
    }
    if (n == 1) {
        snprintf(buf, cap, "%s", pids[0]);
        cli_pid_dirs_free(pids, n);
        return CLI_EXIT_OK;
    }
    fprintf(cli_err(), "atf %s: %s is a session_* directory of %llu processes: give one of\n",
            cmd->name, path, (cli_ull)n);
    for (i = 0; i < n; i++) fprintf(cli_err(), "  %s\n", pids[i]);
    cli_pid_dirs_free(pids, n);
    return CLI_EXIT_USAGE;
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
    if (got == sizeof magic && memcmp(magic, ATF_GAPS_MAGIC, 4) == 0) *kind = CLI_KIND_GAPS;
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

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0 when it is invalid
 * (bad lead or continuation byte, overlong form, surrogate, above U+10FFFF). */
static size_t cli_utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)) return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)) return 0;
        return 4;
    }
    return 0;
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
        } else if ((k = cli_utf8_len(p + i, n - i)) != 0) {
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
        } else if ((k = cli_utf8_len(p + i, n - i)) != 0) {
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
        size_t k = cli_utf8_len(p + i, n - i);
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
static void cli_split_path(const char *path, char *dir, char *base, size_t cap) {
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
    cli_split_path(dir, pdir, pbase, sizeof pdir);
    if (cli_name_number(pbase, "pid_", &v)) t->pid = v;
    if (!file && cli_name_number(base, "thread_", &v) &&
        atf_session_reader_open(&t->reader, dir, NULL) == ATF_OK) {
        atf_session_thread *th = atf_session_reader_thread(&t->reader, t->slot);
        if (th && th->open_result == ATF_OK) return CLI_EXIT_OK;
        atf_session_reader_close(&t->reader);
    }
    rc = cli_trace_lone(t, tdir, file);
    if (rc == ATF_E_NOMEM) cli_error_init(&t->reader.error, ATF_E_NOMEM, tdir, 0, "thread list");
    return rc == ATF_OK ? CLI_EXIT_OK : cli_report(&t->reader.error);
}

int cli_trace_open(const cli_command *cmd, cli_trace *t, const char *path) {
    char pid_dir[CLI_PATH_MAX], dir[CLI_PATH_MAX], base[CLI_PATH_MAX];
    const char *session = path;
    cli_kind kind;
    atf_error e;
    uint64_t v;
    int status;
    memset(t, 0, sizeof *t);
    t->path = path;
    t->pid = 1;
    if (cli_classify(path, &kind, &e) != ATF_OK) return cli_report(&e);
    switch (kind) {
    case CLI_KIND_INDEX:
        cli_split_path(path, dir, base, sizeof dir);
        if (strcmp(base, "index.atf") == 0) return cli_trace_open_thread(t, dir, 0);
        return cli_trace_open_thread(t, path, 1);
    case CLI_KIND_DETAIL:
    case CLI_KIND_GAPS:
        cli_split_path(path, dir, base, sizeof dir);
        return cli_trace_open_thread(t, dir, 0);
    case CLI_KIND_THREAD:
        return cli_trace_open_thread(t, path, 0);
    case CLI_KIND_ROOT:
        status = cli_pick_pid_dir(cmd, path, pid_dir, sizeof pid_dir);
        if (status != CLI_EXIT_OK) return status;
        session = pid_dir;
        break;
    case CLI_KIND_PID:
        break;
    }
    t->whole_session = 1;
    cli_split_path(session, dir, base, sizeof dir);
    if (cli_name_number(base, "pid_", &v)) t->pid = v;
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

size_t cli_opened_threads(const atf_session_reader *r) {
    size_t i, n = 0;
    for (i = 0; i < r->thread_count; i++) n += r->threads[i].open_result == ATF_OK;
    return n;
}

int cli_trace_is_session(const cli_trace *t) { return t->whole_session; }

void cli_trace_close(cli_trace *t) { atf_session_reader_close(&t->reader); }

void cli_trace_filter(const cli_trace *t, atf_merge_filter *f) {
    memset(f, 0, sizeof *f);
    if (t->only_one) {
        f->slots = &t->slot;
        f->slot_count = 1;
    }
}

int cli_trace_selected(const cli_trace *t, size_t i) {
    const atf_session_thread *th = &t->reader.threads[i];
    return th->open_result == ATF_OK && (!t->only_one || th->slot == t->slot);
}

uint64_t cli_trace_events(const cli_trace *t) {
    uint64_t n = 0;
    size_t i;
    for (i = 0; i < t->reader.thread_count; i++)
        if (cli_trace_selected(t, i)) n += t->reader.threads[i].reader.index.event_count;
    return n;
}

const char *cli_trace_name(const cli_trace *t, uint64_t fid, char *hex, size_t cap) {
    const char *n = atf_session_reader_symbol(&t->reader, fid);
    if (n && *n) return n;
    snprintf(hex, cap, "0x%016llx", (cli_ull)fid);
    return hex;
}

uint32_t cli_thread_tid(const atf_session_thread *t) {
    return t->os_thread_id ? t->os_thread_id : t->slot;
}

/* ==== damage of a session's threads ================================================== */
/* Where a file was left by a crash (torn bytes, no footer) or its footer disagrees with
 * it: 1 with *e set. */
static int cli_file_damage(const char *path, atf_recovery recovery, uint64_t torn_bytes,
                           uint64_t torn_offset, uint64_t mark_offset, atf_error *e) {
    if (recovery == ATF_RECOVERY_FOOTER_MISMATCH) {
        cli_error_init(e, ATF_E_CORRUPT, path, mark_offset,
                       "the footer disagrees with the file");
        return 1;
    }
    if (torn_bytes) {
        cli_error_init(e, ATF_E_TRUNCATED, path, torn_offset,
                       "a torn last record (left by a crash; ignored)");
        return 1;
    }
    if (recovery != ATF_RECOVERY_FINALIZED) {
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
    if (tr->error.code != ATF_OK) { /* a damaged gaps.atf: the gaps before it are used */
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
    if (tr->index.recovery == ATF_RECOVERY_FOOTER_MISMATCH ||
        (tr->has_detail && tr->detail.recovery == ATF_RECOVERY_FOOTER_MISMATCH))
        crash_left = 1; /* a footer that disagrees is damage in any case */
    if (!crash_left) return 0;
    if (cli_file_damage(tr->index.path, tr->index.recovery, tr->index.torn_bytes,
                        tr->index.header.events_offset +
                            tr->index.event_count * ATF_INDEX_EVENT_SIZE,
                        40, e))
        return 1;
    return tr->has_detail &&
           cli_file_damage(tr->detail.path, tr->detail.recovery, tr->detail.torn_bytes,
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

size_t cli_warn_damage(const atf_session_reader *r, int only_one, uint32_t slot, int crash_left) {
    size_t i, n = 0;
    atf_error e;
    if (cli_manifest_problem(r, &e)) { /* names and counts are lost with it */
        cli_report(&e);
        n++;
    }
    for (i = 0; i < r->thread_count; i++) {
        if (only_one && r->threads[i].slot != slot) continue;
        if (!cli_thread_damage(r, &r->threads[i], crash_left, &e)) continue;
        cli_report_thread(r->threads[i].slot, &e);
        n++;
    }
    return n;
}
