# qtrace: build, demo, tests, benchmarks. `make demo` and `make test` are the two set-up
# commands of the README; both install the Debian packages they need (idempotently).
SWIFT ?= swift
CONFIG ?= debug
CC ?= cc
BIN := $(shell $(SWIFT) build -c $(CONFIG) --show-bin-path 2>/dev/null)
SHIM_SOURCES := Sources/CQTraceShim/recorder.c Sources/CQTraceShim/interpose.c
SHIM_HEADERS := Sources/CQTraceShim/recorder.h Sources/CQTraceShim/include/qtrace_shim.h
SHIM := $(BIN)/libqtrace-shim.so
OUT := out

.PHONY: all deps build shim demo test test-swift test-browser bench clean

all: build

deps:
	@bash scripts/install-deps.sh

# The preloadable shim is plain C built by cc (a SwiftPM dynamic library would pull in the
# Swift runtime, which must not be loaded into every process that inherits LD_PRELOAD).
$(SHIM): $(SHIM_SOURCES) $(SHIM_HEADERS)
	@mkdir -p $(BIN)
	$(CC) -O2 -g -fPIC -shared -Wall -Wextra -fno-omit-frame-pointer -DQTRACE_PRELOAD=1 \
	  -ISources/CQTraceShim/include -o $@ $(SHIM_SOURCES) -ldl -lpthread

shim: $(SHIM)

build: deps
	$(SWIFT) build -c $(CONFIG)
	@$(MAKE) --no-print-directory shim

# Records the mixed sample app and writes its trace and HTML report into out/.
demo: build
	@mkdir -p $(OUT)
	$(BIN)/qtrace record -o $(OUT)/demo.qtrace -- $(BIN)/qtrace-samples app
	@echo "open $(OUT)/demo.html in a browser"

test: build
	$(SWIFT) build -c $(CONFIG) --build-tests
	@$(MAKE) --no-print-directory shim
	QTRACE_SHIM=$(abspath $(SHIM)) $(SWIFT) test -c $(CONFIG) --skip-build --parallel --num-workers 2
	@if [ -f Tests/BrowserTests/run.sh ]; then bash Tests/BrowserTests/run.sh; fi

bench:
	@$(MAKE) --no-print-directory build CONFIG=release
	python3 scripts/bench-record.py $(shell $(SWIFT) build -c release --show-bin-path)

clean:
	rm -rf .build $(OUT)
