/* test_recover.c - recovery of what a crash leaves (atf_recover_file, atf_recover_thread_dir,
 * atf_recover_session_dir). A session is recorded with the library, then its files are put
 * back into the states a crash leaves (placeholder header, cut at many points: inside an
 * event, inside the footer, no footer; detail ahead of index; windowed links not patched
 * in yet; a torn gap record). After recovery the readers must find every file finalized
 * with its CRC32-C, exactly the complete events kept, every link exact both ways, and a
 * second recovery must change nothing. Damage a crash cannot leave, random bytes and
 * truncated files must fail cleanly and leave the files as they were. */
#include "atf.h"
#include "tests/harness.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/posix_compat.h"
#include "tests/scratch_dir.h"

static char scratch[512];
static atf_recover_options no_sync; /* the loops that recover many times skip the fsyncs */

/* ---- files ------------------------------------------------------------------------------ */

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob;

/* The whole file (data NULL, size 0 when it cannot be read); the caller frees data. */
static blob blob_read(const char *path) {
    blob b = { NULL, 0 };
    b.data = (uint8_t *)read_file(path, &b.size);
    if (!b.data) b.size = 0;
    return b;
}

static void blob_write(const char *path, const uint8_t *data, size_t n) {
    CHECK_EQ(0, write_file(path, data, n));
}

/* Whether the file at path holds exactly b. */
static int file_is(const char *path, const blob *b) {
    blob now = blob_read(path);
    int same = now.data && now.size == b->size && memcmp(now.data, b->data, b->size) == 0;
    free(now.data);
    return same;
}

static void join(char *out, size_t cap, const char *dir, const char *leaf) {
    snprintf(out, cap, "%s/%s", dir, leaf);
}

/* ---- a recorded thread -------------------------------------------------------------------- */

/* A closed session's thread: its files as the writer's close left them. */
typedef struct recorded {
    blob index, detail;          /* detail.size 0 when the thread has none */
    uint64_t events, records;
    int layout;
} recorded;

/* Records `events` events on one thread (detail on every third when `with_detail`) and
 * keeps the closed files. Timestamps are strictly increasing. */
static int record(recorded *out, int layout, uint64_t events, int with_detail) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL;
    char name[64], path[1200];
    uint8_t payload[40];
    uint64_t i, base = 5000000;
    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    memset(payload, 0x5A, sizeof payload);
    c.layout = (uint32_t)layout;
    c.detail_mode = with_detail ? ATF_DETAIL_ALWAYS : ATF_DETAIL_OFF;
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.fsync_mode = ATF_FSYNC_NONE;
    snprintf(name, sizeof name, "rec_%d_%llu_%d", layout, (unsigned long long)events, with_detail);
    c.session_name = name;
    CHECK_RESULT(ATF_OK, atf_session_open(&s, scratch, &c));
    if (!s) return 0;
    CHECK_RESULT(ATF_OK, atf_session_attach(s, "rec", &w));
    for (i = 0; i < events && w; i++) {
        uint64_t fid = 0x100000000ull | (i % 97), ts = base + i * 10;
        uint32_t kind = i % 2 ? ATF_EVENT_RETURN : ATF_EVENT_CALL;
        payload[0] = (uint8_t)i;
        if (with_detail && i % 3 == 0)
            CHECK_RESULT(ATF_OK, atf_producer_event_detail(w, kind, fid, ts,
                                                         kind == ATF_EVENT_CALL ? 3 : 4, payload,
                                                         8 + (size_t)(i % 32)));
        else if (kind == ATF_EVENT_CALL)
            CHECK_RESULT(ATF_OK, atf_producer_call(w, fid, ts));
        else
            CHECK_RESULT(ATF_OK, atf_producer_return(w, fid, ts));
        if (i % 64 == 63) CHECK_RESULT(ATF_OK, atf_session_pump(s));
    }
    atf_session_detach(s);
    snprintf(path, sizeof path, "%s/thread_0/index.atf", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_close(s));
    out->index = blob_read(path);
    memcpy(path + strlen(path) - strlen("index.atf"), "detail.atf", sizeof "detail.atf");
    if (with_detail) out->detail = blob_read(path);
    out->events = events;
    out->layout = layout;
    if (out->detail.size) {
        atf_detail_reader dr;
        CHECK_RESULT(ATF_OK, atf_detail_reader_open_memory(&dr, out->detail.data, out->detail.size, "d", NULL));
        out->records = dr.event_count;
        atf_detail_reader_close(&dr);
    }
    CHECK(out->index.size == ATF_HEADER_SIZE + events * 32 + ATF_FOOTER_SIZE);
    CHECK(!with_detail || out->records == (events + 2) / 3);
    return out->index.size != 0 && !harness__failures_in_test;
}

static void recorded_free(recorded *r) {
    free(r->index.data);
    free(r->detail.data);
}

/* The header as it was written at open: identity fields, no counts (what a crash leaves). */
static void placeholder_index(uint8_t *file) {
    atf_index_header h;
    atf_index_header_decode(file, &h);
    h.flags = 0;
    h.event_count = h.footer_offset = h.time_start_ns = h.time_end_ns = 0;
    atf_index_header_encode(&h, file);
}

static void placeholder_detail(uint8_t *file) {
    atf_detail_header h;
    atf_detail_header_decode(file, &h);
    h.event_count = h.bytes_length = h.index_seq_start = h.index_seq_end = 0;
    atf_detail_header_encode(&h, file);
}

/* Writes the first `events_bytes` bytes after the header of a closed file (events, then
 * the footer) under a placeholder header: a crash at that moment of the recording. */
static void write_crashed(const char *path, const blob *closed, size_t events_bytes, int is_detail) {
    uint8_t *copy = (uint8_t *)malloc(closed->size);
    if (!copy) return;
    memcpy(copy, closed->data, closed->size);
    if (is_detail) placeholder_detail(copy);
    else placeholder_index(copy);
    blob_write(path, copy, ATF_HEADER_SIZE + events_bytes);
    free(copy);
}

/* A fresh thread directory `name` under the scratch directory. */
static void make_thread_dir(char *dir, size_t cap, const char *name) {
    snprintf(dir, cap, "%s/%s", scratch, name);
    remove_tree(dir);
    mkdir(dir, 0755);
}

/* Byte offsets of the records of a detail file, and their index_seq. */
static uint64_t detail_records(const blob *detail, uint64_t *offsets, uint64_t *seqs, uint64_t cap) {
    atf_detail_reader dr;
    uint64_t i, n = 0;
    if (atf_detail_reader_open_memory(&dr, detail->data, detail->size, "d", NULL) != ATF_OK) return 0;
    for (i = 0; i < dr.event_count && i < cap; i++, n++) {
        atf_detail_event d;
        atf_detail_reader_get(&dr, i, &d);
        offsets[i] = d.offset;
        seqs[i] = d.header.index_seq;
    }
    atf_detail_reader_close(&dr);
    return n;
}

