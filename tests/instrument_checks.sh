#!/bin/sh
# Checks the preloaded auto-tracer (libatf_instrument.so) and `atf record`: a program
# built with -finstrument-functions and linked without a tracer, recorded with its exit
# status passed through (also a signal's), a program linked with the tracer (the preloaded
# copy stays off), options reaching the tracer, every process of a forking program in its own
# pid_* directory of one session (each verifies --strict), processes that run no
# instrumented function (no directory), processes ending with _exit/_Exit (finalized;
# a vfork child leaves its parent's trace alone), ATF_TRACE_FOLLOW=0, a program whose
# code is partly in a shared library (names from both modules, without symbol versions),
# the filters (ATF_TRACE_FILTER, ATF_TRACE_NOTRACE, ATF_TRACE_DEPTH through --filter,
# --notrace, --depth), calls left by longjmp (closed where they were left, not where an
# outer call returns), and a failed finalization's message.
# Ends with the line "instrument: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
EX=$BUILD/examples
PROGS=$BUILD/programs
SO=$BUILD/libatf_instrument.so
TMP=$BUILD/tests/instrument_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=instrument
. "$(dirname "$0")/check_lib.sh"
# Under the sanitizers (make sanitize sets ATF_CHECKS_SANITIZED), a process that forks
# while its other threads run can deadlock in the child inside ASan's own allocator (its
# lock taken by a thread the child does not have; glibc's malloc guards against this, gcc
# 12's ASan runtime does not): the checks that run the forking sample are left out there.
FORKS_SKIPPED=${ATF_CHECKS_SANITIZED:-}
[ -z "$FORKS_SKIPPED" ] || echo "instrument: the forking sample's checks skipped under the sanitizers"
# fib_calls_per_pid SESSION: fib's call count in each pid_* of SESSION, ascending, into
# $TMP/fib_calls as one line
fib_calls_per_pid() {
    for p in "$1"/pid_*; do
        "$ATF" stats --json "$p" 2>/dev/null | sed -n 's/^{"fid":"[^"]*","name":"fib","calls":\([0-9]*\),.*/\1/p'
    done | LC_ALL=C sort -n | tr '\n' ' ' >"$TMP/fib_calls"
}
# the session directory `atf record` reported in $ERR
session_of() { sed -n 's/^atf record: session //p' "$ERR" | head -n 1; }
# verify_pids NAME SESSION: every thread of every pid_* directory passes verify --strict.
verify_pids() {
    for t in "$2"/pid_*/thread_*; do
        [ -d "$t" ] || { fail "$1: no thread directory in $2"; return; }
        if "$ATF" verify --strict "$t" >/dev/null 2>&1; then pass; else fail "$1: verify --strict $t"; fi
    done
}
# functions_of FILE: the function names of an `atf stats --json` output, sorted.
functions_of() { sed -n 's/^{"fid":"[^"]*","name":"\([^"]*\)".*/\1/p' "$1" | LC_ALL=C sort; }
# no_exceptions NAME DIR: no call of DIR (a pid_* directory) was closed by the tracer
# (exception events: only a longjmp makes them)
no_exceptions() {
    if "$ATF" dump "$2" >"$TMP/dump" 2>"$ERR" && ! grep -q ' exception ' "$TMP/dump"; then pass
    else fail "$1: exception events in a trace without longjmp"; fi
}
# outer_calls FILE: the names of the calls `atf tree --max-depth N` printed in FILE, in
# order, on one line
outer_calls() {
    awk '/^ +[0-9]/ { for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+$/) { printf "%s ", $i; break } }' "$1"
}
# stats NAME SESSION: `atf stats --json` of the session's only pid_* directory into $TMP/stats.
stats() {
    if "$ATF" stats --json "$2" >"$TMP/stats" 2>"$ERR"; then pass; else fail "$1: atf stats"; show; fi
}

rm -rf "$TMP"
mkdir -p "$TMP"

# ---- the tracer library ---------------------------------------------------------------
check "libatf_instrument.so exports the entry hook" sh -c "nm -D --defined-only '$SO' | grep -q ' T __cyg_profile_func_enter\$'"
check "libatf_instrument.so exports the exit hook" sh -c "nm -D --defined-only '$SO' | grep -q ' T __cyg_profile_func_exit\$'"
check "libatf_instrument.so calls no hook itself" sh -c "! nm -D '$SO' | grep -q ' U __cyg_profile'"
check "libatf_instrument.so interposes _exit" sh -c "nm -D --defined-only '$SO' | grep -q ' T _exit\$'"
check "libatf_instrument.so interposes _Exit" sh -c "nm -D --defined-only '$SO' | grep -q ' T _Exit\$'"

