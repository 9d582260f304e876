/* recover_cmd.c - atf recover: finalizes, in place, the files a crash left behind, the way
 * the writer's close would have: cut the torn tail, append a footer with the CRC32-C of
 * what is there, rewrite the header. The readers decide what is there (their recovery
 * rules); this file only plans from what they counted and writes with the library's
 * encoders. For a thread directory it also repairs the index<->detail links the way a
 * crash breaks them (the drain writes detail before index, and windowed links are patched
 * into index.atf after the fact).
 * SPDX-License-Identifier: MIT */
#include "atf.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A link to write into index event `seq`: a detail_seq, or ATF_NO_DETAIL to clear it. */
typedef struct rec_patch {
    uint64_t seq, detail_seq;
} rec_patch;

/* What will be done to one file. */
typedef struct rec_plan {
    char path[CLI_PATH_MAX];
    int is_detail, layout;
    int finalized;                   /* found finalized: left alone */
    atf_recovery recovery;
    uint64_t events_offset, file_size;
    uint64_t count, bytes;           /* records and events-section bytes kept */
    uint64_t trimmed;                /* detail: records cut, their index event is not on disk */
    uint64_t cleared, restored;      /* index: links cleared / restored */
    uint64_t first_ts, last_ts;
    uint64_t first_seq, last_seq;    /* detail: index_seq of the first and last record */
    uint32_t flags;                  /* index: header flags to write */
    atf_index_header index_header;
    atf_detail_header detail_header;
    atf_index_footer index_footer;   /* finalized files: the footer, for fill_crc */
    atf_detail_footer detail_footer;
    int fill_crc;                    /* finalized, footer checksum 0: write the CRC in */
    rec_patch *patches;              /* index, sorted by seq */
    size_t npatches, cap;
    int remove;                      /* detail: no record left, the file goes */
} rec_plan;

static void rec_plan_free(rec_plan *p) {
    free(p->patches);
    p->patches = NULL;
    p->npatches = p->cap = 0;
}

static int rec_patch_add(rec_plan *p, uint64_t seq, uint64_t detail_seq, atf_error *e) {
    if (p->npatches == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        rec_patch *n = (rec_patch *)realloc(p->patches, cap * sizeof *n);
        if (!n) {
            cli_error_init(e, ATF_E_NOMEM, p->path, 0, "link repair list");
            return 0;
        }
        p->patches = n;
        p->cap = cap;
    }
    p->patches[p->npatches].seq = seq;
    p->patches[p->npatches++].detail_seq = detail_seq;
    return 1;
}

static int rec_patch_cmp(const void *a, const void *b) {
    uint64_t x = ((const rec_patch *)a)->seq, y = ((const rec_patch *)b)->seq;
    return x < y ? -1 : x > y;
}

/* ---- planning ----------------------------------------------------------------------- */
/* Checks a footer's checksum before its file is rewritten: a mismatch is damage, not a
 * crash, and recovering would hide it. */
static int rec_check_index_crc(atf_index_reader *r, atf_error *e) {
    if (atf_index_reader_verify_crc(r) == ATF_OK) return 1;
    *e = r->error;
    return 0;
}

static int rec_check_detail_crc(atf_detail_reader *r, atf_error *e) {
    if (atf_detail_reader_verify_crc(r) == ATF_OK) return 1;
    *e = r->error;
    return 0;
}

static void rec_plan_index(rec_plan *p, atf_index_reader *r) {
    atf_index_event ev;
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", r->path);
    p->layout = r->layout;
    p->recovery = r->recovery;
    p->finalized = r->recovery == ATF_RECOVERY_FINALIZED;
    p->events_offset = r->header.events_offset;
    p->file_size = cli_file_size(r->path);
    p->count = r->event_count;
    p->bytes = r->event_count * ATF_INDEX_EVENT_SIZE;
    p->index_header = r->header;
    p->index_footer = r->footer;
    p->flags = r->header.flags;
    p->fill_crc = p->finalized && r->footer.checksum == 0 && p->bytes > 0;
    if (p->count) {
        atf_index_reader_get(r, 0, &ev);
        p->first_ts = ev.timestamp_ns;
        atf_index_reader_get(r, p->count - 1, &ev);
        p->last_ts = ev.timestamp_ns;
    }
}

