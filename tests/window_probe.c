/* window_probe - the walk of the atf command, run in-process (tools/embed.h) on a trace
 * seen through a view, and what it read: tests/window_checks.sh checks with it that a
 * window is reached by the merge's binary search, not by walking what lies before it.
 * SPDX-License-Identifier: MIT
 *
 * usage: window_probe PATH [--from T] [--to T] [--thread N]... [--pid N] [--function F]...
 * prints one line: events=N window=W walked=K probes=P
 *   N  the events of the selected threads
 *   W  those in the window (cli_trace_events)
 *   K  the events the walk went through
 *   P  the binary-search probes of the merges' seeks to the window
 * Exit status as atf stats for bad options or a PATH that cannot be read. */
#include "atf.h"

#include "../tools/embed.h"

#include <stdio.h>

int main(int argc, char **argv) {
    static const cli_command probe = { "window_probe", cli_cmd_stats, "", "" };
    static cli_view view;
    cli_trace t;
    walk_ctx w;
    cli_progress p;
    uint64_t events = 0, walked = 0;
    size_t i;
    int status;
    cli_io_begin(stdout, stderr);
    status = cli_parse_view_args(&probe, argc, argv, NULL, 0, &view,
                                 CLI_VIEW_WINDOW | CLI_VIEW_THREAD | CLI_VIEW_PID |
                                     CLI_VIEW_FUNCTION);
    if (status != CLI_CONTINUE) return status;
    if ((status = cli_trace_open_view(&probe, &t, argv[1], &view)) != CLI_EXIT_OK) return status;
    if (!walk_init(&w, t.reader.thread_count)) return CLI_EXIT_DATA;
    cli_progress_init(&p, "window_probe", 0, NULL);
    if (walk_run(&w, &t, NULL, &p) != ATF_OK) return CLI_EXIT_DATA;
    for (i = 0; i < t.reader.thread_count; i++) {
        if (cli_trace_selected(&t, i)) events += t.reader.threads[i].reader.index.event_count;
        walked += w.threads[i].events;
    }
    printf("events=%llu window=%llu walked=%llu probes=%llu\n", (cli_ull)events,
           (cli_ull)cli_trace_events(&t), (cli_ull)walked, (cli_ull)w.probes);
    walk_deinit(&w);
    cli_trace_close(&t);
    return cli_io_end();
}
