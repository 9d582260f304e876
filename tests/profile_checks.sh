#!/bin/sh
# Checks of the two commands built on the per-path figures of tools/profile.c ($ATF):
#   - atf export --format folded against atf tree, on sessions of atf gen (plain, with the
#     recorder's pauses, with gaps) and on recordings of examples/sample.c (five threads)
#     and tests/programs/pipeline.c: the lines under every call path (itself and the
#     paths extending it) add up to the durations tree prints for that path's calls, all
#     lines to the time of every thread's outermost calls; under a thread frame (name,
#     tid) each thread's lines to its own; a session_* directory of two processes adds
#     both up; -o, --function and the usage errors;
#   - atf diff on two recordings of pipeline.c whose argument changes its work in one call
#     path: that function first, that path first but for its own callers' paths, every
#     other function and path with the same calls; a trace against itself changes
#     nothing; --json parses and agrees with `atf stats --json` and the folded stacks of
#     each trace; usage errors.
# Needs python3 for the sums (without it, only the exit statuses are checked).
# Ends with the line "profile: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
EX=$BUILD/examples
PROGS=$BUILD/programs
TMP=$BUILD/tests/profile_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=profile
. "$(dirname "$0")/check_lib.sh"

rm -rf "$TMP"
mkdir -p "$TMP"

# FOLDED_VS_TREE: argv tree.txt folded.txt MODE [PID]. Reads atf tree's lines (the path of
# each call from the indentation, its duration in us with three decimals: exact ns) and
# the folded lines (MODE none: every thread's paths together; name or tid: under the
# thread frame built from tree's header line). Every path of either is a path of both,
# the folded values under a path add up to tree's durations of its calls, and all values
# to the durations of the outermost calls.
FOLDED_VS_TREE='
import re, sys
from collections import defaultdict
tree, folded, mode = sys.argv[1], sys.argv[2], sys.argv[3]
pid = sys.argv[4] if len(sys.argv) > 4 else ""
totals = defaultdict(int)
outer = 0
stack, frame = [], ()
for line in open(tree):
    line = line.rstrip("\n")
    m = re.match(r"thread (\d+)  tid (\d+)(?:  (.*?))?  (\d+) events", line)
    if m:
        name = m.group(3) or "thread_" + m.group(1)
        frame = () if mode == "none" else (name,) if mode == "name" else ("%s-%s/%s" % (name, pid, m.group(2)),)
        stack = []
        continue
    if len(line) < 35 or line.lstrip().startswith("time_us") or line.startswith("("):
        continue
    text = line[34:]
    depth = (len(text) - len(text.lstrip(" "))) // 2
    text = text.strip()
    if text[0] in "!~":
        continue
    if text.endswith(" {"):
        del stack[depth:]
        stack.append(text[:-2])
        continue
    if text.startswith("} "):
        text = text[2:]
    name = text.split("  ")[0]
    us, frac = line[18:32].strip().split(".")
    ns = int(us) * 1000 + int(frac)
    totals[frame + tuple(stack[:depth]) + (name,)] += ns
    if depth == 0:
        outer += ns
        if frame:
            totals[frame] += ns
under = defaultdict(int)
seen = set()
for line in open(folded):
    text, n = line.rstrip("\n").rsplit(" ", 1)
    assert text not in seen, "a stack twice: " + text
    seen.add(text)
    p = tuple(text.split(";"))
    for k in range(1, len(p) + 1):
        under[p[:k]] += int(n)
assert set(under) == set(totals), "paths of one only: %s" % sorted(set(under) ^ set(totals))[:5]
for p, t in totals.items():
    assert under[p] == t, "%s: folded %d, tree %d" % (";".join(p), under[p], t)
assert sum(v for p, v in under.items() if len(p) == 1) == outer, "all lines: %d, outermost calls %d" % (
    sum(v for p, v in under.items() if len(p) == 1), outer)
assert outer > 0, "no calls"
'

