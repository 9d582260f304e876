#!/bin/sh
# Runs every test program given as an argument, echoes its output, adds up the
# "<suite>: N passed, M failed" lines, and ends with the total line CI reads.
# A program that crashes, exits non-zero with no failure counted, or prints no summary
# counts as one failed test.
# RUNNER (optional) is put in front of every program that is not a .sh script, e.g.
# RUNNER=qemu-aarch64 or RUNNER=wine; carriage returns in the output (Windows) are dropped.
passed=0
failed=0
for prog in "$@"; do
    case "$prog" in
        *.sh) out=$("$prog" 2>&1) ;;
        *) out=$(${RUNNER:-} "$prog" 2>&1) ;;
    esac
    status=$?
    out=$(printf '%s\n' "$out" | tr -d '\r')
    printf '%s\n' "$out"
    summary=$(printf '%s\n' "$out" |
        sed -n 's/^[A-Za-z0-9_.-]*: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' |
        tail -n 1)
    if [ -z "$summary" ]; then
        echo "FAIL $prog: exited with status $status and printed no summary"
        failed=$((failed + 1))
        continue
    fi
    p=${summary% *}
    f=${summary#* }
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $prog: exited with status $status"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
