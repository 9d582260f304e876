/* test_crash.c - what a crash or a failing disk leaves behind. A child process records
 * (drain thread on) and is SIGKILLed at pseudo-random points of its progress; every file it
 * leaves must open with the readers and hold a gap-free prefix of what the child produced.
 * A child producing into shared-memory rings is killed while the parent drains: no
 * published event may be lost. RLIMIT_FSIZE makes writes fail mid-session: the session
 * reports ATF_E_IO with errno EFBIG, and the files read back up to the last whole event,
 * with every detail link still exact. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#define CRASH_TRIALS 24
#define SHM_TRIALS 10

static char test_root[512];

static const char *root_dir(void) {
    if (!test_root[0]) scratch_root(test_root, sizeof test_root, "crash");
    return test_root;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_us(uint64_t us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u);
    ts.tv_nsec = (long)(us % 1000000u) * 1000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Pushes event i of generator thread k until the ring takes it (nothing is dropped, so
 * what reaches the disk is a prefix with no gap). Detail on every fourth event. */
static void push_until_taken(atf_producer *w, uint32_t k, uint64_t i, gen_state *g, int detail) {
    gen_state g0 = *g;
    uint32_t d0 = w->depth;
    for (;;) {
        atf_result rc = detail && i % 4 == 0 ? gen_push_detail(w, k, i, g) : gen_push(w, k, i, g);
        if (rc == ATF_OK) return;
        *g = g0;
        w->depth = d0;
        sched_yield();
    }
}

/* ---- a recording child, killed -------------------------------------------------------- */

/* Events the child's threads have pushed, in steps of PROGRESS_STEP, in memory shared
 * with the parent: the parent kills at a chosen point of the child's progress, so where
 * the kills land does not depend on how fast the machine is. */
#define PROGRESS_STEP 256u
static uint64_t *child_progress;

typedef struct crash_cfg {
    int layout, detail;
    uint32_t threads;
    uint64_t events, ring;
} crash_cfg;

typedef struct child_thread { atf_session *s; uint32_t k; const crash_cfg *cfg; } child_thread;

static void *child_thread_main(void *arg) {
    child_thread *c = (child_thread *)arg;
    atf_producer *w = NULL;
    gen_state g = {0};
    uint64_t i;
    char name[16];
    snprintf(name, sizeof name, "gen-%u", c->k);
    if (atf_session_attach(c->s, name, &w) != ATF_OK) _exit(3);
    for (i = 0; i < c->cfg->events; i++) {
        push_until_taken(w, c->k, i, &g, c->cfg->detail);
        if (i % PROGRESS_STEP == PROGRESS_STEP - 1) __atomic_fetch_add(child_progress, 1, __ATOMIC_RELAXED);
    }
    atf_session_detach(c->s);
    return NULL;
}

static void child_record(const crash_cfg *cfg, const char *name) {
    atf_session *s = NULL;
    atf_session_config c;
    child_thread ct[8];
    pthread_t t[8];
    uint32_t i;
    memset(&c, 0, sizeof c);
    c.layout = (uint32_t)cfg->layout;
    c.detail_mode = cfg->detail ? ATF_DETAIL_ALWAYS : ATF_DETAIL_OFF;
    c.index_ring_events = cfg->ring;
    c.detail_ring_bytes = 64 * 1024;
    c.session_name = name;
    if (atf_session_open(&s, root_dir(), &c) != ATF_OK) _exit(2);
    for (i = 0; i < cfg->threads; i++) {
        ct[i].s = s;
        ct[i].k = i;
        ct[i].cfg = cfg;
        pthread_create(&t[i], NULL, child_thread_main, &ct[i]);
    }
    for (i = 0; i < cfg->threads; i++) pthread_join(t[i], NULL);
    _exit(atf_session_close(s) == ATF_OK ? 0 : 4);
}

/* Checks a thread directory left by a child: it opens, its events are a prefix of one
 * generator thread's, its detail records belong to the events they name and every link
 * that reached the disk agrees both ways. Returns the generator thread, or -1. */
