/* test_overflow.c - what a full ring does, and the gaps that record every loss.
 *
 * Each writer here is driven by a model that knows, from the result of every push
 * (ATF_OK or ATF_E_FULL), which events went into the ring and which were lost, so the
 * files can be checked exactly: index.atf holds the kept events in order, and gaps.atf
 * holds one gap per run of lost events, at the index position of the first event after
 * it (the event count for a run at the end), with the number of index events and of
 * detail records lost, the reason and the stamp of the first lost event.
 *   - ATF_OVERFLOW_DROP: a session in manual drain mode with 64-slot rings, writers on
 *     caller memory and the session's own writer, fed in bursts of uneven length with a
 *     pump now and then; layout 1 without detail and layout 2 with detail ALWAYS; then
 *     the merge, unfiltered and with a kind filter, hands out a gap with exactly the
 *     first event after it. The ring's gap queue full: the event after the gap is
 *     dropped too, and the gap grows.
 *   - ATF_OVERFLOW_BLOCK (the default): a session writer with tiny rings and no pump
 *     drains itself: every event and detail record persisted, waits counted, no gap.
 *     A writer on caller memory with a consumer thread: nothing lost either.
 *   - BLOCK (and DROP) with index.atf failing (RLIMIT_FSIZE, EFBIG) in a child process:
 *     no push ever hangs, the events on disk are kept, written + lost_io + dropped =
 *     produced and an ATF_GAP_IO gap at the end accounts for the lost ones.
 *   - BLOCK on caller memory with a consumer that never drains: one timeout, then drops
 *     at once until the consumer moves; gaps with reason ATF_GAP_TIMEOUT.
 * No check depends on the machine's speed beyond generous bounds (a push that should not
 * wait at all returns within seconds). The RLIMIT_FSIZE tests are POSIX only (skipped on
 * Windows, where the rest runs). */
#include "atf.h"
#include "tests/harness.h"
#include "tests/rec_util.h"

#include <sys/stat.h>
#include <unistd.h>
#include "tests/posix_compat.h"
#include "tests/scratch_dir.h"

#if !defined(_WIN32)
#  include <errno.h>
#  include <signal.h>
#  include <sys/resource.h>
#  include <sys/types.h>
#  include <sys/wait.h>
#endif
#if !defined(ATF_NO_THREADS)
#  include <pthread.h>
#  include <sched.h>
#endif

static char tmp_dir[512];

/* ---- the model: what one writer pushed, kept and lost --------------------------------- */

typedef struct ov_gap {
    uint64_t index_seq, index_lost, detail_lost, first_ns;
    uint32_t reason;
} ov_gap;

typedef struct ov_model {
    uint32_t tag;                /* in the function ids: (tag + 1) << 40 | event number */
    uint64_t pushed;             /* events pushed so far: the next event number */
    uint64_t kept;               /* accepted by a push: index positions 0 .. kept - 1 */
    uint64_t dropped;            /* refused with ATF_E_FULL */
    uint64_t *kept_id, *kept_ts; /* event number and stamp of each kept event */
    uint8_t *kept_detail;        /* it was pushed with a payload */
    size_t cap;
    ov_gap *gaps;
    size_t gap_count, gap_cap;
    ov_gap open;                 /* the run of lost events not closed yet (index_lost 0: none) */
} ov_model;

static int model_init(ov_model *m, uint32_t tag, size_t cap) {
    memset(m, 0, sizeof *m);
    m->tag = tag;
    m->cap = cap;
    m->kept_id = (uint64_t *)malloc(cap * sizeof *m->kept_id);
    m->kept_ts = (uint64_t *)malloc(cap * sizeof *m->kept_ts);
    m->kept_detail = (uint8_t *)calloc(cap, 1);
    m->gap_cap = 64;
    m->gaps = (ov_gap *)malloc(m->gap_cap * sizeof *m->gaps);
    return m->kept_id && m->kept_ts && m->kept_detail && m->gaps;
}

static void model_free(ov_model *m) {
    free(m->kept_id);
    free(m->kept_ts);
    free(m->kept_detail);
    free(m->gaps);
    memset(m, 0, sizeof *m);
}

static void model_add_gap(ov_model *m, const ov_gap *g) {
    if (m->gap_count == m->gap_cap) {
        ov_gap *p = (ov_gap *)realloc(m->gaps, 2 * m->gap_cap * sizeof *m->gaps);
        if (!p) {
            CHECK(p != NULL);
            return;
        }
        m->gaps = p;
        m->gap_cap *= 2;
    }
    m->gaps[m->gap_count++] = *g;
}

static uint64_t model_fid(const ov_model *m, uint64_t id) { return ((uint64_t)(m->tag + 1u) << 40) | id; }

/* The result of pushing event m->pushed (stamp ts, with a payload or not); `reason` is
 * the gap reason a loss here opens with. */
static void model_result(ov_model *m, atf_result rc, uint64_t ts, int detail, uint32_t reason) {
    uint64_t id = m->pushed++;
    if (rc == ATF_OK) {
        if (m->open.index_lost) {
            m->open.index_seq = m->kept;
            model_add_gap(m, &m->open);
            memset(&m->open, 0, sizeof m->open);
        }
        if (m->kept < m->cap) {
            m->kept_id[m->kept] = id;
            m->kept_ts[m->kept] = ts;
            m->kept_detail[m->kept] = (uint8_t)(detail != 0);
        }
        m->kept++;
        return;
    }
    CHECK_RESULT(ATF_E_FULL, rc);
    if (!m->open.index_lost) {
        m->open.first_ns = ts;
        m->open.reason = reason;
    }
    m->open.index_lost++;
    m->open.detail_lost += (uint64_t)(detail != 0);
    m->dropped++;
}

/* The producer is done: a run still open is the gap at the end. */
static void model_end(ov_model *m) {
    if (!m->open.index_lost) return;
    m->open.index_seq = m->kept;
    model_add_gap(m, &m->open);
    memset(&m->open, 0, sizeof m->open);
}

/* Pushes the model's next event on w: a call (even numbers) or a return (odd), with a
 * payload naming it when `detail` (16 + id % 97 bytes). Returns the push result. */
static atf_result ov_push(atf_producer *w, ov_model *m, uint64_t ts, int detail, uint32_t reason) {
    uint64_t id = m->pushed, fid = model_fid(m, id);
    int call = (id & 1u) == 0;
    atf_result rc;
    if (detail) {
        uint8_t payload[16 + 97];
        size_t len = 16 + (size_t)(id % 97), i;
        atf__store_le64(payload, id);
        atf__store_le64(payload + 8, fid);
        for (i = 16; i < len; i++) payload[i] = (uint8_t)(id * 7u + i);
        rc = atf_producer_event_detail(w, call ? (uint32_t)ATF_EVENT_CALL : (uint32_t)ATF_EVENT_RETURN,
                                     fid, ts,
                                     (uint16_t)(call ? ATF_DETAIL_FUNCTION_CALL : ATF_DETAIL_FUNCTION_RETURN),
                                     payload, len);
    } else if (call) {
        rc = atf_producer_call(w, fid, ts);
    } else {
        rc = atf_producer_return(w, fid, ts);
    }
    model_result(m, rc, ts, detail, reason);
    return rc;
}

