#!/usr/bin/env python3
"""What `qtrace record --cpu` costs, measured in one run: the fixture's bench-realistic
(~10 us items on one serial queue, the recording benchmark's realistic load) recorded without
samples (0 Hz) and with --cpu=99 and --cpu=999 (and --cpu=999 --cpu-stacks fp), alternating,
several rounds. Prints medians of the program's own wall ns per item and of its CPU time
(user + system, measured around it by a small wrapper (WRAPPER below), so perf's and qtrace's own work is not
counted; the kernel charges a sample's interrupt and stack copy to the sampled program) per
item, their ratios to 0 Hz, and of the whole `qtrace record` wall time (perf start and stop,
perf script and the conversion included). On a loaded machine the wall time of the ~10 us
busy-wait items varies with preemption: compare the CPU ratios.

Usage: scripts/bench-cpu.py [BIN_DIR] [--rounds N] [--items N]   (needs perf and root; docs/cpu.md)
"""
import os
import re
import statistics
import subprocess
import sys
import time

from bench_support import record_setup

CONFIGS = [("0 Hz (traced, no --cpu)", []), ("99 Hz", ["--cpu=99"]), ("999 Hz", ["--cpu=999"]),
           ("999 Hz, --cpu-stacks fp", ["--cpu=999", "--cpu-stacks", "fp"])]


# Runs the program and prints its CPU time (wait4's rusage, microsecond resolution) on stderr.
WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(f"bench-cpu-time {usage.ru_utime:.6f} {usage.ru_stime:.6f}", file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def option(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    rounds, items = option("--rounds", 5), option("--items", 50_000)
    values = {str(rounds), str(items)}
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a not in values]
    qtrace, fixtures, tmp, env = record_setup(args[0] if args else None, "qtrace-bench-cpu-")

    def once(extra):
        trace = os.path.join(tmp, "bench.qtrace")
        argv = [qtrace, "record", "--no-report", "-q", "-o", trace] + extra
        began = time.monotonic()
        timed = [sys.executable, "-c", WRAPPER]
        run = subprocess.run(argv + ["--"] + timed + [fixtures, "bench-realistic", str(items)], env=env,
                             capture_output=True, text=True, check=True)
        wall = time.monotonic() - began
        for name in os.listdir(tmp):  # the program is the wrapper's child: its trace is bench.PID.qtrace
            os.unlink(os.path.join(tmp, name))
        user, system = re.search(r"bench-cpu-time ([0-9.]+) ([0-9.]+)", run.stderr).groups()
        cpu_ns = (float(user) + float(system)) * 1e9 / items
        return float(re.search(r"ns/item ([0-9.]+)", run.stdout).group(1)), cpu_ns, wall

    results = {label: [] for label, _ in CONFIGS}
    for _ in range(rounds):
        for label, extra in CONFIGS:
            results[label].append(once(extra))
    print(f"qtrace record --cpu benchmark: bench-realistic, {items:,} items of ~10 us, {rounds} rounds, medians")
    print(f"{'sampling':<28}{'wall ns/item':>13}{'ratio':>8}{'CPU ns/item':>13}{'ratio':>8}{'record s':>10}")
    base = [statistics.median(r[k] for r in results[CONFIGS[0][0]]) for k in (0, 1)]
    for label, _ in CONFIGS:
        ns, cpu, wall = (statistics.median(r[k] for r in results[label]) for k in (0, 1, 2))
        print(f"{label:<28}{ns:>13.1f}{ns / base[0]:>8.3f}{cpu:>13.1f}{cpu / base[1]:>8.3f}{wall:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
