/* make_seeds.c - writes the seed corpora of the fuzz targets from tests/fixtures.h.
 *
 *   build/fuzz/make_seeds DIR       (normally: fuzz/corpus)
 *
 * Writes DIR/<target>/<name> for the targets index, packed, detail, thread, manifest,
 * session and ktrace, in the framing each fuzz_<target>.c documents. Every byte comes from
 * the fixture builders, from literal text here, or (packed payloads) from atf.h's
 * atf_packed_encode, so the output is the same on every run and host.
 * Inputs found by fuzzing (crash-*, named after the bug) live next to these seeds and are
 * not touched. */
#include "atf.h"
#include "tests/fixtures.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>

static const char *out_dir;
static int failures;

static void put(const char *target, const char *name, const uint8_t *data, size_t len) {
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", out_dir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "make_seeds: mkdir %s: %s\n", path, strerror(errno));
        failures++;
        return;
    }
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, target, name);
    f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        fprintf(stderr, "make_seeds: writing %s failed\n", path);
        failures++;
    }
}

/* A seed name from a catalog name: "l1_finalized/index.atf" -> "l1_finalized",
 * "bad_magic.atf" -> "bad_magic"; then the suffix. */
static void seed_name(char *buf, size_t cap, const char *catalog_name, const char *suffix) {
    size_t i, n = 0;
    for (i = 0; catalog_name[i] && n + 1 < cap; i++) {
        char c = catalog_name[i];
        if (c == '/' || c == '.') break;
        buf[n++] = c;
    }
    buf[n] = '\0';
    snprintf(buf + n, cap - n, "%s", suffix);
}

/* ---- thread seeds: u32 prefix (index length | flags), index bytes, detail bytes ---- */
static void put_thread(const char *name, const fx_buf *index, const fx_buf *detail, uint32_t flags) {
    fx_buf b = { NULL, 0, 0 };
    size_t at = fx_buf_grow(&b, 4);
    fx_put32(b.data, at, (uint32_t)index->len | flags);
    fx_buf_append(&b, index->data, index->len);
    if (detail) fx_buf_append(&b, detail->data, detail->len);
    put("thread", name, b.data, b.len);
    fx_buf_free(&b);
}

/* ---- session seeds: flags, filter byte, four u16 lengths, then the parts ---- */
static void put_session(const char *name, uint8_t flags, uint8_t filter, const char *manifest,
                        const fx_buf *i0, const fx_buf *i1, const fx_buf *i2) {
    fx_buf b = { NULL, 0, 0 };
    const fx_buf *parts[3];
    size_t at = fx_buf_grow(&b, 10), k, mlen = manifest ? strlen(manifest) : 0;
    parts[0] = i0;
    parts[1] = i1;
    parts[2] = i2;
    b.data[at] = flags;
    b.data[at + 1] = filter;
    fx_put16(b.data, at + 2, (uint16_t)mlen);
    for (k = 0; k < 3; k++) fx_put16(b.data, at + 4 + 2 * k, (uint16_t)(parts[k] ? parts[k]->len : 0));
    if (mlen) fx_buf_append(&b, (const uint8_t *)manifest, mlen);
    for (k = 0; k < 3; k++)
        if (parts[k]) fx_buf_append(&b, parts[k]->data, parts[k]->len);
    put("session", name, b.data, b.len);
    fx_buf_free(&b);
}

static void build_index(fx_buf *b, int layout, uint64_t count, int finalized, uint32_t tid) {
    fx_index_spec s;
    memset(&s, 0, sizeof s);
    s.layout = layout;
    s.count = count;
    s.finalized = s.footer = finalized;
    s.crc = finalized;
    s.thread_id = tid;
    fx_index_build(b, &s);
}

/* ---- packed seeds: files, and payloads framed as u16 count, u32 thread id, bytes ---- */
/* The packed form of the layout-1 image `l1` of `count` events (events at 64, footer
 * after them), in blocks of `block_events`, laid out as atf.h's >>packed section says:
 * header (version 3, footer_offset moved), lane header, blocks, table, the same footer. */
