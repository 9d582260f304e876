/* test_faults.c - failures the library must survive: every allocation it makes on the
 * open/record/close/read paths failing in turn, and a file size limit hit while recording.
 *
 * Allocations go through a counting allocator installed with ATF_MALLOC/ATF_REALLOC/
 * ATF_FREE. A scenario runs once to count its allocations, then once per allocation with
 * that one failing. Every call must return ATF_OK or ATF_E_NOMEM (never crash or return
 * another code), an injected failure must be reported by some call, the live allocation
 * count must be back to 0 once everything is closed, and every index.atf left on disk
 * must open with the thread reader (and the session directory with the session reader).
 *
 * The file size limit (RLIMIT_FSIZE, with SIGXFSZ ignored) is set in a forked child that
 * records; the write that passes it fails with EFBIG, which must reach atf_session_pump,
 * atf_session_error and atf_session_close; the parent then reads back every event up to
 * the last whole batch written before the limit. */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE 1
#endif
#include <stdint.h>
#include <stdlib.h>

/* ---- the counting allocator ---- */
static long fault_calls;   /* allocations (malloc and realloc) so far */
static long fault_at;      /* the one that fails (1-based); 0: none */
static long fault_live;    /* blocks allocated and not freed */
static int fault_hit;      /* the failure was injected */

static void *fault_malloc(size_t n) {
    void *p;
    if (++fault_calls == fault_at) {
        fault_hit = 1;
        return NULL;
    }
    p = malloc(n ? n : 1);
    if (p) fault_live++;
    return p;
}

static void *fault_realloc(void *old, size_t n) {
    void *p;
    if (++fault_calls == fault_at) {
        fault_hit = 1;
        return NULL;
    }
    p = realloc(old, n ? n : 1);
    if (p && !old) fault_live++;
    return p;
}

static void fault_free(void *p) {
    if (!p) return;
    fault_live--;
    free(p);
}

#define ATF_MALLOC(n) fault_malloc(n)
#define ATF_REALLOC(p, n) fault_realloc(p, n)
#define ATF_FREE(p) fault_free(p)
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "fixtures.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "scratch_dir.h"

#define FAIL_MSG(msg) harness__fail(__FILE__, __LINE__, msg)

static char tmp_dir[512];
static long points_total; /* allocation failure points exercised, all scenarios */

static void fault_arm(long at) {
    fault_calls = 0;
    fault_at = at;
    fault_hit = 0;
}

/* A result a fallible call may give under injected allocation failures. */
#define CHECK_OK_OR_NOMEM(rc, failed) \
    do { \
        atf_result r_ = (rc); \
        if (r_ != ATF_OK && r_ != ATF_E_NOMEM) \
            harness__fail_result(__FILE__, __LINE__, #rc " (OK or NOMEM)", ATF_E_NOMEM, r_); \
        if (r_ != ATF_OK) (failed) = 1; \
    } while (0)

/* Every thread_N/index.atf under pid_dir opens (with detail.atf when present), and so
 * does the directory as a session when it holds any thread. Runs with no injection. */
static void check_dir_readable(const char *pid_dir, long at) {
    DIR *d = opendir(pid_dir);
    struct dirent *e;
    int threads = 0;
    long saved = fault_at;
    fault_at = 0;
    if (!d) {
        fault_at = saved;
        return; /* the session failed before making its directory */
    }
    while ((e = readdir(d)) != NULL) {
        char dir[1400], path[1500];
        struct stat st;
        atf_thread_reader t;
        atf_result rc;
        if (strncmp(e->d_name, "thread_", 7) != 0) continue;
        snprintf(dir, sizeof dir, "%s/%s", pid_dir, e->d_name);
        snprintf(path, sizeof path, "%s/index.atf", dir);
        if (stat(path, &st) != 0) continue;
        threads++;
        rc = atf_thread_reader_open(&t, dir, NULL);
        if (rc != ATF_OK) {
            char line[1024];
            printf("  failure at allocation %ld left %s unreadable: %s\n", at, dir,
                   atf_error_format(&t.error, line, sizeof line));
        }
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) atf_thread_reader_close(&t);
    }
    closedir(d);
    if (threads) {
        atf_session_reader r;
        atf_result rc = atf_session_reader_open(&r, pid_dir, NULL);
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) atf_session_reader_close(&r);
    }
    CHECK_EQ(0, fault_live);
    fault_at = saved;
}