# folded_vs_tree NAME PATH: folded stacks of PATH (a pid_* directory) in each mode
# against its tree.
folded_vs_tree() {
    fname=$1
    fpath=$2
    fpid=$(basename "$fpath" | sed 's/^pid_\([0-9]*\).*/\1/')
    expect 0 "$fname: tree" "$ATF" tree "$fpath"
    cp "$OUT" "$TMP/tree.txt"
    for mode in none name tid; do
        expect 0 "$fname: folded --thread-frame $mode" "$ATF" export --format folded \
            --thread-frame "$mode" "$fpath"
        err_empty=$(cat "$ERR")
        [ -z "$err_empty" ] && pass || fail "$fname: folded --thread-frame $mode: stderr: $err_empty"
        py "$fname: folded ($mode) against tree" "$FOLDED_VS_TREE" "$TMP/tree.txt" "$OUT" "$mode" "$fpid"
    done
}

# gen_session NAME ARGS...: atf gen ARGS into $TMP/NAME; $S is its pid_* directory.
gen_session() {
    gname=$1
    shift
    expect 0 "gen $gname" "$ATF" gen "$@" "$TMP/$gname"
    S=$(cat "$OUT")
}

# ---- folded stacks against tree --------------------------------------------------------------
gen_session plain --threads 3 --events 2000 --seed 7
S1=$S
folded_vs_tree "gen, 3 threads" "$S1"
# the default is the thread's name; the lines are sorted as the help says (frame by frame)
expect 0 "folded: default" "$ATF" export --format folded "$S1"
cp "$OUT" "$TMP/plain.folded"
expect 0 "folded --thread-frame name" "$ATF" export --format folded --thread-frame name "$S1"
if cmp -s "$OUT" "$TMP/plain.folded"; then pass; else fail "folded: the default is not --thread-frame name"; fi
n=$(grep -cv '^gen-[012];gen_[a-z]*[; ]' "$TMP/plain.folded")
if [ "$n" -eq 0 ]; then pass; else fail "folded: $n lines not under a thread frame gen-N"; fi
py "folded: in order, frame by frame" '
import sys
keys = [l.rsplit(" ", 1)[0].split(";") for l in open(sys.argv[1])]
assert keys == sorted(keys), "not in order"
' "$TMP/plain.folded"
# -o writes what stdout shows; --function keeps F's subtrees
expect 0 "folded -o" "$ATF" export --format folded -o "$TMP/o.folded" "$S1"
if cmp -s "$TMP/o.folded" "$TMP/plain.folded"; then pass; else fail "folded -o: not what stdout shows"; fi
expect 0 "folded --function gen_parse" "$ATF" export --format folded --function gen_parse "$S1"
n=$(grep -cv '^gen-[012];gen_parse[; ]' "$OUT")
if [ "$n" -eq 0 ] && [ -s "$OUT" ]; then pass; else fail "folded --function gen_parse: $n lines not rooted at gen_parse"; fi
expect 2 "folded --clock" "$ATF" export --format folded --clock wall "$S1"
expect 2 "folded --thread-frame bogus" "$ATF" export --format folded --thread-frame all "$S1"
expect 2 "chrome --thread-frame" "$ATF" export --format chrome --thread-frame none "$S1"

gen_session paused --threads 2 --events 20000 --ring-events 64 --overflow block
expect 0 "paused session: stats" "$ATF" stats "$S"
if grep -q '^paused: ' "$OUT"; then pass; else fail "paused session: no pause to leave out"; fi
folded_vs_tree "gen, the recorder's pauses" "$S"
gen_session gaps --threads 3 --events 20000 --ring-events 64 --overflow drop --seed 3
expect 0 "gaps session: stats" "$ATF" stats "$S"
if grep -q '^gaps: ' "$OUT"; then pass; else fail "gaps session: no gap"; fi
folded_vs_tree "gen, gaps" "$S"

