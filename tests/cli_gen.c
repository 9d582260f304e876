/* cli_gen - writes the ATF files that tests/cli_checks.sh runs the atf command on.
 * SPDX-License-Identifier: MIT
 *
 * usage: cli_gen DIR [BIG_EVENTS]
 *
 * Every file is assembled in memory from the library's encoders and CRC32-C: finalized
 * files of both layouts, thread directories with detail, files left by a crash (placeholder
 * header, no footer, torn last record), and damaged ones (bad CRC, footer that disagrees,
 * bad magic, broken link), and Darwin ktrace v3 files (kt*.ktrace). With BIG_EVENTS it
 * also writes big.atf with that many events. */
#include "atf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What one generated thread looks like; zero fields are "no" / "none". */
typedef struct gen_spec {
    int layout;                 /* ATF_LAYOUT_1 or ATF_LAYOUT_2 */
    uint64_t count;             /* index events */
    uint32_t thread_id;
    uint64_t detail_every;      /* every k-th event has a detail record */
    int placeholder;            /* headers left as written at open: a crash before close */
    int no_footer;              /* no footer after the events */
    int no_crc;                 /* footers carry checksum 0 */
    uint32_t crc_flip;          /* xored into the index footer checksum */
    uint64_t footer_extra;      /* added to the index footer's event_count */
    uint64_t detail_footer_extra; /* added to the detail footer's event_count */
    size_t torn;                /* bytes of a torn record after the last index event */
    uint64_t link_break;        /* 1 + the detail record whose index_seq is off by one */
} gen_spec;

typedef struct gen_buf {
    uint8_t *data;
    size_t len, cap;
} gen_buf;

static void gen_die(const char *what, const char *detail) {
    fprintf(stderr, "cli_gen: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* Reserves n bytes at the end of b and returns them. */
static uint8_t *gen_grow(gen_buf *b, size_t n) {
    uint8_t *at;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        b->data = (uint8_t *)realloc(b->data, cap);
        if (!b->data) gen_die("out of memory", NULL);
        b->cap = cap;
    }
    at = b->data + b->len;
    b->len += n;
    return at;
}

static void gen_append(gen_buf *b, const void *p, size_t n) {
    memcpy(gen_grow(b, n), p, n);
}

static void gen_write(const char *dir, const char *name, const gen_buf *b) {
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f) gen_die(path, strerror(errno));
    if (fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0)
        gen_die(path, "write failed");
}

static void gen_mkdir(const char *dir, const char *name, char *path, size_t cap) {
    if (name) snprintf(path, cap, "%s/%s", dir, name);
    else snprintf(path, cap, "%s", dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) gen_die(path, strerror(errno));
}

/* Index event i: alternating call/return, increasing timestamps, a few functions. */
static void gen_index_event(uint64_t i, const gen_spec *s, atf_index_event *ev) {
    memset(ev, 0, sizeof *ev);
    ev->timestamp_ns = 1000000000u + i * 1500u + (i % 7u) * 3u;
    ev->function_id = ((i % 3u) << 32) | (0x100u + (i / 2u) % 11u);
    ev->kind = i % 2u == 0 ? ATF_EVENT_CALL : ATF_EVENT_RETURN;
    ev->thread_id = s->layout == ATF_LAYOUT_1 ? s->thread_id : 0;
    ev->call_depth = s->layout == ATF_LAYOUT_1 ? (uint32_t)((i / 2u) % 5u) : 0;
    ev->detail_seq = ATF_NO_DETAIL;
}