# ---- atf record on the sample -----------------------------------------------------------
"$EX/sample" >"$TMP/sample.plain" 2>/dev/null
expect 0 "record sample" "$ATF" record --output "$TMP/sample" -- "$EX/sample_hooked"
check "record sample: same output as the plain build" cmp "$OUT" "$TMP/sample.plain"
check "record sample: summary on stderr" grep -qE '^atf record: 1 process, 5 threads, [1-9][0-9]* events, 0 lost' "$ERR"
s=$(session_of)
if [ -n "$s" ] && [ -d "$s" ]; then pass; else fail "record sample: no session path on stderr"; show; finish; fi
verify_pids "record sample" "$s"
stats "record sample" "$s"
functions_of "$TMP/stats" >"$TMP/stats.names"
for f in main worker fib partition is_prime swap_u32; do
    check "record sample: stats names $f" grep -qx "$f" "$TMP/stats.names"
done
# the manifest: each worker's pthread name (set after its first event: taken again at its
# exit), the command line, and the executable's build id when it has one
m=$(ls "$s"/pid_*/manifest.json 2>/dev/null | head -n 1)
for k in 0 1 2 3; do
    check "record sample: thread worker-$k named in the manifest" grep -q "\"name\":\"worker-$k\"" "$m"
done
check "record sample: the command line in the manifest" grep -q '"cmdline":"[^"]*sample_hooked"' "$m"
build_id_of() { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1; }
bid=$(build_id_of "$EX/sample_hooked")
if [ -n "$bid" ]; then check "record sample: the module's build id" grep -q "\"build_id\":\"$bid\"" "$m"; fi
no_exceptions "record sample" "$(dirname "$m")"

# --layout 3 is the packed layout, as atf info names it
expect 0 "record --layout 3" "$ATF" record --layout 3 --output "$TMP/layout3" -- "$EX/sample_hooked"
check "record --layout 3: the summary says packed" grep -q "(layout packed, " "$ERR"
s3=$(session_of)
expect 0 "record --layout 3: info" "$ATF" info "$(ls -d "$s3"/pid_* | head -n 1)"
check "record --layout 3: the files are packed" grep -qE '^layout: +3 ' "$OUT"

# a program linked with the tracer: the preloaded copy stays off, one session, one pid_*
expect 0 "record sample_traced" "$ATF" record --output "$TMP/linked" -- "$EX/sample_traced"
check "record sample_traced: summary of the program's own session" grep -qE '^atf record: 1 process, 5 threads, [1-9][0-9]* events, 0 lost' "$ERR"
n=$(ls -d "$TMP/linked"/session_*/pid_* 2>/dev/null | wc -l | tr -d ' ')
if [ "$n" -eq 1 ]; then pass; else fail "record sample_traced: $n pid_* directories, expected 1"; fi

# ---- exit status ----------------------------------------------------------------------
if [ -z "$FORKS_SKIPPED" ]; then
expect 7 "record: exit status passed through" "$ATF" record --output "$TMP/status" -- "$PROGS/forks_hooked" 7
fi
expect 143 "record: a signal is 128+N" "$ATF" record --output "$TMP/status" -- sh -c 'kill -TERM $$'
expect 127 "record: a missing program is 127" "$ATF" record --output "$TMP/status" -- "$TMP/no_such_program"
expect 2 "record: no program is a usage error" "$ATF" record --output "$TMP/status"
expect 125 "record: a missing library is 125" "$ATF" record --preload "$TMP/none.so" -- "$EX/sample_hooked"

# ---- programs the preloaded tracer cannot trace: said, no session left ---------------------
expect 125 "record a program without instrumented code" "$ATF" record --output "$TMP/plain" -- "$PROGS/busy" 1 1
check "record a program without instrumented code: says so" \
    grep -q "^atf record: $PROGS/busy has no code built with -finstrument-functions" "$ERR"
check "record a program without instrumented code: no session left" sh -c "! ls -d '$TMP/plain'/session_* 2>/dev/null"
expect 125 "record a static program" "$ATF" record --output "$TMP/static" -- "$PROGS/busy_static" 1 1
check "record a static program: says how to link the tracer in" \
    grep -q "^atf record: $PROGS/busy_static is statically linked: .* Link the tracer in instead" "$ERR"
