/* session_cmds.c - the session side of atf info, dump and verify: a pid_* directory read
 * through the session reader (manifest, threads, k-way merge), and the tool's minimal
 * scan of manifest.json for what the session reader does not expose.
 * SPDX-License-Identifier: MIT */
#include "atf.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* ==== manifest.json, scanned ========================================================= */
/* A minimal JSON walker over a NUL-terminated text: every function takes the position of
 * a value and the end of the text, checks every step against the end and returns NULL on
 * anything unexpected. Depth is bounded, so no input recurses deeply. */
enum { CLI_JSON_MAX_DEPTH = 64, CLI_MANIFEST_MAX = 64 << 20 };

static const char *cli_json_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* After the string starting at p (on its '"'), or NULL. */
static const char *cli_json_string_end(const char *p, const char *end) {
    for (p++; p < end; p++) {
        if (*p == '\\') {
            if (++p == end) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* After the value starting at p, or NULL. */
static const char *cli_json_skip(const char *p, const char *end, int depth) {
    const char *start;
    char close;
    p = cli_json_ws(p, end);
    if (p >= end || depth > CLI_JSON_MAX_DEPTH) return NULL;
    if (*p == '"') return cli_json_string_end(p, end);
    if (*p == '{' || *p == '[') {
        close = *p == '{' ? '}' : ']';
        p = cli_json_ws(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (p >= end || *p != '"' || (p = cli_json_string_end(p, end)) == NULL) return NULL;
                p = cli_json_ws(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            if ((p = cli_json_skip(p, end, depth + 1)) == NULL) return NULL;
            p = cli_json_ws(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = cli_json_ws(p + 1, end);
        }
    }
    start = p;
    while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == '-' ||
                       *p == '+' || *p == '.' || *p == 'E'))
        p++;
    return p > start ? p : NULL;
}

/* The value of `key` in the object at obj, or NULL. */
static const char *cli_json_get(const char *obj, const char *end, const char *key) {
    size_t len = strlen(key);
    const char *p = cli_json_ws(obj, end);
    if (!p || p >= end || *p != '{') return NULL;
    p = cli_json_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *k = p + 1, *kend = cli_json_string_end(p, end);
        int match;
        if (!kend) return NULL;
        match = (size_t)(kend - 1 - k) == len && memcmp(k, key, len) == 0;
        p = cli_json_ws(kend, end);
        if (p >= end || *p != ':') return NULL;
        p = cli_json_ws(p + 1, end);
        if (match) return p;
        if ((p = cli_json_skip(p, end, 1)) == NULL) return NULL;
        p = cli_json_ws(p, end);
        if (p >= end || *p != ',') return NULL;
        p = cli_json_ws(p + 1, end);
    }
    return NULL;
}

/* The first element of the array at arr, or NULL when it is empty or not an array. */
static const char *cli_json_first(const char *arr, const char *end) {
    const char *p = arr ? cli_json_ws(arr, end) : NULL;
    if (!p || p >= end || *p != '[') return NULL;
    p = cli_json_ws(p + 1, end);
    return p < end && *p != ']' ? p : NULL;
}

/* The element after elem, or NULL after the last one. */
static const char *cli_json_next(const char *elem, const char *end) {
    const char *p = cli_json_skip(elem, end, 1);
    if (!p) return NULL;
    p = cli_json_ws(p, end);
    return p < end && *p == ',' ? cli_json_ws(p + 1, end) : NULL;
}

/* A whole unsigned number: 1, else 0 (fractions, exponents and signs are not one). */
static int cli_json_u64(const char *v, const char *end, uint64_t *out) {
    uint64_t x = 0;
    const char *p = v;
    if (!v) return 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) return 0;
        x = x * 10 + d;
    }
    if (p == v || (p < end && (*p == '.' || *p == 'e' || *p == 'E'))) return 0;
    *out = x;
    return 1;
}

static int cli_json_double(const char *v, const char *end, double *out) {
    char buf[64], *stop;
    size_t n = 0;
    if (!v) return 0;
    while (v + n < end && n + 1 < sizeof buf && strchr("0123456789+-.eE", v[n]) && v[n]) n++;
    if (n == 0) return 0;
    memcpy(buf, v, n);
    buf[n] = '\0';
    *out = strtod(buf, &stop);
    return *stop == '\0';
}

