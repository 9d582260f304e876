/* test_walk.c - the pairing of calls and returns (tools/walk.c) as every command shows
 * it, run in-process on sessions recorded here (cli_traces.h): the set of functions on a
 * stack against a plain array; random events (unknown kinds too) that crash nothing and
 * keep both viewer exports balanced; nothing paired across events the recorder lost (a
 * lossy thread against a reference model of its own: stats, Chrome, Perfetto, tree);
 * frames cut short where a process ended or a bounded recording stopped; frames left by
 * an exception. Each of these marked alike in stats, tree, Parquet, Chrome and Perfetto. */
#include "atf.h"
#include "cli_traces.h"
#include "cli_parquet.h"
#include "perfetto_decode.h"

/* ==== robustness ===================================================================== */
static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The stack's function set against a plain array, through growth and deletions. */
static void test_fidset(void) {
    walk_fidset set;
    static uint64_t ref[3000];
    size_t n = 0, i, k;
    uint64_t seed = 12345;
    memset(&set, 0, sizeof set);
    for (i = 0; i < 200000; i++) {
        uint64_t r = rnd(&seed), key = (r >> 8) % 4000;
        int present = 0;
        if (key == 3999) key = WALK_FID_EMPTY;            /* the marker value is a valid id */
        else key = key * 1024;                          /* many share their low bits */
        for (k = 0; k < n; k++)
            if (ref[k] == key) present = 1;
        CHECK_EQ(present, walk_fidset_has(&set, key));
        if ((r & 3) != 0 && n < 3000) {
            CHECK_EQ(!present, walk_fidset_add(&set, key));
            if (!present) ref[n++] = key;
        } else if (present) {
            walk_fidset_del(&set, key);
            for (k = 0; ref[k] != key; k++) {}
            ref[k] = ref[--n];
        }
        if (harness__failures_in_test) break;
    }
    for (k = 0; k < n; k++) CHECK(walk_fidset_has(&set, ref[k]));
    CHECK_EQ(n, set.count + (size_t)set.has_max);
    free(set.keys);
}

/* Random kinds (unknown ones too), ids and times: nothing crashes, every call is counted
 * once (or skipped for depth), and both exports stay balanced. */
static void test_random_events(void) {
    rec r;
    atf_producer *w[2];
    cli_trace src;
    profile_fns st;
    walk_ctx wk;
    run_result o;
    jdoc d;
    pf_state ps;
    uint64_t seed = 987654321, calls = 0, counted = 0, too_deep = 0, i, b = 0, e = 0;
    size_t k;
    long it;
    rec_open(&r, ATF_LAYOUT_2);
    w[0] = rec_thread(&r, 901, "r0", ATF_LAYOUT_2);
    w[1] = rec_thread(&r, 902, "r1", ATF_LAYOUT_2);
    for (i = 0; i < 3000; i++) {
        uint64_t x = rnd(&seed);
        uint32_t kind = (uint32_t)(x % 5);              /* 0 and 4 are not call/return */
        uint64_t fid = (x >> 8) % 6, ts = T0 + (x >> 20) % 100000;
        if (kind == ATF_EVENT_CALL) calls++;
        CHECK_RESULT(ATF_OK, atf_producer_push(w[i & 1], kind, fid, ts, 0));
    }
    rec_close(&r);
    if (!collect(r.dir, &src, &st, &wk)) return;
    for (k = 0; k < st.count; k++) counted += st.fns[k].calls;
    for (k = 0; k < wk.count; k++) too_deep += wk.threads[k].too_deep;
    CHECK_EQ(calls, counted + too_deep);
    collect_free(&src, &st, &wk);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    it = j_get(&d, 0, "traceEvents");
    for (it = it >= 0 ? d.nodes[it].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph");
        b += strcmp(ph, "B") == 0;
        e += strcmp(ph, "E") == 0;
    }
    CHECK_EQ(counted, b);
    CHECK_EQ(b, e);
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&ps, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(2 * counted, ps.events);
    for (k = 0; k < ps.track_count; k++) CHECK_EQ(0, ps.tracks[k].open);
    pf_free(&ps);
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
}

