/* walk.c - call/return pairing per thread (see walk.h), shared by stats, tree, export and
 * diff.
 * SPDX-License-Identifier: MIT */
#include "walk.h"

#include <stdlib.h>
#include <string.h>

/* ==== hash map ======================================================================= */
/* u64 -> u64, open addressing with linear probing, at most half full. It only grows
 * (keys are never removed), so its size is the number of distinct keys it has seen. */
static size_t walk_hash(uint64_t x, size_t mask) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (size_t)x & mask;
}

uint64_t *walk_map_find(const walk_map *m, uint64_t key) {
    size_t i;
    if (!m->cap) return NULL;
    for (i = walk_hash(key, m->cap - 1); m->slots[i].used; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key) return &m->slots[i].val;
    return NULL;
}

/* The value of key, inserted as 0 (and *is_new set) when absent; NULL when out of memory. */
uint64_t *walk_map_put(walk_map *m, uint64_t key, int *is_new) {
    size_t i;
    if (is_new) *is_new = 0;
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16, k;
        walk_slot *s = (walk_slot *)calloc(cap, sizeof *s);
        if (!s) return NULL;
        for (k = 0; k < m->cap; k++) {
            if (!m->slots[k].used) continue;
            for (i = walk_hash(m->slots[k].key, cap - 1); s[i].used; i = (i + 1) & (cap - 1)) {}
            s[i] = m->slots[k];
        }
        free(m->slots);
        m->slots = s;
        m->cap = cap;
    }
    for (i = walk_hash(key, m->cap - 1); m->slots[i].used; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key) return &m->slots[i].val;
    m->slots[i].used = 1;
    m->slots[i].key = key;
    m->slots[i].val = 0;
    m->count++;
    if (is_new) *is_new = 1;
    return &m->slots[i].val;
}

void walk_map_free(walk_map *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* The set of function ids on one thread's stack: open addressing with Fibonacci hashing
 * and backward-shift deletion, so it holds only what is on the stack right now, stays a
 * few cache lines in real traces, and answers "is f on the stack?" in O(1). */
static size_t walk_fidset_home(const walk_fidset *s, uint64_t k) {
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> s->shift);
}

int walk_fidset_has(const walk_fidset *s, uint64_t k) {
    size_t i;
    if (k == WALK_FID_EMPTY) return s->has_max;
    if (!s->cap) return 0;
    for (i = walk_fidset_home(s, k); s->keys[i] != WALK_FID_EMPTY; i = (i + 1) & (s->cap - 1))
        if (s->keys[i] == k) return 1;
    return 0;
}

/* Adds k: 1 when it was absent, 0 when present, -1 when out of memory. */
int walk_fidset_add(walk_fidset *s, uint64_t k) {
    size_t i;
    if (k == WALK_FID_EMPTY) {
        if (s->has_max) return 0;
        s->has_max = 1;
        return 1;
    }
    if ((s->count + 1) * 2 > s->cap) {
        walk_fidset bigger;
        size_t j;
        bigger.cap = s->cap ? s->cap * 2 : 64;
        bigger.shift = s->cap ? s->shift - 1 : 58;
        bigger.count = s->count;
        bigger.has_max = s->has_max;
        bigger.keys = (uint64_t *)malloc(bigger.cap * sizeof *bigger.keys);
        if (!bigger.keys) return -1;
        memset(bigger.keys, 0xFF, bigger.cap * sizeof *bigger.keys);
        for (j = 0; j < s->cap; j++) {
            if (s->keys[j] == WALK_FID_EMPTY) continue;
            for (i = walk_fidset_home(&bigger, s->keys[j]); bigger.keys[i] != WALK_FID_EMPTY;
                 i = (i + 1) & (bigger.cap - 1)) {}
            bigger.keys[i] = s->keys[j];
        }
        free(s->keys);
        *s = bigger;
    }
    for (i = walk_fidset_home(s, k); s->keys[i] != WALK_FID_EMPTY; i = (i + 1) & (s->cap - 1))
        if (s->keys[i] == k) return 0;
    s->keys[i] = k;
    s->count++;
    return 1;
}

void walk_fidset_del(walk_fidset *s, uint64_t k) {
    size_t i, j, mask = s->cap - 1;
    if (k == WALK_FID_EMPTY) {
        s->has_max = 0;
        return;
    }
    if (!s->cap) return;
    for (i = walk_fidset_home(s, k); s->keys[i] != k; i = (i + 1) & mask)
        if (s->keys[i] == WALK_FID_EMPTY) return;
    /* close the gap: pull back every later key of the run that may not stay behind it */
    for (j = (i + 1) & mask; s->keys[j] != WALK_FID_EMPTY; j = (j + 1) & mask) {
        size_t h = walk_fidset_home(s, s->keys[j]);
        int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            s->keys[i] = s->keys[j];
            i = j;
        }
    }
    s->keys[i] = WALK_FID_EMPTY;
    s->count--;
}

