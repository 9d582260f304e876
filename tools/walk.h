/* walk.h - call/return pairing per thread, shared by stats, tree, export and diff.
 * SPDX-License-Identifier: MIT
 *
 * Calls and returns are paired per thread with a stack, by the same rules for every
 * command, so that unbalanced input never throws off the rest of the trace:
 *   - a return (or an exception, which unwinds like a return) of the top frame closes it;
 *   - a return of a function further down the stack first closes every frame above it
 *     at the return's timestamp ("unwound": e.g. a longjmp, or an exception that left
 *     functions which recorded no exit), then that function's frame;
 *   - a return of a function not on the stack (the trace started inside the call, or the
 *     call was dropped) is counted and ignored;
 *   - frames still open when a thread's events end are "cut short": the thread was in
 *     them when its process was last seen (killed, ended without returning, or a thread
 *     that simply recorded nothing more while the others went on), or when a bound of the
 *     recording stopped it (a gap of reason "stopped" after the thread's last event).
 *     They end when the process was last seen: the latest event of any of its threads
 *     (walk_ctx.end_ns; never before the thread's own last event), counted in cut_short
 *     and left with WALK_LEAVE_CUT, so that a `main` whose thread recorded only its call
 *     lasts as long as the process did;
 *   - where the recorder lost events (a gap of gaps.atf: the merge marks the first event
 *     after it; gaps at or past the thread's event count follow its last event; a gap of
 *     reason "stopped" there ends the thread's recording: see above), the frames
 *     open in that thread are closed at its last event before the gap and counted as
 *     "cut by a gap": what they did up to there counts, nothing is paired across the
 *     hole, and a return after the gap whose call came before it finds an empty stack
 *     and is ignored like any return without a matching call; too-deep calls skipped
 *     before the gap are forgotten with their frames;
 *   - calls nested deeper than WALK_MAX_DEPTH frames are counted and skipped together
 *     with their returns, so memory stays bounded whatever the input;
 *   - the recorder's own pauses (pauses.atf: the thread wrote its full ring itself) lie
 *     between two events of their thread, so inside every frame open there: each frame
 *     keeps the pause time inside it (paused_ns), and walk_frame_ns / walk_frame_self_ns
 *     give its times without it, as every command reports them. Pauses before the
 *     thread's first event in the window, or after its last, lie in no frame walked.
 * The walk sees the trace through its view (core.h): only the events of the window, from
 * the merge's seek, as if the trace held nothing else, so its edges are the trace's ends
 * above (the gaps past a thread's last event count when that event is in the window; the
 * process was last seen at its latest event in the window, of any thread whatever
 * --thread picks);
 * with --function every frame is paired as always, but only the subtrees rooted at the
 * calls of those functions reach the callbacks (depths stay those of the whole stack;
 * walk_depth_in_subtree counts them from the subtree's root), and every gap.
 * Memory is O(distinct functions + threads x (stack depth + functions on the stack));
 * nothing grows with the number of events. */
#ifndef ATF_TOOLS_WALK_H
#define ATF_TOOLS_WALK_H

#include "core.h"

/* Frames tracked per thread; deeper calls are counted and skipped (see the top). */
#ifndef WALK_MAX_DEPTH
#  define WALK_MAX_DEPTH 262144u
#endif

/* ==== hash map: u64 -> u64 =========================================================== */
typedef struct walk_slot {
    uint64_t key, val;
    uint32_t used;
} walk_slot;

typedef struct walk_map {
    walk_slot *slots;
    size_t cap, count;           /* cap is 0 or a power of two */
} walk_map;

uint64_t *walk_map_find(const walk_map *m, uint64_t key);
/* The value of key, inserted as 0 (and *is_new set) when absent; NULL when out of memory. */
uint64_t *walk_map_put(walk_map *m, uint64_t key, int *is_new);
void walk_map_free(walk_map *m);

/* ==== the set of function ids on a stack ============================================= */
#define WALK_FID_EMPTY UINT64_MAX        /* marks a free slot; that id itself is has_max */

typedef struct walk_fidset {
    uint64_t *keys;
    size_t cap, count;           /* cap is 0 or a power of two */
    unsigned shift;              /* 64 - log2(cap) */
    int has_max;                 /* the id WALK_FID_EMPTY is in the set */
} walk_fidset;

int walk_fidset_has(const walk_fidset *s, uint64_t k);
/* Adds k: 1 when it was absent, 0 when present, -1 when out of memory. */
int walk_fidset_add(walk_fidset *s, uint64_t k);
void walk_fidset_del(walk_fidset *s, uint64_t k);

/* ==== the walk ======================================================================= */
enum { WALK_LEAVE_RETURN = 0, WALK_LEAVE_UNWOUND = 1,
       WALK_LEAVE_CUT = 2,           /* cut short: open when the thread's events end, closed
                                        when its process was last seen (see the top) */
       WALK_LEAVE_AT_GAP = 3,
       WALK_LEAVE_EXCEPTION = 4 };   /* closed by its exception event (left by a throw or a
                                        longjmp, as the recorder saw it) */

