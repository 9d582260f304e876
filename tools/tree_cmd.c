/* tree_cmd.c - atf tree: the call tree of each thread, indented by depth, with durations
 * (calls and returns paired as walk.h says).
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "walk.h"

#include <string.h>

typedef struct tree_state {
    const cli_trace *src;
    const walk_ctx *walk;        /* lines are indented by depth in a --function subtree */
    uint64_t base_ns;            /* time 0 of the first column (on the trace clock) */
    size_t time_width;           /* of the first column */
    size_t max_depth;            /* 0 = all */
    int has_pending;             /* a call printed only once we know if it has callees */
    uint64_t pending_fid, pending_ts;
    size_t pending_depth;
} tree_state;

/* The time and duration columns of a line (duration blank when has_dur is 0): the time in
 * microseconds since the first event shown, or with --clock on that clock. */
static void tree_columns(const tree_state *t, uint64_t ts, int has_dur, uint64_t dur) {
    char num[CLI_TIME_TEXT_MAX], *p = cli_reserve(96), *end;
    size_t n;
    if (t->src->has_clock) end = cli_put_time_text(num, t->src, ts);
    else end = cli_put_us(num, ts > t->base_ns ? ts - t->base_ns : 0);
    n = (size_t)(end - num);
    p = cli_put_spaces(p, n < t->time_width ? t->time_width - n : 0);
    memcpy(p, num, n);
    p = cli_put_spaces(p + n, 2);
    end = has_dur ? cli_put_us(num, dur) : num;
    n = (size_t)(end - num);
    p = cli_put_spaces(p, n < 14 ? 14 - n : 0);
    memcpy(p, num, n);
    cli_commit(cli_put_spaces(p + n, 2));
}

/* One line: time, duration, indentation, text parts. */
static void tree_line(tree_state *t, uint64_t ts, int has_dur, uint64_t dur, size_t depth,
                      const char *pre, uint64_t fid, const char *post) {
    char hex[24];
    size_t width;
    tree_columns(t, ts, has_dur, dur);
    for (width = depth * 2; width;) {
        size_t k = width < 32 ? width : 32;
        cli_write("                                ", k);
        width -= k;
    }
    cli_print(pre);
    cli_text(cli_trace_name(t->src, fid, hex, sizeof hex));
    cli_print(post);
    cli_write("\n", 1);
}

static void tree_flush_pending(tree_state *t) {
    if (!t->has_pending) return;
    tree_line(t, t->pending_ts, 0, 0, t->pending_depth, "", t->pending_fid, " {");
    t->has_pending = 0;
}

static int tree_hidden(const tree_state *t, size_t depth) { return t->max_depth && depth >= t->max_depth; }

static void tree_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    tree_state *t = (tree_state *)ctx;
    depth = walk_depth_in_subtree(t->walk, ti, depth);
    if (tree_hidden(t, depth)) return;
    tree_flush_pending(t);
    t->has_pending = 1;
    t->pending_fid = fid;
    t->pending_ts = ts;
    t->pending_depth = depth;
}

static void tree_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                          int how, int outermost) {
    tree_state *t = (tree_state *)ctx;
    const char *mark = how == WALK_LEAVE_UNWOUND ? "  (unwound)"
                     : how == WALK_LEAVE_CUT ? "  (cut short)"
                     : how == WALK_LEAVE_AT_GAP ? "  (cut by a gap)"
                     : how == WALK_LEAVE_EXCEPTION ? "  (exception)" : "";
    uint64_t dur = walk_frame_ns(f, end_ns);
    char note[96], d[32];
    (void)outermost;
    if (f->paused_ns) { /* the time shown leaves the recorder's pauses out: say how much */
        snprintf(note, sizeof note, "%s  (tracer paused %s, left out)", mark,
                 cli_fmt_dur(d, sizeof d, f->paused_ns));
        mark = note;
    }
    depth = walk_depth_in_subtree(t->walk, ti, depth);
    if (tree_hidden(t, depth)) return;
    if (t->has_pending && t->pending_depth == depth) { /* no callee shown: one line */
        t->has_pending = 0;
        tree_line(t, f->start_ns, 1, dur, depth, "", f->fid, mark);
        return;
    }
    tree_flush_pending(t);
    tree_line(t, end_ns, 1, dur, depth, "} ", f->fid, mark);
}

static void tree_unmatched(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    tree_state *t = (tree_state *)ctx;
    depth = walk_depth_in_subtree(t->walk, ti, depth);
    if (tree_hidden(t, depth)) return;
    tree_flush_pending(t);
    tree_line(t, ts, 0, 0, depth, "! return from ", fid, " with no matching call (ignored)");
}

/* "~ gap: N events lost (dropped)", or "not recorded (skipped)", at the outermost depth,
 * once its frames are closed. */
static void tree_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    tree_state *t = (tree_state *)ctx;
    (void)ti;
    tree_flush_pending(t);
    tree_columns(t, ts, 0, 0);
    cli_printf("~ gap: %llu events %s (%s)\n", (cli_ull)g->index_lost, walk_gap_verb(g),
               atf_gap_reason_str(g->reason));
}

