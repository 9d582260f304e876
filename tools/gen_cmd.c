/* gen_cmd.c - atf gen: records a synthetic session through the library's session writer,
 * for tests, benchmarks and crash trials. Thread k attaches as slot k; its event content
 * (functions, kinds, depths, detail payloads) is a function of the seed and k only, the
 * timestamps come from atf_now_ns(). The pid_* directory is printed as soon as it exists,
 * so that a crash trial can kill the process and still know where its files are.
 * SPDX-License-Identifier: MIT */
#include "atf.h"
#include "core.h"
#include "gen_model.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GEN_MAX_THREADS 1024

typedef struct gen_config {
    uint64_t threads, events, detail_every, pre_roll_ms, post_roll_ms;
    uint32_t layout;
    uint64_t trigger_every_ms, ring_events, seed;
    int keep;                    /* --keep-last given */
    uint32_t detail_mode, overflow;
} gen_config;

typedef struct gen_shared {
    atf_session *session;
    const gen_config *cfg;
    int turn;                        /* the slot whose thread attaches next */
    int go;                          /* set once every thread is attached */
    int done;                        /* threads finished */
    int failed;                      /* threads that could not attach */
} gen_shared;

typedef struct gen_worker {
    gen_shared *shared;
    uint32_t index;
    pthread_t thread;
} gen_worker;

/* ---- small portable pieces ---------------------------------------------------------- */
static int gen_load(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void gen_store(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static void gen_add(int *p, int v) { __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL); }

static void gen_sleep_us(uint64_t us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u);
    ts.tv_nsec = (long)(us % 1000000u) * 1000L;
    nanosleep(&ts, NULL);
}

/* ---- one producer thread ------------------------------------------------------------ */
/* Records the thread's gen_model sequence (see gen_model.h), stamped with atf_now_ns(). */
static void *gen_worker_main(void *arg) {
    gen_worker *wk = (gen_worker *)arg;
    gen_shared *sh = wk->shared;
    const gen_config *cfg = sh->cfg;
    gen_model m;
    gen_event ev;
    char name[32];
    atf_producer *w = NULL;
    gen_model_init(&m, cfg->seed, wk->index, cfg->events,
                   cfg->detail_mode != ATF_DETAIL_OFF ? cfg->detail_every : 0);
    while (gen_load(&sh->turn) != (int)wk->index) sched_yield();
    snprintf(name, sizeof name, "gen-%u", wk->index);
    if (atf_session_attach(sh->session, name, &w) != ATF_OK) {
        w = NULL;
        gen_add(&sh->failed, 1);
    }
    gen_store(&sh->turn, (int)wk->index + 1);
    while (!gen_load(&sh->go)) sched_yield();
    while (w && gen_model_next(&m, &ev)) {
        uint64_t ts = atf_now_ns();
        if (ev.has_detail)
            atf_producer_event_detail(w, ev.call ? ATF_EVENT_CALL : ATF_EVENT_RETURN,
                                    ev.function_id, ts,
                                    ev.call ? ATF_DETAIL_FUNCTION_CALL : ATF_DETAIL_FUNCTION_RETURN,
                                    ev.payload, ev.payload_len);
        else if (ev.call)
            atf_producer_call(w, ev.function_id, ts);
        else
            atf_producer_return(w, ev.function_id, ts);
    }
    if (w) atf_session_detach(sh->session);
    gen_add(&sh->done, 1);
    return NULL;
}

/* ---- the command -------------------------------------------------------------------- */

static void gen_summary(atf_session *s, const gen_config *cfg, uint64_t elapsed_ns) {
    uint32_t slot, n = atf_session_thread_count(s);
    uint64_t written = 0, dropped = 0, dwritten = 0, ddropped = 0;
    for (slot = 0; slot < n; slot++) {
        atf_thread_stats st;
        if (atf_session_thread_stats(s, slot, &st) != ATF_OK) continue;
        written += st.events_written;
        dropped += st.events_dropped;
        dwritten += st.detail_written;
        ddropped += st.detail_dropped;
    }
    fprintf(stderr,
            "atf gen: %u threads x %llu events in %llu.%03llu s: %llu written, %llu dropped; "
            "detail %llu written, %llu dropped\n",
            n, (cli_ull)cfg->events, (cli_ull)(elapsed_ns / 1000000000u),
            (cli_ull)(elapsed_ns / 1000000u % 1000u), (cli_ull)written, (cli_ull)dropped,
            (cli_ull)dwritten, (cli_ull)ddropped);
}

