/* test_packed.c - the packed index lane (version 3): atf_packed_encode/decode, the
 * conversions atf_index_pack/atf_index_unpack, readers over packed files, and what a torn
 * or damaged packed file reads as.
 *
 * Round trips: every layout-1 index file of tests/golden/, and sessions recorded twice
 * with the same explicit timestamps, once in layout 1 and once packed, must convert into
 * each other byte for byte and read as the same events. The codec must give back every
 * record exactly, whatever its fields do, and refuse malformed payloads. A packed file cut
 * anywhere or with a flipped byte must read as exactly the whole, intact blocks before the
 * damage. Readers decode blocks as events are read, into a cache of a few: reads that
 * cycle through more blocks than it holds, seeks, and merges over a packed session
 * recorded by several threads must give what the layout-1 twin gives, and a block that
 * passes its CRC but does not decode must read as zero records and fail verification.
 * Expected values come from the layout-1 twin of each file, and the block boundaries
 * from the table at the end of the packed file (docs/FORMAT.md). */
#include "atf.h"
#include "harness.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#if !defined(ATF_NO_THREADS)
#include <pthread.h>
#endif
#if !defined(_WIN32)
#include <sys/wait.h>
#endif
#include "posix_compat.h"
#include "scratch_dir.h"

#define GOLDEN_DIR "tests/golden"

static char scratch[512];

/* ---- files ------------------------------------------------------------------------------ */

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob;

static blob blob_read(const char *path) {
    blob b = { NULL, 0 };
    b.data = (uint8_t *)read_file(path, &b.size);
    if (!b.data) b.size = 0;
    return b;
}

static int blob_same(const blob *a, const blob *b) {
    return a->data && b->data && a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

static void scratch_path(char *buf, size_t cap, const char *leaf) {
    snprintf(buf, cap, "%s/%s", scratch, leaf);
}

/* Whether the file at path holds exactly b (and says where it first differs). */
static int file_is(const char *path, const blob *b) {
    blob now = blob_read(path);
    int same = blob_same(&now, b);
    if (!same && now.data) {
        size_t i = 0;
        while (i < now.size && i < b->size && now.data[i] == b->data[i]) i++;
        printf("  %s: %zu bytes, expected %zu; first difference at byte %zu\n", path, now.size,
               b->size, i);
    }
    free(now.data);
    return same;
}

/* The index.atf of a packed twin: blocks, where they end and what they hold. */
typedef struct packed_layout {
    uint64_t blocks;
    uint64_t start[8], end[8];   /* block k spans [start, end): header and payload */
    uint64_t events[8];          /* events in block k */
    uint64_t table, footer;      /* where the table and the footer begin */
} packed_layout;

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }
static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Reads the layout from the bytes (header footer_offset, then the table before it). */
static packed_layout layout_of(const blob *p, uint64_t events) {
    packed_layout l;
    uint64_t k;
    memset(&l, 0, sizeof l);
    l.blocks = (events + ATF_PACKED_BLOCK_EVENTS - 1) / ATF_PACKED_BLOCK_EVENTS;
    l.footer = le64(p->data + 40);
    l.table = l.footer - l.blocks * 8;
    CHECK(l.blocks <= 8 && l.footer + ATF_FOOTER_SIZE == p->size);
    for (k = 0; k < l.blocks && k < 8; k++) {
        l.start[k] = le64(p->data + l.table + k * 8);
        l.events[k] = le32(p->data + l.start[k]);
        l.end[k] = l.start[k] + ATF_PACKED_BLOCK_HEADER_SIZE + le32(p->data + l.start[k] + 4);
    }
    return l;
}

/* ---- readers ---------------------------------------------------------------------------- */

/* Opens `size` bytes of `data` from an exact-size heap copy (a sanitizer sees over-reads). */
static atf_result open_copy(atf_index_reader *r, const uint8_t *data, size_t size, uint8_t **copy) {
    *copy = (uint8_t *)malloc(size ? size : 1);
    if (!*copy) return ATF_E_NOMEM;
    memcpy(*copy, data, size);
    return atf_index_reader_open_memory(r, *copy, size, "packed", NULL);
}

/* The first `count` events of r equal events 0..count-1 of the layout-1 file `l1`, both
 * through raw and through get. */
static void check_events_equal(const atf_index_reader *r, const blob *l1, uint64_t count) {
    uint64_t i;
    for (i = 0; i < count; i++) {
        const uint8_t *raw = atf_index_reader_raw(r, i);
        const uint8_t *want = l1->data + ATF_HEADER_SIZE + i * ATF_INDEX_EVENT_SIZE;
        atf_index_event got, exp;
        CHECK(raw != NULL);
        if (!raw || memcmp(raw, want, ATF_INDEX_EVENT_SIZE) != 0) {
            printf("  event %" PRIu64 " differs\n", i);
            CHECK(0);
            return;
        }
        CHECK_RESULT(ATF_OK, atf_index_reader_get(r, i, &got));
        atf_index_event_decode(ATF_LAYOUT_1, want, &exp);
        CHECK_INDEX_EVENT(exp, got);
    }
}

/* ---- recorded twins --------------------------------------------------------------------- */

/* The same events recorded in a layout-1 and in a packed session: their index.atf. */
typedef struct twins {
    blob l1, packed;
    char packed_dir[1024];       /* the packed session's thread_0 */
    uint64_t events;
} twins;

/* Event i of a recording: nested calls and returns through the session's depth, now and
 * then an event of another kind, a depth jump, a timestamp that goes back, a function at
 * either end of the id space, and a detail record (a link) on a run of events. */
static void record_event(atf_producer *w, uint64_t i) {
    uint64_t fid = i % 11 == 0 ? UINT64_MAX : i % 13 == 0 ? 0 : 0x100000000ull | (i % 37);
    uint64_t ts = 1000000 + i * 100 - (i % 17 == 0 ? 250 : 0);
    uint8_t payload[24];
    memset(payload, (int)(i & 0x7F), sizeof payload);
    if (i % 29 == 0) {
        CHECK_RESULT(ATF_OK, atf_producer_push(w, 9u + (uint32_t)(i % 3), fid, ts, (uint32_t)(i * 7)));
    } else if (i % 8 < 3) {
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, i % 2 ? ATF_EVENT_RETURN : ATF_EVENT_CALL, fid,
                                                       ts, ATF_DETAIL_FUNCTION_CALL, payload, sizeof payload));
    } else if (i % 5 == 0) {
        CHECK_RESULT(ATF_OK, atf_producer_exception(w, fid, ts));
    } else if (i % 2) {
        CHECK_RESULT(ATF_OK, atf_producer_return(w, fid, ts));
    } else {
        CHECK_RESULT(ATF_OK, atf_producer_call(w, fid, ts));
    }
}

/* Records `events` events in a session of `layout`; returns its thread_0 directory. */
static int record(int layout, uint64_t events, char *thread_dir, size_t cap) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    static unsigned sessions; /* a name of its own for every session of the run */
    char name[64];
    uint64_t i;
    memset(&c, 0, sizeof c);
    c.layout = (uint32_t)layout;
    c.detail_mode = ATF_DETAIL_ALWAYS;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.fsync_mode = ATF_FSYNC_NONE;
    snprintf(name, sizeof name, "rec_%u_%d_%" PRIu64, sessions++, layout, events);
    c.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, scratch, &c));
    if (!s) return 0;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "rec", &w));
    for (i = 0; i < events && w; i++) {
        record_event(w, i);
        if (i % 256 == 255) CHECK_RESULT(ATF_OK, atf_session_pump(s));
    }
    atf_session_detach(s);
    snprintf(thread_dir, cap, "%s/thread_0", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    return w != NULL;
}

static int twins_record(twins *t, uint64_t events) {
    char dir[1024], path[1100];
    memset(t, 0, sizeof t[0]);
    t->events = events;
    if (!record(ATF_LAYOUT_1, events, dir, sizeof dir)) return 0;
    snprintf(path, sizeof path, "%s/index.atf", dir);
    t->l1 = blob_read(path);
    if (!record(ATF_LAYOUT_PACKED, events, t->packed_dir, sizeof t->packed_dir)) return 0;
    snprintf(path, sizeof path, "%s/index.atf", t->packed_dir);
    t->packed = blob_read(path);
    CHECK(t->l1.size == ATF_HEADER_SIZE + events * ATF_INDEX_EVENT_SIZE + ATF_FOOTER_SIZE);
    CHECK(t->packed.size >= ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE + ATF_FOOTER_SIZE);
    return t->l1.size && t->packed.size > ATF_HEADER_SIZE && !harness__failures_in_test;
}

static void twins_free(twins *t) {
    free(t->l1.data);
    free(t->packed.data);
}

/* ---- round trips ------------------------------------------------------------------------ */

/* `l1` (a finalized layout-1 index file) packs, the packed file unpacks to it byte for
 * byte, both read as the same events, and in-place conversions do the same. When
 * `packed_want` is given, the packed file must be exactly it. */
static void check_round_trip(const char *what, const blob *l1, const blob *packed_want) {
    char in[600], packed[600], back[600];
    atf_index_reader a, b;
    atf_reader_options opt;
    atf_error err;
    blob p;
    uint64_t events = l1->size >= ATF_HEADER_SIZE + ATF_FOOTER_SIZE
                          ? (l1->size - ATF_HEADER_SIZE - ATF_FOOTER_SIZE) / ATF_INDEX_EVENT_SIZE : 0;
    scratch_path(in, sizeof in, "rt_in.atf");
    scratch_path(packed, sizeof packed, "rt_packed.atf");
    scratch_path(back, sizeof back, "rt_back.atf");
    CHECK_EQ(0, write_file(in, l1->data, l1->size));
    memset(&err, 0, sizeof err);
    CHECK_RESULT(ATF_OK, atf_index_pack(in, packed, &err));
    CHECK_RESULT(ATF_OK, atf_index_unpack(packed, back, &err));
    if (!file_is(back, l1)) printf("  %s: unpack(pack(file)) differs\n", what);
    CHECK(file_is(back, l1));
    p = blob_read(packed);
    CHECK(p.size > ATF_HEADER_SIZE && p.data[5] == ATF_LAYOUT_PACKED);
    if (packed_want) CHECK(file_is(packed, packed_want));

    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    CHECK_RESULT(ATF_OK, atf_index_reader_open(&a, in, &opt));
    CHECK_RESULT(ATF_OK, atf_index_reader_open(&b, packed, &opt));
    CHECK(!a.packed && b.packed);
    CHECK_EQ(ATF_LAYOUT_1, b.layout);
    CHECK_EQ(ATF_COUNT_FINALIZED, b.counted);
    CHECK_EQ(events ? ATF_CRC_OK : ATF_CRC_NOT_COMPUTED, b.crc_state); /* CRC of nothing: 0 */
    CHECK_EQ(a.crc_state, b.crc_state);
    CHECK_EQ(events, a.event_count);
    CHECK_EQ(events, b.event_count);
    CHECK_EQ(0, b.torn_bytes);
    CHECK_EQ(a.header.thread_id, b.header.thread_id);
    CHECK_EQ(a.header.time_start_ns, b.header.time_start_ns);
    CHECK_EQ(a.header.time_end_ns, b.header.time_end_ns);
    CHECK_EQ(a.header.event_count, b.header.event_count);
    CHECK_EQ(a.header.flags, b.header.flags);
    CHECK_EQ(a.footer.checksum, b.footer.checksum);
    check_events_equal(&b, l1, events < b.event_count ? events : b.event_count);
    atf_index_reader_close(&a);
    atf_index_reader_close(&b);

    /* out may be in: pack in place, then unpack in place, gives the file back */
    CHECK_RESULT(ATF_OK, atf_index_pack(in, in, &err));
    CHECK(file_is(in, &p));
    CHECK_RESULT(ATF_OK, atf_index_unpack(in, in, &err));
    CHECK(file_is(in, l1));
    CHECK_RESULT(ATF_OK, err.code);
    free(p.data);
}

