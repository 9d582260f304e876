/* dump_cmd.c - atf dump: the events of a file, a thread directory or a session (merged in
 * time order), as a table or as JSON lines, with the function names of the manifest when
 * it has them.
 * SPDX-License-Identifier: MIT */
#include "core.h"

#include <string.h>

enum { DUMP_KIND_WIDTH = 9,         /* "exception" */
       DUMP_FID_WIDTH = 18,         /* "0x" + 16 digits */
       DUMP_FLAGS_WIDTH = 6 };      /* "0x" + 4 digits */

typedef struct dump_opts {
    int json, detail, has_limit;
    uint64_t limit;
    cli_view view;                  /* --from, --to, --thread, --pid, --clock */
    cli_window window;              /* --from, --to resolved */
    const cli_trace *trace;         /* whose clock times are shown on; NULL: the trace clock */
} dump_opts;

/* The width of a time as dump prints it (on --clock's clock). */
static size_t dump_time_width(const cli_trace *t, uint64_t ts) {
    char buf[32];
    return (size_t)(cli_put_time(buf, t, ts) - buf);
}

/* A time right-aligned in `width` columns. */
static char *dump_put_time_right(char *p, const cli_trace *t, uint64_t ts, size_t width) {
    size_t n = dump_time_width(t, ts);
    return cli_put_time(cli_put_spaces(p, n < width ? width - n : 0), t, ts);
}

/* Whether --from / --to let a record with timestamp ts through. */
static int dump_keep(const dump_opts *o, uint64_t ts) { return cli_window_has(&o->window, ts); }

/* ==== index events: one row writer for files, threads and merged sessions ============ */
/* Column widths of the table: each column as wide as its widest value or title. */
typedef struct dump_widths {
    size_t thread, seq, ts, tid, depth, detail;
} dump_widths;

/* Widens w for every event of one index file (times on t's clock). */
static void dump_widen(dump_widths *w, const atf_index_reader *r, const cli_trace *t) {
    uint64_t i, ts = 0, ts_min = UINT64_MAX, tid = 0, depth = 0, detail = 0;
    atf_index_event ev;
    for (i = 0; i < r->event_count; i++) {
        atf_index_reader_get(r, i, &ev);
        if (ev.timestamp_ns > ts) ts = ev.timestamp_ns;
        if (ev.timestamp_ns < ts_min) ts_min = ev.timestamp_ns;
        if (ev.thread_id > tid) tid = ev.thread_id;
        if (ev.call_depth > depth) depth = ev.call_depth;
        if (ev.detail_seq != ATF_NO_DETAIL && ev.detail_seq > detail) detail = ev.detail_seq;
    }
    w->seq = cli_max_size(w->seq, cli_digits(r->event_count ? r->event_count - 1 : 0));
    w->ts = cli_max_size(w->ts, dump_time_width(t, ts));
    if (r->event_count) w->ts = cli_max_size(w->ts, dump_time_width(t, ts_min));
    w->tid = cli_max_size(w->tid, cli_digits(tid));
    w->depth = cli_max_size(w->depth, cli_digits(depth));
    w->detail = cli_max_size(w->detail, cli_digits(detail));
}

/* The widths over the selected threads of the trace (the thread column when merged). */
static dump_widths dump_widths_of(const cli_trace *t, const atf_merge_filter *f, int merged) {
    dump_widths w;
    size_t k, s;
    w.thread = merged ? strlen("thread") : 0;
    w.seq = strlen("seq");
    w.ts = strlen("ts");
    w.tid = strlen("tid");
    w.depth = strlen("depth");
    w.detail = strlen("detail");
    for (k = 0; k < t->reader.thread_count; k++) {
        const atf_session_thread *th = &t->reader.threads[k];
        int selected = !f->slots;
        for (s = 0; s < f->slot_count && !selected; s++) selected = f->slots[s] == th->slot;
        if (th->open_result != ATF_OK || !selected) continue;
        if (merged) w.thread = cli_max_size(w.thread, cli_digits(th->slot));
        dump_widen(&w, &th->reader.index, t);
    }
    return w;
}

static void dump_table_title(const dump_widths *w, int names) {
    char line[CLI_LINE_MAX], *p = line;
    if (w->thread) p = cli_put_str(cli_put_str_aligned(p, "thread", w->thread, 1), "  ");
    p = cli_put_str_aligned(p, "seq", w->seq, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "ts", w->ts, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "fid", DUMP_FID_WIDTH, 0);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "kind", DUMP_KIND_WIDTH, 0);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "tid", w->tid, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "depth", w->depth, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "detail", w->detail, 1);
    if (names) p = cli_put_str(p, "  name"); /* the last column: never padded */
    cli_emit(line, p);
}

