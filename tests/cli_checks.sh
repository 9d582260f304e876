#!/bin/sh
# Checks of the atf command ($ATF) on files written by cli_gen ($BUILD/tests/cli_gen):
# exit statuses, usage handling, and the output of info, dump and verify on finalized
# files of both layouts, thread directories with detail, files left by a crash, and
# damaged files; then sessions recorded by `atf gen` and by the hello example (info, the
# merged dump and its filters, verify, detail modes, drop accounting), sessions with a
# damaged thread or manifest.json and session_* directories (every session command),
# recover on crash-like copies, ktrace on byte-built files, and make install / uninstall.
# Ends with the line "cli: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
GEN=$BUILD/tests/cli_gen
D=$BUILD/tests/cli_files
OUT=$BUILD/tests/cli_checks.out
ERR=$BUILD/tests/cli_checks.err
BIG=1000000
CHECK_NAME=cli
. "$(dirname "$0")/check_lib.sh"

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
# every command's help comes from the one table: `atf NAME --help` and `atf help NAME`
# print the same text, and `atf --help` lists the command
for c in info dump verify gen recover ktrace stats tree export diff; do
    expect 0 "$c --help" "$ATF" "$c" --help
    out_has "$c --help" "^usage: atf $c "
    err_empty "$c --help"
    cp "$OUT" "$OUT.help"
    expect 0 "help $c" "$ATF" help "$c"
    out_has "help $c" "^usage: atf $c "
    if cmp -s "$OUT" "$OUT.help"; then pass; else fail "help $c: not the text of $c --help"; fi
    expect 0 "--help lists $c" "$ATF" --help
    out_has "--help lists $c" "^  $c +[^ ]"
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
# a file left by a crash: its events, then a warning naming the file (a lone file has no
# thread_N to name) and the byte offset, and exit status 1, as for a thread of a session
expect 1 "dump --json crash-left file" "$ATF" dump --json "$D/crash.atf"
out_lines "dump --json crash-left file" 100
err_has "dump --json crash-left file" "^atf: $D/crash\.atf: offset [0-9]+: a torn last record "
expect 1 "dump --json crash-left thread" "$ATF" dump --detail --json "$D/thread_crash"
out_lines "dump --json crash-left thread" 120
err_has "dump --json crash-left thread" "^atf: $D/thread_crash/(index|detail)\.atf: offset [0-9]+: "
expect 1 "dump --json crash-left detail file" "$ATF" dump --json "$D/thread_crash/detail.atf"
out_lines "dump --json crash-left detail file" 30
err_has "dump --json crash-left detail file" "^atf: $D/thread_crash/detail\.atf: offset [0-9]+: "
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
out_has "verify crash-left thread" "^recovered .*thread_crash \(links ok"
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

# ---- dump filters on files --------------------------------------------------------------
expect 0 "dump --limit file" "$ATF" dump --json --limit 3 "$D/l1.atf"
out_lines "dump --limit file" 3
out_line "dump --limit file" 1 "$L1_FIRST"
expect 0 "dump --from file" "$ATF" dump --json --from 1000001503 --limit 1 "$D/l1.atf"
out_line "dump --from file" 1 "$L1_SECOND"
expect 0 "dump --to file" "$ATF" dump --json --to=1000001503 "$D/l1.atf"
out_lines "dump --to file" 2
expect 0 "dump --limit 0" "$ATF" dump --json --limit 0 "$D/l1.atf"
out_empty "dump --limit 0"
expect 2 "dump --from not a number" "$ATF" dump --from 12x "$D/l1.atf"
err_has "dump --from not a number" "--from: '12x' is not a number"
expect 2 "dump --limit without value" "$ATF" dump "$D/l1.atf" --limit
err_has "dump --limit without value" "option '--limit' needs a value"
expect 2 "dump --thread on a file" "$ATF" dump --thread 0 "$D/l1.atf"
expect 2 "dump --json=1" "$ATF" dump --json=1 "$D/l1.atf"

# ---- sessions recorded by atf gen and by the hello example -------------------------------
SD=$BUILD/tests/cli_sessions
rm -rf "$SD"
# gen_session NAME ARGS...: runs atf gen ARGS ROOT with root $SD/NAME; $S is the pid_* dir.
gen_session() {
    gname=$1
    shift
    expect 0 "gen $gname" "$ATF" gen "$@" "$SD/$gname"
    S=$(cat "$OUT")
    out_lines "gen $gname" 1
    case "$S" in
    "$SD/$gname"/session_*/pid_*) pass ;;
    *) fail "gen $gname: printed '$S', not a pid_* directory under $SD/$gname" ;;
    esac
    err_empty "gen $gname"
}
# manifest_check NAME PY S [ARG]: python3 code PY gets the manifest of $S as `m`, and ARG
# as sys.argv[2].
manifest_check() {
    if [ -z "$PY" ]; then return; fi
    if python3 -c "import json, sys
m = json.load(open(sys.argv[1] + '/manifest.json'))
$2" "$3" "${4:-}" >"$ERR" 2>&1; then pass; else fail "$1: $(tail -n 1 "$ERR")"; fi
}
PY=
command -v python3 >/dev/null 2>&1 && PY=python3

gen_session plain --threads 3 --events 2000 --seed 7
S1=$S
# pack and unpack -o: the directory is made when it does not exist (and its parents), the
# round trip gives the layout-1 files back byte for byte; a file as -o is a usage error;
# a directory made for nothing converted is gone again, with the parents made for it
PK=$SD/pack_o
expect 0 "pack -o a new directory" "$ATF" pack -o "$PK/new/dir" "$S1"
expect 0 "pack -o: the copy verifies" "$ATF" verify --strict "$PK/new/dir/${S1##*/}"
expect 0 "unpack -o a new directory" "$ATF" unpack -o "$PK/back" "$PK/new/dir/${S1##*/}"
for t in 0 1 2; do
    check "pack, unpack -o: thread_$t's index.atf as it was" \
        cmp "$S1/thread_$t/index.atf" "$PK/back/${S1##*/}/thread_$t/index.atf"
done
: >"$PK/file"
expect 2 "pack -o a file" "$ATF" pack -o "$PK/file" "$S1"
err_has "pack -o a file" "-o $PK/file: not a directory"
expect 1 "pack -o, nothing to convert" "$ATF" pack -o "$PK/none/deeper" "$PK/missing"
if [ -e "$PK/none" ]; then fail "pack -o, nothing to convert: the directories made stayed"; else pass; fi
if [ -d "$PK" ]; then pass; else fail "pack -o, nothing to convert: a directory it did not make went"; fi
expect 1 "pack -o DIR/, nothing to convert" "$ATF" pack -o "$PK/none/deeper/" "$PK/missing"
if [ -e "$PK/none" ]; then fail "pack -o DIR/: the directories made stayed"; else pass; fi
LONG=$(printf '%0300d' 0)
expect 1 "pack -o, a name too long under a new directory" "$ATF" pack -o "$PK/none/$LONG/x" "$S1"
if [ -e "$PK/none" ]; then fail "pack -o failing halfway: the directory made stayed"; else pass; fi
expect 1 "pack, nothing to convert, no -o" "$ATF" pack "$PK/missing"
expect 0 "pack, packed already, no -o" "$ATF" pack "$PK/new/dir/${S1##*/}"

expect 0 "info session" "$ATF" info "$S1"
out_has "info session" "^session: +$S1$"
out_has "info session" "^manifest: +ok \(state closed\)$"
out_has "info session" "^layout: +1 "
out_has "info session" "^clock_type: +boottime \(3\)$"
out_has "info session" "^threads: +3$"
out_has "info session" "^events: +6000$"
out_has "info session" "^events_dropped: +0 \(manifest\)$"
out_has "info session" "^symbols: +8$"
out_has "info session" "^time_start_ns: +[1-9][0-9]*$"
out_has "info session" "^gaps: +0 \(0 events lost, from gaps\.atf\)$"
out_has "info session" "^slot +os_tid +events +dropped +gaps +lost +detail +out_of_order +index +detail_file +name$"
for k in 0 1 2; do
    out_has "info session" "^ +$k +[0-9]+ +2000 +0 +0 +0 +0 +no +finalized,crc-ok +- +gen-$k$"