/* The time of the first event shown (time 0 of the first column), or 0. */
static uint64_t tree_base(cli_trace *src) {
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter f;
    uint64_t base = 0;
    cli_trace_filter(src, &f);
    if (atf_merge_init(&m, &src->reader, &f) != ATF_OK) return 0;
    if (atf_merge_next(&m, &it) == ATF_OK) base = it.event.timestamp_ns;
    atf_merge_deinit(&m);
    return base;
}

/* The title of the time column. */
static const char *tree_time_title(const tree_state *tr, char *buf, size_t cap) {
    if (!tr->src->has_clock) snprintf(buf, cap, "time_us");
    else if (tr->src->clock_is_wall) snprintf(buf, cap, "time (UTC)");
    else snprintf(buf, cap, "time_ns (%s)", tr->src->clock.name);
    return buf;
}

/* The header line of a thread, with the events it shows (those in the window). */
static void tree_thread_header(const tree_state *tr, const atf_session_thread *t,
                               uint64_t events, int first) {
    char title[96];
    cli_printf("%sthread %u  tid %u", first ? "" : "\n", t->slot, t->os_thread_id);
    if (t->name[0]) {
        cli_print("  ");
        cli_text(t->name);
    }
    cli_printf("  %llu events", (cli_ull)events);
    if (t->events_dropped) cli_printf("  %llu dropped", (cli_ull)t->events_dropped);
    if (t->reader.gap_count)
        cli_printf("  %llu gap%s, %llu events lost", (cli_ull)t->reader.gap_count,
                   t->reader.gap_count == 1 ? "" : "s", (cli_ull)t->reader.events_lost);
    cli_printf("\n%*s  %14s  %s\n", (int)tr->time_width,
               tree_time_title(tr, title, sizeof title), "duration_us", "call");
}

/* The counts under a thread's tree. */
static void tree_thread_footer(const walk_thread *wt) {
    if (wt->unmatched || wt->unwound || wt->cut_short || wt->too_deep)
        cli_printf("(%llu returns without a call, %llu frames unwound, %llu cut short, "
                   "%llu calls deeper than %u frames not shown)\n",
                   (cli_ull)wt->unmatched, (cli_ull)wt->unwound, (cli_ull)wt->cut_short,
                   (cli_ull)wt->too_deep, (unsigned)WALK_MAX_DEPTH);
    if (wt->gaps)
        cli_printf("(%llu gap%s met, %llu frames cut by a gap)\n", (cli_ull)wt->gaps,
                   wt->gaps == 1 ? "" : "s", (cli_ull)wt->cut_by_gap);
    if (wt->not_recorded)
        cli_printf("(%llu events not recorded, by choice: recording was off, a bound "
                   "stopped it, or the flight recorder kept later ones)\n",
                   (cli_ull)wt->not_recorded);
    if (wt->begun_before)
        cli_printf("(%llu returns of calls that began before the events kept)\n",
                   (cli_ull)wt->begun_before);
}

/* Every selected thread's tree, one after the other. */
static atf_result tree_print(cli_trace *src, size_t max_depth) {
    tree_state tr;
    walk_ctx w;
    cli_progress p;
    atf_result rc = ATF_OK;
    size_t k;
    int first = 1;
    if (!walk_init(&w, src->reader.thread_count)) return ATF_E_NOMEM;
    memset(&tr, 0, sizeof tr);
    tr.src = src;
    tr.walk = &w;
    tr.base_ns = tree_base(src);
    tr.time_width = !src->has_clock ? 16 : src->clock_is_wall ? 30 : 20;
    tr.max_depth = max_depth;
    w.ctx = &tr;
    w.enter = tree_enter;
    w.leave = tree_leave;
    w.unmatched = tree_unmatched;
    w.gap = tree_gap;
    cli_progress_init(&p, "atf tree", cli_trace_events(src), NULL);
    for (k = 0; k < src->reader.thread_count && rc == ATF_OK && !cli_out_failed(); k++) {
        const atf_session_thread *t = &src->reader.threads[k];
        if (!cli_trace_selected(src, k)) continue;
        tree_thread_header(&tr, t, cli_trace_thread_events(src, k), first);
        first = 0;
        rc = walk_run(&w, src, &t->slot, &p);
        tree_flush_pending(&tr);
        tree_thread_footer(&w.threads[k]);
    }
    cli_progress_end(&p);
    walk_deinit(&w);
    return rc;
}

int cli_cmd_tree(const cli_command *cmd, int argc, char **argv) {
    uint64_t max_depth = 0;
    int status;
    const cli_flag flags[] = {
        { "--max-depth", NULL, CLI_OPT_U64, &max_depth },
    };
    cli_view view;
    cli_trace src;
    atf_result rc;
    atf_error e;
    status = cli_parse_view_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], &view,
                                 CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_PID |
                                     CLI_VIEW_FUNCTION | CLI_VIEW_CLOCK);
    if (status != CLI_CONTINUE) return status;
    if (max_depth > SIZE_MAX) return cli_usage_error(cmd, "--max-depth out of range");
    if ((status = cli_trace_open_view(cmd, &src, argv[1], &view)) != CLI_EXIT_OK) return status;
    rc = tree_print(&src, (size_t)max_depth);
    status = CLI_EXIT_OK;
    if (rc != ATF_OK) {
        cli_error_init(&e, rc, argv[1], 0, "tree");
        status = cli_report(&e);
    }
    if (cli_trace_warn_damage(&src)) status = CLI_EXIT_DATA;
    cli_trace_close(&src);
    return status;
}
