/* test_ring.c - SPSC rings and the wait-free writer: memory sizes, init and attach
 * validation, wraparound at every position of the index and detail rings (detail entries
 * that straddle the end become fillers), full rings dropping and counting, layout-1 link
 * limits, and a two-thread stress where every event arrives exactly once, in order. */
#include "atf.h"
#include "tests/harness.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_THREAD__)
#  define RING_SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define RING_SANITIZED 1
#  endif
#endif
#ifdef RING_SANITIZED
#  define STRESS_EVENTS 200000u
#else
#  define STRESS_EVENTS 4000000u
#endif

/* ---- helpers ------------------------------------------------------------------------ */

/* 64-byte aligned ring memory (freed with ring_free). */
static void *ring_alloc(size_t size) {
    void *p = NULL;
#if defined(_WIN32)
    if ((p = _aligned_malloc(size, 64)) == NULL) return NULL;
#else
    if (posix_memalign(&p, 64, size) != 0) return NULL;
#endif
    memset(p, 0xA5, size); /* garbage, as fresh memory may hold */
    return p;
}

#if defined(_WIN32)
static void ring_free(void *p) { _aligned_free(p); }
#else
static void ring_free(void *p) { free(p); }
#endif

/* A consumer-side index record read by hand from a consumer view. */
static int consume_index(atf_ring *c, uint8_t out[32]) {
    uint64_t head = atf__load_acquire_u64(&c->shared->head);
    if (c->pos == head) return 0;
    memcpy(out, c->data + ((c->pos & c->mask) << 5), 32);
    c->pos++;
    atf__store_release_u64(&c->shared->tail, c->pos);
    return 1;
}

/* The next detail entry from a consumer view: skips fillers, returns the record (pointer
 * into the ring, valid until the tail moves) and its entry flags; 0 when empty. Counts
 * fillers seen in *fillers. Checks that no entry crosses the end of the ring. */
static const uint8_t *consume_detail(atf_ring *c, uint32_t *flags, uint64_t *fillers) {
    uint64_t head = atf__load_acquire_u64(&c->shared->head);
    while (c->pos < head) {
        const uint8_t *e = c->data + (c->pos & c->mask);
        uint32_t entry = atf__load_le32(e), f = atf__load_le32(e + 4);
        CHECK(entry >= 8 && (entry & 7u) == 0);
        CHECK((c->pos & c->mask) + entry <= c->mask + 1);
        if (entry < 8 || (entry & 7u)) return NULL;
        c->pos += entry;
        if (f & 1u) {
            if (fillers) (*fillers)++;
            CHECK_EQ(0, c->pos & c->mask); /* a filler runs to the end of the ring */
            continue;
        }
        *flags = f;
        return e + 8;
    }
    return NULL;
}

static void release_detail(atf_ring *c) { atf__store_release_u64(&c->shared->tail, c->pos); }

/* ---- sizes, init, attach ------------------------------------------------------------ */

static void test_memory_sizes(void) {
    CHECK_EQ(576, sizeof(atf_ring_header));
    CHECK_EQ(64, offsetof(atf_ring_header, head));
    CHECK_EQ(128, offsetof(atf_ring_header, tail));
    CHECK_EQ(192, offsetof(atf_ring_header, dropped));
    CHECK_EQ(256, offsetof(atf_ring_header, gap_tail)); /* the consumer's own line */
    CHECK_EQ(320, offsetof(atf_ring_header, gaps));
    CHECK_EQ(576 + 64 * 32, atf_ring_memory_size(ATF_RING_INDEX, 0));
    CHECK_EQ(576 + 64 * 32, atf_ring_memory_size(ATF_RING_INDEX, 64));
    CHECK_EQ(576 + 128 * 32, atf_ring_memory_size(ATF_RING_INDEX, 65));
    CHECK_EQ(576 + 65536 * 32, atf_ring_memory_size(ATF_RING_INDEX, 65536));
    CHECK_EQ(576 + 4096, atf_ring_memory_size(ATF_RING_DETAIL, 1));
    CHECK_EQ(576 + 8192, atf_ring_memory_size(ATF_RING_DETAIL, 4097));
    CHECK_EQ(576 + (1u << 20), atf_ring_memory_size(ATF_RING_DETAIL, 1u << 20));
    CHECK_EQ(576 + ((uint64_t)1 << 40), atf_ring_memory_size(ATF_RING_DETAIL, (uint64_t)1 << 40));
    CHECK_EQ(0, atf_ring_memory_size(ATF_RING_DETAIL, ((uint64_t)1 << 40) + 1));
    CHECK_EQ(0, atf_ring_memory_size(0, 64));
    CHECK_EQ(0, atf_ring_memory_size(3, 64));
}

