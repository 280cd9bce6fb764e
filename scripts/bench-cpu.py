#!/usr/bin/env python3
"""What `qtrace record --cpu` costs, measured in one run: the fixture's bench-realistic
(~10 us items on one serial queue, the recording benchmark's realistic load) recorded without
samples (0 Hz) and with --cpu=99 and --cpu=999 (and --cpu=999 --cpu-stacks fp), alternating,
several rounds. Prints medians of the program's own ns per item, their ratio to 0 Hz, and of
the whole `qtrace record` wall time (perf start and stop, perf script and the conversion
included).

Usage: scripts/bench-cpu.py [BIN_DIR] [--rounds N] [--items N]   (needs perf and root; docs/cpu.md)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = [("0 Hz (traced, no --cpu)", []), ("99 Hz", ["--cpu=99"]), ("999 Hz", ["--cpu=999"]),
           ("999 Hz, --cpu-stacks fp", ["--cpu=999", "--cpu-stacks", "fp"])]


def option(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    rounds, items = option("--rounds", 5), option("--items", 50_000)
    values = {str(rounds), str(items)}
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a not in values]
    bin_dir = args[0] if args else subprocess.check_output(
        ["swift", "build", "-c", "release", "--show-bin-path"], text=True).strip()
    qtrace, fixtures = os.path.join(bin_dir, "qtrace"), os.path.join(bin_dir, "qtrace-fixtures")
    for path in (qtrace, fixtures):
        if not os.path.exists(path):
            sys.exit(f"bench: {path} missing: run `make build` first")
    tmp = tempfile.mkdtemp(prefix="qtrace-bench-cpu-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
    env["QTRACE_SHIM"] = os.path.join(bin_dir, "libqtrace-shim.so")

    def once(extra):
        trace = os.path.join(tmp, "bench.qtrace")
        argv = [qtrace, "record", "--no-report", "-q", "-o", trace] + extra
        began = time.monotonic()
        out = subprocess.run(argv + ["--", fixtures, "bench-realistic", str(items)], env=env, capture_output=True,
                             text=True, check=True).stdout
        wall = time.monotonic() - began
        os.unlink(trace)
        return float(re.search(r"ns/item ([0-9.]+)", out).group(1)), wall

    results = {label: [] for label, _ in CONFIGS}
    for _ in range(rounds):
        for label, extra in CONFIGS:
            results[label].append(once(extra))
    print(f"qtrace record --cpu benchmark: bench-realistic, {items:,} items of ~10 us, {rounds} rounds, medians")
    print(f"{'sampling':<28}{'ns/item':>10}{'ratio':>8}{'record s':>10}")
    base = statistics.median(x for x, _ in results[CONFIGS[0][0]])
    for label, _ in CONFIGS:
        ns = statistics.median(x for x, _ in results[label])
        wall = statistics.median(w for _, w in results[label])
        print(f"{label:<28}{ns:>10.1f}{ns / base:>8.3f}{wall:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
