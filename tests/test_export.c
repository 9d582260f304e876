/* test_export.c - `atf export` (tools/export_cmd.c, over the pairing of tools/walk.c), run
 * in-process on sessions recorded here (cli_traces.h), each format read back apart from
 * its writer: Chrome JSON that parses and is balanced per thread, and byte for byte as
 * before for a trace without detail; Perfetto protobuf decoded field by field against
 * Perfetto's schema (perfetto_decode.h), with balanced slices and resolving interned
 * names; both Parquet tables decoded row by row (cli_parquet.h) against the merged
 * session and `atf stats --json`; detail records as slice arguments in both viewer
 * formats, equal to what was recorded; process and thread names; folded stacks line for
 * line in each thread-frame mode; empty traces; a session_* directory of several
 * processes (made with fork() here, and one `atf record` makes of tests/programs/forks.c)
 * exported whole, each process counted against `atf stats --json --pid N`. */
#include "atf.h"
#include "cli_traces.h"
#include "cli_parquet.h"
#include "perfetto_decode.h"

/* ==== chrome ========================================================================= */
/* Expected B (begin) events per thread: 6 nested calls; 6 unbalanced frames. */
static void test_export_chrome(void) {
    rec r;
    jdoc d;
    char out[1200];
    char *text;
    size_t len;
    long evs, it;
    uint64_t depth[3] = {0, 0, 0}, begins[3] = {0, 0, 0}, ends[3] = {0, 0, 0}, last[3] = {0, 0, 0};
    int names_seen = 0, quote_seen = 0, utf8_seen = 0, bad_seen = 0, ts_seen = 0;
    run_result o;
    make_multi(&r);
    snprintf(out, sizeof out, "%s/../chrome.json", r.dir);
    o = run(cli_main, "export", "--format", "chrome", "-o", out, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(0, o.out_len);
    run_free(&o);
    text = read_file(out, &len);
    CHECK(text != NULL);
    if (!text) return;
    CHECK(j_parse(&d, text, len));
    evs = j_get(&d, 0, "traceEvents");
    CHECK(evs >= 0 && d.nodes[evs].type == J_ARR);
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph"), *name = j_str(&d, it, "name");
        uint64_t tid = j_u64(&d, it, "tid");
        size_t k = tid >= 5001 && tid <= 5003 ? (size_t)(tid - 5001) : 0;
        CHECK(j_u64(&d, it, "pid") == strtoull(strrchr(r.dir, '_') + 1, NULL, 10));
        if (strcmp(ph, "M") == 0) {
            long args = j_get(&d, it, "args");
            if (strcmp(name, "thread_name") == 0) {
                const char *tn = j_str(&d, args, "name");
                names_seen++;
                if (tid == 5001) CHECK(strcmp(tn, "main \"thread\"") == 0);
                if (tid == 5002) CHECK(strcmp(tn, "worker") == 0);
                if (tid == 5003) CHECK(strcmp(tn, "thread_2") == 0);
            }
            continue;
        }
        CHECK(tid >= 5001 && tid <= 5003);
        CHECK(j_ts_ns(&d, it) >= last[k]); /* time order within each thread */
        last[k] = j_ts_ns(&d, it);
        if (strcmp(ph, "B") == 0) {
            depth[k]++;
            begins[k]++;
            if (strcmp(name, name_quote) == 0) quote_seen++;
            if (strcmp(name, name_utf8) == 0) utf8_seen++;
            if (strcmp(name, name_bad_clean) == 0) bad_seen++;
            if (tid == 5001 && strcmp(name, "b") == 0) {
                CHECK(strstr(text, "\"ts\":1000.200,") != NULL);
                CHECK_EQ(T0 + 200, j_ts_ns(&d, it));
                ts_seen = 1;
            }
        } else if (strcmp(ph, "E") == 0) {
            CHECK(depth[k] > 0); /* never closes what is not open */
            if (depth[k]) depth[k]--;
            ends[k]++;
        } else {
            harness__fail(__FILE__, __LINE__, "unexpected phase");
        }
    }
    CHECK_EQ(3, names_seen);
    CHECK_EQ(0, depth[0]);
    CHECK_EQ(0, depth[1]);
    CHECK_EQ(6, begins[0]);
    CHECK_EQ(6, ends[0]);
    CHECK_EQ(6, begins[1]);
    CHECK_EQ(6, ends[1]);
    CHECK_EQ(0, begins[2]);
    CHECK_EQ(1, quote_seen);
    CHECK_EQ(1, utf8_seen);
    CHECK_EQ(1, bad_seen);
    CHECK(ts_seen);
    j_free(&d);
    /* a second opinion when python3 is there */
    if (system("python3 -c 'pass' >/dev/null 2>&1") == 0) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' '%s'", out);
        CHECK_EQ(0, system(cmd));
    }
    free(text);

    /* to stdout by default */
    o = run(cli_main, "export", r.dir, "--format=chrome", (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
}

/* ==== perfetto ======================================================================= */
static void test_export_perfetto(void) {
    rec r;
    pf_state s;
    char out[1200];
    uint8_t *data;
    size_t len, i;
    uint64_t pid;
    run_result o;
    int threads = 0;
    make_multi(&r);
    pid = strtoull(strrchr(r.dir, '_') + 1, NULL, 10);
    snprintf(out, sizeof out, "%s/../trace.pftrace", r.dir);
    o = run(cli_main, "export", "--format", "perfetto", "-o", out, r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
    data = (uint8_t *)read_file(out, &len);
    CHECK(data != NULL && len > 0);
    if (!data) return;
    pf_decode(&s, data, len);
    CHECK_EQ(4, s.track_count);
    CHECK(s.tracks[0].is_process);
    CHECK_EQ(pid, s.tracks[0].pid);
    for (i = 1; i < s.track_count; i++) {
        pf_track *t = &s.tracks[i];
        CHECK(!t->is_process);
        CHECK_EQ(s.tracks[0].uuid, t->parent);
        CHECK_EQ(pid, t->pid);
        CHECK_EQ(0, t->open); /* balanced */
        CHECK_EQ(t->begins, t->ends);
        if (t->tid == 5001) {
            threads++;
            CHECK(strcmp(t->name, "main \"thread\"") == 0);
            CHECK_EQ(6, t->begins);
        } else if (t->tid == 5002) {
            threads++;
            CHECK(strcmp(t->name, "worker") == 0);
            CHECK_EQ(6, t->begins);
        } else if (t->tid == 5003) {
            threads++;
            CHECK(strcmp(t->name, "thread_2") == 0);
            CHECK_EQ(0, t->begins);
        }
    }
    CHECK_EQ(3, threads);
    CHECK_EQ(2 * (6 + 6), s.events);
    CHECK_EQ(s.events, s.log_count); /* every event logged: the names below counted in all */
    CHECK_EQ(1, pf_begins_named(&s, name_quote));
    CHECK_EQ(1, pf_begins_named(&s, name_utf8));
    CHECK_EQ(1, pf_begins_named(&s, name_bad_clean));
    pf_free(&s);
    free(data);

    /* stdout is a file here, so no -o is needed */
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(2 * (6 + 6), s.events);
    pf_free(&s);
    run_free(&o);
}

/* ==== sessions with detail records =================================================== */
/* A session recorded with detail ALWAYS in `layout`, add_symbols' names, and one thread
 * the library attaches ("detail", the tid of this OS thread): its writer, or NULL after
 * a failure (r->s is NULL when the session did not open). detail_session_close detaches
 * the thread and closes the session. */
static atf_producer *detail_session_open(rec *r, uint32_t layout) {
    atf_session_config cfg;
    atf_producer *w = NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = layout;
    cfg.detail_mode = ATF_DETAIL_ALWAYS;
    rec_open_new(r, &cfg);
    if (!r->s) return NULL;
    add_symbols(r);
    CHECK_RESULT(ATF_OK, atf_session_attach(r->s, "detail", &w));
    return w;
}

static void detail_session_close(rec *r) {
    atf_session_detach(r->s);
    rec_close(r);
}

/* ==== export parquet ================================================================= */
/* Both tables of a session, decoded by tests/parquet_decode.h (written apart from the
 * writer): every slice row against the session's threads and names, with count and
 * sum(self_ns) per function equal to `atf stats --json`, the ended_by counts equal to
 * the walk's and has_detail equal to its call event's; every event row against the merged
 * session's event at the same position. */

/* The columns' names; the times of the trace clock (from time_col on, `times` of them)
 * plain INT64 nanoseconds, which count from no date; the wall clock's (from wall_col on)
 * TIMESTAMP(NANOS) adjusted to UTC and OPTIONAL; mangled OPTIONAL; every other column
 * REQUIRED. */
static void pq_check_columns(const pqd_file *f, const char *const *names, size_t n,
                             size_t time_col, size_t times, size_t wall_col) {
    size_t i;
    CHECK_EQ(n, f->ncols);
    for (i = 0; i < n && i < f->ncols; i++) {
        const pqd_column *c = &f->cols[i];
        CHECK(strcmp(names[i], c->name) == 0);
        CHECK_EQ(i >= wall_col || strcmp(names[i], "mangled") == 0, c->repetition);
        if (i >= time_col && i < time_col + times) {
            CHECK_EQ(PQ_LOGICAL_INTEGER_FIELD, c->logical);
            CHECK_EQ(64, c->int_bits);
            CHECK_EQ(1, c->int_signed);
        } else if (i >= wall_col) {
            CHECK_EQ(2, c->type);
            CHECK_EQ(PQ_LOGICAL_TIMESTAMP_FIELD, c->logical);
            CHECK_EQ(PQ_NANOS_FIELD, c->ts_unit);
            CHECK_EQ(1, c->ts_utc);
        }
    }
}

/* Trace time ts on the wall clock of src (its manifest's wall_clock_ns anchor, read here
 * by the library alone): 1 with *wall set, 0 when it has no such anchor. */
static int pq_wall_of(const cli_trace *src, int64_t ts, int64_t *wall) {
    const atf_session_anchor *a = atf_session_reader_anchor(&src->reader, "wall_clock_ns");
    if (!a) return 0;
    CHECK_EQ(1000000000, a->timescale); /* the library writes it in ns */
    return atf_anchor_value_at(a, (uint64_t)ts, wall) == ATF_OK;
}

/* Column col of row r holds ts on the wall clock, or null when there is none. */
static void pq_check_wall(const pqd_file *f, const cli_trace *src, size_t col, size_t r,
                          int64_t ts) {
    int64_t wall = 0;
    int has = pq_wall_of(src, ts, &wall);
    CHECK_EQ(!has, f->nulls[col][r]);
    if (has) {
        CHECK_EQ(wall, f->ints[col][r]);
        CHECK(wall > 1500000000000000000ll); /* after 2017: a date, not boot time */
    }
}

/* The function columns of a row (function_id, fid, name, mangled at col_id, +1, +2, +3)
 * name fid: its name as the tools show it, its symbol (null when it has none). */
static void pq_check_function(const pqd_file *f, const cli_trace *src, size_t row,
                              size_t col_id) {
    uint64_t fid = (uint64_t)f->ints[col_id][row];
    const char *sym;
    char hex[24], name[4096];
    size_t n = cli_utf8_clean(cli_trace_name(src, fid, hex, sizeof hex), name, sizeof name - 1);
    name[n] = '\0';
    snprintf(hex, sizeof hex, "0x%016llx", (cli_ull)fid);
    CHECK(pq_is(f->bytes[col_id + 1][row], hex));
    CHECK(pq_is(f->bytes[col_id + 2][row], name));
    sym = cli_trace_symbol(src, fid);
    CHECK_EQ(sym == NULL, f->nulls[col_id + 3][row]);
    if (sym) CHECK(pq_is(f->bytes[col_id + 3][row], sym));
}

static const atf_session_thread *pq_thread(const cli_trace *src, int64_t slot) {
    size_t i;
    for (i = 0; i < src->reader.thread_count; i++)
        if ((int64_t)src->reader.threads[i].slot == slot) return &src->reader.threads[i];
    return NULL;
}

/* Per function of the slices: rows and sum of self_ns. */
typedef struct pq_fn_sums {
    uint64_t fid[PQ_FNS_MAX], rows[PQ_FNS_MAX], self_ns[PQ_FNS_MAX];
    size_t count;
} pq_fn_sums;

static void pq_add(pq_fn_sums *s, uint64_t fid, uint64_t self_ns) {
    size_t i = 0;
    while (i < s->count && s->fid[i] != fid) i++;
    if (i == PQ_FNS_MAX) {
        CHECK(i < PQ_FNS_MAX);
        return;
    }
    if (i == s->count) s->fid[s->count++] = fid;
    s->rows[i]++;
    s->self_ns[i] += self_ns;
}

/* count(*) and sum(self_ns) per function equal `atf stats --json`'s calls and self_ns. */
static void pq_check_against_stats_json(const char *dir, const pq_fn_sums *s) {
    run_result o = run(cli_main, "stats", "--json", dir, (const char *)NULL);
    jdoc d;
    long fns, it;
    size_t seen = 0, i;
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    fns = j_get(&d, 0, "functions");
    for (it = fns >= 0 ? d.nodes[fns].child : -1; it >= 0; it = d.nodes[it].next) {
        uint64_t fid = strtoull(j_str(&d, it, "fid") + 2, NULL, 16);
        for (i = 0; i < s->count && s->fid[i] != fid; i++) {}
        CHECK(i < s->count);
        if (i == s->count) continue;
        CHECK_EQ(j_u64(&d, it, "calls"), s->rows[i]);
        CHECK_EQ(j_u64(&d, it, "self_ns"), s->self_ns[i]);
        seen++;
    }
    CHECK_EQ(s->count, seen);
    j_free(&d);
    run_free(&o);
}

/* The call events of a session: thread slot, timestamp, function and detail link. */
typedef struct pq_call {
    uint64_t slot, ts, fid, detail_seq;
} pq_call;

/* The call events of src in merged order (*n of them); NULL when there are none. */
static pq_call *pq_calls(cli_trace *src, size_t *n) {
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter flt;
    pq_call *calls = NULL;
    size_t cap = 0;
    *n = 0;
    cli_trace_filter(src, &flt);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &src->reader, &flt));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        if (it.event.kind != ATF_EVENT_CALL) continue;
        if (*n == cap) {
            pq_call *more;
            cap = cap ? cap * 2 : 256;
            more = (pq_call *)realloc(calls, cap * sizeof *calls);
            CHECK(more != NULL);
            if (!more) break;
            calls = more;
        }
        calls[*n].slot = it.slot;
        calls[*n].ts = it.event.timestamp_ns;
        calls[*n].fid = it.event.function_id;
        calls[*n].detail_seq = it.event.detail_seq;
        (*n)++;
    }
    atf_merge_deinit(&m);
    return calls;
}

