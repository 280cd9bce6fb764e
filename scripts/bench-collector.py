#!/usr/bin/env python3
"""Collector throughput and peak memory on a real trace of >= 10M events.

Records two loads with the release build and times `qtrace stats --json` on each (median of
ROUNDS runs, default 3: the machines are shared and noisy), with its peak RSS:
- flow: 4 producers x 430k items, each feeding its own serial queue through a 256-item
  semaphore window (6 events per item: ~10.3M events), a pipeline's steady state;
- flood: 4 threads x 850k async items onto one serial queue (~10.2M events), the worst case
  for the collector: all 3.4M items are pending at once;
- fanout: scripts/fanout.c (built here with the toolchain's clang), 1M dispatch_async_f items
  round robin onto 400 serial queues (~3M events): item-heavy, many queues (goal 8M events/s).
Each trace also gets one run per round with QTRACE_PHASES=1, and its per-phase table (decode,
model, statistics, code and task resolution, findings, encoding: scripts/bench-phases.py's) is
printed with each phase's share of the run's CPU time.
With BASELINE=DIR (a directory holding another build's `qtrace`), each round also runs that
binary on the same trace, alternating, and prints the ratio of the CPU times (user + system,
steadier than wall time on a shared machine); DIR must also hold that build's qtrace-fixtures and
libqtrace-shim.so, which then record the trace (in its format, which both collectors read).
Each trace is also read on one thread (QTRACE_DECODE_THREAD=0), whose CPU time is the
collector's cost on one core; by default `stats` reads a big trace on two threads (the decoding
a step ahead of the model, the statistics' item pass in two halves): its wall time is what a
user waits, its CPU time a little more than one thread's.
With YARDSTICK=1 (needs lttng-tools and babeltrace2; run as root), the flow load is also
recorded through LTTng (`qtrace record --backend lttng`) and `babeltrace2 -o dummy` (decode
only) reads that trace, alternating with qtrace, so that the machine's speed cancels out: the
issue's goal (10M events/s where babeltrace2 decodes ~4M events/s) is 2.5x babeltrace2's rate.
Usage: [ROUNDS=3] [BASELINE=DIR] [YARDSTICK=1] scripts/bench-collector.py [BIN_DIR]
  (make bench builds release first)
"""
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

_spec = importlib.util.spec_from_file_location("bench_phases", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                            "bench-phases.py"))
bench_phases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_phases)

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


def time_command(argv, extra_env=None):
    """(wall s, user + system s, peak RSS KiB) of a command, in a child of its own so that its
    peak RSS is not mixed with the recording's."""
    probe = ("import resource,subprocess,sys,time;t=time.perf_counter();"
             "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
             "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
             "print(time.perf_counter()-t, u.ru_utime+u.ru_stime, u.ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe] + argv, capture_output=True, text=True, check=True,
                         env=dict(os.environ, **(extra_env or {}))).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


# One thread (QTRACE_DECODE_THREAD=0): the collector's cost on one core, the figure comparable
# to babeltrace2's (single-threaded) and to the runs before the decoding thread.
ONE_THREAD = {"QTRACE_DECODE_THREAD": "0"}


def time_stats(binary, trace, extra_env=None):
    return time_command([binary, "stats", "--json", trace], extra_env)


def event_count(trace):
    """Events of a qtrace trace, from the header line of `qtrace dump`."""
    summary = subprocess.run([qtrace, "dump", "--limit", "0", trace], capture_output=True, text=True).stdout
    return next((int(line.split("events")[0].split()[-1].replace(",", "")) for line in summary.splitlines()
                 if line.startswith("#") and " events in " in line), 0)


