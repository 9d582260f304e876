#!/bin/sh
# Runs the examples and checks what they record: hello, the auto-tracer on the sample
# program (every thread present, files that verify --strict, names of static and extern
# functions in the manifest), the query program on that session, the auto-tracer on the
# busy program (one CPU-bound thread per core: not one event lost, and as many calls per
# function in the trace as the program counted), ATF_TRACE_OVERFLOW, the auto-tracer
# built with clang, ATF_TRACE=0, and a process that exits while its threads still run.
# Ends with the line "examples: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
CC=${CC:-cc}
# what programs linked with the build's objects need (make sanitize adds its runtimes)
LDLIBS_ALL=${LDLIBS_ALL:--lpthread}
EX=$BUILD/examples
PROGS=$BUILD/programs
TMP=$BUILD/tests/examples_check
OUT=$TMP/out
ERR=$TMP/err
WORKERS=4
CHECK_NAME=examples
. "$(dirname "$0")/check_lib.sh"
# run NAME CMD...: runs CMD (stdout in $OUT, stderr in $ERR); passes on exit status 0.
run() {
    name=$1
    shift
    if "$@" >"$OUT" 2>"$ERR"; then pass; else fail "$name: exit status $?"; show; fi
}
# the single pid_* directory under root $1, or nothing
pid_dir() { ls -d "$1"/session_*/pid_* 2>/dev/null | head -n 1; }

# verify_session NAME DIR THREADS: DIR has THREADS thread directories, each with events,
# each passing atf verify --strict, and a manifest listing them all.
verify_session() {
    name=$1
    dir=$2
    want=$3
    n=$(ls -d "$dir"/thread_* 2>/dev/null | wc -l | tr -d ' ')
    if [ "$n" -eq "$want" ]; then pass; else fail "$name: $n thread directories, expected $want"; fi
    for t in "$dir"/thread_*; do
        [ -d "$t" ] || continue
        if "$ATF" verify --strict "$t" >"$OUT" 2>"$ERR"; then pass; else fail "$name: verify --strict $t"; show; fi
        count=$("$ATF" info "$t/index.atf" 2>/dev/null | sed -n 's/^events: *\([0-9]*\).*/\1/p')
        if [ "${count:-0}" -gt 0 ]; then pass; else fail "$name: $t has no events"; fi
    done
    m=$(grep -o '"has_detail"' "$dir/manifest.json" 2>/dev/null | wc -l | tr -d ' ')
    if [ "$m" -eq "$want" ]; then pass; else fail "$name: manifest lists $m threads, expected $want"; fi
    check "$name: manifest state closed" grep -q '"state": *"closed"' "$dir/manifest.json"
}

# check_names NAME DIR: the manifest names static and extern functions of sample.c.
check_names() {
    for f in main worker fib partition is_prime swap_u32; do
        check "$1: manifest names $f" grep -q "\"name\": *\"$f\"" "$2/manifest.json"
    done
}

rm -rf "$TMP"
mkdir -p "$TMP"

# ---- hello --------------------------------------------------------------------------
run "hello" "$EX/hello" "$TMP/hello"
check "hello: prints the calls" grep -q "greet" "$OUT"
d=$(pid_dir "$TMP/hello")
if [ -n "$d" ]; then verify_session "hello" "$d" 1; else fail "hello: no session directory"; fi

# ---- the auto-tracer on the sample --------------------------------------------------
run "sample (plain)" "$EX/sample"
cp "$OUT" "$TMP/sample.plain"
run "sample_traced" env ATF_TRACE_DIR="$TMP/traces" "$EX/sample_traced"
check "sample_traced: same output as the plain build" cmp "$OUT" "$TMP/sample.plain"
check "sample_traced: summary line on stderr" grep -q "traced into" "$ERR"
d=$(pid_dir "$TMP/traces")
if [ -z "$d" ]; then
    fail "sample_traced: no session directory under $TMP/traces"
    finish
fi
verify_session "sample_traced" "$d" $((WORKERS + 1))
check_names "sample_traced" "$d"
check "sample_traced: module 0 is the executable" grep -q '"path": *"[^"]*sample_traced"' "$d/manifest.json"
check "sample_traced: no events dropped" grep -q '"events_dropped": *0,' "$d/manifest.json"