/* has_detail of a slice row (0 or 1) says what a call event of its thread, function and
 * start carries: one with a detail link for 1, one without for 0. */
static void pq_check_has_detail(const pqd_file *f, size_t r, const pq_call *calls, size_t n) {
    int64_t has = f->ints[PQ_HAS_DETAIL][r];
    size_t i, with = 0, without = 0;
    for (i = 0; i < n; i++) {
        if ((int64_t)calls[i].slot != f->ints[2][r] ||
            (int64_t)calls[i].ts != f->ints[PQ_START][r] ||
            (int64_t)calls[i].fid != f->ints[4][r])
            continue;
        if (calls[i].detail_seq != ATF_NO_DETAIL) with++;
        else without++;
    }
    CHECK(has == 0 || has == 1);
    CHECK(with + without > 0);
    if (has == 1) CHECK(with > 0);
    else CHECK(without > 0);
}

/* Checks the slices table of dir; returns its sum(has_detail). */
static int64_t pq_check_slices(const char *dir) {
    static pq_fn_sums sums;
    pq_call *calls;
    size_t ncalls = 0;
    int64_t detailed = 0;
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    pqd_file f;
    uint64_t ended[5] = { 0, 0, 0, 0, 0 };
    int64_t row;
    size_t i, k;
    memset(&sums, 0, sizeof sums);
    if (!pq_export(dir, "slices", &f)) return -1;
    pq_check_columns(&f, pq_slice_columns, PQ_SLICE_COLUMNS, PQ_START, 2, PQ_START_WALL);
    if (f.ncols != PQ_SLICE_COLUMNS || !collect(dir, &src, &st, &w)) {
        pqd_close(&f);
        return -1;
    }
    CHECK_EQ(1, f.cols[PQ_HAS_DETAIL].type); /* INT32, INTEGER(32, signed) */
    CHECK_EQ(PQ_LOGICAL_INTEGER_FIELD, f.cols[PQ_HAS_DETAIL].logical);
    CHECK_EQ(32, f.cols[PQ_HAS_DETAIL].int_bits);
    CHECK_EQ(1, f.cols[PQ_HAS_DETAIL].int_signed);
    calls = pq_calls(&src, &ncalls);
    for (row = 0; row < f.num_rows; row++) {
        size_t r = (size_t)row;
        const atf_session_thread *t = pq_thread(&src, f.ints[2][r]);
        int64_t start = f.ints[PQ_START][r], end = f.ints[PQ_END][r], dur = f.ints[PQ_DUR][r];
        char tname[80];
        CHECK(t != NULL);
        if (!t) break;
        if (t->name[0]) snprintf(tname, sizeof tname, "%s", t->name);
        else snprintf(tname, sizeof tname, "thread_%u", t->slot);
        CHECK_EQ((int64_t)src.pid, f.ints[0][r]);
        CHECK_EQ((int64_t)cli_thread_tid(t), f.ints[1][r]);
        CHECK(pq_is(f.bytes[3][r], tname));
        pq_check_function(&f, &src, r, 4);
        CHECK(pq_is(f.bytes[PQ_MODULE][r], "")); /* these sessions register no module */
        CHECK(f.ints[PQ_DEPTH][r] >= 0 && f.ints[PQ_DEPTH][r] < (int64_t)WALK_MAX_DEPTH);
        CHECK(start <= end && (uint64_t)start >= t->reader.index.header.time_start_ns);
        CHECK_EQ(end - start, dur);
        pq_check_wall(&f, &src, PQ_START_WALL, r, start);
        pq_check_wall(&f, &src, PQ_END_WALL, r, end);
        /* the recorder's pauses inside the frame: in dur_ns, left out of self_ns */
        CHECK(f.ints[PQ_PAUSED][r] >= 0 && f.ints[PQ_PAUSED][r] <= dur);
        CHECK(f.ints[PQ_SELF][r] >= 0 && f.ints[PQ_SELF][r] <= dur - f.ints[PQ_PAUSED][r]);
        for (k = 0; k < 5 && !pq_is(f.bytes[PQ_ENDED_BY][r], pq_endings[k]); k++) {}
        CHECK(k < 5);
        if (k < 5) ended[k]++;
        pq_add(&sums, (uint64_t)f.ints[4][r], (uint64_t)f.ints[PQ_SELF][r]);
        pq_check_has_detail(&f, r, calls, ncalls);
        detailed += f.ints[PQ_HAS_DETAIL][r];
    }
    free(calls);
    for (i = 0; i < w.count; i++) {
        ended[1] -= w.threads[i].unwound;
        ended[2] -= w.threads[i].cut_short;
        ended[3] -= w.threads[i].cut_by_gap;
    }
    CHECK_EQ(0, ended[1]);
    CHECK_EQ(0, ended[2]);
    CHECK_EQ(0, ended[3]);
    for (i = 0, k = 0; i < st.count; i++) k += st.fns[i].calls;
    CHECK_EQ((int64_t)k, f.num_rows);
    pq_check_against_stats_json(dir, &sums);
    collect_free(&src, &st, &w);
    pqd_close(&f);
    return detailed;
}

