/* test_merge.c - the k-way merge of a session's threads (atf_merge_*): merged against a
 * reference sorted by (timestamp, slot, seq) over ties and both layouts, threads out of
 * time order (checked lazily, only those a merge selects, read through the open file),
 * empty threads, filters (slots, kinds, a window), time seek (O(log n) probes), the pages
 * an open maps, detail links from merged events, CRCs verified through the session,
 * extreme timestamps and a time span too wide for the merge's keys. Every session is
 * written byte by byte by session_files.h, never through the library's writer. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "session_files.h"

static uint64_t ceil_log2_plus1(uint64_t n) { /* ceil(log2(n + 1)) */
    uint64_t bits = 0;
    while (n) {
        bits++;
        n >>= 1;
    }
    return bits;
}

/* Seeks to `count` random instants (and the edges) and checks the first events after
 * each against the reference. Returns 1 when all agree. */
static int seeks_match(atf_session_reader *r, const fx_session *s, const atf_merge_filter *f,
                       size_t count, const char *what) {
    atf_merge m;
    ref_list ref = ref_build(s, f);
    uint64_t lo = fx_min_ts(s), hi = fx_max_ts(s);
    size_t i, k;
    int ok = 1;
    if (atf_merge_init(&m, r, f) != ATF_OK) {
        free(ref.v);
        CHECK(0);
        return 0;
    }
    for (i = 0; ok && i < count; i++) {
        uint64_t t = i == 0 ? 0 : i == 1 ? UINT64_MAX : i == 2 ? hi : i == 3 ? lo
                   : i % 3 == 0 && ref.n ? ref.v[rng_below(ref.n)].ts
                   : lo + rng_below(hi - lo < UINT64_MAX - 1 ? hi - lo + 2 : hi - lo);
        size_t first = 0;
        while (first < ref.n && ref.v[first].ts < t) first++;
        atf_merge_seek(&m, t);
        for (k = 0; k < 4; k++) {
            atf_merge_item it;
            atf_result rc = atf_merge_next(&m, &it);
            if (first + k >= ref.n) {
                if (rc != ATF_E_RANGE) ok = 0;
                break;
            }
            if (rc != ATF_OK || !item_is(&it, &ref.v[first + k])) {
                ok = 0;
                break;
            }
        }
        if (!ok) printf("  %s: seek to %" PRIu64 " differs at event %zu after it\n", what, t, k);
    }
    CHECK(ok);
    atf_merge_deinit(&m);
    free(ref.v);
    return ok;
}

/* ---- tests ------------------------------------------------------------------------------ */
static void test_crc_helper_known_answer(void) {
    CHECK_EQ(0xE3069283u, fx_crc32c((const uint8_t *)"123456789", 9));
}

