#!/bin/sh
# configs.sh - `make configs`: every test harness built and run in each language mode and
# switch we promise, with each compiler present, all warnings as errors.
#
#   C (gcc, clang):   c99 c11 gnu11 static no-hw-crc no-threads malloc
#   C++ (g++, clang++): c++11 c++17: cpp_smoke.cpp and every harness, compiled as C++
#   static also builds and runs tests/compile/static_a.c + static_b.c (two TUs).
#
# Prints one line per configuration and ends with "configs: N passed, M failed", where N
# and M add up the harness tests of every configuration (a harness that does not build
# counts as one failure). Environment: CC_LIST, CXX_LIST, BUILD, JOBS (2), OPT (-O1).
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
OPT=${OPT:--O1}
out="$BUILD/configs"
warn="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion"
cxxwarn="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion"
common="$OPT -D_GNU_SOURCE -I. -Itests"

present() { command -v "$1" >/dev/null 2>&1; }
if [ -z "${CC_LIST+x}" ]; then
    CC_LIST=""
    for c in gcc clang; do present $c && CC_LIST="$CC_LIST $c"; done
fi
if [ -z "${CXX_LIST+x}" ]; then
    CXX_LIST=""
    for c in g++ clang++; do present $c && CXX_LIST="$CXX_LIST $c"; done
fi

# C configurations and their flags.
c_configs="c99 c11 gnu11 static no-hw-crc no-threads malloc"
c_flags() {
    case $1 in
    c99) echo "-std=c99" ;;
    c11) echo "-std=c11" ;;
    gnu11) echo "-std=gnu11" ;;
    static) echo "-std=c99 -DATF_STATIC" ;;
    no-hw-crc) echo "-std=c99 -DATF_NO_HW_CRC" ;;
    no-threads) echo "-std=c99 -DATF_NO_THREADS" ;;
    malloc) echo "-std=c99 -include tests/config_malloc.h" ;;
    esac
}

# A harness that does not define ATF_IMPLEMENTATION links lib/atf_impl.c, as in the
# Makefile: each configuration compiles it once (impl_job) into DIR/atf_impl.o. Under
# ATF_STATIC every translation unit has its own private copy, and the forced allocator's
# functions are each translation unit's own, so there it is compiled into the harness
# instead (under the forced allocator, into the command a harness links, where it has one).
# impl_for SRC DIR CONFIG: what to put after SRC on the harness's command line.
impl_for() {
    grep -q '^#define ATF_IMPLEMENTATION' "$1" && return
    case $3 in
    static) echo "-DATF_IMPLEMENTATION" ;;
    malloc) commands_harness "$1" || echo "-DATF_IMPLEMENTATION" ;;
    *) echo "-x none $2/atf_impl.o" ;;
    esac
}
# impl_job DIR COMPILE: the job that compiles the implementation with COMPILE.
impl_job() { object_job "$1" atf_impl lib/atf_impl.c "$2"; }

# The harnesses of the commands (they include tests/cli_traces.h or cli_embed.h) link the
# atf command, compiled once per configuration from tests/cli_embed.c (cli_job). Where
# there is no DIR/atf_impl.o the command compiles the implementation in: under ATF_STATIC
# a private copy beside the harness's, under the forced allocator the only one.
commands_harness() { grep -q -e '^#include "cli_traces.h"' -e '^#include "cli_embed.h"' "$1"; }
# cli_for SRC DIR: what to put after SRC on the harness's command line.
cli_for() { commands_harness "$1" && echo "-x none $2/cli_embed.o"; }
# cli_job DIR COMPILE CONFIG: the job that compiles the command with COMPILE.
cli_job() {
    case $3 in
    static | malloc) object_job "$1" cli_embed tests/cli_embed.c "$2 -DATF_IMPLEMENTATION" ;;
    *) object_job "$1" cli_embed tests/cli_embed.c "$2" ;;
    esac
}
# object_job DIR NAME SRC COMPILE: one object, DIR/NAME.o, compiled before the harnesses.
object_job() {
    m=$((m + 1))
    printf '%s -c -o %s/%s.o %s > %s/%s.out 2>&1\n' "$4" "$1" "$2" "$3" "$1" "$2" \
        >"$out/impl_jobs/$m.sh"
}
m=0

rm -rf "$out"
mkdir -p "$out/jobs" "$out/impl_jobs"
n=0
# job DIR NAME COMMAND: one compile, run later in parallel; failure leaves NAME.failed.
job() {
    n=$((n + 1))
    printf '%s > %s/%s.log 2>&1 || : > %s/%s.failed\n' "$3" "$1" "$2" "$1" "$2" \
        >"$out/jobs/$n.sh"
}