/* Every file of thread `dir` is finalized with a verified CRC and its links agree both
 * ways; the index holds `events` events equal to the first ones of `rec` (links aside). */
static void check_finalized(const char *dir, const recorded *rec, uint64_t events) {
    atf_thread_reader tr;
    atf_reader_options o;
    uint64_t i;
    memset(&o, 0, sizeof o);
    o.verify_crc = 1;
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, dir, &o));
    CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
    CHECK_EQ(events ? ATF_CRC_OK : ATF_CRC_NOT_COMPUTED, tr.index.crc_state);
    CHECK_EQ(events, tr.index.event_count);
    CHECK_EQ(0, tr.index.torn_bytes);
    CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
    CHECK_EQ(tr.has_detail, (tr.index.header.flags & ATF_INDEX_FLAG_HAS_DETAIL_FILE) != 0);
    if (tr.has_detail) {
        CHECK_EQ(ATF_COUNT_FINALIZED, tr.detail.counted);
        CHECK_EQ(ATF_CRC_OK, tr.detail.crc_state);
        CHECK(tr.detail.event_count > 0);
    }
    for (i = 0; i < tr.index.event_count && i < rec->events; i++) {
        const uint8_t *a = atf_index_reader_raw(&tr.index, i), *b = rec->index.data + 64 + i * 32;
        /* all but the link field (layout 1: bytes 28..31, layout 2: 16..23) */
        size_t link = rec->layout == ATF_LAYOUT_2 ? 16 : 28, width = rec->layout == ATF_LAYOUT_2 ? 8 : 4;
        if (memcmp(a, b, link) != 0 || memcmp(a + link + width, b + link + width, 32 - link - width) != 0) {
            CHECK_EQ(i, UINT64_MAX); /* names the first event that differs */
            break;
        }
    }
    if (events) {
        atf_index_event first, last;
        atf_index_reader_get(&tr.index, 0, &first);
        atf_index_reader_get(&tr.index, events - 1, &last);
        CHECK_EQ(first.timestamp_ns, tr.index.header.time_start_ns);
        CHECK_EQ(last.timestamp_ns, tr.index.header.time_end_ns);
    }
    atf_thread_reader_close(&tr);
}

/* A second recovery of `dir` finds nothing to do and changes no byte. */
static void check_second_recovery_noop(const char *dir) {
    char ipath[1200], dpath[1200];
    blob index, detail;
    atf_recover_report rep;
    size_t i;
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    index = blob_read(ipath);
    detail = blob_read(dpath);
    CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, &no_sync, &rep));
    CHECK_EQ(0, rep.changed);
    CHECK_EQ(0, rep.failed);
    for (i = 0; i < rep.item_count; i++) CHECK_EQ(ATF_RECOVER_NOTHING, rep.items[i].action);
    atf_recover_report_deinit(&rep);
    CHECK(file_is(ipath, &index));
    if (detail.data) CHECK(file_is(dpath, &detail));
    free(index.data);
    free(detail.data);
}

static const atf_recover_item *find_item(const atf_recover_report *r, atf_recover_kind kind) {
    size_t i;
    for (i = 0; i < r->item_count; i++)
        if (r->items[i].kind == kind) return &r->items[i];
    return NULL;
}

/* ---- index cut at every kind of point ------------------------------------------------------ */

static void torn_index_run(int layout) {
    recorded rec;
    char dir[600], ipath[700];
    uint64_t events = 40, span, j;
    if (!record(&rec, layout, events, 0)) return;
    make_thread_dir(dir, sizeof dir, "torn_index");
    join(ipath, sizeof ipath, dir, "index.atf");
    span = events * 32 + ATF_FOOTER_SIZE;
    for (j = 0; j <= span && !harness__failures_in_test; j += j < 96 || j + 96 > span ? 1 : 3) {
        atf_recover_report rep;
        const atf_recover_item *it;
        uint64_t kept = j / 32 < events ? j / 32 : events;
        write_crashed(ipath, &rec.index, (size_t)j, 0);
        CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, j % 50 ? &no_sync : NULL, &rep));
        CHECK_EQ(1, rep.item_count);
        it = find_item(&rep, ATF_RECOVER_INDEX);
        CHECK(it != NULL);
        if (it) {
            CHECK_EQ(ATF_RECOVER_FINALIZE, it->action);
            CHECK_EQ(j == span ? ATF_COUNT_FOOTER_AT_END : ATF_COUNT_FROM_SIZE, it->found);
            CHECK_EQ(kept, it->records);
            CHECK_EQ(j - kept * 32, it->bytes_cut);
            CHECK_EQ(64 + kept * 32, it->footer_offset);
        }
        atf_recover_report_deinit(&rep);
        check_finalized(dir, &rec, kept);
        /* all events there: exactly the file the writer's close wrote */
        if (kept == events) CHECK(file_is(ipath, &rec.index));
        if (j % 37 == 0 || j == span) check_second_recovery_noop(dir);
    }
    recorded_free(&rec);
}

static void test_torn_index_l1(void) { torn_index_run(ATF_LAYOUT_1); }
static void test_torn_index_l2(void) { torn_index_run(ATF_LAYOUT_2); }

/* ---- detail ahead of index, both cut ------------------------------------------------------- */

static void detail_ahead_run(int layout) {
    recorded rec;
    char dir[600], ipath[700], dpath[700];
    uint64_t offsets[64], seqs[64], n, ki, trial = 0;
    if (!record(&rec, layout, 60, 1)) return;
    n = detail_records(&rec.detail, offsets, seqs, 64);
    CHECK_EQ(rec.records, n);
    make_thread_dir(dir, sizeof dir, "detail_ahead");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    for (ki = 0; ki <= rec.events && !harness__failures_in_test; ki += 7) {
        uint64_t jd, dspan = rec.detail.size - ATF_HEADER_SIZE;
        for (jd = 0; jd <= dspan && !harness__failures_in_test; jd += 1 + jd % 29) {
            atf_recover_report rep;
            const atf_recover_item *ix, *dx;
            uint64_t whole = 0, kept = 0, cleared = 0, i, torn_index = (ki * 5) % 32;
            /* records that end inside the cut are whole (the last ends where the footer starts) */
            while (whole < n && (whole + 1 < n ? offsets[whole + 1] : rec.detail.size - 64) - 64 <= jd)
                whole++;
            while (kept < whole && seqs[kept] < ki) kept++;
            for (i = 0; i < ki; i++)
                if (i % 3 == 0 && i / 3 >= kept) cleared++;
            if (ki == rec.events) torn_index = 0;
            write_crashed(ipath, &rec.index, (size_t)(ki * 32 + torn_index), 0);
            write_crashed(dpath, &rec.detail, (size_t)jd, 1);
            CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, &no_sync, &rep));
            ix = find_item(&rep, ATF_RECOVER_INDEX);
            dx = find_item(&rep, ATF_RECOVER_DETAIL);
            CHECK(ix && dx);
            if (ix && dx) {
                CHECK(rep.items == dx); /* detail first */
                CHECK_EQ(ki, ix->records);
                CHECK_EQ(cleared, ix->links_cleared);
                CHECK_EQ(0, ix->links_restored);
                CHECK_EQ(kept ? ATF_RECOVER_FINALIZE : ATF_RECOVER_REMOVE, dx->action);
                CHECK_EQ(kept, dx->records);
                CHECK_EQ(whole - kept, dx->records_cut);
            }
            atf_recover_report_deinit(&rep);
            CHECK_EQ(kept != 0, path_exists(dpath));
            check_finalized(dir, &rec, ki);
            if (trial++ % 11 == 0) check_second_recovery_noop(dir);
        }
    }
    recorded_free(&rec);
}