# every process of a session_* directory into one profile: the paths of two add up
gen_session other --threads 2 --events 3000 --seed 8
S2=$S
mkdir -p "$TMP/two/session_two"
cp -r "$S1" "$TMP/two/session_two/pid_1"
cp -r "$S2" "$TMP/two/session_two/pid_2"
"$ATF" export --format folded --thread-frame none "$S1" >"$TMP/one.folded" 2>"$ERR"
"$ATF" export --format folded --thread-frame none "$S2" >"$TMP/other.folded" 2>"$ERR"
expect 0 "folded of two processes" "$ATF" export --format folded --thread-frame none "$TMP/two/session_two"
py "folded of two processes: the sum of each" '
import sys
def read(f):
    lines = [l.rstrip("\n").rsplit(" ", 1) for l in open(f)]
    d = dict((k, int(v)) for k, v in lines)
    assert len(d) == len(lines), "a stack twice in " + f
    return d
both, a, b = read(sys.argv[1]), read(sys.argv[2]), read(sys.argv[3])
assert both == dict((k, a.get(k, 0) + b.get(k, 0)) for k in set(a) | set(b)), "not the sum"
' "$OUT" "$TMP/one.folded" "$TMP/other.folded"

# recorded programs: the sample's five threads, and pipeline
if [ -x "$EX/sample_hooked" ]; then
    expect 0 "record sample" "$ATF" record --output "$TMP/sample" -- "$EX/sample_hooked"
    folded_vs_tree "recorded sample" "$(ls -d "$TMP/sample"/session_*/pid_* | head -n 1)"
    rm -rf "$TMP/sample"
fi

# ---- atf diff: two runs of pipeline, one path changed ---------------------------------------
# pipeline N: load parses 16 records, each parse normalizes N times
session_of() { sed -n 's/^atf record: session //p' "$ERR" | head -n 1; }
expect 0 "record pipeline 1" "$ATF" record --output "$TMP/p1" -- "$PROGS/pipeline_hooked" 1
PA=$(session_of)
expect 0 "record pipeline 8" "$ATF" record --output "$TMP/p8" -- "$PROGS/pipeline_hooked" 8
PB=$(session_of)
folded_vs_tree "recorded pipeline" "$(ls -d "$PB"/pid_* | head -n 1)"

expect 0 "diff --json" "$ATF" diff --json "$PA" "$PB"
cp "$OUT" "$TMP/diff.json"
err_text=$(cat "$ERR")
[ -z "$err_text" ] && pass || fail "diff --json: stderr: $err_text"
py "diff: normalize first, its path first after its callers, nothing else called more" '
import json, sys
d = json.load(open(sys.argv[1]))
fns, paths = d["functions"], d["paths"]
assert [f["name"] for f in fns][0] == "normalize", [f["name"] for f in fns]
assert sorted(f["name"] for f in fns) == ["checksum", "load", "main", "normalize", "parse", "report"]
n = fns[0]
assert (n["calls_a"], n["calls_b"], n["calls_delta"]) == (16, 128, 112), n
for f in fns[1:]:
    assert f["calls_delta"] == 0 and f["calls_a"] == f["calls_b"] > 0, f
    assert abs(f["self_ns_delta"]) < n["self_ns_delta"], f
changed = "main;load;parse;normalize"
names = [p["path"] for p in paths]
assert changed in names, names
k = names.index(changed)
assert all(changed.startswith(p + ";") for p in names[:k]), names[:k + 1]
p = paths[k]
assert (p["calls_a"], p["calls_b"], p["calls_delta"]) == (16, 128, 112), p
assert p["self_ns_delta"] == max(abs(q["self_ns_delta"]) for q in paths), p
for q in paths:
    assert q is p or q["calls_delta"] == 0, q
assert sorted(names) == sorted(["main", "main;load", "main;load;parse", changed, "main;report",
                                "main;report;checksum"]), names
# every key the help lists, in the text order (largest change first)
keys = ["calls", "total_ns", "self_ns"]
for row in fns + paths:
    for key in keys:
        assert row[key + "_delta"] == row[key + "_b"] - row[key + "_a"], row