static void pq_check_events(const char *dir) {
    cli_trace src;
    profile_fns st;
    walk_ctx w;
    pqd_file f;
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter flt;
    size_t r = 0;
    if (!pq_export(dir, "events", &f)) return;
    pq_check_columns(&f, pq_event_columns, PQ_EVENT_COLUMNS, 3, 1, PQ_TS_WALL);
    if (f.ncols != PQ_EVENT_COLUMNS || !collect(dir, &src, &st, &w)) {
        pqd_close(&f);
        return;
    }
    CHECK_EQ((int64_t)cli_trace_events(&src), f.num_rows);
    cli_trace_filter(&src, &flt);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &src.reader, &flt));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        CHECK((int64_t)r < f.num_rows);
        if ((int64_t)r >= f.num_rows) break;
        CHECK_EQ((int64_t)src.pid, f.ints[0][r]);
        CHECK_EQ((int64_t)it.slot, f.ints[1][r]);
        CHECK_EQ((int64_t)it.seq, f.ints[2][r]);
        CHECK_EQ((int64_t)it.event.timestamp_ns, f.ints[3][r]);
        CHECK_EQ((int64_t)it.event.function_id, f.ints[4][r]);
        pq_check_function(&f, &src, r, 4);
        CHECK(pq_is(f.bytes[PQ_KIND][r], atf_event_kind_str(it.event.kind)));
        CHECK_EQ((int64_t)it.event.call_depth, f.ints[PQ_EV_DEPTH][r]);
        CHECK_EQ(it.event.detail_seq == ATF_NO_DETAIL ? -1 : (int64_t)it.event.detail_seq,
                 f.ints[PQ_DETAIL_SEQ][r]);
        pq_check_wall(&f, &src, PQ_TS_WALL, r, (int64_t)it.event.timestamp_ns);
        r++;
    }
    atf_merge_deinit(&m);
    CHECK_EQ(f.num_rows, (int64_t)r);
    collect_free(&src, &st, &w);
    pqd_close(&f);
}

/* Checks both tables of dir; returns the slices' sum(has_detail). */
static int64_t pq_check_session(const char *dir) {
    int64_t detailed = pq_check_slices(dir);
    pq_check_events(dir);
    return detailed;
}

/* One thread (tid of the writer's OS thread) recorded with detail ALWAYS in `layout`: of
 * the calls, main, b, the a that b's return unwinds and e (open at the end) carry detail;
 * so do two returns, which must not count. Returns the calls with detail: 4. */
static int64_t pq_make_detail(rec *r, uint32_t layout) {
    static const uint8_t payload[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    atf_producer *w = detail_session_open(r, layout);
    if (!r->s) return 0;
    if (w) {
#define DCALL(fid, ts) CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, (fid), \
                                                        (ts), 3, payload, sizeof payload))
#define DRET(fid, ts) CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_RETURN, (fid), \
                                                       (ts), 4, payload, sizeof payload))
        DCALL(F_MAIN, T0 + 0);
        CALL(w, F_A, T0 + 100);
        DCALL(F_B, T0 + 200);
        DRET(F_B, T0 + 500);
        RET(w, F_A, T0 + 1000);
        DCALL(F_A, T0 + 1100);
        CALL(w, F_B, T0 + 1200);
        RET(w, F_A, T0 + 1400);      /* b unwound */
        DRET(F_MAIN, T0 + 2000);
        CALL(w, F_R, T0 + 3000);
        RET(w, F_R, T0 + 3100);
        DCALL(F_E, T0 + 3200);
        CALL(w, F_F, T0 + 3300);     /* e and f open at the end */
#undef DCALL
#undef DRET
    }
    detail_session_close(r);
    return 4;
}

/* Removes the timing anchors from the manifest of the pid_* directory dir: a session
 * without a wall clock. */
static void strip_anchors(const char *dir) {
    char path[1200], *text, *at, *end;
    FILE *fp;
    long n;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (!fp) return;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    text = (char *)calloc((size_t)n + 1, 1);
    CHECK(text != NULL && fread(text, 1, (size_t)n, fp) == (size_t)n);
    fclose(fp);
    if (!text) return;
    at = strstr(text, "\"timing_anchors\":[");
    end = at ? strchr(at, ']') : NULL; /* an anchor holds no array */
    CHECK(at != NULL && end != NULL);
    if (at && end) {
        fp = fopen(path, "wb");
        CHECK(fp != NULL);
        if (fp) {
            fwrite(text, 1, (size_t)(at - text), fp);
            fputs("\"timing_anchors\":[", fp);
            fputs(end, fp);
            fclose(fp);
        }
    }
    free(text);
}

/* Threads with and without names, unbalanced frames, names to clean; layout 2; gaps; calls
 * with detail in both layouts; an id with its top bit set; a session without a wall
 * clock; and what the command refuses. */
static void test_export_parquet(void) {
    static gap_op ops[GAP_OPS_MAX];
    const uint64_t high = 0x8000000000000001ull;
    rec r;
    run_result o;
    pqd_file f;
    char path[1200];
    make_multi(&r);
    CHECK_EQ(0, pq_check_session(r.dir)); /* recorded without detail */
    strip_anchors(r.dir);                 /* start_wall, end_wall, ts_wall: null */
    CHECK_EQ(0, pq_check_session(r.dir));
    if (pq_export(r.dir, "events", &f)) {
        int64_t k;
        CHECK(f.num_rows > 0);
        for (k = 0; k < f.num_rows; k++) CHECK_EQ(1, f.nulls[PQ_TS_WALL][k]);
        pqd_close(&f);
    }
    make_nested(&r, ATF_LAYOUT_2);
    CHECK_EQ(0, pq_check_session(r.dir));
    make_gap_session(&r, ops, gap_script(ops, GAP_OPS_MAX));
    CHECK_EQ(0, pq_check_session(r.dir));
    {
        int64_t want = pq_make_detail(&r, ATF_LAYOUT_1);
        CHECK_EQ(want, pq_check_session(r.dir));
        want = pq_make_detail(&r, ATF_LAYOUT_2);
        CHECK_EQ(want, pq_check_session(r.dir));
    }

    rec_open(&r, ATF_LAYOUT_2);
    {
        atf_producer *w = rec_thread(&r, 77, "high", ATF_LAYOUT_2);
        CALL(w, high, T0);
        RET(w, high, T0 + 10);
    }
    rec_close(&r);
    CHECK_EQ(0, pq_check_session(r.dir));
    if (pq_export(r.dir, "slices", &f)) {
        CHECK_EQ(1, f.num_rows);
        if (f.num_rows == 1) {
            CHECK_EQ(INT64_MIN + 1, f.ints[4][0]); /* the id's bits, read as signed */
            CHECK(pq_is(f.bytes[5][0], "0x8000000000000001"));
        }
        pqd_close(&f);
    }

    /* an output that fills up: exit 1; usage errors: exit 2 */
    o = run(cli_main, "export", "--format", "parquet", "-o", "/dev/full", r.dir, (const char *)NULL);
    CHECK_EQ(1, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "parquet", "--table", "frames", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", "--table", "events", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    snprintf(path, sizeof path, "%s/../none", r.dir);
    o = run(cli_main, "export", "--format", "parquet", "-o", path, path, (const char *)NULL);
    CHECK(o.status != 0);
    CHECK(!cli_exists(path));
    run_free(&o);
}

/* ==== detail records as slice arguments ============================================== */
/* One thread recorded with detail ALWAYS: function payloads (stack windows of 0, 8 and
 * 256 bytes, values with the top bit set), a record of another type, calls without
 * detail and returns with detail (which must not show). Each call has its own timestamp,
 * so a slice begin finds what its call carried by ts. */
enum { DX_NONE = 0, DX_FUNCTION = 1, DX_OTHER = 2 };
enum { DX_CALLS = 5, DX_OTHER_TYPE = 9, DX_OTHER_BYTES = 16 };

typedef struct dx_call {
    uint64_t ts, fid;
    int kind;
    atf_detail_payload p;        /* DX_FUNCTION: what the record holds */
} dx_call;

static dx_call g_dx[DX_CALLS];
static const char *const dx_regs[8] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };

