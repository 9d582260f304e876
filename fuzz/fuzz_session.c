/* fuzz_session.c - session reader and merge over a small pid_* directory built from the input.
 *
 * Input: a 10-byte frame, then the parts it announces, back to back.
 *   byte 0      bit 0: write manifest.json; bits 1..3: write thread k's index.atf;
 *               bit 4: map files (default: read them); bit 5: verify_crc;
 *               bit 6: slots 0, 2, 7 instead of 0, 1, 2; bit 7: merge through the filter
 *               first, before anything has checked the threads' order
 *   byte 1      merge filter: bits 1..3 the kinds wanted (none set: all);
 *               bit 4: only the first thread's slot; bit 5: an upper time bound
 *   bytes 2..9  u16 little-endian lengths of the manifest and of the three index files
 *               (clamped to what the input holds)
 * The directory is opened; when it opens, each thread's order must be unknown and its
 * range the ends of its file; the whole session is merged (every event of every present
 * thread exactly once, in (timestamp, slot, seq) order), merged again through the filter,
 * and sought to several times; each result is checked against a count made directly from
 * the thread readers, and the order and range the check settles against a scan of the
 * files. See fuzz_common.h for the replay. */
#define ATF_IMPLEMENTATION
#define ATF__ORDER_CHUNK 64u /* a mapped file of 3 events or more is checked in reads of 2 */
#include "atf.h"
#include "fuzz_common.h"

static char pid_dir[1024];

/* Removes everything the previous input left in pid_dir. */
static void reset_dir(void) {
    if (!pid_dir[0]) snprintf(pid_dir, sizeof pid_dir, "%s/pid_1", fuzz_scratch_dir());
    fuzz__remove_tree(pid_dir);
    fuzz_mkdir(pid_dir);
}

static int kind_wanted(uint32_t kinds, uint32_t kind) {
    return !kinds || (kind < 32 && ((kinds >> kind) & 1u));
}

static int slot_wanted(const atf_merge_filter *f, uint32_t slot) {
    size_t i;
    if (!f->slots) return 1;
    for (i = 0; i < f->slot_count; i++)
        if (f->slots[i] == slot) return 1;
    return 0;
}

/* Events of the session with timestamp >= from that pass the filter's other conditions. */
static uint64_t count_direct(const atf_session_reader *r, const atf_merge_filter *f, uint64_t from) {
    uint64_t n = 0, k;
    size_t i;
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        if (t->missing || !slot_wanted(f, t->slot)) continue;
        for (k = 0; k < t->reader.index.event_count; k++) {
            atf_index_event ev;
            atf_index_reader_get(&t->reader.index, k, &ev);
            if (ev.timestamp_ns < from || (f->to_ns && ev.timestamp_ns > f->to_ns)) continue;
            if (kind_wanted(f->kinds, ev.kind)) n++;
        }
    }
    return n;
}

/* The smallest and largest timestamp the scans of check_order_fields met in any file. */
typedef struct scan_range { uint64_t lo, hi; } scan_range;

/* A thread as the open leaves it (checked 0: not yet checked), or as the check leaves it
 * (1): out_of_order and the range against a scan of its file, whose range widens *all.
 * Returns whether the scan found the file out of order. */
static int check_order_fields(const atf_session_thread *t, int checked, scan_range *all) {
    const atf_index_reader *ix = &t->reader.index;
    uint64_t n = t->open_result == ATF_OK ? ix->event_count : 0, k, lo = UINT64_MAX, hi = 0, prev = 0;
    int unordered = 0;
    for (k = 0; k < n; k++) {
        uint64_t ts = atf__load_le64(atf_index_reader_raw(ix, k));
        unordered |= ts < prev;
        lo = ts < lo ? ts : lo;
        hi = ts > hi ? ts : hi;
        prev = ts;
    }
    if (n) {
        all->lo = lo < all->lo ? lo : all->lo;
        all->hi = hi > all->hi ? hi : all->hi;
    }
    if (n == 0) {
        FUZZ_CHECK(t->out_of_order == 0 && t->time_min_ns == 0 && t->time_max_ns == 0);
    } else if (!checked && n > 1) {
        FUZZ_CHECK(t->out_of_order == ATF_ORDER_UNKNOWN);
        FUZZ_CHECK(t->time_min_ns == atf__load_le64(atf_index_reader_raw(ix, 0)));
        FUZZ_CHECK(t->time_max_ns == prev);
    } else if (t->out_of_order != ATF_ORDER_UNKNOWN) { /* checked, or one event */
        FUZZ_CHECK(t->out_of_order == unordered);
        FUZZ_CHECK(t->time_min_ns == lo && t->time_max_ns == hi);
    } else {
        FUZZ_CHECK(!checked);
    }
    return unordered;
}

