#!/bin/sh
# Checks of the atf command ($ATF) on files written by cli_gen ($BUILD/tests/cli_gen):
# exit statuses, usage handling, and the output of info, dump and verify on finalized
# files of both layouts, thread directories with detail, files left by a crash, and
# damaged files. Ends with the line "cli: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
GEN=$BUILD/tests/cli_gen
D=$BUILD/tests/cli_files
OUT=$BUILD/tests/cli_checks.out
ERR=$BUILD/tests/cli_checks.err
BIG=1000000
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL cli: $*"
}
finish() {
    echo "cli: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
show() {
    sed -n '1,5s/^/    stdout: /p' "$OUT"
    sed -n '1,5s/^/    stderr: /p' "$ERR"
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
# out_has / err_has NAME REGEX: the last command's stdout / stderr has a line matching REGEX.
out_has() {
    if grep -Eq -- "$2" "$OUT"; then pass; else fail "$1: stdout has no line matching /$2/"; show; fi
}
err_has() {
    if grep -Eq -- "$2" "$ERR"; then pass; else fail "$1: stderr has no line matching /$2/"; show; fi
}
out_empty() {
    if [ ! -s "$OUT" ]; then pass; else fail "$1: stdout is not empty"; show; fi
}
err_empty() {
    if [ ! -s "$ERR" ]; then pass; else fail "$1: stderr is not empty"; show; fi
}
# out_lines NAME N: the last command printed exactly N lines on stdout.
out_lines() {
    n=$(wc -l <"$OUT" | tr -d ' ')
    if [ "$n" -eq "$2" ]; then pass; else fail "$1: $n lines on stdout, expected $2"; fi
}
# out_line NAME K TEXT: line K of stdout is exactly TEXT.
out_line() {
    line=$(sed -n "$2p" "$OUT")
    if [ "$line" = "$3" ]; then pass; else fail "$1: line $2 is '$line', expected '$3'"; fi
}

mkdir -p "$BUILD/tests"
rm -rf "$D"
if ! "$GEN" "$D" "$BIG"; then
    fail "cannot write the test files with $GEN"
    finish
fi

# ---- help and usage ---------------------------------------------------------------------
expect 0 "--help" "$ATF" --help
out_has "--help" "^usage: atf COMMAND"
err_empty "--help"
expect 0 "-h" "$ATF" -h
out_has "-h" "^usage: atf COMMAND"
expect 0 "help" "$ATF" help
out_has "help" "^usage: atf COMMAND"
expect 0 "--version" "$ATF" --version
out_has "--version" "^atf [0-9]+\.[0-9]+\.[0-9]+$"
for c in info dump verify; do
    expect 0 "$c --help" "$ATF" "$c" --help
    out_has "$c --help" "^usage: atf $c "
    err_empty "$c --help"
    expect 0 "help $c" "$ATF" help "$c"
    out_has "help $c" "^usage: atf $c "
done
expect 2 "no command" "$ATF"
err_has "no command" "^usage: atf COMMAND"
out_empty "no command"
expect 2 "unknown command" "$ATF" frobnicate "$D/l1.atf"
err_has "unknown command" "unknown command 'frobnicate'"
out_empty "unknown command"
expect 2 "help of an unknown command" "$ATF" help frobnicate
expect 2 "dump unknown option" "$ATF" dump --bogus "$D/l1.atf"
err_has "dump unknown option" "unknown option '--bogus'"
err_has "dump unknown option" "^usage: atf dump"
out_empty "dump unknown option"
expect 2 "verify takes no --json" "$ATF" verify --json "$D/l1.atf"
expect 2 "info takes no --strict" "$ATF" info --strict "$D/l1.atf"
expect 2 "dump without PATH" "$ATF" dump --json
err_has "dump without PATH" "missing PATH"
expect 2 "dump with two PATHs" "$ATF" dump "$D/l1.atf" "$D/l2.atf"
expect 2 "info without PATH" "$ATF" info
expect 2 "verify without PATH" "$ATF" verify --strict

# ---- info -------------------------------------------------------------------------------
expect 0 "info layout 1" "$ATF" info "$D/l1.atf"
out_has "info layout 1" "^kind: +index$"
out_has "info layout 1" "^layout: +1 "
out_has "info layout 1" "^version: +1$"
out_has "info layout 1" "^arch: +x86_64 "
out_has "info layout 1" "^os: +linux "
out_has "info layout 1" "^thread_id: +4242$"
out_has "info layout 1" "^clock_type: +boottime "
out_has "info layout 1" "^events: +1000$"
out_has "info layout 1" "^time_first_ns: +1000000000$"
out_has "info layout 1" "^time_last_ns: +1001498515$"
out_has "info layout 1" "^duration: +1498515 ns "
out_has "info layout 1" "^events_offset: +64$"
out_has "info layout 1" "^footer: +finalized "
out_has "info layout 1" "^torn_bytes: +0$"
out_has "info layout 1" "^crc: +ok \(0x[0-9a-f]{8}\)$"
err_empty "info layout 1"
expect 0 "info layout 2" "$ATF" info "$D/l2.atf"
out_has "info layout 2" "^layout: +2 "
out_has "info layout 2" "^version: +2$"
out_has "info layout 2" "^events: +1000$"
out_has "info layout 2" "^crc: +ok "
expect 0 "info empty file" "$ATF" info "$D/empty.atf"
out_has "info empty file" "^events: +0$"
out_has "info empty file" "^time_first_ns: +-$"
expect 0 "info thread dir" "$ATF" info "$D/thread_1"
out_has "info thread dir" "^kind: +index$"
out_has "info thread dir" "^kind: +detail$"
out_has "info thread dir" "^events: +300$"
out_has "info thread dir" "^events: +100$"
out_has "info thread dir" "^flags: +0x00000001 \(has_detail_file\)$"
out_has "info thread dir" "^index_seq: +0 \.\. 297$"
expect 0 "info detail file" "$ATF" info "$D/thread_2/detail.atf"
out_has "info detail file" "^kind: +detail$"
out_has "info detail file" "^layout: +2 "
out_has "info detail file" "^events: +150$"
out_has "info detail file" "^crc: +ok "
expect 0 "info crash-left file" "$ATF" info "$D/crash.atf"
out_has "info crash-left file" "^events: +100$"
out_has "info crash-left file" "^footer: +recovered from size "
out_has "info crash-left file" "^torn_bytes: +13$"
out_has "info crash-left file" "^crc: +none "
expect 0 "info footer at end" "$ATF" info "$D/footer_end.atf"
out_has "info footer at end" "^footer: +footer at end "
out_has "info footer at end" "^events: +50$"
expect 0 "info crc 0" "$ATF" info "$D/crc0.atf"
out_has "info crc 0" "^crc: +not computed "
expect 1 "info crc mismatch" "$ATF" info "$D/badcrc.atf"
out_has "info crc mismatch" "^crc: +mismatch \(expected 0x[0-9a-f]{8}, found 0x[0-9a-f]{8}\)$"
err_has "info crc mismatch" "^atf: .*badcrc\.atf: offset 64: "
expect 1 "info footer mismatch" "$ATF" info "$D/mismatch.atf"
out_has "info footer mismatch" "^footer: +footer mismatch"
err_has "info footer mismatch" "^atf: .*mismatch\.atf: offset [0-9]+: "
expect 1 "info bad magic" "$ATF" info "$D/badmagic.atf"
err_has "info bad magic" "^atf: .*badmagic\.atf: offset 0: "
out_empty "info bad magic"
expect 1 "info short file" "$ATF" info "$D/short.atf"
err_has "info short file" "^atf: .*short\.atf: offset [0-9]+: "
expect 1 "info missing file" "$ATF" info "$D/no_such.atf"
err_has "info missing file" "^atf: .*no_such\.atf: "

# ---- dump -------------------------------------------------------------------------------
L1_FIRST='{"seq":0,"ts":1000000000,"fid":"0x0000000000000100","kind":"call","tid":4242,"depth":0,"detail_seq":null}'
L1_SECOND='{"seq":1,"ts":1000001503,"fid":"0x0000000100000100","kind":"return","tid":4242,"depth":0,"detail_seq":null}'
L2_FIRST='{"seq":0,"ts":1000000000,"fid":"0x0000000000000100","kind":"call","tid":null,"depth":null,"detail_seq":null}'
T1_FIRST='{"seq":0,"ts":1000000000,"fid":"0x0000000000000100","kind":"call","tid":4242,"depth":0,"detail_seq":0}'
D1_FIRST='{"detail_seq":0,"index_seq":0,"type":3,"flags":0,"ts":1000000000,"payload_len":100}'
D1_SECOND='{"detail_seq":1,"index_seq":3,"type":4,"flags":3,"ts":1000004509,"payload_len":124}'

expect 0 "dump --json layout 1" "$ATF" dump --json "$D/l1.atf"
out_lines "dump --json layout 1" 1000
out_line "dump --json layout 1" 1 "$L1_FIRST"
out_line "dump --json layout 1" 2 "$L1_SECOND"
err_empty "dump --json layout 1"
expect 0 "dump --json layout 2" "$ATF" dump --json "$D/l2.atf"
out_lines "dump --json layout 2" 1000
out_line "dump --json layout 2" 1 "$L2_FIRST"
expect 0 "dump --json thread dir" "$ATF" dump --json "$D/thread_1"
out_lines "dump --json thread dir" 300
out_line "dump --json thread dir" 1 "$T1_FIRST"
expect 0 "dump --json --detail thread dir" "$ATF" dump --json --detail "$D/thread_1"
out_lines "dump --json --detail thread dir" 400
out_line "dump --json --detail thread dir" 301 "$D1_FIRST"
out_line "dump --json --detail thread dir" 302 "$D1_SECOND"
expect 0 "dump --json detail file" "$ATF" dump --json "$D/thread_1/detail.atf"
out_lines "dump --json detail file" 100
out_line "dump --json detail file" 1 "$D1_FIRST"
expect 0 "dump --json crash-left file" "$ATF" dump --json "$D/crash.atf"
out_lines "dump --json crash-left file" 100
expect 0 "dump --json crash-left thread" "$ATF" dump --detail --json "$D/thread_crash"
out_lines "dump --json crash-left thread" 120
expect 0 "dump table" "$ATF" dump "$D/l1.atf"
out_lines "dump table" 1001
out_line "dump table" 1 "seq          ts  fid                 kind        tid  depth  detail"
out_line "dump table" 2 "  0  1000000000  0x0000000000000100  call       4242      0       -"
widths=$(awk '{ print length($0) }' "$OUT" | sort -u | wc -l | tr -d ' ')
if [ "$widths" -eq 1 ]; then pass; else fail "dump table: rows of $widths different widths"; fi
expect 0 "dump table layout 2" "$ATF" dump "$D/l2.atf"
out_line "dump table layout 2" 2 "  0  1000000000  0x0000000000000100  call         -      -       -"
expect 0 "dump table --detail" "$ATF" dump --detail "$D/thread_2"
out_lines "dump table --detail" 453
out_has "dump table --detail" "^detail_seq +index_seq +type +flags +ts +payload_len$"
expect 1 "dump bad magic" "$ATF" dump --json "$D/badmagic.atf"
err_has "dump bad magic" "^atf: .*badmagic\.atf: offset 0: "
out_empty "dump bad magic"

# Every --json line parses, has exactly the specified keys in order, and the links
# printed for the index events and the detail records agree both ways.
JSON_CHECK='
import json, re, sys
layout, want_index, want_detail = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
index_keys = ["seq", "ts", "fid", "kind", "tid", "depth", "detail_seq"]
detail_keys = ["detail_seq", "index_seq", "type", "flags", "ts", "payload_len"]
forward, backward = {}, {}
for n, line in enumerate(sys.stdin, 1):
    pairs = json.loads(line, object_pairs_hook=lambda p: p)
    keys, o = [k for k, _ in pairs], dict(pairs)
    if keys == index_keys:
        assert not backward, "line %d: index event after detail records" % n
        assert o["seq"] == len(forward), "line %d: seq out of order" % n
        assert re.fullmatch("0x[0-9a-f]{16}", o["fid"]), "line %d: fid %r" % (n, o["fid"])
        assert o["kind"] in ("call", "return", "exception", "unknown"), "line %d" % n
        if layout == "2":
            assert o["tid"] is None and o["depth"] is None, "line %d: tid/depth not null" % n
        else:
            assert type(o["tid"]) is int and type(o["depth"]) is int, "line %d" % n
        forward[o["seq"]] = o["detail_seq"]
    elif keys == detail_keys:
        assert o["detail_seq"] == len(backward), "line %d: detail_seq out of order" % n
        backward[o["detail_seq"]] = o["index_seq"]
    else:
        raise SystemExit("line %d: keys %s" % (n, keys))
assert sorted(forward) == list(range(len(forward))), "index seq not 0..N-1"
assert len(forward) == want_index, "%d index events, expected %d" % (len(forward), want_index)
assert len(backward) == want_detail, "%d detail records, expected %d" % (len(backward), want_detail)
if forward and backward:
    linked = {d: s for s, d in forward.items() if d is not None}
    assert linked == backward, "links disagree"
'
# json_check NAME LAYOUT INDEX DETAIL CMD...: CMD's stdout passes JSON_CHECK.
json_check() {
    name=$1
    layout=$2
    nindex=$3
    ndetail=$4
    shift 4
    "$@" >"$OUT" 2>"$ERR"
    if python3 -c "$JSON_CHECK" "$layout" "$nindex" "$ndetail" <"$OUT" >"$ERR" 2>&1; then
        pass
    else
        fail "$name: $(tail -n 1 "$ERR")"
    fi
}
if command -v python3 >/dev/null 2>&1; then
    json_check "json layout 1" 1 1000 0 "$ATF" dump --json "$D/l1.atf"
    json_check "json layout 2" 2 1000 0 "$ATF" dump --json "$D/l2.atf"
    json_check "json thread layout 1" 1 300 100 "$ATF" dump --json --detail "$D/thread_1"
    json_check "json thread layout 2" 2 300 150 "$ATF" dump --json --detail "$D/thread_2"
    json_check "json detail file" 1 0 100 "$ATF" dump --json "$D/thread_1/detail.atf"
    json_check "json crash-left thread" 1 90 30 "$ATF" dump --json --detail "$D/thread_crash"
else
    echo "cli: python3 not found, JSON parse checks skipped"
fi

# A million events: every line is there, and the dump is quick.
start=$(date +%s%N 2>/dev/null)
lines=$( ("$ATF" dump --json "$D/big.atf"; echo $? >"$ERR") | wc -l | tr -d ' ')
end=$(date +%s%N 2>/dev/null)
if [ "$lines" -eq "$BIG" ] && [ "$(cat "$ERR")" = 0 ]; then
    pass
else
    fail "dump --json of $BIG events: $lines lines, exit status $(cat "$ERR")"
fi
case "$start$end" in
*[!0-9]*|"") ;;
*)
    ms=$(( (end - start) / 1000000 ))
    echo "cli: dump --json of $BIG events took $ms ms"
    if [ "$ms" -lt 5000 ]; then pass; else fail "dump --json of $BIG events took $ms ms"; fi
    ;;
