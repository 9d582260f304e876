#!/bin/sh
# Compile checks: the header builds warning-free in every language mode and switch we
# promise, with each compiler present. Prints "compile: N passed, M failed".
CC=${CC:-cc}
CXX=${CXX:-c++}
BUILD=${BUILD:-build}
out="$BUILD/compile"
mkdir -p "$out"
src=tests/compile
strict="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -I."
cxxflags="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -I."
passed=0
failed=0

# check NAME COMMAND...: runs COMMAND, counts it, shows the compiler output on failure.
check() {
    name=$1
    shift
    if "$@" >"$out/$name.log" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL compile.$name: $*"
        sed 's/^/    /' "$out/$name.log" | head -n 20
    fi
}

compilers="$CC"
command -v clang >/dev/null 2>&1 && [ "$CC" != clang ] && compilers="$compilers clang"
cxx_compilers="$CXX"
command -v clang++ >/dev/null 2>&1 && [ "$CXX" != clang++ ] && cxx_compilers="$cxx_compilers clang++"

for cc in $compilers; do
    tag=$(basename "$cc")
    for std in c99 c11 gnu11; do
        check "$tag-$std-impl" sh -c "$cc -std=$std $strict -o $out/$tag-$std-impl $src/impl.c -lpthread && $out/$tag-$std-impl"
    done
    check "$tag-decl-only" $cc -std=c99 $strict -c -o "$out/$tag-decl.o" $src/decl_only.c
    check "$tag-static-two-tu" sh -c "$cc -std=c99 $strict -o $out/$tag-static $src/static_a.c $src/static_b.c -lpthread && $out/$tag-static"
    check "$tag-no-hw-crc" sh -c "$cc -std=c99 $strict -DATF_NO_HW_CRC -o $out/$tag-nohw $src/impl.c -lpthread && $out/$tag-nohw"
    check "$tag-custom-alloc" sh -c "$cc -std=c99 $strict -o $out/$tag-alloc $src/custom_alloc.c -lpthread && $out/$tag-alloc"
done
for cxx in $cxx_compilers; do
    tag=$(basename "$cxx")
    for std in c++11 c++17; do
        check "$tag-$std-impl" sh -c "$cxx -std=$std $cxxflags -o $out/$tag-$std $src/impl_cpp.cpp -lpthread && $out/$tag-$std"
    done
    check "$tag-decl-only" $cxx -std=c++11 $cxxflags -x c++ -c -o "$out/$tag-decl.o" $src/decl_only.c
done

echo "compile: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
