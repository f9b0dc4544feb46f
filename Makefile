# fusebox - one plain Makefile.
#
#   make            build build/release/fusebox (installs Debian packages if missing)
#   make test       build (on JOBS=N CPUs, default all) and run every test suite; ends with
#                   "N passed, N failed, N skipped"; T=NAME runs that suite only (test_NAME
#                   and/or tests/e2e/NAME.sh)
#   make unit       the unit tests only; T=breaker runs build/<V>/tests/test_breaker alone,
#                   F='breaker_half_open*' only its tests whose names match
#   make e2e        the end-to-end suites only; T=cli runs tests/e2e/cli.sh alone
#   make golden     rewrite tests/golden/ from this build (tests/README.md says when)
#   make asan       the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      benchmarks: prints figures, never pass/fail
#   make fuzz       every libFuzzer target (tests/fuzz/) for FUZZ_SECONDS each (docs/testing.md)
#   make checksrc   banned calls and header rules (tests/checksrc.sh)
#   make conformance-record  re-record tests/conformance/ from the real libraries
#                   (GOBREAKER_SRC=DIR, PYBREAKER_SRC=DIR, ...: tests/conformance/README.md)
#   make schema     write the parts of docs/scenario.schema.json and docs/scenario-format.md
#                   that come from the scenario format's tables (scenario/loadint.h)
#   make fmt-check  clang-format conformance
#   make run        the flagship scenario (README's main job)
#   make install    the binary, fusebox(1), bash completion, scenarios/ and docs/ under
#                   $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall removes them
#   make man        build/<V>/fusebox.1, the man page made of the --help texts
#   make deps       install the Debian packages, only those missing (deps-test: the
#                   tools the end-to-end suites use)
#
# Variants build into build/<variant>/: V=release (default), V=debug, V=asan; V=fuzz (clang,
# libFuzzer's coverage with ASan and UBSan: the fuzz targets, tests/e2e/fuzz.sh builds it).

V ?= release
BUILD := build/$(V)

CC ?= cc
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -Werror
CFLAGS_release := -O2 -g
CFLAGS_debug := -O0 -g
CFLAGS_asan := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_asan := -fsanitize=address,undefined
# clang only; -Wno-error: clang warns where gcc does not, and the targets are tests, not the build.
CFLAGS_fuzz := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer -Wno-error
LDFLAGS_fuzz := -fsanitize=fuzzer,address,undefined
# FP contraction off: the same sequence of double operations on every compiler and -O level.
BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -ffp-contract=off -I. -MMD -MP
ALL_CFLAGS = $(BASE_CFLAGS) $(WARN) $(CFLAGS_$(V)) $(CFLAGS)
ALL_LDFLAGS = $(LDFLAGS_$(V)) $(LDFLAGS) -Wl,--as-needed

# External libraries through pkg-config, with the Debian names as a fallback
# so that parsing this file works before `make deps` has run.
pkg = $(shell pkg-config --libs $(1) 2>/dev/null || echo $(2))
LIB_CJSON := $(call pkg,libcjson,-lcjson)
LIB_YAML := $(call pkg,yaml-0.1,-lyaml)
LIB_CURL := $(call pkg,libcurl,-lcurl)
LIB_MHD := $(call pkg,libmicrohttpd,-lmicrohttpd)
LIB_CMOCKA := $(call pkg,cmocka,-lcmocka)
# NLopt: only what links sweep/tune.c (fusebox tune's search) needs it.
LIB_NLOPT := $(call pkg,nlopt,-lnlopt)
EXT_LIBS := $(LIB_CURL) $(LIB_MHD) $(LIB_CJSON) $(LIB_YAML) -lm -lpthread

DEPS_PKGS := libcurl4-openssl-dev libmicrohttpd-dev libcjson-dev libyaml-dev libcmocka-dev gnuplot-nox \
             libnlopt-dev pkg-config
# What the end-to-end suites use besides the build (python3 reads JSON, curl talks HTTP).
TEST_PKGS := python3 curl
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

