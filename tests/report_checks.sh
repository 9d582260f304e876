#!/bin/sh
# Checks of atf report ($ATF): the page it writes, read back without a browser
# (tests/report_browser.sh opens it in one):
#   - on recordings of tests/programs/pipeline.c (its argument changes the work of one
#     call path): no URL anywhere (no scheme, no "//", no src=, href= or url()), the
#     Content-Security-Policy of default-src 'none', the data parses as JSON and agrees
#     with atf stats --json (the flame graph's root is the time of main, the process's
#     outermost call; the function table is stats' table), every frame's children add
#     up to at most its total less its self time, a path's numbers come after its
#     caller's; with --base the changed function heads the diff table and its path has
#     its calls in both traces;
#   - on sessions of atf gen: three threads (the root is the time of the outermost
#     calls that atf diff --json counts, each thread frame its thread's), detail records
#     as the arguments of the timeline's slices, gaps and the recorder's pauses on the
#     timeline, --from/--to as the timeline's window; ten million events: the page
#     stays under 5 MB;
#   - names that try to end the script element or to load something stay text;
#   - tools/report_page.h is what tools/report_page.sh makes of tools/report.html;
#   - usage and data errors: no -o, a bad --prune or --thread-frame, --from after
#     --to (2); a missing PATH or base, an OUT that cannot be written (1), no file left.
# Needs python3 for the JSON (without it, only the exit statuses and the greps).
# Ends with the line "report: N passed, M failed"; exits non-zero on failure.
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROGS=$BUILD/programs
TMP=$BUILD/tests/report_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=report
. "$(dirname "$0")/check_lib.sh"

rm -rf "$TMP"
mkdir -p "$TMP"

# The data of a page, as Python reads it: report_data(FILE) in every check below.
READ='
import json, re, sys
def report_data(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<script type=\"application/json\" id=\"atf-data\">\n(.*?)\n</script>", text, re.S)
    assert m, "no data element"
    return json.loads(m.group(1))
def check_tree(d):
    nodes = d["flame"]["nodes"]
    sides = d["flame"]["sides"]
    assert nodes[0][0] == -1, "node 0 is not the root"
    kids = {}
    for i, n in enumerate(nodes[1:], 1):
        assert 0 <= n[0] < i, "node %d: its parent %d does not come first" % (i, n[0])
        kids.setdefault(n[0], []).append(n)
    for k in range(sides):
        for i, n in enumerate(nodes):
            below = sum(c[3 + 3 * k] for c in kids.get(i, []))
            is_thread = n[-1] == 1
            self_ns = 0 if i == 0 or is_thread else n[4 + 3 * k]
            assert below + self_ns <= n[3 + 3 * k], "node %d: its children exceed it" % i
'

# no_url NAME FILE: nothing in FILE could name another resource.
no_url() {
    n=$(grep -ciE 'https?:|ftp:|file:|data:text|//|src=|href=|url\(|@import|<link|<iframe|<object|<embed' "$2")
    [ "$n" -eq 0 ] && pass || { fail "$1: $n lines that could name another resource"; \
        grep -inE 'https?:|ftp:|file:|data:text|//|src=|href=|url\(|@import|<link|<iframe|<object|<embed' "$2" | head -n 3; }
    if grep -q "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">" "$2"
    then pass; else fail "$1: no Content-Security-Policy of default-src 'none'"; fi
}

# ---- the page's source ------------------------------------------------------------------------
if sh "$(dirname "$0")/../tools/report_page.sh" "$(dirname "$0")/../tools/report.html" |
    cmp -s - "$(dirname "$0")/../tools/report_page.h"; then pass; else
    fail "tools/report_page.h is not what tools/report_page.sh makes of tools/report.html (make remakes it)"; fi

# ---- pipeline: one thread, one path changed --------------------------------------------------
session_of() { sed -n 's/^atf record: session //p' "$ERR" | head -n 1; }
expect 0 "record pipeline 1" timeout 60 "$ATF" record --output "$TMP/p1" -- "$PROGS/pipeline_hooked" 1
PA=$(session_of)
expect 0 "record pipeline 8" timeout 60 "$ATF" record --output "$TMP/p8" -- "$PROGS/pipeline_hooked" 8
PB=$(session_of)

expect 0 "report" "$ATF" report -o "$TMP/p8.html" "$PB"
[ -s "$TMP/p8.html" ] && [ ! -s "$OUT" ] && [ ! -s "$ERR" ] && pass ||
    { fail "report: no page, or output on stdout or stderr"; show; }