/* One event of thread `slot` (w->thread 0: no thread column) as a table row, or as a JSON
 * line when w is NULL; `name` is its function's name, NULL when the manifest has none. */
static void dump_event(const cli_trace *t, const dump_widths *w, uint32_t slot, uint64_t seq,
                       const atf_index_event *ev, int layout, const char *name) {
    char line[CLI_LINE_MAX], *p = line;
    int has_tid = layout == ATF_LAYOUT_1;
    if (!w) {
        p = cli_put_u64(cli_put_str(p, "{\"seq\":"), seq);
        p = cli_put_time(cli_put_str(p, ",\"ts\":"), t, ev->timestamp_ns);
        p = cli_put_hex64(cli_put_str(p, ",\"fid\":\""), ev->function_id);
        p = cli_put_str(cli_put_str(p, "\",\"kind\":\""), atf_event_kind_str(ev->kind));
        if (has_tid) {
            p = cli_put_u64(cli_put_str(p, "\",\"tid\":"), ev->thread_id);
            p = cli_put_u64(cli_put_str(p, ",\"depth\":"), ev->call_depth);
        } else {
            p = cli_put_str(p, "\",\"tid\":null,\"depth\":null");
        }
        p = cli_put_str(p, ",\"detail_seq\":");
        p = ev->detail_seq == ATF_NO_DETAIL ? cli_put_str(p, "null")
                                            : cli_put_u64(p, ev->detail_seq);
        if (slot != UINT32_MAX) p = cli_put_u64(cli_put_str(p, ",\"thread\":"), slot);
        if (name) {
            const char *sym = cli_trace_symbol(t, ev->function_id);
            cli_write(line, (size_t)(cli_put_str(p, ",\"name\":") - line));
            cli_json_str(name);
            cli_print(",\"mangled\":"); /* the symbol as recorded */
            if (sym) cli_json_str(sym);
            else cli_print("null");
            cli_print("}\n");
        } else {
            cli_emit(line, cli_put_str(p, "}"));
        }
        return;
    }
    if (w->thread) p = cli_put_str(cli_put_u64_right(p, slot, w->thread), "  ");
    p = cli_put_u64_right(p, seq, w->seq);
    p = dump_put_time_right(cli_put_str(p, "  "), t, ev->timestamp_ns, w->ts);
    p = cli_put_hex64(cli_put_str(p, "  "), ev->function_id);
    p = cli_put_str_aligned(cli_put_str(p, "  "), atf_event_kind_str(ev->kind), DUMP_KIND_WIDTH, 0);
    p = cli_put_str(p, "  ");
    if (has_tid) {
        p = cli_put_u64_right(p, ev->thread_id, w->tid);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev->call_depth, w->depth);
    } else {
        p = cli_put_str_aligned(p, "-", w->tid, 1);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "-", w->depth, 1);
    }
    p = cli_put_str(p, "  ");
    if (ev->detail_seq == ATF_NO_DETAIL) p = cli_put_str_aligned(p, "-", w->detail, 1);
    else p = cli_put_u64_right(p, ev->detail_seq, w->detail);
    if (!name) {
        cli_emit(line, p);
        return;
    }
    cli_write(line, (size_t)(cli_put_str(p, "  ") - line));
    cli_text(name);
    cli_print("\n");
}

/* The name of fid when the manifest has names (NULL otherwise). */
static const char *dump_name(const cli_trace *t, uint64_t fid, char *hex, size_t cap) {
    return t->reader.symbol_count ? cli_trace_name(t, fid, hex, cap) : NULL;
}

/* The events of the trace: one thread in file order, or the merged selected threads
 * (each row with its thread), until the end, --to or --limit. */
