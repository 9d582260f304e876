/* stats_cmd.c - atf stats: per function calls, total and self time, min/avg/max per call
 * (added up by profile.c); per thread events, drops and time span; gaps and unbalanced
 * input (see walk.h).
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "profile.h"
#include "walk.h"

#include <stdlib.h>
#include <string.h>

static int stats_cmp_fid(const profile_fn *a, const profile_fn *b) {
    return a->fid < b->fid ? -1 : a->fid > b->fid;
}
static int stats_cmp_desc(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

static int stats_by_self(const void *x, const void *y) {
    const profile_fn *a = (const profile_fn *)x, *b = (const profile_fn *)y;
    int c = stats_cmp_desc(a->self_ns, b->self_ns);
    return c ? c : stats_cmp_fid(a, b);
}
static int stats_by_total(const void *x, const void *y) {
    const profile_fn *a = (const profile_fn *)x, *b = (const profile_fn *)y;
    int c = stats_cmp_desc(a->total_ns, b->total_ns);
    return c ? c : stats_cmp_fid(a, b);
}
static int stats_by_calls(const void *x, const void *y) {
    const profile_fn *a = (const profile_fn *)x, *b = (const profile_fn *)y;
    int c = stats_cmp_desc(a->calls, b->calls);
    return c ? c : stats_cmp_fid(a, b);
}
static int stats_by_name(const void *x, const void *y) {
    const profile_fn *a = (const profile_fn *)x, *b = (const profile_fn *)y;
    int c = strcmp(a->name, b->name);
    return c ? c : stats_cmp_fid(a, b);
}

/* Resolves the names and sorts st->fns by key, keeping st->index in step. */
static void stats_sort(profile_fns *st, const cli_trace *s, const char *key) {
    int (*cmp)(const void *, const void *) = stats_by_self;
    size_t i;
    profile_fns_name(st, s);
    if (strcmp(key, "total") == 0) cmp = stats_by_total;
    else if (strcmp(key, "calls") == 0) cmp = stats_by_calls;
    else if (strcmp(key, "name") == 0) cmp = stats_by_name;
    if (st->count) qsort(st->fns, st->count, sizeof *st->fns, cmp);
    for (i = 0; i < st->count; i++) *walk_map_find(&st->index, st->fns[i].fid) = i;
}

static void stats_json(const profile_fns *st, const walk_ctx *w, const cli_trace *s,
                          size_t limit) {
    size_t i, n = limit && limit < st->count ? limit : st->count, first = 1;
    uint64_t pauses = 0, paused = 0;
    cli_print("{\"functions\":[");
    for (i = 0; i < n; i++) {
        const profile_fn *f = &st->fns[i];
        const char *sym = cli_trace_symbol(s, f->fid);
        cli_printf("%s\n{\"fid\":\"0x%016llx\",\"name\":", i ? "," : "", (cli_ull)f->fid);
        cli_json_str(f->name);
        cli_printf(",\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,\"min_ns\":%llu,"
                         "\"max_ns\":%llu,\"mangled\":",
                      (cli_ull)f->calls, (cli_ull)f->total_ns, (cli_ull)f->self_ns,
                      (cli_ull)f->min_ns, (cli_ull)f->max_ns);
        if (sym) cli_json_str(sym); /* the symbol as recorded (of the smallest id of a name) */
        else cli_print("null");
        cli_print("}");
    }
    cli_print("],\n\"threads\":[");
    for (i = 0; i < s->reader.thread_count; i++) {
        const atf_session_thread *t = &s->reader.threads[i];
        const walk_thread *wt = &w->threads[i];
        if (!cli_trace_wanted(s, t->slot)) continue;
        cli_printf("%s\n{\"slot\":%u,\"tid\":%u,\"events\":%llu,\"dropped\":%llu,"
                   "\"start_ns\":%llu,\"end_ns\":%llu,\"gaps\":%llu,\"events_lost\":%llu,"
                   "\"events_not_recorded\":%llu,"
                   "\"cut_by_gap\":%llu,\"cut_short\":%llu,\"paused_ns\":%llu,\"pauses\":%llu,"
                   "\"pauses_ns\":%llu,\"name\":",
                   first ? "" : ",", t->slot, t->os_thread_id, (cli_ull)wt->events,
                   (cli_ull)t->events_dropped, (cli_ull)wt->first_ns, (cli_ull)wt->last_ns,
                   (cli_ull)wt->gaps, (cli_ull)wt->lost, (cli_ull)wt->not_recorded,
                   (cli_ull)wt->cut_by_gap, (cli_ull)wt->cut_short,
                   (cli_ull)t->paused_ns, (cli_ull)wt->pauses, (cli_ull)wt->paused_ns);
        cli_json_str(t->name);
        cli_print("}");
        first = 0;
        pauses += wt->pauses;
        paused += wt->paused_ns;
    }
    /* the recorder's own time: never among the functions, whose times leave it out */
    cli_printf("],\n\"pauses\":{\"count\":%llu,\"total_ns\":%llu}}\n", (cli_ull)pauses,
               (cli_ull)paused);
}