no_url "report" "$TMP/p8.html"
"$ATF" stats --json "$PB" >"$TMP/p8.stats.json" 2>"$ERR"
py "report: the data against atf stats --json" "$READ"'
d = report_data(sys.argv[1])
st = json.load(open(sys.argv[2]))
check_tree(d)
nodes, names = d["flame"]["nodes"], d["names"]
main = [f for f in st["functions"] if f["name"] == "main"][0]
assert nodes[0][3] == main["total_ns"], "root %d, main %d" % (nodes[0][3], main["total_ns"])
assert nodes[0][2] == 1, "root calls %d" % nodes[0][2]
rows = dict((r[0], r) for r in d["functions"]["rows"])
assert d["functions"]["count"] == len(st["functions"]) == len(rows)
for f in st["functions"]:
    r = rows[f["name"]]
    assert (r[1], r[2], r[3], r[4], r[5]) == (f["calls"], f["total_ns"], f["self_ns"], f["min_ns"], f["max_ns"]), (r, f)
by_self = [r[3] for r in d["functions"]["rows"]]
assert by_self == sorted(by_self, reverse=True), "table not by self time"
def path(i):
    p = []
    while nodes[i][0] >= 0:
        p.insert(0, names[nodes[i][1]])
        i = nodes[i][0]
    return ";".join(p)
paths = dict((path(i), n) for i, n in enumerate(nodes) if i)
assert paths["pipeline_hooked;main;load;parse;normalize"][2] == 128, paths.keys()
assert d["facts"]["cmdline"].endswith("pipeline_hooked 8"), d["facts"]["cmdline"]
assert d["facts"]["events"] == sum(t["events"] for t in st["threads"])
assert d["timeline"]["slices"], "no slice on the timeline"
assert d["base"] is None and "diff" not in d
' "$TMP/p8.html" "$TMP/p8.stats.json"

expect 0 "report --base" "$ATF" report -o "$TMP/diff.html" --base "$PA" "$PB"
no_url "report --base" "$TMP/diff.html"
py "report --base: normalize first, its path in both" "$READ"'
d = report_data(sys.argv[1])
check_tree(d)
rows = d["diff"]["rows"]
assert rows[0][0] == "normalize", [r[0] for r in rows]
assert (rows[0][1], rows[0][2]) == (128, 16), rows[0]
for r in rows[1:]:
    assert r[1] == r[2], r
    assert abs(r[5] - r[6]) <= abs(rows[0][5] - rows[0][6]), r
nodes, names = d["flame"]["nodes"], d["names"]
assert d["flame"]["sides"] == 2
norm = [n for n in nodes[1:] if names[n[1]] == "normalize"]
assert len(norm) == 1 and (norm[0][2], norm[0][5]) == (128, 16), norm
' "$TMP/diff.html"

# ---- gen: threads, detail, gaps, pauses, a window --------------------------------------------
gen_session() {
    gname=$1
    shift
    expect 0 "gen $gname" "$ATF" gen "$@" "$TMP/$gname"
    S=$(cat "$OUT")
}
gen_session detail --threads 3 --events 100000 --detail always --detail-every 8
SD=$S
expect 0 "report of 3 threads with detail" "$ATF" report -o "$TMP/detail.html" "$SD"
"$ATF" diff --json "$SD" "$SD" >"$TMP/detail.diff.json" 2>"$ERR"
py "report: the root and the threads against atf diff --json" "$READ"'
d = report_data(sys.argv[1])
check_tree(d)
diff = json.load(open(sys.argv[2]))
nodes, names = d["flame"]["nodes"], d["names"]
assert nodes[0][3] == diff["total_ns_a"], "root %d, diff %d" % (nodes[0][3], diff["total_ns_a"])
threads = [n for n in nodes if n[-1] == 1]
assert sorted(names[n[1]] for n in threads) == ["gen-0", "gen-1", "gen-2"], threads
assert sum(n[3] for n in threads) == nodes[0][3]
args = [s[6] for s in d["timeline"]["slices"] if s[6]]
assert args and all(a["function_id"].startswith("0x") and "x0" in a and "sp" in a for a in args), args[:1]
assert len(d["facts"]["threads"]) == 3
' "$TMP/detail.html" "$TMP/detail.diff.json"

gen_session gaps --threads 2 --events 30000 --ring-events 64 --overflow drop --seed 3
expect 0 "report of gaps" "$ATF" report -o "$TMP/gaps.html" "$S"
py "report: gaps on the timeline and in the facts" "$READ"'
d = report_data(sys.argv[1])
f = d["facts"]
assert f["gaps"] > 0 and f["lost"] > 0, f
marks = d["timeline"]["marks"]
assert any(m[4].startswith("gap: ") and m[3] > 0 for m in marks) or d["timeline"]["marks_all"] == 0, marks[:3]
' "$TMP/gaps.html"

