#!/bin/sh
# parquet_duckdb.sh - DuckDB reads what tools/parquet.c writes: runs tests/parquet_gen
# for its three tables (slices, edges, empty), and `atf gen --detail always` then `atf
# export --format parquet` for both tables of a recorded session (checked against `atf
# stats --json`, the slices' has_detail against the events' detail_seq, the wall-clock
# columns against the manifest's wall_clock_ns anchor; and of a copy of it without the
# anchor, whose wall-clock columns are null), then tests/parquet_duckdb.mjs on each, with @duckdb/node-api installed from the npm
# registry into NPM_DIR (once; later runs reuse it). ATF names the atf command (default
# $BUILD/atf). Ends with "parquet_duckdb: N passed, M failed" (the format of
# tests/run_all.sh). Skips with a note (exit 0) when node or npm is missing.
#
# usage: tests/parquet_duckdb.sh [PARQUET_GEN NPM_DIR WORK_DIR]
#   PARQUET_GEN  the built tests/parquet_gen.c      (default $BUILD/tests/parquet_gen)
#   NPM_DIR      where `npm install --prefix` puts the package      (default $BUILD/npm)
#   WORK_DIR     scratch directory for the files and expected JSON  (default $BUILD/parquet)
#   BUILD defaults to build.
set -eu

build=${BUILD:-build}
if [ $# -ne 0 ] && [ $# -ne 3 ]; then
    echo "usage: $0 [PARQUET_GEN NPM_DIR WORK_DIR]" >&2
    exit 2
fi
gen=${1:-$build/tests/parquet_gen}
npm_dir=${2:-$build/npm}
work=${3:-$build/parquet}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "parquet_duckdb: skipped (node or npm not found)"
    echo "parquet_duckdb: 0 passed, 0 failed"
    exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$npm_dir" "$work"
if [ ! -d "$npm_dir/node_modules/@duckdb/node-api" ]; then
    echo "parquet_duckdb: installing @duckdb/node-api into $npm_dir"
    npm install --prefix "$npm_dir" --no-audit --no-fund @duckdb/node-api >"$work/npm.log" 2>&1 || {
        echo "parquet_duckdb: npm install failed, see $work/npm.log" >&2
        exit 1
    }
fi

# slices: 5 row groups of 65536 rows (the last short), pages of 20000 values
"$gen" "$work/slices.parquet" 300000 65536 >"$work/slices.json"
"$gen" --edges "$work/edges.parquet" >"$work/edges.json"
"$gen" --empty "$work/empty.parquet" >"$work/empty.json"

# a recorded session: 3 threads, with an odd event count so the last calls stay open, and
# detail on every 16th event (calls and returns)
atf=${ATF:-$build/atf}
rm -rf "$work/session"
pid_dir=$("$atf" gen --threads 3 --events 200001 --detail always "$work/session")
"$atf" stats --json "$pid_dir" >"$work/stats.json"
# the first wall_clock_ns anchor of the manifest (what the export reads): host_ns, value
anchor=$(grep -o '"name":"wall_clock_ns","host_ns":[0-9]*,"value":[0-9]*,"timescale":1000000000' \
         "$pid_dir/manifest.json" | head -n 1)
host_ns=$(printf '%s\n' "$anchor" | sed 's/.*"host_ns":\([0-9]*\).*/\1/')
value=$(printf '%s\n' "$anchor" | sed 's/.*"value":\([0-9]*\).*/\1/')
for table in slices events; do
    "$atf" export --format parquet --table "$table" -o "$work/atf_$table.parquet" "$pid_dir"
    { printf '{"kind":"atf_%s","events":"atf_events.parquet",' "$table"
      printf '"wall":{"host_ns":"%s","value":"%s"},"stats":' "${host_ns:-0}" "${value:-0}"
      cat "$work/stats.json"; echo '}'; } >"$work/atf_$table.json"
done
# the same session without its timing anchors: no wall clock
rm -rf "$work/nowall"
cp -r "$pid_dir" "$work/nowall"
sed 's/"timing_anchors":\[[^]]*\]/"timing_anchors":[]/' "$pid_dir/manifest.json" >"$work/nowall/manifest.json"
"$atf" export --format parquet --table slices -o "$work/atf_nowall.parquet" "$work/nowall"
"$atf" export --format parquet --table events -o "$work/atf_nowall_events.parquet" "$work/nowall"
printf '{"kind":"atf_nowall","events":"atf_nowall_events.parquet"}\n' >"$work/atf_nowall.json"

passed=0
failed=0
for kind in slices edges empty atf_slices atf_events atf_nowall; do
    out=$(node "$here/parquet_duckdb.mjs" "$npm_dir" "$work/$kind.parquet" "$work/$kind.json" 2>&1) ||
        true
    printf '%s\n' "$out"
    counts=$(printf '%s\n' "$out" | sed -n 's/^parquet_duckdb[._a-z]*: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
    if [ -z "$counts" ]; then
        failed=$((failed + 1)) # the script died before its summary
    else
        passed=$((passed + ${counts% *}))
        failed=$((failed + ${counts#* }))
    fi
done
echo "parquet_duckdb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