static void check_gap(const ov_gap *want, const atf_gap *found, const char *what, size_t i) {
    if (want->index_seq == found->index_seq && want->index_lost == found->index_lost &&
        want->detail_lost == found->detail_lost && want->reason == found->reason &&
        want->first_ns == found->first_lost_ns)
        return;
    printf("  %s: gap %zu: expected at %llu lost %llu detail %llu %s first %llu; found at %llu "
           "lost %llu detail %llu %s first %llu\n", what, i, (unsigned long long)want->index_seq,
           (unsigned long long)want->index_lost, (unsigned long long)want->detail_lost,
           atf_gap_reason_str(want->reason), (unsigned long long)want->first_ns,
           (unsigned long long)found->index_seq, (unsigned long long)found->index_lost,
           (unsigned long long)found->detail_lost, atf_gap_reason_str(found->reason),
           (unsigned long long)found->first_lost_ns);
    CHECK(0);
}

/* Index event j of tr is kept event j of the model (function, stamp, kind, depth). */
static int check_event(const atf_thread_reader *tr, const ov_model *m, uint64_t j,
                       atf_index_event *ev) {
    uint64_t id = m->kept_id[j];
    uint32_t kind = (id & 1u) ? (uint32_t)ATF_EVENT_RETURN : (uint32_t)ATF_EVENT_CALL;
    if (atf_index_reader_get(&tr->index, j, ev) == ATF_OK && ev->function_id == model_fid(m, id) &&
        ev->timestamp_ns == m->kept_ts[j] && ev->kind == kind &&
        (tr->index.layout != ATF_LAYOUT_1 || ev->call_depth == 0))
        return 1;
    printf("  writer %u: index event %llu: fid 0x%llx ts %llu kind %u depth %u; expected event "
           "%llu (fid 0x%llx ts %llu kind %u depth 0)\n", m->tag, (unsigned long long)j,
           (unsigned long long)ev->function_id, (unsigned long long)ev->timestamp_ns, ev->kind,
           ev->call_depth, (unsigned long long)id, (unsigned long long)model_fid(m, id),
           (unsigned long long)m->kept_ts[j], kind);
    CHECK(0);
    return 0;
}

/* Checks an opened thread against the model: the kept events in order, every gap exact
 * (position, counts, reason, stamp), gap_before at every position, detail links. Returns
 * the detail records linked. */
static uint64_t check_thread(const atf_thread_reader *tr, const ov_model *m, const char *what) {
    uint64_t j, linked = 0, lost = 0;
    size_t g = 0, i;
    CHECK_EQ(m->kept, tr->index.event_count);
    CHECK(m->kept <= m->cap);
    if (tr->index.event_count != m->kept || m->kept > m->cap) return 0;
    for (j = 0; j < m->kept; j++) {
        atf_index_event ev;
        if (!check_event(tr, m, j, &ev)) break;
        if (ev.detail_seq != ATF_NO_DETAIL) {
            atf_detail_event de;
            linked++;
            CHECK(m->kept_detail[j]);
            CHECK_RESULT(ATF_OK, atf_thread_reader_detail_of(tr, j, &de));
            CHECK_EQ(16 + m->kept_id[j] % 97, de.payload_len);
            if (de.payload_len >= 16) CHECK_EQ(m->kept_id[j], atf__load_le64(de.payload));
        }
    }
    CHECK_EQ(m->gap_count, tr->gap_count);
    for (i = 0; i < m->gap_count && i < tr->gap_count; i++) {
        check_gap(&m->gaps[i], &tr->gaps[i], what, i);
        lost += m->gaps[i].index_lost;
    }
    CHECK_EQ(m->dropped, lost);
    CHECK_EQ(m->dropped, tr->events_lost);
    /* gap_before: the model's gap at every position that has one, NULL elsewhere */
    for (j = 0; j <= m->kept; j++) {
        const atf_gap *found = atf_thread_reader_gap_before(tr, j);
        if (g < m->gap_count && m->gaps[g].index_seq == j) {
            CHECK(found != NULL);
            if (found) check_gap(&m->gaps[g], found, what, g);
            g++;
        } else if (found) {
            printf("  %s: gap_before(%llu) found a gap the model does not have\n", what,
                   (unsigned long long)j);
            CHECK(0);
        }
        if (harness__failures_in_test > 20) break;
    }
    return linked;
}

/* Kept events pushed with a payload. */
static uint64_t model_kept_detail(const ov_model *m) {
    uint64_t j, n = 0;
    for (j = 0; j < m->kept && j < m->cap; j++) n += m->kept_detail[j];
    return n;
}

/* Memory aligned to 64 bytes for a ring: the block to free in *raw. */
static void *alloc_ring(size_t size, void **raw) {
    uint8_t *p = (uint8_t *)malloc(size + 64);
    *raw = p;
    if (!p) return NULL;
    return p + (64 - ((uintptr_t)p & 63u));
}

static int file_exists_in(const char *dir, const char *leaf) {
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    return path_exists(path);
}

/* ---- ATF_OVERFLOW_DROP: exact gaps ------------------------------------------------------ */

#define DROP_REMOTE 5            /* writers on caller memory; one more is the session's own */
#define DROP_WRITERS (DROP_REMOTE + 1)
#define DROP_EVENTS 4000         /* per writer, before the final burst */
#define DROP_FINAL 100           /* the final burst, no pump after it: trailing drops */

typedef struct drop_run {
    ov_model models[DROP_WRITERS];
    uint32_t slots[DROP_WRITERS];
    char dir[1024];
} drop_run;

/* Whether event `id` of a writer with a detail ring carries a payload. */
static int drop_detail(int has_ring, uint64_t id) { return has_ring && id % 3 == 0; }