/* The string at v into buf (simple escapes undone, \u escapes beyond ASCII as '?'). */
static int cli_json_str(const char *v, const char *end, char *buf, size_t cap) {
    size_t n = 0;
    const char *p;
    if (!v || v >= end || *v != '"' || cap == 0) return 0;
    for (p = v + 1; p < end && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            if (++p >= end) return 0;
            switch (*p) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned cp = 0;
                int k;
                for (k = 0; k < 4; k++) {
                    char h = ++p < end ? *p : 'x';
                    unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                               : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                               : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
                    if (d == 16u) return 0;
                    cp = cp * 16 + d;
                }
                c = cp < 0x80 ? (char)cp : '?';
                break;
            }
            default: c = *p; break;
            }
        }
        if (n + 1 < cap) buf[n++] = c;
    }
    buf[n] = '\0';
    return p < end;
}

static void cli_manifest_scan(cli_manifest *m, const char *text, const char *end) {
    const char *v, *it;
    size_t n;
    if (!cli_json_skip(text, end, 0) || *cli_json_ws(text, end) != '{') return;
    m->parsed = 1;
    cli_json_str(cli_json_get(text, end, "state"), end, m->state, sizeof m->state);
    v = cli_json_get(text, end, "threads");
    m->has_threads = v && v < end && *v == '[';
    for (n = 0, it = cli_json_first(v, end); it; it = cli_json_next(it, end)) n++;
    m->threads = n ? (cli_manifest_thread *)calloc(n, sizeof *m->threads) : NULL;
    for (it = cli_json_first(v, end); it && m->threads; it = cli_json_next(it, end)) {
        cli_manifest_thread *t = &m->threads[m->thread_count];
        uint64_t id;
        if (!cli_json_u64(cli_json_get(it, end, "id"), end, &id) || id > UINT32_MAX) continue;
        t->id = (uint32_t)id;
        t->has_counts =
            cli_json_u64(cli_json_get(it, end, "events_written"), end, &t->events_written);
        cli_json_u64(cli_json_get(it, end, "events_dropped"), end, &t->events_dropped);
        cli_json_u64(cli_json_get(it, end, "detail_written"), end, &t->detail_written);
        cli_json_u64(cli_json_get(it, end, "detail_dropped"), end, &t->detail_dropped);
        cli_json_u64(cli_json_get(it, end, "events_lost_io"), end, &t->events_lost_io);
        v = cli_json_get(it, end, "finalized");
        t->finalized = v && end - v >= 4 && memcmp(v, "true", 4) == 0;
        m->thread_count++;
    }
    v = cli_json_get(text, end, "timing_anchors");
    for (n = 0, it = cli_json_first(v, end); it; it = cli_json_next(it, end)) n++;
    m->anchors = n ? (cli_anchor *)calloc(n, sizeof *m->anchors) : NULL;
    for (it = cli_json_first(v, end); it && m->anchors; it = cli_json_next(it, end)) {
        cli_anchor *a = &m->anchors[m->anchor_count];
        const char *value = cli_json_get(it, end, "value");
        if (!cli_json_str(cli_json_get(it, end, "name"), end, a->name, sizeof a->name) ||
            !cli_json_u64(cli_json_get(it, end, "host_ns"), end, &a->host_ns) ||
            !cli_json_double(value, end, &a->value))
            continue;
        if (!cli_json_double(cli_json_get(it, end, "rate"), end, &a->rate) || !(a->rate > 0))
            a->rate = 1e9;
        /* a whole number written out in digits is taken exactly; otherwise the double is
         * exact too whenever it is an integer below 2^64 */
        if (cli_json_u64(value, end, &a->value_u64))
            a->value_is_u64 = 1;
        else if (a->value >= 0 && a->value < 18446744073709551616.0 &&
                 a->value == (double)(uint64_t)a->value) {
            a->value_u64 = (uint64_t)a->value;
            a->value_is_u64 = 1;
        }
        m->anchor_count++;
    }
}