done
err_empty "info session"
expect 0 "info session, trailing slash" "$ATF" info "$S1/"
out_has "info session, trailing slash" "^threads: +3$"
expect 0 "verify session" "$ATF" verify "$S1"
out_has "verify session" "^OK .*/thread_2 \(2000 events, no detail\)$"
out_has "verify session" "^OK $S1 \(session: manifest ok \(state closed\), 3 threads, 6000 events; manifest drop counts: 0 events, 0 detail records\)$"
expect 0 "verify --strict session" "$ATF" verify --strict "$S1"
expect 0 "dump --json session" "$ATF" dump --json "$S1"
out_lines "dump --json session" 6000
cp "$OUT" "$SD/plain.json"
out_has "dump --json session" '^\{"seq":0,"ts":[0-9]+,"fid":"0x000000000000000[1-8]","kind":"call","tid":[0-9]+,"depth":0,"detail_seq":null,"thread":0,"name":"gen_[a-z]+","mangled":"gen_[a-z]+"\}$'
expect 0 "dump session table" "$ATF" dump "$S1"
out_lines "dump session table" 6001
out_has "dump session table" "^thread +seq +ts +fid +kind +tid +depth +detail +name$"
out_has "dump session table" "^ +[0-9]+ +[0-9]+ +[0-9]+ +0x[0-9a-f]{16} +(call|return|exception) +[0-9]+ +[0-9]+ +- +gen_[a-z]+$"
# the columns line up: the name (the last column, never padded) starts at one place
starts=$(awk '{ match($0, /[^ ]+$/); print RSTART }' "$OUT" | sort -u | wc -l | tr -d ' ')
if [ "$starts" -eq 1 ]; then pass; else fail "dump session table: names start at $starts different columns"; fi
if grep -q ' $' "$OUT"; then fail "dump session table: a line ends with spaces"; else pass; fi

# The merged dump: keys in order, timestamps never decrease, (ts, thread, seq) order, every
# thread's seq 0..N-1 in order, calls and returns nest per thread.
MERGE_CHECK='
import json, sys
want_threads, want_each = int(sys.argv[1]), int(sys.argv[2])
keys_want = ["seq", "ts", "fid", "kind", "tid", "depth", "detail_seq", "thread", "name", "mangled"]
prev, seqs, stacks = None, {}, {}
for n, line in enumerate(sys.stdin, 1):
    pairs = json.loads(line, object_pairs_hook=lambda p: p)
    keys, o = [k for k, _ in pairs], dict(pairs)
    assert keys == keys_want, "line %d: keys %s" % (n, keys)
    key = (o["ts"], o["thread"], o["seq"])
    assert prev is None or key > prev, "line %d: %s after %s" % (n, key, prev)
    prev = key
    t = o["thread"]
    assert o["seq"] == seqs.get(t, 0), "line %d: thread %d seq %d" % (n, t, o["seq"])
    seqs[t] = o["seq"] + 1
    st = stacks.setdefault(t, [])
    if o["kind"] == "call":
        assert o["depth"] == len(st), "line %d: depth %d, %d open calls" % (n, o["depth"], len(st))
        st.append(o["fid"])
    else:
        assert st and st.pop() == o["fid"], "line %d: return does not match its call" % n
        assert o["depth"] == len(st), "line %d: return depth" % n
assert len(seqs) == want_threads, "%d threads" % len(seqs)
assert all(v == want_each for v in seqs.values()), "events per thread: %s" % seqs
assert all(not s for s in stacks.values()), "calls left open"
'
if [ -n "$PY" ]; then
    if python3 -c "$MERGE_CHECK" 3 2000 <"$SD/plain.json" >"$ERR" 2>&1; then pass; else fail "merged dump: $(tail -n 1 "$ERR")"; fi
fi

# filters: --limit, --thread (repeatable), --from / --to against the full merged dump
expect 0 "dump session --limit" "$ATF" dump --json --limit 10 "$S1"
out_lines "dump session --limit" 10
if head -n 10 "$SD/plain.json" | cmp -s - "$OUT"; then pass; else fail "dump session --limit: not the first 10 merged events"; fi
expect 0 "dump session --thread" "$ATF" dump --json --thread 1 "$S1"
out_lines "dump session --thread" 2000
if grep -v '"thread":1,"name":"[^"]*","mangled":"[^"]*"}$' "$OUT" | grep -q .; then fail "dump session --thread 1: other threads"; else pass; fi
expect 0 "dump session --thread twice" "$ATF" dump --json --thread 0 --thread 2 "$S1"
out_lines "dump session --thread twice" 4000
if grep -q '"thread":1}$' "$OUT"; then fail "dump session --thread 0 --thread 2: thread 1"; else pass; fi
from=$(sed -n '1500s/.*"ts":\([0-9]*\),.*/\1/p' "$SD/plain.json")
to=$(sed -n '4500s/.*"ts":\([0-9]*\),.*/\1/p' "$SD/plain.json")
nslice=$(sed 's/.*"ts":\([0-9]*\),.*/\1/' "$SD/plain.json" | awk -v a="$from" -v b="$to" '$1 >= a + 0 && $1 <= b + 0' | wc -l | tr -d ' ')
expect 0 "dump session --from --to" "$ATF" dump --json --from "$from" --to "$to" "$S1"
out_lines "dump session --from --to" "$nslice"
grep -F -x -f "$OUT" "$SD/plain.json" | cmp -s - "$OUT" && pass || fail "dump session --from --to: not a slice of the full dump"
expect 0 "dump session --from --to --thread --limit" "$ATF" dump --json --from "$from" --to "$to" --thread 2 --limit 7 "$S1"
out_lines "dump session --from --to --thread --limit" 7
expect 0 "dump session --to 0" "$ATF" dump --json --to 0 "$S1"
out_empty "dump session --to 0"
expect 2 "dump session --thread missing" "$ATF" dump --thread 9 "$S1"
err_has "dump session --thread missing" "has no thread_9"
expect 2 "dump session --detail" "$ATF" dump --detail "$S1"

# determinism: the same seed gives the same content but for timestamps and thread ids
strip() { sed 's/"ts":[0-9]*,//; s/"tid":[0-9]*,//' "$1" | sort; }
gen_session plain_again --threads 3 --events 2000 --seed 7
"$ATF" dump --json "$S" >"$SD/again.json"
gen_session other_seed --threads 3 --events 2000 --seed 8
"$ATF" dump --json "$S" >"$SD/other.json"
strip "$SD/plain.json" >"$SD/plain.stripped"
if strip "$SD/again.json" | cmp -s - "$SD/plain.stripped"; then pass; else fail "gen --seed 7 twice: different content"; fi
if strip "$SD/other.json" | cmp -s - "$SD/plain.stripped"; then fail "gen --seed 8: same content as --seed 7"; else pass; fi

# a manifest written before any thread attached (a crash soon after the start) lists no
# thread: the session is read by scanning, and reported as incomplete
cp -r "$S1" "$SD/early"
sed 's/"threads":\[.*\],"time_start_ns"/"threads":[],"time_start_ns"/' "$S1/manifest.json" >"$SD/early/manifest.json"
rm -rf "$SD/early/thread_1" "$SD/early/thread_2"
expect 0 "info session, manifest lists no thread" "$ATF" info "$SD/early"
out_has "info session, manifest lists no thread" "^manifest: +incomplete "
out_has "info session, manifest lists no thread" "^threads: +1$"
expect 0 "verify session, manifest lists no thread" "$ATF" verify --strict "$SD/early"
out_has "verify session, manifest lists no thread" "^OK $SD/early \(session: manifest incomplete "

# the hello example's session
mkdir -p "$SD"
if "$BUILD/examples/hello" "$SD/hello" >"$OUT" 2>"$ERR"; then pass; else fail "examples/hello failed"; fi
H=$(sed -n 's/^recorded //p' "$OUT")
expect 0 "info hello session" "$ATF" info "$H"
out_has "info hello session" "^threads: +1$"
out_has "info hello session" "^events: +8$"
out_has "info hello session" "^symbols: +2$"
out_has "info hello session" "^ +0 +[0-9]+ +8 +0 +0 +0 +0 +no +finalized,crc-ok +- +-$"
expect 0 "dump hello session" "$ATF" dump --json "$H"
out_lines "dump hello session" 8
out_has "dump hello session" '^\{"seq":7,"ts":[0-9]+,"fid":"0x0000000000000001","kind":"return","tid":[0-9]+,"depth":0,"detail_seq":null,"thread":0,"name":"[^"]+","mangled":"[^"]+"\}$'
if [ -n "$PY" ]; then
    if python3 -c "$MERGE_CHECK" 1 8 <"$OUT" >"$ERR" 2>&1; then pass; else fail "hello merged dump: $(tail -n 1 "$ERR")"; fi
fi
expect 0 "verify --strict hello session" "$ATF" verify --strict "$H"

# detail modes and layout 2: verify --strict passes, every produced event is written or
# counted as dropped, the links are there
COUNTS='
for t in m["threads"]:
    assert t["events_written"] + t["events_dropped"] == int(sys.argv[2]), "thread %s: %s" % (t["id"], t)
    assert t["finalized"], "thread %s not finalized" % t["id"]
