#!/bin/sh
# cmake_checks.sh - atf.h as the CMake target atf::atf, used the three ways a project pulls it
# in: add_subdirectory of this tree, FetchContent (pointed at this tree, no download), and
# find_package against a prefix that cmake --install filled. Each case configures and
# builds a small program that records a session through atf::atf and reads it back, then
# runs it. Then the atf command and the tracer, built and installed with -DATF_BUILD_TOOLS=ON:
# the installed `atf record` traces examples/sample.c built with the hooks (Linux). One line per case, "ok ..." or "FAIL ...", then "cmake: N passed, M failed"
# (the line tests/run_all.sh adds up); exit 1 on any failure. Skipped (exit 0, nothing
# counted) when cmake is not installed.
#   tests/cmake_checks.sh            (from anywhere; CC picks the compiler as usual)
#   ATF_CMAKE_KEEP=1 tests/cmake_checks.sh  keeps the scratch directory for a look
ROOT=$(cd "$(dirname "$0")/.." && pwd) || exit 1

if ! command -v cmake >/dev/null 2>&1; then
    echo "skip cmake_check: cmake not installed"
    echo "cmake: 0 passed, 0 failed"
    exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/atf_cmake.XXXXXX") || exit 1
cleanup() {
    if [ -n "$ATF_CMAKE_KEEP" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

passes=0
failures=0
# pass NAME: prints the ok line.  fail NAME LOG: the FAIL line and the log's tail.
pass() { echo "ok   $1"; passes=$((passes + 1)); }
fail() {
    echo "FAIL $1"
    if [ -n "$2" ] && [ -f "$2" ]; then tail -n 25 "$2" | sed 's/^/     | /'; fi
    failures=$((failures + 1))
}

# The version atf.h declares, read here on its own so that the package's version is checked
# against the header rather than against itself.
version=$(awk '$1 == "#define" && $2 == "ATF_VERSION_MAJOR" { a = $3 }
               $1 == "#define" && $2 == "ATF_VERSION_MINOR" { b = $3 }
               $1 == "#define" && $2 == "ATF_VERSION_PATCH" { c = $3 }
               END { print a "." b "." c }' "$ROOT/atf.h")
case $version in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) fail "version: atf.h has no ATF_VERSION_MAJOR/MINOR/PATCH (found '$version')"
       echo "cmake: 0 passed, 1 failed"; exit 1 ;;
esac

# ---- the consumer ------------------------------------------------------------------------
mkdir -p "$WORK/consumer"
cat > "$WORK/consumer/main.c" <<'C'
/* records N nested calls on the main thread through a session, reads the session back
 * merged by time and compares every event with what was written */
#define ATF_IMPLEMENTATION
#include "atf.h"

#include <stdio.h>
#include <string.h>

#define N 40

int main(int argc, char **argv) {
    atf_session *s;
    atf_producer *w;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    uint64_t fn[2 * N], ts[2 * N];
    uint32_t kind[2 * N];
    char dir[1024];
    const char *name;
    size_t i, n = 0, seen = 0;
    int bad = 0;

    if (argc < 2) { fprintf(stderr, "usage: consumer ROOT\n"); return 2; }
    if (atf_session_open(&s, argv[1], NULL) != ATF_OK) { fprintf(stderr, "open\n"); return 1; }
    atf_session_add_symbol(s, 7, "seven");
    w = atf_session_producer(s);
    if (!w) { fprintf(stderr, "no writer\n"); return 1; }
    for (i = 0; i < N; i++) {
        fn[n] = 7 + i; ts[n] = atf_now_ns(); kind[n] = ATF_EVENT_CALL;
        atf_producer_call(w, fn[n], ts[n]);
        n++;
    }
    for (i = N; i-- > 0;) {
        fn[n] = 7 + i; ts[n] = atf_now_ns(); kind[n] = ATF_EVENT_RETURN;
        atf_producer_return(w, fn[n], ts[n]);
        n++;
    }
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));
    if (atf_session_close(s) != ATF_OK) { fprintf(stderr, "close\n"); return 1; }

    if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) { fprintf(stderr, "reopen\n"); return 1; }
    name = atf_session_reader_symbol(&r, 7);
    if (!name || strcmp(name, "seven") != 0) {
        fprintf(stderr, "symbol 7: expected seven, found %s\n", name ? name : "(none)");
        bad = 1;
    }
    if (atf_merge_init(&m, &r, NULL) != ATF_OK) { fprintf(stderr, "merge\n"); return 1; }
    while (atf_merge_next(&m, &it) == ATF_OK) {
        if (seen < n && (it.event.function_id != fn[seen] || it.event.timestamp_ns != ts[seen] ||
                         it.event.kind != kind[seen])) {
            fprintf(stderr, "event %lu: expected fn %llu kind %lu, found fn %llu kind %lu\n",
                    (unsigned long)seen, (unsigned long long)fn[seen], (unsigned long)kind[seen],
                    (unsigned long long)it.event.function_id, (unsigned long)it.event.kind);
            bad = 1;
        }
        seen++;
    }
    if (seen != n) {
        fprintf(stderr, "events: expected %lu, found %lu\n", (unsigned long)n, (unsigned long)seen);
        bad = 1;
    }
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    if (!bad) printf("%lu events\n", (unsigned long)seen);
    return bad;
}
C