/* ---- recording under allocation failures ---- */
typedef struct scenario {
    const char *name;
    uint32_t layout, detail_mode;
} scenario;

/* A payload of `stack` stack bytes for detail records. */
static size_t make_payload(uint8_t *out, size_t cap, uint64_t fid, uint16_t stack) {
    atf_detail_payload p;
    uint8_t bytes[64];
    size_t i;
    memset(&p, 0, sizeof p);
    for (i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(i * 3u);
    p.function_id = fid;
    p.x[0] = fid * 2u;
    p.sp = 0x7000u;
    p.stack_size = stack;
    p.stack = bytes;
    return atf_detail_payload_encode(&p, out, cap);
}

/* Records `n` events on w starting at ts0: call/return pairs, detail on every third when
 * the writer has a detail ring. */
static void produce(atf_producer *w, uint64_t ts0, int n) {
    uint8_t payload[ATF_DETAIL_PAYLOAD_SIZE + 64];
    int i;
    for (i = 0; i < n; i++) {
        uint64_t fid = (uint64_t)(i / 2 % 5) + 1u, ts = ts0 + 10u * (uint64_t)i;
        uint32_t kind = (i & 1) ? ATF_EVENT_RETURN : ATF_EVENT_CALL;
        if (w->detail_mode != ATF_DETAIL_OFF && i % 3 == 0) {
            size_t len = make_payload(payload, sizeof payload, fid, (uint16_t)(i % 40));
            atf_producer_event_detail(w, kind, fid, ts, (uint16_t)(kind == ATF_EVENT_CALL ? 3 : 4),
                                    payload, len);
        } else if (kind == ATF_EVENT_CALL) {
            atf_producer_call(w, fid, ts);
        } else {
            atf_producer_return(w, fid, ts);
        }
    }
}

/* One run of the recording scenario with allocation `at` failing (0: none). Returns
 * whether any call reported a failure. */
static int record_once(const scenario *sc, long at, char *pid_dir, size_t cap) {
    atf_session_config cfg;
    atf_session *s = NULL;
    atf_producer *w = NULL, shm_writer;
    atf_result rc;
    char name[64];
    void *ring_mem = NULL;
    size_t ring_size = atf_ring_memory_size(ATF_RING_INDEX, 64);
    int failed = 0;
    uint32_t slot = 0;
    memset(&cfg, 0, sizeof cfg);
    snprintf(name, sizeof name, "%s_%ld", sc->name, at);
    cfg.layout = sc->layout;
    cfg.detail_mode = sc->detail_mode;
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.index_ring_events = 256;
    cfg.detail_ring_bytes = 8192;
    cfg.pre_roll_ns = 100;
    cfg.post_roll_ns = 100;
    cfg.max_threads = 8;
    cfg.session_name = name;
    pid_dir[0] = '\0';
    fault_arm(at);
    rc = atf_session_open(&s, tmp_dir, &cfg);
    CHECK_OK_OR_NOMEM(rc, failed);
    if (rc != ATF_OK) {
        CHECK(s == NULL);
        snprintf(pid_dir, cap, "%s/%s/pid_%u", tmp_dir, name, (unsigned)getpid());
        return failed;
    }
    snprintf(pid_dir, cap, "%s", atf_session_path(s));
    CHECK_OK_OR_NOMEM(atf_session_add_module(s, 0, "/usr/bin/traced", 0x100000000ull, 65536), failed);
    CHECK_OK_OR_NOMEM(atf_session_add_symbol(s, 1, "main"), failed);
    CHECK_OK_OR_NOMEM(atf_session_add_symbol(s, 2, "f\"quoted\""), failed);
    CHECK_OK_OR_NOMEM(atf_session_add_anchor(s, "media", 5000, 0.0, 48000.0), failed);
    rc = atf_session_attach(s, "main", &w);
    CHECK_OK_OR_NOMEM(rc, failed);
    if (rc == ATF_OK) produce(w, 1000, 120);
    atf_session_trigger(s, 1500); /* windowed: before the drain releases what it misses */
    CHECK_OK_OR_NOMEM(atf_session_pump(s), failed);
    /* a second slot whose ring is caller memory (as for another process) */
    if (posix_memalign(&ring_mem, 64, ring_size) == 0 &&
        atf_ring_init(ring_mem, ring_size, ATF_RING_INDEX, 64, sc->layout, 4242) == ATF_OK) {
        rc = atf_session_attach_rings(s, ring_mem, ring_size, NULL, 0, "shm", &slot);
        CHECK_OK_OR_NOMEM(rc, failed);
        if (rc == ATF_OK && atf_producer_init(&shm_writer, ring_mem, ring_size, NULL, 0, 0) == ATF_OK) {
            produce(&shm_writer, 1005, 40);
            atf_producer_close(&shm_writer);
        }
    }
    if (w) produce(w, 3000, 60);
    atf_session_trigger(s, 3300);
    CHECK_OK_OR_NOMEM(atf_session_pump(s), failed);
    rc = atf_session_close(s);
    CHECK_OK_OR_NOMEM(rc, failed);
    free(ring_mem);
    return failed;
}

static void record_faults(const scenario *sc) {
    char pid_dir[1100];
    long at, points = 0;
    for (at = 1; at < 100000; at++) {
        int before = harness__failures_in_test, reported = record_once(sc, at, pid_dir, sizeof pid_dir);
        if (!fault_hit) break; /* every allocation of the scenario has failed once */
        points++;
        if (!reported) {
            printf("  %s: allocation %ld failed and no call reported it\n", sc->name, at);
            harness__failures_in_test++;
        }
        CHECK_EQ(0, fault_live);
        check_dir_readable(pid_dir, at);
        {
            char session_dir[1100];
            snprintf(session_dir, sizeof session_dir, "%s/%s_%ld", tmp_dir, sc->name, at);
            remove_tree(session_dir);
        }
        if (harness__failures_in_test != before) {
            printf("  ^ %s, allocation %ld of the scenario failing\n", sc->name, at);
            if (harness__failures_in_test - before > 20) break;
        }
    }
    /* the run without a failure: everything recorded */
    {
        atf_session_reader r;
        char session_dir[1100];
        CHECK(record_once(sc, 0, pid_dir, sizeof pid_dir) == 0);
        CHECK_EQ(0, fault_live);
        if (atf_session_reader_open(&r, pid_dir, NULL) == ATF_OK) {
            CHECK_EQ(2, r.thread_count);
            if (r.thread_count == 2) {
                CHECK_EQ(180, r.threads[0].reader.index.event_count);
                CHECK_EQ(40, r.threads[1].reader.index.event_count);
                CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&r.threads[0].reader));
                CHECK_EQ(sc->detail_mode != ATF_DETAIL_OFF, r.threads[0].reader.has_detail);
            }
            CHECK(atf_session_reader_symbol(&r, 2) != NULL);
            atf_session_reader_close(&r);
        } else {
            FAIL_MSG("the session recorded without failures does not open");
        }
        snprintf(session_dir, sizeof session_dir, "%s/%s_0", tmp_dir, sc->name);
        remove_tree(session_dir);
        CHECK_EQ(0, fault_live);
    }
    printf("  %s: %ld allocation failure points\n", sc->name, points);
    points_total += points;
}

