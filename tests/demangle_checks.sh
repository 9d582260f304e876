#!/bin/sh
# C++ names as people read them: tests/programs/names.cpp (namespaces, templates, operators,
# a lambda, an anonymous namespace, a function pointer's return, an ABI tag, a local
# class), built with g++ -finstrument-functions and recorded with `atf record`, read back
# demangled by every command: stats (text and --json, with the mangled symbol), tree,
# dump --json, the exports (chrome, folded, Parquet with its mangled column) in full,
# short (a template's instances one function) and none; --function by a full, short or
# mangled name; the tracer's filters and triggers by readable name, given to atf record
# and as environment variables. Linux only (where the tracer runs), and only with the
# program built (make test builds it with $CXX). Ends with "demangle_checks: N passed,
# M failed".
ATF=${ATF:-build/atf}
BUILD=${BUILD:-build}
PROG=$BUILD/programs/names_hooked
SO=$BUILD/libatf_instrument.so
TMP=$BUILD/tests/demangle_checks
OUT=$TMP/out
ERR=$TMP/err
CHECK_NAME=demangle_checks
. "$(dirname "$0")/check_lib.sh"

rm -rf "$TMP"
mkdir -p "$TMP"
if [ "$(uname -s)" != Linux ] || [ ! -x "$PROG" ] || [ ! -f "$SO" ]; then
    echo "demangle_checks: skipped (needs Linux, $PROG and $SO)"
    finish
fi

# has NAME TEXT: the last command's output holds TEXT (fixed string)
has() {
    if grep -qF -- "$2" "$OUT"; then pass; else fail "$1: no '$2'"; show; fi
}
# lacks NAME TEXT: it does not
lacks() {
    if grep -qF -- "$2" "$OUT"; then fail "$1: '$2' there"; show; else pass; fi
}
# record DIR ARGS...: names.cpp recorded by atf record ARGS into DIR (bounded); the
# session directory in $S
record() {
    dir=$1
    shift
    expect 0 "record $*" timeout 60 "$ATF" record --output "$dir" "$@" -- "$PROG"
    S=$(ls -d "$dir"/session_* 2>/dev/null | head -n 1)
}
# the functions `atf stats` lists (one name per line, sorted), from --json in $OUT
functions() {
    sed -n 's/^{"fid":"[^"]*","name":"\(.*\)","calls":[0-9]*,.*/\1/p' "$OUT" | LC_ALL=C sort
}

record "$TMP/all"
[ -n "$S" ] || { fail "no session recorded"; finish; }

# ---- stats: full names (the default), each with its symbol ------------------------------
expect 0 "stats --json" "$ATF" stats --json "$S"
for row in \
    '"name":"work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int)","calls":2,' \
    '"name":"work::eval(int)","calls":1,' \
    '"name":"int work::sum<int>(work::Grid<int>&)","calls":2,' \
    '"name":"double work::sum<double>(work::Grid<double>&)","calls":2,' \
    '"name":"work::Grid<int>::operator[](unsigned long)","calls":8,' \
    '"name":"work::Grid<double>::operator[](unsigned long)","calls":8,' \
    '"name":"work::Grid<int>::operator()(unsigned long, unsigned long) const","calls":1,' \
    '"name":"work::operator<(work::Pt const&, work::Pt const&)","calls":3,' \
    '"name":"work::Pt::operator bool() const","calls":3,' \
    '"name":"(anonymous namespace)::helper(int)","calls":2,' \
    '"name":"main::{lambda(int)#1}::operator()(int) const","calls":2,' \
    '"name":"int (*work::pick<int>(int))(int)","calls":1,' \
    '"name":"work::label[abi:cxx11](int)","calls":1,' \
    '"name":"work::outer(int)::Local::run(int)","calls":1,' \
    '"name":"main","calls":1,'; do
    has "stats --json" "$row"
done
has "stats --json: the symbol" '"mangled":"_ZN4work4evalEi"}'
has "stats --json: a C function's symbol" '"mangled":"main"}'
lacks "stats --json: no mangled name shown" '"name":"_Z'
expect 0 "stats" "$ATF" stats "$S"
has "stats" "  work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int)"
has "stats" "  main::{lambda(int)#1}::operator()(int) const"

# short: a template's instances are one function, their calls added up
expect 0 "stats --demangle short --json" "$ATF" stats --demangle short --json "$S"
for row in '"name":"work::eval","calls":3,' '"name":"work::sum","calls":4,' \
    '"name":"work::Grid::operator[]","calls":16,' '"name":"work::Grid::operator()","calls":1,' \
    '"name":"work::operator<","calls":3,' '"name":"work::Pt::operator bool","calls":3,' \
    '"name":"(anonymous namespace)::helper","calls":2,' \
    '"name":"main::{lambda(int)#1}::operator()","calls":2,' '"name":"work::pick","calls":1,' \
    '"name":"work::label","calls":1,' '"name":"work::outer::Local::run","calls":1,'; do
    has "stats --demangle short" "$row"
done
if [ "$(functions | uniq -d)" = "" ]; then pass; else fail "stats --demangle short: a name twice"; fi

# none: the symbols as recorded
expect 0 "stats --demangle none --json" "$ATF" stats --demangle none --json "$S"
has "stats --demangle none" '"name":"_ZN4work4evalEi","calls":1,'
lacks "stats --demangle none" '"name":"work::'
expect 2 "stats --demangle bogus" "$ATF" stats --demangle bogus "$S"