/* Every index.atf of tests/golden/<dir>/ whose version byte says layout 1. */
static void test_golden_round_trip(void) {
    DIR *d = opendir(GOLDEN_DIR);
    struct dirent *e;
    size_t layout1 = 0;
    while (d && (e = readdir(d)) != NULL) {
        char path[600];
        blob f;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/index.atf", GOLDEN_DIR, e->d_name);
        f = blob_read(path);
        if (f.size > ATF_HEADER_SIZE && f.data[5] == ATF_LAYOUT_1) {
            check_round_trip(path, &f, NULL);
            layout1++;
        }
        free(f.data);
    }
    if (d) closedir(d);
    CHECK(layout1 >= 1); /* run from the repository root: the golden set is there */
}

/* Sessions recorded in both layouts: the writer's packed file is what atf_index_pack
 * makes of the layout-1 file, and it unpacks to that file (0 events, one event, one full
 * block, two full blocks and a short one, three full blocks). */
static void test_session_twins(void) {
    static const uint64_t counts[] = { 0, 1, ATF_PACKED_BLOCK_EVENTS, 2 * ATF_PACKED_BLOCK_EVENTS + 452,
                                       3 * ATF_PACKED_BLOCK_EVENTS };
    size_t i;
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        twins t;
        if (twins_record(&t, counts[i])) {
            char what[64], in[600], out[600];
            atf_error err;
            snprintf(what, sizeof what, "session of %" PRIu64 " events", counts[i]);
            check_round_trip(what, &t.l1, &t.packed);
            /* and the writer's packed file itself unpacks to the layout-1 twin */
            scratch_path(in, sizeof in, "twin_packed.atf");
            scratch_path(out, sizeof out, "twin_unpacked.atf");
            CHECK_EQ(0, write_file(in, t.packed.data, t.packed.size));
            memset(&err, 0, sizeof err);
            CHECK_RESULT(ATF_OK, atf_index_unpack(in, out, &err));
            CHECK(file_is(out, &t.l1));
        }
        twins_free(&t);
    }
}

/* The thread reader over the packed session: same events, detail links intact. */
static void test_thread_reader_packed(void) {
    twins t;
    atf_thread_reader tr;
    uint64_t i, linked = 0;
    if (!twins_record(&t, 2 * ATF_PACKED_BLOCK_EVENTS + 452)) {
        twins_free(&t);
        return;
    }
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, t.packed_dir, NULL));
    CHECK(tr.index.packed && tr.has_detail);
    CHECK_EQ(t.events, tr.index.event_count);
    check_events_equal(&tr.index, &t.l1, tr.index.event_count);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    for (i = 0; i < tr.index.event_count; i++) {
        atf_detail_event d;
        atf_result rc = atf_thread_reader_detail_of(&tr, i, &d);
        CHECK(rc == ATF_OK || rc == ATF_E_NO_DETAIL);
        linked += rc == ATF_OK;
    }
    CHECK_EQ(tr.detail.event_count, linked);
    CHECK(linked > 0);
    atf_thread_reader_close(&tr);
    twins_free(&t);
}

/* ---- refusals --------------------------------------------------------------------------- */

/* A conversion refused with `want`: err says so, and neither out nor its .tmp exists. */
static void check_refused(atf_result want, int pack, const char *in) {
    char out[600], tmp[620];
    atf_error err;
    memset(&err, 0, sizeof err);
    scratch_path(out, sizeof out, "refused.atf");
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    CHECK_RESULT(want, pack ? atf_index_pack(in, out, &err) : atf_index_unpack(in, out, &err));
    CHECK_RESULT(want, err.code);
    CHECK(!path_exists(out) && !path_exists(tmp));
}

/* The header a crash leaves: no counts, no footer offset, no times. */
static void make_placeholder(blob *b) {
    atf_index_header h;
    atf_index_header_decode(b->data, &h);
    h.event_count = 0;
    h.footer_offset = 0;
    h.time_start_ns = h.time_end_ns = 0;
    atf_index_header_encode(&h, b->data);
}

static void test_convert_refusals(void) {
    twins t;
    char l1[600], packed[600], l2[300], path[600];
    if (!twins_record(&t, 100)) {
        twins_free(&t);
        return;
    }
    scratch_path(l1, sizeof l1, "refuse_l1.atf");
    scratch_path(packed, sizeof packed, "refuse_packed.atf");
    snprintf(l2, sizeof l2, "%s/layout2/index.atf", GOLDEN_DIR);
    CHECK_EQ(0, write_file(l1, t.l1.data, t.l1.size));
    CHECK_EQ(0, write_file(packed, t.packed.data, t.packed.size));
    check_refused(ATF_E_VERSION, 1, packed); /* packed already */
    check_refused(ATF_E_VERSION, 0, l1);     /* not packed */
    CHECK(path_exists(l2));
    check_refused(ATF_E_VERSION, 1, l2);     /* layout 2 has no packed form */
    check_refused(ATF_E_VERSION, 0, l2);

    /* unfinalized files, both ways: recovery must come first */
    make_placeholder(&t.l1);
    make_placeholder(&t.packed);
    scratch_path(path, sizeof path, "refuse_l1_open.atf");
    CHECK_EQ(0, write_file(path, t.l1.data, t.l1.size));
    check_refused(ATF_E_ARG, 1, path);
    scratch_path(path, sizeof path, "refuse_packed_open.atf");
    CHECK_EQ(0, write_file(path, t.packed.data, t.packed.size));
    check_refused(ATF_E_ARG, 0, path);
    twins_free(&t);
}

/* err is optional (atf.h: "`err` (optional) says what and where"): a refusal without one
 * must return its code. Last in the table: a library that dereferences the NULL ends the
 * run here, after every other test has reported. */
static void test_convert_without_err(void) {
    twins t;
    char packed[600];
    if (!twins_record(&t, 10)) {
        twins_free(&t);
        return;
    }
    scratch_path(packed, sizeof packed, "noerr_packed.atf");
    CHECK_EQ(0, write_file(packed, t.packed.data, t.packed.size));
    CHECK_RESULT(ATF_E_VERSION, atf_index_pack(packed, packed, NULL));
    CHECK_RESULT(ATF_E_ARG, atf_index_unpack(NULL, packed, NULL));
    twins_free(&t);
}

/* ---- torn and damaged packed files ------------------------------------------------------ */

/* Reads the first `cut` bytes of the packed twin: exactly the whole blocks in them. */
static void check_cut(const twins *t, const blob *packed, const packed_layout *l, uint64_t cut) {
    atf_index_reader r;
    uint8_t *copy;
    uint64_t k, events = 0, whole_end = ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE;
    atf_result rc = open_copy(&r, packed->data, (size_t)cut, &copy);
    if (cut < whole_end) whole_end = ATF_HEADER_SIZE; /* the lane header itself is torn */
    for (k = 0; k < l->blocks && l->end[k] <= cut; k++) {
        events += l->events[k];
        whole_end = l->end[k];
    }
    CHECK_RESULT(ATF_OK, rc);
    if (rc == ATF_OK) {
        if (r.event_count != events || r.torn_bytes != cut - whole_end)
            printf("  cut at %" PRIu64 " of %zu bytes\n", cut, packed->size);
        CHECK(r.counted == ATF_COUNT_FROM_SIZE || r.counted == ATF_COUNT_FOOTER_MISMATCH);
        CHECK(r.packed);
        CHECK_EQ(events, r.event_count);
        CHECK_EQ(cut - whole_end, r.torn_bytes);
        check_events_equal(&r, &t->l1, events < r.event_count ? events : r.event_count);
        atf_index_reader_close(&r);
    }
    free(copy);
}

/* Cut inside the lane header, inside each block's header and payload, at each block's
 * end, inside the table and inside the footer; with the finalized header (a short copy)
 * and with the placeholder (a crash). */
static void test_torn(void) {
    twins t;
    packed_layout l;
    blob crashed;
    uint64_t cuts[64], k;
    size_t n = 0, i, pass;
    if (!twins_record(&t, 2 * ATF_PACKED_BLOCK_EVENTS + 452)) {
        twins_free(&t);
        return;
    }
    l = layout_of(&t.packed, t.events);
    CHECK_EQ(3, l.blocks);
    cuts[n++] = ATF_HEADER_SIZE;
    cuts[n++] = ATF_HEADER_SIZE + 7;
    cuts[n++] = ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE;
    for (k = 0; k < l.blocks && k < 3; k++) {
        cuts[n++] = l.start[k] + 9;
        cuts[n++] = l.start[k] + ATF_PACKED_BLOCK_HEADER_SIZE;
        cuts[n++] = l.start[k] + ATF_PACKED_BLOCK_HEADER_SIZE + 1;
        cuts[n++] = (l.start[k] + l.end[k]) / 2;
        cuts[n++] = l.end[k] - 1;
        cuts[n++] = l.end[k];
        cuts[n++] = l.end[k] + 1;
    }
    cuts[n++] = l.table + 12;
    cuts[n++] = l.footer - 1;
    cuts[n++] = l.footer;
    cuts[n++] = l.footer + 32;
    cuts[n++] = l.footer + ATF_FOOTER_SIZE - 1;
    crashed.size = t.packed.size;
    crashed.data = (uint8_t *)malloc(crashed.size);
    if (!crashed.data) {
        twins_free(&t);
        return;
    }
    memcpy(crashed.data, t.packed.data, crashed.size);
    make_placeholder(&crashed);
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < n; i++) check_cut(&t, pass ? &crashed : &t.packed, &l, cuts[i]);
    free(crashed.data);
    twins_free(&t);
}

