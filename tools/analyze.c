/* analyze.c - the analysis and export commands of the atf tool: stats, tree, export.
 * SPDX-License-Identifier: MIT
 *
 * PATH is a session's pid_* directory (every thread, merged by time), or a thread_N
 * directory or its index.atf (that thread only: names, thread names and drop counts still
 * come from the session's manifest when the parent directory opens as a session).
 * Function names come from the manifest's symbols, else the id as 0x%016llx.
 *
 * Calls and returns are paired per thread with a stack (an_walk_*), by the same rules
 * for every command, so that unbalanced input never throws off the rest of the trace:
 *   - a return (or an exception, which unwinds like a return) of the top frame closes it;
 *   - a return of a function further down the stack first closes every frame above it
 *     at the return's timestamp ("unwound": e.g. a longjmp, or an exception that left
 *     functions which recorded no exit), then that function's frame;
 *   - a return of a function not on the stack (the trace started inside the call, or the
 *     call was dropped) is counted and ignored;
 *   - frames still open when a thread's events end are closed at that thread's last
 *     timestamp and counted as "open at end": their time is included, not left out;
 *   - where the recorder lost events (a gap of gaps.atf: the merge marks the first event
 *     after it; gaps at or past the thread's event count follow its last event), the frames
 *     open in that thread are closed at its last event before the gap and counted as
 *     "cut by a gap": what they did up to there counts, nothing is paired across the
 *     hole, and a return after the gap whose call came before it finds an empty stack
 *     and is ignored like any return without a matching call; too-deep calls skipped
 *     before the gap are forgotten with their frames;
 *   - calls nested deeper than AN_MAX_DEPTH frames are counted and skipped together
 *     with their returns, so memory stays bounded whatever the input.
 * Memory is O(distinct functions + threads x (stack depth + functions on the stack));
 * nothing grows with the number of events. Exporters stream their output.
 *
 * This file includes atf.h without ATF_IMPLEMENTATION (tools/atf.c compiles it). */
#include "atf.h"
#include "analyze.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(_WIN32)
#  include <fcntl.h>
#  include <io.h>
#  define an_isatty_fd(fd) _isatty(fd)
#  define an_fileno(f) _fileno(f)
#  if !defined(S_ISDIR)
#    define S_ISDIR(m) (((m) & _S_IFMT) == _S_IFDIR)
#  endif
#  if !defined(S_ISREG)
#    define S_ISREG(m) (((m) & _S_IFMT) == _S_IFREG)
#  endif
#else
#  include <unistd.h>
#  define an_isatty_fd(fd) isatty(fd)
#  define an_fileno(f) fileno(f)
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define AN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#  define AN_PRINTF(fmt, args)
#endif

/* Frames tracked per thread; deeper calls are counted and skipped (see the top). */
#ifndef AN_MAX_DEPTH
#  define AN_MAX_DEPTH 262144u
#endif

enum { AN_EXIT_OK = 0, AN_EXIT_DATA = 1, AN_EXIT_USAGE = 2 };
enum { AN_PATH_MAX = 1024 };                     /* as atf_session_reader.path */
enum { AN_OUT_BUFFER = 1 << 20 };                /* output buffer of the exporters */
enum { AN_NAME_MAX = 2048 };                     /* bytes of a function name kept */

typedef unsigned long long an_ull;               /* for printf's %llu / %llx */

/* ==== output ========================================================================= */
/* A buffered writer over a FILE: the exporters write tens of bytes per event, and one
 * large fwrite per MiB beats the per-call cost (and locking) of stdio. The first write
 * error sticks; the caller checks it once at the end. */
typedef struct an_out {
    FILE *f;
    char *buf;
    size_t len, cap;
    int failed;                 /* a write failed */
    int sys_errno;              /* its errno */
} an_out;

static int an_out_init(an_out *o, FILE *f) {
    memset(o, 0, sizeof *o);
    o->f = f;
    o->buf = (char *)malloc(AN_OUT_BUFFER);
    if (!o->buf) return 0;
    o->cap = AN_OUT_BUFFER;
    return 1;
}

static void an_out_flush(an_out *o) {
    if (o->len && !o->failed && fwrite(o->buf, 1, o->len, o->f) != o->len) {
        o->failed = 1;
        o->sys_errno = errno;
    }
    o->len = 0;
}

/* Flushes the buffer and the FILE; returns 0 when any write failed. */
static int an_out_finish(an_out *o) {
    an_out_flush(o);
    if (!o->failed && fflush(o->f) != 0) {
        o->failed = 1;
        o->sys_errno = errno;
    }
    free(o->buf);
    o->buf = NULL;
    o->cap = 0;
    return !o->failed;
}

/* Room for n more bytes (n <= cap): returns where to write them; commit with len += k. */
static char *an_out_reserve(an_out *o, size_t n) {
    if (o->cap - o->len < n) an_out_flush(o);
    return o->buf + o->len;
}

static void an_out_bytes(an_out *o, const void *p, size_t n) {
    if (o->cap - o->len < n) {
        an_out_flush(o);
        if (n > o->cap) {
            if (!o->failed && fwrite(p, 1, n, o->f) != n) {
                o->failed = 1;
                o->sys_errno = errno;
            }
            return;
        }
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void an_out_str(an_out *o, const char *s) { an_out_bytes(o, s, strlen(s)); }

static void AN_PRINTF(2, 3) an_out_printf(an_out *o, const char *fmt, ...) {
    char line[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) an_out_bytes(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Writes v in decimal at p; returns the number of digits. */
static size_t an_fmt_u64(char *p, uint64_t v) {
    char tmp[20];
    size_t n = 0, i;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

/* Nanoseconds as microseconds with three decimals ("1234.567"), exactly. */
static size_t an_fmt_us(char *p, uint64_t ns) {
    size_t n = an_fmt_u64(p, ns / 1000);
    uint64_t f = ns % 1000;
    p[n++] = '.';
    p[n++] = (char)('0' + f / 100);
    p[n++] = (char)('0' + f / 10 % 10);
    p[n++] = (char)('0' + f % 10);
    return n;
}

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0 when it is invalid
 * (bad lead or continuation byte, overlong form, surrogate, above U+10FFFF). */
static size_t an_utf8_len(const unsigned char *s, size_t n) {
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
static void an_out_json_str(an_out *o, const char *s) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    an_out_bytes(o, "\"", 1);
    while (i < n) {
        unsigned c = p[i];
        size_t k;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            size_t j = i + 1;
            while (j < n && p[j] >= 0x20 && p[j] != '"' && p[j] != '\\' && p[j] < 0x80) j++;
            an_out_bytes(o, p + i, j - i);
            i = j;
        } else if (c == '"' || c == '\\') {
            char e[2];
            e[0] = '\\';
            e[1] = (char)c;
            an_out_bytes(o, e, 2);
            i++;
        } else if (c < 0x20) {
            char e[6];
            e[0] = '\\';
            e[1] = 'u';
            e[2] = '0';
            e[3] = '0';
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            if (c == '\n') an_out_bytes(o, "\\n", 2);
            else if (c == '\t') an_out_bytes(o, "\\t", 2);
            else if (c == '\r') an_out_bytes(o, "\\r", 2);
            else an_out_bytes(o, e, 6);
            i++;
        } else if ((k = an_utf8_len(p + i, n - i)) != 0) {
            an_out_bytes(o, p + i, k);
            i += k;
        } else {
            an_out_bytes(o, "\\ufffd", 6);
            i++;
        }
    }
    an_out_bytes(o, "\"", 1);
}

/* s for a text line: control characters as \n, \t, \r or \xNN, invalid UTF-8 bytes as
 * U+FFFD, so that a name can never break the line structure or the terminal. */
static void an_out_text(an_out *o, const char *s) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t k;
        if (c >= 0x20 && c < 0x7F) {
            size_t j = i + 1;
            while (j < n && p[j] >= 0x20 && p[j] < 0x7F) j++;
            an_out_bytes(o, p + i, j - i);
            i = j;
        } else if (c < 0x20 || c == 0x7F) {
            char e[4];
            e[0] = '\\';
            e[1] = 'x';
            e[2] = hex[c >> 4];
            e[3] = hex[c & 15];
            if (c == '\n') an_out_bytes(o, "\\n", 2);
            else if (c == '\t') an_out_bytes(o, "\\t", 2);
            else if (c == '\r') an_out_bytes(o, "\\r", 2);
            else an_out_bytes(o, e, 4);
            i++;
        } else if ((k = an_utf8_len(p + i, n - i)) != 0) {
            an_out_bytes(o, p + i, k);
            i += k;
        } else {
            an_out_bytes(o, "\xef\xbf\xbd", 3);
            i++;
        }
    }
}

/* Copies s into dst (cap >= 4) as valid UTF-8: invalid bytes become U+FFFD (EF BF BD);
 * stops before a sequence that would not fit. Returns the length (no NUL written). */
static size_t an_utf8_clean(const char *s, char *dst, size_t cap) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, o = 0;
    while (i < n) {
        size_t k = an_utf8_len(p + i, n - i);
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
static const char *an_fmt_dur(char *buf, size_t cap, uint64_t ns) {
    if (ns < 1000) snprintf(buf, cap, "%lluns", (an_ull)ns);
    else if (ns < 1000000) snprintf(buf, cap, "%llu.%03lluus", (an_ull)(ns / 1000), (an_ull)(ns % 1000));
    else if (ns < 1000000000) snprintf(buf, cap, "%llu.%03llums", (an_ull)(ns / 1000000), (an_ull)(ns / 1000 % 1000));
    else snprintf(buf, cap, "%llu.%03llus", (an_ull)(ns / 1000000000), (an_ull)(ns / 1000000 % 1000));
    return buf;
}

static int an_isatty(FILE *f) { return f && an_isatty_fd(an_fileno(f)); }

/* ==== progress ======================================================================= */
/* A percentage on stderr, refreshed every 1/64 of the work, and only when stderr is a
 * terminal (and the output is not that terminal): never in pipes, files or logs. */
typedef struct an_progress {
    FILE *err;
    const char *what;
    uint64_t total, done, next, step;
    int on;
} an_progress;

static void an_progress_init(an_progress *p, FILE *err, FILE *out, const char *what,
                             uint64_t total) {
    memset(p, 0, sizeof *p);
    p->err = err;
    p->what = what;
    p->total = total;
    p->on = total >= 1000000 && an_isatty(err) && (!out || !an_isatty(out));
    p->step = total / 64 + 1;
    p->next = p->on ? p->step : UINT64_MAX;
}

static void an_progress_show(an_progress *p) {
    fprintf(p->err, "\r%s: %3u%%", p->what, (unsigned)(p->done * 100 / (p->total ? p->total : 1)));
    fflush(p->err);
    p->next = p->done + p->step;
}

#define AN_PROGRESS_TICK(p) do { if (++(p)->done >= (p)->next) an_progress_show(p); } while (0)

static void an_progress_end(an_progress *p) {
    if (p->on) {
        fprintf(p->err, "\r%*s\r", (int)strlen(p->what) + 7, "");
        fflush(p->err);
    }
}

/* ==== hash map ======================================================================= */
/* u64 -> u64, open addressing with linear probing, at most half full. It only grows
 * (keys are never removed), so its size is the number of distinct keys it has seen. */
typedef struct an_slot {
    uint64_t key, val;
    uint32_t used;
} an_slot;

typedef struct an_map {
    an_slot *slots;
    size_t cap, count;           /* cap is 0 or a power of two */
} an_map;

static size_t an_hash(uint64_t x, size_t mask) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (size_t)x & mask;
}

static uint64_t *an_map_find(const an_map *m, uint64_t key) {
    size_t i;
    if (!m->cap) return NULL;
    for (i = an_hash(key, m->cap - 1); m->slots[i].used; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key) return &m->slots[i].val;
    return NULL;
}

/* The value of key, inserted as 0 (and *is_new set) when absent; NULL when out of memory. */
static uint64_t *an_map_put(an_map *m, uint64_t key, int *is_new) {
    size_t i;
    if (is_new) *is_new = 0;
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16, k;
        an_slot *s = (an_slot *)calloc(cap, sizeof *s);
        if (!s) return NULL;
        for (k = 0; k < m->cap; k++) {
            if (!m->slots[k].used) continue;
            for (i = an_hash(m->slots[k].key, cap - 1); s[i].used; i = (i + 1) & (cap - 1)) {}
            s[i] = m->slots[k];
        }
        free(m->slots);
        m->slots = s;
        m->cap = cap;
    }
    for (i = an_hash(key, m->cap - 1); m->slots[i].used; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key) return &m->slots[i].val;
    m->slots[i].used = 1;
    m->slots[i].key = key;
    m->slots[i].val = 0;
    m->count++;
    if (is_new) *is_new = 1;
    return &m->slots[i].val;
}

static void an_map_free(an_map *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* The set of function ids on one thread's stack: open addressing with Fibonacci hashing
 * and backward-shift deletion, so it holds only what is on the stack right now, stays a
 * few cache lines in real traces, and answers "is f on the stack?" in O(1). */
#define AN_FID_EMPTY UINT64_MAX          /* marks a free slot; that id itself is has_max */

typedef struct an_fidset {
    uint64_t *keys;
    size_t cap, count;           /* cap is 0 or a power of two */
    unsigned shift;              /* 64 - log2(cap) */
    int has_max;                 /* the id AN_FID_EMPTY is in the set */
} an_fidset;

static size_t an_fidset_home(const an_fidset *s, uint64_t k) {
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> s->shift);
}

static int an_fidset_has(const an_fidset *s, uint64_t k) {
    size_t i;
    if (k == AN_FID_EMPTY) return s->has_max;
    if (!s->cap) return 0;
    for (i = an_fidset_home(s, k); s->keys[i] != AN_FID_EMPTY; i = (i + 1) & (s->cap - 1))
        if (s->keys[i] == k) return 1;
    return 0;
}

/* Adds k: 1 when it was absent, 0 when present, -1 when out of memory. */
static int an_fidset_add(an_fidset *s, uint64_t k) {
    size_t i;
    if (k == AN_FID_EMPTY) {
        if (s->has_max) return 0;
        s->has_max = 1;
        return 1;
    }
    if ((s->count + 1) * 2 > s->cap) {
        an_fidset bigger;
        size_t j;
        bigger.cap = s->cap ? s->cap * 2 : 64;
        bigger.shift = s->cap ? s->shift - 1 : 58;
        bigger.count = s->count;
        bigger.has_max = s->has_max;
        bigger.keys = (uint64_t *)malloc(bigger.cap * sizeof *bigger.keys);
        if (!bigger.keys) return -1;
        memset(bigger.keys, 0xFF, bigger.cap * sizeof *bigger.keys);
        for (j = 0; j < s->cap; j++) {
            if (s->keys[j] == AN_FID_EMPTY) continue;
            for (i = an_fidset_home(&bigger, s->keys[j]); bigger.keys[i] != AN_FID_EMPTY;
                 i = (i + 1) & (bigger.cap - 1)) {}
            bigger.keys[i] = s->keys[j];
        }
        free(s->keys);
        *s = bigger;
    }
    for (i = an_fidset_home(s, k); s->keys[i] != AN_FID_EMPTY; i = (i + 1) & (s->cap - 1))
        if (s->keys[i] == k) return 0;
    s->keys[i] = k;
    s->count++;
    return 1;
}

static void an_fidset_del(an_fidset *s, uint64_t k) {
    size_t i, j, mask = s->cap - 1;
    if (k == AN_FID_EMPTY) {
        s->has_max = 0;
        return;
    }
    if (!s->cap) return;
    for (i = an_fidset_home(s, k); s->keys[i] != k; i = (i + 1) & mask)
        if (s->keys[i] == AN_FID_EMPTY) return;
    /* close the gap: pull back every later key of the run that may not stay behind it */
    for (j = (i + 1) & mask; s->keys[j] != AN_FID_EMPTY; j = (j + 1) & mask) {
        size_t h = an_fidset_home(s, s->keys[j]);
        int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            s->keys[i] = s->keys[j];
            i = j;
        }
    }
    s->keys[i] = AN_FID_EMPTY;
    s->count--;
}

