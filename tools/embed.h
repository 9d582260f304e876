/* embed.h - the whole atf command in one translation unit, without its main(), for a
 * program that runs the commands in-process (tests/cli_embed.c for the harnesses,
 * tests/window_probe.c, bench/bench_export.h): cli_main(out, err, argc, argv) runs `atf argv...` with its output
 * on out and its messages on err. Include after atf.h; the implementation of atf.h is the
 * program's (compiled in, or linked). The file list is the atf command's: every .c file
 * of tools/.
 * SPDX-License-Identifier: MIT */
#ifndef ATF_TOOLS_EMBED_H
#define ATF_TOOLS_EMBED_H

#define CLI_NO_MAIN
#include "core.c"
#include "demangle.c"
#include "symbolize.c"
#include "facts.c"
#include "walk.c"
#include "profile.c"
#include "info_cmd.c"
#include "dump_cmd.c"
#include "verify_cmd.c"
#include "stats_cmd.c"
#include "tree_cmd.c"
#include "parquet.c"
#include "export_cmd.c"
#include "diff_cmd.c"
#include "report_cmd.c"
#include "gen_cmd.c"
#include "recover_cmd.c"
#include "pack_cmd.c"
#include "ktrace_cmd.c"
#include "record_cmd.c"
#include "main.c"

#endif /* ATF_TOOLS_EMBED_H */
