#!/usr/bin/env python3
"""What `qtrace record --sched` costs, measured in the same run: the fixture's bench-empty
(empty async items on one serial queue: many context switches) and bench-realistic (~10 us
items) recorded with and without --sched, alternating, several rounds. Prints medians of
the program's own ns per item and of the whole `qtrace record` wall time (perf start and
stop, perf script and the conversion included), and the --sched / plain ratios.

Usage: scripts/bench-sched.py [BIN_DIR] [--rounds N]   (needs perf and root; see docs/sched.md)
"""
import os
import re
import statistics
import subprocess
import sys
import time

from bench_support import record_setup


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = 5
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
        args = [a for a in args if a != str(rounds)]
    qtrace, fixtures, tmp, env = record_setup(args[0] if args else None, "qtrace-bench-sched-")

    def once(scenario, items, sched):
        trace = os.path.join(tmp, "bench.qtrace")
        argv = [qtrace, "record", "--no-report", "-q", "-o", trace] + (["--sched"] if sched else [])
        began = time.monotonic()
        out = subprocess.run(argv + ["--", fixtures, scenario, str(items)], env=env, capture_output=True,
                             text=True, check=True).stdout
        wall = time.monotonic() - began
        os.unlink(trace)
        return float(re.search(r"ns/item ([0-9.]+)", out).group(1)), wall

    print(f"qtrace record --sched benchmark: {rounds} rounds each, medians")
    print(f"{'load':<32}{'ns/item':>10}{'--sched':>10}{'ratio':>8}{'record s':>10}{'--sched':>10}{'ratio':>8}")
    for scenario, items in (("bench-empty", 200_000), ("bench-realistic", 20_000)):
        plain, sched = [], []
        for _ in range(rounds):
            plain.append(once(scenario, items, False))
            sched.append(once(scenario, items, True))
        p = statistics.median(x for x, _ in plain)
        s = statistics.median(x for x, _ in sched)
        pw = statistics.median(w for _, w in plain)
        sw = statistics.median(w for _, w in sched)
        label = f"{scenario} ({items:,} items)"
        print(f"{label:<32}{p:>10.1f}{s:>10.1f}{s / p:>8.3f}{pw:>10.2f}{sw:>10.2f}{sw / pw:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