static void test_detail_ahead_l1(void) { detail_ahead_run(ATF_LAYOUT_1); }
static void test_detail_ahead_l2(void) { detail_ahead_run(ATF_LAYOUT_2); }

/* ---- windowed links not patched in yet ----------------------------------------------------- */

/* Index events whose detail record reached detail.atf but whose link was still to be
 * patched into index.atf: recovery restores the links, and the file is the closed one. */
static void pending_links_run(int layout) {
    recorded rec;
    char dir[600], ipath[700], dpath[700];
    uint64_t pending;
    size_t link = layout == ATF_LAYOUT_2 ? 16 : 28, width = layout == ATF_LAYOUT_2 ? 8 : 4;
    if (!record(&rec, layout, 45, 1)) return;
    make_thread_dir(dir, sizeof dir, "pending");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    for (pending = 1; pending <= 4 && !harness__failures_in_test; pending++) {
        atf_recover_report rep;
        const atf_recover_item *ix, *dx;
        uint8_t *copy = (uint8_t *)malloc(rec.index.size);
        uint64_t p, seq;
        if (!copy) return;
        memcpy(copy, rec.index.data, rec.index.size);
        placeholder_index(copy);
        for (p = 0; p < pending; p++) { /* the last linked events: 42, 39, ... */
            seq = 42 - 3 * p;
            memset(copy + 64 + seq * 32 + link, 0xFF, width);
        }
        blob_write(ipath, copy, rec.index.size - 64); /* the footer comes after the patches */
        blob_write(dpath, rec.detail.data, rec.detail.size);
        free(copy);
        CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, NULL, &rep));
        ix = find_item(&rep, ATF_RECOVER_INDEX);
        dx = find_item(&rep, ATF_RECOVER_DETAIL);
        CHECK(ix && dx);
        if (ix && dx) {
            CHECK_EQ(ATF_RECOVER_NOTHING, dx->action);
            CHECK_EQ(ATF_RECOVER_FINALIZE, ix->action);
            CHECK_EQ(pending, ix->links_restored);
            CHECK_EQ(0, ix->links_cleared);
        }
        atf_recover_report_deinit(&rep);
        CHECK(file_is(ipath, &rec.index));
        check_finalized(dir, &rec, rec.events);
        check_second_recovery_noop(dir);
    }
    recorded_free(&rec);
}

static void test_pending_links_l1(void) { pending_links_run(ATF_LAYOUT_1); }
static void test_pending_links_l2(void) { pending_links_run(ATF_LAYOUT_2); }

/* A link a crash cannot break that way (the unlinked event's timestamp differs from its
 * record's) is damage: nothing changes. */
static void test_pending_link_mismatch_is_damage(void) {
    recorded rec;
    char dir[600], ipath[700], dpath[700];
    atf_recover_report rep;
    blob before;
    uint8_t *copy;
    if (!record(&rec, ATF_LAYOUT_1, 45, 1)) return;
    make_thread_dir(dir, sizeof dir, "pending_bad");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    copy = (uint8_t *)malloc(rec.index.size);
    if (!copy) return;
    memcpy(copy, rec.index.data, rec.index.size);
    placeholder_index(copy);
    memset(copy + 64 + 42 * 32 + 28, 0xFF, 4);
    copy[64 + 42 * 32] ^= 1; /* its timestamp */
    blob_write(ipath, copy, rec.index.size - 64);
    blob_write(dpath, rec.detail.data, rec.detail.size);
    before = blob_read(ipath);
    CHECK_RESULT(ATF_E_CORRUPT, atf_recover_thread_dir(dir, NULL, &rep));
    CHECK_EQ(1, rep.failed);
    CHECK_EQ(0, rep.changed);
    CHECK_EQ(1, rep.item_count);
    if (rep.item_count) {
        CHECK_EQ(ATF_RECOVER_FAIL, rep.items[0].action);
        CHECK_EQ(ATF_RECOVER_DETAIL, rep.items[0].kind);
        CHECK_RESULT(ATF_E_CORRUPT, rep.items[0].error.code);
        CHECK(rep.items[0].error.offset >= 64);
    }
    CHECK_RESULT(ATF_E_CORRUPT, rep.error.code);
    CHECK(strcmp(rep.error.path, dpath) == 0);
    atf_recover_report_deinit(&rep);
    CHECK(file_is(ipath, &before));
    CHECK(file_is(dpath, &rec.detail));
    free(copy);
    free(before.data);
    recorded_free(&rec);
}

/* ---- dry run, checksum states, lone files ---------------------------------------------------- */

static void test_dry_run_changes_nothing(void) {
    recorded rec;
    char dir[600], ipath[700], dpath[700];
    atf_recover_report dry, real;
    atf_recover_options o;
    blob ib, db;
    size_t i;
    if (!record(&rec, ATF_LAYOUT_1, 50, 1)) return;
    make_thread_dir(dir, sizeof dir, "dry");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    write_crashed(ipath, &rec.index, 40 * 32 + 9, 0);
    write_crashed(dpath, &rec.detail, rec.detail.size - 64 - 70, 1);
    ib = blob_read(ipath);
    db = blob_read(dpath);
    memset(&o, 0, sizeof o);
    o.dry_run = 1;
    CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, &o, &dry));
    CHECK(file_is(ipath, &ib));
    CHECK(file_is(dpath, &db));
    CHECK_EQ(2, dry.changed);
    CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, NULL, &real));
    CHECK_EQ(dry.item_count, real.item_count);
    for (i = 0; i < dry.item_count && i < real.item_count; i++) {
        CHECK_EQ(dry.items[i].action, real.items[i].action);
        CHECK_EQ(dry.items[i].records, real.items[i].records);
        CHECK_EQ(dry.items[i].bytes_cut, real.items[i].bytes_cut);
        CHECK_EQ(dry.items[i].records_cut, real.items[i].records_cut);
        CHECK_EQ(dry.items[i].links_cleared, real.items[i].links_cleared);
        CHECK_EQ(dry.items[i].crc, real.items[i].crc);
    }
    atf_recover_report_deinit(&dry);
    atf_recover_report_deinit(&real);
    check_finalized(dir, &rec, 40);
    free(ib.data);
    free(db.data);
    recorded_free(&rec);
}

