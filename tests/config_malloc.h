/* config_malloc.h - forced in front of a harness (gcc/clang -include) by tests/configs.sh to
 * build it with ATF_MALLOC/ATF_REALLOC/ATF_FREE set. Every block carries a 16-byte tag, so a
 * pointer from the C library reaching ATF_FREE, or one of ours reaching free(), aborts. */
#ifndef ATF_TEST_CONFIG_MALLOC_H
#define ATF_TEST_CONFIG_MALLOC_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MALLOC_TAG 0x41544641u /* "AFTA" */

static void *config_malloc_tagged(void *raw) {
    uint32_t tag = CONFIG_MALLOC_TAG;
    if (!raw) return NULL;
    memcpy(raw, &tag, sizeof tag);
    return (uint8_t *)raw + 16;
}
static void *config_malloc_raw(void *p) {
    uint32_t tag = 0;
    uint8_t *raw = (uint8_t *)p - 16;
    memcpy(&tag, raw, sizeof tag);
    if (tag != CONFIG_MALLOC_TAG) abort(); /* not a block of ours */
    return raw;
}
static void *config_malloc(size_t n) { return config_malloc_tagged(malloc(n + 16)); }
static __attribute__((unused)) void *config_realloc(void *p, size_t n) {
    return p ? config_malloc_tagged(realloc(config_malloc_raw(p), n + 16)) : config_malloc(n);
}
static __attribute__((unused)) void config_free(void *p) {
    if (p) free(config_malloc_raw(p));
}
#define ATF_MALLOC(n) config_malloc(n)
#define ATF_REALLOC(p, n) config_realloc((p), (n))
#define ATF_FREE(p) config_free(p)
#endif
