/* export_cmd.c - atf export: the trace as Chrome Trace Event JSON, as a Perfetto protobuf
 * trace or as a Parquet table of slices or events, streamed with bounded memory, or as
 * folded stacks (calls and returns paired as walk.h says).
 * SPDX-License-Identifier: MIT */
#include "core.h"
#include "walk.h"
#include "parquet.h"
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#  include <fcntl.h>
#  include <io.h>
#endif

enum { EXPORT_NAME_MAX = 2048 };                 /* bytes of a function name kept */
/* the slice the exports draw where the recorder held a thread (pauses.atf) */
#define EXPORT_PAUSE_NAME "tracer pause"
/* the argument (true) of a slice cut short: still open when its process was last seen or
 * the recording stopped (walk.h), ended there */
#define EXPORT_CUT_ARG "cut_short"
/* the argument (true) of a slice closed by its exception event: left by a thrown
 * exception (or a longjmp the auto-tracer repaired) */
#define EXPORT_EXCEPTION_ARG "exception"

/* ==== export: the detail record of a slice ============================================ */
/* A call event that carries a detail record gives its slice arguments, in both viewer
 * formats under the same names: a function payload (detail types CALL and RETURN that
 * decode) as function_id, x0..x7, lr, fp, sp (each "0x" and 16 hex digits in Chrome, a
 * pointer in Perfetto) and stack_size; any other record as detail_type and detail_bytes.
 * A link that leads nowhere readable (damage `atf verify` reports) gives no arguments.
 * The walk pushes a call's frame before its enter callback, so the callback finds the
 * link on top of the thread's stack: one comparison per slice when there is no detail. */
enum { EXPORT_REGS = 8 };

typedef struct export_detail {
    int is_function;                 /* the payload decoded as registers and a stack */
    uint32_t type, bytes;            /* otherwise: its detail type and payload size */
    atf_detail_payload fn;
} export_detail;

/* The detail link of the frame that thread ti just opened at depth `depth`. */
static uint64_t export_detail_seq(const walk_ctx *w, size_t ti, size_t depth) {
    return w->threads[ti].stack[depth].detail_seq;
}

/* Detail record `seq` of thread ti of s: 1 with *d filled, 0 when it cannot be read. */
static int export_detail_of(const cli_trace *s, size_t ti, uint64_t seq, export_detail *d) {
    const atf_thread_reader *t = &s->reader.threads[ti].reader;
    atf_detail_event ev;
    memset(d, 0, sizeof *d);
    if (!t->has_detail || atf_detail_reader_get(&t->detail, seq, &ev) != ATF_OK) return 0;
    d->type = ev.header.type;
    d->bytes = ev.payload_len;
    d->is_function = (ev.header.type == ATF_DETAIL_FUNCTION_CALL ||
                      ev.header.type == ATF_DETAIL_FUNCTION_RETURN) &&
                     atf_detail_payload_decode(ev.payload, ev.payload_len, &d->fn) == ATF_OK;
    return 1;
}

/* ==== export: the process's name ====================================================== */
enum { EXPORT_CMDLINE_MAX = 4096 };              /* bytes of a command line kept */

/* The process as the viewers name it, as valid UTF-8 into buf: its program's file name
 * (the manifest's command line up to its first space, without the directory), else
 * "pid_N" as its directory is named. */
static void export_process_name(const cli_trace *s, char *buf, size_t cap) {
    const char *c = s->reader.cmdline, *base = c;
    char prog[256];
    size_t n = 0, i;
    if (c) {
        while (c[n] && c[n] != ' ') n++;
        for (i = 0; i < n; i++)
            if (c[i] == '/' || c[i] == '\\') base = c + i + 1;
        n -= (size_t)(base - c);
    }
    if (n == 0) {
        snprintf(buf, cap, "pid_%llu", (cli_ull)s->pid);
        return;
    }
    if (n >= sizeof prog) n = sizeof prog - 1;
    memcpy(prog, base, n);
    prog[n] = '\0';
    buf[cli_utf8_clean(prog, buf, cap - 1)] = '\0';
}

/* ==== export: Chrome Trace Event Format ============================================== */
/* {"traceEvents":[...],"displayTimeUnit":"ns"}: per process (cli_trace_pid; those of a
 * session one after the other), its process_name (export_process_name), thread_name (the
 * thread's name, else thread_<slot>) and thread_sort_index metadata ("ph":"M"), then one
 * B event per call and one E event per closed frame, in time order; ts in microseconds
 * with the nanoseconds as three decimals. Every frame the walk opens it also closes, so each thread is balanced. A gap
 * is a thread-scoped instant event ("ph":"i","s":"t") after the E events of the frames
 * it cut. A call with a detail record has its "args" on the B event (see above). */
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
    const walk_ctx *walk;            /* the walk, for the detail link of a new frame */
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

/* ,"args":{...} of a B event: detail record `seq` of thread ti (nothing when unreadable). */
static void chrome_args(const cli_trace *s, size_t ti, uint64_t seq) {
    static const char *const regs[EXPORT_REGS] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };
    export_detail d;
    char *p;
    size_t i;
    if (!export_detail_of(s, ti, seq, &d)) return;
    if (!d.is_function) {
        cli_printf(",\"args\":{\"detail_type\":%u,\"detail_bytes\":%u}", d.type, d.bytes);
        return;
    }
    p = cli_reserve(512); /* 12 hex fields of at most 28 bytes each, and stack_size */
    p = cli_put_hex64(cli_put_str(p, ",\"args\":{\"function_id\":\""), d.fn.function_id);
    for (i = 0; i < EXPORT_REGS; i++) {
        p = cli_put_str(cli_put_str(cli_put_str(p, "\",\""), regs[i]), "\":\"");
        p = cli_put_hex64(p, d.fn.x[i]);
    }
    p = cli_put_hex64(cli_put_str(p, "\",\"lr\":\""), d.fn.lr);
    p = cli_put_hex64(cli_put_str(p, "\",\"fp\":\""), d.fn.fp);
    p = cli_put_hex64(cli_put_str(p, "\",\"sp\":\""), d.fn.sp);
    p = cli_put_u64(cli_put_str(p, "\",\"stack_size\":"), d.fn.stack_size);
    *p++ = '}';
    cli_commit(p);
}

static void chrome_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *name = chrome_name(c, fid), *pre = &c->prefix[ti];
    char *p;
    if (!name) {
        c->nomem = 1;
        name = &c->cache[0]; /* never reached with an empty cache: see chrome_init */
    }
    p = cli_reserve(pre->len + 48 + name->len);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p = cli_put_time_us(p, c->src, ts);
    memcpy(p, ",\"ph\":\"B\",\"name\":", 17);
    p += 17;
    memcpy(p, name->s, name->len);
    p += name->len;
    if (export_detail_seq(c->walk, ti, depth) != ATF_NO_DETAIL) {
        cli_commit(p);
        chrome_args(c->src, ti, export_detail_seq(c->walk, ti, depth));
        p = cli_reserve(1);
    }
    *p++ = '}';
    cli_commit(p);
}

/* The E event of a frame; one cut short (walk.h) or left by an exception says so in its
 * args, which the viewers add to the slice's. */