/* Records a DROP session (layout, detail ALWAYS or off) into run; 1 when it was made. */
static int drop_record(drop_run *run, uint32_t layout, int detail, const char *name) {
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64);
    size_t dsz = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    void *iraw[DROP_REMOTE], *draw[DROP_REMOTE];
    atf_producer remote[DROP_REMOTE], *w[DROP_WRITERS];
    int has_ring[DROP_WRITERS];
    atf_session_config cfg;
    atf_session *s = NULL;
    uint64_t ts = 1000, rng = 99, round = 0;
    uint32_t k;
    int ok = 0;
    memset(iraw, 0, sizeof iraw);
    memset(draw, 0, sizeof draw);
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = layout;
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.overflow = ATF_OVERFLOW_DROP;
    cfg.index_ring_events = 64;
    cfg.detail_mode = detail ? (uint32_t)ATF_DETAIL_ALWAYS : (uint32_t)ATF_DETAIL_OFF;
    cfg.detail_ring_bytes = 4096;
    cfg.max_threads = 16;
    cfg.session_name = name;
    for (k = 0; k < DROP_WRITERS; k++)
        if (!model_init(&run->models[k], k, DROP_EVENTS + DROP_FINAL)) goto done;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, tmp_dir, &cfg));
    if (!s) goto done;
    snprintf(run->dir, sizeof run->dir, "%s", atf_session_path(s));
    for (k = 0; k < DROP_REMOTE; k++) {
        void *imem = alloc_ring(isz, &iraw[k]), *dmem = alloc_ring(dsz, &draw[k]);
        int ring = detail && (k & 1u) == 0;
        char nm[32];
        CHECK(imem && dmem);
        if (!imem || !dmem) goto done;
        CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, layout, 7000 + k));
        CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, layout, 7000 + k));
        snprintf(nm, sizeof nm, "remote-%u", k);
        CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, imem, isz, ring ? dmem : NULL,
                                                      ring ? dsz : 0, nm, &run->slots[k]));
        CHECK_RESULT(ATF_OK, atf_producer_init(&remote[k], imem, isz, ring ? dmem : NULL,
                                             ring ? dsz : 0, ATF_DETAIL_ALWAYS));
        CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&remote[k], ATF_OVERFLOW_DROP, 0));
        w[k] = &remote[k];
        has_ring[k] = ring;
    }
    /* the session's own writer for this thread: the session's policy (DROP) */
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "main", &w[DROP_REMOTE]));
    if (harness__failures_in_test || !w[DROP_REMOTE]) goto done;
    CHECK_EQ(ATF_OVERFLOW_DROP, w[DROP_REMOTE]->overflow);
    run->slots[DROP_REMOTE] = w[DROP_REMOTE]->slot;
    has_ring[DROP_REMOTE] = detail;
    /* bursts of 1..150 events per writer in turn, a pump after about one round in three */
    for (;;) {
        int more = 0;
        for (k = 0; k < DROP_WRITERS; k++) {
            ov_model *m = &run->models[k];
            uint64_t burst = 1 + gen_hash(k, round) % 150, b;
            for (b = 0; b < burst && m->pushed < DROP_EVENTS; b++) {
                ts += 3;
                ov_push(w[k], m, ts, drop_detail(has_ring[k], m->pushed), ATF_GAP_DROPPED);
            }
            more |= m->pushed < DROP_EVENTS;
        }
        round++;
        if (gen_hash(77, rng++) % 3 == 0) CHECK_RESULT(ATF_OK, atf_session_pump(s));
        if (!more) break;
    }
    /* a pump, then more events than a ring holds: every writer ends inside a gap */
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    for (k = 0; k < DROP_WRITERS; k++) {
        ov_model *m = &run->models[k];
        while (m->pushed < DROP_EVENTS + DROP_FINAL) {
            ts += 3;
            ov_push(w[k], m, ts, drop_detail(has_ring[k], m->pushed), ATF_GAP_DROPPED);
        }
        model_end(m);
        CHECK_EQ(m->dropped, w[k]->dropped);
        CHECK(m->gap_count > 2);
        CHECK_EQ(m->kept, m->gap_count ? m->gaps[m->gap_count - 1].index_seq : 0);
    }
    for (k = 0; k < DROP_REMOTE; k++) atf_producer_close(&remote[k]);
    {
        atf_thread_stats st;
        CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, run->slots[DROP_REMOTE], &st));
        CHECK_EQ(run->models[DROP_REMOTE].dropped, st.events_dropped);
        CHECK_EQ(DROP_EVENTS + DROP_FINAL, st.events_pushed + st.events_dropped);
        CHECK_EQ(0, st.waits);
        CHECK_EQ(0, st.paused_ns); /* drop never pauses */
    }
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    s = NULL;
    ok = !harness__failures_in_test;
done:
    if (s) atf_session_close(s);
    for (k = 0; k < DROP_REMOTE; k++) {
        free(iraw[k]);
        free(draw[k]);
    }
    return ok;
}

/* Every thread of the run read back against its model, files and manifest. */
static void drop_check_files(drop_run *run, int detail) {
    atf_session_reader r;
    uint32_t k;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, run->dir, NULL));
    if (r.thread_count == 0) return;
    CHECK_EQ(DROP_WRITERS, r.thread_count);
    for (k = 0; k < DROP_WRITERS; k++) {
        const ov_model *m = &run->models[k];
        atf_session_thread *t = atf_session_reader_thread(&r, run->slots[k]);
        char what[64];
        uint64_t linked;
        snprintf(what, sizeof what, "writer %u (slot %u)", k, run->slots[k]);
        CHECK(t != NULL);
        if (!t) continue;
        CHECK_RESULT(ATF_OK, t->open_result);
        if (t->open_result != ATF_OK) continue;
        linked = check_thread(&t->reader, m, what);
        CHECK_EQ(ATF_COUNT_FINALIZED, t->reader.index.counted);
        CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&t->reader.index));
        if (t->reader.has_detail) CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&t->reader));
        /* the manifest's figures */
        CHECK(t->manifest_finalized);
        CHECK_EQ(m->kept, t->events_written);
        CHECK_EQ(m->dropped, t->events_dropped);
        CHECK_EQ(m->gap_count, t->gaps);
        CHECK_EQ(0, t->events_lost_io);
        CHECK_EQ(0, t->waits);
        CHECK_EQ(0, t->paused_ns);
        CHECK_EQ(0, t->timeouts);
        CHECK_EQ(linked, t->detail_written);
        /* a kept event with a payload has its record or is counted as detail dropped */
        CHECK_EQ(model_kept_detail(m), t->detail_written + t->detail_dropped);
        if (!detail) CHECK_EQ(0, linked);
        if (harness__failures_in_test) break;
    }
    atf_session_reader_close(&r);
}

/* The merge over the run: each event handed out carries the last gap of its thread in
 * (the previous event of that thread handed out, this one], NULL when there is none: so
 * with every kind each gap comes with the event right after it, and with a kind filter
 * with the first event after it that passes. */
