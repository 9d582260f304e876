/* info_cmd.c - atf info: what a file, a thread directory, a session pid_* directory or a
 * session_* directory (each of its pid_* directories) holds, and its state.
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "facts.h"

#include <stdlib.h>
#include <string.h>

/* time_first_ns, time_last_ns and duration of the first and last event. */
static void cli_info_time_range(uint64_t count, uint64_t first, uint64_t last) {
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

static void cli_info_identity(const char *path, const char *kind, int layout, uint8_t version,
                              uint8_t arch, uint8_t os, uint32_t thread_id) {
    cli_kv("file", "%s", path);
    cli_kv("kind", "%s", kind);
    cli_kv("layout", "%d (%s)", layout,
           layout == ATF_LAYOUT_1 ? "deployed structs of TRACE_SCHEMA.md" : "atf-format-spec.txt");
    cli_kv("version", "%u", version);
    cli_kv("arch", "%s (%u)", atf_arch_str(arch), arch);
    cli_kv("os", "%s (%u)", atf_os_str(os), os);
    cli_kv("thread_id", "%u", thread_id);
}

/* The footer, torn_bytes and crc lines, then the problems on stderr; returns the exit
 * status (damaged data is 1, a file recovered after a crash is 0). */
static int cli_info_state(const cli_facts *f) {
    char crc[128];
    cli_kv("events_offset", "%llu", (cli_ull)f->events_offset);
    cli_kv("file_size", "%llu", (cli_ull)f->file_size);
    switch (f->recovery) {
    case ATF_RECOVERY_FINALIZED:
        cli_kv("footer", "finalized (footer at offset %llu)", (cli_ull)f->footer_offset);
        break;
    case ATF_RECOVERY_FOOTER_AT_END:
        cli_kv("footer", "footer at end (offset %llu; header still the placeholder)",
               (cli_ull)f->footer_offset);
        break;
    case ATF_RECOVERY_FROM_SIZE:
        cli_kv("footer", "recovered from size (%s)", cli_recovery_text(f));
        break;
    case ATF_RECOVERY_FOOTER_MISMATCH:
        cli_kv("footer", "footer mismatch (footer says %llu events in %llu bytes; the file "
               "holds %llu events in %llu bytes)", (cli_ull)f->footer_count,
               (cli_ull)f->footer_bytes, (cli_ull)f->count, (cli_ull)f->section_bytes);
        break;
    }
    cli_kv("torn_bytes", "%llu", (cli_ull)f->torn_bytes);
    cli_kv("crc", "%s", cli_crc_text(f, crc, sizeof crc));
    return cli_problems(f, 0, cli_err(), "atf: ") ? CLI_EXIT_DATA : CLI_EXIT_OK;
}

static int cli_info_index(const char *path) {
    atf_index_reader r;
    atf_index_event first, last;
    cli_facts f;
    const atf_index_header *h = &r.header;
    int status;
    if (atf_index_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    cli_facts_index(&f, &r);
    cli_info_identity(path, "index", r.layout, h->version, h->arch, h->os, h->thread_id);
    cli_kv("clock_type", "%s (%u)", atf_clock_str(h->clock_type), h->clock_type);
    cli_kv("flags", "0x%08x%s", h->flags,
           (h->flags & ATF_INDEX_FLAG_HAS_DETAIL_FILE) ? " (has_detail_file)" : "");
    cli_kv("event_size", "%u", h->event_size);
    cli_kv("events", "%llu", (cli_ull)r.event_count);
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    if (r.event_count > 0) {
        atf_index_reader_get(&r, 0, &first);
        atf_index_reader_get(&r, r.event_count - 1, &last);
    }
    cli_info_time_range(r.event_count, first.timestamp_ns, last.timestamp_ns);
    status = cli_info_state(&f);
    atf_index_reader_close(&r);
    return status;
}

static int cli_info_detail(const char *path) {
    atf_detail_reader r;
    atf_detail_event first, last;
    cli_facts f;
    const atf_detail_header *h = &r.header;
    int status;
    if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
    cli_facts_detail(&f, &r);
    cli_info_identity(path, "detail", r.layout, h->version, h->arch, h->os, h->thread_id);
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
    cli_info_time_range(r.event_count, first.header.timestamp_ns, last.header.timestamp_ns);
    status = cli_info_state(&f);
    atf_detail_reader_close(&r);
    return status;
}

/* The gaps.atf of thread directory dir (at path), read by the thread reader: its totals;
 * a damaged file is reported on stderr (status 1) after the gaps before the damage. */
static int cli_info_gaps(const char *dir, const char *path) {
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

/* A thread directory: its index.atf, then its detail.atf and gaps.atf when there are. */
static int cli_info_dir(const char *dir) {
    char path[CLI_PATH_MAX];
    atf_error e;
    int status;
    if (cli_join(path, sizeof path, dir, "index.atf", &e) != ATF_OK) return cli_report(&e);
    status = cli_info_index(path);
    if (cli_join(path, sizeof path, dir, "detail.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int detail_status;
        cli_print("\n");
        detail_status = cli_info_detail(path);
        if (status == CLI_EXIT_OK) status = detail_status;
    }
    if (cli_join(path, sizeof path, dir, "gaps.atf", &e) != ATF_OK) return cli_report(&e);
    if (cli_exists(path)) {
        int gaps_status;
        cli_print("\n");
        gaps_status = cli_info_gaps(dir, path);
        if (status == CLI_EXIT_OK) status = gaps_status;
    }
    return status;
}

static int cli_info_session(const char *dir);
static int cli_info_root(const char *path);

/* A gaps.atf file typed as PATH: the gaps of its thread directory. */
static int cli_info_gaps_file(const char *path) {
    char dir[CLI_PATH_MAX];
    atf_thread_reader t;
    cli_parent_dir(path, dir, sizeof dir);
    if (atf_thread_reader_open(&t, dir, NULL) != ATF_OK) return cli_report(&t.error);
    atf_thread_reader_close(&t);
    return cli_info_gaps(dir, path);
}

static int cli_info_path(const char *path) {
    cli_kind kind;
    atf_error e;
    if (cli_classify(path, &kind, &e) != ATF_OK) return cli_report(&e);
    switch (kind) {
    case CLI_KIND_INDEX: return cli_info_index(path);
    case CLI_KIND_DETAIL: return cli_info_detail(path);
    case CLI_KIND_GAPS: return cli_info_gaps_file(path);
    case CLI_KIND_THREAD: return cli_info_dir(path);
    case CLI_KIND_PID: return cli_info_session(path);
    case CLI_KIND_ROOT: return cli_info_root(path);
    }
    return CLI_EXIT_DATA;
}

int cli_cmd_info(const cli_command *cmd, int argc, char **argv) {
    int i, nops = 0, status = CLI_EXIT_OK;
    int rc = cli_parse_args(cmd, argc, argv, NULL, 0, 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    for (i = 1; i <= nops; i++) {
        int s;
        if (i > 1) cli_print("\n");
        s = cli_info_path(argv[i]);
        if (status == CLI_EXIT_OK) status = s;
    }
    return status;
}

static const char *cli_layout_text(uint32_t layout) {
    return layout == ATF_LAYOUT_1 ? "deployed structs of TRACE_SCHEMA.md"
         : layout == ATF_LAYOUT_2 ? "atf-format-spec.txt" : "unknown";
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
    snprintf(w->lost, sizeof w->lost, "%llu", (cli_ull)t->reader.events_lost);
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

static int cli_info_session(const char *dir) {
    static const char *titles[CLI_COLS] = { "slot", "os_tid", "events", "dropped", "gaps",
                                            "lost", "detail", "out_of_order", "index",
                                            "detail_file" };
    atf_session_reader r;
    cli_thread_row *rows;
    atf_error e;
    char text[160];
    size_t i, c, width[CLI_COLS];
    uint64_t events = 0, dropped = 0, detail = 0, gaps = 0, lost = 0;
    int status = CLI_EXIT_OK;
    if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) return cli_report(&r.error);
    rows = (cli_thread_row *)calloc(r.thread_count ? r.thread_count : 1, sizeof *rows);
    if (!rows) {
        cli_error_init(&e, ATF_E_NOMEM, dir, 0, "thread table");
        atf_session_reader_close(&r);
        return cli_report(&e);
    }
    for (c = 0; c < CLI_COLS; c++) width[c] = strlen(titles[c]);
    for (i = 0; i < r.thread_count; i++) {
        atf_session_thread *t = &r.threads[i];
        cli_thread_row *w = &rows[i];
        const char *cells[CLI_COLS];
        snprintf(w->slot, sizeof w->slot, "%u", t->slot);
        snprintf(w->tid, sizeof w->tid, "%u", t->os_thread_id);
        snprintf(w->dropped, sizeof w->dropped, "%llu", (cli_ull)t->events_dropped);
        w->name = t->name[0] ? t->name : "-";
        dropped += t->events_dropped;
        if (t->open_result != ATF_OK) {
            cli_row_unknown(w, t);
        } else {
            cli_row_files(w, t);
            gaps += t->reader.gap_count;
            lost += t->reader.events_lost;
            events += t->reader.index.event_count;
            detail += t->reader.has_detail ? t->reader.detail.event_count : 0;
        }
        cli_row_cells(w, cells);
        for (c = 0; c < CLI_COLS; c++) width[c] = cli_max_size(width[c], strlen(cells[c]));
    }
    cli_kv("session", "%s", dir);
    cli_kv("manifest", "%s", cli_manifest_text(&r, text, sizeof text));
    cli_kv("format_version", "%u", r.format_version);
    cli_kv("layout", "%u (%s)", r.layout, cli_layout_text(r.layout));
    cli_kv("clock_type", "%s (%u)", atf_clock_str(r.clock_type), r.clock_type);
    if (r.time_start_ns == 0 && r.time_end_ns == 0) {
        cli_kv("time_start_ns", "-");
        cli_kv("time_end_ns", "-");
        cli_kv("duration", "-");
    } else {
        cli_kv("time_start_ns", "%llu", (cli_ull)r.time_start_ns);
        cli_kv("time_end_ns", "%llu", (cli_ull)r.time_end_ns);
        cli_kv_duration(r.time_start_ns, r.time_end_ns);
    }
    cli_kv("threads", "%llu", (cli_ull)r.thread_count);
    cli_kv("events", "%llu", (cli_ull)events);
    cli_kv("events_dropped", "%llu (manifest)", (cli_ull)dropped);
    cli_kv("gaps", "%llu (%llu events lost, from gaps.atf)", (cli_ull)gaps, (cli_ull)lost);
    cli_kv("detail_records", "%llu", (cli_ull)detail);
    cli_kv("symbols", "%llu", (cli_ull)r.symbol_count);
    cli_print("\n");
    cli_print_row(titles, width, "name");
    for (i = 0; i < r.thread_count; i++) {
        const char *cells[CLI_COLS];
        cli_row_cells(&rows[i], cells);
        cli_print_row(cells, width, rows[i].name);
    }
    free(rows);
    if (cli_warn_damage(&r, 0, 0, 1)) status = CLI_EXIT_DATA;
    atf_session_reader_close(&r);
    return status;
}

/* One pid_* directory of a session_* directory, after a blank line from the one before. */
static int cli_info_pid(void *ctx, const char *pid_dir, size_t i) {
    (void)ctx;
    if (i) cli_print("\n");
    return cli_info_session(pid_dir);
}

/* A session_* directory: each of its pid_* directories. */
static int cli_info_root(const char *path) {
    return cli_each_pid_dir(path, cli_info_pid, NULL);
}