static atf_result dump_events(cli_trace *t, const atf_merge_filter *f, const dump_opts *o,
                              int merged) {
    dump_widths w;
    atf_merge m;
    atf_merge_item it;
    uint64_t n = 0;
    char hex[24];
    int names = t->reader.symbol_count > 0;
    if (!o->json) {
        w = dump_widths_of(t, f, merged);
        dump_table_title(&w, names);
    }
    if (!merged) { /* one thread, in the order of its file */
        const atf_session_thread *th = atf_session_reader_thread(&t->reader, t->slot);
        uint64_t i;
        atf_index_event ev;
        uint64_t count = th ? th->reader.index.event_count : 0;
        for (i = 0; i < count && (!o->has_limit || n < o->limit); i++) {
            atf_index_reader_get(&th->reader.index, i, &ev);
            if (!dump_keep(o, ev.timestamp_ns)) continue;
            n++;
            dump_event(t, o->json ? NULL : &w, UINT32_MAX, i, &ev, th->reader.index.layout,
                       dump_name(t, ev.function_id, hex, sizeof hex));
        }
        return ATF_OK;
    }
    if (atf_merge_init(&m, &t->reader, f) != ATF_OK) return ATF_E_NOMEM;
    while ((!o->has_limit || n < o->limit) && atf_merge_next(&m, &it) == ATF_OK) {
        if (!dump_keep(o, it.event.timestamp_ns)) break; /* --to 0: the merge has no bound */
        n++;
        dump_event(t, o->json ? NULL : &w, it.slot, it.seq, &it.event, it.thread->reader.index.layout,
                   dump_name(t, it.event.function_id, hex, sizeof hex));
    }
    atf_merge_deinit(&m);
    return ATF_OK;
}

/* ==== detail records ================================================================= */
typedef struct dump_detail_widths {
    size_t seq, index_seq, type, ts, payload_len;
} dump_detail_widths;

static dump_detail_widths dump_detail_widths_of(const atf_detail_reader *r, const cli_trace *t) {
    dump_detail_widths w;
    uint64_t i, index_seq = 0, type = 0, ts = 0, ts_min = UINT64_MAX, len = 0;
    atf_detail_event ev;
    for (i = 0; i < r->event_count; i++) {
        atf_detail_reader_get(r, i, &ev);
        if (ev.header.index_seq > index_seq) index_seq = ev.header.index_seq;
        if (ev.header.type > type) type = ev.header.type;
        if (ev.header.timestamp_ns > ts) ts = ev.header.timestamp_ns;
        if (ev.header.timestamp_ns < ts_min) ts_min = ev.header.timestamp_ns;
        if (ev.payload_len > len) len = ev.payload_len;
    }
    w.seq = cli_max_size(strlen("detail_seq"), cli_digits(r->event_count ? r->event_count - 1 : 0));
    w.index_seq = cli_max_size(strlen("index_seq"), cli_digits(index_seq));
    w.type = cli_max_size(strlen("type"), cli_digits(type));
    w.ts = cli_max_size(strlen("ts"), dump_time_width(t, ts));
    if (r->event_count) w.ts = cli_max_size(w.ts, dump_time_width(t, ts_min));
    w.payload_len = cli_max_size(strlen("payload_len"), cli_digits(len));
    return w;
}


static void dump_detail_table(const atf_detail_reader *r, const dump_opts *o) {
    static const char hex[] = "0123456789abcdef";
    char line[CLI_LINE_MAX], *p;
    dump_detail_widths w = dump_detail_widths_of(r, o->trace);
    uint64_t i, n = 0;
    atf_detail_event ev;
    p = cli_put_str_aligned(line, "detail_seq", w.seq, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "index_seq", w.index_seq, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "type", w.type, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "flags", DUMP_FLAGS_WIDTH, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "ts", w.ts, 1);
    p = cli_put_str_aligned(cli_put_str(p, "  "), "payload_len", w.payload_len, 1);
    cli_emit(line, p);
    for (i = 0; i < r->event_count && (!o->has_limit || n < o->limit); i++) {
        atf_detail_reader_get(r, i, &ev);
        if (!dump_keep(o, ev.header.timestamp_ns)) continue;
        n++;
        p = cli_put_u64_right(line, i, w.seq);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.header.index_seq, w.index_seq);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.header.type, w.type);
        p = cli_put_str(p, "  0x");
        *p++ = hex[(ev.header.flags >> 12) & 15u];
        *p++ = hex[(ev.header.flags >> 8) & 15u];
        *p++ = hex[(ev.header.flags >> 4) & 15u];
        *p++ = hex[ev.header.flags & 15u];
        p = dump_put_time_right(cli_put_str(p, "  "), o->trace, ev.header.timestamp_ns, w.ts);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev.payload_len, w.payload_len);
        cli_emit(line, p);
    }
}