static void test_init_arguments(void) {
    size_t size = atf_ring_memory_size(ATF_RING_INDEX, 64);
    uint8_t *mem = (uint8_t *)ring_alloc(size + 64);
    atf_ring_header *h = (atf_ring_header *)mem;
    CHECK_RESULT(ATF_E_ARG, atf_ring_init(NULL, size, ATF_RING_INDEX, 64, 1, 7));
    CHECK_RESULT(ATF_E_ARG, atf_ring_init(mem + 8, size, ATF_RING_INDEX, 64, 1, 7));
    CHECK_RESULT(ATF_E_ARG, atf_ring_init(mem, size - 1, ATF_RING_INDEX, 64, 1, 7));
    CHECK_RESULT(ATF_E_ARG, atf_ring_init(mem, size, 0, 64, 1, 7));
    CHECK_RESULT(ATF_E_ARG, atf_ring_init(mem, size, ATF_RING_INDEX, 64, 3, 7));
    CHECK_RESULT(ATF_E_ARG, atf_ring_init(mem, size, ATF_RING_INDEX, 65, 1, 7)); /* needs 128 */
    CHECK_RESULT(ATF_OK, atf_ring_init(mem, size, ATF_RING_INDEX, 64, 0, 7));
    CHECK_EQ(ATF_RING_MAGIC, h->magic);
    CHECK_EQ(ATF_RING_INDEX, h->kind);
    CHECK_EQ(64, h->capacity);
    CHECK_EQ(sizeof(atf_ring_header), h->data_offset);
    CHECK_EQ(ATF_LAYOUT_1, h->layout);
    CHECK_EQ(7, h->thread_id);
    CHECK_EQ(0, h->head);
    CHECK_EQ(0, h->tail);
    CHECK_EQ(0, h->dropped);
    CHECK_EQ(0, h->closed);
    ring_free(mem);
}

static void test_attach_refuses_bad_headers(void) {
    size_t size = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    uint8_t *mem = (uint8_t *)ring_alloc(size);
    atf_ring_header *h = (atf_ring_header *)mem;
    atf_ring r;
    atf_ring_header good;
    CHECK_RESULT(ATF_OK, atf_ring_init(mem, size, ATF_RING_DETAIL, 4096, 2, 1));
    good = *h;
    CHECK_RESULT(ATF_OK, atf_ring_attach(&r, mem, size, 0));
    CHECK(r.data == mem + sizeof(atf_ring_header));
    CHECK_EQ(4095, r.mask);
#define BAD(code, mutation, sz) \
    do { *h = good; mutation; CHECK_RESULT(code, atf_ring_attach(&r, mem, sz, 0)); \
         CHECK(r.shared == NULL); } while (0)
    BAD(ATF_E_ARG, (void)0, sizeof(atf_ring_header) - 1);
    CHECK_RESULT(ATF_E_ARG, atf_ring_attach(&r, NULL, size, 0));
    BAD(ATF_E_MAGIC, h->magic = 0, size);
    BAD(ATF_E_MAGIC, h->magic = ATF_RING_MAGIC ^ 0x01000000u, size);
    BAD(ATF_E_CORRUPT, h->kind = 0, size);
    BAD(ATF_E_CORRUPT, h->kind = 3, size);
    BAD(ATF_E_CORRUPT, h->capacity = 0, size);
    BAD(ATF_E_CORRUPT, h->capacity = 4096 + 8, size);         /* not a power of two */
    BAD(ATF_E_CORRUPT, h->capacity = 2048, size);             /* below the minimum */
    BAD(ATF_E_CORRUPT, h->capacity = 8192, size);             /* larger than the memory */
    BAD(ATF_E_CORRUPT, h->capacity = (uint64_t)1 << 63, size);
    BAD(ATF_E_CORRUPT, h->data_offset = 128, size);           /* inside the header */
    BAD(ATF_E_CORRUPT, h->data_offset = 260, size);           /* misaligned */
    BAD(ATF_E_CORRUPT, h->data_offset = size + 64, size);     /* beyond the memory */
    BAD(ATF_E_CORRUPT, h->data_offset = UINT64_MAX - 7, size);
    BAD(ATF_E_CORRUPT, h->layout = 0, size);
    BAD(ATF_E_CORRUPT, h->layout = 3, size);
    BAD(ATF_E_CORRUPT, (h->head = 4096 + 8, h->tail = 0), size); /* more than capacity */
    BAD(ATF_E_CORRUPT, (h->head = 0, h->tail = 8), size);       /* tail ahead of head */
    BAD(ATF_E_CORRUPT, (h->head = 12, h->tail = 0), size);      /* detail positions are 8-aligned */
    BAD(ATF_E_CORRUPT, h->kind = ATF_RING_INDEX, size);         /* 4096 slots do not fit */
    BAD(ATF_E_CORRUPT, h->data_offset = 512, size);             /* data no longer fits */
#undef BAD
    *h = good;
    h->head = 4096;
    h->tail = 8;
    CHECK_RESULT(ATF_OK, atf_ring_attach(&r, mem, size, 0));
    CHECK_EQ(8, r.pos);
    CHECK_EQ(4096, r.other);
    CHECK_RESULT(ATF_OK, atf_ring_attach(&r, mem, size, 1));
    CHECK_EQ(4096, r.pos);
    CHECK_EQ(8, r.other);
    ring_free(mem);
}