static void drop_check_merge(drop_run *run, uint32_t kinds) {
    atf_session_reader r;
    atf_merge_filter f;
    atf_merge m;
    atf_merge_item it;
    uint64_t handed[DROP_WRITERS], last_ts = 0, reported = 0, expected_reports = 0, moved_on = 0;
    size_t next_gap[DROP_WRITERS];
    int gap_pending[DROP_WRITERS];
    uint32_t k;
    memset(handed, 0, sizeof handed);
    memset(next_gap, 0, sizeof next_gap);
    memset(gap_pending, 0, sizeof gap_pending);
    memset(&f, 0, sizeof f);
    f.kinds = kinds;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, run->dir, NULL));
    if (r.thread_count == 0) return;
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, &f));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        const ov_model *mo = NULL;
        const ov_gap *want = NULL;
        for (k = 0; k < DROP_WRITERS; k++)
            if (run->slots[k] == it.slot) mo = &run->models[k];
        CHECK(mo != NULL);
        if (!mo) break;
        k = mo->tag;
        CHECK(it.event.timestamp_ns >= last_ts);
        last_ts = it.event.timestamp_ns;
        CHECK(it.seq < mo->kept);
        if (it.seq >= mo->kept) break;
        CHECK_EQ(model_fid(mo, mo->kept_id[it.seq]), it.event.function_id);
        if (kinds) CHECK(kinds & (1u << it.event.kind));
        while (next_gap[k] < mo->gap_count && mo->gaps[next_gap[k]].index_seq <= it.seq)
            want = &mo->gaps[next_gap[k]++];
        if (want) expected_reports++;
        if (!want && it.gap) {
            printf("  merge: slot %u event %llu: a gap the model does not have before it\n",
                   it.slot, (unsigned long long)it.seq);
            CHECK(0);
        } else if (want && !it.gap) {
            printf("  merge: slot %u event %llu: no gap, the model's is at %llu\n", it.slot,
                   (unsigned long long)it.seq, (unsigned long long)want->index_seq);
            CHECK(0);
        } else if (want) {
            check_gap(want, it.gap, "merge", next_gap[k] - 1);
            reported++;
            moved_on += want->index_seq != it.seq;
        }
        handed[k]++;
        if (harness__failures_in_test > 20) break;
    }
    atf_merge_deinit(&m);
    CHECK_EQ(expected_reports, reported);
    /* with a filter, some gaps came before an event it skipped: reported with a later one */
    if (kinds) CHECK(moved_on > 0);
    else CHECK_EQ(0, moved_on);
    for (k = 0; k < DROP_WRITERS; k++) {
        const ov_model *mo = &run->models[k];
        uint64_t want_events = 0, j, gaps_inside = 0;
        for (j = 0; j < mo->kept; j++)
            want_events += !kinds || (kinds & (1u << ((mo->kept_id[j] & 1u) ? ATF_EVENT_RETURN
                                                                            : ATF_EVENT_CALL)));
        CHECK_EQ(want_events, handed[k]);
        /* without a filter every gap but the one at the end comes with an event */
        for (j = 0; j < mo->gap_count; j++) gaps_inside += mo->gaps[j].index_seq < mo->kept;
        if (!kinds) CHECK_EQ(gaps_inside, next_gap[k]);
    }
    atf_session_reader_close(&r);
}

static void drop_case(uint32_t layout, int detail, const char *name) {
    drop_run *run = (drop_run *)calloc(1, sizeof *run);
    uint64_t gaps = 0, dropped = 0, produced = 0, detail_lost = 0;
    uint32_t k;
    CHECK(run != NULL);
    if (!run) return;
    if (drop_record(run, layout, detail, name)) {
        drop_check_files(run, detail);
        drop_check_merge(run, 0);
        /* calls only: every return is skipped, gaps before returns move to the next call */
        drop_check_merge(run, 1u << ATF_EVENT_CALL);
        drop_check_merge(run, 1u << ATF_EVENT_RETURN);
    }
    for (k = 0; k < DROP_WRITERS; k++) {
        size_t g;
        gaps += run->models[k].gap_count;
        dropped += run->models[k].dropped;
        produced += run->models[k].pushed;
        for (g = 0; g < run->models[k].gap_count; g++) detail_lost += run->models[k].gaps[g].detail_lost;
    }
    /* with detail, dropped events took their payloads with them, counted in the gaps */
    if (detail) CHECK(detail_lost > 0);
    else CHECK_EQ(0, detail_lost);
    printf("  %s: %u writers, %llu events produced, %llu dropped in %llu gaps (%llu detail "
           "records with them)\n", name, DROP_WRITERS, (unsigned long long)produced,
           (unsigned long long)dropped, (unsigned long long)gaps, (unsigned long long)detail_lost);
    for (k = 0; k < DROP_WRITERS; k++) model_free(&run->models[k]);
    if (!harness__failures_in_test) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
        remove_tree(path);
    } else {
        printf("  files kept in %s\n", run->dir);
    }
    free(run);
}

static void drop_layout1(void) { drop_case(ATF_LAYOUT_1, 0, "drop_l1"); }
static void drop_layout2_detail(void) { drop_case(ATF_LAYOUT_2, 1, "drop_l2_detail"); }

/* The ring's gap queue full: a consumer (this test) that takes events but not gap
 * records. After eight gaps are queued the event after the next gap is dropped although
 * the ring has room, the gap grows, and once the records are taken it is published
 * whole. */
static void drop_gap_queue_full(void) {
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64);
    void *raw = NULL;
    void *mem = alloc_ring(isz, &raw);
    atf_ring_header *h = (atf_ring_header *)mem;
    atf_producer w;
    ov_model m;
    uint64_t ts = 500, i, taken = 0;
    size_t g;
    CHECK(mem != NULL);
    if (!mem || !model_init(&m, 0, 1024)) {
        free(raw);
        return;
    }
    CHECK_RESULT(ATF_OK, atf_ring_init(mem, isz, ATF_RING_INDEX, 64, ATF_LAYOUT_2, 1));
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, mem, isz, NULL, 0, ATF_DETAIL_OFF));
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0));
    for (i = 0; i < 64; i++) CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_DROPPED));
    /* twelve times: a drop (ring full), one slot freed, a push */
    for (i = 0; i < 12; i++) {
        CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_DROPPED));
        h->tail++;
        ov_push(&w, &m, ts += 10, 0, ATF_GAP_DROPPED);
        /* the first eight publish their gap; then the queue is full and the push drops */
        CHECK_EQ(i < ATF_RING_GAPS ? i + 1 : ATF_RING_GAPS, h->gap_head);
        CHECK_EQ(i < ATF_RING_GAPS ? 64 + i + 1 : 64 + ATF_RING_GAPS, m.kept);
    }
    CHECK(h->head - h->tail < 64); /* room in the ring, and still dropped */
    CHECK_EQ(m.dropped, h->dropped);
    /* the consumer takes the eight records: each the model's gap */
    model_end(&m); /* the open run, as the model's last gap, for the comparison below */
    CHECK_EQ(ATF_RING_GAPS + 1, m.gap_count);
    for (g = 0; g < ATF_RING_GAPS && g < m.gap_count; g++) {
        const atf_ring_gap *rg = &h->gaps[g];
        CHECK_EQ(m.gaps[g].index_seq, rg->seq);
        CHECK_EQ(m.gaps[g].index_lost, rg->index_lost);
        CHECK_EQ(ATF_GAP_DROPPED, rg->reason);
        CHECK_EQ(m.gaps[g].first_ns, rg->first_lost_ns);
        taken++;
    }
    h->gap_tail = taken;
    /* the grown gap: two events in each of the last four rounds, published with the next
     * event pushed */
    m.gap_count--;
    m.open = m.gaps[m.gap_count];
    m.open.index_seq = 0;
    CHECK_EQ(2 * (12 - ATF_RING_GAPS), m.open.index_lost);
    CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_DROPPED));
    CHECK_EQ(ATF_RING_GAPS + 1, h->gap_head);
    CHECK_EQ(ATF_RING_GAPS + 1, m.gap_count);
    if (m.gap_count == ATF_RING_GAPS + 1) {
        const atf_ring_gap *rg = &h->gaps[ATF_RING_GAPS % ATF_RING_GAPS];
        CHECK_EQ(m.gaps[ATF_RING_GAPS].index_seq, rg->seq);
        CHECK_EQ(64 + ATF_RING_GAPS, rg->seq);
        CHECK_EQ(m.gaps[ATF_RING_GAPS].index_lost, rg->index_lost);
        CHECK_EQ(m.gaps[ATF_RING_GAPS].first_ns, rg->first_lost_ns);
    }
    model_free(&m);
    free(raw);
}

