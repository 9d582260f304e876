/* ktrace_cmd.c - atf ktrace: the header and chunk list of a Darwin ktrace v3 file, read
 * with the library's atf_ktrace_* reader, and optionally the file's start on the trace
 * clock of a session, through the session's wall-clock timing anchor.
 * SPDX-License-Identifier: MIT */
#include "atf.h"
#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct kt_chunks {
    atf_ktrace_chunk *items;
    size_t count, cap;
} kt_chunks;

/* The ktrace file placed on a session's trace clock (see the usage text). */
typedef struct kt_mapping {
    const char *session;
    atf_session_anchor anchor;
    uint64_t ktrace_wall_ns, timestamp_ns;
    int64_t start_host_ns, offset_ns;
} kt_mapping;

/* Walks every chunk into *c; returns the reader's final code (ATF_E_RANGE at a clean end). */
static atf_result kt_walk(atf_ktrace_reader *r, kt_chunks *c, atf_error *e) {
    atf_ktrace_chunk ch;
    atf_result rc;
    while ((rc = atf_ktrace_reader_next(r, &ch)) == ATF_OK) {
        if (c->count == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 64;
            atf_ktrace_chunk *n = (atf_ktrace_chunk *)realloc(c->items, cap * sizeof *n);
            if (!n) {
                cli_error_init(e, ATF_E_NOMEM, r->path, ch.offset, "chunk list");
                return ATF_E_NOMEM;
            }
            c->items = n;
            c->cap = cap;
        }
        c->items[c->count++] = ch;
    }
    if (rc != ATF_E_RANGE) *e = r->error;
    return rc;
}

/* a - b as a signed value; 0 when it does not fit. */
static int kt_sub(uint64_t a, uint64_t b, int64_t *out) {
    if (a >= b) {
        if (a - b > (uint64_t)INT64_MAX) return 0;
        *out = (int64_t)(a - b);
    } else {
        if (b - a > (uint64_t)INT64_MAX) return 0;
        *out = -(int64_t)(b - a);
    }
    return 1;
}

static int kt_add(int64_t a, int64_t b, int64_t *out) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
    *out = a + b;
    return 1;
}

/* The "wall_clock_ns" timing anchor of a session (a pid_* directory or its manifest.json),
 * from the session reader. On failure reports and returns CLI_EXIT_DATA. */
static int kt_anchor(const char *session, atf_session_anchor *out) {
    char dir[CLI_PATH_MAX];
    atf_session_reader r;
    atf_manifest_state state;
    atf_error e;
    const atf_session_anchor *a = NULL;
    int opened, found;
    if (cli_is_file(session)) cli_parent_dir(session, dir, sizeof dir);
    else snprintf(dir, sizeof dir, "%s", session);
    opened = atf_session_reader_open(&r, dir, NULL) == ATF_OK;
    if (opened) a = atf_session_reader_anchor(&r, "wall_clock_ns");
    found = a != NULL;
    if (found) *out = *a;
    state = r.manifest;
    e = r.manifest_error;
    if (opened) atf_session_reader_close(&r);
    if (found) return CLI_EXIT_OK;
    if (state == ATF_MANIFEST_UNREADABLE && e.code != ATF_OK) return cli_report(&e);
    if (state == ATF_MANIFEST_MISSING)
        cli_error_init(&e, ATF_E_NOT_FOUND, session, 0, "no manifest.json");
    else
        cli_error_init(&e, ATF_E_CORRUPT, session, 0,
                       "manifest.json has no \"wall_clock_ns\" timing anchor");
    return cli_report(&e);
}

