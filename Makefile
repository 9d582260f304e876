# atf.h - build, test and benchmark. Everything lands in build/.
#   make          the atf command (build/atf), the test programs and the examples
#   make test     every test harness, ending with "N passed, M failed"
#   make bench    benchmark figures into build/bench.json
#   make demo     a short tour on generated traces

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

.PHONY: all test bench demo clean
all: $(BUILD)/atf $(TESTS) $(EXAMPLES) $(BUILD)/tests/make_fixtures

$(BUILD)/atf: $(TOOLS_SRC) atf.h $(wildcard tools/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(TOOLS_SRC) $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c atf.h tests/harness.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

$(BUILD)/examples/%: examples/%.c atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

test: all $(BUILD)/tests/cli_gen
	@CC="$(CC)" CXX="$(CXX)" BUILD="$(BUILD)" ATF="$(BUILD)/atf" \
	  tests/run_all.sh $(TESTS) tests/compile_checks.sh tests/cli_checks.sh tests/examples_check.sh

$(BUILD)/bench: bench/bench.c atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g -D_GNU_SOURCE -I. -Wall -Wextra -o $@ $< $(LDLIBS_ALL)

bench: $(BUILD)/bench
	$(BUILD)/bench $(BUILD)/bench.json

demo: all
	@sh tools/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)

# The auto-tracer (examples/instrument/): sample.c built plain and traced. Only the traced
# program's own code gets -finstrument-functions; atf_instrument.c must never get it.
INSTR     := examples/instrument
INSTR_OBJ := $(BUILD)/obj/atf_instrument.o
all: $(BUILD)/examples/sample $(BUILD)/examples/sample_traced

$(INSTR_OBJ): $(INSTR)/atf_instrument.c atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/examples/sample: $(INSTR)/sample.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

$(BUILD)/examples/sample_traced: $(INSTR)/sample.c $(INSTR_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj
	$(CC) $(CFLAGS_ALL) -finstrument-functions -c -o $(BUILD)/obj/sample_traced.o $<
	$(CC) $(CFLAGS_ALL) -o $@ $(BUILD)/obj/sample_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

# Programs bench/bench_instrument.h times, built from bench/bench_fib.c: plain, with the
# auto-tracer, and with -pg for uftrace ($(BUILD)/bench is the bench binary itself, so
# they live in bench_progs/). `make bench-instrument` runs that benchmark alone.
BENCH_PROGS := $(BUILD)/bench_progs
BENCH_FIB   := $(BENCH_PROGS)/fib_plain $(BENCH_PROGS)/fib_traced $(BENCH_PROGS)/fib_pg
FIB_CFLAGS   = $(CSTD) -O2 -g -fno-optimize-sibling-calls -D_GNU_SOURCE -Wall -Wextra $(CFLAGS)
bench: $(BENCH_FIB)

$(BENCH_PROGS)/fib_plain: bench/bench_fib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -o $@ $<

$(BENCH_PROGS)/fib_traced: bench/bench_fib.c $(INSTR_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -finstrument-functions -c -o $(BENCH_PROGS)/fib_traced.o $<
	$(CC) -o $@ $(BENCH_PROGS)/fib_traced.o $(INSTR_OBJ) -ldl $(LDLIBS_ALL)

$(BENCH_PROGS)/fib_pg: bench/bench_fib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIB_CFLAGS) -pg -o $@ $<

$(BUILD)/bench_instrument: bench/bench_instrument_main.c bench/bench_instrument.h atf.h $(BENCH_FIB)
	$(CC) $(CSTD) -O2 -g -D_GNU_SOURCE -I. -Wall -Wextra \
	  -DBENCH_INSTRUMENT_DIR='"$(BENCH_PROGS)"' -o $@ $< $(LDLIBS_ALL)

.PHONY: bench-instrument
bench-instrument: $(BUILD)/bench_instrument
	$(BUILD)/bench_instrument