static void dump_detail_json(const atf_detail_reader *r, const dump_opts *o) {
    char line[CLI_LINE_MAX], *p;
    uint64_t i, n = 0;
    atf_detail_event ev;
    for (i = 0; i < r->event_count && (!o->has_limit || n < o->limit); i++) {
        atf_detail_reader_get(r, i, &ev);
        if (!dump_keep(o, ev.header.timestamp_ns)) continue;
        n++;
        p = cli_put_u64(cli_put_str(line, "{\"detail_seq\":"), i);
        p = cli_put_u64(cli_put_str(p, ",\"index_seq\":"), ev.header.index_seq);
        p = cli_put_u64(cli_put_str(p, ",\"type\":"), ev.header.type);
        p = cli_put_u64(cli_put_str(p, ",\"flags\":"), ev.header.flags);
        p = cli_put_time(cli_put_str(p, ",\"ts\":"), o->trace, ev.header.timestamp_ns);
        p = cli_put_u64(cli_put_str(p, ",\"payload_len\":"), ev.payload_len);
        cli_emit(line, cli_put_str(p, "}"));
    }
}

/* A lone detail file: its records; relative times count from its first one. */
static int dump_detail_file(const cli_command *cmd, const char *path, dump_opts *o) {
    atf_detail_reader r;
    atf_detail_event first;
    int status;
    if (o->view.threads.count || o->view.has_pid ||
        (o->view.clock && strcmp(o->view.clock, "trace") != 0))
        return cli_usage_error(cmd, "--thread, --pid and --clock are for a session (--clock: "
                                    "the anchors of its manifest); %s is a lone detail file",
                               path);
    if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    memset(&first, 0, sizeof first);
    if (r.event_count) atf_detail_reader_get(&r, 0, &first);
    status = cli_view_window(cmd, &o->view, first.header.timestamp_ns, &o->window);
    if (status == CLI_CONTINUE) {
        atf_error e;
        if (o->json) dump_detail_json(&r, o);
        else dump_detail_table(&r, o);
        status = cli_detail_damage(&r, &e) ? cli_report(&e) : CLI_EXIT_OK;
    }
    atf_detail_reader_close(&r);
    return status;
}

/* A trace: a session merged, or one thread with its detail records after --detail. */
static int dump_trace(const cli_command *cmd, const char *path, dump_opts *o) {
    cli_trace t;
    atf_merge_filter f;
    atf_error e;
    int merged, status = cli_trace_open_view(cmd, &t, path, &o->view);
    if (status != CLI_EXIT_OK) return status;
    merged = cli_trace_is_session(&t);
    if (merged && o->detail) {
        cli_trace_close(&t);
        return cli_usage_error(cmd, "--detail is for files and thread directories; "
                                    "dump %s/thread_N for its detail records", path);
    }
    o->window = t.window;
    o->trace = &t;
    cli_trace_filter(&t, &f);
    status = CLI_EXIT_OK;
    if (dump_events(&t, &f, o, merged) != ATF_OK) {
        cli_error_init(&e, ATF_E_NOMEM, path, 0, "merge of out-of-order threads");
        status = cli_report(&e);
    }
    if (!merged && o->detail) {
        const atf_session_thread *th = atf_session_reader_thread(&t.reader, t.slot);
        if (th && th->reader.has_detail) {
            if (o->json) {
                dump_detail_json(&th->reader.detail, o);
            } else {
                cli_print("\n");
                dump_detail_table(&th->reader.detail, o);
            }
        }
    }
    if (cli_trace_warn_damage(&t)) status = CLI_EXIT_DATA;
    o->trace = NULL;
    cli_trace_close(&t);
    return status;
}

int cli_cmd_dump(const cli_command *cmd, int argc, char **argv) {
    static dump_opts opts; /* static: the view's lists are large */
    dump_opts *o = &opts;
    const cli_flag flags[] = {
        { "--json", &o->json, CLI_OPT_FLAG, NULL },
        { "--detail", &o->detail, CLI_OPT_FLAG, NULL },
        { "--limit", &o->has_limit, CLI_OPT_U64, &o->limit },
    };
    int rc;
    cli_kind kind;
    atf_error e;
    memset(o, 0, sizeof *o);
    rc = cli_parse_view_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], &o->view,
                             CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_PID | CLI_VIEW_CLOCK);
    if (rc != CLI_CONTINUE) return rc;
    if (cli_classify(argv[1], &kind, &e) != ATF_OK) return cli_report(&e);
    if (kind == CLI_KIND_DETAIL) return dump_detail_file(cmd, argv[1], o);
    return dump_trace(cmd, argv[1], o);
}
