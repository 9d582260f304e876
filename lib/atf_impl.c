/* atf_impl.c - the implementation of atf.h, compiled once per build configuration and
 * linked into the atf command, the examples and every test program that does not reach
 * into the implementation's private parts (those define ATF_IMPLEMENTATION themselves). */
#define ATF_IMPLEMENTATION
#include "atf.h"
