/* export_cmd.c - atf export: the trace as Chrome Trace Event JSON, as a Perfetto protobuf
 * trace or as a Parquet table of slices or events, streamed with bounded memory (calls and
 * returns paired as walk.h says).
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "walk.h"
#include "parquet.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#  include <fcntl.h>
#  include <io.h>
#endif

enum { EXPORT_NAME_MAX = 2048 };                 /* bytes of a function name kept */

/* ==== export: Chrome Trace Event Format ============================================== */
/* {"traceEvents":[...],"displayTimeUnit":"ns"}: process_name, thread_name and
 * thread_sort_index metadata ("ph":"M"), then one B event per call and one E event per
 * closed frame, in time order; ts in microseconds with the nanoseconds as three
 * decimals. Every frame the walk opens it also closes, so each thread is balanced. A gap
 * is a thread-scoped instant event ("ph":"i","s":"t") after the E events of the frames
 * it cut. */
typedef struct export_text {
    char *s;
    size_t len;
} export_text;

typedef struct chrome_state {
    const cli_trace *src;
    walk_map names;                /* fid -> position in cache */
    export_text *cache;              /* the JSON string of each name, quotes included */
    size_t count, cap;
    export_text *prefix;             /* per thread: ",\n{\"pid\":P,\"tid\":T,\"ts\":" */
    int nomem;
} chrome_state;

/* The cached JSON text of fid's name; NULL when out of memory. */
static const export_text *chrome_name(chrome_state *c, uint64_t fid) {
    int is_new;
    uint64_t *pos = walk_map_put(&c->names, fid, &is_new);
    if (!pos) return NULL;
    if (is_new) {
        char hex[24], clean[EXPORT_NAME_MAX];
        size_t n;
        export_text *t;
        if (c->count == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 64;
            export_text *m = (export_text *)realloc(c->cache, cap * sizeof *m);
            if (!m) return NULL;
            c->cache = m;
            c->cap = cap;
        }
        /* at most EXPORT_NAME_MAX bytes of name, escaped into a buffer that always holds it */
        t = &c->cache[c->count];
        t->s = (char *)malloc(CLI_JSON_ROOM(EXPORT_NAME_MAX));
        if (!t->s) return NULL;
        n = cli_utf8_clean(cli_trace_name(c->src, fid, hex, sizeof hex), clean, sizeof clean);
        t->len = cli_json_escape(clean, n, t->s);
        *pos = c->count++;
    }
    return &c->cache[*pos];
}

static void chrome_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *name = chrome_name(c, fid), *pre = &c->prefix[ti];
    char *p;
    (void)depth;
    if (!name) {
        c->nomem = 1;
        name = &c->cache[0]; /* never reached with an empty cache: see chrome_init */
    }
    p = cli_reserve(pre->len + 48 + name->len);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p = cli_put_us(p, ts);
    memcpy(p, ",\"ph\":\"B\",\"name\":", 17);
    p += 17;
    memcpy(p, name->s, name->len);
    p += name->len;
    *p++ = '}';
    cli_commit(p);
}

static void chrome_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                            int how, int outermost) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *pre = &c->prefix[ti];
    char *p;
    (void)f;
    (void)depth;
    (void)how;
    (void)outermost;
    p = cli_reserve(pre->len + 48);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p = cli_put_us(p, end_ns);
    memcpy(p, ",\"ph\":\"E\"}", 10);
    p += 10;
    cli_commit(p);
}

static void chrome_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *pre = &c->prefix[ti];
    char *p = cli_reserve(pre->len + 48);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p = cli_put_us(p, ts);
    cli_commit(p);
    cli_printf(",\"ph\":\"i\",\"s\":\"t\",\"name\":\"gap: %llu events lost\","
                          "\"args\":{\"index_lost\":%llu,\"detail_lost\":%llu,\"reason\":\"%s\"}}",
                  (cli_ull)g->index_lost, (cli_ull)g->index_lost, (cli_ull)g->detail_lost,
                  atf_gap_reason_str(g->reason));
}

static void chrome_free(chrome_state *c, size_t threads) {
    size_t i;
    for (i = 0; i < c->count; i++) free(c->cache[i].s);
    if (c->prefix)
        for (i = 0; i < threads; i++) free(c->prefix[i].s);
    free(c->cache);
    free(c->prefix);
    walk_map_free(&c->names);
}