# What every way must give: a target atf::atf whose link interface carries the thread
# library (on glibc >= 2.34 a missing -lpthread still links, so it is checked by name).
cat > "$WORK/consumer/common.cmake" <<'CM'
if(NOT TARGET atf::atf)
    message(FATAL_ERROR "no target atf::atf")
endif()
get_target_property(_libs atf::atf INTERFACE_LINK_LIBRARIES)
if(NOT "Threads::Threads" IN_LIST _libs)
    message(FATAL_ERROR "atf::atf does not link Threads::Threads (it links: ${_libs})")
endif()
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE atf::atf)
CM

# one CMakeLists.txt per way, the way a project would write it
mkdir -p "$WORK/sub" "$WORK/fetch" "$WORK/pkg"
cat > "$WORK/sub/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.14)
project(consumer_sub C)
add_subdirectory("${ATF_SOURCE}" atf)
include("${CONSUMER}/common.cmake")
CM
cat > "$WORK/fetch/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.14)
project(consumer_fetch C)
include(FetchContent)
# FETCHCONTENT_SOURCE_DIR_ATF (given on the command line) points at the tree: no download
FetchContent_Declare(atf URL "file:///nonexistent/atf.tar.gz")
FetchContent_MakeAvailable(atf)
include("${CONSUMER}/common.cmake")
CM
cat > "$WORK/pkg/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.14)
project(consumer_pkg C)
find_package(atf "${EXPECT_VERSION}" EXACT CONFIG REQUIRED)
if(NOT atf_VERSION STREQUAL EXPECT_VERSION)
    message(FATAL_ERROR "atf_VERSION is '${atf_VERSION}', atf.h says ${EXPECT_VERSION}")
endif()
string(FIND "${atf_DIR}" "${CMAKE_PREFIX_PATH}/" _at)
if(NOT _at EQUAL 0)
    message(FATAL_ERROR "found atf at ${atf_DIR}, not under ${CMAKE_PREFIX_PATH}")
endif()
include("${CONSUMER}/common.cmake")
CM
for d in sub fetch pkg; do cp "$WORK/consumer/main.c" "$WORK/$d/"; done

# build WAY [cmake -D...]: configure, build and run the consumer of $WORK/WAY
build() {
    way=$1; shift
    log="$WORK/$way.log"
    if ! cmake -S "$WORK/$way" -B "$WORK/$way/build" -DCMAKE_BUILD_TYPE=Debug \
            -DCONSUMER="$WORK/consumer" "$@" >"$log" 2>&1; then
        fail "$way: configure" "$log"; return
    fi
    if ! cmake --build "$WORK/$way/build" >>"$log" 2>&1; then
        fail "$way: build" "$log"; return
    fi
    if ! "$WORK/$way/build/consumer" "$WORK/$way/traces" >>"$log" 2>&1; then
        fail "$way: the consumer's write -> read round trip" "$log"; return
    fi
    pass "$way: configured, built and ran the consumer ($(tail -n 1 "$log"))"
}