static void dx_payload(dx_call *c, uint64_t k, uint16_t stack_size) {
    size_t i;
    memset(&c->p, 0, sizeof c->p);
    c->p.function_id = c->fid;
    for (i = 0; i < 8; i++) c->p.x[i] = (k + 1) * 0x0101010101010101ull + i;
    c->p.lr = 0x400000ull + k;
    c->p.fp = 0x7ffd0000ull - k * 0x100;
    c->p.sp = c->p.fp - stack_size;
    c->p.stack_size = stack_size;
    if (k == 2) { /* values that take every bit */
        c->p.x[7] = UINT64_MAX;
        c->p.lr = 1ull << 63;
    }
}

/* A call of fid at ts with detail of `kind`, as g_dx[k]. */
static void dx_call_event(atf_producer *w, size_t k, uint64_t fid, uint64_t ts, int kind,
                          uint16_t stack_size) {
    static uint8_t stack[ATF_DETAIL_STACK_MAX], buf[ATF_DETAIL_PAYLOAD_SIZE + ATF_DETAIL_STACK_MAX];
    dx_call *c = &g_dx[k];
    size_t len;
    memset(c, 0, sizeof *c);
    c->ts = ts;
    c->fid = fid;
    c->kind = kind;
    if (kind == DX_NONE) {
        CALL(w, fid, ts);
        return;
    }
    if (kind == DX_OTHER) {
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, fid, ts, DX_OTHER_TYPE,
                                                     stack, DX_OTHER_BYTES));
        return;
    }
    dx_payload(c, k, stack_size);
    c->p.stack = stack;
    len = atf_detail_payload_encode(&c->p, buf, sizeof buf);
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_CALL, fid, ts,
                                                 ATF_DETAIL_FUNCTION_CALL, buf, len));
}

/* A return of fid at ts carrying a function payload of its own. */
static void dx_return_event(atf_producer *w, uint64_t fid, uint64_t ts) {
    uint8_t buf[ATF_DETAIL_PAYLOAD_SIZE];
    atf_detail_payload p;
    memset(&p, 0, sizeof p);
    p.function_id = fid;
    p.x[0] = 0xdeadull;
    CHECK_EQ(ATF_DETAIL_PAYLOAD_SIZE, atf_detail_payload_encode(&p, buf, sizeof buf));
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, ATF_EVENT_RETURN, fid, ts,
                                                 ATF_DETAIL_FUNCTION_RETURN, buf, sizeof buf));
}

static void make_detail_session(rec *r, uint32_t layout) {
    atf_producer *w = detail_session_open(r, layout);
    if (!r->s) return;
    if (w) {
        dx_call_event(w, 0, F_MAIN, T0 + 0, DX_FUNCTION, 0);
        dx_call_event(w, 1, F_A, T0 + 10, DX_NONE, 0);
        dx_call_event(w, 2, F_B, T0 + 20, DX_FUNCTION, ATF_DETAIL_STACK_MAX);
        dx_return_event(w, F_B, T0 + 30);
        RET(w, F_A, T0 + 40);
        dx_call_event(w, 3, F_E, T0 + 50, DX_OTHER, 0);
        RET(w, F_E, T0 + 60);
        dx_call_event(w, 4, F_F, T0 + 70, DX_FUNCTION, 8); /* open at the end */
    }
    detail_session_close(r);
}

static const dx_call *dx_at(uint64_t ts) {
    size_t i;
    for (i = 0; i < DX_CALLS; i++)
        if (g_dx[i].ts == ts) return &g_dx[i];
    return NULL;
}

static int dx_hex_is(const char *s, uint64_t v) {
    char hex[24];
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)v);
    return strcmp(s, hex) == 0;
}

/* The args of one B event against what its call carried. */
static void dx_check_chrome_args(const jdoc *d, long ev, const dx_call *c) {
    long args = j_get(d, ev, "args");
    size_t i;
    if (c->kind == DX_NONE) {
        CHECK(args < 0);
        return;
    }
    CHECK(args >= 0 && d->nodes[args].type == J_OBJ);
    if (c->kind == DX_OTHER) {
        CHECK_EQ(2, j_count(d, args));
        CHECK_EQ(DX_OTHER_TYPE, j_u64(d, args, "detail_type"));
        CHECK_EQ(DX_OTHER_BYTES, j_u64(d, args, "detail_bytes"));
        return;
    }
    CHECK_EQ(13, j_count(d, args));
    CHECK(dx_hex_is(j_str(d, args, "function_id"), c->p.function_id));
    for (i = 0; i < 8; i++) CHECK(dx_hex_is(j_str(d, args, dx_regs[i]), c->p.x[i]));
    CHECK(dx_hex_is(j_str(d, args, "lr"), c->p.lr));
    CHECK(dx_hex_is(j_str(d, args, "fp"), c->p.fp));
    CHECK(dx_hex_is(j_str(d, args, "sp"), c->p.sp));
    CHECK(d->nodes[j_get(d, args, "stack_size")].type == J_NUM);
    CHECK_EQ(c->p.stack_size, j_u64(d, args, "stack_size"));
}

static void dx_check_chrome(const char *dir) {
    run_result o = run(cli_main, "export", "--format", "chrome", dir, (const char *)NULL);
    jdoc d;
    long evs, it, args;
    size_t begins = 0, with_args = 0, cut = 0;
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    evs = j_get(&d, 0, "traceEvents");
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph");
        const dx_call *c;
        if (strcmp(ph, "M") == 0) continue;
        if (strcmp(ph, "B") != 0) { /* E events carry no detail (the return's neither), */
            if ((args = j_get(&d, it, "args")) >= 0) { /* only the mark of a cut frame */
                CHECK_EQ(1, j_count(&d, args));
                CHECK(j_get(&d, args, "cut_short") >= 0 &&
                      d.nodes[j_get(&d, args, "cut_short")].type == J_BOOL);
                cut++;
            }
            continue;
        }
        begins++;
        c = dx_at(j_ts_ns(&d, it));
        CHECK(c != NULL);
        if (!c) continue;
        with_args += j_get(&d, it, "args") >= 0;
        dx_check_chrome_args(&d, it, c);
    }
    CHECK_EQ(DX_CALLS, begins);
    CHECK_EQ(4, with_args);
    CHECK_EQ(2, cut); /* main and f, open at the end */
    CHECK_EQ(2, count_of(o.out, "\"ph\":\"E\",\"args\":{\"cut_short\":true}}"));
    j_free(&d);
    run_free(&o);
}

/* The annotation `name` among the n annotations at a, or NULL. */
static const pf_annot *dx_annot(const pf_annot *a, size_t n, const char *name) {
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(a[i].name, name) == 0) return &a[i];
    return NULL;
}

static int dx_annot_is(const pf_annot *a, size_t n, const char *name, uint32_t field, uint64_t v) {
    const pf_annot *x = dx_annot(a, n, name);
    return x && x->field == field && x->v == v;
}

/* The n annotations of the slice begin at ts against what its call carried. */
static void dx_check_annotations(const pf_annot *a, size_t n, const dx_call *c) {
    const pf_annot *fid = dx_annot(a, n, "function_id");
    size_t i;
    if (c->kind == DX_NONE) {
        CHECK_EQ(0, n);
        return;
    }
    if (c->kind == DX_OTHER) {
        CHECK_EQ(2, n);
        CHECK(dx_annot_is(a, n, "detail_type", 3, DX_OTHER_TYPE));
        CHECK(dx_annot_is(a, n, "detail_bytes", 3, DX_OTHER_BYTES));
        return;
    }
    CHECK_EQ(13, n);
    CHECK(fid != NULL && fid->field == 6 && dx_hex_is(fid->str, c->p.function_id));
    for (i = 0; i < 8; i++) CHECK(dx_annot_is(a, n, dx_regs[i], 7, c->p.x[i]));
    CHECK(dx_annot_is(a, n, "lr", 7, c->p.lr));
    CHECK(dx_annot_is(a, n, "fp", 7, c->p.fp));
    CHECK(dx_annot_is(a, n, "sp", 7, c->p.sp));
    CHECK(dx_annot_is(a, n, "stack_size", 3, c->p.stack_size));
}