check "record a static program: it did not run" sh -c "! grep -q busy '$OUT'"
check "record a static program: no session left" sh -c "! ls -d '$TMP/static'/session_* 2>/dev/null"
expect 0 "record --force a static program: it runs" "$ATF" record --force --output "$TMP/static" -- "$PROGS/busy_static" 1 1
check "record --force a static program: its output" grep -q "^busy: total " "$OUT"

# ---- the session opens at the process's first event ------------------------------------
# the shell and sed run no instrumented function: no pid_* directory of theirs
expect 0 "record sh -c 'sed; program'" "$ATF" record --output "$TMP/lazy" -- \
    sh -c "echo x | sed s/x/y/ >/dev/null && '$EX/sample_hooked'"
check "record sh -c 'sed; program': the program's output" cmp "$OUT" "$TMP/sample.plain"
s=$(session_of)
n=$(ls -d "$s"/pid_* 2>/dev/null | wc -l | tr -d ' ')
if [ "$n" -eq 1 ]; then pass; else fail "record sh -c 'sed; program': $n pid_* directories, expected 1"; fi
verify_pids "record sh -c 'sed; program'" "$s"
# a shell that execs the program: the program's pid_* in record's session, no other session
expect 0 "record sh -c 'exec program'" "$ATF" record --output "$TMP/lazyexec" -- sh -c "exec '$EX/sample_hooked'"
n=$(ls -d "$TMP/lazyexec"/session_* 2>/dev/null | wc -l | tr -d ' ')
if [ "$n" -eq 1 ]; then pass; else fail "record sh -c 'exec program': $n session directories, expected 1"; fi
s=$(session_of)
n=$(ls -d "$s"/pid_* 2>/dev/null | wc -l | tr -d ' ')
if [ "$n" -eq 1 ]; then pass; else fail "record sh -c 'exec program': $n pid_* directories, expected 1"; fi
verify_pids "record sh -c 'exec program'" "$s"
# preloaded into a program that runs no instrumented function: not even the root is made
expect 0 "preload into true" env ATF_TRACE_DIR="$TMP/none" LD_PRELOAD="$SO" true
check "preload into true: no directory" test ! -e "$TMP/none"

# ---- options that become the tracer's environment ---------------------------------------
if [ -z "$FORKS_SKIPPED" ]; then
# a 16-slot ring cannot hold a burst of fib(12) (930 events): drop loses some, block none
expect 0 "record --overflow drop" "$ATF" record --output "$TMP/drop" --overflow drop --ring-events 16 -- "$PROGS/forks_hooked"
check "record --overflow drop: events lost" grep -qE '^atf record: .* events, [1-9][0-9]* lost' "$ERR"
s=$(session_of)
check "record --overflow drop: the manifests say drop" sh -c "grep -q '\"overflow\": *\"drop\"' '$s'/pid_*/manifest.json"
verify_pids "record --overflow drop" "$s"
expect 0 "record --overflow block" "$ATF" record --output "$TMP/block" --overflow block --ring-events 16 -- "$PROGS/forks_hooked"
check "record --overflow block: nothing lost" grep -qE '^atf record: 4 processes, 4 threads, [1-9][0-9]* events, 0 lost' "$ERR"
fi
expect 2 "record --overflow bogus is a usage error" "$ATF" record --overflow bogus -- "$PROGS/forks_hooked"

# ---- fork: one pid_* per process ------------------------------------------------------
if [ -z "$FORKS_SKIPPED" ]; then
expect 0 "record forks" "$ATF" record --output "$TMP/forks" -- "$PROGS/forks_hooked"
check "record forks: the children said ok" grep -q "children ok" "$OUT"
s=$(session_of)
n=$(ls -d "$s"/pid_* 2>/dev/null | wc -l | tr -d ' ')
if [ "$n" -eq 4 ]; then pass; else fail "record forks: $n pid_* directories, expected 4"; fi
verify_pids "record forks" "$s"
# fib(12) is 465 calls: the parent works 4 rounds, the children 1 and 3, the grandchild 2
fib_calls_per_pid "$s"
if [ "$(cat "$TMP/fib_calls")" = "465 930 1395 1860 " ]; then pass; else
    fail "record forks: fib calls per process $(cat "$TMP/fib_calls"), expected 465 930 1395 1860"; fi