static atf_result export_chrome(cli_trace *s, cli_progress *p) {
    atf_session_reader *r = &s->reader;
    chrome_state c;
    walk_ctx w;
    atf_result rc = ATF_OK;
    char pname[64];
    size_t i;
    memset(&c, 0, sizeof c);
    c.src = s;
    c.prefix = (export_text *)calloc(r->thread_count ? r->thread_count : 1, sizeof *c.prefix);
    if (!c.prefix || !chrome_name(&c, 0)) { /* cache[0] exists from here on */
        chrome_free(&c, r->thread_count);
        return ATF_E_NOMEM;
    }
    for (i = 0; i < r->thread_count; i++) {
        char buf[96];
        int n = snprintf(buf, sizeof buf, ",\n{\"pid\":%llu,\"tid\":%u,\"ts\":", (cli_ull)s->pid,
                         cli_thread_tid(&r->threads[i]));
        c.prefix[i].s = (char *)malloc((size_t)n + 1);
        if (!c.prefix[i].s) {
            chrome_free(&c, r->thread_count);
            return ATF_E_NOMEM;
        }
        memcpy(c.prefix[i].s, buf, (size_t)n + 1);
        c.prefix[i].len = (size_t)n;
    }
    snprintf(pname, sizeof pname, "pid_%llu", (cli_ull)s->pid);
    cli_printf("{\"traceEvents\":[\n{\"pid\":%llu,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\","
                     "\"args\":{\"name\":", (cli_ull)s->pid);
    cli_json_str(pname);
    cli_print("}}");
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        char tname[80];
        if (!cli_trace_selected(s, i)) continue;
        if (t->name[0]) snprintf(tname, sizeof tname, "%s", t->name);
        else snprintf(tname, sizeof tname, "thread_%u", t->slot);
        cli_printf(",\n{\"pid\":%llu,\"tid\":%u,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":",
                      (cli_ull)s->pid, cli_thread_tid(t));
        cli_json_str(tname);
        cli_printf("}},\n{\"pid\":%llu,\"tid\":%u,\"ph\":\"M\",\"name\":\"thread_sort_index\","
                         "\"args\":{\"sort_index\":%u}}",
                      (cli_ull)s->pid, cli_thread_tid(t), t->slot);
    }
    if (!walk_init(&w, r->thread_count)) rc = ATF_E_NOMEM;
    else {
        w.ctx = &c;
        w.enter = chrome_enter;
        w.leave = chrome_leave;
        w.gap = chrome_gap;
        rc = walk_run(&w, s, NULL, p);
        walk_deinit(&w);
    }
    if (rc == ATF_OK && c.nomem) rc = ATF_E_NOMEM;
    cli_print("\n],\"displayTimeUnit\":\"ns\"}\n");
    chrome_free(&c, r->thread_count);
    return rc;
}

/* ==== export: Perfetto protobuf ====================================================== */
/* A Trace message written packet by packet (each TracePacket is field 1 of Trace, so a
 * stream of them is a valid Trace): one TrackDescriptor for the process, one per thread
 * (parented to the process), then one TrackEvent packet per slice begin/end on its
 * thread's track, with the function names interned: a name's EventName {iid, name} goes
 * in the InternedData of the first packet that uses it. All packets are on one sequence;
 * the first clears the incremental state, the others need it. A gap is a TYPE_INSTANT
 * event on its thread's track, named in place (TrackEvent.name), after the SLICE_END
 * events of the frames it cut.
 *
 * Field numbers, from google/perfetto protos/perfetto/trace/ (checked against the .proto
 * files: trace.proto, trace_packet.proto, track_event/track_event.proto,
 * track_event/track_descriptor.proto, track_event/process_descriptor.proto,
 * track_event/thread_descriptor.proto, interned_data/interned_data.proto). */