/* ==== walk: call/return pairing ====================================================== */
int walk_init(walk_ctx *w, size_t thread_count) {
    memset(w, 0, sizeof *w);
    w->threads = (walk_thread *)calloc(thread_count ? thread_count : 1, sizeof *w->threads);
    if (!w->threads) return 0;
    w->count = thread_count;
    return 1;
}

void walk_deinit(walk_ctx *w) {
    size_t i;
    for (i = 0; i < w->count; i++) {
        free(w->threads[i].stack);
        free(w->threads[i].active.keys);
    }
    free(w->threads);
    memset(w, 0, sizeof *w);
}

/* Whether what happens now in thread t reaches the callbacks: always, or with --function
 * inside a call of one of its functions. */
static int walk_shown(const walk_ctx *w, const walk_thread *t) {
    return t->focus || !w->src || !w->src->fid_count;
}

size_t walk_depth_in_subtree(const walk_ctx *w, size_t ti, size_t depth) {
    return depth - w->threads[ti].focus_base;
}

uint64_t walk_frame_ns(const walk_frame *f, uint64_t end_ns) {
    uint64_t dur = end_ns > f->start_ns ? end_ns - f->start_ns : 0;
    return dur > f->paused_ns ? dur - f->paused_ns : 0;
}

uint64_t walk_frame_self_ns(const walk_frame *f, uint64_t end_ns) {
    uint64_t dur = walk_frame_ns(f, end_ns);
    return dur > f->child_ns ? dur - f->child_ns : 0;
}

static void walk_pop(walk_ctx *w, size_t ti, uint64_t end_ns, int how) {
    walk_thread *t = &w->threads[ti];
    walk_frame f = t->stack[--t->depth];
    if (f.outermost) walk_fidset_del(&t->active, f.fid);
    if (t->depth) { /* the caller holds this call, and the pauses in it */
        t->stack[t->depth - 1].child_ns += walk_frame_ns(&f, end_ns);
        t->stack[t->depth - 1].paused_ns += f.paused_ns;
    }
    if (w->leave && walk_shown(w, t))
        w->leave(w->ctx, ti, &f, end_ns, t->depth, how, (int)f.outermost);
    if (f.focus && --t->focus == 0) t->focus_base = 0;
}

/* A frame just pushed at depth d: with --function, a call of one of its functions roots a
 * subtree (when no outer one is open). */
static void walk_focus(walk_ctx *w, walk_thread *t, walk_frame *f, uint64_t fid, size_t d) {
    f->focus = (uint32_t)(w->src && w->src->fid_count && cli_trace_focus(w->src, fid));
    if (f->focus && t->focus++ == 0) t->focus_base = d;
}

/* One index event of thread ti; detail_seq is its detail link (kept by a call's frame). */
static void walk_event(walk_ctx *w, size_t ti, uint32_t kind, uint64_t id, uint64_t ts,
                       uint64_t detail_seq) {
    walk_thread *t = &w->threads[ti];
    uint64_t fid = w->by_name ? cli_trace_alias(w->src, id) : id;
    int added;
    if (!t->events++) t->first_ns = ts;
    if (ts > t->last_ns) t->last_ns = ts;
    if (kind == ATF_EVENT_CALL) {
        walk_frame *f;
        if (t->skipped || t->depth >= WALK_MAX_DEPTH) {
            t->skipped++;
            t->too_deep++;
            return;
        }
        if (t->depth == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 64;
            walk_frame *s = (walk_frame *)realloc(t->stack, cap * sizeof *s);
            if (!s) {
                w->nomem = 1;
                t->skipped++;
                return;
            }
            t->stack = s;
            t->cap = cap;
        }
        if ((added = walk_fidset_add(&t->active, fid)) < 0) {
            w->nomem = 1;
            t->skipped++;
            return;
        }
        f = &t->stack[t->depth++];
        f->fid = fid;
        f->start_ns = ts;
        f->child_ns = 0;
        f->paused_ns = 0;
        f->outermost = (uint64_t)added;
        f->detail_seq = detail_seq;
        walk_focus(w, t, f, id, t->depth - 1);
        if (w->enter && walk_shown(w, t)) w->enter(w->ctx, ti, fid, ts, t->depth - 1);
    } else if (kind == ATF_EVENT_RETURN || kind == ATF_EVENT_EXCEPTION) {
        int how = kind == ATF_EVENT_EXCEPTION ? WALK_LEAVE_EXCEPTION : WALK_LEAVE_RETURN;
        if (t->skipped) {
            t->skipped--;
            return;
        }
        if (t->depth && t->stack[t->depth - 1].fid == fid) {
            walk_pop(w, ti, ts, how);
            return;
        }
        if (!walk_fidset_has(&t->active, fid)) {
            if (t->after_discard) {
                t->begun_before++;
                return;
            }
            t->unmatched++;
            if (w->unmatched && walk_shown(w, t))
                w->unmatched(w->ctx, ti, fid, ts, t->depth);
            return;
        }
        while (t->stack[t->depth - 1].fid != fid) {
            t->unwound++;
            walk_pop(w, ti, ts, WALK_LEAVE_UNWOUND);
        }
        walk_pop(w, ti, ts, how);
    }
}