/* ==== gaps: nothing is paired across events the recorder lost ======================= */
/* The lossy thread of cli_traces.h (gap_script): a reference model below derives the
 * expected figures and exports from the same script, independently of tools/walk.c.
 * Pairing across the holes instead would give c a 4100 ns maximum (called at 900,
 * "returning" at 5000 by a's return unwinding it) and a 4900 ns total. */
/* ---- the reference model ---- */
typedef struct model_fn {
    uint64_t fid, calls, total, self, min, max;
} model_fn;

typedef struct model_ev {
    char ph;                     /* 'B' call, 'E' frame closed, 'i' gap */
    uint64_t ts, fid, lost;
} model_ev;

typedef struct model {
    model_fn fns[16];
    size_t nfns;
    model_ev evs[512];
    size_t nevs;
    struct { uint64_t fid, start, child; } stack[64];
    size_t depth;
    uint64_t unmatched, cut, cut_short, gaps, lost;
} model;

static void model_emit(model *m, char ph, uint64_t ts, uint64_t fid, uint64_t lost) {
    if (m->nevs < 512) {
        m->evs[m->nevs].ph = ph;
        m->evs[m->nevs].ts = ts;
        m->evs[m->nevs].fid = fid;
        m->evs[m->nevs].lost = lost;
        m->nevs++;
    }
}

static void model_pop(model *m, uint64_t end) {
    uint64_t fid = m->stack[m->depth - 1].fid, dur = end - m->stack[m->depth - 1].start;
    uint64_t self = dur - m->stack[m->depth - 1].child;
    size_t i;
    int outer = 1;
    model_fn *f = NULL;
    m->depth--;
    for (i = 0; i < m->depth; i++) outer &= m->stack[i].fid != fid;
    if (m->depth) m->stack[m->depth - 1].child += dur;
    for (i = 0; i < m->nfns && !f; i++)
        if (m->fns[i].fid == fid) f = &m->fns[i];
    if (!f && m->nfns < 16) {
        f = &m->fns[m->nfns++];
        memset(f, 0, sizeof *f);
        f->fid = fid;
        f->min = UINT64_MAX;
    }
    if (f) {
        f->calls++;
        f->total += outer ? dur : 0;
        f->self += self;
        f->min = dur < f->min ? dur : f->min;
        f->max = dur > f->max ? dur : f->max;
    }
    model_emit(m, 'E', end, fid, 0);
}

/* Runs the script: frames open at a gap are closed at the last kept event before it,
 * then the gap shows at its first lost stamp; a return pairs only with a frame on the
 * stack. */
static void model_run(model *m, const gap_op *ops, size_t n) {
    uint64_t last = 0, first_lost = 0, lost = 0;
    size_t i, k;
    memset(m, 0, sizeof *m);
    for (i = 0; i <= n; i++) {
        const gap_op *o = i < n ? &ops[i] : NULL;
        if (o && o->op == OP_PUMP) continue;
        if (o && o->dropped) {
            if (!lost) first_lost = o->ts;
            lost++;
            continue;
        }
        if (lost) { /* a gap before this event (or at the end) */
            for (; m->depth; m->cut++) model_pop(m, last);
            model_emit(m, 'i', first_lost, 0, lost);
            m->gaps++;
            m->lost += lost;
            lost = 0;
        }
        if (!o) break;
        last = o->ts > last ? o->ts : last;
        if (o->op == OP_CALL) {
            m->stack[m->depth].fid = o->fid;
            m->stack[m->depth].start = o->ts;
            m->stack[m->depth].child = 0;
            m->depth++;
            model_emit(m, 'B', o->ts, o->fid, 0);
            continue;
        }
        for (k = m->depth; k > 0 && m->stack[k - 1].fid != o->fid; k--) {}
        if (k == 0) m->unmatched++;
        else while (m->depth >= k) model_pop(m, o->ts);
    }
    for (; m->depth; m->cut_short++) model_pop(m, last);
}