/* The threads the output lists: those wanted, also when their files are missing. */
static size_t stats_thread_count(const cli_trace *s) {
    size_t i, n = 0;
    for (i = 0; i < s->reader.thread_count; i++)
        n += (size_t)cli_trace_wanted(s, s->reader.threads[i].slot);
    return n;
}

static void stats_text(const profile_fns *st, const walk_ctx *w, const cli_trace *s,
                          size_t limit, const char *key) {
    size_t i, n = limit && limit < st->count ? limit : st->count;
    uint64_t unmatched = 0, unwound = 0, cut_short = 0, too_deep = 0, begun_before = 0;
    uint64_t gaps = 0, lost = 0, not_recorded = 0, cut = 0, gap_threads = 0;
    uint64_t paused = 0, pauses = 0;
    uint64_t paused_threads = 0, untimed = 0, untimed_threads = 0;
    char a[32], b[32], c[32], d[32], e[32];
    cli_printf("functions: %llu", (cli_ull)st->count);
    if (n < st->count) cli_printf(" (first %llu shown)", (cli_ull)n);
    cli_printf(", by %s%s\n", strcmp(key, "name") == 0 ? "name" : key,
                  strcmp(key, "self") == 0 || strcmp(key, "total") == 0 ? " time" : "");
    cli_printf("%12s %12s %12s %12s %12s %12s  %s\n", "calls", "total", "self", "min", "avg",
                  "max", "function");
    for (i = 0; i < n; i++) {
        const profile_fn *f = &st->fns[i];
        cli_printf("%12llu %12s %12s %12s %12s %12s  ", (cli_ull)f->calls,
                      cli_fmt_dur(a, sizeof a, f->total_ns), cli_fmt_dur(b, sizeof b, f->self_ns),
                      cli_fmt_dur(c, sizeof c, f->min_ns),
                      cli_fmt_dur(d, sizeof d, f->calls ? f->sum_ns / f->calls : 0),
                      cli_fmt_dur(e, sizeof e, f->max_ns));
        cli_text(f->name);
        cli_print("\n");
    }
    cli_printf("\nthreads: %llu\n", (cli_ull)stats_thread_count(s));
    cli_printf("%6s %10s %12s %10s %20s %20s %12s  %s\n", "slot", "tid", "events", "dropped",
                  "start_ns", "end_ns", "span", "name");
    for (i = 0; i < s->reader.thread_count; i++) {
        const atf_session_thread *t = &s->reader.threads[i];
        const walk_thread *wt = &w->threads[i];
        if (!cli_trace_wanted(s, t->slot)) continue;
        cli_printf("%6u %10u %12llu %10llu %20llu %20llu %12s  ", t->slot,
                      t->os_thread_id, (cli_ull)wt->events, (cli_ull)t->events_dropped,
                      (cli_ull)wt->first_ns, (cli_ull)wt->last_ns,
                      cli_fmt_dur(a, sizeof a, wt->last_ns - wt->first_ns));
        cli_text(t->name);
        cli_print(t->missing ? "(missing)\n" : "\n");
        unmatched += wt->unmatched;
        begun_before += wt->begun_before;
        unwound += wt->unwound;
        cut_short += wt->cut_short;
        too_deep += wt->too_deep;
        gaps += wt->gaps;
        lost += wt->lost;
        not_recorded += wt->not_recorded;
        cut += wt->cut_by_gap;
        gap_threads += wt->gaps != 0;
        paused += wt->paused_ns;
        pauses += wt->pauses;
        paused_threads += wt->pauses != 0;
        /* the manifest's total, less what pauses.atf places (an older recorder made none) */
        if (t->paused_ns > t->reader.paused_ns) {
            untimed += t->paused_ns - t->reader.paused_ns;
            untimed_threads++;
        }
    }
    if (gaps)
        cli_printf("\ngaps: %llu in %llu thread%s, %llu events lost while recording (nothing "
                         "is paired across a gap)\n",
                      (cli_ull)gaps, (cli_ull)gap_threads, gap_threads == 1 ? "" : "s", (cli_ull)lost);
    if (not_recorded)
        cli_printf("\nnot recorded: %llu events, by choice (recording was off, a bound "
                   "stopped it, or the flight recorder kept later ones: atf info says "
                   "which)\n", (cli_ull)not_recorded);
    if (s->reader.min_duration_ns)
        cli_printf("\nmin duration: only calls of at least %s and their callers were recorded "
                   "(the time of the others is in their callers' self time)\n",
                   cli_fmt_dur(a, sizeof a, s->reader.min_duration_ns));
    if (pauses)
        cli_printf("\npaused: %s in %llu thread%s (%llu full ring%s drained by the thread "
                   "itself, --overflow block): left out of the times of the functions they "
                   "lie in\n", cli_fmt_dur(a, sizeof a, paused), (cli_ull)paused_threads,
                   paused_threads == 1 ? "" : "s", (cli_ull)pauses, pauses == 1 ? "" : "s");
    if (untimed)
        cli_printf("%spaused: %s more in %llu thread%s with no record of when (pauses.atf "
                   "missing or damaged): inside the times of the functions then running\n",
                   pauses ? "" : "\n", cli_fmt_dur(a, sizeof a, untimed),
                   (cli_ull)untimed_threads, untimed_threads == 1 ? "" : "s");
    if (begun_before)
        cli_printf("\n%llu returns of calls that began before the events kept (the flight "
                   "recorder discarded their start)\n", (cli_ull)begun_before);
    if (unmatched || unwound || cut_short || too_deep || cut) {
        cli_print("\nunbalanced input:\n");
        if (unmatched)
            cli_printf("  %llu returns without a matching call (ignored)\n", (cli_ull)unmatched);
        if (unwound)
            cli_printf("  %llu frames closed by the return of an outer frame\n", (cli_ull)unwound);
        if (cut)
            cli_printf("  %llu frames cut by a gap (closed at their thread's last event "
                             "before it)\n", (cli_ull)cut);
        if (cut_short)
            cli_printf("  %llu frames cut short (open when their thread's events end: closed "
                       "when the process was last seen)\n", (cli_ull)cut_short);
        if (too_deep)
            cli_printf("  %llu calls deeper than %u frames (not counted)\n", (cli_ull)too_deep,
                          (unsigned)WALK_MAX_DEPTH);
    }
}