static void record_detail_off(void) {
    scenario sc = { "record_l1_off", ATF_LAYOUT_1, ATF_DETAIL_OFF };
    record_faults(&sc);
}
static void record_detail_always(void) {
    scenario sc = { "record_l1_always", ATF_LAYOUT_1, ATF_DETAIL_ALWAYS };
    record_faults(&sc);
}
static void record_detail_windowed(void) {
    scenario sc = { "record_l2_windowed", ATF_LAYOUT_2, ATF_DETAIL_WINDOWED };
    record_faults(&sc);
}

/* ---- reading under allocation failures ---- */

/* A session directory for the readers: a recorded thread with detail, a second recorded
 * thread, an out-of-order thread (timestamps swapped, as the original tracer leaves them)
 * and a manifest with symbols. Built with no injection. */
static void build_read_session(char *pid_dir, size_t cap) {
    atf_session_config cfg;
    atf_session *s;
    atf_producer *w;
    fx_buf ix = { NULL, 0, 0 };
    fx_index_spec spec;
    char dir[1200], path[1300];
    FILE *f;
    int i;
    fault_arm(0);
    memset(&cfg, 0, sizeof cfg);
    cfg.detail_mode = ATF_DETAIL_ALWAYS;
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.index_ring_events = 1024;
    cfg.detail_ring_bytes = 65536;
    cfg.session_name = "read_faults";
    if (atf_session_open(&s, tmp_dir, &cfg) != ATF_OK) {
        FAIL_MSG("session open");
        pid_dir[0] = '\0';
        return;
    }
    snprintf(pid_dir, cap, "%s", atf_session_path(s));
    for (i = 0; i < 40; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "function_%d", i);
        atf_session_add_symbol(s, (uint64_t)i + 1u, nm);
    }
    if (atf_session_attach(s, "main", &w) == ATF_OK) produce(w, 1000, 300);
    atf_session_pump(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    /* thread_5: out of order, not in the manifest */
    memset(&spec, 0, sizeof spec);
    spec.layout = 1;
    spec.count = 50;
    spec.finalized = spec.footer = 1;
    fx_index_build(&ix, &spec);
    fx_put64(ix.data, 64 + 3 * 32, fx_ts(40));
    fx_put64(ix.data, 64 + 40 * 32, fx_ts(3));
    snprintf(dir, sizeof dir, "%s/thread_5", pid_dir);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/index.atf", dir);
    f = fopen(path, "wb");
    if (!f || fwrite(ix.data, 1, ix.len, f) != ix.len || fclose(f) != 0) FAIL_MSG("write thread_5");
    fx_buf_free(&ix);
    CHECK_EQ(0, fault_live);
}

