#!/bin/sh
# One name for a function both ways (tools/elf_symbols.h): the tracer names the functions
# of a program when it exits, the atf command names them offline from the module files
# (tools/symbolize.c) when the manifest lists them by location only, as a killed program
# leaves it. programs/aliases_main is recorded (functions with several symbols: aliases in
# the program, versioned ones in libaliases_part.so); a copy of its trace whose manifest
# has no names is named by `atf stats`, and every function must get the tracer's name,
# which must be the one the tie rule gives. Linux only (where the tracer runs). Ends with
# "elf_symbols: N passed, M failed".
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROG=$BUILD/programs/aliases_main
CHECK_NAME=elf_symbols
TMP=$(mktemp -d "${TMPDIR:-/tmp}/atf_elf_symbols.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
ERR=$TMP/err
. "$(dirname "$0")/check_lib.sh"

if [ "$(uname -s)" != Linux ] || [ ! -x "$PROG" ]; then
    echo "elf_symbols: skipped (needs Linux and $PROG)"
    finish
fi

# names: each function of `atf stats --json` as its id and name, one a line, sorted
names() {
    grep -o '"fid":"[^"]*","name":"[^"]*"' "$OUT" | sort
}

expect 0 "record aliases_main" "$ATF" record --output "$TMP/rec" -- "$PROG"
traced=$(ls -d "$TMP"/rec/session_*/pid_* 2>/dev/null | head -n 1)
if [ -z "$traced" ]; then
    fail "record aliases_main: no session"
    finish
fi
expect 0 "stats of the recording" "$ATF" stats --json "$traced"
names >"$TMP/tracer.names"

# the names the tie rule gives, and none of the names it passes over
for f in main add_pair mul_pair scale_alpha part_value part_next part_both; do
    check "the tracer names $f" grep -q "\"name\":\"$f\"" "$TMP/tracer.names"
done
check "the tracer names part_value twice (both versions)" \
    test "$(grep -c '"name":"part_value"' "$TMP/tracer.names")" -eq 2
check "the tracer passes over the other names" \
    sh -c "! grep -qE '\"name\":\"(add_impl|__mul_impl|scale_zeta|part_v1|part_v2|part_next_impl)\"' '$TMP/tracer.names'"

# the same trace with its functions by location only (a symbol's name ends its object)
cp -R "$traced" "$TMP/offline"
sed 's/,"name":"[^"]*"}/}/g' "$traced/manifest.json" >"$TMP/offline/manifest.json"
expect 0 "info of the copy" "$ATF" info --json "$TMP/offline"
check "the copy lists every function by location only" \
    grep -q "\"symbols_by_location_only\":$(wc -l <"$TMP/tracer.names" | tr -d ' ')," "$OUT"
expect 0 "stats of the copy" "$ATF" stats --json "$TMP/offline"
names >"$TMP/offline.names"
check "stats of the copy says nothing on stderr" test ! -s "$ERR"
if cmp -s "$TMP/tracer.names" "$TMP/offline.names"; then pass; else
    fail "the offline names differ from the tracer's:"
    diff "$TMP/tracer.names" "$TMP/offline.names" | sed 's/^/    /'
fi
finish
