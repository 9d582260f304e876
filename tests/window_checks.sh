#!/bin/sh
# Checks of the view options of the atf command ($ATF): --from/--to, --thread, --pid,
# --function and --clock of stats, tree, export and dump, on sessions recorded by atf gen.
#   - A window must show exactly the whole trace cut to it: every command's output for
#     --from/--to equals its output for a copy of the trace that holds only the events in
#     the window, written by $BUILD/tests/cut_trace with the library alone (none of the
#     command's code). Parquet tables are compared row by row (cut_trace rows).
#   - Relative times, --thread, --pid on a session_* directory of two processes,
#     --function, bad values (exit 2), windows outside the trace (empty, exit 0).
#   - --clock wall shows every time shifted by the wall_clock_ns anchor exactly.
#   - On a large trace, a narrow window at its end: the walk goes through the window's
#     events only, reached by binary search ($BUILD/tests/window_probe counts both), and
#     the time of both runs is printed (never checked).
# Ends with the line "window: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
CUT=$BUILD/tests/cut_trace
PROBE=$BUILD/tests/window_probe
W=$BUILD/tests/window_files
OUT=$W/out
ERR=$W/err
CHECK_NAME=window
. "$(dirname "$0")/check_lib.sh"

rm -rf "$W"
mkdir -p "$W"

# same NAME A B: files A and B are equal.
same() {
    if cmp -s "$2" "$3"; then pass; else fail "$1: $2 and $3 differ"; diff "$2" "$3" | sed -n '1,6s/^/    /p'; fi
}
# err_has NAME REGEX: the last command's stderr has a line matching REGEX.
err_has() {
    if grep -Eq -- "$2" "$ERR"; then pass; else fail "$1: stderr has no line matching /$2/"; show; fi
}
# out_has NAME REGEX: the last command's stdout has a line matching REGEX.
out_has() {
    if grep -Eq -- "$2" "$OUT"; then pass; else fail "$1: stdout has no line matching /$2/"; show; fi
}
# equal NAME A B: the numbers (or words) A and B are equal.
equal() {
    if [ "$2" = "$3" ]; then pass; else fail "$1: '$2', expected '$3'"; fi
}
# ts_of FILE LINE: the "ts" of line LINE of a dump --json output.
ts_of() { sed -n "$2s/.*\"ts\":\(-\{0,1\}[0-9]*\).*/\1/p" "$1"; }

# gen_trace NAME ARGS...: a session recorded by atf gen ARGS under $W/NAME; prints its pid_*
# directory.
gen_trace() {
    gname=$1
    shift
    "$ATF" gen "$@" "$W/$gname"
}

S=$(gen_trace main --threads 3 --events 20000 --seed 11)
case "$S" in
"$W/main"/session_*/pid_*) pass ;;
*) fail "atf gen printed '$S'"; finish ;;
esac
"$ATF" dump --json "$S" >"$W/all.json"
N=$(wc -l <"$W/all.json" | tr -d ' ')
equal "events of the session" "$N" 60000
FIRST=$(ts_of "$W/all.json" 1)
LAST=$(ts_of "$W/all.json" "$N")
MAX=18446744073709551615

# ---- a window is the whole trace cut to it ------------------------------------------------
# window_same NAME FROM TO: for --from FROM --to TO (either may be "", not given), stats,
# tree, export (chrome, perfetto, folded, parquet slices and events) and dump print what
# they print for the trace cut to [FROM, TO] by cut_trace (dump and the parquet events
# table but for seq, an event's place in its own file, which the cut renumbers).
window_same() {
    wname=$1
    wfrom=$2
    wto=$3
    set --
    [ -n "$wfrom" ] && set -- "$@" --from "$wfrom"
    [ -n "$wto" ] && set -- "$@" --to "$wto"
    wdir=$W/cut_$wname
    cutp=$wdir/$(basename "$S")
    rm -rf "$wdir"
    mkdir -p "$wdir"
    if ! "$CUT" cut "$S" "$cutp" "${wfrom:-0}" "${wto:-$MAX}"; then
        fail "$wname: cut_trace"
        return
    fi
    for c in stats "stats --json" "stats --sort name" tree "tree --max-depth 2" \
             "export --format chrome" "export --format perfetto" "export --format folded"; do
        # shellcheck disable=SC2086
        expect 0 "$wname: $c (window)" "$ATF" $c "$@" "$S"
        mv "$OUT" "$W/win.out"
        # shellcheck disable=SC2086
        expect 0 "$wname: $c (cut)" "$ATF" $c "$cutp"
        same "$wname: $c" "$W/win.out" "$OUT"
    done
    for t in slices events; do
        skip=
        [ "$t" = events ] && skip=seq
        expect 0 "$wname: parquet $t (window)" "$ATF" export --format parquet --table "$t" \
            -o "$W/win.parquet" "$@" "$S"
        expect 0 "$wname: parquet $t (cut)" "$ATF" export --format parquet --table "$t" \
            -o "$W/cut.parquet" "$cutp"
        "$CUT" rows "$W/win.parquet" $skip >"$W/win.rows" && "$CUT" rows "$W/cut.parquet" $skip >"$W/cut.rows"
        same "$wname: parquet $t rows" "$W/win.rows" "$W/cut.rows"
    done
    "$ATF" dump --json "$@" "$S" | sed 's/"seq":[0-9]*,//' >"$W/win.rows"
    "$ATF" dump --json "$cutp" | sed 's/"seq":[0-9]*,//' >"$W/cut.rows"
    same "$wname: dump --json" "$W/win.rows" "$W/cut.rows"
}