static void test_gaps(void) {
    static gap_op ops[GAP_OPS_MAX];
    static model m;
    size_t n = gap_script(ops, GAP_OPS_MAX), i, k;
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    run_result o;
    jdoc d;
    pf_state ps;
    long evs, it;
    char path[1200];
    int before;
    uint64_t kept = make_gap_session(&r, ops, n);
    model_run(&m, ops, n);
    /* the model itself, by hand: the frames cut, and c never longer than 100 ns */
    CHECK_EQ(2, m.gaps);
    CHECK_EQ(4, m.lost);
    CHECK_EQ(6, m.cut);                          /* c, b, a, main; then f, e */
    CHECK_EQ(2, m.unmatched);                    /* the returns of a and main */
    CHECK_EQ(0, m.cut_short);

    /* what the files say */
    if (!collect(r.dir, &src, &st, &w)) return;
    CHECK_EQ(kept, src.reader.threads[0].reader.index.event_count);
    CHECK_EQ(2, src.reader.threads[0].reader.gap_count);
    CHECK_EQ(4, src.reader.threads[0].reader.events_lost);
    CHECK_EQ(4, src.reader.threads[0].events_dropped);
    /* stats: every function against the model */
    CHECK_EQ(m.nfns, st.count);
    for (i = 0; i < m.nfns; i++)
        CHECK_FN(&st, m.fns[i].fid, m.fns[i].calls, m.fns[i].total, m.fns[i].self, m.fns[i].min,
                 m.fns[i].max);
    CHECK_FN(&st, F_C, 2, 100, 100, 0, 100);     /* [900, 900] cut; [6000, 6100] */
    CHECK_FN(&st, F_A, 1, 800, 400, 800, 800);   /* [100, 900] cut; g 300 and b 100 inside */
    CHECK_FN(&st, F_MAIN, 1, 900, 100, 900, 900);
    CHECK_FN(&st, F_E, 1, 1300, 1010, 1300, 1300); /* [7500, 8800] cut at the end gap */
    CHECK_EQ(m.unmatched, w.threads[0].unmatched);
    CHECK_EQ(m.cut, w.threads[0].cut_by_gap);
    CHECK_EQ(m.cut_short, w.threads[0].cut_short);
    CHECK_EQ(0, w.threads[0].unwound);
    CHECK_EQ(2, w.threads[0].gaps);
    collect_free(&src, &st, &w);
    /* the same through the thread directory (that thread walked alone) */
    snprintf(path, sizeof path, "%s/thread_0", r.dir);
    if (!collect(path, &src, &st, &w)) return;
    CHECK_FN(&st, F_C, 2, 100, 100, 0, 100);
    CHECK_EQ(m.cut, w.threads[0].cut_by_gap);
    collect_free(&src, &st, &w);

    /* stats --json: the thread's gap figures */
    o = run(cli_main, "stats", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    it = j_get(&d, 0, "threads");
    it = it >= 0 ? d.nodes[it].child : -1;
    CHECK(it >= 0);
    if (it >= 0) {
        CHECK_EQ(2, j_u64(&d, it, "gaps"));
        CHECK_EQ(4, j_u64(&d, it, "events_lost"));
        CHECK_EQ(m.cut, j_u64(&d, it, "cut_by_gap"));
    }
    j_free(&d);
    run_free(&o);

    /* chrome: this thread's B, E and gap events, in order, exactly the model's */
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    evs = j_get(&d, 0, "traceEvents");
    k = 0;
    before = harness__failures_in_test;
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph");
        const model_ev *e = k < m.nevs ? &m.evs[k] : NULL;
        if (strcmp(ph, "M") == 0) continue;
        CHECK_EQ(GAP_TID, j_u64(&d, it, "tid"));
        CHECK(e != NULL);
        if (!e) break;
        k++;
        CHECK_EQ(e->ph, ph[0]);
        CHECK_EQ(1, strlen(ph));
        CHECK_EQ(e->ts, j_ts_ns(&d, it));
        if (e->ph == 'B') {
            char hex[24];
            snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)e->fid);
            CHECK(strcmp(j_str(&d, it, "name"), hex) == 0);
        } else if (e->ph == 'i') {
            long args = j_get(&d, it, "args");
            CHECK(strcmp(j_str(&d, it, "s"), "t") == 0);
            CHECK(strncmp(j_str(&d, it, "name"), "gap: ", 5) == 0);
            CHECK(args >= 0);
            if (args >= 0) {
                CHECK_EQ(e->lost, j_u64(&d, args, "index_lost"));
                CHECK(strcmp(j_str(&d, args, "reason"), "dropped") == 0);
            }
        }
        if (harness__failures_in_test > before) break; /* one report per test is enough */
    }
    CHECK_EQ(m.nevs, k);
    j_free(&d);
    run_free(&o);

    /* perfetto: the same sequence on the thread's track */
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&ps, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(m.nevs, ps.log_count);
    before = harness__failures_in_test;
    for (k = 0; k < ps.log_count && k < m.nevs; k++) {
        const model_ev *e = &m.evs[k];
        const pf_logged *l = &ps.log[k];
        CHECK_EQ(e->ph == 'B' ? 1 : e->ph == 'E' ? 2 : 3, l->type);
        CHECK_EQ(e->ts, l->ts);
        if (e->ph == 'B') {
            char hex[24];
            snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)e->fid);
            CHECK(strcmp(l->name, hex) == 0);
        } else if (e->ph == 'i') {
            CHECK(strncmp(l->name, "gap: ", 5) == 0);
        }
        if (harness__failures_in_test > before) break;
    }
    for (k = 0; k < ps.track_count; k++) CHECK_EQ(0, ps.tracks[k].open);
    pf_free(&ps);
    run_free(&o);

    /* tree: the cut frames and the gaps are marked */
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(m.cut, count_of(o.out, "(cut by a gap)"));
    CHECK_EQ(m.gaps, count_of(o.out, "~ gap: 2 events lost (dropped)\n"));
    CHECK_EQ(m.unmatched, count_of(o.out, "! return from "));
    CHECK_EQ(0, count_of(o.out, "(unwound)"));
    CHECK_EQ(0, count_of(o.out, "(cut short)"));
    CHECK(strstr(o.out, "  2 gaps, 4 events lost\n") != NULL);
    /* c after the gap: one line, 100 ns, at 6.000 us */
    CHECK(strstr(o.out, "           6.000           0.100  0x000000000000000a\n") != NULL);
    run_free(&o);
}