/* ---- ATF_OVERFLOW_BLOCK: the writer drains itself ---------------------------------------- */

/* pauses.atf of a thread whose writer drained its own ring `waits` times in all: one
 * record per self-drain, in index_seq order within the events, each a real interval, and
 * together the manifest's paused_ns exactly (the same intervals). */
static void check_pauses(const atf_thread_reader *t, uint64_t paused_ns, uint64_t waits,
                         uint64_t events) {
    size_t i;
    uint64_t sum = 0;
    CHECK_RESULT(ATF_OK, t->error.code);
    CHECK(t->pause_count > 0 && t->pause_count <= waits);
    for (i = 0; i < t->pause_count; i++) {
        const atf_pause *p = &t->pauses[i];
        CHECK(p->index_seq >= 1 && p->index_seq <= events);
        CHECK(i == 0 || p->index_seq >= t->pauses[i - 1].index_seq);
        CHECK(p->start_ns <= p->end_ns);
        CHECK(i == 0 || p->start_ns >= t->pauses[i - 1].end_ns);
        CHECK_EQ(ATF_PAUSE_SELF_DRAIN, p->reason);
        sum += p->end_ns - p->start_ns;
    }
    CHECK_EQ(paused_ns, sum);
    CHECK_EQ(paused_ns, t->paused_ns);
}

/* One thread, manual drain, never pumped: 64-slot index ring and a 4 KiB detail ring that
 * fill again and again. Nothing is lost: the writer drained its own rings. */
static void block_case(uint32_t layout, int detail, const char *name) {
    enum { EVENTS = 30000 };
    atf_session_config cfg;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    atf_thread_stats st;
    atf_session_reader r;
    ov_model m;
    char dir[1024], tdir[1100];
    uint64_t i, linked = 0, paused_ns = 0;
    if (!model_init(&m, 3, EVENTS)) return;
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = layout;
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.index_ring_events = 64;
    cfg.detail_mode = detail ? (uint32_t)ATF_DETAIL_ALWAYS : (uint32_t)ATF_DETAIL_OFF;
    cfg.detail_ring_bytes = 4096;
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, tmp_dir, &cfg));
    if (!s) goto done;
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "main", &w));
    if (!w) goto done;
    CHECK_EQ(ATF_OVERFLOW_BLOCK, w->overflow);
    for (i = 0; i < EVENTS; i++) {
        atf_result rc = ov_push(w, &m, 1000 + 5 * i, detail && i % 3 != 1, ATF_GAP_DROPPED);
        if (rc != ATF_OK) {
            CHECK_RESULT(ATF_OK, rc);
            break;
        }
    }
    model_end(&m);
    CHECK_EQ(0, w->dropped);
    CHECK_EQ(0, w->detail_dropped);
    CHECK(w->waits > 0);
    CHECK_EQ(0, w->timeouts);
    CHECK_RESULT(ATF_OK, atf_session_thread_stats(s, w->slot, &st));
    CHECK(st.waits > 0);
    CHECK_EQ(w->waits, st.waits);
    CHECK(st.paused_ns > 0); /* the time those drains took, which the manifest keeps */
    paused_ns = st.paused_ns;
    CHECK_EQ(0, st.events_dropped);
    CHECK_EQ(0, st.timeouts);
    CHECK_EQ(EVENTS, st.events_pushed);
    CHECK(st.events_written + st.events_queued == EVENTS);
    CHECK(st.events_written >= EVENTS - 64); /* never pumped: the writer wrote them */
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    s = NULL;
    snprintf(tdir, sizeof tdir, "%s/thread_0", dir);
    CHECK(!file_exists_in(tdir, "gaps.atf"));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    if (r.thread_count == 1) {
        atf_session_thread *t = &r.threads[0];
        CHECK_RESULT(ATF_OK, t->open_result);
        if (t->open_result == ATF_OK) {
            linked = check_thread(&t->reader, &m, name);
            CHECK_EQ(0, t->reader.gap_count);
            CHECK_EQ(ATF_COUNT_FINALIZED, t->reader.index.counted);
            CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&t->reader.index));
            if (detail) CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&t->reader));
        }
        /* every detail record persisted too */
        CHECK_EQ(model_kept_detail(&m), linked);
        CHECK_EQ(linked, t->detail_written);
        CHECK_EQ(0, t->detail_dropped);
        CHECK_EQ(EVENTS, t->events_written);
        CHECK_EQ(0, t->events_dropped);
        CHECK_EQ(0, t->gaps);
        CHECK(t->waits > 0);
        CHECK(t->paused_ns >= paused_ns); /* close may have drained it once more */
        check_pauses(&t->reader, t->paused_ns, t->waits, EVENTS);
        CHECK_EQ(0, t->timeouts);
        printf("  %s: %d events, %llu detail records, %llu times the writer drained itself\n",
               name, EVENTS, (unsigned long long)linked, (unsigned long long)t->waits);
    }
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count) atf_session_reader_close(&r);
done:
    if (s) atf_session_close(s);
    model_free(&m);
    if (!harness__failures_in_test) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
        remove_tree(path);
    }
}

static void block_self_drain_l1(void) { block_case(ATF_LAYOUT_1, 0, "block_l1"); }
static void block_self_drain_l2_detail(void) { block_case(ATF_LAYOUT_2, 1, "block_l2_detail"); }

/* A manual-drain session named `name` in tmp_dir, consuming a 64-slot index ring in
 * caller memory `mem` through which writer w produces, BLOCK with `timeout_ns` (the
 * setting of a producer in another process). 0 on failure (reported). */