/* A closed file whose footer says "not computed" gets its CRC32-C, nothing else. */
static void test_checksum_zero_filled(void) {
    recorded rec;
    char path[600];
    atf_recover_report rep;
    uint8_t *copy;
    if (!record(&rec, ATF_LAYOUT_2, 30, 0)) return;
    snprintf(path, sizeof path, "%s/crc0.atf", scratch);
    copy = (uint8_t *)malloc(rec.index.size);
    if (!copy) return;
    memcpy(copy, rec.index.data, rec.index.size);
    memset(copy + rec.index.size - 64 + 4, 0, 4); /* footer checksum */
    blob_write(path, copy, rec.index.size);
    CHECK_RESULT(ATF_OK, atf_recover_file(path, NULL, &rep));
    CHECK_EQ(1, rep.item_count);
    if (rep.item_count) {
        CHECK_EQ(ATF_RECOVER_FILL_CRC, rep.items[0].action);
        CHECK_EQ(ATF_COUNT_FINALIZED, rep.items[0].found);
        CHECK_EQ(atf_crc32c(rec.index.data + 64, 30 * 32), rep.items[0].crc);
    }
    atf_recover_report_deinit(&rep);
    CHECK(file_is(path, &rec.index));
    free(copy);
    recorded_free(&rec);
}

/* A footer whose CRC does not match its events is damage, not a crash: the file stays. */
static void test_crc_mismatch_left_alone(void) {
    recorded rec;
    char path[600];
    int at_end;
    if (!record(&rec, ATF_LAYOUT_1, 30, 0)) return;
    snprintf(path, sizeof path, "%s/badcrc.atf", scratch);
    for (at_end = 0; at_end < 2; at_end++) {
        atf_recover_report rep;
        blob before;
        uint8_t *copy = (uint8_t *)malloc(rec.index.size);
        if (!copy) return;
        memcpy(copy, rec.index.data, rec.index.size);
        if (at_end) placeholder_index(copy);
        copy[64 + 5 * 32 + 9] ^= 0x40;
        blob_write(path, copy, rec.index.size);
        before = blob_read(path);
        CHECK_RESULT(ATF_E_CRC, atf_recover_file(path, NULL, &rep));
        CHECK_EQ(1, rep.failed);
        CHECK(rep.item_count == 1 && rep.items[0].action == ATF_RECOVER_FAIL);
        CHECK(strcmp(rep.error.path, path) == 0);
        CHECK(rep.error.has_values);
        atf_recover_report_deinit(&rep);
        CHECK(file_is(path, &before));
        free(before.data);
        free(copy);
    }
    recorded_free(&rec);
}

/* Lone files: an index beside a detail.atf gets the flag; a detail file alone is cut and
 * finalized like in its directory. */
static void test_lone_files(void) {
    recorded rec;
    char dir[600], ipath[700], dpath[700];
    atf_recover_report rep;
    atf_index_reader ir;
    atf_detail_reader dr;
    if (!record(&rec, ATF_LAYOUT_1, 30, 1)) return;
    make_thread_dir(dir, sizeof dir, "lone");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    write_crashed(ipath, &rec.index, 30 * 32 + 3, 0);
    write_crashed(dpath, &rec.detail, rec.detail.size - 64 - 64 - 5, 1);
    CHECK_RESULT(ATF_OK, atf_recover_file(ipath, NULL, &rep));
    CHECK(rep.item_count == 1 && rep.items[0].kind == ATF_RECOVER_INDEX);
    atf_recover_report_deinit(&rep);
    CHECK(file_is(ipath, &rec.index)); /* all 30 events: the closed file, flag included */
    CHECK_RESULT(ATF_OK, atf_recover_file(dpath, NULL, &rep));
    CHECK(rep.item_count == 1 && rep.items[0].kind == ATF_RECOVER_DETAIL);
    if (rep.item_count) {
        CHECK_EQ(ATF_RECOVER_FINALIZE, rep.items[0].action);
        CHECK_EQ(rec.records - 1, rep.items[0].records);
    }
    atf_recover_report_deinit(&rep);
    CHECK_RESULT(ATF_OK, atf_index_reader_open(&ir, ipath, NULL));
    CHECK_EQ(ATF_INDEX_FLAG_HAS_DETAIL_FILE, ir.header.flags);
    atf_index_reader_close(&ir);
    CHECK_RESULT(ATF_OK, atf_detail_reader_open(&dr, dpath, NULL));
    CHECK_EQ(ATF_COUNT_FINALIZED, dr.counted);
    CHECK_RESULT(ATF_OK, atf_detail_reader_verify_crc(&dr));
    CHECK_EQ(ATF_CRC_OK, dr.crc_state);
    CHECK_EQ(rec.records - 1, dr.event_count);
    atf_detail_reader_close(&dr);
    recorded_free(&rec);
}

/* ---- gaps.atf -------------------------------------------------------------------------------- */

static void write_gaps(const char *path, const atf_gap *gaps, size_t n, size_t torn) {
    uint8_t buf[16 + 8 * 32];
    size_t i;
    atf_gaps_header_encode(7, buf);
    for (i = 0; i < n; i++) atf_gap_encode(&gaps[i], buf + 16 + i * 32);
    memset(buf + 16 + n * 32, 0x33, torn);
    blob_write(path, buf, 16 + n * 32 + torn);
}

static void test_gaps_torn_record_cut(void) {
    recorded rec;
    char dir[600], ipath[700], gpath[700];
    atf_recover_report rep;
    atf_thread_reader tr;
    atf_gap g[2];
    const atf_recover_item *gx;
    if (!record(&rec, ATF_LAYOUT_1, 30, 0)) return;
    make_thread_dir(dir, sizeof dir, "gaps");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(gpath, sizeof gpath, dir, "gaps.atf");
    memset(g, 0, sizeof g);
    g[0].index_seq = 10, g[0].index_lost = 4, g[0].reason = ATF_GAP_DROPPED;
    g[1].index_seq = 30, g[1].index_lost = 2, g[1].reason = ATF_GAP_DROPPED;
    write_crashed(ipath, &rec.index, 30 * 32 + 11, 0);
    write_gaps(gpath, g, 2, 13);
    CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, NULL, &rep));
    gx = find_item(&rep, ATF_RECOVER_GAPS);
    CHECK(gx != NULL);
    if (gx) {
        CHECK_EQ(ATF_RECOVER_CUT, gx->action);
        CHECK_EQ(2, gx->records);
        CHECK_EQ(13, gx->bytes_cut);
    }
    CHECK_EQ(2, rep.changed);
    atf_recover_report_deinit(&rep);
    {
        blob b = blob_read(gpath);
        CHECK_EQ(16 + 2 * 32, b.size);
        free(b.data);
    }
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, dir, NULL));
    CHECK_EQ(2, tr.gap_count);
    CHECK_EQ(6, tr.events_lost);
    CHECK_RESULT(ATF_OK, tr.error.code);
    atf_thread_reader_close(&tr);
    check_finalized(dir, &rec, 30);
    check_second_recovery_noop(dir);
    /* a whole gaps.atf (even with a gap at the end) is left as it is */
    {
        blob b = blob_read(gpath);
        CHECK_RESULT(ATF_OK, atf_recover_file(gpath, NULL, &rep));
        CHECK(rep.item_count == 1 && rep.items[0].action == ATF_RECOVER_NOTHING);
        atf_recover_report_deinit(&rep);
        CHECK(file_is(gpath, &b));
        free(b.data);
    }
    recorded_free(&rec);
}