/* ==== source: the PATH argument ====================================================== */
typedef struct an_source {
    atf_session_reader reader;   /* a real session, or one built around a lone thread */
    int only_one;                /* PATH named one thread: slot */
    uint32_t slot;
    uint64_t pid;                /* from the pid_<N> directory name; 1 when unknown */
} an_source;

/* Whether `name` is prefix followed by decimal digits only; the number in *v. */
static int an_parse_suffix(const char *name, const char *prefix, uint64_t *v) {
    size_t n = strlen(prefix);
    const char *p = name + n;
    uint64_t x = 0;
    if (strncmp(name, prefix, n) != 0 || !*p) return 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || x > (UINT32_MAX - 9) / 10) return 0;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *v = x;
    return 1;
}

/* Splits path (trailing separators ignored) into its directory and last component. */
static void an_split_path(const char *path, char *dir, char *base, size_t cap) {
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

static int an_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int an_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A session reader around one thread directory, for a thread outside a readable
 * session. Its thread array is malloc'd and freed by atf_session_reader_close(), which
 * uses the library's default allocator, as every tool does. */
static atf_result an_source_lone_thread(an_source *s, const char *tdir, uint32_t slot) {
    atf_session_reader *r = &s->reader;
    atf_session_thread *t;
    atf_index_event ev;
    uint64_t i, prev = 0;
    atf_result rc;
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", tdir);
    r->manifest = ATF_MANIFEST_MISSING;
    r->threads = (atf_session_thread *)calloc(1, sizeof *r->threads);
    if (!r->threads) return ATF_E_NOMEM;
    t = &r->threads[0];
    t->slot = slot;
    rc = atf_thread_reader_open(&t->reader, tdir, NULL);
    if (rc != ATF_OK) {
        r->error = t->reader.error;
        free(r->threads);
        r->threads = NULL;
        return rc;
    }
    r->thread_count = 1;
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
    return ATF_OK;
}

static int an_source_selected(const an_source *s, size_t i);

/* Opens PATH; on failure prints why (file and offset) and returns AN_EXIT_DATA. */
static int an_source_open_files(an_source *s, const char *path, FILE *err, const char *cmd) {
    char dir[AN_PATH_MAX], base[AN_PATH_MAX], tdir[AN_PATH_MAX], probe[AN_PATH_MAX + 16];
    char msg[1024];
    uint64_t v;
    atf_result rc;
    memset(s, 0, sizeof *s);
    s->pid = 1;
    if (strlen(path) >= AN_PATH_MAX - 16) {
        fprintf(err, "atf %s: %s: path too long\n", cmd, path);
        return AN_EXIT_DATA;
    }
    snprintf(tdir, sizeof tdir, "%s", path);
    if (an_is_file(path)) { /* thread_N/index.atf: its directory */
        an_split_path(path, dir, base, sizeof dir);
        snprintf(tdir, sizeof tdir, "%s", dir);
    }
    snprintf(probe, sizeof probe, "%s/index.atf", tdir);
    if (!an_is_dir(tdir)) {
        fprintf(err, "atf %s: %s: no such directory or file\n", cmd, path);
        return AN_EXIT_DATA;
    }
    if (an_is_file(probe)) { /* a thread directory */
        char pdir[AN_PATH_MAX], pbase[AN_PATH_MAX];
        an_split_path(tdir, dir, base, sizeof dir);
        s->only_one = 1;
        s->slot = an_parse_suffix(base, "thread_", &v) ? (uint32_t)v : 0;
        an_split_path(dir, pdir, pbase, sizeof pdir);
        if (an_parse_suffix(pbase, "pid_", &v)) s->pid = v;
        if (an_parse_suffix(base, "thread_", &v) &&
            atf_session_reader_open(&s->reader, dir, NULL) == ATF_OK) {
            atf_session_thread *t = atf_session_reader_thread(&s->reader, s->slot);
            if (t && !t->missing) return AN_EXIT_OK;
            atf_session_reader_close(&s->reader);
        }
        rc = an_source_lone_thread(s, tdir, s->slot);
        if (rc == ATF_E_NOMEM) {
            fprintf(err, "atf %s: out of memory\n", cmd);
            return AN_EXIT_DATA;
        }
        if (rc != ATF_OK) {
            fprintf(err, "atf %s: %s\n", cmd, atf_error_format(&s->reader.error, msg, sizeof msg));
            return AN_EXIT_DATA;
        }
        return AN_EXIT_OK;
    }
    an_split_path(tdir, dir, base, sizeof dir);
    if (an_parse_suffix(base, "pid_", &v)) s->pid = v;
    rc = atf_session_reader_open(&s->reader, tdir, NULL);
    if (rc != ATF_OK) {
        if (s->reader.error.code != ATF_OK)
            fprintf(err, "atf %s: %s\n", cmd, atf_error_format(&s->reader.error, msg, sizeof msg));
        else
            fprintf(err, "atf %s: %s: %s\n", cmd, path, atf_result_str(rc));
        return AN_EXIT_DATA;
    }
    return AN_EXIT_OK;
}

/* an_source_open_files, then a warning for each thread whose gaps.atf is damaged (the
 * only error an open thread keeps): the gaps past the damage are not known, so calls and
 * returns may be paired across them. Not an error: the events themselves are sound. */
static int an_source_open(an_source *s, const char *path, FILE *err, const char *cmd) {
    char msg[1024];
    size_t i;
    int status = an_source_open_files(s, path, err, cmd);
    if (status != AN_EXIT_OK) return status;
    for (i = 0; i < s->reader.thread_count; i++) {
        const atf_session_thread *t = &s->reader.threads[i];
        if (an_source_selected(s, i) && t->reader.error.code != ATF_OK)
            fprintf(err, "atf %s: warning: %s (gaps past it are not known)\n", cmd,
                    atf_error_format(&t->reader.error, msg, sizeof msg));
    }
    return AN_EXIT_OK;
}

static void an_source_close(an_source *s) { atf_session_reader_close(&s->reader); }

/* The merge filter of the source: every thread, or the one PATH named. */
static void an_source_filter(const an_source *s, atf_merge_filter *f) {
    memset(f, 0, sizeof *f);
    if (s->only_one) {
        f->slots = &s->slot;
        f->slot_count = 1;
    }
}

/* Whether thread i takes part (present, and the one asked for if any). */
static int an_source_selected(const an_source *s, size_t i) {
    const atf_session_thread *t = &s->reader.threads[i];
    return !t->missing && (!s->only_one || t->slot == s->slot);
}

static uint64_t an_source_events(const an_source *s) {
    uint64_t n = 0;
    size_t i;
    for (i = 0; i < s->reader.thread_count; i++)
        if (an_source_selected(s, i)) n += s->reader.threads[i].reader.index.event_count;
    return n;
}

/* The function's name: the manifest's symbol, or its id in hex (into hex[19+]). */
static const char *an_name(const an_source *s, uint64_t fid, char *hex, size_t cap) {
    const char *n = atf_session_reader_symbol(&s->reader, fid);
    if (n && *n) return n;
    snprintf(hex, cap, "0x%016llx", (an_ull)fid);
    return hex;
}

/* The OS thread id of a thread, or its slot when the files do not say. */
static uint32_t an_tid(const atf_session_thread *t) { return t->os_thread_id ? t->os_thread_id : t->slot; }

/* ==== walk: call/return pairing ====================================================== */
enum { AN_LEAVE_RETURN = 0, AN_LEAVE_UNWOUND = 1, AN_LEAVE_AT_END = 2, AN_LEAVE_AT_GAP = 3 };

typedef struct an_frame {
    uint64_t fid, start_ns;
    uint64_t child_ns;           /* time spent in direct callees */
    uint64_t outermost;          /* no other frame of fid below it on the stack */
} an_frame;

typedef struct an_thread {
    an_frame *stack;
    size_t depth, cap;
    uint64_t skipped;            /* open calls beyond AN_MAX_DEPTH, not tracked */
    an_fidset active;            /* the functions that have a frame on the stack */
    uint64_t events, first_ns, last_ns;
    uint64_t unmatched;          /* returns with no matching call, ignored */
    uint64_t unwound;            /* frames closed by the return of an outer frame */
    uint64_t open_at_end;        /* frames closed at the thread's last timestamp */
    uint64_t too_deep;           /* calls skipped for depth */
    uint64_t gaps;               /* gaps met (where the recorder lost events) */
    uint64_t cut_by_gap;         /* frames closed at the last event before a gap */
} an_thread;

typedef struct an_walk {
    an_thread *threads;          /* one per thread of the reader, same order */
    size_t count;
    int nomem;
    void *ctx;
    /* a frame opens at depth `depth` (0 = outermost) */
    void (*enter)(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth);
    /* a frame closes; `outermost`: no other frame of the function is on the stack */
    void (*leave)(void *ctx, size_t ti, const an_frame *f, uint64_t end_ns, size_t depth,
                  int how, int outermost);
    /* a return with no matching frame, ignored; depth = the stack's */
    void (*unmatched)(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth);
    /* events were lost at time ts (the frames open before it are closed already) */
    void (*gap)(void *ctx, size_t ti, const atf_gap *g, uint64_t ts);
} an_walk;

static int an_walk_init(an_walk *w, size_t thread_count) {
    memset(w, 0, sizeof *w);
    w->threads = (an_thread *)calloc(thread_count ? thread_count : 1, sizeof *w->threads);
    if (!w->threads) return 0;
    w->count = thread_count;
    return 1;
}

static void an_walk_deinit(an_walk *w) {
    size_t i;
    for (i = 0; i < w->count; i++) {
        free(w->threads[i].stack);
        free(w->threads[i].active.keys);
    }
    free(w->threads);
    memset(w, 0, sizeof *w);
}

static void an_walk_pop(an_walk *w, size_t ti, uint64_t end_ns, int how) {
    an_thread *t = &w->threads[ti];
    an_frame f = t->stack[--t->depth];
    uint64_t dur = end_ns > f.start_ns ? end_ns - f.start_ns : 0;
    if (f.outermost) an_fidset_del(&t->active, f.fid);
    if (t->depth) t->stack[t->depth - 1].child_ns += dur;
    if (w->leave) w->leave(w->ctx, ti, &f, end_ns, t->depth, how, (int)f.outermost);
}

static void an_walk_event(an_walk *w, size_t ti, uint32_t kind, uint64_t fid, uint64_t ts) {
    an_thread *t = &w->threads[ti];
    int added;
    if (!t->events++) t->first_ns = ts;
    if (ts > t->last_ns) t->last_ns = ts;
    if (kind == ATF_EVENT_CALL) {
        an_frame *f;
        if (t->skipped || t->depth >= AN_MAX_DEPTH) {
            t->skipped++;
            t->too_deep++;
            return;
        }
        if (t->depth == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 64;
            an_frame *s = (an_frame *)realloc(t->stack, cap * sizeof *s);
            if (!s) {
                w->nomem = 1;
                t->skipped++;
                return;
            }
            t->stack = s;
            t->cap = cap;
        }
        if ((added = an_fidset_add(&t->active, fid)) < 0) {
            w->nomem = 1;
            t->skipped++;
            return;
        }
        f = &t->stack[t->depth++];
        f->fid = fid;
        f->start_ns = ts;
        f->child_ns = 0;
        f->outermost = (uint64_t)added;
        if (w->enter) w->enter(w->ctx, ti, fid, ts, t->depth - 1);
    } else if (kind == ATF_EVENT_RETURN || kind == ATF_EVENT_EXCEPTION) {
        if (t->skipped) {
            t->skipped--;
            return;
        }
        if (t->depth && t->stack[t->depth - 1].fid == fid) {
            an_walk_pop(w, ti, ts, AN_LEAVE_RETURN);
            return;
        }
        if (!an_fidset_has(&t->active, fid)) {
            t->unmatched++;
            if (w->unmatched) w->unmatched(w->ctx, ti, fid, ts, t->depth);
            return;
        }
        while (t->stack[t->depth - 1].fid != fid) {
            t->unwound++;
            an_walk_pop(w, ti, ts, AN_LEAVE_UNWOUND);
        }
        an_walk_pop(w, ti, ts, AN_LEAVE_RETURN);
    }
}

/* Thread ti lost events here (g), before an event at next_ts (UINT64_MAX: at the end):
 * closes its open frames at its last event before the gap, forgets the calls skipped for
 * depth, then reports the gap at its first lost stamp, kept between the two events (the
 * last one before when the stamp is unknown). */
static void an_walk_gap(an_walk *w, size_t ti, const atf_gap *g, uint64_t next_ts) {
    an_thread *t = &w->threads[ti];
    uint64_t at = g->first_lost_ns;
    t->gaps++;
    while (t->depth) {
        t->cut_by_gap++;
        an_walk_pop(w, ti, t->last_ns, AN_LEAVE_AT_GAP);
    }
    t->skipped = 0;
    if (t->events && at < t->last_ns) at = t->last_ns; /* also when unknown (0) */
    if (at > next_ts || (at == 0 && next_ts != UINT64_MAX)) at = next_ts;
    if (w->gap) w->gap(w->ctx, ti, g, at);
}

/* Closes the frames still open in thread ti at its last timestamp. */
static void an_walk_finish_thread(an_walk *w, size_t ti) {
    an_thread *t = &w->threads[ti];
    while (t->depth) {
        t->open_at_end++;
        an_walk_pop(w, ti, t->last_ns, AN_LEAVE_AT_END);
    }
    t->skipped = 0;
}

/* Runs every event of the source's selected threads (or only slot *only) through the
 * walk in merged time order, then closes what is still open. ATF_E_NOMEM on failure. */
static atf_result an_walk_run(an_walk *w, an_source *s, const uint32_t *only, an_progress *p) {
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter f;
    atf_result rc;
    size_t i;
    an_source_filter(s, &f);
    if (only) {
        f.slots = only;
        f.slot_count = 1;
    }
    rc = atf_merge_init(&m, &s->reader, &f);
    if (rc != ATF_OK) return rc;
    while (atf_merge_next(&m, &it) == ATF_OK) {
        size_t ti = (size_t)(it.thread - s->reader.threads);
        if (it.gap) an_walk_gap(w, ti, it.gap, it.event.timestamp_ns);
        an_walk_event(w, ti, it.event.kind, it.event.function_id, it.event.timestamp_ns);
        AN_PROGRESS_TICK(p);
    }
    atf_merge_deinit(&m);
    for (i = 0; i < w->count && i < s->reader.thread_count; i++) { /* gaps at the end */
        const atf_thread_reader *t = &s->reader.threads[i].reader;
        size_t k = t->gap_count;
        if (only ? s->reader.threads[i].slot != *only || s->reader.threads[i].missing
                 : !an_source_selected(s, i))
            continue;
        while (k > 0 && t->gaps[k - 1].index_seq >= t->index.event_count) k--;
        for (; k < t->gap_count; k++) an_walk_gap(w, i, &t->gaps[k], UINT64_MAX);
    }
    for (i = 0; i < w->count; i++) an_walk_finish_thread(w, i);
    return w->nomem ? ATF_E_NOMEM : ATF_OK;
}

/* ==== command line =================================================================== */
/* Matches option `name` at argv[*i], as "--name VALUE" or "--name=VALUE". Returns 1 with
 * *value set, 0 when argv[*i] is another option, -1 when the value is missing. */
static int an_opt_value(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

/* A decimal number that fits in max; 0 when s is not one. */
static int an_parse_u64(const char *s, uint64_t max, uint64_t *out) {
    uint64_t v = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        if (v > (max - (uint64_t)(*s - '0')) / 10) return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 1;
}

static int AN_PRINTF(4, 5) an_usage_error(FILE *err, const char *cmd, const char *usage,
                                          const char *fmt, ...) {
    va_list ap;
    fprintf(err, "atf %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fprintf(err, "\n%s", usage);
    return AN_EXIT_USAGE;
}

static int an_output_error(FILE *err, const char *cmd, const char *what, const an_out *o) {
    fprintf(err, "atf %s: %s: write failed: %s\n", cmd, what,
            o->sys_errno ? strerror(o->sys_errno) : "I/O error");
    return AN_EXIT_DATA;
}

/* ==== stats ========================================================================== */
static const char an_stats_usage[] =
    "usage: atf stats PATH [--sort self|total|calls|name] [--limit N] [--json]\n"
    "\n"
    "Per function: calls, total (inclusive) time, self time, and min/avg/max time per\n"
    "call; per thread: events, events dropped while recording (from the manifest) and\n"
    "time span; then the gaps (events the recorder lost) and the unbalanced input, when\n"
    "there are any. PATH is a session's pid_* directory (all threads) or a thread_N\n"
    "directory (that thread).\n"
    "\n"
    "  --sort KEY  order of the functions: self (self time, the default), total (total\n"
    "              time), calls, or name; largest first, names alphabetically\n"
    "  --limit N   print the first N functions only (default 0: all)\n"
    "  --json      print one JSON object:\n"
    "              {\"functions\":[{\"fid\":\"0x...\",\"name\":...,\"calls\":N,\"total_ns\":N,\n"
    "                \"self_ns\":N,\"min_ns\":N,\"max_ns\":N}],\n"
    "               \"threads\":[{\"slot\":N,\"tid\":N,\"events\":N,\"dropped\":N,\n"
    "                \"start_ns\":N,\"end_ns\":N,\"gaps\":N,\"events_lost\":N,\n"
    "                \"cut_by_gap\":N}]}\n"
    "              gaps and events_lost: the thread's gaps.atf (where the recorder lost\n"
    "              events); cut_by_gap: its frames closed at a gap\n"
    "\n"
    "Calls and returns are paired per thread. Total time counts the outermost call of a\n"
    "recursive function once; min/avg/max are per call. A return with no matching call\n"
    "is ignored; a return of an outer frame closes the frames above it at its time;\n"
    "frames still open at the end are closed at their thread's last event and counted.\n"
    "Nothing is paired across a gap (events the recorder lost): the frames open there are\n"
    "closed at their thread's last event before it and counted as cut by a gap (their\n"
    "time up to there is included, so a gap never lengthens a call), and a return after\n"
    "the gap whose call came before it is ignored as a return without a matching call.\n"
    "Exit status: 0 ok, 1 the trace cannot be read, 2 usage error.\n";

typedef struct an_fn {
    uint64_t fid, calls;
    uint64_t total_ns;           /* outermost activations only (recursion counted once) */
    uint64_t self_ns, min_ns, max_ns;
    uint64_t sum_ns;             /* every call's inclusive time, for the average */
    const char *sym;             /* manifest symbol or NULL, resolved before sorting */
    char hex[20];                /* the id as 0x%016llx */
} an_fn;

static const char *an_fn_name(const an_fn *f) { return f->sym ? f->sym : f->hex; }

typedef struct an_stats {
    an_map index;                /* fid -> position in fns */
    an_fn *fns;
    size_t count, cap;
    int nomem;
} an_stats;

static void an_stats_leave(void *ctx, size_t ti, const an_frame *f, uint64_t end_ns, size_t depth,
                           int how, int outermost) {
    an_stats *st = (an_stats *)ctx;
    uint64_t dur = end_ns > f->start_ns ? end_ns - f->start_ns : 0, *pos;
    an_fn *fn;
    int is_new;
    (void)ti;
    (void)depth;
    (void)how;
    pos = an_map_put(&st->index, f->fid, &is_new);
    if (!pos) {
        st->nomem = 1;
        return;
    }
    if (is_new) {
        if (st->count == st->cap) {
            size_t cap = st->cap ? st->cap * 2 : 64;
            an_fn *fns = (an_fn *)realloc(st->fns, cap * sizeof *fns);
            if (!fns) {
                st->nomem = 1;
                return;
            }
            st->fns = fns;
            st->cap = cap;
        }
        *pos = st->count;
        fn = &st->fns[st->count++];
        memset(fn, 0, sizeof *fn);
        fn->fid = f->fid;
        fn->min_ns = UINT64_MAX;
    }
    fn = &st->fns[*pos];
    fn->calls++;
    fn->sum_ns += dur;
    if (outermost) fn->total_ns += dur;
    fn->self_ns += dur > f->child_ns ? dur - f->child_ns : 0;
    if (dur < fn->min_ns) fn->min_ns = dur;
    if (dur > fn->max_ns) fn->max_ns = dur;
}

static void an_stats_free(an_stats *st) {
    an_map_free(&st->index);
    free(st->fns);
    memset(st, 0, sizeof *st);
}

/* Runs the whole source through the walk into st (and w, kept for the thread figures).
 * Threads are independent here, so they are walked one after the other: each is then a
 * sequential scan, without the cost of interleaving them by time. */
static atf_result an_stats_collect(an_source *s, an_stats *st, an_walk *w, an_progress *p) {
    atf_result rc = ATF_OK;
    size_t i;
    memset(st, 0, sizeof *st);
    if (!an_walk_init(w, s->reader.thread_count)) return ATF_E_NOMEM;
    w->ctx = st;
    w->leave = an_stats_leave;
    for (i = 0; i < s->reader.thread_count && rc == ATF_OK; i++)
        if (an_source_selected(s, i)) rc = an_walk_run(w, s, &s->reader.threads[i].slot, p);
    if (rc == ATF_OK && st->nomem) rc = ATF_E_NOMEM;
    return rc;
}

static int an_cmp_fid(const an_fn *a, const an_fn *b) { return a->fid < b->fid ? -1 : a->fid > b->fid; }
static int an_cmp_desc(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

static int an_sort_self(const void *x, const void *y) {
    const an_fn *a = (const an_fn *)x, *b = (const an_fn *)y;
    int c = an_cmp_desc(a->self_ns, b->self_ns);
    return c ? c : an_cmp_fid(a, b);
}
static int an_sort_total(const void *x, const void *y) {
    const an_fn *a = (const an_fn *)x, *b = (const an_fn *)y;
    int c = an_cmp_desc(a->total_ns, b->total_ns);
    return c ? c : an_cmp_fid(a, b);
}
static int an_sort_calls(const void *x, const void *y) {
    const an_fn *a = (const an_fn *)x, *b = (const an_fn *)y;
    int c = an_cmp_desc(a->calls, b->calls);
    return c ? c : an_cmp_fid(a, b);
}
static int an_sort_name(const void *x, const void *y) {
    const an_fn *a = (const an_fn *)x, *b = (const an_fn *)y;
    int c = strcmp(an_fn_name(a), an_fn_name(b));
    return c ? c : an_cmp_fid(a, b);
}

/* Resolves the names and sorts st->fns by key, keeping st->index in step. */
static void an_stats_sort(an_stats *st, const an_source *s, const char *key) {
    int (*cmp)(const void *, const void *) = an_sort_self;
    size_t i;
    for (i = 0; i < st->count; i++) {
        an_fn *f = &st->fns[i];
        f->sym = atf_session_reader_symbol(&s->reader, f->fid);
        if (f->sym && !*f->sym) f->sym = NULL;
        snprintf(f->hex, sizeof f->hex, "0x%016llx", (an_ull)f->fid);
    }
    if (strcmp(key, "total") == 0) cmp = an_sort_total;
    else if (strcmp(key, "calls") == 0) cmp = an_sort_calls;
    else if (strcmp(key, "name") == 0) cmp = an_sort_name;
    if (st->count) qsort(st->fns, st->count, sizeof *st->fns, cmp);
    for (i = 0; i < st->count; i++) *an_map_find(&st->index, st->fns[i].fid) = i;
}

static void an_stats_json(an_out *o, const an_stats *st, const an_walk *w, const an_source *s,
                          size_t limit) {
    size_t i, n = limit && limit < st->count ? limit : st->count, first = 1;
    an_out_str(o, "{\"functions\":[");
    for (i = 0; i < n; i++) {
        const an_fn *f = &st->fns[i];
        an_out_printf(o, "%s\n{\"fid\":\"0x%016llx\",\"name\":", i ? "," : "", (an_ull)f->fid);
        an_out_json_str(o, an_fn_name(f));
        an_out_printf(o, ",\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,\"min_ns\":%llu,"
                         "\"max_ns\":%llu}",
                      (an_ull)f->calls, (an_ull)f->total_ns, (an_ull)f->self_ns,
                      (an_ull)f->min_ns, (an_ull)f->max_ns);
    }
    an_out_str(o, "],\n\"threads\":[");
    for (i = 0; i < s->reader.thread_count; i++) {
        const atf_session_thread *t = &s->reader.threads[i];
        const an_thread *wt = &w->threads[i];
        if (s->only_one && t->slot != s->slot) continue;
        an_out_printf(o, "%s\n{\"slot\":%u,\"tid\":%u,\"events\":%llu,\"dropped\":%llu,"
                         "\"start_ns\":%llu,\"end_ns\":%llu,\"gaps\":%llu,\"events_lost\":%llu,"
                         "\"cut_by_gap\":%llu}",
                      first ? "" : ",", t->slot, t->os_thread_id, (an_ull)wt->events,
                      (an_ull)t->events_dropped, (an_ull)wt->first_ns, (an_ull)wt->last_ns,
                      (an_ull)t->reader.gap_count, (an_ull)t->reader.events_lost,
                      (an_ull)wt->cut_by_gap);
        first = 0;
    }
    an_out_str(o, "]}\n");
}

static void an_stats_text(an_out *o, const an_stats *st, const an_walk *w, const an_source *s,
                          size_t limit, const char *key) {
    size_t i, n = limit && limit < st->count ? limit : st->count;
    uint64_t unmatched = 0, unwound = 0, open_at_end = 0, too_deep = 0;
    uint64_t gaps = 0, lost = 0, cut = 0, gap_threads = 0;
    char a[32], b[32], c[32], d[32], e[32];
    an_out_printf(o, "functions: %llu", (an_ull)st->count);
    if (n < st->count) an_out_printf(o, " (first %llu shown)", (an_ull)n);
    an_out_printf(o, ", by %s%s\n", strcmp(key, "name") == 0 ? "name" : key,
                  strcmp(key, "self") == 0 || strcmp(key, "total") == 0 ? " time" : "");
    an_out_printf(o, "%12s %12s %12s %12s %12s %12s  %s\n", "calls", "total", "self", "min", "avg",
                  "max", "function");
    for (i = 0; i < n; i++) {
        const an_fn *f = &st->fns[i];
        an_out_printf(o, "%12llu %12s %12s %12s %12s %12s  ", (an_ull)f->calls,
                      an_fmt_dur(a, sizeof a, f->total_ns), an_fmt_dur(b, sizeof b, f->self_ns),
                      an_fmt_dur(c, sizeof c, f->min_ns),
                      an_fmt_dur(d, sizeof d, f->calls ? f->sum_ns / f->calls : 0),
                      an_fmt_dur(e, sizeof e, f->max_ns));
        an_out_text(o, an_fn_name(f));
        an_out_str(o, "\n");
    }
    an_out_printf(o, "\nthreads: %llu\n", (an_ull)(s->only_one ? 1 : s->reader.thread_count));
    an_out_printf(o, "%6s %10s %12s %10s %20s %20s %12s  %s\n", "slot", "tid", "events", "dropped",
                  "start_ns", "end_ns", "span", "name");
    for (i = 0; i < s->reader.thread_count; i++) {
        const atf_session_thread *t = &s->reader.threads[i];
        const an_thread *wt = &w->threads[i];
        if (s->only_one && t->slot != s->slot) continue;
        an_out_printf(o, "%6u %10u %12llu %10llu %20llu %20llu %12s  ", t->slot,
                      t->os_thread_id, (an_ull)wt->events, (an_ull)t->events_dropped,
                      (an_ull)wt->first_ns, (an_ull)wt->last_ns,
                      an_fmt_dur(a, sizeof a, wt->last_ns - wt->first_ns));
        an_out_text(o, t->name);
        an_out_str(o, t->missing ? "(missing)\n" : "\n");
        unmatched += wt->unmatched;
        unwound += wt->unwound;
        open_at_end += wt->open_at_end;
        too_deep += wt->too_deep;
        gaps += t->reader.gap_count;
        lost += t->reader.events_lost;
        cut += wt->cut_by_gap;
        gap_threads += t->reader.gap_count != 0;
    }
    if (gaps)
        an_out_printf(o, "\ngaps: %llu in %llu thread%s, %llu events lost while recording (nothing "
                         "is paired across a gap)\n",
                      (an_ull)gaps, (an_ull)gap_threads, gap_threads == 1 ? "" : "s", (an_ull)lost);
    if (unmatched || unwound || open_at_end || too_deep || cut) {
        an_out_str(o, "\nunbalanced input:\n");
        if (unmatched)
            an_out_printf(o, "  %llu returns without a matching call (ignored)\n", (an_ull)unmatched);
        if (unwound)
            an_out_printf(o, "  %llu frames closed by the return of an outer frame\n", (an_ull)unwound);
        if (cut)
            an_out_printf(o, "  %llu frames cut by a gap (closed at their thread's last event "
                             "before it)\n", (an_ull)cut);
        if (open_at_end)
            an_out_printf(o, "  %llu frames open at the end (closed at their thread's last event)\n",
                          (an_ull)open_at_end);
        if (too_deep)
            an_out_printf(o, "  %llu calls deeper than %u frames (not counted)\n", (an_ull)too_deep,
                          (unsigned)AN_MAX_DEPTH);
    }
}

static int an_stats_main(FILE *out, FILE *err, int argc, char **argv) {
    const char *cmd = "stats", *path = NULL, *key = "self", *v;
    uint64_t limit = 0;
    int json = 0, i, r, no_more = 0, status;
    an_source src;
    an_stats st;
    an_walk w;
    an_progress p;
    an_out o;
    atf_result rc;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (no_more || a[0] != '-' || !a[1]) {
            if (path) return an_usage_error(err, cmd, an_stats_usage, "more than one PATH ('%s')", a);
            path = a;
        } else if (strcmp(a, "--") == 0) {
            no_more = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(an_stats_usage, out);
            return AN_EXIT_OK;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if ((r = an_opt_value(argc, argv, &i, "--sort", &v)) != 0) {
            if (r < 0) return an_usage_error(err, cmd, an_stats_usage, "--sort needs a value");
            if (strcmp(v, "self") && strcmp(v, "total") && strcmp(v, "calls") && strcmp(v, "name"))
                return an_usage_error(err, cmd, an_stats_usage, "unknown sort key '%s'", v);
            key = v;
        } else if ((r = an_opt_value(argc, argv, &i, "--limit", &v)) != 0) {
            if (r < 0 || !an_parse_u64(v, SIZE_MAX, &limit))
                return an_usage_error(err, cmd, an_stats_usage, "--limit needs a number");
        } else {
            return an_usage_error(err, cmd, an_stats_usage, "unknown option '%s'", a);
        }
    }
    if (!path) return an_usage_error(err, cmd, an_stats_usage, "missing PATH");
    if ((status = an_source_open(&src, path, err, cmd)) != AN_EXIT_OK) return status;
    an_progress_init(&p, err, NULL, "atf stats", an_source_events(&src));
    rc = an_stats_collect(&src, &st, &w, &p);
    an_progress_end(&p);
    if (rc != ATF_OK) {
        fprintf(err, "atf %s: %s: %s\n", cmd, path, atf_result_str(rc));
        status = AN_EXIT_DATA;
    } else if (!an_out_init(&o, out)) {
        fprintf(err, "atf %s: out of memory\n", cmd);
        status = AN_EXIT_DATA;
    } else {
        an_stats_sort(&st, &src, key);
        if (json) an_stats_json(&o, &st, &w, &src, (size_t)limit);
        else an_stats_text(&o, &st, &w, &src, (size_t)limit, key);
        status = an_out_finish(&o) ? AN_EXIT_OK : an_output_error(err, cmd, "stdout", &o);
    }
    an_stats_free(&st);
    an_walk_deinit(&w);
    an_source_close(&src);
    return status;
}

/* ==== tree =========================================================================== */
static const char an_tree_usage[] =
    "usage: atf tree PATH [--thread SLOT] [--max-depth N]\n"
    "\n"
    "The call tree of each thread, in time order, indented by depth:\n"
    "  a call with callees opens with \"name {\" and closes with \"} name\" and its\n"
    "  duration; a call without callees is one line with its duration. Columns: time of\n"
    "  the line's event in microseconds since the first event shown, duration in\n"
    "  microseconds. Consecutive identical calls are shown one by one.\n"
    "\n"
    "  --thread SLOT  only thread SLOT (default: every thread, one after the other)\n"
    "  --max-depth N  hide calls nested N or more levels deep (default 0: show all);\n"
    "                 their time stays in their callers' durations\n"
    "\n"
    "Marks: \"(unwound)\" a frame closed by the return of an outer frame, \"(open at end)\"\n"
    "a frame still open when the thread's events end (closed at its last event), \"!\" a\n"
    "return with no matching call (ignored), \"(cut by a gap)\" a frame open where the\n"
    "recorder lost events, closed at the thread's last event before the gap, which then\n"
    "follows as a line \"~ gap: N events lost (REASON)\" at the time of the first lost\n"
    "event; nothing is paired across it (a return after it whose call came before it is\n"
    "a return with no matching call). The thread's header line counts its gaps.\n"
    "Exit status: 0 ok, 1 the trace cannot be read or has no thread SLOT, 2 usage error.\n";

typedef struct an_tree {
    an_out *out;
    const an_source *src;
    uint64_t base_ns;            /* time 0 of the first column */
    size_t max_depth;            /* 0 = all */
    int has_pending;             /* a call printed only once we know if it has callees */
    uint64_t pending_fid, pending_ts;
    size_t pending_depth;
} an_tree;

/* One line: time, duration (blank when has_dur is 0), indentation, text parts. */
static void an_tree_line(an_tree *t, uint64_t ts, int has_dur, uint64_t dur, size_t depth,
                         const char *pre, uint64_t fid, const char *post) {
    char num[32], hex[24], *p;
    size_t n, width, i;
    p = an_out_reserve(t->out, 64);
    n = an_fmt_us(num, ts > t->base_ns ? ts - t->base_ns : 0);
    for (i = n; i < 16; i++) *p++ = ' ';
    memcpy(p, num, n);
    p += n;
    *p++ = ' ';
    *p++ = ' ';
    n = has_dur ? an_fmt_us(num, dur) : 0;
    for (i = n; i < 14; i++) *p++ = ' ';
    memcpy(p, num, n);
    p += n;
    *p++ = ' ';
    *p++ = ' ';
    t->out->len = (size_t)(p - t->out->buf);
    for (width = depth * 2; width;) {
        size_t k = width < 32 ? width : 32;
        an_out_bytes(t->out, "                                ", k);
        width -= k;
    }
    an_out_str(t->out, pre);
    an_out_text(t->out, an_name(t->src, fid, hex, sizeof hex));
    an_out_str(t->out, post);
    an_out_bytes(t->out, "\n", 1);
}

static void an_tree_flush_pending(an_tree *t) {
    if (!t->has_pending) return;
    an_tree_line(t, t->pending_ts, 0, 0, t->pending_depth, "", t->pending_fid, " {");
    t->has_pending = 0;
}

static int an_tree_hidden(const an_tree *t, size_t depth) { return t->max_depth && depth >= t->max_depth; }

static void an_tree_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    an_tree *t = (an_tree *)ctx;
    (void)ti;
    if (an_tree_hidden(t, depth)) return;
    an_tree_flush_pending(t);
    t->has_pending = 1;
    t->pending_fid = fid;
    t->pending_ts = ts;
    t->pending_depth = depth;
}

static void an_tree_leave(void *ctx, size_t ti, const an_frame *f, uint64_t end_ns, size_t depth,
                          int how, int outermost) {
    an_tree *t = (an_tree *)ctx;
    const char *mark = how == AN_LEAVE_UNWOUND ? "  (unwound)"
                     : how == AN_LEAVE_AT_END ? "  (open at end)"
                     : how == AN_LEAVE_AT_GAP ? "  (cut by a gap)" : "";
    uint64_t dur = end_ns > f->start_ns ? end_ns - f->start_ns : 0;
    (void)ti;
    (void)outermost;
    if (an_tree_hidden(t, depth)) return;
    if (t->has_pending && t->pending_depth == depth) { /* no callee shown: one line */
        t->has_pending = 0;
        an_tree_line(t, f->start_ns, 1, dur, depth, "", f->fid, mark);
        return;
    }
    an_tree_flush_pending(t);
    an_tree_line(t, end_ns, 1, dur, depth, "} ", f->fid, mark);
}

static void an_tree_unmatched(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    an_tree *t = (an_tree *)ctx;
    (void)ti;
    if (an_tree_hidden(t, depth)) return;
    an_tree_flush_pending(t);
    an_tree_line(t, ts, 0, 0, depth, "! return from ", fid, " with no matching call (ignored)");
}

/* "~ gap: N events lost (dropped)" at the outermost depth, once its frames are closed. */
static void an_tree_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    an_tree *t = (an_tree *)ctx;
    char num[32], *p;
    size_t n, i;
    (void)ti;
    an_tree_flush_pending(t);
    p = an_out_reserve(t->out, 160);
    n = an_fmt_us(num, ts > t->base_ns ? ts - t->base_ns : 0);
    for (i = n; i < 16; i++) *p++ = ' ';
    memcpy(p, num, n);
    p += n;
    for (i = 0; i < 18; i++) *p++ = ' ';
    t->out->len = (size_t)(p - t->out->buf);
    an_out_printf(t->out, "~ gap: %llu events lost (%s)\n", (an_ull)g->index_lost,
                  atf_gap_reason_str(g->reason));
}

static int an_tree_main(FILE *out, FILE *err, int argc, char **argv) {
    const char *cmd = "tree", *path = NULL, *v;
    uint64_t slot = 0, max_depth = 0, base = UINT64_MAX;
    int has_slot = 0, i, r, no_more = 0, status, shown = 0;
    size_t k;
    an_source src;
    an_walk w;
    an_tree tr;
    an_progress p;
    an_out o;
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter f;
    atf_result rc = ATF_OK;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (no_more || a[0] != '-' || !a[1]) {
            if (path) return an_usage_error(err, cmd, an_tree_usage, "more than one PATH ('%s')", a);
            path = a;
        } else if (strcmp(a, "--") == 0) {
            no_more = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(an_tree_usage, out);
            return AN_EXIT_OK;
        } else if ((r = an_opt_value(argc, argv, &i, "--thread", &v)) != 0) {
            if (r < 0 || !an_parse_u64(v, UINT32_MAX, &slot))
                return an_usage_error(err, cmd, an_tree_usage, "--thread needs a slot number");
            has_slot = 1;
        } else if ((r = an_opt_value(argc, argv, &i, "--max-depth", &v)) != 0) {
            if (r < 0 || !an_parse_u64(v, SIZE_MAX, &max_depth))
                return an_usage_error(err, cmd, an_tree_usage, "--max-depth needs a number");
        } else {
            return an_usage_error(err, cmd, an_tree_usage, "unknown option '%s'", a);
        }
    }
    if (!path) return an_usage_error(err, cmd, an_tree_usage, "missing PATH");
    if ((status = an_source_open(&src, path, err, cmd)) != AN_EXIT_OK) return status;
    if (has_slot) {
        atf_session_thread *t = atf_session_reader_thread(&src.reader, (uint32_t)slot);
        if (!t || t->missing || (src.only_one && src.slot != slot)) {
            fprintf(err, "atf %s: %s: no thread %llu\n", cmd, path, (an_ull)slot);
            an_source_close(&src);
            return AN_EXIT_DATA;
        }
        src.only_one = 1;
        src.slot = (uint32_t)slot;
    }
    /* time 0: the first event of the threads shown */
    an_source_filter(&src, &f);
    if (atf_merge_init(&m, &src.reader, &f) != ATF_OK) rc = ATF_E_NOMEM;
    else {
        if (atf_merge_next(&m, &it) == ATF_OK) base = it.event.timestamp_ns;
        atf_merge_deinit(&m);
    }
    if (rc != ATF_OK || !an_walk_init(&w, src.reader.thread_count)) {
        fprintf(err, "atf %s: out of memory\n", cmd);
        an_source_close(&src);
        return AN_EXIT_DATA;
    }
    if (!an_out_init(&o, out)) {
        fprintf(err, "atf %s: out of memory\n", cmd);
        an_walk_deinit(&w);
        an_source_close(&src);
        return AN_EXIT_DATA;
    }
    memset(&tr, 0, sizeof tr);
    tr.out = &o;
    tr.src = &src;
    tr.base_ns = base == UINT64_MAX ? 0 : base;
    tr.max_depth = (size_t)max_depth;
    w.ctx = &tr;
    w.enter = an_tree_enter;
    w.leave = an_tree_leave;
    w.unmatched = an_tree_unmatched;
    w.gap = an_tree_gap;
    an_progress_init(&p, err, out, "atf tree", an_source_events(&src));
    for (k = 0; k < src.reader.thread_count && rc == ATF_OK && !o.failed; k++) {
        const atf_session_thread *t = &src.reader.threads[k];
        const an_thread *wt = &w.threads[k];
        if (!an_source_selected(&src, k)) continue;
        an_out_printf(&o, "%sthread %u  tid %u", shown++ ? "\n" : "", t->slot, t->os_thread_id);
        if (t->name[0]) {
            an_out_str(&o, "  ");
            an_out_text(&o, t->name);
        }
        an_out_printf(&o, "  %llu events", (an_ull)t->reader.index.event_count);
        if (t->events_dropped) an_out_printf(&o, "  %llu dropped", (an_ull)t->events_dropped);
        if (t->reader.gap_count)
            an_out_printf(&o, "  %llu gap%s, %llu events lost", (an_ull)t->reader.gap_count,
                          t->reader.gap_count == 1 ? "" : "s", (an_ull)t->reader.events_lost);
        an_out_printf(&o, "\n%16s  %14s  %s\n", "time_us", "duration_us", "call");
        rc = an_walk_run(&w, &src, &t->slot, &p);
        an_tree_flush_pending(&tr);
        if (wt->unmatched || wt->unwound || wt->open_at_end || wt->too_deep)
            an_out_printf(&o, "(%llu returns without a call, %llu frames unwound, %llu open at end, "
                              "%llu calls deeper than %u frames not shown)\n",
                          (an_ull)wt->unmatched, (an_ull)wt->unwound, (an_ull)wt->open_at_end,
                          (an_ull)wt->too_deep, (unsigned)AN_MAX_DEPTH);
        if (wt->gaps)
            an_out_printf(&o, "(%llu gap%s met, %llu frames cut by a gap)\n", (an_ull)wt->gaps,
                          wt->gaps == 1 ? "" : "s", (an_ull)wt->cut_by_gap);
    }
    an_progress_end(&p);
    if (rc != ATF_OK) {
        an_out_finish(&o);
        fprintf(err, "atf %s: %s: %s\n", cmd, path, atf_result_str(rc));
        status = AN_EXIT_DATA;
    } else {
        status = an_out_finish(&o) ? AN_EXIT_OK : an_output_error(err, cmd, "stdout", &o);
    }
    an_walk_deinit(&w);
    an_source_close(&src);
    return status;
}

/* ==== export: Chrome Trace Event Format ============================================== */
/* {"traceEvents":[...],"displayTimeUnit":"ns"}: process_name, thread_name and
 * thread_sort_index metadata ("ph":"M"), then one B event per call and one E event per
 * closed frame, in time order; ts in microseconds with the nanoseconds as three
 * decimals. Every frame the walk opens it also closes, so each thread is balanced. A gap
 * is a thread-scoped instant event ("ph":"i","s":"t") after the E events of the frames
 * it cut. */
typedef struct an_text {
    char *s;
    size_t len;
} an_text;

typedef struct an_chrome {
    an_out *out;
    const an_source *src;
    an_map names;                /* fid -> position in cache */
    an_text *cache;              /* the JSON string of each name, quotes included */
    size_t count, cap;
    an_text *prefix;             /* per thread: ",\n{\"pid\":P,\"tid\":T,\"ts\":" */
    int nomem;
} an_chrome;

/* The cached JSON text of fid's name; NULL when out of memory. */
static const an_text *an_chrome_name(an_chrome *c, uint64_t fid) {
    int is_new;
    uint64_t *pos = an_map_put(&c->names, fid, &is_new);
    if (!pos) return NULL;
    if (is_new) {
        char hex[24], clean[AN_NAME_MAX + 1];
        an_out tmp;
        an_text *t;
        if (c->count == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 64;
            an_text *m = (an_text *)realloc(c->cache, cap * sizeof *m);
            if (!m) return NULL;
            c->cache = m;
            c->cap = cap;
        }
        /* at most AN_NAME_MAX bytes of name, escaped into a buffer that always holds it */
        memset(&tmp, 0, sizeof tmp);
        tmp.cap = AN_NAME_MAX * 6 + 2;
        tmp.buf = (char *)malloc(tmp.cap);
        if (!tmp.buf) return NULL;
        clean[an_utf8_clean(an_name(c->src, fid, hex, sizeof hex), clean, AN_NAME_MAX)] = '\0';
        an_out_json_str(&tmp, clean);
        t = &c->cache[c->count];
        t->s = tmp.buf;
        t->len = tmp.len;
        *pos = c->count++;
    }
    return &c->cache[*pos];
}

static void an_chrome_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    an_chrome *c = (an_chrome *)ctx;
    const an_text *name = an_chrome_name(c, fid), *pre = &c->prefix[ti];
    char *p;
    (void)depth;
    if (!name) {
        c->nomem = 1;
        name = &c->cache[0]; /* never reached with an empty cache: see an_chrome_init */
    }
    p = an_out_reserve(c->out, pre->len + 48 + name->len);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p += an_fmt_us(p, ts);
    memcpy(p, ",\"ph\":\"B\",\"name\":", 17);
    p += 17;
    memcpy(p, name->s, name->len);
    p += name->len;
    *p++ = '}';
    c->out->len = (size_t)(p - c->out->buf);
}