atf_result cli_manifest_load(cli_manifest *m, const char *dir, atf_error *e) {
    char path[CLI_PATH_MAX];
    char *text;
    uint64_t size;
    size_t got;
    FILE *f;
    memset(m, 0, sizeof *m);
    memset(e, 0, sizeof *e);
    if (cli_exists(dir) && !cli_is_dir(dir))
        snprintf(path, sizeof path, "%s", dir);
    else if (cli_join(path, sizeof path, dir, "manifest.json", e) != ATF_OK)
        return e->code;
    f = fopen(path, "rb");
    if (!f) return ATF_OK;           /* no manifest: present stays 0 */
    size = cli_file_size(path);
    if (size > CLI_MANIFEST_MAX) {
        fclose(f);
        m->present = 1;
        return ATF_OK;               /* not parsed */
    }
    text = (char *)malloc((size_t)size + 1);
    if (!text) {
        fclose(f);
        cli_error_init(e, ATF_E_NOMEM, path, 0, "manifest text");
        return e->code;
    }
    got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = '\0';
    m->present = 1;
    cli_manifest_scan(m, text, text + got);
    free(text);
    return ATF_OK;
}

void cli_manifest_free(cli_manifest *m) {
    free(m->threads);
    free(m->anchors);
    memset(m, 0, sizeof *m);
}

const cli_manifest_thread *cli_manifest_thread_of(const cli_manifest *m, uint32_t id) {
    size_t i;
    for (i = 0; i < m->thread_count; i++)
        if (m->threads[i].id == id) return &m->threads[i];
    return NULL;
}

const cli_anchor *cli_manifest_anchor(const cli_manifest *m, const char *name) {
    size_t i;
    for (i = 0; i < m->anchor_count; i++)
        if (strcmp(m->anchors[i].name, name) == 0) return &m->anchors[i];
    return NULL;
}

/* ==== shared by info, dump and verify ================================================ */
/* Opens the session; on failure reports on stderr and returns CLI_EXIT_DATA. */
static int cli_session_open(atf_session_reader *r, const char *dir) {
    if (atf_session_reader_open(r, dir, NULL) != ATF_OK) return cli_report(&r->error);
    return CLI_EXIT_OK;
}

static const char *cli_layout_text(uint32_t layout) {
    return layout == ATF_LAYOUT_1 ? "deployed structs of TRACE_SCHEMA.md"
         : layout == ATF_LAYOUT_2 ? "atf-format-spec.txt" : "unknown";
}

/* "ok (state closed)" and the like. */
static const char *cli_manifest_text(const atf_session_reader *r, const cli_manifest *m,
                                     char *buf, size_t cap) {
    if (m->state[0] && r->manifest != ATF_MANIFEST_MISSING)
        snprintf(buf, cap, "%s (state %s)", atf_manifest_state_str(r->manifest), m->state);
    else
        snprintf(buf, cap, "%s", atf_manifest_state_str(r->manifest));
    return buf;
}

/* A file's recovery and CRC state in one word: "finalized,crc-ok", "from-size,crc-none,
 * torn=13". */