check "record forks: every manifest closed" sh -c "for m in '$s'/pid_*/manifest.json; do grep -q '\"state\": *\"closed\"' \"\$m\" || exit 1; done"
# a session of several processes given whole: the message offers --pid where there is one
expect 2 "stats on a session of 4 processes" "$ATF" stats "$s"
check "stats on a session of 4 processes: --pid offered" grep -q "give one of (or --pid N)$" "$ERR"
expect 2 "diff on a session of 4 processes" "$ATF" diff "$s" "$s"
check "diff on a session of 4 processes: no --pid offered" grep -q "give one of$" "$ERR"
# ATF_TRACE_FOLLOW=0: the children record nothing, the parent all of its 4 rounds
expect 0 "record forks, ATF_TRACE_FOLLOW=0" env ATF_TRACE_FOLLOW=0 "$ATF" record --output "$TMP/nofollow" -- "$PROGS/forks_hooked"
check "record forks, ATF_TRACE_FOLLOW=0: the children said ok" grep -q "children ok" "$OUT"
s=$(session_of)
fib_calls_per_pid "$s"
if [ "$(cat "$TMP/fib_calls")" = "1860 " ]; then pass; else
    fail "record forks, ATF_TRACE_FOLLOW=0: fib calls per process $(cat "$TMP/fib_calls"), expected 1860"; fi
verify_pids "record forks, ATF_TRACE_FOLLOW=0" "$s"
# record --no-follow is the same setting
expect 0 "record forks --no-follow" "$ATF" record --no-follow --output "$TMP/nofollow2" -- "$PROGS/forks_hooked"
s=$(session_of)
fib_calls_per_pid "$s"
if [ "$(cat "$TMP/fib_calls")" = "1860 " ]; then pass; else
    fail "record forks --no-follow: fib calls per process $(cat "$TMP/fib_calls"), expected 1860"; fi
check "record forks --no-follow: the summary counts 1 process" grep -qE '^atf record: 1 process, 1 thread, ' "$ERR"
fi

# ---- processes that end with _exit or _Exit --------------------------------------------
# exits.c: the parent (3 rounds of fib(12), 465 calls each), a child ending with _exit (1
# round), one ending with _Exit (2 rounds), a vfork child ending with _exit at once (no
# directory, and the parent's trace goes on). The tracer finalizes each trace itself: every
# manifest "closed", none left for `atf record` to recover.
# exits_closed NAME SESSION: 3 processes, each closed by the tracer, 465 930 1395 fib calls
exits_closed() {
    n=$(ls -d "$2"/pid_* 2>/dev/null | wc -l | tr -d ' ')
    if [ "$n" -eq 3 ]; then pass; else fail "$1: $n pid_* directories, expected 3"; fi
    check "$1: every manifest closed by the tracer" sh -c "for m in '$2'/pid_*/manifest.json; do grep -q '\"state\": *\"closed\"' \"\$m\" || exit 1; done"
    fib_calls_per_pid "$2"
    if [ "$(cat "$TMP/fib_calls")" = "465 930 1395 " ]; then pass; else
        fail "$1: fib calls per process $(cat "$TMP/fib_calls"), expected 465 930 1395"; fi
    verify_pids "$1" "$2"
}
if [ -z "$FORKS_SKIPPED" ]; then
expect 0 "record exits_hooked" "$ATF" record --output "$TMP/exits" -- "$PROGS/exits_hooked"
check "record exits_hooked: the children said ok" grep -q "children ok" "$OUT"
check "record exits_hooked: nothing to recover" sh -c "! grep -q recovered '$ERR'"
exits_closed "record exits_hooked" "$(session_of)"
# the parent ending with _exit(3) too
expect 3 "record exits_hooked _exit" "$ATF" record --output "$TMP/exits_exit" -- "$PROGS/exits_hooked" _exit
check "record exits_hooked _exit: nothing to recover" sh -c "! grep -q recovered '$ERR'"
exits_closed "record exits_hooked _exit" "$(session_of)"
# the tracer linked in: its own _exit and _Exit, no `atf record` to recover anything
expect 3 "exits_traced _exit" env ATF_TRACE_DIR="$TMP/exits_linked" ATF_TRACE_QUIET=1 "$PROGS/exits_traced" _exit
exits_closed "exits_traced _exit" "$(ls -d "$TMP/exits_linked"/session_* 2>/dev/null | head -n 1)"
# _exit from a signal handler: left to `atf record`, which recovers it (no hang)
expect 4 "record exits_hooked handler" "$ATF" record --output "$TMP/exits_handler" -- "$PROGS/exits_hooked" handler
n=$(grep -c "recovered" "$ERR")
if [ "$n" -eq 1 ]; then pass; else fail "record exits_hooked handler: $n processes recovered, expected the parent"; fi
verify_pids "record exits_hooked handler" "$(session_of)"
fi