static void test_merge_interleaved_ties_and_layouts(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    size_t i;
    rng_seed(1);
    CHECK(fx_begin(&s));
    for (i = 0; i < 6; i++) {
        /* steps of 0..2 from nearby starts: many equal timestamps in and across threads */
        fx_add(&s, (uint32_t)(i * 2), i % 3 == 2 ? 2 : 1, 300 + i * 31, 50 + i, 2, 0);
    }
    s.t[3].events_offset = 128; /* bytes between the header and the events are skipped */
    s.t[4].crc = 1;
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 0, &man);
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(6, r.thread_count);
    CHECK_EQ(2, r.format_version);
    CHECK_EQ(1, r.layout);
    CHECK_EQ(3, r.clock_type);
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    for (i = 0; i < r.thread_count && i < 6; i++) {
        atf_session_thread *t = &r.threads[i];
        char name[32];
        CHECK_EQ(s.t[i].slot, t->slot);
        CHECK_EQ(s.t[i].tid, t->os_thread_id);
        CHECK_EQ(s.t[i].slot * 3 + 1, t->events_dropped);
        CHECK(t->in_manifest);
        CHECK(!t->missing);
        CHECK_EQ(ATF_ORDER_UNKNOWN, t->out_of_order); /* the open reads the two ends only */
        CHECK_EQ(s.t[i].ev[0].ts, t->time_min_ns);
        CHECK_EQ(s.t[i].ev[s.t[i].n - 1].ts, t->time_max_ns);
        CHECK_EQ(s.t[i].n, t->reader.index.event_count);
        snprintf(name, sizeof name, "worker %u", s.t[i].slot);
        CHECK(strcmp(name, t->name) == 0);
        CHECK(atf_session_reader_thread(&r, s.t[i].slot) == t);
    }
    CHECK_EQ(0, atf_session_reader_check_order(&r, NULL));
    for (i = 0; i < r.thread_count && i < 6; i++) {
        CHECK(!r.threads[i].out_of_order);
        CHECK_EQ(s.t[i].ev[0].ts, r.threads[i].time_min_ns);
        CHECK_EQ(s.t[i].ev[s.t[i].n - 1].ts, r.threads[i].time_max_ns);
    }
    CHECK(atf_session_reader_thread(&r, 1) == NULL);
    session_merge_matches(&r, &s, NULL, "all threads");
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_merge_out_of_order_thread(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    size_t i;
    rng_seed(2);
    CHECK(fx_begin(&s));
    fx_standard(&s, 4, 400, 0);
    fx_shuffle(&s.t[0]); /* two unsorted threads, one of each layout */
    fx_shuffle(&s.t[3]);
    s.t[3].layout = 2;
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(4, r.thread_count);
    for (i = 0; i < r.thread_count; i++)
        CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[i].out_of_order);
    CHECK_EQ(fx_first_ts(&s), r.time_start_ns); /* the files' ends, until checked */
    CHECK_EQ(fx_last_ts(&s), r.time_end_ns);
    session_merge_matches(&r, &s, NULL, "out of order"); /* checks every thread it merges */
    for (i = 0; i < r.thread_count; i++)
        CHECK_EQ(i == 0 || i == 2 || i == 3, r.threads[i].out_of_order);
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    CHECK_EQ(1, atf_session_reader_check_order(&r, NULL)); /* checked already: the same */
    CHECK_EQ(0, atf_session_reader_check_order(&r, &r.threads[1]));
    CHECK_EQ(1, atf_session_reader_check_order(&r, &r.threads[2]));
    /* twice: the permutation built by the first merge is reused */
    session_merge_matches(&r, &s, NULL, "out of order again");
    /* two merges side by side over one reader */
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    session_merge_matches(&r, &s, NULL, "second merge");
    {
        ref_list ref = ref_build(&s, NULL);
        merge_matches(&m, &ref, 0, "first merge after the second");
        free(ref.v);
    }
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_empty_threads(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    atf_merge m;
    atf_merge_item it;
    rng_seed(12);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 0, 10, 3, 0);                /* finalized, no events */
    fx_add(&s, 1, 2, 0, 10, 3, 0)->state = FX_HEADER_ONLY; /* placeholder header only */
    fx_add(&s, 2, 1, 40, 10, 3, 0);
    fx_add(&s, 3, 2, 0, 10, 3, 0)->state = FX_CRASHED;     /* header and a torn record */
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(4, r.thread_count);
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    session_merge_matches(&r, &s, NULL, "with empty threads");
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_OK, atf_merge_seek(&m, 0));
    CHECK_RESULT(ATF_OK, atf_merge_next(&m, &it));
    CHECK_EQ(2, it.slot);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    /* every thread empty: the session opens, the merge yields nothing */
    s.t[2].n = 0;
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 0, &man);
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    CHECK_RESULT(ATF_OK, atf_merge_seek(&m, 12345));
    CHECK_EQ(0, m.probes);
    it.thread = r.threads; /* stale from an earlier call: the end clears it */
    it.event.timestamp_ns = 7;
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    CHECK(it.thread == NULL);
    CHECK_EQ(0, it.event.timestamp_ns);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_filters(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    uint64_t lo, hi;
    size_t i;
    const uint32_t some[] = {4, 0, 2};
    const uint32_t unknown[] = {77};
    rng_seed(14);
    CHECK(fx_begin(&s));
    fx_standard(&s, 6, 300, 0);
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    lo = fx_min_ts(&s);
    hi = fx_max_ts(&s);
    memset(&f, 0, sizeof f);
    session_merge_matches(&r, &s, &f, "zero filter");
    f.slots = some;
    f.slot_count = 3;
    session_merge_matches(&r, &s, &f, "slots");
    f.slots = unknown;
    f.slot_count = 1;
    session_merge_matches(&r, &s, &f, "unknown slot");
    f.slot_count = 0;
    session_merge_matches(&r, &s, &f, "empty slot set");
    memset(&f, 0, sizeof f);
    f.kinds = 1u << ATF_EVENT_CALL;
    session_merge_matches(&r, &s, &f, "calls");
    f.kinds = (1u << ATF_EVENT_RETURN) | (1u << ATF_EVENT_EXCEPTION);
    session_merge_matches(&r, &s, &f, "returns and exceptions");
    f.kinds = 1u << 9;
    session_merge_matches(&r, &s, &f, "an unused kind");
    memset(&f, 0, sizeof f);
    f.from_ns = lo + (hi - lo) / 3;
    session_merge_matches(&r, &s, &f, "from");
    f.to_ns = lo + (hi - lo) / 2;
    session_merge_matches(&r, &s, &f, "from-to");
    f.from_ns = 0;
    session_merge_matches(&r, &s, &f, "to");
    f.from_ns = f.to_ns = s.t[3].ev[5].ts; /* one instant */
    session_merge_matches(&r, &s, &f, "one instant");
    f.from_ns = hi + 1;
    f.to_ns = 0;
    session_merge_matches(&r, &s, &f, "after the end");
    for (i = 0; i < 200; i++) { /* random combinations */
        uint32_t slots[6];
        size_t n = 0, k;
        memset(&f, 0, sizeof f);
        for (k = 0; k < 6; k++)
            if (rng_below(2)) slots[n++] = s.t[k].slot;
        if (rng_below(3)) {
            f.slots = slots;
            f.slot_count = n;
        }
        if (rng_below(2)) f.kinds = (uint32_t)rng_below(16);
        if (rng_below(2)) f.from_ns = lo + rng_below(hi - lo + 10) - 5;
        if (rng_below(2)) f.to_ns = lo + rng_below(hi - lo + 10);
        if (!session_merge_matches(&r, &s, &f, "random filter")) break;
    }
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_seek(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    ref_list ref;
    uint64_t lo, hi, bound = 0;
    size_t i, k;
    rng_seed(15);
    CHECK(fx_begin(&s));
    fx_standard(&s, 7, 700, 0);
    s.t[5].n = 0; /* an empty thread too */
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[2].out_of_order);
    ref = ref_build(&s, NULL);
    for (i = 0; i < s.count; i++) bound += ceil_log2_plus1(s.t[i].n);
    lo = fx_min_ts(&s);
    hi = fx_max_ts(&s);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_EQ(1, r.threads[2].out_of_order); /* checked by the merge */
    for (i = 0; i < 1000; i++) {
        uint64_t t = i == 0 ? 0 : i == 1 ? UINT64_MAX : i == 2 ? hi : i == 3 ? lo
                   : i % 4 == 0 ? ref.v[rng_below(ref.n)].ts /* an existing instant */
                   : lo - 10 + rng_below(hi - lo + 20);
        size_t first = 0;
        atf_merge_item it;
        atf_result rc;
        while (first < ref.n && ref.v[first].ts < t) first++;
        CHECK_RESULT(ATF_OK, atf_merge_seek(&m, t));
        if (m.probes > bound) {
            CHECK(m.probes <= bound);
            break;
        }
        for (k = 0; k < 5; k++) { /* the first events after the seek */
            rc = atf_merge_next(&m, &it);
            if (first + k >= ref.n) {
                CHECK_RESULT(ATF_E_RANGE, rc);
                break;
            }
            CHECK_RESULT(ATF_OK, rc);
            if (rc != ATF_OK || !item_is(&it, &ref.v[first + k])) {
                printf("  seek to %" PRIu64 ": event %zu after it differs\n", t, k);
                CHECK(0);
                i = 1000;
                break;
            }
        }
    }
    /* after a seek, the rest of the merge is the rest of the reference */
    CHECK_RESULT(ATF_OK, atf_merge_seek(&m, ref.v[ref.n / 2].ts));
    for (k = ref.n / 2; k > 0 && ref.v[k - 1].ts == ref.v[k].ts; k--) {}
    merge_matches(&m, &ref, k, "rest after seek");
    atf_merge_deinit(&m);
    {   /* seek with a filter: the first selected event with ts >= t */
        atf_merge_filter f;
        ref_list fr;
        memset(&f, 0, sizeof f);
        f.kinds = 1u << ATF_EVENT_RETURN;
        f.from_ns = lo + (hi - lo) / 4;
        f.to_ns = lo + (hi - lo) * 3 / 4;
        fr = ref_build(&s, &f);
        CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, &f));
        for (i = 0; i < 200; i++) { /* also before from_ns: the filter still holds */
            uint64_t t = lo + rng_below(hi - lo);
            size_t first = 0;
            atf_merge_item it;
            atf_result rc;
            while (first < fr.n && fr.v[first].ts < t) first++;
            atf_merge_seek(&m, t);
            rc = atf_merge_next(&m, &it);
            if (first == fr.n) {
                CHECK_RESULT(ATF_E_RANGE, rc);
            } else if (rc != ATF_OK || !item_is(&it, &fr.v[first])) {
                printf("  filtered seek to %" PRIu64 " differs\n", t);
                CHECK(0);
                break;
            }
        }
        atf_merge_deinit(&m);
        free(fr.v);
    }
    {   /* atf_index_reader_seek on one time-ordered file */
        const atf_index_reader *ix = &r.threads[0].reader.index;
        for (i = 0; i < 300; i++) {
            uint64_t t = lo + rng_below(hi - lo), probes = 0, p, want = 0;
            while (want < s.t[0].n && s.t[0].ev[want].ts < t) want++;
            p = atf_index_reader_seek(ix, t, &probes);
            CHECK_EQ(want, p);
            CHECK(probes <= ceil_log2_plus1(s.t[0].n));
        }
    }
    free(ref.v);
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* ---- the order of a file, checked lazily ------------------------------------------------ */
/* Hides disorder where the open does not look: the first and last events stay as they
 * were, event n/4 is stamped `late` and event 3n/4 `early`. A binary search over the file
 * misses both. */
