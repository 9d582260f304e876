/* ATF_STATIC: each translation unit carries a private copy; two link together. */
#define ATF_STATIC
#define ATF_IMPLEMENTATION
#include "atf.h"

uint32_t static_a_crc(void);
uint32_t static_a_crc(void) { return atf_crc32c("123456789", 9); }