static void test_writer_init_checks(void) {
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64), dsz = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    void *imem = ring_alloc(isz), *dmem = ring_alloc(dsz);
    atf_producer w;
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 2, 9));
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 1, 9));
    CHECK_RESULT(ATF_E_ARG, atf_producer_init(&w, imem, isz, dmem, dsz, ATF_DETAIL_ALWAYS)); /* layouts */
    CHECK(w.index.shared == NULL);
    CHECK_RESULT(ATF_E_ARG, atf_producer_init(&w, dmem, dsz, NULL, 0, ATF_DETAIL_OFF)); /* kinds */
    CHECK_RESULT(ATF_E_ARG, atf_producer_init(&w, imem, isz, imem, isz, ATF_DETAIL_ALWAYS));
    CHECK_RESULT(ATF_E_ARG, atf_producer_init(&w, imem, isz, NULL, 0, 3));
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 2, 9));
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, dmem, dsz, ATF_DETAIL_WINDOWED));
    CHECK_EQ(ATF_LAYOUT_2, w.layout);
    CHECK_EQ(9, w.thread_id);
    CHECK_EQ(ATF_DETAIL_WINDOWED, w.detail_mode);
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, NULL, 0, ATF_DETAIL_ALWAYS));
    CHECK_EQ(ATF_DETAIL_OFF, w.detail_mode); /* no detail ring, no detail */
    ((atf_ring_header *)imem)->dropped = 5; /* a writer continues the ring's drop count */
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, NULL, 0, ATF_DETAIL_OFF));
    CHECK_EQ(5, w.dropped);
    atf_producer_close(&w);
    CHECK_EQ(1, ((atf_ring_header *)imem)->closed);
    CHECK_EQ(0, ((atf_ring_header *)dmem)->closed);
    ring_free(imem);
    ring_free(dmem);
}

/* ---- index ring: wraparound and full -------------------------------------------------- */

static uint64_t fid_of(uint64_t i) { return 0x0000000100000000ull | (i * 2654435761u); }

/* Checks one index record against what was pushed for sequence i. */
static void check_index_record(int layout, const uint8_t rec[32], uint64_t i, uint32_t tid,
                               uint64_t detail_seq) {
    atf_index_event ev;
    atf_index_event_decode(layout, rec, &ev);
    CHECK_EQ(1000 + i, ev.timestamp_ns);
    CHECK_EQ(fid_of(i), ev.function_id);
    CHECK_EQ(i % 3 + 1, ev.kind);
    CHECK_EQ(detail_seq, ev.detail_seq);
    if (layout == ATF_LAYOUT_1) {
        CHECK_EQ(tid, ev.thread_id);
        CHECK_EQ(i % 17, ev.call_depth);
    } else {
        CHECK_EQ(0, atf__load_le64(rec + 24) >> 8); /* reserved bytes zero */
    }
}

