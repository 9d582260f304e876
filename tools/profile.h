/* profile.h - what stats, export --format folded and diff add up from the walk: the
 * figures of each function and of each call path, and the names that match them.
 * SPDX-License-Identifier: MIT
 *
 * profile_collect runs each selected thread of a trace through the walk (walk.h: its
 * pairing rules, its gaps, the recorder's pauses left out of every time) and adds up:
 *   - per function id (profile_fns): calls, total time (its outermost calls only: a
 *     recursive function counts once), self time (not in its callees), and the min, sum
 *     and max of its calls' times; under --demangle short, the ids of one name (a
 *     template's instances) are one function, under the smallest of them (walk.h);
 *   - per call path (profile_paths): a tree whose node is a function called along the
 *     path of its parent node (the root's children are the outermost calls), with that
 *     path's calls, total time and self time. A path never nests in itself, so its total
 *     counts every call of it once; the self times of the paths under a path add up to
 *     its total, and those of a thread's paths to the time of its outermost calls.
 *     Nodes are matched by name, never by id (ids are per process), so that the paths of
 *     several processes, or of two traces, add up where their names agree: every node
 *     holds the figures of PROFILE_SIDES sides (diff's A and B; one side elsewhere).
 *     Each thread's paths may hang under a frame of their own that names the thread
 *     (profile_frame_mode): then threads of one name share their paths, or (TID) none do.
 *     A thread's frame, and the root, count the outermost calls under them (calls and
 *     total time; no self time): every thread's of that frame, every thread's.
 *   - optionally pruned (atf report): a picture needs only the paths whose total is a
 *     visible share of the whole, and a trace whose every call takes a path of its own
 *     would cost a node per call. A first walk adds each call's time to a sketch keyed by
 *     its path (profile_sketch_collect); the second makes a node only for a path whose
 *     time in the sketch reaches a bound (paths.prune, prune_ns), and leaves every other
 *     call out with all it calls. The sketch never counts a path short, so every path
 *     at or above the bound is kept, with its exact figures (a few below it may be kept
 *     too); a kept node's children then add up to less than its total less its self
 *     time: the difference is the time of the paths left out under it.
 * Memory: O(distinct functions + distinct paths); nothing grows with the events. */
#ifndef ATF_TOOLS_PROFILE_H
#define ATF_TOOLS_PROFILE_H

#include "core.h"
#include "walk.h"

/* ==== names ========================================================================== */
/* Each distinct name once, with a small id; ids are given in the order names come. The
 * nodes of the paths name frames of a folded stack: their names are valid UTF-8, with ';'
 * and control characters as '_' (names that read the same then are one frame). */
typedef struct profile_name {
    char *text;
    uint64_t hash;
} profile_name;

typedef struct profile_names {
    profile_name *items;
    size_t count, cap;
    uint32_t *slots;                /* open addressing: 1 + the id, 0 when free */
    size_t slot_cap;                /* 0 or a power of two */
} profile_names;

/* The id of s, added when new; UINT32_MAX when out of memory. */
uint32_t profile_name_id(profile_names *n, const char *s);
void profile_names_free(profile_names *n);

/* ==== per function =================================================================== */
typedef struct profile_fn {
    uint64_t fid, calls;
    uint64_t total_ns;              /* outermost calls only (recursion counted once) */
    uint64_t self_ns, min_ns, max_ns;
    uint64_t sum_ns;                /* every call's time, for the average */
    const char *name;               /* as the tools print it (profile_fns_name), or NULL */
    char hex[20];                   /* the id as 0x%016llx, when it has no symbol */
} profile_fn;

typedef struct profile_fns {        /* zeroed before the first collect */
    walk_map index;                 /* fid -> position in fns */
    profile_fn *fns;
    size_t count, cap;
} profile_fns;

const profile_fn *profile_fns_find(const profile_fns *f, uint64_t fid);
/* Sets each function's name as t names it (cli_trace_name): valid while t is open. */
void profile_fns_name(profile_fns *f, const cli_trace *t);
void profile_fns_free(profile_fns *f);

enum { PROFILE_SIDES = 2 };

/* ==== per function name ============================================================== */
/* The functions of one or two traces (diff's A and B) by name: ids that share a name add
 * up (their totals too), and a function of one side only has zeros in the other. */
typedef struct profile_named {
    uint32_t name;                  /* an id of the names the rows were added with */
    uint64_t calls[PROFILE_SIDES], total_ns[PROFILE_SIDES], self_ns[PROFILE_SIDES];
} profile_named;

