#!/bin/sh
# fuzz/run.sh TARGET DIR SECONDS MAX_LEN - runs the libFuzzer binary DIR/fuzz_TARGET for
# SECONDS seconds on a scratch copy of fuzz/corpus/TARGET (new inputs stay in
# DIR/work/TARGET, out of the repository), keeps its log in DIR/fuzz_TARGET.log, prints
# one summary line (executions, coverage, corpus), and exits non-zero on any crash, leak,
# timeout or out-of-memory, naming the input that caused it.
t=$1
dir=$2
secs=${3:-60}
max_len=${4:-65536}
bin=$dir/fuzz_$t
work=$dir/work/$t
art=$dir/artifacts/$t
# scratch files of the targets (thread, manifest, session write one per input): in memory
# when /dev/shm is there, since rewriting a file on a disk file system can wait on the disk
if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmp=/dev/shm/atf_fuzz_$$_$t; else tmp=$dir/tmp/$t; fi
log=$dir/fuzz_$t.log
rm -rf "$work" "$tmp"
mkdir -p "$work" "$art" "$tmp"
cp fuzz/corpus/"$t"/* "$work"/
start=$(date +%s)
TMPDIR=$tmp "$bin" -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art/" "$work" >"$log" 2>&1
status=$?
end=$(date +%s)
rm -rf "$tmp"
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -n 1 |
      sed 's/.*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1, ft \2, corpus \3/')
echo "fuzz_$t: ${execs:-?} executions in $((end - start)) s (${rate:-?}/s), ${cov:-no coverage line}"
if [ "$status" -ne 0 ]; then
    echo "FAIL fuzz_$t: exit status $status; log $log; the last lines:"
    grep -E 'ERROR|SUMMARY|invariant failed|Test unit written|==[0-9]+==' "$log" | head -n 20 | sed 's/^/    /'
    exit 1
fi
