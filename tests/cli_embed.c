/* cli_embed.c - the whole atf command without its main() (tools/embed.h), built with the
 * walk depth limit of tests/cli_embed.h: one object per build, linked into the harnesses
 * of the commands (tests/cli_traces.h, test_symbolize.c), so that the command is compiled
 * once and not once per harness. */
#include "atf.h"
#include "cli_embed.h"
#include "../tools/embed.h"