/* The trace's functions and threads, as text or JSON, once its damage is reported. */
static int stats_print(cli_trace *src, const char *key, uint64_t limit, int json) {
    profile_fns st;
    walk_ctx w;
    cli_progress p;
    atf_result rc;
    atf_error e;
    memset(&st, 0, sizeof st);
    cli_progress_init(&p, "atf stats", cli_trace_events(src), NULL);
    rc = profile_collect(src, &w, &st, NULL, 0, PROFILE_FRAME_NONE, &p);
    cli_progress_end(&p);
    if (rc == ATF_OK) {
        stats_sort(&st, src, key);
        if (json) stats_json(&st, &w, src, (size_t)limit);
        else stats_text(&st, &w, src, (size_t)limit, key);
    }
    profile_fns_free(&st);
    walk_deinit(&w);
    if (rc == ATF_OK) return CLI_EXIT_OK;
    cli_error_init(&e, rc, src->path, 0, "stats");
    return cli_report(&e);
}

int cli_cmd_stats(const cli_command *cmd, int argc, char **argv) {
    const char *key = "self";
    uint64_t limit = 0;
    int json = 0, status;
    const cli_flag flags[] = {
        { "--json", &json, CLI_OPT_FLAG, NULL },
        { "--sort", NULL, CLI_OPT_STR, &key },
        { "--limit", NULL, CLI_OPT_U64, &limit },
    };
    cli_view view;
    cli_trace src;
    status = cli_parse_view_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], &view,
                                 CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_PID |
                                     CLI_VIEW_FUNCTION);
    if (status != CLI_CONTINUE) return status;
    if (strcmp(key, "self") && strcmp(key, "total") && strcmp(key, "calls") && strcmp(key, "name"))
        return cli_usage_error(cmd, "unknown sort key '%s'", key);
    if (limit > SIZE_MAX) return cli_usage_error(cmd, "--limit: %llu is too large", (cli_ull)limit);
    if ((status = cli_trace_open_view(cmd, &src, argv[1], &view)) != CLI_EXIT_OK) return status;
    status = stats_print(&src, key, limit, json);
    if (cli_trace_warn_damage(&src)) status = CLI_EXIT_DATA;
    cli_trace_close(&src);
    return status;
}