/* Keeps the first `keep` records of the detail file. */
static void rec_plan_detail_keep(rec_plan *p, atf_detail_reader *r, uint64_t keep) {
    atf_detail_event d;
    p->trimmed = r->event_count - keep;
    p->count = keep;
    p->bytes = 0;
    p->first_ts = p->last_ts = p->first_seq = p->last_seq = 0;
    if (keep) {
        atf_detail_reader_get(r, keep - 1, &d);
        p->bytes = d.offset + d.header.total_length - p->events_offset;
        p->last_ts = d.header.timestamp_ns;
        p->last_seq = d.header.index_seq;
        atf_detail_reader_get(r, 0, &d);
        p->first_ts = d.header.timestamp_ns;
        p->first_seq = d.header.index_seq;
    }
}

static void rec_plan_detail(rec_plan *p, atf_detail_reader *r) {
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", r->path);
    p->is_detail = 1;
    p->layout = r->layout;
    p->recovery = r->recovery;
    p->finalized = r->recovery == ATF_RECOVERY_FINALIZED;
    p->events_offset = r->header.events_offset;
    p->file_size = cli_file_size(r->path);
    p->detail_header = r->header;
    p->detail_footer = r->footer;
    rec_plan_detail_keep(p, r, r->event_count);
    p->fill_crc = p->finalized && r->footer.checksum == 0 && p->bytes > 0;
}

static int rec_link_error(atf_error *e, const char *path, uint64_t offset, const char *what,
                          uint64_t expected, uint64_t found) {
    cli_error_init(e, ATF_E_CORRUPT, path, offset, what);
    e->expected = expected;
    e->found = found;
    e->has_values = 1;
    return 0;
}

/* Plans the link repairs of a thread: trailing detail records whose index event is not in
 * index.atf are cut; index events naming a detail record that is not in detail.atf lose
 * the link; a detail record whose index event has no link (a windowed link not patched in
 * yet) gets it back, when their timestamps agree. Anything else is damage: 0 and *e. */
static int rec_plan_links(rec_plan *ip, atf_index_reader *ir, rec_plan *dp,
                          atf_detail_reader *dr, atf_error *e) {
    uint64_t n_index = ir->event_count, n_detail = dr ? dr->event_count : 0, i;
    atf_index_event ev;
    atf_detail_event d;
    while (n_detail > 0) {
        atf_detail_reader_get(dr, n_detail - 1, &d);
        if (d.header.index_seq < n_index) break;
        n_detail--;
    }
    if (dr && n_detail != dr->event_count) rec_plan_detail_keep(dp, dr, n_detail);
    for (i = 0; i < n_index; i++) {
        atf_index_reader_get(ir, i, &ev);
        if (ev.detail_seq == ATF_NO_DETAIL) continue;
        if (ev.detail_seq >= n_detail) {
            if (!rec_patch_add(ip, i, ATF_NO_DETAIL, e)) return 0;
            ip->cleared++;
            continue;
        }
        atf_detail_reader_get(dr, ev.detail_seq, &d);
        if (d.header.index_seq != i)
            return rec_link_error(e, ir->path, ir->header.events_offset + i * ATF_INDEX_EVENT_SIZE,
                                  "its detail record names another index event", i,
                                  d.header.index_seq);
    }
    for (i = 0; i < n_detail; i++) {
        uint64_t s;
        atf_detail_reader_get(dr, i, &d);
        s = d.header.index_seq;
        if (s >= n_index)
            return rec_link_error(e, dr->path, d.offset,
                                  "detail record before the last names an index event past "
                                  "the end (expected: count)", n_index, s);
        atf_index_reader_get(ir, s, &ev);
        if (ev.detail_seq == i) continue;
        if (ev.detail_seq != ATF_NO_DETAIL)
            return rec_link_error(e, dr->path, d.offset,
                                  "index event named by this record names another record", i,
                                  ev.detail_seq);
        if (ev.timestamp_ns != d.header.timestamp_ns)
            return rec_link_error(e, dr->path, d.offset,
                                  "record and the unlinked index event it names differ in "
                                  "timestamp", ev.timestamp_ns, d.header.timestamp_ns);
        if (!rec_patch_add(ip, s, i, e)) return 0;
        ip->restored++;
    }
    if (ip->npatches) qsort(ip->patches, ip->npatches, sizeof *ip->patches, rec_patch_cmp);
    return 1;
}

