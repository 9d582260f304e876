/* main.c - the atf command: the one table of its commands, with their summaries and
 * usage texts (`atf --help`, `atf help NAME` and `atf NAME --help` all print from it),
 * cli_main() and main() (left out with CLI_NO_MAIN, for a program that runs the commands
 * in-process: see tools/embed.h). tools/core.h describes how the files of tools/ fit
 * together.
 * SPDX-License-Identifier: MIT */
#include "core.h"

#include <stdio.h>
#include <string.h>

static int cli_cmd_help(const cli_command *cmd, int argc, char **argv);

/* What stats, tree and export take as PATH, and how they report a damaged session. */
#define CLI_TRACE_PATH_TEXT \
    "PATH is a session's pid_* directory (all threads), a session_* directory holding\n" \
    "one, or a thread_N directory or its index.atf (that thread). A thread that cannot\n" \
    "be read or was left by a crash (a torn last record, no footer: atf recover\n" \
    "finalizes it), whichever of these PATH is, and a manifest.json that is not\n" \
    "readable JSON, are named on stderr (\"atf: thread_N: FILE: offset N: what\"; a\n" \
    "lone file: \"atf: FILE: ...\") after the results, and the exit status is 1.\n"

/* The options of a view (core.h), for the commands that take them. */
#define CLI_VIEW_WINDOW_TEXT \
    "  --from T, --to T  only events with from <= ts <= to; T: ns on the trace clock\n" \
    "                 (as dump prints it), or +N and a unit (s, ms, us, ns) after the\n" \
    "                 trace's first event: +1.5s, +200ms, +10us, +500ns\n"
#define CLI_VIEW_THREAD_TEXT \
    "  --thread N     only thread_N; repeatable\n"
#define CLI_VIEW_PID_TEXT \
    "  --pid N        pid_N, of a session_* PATH holding several processes\n"
#define CLI_VIEW_FUNCTION_TEXT \
    "  --function F   only F's calls and what they call (the subtrees rooted at F's\n" \
    "                 calls); F: a name, symbol or full or short C++ name (work::eval:\n" \
    "                 each overload), or an id 0x...; repeatable\n"
/* How C++ names read (demangle.h), for every command that shows names. */
#define CLI_DEMANGLE_TEXT \
    "  --demangle M   C++ names: full (default, as c++filt -i prints them), short (no\n" \
    "                 parameters, template arguments or return type) or none (the\n" \
    "                 symbols as recorded)\n"
#define CLI_VIEW_CLOCK_TEXT \
    "  --clock C      times on clock C: trace (default), wall (the manifest's anchor\n" \
    "                 wall_clock_ns: ns since 1970, UTC) or any anchor's name (in ns):\n" \
    "                 the trace time + the anchor's value - host_ns, exactly. Exit\n" \
    "                 status 2 when there is no such exact anchor.\n"
/* What a window shows, for stats, tree and export. */
#define CLI_VIEW_EDGES_TEXT \
    "A window is the whole trace cut to it, found by binary search: a return whose\n" \
    "call came before it has no matching call, a call open at its end is cut short\n" \
    "(below) at the process's last event in it. A window outside the trace shows\n" \
    "nothing (exit 0).\n"

/* What the walk (walk.h) does with the frames open at a thread's end. */
#define CLI_CUT_SHORT_TEXT \
    "A frame still open when its thread's events end is cut short: its process was\n" \
    "last seen inside it (killed, or the thread recorded nothing more while the others\n" \
    "went on) or a bound stopped the recording (a gap \"stopped\"). It ends when the\n" \
    "process was last seen: the latest event of any of its threads (in the window),\n" \
    "never before its own thread's last event.\n"

/* C99 promises string literals of 4095 bytes only: a longer usage text is kept in parts,
 * joined into its buffer by cli_usage_texts() before any command runs. */