# ---- a program whose code is partly in a shared library -------------------------------------
"$PROGS/shlib_main" >"$TMP/shlib.plain" 2>/dev/null
expect 0 "preload shlib" env ATF_TRACE_DIR="$TMP/shlib" ATF_TRACE_QUIET=1 LD_PRELOAD="$SO" "$PROGS/shlib_main"
check "preload shlib: same output as untraced" cmp "$OUT" "$TMP/shlib.plain"
s=$(ls -d "$TMP/shlib"/session_* 2>/dev/null | head -n 1)
verify_pids "preload shlib" "$s"
stats "preload shlib" "$s"
functions_of "$TMP/stats" >"$TMP/stats.names"
for f in main mix_many shlib_mix shlib_round shlib_sum; do
    check "preload shlib: stats names $f" grep -qx "$f" "$TMP/stats.names"
done
check "preload shlib: the library is a module" grep -q 'libshlib_part.so"' "$s"/pid_*/manifest.json
check "preload shlib: no symbol version in a name" sh -c "! grep -q '\"name\":\"[^\"]*@' '$s'/pid_*/manifest.json"
no_exceptions "preload shlib" "$(ls -d "$s"/pid_* | head -n 1)"
# a versioned symbol (shlib_sum@@SHLIB_1 in the library's symbol table) matches its name
expect 0 "record --filter shlib_sum" "$ATF" record --output "$TMP/versioned" --filter shlib_sum -- "$PROGS/shlib_main"
stats "record --filter shlib_sum" "$(session_of)"
functions_of "$TMP/stats" | tr '\n' ' ' >"$TMP/names"
if [ "$(cat "$TMP/names")" = "shlib_sum " ]; then pass; else
    fail "record --filter shlib_sum: recorded $(cat "$TMP/names"), expected shlib_sum"; fi

# ---- filters -------------------------------------------------------------------------
expect 0 "record --filter" "$ATF" record --output "$TMP/filter" --filter 'fib,is_pr?me' -- "$EX/sample_hooked"
s=$(session_of)
verify_pids "record --filter" "$s"
stats "record --filter" "$s"
functions_of "$TMP/stats" | tr '\n' ' ' >"$TMP/names"
if [ "$(cat "$TMP/names")" = "fib is_prime " ]; then pass; else
    fail "record --filter: recorded $(cat "$TMP/names"), expected fib is_prime"; fi

expect 0 "record --notrace" "$ATF" record --output "$TMP/notrace" --notrace 'fib,*sort*,partition*' -- "$EX/sample_hooked"
s=$(session_of)
stats "record --notrace" "$s"
functions_of "$TMP/stats" >"$TMP/stats.names"
check "record --notrace: fib left out" sh -c "! grep -qx fib '$TMP/stats.names'"
check "record --notrace: partition left out" sh -c "! grep -q partition '$TMP/stats.names'"
check "record --notrace: is_prime kept" grep -qx is_prime "$TMP/stats.names"

# --depth 1: in each thread only its outermost calls (main, and worker in each worker)
expect 0 "record --depth 1" "$ATF" record --output "$TMP/depth1" --depth 1 -- "$EX/sample_hooked"
s=$(session_of)
verify_pids "record --depth 1" "$s"
stats "record --depth 1" "$s"
functions_of "$TMP/stats" | tr '\n' ' ' >"$TMP/names"
if [ "$(cat "$TMP/names")" = "main worker " ]; then pass; else
    fail "record --depth 1: recorded $(cat "$TMP/names"), expected main worker"; fi
if [ -z "$FORKS_SKIPPED" ]; then
# --filter fib --depth 3: fib's first three levels, 1 + 2 + 4 calls per fib(12) (record's
# --output wins over an ATF_TRACE_DIR of the caller)
expect 0 "record --filter fib --depth 3" env ATF_TRACE_DIR=/nonexistent \
    "$ATF" record --output "$TMP/depth3" --filter fib --depth 3 -- "$PROGS/forks_hooked"
s=$(session_of)
verify_pids "record --filter fib --depth 3" "$s"
fib_calls_per_pid "$s"
if [ "$(cat "$TMP/fib_calls")" = "7 14 21 28 " ]; then pass; else
    fail "record --filter fib --depth 3: fib calls per process $(cat "$TMP/fib_calls"), expected 7 14 21 28"; fi
