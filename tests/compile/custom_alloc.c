/* ATF_MALLOC/REALLOC/FREE replace the C library allocator; this one counts calls. */
#define _GNU_SOURCE /* atf.h is not the first include here, so ask for what it needs */
#include <stdlib.h>
static long custom_alloc_live;
static void *custom_malloc(size_t n) { custom_alloc_live++; return malloc(n); }
static void *custom_realloc(void *p, size_t n) { if (!p) custom_alloc_live++; return realloc(p, n); }
static void custom_free(void *p) { if (p) custom_alloc_live--; free(p); }
#define ATF_MALLOC(n) custom_malloc(n)
#define ATF_REALLOC(p, n) custom_realloc(p, n)
#define ATF_FREE(p) custom_free(p)
#define ATF_IMPLEMENTATION
#include "atf.h"

int main(void) {
    atf_detail_reader r;
    (void)custom_realloc; /* the readers never grow a block; the hook must still be accepted */
    static const uint8_t bytes[64] = {'A', 'T', 'D', '2', 1, 1};
    uint8_t copy[64 + 24];
    memcpy(copy, bytes, 64);
    copy[20] = 64; /* events_offset */
    memset(copy + 64, 0, 24);
    copy[64] = 24; /* one empty record */
    if (atf_detail_reader_open_memory(&r, copy, sizeof copy, "mem", NULL) != ATF_OK) return 2;
    if (custom_alloc_live != 1) return 3;
    atf_detail_reader_close(&r);
    return custom_alloc_live == 0 ? 0 : 4;
}