build sub -DATF_SOURCE="$ROOT"
build fetch -DFETCHCONTENT_SOURCE_DIR_ATF="$ROOT" -DFETCHCONTENT_FULLY_DISCONNECTED=ON

# ---- install into a staging prefix, then find_package ------------------------------------
prefix="$WORK/prefix"
log="$WORK/install.log"
if cmake -S "$ROOT" -B "$WORK/atf-build" >"$log" 2>&1 &&
   cmake --install "$WORK/atf-build" --prefix "$prefix" >>"$log" 2>&1; then
    missing=
    for f in include/atf.h share/cmake/atf/atfConfig.cmake \
             share/cmake/atf/atfConfigVersion.cmake share/cmake/atf/atfTargets.cmake \
             share/pkgconfig/atf.pc; do
        [ -f "$prefix/$f" ] || missing="$missing $f"
    done
    if [ -n "$missing" ]; then
        fail "install: missing$missing" "$log"
    elif ! cmp -s "$ROOT/atf.h" "$prefix/include/atf.h"; then
        fail "install: the installed atf.h differs from the tree's"
    elif ! grep -qx "Version: $version" "$prefix/share/pkgconfig/atf.pc" ||
         ! grep -qx "prefix=$prefix" "$prefix/share/pkgconfig/atf.pc"; then
        fail "install: atf.pc lacks 'Version: $version' or 'prefix=$prefix'" \
             "$prefix/share/pkgconfig/atf.pc"
    else
        pass "install: cmake --install put atf.h, the package (version $version) and atf.pc"
    fi
    build pkg -DCMAKE_PREFIX_PATH="$prefix" -DEXPECT_VERSION="$version"
else
    fail "install: configure or cmake --install of the tree" "$log"
fi

# ---- the command and the tracer from a CMake install: atf record traces a program ------
# (Linux only: the tracer is ELF; the program is the README's sample, built here with the
# hooks, the way a user builds theirs)
if [ "$(uname -s)" = Linux ]; then
    tools="$WORK/tools-prefix"
    log="$WORK/tools.log"
    if cmake -S "$ROOT" -B "$WORK/tools-build" -DATF_BUILD_TOOLS=ON >"$log" 2>&1 &&
       cmake --build "$WORK/tools-build" >>"$log" 2>&1 &&
       cmake --install "$WORK/tools-build" --prefix "$tools" >>"$log" 2>&1; then
        if [ ! -x "$tools/bin/atf" ] || [ ! -f "$tools/lib/atf/libatf_instrument.so" ]; then
            fail "tools: cmake --install put no bin/atf or lib/atf/libatf_instrument.so" "$log"
        elif ! ${CC:-cc} -O1 -g -finstrument-functions -D_GNU_SOURCE -o "$WORK/sample_hooked" \
                 "$ROOT/examples/sample.c" -lpthread >>"$log" 2>&1; then
            fail "tools: building examples/sample.c with -finstrument-functions" "$log"
        elif ! (cd "$WORK" && "$tools/bin/atf" record --output "$WORK/record" -- \
                 "$WORK/sample_hooked" >"$WORK/record.out" 2>"$WORK/record.err"); then
            cat "$WORK/record.err" >>"$log"
            fail "tools: the installed atf record -- sample_hooked failed" "$log"
        elif ! grep -Eq '^atf record: 1 process, 5 threads, [1-9][0-9]* events, 0 lost' \
                 "$WORK/record.err" ||
             ! "$tools/bin/atf" verify --strict "$WORK"/record/session_* >>"$log" 2>&1; then
            cat "$WORK/record.err" >>"$log"
            fail "tools: the installed atf record's session" "$log"
        else
            pass "tools: the installed atf record traced the sample ($(grep -o '[0-9]* events' \
                 "$WORK/record.err" | head -n 1)) into a session that verifies"
        fi
    else
        fail "tools: configure, build or install with -DATF_BUILD_TOOLS=ON" "$log"
    fi
fi

echo "cmake: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