static void dx_check_perfetto(const char *dir) {
    run_result o = run(cli_main, "export", "--format", "perfetto", dir, (const char *)NULL);
    pf_state s;
    size_t i, k, begins = 0, cut = 0;
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    for (i = 0; i < s.annot_count; i++) { /* detail on begins; on ends only the cut mark */
        if (s.annots[i].type == 1) continue;
        CHECK_EQ(2, s.annots[i].type);
        CHECK(strcmp(s.annots[i].name, "cut_short") == 0);
        CHECK_EQ(2, s.annots[i].field);
        CHECK_EQ(1, s.annots[i].v);
        cut++;
    }
    CHECK_EQ(2, cut); /* main and f, open at the end */
    for (i = 0; i < s.log_count; i++) {
        const dx_call *c;
        size_t first = s.annot_count, n = 0;
        if (s.log[i].type != 1) continue;
        begins++;
        c = dx_at(s.log[i].ts);
        CHECK(c != NULL);
        if (!c) continue;
        for (k = 0; k < s.annot_count; k++) {
            if (s.annots[k].ts != c->ts || s.annots[k].type != 1) continue;
            if (first == s.annot_count) first = k;
            n++;
        }
        dx_check_annotations(s.annots + first, n, c);
    }
    CHECK_EQ(DX_CALLS, begins);
    pf_free(&s);
    run_free(&o);
}


static void test_export_detail(void) {
    rec r;
    make_detail_session(&r, ATF_LAYOUT_1);
    dx_check_chrome(r.dir);
    dx_check_perfetto(r.dir);
    make_detail_session(&r, ATF_LAYOUT_2);
    dx_check_chrome(r.dir);
    dx_check_perfetto(r.dir);
    /* the parquet slices say the same calls have detail */
    CHECK_EQ(4, pq_check_session(r.dir));
}

/* What the Chrome export wrote before slices had arguments, for a trace without detail:
 * the same bytes still (PID stands for the pid). */
static const char chrome_nested_golden[] =
    "{\"traceEvents\":[\n"
    "{\"pid\":PID,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"pid_PID\"}},\n"
    "{\"pid\":PID,\"tid\":4242,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"main\"}},\n"
    "{\"pid\":PID,\"tid\":4242,\"ph\":\"M\",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":0}},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.000,\"ph\":\"B\",\"name\":\"main\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.100,\"ph\":\"B\",\"name\":\"a\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.200,\"ph\":\"B\",\"name\":\"b\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1000.500,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1001.000,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1001.100,\"ph\":\"B\",\"name\":\"a\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1001.400,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1002.000,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1003.000,\"ph\":\"B\",\"name\":\"recurse\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1003.100,\"ph\":\"B\",\"name\":\"recurse\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1003.200,\"ph\":\"E\"},\n"
    "{\"pid\":PID,\"tid\":4242,\"ts\":1004.000,\"ph\":\"E\"}\n"
    "],\"displayTimeUnit\":\"ns\"}\n";

/* The golden text with each PID replaced by pid, into a malloc'd string. */
static char *golden_with_pid(const char *golden, const char *pid) {
    size_t n = strlen(golden) + 64 * strlen(pid) + 1, k = 0;
    char *out = (char *)malloc(n);
    const char *s = golden;
    if (!out) return NULL;
    while (*s && k + strlen(pid) + 1 < n) {
        if (strncmp(s, "PID", 3) == 0) {
            memcpy(out + k, pid, strlen(pid));
            k += strlen(pid);
            s += 3;
        } else {
            out[k++] = *s++;
        }
    }
    out[k] = '\0';
    return out;
}

static void test_export_chrome_unchanged(void) {
    rec r;
    run_result o;
    char *want;
    make_nested(&r, ATF_LAYOUT_1);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    want = golden_with_pid(chrome_nested_golden, strrchr(r.dir, '_') + 1);
    CHECK(want != NULL && o.out != NULL);
    if (want && o.out) {
        CHECK_EQ(strlen(want), o.out_len);
        CHECK(strcmp(want, o.out) == 0);
    }
    free(want);
    run_free(&o);
}

/* ==== names: the process and its threads ============================================ */
/* The process_name and thread_name metadata of a Chrome export of dir: the process's
 * into pname, the three threads' (tids base+0..2) into tnames. */
static void names_chrome(const char *dir, uint64_t base, char *pname, size_t cap,
                         char tnames[3][64]) {
    run_result o = run(cli_main, "export", "--format", "chrome", dir, (const char *)NULL);
    jdoc d;
    long evs, it;
    pname[0] = '\0';
    memset(tnames, 0, 3 * sizeof tnames[0]);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    evs = j_get(&d, 0, "traceEvents");
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *name = j_str(&d, it, "name");
        long args = j_get(&d, it, "args");
        uint64_t tid = j_u64(&d, it, "tid");
        if (strcmp(j_str(&d, it, "ph"), "M") != 0) continue;
        if (strcmp(name, "process_name") == 0) snprintf(pname, cap, "%s", j_str(&d, args, "name"));
        if (strcmp(name, "thread_name") == 0 && tid >= base && tid < base + 3)
            snprintf(tnames[tid - base], 64, "%s", j_str(&d, args, "name"));
    }
    j_free(&d);
    run_free(&o);
}

static void test_export_names(void) {
    rec r;
    pf_state s;
    run_result o;
    char pname[256], tnames[3][64], want[64];
    size_t i, threads = 0;
    make_named(&r);
    names_chrome(r.dir, 7001, pname, sizeof pname, tnames);
    CHECK(strcmp(pname, "traced_app") == 0);
    CHECK(strcmp(tnames[0], "main") == 0);
    CHECK(strcmp(tnames[1], "worker \"w\"") == 0);
    CHECK(strcmp(tnames[2], "thread_2") == 0);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(4, s.track_count);
    CHECK(s.tracks[0].is_process);
    CHECK(strcmp(s.tracks[0].name, "traced_app") == 0);
    CHECK(strcmp(s.tracks[0].cmdline, names_cmdline) == 0);
    CHECK_EQ(strtoull(strrchr(r.dir, '_') + 1, NULL, 10), s.tracks[0].pid);
    for (i = 1; i < s.track_count; i++) {
        const pf_track *t = &s.tracks[i];
        CHECK(t->tid >= 7001 && t->tid <= 7003);
        if (t->tid < 7001 || t->tid > 7003) continue;
        threads++;
        CHECK(strcmp(t->name, t->tid == 7001 ? "main" : t->tid == 7002 ? "worker \"w\"" : "thread_2") == 0);
    }
    CHECK_EQ(3, threads);
    pf_free(&s);
    run_free(&o);

    /* no command line: the process is named after its directory, in both */
    make_nested(&r, ATF_LAYOUT_1);
    snprintf(want, sizeof want, "pid_%s", strrchr(r.dir, '_') + 1);
    names_chrome(r.dir, 4242, pname, sizeof pname, tnames);
    CHECK(strcmp(pname, want) == 0);
    CHECK(strcmp(tnames[0], "main") == 0);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK(s.track_count > 0 && s.tracks[0].is_process);
    CHECK(strcmp(s.tracks[0].name, want) == 0);
    CHECK(s.tracks[0].cmdline[0] == '\0');
    pf_free(&s);
    run_free(&o);
}

/* ==== folded stacks ================================================================== */
/* found is want, else both printed. */
#define CHECK_TEXT(want, found) do { \
    if (strcmp((want), (found)) != 0) { \
        harness__fail(__FILE__, __LINE__, "text differs"); \
        printf("  expected:\n%s  found:\n%s", (want), (found)); \
    } } while (0)

