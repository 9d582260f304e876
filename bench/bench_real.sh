#!/bin/sh
# bench_real.sh - `make bench-real`: real programs from Debian's source packages, built with
# -finstrument-functions, each workload run plain, under `atf record` and under `uftrace
# record --no-libcall` (the same binary for both tracers), quiet and then with one core
# kept busy (`yes > /dev/null`). Prints one line per workload and machine state: the
# median wall seconds of each (BENCH_REAL_RUNS runs, interleaved), uftrace / ours, and of
# the last traces the events, events lost, tracer pauses and bytes on disk per event, ours
# (atf record's default, the packed layout) and uftrace's (its data directory over the
# same events).
# A benchmark, never a test: not part of `make test` or CI, and it fails on no figure.
#
#   make bench-real [BENCH_REAL_RUNS=3] [BENCH_REAL_SIZE=small|full]
#                   [BENCH_REAL_STATES="quiet busy"]
#
# The programs: Lua 5.4 (package lua5.4: a recursive fib and a table sort), the SQLite
# shell (package sqlite3: inserts, an index, GROUP BY queries), zstd (package libzstd:
# compressing its own sources with two worker threads, -T2) and bench/bench_threads.cpp
# (C++: four busy threads on this machine's two cores, recursion through std::vector and
# std::map, exceptions). SIZE small keeps each layout-1 trace under 3 GB (below this
# machine's dirty-page limit); full is ten times that.
# Sources come from `apt-get source` (a deb-src entry is added next to the deb one when
# there is none; run as root); nothing else is downloaded. Everything is built and traced
# under $BUILD/bench_real, every trace deleted after its run, every traced run bounded by
# `timeout`: a traced run stopped by it is printed as more than its bound (">600.000 s"),
# and a ratio that rests on one as a bound (">28.82"), never as a time.
set -u
BUILD=${BUILD:-build}
ATF=${ATF:-$BUILD/atf}
RUNS=${BENCH_REAL_RUNS:-3}
SIZE=${BENCH_REAL_SIZE:-small}
STATES=${BENCH_REAL_STATES:-quiet busy}
W=$(cd "$BUILD" && pwd)/bench_real
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
ATF=$(cd "$(dirname "$ATF")" && pwd)/$(basename "$ATF")
LIMIT=600                                 # seconds a traced run may take
mkdir -p "$W/src" "$W/bin" "$W/data"

note() { echo "bench-real: $*"; }

# ---- sources -------------------------------------------------------------------------
sources() {
    if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ &&
       ! grep -qs '^deb-src' /etc/apt/sources.list; then
        f=/etc/apt/sources.list.d/debian.sources
        [ -f "$f" ] || { note "no deb-src entry and no $f to copy one from"; return 1; }
        sed 's/^Types: deb$/Types: deb-src/' "$f" >/etc/apt/sources.list.d/atf-bench-src.sources ||
            return 1
        apt-get update -qq >/dev/null 2>&1 || return 1
    fi
    command -v dpkg-source >/dev/null 2>&1 || apt-get install -y -qq dpkg-dev >/dev/null 2>&1
    (cd "$W/src" && for p in lua5.4 sqlite3 libzstd; do
        ls -d "$p"-*/ >/dev/null 2>&1 || apt-get source -qq "$p" >/dev/null 2>&1 || exit 1
    done)
}

# ---- builds: NAME_plain and NAME_hooked in $W/bin --------------------------------------
build_lua() {
    [ -x "$W/bin/lua_hooked" ] && return 0
    d=$(ls -d "$W"/src/lua5.4-*/src | head -n 1)
    mkdir -p "$W/inc"
    echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$W/inc/lua5.4-deb-multiarch.h"
    files=$(cd "$d" && ls *.c | grep -v '^luac\.c$')
    (cd "$d" && cc -O2 -g -DLUA_USE_LINUX -I"$W/inc" -o "$W/bin/lua_plain" $files -lm -ldl &&
        cc -O2 -g -finstrument-functions -DLUA_USE_LINUX -I"$W/inc" -o "$W/bin/lua_hooked" \
            $files -lm -ldl)
}