# ---- query ----------------------------------------------------------------------------
run "query" "$EX/query" "$d"
rows=$(grep -cE '^ *[0-9]+ +[0-9.]+ +[0-9.]+% ' "$OUT")
if [ "$rows" -eq 10 ]; then pass; else fail "query: $rows ranked lines, expected 10"; show; fi
check "query: fib is among them" grep -qE '^ *[0-9]+ .* fib$' "$OUT"
check "query: counts every call of fib" grep -qE ' 30250 +[0-9.]+ +fib$' "$OUT"
run "query: usage error" sh -c "! '$EX/query'"
expect 2 "query: a second path is not a count" "$EX/query" "$d" "$d"
check "query: a second path is not a count: said" grep -q "COUNT '.*' is not a number" "$ERR"

# ---- busy: every core busy, every call recorded ----------------------------------------
# calls_from_stats FILE: "busy: NAME CALLS" per function of an `atf stats --json` output,
# sorted: the lines the busy program prints for its own counts.
calls_from_stats() {
    sed -n 's/^{"fid":"[^"]*","name":"\([^"]*\)","calls":\([0-9]*\),.*/busy: \1 \2/p' "$1" | LC_ALL=C sort
}
# the program's own counts, sorted the same way
calls_from_program() { grep -E '^busy: [a-z_]+ [0-9]+$' "$1" | grep -v '^busy: total ' | LC_ALL=C sort; }

threads=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
[ "$threads" -le 8 ] || threads=8   # ~160 MB of trace per thread
run "busy (plain)" "$PROGS/busy" "$threads"
cp "$OUT" "$TMP/busy.plain"
run "busy_traced" env ATF_TRACE_DIR="$TMP/busy" "$PROGS/busy_traced" "$threads"
check "busy_traced: same output as the plain build" cmp "$OUT" "$TMP/busy.plain"
check "busy_traced: summary says 0 lost" grep -q "events recorded, 0 lost\$" "$ERR"
d=$(pid_dir "$TMP/busy")
if [ -n "$d" ]; then
    verify_session "busy_traced" "$d" $((threads + 1))
    check "busy_traced: no events dropped" sh -c "! grep -qE '\"events_dropped\": *[1-9]' '$d/manifest.json'"
    check "busy_traced: no events lost to I/O" sh -c "! grep -qE '\"events_lost_io\": *[1-9]' '$d/manifest.json'"
    g=$(find "$d" -name gaps.atf | wc -l | tr -d ' ')
    if [ "$g" -eq 0 ]; then pass; else fail "busy_traced: $g gaps.atf files"; fi
    if "$ATF" stats --json "$d" >"$TMP/busy.stats" 2>"$ERR"; then
        calls_from_stats "$TMP/busy.stats" >"$TMP/busy.trace_calls"
        calls_from_program "$TMP/busy.plain" >"$TMP/busy.program_calls"
        n=$(wc -l <"$TMP/busy.program_calls" | tr -d ' ')
        if [ "$n" -ge 8 ] && cmp -s "$TMP/busy.trace_calls" "$TMP/busy.program_calls"; then
            pass
            rm -rf "$TMP/busy" "$TMP/busy.stats"   # the trace is large; kept on failure
        else
            fail "busy_traced: calls per function in the trace differ from the program's"
            diff "$TMP/busy.program_calls" "$TMP/busy.trace_calls" | sed -n '1,12s/^/    /p'
        fi
    else
        fail "busy_traced: atf stats --json $d"
        show
    fi
else
    fail "busy_traced: no session directory under $TMP/busy"
fi

# ATF_TRACE_OVERFLOW=drop with a small ring: losses counted and recorded as gaps, and
# recorded + lost = every event the program made (two per call it counted).
run "busy_traced, drop" env ATF_TRACE_DIR="$TMP/drop" ATF_TRACE_OVERFLOW=drop \
    ATF_TRACE_RING_EVENTS=1024 "$PROGS/busy_traced" 1 20
total=$(sed -n 's/^busy: total \([0-9]*\)$/\1/p' "$OUT")
summary='.* \([0-9]*\) events recorded, \([0-9]*\) lost in \([0-9]*\) gap(s)$'
recorded=$(sed -n "s/$summary/\\1/p" "$ERR")
lost=$(sed -n "s/$summary/\\2/p" "$ERR")
gaps=$(sed -n "s/$summary/\\3/p" "$ERR")
if [ -n "$total" ] && [ -n "$recorded" ] && [ "${lost:-0}" -gt 0 ] && [ "${gaps:-0}" -gt 0 ] &&
   [ $((recorded + lost)) -eq $((2 * total)) ]; then
    pass