esac

# ---- verify -----------------------------------------------------------------------------
expect 0 "verify finalized files" "$ATF" verify "$D/l1.atf" "$D/l2.atf" "$D/empty.atf"
out_has "verify finalized files" "^OK .*l1\.atf \(1000 events, crc ok "
out_has "verify finalized files" "^OK .*l2\.atf \(1000 events, crc ok "
out_lines "verify finalized files" 3
err_empty "verify finalized files"
expect 0 "verify thread dirs" "$ATF" verify "$D/thread_1" "$D/thread_2" "$D/thread_nodetail"
out_has "verify thread dirs" "^OK .*thread_1/index\.atf \(300 events, crc ok "
out_has "verify thread dirs" "^OK .*thread_1/detail\.atf \(100 detail records, crc ok "
out_has "verify thread dirs" "^OK .*thread_1 \(links ok"
out_has "verify thread dirs" "^OK .*thread_2 \(links ok"
out_has "verify thread dirs" "^OK .*thread_nodetail \("
expect 0 "verify dir with a trailing slash" "$ATF" verify "$D/thread_1/"
out_has "verify dir with a trailing slash" "^OK .*/thread_1/index\.atf "
if grep -q '//' "$OUT"; then fail "verify dir with a trailing slash: '//' in a path"; show; else pass; fi
expect 0 "verify --strict good files" "$ATF" verify --strict "$D/l1.atf" "$D/l2.atf" "$D/thread_1" "$D/thread_2"
expect 0 "verify detail file" "$ATF" verify "$D/thread_2/detail.atf"
out_has "verify detail file" "^OK .*detail\.atf \(150 detail records"
expect 0 "verify crash-left file" "$ATF" verify "$D/crash.atf"
out_has "verify crash-left file" "^recovered .*crash\.atf \(100 events: .*13 torn bytes"
expect 1 "verify --strict crash-left file" "$ATF" verify --strict "$D/crash.atf"
out_has "verify --strict crash-left file" "crash\.atf: offset 40: not finalized"
err_has "verify --strict crash-left file" "^atf verify: 1 problem in 1 of 1 PATH$"
expect 0 "verify crash-left layout 2" "$ATF" verify "$D/crash_l2.atf"
out_has "verify crash-left layout 2" "^recovered .*crash_l2\.atf \(77 events: .*31 torn bytes"
expect 0 "verify footer at end" "$ATF" verify "$D/footer_end.atf"
out_has "verify footer at end" "^recovered .*footer_end\.atf \(50 events: footer at end"
expect 1 "verify --strict footer at end" "$ATF" verify --strict "$D/footer_end.atf"
expect 0 "verify crash-left thread" "$ATF" verify "$D/thread_crash"
out_has "verify crash-left thread" "^recovered .*thread_crash/index\.atf \(90 events"
out_has "verify crash-left thread" "^recovered .*thread_crash/detail\.atf \(30 detail records"
out_has "verify crash-left thread" "^OK .*thread_crash \(links ok"
expect 1 "verify --strict crash-left thread" "$ATF" verify --strict "$D/thread_crash"
expect 0 "verify crc 0" "$ATF" verify "$D/crc0.atf"
out_has "verify crc 0" "^OK .*crc0\.atf \(100 events, crc not computed"
expect 1 "verify --strict crc 0" "$ATF" verify --strict "$D/crc0.atf"
out_has "verify --strict crc 0" "crc0\.atf: offset [0-9]+: CRC32-C not computed"
expect 1 "verify crc mismatch" "$ATF" verify "$D/badcrc.atf"
out_has "verify crc mismatch" "badcrc\.atf: offset 64: .*expected [0-9]+ \[0x[0-9a-f]+\], found"
expect 1 "verify footer mismatch" "$ATF" verify "$D/mismatch.atf"
out_has "verify footer mismatch" "mismatch\.atf: offset [0-9]+: "
expect 1 "verify bad magic" "$ATF" verify "$D/badmagic.atf"
out_has "verify bad magic" "badmagic\.atf: offset 0: "
expect 1 "verify short file" "$ATF" verify "$D/short.atf"
out_has "verify short file" "short\.atf: offset [0-9]+: "
expect 1 "verify broken link" "$ATF" verify "$D/thread_badlink"
out_has "verify broken link" "thread_badlink.*: offset [0-9]+: "
expect 1 "verify detail footer mismatch" "$ATF" verify "$D/thread_detail_mismatch"
out_has "verify detail footer mismatch" "thread_detail_mismatch/detail\.atf: offset [0-9]+: footer"
out_has "verify detail footer mismatch" "^OK .*thread_detail_mismatch/index\.atf "
expect 1 "verify link without detail.atf" "$ATF" verify "$D/thread_dangling"
out_has "verify link without detail.atf" "thread_dangling/index\.atf: offset 64: "
expect 1 "verify bad detail record" "$ATF" verify "$D/thread_badrecord"
out_has "verify bad detail record" "thread_badrecord/detail\.atf: offset 188: "
expect 1 "info bad detail record" "$ATF" info "$D/thread_badrecord"
out_has "info bad detail record" "^events: +30$"
err_has "info bad detail record" "^atf: .*thread_badrecord/detail\.atf: offset 188: "
expect 1 "dump bad detail record" "$ATF" dump --json "$D/thread_badrecord"
err_has "dump bad detail record" "^atf: .*thread_badrecord/detail\.atf: offset 188: "
expect 0 "verify --strict empty file" "$ATF" verify --strict "$D/empty.atf"
expect 1 "verify missing file" "$ATF" verify "$D/no_such.atf"
out_has "verify missing file" "no_such\.atf: "
expect 1 "verify good and bad" "$ATF" verify "$D/l1.atf" "$D/badcrc.atf" "$D/l2.atf"
out_has "verify good and bad" "^OK .*l1\.atf "
out_has "verify good and bad" "^OK .*l2\.atf "
out_has "verify good and bad" "badcrc\.atf: offset 64: "
err_has "verify good and bad" "^atf verify: 1 problem in 1 of 3 PATHs$"

finish