static void index_wrap_run(int layout) {
    enum { CAP = 64 };
    size_t size = atf_ring_memory_size(ATF_RING_INDEX, CAP);
    void *mem = ring_alloc(size);
    uint64_t start;
    for (start = 0; start < 2 * CAP; start++) {
        atf_producer w;
        atf_ring c;
        uint8_t rec[32];
        uint64_t i, n = 0;
        ((atf_ring_header *)mem)->magic = 0;
        CHECK_RESULT(ATF_OK, atf_ring_init(mem, size, ATF_RING_INDEX, CAP, (uint32_t)layout, 77));
        /* move both positions to `start` as a producer and consumer that ran before */
        ((atf_ring_header *)mem)->head = ((atf_ring_header *)mem)->tail = start;
        CHECK_RESULT(ATF_OK, atf_producer_init(&w, mem, size, NULL, 0, ATF_DETAIL_OFF));
        CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
        CHECK_RESULT(ATF_OK, atf_ring_attach(&c, mem, size, 0));
        /* fill the ring completely from this position */
        for (i = 0; i < CAP; i++)
            CHECK_RESULT(ATF_OK, atf_producer_push(&w, (uint32_t)(i % 3 + 1), fid_of(i), 1000 + i,
                                                 (uint32_t)(i % 17)));
        CHECK_RESULT(ATF_E_FULL, atf_producer_push(&w, ATF_EVENT_CALL, 1, 1, 0));
        CHECK_RESULT(ATF_E_FULL, atf_producer_call(&w, 1, 1));
        CHECK_EQ(2, w.dropped);
        CHECK_EQ(2, atf__load_acquire_u64(&((atf_ring_header *)mem)->dropped));
        CHECK_EQ(start + CAP, ((atf_ring_header *)mem)->head);
        /* half out, then the ring takes exactly that many again */
        for (i = 0; i < CAP / 2; i++) {
            CHECK(consume_index(&c, rec));
            check_index_record(layout, rec, n, 77, ATF_NO_DETAIL);
            n++;
        }
        for (i = CAP; i < CAP + CAP / 2; i++)
            CHECK_RESULT(ATF_OK, atf_producer_push(&w, (uint32_t)(i % 3 + 1), fid_of(i), 1000 + i,
                                                 (uint32_t)(i % 17)));
        CHECK_RESULT(ATF_E_FULL, atf_producer_push(&w, ATF_EVENT_CALL, 1, 1, 0));
        while (consume_index(&c, rec)) {
            check_index_record(layout, rec, n, 77, ATF_NO_DETAIL);
            n++;
        }
        CHECK_EQ(CAP + CAP / 2, n);
        CHECK_EQ(3, w.dropped);
        if (harness__failures_in_test) break;
    }
    ring_free(mem);
}

static void test_index_wrap_every_position_layout1(void) { index_wrap_run(ATF_LAYOUT_1); }
static void test_index_wrap_every_position_layout2(void) { index_wrap_run(ATF_LAYOUT_2); }

static void test_depth_tracking(void) {
    size_t size = atf_ring_memory_size(ATF_RING_INDEX, 64);
    void *mem = ring_alloc(size);
    atf_producer w;
    atf_ring c;
    uint8_t rec[32];
    atf_index_event ev;
    static const uint32_t want_kind[] = {1, 1, 2, 3, 2, 1};
    static const uint32_t want_depth[] = {0, 1, 1, 0, 0, 0};
    size_t i = 0;
    CHECK_RESULT(ATF_OK, atf_ring_init(mem, size, ATF_RING_INDEX, 64, 1, 5));
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, mem, size, NULL, 0, ATF_DETAIL_OFF));
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
    CHECK_RESULT(ATF_OK, atf_ring_attach(&c, mem, size, 0));
    atf_producer_call(&w, 1, 1);
    atf_producer_call(&w, 2, 2);
    atf_producer_return(&w, 2, 3);
    atf_producer_exception(&w, 1, 4);
    atf_producer_return(&w, 9, 5); /* unmatched return: depth stays 0 */
    atf_producer_call(&w, 3, 6);
    CHECK_EQ(1, w.depth);
    while (consume_index(&c, rec)) {
        atf_index_event_decode(1, rec, &ev);
        CHECK(i < 6);
        if (i >= 6) break;
        CHECK_EQ(want_kind[i], ev.kind);
        CHECK_EQ(want_depth[i], ev.call_depth);
        CHECK_EQ(i + 1, ev.timestamp_ns);
        i++;
    }
    CHECK_EQ(6, i);
    ring_free(mem);
}

/* ---- detail ring: wraparound, fillers, full ------------------------------------------ */

static void fill_payload(uint8_t *p, size_t len, uint64_t i) {
    size_t k;
    for (k = 0; k < len; k++) p[k] = (uint8_t)(i * 31 + k * 7);
}

