# check_lib.sh - what the shell check scripts of tests/ share: the pass and failure counts,
# the FAIL line, the summary line that tests/run_all.sh adds up, running a command with
# its output kept for the failure message, and a Python check (py). Source it after
# setting CHECK_NAME (the summary's name), OUT and ERR (where a command's stdout and
# stderr go).
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
# py NAME CODE ARGS...: python3 runs CODE with ARGS (sys.argv[1:]) and passes when it exits
# 0 (its last line in the failure); nothing is counted where there is no python3. Needs
# $TMP.
PY=
command -v python3 >/dev/null 2>&1 && PY=python3
py() {
    pname=$1
    pcode=$2
    shift 2
    [ -n "$PY" ] || return 0
    if python3 -c "$pcode" "$@" >"$TMP/py.out" 2>&1; then pass; else
        fail "$pname: $(tail -n 1 "$TMP/py.out")"
    fi
}