MODULES := util core scenario sim import reports sweep live mockserver
src_of = $(sort $(wildcard $(1)/*.c))
obj_of = $(patsubst %.c,$(BUILD)/%.o,$(call src_of,$(1)))
lib_of = $(if $(call src_of,$(1)),$(BUILD)/lib/libfb$(1).a)
# Link order: dependants before dependencies.
LIBS := $(foreach m,live mockserver sweep reports import sim scenario core util,$(call lib_of,$(m)))

CLI_OBJ := $(call obj_of,cli)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
# Differential-test drivers: tests/diff/FAMILY/NAME.c, each a program built to
# build/<V>/tests/diff/FAMILY/NAME (run by tests/e2e/diff_FAMILY.sh).
DIFF_SRC := $(sort $(wildcard tests/diff/*/*.c))
DIFF_BIN := $(patsubst tests/diff/%.c,$(BUILD)/tests/diff/%,$(DIFF_SRC))
# libFuzzer targets: tests/fuzz/fuzz_NAME.c, each built to build/fuzz/fuzz/fuzz_NAME (V=fuzz).
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
# Tools the build and the tests use: tests/tools/NAME.c, each built to build/<V>/tests/tools/NAME
# (scn_tables prints the scenario format's tables for `make schema`).
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TOOL_BIN := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRC))
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
FUSEBOX := $(BUILD)/fusebox

.PHONY: all build deps deps-test install-pkgs test unit e2e golden asan bench checksrc fmt fmt-check \
        conformance-record \
        run clean install uninstall man fuzz fuzz-build schema
.DEFAULT_GOAL := all
.SECONDARY:

all: build
build: $(FUSEBOX) $(UNIT_BIN) $(DIFF_BIN) $(TOOL_BIN)

# V=fuzz needs clang and its runtimes (libFuzzer, ASan, UBSan: libclang-rt-dev; Debian's clang
# only recommends it).
deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS) $(if $(filter fuzz,$(V)),clang libclang-rt-dev)"

deps-test: deps
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(TEST_PKGS)"