static void chrome_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                            int how, int outermost) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *pre = &c->prefix[ti];
    char *p;
    (void)f;
    (void)depth;
    (void)outermost;
    p = cli_reserve(pre->len + 80);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p = cli_put_time_us(p, c->src, end_ns);
    p = cli_put_str(p, how == WALK_LEAVE_CUT ? ",\"ph\":\"E\",\"args\":{\"" EXPORT_CUT_ARG "\":true}}"
                       : how == WALK_LEAVE_EXCEPTION
                           ? ",\"ph\":\"E\",\"args\":{\"" EXPORT_EXCEPTION_ARG "\":true}}"
                           : ",\"ph\":\"E\"}");
    cli_commit(p);
}

static void chrome_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *pre = &c->prefix[ti];
    char *p = cli_reserve(pre->len + 48);
    memcpy(p, pre->s, pre->len);
    p += pre->len;
    p = cli_put_time_us(p, c->src, ts);
    cli_commit(p);
    cli_printf(",\"ph\":\"i\",\"s\":\"t\",\"name\":\"gap: %llu events %s\","
                          "\"args\":{\"index_lost\":%llu,\"detail_lost\":%llu,\"reason\":\"%s\"}}",
                  (cli_ull)g->index_lost, walk_gap_verb(g), (cli_ull)g->index_lost,
                  (cli_ull)g->detail_lost, atf_gap_reason_str(g->reason));
}

/* The recorder held thread ti during p: a slice of its own, nested where it happened,
 * at the real times (the functions around it keep theirs). */
static void chrome_pause(void *ctx, size_t ti, const atf_pause *pa, size_t depth) {
    chrome_state *c = (chrome_state *)ctx;
    const export_text *pre = &c->prefix[ti];
    char *p = cli_reserve(2 * pre->len + 160);
    (void)depth;
    memcpy(p, pre->s, pre->len);
    p = cli_put_time_us(p + pre->len, c->src, pa->start_ns);
    p = cli_put_str(p, ",\"ph\":\"B\",\"name\":\"" EXPORT_PAUSE_NAME "\",\"args\":{\"reason\":\"");
    p = cli_put_str(cli_put_str(p, atf_pause_reason_str(pa->reason)), "\"}}");
    memcpy(p, pre->s, pre->len);
    p = cli_put_time_us(p + pre->len, c->src, pa->end_ns);
    p = cli_put_str(p, ",\"ph\":\"E\"}");
    cli_commit(p);
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

/* The process s: its metadata, then (unless no_calls) its events; first: the first
 * process of the output. Between chrome_begin and chrome_end. */
static atf_result chrome_process(cli_trace *s, cli_progress *p, int first, int no_calls) {
    atf_session_reader *r = &s->reader;
    chrome_state c;
    walk_ctx w;
    atf_result rc = ATF_OK;
    char pname[3 * 256];
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
        int n = snprintf(buf, sizeof buf, ",\n{\"pid\":%llu,\"tid\":%u,\"ts\":",
                         (cli_ull)cli_trace_pid(s), cli_thread_tid(&r->threads[i]));
        c.prefix[i].s = (char *)malloc((size_t)n + 1);
        if (!c.prefix[i].s) {
            chrome_free(&c, r->thread_count);
            return ATF_E_NOMEM;
        }
        memcpy(c.prefix[i].s, buf, (size_t)n + 1);
        c.prefix[i].len = (size_t)n;
    }
    export_process_name(s, pname, sizeof pname);
    cli_printf("%s{\"pid\":%llu,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\","
               "\"args\":{\"name\":", first ? "" : ",\n", (cli_ull)cli_trace_pid(s));
    cli_json_str(pname);
    cli_print("}}");
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        char tname[80];
        if (!cli_trace_selected(s, i)) continue;
        cli_thread_name(t, tname, sizeof tname);
        cli_printf(",\n{\"pid\":%llu,\"tid\":%u,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":",
                      (cli_ull)cli_trace_pid(s), cli_thread_tid(t));
        cli_json_str(tname);
        cli_printf("}},\n{\"pid\":%llu,\"tid\":%u,\"ph\":\"M\",\"name\":\"thread_sort_index\","
                         "\"args\":{\"sort_index\":%u}}",
                      (cli_ull)cli_trace_pid(s), cli_thread_tid(t), t->slot);
    }
    if (no_calls) rc = ATF_OK;
    else if (!walk_init(&w, r->thread_count)) rc = ATF_E_NOMEM;
    else {
        w.ctx = &c;
        c.walk = &w;
        w.enter = chrome_enter;
        w.leave = chrome_leave;
        w.gap = chrome_gap;
        w.pause = chrome_pause;
        rc = walk_run(&w, s, NULL, p);
        walk_deinit(&w);
    }
    if (rc == ATF_OK && c.nomem) rc = ATF_E_NOMEM;
    chrome_free(&c, r->thread_count);
    return rc;
}

static void chrome_begin(void) { cli_print("{\"traceEvents\":[\n"); }
static void chrome_end(void) { cli_print("\n],\"displayTimeUnit\":\"ns\"}\n"); }

/* ==== export: Perfetto protobuf ====================================================== */
/* A Trace message written packet by packet (each TracePacket is field 1 of Trace, so a
 * stream of them is a valid Trace): one TrackDescriptor for the process, one per thread
 * (parented to the process), then one TrackEvent packet per slice begin/end on its
 * thread's track, with the function names interned: a name's EventName {iid, name} goes
 * in the InternedData of the first packet that uses it. All packets of a process are on
 * one sequence; its first clears the incremental state, the others need it. The
 * processes of a session follow one another, each on a sequence of its own (1, 2, ...,
 * so that its interned names are its own: a function id means another function in
 * another process) with tracks numbered after the previous process's (process k's
 * track is the uuid after the last thread track of process k-1; its thread i's is that
 * + 1 + i), so that every uuid is unique in the file. A gap is a TYPE_INSTANT
 * event on its thread's track, named in place (TrackEvent.name), after the SLICE_END
 * events of the frames it cut. A call with a detail record has it as debug annotations
 * (named in place) on its SLICE_BEGIN event (see the detail section above).
 *
 * Field numbers, from google/perfetto protos/perfetto/trace/ (checked against the .proto
 * files: trace.proto, trace_packet.proto, track_event/track_event.proto,
 * track_event/track_descriptor.proto, track_event/process_descriptor.proto,
 * track_event/thread_descriptor.proto, track_event/debug_annotation.proto,
 * interned_data/interned_data.proto). */
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
    PF_PROCESS_CMDLINE = 2,                       /* ProcessDescriptor.cmdline: repeated string */
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
    PF_EVENT_NAME_NAME = 2,                       /* EventName.name: string */
    PF_EVENT_DEBUG_ANNOTATIONS = 4,               /* TrackEvent.debug_annotations: repeated
                                                     DebugAnnotation */
    PF_ANNOTATION_BOOL = 2,                       /* DebugAnnotation.bool_value: bool */
    PF_ANNOTATION_UINT = 3,                       /* DebugAnnotation.uint_value: uint64 */
    PF_ANNOTATION_STRING = 6,                     /* DebugAnnotation.string_value: string */
    PF_ANNOTATION_POINTER = 7,                    /* DebugAnnotation.pointer_value: uint64 */
    PF_ANNOTATION_NAME = 10                       /* DebugAnnotation.name: string */
};

enum { PF_FIRST_UUID = 1 };                       /* track uuids: first process 1, its
                                                     thread i: 2 + i */
