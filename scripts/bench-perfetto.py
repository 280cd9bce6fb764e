#!/usr/bin/env python3
"""Benchmark of `qtrace export --format perfetto` (issue 13's scale goals: 10M events in <= 5 s,
<= 12 bytes per event, peak memory <= 2x the trace). For each size it records the fixture's
`flow` load (4 producers feeding serial queues; ~6 trace events per item) with a release
build, then exports it and prints the export's wall time (median of --runs), the file's bytes
per trace event and the peak RSS of the export process against the trace's size. `stats` is
the same read and analysis without the export: the difference is what writing Perfetto costs.

  swift build -c release --product qtrace && swift build -c release --product qtrace-fixtures
  make shim
  python3 scripts/bench-perfetto.py [--bin .build/release] [--events 1000000,10000000] [--runs 3]
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
EVENTS_PER_ITEM = 6  # the flow fixture: enqueue, start, end and the producer's waits


def run(argv, env=None):
    """Runs argv; returns (wall seconds, CPU seconds (user + system), peak RSS in bytes, stderr)."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    stderr = process.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench-perfetto: {' '.join(argv)} failed: {stderr.strip()}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, stderr


def record(bin_dir, shim, events, out):
    trace = out / f"flow-{events}.qtrace"
    per_thread = max(1, events // (4 * EVENTS_PER_ITEM))
    env = dict(os.environ, QTRACE_SHIM=str(shim))
    _, _, _, stderr = run([str(bin_dir / "qtrace"), "record", "--no-report", "-o", str(trace), "--",
                        str(bin_dir / "qtrace-fixtures"), "flow", "4", str(per_thread)], env)
    match = re.search(r"([\d,]+) events", stderr)
    if not match:
        sys.exit(f"bench-perfetto: no event count in: {stderr}")
    return trace, int(match.group(1).replace(",", ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=str(ROOT / ".build/release"))
    parser.add_argument("--shim", help="libqtrace-shim.so (default: beside qtrace, else .build/debug)")
    parser.add_argument("--events", default="1000000,10000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", help="where the traces go (default: a temporary directory, removed)")
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.bin).resolve()
    shim = pathlib.Path(args.shim) if args.shim else bin_dir / "libqtrace-shim.so"
    if not shim.exists():
        shim = ROOT / ".build/debug/libqtrace-shim.so"
    with tempfile.TemporaryDirectory(prefix="qtrace-bench-perfetto-") as scratch:
        out = pathlib.Path(args.out or scratch)
        out.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, QTRACE_SYMBOLIZE="0")
        print(f"{'events':>11} {'trace MiB':>9} {'pftrace MiB':>11} {'B/event':>7} {'export s':>8} {'CPU s':>6} "
              f"{'stats s':>7} {'CPU s':>6} {'export RSS MiB':>14} {'RSS/trace':>9}")
        for target in [int(n) for n in args.events.split(",")]:
            trace, events = record(bin_dir, shim, target, out)
            pftrace = out / f"flow-{target}.pftrace"
            exports, export_cpu, stats, stats_cpu, rss = [], [], [], [], 0
            for _ in range(args.runs):
                seconds, cpu, peak, _ = run([str(bin_dir / "qtrace"), "export", "--format", "perfetto", str(trace),
                                             "-o", str(pftrace)], env)
                exports.append(seconds)
                export_cpu.append(cpu)
                rss = max(rss, peak)
                seconds, cpu, _, _ = run([str(bin_dir / "qtrace"), "stats", "--json", str(trace)], env)
                stats.append(seconds)
                stats_cpu.append(cpu)
            median = statistics.median
            trace_bytes, file_bytes = trace.stat().st_size, pftrace.stat().st_size
            print(f"{events:>11,} {trace_bytes / 2**20:>9.1f} {file_bytes / 2**20:>11.1f} {file_bytes / events:>7.2f} "
                  f"{median(exports):>8.2f} {median(export_cpu):>6.2f} {median(stats):>7.2f} {median(stats_cpu):>6.2f} "
                  f"{rss / 2**20:>14.0f} {rss / trace_bytes:>9.2f}",
                  flush=True)
            if not args.out:
                trace.unlink()
                pftrace.unlink()


if __name__ == "__main__":
    main()