/* Appends the detail record of index event `ev` (sequence `index_seq`) to `records`. */
static void gen_detail_record(const gen_spec *s, uint64_t index_seq, const atf_index_event *ev,
                              gen_buf *records) {
    uint8_t stack[64], *at;
    atf_detail_payload pl;
    atf_detail_event_header h;
    size_t k;
    memset(&pl, 0, sizeof pl);
    pl.function_id = ev->function_id;
    for (k = 0; k < 8; k++) pl.x[k] = index_seq * 10u + k;
    pl.lr = 0x400000u + index_seq;
    pl.fp = 0x7ff000u - index_seq * 16u;
    pl.sp = pl.fp - 64u;
    pl.stack_size = (uint16_t)((index_seq * 8u) % sizeof stack);
    for (k = 0; k < sizeof stack; k++) stack[k] = (uint8_t)(index_seq + k);
    pl.stack = stack;
    memset(&h, 0, sizeof h);
    h.total_length = (uint32_t)(ATF_DETAIL_EVENT_HEADER_SIZE + ATF_DETAIL_PAYLOAD_SIZE + pl.stack_size);
    h.type = ev->kind == ATF_EVENT_CALL ? ATF_DETAIL_FUNCTION_CALL : ATF_DETAIL_FUNCTION_RETURN;
    h.flags = (uint16_t)(index_seq % 4u);
    h.index_seq = index_seq;
    h.thread_id = s->layout == ATF_LAYOUT_1 ? s->thread_id : 0;
    h.timestamp_ns = ev->timestamp_ns;
    at = gen_grow(records, h.total_length);
    atf_detail_event_header_encode(s->layout, &h, at);
    atf_detail_payload_encode(&pl, at + ATF_DETAIL_EVENT_HEADER_SIZE,
                              h.total_length - ATF_DETAIL_EVENT_HEADER_SIZE);
}

/* Builds index.atf into *idx and, when the spec has detail, detail.atf into *det. */
static void gen_thread(const gen_spec *s, gen_buf *idx, gen_buf *det) {
    gen_buf events = { NULL, 0, 0 }, records = { NULL, 0, 0 };
    uint64_t i, ndetail = 0, first_linked = 0, last_linked = 0;
    uint64_t t0 = 0, t1 = 0, d0 = 0, d1 = 0;
    uint8_t block[64];
    atf_index_event ev;
    for (i = 0; i < s->count; i++) {
        gen_index_event(i, s, &ev);
        if (s->detail_every && i % s->detail_every == 0) {
            uint64_t back = ndetail + 1 == s->link_break ? i + 1 : i;
            if (ndetail == 0) {
                first_linked = i;
                d0 = ev.timestamp_ns;
            }
            last_linked = i;
            d1 = ev.timestamp_ns;
            ev.detail_seq = ndetail++;
            gen_detail_record(s, back, &ev, &records);
        }
        if (i == 0) t0 = ev.timestamp_ns;
        t1 = ev.timestamp_ns;
        atf_index_event_encode(s->layout, &ev, gen_grow(&events, ATF_INDEX_EVENT_SIZE));
    }

    {   /* index.atf: header, events, torn bytes, footer */
        atf_index_header h;
        atf_index_footer f;
        memset(&h, 0, sizeof h);
        h.endian = ATF_ENDIAN_LITTLE;
        h.version = (uint8_t)s->layout;
        h.arch = ATF_ARCH_X86_64;
        h.os = ATF_OS_LINUX;
        h.flags = s->detail_every ? ATF_INDEX_FLAG_HAS_DETAIL_FILE : 0;
        h.thread_id = s->thread_id;
        h.clock_type = ATF_CLOCK_BOOTTIME;
        h.event_size = ATF_INDEX_EVENT_SIZE;
        h.events_offset = ATF_HEADER_SIZE;
        if (!s->placeholder) {
            h.event_count = s->count;
            h.footer_offset = ATF_HEADER_SIZE + events.len;
            h.time_start_ns = t0;
            h.time_end_ns = t1;
        }
        atf_index_header_encode(&h, block);
        gen_append(idx, block, sizeof block);
        if (events.len) gen_append(idx, events.data, events.len);
        if (s->torn) {
            gen_index_event(s->count, s, &ev);
            atf_index_event_encode(s->layout, &ev, block);
            gen_append(idx, block, s->torn);
        }
        if (!s->no_footer) {
            memset(&f, 0, sizeof f);
            f.checksum = s->no_crc ? 0 : atf_crc32c(events.data, events.len) ^ s->crc_flip;
            f.event_count = s->count + s->footer_extra;
            f.time_start_ns = t0;
            f.time_end_ns = t1;
            f.bytes_written = events.len;
            atf_index_footer_encode(&f, block);
            gen_append(idx, block, sizeof block);
        }
    }

    if (s->detail_every) {  /* detail.atf: header, records, footer */
        atf_detail_header h;
        atf_detail_footer f;
        memset(&h, 0, sizeof h);
        h.endian = ATF_ENDIAN_LITTLE;
        h.version = (uint8_t)s->layout;
        h.arch = ATF_ARCH_X86_64;
        h.os = ATF_OS_LINUX;
        h.thread_id = s->thread_id;
        h.events_offset = ATF_HEADER_SIZE;
        if (!s->placeholder) {
            h.event_count = ndetail;
            h.bytes_length = records.len;
            h.index_seq_start = first_linked;
            h.index_seq_end = last_linked;
        }
        atf_detail_header_encode(&h, block);
        gen_append(det, block, sizeof block);
        if (records.len) gen_append(det, records.data, records.len);
        if (!s->no_footer) {
            memset(&f, 0, sizeof f);
            f.checksum = s->no_crc ? 0 : atf_crc32c(records.data, records.len);
            f.event_count = ndetail + s->detail_footer_extra;
            f.bytes_length = records.len;
            f.time_start_ns = d0;
            f.time_end_ns = d1;
            atf_detail_footer_encode(&f, block);
            gen_append(det, block, sizeof block);
        }
    }
    free(events.data);
    free(records.data);
}