def yardstick(args, embedded_trace, embedded_events):
    """babeltrace2's decode rate on the same workload recorded through LTTng, alternating with
    qtrace on the embedded trace: both in CPU time, so that the machine's speed cancels out."""
    base = os.path.join(tmp, "yardstick")
    print(f"yardstick: recording {' '.join(args)} through LTTng ...", flush=True)
    own_build = dict(os.environ, QTRACE_SHIM=os.path.join(bin_dir, "libqtrace-shim.so"))
    subprocess.run([qtrace, "record", "--backend", "lttng", "-q", "--no-report", "-o", base, "--",
                    os.path.join(bin_dir, "qtrace-fixtures")] + args, env=own_build, check=True, stdout=subprocess.DEVNULL)
    ctf_dir = base + ".lttng"
    ctf_events = event_count(base)  # the record's conversion holds exactly the session's qtrace events
    ours, theirs, ours_wall, theirs_wall = [], [], [], []
    for _ in range(rounds):
        wall, cpu, _ = time_command(["babeltrace2", "-o", "dummy", ctf_dir])
        theirs.append(cpu)
        theirs_wall.append(wall)
        ours.append(time_stats(qtrace, embedded_trace, ONE_THREAD)[1])
        ours_wall.append(time_stats(qtrace, embedded_trace)[0])
    bt_rate = ctf_events / statistics.median(theirs)
    our_rate = embedded_events / statistics.median(ours)
    print(f"yardstick: babeltrace2 -o dummy: {ctf_events:,} events in {statistics.median(theirs):.2f} s CPU "
          f"(median of {rounds}) = {bt_rate / 1e6:.2f} M events/s; qtrace stats --json (embedded trace) on one "
          f"thread: {statistics.median(ours):.2f} s CPU = {our_rate / 1e6:.2f} M events/s = {our_rate / bt_rate:.2f}x "
          f"babeltrace2 (the goal, 10 M/s where babeltrace2 does ~4 M/s, is 2.5x)", flush=True)
    bt_wall_rate = ctf_events / statistics.median(theirs_wall)
    our_wall_rate = embedded_events / statistics.median(ours_wall)
    print(f"yardstick, wall time (qtrace on two threads where it may): babeltrace2 {statistics.median(theirs_wall):.2f} s, "
          f"qtrace {statistics.median(ours_wall):.2f} s = {our_wall_rate / bt_wall_rate:.2f}x babeltrace2's rate", flush=True)
    subprocess.run(["rm", "-rf", base, ctf_dir], check=True)


def build_fanout():
    """scripts/fanout.c built with the toolchain's clang (the fixture binary has no such load)."""
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    toolchain = os.path.dirname(os.path.dirname(os.path.realpath(swift)))
    lib = os.path.join(toolchain, "lib", "swift", "linux")
    out = os.path.join(tmp, "fanout")
    subprocess.run([os.path.join(toolchain, "bin", "clang"), "-O2", "-I" + os.path.join(toolchain, "lib", "swift"),
                    "-o", out, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fanout.c"),
                    "-L" + lib, "-ldispatch", "-lBlocksRuntime", "-Wl,-rpath," + lib], check=True)
    return out


def measure(name, args, program=None):
    trace = os.path.join(tmp, f"{name}.qtrace")
    print(f"{name}: recording {' '.join(args)} ...", flush=True)
    subprocess.run([qtrace_record, "record", "-q", "--no-report", "-o", trace, "--", program or fixtures] + args,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    size = os.path.getsize(trace)
    events = event_count(trace)
    runs, one_thread_runs, base_runs, phase_rounds = [], [], [], []
    for _ in range(rounds):
        runs.append(time_stats(qtrace, trace))
        one_thread_runs.append(time_stats(qtrace, trace, ONE_THREAD))
        if baseline:
            base_runs.append(time_stats(baseline, trace))
        phase_rounds.append(bench_phases.run(qtrace, trace, phases=True)[1])
    elapsed = statistics.median(run[0] for run in runs)
    cpu = statistics.median(run[1] for run in runs)
    peak_kib = max(run[2] for run in runs)
    one_cpu = statistics.median(run[1] for run in one_thread_runs)
    print(f"{name}: trace {size / 2**20:.1f} MiB, {events:,} events; qtrace stats {elapsed:.2f} s "
          f"(median of {rounds}: {', '.join(f'{run[0]:.2f}' for run in runs)}; CPU {cpu:.2f} s) = "
          f"{events / elapsed / 1e6:.1f} M events/s (read + analyse, wall time, two threads where two CPUs may run; "
          f"load {open('/proc/loadavg').read().split()[0]}); on one thread (QTRACE_DECODE_THREAD=0) {one_cpu:.2f} s CPU = "
          f"{events / one_cpu / 1e6:.1f} M/s of CPU time; peak RSS {peak_kib / 1024:.0f} MiB = "
          f"{peak_kib * 1024 / size:.2f} x the trace", flush=True)
    if baseline:
        base_cpu = statistics.median(run[1] for run in base_runs)
        base_peak = max(run[2] for run in base_runs)
        print(f"{name}: baseline CPU {base_cpu:.2f} s (median of {rounds}), peak RSS "
              f"{base_peak * 1024 / size:.2f} x the trace; CPU time ratio {cpu / base_cpu:.2f}", flush=True)
    bench_phases.report(name, [run[1] for run in runs], phase_rounds, [run[1] for run in base_runs])
    if os.environ.get("YARDSTICK") == "1" and name == "flow":
        yardstick(args, trace, events)
    os.unlink(trace)


measure("flow", ["flow", "4", "430000"])
measure("flood", ["stress", "4", "850000"])
measure("fanout", ["400", "1000000"], program=build_fanout())
os.unlink(os.path.join(tmp, "fanout"))

os.rmdir(tmp)