static int check_left_thread(const char *tdir, const crash_cfg *cfg, int *finalized) {
    atf_thread_reader tr;
    char path[1200];
    uint64_t i, k = UINT64_MAX, prev = 0;
    snprintf(path, sizeof path, "%s/index.atf", tdir);
    *finalized = 0;
    if (!path_exists(path)) return -2; /* killed between mkdir and the file's creation */
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, tdir, NULL));
    if (tr.index.event_count == 0 && tr.index.layout == 0) {
        printf("  %s: %s\n", tdir, atf_result_name(tr.error.code));
        return -1;
    }
    CHECK_EQ(cfg->layout, tr.index.layout);
    if (tr.index.event_count) {
        atf_index_event ev;
        atf_index_reader_get(&tr.index, 0, &ev);
        k = (ev.function_id >> 32) - 1;
        CHECK(k < cfg->threads);
    } else if (tr.has_detail && tr.detail.event_count) {
        atf_detail_event de;
        atf_detail_reader_get(&tr.detail, 0, &de);
        k = (uint8_t)((uint8_t)(de.payload[0] - (uint8_t)(de.header.index_seq * 13)) * 183u); /* 7^-1 */
    }
    if (k >= cfg->threads) {
        atf_thread_reader_close(&tr);
        return k == UINT64_MAX ? -3 : -1;
    }
    CHECK(tr.index.event_count <= cfg->events);
    CHECK_EQ(tr.index.event_count, check_index_against(&tr, (uint32_t)k, cfg->events, NULL, cfg->layout));
    if (tr.index.counted == ATF_COUNT_FINALIZED || tr.index.counted == ATF_COUNT_FOOTER_AT_END)
        CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&tr.index));
    CHECK(tr.index.counted != ATF_COUNT_FOOTER_MISMATCH);
    *finalized = tr.index.counted == ATF_COUNT_FINALIZED;
    for (i = 0; tr.has_detail && i < tr.detail.event_count; i++) {
        atf_detail_event de;
        uint8_t want[80];
        size_t n;
        atf_detail_reader_get(&tr.detail, i, &de);
        CHECK(i == 0 || de.header.index_seq > prev);
        CHECK_EQ(0, de.header.index_seq % 4);
        CHECK(de.header.index_seq < cfg->events);
        CHECK_EQ(gen_ts((uint32_t)k, de.header.index_seq), de.header.timestamp_ns);
        n = gen_payload((uint32_t)k, de.header.index_seq, want);
        CHECK_EQ(n, de.payload_len);
        if (n == de.payload_len) CHECK_MEM(want, de.payload, n);
        prev = de.header.index_seq;
        if (de.header.index_seq < tr.index.event_count) {
            atf_index_event ev;
            CHECK_RESULT(ATF_OK, atf_thread_reader_index_of(&tr, i, &ev));
        }
        if (harness__failures_in_test) break;
    }
    if (tr.has_detail && (tr.detail.counted == ATF_COUNT_FINALIZED ||
                          tr.detail.counted == ATF_COUNT_FOOTER_AT_END))
        CHECK_RESULT(ATF_OK, atf_detail_reader_verify_crc(&tr.detail));
    for (i = 0; i < tr.index.event_count; i++) {
        atf_index_event ev;
        atf_detail_event de;
        atf_index_reader_get(&tr.index, i, &ev);
        if (ev.detail_seq == ATF_NO_DETAIL) continue;
        /* detail is written before its index event: a link on disk always resolves */
        CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(&tr, i, &de));
        if (harness__failures_in_test) break;
    }
    atf_thread_reader_close(&tr);
    return (int)k;
}

/* When to kill a child: once its threads have pushed `steps` x PROGRESS_STEP events
 * (past the total: once it has exited), then after `delay_us` more. */
typedef struct kill_plan { uint64_t steps, delay_us; } kill_plan;

/* Waits until the child reached plan->steps or exited; returns 1 if it exited (reaped). */
static int wait_for_progress(pid_t pid, const kill_plan *plan, int *status) {
    while (__atomic_load_n(child_progress, __ATOMIC_RELAXED) < plan->steps) {
        if (waitpid(pid, status, WNOHANG) == pid) return 1;
        sleep_us(20);
    }
    return 0;
}