/* Fills *m from the session's anchor; on failure reports and returns CLI_EXIT_DATA. */
static int kt_map(kt_mapping *m, const atf_ktrace_reader *r, const char *session) {
    atf_error e;
    int64_t delta, host, ts;
    int ok, status;
    memset(m, 0, sizeof *m);
    m->session = session;
    if ((status = kt_anchor(session, &m->anchor)) != CLI_EXIT_OK) return status;
    m->ktrace_wall_ns = atf_ktrace_wall_ns(r);
    m->timestamp_ns = atf_ktrace_time_ns(r, r->header.timestamp);
    ok = m->anchor.host_ns <= (uint64_t)INT64_MAX && m->timestamp_ns <= (uint64_t)INT64_MAX;
    host = (int64_t)m->anchor.host_ns;
    ts = (int64_t)m->timestamp_ns;
    if (ok && m->anchor.timescale == 1000000000 && m->anchor.value >= 0) {
        /* the usual case, exact in integers */
        ok = kt_sub(m->ktrace_wall_ns, (uint64_t)m->anchor.value, &delta);
    } else if (ok) {
        long double d = ((long double)m->ktrace_wall_ns - (long double)m->anchor.value_f) *
                        1e9L / (long double)m->anchor.rate;
        ok = d > -9.2e18L && d < 9.2e18L;
        delta = !ok ? 0 : d >= 0 ? (int64_t)(d + 0.5L) : -(int64_t)(0.5L - d);
    }
    ok = ok && kt_add(host, delta, &m->start_host_ns) &&
         kt_add(m->start_host_ns, -ts, &m->offset_ns);
    if (!ok) {
        cli_error_init(&e, ATF_E_RANGE, session, 0,
                       "the ktrace start is out of range on the session's clock");
        return cli_report(&e);
    }
    return CLI_EXIT_OK;
}

/* ---- output ------------------------------------------------------------------------- */
static const char *kt_section(const atf_ktrace_chunk *c) {
    return c->section == ATF_KTRACE_HEADER_CHUNK ? "header" : "body";
}

static void kt_anchor_value(const atf_session_anchor *a) {
    if (a->timescale > 0) cli_printf("%lld", (cli_ll)a->value);
    else cli_printf("%.17g", a->value_f);
}

static void kt_print_json(const atf_ktrace_reader *r, const kt_chunks *c, const kt_mapping *m) {
    const atf_ktrace_header *h = &r->header;
    size_t i;
    cli_printf("{\"header\":{\"magic\":%u,\"major\":%u,\"minor\":%u,\"header_size\":%llu,"
           "\"timebase_numer\":%u,\"timebase_denom\":%u,\"timestamp\":%llu,"
           "\"walltime_secs\":%llu,\"walltime_usecs\":%u,\"minutes_west\":%u,\"dst\":%u,"
           "\"flags\":%u},\"chunks\":[",
           h->magic, h->major, h->minor, (cli_ull)h->header_size, h->timebase_numer,
           h->timebase_denom, (cli_ull)h->timestamp, (cli_ull)h->walltime_secs,
           h->walltime_usecs, h->minutes_west, h->dst, h->flags);
    for (i = 0; i < c->count; i++) {
        const atf_ktrace_chunk *k = &c->items[i];
        cli_printf("%s{\"offset\":%llu,\"tag\":%u,\"major\":%u,\"minor\":%u,\"size\":%llu,"
               "\"section\":\"%s\"}",
               i ? "," : "", (cli_ull)k->offset, k->tag, k->major, k->minor, (cli_ull)k->size,
               kt_section(k));
    }
    cli_print("]");
    if (m) {
        cli_printf(",\"session\":{\"path\":");
        cli_json_str(m->session);
        cli_printf(",\"anchor_host_ns\":%llu,\"anchor_value\":", (cli_ull)m->anchor.host_ns);
        kt_anchor_value(&m->anchor);
        cli_printf(",\"anchor_rate\":%.17g,\"ktrace_wall_ns\":%llu,\"start_host_ns\":%lld,"
               "\"timestamp_ns\":%llu,\"offset_ns\":%lld}",
               m->anchor.rate, (cli_ull)m->ktrace_wall_ns, (cli_ll)m->start_host_ns,
               (cli_ull)m->timestamp_ns, (cli_ll)m->offset_ns);
    }
    cli_print("}\n");
}