/* A gap record no writer writes (index_lost 0) is damage: the whole thread stays. */
static void test_gaps_damage_left_alone(void) {
    recorded rec;
    char dir[600], ipath[700], gpath[700];
    atf_recover_report rep;
    atf_gap g[2];
    blob ib, gb;
    if (!record(&rec, ATF_LAYOUT_2, 30, 0)) return;
    make_thread_dir(dir, sizeof dir, "gaps_bad");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(gpath, sizeof gpath, dir, "gaps.atf");
    memset(g, 0, sizeof g);
    g[0].index_seq = 10, g[0].index_lost = 4, g[0].reason = ATF_GAP_DROPPED;
    g[1].index_seq = 12, g[1].index_lost = 0, g[1].reason = ATF_GAP_DROPPED;
    write_crashed(ipath, &rec.index, 30 * 32 + 11, 0);
    write_gaps(gpath, g, 2, 5);
    ib = blob_read(ipath);
    gb = blob_read(gpath);
    CHECK_RESULT(ATF_E_CORRUPT, atf_recover_thread_dir(dir, NULL, &rep));
    CHECK(rep.item_count == 1 && rep.items[0].kind == ATF_RECOVER_GAPS);
    CHECK_EQ(0, rep.changed);
    CHECK_EQ(16 + 32, rep.error.offset);
    atf_recover_report_deinit(&rep);
    CHECK(file_is(ipath, &ib));
    CHECK(file_is(gpath, &gb));
    free(ib.data);
    free(gb.data);
    recorded_free(&rec);
}

/* ---- pauses.atf ------------------------------------------------------------------------------ */

static void write_pauses(const char *path, const atf_pause *p, size_t n, size_t torn) {
    uint8_t buf[16 + 8 * 32];
    size_t i;
    atf_pauses_header_encode(7, buf);
    for (i = 0; i < n; i++) atf_pause_encode(&p[i], buf + 16 + i * 32);
    memset(buf + 16 + n * 32, 0x44, torn);
    blob_write(path, buf, 16 + n * 32 + torn);
}

/* A torn last pause record is cut with the thread's other files; the pauses before it stay,
 * and a lone pauses.atf is recovered the same way. A pause that ends before it starts is
 * damage: the thread is left as it is. */
static void test_pauses_torn_record_cut(void) {
    recorded rec;
    char dir[600], ipath[700], ppath[700];
    atf_recover_report rep;
    atf_thread_reader tr;
    atf_pause p[2];
    const atf_recover_item *px;
    blob ib, pb;
    if (!record(&rec, ATF_LAYOUT_1, 30, 0)) return;
    make_thread_dir(dir, sizeof dir, "pauses");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(ppath, sizeof ppath, dir, "pauses.atf");
    memset(p, 0, sizeof p);
    p[0].index_seq = 10, p[0].start_ns = 100, p[0].end_ns = 150, p[0].reason = ATF_PAUSE_SELF_DRAIN;
    p[1].index_seq = 20, p[1].start_ns = 300, p[1].end_ns = 400, p[1].reason = ATF_PAUSE_SELF_DRAIN;
    write_crashed(ipath, &rec.index, 30 * 32 + 11, 0);
    write_pauses(ppath, p, 2, 9);
    CHECK_RESULT(ATF_OK, atf_recover_thread_dir(dir, NULL, &rep));
    px = find_item(&rep, ATF_RECOVER_PAUSES);
    CHECK(px != NULL);
    if (px) {
        CHECK_EQ(ATF_RECOVER_CUT, px->action);
        CHECK_EQ(2, px->records);
        CHECK_EQ(9, px->bytes_cut);
    }
    CHECK_EQ(2, rep.changed);
    atf_recover_report_deinit(&rep);
    CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, dir, NULL));
    CHECK_EQ(2, tr.pause_count);
    CHECK_EQ(150, tr.paused_ns);
    CHECK_RESULT(ATF_OK, tr.error.code);
    atf_thread_reader_close(&tr);
    check_finalized(dir, &rec, 30);
    check_second_recovery_noop(dir);
    write_pauses(ppath, p, 1, 31); /* alone */
    CHECK_RESULT(ATF_OK, atf_recover_file(ppath, NULL, &rep));
    CHECK(rep.item_count == 1 && rep.items[0].kind == ATF_RECOVER_PAUSES &&
          rep.items[0].action == ATF_RECOVER_CUT && rep.items[0].bytes_cut == 31);
    atf_recover_report_deinit(&rep);
    p[1].end_ns = 299; /* ends before it starts */
    write_crashed(ipath, &rec.index, 30 * 32 + 11, 0);
    write_pauses(ppath, p, 2, 0);
    ib = blob_read(ipath);
    pb = blob_read(ppath);
    CHECK_RESULT(ATF_E_CORRUPT, atf_recover_thread_dir(dir, NULL, &rep));
    CHECK(rep.item_count == 1 && rep.items[0].kind == ATF_RECOVER_PAUSES);
    CHECK_EQ(0, rep.changed);
    CHECK_EQ(16 + 32, rep.error.offset);
    atf_recover_report_deinit(&rep);
    CHECK(file_is(ipath, &ib));
    CHECK(file_is(ppath, &pb));
    free(ib.data);
    free(pb.data);
    recorded_free(&rec);
}

/* ---- session directories ----------------------------------------------------------------------- */