static void pack_image(fx_buf *out, const fx_buf *l1, uint64_t count, uint32_t block_events) {
    uint32_t tid = fx_get32(l1->data, 12);
    uint64_t first, k, blocks = (count + block_events - 1) / block_events;
    uint64_t *table = (uint64_t *)calloc(blocks ? (size_t)blocks : 1, sizeof *table);
    size_t at;
    if (!table) abort();
    fx_buf_append(out, l1->data, FX_HEADER_SIZE);
    fx_put8(out->data, 5, ATF_LAYOUT_PACKED);
    at = fx_buf_grow(out, ATF_PACKED_LANE_SIZE);
    fx_put_magic(out->data, at, ATF_PACKED_LANE_MAGIC);
    fx_put32(out->data, at + 4, block_events);
    for (k = 0; k < blocks; k++) {
        uint64_t left = count - k * block_events;
        uint32_t n = left < block_events ? (uint32_t)left : block_events;
        size_t len, payload;
        table[k] = out->len;
        at = fx_buf_grow(out, ATF_PACKED_BLOCK_HEADER_SIZE);
        payload = fx_buf_grow(out, (size_t)n * ATF_PACKED_EVENT_MAX);
        first = FX_HEADER_SIZE + k * block_events * FX_EVENT_SIZE;
        len = atf_packed_encode(l1->data + first, n, tid, out->data + payload);
        fx_buf_truncate(out, payload + len);
        fx_put32(out->data, at, n);
        fx_put32(out->data, at + 4, (uint32_t)len);
        fx_put32(out->data, at + 8, fx_crc32c(out->data + payload, len));
    }
    for (k = 0; k < blocks; k++) {
        at = fx_buf_grow(out, 8);
        fx_put64(out->data, at, table[k]);
    }
    fx_put64(out->data, 40, out->len);
    fx_buf_append(out, l1->data + FX_HEADER_SIZE + count * FX_EVENT_SIZE, FX_FOOTER_SIZE);
    free(table);
}

/* A finalized file of `count` fixture events; cut > 0 keeps its first cut bytes, cut < 0
 * drops its last -cut bytes (what a crash or a short copy leaves). */
static void put_packed(const char *name, uint64_t count, uint64_t stride, uint32_t block_events,
                       long cut) {
    fx_buf l1 = { NULL, 0, 0 }, p = { NULL, 0, 0 };
    fx_index_spec s;
    memset(&s, 0, sizeof s);
    s.layout = 1;
    s.count = count;
    s.finalized = s.footer = s.crc = 1;
    s.stride = stride;
    fx_index_build(&l1, &s);
    pack_image(&p, &l1, count, block_events);
    if (cut > 0) fx_buf_truncate(&p, (size_t)cut);
    if (cut < 0) fx_buf_truncate(&p, p.len - (size_t)-cut);
    put("packed", name, p.data, p.len);
    fx_buf_free(&l1);
    fx_buf_free(&p);
}

/* One block's payload: `count` fixture events (links every `stride`) coded for thread tid. */
static void put_payload(const char *name, uint64_t count, uint64_t stride, uint32_t tid) {
    fx_buf b = { NULL, 0, 0 };
    size_t at = fx_buf_grow(&b, 6), ev0 = fx_buf_grow(&b, (size_t)count * FX_EVENT_SIZE), len;
    uint8_t *coded = (uint8_t *)malloc((size_t)count * ATF_PACKED_EVENT_MAX + 1);
    uint64_t i;
    if (!coded) abort();
    fx_put16(b.data, at, (uint16_t)count);
    fx_put32(b.data, at + 2, tid);
    for (i = 0; i < count; i++) fx_index_event(1, i, FX_THREAD_ID, stride, b.data + ev0 + i * FX_EVENT_SIZE);
    len = atf_packed_encode(b.data + ev0, (size_t)count, tid, coded);
    fx_buf_truncate(&b, ev0);
    fx_buf_append(&b, coded, len);
    put("packed", name, b.data, b.len);
    free(coded);
    fx_buf_free(&b);
}

