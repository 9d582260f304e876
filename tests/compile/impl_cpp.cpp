/* The implementation compiles once even when the header is included twice. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "atf.h"

int main(void) {
    return atf_crc32c("123456789", 9) == 0xE3069283u ? 0 : 1;
}