static void test_session_dir(void) {
    recorded rec;
    char dir[600], t0[700], t1[700], t2[700], t3[700], path[800];
    atf_recover_report rep;
    size_t i, removed = 0, failed = 0;
    if (!record(&rec, ATF_LAYOUT_1, 30, 1)) return;
    snprintf(dir, sizeof dir, "%s/pid_1", scratch);
    remove_tree(dir);
    mkdir(dir, 0755);
    join(t0, sizeof t0, dir, "thread_0");
    join(t1, sizeof t1, dir, "thread_1");
    join(t2, sizeof t2, dir, "thread_2");
    join(t3, sizeof t3, dir, "thread_3");
    mkdir(t0, 0755);
    mkdir(t1, 0755);
    mkdir(t2, 0755);
    mkdir(t3, 0755);
    join(path, sizeof path, t0, "index.atf");
    write_crashed(path, &rec.index, 20 * 32 + 1, 0);
    join(path, sizeof path, t0, "detail.atf");
    write_crashed(path, &rec.detail, rec.detail.size - 64, 1);
    join(path, sizeof path, t0, "gaps.atf.tmp"); /* stopped between create and rename */
    blob_write(path, rec.index.data, 16);
    join(path, sizeof path, t1, "index.atf.tmp"); /* stopped before its first file */
    blob_write(path, rec.index.data, 64);
    join(path, sizeof path, t3, "notes.txt");      /* not what a crash leaves */
    blob_write(path, rec.index.data, 3);
    {
        atf_recover_options dry;
        memset(&dry, 0, sizeof dry);
        dry.dry_run = 1;
        CHECK_RESULT(ATF_E_NOT_FOUND, atf_recover_session_dir(dir, &dry, &rep));
        CHECK_EQ(6, rep.changed); /* thread_0: index, detail, tmp; thread_1: tmp, dir; thread_2 */
        atf_recover_report_deinit(&rep);
        CHECK(path_exists(t1) && path_exists(t2));
        join(path, sizeof path, t1, "index.atf.tmp");
        CHECK(path_exists(path));
    }
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_recover_session_dir(dir, NULL, &rep));
    CHECK_EQ(6, rep.changed);
    for (i = 0; i < rep.item_count; i++) {
        if (rep.items[i].action == ATF_RECOVER_REMOVE) removed++;
        if (rep.items[i].action == ATF_RECOVER_FAIL) failed++;
    }
    CHECK_EQ(4, removed); /* thread_0/gaps.atf.tmp, thread_1/index.atf.tmp, thread_1, thread_2 */
    CHECK_EQ(1, failed);  /* thread_3 */
    atf_recover_report_deinit(&rep);
    CHECK(!path_exists(t1));
    CHECK(!path_exists(t2));
    CHECK(path_exists(t3));
    join(path, sizeof path, t0, "gaps.atf.tmp");
    CHECK(!path_exists(path));
    check_finalized(t0, &rec, 20);
    recorded_free(&rec);
}

/* ---- manifest.json of a session that died while recording -------------------------------------- */

/* A session as a killed process leaves it: files not finalized, manifest.json "recording"
 * with counts from an earlier pass. Slot 0 is this thread (named after attaching), slot 1
 * rings in our memory (named when attached), finalized before the end. The metadata every
 * rewrite must keep is set. *events_out: events in slot 0's index.atf. */
static int record_killed(char *dir, size_t cap, uint64_t *events_out) {
    atf_session *s = NULL;
    atf_session_config c;
    atf_producer *w = NULL, rw;
    size_t isize = atf_ring_memory_size(ATF_RING_INDEX, 64);
    static uint8_t ring_raw[64 * 32 + 4096 + 64];
    uint8_t *ring = ring_raw + (64 - (size_t)((uintptr_t)ring_raw % 64)) % 64;
    uint32_t slot = 0;
    uint64_t i;
    char old[600];
    snprintf(old, sizeof old, "%s/killed", scratch);
    remove_tree(old); /* a session of an earlier run */
    memset(&c, 0, sizeof c);
    c.drain_mode = ATF_DRAIN_MANUAL;
    c.overflow = ATF_OVERFLOW_DROP;
    c.session_name = "killed";
    CHECK(isize <= sizeof ring_raw - 64);
    CHECK_RESULT(ATF_OK, atf_session_open(&s, scratch, &c));
    if (!s) return 0;
    snprintf(dir, cap, "%s", atf_session_path(s));
    CHECK_RESULT(ATF_OK, atf_session_attach(s, NULL, &w));
    CHECK_RESULT(ATF_OK, atf_session_name_thread(s, "main thread"));
    CHECK_RESULT(ATF_OK, atf_ring_init(ring, isize, ATF_RING_INDEX, 64, ATF_LAYOUT_1, 77));
    CHECK_RESULT(ATF_OK, atf_producer_init(&rw, ring, isize, NULL, 0, ATF_DETAIL_OFF));
    CHECK_RESULT(ATF_OK, atf_session_attach_rings(s, ring, isize, NULL, 0, "rings", &slot));
    CHECK_RESULT(ATF_OK, atf_session_set_cmdline(s, "prog -x \"arg\""));
    CHECK_RESULT(ATF_OK, atf_session_add_module(s, 0, "/bin/prog", 0x555500000000ull, 0x4000));
    CHECK_RESULT(ATF_OK, atf_session_set_module_build_id(s, 0, "0123456789abcdef0123456789abcdef01234567"));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, 0, 0, 0x1140));
    CHECK_RESULT(ATF_OK, atf_session_add_function(s, 1, 0, 0x1200));
    CHECK_RESULT(ATF_OK, atf_session_add_symbol(s, 1, "helper"));
    CHECK_RESULT(ATF_OK, atf_session_add_anchor_exact(s, "audio", 1000, 987654321012345ll, 48000));
    for (i = 0; i < 5; i++) CHECK_RESULT(ATF_OK, atf_producer_call(&rw, 1, 2000 + i));
    atf_producer_close(&rw);
    for (i = 0; i < 10 && w; i++) CHECK_RESULT(ATF_OK, atf_producer_call(w, i % 2, 1000 + i));
    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* the manifest: 10, and 5 finalized */
    for (; i < 50 && w; i++) CHECK_RESULT(ATF_OK, atf_producer_call(w, i % 2, 1000 + i));
    CHECK_RESULT(ATF_OK, atf_session_pump(s)); /* the files: 50; the manifest unchanged */
    atf_session_abandon_after_fork(s);         /* as a kill: nothing finalized */
    *events_out = 50;
    return !harness__failures_in_test;
}

/* The manifest's text (NULL when unreadable); the caller frees it. */
static blob manifest_of(const char *dir) {
    char path[1200];
    join(path, sizeof path, dir, "manifest.json");
    return blob_read(path);
}

/* A manifest left "recording" is rewritten as "recovered": counts, finalized and time
 * range from the recovered files, everything else kept; a dry run changes nothing; a
 * second recovery leaves the rewritten one alone. */