/* After every thread is checked: the session's range, when it comes from the threads, is
 * the smallest and largest timestamp the scans of the files met. */
static void check_session_range(const atf_session_reader *r, const scan_range *all) {
    if (!r->range_from_threads) return;
    FUZZ_CHECK(r->time_start_ns == (all->lo == UINT64_MAX ? 0 : all->lo) &&
               r->time_end_ns == all->hi);
}

/* Takes every remaining item of m, checking order and the filter; returns their number. */
static uint64_t drain_merge(atf_merge *m, const atf_merge_filter *f, uint64_t from) {
    atf_merge_item item;
    uint64_t n = 0, ts = 0, seq = 0;
    uint32_t slot = 0;
    while (atf_merge_next(m, &item) == ATF_OK) {
        const uint8_t *raw = atf_index_reader_raw(&item.thread->reader.index, item.seq);
        FUZZ_CHECK(raw != NULL && item.slot == item.thread->slot && !item.thread->missing);
        FUZZ_CHECK(atf__load_le64(raw) == item.event.timestamp_ns);
        FUZZ_CHECK(item.event.timestamp_ns >= from);
        FUZZ_CHECK(!f->to_ns || item.event.timestamp_ns <= f->to_ns);
        FUZZ_CHECK(kind_wanted(f->kinds, item.event.kind) && slot_wanted(f, item.slot));
        if (n) /* strictly increasing (timestamp, slot, seq) */
            FUZZ_CHECK(item.event.timestamp_ns > ts ||
                       (item.event.timestamp_ns == ts &&
                        (item.slot > slot || (item.slot == slot && item.seq > seq))));
        ts = item.event.timestamp_ns;
        slot = item.slot;
        seq = item.seq;
        n++;
    }
    FUZZ_CHECK(atf_merge_next(m, &item) == ATF_E_RANGE); /* stays at the end */
    return n;
}