/* Checks a consumed detail record against event i (payload length len). */
static void check_detail_record(int layout, const uint8_t *rec, uint64_t index_seq, uint64_t i,
                                size_t len) {
    atf_detail_event_header h;
    uint8_t want[200];
    atf_detail_event_header_decode(layout, rec, &h);
    CHECK_EQ(24 + len, h.total_length);
    CHECK_EQ(ATF_DETAIL_FUNCTION_CALL, h.type);
    CHECK_EQ(0, h.flags);
    CHECK_EQ(index_seq, h.index_seq);
    CHECK_EQ(1000 + i, h.timestamp_ns);
    if (layout == ATF_LAYOUT_1) CHECK(h.thread_id == 33 || h.thread_id == 4);
    fill_payload(want, len, i);
    CHECK_MEM(want, rec + 24, len);
}

static void detail_wrap_run(int layout, uint32_t mode) {
    enum { DCAP = 4096 };
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 1024), dsz = atf_ring_memory_size(ATF_RING_DETAIL, DCAP);
    void *imem = ring_alloc(isz), *dmem = ring_alloc(dsz);
    uint64_t start, total_fillers = 0;
    for (start = 0; start < DCAP + 64; start += 8) {
        atf_producer w;
        atf_ring ci, cd;
        uint8_t payload[200], rec[32];
        uint64_t i, pushed = 0, seen = 0, index_seen = 0, fillers = 0, detail_pushed = 0;
        CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 1024, (uint32_t)layout, 33));
        CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, DCAP, (uint32_t)layout, 33));
        ((atf_ring_header *)dmem)->head = ((atf_ring_header *)dmem)->tail = start;
        CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, dmem, dsz, mode));
        CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
        CHECK_RESULT(ATF_OK, atf_ring_attach(&ci, imem, isz, 0));
        CHECK_RESULT(ATF_OK, atf_ring_attach(&cd, dmem, dsz, 0));
        /* three rounds: fill until the detail ring refuses, then drain it all */
        for (i = 0; i < 3 * 64; i++) {
            size_t len = (size_t)(i * 37 % 180) + 1;
            uint64_t before = w.detail_dropped;
            fill_payload(payload, len, i);
            CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, (uint32_t)(i % 3 + 1), fid_of(i), 1000 + i,
                                                         ATF_DETAIL_FUNCTION_CALL, payload, len));
            pushed++;
            if (w.detail_dropped == before) detail_pushed++;
            if (w.detail_dropped != before || i % 64 == 63) {
                /* consume everything: index records and detail records, in order */
                const uint8_t *drec;
                uint32_t flags = 0;
                while (consume_index(&ci, rec)) {
                    atf_index_event ev;
                    atf_index_event_decode(layout, rec, &ev);
                    CHECK_EQ(1000 + index_seen, ev.timestamp_ns);
                    if (mode == ATF_DETAIL_ALWAYS && ev.detail_seq != ATF_NO_DETAIL) {
                        /* the link names the detail record of this very event */
                        CHECK(ev.detail_seq < detail_pushed);
                    }
                    if (mode == ATF_DETAIL_WINDOWED) CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
                    index_seen++;
                }
                while ((drec = consume_detail(&cd, &flags, &fillers)) != NULL) {
                    atf_detail_event_header h;
                    atf_detail_event_header_decode(layout, drec, &h);
                    /* index_seq equals i here because no index event was dropped */
                    check_detail_record(layout, drec, h.index_seq, h.index_seq,
                                        (size_t)(h.index_seq * 37 % 180) + 1);
                    CHECK_EQ(mode == ATF_DETAIL_WINDOWED ? 2u : 0u, flags);
                    seen++;
                }
                release_detail(&cd);
            }
        }
        CHECK_EQ(pushed, index_seen);
        CHECK_EQ(detail_pushed, seen);
        CHECK_EQ(detail_pushed, w.detail_count);
        CHECK_EQ(pushed - detail_pushed, w.detail_dropped);
        CHECK_EQ(w.detail_dropped, ((atf_ring_header *)dmem)->dropped);
        CHECK(w.detail_dropped > 0); /* the ring did fill up */
        total_fillers += fillers;
        if (harness__failures_in_test) break;
    }
    CHECK(total_fillers > 0);
    ring_free(imem);
    ring_free(dmem);
}

static void test_detail_wrap_every_position_always_l1(void) { detail_wrap_run(1, ATF_DETAIL_ALWAYS); }
static void test_detail_wrap_every_position_always_l2(void) { detail_wrap_run(2, ATF_DETAIL_ALWAYS); }
static void test_detail_wrap_every_position_windowed(void) { detail_wrap_run(1, ATF_DETAIL_WINDOWED); }

