/* proto_decode.h - a protobuf wire-format decoder for tests that check binary traces.
 *
 * A message is read field by field against a schema the test supplies: a table of
 * (message kind, field number, wire type, message kind of a length-delimited field) rows.
 * pd_next() yields the next field of a message with its varint value or its bytes, and
 * stops (PD_END at the end; PD_UNKNOWN, PD_WIRE or PD_BAD otherwise, with `field`
 * naming what was found) on a field the schema does not list, a wire type other than the
 * schema's, or bytes that are not protobuf (a varint past 10 bytes or past the end, a
 * length past the end). Only wire types 0 (varint) and 2 (length-delimited) exist here:
 * the exporters write no others. Self-contained (C library only). */
#ifndef ATF_TESTS_PROTO_DECODE_H
#define ATF_TESTS_PROTO_DECODE_H

#include <stddef.h>
#include <stdint.h>

enum { PD_VARINT = 0, PD_LEN = 2 };                          /* wire types */
enum { PD_FIELD = 1, PD_END = 0, PD_UNKNOWN = -1, PD_WIRE = -2, PD_BAD = -3 };
enum { PD_NO_MESSAGE = -1 };                                 /* pd_spec.sub of a scalar */

typedef struct pd_spec {
    int msg;                     /* the message kind this field belongs to */
    uint32_t number;
    uint32_t wire;               /* PD_VARINT or PD_LEN */
    int sub;                     /* message kind of a length-delimited field, or PD_NO_MESSAGE */
    const char *what;            /* "TracePacket.timestamp", for messages */
} pd_spec;

typedef struct pd_schema {
    const pd_spec *specs;
    size_t count;
} pd_schema;

/* A message being read: its bytes, and whether they went wrong. */
typedef struct pd_reader {
    const uint8_t *p, *end;
    int bad;
} pd_reader;

typedef struct pd_field {
    const pd_spec *spec;         /* the schema's row (NULL for PD_UNKNOWN) */
    uint32_t number, wire;       /* as found */
    uint64_t v;                  /* PD_VARINT: the value */
    const uint8_t *data;         /* PD_LEN: the bytes */
    size_t len;
} pd_field;

static pd_reader pd_open(const uint8_t *data, size_t len) {
    pd_reader r;
    r.p = data;
    r.end = data + len;
    r.bad = 0;
    return r;
}

static uint64_t pd_varint(pd_reader *r) {
    uint64_t v = 0;
    int shift = 0;
    while (r->p < r->end && shift < 64) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) return v;
        shift += 7;
    }
    r->bad = 1;
    return 0;
}

static const pd_spec *pd_lookup(const pd_schema *s, int msg, uint32_t number) {
    size_t i;
    for (i = 0; i < s->count; i++)
        if (s->specs[i].msg == msg && s->specs[i].number == number) return &s->specs[i];
    return NULL;
}

/* The next field of a message of kind `msg`: PD_FIELD, or PD_END / an error (above). */
static int pd_next(pd_reader *r, const pd_schema *s, int msg, pd_field *out) {
    uint64_t key;
    if (r->bad) return PD_BAD;
    if (r->p >= r->end) return PD_END;
    key = pd_varint(r);
    if (r->bad) return PD_BAD;
    out->number = (uint32_t)(key >> 3);
    out->wire = (uint32_t)(key & 7);
    out->spec = pd_lookup(s, msg, out->number);
    if (!out->spec) return r->bad = 1, PD_UNKNOWN;
    if (out->spec->wire != out->wire) return r->bad = 1, PD_WIRE;
    if (out->wire == PD_VARINT) {
        out->v = pd_varint(r);
    } else {
        uint64_t len = pd_varint(r);
        if (r->bad || len > (uint64_t)(r->end - r->p)) return r->bad = 1, PD_BAD;
        out->data = r->p;
        out->len = (size_t)len;
        r->p += len;
    }
    return r->bad ? PD_BAD : PD_FIELD;
}

#endif /* ATF_TESTS_PROTO_DECODE_H */