/* A crash between the two writes of an append (atf__packer_write) whose first block was
 * partly on disk: that block's new bytes and the blocks after it are on disk, its header
 * is the last append's. The file reads as it stood after that append: the block as its
 * old header counts it, the bytes after it cut as torn. And the append changed no byte
 * that was on disk but that header's. */
static void test_crash_between_stage_writes(void) {
    const uint64_t before = 500, after = 2000;
    const size_t head = ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE; /* the first block's header */
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    char path[1100];
    blob first, second;
    twins t;
    uint64_t i;
    if (!twins_record(&t, before)) {
        twins_free(&t);
        return;
    }
    memset(&c, 0, sizeof c);
    c.layout = ATF_LAYOUT_PACKED;
    c.detail_mode = ATF_DETAIL_ALWAYS;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.session_name = "two_writes";
    CHECK_RESULT(ATF_OK, atf_session_open(&s, scratch, &c));
    if (s) CHECK_RESULT(ATF_OK, atf_session_attach(s, "rec", &w));
    if (!s || !w) {
        if (s) atf_session_close(s);
        twins_free(&t);
        return;
    }
    snprintf(path, sizeof path, "%s/thread_0/index.atf", atf_session_path(s));
    for (i = 0; i < before; i++) record_event(w, i);
    CHECK_RESULT(ATF_OK, atf_session_pump(s));
    first = blob_read(path); /* the first block open, partly on disk */
    for (; i < before + after; i++) record_event(w, i);
    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* closes it, two blocks more */
    second = blob_read(path);
    CHECK(first.size > head + ATF_PACKED_BLOCK_HEADER_SIZE && second.size > first.size);
    if (first.size > head + ATF_PACKED_BLOCK_HEADER_SIZE && second.size > first.size) {
        atf_index_reader r;
        uint8_t *copy;
        atf_result rc;
        CHECK_EQ(before, le32(first.data + head));
        CHECK_EQ(ATF_PACKED_BLOCK_EVENTS, le32(second.data + head));
        CHECK_EQ(0, memcmp(first.data, second.data, head));
        CHECK_EQ(0, memcmp(first.data + head + ATF_PACKED_BLOCK_HEADER_SIZE,
                           second.data + head + ATF_PACKED_BLOCK_HEADER_SIZE,
                           first.size - head - ATF_PACKED_BLOCK_HEADER_SIZE));
        memcpy(second.data + head, first.data + head, ATF_PACKED_BLOCK_HEADER_SIZE);
        rc = open_copy(&r, second.data, second.size, &copy);
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) {
            CHECK(r.packed);
            CHECK_EQ(before, r.event_count);
            CHECK_EQ(second.size - first.size, r.torn_bytes);
            check_events_equal(&r, &t.l1, r.event_count < before ? r.event_count : before);
            atf_index_reader_close(&r);
        }
        free(copy);
    }
    atf_session_detach(s);
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    free(first.data);
    free(second.data);
    twins_free(&t);
}

/* A flipped byte in block k (its payload, or the CRC in its header): blocks before it
 * read, it and every block after it do not. A flipped table or footer count: all read. */
static void test_flipped_byte(void) {
    twins t;
    packed_layout l;
    uint64_t k, j;
    if (!twins_record(&t, 2 * ATF_PACKED_BLOCK_EVENTS + 452)) {
        twins_free(&t);
        return;
    }
    l = layout_of(&t.packed, t.events);
    for (k = 0; k < l.blocks && k < 3; k++) {
        uint64_t at[2], events = 0;
        at[0] = l.start[k] + ATF_PACKED_BLOCK_HEADER_SIZE + 5; /* payload */
        at[1] = l.start[k] + 8;                                /* header: CRC */
        for (j = 0; j < k; j++) events += l.events[j];
        for (j = 0; j < 2; j++) {
            atf_index_reader r;
            uint8_t *copy;
            atf_result rc;
            t.packed.data[at[j]] ^= 0x40;
            rc = open_copy(&r, t.packed.data, t.packed.size, &copy);
            t.packed.data[at[j]] ^= 0x40;
            CHECK_RESULT(ATF_OK, rc);
            if (rc != ATF_OK) {
                free(copy);
                continue;
            }
            CHECK_EQ(ATF_COUNT_FOOTER_MISMATCH, r.counted); /* the footer counts them all */
            CHECK_EQ(events, r.event_count);
            CHECK_EQ(l.footer - (k ? l.end[k - 1] : l.start[0]), r.torn_bytes);
            check_events_equal(&r, &t.l1, events < r.event_count ? events : r.event_count);
            atf_index_reader_close(&r);
            free(copy);
        }
    }
    /* a wrong table entry, or a footer count one off: every block reads, but the footer
     * is not believed, and the table is what follows the blocks */
    for (j = 0; j < 2; j++) {
        atf_index_reader r;
        uint8_t *copy;
        atf_result rc;
        uint64_t at = j ? l.footer + 8 : l.table + 8;
        t.packed.data[at] ^= 0x01;
        rc = open_copy(&r, t.packed.data, t.packed.size, &copy);
        t.packed.data[at] ^= 0x01;
        CHECK_RESULT(ATF_OK, rc);
        if (rc == ATF_OK) {
            CHECK_EQ(ATF_COUNT_FOOTER_MISMATCH, r.counted);
            CHECK_EQ(t.events, r.event_count);
            CHECK_EQ(l.blocks * 8, r.torn_bytes);
            check_events_equal(&r, &t.l1, r.event_count);
            atf_index_reader_close(&r);
        }
        free(copy);
    }
    twins_free(&t);
}

/* ---- hand-built packed files ----------------------------------------------------------- */

/* A packed image of the layout-1 file `l1` with the blocks holding sizes[0..n) events and
 * lane header block_events `lane_events`, laid out as the format says (no footer when the
 * sizes do not cover every event). */
static blob build_packed(const blob *l1, uint32_t lane_events, const uint32_t *sizes, size_t n) {
    uint64_t events = (l1->size - ATF_HEADER_SIZE - ATF_FOOTER_SIZE) / ATF_INDEX_EVENT_SIZE, done = 0;
    size_t k, at, cap = l1->size * 2 + 1024;
    uint32_t tid = le32(l1->data + 12);
    blob b;
    b.data = (uint8_t *)calloc(1, cap);
    b.size = 0;
    if (!b.data) return b;
    memcpy(b.data, l1->data, ATF_HEADER_SIZE);
    b.data[5] = ATF_LAYOUT_PACKED;
    memcpy(b.data + ATF_HEADER_SIZE, ATF_PACKED_LANE_MAGIC, 4);
    put32(b.data + ATF_HEADER_SIZE + 4, lane_events);
    at = ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE;
    for (k = 0; k < n && done + sizes[k] <= events; k++) {
        uint8_t *h = b.data + at;
        size_t len = atf_packed_encode(l1->data + ATF_HEADER_SIZE + done * ATF_INDEX_EVENT_SIZE,
                                       sizes[k], tid, h + ATF_PACKED_BLOCK_HEADER_SIZE);
        put32(h, sizes[k]);
        put32(h + 4, (uint32_t)len);
        put32(h + 8, atf_crc32c(h + ATF_PACKED_BLOCK_HEADER_SIZE, len));
        at += ATF_PACKED_BLOCK_HEADER_SIZE + len;
        done += sizes[k];
    }
    b.size = at;
    return b;
}

/* Opens a hand-built image: rc, and on success the event count (and the events checked). */
static atf_result open_built(const blob *b, const blob *l1, uint64_t *count) {
    atf_index_reader r;
    uint8_t *copy;
    atf_result rc = open_copy(&r, b->data, b->size, &copy);
    *count = UINT64_MAX;
    if (rc == ATF_OK) {
        *count = r.event_count;
        check_events_equal(&r, l1, r.event_count);
        atf_index_reader_close(&r);
    }
    free(copy);
    return rc;
}

/* Readers take any block_events from 1 to 65536, and only the last block may be short:
 * after a short block nothing counts (a writer never puts one there). */