static void an_chrome_leave(void *ctx, size_t ti, const an_frame *f, uint64_t end_ns, size_t depth,
                            int how, int outermost) {
    an_chrome *c = (an_chrome *)ctx;
    const an_text *pre = &c->prefix[ti];
    char *p;
    (void)f;
    (void)depth;
    (void)how;
    (void)outermost;
    p = an_out_reserve(c->out, pre->len + 48);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p += an_fmt_us(p, end_ns);
    memcpy(p, ",\"ph\":\"E\"}", 10);
    p += 10;
    c->out->len = (size_t)(p - c->out->buf);
}

static void an_chrome_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    an_chrome *c = (an_chrome *)ctx;
    const an_text *pre = &c->prefix[ti];
    char *p = an_out_reserve(c->out, pre->len + 48);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p += an_fmt_us(p, ts);
    c->out->len = (size_t)(p - c->out->buf);
    an_out_printf(c->out, ",\"ph\":\"i\",\"s\":\"t\",\"name\":\"gap: %llu events lost\","
                          "\"args\":{\"index_lost\":%llu,\"detail_lost\":%llu,\"reason\":\"%s\"}}",
                  (an_ull)g->index_lost, (an_ull)g->index_lost, (an_ull)g->detail_lost,
                  atf_gap_reason_str(g->reason));
}