fi

# ---- calls left by longjmp ------------------------------------------------------------
# longjmp.c: three rounds of mid -> deep x6 -> longjmp back to main, tally() between them;
# every mid and tally sits right under main, and no call is closed by main's return
expect 0 "record longjmp" "$ATF" record --output "$TMP/longjmp" -- "$PROGS/longjmp_hooked"
check "record longjmp: its output" grep -q "longjmp: 3 rounds" "$OUT"
s=$(session_of)
verify_pids "record longjmp" "$s"
expect 0 "record longjmp: tree" "$ATF" tree --max-depth 2 "$s"
outer_calls "$OUT" >"$TMP/outer"
if [ "$(cat "$TMP/outer")" = "main mid tally mid tally mid main " ]; then pass; else
    fail "record longjmp: the calls under main are $(cat "$TMP/outer"), expected main mid tally mid tally mid main"; fi
expect 0 "record longjmp: tree, all of it" "$ATF" tree "$s"
check "record longjmp: no call closed by an outer return" sh -c "! grep -q unwound '$OUT'"
# each round leaves deep x6 and mid by longjmp: 3 x 7 frames marked as closed by exception
n=$(grep -c '(exception)$' "$OUT")
if [ "$n" -eq 21 ]; then pass; else fail "record longjmp: $n frames marked (exception) in tree, expected 21"; fi
expect 0 "record longjmp: stats" "$ATF" stats "$s"
check "record longjmp: stats find nothing unbalanced" sh -c "! grep -q 'unbalanced' '$OUT'"
check "record longjmp: 18 calls of deep" grep -qE '^ +18 .* deep$' "$OUT"
# out of a SIGUSR1 handler on sigaltstack (siglongjmp): the handler's calls are closed with
# the calls they interrupted
expect 0 "record longjmp altstack" "$ATF" record --output "$TMP/longjmp_alt" -- "$PROGS/longjmp_hooked" altstack
s=$(session_of)
verify_pids "record longjmp altstack" "$s"
expect 0 "record longjmp altstack: tree" "$ATF" tree --max-depth 3 "$s"
outer_calls "$OUT" >"$TMP/outer"
if [ "$(cat "$TMP/outer")" = "main sig_rounds sig_mid sig_mid sig_mid sig_rounds main " ]; then pass; else
    fail "record longjmp altstack: the outer calls are $(cat "$TMP/outer"), expected main sig_rounds sig_mid x3 sig_rounds main"; fi
expect 0 "record longjmp altstack: tree, all of it" "$ATF" tree "$s"
check "record longjmp altstack: no call closed by an outer return" sh -c "! grep -q unwound '$OUT'"
# a coroutine: nothing is closed by the tracer (its calls return in their own order)
"$PROGS/longjmp_hooked" coroutine >"$TMP/coroutine.plain" 2>/dev/null
expect 0 "record longjmp coroutine" "$ATF" record --output "$TMP/longjmp_co" -- "$PROGS/longjmp_hooked" coroutine
check "record longjmp coroutine: same output as untraced" cmp "$OUT" "$TMP/coroutine.plain"
s=$(session_of)
verify_pids "record longjmp coroutine" "$s"
no_exceptions "record longjmp coroutine" "$(ls -d "$s"/pid_* | head -n 1)"
# a program without longjmp, with inlined copies of instrumented functions (gcd inlined
# into itself and into round_work): no call closed by the tracer
expect 0 "busy_traced" env ATF_TRACE_DIR="$TMP/busy" ATF_TRACE_QUIET=1 "$PROGS/busy_traced" 1 8
no_exceptions "busy_traced" "$(ls -d "$TMP/busy"/session_*/pid_* 2>/dev/null | head -n 1)"

# frames.c: frames whose size varies from call to call (a variable-length array before an
# inlined copy, a prologue that realigns the stack), no longjmp: no call closed by the
# tracer, and the tree as the program's (every vla call under work, once per call)
expect 0 "record frames" "$ATF" record --output "$TMP/frames" -- "$PROGS/frames_hooked" 50
check "record frames: its output" grep -q "frames: 50 rounds, 500 calls" "$OUT"
s=$(session_of)
p=$(ls -d "$s"/pid_* | head -n 1)
verify_pids "record frames" "$s"
no_exceptions "record frames" "$p"
expect 0 "record frames: stats --json" "$ATF" stats --json "$p"
check "record frames: vla called 350 times" grep -q '"name":"vla","calls":350,' "$OUT"
expect 0 "record frames: stats" "$ATF" stats "$p"
check "record frames: every call paired" sh -c "! grep -q '^unbalanced input' '$OUT'"

