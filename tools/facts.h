/* facts.h - what info and verify judge about one file, from either reader: how its event
 * count was established, its CRC, its footer; the problems that follow from them.
 * SPDX-License-Identifier: MIT */
#ifndef ATF_TOOLS_FACTS_H
#define ATF_TOOLS_FACTS_H

#include "core.h"

typedef struct cli_facts {
    const char *path;               /* the reader's path */
    int is_detail;
    uint64_t count;                 /* events readable */
    uint64_t torn_bytes;
    uint64_t events_offset;
    uint64_t section_bytes;         /* events section up to the footer (or the end) */
    uint64_t file_size;
    uint64_t footer_offset;         /* where the footer is, or would be */
    uint64_t final_mark_offset;     /* header field that a clean close rewrites */
    uint64_t footer_count;          /* what the footer says, when there is one */
    uint64_t footer_bytes;
    atf_count_source counted;
    atf_crc_state crc_state;
    uint32_t crc_expected, crc_found;
    atf_error crc_error;            /* the reader's error when crc_state is MISMATCH */
} cli_facts;

/* Fill *f from an open reader, verifying its CRC. */
void cli_facts_index(cli_facts *f, atf_index_reader *r);
void cli_facts_detail(cli_facts *f, atf_detail_reader *r);
const char *cli_counted_text(const cli_facts *f);
const char *cli_crc_text(const cli_facts *f, char *buf, size_t cap);
/* A file's recovery and CRC state in one word: "finalized,crc-ok", "from-size,crc-none,
 * torn=13". */
const char *cli_state_word(const cli_facts *f, char *buf, size_t cap);
/* Prints one line per problem of the file to `out` (NULL: the output), each preceded by
 * `prefix`, and
 * returns how many. Without `strict` a file left by a crash is no problem. */
int cli_problems(const cli_facts *f, int strict, FILE *out, const char *prefix);

#endif /* ATF_TOOLS_FACTS_H */