/* ==== frames cut short ============================================================== */
/* A process that ended with calls open in its threads (killed, say): thread 0's only
 * event is the call of main, the worker's last calls are still open at its end, a third
 * thread goes on until T0 + 1000, the process's last event. Every frame open at its
 * thread's end ends when the process was last seen, whatever the view shows of it, and
 * every output says that it was cut short. */
enum { F_WORK = 10 };

static void make_cut_short(rec *r) {
    atf_producer *m, *w, *g;
    rec_open(r, ATF_LAYOUT_1);
    add_symbols(r);
    atf_session_add_symbol(r->s, F_WORK, "work");
    m = rec_thread(r, 6001, "main", ATF_LAYOUT_1);
    w = rec_thread(r, 6002, "worker", ATF_LAYOUT_1);
    g = rec_thread(r, 6003, "other", ATF_LAYOUT_1);
    CALL(m, F_MAIN, T0);
    CALL(w, F_WORK, T0 + 100);
    CALL(w, F_B, T0 + 200);
    RET(w, F_B, T0 + 300);
    RET(w, F_WORK, T0 + 400);
    CALL(w, F_WORK, T0 + 500);
    CALL(w, F_B, T0 + 600);              /* work and b open at the worker's end */
    CALL(g, F_G, T0 + 700);
    RET(g, F_G, T0 + 1000);              /* the process's last event */
    rec_close(r);
}

/* The "total_ns" of function fid in a `stats --json` output; UINT64_MAX when absent. */
static uint64_t stats_total_of(const run_result *o, uint64_t fid) {
    jdoc d;
    long fns, it;
    char hex[24];
    uint64_t total = UINT64_MAX;
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)fid);
    if (!j_parse(&d, o->out, o->out_len)) return UINT64_MAX;
    fns = j_get(&d, 0, "functions");
    for (it = fns >= 0 ? d.nodes[fns].child : -1; it >= 0; it = d.nodes[it].next)
        if (strcmp(j_str(&d, it, "fid"), hex) == 0) total = j_u64(&d, it, "total_ns");
    j_free(&d);
    return total;
}