# ---- a trace that cannot be finalized ----------------------------------------------------
# its pid_* directory removed while the program runs: the message names the file and errno
rm -rf "$TMP/gone"
env ATF_TRACE_DIR="$TMP/gone" ATF_TRACE_DEPTH=2 "$PROGS/busy_traced" 1 4000 >/dev/null 2>"$TMP/gone.err" &
gpid=$!
tries=0
while [ $tries -lt 100 ] && [ -z "$(ls -d "$TMP/gone"/session_*/pid_* 2>/dev/null)" ]; do
    sleep 0.05
    tries=$((tries + 1))
done
rm -rf "$TMP/gone"
wait $gpid
if grep -q "^atf_instrument: .*$TMP/gone/.*(errno [0-9]*: " "$TMP/gone.err"; then pass; else
    fail "a trace whose directory was removed: no path and errno in the message"
    sed -n '1,3s/^/    stderr: /p' "$TMP/gone.err"
fi

# ---- a full disk --------------------------------------------------------------------------
# `atf record` of the sample on a tmpfs smaller than its trace (a mount namespace of its
# own: nothing is left mounted; 1 MiB for layout 1's 3.4 MB, 128 KiB for the packed
# 0.24 MB), the disk guard off: the trace cannot be written whole, and the summary must
# say so instead of "0 lost": no count when the closing manifest could not be written
# either, the trace called incomplete; a count of the events lost when it could (a
# failed write of many blocks can leave room for it), the trace said to have stopped on
# an error. The manifest still gets what the process knew (it keeps room for that): a
# copy of the trace, taken before the namespace goes, recovered with space to spare,
# names every function and thread, as after a SIGKILL. Left out where no tmpfs can be
# mounted. (tests/bounds_checks.sh has the guard stop recording before that.)
full=$(cd "$TMP" && pwd -P)/full
mkdir -p "$full"
if unshare -m sh -c "mount -t tmpfs -o size=1m tmpfs '$full'" 2>/dev/null ||
   unshare -rm sh -c "mount -t tmpfs -o size=1m tmpfs '$full'" 2>/dev/null; then
    how=-m
    unshare -m true 2>/dev/null || how=-rm
    for case in "1 1m" "packed 128k"; do
        set -- $case
        rm -rf "$TMP/full_$1"
        expect 0 "record on a full disk (layout $1): the program's status" unshare $how sh -c \
            "mount -t tmpfs -o size=$2 tmpfs '$full' && { '$ATF' record --disk-reserve 0 --layout $1 --output '$full' -- '$EX/sample_hooked'; st=\$?; cp -R '$full' '$TMP/full_$1'; exit \$st; }"
        if grep -q 'lost unknown' "$ERR"; then
            check "record on a full disk (layout $1): no count of lost events" \
                grep -qE '^atf record: 1 process, [0-9]+ threads?, [0-9]+ events, lost unknown, ' "$ERR"
            check "record on a full disk (layout $1): the trace is called incomplete" \
                grep -q '^atf record: the trace of 1 process is incomplete' "$ERR"
        else
            check "record on a full disk (layout $1): a count of lost events" \
                grep -qE '^atf record: 1 process, [0-9]+ threads?, [0-9]+ events, [1-9][0-9]* lost, ' "$ERR"
            check "record on a full disk (layout $1): the trace is said to have stopped on an error" \
                grep -q '^atf record: .*: the trace stopped on an error (.*No space left on device.*): recovered' "$ERR"
        fi
        check "record on a full disk (layout $1): the error's errno" grep -q '(errno 28: ' "$ERR"
        p=$(ls -d "$TMP/full_$1"/session_*/pid_* 2>/dev/null | head -n 1)
        expect 0 "full disk (layout $1): atf recover" "$ATF" recover "$p"
        stats "full disk (layout $1): recovered" "$p"
        functions_of "$TMP/stats" >"$TMP/full.names"
        check "full disk (layout $1): main is named" grep -qx main "$TMP/full.names"
        check "full disk (layout $1): no function is left unnamed" sh -c "! grep -q '^0x' '$TMP/full.names'"
        check "full disk (layout $1): the main thread is named" grep -q '^{"slot":0,.*"name":"sample_hooked"}' "$TMP/stats"
        check "full disk (layout $1): no thread is left unnamed" sh -c "! grep -q '\"name\":\"\"}' '$TMP/stats'"
        check "full disk (layout $1): verify --strict" "$ATF" verify --strict "$p"
        rm -rf "$TMP/full_$1"
    done