/* Open + merge + close of the session with allocation `at` failing. Returns whether a
 * failure was reported. *events receives the events merged. */
static int read_once(const char *pid_dir, long at, int no_mmap, uint64_t *events) {
    atf_session_reader r;
    atf_reader_options opt;
    atf_merge m;
    atf_merge_item item;
    atf_result rc;
    int failed = 0;
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = no_mmap;
    *events = 0;
    fault_arm(at);
    rc = atf_session_reader_open(&r, pid_dir, &opt);
    CHECK_OK_OR_NOMEM(rc, failed);
    if (rc != ATF_OK) {
        CHECK_RESULT(rc, r.error.code);
        CHECK(r.threads == NULL && r.symbols == NULL);
        return failed;
    }
    CHECK(r.manifest == ATF_MANIFEST_INCOMPLETE);
    rc = atf_merge_init(&m, &r, NULL);
    CHECK_OK_OR_NOMEM(rc, failed);
    if (rc == ATF_OK) {
        while (atf_merge_next(&m, &item) == ATF_OK) (*events)++;
        atf_merge_deinit(&m);
    }
    if (!failed && !atf_session_reader_symbol(&r, 40)) failed = -1; /* a symbol went missing */
    atf_session_reader_close(&r);
    return failed;
}

static void read_faults_mode(int no_mmap) {
    char pid_dir[1100];
    long at, points = 0;
    uint64_t events = 0;
    build_read_session(pid_dir, sizeof pid_dir);
    if (!pid_dir[0]) return;
    CHECK_EQ(0, read_once(pid_dir, 0, no_mmap, &events));
    CHECK_EQ(350, events);
    for (at = 1; at < 100000; at++) {
        int before = harness__failures_in_test, reported = read_once(pid_dir, at, no_mmap, &events);
        if (!fault_hit) break;
        points++;
        if (reported <= 0) {
            printf("  read (%s): allocation %ld failed and %s\n", no_mmap ? "no_mmap" : "mmap", at,
                   reported < 0 ? "a symbol was silently dropped" : "no call reported it");
            harness__failures_in_test++;
        }
        CHECK_EQ(0, fault_live);
        if (harness__failures_in_test != before && harness__failures_in_test - before > 20) break;
    }
    /* the thread and detail readers alone */
    for (at = 1; at < 1000; at++) {
        atf_thread_reader t;
        char dir[1200];
        atf_reader_options opt;
        atf_result rc;
        memset(&opt, 0, sizeof opt);
        opt.no_mmap = no_mmap;
        snprintf(dir, sizeof dir, "%s/thread_0", pid_dir);
        fault_arm(at);
        rc = atf_thread_reader_open(&t, dir, &opt);
        if (!fault_hit) {
            CHECK_RESULT(ATF_OK, rc);
            if (rc == ATF_OK) atf_thread_reader_close(&t);
            break;
        }
        points++;
        CHECK_RESULT(ATF_E_NOMEM, rc);
        CHECK_RESULT(ATF_E_NOMEM, t.error.code);
        if (rc == ATF_OK) atf_thread_reader_close(&t);
        CHECK_EQ(0, fault_live);
    }
    fault_arm(0);
    printf("  read (%s): %ld allocation failure points\n", no_mmap ? "no_mmap" : "mmap", points);
    points_total += points;
    {
        char session_dir[1100];
        snprintf(session_dir, sizeof session_dir, "%s/read_faults", tmp_dir);
        remove_tree(session_dir);
    }
}