static void an_chrome_free(an_chrome *c, size_t threads) {
    size_t i;
    for (i = 0; i < c->count; i++) free(c->cache[i].s);
    if (c->prefix)
        for (i = 0; i < threads; i++) free(c->prefix[i].s);
    free(c->cache);
    free(c->prefix);
    an_map_free(&c->names);
}

static atf_result an_export_chrome(an_out *o, an_source *s, an_progress *p) {
    atf_session_reader *r = &s->reader;
    an_chrome c;
    an_walk w;
    atf_result rc = ATF_OK;
    char pname[64];
    size_t i;
    memset(&c, 0, sizeof c);
    c.out = o;
    c.src = s;
    c.prefix = (an_text *)calloc(r->thread_count ? r->thread_count : 1, sizeof *c.prefix);
    if (!c.prefix || !an_chrome_name(&c, 0)) { /* cache[0] exists from here on */
        an_chrome_free(&c, r->thread_count);
        return ATF_E_NOMEM;
    }
    for (i = 0; i < r->thread_count; i++) {
        char buf[96];
        int n = snprintf(buf, sizeof buf, ",\n{\"pid\":%llu,\"tid\":%u,\"ts\":", (an_ull)s->pid,
                         an_tid(&r->threads[i]));
        c.prefix[i].s = (char *)malloc((size_t)n + 1);
        if (!c.prefix[i].s) {
            an_chrome_free(&c, r->thread_count);
            return ATF_E_NOMEM;
        }
        memcpy(c.prefix[i].s, buf, (size_t)n + 1);
        c.prefix[i].len = (size_t)n;
    }
    snprintf(pname, sizeof pname, "pid_%llu", (an_ull)s->pid);
    an_out_printf(o, "{\"traceEvents\":[\n{\"pid\":%llu,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\","
                     "\"args\":{\"name\":", (an_ull)s->pid);
    an_out_json_str(o, pname);
    an_out_str(o, "}}");
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        char tname[80];
        if (!an_source_selected(s, i)) continue;
        if (t->name[0]) snprintf(tname, sizeof tname, "%s", t->name);
        else snprintf(tname, sizeof tname, "thread_%u", t->slot);
        an_out_printf(o, ",\n{\"pid\":%llu,\"tid\":%u,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":",
                      (an_ull)s->pid, an_tid(t));
        an_out_json_str(o, tname);
        an_out_printf(o, "}},\n{\"pid\":%llu,\"tid\":%u,\"ph\":\"M\",\"name\":\"thread_sort_index\","
                         "\"args\":{\"sort_index\":%u}}",
                      (an_ull)s->pid, an_tid(t), t->slot);
    }
    if (!an_walk_init(&w, r->thread_count)) rc = ATF_E_NOMEM;
    else {
        w.ctx = &c;
        w.enter = an_chrome_enter;
        w.leave = an_chrome_leave;
        w.gap = an_chrome_gap;
        rc = an_walk_run(&w, s, NULL, p);
        an_walk_deinit(&w);
    }
    if (rc == ATF_OK && c.nomem) rc = ATF_E_NOMEM;
    an_out_str(o, "\n],\"displayTimeUnit\":\"ns\"}\n");
    an_chrome_free(&c, r->thread_count);
    return rc;
}