/* ---- writing ------------------------------------------------------------------------ */
/* The bytes of patch `p` (its detail_seq field) and where they go inside the record. */
static size_t rec_patch_bytes(const rec_plan *p, const rec_patch *x, uint8_t out[8],
                              size_t *field) {
    if (p->layout == ATF_LAYOUT_2) {
        uint64_t v = x->detail_seq;
        size_t k;
        for (k = 0; k < 8; k++) out[k] = (uint8_t)(v >> (8 * k));
        *field = 16;
        return 8;
    } else {
        uint32_t v = x->detail_seq == ATF_NO_DETAIL ? ATF_NO_DETAIL_U32 : (uint32_t)x->detail_seq;
        size_t k;
        for (k = 0; k < 4; k++) out[k] = (uint8_t)(v >> (8 * k));
        *field = 28;
        return 4;
    }
}

static int rec_pread(int fd, uint8_t *buf, size_t n, uint64_t at) {
    while (n) {
        ssize_t got = pread(fd, buf, n, (off_t)at);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) continue;
            return 0;
        }
        buf += got;
        n -= (size_t)got;
        at += (uint64_t)got;
    }
    return 1;
}

static int rec_pwrite(int fd, const uint8_t *buf, size_t n, uint64_t at) {
    while (n) {
        ssize_t put = pwrite(fd, buf, n, (off_t)at);
        if (put <= 0) {
            if (put < 0 && errno == EINTR) continue;
            return 0;
        }
        buf += put;
        n -= (size_t)put;
        at += (uint64_t)put;
    }
    return 1;
}

/* CRC32-C of the kept events section as it reads from fd, with the planned patches laid
 * over it (so a dry run computes what the real run writes). */
static int rec_crc(const rec_plan *p, int fd, uint32_t *crc_out, atf_error *e) {
    static uint8_t buf[1 << 20];   /* a multiple of 32: records never straddle two blocks */
    uint64_t at = 0;
    size_t next = 0;
    uint32_t crc = 0;
    while (at < p->bytes) {
        size_t n = p->bytes - at < sizeof buf ? (size_t)(p->bytes - at) : sizeof buf;
        if (!rec_pread(fd, buf, n, p->events_offset + at)) {
            cli_error_errno(e, p->path, "read events", errno);
            e->offset = p->events_offset + at;
            return 0;
        }
        for (; next < p->npatches && p->patches[next].seq * ATF_INDEX_EVENT_SIZE < at + n; next++) {
            uint8_t bytes[8];
            size_t field, w = rec_patch_bytes(p, &p->patches[next], bytes, &field);
            memcpy(buf + (p->patches[next].seq * ATF_INDEX_EVENT_SIZE - at) + field, bytes, w);
        }
        crc = atf_crc32c_update(crc, buf, n);
        at += n;
    }
    *crc_out = crc;
    return 1;
}

/* Footer and header bytes of the finalized file. */
static void rec_encode(const rec_plan *p, uint32_t crc, uint8_t footer[64], uint8_t header[64]) {
    if (p->is_detail) {
        atf_detail_footer f;
        atf_detail_header h = p->detail_header;
        memset(&f, 0, sizeof f);
        f.checksum = crc;
        f.event_count = p->count;
        f.bytes_length = p->bytes;
        f.time_start_ns = p->first_ts;
        f.time_end_ns = p->last_ts;
        atf_detail_footer_encode(&f, footer);
        h.event_count = p->count;
        h.bytes_length = p->bytes;
        h.index_seq_start = p->first_seq;
        h.index_seq_end = p->last_seq;
        atf_detail_header_encode(&h, header);
    } else {
        atf_index_footer f;
        atf_index_header h = p->index_header;
        memset(&f, 0, sizeof f);
        f.checksum = crc;
        f.event_count = p->count;
        f.time_start_ns = p->first_ts;
        f.time_end_ns = p->last_ts;
        f.bytes_written = p->bytes;
        atf_index_footer_encode(&f, footer);
        h.flags = p->flags;
        h.event_size = ATF_INDEX_EVENT_SIZE;
        h.event_count = p->count;
        h.footer_offset = p->events_offset + p->bytes;
        h.time_start_ns = p->first_ts;
        h.time_end_ns = p->last_ts;
        atf_index_header_encode(&h, header);
    }
}

