#!/usr/bin/env python3
"""Cost per work item of the LTTng backend, and CTF read throughput (docs/lttng.md).

Runs the fixture's `bench-empty` (N empty async items on one serial queue) untraced, with the
embedded shim, with the LTTng shim and no session (tracepoints compiled in, disabled), and
with the LTTng shim recorded by a session, alternating, several rounds, pinned to 1 CPU and on
all CPUs; prints medians in ns per item. Then reads the last LTTng trace (3 events per item)
with `babeltrace2 -o dummy` (decode only) and with qtrace's CTF reader (QTraceCTF, through the
release-built CTFReadThroughputTests) in both of its decoders (libbabeltrace2, purpose-built),
alternating, and prints medians in events/s.

Everything LTTng runs in a private mount namespace (unshare -m, tmpfs on /run/lttng and
/dev/shm) with a session daemon of its own, stopped by PID at the end: run as root.

Usage: scripts/bench-lttng.py [--rounds N] [--items N] [--no-read] [--read-only] [--read-rounds N] [--scratch-path DIR]
  --read-only: record one trace (no cost rounds), then measure reading only.
  Builds qtrace-fixtures (and, for the read benchmark, the tests) in release with SwiftPM's
  --scratch-path DIR (default .build-lttng), and both shims beside them with make.
"""
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def option(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


class Namespace:
    """A private mount namespace held by a `sleep`, entered with nsenter."""

    def __init__(self, scratch):
        ready = os.path.join(scratch, "ns-ready")
        script = ("mkdir -p /run/lttng && mount -t tmpfs qtrace-bench /run/lttng && "
                  f"mount -t tmpfs qtrace-bench /dev/shm && touch {ready} && exec sleep 36000")
        self.holder = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                                       stdin=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(ready) and time.time() < deadline and self.holder.poll() is None:
            time.sleep(0.01)
        if not os.path.exists(ready):
            self.close()
            sys.exit("bench: cannot make a private mount namespace (run as root)")
        self.env = dict(os.environ, LTTNG_HOME=scratch)

    def run(self, argv, env=None, check=True):
        result = subprocess.run(["nsenter", "-t", str(self.holder.pid), "-m", "--"] + argv, env=env or self.env,
                                capture_output=True, text=True)
        if check and result.returncode != 0:
            sys.exit(f"bench: {' '.join(argv)} failed ({result.returncode}): {result.stdout[-500:]}{result.stderr[-2000:]}")
        return result

    def close(self):
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait()


def start_daemon(ns, scratch):
    pid_file = os.path.join(scratch, "sessiond.pid")
    ns.run(["lttng-sessiond", "--daemonize", "--no-kernel", f"--pidfile={pid_file}"])
    with open(pid_file) as f:
        return int(f.read().strip())


def stop_daemon(pid):
    os.kill(pid, signal.SIGTERM)
    for _ in range(500):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except FileNotFoundError:
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)


def ns_per_item(output):
    return float(re.search(r"ns/item ([0-9.]+)", output).group(1))