/* ==== export: Perfetto protobuf ====================================================== */
/* A Trace message written packet by packet (each TracePacket is field 1 of Trace, so a
 * stream of them is a valid Trace): one TrackDescriptor for the process, one per thread
 * (parented to the process), then one TrackEvent packet per slice begin/end on its
 * thread's track, with the function names interned: a name's EventName {iid, name} goes
 * in the InternedData of the first packet that uses it. All packets are on one sequence;
 * the first clears the incremental state, the others need it. A gap is a TYPE_INSTANT
 * event on its thread's track, named in place (TrackEvent.name), after the SLICE_END
 * events of the frames it cut.
 *
 * Field numbers, from google/perfetto protos/perfetto/trace/ (checked against the .proto
 * files: trace.proto, trace_packet.proto, track_event/track_event.proto,
 * track_event/track_descriptor.proto, track_event/process_descriptor.proto,
 * track_event/thread_descriptor.proto, interned_data/interned_data.proto). */
enum {
    PB_VARINT = 0, PB_LEN = 2,                    /* wire types */
    PF_TRACE_PACKET = 1,                          /* Trace.packet: repeated TracePacket */
    PF_PACKET_TIMESTAMP = 8,                      /* TracePacket.timestamp: uint64, ns */
    PF_PACKET_SEQUENCE_ID = 10,                   /* TracePacket.trusted_packet_sequence_id: uint32 */
    PF_PACKET_TRACK_EVENT = 11,                   /* TracePacket.track_event: TrackEvent */
    PF_PACKET_INTERNED_DATA = 12,                 /* TracePacket.interned_data: InternedData */
    PF_PACKET_SEQUENCE_FLAGS = 13,                /* TracePacket.sequence_flags: uint32 */
    PF_PACKET_INCREMENTAL_STATE_CLEARED = 41,     /* TracePacket.incremental_state_cleared: bool */
    PF_PACKET_TRACK_DESCRIPTOR = 60,              /* TracePacket.track_descriptor: TrackDescriptor */
    PF_PACKET_FIRST_ON_SEQUENCE = 87,             /* TracePacket.first_packet_on_sequence: bool */
    PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,         /* TracePacket.SequenceFlags value */
    PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,           /* TracePacket.SequenceFlags value */
    PF_TRACK_UUID = 1,                            /* TrackDescriptor.uuid: uint64 */
    PF_TRACK_PROCESS = 3,                         /* TrackDescriptor.process: ProcessDescriptor */
    PF_TRACK_THREAD = 4,                          /* TrackDescriptor.thread: ThreadDescriptor */
    PF_TRACK_PARENT_UUID = 5,                     /* TrackDescriptor.parent_uuid: uint64 */
    PF_PROCESS_PID = 1,                           /* ProcessDescriptor.pid: int32 */
    PF_PROCESS_NAME = 6,                          /* ProcessDescriptor.process_name: string */
    PF_THREAD_PID = 1,                            /* ThreadDescriptor.pid: int32 */
    PF_THREAD_TID = 2,                            /* ThreadDescriptor.tid: int32 */
    PF_THREAD_NAME = 5,                           /* ThreadDescriptor.thread_name: string */
    PF_EVENT_TYPE = 9,                            /* TrackEvent.type: TrackEvent.Type */
    PF_EVENT_NAME_IID = 10,                       /* TrackEvent.name_iid: uint64 (EventName) */
    PF_EVENT_TRACK_UUID = 11,                     /* TrackEvent.track_uuid: uint64 */
    PF_TYPE_SLICE_BEGIN = 1,                      /* TrackEvent.Type TYPE_SLICE_BEGIN */
    PF_TYPE_SLICE_END = 2,                        /* TrackEvent.Type TYPE_SLICE_END */
    PF_TYPE_INSTANT = 3,                          /* TrackEvent.Type TYPE_INSTANT */
    PF_EVENT_NAME = 23,                           /* TrackEvent.name: string */
    PF_INTERNED_EVENT_NAMES = 2,                  /* InternedData.event_names: repeated EventName */
    PF_EVENT_NAME_IID_FIELD = 1,                  /* EventName.iid: uint64 */
    PF_EVENT_NAME_NAME = 2                        /* EventName.name: string */
};