static const char *cli_state_word(const cli_facts *f, char *buf, size_t cap) {
    const char *rec = "unknown", *crc = "unknown";
    int n;
    switch (f->recovery) {
    case ATF_RECOVERY_FINALIZED: rec = "finalized"; break;
    case ATF_RECOVERY_FOOTER_AT_END: rec = "footer-at-end"; break;
    case ATF_RECOVERY_FROM_SIZE: rec = "from-size"; break;
    case ATF_RECOVERY_FOOTER_MISMATCH: rec = "footer-mismatch"; break;
    }
    switch (f->crc_state) {
    case ATF_CRC_NO_FOOTER: crc = "crc-none"; break;
    case ATF_CRC_NOT_COMPUTED: crc = "crc-0"; break;
    case ATF_CRC_UNCHECKED: crc = "crc-unchecked"; break;
    case ATF_CRC_OK: crc = "crc-ok"; break;
    case ATF_CRC_MISMATCH: crc = "crc-MISMATCH"; break;
    }
    n = snprintf(buf, cap, "%s,%s", rec, crc);
    if (f->torn_bytes && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ",torn=%llu", (cli_ull)f->torn_bytes);
    return buf;
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

int cli_info_session(const char *dir) {
    static const char *titles[CLI_COLS] = { "slot", "os_tid", "events", "dropped", "gaps",
                                            "lost", "detail", "out_of_order", "index",
                                            "detail_file" };
    atf_session_reader r;
    cli_manifest m;
    cli_thread_row *rows;
    atf_error e;
    char text[160];
    size_t i, c, width[CLI_COLS];
    uint64_t events = 0, dropped = 0, detail = 0, gaps = 0, lost = 0;
    int status = CLI_EXIT_OK, rc = cli_session_open(&r, dir);
    if (rc != CLI_EXIT_OK) return rc;
    if (cli_manifest_load(&m, dir, &e) != ATF_OK) {
        atf_session_reader_close(&r);
        return cli_report(&e);
    }
    rows = (cli_thread_row *)calloc(r.thread_count ? r.thread_count : 1, sizeof *rows);
    if (!rows) {
        cli_error_init(&e, ATF_E_NOMEM, dir, 0, "thread table");
        cli_manifest_free(&m);
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
        if (t->missing) {
            snprintf(w->events, sizeof w->events, "-");
            snprintf(w->gaps, sizeof w->gaps, "-");
            snprintf(w->lost, sizeof w->lost, "-");
            snprintf(w->detail, sizeof w->detail, "-");
            snprintf(w->order, sizeof w->order, "-");
            snprintf(w->index, sizeof w->index, "missing");
            snprintf(w->detail_file, sizeof w->detail_file, "-");
        } else {
            cli_facts f;
            uint64_t ndetail = t->reader.has_detail ? t->reader.detail.event_count : 0;
            snprintf(w->events, sizeof w->events, "%llu", (cli_ull)t->reader.index.event_count);
            snprintf(w->gaps, sizeof w->gaps, "%llu", (cli_ull)t->reader.gap_count);
            snprintf(w->lost, sizeof w->lost, "%llu", (cli_ull)t->reader.events_lost);
            snprintf(w->detail, sizeof w->detail, "%llu", (cli_ull)ndetail);
            gaps += t->reader.gap_count;
            lost += t->reader.events_lost;
            /* the only error an open thread keeps: a damaged gaps.atf (the gaps before
             * the damage are counted) */
            if (t->open_result == ATF_OK && t->reader.error.code != ATF_OK) {
                cli_print_error(stderr, "atf: ", &t->reader.error);
                status = CLI_EXIT_DATA;
            }
            snprintf(w->order, sizeof w->order, "%s", t->out_of_order ? "yes" : "no");
            events += t->reader.index.event_count;
            detail += ndetail;
            cli_facts_index(&f, &t->reader.index);
            cli_state_word(&f, w->index, sizeof w->index);
            if (cli_problems(&f, 0, stderr, "atf: ")) status = CLI_EXIT_DATA;
            if (t->reader.has_detail) {
                cli_facts_detail(&f, &t->reader.detail);
                cli_state_word(&f, w->detail_file, sizeof w->detail_file);
                if (cli_problems(&f, 0, stderr, "atf: ")) status = CLI_EXIT_DATA;
            } else {
                snprintf(w->detail_file, sizeof w->detail_file, "-");
            }
        }
        cli_row_cells(w, cells);
        for (c = 0; c < CLI_COLS; c++) width[c] = cli_max_size(width[c], strlen(cells[c]));
    }
    cli_kv("session", "%s", dir);
    cli_kv("manifest", "%s", cli_manifest_text(&r, &m, text, sizeof text));
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
    putchar('\n');
    cli_print_row(titles, width, "name");
    for (i = 0; i < r.thread_count; i++) {
        const char *cells[CLI_COLS];
        cli_row_cells(&rows[i], cells);
        cli_print_row(cells, width, rows[i].name);
    }
    free(rows);
    cli_manifest_free(&m);
    atf_session_reader_close(&r);
    return status;
}

/* ==== dump =========================================================================== */
typedef struct cli_merged_widths {
    size_t thread, seq, ts, tid, depth, detail;
} cli_merged_widths;

/* Column widths over every event of the selected threads. */
static cli_merged_widths cli_merged_table_widths(const atf_session_reader *r,
                                                 const atf_merge_filter *f) {
    cli_merged_widths w;
    uint64_t slot = 0, count = 0, ts = 0, tid = 0, depth = 0, detail = 0, i;
    size_t k, s;
    for (k = 0; k < r->thread_count; k++) {
        const atf_session_thread *t = &r->threads[k];
        int selected = !f->slots;
        atf_index_event ev;
        for (s = 0; s < f->slot_count && !selected; s++) selected = f->slots[s] == t->slot;
        if (t->missing || !selected) continue;
        if (t->slot > slot) slot = t->slot;
        if (t->reader.index.event_count > count) count = t->reader.index.event_count;
        for (i = 0; i < t->reader.index.event_count; i++) {
            atf_index_reader_get(&t->reader.index, i, &ev);
            if (ev.timestamp_ns > ts) ts = ev.timestamp_ns;
            if (ev.thread_id > tid) tid = ev.thread_id;
            if (ev.call_depth > depth) depth = ev.call_depth;
            if (ev.detail_seq != ATF_NO_DETAIL && ev.detail_seq > detail) detail = ev.detail_seq;
        }
    }
    w.thread = cli_max_size(strlen("thread"), cli_digits(slot));
    w.seq = cli_max_size(strlen("seq"), cli_digits(count ? count - 1 : 0));
    w.ts = cli_max_size(strlen("ts"), cli_digits(ts));
    w.tid = cli_max_size(strlen("tid"), cli_digits(tid));
    w.depth = cli_max_size(strlen("depth"), cli_digits(depth));
    w.detail = cli_max_size(strlen("detail"), cli_digits(detail));
    return w;
}

#define CLI_KIND_WIDTH 9            /* "exception" */
#define CLI_FID_WIDTH 18            /* "0x" + 16 digits */

/* The merged events, as a table (json 0) or JSON lines, until the end, --to or --limit. */
static void cli_dump_merged(atf_session_reader *r, atf_merge *m, const atf_merge_filter *f,
                            const cli_dump_opts *o) {
    char line[CLI_LINE_MAX], *p;
    cli_merged_widths w;
    atf_merge_item it;
    uint64_t n = 0;
    memset(&w, 0, sizeof w);
    if (!o->json) {
        w = cli_merged_table_widths(r, f);
        p = cli_put_str_aligned(line, "thread", w.thread, 1);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "seq", w.seq, 1);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "ts", w.ts, 1);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "fid", CLI_FID_WIDTH, 0);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "kind", CLI_KIND_WIDTH, 0);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "tid", w.tid, 1);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "depth", w.depth, 1);
        p = cli_put_str_aligned(cli_put_str(p, "  "), "detail", w.detail, 1);
        cli_emit(line, p);
    }
    while ((!o->has_limit || n < o->limit) && atf_merge_next(m, &it) == ATF_OK) {
        const atf_index_event *ev = &it.event;
        int has_tid = it.thread->reader.index.layout == ATF_LAYOUT_1;
        if (o->has_to && ev->timestamp_ns > o->to_ns) break; /* merged: no later one is in */
        n++;
        if (o->json) {
            p = cli_put_u64(cli_put_str(line, "{\"seq\":"), it.seq);
            p = cli_put_u64(cli_put_str(p, ",\"ts\":"), ev->timestamp_ns);
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
            p = cli_put_u64(cli_put_str(p, ",\"thread\":"), it.slot);
            cli_emit(line, cli_put_str(p, "}"));
            continue;
        }
        p = cli_put_u64_right(line, it.slot, w.thread);
        p = cli_put_u64_right(cli_put_str(p, "  "), it.seq, w.seq);
        p = cli_put_u64_right(cli_put_str(p, "  "), ev->timestamp_ns, w.ts);
        p = cli_put_hex64(cli_put_str(p, "  "), ev->function_id);
        p = cli_put_str_aligned(cli_put_str(p, "  "), atf_event_kind_str(ev->kind),
                                CLI_KIND_WIDTH, 0);
        p = cli_put_str(p, "  ");
        if (has_tid) {
            p = cli_put_u64_right(p, ev->thread_id, w.tid);
            p = cli_put_u64_right(cli_put_str(p, "  "), ev->call_depth, w.depth);
        } else {
            p = cli_put_str_aligned(p, "-", w.tid, 1);
            p = cli_put_str_aligned(cli_put_str(p, "  "), "-", w.depth, 1);
        }
        p = cli_put_str(p, "  ");
        if (ev->detail_seq == ATF_NO_DETAIL) p = cli_put_str_aligned(p, "-", w.detail, 1);
        else p = cli_put_u64_right(p, ev->detail_seq, w.detail);
        cli_emit(line, p);
    }
}