assert [abs(f["self_ns_delta"]) for f in fns] == sorted((abs(f["self_ns_delta"]) for f in fns), reverse=True)
assert [abs(q["total_ns_delta"]) for q in paths] == sorted((abs(q["total_ns_delta"]) for q in paths), reverse=True)
assert d["total_ns_delta"] == d["total_ns_b"] - d["total_ns_a"] > 0, d
' "$TMP/diff.json"
# the text: normalize heads the functions, its path the paths after its callers
expect 0 "diff (text)" "$ATF" diff --top 1 "$PA" "$PB"
line=$(sed -n '/^functions: /{n;n;p;}' "$OUT")
case "$line" in
*" +112 "*"  normalize") pass ;;
*) fail "diff (text): the first function is '$line', expected normalize with +112 calls" ;;
esac
out_n=$(grep -c '^paths: 6 in a or b (first 1 shown), by the change in total time$' "$OUT")
[ "$out_n" -eq 1 ] && pass || fail "diff (text): no paths line for --top 1"
expect 0 "diff (text), every path" "$ATF" diff --top 0 "$PA" "$PB"
if grep -Eq '^ +16 +128 +\+112 .*  main;load;parse;normalize$' "$OUT"; then pass; else
    fail "diff (text): no line of main;load;parse;normalize with 16, 128, +112 calls"; show; fi

# a trace against itself: every change 0, every ratio 1
expect 0 "diff X X" "$ATF" diff --json "$PB" "$PB"
py "diff X X: all zero" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["functions"] and d["paths"]
for row in d["functions"] + d["paths"]:
    for key in ("calls", "total_ns", "self_ns"):
        assert row[key + "_delta"] == 0 and row[key + "_a"] == row[key + "_b"], row
assert all(f["self_ratio"] == 1 for f in d["functions"] if f["self_ns_a"])
assert d["total_ns_delta"] == 0
' "$OUT"
expect 0 "diff X X (text)" "$ATF" diff "$PB" "$PB"
if grep -q '^outermost calls: .* (0ns, 1.00x)$' "$OUT"; then pass; else fail "diff X X (text): the outermost calls changed"; show; fi

# against stats and the folded stacks of each trace (two gen sessions: every figure exact)
expect 0 "diff of two gen sessions" "$ATF" diff --json "$S1" "$S2"
cp "$OUT" "$TMP/gen.diff.json"
"$ATF" stats --json "$S1" >"$TMP/s1.stats.json" 2>"$ERR"
"$ATF" stats --json "$S2" >"$TMP/s2.stats.json" 2>"$ERR"
py "diff: the figures of stats and of folded stacks" '
import json, sys
d = json.load(open(sys.argv[1]))
for side, stats_file, folded_file in (("a", sys.argv[2], sys.argv[4]), ("b", sys.argv[3], sys.argv[5])):
    st = {f["name"]: f for f in json.load(open(stats_file))["functions"]}
    mine = {f["name"]: f for f in d["functions"] if f["calls_" + side]}
    assert set(st) == set(mine), (side, set(st) ^ set(mine))
    for name, f in st.items():
        g = mine[name]
        assert (g["calls_" + side], g["total_ns_" + side], g["self_ns_" + side]) == \
               (f["calls"], f["total_ns"], f["self_ns"]), (side, name, f, g)
    folded = dict((l.rsplit(" ", 1)[0], int(l.rsplit(" ", 1)[1])) for l in open(folded_file))
    paths = {p["path"]: p for p in d["paths"] if p["calls_" + side]}
    assert set(folded) == set(paths), (side, len(folded), len(paths))
    for k, v in folded.items():
        assert paths[k]["self_ns_" + side] == v, (side, k)
' "$TMP/gen.diff.json" "$TMP/s1.stats.json" "$TMP/s2.stats.json" "$TMP/one.folded" "$TMP/other.folded"

# usage
expect 2 "diff of one PATH" "$ATF" diff "$PA"
expect 2 "diff of three PATHs" "$ATF" diff "$PA" "$PB" "$PA"
expect 2 "diff --thread-frame bogus" "$ATF" diff --thread-frame all "$PA" "$PB"
expect 2 "diff --top bogus" "$ATF" diff --top many "$PA" "$PB"
expect 2 "diff --function of neither" "$ATF" diff --function nowhere "$PA" "$PB"
expect 1 "diff of a missing PATH" "$ATF" diff "$PA" "$TMP/no_such_dir"

rm -rf "$TMP"
finish
