#define ATF_STATIC
#define ATF_IMPLEMENTATION
#include "atf.h"

uint32_t static_a_crc(void);

int main(void) {
    return static_a_crc() == atf_crc32c("123456789", 9) ? 0 : 1;
}
