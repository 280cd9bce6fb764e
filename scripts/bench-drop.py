#!/usr/bin/env python3
"""Cost per work item once the trace is full: every event is counted as dropped.

Runs the fixture's `bench-empty` (N empty async items on one serial queue, pinned to one CPU)
untraced, and traced by each shim with a trace that cannot hold the run: capped at its
smallest size (QTRACE_MAX_BYTES=1: the header and one chunk), and on a 2 MiB tmpfs that
this script mounts (root needed; unmounted at the end) and fills but for 256 KiB. Prints
medians of the wall time (as the program prints it) and of the CPU time per item, and the
dropped count of the last traced run (events dropped / items). The first shim is the
baseline (e.g. an older build: --shim OLD.so).

Usage: scripts/bench-drop.py BIN_DIR [--shim PATH]... [--rounds N] [--items N]
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile


def parse_args():
    parser = argparse.ArgumentParser(description="qtrace: cost per item when every event is dropped")
    parser.add_argument("bin_dir", help="bin dir holding qtrace-fixtures and libqtrace-shim.so")
    parser.add_argument("--shim", action="append", default=[], help="another shim to compare (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--items", type=int, default=1_000_000)
    return parser.parse_args()


def run(fixtures, items, shim, trace, extra_env):
    """(wall ns per item, CPU ns per item, dropped events or None)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
    env.update(extra_env)
    if shim:
        env["LD_PRELOAD"] = shim
        env["QTRACE_OUTPUT"] = trace
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["taskset", "-c", "0", fixtures, "bench-empty", str(items)], env=env,
                         capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    dropped = None
    if shim and os.path.exists(trace):
        with open(trace, "rb") as f:
            header = f.read(96)
        if len(header) == 96 and header[:6] == b"QTRACE":
            dropped = struct.unpack_from("<Q", header, 88)[0]
        os.unlink(trace)
    return float(re.search(r"ns/item ([0-9.]+)", out).group(1)), cpu * 1e9 / items, dropped


def main():
    args = parse_args()
    fixtures = os.path.join(args.bin_dir, "qtrace-fixtures")
    shims = [os.path.join(args.bin_dir, "libqtrace-shim.so")] + args.shim
    tmp = tempfile.mkdtemp(prefix="qtrace-bench-drop-")
    disk = os.path.join(tmp, "disk")
    os.mkdir(disk)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "qtrace-bench", disk], check=True)
    try:
        # All but 256 KiB taken: the trace fills the rest within the first few thousand items.
        with open(os.path.join(disk, "filler"), "wb") as f:
            f.write(b"\xaa" * (2 * 1024 * 1024 - 256 * 1024))
        cases = [("cap (QTRACE_MAX_BYTES=1)", os.path.join(tmp, "capped.qtrace"), {"QTRACE_MAX_BYTES": "1"}),
                 ("disk full (2 MiB tmpfs)", os.path.join(disk, "full.qtrace"), {})]
        print(f"bench-empty, {args.items:,} items, 1 CPU, {args.rounds} rounds, medians in ns per item")
        print(f"{'case':<28}{'shim':<40}{'wall':>9}{'cpu':>9}{'dropped/item':>14}")
        plain = [run(fixtures, args.items, None, None, {}) for _ in range(args.rounds)]
        print(f"{'untraced':<28}{'-':<40}{statistics.median(p[0] for p in plain):>9.1f}"
              f"{statistics.median(p[1] for p in plain):>9.1f}{'-':>14}")
        for label, trace, env in cases:
            for shim in shims:
                runs = [run(fixtures, args.items, shim, trace, env) for _ in range(args.rounds)]
                dropped = runs[-1][2]
                per_item = f"{dropped / args.items:.2f}" if dropped is not None else "no trace"
                name = os.path.relpath(shim, os.path.dirname(os.path.dirname(shim)))
                print(f"{label:<28}{name[-39:]:<40}{statistics.median(r[0] for r in runs):>9.1f}"
                      f"{statistics.median(r[1] for r in runs):>9.1f}{per_item:>14}", flush=True)
    finally:
        subprocess.run(["umount", disk])
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