build_sqlite() {
    [ -x "$W/bin/sqlite3_hooked" ] && return 0
    d=$(ls -d "$W"/src/sqlite3-*/ | head -n 1)
    # the amalgamation and the shell's source, then each build from them in one command
    # (the tree's own build links through a libtool wrapper)
    rm -rf "$W/sqlite" && mkdir -p "$W/sqlite" &&
        (cd "$W/sqlite" && "$d/configure" --disable-tcl >build.log 2>&1 &&
            make sqlite3.c shell.c >>build.log 2>&1) || return 1
    for how in plain hooked; do
        flags="-O2 -g"
        [ "$how" = hooked ] && flags="$flags -finstrument-functions"
        (cd "$W/sqlite" && cc $flags -DSQLITE_THREADSAFE=0 -o "$W/bin/sqlite3_$how" shell.c \
            sqlite3.c -lm -ldl >>build.log 2>&1) || return 1
    done
}

build_zstd() {
    [ -x "$W/bin/zstd_hooked" ] && return 0
    d=$(ls -d "$W"/src/libzstd-*/ | head -n 1)
    for how in plain hooked; do
        flags="-O2 -g"
        [ "$how" = hooked ] && flags="$flags -finstrument-functions"
        (cd "$d" && cc $flags -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -DZSTD_LEGACY_SUPPORT=0 \
            -Ilib -Ilib/common programs/*.c lib/common/*.c lib/compress/*.c \
            lib/decompress/*.c lib/dictBuilder/*.c -pthread -o "$W/bin/zstd_$how") || return 1
    done
}

# zstd's input: its own sources, ZSTD_BYTES of them
zstd_input() {
    d=$(ls -d "$W"/src/libzstd-*/ | head -n 1)
    [ -n "$d" ] || return 1
    (cd "$d" && tar cf "$W/data/src.tar" lib programs) || return 1
    : >"$W/data/zstd.in"
    while [ "$(wc -c <"$W/data/zstd.in")" -lt "$ZSTD_BYTES" ]; do
        cat "$W/data/src.tar" >>"$W/data/zstd.in"
    done
}

build_cxx() {
    [ -x "$W/bin/threads_hooked" ] && return 0
    c++ -O2 -g -std=c++11 -pthread -o "$W/bin/threads_plain" "$SRC_DIR/bench/bench_threads.cpp" &&
        c++ -O2 -g -std=c++11 -pthread -finstrument-functions -o "$W/bin/threads_hooked" \
            "$SRC_DIR/bench/bench_threads.cpp"
}

# ---- workloads --------------------------------------------------------------------------
if [ "$SIZE" = full ]; then
    LUA_N=31 SQL_ROWS=1500000 ZSTD_BYTES=80000000 CXX_ROUNDS=500
else
    LUA_N=26 SQL_ROWS=150000 ZSTD_BYTES=8000000 CXX_ROUNDS=50
