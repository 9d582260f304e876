#!/bin/sh
# report_browser.sh - atf report's page in a real browser: Debian's chromium, headless
# (`make test-browser`; .ci/run installs chromium and runs it). For each page (pipeline.c
# recorded, alone and against a base; atf gen sessions with detail records, gaps and the
# recorder's pauses; names that try to be HTML):
#   - the page's self-test (opened as PAGE#selftest, read back with --dump-dom): the
#     flame graph's root spans it and is the process's total, its children add up, a click
#     zooms in, the button out, the search finds, the table sorts, the timeline draws its
#     slices and a click shows one, and no script error, console error or blocked load;
#   - no request leaves the page: chromium's NetLog of the run holds no request made for
#     the page (one whose isolation key, site or initiator is the file's), while a control
#     page that loads two URLs shows both, so that the check is seen to see them. Every
#     name resolves to nothing (--host-resolver-rules) and the proxy is a closed port:
#     nothing could be fetched in any case;
#   - a screenshot of the pages with --base and without: build/report.png,
#     build/report_base.png.
# Without chromium it says so and passes nothing (ATF_NEED_BROWSER=1, as .ci/run sets it:
# fails). Ends with the line "report_browser: N passed, M failed".
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROGS=$BUILD/programs
TMP=$BUILD/tests/report_browser
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=report_browser
. "$(dirname "$0")/check_lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    if [ "${ATF_NEED_BROWSER:-0}" = 1 ]; then
        fail "chromium is not installed (apt-get install chromium)"
    else
        echo "report_browser: chromium is not installed: the page was not opened in a browser" \
             "(apt-get install chromium; .ci/run does)"
    fi
    finish
fi

rm -rf "$TMP"
mkdir -p "$TMP"
ABS_TMP=$(cd "$TMP" && pwd)

# browse NAME FILE [FRAGMENT] [EXTRA...]: chromium opens FILE, headless, with no network;
# the DOM it ends with into $TMP/NAME.dom, its NetLog into $TMP/NAME.net.json, its log
# into $TMP/NAME.log.
browse() {
    bname=$1
    bfile=$2
    bfrag=$3
    shift 3
    rm -rf "$TMP/profile"
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-extensions --user-data-dir="$ABS_TMP/profile" --window-size=1280,1000 \
        --host-resolver-rules='MAP * ~NOTFOUND' --proxy-server=127.0.0.1:9 \
        --log-net-log="$ABS_TMP/$bname.net.json" --enable-logging=stderr --v=0 \
        --virtual-time-budget=10000 "$@" "file://$(cd "$(dirname "$bfile")" && pwd)/$(basename "$bfile")$bfrag" \
        >"$TMP/$bname.dom" 2>"$TMP/$bname.log"
}

# page_requests NAME: the URLs chromium requested for the page of run NAME, one a line.
page_requests() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
kinds = dict((v, k) for k, v in d["constants"]["logEventTypes"].items())
for e in d["events"]:
    p = e.get("params") or {}
    if kinds.get(e["type"]) != "URL_REQUEST_START_JOB":
        continue
    mine = "file://" in p.get("network_isolation_key", "") or "file://" in p.get("site_for_cookies", "") \
        or p.get("initiator") == "null" or p.get("initiator", "").startswith("file:")
    if mine:
        print(p.get("url", "?"))
' "$TMP/$1.net.json"
}

# check_page NAME FILE: the self-test passes, and no request leaves the page.
check_page() {
    browse "$1" "$2" "#selftest" --dump-dom
    if grep -q 'SELFTEST PASS' "$TMP/$1.dom"; then pass; else
        fail "$1: the self-test did not pass"
        sed -n '/id="selftest"/,/<\/div>/p' "$TMP/$1.dom" | grep -v '^ok ' | head -n 12
        grep -i 'console' "$TMP/$1.log" | head -n 5
    fi
    if [ -z "$PY" ]; then return; fi
    if [ ! -s "$TMP/$1.net.json" ]; then fail "$1: chromium wrote no NetLog"; return; fi
    req=$(page_requests "$1")
    [ -z "$req" ] && pass || fail "$1: the page made requests: $(echo "$req" | head -n 3 | tr '\n' ' ')"
}