enum {
    PB_VARINT = 0, PB_LEN = 2,                    /* wire types */
    PF_TRACE_PACKET = 1,                          /* Trace.packet: repeated TracePacket */
    PF_PACKET_TIMESTAMP = 8,                      /* TracePacket.timestamp: uint64, ns */
    PF_PACKET_SEQUENCE_ID = 10,                   /* TracePacket.trusted_packet_sequence_id: uint32 */
    PF_PACKET_TRACK_EVENT = 11,                   /* TracePacket.track_event: TrackEvent */
    PF_PACKET_INTERNED_DATA = 12,                 /* TracePacket.interned_data: InternedData */
    PF_PACKET_SEQUENCE_FLAGS = 13,                /* TracePacket.sequence_flags: uint32 */
    PF_PACKET_INCREMENTAL_STATE_CLEARED = 41,     /* TracePacket.incremental_state_cleared: bool */
    PF_PACKET_TRACK_DESCRIPTOR = 60,              /* TracePacket.track_descriptor: TrackDescriptor */
    PF_PACKET_FIRST_ON_SEQUENCE = 87,             /* TracePacket.first_packet_on_sequence: bool */
    PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,         /* TracePacket.SequenceFlags value */
    PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,           /* TracePacket.SequenceFlags value */
    PF_TRACK_UUID = 1,                            /* TrackDescriptor.uuid: uint64 */
    PF_TRACK_PROCESS = 3,                         /* TrackDescriptor.process: ProcessDescriptor */
    PF_TRACK_THREAD = 4,                          /* TrackDescriptor.thread: ThreadDescriptor */
    PF_TRACK_PARENT_UUID = 5,                     /* TrackDescriptor.parent_uuid: uint64 */
    PF_PROCESS_PID = 1,                           /* ProcessDescriptor.pid: int32 */
    PF_PROCESS_NAME = 6,                          /* ProcessDescriptor.process_name: string */
    PF_THREAD_PID = 1,                            /* ThreadDescriptor.pid: int32 */
    PF_THREAD_TID = 2,                            /* ThreadDescriptor.tid: int32 */
    PF_THREAD_NAME = 5,                           /* ThreadDescriptor.thread_name: string */
    PF_EVENT_TYPE = 9,                            /* TrackEvent.type: TrackEvent.Type */
    PF_EVENT_NAME_IID = 10,                       /* TrackEvent.name_iid: uint64 (EventName) */
    PF_EVENT_TRACK_UUID = 11,                     /* TrackEvent.track_uuid: uint64 */
    PF_TYPE_SLICE_BEGIN = 1,                      /* TrackEvent.Type TYPE_SLICE_BEGIN */
    PF_TYPE_SLICE_END = 2,                        /* TrackEvent.Type TYPE_SLICE_END */
    PF_TYPE_INSTANT = 3,                          /* TrackEvent.Type TYPE_INSTANT */
    PF_EVENT_NAME = 23,                           /* TrackEvent.name: string */
    PF_INTERNED_EVENT_NAMES = 2,                  /* InternedData.event_names: repeated EventName */
    PF_EVENT_NAME_IID_FIELD = 1,                  /* EventName.iid: uint64 */
    PF_EVENT_NAME_NAME = 2                        /* EventName.name: string */
};

enum { PF_SEQUENCE_ID = 1 };                      /* our one packet sequence */
enum { PF_PROCESS_UUID = 1 };                     /* track uuids: process 1, thread i: 2 + i */
enum { PF_PACKET_MAX = EXPORT_NAME_MAX + 256 };       /* the largest packet we build */

static size_t pb_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static size_t pb_varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t pb_uint(uint8_t *p, uint32_t field, uint64_t v) {
    size_t n = pb_varint(p, (uint64_t)field << 3 | PB_VARINT);
    return n + pb_varint(p + n, v);
}

/* An int32 field: negative values are sign-extended to 64 bits, as protobuf does. */
static size_t pb_int32(uint8_t *p, uint32_t field, uint32_t v) {
    return pb_uint(p, field, (uint64_t)(int64_t)(int32_t)v);
}

static size_t pb_bytes(uint8_t *p, uint32_t field, const void *data, size_t len) {
    size_t n = pb_varint(p, (uint64_t)field << 3 | PB_LEN);
    n += pb_varint(p + n, len);
    memcpy(p + n, data, len);
    return n + len;
}

typedef struct perfetto_state {
    const cli_trace *src;
    walk_map iids;                 /* fid -> interned name id (1, 2, ...) */
    uint64_t next_iid;
    int nomem;
} perfetto_state;

/* Writes one TracePacket (its body in pkt) as Trace.packet. */
static void perfetto_packet(const uint8_t *pkt, size_t len) {
    uint8_t *p = (uint8_t *)cli_reserve(len + 16);
    size_t n = pb_varint(p, (uint64_t)PF_TRACE_PACKET << 3 | PB_LEN);
    n += pb_varint(p + n, len);
    memcpy(p + n, pkt, len);
    cli_commit((const char *)p + n + len);
}

