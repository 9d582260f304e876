/* info_cmd.c - atf info: what a file, a thread directory, a session pid_* directory or a
 * session_* directory (each of its pid_* directories) holds, and its state; a session's
 * also as JSON (--json), one object per pid_* directory and line.
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "facts.h"
#include "walk.h"

#include <stdlib.h>
#include <string.h>

/* time_first_ns, time_last_ns and duration of the first and last event. */
static void info_time_range(uint64_t count, uint64_t first, uint64_t last) {
    if (count == 0) {
        cli_kv("time_first_ns", "-");
        cli_kv("time_last_ns", "-");
        cli_kv("duration", "-");
        return;
    }
    cli_kv("time_first_ns", "%llu", (cli_ull)first);
    cli_kv("time_last_ns", "%llu", (cli_ull)last);
    cli_kv_duration(first, last);
}

/* The layouts as docs/FORMAT.md names them. */
static const char *cli_layout_text(uint32_t layout) {
    return layout == ATF_LAYOUT_1 ? "the deployed layout, version byte 1"
         : layout == ATF_LAYOUT_2 ? "the specification's layout, version byte 2"
         : layout == ATF_LAYOUT_PACKED ? "packed: layout-1 events in blocks, version byte 3"
                                       : "unknown";
}

static void info_identity(const char *path, const char *kind, int layout, uint8_t version,
                              uint8_t arch, uint8_t os, uint32_t thread_id) {
    cli_kv("file", "%s", path);
    cli_kv("kind", "%s", kind);
    cli_kv("layout", "%d (%s)", layout, cli_layout_text((uint32_t)layout));
    cli_kv("version", "%u", version);
    cli_kv("arch", "%s (%u)", atf_arch_str(arch), arch);
    cli_kv("os", "%s (%u)", atf_os_str(os), os);
    cli_kv("thread_id", "%u", thread_id);
}

/* The footer, torn_bytes and crc lines, then the problems on stderr; returns the exit
 * status (damaged data is 1, a file recovered after a crash is 0). */
static int info_state(const cli_facts *f) {
    char crc[128];
    cli_kv("events_offset", "%llu", (cli_ull)f->events_offset);
    cli_kv("file_size", "%llu", (cli_ull)f->file_size);
    switch (f->counted) {
    case ATF_COUNT_FINALIZED:
        cli_kv("footer", "finalized (footer at offset %llu)", (cli_ull)f->footer_offset);
        break;
    case ATF_COUNT_FOOTER_AT_END:
        cli_kv("footer", "footer at end (offset %llu; header still the placeholder)",
               (cli_ull)f->footer_offset);
        break;
    case ATF_COUNT_FROM_SIZE:
        cli_kv("footer", "recovered from size (%s)", cli_counted_text(f));
        break;
    case ATF_COUNT_FOOTER_MISMATCH:
        cli_kv("footer", "footer mismatch (footer says %llu events in %llu bytes; the file "
               "holds %llu events in %llu bytes)", (cli_ull)f->footer_count,
               (cli_ull)f->footer_bytes, (cli_ull)f->count, (cli_ull)f->section_bytes);
        break;
    }
    cli_kv("torn_bytes", "%llu", (cli_ull)f->torn_bytes);
    cli_kv("crc", "%s", cli_crc_text(f, crc, sizeof crc));
    return cli_problems(f, 0, cli_err(), "atf: ") ? CLI_EXIT_DATA : CLI_EXIT_OK;
}