static void test_block_rules(void) {
    static const uint32_t fours[] = { 4, 4, 4, 4, 4 }, short_first[] = { 2, 4, 4 };
    static const uint32_t ones[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    twins t;
    blob b;
    uint64_t count;
    if (!twins_record(&t, 20)) {
        twins_free(&t);
        return;
    }
    b = build_packed(&t.l1, 4, fours, 5);
    CHECK_RESULT(ATF_OK, open_built(&b, &t.l1, &count));
    CHECK_EQ(20, count);
    free(b.data);
    b = build_packed(&t.l1, 1, ones, 20);
    CHECK_RESULT(ATF_OK, open_built(&b, &t.l1, &count));
    CHECK_EQ(20, count);
    free(b.data);
    b = build_packed(&t.l1, 4, short_first, 3);
    CHECK_RESULT(ATF_OK, open_built(&b, &t.l1, &count));
    CHECK_EQ(2, count);
    free(b.data);
    b = build_packed(&t.l1, 2, fours, 5); /* blocks larger than the lane allows */
    CHECK_RESULT(ATF_OK, open_built(&b, &t.l1, &count));
    CHECK_EQ(0, count);
    free(b.data);
    b = build_packed(&t.l1, ATF_PACKED_BLOCK_EVENTS_MAX, fours, 1);
    CHECK_RESULT(ATF_OK, open_built(&b, &t.l1, &count));
    CHECK_EQ(4, count);
    put32(b.data + ATF_HEADER_SIZE + 4, ATF_PACKED_BLOCK_EVENTS_MAX + 1);
    CHECK_RESULT(ATF_E_CORRUPT, open_built(&b, &t.l1, &count));
    put32(b.data + ATF_HEADER_SIZE + 4, 0);
    CHECK_RESULT(ATF_E_CORRUPT, open_built(&b, &t.l1, &count));
    put32(b.data + ATF_HEADER_SIZE + 4, 4);
    b.data[ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE + 12] = 1; /* block header reserved bytes */
    CHECK_RESULT(ATF_OK, open_built(&b, &t.l1, &count));
    CHECK_EQ(0, count);
    b.data[ATF_HEADER_SIZE] = 'X';                              /* lane magic */
    CHECK_RESULT(ATF_E_CORRUPT, open_built(&b, &t.l1, &count));
    free(b.data);
    twins_free(&t);
}

/* ---- the codec -------------------------------------------------------------------------- */

/* One record: the fields of an index event in layout 1 (`link` ATF_NO_DETAIL_U32: none). */
static void put_record(uint8_t *out, uint64_t ts, uint64_t fid, uint32_t thread, uint32_t kind,
                       uint32_t depth, uint32_t link) {
    atf_index_event e;
    memset(&e, 0, sizeof e);
    e.timestamp_ns = ts;
    e.function_id = fid;
    e.thread_id = thread;
    e.kind = kind;
    e.call_depth = depth;
    e.detail_seq = link == ATF_NO_DETAIL_U32 ? ATF_NO_DETAIL : link;
    atf_index_event_encode(ATF_LAYOUT_1, &e, out);
}

/* Encodes n records for thread tid into exactly n * ATF_PACKED_EVENT_MAX bytes, decodes
 * them into exactly n records: the same bytes must come back, and a count one off either
 * way must not decode. Returns the payload's length. */
static size_t check_codec(const char *what, const uint8_t *records, size_t n, uint32_t tid) {
    uint8_t *coded = (uint8_t *)malloc(n * ATF_PACKED_EVENT_MAX + 1);
    uint8_t *back = (uint8_t *)malloc((n + 1) * ATF_INDEX_EVENT_SIZE);
    size_t len = 0;
    if (!coded || !back) {
        CHECK(0);
    } else {
        len = atf_packed_encode(records, n, tid, coded);
        CHECK(len <= n * ATF_PACKED_EVENT_MAX);
        CHECK(len >= 2 * n); /* what a reader demands of a block */
        CHECK_RESULT(ATF_OK, atf_packed_decode(coded, len, n, tid, back));
        if (n && memcmp(back, records, n * ATF_INDEX_EVENT_SIZE) != 0) {
            size_t i = 0;
            while (memcmp(back + i * 32, records + i * 32, 32) == 0) i++;
            printf("  %s: record %zu does not round trip\n", what, i);
            CHECK(0);
        }
        CHECK_RESULT(ATF_E_CORRUPT, atf_packed_decode(coded, len, n + 1, tid, back));
        if (n) CHECK_RESULT(ATF_E_CORRUPT, atf_packed_decode(coded, len, n - 1, tid, back));
    }
    free(coded);
    free(back);
    return len;
}

static void test_codec_kinds(void) {
    static const uint32_t kinds[] = { ATF_EVENT_CALL, ATF_EVENT_RETURN, ATF_EVENT_EXCEPTION, 0, 4, 5,
                                      0x7F, 0x80, 0xFFFF, UINT32_MAX, ATF_EVENT_RETURN };
    uint8_t rec[sizeof kinds / sizeof kinds[0] * 32];
    size_t i, n = sizeof kinds / sizeof kinds[0];
    for (i = 0; i < n; i++) put_record(rec + i * 32, 100 + i, 0x10, 7, kinds[i], 3, ATF_NO_DETAIL_U32);
    check_codec("kinds", rec, n, 7);
}

static void test_codec_depths(void) {
    /* calls nest one deeper, returns come back; the rest jump (up, down, to the ends) */
    static const uint32_t depth[] = { 0, 1, 2, 2, 40, 3, 0, UINT32_MAX, 0, 1000000, 999999,
                                      5, 0x80000000u, 0x7FFFFFFFu, 0, 0 };
    static const uint32_t kind[] = { 1, 1, 1, 2, 1, 2, 2, 1, 3, 1, 2, 2, 1, 2, 2, 1 };
    uint8_t rec[sizeof depth / sizeof depth[0] * 32];
    size_t i, n = sizeof depth / sizeof depth[0];
    for (i = 0; i < n; i++) put_record(rec + i * 32, 100 + i, 0x10 + i, 7, kind[i], depth[i], ATF_NO_DETAIL_U32);
    check_codec("depths", rec, n, 7);
}

static void test_codec_links(void) {
    /* none, consecutive from the start, none between, a run again, jumps up and down, the
     * largest link, the wrap of "previous + 1" onto "none" */
    static const uint32_t link[] = { ATF_NO_DETAIL_U32, 0, 1, 2, ATF_NO_DETAIL_U32, 3, 4, 100, 50, 51,
                                     0xFFFFFFFEu, ATF_NO_DETAIL_U32, 0, 0, 7, ATF_NO_DETAIL_U32 };
    uint8_t rec[sizeof link / sizeof link[0] * 32];
    size_t i, n = sizeof link / sizeof link[0];
    for (i = 0; i < n; i++) put_record(rec + i * 32, 100 + i, 0x10, 7, 1 + (uint32_t)(i % 2), 0, link[i]);
    check_codec("links", rec, n, 7);
}

static void test_codec_threads(void) {
    /* the header's thread, another, back, the ends of the range */
    static const uint32_t thread[] = { 7, 7, 8, 8, 7, 0, UINT32_MAX, UINT32_MAX, 7 };
    uint8_t rec[sizeof thread / sizeof thread[0] * 32];
    size_t i, n = sizeof thread / sizeof thread[0];
    for (i = 0; i < n; i++) put_record(rec + i * 32, 100 + i, 0x10, thread[i], 1, (uint32_t)i, ATF_NO_DETAIL_U32);
    check_codec("threads", rec, n, 7);
    check_codec("threads, header thread 0", rec, n, 0);
}

static void test_codec_timestamps(void) {
    static const uint64_t ts[] = { 1000, 999, 0, UINT64_MAX, 0, 5, UINT64_MAX / 2, UINT64_MAX / 2,
                                   1ull << 63, 3 };
    uint8_t rec[sizeof ts / sizeof ts[0] * 32];
    size_t i, n = sizeof ts / sizeof ts[0];
    for (i = 0; i < n; i++) put_record(rec + i * 32, ts[i], 0x10, 7, 1, (uint32_t)i, ATF_NO_DETAIL_U32);
    check_codec("timestamps", rec, n, 7);
}

static void test_codec_function_ids(void) {
    /* 0 and UINT64_MAX at one depth, at depths that share a slot (64 apart), and apart */
    static const uint64_t fid[] = { 0, UINT64_MAX, 0, UINT64_MAX, UINT64_MAX, 0, 1ull << 63, 0, UINT64_MAX };
    static const uint32_t depth[] = { 0, 0, 64, 64, 1, 65, 0, 128, 192 };
    uint8_t rec[sizeof fid / sizeof fid[0] * 32];
    size_t i, n = sizeof fid / sizeof fid[0];
    for (i = 0; i < n; i++) put_record(rec + i * 32, 100 + i, fid[i], 7, 1, depth[i], ATF_NO_DETAIL_U32);
    check_codec("function ids", rec, n, 7);
}

/* The sizes the format promises: a predicted event costs 2 bytes, the worst one exactly
 * ATF_PACKED_EVENT_MAX. */
static void test_codec_sizes(void) {
    uint8_t rec[2 * 32];
    /* a call at depth 0, then its return: function, depth and thread as predicted */
    put_record(rec, 5, 0, 7, ATF_EVENT_CALL, 0, ATF_NO_DETAIL_U32);
    put_record(rec + 32, 9, 0, 7, ATF_EVENT_RETURN, 0, ATF_NO_DETAIL_U32);
    CHECK_EQ(4, check_codec("predicted", rec, 2, 7));
    /* every field at its widest: explicit kind, stamp and function differences of 64
     * bits, an int32 depth difference, a given link, another thread */
    put_record(rec, UINT64_MAX, 1ull << 63, UINT32_MAX, UINT32_MAX, 0x80000000u, 0xFFFFFFFEu);
    CHECK_EQ(ATF_PACKED_EVENT_MAX, check_codec("widest", rec, 1, 0));
}

/* Events coded to the bytes the format spells, around the two-byte form of a call or a
 * return (one stamp byte, nothing else): stamps of 127, 128 and 2^14, depths that wrap
 * (a return at depth 0 is predicted at 0xFFFFFFFF, and one there whose link is
 * 0xFFFFFFFE is not of that form), a kind not 1, 2 or 3, an exception, a thread switch
 * and the form again after it, links given and next, function differences of one, two
 * and three bytes, a depth off its prediction. */
static void test_codec_exact_bytes(void) {
    static const struct { uint64_t ts, fid; uint32_t thread, kind, depth, link; } ev[] = {
        { 5, 0, 7, 1, 0, ATF_NO_DETAIL_U32 },                  /* 00 05 */
        { 132, 0, 7, 1, 1, ATF_NO_DETAIL_U32 },                /* 00 7F */
        { 260, 0, 7, 2, 1, ATF_NO_DETAIL_U32 },                /* 01 80 01 */
        { 261, 0, 7, 2, 0, ATF_NO_DETAIL_U32 },                /* 01 01 */
        { 262, 0, 7, 2, UINT32_MAX, 0xFFFFFFFEu },             /* 21 01 FE FF FF FF 0F */
        { 263, 0, 7, 1, UINT32_MAX, ATF_NO_DETAIL_U32 },       /* 00 01 */
        { 264, 0, 7, 2, UINT32_MAX, ATF_NO_DETAIL_U32 },       /* 01 01 */
        { 265, 0, 7, 0, UINT32_MAX, ATF_NO_DETAIL_U32 },       /* 03 00 01 */
        { 266, 0, 7, 3, UINT32_MAX, ATF_NO_DETAIL_U32 },       /* 02 01 */
        { 267, 0, 8, 1, UINT32_MAX, ATF_NO_DETAIL_U32 },       /* 40 01 08 */
        { 268, 0, 8, 1, 0, ATF_NO_DETAIL_U32 },                /* 00 01 */
        { 269, 0, 8, 2, 0, 7 },                                /* 21 01 07 */
        { 270, 0, 8, 1, 0, 8 },                                /* 10 01 */
        { 270, 9, 8, 1, 1, ATF_NO_DETAIL_U32 },                /* 04 00 12 */
        { 271, 9, 8, 2, 1, ATF_NO_DETAIL_U32 },                /* 01 01 */
        { 16655, 9, 8, 1, 1, ATF_NO_DETAIL_U32 },              /* 00 80 80 01 */
        { 33038, 9, 8, 2, 1, ATF_NO_DETAIL_U32 },              /* 01 FF 7F */
        { 33039, 9 - 0x2000ull, 8, 1, 1, ATF_NO_DETAIL_U32 },  /* 04 01 FF 7F */
        { 33040, 9 - 0x2000ull, 8, 2, 1, ATF_NO_DETAIL_U32 },  /* 01 01 */
        { 33041, 9, 8, 1, 1, ATF_NO_DETAIL_U32 },              /* 04 01 80 80 01 */
        { 33042, 0, 8, 1, 5, ATF_NO_DETAIL_U32 },              /* 08 01 06 */
    };
    static const uint8_t want[] = {
        0x00, 0x05, 0x00, 0x7F, 0x01, 0x80, 0x01, 0x01, 0x01, 0x21, 0x01, 0xFE, 0xFF, 0xFF,
        0xFF, 0x0F, 0x00, 0x01, 0x01, 0x01, 0x03, 0x00, 0x01, 0x02, 0x01, 0x40, 0x01, 0x08,
        0x00, 0x01, 0x21, 0x01, 0x07, 0x10, 0x01, 0x04, 0x00, 0x12, 0x01, 0x01, 0x00, 0x80,
        0x80, 0x01, 0x01, 0xFF, 0x7F, 0x04, 0x01, 0xFF, 0x7F, 0x01, 0x01, 0x04, 0x01, 0x80,
        0x80, 0x01, 0x08, 0x01, 0x06,
    };
    size_t n = sizeof ev / sizeof ev[0], i, len;
    uint8_t rec[sizeof ev / sizeof ev[0] * 32], coded[sizeof ev / sizeof ev[0] * ATF_PACKED_EVENT_MAX];
    for (i = 0; i < n; i++)
        put_record(rec + i * 32, ev[i].ts, ev[i].fid, ev[i].thread, ev[i].kind, ev[i].depth, ev[i].link);
    len = atf_packed_encode(rec, n, 7, coded);
    CHECK_EQ(sizeof want, len);
    for (i = 0; i < len && i < sizeof want; i++)
        if (coded[i] != want[i]) {
            printf("  exact bytes: byte %zu is %02X, not %02X\n", i, coded[i], want[i]);
            CHECK(0);
            break;
        }
    check_codec("exact bytes", rec, n, 7);
}

/* Random records: fields drawn near their predictions and far from them. */
static void test_codec_random(void) {
    size_t n = 5000, i;
    uint8_t *rec = (uint8_t *)malloc(n * 32);
    if (!rec) return;
    rng_seed(0x5041434bu);
    for (i = 0; i < n; i++) {
        uint64_t r = rng_next();
        uint32_t depth = (uint32_t)(r & 3 ? i % 9 : rng_next());
        uint32_t kind = (uint32_t)((r >> 2) & 7 ? 1 + (r >> 5) % 3 : rng_next() % 300);
        uint32_t link = (uint32_t)((r >> 8) & 1 ? (uint32_t)i : (r >> 9) & 1 ? ATF_NO_DETAIL_U32
                                                                             : (uint32_t)rng_next());
        uint32_t thread = (r >> 10) & 15 ? 7 : (uint32_t)rng_next();
        uint64_t ts = (r >> 14) & 7 ? 1000 * i + (r >> 20) % 50 : rng_next();
        uint64_t fid = (r >> 17) & 3 ? (r >> 40) % 16 : rng_next();
        put_record(rec + i * 32, ts, fid, thread, kind, depth, link);
    }
    check_codec("random", rec, n, 7);
    check_codec("random, the first block", rec, ATF_PACKED_BLOCK_EVENTS, 7);
    free(rec);
}

/* ---- decoder refusals ------------------------------------------------------------------- */

/* Decodes a hand-made payload of one event (or `count`) into an exact-size buffer. */
static atf_result decode_bytes(const uint8_t *bytes, size_t len, size_t count, atf_index_event *first) {
    uint8_t *copy = (uint8_t *)malloc(len ? len : 1), *rec = (uint8_t *)malloc(count ? count * 32 : 1);
    atf_result rc = ATF_E_NOMEM;
    if (copy && rec) {
        if (len) memcpy(copy, bytes, len);
        rc = atf_packed_decode(copy, len, count, 7, rec);
        if (rc == ATF_OK && count && first) atf_index_event_decode(ATF_LAYOUT_1, rec, first);
    }
    free(copy);
    free(rec);
    return rc;
}

#define DECODE(expect, count, ...) do { \
    static const uint8_t b_[] = { __VA_ARGS__ }; \
    CHECK_RESULT(expect, decode_bytes(b_, sizeof b_, count, &ev)); \
} while (0)

