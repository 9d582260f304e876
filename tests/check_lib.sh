# check_lib.sh - what the shell check scripts of tests/ share: the pass and failure counts,
# the FAIL line, the summary line that tests/run_all.sh adds up, and running a command
# with its output kept for the failure message. Source it after setting CHECK_NAME (the
# summary's name), OUT and ERR (where a command's stdout and stderr go).
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL $CHECK_NAME: $*"
}
# finish: the summary line; exits 0 when nothing failed.
finish() {
    echo "$CHECK_NAME: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
# show: the first lines of the last command's stdout and stderr, under a FAIL line.
show() {
    sed -n '1,5s/^/    stdout: /p' "$OUT"
    sed -n '1,5s/^/    stderr: /p' "$ERR"
}
# check NAME CMD...: passes when CMD succeeds (its output is discarded).
check() {
    name=$1
    shift
    if "$@" >/dev/null 2>&1; then pass; else fail "$name"; fi
}
# expect STATUS NAME CMD...: runs CMD (stdout in $OUT, stderr in $ERR), checks its status.
expect() {
    want=$1
    name=$2
    shift 2
    "$@" >"$OUT" 2>"$ERR"
    status=$?
    if [ "$status" -eq "$want" ]; then
        pass
    else
        fail "$name: exit status $status, expected $want"
        show
    fi
}
