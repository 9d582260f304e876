/* report_cmd.c - atf report: one self-contained HTML file with a flame graph of the call
 * paths, the per-function table, a timeline of the threads for a window and the session's
 * facts; with --base, the flame graph coloured by the change from another trace.
 * SPDX-License-Identifier: MIT
 *
 * The page is tools/report.html (its HTML, CSS and script, written by hand), compiled in
 * as tools/report_page.h (tools/report_page.sh makes it: a C string per line). Its line
 * "ATF_REPORT_DATA" becomes the report's data: one JSON object in a
 * <script type="application/json"> element, every '<', '>', '&', '/', ':', '=', '(' and
 * '@' of its strings escaped (report_str_max), so that no name can end the element or
 * read as a URL; the page's script reads it with JSON.parse and builds the DOM with
 * textContent only.
 *
 * The data are aggregates, never events, within byte budgets whatever the trace:
 *   - the flame graph: the call paths (profile.c) in two walks, the first filling a
 *     sketch, the second making only the paths of at least --prune of the time (pruned
 *     paths are left out with what they call; each kept path's figures are exact), then
 *     the largest paths (a path's callers are never smaller) up to REPORT_FLAME_BYTES;
 *   - the function table: the first --top functions by self time (as atf stats);
 *     with --base, the first --top by the change in self time (as atf diff);
 *   - the timeline: a third walk over the window alone (the merge seeks to it), its
 *     longest slices up to REPORT_SLICES_MAX and REPORT_TIMELINE_BYTES, with the
 *     detail records of their calls, and its gaps and pauses;
 *   - the facts: the manifest's and the walk's, per thread. */
#include "core.h"
#include "profile.h"
#include "walk.h"
#include "report_page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    REPORT_TOP_DEFAULT = 500,            /* rows of the function table */
    REPORT_FLAME_BYTES = 2000000,        /* of the flame graph's nodes and names */
    REPORT_TABLE_BYTES = 500000,         /* of the function table */
    REPORT_TIMELINE_BYTES = 1200000,     /* of the timeline's slices, names and marks */
    REPORT_SLICES_MAX = 20000,           /* slices kept while walking the window */
    REPORT_MARKS_MAX = 2000,             /* gaps and pauses on the timeline */
    REPORT_NAME_MAX = 240,               /* bytes of a name kept (cut on a character) */
    REPORT_SKETCH_BITS = 19,             /* 2^19 counters per row: 8 MiB */
    REPORT_SAMPLES = 65536               /* timestamps read per thread to find the window */
};
/* The default window of the timeline, and the default --prune (a share of the time). */
#define REPORT_WINDOW_NS 2000000ull
#define REPORT_PRUNE_DEFAULT 0.001

/* ==== strings: JSON that cannot end its script element =============================== */
/* s, cut to max bytes on a character (an ellipsis where it was cut), as a JSON string with
 * '<', '>', '&', '/', ':', '=', '(' and '@' as \uXXXX (so that no text of the data can end
 * its element, nor read as a URL, an attribute or a style's import, even to a search of
 * the file), to the output; returns the bytes written (0 when out of memory: then "" is
 * written). */
static size_t report_str_max(const char *s, size_t max) {
    size_t len = strlen(s), n, i, k = 0;
    char *clean, *esc, *out;
    if (len > max) len = max;
    clean = (char *)malloc(len + 4);
    esc = (char *)malloc(CLI_JSON_ROOM(len + 4));
    out = (char *)malloc(CLI_JSON_ROOM(len + 4) * 6);
    if (!clean || !esc || !out) {
        free(clean);
        free(esc);
        free(out);
        cli_print("\"\"");
        return 0;
    }
    n = cli_utf8_clean(s, clean, len);
    if (strlen(s) > max) {
        memcpy(clean + n, "\xe2\x80\xa6", 3);
        n += 3;
    }
    n = cli_json_escape(clean, n, esc);
    for (i = 0; i < n; i++) {
        char c = esc[i];
        if (c == '<' || c == '>' || c == '&' || c == '/' || c == ':' || c == '=' || c == '(' ||
            c == '@') {
            snprintf(out + k, 7, "\\u%04x", (unsigned)c);
            k += 6;
        } else {
            out[k++] = c;
        }
    }
    cli_write(out, k);
    free(clean);
    free(esc);
    free(out);
    return k;
}

/* A name (REPORT_NAME_MAX bytes at most) as above. */
static size_t report_str(const char *s) { return report_str_max(s, REPORT_NAME_MAX); }

/* A time on the trace clock as a JSON string (it may not fit a double exactly). */
static void report_time(uint64_t ts) { cli_printf("\"%llu\"", (cli_ull)ts); }

/* ==== names ========================================================================== */
/* The names the data refer to by number, each once: the flame graph's frames and the
 * timeline's functions. */
typedef struct report_names {
    profile_names set;              /* the names, in the order of their numbers */
    size_t bytes;                   /* an upper bound of their JSON */
} report_names;

/* The number of name s; UINT32_MAX when out of memory. */
static uint32_t report_name(report_names *n, const char *s) {
    size_t before = n->set.count;
    uint32_t id = profile_name_id(&n->set, s);
    if (id != UINT32_MAX && n->set.count > before) {
        size_t len = strlen(s);
        n->bytes += (len < (size_t)REPORT_NAME_MAX ? len : (size_t)REPORT_NAME_MAX) * 6 + 8;
    }
    return id;
}