static int open_remote(atf_session **s, char *dir, size_t dir_cap, const char *name, void *mem,
                       size_t isz, uint32_t thread_id, atf_producer *w, uint64_t timeout_ns,
                       uint32_t *slot) {
    atf_session_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(s, tmp_dir, &cfg));
    if (!*s) return 0;
    snprintf(dir, dir_cap, "%s", atf_session_path(*s));
    CHECK_RESULT(ATF_OK, atf_ring_init(mem, isz, ATF_RING_INDEX, 64, ATF_LAYOUT_1, thread_id));
    /* the consumer attaches before the producer starts */
    CHECK_RESULT(ATF_OK, atf_session_attach_rings(*s, mem, isz, NULL, 0, "remote", slot));
    CHECK_RESULT(ATF_OK, atf_producer_init(w, mem, isz, NULL, 0, ATF_DETAIL_OFF));
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(w, ATF_OVERFLOW_BLOCK, timeout_ns));
    return !harness__failures_in_test;
}

/* The end of an open_remote test: the session closed (when open), the model and the
 * ring memory freed, and the session's files removed unless the test failed. */
static void close_remote(atf_session *s, ov_model *m, void *raw, const char *name) {
    if (s) atf_session_close(s);
    model_free(m);
    free(raw);
    if (!harness__failures_in_test) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
        remove_tree(path);
    }
}

#if !defined(ATF_NO_THREADS)
/* A writer on caller memory (BLOCK, a 10 s timeout never reached) and a consumer thread
 * that pumps the session: the writer waits for it; nothing is lost. */
typedef struct pump_arg {
    atf_session *s;
    int stop;
    atf_result rc;
} pump_arg;

static void *pump_main(void *arg) {
    pump_arg *a = (pump_arg *)arg;
    while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
        atf_result rc = atf_session_pump(a->s);
        if (rc != ATF_OK && a->rc == ATF_OK) a->rc = rc;
        sched_yield();
    }
    return NULL;
}

static void block_external_consumer(void) {
    enum { EVENTS = 50000 };
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64);
    void *raw = NULL;
    void *mem = alloc_ring(isz, &raw);
    atf_session *s = NULL;
    atf_producer w;
    ov_model m;
    pump_arg pa;
    pthread_t th;
    uint32_t slot = 0;
    uint64_t i;
    char dir[1024];
    int started = 0;
    CHECK(mem != NULL);
    if (!mem || !model_init(&m, 9, EVENTS)) {
        free(raw);
        return;
    }
    if (!open_remote(&s, dir, sizeof dir, "block_external", mem, isz, 4711, &w, 10000000000ull,
                     &slot))
        goto done;
    memset(&pa, 0, sizeof pa);
    pa.s = s;
    started = pthread_create(&th, NULL, pump_main, &pa) == 0;
    CHECK(started);
    if (!started) goto done;
    for (i = 0; i < EVENTS; i++) {
        atf_result rc = ov_push(&w, &m, 100 + i, 0, ATF_GAP_TIMEOUT);
        if (rc != ATF_OK) {
            CHECK_RESULT(ATF_OK, rc);
            break;
        }
    }
    model_end(&m);
    atf_producer_close(&w);
    __atomic_store_n(&pa.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK_RESULT(ATF_OK, pa.rc);
    CHECK_EQ(0, w.dropped);
    CHECK_EQ(0, w.timeouts);
    CHECK(w.waits > 0);
    CHECK_EQ(w.waits, ((atf_ring_header *)mem)->waits);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    s = NULL;
    {
        atf_session_reader r;
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
        if (r.thread_count == 1) {
            atf_session_thread *t = &r.threads[0];
            if (t->open_result == ATF_OK) check_thread(&t->reader, &m, "external consumer");
            CHECK_EQ(EVENTS, t->events_written);
            CHECK_EQ(0, t->events_dropped);
            CHECK_EQ(0, t->timeouts);
            CHECK(t->waits > 0);
            printf("  external consumer: %d events, the writer waited %llu times\n", EVENTS,
                   (unsigned long long)t->waits);
        }
        CHECK_EQ(1, r.thread_count);
        if (r.thread_count) atf_session_reader_close(&r);
    }
done:
    close_remote(s, &m, raw, "block_external");
}
#endif

/* ---- BLOCK on caller memory, a consumer that never drains: timeouts ------------------------ */

/* The first push that finds the ring full waits for the timeout (50 ms) and drops; the
 * following ones drop at once ("giving up") until the consumer moves; then the writer
 * waits again at the next full ring. Every run of lost events is a gap with reason
 * ATF_GAP_TIMEOUT, the one still open when the writer closes included. */
