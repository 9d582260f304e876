# atf.h - build, test and benchmark. Everything lands in build/.
#   make          the atf command (build/atf), the tracer (build/libatf_instrument.so and
#                 build/obj/atf_instrument.o) and the examples
#   make test     builds the test harnesses and the programs they trace, runs every check,
#                 ending with "N passed, M failed"
#   make bench    benchmark figures into build/bench.json (make bench-real: real programs)
#   make demo     records the sample program with atf record, then inspects and exports it;
#                 then a C++ program whose exceptions leave frames (its tree)
#   make tsan     the ring, session, stress, manifest, merge, tick, overflow and bounds tests under
#                 ThreadSanitizer (build/tsan/)
#   make crash-trials [CRASH_TRIALS=100]   atf gen SIGKILLed at chosen moments, then
#                 recover and verify --strict, every thread checked against what it produced
#   make stress [STRESS_THREADS=64 STRESS_EVENTS=1000000]   many producers, small rings:
#                 produced = persisted + dropped for every thread, order kept

CC      ?= cc
CXX     ?= c++
BUILD   ?= build
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wconversion
CSTD    ?= -std=c99
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) -D_GNU_SOURCE -I. $(CFLAGS)
LDLIBS_ALL = -lpthread $(LDLIBS)

TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
TOOLS_SRC := $(wildcard tools/*.c)
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

.PHONY: all test test-programs bench demo clean tsan
all: $(BUILD)/atf $(EXAMPLES)
# what only the checks need: the harnesses, and (below) the programs the tracer's checks run
test-programs: $(TESTS) $(BUILD)/tests/make_fixtures

# The implementation of atf.h is compiled once per build (lib/atf_impl.c) and linked into
# every program whose source includes atf.h without defining ATF_IMPLEMENTATION. A source
# that defines it (it tests private parts, or builds them with its own switches) compiles
# its own copy. The sources say which they are: grep reads it, no list to keep.
HASH := \#
IMPL_USERS = $(filter-out $(shell grep -l '^$(HASH)define ATF_IMPLEMENTATION' $(1)), \
               $(shell grep -l '^$(HASH)include "atf.h"' $(1)))
LINKED_TESTS := $(patsubst tests/%.c,%,$(call IMPL_USERS,$(wildcard tests/*.c)))
LINKED_EXAMPLES := $(patsubst examples/%.c,%,$(call IMPL_USERS,$(wildcard examples/*.c)))
IMPL_OBJ := $(BUILD)/obj/atf_impl.o

$(IMPL_OBJ): lib/atf_impl.c atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

# the atf command: one object per tools/*.c, and the implementation
TOOLS_OBJ := $(patsubst tools/%.c,$(BUILD)/obj/tools/%.o,$(TOOLS_SRC))
$(BUILD)/atf: $(TOOLS_OBJ) $(IMPL_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/obj/tools/%.o: tools/%.c atf.h $(wildcard tools/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

# atf report's page: tools/report.html (HTML, CSS and script by hand) as C strings in
# tools/report_page.h, committed, so that any build compiles it as it is; remade here when
# the page changes (tests/report_checks.sh checks that the two agree)
tools/report_page.h: tools/report.html tools/report_page.sh
	sh tools/report_page.sh tools/report.html > $@.tmp && mv $@.tmp $@

# a program links the objects among its prerequisites (the implementation, where it uses it)
$(LINKED_TESTS:%=$(BUILD)/tests/%) $(LINKED_EXAMPLES:%=$(BUILD)/examples/%): $(IMPL_OBJ)

$(BUILD)/tests/%: tests/%.c atf.h tests/harness.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(filter %.o,$^) $(LDLIBS_ALL)

# the instrumentation test builds all of its code, atf.h included, with the hooks on
$(BUILD)/tests/test_instrument: CFLAGS_ALL += -finstrument-functions

# The harnesses of the commands (they include tests/cli_traces.h or cli_embed.h) link the
# atf command built once per build (tests/cli_embed.c); grep finds them. (The export
# benchmark and tests/window_probe.c compile it in: tools/embed.h.)
CLI_TESTS := $(patsubst tests/%.c,%,$(shell grep -l -e '^$(HASH)include "cli_traces.h"' \
               -e '^$(HASH)include "cli_embed.h"' $(wildcard tests/test_*.c)))
CLI_DEPS := tests/cli_embed.c tests/cli_embed.h atf.h $(TOOLS_SRC) $(wildcard tools/*.h)
CLI_OBJ := $(BUILD)/obj/cli_embed.o
$(CLI_OBJ): $(CLI_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<
$(CLI_TESTS:%=$(BUILD)/tests/%): $(CLI_OBJ)

# the C++ names (tools/demangle.c): its harness compiles the demangler in
$(BUILD)/tests/test_demangle: tools/demangle.c tools/demangle.h

# Parquet (tools/parquet.c): its harness compiles the writer in, parquet_gen links it.
# `make test-parquet` has DuckDB read generated files and exported sessions; it installs
# @duckdb/node-api from npm into $(BUILD)/npm (once), so it stays out of `make test`.
$(BUILD)/tests/test_parquet: tools/parquet.c tools/parquet.h
$(BUILD)/tests/parquet_gen: $(BUILD)/obj/tools/parquet.o

.PHONY: test-parquet
test-parquet: $(BUILD)/tests/parquet_gen $(BUILD)/atf
	@BUILD="$(BUILD)" ATF="$(BUILD)/atf" tests/parquet_duckdb.sh

$(BUILD)/bench_export: bench/bench_export_main.c bench/bench_export.h $(TOOLS_SRC) $(wildcard tools/*.h) atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

$(BUILD)/examples/%: examples/%.c atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(filter %.o,$^) $(LDLIBS_ALL)

test: all test-programs $(BUILD)/tests/cli_gen $(BUILD)/tests/crash_trials $(BUILD)/tests/cut_trace \
  $(BUILD)/tests/window_probe
	@CC="$(CC)" CXX="$(CXX)" BUILD="$(BUILD)" ATF="$(BUILD)/atf" LDLIBS_ALL="$(LDLIBS_ALL)" \
	  CRASH_TRIALS=$(TEST_CRASH_TRIALS) \
	  tests/run_all.sh $(TESTS) $(BUILD)/tests/crash_trials tests/compile_checks.sh \
	  tests/cli_checks.sh tests/window_checks.sh tests/examples_checks.sh tests/doc_blocks.sh \
	  tests/cmake_checks.sh tests/instrument_checks.sh tests/cpp_checks.sh tests/bounds_checks.sh \
	  tests/names_checks.sh tests/profile_checks.sh tests/report_checks.sh tests/demangle_checks.sh \
	  tests/elf_symbols_checks.sh

# tests/window_checks.sh: cut_trace cuts a trace to a window with the library alone (what
# the windows of the atf command are compared with); window_probe runs the command's walk
# in-process (tools/embed.h) to count what a window reads
$(BUILD)/tests/window_probe: $(TOOLS_SRC) $(wildcard tools/*.h)

# Crash trials (tests/crash_trials.c) regenerate what atf gen produced from tools/gen_model.h;
# make test runs a few of them, make crash-trials many.
TEST_CRASH_TRIALS ?= 12
CRASH_TRIALS ?= 100
$(BUILD)/tests/crash_trials: tools/gen_model.h

.PHONY: crash-trials stress
crash-trials: $(BUILD)/atf $(BUILD)/tests/crash_trials
	@BUILD="$(BUILD)" ATF="$(BUILD)/atf" CRASH_TRIALS=$(CRASH_TRIALS) \
	  tests/run_all.sh $(BUILD)/tests/crash_trials

# The stress harness at full size (make test runs it at 8 threads x 50000 events).
STRESS_THREADS ?= 64
STRESS_EVENTS ?= 1000000
stress: $(BUILD)/tests/test_stress
	@BUILD="$(BUILD)" STRESS_THREADS=$(STRESS_THREADS) STRESS_EVENTS=$(STRESS_EVENTS) \
	  tests/run_all.sh $(BUILD)/tests/test_stress

TSAN_CC ?= $(CC)
TSAN_FLAGS = $(CSTD) -O1 -g -fsanitize=thread $(WARN) -D_GNU_SOURCE -I.
$(BUILD)/tsan/obj/atf_impl.o: lib/atf_impl.c atf.h
	@mkdir -p $(dir $@)
	$(TSAN_CC) $(TSAN_FLAGS) -c -o $@ $<

$(LINKED_TESTS:%=$(BUILD)/tsan/%): $(BUILD)/tsan/obj/atf_impl.o
$(BUILD)/tsan/%: tests/%.c atf.h tests/harness.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(TSAN_CC) $(TSAN_FLAGS) -o $@ $< $(filter %.o,$^) $(LDLIBS_ALL)

tsan: $(BUILD)/tsan/test_ring $(BUILD)/tsan/test_session $(BUILD)/tsan/test_stress \
  $(BUILD)/tsan/test_manifest $(BUILD)/tsan/test_merge $(BUILD)/tsan/test_ticks \
  $(BUILD)/tsan/test_overflow $(BUILD)/tsan/test_bounds
	@tests/run_all.sh $^

$(BUILD)/bench: bench/bench.c $(wildcard bench/*.h) $(TOOLS_SRC) $(wildcard tools/*.h) atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g -D_GNU_SOURCE -I. -Ibench -Wall -Wextra -DBENCH_INSTRUMENT_DIR='"$(BENCH_PROGS)"' -o $@ $< $(LDLIBS_ALL)

bench: $(BUILD)/bench
	$(BUILD)/bench $(BUILD)/bench.json

# exactly what tools/demo.sh runs: atf record preloads the tracer library found next to
# the atf binary into the sample built with the hooks and no tracer
demo: $(BUILD)/atf $(BUILD)/libatf_instrument.so $(BUILD)/examples/sample_hooked \
      $(BUILD)/examples/query $(BUILD)/programs/cpp_exceptions_hooked
	@sh tools/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)

# The auto-tracer (tools/instrument/), a part of the product beside the atf command. Only a
# traced program's own code gets -finstrument-functions; atf_instrument.c must never get it.
INSTR     := tools/instrument
INSTR_OBJ := $(BUILD)/obj/atf_instrument.o
# what it compiles in from tools/: the demangler, the signal names, the ELF symbol reader
INSTR_DEPS := tools/demangle.c tools/demangle.h tools/signal_names.h tools/elf_symbols.h atf.h
# the fixture programs the tracer's checks and the benchmark run (tests/programs/)
PROGS     := tests/programs
PROGS_BIN := $(BUILD)/programs

# -fno-instrument-functions: the tracer stays unhooked even when CFLAGS asks for hooks.
# -fPIC: the one compile serves both the programs it is linked into (on x86-64 and arm64
# the linker turns its GOT and thread-local accesses into direct ones there) and the
# shared library below.
$(INSTR_OBJ): $(INSTR)/atf_instrument.c $(INSTR_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fno-instrument-functions -fPIC -c -o $@ $<

# The same tracer as a shared library for LD_PRELOAD (what `atf record` runs a program
# under): any program built with -finstrument-functions is traced without relinking.
INSTR_SO := $(BUILD)/libatf_instrument.so
all: $(INSTR_SO)
$(INSTR_SO): $(INSTR_OBJ)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $< -ldl $(LDLIBS_ALL)

# examples/sample.c, the program the README traces: plain, linked with the tracer, and
# compiled with the hooks but no tracer (for `atf record`)
all: $(BUILD)/examples/sample $(BUILD)/examples/sample_traced $(BUILD)/examples/sample_hooked

$(BUILD)/examples/sample: examples/sample.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

$(BUILD)/examples/sample_traced: examples/sample.c $(INSTR_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj
	$(CC) $(CFLAGS_ALL) -finstrument-functions -c -o $(BUILD)/obj/sample_traced.o $<
	$(CC) $(CFLAGS_ALL) -o $@ $(BUILD)/obj/sample_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

$(BUILD)/examples/sample_hooked: examples/sample.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $< $(LDLIBS_ALL)

# busy.c: CPU-bound threads that count their own calls (tests/examples_checks.sh checks a
# trace of it has every one; the benchmark times it), built plain and linked with the tracer
test-programs: $(PROGS_BIN)/busy $(PROGS_BIN)/busy_traced $(PROGS_BIN)/busy_hooked \
  $(PROGS_BIN)/busy_static

$(PROGS_BIN)/busy: $(PROGS)/busy.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

# busy_static: statically linked, which the preloaded tracer cannot reach (`atf record`
# says so; built without the sanitizers' flags, which take no -static); busy_hooked: for the preloaded tracer (tests/bounds_checks.sh)
$(PROGS_BIN)/busy_static: $(PROGS)/busy.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -finstrument-functions -static -o $@ $< -pthread


$(PROGS_BIN)/busy_hooked: $(PROGS)/busy.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $< $(LDLIBS_ALL)

$(PROGS_BIN)/busy_traced: $(PROGS)/busy.c $(INSTR_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj
	$(CC) $(CFLAGS_ALL) -finstrument-functions -c -o $(BUILD)/obj/busy_traced.o $<
	$(CC) $(CFLAGS_ALL) -o $@ $(BUILD)/obj/busy_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

# Programs for the preloaded tracer, compiled with the hooks and linked without a tracer:
# forks.c (a parent, two children, a grandchild)
test-programs: $(PROGS_BIN)/forks_hooked

$(PROGS_BIN)/forks_hooked: $(PROGS)/forks.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

# Programs in two halves: NAME_main.c, linked with libNAME_part.so (NAME_part.c and its
# version script NAME_part.map), found next to it through its run path. shlib_main.c has
# its code partly in libshlib_part.so; aliases_main.c has functions with several names,
# in the program and, versioned, in libaliases_part.so (tests/elf_symbols_checks.sh).
# Both halves are listed: a library made on the way is not deleted afterwards.
TWO_HALVES := shlib aliases
test-programs: $(TWO_HALVES:%=$(PROGS_BIN)/%_main) $(TWO_HALVES:%=$(PROGS_BIN)/lib%_part.so)

$(PROGS_BIN)/lib%_part.so: $(PROGS)/%_part.c $(PROGS)/%_part.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -fPIC -shared -o $@ $< \
	  -Wl,--version-script=$(PROGS)/$*_part.map

$(PROGS_BIN)/%_main: $(PROGS)/%_main.c $(PROGS_BIN)/lib%_part.so
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $< -L$(PROGS_BIN) -l$*_part \
	  -Wl,-rpath,'$$ORIGIN'

# longjmp.c (calls left by longjmp, a handler on sigaltstack, a coroutine) for the
# preloaded tracer; exits.c (processes ending with _exit, _Exit, after vfork) both ways
# frames.c (frames whose size varies from call to call, and no longjmp)
test-programs: $(PROGS_BIN)/longjmp_hooked $(PROGS_BIN)/exits_hooked $(PROGS_BIN)/exits_traced
test-programs: $(PROGS_BIN)/frames_hooked
# switch.c: sends itself the toggle signal at known points; durations.c: calls whose
# durations are fixed (tests/bounds_checks.sh)
test-programs: $(PROGS_BIN)/switch_hooked $(PROGS_BIN)/durations_hooked

$(PROGS_BIN)/durations_hooked: $(PROGS)/durations.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

$(PROGS_BIN)/switch_hooked: $(PROGS)/switch.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

# pipeline.c (work its argument changes in one call path) for atf diff's checks
test-programs: $(PROGS_BIN)/pipeline_hooked

$(PROGS_BIN)/longjmp_hooked: $(PROGS)/longjmp.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

$(PROGS_BIN)/frames_hooked: $(PROGS)/frames.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

# names.cpp: C++ names (namespaces, templates, operators, a lambda) for
# tests/demangle_checks.sh, built with the C++ compiler and the hooks, linked with no tracer
test-programs: $(PROGS_BIN)/names_hooked

$(PROGS_BIN)/names_hooked: $(PROGS)/names.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++11 $(OPT) -Wall -Wextra -Werror $(CFLAGS) -finstrument-functions -o $@ $<

$(PROGS_BIN)/pipeline_hooked: $(PROGS)/pipeline.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

# `make test-browser`: atf report's page in headless Chromium (Debian's chromium; .ci/run
# installs it), its self-test and no request leaving it (tests/report_browser.sh);
# screenshots into $(BUILD)/report.png and $(BUILD)/report_base.png
.PHONY: test-browser
test-browser: $(BUILD)/atf $(INSTR_SO) $(PROGS_BIN)/pipeline_hooked
	@BUILD="$(BUILD)" ATF="$(BUILD)/atf" tests/run_all.sh tests/report_browser.sh

$(PROGS_BIN)/exits_hooked: $(PROGS)/exits.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $<

$(PROGS_BIN)/exits_traced: $(PROGS)/exits.c $(INSTR_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj
	$(CC) $(CFLAGS_ALL) -finstrument-functions -c -o $(BUILD)/obj/exits_traced.o $<
	$(CC) $(CFLAGS_ALL) -o $@ $(BUILD)/obj/exits_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

# cpp_exceptions.cpp: C++ exceptions through instrumented frames in threads, counted by the
# program itself (tests/cpp_checks.sh), for the preloaded tracer and linked with it (by
# $(CXX): the tracer is C and needs no C++ library of its own); parquet_count reads a
# column of the exported slices with the tests' own Parquet reader
CXXFLAGS_PROG = -std=c++17 $(OPT) -Wall -Wextra -Werror -pthread $(CFLAGS)
test-programs: $(PROGS_BIN)/cpp_exceptions_hooked $(PROGS_BIN)/cpp_exceptions_traced \
  $(BUILD)/tests/parquet_count $(PROGS_BIN)/cpp_host $(PROGS_BIN)/libcpp_plugin.so

$(PROGS_BIN)/cpp_exceptions_hooked: $(PROGS)/cpp_exceptions.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_PROG) -finstrument-functions -o $@ $<

$(PROGS_BIN)/cpp_exceptions_traced: $(PROGS)/cpp_exceptions.cpp $(INSTR_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj
	$(CXX) $(CXXFLAGS_PROG) -finstrument-functions -c -o $(BUILD)/obj/cpp_exceptions_traced.o $<
	$(CXX) $(CXXFLAGS_PROG) -o $@ $(BUILD)/obj/cpp_exceptions_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

# cpp_host.c, a C program, loads libcpp_plugin.so (cpp_plugin.cpp) with dlopen(RTLD_LOCAL)
$(PROGS_BIN)/cpp_host: $(PROGS)/cpp_host.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -finstrument-functions -o $@ $< -ldl

$(PROGS_BIN)/libcpp_plugin.so: $(PROGS)/cpp_plugin.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_PROG) -finstrument-functions -fPIC -shared -o $@ $<

# ---- other platforms and configurations ---------------------------------------------
#   make test-arm64    every harness cross-built for arm64 (static), run under qemu-aarch64
#   make test-be       the same for big-endian s390x, under qemu-s390x
#   make test-windows  built with mingw-w64, run under wine (prefix in $(BUILD)/wine)
#   make configs       every harness in each language mode and switch, gcc and clang
#   make golden        rewrites tests/golden/ (commit the result only on purpose)
TEST_NAMES := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
# Harnesses whose test code needs POSIX (fork, kill, setrlimit, wait, mmap): not built
# for Windows; test-windows names them. (pthreads in a test are fine: mingw-w64 has them.)
POSIX_ONLY_TESTS ?= test_crash test_faults
XOPT      ?= -O1
XFLAGS     = $(CSTD) $(XOPT) $(WARN) -D_GNU_SOURCE -I. $(CFLAGS)
ARM64_CC  ?= aarch64-linux-gnu-gcc
ARM64_RUN ?= qemu-aarch64
BE_CC     ?= s390x-linux-gnu-gcc
BE_RUN    ?= qemu-s390x
WIN_CC    ?= x86_64-w64-mingw32-gcc
WINE      ?= wine
WIN_TESTS := $(filter-out $(POSIX_ONLY_TESTS),$(TEST_NAMES))
WIN_SKIPPED := $(filter $(POSIX_ONLY_TESTS),$(TEST_NAMES))

.PHONY: test-arm64 test-be test-windows configs golden
# the hook test is about code built with the hooks on, on every target
HOOKS_test_instrument := -finstrument-functions

# the implementation once per target, linked as in the native build
$(BUILD)/arm64/obj/atf_impl.o: lib/atf_impl.c atf.h
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(XFLAGS) -c -o $@ $<

$(BUILD)/s390x/obj/atf_impl.o: lib/atf_impl.c atf.h
	@mkdir -p $(dir $@)
	$(BE_CC) $(XFLAGS) -c -o $@ $<

$(BUILD)/windows/obj/atf_impl.o: lib/atf_impl.c atf.h
	@mkdir -p $(dir $@)
	$(WIN_CC) $(XFLAGS) -c -o $@ $<

$(LINKED_TESTS:%=$(BUILD)/arm64/%): $(BUILD)/arm64/obj/atf_impl.o
$(LINKED_TESTS:%=$(BUILD)/s390x/%): $(BUILD)/s390x/obj/atf_impl.o
$(LINKED_TESTS:%=$(BUILD)/windows/%.exe): $(BUILD)/windows/obj/atf_impl.o

# the atf command once per target for the harnesses of its commands, as in the native build
$(BUILD)/arm64/obj/cli_embed.o: $(CLI_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(XFLAGS) -c -o $@ $<

$(BUILD)/s390x/obj/cli_embed.o: $(CLI_DEPS)
	@mkdir -p $(dir $@)
	$(BE_CC) $(XFLAGS) -c -o $@ $<

$(BUILD)/windows/obj/cli_embed.o: $(CLI_DEPS)
	@mkdir -p $(dir $@)
	$(WIN_CC) $(XFLAGS) -c -o $@ $<

$(CLI_TESTS:%=$(BUILD)/arm64/%): $(BUILD)/arm64/obj/cli_embed.o
$(CLI_TESTS:%=$(BUILD)/s390x/%): $(BUILD)/s390x/obj/cli_embed.o
$(CLI_TESTS:%=$(BUILD)/windows/%.exe): $(BUILD)/windows/obj/cli_embed.o

$(BUILD)/arm64/%: tests/%.c atf.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(XFLAGS) $(HOOKS_$*) -static -o $@ $< $(filter %.o,$^) -lpthread

$(BUILD)/s390x/%: tests/%.c atf.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(BE_CC) $(XFLAGS) $(HOOKS_$*) -static -o $@ $< $(filter %.o,$^) -lpthread

$(BUILD)/windows/%.exe: tests/%.c atf.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(WIN_CC) $(XFLAGS) $(HOOKS_$*) -static -o $@ $< $(filter %.o,$^) -lpthread

test-arm64: $(TEST_NAMES:%=$(BUILD)/arm64/%)
	@$(ARM64_RUN) $(BUILD)/arm64/test_crc32c auto_dispatch | grep -q 'active: armv8' || \
	  { echo "test-arm64: the CPU model lacks CRC32: the ARMv8 path would go untested"; exit 1; }
	@RUNNER="$(ARM64_RUN)" ATF_TEST_TMP="$(BUILD)/arm64" tests/run_all.sh $^

test-be: $(TEST_NAMES:%=$(BUILD)/s390x/%)
	@RUNNER="$(BE_RUN)" ATF_TEST_TMP="$(BUILD)/s390x" tests/run_all.sh $^

test-windows: $(WIN_TESTS:%=$(BUILD)/windows/%.exe)
	@export WINEPREFIX="$(abspath $(BUILD))/wine" WINEARCH=win64 WINEDEBUG=-all; \
	  [ -d "$$WINEPREFIX" ] || $(WINE) wineboot -i >/dev/null 2>&1; \
	  [ -z "$(WIN_SKIPPED)" ] || echo "test-windows: POSIX-only harnesses not run: $(WIN_SKIPPED)"; \
	  RUNNER="$(WINE)" ATF_TEST_TMP="$(BUILD)/windows" tests/run_all.sh $^

configs:
	@BUILD="$(BUILD)" JOBS=2 OPT="$(XOPT)" tests/configs.sh

golden: $(BUILD)/tests/golden_gen
	$(BUILD)/tests/golden_gen tests/golden

# ---- fuzzing, sanitizers, valgrind ----------------------------------------------------
#   make fuzz [FUZZ_SECONDS=60]  each fuzz/fuzz_*.c under libFuzzer (clang) for N seconds on
#                                a scratch copy of fuzz/corpus/<target>; fails on any crash
#   make fuzz-replay             the same programs without libFuzzer (cc + ASan/UBSan), over
#                                the committed corpora
#   make fuzz-seeds              rewrites the seed inputs of fuzz/corpus from tests/fixtures.h
#   make sanitize                make test, everything built with ASan + UBSan in $(BUILD)/asan
#   make valgrind                the reader tests under valgrind memcheck, no errors, no leaks
FUZZ_TARGETS := index packed detail thread gaps manifest session ktrace
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 65536
FUZZ_CC     ?= clang
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_DEPS   := fuzz/fuzz_common.h atf.h tests/fixtures.h
VALGRIND_TESTS := $(filter $(addprefix $(BUILD)/tests/,test_reader test_format test_ktrace \
                    test_manifest test_merge test_faults test_regress test_golden test_stats test_tree \
                    test_info test_diff test_core test_walk test_export),$(TESTS))

.PHONY: fuzz fuzz-replay fuzz-seeds sanitize valgrind $(addprefix fuzz-run-,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -O1 -g $(WARN) -D_GNU_SOURCE -I. -DATF_FUZZ_LIBFUZZER \
	  -fsanitize=fuzzer $(SAN_FLAGS) -o $@ $< $(LDLIBS_ALL)

$(addprefix fuzz-run-,$(FUZZ_TARGETS)): fuzz-run-%: $(BUILD)/fuzz/fuzz_%
	@sh fuzz/run.sh $* $(BUILD)/fuzz $(FUZZ_SECONDS) $(FUZZ_MAX_LEN)

fuzz: $(addprefix fuzz-run-,$(FUZZ_TARGETS))

$(BUILD)/fuzz-replay/fuzz_%: fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g $(WARN) -D_GNU_SOURCE -I. $(SAN_FLAGS) -o $@ $< $(LDLIBS_ALL)

fuzz-replay: $(addprefix $(BUILD)/fuzz-replay/fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do $(BUILD)/fuzz-replay/fuzz_$$t fuzz/corpus/$$t || exit 1; done

# (the packed seeds are coded by atf_packed_encode: the implementation is linked)
$(BUILD)/fuzz/make_seeds: fuzz/make_seeds.c tests/fixtures.h atf.h $(IMPL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(IMPL_OBJ) $(LDLIBS_ALL)

fuzz-seeds: $(BUILD)/fuzz/make_seeds
	$(BUILD)/fuzz/make_seeds fuzz/corpus

# atf record preloads the (sanitized) tracer ahead of the program's ASan runtime, which
# ASan refuses unless told not to check the order; tests/instrument_checks.sh leaves out
# its forking sample there (ATF_CHECKS_SANITIZED: see the script)
sanitize:
	@ASAN_OPTIONS="verify_asan_link_order=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}" ATF_CHECKS_SANITIZED=1 \
	  $(MAKE) --no-print-directory test BUILD=$(BUILD)/asan OPT="-O1 -g" \
	  CFLAGS="$(CFLAGS) $(SAN_FLAGS)" LDLIBS="$(LDLIBS) $(SAN_FLAGS)"

valgrind: $(VALGRIND_TESTS)
	@sh tests/valgrind.sh $(VALGRIND_TESTS)

# Programs bench/bench_instrument.h times, built from bench/bench_fib.c: plain, with the
# auto-tracer, with the hooks alone and with -pg for the peers; the busy sample below ($(BUILD)/bench is the bench
# binary itself, so they live in bench_progs/). `make bench-instrument` runs that benchmark alone.
BENCH_PROGS := $(BUILD)/bench_progs
BENCH_FIB   := $(BENCH_PROGS)/fib_plain $(BENCH_PROGS)/fib_traced $(BENCH_PROGS)/fib_pg \
               $(BENCH_PROGS)/fib_cyg
FIB_CFLAGS   = $(CSTD) -O2 -g -fno-optimize-sibling-calls -D_GNU_SOURCE -Wall -Wextra $(CFLAGS)
bench: $(BENCH_FIB)

$(BENCH_PROGS)/fib_plain: bench/bench_fib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -o $@ $< $(LDLIBS_ALL)

# fib's code with the hooks, the same object for every runtime linked into it
$(BENCH_PROGS)/fib_hooked.o: bench/bench_fib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -finstrument-functions -c -o $@ $<

$(BENCH_PROGS)/fib_traced: $(BENCH_PROGS)/fib_hooked.o $(INSTR_OBJ)
	$(CC) -o $@ $^ -ldl $(LDLIBS_ALL)

# funtrace (a flight recorder: the last 1 MiB of events per thread) as a peer, from a
# source tree the caller names: make bench FUNTRACE_SRC=DIR (never fetched by the build;
# the benchmark runs it only when FUNTRACE_SRC is given). Built as its compiler wrappers
# build it, without its ftrace collection (which needs tracefs; it would only warn and go
# on) and without its collector of exited threads' buffers: that thread sleeps up to
# 300 ms at exit, and each exiting thread then recalibrates the TSC rate (where the CPU
# does not name it: another 100-ms sleep, under a lock), fixed costs that would not
# subtract evenly from runs of different lengths.
ifneq ($(FUNTRACE_SRC),)
ifeq ($(wildcard $(FUNTRACE_SRC)/funtrace.cpp),)
$(error FUNTRACE_SRC=$(FUNTRACE_SRC) holds no funtrace.cpp)
endif
bench: $(BENCH_PROGS)/fib_funtrace
$(BUILD)/bench_instrument: $(BENCH_PROGS)/fib_funtrace
$(BENCH_PROGS)/funtrace.o: $(FUNTRACE_SRC)/funtrace.cpp $(wildcard $(FUNTRACE_SRC)/*.h)
	@mkdir -p $(dir $@)
	$(CXX) -O2 -std=c++17 -DFUNTRACE_FTRACE_EVENTS_IN_BUF=0 -DFUNTRACE_GC_MAX_AGE_MS=0 \
	  -I$(FUNTRACE_SRC) -c -o $@ $<
$(BENCH_PROGS)/fib_funtrace: $(BENCH_PROGS)/fib_hooked.o $(BENCH_PROGS)/funtrace.o \
  $(FUNTRACE_SRC)/funtrace.dyn
	$(CXX) -o $@ $(filter %.o,$^) -Wl,--dynamic-list=$(FUNTRACE_SRC)/funtrace.dyn -ldl -pthread
endif

$(BENCH_PROGS)/fib_pg: bench/bench_fib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -pg -o $@ $< $(LDLIBS_ALL)

# -finstrument-functions without the auto-tracer (glibc's empty hooks): what uftrace and
# LTTng-UST's preloaded cyg-profile library trace, and the floor under a call the
# auto-tracer's filters leave out
$(BENCH_PROGS)/fib_cyg: bench/bench_fib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -finstrument-functions -o $@ $< $(LDLIBS_ALL)

# ISA-L's crc32_iscsi, the CRC32-C peer, when libisal-dev is installed (bench.c includes
# its header only when it is there)
$(BUILD)/bench: LDLIBS_ALL += $(if $(wildcard /usr/include/isa-l/crc.h),-lisal)

# The busy sample (tests/programs/busy.c) traced whole: plain, with the auto-tracer,
# and with -finstrument-functions but no tracer (glibc's empty hooks) for uftrace.
BENCH_BUSY  := $(BENCH_PROGS)/busy_plain $(BENCH_PROGS)/busy_traced $(BENCH_PROGS)/busy_cyg
BUSY_CFLAGS  = $(CSTD) -O2 -g -D_GNU_SOURCE -Wall -Wextra $(CFLAGS)
bench: $(BENCH_BUSY)
$(BUILD)/bench_instrument: $(BENCH_BUSY)

$(BENCH_PROGS)/busy_plain: $(PROGS)/busy.c
	@mkdir -p $(dir $@)
	$(CC) $(BUSY_CFLAGS) -o $@ $< $(LDLIBS_ALL)

$(BENCH_PROGS)/busy_traced: $(PROGS)/busy.c $(INSTR_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BUSY_CFLAGS) -finstrument-functions -c -o $(BENCH_PROGS)/busy_traced.o $<
	$(CC) -o $@ $(BENCH_PROGS)/busy_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

$(BENCH_PROGS)/busy_cyg: $(PROGS)/busy.c
	@mkdir -p $(dir $@)
	$(CC) $(BUSY_CFLAGS) -finstrument-functions -o $@ $< $(LDLIBS_ALL)

$(BUILD)/bench_instrument: bench/bench_instrument_main.c bench/bench_instrument.h atf.h $(BENCH_FIB)
	$(CC) $(CSTD) -O2 -g -D_GNU_SOURCE -I. -Wall -Wextra \
	  -DBENCH_INSTRUMENT_DIR='"$(BENCH_PROGS)"' -o $@ $< $(LDLIBS_ALL)

.PHONY: bench-instrument
bench-instrument: $(BUILD)/bench_instrument
	$(BUILD)/bench_instrument

# Real programs from Debian's source packages (Lua, the SQLite shell) under atf record and
# uftrace, quiet and with a core kept busy: bench/bench_real.sh says how. Never in test/CI.
BENCH_REAL_RUNS ?= 3
BENCH_REAL_SIZE ?= small
BENCH_REAL_STATES ?= quiet busy
.PHONY: bench-real
bench-real: $(BUILD)/atf $(INSTR_SO)
	@BUILD="$(BUILD)" BENCH_REAL_RUNS=$(BENCH_REAL_RUNS) BENCH_REAL_SIZE=$(BENCH_REAL_SIZE) \
	  BENCH_REAL_STATES="$(BENCH_REAL_STATES)" \
	  sh bench/bench_real.sh

# ---- install -----------------------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]   atf.h, the atf command, atf.pc and
#                 the preloadable tracer as LIBDIR/atf/libatf_instrument.so (where the
#                 installed `atf record` finds it: ../lib/atf/ from the command)
#   make uninstall [PREFIX=...] [DESTDIR=...]             removes exactly those four files
# The library is header-only: atf.pc gives Cflags and no library (a program that defines
# ATF_IMPLEMENTATION links the platform's thread library itself, e.g. -lpthread).
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
INCLUDEDIR   ?= $(PREFIX)/include
LIBDIR       ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(PREFIX)/share/pkgconfig
INSTALL      ?= install
ATF_VERSION   = $(shell awk '/^\#define ATF_VERSION_(MAJOR|MINOR|PATCH) /{v=v s $$3; s="."} END{print v}' atf.h)
PC_INCLUDEDIR = $(if $(filter $(PREFIX)/include,$(INCLUDEDIR)),$${prefix}/include,$(INCLUDEDIR))

.PHONY: install uninstall
# atf.pc is written at every install, so that it always carries this PREFIX
install: $(BUILD)/atf $(INSTR_SO)
	@mkdir -p $(BUILD)
	@printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$(PC_INCLUDEDIR)' '' \
	  'Name: atf' \
	  'Description: ADA Trace Format (ATF v2): single-header C library for function-level traces' \
	  'Version: $(ATF_VERSION)' \
	  'Cflags: -I$${includedir}' > $(BUILD)/atf.pc
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	  $(DESTDIR)$(LIBDIR)/atf
	$(INSTALL) -m 644 atf.h $(DESTDIR)$(INCLUDEDIR)/atf.h
	$(INSTALL) -m 755 $(BUILD)/atf $(DESTDIR)$(BINDIR)/atf
	$(INSTALL) -m 644 $(BUILD)/atf.pc $(DESTDIR)$(PKGCONFIGDIR)/atf.pc
	$(INSTALL) -m 755 $(INSTR_SO) $(DESTDIR)$(LIBDIR)/atf/libatf_instrument.so

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/atf.h $(DESTDIR)$(BINDIR)/atf $(DESTDIR)$(PKGCONFIGDIR)/atf.pc \
	  $(DESTDIR)$(LIBDIR)/atf/libatf_instrument.so
	-rmdir $(DESTDIR)$(LIBDIR)/atf 2>/dev/null