gen_session paused --threads 2 --events 30000 --ring-events 64 --overflow block
expect 0 "report --from +1ms --to +2ms" "$ATF" report --from +1ms --to +2ms -o "$TMP/paused.html" "$S"
py "report: pauses, and the window given" "$READ"'
d = report_data(sys.argv[1])
f, tl = d["facts"], d["timeline"]
assert f["pauses"] > 0 and f["paused_ns"] > 0, f
assert tl["chosen"].startswith("as given"), tl["chosen"]
assert int(tl["from_ns"]) == int(f["first_ns"]) + 1000000 or int(tl["from_ns"]) >= int(f["first_ns"]), tl
assert tl["window_ns"] <= 1000001, tl["window_ns"]
assert all(s[2] + s[3] <= tl["window_ns"] for s in tl["slices"]), "a slice past the window"
' "$TMP/paused.html"

# ten million events (atf gen's, 300 MB on disk for a few seconds): the page stays small
expect 0 "gen 10 M events" "$ATF" gen --threads 4 --events 2500000 "$TMP/big"
SB=$(cat "$OUT")
expect 0 "report of 10 M events" "$ATF" report -o "$TMP/big.html" "$SB"
size=$(wc -c <"$TMP/big.html")
[ "$size" -lt 5000000 ] && pass || fail "report of 10 M events: $size bytes, not under 5 MB"
py "report of 10 M events: the data" "$READ"'
d = report_data(sys.argv[1])
check_tree(d)
assert d["facts"]["events"] == 10000000, d["facts"]["events"]
assert d["timeline"]["window_ns"] == 2000000 and d["timeline"]["chosen"].startswith("the busiest"), d["timeline"]["chosen"]
' "$TMP/big.html"
rm -rf "$TMP/big"

# ---- names that try to be HTML or a URL ---------------------------------------------------------
mkdir -p "$TMP/evil"
cp -r "$SD" "$TMP/evil/pid_1"
py "evil names: the manifest rewritten" '
import json, sys
p = sys.argv[1] + "/manifest.json"
m = json.load(open(p))
evil = ["</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a//b http://example.com/x",
        "&amp;&lt;\u2028\u2029\\\"", "url(//x) <link href=//y>"]
for i, s in enumerate(m["symbols"][:len(evil)]):
    s["name"] = evil[i]
json.dump(m, open(p, "w"))
' "$TMP/evil/pid_1"
expect 0 "report of evil names" "$ATF" report -o "$TMP/evil.html" "$TMP/evil/pid_1"
no_url "report of evil names" "$TMP/evil.html"
n=$(grep -ci '<script' "$TMP/evil.html")
[ "$n" -eq 2 ] && pass || fail "report of evil names: $n <script elements, expected 2"
py "evil names: the data holds them as text" "$READ"'
d = report_data(sys.argv[1])
names = set(d["names"]) | set(r[0] for r in d["functions"]["rows"])
for s in ["</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a//b http://example.com/x"]:
    assert s in names, (s, sorted(names)[:10])
' "$TMP/evil.html"

# ---- errors ---------------------------------------------------------------------------------------
expect 2 "report without -o" "$ATF" report "$PB"
expect 2 "report --prune bogus" "$ATF" report -o "$TMP/x.html" --prune 120 "$PB"
expect 2 "report --thread-frame bogus" "$ATF" report -o "$TMP/x.html" --thread-frame all "$PB"
expect 2 "report --from after --to" "$ATF" report -o "$TMP/x.html" --from +2ms --to +1ms "$PB"
expect 2 "report of two PATHs" "$ATF" report -o "$TMP/x.html" "$PA" "$PB"
expect 1 "report of a missing PATH" "$ATF" report -o "$TMP/x.html" "$TMP/no_such_dir"
expect 1 "report --base missing" "$ATF" report -o "$TMP/x.html" --base "$TMP/no_such_dir" "$PB"
expect 1 "report to a directory that is not there" "$ATF" report -o "$TMP/no/such/dir/x.html" "$PB"
[ ! -e "$TMP/x.html" ] && pass || fail "report: a page left after an error"
expect 0 "report --help" "$ATF" report --help
grep -q '^usage: atf report -o OUT' "$OUT" && pass || fail "report --help: no usage line"

rm -rf "$TMP"
finish