/* Carries out the plan (or, in a dry run, only computes the CRC). In the writer's order:
 * cut, links, footer, header, then fsync. */
static int rec_apply(const rec_plan *p, int dry_run, uint32_t *crc, atf_error *e) {
    uint8_t footer[64], header[64];
    size_t i;
    int ok = 0, fd = open(p->path, dry_run ? O_RDONLY : O_RDWR);
    if (fd < 0) {
        cli_error_errno(e, p->path, "open", errno);
        return 0;
    }
    if (!dry_run && ftruncate(fd, (off_t)(p->events_offset + p->bytes)) != 0) {
        cli_error_errno(e, p->path, "truncate", errno);
        goto done;
    }
    for (i = 0; !dry_run && i < p->npatches; i++) {
        uint8_t bytes[8];
        size_t field, w = rec_patch_bytes(p, &p->patches[i], bytes, &field);
        uint64_t at = p->events_offset + p->patches[i].seq * ATF_INDEX_EVENT_SIZE + field;
        if (!rec_pwrite(fd, bytes, w, at)) {
            cli_error_errno(e, p->path, "write link", errno);
            e->offset = at;
            goto done;
        }
    }
    if (!rec_crc(p, fd, crc, e)) goto done;
    rec_encode(p, *crc, footer, header);
    if (!dry_run) {
        if (!rec_pwrite(fd, footer, sizeof footer, p->events_offset + p->bytes)) {
            cli_error_errno(e, p->path, "write footer", errno);
            e->offset = p->events_offset + p->bytes;
            goto done;
        }
        if (!rec_pwrite(fd, header, sizeof header, 0)) {
            cli_error_errno(e, p->path, "rewrite header", errno);
            goto done;
        }
        if (fsync(fd) != 0) {
            cli_error_errno(e, p->path, "fsync", errno);
            goto done;
        }
    }
    ok = 1;
done:
    close(fd);
    return ok;
}

static const char *rec_state_text(atf_recovery r) {
    switch (r) {
    case ATF_RECOVERY_FINALIZED: return "finalized";
    case ATF_RECOVERY_FOOTER_AT_END:
        return "found with a placeholder header and a footer at the end";
    case ATF_RECOVERY_FROM_SIZE: return "found without a footer";
    case ATF_RECOVERY_FOOTER_MISMATCH: return "found with a footer that disagrees with it";
    }
    return "found in an unknown state";
}

/* A finalized file whose footer says "not computed" (checksum 0, as the original tracer
 * writes): its footer is rewritten with the CRC, nothing else changes. */
static int rec_fill_crc(const rec_plan *p, int dry_run, atf_error *e) {
    uint8_t footer[64];
    uint32_t crc = 0;
    int ok = 0, fd = open(p->path, dry_run ? O_RDONLY : O_RDWR);
    if (fd < 0) {
        cli_error_errno(e, p->path, "open", errno);
        return 0;
    }
    if (!rec_crc(p, fd, &crc, e)) goto done;
    if (p->is_detail) {
        atf_detail_footer f = p->detail_footer;
        f.checksum = crc;
        atf_detail_footer_encode(&f, footer);
    } else {
        atf_index_footer f = p->index_footer;
        f.checksum = crc;
        atf_index_footer_encode(&f, footer);
    }
    if (!dry_run && (!rec_pwrite(fd, footer, sizeof footer, p->events_offset + p->bytes) ||
                     fsync(fd) != 0)) {
        cli_error_errno(e, p->path, "write footer", errno);
        e->offset = p->events_offset + p->bytes;
        goto done;
    }
    printf("%s %s (%llu %s; finalized, footer checksum 0 (not computed): crc 0x%08x %s in the "
           "footer at offset %llu)\n", dry_run ? "would recover" : "recovered", p->path,
           (cli_ull)p->count, p->is_detail ? "detail records" : "events", crc,
           dry_run ? "would be written" : "written", (cli_ull)(p->events_offset + p->bytes));
    ok = 1;
done:
    close(fd);
    return ok;
}