/* Writes directory dir_name with index.atf and, when det is not empty, detail.atf. */
static void gen_write_thread(const char *dir, const char *dir_name, const gen_buf *idx,
                             const gen_buf *det) {
    char sub[4096];
    gen_mkdir(dir, dir_name, sub, sizeof sub);
    gen_write(sub, "index.atf", idx);
    if (det->len) gen_write(sub, "detail.atf", det);
}

/* Writes one thread: a lone index file `name` when dir_name is NULL, otherwise a
 * thread directory dir_name. */
static void gen_emit(const char *dir, const char *name, const char *dir_name, const gen_spec *s) {
    gen_buf idx = { NULL, 0, 0 }, det = { NULL, 0, 0 };
    gen_thread(s, &idx, &det);
    if (!dir_name) gen_write(dir, name, &idx);
    else gen_write_thread(dir, dir_name, &idx, &det);
    free(idx.data);
    free(det.data);
}

static gen_spec gen_base(int layout, uint64_t count) {
    gen_spec s;
    memset(&s, 0, sizeof s);
    s.layout = layout;
    s.count = count;
    s.thread_id = 4242;
    return s;
}

/* ---- Darwin ktrace v3 files ---------------------------------------------------------- */
static void gen_le(gen_buf *b, uint64_t v, size_t n) {
    uint8_t *at = gen_grow(b, n);
    size_t k;
    for (k = 0; k < n; k++) at[k] = (uint8_t)(v >> (8 * k));
}

static void gen_kt_chunk(gen_buf *b, uint32_t tag, unsigned major, unsigned minor, size_t size) {
    size_t k;
    gen_le(b, tag, 4);
    gen_le(b, major, 2);
    gen_le(b, minor, 2);
    gen_le(b, size, 8);
    for (k = 0; k < size; k++) gen_le(b, (uint8_t)(k * 7u + tag), 1);
    while (b->len % 8u) gen_le(b, 0, 1);
}

/* The typical file of ktrace(5): two header chunks (32 and 14 bytes of data, the second
 * padded by 2), then two body chunks (128 and 252 bytes, the last padded by 4): 560 bytes.
 * Timebase 125/3, timestamp 3e9 ticks (125 s), wall time 1700000001.5 s. */
static void gen_ktrace(const char *dir) {
    gen_buf b = { NULL, 0, 0 };
    gen_le(&b, ATF_KTRACE_MAGIC, 4);
    gen_le(&b, 3, 2);                     /* major */
    gen_le(&b, 1, 2);                     /* minor */
    gen_le(&b, 48 + 16 + 32 + 16 + 16, 8); /* header_size: up to the end of the header chunks */
    gen_le(&b, 125, 4);
    gen_le(&b, 3, 4);
    gen_le(&b, 3000000000u, 8);
    gen_le(&b, 1700000001u, 8);
    gen_le(&b, 500000, 4);
    gen_le(&b, 480, 4);                   /* minutes west */
    gen_le(&b, 1, 4);                     /* dst */
    gen_le(&b, 5, 4);                     /* flags */
    gen_le(&b, 0, 8);
    gen_kt_chunk(&b, 0x8001u, 1, 0, 32);
    gen_kt_chunk(&b, 0x8002u, 2, 1, 14);
    gen_kt_chunk(&b, 0x9000u, 1, 0, 128);
    gen_kt_chunk(&b, 0x9001u, 1, 2, 252);
    gen_write(dir, "kt.ktrace", &b);
    b.data[288 + 8] = 0x20;               /* last chunk: 0x120 + 252 bytes, past the end */
    b.data[288 + 9] = 0x01;
    gen_write(dir, "kt_trunc.ktrace", &b);
    b.len = 64;                           /* the header alone: no chunk */
    b.data[8] = 48;
    gen_write(dir, "kt_empty.ktrace", &b);
    b.data[0] ^= 0xFF;
    gen_write(dir, "kt_badmagic.ktrace", &b);
    free(b.data);
}

