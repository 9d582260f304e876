/* perfetto_decode.h - the Perfetto traces `atf export --format perfetto` writes, decoded
 * field by field against Perfetto's schema (on proto_decode.h), apart from the exporter.
 *
 * pf_decode() reads a whole trace into a pf_state: its tracks (the process descriptors and
 * the threads under them, with names and command lines), the first 512 track events
 * (begin, end, instant: their track, time and name), every debug annotation, and counts.
 * While reading it checks what any viewer relies on: every field in the schema with its
 * wire type, every string valid UTF-8, the incremental state of each packet sequence
 * cleared by its first packet and needed by every later one, descriptors before the
 * events of their sequence, each event on its track's sequence, time order per track,
 * slices balanced, begins named through an iid interned before, never redefined. A
 * deviation fails the running test (harness.h), at a line of this file.
 * Include after harness.h; pf_free releases what a decode allocated. */
#ifndef ATF_TESTS_PERFETTO_DECODE_H
#define ATF_TESTS_PERFETTO_DECODE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_decode.h"   /* j_utf8_len */
#include "proto_decode.h"

#if defined(__GNUC__) || defined(__clang__)
#  define PF_UNUSED __attribute__((unused))
#else
#  define PF_UNUSED
#endif

/* Field numbers and types of the messages the exporter writes, as published in
 * google/perfetto protos/perfetto/trace/: trace.proto, trace_packet.proto,
 * track_event/{track_event,track_descriptor,process_descriptor,thread_descriptor,
 * debug_annotation}.proto, interned_data/interned_data.proto. A field the exporter writes
 * that is not listed here, or with another wire type, fails the test. */
enum { M_TRACE, M_PACKET, M_TRACK_DESC, M_PROCESS, M_THREAD, M_TRACK_EVENT, M_INTERNED,
       M_EVENT_NAME, M_ANNOTATION, M_NONE = PD_NO_MESSAGE };

static const pd_spec pf_specs[] = {
    {M_TRACE, 1, 2, M_PACKET, "Trace.packet"},
    {M_PACKET, 8, 0, M_NONE, "TracePacket.timestamp"},
    {M_PACKET, 10, 0, M_NONE, "TracePacket.trusted_packet_sequence_id"},
    {M_PACKET, 11, 2, M_TRACK_EVENT, "TracePacket.track_event"},
    {M_PACKET, 12, 2, M_INTERNED, "TracePacket.interned_data"},
    {M_PACKET, 13, 0, M_NONE, "TracePacket.sequence_flags"},
    {M_PACKET, 41, 0, M_NONE, "TracePacket.incremental_state_cleared"},
    {M_PACKET, 60, 2, M_TRACK_DESC, "TracePacket.track_descriptor"},
    {M_PACKET, 87, 0, M_NONE, "TracePacket.first_packet_on_sequence"},
    {M_TRACK_DESC, 1, 0, M_NONE, "TrackDescriptor.uuid"},
    {M_TRACK_DESC, 2, 2, M_NONE, "TrackDescriptor.name"},
    {M_TRACK_DESC, 3, 2, M_PROCESS, "TrackDescriptor.process"},
    {M_TRACK_DESC, 4, 2, M_THREAD, "TrackDescriptor.thread"},
    {M_TRACK_DESC, 5, 0, M_NONE, "TrackDescriptor.parent_uuid"},
    {M_PROCESS, 1, 0, M_NONE, "ProcessDescriptor.pid"},
    {M_PROCESS, 2, 2, M_NONE, "ProcessDescriptor.cmdline"},
    {M_PROCESS, 6, 2, M_NONE, "ProcessDescriptor.process_name"},
    {M_THREAD, 1, 0, M_NONE, "ThreadDescriptor.pid"},
    {M_THREAD, 2, 0, M_NONE, "ThreadDescriptor.tid"},
    {M_THREAD, 5, 2, M_NONE, "ThreadDescriptor.thread_name"},
    {M_TRACK_EVENT, 9, 0, M_NONE, "TrackEvent.type"},
    {M_TRACK_EVENT, 10, 0, M_NONE, "TrackEvent.name_iid"},
    {M_TRACK_EVENT, 11, 0, M_NONE, "TrackEvent.track_uuid"},
    {M_TRACK_EVENT, 23, 2, M_NONE, "TrackEvent.name"},
    {M_TRACK_EVENT, 4, 2, M_ANNOTATION, "TrackEvent.debug_annotations"},
    {M_ANNOTATION, 10, 2, M_NONE, "DebugAnnotation.name"},
    {M_ANNOTATION, 2, 0, M_NONE, "DebugAnnotation.bool_value"},
    {M_ANNOTATION, 3, 0, M_NONE, "DebugAnnotation.uint_value"},
    {M_ANNOTATION, 6, 2, M_NONE, "DebugAnnotation.string_value"},
    {M_ANNOTATION, 7, 0, M_NONE, "DebugAnnotation.pointer_value"},
    {M_INTERNED, 2, 2, M_EVENT_NAME, "InternedData.event_names"},
    {M_EVENT_NAME, 1, 0, M_NONE, "EventName.iid"},
    {M_EVENT_NAME, 2, 2, M_NONE, "EventName.name"},
};