static void timeout_dead_consumer(void) {
    const uint64_t timeout = 50000000u, bound = 2000000000u;
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64);
    void *raw = NULL;
    void *mem = alloc_ring(isz, &raw);
    atf_ring_header *h = (atf_ring_header *)mem;
    atf_session *s = NULL;
    atf_session_reader r;
    atf_producer w;
    ov_model m;
    uint32_t slot = 0;
    uint64_t ts = 100, i, t0, dt, first_wait;
    char dir[1024];
    CHECK(mem != NULL);
    if (!mem || !model_init(&m, 5, 1024)) {
        free(raw);
        return;
    }
    /* the consumer does nothing for a while */
    if (!open_remote(&s, dir, sizeof dir, "timeout_dead", mem, isz, 4242, &w, timeout, &slot))
        goto done;
    CHECK_RESULT(ATF_E_ARG, atf_producer_set_overflow(&w, 2, timeout));
    if (harness__failures_in_test) goto done;
    for (i = 0; i < 64; i++) CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    CHECK_EQ(0, h->waits);

    /* the ring is full: one wait of about the timeout, then the event is dropped */
    t0 = atf_now_ns();
    CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    dt = atf_now_ns() - t0;
    CHECK(dt >= timeout / 2);
    CHECK(dt < bound);
    CHECK_EQ(1, h->timeouts);
    CHECK_EQ(1, w.timeouts);
    CHECK_EQ(1, h->waits);
    first_wait = dt;
    /* giving up: 200 more drop at once (waiting for each would take 10 s) */
    t0 = atf_now_ns();
    for (i = 0; i < 200; i++) CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    dt = atf_now_ns() - t0;
    CHECK(dt < bound);
    CHECK_EQ(1, h->timeouts);
    CHECK_EQ(201, h->dropped);
    CHECK_EQ(0, h->gap_head); /* the gap is still open */
    printf("  dead consumer: the first push into the full ring returned after %.1f ms (timeout "
           "50 ms), the next 200 in %.3f ms\n", (double)first_wait * 1e-6, (double)dt * 1e-6);

    /* the consumer moves: the writer pushes again, the first event after the gap
     * publishing it */
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    for (i = 0; i < 20; i++) CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    CHECK_EQ(1, h->gap_head);
    CHECK_EQ(ATF_GAP_TIMEOUT, h->gaps[0].reason);
    /* full again: the writer waits again (it stopped giving up once the tail moved) */
    for (i = 0; i < 44; i++) CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    t0 = atf_now_ns();
    CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    dt = atf_now_ns() - t0;
    CHECK(dt >= timeout / 2);
    CHECK(dt < bound);
    CHECK_EQ(2, h->timeouts);
    for (i = 0; i < 10; i++) CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    for (i = 0; i < 5; i++) CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    /* and a third time, the writer closing inside the gap */
    for (i = 0; i < 59; i++) CHECK_RESULT(ATF_OK, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    for (i = 0; i < 7; i++) CHECK_RESULT(ATF_E_FULL, ov_push(&w, &m, ts += 10, 0, ATF_GAP_TIMEOUT));
    CHECK_EQ(3, h->timeouts);
    CHECK_EQ(m.dropped, h->dropped);
    model_end(&m);
    atf_producer_close(&w);
    CHECK_EQ(3, m.gap_count);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    s = NULL;

    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    if (r.thread_count == 1) {
        atf_session_thread *t = &r.threads[0];
        CHECK_RESULT(ATF_OK, t->open_result);
        /* the gap still open when the writer closed is written by the drain at finalize,
         * from the ring header: with its reason, position, counts and first stamp */
        if (t->open_result == ATF_OK) check_thread(&t->reader, &m, "dead consumer");
        /* the gaps published by the writer carry the reason */
        CHECK(t->reader.gap_count == 3 && t->reader.gaps[0].reason == ATF_GAP_TIMEOUT &&
              t->reader.gaps[1].reason == ATF_GAP_TIMEOUT);
        CHECK_EQ(m.kept, t->events_written);
        CHECK_EQ(m.dropped, t->events_dropped);
        CHECK_EQ(3, t->timeouts);
        CHECK(t->waits >= 3);
        CHECK_EQ(3, t->gaps);
        CHECK_EQ(0, t->events_lost_io);
    }
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count) atf_session_reader_close(&r);
done:
    close_remote(s, &m, raw, "timeout_dead");
}

/* ---- index.atf failing (EFBIG) under both policies --------------------------------------- */
#if !defined(_WIN32)

#define IO_EVENTS 3000
#define IO_LIMIT_EVENTS 500      /* index events that fit under the file size limit */

typedef struct io_case {
    const char *name;
    uint32_t overflow, drain_mode;
} io_case;

/* Child: records IO_EVENTS events under RLIMIT_FSIZE (SIGXFSZ ignored) through a
 * 64-slot ring, timing every push; DROP pumps after 30 and 70 events in turn, BLOCK never
 * (the writer drains itself); close must report EFBIG. Writes what its model saw to
 * `report`: a line "produced kept dropped max_push_ns total_ns gaps", then one line per
 * gap. 0, or the step that went wrong. */
static int io_child(const io_case *c, const char *report) {
    atf_session_config cfg;
    atf_session *s = NULL;
    atf_producer *w = NULL;
    atf_error err;
    struct rlimit old, rl;
    ov_model m;
    uint64_t i, start, max_push = 0, total;
    size_t g;
    FILE *f;
    signal(SIGXFSZ, SIG_IGN);
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = ATF_LAYOUT_1;
    cfg.drain_mode = c->drain_mode;
    cfg.overflow = c->overflow;
    cfg.index_ring_events = 64;
    cfg.session_name = c->name;
    if (!model_init(&m, 0, IO_EVENTS)) return 10;
    if (atf_session_open(&s, tmp_dir, &cfg) != ATF_OK) return 11;
    if (atf_session_attach(s, "main", &w) != ATF_OK || !w) return 12;
    if (getrlimit(RLIMIT_FSIZE, &old) != 0) return 13;
    rl = old;
    rl.rlim_cur = ATF_HEADER_SIZE + IO_LIMIT_EVENTS * ATF_INDEX_EVENT_SIZE + 16;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 14;
    start = atf_now_ns();
    for (i = 0; i < IO_EVENTS; i++) {
        uint64_t t0 = atf_now_ns(), dt;
        ov_push(w, &m, 1000 + 10 * i, 0, ATF_GAP_DROPPED);
        dt = atf_now_ns() - t0;
        if (dt > max_push) max_push = dt;
        if (c->overflow == ATF_OVERFLOW_DROP && (i % 100 == 29 || i % 100 == 99))
            atf_session_pump(s); /* ATF_E_IO once the file failed */
    }
    total = atf_now_ns() - start;
    model_end(&m);
    if (c->overflow == ATF_OVERFLOW_BLOCK && m.dropped) return 20;
    if (atf_session_close_ex(s, &err) != ATF_E_IO) return 21;
    if (err.code != ATF_E_IO || err.sys_errno != EFBIG) return 26;
    if (setrlimit(RLIMIT_FSIZE, &old) != 0) return 22;
    if (harness__failures_in_test) return 23;
    f = fopen(report, "w");
    if (!f) return 24;
    fprintf(f, "%llu %llu %llu %llu %llu %llu\n", (unsigned long long)m.pushed,
            (unsigned long long)m.kept, (unsigned long long)m.dropped,
            (unsigned long long)max_push, (unsigned long long)total,
            (unsigned long long)m.gap_count);
    for (g = 0; g < m.gap_count; g++)
        fprintf(f, "%llu %llu %llu\n", (unsigned long long)m.gaps[g].index_seq,
                (unsigned long long)m.gaps[g].index_lost, (unsigned long long)m.gaps[g].first_ns);
    if (fclose(f) != 0) return 25;
    model_free(&m);
    return 0;
}

/* Reads the child's report back into a model (gaps, and the kept events they imply);
 * max push and total time in ns. 1 when it parsed. */