fi
cat >"$W/data/work.lua" <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local n = tonumber(arg[1])
local t = {}
for i = 1, n * 4000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
print(fib(n), t[1], t[#t])
LUA
cat >"$W/data/work.sql" <<SQL
CREATE TABLE t(a INTEGER, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $SQL_ROWS)
INSERT INTO t SELECT i, printf('row%d', i % 1000), i * 0.5 FROM n;
CREATE INDEX tb ON t(b);
SELECT b, count(*), sum(c) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM t WHERE b > 'row5';
SQL

# run_one KIND NAME ARGS...: wall seconds of one run (KIND plain, atf or uftrace); a
# traced run that `timeout` stopped leaves the file $W/t.KIND.timedout
run_one() {
    kind=$1 name=$2
    shift 2
    rm -rf "$W/trace"
    mkdir -p "$W/trace"
    s=$(date +%s.%N)
    case $kind in
    plain) "$W/bin/${name}_plain" "$@" >/dev/null 2>&1 ;;
    atf) timeout "$LIMIT" "$ATF" record --output "$W/trace" -- "$W/bin/${name}_hooked" "$@" \
             >/dev/null 2>"$W/atf.err" ;;
    uftrace) timeout "$LIMIT" uftrace record --no-libcall -d "$W/trace/uftrace.data" \
                 "$W/bin/${name}_hooked" "$@" >/dev/null 2>&1 ;;
    esac
    [ $? -eq 124 ] && : >"$W/t.$kind.timedout"
    e=$(date +%s.%N)
    echo "$e - $s" | bc
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure LABEL NAME ARGS...: RUNS interleaved runs of each kind, then the line
measure() {
    label=$1 name=$2
    shift 2
    : >"$W/t.plain"
    : >"$W/t.atf"
    : >"$W/t.uftrace"
    rm -f "$W/t.atf.timedout" "$W/t.uftrace.timedout"
    i=0
    ubytes=
    while [ "$i" -lt "$RUNS" ]; do
        run_one plain "$name" "$@" >>"$W/t.plain"
        run_one atf "$name" "$@" >>"$W/t.atf"
        events=$("$ATF" stats --json "$W"/trace/session_* 2>/dev/null |
                 python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(t["events"] for t in d["threads"]), sum(t["dropped"] + t["events_lost"] for t in d["threads"]), d["pauses"]["total_ns"])' 2>/dev/null)
        bytes=$(du -sb "$W/trace" | cut -f1)
        if [ "$have_uftrace" = 1 ]; then
            run_one uftrace "$name" "$@" >>"$W/t.uftrace"
            ubytes=$(du -sb "$W/trace" | cut -f1)
        fi
        rm -rf "$W/trace"
        i=$((i + 1))
    done
    p=$(median <"$W/t.plain")
    a=$(median <"$W/t.atf")
    as=$(printf '%.3f' "$a")
    u=-
    ratio=-
    if [ "$have_uftrace" = 1 ]; then
        u=$(printf '%.3f' "$(median <"$W/t.uftrace")")
        ratio=$(printf '%.2f' "$(echo "scale=4; $u / $a" | bc)")
    fi
    # a run stopped at the bound: its time is a lower bound, and so is what rests on it
    if [ -e "$W/t.uftrace.timedout" ] && [ ! -e "$W/t.atf.timedout" ]; then
        u=">$u" ratio=">$ratio"
    elif [ -e "$W/t.atf.timedout" ]; then
        as=">$as" ratio="?"
        [ -e "$W/t.uftrace.timedout" ] && u=">$u"
    fi
    set -- $events
    bpe=- ubpe=-
    if [ "${1:-0}" -gt 0 ] 2>/dev/null; then
        bpe=$(printf '%.2f' "$(echo "scale=3; $bytes / $1" | bc)")
        [ -n "$ubytes" ] && ubpe=$(printf '%.2f' "$(echo "scale=3; $ubytes / $1" | bc)")
        [ -e "$W/t.uftrace.timedout" ] && [ "$ubpe" != - ] && ubpe=">$ubpe" # what it wrote so far
    fi
    printf '%-28s plain %7.3f s  ours %7s s  uftrace %7s s  uftrace/ours %5s  events %s  lost %s  paused %s ns  bytes/event ours %s uftrace %s\n' \
        "$label" "$p" "$as" "$u" "$ratio" "${1:--}" "${2:--}" "${3:--}" "$bpe" "$ubpe"
}

have_uftrace=0
command -v uftrace >/dev/null 2>&1 && have_uftrace=1
[ "$have_uftrace" = 1 ] || note "uftrace not installed (apt-get install uftrace): its column skipped"
[ -x "$ATF" ] || { note "no $ATF (make first)"; exit 1; }
if ! sources; then
    note "could not get the source packages (deb-src, apt-get source): nothing measured"
    exit 0
fi
build_lua || note "the Lua build failed"
build_sqlite || note "the SQLite build failed (see $W/sqlite-*/build.log)"
build_zstd && zstd_input || note "the zstd build failed"
build_cxx || note "the C++ build failed"

for state in $STATES; do
    spinner=
    if [ "$state" = busy ]; then
        timeout 3600 yes >/dev/null &
        spinner=$!
    fi
    [ -x "$W/bin/lua_hooked" ] && measure "lua fib($LUA_N)+sort, $state" lua "$W/data/work.lua" "$LUA_N"
    [ -x "$W/bin/sqlite3_hooked" ] &&
        measure "sqlite $SQL_ROWS rows, $state" sqlite3 ":memory:" ".read $W/data/work.sql"
    [ -x "$W/bin/zstd_hooked" ] &&
        measure "zstd -T2 $ZSTD_BYTES B, $state" zstd -T2 -3 -f -q -o "$W/data/zstd.out" "$W/data/zstd.in"
    [ -x "$W/bin/threads_hooked" ] &&
        measure "c++ 4 threads x $CXX_ROUNDS, $state" threads "$CXX_ROUNDS" 4
    [ -n "$spinner" ] && kill "$spinner" 2>/dev/null
done
rm -rf "$W/trace"
