#!/bin/sh
# Function names survive a crash: the auto-tracer resolves names when the traced program
# exits, so a program killed by SIGKILL leaves a manifest that lists its functions by
# module and offset only. The tools name them from the module file (tools/symbolize.c):
# atf stats, atf tree and atf export show the program's own names, and atf info says how
# many the manifest listed by location only. The traced program is busy_traced (built
# with the tracer linked in), killed by its pid once its manifest lists a function.
# Linux only (where the tracer runs). Ends with "names: N passed, M failed".
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROG=$BUILD/programs/busy_traced
TMP=$BUILD/tests/names_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=names
. "$(dirname "$0")/check_lib.sh"

rm -rf "$TMP"
mkdir -p "$TMP"
if [ "$(uname -s)" != Linux ] || [ ! -x "$PROG" ]; then
    echo "names: skipped (needs Linux and $PROG)"
    finish
fi

# one busy thread for far longer than the checks wait
ATF_TRACE_DIR="$TMP/traces" ATF_TRACE_QUIET=1 "$PROG" 1 100000000 >/dev/null 2>&1 &
pid=$!
manifest=
tries=0
while [ $tries -lt 300 ]; do  # at most about 30 s for a function listed by location
    manifest=$(ls "$TMP"/traces/session_*/pid_"$pid"/manifest.json 2>/dev/null | head -n 1)
    [ -n "$manifest" ] && grep -q '"offset"' "$manifest" && break
    sleep 0.1
    tries=$((tries + 1))
done
sleep 1  # every function is called within microseconds; the manifest follows in 100 ms
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ -z "$manifest" ] || ! grep -q '"offset"' "$manifest"; then
    fail "the killed program's manifest lists no function by location"
    finish
fi
pass
dir=$(dirname "$manifest")
check "the killed program's manifest has no names" sh -c "! grep -q '\"name\":\"fib\"' '$manifest'"
expect 0 "recover the killed session" "$ATF" recover "$dir"

# stats: the names from the module file, no id left for the program's own functions
expect 0 "stats of the killed session" "$ATF" stats --json "$dir"
for f in main worker fib; do
    check "stats names $f" grep -q "\"name\":\"$f\"" "$OUT"
done
check "stats shows no bare id" sh -c "! grep -q '\"name\":\"0x' '$OUT'"
check "stats says nothing on stderr" test ! -s "$ERR"

# tree and the exports name them the same way
expect 0 "tree of the killed session" "$ATF" tree --max-depth 3 "$dir"
check "tree names worker" grep -q "worker" "$OUT"
expect 0 "chrome export of the killed session" "$ATF" export --format chrome -o "$TMP/k.json" "$dir"
check "chrome export names fib" grep -q '"name":"fib"' "$TMP/k.json"

# atf record finishes what a killed program left: recovered once it is gone, then named
"$ATF" record --output "$TMP/rec" -- "$PROG" 1 100000000 >/dev/null 2>"$TMP/rec_err" &
rec=$!
kpid=
tries=0
while [ $tries -lt 300 ]; do
    m=$(ls "$TMP"/rec/session_*/pid_*/manifest.json 2>/dev/null | head -n 1)
    if [ -n "$m" ] && grep -q '"offset"' "$m"; then
        kpid=$(basename "$(dirname "$m")" | sed 's/^pid_//')
        break
    fi
    sleep 0.1
    tries=$((tries + 1))
done
sleep 1
[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null
wait "$rec"
status=$?
if [ "$status" = 137 ]; then pass; else fail "record of a killed program: exit $status, expected 137"; fi
check "record says it recovered the killed process" grep -q "ended without closing its trace.*recovered" "$TMP/rec_err"
check "record's summary counts events" grep -qE "^atf record: 1 process, 2 threads, [1-9][0-9]* events" "$TMP/rec_err"
rdir=$(ls -d "$TMP"/rec/session_*/pid_* 2>/dev/null | head -n 1)
expect 0 "verify --strict after record recovered it" "$ATF" verify --strict "$rdir"
expect 0 "stats after record recovered it" "$ATF" stats --json "$rdir"
check "stats names fib after record recovered it" grep -q '"name":"fib"' "$OUT"

# info: how many the manifest gave by location only
expect 0 "info of the killed session" "$ATF" info --json "$dir"
check "info counts functions by location only" sh -c "! grep -q '\"symbols_by_location_only\":0,' '$OUT'"
finish
