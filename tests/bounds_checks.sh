#!/bin/sh
# Checks the bounds of `atf record` on a real program with threads (busy_hooked: two
# threads counting their own calls, built with -finstrument-functions, no tracer linked):
# --max-size (both layouts: the session directory within SIZE + 1 % + 1 MiB), --duration
# (the trace spans TIME within 5 %) and the disk guard (on a small tmpfs in a mount
# namespace of its own: a reserve given, and the default one). Each leaves the program's
# output and exit status as without the tracer, a trace that verifies and is cut at one
# stamp for every thread, and says which bound stopped it (summary, manifest, atf info).
# Then recording switched off and on by a signal (--start-paused, --toggle-signal) on a
# program that signals itself at known points, the flight recorder (--keep-last SIZE and
# TIME, its snapshot signal), a SIGKILL in each mode, and the SIZE and TIME values the
# options take and refuse.
# Ends with the line "record-bounds: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROGS=$BUILD/programs
TMP=$BUILD/tests/bounds_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=record-bounds
. "$(dirname "$0")/check_lib.sh"

rm -rf "$TMP"
mkdir -p "$TMP"
BUSY="$PROGS/busy_hooked"
"$PROGS/busy" 2 250 >"$TMP/busy.plain" 2>/dev/null

# json_num KEY FILE: the first number under "KEY" in FILE
json_num() { sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" "$2" | head -n 1; }
# the session directory `atf record` reported in $ERR
session_of() { sed -n 's/^atf record: session //p' "$ERR" | head -n 1; }
# at_most NAME A B: passes when A <= B
at_most() {
    if [ -n "$2" ] && [ -n "$3" ] && [ "$2" -le "$3" ]; then pass; else fail "$1: $2 > $3"; fi
}
# cut_checks NAME PID_DIR REASON: verifies, says REASON in atf info, and every thread's
# last event lies before the stamp where recording stopped
cut_checks() {
    expect 0 "$1: verify" "$ATF" verify "$2"
    "$ATF" info --json "$2" >"$TMP/info" 2>/dev/null
    check "$1: atf info says \"$3\"" grep -q "\"stopped\":\"$3\"" "$TMP/info"
    at=$(json_num stopped_at_ns "$TMP/info")
    "$ATF" stats --json "$2" >"$TMP/stats" 2>/dev/null
    for end in $(sed -n 's/.*"end_ns":\([0-9]*\).*/\1/p' "$TMP/stats"); do
        at_most "$1: a thread's last event before the cut" "$end" "$at"
    done
    n=$(sed -n 's/.*"events_not_recorded":\([0-9]*\).*/\1/p' "$TMP/stats" | awk '{ s += $1 } END { print s + 0 }')
    if [ "$n" -gt 0 ]; then pass; else fail "$1: no event counted as not recorded"; fi
}

# ---- --max-size ---------------------------------------------------------------------------
for layout in packed 1; do
    label="max-size 1M (layout $layout)"
    expect 0 "$label" "$ATF" record --layout $layout --max-size 1M --output "$TMP/max_$layout" -- "$BUSY" 2 250
    check "$label: the program's output" cmp "$OUT" "$TMP/busy.plain"
    check "$label: the summary says so" grep -q '^atf record: stopped at the max size, ' "$ERR"
    s=$(session_of)
    at_most "$label: du -sb of the session" "$(du -sb "$s" | cut -f1)" $((1048576 + 10486 + 1048576))
    cut_checks "$label" "$(ls -d "$s"/pid_* | head -n 1)" "max size"
done

# ---- --duration -----------------------------------------------------------------------------
label="duration 1s"
"$PROGS/busy" 2 1500 >"$TMP/busy1500.plain" 2>/dev/null
"$PROGS/busy" 2 4000 >"$TMP/busy4000.plain" 2>/dev/null
expect 0 "$label" "$ATF" record --duration 1s --output "$TMP/duration" -- "$BUSY" 2 4000
check "$label: the program's output" cmp "$OUT" "$TMP/busy4000.plain"
check "$label: the summary says so" grep -q '^atf record: stopped at the duration, ' "$ERR"
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
cut_checks "$label" "$p" "duration"
span=$(( $(json_num time_end_ns "$TMP/info") - $(json_num time_start_ns "$TMP/info") ))
at_most "$label: the trace spans at least 95 % of it" 950000000 "$span"
at_most "$label: the trace spans at most 105 % of it" "$span" 1050000000

# ---- the disk guard ---------------------------------------------------------------------------
# disk_run NAME OPTIONS: records busy on a 16 MiB tmpfs (a mount namespace of its own:
# nothing stays mounted); its stdout, stderr and status, the trace's verify status, its
# atf info --json and the tmpfs's free bytes at the end are left in $TMP/disk.*
disk=$(cd "$TMP" && pwd -P)/disk
mkdir -p "$disk"
disk_run() {
    rm -f "$TMP"/disk.*
    unshare $how sh -c "mount -t tmpfs -o size=16m tmpfs '$disk' || exit 99
        '$ATF' record $2 --output '$disk' -- '$BUSY' 2 250 >'$TMP/disk.out' 2>'$TMP/disk.err'
        echo \$? >'$TMP/disk.status'
        p=\$(ls -d '$disk'/session_*/pid_* | head -n 1)
        '$ATF' verify \"\$p\" >'$TMP/disk.verify' 2>&1
        echo \$? >>'$TMP/disk.status'
        '$ATF' info --json \"\$p\" >'$TMP/disk.info' 2>&1
        df -B1 --output=avail '$disk' | tail -n 1 >'$TMP/disk.avail'"
    check "$1: the program's output" cmp "$TMP/disk.out" "$TMP/busy.plain"
    check "$1: the program's status, then verify's" sh -c "[ \"\$(tr '\n' ' ' <'$TMP/disk.status')\" = '0 0 ' ]"
    check "$1: the summary says so" grep -q '^atf record: stopped at the disk reserve, ' "$TMP/disk.err"
    check "$1: atf info says so" grep -q '"stopped":"disk reserve"' "$TMP/disk.info"
}
if unshare -m sh -c "mount -t tmpfs -o size=1m tmpfs '$disk'" 2>/dev/null ||
   unshare -rm sh -c "mount -t tmpfs -o size=1m tmpfs '$disk'" 2>/dev/null; then
    how=-m
    unshare -m true 2>/dev/null || how=-rm
    disk_run "disk reserve 12M" "--disk-reserve 12M"
    # the reserve kept, but for the slack the threads' events before the cut may take
    at_most "disk reserve 12M: free space left" $((12582912 * 7 / 8)) "$(tr -d ' ' <"$TMP/disk.avail")"
    disk_run "the default disk reserve" ""
    check "the default disk reserve: at least 1 GiB" \
        sh -c "[ \"\$(sed -n 's/.*\"disk_reserve_bytes\":\([0-9]*\).*/\1/p' '$TMP/disk.info')\" -ge 1073741824 ]"
else
    echo "record-bounds: the disk guard checks left out (no tmpfs mount allowed here)"
fi

# ---- switching recording on and off ---------------------------------------------------------
# switch_hooked sends itself the toggle signal twice: started paused, the trace holds main
# (opened again when recording comes on) and during()'s 50 calls, between two gaps of
# reason "skipped" that count every event left out (201 before, 61 after).
SWITCH="$PROGS/switch_hooked"
echo "switch: 8705" >"$TMP/switch.plain" # 4950 + 2 * 1225 + 3 * 435
# switch_trace_checks LABEL: what the session `atf record` reported holds (see above)
switch_trace_checks() {
    p=$(ls -d "$(session_of)"/pid_* | head -n 1)
    expect 0 "$1: verify" "$ATF" verify "$p"
    "$ATF" stats --json "$p" >"$TMP/stats" 2>/dev/null
    check "$1: during() called 50 times" grep -q '"name":"during","calls":50,' "$TMP/stats"
    check "$1: main, opened again" grep -q '"name":"main","calls":1,' "$TMP/stats"
    check "$1: nothing of before() or after()" sh -c "! grep -q '\"name\":\"\(before\|after\)\"' '$TMP/stats'"
    check "$1: 262 not recorded, none lost" grep -q '"events_lost":0,"events_not_recorded":262,' "$TMP/stats"
    "$ATF" tree "$p" >"$TMP/tree" 2>/dev/null
    check "$1: the gaps in the tree" sh -c "[ \$(grep -c 'gap: [0-9]* events not recorded (skipped)' '$TMP/tree') -eq 2 ]"
    check "$1: no return without a call" sh -c "! grep -q 'with no matching call' '$TMP/tree'"
}
for sig in USR1 USR2; do
    label="--start-paused, toggled with $sig"
    if [ $sig = USR1 ]; then opts=--start-paused; else opts="--start-paused --toggle-signal SIGUSR2"; fi
    expect 0 "$label" "$ATF" record $opts --output "$TMP/switch_$sig" -- "$SWITCH" $sig
    check "$label: the program's output" cmp "$OUT" "$TMP/switch.plain"
    check "$label: the pid to signal" grep -q "^atf record: recording is paused; kill -\(SIG\)\{0,1\}$sig [0-9][0-9]* switches it on" "$ERR"
    check "$label: the summary counts what was left out" grep -q '^atf record: 262 events left out while recording was off' "$ERR"
    switch_trace_checks "$label"
done
expect 0 "a program's own handler for the toggle signal" "$ATF" record --start-paused \
    --output "$TMP/switch_own" -- "$SWITCH" USR1 own
check "a program's own handler: the program's output" cmp "$OUT" "$TMP/switch.plain"
check "a program's own handler: said on stderr" \
    grep -q '^atf_instrument: the program sets its own handler for signal [0-9]*, which switches recording' "$ERR"
expect 2 "--toggle-signal NOPE: refused" "$ATF" record --toggle-signal NOPE -- "$SWITCH"
# worker_cpu_ns PID: the most CPU time (ns, from schedstat) any thread of PID but its
# first has had; 0 when it has none yet or is gone
worker_cpu_ns() {
    for st in /proc/"$1"/task/*/schedstat; do
        [ "$st" = "/proc/$1/task/$1/schedstat" ] || cut -d' ' -f1 "$st" 2>/dev/null
    done | sort -n | tail -n 1 | awk '{ print $1 + 0 } END { if (NR == 0) print 0 }'
}
# the toggle signal sent to atf record goes on to the program: busy runs paused until
# record's own pid gets SIGUSR1, sent once a worker thread of the program has run 20 ms
# (the session's directory alone appears at the first call, before any call was left out)
"$ATF" record --start-paused --output "$TMP/forward" -- "$BUSY" 2 1500 >"$OUT" 2>"$ERR" &
rpid=$!
tries=0
while [ $tries -lt 100 ] && [ -z "$(ls -d "$TMP/forward"/session_*/pid_* 2>/dev/null)" ]; do
    sleep 0.05
    tries=$((tries + 1))
done
bpid=$(ls -d "$TMP/forward"/session_*/pid_* 2>/dev/null | head -n 1 | sed 's/.*pid_//')
while [ $tries -lt 200 ] && [ -n "$bpid" ] && [ "$(worker_cpu_ns "$bpid")" -lt 20000000 ]; do
    sleep 0.02
    tries=$((tries + 1))
done
kill -USR1 $rpid
wait $rpid
status=$?
if [ $status -eq 0 ]; then pass; else fail "the toggle signal sent to record: exit status $status"; show; fi
check "the toggle signal sent to record: the program's output" cmp "$OUT" "$TMP/busy1500.plain"
p=$(ls -d "$TMP/forward"/session_*/pid_* 2>/dev/null | head -n 1)
"$ATF" info --json "$p" >"$TMP/info" 2>/dev/null
n=$(json_num events "$TMP/info")
if [ -n "$n" ] && [ "$n" -gt 0 ]; then pass; else fail "the toggle signal sent to record: no events recorded"; fi
n=$(json_num events_not_recorded "$TMP/info")
if [ -n "$n" ] && [ "$n" -gt 0 ]; then pass; else fail "the toggle signal sent to record: nothing counted as skipped"; fi
# triggers: on at each entry of during(), off after each of its returns; "own" keeps the
# program's signals harmless (no toggle signal here)
label="--trigger-on during --trigger-off during"
expect 0 "$label" "$ATF" record --trigger-on 'dur*' --trigger-off during --output "$TMP/switch_trigger" \
    -- "$SWITCH" USR1 own
check "$label: the program's output" cmp "$OUT" "$TMP/switch.plain"
switch_trace_checks "$label"

# ---- --min-duration ---------------------------------------------------------------------------
# durations_hooked: three calls of slow() (30 ms each, one inside outer()), 1100 calls of
# quick() and one of busy(), all far under 10 ms: kept are the long calls and their callers
label="--min-duration 10ms"
expect 0 "$label" "$ATF" record --min-duration 10ms --output "$TMP/min" -- "$PROGS/durations_hooked"
check "$label: the program's output" grep -qx 'durations: 504450' "$OUT"
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
expect 0 "$label: verify" "$ATF" verify "$p"
"$ATF" stats --json "$p" >"$TMP/stats" 2>/dev/null
sed -n 's/^{"fid":"[^"]*","name":"\([^"]*\)","calls":\([0-9]*\),.*/\1 \2/p' "$TMP/stats" | LC_ALL=C sort >"$TMP/kept"
printf 'main 1\nouter 1\nslow 3\n' >"$TMP/kept.want"
check "$label: exactly main, outer and slow's 3 calls" cmp "$TMP/kept" "$TMP/kept.want"
"$ATF" info --json "$p" >"$TMP/info" 2>/dev/null
check "$label: in the manifest" grep -q '"min_duration_ns":10000000' "$TMP/info"
"$ATF" stats "$p" >"$TMP/stats.txt" 2>/dev/null
check "$label: atf stats says so" grep -q '^min duration: only calls of at least 10.000ms' "$TMP/stats.txt"

# ---- --keep-last: the flight recorder ---------------------------------------------------------
# busy 2 50 makes about a million events per thread; --keep-last 256K holds 8192 of them (32
# bytes each), about a hundredth. busy's work is the same in every run, so each thread's
# kept events must be the end of one thread of a complete trace: the same functions, kinds
# and depths in the same order; and the events kept and discarded add up to the calls the
# program counted.
"$PROGS/busy" 2 50 >"$TMP/busy50.plain" 2>/dev/null
events_of() { "$ATF" dump "$1" 2>/dev/null | awk 'NR > 1 { print $3, $4, $6 }'; }
expect 0 "a complete trace to compare --keep-last with" "$ATF" record --output "$TMP/keep_full" -- "$BUSY" 2 50
full=$(ls -d "$(session_of)"/pid_* | head -n 1)
for t in "$full"/thread_*; do events_of "$t" >"$TMP/full.${t##*/}"; done
label="--keep-last 256K"
expect 0 "$label" "$ATF" record --keep-last 256K --output "$TMP/keep_size" -- "$BUSY" 2 50
check "$label: the program's output" cmp "$OUT" "$TMP/busy50.plain"
check "$label: the summary says so" grep -q '^atf record: the flight recorder kept the most recent events: [1-9]' "$ERR"
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
expect 0 "$label: verify" "$ATF" verify "$p"
sum=$(grep -o '"events_\(written\|discarded\)":[0-9]*' "$p/manifest.json" | awk -F: '{ s += $2 } END { print s + 0 }')
all=$(grep -o '"events_written":[0-9]*' "$full/manifest.json" | awk -F: '{ s += $2 } END { print s + 0 }')
if [ "$sum" = "$all" ]; then pass; else fail "$label: $sum events kept and discarded, the complete trace has $all"; fi
at_most "$label: du -sb of the session within 1.5x" "$(du -sb "$p" | cut -f1)" 393216
for t in "$p"/thread_*; do
    events_of "$t" >"$TMP/kept"
    n=$(wc -l <"$TMP/kept")
    found=0
    for f in "$TMP"/full.thread_*; do tail -n "$n" "$f" | cmp -s - "$TMP/kept" && found=1; done
    if [ "$found" = 1 ]; then pass; else fail "$label: ${t##*/}'s $n events are not the end of a thread"; fi
done
for n in $(grep -o '"events_written":[0-9]*' "$p/manifest.json" | cut -d: -f2); do
    at_most "$label: a thread holds at most 256K of events, and a chunk" "$n" $((8192 + 2048))
done
"$ATF" info "$p" >"$TMP/info.txt" 2>/dev/null
check "$label: atf info says so" grep -q '^keep_last: *262144 bytes' "$TMP/info.txt"
"$ATF" stats "$p" >"$TMP/stats.txt" 2>/dev/null
check "$label: atf stats names the calls begun before" grep -q 'returns of calls that began before the events kept' "$TMP/stats.txt"
check "$label: no unbalanced input" sh -c "! grep -q 'without a matching call' '$TMP/stats.txt'"

label="--keep-last 20ms"
expect 0 "$label" "$ATF" record --keep-last 20ms --output "$TMP/keep_time" -- "$BUSY" 2 250
check "$label: the program's output" cmp "$OUT" "$TMP/busy.plain"
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
expect 0 "$label: verify" "$ATF" verify "$p"
"$ATF" stats --json "$p" >"$TMP/stats" 2>/dev/null
sed -n 's/.*"start_ns":\([0-9]*\),"end_ns":\([0-9]*\),.*/\1 \2/p' "$TMP/stats" >"$TMP/spans"
long=0
# a thread's events span at most the last 20ms (less when the thread made none at their
# start: it waits for its full ring to be moved out, a long while on a busy machine;
# tests/test_bounds.c checks the exact count on stamps it chooses)
while read -r a b; do
    [ $((b - a)) -gt 0 ] || continue # main's thread: a few events
    long=$((long + 1))
    at_most "$label: a thread's span at most 20ms" $((b - a)) 20000000
done <"$TMP/spans"
if [ "$long" = 2 ]; then pass; else fail "$label: $long threads kept events, expected 2"; fi

# the snapshot signal: switch_hooked sends itself USR2 twice, which would end it were the
# tracer not listening; everything fits in 64K, so the trace holds every event
label="--keep-last 64K, the program sends USR2"
expect 0 "$label" "$ATF" record --keep-last 64K --output "$TMP/keep_snap" -- "$SWITCH" USR2
check "$label: the program's output" cmp "$OUT" "$TMP/switch.plain"
p=$(ls -d "$(session_of)"/pid_* | head -n 1)
expect 0 "$label: verify" "$ATF" verify "$p"
check "$label: every event kept" grep -q '"events_written":362' "$p/manifest.json"
label="--keep-last 64K, the program takes USR2 itself"
expect 0 "$label" "$ATF" record --keep-last 64K --output "$TMP/keep_own" -- "$SWITCH" USR2 own
check "$label: the tracer says so" grep -q '^atf_instrument: the program sets its own handler for signal [0-9]*, which writes what the flight recorder holds' "$ERR"
expect 2 "--keep-last 5: refused (no unit)" "$ATF" record --keep-last 5x -- "$BUSY"
expect 2 "--snapshot-signal without --keep-last: refused" "$ATF" record --snapshot-signal USR2 -- "$BUSY"
expect 2 "--keep-last with the toggle signal's own: refused" "$ATF" record --keep-last 1M --start-paused --snapshot-signal USR1 -- "$BUSY"

# ---- a crash in each mode -------------------------------------------------------------------
# busy_hooked killed (SIGKILL) a second into a run it would take far longer to finish,
# even recording nothing (400000 rounds), in each mode: atf record passes the status on,
# recovers what the process left, and that verifies strictly (the flight recorder had
# written nothing yet: an empty trace).
# child_of PID: a child process of PID (from /proc)
child_of() {
    for st in /proc/[0-9]*/status; do
        if [ "$(sed -n 's/^PPid:[[:space:]]*//p' "$st" 2>/dev/null)" = "$1" ]; then
            basename "$(dirname "$st")"
            return
        fi
    done
}
crash_mode() {
    label="SIGKILL under $*"
    "$ATF" record "$@" --output "$TMP/crash" -- "$BUSY" 2 400000 >"$OUT" 2>"$ERR" &
    rec=$!
    sleep 1
    kid=$(child_of $rec)
    [ -n "$kid" ] && kill -9 "$kid"
    wait $rec
    status=$?
    if [ "$status" = 137 ]; then pass; else fail "$label: exit status $status, expected 137"; fi
    check "$label: recovered" grep -q 'killed?): recovered' "$ERR"
    p=$(ls -d "$(session_of)"/pid_* | head -n 1)
    expect 0 "$label: verify --strict" "$ATF" verify --strict "$p"
    rm -rf "$TMP/crash"
}
crash_mode --max-size 64M
crash_mode --start-paused
crash_mode --trigger-on round_work --trigger-off round_work --max-size 256M
crash_mode --min-duration 1ms
crash_mode --keep-last 1M

# ---- sizes and times ------------------------------------------------------------------------
expect 2 "--max-size 32min: refused" "$ATF" record --max-size 32min -- "$BUSY"
check "--max-size 32min: says it is no size" grep -q "^atf record: --max-size: '32min' is not a size" "$ERR"
expect 2 "--duration 32M: refused" "$ATF" record --duration 32M -- "$BUSY"
check "--duration 32M: says it is no time" grep -q "^atf record: --duration: '32M' is not a time" "$ERR"
expect 2 "--duration 5: refused (no unit)" "$ATF" record --duration 5 -- "$BUSY"
expect 2 "--max-size 0: refused" "$ATF" record --max-size 0 -- "$BUSY"
expect 2 "--max-size 1.5k: refused (K, not k)" "$ATF" record --max-size 1.5k -- "$BUSY"
expect 0 "--max-size 1.5G --duration 1.5min: taken" "$ATF" record --max-size 1.5G --duration 1.5min \
    --output "$TMP/big" -- "$BUSY" 1 10
check "--max-size 1.5G --duration 1.5min: not stopped" sh -c "! grep -q '^atf record: stopped' '$ERR'"
"$ATF" info --json "$(ls -d "$(session_of)"/pid_* | head -n 1)" >"$TMP/info" 2>/dev/null
check "--max-size 1.5G: 1610612736 bytes in the manifest" grep -q '"max_bytes":1610612736' "$TMP/info"
check "--duration 1.5min: 90 s in the manifest" grep -q '"max_duration_ns":90000000000' "$TMP/info"

rm -rf "$TMP"/max_* "$TMP"/duration "$TMP"/big "$TMP"/switch_* "$TMP"/forward "$TMP"/min "$TMP"/keep_*
finish
