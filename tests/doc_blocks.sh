#!/bin/sh
# doc_blocks.sh - the documentation as a contract: every C block (```c) of README.md and
# docs/*.md compiles as written, README's list of atf commands is the command's own, the
# paths the pages name exist, and atf.h's CONTENTS agree with its section banners (tags,
# halves, order).
# Prints "doc_blocks: N passed, M failed".
#
# How a block is compiled is said by an HTML comment on the line before its fence
# (invisible on a rendered page); without one, the block is a whole program:
#   <!-- doc-check: program -->   a whole program: compiled and linked (a block that does
#                                  not define ATF_IMPLEMENTATION is linked with it)
#   <!-- doc-check: body -->      statements: placed in main() after #include "atf.h",
#                                  <stdio.h> and <string.h>, compiled and linked
#   <!-- doc-check: decls -->     declarations at file scope after #include "atf.h":
#                                  compiled only
# Each is built as C99 and as C++11; add the word c-only (e.g. "doc-check: body c-only")
# for a block that is C and not C++.
# Environment: CC, CXX, BUILD (scratch under $BUILD/doc_blocks), ATF (the atf command).
CC=${CC:-cc}
CXX=${CXX:-c++}
BUILD=${BUILD:-build}
ATF=${ATF:-$BUILD/atf}
out="$BUILD/doc_blocks"
rm -rf "$out"
mkdir -p "$out"
cflags="-std=c99 -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes -Wconversion -D_GNU_SOURCE -I."
cxxflags="-std=c++11 -Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -D_GNU_SOURCE -I."
CHECK_NAME=doc_blocks
. "$(dirname "$0")/check_lib.sh"

# Splits FILE's C blocks into $out/<tag>_<n>.c, each with <tag>_<n>.how holding the mode
# words of its marker ("program" when it has none) and <tag>_<n>.line its fence's line.
extract() {
    awk -v out="$out" -v tag="$2" '
        /^```c[ \t]*$/ && !inside {
            inside = 1; n++
            how = "program"
            if (prev ~ /^<!-- doc-check: .* -->[ \t]*$/) {
                how = prev
                sub(/^<!-- doc-check: /, "", how)
                sub(/ -->[ \t]*$/, "", how)
            }
            base = out "/" tag "_" n
            printf "" > (base ".c")
            print how > (base ".how")
            print NR > (base ".line")
            close(base ".how"); close(base ".line")
            next
        }
        /^```/ && inside { inside = 0; close(base ".c"); next }
        inside { print > (base ".c") }
        { prev = $0 }
    ' "$1"
}

# The implementation, compiled once here, for the blocks that leave it to another file.
impl="$out/atf_impl.o"
if ! $CC $cflags -c -o "$impl" lib/atf_impl.c >"$out/impl.log" 2>&1; then
    fail "implementation: lib/atf_impl.c does not compile"
    sed 's/^/    /' "$out/impl.log" | head -n 20
fi

# build NAME LANG SOURCE MODE: compiles (and for program/body, links) SOURCE.
# (sh has no local variables: these use their own names)
build() {
    if [ "$2" = c ]; then b_compile="$CC $cflags"; else b_compile="$CXX -x c++ $cxxflags"; fi
    b_obj="$impl"
    grep -q '^#define ATF_IMPLEMENTATION' "$3" && b_obj=""
    case $4 in
    decls) $b_compile -c -o "$out/$1.o" "$3" ;;
    *) $b_compile -o "$out/$1.exe" "$3" -x none $b_obj -lpthread ;;
    esac
}

check_file() {
    file=$1
    tag=$(basename "$file" .md)
    extract "$file" "$tag"
    for src in "$out/${tag}"_*.c; do
        [ -e "$src" ] || continue
        base=${src%.c}
        name=$(basename "$base")
        how=$(cat "$base.how")
        line=$(cat "$base.line")
        mode=${how%% *}
        langs="c c++"
        case " $how " in *" c-only "*) langs=c ;; esac
        case $mode in
        program) unit=$src ;;
        decls)
            unit="$base.unit.c"
            { printf '#include "atf.h"\n'; cat "$src"; } >"$unit" ;;
        body)
            unit="$base.unit.c"
            {
                printf '#include "atf.h"\n#include <stdio.h>\n#include <string.h>\n'
                printf 'int main(void) {\n'
                cat "$src"
                printf 'return 0;\n}\n'
            } >"$unit" ;;
        *)
            fail "$name: $file:$line: unknown doc-check mode '$mode'"
            continue ;;
        esac
        for lang in $langs; do
            if build "$name-$lang" "$lang" "$unit" "$mode" >"$base.$lang.log" 2>&1; then
                pass
            else
                fail "$name-$lang: the block at $file:$line does not compile as $lang ($mode)"
                sed 's/^/    /' "$base.$lang.log" | head -n 20
            fi
        done
    done
}