enum { PF_SEQUENCE_ID = 1 };                      /* our one packet sequence */
enum { PF_PROCESS_UUID = 1 };                     /* track uuids: process 1, thread i: 2 + i */
enum { PF_PACKET_MAX = AN_NAME_MAX + 256 };       /* the largest packet we build */

static size_t pb_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static size_t pb_varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t pb_uint(uint8_t *p, uint32_t field, uint64_t v) {
    size_t n = pb_varint(p, (uint64_t)field << 3 | PB_VARINT);
    return n + pb_varint(p + n, v);
}

/* An int32 field: negative values are sign-extended to 64 bits, as protobuf does. */
static size_t pb_int32(uint8_t *p, uint32_t field, uint32_t v) {
    return pb_uint(p, field, (uint64_t)(int64_t)(int32_t)v);
}

static size_t pb_bytes(uint8_t *p, uint32_t field, const void *data, size_t len) {
    size_t n = pb_varint(p, (uint64_t)field << 3 | PB_LEN);
    n += pb_varint(p + n, len);
    memcpy(p + n, data, len);
    return n + len;
}

typedef struct an_perfetto {
    an_out *out;
    const an_source *src;
    an_map iids;                 /* fid -> interned name id (1, 2, ...) */
    uint64_t next_iid;
    int nomem;
} an_perfetto;