static void fx_hide_disorder(fx_thread *t, uint64_t late, uint64_t early) {
    t->ev[t->n / 4].ts = late;
    t->ev[t->n * 3 / 4].ts = early;
}

static uint64_t fx_thread_min(const fx_thread *t) {
    uint64_t v = UINT64_MAX;
    size_t k;
    for (k = 0; k < t->n; k++) v = t->ev[k].ts < v ? t->ev[k].ts : v;
    return v;
}

static uint64_t fx_thread_max(const fx_thread *t) {
    uint64_t v = 0;
    size_t k;
    for (k = 0; k < t->n; k++) v = t->ev[k].ts > v ? t->ev[k].ts : v;
    return v;
}

/* Opens s with the open's own view checked: every thread unknown, its range the ends of
 * its file. */
static int open_unchecked(atf_session_reader *r, const fx_session *s, const atf_reader_options *o) {
    size_t i;
    atf_result rc = atf_session_reader_open(r, s->dir, o);
    CHECK_RESULT(ATF_OK, rc);
    if (rc != ATF_OK) return 0;
    CHECK_EQ(s->count, r->thread_count);
    for (i = 0; i < r->thread_count && i < s->count; i++) {
        const fx_thread *t = &s->t[i];
        CHECK_EQ(ATF_ORDER_UNKNOWN, r->threads[i].out_of_order);
        CHECK_EQ(t->ev[0].ts, r->threads[i].time_min_ns);
        CHECK_EQ(t->ev[t->n - 1].ts, r->threads[i].time_max_ns);
    }
    CHECK_EQ(fx_first_ts(s), r->time_start_ns); /* no manifest: the threads' range */
    CHECK_EQ(fx_last_ts(s), r->time_end_ns);
    return 1;
}

