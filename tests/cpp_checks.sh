#!/bin/sh
# Checks the auto-tracer on C++ exceptions: tests/programs/cpp_exceptions.cpp (threads,
# recursion, exceptions thrown through instrumented frames and caught at a known place, a
# rethrow, an exception thrown and caught inside a destructor while another passes, one
# rethrown in another thread) counts the frames its exceptions leave; its trace must hold
# exactly that many exception events, of those functions only, and the catching frame's
# exits must be returns. Preloaded by `atf record` (the exit status passes through),
# linked in, loaded by a C program with dlopen(RTLD_LOCAL) (cpp_host.c), built by clang++ (whose exit hooks do not run while unwinding: the frames are
# closed at the catch) when there is one, and with filters. Every view says it: atf tree
# "(exception)", Parquet ended_by "exception", the Chrome and Perfetto argument "exception".
# Ends with the line "cpp: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROGS=$BUILD/programs
SO=$BUILD/libatf_instrument.so
COUNT=$BUILD/tests/parquet_count
TMP=$BUILD/tests/cpp_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=cpp
. "$(dirname "$0")/check_lib.sh"
THREADS=4
ROUNDS=250

rm -rf "$TMP"
mkdir -p "$TMP"

# what the program counted: "cpp_exceptions: 4 threads, C caught, R rethrown, N nested,
# L frames left by exceptions"
counted() { sed -n "s/^cpp_exceptions: .* \([0-9][0-9]*\) $1.*/\1/p" "$OUT"; }
# the session directory `atf record` reported in $ERR
session_of() { sed -n 's/^atf record: session //p' "$ERR" | head -n 1; }
# equal NAME FOUND EXPECTED
equal() {
    if [ "$2" = "$3" ]; then pass; else fail "$1: $2, expected $3"; fi
}
# exceptions NAME PID_DIR LEFT: LEFT exception events, of the functions an exception may
# leave only; the catching frame (guarded) returns every time; every view marks them.
exceptions() {
    name=$1 p=$2 left=$3
    if "$ATF" verify --strict "$p" >/dev/null 2>&1; then pass; else fail "$name: verify --strict"; fi
    "$ATF" dump "$p" >"$TMP/dump" 2>"$ERR" || fail "$name: atf dump"
    grep ' exception ' "$TMP/dump" >"$TMP/exc"
    equal "$name: exception events" "$(wc -l <"$TMP/exc" | tr -d ' ')" "$left"
    equal "$name: exception events of other functions" \
        "$(grep -cv 'dive\|relay\|replay' "$TMP/exc")" 0
    equal "$name: exception events of the nested exceptions (3 frames each)" \
        "$(grep -c quiet_dive "$TMP/exc")" $((3 * $(counted nested)))
    equal "$name: exception events of replay (one per thread)" \
        "$(grep -c replay "$TMP/exc")" $THREADS
    equal "$name: returns of the catching frame" \
        "$(grep ' return ' "$TMP/dump" | grep -c guarded)" $((THREADS * ROUNDS))
    "$ATF" tree "$p" >"$TMP/tree" 2>"$ERR" || fail "$name: atf tree"
    equal "$name: tree marks (exception)" "$(grep -c '(exception)$' "$TMP/tree")" "$left"
    equal "$name: tree marks nothing unwound" "$(grep -c '(unwound)$' "$TMP/tree")" 0
    if "$ATF" export --format parquet -o "$TMP/slices.parquet" "$p" 2>"$ERR"; then
        equal "$name: parquet ended_by exception" \
            "$("$COUNT" "$TMP/slices.parquet" ended_by exception)" "$left"
    else fail "$name: export parquet"; fi
    if "$ATF" export --format chrome -o "$TMP/trace.json" "$p" 2>"$ERR"; then
        equal "$name: chrome args exception" \
            "$(grep -o '"ph":"E","args":{"exception":true}}' "$TMP/trace.json" | wc -l | tr -d ' ')" "$left"
    else fail "$name: export chrome"; fi
    # the annotation's name, its length byte first (a function's name is interned once)
    if "$ATF" export --format perfetto -o "$TMP/trace.pftrace" "$p" 2>"$ERR"; then
        equal "$name: perfetto annotations exception" \
            "$(LC_ALL=C grep -a -o -P '\x09exception' "$TMP/trace.pftrace" | wc -l | tr -d ' ')" "$left"
    else fail "$name: export perfetto"; fi
}

# ---- the tracer library -------------------------------------------------------------------
for f in _Unwind_RaiseException _Unwind_Resume_or_Rethrow __cxa_begin_catch; do
    check "libatf_instrument.so interposes $f (weak)" sh -c "nm -D --defined-only '$SO' | grep -q ' W $f\$'"
done

# ---- preloaded by atf record --------------------------------------------------------------
"$PROGS/cpp_exceptions_hooked" $THREADS $ROUNDS >"$TMP/plain" 2>/dev/null
expect 3 "record cpp_exceptions: exit status passed through" \
    timeout 120 "$ATF" record --output "$TMP/rec" -- "$PROGS/cpp_exceptions_hooked" $THREADS $ROUNDS
check "record cpp_exceptions: same output as untraced" cmp "$OUT" "$TMP/plain"
left=$(counted frames)
[ -n "$left" ] && [ "$left" -gt 0 ] && pass || { fail "record cpp_exceptions: no count printed"; show; }
exceptions "record cpp_exceptions" "$(ls -d "$(session_of)"/pid_* | head -n 1)" "$left"