static void kt_print_table(const atf_ktrace_reader *r, const kt_chunks *c, const kt_mapping *m) {
    const atf_ktrace_header *h = &r->header;
    size_t i, headers = 0, w_off = strlen("offset"), w_size = strlen("size");
    cli_kv("file", "%s", r->path);
    cli_kv("magic", "0x%08x", h->magic);
    cli_kv("major", "%u", h->major);
    cli_kv("minor", "%u", h->minor);
    cli_kv("header_size", "%llu", (cli_ull)h->header_size);
    cli_kv("timebase", "%u/%u (ns = ticks * %u / %u)", h->timebase_numer, h->timebase_denom,
           h->timebase_numer, h->timebase_denom);
    cli_kv("timestamp", "%llu ticks (%llu ns)", (cli_ull)h->timestamp,
           (cli_ull)atf_ktrace_time_ns(r, h->timestamp));
    cli_kv("walltime", "%llu.%06u s since 1970 (%llu ns)", (cli_ull)h->walltime_secs,
           h->walltime_usecs, (cli_ull)atf_ktrace_wall_ns(r));
    cli_kv("minutes_west", "%u", h->minutes_west);
    cli_kv("dst", "%u", h->dst);
    cli_kv("flags", "0x%08x", h->flags);
    for (i = 0; i < c->count; i++) {
        headers += c->items[i].section == ATF_KTRACE_HEADER_CHUNK;
        w_off = cli_max_size(w_off, cli_digits(c->items[i].offset));
        w_size = cli_max_size(w_size, cli_digits(c->items[i].size));
    }
    cli_kv("chunks", "%llu (%llu header, %llu body)", (cli_ull)c->count, (cli_ull)headers,
           (cli_ull)(c->count - headers));
    if (m) {
        cli_kv("session", "%s", m->session);
        cli_printf("%s:%*s", "anchor", (int)(16 - strlen("anchor")), "");
        cli_printf("wall_clock_ns: host_ns %llu = wall ", (cli_ull)m->anchor.host_ns);
        kt_anchor_value(&m->anchor);
        cli_printf(" ns (rate %.17g)\n", m->anchor.rate);
        cli_kv("ktrace_wall_ns", "%llu", (cli_ull)m->ktrace_wall_ns);
        cli_kv("start_host_ns", "%lld (the ktrace start on the session's trace clock)",
               (cli_ll)m->start_host_ns);
        cli_kv("timestamp_ns", "%llu", (cli_ull)m->timestamp_ns);
        cli_kv("offset_ns", "%lld (session ns = ktrace ticks * %u / %u + offset_ns)",
               (cli_ll)m->offset_ns, h->timebase_numer, h->timebase_denom);
    }
    if (!c->count) return;
    cli_printf("\n%*s  %-10s  %5s  %5s  %*s  %s\n", (int)w_off, "offset", "tag", "major", "minor",
           (int)w_size, "size", "section");
    for (i = 0; i < c->count; i++) {
        const atf_ktrace_chunk *k = &c->items[i];
        cli_printf("%*llu  0x%08x  %5u  %5u  %*llu  %s\n", (int)w_off, (cli_ull)k->offset, k->tag,
               k->major, k->minor, (int)w_size, (cli_ull)k->size, kt_section(k));
    }
}

int cli_cmd_ktrace(const cli_command *cmd, int argc, char **argv) {
    int json = 0, nops = 0, rc, status = CLI_EXIT_OK;
    const char *session = NULL;
    const cli_flag flags[] = {
        { "--json", &json, CLI_OPT_FLAG, NULL },
        { "--session", NULL, CLI_OPT_STR, &session },
    };
    atf_ktrace_reader r;
    kt_chunks chunks = { NULL, 0, 0 };
    kt_mapping map;
    atf_error e;
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 1, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (atf_ktrace_reader_open(&r, argv[1], NULL) != ATF_OK) return cli_report(&r.error);
    if (session) {
        rc = kt_map(&map, &r, session);
        if (rc != CLI_EXIT_OK) {
            atf_ktrace_reader_close(&r);
            return rc;
        }
    }
    memset(&e, 0, sizeof e);
    if (kt_walk(&r, &chunks, &e) != ATF_E_RANGE) status = CLI_EXIT_DATA;
    if (json) kt_print_json(&r, &chunks, session ? &map : NULL);
    else kt_print_table(&r, &chunks, session ? &map : NULL);
    if (status != CLI_EXIT_OK) {
        fflush(stdout);
        cli_report(&e);
    }
    free(chunks.items);
    atf_ktrace_reader_close(&r);
    return status;
}