/* Each refusal next to the nearest payload that decodes, so that the refusal is of the
 * one thing changed. */
static void test_decode_refusals(void) {
    atf_index_event ev;
    DECODE(ATF_OK, 1, 0x00, 0x05);                      /* a call at stamp 5 */
    CHECK_EQ(5, ev.timestamp_ns);
    CHECK_EQ(ATF_EVENT_CALL, ev.kind);
    DECODE(ATF_E_CORRUPT, 1, 0x80, 0x05);               /* tag bit 7 */
    DECODE(ATF_E_CORRUPT, 1, 0x81, 0x05);
    DECODE(ATF_OK, 1, 0x20, 0x05, 0x09);                /* link given: 9 */
    CHECK_EQ(9, ev.detail_seq);
    DECODE(ATF_E_CORRUPT, 1, 0x30, 0x05);               /* link code 3, read as "next" */
    DECODE(ATF_E_CORRUPT, 1, 0x30, 0x05, 0x09);         /*   or as "given" */
    /* varints running past the end: stamp, explicit kind, function, depth, link, thread */
    DECODE(ATF_E_CORRUPT, 1, 0x00, 0x85);
    DECODE(ATF_E_CORRUPT, 1, 0x03, 0xFF);
    DECODE(ATF_E_CORRUPT, 1, 0x04, 0x05, 0x80);
    DECODE(ATF_E_CORRUPT, 1, 0x08, 0x05);
    DECODE(ATF_E_CORRUPT, 1, 0x20, 0x05);
    DECODE(ATF_E_CORRUPT, 1, 0x40, 0x05, 0xFF, 0xFF);
    DECODE(ATF_E_CORRUPT, 1, 0x00);                     /* the stamp missing */
    /* 64-bit fields: the largest value decodes, one bit more (or an 11th byte) does not */
    DECODE(ATF_OK, 1, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01);
    CHECK_EQ(UINT64_MAX, ev.timestamp_ns);
    DECODE(ATF_E_CORRUPT, 1, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02);
    DECODE(ATF_E_CORRUPT, 1, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00);
    DECODE(ATF_E_CORRUPT, 1, 0x04, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F);
    /* 32-bit fields: UINT32_MAX decodes, 2^32 does not (kind, link, thread, depth) */
    DECODE(ATF_OK, 1, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x05);
    CHECK_EQ(UINT32_MAX, ev.kind);
    DECODE(ATF_E_CORRUPT, 1, 0x03, 0x80, 0x80, 0x80, 0x80, 0x10, 0x05);
    DECODE(ATF_OK, 1, 0x40, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F);
    CHECK_EQ(UINT32_MAX, ev.thread_id);
    DECODE(ATF_E_CORRUPT, 1, 0x40, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10);
    DECODE(ATF_E_CORRUPT, 1, 0x20, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10);
    DECODE(ATF_OK, 1, 0x08, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F); /* zigzag: depth -2^31 */
    CHECK_EQ(0x80000000u, ev.call_depth);
    DECODE(ATF_E_CORRUPT, 1, 0x08, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10);
    DECODE(ATF_E_CORRUPT, 1, 0x08, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01);
    /* leftover bytes, and payloads holding fewer events than counted */
    DECODE(ATF_E_CORRUPT, 1, 0x00, 0x05, 0x00);
    DECODE(ATF_E_CORRUPT, 0, 0x00);
    CHECK_RESULT(ATF_OK, decode_bytes(NULL, 0, 0, NULL));
    CHECK_RESULT(ATF_E_CORRUPT, decode_bytes(NULL, 0, 1, NULL));
    DECODE(ATF_OK, 2, 0x00, 0x05, 0x01, 0x05);
    DECODE(ATF_E_CORRUPT, 3, 0x00, 0x05, 0x01, 0x05);
    DECODE(ATF_E_CORRUPT, 1, 0x00, 0x05, 0x01, 0x05);
    DECODE(ATF_E_CORRUPT, 2, 0x00, 0x05, 0x01);         /* the second stamp missing */
    DECODE(ATF_E_CORRUPT, 2, 0x00, 0x05, 0x01, 0x85);   /*   or running past the end */
    DECODE(ATF_OK, 1, 0x01, 0x7F);                      /* a return at depth 0 - 1 */
    CHECK_EQ(UINT32_MAX, ev.call_depth);
    CHECK_EQ(ATF_EVENT_RETURN, ev.kind);
}

/* ---- the block cache -------------------------------------------------------------------- */

/* A reader decodes a packed block when an event of it is read, into a cache of a few
 * blocks (atf.h: ATF__PACKED_SLOTS); what raw gives is valid until the next call on the
 * reader. Every read below is checked right after its call against the layout-1 twin, in
 * orders that make the cache replace blocks it will need again. */

/* Event seq of r, through raw and then get, against event seq of the layout-1 file l1;
 * 0 (and said) when they differ. */
static int check_event_at(const atf_index_reader *r, const blob *l1, uint64_t seq) {
    const uint8_t *raw = atf_index_reader_raw(r, seq);
    const uint8_t *want = l1->data + ATF_HEADER_SIZE + seq * ATF_INDEX_EVENT_SIZE;
    atf_index_event got, exp;
    if (!raw || memcmp(raw, want, ATF_INDEX_EVENT_SIZE) != 0) {
        printf("  event %" PRIu64 " differs (raw)\n", seq);
        CHECK(0);
        return 0;
    }
    CHECK_RESULT(ATF_OK, atf_index_reader_get(r, seq, &got));
    atf_index_event_decode(ATF_LAYOUT_1, want, &exp);
    CHECK_INDEX_EVENT(exp, got);
    return got.timestamp_ns == exp.timestamp_ns && got.function_id == exp.function_id;
}

/* Reads events of block k of r (blocks of `per` events, `count` in all): its first, its
 * last and one that moves with `turn`, each checked. 0 when one differs. */
static int check_block_at(const atf_index_reader *r, const blob *l1, uint64_t per, uint64_t count,
                          uint64_t k, uint64_t turn) {
    uint64_t first = k * per, n = count - first < per ? count - first : per;
    return check_event_at(r, l1, first) && check_event_at(r, l1, first + n - 1) &&
           check_event_at(r, l1, first + (turn * 7 + 3) % n);
}

/* Visits the blocks of r in orders that cycle through more than the cache holds: 0,
 * half, 1, half + 1, ... (three times); 0..4 five times; 0..3 (a cycle that fits) three
 * times; every block backwards; 300 at random. Returns the blocks visited. */