/* A file that looks ordered at both ends and is not, merged, filtered and sought into
 * first thing after the open (nothing checked its order before): the merge checks it, and
 * only the threads it selects. Slot 1 is large enough to be read through the file when
 * mapped; read into memory it is checked there. */
static void test_order_checked_when_merged(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    const uint32_t only1[] = {1}, only02[] = {0, 2};
    uint64_t hi;
    int mapped;
    rng_seed(31);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 3000, 1000, 3, 0);
    fx_add(&s, 1, 2, 20000, 1000, 3, 0);
    fx_add(&s, 2, 1, 3000, 1000, 3, 0);
    hi = fx_max_ts(&s);
    fx_hide_disorder(&s.t[1], hi - 5, 500);
    fx_write_all(&s);
    for (mapped = 0; mapped < 2; mapped++) {
        atf_reader_options o;
        memset(&o, 0, sizeof o);
        o.no_mmap = !mapped;
        /* a window at the end, slot 1 only: its event n/4 is in it */
        memset(&f, 0, sizeof f);
        f.slots = only1;
        f.slot_count = 1;
        f.from_ns = hi - 20;
        if (open_unchecked(&r, &s, &o)) {
            ref_list ref = ref_build(&s, &f);
            CHECK(ref.n > 0);
            free(ref.v);
            session_merge_matches(&r, &s, &f, "window of a file out of order");
            CHECK_EQ(1, r.threads[1].out_of_order);
            CHECK_EQ(500, r.threads[1].time_min_ns);
            CHECK_EQ(fx_thread_max(&s.t[1]), r.threads[1].time_max_ns);
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[0].out_of_order); /* not selected */
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[2].out_of_order);
            CHECK_EQ(500, r.time_start_ns); /* the session's range follows the check */
            CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
            atf_session_reader_close(&r);
        }
        /* an upper bound below every first event: the early event alone */
        memset(&f, 0, sizeof f);
        f.to_ns = 600;
        if (open_unchecked(&r, &s, &o)) {
            session_merge_matches(&r, &s, &f, "bound below the first events");
            atf_session_reader_close(&r);
        }
        /* both bounds, the other slots: they are checked and ordered */
        memset(&f, 0, sizeof f);
        f.slots = only02;
        f.slot_count = 2;
        f.from_ns = 1500;
        f.to_ns = 4000;
        if (open_unchecked(&r, &s, &o)) {
            session_merge_matches(&r, &s, &f, "ordered slots, both bounds");
            CHECK_EQ(0, r.threads[0].out_of_order);
            CHECK_EQ(0, r.threads[2].out_of_order);
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[1].out_of_order);
            atf_session_reader_close(&r);
        }
        /* seeks, unfiltered and filtered, first thing after the open */
        if (open_unchecked(&r, &s, &o)) {
            seeks_match(&r, &s, NULL, 300, "seeks into a file out of order");
            atf_session_reader_close(&r);
        }
        memset(&f, 0, sizeof f);
        f.from_ns = 800;
        f.to_ns = hi - 2;
        f.kinds = (1u << ATF_EVENT_CALL) | (1u << ATF_EVENT_EXCEPTION);
        if (open_unchecked(&r, &s, &o)) {
            seeks_match(&r, &s, &f, 300, "filtered seeks into a file out of order");
            atf_session_reader_close(&r);
        }
        /* on request: one thread, then all */
        if (open_unchecked(&r, &s, &o)) {
            CHECK_EQ(0, atf_session_reader_check_order(&r, &r.threads[2]));
            CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[1].out_of_order);
            CHECK_EQ(fx_first_ts(&s), r.time_start_ns);
            CHECK_EQ(1, atf_session_reader_check_order(&r, NULL));
            CHECK_EQ(0, r.threads[0].out_of_order);
            CHECK_EQ(1, r.threads[1].out_of_order);
            CHECK_EQ(fx_thread_min(&s.t[0]), r.threads[0].time_min_ns);
            CHECK_EQ(fx_thread_max(&s.t[0]), r.threads[0].time_max_ns);
            CHECK_EQ(500, r.threads[1].time_min_ns);
            CHECK_EQ(500, r.time_start_ns);
            CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
            session_merge_matches(&r, &s, NULL, "after the check");
            atf_session_reader_close(&r);
        }
    }
    fx_end(&s);
}