/* Runs one child; plan = NULL lets it finish. Returns the child's wall time. */
static double run_child(const crash_cfg *cfg, const char *name, const kill_plan *plan, pid_t *pid_out) {
    double t0 = seconds();
    int status = 0, reaped = 0;
    pid_t pid;
    (void)root_dir(); /* named after this process, before the child has another pid */
    if (!child_progress) {
        void *m = mmap(NULL, sizeof *child_progress, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CHECK(m != MAP_FAILED);
        if (m == MAP_FAILED) return 0;
        child_progress = (uint64_t *)m;
    }
    __atomic_store_n(child_progress, 0, __ATOMIC_RELAXED);
    fflush(stdout);
    pid = fork();
    if (pid == 0) child_record(cfg, name);
    *pid_out = pid;
    CHECK(pid > 0);
    if (pid <= 0) return 0;
    if (plan) {
        reaped = wait_for_progress(pid, plan, &status);
        if (!reaped) {
            sleep_us(plan->delay_us);
            kill(pid, SIGKILL);
        }
    }
    if (!reaped) waitpid(pid, &status, 0);
    if (!plan) CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return seconds() - t0;
}

static void check_child_dir(const char *name, pid_t pid, const crash_cfg *cfg, int *threads_seen,
                            int *finalized_seen) {
    char dir[1100], tdir[1200], path[1200];
    int seen[8] = {0};
    uint32_t slot;
    char *m;
    snprintf(dir, sizeof dir, "%s/%s/pid_%d", root_dir(), name, (int)pid);
    *threads_seen = 0;
    *finalized_seen = 0;
    if (!path_exists(dir)) return; /* killed before the session existed */
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    m = read_text(path);
    if (m) CHECK(json_valid(m)); /* whole or absent, never torn */
    free(m);
    for (slot = 0; slot < 8; slot++) {
        int fin = 0, k;
        snprintf(tdir, sizeof tdir, "%s/thread_%u", dir, slot);
        if (!path_exists(tdir)) break;
        k = check_left_thread(tdir, cfg, &fin);
        if (k >= 0) {
            CHECK_EQ(0, seen[k]); /* one directory per producing thread */
            seen[k] = 1;
            (*threads_seen)++;
            *finalized_seen += fin;
        }
    }
}

static void test_sigkill_recording(void) {
    crash_cfg base;
    pid_t pid;
    double full;
    uint64_t total_steps;
    int trial, killed_mid = 0, finished = 0, empty = 0, threads, fin;
    memset(&base, 0, sizeof base);
    base.layout = 1;
    base.threads = 3;
#ifdef REC_SANITIZED
    base.events = 20000;
#else
    base.events = 60000;
#endif
    base.ring = 4096;
    full = run_child(&base, "crash_full", NULL, &pid); /* how long a whole run takes here */
    check_child_dir("crash_full", pid, &base, &threads, &fin);
    total_steps = base.threads * base.events / PROGRESS_STEP;
    CHECK_EQ(3, threads);
    CHECK_EQ(3, fin);
    for (trial = 0; trial < CRASH_TRIALS && !harness__failures_in_test; trial++) {
        crash_cfg cfg = base;
        char name[32];
        kill_plan plan;
        cfg.layout = 1 + (trial & 1);
        cfg.detail = (trial >> 1) & 1;
        cfg.ring = trial % 3 == 0 ? 65536 : 1024;
        /* anywhere from before the first event to a little past the last one (a kill
         * during or after close); a short random delay spreads kills between steps */
        plan.steps = rng_next() % (total_steps + total_steps / 8 + 1);
        plan.delay_us = rng_next() % 200;
        snprintf(name, sizeof name, "crash_%02d", trial);
        run_child(&cfg, name, &plan, &pid);
        check_child_dir(name, pid, &cfg, &threads, &fin);
        if (fin == 3) finished++;
        else if (threads) killed_mid++;
        else empty++;
        if (harness__failures_in_test)
            printf("  trial %d: layout %d detail %d ring %llu killed after %llu of %llu events + %llu us\n",
                   trial, cfg.layout, cfg.detail, (unsigned long long)cfg.ring,
                   (unsigned long long)(plan.steps * PROGRESS_STEP),
                   (unsigned long long)(total_steps * PROGRESS_STEP), (unsigned long long)plan.delay_us);
    }
    printf("  %d trials (a whole run takes %.1f ms): %d killed while recording, %d after close, "
           "%d before any file\n", CRASH_TRIALS, full * 1e3, killed_mid, finished, empty);
    CHECK(killed_mid >= CRASH_TRIALS / 4); /* the kills did land mid-recording */
}

/* ---- shared memory: the producer dies, the parent drains ------------------------------ */

static void test_sigkill_shm_producer(void) {
    int trial;
    uint64_t total = 0;
    for (trial = 0; trial < SHM_TRIALS && !harness__failures_in_test; trial++) {
        int layout = 1 + (trial & 1), detail = (trial >> 1) & 1;
        size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 2048);
        size_t dsz = atf_ring_memory_size(ATF_RING_DETAIL, 16384);
        uint8_t *mem = (uint8_t *)mmap(NULL, isz + dsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        void *imem = mem, *dmem = mem + isz;
        atf_session *s = NULL;
        atf_session_config c;
        char name[32], dir[1100], tdir[1200];
        uint64_t head, kill_us = rng_next() % 25000;
        double t0;
        pid_t pid;
        atf_thread_reader tr;
        crash_cfg cfg;
        int fin;
        CHECK(mem != MAP_FAILED);
        if (mem == MAP_FAILED) return;
        CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 2048, (uint32_t)layout, 4321));
        CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 16384, (uint32_t)layout, 4321));
        memset(&c, 0, sizeof c);
        c.layout = (uint32_t)layout;
        c.drain_mode = ATF_DRAIN_MANUAL;
        snprintf(name, sizeof name, "shm_%02d", trial);
        c.session_name = name;
        CHECK_RESULT(ATF_OK, atf_session_open(&s, root_dir(), &c));
        if (!s) return;
        snprintf(dir, sizeof dir, "%s", atf_session_path(s));
        CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, imem, isz, detail ? dmem : NULL, detail ? dsz : 0,
                                                      "shm child", NULL));
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            atf_producer w;
            gen_state g = {0};
            uint64_t i;
            if (atf_producer_init(&w, imem, isz, detail ? dmem : NULL, detail ? dsz : 0,
                                ATF_DETAIL_ALWAYS) != ATF_OK)
                _exit(2);
            for (i = 0;; i++) push_until_taken(&w, 0, i, &g, detail);
        }
        CHECK(pid > 0);
        t0 = seconds(); /* the child is producing before the clock for the kill starts */
        while (atf__load_acquire_u64(&((atf_ring_header *)imem)->head) < 1000 && seconds() - t0 < 5)
            atf_session_pump(s);
        t0 = seconds();
        while (seconds() - t0 < (double)kill_us * 1e-6) atf_session_pump(s);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        head = atf__load_acquire_u64(&((atf_ring_header *)imem)->head); /* every published event */
        CHECK_RESULT(ATF_OK, atf_session_close(s));
        snprintf(tdir, sizeof tdir, "%s/thread_0", dir);
        CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, tdir, NULL));
        CHECK_EQ(head, tr.index.event_count);
        CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
        CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&tr.index));
        CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
        CHECK_EQ(4321, tr.index.header.thread_id);
        atf_thread_reader_close(&tr);
        memset(&cfg, 0, sizeof cfg);
        cfg.layout = layout;
        cfg.detail = detail;
        cfg.threads = 1;
        cfg.events = UINT64_MAX;
        CHECK_EQ(0, check_left_thread(tdir, &cfg, &fin));
        CHECK(head > 1000);
        total += head;
        munmap(mem, isz + dsz);
        rm_rf(dir);
    }
    printf("  %d producers killed, %llu published events, all on disk\n", SHM_TRIALS,
           (unsigned long long)total);
}

