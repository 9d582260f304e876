/* facts.c - what info and verify judge about one file, from either reader (see facts.h).
 * SPDX-License-Identifier: MIT */
#include "facts.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The footer's place: where the header says, else the last 64 bytes. */
static uint64_t cli_footer_offset(uint64_t hinted, uint64_t file_size) {
    if (hinted) return hinted;
    return file_size >= ATF_FOOTER_SIZE ? file_size - ATF_FOOTER_SIZE : 0;
}

/* Fills *f from an open index reader, verifying its CRC. */
void cli_facts_index(cli_facts *f, atf_index_reader *r) {
    memset(f, 0, sizeof *f);
    atf_index_reader_verify_crc(r);  /* the outcome is in r->crc_state and r->error */
    f->path = r->path;
    f->count = r->event_count;
    f->torn_bytes = r->torn_bytes;
    f->events_offset = r->header.events_offset;
    f->section_bytes = r->event_count * ATF_INDEX_EVENT_SIZE + r->torn_bytes;
    f->file_size = cli_file_size(r->path);
    f->footer_offset = cli_footer_offset(r->header.footer_offset, f->file_size);
    f->final_mark_offset = 40;       /* footer_offset, 0 in the placeholder */
    f->footer_count = r->footer.event_count;
    f->footer_bytes = r->footer.bytes_written;
    f->counted = r->counted;
    f->crc_state = r->crc_state;
    f->crc_expected = r->footer.checksum;
    f->crc_found = r->crc_found;
    f->crc_error = r->error;
}

/* Fills *f from an open detail reader, verifying its CRC. */
void cli_facts_detail(cli_facts *f, atf_detail_reader *r) {
    memset(f, 0, sizeof *f);
    atf_detail_reader_verify_crc(r);
    f->path = r->path;
    f->is_detail = 1;
    f->count = r->event_count;
    f->torn_bytes = r->torn_bytes;
    f->events_offset = r->header.events_offset;
    f->section_bytes = r->bytes_length + r->torn_bytes;
    f->file_size = cli_file_size(r->path);
    f->footer_offset = cli_footer_offset(r->header.event_count || r->header.bytes_length
                                             ? r->header.events_offset + r->header.bytes_length
                                             : 0,
                                         f->file_size);
    f->final_mark_offset = 28;       /* event_count, 0 in the placeholder */
    f->footer_count = r->footer.event_count;
    f->footer_bytes = r->footer.bytes_length;
    f->counted = r->counted;
    f->crc_state = r->crc_state;
    f->crc_expected = r->footer.checksum;
    f->crc_found = r->crc_found;
    f->crc_error = r->error;
}

const char *cli_counted_text(const cli_facts *f) {
    switch (f->counted) {
    case ATF_COUNT_FINALIZED: return "finalized";
    case ATF_COUNT_FOOTER_AT_END: return "footer at end, header still the placeholder";
    case ATF_COUNT_FROM_SIZE:
        return f->is_detail ? "no footer, records counted by walking them"
                            : "no footer, events counted from the file size";
    case ATF_COUNT_FOOTER_MISMATCH: return "footer mismatch, events counted as without one";
    }
    return "unknown";
}

const char *cli_crc_text(const cli_facts *f, char *buf, size_t cap) {
    switch (f->crc_state) {
    case ATF_CRC_NO_FOOTER:
        snprintf(buf, cap, f->counted == ATF_COUNT_FOOTER_MISMATCH
                 ? "not checked (the footer disagrees with the file)" : "none (no footer)");
        break;
    case ATF_CRC_NOT_COMPUTED: snprintf(buf, cap, "not computed (footer checksum 0)"); break;
    case ATF_CRC_UNCHECKED: snprintf(buf, cap, "not verified (0x%08x)", f->crc_expected); break;
    case ATF_CRC_OK: snprintf(buf, cap, "ok (0x%08x)", f->crc_found); break;
    case ATF_CRC_MISMATCH:
        snprintf(buf, cap, "mismatch (expected 0x%08x, found 0x%08x)", f->crc_expected,
                 f->crc_found);
        break;
    default: snprintf(buf, cap, "unknown state %d", (int)f->crc_state); break;
    }
    return buf;
}

/* A problem line on out, or on the output when out is NULL. */
static void CLI_PRINTF(2, 3) facts_line(FILE *out, const char *fmt, ...) {
    char line[CLI_LINE_MAX + 600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (out) fputs(line, out);
    else cli_print(line);
}

/* Prints one line per problem of the file to `out`, each preceded by `prefix`, and
 * returns how many. Without `strict` a file left by a crash is no problem. */
int cli_problems(const cli_facts *f, int strict, FILE *out, const char *prefix) {
    int n = 0;
    if (f->counted == ATF_COUNT_FOOTER_MISMATCH) {
        atf_error e;
        n++;
        if (f->footer_count != f->count) {
            cli_error_init(&e, ATF_E_CORRUPT, f->path, f->footer_offset + 8,
                           "footer event_count disagrees with the events in the file");
            e.expected = f->count;
            e.found = f->footer_count;
        } else {
            cli_error_init(&e, ATF_E_CORRUPT, f->path, f->footer_offset + (f->is_detail ? 16 : 32),
                           "footer byte count disagrees with the events section");
            e.expected = f->section_bytes;
            e.found = f->footer_bytes;
        }
        e.has_values = 1;
        cli_print_error(out, prefix, &e);
    }
    if (f->crc_state == ATF_CRC_MISMATCH) {
        n++;
        cli_print_error(out, prefix, &f->crc_error);
    }
    if (!strict) return n;
    if (f->counted == ATF_COUNT_FOOTER_AT_END || f->counted == ATF_COUNT_FROM_SIZE) {
        n++;
        facts_line(out, "%s%s: offset %llu: not finalized: %s (--strict)\n", prefix, f->path,
                (cli_ull)f->final_mark_offset, cli_counted_text(f));
    }
    /* the CRC32-C of an empty section is 0 too: that is a computed checksum */
    if (f->crc_state == ATF_CRC_NOT_COMPUTED && f->section_bytes > 0) {
        n++;
        facts_line(out, "%s%s: offset %llu: CRC32-C not computed (footer checksum 0) (--strict)\n",
                prefix, f->path, (cli_ull)(f->footer_offset + 4));
    }
    return n;
}

/* A file's recovery and CRC state in one word: "finalized,crc-ok", "from-size,crc-none,
 * torn=13". */
const char *cli_state_word(const cli_facts *f, char *buf, size_t cap) {
    const char *rec = "unknown", *crc = "unknown";
    int n;
    switch (f->counted) {
    case ATF_COUNT_FINALIZED: rec = "finalized"; break;
    case ATF_COUNT_FOOTER_AT_END: rec = "footer-at-end"; break;
    case ATF_COUNT_FROM_SIZE: rec = "from-size"; break;
    case ATF_COUNT_FOOTER_MISMATCH: rec = "footer-mismatch"; break;
    }
    switch (f->crc_state) {
    case ATF_CRC_NO_FOOTER: crc = "crc-none"; break;
    case ATF_CRC_NOT_COMPUTED: crc = "crc-0"; break;
    case ATF_CRC_UNCHECKED: crc = "crc-unchecked"; break;
    case ATF_CRC_OK: crc = "crc-ok"; break;
    case ATF_CRC_MISMATCH: crc = "crc-MISMATCH"; break;
    }
    n = snprintf(buf, cap, "%s,%s", rec, crc);
    if (f->torn_bytes && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ",torn=%llu", (cli_ull)f->torn_bytes);
    return buf;
}