# Install the Debian packages in $(PKGS) that are missing (apt-get update first).
install-pkgs:
	@missing=""; for p in $(PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  { $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; } || \
	  { echo "make deps: could not install$$missing (apt-get's error above: no network or no" \
	         "Debian archive, not root and no sudo, or a package this Debian lacks); install them" \
	         "and run make again" >&2; exit 1; }; \
	fi

# VERBOSE=1 shows the full commands.
Q := $(if $(VERBOSE),,@)
$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(VERBOSE),,echo "  CC  $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

.SECONDEXPANSION:
# The module's folder is a prerequisite too: a source added, moved or removed there
# changes its time, so the archive never keeps an object that has no source any more.
$(BUILD)/lib/libfb%.a: $$(call obj_of,$$*) $$*
	@mkdir -p $(dir $@)
	@rm -f $@
	$(Q)ar rcs $@ $(filter %.o,$^)

$(FUSEBOX): $(CLI_OBJ) $(LIBS)
	@$(if $(VERBOSE),,echo "  LD  $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(LIBS) $(EXT_LIBS) $(LIB_NLOPT)

# Unit tests: one cmocka binary per tests/unit/test_*.c, each linked with the shared
# helpers (tests/unit/helpers.[ch], and the mock tests' HTTP client tests/unit/mockhttp.[ch]).
UNIT_HELPERS := $(BUILD)/tests/unit/helpers.o $(BUILD)/tests/unit/mockhttp.o
# The unit tests of sweep/tune.c link NLopt too.
$(BUILD)/tests/test_tune: EXT_LIBS += $(LIB_NLOPT)
$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(UNIT_HELPERS) $(LIBS)
	@mkdir -p $(dir $@)
	@$(if $(VERBOSE),,echo "  LD  $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(UNIT_HELPERS) $(LIBS) $(LIB_CMOCKA) $(EXT_LIBS)

$(BUILD)/tests/diff/%: $(BUILD)/tests/diff/%.o $(LIBS)
	@mkdir -p $(dir $@)
	@$(if $(VERBOSE),,echo "  LD  $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBS) $(EXT_LIBS)

$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIBS)
	@mkdir -p $(dir $@)
	@$(if $(VERBOSE),,echo "  LD  $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBS) $(EXT_LIBS)

# The tables' parts of docs/scenario.schema.json and docs/scenario-format.md, written from
# the tables in scenario/ (tests/e2e/schema_fresh.sh fails when they are stale).
schema: $(BUILD)/tests/tools/scn_tables
	@python3 tests/tools/gen_schema.py --write $(BUILD)/tests/tools/scn_tables

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIBS)
	@mkdir -p $(dir $@)
	@$(if $(VERBOSE),,echo "  LD  $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBS) $(EXT_LIBS)

# The targets need no sweep/: not built, CI's time.
FUZZ_LIBS := $(foreach m,live mockserver sweep reports import sim scenario core util,$(call lib_of,$(m)))
$(BUILD)/fuzz/%: $(BUILD)/tests/fuzz/%.o $(FUZZ_LIBS)
	@mkdir -p $(dir $@)
	@$(if $(VERBOSE),,echo "  LD  $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(FUZZ_LIBS) $(EXT_LIBS)

# The targets alone (V=fuzz CC=clang); `make fuzz` builds and runs them through
# tests/e2e/fuzz.sh: FUZZ_SECONDS each (default 10), FUZZ_SEED (default 1; 0 explores).
fuzz-build: $(FUZZ_BIN)

fuzz: $(FUSEBOX) deps-test
	@FUZZ_SECONDS=$(or $(FUZZ_SECONDS),10) FUZZ_RUNS=$(or $(FUZZ_RUNS),1000000000) \
	  tests/run.sh $(BUILD) fuzz

# T=NAME...: those suites only: the unit test test_NAME and/or the e2e suite NAME (both when
# both exist, as for live), e.g. make test T=fleet_scenarios.
# The build on every CPU (JOBS=N chooses; a clean clone's build took 79 s of `make test`'s 760 s
# on one of two cores), after deps-test; then the suites.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) build
	@tests/run.sh $(BUILD) $(foreach t,$(T:test_%=%),$(if $(wildcard $(BUILD)/tests/test_$(t)),test_$(t)) \
	  $(if $(wildcard tests/e2e/$(t:%.sh=%).sh),$(t:%.sh=%)) \
	  $(if $(wildcard $(BUILD)/tests/test_$(t) tests/e2e/$(t:%.sh=%).sh),,$(t)))

# T=NAME... selects suites: unit tests by name with or without test_, e2e suites by file
# name. F=PATTERN selects the cmocka tests by name within the binaries (* and ? wildcards).
T_UNIT = $(addprefix test_,$(T:test_%=%))
unit: $(if $(T),$(addprefix $(BUILD)/tests/,$(T_UNIT)),$(UNIT_BIN))
	@$(if $(F),CMOCKA_TEST_FILTER='$(F)') tests/run.sh $(BUILD) $(if $(T),$(T_UNIT),unit)

e2e: $(FUSEBOX) $(DIFF_BIN) deps-test
	@tests/run.sh $(BUILD) $(if $(T),$(T:%.sh=%),e2e)

golden: $(FUSEBOX)
	@FUSEBOX=$(FUSEBOX) sh tests/golden/update.sh
	@git diff --stat -- tests/golden 2>/dev/null || true

asan:
	@$(MAKE) --no-print-directory V=asan test

bench: $(FUSEBOX) $(BENCH_BIN)
	@bench/run.sh $(BUILD)

run: $(FUSEBOX)
	$(FUSEBOX) run scenarios/retry-storm.json

checksrc: $(FUSEBOX)
	@BUILD=$(BUILD) tests/checksrc.sh

# Re-record tests/conformance/ from the real libraries (tests/conformance/README.md): each
# recorder runs when its library's source is given (GOBREAKER_SRC=DIR, PYBREAKER_SRC=DIR, ...:
# every variable ending in _SRC is passed on) and says what it needs when it is not.
conformance-record: $(DIFF_BIN)
	@$(foreach v,$(filter %_SRC,$(.VARIABLES)),$(v)='$($(v))') DRIVER=$(BUILD)/tests/diff/resilience/driver \
	  sh tests/conformance/record.sh

# make install [PREFIX=/usr/local] [DESTDIR=staging]: what a user of the binary needs, at the
# usual places; scenario.schema.json also next to the scenarios, where their "$$schema" points.
PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
MAN1DIR = $(DESTDIR)$(PREFIX)/share/man/man1
DATADIR = $(DESTDIR)$(PREFIX)/share/fusebox
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/fusebox
COMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
INSTALL_DOCS = $(sort $(wildcard docs/*.md)) docs/scenario.schema.json
INSTALL_SCENARIOS = $(sort $(wildcard scenarios/*.json))
INSTALL_CI = contrib/ci/gate.sh contrib/ci/install.sh contrib/ci/github-actions.yml contrib/ci/gitlab-ci.yml
INSTALL_SWEEP = $(sort $(wildcard contrib/sweep/*.sh contrib/sweep/*.sbatch contrib/sweep/*.args)) \
                contrib/sweep/Containerfile
INSTALL_SWEEP_K8S = $(sort $(wildcard contrib/sweep/k8s/*.yaml))

man: $(BUILD)/fusebox.1
$(BUILD)/fusebox.1: $(FUSEBOX) contrib/man.sh
	$(Q)sh contrib/man.sh $(FUSEBOX) $(PREFIX)/share >$@.tmp && mv $@.tmp $@

install: $(FUSEBOX)
	@rm -f $(BUILD)/fusebox.1
	@$(MAKE) --no-print-directory $(BUILD)/fusebox.1
	install -d $(BINDIR) $(MAN1DIR) $(DATADIR)/scenarios $(DATADIR)/docs $(DATADIR)/contrib/ci \
	    $(DATADIR)/contrib/sweep/k8s $(DOCDIR)/docs $(COMPDIR)
	install -m 755 $(FUSEBOX) $(BINDIR)/fusebox
	install -m 644 $(BUILD)/fusebox.1 $(MAN1DIR)/fusebox.1
	install -m 644 contrib/fusebox.bash $(COMPDIR)/fusebox
	install -m 644 $(INSTALL_SCENARIOS) $(DATADIR)/scenarios/
	install -m 644 docs/scenario.schema.json $(DATADIR)/docs/
	install -m 644 $(INSTALL_CI) $(DATADIR)/contrib/ci/
	install -m 644 $(INSTALL_SWEEP) $(DATADIR)/contrib/sweep/
	install -m 644 $(INSTALL_SWEEP_K8S) $(DATADIR)/contrib/sweep/k8s/
	install -m 644 README.md $(DOCDIR)/
	install -m 644 $(INSTALL_DOCS) $(DOCDIR)/docs/

# Removes what install put there, by name (scenarios or docs added since included), and the
# fusebox folders; shared folders such as bin/ stay.
uninstall:
	rm -f $(BINDIR)/fusebox $(MAN1DIR)/fusebox.1 $(COMPDIR)/fusebox
	rm -f $(DATADIR)/scenarios/*.json $(DATADIR)/docs/scenario.schema.json
	rm -f $(addprefix $(DATADIR)/contrib/ci/,$(notdir $(INSTALL_CI)))
	rm -f $(addprefix $(DATADIR)/contrib/sweep/,$(notdir $(INSTALL_SWEEP)))
	rm -f $(addprefix $(DATADIR)/contrib/sweep/k8s/,$(notdir $(INSTALL_SWEEP_K8S)))
	rm -f $(DOCDIR)/README.md $(DOCDIR)/docs/*.md $(DOCDIR)/docs/scenario.schema.json
	rmdir $(DATADIR)/scenarios $(DATADIR)/docs $(DATADIR)/contrib/ci \
	    $(DATADIR)/contrib/sweep/k8s $(DATADIR)/contrib/sweep $(DATADIR)/contrib $(DATADIR) $(DOCDIR)/docs $(DOCDIR) 2>/dev/null || true

FMT_FILES = $(sort $(wildcard util/*.[ch] core/*.[ch] scenario/*.[ch] sim/*.[ch] import/*.[ch] reports/*.[ch] sweep/*.[ch] live/*.[ch] \
                   mockserver/*.[ch] cli/*.[ch] tests/unit/*.[ch] tests/diff/*/*.[ch] bench/*.[ch] \
                   tests/fuzz/*.[ch] tests/tools/*.[ch]))
fmt:
	@command -v clang-format >/dev/null 2>&1 || $(MAKE) --no-print-directory install-pkgs PKGS=clang-format
	clang-format -i $(FMT_FILES)

fmt-check:
	@command -v clang-format >/dev/null 2>&1 || $(MAKE) --no-print-directory install-pkgs PKGS=clang-format
	@clang-format --dry-run --Werror $(FMT_FILES) && echo "fmt-check: $(words $(FMT_FILES)) files ok"

clean:
	rm -rf build

-include $(shell find build/$(V) -name '*.d' 2>/dev/null)
