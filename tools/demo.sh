#!/bin/sh
# make demo: traces the multi-threaded sample program with the auto-tracer
# (examples/instrument/), then looks at the session with the atf command and the query
# example, and writes it for ui.perfetto.dev. Subcommands this build of atf does not have
# are skipped: each runs as soon as `atf help` lists it.
set -e
BUILD=${1:-build}
ATF=$BUILD/atf
ROOT=$BUILD/demo-traces
rm -rf "$ROOT"

# has COMMAND: the atf command offers COMMAND
has() { "$ATF" help 2>/dev/null | grep -Eq "^ +$1 "; }
section() {
    echo
    echo "== $*"
}

section "recording: ATF_TRACE_DIR=$ROOT $BUILD/examples/sample_traced"
echo "(sample.c compiled with -finstrument-functions, linked with atf_instrument.c)"
ATF_TRACE_DIR="$ROOT" "$BUILD/examples/sample_traced"
pid=$(ls -d "$ROOT"/session_*/pid_* | head -n 1)

if "$ATF" info "$pid" >/dev/null 2>&1; then
    section "atf info $pid"
    "$ATF" info "$pid"
else
    section "atf info $pid/thread_1"
    "$ATF" info "$pid/thread_1"
fi

section "atf verify --strict (every thread)"
for t in "$pid"/thread_*; do "$ATF" verify --strict "$t"; done

if has stats; then
    section "atf stats $pid (top)"
    "$ATF" stats "$pid" --limit 10 | head -n 30
fi

if has tree; then
    section "atf tree $pid --thread 1 --max-depth 3 (a slice)"
    "$ATF" tree "$pid" --thread 1 --max-depth 3 | head -n 24
    echo "..."
fi

section "$BUILD/examples/query $pid"
"$BUILD/examples/query" "$pid"

echo
if has export; then
    "$ATF" export --format perfetto -o "$BUILD/demo.perfetto-trace" "$pid"
    "$ATF" export --format chrome -o "$BUILD/demo.json" "$pid"
    echo "wrote $BUILD/demo.perfetto-trace and $BUILD/demo.json"
    echo "Open $BUILD/demo.perfetto-trace (or $BUILD/demo.json) in https://ui.perfetto.dev to see every call of every thread."
else
    echo "This build of atf has no export command yet: once it has, make demo writes"
    echo "$BUILD/demo.perfetto-trace and $BUILD/demo.json to open in https://ui.perfetto.dev."
fi