/* Does (or, in a dry run, describes) one file's plan and prints its line. */
static int rec_run(const rec_plan *p, int dry_run, atf_error *e) {
    const char *verb = dry_run ? "would recover" : "recovered";
    uint64_t cut = p->file_size > p->events_offset + p->bytes
                       ? p->file_size - (p->events_offset + p->bytes) : 0;
    uint32_t crc = 0;
    if (p->finalized && !p->npatches && !p->trimmed) {
        if (p->fill_crc) return rec_fill_crc(p, dry_run, e);
        printf("OK %s (finalized, nothing to do)\n", p->path);
        return 1;
    }
    if (p->remove) {
        if (!dry_run && unlink(p->path) != 0) {
            cli_error_errno(e, p->path, "remove", errno);
            return 0;
        }
        printf("%s %s (no detail record left: the writer creates no detail.atf then)\n",
               dry_run ? "would remove" : "removed", p->path);
        return 1;
    }
    if (!rec_apply(p, dry_run, &crc, e)) return 0;
    printf("%s %s (%llu %s; %s", verb, p->path, (cli_ull)p->count,
           p->is_detail ? "detail records" : "events", rec_state_text(p->recovery));
    if (cut) printf("; cut %llu bytes after the last kept record", (cli_ull)cut);
    if (p->trimmed)
        printf("; cut %llu trailing records whose index event is not in index.atf",
               (cli_ull)p->trimmed);
    if (p->cleared)
        printf("; cleared %llu link%s to detail records not in detail.atf", (cli_ull)p->cleared,
               p->cleared == 1 ? "" : "s");
    if (p->restored)
        printf("; restored %llu link%s", (cli_ull)p->restored, p->restored == 1 ? "" : "s");
    printf("; footer at offset %llu, crc 0x%08x; header rewritten)\n",
           (cli_ull)(p->events_offset + p->bytes), crc);
    return 1;
}

/* ---- PATH kinds --------------------------------------------------------------------- */
/* Whether a lone index file has a detail.atf next to it. */
static int rec_sibling_detail(const char *index_path) {
    char path[CLI_PATH_MAX];
    const char *slash = strrchr(index_path, '/');
    size_t dir_len = slash ? (size_t)(slash - index_path) + 1 : 0;
    if (dir_len + sizeof "detail.atf" > sizeof path) return 0;
    memcpy(path, index_path, dir_len);
    memcpy(path + dir_len, "detail.atf", sizeof "detail.atf");
    return cli_exists(path);
}