else
    fail "busy_traced, drop: summary '$(cat "$ERR")', program total ${total:-?} calls"
fi
d=$(pid_dir "$TMP/drop")
g=$(find "$d" -name gaps.atf 2>/dev/null | wc -l | tr -d ' ')
if [ "$g" -ge 1 ]; then pass; else fail "busy_traced, drop: no gaps.atf"; fi
check "busy_traced, drop: manifest counts the drops" grep -qE '"events_dropped": *[1-9]' "$d/manifest.json"

# an unknown ATF_TRACE_OVERFLOW: said on stderr, and the default (block) is used
run "busy_traced, ATF_TRACE_OVERFLOW=bogus" env ATF_TRACE_DIR="$TMP/bogus" ATF_TRACE_OVERFLOW=bogus \
    ATF_TRACE_RING_EVENTS=1024 "$PROGS/busy_traced" 1 5
check "ATF_TRACE_OVERFLOW=bogus: message on stderr" grep -q "ATF_TRACE_OVERFLOW=bogus" "$ERR"
check "ATF_TRACE_OVERFLOW=bogus: nothing lost (block)" grep -q "events recorded, 0 lost\$" "$ERR"

# ---- ATF_TRACE=0 --------------------------------------------------------------------
run "sample_traced with ATF_TRACE=0" env ATF_TRACE=0 ATF_TRACE_DIR="$TMP/off" "$EX/sample_traced"
check "ATF_TRACE=0 records nothing" test ! -e "$TMP/off"

# ---- exit while threads run, fork, a thread that exits early --------------------------
obj=$BUILD/obj/atf_instrument.o
if $CC -std=c99 -O2 -g -D_GNU_SOURCE -finstrument-functions -o "$TMP/instrument_exit" \
        tests/instrument_exit.c "$obj" -ldl $LDLIBS_ALL >"$OUT" 2>"$ERR"; then
    pass
    # under the sanitizers without the fork (ASan's allocator after fork: see
    # instrument_checks.sh): then the parent's pid directory alone
    if [ -n "${ATF_CHECKS_SANITIZED:-}" ]; then how=nofork pids=1; else how=fork pids=2; fi
    run "exit with threads running ($how)" env ATF_TRACE_DIR="$TMP/exit" "$TMP/instrument_exit" $how
    n=$(ls -d "$TMP/exit"/session_*/pid_* 2>/dev/null | wc -l | tr -d ' ')
    if [ "$n" -eq "$pids" ]; then pass; else fail "exit: $n pid directories, expected $pids (the parent's, and the forked child's unless nofork)"; fi
    # both are closed (the child ends with _exit, which the tracer finalizes too); the
    # parent's is the one with more than one thread
    check "exit: every manifest closed" sh -c "for m in '$TMP/exit'/session_*/pid_*/manifest.json; do grep -q '\"state\": *\"closed\"' \"\$m\" || exit 1; done"
    d=
    for p in "$TMP/exit"/session_*/pid_*; do
        [ "$(ls -d "$p"/thread_* 2>/dev/null | wc -l)" -gt 1 ] && d=$p
    done
    if [ -n "$d" ]; then verify_session "exit with threads running" "$d" 5; else fail "exit: no pid directory with the parent's threads"; fi
else
    fail "build instrument_exit"
    show
fi

# ---- the auto-tracer built with clang -----------------------------------------------
if command -v clang >/dev/null 2>&1 && [ "$(basename "$CC")" != clang ]; then
    flags="-std=c99 -O2 -g -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -D_GNU_SOURCE -I."
    if clang $flags -c -o "$TMP/ai_clang.o" tools/instrument/atf_instrument.c >"$OUT" 2>"$ERR" &&
       clang $flags -finstrument-functions -c -o "$TMP/sample_clang.o" examples/sample.c >"$OUT" 2>"$ERR" &&
       clang -o "$TMP/sample_clang" "$TMP/sample_clang.o" "$TMP/ai_clang.o" -ldl -lpthread >"$OUT" 2>"$ERR"; then
        pass
        run "sample_traced (clang)" env ATF_TRACE_DIR="$TMP/clang" "$TMP/sample_clang"
        d=$(pid_dir "$TMP/clang")
        if [ -n "$d" ]; then
            verify_session "clang" "$d" $((WORKERS + 1))
            check_names "clang" "$d"
        else
            fail "clang: no session directory"
        fi
    else
        fail "build the sample with clang"
        show
    fi
fi

finish