/* ==== the timeline =================================================================== */
typedef struct report_slice {
    uint64_t start_ns, dur_ns, fid, detail_seq;
    uint32_t ti, depth, how;
} report_slice;

typedef struct report_mark {        /* a gap (dur 0) or a pause */
    uint64_t ts, dur_ns, lost;
    uint32_t ti, reason;
    int is_gap, by_choice;          /* by_choice: a gap of events not recorded */
} report_mark;

typedef struct report_timeline {
    const cli_trace *src;
    const walk_ctx *walk;
    cli_window window;
    const char *chosen;             /* how the window was chosen, for people */
    report_slice *heap;             /* the longest slices: a min-heap by duration */
    size_t count;
    uint64_t slices;                /* every slice of the window */
    report_mark *marks;
    size_t mark_count;
    uint64_t marks_all;
    int nomem;
} report_timeline;

static int report_shorter(const report_slice *a, const report_slice *b) {
    return a->dur_ns < b->dur_ns || (a->dur_ns == b->dur_ns && a->start_ns > b->start_ns);
}

static void report_heap_down(report_slice *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        report_slice t;
        if (l < n && report_shorter(&h[l], &h[m])) m = l;
        if (l + 1 < n && report_shorter(&h[l + 1], &h[m])) m = l + 1;
        if (m == i) return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void report_slice_add(report_timeline *tl, const report_slice *s) {
    tl->slices++;
    if (tl->count < REPORT_SLICES_MAX) {
        size_t i = tl->count++;
        tl->heap[i] = *s;
        while (i && report_shorter(&tl->heap[i], &tl->heap[(i - 1) / 2])) {
            report_slice t = tl->heap[i];
            tl->heap[i] = tl->heap[(i - 1) / 2];
            tl->heap[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (report_shorter(&tl->heap[0], s)) {
        tl->heap[0] = *s;
        report_heap_down(tl->heap, tl->count, 0);
    }
}

static void report_tl_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns,
                            size_t depth, int how, int outermost) {
    report_timeline *tl = (report_timeline *)ctx;
    report_slice s;
    (void)outermost;
    s.start_ns = f->start_ns;
    s.dur_ns = end_ns > f->start_ns ? end_ns - f->start_ns : 0; /* as drawn: pauses in */
    s.fid = f->fid;
    s.detail_seq = f->detail_seq;
    s.ti = (uint32_t)ti;
    s.depth = (uint32_t)walk_depth_in_subtree(tl->walk, ti, depth);
    s.how = (uint32_t)how;
    report_slice_add(tl, &s);
}

static void report_mark_add(report_timeline *tl, const report_mark *m) {
    tl->marks_all++;
    if (tl->mark_count < REPORT_MARKS_MAX) tl->marks[tl->mark_count++] = *m;
}

static void report_tl_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    report_mark m;
    memset(&m, 0, sizeof m);
    m.ts = ts;
    m.lost = g->index_lost;
    m.ti = (uint32_t)ti;
    m.reason = g->reason;
    m.is_gap = 1;
    m.by_choice = walk_gap_by_choice(g);
    report_mark_add((report_timeline *)ctx, &m);
}

static void report_tl_pause(void *ctx, size_t ti, const atf_pause *p, size_t depth) {
    report_mark m;
    (void)depth;
    memset(&m, 0, sizeof m);
    m.ts = p->start_ns;
    m.dur_ns = p->end_ns - p->start_ns;
    m.ti = (uint32_t)ti;
    m.reason = p->reason;
    report_mark_add((report_timeline *)ctx, &m);
}

/* The busiest REPORT_WINDOW_NS of the selected threads between first and last (their
 * events in time buckets of an eighth of it, from REPORT_SAMPLES evenly spaced events of
 * each thread; the window of the most) into *w. */
static void report_busiest(const cli_trace *t, uint64_t first, uint64_t last, cli_window *w) {
    uint64_t bucket = REPORT_WINDOW_NS / 8, span = last - first;
    size_t nb, i, k, at = 0, per;
    double *count;
    w->has_from = w->has_to = 1;
    w->from_ns = first;
    w->to_ns = last;
    if (span <= REPORT_WINDOW_NS) return;
    if (span / bucket > ((size_t)1 << 22)) bucket = span >> 22; /* at most 4 M buckets */
    nb = (size_t)(span / bucket) + 1;
    per = (size_t)(REPORT_WINDOW_NS / bucket);
    if (per < 1) per = 1;
    if ((count = (double *)calloc(nb, sizeof *count)) == NULL) {
        w->to_ns = first + REPORT_WINDOW_NS - 1; /* no memory to choose: the first */
        return;
    }
    for (i = 0; i < t->reader.thread_count; i++) {
        const atf_index_reader *r = &t->reader.threads[i].reader.index;
        uint64_t n, s, samples;
        if (!cli_trace_selected(t, i) || (n = r->event_count) == 0) continue;
        samples = n < (uint64_t)REPORT_SAMPLES ? n : (uint64_t)REPORT_SAMPLES;
        for (s = 0; s < samples; s++) {
            atf_index_event ev;
            if (atf_index_reader_get(r, s * n / samples, &ev) != ATF_OK) continue;
            if (ev.timestamp_ns < first || ev.timestamp_ns > last) continue;
            count[(ev.timestamp_ns - first) / bucket] += (double)n / (double)samples;
        }
    }
    {
        double run = 0, top = -1;
        for (k = 0; k < nb; k++) {
            run += count[k];
            if (k >= per) run -= count[k - per];
            if (run > top) {
                top = run;
                at = k + 1 >= per ? k + 1 - per : 0;
            }
        }
    }
    free(count);
    w->from_ns = first + (uint64_t)at * bucket;
    w->to_ns = w->from_ns + REPORT_WINDOW_NS - 1;
    if (w->to_ns > last) w->to_ns = last;
}

/* Walks the window of tl into tl: ATF_OK or the walk's error. */
static atf_result report_timeline_walk(report_timeline *tl, cli_trace *t) {
    walk_ctx w;
    cli_window whole = t->window;
    cli_progress p;
    atf_result rc;
    tl->heap = (report_slice *)malloc(REPORT_SLICES_MAX * sizeof *tl->heap);
    tl->marks = (report_mark *)malloc(REPORT_MARKS_MAX * sizeof *tl->marks);
    if (!tl->heap || !tl->marks || !walk_init(&w, t->reader.thread_count)) return ATF_E_NOMEM;
    w.ctx = tl;
    w.leave = report_tl_leave;
    w.gap = report_tl_gap;
    w.pause = report_tl_pause;
    tl->walk = &w;
    tl->src = t;
    t->window = tl->window;
    cli_progress_init(&p, "atf report timeline", 0, NULL);
    rc = walk_run(&w, t, NULL, &p);
    cli_progress_end(&p);
    t->window = whole;
    tl->walk = NULL;
    walk_deinit(&w);
    return rc;
}

static int report_by_start(const void *x, const void *y) {
    const report_slice *a = (const report_slice *)x, *b = (const report_slice *)y;
    if (a->ti != b->ti) return a->ti < b->ti ? -1 : 1;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    return (a->depth > b->depth) - (a->depth < b->depth);
}

/* ,"args":{...} of a slice's detail record (nothing when it cannot be read). */
static void report_args(const cli_trace *s, const report_slice *sl) {
    const atf_thread_reader *t = &s->reader.threads[sl->ti].reader;
    atf_detail_event ev;
    atf_detail_payload fn;
    size_t i;
    if (sl->detail_seq == ATF_NO_DETAIL || !t->has_detail ||
        atf_detail_reader_get(&t->detail, sl->detail_seq, &ev) != ATF_OK) {
        cli_print(",null");
        return;
    }
    memset(&fn, 0, sizeof fn);
    if ((ev.header.type != ATF_DETAIL_FUNCTION_CALL &&
         ev.header.type != ATF_DETAIL_FUNCTION_RETURN) ||
        atf_detail_payload_decode(ev.payload, ev.payload_len, &fn) != ATF_OK) {
        cli_printf(",{\"detail_type\":\"%u\",\"detail_bytes\":\"%u\"}", (unsigned)ev.header.type,
                   (unsigned)ev.payload_len);
        return;
    }
    cli_printf(",{\"function_id\":\"0x%016llx\"", (cli_ull)fn.function_id);
    for (i = 0; i < 8; i++) cli_printf(",\"x%u\":\"0x%016llx\"", (unsigned)i, (cli_ull)fn.x[i]);
    cli_printf(",\"lr\":\"0x%016llx\",\"fp\":\"0x%016llx\",\"sp\":\"0x%016llx\","
               "\"stack_size\":\"%u\"}", (cli_ull)fn.lr, (cli_ull)fn.fp, (cli_ull)fn.sp,
               (unsigned)fn.stack_size);
}

/* ==== the report ===================================================================== */
typedef struct report_state {
    cli_trace *t, *base;            /* base: optional (--base) */
    walk_ctx walk;                  /* the first walk of t: the threads' figures */
    profile_fns fns, base_fns;
    profile_sketch sketch;
    profile_paths paths;            /* side 0: t; side 1: base */
    profile_by_name byname;         /* with --base: the functions of both by name */
    profile_names fn_names;         /*   their names */
    report_timeline tl;
    report_names names;             /* the frames and functions the data number */
    profile_frame_mode mode;
    double prune;                   /* a share of the time */
    uint64_t prune_ns;
    size_t top;
    uint64_t first_ns, last_ns;     /* of the selected threads' events */
} report_state;

static int report_cmp_desc(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

/* The per-function table, by self time (ties by id): as atf stats sorts it. */
static int report_by_self(const void *x, const void *y) {
    const profile_fn *a = (const profile_fn *)x, *b = (const profile_fn *)y;
    int c = report_cmp_desc(a->self_ns, b->self_ns);
    return c ? c : (a->fid > b->fid) - (a->fid < b->fid);
}

/* |b - a| of side 1 against side 0 */
static uint64_t report_change(const uint64_t *v) { return v[1] > v[0] ? v[1] - v[0] : v[0] - v[1]; }

/* The diff table: by the change in self time (ties by name), as atf diff sorts it. */
static const profile_names *report_sort_names;
static int report_by_change(const void *x, const void *y) {
    const profile_named *a = (const profile_named *)x, *b = (const profile_named *)y;
    int c = report_cmp_desc(report_change(a->self_ns), report_change(b->self_ns));
    return c ? c : strcmp(report_sort_names->items[a->name].text,
                          report_sort_names->items[b->name].text);
}

/* The flame graph's nodes by size: the larger total of either side first, ties by node
 * (a path's callers were made before it). */
typedef struct report_ranked {
    uint64_t size;
    uint32_t node;
} report_ranked;

static int report_by_size(const void *x, const void *y) {
    const report_ranked *a = (const report_ranked *)x, *b = (const report_ranked *)y;
    int c = report_cmp_desc(a->size, b->size);
    return c ? c : (a->node > b->node) - (a->node < b->node);
}

/* An upper bound of the JSON bytes of a node. */
static size_t report_node_bytes(const profile_node *n, size_t sides) {
    size_t k, b = 24;
    for (k = 0; k < sides; k++)
        b += cli_digits(n->calls[k]) + cli_digits(n->total_ns[k]) + cli_digits(n->self_ns[k]) + 3;
    return b;
}

/* "flame": the nodes kept (the largest first, within REPORT_FLAME_BYTES), in the order of
 * their numbers, each [parent, name, calls, total, self] (and the base's three figures):
 * the root is node 0, its name -1. ATF_E_NOMEM when out of memory. */
static atf_result report_flame(report_state *r) {
    const profile_paths *p = &r->paths;
    size_t sides = r->base ? 2 : 1, n = p->count, kept = 0, i, k, bytes = 0;
    report_ranked *rank = (report_ranked *)malloc((n + 1) * sizeof *rank);
    uint32_t *number = (uint32_t *)malloc((n + 1) * sizeof *number);
    uint32_t *name = (uint32_t *)malloc((n + 1) * sizeof *name);
    uint64_t left_out = 0;
    if (!rank || !number || !name) {
        free(rank);
        free(number);
        free(name);
        return ATF_E_NOMEM;
    }
    for (i = 0; i < n; i++) {
        const profile_node *q = &p->nodes[i];
        rank[i].size = q->total_ns[0] > q->total_ns[1] ? q->total_ns[0] : q->total_ns[1];
        rank[i].node = (uint32_t)i;
        number[i] = UINT32_MAX;
    }
    qsort(rank, n, sizeof *rank, report_by_size);
    for (i = 0; i < n; i++) { /* the root first: no path is larger than it */
        uint32_t q = rank[i].node;
        size_t names_before = r->names.bytes;
        if (q != PROFILE_ROOT) {
            uint32_t parent = p->nodes[q].parent;
            if (number[parent] == UINT32_MAX) continue; /* never: a parent is never smaller */
            name[q] = report_name(&r->names, p->names.items[p->nodes[q].name].text);
            if (name[q] == UINT32_MAX) {
                free(rank);
                free(number);
                free(name);
                return ATF_E_NOMEM;
            }
        }
        bytes += report_node_bytes(&p->nodes[q], sides) + (r->names.bytes - names_before);
        if (bytes > REPORT_FLAME_BYTES && q != PROFILE_ROOT) break;
        number[q] = 1; /* numbered below, in node order */
        kept++;
    }
    for (; i < n; i++) left_out++;
    cli_printf("\"flame\":{\"mode\":\"%s\",\"prune\":%.6g,\"prune_ns\":%llu,\"paths\":%llu,"
               "\"kept\":%llu,\"left_out\":%llu,\"sides\":%u,\"nodes\":[",
               r->mode == PROFILE_FRAME_NAME ? "name" : r->mode == PROFILE_FRAME_TID ? "tid" : "none",
               r->prune, (cli_ull)r->prune_ns, (cli_ull)(n ? n - 1 : 0), (cli_ull)kept,
               (cli_ull)left_out, (unsigned)sides);
    for (i = 0, k = 0; i < n; i++) {
        const profile_node *q = &p->nodes[i];
        size_t s;
        if (number[i] == UINT32_MAX) continue;
        number[i] = (uint32_t)k;
        if (i == PROFILE_ROOT) cli_print("\n[-1,-1");
        else cli_printf(",\n[%u,%u", number[q->parent], name[i]);
        for (s = 0; s < sides; s++)
            cli_printf(",%llu,%llu,%llu", (cli_ull)q->calls[s], (cli_ull)q->total_ns[s],
                       (cli_ull)q->self_ns[s]);
        cli_printf(",%u]", (unsigned)q->is_thread);
        k++;
    }
    cli_print("]},\n");
    free(rank);
    free(number);
    free(name);
    return ATF_OK;
}

/* "functions": the first --top functions by self time, as atf stats has them: [name,
 * calls, total, self, min, max, sum]; with --base also "diff": by the change in self
 * time, [name, calls, base calls, total, base total, self, base self]. */
static atf_result report_functions(report_state *r) {
    size_t i, n, bytes = 0;
    profile_fn *fns = r->fns.fns;
    if (r->fns.count) qsort(fns, r->fns.count, sizeof *fns, report_by_self);
    n = r->top && r->top < r->fns.count ? r->top : r->fns.count;
    cli_printf("\"functions\":{\"count\":%llu,\"rows\":[", (cli_ull)r->fns.count);
    for (i = 0; i < n && bytes < REPORT_TABLE_BYTES; i++) {
        const profile_fn *f = &fns[i];
        cli_print(i ? ",\n[" : "\n[");
        bytes += report_str(f->name);
        cli_printf(",%llu,%llu,%llu,%llu,%llu,%llu]", (cli_ull)f->calls, (cli_ull)f->total_ns,
                   (cli_ull)f->self_ns, (cli_ull)f->min_ns, (cli_ull)f->max_ns,
                   (cli_ull)f->sum_ns);
        bytes += 100;
    }
    cli_print("]}");
    if (r->base) {
        profile_by_name *b = &r->byname;
        if (profile_by_name_add(b, &r->fn_names, &r->fns, 0) != ATF_OK ||
            profile_by_name_add(b, &r->fn_names, &r->base_fns, 1) != ATF_OK)
            return ATF_E_NOMEM;
        report_sort_names = &r->fn_names;
        if (b->count) qsort(b->items, b->count, sizeof *b->items, report_by_change);
        n = r->top && r->top < b->count ? r->top : b->count;
        cli_printf(",\n\"diff\":{\"count\":%llu,\"rows\":[", (cli_ull)b->count);
        for (i = 0, bytes = 0; i < n && bytes < REPORT_TABLE_BYTES; i++) {
            const profile_named *f = &b->items[i];
            cli_print(i ? ",\n[" : "\n[");
            bytes += report_str(r->fn_names.items[f->name].text);
            cli_printf(",%llu,%llu,%llu,%llu,%llu,%llu]", (cli_ull)f->calls[0],
                       (cli_ull)f->calls[1], (cli_ull)f->total_ns[0], (cli_ull)f->total_ns[1],
                       (cli_ull)f->self_ns[0], (cli_ull)f->self_ns[1]);
            bytes += 120;
        }
        cli_print("]}");
    }
    cli_print(",\n");
    return ATF_OK;
}

/* The index of thread i among those the facts list (the selected ones). */
static size_t report_thread_number(const cli_trace *t, size_t i) {
    size_t k, n = 0;
    for (k = 0; k < i; k++) n += (size_t)cli_trace_selected(t, k);
    return n;
}

/* "timeline": the window, its slices [thread, depth, start, dur, name, how, args] (times
 * in ns from the window's start), its gaps [thread, at, lost, reason] and pauses [thread,
 * at, dur]. */
static atf_result report_timeline_json(report_state *r) {
    report_timeline *tl = &r->tl;
    const cli_trace *t = r->t;
    uint64_t from = tl->window.from_ns;
    size_t i, shown = 0, bytes = 0, *number;
    number = (size_t *)malloc((t->reader.thread_count + 1) * sizeof *number);
    if (!number) return ATF_E_NOMEM;
    for (i = 0; i < t->reader.thread_count; i++) number[i] = report_thread_number(t, i);
    /* the longest first (heap order is not): sort by duration, keep what fits */
    for (i = tl->count; i > 1; i--) { /* heap sort: the shortest go to the end */
        report_slice s = tl->heap[0];
        tl->heap[0] = tl->heap[i - 1];
        tl->heap[i - 1] = s;
        report_heap_down(tl->heap, i - 1, 0);
    }
    /* now heap[] holds the slices longest first */
    for (i = 0; i < tl->count; i++) {
        char hex[24];
        size_t before = r->names.bytes;
        const char *name = cli_trace_name(t, tl->heap[i].fid, hex, sizeof hex);
        uint32_t id = report_name(&r->names, name);
        if (id == UINT32_MAX) {
            free(number);
            return ATF_E_NOMEM;
        }
        bytes += 48 + (r->names.bytes - before) +
                 (tl->heap[i].detail_seq != ATF_NO_DETAIL ? 400 : 0);
        if (bytes > REPORT_TIMELINE_BYTES) break;
        tl->heap[i].fid = id; /* the name's number from here on */
        shown++;
    }
    qsort(tl->heap, shown, sizeof *tl->heap, report_by_start);
    cli_printf("\"timeline\":{\"from_ns\":");
    report_time(tl->window.from_ns);
    cli_print(",\"to_ns\":");
    report_time(tl->window.to_ns);
    cli_printf(",\"window_ns\":%llu,\"chosen\":", (cli_ull)(tl->window.to_ns - from + 1));
    report_str(tl->chosen);
    cli_printf(",\"slices_all\":%llu,\"marks_all\":%llu,\"slices\":[", (cli_ull)tl->slices,
               (cli_ull)tl->marks_all);
    for (i = 0; i < shown; i++) {
        const report_slice *s = &tl->heap[i];
        cli_printf("%s[%llu,%u,%llu,%llu,%llu,%u", i ? ",\n" : "\n", (cli_ull)number[s->ti],
                   s->depth, (cli_ull)(s->start_ns > from ? s->start_ns - from : 0),
                   (cli_ull)s->dur_ns, (cli_ull)s->fid, s->how);
        report_args(t, s);
        cli_print("]");
    }
    cli_print("],\"marks\":[");
    for (i = 0; i < tl->mark_count; i++) {
        const report_mark *m = &tl->marks[i];
        cli_printf("%s[%llu,%llu,%llu,%llu,", i ? ",\n" : "\n", (cli_ull)number[m->ti],
                   (cli_ull)(m->ts > from ? m->ts - from : 0), (cli_ull)m->dur_ns,
                   (cli_ull)m->lost);
        if (m->is_gap)
            cli_printf("\"gap: %llu events %s (%s)\"]", (cli_ull)m->lost,
                       m->by_choice ? "not recorded" : "lost",
                       atf_gap_reason_str(m->reason));
        else
            cli_print("\"tracer pause\"]");
    }
    (void)bytes;
    cli_print("]},\n");
    free(number);
    return ATF_OK;
}

/* "facts": the session's, and per thread the walk's. */
static void report_facts(report_state *r) {
    const cli_trace *t = r->t;
    const atf_session_reader *s = &t->reader;
    size_t i, first = 1;
    uint64_t events = 0, dropped = 0, gaps = 0, lost = 0, not_recorded = 0, pauses = 0;
    uint64_t paused = 0, unmatched = 0, unwound = 0, cut_short = 0, cut = 0, too_deep = 0;
    int64_t wall;
    cli_printf("\"facts\":{\"pid\":%llu,\"cmdline\":", (cli_ull)cli_trace_pid(t));
    if (s->cmdline) report_str_max(s->cmdline, 8192);
    else cli_print("null");
    cli_print(",\"arch\":");
    report_str(s->arch);
    cli_print(",\"os\":");
    report_str(s->os);
    cli_print(",\"clock\":");
    report_str(atf_clock_str(s->clock_type));
    cli_print(",\"state\":");
    report_str(s->state);
    cli_print(",\"manifest\":");
    report_str(atf_manifest_state_str(s->manifest));
    cli_print(",\"first_ns\":");
    report_time(r->first_ns);
    cli_print(",\"last_ns\":");
    report_time(r->last_ns);
    cli_printf(",\"span_ns\":%llu,\"wall_first_ns\":", (cli_ull)(r->last_ns - r->first_ns));
    if (cli_trace_wall(t, r->first_ns, &wall)) cli_printf("\"%lld\"", (cli_ll)wall);
    else cli_print("null");
    cli_print(",\"stopped\":");
    report_str(s->stopped);
    cli_printf(",\"min_duration_ns\":%llu,\"recording_error\":", (cli_ull)s->min_duration_ns);
    if (s->recording_error) report_str_max(s->recording_error, 2048);
    else cli_print("null");
    cli_print(",\"anchors\":[");
    for (i = 0; i < s->anchor_count; i++) {
        const atf_session_anchor *a = &s->anchors[i];
        cli_print(i ? ",{\"name\":" : "{\"name\":");
        report_str(a->name);
        cli_print(",\"host_ns\":");
        report_time(a->host_ns);
        if (a->timescale > 0) cli_printf(",\"value\":\"%lld\",\"timescale\":%ld}", (cli_ll)a->value,
                                         (long)a->timescale);
        else cli_printf(",\"value\":\"%.17g\",\"timescale\":null}", a->value_f);
    }
    cli_print("],\"threads\":[");
    for (i = 0; i < s->thread_count; i++) {
        const atf_session_thread *th = &s->threads[i];
        const walk_thread *w = &r->walk.threads[i];
        char name[80];
        if (!cli_trace_selected(t, i)) continue;
        cli_printf("%s\n{\"slot\":%u,\"tid\":%u,\"name\":", first ? "" : ",", th->slot,
                   cli_thread_tid(th));
        report_str(cli_thread_name(th, name, sizeof name));
        cli_printf(",\"events\":%llu,\"dropped\":%llu,\"gaps\":%llu,\"lost\":%llu,"
                   "\"not_recorded\":%llu,\"pauses\":%llu,\"paused_ns\":%llu,\"first_ns\":",
                   (cli_ull)w->events, (cli_ull)th->events_dropped, (cli_ull)w->gaps,
                   (cli_ull)w->lost, (cli_ull)w->not_recorded, (cli_ull)w->pauses,
                   (cli_ull)w->paused_ns);
        report_time(w->first_ns);
        cli_print(",\"last_ns\":");
        report_time(w->last_ns);
        cli_print("}");
        first = 0;
        events += w->events;
        dropped += th->events_dropped;
        gaps += w->gaps;
        lost += w->lost;
        not_recorded += w->not_recorded;
        pauses += w->pauses;
        paused += w->paused_ns;
        unmatched += w->unmatched;
        unwound += w->unwound;
        cut_short += w->cut_short;
        cut += w->cut_by_gap;
        too_deep += w->too_deep;
    }
    cli_printf("],\n\"events\":%llu,\"dropped\":%llu,\"gaps\":%llu,\"lost\":%llu,"
               "\"not_recorded\":%llu,\"pauses\":%llu,\"paused_ns\":%llu,\"unmatched\":%llu,"
               "\"unwound\":%llu,\"cut_short\":%llu,\"cut_by_gap\":%llu,\"too_deep\":%llu},\n",
               (cli_ull)events, (cli_ull)dropped, (cli_ull)gaps, (cli_ull)lost,
               (cli_ull)not_recorded, (cli_ull)pauses, (cli_ull)paused, (cli_ull)unmatched,
               (cli_ull)unwound, (cli_ull)cut_short, (cli_ull)cut, (cli_ull)too_deep);
}

/* The whole data object. */
static atf_result report_data(report_state *r) {
    atf_result rc;
    size_t i;
    cli_print("{\"format\":1,\"path\":");
    report_str_max(r->t->path, CLI_PATH_MAX);
    cli_print(",\"base\":");
    if (r->base) report_str_max(r->base->path, CLI_PATH_MAX);
    else cli_print("null");
    cli_print(",\n");
    report_facts(r);
    if ((rc = report_flame(r)) != ATF_OK || (rc = report_functions(r)) != ATF_OK ||
        (rc = report_timeline_json(r)) != ATF_OK)
        return rc;
    cli_print("\"names\":[");
    for (i = 0; i < r->names.set.count; i++) {
        cli_print(i ? ",\n" : "\n");
        report_str(r->names.set.items[i].text);
    }
    cli_print("]}\n");
    return ATF_OK;
}

/* The page with the data in it, to the output. */
static atf_result report_page_write(report_state *r) {
    size_t i;
    atf_result rc = ATF_OK;
    for (i = 0; i < sizeof report_page / sizeof report_page[0]; i++) {
        if (strcmp(report_page[i], "ATF_REPORT_DATA\n") == 0) rc = report_data(r);
        else cli_print(report_page[i]);
        if (rc != ATF_OK) break;
    }
    return rc;
}

/* The first and last event of the selected threads, from the first walk. */
static void report_span(report_state *r) {
    size_t i;
    r->first_ns = UINT64_MAX;
    r->last_ns = 0;
    for (i = 0; i < r->t->reader.thread_count; i++) {
        const walk_thread *w = &r->walk.threads[i];
        if (!cli_trace_selected(r->t, i) || !w->events) continue;
        if (w->first_ns < r->first_ns) r->first_ns = w->first_ns;
        if (w->last_ns > r->last_ns) r->last_ns = w->last_ns;
    }
    if (r->first_ns > r->last_ns) r->first_ns = r->last_ns = 0;
}

/* The walks: what the page shows, into r. ATF_OK, or the error (*where: whose). */
static atf_result report_collect(report_state *r, const char **where) {
    walk_ctx w2;
    cli_progress p;
    atf_result rc;
    uint64_t whole;
    *where = r->t->path;
    if ((rc = profile_sketch_init(&r->sketch, REPORT_SKETCH_BITS)) != ATF_OK) return rc;
    cli_progress_init(&p, "atf report", cli_trace_events(r->t), NULL);
    rc = profile_sketch_collect(r->t, &r->walk, &r->fns, &r->sketch, 0, r->mode, &p);
    cli_progress_end(&p);
    if (rc != ATF_OK) return rc;
    profile_fns_name(&r->fns, r->t);
    report_span(r);
    if (r->base) {
        *where = r->base->path;
        cli_progress_init(&p, "atf report base", cli_trace_events(r->base), NULL);
        rc = profile_sketch_collect(r->base, &w2, &r->base_fns, &r->sketch, 1, r->mode, &p);
        cli_progress_end(&p);
        walk_deinit(&w2);
        if (rc != ATF_OK) return rc;
        profile_fns_name(&r->base_fns, r->base);
    }
    whole = r->sketch.outer_ns[0] > r->sketch.outer_ns[1] ? r->sketch.outer_ns[0]
                                                          : r->sketch.outer_ns[1];
    r->prune_ns = (uint64_t)((double)whole * r->prune);
    if (r->prune_ns == 0) r->prune_ns = 1;
    r->paths.prune = &r->sketch;
    r->paths.prune_ns = r->prune_ns;
    *where = r->t->path;
    cli_progress_init(&p, "atf report paths", cli_trace_events(r->t), NULL);
    rc = profile_collect(r->t, &w2, NULL, &r->paths, 0, r->mode, &p);
    cli_progress_end(&p);
    walk_deinit(&w2);
    if (rc == ATF_OK && r->base) {
        *where = r->base->path;
        cli_progress_init(&p, "atf report base paths", cli_trace_events(r->base), NULL);
        rc = profile_collect(r->base, &w2, NULL, &r->paths, 1, r->mode, &p);
        cli_progress_end(&p);
        walk_deinit(&w2);
    }
    if (rc != ATF_OK) return rc;
    *where = r->t->path;
    if (!r->tl.window.has_from && !r->tl.window.has_to) {
        report_busiest(r->t, r->first_ns, r->last_ns, &r->tl.window);
        r->tl.chosen = r->last_ns - r->first_ns <= REPORT_WINDOW_NS
                           ? "the whole trace (it is no longer than 2 ms)"
                           : "the busiest 2 ms (the most events of the threads shown)";
    } else {
        r->tl.chosen = "as given (--from, --to)";
        if (!r->tl.window.has_from) r->tl.window.from_ns = r->first_ns;
        if (!r->tl.window.has_to || r->tl.window.to_ns > r->last_ns)
            r->tl.window.to_ns = r->last_ns;
        if (r->tl.window.from_ns < r->first_ns) r->tl.window.from_ns = r->first_ns;
        if (r->tl.window.to_ns < r->tl.window.from_ns) r->tl.window.to_ns = r->tl.window.from_ns;
        r->tl.window.has_from = r->tl.window.has_to = 1;
    }
    return report_timeline_walk(&r->tl, r->t);
}

static void report_free(report_state *r) {
    walk_deinit(&r->walk);
    profile_fns_free(&r->fns);
    profile_fns_free(&r->base_fns);
    profile_sketch_free(&r->sketch);
    profile_paths_free(&r->paths);
    profile_by_name_free(&r->byname);
    profile_names_free(&r->fn_names);
    profile_names_free(&r->names.set);
    free(r->tl.heap);
    free(r->tl.marks);
}

/* Collects, then writes OUT: the exit status. A file left incomplete is removed. */
static int report_run(report_state *r, const char *outpath) {
    const char *where = r->t->path;
    atf_result rc = report_collect(r, &where);
    atf_error e;
    FILE *f, *before;
    int sys_errno = 0, status = CLI_EXIT_OK;
    if (rc != ATF_OK) {
        cli_error_init(&e, rc, where, CLI_NO_OFFSET, "report");
        return cli_report(&e);
    }
    if ((f = fopen(outpath, "wb")) == NULL) {
        cli_error_errno(&e, outpath, "cannot open for writing", errno);
        return cli_report(&e);
    }
    before = cli_out_file();
    cli_out_switch(f, NULL);
    rc = report_page_write(r);
    if (!cli_out_switch(before, &sys_errno)) {
        cli_error_errno(&e, outpath, "write", sys_errno);
        status = cli_report(&e);
    }
    if (fclose(f) != 0 && status == CLI_EXIT_OK) {
        cli_error_errno(&e, outpath, "write", errno);
        status = cli_report(&e);
    }
    if (rc != ATF_OK && status == CLI_EXIT_OK) {
        cli_error_init(&e, rc, where, CLI_NO_OFFSET, "report");
        status = cli_report(&e);
    }
    if (status != CLI_EXIT_OK && cli_is_file(outpath)) remove(outpath);
    return status;
}

/* --prune's value: a percentage from 0 to 100 into *share (0.1 -> 0.001). */
static int report_parse_prune(const cli_command *cmd, const char *text, double *share) {
    char *end;
    double v;
    errno = 0;
    v = strtod(text, &end);
    if (end == text || *end || errno || !(v >= 0 && v <= 100))
        return cli_usage_error(cmd, "--prune: '%s' is no percentage from 0 to 100", text);
    *share = v / 100;
    return CLI_CONTINUE;
}

int cli_cmd_report(const cli_command *cmd, int argc, char **argv) {
    const char *outpath = NULL, *base_path = NULL, *frame_text = NULL, *prune_text = NULL;
    uint64_t top = REPORT_TOP_DEFAULT;
    int status;
    const cli_flag flags[] = {
        { "-o", NULL, CLI_OPT_STR, &outpath },
        { "--base", NULL, CLI_OPT_STR, &base_path },
        { "--top", NULL, CLI_OPT_U64, &top },
        { "--prune", NULL, CLI_OPT_STR, &prune_text },
        { "--thread-frame", NULL, CLI_OPT_STR, &frame_text },
    };
    cli_view view, base_view;
    cli_trace t, base;
    report_state r;
    memset(&r, 0, sizeof r);
    r.mode = PROFILE_FRAME_NAME;
    r.prune = REPORT_PRUNE_DEFAULT;
    status = cli_parse_view_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], &view,
                                 CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_PID |
                                     CLI_VIEW_FUNCTION);
    if (status != CLI_CONTINUE) return status;
    if (!outpath || !outpath[0])
        return cli_usage_error(cmd, "-o OUT is needed: the report is a file (report.html)");
    if (frame_text && (status = profile_parse_frame_mode(cmd, frame_text, &r.mode)) != CLI_CONTINUE)
        return status;
    if (prune_text && (status = report_parse_prune(cmd, prune_text, &r.prune)) != CLI_CONTINUE)
        return status;
    if (top > SIZE_MAX) return cli_usage_error(cmd, "--top: %llu is too large", (cli_ull)top);
    r.top = (size_t)top;
    if ((status = cli_trace_open_view(cmd, &t, argv[1], &view)) != CLI_EXIT_OK) return status;
    /* --from/--to choose the timeline's window; the rest of the page shows every event */
    r.tl.window = t.window;
    t.window.has_from = t.window.has_to = 0;
    t.window.from_ns = 0;
    t.window.to_ns = UINT64_MAX;
    r.t = &t;
    if (base_path) {
        base_view = view;
        base_view.from = base_view.to = NULL;
        base_view.functions_lenient = 1;
        if ((status = cli_trace_open_view(cmd, &base, base_path, &base_view)) != CLI_EXIT_OK) {
            cli_trace_close(&t);
            return status;
        }
        r.base = &base;
    }
    status = report_run(&r, outpath);
    report_free(&r);
    if (cli_trace_warn_damage(&t)) status = CLI_EXIT_DATA;
    if (r.base && cli_trace_warn_damage(&base)) status = CLI_EXIT_DATA;
    cli_trace_close(&t);
    if (r.base) cli_trace_close(&base);
    return status;
}