int main(int argc, char **argv) {
    const char *dir;
    gen_spec s;
    char path[4096];
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: cli_gen DIR [BIG_EVENTS]\n");
        return 2;
    }
    dir = argv[1];
    gen_mkdir(dir, NULL, path, sizeof path);

    s = gen_base(ATF_LAYOUT_1, 1000);
    gen_emit(dir, "l1.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_2, 1000);
    gen_emit(dir, "l2.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_1, 0);
    gen_emit(dir, "empty.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_1, 100);
    s.no_crc = 1;
    gen_emit(dir, "crc0.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_1, 100);
    s.placeholder = 1, s.no_footer = 1, s.torn = 13;
    gen_emit(dir, "crash.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_2, 77);
    s.placeholder = 1, s.no_footer = 1, s.torn = 31;
    gen_emit(dir, "crash_l2.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_2, 50);
    s.placeholder = 1;
    gen_emit(dir, "footer_end.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_1, 100);
    s.crc_flip = 0x10u;
    gen_emit(dir, "badcrc.atf", NULL, &s);
    s = gen_base(ATF_LAYOUT_1, 100);
    s.footer_extra = 5;
    gen_emit(dir, "mismatch.atf", NULL, &s);

    s = gen_base(ATF_LAYOUT_1, 300);
    s.detail_every = 3;
    gen_emit(dir, NULL, "thread_1", &s);
    s = gen_base(ATF_LAYOUT_2, 300);
    s.detail_every = 2;
    gen_emit(dir, NULL, "thread_2", &s);
    s = gen_base(ATF_LAYOUT_1, 20);
    gen_emit(dir, NULL, "thread_nodetail", &s);
    s = gen_base(ATF_LAYOUT_1, 60);
    s.detail_every = 3, s.link_break = 4;
    gen_emit(dir, NULL, "thread_badlink", &s);
    s = gen_base(ATF_LAYOUT_1, 90);
    s.detail_every = 3, s.placeholder = 1, s.no_footer = 1, s.torn = 5;
    gen_emit(dir, NULL, "thread_crash", &s);

    s = gen_base(ATF_LAYOUT_2, 40);
    s.detail_every = 4, s.detail_footer_extra = 1;
    gen_emit(dir, NULL, "thread_detail_mismatch", &s);

    {   /* a thread whose index names detail records, without its detail.atf; a thread
         * whose second detail record has total_length 5 (record 0 is 124 bytes at 64) */
        gen_buf idx = { NULL, 0, 0 }, det = { NULL, 0, 0 }, none = { NULL, 0, 0 };
        s = gen_base(ATF_LAYOUT_1, 30);
        s.detail_every = 5;
        gen_thread(&s, &idx, &det);
        gen_write_thread(dir, "thread_dangling", &idx, &none);
        det.data[188] = 5;
        det.data[189] = det.data[190] = det.data[191] = 0;
        gen_write_thread(dir, "thread_badrecord", &idx, &det);
        free(idx.data);
        free(det.data);
    }

    {   /* a finalized file whose magic is wrong, and a file shorter than a header */
        gen_buf b = { NULL, 0, 0 };
        s = gen_base(ATF_LAYOUT_1, 10);
        gen_thread(&s, &b, NULL);
        b.data[0] = 'X';
        gen_write(dir, "badmagic.atf", &b);
        b.len = 10;
        b.data[0] = 'A';
        gen_write(dir, "short.atf", &b);
        free(b.data);
    }

    gen_ktrace(dir);

    if (argc == 3) {
        s = gen_base(ATF_LAYOUT_1, strtoull(argv[2], NULL, 10));
        gen_emit(dir, "big.atf", NULL, &s);
    }
    return 0;
}