static void test_export_folded(void) {
    static const char *const none =
        "main 800\nmain;a 900\nmain;a;b 300\nrecurse 900\nrecurse;recurse 100\n";
    rec r, u;
    run_result o, f;
    char want[512], out[1200];
    size_t n = 0;
    const char *line;
    make_nested(&r, ATF_LAYOUT_1);
    /* self times: main 2000 - 900 - 300; a's two calls 600 + 300; recurse's outer 900 */
    o = run(cli_main, "export", "--format", "folded", "--thread-frame", "none", r.dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_TEXT(none, o.out);
    run_free(&o);
    /* the default: the thread's name ("main") as the first frame */
    o = run(cli_main, "export", "--format", "folded", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_TEXT("main;main 800\nmain;main;a 900\nmain;main;a;b 300\nmain;recurse 900\n"
               "main;recurse;recurse 100\n", o.out);
    run_free(&o);
    o = run(cli_main, "export", "--format", "folded", "--thread-frame", "tid", r.dir,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    for (line = none; *line; line = strchr(line, '\n') + 1) /* every line under NAME-PID/TID */
        n += (size_t)snprintf(want + n, sizeof want - n, "main-%d/4242;%.*s", (int)getpid(),
                              (int)(strchr(line, '\n') - line + 1), line);
    CHECK_TEXT(want, o.out);
    run_free(&o);
    /* -o, --function (the subtrees of a: b in a's first call) */
    snprintf(out, sizeof out, "%s/nested.folded", r.dir);
    o = run(cli_main, "export", "--format", "folded", "-o", out, "--thread-frame", "none",
            r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_EQ(0, o.out_len);
    f = run(cli_main, "export", "--format", "folded", "--thread-frame", "none", "--function",
            "a", r.dir, (const char *)NULL);
    CHECK_EQ(0, f.status);
    CHECK_TEXT("a 900\na;b 300\n", f.out);
    run_free(&o);
    run_free(&f);
    {
        FILE *fp = fopen(out, "rb");
        size_t len = 0;
        char *text = fp ? slurp(fp, &len) : NULL;
        CHECK(text != NULL);
        if (text) CHECK_TEXT(none, text);
        free(text);
        if (fp) fclose(fp);
    }
    /* what no format of folded's takes, and what only folded takes */
    o = run(cli_main, "export", "--format", "folded", "--clock", "wall", r.dir, (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "folded", "--thread-frame", "all", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", "--thread-frame", "none", r.dir,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    run_free(&o);

    /* unbalanced input: the frames as stats closes them (b unwound, 103 by its
     * exception, e and f open at the end); the returns without a call add nothing */
    rec_open(&u, ATF_LAYOUT_1);
    add_symbols(&u);
    write_unbalanced(rec_thread(&u, 77, "u", ATF_LAYOUT_1));
    rec_close(&u);
    o = run(cli_main, "export", "--format", "folded", u.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK_TEXT("u;0x0000000000000005 100\nu;0x0000000000000005;0x0000000000000006 0\n"
               "u;0x0000000000000067 50\nu;a 100\nu;a;b 100\nu;g 20\n", o.out);
    run_free(&o);

    /* names with the format's separators: one frame for "x;y" and "x_y", and a thread
     * named with a line break; diff keeps the two functions apart */
    {
        rec x;
        atf_producer *w;
        jdoc d;
        rec_open(&x, ATF_LAYOUT_1);
        atf_session_add_symbol(x.s, F_MAIN, "main");
        atf_session_add_symbol(x.s, F_A, "x;y");
        atf_session_add_symbol(x.s, F_B, "x_y");
        w = rec_thread(&x, 78, "two\nlines", ATF_LAYOUT_1);
        CALL(w, F_MAIN, T0);
        CALL(w, F_A, T0 + 100);
        RET(w, F_A, T0 + 200);
        CALL(w, F_B, T0 + 300);
        RET(w, F_B, T0 + 500);
        RET(w, F_MAIN, T0 + 1000);
        rec_close(&x);
        o = run(cli_main, "export", "--format", "folded", x.dir, (const char *)NULL);
        CHECK_EQ(0, o.status);
        CHECK_TEXT("two_lines;main 700\ntwo_lines;main;x_y 300\n", o.out);
        run_free(&o);
        o = run(cli_main, "diff", "--json", x.dir, x.dir, (const char *)NULL);
        CHECK_EQ(0, o.status);
        CHECK(j_parse(&d, o.out, o.out_len));
        CHECK_EQ(3, j_count(&d, j_get(&d, 0, "functions"))); /* main, x;y and x_y */
        CHECK_EQ(2, j_count(&d, j_get(&d, 0, "paths")));     /* main and main;x_y */
        j_free(&d);
        run_free(&o);
    }
}

/* An empty thread and an empty session export as valid, empty traces. */
static void test_empty(void) {
    rec r;
    run_result o;
    jdoc d;
    pf_state s;
    rec_open(&r, ATF_LAYOUT_1);
    rec_thread(&r, 61, "idle", ATF_LAYOUT_1);
    rec_close(&r);
    o = run(cli_main, "stats", "--json", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    j_free(&d);
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pf_decode(&s, (const uint8_t *)o.out, o.out_len);
    CHECK_EQ(0, s.events);
    CHECK_EQ(2, s.packets);
    pf_free(&s);
    run_free(&o);
    o = run(cli_main, "tree", r.dir, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
}

/* ==== a session of several processes ================================================= */
/* A session_* directory holding a pid_* directory per process, as a program that forks
 * records it, exported whole: every process with its own pid, names and every call, in
 * Chrome JSON, Perfetto (a packet sequence and a track group per process) and Parquet,
 * counted per pid against `atf stats --json --pid N`; --pid still picks one; --thread
 * needs --pid; "+T" counts from the session's first event; --function per process; a
 * damaged process is named and the others still exported. fork() makes the second
 * process here, so these are POSIX only (the tools list pid_* directories there only). */
#if !defined(_WIN32)
#include <sys/wait.h>

enum { PROCS_MAX = 4 };

typedef struct procs {
    char root[1000];             /* the session_* directory */
    char dir[2][1100];           /* the pid_* directories: this process's, the child's */
    uint64_t pid[2];
} procs;

/* The child's thread: child_main { child_a } child_a, 10 us after the parent's start. */
static void write_child(atf_producer *w) {
    CALL(w, F_MAIN, T0 + 10000);
    CALL(w, F_A, T0 + 10100);
    RET(w, F_A, T0 + 10200);
    CALL(w, F_A, T0 + 10300);
    RET(w, F_A, T0 + 10400);
    RET(w, F_MAIN, T0 + 10500);
}

/* Two processes in one session_* directory: a child forked here (thread 8001 "child",
 * write_child, the ids of main and a named child_main and child_a: ids are per process),
 * then this one (thread 7001 "main" with the nested trace, 7002 "worker" with the
 * unbalanced one, add_symbols' names). 1 when both were recorded. */
static int make_procs(procs *p) {
    char name[64];
    rec r;
    pid_t child;
    int status = 0;
    memset(p, 0, sizeof *p);
    snprintf(name, sizeof name, "session_procs_%d", ++g_session_number);
    fflush(stdout);
    child = fork();
    if (child == 0) {
        rec_open_named(&r, ATF_LAYOUT_1, name);
        atf_session_add_symbol(r.s, F_MAIN, "child_main");
        atf_session_add_symbol(r.s, F_A, "child_a");
        write_child(rec_thread(&r, 8001, "child", ATF_LAYOUT_1));
        rec_close(&r);
        fflush(stdout);
        _exit(harness__failures_in_test ? 1 : 0);
    }
    CHECK(child > 0);
    if (child <= 0) return 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rec_open_named(&r, ATF_LAYOUT_1, name);
    add_symbols(&r);
    write_nested(rec_thread(&r, 7001, "main", ATF_LAYOUT_1));
    write_unbalanced(rec_thread(&r, 7002, "worker", ATF_LAYOUT_1));
    rec_close(&r);
    snprintf(p->dir[0], sizeof p->dir[0], "%s", r.dir);
    cli_parent_dir(r.dir, p->root, sizeof p->root);
    p->pid[0] = (uint64_t)getpid();
    p->pid[1] = (uint64_t)child;
    snprintf(p->dir[1], sizeof p->dir[1], "%s/pid_%llu", p->root, (cli_ull)child);
    CHECK(cli_is_dir(p->dir[1]));
    return cli_is_dir(p->dir[0]) && cli_is_dir(p->dir[1]);
}

/* What one export shows of each process. */
typedef struct proc_view {
    size_t n;
    uint64_t pid[PROCS_MAX];
    uint64_t begins[PROCS_MAX], ends[PROCS_MAX];     /* slices opened and closed */
    uint64_t process_names[PROCS_MAX], thread_names[PROCS_MAX];
    uint64_t child_named[PROCS_MAX];                  /* slices named child_* */
    uint64_t tids[PROCS_MAX][4];                      /* its threads' tids */
    size_t tid_count[PROCS_MAX];
    uint64_t events;                                  /* B and E events */
} proc_view;

/* The index of pid in v, added when new (PROCS_MAX: no room). */
static size_t pv_index(proc_view *v, uint64_t pid) {
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->pid[i] == pid) return i;
    CHECK(v->n < PROCS_MAX);
    if (v->n == PROCS_MAX) return PROCS_MAX;
    v->pid[v->n] = pid;
    return v->n++;
}

static void pv_add_tid(proc_view *v, size_t k, uint64_t tid) {
    size_t i;
    for (i = 0; i < v->tid_count[k]; i++)
        if (v->tids[k][i] == tid) return;
    if (v->tid_count[k] < 4) v->tids[k][v->tid_count[k]++] = tid;
}

/* The slices of pid in v (0 when v does not show it). */
static uint64_t pv_begins(const proc_view *v, uint64_t pid) {
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->pid[i] == pid) return v->begins[i];
    return 0;
}

static int pv_has(const proc_view *v, uint64_t pid) {
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->pid[i] == pid) return 1;
    return 0;
}

/* A Chrome export (JSON text) per process: every event's pid, balance per pid and thread,
 * time order per thread. */
static void pv_chrome(proc_view *v, const char *text, size_t len) {
    jdoc d;
    long evs, it;
    uint64_t depth[PROCS_MAX][4], last[PROCS_MAX][4];
    size_t k, t;
    memset(v, 0, sizeof *v);
    memset(depth, 0, sizeof depth);
    memset(last, 0, sizeof last);
    CHECK(j_parse(&d, text, len));
    evs = j_get(&d, 0, "traceEvents");
    CHECK(evs >= 0 && d.nodes[evs].type == J_ARR);
    for (it = evs >= 0 ? d.nodes[evs].child : -1; it >= 0; it = d.nodes[it].next) {
        const char *ph = j_str(&d, it, "ph"), *name = j_str(&d, it, "name");
        uint64_t tid = j_u64(&d, it, "tid");
        k = pv_index(v, j_u64(&d, it, "pid"));
        if (k == PROCS_MAX) continue;
        if (strcmp(ph, "M") == 0) {
            if (strcmp(name, "process_name") == 0) v->process_names[k]++;
            if (strcmp(name, "thread_name") == 0) v->thread_names[k]++;
            continue;
        }
        pv_add_tid(v, k, tid);
        for (t = 0; t < v->tid_count[k] && v->tids[k][t] != tid; t++) continue;
        CHECK(t < 4);
        if (t == 4) continue;
        CHECK(j_ts_ns(&d, it) >= last[k][t]);
        last[k][t] = j_ts_ns(&d, it);
        v->events++;
        if (strcmp(ph, "B") == 0) {
            v->begins[k]++;
            depth[k][t]++;
            if (strncmp(name, "child_", 6) == 0) v->child_named[k]++;
        } else {
            CHECK(strcmp(ph, "E") == 0);
            CHECK(depth[k][t] > 0);
            if (depth[k][t]) depth[k][t]--;
            v->ends[k]++;
        }
    }
    for (k = 0; k < PROCS_MAX; k++)
        for (t = 0; t < 4; t++) CHECK_EQ(0, depth[k][t]);
    j_free(&d);
}

/* A Perfetto export per process: one process track per pid (each pid once), its thread
 * tracks under it with its pid and on its packet sequence, and at most `seqs`
 * sequences. */
static void pv_perfetto(proc_view *v, const uint8_t *data, size_t len, size_t seqs) {
    pf_state *s = (pf_state *)malloc(sizeof *s);
    size_t i, k;
    memset(v, 0, sizeof *v);
    CHECK(s != NULL);
    if (!s) return;
    pf_decode_seqs(s, data, len, seqs);
    for (i = 0; i < s->track_count; i++) {
        const pf_track *t = &s->tracks[i];
        const pf_track *parent = t->is_process ? NULL : pf_track_of(s, t->parent);
        k = pv_index(v, t->pid);
        if (k == PROCS_MAX) continue;
        if (t->is_process) {
            v->process_names[k]++;
            continue;
        }
        CHECK(parent != NULL && parent->is_process);
        if (!parent) continue;
        CHECK_EQ(parent->pid, t->pid);
        CHECK_EQ(parent->seq, t->seq);
        v->thread_names[k]++;
        pv_add_tid(v, k, t->tid);
        CHECK_EQ(0, t->open);
        v->begins[k] += t->begins;
        v->ends[k] += t->ends;
        v->events += t->begins + t->ends;
    }
    for (k = 0; k < v->n; k++) CHECK_EQ(1, v->process_names[k]);
    CHECK(s->sequences == v->n || v->n == 0);
    for (i = 0; i < s->log_count; i++) { /* begins named child_* are the child's alone */
        const pf_track *t = pf_track_of(s, s->log[i].uuid);
        if (!t || s->log[i].type != 1 || strncmp(s->log[i].name, "child_", 6) != 0) continue;
        k = pv_index(v, t->pid);
        if (k < PROCS_MAX) v->child_named[k]++;
    }
    pf_free(s);
    free(s);
}

/* `atf stats --json --pid pid PATH`: the calls of every function, and the events of
 * every thread, summed. */
static void stats_of_pid(const char *path, uint64_t pid, uint64_t *calls, uint64_t *events) {
    char pid_text[24];
    run_result o;
    jdoc d;
    long arr, it;
    snprintf(pid_text, sizeof pid_text, "%llu", (cli_ull)pid);
    o = run(cli_main, "stats", "--json", "--pid", pid_text, path, (const char *)NULL);
    *calls = *events = 0;
    CHECK_EQ(0, o.status);
    CHECK(j_parse(&d, o.out, o.out_len));
    arr = j_get(&d, 0, "functions");
    for (it = arr >= 0 ? d.nodes[arr].child : -1; it >= 0; it = d.nodes[it].next)
        *calls += j_u64(&d, it, "calls");
    arr = j_get(&d, 0, "threads");
    for (it = arr >= 0 ? d.nodes[arr].child : -1; it >= 0; it = d.nodes[it].next)
        *events += j_u64(&d, it, "events");
    j_free(&d);
    run_free(&o);
}

/* Exports PATH as Chrome JSON with the NULL-terminated options into v; the status. */
static int chrome_view(proc_view *v, const char *path, const char *a, const char *b,
                       const char *c, const char *e) {
    run_result o = run(cli_main, "export", "--format", "chrome", path, a, b, c, e,
                       (const char *)NULL);
    int status = o.status;
    memset(v, 0, sizeof *v);
    if (status == 0 || status == 1) pv_chrome(v, o.out, o.out_len);
    run_free(&o);
    return status;
}

/* Every process of a whole-session export against its stats: its slices, one process
 * name, its threads (2 for the parent, 1 for the child), the child's names its own. */
static void check_procs_view(const proc_view *v, const procs *p, const char *what) {
    uint64_t calls, events;
    size_t i, k;
    CHECK_EQ(2, v->n);
    for (i = 0; i < 2; i++) {
        for (k = 0; k < v->n && v->pid[k] != p->pid[i]; k++) continue;
        CHECK(k < v->n);
        if (k == v->n) {
            printf("  %s: pid %llu missing\n", what, (cli_ull)p->pid[i]);
            continue;
        }
        stats_of_pid(p->root, p->pid[i], &calls, &events);
        CHECK_EQ(i == 0 ? 12 : 3, calls);
        CHECK_EQ(calls, v->begins[k]);
        CHECK_EQ(calls, v->ends[k]);
        CHECK_EQ(1, v->process_names[k]);
        CHECK_EQ(i == 0 ? 2 : 1, v->thread_names[k]);
        CHECK_EQ(i == 0 ? 0 : 3, v->child_named[k]); /* names are per process */
    }
}

static void test_export_processes(void) {
    procs p;
    proc_view v;
    run_result o;
    char out[1200], pid_text[2][24], *text;
    uint8_t *data;
    size_t len;
    uint64_t calls, events;
    pqd_file f;
    if (!make_procs(&p)) return;
    snprintf(pid_text[0], sizeof pid_text[0], "%llu", (cli_ull)p.pid[0]);
    snprintf(pid_text[1], sizeof pid_text[1], "%llu", (cli_ull)p.pid[1]);

    /* chrome: both processes, to a file */
    snprintf(out, sizeof out, "%s/../procs.json", p.root);
    o = run(cli_main, "export", "--format", "chrome", "-o", out, p.root, (const char *)NULL);
    CHECK_EQ(0, o.status);
    CHECK(o.err[0] == '\0');
    run_free(&o);
    text = read_file(out, &len);
    CHECK(text != NULL);
    if (text) {
        pv_chrome(&v, text, len);
        check_procs_view(&v, &p, "chrome");
        free(text);
    }

    /* perfetto: a sequence and a track group per process */
    snprintf(out, sizeof out, "%s/../procs.pftrace", p.root);
    o = run(cli_main, "export", "--format", "perfetto", "-o", out, p.root, (const char *)NULL);
    CHECK_EQ(0, o.status);
    run_free(&o);
    data = (uint8_t *)read_file(out, &len);
    CHECK(data != NULL);
    if (data) {
        pv_perfetto(&v, data, len, 2);
        check_procs_view(&v, &p, "perfetto");
        free(data);
    }

    /* parquet: both tables hold both processes, told apart by pid */
    if (pq_export(p.root, "slices", &f)) {
        int64_t rows[2] = {0, 0};
        size_t r;
        for (r = 0; r < (size_t)f.num_rows; r++) {
            CHECK(f.ints[0][r] == (int64_t)p.pid[0] || f.ints[0][r] == (int64_t)p.pid[1]);
            rows[f.ints[0][r] == (int64_t)p.pid[1]]++;
            if (f.ints[0][r] == (int64_t)p.pid[1]) CHECK(memcmp(f.bytes[PQ_NAME][r].p, "child_", 6) == 0);
            else CHECK(f.bytes[PQ_NAME][r].len < 6 || memcmp(f.bytes[PQ_NAME][r].p, "child_", 6) != 0);
        }
        CHECK_EQ(12, rows[0]);
        CHECK_EQ(3, rows[1]);
        pqd_close(&f);
    }
    if (pq_export(p.root, "events", &f)) {
        int64_t rows[2] = {0, 0};
        size_t r;
        for (r = 0; r < (size_t)f.num_rows; r++) rows[f.ints[0][r] == (int64_t)p.pid[1]]++;
        stats_of_pid(p.root, p.pid[0], &calls, &events);
        CHECK_EQ((int64_t)events, rows[0]);
        stats_of_pid(p.root, p.pid[1], &calls, &events);
        CHECK_EQ((int64_t)events, rows[1]);
        pqd_close(&f);
    }

    /* --pid still picks one process, in both viewer formats */
    CHECK_EQ(0, chrome_view(&v, p.root, "--pid", pid_text[1], NULL, NULL));
    CHECK_EQ(1, v.n);
    CHECK(pv_has(&v, p.pid[1]));
    CHECK_EQ(3, pv_begins(&v, p.pid[1]));
    o = run(cli_main, "export", "--format", "perfetto", "--pid", pid_text[0], p.root,
            (const char *)NULL);
    CHECK_EQ(0, o.status);
    pv_perfetto(&v, (const uint8_t *)o.out, o.out_len, 1);
    CHECK_EQ(1, v.n);
    CHECK_EQ(12, pv_begins(&v, p.pid[0]));
    run_free(&o);

    /* --thread: thread numbers are per process, so it needs --pid */
    snprintf(out, sizeof out, "%s/../thread.json", p.root);
    o = run(cli_main, "export", "--format", "chrome", "--thread", "0", "-o", out, p.root,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK(strstr(o.err, "--pid") != NULL);
    CHECK(strstr(o.err, p.dir[1]) != NULL); /* the processes are listed */
    CHECK(!cli_exists(out));
    run_free(&o);
    CHECK_EQ(0, chrome_view(&v, p.root, "--pid", pid_text[0], "--thread", "1"));
    CHECK_EQ(1, v.n);
    CHECK_EQ(6, pv_begins(&v, p.pid[0]));
    CHECK_EQ(1, v.tid_count[0]);
    CHECK_EQ(7002, v.tids[0][0]);

    /* "+T" counts from the session's first event (the parent's, at T0), not each
     * process's own: +5us leaves the parent (done by T0 + 4us) nothing, the child all */
    CHECK_EQ(0, chrome_view(&v, p.root, "--from", "+5us", NULL, NULL));
    CHECK_EQ(2, v.n);
    CHECK_EQ(0, pv_begins(&v, p.pid[0]));
    CHECK_EQ(3, pv_begins(&v, p.pid[1]));
    CHECK_EQ(0, chrome_view(&v, p.root, "--to", "+10200ns", NULL, NULL));
    CHECK_EQ(12, pv_begins(&v, p.pid[0]));
    CHECK_EQ(2, pv_begins(&v, p.pid[1])); /* child_main and the first child_a */

    /* --function: each process's own name; a process without it shows no calls */
    CHECK_EQ(0, chrome_view(&v, p.root, "--function", "child_a", NULL, NULL));
    CHECK_EQ(2, v.n);
    CHECK_EQ(0, pv_begins(&v, p.pid[0]));
    CHECK_EQ(2, pv_begins(&v, p.pid[1]));
    CHECK_EQ(0, chrome_view(&v, p.root, "--function", "recurse", NULL, NULL));
    CHECK_EQ(2, pv_begins(&v, p.pid[0]));
    CHECK_EQ(0, pv_begins(&v, p.pid[1]));
    o = run(cli_main, "export", "--format", "chrome", "--function", "nowhere", p.root,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK(o.out_len == 0);
    CHECK(strstr(o.err, "nowhere") != NULL);
    run_free(&o);
    o = run(cli_main, "export", "--format", "chrome", "--clock", "no_such_anchor", p.root,
            (const char *)NULL);
    CHECK_EQ(2, o.status);
    CHECK(o.out_len == 0); /* refused before anything is written */
    run_free(&o);

    /* a copied pid_* directory (its manifest names the child's pid): a process of its
     * own, by its directory's pid */
    {
        char copy[1200], cmd[2600];
        snprintf(copy, sizeof copy, "%s/pid_1", p.root);
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", p.dir[1], copy);
        CHECK_EQ(0, system(cmd));
        CHECK_EQ(0, chrome_view(&v, p.root, NULL, NULL, NULL, NULL));
        CHECK_EQ(3, v.n);
        CHECK_EQ(12, pv_begins(&v, p.pid[0]));
        CHECK_EQ(3, pv_begins(&v, p.pid[1]));
        CHECK_EQ(3, pv_begins(&v, 1));
        o = run(cli_main, "export", "--format", "perfetto", p.root, (const char *)NULL);
        CHECK_EQ(0, o.status);
        pv_perfetto(&v, (const uint8_t *)o.out, o.out_len, 3);
        CHECK_EQ(3, v.n);
        CHECK_EQ(3, pv_begins(&v, 1));
        CHECK_EQ(3, pv_begins(&v, p.pid[1]));
        run_free(&o);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", copy);
        CHECK_EQ(0, system(cmd));
    }

    /* a damaged process is named, the other still exported whole: exit status 1 */
    {
        char index[1200];
        FILE *fp;
        snprintf(index, sizeof index, "%s/thread_0/index.atf", p.dir[1]);
        fp = fopen(index, "wb");
        CHECK(fp != NULL);
        if (fp) {
            fwrite("ATI2", 1, 4, fp);
            fclose(fp);
        }
        snprintf(out, sizeof out, "%s/../damaged.json", p.root);
        o = run(cli_main, "export", "--format", "chrome", "-o", out, p.root, (const char *)NULL);
        CHECK_EQ(1, o.status);
        CHECK(strstr(o.err, p.dir[1]) != NULL);
        run_free(&o);
        text = read_file(out, &len);
        CHECK(text != NULL);
        if (text) {
            pv_chrome(&v, text, len);
            CHECK_EQ(12, pv_begins(&v, p.pid[0]));
            CHECK(!pv_has(&v, p.pid[1]));
            free(text);
        }
        o = run(cli_main, "export", "--format", "perfetto", p.root, (const char *)NULL);
        CHECK_EQ(1, o.status);
        pv_perfetto(&v, (const uint8_t *)o.out, o.out_len, 1);
        CHECK_EQ(1, v.n);
        CHECK_EQ(12, pv_begins(&v, p.pid[0]));
        run_free(&o);
    }
}

/* A real forking program (tests/programs/forks.c: a parent, two children, a
 * grandchild), recorded with `atf record` when make test built it (ATF and BUILD set;
 * not under the sanitizers, where a fork can hang in the child: see
 * tests/instrument_checks.sh), exported whole: each process's slices equal its stats. */
static void test_export_forks_recorded(void) {
    const char *atf = getenv("ATF"), *build = getenv("BUILD");
    char prog[1024], so[1024], out_dir[1024], cmd[4096], session[1024], **pids = NULL;
    size_t npids = 0, i;
    run_result o;
    proc_view chrome, perfetto;
    int status;
    if (!atf || !build || getenv("ATF_CHECKS_SANITIZED")) {
        printf("  export_forks_recorded: skipped (no ATF and BUILD, or sanitized)\n");
        return;
    }
    snprintf(prog, sizeof prog, "%s/programs/forks_hooked", build);
    snprintf(so, sizeof so, "%s/libatf_instrument.so", build);
    if (!cli_is_file(atf) || !cli_is_file(prog) || !cli_is_file(so)) {
        printf("  export_forks_recorded: skipped (%s, %s or %s not built)\n", atf, prog, so);
        return;
    }
    snprintf(out_dir, sizeof out_dir, "%s/forks", g_root);
    snprintf(cmd, sizeof cmd, "'%s' record --output '%s' -- '%s' >/dev/null 2>&1", atf, out_dir,
             prog);
    status = system(cmd);
    CHECK_EQ(0, status);
    if (status != 0) return;
    { /* the one session_* directory record made */
        char line[1024];
        FILE *ls;
        snprintf(cmd, sizeof cmd, "ls -d '%s'/session_*", out_dir);
        ls = popen(cmd, "r");
        CHECK(ls != NULL);
        if (!ls) return;
        if (!fgets(line, sizeof line, ls)) line[0] = '\0';
        pclose(ls);
        line[strcspn(line, "\n")] = '\0';
        snprintf(session, sizeof session, "%s", line);
    }
    CHECK_EQ(0, cli_pid_dirs(session, &pids, &npids));
    CHECK_EQ(4, npids);
    o = run(cli_main, "export", "--format", "chrome", session, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pv_chrome(&chrome, o.out, o.out_len);
    run_free(&o);
    o = run(cli_main, "export", "--format", "perfetto", session, (const char *)NULL);
    CHECK_EQ(0, o.status);
    pv_perfetto(&perfetto, (const uint8_t *)o.out, o.out_len, PROCS_MAX);
    run_free(&o);
    CHECK_EQ(npids, chrome.n);
    CHECK_EQ(npids, perfetto.n);
    for (i = 0; i < npids; i++) {
        uint64_t pid = strtoull(strrchr(pids[i], '/') + 5, NULL, 10), calls, events; /* pid_N */
        stats_of_pid(session, pid, &calls, &events);
        CHECK(calls > 0);
        CHECK(pv_has(&chrome, pid));
        CHECK_EQ(calls, pv_begins(&chrome, pid));
        CHECK(pv_has(&perfetto, pid));
        CHECK_EQ(calls, pv_begins(&perfetto, pid));
    }
    cli_pid_dirs_free(pids, npids);
}
#endif

static const test_case tests[] = {
    {"export_chrome", test_export_chrome},
    {"export_perfetto", test_export_perfetto},
    {"export_parquet", test_export_parquet},
    {"export_detail", test_export_detail},
    {"export_chrome_unchanged", test_export_chrome_unchanged},
    {"export_names", test_export_names},
    {"export_folded", test_export_folded},
    {"empty", test_empty},
#if !defined(_WIN32)
    {"export_processes", test_export_processes},
    {"export_forks_recorded", test_export_forks_recorded},
#endif
};

CLI_TRACES_MAIN("export", tests)