static void read_faults_mmap(void) { read_faults_mode(0); }
static void read_faults_no_mmap(void) { read_faults_mode(1); }

/* ---- a file size limit hit while recording (EFBIG) ---- */

#define EFBIG_BATCH 100
#define EFBIG_BATCHES 10 /* batches that fit under the limit */

/* Child: records batches of EFBIG_BATCH events under RLIMIT_FSIZE, pumping after each,
 * until a pump fails; that must be ATF_E_IO with EFBIG, and stay the session's error
 * through one more batch and close. Exit status 100 + the number of batches that went
 * through, or below 100 the step that went wrong. */
static int efbig_child(const char *name, uint32_t detail_mode, rlim_t limit) {
    atf_session_config cfg;
    atf_session *s;
    atf_producer *w;
    struct rlimit rl;
    const atf_error *e;
    atf_result rc = ATF_OK;
    int b;
    signal(SIGXFSZ, SIG_IGN);
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.detail_mode = detail_mode;
    cfg.session_name = name;
    cfg.index_ring_events = 1024;
    cfg.detail_ring_bytes = 65536;
    if (atf_session_open(&s, tmp_dir, &cfg) != ATF_OK) return 10;
    if (atf_session_attach(s, "main", &w) != ATF_OK) return 11;
    rl.rlim_cur = rl.rlim_max = limit;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 12;
    for (b = 0; b < 50; b++) {
        produce(w, 1000 + (uint64_t)b * EFBIG_BATCH * 10u, EFBIG_BATCH);
        if ((rc = atf_session_pump(s)) != ATF_OK) break;
    }
    if (b == 50) return 30;
    if (rc != ATF_E_IO) return 40;
    e = atf_session_error(s);
    if (e->code != ATF_E_IO) return 41;
    if (e->sys_errno != EFBIG) return 42;
    if (!strstr(e->path, detail_mode ? "detail.atf" : "index.atf")) return 43;
    produce(w, 1000 + (uint64_t)(b + 1) * EFBIG_BATCH * 10u, EFBIG_BATCH);
    if (atf_session_pump(s) != ATF_E_IO) return 44; /* the first error stays */
    if (atf_session_close(s) != ATF_E_IO) return 45;
    return 100 + b;
}

/* Runs efbig_child in a child process; returns its pid directory in pid_dir. */
static int efbig_run(const char *name, uint32_t detail_mode, rlim_t limit, char *pid_dir, size_t cap) {
    int status = 0;
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) _exit(efbig_child(name, detail_mode, limit));
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    snprintf(pid_dir, cap, "%s/%s/pid_%u", tmp_dir, name, (unsigned)pid);
    return WEXITSTATUS(status);
}