for f in README.md docs/*.md; do
    [ -e "$f" ] && check_file "$f"
done

# README's command list (the block under "## The atf command", one "build/atf NAME" per
# command) against the commands `atf --help` lists.
documented=$(awk '/^## The atf command/ { on = 1; next } /^## / { on = 0 }
                  on && /^build\/atf [a-z]/ { print $2 }' README.md | sort)
offered=$("$ATF" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 }
                                             on && /^  [a-z]/ { print $1 }' | sort)
if [ -z "$offered" ]; then
    fail "commands: $ATF --help lists no commands"
elif [ "$documented" = "$offered" ]; then
    pass
else
    fail "commands: README.md lists [$(echo $documented)], $ATF --help [$(echo $offered)]"
fi

# Paths the documentation names, as seen from the repository's root (where its commands
# run): every path under examples/, tools/, tests/, docs/, bench/ or fuzz/ that a page
# mentions, and every source file (.c, .h, .cpp) a "$ " command line of a fenced block
# names, exists. A glob or a placeholder (tools/*.c, thread_<N>) is no path.
for f in README.md docs/*.md tools/instrument/README.md tests/README.md; do
    [ -e "$f" ] || continue
    missing=$({
        tr ' `()[],;"' '\n' <"$f" | grep -E '^(\./)?(examples|tools|tests|docs|bench|fuzz)/'
        awk '/^```/ { inside = !inside; next } inside && /^\$ / { sub(/^\$ /, ""); print }' "$f" |
            tr ' \t' '\n\n' | grep -E '\.(c|h|cpp)$' | grep -v '^-'
    } | sed 's/[.:]*$//' | sort -u | while read -r w; do
        case "$w" in *'*'* | *'<'*) continue ;; esac
        [ -e "$w" ] || printf ' %s' "$w"
    done)
    if [ -z "$missing" ]; then pass; else fail "paths: $f names what is not there:$missing"; fi
done

# Where `atf record` puts a session by default (its --help: "--output DIR ... (default
# ./traces)"): README says so, and .gitignore leaves it out of the working tree.
root=$("$ATF" record --help 2>/dev/null | sed -n 's|.*--output DIR.*(default \./\([^)]*\)).*|\1|p')
if [ -z "$root" ]; then
    fail "record's default: $ATF record --help names no default --output"
elif ! grep -qx "/$root/" .gitignore; then
    fail "record's default: .gitignore has no line /$root/"
elif ! grep -q "\`$root/\`" README.md; then
    fail "record's default: README.md does not say that sessions go under \`$root/\`"
else
    pass
fi

# atf.h's map: the tags of its CONTENTS (">>name") against the section banners. Every
# banner carries a tag the contents list, every tag has a banner, a section ("====") has
# one banner in each half (the generated tables: the implementation's only), and each
# half follows the contents' order. The numbers: the contents count sections 1, 2, ... and
# the subsections of section k k.1, k.2, ... in order, and a banner has its tag's number.
tags_problem=$(awk '
    # the number a contents line or a banner starts with ("3." and "3" are 3), or ""
    function number_of(s) {
        sub(/^ \*[ \t]*/, "", s)
        sub(/^\/\* (====|----) /, "", s)
        if (!match(s, /^[0-9]+(\.[0-9]*)?[ \t]/)) return ""
        s = substr(s, 1, RLENGTH - 1)
        sub(/\.$/, "", s)
        return s
    }
    /CONTENTS\./ { contents = 1 }
    /QUICK START/ { contents = 0 }
    contents {
        line = $0
        num = number_of($0)
        while (match(line, / >>[a-z0-9]+ /)) {
            t = substr(line, RSTART + 3, RLENGTH - 4)
            if (!(t in order)) { order[t] = ++n; number[t] = num }
            line = substr(line, RSTART + RLENGTH)
            if (num == "") continue
            if (split(num, part, ".") == 1) {
                if (num != sec + 1) print ">>" t ": numbered " num " in CONTENTS, " sec + 1 " expected"
                sec = num; sub_no = 0
            } else {
                if (part[1] != sec || part[2] != sub_no + 1)
                    print ">>" t ": numbered " num " in CONTENTS, " sec "." sub_no + 1 " expected"
                sub_no = part[2]
            }
        }
        next
    }
    /^\/\* (====|----) / {
        if (!match($0, / >>[a-z0-9]+ \*\/$/)) { print "banner without a tag, line " NR ": " $0; next }
        t = substr($0, RSTART + 3, RLENGTH - 6)
        if (!(t in order)) { print "banner tag >>" t " (line " NR ") not in CONTENTS"; next }
        if (number_of($0) != number[t])
            print ">>" t " (line " NR ") numbered \"" number_of($0) "\", in CONTENTS \"" number[t] "\""
        seen[t]++
        if ($0 ~ /^\/\* ====/) sections[t]++
        if (t == "config") { half++; last = 0 }
        if (order[t] < last) print ">>" t " (line " NR ") out of the CONTENTS order"
        last = order[t]
    }
    END {
        for (t in order) {
            if (!seen[t]) print ">>" t " has no banner"
            want = t == "tables" ? 1 : 2
            if (t in sections && sections[t] != want)
                print ">>" t ": " sections[t] " section banners, " want " expected"
        }
        if (half != 2) print half " banners of >>config, 2 expected (one per half)"
    }' atf.h 2>&1 || echo "the check itself failed")
if [ -z "$tags_problem" ]; then pass; else fail "atf.h CONTENTS and banners: $tags_problem"; fi

finish
