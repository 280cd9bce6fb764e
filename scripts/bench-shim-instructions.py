#!/usr/bin/env python3
"""Instructions per empty work item spent in the shim, counted by callgrind.

Instruction counts do not depend on what else the machine is doing, so two shim builds
(e.g. before and after a change) compare exactly where wall and CPU times are noisy. Runs the
fixture's `bench-empty` (N empty async items on one serial queue) under valgrind's callgrind,
preloaded with each shim (recording to a temporary trace), and prints the instructions per
item executed in the shim's own code (every function and inlined line from
Sources/CQTraceShim), with the ratio to the first shim. The whole program's instructions per
item are printed too, untraced and traced, but they move with thread scheduling (how often
the queue drains and wakes its worker), so only the shim's part compares exactly.

Usage: scripts/bench-shim-instructions.py BIN_DIR SHIM.so [SHIM.so ...] [--items N]
(the first shim is the baseline; BIN_DIR holds qtrace-fixtures)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def shim_instructions(out):
    """Instructions in lines of the shim's sources (exclusive counts per file:function)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out],
                          capture_output=True, text=True).stdout
    total = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+):", line)
        if m and "CQTraceShim/" in m.group(2):
            total += int(m.group(1).replace(",", ""))
    return total


def instructions(fixture, items, shim, tmp):
    env = dict(os.environ)
    out = os.path.join(tmp, "callgrind.out")
    if shim:
        env["LD_PRELOAD"] = shim
        env["QTRACE_OUTPUT"] = os.path.join(tmp, "bench.qtrace")
    result = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", fixture,
                             "bench-empty", str(items)], env=env, capture_output=True, text=True)
    match = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or not match:
        sys.exit(f"callgrind run failed ({shim or 'untraced'}): {result.stderr[-400:]}")
    return int(match.group(1)), shim_instructions(out)


def main():
    parser = argparse.ArgumentParser(description="instructions per empty item under each shim")
    parser.add_argument("bin_dir")
    parser.add_argument("shims", nargs="+")
    parser.add_argument("--items", type=int, default=200_000)
    args = parser.parse_args()
    fixture = os.path.join(args.bin_dir, "qtrace-fixtures")
    with tempfile.TemporaryDirectory(prefix="qtrace-instr-") as tmp:
        base, _ = instructions(fixture, args.items, None, tmp)
        print(f"bench-empty, {args.items:,} items, callgrind instructions per item")
        print(f"{'shim':<40} {'program':>10} {'in shim':>10} {'vs first':>9}")
        print(f"{'untraced':<40} {base / args.items:>10.1f} {'-':>10} {'-':>9}")
        first = None
        for shim in args.shims:
            total, in_shim = instructions(fixture, args.items, shim, tmp)
            per_item = in_shim / args.items
            first = first or per_item
            print(f"{os.path.basename(os.path.dirname(shim)) + '/' + os.path.basename(shim):<40} "
                  f"{total / args.items:>10.1f} {per_item:>10.1f} {per_item / first:>9.3f}")


if __name__ == "__main__":
    main()