/* The marks `arg` (true) of the viewer formats: chrome's E events, perfetto's SLICE_END
 * annotations. */
static void check_end_marks(const char *dir, const char *arg, size_t want) {
    run_result o = run(cli_main, "export", "--format", "chrome", dir, (const char *)NULL);
    pf_state ps;
    char chrome[96];
    size_t i, n = 0;
    snprintf(chrome, sizeof chrome, "\"ph\":\"E\",\"args\":{\"%s\":true}}", arg);
    CHECK_EQ(0, o.status);
    CHECK_EQ(want, count_of(o.out, chrome));
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&ps, (const uint8_t *)o.out, o.out_len);
    for (i = 0; i < ps.annot_count; i++)
        n += ps.annots[i].type == 2 && strcmp(ps.annots[i].name, arg) == 0 &&
             ps.annots[i].field == 2 && ps.annots[i].v == 1 ? 1u : 0u;
    CHECK_EQ(want, n);
    pf_free(&ps);
    run_free(&o);
}

static void check_cut_marks(const char *dir, size_t want) {
    check_end_marks(dir, "cut_short", want);
}

static void test_cut_short(void) {
    rec r;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    run_result o;
    pqd_file f;
    char to[32];
    make_cut_short(&r);
    if (collect(r.dir, &src, &st, &w)) {
        CHECK_EQ(T0 + 1000, w.end_ns);
        CHECK_FN(&st, F_MAIN, 1, 1000, 1000, 1000, 1000);   /* [0, 1000], not 0 */
        CHECK_FN(&st, F_WORK, 2, 800, 300, 300, 500);       /* [100, 400], [500, 1000] */
        CHECK_FN(&st, F_B, 2, 500, 500, 100, 400);          /* [200, 300], [600, 1000] */
        CHECK_FN(&st, F_G, 1, 300, 300, 300, 300);
        CHECK_EQ(1, w.threads[0].cut_short);
        CHECK_EQ(2, w.threads[1].cut_short);
        CHECK_EQ(0, w.threads[2].cut_short);
        CHECK_EQ(T0, w.threads[0].last_ns);                 /* the thread's own span stays */
        collect_free(&src, &st, &w);
    }
    /* what --thread shows of a thread does not change when its frames end */
    o = run(cli_main, "stats", "--json", "--thread", "0", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(1000, stats_total_of(&o, F_MAIN));
    run_free(&o);
    /* in a window, the process was last seen at its latest event in it: b's call at 600 */
    snprintf(to, sizeof to, "%llu", (unsigned long long)(T0 + 650));
    o = run(cli_main, "stats", "--json", "--to", to, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(600, stats_total_of(&o, F_MAIN));
    CHECK_EQ(400, stats_total_of(&o, F_WORK));              /* 300 + [500, 600] */
    run_free(&o);
    o = run(cli_main, "stats", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(1, count_of(o.out, "\n  3 frames cut short ("));
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(3, count_of(o.out, "(cut short)"));
    CHECK_EQ(1, count_of(o.out, "  main  (cut short)\n"));  /* a call with no callee shown */
    run_free(&o);
    if (pq_export(r.dir, "slices", &f)) {
        size_t k;
        CHECK_EQ(3, pq_count_ended(&f, "cut"));
        for (k = 0; k < (size_t)f.num_rows; k++)
            if (pq_is(f.bytes[PQ_NAME][k], "main")) CHECK_EQ(1000, f.ints[PQ_DUR][k]);
        pqd_close(&f);
    }
    check_cut_marks(r.dir, 3);
}

/* A bounded recording's stop: the frames open in every thread then are cut short at the
 * process's last event before it, not at a gap. */
static void test_cut_short_stopped(void) {
    rec r;
    atf_session_config cfg;
    atf_producer *m, *w;
    cli_trace src;
    profile_fns st;
    walk_ctx wk;
    run_result o;
    uint64_t base;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_duration_ns = 1000000000u; /* events stamped 1 s after the open: not recorded */
    rec_open_new(&r, &cfg);
    if (!r.s) return;
    add_symbols(&r);
    atf_session_add_symbol(r.s, F_WORK, "work");
    m = rec_thread(&r, 6101, "main", ATF_LAYOUT_1);
    w = rec_thread(&r, 6102, "worker", ATF_LAYOUT_1);
    base = atf_now_ns();
    CALL(m, F_MAIN, base);
    CALL(m, F_A, base + 100);
    CALL(w, F_WORK, base + 50);
    RET(w, F_WORK, base + 200);
    CALL(w, F_B, base + 300);             /* the last event before the stop */
    RET(m, F_A, base + 3000000000u);      /* after it: not recorded */
    RET(w, F_B, base + 3000000100u);
    rec_close(&r);
    if (collect(r.dir, &src, &st, &wk)) {
        CHECK_EQ(base + 300, wk.end_ns);
        CHECK_FN(&st, F_MAIN, 1, 300, 100, 300, 300);
        CHECK_FN(&st, F_A, 1, 200, 200, 200, 200);
        CHECK_FN(&st, F_B, 1, 0, 0, 0, 0);
        CHECK_EQ(2, wk.threads[0].cut_short);
        CHECK_EQ(1, wk.threads[1].cut_short);
        CHECK_EQ(0, wk.threads[0].cut_by_gap + wk.threads[1].cut_by_gap);
        CHECK_EQ(1, wk.threads[0].not_recorded);
        CHECK_EQ(1, wk.threads[1].not_recorded);
        collect_free(&src, &st, &wk);
    }
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(3, count_of(o.out, "(cut short)"));
    CHECK_EQ(0, count_of(o.out, "(cut by a gap)"));
    CHECK_EQ(2, count_of(o.out, "~ gap: 1 events not recorded (stopped)\n"));
    run_free(&o);
    check_cut_marks(r.dir, 3);
}

/* ==== frames left by an exception ===================================================== */
/* main { a { b } } where an exception leaves b and a (exception events), then main { g }
 * and main's return: tree, Parquet and both viewer formats mark exactly those two frames,
 * and nothing else. */
static void test_exception_marks(void) {
    rec r;
    atf_producer *m;
    run_result o;
    pqd_file f;
    rec_open(&r, ATF_LAYOUT_1);
    add_symbols(&r);
    m = rec_thread(&r, 7001, "main", ATF_LAYOUT_1);
    CALL(m, F_MAIN, T0);
    CALL(m, F_A, T0 + 100);
    CALL(m, F_B, T0 + 200);
    EXC(m, F_B, T0 + 300);
    EXC(m, F_A, T0 + 400);
    CALL(m, F_G, T0 + 500);              /* the catching frame goes on */
    RET(m, F_G, T0 + 600);
    RET(m, F_MAIN, T0 + 700);
    rec_close(&r);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(2, count_of(o.out, "(exception)"));
    CHECK_EQ(1, count_of(o.out, "} a  (exception)\n"));
    CHECK_EQ(1, count_of(o.out, "  b  (exception)\n"));
    CHECK_EQ(1, count_of(o.out, "} main\n"));
    run_free(&o);
    if (pq_export(r.dir, "slices", &f)) {
        size_t k;
        CHECK_EQ(4, f.num_rows);
        CHECK_EQ(2, pq_count_ended(&f, "exception"));
        CHECK_EQ(2, pq_count_ended(&f, "return"));
        for (k = 0; k < (size_t)f.num_rows; k++)
            if (pq_is(f.bytes[PQ_NAME][k], "a")) CHECK(pq_is(f.bytes[PQ_ENDED_BY][k], "exception"));
        pqd_close(&f);
    }
    check_end_marks(r.dir, "exception", 2);
    check_end_marks(r.dir, "cut_short", 0);
}

static const test_case tests[] = {
    {"fidset", test_fidset},
    {"random_events", test_random_events},
    {"gaps", test_gaps},
    {"cut_short", test_cut_short},
    {"cut_short_stopped", test_cut_short_stopped},
    {"exception_marks", test_exception_marks},
};

CLI_TRACES_MAIN("walk", tests)