int walk_gap_by_choice(const atf_gap *g) {
    return g->reason == ATF_GAP_STOPPED || g->reason == ATF_GAP_SKIPPED ||
           g->reason == ATF_GAP_DISCARDED;
}

const char *walk_gap_verb(const atf_gap *g) {
    return walk_gap_by_choice(g) ? "not recorded" : "lost";
}

uint64_t walk_not_recorded(const atf_thread_reader *tr) {
    uint64_t n = 0;
    size_t g;
    for (g = 0; g < tr->gap_count; g++)
        if (walk_gap_by_choice(&tr->gaps[g])) n += tr->gaps[g].index_lost;
    return n;
}

/* Closes the frames still open in thread ti when its process was last seen (never before
 * the thread's own last event): cut short. */
static void walk_cut(walk_ctx *w, size_t ti) {
    walk_thread *t = &w->threads[ti];
    uint64_t end = w->end_ns > t->last_ns ? w->end_ns : t->last_ns;
    while (t->depth) {
        t->cut_short++;
        walk_pop(w, ti, end, WALK_LEAVE_CUT);
    }
}

/* Thread ti lost events here (g), before an event at next_ts (UINT64_MAX: at the end):
 * closes its open frames at its last event before the gap, forgets the calls skipped for
 * depth, then reports the gap at its first lost stamp, kept between the two events (the
 * last one before when the stamp is unknown). */
static void walk_gap(walk_ctx *w, size_t ti, const atf_gap *g, uint64_t next_ts) {
    walk_thread *t = &w->threads[ti];
    uint64_t at = g->first_lost_ns;
    int stop = walk_gap_by_choice(g); /* not recorded by choice: no loss */
    t->after_discard = g->reason == ATF_GAP_DISCARDED;
    if (stop) {
        t->not_recorded += g->index_lost;
    } else {
        t->gaps++;
        t->lost += g->index_lost;
    }
    if (stop && next_ts == UINT64_MAX) { /* the recording's end (a bound, or off): cut short */
        walk_cut(w, ti);
    } else {
        while (t->depth) {
            t->cut_by_gap++;
            walk_pop(w, ti, t->last_ns, WALK_LEAVE_AT_GAP);
        }
    }
    t->skipped = 0;
    if (t->events && at < t->last_ns) at = t->last_ns; /* also when unknown (0) */
    if (at > next_ts || (at == 0 && next_ts != UINT64_MAX)) at = next_ts;
    if (w->gap) w->gap(w->ctx, ti, g, at);
}

/* The pauses of thread ti (reader tr) that lie before its event `seq`: inside the frames
 * open now, when the thread had an event in the window before (else they lie before
 * it). Stamps of a thread whose file is not in order do not follow seq: only pauses
 * before a seq higher than any before count. */
static void walk_pauses_before(walk_ctx *w, size_t ti, const atf_thread_reader *tr, uint64_t seq) {
    walk_thread *t = &w->threads[ti];
    for (; t->pause_next < tr->pause_count && tr->pauses[t->pause_next].index_seq <= seq;
         t->pause_next++) {
        const atf_pause *p = &tr->pauses[t->pause_next];
        uint64_t d = p->end_ns - p->start_ns;
        if (!t->events || seq <= t->last_seq) continue;
        t->pauses++;
        t->paused_ns += d;
        if (t->depth) t->stack[t->depth - 1].paused_ns += d;
        if (w->pause && walk_shown(w, t)) w->pause(w->ctx, ti, p, t->depth);
    }
    if (!t->events || seq > t->last_seq) t->last_seq = seq;
}

/* Closes the frames still open in thread ti: cut short. */
static void walk_finish_thread(walk_ctx *w, size_t ti) {
    walk_cut(w, ti);
    w->threads[ti].skipped = 0;
}

/* The timestamp of thread th's latest event at or before `to`; 0 (and *found 0) when it
 * has none. Its last event when that one is (the file's largest stamp once its order is
 * checked, as the merge checks the threads it reads), else by binary search in a file in
 * time order, or a scan of one that is not. */
