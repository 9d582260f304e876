/* crash_trials.c - `atf gen` killed with SIGKILL at deterministic pseudo-random moments.
 *
 * Each trial records a session with `atf gen` (layout 1, 2 or packed; detail off, always or
 * windowed; 1 to 4 threads; --overflow block or drop in turn; in one run of six trials
 * out of three, index rings smaller than a thread's events, so that a full ring makes
 * the thread drain it itself (block) or drop events (drop); one trial in four with a
 * --max-size that stops recording part of the way, one in four with a --keep-last flight
 * recorder writing its most recent events at each trigger) and kills it once the files
 * hold a chosen share of the events (or right after the start, or once the manifest says
 * closed), after a small random delay. The settings and the moment are a function of the
 * trial number and CRASH_SEED; where the kill lands also depends on the machine, which
 * only moves the counts of the summary: no check depends on timing. Every trial then
 * checks what was left:
 *   - every thread_N/ opens with the library's thread reader (or holds no index.atf yet);
 *   - each thread's index events are what gen_model.h says thread N produced, in order:
 *     a gap-free prefix when nothing can be dropped (block, or a ring that holds every
 *     event: then there is no gaps.atf either), else a subsequence (dropped events take
 *     no place in index.atf) placed exactly by gaps.atf (and, with --max-size, one gap of
 *     reason "stopped" at the end for the events after the cut, with --keep-last gaps of
 *     reason "discarded" before each write): persisted event j is produced
 *     event j + the index_lost of the gaps at or before j, each gap's detail_lost is the
 *     detail events among those it lost and its first stamp lies between its neighbours';
 *     detail records carry the payload of the event they name, links on disk resolve,
 *     timestamps never decrease;
 *   - manifest.json is valid JSON; once closed, for every thread events_written = the
 *     events in index.atf, events_written + events_dropped + events_stopped +
 *     events_discarded = produced,
 *     the event bytes within --max-size and its slack (events_dropped = 0
 *     with block), the gaps account for every dropped event (a crash may lose only the
 *     gap at the end), detail_written = the records in detail.atf, detail_written +
 *     detail_dropped = the detail events produced (at most that when events were dropped:
 *     a dropped event takes its detail with it); before close its counts never exceed the
 *     files';
 *   - `atf recover DIR` exits 0, then `atf verify --strict DIR` exits 0, and the recovered
 *     files hold the same events, every link exact both ways, footers with the CRC.
 * The checks themselves are shown to fail on damaged copies (checker_catches_damage).
 *
 * Environment: CRASH_TRIALS (default 12; `make crash-trials` runs 100), CRASH_SEED (the
 * trial schedule, default 1), ATF (the atf command, default build/atf), ATF_TEST_TMP or
 * BUILD (scratch directory, default build). A failing trial keeps its files and prints
 * its settings. Ends with "crash_trials: N passed, M failed". POSIX only. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"
#include "tools/gen_model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#  define TRIAL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define TRIAL_PRINTF(a, b)
#endif

/* ---- settings, randomness, processes ---------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t fallback) {
    const char *v = getenv(name);
    char *end;
    unsigned long long x;
    if (!v || !*v) return fallback;
    x = strtoull(v, &end, 10);
    return *end ? fallback : (uint64_t)x;
}

static const char *atf_command(void) {
    const char *v = getenv("ATF");
    return v && *v ? v : "build/atf";
}

static void sleep_us(uint64_t us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u);
    ts.tv_nsec = (long)(us % 1000000u) * 1000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs `atf CMD [FLAG] DIR` with stdout and stderr into `log`; its exit status, or -1. */