static uint64_t check_block_orders(const atf_index_reader *r, const blob *l1, uint64_t per) {
    uint64_t count = r->event_count, blocks = (count + per - 1) / per, half = blocks / 2, j, visits = 0;
    CHECK(blocks >= 8);
    if (blocks < 8) return 0;
    for (j = 0; j < 3 * 2 * half; j++, visits++) /* 0, 5, 1, 6, 2, 7, 0, ... for 10 blocks */
        if (!check_block_at(r, l1, per, count, (j / 2) % half + (j % 2 ? half : 0), j)) return visits;
    for (j = 0; j < 25; j++, visits++)
        if (!check_block_at(r, l1, per, count, j % 5, j)) return visits;
    for (j = 0; j < 12; j++, visits++)
        if (!check_block_at(r, l1, per, count, j % 4, j)) return visits;
    for (j = 0; j < blocks; j++, visits++)
        if (!check_block_at(r, l1, per, count, blocks - 1 - j, j)) return visits;
    rng_seed(0x43414348u);
    for (j = 0; j < 300; j++, visits++)
        if (!check_block_at(r, l1, per, count, rng_below((size_t)blocks), j)) return visits;
    return visits;
}

/* (a) The writer's blocks (11 of 1024 events, the last short) and hand-built blocks of 3
 * events (14, the last of one): every order of visits reads the twin's records, and two
 * readers over the same bytes, each cycling, keep to their own blocks. */
static void test_cache_block_orders(void) {
    uint64_t events = 10 * ATF_PACKED_BLOCK_EVENTS + 300, visits, j;
    uint32_t threes[14];
    twins t;
    atf_index_reader r, r2;
    uint8_t *copy, *copy2;
    atf_result rc;
    blob b;
    if (!twins_record(&t, events)) {
        twins_free(&t);
        return;
    }
    rc = open_copy(&r, t.packed.data, t.packed.size, &copy);
    CHECK_RESULT(ATF_OK, rc);
    if (rc == ATF_OK) {
        CHECK(r.packed);
        CHECK_EQ(events, r.event_count);
        if (r.event_count == events) {
            visits = check_block_orders(&r, &t.l1, ATF_PACKED_BLOCK_EVENTS);
            CHECK_EQ(3 * 2 * 5 + 25 + 12 + 11 + 300, visits);
            check_events_equal(&r, &t.l1, r.event_count); /* then in order, after all that */
        }
        /* a second reader over the same bytes: the two alternate, far apart */
        rc = atf_index_reader_open_memory(&r2, copy, t.packed.size, "packed 2", NULL);
        CHECK_RESULT(ATF_OK, rc);
        for (j = 0; j < 40 && rc == ATF_OK && r.event_count == events && r2.event_count == events; j++) {
            uint64_t a = (j % 11) * ATF_PACKED_BLOCK_EVENTS + j;
            uint64_t z = ((10 - j % 11) * ATF_PACKED_BLOCK_EVENTS + 5 * j) % events;
            if (!check_event_at(&r, &t.l1, a) || !check_event_at(&r2, &t.l1, z) ||
                !check_event_at(&r, &t.l1, a + 1) || !check_event_at(&r2, &t.l1, z))
                break;
        }
        if (rc == ATF_OK) atf_index_reader_close(&r2);
        atf_index_reader_close(&r);
    }
    free(copy);
    twins_free(&t);

    /* blocks of 3 events */
    if (!twins_record(&t, 40)) {
        twins_free(&t);
        return;
    }
    for (j = 0; j < 13; j++) threes[j] = 3;
    threes[13] = 1;
    b = build_packed(&t.l1, 3, threes, 14);
    rc = open_copy(&r, b.data, b.size, &copy2);
    CHECK_RESULT(ATF_OK, rc);
    if (rc == ATF_OK) {
        CHECK_EQ(40, r.event_count);
        CHECK_EQ(3, r.block_events);
        if (r.event_count == 40) {
            visits = check_block_orders(&r, &t.l1, 3);
            CHECK_EQ(3 * 2 * 7 + 25 + 12 + 14 + 300, visits);
            check_events_equal(&r, &t.l1, r.event_count);
        }
        atf_index_reader_close(&r);
    }
    free(copy2);
    free(b.data);
    twins_free(&t);
}

/* (b) What raw gives is the twin's record after each call, whatever the cache did for
 * the calls before: a block, then up to three others (each read checked as it is given),
 * then the first block again, from every block; with seeks and gets between. (atf.h
 * promises the bytes until the next get, raw or seek on the reader, no longer: nothing
 * here looks at a pointer after a later call.) */
static void test_cache_raw_pointer(void) {
    uint64_t events = 7 * ATF_PACKED_BLOCK_EVENTS + 100, B = ATF_PACKED_BLOCK_EVENTS, blocks = 8, k, o;
    twins t;
    atf_index_reader r;
    uint8_t *copy;
    if (!twins_record(&t, events)) {
        twins_free(&t);
        return;
    }
    CHECK_RESULT(ATF_OK, open_copy(&r, t.packed.data, t.packed.size, &copy));
    CHECK_EQ(events, r.event_count);
    for (k = 0; k < blocks && r.event_count == events; k++) {
        uint64_t a = k * B + (k * 131) % (k == blocks - 1 ? 100 : B), others;
        for (others = 0; others <= 3; others++) {
            atf_index_event ev;
            if (!check_event_at(&r, &t.l1, a)) break;
            for (o = 1; o <= others; o++) { /* blocks k + o, k + 2o, ...: near and far */
                uint64_t b = ((k + o * (others + 1)) % blocks) * B + o;
                if (!check_event_at(&r, &t.l1, b)) break;
            }
            if (others == 2) { /* a seek, a get elsewhere, then raw again */
                (void)atf_index_reader_seek(&r, le64(t.l1.data + ATF_HEADER_SIZE + (events - 1) * 32), NULL);
                CHECK_RESULT(ATF_OK, atf_index_reader_get(&r, (a + 3 * B) % events, &ev));
            }
            if (!check_event_at(&r, &t.l1, a)) break;
            if (!check_event_at(&r, &t.l1, a ^ 1)) break; /* its neighbour, the same block */
        }
    }
    CHECK(atf_index_reader_raw(&r, events) == NULL);
    CHECK(atf_index_reader_raw(&r, UINT64_MAX) == NULL);
    atf_index_reader_close(&r);
    free(copy);
    twins_free(&t);
}

#if !defined(_WIN32)
/* The atf command: $ATF (make test sets it), else build/atf; NULL when it is not there. */
static const char *atf_command(void) {
    const char *v = getenv("ATF");
    v = v && *v ? v : "build/atf";
    return path_exists(v) ? v : NULL;
}

/* The exit status of `atf verify path` (its output dropped); -1 when it did not exit. */
static int atf_verify_status(const char *atf, const char *path) {
    char cmd[2400];
    int status;
    snprintf(cmd, sizeof cmd, "'%s' verify '%s' >/dev/null 2>&1", atf, path);
    status = system(cmd);
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif

/* (c) A block whose payload does not decode but whose CRC was computed over it (damage
 * no crash makes): the open's walk takes it, so the file reads finalized with every event
 * counted; its events read as zero records, the blocks around it as the twin's, in any
 * order; the footer CRC (over the layout-1 records) does not match, so verify_crc,
 * an open with verify_crc and `atf verify` say so. */
static void test_cache_damaged_block(void) {
    static const uint8_t zero[ATF_INDEX_EVENT_SIZE] = { 0 };
    uint64_t events = 2 * ATF_PACKED_BLOCK_EVENTS + 452, k, i;
    twins t;
    packed_layout l;
    atf_index_reader r;
    atf_reader_options opt;
    uint8_t *copy, *payload, *records = NULL;
    uint32_t len;
    char path[600];
    if (!twins_record(&t, events)) {
        twins_free(&t);
        return;
    }
    l = layout_of(&t.packed, t.events);
    CHECK_EQ(3, l.blocks);
    scratch_path(path, sizeof path, "damaged_block.atf");
#if !defined(_WIN32)
    if (atf_command()) { /* the command runs, and takes the intact file */
        CHECK_EQ(0, write_file(path, t.packed.data, t.packed.size));
        CHECK_EQ(0, atf_verify_status(atf_command(), path));
    }
#endif
    payload = t.packed.data + l.start[1] + ATF_PACKED_BLOCK_HEADER_SIZE;
    len = le32(t.packed.data + l.start[1] + 4);
    payload[0] |= 0x80; /* the first event's tag: bit 7 is never set */
    put32(t.packed.data + l.start[1] + 8, atf_crc32c(payload, len));
    records = (uint8_t *)malloc((size_t)ATF_PACKED_BLOCK_EVENTS * ATF_INDEX_EVENT_SIZE);
    if (records) /* the payload is malformed indeed */
        CHECK_RESULT(ATF_E_CORRUPT, atf_packed_decode(payload, len, (size_t)l.events[1],
                                                      le32(t.packed.data + 12), records));
    free(records);

    CHECK_RESULT(ATF_OK, open_copy(&r, t.packed.data, t.packed.size, &copy));
    CHECK(r.packed);
    CHECK_EQ(ATF_COUNT_FINALIZED, r.counted);
    CHECK_EQ(events, r.event_count);
    CHECK_EQ(0, r.torn_bytes);
    if (r.event_count == events) {
        /* the damaged block first, then the others, then it again, then everything */
        for (k = 0; k < 4; k++) {
            uint64_t blk = k == 3 ? 1 : k == 0 ? 1 : k == 1 ? 0 : 2;
            uint64_t first = blk * ATF_PACKED_BLOCK_EVENTS, n = l.events[blk];
            for (i = first; i < first + n; i += 97) {
                const uint8_t *raw = atf_index_reader_raw(&r, i);
                atf_index_event ev;
                if (blk != 1) {
                    check_event_at(&r, &t.l1, i);
                    continue;
                }
                CHECK(raw != NULL && memcmp(raw, zero, sizeof zero) == 0);
                CHECK_RESULT(ATF_OK, atf_index_reader_get(&r, i, &ev));
                CHECK_EQ(0, ev.timestamp_ns);
                CHECK_EQ(0, ev.function_id);
                CHECK_EQ(0, ev.kind);
            }
        }
        for (i = 0; i < events; i++) {
            const uint8_t *raw = atf_index_reader_raw(&r, i);
            int in_damaged = i >= ATF_PACKED_BLOCK_EVENTS && i < 2 * ATF_PACKED_BLOCK_EVENTS;
            if (!raw || (in_damaged ? memcmp(raw, zero, sizeof zero) != 0
                                    : memcmp(raw, t.l1.data + ATF_HEADER_SIZE + i * 32, 32) != 0)) {
                printf("  event %" PRIu64 " of the damaged file\n", i);
                CHECK(0);
                break;
            }
        }
        CHECK_RESULT(ATF_E_CRC, atf_index_reader_verify_crc(&r));
        CHECK_EQ(ATF_CRC_MISMATCH, r.crc_state);
        CHECK_RESULT(ATF_E_CRC, atf_index_reader_verify_crc(&r)); /* the same, again */
    }
    atf_index_reader_close(&r);
    free(copy);
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    copy = (uint8_t *)malloc(t.packed.size);
    if (copy) {
        memcpy(copy, t.packed.data, t.packed.size);
        CHECK_RESULT(ATF_E_CRC, atf_index_reader_open_memory(&r, copy, t.packed.size, "damaged", &opt));
        free(copy);
    }
#if !defined(_WIN32)
    CHECK_EQ(0, write_file(path, t.packed.data, t.packed.size));
    if (atf_command()) CHECK_EQ(1, atf_verify_status(atf_command(), path));
    else printf("  cache_damaged_block: atf verify not run (no $ATF, no build/atf)\n");
#endif
    twins_free(&t);
}

/* ---- merges and seeks over packed files ------------------------------------------------- */

#define MERGE_THREADS 3

#if !defined(ATF_NO_THREADS)
/* A producer thread of the merge session: pattern 0 as record_event (stamps that go back
 * now and then, so merged through its sorted permutation; detail links), 1 on the same
 * stamps in order (ties with 0), 2 in order at its own pace. */
typedef struct merge_producer {
    atf_session *s;
    int pattern;
    uint64_t events;
    atf_result rc;
} merge_producer;

static void *merge_producer_main(void *arg) {
    merge_producer *p = (merge_producer *)arg;
    atf_producer *w = NULL;
    uint64_t i;
    p->rc = atf_session_attach(p->s, "merge", &w);
    for (i = 0; i < p->events && w && p->rc == ATF_OK; i++) {
        uint64_t fid = 0x200000000ull | (i % 23);
        uint64_t ts = p->pattern == 1 ? 1000000 + i * 100 : 1000000 + i * 37 + 11;
        if (p->pattern == 0) record_event(w, i);
        else if (i % 2) p->rc = atf_producer_return(w, fid + (uint64_t)p->pattern, ts);
        else p->rc = atf_producer_call(w, fid + (uint64_t)p->pattern, ts);
        if (i % 128 == 127 && p->rc == ATF_OK) p->rc = atf_session_pump(p->s);
    }
    atf_session_detach(p->s);
    return NULL;
}

/* Records a session of MERGE_THREADS producer threads of `events` events each, in
 * `layout`. Returns the pid directory in dir, 0 when recording failed. */
static int record_merge_session(int layout, uint64_t events, char *dir, size_t cap) {
    atf_session *s = NULL;
    atf_session_config c;
    merge_producer p[MERGE_THREADS];
    pthread_t th[MERGE_THREADS];
    static unsigned sessions;
    char name[64];
    int k;
    memset(&c, 0, sizeof c);
    c.layout = (uint32_t)layout;
    c.detail_mode = ATF_DETAIL_ALWAYS;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.fsync_mode = ATF_FSYNC_NONE;
    snprintf(name, sizeof name, "merge_%u_%d", sessions++, layout);
    c.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, scratch, &c));
    if (!s) return 0;
    for (k = 0; k < MERGE_THREADS; k++) {
        p[k].s = s;
        p[k].pattern = k;
        p[k].events = events;
        p[k].rc = ATF_E_STATE;
        CHECK_EQ(0, pthread_create(&th[k], NULL, merge_producer_main, &p[k]));
    }
    for (k = 0; k < MERGE_THREADS; k++) {
        CHECK_EQ(0, pthread_join(th[k], NULL));
        CHECK_RESULT(ATF_OK, p[k].rc);
    }
    snprintf(dir, cap, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    return !harness__failures_in_test;
}
#else
static int record_merge_session(int layout, uint64_t events, char *dir, size_t cap) {
    (void)layout, (void)events, (void)dir, (void)cap;
    printf("  merge_packed_session: skipped (ATF_NO_THREADS: no producer threads)\n");
    return 0;
}
#endif