/* Windowed detail (and the flight recorder, whose triggers write what it holds): a trigger
 * just before the threads are released (so that even a run shorter than the post-roll has
 * its window), then one every trigger_every_ms until they are all done. */
static void gen_run(gen_shared *sh, const gen_config *cfg) {
    uint64_t period = cfg->trigger_every_ms * 1000000u, next = 0;
    int windowed = (cfg->detail_mode == ATF_DETAIL_WINDOWED || cfg->keep) && period > 0;
    if (windowed) {
        next = atf_now_ns();
        atf_session_trigger(sh->session, next);
        next += period;
    }
    gen_store(&sh->go, 1);
    while (gen_load(&sh->done) < (int)cfg->threads) {
        uint64_t now;
        gen_sleep_us(windowed && period < 1000000u ? period / 1000u / 4u + 1u : 1000u);
        now = atf_now_ns();
        if (windowed && now >= next) {
            atf_session_trigger(sh->session, now);
            next = now + period;
        }
    }
}

static int gen_parse_detail(const cli_command *cmd, const char *text, uint32_t *mode) {
    if (strcmp(text, "off") == 0) *mode = ATF_DETAIL_OFF;
    else if (strcmp(text, "always") == 0) *mode = ATF_DETAIL_ALWAYS;
    else if (strcmp(text, "windowed") == 0) *mode = ATF_DETAIL_WINDOWED;
    else return cli_usage_error(cmd, "--detail: '%s' is not off, always or windowed", text);
    return CLI_CONTINUE;
}

static int gen_parse_overflow(const cli_command *cmd, const char *text, uint32_t *policy) {
    if (strcmp(text, "block") == 0) *policy = ATF_OVERFLOW_BLOCK;
    else if (strcmp(text, "drop") == 0) *policy = ATF_OVERFLOW_DROP;
    else return cli_usage_error(cmd, "--overflow: '%s' is not block or drop", text);
    return CLI_CONTINUE;
}