for cc in $CC_LIST; do
    for name in $c_configs; do
        flags=$(c_flags "$name")
        dir="$out/$(basename "$cc")-$name"
        mkdir -p "$dir"
        for src in tests/test_*.c; do
            prog=$(basename "$src" .c)
            f=$flags
            # a harness with its own allocator hooks already is the malloc configuration
            [ "$name" = malloc ] && grep -q 'define ATF_MALLOC' "$src" && f=-std=c99
            # harnesses that need what a configuration takes away are named, not run:
            # crash trials, the session suite and the hook test record with the drain
            # thread (ATF_NO_THREADS has none); the PATH kinds of test_core.c read a
            # lone thread directory, whose session reader tools/core.c gives a thread
            # array from the C library for the library's allocator to free
            case "$name/$prog" in
            no-threads/test_crash | no-threads/test_session | no-threads/test_instrument | \
            malloc/test_core)
                echo "$prog" >>"$dir/not_run"
                continue ;;
            esac
            # the instrumentation test is about code built with the hooks on (as in the Makefile)
            [ "$prog" = test_instrument ] && f="$f -finstrument-functions"
            job "$dir" "$prog" "$cc $f $warn $common -o $dir/$prog $src $(impl_for "$src" "$dir" "$name") $(cli_for "$src" "$dir") -lpthread"
        done
        case $name in static | malloc) ;; *) impl_job "$dir" "$cc $flags $warn $common" ;; esac
        cli_job "$dir" "$cc $flags $warn $common" "$name"
        if [ "$name" = static ]; then
            job "$dir" static_two_tu "$cc -std=c99 $warn $common -o $dir/static_two_tu \
tests/compile/static_a.c tests/compile/static_b.c -lpthread"
        fi
    done
done
for cxx in $CXX_LIST; do
    for std in c++11 c++17; do
        dir="$out/$(basename "$cxx")-$std"
        mkdir -p "$dir"
        for src in tests/test_*.c; do
            prog=$(basename "$src" .c)
            f=""
            [ "$prog" = test_instrument ] && f="-finstrument-functions"
            job "$dir" "$prog" "$cxx -x c++ -std=$std $cxxwarn $common $f -o $dir/$prog $src $(impl_for "$src" "$dir" "$std") $(cli_for "$src" "$dir") -lpthread"
        done
        impl_job "$dir" "$cxx -x c++ -std=$std $cxxwarn $common"
        cli_job "$dir" "$cxx -x c++ -std=$std $cxxwarn $common" "$std"
        job "$dir" cpp_smoke "$cxx -std=$std $cxxwarn $common -o $dir/cpp_smoke tests/cpp_smoke.cpp -lpthread"
    done
done

ls "$out/impl_jobs"/*.sh | xargs -n 1 -P "$JOBS" sh
ls "$out/jobs"/*.sh | xargs -n 1 -P "$JOBS" sh

total_p=0
total_f=0
for dir in "$out"/*-*; do
    cfg=$(basename "$dir")
    progs=""
    fails=0
    extra=0
    # an object that does not build (its compiler's words are in NAME.out)
    for o in "$dir"/*.out; do
        [ -s "$o" ] || continue
        echo "FAIL configs.$cfg: $(basename "$o" .out).o does not build"
        sed 's/^/    /' "$o" | head -n 12
        fails=$((fails + 1))
    done
    for log in "$dir"/*.log; do
        prog=$(basename "$log" .log)
        if [ "$prog" = static_two_tu ] && [ ! -e "$dir/$prog.failed" ]; then
            # no summary of its own: exit status 0 is one passed test
            if "$dir/$prog" >/dev/null 2>&1; then extra=1
            else echo "FAIL configs.$cfg: static_two_tu exited non-zero"; fails=$((fails + 1)); fi
            continue
        fi
        if [ ! -e "$dir/$prog.failed" ]; then
            progs="$progs $dir/$prog"
            continue
        fi
        echo "FAIL configs.$cfg: $prog does not build"
        # the first failure of a configuration shows the compiler's words
        [ "$fails" -eq 0 ] && sed 's/^/    /' "$log" | head -n 12
        fails=$((fails + 1))
    done
    ATF_TEST_TMP="$dir" tests/run_all.sh $progs >"$dir/run.log" 2>&1
    line=$(tail -n 1 "$dir/run.log")
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
    p=$((p + extra))
    f=$((f + fails))
    total_p=$((total_p + p))
    total_f=$((total_f + f))
    note=""
    [ -e "$dir/not_run" ] && note="$note (not for this configuration: $(tr '\n' ' ' <"$dir/not_run"))"
    echo "configs.$cfg: $p passed, $f failed$note"
    if [ "$f" -ne 0 ]; then
        grep -E '^(FAIL|  [^ ]+:[0-9]+:)' "$dir/run.log" | head -n 30
    fi
done
echo "configs: $total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