static int rec_file(const char *path, cli_kind kind, int dry_run) {
    rec_plan p;
    atf_error e;
    int ok;
    if (kind == CLI_KIND_DETAIL) {
        atf_detail_reader r;
        if (atf_detail_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
        if (r.has_footer && r.recovery != ATF_RECOVERY_FOOTER_MISMATCH &&
            !rec_check_detail_crc(&r, &e)) {
            atf_detail_reader_close(&r);
            return cli_report(&e);
        }
        rec_plan_detail(&p, &r);
        atf_detail_reader_close(&r);
    } else {
        atf_index_reader r;
        if (atf_index_reader_open(&r, path, NULL) != ATF_OK) return cli_report(&r.error);
        if (r.has_footer && r.recovery != ATF_RECOVERY_FOOTER_MISMATCH &&
            !rec_check_index_crc(&r, &e)) {
            atf_index_reader_close(&r);
            return cli_report(&e);
        }
        rec_plan_index(&p, &r);
        atf_index_reader_close(&r);
        if (!p.finalized && rec_sibling_detail(path)) p.flags |= ATF_INDEX_FLAG_HAS_DETAIL_FILE;
    }
    ok = rec_run(&p, dry_run, &e);
    rec_plan_free(&p);
    return ok ? CLI_EXIT_OK : cli_report(&e);
}

/* Both files of a thread directory, planned together for the links, then written detail
 * first (a crash during recovery leaves a state recovery accepts again). */
static int rec_dir(const char *dir, int dry_run) {
    char ipath[CLI_PATH_MAX], dpath[CLI_PATH_MAX];
    atf_index_reader ir;
    atf_detail_reader dr;
    rec_plan ip, dp;
    atf_error e;
    int has_detail, ok = 0;
    if (cli_join(ipath, sizeof ipath, dir, "index.atf", &e) != ATF_OK ||
        cli_join(dpath, sizeof dpath, dir, "detail.atf", &e) != ATF_OK)
        return cli_report(&e);
    if (atf_index_reader_open(&ir, ipath, NULL) != ATF_OK) return cli_report(&ir.error);
    has_detail = cli_exists(dpath);
    if (has_detail && atf_detail_reader_open(&dr, dpath, NULL) != ATF_OK) {
        atf_index_reader_close(&ir);
        return cli_report(&dr.error);
    }
    memset(&dp, 0, sizeof dp);
    rec_plan_index(&ip, &ir);
    if (has_detail) rec_plan_detail(&dp, &dr);
    if (ir.has_footer && ir.recovery != ATF_RECOVERY_FOOTER_MISMATCH &&
        !rec_check_index_crc(&ir, &e))
        goto done;
    if (has_detail && dr.has_footer && dr.recovery != ATF_RECOVERY_FOOTER_MISMATCH &&
        !rec_check_detail_crc(&dr, &e))
        goto done;
    if (!rec_plan_links(&ip, &ir, &dp, has_detail ? &dr : NULL, &e)) goto done;
    if (ip.finalized && ip.npatches) {
        rec_link_error(&e, ipath, ip.events_offset + ip.patches[0].seq * ATF_INDEX_EVENT_SIZE,
                       "finalized index.atf has broken links: not a crash, not changed "
                       "(links to repair)", 0, ip.npatches);
        goto done;
    }
    if (has_detail && dp.finalized && dp.trimmed) {
        rec_link_error(&e, dpath, dp.events_offset + dp.bytes,
                       "finalized detail.atf has records past the last index event: not a "
                       "crash, not changed (records)", 0, dp.trimmed);
        goto done;
    }
    dp.remove = has_detail && dp.count == 0 && !dp.finalized;
    if (!ip.finalized) {
        ip.flags &= ~ATF_INDEX_FLAG_HAS_DETAIL_FILE;
        if (has_detail && dp.count) ip.flags |= ATF_INDEX_FLAG_HAS_DETAIL_FILE;
    }
    ok = (!has_detail || rec_run(&dp, dry_run, &e)) && rec_run(&ip, dry_run, &e);
done:
    if (has_detail) atf_detail_reader_close(&dr);
    atf_index_reader_close(&ir);
    rec_plan_free(&ip);
    rec_plan_free(&dp);
    return ok ? CLI_EXIT_OK : cli_report(&e);
}

typedef struct rec_slots {
    uint32_t *slots;
    size_t count, cap;
    int failed;
} rec_slots;

static void rec_slot_add(void *ctx, uint32_t slot) {
    rec_slots *l = (rec_slots *)ctx;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        uint32_t *n = (uint32_t *)realloc(l->slots, cap * sizeof *n);
        if (!n) {
            l->failed = 1;
            return;
        }
        l->slots = n;
        l->cap = cap;
    }
    l->slots[l->count++] = slot;
}

static int rec_slot_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A thread directory without index.atf: the writer was stopped between making the
 * directory and renaming its first file into place (it writes index.atf.tmp, then renames
 * it), so no event of that thread can be anywhere. When the directory holds nothing else,
 * it goes, with the leftover index.atf.tmp. 1 when it was that case (done or, in a dry
 * run, described); 0 when the directory holds anything else (rec_dir then says what). */
static int rec_unborn_dir(const char *dir, int dry_run, int *status) {
    char path[CLI_PATH_MAX + 16];
    struct dirent *ent;
    atf_error e;
    int tmp = 0, other = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
        if (strcmp(ent->d_name, "index.atf.tmp") == 0) tmp = 1;
        else other = 1;
    }
    closedir(d);
    if (other) return 0;
    if (!dry_run) {
        snprintf(path, sizeof path, "%s/index.atf.tmp", dir);
        if ((tmp && unlink(path) != 0) || rmdir(dir) != 0) {
            cli_error_errno(&e, tmp && cli_exists(path) ? path : dir, "remove", errno);
            *status = cli_report(&e);
            return 1;
        }
    }
    printf("%s %s (no index.atf%s: stopped before its first file was in place, no event "
           "lost)\n", dry_run ? "would remove" : "removed", dir,
           tmp ? ", only index.atf.tmp" : "");
    return 1;
}