static void test_manifest_rewritten(void) {
    char dir[1100], path[1200];
    atf_session_reader r;
    atf_recover_report rep;
    atf_recover_options dry;
    const atf_session_anchor *a;
    blob before, after;
    uint64_t events = 0;
    char arch[16], os[16];
    uint32_t clock_type;
    if (!record_killed(dir, sizeof dir, &events)) return;
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK(strcmp(r.state, "recording") == 0);
    CHECK(r.thread_count == 2 && r.threads[0].events_written == 10); /* lagging the files */
    CHECK(r.thread_count == 2 && !r.threads[0].manifest_finalized);
    memcpy(arch, r.arch, sizeof arch);
    memcpy(os, r.os, sizeof os);
    clock_type = r.clock_type;
    atf_session_reader_close(&r);

    before = manifest_of(dir);
    memset(&dry, 0, sizeof dry);
    dry.dry_run = 1;
    CHECK_RESULT(ATF_OK, atf_recover_session_dir(dir, &dry, &rep));
    CHECK_EQ(1, rep.manifest_rewritten); /* would be */
    atf_recover_report_deinit(&rep);
    join(path, sizeof path, dir, "manifest.json");
    CHECK(file_is(path, &before));

    CHECK_RESULT(ATF_OK, atf_recover_session_dir(dir, &no_sync, &rep));
    CHECK_EQ(1, rep.manifest_rewritten);
    CHECK_EQ(0, rep.failed);
    atf_recover_report_deinit(&rep);
    join(path, sizeof path, dir, "manifest.json.tmp");
    CHECK(!path_exists(path));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK(strcmp(r.state, "recovered") == 0);
    CHECK_EQ(2, r.thread_count);
    if (r.thread_count == 2) {
        const atf_session_thread *t0 = &r.threads[0], *t1 = &r.threads[1];
        CHECK_EQ(events, t0->events_written);
        CHECK_EQ(t0->reader.index.event_count, t0->events_written);
        CHECK(t0->manifest_finalized);
        CHECK(strcmp(t0->name, "main thread") == 0);
        CHECK_EQ(5, t1->events_written);
        CHECK(t1->manifest_finalized);
        CHECK(strcmp(t1->name, "rings") == 0);
        CHECK_EQ(77, t1->os_thread_id);
    }
    CHECK_EQ(1000, r.time_start_ns); /* the files' */
    CHECK_EQ(2004, r.time_end_ns);
    CHECK(r.cmdline && strcmp(r.cmdline, "prog -x \"arg\"") == 0);
    CHECK(strcmp(r.overflow, "drop") == 0);
    CHECK_EQ((uint64_t)getpid(), r.pid);
    CHECK(arch[0] && strcmp(r.arch, arch) == 0 && strcmp(r.os, os) == 0);
    CHECK_EQ(clock_type, r.clock_type);
    CHECK(r.module_count == 1 && strcmp(r.modules[0].path, "/bin/prog") == 0);
    CHECK(r.module_count == 1 && strcmp(r.modules[0].build_id, "0123456789abcdef0123456789abcdef01234567") == 0);
    CHECK(r.module_count == 1 && r.modules[0].base_address == 0x555500000000ull);
    CHECK_EQ(2, r.symbol_count);
    if (r.symbol_count == 2) {
        CHECK(r.symbols[0].name == NULL && r.symbols[0].has_offset);
        CHECK_EQ(0x1140, r.symbols[0].offset);
        CHECK(r.symbols[1].name && strcmp(r.symbols[1].name, "helper") == 0);
        CHECK_EQ(0x1200, r.symbols[1].offset);
    }
    a = atf_session_reader_anchor(&r, "audio");
    CHECK(a && a->timescale == 48000 && a->value == 987654321012345ll && a->host_ns == 1000);
    CHECK(atf_session_reader_anchor(&r, "wall_clock_ns") == &r.anchors[0]);
    atf_session_reader_close(&r);

    after = manifest_of(dir);
    CHECK_RESULT(ATF_OK, atf_recover_session_dir(dir, &no_sync, &rep));
    CHECK_EQ(0, rep.manifest_rewritten); /* "recovered": left as is */
    CHECK_EQ(0, rep.changed);
    atf_recover_report_deinit(&rep);
    join(path, sizeof path, dir, "manifest.json");
    CHECK(file_is(path, &after));
    free(before.data);
    free(after.data);
}

/* text with every `from` replaced by `to` (once each), into a new blob. */
static blob blob_replace(const blob *b, const char *from, const char *to) {
    blob out;
    const char *at = strstr((const char *)b->data, from);
    size_t head = at ? (size_t)(at - (const char *)b->data) : b->size;
    memset(&out, 0, sizeof out);
    CHECK(at != NULL);
    out.data = (uint8_t *)malloc(b->size + strlen(to) + 1);
    if (!out.data) return out;
    memcpy(out.data, b->data, head);
    out.size = head;
    if (at) {
        memcpy(out.data + out.size, to, strlen(to));
        out.size += strlen(to);
        memcpy(out.data + out.size, at + strlen(from), b->size - head - strlen(from));
        out.size += b->size - head - strlen(from);
    }
    out.data[out.size] = 0;
    return out;
}

/* A manifest left "recording" may list a thread whose first file never reached the disk
 * (its directory removed as unborn, or never made: a full disk). The rewritten manifest
 * lists the thread directories there are: such a thread (no directory, no event written)
 * is left out, while one that wrote events and whose directory is gone stays listed, for
 * the tools to name as missing. */
static void test_manifest_unborn_left_out(void) {
    char dir[1100], path[1200];
    atf_session_reader r;
    atf_recover_report rep;
    blob killed, listed;
    uint64_t events = 0;
    if (!record_killed(dir, sizeof dir, &events)) return;
    join(path, sizeof path, dir, "manifest.json");
    killed = manifest_of(dir);
    listed = blob_replace(&killed, "\"threads\":[",
                          "\"threads\":[{\"id\":5,\"has_detail\":false,\"os_thread_id\":9,"
                          "\"events_written\":0,\"events_lost_io\":40},"
                          "{\"id\":6,\"has_detail\":false,\"os_thread_id\":10,"
                          "\"events_written\":12},");
    blob_write(path, listed.data, listed.size);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(4, r.thread_count);                       /* threads 5 and 6 listed, missing */
    atf_session_reader_close(&r);
    CHECK_RESULT(ATF_OK, atf_recover_session_dir(dir, &no_sync, &rep));
    CHECK_EQ(1, rep.manifest_rewritten);
    CHECK_EQ(0, rep.failed);
    atf_recover_report_deinit(&rep);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK(strcmp(r.state, "recovered") == 0);
    CHECK_EQ(3, r.thread_count);                       /* thread 5 left out */
    if (r.thread_count == 3) {
        CHECK_EQ(events, r.threads[0].events_written);
        CHECK(strcmp(r.threads[0].name, "main thread") == 0);
        CHECK(!r.threads[0].missing && !r.threads[1].missing);
        CHECK_EQ(6, r.threads[2].slot);
        CHECK(r.threads[2].missing && r.threads[2].in_manifest);
    }
    CHECK(atf_session_reader_symbol(&r, 1) && strcmp(atf_session_reader_symbol(&r, 1), "helper") == 0);
    atf_session_reader_close(&r);
    free(killed.data);
    free(listed.data);
}

/* ---- bad input ---------------------------------------------------------------------------------- */

/* Random bytes and every truncation of a closed file: a result code, never a crash, and
 * a file that is not recoverable stays as it was. */