/* Merges the session through filt, from its start and after a seek to probe. */
static void merge_filtered(atf_session_reader *r, const atf_merge_filter *filt, uint64_t probe) {
    atf_merge m;
    FUZZ_CHECK(atf_merge_init(&m, r, filt) == ATF_OK);
    FUZZ_CHECK(drain_merge(&m, filt, filt->from_ns) == count_direct(r, filt, filt->from_ns));
    FUZZ_CHECK(atf_merge_seek(&m, probe) == ATF_OK);
    FUZZ_CHECK(drain_merge(&m, filt, probe) == count_direct(r, filt, probe));
    atf_merge_deinit(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const uint32_t slots_a[3] = { 0, 1, 2 }, slots_b[3] = { 0, 2, 7 };
    const uint32_t *slots;
    char path[1200], dir[1100];
    const uint8_t *p;
    size_t left, len[4], k, opened;
    uint8_t flags, fbyte;
    atf_reader_options opt;
    atf_session_reader r;
    atf_merge_filter all, filt;
    atf_merge m;
    atf_result rc;
    uint32_t first_slot;
    scan_range scanned = { UINT64_MAX, 0 };
    int any;
    uint64_t probe[4];
    if (size < 10) return 0;
    flags = data[0];
    fbyte = data[1];
    slots = (flags & 0x40u) ? slots_b : slots_a;
    p = data + 10;
    left = size - 10;
    for (k = 0; k < 4; k++) {
        len[k] = fuzz_le16(data + 2 + 2 * k);
        if (len[k] > left) len[k] = left;
        left -= len[k];
    }
    reset_dir();
    if (flags & 1u) {
        snprintf(path, sizeof path, "%s/manifest.json", pid_dir);
        fuzz_write_file(path, p, len[0]);
    }
    p += len[0];
    for (k = 0; k < 3; k++) {
        if (flags & (2u << k)) {
            snprintf(dir, sizeof dir, "%s/thread_%u", pid_dir, slots[k]);
            fuzz_mkdir(dir);
            snprintf(path, sizeof path, "%s/index.atf", dir);
            fuzz_write_file(path, p, len[k + 1]);
        }
        p += len[k + 1];
    }
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = !(flags & 0x10u);
    opt.verify_crc = (flags & 0x20u) != 0;

    rc = atf_session_reader_open(&r, pid_dir, &opt);
    if (rc != ATF_OK) {
        FUZZ_CHECK(r.error.code == rc && r.thread_count == 0 && r.threads == NULL);
        /* only a directory with neither a readable manifest nor a thread_N is refused */
        FUZZ_CHECK(rc == ATF_E_NOMEM || (r.manifest != ATF_MANIFEST_OK &&
                                         r.manifest != ATF_MANIFEST_INCOMPLETE));
        return 0;
    }
    opened = 0;
    for (k = 0; k < r.thread_count; k++) {
        if (k) FUZZ_CHECK(r.threads[k - 1].slot < r.threads[k].slot);
        FUZZ_CHECK(atf_session_reader_thread(&r, r.threads[k].slot) == &r.threads[k]);
        opened += r.threads[k].open_result == ATF_OK;
    }
    /* with no thread opening, a read manifest or a thread_N directory opened the session,
     * and a thread that failed for a reason of its own left that reason in r.error */
    if (!opened)
        FUZZ_CHECK(r.manifest == ATF_MANIFEST_OK || r.manifest == ATF_MANIFEST_INCOMPLETE ||
                   r.thread_count > 0);
    for (k = 0; k < r.thread_count; k++)
        if (r.threads[k].open_result != ATF_OK && !r.threads[k].missing)
            FUZZ_CHECK(r.error.code != ATF_OK);
    first_slot = r.thread_count ? r.threads[0].slot : 0;
    for (k = 0; k < r.thread_count; k++) check_order_fields(&r.threads[k], 0, &scanned);

    /* seek: to 0, to the times of a few events, past everything */
    probe[0] = 0;
    probe[1] = probe[2] = 1;
    probe[3] = UINT64_MAX;
    for (k = 0; k < r.thread_count; k++) {
        const atf_index_reader *ix = &r.threads[k].reader.index;
        if (r.threads[k].missing || !ix->event_count) continue;
        probe[1] = atf__load_le64(atf_index_reader_raw(ix, ix->event_count / 2));
        probe[2] = atf__load_le64(atf_index_reader_raw(ix, ix->event_count - 1)) + 1;
        if (probe[2] == 0) probe[2] = UINT64_MAX;
        break;
    }
    memset(&filt, 0, sizeof filt);
    filt.kinds = fbyte & 0x0Eu;
    if (fbyte & 0x10u) {
        filt.slots = &first_slot;
        filt.slot_count = 1;
    }
    filt.from_ns = probe[1] > 1 ? probe[1] / 2 : 0;
    if (fbyte & 0x20u) filt.to_ns = probe[2] > 2 ? probe[2] - 2 : 1;
    if (flags & 0x80u) merge_filtered(&r, &filt, probe[1]);

    /* everything */
    memset(&all, 0, sizeof all);
    FUZZ_CHECK(atf_merge_init(&m, &r, NULL) == ATF_OK);
    for (k = 0; k < r.thread_count; k++) check_order_fields(&r.threads[k], 1, &scanned);
    FUZZ_CHECK(drain_merge(&m, &all, 0) == count_direct(&r, &all, 0));
    for (k = 0; k < 4; k++) {
        FUZZ_CHECK(atf_merge_seek(&m, probe[k]) == ATF_OK);
        FUZZ_CHECK(drain_merge(&m, &all, probe[k]) == count_direct(&r, &all, probe[k]));
    }
    atf_merge_deinit(&m);

    /* through a filter */
    if (!(flags & 0x80u)) merge_filtered(&r, &filt, probe[1]);
    any = 0;
    for (k = 0; k < r.thread_count; k++) any |= check_order_fields(&r.threads[k], 1, &scanned);
    FUZZ_CHECK(atf_session_reader_check_order(&r, NULL) == any);
    check_session_range(&r, &scanned);

    (void)atf_session_reader_symbol(&r, 0);
    atf_session_reader_close(&r);
    return 0;
}