A=$(ts_of "$W/all.json" 12345)
B=$(ts_of "$W/all.json" 40321)
window_same middle "$A" "$B"
window_same from_only "$A" ""
window_same to_only "" "$B"
window_same one_ns "$A" "$A"
window_same whole "$FIRST" "$LAST"
# the window's edges are taken as they are: just inside the first and last events
window_same inside $((FIRST + 1)) $((LAST - 1))

# a window outside the trace: nothing, and no error
AFTER=$((LAST + 1000))
for c in stats "stats --json" tree "export --format chrome" "dump --json"; do
    # shellcheck disable=SC2086
    expect 0 "after the end: $c" "$ATF" $c --from "$AFTER" "$S"
done
expect 0 "after the end: stats" "$ATF" stats --from "$AFTER" "$S"
out_has "after the end: stats" "^functions: 0, "
expect 0 "after the end: chrome" "$ATF" export --format chrome --from "$AFTER" "$S"
if command -v python3 >/dev/null 2>&1; then
    if python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
assert [e for e in d['traceEvents'] if e['ph'] != 'M'] == []" "$OUT" 2>"$ERR"; then pass
    else fail "after the end: chrome: not valid JSON without events"; fi
fi
expect 0 "before the start: parquet" "$ATF" export --format parquet --to $((FIRST - 1)) \
    -o "$W/empty.parquet" "$S"
"$CUT" rows "$W/empty.parquet" >"$OUT"
equal "before the start: parquet rows" "$(wc -l <"$OUT" | tr -d ' ')" 0
expect 0 "before the start: perfetto" "$ATF" export --format perfetto --to 1 -o "$W/empty.pb" "$S"