int cli_cmd_gen(const cli_command *cmd, int argc, char **argv) {
    static gen_worker workers[GEN_MAX_THREADS];
    gen_config cfg;
    gen_shared sh;
    atf_session_config sc;
    atf_error open_error;
    atf_error err;
    const char *detail_text = "off", *overflow_text = "block", *layout_text = "1";
    uint64_t max_bytes = 0, keep_bytes = 0;
    const cli_flag flags[] = {
        { "--threads", NULL, CLI_OPT_U64, &cfg.threads },
        { "--events", NULL, CLI_OPT_U64, &cfg.events },
        { "--detail", NULL, CLI_OPT_STR, &detail_text },
        { "--detail-every", NULL, CLI_OPT_U64, &cfg.detail_every },
        { "--layout", NULL, CLI_OPT_STR, &layout_text },
        { "--pre-roll-ms", NULL, CLI_OPT_U64, &cfg.pre_roll_ms },
        { "--post-roll-ms", NULL, CLI_OPT_U64, &cfg.post_roll_ms },
        { "--trigger-every-ms", NULL, CLI_OPT_U64, &cfg.trigger_every_ms },
        { "--ring-events", NULL, CLI_OPT_U64, &cfg.ring_events },
        { "--overflow", NULL, CLI_OPT_STR, &overflow_text },
        { "--seed", NULL, CLI_OPT_U64, &cfg.seed },
        { "--max-size", NULL, CLI_OPT_SIZE, &max_bytes },
        { "--keep-last", NULL, CLI_OPT_SIZE, &keep_bytes },
    };
    uint64_t start, limit_ms = UINT64_MAX / 1000000u;
    uint32_t k, j;
    int nops = 0, rc, started = 0;
    atf_result result;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = 4;
    cfg.events = 1000000;
    cfg.detail_every = 16;
    cfg.pre_roll_ms = 5;
    cfg.post_roll_ms = 5;
    cfg.trigger_every_ms = 10;
    cfg.ring_events = 65536;
    cfg.seed = 1;
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 1, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if ((rc = gen_parse_detail(cmd, detail_text, &cfg.detail_mode)) != CLI_CONTINUE) return rc;
    if ((rc = gen_parse_overflow(cmd, overflow_text, &cfg.overflow)) != CLI_CONTINUE) return rc;
    if (cfg.threads < 1 || cfg.threads > GEN_MAX_THREADS)
        return cli_usage_error(cmd, "--threads must be 1 to %d", GEN_MAX_THREADS);
    if (cfg.detail_every < 1) return cli_usage_error(cmd, "--detail-every must be 1 or more");
    if ((rc = cli_parse_layout(cmd, layout_text, &cfg.layout)) != CLI_CONTINUE) return rc;
    cfg.keep = keep_bytes != 0;
    if (cfg.layout == ATF_LAYOUT_PACKED && cfg.detail_mode == ATF_DETAIL_WINDOWED)
        return cli_usage_error(cmd, "--detail windowed patches links into index.atf: --layout 1 or 2");
    if (cfg.pre_roll_ms > limit_ms || cfg.post_roll_ms > limit_ms ||
        cfg.trigger_every_ms > limit_ms)
        return cli_usage_error(cmd, "a time in ms is too large");
    if (cfg.ring_events < 1 || cfg.ring_events > ((uint64_t)1 << 30))
        return cli_usage_error(cmd, "--ring-events must be 1 to 2^30");

    memset(&sc, 0, sizeof sc); /* the session makes ROOT, parents included */
    sc.layout = cfg.layout;
    sc.detail_mode = cfg.detail_mode;
    sc.pre_roll_ns = cfg.pre_roll_ms * 1000000u;
    sc.post_roll_ns = cfg.post_roll_ms * 1000000u;
    sc.index_ring_events = cfg.ring_events;
    sc.overflow = cfg.overflow;
    sc.max_threads = (uint32_t)cfg.threads;
    sc.max_bytes = max_bytes;
    sc.keep_last_bytes = keep_bytes;
    memset(&sh, 0, sizeof sh);
    sh.cfg = &cfg;
    result = atf_session_open_ex(&sh.session, argv[1], &sc, &open_error);
    if (result != ATF_OK) {
        char line[800];
        fprintf(stderr, "atf gen: cannot open a session under %s: %s\n", argv[1],
                atf_error_format(&open_error, line, sizeof line));
        return CLI_EXIT_DATA;
    }
    printf("%s\n", atf_session_path(sh.session));
    fflush(stdout);
    atf_session_add_module(sh.session, 0, "atf gen", 0, 0);
    for (j = 0; j < GEN_FUNCTIONS; j++)
        atf_session_add_symbol(sh.session, gen_function_id(j), gen_function_names[j]);

    start = atf_now_ns();
    for (k = 0; k < cfg.threads; k++) {
        workers[k].shared = &sh;
        workers[k].index = k;
        if (pthread_create(&workers[k].thread, NULL, gen_worker_main, &workers[k]) != 0) break;
        started++;
    }
    if (started < (int)cfg.threads) {
        /* the threads that did start must still run to their end: pretend the rest did */
        fprintf(stderr, "atf gen: could start only %d of %llu threads\n", started,
                (cli_ull)cfg.threads);
        cfg.threads = (uint64_t)started;
    }
    while (gen_load(&sh.turn) < started) sched_yield();
    gen_run(&sh, &cfg);
    for (k = 0; k < (uint32_t)started; k++) pthread_join(workers[k].thread, NULL);
    if (isatty(2)) {
        atf_session_pump(sh.session);
        gen_summary(sh.session, &cfg, atf_now_ns() - start);
    }
    err = *atf_session_error(sh.session);
    result = atf_session_close(sh.session);
    if (result != ATF_OK) {
        char line[CLI_LINE_MAX];
        if (err.code != ATF_OK)
            fprintf(stderr, "atf gen: %s\n", atf_error_format(&err, line, sizeof line));
        else
            fprintf(stderr, "atf gen: closing the session: %s\n", atf_result_str(result));
        return CLI_EXIT_DATA;
    }
    if (sh.failed || started == 0) {
        fprintf(stderr, "atf gen: %d thread%s could not attach to the session\n", sh.failed,
                sh.failed == 1 ? "" : "s");
        return CLI_EXIT_DATA;
    }
    return CLI_EXIT_OK;
}