/* Every thread_N directory of a session, in slot order. */
static int rec_session(const char *dir, int dry_run) {
    rec_slots l = { NULL, 0, 0, 0 };
    cli_manifest m;
    atf_error e;
    size_t i;
    int status = CLI_EXIT_OK;
    if (cli_scan_thread_dirs(dir, rec_slot_add, &l) != 0 || l.failed) {
        free(l.slots);
        cli_error_errno(&e, dir, "read directory", errno);
        return cli_report(&e);
    }
    if (l.count) qsort(l.slots, l.count, sizeof *l.slots, rec_slot_cmp);
    for (i = 0; i < l.count; i++) {
        char path[CLI_PATH_MAX], ipath[CLI_PATH_MAX + 16];
        int s;
        snprintf(path, sizeof path, "%s/thread_%u", dir, l.slots[i]);
        snprintf(ipath, sizeof ipath, "%s/index.atf", path);
        s = CLI_EXIT_OK;
        if (!cli_exists(ipath) && rec_unborn_dir(path, dry_run, &s)) {
            if (status == CLI_EXIT_OK) status = s;
            continue;
        }
        s = rec_dir(path, dry_run);
        if (status == CLI_EXIT_OK) status = s;
    }
    free(l.slots);
    if (cli_manifest_load(&m, dir, &e) == ATF_OK && m.present && strcmp(m.state, "closed") != 0)
        printf("note %s/manifest.json: state %s, left as is (its counts may lag the files)\n",
               dir, m.state[0] ? m.state : "unknown");
    cli_manifest_free(&m);
    return status;
}

const char cli_usage_recover[] =
    "usage: atf recover [--dry-run] PATH...\n"
    "\n"
    "Finalizes index.atf and detail.atf files that a crash left without a footer or\n"
    "with a placeholder header, as the writer would have at close: the torn tail is\n"
    "cut (the file is truncated to events_offset + whole records), a footer with the\n"
    "CRC32-C of the events section is written after the last record, and the header\n"
    "is rewritten (event count, footer offset or bytes length and index_seq range,\n"
    "time range of the first and last record). A file whose footer disagrees with it\n"
    "is finalized the same way from the records the reader counts. Finalized files\n"
    "are left alone, except that a footer checksum 0 (\"not computed\", as the original\n"
    "tracer writes) gets the CRC32-C. A file whose CRC does not match is damaged, not\n"
    "left by a crash: it is not changed.\n"
    "\n"
    "PATH is a file, a thread_N directory (both files) or a session pid_* directory\n"
    "(every thread directory; manifest.json is not rewritten). For a directory the\n"
    "links are repaired as a crash leaves them: detail records at the end whose index\n"
    "event never reached the disk are cut, an index event naming a detail record that\n"
    "never reached the disk loses its link, and the link of a flight-recorder record\n"
    "whose index event was written before the link was patched in is restored. A\n"
    "detail.atf left with no record is removed (the writer creates none then). In a\n"
    "session, a thread_N directory without index.atf, empty or holding only an\n"
    "index.atf.tmp (stopped before its first file was in place), is removed. No other\n"
    "file is touched: gaps.atf (where the recorder lost events) is kept as it is, its\n"
    "torn last record, if any, ignored by the readers.\n"
    "\n"
    "  --dry-run  report what would be done; change nothing\n"
    "\n"
    "Prints one line per file: what was done (or would be), or that it was finalized.\n"
    "Afterwards `atf verify --strict PATH` passes.\n"
    "Exit status: 0 ok, 1 a file cannot be recovered (not an ATF file, damaged beyond\n"
    "what a crash does, or a finalized file that is inconsistent), 2 usage error.\n";

int cli_cmd_recover(const cli_command *cmd, int argc, char **argv) {
    int dry_run = 0, nops = 0, i, rc, status = CLI_EXIT_OK;
    const cli_flag flags[] = { { "--dry-run", &dry_run, CLI_OPT_FLAG, NULL } };
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    for (i = 1; i <= nops; i++) {
        cli_kind kind;
        atf_error e;
        int s;
        if (cli_classify(argv[i], &kind, &e) != ATF_OK) s = cli_report(&e);
        else if (kind == CLI_KIND_SESSION) s = rec_session(argv[i], dry_run);
        else if (kind == CLI_KIND_DIR) s = rec_dir(argv[i], dry_run);
        else s = rec_file(argv[i], kind, dry_run);
        if (status == CLI_EXIT_OK) status = s;
    }
    return status;
}