static const pd_schema pf_schema = { pf_specs, sizeof pf_specs / sizeof pf_specs[0] };

/* The next field of message `msg`, checked against Perfetto's schema; 0 at the end, and
 * a failure of the test for a field the schema does not have or of another wire type. */
static int pf_next(pd_reader *r, int msg, pd_field *out) {
    int rc = pd_next(r, &pf_schema, msg, out);
    if (rc == PD_UNKNOWN) {
        printf("  unexpected field %u (wire type %u) in message kind %d\n", out->number,
               out->wire, msg);
        harness__failures_in_test++;
    } else if (rc == PD_WIRE) {
        printf("  %s: wire type %u, schema says %u\n", out->spec->what, out->wire,
               out->spec->wire);
        harness__failures_in_test++;
    }
    return rc == PD_FIELD;
}

static int pf_utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t k = j_utf8_len(s + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

typedef struct pf_track {
    uint64_t uuid, parent, pid, tid;
    size_t seq;                  /* the sequence of its descriptor (pf_state.sequence_ids) */
    char name[128];
    char cmdline[256];           /* a process's: its words joined by spaces */
    int is_process;
    uint64_t open, begins, ends, instants, last_ts;
} pf_track;

/* One track event, as decoded: type 1 begin, 2 end, 3 instant. */
typedef struct pf_logged {
    uint64_t uuid, ts, type;
    char name[64];               /* begin: the interned name; instant: TrackEvent.name */
} pf_logged;

/* One debug annotation of a track event, as decoded. */
typedef struct pf_annot {
    uint64_t ts, type;           /* of its track event */
    char name[24];
    uint32_t field;              /* its value's field: 2 bool, 3 uint, 6 string, 7 pointer */
    uint64_t v;                  /* 2, 3, 7: the value */
    char str[40];                /* 6: the text */
} pf_annot;

enum { PF_SEQ_MAX = 8 };         /* packet sequences a decoded trace may have */

typedef struct pf_state {
    pf_track tracks[16];
    size_t track_count;
    pf_logged log[512];          /* the first 512 track events */
    size_t log_count;
    char *names[PF_SEQ_MAX][64]; /* interned event names by sequence and iid */
    uint64_t packets, events;
    pf_annot *annots;            /* every debug annotation, in order */
    size_t annot_count, annot_cap;
    uint64_t sequence_ids[PF_SEQ_MAX]; /* trusted_packet_sequence_id, in order of first use */
    size_t sequences;
    int saw_event;
} pf_state;

static PF_UNUSED pf_track *pf_track_of(pf_state *s, uint64_t uuid) {
    size_t i;
    for (i = 0; i < s->track_count; i++)
        if (s->tracks[i].uuid == uuid) return &s->tracks[i];
    return NULL;
}

/* A TrackDescriptor on sequence seq. With one sequence all descriptors come before the
 * first event; with several (one per process), those of a sequence before its events. */
static void pf_descriptor(pf_state *s, size_t seq, const uint8_t *data, size_t len) {
    pd_reader r, sub;
    pd_field f, g;
    pf_track t;
    memset(&t, 0, sizeof t);
    t.seq = seq;
    r = pd_open(data, len);
    CHECK(!s->saw_event); /* descriptors come before the events that use them */
    while (pf_next(&r, M_TRACK_DESC, &f)) {
        if (f.spec->number == 1) t.uuid = f.v;
        else if (f.spec->number == 5) t.parent = f.v;
        else if (f.spec->number == 3 || f.spec->number == 4) {
            t.is_process = f.spec->number == 3;
            sub = pd_open(f.data, f.len);
            while (pf_next(&sub, f.spec->sub, &g)) {
                if (g.spec->number == 1) t.pid = g.v;
                else if (g.spec->wire == PD_VARINT) t.tid = g.v;  /* ThreadDescriptor.tid */
                else if (t.is_process && g.spec->number == 2) {  /* a word of the cmdline */
                    size_t at = strlen(t.cmdline);
                    CHECK(pf_utf8_valid(g.data, g.len));
                    snprintf(t.cmdline + at, sizeof t.cmdline - at, "%s%.*s", at ? " " : "",
                             (int)g.len, (const char *)g.data);
                } else {
                    CHECK(pf_utf8_valid(g.data, g.len));
                    snprintf(t.name, sizeof t.name, "%.*s", (int)g.len, (const char *)g.data);
                }
            }
            CHECK(!sub.bad);
        }
    }
    CHECK(!r.bad);
    CHECK(t.uuid != 0);
    CHECK(pf_track_of(s, t.uuid) == NULL);
    if (s->track_count < 16) s->tracks[s->track_count++] = t;
}

static void pf_interned(pf_state *s, size_t seq, const uint8_t *data, size_t len) {
    pd_reader r, sub;
    pd_field f, g;
    r = pd_open(data, len);
    while (pf_next(&r, M_INTERNED, &f)) {
        uint64_t iid = 0;
        char *name = NULL;
        sub = pd_open(f.data, f.len);
        while (pf_next(&sub, M_EVENT_NAME, &g)) {
            if (g.spec->number == 1) iid = g.v;
            else {
                CHECK(pf_utf8_valid(g.data, g.len));
                free(name);
                name = (char *)malloc(g.len + 1);
                if (name) {
                    memcpy(name, g.data, g.len);
                    name[g.len] = '\0';
                }
            }
        }
        CHECK(!sub.bad);
        CHECK(iid > 0 && iid < 64);
        CHECK(name != NULL);
        if (iid > 0 && iid < 64 && name) {
            CHECK(s->names[seq][iid] == NULL); /* an iid is never redefined */
            free(s->names[seq][iid]);
            s->names[seq][iid] = name;
            name = NULL;
        }
        free(name);
    }
    CHECK(!r.bad);
}

/* A DebugAnnotation of a track event at ts: exactly a name and one value. The event's
 * type is filled in by pf_track_event once it has read the whole event. */
static void pf_read_annotation(pf_state *s, uint64_t ts, const uint8_t *data, size_t len) {
    pd_reader r = pd_open(data, len);
    pd_field f;
    pf_annot a;
    int names = 0, values = 0;
    memset(&a, 0, sizeof a);
    a.ts = ts;
    while (pf_next(&r, M_ANNOTATION, &f)) {
        if (f.spec->number == 10) {
            names++;
            CHECK(f.len < sizeof a.name && pf_utf8_valid(f.data, f.len));
            snprintf(a.name, sizeof a.name, "%.*s", (int)f.len, (const char *)f.data);
            continue;
        }
        values++;
        a.field = f.spec->number;
        if (f.spec->number == 6) {
            CHECK(f.len < sizeof a.str && pf_utf8_valid(f.data, f.len));
            snprintf(a.str, sizeof a.str, "%.*s", (int)f.len, (const char *)f.data);
        } else {
            a.v = f.v;
        }
    }
    CHECK(!r.bad);
    CHECK_EQ(1, names);
    CHECK_EQ(1, values);
    if (s->annot_count == s->annot_cap) {
        size_t cap = s->annot_cap ? s->annot_cap * 2 : 64;
        pf_annot *m = (pf_annot *)realloc(s->annots, cap * sizeof *m);
        CHECK(m != NULL);
        if (!m) return;
        s->annots = m;
        s->annot_cap = cap;
    }
    s->annots[s->annot_count++] = a;
}

static void pf_track_event(pf_state *s, size_t seq, uint64_t ts, const uint8_t *data,
                           size_t len) {
    pd_reader r;
    pd_field f;
    uint64_t type = 0, uuid = 0, iid = 0;
    const uint8_t *name_data = NULL;
    size_t name_len = 0;
    pf_logged *lg = s->log_count < 512 ? &s->log[s->log_count++] : NULL;
    pf_track *t;
    size_t first_annot = s->annot_count;
    r = pd_open(data, len);
    s->saw_event = 1;
    s->events++;
    while (pf_next(&r, M_TRACK_EVENT, &f)) {
        if (f.spec->number == 4) pf_read_annotation(s, ts, f.data, f.len);
        else if (f.spec->number == 9) type = f.v;
        else if (f.spec->number == 10) iid = f.v;
        else if (f.spec->number == 11) uuid = f.v;
        else if (f.spec->number == 23) {
            name_data = f.data;
            name_len = f.len;
        }
    }
    CHECK(!r.bad);
    for (; first_annot < s->annot_count; first_annot++) s->annots[first_annot].type = type;
    if (lg) {
        memset(lg, 0, sizeof *lg);
        lg->uuid = uuid;
        lg->ts = ts;
        lg->type = type;
        if (type == 1 && iid < 64 && s->names[seq][iid])
            snprintf(lg->name, sizeof lg->name, "%s", s->names[seq][iid]);
        if (name_data)
            snprintf(lg->name, sizeof lg->name, "%.*s", (int)name_len, (const char *)name_data);
    }
    t = pf_track_of(s, uuid);
    CHECK(t != NULL && !t->is_process);
    if (!t) return;
    CHECK_EQ(t->seq, seq); /* an event is on the sequence of its track's descriptor */
    CHECK(ts >= t->last_ts);
    t->last_ts = ts;
    if (type == 3) { /* TYPE_INSTANT (a gap): named in place */
        CHECK_EQ(0, iid);
        CHECK(name_data != NULL && pf_utf8_valid(name_data, name_len));
        t->instants++;
    } else if (type == 1) { /* TYPE_SLICE_BEGIN: named through an interned iid */
        const char *name = iid < 64 ? s->names[seq][iid] : NULL;
        CHECK(iid != 0);
        CHECK(name != NULL);
        t->open++;
        t->begins++;
    } else if (type == 2) { /* TYPE_SLICE_END */
        CHECK_EQ(0, iid);
        CHECK(t->open > 0);
        if (t->open) t->open--;
        t->ends++;
    } else {
        harness__fail(__FILE__, __LINE__, "unexpected TrackEvent.type");
    }
}

/* Decodes a whole Perfetto trace file of at most max_seqs packet sequences into s,
 * checking every field: the first packet of each sequence clears its incremental state,
 * every later one needs it. */
static PF_UNUSED void pf_decode_seqs(pf_state *s, const uint8_t *data, size_t len, size_t max_seqs) {
    pd_reader trace, pk;
    pd_field f, g;
    memset(s, 0, sizeof *s);
    trace = pd_open(data, len);
    while (pf_next(&trace, M_TRACE, &f)) {
        uint64_t ts = 0, seq = 0, flags = 0, cleared = 0, first = 0;
        const uint8_t *te = NULL, *idata = NULL, *desc = NULL;
        size_t te_len = 0, id_len = 0, desc_len = 0, k;
        int has_ts = 0;
        pk = pd_open(f.data, f.len);
        while (pf_next(&pk, M_PACKET, &g)) {
            switch (g.spec->number) {
            case 8: ts = g.v; has_ts = 1; break;
            case 10: seq = g.v; break;
            case 13: flags = g.v; break;
            case 41: cleared = g.v; break;
            case 87: first = g.v; break;
            case 60: desc = g.data; desc_len = g.len; break;
            case 11: te = g.data; te_len = g.len; break;
            case 12: idata = g.data; id_len = g.len; break;
            default: break;
            }
        }
        CHECK(!pk.bad);
        CHECK(seq != 0);
        for (k = 0; k < s->sequences && s->sequence_ids[k] != seq; k++) continue;
        if (k == s->sequences) { /* the first packet of its sequence */
            CHECK(s->sequences < max_seqs);
            CHECK_EQ(1, flags);           /* SEQ_INCREMENTAL_STATE_CLEARED */
            CHECK_EQ(1, cleared);
            CHECK_EQ(1, first);
            if (s->sequences < PF_SEQ_MAX) s->sequence_ids[s->sequences++] = seq;
            else k = PF_SEQ_MAX - 1; /* failed above */
            s->saw_event = 0; /* a new sequence starts with its descriptors */
        } else {
            CHECK_EQ(2, flags);           /* SEQ_NEEDS_INCREMENTAL_STATE */
            CHECK_EQ(0, cleared);
            CHECK_EQ(0, first);
        }
        if (desc) pf_descriptor(s, k, desc, desc_len);
        if (idata) pf_interned(s, k, idata, id_len); /* valid for this packet on */
        if (te) {
            CHECK(has_ts);
            pf_track_event(s, k, ts, te, te_len);
        }
        s->packets++;
    }
    CHECK(!trace.bad);
    CHECK(trace.p == trace.end);
}

/* A trace of one process: one packet sequence. */
static PF_UNUSED void pf_decode(pf_state *s, const uint8_t *data, size_t len) {
    pf_decode_seqs(s, data, len, 1);
}

static PF_UNUSED void pf_free(pf_state *s) {
    size_t i, k;
    for (k = 0; k < PF_SEQ_MAX; k++)
        for (i = 0; i < 64; i++) free(s->names[k][i]);
    free(s->annots);
}

/* The slice begins among the logged events named `name` (names of up to 63 bytes: the
 * log keeps no more of a name). */
static PF_UNUSED size_t pf_begins_named(const pf_state *s, const char *name) {
    size_t i, n = 0;
    for (i = 0; i < s->log_count; i++)
        if (s->log[i].type == 1 && strcmp(s->log[i].name, name) == 0) n++;
    return n;
}

#endif /* ATF_TESTS_PERFETTO_DECODE_H */
