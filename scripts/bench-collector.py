#!/usr/bin/env python3
"""Collector throughput and peak memory on a real trace of >= 10M events.

Records two loads with the release build and times `qtrace stats --json` on each (median of
ROUNDS runs, default 3: the machines are shared and noisy), with its peak RSS:
- flow: 4 producers x 430k items, each feeding its own serial queue through a 256-item
  semaphore window (6 events per item: ~10.3M events), a pipeline's steady state;
- flood: 4 threads x 850k async items onto one serial queue (~10.2M events), the worst case
  for the collector: all 3.4M items are pending at once.
With BASELINE=DIR (a directory holding another build's `qtrace`), each round also runs that
binary on the same trace, alternating, and prints the ratio of the CPU times (user + system,
steadier than wall time on a shared machine); DIR must also hold that build's qtrace-fixtures and
libqtrace-shim.so, which then record the trace (in its format, which both collectors read).
Usage: [ROUNDS=3] [BASELINE=DIR] scripts/bench-collector.py [BIN_DIR]   (make bench builds release first)
"""
import os
import statistics
import subprocess
import sys
import tempfile

bin_dir = sys.argv[1] if len(sys.argv) > 1 else subprocess.check_output(
    ["swift", "build", "-c", "release", "--show-bin-path"], text=True).strip()
qtrace = os.path.join(bin_dir, "qtrace")
fixtures = os.path.join(bin_dir, "qtrace-fixtures")
tmp = tempfile.mkdtemp(prefix="qtrace-bench-collector-")
env = dict(os.environ, QTRACE_SHIM=os.path.join(bin_dir, "libqtrace-shim.so"))
rounds = max(1, int(os.environ.get("ROUNDS", "3")))
baseline = os.path.join(os.environ["BASELINE"], "qtrace") if os.environ.get("BASELINE") else None
if baseline:
    # Record with the baseline's own shim and fixtures: an older reader cannot read a newer
    # format's records (it would skip them and look fast), while the new reader reads every
    # older format, so both collectors then read the very same events.
    recorder_dir = os.environ["BASELINE"]
    qtrace_record = baseline
    fixtures = os.path.join(recorder_dir, "qtrace-fixtures")
    env["QTRACE_SHIM"] = os.path.join(recorder_dir, "libqtrace-shim.so")
else:
    qtrace_record = qtrace


def time_stats(binary, trace):
    """(wall s, user + system s, peak RSS KiB) of `binary stats --json trace`, in a child of its
    own so that its peak RSS is not mixed with the recording's."""
    probe = ("import resource,subprocess,sys,time;t=time.perf_counter();"
             "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL);"
             "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
             "print(time.perf_counter()-t, u.ru_utime+u.ru_stime, u.ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, binary, "stats", "--json", trace],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def measure(name, args):
    trace = os.path.join(tmp, f"{name}.qtrace")
    print(f"{name}: recording {' '.join(args)} ...", flush=True)
    subprocess.run([qtrace_record, "record", "-q", "--no-report", "-o", trace, "--", fixtures] + args,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    size = os.path.getsize(trace)
    summary = subprocess.run([qtrace, "dump", "--limit", "0", trace], capture_output=True, text=True).stdout
    events = next((int(line.split("events")[0].split()[-1].replace(",", "")) for line in summary.splitlines()
                   if line.startswith("#") and " events in " in line), 0)
    runs, base_runs = [], []
    for _ in range(rounds):
        runs.append(time_stats(qtrace, trace))
        if baseline:
            base_runs.append(time_stats(baseline, trace))
    elapsed = statistics.median(run[0] for run in runs)
    cpu = statistics.median(run[1] for run in runs)
    peak_kib = max(run[2] for run in runs)
    print(f"{name}: trace {size / 2**20:.1f} MiB, {events:,} events; qtrace stats {elapsed:.2f} s "
          f"(median of {rounds}: {', '.join(f'{run[0]:.2f}' for run in runs)}; CPU {cpu:.2f} s) = "
          f"{events / elapsed / 1e6:.1f} M events/s (read + analyse); peak RSS {peak_kib / 1024:.0f} MiB = "
          f"{peak_kib * 1024 / size:.2f} x the trace", flush=True)
    if baseline:
        base_cpu = statistics.median(run[1] for run in base_runs)
        base_peak = max(run[2] for run in base_runs)
        print(f"{name}: baseline CPU {base_cpu:.2f} s (median of {rounds}), peak RSS "
              f"{base_peak * 1024 / size:.2f} x the trace; CPU time ratio {cpu / base_cpu:.2f}", flush=True)
    os.unlink(trace)


measure("flow", ["flow", "4", "430000"])
measure("flood", ["stress", "4", "850000"])

os.rmdir(tmp)
