#!/bin/sh
# make demo: records a small session with the hello example, then inspects, verifies and
# dumps it with the atf command.
set -e
BUILD=${1:-build}
ROOT="$BUILD/demo-traces"
rm -rf "$ROOT"
echo "== recording with $BUILD/examples/hello"
"$BUILD/examples/hello" "$ROOT"
thread=$(ls -d "$ROOT"/session_*/pid_*/thread_0 | head -n 1)
echo
echo "== atf info $thread"
"$BUILD/atf" info "$thread"
echo
echo "== atf verify --strict $thread"
"$BUILD/atf" verify --strict "$thread"
echo
echo "== atf dump --json $thread"
"$BUILD/atf" dump --json "$thread"