static int info_index(const char *path) {
    atf_index_reader r;
    atf_index_event first, last;
    cli_facts f;
    const atf_index_header *h = &r.header;
    int status;
    if (atf_index_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    cli_facts_index(&f, &r);
    info_identity(path, "index", r.packed ? ATF_LAYOUT_PACKED : r.layout, h->version, h->arch,
                  h->os, h->thread_id);
    cli_kv("clock_type", "%s (%u)", atf_clock_str(h->clock_type), h->clock_type);
    cli_kv("flags", "0x%08x%s", h->flags,
           (h->flags & ATF_INDEX_FLAG_HAS_DETAIL_FILE) ? " (has_detail_file)" : "");
    cli_kv("event_size", "%u", h->event_size);
    cli_kv("events", "%llu", (cli_ull)r.event_count);
    if (r.packed && r.event_count)
        cli_kv("packed", "%llu blocks of up to %u events, %.2f bytes per event (layout 1: 32)",
               (cli_ull)((r.event_count + r.block_events - 1) / r.block_events), r.block_events,
               (double)r.image.size / (double)r.event_count);
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    if (r.event_count > 0) {
        atf_index_reader_get(&r, 0, &first);
        atf_index_reader_get(&r, r.event_count - 1, &last);
    }
    info_time_range(r.event_count, first.timestamp_ns, last.timestamp_ns);
    status = info_state(&f);
    atf_index_reader_close(&r);
    return status;
}

static int info_detail(const char *path) {
    atf_detail_reader r;
    atf_detail_event first, last;
    cli_facts f;
    const atf_detail_header *h = &r.header;
    int status;
    if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    cli_facts_detail(&f, &r);
    info_identity(path, "detail", r.layout, h->version, h->arch, h->os, h->thread_id);
    cli_kv("flags", "0x%08x", h->flags);
    cli_kv("events", "%llu", (cli_ull)r.event_count);
    cli_kv("bytes_length", "%llu", (cli_ull)r.bytes_length);
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    if (r.event_count > 0) {
        atf_detail_reader_get(&r, 0, &first);
        atf_detail_reader_get(&r, r.event_count - 1, &last);
        cli_kv("index_seq", "%llu .. %llu", (cli_ull)first.header.index_seq,
               (cli_ull)last.header.index_seq);
    } else {
        cli_kv("index_seq", "-");
    }
    info_time_range(r.event_count, first.header.timestamp_ns, last.header.timestamp_ns);
    status = info_state(&f);
    atf_detail_reader_close(&r);
    return status;
}

/* The gaps.atf of thread directory dir (at path), read by the thread reader: its totals;
 * a damaged file is reported on stderr (status 1) after the gaps before the damage. */
static int info_gaps(const char *dir, const char *path) {
    atf_thread_reader t;
    uint64_t detail_lost = 0;
    size_t i;
    int status = CLI_EXIT_OK;
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) return CLI_EXIT_OK; /* said above */
    for (i = 0; i < t.gap_count; i++) detail_lost += t.gaps[i].detail_lost;
    cli_kv("file", "%s", path);
    cli_kv("kind", "gaps");
    cli_kv("gaps", "%llu", (cli_ull)t.gap_count);
    cli_kv("events_lost", "%llu", (cli_ull)t.events_lost);
    cli_kv("detail_lost", "%llu", (cli_ull)detail_lost);
    if (t.error.code != ATF_OK) status = cli_report(&t.error);
    atf_thread_reader_close(&t);
    return status;
}

/* The pauses.atf of thread directory dir (at path), read by the thread reader: its totals;
 * a damaged file is reported on stderr (status 1) after the pauses before the damage. */
static int info_pauses(const char *dir, const char *path) {
    atf_thread_reader t;
    int status = CLI_EXIT_OK;
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) return CLI_EXIT_OK; /* said above */
    cli_kv("file", "%s", path);
    cli_kv("kind", "pauses");
    cli_kv("pauses", "%llu", (cli_ull)t.pause_count);
    cli_kv("paused_ns", "%llu", (cli_ull)t.paused_ns);
    if (t.error.code != ATF_OK) status = cli_report(&t.error);
    atf_thread_reader_close(&t);
    return status;
}

/* A thread directory: its index.atf, then its detail.atf, gaps.atf and pauses.atf when
 * there are. */