static int io_read_report(const char *path, ov_model *m, uint64_t *max_push, uint64_t *total) {
    char *text = read_text(path), *p;
    unsigned long long v[6];
    uint64_t g, j, id = 0;
    size_t next = 0;
    int ok = 0;
    if (!text) return 0;
    p = text;
    if (sscanf(p, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6 ||
        v[0] > IO_EVENTS || !model_init(m, 0, IO_EVENTS))
        goto out;
    m->pushed = v[0];
    m->kept = v[1];
    m->dropped = v[2];
    *max_push = v[3];
    *total = v[4];
    for (g = 0; g < v[5]; g++) {
        ov_gap gap;
        unsigned long long a, b, c;
        p = strchr(p, '\n');
        if (!p || sscanf(++p, "%llu %llu %llu", &a, &b, &c) != 3) goto out;
        memset(&gap, 0, sizeof gap);
        gap.index_seq = a;
        gap.index_lost = b;
        gap.first_ns = c;
        gap.reason = ATF_GAP_DROPPED;
        model_add_gap(m, &gap);
    }
    /* kept event j is event j + the events lost before it; stamped 1000 + 10 * id */
    for (j = 0; j < m->kept && j < m->cap; j++) {
        while (next < m->gap_count && m->gaps[next].index_seq == j) id += m->gaps[next++].index_lost;
        m->kept_id[j] = id;
        m->kept_ts[j] = 1000 + 10 * id;
        id++;
    }
    ok = 1;
out:
    free(text);
    return ok;
}

static void io_run(const io_case *c) {
    char report[700], root[700], pid_dir[800], tdir[900];
    atf_session_reader r;
    ov_model m;
    uint64_t max_push = 0, total = 0, n, lost_io, j, sum = 0;
    size_t g, i = 0;
    int status = 0;
    pid_t pid;
    snprintf(report, sizeof report, "%s/%s.report", tmp_dir, c->name);
    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0);
    if (pid < 0) return;
    if (pid == 0) _exit(io_child(c, report));
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    snprintf(root, sizeof root, "%s/%s", tmp_dir, c->name);
    snprintf(pid_dir, sizeof pid_dir, "%s/pid_%u", root, (unsigned)pid);
    snprintf(tdir, sizeof tdir, "%s/thread_0", pid_dir);
    if (harness__failures_in_test) return;
    CHECK(io_read_report(report, &m, &max_push, &total));
    if (harness__failures_in_test) return;
    /* never a hang: generous bounds (a wait for a consumer would be 1 s per push) */
    CHECK(max_push < 2000000000u);
    CHECK(total < 30000000000ull);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, pid_dir, NULL));
    if (r.thread_count != 1) {
        CHECK_EQ(1, r.thread_count);
        if (r.thread_count) atf_session_reader_close(&r);
        model_free(&m);
        return;
    }
    {
        atf_session_thread *t = &r.threads[0];
        const atf_thread_reader *tr = &t->reader;
        CHECK_RESULT(ATF_OK, t->open_result);
        n = tr->index.event_count;
        lost_io = t->events_lost_io;
        /* the events on disk are kept, in order, and they are all there is */
        CHECK(n > 0);
        CHECK(n <= IO_LIMIT_EVENTS);
        CHECK(n < m.kept);
        CHECK_EQ(0, tr->index.torn_bytes);
        for (j = 0; j < n && j < m.kept; j++) {
            atf_index_event ev;
            if (!check_event(tr, &m, j, &ev)) break;
        }
        /* exact counts: every produced event written, lost to the file, or dropped */
        CHECK_EQ(n, t->events_written);
        CHECK_EQ(m.kept - n, lost_io);
        CHECK_EQ(m.dropped, t->events_dropped);
        CHECK_EQ(m.pushed, n + lost_io + m.dropped);
        CHECK_EQ(m.dropped + lost_io, tr->events_lost);
        CHECK_EQ(tr->gap_count, t->gaps);
        if (c->overflow == ATF_OVERFLOW_BLOCK) {
            CHECK_EQ(0, t->events_dropped);
            CHECK(t->waits > 0);
            CHECK_EQ(0, t->timeouts);
        }
        /* the gaps: the model's before the end of index.atf, exact; perhaps its gap right
         * at the end; then one gap with reason io for everything else */
        for (g = 0; g < m.gap_count && m.gaps[g].index_seq < n; g++, i++) {
            CHECK(i < tr->gap_count);
            if (i >= tr->gap_count) break;
            check_gap(&m.gaps[g], &tr->gaps[i], c->name, i);
            sum += tr->gaps[i].index_lost;
        }
        if (g < m.gap_count && m.gaps[g].index_seq == n && i + 1 < tr->gap_count &&
            tr->gaps[i].reason == ATF_GAP_DROPPED) {
            check_gap(&m.gaps[g], &tr->gaps[i], c->name, i);
            sum += tr->gaps[i++].index_lost;
        }
        CHECK_EQ(i + 1, tr->gap_count);
        if (i < tr->gap_count) {
            const atf_gap *e = &tr->gaps[i];
            CHECK_EQ(n, e->index_seq);
            CHECK_EQ(ATF_GAP_IO, e->reason);
            CHECK_EQ(m.dropped + lost_io - sum, e->index_lost);
            CHECK_EQ(0, e->detail_lost);
            CHECK(atf_thread_reader_gap_before(tr, n) != NULL);
        }
        printf("  %s: %llu produced: %llu written, %llu lost to EFBIG, %llu dropped; %zu gaps; "
               "slowest push %.2f ms, all %.1f ms\n", c->name, (unsigned long long)m.pushed,
               (unsigned long long)n, (unsigned long long)lost_io, (unsigned long long)m.dropped,
               tr->gap_count, (double)max_push * 1e-6, (double)total * 1e-6);
    }
    atf_session_reader_close(&r);
    model_free(&m);
    if (!harness__failures_in_test) {
        remove_tree(root);
        remove(report);
    } else {
        printf("  files kept in %s\n", pid_dir);
    }
}

static void io_block_manual(void) {
    io_case c = { "io_block_manual", ATF_OVERFLOW_BLOCK, ATF_DRAIN_MANUAL };
    io_run(&c);
}
#  if !defined(ATF_NO_THREADS)
static void io_block_drain_thread(void) {
    io_case c = { "io_block_thread", ATF_OVERFLOW_BLOCK, ATF_DRAIN_THREAD };
    io_run(&c);
}
#  endif
static void io_drop_manual(void) {
    io_case c = { "io_drop_manual", ATF_OVERFLOW_DROP, ATF_DRAIN_MANUAL };
    io_run(&c);
}
#endif /* !_WIN32 */

static const test_case tests[] = {
    { "drop_layout1", drop_layout1 },
    { "drop_layout2_detail", drop_layout2_detail },
    { "drop_gap_queue_full", drop_gap_queue_full },
    { "block_self_drain_l1", block_self_drain_l1 },
    { "block_self_drain_l2_detail", block_self_drain_l2_detail },
#if !defined(ATF_NO_THREADS)
    { "block_external_consumer", block_external_consumer },
#endif
    { "timeout_dead_consumer", timeout_dead_consumer },
#if !defined(_WIN32)
    { "io_block_manual", io_block_manual },
#  if !defined(ATF_NO_THREADS)
    { "io_block_drain_thread", io_block_drain_thread },
#  endif
    { "io_drop_manual", io_drop_manual },
#endif
};

int main(int argc, char **argv) {
    int rc;
    if (scratch_dir_make(tmp_dir, sizeof tmp_dir, "overflow") != 0) return 1;
    rc = harness_run("overflow", tests, sizeof tests / sizeof tests[0], argc, argv);
    remove_tree(tmp_dir);
    return rc;
}