# ---- tree, dump, exports ----------------------------------------------------------------
expect 0 "tree" "$ATF" tree "$S"
has "tree" "work::outer(int)::Local::run(int)"
has "tree" "} work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int)"
expect 0 "tree --demangle short" "$ATF" tree --demangle short "$S"
has "tree --demangle short" "work::outer::Local::run"
expect 0 "dump --json" "$ATF" dump --json "$S"
has "dump --json" '"name":"work::eval(int)","mangled":"_ZN4work4evalEi"}'
expect 0 "export chrome" "$ATF" export --format chrome -o "$TMP/c.json" "$S"
check "export chrome: demangled" grep -qF '"name":"work::Grid<int>::operator[](unsigned long)"' "$TMP/c.json"
expect 0 "export folded --demangle short" "$ATF" export --format folded --demangle short "$S"
has "export folded --demangle short" ";main;work::eval;work::sum;work::Grid::operator[] "
expect 0 "export perfetto" "$ATF" export --format perfetto -o "$TMP/p.pftrace" "$S"
check "export perfetto: demangled" grep -qaF 'main::{lambda(int)#1}::operator()(int) const' "$TMP/p.pftrace"
# Parquet: a dictionary per column, unencoded text (tests/test_export.c decodes it)
expect 0 "export parquet" "$ATF" export --format parquet -o "$TMP/s.parquet" "$S"
check "export parquet: name" grep -qaF '(anonymous namespace)::helper(int)' "$TMP/s.parquet"
check "export parquet: mangled" grep -qaF '_ZN12_GLOBAL__N_16helperEi' "$TMP/s.parquet"
expect 0 "export parquet events" "$ATF" export --format parquet --table events -o "$TMP/e.parquet" "$S"
check "export parquet events: mangled" grep -qaF '_ZN4work4evalEi' "$TMP/e.parquet"
expect 0 "diff --demangle short" "$ATF" diff --top 0 --demangle short "$S" "$S"
has "diff --demangle short" "  work::sum"

# ---- --function by any of the three names -----------------------------------------------
expect 0 "stats --function work::sum" "$ATF" stats --json --function work::sum "$S"
has "stats --function work::sum" '"name":"int work::sum<int>(work::Grid<int>&)","calls":2,'
has "stats --function work::sum" '"name":"double work::sum<double>(work::Grid<double>&)","calls":2,'
has "stats --function work::sum: a callee" '"name":"work::Grid<double>::operator[](unsigned long)","calls":8,'
lacks "stats --function work::sum" 'work::eval'
lacks "stats --function work::sum" '"name":"main"'
expect 0 "tree --function (full name)" "$ATF" tree --function 'work::outer(int)' "$S"
has "tree --function (full name)" "work::outer(int)::Local::run(int)"
lacks "tree --function (full name)" "work::eval"
expect 0 "tree --function (mangled)" "$ATF" tree --function _ZN4work4evalEi "$S"
has "tree --function (mangled)" "work::eval(int)"
lacks "tree --function (mangled)" "work::sum"
expect 2 "stats --function (no such name)" "$ATF" stats --function work::none "$S"

# ---- the tracer's filters and triggers by readable name ---------------------------------
record "$TMP/filter" --filter 'work::*'
expect 0 "filter work::*: stats" "$ATF" stats --json "$S"
has "filter work::*" '"name":"int work::sum<int>(work::Grid<int>&)","calls":2,'
has "filter work::*" '"name":"int (*work::pick<int>(int))(int)","calls":1,'
lacks "filter work::*" '"name":"main"'
lacks "filter work::*" '"name":"std::'
lacks "filter work::*" 'helper'
record "$TMP/eval" --filter 'work::eval'
expect 0 "filter work::eval: stats" "$ATF" stats --json "$S"
if [ "$(functions | tr '\n' '|')" = "work::eval(int)|work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int)|" ]; then
    pass
else
    fail "filter work::eval: $(functions | tr '\n' '|')"
fi
# a full name whose parameters hold a comma, in a list
record "$TMP/comma" --filter 'work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int),main'
expect 0 "filter full name, main: stats" "$ATF" stats --json "$S"
if [ "$(functions | tr '\n' '|')" = "main|work::eval(std::vector<int, std::allocator<int> > const&, unsigned long&, int)|" ]; then
    pass
else
    fail "filter full name, main: $(functions | tr '\n' '|')"
fi
record "$TMP/notrace" --notrace 'std::*,__gnu_cxx::*,work::Grid::*,operator new'
expect 0 "notrace: stats" "$ATF" stats --json "$S"
lacks "notrace" '"name":"work::Grid<'
lacks "notrace" '"name":"std::'
has "notrace" '"name":"double work::sum<double>(work::Grid<double>&)","calls":2,'
has "notrace" '"name":"main","calls":1,'
record "$TMP/trigger" --trigger-on 'work::outer' --trigger-off 'work::outer(int)'
expect 0 "trigger: stats" "$ATF" stats --json "$S"
has "trigger" '"name":"work::outer(int)::Local::run(int)","calls":1,'
lacks "trigger" 'work::eval'
# the environment variables themselves, with the tracer preloaded by hand
ATF_TRACE_FILTER='work::operator<,_ZN12_GLOBAL__N_16helperEi' ATF_TRACE_DIR="$TMP/env" \
    ATF_TRACE_QUIET=1 LD_PRELOAD="$SO" timeout 60 "$PROG" >/dev/null 2>&1
S=$(ls -d "$TMP"/env/session_* 2>/dev/null | head -n 1)
expect 0 "ATF_TRACE_FILTER: stats" "$ATF" stats --json "$S"
if [ "$(functions | tr '\n' '|')" = "(anonymous namespace)::helper(int)|work::operator<(work::Pt const&, work::Pt const&)|" ]; then
    pass
else
    fail "ATF_TRACE_FILTER: $(functions | tr '\n' '|')"
fi

rm -rf "$TMP"/all "$TMP"/filter "$TMP"/eval "$TMP"/comma "$TMP"/notrace "$TMP"/trigger "$TMP"/env
finish