/* The annotations of a detail record: at most 13 of at most 35 bytes each. */
enum { PF_DETAIL_MAX = 512 };
enum { PF_PACKET_MAX = EXPORT_NAME_MAX + 256 + PF_DETAIL_MAX }; /* the largest packet we build */

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
    uint64_t uuid;                 /* the process's track; thread i's: uuid + 1 + i */
    uint32_t seq;                  /* the process's trusted_packet_sequence_id */
    uint8_t seq_fields[16];        /* perfetto_sequence(seq, not first), encoded once */
    size_t seq_len;
    walk_map iids;                 /* fid -> interned name id (1, 2, ...) */
    uint64_t next_iid;
    const walk_ctx *walk;          /* the walk, for the detail link of a new frame */
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

/* Sequence fields of every packet of sequence seq: first = the packet that clears the
 * state. At most 16 bytes. */
static size_t perfetto_sequence(uint8_t *p, uint32_t seq, int first) {
    size_t n = pb_uint(p, PF_PACKET_SEQUENCE_ID, seq);
    if (first) {
        n += pb_uint(p + n, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
        n += pb_uint(p + n, PF_PACKET_INCREMENTAL_STATE_CLEARED, 1);
        n += pb_uint(p + n, PF_PACKET_FIRST_ON_SEQUENCE, 1);
    } else {
        n += pb_uint(p + n, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_NEEDS_INCREMENTAL_STATE);
    }
    return n;
}

/* One DebugAnnotation { name, value } as TrackEvent.debug_annotations: a varint value of
 * field vfield, or the string s when s is not NULL. */
static size_t pf_annotation(uint8_t *p, const char *name, uint32_t vfield, uint64_t v,
                            const char *s) {
    uint8_t a[64];
    size_t n = pb_bytes(a, PF_ANNOTATION_NAME, name, strlen(name));
    if (s) n += pb_bytes(a + n, PF_ANNOTATION_STRING, s, strlen(s));
    else n += pb_uint(a + n, vfield, v);
    return pb_bytes(p, PF_EVENT_DEBUG_ANNOTATIONS, a, n);
}

/* The annotations of detail record `seq` of thread ti into p (at most PF_DETAIL_MAX
 * bytes; none when it cannot be read): the names and values of chrome_args. */
static size_t pf_annotations(const cli_trace *s, size_t ti, uint64_t seq, uint8_t *p) {
    static const char *const regs[EXPORT_REGS] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };
    export_detail d;
    char hex[24];
    size_t n = 0, i;
    if (!export_detail_of(s, ti, seq, &d)) return 0;
    if (!d.is_function) {
        n += pf_annotation(p + n, "detail_type", PF_ANNOTATION_UINT, d.type, NULL);
        return n + pf_annotation(p + n, "detail_bytes", PF_ANNOTATION_UINT, d.bytes, NULL);
    }
    *cli_put_hex64(hex, d.fn.function_id) = '\0';
    n += pf_annotation(p + n, "function_id", 0, 0, hex);
    for (i = 0; i < EXPORT_REGS; i++)
        n += pf_annotation(p + n, regs[i], PF_ANNOTATION_POINTER, d.fn.x[i], NULL);
    n += pf_annotation(p + n, "lr", PF_ANNOTATION_POINTER, d.fn.lr, NULL);
    n += pf_annotation(p + n, "fp", PF_ANNOTATION_POINTER, d.fn.fp, NULL);
    n += pf_annotation(p + n, "sp", PF_ANNOTATION_POINTER, d.fn.sp, NULL);
    return n + pf_annotation(p + n, "stack_size", PF_ANNOTATION_UINT, d.fn.stack_size, NULL);
}

/* A slice begin (with the annotations of detail record detail_seq unless ATF_NO_DETAIL)
 * or end (with the annotation cut_short when how is WALK_LEAVE_CUT, exception when
 * WALK_LEAVE_EXCEPTION) of fid on thread ti's track at ts. */
static void perfetto_event(perfetto_state *pf, size_t ti, uint64_t ts, int begin, uint64_t fid,
                           uint64_t detail_seq, int how) {
    uint8_t pkt[PF_PACKET_MAX], te[40 + PF_DETAIL_MAX];
    size_t n, tn;
    uint64_t iid = 0;
    int is_new = 0;
    ts = cli_trace_time(pf->src, ts); /* on --clock's clock */
    tn = pb_uint(te, PF_EVENT_TYPE, begin ? PF_TYPE_SLICE_BEGIN : PF_TYPE_SLICE_END);
    tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, pf->uuid + 1 + (uint64_t)ti);
    if (begin) {
        uint64_t *v = walk_map_put(&pf->iids, fid, &is_new);
        if (!v) {
            pf->nomem = 1;
            return;
        }
        if (is_new) *v = ++pf->next_iid;
        iid = *v;
        tn += pb_uint(te + tn, PF_EVENT_NAME_IID, iid);
        if (detail_seq != ATF_NO_DETAIL) tn += pf_annotations(pf->src, ti, detail_seq, te + tn);
    } else if (how == WALK_LEAVE_CUT) {
        tn += pf_annotation(te + tn, EXPORT_CUT_ARG, PF_ANNOTATION_BOOL, 1, NULL);
    } else if (how == WALK_LEAVE_EXCEPTION) {
        tn += pf_annotation(te + tn, EXPORT_EXCEPTION_ARG, PF_ANNOTATION_BOOL, 1, NULL);
    }
    if (!is_new) { /* the common packet, sized first and encoded in place */
        size_t body = 1 + pb_varint_size(ts) + pf->seq_len + 1 + pb_varint_size(tn) + tn;
        uint8_t *p = (uint8_t *)cli_reserve(body + 16), *q = p;
        *q++ = PF_TRACE_PACKET << 3 | PB_LEN;
        q += pb_varint(q, body);
        q += pb_uint(q, PF_PACKET_TIMESTAMP, ts);
        for (n = 0; n < pf->seq_len; n++) *q++ = pf->seq_fields[n];
        *q++ = PF_PACKET_TRACK_EVENT << 3 | PB_LEN;
        q += pb_varint(q, tn);
        for (n = 0; n < tn; n++) *q++ = te[n];
        cli_commit((const char *)q);
        return;
    }
    n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
    n += perfetto_sequence(pkt + n, pf->seq, 0);
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
    perfetto_state *pf = (perfetto_state *)ctx;
    perfetto_event(pf, ti, ts, 1, fid, export_detail_seq(pf->walk, ti, depth), WALK_LEAVE_RETURN);
}

static void perfetto_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns, size_t depth,
                        int how, int outermost) {
    (void)depth;
    (void)outermost;
    perfetto_event((perfetto_state *)ctx, ti, end_ns, 0, f->fid, ATF_NO_DETAIL, how);
}

static void perfetto_gap(void *ctx, size_t ti, const atf_gap *g, uint64_t ts) {
    const perfetto_state *pf = (const perfetto_state *)ctx;
    uint8_t pkt[256], te[160];
    char name[96];
    size_t n, tn;
    ts = cli_trace_time(pf->src, ts); /* on --clock's clock */
    snprintf(name, sizeof name, "gap: %llu events %s (%s)", (cli_ull)g->index_lost,
             walk_gap_verb(g), atf_gap_reason_str(g->reason));
    tn = pb_uint(te, PF_EVENT_TYPE, PF_TYPE_INSTANT);
    tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, pf->uuid + 1 + (uint64_t)ti);
    tn += pb_bytes(te + tn, PF_EVENT_NAME, name, strlen(name));
    n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
    memcpy(pkt + n, pf->seq_fields, pf->seq_len);
    n += pf->seq_len;
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_EVENT, te, tn);
    perfetto_packet(pkt, n);
}

