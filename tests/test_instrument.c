/* test_instrument.c - the library under -finstrument-functions (the whole program, atf.h's
 * implementation included, is built with it: see the Makefile). The hook records every
 * function entry and exit through atf_session_producer and the writer calls. Nothing the
 * hook reaches once a thread is attached may call the hook again (ATF_NO_INSTRUMENT), the
 * drain thread never attaches itself, and library code that does fire the hook while the
 * session lock is held (attaching, pumping) does not deadlock. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#include <pthread.h>

#define HOOK ATF_NO_INSTRUMENT

static atf_session *hook_session;
static __thread int hook_active;         /* inside the hook */
static __thread int hook_steady;         /* attached: every hook call must be clean now */
static __thread uint64_t hook_pushed;    /* events this thread pushed */
static uint64_t hook_reentries_steady;   /* re-entries after attaching (must stay 0) */
static uint64_t hook_reentries_attach;   /* re-entries while attaching (library code that
                                            is not the hot path fired the hook) */
static void *hook_reentry_fn;            /* one function that re-entered while attaching */

#ifdef __cplusplus
extern "C" { /* the compiler calls the hooks by their C names */
#endif
HOOK void __cyg_profile_func_enter(void *fn, void *site);
HOOK void __cyg_profile_func_exit(void *fn, void *site);
#ifdef __cplusplus
}
#endif

static HOOK void hook_event(void *fn, int enter) {
    atf_session *s = __atomic_load_n(&hook_session, __ATOMIC_ACQUIRE);
    atf_producer *w;
    if (!s) return;
    if (hook_active) {
        if (hook_steady) __atomic_add_fetch(&hook_reentries_steady, 1, __ATOMIC_RELAXED);
        else {
            __atomic_add_fetch(&hook_reentries_attach, 1, __ATOMIC_RELAXED);
            hook_reentry_fn = fn;
        }
        return;
    }
    hook_active = 1;
    w = atf_session_producer(s);
    if (w) {
        hook_steady = 1;
        if ((enter ? atf_producer_call(w, (uint64_t)(uintptr_t)fn, atf_now_ns())
                   : atf_producer_return(w, (uint64_t)(uintptr_t)fn, atf_now_ns())) == ATF_OK)
            hook_pushed++;
    }
    hook_active = 0;
}

HOOK void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    hook_event(fn, 1);
}
HOOK void __cyg_profile_func_exit(void *fn, void *site) {
    (void)site;
    hook_event(fn, 0);
}

/* Instrumented work. */
static uint64_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static uint64_t worker_pushed[4];
static char test_root[512]; /* this process's own, so that two runs at once do not meet */

static void *worker(void *arg) {
    uintptr_t k = (uintptr_t)arg;
    uint64_t r = fib(16);
    (void)r;
    worker_pushed[k] = hook_pushed; /* the exit of worker() itself comes after this */
    return NULL;
}

static void run(uint32_t drain_mode) {
    atf_session *s = NULL;
    atf_session_config c;
    pthread_t t[4];
    uintptr_t k;
    char dir[1100], path[1200];
    uint64_t on_disk = 0, expected = 0;
    uint32_t slot, threads;
    hook_steady = 0; /* this thread attaches anew to the new session */
    memset(&c, 0, sizeof c);
    c.drain_mode = drain_mode;
    c.index_ring_events = 1u << 16;
    c.session_name = drain_mode == ATF_DRAIN_MANUAL ? "instrument_manual" : "instrument_thread";
    if (!test_root[0]) scratch_root(test_root, sizeof test_root, "instrument");
    CHECK_RESULT(ATF_OK, atf_session_open(&s, test_root, &c));
    if (!s) return;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    __atomic_store_n(&hook_session, s, __ATOMIC_RELEASE);
    for (k = 0; k < 4; k++) CHECK_EQ(0, pthread_create(&t[k], NULL, worker, (void *)k));
    for (k = 0; k < 4; k++) {
        if (drain_mode == ATF_DRAIN_MANUAL) CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* hooks fire under the lock */
        pthread_join(t[k], NULL);
    }
    fib(10); /* the main thread records too */
    __atomic_store_n(&hook_session, NULL, __ATOMIC_RELEASE);
    threads = atf_session_thread_count(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    for (slot = 0; slot < threads; slot++) {
        atf_thread_reader tr;
        snprintf(path, sizeof path, "%s/thread_%u", dir, slot);
        CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, path, NULL));
        on_disk += tr.index.event_count;
        atf_thread_reader_close(&tr);
    }
    for (k = 0; k < 4; k++) expected += worker_pushed[k];
    CHECK_EQ(5, threads);                 /* 4 workers and main; never the drain thread */
    CHECK(on_disk >= expected + 2 * 177); /* fib(10) makes 177 calls */
    CHECK(expected >= 4 * 2 * 3193);      /* fib(16) makes 3193 calls */
    CHECK_EQ(0, __atomic_load_n(&hook_reentries_steady, __ATOMIC_RELAXED));
    rm_rf(dir);
}

static void test_hook_thread_drain(void) { run(ATF_DRAIN_THREAD); }
static void test_hook_manual_drain(void) { run(ATF_DRAIN_MANUAL); }

static void test_report(void) {
    /* not a failure of the recording side: functions outside it that still carry the
     * instrumentation (format encoders used when a thread's files are created) */
    if (hook_reentries_attach)
        printf("  note: %llu hook calls from library code while attaching (e.g. %p)\n",
               (unsigned long long)hook_reentries_attach, hook_reentry_fn);
    if (test_root[0]) rm_rf(test_root);
}

static const test_case tests[] = {
    {"hook_thread_drain", test_hook_thread_drain},
    {"hook_manual_drain", test_hook_manual_drain},
    {"report", test_report},
};

HARNESS_MAIN("instrument", tests)
