#!/bin/sh
# make demo: traces the multi-threaded sample program with the auto-tracer
# (examples/instrument/), then looks at the session with the atf command and the query
# example, and writes it for ui.perfetto.dev.
set -e
BUILD=${1:-build}
ATF=$BUILD/atf
ROOT=$BUILD/demo-traces
rm -rf "$ROOT"

section() {
    echo
    echo "== $*"
}

section "recording: ATF_TRACE_DIR=$ROOT $BUILD/examples/sample_traced"
echo "(sample.c compiled with -finstrument-functions, linked with atf_instrument.c)"
ATF_TRACE_DIR="$ROOT" "$BUILD/examples/sample_traced"
pid=$(ls -d "$ROOT"/session_*/pid_* | head -n 1)

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

echo
"$ATF" export --format perfetto -o "$BUILD/demo.perfetto-trace" "$pid"
"$ATF" export --format chrome -o "$BUILD/demo.json" "$pid"
echo "wrote $BUILD/demo.perfetto-trace and $BUILD/demo.json"
echo "Open $BUILD/demo.perfetto-trace (or $BUILD/demo.json) in https://ui.perfetto.dev to see every call of every thread."