/* The recorder held thread ti during p: a slice of its own where it happened. */
static void perfetto_pause(void *ctx, size_t ti, const atf_pause *pa, size_t depth) {
    const perfetto_state *pf = (const perfetto_state *)ctx;
    uint8_t pkt[256], te[96];
    size_t n, tn, k;
    (void)depth;
    for (k = 0; k < 2; k++) {
        uint64_t ts = cli_trace_time(pf->src, k ? pa->end_ns : pa->start_ns); /* --clock's */
        tn = pb_uint(te, PF_EVENT_TYPE, k ? PF_TYPE_SLICE_END : PF_TYPE_SLICE_BEGIN);
        tn += pb_uint(te + tn, PF_EVENT_TRACK_UUID, pf->uuid + 1 + (uint64_t)ti);
        if (!k) tn += pb_bytes(te + tn, PF_EVENT_NAME, EXPORT_PAUSE_NAME, strlen(EXPORT_PAUSE_NAME));
        n = pb_uint(pkt, PF_PACKET_TIMESTAMP, ts);
        memcpy(pkt + n, pf->seq_fields, pf->seq_len);
        n += pf->seq_len;
        n += pb_bytes(pkt + n, PF_PACKET_TRACK_EVENT, te, tn);
        perfetto_packet(pkt, n);
    }
}

/* ProcessDescriptor.cmdline into p: the words of the command line (split at its spaces,
 * as the manifest joins them), of its first EXPORT_CMDLINE_MAX bytes. Each word costs at
 * most 3 bytes more than itself, and words are at least 2 bytes apart: p needs
 * PF_CMDLINE_ROOM bytes. */
enum { PF_CMDLINE_ROOM = EXPORT_CMDLINE_MAX * 3 };
static size_t pf_cmdline(uint8_t *p, const char *cmdline) {
    char clean[EXPORT_CMDLINE_MAX];
    size_t len = cli_utf8_clean(cmdline, clean, sizeof clean), n = 0, at = 0;
    while (at < len) {
        size_t end = at;
        while (end < len && clean[end] != ' ') end++;
        if (end > at) n += pb_bytes(p + n, PF_PROCESS_CMDLINE, clean + at, end - at);
        at = end + 1;
    }
    return n;
}

/* The process track (the first packet of its sequence): its pid, its name
 * (export_process_name) and its command line. */
static void perfetto_process(const perfetto_state *pf) {
    const cli_trace *s = pf->src;
    static uint8_t pkt[PF_CMDLINE_ROOM + 1024], desc[PF_CMDLINE_ROOM + 768],
                   sub[PF_CMDLINE_ROOM + 512]; /* not on the stack: 12 KiB + each */
    char name[3 * 256];
    size_t n, dn, sn;
    export_process_name(s, name, sizeof name);
    sn = pb_int32(sub, PF_PROCESS_PID, (uint32_t)cli_trace_pid(s));
    sn += pb_bytes(sub + sn, PF_PROCESS_NAME, name, strlen(name));
    if (s->reader.cmdline) sn += pf_cmdline(sub + sn, s->reader.cmdline);
    dn = pb_uint(desc, PF_TRACK_UUID, pf->uuid);
    dn += pb_bytes(desc + dn, PF_TRACK_PROCESS, sub, sn);
    n = perfetto_sequence(pkt, pf->seq, 1);
    n += pb_bytes(pkt + n, PF_PACKET_TRACK_DESCRIPTOR, desc, dn);
    perfetto_packet(pkt, n);
}

/* The descriptor packets: the process track, then one thread track per thread. */
static void perfetto_descriptors(const perfetto_state *pf) {
    const cli_trace *s = pf->src;
    const atf_session_reader *r = &s->reader;
    uint8_t pkt[512], desc[384], sub[256];
    char name[80];
    size_t n, dn, sn, i;
    perfetto_process(pf);
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        char clean[3 * 64];
        size_t cl;
        if (!cli_trace_selected(s, i)) continue;
        cli_thread_name(t, name, sizeof name);
        cl = cli_utf8_clean(name, clean, sizeof clean);
        sn = pb_int32(sub, PF_THREAD_PID, (uint32_t)cli_trace_pid(s));
        sn += pb_int32(sub + sn, PF_THREAD_TID, cli_thread_tid(t));
        sn += pb_bytes(sub + sn, PF_THREAD_NAME, clean, cl);
        dn = pb_uint(desc, PF_TRACK_UUID, pf->uuid + 1 + (uint64_t)i);
        dn += pb_uint(desc + dn, PF_TRACK_PARENT_UUID, pf->uuid);
        dn += pb_bytes(desc + dn, PF_TRACK_THREAD, sub, sn);
        n = perfetto_sequence(pkt, pf->seq, 0);
        n += pb_bytes(pkt + n, PF_PACKET_TRACK_DESCRIPTOR, desc, dn);
        perfetto_packet(pkt, n);
    }
}

/* The process s on sequence seq with its tracks from uuid on (the process's, then one
 * per thread): its descriptors, then (unless no_calls) its events. */