static int run_atf(const char *log, const char *cmd, const char *flag, const char *dir) {
    int status = 0;
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        if (flag) execl(atf_command(), "atf", cmd, flag, dir, (char *)NULL);
        else execl(atf_command(), "atf", cmd, dir, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void show_log(const char *log) {
    char *text = read_text(log);
    if (text) printf("%s", text);
    free(text);
}

/* Lines of `log` that start with `prefix`. */
static uint64_t count_lines(const char *log, const char *prefix) {
    char *text = read_text(log), *p;
    uint64_t n = 0;
    size_t len = strlen(prefix);
    for (p = text; p && *p;) {
        char *nl = strchr(p, '\n');
        if (strncmp(p, prefix, len) == 0) n++;
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(text);
    return n;
}

/* ---- one recording ------------------------------------------------------------------ */

#define TRIAL_MAX_THREADS 8

typedef struct trial_cfg {
    uint32_t threads, layout, detail;    /* layout: ATF_LAYOUT_*; detail: ATF_DETAIL_* */
    uint32_t overflow;                   /* ATF_OVERFLOW_BLOCK or ATF_OVERFLOW_DROP */
    uint64_t events, ring, detail_every, seed;
    uint64_t pre_ms, post_ms, trigger_ms;
    uint64_t max_bytes;                  /* --max-size, 0: none */
    uint64_t keep_bytes;                 /* --keep-last, 0: none */
} trial_cfg;

static const char *detail_name(uint32_t mode) {
    return mode == ATF_DETAIL_ALWAYS ? "always" : mode == ATF_DETAIL_WINDOWED ? "windowed" : "off";
}

/* Index ring slots the library gives for cfg->ring (a power of two, at least 64). */
static uint64_t ring_slots(const trial_cfg *cfg) {
    uint64_t cap = 64;
    while (cap < cfg->ring) cap <<= 1;
    return cap;
}

static const char *layout_name(uint32_t layout) {
    return layout == ATF_LAYOUT_PACKED ? "packed" : layout == ATF_LAYOUT_2 ? "2" : "1";
}

/* The layout of the records readers give: a packed file's are layout 1. */
static uint32_t record_layout(const trial_cfg *cfg) {
    return cfg->layout == ATF_LAYOUT_PACKED ? (uint32_t)ATF_LAYOUT_1 : cfg->layout;
}

static const char *overflow_name(uint32_t policy) {
    return policy == ATF_OVERFLOW_DROP ? "drop" : "block";
}

/* Nothing can be dropped: a full ring blocks (the thread drains it itself), or the ring
 * holds every event of a thread. */
static int no_drop(const trial_cfg *cfg) {
    return cfg->overflow == ATF_OVERFLOW_BLOCK || ring_slots(cfg) >= cfg->events;
}

/* Persisted event j is produced event j: nothing dropped, nothing discarded by the flight
 * recorder. */
static int dense(const trial_cfg *cfg) {
    return no_drop(cfg) && !cfg->keep_bytes;
}

static void print_cfg(const trial_cfg *cfg) {
    printf("    atf gen --threads %u --events %llu --layout %s --detail %s --detail-every %llu "
           "--pre-roll-ms %llu --post-roll-ms %llu --trigger-every-ms %llu --ring-events %llu "
           "--overflow %s --seed %llu --max-size %llu --keep-last %llu\n", cfg->threads,
           (unsigned long long)cfg->events, layout_name(cfg->layout), detail_name(cfg->detail),
           (unsigned long long)cfg->detail_every, (unsigned long long)cfg->pre_ms,
           (unsigned long long)cfg->post_ms, (unsigned long long)cfg->trigger_ms,
           (unsigned long long)cfg->ring, overflow_name(cfg->overflow),
           (unsigned long long)cfg->seed, (unsigned long long)cfg->max_bytes,
           (unsigned long long)cfg->keep_bytes);
}

/* Starts `atf gen` for cfg under root and reads the pid_* directory it prints. The
 * child's pid, or -1 (then nothing runs). */
static pid_t gen_start(const trial_cfg *cfg, const char *root, char *dir, size_t cap) {
    char a[12][32];
    int fds[2];
    size_t n = 0;
    pid_t pid;
    snprintf(a[0], sizeof a[0], "%u", cfg->threads);
    snprintf(a[1], sizeof a[1], "%llu", (unsigned long long)cfg->events);
    snprintf(a[2], sizeof a[2], "%s", layout_name(cfg->layout));
    snprintf(a[3], sizeof a[3], "%s", detail_name(cfg->detail));
    snprintf(a[4], sizeof a[4], "%llu", (unsigned long long)cfg->detail_every);
    snprintf(a[5], sizeof a[5], "%llu", (unsigned long long)cfg->pre_ms);
    snprintf(a[6], sizeof a[6], "%llu", (unsigned long long)cfg->post_ms);
    snprintf(a[7], sizeof a[7], "%llu", (unsigned long long)cfg->trigger_ms);
    snprintf(a[8], sizeof a[8], "%llu", (unsigned long long)cfg->ring);
    snprintf(a[9], sizeof a[9], "%llu", (unsigned long long)cfg->seed);
    snprintf(a[10], sizeof a[10], "%llu", (unsigned long long)cfg->max_bytes); /* 0: none */
    snprintf(a[11], sizeof a[11], "%llu", (unsigned long long)cfg->keep_bytes); /* 0: none */
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(fds[1], 1);
        if (null >= 0) dup2(null, 2);
        close(fds[0]);
        close(fds[1]);
        execl(atf_command(), "atf", "gen", "--threads", a[0], "--events", a[1], "--layout", a[2],
              "--detail", a[3], "--detail-every", a[4], "--pre-roll-ms", a[5], "--post-roll-ms",
              a[6], "--trigger-every-ms", a[7], "--ring-events", a[8], "--overflow",
              overflow_name(cfg->overflow), "--seed", a[9], "--max-size", a[10], "--keep-last",
              a[11], root,
              (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    while (n + 1 < cap) {
        char c;
        ssize_t got = read(fds[0], &c, 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0 || c == '\n') break;
        dir[n++] = c;
    }
    dir[n] = '\0';
    close(fds[0]);
    if (n == 0) { /* it printed nothing: it failed */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

/* Whole index events in the files of the session so far. */
static uint64_t events_on_disk(const char *dir, uint32_t threads) {
    char path[1200];
    uint64_t n = 0;
    uint32_t k;
    for (k = 0; k < threads; k++) {
        uint64_t size;
        snprintf(path, sizeof path, "%s/thread_%u/index.atf", dir, k);
        size = file_size(path);
        if (size > ATF_HEADER_SIZE) n += (size - ATF_HEADER_SIZE) / ATF_INDEX_EVENT_SIZE;
    }
    return n;
}

static int manifest_closed(const char *dir) {
    char path[1200];
    char *m;
    int closed;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    m = read_text(path);
    closed = m && strstr(m, "\"state\":\"closed\"") != NULL;
    free(m);
    return closed;
}

/* ---- what thread N produced ------------------------------------------------------- */

typedef struct model_ev {
    uint64_t fid;
    uint32_t depth;
    uint8_t call, has_detail;
    uint32_t payload;            /* index into the payload pool when has_detail */
} model_ev;

typedef struct model {
    model_ev *ev;
    uint8_t *payloads;           /* n_detail payloads of payload_len bytes */
    uint64_t n, n_detail;
    size_t payload_len;
} model;

static void model_free(model *m) {
    free(m->ev);
    free(m->payloads);
    memset(m, 0, sizeof *m);
}

static int model_build(model *m, const trial_cfg *cfg, uint32_t slot) {
    gen_model g;
    gen_event e;
    uint64_t every = cfg->detail == ATF_DETAIL_OFF ? 0 : cfg->detail_every;
    uint64_t max_detail = every ? (cfg->events + every - 1) / every : 0;
    memset(m, 0, sizeof *m);
    m->payload_len = ATF_DETAIL_PAYLOAD_SIZE + GEN_STACK_WINDOW;
    m->ev = (model_ev *)calloc((size_t)cfg->events + 1, sizeof *m->ev);
    m->payloads = (uint8_t *)malloc((size_t)(max_detail + 1) * m->payload_len);
    if (!m->ev || !m->payloads) {
        model_free(m);
        return 0;
    }
    gen_model_init(&g, cfg->seed, slot, cfg->events, every);
    while (gen_model_next(&g, &e)) {
        model_ev *x = &m->ev[m->n++];
        x->fid = e.function_id;
        x->depth = e.depth;
        x->call = (uint8_t)e.call;
        x->has_detail = (uint8_t)e.has_detail;
        if (e.has_detail) {
            if (e.payload_len != m->payload_len) {
                model_free(m);
                return 0;
            }
            x->payload = (uint32_t)m->n_detail;
            memcpy(m->payloads + m->n_detail++ * m->payload_len, e.payload, m->payload_len);
        }
    }
    return 1;
}

/* ---- the checker ------------------------------------------------------------------ */
/* Counts problems instead of failing the running test, so that a test can also show that
 * a damaged copy is caught (quiet: nothing printed). */
typedef struct checker {
    int quiet;
    int errors;
} checker;

static void TRIAL_PRINTF(3, 4) bad(checker *c, const char *where, const char *fmt, ...) {
    va_list ap;
    c->errors++;
    if (c->quiet || c->errors > 12) return;
    printf("  %s: ", where);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* What one thread directory held. */
typedef struct thread_seen {
    int present;                 /* thread_N/ exists */
    int unborn;                  /* ... without index.atf (killed before its first file) */
    int finalized;               /* index.atf (and detail.atf) finalized */
    uint64_t events, detail;     /* index events, detail records */
    uint64_t trailing;           /* detail records whose index event is not in index.atf */
    uint64_t unlinked;           /* detail records whose index event has no link yet */
    uint64_t skipped;            /* produced events before the last persisted one, absent */
    uint64_t gaps, lost;         /* gap records in gaps.atf, the index events they lost */
    int stopped;                 /* its files end with a gap of reason "stopped" */
    uint64_t discarded;          /* events in its gaps of reason "discarded" */
} thread_seen;

/* 1 when dir holds nothing, or only index.atf.tmp. */
static int dir_is_unborn(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    int ok = 1;
    if (!d) return 0;
    while ((ent = readdir(d)) != NULL)
        if (strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0 &&
            strcmp(ent->d_name, "index.atf.tmp") != 0)
            ok = 0;
    closedir(d);
    return ok;
}

/* Whether persisted index event `ev` (with detail record `de`, NULL when its link does not
 * resolve) can be produced event x. */
static int event_matches(const trial_cfg *cfg, const model *m, const atf_index_event *ev,
                         const atf_detail_event *de, const model_ev *x) {
    if (ev->function_id != x->fid) return 0;
    if (ev->kind != (x->call ? (uint32_t)ATF_EVENT_CALL : (uint32_t)ATF_EVENT_RETURN)) return 0;
    if (record_layout(cfg) == ATF_LAYOUT_1 && ev->call_depth != x->depth) return 0;
    if (ev->detail_seq != ATF_NO_DETAIL && !x->has_detail) return 0;
    if (de && (de->payload_len != m->payload_len ||
               memcmp(de->payload, m->payloads + (size_t)x->payload * m->payload_len,
                      m->payload_len) != 0))
        return 0;
    return 1;
}

static void describe(char *buf, size_t cap, const atf_index_event *ev) {
    snprintf(buf, cap, "fid %llu %s depth %u detail_seq %lld", (unsigned long long)ev->function_id,
             atf_event_kind_str(ev->kind), ev->call_depth,
             ev->detail_seq == ATF_NO_DETAIL ? -1LL : (long long)ev->detail_seq);
}

static void describe_model(char *buf, size_t cap, const model_ev *x) {
    snprintf(buf, cap, "fid %llu %s depth %u%s", (unsigned long long)x->fid,
             x->call ? "call" : "return", x->depth, x->has_detail ? " with detail" : "");
}

/* The gaps at index event j from gap g on, when the flight recorder discarded events
 * there: its discards and the ring's drops before a write lie there in any order, so only
 * the group's detail is known (the records of discarded events are counted as dropped,
 * not in the gap: at most the detail among all the group's events, the first of them
 * produced event `start`). 1 when it is such a group (checked here), else 0. */
static int check_discard_group(checker *c, const char *dir, const model *m,
                               const atf_thread_reader *tr, size_t g, uint64_t j,
                               uint64_t start) {
    uint64_t lost = 0, claimed = 0, detail = 0, k;
    int discards = 0;
    for (; g < tr->gap_count && tr->gaps[g].index_seq == j; g++) {
        const atf_gap *gp = &tr->gaps[g];
        lost += gp->index_lost;
        if (gp->reason == ATF_GAP_DISCARDED) discards = 1;
        if (gp->reason == ATF_GAP_DISCARDED && gp->detail_lost)
            bad(c, dir, "gap %zu (before index event %llu): discarded, with %llu detail records",
                g, (unsigned long long)j, (unsigned long long)gp->detail_lost);
        else claimed += gp->detail_lost;
    }
    if (!discards || lost > m->n - start) return discards; /* (too many: said by the caller) */
    for (k = start; k < start + lost; k++) detail += m->ev[k].has_detail;
    if (claimed > detail)
        bad(c, dir, "gaps before index event %llu: %llu detail records lost, the %llu events "
            "lost and discarded there had %llu", (unsigned long long)j,
            (unsigned long long)claimed, (unsigned long long)lost, (unsigned long long)detail);
    return discards;
}

/* gaps.atf of thread directory `dir` (opened as tr; its p index events in evs, d detail
 * records in des): none when nothing can be dropped; else every gap where its events were
 * lost, so that persisted event j is produced event j + the events of the gaps at or
 * before j, with the detail events among them, its reason and a first stamp between
 * those of its neighbours. A crash may leave the last gaps out (the events after them
 * too), never a gap past the events written. */
static void check_gaps(checker *c, const char *dir, const trial_cfg *cfg, const model *m,
                       const atf_thread_reader *tr, const atf_index_event *evs,
                       const atf_detail_event *des, uint64_t d) {
    uint64_t p = tr->index.event_count, j, lost = 0;
    size_t g = 0;
    char a[160], b[160], path[1300];
    snprintf(path, sizeof path, "%s/gaps.atf", dir);
    if (dense(cfg) && !cfg->max_bytes) {
        if (tr->gap_count || path_exists(path))
            bad(c, dir, "gaps.atf (%llu gaps) where nothing can be dropped (--overflow %s)",
                (unsigned long long)tr->gap_count, overflow_name(cfg->overflow));
        return;
    }
    for (j = 0; j <= p; j++) {
        const atf_detail_event *de;
        uint64_t at;
        int discards = check_discard_group(c, dir, m, tr, g, j, j + lost);
        for (; g < tr->gap_count && tr->gaps[g].index_seq == j; g++) {
            const atf_gap *gp = &tr->gaps[g];
            uint64_t start = j + lost, k, detail = 0;
            /* drops where they can happen; a bound's stop at the end, after every event;
             * the flight recorder's discards before the events of each write */
            int expected = gp->reason == ATF_GAP_STOPPED     ? cfg->max_bytes && j == p
                           : gp->reason == ATF_GAP_DISCARDED ? cfg->keep_bytes != 0
                                                             : gp->reason == ATF_GAP_DROPPED &&
                                                                   !no_drop(cfg);
            if (!expected)
                bad(c, dir, "gap %zu (before index event %llu): reason %s", g,
                    (unsigned long long)j, atf_gap_reason_str(gp->reason));
            if (gp->index_lost > m->n - start) {
                bad(c, dir, "gap %zu (before index event %llu): %llu events lost after produced "
                    "event %llu, %llu produced", g, (unsigned long long)j,
                    (unsigned long long)gp->index_lost, (unsigned long long)start,
                    (unsigned long long)m->n);
                return;
            }
            for (k = start; k < start + gp->index_lost; k++) detail += m->ev[k].has_detail;
            if (!discards && gp->detail_lost != detail)
                bad(c, dir, "gap %zu (before index event %llu): %llu detail records lost, the "
                    "%llu events lost had %llu", g, (unsigned long long)j,
                    (unsigned long long)gp->detail_lost, (unsigned long long)gp->index_lost,
                    (unsigned long long)detail);
            if ((j > 0 && gp->first_lost_ns < evs[j - 1].timestamp_ns) ||
                (j < p && gp->first_lost_ns > evs[j].timestamp_ns))
                bad(c, dir, "gap %zu (before index event %llu): first lost at %llu, not between "
                    "its neighbours' %llu and %llu", g, (unsigned long long)j,
                    (unsigned long long)gp->first_lost_ns,
                    (unsigned long long)(j > 0 ? evs[j - 1].timestamp_ns : 0),
                    (unsigned long long)(j < p ? evs[j].timestamp_ns : 0));
            lost += gp->index_lost;
        }
        if (j == p) break;
        at = j + lost;
        de = evs[j].detail_seq < d ? &des[evs[j].detail_seq] : NULL;
        if (at >= m->n || !event_matches(cfg, m, &evs[j], de, &m->ev[at])) {
            describe(a, sizeof a, &evs[j]);
            if (at < m->n) describe_model(b, sizeof b, &m->ev[at]);
            else snprintf(b, sizeof b, "nothing (%llu produced)", (unsigned long long)m->n);
            bad(c, dir, "index event %llu is not the event the gaps before it place there "
                "(produced event %llu): found %s, produced %s", (unsigned long long)j,
                (unsigned long long)at, a, b);
            return;
        }
    }
    if (g < tr->gap_count)
        bad(c, dir, "gap %zu at index event %llu, past the %llu events in index.atf", g,
            (unsigned long long)tr->gaps[g].index_seq, (unsigned long long)p);
    if (lost != tr->events_lost)
        bad(c, dir, "the reader counts %llu events lost, its gaps %llu",
            (unsigned long long)tr->events_lost, (unsigned long long)lost);
}

/* Checks thread directory `dir` against `m`, what its slot produced. Before
 * recovery (recovered = 0) a crash may leave: a torn tail, no footer, detail records at
 * the end whose index event is not in index.atf, windowed records whose index event has
 * no link yet. After recovery (1) none of that, and every file is finalized with its CRC. */
static void check_thread(checker *c, const char *dir, const trial_cfg *cfg, const model *m,
                         int recovered, thread_seen *out) {
    char ipath[1300], a[160], b[160];
    atf_thread_reader tr;
    atf_index_event *evs = NULL;
    atf_detail_event *des = NULL;
    uint64_t *map = NULL;
    uint64_t p, d = 0, i, j, prev_ts = 0, prev_seq = 0;
    int mapped = 0;
    memset(out, 0, sizeof *out);
    out->present = path_exists(dir);
    if (!out->present) return;
    snprintf(ipath, sizeof ipath, "%s/index.atf", dir);
    if (!path_exists(ipath)) {
        out->unborn = 1;
        if (recovered) bad(c, dir, "recovery left a thread directory without index.atf");
        else if (!dir_is_unborn(dir)) bad(c, dir, "no index.atf, but other files");
        return;
    }
    if (atf_thread_reader_open(&tr, dir, NULL) != ATF_OK) {
        char line[1024];
        bad(c, dir, "does not open: %s", atf_error_format(&tr.error, line, sizeof line));
        return;
    }
    p = tr.index.event_count;
    d = tr.has_detail ? tr.detail.event_count : 0;
    out->events = p;
    out->detail = d;
    out->finalized = tr.index.counted == ATF_COUNT_FINALIZED &&
                     (!tr.has_detail || tr.detail.counted == ATF_COUNT_FINALIZED);
    if ((uint32_t)tr.index.layout != record_layout(cfg) ||
        tr.index.packed != (cfg->layout == ATF_LAYOUT_PACKED))
        bad(c, dir, "layout %d%s, recorded with %s", tr.index.layout,
            tr.index.packed ? " (packed)" : "", layout_name(cfg->layout));
    if (tr.has_detail && cfg->detail == ATF_DETAIL_OFF) bad(c, dir, "detail.atf with detail off");
    if (p > m->n) bad(c, dir, "%llu index events, the thread produced %llu",
                      (unsigned long long)p, (unsigned long long)m->n);
    if (tr.index.counted == ATF_COUNT_FOOTER_MISMATCH ||
        (tr.has_detail && tr.detail.counted == ATF_COUNT_FOOTER_MISMATCH))
        bad(c, dir, "a footer disagrees with its file");
    if (recovered && !out->finalized) bad(c, dir, "not finalized after recovery");
    if (tr.index.counted != ATF_COUNT_FROM_SIZE && atf_index_reader_verify_crc(&tr.index) != ATF_OK)
        bad(c, dir, "index.atf: CRC32-C mismatch");
    if (tr.has_detail && tr.detail.counted != ATF_COUNT_FROM_SIZE &&
        atf_detail_reader_verify_crc(&tr.detail) != ATF_OK)
        bad(c, dir, "detail.atf: CRC32-C mismatch");
    if (recovered && (tr.index.crc_state != ATF_CRC_OK && p > 0))
        bad(c, dir, "index.atf: no CRC32-C after recovery (%s)", atf_crc_state_str(tr.index.crc_state));
    evs = (atf_index_event *)malloc((size_t)(p + 1) * sizeof *evs);
    des = (atf_detail_event *)malloc((size_t)(d + 1) * sizeof *des);
    map = (uint64_t *)malloc((size_t)(p + 1) * sizeof *map);
    if (!evs || !des || !map) {
        bad(c, dir, "out of memory");
        goto done;
    }
    for (j = 0; j < d; j++) atf_detail_reader_get(&tr.detail, j, &des[j]);
    for (j = 0; j < p; j++) {
        atf_index_reader_get(&tr.index, j, &evs[j]);
        if (evs[j].timestamp_ns < prev_ts)
            bad(c, dir, "index event %llu: timestamp %llu before the previous one's %llu",
                (unsigned long long)j, (unsigned long long)evs[j].timestamp_ns,
                (unsigned long long)prev_ts);
        prev_ts = evs[j].timestamp_ns;
        if (record_layout(cfg) == ATF_LAYOUT_1 && evs[j].thread_id != tr.index.header.thread_id)
            bad(c, dir, "index event %llu: thread id %u, the header's is %u",
                (unsigned long long)j, evs[j].thread_id, tr.index.header.thread_id);
        /* a link on disk resolves: the drain writes detail.atf before index.atf, and a
         * windowed link is patched in only after its record was written */
        if (evs[j].detail_seq != ATF_NO_DETAIL &&
            (evs[j].detail_seq >= d || des[evs[j].detail_seq].header.index_seq != j))
            bad(c, dir, "index event %llu: link to detail record %llu does not resolve (%llu "
                "records)", (unsigned long long)j, (unsigned long long)evs[j].detail_seq,
                (unsigned long long)d);
    }
    check_gaps(c, dir, cfg, m, &tr, evs, des, d);
    out->gaps = tr.gap_count;
    out->lost = tr.events_lost;
    out->stopped = tr.gap_count && tr.gaps[tr.gap_count - 1].reason == ATF_GAP_STOPPED;
    for (j = 0; j < tr.gap_count; j++)
        if (tr.gaps[j].reason == ATF_GAP_DISCARDED) out->discarded += tr.gaps[j].index_lost;
    /* The persisted events, matched in order to the produced ones (the leftmost match is
     * a match whenever any is). Without drops or discards, event j must be produced
     * event j. */
    for (i = 0, j = 0; i < m->n && j < p; i++) {
        const atf_detail_event *de = evs[j].detail_seq < d ? &des[evs[j].detail_seq] : NULL;
        if (event_matches(cfg, m, &evs[j], de, &m->ev[i])) {
            map[j++] = i;
            continue;
        }
        if (dense(cfg)) {
            describe(a, sizeof a, &evs[j]);
            describe_model(b, sizeof b, &m->ev[j]);
            bad(c, dir, "index event %llu is not the event produced in that place (no event "
                "can be dropped): found %s, produced %s%s", (unsigned long long)j, a, b,
                de ? " (or its payload differs)" : "");
            break;
        }
        out->skipped++;
    }
    mapped = j == p;
    if (!mapped && !dense(cfg)) {
        describe(a, sizeof a, &evs[j]);
        bad(c, dir, "index event %llu (%s) and those after it are not in the order produced",
            (unsigned long long)j, a);
    }
    /* detail records: in index order, each with the payload of the event it names */
    for (j = 0; j < d; j++) {
        const atf_detail_event *de = &des[j];
        uint64_t s = de->header.index_seq;
        const model_ev *x = NULL;
        if (j > 0 && s <= prev_seq)
            bad(c, dir, "detail record %llu names index event %llu, not after %llu",
                (unsigned long long)j, (unsigned long long)s, (unsigned long long)prev_seq);
        prev_seq = s;
        if (record_layout(cfg) == ATF_LAYOUT_1 && de->header.thread_id != tr.index.header.thread_id)
            bad(c, dir, "detail record %llu: thread id %u", (unsigned long long)j,
                de->header.thread_id);
        if (s < p) {
            if (mapped) x = &m->ev[map[s]];
            if (de->header.timestamp_ns != evs[s].timestamp_ns)
                bad(c, dir, "detail record %llu: timestamp differs from index event %llu's",
                    (unsigned long long)j, (unsigned long long)s);
            if (evs[s].detail_seq == ATF_NO_DETAIL) {
                out->unlinked++;
                if (recovered || cfg->detail != ATF_DETAIL_WINDOWED)
                    bad(c, dir, "detail record %llu: index event %llu has no link to it",
                        (unsigned long long)j, (unsigned long long)s);
            } else if (evs[s].detail_seq != j) {
                bad(c, dir, "detail record %llu: index event %llu links to record %llu",
                    (unsigned long long)j, (unsigned long long)s,
                    (unsigned long long)evs[s].detail_seq);
            }
        } else {
            out->trailing++;
            if (recovered)
                bad(c, dir, "detail record %llu names index event %llu past the end (%llu)",
                    (unsigned long long)j, (unsigned long long)s, (unsigned long long)p);
            if (dense(cfg) && s < m->n) x = &m->ev[s];
        }
        if (x && !x->has_detail) {
            bad(c, dir, "detail record %llu: produced event of index event %llu has no detail",
                (unsigned long long)j, (unsigned long long)s);
        } else if (x && (de->payload_len != m->payload_len ||
                         memcmp(de->payload, m->payloads + (size_t)x->payload * m->payload_len,
                                m->payload_len) != 0)) {
            bad(c, dir, "detail record %llu: payload differs from the one produced with index "
                "event %llu", (unsigned long long)j, (unsigned long long)s);
        }
        if (x && de->header.type != (x->call ? ATF_DETAIL_FUNCTION_CALL : ATF_DETAIL_FUNCTION_RETURN))
            bad(c, dir, "detail record %llu: type %u", (unsigned long long)j, de->header.type);
    }
    if (recovered && atf_thread_reader_verify_links(&tr) != ATF_OK)
        bad(c, dir, "links do not verify both ways after recovery");
done:
    free(evs);
    free(des);
    free(map);
    atf_thread_reader_close(&tr);
}


/* What a whole session directory held. */
typedef struct session_seen {
    uint32_t present, unborn;    /* thread directories, those without index.atf */
    uint64_t events, detail;     /* index events and detail records in the files */
    int any_index;               /* some thread had an index.atf */
    int closed;                  /* manifest.json says closed */
    thread_seen t[TRIAL_MAX_THREADS];
} session_seen;

/* The thread slots of a session's directories that gen cannot have made. */
static void check_no_stray_threads(checker *c, const char *dir, const trial_cfg *cfg) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    if (!d) {
        bad(c, dir, "cannot list the session directory");
        return;
    }
    while ((ent = readdir(d)) != NULL) {
        unsigned long slot;
        char *end;
        if (strncmp(ent->d_name, "thread_", 7) != 0) continue;
        slot = strtoul(ent->d_name + 7, &end, 10);
        if (*end || slot >= cfg->threads) bad(c, dir, "unexpected %s", ent->d_name);
    }
    closedir(d);
}

/* --max-size: the event bytes of every thread's files stay within the bound and its
 * slack (1 % + 512 KiB), headers, footers and packed block tables aside. */
static void check_bound(checker *c, const char *dir, const trial_cfg *cfg) {
    static const char *const leaves[] = { "index.atf", "detail.atf" };
    char path[1300];
    uint64_t bytes = 0, limit = cfg->max_bytes + cfg->max_bytes / 100 + ((uint64_t)1 << 19);
    uint32_t k;
    size_t l;
    for (k = 0; k < cfg->threads; k++)
        for (l = 0; l < 2; l++) {
            uint64_t size;
            snprintf(path, sizeof path, "%s/thread_%u/%s", dir, k, leaves[l]);
            size = file_size(path);
            if (size > 2 * ATF_HEADER_SIZE) bytes += size - 2 * ATF_HEADER_SIZE;
        }
    limit += cfg->threads * (ATF_PACKED_LANE_SIZE + 8 * (cfg->events / ATF_PACKED_BLOCK_EVENTS + 1));
    if (bytes > limit)
        bad(c, dir, "%llu bytes of events with --max-size %llu (at most %llu)",
            (unsigned long long)bytes, (unsigned long long)cfg->max_bytes,
            (unsigned long long)limit);
}

/* Checks every thread of session `dir`, and (before recovery) manifest.json. */
static void check_session(checker *c, const char *dir, const trial_cfg *cfg, const model *models,
                          int recovered, session_seen *out) {
    char path[1200];
    char *json;
    uint32_t k;
    memset(out, 0, sizeof *out);
    check_no_stray_threads(c, dir, cfg);
    for (k = 0; k < cfg->threads; k++) {
        thread_seen *t = &out->t[k];
        snprintf(path, sizeof path, "%s/thread_%u", dir, k);
        check_thread(c, path, cfg, &models[k], recovered, t);
        out->present += (uint32_t)t->present;
        out->unborn += (uint32_t)t->unborn;
        out->any_index |= t->present && !t->unborn;
        out->events += t->events;
        out->detail += t->detail;
    }
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json = read_text(path);
    if (!json) {
        bad(c, path, "missing (atf gen prints the directory after the first manifest)");
        return;
    }
    if (cfg->max_bytes) check_bound(c, dir, cfg);
    if (!json_valid(json)) bad(c, path, "not valid JSON (it is replaced whole, never torn)");
    out->closed = strstr(json, "\"state\":\"closed\"") != NULL;
    for (k = 0; k < cfg->threads && !recovered; k++) {
        const char *obj = manifest_thread(json, k);
        const thread_seen *t = &out->t[k];
        const model *m = &models[k];
        uint64_t written = 0, dropped = 0, dwritten = 0, ddropped = 0, lost = 0, gaps = 0;
        uint64_t stopped = 0, discarded = 0;
        int counts;
        if (!obj) {
            if (out->closed) bad(c, path, "closed, but thread %u is not listed", k);
            continue;
        }
        counts = manifest_u64(obj, "events_written", &written) &&
                 manifest_u64(obj, "events_dropped", &dropped) &&
                 manifest_u64(obj, "detail_written", &dwritten) &&
                 manifest_u64(obj, "detail_dropped", &ddropped) &&
                 manifest_u64(obj, "events_lost_io", &lost);
        if (!counts) {
            bad(c, path, "thread %u: counts missing", k);
            continue;
        }
        if (lost) bad(c, path, "thread %u: events_lost_io %llu", k, (unsigned long long)lost);
        manifest_u64(obj, "events_stopped", &stopped); /* written only when not 0 */
        if (stopped && !cfg->max_bytes)
            bad(c, path, "thread %u: events_stopped %llu with no bound", k,
                (unsigned long long)stopped);
        manifest_u64(obj, "events_discarded", &discarded); /* written only when not 0 */
        if (discarded && !cfg->keep_bytes)
            bad(c, path, "thread %u: events_discarded %llu with no flight recorder", k,
                (unsigned long long)discarded);
        if (out->closed) {
            /* the figures of a closed session are exact */
            if (!t->present || t->unborn) bad(c, path, "closed, but thread_%u has no index.atf", k);
            if (!t->finalized) bad(c, path, "closed, but thread_%u is not finalized", k);
            if (written != t->events)
                bad(c, path, "thread %u: events_written %llu, index.atf holds %llu", k,
                    (unsigned long long)written, (unsigned long long)t->events);
            if (written + dropped + stopped + discarded != m->n)
                bad(c, path, "thread %u: events_written %llu + events_dropped %llu + "
                    "events_stopped %llu + events_discarded %llu != %llu produced", k,
                    (unsigned long long)written, (unsigned long long)dropped,
                    (unsigned long long)stopped, (unsigned long long)discarded,
                    (unsigned long long)m->n);
            if (no_drop(cfg) && dropped)
                bad(c, path, "thread %u: %llu events dropped with --overflow %s and a ring of "
                    "%llu for %llu events", k, (unsigned long long)dropped,
                    overflow_name(cfg->overflow), (unsigned long long)ring_slots(cfg),
                    (unsigned long long)m->n);
            /* a closed session has every gap, the one at the end included */
            if (t->lost != dropped + stopped + discarded || t->events + t->lost != m->n)
                bad(c, path, "thread %u: %llu events dropped, %llu written; gaps.atf accounts "
                    "for %llu lost in %llu gaps, %llu produced", k, (unsigned long long)dropped,
                    (unsigned long long)t->events, (unsigned long long)t->lost,
                    (unsigned long long)t->gaps, (unsigned long long)m->n);
            if (manifest_u64(obj, "gaps", &gaps) && gaps != t->gaps)
                bad(c, path, "thread %u: %llu gaps, gaps.atf holds %llu", k,
                    (unsigned long long)gaps, (unsigned long long)t->gaps);
            if (dwritten != t->detail)
                bad(c, path, "thread %u: detail_written %llu, detail.atf holds %llu", k,
                    (unsigned long long)dwritten, (unsigned long long)t->detail);
            /* a dropped event takes its detail with it, uncounted as detail (and so may an
             * event after a bound's cut) */
            if (dropped + stopped == 0 ? dwritten + ddropped != m->n_detail
                                       : dwritten + ddropped > m->n_detail)
                bad(c, path, "thread %u: detail_written %llu + detail_dropped %llu, %llu "
                    "produced (%llu events dropped)", k, (unsigned long long)dwritten,
                    (unsigned long long)ddropped, (unsigned long long)m->n_detail,
                    (unsigned long long)dropped);
        } else {
            /* written while recording: they lag the files, never lead them */
            if (written > t->events)
                bad(c, path, "thread %u: events_written %llu, index.atf holds only %llu", k,
                    (unsigned long long)written, (unsigned long long)t->events);
            if (written + dropped > m->n)
                bad(c, path, "thread %u: events_written + events_dropped %llu > %llu produced",
                    k, (unsigned long long)(written + dropped), (unsigned long long)m->n);
            if (t->events + t->lost > m->n)
                bad(c, path, "thread %u: %llu events written and %llu lost in gaps, %llu "
                    "produced", k, (unsigned long long)t->events, (unsigned long long)t->lost,
                    (unsigned long long)m->n);
            if (dwritten > t->detail)
                bad(c, path, "thread %u: detail_written %llu, detail.atf holds only %llu", k,
                    (unsigned long long)dwritten, (unsigned long long)t->detail);
        }
    }
    free(json);
}

/* Recovery kept what the crash left: the same events, the detail records whose index
 * event is there, no thread directory without index.atf. */
static void check_recovery_kept(checker *c, const char *dir, const trial_cfg *cfg,
                                const session_seen *pre, const session_seen *post) {
    uint32_t k;
    for (k = 0; k < cfg->threads; k++) {
        const thread_seen *a = &pre->t[k], *b = &post->t[k];
        if (a->unborn) {
            if (b->present) bad(c, dir, "thread_%u without index.atf is still there", k);
            continue;
        }
        if (a->present != b->present) bad(c, dir, "thread_%u appeared or went", k);
        if (a->events != b->events)
            bad(c, dir, "thread_%u: %llu index events before recovery, %llu after", k,
                (unsigned long long)a->events, (unsigned long long)b->events);
        if (a->gaps != b->gaps || a->lost != b->lost)
            bad(c, dir, "thread_%u: %llu gaps (%llu events) before recovery, %llu (%llu) after",
                k, (unsigned long long)a->gaps, (unsigned long long)a->lost,
                (unsigned long long)b->gaps, (unsigned long long)b->lost);
        if (a->detail - a->trailing != b->detail)
            bad(c, dir, "thread_%u: %llu detail records (%llu past the last index event) "
                "before recovery, %llu after", k, (unsigned long long)a->detail,
                (unsigned long long)a->trailing, (unsigned long long)b->detail);
    }
}

/* ---- a trial ------------------------------------------------------------------------ */

enum { KILL_AT_START = 0, KILL_WHILE_WRITING = 1, KILL_AT_CLOSE = 2, KILL_NEVER = 3 };
enum { HANG_S = 300 };

typedef struct kill_plan {
    int when;                    /* KILL_* */
    uint64_t permille;           /* KILL_WHILE_WRITING: share of the events on disk */
    uint64_t delay_us;           /* then this long */
} kill_plan;

typedef struct totals {
    uint64_t trials, recording, after_close, before_file, events, files_recovered, unborn;
    uint64_t skipped;
    uint64_t block, drop;        /* trials by overflow policy */
    uint64_t gaps, lost;         /* gaps in gaps.atf and the events they lost (drop) */
    uint64_t stopped;            /* threads stopped by --max-size */
    uint64_t discarded;          /* events the flight recorder discarded (--keep-last) */
} totals;

static int build_models(model *models, const trial_cfg *cfg) {
    uint32_t k;
    for (k = 0; k < cfg->threads; k++) {
        if (!model_build(&models[k], cfg, k)) {
            while (k--) model_free(&models[k]);
            return 0;
        }
    }
    return 1;
}

static void free_models(model *models, const trial_cfg *cfg) {
    uint32_t k;
    for (k = 0; k < cfg->threads; k++) model_free(&models[k]);
}

/* Records under `root` with cfg, kills as planned, checks, recovers, checks again. The
 * number of problems (0: the files are removed). */
static int run_trial(const char *name, const char *root, const trial_cfg *cfg,
                     const kill_plan *plan, totals *tt) {
    char dir[1024], log[1200];
    model models[TRIAL_MAX_THREADS];
    session_seen pre, post;
    checker c = { 0, 0 };
    int status = 0, reaped = 0, rc;
    double t0;
    pid_t pid;
    rm_rf(root);
    pid = gen_start(cfg, root, dir, sizeof dir);
    if (pid < 0) {
        printf("  %s: atf gen (%s) did not start or printed no directory\n", name, atf_command());
        print_cfg(cfg);
        return 1;
    }
    /* the waits end when the child does; the deadline only keeps a hung child (a
     * deadlock) from hanging the test, it is far beyond any run's length */
    t0 = seconds();
    if (plan->when == KILL_WHILE_WRITING) {
        uint64_t base = cfg->threads * (no_drop(cfg) ? cfg->events : ring_slots(cfg));
        if (cfg->keep_bytes) base = cfg->keep_bytes / 32; /* what one write puts on disk */
        uint64_t target = base * plan->permille / 1000u;
        while (!reaped && events_on_disk(dir, cfg->threads) < target && seconds() - t0 < HANG_S) {
            reaped = waitpid(pid, &status, WNOHANG) == pid;
            if (!reaped) sleep_us(100);
        }
    } else if (plan->when == KILL_AT_CLOSE || plan->when == KILL_NEVER) {
        while (!reaped && (plan->when == KILL_NEVER || !manifest_closed(dir)) &&
               seconds() - t0 < HANG_S) {
            reaped = waitpid(pid, &status, WNOHANG) == pid;
            if (!reaped) sleep_us(100);
        }
        if (!reaped && plan->when == KILL_NEVER) bad(&c, name, "atf gen still runs after %d s", HANG_S);
    }
    if (!reaped) sleep_us(plan->delay_us);
    if (!reaped) kill(pid, SIGKILL);
    if (!reaped) waitpid(pid, &status, 0);
    if (plan->when == KILL_NEVER ? !(WIFEXITED(status) && WEXITSTATUS(status) == 0)
                                 : !(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
                                       !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
        bad(&c, name, "atf gen ended with status 0x%x", (unsigned)status);
    if (!build_models(models, cfg)) {
        printf("  %s: out of memory for the expected events\n", name);
        return 1;
    }
    check_session(&c, dir, cfg, models, 0, &pre);
    if (plan->when == KILL_NEVER && !pre.closed) bad(&c, name, "a whole run left no closed manifest");
    snprintf(log, sizeof log, "%s/recover.log", root);
    rc = run_atf(log, "recover", NULL, dir);
    if (rc != 0) {
        bad(&c, name, "atf recover exited with %d:", rc);
        show_log(log);
    }
    tt->files_recovered += count_lines(log, "recovered ") + count_lines(log, "removed ");
    if (plan->when == KILL_NEVER && count_lines(log, "recovered ") + count_lines(log, "removed "))
        bad(&c, name, "atf recover changed files of a whole run");
    snprintf(log, sizeof log, "%s/verify.log", root);
    rc = run_atf(log, "verify", "--strict", dir);
    if (rc != 0) {
        bad(&c, name, "atf verify --strict exited with %d after recovery:", rc);
        show_log(log);
    }
    check_session(&c, dir, cfg, models, 1, &post);
    check_recovery_kept(&c, dir, cfg, &pre, &post);
    free_models(models, cfg);

    tt->trials++;
    tt->events += pre.events;
    tt->unborn += pre.unborn;
    if (!pre.any_index) tt->before_file++;
    else if (pre.closed) tt->after_close++;
    else tt->recording++;
    if (cfg->overflow == ATF_OVERFLOW_DROP) tt->drop++;
    else tt->block++;
    {
        uint32_t k;
        for (k = 0; k < cfg->threads; k++) {
            tt->skipped += pre.t[k].skipped;
            tt->gaps += pre.t[k].gaps;
            tt->lost += pre.t[k].lost;
            tt->stopped += (uint64_t)pre.t[k].stopped;
            tt->discarded += pre.t[k].discarded;
        }
    }
    if (c.errors) {
        printf("  %s: %d problem%s; files kept in %s\n", name, c.errors, c.errors == 1 ? "" : "s",
               dir);
        print_cfg(cfg);
        printf("    kill: plan %d, %llu permille, delay %llu us\n", plan->when,
               (unsigned long long)plan->permille, (unsigned long long)plan->delay_us);
    } else {
        rm_rf(root);
    }
    return c.errors;
}

/* ---- tests -------------------------------------------------------------------------- */

/* Whole runs of every layout and detail mode, and with a ring of 1024 for 30001 events
 * one that drops (--overflow drop) and one that blocks, and one stopped by --max-size:
 * nothing to recover, every figure exact, nothing dropped by the one that blocks. */
static void test_whole_runs(void) {
    char base[512], root[700], name[64];
    totals tt;
    uint32_t layout, mode;
    memset(&tt, 0, sizeof tt);
    scratch_root(base, sizeof base, "crash_trials_whole");
    for (layout = ATF_LAYOUT_1; layout <= ATF_LAYOUT_PACKED; layout++) {
        for (mode = 0; mode < 5; mode++) {
            trial_cfg cfg;
            kill_plan plan = { KILL_NEVER, 0, 0 };
            if (layout == ATF_LAYOUT_PACKED && mode == ATF_DETAIL_WINDOWED) continue;
            memset(&cfg, 0, sizeof cfg);
            cfg.threads = 3;
            cfg.layout = layout;
            cfg.detail = mode >= 3 ? (uint32_t)ATF_DETAIL_ALWAYS : mode;
            cfg.events = 30001;              /* odd: the last call stays open */
            cfg.ring = mode >= 3 ? 1024 : cfg.events;
            cfg.overflow = mode == 3 ? (uint32_t)ATF_OVERFLOW_DROP : (uint32_t)ATF_OVERFLOW_BLOCK;
            cfg.detail_every = 3 + mode;
            cfg.pre_ms = cfg.post_ms = 2;
            cfg.trigger_ms = 3;
            cfg.seed = 100 + layout * 10 + mode;
            snprintf(name, sizeof name, "whole_l%s_%s%s", layout_name(layout), detail_name(cfg.detail),
                     mode == 3 ? "_drops" : mode == 4 ? "_blocks" : "");
            snprintf(root, sizeof root, "%s/%s", base, name);
            CHECK_EQ(0, run_trial(name, root, &cfg, &plan, &tt));
        }
    }
    { /* one stopped by --max-size at a fifth of what it produces */
        trial_cfg cfg;
        kill_plan plan = { KILL_NEVER, 0, 0 };
        memset(&cfg, 0, sizeof cfg);
        cfg.threads = 3;
        cfg.layout = ATF_LAYOUT_1;
        cfg.detail = ATF_DETAIL_OFF; /* see the trials' bounds below */
        cfg.events = 30001;
        cfg.ring = 1024;
        cfg.overflow = ATF_OVERFLOW_BLOCK;
        cfg.detail_every = 4;
        cfg.pre_ms = cfg.post_ms = 2;
        cfg.trigger_ms = 3;
        cfg.seed = 177;
        cfg.max_bytes = cfg.threads * cfg.events * 32 / 5;
        snprintf(root, sizeof root, "%s/whole_max_size", base);
        CHECK_EQ(0, run_trial("whole_max_size", root, &cfg, &plan, &tt));
    }
    CHECK_EQ(15, tt.after_close);
    CHECK_EQ(3, tt.stopped); /* the bounded run's three threads */
    printf("  whole runs: %llu runs, %llu events checked, %llu gaps placing %llu lost events\n",
           (unsigned long long)tt.trials, (unsigned long long)tt.events,
           (unsigned long long)tt.gaps, (unsigned long long)tt.lost);
    rm_rf(base);
}

/* Damage a check must catch, on copies of a whole run whose CRCs are made to match again
 * (so that only the content checks can see it). */
static int patch_bytes(const char *path, uint64_t at, const void *bytes, size_t n) {
    int fd = open(path, O_RDWR), ok;
    if (fd < 0) return 0;
    ok = pwrite(fd, bytes, n, (off_t)at) == (ssize_t)n;
    close(fd);
    return ok;
}

static int read_bytes(const char *path, uint64_t at, void *bytes, size_t n) {
    int fd = open(path, O_RDONLY), ok;
    if (fd < 0) return 0;
    ok = pread(fd, bytes, n, (off_t)at) == (ssize_t)n;
    close(fd);
    return ok;
}

/* Rewrites the footer checksum of a finalized file over its events section. */
static int fix_crc(const char *path, int is_detail) {
    uint64_t size = file_size(path);
    uint8_t *buf = (uint8_t *)malloc((size_t)size + 1), foot[64];
    int ok = buf && size >= 128 && read_bytes(path, 0, buf, (size_t)size);
    uint32_t crc;
    if (ok) {
        crc = atf_crc32c(buf + ATF_HEADER_SIZE, (size_t)(size - 128));
        memcpy(foot, buf + size - 64, 64);
        if (is_detail) {
            atf_detail_footer f;
            ok = atf_detail_footer_decode(foot, &f) == ATF_OK;
            f.checksum = crc;
            atf_detail_footer_encode(&f, foot);
        } else {
            atf_index_footer f;
            ok = atf_index_footer_decode(foot, &f) == ATF_OK;
            f.checksum = crc;
            atf_index_footer_encode(&f, foot);
        }
        ok = ok && patch_bytes(path, size - 64, foot, 64);
    }
    free(buf);
    return ok;
}

static void copy_dir(const char *from, const char *to) {
    char cmd[2600];
    rm_rf(to);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", from, to);
    if (system(cmd) != 0) printf("  (could not copy %s)\n", from);
}

/* Problems the checker finds in session `dir` (quiet). */
static int problems(const char *dir, const trial_cfg *cfg, const model *models) {
    checker c = { 1, 0 };
    session_seen seen;
    check_session(&c, dir, cfg, models, 0, &seen);
    return c.errors;
}

static void test_checker_catches_damage(void) {
    char base[512], root[700], dir[1024], copy[1100], ipath[1200], dpath[1200];
    model models[TRIAL_MAX_THREADS];
    trial_cfg cfg, drops;
    uint8_t ev[2][32], byte;
    pid_t pid;
    int status = 0;
    char *json, *at;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = 1;
    cfg.layout = 1;
    cfg.detail = ATF_DETAIL_ALWAYS;
    cfg.events = 4000;
    cfg.ring = 4096;
    cfg.detail_every = 4;
    cfg.pre_ms = cfg.post_ms = cfg.trigger_ms = 1;
    cfg.seed = 7;
    drops = cfg;
    drops.ring = 64;             /* the same files, checked as if events could be dropped */
    drops.overflow = ATF_OVERFLOW_DROP;
    scratch_root(base, sizeof base, "crash_trials_damage");
    snprintf(root, sizeof root, "%s/run", base);
    rm_rf(base);
    pid = gen_start(&cfg, root, dir, sizeof dir);
    CHECK(pid > 0);
    if (pid <= 0) return;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(build_models(models, &cfg));
    snprintf(copy, sizeof copy, "%s/copy", base);
    snprintf(ipath, sizeof ipath, "%s/thread_0/index.atf", copy);
    snprintf(dpath, sizeof dpath, "%s/thread_0/detail.atf", copy);
    CHECK_EQ(0, problems(dir, &cfg, models));
    CHECK_EQ(0, problems(dir, &drops, models));
    {
        atf_thread_reader tr;
        char tdir[1100];
        snprintf(tdir, sizeof tdir, "%s/thread_0", dir);
        atf_result r = atf_thread_reader_open(&tr, tdir, NULL);
        CHECK_RESULT(ATF_OK, r);
        if (r == ATF_OK) {
            CHECK_EQ(cfg.events, tr.index.event_count);
            CHECK(tr.has_detail);
            atf_thread_reader_close(&tr);
        }
    }

    /* two events swapped: order broken (both checks) */
    copy_dir(dir, copy);
    CHECK(read_bytes(ipath, 64 + 32 * 101, ev, 64));
    CHECK(patch_bytes(ipath, 64 + 32 * 101, ev[1], 32) && patch_bytes(ipath, 64 + 32 * 102, ev[0], 32));
    CHECK(fix_crc(ipath, 0));
    CHECK(problems(copy, &cfg, models) > 0);
    CHECK(problems(copy, &drops, models) > 0);

    /* event 201 gone, the rest moved up one place, the last one twice: a gap */
    copy_dir(dir, copy);
    {
        uint64_t k;
        for (k = 201; k + 1 < cfg.events; k++) {
            CHECK(read_bytes(ipath, 64 + 32 * (k + 1), ev[0], 32));
            CHECK(patch_bytes(ipath, 64 + 32 * k, ev[0], 32));
        }
    }
    CHECK(fix_crc(ipath, 0));
    CHECK(problems(copy, &cfg, models) > 0);
    CHECK(problems(copy, &drops, models) > 0); /* the last event appears twice */

    /* an event with another function */
    copy_dir(dir, copy);
    CHECK(read_bytes(ipath, 64 + 32 * 301 + 8, &byte, 1));
    byte = (uint8_t)(byte ^ 0x10);
    CHECK(patch_bytes(ipath, 64 + 32 * 301 + 8, &byte, 1));
    CHECK(fix_crc(ipath, 0));
    CHECK(problems(copy, &cfg, models) > 0);
    CHECK(problems(copy, &drops, models) > 0);

    /* a timestamp going back */
    copy_dir(dir, copy);
    memset(ev[0], 0, 8);
    CHECK(patch_bytes(ipath, 64 + 32 * 402, ev[0], 8));
    CHECK(fix_crc(ipath, 0));
    CHECK(problems(copy, &cfg, models) > 0);

    /* a byte of a detail payload */
    copy_dir(dir, copy);
    CHECK(read_bytes(dpath, 64 + 100, &byte, 1));
    byte = (uint8_t)(byte ^ 1);
    CHECK(patch_bytes(dpath, 64 + 100, &byte, 1));
    CHECK(fix_crc(dpath, 1));
    CHECK(problems(copy, &cfg, models) > 0);
    CHECK(problems(copy, &drops, models) > 0);

    /* a link to the next record (event 0 has record 0; make it name record 1) */
    copy_dir(dir, copy);
    CHECK(read_bytes(ipath, 64 + 28, ev[0], 4));
    CHECK_EQ(0, ev[0][0]);
    ev[0][0] = 1;
    CHECK(patch_bytes(ipath, 64 + 28, ev[0], 4));
    CHECK(fix_crc(ipath, 0));
    CHECK(problems(copy, &cfg, models) > 0);

    /* the manifest: one dropped event that index.atf does not miss */
    copy_dir(dir, copy);
    snprintf(dpath, sizeof dpath, "%s/manifest.json", copy);
    json = read_text(dpath);
    at = json ? strstr(json, "\"events_dropped\":0,\"detail") : NULL;
    CHECK(at != NULL);
    if (at) {
        FILE *f = fopen(dpath, "wb");
        at[16] = '1';
        if (f) {
            fputs(json, f);
            fclose(f);
        }
        CHECK(problems(copy, &cfg, models) > 0);
        CHECK(problems(copy, &drops, models) > 0);
    }
    free(json);

    /* a gaps.atf in a run that dropped nothing: one event lost before index event 300
     * (with block none may exist; as a drop run every later event is then misplaced) */
    copy_dir(dir, copy);
    snprintf(dpath, sizeof dpath, "%s/thread_0/gaps.atf", copy);
    {
        uint8_t bytes[ATF_GAPS_HEADER_SIZE + ATF_GAP_RECORD_SIZE];
        atf_gap gap;
        FILE *f = fopen(dpath, "wb");
        memset(&gap, 0, sizeof gap);
        gap.index_seq = 300;
        gap.index_lost = 1;
        gap.reason = ATF_GAP_DROPPED;
        atf_gaps_header_encode(0, bytes);
        atf_gap_encode(&gap, bytes + ATF_GAPS_HEADER_SIZE);
        CHECK(f != NULL);
        if (f) {
            CHECK_EQ(sizeof bytes, fwrite(bytes, 1, sizeof bytes, f));
            fclose(f);
        }
        CHECK(problems(copy, &cfg, models) > 0);
        CHECK(problems(copy, &drops, models) > 0);
    }

    /* the untouched copy passes (the damage above was the only problem) */
    copy_dir(dir, copy);
    CHECK_EQ(0, problems(copy, &cfg, models));
    free_models(models, &cfg);
    if (!harness__failures_in_test) rm_rf(base);
}

/* The trials proper: CRASH_TRIALS of them, settings and kill moments drawn from
 * CRASH_SEED. */
static void test_sigkill_trials(void) {
    uint64_t n = env_u64("CRASH_TRIALS", 12);
    char base[512], root[700], name[64];
    totals tt;
    double t0 = seconds();
    uint64_t trial;
    int failed = 0;
    memset(&tt, 0, sizeof tt);
    rng_seed(env_u64("CRASH_SEED", 1));
    scratch_root(base, sizeof base, "crash_trials");
    for (trial = 0; trial < n; trial++) {
        trial_cfg cfg;
        kill_plan plan;
        uint64_t r;
        memset(&cfg, 0, sizeof cfg);
        cfg.threads = 1 + (uint32_t)rng_below(4);
        cfg.layout = 1 + (uint32_t)(trial % 3);
        cfg.detail = (uint32_t)((trial >> 1) % 3);
        if (cfg.layout == ATF_LAYOUT_PACKED && cfg.detail == ATF_DETAIL_WINDOWED)
            cfg.detail = ATF_DETAIL_ALWAYS; /* windowed links are patched: not packed */
        cfg.events = 20000 + rng_below(230000);
        /* layouts in turn, detail modes every other trial; the second run of six
         * in every three has rings smaller than a thread's events: a full ring drops or
         * blocks. The policy alternates, swapping sides every six trials, so that both see
         * every layout and detail mode with small rings (trials 6-11 and 24-29). */
        cfg.ring = (trial / 6) % 3 == 1 ? (uint64_t)1024 << rng_below(6) : cfg.events;
        cfg.overflow = (trial / 6 + trial) % 2 ? (uint32_t)ATF_OVERFLOW_DROP
                                               : (uint32_t)ATF_OVERFLOW_BLOCK;
        cfg.detail_every = 1 + rng_below(16);
        cfg.pre_ms = 1 + rng_below(5);
        cfg.post_ms = 1 + rng_below(5);
        cfg.trigger_ms = 2 + rng_below(10);
        cfg.seed = rng_next();
        /* one trial in four stops part of the way: 1 to 8 bytes per event produced (layout
         * 1 takes 32, packed about 3); without detail, whose records after the cut a stop
         * counts in detail_dropped, not in its gap (docs/FORMAT.md) */
        if (trial % 4 == 3) {
            cfg.max_bytes = cfg.threads * cfg.events * (1 + rng_below(8));
            cfg.detail = ATF_DETAIL_OFF;
        }
        /* one in four keeps only its most recent events: 64 KiB to 512 KiB of them (2048
         * to 16384), written at each trigger with their detail */
        if (trial % 4 == 1) cfg.keep_bytes = (uint64_t)65536 << rng_below(4);
        /* 10% right after the start, 75% once a share of the events is on disk, 15% once
         * the manifest says closed; each after a random delay */
        r = rng_below(100);
        plan.when = r < 10 ? KILL_AT_START : r < 85 ? KILL_WHILE_WRITING : KILL_AT_CLOSE;
        plan.permille = rng_below(1000);
        plan.delay_us = rng_below(plan.when == KILL_AT_START ? 400 : 1000);
        if (plan.when == KILL_AT_START && (r & 1u)) plan.delay_us = 0;
        snprintf(name, sizeof name, "trial %llu", (unsigned long long)trial);
        snprintf(root, sizeof root, "%s/trial_%03llu", base, (unsigned long long)trial);
        if (run_trial(name, root, &cfg, &plan, &tt)) failed++;
    }
    printf("  crash trials: %llu trials (%d failed; %llu --overflow block, %llu drop), %llu "
           "killed while recording, %llu killed after close, %llu killed before any file; %llu "
           "events checked, %llu files recovered (%llu thread directories without index.atf), "
           "%llu events absent (dropped) before a persisted one, %llu gaps placing %llu lost "
           "events, %llu threads stopped by --max-size, %llu events discarded by --keep-last; "
           "%.1f s\n",
           (unsigned long long)tt.trials, failed, (unsigned long long)tt.block,
           (unsigned long long)tt.drop, (unsigned long long)tt.recording,
           (unsigned long long)tt.after_close, (unsigned long long)tt.before_file,
           (unsigned long long)tt.events, (unsigned long long)tt.files_recovered,
           (unsigned long long)tt.unborn, (unsigned long long)tt.skipped,
           (unsigned long long)tt.gaps, (unsigned long long)tt.lost,
           (unsigned long long)tt.stopped, (unsigned long long)tt.discarded, seconds() - t0);
    CHECK_EQ(n, tt.trials);
    CHECK_EQ(0, failed);
    if (!failed) rm_rf(base);
}

static const test_case tests[] = {
    { "whole_runs", test_whole_runs },
    { "checker_catches_damage", test_checker_catches_damage },
    { "sigkill_trials", test_sigkill_trials },
};

HARNESS_MAIN("crash_trials", tests)