static char cli_export_usage[8192];
static const char *const cli_export_usage_parts[] = {
    "usage: atf export --format chrome|perfetto|parquet|folded [--table slices|events]\n"
    "                  [--thread-frame name|tid|none] [-o OUT] [--from T] [--to T]\n"
    "                  [--thread N]... [--pid N] [--function F]... [--clock C]\n"
    "                  [--demangle full|short|none] PATH\n"
    "\n"
    "Writes the trace for a trace viewer (ui.perfetto.dev, chrome://tracing), as\n"
    "Parquet for a query engine (DuckDB, pandas, Spark), or as folded stacks for a\n"
    "flame graph:\n"
    "  chrome    Trace Event Format JSON: {\"traceEvents\":[...]}, a B event per call and\n"
    "            an E event per return, ts in microseconds (nanoseconds as decimals),\n"
    "            pid the process's (its manifest's, else its pid_N directory's), tid\n"
    "            the OS thread id, the process's program name (else pid_N) and\n"
    "            thread names as metadata events\n"
    "  perfetto  Perfetto protobuf Trace: a track per thread under its process's\n"
    "            (pid, program name, command line), SLICE_BEGIN/SLICE_END events with\n"
    "            interned names, timestamps in nanoseconds\n"
    "            A call that carries a detail record has it as the slice's arguments\n"
    "            (chrome \"args\", perfetto debug annotations): function_id, x0..x7, lr,\n"
    "            fp, sp and stack_size, or detail_type and detail_bytes for a record\n"
    "            that is not a function payload\n"
    "  parquet   one Parquet table (docs/PARQUET.md lists the columns):\n"
    "            --table slices (default): a row per call, in the order calls end:\n"
    "              pid, tid, thread_slot, thread_name, function_id, fid, name,\n"
    "              mangled, module, depth, start_ns, end_ns, dur_ns, self_ns, ended_by\n"
    "              (return, exception: left by a thrown exception or a longjmp,\n"
    "              unwound, cut: cut short, gap: cut by a gap), has_detail (INT32 1: the\n"
    "              call event carries a detail record, else 0), paused_ns,\n"
    "              start_wall, end_wall\n"
    "            --table events: a row per index event, in merged time order (of\n"
    "              each process: see below): pid, thread_slot, seq, ts_ns,\n"
    "              function_id, fid, name, mangled, kind, depth, detail_seq (-1: no\n"
    "              detail), ts_wall\n"
    "            name: as --demangle says; mangled: the symbol as recorded (null when\n"
    "            the function has no name)\n"
    "            start_ns, end_ns, ts_ns are INT64 ns on the trace clock (boot time:\n"
    "            no date); start_wall, end_wall, ts_wall the same instants as\n"
    "            TIMESTAMP(NANOS) in UTC, from the manifest's wall_clock_ns anchor\n"
    "            (null without one); function_id is the id's 64 bits as a signed INT64\n"
    "            (ids >= 2^63 read negative), fid the id exactly as atf stats --json\n"
    "            spells it (\"0x\" and 16 hex digits); gaps are not rows\n"
    "  folded    folded stacks, what flamegraph.pl, inferno and speedscope read: one line\n"
    "            per distinct call path, \"worker-0;main;parse;lex 1234\": its frames from\n"
    "            the outermost (names as stats prints them; ';' and control characters\n"
    "            in a name as '_'), a space, then the self time in ns of its last frame\n"
    "            (the time in that function, not in its callees) summed over every call\n"
    "            along that path. The lines under a path (itself and those extending it)\n"
    "            add up to its total time, the sum of atf tree's durations of its calls;\n"
    "            all of a thread's lines to the time of its outermost calls. In the order\n"
    "            of their frames (bytes compared), each path before those it calls.\n"
    "            Memory grows with the distinct paths; the lines come at the end.\n"
    "\n"
    "  -o OUT    output file (default: stdout; for perfetto and parquet only when\n"
    "            stdout is not a terminal)\n"
    "  --table T parquet's table: slices or events\n"
    "  --thread-frame M  folded: the first frame of a thread's paths: name (default: the\n"
    "            thread's name, else thread_<slot>: threads of one name add up, as perf's\n"
    "            stackcollapse does), tid (NAME-PID/TID: every thread apart) or none (no\n"
    "            thread frame: every thread's paths added up)\n"
    "\n",
    "Which part of the trace (for every format):\n"
    CLI_VIEW_WINDOW_TEXT
    CLI_VIEW_THREAD_TEXT
    CLI_VIEW_PID_TEXT
    CLI_VIEW_FUNCTION_TEXT
    "                 (not for --table events; depth stays the thread's stack depth)\n"
    CLI_VIEW_CLOCK_TEXT
    "                 Every time written is then on clock C: chrome's ts (us, to the ns),\n"
    "                 perfetto's timestamps (unsigned: a trace starting before C's zero\n"
    "                 is refused), parquet's start_ns, end_ns and ts_ns (with wall: ns\n"
    "                 since 1970, UTC; its *_wall columns stay the wall clock's). Not\n"
    "                 for folded, which holds no times (exit 2).\n"
    CLI_DEMANGLE_TEXT
    "                 (folded, short: a template's instances are one frame)\n"
    CLI_VIEW_EDGES_TEXT
    "\n"
    "Every thread's slices are balanced: frames still open at the end are cut short\n"
    "(below: chrome gives the E event the args {\"cut_short\":true}, perfetto the\n"
    "SLICE_END the debug annotation cut_short, parquet ended_by cut), returns without a\n"
    "matching call are left out, a return of an outer frame closes the frames above it.\n"
    "A frame closed by its exception event (left by a thrown exception, or a longjmp the\n"
    "auto-tracer repaired) says so the same way: {\"exception\":true}, the annotation\n"
    "exception, ended_by exception.\n"
    "Nothing is paired across a gap (events the recorder lost): the frames open there\n"
    "end at the thread's last event before it, and the gap itself is an instant event\n"
    "named \"gap: N events lost\" on the thread (chrome: \"ph\":\"i\" with args\n"
    "index_lost, detail_lost, reason; perfetto: TYPE_INSTANT) at the time of the first\n"
    "lost event; a return after it whose call came before it is left out. Output\n"
    "streams with bounded memory (but folded's). The recorder's pauses are left out of\n"
    "folded's times, as of stats'.\n"
    CLI_CUT_SHORT_TEXT
    CLI_TRACE_PATH_TEXT
    "\n",
    "A session_* PATH of several processes (a program that forked, as atf record\n"
    "records it) is exported whole unless --pid picks one: every process into the one\n"
    "output, one after the other, each on its own track group (chrome: its pid and\n"
    "process_name; perfetto: its process track with its threads' under it, on a\n"
    "packet sequence of its own; parquet: its rows, told apart by pid; folded: its\n"
    "paths, added to those of the same frames in the others). There:\n"
    "  --from/--to +T  count from the first event of the whole session\n"
    "  --function F    F's calls in each process that has a function F (function ids\n"
    "                  are per process); a name no process has: exit status 2\n"
    "  --thread N      needs --pid (thread numbers are per process): exit status 2\n"
    "  --clock C       needs the anchor in every process\n"
    "A process that cannot be read or is damaged is named on stderr, the others are\n"
    "written, and the exit status is 1.\n"
    "\n"
    "A Chrome or Perfetto OUT over 100 MiB gets a note on stderr: a viewer in a browser\n"
    "may open it slowly or not at all, and a window or a selection exports a part.\n"
    "\n"
    "Exit status: 0 ok, 1 the trace cannot be read or is damaged or OUT cannot be\n"
    "written, 2 usage error.\n"
};