/* Threads with at most one event are ordered from the open; a thread whose files did not
 * open stays 0 and the check leaves it alone. */
static void test_order_of_tiny_and_missing_threads(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    const uint32_t extra[] = {9};
    rng_seed(32);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 0, 1000, 3, 0);
    fx_add(&s, 1, 2, 1, 1000, 3, 0);
    fx_add(&s, 2, 1, 2, 1000, 3, 0);
    s.t[2].ev[1].ts = s.t[2].ev[0].ts - 1;
    fx_write_all(&s);
    fx_manifest_modern(&s, extra, 1, 0, &man); /* slot 9 listed, never written */
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(4, r.thread_count);
    if (r.thread_count == 4) {
        CHECK_EQ(0, r.threads[0].out_of_order);
        CHECK_EQ(0, r.threads[0].time_min_ns);
        CHECK_EQ(0, r.threads[0].time_max_ns);
        CHECK_EQ(0, r.threads[1].out_of_order);
        CHECK_EQ(s.t[1].ev[0].ts, r.threads[1].time_min_ns);
        CHECK_EQ(s.t[1].ev[0].ts, r.threads[1].time_max_ns);
        CHECK_EQ(ATF_ORDER_UNKNOWN, r.threads[2].out_of_order);
        CHECK(r.threads[3].missing);
        CHECK_EQ(0, r.threads[3].out_of_order);
        CHECK_EQ(0, atf_session_reader_check_order(&r, &r.threads[3]));
        CHECK_EQ(1, atf_session_reader_check_order(&r, NULL));
        CHECK_EQ(s.t[2].ev[1].ts, r.threads[2].time_min_ns);
        CHECK_EQ(s.t[2].ev[0].ts, r.threads[2].time_max_ns);
        CHECK_EQ(0, r.threads[3].out_of_order);
        session_merge_matches(&r, &s, NULL, "tiny threads");
    }
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

