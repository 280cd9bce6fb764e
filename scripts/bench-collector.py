#!/usr/bin/env python3
"""Collector throughput and peak memory on a real trace of >= 10M events.

Records the fixture `stress 4 850000` (4 threads x 850k async items = 3.4M items, ~10.2M
events) with the release build, then times `qtrace stats --json` on it and reads its peak RSS.
Usage: scripts/bench-collector.py [BIN_DIR]   (make bench builds release first)
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

bin_dir = sys.argv[1] if len(sys.argv) > 1 else subprocess.check_output(
    ["swift", "build", "-c", "release", "--show-bin-path"], text=True).strip()
qtrace = os.path.join(bin_dir, "qtrace")
fixtures = os.path.join(bin_dir, "qtrace-fixtures")
tmp = tempfile.mkdtemp(prefix="qtrace-bench-collector-")
trace = os.path.join(tmp, "stress.qtrace")
env = dict(os.environ, QTRACE_SHIM=os.path.join(bin_dir, "libqtrace-shim.so"))
print("recording 4 x 850,000 items ...", flush=True)
subprocess.run([qtrace, "record", "-q", "--no-report", "-o", trace, "--", fixtures, "stress", "4", "850000"],
               env=env, check=True, stdout=subprocess.DEVNULL)
size = os.path.getsize(trace)
summary = subprocess.run([qtrace, "dump", "--limit", "0", trace], capture_output=True, text=True).stdout
events = next((int(line.split("events")[0].split()[-1].replace(",", "")) for line in summary.splitlines()
               if "events" in line and line.startswith("#")), None)
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
start = time.perf_counter()
subprocess.run([qtrace, "stats", "--json", trace], check=True, stdout=subprocess.DEVNULL)
elapsed = time.perf_counter() - start
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"trace: {size / 2**20:.1f} MiB, {events if events else '?'} events")
if events:
    print(f"qtrace stats: {elapsed:.2f} s wall, {events / elapsed / 1e6:.1f} M events/s (read + analyse)")
print(f"peak RSS: {peak_kib / 1024:.0f} MiB = {peak_kib * 1024 / size:.2f} x the trace size"
      + ("" if peak_kib > before else " (upper bound: an earlier child was larger)"))
os.unlink(trace)