/* An entry that would straddle the end is preceded by a filler to the end, and the entry
 * starts at offset 0: checked at every 8-byte position of the last 256 bytes. */
static void test_detail_straddle_makes_filler(void) {
    enum { DCAP = 4096 };
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64), dsz = atf_ring_memory_size(ATF_RING_DETAIL, DCAP);
    void *imem = ring_alloc(isz), *dmem = ring_alloc(dsz);
    uint64_t start;
    uint8_t payload[100];
    fill_payload(payload, sizeof payload, 0);
    for (start = DCAP - 256; start < DCAP; start += 8) {
        atf_producer w;
        atf_ring cd;
        const uint8_t *drec;
        uint32_t flags;
        uint64_t fillers = 0, entry = (8 + 24 + sizeof payload + 7) & ~7u;
        CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 1, 33));
        CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, DCAP, 1, 33));
        ((atf_ring_header *)dmem)->head = ((atf_ring_header *)dmem)->tail = start;
        CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, dmem, dsz, ATF_DETAIL_ALWAYS));
        CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
        CHECK_RESULT(ATF_OK, atf_ring_attach(&cd, dmem, dsz, 0));
        CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, ATF_EVENT_CALL, 1, 1000, 3, payload, sizeof payload));
        CHECK_EQ(0, w.detail_dropped);
        drec = consume_detail(&cd, &flags, &fillers);
        CHECK(drec != NULL);
        CHECK_EQ(DCAP - start >= entry ? 0 : 1, fillers);
        if (fillers) CHECK(drec == cd.data + 8);
        else CHECK(drec == cd.data + start + 8);
        CHECK_EQ(start + entry + (fillers ? DCAP - start : 0), ((atf_ring_header *)dmem)->head);
    }
    ring_free(imem);
    ring_free(dmem);
}

static void test_detail_full_and_index_full(void) {
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64), dsz = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    void *imem = ring_alloc(isz), *dmem = ring_alloc(dsz);
    atf_producer w;
    uint8_t big[4096];
    uint64_t head, i;
    memset(big, 1, sizeof big);
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 1, 33));
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 1, 33));
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, dmem, dsz, ATF_DETAIL_ALWAYS));
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
    /* a record larger than half the ring is refused, the event kept without detail */
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, ATF_EVENT_CALL, 1, 1, 3, big, 2048));
    CHECK_EQ(1, w.detail_dropped);
    CHECK_EQ(0, w.detail_count);
    CHECK_EQ(0, ((atf_ring_header *)dmem)->head);
    /* a huge length is refused without overflow */
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, ATF_EVENT_RETURN, 1, 2, 3, big, SIZE_MAX - 8));
    CHECK_EQ(2, w.detail_dropped);
    /* fill the detail ring, then every later detail is dropped and counted */
    for (i = 0; i < 40; i++) atf_producer_event_detail(&w, ATF_EVENT_CALL, 1, 3 + i, 3, big, 200);
    CHECK_EQ(2 + (40 - 4096 / 232), w.detail_dropped); /* entries of 8 + 24 + 200 bytes */
    CHECK_EQ(4096 / 232, w.detail_count);
    CHECK_EQ(w.detail_dropped, ((atf_ring_header *)dmem)->dropped);
    /* fill the index ring: an event with detail is then dropped whole */
    while (atf_producer_push(&w, ATF_EVENT_CALL, 1, 100, 0) == ATF_OK) {}
    head = ((atf_ring_header *)dmem)->head;
    i = w.dropped;
    CHECK_RESULT(ATF_E_FULL, atf_producer_event_detail(&w, ATF_EVENT_CALL, 1, 200, 3, big, 8));
    CHECK_EQ(i + 1, w.dropped);
    CHECK_EQ(head, ((atf_ring_header *)dmem)->head); /* no detail without its index event */
    CHECK_EQ(i + 1, ((atf_ring_header *)imem)->dropped);
    ring_free(imem);
    ring_free(dmem);
}

/* Layout 1 keeps links in 32 bits: detail stops before index_seq passes 0xFFFFFFFF or
 * detail_seq would reach the "none" value. */