static int info_dir(const char *dir) {
    char path[CLI_PATH_MAX];
    atf_error e;
    int status;
    if (cli_join(path, sizeof path, dir, "index.atf", &e) != ATF_OK) return cli_report(&e);
    status = info_index(path);
    if (cli_join(path, sizeof path, dir, "detail.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int detail_status;
        cli_print("\n");
        detail_status = info_detail(path);
        if (status == CLI_EXIT_OK) status = detail_status;
    }
    if (cli_join(path, sizeof path, dir, "gaps.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int gaps_status;
        cli_print("\n");
        gaps_status = info_gaps(dir, path);
        if (status == CLI_EXIT_OK) status = gaps_status;
    }
    if (cli_join(path, sizeof path, dir, "pauses.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int pauses_status;
        cli_print("\n");
        pauses_status = info_pauses(dir, path);
        if (status == CLI_EXIT_OK) status = pauses_status;
    }
    return status;
}

static int info_session(const char *dir, int json);
static int info_root(const char *path, int json);

/* A side file typed as PATH (gaps.atf, pauses.atf, by the name the thread reader reads):
 * the gaps or the pauses of its thread directory. */
static int info_side_file(const char *path) {
    char dir[CLI_PATH_MAX], base[CLI_PATH_MAX];
    atf_thread_reader t;
    cli_split_path(path, dir, base, sizeof dir);
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) return cli_report(&t.error);
    atf_thread_reader_close(&t);
    return strcmp(base, "pauses.atf") == 0 ? info_pauses(dir, path) : info_gaps(dir, path);
}

static int info_path(const char *path, int json) {
    cli_kind kind;
    atf_error e;
    if (cli_classify(path, &kind, &e) != ATF_OK) return cli_report(&e);
    switch (kind) {
    case CLI_KIND_INDEX: return info_index(path);
    case CLI_KIND_DETAIL: return info_detail(path);
    case CLI_KIND_SIDE: return info_side_file(path);
    case CLI_KIND_THREAD: return info_dir(path);
    case CLI_KIND_PID: return info_session(path, json);
    case CLI_KIND_ROOT: return info_root(path, json);
    }
    return CLI_EXIT_DATA;
}

/* --json describes sessions only: CLI_CONTINUE when every PATH that exists is a pid_* or
 * session_* directory (a missing one is reported when its turn comes), else the usage
 * error's status. */
static int info_json_paths(const cli_command *cmd, int nops, char **argv) {
    int i;
    for (i = 1; i <= nops; i++) {
        cli_kind kind;
        atf_error e;
        if (cli_classify(argv[i], &kind, &e) == ATF_OK && kind != CLI_KIND_PID &&
            kind != CLI_KIND_ROOT)
            return cli_usage_error(cmd, "--json is for session directories (pid_* and "
                                        "session_*): %s is not one", argv[i]);
    }
    return CLI_CONTINUE;
}

int cli_cmd_info(const cli_command *cmd, int argc, char **argv) {
    int i, nops = 0, json = 0, status = CLI_EXIT_OK;
    const cli_flag flags[] = { { "--json", &json, CLI_OPT_FLAG, NULL } };
    int rc = cli_parse_args(cmd, argc, argv, flags, 1, 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (json && (rc = info_json_paths(cmd, nops, argv)) != CLI_CONTINUE) return rc;
    for (i = 1; i <= nops; i++) {
        int s;
        if (i > 1 && !json) cli_print("\n");
        s = info_path(argv[i], json);
        if (status == CLI_EXIT_OK) status = s;
    }
    return status;
}


/* ==== info =========================================================================== */
/* One row of the thread table, as text cells. */
typedef struct cli_thread_row {
    char slot[12], tid[12], events[24], dropped[24], gaps[24], lost[24], detail[24], order[4];
    char index[64], detail_file[64];
    const char *name;
} cli_thread_row;

enum { CLI_COLS = 10, CLI_NUMERIC_COLS = 7 };

static void cli_row_cells(cli_thread_row *w, const char *cells[CLI_COLS]) {
    cells[0] = w->slot, cells[1] = w->tid, cells[2] = w->events, cells[3] = w->dropped;
    cells[4] = w->gaps, cells[5] = w->lost, cells[6] = w->detail, cells[7] = w->order;
    cells[8] = w->index, cells[9] = w->detail_file;
}

static void cli_print_row(const char *cells[CLI_COLS], const size_t width[CLI_COLS],
                          const char *name) {
    char line[CLI_LINE_MAX], *p = line;
    size_t c;
    for (c = 0; c < CLI_COLS; c++) {
        if (c) p = cli_put_str(p, "  ");
        p = cli_put_str_aligned(p, cells[c], width[c], c < CLI_NUMERIC_COLS);
    }
    p = cli_put_str(cli_put_str(p, "  "), name);
    cli_emit(line, p);
}

/* The cells of a thread whose files did not open: nothing of them is known. */
static void cli_row_unknown(cli_thread_row *w, const atf_session_thread *t) {
    snprintf(w->events, sizeof w->events, "-");
    snprintf(w->gaps, sizeof w->gaps, "-");
    snprintf(w->lost, sizeof w->lost, "-");
    snprintf(w->detail, sizeof w->detail, "-");
    snprintf(w->order, sizeof w->order, "-");
    snprintf(w->index, sizeof w->index, "%s", t->missing ? "missing" : "unreadable");
    snprintf(w->detail_file, sizeof w->detail_file, "-");
}

/* The cells of an open thread, its CRCs verified. */
static void cli_row_files(cli_thread_row *w, atf_session_thread *t) {
    cli_facts f;
    uint64_t ndetail = t->reader.has_detail ? t->reader.detail.event_count : 0;
    snprintf(w->events, sizeof w->events, "%llu", (cli_ull)t->reader.index.event_count);
    snprintf(w->gaps, sizeof w->gaps, "%llu", (cli_ull)t->reader.gap_count);
    snprintf(w->lost, sizeof w->lost, "%llu", /* not what was left out by choice */
             (cli_ull)(t->reader.events_lost - walk_not_recorded(&t->reader)));
    snprintf(w->detail, sizeof w->detail, "%llu", (cli_ull)ndetail);
    snprintf(w->order, sizeof w->order, "%s", t->out_of_order ? "yes" : "no");
    cli_facts_index(&f, &t->reader.index);
    cli_state_word(&f, w->index, sizeof w->index);
    snprintf(w->detail_file, sizeof w->detail_file, "-");
    if (t->reader.has_detail) {
        cli_facts_detail(&f, &t->reader.detail);
        cli_state_word(&f, w->detail_file, sizeof w->detail_file);
    }
}

/* "paused:" when threads drained their own full rings (ATF_OVERFLOW_BLOCK), and how much
 * of it pauses.atf places (the tools leave that out of the functions' times). */
/* The recording's bounds, and the one that stopped it, when there are any. */
static void info_bounds_text(const atf_session_reader *r) {
    char d[32];
    if (r->max_bytes) cli_kv("max_bytes", "%llu", (cli_ull)r->max_bytes);
    if (r->min_duration_ns)
        cli_kv("min_duration", "%s (only calls this long and their callers were recorded)",
               cli_fmt_dur(d, sizeof d, r->min_duration_ns));
    if (r->max_duration_ns)
        cli_kv("max_duration", "%s", cli_fmt_dur(d, sizeof d, r->max_duration_ns));
    if (r->disk_reserve_bytes) cli_kv("disk_reserve", "%llu bytes", (cli_ull)r->disk_reserve_bytes);
    if (r->keep_last_bytes)
        cli_kv("keep_last", "%llu bytes%s%s (flight recorder: only the most recent events were "
               "kept; the earlier ones are gaps of reason \"discarded\")",
               (cli_ull)r->keep_last_bytes, r->keep_last_ns ? ", " : "",
               r->keep_last_ns ? cli_fmt_dur(d, sizeof d, r->keep_last_ns) : "");
    if (r->stopped[0])
        cli_kv("stopped", "at the %s, at %llu ns (+%s): the events after it were not recorded",
               r->stopped, (cli_ull)r->stopped_at_ns,
               cli_fmt_dur(d, sizeof d, r->stopped_at_ns > r->time_start_ns
                                            ? r->stopped_at_ns - r->time_start_ns : 0));
}

static void info_paused_text(const atf_session_reader *r) {
    uint64_t ns = 0, times = 0, placed = 0;
    char d[32], p[32];
    size_t i;
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        ns += t->paused_ns;
        times += t->paused_ns ? t->waits : 0;
        if (t->open_result == ATF_OK) placed += t->reader.paused_ns;
    }
    if (ns)
        cli_kv("paused", "%s (%llu full rings drained by their own threads; %s of it in "
               "pauses.atf, left out of the functions' times)", cli_fmt_dur(d, sizeof d, ns),
               (cli_ull)times, cli_fmt_dur(p, sizeof p, placed));
}

/* The totals over a session's threads that opened. */
typedef struct info_totals {
    uint64_t events, dropped, detail, gaps, lost;
    uint64_t not_recorded;           /* of lost: left out by choice (walk_gap_by_choice) */
} info_totals;

/* The thread table's rows of r (calloc'd; NULL when out of memory) and the totals. */
static cli_thread_row *info_rows(atf_session_reader *r, info_totals *tot) {
    cli_thread_row *rows = (cli_thread_row *)calloc(r->thread_count ? r->thread_count : 1,
                                                    sizeof *rows);
    size_t i;
    memset(tot, 0, sizeof *tot);
    if (!rows) return NULL;
    atf_session_reader_check_order(r, NULL); /* the out_of_order column */
    for (i = 0; i < r->thread_count; i++) {
        atf_session_thread *t = &r->threads[i];
        cli_thread_row *w = &rows[i];
        snprintf(w->slot, sizeof w->slot, "%u", t->slot);
        snprintf(w->tid, sizeof w->tid, "%u", t->os_thread_id);
        snprintf(w->dropped, sizeof w->dropped, "%llu", (cli_ull)t->events_dropped);
        w->name = t->name[0] ? t->name : "-";
        tot->dropped += t->events_dropped;
        if (t->open_result != ATF_OK) {
            cli_row_unknown(w, t);
            continue;
        }
        cli_row_files(w, t);
        tot->gaps += t->reader.gap_count;
        tot->lost += t->reader.events_lost;
        tot->not_recorded += walk_not_recorded(&t->reader);
        tot->events += t->reader.index.event_count;
        tot->detail += t->reader.has_detail ? t->reader.detail.event_count : 0;
    }
    return rows;
}

/* How many functions the manifest lists by location only (no name). */
static size_t info_unnamed(const atf_session_reader *r) {
    size_t i, n = 0;
    for (i = 0; i < r->symbol_count; i++) n += r->symbols[i].name == NULL;
    return n;
}

/* "key:" padded to the column where cli_kv starts its values (16 + 1). */
static void info_key(const char *key) {
    size_t n = strlen(key);
    cli_printf("%s:%*s", key, (int)(n < 16 ? 16 - n : 0), "");
}

/* "key:" and text as cli_text writes it (control characters escaped), on one line. */
static void info_kv_text(const char *key, const char *text) {
    info_key(key);
    cli_text(text);
    cli_print("\n");
}

/* One line per module: "module: ID base 0x... size N [build_id HEX] path PATH". */
static void info_modules_text(const atf_session_reader *r) {
    size_t i;
    for (i = 0; i < r->module_count; i++) {
        const atf_session_module *m = &r->modules[i];
        char head[160];
        snprintf(head, sizeof head, "%llu base 0x%016llx size %llu%s%s path ",
                 (cli_ull)m->module_id, (cli_ull)m->base_address, (cli_ull)m->size,
                 m->build_id[0] ? " build_id " : "", m->build_id);
        info_key("module");
        cli_print(head);
        cli_text(m->path);
        cli_print("\n");
    }
}

/* One line per timing anchor: "anchor: NAME host_ns N value V timescale T", an inexact
 * one (timescale 0) with its value and rate as decimals. */
static void info_anchors_text(const atf_session_reader *r) {
    size_t i;
    for (i = 0; i < r->anchor_count; i++) {
        const atf_session_anchor *a = &r->anchors[i];
        info_key("anchor");
        cli_text(a->name);
        if (a->timescale > 0)
            cli_printf(" host_ns %llu value %lld timescale %ld\n", (cli_ull)a->host_ns,
                       (cli_ll)a->value, (long)a->timescale);
        else
            cli_printf(" host_ns %llu value %.17g rate %.17g (inexact)\n", (cli_ull)a->host_ns,
                       a->value_f, a->rate);
    }
}

static void info_session_text(const char *dir, const atf_session_reader *r,
                                  cli_thread_row *rows, const info_totals *tot) {
    static const char *titles[CLI_COLS] = { "slot", "os_tid", "events", "dropped", "gaps",
                                            "lost", "detail", "out_of_order", "index",
                                            "detail_file" };
    char text[160];
    size_t i, c, width[CLI_COLS];
    const char *cells[CLI_COLS];
    for (c = 0; c < CLI_COLS; c++) width[c] = strlen(titles[c]);
    for (i = 0; i < r->thread_count; i++) {
        cli_row_cells(&rows[i], cells);
        for (c = 0; c < CLI_COLS; c++) width[c] = cli_max_size(width[c], strlen(cells[c]));
    }
    cli_kv("session", "%s", dir);
    cli_kv("manifest", "%s", cli_manifest_text(r, text, sizeof text));
    cli_kv("format_version", "%u", r->format_version);
    cli_kv("layout", "%u (%s)", r->layout, cli_layout_text(r->layout));
    cli_kv("clock_type", "%s (%u)", atf_clock_str(r->clock_type), r->clock_type);
    if (r->time_start_ns == 0 && r->time_end_ns == 0) {
        cli_kv("time_start_ns", "-");
        cli_kv("time_end_ns", "-");
        cli_kv("duration", "-");
    } else {
        cli_kv("time_start_ns", "%llu", (cli_ull)r->time_start_ns);
        cli_kv("time_end_ns", "%llu", (cli_ull)r->time_end_ns);
        cli_kv_duration(r->time_start_ns, r->time_end_ns);
    }
    cli_kv("threads", "%llu", (cli_ull)r->thread_count);
    cli_kv("events", "%llu", (cli_ull)tot->events);
    cli_kv("events_dropped", "%llu (manifest)", (cli_ull)tot->dropped);
    if (tot->not_recorded)
        cli_kv("gaps", "%llu (%llu events lost, %llu not recorded by choice, from gaps.atf)",
               (cli_ull)tot->gaps, (cli_ull)(tot->lost - tot->not_recorded),
               (cli_ull)tot->not_recorded);
    else
        cli_kv("gaps", "%llu (%llu events lost, from gaps.atf)", (cli_ull)tot->gaps,
               (cli_ull)tot->lost);
    cli_kv("detail_records", "%llu", (cli_ull)tot->detail);
    info_bounds_text(r);
    info_paused_text(r);
    if (info_unnamed(r))
        cli_kv("symbols", "%llu (%llu listed by location only, without a name)",
               (cli_ull)r->symbol_count, (cli_ull)info_unnamed(r));
    else
        cli_kv("symbols", "%llu", (cli_ull)r->symbol_count);
    info_kv_text("cmdline", r->cmdline ? r->cmdline : "-");
    info_modules_text(r);
    info_anchors_text(r);
    cli_print("\n");
    cli_print_row(titles, width, "name");
    for (i = 0; i < r->thread_count; i++) {
        cli_row_cells(&rows[i], cells);
        cli_print_row(cells, width, rows[i].name);
    }
}

/* ==== info --json ==================================================================== */
/* A session as one JSON object on one line: what the text says, with numbers as numbers,
 * "-" cells as null, and the modules, anchors and thread rows as arrays. */

/* ,"key":VALUE where VALUE is s as a JSON string, or null when s is NULL or "-". */
static void info_json_str(const char *key, const char *s) {
    cli_printf(",\"%s\":", key);
    if (!s || strcmp(s, "-") == 0) cli_print("null");
    else cli_json_str(s);
}

/* ,"key":N from a cell of digits, null for "-". */
static void info_json_num(const char *key, const char *cell) {
    cli_printf(",\"%s\":%s", key, strcmp(cell, "-") == 0 ? "null" : cell);
}

/* A double as JSON: null when it is not finite (v - v is NaN for infinities and NaN; no
 * isfinite, whose mingw macro narrows to float). */
static void info_json_double(const char *key, double v) {
    if (v - v == 0.0) cli_printf(",\"%s\":%.17g", key, v);
    else cli_printf(",\"%s\":null", key);
}

static void info_threads_json(const atf_session_reader *r, const cli_thread_row *rows) {
    size_t i;
    cli_print(",\"threads\":[");
    for (i = 0; i < r->thread_count; i++) {
        const cli_thread_row *w = &rows[i];
        cli_printf("%s{\"slot\":%s,\"os_tid\":%s", i ? "," : "", w->slot, w->tid);
        info_json_str("name", r->threads[i].name[0] ? r->threads[i].name : NULL);
        info_json_num("events", w->events);
        info_json_num("dropped", w->dropped);
        info_json_num("gaps", w->gaps);
        info_json_num("lost", w->lost);
        info_json_num("detail", w->detail);
        cli_printf(",\"paused_ns\":%llu", (cli_ull)r->threads[i].paused_ns);
        cli_printf(",\"out_of_order\":%s",
                   strcmp(w->order, "-") == 0 ? "null" : strcmp(w->order, "yes") == 0 ? "true" : "false");
        info_json_str("index", w->index);
        info_json_str("detail_file", w->detail_file);
        cli_print("}");
    }
    cli_print("]");
}

static void info_modules_json(const atf_session_reader *r) {
    size_t i;
    cli_print(",\"modules\":[");
    for (i = 0; i < r->module_count; i++) {
        const atf_session_module *m = &r->modules[i];
        cli_printf("%s{\"module_id\":%llu", i ? "," : "", (cli_ull)m->module_id);
        info_json_str("path", m->path);
        cli_printf(",\"base_address\":\"0x%016llx\",\"size\":%llu", (cli_ull)m->base_address,
                   (cli_ull)m->size);
        info_json_str("build_id", m->build_id[0] ? m->build_id : NULL);
        cli_print("}");
    }
    cli_print("]");
}

/* An exact anchor's value is the integer; an inexact one's (timescale 0) the double. */
static void info_anchors_json(const atf_session_reader *r) {
    size_t i;
    cli_print(",\"anchors\":[");
    for (i = 0; i < r->anchor_count; i++) {
        const atf_session_anchor *a = &r->anchors[i];
        cli_print(i ? ",{\"name\":" : "{\"name\":");
        cli_json_str(a->name);
        cli_printf(",\"host_ns\":%llu", (cli_ull)a->host_ns);
        if (a->timescale > 0) cli_printf(",\"value\":%lld", (cli_ll)a->value);
        else info_json_double("value", a->value_f);
        cli_printf(",\"timescale\":%ld", (long)a->timescale);
        info_json_double("rate", a->rate);
        cli_print("}");
    }
    cli_print("]");
}

static void info_session_json(const char *dir, const atf_session_reader *r,
                                  const cli_thread_row *rows, const info_totals *tot) {
    cli_print("{\"session\":");
    cli_json_str(dir);
    info_json_str("manifest", atf_manifest_state_str(r->manifest));
    info_json_str("state", r->state[0] ? r->state : NULL);
    cli_printf(",\"format_version\":%u,\"layout\":%u,\"clock_type\":", r->format_version,
               r->layout);
    cli_json_str(atf_clock_str(r->clock_type));
    if (r->time_start_ns == 0 && r->time_end_ns == 0)
        cli_print(",\"time_start_ns\":null,\"time_end_ns\":null");
    else
        cli_printf(",\"time_start_ns\":%llu,\"time_end_ns\":%llu", (cli_ull)r->time_start_ns,
                   (cli_ull)r->time_end_ns);
    cli_printf(",\"events\":%llu,\"events_dropped\":%llu,\"gaps\":%llu,"
               "\"events_lost\":%llu,\"events_not_recorded\":%llu,\"detail_records\":%llu,"
               "\"symbols\":%llu,"
               "\"symbols_by_location_only\":%llu",
               (cli_ull)tot->events, (cli_ull)tot->dropped,
               (cli_ull)tot->gaps, (cli_ull)(tot->lost - tot->not_recorded),
               (cli_ull)tot->not_recorded,
               (cli_ull)tot->detail,
               (cli_ull)r->symbol_count, (cli_ull)info_unnamed(r));
    cli_printf(",\"max_bytes\":%llu,\"max_duration_ns\":%llu,\"disk_reserve_bytes\":%llu,"
               "\"min_duration_ns\":%llu,\"keep_last_bytes\":%llu,\"keep_last_ns\":%llu",
               (cli_ull)r->max_bytes, (cli_ull)r->max_duration_ns, (cli_ull)r->disk_reserve_bytes,
               (cli_ull)r->min_duration_ns, (cli_ull)r->keep_last_bytes,
               (cli_ull)r->keep_last_ns);
    info_json_str("stopped", r->stopped[0] ? r->stopped : NULL);
    if (r->stopped[0]) cli_printf(",\"stopped_at_ns\":%llu", (cli_ull)r->stopped_at_ns);
    info_json_str("cmdline", r->cmdline);
    info_modules_json(r);
    info_anchors_json(r);
    info_threads_json(r, rows);
    cli_print("}\n");
}

static int info_session(const char *dir, int json) {
    atf_session_reader r;
    cli_thread_row *rows;
    info_totals tot;
    atf_error e;
    int status = CLI_EXIT_OK;
    if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) return cli_report(&r.error);
    rows = info_rows(&r, &tot);
    if (!rows) {
        cli_error_init(&e, ATF_E_NOMEM, dir, 0, "thread table");
        atf_session_reader_close(&r);
        return cli_report(&e);
    }
    if (json) info_session_json(dir, &r, rows, &tot);
    else info_session_text(dir, &r, rows, &tot);
    free(rows);
    if (cli_warn_damage(&r, 0, 0, 1)) status = CLI_EXIT_DATA;
    atf_session_reader_close(&r);
    return status;
}

/* One pid_* directory of a session_* directory; in text after a blank line from the one
 * before, in JSON on a line of its own. ctx: the json flag. */
static int info_pid(void *ctx, const char *pid_dir, size_t i) {
    int json = *(const int *)ctx;
    if (i && !json) cli_print("\n");
    return info_session(pid_dir, json);
}

/* A session_* directory: each of its pid_* directories. */
static int info_root(const char *path, int json) {
    return cli_each_pid_dir(path, info_pid, &json);
}
