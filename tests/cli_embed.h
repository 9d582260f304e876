/* cli_embed.h - the atf command as the harnesses of its commands see it: the declarations of
 * tools/ (cli_main() and the functions the harnesses call directly), with a walk depth
 * limit of 8 so that the skipping of deeper calls is tested (test_symbolize.c, which
 * links it too, has no trace that deep). The command itself, with the same limit, is
 * tests/cli_embed.c, compiled once per build and linked into each harness. Include after
 * atf.h. */
#ifndef ATF_TESTS_CLI_EMBED_H
#define ATF_TESTS_CLI_EMBED_H

#define WALK_MAX_DEPTH 8u

#include "../tools/core.h"
#include "../tools/demangle.h"
#include "../tools/facts.h"
#include "../tools/parquet.h"
#include "../tools/profile.h"
#include "../tools/symbolize.h"
#include "../tools/walk.h"

#endif /* ATF_TESTS_CLI_EMBED_H */