/* Sequence fields of every packet: first = the packet that clears the state. */
static size_t perfetto_sequence(uint8_t *p, int first) {
    size_t n = pb_uint(p, PF_PACKET_SEQUENCE_ID, PF_SEQUENCE_ID);
    if (first) {
        n += pb_uint(p + n, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
        n += pb_uint(p + n, PF_PACKET_INCREMENTAL_STATE_CLEARED, 1);
        n += pb_uint(p + n, PF_PACKET_FIRST_ON_SEQUENCE, 1);
    } else {
        n += pb_uint(p + n, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_NEEDS_INCREMENTAL_STATE);
    }
    return n;
}

static void perfetto_event(perfetto_state *pf, size_t ti, uint64_t ts, int begin, uint64_t fid) {
    uint8_t pkt[PF_PACKET_MAX], te[40];
    size_t n, tn;
    uint64_t iid = 0;
    int is_new = 0;
    tn = pb_uint(te, PF_EVENT_TYPE, begin ? PF_TYPE_SLICE_BEGIN : PF_TYPE_SLICE_END);
    tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, PF_PROCESS_UUID + 1 + (uint64_t)ti);
    if (begin) {
        uint64_t *v = walk_map_put(&pf->iids, fid, &is_new);
        if (!v) {
            pf->nomem = 1;
            return;
        }
        if (is_new) *v = ++pf->next_iid;
        iid = *v;
        tn += pb_uint(te + tn, PF_EVENT_NAME_IID, iid);
    }
    if (!is_new) { /* the common packet, sized first and encoded in place */
        size_t body = 1 + pb_varint_size(ts) + 4 + 1 + pb_varint_size(tn) + tn;
        uint8_t *p = (uint8_t *)cli_reserve(body + 16), *q = p;
        *q++ = PF_TRACE_PACKET << 3 | PB_LEN;
        q += pb_varint(q, body);
        q += pb_uint(q, PF_PACKET_TIMESTAMP, ts);
        q += perfetto_sequence(q, 0);
        *q++ = PF_PACKET_TRACK_EVENT << 3 | PB_LEN;
        q += pb_varint(q, tn);
        for (n = 0; n < tn; n++) *q++ = te[n];
        cli_commit((const char *)q);
        return;
    }
    n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
    n += perfetto_sequence(pkt + n, 0);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_EVENT, te, tn);
    { /* InternedData { event_names: EventName { iid, name } } */
        uint8_t name[EXPORT_NAME_MAX], en[EXPORT_NAME_MAX + 32], idata[EXPORT_NAME_MAX + 48];
        char hex[24];
        size_t nl = cli_utf8_clean(cli_trace_name(pf->src, fid, hex, sizeof hex), (char *)name, EXPORT_NAME_MAX);
        size_t en_len = pb_uint(en, PF_EVENT_NAME_IID_FIELD, iid);
        size_t id_len;
        en_len += pb_bytes(en + en_len, PF_EVENT_NAME_NAME, name, nl);
        id_len = pb_bytes(idata, PF_INTERNED_EVENT_NAMES, en, en_len);
        n += pb_bytes(pkt + n, PF_PACKET_INTERNED_DATA, idata, id_len);
    }
    perfetto_packet(pkt, n);
}

static void perfetto_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    (void)depth;
    perfetto_event((perfetto_state *)ctx, ti, ts, 1, fid);
}

static void perfetto_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                        int how, int outermost) {
    (void)depth;
    (void)how;
    (void)outermost;
    perfetto_event((perfetto_state *)ctx, ti, end_ns, 0, f->fid);
}

static void perfetto_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    uint8_t pkt[256], te[160];
    char name[96];
    size_t n, tn;
    (void)ctx;
    snprintf(name, sizeof name, "gap: %llu events lost (%s)", (cli_ull)g->index_lost,
             atf_gap_reason_str(g->reason));
    tn = pb_uint(te, PF_EVENT_TYPE, PF_TYPE_INSTANT);
    tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, PF_PROCESS_UUID + 1 + (uint64_t)ti);
    tn += pb_bytes(te + tn, PF_EVENT_NAME, name, strlen(name));
    n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
    n += perfetto_sequence(pkt + n, 0);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_EVENT, te, tn);
    perfetto_packet(pkt, n);
}