/* Copies the directory tree `from` to `to` (files and directories). */
static void copy_tree(const char *from, const char *to) {
    DIR *d = opendir(from);
    struct dirent *e;
    CHECK(d != NULL);
    CHECK_EQ(0, mkdir(to, 0755));
    while (d && (e = readdir(d)) != NULL) {
        char a[1200], b[1200];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        if (stat(a, &st) == 0 && S_ISDIR(st.st_mode)) {
            copy_tree(a, b);
        } else {
            blob f = blob_read(a);
            CHECK(f.data != NULL);
            CHECK_EQ(0, write_file(b, f.data, f.size));
            free(f.data);
        }
    }
    if (d) closedir(d);
}

/* One item of a merge: what a caller sees of it. */
typedef struct merged {
    uint32_t slot;
    uint64_t seq;
    atf_index_event event;
    int gap;
} merged;

static merged merged_of(const atf_merge_item *it) {
    merged m;
    memset(&m, 0, sizeof m);
    m.slot = it->slot;
    m.seq = it->seq;
    m.event = it->event;
    m.gap = it->gap != NULL;
    return m;
}

static int merged_same(const merged *a, const merged *b) {
    return a->slot == b->slot && a->seq == b->seq && a->gap == b->gap &&
           a->event.timestamp_ns == b->event.timestamp_ns && a->event.function_id == b->event.function_id &&
           a->event.detail_seq == b->event.detail_seq && a->event.thread_id == b->event.thread_id &&
           a->event.call_depth == b->event.call_depth && a->event.kind == b->event.kind;
}

/* The whole sequence of a merge over r with filter f (after a seek to seek_ns when it is
 * not 0), into out (room for cap); the number of items. */
static size_t merge_collect(atf_session_reader *r, const atf_merge_filter *f, uint64_t seek_ns,
                            merged *out, size_t cap) {
    atf_merge m;
    atf_merge_item it;
    size_t n = 0;
    atf_result rc = atf_merge_init(&m, r, f);
    CHECK_RESULT(ATF_OK, rc);
    if (rc != ATF_OK) return 0;
    if (seek_ns) CHECK_RESULT(ATF_OK, atf_merge_seek(&m, seek_ns));
    while (atf_merge_next(&m, &it) == ATF_OK && n < cap) out[n++] = merged_of(&it);
    atf_merge_deinit(&m);
    return n;
}

/* Whether two collected sequences are the same (and where they first differ). */
static void check_merged_same(const char *what, const merged *want, size_t want_n, const merged *got,
                              size_t got_n) {
    size_t i;
    CHECK_EQ(want_n, got_n);
    for (i = 0; i < want_n && i < got_n; i++) {
        if (!merged_same(&want[i], &got[i])) {
            printf("  %s: item %zu differs: slot %u seq %" PRIu64 " ts %" PRIu64 ", expected slot %u seq %"
                   PRIu64 " ts %" PRIu64 "\n", what, i, got[i].slot, got[i].seq, got[i].event.timestamp_ns,
                   want[i].slot, want[i].seq, want[i].event.timestamp_ns);
            CHECK(0);
            return;
        }
    }
}

#if !defined(ATF_NO_THREADS)
/* A merge run by a thread of its own over a reader other merges use at the same time. */
typedef struct merge_runner {
    atf_session_reader *r;
    merged *out;
    size_t cap, n;
    atf_result rc;
} merge_runner;

static void *merge_runner_main(void *arg) {
    merge_runner *m = (merge_runner *)arg;
    atf_merge merge;
    atf_merge_item it;
    m->n = 0;
    m->rc = atf_merge_init(&merge, m->r, NULL);
    if (m->rc != ATF_OK) return NULL;
    while (atf_merge_next(&merge, &it) == ATF_OK && m->n < m->cap) m->out[m->n++] = merged_of(&it);
    atf_merge_deinit(&merge);
    return NULL;
}

/* atf_merge_init: "any number of merges may run over one reader, each used by one
 * thread at a time" (the threads checked and ordered first, by the merge before): two
 * merges over the packed reader at once, each in a thread, give the whole sequence. */
static void check_concurrent_merges(atf_session_reader *r, const merged *want, size_t want_n) {
    merge_runner m[2];
    pthread_t th[2];
    size_t k;
    for (k = 0; k < 2; k++) {
        m[k].r = r;
        m[k].cap = want_n + 1;
        m[k].out = (merged *)malloc(m[k].cap * sizeof *m[k].out);
        m[k].rc = ATF_E_STATE;
        CHECK(m[k].out != NULL);
    }
    if (m[0].out && m[1].out) {
        for (k = 0; k < 2; k++) CHECK_EQ(0, pthread_create(&th[k], NULL, merge_runner_main, &m[k]));
        for (k = 0; k < 2; k++) {
            CHECK_EQ(0, pthread_join(th[k], NULL));
            CHECK_RESULT(ATF_OK, m[k].rc);
            check_merged_same(k ? "second merge thread" : "first merge thread", want, want_n, m[k].out,
                              m[k].n);
        }
    }
    for (k = 0; k < 2; k++) free(m[k].out);
}
#endif

/* (d) A packed session recorded in-process (three producer threads of more than four
 * blocks each) and its copy with every index.atf unpacked merge into the same sequence:
 * whole, filtered by kind, by slot and by time, after seeks; two merges over the packed
 * reader stepped in turn, far apart in time, and two run at once by two threads, each
 * give theirs. The threads' order checks (stamps parsed from packed blocks) agree too. */