# ---- relative times ---------------------------------------------------------------------
# "+N<unit>" counts from the trace's first event, exactly, whatever the unit
"$ATF" stats --json --from $((FIRST + 1500000)) --to $((FIRST + 2250000)) "$S" >"$W/abs.json"
for spec in "+1.5ms +2.25ms" "+1500us +2250us" "+1500000ns +2250000ns" "+0.0015s +0.00225s" \
            "+1.500000ms +2250.000us"; do
    f=${spec% *}
    t=${spec#* }
    expect 0 "relative $spec" "$ATF" stats --json --from "$f" --to "$t" "$S"
    same "relative $spec" "$OUT" "$W/abs.json"
done
# with --thread too: still from the first event of the whole trace
"$ATF" stats --json --thread 2 --from $((FIRST + 100000)) "$S" >"$W/abs.json"
expect 0 "relative with --thread" "$ATF" stats --json --thread 2 --from +100us "$S"
same "relative with --thread" "$OUT" "$W/abs.json"
# dump takes them as well
"$ATF" dump --json --from $((FIRST + 7000)) --to $((FIRST + 90000)) "$S" >"$W/abs.json"
expect 0 "dump relative" "$ATF" dump --json --from +7us --to +90us "$S"
same "dump relative" "$OUT" "$W/abs.json"

# ---- --thread ---------------------------------------------------------------------------
# one thread of a session shows what its thread_N directory shows
for c in stats "stats --json" tree "export --format chrome"; do
    # shellcheck disable=SC2086
    "$ATF" $c "$S/thread_1" >"$W/thread.out"
    # shellcheck disable=SC2086
    expect 0 "--thread 1: $c" "$ATF" $c --thread 1 "$S"
    same "--thread 1: $c" "$OUT" "$W/thread.out"
done
expect 0 "--thread twice: tree" "$ATF" tree --thread 0 --thread 2 "$S"
equal "--thread twice: tree threads" "$(grep -c '^thread ' "$OUT")" 2
if grep -q '^thread 1 ' "$OUT"; then fail "--thread 0 --thread 2: thread 1 shown"; else pass; fi
expect 0 "--thread twice: stats" "$ATF" stats --json --thread 0 --thread 2 "$S"
equal "--thread twice: stats threads" "$(grep -c '^{"slot":' "$OUT")" 2
expect 0 "--thread of a thread directory: itself" "$ATF" tree --thread 1 "$S/thread_1"
expect 2 "--thread of a thread directory: another" "$ATF" tree --thread 2 "$S/thread_1"
err_has "--thread of a thread directory: another" "has no thread_2"
expect 2 "--thread missing" "$ATF" export --format chrome --thread 7 "$S"
err_has "--thread missing" "has no thread_7"
# thread names next to the slots
expect 0 "stats names threads" "$ATF" stats --json "$S"
out_has "stats names threads" '^\{"slot":1,"tid":[0-9]+,.*,"name":"gen-1"\}'
expect 0 "tree names threads" "$ATF" tree --thread 2 --to +1us "$S"
out_has "tree names threads" '^thread 2  tid [0-9]+  gen-2  '

# ---- --pid --------------------------------------------------------------------------------
S2=$(gen_trace second --threads 2 --events 3000 --seed 12)
R=$W/root/session_1
mkdir -p "$R"
cp -r "$S" "$R/pid_101"
cp -r "$S2" "$R/pid_202"
for c in stats tree "export --format chrome" "dump --json"; do
    if [ "$c" = "export --format chrome" ]; then # every process, each with its name
        expect 0 "two processes: $c" "$ATF" $c "$R"
        out_has "two processes: $c" '"name":"process_name","args":\{"name":"pid_101"\}'
        out_has "two processes: $c" '"name":"process_name","args":\{"name":"pid_202"\}'
        expect 2 "two processes: $c --thread" "$ATF" $c --thread 0 "$R"
    else
        # shellcheck disable=SC2086
        expect 2 "two processes: $c" "$ATF" $c "$R"
    fi
    err_has "two processes: $c" "^  $R/pid_202$"
    # shellcheck disable=SC2086
    "$ATF" $c "$R/pid_202" >"$W/pid.out"
    # shellcheck disable=SC2086
    expect 0 "--pid 202: $c" "$ATF" $c --pid 202 "$R"
    same "--pid 202: $c" "$OUT" "$W/pid.out"
done
expect 0 "--pid with a window" "$ATF" stats --json --pid 101 --from "$A" --to "$B" "$R"
"$ATF" stats --json --from "$A" --to "$B" "$R/pid_101" >"$W/pid.out"
same "--pid with a window" "$OUT" "$W/pid.out"
expect 2 "--pid of no process" "$ATF" stats --pid 303 "$R"
err_has "--pid of no process" "has no pid_303"
err_has "--pid of no process" "^  $R/pid_101$"
expect 0 "--pid of the pid_* PATH itself" "$ATF" stats --pid 202 "$R/pid_202"
expect 2 "--pid of another process" "$ATF" stats --pid 101 "$R/pid_202"
expect 2 "--pid not a number" "$ATF" tree --pid x "$R"

# ---- --function -------------------------------------------------------------------------
# The calls of F and what they call: every call of F is shown, and in the tree every line
# at the subtrees' root depth is F's.
"$ATF" stats --json "$S" >"$W/stats.json"
calls_of() { sed -n "s/.*\"name\":\"$2\",\"calls\":\([0-9]*\),.*/\1/p" "$1"; }
FID=$(sed -n 's/.*"fid":"\(0x[0-9a-f]*\)","name":"gen_parse".*/\1/p' "$W/stats.json")
expect 0 "--function: stats" "$ATF" stats --json --function gen_parse "$S"
equal "--function: every call of gen_parse" "$(calls_of "$OUT" gen_parse)" \
    "$(calls_of "$W/stats.json" gen_parse)"
mv "$OUT" "$W/fn.json"
expect 0 "--function by id" "$ATF" stats --json --function "$FID" "$S"
same "--function by id" "$OUT" "$W/fn.json"
for f in gen_hash gen_main gen_alloc; do
    whole=$(calls_of "$W/stats.json" $f)
    part=$(calls_of "$W/fn.json" $f)
    if [ "${part:-0}" -le "$whole" ] && [ "${part:-0}" -lt "$whole" ]; then pass
    else fail "--function gen_parse: $f has $part of its $whole calls"; fi
done
expect 0 "--function: tree" "$ATF" tree --function gen_parse "$S"
# time (16) and duration (14) columns, two spaces after each: depth 0 starts at column 35
roots=$(grep -E '^ *[0-9]+\.[0-9]{3} ' "$OUT" | grep -E '^.{34}[^ ]' |
    grep -Evc ' (\} )?gen_parse( \{)?( +\(.*\))?$')
equal "--function: tree roots are gen_parse" "$roots" 0
equal "--function: tree threads" "$(grep -c '^thread ' "$OUT")" 3
expect 0 "--function: chrome" "$ATF" export --format chrome --function gen_parse "$S"
begins=$(grep -c '"ph":"B","name":"gen_parse"' "$OUT")
equal "--function: chrome slices of gen_parse" "$begins" "$(calls_of "$W/stats.json" gen_parse)"
expect 0 "--function twice" "$ATF" stats --json --function gen_parse --function gen_hash "$S"
equal "--function twice: gen_hash" "$(calls_of "$OUT" gen_hash)" \
    "$(calls_of "$W/stats.json" gen_hash)"
expect 2 "--function unknown" "$ATF" stats --function no_such_function "$S"
err_has "--function unknown" "no function named 'no_such_function'"
expect 2 "--function on parquet events" "$ATF" export --format parquet --table events \
    --function gen_parse -o "$W/x.parquet" "$S"

# ---- bad values -------------------------------------------------------------------------
for bad in "--from x" "--from +5" "--from +s" "--from +.ms" "--from +1.5xs" "--from 1.5s" "--to +1.0000000001s" \
           "--from +18446744073709551616ns" "--from 10 --to 5" "--from +2ms --to +1ms" \
           "--from +18446744073709551615ns" "--thread x" "--thread 4294967296" "--function=" \
           "--clock="; do
    for c in stats tree "export --format chrome"; do
        # shellcheck disable=SC2086
        expect 2 "$c $bad" "$ATF" $c $bad "$S"
    done
done
expect 2 "a time without a unit" "$ATF" stats --from +5 "$S"
err_has "a time without a unit" "needs a unit"
expect 2 "--from after --to" "$ATF" tree --from 10 --to 5 "$S"
err_has "--from after --to" "is after --to"
expect 2 "stats --clock" "$ATF" stats --clock wall "$S"

# ---- --clock ------------------------------------------------------------------------------
# --clock wall: every time is the trace time plus the wall_clock_ns anchor's value - host_ns
OFF=$("$CUT" offset "$S" wall_clock_ns)
# shifted TAG A B: every line of A is the line of B with its times + OFF (ts and end lists)
shifted() {
    paste -d ' ' "$2" "$3" >"$W/pairs"
    bad=0
    while read -r x y; do
        [ "$x" = "$((y + OFF))" ] || bad=$((bad + 1))
    done <"$W/pairs"
    n=$(wc -l <"$W/pairs" | tr -d ' ')
    if [ "$bad" -eq 0 ] && [ "$n" -gt 10 ]; then pass; else fail "$1: $bad of $n times not shifted by $OFF"; fi
}
"$ATF" dump --json --to +40us "$S" >"$W/trace.json"
expect 0 "dump --clock wall" "$ATF" dump --json --clock wall --to +40us "$S"
sed 's/.*"ts":\([0-9]*\).*/\1/' "$OUT" >"$W/a"
sed 's/.*"ts":\([0-9]*\).*/\1/' "$W/trace.json" >"$W/b"
shifted "dump --clock wall" "$W/a" "$W/b"
sed 's/"ts":[0-9]*//' "$OUT" >"$W/a"
sed 's/"ts":[0-9]*//' "$W/trace.json" >"$W/b"
same "dump --clock wall: the rest" "$W/a" "$W/b"
expect 0 "dump --clock wall_clock_ns" "$ATF" dump --json --clock wall_clock_ns --to +40us "$S"
sed 's/.*"ts":\([0-9]*\).*/\1/' "$OUT" >"$W/b"
sed 's/.*"ts":\([0-9]*\).*/\1/' "$W/trace.json" >"$W/c"
shifted "dump --clock wall_clock_ns" "$W/b" "$W/c"
expect 0 "dump --clock trace" "$ATF" dump --json --clock trace --to +40us "$S"
same "dump --clock trace" "$OUT" "$W/trace.json"
# chrome: ts in microseconds with the nanoseconds as three decimals
"$ATF" export --format chrome --to +40us "$S" | sed -n 's/.*"ts":\([0-9]*\)\.\([0-9]*\),.*/\1\2/p' >"$W/b"
"$ATF" export --format chrome --clock wall --to +40us "$S" | sed -n 's/.*"ts":\([0-9]*\)\.\([0-9]*\),.*/\1\2/p' >"$W/a"
shifted "chrome --clock wall" "$W/a" "$W/b"
# parquet: start_ns and end_ns of the slices
"$ATF" export --format parquet --to +40us -o "$W/t.parquet" "$S"
"$ATF" export --format parquet --clock wall --to +40us -o "$W/w.parquet" "$S"
"$CUT" rows "$W/t.parquet" | sed 's/.*|start_ns=\([0-9]*\)|.*/\1/' >"$W/b"
"$CUT" rows "$W/w.parquet" | sed 's/.*|start_ns=\([0-9]*\)|.*/\1/' >"$W/a"
shifted "parquet --clock wall: start_ns" "$W/a" "$W/b"
"$CUT" rows "$W/t.parquet" | sed 's/.*|end_ns=\([0-9]*\)|.*/\1/' >"$W/b"
"$CUT" rows "$W/w.parquet" | sed 's/.*|end_ns=\([0-9]*\)|.*/\1/' >"$W/a"
shifted "parquet --clock wall: end_ns" "$W/a" "$W/b"
expect 0 "perfetto --clock wall" "$ATF" export --format perfetto --clock wall -o "$W/w.pb" "$S"
# tree: the time column in UTC, to the ns
first_thread=$(sed -n '1s/.*"thread":\([0-9]*\),.*/\1/p' "$W/trace.json")
t0=$(ts_of "$W/trace.json" 1)
wall=$((t0 + OFF))
expect 0 "tree --clock wall" "$ATF" tree --clock wall --thread "$first_thread" --to +40us "$S"
iso=$(date -u -d "@$((wall / 1000000000))" +%Y-%m-%dT%H:%M:%S).$(printf '%09d' $((wall % 1000000000)))Z
out_has "tree --clock wall" "^$iso "
out_has "tree --clock wall: title" "^ +time \(UTC\)  +duration_us  call$"
expect 2 "--clock of no anchor" "$ATF" tree --clock no_such_clock "$S"
err_has "--clock of no anchor" "no timing anchor named no_such_clock; its anchors: wall_clock_ns"
# other anchors: one in 1/48000 s (read in ns), one that reads the trace below its zero,
# one that is not exact (a fraction of its units)
SA=$W/anchors/$(basename "$S")
mkdir -p "$W/anchors"
cp -r "$S" "$SA"
NEG=$((LAST + 1000000000))
sed "s/\"timing_anchors\":\[/&{\"name\":\"audio\",\"host_ns\":$FIRST,\"value\":96000,\"timescale\":48000,\"rate\":48000},{\"name\":\"late\",\"host_ns\":$NEG,\"value\":0,\"timescale\":1000000000,\"rate\":1000000000},{\"name\":\"rough\",\"host_ns\":$FIRST,\"value\":1.5,\"rate\":1000},/" \
    "$S/manifest.json" >"$SA/manifest.json"
"$ATF" dump --json --to +40us "$SA" | sed 's/.*"ts":\([0-9]*\).*/\1/' >"$W/b"
expect 0 "--clock audio" "$ATF" dump --json --clock audio --to +40us "$SA"
sed 's/.*"ts":\([0-9]*\).*/\1/' "$OUT" >"$W/a"
OFF=$((2000000000 - FIRST))
shifted "--clock audio: 96000 / 48000 s at the first event" "$W/a" "$W/b"
expect 0 "--clock late" "$ATF" dump --json --clock late --to +40us "$SA"
sed 's/.*"ts":\(-\{0,1\}[0-9]*\).*/\1/' "$OUT" >"$W/a"
OFF=$((-NEG))
shifted "--clock late: negative times" "$W/a" "$W/b"
expect 0 "tree --clock late" "$ATF" tree --clock late --to +40us "$SA"
out_has "tree --clock late" "^ +time_ns \(late\)  +duration_us  call$"
out_has "tree --clock late" "^ +-[0-9]+  "
expect 2 "perfetto --clock late" "$ATF" export --format perfetto --clock late -o "$W/x.pb" "$SA"
expect 0 "chrome --clock late" "$ATF" export --format chrome --clock late "$SA"
expect 2 "--clock rough" "$ATF" dump --clock rough "$SA"
err_has "--clock rough" "is not exact"
cp "$S/thread_0/index.atf" "$W/lone.atf"
expect 2 "--clock of a lone file" "$ATF" dump --clock wall "$W/lone.atf"
err_has "--clock of a lone file" "no timing anchor named wall_clock_ns; it has none"

# ---- gaps ---------------------------------------------------------------------------------
# a window holding the whole trace shows what no window shows, gaps (events lost while
# recording) included; one after the trace shows none of them
SG=$(gen_trace gaps --threads 3 --events 20000 --ring-events 64 --overflow drop --seed 3)
"$ATF" dump --json "$SG" >"$W/gaps.json"
GF=$(ts_of "$W/gaps.json" 1)
GL=$(ts_of "$W/gaps.json" "$(wc -l <"$W/gaps.json" | tr -d ' ')")
for c in "stats --json" tree "export --format chrome" "export --format perfetto"; do
    # shellcheck disable=SC2086
    "$ATF" $c "$SG" >"$W/gaps.out"
    # shellcheck disable=SC2086
    expect 0 "gaps, whole window: $c" "$ATF" $c --from "$GF" --to "$GL" "$SG"
    same "gaps, whole window: $c" "$OUT" "$W/gaps.out"
done
expect 0 "gaps, whole trace" "$ATF" stats --json "$SG"
out_has "gaps, whole trace" '"gaps":[1-9]'
expect 0 "gaps, window after the end" "$ATF" stats --json --from $((GL + 1)) "$SG"
if grep -q '"gaps":[1-9]' "$OUT"; then fail "gaps, window after the end: a gap shown"; else pass; fi

# ---- a narrow window of a large trace -------------------------------------------------------
BIGS=$(gen_trace big --threads 4 --events 2000000 --seed 5)
BEND=0
for k in 0 1 2 3; do
    e=$("$ATF" info "$BIGS/thread_$k/index.atf" | sed -n 's/^time_last_ns: *//p')
    [ "$e" -gt "$BEND" ] && BEND=$e
done
NARROW=$((BEND - 100000))
# the times (never checked: a loaded machine makes them vary); a window after the end walks
# nothing, so it times what opening the trace costs
t1=$(date +%s%N)
"$ATF" stats "$BIGS" >/dev/null
t2=$(date +%s%N)
"$ATF" stats --from "$NARROW" "$BIGS" >/dev/null
t3=$(date +%s%N)
"$ATF" stats --from $((BEND + 1)) "$BIGS" >/dev/null
t4=$(date +%s%N)
echo "window: atf stats of $BIGS (8000000 events): whole $(((t2 - t1) / 1000000)) ms," \
     "--from \$((end - 100us)) $(((t3 - t2) / 1000000)) ms," \
     "--from \$((end + 1)) $(((t4 - t3) / 1000000)) ms"
expect 0 "probe of a narrow window" "$PROBE" "$BIGS" --from "$NARROW"
line=$(cat "$OUT")
echo "window: window_probe --from \$((end - 100us)): $line"
events=$(echo "$line" | sed 's/.*events=\([0-9]*\) .*/\1/')
window=$(echo "$line" | sed 's/.*window=\([0-9]*\) .*/\1/')
walked=$(echo "$line" | sed 's/.*walked=\([0-9]*\) .*/\1/')
probes=$(echo "$line" | sed 's/.*probes=\([0-9]*\).*/\1/')
equal "narrow window: the walk reads the window's events only" "$walked" "$window"
if [ "$walked" -gt 0 ] && [ "$((walked * 1000))" -lt "$events" ]; then pass
else fail "narrow window: $walked events walked of $events"; fi
# a binary search per thread: at most ceil(log2(2000001)) = 21 probes each
if [ "$probes" -gt 0 ] && [ "$probes" -le 84 ]; then pass
else fail "narrow window: $probes probes for 4 threads of 2000000 events"; fi
expect 0 "probe of the whole trace" "$PROBE" "$BIGS"
out_has "probe of the whole trace" "^events=8000000 window=8000000 walked=8000000 "
rm -rf "$W/big"

finish
