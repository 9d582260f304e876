/* diff_cmd.c - atf diff: two traces side by side, per function and per call path (both
 * added up by profile.c, matched by name), the largest changes first.
 * SPDX-License-Identifier: MIT
 *
 * Each trace is opened through the view and walked once into one profile_paths, A as side
 * 0 and B as side 1, so that a path of both is one node with both figures; the functions
 * of each (profile_fns, by id) are then added to one row per name: ids that share a name
 * add up (their totals too), and a function of one trace only has zeros in the other.
 * Functions are sorted by the size of the change in self time, paths by that of the change
 * in total time; ties by name (functions) or in the order of a folded output (paths). */
#include "core.h"
#include "profile.h"
#include "walk.h"

#include <stdlib.h>
#include <string.h>

enum { DIFF_TOP_DEFAULT = 20 };

typedef profile_named diff_fn;      /* one function of A or B: every id of that name */

typedef struct diff_state {
    profile_paths paths;            /* both sides; its names name the functions too */
    profile_by_name byname;         /* the functions */
    uint32_t *order;                /* the paths (nodes) shown, in order */
    size_t path_count;
} diff_state;

/* Walks trace t into side `side` of d. */
static atf_result diff_collect(diff_state *d, cli_trace *t, size_t side, profile_frame_mode mode,
                               const char *what) {
    profile_fns fns;
    walk_ctx w;
    cli_progress p;
    atf_result rc;
    memset(&fns, 0, sizeof fns);
    cli_progress_init(&p, what, cli_trace_events(t), NULL);
    rc = profile_collect(t, &w, &fns, &d->paths, side, mode, &p);
    cli_progress_end(&p);
    walk_deinit(&w);
    profile_fns_name(&fns, t);
    if (rc == ATF_OK) rc = profile_by_name_add(&d->byname, &d->paths.names, &fns, side);
    profile_fns_free(&fns);
    return rc;
}

/* |b - a| */
static uint64_t diff_size(const uint64_t *v) { return v[1] > v[0] ? v[1] - v[0] : v[0] - v[1]; }