typedef struct walk_frame {
    uint64_t fid, start_ns;
    uint64_t child_ns;           /* time spent in direct callees (their walk_frame_ns) */
    uint64_t paused_ns;          /* the recorder's pauses inside it, its callees' included */
    uint64_t outermost;          /* no other frame of fid below it on the stack */
    uint64_t detail_seq;         /* the call event's detail link; ATF_NO_DETAIL: none */
    uint32_t focus;              /* a call of a --function function */
} walk_frame;

typedef struct walk_thread {
    walk_frame *stack;
    size_t depth, cap;
    uint64_t skipped;            /* open calls beyond WALK_MAX_DEPTH, not tracked */
    walk_fidset active;          /* the functions that have a frame on the stack */
    uint64_t events, first_ns, last_ns;
    uint64_t unmatched;          /* returns with no matching call, ignored */
    uint64_t begun_before;       /* of those, after events the flight recorder discarded:
                                    the ends of calls that began before the kept events */
    int after_discard;           /*   such a gap was met */
    uint64_t unwound;            /* frames closed by the return of an outer frame */
    uint64_t cut_short;          /* frames open at the thread's end, closed when its
                                    process was last seen (WALK_LEAVE_CUT) */
    uint64_t too_deep;           /* calls skipped for depth */
    uint64_t gaps;               /* gaps met (where the recorder lost events) */
    uint64_t lost;               /* index events lost in them */
    uint64_t not_recorded;       /* events left out by choice (gaps of reason "stopped":
                                    after a bound; "skipped": recording off), not counted
                                    in gaps and lost */
    uint64_t cut_by_gap;         /* frames closed at the last event before a gap (not
                                    the stop's: those are cut short) */
    uint64_t pauses, paused_ns;  /* the recorder's pauses met, and their time */
    size_t pause_next;           /* the first pause of the thread not met yet */
    uint64_t last_seq;           /* index_seq of its latest event */
    size_t focus;                /* frames on the stack with focus set */
    size_t focus_base;           /* the depth of the outermost of them (0: none) */
} walk_thread;

typedef struct walk_ctx {
    walk_thread *threads;        /* one per thread of the reader, same order */
    size_t count;
    int nomem;
    uint64_t probes;             /* binary-search probes of the merges' seeks to the window */
    const cli_trace *src;        /* the trace being walked (set by walk_run) */
    uint64_t end_ns;             /* when its process was last seen: its latest event in
                                    the window, of any thread (set by walk_run) */
    int by_name;                 /* functions of one shown name are one function: each id
                                    is walked as cli_trace_alias's (set before walk_run,
                                    once cli_trace_by_name said 1; --function still
                                    selects by the ids themselves) */
    void *ctx;
    /* a frame opens at depth `depth` (0 = outermost) */
    void (*enter)(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth);
    /* a frame closes; `outermost`: no other frame of the function is on the stack */
    void (*leave)(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                  int how, int outermost);
    /* a return with no matching frame, ignored; depth = the stack's */
    void (*unmatched)(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth);
    /* events were lost at time ts (the frames open before it are closed already) */
    void (*gap)(void *ctx, size_t ti, const atf_gap *g, uint64_t ts);
    /* the recorder held the thread during p, inside the `depth` frames open */
    void (*pause)(void *ctx, size_t ti, const atf_pause *p, size_t depth);
} walk_ctx;

/* 0 when out of memory. */
int walk_init(walk_ctx *w, size_t thread_count);
void walk_deinit(walk_ctx *w);
/* Runs every event of the trace's selected threads (or only slot *only) in its window
 * through the walk in merged time order, then closes what is still open. ATF_E_NOMEM on
 * failure. */
atf_result walk_run(walk_ctx *w, cli_trace *s, const uint32_t *only, cli_progress *p);
/* A frame's time when it ends at end_ns, the recorder's pauses inside it left out; and its
 * self time (that, less its callees'). */
uint64_t walk_frame_ns(const walk_frame *f, uint64_t end_ns);
uint64_t walk_frame_self_ns(const walk_frame *f, uint64_t end_ns);
/* A depth a callback of thread ti was given, counted from the root of the --function
 * subtree it is in (0 for the root); the depth itself without --function. */
size_t walk_depth_in_subtree(const walk_ctx *w, size_t ti, size_t depth);

/* Whether the events of gap g were left out by choice (a bound stopped recording, it was
 * off, or the flight recorder kept later ones: reasons "stopped", "skipped",
 * "discarded"), not lost; the word for them: "not recorded" or "lost"; and the events of
 * a thread's gaps left out by choice. */
int walk_gap_by_choice(const atf_gap *g);
const char *walk_gap_verb(const atf_gap *g);
uint64_t walk_not_recorded(const atf_thread_reader *tr);

#endif /* ATF_TOOLS_WALK_H */
