# qtrace: build, demo, tests, benchmarks. `make demo` and `make test` are the two set-up
# commands of the README; both install the Debian packages they need (idempotently).
SWIFT ?= swift
CONFIG ?= debug
CC ?= cc
BIN := $(shell $(SWIFT) build -c $(CONFIG) --show-bin-path 2>/dev/null)
# The interposer is every Sources/CQTraceShim/shim_*.c and shim_*.S (one file per role,
# shim_internal.h; the .S is swift_task_switch, which uses Swift's async calling convention);
# recorder*.c are the embedded recorder (the LTTng build replaces them with
# lttng/recorder_lttng.c). The test supports and scripts/bench-record.py use the same rule.
INTERPOSER_SOURCES := $(sort $(wildcard Sources/CQTraceShim/shim_*.c)) $(wildcard Sources/CQTraceShim/shim_*.S)
SHIM_SOURCES := $(sort $(wildcard Sources/CQTraceShim/recorder*.c)) $(INTERPOSER_SOURCES)
SHIM_HEADERS := Sources/CQTraceShim/recorder.h Sources/CQTraceShim/recorder_internal.h Sources/CQTraceShim/qtrace_records.h Sources/CQTraceShim/include/qtrace_shim.h \
  $(wildcard Sources/CQTraceShim/shim_*.h)
SHIM := $(BIN)/libqtrace-shim.so
OUT := out

.PHONY: all deps test-deps build shim shim-lttng demo check test bench clean fuzz-build fuzz fuzz-smoke

all: build

# Both only check when everything is installed (one dpkg-query): apt runs only for what is missing.
deps:
	@bash scripts/install-deps.sh

test-deps:
	@bash scripts/install-deps.sh --test

# The preloadable shim is plain C built by cc (a SwiftPM dynamic library would pull in the
# Swift runtime, which must not be loaded into every process that inherits LD_PRELOAD).
$(SHIM): $(SHIM_SOURCES) $(SHIM_HEADERS)
	@mkdir -p $(BIN)
	$(CC) -O2 -g -fPIC -shared -Wall -Wextra -fno-omit-frame-pointer -Wl,-z,defs -DQTRACE_PRELOAD=1 \
	  -ISources/CQTraceShim/include -o $@ $(SHIM_SOURCES) -ldl -lpthread

shim: $(SHIM)

# The LTTng-UST variant (docs/lttng.md): records go to `qtrace:*` tracepoints instead of a
# trace file. With systemtap-sdt-dev the tracepoints are also USDT probes (perf, bpftrace).
SHIM_LTTNG := $(BIN)/libqtrace-shim-lttng.so
SHIM_LTTNG_SOURCES := $(INTERPOSER_SOURCES) Sources/CQTraceShim/lttng/recorder_lttng.c \
  Sources/CQTraceShim/lttng/qtrace_tp.c
SHIM_LTTNG_HEADERS := $(SHIM_HEADERS) Sources/CQTraceShim/lttng/qtrace_tp.h Sources/CQTraceShim/lttng/recorder_lttng.h
SDT_FLAGS = $(shell echo '\#include <sys/sdt.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo -DLTTNG_UST_HAVE_SDT_INTEGRATION)
$(SHIM_LTTNG): $(SHIM_LTTNG_SOURCES) $(SHIM_LTTNG_HEADERS)
	@mkdir -p $(BIN)
	$(CC) -O2 -g -fPIC -shared -Wall -Wextra -fno-omit-frame-pointer -Wl,-z,defs -DQTRACE_PRELOAD=1 -DQTRACE_LTTNG=1 $(SDT_FLAGS) \
	  -ISources/CQTraceShim/include -ISources/CQTraceShim/lttng -o $@ $(SHIM_LTTNG_SOURCES) -llttng-ust -ldl -lpthread

shim-lttng: $(SHIM_LTTNG)

build: deps
	$(SWIFT) build -c $(CONFIG)
	@$(MAKE) --no-print-directory shim shim-lttng

# Records the mixed sample app and writes its trace and HTML report into out/.
demo: build
	@mkdir -p $(OUT)
	$(BIN)/qtrace record -o $(OUT)/demo.qtrace -- $(BIN)/qtrace-samples app
	@echo "open $(OUT)/demo.html in a browser"

# The quick loop after `make build`: unit tests only (no recording, no shim, no LTTng, no
# browser), under 30 s. `make test` runs everything.
UNIT_TESTS := QTraceFormatTests|QTraceAnalysisTests|QTraceSymbolsTests|QTraceReportTests|QTraceExportTests|QTraceRecordingTests
check:
	$(SWIFT) build -c $(CONFIG) --build-tests
	env -u QTRACE_BROWSER_FIXTURES $(SWIFT) test -c $(CONFIG) --skip-build --filter '$(UNIT_TESTS)'

# Swift tests (unit, end to end), then the browser tests on the reports they wrote.
BROWSER_FIXTURES := $(abspath $(OUT)/browser-fixtures)
test: test-deps build
	$(SWIFT) build -c $(CONFIG) --build-tests
	@rm -rf $(BROWSER_FIXTURES) && mkdir -p $(BROWSER_FIXTURES)
	QTRACE_SHIM=$(abspath $(SHIM)) QTRACE_BROWSER_FIXTURES=$(BROWSER_FIXTURES) $(SWIFT) test -c $(CONFIG) --skip-build
	QTRACE_BROWSER_FIXTURES=$(BROWSER_FIXTURES) bash Tests/BrowserTests/run.sh
	@$(MAKE) --no-print-directory fuzz-smoke

# The fuzzers (docs/fuzzing.md): qtrace-fuzz built with libFuzzer in its own scratch path.
# `make fuzz` is the long run (FUZZ_SECONDS per target); `make test` runs a one-minute smoke.
FUZZ_SECONDS ?= 1200
fuzz-build:
	QTRACE_LIBFUZZER=1 $(SWIFT) build -c release --scratch-path .build-fuzz --product qtrace-fuzz

fuzz: fuzz-build
	bash scripts/fuzz.sh $(FUZZ_SECONDS) embedded ctf perf

# The smoke runs from a fixed seed (FUZZ_SEED) so that a CI run explores what the last one did
# and cannot fail on a reader bug of someone else's that a new random path happened on;
# `make fuzz` explores anew each time.
FUZZ_SEED ?= 1
fuzz-smoke: fuzz-build
	QTRACE_FUZZ_SEED=$(FUZZ_SEED) bash scripts/fuzz.sh 20 embedded ctf perf

bench:
	@$(MAKE) --no-print-directory build CONFIG=release
	python3 scripts/bench-record.py $(shell $(SWIFT) build -c release --show-bin-path)
	python3 scripts/bench-collector.py $(shell $(SWIFT) build -c release --show-bin-path)

clean:
	rm -rf .build $(OUT)