/* The descriptor packets: the process track, then one thread track per thread. */
static void perfetto_descriptors(const cli_trace *s) {
    const atf_session_reader *r = &s->reader;
    uint8_t pkt[512], desc[384], sub[256];
    char name[80];
    size_t n, dn, sn, i;
    snprintf(name, sizeof name, "pid_%llu", (cli_ull)s->pid);
    sn = pb_int32(sub, PF_PROCESS_PID, (uint32_t)s->pid);
    sn += pb_bytes(sub + sn, PF_PROCESS_NAME, name, strlen(name));
    dn = pb_uint(desc, PF_TRACK_UUID, PF_PROCESS_UUID);
    dn += pb_bytes(desc + dn, PF_TRACK_PROCESS, sub, sn);
    n = perfetto_sequence(pkt, 1);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_DESCRIPTOR, desc, dn);
    perfetto_packet(pkt, n);
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        char clean[3 * 64];
        size_t cl;
        if (!cli_trace_selected(s, i)) continue;
        if (t->name[0]) snprintf(name, sizeof name, "%s", t->name);
        else snprintf(name, sizeof name, "thread_%u", t->slot);
        cl = cli_utf8_clean(name, clean, sizeof clean);
        sn = pb_int32(sub, PF_THREAD_PID, (uint32_t)s->pid);
        sn += pb_int32(sub + sn, PF_THREAD_TID, cli_thread_tid(t));
        sn += pb_bytes(sub + sn, PF_THREAD_NAME, clean, cl);
        dn = pb_uint(desc, PF_TRACK_UUID, PF_PROCESS_UUID + 1 + (uint64_t)i);
        dn += pb_uint(desc + dn, PF_TRACK_PARENT_UUID, PF_PROCESS_UUID);
        dn += pb_bytes(desc + dn, PF_TRACK_THREAD, sub, sn);
        n = perfetto_sequence(pkt, 0);
        n += pb_bytes(pkt + n, PF_PACKET_TRACK_DESCRIPTOR, desc, dn);
        perfetto_packet(pkt, n);
    }
}

static atf_result export_perfetto(cli_trace *s, cli_progress *p) {
    perfetto_state pf;
    walk_ctx w;
    atf_result rc;
    memset(&pf, 0, sizeof pf);
    pf.src = s;
    perfetto_descriptors(s);
    if (!walk_init(&w, s->reader.thread_count)) return ATF_E_NOMEM;
    w.ctx = &pf;
    w.enter = perfetto_enter;
    w.leave = perfetto_leave;
    w.gap = perfetto_gap;
    rc = walk_run(&w, s, NULL, p);
    walk_deinit(&w);
    walk_map_free(&pf.iids);
    return rc == ATF_OK && pf.nomem ? ATF_E_NOMEM : rc;
}

/* ==== export: Apache Parquet ======================================================== */
/* One table per file, written with tools/parquet.h straight to the output in row groups
 * of PQX_GROUP_ROWS rows, so memory is one row group whatever the trace's size
 * (docs/PARQUET.md lists the columns):
 *   slices  one row per frame the walk closes, in the order frames close (so start_ns is
 *           only nearly sorted), with its self time, how it ended and whether its call
 *           event carries a detail record;
 *   events  one row per index event of the selected threads, in merged time order.
 * Times are TIMESTAMP(NANOS) not adjusted to UTC: the trace clock is not the epoch.
 * function_id is an INT64 holding the id's 64 bits, so an id >= 2^63 reads negative;
 * fid holds every id exactly, as the text "0x%016llx" that `atf stats --json` prints. */
enum { PQX_GROUP_ROWS = 131072 };   /* DuckDB's own row group size is close: 122880 */

enum { SL_PID, SL_TID, SL_SLOT, SL_THREAD_NAME, SL_FUNCTION_ID, SL_FID, SL_NAME, SL_MODULE,
       SL_DEPTH, SL_START, SL_END, SL_DUR, SL_SELF, SL_ENDED_BY, SL_HAS_DETAIL, SL_COLUMNS };