typedef struct profile_by_name {    /* zeroed before the first add */
    walk_map rows;                  /* name id -> position in items */
    profile_named *items;
    size_t count, cap;
} profile_by_name;

/* Adds the functions of f (named by profile_fns_name) to side `side` of b, their names
 * to names. ATF_E_NOMEM when out of memory. */
atf_result profile_by_name_add(profile_by_name *b, profile_names *names, const profile_fns *f,
                               size_t side);
void profile_by_name_free(profile_by_name *b);

/* ==== per call path ================================================================== */
enum { PROFILE_ROOT = 0 };          /* node 0: above every path, no frame of its own */

typedef struct profile_node {
    uint32_t parent, name;          /* name: an id of the paths' names */
    uint32_t is_thread;             /* a thread's frame (profile_frame_mode), not a call */
    uint64_t calls[PROFILE_SIDES], total_ns[PROFILE_SIDES], self_ns[PROFILE_SIDES];
} profile_node;

/* A count-min sketch of the time of every call path (two rows of counters, each path
 * hashed to one counter per row; its time is at most the smaller of the two). */
enum { PROFILE_SKETCH_ROWS = 2 };

typedef struct profile_sketch {
    uint64_t *cells;                /* PROFILE_SKETCH_ROWS rows of mask + 1 counters */
    size_t mask;                    /* a power of two less 1 */
    uint64_t outer_ns[PROFILE_SIDES]; /* the time of the outermost calls, per side */
} profile_sketch;

/* A sketch of 2^bits counters per row: ATF_OK or ATF_E_NOMEM. */
atf_result profile_sketch_init(profile_sketch *k, unsigned bits);
void profile_sketch_free(profile_sketch *k);

typedef struct profile_paths {      /* zeroed before the first collect */
    profile_names names;
    profile_node *nodes;            /* [PROFILE_ROOT] is the root once a node is added */
    size_t count, cap;
    walk_map children;              /* parent << 32 | name -> node */
    const profile_sketch *prune;    /* optional: only the paths whose time in it reaches */
    uint64_t prune_ns;              /*   prune_ns get a node (see the top) */
} profile_paths;

void profile_paths_free(profile_paths *p);

/* How each thread's paths begin (atf export --format folded, atf diff: --thread-frame). */
typedef enum profile_frame_mode {
    PROFILE_FRAME_NAME = 0,         /* under a frame: the thread's name (cli_thread_name) */
    PROFILE_FRAME_TID = 1,          /* under "NAME-PID/TID" (stackcollapse-perf's --tid) */
    PROFILE_FRAME_NONE = 2          /* at the root: every thread's paths add up */
} profile_frame_mode;

/* --thread-frame's value (name, tid, none) into *mode: CLI_CONTINUE, else the usage
 * error's status. */
int profile_parse_frame_mode(const cli_command *cmd, const char *text, profile_frame_mode *mode);

/* The nodes but the root in the order of a folded output into *order (count - 1 of
 * them; free it): each path before the paths that extend it, and siblings by their
 * frames' bytes. ATF_E_NOMEM when out of memory (*order NULL). */
atf_result profile_paths_order(const profile_paths *p, uint32_t **order);

/* A growable text. */
typedef struct profile_text {
    char *s;
    size_t len, cap;
} profile_text;

/* The path of node: the frames from the outermost down, joined by ';', into t (NUL
 * ended). 0 when out of memory. */
int profile_path_text(const profile_paths *p, uint32_t node, profile_text *t);

/* ==== collecting ===================================================================== */
/* Walks every selected thread of s, one after the other (each a sequential scan), adding
 * its calls to fns (optional) and to side `side` of paths (optional; each thread's under
 * its frame, by mode). w is initialized here and kept for the threads' figures:
 * walk_deinit it afterwards, also on failure. ATF_E_NOMEM when out of memory. */
atf_result profile_collect(cli_trace *s, walk_ctx *w, profile_fns *fns, profile_paths *paths,
                           size_t side, profile_frame_mode mode, cli_progress *p);
/* The same walk adding every call's time to the sketch k under its path (as profile_collect
 * would name it in that mode), and the time of the outermost calls to k->outer_ns[side];
 * fns as above (optional). */
atf_result profile_sketch_collect(cli_trace *s, walk_ctx *w, profile_fns *fns,
                                  profile_sketch *k, size_t side, profile_frame_mode mode,
                                  cli_progress *p);

#endif /* ATF_TOOLS_PROFILE_H */