static void packed_seeds(void) {
    put_packed("empty", 0, 0, ATF_PACKED_BLOCK_EVENTS, 0);
    put_packed("one_event", 1, 0, ATF_PACKED_BLOCK_EVENTS, 0);
    put_packed("one_block_links", 40, 3, ATF_PACKED_BLOCK_EVENTS, 0);
    put_packed("small_blocks", 10, 2, 4, 0);            /* blocks of 4, 4, 2 */
    put_packed("full_blocks", 12, 1, 4, 0);             /* the last block full too */
    put_packed("two_library_blocks", 1500, 5, ATF_PACKED_BLOCK_EVENTS, 0);
    put_packed("torn_lane", 10, 2, 4, 64 + 9);
    put_packed("torn_in_first_block", 10, 2, 4, 64 + 16 + 16 + 5);
    put_packed("torn_in_last_block", 10, 2, 4, -(64 + 24 + 3));
    put_packed("torn_in_table", 10, 2, 4, -(64 + 4));
    put_packed("torn_footer", 10, 2, 4, -10);
    put_payload("payload_calls_returns", 64, 0, FX_THREAD_ID);
    put_payload("payload_links", 64, 3, FX_THREAD_ID);
    put_payload("payload_other_thread", 16, 1, 7); /* every event names its thread */
    put_payload("payload_empty", 0, 0, 0);
}

/* ---- ktrace v3 (ktrace(5)): file header, chunks padded to 8 ---- */
static void k_header(fx_buf *b, uint32_t magic, uint64_t header_size) {
    size_t at = fx_buf_grow(b, 64);
    fx_put32(b->data, at, magic);
    fx_put16(b->data, at + 4, 3);
    fx_put16(b->data, at + 6, 0);
    fx_put64(b->data, at + 8, header_size);
    fx_put32(b->data, at + 16, 125);
    fx_put32(b->data, at + 20, 3);
    fx_put64(b->data, at + 24, 0x0123456789ABCDEFull);
    fx_put64(b->data, at + 32, 1581292800u);
    fx_put32(b->data, at + 40, 123456u);
    fx_put32(b->data, at + 44, 480u);
    fx_put32(b->data, at + 48, 1u);
    fx_put32(b->data, at + 52, 0x80000005u);
}
static void k_chunk(fx_buf *b, uint32_t tag, uint64_t size, uint64_t data_len, int pad) {
    size_t at = fx_buf_grow(b, 16), i;
    fx_put32(b->data, at, tag);
    fx_put16(b->data, at + 4, 1);
    fx_put16(b->data, at + 6, 0);
    fx_put64(b->data, at + 8, size);
    at = fx_buf_grow(b, (size_t)data_len);
    for (i = 0; i < data_len; i++) b->data[at + i] = (uint8_t)(tag + 7u * i);
    if (pad) fx_buf_grow(b, (8 - (b->len & 7u)) & 7u);
}

static void ktrace_seeds(void) {
    fx_buf b = { NULL, 0, 0 };
    /* the typical file of ktrace(5): two header chunks, two body chunks */
    k_header(&b, 0x55aa0300u, 128);
    k_chunk(&b, 0x1c00u, 32, 32, 1);
    k_chunk(&b, 0x1d00u, 14, 14, 1);
    k_chunk(&b, 0x1e00u, 128, 128, 1);
    k_chunk(&b, 0x8000u, 252, 252, 1);
    put("ktrace", "typical_padded", b.data, b.len);
    fx_buf_truncate(&b, b.len - 4);
    put("ktrace", "typical_unpadded", b.data, b.len);
    fx_buf_free(&b);
    /* header structure only */
    k_header(&b, 0x55aa0300u, 48);
    put("ktrace", "header_only", b.data, b.len);
    k_chunk(&b, 0x8001u, 0, 0, 1);
    k_chunk(&b, 0x8002u, 9, 9, 1);
    put("ktrace", "body_chunks", b.data, b.len);
    fx_buf_free(&b);
    /* a header chunk that crosses 16 + header_size */
    k_header(&b, 0x55aa0300u, 80);
    k_chunk(&b, 0x1c00u, 40, 40, 1);
    put("ktrace", "header_chunk_crossing", b.data, b.len);
    fx_buf_free(&b);
    /* a body chunk whose size passes the end */
    k_header(&b, 0x55aa0300u, 48);
    k_chunk(&b, 0x8000u, 4096, 20, 0);
    put("ktrace", "chunk_past_eof", b.data, b.len);
    fx_buf_free(&b);
    /* byte-swapped magic, and a zero timebase */
    k_header(&b, 0x0003aa55u, 48);
    put("ktrace", "big_endian", b.data, b.len);
    fx_buf_free(&b);
    k_header(&b, 0x55aa0300u, 48);
    fx_put32(b.data, 20, 0);
    put("ktrace", "zero_denom", b.data, b.len);
    fx_buf_free(&b);
}