#if !defined(_WIN32) /* a mapped file cannot be renamed over there */
/* The check reads a mapped file through a descriptor of its own: when the file at the
 * path is no longer the one mapped (replaced by a rename after the open), the check sees
 * other ends and reads the mapping instead. */
static void test_order_check_reads_the_open_file(void) {
    fx_session s;
    atf_session_reader r;
    char path[400], tmp[420];
    int variant;
    for (variant = 0; variant < 2; variant++) {
        fx_thread other;
        size_t k;
        rng_seed(33);
        CHECK(fx_begin(&s));
        fx_add(&s, 0, 1, 20000, 1000, 3, 0);
        fx_hide_disorder(&s.t[0], fx_max_ts(&s) - 5, 500);
        fx_write_all(&s);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        /* the same events in order, one end moved: variant 0 the first, 1 the last */
        other = s.t[0];
        other.ev = (fx_ev *)malloc(other.n * sizeof *other.ev);
        memcpy(other.ev, s.t[0].ev, other.n * sizeof *other.ev);
        for (k = 0; k < other.n; k++) other.ev[k].ts = 1000 + k;
        if (variant == 0) other.ev[0].ts = 999;
        else other.ev[other.n - 1].ts += 7;
        snprintf(path, sizeof path, "%s/thread_0/index.atf", s.dir);
        snprintf(tmp, sizeof tmp, "%s.new", path);
        fx_write_index(tmp, &other);
        CHECK_EQ(0, rename(tmp, path));
        CHECK_EQ(1, atf_session_reader_check_order(&r, NULL)); /* the mapped file's answer */
        CHECK_EQ(500, r.threads[0].time_min_ns);
        session_merge_matches(&r, &s, NULL, "merge of the mapped file");
        atf_session_reader_close(&r);
        free(other.ev);
        fx_end(&s);
    }
}
#endif

#if defined(__linux__)
#include <fcntl.h>

/* Drops the pages of thread k's index.atf from the page cache (those not mapped), so
 * that a fault maps what the kernel reads around it, not a large cached folio. */
static void fx_evict_index(const fx_session *s, size_t k) {
    char path[400];
    int fd;
    snprintf(path, sizeof path, "%s/thread_%u/index.atf", s->dir, s->t[k].slot);
    fd = open(path, O_RDONLY);
    if (fd < 0) return;
    if (fdatasync(fd) == 0) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

/* Resident pages of mapped files in this process (RssFile + RssShmem, /proc/self/statm's
 * third field); 0 when it cannot be read. */
static uint64_t resident_file_pages(void) {
    unsigned long size = 0, resident = 0, shared = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu %lu %lu", &size, &resident, &shared) != 3) shared = 0;
    fclose(f);
    return shared;
}
#endif

/* Opening maps in O(1) pages of each file however large it is (the header and both ends),
 * the order check none (it reads through a descriptor), and a merge that seeks into a
 * narrow window near the end O(log n) pages per file; a full merge maps them all, which
 * shows that the count sees the pages the reader touches. Linux only: it counts resident
 * pages of mapped files. */
static void test_open_maps_only_the_ends(void) {
#if defined(__linux__)
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    uint64_t before, opened, all_pages, n = 300000;
    rng_seed(34);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, (size_t)n, 1000, 3, 0);
    fx_add(&s, 1, 2, (size_t)n, 1000, 3, 0);
    fx_write_all(&s);
    fx_evict_index(&s, 0);
    fx_evict_index(&s, 1);
    all_pages = 2 * n * 32 / 4096; /* 4687 */
    before = resident_file_pages();
    CHECK(before > 0);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    opened = resident_file_pages() - before;
    CHECK(opened < all_pages / 16);
    CHECK_EQ(0, atf_session_reader_check_order(&r, NULL));
    CHECK(resident_file_pages() - before < opened + 8);
    fx_evict_index(&s, 0);
    fx_evict_index(&s, 1);
    memset(&f, 0, sizeof f);
    f.from_ns = fx_max_ts(&s) - 30;
    session_merge_matches(&r, &s, &f, "window at the end");
    CHECK(resident_file_pages() - before < all_pages / 2);
    session_merge_matches(&r, &s, NULL, "everything");
    CHECK(resident_file_pages() - before >= all_pages - 64);
    atf_session_reader_close(&r);
    fx_end(&s);
#else
    printf("  open_maps_only_the_ends: skipped (counts pages through /proc/self/statm)\n");
#endif
}