assert m["state"] == "closed"
'
gen_session always --threads 3 --events 2000 --detail always --detail-every 4
SA=$S
expect 0 "verify --strict detail always" "$ATF" verify --strict "$SA"
out_has "verify --strict detail always" "^OK .*/thread_0 \(links ok both ways: 2000 events, 500 detail records\)$"
manifest_check "manifest detail always" "$COUNTS
assert all(t['detail_written'] == 500 and t['has_detail'] for t in m['threads'])
" "$SA" 2000
expect 0 "info detail always" "$ATF" info "$SA"
out_has "info detail always" "^detail_records: +1500$"
out_has "info detail always" "^ +0 +[0-9]+ +2000 +0 +0 +0 +500 +no +finalized,crc-ok +finalized,crc-ok +gen-0$"
gen_session windowed --threads 3 --events 2000 --detail windowed --detail-every 4 --post-roll-ms 1000
expect 0 "verify --strict detail windowed" "$ATF" verify --strict "$S"
manifest_check "manifest detail windowed" "$COUNTS
assert all(t['detail_written'] == 500 for t in m['threads']), [t['detail_written'] for t in m['threads']]
" "$S" 2000
gen_session untriggered --threads 2 --events 2000 --detail windowed --detail-every 4 --trigger-every-ms 0
expect 0 "verify --strict windowed, no trigger" "$ATF" verify --strict "$S"
manifest_check "manifest windowed, no trigger" "$COUNTS
assert all(t['detail_written'] == 0 and t['detail_dropped'] == 500 for t in m['threads'])
" "$S" 2000
if ls "$S"/thread_*/detail.atf >/dev/null 2>&1; then fail "windowed, no trigger: a detail.atf"; else pass; fi
gen_session layout2 --threads 2 --events 3000 --detail always --layout 2
expect 0 "verify --strict layout 2 session" "$ATF" verify --strict "$S"
expect 0 "info layout 2 session" "$ATF" info "$S"
out_has "info layout 2 session" "^layout: +2 "
expect 0 "dump layout 2 session" "$ATF" dump --json --limit 1 "$S"
out_has "dump layout 2 session" '"tid":null,"depth":null,"detail_seq":0,"thread":[01],"name":"gen_[a-z]+","mangled":"gen_[a-z]+"\}$'
gen_session drops --threads 2 --events 300000 --ring-events 64 --detail always --overflow drop
expect 0 "verify --strict session with drops" "$ATF" verify --strict "$S"
manifest_check "manifest with drops" "$COUNTS
assert any(t['events_dropped'] for t in m['threads']), 'no drop with a 64-slot ring'
" "$S" 300000
expect 0 "stats session with drops" "$ATF" stats "$S"
if grep -q '^paused: ' "$OUT"; then fail "stats session with drops: a pause under drop"; else pass; fi

# block with a small ring: the threads drain their own rings, and the time it takes (in
# the manifest per thread) is said by stats and info
gen_session paused --threads 2 --events 200000 --ring-events 64 --overflow block
SP=$S
manifest_check "manifest with pauses" "$COUNTS
assert all(t['waits'] > 0 and t['paused_ns'] > 0 for t in m['threads']), [(t['waits'], t.get('paused_ns')) for t in m['threads']]
" "$S" 200000
expect 0 "stats paused session" "$ATF" stats "$S"
out_has "stats paused session" "^paused: [0-9.]+(ns|us|ms|s) in 2 threads \\([0-9]+ full rings drained by the thread itself"
expect 0 "stats --json paused session" "$ATF" stats --json "$S"
out_has "stats --json paused session" '"paused_ns":[1-9][0-9]*,"pauses":[1-9][0-9]*,"pauses_ns":[1-9][0-9]*,"name":"gen-0"'
# every pause is placed (pauses.atf): the manifest's total, under its own key, and left out
# of the functions
cp "$OUT" "$SD/paused.stats.json"
manifest_check "stats --json pauses: pauses.atf places the manifest's paused_ns" "
import struct
s = json.load(open(sys.argv[2]))
for t in m['threads']:
    b = open('%s/thread_%d/pauses.atf' % (sys.argv[1], t['id']), 'rb').read()
    placed = sum(struct.unpack_from('<Q', b, o + 16)[0] - struct.unpack_from('<Q', b, o + 8)[0]
                 for o in range(16, len(b) - 31, 32))
    assert placed == t['paused_ns'], (t['id'], placed, t['paused_ns'])
# a pause after a thread's last event lies in no function: the walk meets the others
assert 0 < s['pauses']['total_ns'] <= sum(t['paused_ns'] for t in m['threads']), s['pauses']
assert s['pauses']['total_ns'] == sum(t['pauses_ns'] for t in s['threads']), s['threads']
assert s['pauses']['count'] > 0 and all(f['name'] != 'tracer pause' for f in s['functions'])
" "$S" "$SD/paused.stats.json"
expect 0 "stats paused session (text)" "$ATF" stats "$S"
out_has "stats paused session: pauses left out" "^paused: .*: left out of the times of the functions they lie in$"
expect 0 "export chrome paused session" "$ATF" export --format chrome "$S"
n=$(grep -o '"name":"tracer pause"' "$OUT" | wc -l | tr -d ' ')
if [ -n "$PY" ]; then # as manifest_check: counted only where python3 can read the JSON
    want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pauses']['count'])" "$SD/paused.stats.json")
    if [ "$n" -eq "$want" ]; then pass; else fail "export chrome paused session: $n tracer pause slices, stats counts $want"; fi
fi
expect 0 "info paused session" "$ATF" info "$S"
out_has "info paused session" "^paused: +[0-9.]+(ns|us|ms|s) \\([0-9]+ full rings drained by their own threads"

# an export too big for a browser's viewer says so (and a small one says nothing)
gen_session big --threads 2 --events 1000000
expect 0 "export chrome, big" "$ATF" export --format chrome -o "$SD/big.json" "$S"
err_has "export chrome, big" "^atf export: .*/big\.json is [0-9]+ MiB: a viewer in a browser may open it slowly"
rm -rf "$SD/big.json" "$SD/big"
expect 0 "export chrome, small" "$ATF" export --format chrome -o "$SD/small.json" "$SP"
err_empty "export chrome, small"
rm -f "$SD/small.json"

# gaps: a drop session loses events in many places; info and verify show each thread's
# gaps and events lost as the manifest counts them, and stats, tree and the exports never
# pair a call and a return across a gap: every slice lies within one stretch of events
# between two gaps (the stretches read here from gaps.atf and dump, not from the tool).
gen_session gaps --threads 3 --events 20000 --ring-events 64 --overflow drop --seed 3
SG=$S
manifest_check "manifest with gaps" "$COUNTS
assert m['overflow'] == 'drop', m.get('overflow')
assert all(t['gaps'] > 0 and t['events_dropped'] > 0 for t in m['threads']), m['threads']
" "$SG" 20000
expect 0 "info session with gaps" "$ATF" info "$SG"
expect 0 "verify --strict session with gaps" "$ATF" verify --strict "$SG"
cp "$OUT" "$BUILD/tests/cli_gaps_verify.out"
if [ -n "$PY" ]; then
    # per thread: slot written dropped gaps lost, as the manifest says
    python3 -c "import json, sys
m = json.load(open(sys.argv[1] + '/manifest.json'))
for t in m['threads']:
    print(t['id'], t['events_written'], t['events_dropped'], t['gaps'],
          t['events_dropped'] + t['events_lost_io'])" "$SG" >"$BUILD/tests/cli_gaps_counts"
    tg=0
    tl=0
    while read -r k written dropped gaps lost; do
        tg=$((tg + gaps))
        tl=$((tl + lost))
        expect 0 "info session with gaps" "$ATF" info "$SG"
        out_has "info session with gaps, thread $k" "^ +$k +[0-9]+ +$written +$dropped +$gaps +$lost +0 +no +finalized,crc-ok +- +gen-$k$"
        expect 0 "info thread with gaps" "$ATF" info "$SG/thread_$k"
        out_has "info thread with gaps, thread $k" "^kind: +gaps$"
        out_has "info thread with gaps, thread $k" "^gaps: +$gaps$"
        out_has "info thread with gaps, thread $k" "^events_lost: +$lost$"
        if grep -Eq "^OK .*/thread_$k \($written events, no detail; $gaps gaps?, $lost events lost\)$" \
            "$BUILD/tests/cli_gaps_verify.out"; then pass; else
            fail "verify session with gaps: no line for thread_$k with $gaps gaps, $lost events lost"
            sed -n '1,8s/^/    stdout: /p' "$BUILD/tests/cli_gaps_verify.out"
        fi
    done <"$BUILD/tests/cli_gaps_counts"
    expect 0 "info session with gaps" "$ATF" info "$SG"
    out_has "info session with gaps" "^gaps: +$tg \($tl events lost, from gaps\.atf\)$"
    expect 0 "verify session with gaps" "$ATF" verify "$SG"
    out_has "verify session with gaps" "^OK $SG \(session: .*; $tg gaps, $tl events lost\)$"
    expect 0 "stats session with gaps" "$ATF" stats "$SG"
    out_has "stats session with gaps" "^gaps: $tg in 3 threads, $tl events lost while recording "
    out_has "stats session with gaps" "^  [0-9]+ frames cut by a gap "
    expect 0 "tree session with gaps" "$ATF" tree "$SG"
    n=$(grep -c ' ~ gap: [0-9]* events lost (dropped)$' "$OUT")
    if [ "$n" -eq "$tg" ]; then pass; else fail "tree session with gaps: $n gap lines, expected $tg"; fi
    "$ATF" stats --json "$SG" >"$BUILD/tests/cli_gaps_stats.json" 2>"$ERR"
    "$ATF" export --format chrome -o "$BUILD/tests/cli_gaps_chrome.json" "$SG" 2>>"$ERR"
    for k in 0 1 2; do "$ATF" dump --json "$SG/thread_$k" >"$BUILD/tests/cli_gaps_dump_$k"; done
    if python3 -c '