/* Writes one TracePacket (its body in pkt) as Trace.packet. */
static void an_pf_packet(an_out *o, const uint8_t *pkt, size_t len) {
    uint8_t *p = (uint8_t *)an_out_reserve(o, len + 16);
    size_t n = pb_varint(p, (uint64_t)PF_TRACE_PACKET << 3 | PB_LEN);
    n += pb_varint(p + n, len);
    memcpy(p + n, pkt, len);
    o->len += n + len;
}

/* Sequence fields of every packet: first = the packet that clears the state. */
static size_t an_pf_sequence(uint8_t *p, int first) {
    size_t n = pb_uint(p, PF_PACKET_SEQUENCE_ID, PF_SEQUENCE_ID);
    if (first) {
        n += pb_uint(p + n, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
        n += pb_uint(p + n, PF_PACKET_INCREMENTAL_STATE_CLEARED, 1);
        n += pb_uint(p + n, PF_PACKET_FIRST_ON_SEQUENCE, 1);
    } else {
        n += pb_uint(p + n, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_NEEDS_INCREMENTAL_STATE);
    }
    return n;
}

static void an_pf_event(an_perfetto *pf, size_t ti, uint64_t ts, int begin, uint64_t fid) {
    uint8_t pkt[PF_PACKET_MAX], te[40];
    size_t n, tn;
    uint64_t iid = 0;
    int is_new = 0;
    tn = pb_uint(te, PF_EVENT_TYPE, begin ? PF_TYPE_SLICE_BEGIN : PF_TYPE_SLICE_END);
    tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, PF_PROCESS_UUID + 1 + (uint64_t)ti);
    if (begin) {
        uint64_t *v = an_map_put(&pf->iids, fid, &is_new);
        if (!v) {
            pf->nomem = 1;
            return;
        }
        if (is_new) *v = ++pf->next_iid;
        iid = *v;
        tn += pb_uint(te + tn, PF_EVENT_NAME_IID, iid);
    }
    if (!is_new) { /* the common packet, sized first and encoded in place */
        size_t body = 1 + pb_varint_size(ts) + 4 + 1 + pb_varint_size(tn) + tn;
        uint8_t *p = (uint8_t *)an_out_reserve(pf->out, body + 16), *q = p;
        *q++ = PF_TRACE_PACKET << 3 | PB_LEN;
        q += pb_varint(q, body);
        q += pb_uint(q, PF_PACKET_TIMESTAMP, ts);
        q += an_pf_sequence(q, 0);
        *q++ = PF_PACKET_TRACK_EVENT << 3 | PB_LEN;
        q += pb_varint(q, tn);
        for (n = 0; n < tn; n++) *q++ = te[n];
        pf->out->len += (size_t)(q - p);
        return;
    }
    n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
    n += an_pf_sequence(pkt + n, 0);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_EVENT, te, tn);
    { /* InternedData { event_names: EventName { iid, name } } */
        uint8_t name[AN_NAME_MAX], en[AN_NAME_MAX + 32], idata[AN_NAME_MAX + 48];
        char hex[24];
        size_t nl = an_utf8_clean(an_name(pf->src, fid, hex, sizeof hex), (char *)name, AN_NAME_MAX);
        size_t en_len = pb_uint(en, PF_EVENT_NAME_IID_FIELD, iid);
        size_t id_len;
        en_len += pb_bytes(en + en_len, PF_EVENT_NAME_NAME, name, nl);
        id_len = pb_bytes(idata, PF_INTERNED_EVENT_NAMES, en, en_len);
        n += pb_bytes(pkt + n, PF_PACKET_INTERNED_DATA, idata, id_len);
    }
    an_pf_packet(pf->out, pkt, n);
}

