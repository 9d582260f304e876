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

# ---- install -----------------------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]   atf.h, the atf command and atf.pc
#   make uninstall [PREFIX=...] [DESTDIR=...]             removes exactly those three files
# The library is header-only: atf.pc gives Cflags and no library (a program that defines
# ATF_IMPLEMENTATION links the platform's thread library itself, e.g. -lpthread).
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(PREFIX)/share/pkgconfig
INSTALL      ?= install
ATF_VERSION   = $(shell awk '/^\#define ATF_VERSION_(MAJOR|MINOR|PATCH) /{v=v s $$3; s="."} END{print v}' atf.h)
PC_INCLUDEDIR = $(if $(filter $(PREFIX)/include,$(INCLUDEDIR)),$${prefix}/include,$(INCLUDEDIR))

.PHONY: install uninstall
# atf.pc is written at every install, so that it always carries this PREFIX
install: $(BUILD)/atf
	@mkdir -p $(BUILD)
	@printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$(PC_INCLUDEDIR)' '' \
	  'Name: atf' \
	  'Description: ADA Trace Format (ATF v2): single-header C library for function-level traces' \
	  'Version: $(ATF_VERSION)' \
	  'Cflags: -I$${includedir}' > $(BUILD)/atf.pc
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 atf.h $(DESTDIR)$(INCLUDEDIR)/atf.h
	$(INSTALL) -m 755 $(BUILD)/atf $(DESTDIR)$(BINDIR)/atf
	$(INSTALL) -m 644 $(BUILD)/atf.pc $(DESTDIR)$(PKGCONFIGDIR)/atf.pc

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/atf.h $(DESTDIR)$(BINDIR)/atf $(DESTDIR)$(PKGCONFIGDIR)/atf.pc