static int diff_cmp_desc(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

/* qsort's comparators see no context: the names for diff_by_self_change. */
typedef struct diff_sorted {
    const diff_fn *fn;
    const char *name;
} diff_sorted;

static int diff_by_self_change(const void *x, const void *y) {
    const diff_sorted *a = (const diff_sorted *)x, *b = (const diff_sorted *)y;
    int c = diff_cmp_desc(diff_size(a->fn->self_ns), diff_size(b->fn->self_ns));
    return c ? c : strcmp(a->name, b->name);
}

/* A path to sort: its change in total time, and its place in a folded output. */
typedef struct diff_path {
    uint64_t change;
    uint32_t rank, node;
} diff_path;

static int diff_by_total_change(const void *x, const void *y) {
    const diff_path *a = (const diff_path *)x, *b = (const diff_path *)y;
    int c = diff_cmp_desc(a->change, b->change);
    return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* Sorts the functions (into d->byname.items) and the paths that hold calls (into d->order). */
static atf_result diff_sort(diff_state *d) {
    diff_sorted *s = (diff_sorted *)malloc((d->byname.count + 1) * sizeof *s);
    diff_fn *fns = (diff_fn *)malloc((d->byname.count + 1) * sizeof *fns);
    diff_path *paths = NULL;
    uint32_t *order = NULL;
    size_t i, n = 0;
    atf_result rc = ATF_E_NOMEM;
    if (!s || !fns || profile_paths_order(&d->paths, &order) != ATF_OK) goto done;
    for (i = 0; i < d->byname.count; i++) {
        s[i].fn = &d->byname.items[i];
        s[i].name = d->paths.names.items[d->byname.items[i].name].text;
    }
    qsort(s, d->byname.count, sizeof *s, diff_by_self_change);
    for (i = 0; i < d->byname.count; i++) fns[i] = *s[i].fn;
    if (d->byname.count) memcpy(d->byname.items, fns, d->byname.count * sizeof *fns);
    if ((paths = (diff_path *)malloc((d->paths.count + 1) * sizeof *paths)) == NULL) goto done;
    for (i = 0; i + 1 < d->paths.count; i++) {
        const profile_node *p = &d->paths.nodes[order[i]];
        if (p->is_thread) continue; /* a thread's frame is no call */
        paths[n].change = diff_size(p->total_ns);
        paths[n].rank = (uint32_t)i;
        paths[n++].node = order[i];
    }
    qsort(paths, n, sizeof *paths, diff_by_total_change);
    for (i = 0; i < n; i++) order[i] = paths[i].node;
    d->order = order;
    d->path_count = n;
    order = NULL;
    rc = ATF_OK;
done:
    free(s);
    free(fns);
    free(paths);
    free(order);
    return rc;
}

/* The time in every outermost call of side k: the thread totals, added up. */
static uint64_t diff_outer_ns(const diff_state *d, size_t k) {
    uint64_t sum = 0;
    size_t i;
    for (i = 1; i < d->paths.count; i++) {
        const profile_node *n = &d->paths.nodes[i];
        if (!n->is_thread && (n->parent == PROFILE_ROOT || d->paths.nodes[n->parent].is_thread))
            sum += n->total_ns[k];
    }
    return sum;
}

/* ==== text =========================================================================== */
/* b - a as "+12", "-3" or "0". */
static const char *diff_fmt_count(char *buf, size_t cap, const uint64_t *v) {
    if (v[1] == v[0]) snprintf(buf, cap, "0");
    else snprintf(buf, cap, "%c%llu", v[1] > v[0] ? '+' : '-', (cli_ull)diff_size(v));
    return buf;
}

/* b - a as a duration for people, signed: "+1.500ms", "-850ns", "0ns". */
static const char *diff_fmt_dur(char *buf, size_t cap, const uint64_t *v) {
    char d[24];
    cli_fmt_dur(d, sizeof d, diff_size(v));
    snprintf(buf, cap, "%s%s", v[1] > v[0] ? "+" : v[1] < v[0] ? "-" : "", d);
    return buf;
}

/* b / a of a time: "1.25x"; "new" when a had no calls, "gone" when b has none, "-" when
 * a's time is 0. */
static const char *diff_fmt_ratio(char *buf, size_t cap, const uint64_t *calls,
                                  const uint64_t *ns) {
    if (!calls[0]) snprintf(buf, cap, "new");
    else if (!calls[1]) snprintf(buf, cap, "gone");
    else if (!ns[0]) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.2fx", (double)ns[1] / (double)ns[0]);
    return buf;
}

static void diff_text(const diff_state *d, const char *a, const char *b, size_t top) {
    size_t i, nf = top && top < d->byname.count ? top : d->byname.count;
    size_t np = top && top < d->path_count ? top : d->path_count;
    uint64_t outer[PROFILE_SIDES];
    char c1[32], c2[32], c3[32], c4[32], c5[32], c6[32], c7[32];
    profile_text t;
    outer[0] = diff_outer_ns(d, 0);
    outer[1] = diff_outer_ns(d, 1);
    cli_print("a: ");
    cli_text(a);
    cli_print("\nb: ");
    cli_text(b);
    cli_printf("\noutermost calls: %s -> %s (%s", cli_fmt_dur(c1, sizeof c1, outer[0]),
               cli_fmt_dur(c2, sizeof c2, outer[1]), diff_fmt_dur(c3, sizeof c3, outer));
    if (outer[0]) cli_printf(", %.2fx", (double)outer[1] / (double)outer[0]);
    cli_printf(")\n\nfunctions: %llu in a or b", (cli_ull)d->byname.count);
    if (nf < d->byname.count) cli_printf(" (first %llu shown)", (cli_ull)nf);
    cli_print(", by the change in self time\n");
    cli_printf("%10s %10s %9s %11s %11s %12s %8s %11s %11s  %s\n", "calls_a", "calls_b",
               "+/-calls", "self_a", "self_b", "+/-self", "self b/a", "total_a", "total_b",
               "function");
    for (i = 0; i < nf; i++) {
        const diff_fn *f = &d->byname.items[i];
        cli_printf("%10llu %10llu %9s %11s %11s %12s %8s %11s %11s  ", (cli_ull)f->calls[0],
                   (cli_ull)f->calls[1], diff_fmt_count(c1, sizeof c1, f->calls),
                   cli_fmt_dur(c2, sizeof c2, f->self_ns[0]),
                   cli_fmt_dur(c3, sizeof c3, f->self_ns[1]),
                   diff_fmt_dur(c4, sizeof c4, f->self_ns),
                   diff_fmt_ratio(c5, sizeof c5, f->calls, f->self_ns),
                   cli_fmt_dur(c6, sizeof c6, f->total_ns[0]),
                   cli_fmt_dur(c7, sizeof c7, f->total_ns[1]));
        cli_text(d->paths.names.items[f->name].text);
        cli_print("\n");
    }
    cli_printf("\npaths: %llu in a or b", (cli_ull)d->path_count);
    if (np < d->path_count) cli_printf(" (first %llu shown)", (cli_ull)np);
    cli_print(", by the change in total time\n");
    cli_printf("%10s %10s %9s %11s %11s %12s %9s %12s  %s\n", "calls_a", "calls_b", "+/-calls",
               "total_a", "total_b", "+/-total", "total b/a", "+/-self", "path");
    memset(&t, 0, sizeof t);
    for (i = 0; i < np; i++) {
        const profile_node *n = &d->paths.nodes[d->order[i]];
        cli_printf("%10llu %10llu %9s %11s %11s %12s %9s %12s  ", (cli_ull)n->calls[0],
                   (cli_ull)n->calls[1], diff_fmt_count(c1, sizeof c1, n->calls),
                   cli_fmt_dur(c2, sizeof c2, n->total_ns[0]),
                   cli_fmt_dur(c3, sizeof c3, n->total_ns[1]),
                   diff_fmt_dur(c4, sizeof c4, n->total_ns),
                   diff_fmt_ratio(c5, sizeof c5, n->calls, n->total_ns),
                   diff_fmt_dur(c6, sizeof c6, n->self_ns));
        if (profile_path_text(&d->paths, d->order[i], &t)) cli_text(t.s);
        else cli_print("(out of memory)");
        cli_print("\n");
    }
    free(t.s);
}

/* ==== JSON =========================================================================== */
/* ,"KEY_a":A,"KEY_b":B,"KEY_delta":B-A (signed, exact) */
static void diff_json_pair(const char *key, const uint64_t *v) {
    cli_printf(",\"%s_a\":%llu,\"%s_b\":%llu,\"%s_delta\":%s%llu", key, (cli_ull)v[0], key,
               (cli_ull)v[1], key, v[1] < v[0] ? "-" : "", (cli_ull)diff_size(v));
}

/* ,"KEY":B/A, or null where there is no ratio (A's time 0) */
static void diff_json_ratio(const char *key, const uint64_t *ns) {
    if (ns[0]) cli_printf(",\"%s\":%.6f", key, (double)ns[1] / (double)ns[0]);
    else cli_printf(",\"%s\":null", key);
}

static atf_result diff_json(const diff_state *d, const char *a, const char *b, size_t top) {
    size_t i, nf = top && top < d->byname.count ? top : d->byname.count;
    size_t np = top && top < d->path_count ? top : d->path_count;
    uint64_t outer[PROFILE_SIDES];
    profile_text t;
    outer[0] = diff_outer_ns(d, 0);
    outer[1] = diff_outer_ns(d, 1);
    cli_print("{\"a\":");
    cli_json_str(a);
    cli_print(",\"b\":");
    cli_json_str(b);
    diff_json_pair("total_ns", outer);
    cli_print(",\n\"functions\":[");
    for (i = 0; i < nf; i++) {
        const diff_fn *f = &d->byname.items[i];
        cli_print(i ? ",\n{\"name\":" : "\n{\"name\":");
        cli_json_str(d->paths.names.items[f->name].text);
        diff_json_pair("calls", f->calls);
        diff_json_pair("total_ns", f->total_ns);
        diff_json_pair("self_ns", f->self_ns);
        diff_json_ratio("self_ratio", f->self_ns);
        cli_print("}");
    }
    cli_print("],\n\"paths\":[");
    memset(&t, 0, sizeof t);
    for (i = 0; i < np; i++) {
        const profile_node *n = &d->paths.nodes[d->order[i]];
        if (!profile_path_text(&d->paths, d->order[i], &t)) {
            free(t.s);
            return ATF_E_NOMEM;
        }
        cli_print(i ? ",\n{\"path\":" : "\n{\"path\":");
        cli_json_str(t.s);
        diff_json_pair("calls", n->calls);
        diff_json_pair("total_ns", n->total_ns);
        diff_json_pair("self_ns", n->self_ns);
        diff_json_ratio("total_ratio", n->total_ns);
        cli_print("}");
    }
    free(t.s);
    cli_print("]}\n");
    return ATF_OK;
}

/* ==== the command ==================================================================== */
static void diff_free(diff_state *d) {
    profile_paths_free(&d->paths);
    profile_by_name_free(&d->byname);
    free(d->order);
    memset(d, 0, sizeof *d);
}

/* Says which --function names neither trace knows: CLI_CONTINUE, or CLI_EXIT_USAGE. */
static int diff_check_functions(const cli_command *cmd, const cli_view *v, cli_trace *t) {
    size_t k;
    for (k = 0; k < v->functions.count; k++) {
        const char *f = v->functions.items[k];
        if (cli_trace_names_function(&t[0], f) || cli_trace_names_function(&t[1], f)) continue;
        return cli_usage_error(cmd, "--function: neither %s nor %s has a function named '%s' "
                                    "(give a name as atf stats prints it, or an id 0x...)",
                               t[0].path, t[1].path, f);
    }
    return CLI_CONTINUE;
}

/* Walks both traces, then prints the comparison; the exit status. */
static int diff_run(const cli_command *cmd, cli_trace *t, const cli_view *v,
                    profile_frame_mode mode, size_t top, int json) {
    static const char *const what[PROFILE_SIDES] = { "atf diff a", "atf diff b" };
    diff_state d;
    atf_result rc = ATF_OK;
    atf_error e;
    const char *where = t[0].path;  /* what an error names */
    size_t k;
    int status = diff_check_functions(cmd, v, t);
    if (status != CLI_CONTINUE) return status;
    memset(&d, 0, sizeof d);
    for (k = 0; k < PROFILE_SIDES && rc == ATF_OK; k++) {
        if (v->functions.count && !t[k].fid_count) continue; /* none of its functions: empty */
        where = t[k].path;
        rc = diff_collect(&d, &t[k], k, mode, what[k]);
    }
    if (rc == ATF_OK) rc = diff_sort(&d);
    if (rc == ATF_OK && json) rc = diff_json(&d, t[0].path, t[1].path, top);
    else if (rc == ATF_OK) diff_text(&d, t[0].path, t[1].path, top);
    diff_free(&d);
    if (rc == ATF_OK) return CLI_EXIT_OK;
    cli_error_init(&e, rc, where, CLI_NO_OFFSET, "diff");
    return cli_report(&e);
}

int cli_cmd_diff(const cli_command *cmd, int argc, char **argv) {
    const char *frame_text = NULL;
    uint64_t top = DIFF_TOP_DEFAULT;
    int json = 0, has_top = 0, status;
    const cli_flag flags[] = {
        { "--json", &json, CLI_OPT_FLAG, NULL },
        { "--top", &has_top, CLI_OPT_U64, &top },
        { "--thread-frame", NULL, CLI_OPT_STR, &frame_text },
    };
    profile_frame_mode mode = PROFILE_FRAME_NONE;
    cli_view view;
    cli_trace t[PROFILE_SIDES];
    status = cli_parse_view_ops(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], &view,
                                CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_FUNCTION,
                                PROFILE_SIDES);
    if (status != CLI_CONTINUE) return status;
    if (frame_text && (status = profile_parse_frame_mode(cmd, frame_text, &mode)) != CLI_CONTINUE)
        return status;
    if (top > SIZE_MAX) return cli_usage_error(cmd, "--top: %llu is too large", (cli_ull)top);
    if (json && !has_top) top = 0; /* --json lists all unless told */
    view.functions_lenient = 1; /* a function of one trace only: checked against both */
    if ((status = cli_trace_open_view(cmd, &t[0], argv[1], &view)) != CLI_EXIT_OK) return status;
    if ((status = cli_trace_open_view(cmd, &t[1], argv[2], &view)) != CLI_EXIT_OK) {
        cli_trace_close(&t[0]);
        return status;
    }
    status = diff_run(cmd, t, &view, mode, (size_t)top, json);
    if (cli_trace_warn_damage(&t[0])) status = CLI_EXIT_DATA;
    if (cli_trace_warn_damage(&t[1])) status = CLI_EXIT_DATA;
    cli_trace_close(&t[0]);
    cli_trace_close(&t[1]);
    return status;
}