static void io_efbig_index(void) {
    char pid_dir[1100], dir[1200], session_dir[1100];
    atf_thread_reader t;
    atf_session_reader r;
    uint64_t i;
    /* the limit leaves room for the header, EFBIG_BATCHES batches and half an event */
    rlim_t limit = ATF_HEADER_SIZE + EFBIG_BATCHES * EFBIG_BATCH * ATF_INDEX_EVENT_SIZE + 16;
    int status = efbig_run("efbig_index", ATF_DETAIL_OFF, limit, pid_dir, sizeof pid_dir);
    CHECK_EQ(100 + EFBIG_BATCHES, status);
    snprintf(dir, sizeof dir, "%s/thread_0", pid_dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&t, dir, NULL));
    if (t.index.event_count) {
        /* every event up to the last whole batch, as recorded; nothing torn */
        CHECK_EQ(EFBIG_BATCHES * EFBIG_BATCH, t.index.event_count);
        CHECK_EQ(0, t.index.torn_bytes);
        CHECK_EQ(ATF_COUNT_FROM_SIZE, t.index.counted);
        for (i = 0; i < t.index.event_count; i++) {
            atf_index_event ev;
            atf_index_reader_get(&t.index, i, &ev);
            if (ev.timestamp_ns != 1000u + 10u * i) {
                CHECK_EQ(1000u + 10u * i, ev.timestamp_ns);
                break;
            }
        }
        atf_thread_reader_close(&t);
    }
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, pid_dir, NULL));
    if (r.thread_count) atf_session_reader_close(&r);
    snprintf(session_dir, sizeof session_dir, "%s/efbig_index", tmp_dir);
    remove_tree(session_dir);
}

static void io_efbig_detail(void) {
    char pid_dir[1100], dir[1200], session_dir[1100];
    atf_thread_reader t;
    uint64_t i, batches;
    /* a batch is 3200 index bytes and 34 detail records of 124..163 bytes: detail.atf
     * reaches the limit first, index.atf never does */
    rlim_t limit = 30000;
    int status = efbig_run("efbig_detail", ATF_DETAIL_ALWAYS, limit, pid_dir, sizeof pid_dir);
    CHECK(status > 100 && status < 150);
    batches = status > 100 ? (uint64_t)status - 100u : 0;
    snprintf(dir, sizeof dir, "%s/thread_0", pid_dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&t, dir, NULL));
    if (t.index.event_count) {
        /* index.atf: every event of every batch, finalized */
        CHECK_EQ((batches + 2) * EFBIG_BATCH, t.index.event_count);
        CHECK_EQ(ATF_COUNT_FINALIZED, t.index.counted);
        /* detail.atf: every record that reached it whole before the limit (at least the
         * batches before it, never one of the batch after), each linked; the writer cuts
         * the file back after the last whole record and finalizes it when the footer fits */
        CHECK(t.has_detail);
        CHECK(t.detail.event_count >= batches * 34u);
        CHECK(t.detail.event_count < (batches + 1) * 34u);
        CHECK_EQ(0, t.detail.torn_bytes);
        CHECK(t.detail.counted == ATF_COUNT_FROM_SIZE || t.detail.counted == ATF_COUNT_FINALIZED);
        CHECK(t.detail.header.events_offset + t.detail.bytes_length +
                  (t.detail.counted == ATF_COUNT_FINALIZED ? ATF_FOOTER_SIZE : 0) <= limit);
        CHECK_RESULT(ATF_OK, atf_detail_reader_verify_crc(&t.detail));
        for (i = 0; i < t.detail.event_count; i++) {
            atf_index_event ev;
            CHECK_RESULT(ATF_OK, atf_thread_reader_index_of(&t, i, &ev));
        }
        atf_thread_reader_close(&t);
    }
    snprintf(session_dir, sizeof session_dir, "%s/efbig_detail", tmp_dir);
    remove_tree(session_dir);
}

static void summary(void) {
    printf("  allocation failure points exercised: %ld\n", points_total);
    CHECK(points_total > 0);
}

static const test_case tests[] = {
    { "record_detail_off", record_detail_off },
    { "record_detail_always", record_detail_always },
    { "record_detail_windowed", record_detail_windowed },
    { "read_faults_mmap", read_faults_mmap },
    { "read_faults_no_mmap", read_faults_no_mmap },
    { "io_efbig_index", io_efbig_index },
    { "io_efbig_detail", io_efbig_detail },
    { "summary", summary },
};

int main(int argc, char **argv) {
    int rc;
    if (scratch_dir_make(tmp_dir, sizeof tmp_dir, "faults") != 0) return 1;
    rc = harness_run("faults", tests, sizeof tests / sizeof tests[0], argc, argv);
    remove_tree(tmp_dir);
    return rc;
}