static uint64_t walk_last_at(atf_session_reader *r, atf_session_thread *th, uint64_t to,
                             int *found) {
    const atf_index_reader *ix = &th->reader.index;
    atf_index_event ev;
    uint64_t i, best = 0;
    *found = 0;
    if (!ix->event_count) return 0;
    if (th->time_max_ns <= to) {
        *found = 1;
        return th->time_max_ns;
    }
    if (atf_session_reader_check_order(r, th) == 0) {
        if (th->time_max_ns <= to) {
            *found = 1;
            return th->time_max_ns;
        }
        i = atf_index_reader_seek(ix, to + 1, NULL); /* to < time_max_ns: no overflow */
        if (i == 0 || atf_index_reader_get(ix, i - 1, &ev) != ATF_OK) return 0;
        *found = 1;
        return ev.timestamp_ns;
    }
    for (i = 0; i < ix->event_count; i++)
        if (atf_index_reader_get(ix, i, &ev) == ATF_OK && ev.timestamp_ns <= to &&
            (!*found || ev.timestamp_ns > best)) {
            best = ev.timestamp_ns;
            *found = 1;
        }
    return best;
}

/* When the process of s was last seen in its window: the latest event in it of any of its
 * threads that opened (whatever the view selects: a frame's end does not depend on which
 * threads are shown); 0 when none has one. Reads each thread's last event, and searches
 * only the threads whose last event lies past --to. */
static uint64_t walk_process_end(cli_trace *s) {
    const cli_window *win = &s->window;
    uint64_t end = 0;
    size_t i;
    for (i = 0; i < s->reader.thread_count; i++) {
        atf_session_thread *th = &s->reader.threads[i];
        uint64_t last;
        int found;
        if (th->open_result != ATF_OK) continue;
        last = walk_last_at(&s->reader, th, win->to_ns, &found);
        if (found && (!win->has_from || last >= win->from_ns) && last > end) end = last;
    }
    return end;
}

/* Whether gap g, met before an event of the window, is in it: after an earlier event of
 * the thread in the window it is; before the first one, only when its first lost event
 * is known to be no earlier than --from (the loss may as well lie before the window). */
static int walk_gap_in_window(const cli_trace *s, const walk_thread *t, const atf_gap *g) {
    return t->events || !s->window.has_from || g->first_lost_ns >= s->window.from_ns;
}

/* Whether the gaps of thread th past its last event are in the trace's window: they
 * follow that event, so when it is. */
static int walk_end_in_window(const cli_trace *s, const atf_session_thread *th) {
    const cli_window *win = &s->window;
    if (!win->has_from && !win->has_to) return 1;
    return th->reader.index.event_count && cli_window_has(win, th->time_max_ns);
}

/* Runs every event of the source's selected threads (or only slot *only) in its window
 * through the walk in merged time order, then closes what is still open. ATF_E_NOMEM on
 * failure. The merge seeks to the window; events past its end stop the walk (the merge
 * itself stops there, except for --to 0, which it reads as no bound). */
atf_result walk_run(walk_ctx *w, cli_trace *s, const uint32_t *only, cli_progress *p) {
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter f;
    atf_result rc;
    size_t i;
    w->src = s;
    cli_trace_filter(s, &f);
    if (only) {
        f.slots = only;
        f.slot_count = 1;
    }
    rc = atf_merge_init(&m, &s->reader, &f);
    if (rc != ATF_OK) return rc;
    w->probes += m.probes;
    w->end_ns = walk_process_end(s);
    while (atf_merge_next(&m, &it) == ATF_OK && it.event.timestamp_ns <= s->window.to_ns) {
        size_t ti = (size_t)(it.thread - s->reader.threads);
        if (it.gap && walk_gap_in_window(s, &w->threads[ti], it.gap))
            walk_gap(w, ti, it.gap, it.event.timestamp_ns);
        walk_pauses_before(w, ti, &it.thread->reader, it.seq);
        walk_event(w, ti, it.event.kind, it.event.function_id, it.event.timestamp_ns,
                   it.event.detail_seq);
        CLI_PROGRESS_TICK(p);
    }
    atf_merge_deinit(&m);
    for (i = 0; i < w->count && i < s->reader.thread_count; i++) { /* gaps at the end */
        const atf_session_thread *th = &s->reader.threads[i];
        const atf_thread_reader *t = &th->reader;
        size_t k = t->gap_count;
        if (only ? th->slot != *only || th->open_result != ATF_OK : !cli_trace_selected(s, i))
            continue;
        if (!walk_end_in_window(s, th)) continue;
        while (k > 0 && t->gaps[k - 1].index_seq >= t->index.event_count) k--;
        for (; k < t->gap_count; k++) walk_gap(w, i, &t->gaps[k], UINT64_MAX);
    }
    for (i = 0; i < w->count; i++) walk_finish_thread(w, i);
    return w->nomem ? ATF_E_NOMEM : ATF_OK;
}