static void test_layout1_link_limits(void) {
    size_t isz = atf_ring_memory_size(ATF_RING_INDEX, 64), dsz = atf_ring_memory_size(ATF_RING_DETAIL, 4096);
    void *imem = ring_alloc(isz), *dmem = ring_alloc(dsz);
    atf_producer w;
    atf_ring ci;
    uint8_t rec[32], p[8] = {0};
    atf_index_event ev;
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 1, 33));
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 1, 33));
    ((atf_ring_header *)imem)->head = ((atf_ring_header *)imem)->tail = 0xFFFFFFFEu;
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, dmem, dsz, ATF_DETAIL_ALWAYS));
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
    CHECK_RESULT(ATF_OK, atf_ring_attach(&ci, imem, isz, 0));
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, 1, 1, 1, 3, p, 8)); /* index 0xFFFFFFFE */
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, 1, 1, 2, 3, p, 8)); /* index 0xFFFFFFFF */
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, 1, 1, 3, 3, p, 8)); /* index 2^32: none */
    CHECK_EQ(2, w.detail_count);
    CHECK_EQ(1, w.detail_dropped);
    CHECK(consume_index(&ci, rec));
    atf_index_event_decode(1, rec, &ev);
    CHECK_EQ(0, ev.detail_seq);
    CHECK(consume_index(&ci, rec));
    atf_index_event_decode(1, rec, &ev);
    CHECK_EQ(1, ev.detail_seq);
    CHECK(consume_index(&ci, rec));
    atf_index_event_decode(1, rec, &ev);
    CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
    /* the detail numbers: 0xFFFFFFFE is the last one a layout-1 link can carry */
    CHECK_RESULT(ATF_OK, atf_ring_init(imem, isz, ATF_RING_INDEX, 64, 1, 33));
    CHECK_RESULT(ATF_OK, atf_ring_init(dmem, dsz, ATF_RING_DETAIL, 4096, 1, 33));
    CHECK_RESULT(ATF_OK, atf_producer_init(&w, imem, isz, dmem, dsz, ATF_DETAIL_ALWAYS));
    CHECK_RESULT(ATF_OK, atf_producer_set_overflow(&w, ATF_OVERFLOW_DROP, 0)); /* no consumer runs */
    CHECK_RESULT(ATF_OK, atf_ring_attach(&ci, imem, isz, 0));
    w.detail_count = 0xFFFFFFFEu;
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, 1, 1, 1, 3, p, 8));
    CHECK_RESULT(ATF_OK, atf_producer_event_detail(&w, 1, 1, 2, 3, p, 8));
    CHECK(consume_index(&ci, rec));
    atf_index_event_decode(1, rec, &ev);
    CHECK_EQ(0xFFFFFFFEu, ev.detail_seq);
    CHECK(consume_index(&ci, rec));
    atf_index_event_decode(1, rec, &ev);
    CHECK_EQ(ATF_NO_DETAIL, ev.detail_seq);
    CHECK_EQ(1, w.detail_dropped);
    ring_free(imem);
    ring_free(dmem);
}

/* ---- two threads ----------------------------------------------------------------------- */

typedef struct stress_ctx {
    void *imem, *dmem;
    size_t isz, dsz;
    uint64_t n;
    uint64_t full_seen;
    int layout;
} stress_ctx;

static void *stress_producer(void *arg) {
    stress_ctx *x = (stress_ctx *)arg;
    atf_producer w;
    uint8_t payload[64];
    uint64_t i;
    if (atf_producer_init(&w, x->imem, x->isz, x->dmem, x->dsz,
                        x->dmem ? ATF_DETAIL_ALWAYS : ATF_DETAIL_OFF) != ATF_OK)
        return NULL;
    for (i = 0; i < x->n; i++) {
        atf_result rc;
        for (;;) {
            if (x->dmem && i % 5 == 0) {
                size_t len = (size_t)(i % 57) + 1;
                uint64_t before = w.detail_dropped;
                fill_payload(payload, len, i);
                rc = atf_producer_event_detail(&w, (uint32_t)(i % 3 + 1), fid_of(i), 1000 + i, 3, payload, len);
                /* a full detail ring sends the event without detail: checked below */
                if (rc == ATF_OK && w.detail_dropped != before) x->full_seen++;
            } else {
                rc = atf_producer_push(&w, (uint32_t)(i % 3 + 1), fid_of(i), 1000 + i, (uint32_t)(i % 17));
            }
            if (rc == ATF_OK) break;
            x->full_seen++;
            sched_yield();
        }
    }
    atf_producer_close(&w);
    return NULL;
}

/* Producer and consumer on two threads: every event exactly once, in order; with a
 * detail ring, every detail record belongs to the event whose link names it. */