static void test_merge_packed_session(void) {
    uint64_t events = 5 * ATF_PACKED_BLOCK_EVENTS + 300;
    size_t cap = (size_t)(MERGE_THREADS * events + 16), want_n, got_n, i, f;
    char dir[1024], copy_dir[1100], path[1300];
    atf_session_reader packed, plain;
    merged *want = NULL, *got = NULL;
    uint32_t two_slots[2];
    atf_merge_filter filters[5];
    atf_error err;
    if (!record_merge_session(ATF_LAYOUT_PACKED, events, dir, sizeof dir)) return;
    snprintf(copy_dir, sizeof copy_dir, "%s_unpacked", dir);
    copy_tree(dir, copy_dir);
    for (i = 0; i < MERGE_THREADS; i++) {
        blob b;
        snprintf(path, sizeof path, "%s/thread_%zu/index.atf", copy_dir, i);
        memset(&err, 0, sizeof err);
        CHECK_RESULT(ATF_OK, atf_index_unpack(path, path, &err));
        b = blob_read(path);
        CHECK(b.size == ATF_HEADER_SIZE + events * ATF_INDEX_EVENT_SIZE + ATF_FOOTER_SIZE &&
              b.data[5] == ATF_LAYOUT_1);
        free(b.data);
    }
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&packed, dir, NULL));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&plain, copy_dir, NULL));
    CHECK_EQ(MERGE_THREADS, packed.thread_count);
    CHECK_EQ(MERGE_THREADS, plain.thread_count);
    want = (merged *)malloc(cap * sizeof *want);
    got = (merged *)malloc(cap * sizeof *got);
    if (!want || !got || packed.thread_count != MERGE_THREADS || plain.thread_count != MERGE_THREADS) {
        CHECK(0);
        goto done;
    }
    for (i = 0; i < MERGE_THREADS; i++) {
        CHECK(packed.threads[i].reader.index.packed && !plain.threads[i].reader.index.packed);
        CHECK_EQ(events, packed.threads[i].reader.index.event_count);
    }
    /* the order checks: one thread goes back in time (whichever slot it got), the others
     * do not */
    CHECK_EQ(1, atf_session_reader_check_order(&packed, NULL));
    CHECK_EQ(1, atf_session_reader_check_order(&plain, NULL));
    for (i = 0, f = 0; i < MERGE_THREADS; i++) {
        f += packed.threads[i].out_of_order == 1;
        CHECK_EQ(plain.threads[i].slot, packed.threads[i].slot);
        CHECK_EQ(plain.threads[i].out_of_order, packed.threads[i].out_of_order);
        CHECK_EQ(plain.threads[i].time_min_ns, packed.threads[i].time_min_ns);
        CHECK_EQ(plain.threads[i].time_max_ns, packed.threads[i].time_max_ns);
    }
    CHECK_EQ(1, f);

    memset(filters, 0, sizeof filters);
    filters[1].kinds = 1u << ATF_EVENT_CALL;
    two_slots[0] = 0;
    two_slots[1] = 2;
    filters[2].slots = two_slots;
    filters[2].slot_count = 2;
    filters[3].from_ns = 1000000 + 1500 * 100;           /* inside block 1 of patterns 0, 1 */
    filters[3].to_ns = 1000000 + 4200 * 100;             /* inside block 4 */
    filters[4].slots = two_slots + 1;                     /* thread 2 alone */
    filters[4].slot_count = 1;
    for (f = 0; f < 5; f++) {
        char what[64];
        uint64_t seeks[4] = { 0, 1000000 + 777 * 100, 1000000 + 3333 * 37, 0 };
        seeks[3] = 1000000 + (events - 10) * 100 - 1; /* the last events of patterns 0, 1 */
        for (i = 0; i < 4; i++) {
            snprintf(what, sizeof what, "filter %zu, seek %zu", f, i);
            want_n = merge_collect(&plain, &filters[f], seeks[i], want, cap);
            got_n = merge_collect(&packed, &filters[f], seeks[i], got, cap);
            check_merged_same(what, want, want_n, got, got_n);
            if (f == 0 && i == 0) CHECK_EQ(MERGE_THREADS * events, want_n);
            if (f == 0 && i == 3) CHECK(want_n > 0 && want_n < MERGE_THREADS * events);
        }
    }

    /* two merges over the packed reader, stepped in turn: each gives its whole sequence */
    want_n = merge_collect(&plain, NULL, 0, want, cap);
    got_n = merge_collect(&plain, NULL, 1000000 + 2500 * 100, got, cap);
    CHECK(got_n > 0 && got_n < want_n);
    {
        atf_merge a, b;
        atf_merge_item ia, ib;
        size_t n = 0, nb = 0;
        atf_result ra = atf_merge_init(&a, &packed, NULL), rb = atf_merge_init(&b, &packed, NULL);
        CHECK_RESULT(ATF_OK, ra);
        CHECK_RESULT(ATF_OK, rb);
        if (ra != ATF_OK || rb != ATF_OK) {
            if (ra == ATF_OK) atf_merge_deinit(&a);
            if (rb == ATF_OK) atf_merge_deinit(&b);
            goto done;
        }
        CHECK_RESULT(ATF_OK, atf_merge_seek(&b, 1000000 + 2500 * 100)); /* b runs behind a's blocks */
        for (i = 0; i < want_n; i++) {
            merged x;
            if (n < want_n) { /* a: every item */
                CHECK_RESULT(ATF_OK, atf_merge_next(&a, &ia));
                x = merged_of(&ia);
                if (!merged_same(&want[n], &x)) {
                    printf("  two merges: item %zu of the first differs\n", n);
                    CHECK(0);
                    break;
                }
                n++;
            }
            if (nb < got_n) { /* b: the items at or past its seek */
                CHECK_RESULT(ATF_OK, atf_merge_next(&b, &ib));
                x = merged_of(&ib);
                if (!merged_same(&got[nb], &x)) {
                    printf("  two merges: item %zu of the second differs\n", nb);
                    CHECK(0);
                    break;
                }
                nb++;
            }
        }
        CHECK_EQ(want_n, n);
        CHECK_EQ(got_n, nb);
        CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&b, &ib));
        CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&a, &ia));
        atf_merge_deinit(&a);
        atf_merge_deinit(&b);
    }
#if !defined(ATF_NO_THREADS)
    check_concurrent_merges(&packed, want, want_n);
#endif
done:
    free(want);
    free(got);
    atf_session_reader_close(&packed);
    atf_session_reader_close(&plain);
}

/* (e) Seeks on a packed file give the positions (and probes) of its layout-1 twin for
 * every timestamp around every 5th event and the ends, whatever block the reader read
 * last; and on a time-ordered hand-built file (blocks of 16, runs of equal stamps), the
 * first event at or past each time. */
static void test_seek_packed(void) {
    uint64_t events = 6 * ATF_PACKED_BLOCK_EVENTS + 300, i, d, n = 1000, ts_last = 0;
    twins t;
    atf_index_reader a, b;
    uint8_t *copy_a, *copy_b;
    blob l1, packed;
    uint32_t sizes[63];
    if (!twins_record(&t, events)) {
        twins_free(&t);
        return;
    }
    CHECK_RESULT(ATF_OK, open_copy(&a, t.l1.data, t.l1.size, &copy_a));
    CHECK_RESULT(ATF_OK, open_copy(&b, t.packed.data, t.packed.size, &copy_b));
    CHECK(!a.packed && b.packed);
    CHECK_EQ(events, a.event_count);
    CHECK_EQ(events, b.event_count);
    rng_seed(0x5345454bu);
    for (i = 0; i < events + 2 && a.event_count == events && b.event_count == events; i += 5) {
        uint64_t ts = i < events ? le64(t.l1.data + ATF_HEADER_SIZE + i * 32) : i == events ? 0 : UINT64_MAX;
        for (d = 0; d < 3; d++) {
            uint64_t at = ts + d - 1, pa, pb, qa = 0, qb = 0; /* ts - 1, ts, ts + 1 (wrapping) */
            pa = atf_index_reader_seek(&a, at, &qa);
            (void)atf_index_reader_raw(&b, rng_below((size_t)events)); /* some block read last */
            pb = atf_index_reader_seek(&b, at, &qb);
            if (pa != pb || qa != qb) {
                printf("  seek to %" PRIu64 ": %" PRIu64 " (%" PRIu64 " probes), layout 1 %" PRIu64
                       " (%" PRIu64 ")\n", at, pb, qb, pa, qa);
                CHECK(0);
                i = events + 2;
                break;
            }
        }
    }
    atf_index_reader_close(&a);
    atf_index_reader_close(&b);
    free(copy_a);
    free(copy_b);

    /* a time-ordered file: n records, stamps in runs of three equal ones, a jump now and then */
    l1.size = ATF_HEADER_SIZE + n * ATF_INDEX_EVENT_SIZE + ATF_FOOTER_SIZE;
    l1.data = (uint8_t *)calloc(1, l1.size);
    if (!l1.data) {
        twins_free(&t);
        return;
    }
    memcpy(l1.data, t.l1.data, ATF_HEADER_SIZE);
    for (i = 0; i < n; i++) {
        ts_last += i % 3 ? 0 : i % 90 == 0 ? 100000 : 10;
        put_record(l1.data + ATF_HEADER_SIZE + i * 32, ts_last, 0x10 + i % 5, 7, 1 + (uint32_t)(i % 2),
                   (uint32_t)(i % 4), ATF_NO_DETAIL_U32);
    }
    for (i = 0; i < 63; i++) sizes[i] = 16;
    sizes[62] = (uint32_t)(n - 62 * 16); /* 8 */
    packed = build_packed(&l1, 16, sizes, 63);
    CHECK_RESULT(ATF_OK, open_copy(&b, packed.data, packed.size, &copy_b));
    CHECK_EQ(n, b.event_count);
    for (i = 0; i < n + 1 && b.event_count == n; i++) {
        uint64_t ts = i < n ? le64(l1.data + ATF_HEADER_SIZE + i * 32) : ts_last + 1;
        for (d = 0; d < 2; d++) {
            uint64_t at = ts - d, want = 0, probes = 0, got;
            while (want < n && le64(l1.data + ATF_HEADER_SIZE + want * 32) < at) want++;
            (void)atf_index_reader_raw(&b, (i * 37) % n);
            got = atf_index_reader_seek(&b, at, &probes);
            if (got != want) {
                printf("  ordered file, seek to %" PRIu64 ": %" PRIu64 ", expected %" PRIu64 "\n", at, got,
                       want);
                CHECK(0);
                i = n + 1;
                break;
            }
            CHECK(probes <= 10); /* ceil(log2(1001)) */
        }
    }
    atf_index_reader_close(&b);
    free(copy_b);
    free(packed.data);
    free(l1.data);
    twins_free(&t);
}

static const test_case tests[] = {
    { "golden_round_trip", test_golden_round_trip },
    { "session_twins", test_session_twins },
    { "thread_reader_packed", test_thread_reader_packed },
    { "convert_refusals", test_convert_refusals },
    { "torn", test_torn },
    { "crash_between_stage_writes", test_crash_between_stage_writes },
    { "flipped_byte", test_flipped_byte },
    { "block_rules", test_block_rules },
    { "codec_kinds", test_codec_kinds },
    { "codec_depths", test_codec_depths },
    { "codec_links", test_codec_links },
    { "codec_threads", test_codec_threads },
    { "codec_timestamps", test_codec_timestamps },
    { "codec_function_ids", test_codec_function_ids },
    { "codec_sizes", test_codec_sizes },
    { "codec_exact_bytes", test_codec_exact_bytes },
    { "codec_random", test_codec_random },
    { "decode_refusals", test_decode_refusals },
    { "cache_block_orders", test_cache_block_orders },
    { "cache_raw_pointer", test_cache_raw_pointer },
    { "cache_damaged_block", test_cache_damaged_block },
    { "merge_packed_session", test_merge_packed_session },
    { "seek_packed", test_seek_packed },
    { "convert_without_err", test_convert_without_err }, /* last: see there */
};

int main(int argc, char **argv) {
    int rc;
    if (scratch_dir_make(scratch, sizeof scratch, "packed") != 0) return 1;
    rc = harness_run("packed", tests, sizeof tests / sizeof tests[0], argc, argv);
    remove_tree(scratch);
    return rc;
}