/* ---- manifests ---- */
static const char *const manifests[][2] = {
    { "writer_style",
      "{\"format_version\":2,\"layout\":1,\"clock_type\":1,\"clock\":\"mach_continuous\","
      "\"pid\":1,\"arch\":\"arm64\",\"os\":\"macos\",\"state\":\"closed\",\"threads\":[{\"id\":0,"
      "\"has_detail\":true,\"os_thread_id\":168496141,\"name\":\"main \\\"thread\\\"\\n\","
      "\"events_written\":24,\"events_dropped\":3,\"detail_written\":8,\"detail_dropped\":0,"
      "\"events_lost_io\":0,\"finalized\":true}],\"time_start_ns\":1000,\"time_end_ns\":1230,"
      "\"events_dropped\":3,\"attach_failures\":0,\"modules\":[{\"module_id\":0,\"path\":"
      "\"/usr/bin/app\",\"base_address\":\"0x100000000\",\"size\":65536}],\"symbols\":["
      "{\"function_id\":\"0x0000000000000010\",\"module_id\":0,\"symbol_index\":16,\"name\":\"main\"},"
      "{\"function_id\":\"0x0000000100000017\",\"module_id\":1,\"symbol_index\":23,\"name\":\"caf\\u00e9\"},"
      "{\"function_id\":\"0x000000020000001e\",\"module_id\":2,\"symbol_index\":30,\"name\":\"\\ud83d\\ude00 smile\"},"
      "{\"function_id\":\"0x0000000300000025\",\"module_id\":3,\"symbol_index\":37,\"name\":\"tab\\there\\\\\\/\"}],"
      "\"timing_anchors\":[{\"name\":\"wall_clock_ns\",\"host_ns\":1000,\"value\":1.7e+18,\"rate\":1000000000}]}\n" },
    { "original_tracer",
      "{\n  \"threads\": [{\"id\": 0, \"has_detail\": true}],\n  \"time_start_ns\": 0,\n"
      "  \"time_end_ns\": 0,\n  \"clock_type\": 1,\n  \"format_version\": 2,\n"
      "  \"modules\": [{\"module_id\": 0, \"path\": \"/bin/x\", \"base_address\": \"0x100000000\","
      " \"size\": 4096}],\n  \"symbols\": [{\"function_id\": \"0x0000000000000010\", \"module_id\": 0,"
      " \"symbol_index\": 16, \"name\": \"main\"}]\n}\n" },
    { "missing_threads",
      "{\"threads\":[{\"id\":0,\"has_detail\":true},{\"id\":3,\"has_detail\":false},"
      "{\"id\":4294967295}],\"format_version\":2}" },
    { "incomplete", "{\"threads\":[],\"format_version\":2,\"layout\":2}" },
    { "numbers",
      "{\"threads\":[{\"id\":0.5e3,\"os_thread_id\":-12,\"events_dropped\":18446744073709551615}],"
      "\"time_start_ns\":1e400,\"time_end_ns\":\"0xFFFFFFFFFFFFFFFF\",\"clock_type\":true}" },
    { "nested",
      "{\"threads\":[{\"id\":0,\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}],"
      "\"symbols\":[{\"function_id\":16,\"name\":null},{\"name\":\"no id\"},7,\"s\"]}" },
    { "bad_unicode", "{\"threads\":[{\"id\":0,\"name\":\"\\ud800\\u0041\\udc00x\\u12\"}]}" },
    { "not_object", "[{\"threads\":[]}]" },
    { "truncated", "{\"threads\":[{\"id\":0,\"has_detail\":tr" },
    { "empty", "" },
};