int cli_dump_session(const char *dir, const cli_dump_opts *o) {
    static uint32_t slots[CLI_LIST_MAX];
    atf_session_reader r;
    atf_merge m;
    atf_merge_filter f;
    size_t i;
    int rc = cli_session_open(&r, dir);
    if (rc != CLI_EXIT_OK) return rc;
    memset(&f, 0, sizeof f);
    for (i = 0; i < o->threads.count; i++) {
        uint64_t slot = o->threads.items[i];
        atf_session_thread *t = slot <= UINT32_MAX ? atf_session_reader_thread(&r, (uint32_t)slot)
                                                   : NULL;
        if (!t || t->missing) {
            fprintf(stderr, "atf dump: %s has no thread_%llu%s\n", dir, (cli_ull)slot,
                    t ? " (listed in manifest.json, but missing)" : "");
            atf_session_reader_close(&r);
            return CLI_EXIT_USAGE;
        }
        slots[i] = (uint32_t)slot;
    }
    if (o->has_threads) {
        f.slots = slots;
        f.slot_count = o->threads.count;
    }
    f.from_ns = o->has_from ? o->from_ns : 0;
    f.to_ns = o->has_to ? o->to_ns : 0; /* 0 is "no bound" to the merge: --to 0 is checked here */
    if (atf_merge_init(&m, &r, &f) != ATF_OK) {
        atf_error e;
        cli_error_init(&e, ATF_E_NOMEM, dir, 0, "merge of out-of-order threads");
        atf_session_reader_close(&r);
        return cli_report(&e);
    }
    cli_dump_merged(&r, &m, &f, o);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    return CLI_EXIT_OK;
}

