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
	  tests/run_all.sh $(TESTS) tests/compile_checks.sh tests/cli_checks.sh

$(BUILD)/bench: bench/bench.c atf.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g -D_GNU_SOURCE -I. -Wall -Wextra -o $@ $< $(LDLIBS_ALL)

bench: $(BUILD)/bench
	$(BUILD)/bench $(BUILD)/bench.json

demo: all
	@sh tools/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)

# ---- fuzzing, sanitizers, valgrind ----------------------------------------------------
#   make fuzz [FUZZ_SECONDS=60]  each fuzz/fuzz_*.c under libFuzzer (clang) for N seconds on
#                                a scratch copy of fuzz/corpus/<target>; fails on any crash
#   make fuzz-replay             the same programs without libFuzzer (cc + ASan/UBSan), over
#                                the committed corpora
#   make fuzz-seeds              rewrites the seed inputs of fuzz/corpus from tests/fixtures.h
#   make sanitize                make test, everything built with ASan + UBSan in $(BUILD)/asan
#   make valgrind                the reader tests under valgrind memcheck, no errors, no leaks
FUZZ_TARGETS := index detail thread manifest session ktrace
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 65536
FUZZ_CC     ?= clang
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_DEPS   := fuzz/fuzz_common.h atf.h tests/fixtures.h
VALGRIND_TESTS := $(filter $(addprefix $(BUILD)/tests/,test_reader test_format test_ktrace \
                    test_merge test_session_reader test_faults),$(TESTS))

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

$(BUILD)/fuzz/make_seeds: fuzz/make_seeds.c tests/fixtures.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $<

fuzz-seeds: $(BUILD)/fuzz/make_seeds
	$(BUILD)/fuzz/make_seeds fuzz/corpus

sanitize:
	@$(MAKE) --no-print-directory test BUILD=$(BUILD)/asan OPT="-O1 -g" \
	  CFLAGS="$(CFLAGS) $(SAN_FLAGS)" LDLIBS="$(LDLIBS) $(SAN_FLAGS)"

valgrind: $(VALGRIND_TESTS)
	@sh tests/valgrind.sh $(VALGRIND_TESTS)