/* ---- a file size limit: writes fail mid-session -------------------------------------- */

typedef struct fsize_result {
    atf_result close_rc, err_code;
    int err_errno;
    uint64_t produced;
    char err_path[512];
} fsize_result;

#define FSIZE_LIMIT ((rlim_t)(1u << 20) + 4000u) /* not a whole number of records */

static void fsize_child(int fd, int detail, uint32_t layout, uint64_t events, const char *name) {
    struct rlimit rl;
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    atf_error err;
    fsize_result r;
    gen_state g = {0};
    uint64_t i;
    memset(&r, 0, sizeof r);
    rl.rlim_cur = rl.rlim_max = FSIZE_LIMIT;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(2);
    memset(&c, 0, sizeof c);
    c.detail_mode = detail ? ATF_DETAIL_ALWAYS : ATF_DETAIL_OFF;
    c.detail_ring_bytes = 4u << 20; /* holds every record: no detail is dropped */
    c.layout = layout;
    c.session_name = name;
    if (atf_session_open(&s, root_dir(), &c) != ATF_OK) _exit(3);
    if (atf_session_attach(s, "limited", &w) != ATF_OK) _exit(4);
    for (i = 0; i < events; i++) {
        if (detail) {
            gen_state g0 = g;
            uint32_t d0 = w->depth;
            while (gen_push_detail(w, 0, i, &g) != ATF_OK || w->detail_dropped) {
                if (w->detail_dropped) { /* keep every detail: retry the whole event later */
                    _exit(5);
                }
                g = g0;
                w->depth = d0;
                sched_yield();
            }
        } else {
            push_until_taken(w, 0, i, &g, 0);
        }
    }
    r.produced = events;
    atf_session_detach(s);
    r.close_rc = atf_session_close_ex(s, &err);
    r.err_code = err.code;
    r.err_errno = err.sys_errno;
    snprintf(r.err_path, sizeof r.err_path, "%s", err.path);
    if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(6);
    _exit(0);
}