static void test_detail_links_from_merge(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    size_t with = 0, without = 0;
    rng_seed(16);
    CHECK(fx_begin(&s));
    fx_standard(&s, 4, 300, 1); /* details on slots 0, 2 (unsorted), 4 */
    s.t[3].layout = 2;
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    while (atf_merge_next(&m, &it) == ATF_OK) {
        atf_detail_event d;
        atf_detail_payload p;
        atf_result rc = atf_thread_reader_detail_of(&it.thread->reader, it.seq, &d);
        if (it.event.detail_seq == ATF_NO_DETAIL) {
            CHECK_RESULT(ATF_E_NO_DETAIL, rc);
            without++;
            continue;
        }
        with++;
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) break;
        CHECK_EQ(it.seq, d.header.index_seq);
        CHECK_EQ(it.event.timestamp_ns, d.header.timestamp_ns);
        CHECK_RESULT(ATF_OK, atf_detail_payload_decode(d.payload, d.payload_len, &p));
        CHECK_EQ(it.event.function_id, p.function_id);
        CHECK_EQ(it.seq, p.x[0]);
        CHECK_EQ(it.seq % 33, p.stack_size);
        {   /* and back */
            atf_index_event back;
            CHECK_RESULT(ATF_OK, atf_thread_reader_index_of(&it.thread->reader, it.event.detail_seq,
                                                            &back));
            CHECK_EQ(it.event.timestamp_ns, back.timestamp_ns);
        }
    }
    CHECK(with > 100);
    CHECK(without > 100);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_crc_verified_through_session(void) {
    fx_session s;
    atf_session_reader r;
    atf_reader_options opt;
    size_t i;
    rng_seed(17);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 100, 1);
    for (i = 0; i < s.count; i++) s.t[i].crc = 1;
    fx_write_all(&s);
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    opt.no_mmap = 1;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, &opt));
    for (i = 0; i < r.thread_count; i++) CHECK_EQ(ATF_CRC_OK, r.threads[i].reader.index.crc_state);
    session_merge_matches(&r, &s, NULL, "read, not mapped");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_many_threads_random_interleaving(void) {
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(18);
    CHECK(fx_begin(&s));
    for (i = 0; i < 70; i++) {
        fx_thread *t = fx_add(&s, (uint32_t)(69 - i) * 3, (int)(1 + i % 2), (size_t)rng_below(200),
                              rng_below(500), rng_below(2) ? 1 : 40, 0);
        if (i % 9 == 0) fx_shuffle(t);
    }
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(70, r.thread_count);
    for (i = 1; i < r.thread_count; i++) CHECK(r.threads[i - 1].slot < r.threads[i].slot);
    session_merge_matches(&r, &s, NULL, "70 threads");
    seeks_match(&r, &s, NULL, 300, "70 threads");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_extreme_timestamps(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    size_t i;
    rng_seed(19);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 6, 0, 0, 0);
    fx_add(&s, 1, 2, 6, 0, 0, 0);
    fx_add(&s, 2, 1, 6, 0, 0, 0);
    for (i = 0; i < 6; i++) {
        s.t[0].ev[i].ts = i < 3 ? 0 : UINT64_MAX;
        s.t[1].ev[i].ts = i < 2 ? 0 : UINT64_MAX;
        s.t[2].ev[i].ts = UINT64_MAX - 1 + (i > 3);
    }
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    session_merge_matches(&r, &s, NULL, "0 and UINT64_MAX");
    seeks_match(&r, &s, NULL, 50, "0 and UINT64_MAX");
    memset(&f, 0, sizeof f);
    f.from_ns = UINT64_MAX;
    session_merge_matches(&r, &s, &f, "from UINT64_MAX");
    f.from_ns = 1;
    f.to_ns = UINT64_MAX - 1;
    session_merge_matches(&r, &s, &f, "inside");
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* A time span too wide for the merge's 64-bit keys (a corrupt timestamp, say): the merge
 * picks threads by a linear scan instead, with the same results. */
static void test_merge_wide_time_span(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge_filter f;
    size_t i;
    rng_seed(20);
    CHECK(fx_begin(&s));
    for (i = 0; i < 12; i++) {
        fx_thread *t = fx_add(&s, (uint32_t)i, (int)(1 + i % 2), 150 + i * 5, 100 + i, 2, 0);
        if (i == 4) fx_shuffle(t);
    }
    s.t[3].ev[s.t[3].n - 1].ts = UINT64_MAX - 3;
    s.t[7].ev[s.t[7].n - 1].ts = UINT64_MAX - 3; /* a tie up there too */
    s.t[9].ev[0].ts = 0;
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    session_merge_matches(&r, &s, NULL, "wide span");
    {
        atf_merge m;
        CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
        CHECK(m.linear); /* the path this test is about */
        atf_merge_deinit(&m);
    }
    seeks_match(&r, &s, NULL, 300, "wide span");
    for (i = 0; i < 60; i++) {
        uint32_t slots[12];
        size_t n = 0, k;
        memset(&f, 0, sizeof f);
        for (k = 0; k < 12; k++)
            if (rng_below(2)) slots[n++] = (uint32_t)k;
        if (rng_below(2)) {
            f.slots = slots;
            f.slot_count = n;
        }
        if (rng_below(2)) f.kinds = (uint32_t)rng_below(16);
        if (rng_below(2)) f.from_ns = 100 + rng_below(400);
        if (rng_below(2)) f.to_ns = 300 + rng_below(400);
        if (!session_merge_matches(&r, &s, &f, "wide span, filtered")) break;
    }
    atf_session_reader_close(&r);
    fx_end(&s);
    {   /* ties between the runner-up candidates: slot 0 and slot 2 both at 10, slot 1
         * leading at 3 must stop before its own 10 */
        static const uint64_t t0[] = {10, 10}, t1[] = {3, 10, 10, 11}, t2[] = {10, UINT64_MAX};
        const uint64_t *ts[3] = {t0, t1, t2};
        const size_t n[3] = {2, 4, 2};
        CHECK(fx_begin(&s));
        for (i = 0; i < 3; i++) {
            fx_thread *t = fx_add(&s, (uint32_t)i, 1, n[i], 0, 0, 0);
            size_t k;
            for (k = 0; k < n[i]; k++) t->ev[k].ts = ts[i][k];
        }
        fx_write_all(&s);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        session_merge_matches(&r, &s, NULL, "runner-up ties");
        seeks_match(&r, &s, NULL, 40, "runner-up ties");
        atf_session_reader_close(&r);
        fx_end(&s);
    }
}

static const test_case tests[] = {
    {"crc_helper_known_answer", test_crc_helper_known_answer},
    {"merge_interleaved_ties_and_layouts", test_merge_interleaved_ties_and_layouts},
    {"merge_out_of_order_thread", test_merge_out_of_order_thread},
    {"empty_threads", test_empty_threads},
    {"filters", test_filters},
    {"seek", test_seek},
    {"order_checked_when_merged", test_order_checked_when_merged},
    {"order_of_tiny_and_missing_threads", test_order_of_tiny_and_missing_threads},
#if !defined(_WIN32)
    {"order_check_reads_the_open_file", test_order_check_reads_the_open_file},
#endif
    {"open_maps_only_the_ends", test_open_maps_only_the_ends},
    {"detail_links_from_merge", test_detail_links_from_merge},
    {"crc_verified_through_session", test_crc_verified_through_session},
    {"many_threads_random_interleaving", test_many_threads_random_interleaving},
    {"extreme_timestamps", test_extreme_timestamps},
    {"merge_wide_time_span", test_merge_wide_time_span},
};

HARNESS_MAIN("merge", tests)
