#!/bin/sh
# tests/valgrind.sh PROGRAM... - runs each test program under valgrind memcheck: any memory
# error or a definitely/indirectly lost block fails it, as does a failed test. Prints the
# program's summary line and valgrind's verdict; ends with "valgrind: N passed, M failed".
passed=0
failed=0
for prog in "$@"; do
    log=$prog.valgrind.log
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect --track-origins=yes "$prog" >"$log" 2>&1
    status=$?
    summary=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok   $prog: ${summary:-no summary}; no memory errors, no leaks"
    else
        failed=$((failed + 1))
        echo "FAIL $prog: exit status $status (99: valgrind found errors); ${summary:-no summary}; log $log"
        grep -E '^==[0-9]+==' "$log" | head -n 30 | sed 's/^/    /'
    fi
done
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