static char cli_record_usage[8192];
static const char *const cli_record_usage_parts[] = {
    "usage: atf record [OPTIONS] -- PROG [ARGS...]\n"
    "\n"
    "Runs PROG with the auto-tracer preloaded (LD_PRELOAD of libatf_instrument.so):\n"
    "every function entry and exit of every thread of a program compiled with\n"
    "-finstrument-functions (its shared libraries too, when they were), in every\n"
    "process it forks, goes into a new DIR/session_<date>_<time>/, one pid_<pid>/ per\n"
    "process (a program a process execs gets pid_<pid>_1/). No relinking; PROG must\n"
    "be dynamically linked. Then prints on stderr the session's path and a summary:\n"
    "processes, threads, events, events lost, duration, size on disk, and what a\n"
    "bound or a switch left out. A process that ended without closing its trace\n"
    "(killed) is recovered first, as atf recover would; one that could not be\n"
    "completed (a full disk) is called incomplete, its lost count unknown. Threads'\n"
    "pauses to write their own full rings are said, and left out of the functions.\n"
    "\n"
    "  --output DIR       where the session directory goes (default ./traces)\n"
    "  --overflow MODE    a full ring: block (default; the thread writes it out itself,\n"
    "                     nothing is lost) or drop (never waits; lost events counted)\n"
    "  --layout L         index files: packed (default, a few bytes per event, read by\n"
    "                     every atf command; atf unpack undoes it), 1 (what the\n"
    "                     original readers take) or 2\n"
    "  --ring-events N    ring slots per thread (default 131072; 65536 for a thread\n"
    "                     that starts while as many threads as processors record);\n"
    "                     given, every thread gets N\n"
    "  --filter GLOBS     record only functions whose name matches one of the\n"
    "                     comma-separated patterns (* ? [...]), e.g. 'fib,sort_*'; a\n"
    "                     C++ function's symbol, full or short name ('work::*',\n"
    "                     'work::eval'); a comma inside brackets does not separate\n"
    "  --notrace GLOBS    never record functions matching these (after --filter)\n",
    "  --depth N          record calls at most N levels deep per thread\n"
    "  --no-follow        do not trace the processes PROG forks\n"
    "  --max-size SIZE    stop recording before a process's trace files hold more\n"
    "                     than SIZE of events (K, M, G: powers of 1024; 512M, 1.5G),\n"
    "                     within 1 % + 512K: the other threads' events from before\n"
    "                     the cut still go in\n"
    "  --duration TIME    record only the first TIME of each process (ns, us, ms, s,\n"
    "                     min: 10s, 500ms, 2min)\n"
    "  --disk-reserve SIZE  stop recording before the file system's free space falls\n"
    "                     under SIZE (default: the larger of 1G and 5 % of it; 0: never)\n"
    "                     A stop is clean: PROG runs on; the trace is cut at one moment,\n"
    "                     each thread's files end with a gap of reason \"stopped\".\n"
    "  --min-duration TIME  record only calls at least TIME long and their callers\n"
    "                     (the manifest says so: the trace no longer has every call)\n"
    "  --start-paused     start with recording off; the toggle signal switches it on\n"
    "                     and off (record prints the pid to send it to)\n"
    "  --toggle-signal SIG  that signal (default USR1; USR2, HUP, ... or a number). The\n"
    "                     events left out are a gap of reason \"skipped\"; the calls\n"
    "                     open when recording comes on are recorded again from then.\n"
    "                     A program that sets its own handler for SIG is told.\n"
    "  --trigger-on GLOBS   recording starts off and comes on when any thread enters a\n"
    "                     matching function; --trigger-off GLOBS: it goes off after a\n"
    "                     matching function returns (both: only during those calls)\n",
    "  --keep-last SIZE|TIME  flight recorder: hold the events in memory and write only\n"
    "                     the most recent SIZE of them (over all threads) or TIME (of\n"
    "                     each thread), at exit and on the snapshot signal; the events\n"
    "                     before them are a gap of reason \"discarded\"\n"
    "  --snapshot-signal SIG  the signal that writes what it holds now (default USR2;\n"
    "                     a program that sets its own handler for SIG is told)\n"
    "  --force            run PROG even when it is statically linked (one that runs\n"
    "                     dynamically linked programs)\n"
    "  --preload PATH     the tracer library; by default libatf_instrument.so next to\n"
    "                     the atf binary, else in ../lib/atf/ from there\n"
    "\n"
    "The options become the tracer's environment variables (ATF_TRACE_*; see\n"
    "tools/instrument/README.md). A statically linked PROG is refused up front; when\n"
    "no process was traced, a PROG without -finstrument-functions code (nor in its\n"
    "libraries) is named as the reason. Either way no session is left.\n"
    "\n"
    "Exit status: PROG's own (128 + N when signal N ended it); 125 when record\n"
    "failed (tracer library not found, no session directory, a PROG that cannot be\n"
    "traced), 126 when PROG cannot be run, 127 when it is not found, 2 usage error.\n"
};

static char cli_stats_usage[8192];
static const char *const cli_stats_usage_parts[] = {
    "usage: atf stats PATH [--sort self|total|calls|name] [--limit N] [--json]\n"
    "                 [--from T] [--to T] [--thread N]... [--pid N] [--function F]...\n"
    "                 [--demangle full|short|none]\n"
    "\n"
    "Per function: calls, total (inclusive) time, self time, and min/avg/max time per\n"
    "call; per thread: events, events dropped while recording (from the manifest) and\n"
    "time span; then the gaps (events the recorder lost) and the unbalanced input, when\n"
    "there are any.\n"
    CLI_TRACE_PATH_TEXT
    "\n"
    "  --sort KEY  order of the functions: self (self time, the default), total (total\n"
    "              time), calls, or name; largest first, names alphabetically\n"
    "  --limit N   print the first N functions only (default 0: all)\n"
    "  --json      print one JSON object:\n"
    "              {\"functions\":[{\"fid\":\"0x...\",\"name\":...,\"calls\":N,\"total_ns\":N,\n"
    "                \"self_ns\":N,\"min_ns\":N,\"max_ns\":N,\"mangled\":...}],\n"
    "               \"threads\":[{\"slot\":N,\"tid\":N,\"events\":N,\"dropped\":N,\n"
    "                \"start_ns\":N,\"end_ns\":N,\"gaps\":N,\"events_lost\":N,\n"
    "                \"events_not_recorded\":N,\"cut_by_gap\":N,\"cut_short\":N,\n"
    "                \"paused_ns\":N,\"pauses\":N,\"pauses_ns\":N,\"name\":...}],\n"
    "               \"pauses\":{\"count\":N,\"total_ns\":N}}\n"
    "              events, start_ns, end_ns: the thread's events shown (in the window);\n"
    "              gaps and events_lost: the gaps met among them (its gaps.atf: where\n"
    "              the recorder lost events); events_not_recorded: those after a bound\n"
    "              of the recording (atf record --max-size, ...) stopped it;\n"
    "              cut_by_gap: its frames closed at a gap; cut_short: its frames\n"
    "              open at its end (see below);\n"
    "              dropped: the manifest's count for the whole recording;\n"
    "              mangled: the symbol as recorded (null: none)\n"
    "\n",
    "Which part of the trace:\n"
    CLI_VIEW_WINDOW_TEXT
    CLI_VIEW_THREAD_TEXT
    CLI_VIEW_PID_TEXT
    CLI_VIEW_FUNCTION_TEXT
    "                 (their times are those of the whole trace)\n"
    CLI_DEMANGLE_TEXT
    "                 (short: a template's instances add up as one function, under\n"
    "                 the smallest fid)\n"
    CLI_VIEW_EDGES_TEXT
    "\n"
    "Calls and returns are paired per thread. Total time counts the outermost call of a\n"
    "recursive function once; min/avg/max are per call. A return with no matching call\n"
    "is ignored; a return of an outer frame closes the frames above it at its time;\n"
    "frames still open at the end are cut short (below) and counted, their time up to\n"
    "then included. Nothing is paired across a gap (events the recorder lost): the\n"
    "frames open there are closed at their thread's last event before it and counted as\n"
    "cut by a gap (their time up to there is included, so a gap never lengthens a call),\n"
    "and a return after the gap whose call came before it is ignored as a return\n"
    "without a matching call.\n"
    CLI_CUT_SHORT_TEXT
    "Exit status: 0 ok, 1 the trace cannot be read, 2 usage error.\n"
};