static void an_pf_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    (void)depth;
    an_pf_event((an_perfetto *)ctx, ti, ts, 1, fid);
}

static void an_pf_leave(void *ctx, size_t ti, const an_frame *f, uint64_t end_ns, size_t depth,
                        int how, int outermost) {
    (void)depth;
    (void)how;
    (void)outermost;
    an_pf_event((an_perfetto *)ctx, ti, end_ns, 0, f->fid);
}

static void an_pf_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    an_perfetto *pf = (an_perfetto *)ctx;
    uint8_t pkt[256], te[160];
    char name[96];
    size_t n, tn;
    snprintf(name, sizeof name, "gap: %llu events lost (%s)", (an_ull)g->index_lost,
             atf_gap_reason_str(g->reason));
    tn = pb_uint(te, PF_EVENT_TYPE, PF_TYPE_INSTANT);
    tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, PF_PROCESS_UUID + 1 + (uint64_t)ti);
    tn += pb_bytes(te + tn, PF_EVENT_NAME, name, strlen(name));
    n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
    n += an_pf_sequence(pkt + n, 0);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_EVENT, te, tn);
    an_pf_packet(pf->out, pkt, n);
}

/* The descriptor packets: the process track, then one thread track per thread. */
static void an_pf_descriptors(an_out *o, const an_source *s) {
    const atf_session_reader *r = &s->reader;
    uint8_t pkt[512], desc[384], sub[256];
    char name[80];
    size_t n, dn, sn, i;
    snprintf(name, sizeof name, "pid_%llu", (an_ull)s->pid);
    sn = pb_int32(sub, PF_PROCESS_PID, (uint32_t)s->pid);
    sn += pb_bytes(sub + sn, PF_PROCESS_NAME, name, strlen(name));
    dn = pb_uint(desc, PF_TRACK_UUID, PF_PROCESS_UUID);
    dn += pb_bytes(desc + dn, PF_TRACK_PROCESS, sub, sn);
    n = an_pf_sequence(pkt, 1);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_DESCRIPTOR, desc, dn);
    an_pf_packet(o, pkt, n);
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        char clean[3 * 64];
        size_t cl;
        if (!an_source_selected(s, i)) continue;
        if (t->name[0]) snprintf(name, sizeof name, "%s", t->name);
        else snprintf(name, sizeof name, "thread_%u", t->slot);
        cl = an_utf8_clean(name, clean, sizeof clean);
        sn = pb_int32(sub, PF_THREAD_PID, (uint32_t)s->pid);
        sn += pb_int32(sub + sn, PF_THREAD_TID, an_tid(t));
        sn += pb_bytes(sub + sn, PF_THREAD_NAME, clean, cl);
        dn = pb_uint(desc, PF_TRACK_UUID, PF_PROCESS_UUID + 1 + (uint64_t)i);
        dn += pb_uint(desc + dn, PF_TRACK_PARENT_UUID, PF_PROCESS_UUID);
        dn += pb_bytes(desc + dn, PF_TRACK_THREAD, sub, sn);
        n = an_pf_sequence(pkt, 0);
        n += pb_bytes(pkt + n, PF_PACKET_TRACK_DESCRIPTOR, desc, dn);
        an_pf_packet(o, pkt, n);
    }
}

static atf_result an_export_perfetto(an_out *o, an_source *s, an_progress *p) {
    an_perfetto pf;
    an_walk w;
    atf_result rc;
    memset(&pf, 0, sizeof pf);
    pf.out = o;
    pf.src = s;
    an_pf_descriptors(o, s);
    if (!an_walk_init(&w, s->reader.thread_count)) return ATF_E_NOMEM;
    w.ctx = &pf;
    w.enter = an_pf_enter;
    w.leave = an_pf_leave;
    w.gap = an_pf_gap;
    rc = an_walk_run(&w, s, NULL, p);
    an_walk_deinit(&w);
    an_map_free(&pf.iids);
    return rc == ATF_OK && pf.nomem ? ATF_E_NOMEM : rc;
}

/* ==== export command ================================================================= */
static const char an_export_usage[] =
    "usage: atf export --format chrome|perfetto [-o OUT] PATH\n"
    "\n"
    "Writes the trace for a trace viewer (ui.perfetto.dev, chrome://tracing):\n"
    "  chrome    Trace Event Format JSON: {\"traceEvents\":[...]}, a B event per call and\n"
    "            an E event per return, ts in microseconds (nanoseconds as decimals),\n"
    "            pid from the pid_N directory, tid the OS thread id, thread names as\n"
    "            metadata events\n"
    "  perfetto  Perfetto protobuf Trace: a track per thread, SLICE_BEGIN/SLICE_END\n"
    "            events with interned names, timestamps in nanoseconds\n"
    "\n"
    "  -o OUT    output file (default: stdout; for perfetto only when stdout is not a\n"
    "            terminal)\n"
    "\n"
    "Every thread's slices are balanced: frames still open at the end are closed at the\n"
    "thread's last event, returns without a matching call are left out, a return of an\n"
    "outer frame closes the frames above it. Nothing is paired across a gap (events the\n"
    "recorder lost): the frames open there end at the thread's last event before it, and\n"
    "the gap itself is an instant event named \"gap: N events lost\" on the thread (chrome:\n"
    "\"ph\":\"i\" with args index_lost, detail_lost, reason; perfetto: TYPE_INSTANT) at\n"
    "the time of the first lost event; a return after it whose call came before it is\n"
    "left out. Output streams with bounded memory.\n"
    "Exit status: 0 ok, 1 the trace cannot be read or OUT cannot be written, 2 usage error.\n";

static int an_export_main(FILE *out, FILE *err, int argc, char **argv) {
    const char *cmd = "export", *path = NULL, *format = NULL, *outpath = NULL, *v;
    int i, r, no_more = 0, status, perfetto, to_file;
    FILE *f;
    an_source src;
    an_progress p;
    an_out o;
    atf_result rc;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (no_more || a[0] != '-' || !a[1]) {
            if (path) return an_usage_error(err, cmd, an_export_usage, "more than one PATH ('%s')", a);
            path = a;
        } else if (strcmp(a, "--") == 0) {
            no_more = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(an_export_usage, out);
            return AN_EXIT_OK;
        } else if ((r = an_opt_value(argc, argv, &i, "--format", &v)) != 0) {
            if (r < 0) return an_usage_error(err, cmd, an_export_usage, "--format needs a value");
            if (strcmp(v, "chrome") != 0 && strcmp(v, "perfetto") != 0)
                return an_usage_error(err, cmd, an_export_usage, "unknown format '%s'", v);
            format = v;
        } else if ((r = an_opt_value(argc, argv, &i, "-o", &v)) != 0 ||
                   (r = an_opt_value(argc, argv, &i, "--output", &v)) != 0) {
            if (r < 0 || !*v) return an_usage_error(err, cmd, an_export_usage, "-o needs a file name");
            outpath = v;
        } else {
            return an_usage_error(err, cmd, an_export_usage, "unknown option '%s'", a);
        }
    }
    if (!format) return an_usage_error(err, cmd, an_export_usage, "missing --format chrome|perfetto");
    if (!path) return an_usage_error(err, cmd, an_export_usage, "missing PATH");
    perfetto = strcmp(format, "perfetto") == 0;
    to_file = outpath && strcmp(outpath, "-") != 0;
    if (perfetto && !to_file && an_isatty(out))
        return an_usage_error(err, cmd, an_export_usage,
                              "binary output to a terminal: give -o OUT (or redirect stdout)");
    if ((status = an_source_open(&src, path, err, cmd)) != AN_EXIT_OK) return status;
    f = out;
    if (to_file && (f = fopen(outpath, "wb")) == NULL) {
        fprintf(err, "atf %s: %s: cannot open for writing: %s\n", cmd, outpath, strerror(errno));
        an_source_close(&src);
        return AN_EXIT_DATA;
    }
#if defined(_WIN32)
    if (!to_file) _setmode(_fileno(f), _O_BINARY);
#endif
    if (!an_out_init(&o, f)) {
        fprintf(err, "atf %s: out of memory\n", cmd);
        if (to_file) fclose(f);
        an_source_close(&src);
        return AN_EXIT_DATA;
    }
    an_progress_init(&p, err, f, perfetto ? "atf export perfetto" : "atf export chrome",
                     an_source_events(&src));
    rc = perfetto ? an_export_perfetto(&o, &src, &p) : an_export_chrome(&o, &src, &p);
    an_progress_end(&p);
    status = AN_EXIT_OK;
    if (!an_out_finish(&o)) status = an_output_error(err, cmd, to_file ? outpath : "stdout", &o);
    if (to_file && fclose(f) != 0 && status == AN_EXIT_OK) {
        fprintf(err, "atf %s: %s: write failed: %s\n", cmd, outpath, strerror(errno));
        status = AN_EXIT_DATA;
    }
    if (rc != ATF_OK) {
        fprintf(err, "atf %s: %s: %s\n", cmd, path, atf_result_str(rc));
        status = AN_EXIT_DATA;
    }
    if (status != AN_EXIT_OK && to_file && an_is_file(outpath))
        remove(outpath); /* no half-written file left (never a device such as /dev/null) */
    an_source_close(&src);
    return status;
}

/* ==== entry points =================================================================== */
int atf_cmd_stats(int argc, char **argv) { return an_stats_main(stdout, stderr, argc, argv); }
int atf_cmd_tree(int argc, char **argv) { return an_tree_main(stdout, stderr, argc, argv); }
int atf_cmd_export(int argc, char **argv) { return an_export_main(stdout, stderr, argc, argv); }