/* ==== verify ========================================================================= */
typedef struct cli_slot_list {
    uint32_t *slots;
    size_t count, cap;
    int failed;
} cli_slot_list;

static void cli_slot_add(void *ctx, uint32_t slot) {
    cli_slot_list *l = (cli_slot_list *)ctx;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        uint32_t *p = (uint32_t *)realloc(l->slots, cap * sizeof *p);
        if (!p) {
            l->failed = 1;
            return;
        }
        l->slots = p;
        l->cap = cap;
    }
    l->slots[l->count++] = slot;
}

static int cli_slot_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* One count of a closed manifest against the files: 1 (and the problem printed) when
 * they disagree. */
static int cli_verify_count(const char *dir, uint32_t slot, const char *what, uint64_t files,
                            uint64_t manifest) {
    char path[CLI_PATH_MAX];
    atf_error e;
    if (manifest == files) return 0;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    cli_error_init(&e, ATF_E_CORRUPT, path, 0, what);
    e.expected = files;
    e.found = manifest;
    e.has_values = 1;
    fprintf(stdout, "thread_%u: ", slot);
    cli_print_error(stdout, "", &e);
    return 1;
}

/* A closed manifest's counts of one thread against its files. The lost events are
 * compared only when gaps.atf read whole (a damaged one is reported already). */
static int cli_verify_counts(const char *dir, const atf_session_thread *t,
                             const cli_manifest_thread *mt) {
    uint64_t ndetail = t->reader.has_detail ? t->reader.detail.event_count : 0;
    int n = 0;
    n += cli_verify_count(dir, t->slot, "events_written of a thread disagrees with its index.atf",
                          t->reader.index.event_count, mt->events_written);
    n += cli_verify_count(dir, t->slot, "detail_written of a thread disagrees with its detail.atf",
                          ndetail, mt->detail_written);
    if (t->reader.error.code == ATF_OK) {
        n += cli_verify_count(dir, t->slot, "gaps of a thread disagrees with its gaps.atf",
                              t->reader.gap_count, t->gaps);
        n += cli_verify_count(dir, t->slot,
                              "events_dropped + events_lost_io of a thread disagrees with the "
                              "events lost in its gaps.atf",
                              t->reader.events_lost, t->events_dropped + t->events_lost_io);
    }
    return n;
}

