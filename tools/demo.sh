#!/bin/sh
# make demo: records the multi-threaded sample program with `atf record` (the auto-tracer
# of tools/instrument/, preloaded: the program is only compiled with the hooks), then
# looks at the session with the atf command and the query example, and writes it for
# ui.perfetto.dev; then records a C++ program whose exceptions leave frames
# (tests/programs/cpp_exceptions.cpp) and shows one thread's calls of the catching frame.
set -e
BUILD=${1:-build}
ATF=$BUILD/atf
ROOT=$BUILD/demo-traces
rm -rf "$ROOT"

section() {
    echo
    echo "== $*"
}

section "recording: $ATF record --output $ROOT -- $BUILD/examples/sample_hooked"
echo "(sample.c compiled with -finstrument-functions and no tracer; atf record preloads"
echo " $BUILD/libatf_instrument.so, which it finds next to $ATF)"
# the program's output goes to stdout; record's summary (on stderr) is captured, shown,
# and read for the session directory it names
exec 3>&1
summary=$("$ATF" record --output "$ROOT" -- "$BUILD/examples/sample_hooked" 2>&1 1>&3) || {
    echo "$summary" >&2
    exit 1
}
exec 3>&-
echo "$summary"
session=$(echo "$summary" | sed -n 's/^atf record: session //p')
pid=$(ls -d "$session"/pid_* 2>/dev/null | head -n 1)
if [ -z "$session" ] || [ -z "$pid" ]; then
    echo "demo: no session directory in atf record's output" >&2
    exit 1
fi
echo "its process: $pid"

section "atf info $pid"
"$ATF" info "$pid"

section "atf verify --strict $pid (every thread)"
"$ATF" verify --strict "$pid"

section "atf stats $pid (top)"
"$ATF" stats "$pid" --limit 10 | head -n 30

section "atf tree $pid --thread 1 --max-depth 3 (a slice)"
"$ATF" tree "$pid" --thread 1 --max-depth 3 | head -n 24
echo "..."

section "$BUILD/examples/query $pid"
"$BUILD/examples/query" "$pid"

CPP=$BUILD/programs/cpp_exceptions_hooked
section "C++ exceptions: $ATF record --notrace '*Tally*,*atomic_base*' -- $CPP 1 2"
echo "(a frame an exception leaves ends with an exception event, marked (exception); the"
echo " catching frame, guarded, goes on and returns; destructors run meanwhile return)"
exec 3>&1
status=0
summary=$("$ATF" record --output "$ROOT" --notrace '*Tally*,*atomic_base*' -- "$CPP" 1 2 \
    2>&1 1>&3) || status=$?
exec 3>&-
echo "$summary"
if [ "$status" -ne 3 ]; then
    echo "demo: $CPP exited with $status, not its own 3" >&2
    exit 1
fi
echo "exit status 3: the program's own"
cpp=$(ls -d "$(echo "$summary" | sed -n 's/^atf record: session //p')"/pid_* | head -n 1)
section "atf tree $cpp --thread 1 --function _ZL7guardedi"
"$ATF" tree "$cpp" --thread 1 --function _ZL7guardedi

echo
"$ATF" export --format perfetto -o "$BUILD/demo.perfetto-trace" "$pid"
"$ATF" export --format chrome -o "$BUILD/demo.json" "$pid"
echo "wrote $BUILD/demo.perfetto-trace and $BUILD/demo.json"
echo "Open $BUILD/demo.perfetto-trace (or $BUILD/demo.json) in https://ui.perfetto.dev to see every call of every thread."