PY=
command -v python3 >/dev/null 2>&1 && PY=python3
[ -n "$PY" ] || echo "report_browser: no python3: the NetLog is not read (the self-test still runs)"

# the check sees requests: a control page that loads two URLs
if [ -n "$PY" ]; then
    printf '%s\n' '<!DOCTYPE html><html><body><img src="http://example.invalid/a.png">' \
        '<script>fetch("https://example.invalid/b").catch(function () {});</script></body></html>' \
        >"$TMP/control.html"
    browse control "$TMP/control.html" "" --dump-dom
    n=$(page_requests control | grep -c 'example.invalid')
    [ "$n" -ge 2 ] && pass || fail "control page: the NetLog shows $n of its 2 requests: the check cannot see them"
fi

# the pages
session_of() { sed -n 's/^atf record: session //p' "$ERR" | head -n 1; }
expect 0 "record pipeline 1" timeout 60 "$ATF" record --output "$TMP/p1" -- "$PROGS/pipeline_hooked" 1
PA=$(session_of)
expect 0 "record pipeline 8" timeout 60 "$ATF" record --output "$TMP/p8" -- "$PROGS/pipeline_hooked" 8
PB=$(session_of)
expect 0 "report" "$ATF" report -o "$TMP/pipeline.html" "$PB"
check_page pipeline "$TMP/pipeline.html"
expect 0 "report --base" "$ATF" report -o "$TMP/base.html" --base "$PA" "$PB"
check_page base "$TMP/base.html"

expect 0 "gen with detail" "$ATF" gen --threads 3 --events 100000 --detail always --detail-every 8 "$TMP/detail"
SD=$(cat "$OUT")
expect 0 "report of gen" "$ATF" report -o "$TMP/detail.html" "$SD"
check_page detail "$TMP/detail.html"
expect 0 "gen with gaps" "$ATF" gen --threads 2 --events 30000 --ring-events 64 --overflow drop --seed 3 "$TMP/gaps"
expect 0 "report of gaps" "$ATF" report -o "$TMP/gaps.html" "$(cat "$OUT")"
check_page gaps "$TMP/gaps.html"
expect 0 "gen with pauses" "$ATF" gen --threads 2 --events 30000 --ring-events 64 --overflow block "$TMP/paused"
expect 0 "report of pauses" "$ATF" report -o "$TMP/paused.html" --from +1ms --to +3ms "$(cat "$OUT")"
check_page paused "$TMP/paused.html"

if [ -n "$PY" ]; then
    mkdir -p "$TMP/evil"
    cp -r "$SD" "$TMP/evil/pid_1"
    python3 -c '
import json, sys
p = sys.argv[1] + "/manifest.json"
m = json.load(open(p))
evil = ["</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>",
        "a//b http://example.com/x", "<link rel=stylesheet href=//example.com/s.css>"]
for i, s in enumerate(m["symbols"][:len(evil)]):
    s["name"] = evil[i]
json.dump(m, open(p, "w"))
' "$TMP/evil/pid_1"
    expect 0 "report of evil names" "$ATF" report -o "$TMP/evil.html" "$TMP/evil/pid_1"
    check_page evil "$TMP/evil.html"
    # the names are on the page as text (in the table's cells), never as elements
    if grep -q '&lt;img src=x onerror=alert(1)&gt;' "$TMP/evil.dom"; then pass; else
        fail "evil names: the names are not on the page as text"; fi
    n=$(grep -ci '<img\|<link' "$TMP/evil.dom")
    [ "$n" -eq 0 ] && pass || fail "evil names: $n elements made of a name"
fi

# screenshots (the page as it opens)
browse shot "$TMP/pipeline.html" "" --screenshot="$ABS_TMP/report.png" --hide-scrollbars
[ -s "$TMP/report.png" ] && cp "$TMP/report.png" "$BUILD/report.png" && pass ||
    fail "no screenshot of the report"
browse shot_base "$TMP/base.html" "" --screenshot="$ABS_TMP/report_base.png" --hide-scrollbars
[ -s "$TMP/report_base.png" ] && cp "$TMP/report_base.png" "$BUILD/report_base.png" && pass ||
    fail "no screenshot of the report with --base"

rm -rf "$TMP"
finish