int cli_verify_session(const char *dir, int strict) {
    atf_session_reader r;
    cli_manifest m;
    cli_slot_list scanned = { NULL, 0, 0, 0 };
    atf_error e;
    char path[CLI_PATH_MAX], text[160];
    uint64_t events = 0, dropped = 0, detail_dropped = 0, gaps = 0, lost = 0;
    size_t i;
    int n = 0, opened, closed;
    if (cli_manifest_load(&m, dir, &e) != ATF_OK) {
        cli_print_error(stdout, "", &e);
        return 1;
    }
    closed = strcmp(m.state, "closed") == 0;
    opened = atf_session_reader_open(&r, dir, NULL) == ATF_OK;
    if (opened) {
        for (i = 0; i < r.thread_count; i++) {
            atf_session_thread *t = &r.threads[i];
            const cli_manifest_thread *mt = cli_manifest_thread_of(&m, t->slot);
            if (snprintf(path, sizeof path, "%s/thread_%u", dir, t->slot) >= (int)sizeof path) {
                cli_error_init(&e, ATF_E_ARG, dir, 0, "path too long");
                cli_print_error(stdout, "", &e);
                n++;
                continue;
            }
            dropped += t->events_dropped;
            if (mt) detail_dropped += mt->detail_dropped;
            if (t->missing) {
                cli_error_init(&e, ATF_E_NOT_FOUND, path, 0,
                               "listed in manifest.json, but the directory or its index.atf "
                               "is missing");
                cli_print_error(stdout, "", &e);
                n++;
                continue;
            }
            events += t->reader.index.event_count;
            gaps += t->reader.gap_count;
            lost += t->reader.events_lost;
            n += cli_verify_dir(path, strict);
            if (closed && mt && mt->has_counts) n += cli_verify_counts(dir, t, mt);
        }
    } else {
        /* a thread file the session reader refuses: verify what is there, one by one */
        int before;
        if (cli_scan_thread_dirs(dir, cli_slot_add, &scanned) != 0 || scanned.failed) {
            cli_error_errno(&e, dir, "read directory", 0);
            cli_print_error(stdout, "", &e);
            n++;
        }
        if (scanned.count) qsort(scanned.slots, scanned.count, sizeof *scanned.slots, cli_slot_cmp);
        before = n;
        for (i = 0; i < scanned.count; i++) {
            snprintf(path, sizeof path, "%s/thread_%u", dir, scanned.slots[i]);
            n += cli_verify_dir(path, strict);
        }
        if (scanned.count == 0 && n == before && m.parsed && m.has_threads &&
            m.thread_count == 0) {
            /* a manifest that lists no thread and no thread directory: the session was
             * closed, or stopped, before any thread attached. Nothing is missing. */
            printf("OK %s (session: manifest lists no thread (state %s), 0 threads, no event "
                   "recorded)\n", dir, m.state[0] ? m.state : "unknown");
            free(scanned.slots);
            cli_manifest_free(&m);
            return 0;
        }
        if (n == before) { /* nothing above explains the refusal */
            cli_print_error(stdout, "", &r.error);
            n++;
        }
        free(scanned.slots);
    }
    if (opened && r.manifest == ATF_MANIFEST_UNREADABLE) {
        snprintf(path, sizeof path, "%s/manifest.json", dir);
        cli_error_init(&e, ATF_E_CORRUPT, path, 0,
                       "manifest.json is not JSON of the expected shape (threads found by "
                       "scanning)");
        cli_print_error(stdout, "", &e);
        n++;
    }
    if (n == 0) {
        printf("OK %s (session: manifest %s, %llu thread%s, %llu events; manifest drop counts: "
               "%llu events, %llu detail records",
               dir, cli_manifest_text(&r, &m, text, sizeof text), (cli_ull)r.thread_count,
               r.thread_count == 1 ? "" : "s", (cli_ull)events, (cli_ull)dropped,
               (cli_ull)detail_dropped);
        if (gaps)
            printf("; %llu gap%s, %llu events lost", (cli_ull)gaps, gaps == 1 ? "" : "s",
                   (cli_ull)lost);
        printf(")\n");
    }
    if (opened) atf_session_reader_close(&r);
    cli_manifest_free(&m);
    return n;
}