static const pq_column pqx_slice_columns[SL_COLUMNS] = {
    { "pid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO },
    { "tid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "thread_slot", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "thread_name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "function_id", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "fid", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "module", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "depth", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "start_ns", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS, PQ_ENCODING_DELTA },
    { "end_ns", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS, PQ_ENCODING_DELTA },
    { "dur_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA },
    { "self_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA },
    { "ended_by", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "has_detail", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
};

enum { EV_PID, EV_SLOT, EV_SEQ, EV_TS, EV_FUNCTION_ID, EV_FID, EV_NAME, EV_KIND, EV_DEPTH,
       EV_DETAIL_SEQ, EV_COLUMNS };
static const pq_column pqx_event_columns[EV_COLUMNS] = {
    { "pid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO },
    { "thread_slot", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "seq", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA },
    { "ts_ns", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS, PQ_ENCODING_DELTA },
    { "function_id", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "fid", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "kind", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY },
    { "depth", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY },
    { "detail_seq", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA },
};

/* ended_by of a slice, by how the walk closed its frame */
static const char *pqx_ended_by(int how) {
    switch (how) {
    case WALK_LEAVE_RETURN: return "return";
    case WALK_LEAVE_UNWOUND: return "unwound";
    case WALK_LEAVE_AT_END: return "end";
    default: return "gap";
    }
}

/* What a row says about a function, looked up once per distinct id. */
typedef struct pqx_fn {
    const char *symbol;              /* the manifest's name; NULL: the name is hex */
    const char *module;              /* the module's path; "" when unknown */
    char hex[20];                    /* "0x%016llx" */
} pqx_fn;

typedef struct pqx_state {
    const cli_trace *src;
    pq_writer *out;
    walk_map index;                  /* fid -> position in fns */
    pqx_fn *fns;
    size_t count, cap;
    char (*thread_names)[80];        /* per thread: its name, else "thread_<slot>" */
    int nomem;
} pqx_state;

static const char *pqx_module(const atf_session_reader *r, uint64_t fid) {
    size_t i;
    for (i = 0; i < r->module_count; i++)
        if (r->modules[i].module_id == fid >> 32) return r->modules[i].path;
    return "";
}

/* The facts of fid; NULL when out of memory. */
static const pqx_fn *pqx_fn_of(pqx_state *x, uint64_t fid) {
    int is_new;
    uint64_t *pos = walk_map_put(&x->index, fid, &is_new);
    if (!pos) return NULL;
    if (is_new) {
        const char *sym = atf_session_reader_symbol(&x->src->reader, fid);
        pqx_fn *fn;
        if (x->count == x->cap) {
            size_t cap = x->cap ? x->cap * 2 : 64;
            pqx_fn *m = (pqx_fn *)realloc(x->fns, cap * sizeof *m);
            if (!m) return NULL; /* fid stays mapped with no entry: pqx_put_fn stops */
            x->fns = m;
            x->cap = cap;
        }
        fn = &x->fns[x->count];
        fn->symbol = sym && *sym ? sym : NULL;
        fn->module = pqx_module(&x->src->reader, fid);
        snprintf(fn->hex, sizeof fn->hex, "0x%016llx", (cli_ull)fid);
        *pos = x->count++;
    }
    return &x->fns[*pos];
}

static void pqx_text(pq_value *v, const char *s) {
    v->s = s;
    v->len = strlen(s);
}

/* The function columns of a row: function_id, fid and name, adjacent in both tables
 * (col_fid is fid's), and the slices' module. 0 when out of memory. */
static int pqx_put_fn(pqx_state *x, pq_value *row, size_t col_fid, uint64_t fid) {
    const pqx_fn *fn = x->nomem ? NULL : pqx_fn_of(x, fid);
    if (!fn) {
        x->nomem = 1;
        return 0;
    }
    row[col_fid - 1].i = (int64_t)fid; /* the id's bits: see the section's comment */
    pqx_text(&row[col_fid], fn->hex);
    pqx_text(&row[col_fid + 1], fn->symbol ? fn->symbol : fn->hex);
    if (col_fid == SL_FID) pqx_text(&row[SL_MODULE], fn->module);
    return 1;
}

static void pqx_slice(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                      int how, int outermost) {
    pqx_state *x = (pqx_state *)ctx;
    const atf_session_thread *t = &x->src->reader.threads[ti];
    uint64_t dur = end_ns > f->start_ns ? end_ns - f->start_ns : 0;
    pq_value row[SL_COLUMNS];
    (void)outermost;
    memset(row, 0, sizeof row);
    if (!pqx_put_fn(x, row, SL_FID, f->fid)) return;
    row[SL_PID].i = (int64_t)x->src->pid;
    row[SL_TID].i = cli_thread_tid(t);
    row[SL_SLOT].i = t->slot;
    pqx_text(&row[SL_THREAD_NAME], x->thread_names[ti]);
    row[SL_DEPTH].i = (int64_t)depth;
    row[SL_START].i = (int64_t)f->start_ns;
    row[SL_END].i = (int64_t)end_ns;
    row[SL_DUR].i = (int64_t)dur;
    row[SL_SELF].i = (int64_t)(dur > f->child_ns ? dur - f->child_ns : 0);
    pqx_text(&row[SL_ENDED_BY], pqx_ended_by(how));
    row[SL_HAS_DETAIL].i = f->detail_seq != ATF_NO_DETAIL;
    pq_writer_put_row(x->out, row); /* a failure sticks in the writer: see pqx_run */
}

static atf_result pqx_slices(pqx_state *x, cli_trace *s, cli_progress *p) {
    walk_ctx w;
    atf_result rc;
    if (!walk_init(&w, s->reader.thread_count)) return ATF_E_NOMEM;
    w.ctx = x;
    w.leave = pqx_slice;
    rc = walk_run(&w, s, NULL, p);
    walk_deinit(&w);
    return rc;
}

static atf_result pqx_events(pqx_state *x, cli_trace *s, cli_progress *p) {
    atf_merge m;
    atf_merge_item it;
    atf_merge_filter f;
    atf_result rc;
    pq_value row[EV_COLUMNS];
    cli_trace_filter(s, &f);
    if ((rc = atf_merge_init(&m, &s->reader, &f)) != ATF_OK) return rc;
    memset(row, 0, sizeof row);
    row[EV_PID].i = (int64_t)s->pid;
    while (atf_merge_next(&m, &it) == ATF_OK && !x->nomem) {
        if (!pqx_put_fn(x, row, EV_FID, it.event.function_id)) break;
        row[EV_SLOT].i = it.slot;
        row[EV_SEQ].i = (int64_t)it.seq;
        row[EV_TS].i = (int64_t)it.event.timestamp_ns;
        pqx_text(&row[EV_KIND], atf_event_kind_str(it.event.kind));
        row[EV_DEPTH].i = it.event.call_depth;
        row[EV_DETAIL_SEQ].i = (int64_t)it.event.detail_seq; /* ATF_NO_DETAIL reads -1 */
        pq_writer_put_row(x->out, row);
        CLI_PROGRESS_TICK(p);
    }
    atf_merge_deinit(&m);
    return ATF_OK;
}

/* Writes table `events` (else slices) of s to f. A write error goes to *werr (the
 * caller names the output); the return is the trace's or memory's error. */
static atf_result export_parquet(cli_trace *s, cli_progress *p, FILE *f, int events,
                                 pq_error *werr) {
    const atf_session_reader *r = &s->reader;
    pq_config cfg;
    pqx_state x;
    atf_result rc = ATF_OK;
    size_t i;
    memset(&cfg, 0, sizeof cfg);
    memset(&x, 0, sizeof x);
    cfg.row_group_rows = PQX_GROUP_ROWS;
    cfg.created_by = "atf export";
    x.src = s;
    x.thread_names = (char (*)[80])calloc(r->thread_count ? r->thread_count : 1,
                                          sizeof *x.thread_names);
    if (!x.thread_names) return ATF_E_NOMEM;
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        if (t->name[0]) snprintf(x.thread_names[i], sizeof x.thread_names[i], "%s", t->name);
        else snprintf(x.thread_names[i], sizeof x.thread_names[i], "thread_%u", t->slot);
    }
    if (events) rc = pq_writer_open_file(&x.out, f, pqx_event_columns, EV_COLUMNS, &cfg, werr);
    else rc = pq_writer_open_file(&x.out, f, pqx_slice_columns, SL_COLUMNS, &cfg, werr);
    if (rc == ATF_OK) {
        rc = events ? pqx_events(&x, s, p) : pqx_slices(&x, s, p);
        if (rc == ATF_OK && x.nomem) rc = ATF_E_NOMEM;
        pq_writer_close(x.out, werr);
    }
    free(x.fns);
    free(x.thread_names);
    walk_map_free(&x.index);
    return rc;
}

/* What export writes: a format, and for parquet a table. */
typedef enum export_kind {
    EXPORT_CHROME, EXPORT_PERFETTO, EXPORT_PARQUET_SLICES, EXPORT_PARQUET_EVENTS
} export_kind;

static const char *const export_progress_text[] = {
    "atf export chrome", "atf export perfetto", "atf export parquet slices",
    "atf export parquet events"
};

/* The write error of the parquet writer, named after the output. */
static int export_report_write(const pq_error *werr, const char *name) {
    atf_error e;
    if (werr->errno_value) cli_error_errno(&e, name, "write", werr->errno_value);
    else cli_error_init(&e, werr->result, name, CLI_NO_OFFSET, werr->what);
    return cli_report(&e);
}

/* Writes the trace to f: CLI_EXIT_OK, or CLI_EXIT_DATA after saying why. */
static int export_to(cli_trace *src, export_kind kind, FILE *f, const char *name) {
    FILE *before = cli_out_file();
    cli_progress p;
    pq_error werr;
    atf_result rc;
    atf_error e;
    int sys_errno = 0, status = CLI_EXIT_OK;
    memset(&werr, 0, sizeof werr);
    cli_out_switch(f, NULL);
    cli_progress_init(&p, export_progress_text[kind], cli_trace_events(src), f);
    if (kind == EXPORT_CHROME) rc = export_chrome(src, &p);
    else if (kind == EXPORT_PERFETTO) rc = export_perfetto(src, &p);
    else rc = export_parquet(src, &p, f, kind == EXPORT_PARQUET_EVENTS, &werr);
    cli_progress_end(&p);
    if (!cli_out_switch(before, &sys_errno)) {
        cli_error_errno(&e, name, "write", sys_errno);
        status = cli_report(&e);
    } else if (werr.result != ATF_OK) {
        status = export_report_write(&werr, name);
    }
    if (rc != ATF_OK && rc != werr.result) {
        cli_error_init(&e, rc, src->path, 0, "export");
        status = cli_report(&e);
    }
    return status;
}

/* The export kind of --format and --table; CLI_CONTINUE, else the usage error's status. */
static int export_kind_of(const cli_command *cmd, const char *format, const char *table,
                          export_kind *kind) {
    if (!format) return cli_usage_error(cmd, "missing --format chrome|perfetto|parquet");
    if (strcmp(format, "parquet") != 0) {
        if (table) return cli_usage_error(cmd, "--table is for --format parquet");
        if (strcmp(format, "chrome") == 0) *kind = EXPORT_CHROME;
        else if (strcmp(format, "perfetto") == 0) *kind = EXPORT_PERFETTO;
        else return cli_usage_error(cmd, "unknown format '%s'", format);
    } else if (!table || strcmp(table, "slices") == 0) {
        *kind = EXPORT_PARQUET_SLICES;
    } else if (strcmp(table, "events") == 0) {
        *kind = EXPORT_PARQUET_EVENTS;
    } else {
        return cli_usage_error(cmd, "unknown table '%s' (slices or events)", table);
    }
    return CLI_CONTINUE;
}

int cli_cmd_export(const cli_command *cmd, int argc, char **argv) {
    const char *format = NULL, *table = NULL, *outpath = NULL;
    int nops = 0, status, to_file;
    const cli_flag flags[] = {
        { "--format", NULL, CLI_OPT_STR, &format },
        { "--table", NULL, CLI_OPT_STR, &table },
        { "-o", NULL, CLI_OPT_STR, &outpath },
        { "--output", NULL, CLI_OPT_STR, &outpath },
    };
    export_kind kind = EXPORT_CHROME;
    cli_trace src;
    atf_error e;
    FILE *f;
    status = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 1, &nops);
    if (status != CLI_CONTINUE) return status;
    if ((status = export_kind_of(cmd, format, table, &kind)) != CLI_CONTINUE) return status;
    if (outpath && !*outpath) return cli_usage_error(cmd, "-o needs a file name");
    to_file = outpath && strcmp(outpath, "-") != 0;
    if (kind != EXPORT_CHROME && !to_file && cli_isatty(cli_out_file()))
        return cli_usage_error(cmd, "binary output to a terminal: give -o OUT "
                                    "(or redirect stdout)");
    if ((status = cli_trace_open(cmd, &src, argv[1])) != CLI_EXIT_OK) return status;
    f = cli_out_file();
    if (to_file && (f = fopen(outpath, "wb")) == NULL) {
        cli_error_errno(&e, outpath, "cannot open for writing", errno);
        status = cli_report(&e);
        cli_trace_close(&src);
        return status;
    }
#if defined(_WIN32)
    if (!to_file) _setmode(_fileno(f), _O_BINARY);
#endif
    status = export_to(&src, kind, f, to_file ? outpath : "stdout");
    if (to_file && fclose(f) != 0 && status == CLI_EXIT_OK) {
        cli_error_errno(&e, outpath, "write", errno);
        status = cli_report(&e);
    }
    if (status != CLI_EXIT_OK && to_file && cli_is_file(outpath))
        remove(outpath); /* no half-written file left (never a device such as /dev/null) */
    if (cli_warn_damage(&src.reader, src.only_one, src.slot, cli_trace_is_session(&src)))
        status = CLI_EXIT_DATA;
    cli_trace_close(&src);
    return status;
}