static void run_fsize(int detail, uint32_t layout, uint64_t events, const char *name,
                      fsize_result *r, char *dir, size_t cap) {
    int fds[2], status = 0;
    pid_t pid;
    memset(r, 0, sizeof *r);
    (void)root_dir();
    CHECK_EQ(0, pipe(fds));
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        fsize_child(fds[1], detail, layout, events, name);
    }
    close(fds[1]);
    CHECK_EQ(sizeof *r, (size_t)read(fds[0], r, sizeof *r));
    close(fds[0]);
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(dir, cap, "%s/%s/pid_%d", root_dir(), name, (int)pid);
}

/* What every index.atf stopped by the limit shows: the close reports EFBIG on it, and
 * the file (in tdir, the thread's directory) is no larger than the limit. Returns its
 * size. */
static uint64_t check_index_stopped(const fsize_result *r, const char *dir, char *tdir,
                                    size_t cap) {
    char path[1300];
    struct stat st;
    memset(&st, 0, sizeof st);
    CHECK_RESULT(ATF_E_IO, r->close_rc);
    CHECK_RESULT(ATF_E_IO, r->err_code);
    CHECK_EQ(EFBIG, r->err_errno);
    CHECK(strstr(r->err_path, "index.atf") != NULL);
    snprintf(tdir, cap, "%s/thread_0", dir);
    snprintf(path, sizeof path, "%s/index.atf", tdir);
    CHECK_EQ(0, stat(path, &st));
    CHECK((uint64_t)st.st_size <= (uint64_t)FSIZE_LIMIT);
    return (uint64_t)st.st_size;
}

/* The manifest agrees with the file: `written` events written, the rest of those
 * produced lost to I/O, and the session's error with its errno. */
static void check_manifest_counts(const char *dir, uint64_t produced, uint64_t written) {
    char path[1300], *m;
    uint64_t v = 0, lost = 0;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    m = read_text(path);
    CHECK(m && json_valid(m));
    CHECK(m && manifest_u64(manifest_thread(m, 0), "events_written", &v));
    CHECK_EQ(written, v);
    CHECK(m && manifest_u64(manifest_thread(m, 0), "events_lost_io", &lost));
    CHECK_EQ(produced - written, lost);
    CHECK(m && strstr(m, "\"error\":\"") != NULL);
    CHECK(m && manifest_u64(strstr(m, "\"error_errno\""), "error_errno", &v));
    CHECK_EQ(EFBIG, v);
    free(m);
}

