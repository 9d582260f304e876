#!/bin/sh
# Runs every test program given as an argument, echoes its output, adds up the
# "<suite>: N passed, M failed" lines, and ends with the total line CI reads.
# A program that crashes, exits non-zero with no failure counted, or prints no summary
# counts as one failed test.
passed=0
failed=0
for prog in "$@"; do
    out=$("$prog" 2>&1)
    status=$?
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