# ---- linked with the tracer ---------------------------------------------------------------
expect 3 "cpp_exceptions_traced" env ATF_TRACE_DIR="$TMP/linked" ATF_TRACE_QUIET=1 \
    timeout 120 "$PROGS/cpp_exceptions_traced" $THREADS $ROUNDS
check "cpp_exceptions_traced: same output as untraced" cmp "$OUT" "$TMP/plain"
exceptions "cpp_exceptions_traced" "$(ls -d "$TMP/linked"/session_*/pid_* | head -n 1)" "$left"

# preloaded into it as well: the preloaded copy stays off and only passes the calls on
expect 3 "record cpp_exceptions_traced" timeout 120 "$ATF" record --output "$TMP/both" -- \
    "$PROGS/cpp_exceptions_traced" $THREADS $ROUNDS
n=$(ls -d "$TMP/both"/session_*/pid_* 2>/dev/null | wc -l | tr -d ' ')
equal "record cpp_exceptions_traced: pid_* directories" "$n" 1
"$ATF" dump "$(ls -d "$TMP/both"/session_*/pid_* | head -n 1)" >"$TMP/dump" 2>"$ERR"
equal "record cpp_exceptions_traced: exception events" "$(grep -c ' exception ' "$TMP/dump")" "$left"

# ---- filters: the depth counts the functions kept -----------------------------------------
# relay (left every time) and guarded (never): the frames between them are not recorded
expect 3 "record --filter relay,guarded" timeout 120 "$ATF" record --output "$TMP/filter" \
    --filter '*relay*,*guarded*' -- "$PROGS/cpp_exceptions_hooked" $THREADS $ROUNDS
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
"$ATF" dump "$p" >"$TMP/dump" 2>"$ERR"
equal "record --filter relay,guarded: exception events of relay" \
    "$(grep ' exception ' "$TMP/dump" | grep -c relay)" $((THREADS * ROUNDS))
equal "record --filter relay,guarded: exception events of guarded" \
    "$(grep ' exception ' "$TMP/dump" | grep -c guarded)" 0
equal "record --filter relay,guarded: returns of guarded" \
    "$(grep ' return ' "$TMP/dump" | grep -c guarded)" $((THREADS * ROUNDS))

# --min-duration: the calls kept end as recorded, exceptions too, and every call pairs
expect 3 "record --min-duration" timeout 120 "$ATF" record --output "$TMP/min" --min-duration 2us \
    -- "$PROGS/cpp_exceptions_hooked" $THREADS $ROUNDS
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
if "$ATF" verify --strict "$p" >/dev/null 2>&1; then pass; else fail "record --min-duration: verify --strict"; fi
"$ATF" dump "$p" >"$TMP/dump" 2>"$ERR"
equal "record --min-duration: exception events of guarded" \
    "$(grep ' exception ' "$TMP/dump" | grep -c guarded)" 0
check "record --min-duration: exception events kept" grep -q ' exception ' "$TMP/dump"
"$ATF" stats "$p" >"$TMP/stats" 2>"$ERR"
check "record --min-duration: every call paired" sh -c "! grep -q '^unbalanced input' '$TMP/stats'"

# ---- a C program that loads C++ code with dlopen(RTLD_LOCAL) -----------------------------
# its C++ runtime is out of the global scope, where RTLD_NEXT does not look: the interposed
# catch finds the runtime's through the loaded library (each round: 4 frames of deep left)
expect 0 "record cpp_host" timeout 60 "$ATF" record --output "$TMP/host" -- \
    "$PROGS/cpp_host" "$(cd "$PROGS" && pwd)/libcpp_plugin.so" 50
check "record cpp_host: its output" grep -qx "cpp_host: 50 rounds, sum 350" "$OUT"
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
if "$ATF" verify --strict "$p" >/dev/null 2>&1; then pass; else fail "record cpp_host: verify --strict"; fi
"$ATF" dump "$p" >"$TMP/dump" 2>"$ERR"
equal "record cpp_host: exception events of deep" "$(grep ' exception ' "$TMP/dump" | grep -c deep)" 200
equal "record cpp_host: other exception events" "$(grep ' exception ' "$TMP/dump" | grep -vc deep)" 0
equal "record cpp_host: returns of plugin_run" "$(grep ' return ' "$TMP/dump" | grep -c plugin_run)" 50

# ---- built by clang++ ---------------------------------------------------------------------
if command -v clang++ >/dev/null 2>&1 &&
   clang++ -std=c++17 -O2 -g -pthread -finstrument-functions -o "$TMP/cpp_exceptions_clang" \
       "$(dirname "$0")/programs/cpp_exceptions.cpp" 2>"$ERR"; then
    expect 3 "record cpp_exceptions (clang++)" timeout 120 "$ATF" record --output "$TMP/clang" \
        -- "$TMP/cpp_exceptions_clang" $THREADS $ROUNDS
    exceptions "record cpp_exceptions (clang++)" "$(ls -d "$(session_of)"/pid_* | head -n 1)" "$(counted frames)"
else
    echo "cpp: no clang++: its build left out"
fi

rm -rf "$TMP/rec" "$TMP/linked" "$TMP/both" "$TMP/filter" "$TMP/min" "$TMP/host" "$TMP/clang"
finish
