#!/usr/bin/env python3
"""Cost per work item with and without the qtrace shim, measured in the same run.

Runs the fixture's `bench-empty` (1M empty async items on one serial queue) and
`bench-realistic` (items of ~10 us) untraced and traced, alternating, several rounds, on
1 pinned CPU and on all CPUs, and prints medians and the traced/untraced ratio.

Usage: scripts/bench-record.py [BIN_DIR] [--rounds N]   (make bench builds release first)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = 5
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
        args = [a for a in args if a != str(rounds)]
    bin_dir = args[0] if args else subprocess.check_output(
        ["swift", "build", "-c", "release", "--show-bin-path"], text=True).strip()
    fixtures = os.path.join(bin_dir, "qtrace-fixtures")
    shim = os.path.join(bin_dir, "libqtrace-shim.so")
    for path in (fixtures, shim):
        if not os.path.exists(path):
            sys.exit(f"bench: {path} missing: run `make build CONFIG=release` first")
    tmp = tempfile.mkdtemp(prefix="qtrace-bench-")

    def once(scenario, items, traced, pinned):
        env = {k: v for k, v in os.environ.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
        trace = os.path.join(tmp, "bench.qtrace")
        if traced:
            env["LD_PRELOAD"] = shim
            env["QTRACE_OUTPUT"] = trace
        argv = ([ "taskset", "-c", "0"] if pinned else []) + [fixtures, scenario, str(items)]
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
        if os.path.exists(trace):
            os.unlink(trace)
        return float(re.search(r"ns/item ([0-9.]+)", out).group(1))

    print(f"qtrace record benchmark: {rounds} rounds each, medians in ns per item")
    print(f"{'load':<34}{'cpus':>6}{'untraced':>12}{'traced':>12}{'ratio':>8}")
    for scenario, items in (("bench-empty", 1_000_000), ("bench-realistic", 100_000)):
        for pinned in (True, False):
            plain, traced = [], []
            for _ in range(rounds):
                plain.append(once(scenario, items, False, pinned))
                traced.append(once(scenario, items, True, pinned))
            p, t = statistics.median(plain), statistics.median(traced)
            label = f"{scenario} ({items:,} items)"
            print(f"{label:<34}{'1' if pinned else 'all':>6}{p:>12.1f}{t:>12.1f}{t / p:>8.3f}", flush=True)

if __name__ == "__main__":
    main()