static void stress_run(int with_detail, int layout) {
    stress_ctx x;
    pthread_t t;
    atf_ring ci, cd;
    uint8_t rec[32];
    uint64_t next = 0, dnext = 0, spins = 0;
    memset(&x, 0, sizeof x);
    x.n = with_detail ? STRESS_EVENTS / 4 : STRESS_EVENTS;
    x.layout = layout;
    x.isz = atf_ring_memory_size(ATF_RING_INDEX, 1024);
    x.imem = ring_alloc(x.isz);
    CHECK_RESULT(ATF_OK, atf_ring_init(x.imem, x.isz, ATF_RING_INDEX, 1024, (uint32_t)layout, 4));
    if (with_detail) {
        x.dsz = atf_ring_memory_size(ATF_RING_DETAIL, 8192);
        x.dmem = ring_alloc(x.dsz);
        CHECK_RESULT(ATF_OK, atf_ring_init(x.dmem, x.dsz, ATF_RING_DETAIL, 8192, (uint32_t)layout, 4));
        CHECK_RESULT(ATF_OK, atf_ring_attach(&cd, x.dmem, x.dsz, 0));
    }
    CHECK_RESULT(ATF_OK, atf_ring_attach(&ci, x.imem, x.isz, 0));
    CHECK_EQ(0, pthread_create(&t, NULL, stress_producer, &x));
    for (;;) {
        int closed = atf__load_acquire_u64(&ci.shared->closed) != 0;
        int got = 0;
        while (consume_index(&ci, rec)) {
            atf_index_event ev;
            atf_index_event_decode(layout, rec, &ev);
            got = 1;
            if (ev.timestamp_ns != 1000 + next || ev.function_id != fid_of(next)) {
                CHECK_EQ(1000 + next, ev.timestamp_ns);
                CHECK_EQ(fid_of(next), ev.function_id);
                break;
            }
            if (with_detail && ev.detail_seq != ATF_NO_DETAIL) {
                /* the detail record was published before its index event */
                uint32_t flags = 0;
                const uint8_t *drec = consume_detail(&cd, &flags, NULL);
                atf_detail_event_header h;
                CHECK(drec != NULL);
                if (!drec) break;
                atf_detail_event_header_decode(layout, drec, &h);
                CHECK_EQ(dnext, ev.detail_seq);
                CHECK_EQ(next, h.index_seq);
                check_detail_record(layout, drec, next, next, (size_t)(next % 57) + 1);
                release_detail(&cd);
                dnext++;
            } else if (!with_detail && layout == 1) {
                CHECK_EQ(next % 17, ev.call_depth);
            }
            next++;
        }
        if (harness__failures_in_test) break;
        if (closed && !got && next == x.n) break;
        if (closed && !got && atf__load_acquire_u64(&ci.shared->head) == ci.pos) break;
        if (!got && ++spins % 64 == 0) sched_yield();
    }
    pthread_join(t, NULL);
    CHECK_EQ(x.n, next);
    if (with_detail) CHECK(dnext > 0);
    ring_free(x.imem);
    if (x.dmem) ring_free(x.dmem);
}

static void test_spsc_stress_index(void) { stress_run(0, ATF_LAYOUT_1); }
static void test_spsc_stress_index_layout2(void) { stress_run(0, ATF_LAYOUT_2); }
static void test_spsc_stress_with_detail(void) { stress_run(1, ATF_LAYOUT_1); }

static const test_case tests[] = {
    {"memory_sizes", test_memory_sizes},
    {"init_arguments", test_init_arguments},
    {"attach_refuses_bad_headers", test_attach_refuses_bad_headers},
    {"writer_init_checks", test_writer_init_checks},
    {"index_wrap_every_position_layout1", test_index_wrap_every_position_layout1},
    {"index_wrap_every_position_layout2", test_index_wrap_every_position_layout2},
    {"depth_tracking", test_depth_tracking},
    {"detail_wrap_every_position_always_l1", test_detail_wrap_every_position_always_l1},
    {"detail_wrap_every_position_always_l2", test_detail_wrap_every_position_always_l2},
    {"detail_wrap_every_position_windowed", test_detail_wrap_every_position_windowed},
    {"detail_straddle_makes_filler", test_detail_straddle_makes_filler},
    {"detail_full_and_index_full", test_detail_full_and_index_full},
    {"layout1_link_limits", test_layout1_link_limits},
    {"spsc_stress_index", test_spsc_stress_index},
    {"spsc_stress_index_layout2", test_spsc_stress_index_layout2},
    {"spsc_stress_with_detail", test_spsc_stress_with_detail},
};

HARNESS_MAIN("ring", tests)