static atf_result perfetto_process_events(cli_trace *s, cli_progress *p, uint32_t seq,
                                          uint64_t uuid, int no_calls) {
    perfetto_state pf;
    walk_ctx w;
    atf_result rc;
    memset(&pf, 0, sizeof pf);
    pf.src = s;
    pf.uuid = uuid;
    pf.seq = seq;
    pf.seq_len = perfetto_sequence(pf.seq_fields, seq, 0);
    perfetto_descriptors(&pf);
    if (no_calls) return ATF_OK;
    if (!walk_init(&w, s->reader.thread_count)) return ATF_E_NOMEM;
    w.ctx = &pf;
    pf.walk = &w;
    w.enter = perfetto_enter;
    w.leave = perfetto_leave;
    w.gap = perfetto_gap;
    w.pause = perfetto_pause;
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
 * The processes of a session go into the one table one after the other, each in the
 * order above (pid tells them apart; thread_slot is a slot of its process).
 * start_ns, end_ns and ts_ns are plain INT64 nanoseconds on the trace clock (or --clock's),
 * which counts from no date; start_wall, end_wall and ts_wall are the same instants as
 * TIMESTAMP(NANOS) adjusted to UTC, from the process's exact wall_clock_ns anchor
 * (cli_trace_wall), null when it has none.
 * function_id is an INT64 holding the id's 64 bits, so an id >= 2^63 reads negative;
 * fid holds every id exactly, as the text "0x%016llx" that `atf stats --json` prints;
 * name is the function's name as --demangle shows it, mangled its symbol as recorded
 * (null when the manifest names it not). */
enum { PQX_GROUP_ROWS = 131072 };   /* DuckDB's own row group size is close: 122880 */

enum { SL_PID, SL_TID, SL_SLOT, SL_THREAD_NAME, SL_FUNCTION_ID, SL_FID, SL_NAME, SL_MANGLED,
       SL_MODULE, SL_DEPTH, SL_START, SL_END, SL_DUR, SL_SELF, SL_ENDED_BY, SL_HAS_DETAIL,
       SL_PAUSED, SL_START_WALL, SL_END_WALL, SL_COLUMNS };
static const pq_column pqx_slice_columns[SL_COLUMNS] = {
    { "pid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0 },
    { "tid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "thread_slot", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "thread_name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "function_id", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "fid", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "mangled", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 1 },
    { "module", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "depth", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "start_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "end_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "dur_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "self_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "ended_by", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "has_detail", PQ_INT32, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "paused_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "start_wall", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 1 },
    { "end_wall", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 1 },
};

enum { EV_PID, EV_SLOT, EV_SEQ, EV_TS, EV_FUNCTION_ID, EV_FID, EV_NAME, EV_MANGLED, EV_KIND,
       EV_DEPTH, EV_DETAIL_SEQ, EV_TS_WALL, EV_COLUMNS };
static const pq_column pqx_event_columns[EV_COLUMNS] = {
    { "pid", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_AUTO, 0 },
    { "thread_slot", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "seq", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "ts_ns", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "function_id", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "fid", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "name", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "mangled", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 1 },
    { "kind", PQ_BYTE_ARRAY, PQ_LOGICAL_STRING, PQ_ENCODING_DICTIONARY, 0 },
    { "depth", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DICTIONARY, 0 },
    { "detail_seq", PQ_INT64, PQ_LOGICAL_INTEGER, PQ_ENCODING_DELTA, 0 },
    { "ts_wall", PQ_INT64, PQ_LOGICAL_TIMESTAMP_NS_UTC, PQ_ENCODING_DELTA, 1 },
};

/* Trace time ts as a TIMESTAMP column's value: the wall clock's ns, or null. */
static void pqx_wall(pq_value *v, const cli_trace *s, uint64_t ts) {
    v->is_null = !cli_trace_wall(s, ts, &v->i);
}

/* ended_by of a slice, by how the walk closed its frame */
static const char *pqx_ended_by(int how) {
    switch (how) {
    case WALK_LEAVE_RETURN: return "return";
    case WALK_LEAVE_EXCEPTION: return "exception";
    case WALK_LEAVE_UNWOUND: return "unwound";
    case WALK_LEAVE_CUT: return "cut";
    default: return "gap";
    }
}

/* What a row says about a function, looked up once per distinct id. */
typedef struct pqx_fn {
    const char *name;                /* as --demangle shows it; NULL: the name is hex */
    const char *symbol;              /* the manifest's name (mangled); NULL: none */
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
        pqx_fn *fn;
        if (x->count == x->cap) {
            size_t cap = x->cap ? x->cap * 2 : 64;
            pqx_fn *m = (pqx_fn *)realloc(x->fns, cap * sizeof *m);
            if (!m) return NULL; /* fid stays mapped with no entry: pqx_put_fn stops */
            x->fns = m;
            x->cap = cap;
        }
        fn = &x->fns[x->count];
        fn->symbol = cli_trace_symbol(x->src, fid);
        fn->module = pqx_module(&x->src->reader, fid);
        snprintf(fn->hex, sizeof fn->hex, "0x%016llx", (cli_ull)fid);
        fn->name = fn->symbol ? cli_trace_name(x->src, fid, fn->hex, sizeof fn->hex) : NULL;
        *pos = x->count++;
    }
    return &x->fns[*pos];
}

static void pqx_text(pq_value *v, const char *s) {
    v->s = s;
    v->len = strlen(s);
}

/* The function columns of a row: function_id, fid, name and mangled, adjacent in both
 * tables (col_fid is fid's), and the slices' module. 0 when out of memory. */
static int pqx_put_fn(pqx_state *x, pq_value *row, size_t col_fid, uint64_t fid) {
    const pqx_fn *fn = x->nomem ? NULL : pqx_fn_of(x, fid);
    if (!fn) {
        x->nomem = 1;
        return 0;
    }
    row[col_fid - 1].i = (int64_t)fid; /* the id's bits: see the section's comment */
    pqx_text(&row[col_fid], fn->hex);
    pqx_text(&row[col_fid + 1], fn->name ? fn->name : fn->hex);
    if (fn->symbol) pqx_text(&row[col_fid + 2], fn->symbol);
    row[col_fid + 2].is_null = fn->symbol == NULL;
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
    row[SL_PID].i = (int64_t)cli_trace_pid(x->src);
    row[SL_TID].i = cli_thread_tid(t);
    row[SL_SLOT].i = t->slot;
    pqx_text(&row[SL_THREAD_NAME], x->thread_names[ti]);
    row[SL_DEPTH].i = (int64_t)depth;
    row[SL_START].i = (int64_t)cli_trace_time(x->src, f->start_ns); /* on --clock's clock */
    row[SL_END].i = (int64_t)cli_trace_time(x->src, end_ns);
    row[SL_DUR].i = (int64_t)dur;
    row[SL_SELF].i = (int64_t)walk_frame_self_ns(f, end_ns); /* the recorder's pauses left out */
    pqx_text(&row[SL_ENDED_BY], pqx_ended_by(how));
    row[SL_HAS_DETAIL].i = f->detail_seq != ATF_NO_DETAIL;
    row[SL_PAUSED].i = (int64_t)f->paused_ns;
    pqx_wall(&row[SL_START_WALL], x->src, f->start_ns);
    pqx_wall(&row[SL_END_WALL], x->src, end_ns);
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
    row[EV_PID].i = (int64_t)cli_trace_pid(s);
    while (atf_merge_next(&m, &it) == ATF_OK && !x->nomem &&
           it.event.timestamp_ns <= s->window.to_ns) { /* the merge reads --to 0 as no bound */
        if (!pqx_put_fn(x, row, EV_FID, it.event.function_id)) break;
        row[EV_SLOT].i = it.slot;
        row[EV_SEQ].i = (int64_t)it.seq;
        row[EV_TS].i = (int64_t)cli_trace_time(s, it.event.timestamp_ns); /* --clock's */
        pqx_text(&row[EV_KIND], atf_event_kind_str(it.event.kind));
        row[EV_DEPTH].i = it.event.call_depth;
        row[EV_DETAIL_SEQ].i = (int64_t)it.event.detail_seq; /* ATF_NO_DETAIL reads -1 */
        pqx_wall(&row[EV_TS_WALL], s, it.event.timestamp_ns);
        pq_writer_put_row(x->out, row);
        CLI_PROGRESS_TICK(p);
    }
    atf_merge_deinit(&m);
    return ATF_OK;
}

/* Table `events` (else slices) opened on f. A write error goes to *werr (the caller
 * names the output). */
static atf_result pqx_open(pq_writer **w, FILE *f, int events, pq_error *werr) {
    pq_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.row_group_rows = PQX_GROUP_ROWS;
    cfg.created_by = "atf export";
    if (events) return pq_writer_open_file(w, f, pqx_event_columns, EV_COLUMNS, &cfg, werr);
    return pq_writer_open_file(w, f, pqx_slice_columns, SL_COLUMNS, &cfg, werr);
}

/* The rows of process s in table `events` (else slices) of out; none when no_calls. The
 * row's strings are copied by the writer, so the process may close afterwards. Returns
 * the trace's or memory's error (a write error sticks in out). */
static atf_result pqx_process(pq_writer *out, cli_trace *s, cli_progress *p, int events,
                              int no_calls) {
    const atf_session_reader *r = &s->reader;
    pqx_state x;
    atf_result rc;
    size_t i;
    if (no_calls) return ATF_OK;
    memset(&x, 0, sizeof x);
    x.src = s;
    x.out = out;
    x.thread_names = (char (*)[80])calloc(r->thread_count ? r->thread_count : 1,
                                          sizeof *x.thread_names);
    if (!x.thread_names) return ATF_E_NOMEM;
    for (i = 0; i < r->thread_count; i++)
        cli_thread_name(&r->threads[i], x.thread_names[i], sizeof x.thread_names[i]);
    rc = events ? pqx_events(&x, s, p) : pqx_slices(&x, s, p);
    if (rc == ATF_OK && x.nomem) rc = ATF_E_NOMEM;
    free(x.fns);
    free(x.thread_names);
    walk_map_free(&x.index);
    return rc;
}

/* ==== export: folded stacks ========================================================= */
/* Brendan Gregg's folded stacks, what flamegraph.pl, inferno and speedscope read: one
 * line per distinct call path, "frame;frame;frame N", N the self time in ns of its last
 * frame summed over every call along that path (profile.h adds them up). Each thread's
 * paths begin with a frame naming it (--thread-frame: its name, as the other exports name
 * it, so that threads of one name add up as perf's stackcollapse does; NAME-PID/TID, one
 * frame per thread; or none, every thread's paths added up), and every process of a
 * session goes into the one profile, matched by names. The lines follow
 * profile_paths_order (each path before those that extend it, siblings by their frames'
 * bytes), written once every process is in: memory is the distinct paths'. */
static atf_result folded_process(profile_paths *paths, cli_trace *s, cli_progress *p,
                                 profile_frame_mode frame, int no_calls) {
    walk_ctx w;
    atf_result rc;
    if (no_calls) return ATF_OK;
    rc = profile_collect(s, &w, NULL, paths, 0, frame, p);
    walk_deinit(&w);
    return rc;
}

/* Every path of the profile that holds calls, one line each, on the output. */
static atf_result folded_write(const profile_paths *paths) {
    profile_text t;
    uint32_t *order;
    size_t i;
    atf_result rc = profile_paths_order(paths, &order);
    if (rc != ATF_OK) return rc;
    memset(&t, 0, sizeof t);
    for (i = 0; i + 1 < paths->count && !cli_out_failed(); i++) {
        const profile_node *n = &paths->nodes[order[i]];
        char *p;
        if (n->is_thread || !n->calls[0]) continue; /* a thread's frame is no call */
        if (!profile_path_text(paths, order[i], &t)) {
            rc = ATF_E_NOMEM;
            break;
        }
        cli_write(t.s, t.len);
        p = cli_reserve(24);
        *p++ = ' ';
        p = cli_put_u64(p, n->self_ns[0]);
        *p++ = '\n';
        cli_commit(p);
    }
    free(t.s);
    free(order);
    return rc;
}

/* What export writes: a format, and for parquet a table. */
typedef enum export_kind {
    EXPORT_CHROME, EXPORT_PERFETTO, EXPORT_PARQUET_SLICES, EXPORT_PARQUET_EVENTS, EXPORT_FOLDED
} export_kind;

static const char *const export_progress_text[] = {
    "atf export chrome", "atf export perfetto", "atf export parquet slices",
    "atf export parquet events", "atf export folded"
};

/* The write error of the parquet writer, named after the output. */
static int export_report_write(const pq_error *werr, const char *name) {
    atf_error e;
    if (werr->errno_value) cli_error_errno(&e, name, "write", werr->errno_value);
    else cli_error_init(&e, werr->result, name, CLI_NO_OFFSET, werr->what);
    return cli_report(&e);
}

/* One output being written: a document (or a table) of one process or of several. */
typedef struct export_job {
    export_kind kind;
    FILE *f;                        /* the output */
    FILE *before;                   /* where the command's output went before */
    const char *name;               /* the output in messages */
    int several;                    /* of several processes: progress names each */
    size_t processes;               /* processes written so far */
    uint64_t next_uuid;             /* perfetto: the next process's track uuid */
    pq_writer *pq;                  /* parquet: the table */
    pq_error werr;                  /*   its write error */
    profile_paths *paths;           /* folded: the paths of every process so far */
    profile_frame_mode frame;       /*   how each thread's paths begin */
    atf_result rc;                  /* ATF_OK, or why the output could not begin */
} export_job;

/* Switches the output to f and writes the start of the document (frame: folded's). */
static void export_begin(export_job *j, export_kind kind, FILE *f, const char *name,
                         int several, profile_frame_mode frame) {
    memset(j, 0, sizeof *j);
    j->kind = kind;
    j->frame = frame;
    j->f = f;
    j->before = cli_out_file();
    j->name = name;
    j->several = several;
    j->next_uuid = PF_FIRST_UUID;
    cli_out_switch(f, NULL);
    if (kind == EXPORT_CHROME) chrome_begin();
    else if (kind == EXPORT_FOLDED)
        j->rc = (j->paths = (profile_paths *)calloc(1, sizeof *j->paths)) ? ATF_OK : ATF_E_NOMEM;
    else if (kind != EXPORT_PERFETTO)
        j->rc = pqx_open(&j->pq, f, kind == EXPORT_PARQUET_EVENTS, &j->werr);
}

/* Whether the output takes more: it began and no write to it failed. */
static int export_writable(const export_job *j) {
    return j->rc == ATF_OK && !cli_out_failed();
}

/* Writes process s (its tracks, and its calls unless no_calls): CLI_EXIT_OK, or
 * CLI_EXIT_DATA after saying why (an error of the trace or of memory; a write error is
 * export_end's to name). */
static int export_process(export_job *j, cli_trace *s, int no_calls) {
    char what[96];
    cli_progress p;
    atf_result rc;
    atf_error e;
    if (j->several)
        snprintf(what, sizeof what, "%s pid_%llu", export_progress_text[j->kind],
                 (cli_ull)cli_trace_pid(s));
    else
        snprintf(what, sizeof what, "%s", export_progress_text[j->kind]);
    cli_progress_init(&p, what, no_calls ? 0 : cli_trace_events(s), j->f);
    if (j->kind == EXPORT_CHROME) {
        rc = chrome_process(s, &p, j->processes == 0, no_calls);
    } else if (j->kind == EXPORT_PERFETTO) {
        rc = perfetto_process_events(s, &p, (uint32_t)(j->processes + 1), j->next_uuid,
                                     no_calls);
        j->next_uuid += 1 + (uint64_t)s->reader.thread_count;
    } else if (j->kind == EXPORT_FOLDED) {
        rc = folded_process(j->paths, s, &p, j->frame, no_calls);
    } else {
        rc = pqx_process(j->pq, s, &p, j->kind == EXPORT_PARQUET_EVENTS, no_calls);
    }
    cli_progress_end(&p);
    j->processes++;
    if (rc == ATF_OK) return CLI_EXIT_OK;
    cli_error_init(&e, rc, s->path, 0, "export");
    return cli_report(&e);
}

/* Writes the end of the document and switches the output back: CLI_EXIT_OK, or
 * CLI_EXIT_DATA after saying what failed (writing the output, or beginning it). */
static int export_end(export_job *j) {
    int sys_errno = 0, status = CLI_EXIT_OK;
    atf_error e;
    if (j->kind == EXPORT_CHROME) chrome_end();
    else if (j->pq && j->rc == ATF_OK) pq_writer_close(j->pq, &j->werr);
    if (j->paths) {
        if (j->rc == ATF_OK) j->rc = folded_write(j->paths);
        profile_paths_free(j->paths);
        free(j->paths);
    }
    if (!cli_out_switch(j->before, &sys_errno)) {
        cli_error_errno(&e, j->name, "write", sys_errno);
        status = cli_report(&e);
    } else if (j->werr.result != ATF_OK) {
        status = export_report_write(&j->werr, j->name);
    }
    if (j->rc != ATF_OK && j->rc != j->werr.result) {
        cli_error_init(&e, j->rc, j->name, CLI_NO_OFFSET, "export");
        status = cli_report(&e);
    }
    return status;
}

/* ==== export: every process of a session ============================================= */
/* A session_* PATH holding several pid_* directories (a program that forked), without
 * --pid, is exported whole: every process into the one output, in the order of their
 * directory names (cli_pid_dirs), each opened, written and closed in turn, so memory
 * stays that of one process. Each process is on its own track group as above: its pid,
 * its process name and command line, its threads under it. A process that cannot be
 * read is reported and left out, one with damaged threads is exported as the core
 * reports it (the damage named on stderr after its part); either way the others are
 * written and the exit status is 1. The view applies to each process:
 *   --from/--to "+T" counts from the session's first event (of every process), so that
 *            an instant means the same in every process;
 *   --function F selects F's calls in each process that names a function F (function
 *            ids are per process: the manifest of each says which is F); one that names
 *            none shows its tracks without calls; a name no process knows is exit 2;
 *   --thread N needs --pid (slots are per process): exit 2 without it;
 *   --clock C must name an exact anchor of every process (each is read on its own).
 * What can be refused is checked in a first pass over the processes (opening each
 * without its window) before anything is written; it runs only when the view has one of
 * --from, --to, --function and --clock. */
typedef struct export_session {
    const cli_command *cmd;
    const char *path;               /* the session_* directory */
    char **pids;                    /* its pid_* directories */
    size_t count;
    unsigned char *skip;            /* per process: the first pass could not open it */
    uint64_t *shown;                /* per process: the pid it was written with, or 0 */
    cli_view *view;                 /* the view of each (has_start, functions_lenient) */
    int damaged;                    /* a process could not be read, or had damage */
    int refused;                    /* a process lacked what the view names */
} export_session;

/* The pid_* directories of PATH into *x when it is a session_* directory of more than
 * one process and --pid picks none: 1, else 0 (PATH opens as one trace). */
static int export_several(const char *path, const cli_view *v, export_session *x) {
    cli_kind kind;
    atf_error e;
    memset(x, 0, sizeof *x);
    if (v->has_pid || cli_classify(path, &kind, &e) != ATF_OK || kind != CLI_KIND_ROOT ||
        cli_pid_dirs(path, &x->pids, &x->count) != 0)
        return 0;
    if (x->count > 1 && (x->skip = (unsigned char *)calloc(x->count, 1)) != NULL &&
        (x->shown = (uint64_t *)calloc(x->count, sizeof *x->shown)) != NULL)
        return 1;
    free(x->skip);
    cli_pid_dirs_free(x->pids, x->count); /* no memory for the flags: the core says so */
    memset(x, 0, sizeof *x);
    return 0;
}

/* N of the pid_N (or pid_N_K: the same pid after an exec) directory path, as
 * cli_pid_dirs lists them (joined with '/'). */
static uint64_t export_dir_pid(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "pid_", 4) == 0 ? strtoull(base + 4, NULL, 10) : 0;
}

/* The pid process i of x is written with: cli_trace_pid, unless another process has a claim
 * to that pid (its pid_N directory is named after it, or an earlier process was written
 * with it), as when a pid_* directory was copied: then its own directory's N, so that
 * every process of the output is a process of its own in the viewers. */
static uint64_t export_session_pid(const export_session *x, size_t i, const cli_trace *t) {
    uint64_t pid = cli_trace_pid(t);
    size_t k;
    for (k = 0; k < x->count; k++)
        if (k != i && (export_dir_pid(x->pids[k]) == pid || x->shown[k] == pid))
            return export_dir_pid(x->pids[i]);
    return pid;
}

/* The processes listed after a message about x's session, on stderr; CLI_EXIT_USAGE. */
static int export_list_pids(const export_session *x) {
    size_t i;
    for (i = 0; i < x->count; i++) fprintf(cli_err(), "  %s\n", x->pids[i]);
    return CLI_EXIT_USAGE;
}

/* The first pass (see above): CLI_CONTINUE with x->view set for the export, or the
 * exit status after a message. */
static int export_first_pass(export_session *x, export_kind kind) {
    const cli_view *v = x->view;
    cli_view *pre = (cli_view *)malloc(sizeof *pre);
    unsigned char *named = (unsigned char *)calloc(v->functions.count + 1, 1);
    uint64_t start = UINT64_MAX;
    int status = CLI_CONTINUE;
    size_t i, k;
    cli_window w;
    if (!pre || !named) {
        atf_error e;
        cli_error_init(&e, ATF_E_NOMEM, x->path, CLI_NO_OFFSET, "first pass");
        free(pre);
        free(named);
        return cli_report(&e);
    }
    *pre = *v;
    pre->from = pre->to = NULL;
    for (i = 0; i < x->count && status == CLI_CONTINUE; i++) {
        cli_trace t;
        int st = cli_trace_open_view(x->cmd, &t, x->pids[i], pre);
        if (st == CLI_EXIT_USAGE) status = st;
        if (st != CLI_EXIT_OK) { /* said; a damaged process is left out of the export */
            x->skip[i] = 1;
            x->damaged = 1;
            continue;
        }
        if (kind == EXPORT_PERFETTO && t.clock_negative) {
            fprintf(cli_err(), "atf %s: --clock %s: %s starts before that clock's zero, and "
                               "perfetto times are unsigned\n", x->cmd->name, v->clock, x->pids[i]);
            status = CLI_EXIT_USAGE;
        }
        if (cli_trace_events(&t) && cli_trace_start(&t) < start) start = cli_trace_start(&t);
        for (k = 0; k < v->functions.count; k++)
            named[k] |= (unsigned char)cli_trace_names_function(&t, v->functions.items[k]);
        cli_trace_close(&t);
    }
    for (k = 0; k < v->functions.count && status == CLI_CONTINUE; k++) {
        if (named[k]) continue;
        fprintf(cli_err(), "atf %s: --function: no process of %s has a function named '%s' "
                           "(give a name as atf stats --pid N prints it, or an id 0x...); its "
                           "processes:\n", x->cmd->name, x->path, v->functions.items[k]);
        status = export_list_pids(x);
    }
    free(pre);
    free(named);
    if (status != CLI_CONTINUE) return status;
    x->view->has_start = 1;
    x->view->start_ns = start == UINT64_MAX ? 0 : start;
    return cli_view_window(x->cmd, x->view, x->view->start_ns, &w); /* --from after --to */
}

/* Every process of x that the first pass did not leave out into the output. Returns
 * CLI_EXIT_OK, or CLI_EXIT_DATA when a process's export failed (said); what could not be
 * read or lacked what the view names is in x->damaged and x->refused. */
static int export_session_run(export_job *j, export_session *x) {
    int status = CLI_EXIT_OK;
    size_t i;
    for (i = 0; i < x->count && export_writable(j); i++) {
        cli_trace t;
        int st;
        if (x->skip[i]) continue;
        st = cli_trace_open_view(x->cmd, &t, x->pids[i], x->view);
        if (st != CLI_EXIT_OK) { /* said */
            if (st == CLI_EXIT_USAGE) x->refused = 1;
            else x->damaged = 1;
            continue;
        }
        if (j->kind == EXPORT_PERFETTO && t.clock_negative) { /* the first pass said */
            x->refused = 1;
        } else {
            t.reader.pid = x->shown[i] = export_session_pid(x, i, &t); /* cli_trace_pid's */
            st = export_process(j, &t, x->view->functions.count && !t.fid_count);
            if (st != CLI_EXIT_OK && status == CLI_EXIT_OK) status = st;
        }
        if (cli_trace_warn_damage(&t)) x->damaged = 1;
        cli_trace_close(&t);
    }
    return status;
}

/* ==== export: the command ============================================================ */
/* Above this size a viewer in a browser (ui.perfetto.dev, chrome://tracing) opens a file
 * slowly or not at all: the export says so and how to make it smaller. */
#define EXPORT_VIEWER_BYTES (100ull << 20)

static void export_size_note(export_kind kind, const char *outpath) {
    uint64_t size;
    if (kind != EXPORT_CHROME && kind != EXPORT_PERFETTO) return; /* not for a viewer */
    size = cli_file_size(outpath);
    if (size <= EXPORT_VIEWER_BYTES) return;
    fprintf(cli_err(), "atf export: %s is %llu MiB: a viewer in a browser may open it "
                       "slowly or not at all; --from/--to, --thread or --function export "
                       "a part\n", outpath, (cli_ull)(size >> 20));
}

/* Writes one trace (one != NULL) or every process of x to OUT (-o; stdout when NULL or
 * "-"), folded stacks with their threads' frames by `frame`: CLI_EXIT_OK, or the exit
 * status after saying why. A file left incomplete by an error is removed; what damage
 * leaves out is not an error of the output. */
static int export_write(export_kind kind, profile_frame_mode frame, const char *outpath,
                        cli_trace *one, export_session *x) {
    int to_file = outpath && strcmp(outpath, "-") != 0, status;
    const char *name = to_file ? outpath : "stdout";
    export_job j;
    atf_error e;
    FILE *f = cli_out_file();
    if (to_file && (f = fopen(outpath, "wb")) == NULL) {
        cli_error_errno(&e, outpath, "cannot open for writing", errno);
        return cli_report(&e);
    }
#if defined(_WIN32)
    if (!to_file) _setmode(_fileno(f), _O_BINARY);
#endif
    export_begin(&j, kind, f, name, one == NULL, frame);
    if (!export_writable(&j)) status = CLI_EXIT_DATA; /* export_end says why */
    else if (one) status = export_process(&j, one, 0);
    else status = export_session_run(&j, x);
    if (export_end(&j) != CLI_EXIT_OK) status = CLI_EXIT_DATA;
    if (to_file && fclose(f) != 0 && status == CLI_EXIT_OK) {
        cli_error_errno(&e, outpath, "write", errno);
        status = cli_report(&e);
    }
    if (x && j.processes == 0 && status == CLI_EXIT_OK) /* no process could be read */
        status = x->refused ? CLI_EXIT_USAGE : CLI_EXIT_DATA;
    if (status != CLI_EXIT_OK && to_file && cli_is_file(outpath))
        remove(outpath); /* no half-written file left (never a device such as /dev/null) */
    else if (to_file && cli_is_file(outpath))
        export_size_note(kind, outpath);
    return status;
}

/* Exports every process of the session_* directory x: see above. */
static int export_session_all(const cli_command *cmd, const char *path, export_kind kind,
                              profile_frame_mode frame, const char *outpath, cli_view *view,
                              export_session *x) {
    int status;
    x->cmd = cmd;
    x->path = path;
    x->view = view;
    view->functions_lenient = 1;
    if (view->threads.count) {
        fprintf(cli_err(), "atf %s: --thread: %s holds %llu processes, each with its own "
                           "thread numbers: give --pid N with --thread, N one of\n",
                cmd->name, path, (cli_ull)x->count);
        return export_list_pids(x);
    }
    if ((view->from || view->to || view->functions.count || view->clock) &&
        (status = export_first_pass(x, kind)) != CLI_CONTINUE)
        return status;
    status = export_write(kind, frame, outpath, NULL, x);
    if (status == CLI_EXIT_OK && x->refused) status = CLI_EXIT_USAGE;
    if (status == CLI_EXIT_OK && x->damaged) status = CLI_EXIT_DATA;
    return status;
}

/* The export kind of --format and --table; CLI_CONTINUE, else the usage error's status. */
static int export_kind_of(const cli_command *cmd, const char *format, const char *table,
                          export_kind *kind) {
    if (!format) return cli_usage_error(cmd, "missing --format chrome|perfetto|parquet|folded");
    if (strcmp(format, "parquet") != 0) {
        if (table) return cli_usage_error(cmd, "--table is for --format parquet");
        if (strcmp(format, "chrome") == 0) *kind = EXPORT_CHROME;
        else if (strcmp(format, "perfetto") == 0) *kind = EXPORT_PERFETTO;
        else if (strcmp(format, "folded") == 0) *kind = EXPORT_FOLDED;
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
    const char *format = NULL, *table = NULL, *outpath = NULL, *frame_text = NULL;
    int status, to_file;
    const cli_flag flags[] = {
        { "--format", NULL, CLI_OPT_STR, &format },
        { "--table", NULL, CLI_OPT_STR, &table },
        { "-o", NULL, CLI_OPT_STR, &outpath },
        { "--output", NULL, CLI_OPT_STR, &outpath },
        { "--thread-frame", NULL, CLI_OPT_STR, &frame_text },
    };
    export_kind kind = EXPORT_CHROME;
    profile_frame_mode frame = PROFILE_FRAME_NAME;
    export_session x;
    cli_view view;
    cli_trace src;
    status = cli_parse_view_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], &view,
                                 CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_PID |
                                     CLI_VIEW_FUNCTION | CLI_VIEW_CLOCK);
    if (status != CLI_CONTINUE) return status;
    if ((status = export_kind_of(cmd, format, table, &kind)) != CLI_CONTINUE) return status;
    if (frame_text && kind != EXPORT_FOLDED)
        return cli_usage_error(cmd, "--thread-frame is for --format folded");
    if (frame_text && (status = profile_parse_frame_mode(cmd, frame_text, &frame)) != CLI_CONTINUE)
        return status;
    if (kind == EXPORT_FOLDED && view.clock)
        return cli_usage_error(cmd, "--clock: folded stacks hold durations, no times");
    if (kind == EXPORT_PARQUET_EVENTS && view.functions.count)
        return cli_usage_error(cmd, "--function selects calls: it is for slices, not for "
                                    "--table events");
    if (outpath && !*outpath) return cli_usage_error(cmd, "-o needs a file name");
    to_file = outpath && strcmp(outpath, "-") != 0;
    if (kind != EXPORT_CHROME && kind != EXPORT_FOLDED && !to_file && cli_isatty(cli_out_file()))
        return cli_usage_error(cmd, "binary output to a terminal: give -o OUT "
                                    "(or redirect stdout)");
    if (export_several(argv[1], &view, &x)) {
        status = export_session_all(cmd, argv[1], kind, frame, outpath, &view, &x);
        cli_pid_dirs_free(x.pids, x.count);
        free(x.skip);
        free(x.shown);
        return status;
    }
    if ((status = cli_trace_open_view(cmd, &src, argv[1], &view)) != CLI_EXIT_OK) return status;
    if (kind == EXPORT_PERFETTO && src.clock_negative) {
        cli_trace_close(&src);
        return cli_usage_error(cmd, "--clock %s: the trace starts before that clock's zero, "
                                    "and perfetto times are unsigned", view.clock);
    }
    status = export_write(kind, frame, outpath, &src, NULL);
    if (cli_trace_warn_damage(&src)) status = CLI_EXIT_DATA;
    cli_trace_close(&src);
    return status;
}