static void test_random_and_truncated_inputs(void) {
    recorded rec;
    char path[600];
    uint8_t buf[512];
    size_t n, i;
    if (!record(&rec, ATF_LAYOUT_1, 12, 1)) return;
    snprintf(path, sizeof path, "%s/random.atf", scratch);
    for (n = 0; n < 300 && !harness__failures_in_test; n++) {
        atf_recover_report rep;
        blob before;
        atf_result rc;
        size_t len = (size_t)(rng_next() % sizeof buf);
        for (i = 0; i < len; i++) buf[i] = (uint8_t)rng_next();
        if (n % 3 == 1 && len >= 4) memcpy(buf, ATF_DETAIL_MAGIC, 4);
        if (n % 3 == 2 && len >= 4) memcpy(buf, ATF_GAPS_MAGIC, 4);
        blob_write(path, buf, len);
        before = blob_read(path);
        rc = atf_recover_file(path, &no_sync, &rep);
        CHECK_EQ(rc, rep.error.code);
        if (rc != ATF_OK) {
            CHECK(rep.failed == 1 && rep.changed == 0);
            CHECK(file_is(path, &before));
        }
        atf_recover_report_deinit(&rep);
        free(before.data);
    }
    for (n = 0; n <= rec.detail.size && !harness__failures_in_test; n++) {
        atf_recover_report rep;
        atf_result rc;
        blob_write(path, rec.detail.data, n);
        rc = atf_recover_file(path, &no_sync, &rep);
        CHECK_RESULT(n < 64 ? ATF_E_TRUNCATED : ATF_OK, rc);
        atf_recover_report_deinit(&rep);
        if (rc == ATF_OK) {
            atf_detail_reader dr;
            CHECK_RESULT(ATF_OK, atf_detail_reader_open(&dr, path, NULL));
            CHECK(dr.counted == ATF_COUNT_FINALIZED || dr.event_count == 0);
            atf_detail_reader_close(&dr);
            CHECK_RESULT(ATF_OK, atf_recover_file(path, &no_sync, &rep));
            CHECK_EQ(0, rep.changed);
            atf_recover_report_deinit(&rep);
        }
    }
    {
        atf_recover_report rep;
        snprintf(path, sizeof path, "%s/no_such.atf", scratch);
        CHECK_RESULT(ATF_E_NOT_FOUND, atf_recover_file(path, NULL, &rep));
        atf_recover_report_deinit(&rep);
        CHECK_RESULT(ATF_E_NOT_FOUND, atf_recover_thread_dir(path, NULL, &rep));
        atf_recover_report_deinit(&rep);
        CHECK_RESULT(ATF_E_NOT_FOUND, atf_recover_session_dir(path, NULL, &rep));
        atf_recover_report_deinit(&rep);
    }
    recorded_free(&rec);
}

/* Crash-left thread files with random bytes changed or cut: either recovery succeeds and
 * the thread reads back finalized with exact links (and a second recovery is a no-op), or
 * it fails and no byte changed. */
static void test_mutated_threads(void) {
    recorded rec;
    char dir[600], ipath[700], dpath[700];
    int trial;
    if (!record(&rec, ATF_LAYOUT_1, 48, 1)) return;
    make_thread_dir(dir, sizeof dir, "mutated");
    join(ipath, sizeof ipath, dir, "index.atf");
    join(dpath, sizeof dpath, dir, "detail.atf");
    for (trial = 0; trial < 400 && !harness__failures_in_test; trial++) {
        atf_recover_report rep;
        atf_result rc;
        blob ib, db;
        int k, flips = 1 + (int)(rng_next() % 4);
        write_crashed(ipath, &rec.index, (size_t)(rng_next() % (rec.index.size - 63)), 0);
        write_crashed(dpath, &rec.detail, (size_t)(rng_next() % (rec.detail.size - 63)), 1);
        ib = blob_read(ipath);
        db = blob_read(dpath);
        for (k = 0; k < flips; k++) {
            blob *b = rng_next() % 2 ? &ib : &db;
            if (b->size) b->data[rng_next() % b->size] ^= (uint8_t)(1u << (rng_next() % 8));
        }
        blob_write(ipath, ib.data, ib.size);
        blob_write(dpath, db.data, db.size);
        rc = atf_recover_thread_dir(dir, &no_sync, &rep);
        if (rc == ATF_OK) {
            atf_thread_reader tr;
            CHECK_RESULT(ATF_OK, atf_thread_reader_open(&tr, dir, NULL));
            CHECK_EQ(ATF_COUNT_FINALIZED, tr.index.counted);
            CHECK_RESULT(ATF_OK, atf_thread_reader_verify_links(&tr));
            CHECK_RESULT(ATF_OK, atf_index_reader_verify_crc(&tr.index));
            if (tr.has_detail) {
                CHECK_EQ(ATF_COUNT_FINALIZED, tr.detail.counted);
                CHECK_RESULT(ATF_OK, atf_detail_reader_verify_crc(&tr.detail));
            }
            atf_thread_reader_close(&tr);
            check_second_recovery_noop(dir);
        } else {
            CHECK(rep.failed >= 1);
            CHECK_EQ(0, rep.changed);
            CHECK(file_is(ipath, &ib));
            CHECK(file_is(dpath, &db));
        }
        atf_recover_report_deinit(&rep);
        free(ib.data);
        free(db.data);
    }
    recorded_free(&rec);
}

static void test_names(void) {
    CHECK(strcmp(atf_recover_action_str(ATF_RECOVER_FINALIZE), "finalize") == 0);
    CHECK(strcmp(atf_recover_action_str((atf_recover_action)7), "unknown") == 0);
    CHECK(strcmp(atf_recover_kind_str(ATF_RECOVER_GAPS), "gaps") == 0);
    CHECK(strcmp(atf_recover_kind_str(ATF_RECOVER_PAUSES), "pauses") == 0);
    CHECK(strcmp(atf_recover_kind_str((atf_recover_kind)0), "unknown") == 0);
}

static const test_case tests[] = {
    { "torn_index_l1", test_torn_index_l1 },
    { "torn_index_l2", test_torn_index_l2 },
    { "detail_ahead_l1", test_detail_ahead_l1 },
    { "detail_ahead_l2", test_detail_ahead_l2 },
    { "pending_links_l1", test_pending_links_l1 },
    { "pending_links_l2", test_pending_links_l2 },
    { "pending_link_mismatch_is_damage", test_pending_link_mismatch_is_damage },
    { "dry_run_changes_nothing", test_dry_run_changes_nothing },
    { "checksum_zero_filled", test_checksum_zero_filled },
    { "crc_mismatch_left_alone", test_crc_mismatch_left_alone },
    { "lone_files", test_lone_files },
    { "gaps_torn_record_cut", test_gaps_torn_record_cut },
    { "gaps_damage_left_alone", test_gaps_damage_left_alone },
    { "pauses_torn_record_cut", test_pauses_torn_record_cut },
    { "session_dir", test_session_dir },
    { "manifest_rewritten", test_manifest_rewritten },
    { "manifest_unborn_left_out", test_manifest_unborn_left_out },
    { "random_and_truncated_inputs", test_random_and_truncated_inputs },
    { "mutated_threads", test_mutated_threads },
    { "names", test_names },
};

int main(int argc, char **argv) {
    int rc;
    no_sync.no_sync = 1;
    if (scratch_dir_make(scratch, sizeof scratch, "recover") != 0) return 1;
    rc = harness_run("recover", tests, sizeof tests / sizeof tests[0], argc, argv);
    remove_tree(scratch);
    return rc;
}