static void test_rlimit_fsize_index(void) {
    fsize_result r;
    char dir[1100], tdir[1200];
    atf_thread_reader tr;
    uint64_t size;
    run_fsize(0, ATF_LAYOUT_1, 100000, "fsize_index", &r, dir, sizeof dir);
    size = check_index_stopped(&r, dir, tdir, sizeof tdir);
    CHECK_EQ(0, (size - 64) % 32); /* cut back after the last whole event */
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, tdir, NULL));
    CHECK_EQ(0, tr.index.torn_bytes);
    CHECK_EQ(((uint64_t)FSIZE_LIMIT - 64) / 32, tr.index.event_count); /* every whole event kept */
    CHECK_EQ(tr.index.event_count, check_index_against(&tr, 0, r.produced, NULL, 1));
    CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&tr.index));
    check_manifest_counts(dir, r.produced, tr.index.event_count);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

/* detail.atf reaches the limit first: it stops, the index goes on whole, and the events
 * whose detail did not make it carry no link. */
static void test_rlimit_fsize_detail_links(void) {
    fsize_result r;
    char dir[1100], tdir[1200];
    atf_thread_reader tr;
    uint64_t i, events = 30000, with_link = 0;
    atf_reader_options opt;
    run_fsize(1, ATF_LAYOUT_1, events, "fsize_detail", &r, dir, sizeof dir);
    CHECK_RESULT(ATF_E_IO, r.close_rc);
    CHECK_EQ(EFBIG, r.err_errno);
    CHECK(strstr(r.err_path, "detail.atf") != NULL);
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(tdir, sizeof tdir, "%s/thread_0", dir);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, tdir, &opt));
    CHECK_EQ(events, tr.index.event_count);
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK(tr.has_detail);
    CHECK(tr.detail.event_count > 1000 && tr.detail.event_count < events);
    CHECK_EQ(0, tr.detail.torn_bytes);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    for (i = 0; i < tr.index.event_count; i++) {
        atf_index_event ev;
        atf_index_reader_get(&tr.index, i, &ev);
        /* every event was pushed with detail: the links run 0, 1, 2, ... up to where
         * detail.atf stopped, and no event after that point names a record */
        if (i < tr.detail.event_count) {
            CHECK_EQ(i, ev.detail_seq);
            with_link++;
        } else {
            CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
        }
        if (harness__failures_in_test) break;
    }
    CHECK_EQ(tr.detail.event_count, with_link);
    CHECK_EQ(check_index_against(&tr, 0, events, NULL, 1), events);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

/* A packed index.atf reaches the limit: what the failing write added is cut off (the
 * open block's new events and the blocks begun after it), so the file keeps every event
 * it had, each one as produced, in full blocks and a last one that may be partly filled. */
static void test_rlimit_fsize_packed(void) {
    fsize_result r;
    char dir[1100], tdir[1200];
    atf_thread_reader tr;
    atf_reader_options opt;
    run_fsize(0, ATF_LAYOUT_PACKED, 1000000, "fsize_packed", &r, dir, sizeof dir);
    check_index_stopped(&r, dir, tdir, sizeof tdir);
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1; /* each block's */
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, tdir, &opt));
    CHECK(tr.index.packed);
    CHECK_EQ(0, tr.index.torn_bytes);
    CHECK(tr.index.event_count > 0 && tr.index.event_count < r.produced);
    /* the reader holds every block but the last to be full; the last has 1 to all */
    CHECK(tr.index.block_count > 0 &&
          tr.index.event_count > (tr.index.block_count - 1) * tr.index.block_events &&
          tr.index.event_count <= tr.index.block_count * tr.index.block_events);
    CHECK_EQ(tr.index.event_count, check_index_against(&tr, 0, r.produced, NULL, 1));
    check_manifest_counts(dir, r.produced, tr.index.event_count);
    atf_thread_reader_close(&tr);
    rm_rf(dir);
}

static void test_cleanup(void) { rm_rf(root_dir()); }

static const test_case tests[] = {
    {"sigkill_recording", test_sigkill_recording},
    {"sigkill_shm_producer", test_sigkill_shm_producer},
    {"rlimit_fsize_index", test_rlimit_fsize_index},
    {"rlimit_fsize_detail_links", test_rlimit_fsize_detail_links},
    {"rlimit_fsize_packed", test_rlimit_fsize_packed},
    {"cleanup", test_cleanup},
};

HARNESS_MAIN("crash", tests)