import json, struct, sys
from decimal import Decimal
sd, build = sys.argv[1], sys.argv[2]
m = json.load(open(sd + "/manifest.json"))
spans, tid_segments, longest = {}, {}, 0
for t in m["threads"]:
    k = t["id"]
    ts = [json.loads(l)["ts"] for l in open("%s/tests/cli_gaps_dump_%d" % (build, k))]
    raw = open("%s/thread_%d/gaps.atf" % (sd, k), "rb").read()
    assert raw[:4] == b"ATG2", "gaps.atf magic"
    cuts = sorted({struct.unpack_from("<Q", raw, 16 + 32 * i)[0] for i in range((len(raw) - 16) // 32)})
    assert len(cuts) == t["gaps"], "thread %d: %d gap records, manifest %d" % (k, len(cuts), t["gaps"])
    lost = sum(struct.unpack_from("<Q", raw, 24 + 32 * i)[0] for i in range((len(raw) - 16) // 32))
    assert lost == t["events_dropped"] + t["events_lost_io"], "thread %d: lost %d" % (k, lost)
    bounds = [0] + [c for c in cuts if 0 < c < len(ts)] + [len(ts)]
    segs = [(ts[a], ts[b - 1]) for a, b in zip(bounds, bounds[1:]) if b > a]
    tid_segments[t["os_thread_id"]] = segs
    longest = max([longest] + [e - b for b, e in segs])
# stats: no call longer than the longest stretch without a gap
st = json.load(open(build + "/tests/cli_gaps_stats.json"))
for f in st["functions"]:
    assert f["max_ns"] <= longest, "%s: max %d ns > %d ns without a gap" % (f["name"], f["max_ns"], longest)
gaps = {t["tid"]: t for t in st["threads"]}
for t in m["threads"]:
    g = gaps[t["os_thread_id"]]
    assert g["gaps"] == t["gaps"] and g["events_lost"] == t["events_dropped"] + t["events_lost_io"], g
# chrome: every slice within one stretch; one instant per gap
tr = json.load(open(build + "/tests/cli_gaps_chrome.json"), parse_float=Decimal)
stacks, instants = {}, 0
for e in tr["traceEvents"]:
    if e["ph"] == "M":
        continue
    ns = int(Decimal(e["ts"]) * 1000)
    if e["ph"] == "i":
        instants += 1
    elif e["ph"] == "B":
        stacks.setdefault(e["tid"], []).append(ns)
    else:
        b = stacks[e["tid"]].pop()
        assert any(s <= b and ns <= x for s, x in tid_segments[e["tid"]]), \
            "tid %d: slice [%d, %d] spans a gap" % (e["tid"], b, ns)
assert all(not s for s in stacks.values()), "unbalanced"
assert instants == sum(t["gaps"] for t in m["threads"]), "%d gap events" % instants
' "$SG" "$BUILD" >"$ERR" 2>&1; then pass; else fail "stats and chrome export across gaps: $(tail -n 1 "$ERR")"; fi
fi
expect 0 "export perfetto session with gaps" "$ATF" export --format perfetto -o "$BUILD/tests/cli_gaps.pftrace" "$SG"
# a gaps.atf that is damaged: verify and info report it, stats warns and goes on
rm -rf "$SD/gaps_bad"
cp -r "$SG" "$SD/gaps_bad"
printf 'XXXX' | dd of="$SD/gaps_bad/thread_1/gaps.atf" bs=1 seek=0 conv=notrunc 2>/dev/null
expect 1 "verify damaged gaps.atf" "$ATF" verify "$SD/gaps_bad"
out_has "verify damaged gaps.atf" "^$SD/gaps_bad/thread_1/gaps\.atf: offset 0: "
expect 1 "verify damaged gaps.atf, thread" "$ATF" verify "$SD/gaps_bad/thread_1"
out_has "verify damaged gaps.atf, thread" "gaps\.atf: offset 0: "
expect 1 "info damaged gaps.atf" "$ATF" info "$SD/gaps_bad"
err_has "info damaged gaps.atf" "^atf: .*thread_1/gaps\.atf: offset 0: "
expect 1 "info damaged gaps.atf, thread" "$ATF" info "$SD/gaps_bad/thread_1"
err_has "info damaged gaps.atf, thread" "^atf: .*thread_1/gaps\.atf: offset 0: "
expect 1 "stats damaged gaps.atf" "$ATF" stats "$SD/gaps_bad"
out_has "stats damaged gaps.atf" "^functions: "
err_has "stats damaged gaps.atf" "^atf: thread_1: .*thread_1/gaps\.atf: offset 0: "
# a closed manifest whose gap count disagrees with gaps.atf
if [ -n "$PY" ]; then
    rm -rf "$SD/gaps_count"
    cp -r "$SG" "$SD/gaps_count"
    python3 -c "import json, sys
p = sys.argv[1] + '/manifest.json'
m = json.load(open(p))
m['threads'][0]['gaps'] += 1
json.dump(m, open(p, 'w'))" "$SD/gaps_count"
    expect 1 "verify manifest gaps disagree" "$ATF" verify "$SD/gaps_count"
    out_has "verify manifest gaps disagree" "^thread_0: .*manifest\.json: gaps of a thread disagrees with its gaps\.atf"
fi

expect 2 "gen --threads 0" "$ATF" gen --threads 0 "$SD/x"
expect 2 "gen --detail bogus" "$ATF" gen --detail sometimes "$SD/x"
err_has "gen --detail bogus" "'sometimes' is not off, always or windowed"
expect 2 "gen --layout 4" "$ATF" gen --layout 4 "$SD/x"
err_has "gen --layout 4" "'4' is not packed, 1 or 2"
expect 2 "gen --layout packed --detail windowed" "$ATF" gen --layout packed --detail windowed "$SD/x"
expect 2 "gen --detail-every 0" "$ATF" gen --detail-every 0 "$SD/x"
expect 2 "gen without ROOT" "$ATF" gen --events 5
if [ -e "$SD/x" ]; then fail "gen with a usage error created its ROOT"; else pass; fi

# ---- damage: every session command names what it cannot read, and does the rest ----------
# one thread's index.atf replaced by random bytes, or cut to 40 bytes (shorter than its
# header): each command exits 1, names the thread, the file and the byte offset on stderr,
# and still reports threads 0 and 2
DM=$SD/damaged
rm -rf "$DM" && mkdir -p "$DM"
cp -r "$S1" "$DM/random" && cp -r "$S1" "$DM/cut"
{ printf 'not-atf:'; head -c 4088 /dev/urandom; } >"$DM/random/thread_1/index.atf"
head -c 40 "$S1/thread_1/index.atf" >"$DM/cut.atf" && mv "$DM/cut.atf" "$DM/cut/thread_1/index.atf"
for k in random cut; do
    P=$DM/$k
    named="^atf: thread_1: $P/thread_1/index\.atf: offset [0-9]+: "
    expect 1 "info $k thread" "$ATF" info "$P"
    err_has "info $k thread" "$named"
    out_has "info $k thread" "^ +1 +[0-9]+ +- +[0-9]+ +- +- +- +- +unreadable +- +gen-1$"
    out_has "info $k thread" "^ +2 +[0-9]+ +2000 +0 +0 +0 +0 +no +finalized,crc-ok +- +gen-2$"
    expect 1 "dump $k thread" "$ATF" dump --json "$P"
    err_has "dump $k thread" "$named"
    out_lines "dump $k thread" 4000
    if grep -q '"thread":1,' "$OUT"; then fail "dump $k thread: events of thread 1"; else pass; fi
    expect 1 "verify $k thread" "$ATF" verify "$P"
    err_has "verify $k thread" "$named"
    out_has "verify $k thread" "^$P/thread_1/index\.atf: offset [0-9]+: "
    out_has "verify $k thread" "^OK $P/thread_2 \(2000 events, no detail\)$"
    expect 1 "stats $k thread" "$ATF" stats --json "$P"
    err_has "stats $k thread" "$named"
    out_has "stats $k thread" '\{"slot":0,"tid":[0-9]+,"events":2000,'
    out_has "stats $k thread" '\{"slot":2,"tid":[0-9]+,"events":2000,'
    expect 1 "tree $k thread" "$ATF" tree "$P"
    err_has "tree $k thread" "$named"
    out_has "tree $k thread" "^thread 0  tid [0-9]+  gen-0  2000 events$"
    out_has "tree $k thread" "^thread 2  tid [0-9]+  gen-2  2000 events$"
    expect 1 "export $k thread" "$ATF" export --format chrome -o "$DM/$k.json" "$P"
    err_has "export $k thread" "$named"
    if [ "$(grep -c '"ph":"B"' "$DM/$k.json" 2>/dev/null)" -gt 0 ]; then pass; else fail "export $k thread: no events written"; fi
done

# a PATH that does not exist: the same words from every command, and no offset
for c in info dump verify stats tree "export --format chrome"; do
    # shellcheck disable=SC2086
    expect 1 "$c missing PATH" "$ATF" $c "$SD/no_such_dir"
    cat "$ERR" >>"$OUT"
    out_has "$c missing PATH" "^(atf: )?$SD/no_such_dir: file or directory not found$"
done

# a manifest.json that is not JSON: its byte offset, from every session command
rm -rf "$DM/manifest" && cp -r "$S1" "$DM/manifest"
printf '{"threads": [ {"id": 0,}' >"$DM/manifest/manifest.json"
for c in info dump verify stats tree; do
    expect 1 "$c broken manifest" "$ATF" $c "$DM/manifest"
    cat "$ERR" >>"$OUT"
    out_has "$c broken manifest" "$DM/manifest/manifest\.json: offset 23: "
done

# a session_* directory (what the auto-tracer writes): info and verify take each of its
# pid_* directories, the others its only one, or say which to give
R1=$(dirname "$S1")
expect 0 "info session_* directory" "$ATF" info "$R1"
out_has "info session_* directory" "^session: +$S1$"
expect 0 "stats session_* directory" "$ATF" stats "$R1"
out_has "stats session_* directory" "^functions: 8, "
expect 0 "dump session_* directory" "$ATF" dump --json --limit 1 "$R1"
out_has "dump session_* directory" '"thread":[0-2],"name":"gen_[a-z]+","mangled":"gen_[a-z]+"\}$'
cp -r "$S1" "$R1/pid_1"
expect 0 "verify session_* directory of two" "$ATF" verify "$R1"
out_has "verify session_* directory of two" "^OK $R1/pid_1 \(session: "
out_has "verify session_* directory of two" "^OK $S1 \(session: "
expect 0 "info session_* directory of two" "$ATF" info "$R1"
out_has "info session_* directory of two" "^session: +$R1/pid_1$"
for c in dump stats tree; do
    # shellcheck disable=SC2086
    expect 2 "$c session_* directory of two" "$ATF" $c "$R1"
    err_has "$c session_* directory of two" "^  $R1/pid_1$"
done
# export writes every process, each as a process of its own: the copy in pid_1 (whose
# manifest names the original's pid) goes by its directory's pid, with as many calls
expect 0 "export session_* directory of two" "$ATF" export --format chrome "$R1"
P1=${S1##*/pid_}
out_has "export session_* directory of two" '^\{"pid":1,"tid":0,"ph":"M","name":"process_name",'
out_has "export session_* directory of two" "^\\{\"pid\":$P1,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\","
n1=$(grep -c '^{"pid":1,"tid":[0-9]*,"ts":[0-9.]*,"ph":"B"' "$OUT")
n2=$(grep -c "^{\"pid\":$P1,\"tid\":[0-9]*,\"ts\":[0-9.]*,\"ph\":\"B\"" "$OUT")
if [ "$n1" -gt 0 ] && [ "$n1" -eq "$n2" ]; then pass; else
    fail "export session_* directory of two: $n1 and $n2 calls, expected the same (> 0)"; fi
expect 2 "export --thread session_* directory of two" "$ATF" export --format chrome --thread 0 "$R1"
err_has "export --thread session_* directory of two" "^  $R1/pid_1$"
rm -rf "$R1/pid_1"

# ---- recover ----------------------------------------------------------------------------
R=$BUILD/tests/cli_recover
rm -rf "$R"
mkdir -p "$R"
# cut FILE N: drops the last N bytes of FILE.
cut_tail() {
    size=$(wc -c <"$1" | tr -d ' ')
    head -c $((size - $2)) "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}
# zero FILE OFFSET COUNT: COUNT zero bytes at OFFSET.
zero() {
    dd if=/dev/zero of="$1" bs=1 seek="$2" count="$3" conv=notrunc 2>/dev/null
}
# crash_index FILE / crash_detail FILE: a finalized layout-1 file as a crash leaves it:
# footer and 5 (index) / 7 (detail) more bytes cut, header back to the placeholder.
crash_index() {
    cut_tail "$1" 69
    zero "$1" 28 4
    zero "$1" 40 24
}
crash_detail() {
    cut_tail "$1" 71
    zero "$1" 28 36
}
# same_files A B: every file under A equals the one under B.
same_files() {
    if diff -r "$2" "$3" >/dev/null 2>&1; then pass; else fail "$1: files changed"; fi
}

# an index-only thread: the events are those before, minus the torn last one
cp -r "$S1/thread_1" "$R/t_plain"
"$ATF" dump --json "$R/t_plain" | sed '$d' >"$R/t_plain.want"
crash_index "$R/t_plain/index.atf"
expect 0 "info crash-like thread" "$ATF" info "$R/t_plain"
out_has "info crash-like thread" "^events: +1999$"
out_has "info crash-like thread" "^torn_bytes: +27$"
expect 1 "verify --strict crash-like thread" "$ATF" verify --strict "$R/t_plain"
cp -r "$R/t_plain" "$R/t_plain.copy"
expect 0 "recover --dry-run" "$ATF" recover --dry-run "$R/t_plain"
out_has "recover --dry-run" "^would recover $R/t_plain/index\.atf \(1999 events; found without a footer; cut 27 bytes after the last kept record; footer at offset 64032, crc 0x[0-9a-f]{8}; header rewritten\)$"
same_files "recover --dry-run" "$R/t_plain" "$R/t_plain.copy"
expect 0 "recover thread" "$ATF" recover "$R/t_plain"
out_has "recover thread" "^recovered $R/t_plain/index\.atf \(1999 events; found without a footer; cut 27 bytes "
out_lines "recover thread" 1
expect 0 "verify --strict recovered thread" "$ATF" verify --strict "$R/t_plain"
"$ATF" dump --json "$R/t_plain" >"$R/t_plain.got"
if cmp -s "$R/t_plain.want" "$R/t_plain.got"; then pass; else fail "recovered thread: events differ from the ones before the cut"; fi
expect 0 "info recovered thread" "$ATF" info "$R/t_plain"
out_has "info recovered thread" "^footer: +finalized "
expect 0 "recover a recovered thread" "$ATF" recover "$R/t_plain"
out_has "recover a recovered thread" "^OK $R/t_plain/index\.atf \(finalized, nothing to do\)$"

# a thread that lost events: recover finalizes index.atf and keeps gaps.atf as it is
cp -r "$SG/thread_0" "$R/t_gaps"
cp "$R/t_gaps/gaps.atf" "$R/t_gaps.gaps"
crash_index "$R/t_gaps/index.atf"
expect 0 "recover thread with gaps" "$ATF" recover "$R/t_gaps"
out_lines "recover thread with gaps" 1
if cmp -s "$R/t_gaps.gaps" "$R/t_gaps/gaps.atf"; then pass; else fail "recover thread with gaps: gaps.atf changed"; fi
expect 0 "verify --strict recovered thread with gaps" "$ATF" verify --strict "$R/t_gaps"
out_has "verify --strict recovered thread with gaps" "^OK $R/t_gaps \([0-9]+ events, no detail; [0-9]+ gaps?, [0-9]+ events lost\)$"
expect 0 "recover session with gaps" "$ATF" recover "$SG"
if [ "$(ls "$SG"/thread_*/gaps.atf | wc -l | tr -d ' ')" -eq 3 ]; then pass; else fail "recover session with gaps: a gaps.atf is gone"; fi

# a thread with detail: both files cut; the torn detail record's index event loses its link
cp -r "$SA/thread_0" "$R/t_detail"
"$ATF" dump --json --detail "$R/t_detail" >"$R/t_detail.before"
crash_index "$R/t_detail/index.atf"
crash_detail "$R/t_detail/detail.atf"
expect 1 "verify crash-like detail thread" "$ATF" verify "$R/t_detail"
cp -r "$R/t_detail" "$R/t_detail.copy"
expect 0 "recover --dry-run detail thread" "$ATF" recover --dry-run "$R/t_detail"
same_files "recover --dry-run detail thread" "$R/t_detail" "$R/t_detail.copy"
expect 0 "recover detail thread" "$ATF" recover "$R/t_detail"
out_has "recover detail thread" "^recovered $R/t_detail/detail\.atf \(499 detail records; found without a footer; "
out_has "recover detail thread" "^recovered $R/t_detail/index\.atf \(1999 events; .*; cleared 1 link to detail records not in detail\.atf; "
expect 0 "verify --strict recovered detail thread" "$ATF" verify --strict "$R/t_detail"
out_has "verify --strict recovered detail thread" "links ok both ways: 1999 events, 499 detail records"
RECOVERED_CHECK='
import json, sys
before = [json.loads(l) for l in open(sys.argv[1])]
after = [json.loads(l) for l in open(sys.argv[2])]
bi = [o for o in before if "kind" in o]
bd = [o for o in before if "kind" not in o]
ai = [o for o in after if "kind" in o]
ad = [o for o in after if "kind" not in o]
assert ad == bd[:len(ad)], "detail records differ"
assert len(ai) == len(bi) - 1, "%d index events, expected %d" % (len(ai), len(bi) - 1)
for a, b in zip(ai, bi):
    if b["detail_seq"] is not None and b["detail_seq"] >= len(ad):
        b = dict(b, detail_seq=None)
    assert a == b, "index event %d differs" % a["seq"]
'
if [ -n "$PY" ]; then
    "$ATF" dump --json --detail "$R/t_detail" >"$R/t_detail.after"
    if python3 -c "$RECOVERED_CHECK" "$R/t_detail.before" "$R/t_detail.after" >"$ERR" 2>&1; then pass; else fail "recovered detail thread: $(tail -n 1 "$ERR")"; fi
fi

# a windowed link that was not patched into index.atf yet: recover restores it
cp -r "$SA/thread_1" "$R/t_link"
"$ATF" dump --json --detail "$R/t_link" | sed '2000d' >"$R/t_link.want"
crash_index "$R/t_link/index.atf"
printf '\377\377\377\377' | dd of="$R/t_link/index.atf" bs=1 seek=92 conv=notrunc 2>/dev/null
expect 1 "verify unpatched link" "$ATF" verify "$R/t_link"
expect 0 "recover unpatched link" "$ATF" recover "$R/t_link"
out_has "recover unpatched link" "^OK $R/t_link/detail\.atf \(finalized, nothing to do\)$"
out_has "recover unpatched link" "^recovered $R/t_link/index\.atf \(1999 events; .*; restored 1 link; "
expect 0 "verify --strict restored link" "$ATF" verify --strict "$R/t_link"
"$ATF" dump --json --detail "$R/t_link" >"$R/t_link.got"
if cmp -s "$R/t_link.want" "$R/t_link.got"; then pass; else fail "restored link: events differ"; fi

# a detail.atf with nothing but its placeholder header is removed
cp -r "$S1/thread_0" "$R/t_empty"
head -c 64 "$SA/thread_0/detail.atf" >"$R/t_empty/detail.atf"
zero "$R/t_empty/detail.atf" 28 36
expect 0 "recover empty detail.atf" "$ATF" recover "$R/t_empty"
out_has "recover empty detail.atf" "^removed $R/t_empty/detail\.atf \(no detail record left"
if [ -e "$R/t_empty/detail.atf" ]; then fail "recover empty detail.atf: still there"; else pass; fi
expect 0 "verify --strict after removing detail.atf" "$ATF" verify --strict "$R/t_empty"

# a whole session, one thread of it cut, its manifest as a crash leaves it (still
# "recording"); with a "closed" manifest the lost event is a problem of its own
cp -r "$S1" "$R/session"
crash_index "$R/session/thread_2/index.atf"
sed 's/"state":"closed"/"state":"recording"/' "$S1/manifest.json" >"$R/session/manifest.json"
expect 1 "verify --strict crash-like session" "$ATF" verify --strict "$R/session"
out_has "verify --strict crash-like session" "thread_2/index\.atf: offset 40: not finalized"
# every PATH that reaches the cut file says so, with the file and the byte offset, and
# exits 1 (the events before the cut still shown): the session_* directory, the pid_*
# directory, the thread's directory, its index.atf
mkdir -p "$R/session_1"
cp -r "$R/session" "$R/session_1/pid_7"
for P in "$R/session_1" "$R/session_1/pid_7" "$R/session_1/pid_7/thread_2" "$R/session_1/pid_7/thread_2/index.atf"; do
    for c in stats tree dump "export --format chrome -o $R/cut.json" "export --format parquet -o $R/cut.parquet"; do
        # shellcheck disable=SC2086
        expect 1 "$c of a cut file: $P" "$ATF" $c "$P"
        err_has "$c of a cut file: $P" "^atf: thread_2: $R/session_1/pid_7/thread_2/index\.atf: offset 64032: a torn last record "
    done
    expect 1 "stats --json of a cut file: $P" "$ATF" stats --json "$P"
    out_has "stats --json of a cut file: $P" '^\{"slot":2,"tid":[0-9]+,"events":1999,'
done
rm -rf "$R/session_1"
expect 0 "recover session" "$ATF" recover "$R/session"
out_has "recover session" "^OK $R/session/thread_0/index\.atf \(finalized, nothing to do\)$"
out_has "recover session" "^recovered $R/session/thread_2/index\.atf \(1999 events; "
out_has "recover session" "^rewrote $R/session/manifest\.json \(state recovered: "
expect 0 "verify --strict recovered session" "$ATF" verify --strict "$R/session"
out_has "verify --strict recovered session" "^OK $R/session \(session: manifest ok \(state recovered\), 3 threads, 5999 events;"
cp "$S1/manifest.json" "$R/session/manifest.json"
expect 1 "verify session against a closed manifest" "$ATF" verify "$R/session"
out_has "verify session against a closed manifest" "^thread_2: .*manifest\.json: events_written of a thread disagrees with its index\.atf \(expected 1999 \[0x7cf\], found 2000 "

# lone files of cli_gen: crash-left, footer at end, footer mismatch, checksum 0, damaged
for f in crash.atf crash_l2.atf footer_end.atf mismatch.atf crc0.atf badcrc.atf badmagic.atf; do
    cp "$D/$f" "$R/$f"
done
cp -r "$D/thread_crash" "$D/thread_badlink" "$D/thread_dangling" "$R/"
"$ATF" dump --json "$D/crash.atf" >"$R/crash.want" 2>/dev/null
expect 0 "recover crash-left files" "$ATF" recover "$R/crash.atf" "$R/crash_l2.atf" "$R/footer_end.atf" "$R/mismatch.atf" "$R/crc0.atf" "$R/thread_crash"
out_has "recover crash-left files" "^recovered $R/crash\.atf \(100 events; found without a footer; cut 13 bytes "
out_has "recover crash-left files" "^recovered $R/crash_l2\.atf \(77 events; found without a footer; cut 31 bytes "
out_has "recover crash-left files" "^recovered $R/footer_end\.atf \(50 events; found with a placeholder header and a footer at the end; "
out_has "recover crash-left files" "^recovered $R/mismatch\.atf \(100 events; found with a footer that disagrees with it; "
out_has "recover crash-left files" "^recovered $R/crc0\.atf \(100 events; finalized, footer checksum 0 \(not computed\): crc 0x[0-9a-f]{8} written "
out_has "recover crash-left files" "^recovered $R/thread_crash/detail\.atf \(30 detail records; "
expect 0 "verify --strict recovered files" "$ATF" verify --strict "$R/crash.atf" "$R/crash_l2.atf" "$R/footer_end.atf" "$R/mismatch.atf" "$R/crc0.atf" "$R/thread_crash"
"$ATF" dump --json "$R/crash.atf" >"$R/crash.got"
if cmp -s "$R/crash.want" "$R/crash.got"; then pass; else fail "recovered crash.atf: events differ"; fi
for f in badcrc.atf badmagic.atf thread_badlink thread_dangling; do
    expect 1 "recover $f" "$ATF" recover "$R/$f"
    err_has "recover $f" "^atf: $R/$f.*: offset [0-9]+: "
    if diff -r "$D/$f" "$R/$f" >/dev/null; then pass; else fail "recover $f: changed a damaged file"; fi
done
expect 2 "recover without PATH" "$ATF" recover --dry-run
expect 1 "recover missing file" "$ATF" recover "$R/no_such.atf"

# a real crash: gen killed while recording, then recover; verify --strict passes
( "$ATF" gen --threads 2 --events 100000000 --detail windowed "$R/killed" >"$R/killed.out" 2>/dev/null & echo $! >"$R/killed.pid"; wait ) 2>/dev/null &
tries=0
while [ ! -s "$R/killed.out" ] && [ $tries -lt 100 ]; do sleep 0.05; tries=$((tries + 1)); done
sleep 0.3
kill -9 "$(cat "$R/killed.pid")" 2>/dev/null
wait
K=$(cat "$R/killed.out")
if [ -n "$K" ] && [ -d "$K" ]; then
    expect 1 "verify --strict killed session" "$ATF" verify --strict "$K"
    expect 0 "recover killed session" "$ATF" recover "$K"
    out_has "recover killed session" "^rewrote $K/manifest\.json \(state recovered: "
    expect 0 "verify --strict recovered killed session" "$ATF" verify --strict "$K"
else
    fail "killed gen printed no session directory"
fi

# killed before any thread attached: the manifest lists no thread and there is no thread
# directory; nothing to recover, nothing missing
mkdir -p "$R/unborn"
sed 's/"threads":\[.*\],"time_start_ns"/"threads":[],"time_start_ns"/; s/"state":"closed"/"state":"recording"/' "$S1/manifest.json" >"$R/unborn/manifest.json"
expect 0 "recover session with no thread" "$ATF" recover "$R/unborn"
expect 0 "verify --strict session with no thread" "$ATF" verify --strict "$R/unborn"
out_has "verify --strict session with no thread" "^OK $R/unborn \(session: manifest lists no thread \(state recovered\), 0 threads, no event recorded\)$"
sed 's/"threads":\[\]/"threads":[{"id":3}]/' "$R/unborn/manifest.json" >"$R/unborn/listed.json"
mv "$R/unborn/listed.json" "$R/unborn/manifest.json"
expect 1 "verify session whose only listed thread is missing" "$ATF" verify "$R/unborn"
out_has "verify session whose only listed thread is missing" "^$R/unborn/thread_3: listed in manifest\.json, but the directory or its index\.atf is missing"
rm "$R/unborn/manifest.json"
expect 1 "verify session with neither manifest nor thread" "$ATF" verify "$R/unborn"
# killed between making thread_N/ and renaming its index.atf.tmp into place
rm -rf "$R/unborn"
cp -r "$S1" "$R/unborn"
mkdir "$R/unborn/thread_7" "$R/unborn/thread_8"
head -c 64 "$S1/thread_0/index.atf" >"$R/unborn/thread_7/index.atf.tmp"
expect 1 "verify --strict session with a thread killed before its file" "$ATF" verify --strict "$R/unborn"
expect 0 "recover --dry-run thread killed before its file" "$ATF" recover --dry-run "$R/unborn"
out_has "recover --dry-run thread killed before its file" "^would remove $R/unborn/thread_7 \(no index\.atf, only index\.atf\.tmp: "
if [ -e "$R/unborn/thread_7/index.atf.tmp" ]; then pass; else fail "recover --dry-run removed a file"; fi
expect 0 "recover thread killed before its file" "$ATF" recover "$R/unborn"
out_has "recover thread killed before its file" "^removed $R/unborn/thread_7 \(no index\.atf, only index\.atf\.tmp: "
out_has "recover thread killed before its file" "^removed $R/unborn/thread_8 \(no index\.atf: "
if [ -e "$R/unborn/thread_7" ] || [ -e "$R/unborn/thread_8" ]; then fail "recover left an empty thread directory"; else pass; fi
expect 0 "verify --strict after removing threads killed before their file" "$ATF" verify --strict "$R/unborn"
mkdir "$R/unborn/thread_9"
: >"$R/unborn/thread_9/notes.txt"
expect 1 "recover thread directory without index.atf holding another file" "$ATF" recover "$R/unborn"
if [ -e "$R/unborn/thread_9/notes.txt" ]; then pass; else fail "recover removed a thread directory holding another file"; fi

# a session_* directory: every pid_* directory in it, each with its manifest note
mkdir -p "$R/root/session_1"
cp -r "$S1" "$R/root/session_1/pid_11"
cp -r "$S1" "$R/root/session_1/pid_12"
crash_index "$R/root/session_1/pid_12/thread_1/index.atf"
sed 's/"state":"closed"/"state":"recording"/' "$S1/manifest.json" >"$R/root/session_1/pid_12/manifest.json"
cp -r "$R/root" "$R/root.copy"
expect 0 "recover --dry-run session_* directory" "$ATF" recover --dry-run "$R/root/session_1"
out_has "recover --dry-run session_* directory" "^would recover $R/root/session_1/pid_12/thread_1/index\.atf \(1999 events; found without a footer; "
same_files "recover --dry-run session_* directory" "$R/root" "$R/root.copy"
expect 0 "recover session_* directory" "$ATF" recover "$R/root/session_1"
out_has "recover session_* directory" "^OK $R/root/session_1/pid_11/thread_0/index\.atf \(finalized, nothing to do\)$"
out_has "recover session_* directory" "^recovered $R/root/session_1/pid_12/thread_1/index\.atf \(1999 events; found without a footer; cut 27 bytes "
out_has "recover session_* directory" "^rewrote $R/root/session_1/pid_12/manifest\.json \(state recovered: "
if grep -q "pid_11/manifest" "$OUT"; then fail "recover session_* directory: a note on a closed manifest"; else pass; fi
expect 0 "verify --strict recovered session_* directory" "$ATF" verify --strict "$R/root/session_1/pid_11" "$R/root/session_1/pid_12"

# a gaps.atf named as PATH: a torn last record is cut, a whole one left alone; in a thread
# directory too, with a file left under its temporary name
cp "$SG/thread_0/gaps.atf" "$R/gaps.atf"
cp "$R/gaps.atf" "$R/gaps.want"
printf 'torn gap record' >>"$R/gaps.atf"
cp "$R/gaps.atf" "$R/gaps.torn"
expect 0 "recover --dry-run torn gaps.atf" "$ATF" recover --dry-run "$R/gaps.atf"
out_has "recover --dry-run torn gaps.atf" "^would recover $R/gaps\.atf \([0-9]+ gap records?; cut 15 bytes of a torn last record\)$"
if cmp -s "$R/gaps.atf" "$R/gaps.torn"; then pass; else fail "recover --dry-run torn gaps.atf: file changed"; fi
expect 0 "recover torn gaps.atf" "$ATF" recover "$R/gaps.atf"
out_has "recover torn gaps.atf" "^recovered $R/gaps\.atf \([0-9]+ gap records?; cut 15 bytes of a torn last record\)$"
if cmp -s "$R/gaps.atf" "$R/gaps.want"; then pass; else fail "recover torn gaps.atf: not the file before the torn record"; fi
expect 0 "recover whole gaps.atf" "$ATF" recover "$R/gaps.atf"
out_has "recover whole gaps.atf" "^OK $R/gaps\.atf \(whole, nothing to do\)$"
out_lines "recover whole gaps.atf" 1
cp -r "$SG/thread_1" "$R/t_torn_gaps"
cp "$R/t_torn_gaps/gaps.atf" "$R/t_torn_gaps.want"
printf 'xyz' >>"$R/t_torn_gaps/gaps.atf"
head -c 64 "$SG/thread_1/index.atf" >"$R/t_torn_gaps/detail.atf.tmp"
expect 0 "recover thread with a torn gaps.atf" "$ATF" recover "$R/t_torn_gaps"
out_has "recover thread with a torn gaps.atf" "^recovered $R/t_torn_gaps/gaps\.atf \([0-9]+ gap records?; cut 3 bytes of a torn last record\)$"
out_has "recover thread with a torn gaps.atf" "^removed $R/t_torn_gaps/detail\.atf\.tmp \("
if cmp -s "$R/t_torn_gaps/gaps.atf" "$R/t_torn_gaps.want"; then pass; else fail "recover thread with a torn gaps.atf: gaps.atf not cut back"; fi
if [ -e "$R/t_torn_gaps/detail.atf.tmp" ]; then fail "recover thread with a torn gaps.atf: detail.atf.tmp left"; else pass; fi
expect 0 "verify --strict thread after its torn gaps.atf was cut" "$ATF" verify --strict "$R/t_torn_gaps"
cp "$R/gaps.want" "$R/gaps_bad.atf"
zero "$R/gaps_bad.atf" 4 1 # its version byte
cp "$R/gaps_bad.atf" "$R/gaps_bad.copy"
expect 1 "recover damaged gaps.atf" "$ATF" recover "$R/gaps_bad.atf"
err_has "recover damaged gaps.atf" "^atf: $R/gaps_bad\.atf"
if cmp -s "$R/gaps_bad.atf" "$R/gaps_bad.copy"; then pass; else fail "recover damaged gaps.atf: file changed"; fi

# ---- ktrace -----------------------------------------------------------------------------
KT_JSON='{"header":{"magic":1437205248,"major":3,"minor":1,"header_size":128,"timebase_numer":125,"timebase_denom":3,"timestamp":3000000000,"walltime_secs":1700000001,"walltime_usecs":500000,"minutes_west":480,"dst":1,"flags":5},"chunks":[{"offset":64,"tag":32769,"major":1,"minor":0,"size":32,"section":"header"},{"offset":112,"tag":32770,"major":2,"minor":1,"size":14,"section":"header"},{"offset":144,"tag":36864,"major":1,"minor":0,"size":128,"section":"body"},{"offset":288,"tag":36865,"major":1,"minor":2,"size":252,"section":"body"}]}'
expect 0 "ktrace --json" "$ATF" ktrace --json "$D/kt.ktrace"
out_lines "ktrace --json" 1
out_line "ktrace --json" 1 "$KT_JSON"
err_empty "ktrace --json"
expect 0 "ktrace table" "$ATF" ktrace "$D/kt.ktrace"
out_has "ktrace table" "^magic: +0x55aa0300$"
out_has "ktrace table" "^major: +3$"
out_has "ktrace table" "^header_size: +128$"
out_has "ktrace table" "^timebase: +125/3 "
out_has "ktrace table" "^timestamp: +3000000000 ticks \(125000000000 ns\)$"
out_has "ktrace table" "^walltime: +1700000001\.500000 s since 1970 \(1700000001500000000 ns\)$"
out_has "ktrace table" "^minutes_west: +480$"
out_has "ktrace table" "^chunks: +4 \(2 header, 2 body\)$"
out_has "ktrace table" "^offset +tag +major +minor +size +section$"
out_has "ktrace table" "^ +64 +0x00008001 +1 +0 +32 +header$"
out_has "ktrace table" "^ +288 +0x00009001 +1 +2 +252 +body$"
expect 0 "ktrace header only" "$ATF" ktrace --json "$D/kt_empty.ktrace"
out_has "ktrace header only" '"header_size":48,.*"chunks":\[\]\}$'
expect 1 "ktrace truncated chunk" "$ATF" ktrace --json "$D/kt_trunc.ktrace"
out_has "ktrace truncated chunk" '"offset":144,"tag":36864,"major":1,"minor":0,"size":128,"section":"body"\}\]\}$'
err_has "ktrace truncated chunk" "^atf: .*kt_trunc\.ktrace: offset 288: "
expect 1 "ktrace bad magic" "$ATF" ktrace "$D/kt_badmagic.ktrace"
err_has "ktrace bad magic" "^atf: .*kt_badmagic\.ktrace: offset 0: "
out_empty "ktrace bad magic"
expect 1 "ktrace of an ATF file" "$ATF" ktrace "$D/l1.atf"
expect 2 "ktrace without FILE" "$ATF" ktrace --json
expect 2 "ktrace --session without value" "$ATF" ktrace "$D/kt.ktrace" --session
if [ -n "$PY" ]; then
    "$ATF" ktrace --json "$D/kt.ktrace" | python3 -c 'import json, sys; d = json.load(sys.stdin); assert len(d["chunks"]) == 4' && pass || fail "ktrace --json does not parse"
fi
# the ktrace start on a session's clock: anchor host 5 s = wall 1.7e9 s; the file's wall
# time is 1.5 s later and its timestamp is 125 s
KS=$BUILD/tests/cli_ktrace_session/pid_1
mkdir -p "$KS"
printf '%s\n' '{"format_version":2,"threads":[],"timing_anchors":[{"name":"audio","host_ns":1,"value":0,"rate":48000},{"name":"wall_clock_ns","host_ns":5000000000,"value":1.7e+18,"rate":1000000000}]}' >"$KS/manifest.json"
expect 0 "ktrace --session" "$ATF" ktrace --session "$KS" "$D/kt.ktrace"
out_has "ktrace --session" "^anchor: +wall_clock_ns: host_ns 5000000000 = wall 1700000000000000000 ns \(rate 1000000000\)$"
out_has "ktrace --session" "^ktrace_wall_ns: +1700000001500000000$"
out_has "ktrace --session" "^start_host_ns: +6500000000 "
out_has "ktrace --session" "^timestamp_ns: +125000000000$"
out_has "ktrace --session" "^offset_ns: +-118500000000 "
expect 0 "ktrace --json --session" "$ATF" ktrace --json --session "$KS/manifest.json" "$D/kt.ktrace"
out_has "ktrace --json --session" ',"session":\{"path":"[^"]*manifest\.json","anchor_host_ns":5000000000,"anchor_value":1700000000000000000,"anchor_rate":1000000000,"ktrace_wall_ns":1700000001500000000,"start_host_ns":6500000000,"timestamp_ns":125000000000,"offset_ns":-118500000000\}\}$'
expect 0 "ktrace --session of a recorded session" "$ATF" ktrace --session "$S1" "$D/kt.ktrace"
out_has "ktrace --session of a recorded session" "^start_host_ns: +-?[0-9]+ "
printf '%s\n' '{"format_version":2,"threads":[]}' >"$KS/manifest.json"
expect 1 "ktrace --session without anchor" "$ATF" ktrace --session "$KS" "$D/kt.ktrace"
err_has "ktrace --session without anchor" "no \"wall_clock_ns\" timing anchor"
expect 1 "ktrace --session without manifest" "$ATF" ktrace --session "$D" "$D/kt.ktrace"
err_has "ktrace --session without manifest" "no manifest\.json"
printf '%s' '{"format_version":2,"threads":[' >"$KS/manifest.json"
expect 1 "ktrace --session with an unreadable manifest" "$ATF" ktrace --session "$KS" "$D/kt.ktrace"
err_has "ktrace --session with an unreadable manifest" "^atf: $KS/manifest\.json: offset [0-9]+: "

# ---- make install / uninstall ----------------------------------------------------------------
if command -v "${MAKE:-make}" >/dev/null 2>&1 && [ -f Makefile ]; then
    I=$(pwd)/$BUILD/tests/cli_install
    rm -rf "$I"
    expect 0 "make install" env MAKEFLAGS= MFLAGS= MAKELEVEL= "${MAKE:-make}" -s install DESTDIR="$I" PREFIX=/opt/atf-test BUILD="$BUILD" CC="${CC:-cc}"
    for f in include/atf.h bin/atf share/pkgconfig/atf.pc lib/atf/libatf_instrument.so; do
        if [ -f "$I/opt/atf-test/$f" ]; then pass; else fail "make install: no $f"; fi
    done
    if cmp -s atf.h "$I/opt/atf-test/include/atf.h"; then pass; else fail "make install: atf.h differs"; fi
    expect 0 "installed atf" "$I/opt/atf-test/bin/atf" --version
    # the installed command finds the installed tracer (../lib/atf/ from bin/)
    expect 0 "installed atf record" "$I/opt/atf-test/bin/atf" record --output "$I/rec" -- \
        "$BUILD/examples/sample_hooked"
    rm -rf "$I/rec"
    PC=$I/opt/atf-test/share/pkgconfig/atf.pc
    grep -qx 'prefix=/opt/atf-test' "$PC" && pass || fail "atf.pc: prefix"
    grep -qx 'Cflags: -I${includedir}' "$PC" && pass || fail "atf.pc: Cflags"
    grep -Eqx 'Version: [0-9]+\.[0-9]+\.[0-9]+' "$PC" && pass || fail "atf.pc: Version"
    if command -v pkg-config >/dev/null 2>&1; then
        got=$(PKG_CONFIG_PATH="$I/opt/atf-test/share/pkgconfig" pkg-config --cflags atf | tr -d ' ')
        if [ "$got" = "-I/opt/atf-test/include" ]; then pass; else fail "pkg-config --cflags atf: '$got'"; fi
    fi
    expect 0 "make uninstall" env MAKEFLAGS= MFLAGS= MAKELEVEL= "${MAKE:-make}" -s uninstall DESTDIR="$I" PREFIX=/opt/atf-test BUILD="$BUILD"
    left=$(find "$I" -type f | wc -l | tr -d ' ')
    if [ "$left" -eq 0 ]; then pass; else fail "make uninstall: $left files left"; fi
else
    echo "cli: make not found, install checks skipped"
fi

finish