def main():
    rounds = option("--rounds", 5)
    items = option("--items", 1_000_000)
    scratch_path = option("--scratch-path", ".build-lttng")
    swift = ["swift", "build", "-c", "release", "--scratch-path", scratch_path]
    subprocess.run(swift + ["--product", "qtrace-fixtures"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    bin_dir = subprocess.check_output(swift + ["--show-bin-path"], text=True, cwd=REPO).strip()
    fixtures = os.path.join(bin_dir, "qtrace-fixtures")
    shim = os.path.join(bin_dir, "libqtrace-shim.so")
    lttng_shim = os.path.join(bin_dir, "libqtrace-shim-lttng.so")
    subprocess.run(["make", "--no-print-directory", "-C", REPO, f"BIN={bin_dir}", "shim", "shim-lttng"],
                   check=True, stdout=subprocess.DEVNULL)
    scratch = tempfile.mkdtemp(prefix="qtrace-bench-lttng-")
    ns = Namespace(scratch)
    daemon = None
    try:
        daemon = start_daemon(ns, scratch)
        trace = measure_costs(ns, scratch, fixtures, shim, lttng_shim, 1 if "--read-only" in sys.argv else rounds, items,
                              variants_only=("lttng, recording",) if "--read-only" in sys.argv else None)
        stop_daemon(daemon)
        daemon = None
        if "--no-read" not in sys.argv:
            measure_reading(trace, items, scratch_path, option("--read-rounds", 5))
    finally:
        if daemon:
            stop_daemon(daemon)
        ns.close()
        shutil.rmtree(scratch, ignore_errors=True)


def measure_costs(ns, scratch, fixtures, shim, lttng_shim, rounds, items, variants_only=None):
    base = {k: v for k, v in ns.env.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
    trace = os.path.join(scratch, "trace")

    def once(variant, pinned):
        # The preload goes in through `env` inside the namespace: nsenter itself must not load
        # liblttng-ust, whose threads make setns() fail (EINVAL in a multithreaded process).
        preload = []
        if variant == "embedded":
            preload = ["env", f"LD_PRELOAD={shim}", f"QTRACE_OUTPUT={os.path.join(scratch, 'bench.qtrace')}"]
        elif variant in ("lttng, no session", "lttng, recording"):
            preload = ["env", f"LD_PRELOAD={lttng_shim}"]
        argv = preload + (["taskset", "-c", "0"] if pinned else []) + [fixtures, "bench-empty", str(items)]
        env = dict(base)
        recording = variant == "lttng, recording"
        if recording:
            shutil.rmtree(trace, ignore_errors=True)
            for command in (["create", "bench", f"--output={trace}"],
                            ["enable-channel", "-u", "-s", "bench", "--subbuf-size=4M", "--num-subbuf=8", "qtrace"],
                            ["enable-event", "-u", "-s", "bench", "-c", "qtrace", "qtrace:*"],
                            ["add-context", "-u", "-s", "bench", "-c", "qtrace", "-t", "vtid"],
                            ["start", "bench"]):
                ns.run(["lttng"] + command)
        result = ns.run(argv, env=env)
        if recording:
            ns.run(["lttng", "stop", "bench"])
            ns.run(["lttng", "destroy", "bench"])
        if os.path.exists(os.path.join(scratch, "bench.qtrace")):
            os.unlink(os.path.join(scratch, "bench.qtrace"))
        return ns_per_item(result.stdout)

    variants = variants_only or ("untraced", "embedded", "lttng, no session", "lttng, recording")
    print(f"qtrace LTTng benchmark: bench-empty, {items:,} items, {rounds} rounds, medians in ns per item")
    print(f"{'cpus':<6}" + "".join(f"{v:>20}" for v in variants))
    for pinned in ((False,) if variants_only else (True, False)):
        samples = {v: [] for v in variants}
        for _ in range(rounds):
            for v in variants:
                samples[v].append(once(v, pinned))
        medians = [statistics.median(samples[v]) for v in variants]
        print(f"{'1' if pinned else 'all':<6}" + "".join(f"{m:>20.1f}" for m in medians), flush=True)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(trace) for f in fs)
    print(f"LTTng trace of the last round: {size / 1e6:.1f} MB, {size / (3 * items):.1f} bytes per event")
    return trace


def measure_reading(trace, items, scratch_path, rounds=5):
    """Alternates babeltrace2 -o dummy and qtrace's two decoders (the machine is noisy) and
    prints medians."""
    events = 3 * items
    test = ["swift", "test", "-c", "release", "--scratch-path", scratch_path, "-Xswiftc", "-enable-testing",
            "--filter", "CTFReadThroughputTests"]
    subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch_path, "--build-tests",
                    "-Xswiftc", "-enable-testing"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    readers = {"babeltrace2 -o dummy (decode only)": None,
               "CTFTraceReader, libbabeltrace2 path": "babeltrace",
               "CTFTraceReader, purpose-built decoder": "purpose-built"}
    samples = {name: [] for name in readers}
    for _ in range(rounds):
        for name, decoder in readers.items():
            if decoder is None:
                start = time.time()
                subprocess.run(["babeltrace2", "-o", "dummy", trace], check=True)
                samples[name].append(events / (time.time() - start) / 1e6)
                continue
            env = dict(os.environ, QTRACE_CTF_BENCH_TRACE=trace, QTRACE_CTF_DECODER=decoder)
            out = subprocess.run(test + ["--skip-build"], cwd=REPO, env=env, capture_output=True, text=True)
            match = re.search(r"ctf-read: (\d+) events in [0-9.]+ s: ([0-9.]+) M events/s", out.stdout)
            if not match or f"decoder {decoder})" not in out.stdout:
                sys.exit("bench: the CTF read test failed:\n" + out.stdout[-3000:] + out.stderr[-3000:])
            events = int(match.group(1))
            samples[name].append(float(match.group(2)))
    baseline = statistics.median(samples["babeltrace2 -o dummy (decode only)"])
    print(f"CTF read, {events:,} events, {rounds} alternating rounds, medians (ratio to babeltrace2 -o dummy):")
    for name in readers:
        median = statistics.median(samples[name])
        print(f"  {name:<40} {median:6.2f} M events/s  ({median / baseline:.2f}x)")


if __name__ == "__main__":
    main()