else
    echo "instrument: the full-disk check left out (no tmpfs mount allowed here)"
fi

# ---- killed while recording, then recovered ---------------------------------------------------
# busy_traced (linked with the tracer) SIGKILLed once the manifest knows where its eight
# functions live (the drain writes it within 100 ms of a change); --depth 3 keeps the files
# small. After `atf recover` the manifest says "recovered" and, for every function id in
# the index files, its module and offset; the module's path and build id, the command line
# and the threads' names are there.
K=$TMP/killed
mkdir -p "$K"
ATF_TRACE_DIR="$K" ATF_TRACE_DEPTH=3 "$PROGS/busy_traced" 2 100000000 >/dev/null 2>&1 &
kpid=$!
tries=0
while [ $tries -lt 100 ]; do
    n=$(cat "$K"/session_*/pid_*/manifest.json 2>/dev/null | grep -o '"offset":"0x[0-9a-f]*"' | wc -l)
    [ "$n" -ge 8 ] && break
    sleep 0.1
    tries=$((tries + 1))
done
sleep 0.3 # events of every thread in the files
kill -KILL $kpid 2>/dev/null
wait $kpid 2>/dev/null
p=$(ls -d "$K"/session_*/pid_* 2>/dev/null | head -n 1)
m="$p/manifest.json"
check "killed: the manifest was left recording" grep -q '"state":"recording"' "$m"
# readable as a crash leaves it, but never called OK: not a thread, not the session
expect 0 "killed: verify before recovery" "$ATF" verify "$p"
check "killed: verify calls the session recovered" grep -q "^recovered $p (session: manifest ok (state recording)" "$OUT"
check "killed: verify calls no thread OK" sh -c "! grep -q '^OK ' '$OUT'"
expect 0 "killed: atf recover" "$ATF" recover "$p"
check "killed: the manifest says recovered" grep -q '"state":"recovered"' "$m"
check "killed: every thread finalized" sh -c "! grep -q '\"finalized\":false' '$m'"
check "killed: verify --strict" "$ATF" verify --strict "$p"
# main's thread recorded nothing but the call of main: the call lasts until the process
# was last seen (its latest event, in any thread), and says it was cut short
"$ATF" stats --json "$p" >"$TMP/killed.stats" 2>/dev/null
main_ns=$(sed -n 's/^{"fid":"[^"]*","name":"main","calls":1,"total_ns":\([0-9]*\),.*/\1/p' "$TMP/killed.stats")
if [ "${main_ns:-0}" -gt 0 ]; then pass; else fail "killed: main's total is '${main_ns:-missing}' ns, expected more than 0"; fi
"$ATF" tree --max-depth 1 "$p" >"$TMP/killed.tree" 2>/dev/null
check "killed: tree says main was cut short" grep -q '^ *0\.000 *[1-9][0-9.]*  main  (cut short)$' "$TMP/killed.tree"
exe=$(cd "$PROGS" && pwd -P)/busy_traced
check "killed: the module's path" grep -q "\"module_id\":0,\"path\":\"$exe\"" "$m"
bid=$(build_id_of "$PROGS/busy_traced")
if [ -n "$bid" ]; then check "killed: the module's build id" grep -q "\"build_id\":\"$bid\"" "$m"; fi
check "killed: the command line" grep -q '"cmdline":"[^"]*busy_traced 2 100000000"' "$m"
check "killed: the threads' names" grep -q '"name":"busy_traced"' "$m"
"$ATF" stats --json "$p" 2>/dev/null | sed -n 's/^{"fid":"\(0x[0-9a-f]*\)".*/\1/p' >"$TMP/killed.fids"
n=$(wc -l <"$TMP/killed.fids" | tr -d ' ')
if [ "$n" -ge 5 ]; then pass; else fail "killed: $n function ids in the files, expected at least 5"; fi
while read -r fid; do
    check "killed: function $fid has a module and an offset" \
        grep -q "\"function_id\":\"$fid\",\"module_id\":0,\"symbol_index\":[0-9]*,\"offset\":\"0x[0-9a-f]*\"" "$m"
done <"$TMP/killed.fids"

finish