/* Joins the parts of a usage text into its buffer (which holds them). */
static void cli_usage_join(char *buf, size_t cap, const char *const *parts, size_t count) {
    size_t i, n = 0;
    for (i = 0; i < count; i++) {
        size_t len = strlen(parts[i]);
        if (n + len >= cap) break; /* never: the buffer holds them */
        memcpy(buf + n, parts[i], len + 1);
        n += len;
    }
}

#define CLI_USAGE_JOIN(name) \
    cli_usage_join(name, sizeof name, name##_parts, sizeof name##_parts / sizeof name##_parts[0])

static void cli_usage_texts(void) {
    if (cli_export_usage[0]) return;
    CLI_USAGE_JOIN(cli_export_usage);
    CLI_USAGE_JOIN(cli_record_usage);
    CLI_USAGE_JOIN(cli_stats_usage);
}

static const cli_command cli_commands[] = {
    { "info", cli_cmd_info, "header, event count, time range, footer and CRC state",
      "usage: atf info [--json] PATH...\n"
      "\n"
      "Prints, for each file, the layout, version, arch, os, thread id, clock, flags,\n"
      "event count, time range, events offset, footer state (how the event count was\n"
      "established: finalized, footer at end, recovered from size, footer mismatch),\n"
      "torn bytes and CRC state (the CRC is verified). A thread directory shows its\n"
      "index.atf and, when present, its detail.atf and its gaps.atf (where the recorder\n"
      "lost events: gaps, events_lost, detail_lost).\n"
      "\n"
      "A session pid_* directory (manifest.json or thread_* directories inside, and no\n"
      "index.atf) shows the manifest state, layout, clock, time range and totals, then\n"
      "one row per thread: slot, OS thread id, events, events dropped (from the\n"
      "manifest), gaps and events lost in them (from its gaps.atf; not those left\n"
      "out by choice, which the totals count as not recorded), detail records,\n"
      "whether its timestamps ever decrease, the recovery and CRC state of its index.atf\n"
      "and detail.atf (\"unreadable\" or \"missing\" when its files did not open), and its\n"
      "name. Before the rows: the recorded command line, one \"module:\" line per module\n"
      "(id, base address, size, build id when known, path) and one \"anchor:\" line per\n"
      "timing anchor (name, host_ns, value, timescale; value and rate as decimals for an\n"
      "inexact one). A session_* directory shows each of its pid_* directories.\n"
      "\n"
      "  --json    for session directories only: one JSON object per pid_* directory and\n"
      "            line, with the same facts (\"-\" as null; modules, anchors and threads\n"
      "            as arrays)\n"
      "\n"
      "A damaged session is reported on stderr, after what could be read: each thread\n"
      "whose files cannot be read or were left by a crash (\"atf: thread_N: FILE: offset\n"
      "N: what\"), and a manifest.json that is not readable JSON (with its byte offset).\n"
      "\n"
      "Exit status: 0 ok (also for a lone file or thread directory recovered after a\n"
      "crash), 1 a file cannot be read, its footer disagrees with it, its CRC does not\n"
      "match, a gaps.atf is damaged, or a session has a damaged thread or manifest,\n"
      "2 usage error.\n" },
    { "dump", cli_cmd_dump, "print the events, as a table or as JSON lines",
      "usage: atf dump [--json] [--detail] [--from T] [--to T] [--limit N]\n"
      "                [--thread N]... [--pid N] [--clock C] [--demangle M] PATH\n"
      "\n"
      "Prints every index event as a table (seq, ts, fid, kind, tid, depth, detail).\n"
      "For a session pid_* directory (or a session_* directory holding one) the events\n"
      "of all its threads are merged in (timestamp, thread, seq) order and each carries\n"
      "its thread slot. When the manifest names the functions, a last column (JSON: the\n"
      "last keys \"name\", and \"mangled\": the symbol as recorded, or null) gives each\n"
      "event's function name.\n"
      "\n"
      "  --json         one JSON object per line and per index event:\n"
      "                 {\"seq\":N,\"ts\":N,\"fid\":\"0x...\",\n"
      "                  \"kind\":\"call|return|exception|unknown\",\"tid\":N,\"depth\":N,\n"
      "                  \"detail_seq\":N}\n"
      "                 tid and depth are null in layout 2 files, detail_seq is null when\n"
      "                 the event has no detail record. Events of a session end with\n"
      "                 ,\"thread\":SLOT}; seq is then the event's place in its own thread.\n"
      "  --detail       also print the detail records, after the index events:\n"
      "                 {\"detail_seq\":N,\"index_seq\":N,\"type\":N,\"flags\":N,\"ts\":N,\n"
      "                  \"payload_len\":N}\n"
      "                 (files and thread directories only)\n"
      "  --limit N      at most N events\n"
      CLI_VIEW_WINDOW_TEXT
      "                 (detail records too; in a detail.atf PATH + counts from its\n"
      "                 first record)\n"
      CLI_VIEW_THREAD_TEXT
      CLI_VIEW_PID_TEXT
      CLI_VIEW_CLOCK_TEXT
      "                 Every ts is then on clock C (negative before its zero).\n"
      CLI_DEMANGLE_TEXT
      "\n"
      "For a detail.atf PATH only the detail records are printed. A thread that cannot\n"
      "be read or was left by a crash (a torn last record, no footer), whether PATH is\n"
      "its session, its thread_N directory or one of its files, is named on stderr with\n"
      "the file and the byte offset after the events of the others.\n"
      "Exit status: 0 ok, 1 the file cannot be read or was left by a crash, or a thread\n"
      "of the session is damaged, 2 usage error.\n" },
    { "verify", cli_cmd_verify, "check structure, CRCs and index<->detail links",
      "usage: atf verify [--strict] PATH...\n"
      "\n"
      "Checks that every file is structurally valid and every non-zero CRC matches, and\n"
      "for a thread directory that the links between index and detail agree both ways\n"
      "and that its gaps.atf, when present, is valid (a damaged one is a problem).\n"
      "Prints \"OK PATH (...)\" for a good file, \"recovered PATH (...)\" for a file left\n"
      "by a crash (no footer or a placeholder header; a torn last record is ignored),\n"
      "and one line \"PATH: offset N: what\" per problem. A thread directory holding\n"
      "such a file, and a session holding one or whose manifest was never closed, read\n"
      "\"recovered\" too: only what is whole reads OK. A footer that disagrees with\n"
      "its file is a problem. The line of a thread directory that lost events while\n"
      "recording ends with \"; N gaps, N events lost\" (and \", N not recorded by\n"
      "choice\" for the events a bound, a switch or the flight recorder left out).\n"
      "\n"
      "A session pid_* directory: every thread directory is verified as above, then one\n"
      "line for the session with the manifest state and the manifest's drop counts\n"
      "(informational), and the gaps and events lost in them when there are any. A\n"
      "manifest.json that is not readable JSON, a thread it lists whose directory is\n"
      "missing, and, when its state is \"closed\", per-thread counts that disagree with\n"
      "the files (events and detail records written, gaps, and events_dropped +\n"
      "events_lost_io + events_stopped + events_skipped against the events lost in\n"
      "gaps.atf) are\n"
      "problems. A missing or\n"
      "incomplete manifest (a crash) is reported, not a problem.\n"
      "\n"
      "  --strict  also fail files that were not finalized (footer not found through\n"
      "            the header) and files whose CRC was not computed (checksum 0).\n"
      "\n"
      "Exit status: 0 every PATH is valid, 1 at least one problem, 2 usage error.\n" },
    { "gen", cli_cmd_gen, "record a synthetic session through the session writer",
      "usage: atf gen [--threads N] [--events N] [--detail always|windowed|off]\n"
      "               [--detail-every K] [--layout 1|2|packed] [--pre-roll-ms N]\n"
      "               [--post-roll-ms N] [--trigger-every-ms N] [--ring-events N]\n"
      "               [--overflow block|drop] [--seed S] [--max-size SIZE]\n"
      "               [--keep-last SIZE] ROOT\n"
      "\n"
      "Records a session under ROOT (created when missing) through the library's\n"
      "session writer and prints its pid_* directory on stdout as soon as it exists,\n"
      "then nothing else. Each of N threads (slot k is the k-th thread, named gen-k)\n"
      "produces N events of well-nested call/return pairs (with an odd N the last call\n"
      "stays open) stamped with atf_now_ns(), over 8 functions registered as symbols.\n"
      "The functions, kinds, depths and detail payloads depend only on the seed and the\n"
      "slot; the timestamps are real. A full ring makes the thread drain it itself\n"
      "(--overflow block, nothing lost) or drops events (--overflow drop); the library\n"
      "counts them in the manifest (events_written + events_dropped = N per thread) and\n"
      "records each gap in the thread's gaps.atf.\n"
      "\n"
      "  --threads N           producer threads (default 4, at most 1024)\n"
      "  --events N            events per thread (default 1000000)\n"
      "  --detail MODE         off (default), always, or windowed (flight recorder:\n"
      "                        only detail around a trigger is persisted)\n"
      "  --detail-every K      every K-th event of a thread carries a detail payload: the\n"
      "                        registers and a 32-byte stack window (default 16)\n"
      "  --layout L            on-disk layout: 1 (default), 2, or packed (layout-1\n"
      "                        events in blocks of a few bytes each; not with windowed)\n"
      "  --pre-roll-ms N       windowed: detail kept before a trigger (default 5)\n"
      "  --post-roll-ms N      windowed: detail kept after a trigger (default 5)\n"
      "  --trigger-every-ms N  windowed: the main thread triggers when the threads start\n"
      "                        and then every N ms until they end; 0 = never (default 10)\n"
      "  --ring-events N       index ring slots per thread (default 65536)\n"
      "  --overflow POLICY     a full ring: block (default: no event lost) or drop\n"
      "  --seed S              seed of the event content (default 1)\n"
      "  --max-size SIZE       stop recording before the files hold SIZE of events (K, M,\n"
      "                        G); the events after the cut are counted, not written\n"
      "  --keep-last SIZE      flight recorder: hold the events in memory (SIZE of them)\n"
      "                        and write the most recent ones at each trigger (every\n"
      "                        --trigger-every-ms) and at the end\n"
      "\n"
      "A summary goes to stderr when stderr is a terminal.\n"
      "Exit status: 0 ok, 1 the session reported an error, 2 usage error.\n" },
    { "recover", cli_cmd_recover, "finalize files left by a crash, in place",
      "usage: atf recover [--dry-run] PATH...\n"
      "\n"
      "Finalizes index.atf and detail.atf files that a crash left without a footer or\n"
      "with a placeholder header, as the writer would have at close: the torn tail is\n"
      "cut (the file is truncated to events_offset + whole records), a footer with the\n"
      "CRC32-C of the events section is written after the last record, and the header\n"
      "is rewritten (event count, footer offset or bytes length and index_seq range,\n"
      "time range of the first and last record). A file whose footer disagrees with it\n"
      "is finalized the same way from the records the reader counts. Finalized files\n"
      "are left alone, except that a footer checksum 0 (\"not computed\", as the original\n"
      "tracer writes) gets the CRC32-C. A file whose CRC does not match is damaged, not\n"
      "left by a crash: it is not changed.\n"
      "\n"
      "PATH is a file (index, detail or gaps, told by its magic), a thread_N directory\n"
      "(its files together), a session pid_* directory (every thread directory, then\n"
      "its manifest.json: see below) or a session_* directory (every pid_* directory\n"
      "in it). For a directory the links are repaired as a crash leaves them: detail\n"
      "records at the end whose index event never reached the disk are cut, an index\n"
      "event naming a detail record that never reached the disk loses its link, and the\n"
      "link of a flight-recorder record whose index event was written before the link\n"
      "was patched in is restored. A detail.atf left with no record is removed (the\n"
      "writer creates none then). gaps.atf (where the recorder lost events) keeps every\n"
      "whole record; a torn last record is cut. Files left under a temporary name\n"
      "(index.atf.tmp, detail.atf.tmp, gaps.atf.tmp: a header at most) are removed.\n"
      "In a session, a thread_N directory without index.atf, empty or holding only an\n"
      "index.atf.tmp (stopped before its first file was in place), is removed.\n"
      "\n"
      "  --dry-run  report what would be done; change nothing\n"
      "\n"
      "A session's manifest.json left \"recording\" (the process died, or closed after\n"
      "an error such as a full disk) is rewritten as \"recovered\": counts from the\n"
      "files, every thread directory listed, names, modules and anchors kept.\n"
      "\n"
      "Prints one line per file: what was done (or would be), or that it was finalized\n"
      "(a whole gaps.atf of a thread is not mentioned); for a session whose\n"
      "manifest.json does not say \"closed\", a note that it was left as is.\n"
      "Afterwards `atf verify --strict PATH` passes.\n"
      "Exit status: 0 ok, 1 a file cannot be recovered (not an ATF file, damaged beyond\n"
      "what a crash does, or a finalized file that is inconsistent), 2 usage error.\n" },
    { "pack", cli_cmd_pack, "index files into the packed layout (about a tenth the size)",
      "usage: atf pack [-o DIR] PATH...\n"
      "\n"
      "Converts finalized layout-1 index files into the packed layout (docs/FORMAT.md):\n"
      "the same events in blocks of a few bytes each, which every atf command reads as\n"
      "it reads layout 1 and atf unpack turns back into the layout-1 file, byte for\n"
      "byte. PATH is an index file, a thread_N directory, a pid_* directory or a\n"
      "session_* directory (every index.atf in it; a pid_* directory whose threads all\n"
      "converted gets \"layout\": 3 in its manifest.json). Each file is written under a\n"
      "temporary name and renamed over the old one, so an interrupted conversion leaves\n"
      "it whole. Files not finalized (a session still recording, or killed: run atf\n"
      "recover first), torn ones, layout-2 ones and packed ones are refused, left as\n"
      "they are. detail.atf, gaps.atf and pauses.atf are not changed.\n"
      "\n"
      "  -o DIR   write converted copies into DIR instead (made when it does not exist):\n"
      "           a file as DIR/NAME, a directory as DIR/NAME/ with its other files copied\n"
      "\n"
      "Prints one line per file converted, with its size before and after.\n"
      "Exit status: 0 ok, 1 a PATH or file could not be converted, 2 usage error.\n" },
    { "unpack", cli_cmd_unpack, "packed index files back into layout 1",
      "usage: atf unpack [-o DIR] PATH...\n"
      "\n"
      "Converts packed index files back into the layout-1 files they came from, byte for\n"
      "byte (what the original readers accept). PATH and -o as for atf pack; a pid_*\n"
      "directory whose threads all converted gets \"layout\": 1 in its manifest.json.\n"
      "Files that are not packed, or not finalized, are refused, left as they are.\n"
      "\n"
      "Exit status: 0 ok, 1 a PATH or file could not be converted, 2 usage error.\n" },
    { "record", cli_cmd_record, "run a program built with -finstrument-functions, traced",
      cli_record_usage },
    { "ktrace", cli_cmd_ktrace, "Darwin ktrace v3 file: header, chunks, session clock",
      "usage: atf ktrace [--json] [--session PATH] FILE\n"
      "\n"
      "Prints the header of a Darwin ktrace v3 file (magic, versions, header size,\n"
      "timebase, timestamp, wall time, time zone, flags) and one row per chunk (offset,\n"
      "tag, version, data size, header or body section). Chunk data is not decoded.\n"
      "\n"
      "  --json          one JSON document:\n"
      "                  {\"header\":{\"magic\":N,\"major\":N,\"minor\":N,\"header_size\":N,\n"
      "                   \"timebase_numer\":N,\"timebase_denom\":N,\"timestamp\":N,\n"
      "                   \"walltime_secs\":N,\"walltime_usecs\":N,\"minutes_west\":N,\n"
      "                   \"dst\":N,\"flags\":N},\n"
      "                   \"chunks\":[{\"offset\":N,\"tag\":N,\"major\":N,\"minor\":N,\"size\":N,\n"
      "                   \"section\":\"header\"|\"body\"}]}\n"
      "                  (size is the data size), and with --session a last key\n"
      "                  \"session\":{...} holding the values below.\n"
      "  --session PATH  place the ktrace file on the trace clock of a session (a pid_*\n"
      "                  directory or its manifest.json), through the session's\n"
      "                  \"wall_clock_ns\" timing anchor {host_ns, value, rate}: host_ns on\n"
      "                  the trace clock was `value` on the wall clock (ns since 1970;\n"
      "                  rate 1e9 units per second).\n"
      "\n"
      "      ktrace_wall_ns  = walltime_secs * 1e9 + walltime_usecs * 1000\n"
      "      start_host_ns   = anchor.host_ns + (ktrace_wall_ns - anchor.value) * 1e9 / rate\n"
      "                        (the ktrace file's start on the session's trace clock)\n"
      "      timestamp_ns    = timestamp * timebase_numer / timebase_denom\n"
      "      offset_ns       = start_host_ns - timestamp_ns\n"
      "\n"
      "                  A ktrace time t (mach ticks) is then at\n"
      "                  t * numer / denom + offset_ns on the session's trace clock. Values\n"
      "                  are signed; the anchor's value is stored as a double in the\n"
      "                  manifest (about 256 ns of resolution for today's dates).\n"
      "\n"
      "Exit status: 0 ok, 1 the file is not a valid ktrace v3 file (chunks up to the\n"
      "damage are printed) or the session has no wall_clock_ns anchor, 2 usage error.\n" },
    { "stats", cli_cmd_stats, "per-function calls, total and self time; per-thread figures",
      cli_stats_usage },
    { "tree", cli_cmd_tree, "the call tree of each thread, with durations",
      "usage: atf tree PATH [--max-depth N] [--from T] [--to T] [--thread N]... [--pid N]\n"
      "                [--function F]... [--clock C] [--demangle full|short|none]\n"
      "\n"
      "The call tree of each thread, in time order, indented by depth:\n"
      "  a call with callees opens with \"name {\" and closes with \"} name\" and its\n"
      "  duration; a call without callees is one line with its duration. Columns: time of\n"
      "  the line's event in microseconds since the first event shown, duration in\n"
      "  microseconds. Consecutive identical calls are shown one by one.\n"
      "\n"
      "  --max-depth N  hide calls nested N or more levels deep (default 0: show all);\n"
      "                 their time stays in their callers' durations\n"
      "\n"
      "Which part of the trace (every thread, one after the other, by default):\n"
      CLI_VIEW_WINDOW_TEXT
      CLI_VIEW_THREAD_TEXT
      CLI_VIEW_PID_TEXT
      CLI_VIEW_FUNCTION_TEXT
      "                 (each indented from its root, F's call; --max-depth counts from\n"
      "                 there)\n"
      CLI_VIEW_CLOCK_TEXT
      "                 The first column is then the time on clock C: wall as UTC to the\n"
      "                 ns (2025-01-31T12:34:56.123456789Z), any other in ns.\n"
      CLI_DEMANGLE_TEXT
      CLI_VIEW_EDGES_TEXT
      "A thread's header line counts the events shown.\n"
      "\n"
      "Marks: \"(exception)\" a frame left by a thrown exception or a longjmp (closed by\n"
      "its exception event), \"(unwound)\" a frame closed by the return of an outer frame,\n"
      "\"(cut short)\" a frame still open when the thread's events end (see below), \"!\"\n"
      "a return with no matching call (ignored), \"(cut by a gap)\" a frame open where\n"
      "the recorder lost events, closed at the thread's last event before the gap, which\n"
      "then follows as a line \"~ gap: N events lost (REASON)\" at the time of the first\n"
      "lost event; nothing is paired across it (a return after it whose call came before\n"
      "it is a return with no matching call). The thread's header line counts its gaps.\n"
      CLI_CUT_SHORT_TEXT
      CLI_TRACE_PATH_TEXT
      "Exit status: 0 ok, 1 the trace cannot be read or is damaged, 2 usage error (also\n"
      "when the trace has no thread, process, function or anchor the options name).\n" },
    { "export", cli_cmd_export, "convert to Chrome JSON, Perfetto, Parquet or folded stacks",
      cli_export_usage },
    { "diff", cli_cmd_diff, "compare two traces per function and per call path",
      "usage: atf diff A B [--top N] [--json] [--thread-frame none|name|tid]\n"
      "                [--from T] [--to T] [--thread N]... [--function F]...\n"
      "                [--demangle full|short|none]\n"
      "\n"
      "Compares two traces, such as recordings of two builds of one program, matched by\n"
      "function name (ids that share a name add up):\n"
      "  functions  calls, total and self time in A and in B, the change (B - A) and the\n"
      "             ratio B/A of the self time; the largest change in self time first\n"
      "  paths      every call path (the chain of callers from an outermost call, frames\n"
      "             joined by ';' as in atf export --format folded): calls and total time\n"
      "             in A and B, the change and the ratio, and the change in self time;\n"
      "             the largest change in total time first (a path's callers carry its\n"
      "             change too), so that \"main;load;parse;normalize\" called 3x as often\n"
      "             and taking 3x the time says where parse's time went\n"
      "A function or a path of one trace only has 0 in the other (ratio \"new\" or\n"
      "\"gone\"); one in both with the same calls shows a change of 0. Times are counted\n"
      "as stats counts them (the recorder's pauses left out, nothing paired across a gap).\n"
      "The first lines say how long the outermost calls took in A and B, every thread's\n"
      "added up.\n"
      "\n"
      "  --top N           show the first N functions and N paths (default 20; 0: all)\n"
      "  --json            one JSON object instead, with every function and path unless\n"
      "                    --top is given, in the order of the text:\n"
      "                    {\"a\":A,\"b\":B,\"total_ns_a\":N,\"total_ns_b\":N,\n"
      "                     \"total_ns_delta\":N,\n"
      "                     \"functions\":[{\"name\":...,\"calls_a\":N,\"calls_b\":N,\n"
      "                       \"calls_delta\":N,\"total_ns_a\":N,\"total_ns_b\":N,\n"
      "                       \"total_ns_delta\":N,\"self_ns_a\":N,\"self_ns_b\":N,\n"
      "                       \"self_ns_delta\":N,\"self_ratio\":X}],\n"
      "                     \"paths\":[{\"path\":...,\"calls_a\":N,...,\"self_ns_delta\":N,\n"
      "                       \"total_ratio\":X}]}\n"
      "                    paths have the keys of functions (total and self of the path);\n"
      "                    *_delta is B - A (negative when B has less), a ratio B/A is\n"
      "                    null where A's time is 0; total_ns_a, total_ns_b: the time of\n"
      "                    the outermost calls, every thread's added up\n"
      "  --thread-frame M  how paths begin: none (default: every thread's paths added up),\n"
      "                    name (under the thread's name: threads matched by name) or tid\n"
      "                    (NAME-PID/TID: matches within one recording only)\n"
      "\n"
      "Which part of each trace:\n"
      CLI_VIEW_WINDOW_TEXT
      "                 (+T: after that trace's own first event)\n"
      CLI_VIEW_THREAD_TEXT
      CLI_VIEW_FUNCTION_TEXT
      "                 (of each trace that has F; exit 2 when neither has)\n"
      CLI_DEMANGLE_TEXT
      "                 (short: a template's instances are one function, one frame)\n"
      "\n"
      "A and B are each a PATH as stats takes it: a session's pid_* directory, a\n"
      "session_* directory holding one, or a thread_N directory or its index.atf. Their\n"
      "damaged threads are named on stderr (\"atf: thread_N: FILE: offset N: what\") after\n"
      "the comparison of the rest, and the exit status is 1.\n"
      "Exit status: 0 ok, 1 a trace cannot be read or is damaged, 2 usage error.\n" },
    { "report", cli_cmd_report, "one HTML file: flame graph, function table, timeline, facts",
      "usage: atf report -o OUT [--base B] [--top N] [--prune PCT]\n"
      "                  [--thread-frame name|tid|none] [--from T] [--to T]\n"
      "                  [--thread N]... [--pid N] [--function F]... PATH\n"
      "\n"
      "Writes OUT (report.html): one self-contained HTML page that opens from disk in\n"
      "any browser. It holds no URL and fetches nothing (its Content-Security-Policy\n"
      "forbids it), and it embeds figures, not events: under 5 MB whatever the trace.\n"
      "  flame graph  the merged call tree of the process (an icicle: callers above),\n"
      "               by total time, under each thread's frame (--thread-frame as atf\n"
      "               export --format folded has it); click to zoom, search by name;\n"
      "               hover: the path's calls, total, self and average, the function's\n"
      "               min/avg/max. Paths under PCT of the time each are left out with\n"
      "               what they call, shown as hatched (pruned) boxes\n"
      "  functions    the first N by self time, as atf stats has them; sortable\n"
      "  timeline     the threads' calls in a window: --from/--to (as atf stats takes\n"
      "               them), by default the busiest 2 ms (the report says which); its\n"
      "               longest calls when there are more than fit, each clickable for its\n"
      "               times and its detail record; gaps and the recorder's pauses\n"
      "  session      command line, process, clock, anchors, threads with their names,\n"
      "               events, drops, gaps (events lost), pauses and unbalanced input\n"
      "Times are counted as atf stats counts them (the recorder's pauses left out, nothing\n"
      "paired across a gap); --from/--to choose the timeline's window only.\n"
      "\n"
      "  -o OUT          the HTML file to write (needed)\n"
      "  --base B        a differential flame graph: each frame coloured by the change of\n"
      "                  its self (or total) time from trace B to PATH (red: more in PATH,\n"
      "                  blue: less), paths and functions matched by name as atf diff\n"
      "                  matches them; and atf diff's function table. B: a PATH as below\n"
      "  --top N         rows of the function tables (default 500; 0: all that fit)\n"
      "  --prune PCT     leave out paths under PCT percent of the time (default 0.1)\n"
      "  --thread-frame M  name (default), tid or none: see atf export --help\n"
      CLI_VIEW_WINDOW_TEXT
      CLI_VIEW_THREAD_TEXT
      CLI_VIEW_PID_TEXT
      CLI_VIEW_FUNCTION_TEXT
      "\n"
      "Open OUT#selftest to have the page check itself (the result is written into it).\n"
      CLI_TRACE_PATH_TEXT
      "Exit status: 0 ok, 1 a trace cannot be read or is damaged or OUT cannot be\n"
      "written, 2 usage error.\n" },
    { "help", cli_cmd_help, "show the help of atf or of one command",
      "usage: atf help [COMMAND]\n" },
};
static const size_t cli_command_count = sizeof cli_commands / sizeof cli_commands[0];

/* The overview: what PATH is, and one line per command; on the output, or on stderr for
 * a usage error. */
static void cli_usage(int to_err) {
    char line[128];
    size_t i;
    const char *head =
        "usage: atf COMMAND [OPTIONS] PATH...\n"
        "\n"
        "Reads ADA Trace Format (ATF v2) files, layout 1 and layout 2.\n"
        "PATH is an index.atf, detail.atf or gaps.atf file, a thread_N directory, a\n"
        "session pid_* directory or a session_* directory (its pid_* directories).\n"
        "\n"
        "commands:\n";
    const char *tail =
        "\n"
        "Run 'atf COMMAND --help' for the options of a command.\n"
        "Exit status: 0 ok, 1 bad or damaged data, 2 usage error.\n";
    if (to_err) fputs(head, cli_err());
    else cli_print(head);
    for (i = 0; i < cli_command_count; i++) {
        snprintf(line, sizeof line, "  %-8s %s\n", cli_commands[i].name, cli_commands[i].summary);
        if (to_err) fputs(line, cli_err());
        else cli_print(line);
    }
    if (to_err) fputs(tail, cli_err());
    else cli_print(tail);
}

static const cli_command *cli_find_command(const char *name) {
    size_t i;
    for (i = 0; i < cli_command_count; i++)
        if (strcmp(cli_commands[i].name, name) == 0) return &cli_commands[i];
    return NULL;
}

static int cli_cmd_help(const cli_command *cmd, int argc, char **argv) {
    const cli_command *topic;
    int nops = 0;
    int rc = cli_parse_args(cmd, argc, argv, NULL, 0, 0, 1, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (nops == 0) {
        cli_usage(0);
        return CLI_EXIT_OK;
    }
    topic = cli_find_command(argv[1]);
    if (!topic) {
        fprintf(cli_err(), "atf help: unknown command '%s'\n\n", argv[1]);
        cli_usage(1);
        return CLI_EXIT_USAGE;
    }
    cli_print(topic->usage);
    return CLI_EXIT_OK;
}

/* The command argv[0] (or --help, --version) with its arguments. */
static int cli_dispatch(int argc, char **argv) {
    const cli_command *cmd;
    if (argc < 1) {
        cli_usage(1);
        return CLI_EXIT_USAGE;
    }
    if (cli_is_help(argv[0])) {
        cli_usage(0);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[0], "--version") == 0) {
        cli_printf("atf %d.%d.%d\n", ATF_VERSION_MAJOR, ATF_VERSION_MINOR, ATF_VERSION_PATCH);
        return CLI_EXIT_OK;
    }
    cmd = cli_find_command(argv[0]);
    if (!cmd) {
        fprintf(cli_err(), "atf: unknown command '%s'\n\n", argv[0]);
        cli_usage(1);
        return CLI_EXIT_USAGE;
    }
    return cmd->run(cmd, argc, argv);
}

int cli_main(FILE *out, FILE *err, int argc, char **argv) {
    int status, written;
    cli_usage_texts();
    cli_io_begin(out, err);
    status = cli_dispatch(argc, argv);
    written = cli_io_end();
    return status != CLI_EXIT_OK ? status : written;
}

#if !defined(CLI_NO_MAIN)
int main(int argc, char **argv) {
    return cli_main(stdout, stderr, argc - 1, argv + 1);
}
#endif