int main(int argc, char **argv) {
    size_t count, i;
    const fx_entry *cat;
    char name[256];
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "make_seeds: mkdir %s: %s\n", out_dir, strerror(errno));
        return 1;
    }

    /* index, detail, thread: every fixture of the catalog */
    cat = fx_catalog(&count);
    for (i = 0; i < count; i++) {
        const fx_entry *e = &cat[i];
        fx_buf index = { NULL, 0, 0 }, detail = { NULL, 0, 0 };
        fx_entry_build(e, &index, &detail);
        if (e->kind == FX_KIND_INDEX) {
            seed_name(name, sizeof name, e->name, "");
            put("index", name, index.data, index.len);
        } else if (e->kind == FX_KIND_DETAIL) {
            seed_name(name, sizeof name, e->name, "");
            put("detail", name, detail.data, detail.len);
        } else {
            seed_name(name, sizeof name, e->name, "");
            put_thread(name, &index, e->stride ? &detail : NULL, e->stride ? 0 : 0x80000000u);
            seed_name(name, sizeof name, e->name, "_index");
            put("index", name, index.data, index.len);
            if (e->stride) {
                seed_name(name, sizeof name, e->name, "_mmap_verify");
                put_thread(name, &index, &detail, 0x60000000u);
                seed_name(name, sizeof name, e->name, "_detail");
                put("detail", name, detail.data, detail.len);
            }
        }
        fx_buf_free(&index);
        fx_buf_free(&detail);
    }

    /* manifest */
    for (i = 0; i < sizeof manifests / sizeof manifests[0]; i++)
        put("manifest", manifests[i][0], (const uint8_t *)manifests[i][1], strlen(manifests[i][1]));

    /* session: ordered and unordered threads, equal timestamps across threads */
    {
        fx_buf a = { NULL, 0, 0 }, b = { NULL, 0, 0 }, c = { NULL, 0, 0 }, crashed = { NULL, 0, 0 };
        build_index(&a, 1, 12, 1, 11);
        build_index(&b, 2, 9, 1, 22);
        build_index(&c, 1, 10, 0, 33);
        /* c out of order: events 2 and 7 swap timestamps, events 4 and 5 tie */
        fx_put64(c.data, 64 + 2 * 32, fx_ts(7));
        fx_put64(c.data, 64 + 7 * 32, fx_ts(2));
        fx_put64(c.data, 64 + 5 * 32, fx_ts(4));
        build_index(&crashed, 1, 6, 0, 44);
        fx_buf_grow(&crashed, 13); /* a torn last event */
        put_session("three_threads_manifest", 0x0F, 0x00,
                    "{\"threads\":[{\"id\":0,\"has_detail\":false},{\"id\":1},{\"id\":2}],"
                    "\"format_version\":2,\"time_start_ns\":0,\"time_end_ns\":0}", &a, &b, &c);
        put_session("three_threads_scan_mmap", 0x1E, 0x26, NULL, &a, &b, &c);
        put_session("same_file_twice_gap_slots", 0x4B, 0x12, "{\"threads\":[{\"id\":0},{\"id\":7}]}",
                    &a, NULL, &a);
        put_session("unordered_alone_verify", 0x22, 0x04, NULL, &c, NULL, NULL);
        /* a window merged first, before anything checked the order (flags bit 7) */
        put_session("window_first_scan_mmap", 0x9E, 0x30, NULL, &a, &b, &c);
        put_session("window_first_unordered_read", 0x88, 0x00, NULL, NULL, NULL, &c);
        put_session("crashed_and_missing", 0x07, 0x00,
                    "{\"threads\":[{\"id\":0},{\"id\":1},{\"id\":5}],\"format_version\":2}",
                    &crashed, &b, NULL);
        put_session("manifest_only", 0x01, 0x00, "{\"threads\":[{\"id\":0}]}", NULL, NULL, NULL);
        fx_buf_free(&a);
        fx_buf_free(&b);
        fx_buf_free(&c);
        fx_buf_free(&crashed);
    }

    packed_seeds();
    ktrace_seeds();
    return failures ? 1 : 0;
}
