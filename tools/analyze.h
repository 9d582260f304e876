/* analyze.h - the analysis and export commands of the atf tool: stats, tree, export.
 * SPDX-License-Identifier: MIT
 *
 * Each command takes the whole command line of its subcommand (argv[0] is the
 * subcommand's name), prints its results on stdout and its messages on stderr, and
 * returns the process exit status: 0 ok, 1 bad or damaged data (or an output error),
 * 2 usage error. `atf NAME --help` prints the usage on stdout and returns 0. */
#ifndef ATF_TOOLS_ANALYZE_H
#define ATF_TOOLS_ANALYZE_H

/* atf stats PATH [--sort self|total|calls|name] [--limit N] [--json] */
int atf_cmd_stats(int argc, char **argv);
/* atf tree PATH [--thread SLOT] [--max-depth N] */
int atf_cmd_tree(int argc, char **argv);
/* atf export --format chrome|perfetto [-o OUT] PATH */
int atf_cmd_export(int argc, char **argv);

#endif
