#!/usr/bin/env python3
"""Cost per work item with and without the qtrace shim, measured in the same run.

Runs the fixture's `bench-empty` (1M empty async items on one serial queue) and
`bench-realistic` (items of ~10 us) untraced and traced, alternating, several rounds, on
1 pinned CPU and on all CPUs, and prints medians and the traced/untraced ratio of two
measures: the wall time per item that the program prints, and the CPU time (user + system,
all threads, from getrusage) per item. On a machine shared with other work the wall time
mostly measures how long the run waited for a CPU; the CPU time does not.

`--shim PATH` (repeatable) adds another shim build to every round, e.g. the one of an
older commit, so that before and after are measured in the same conditions.

`--breakdown` measures where the cost of an empty item goes instead: bench-empty untraced,
with the shim loaded but recording off (QTRACE_DISABLE=1: interposition only), and with shim
builds compiled here from Sources/CQTraceShim without the item records
(-DQT_BENCH_NO_ITEM_RECORDS: re-submission and trampoline only), without clock reads
(-DQT_BENCH_NO_CLOCK: records with a 0 timestamp), and complete.

`--armed` (or `--modes`) measures the recording modes in one run, for both loads on 1 pinned
CPU: untraced; armed but off (`qtrace record --off`, QTRACE_ARMED=1: the shim interposes, its
gate reads the control file's word, nothing is recorded); recording into a 4 MiB flight-recorder
ring (`qtrace record --ring 4M`: chunks are reused, so the ring is overwritten many times over);
and normal recording.

`--starfish` runs libdispatch's starfish pattern instead (scripts/bench-starfish.c, built here
with the toolchain's clang: 1000 serial queues targeting one concurrent queue, each pinging
all the others, 2,001,000 items with up to ~1M pending), once with `dispatch_async_f` and once
with blocks, untraced and traced alternating on all CPUs, and prints the medians of the
child's CPU time (user + system, os.wait4) per item, the traced/untraced ratio (of the medians,
and the median and range of each round's own ratio), the user and system time tracing adds,
the load average, and the traced cost of a function item against a block item. Only the shim
is needed (BIN_DIR's, or `--shim` ones, named by their directory); no fixture.

`--items f` (or `block`) runs one kind of item only; with `--shim`, each shim's CPU time is also
compared with the first `--shim`'s (its slot-less run's with `--slotless`) in the same round:
the median and middle half of those ratios, steadier on a loaded machine than the medians.

Usage: scripts/bench-record.py [BIN_DIR] [--rounds N] [--shim PATH]... [--breakdown | --armed | --starfish [--slotless] [--items f|block|both]]
(make bench builds release first)
"""
import argparse
import glob
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

LOADS = (("bench-empty", 1_000_000), ("bench-realistic", 100_000))


def parse_args():
    parser = argparse.ArgumentParser(description="qtrace recording cost per work item")
    parser.add_argument("bin_dir", nargs="?", help="release bin dir (default: swift build --show-bin-path)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shim", action="append", default=[], help="another shim to compare (repeatable)")
    parser.add_argument("--breakdown", action="store_true", help="where the cost of an empty item goes")
    parser.add_argument("--armed", "--modes", action="store_true",
                        help="armed but off and a 4 MiB ring next to untraced and recording")
    parser.add_argument("--starfish", action="store_true",
                        help="libdispatch's starfish pattern with function and block items")
    parser.add_argument("--queues", type=int, default=1000, help="starfish: number of queues")
    parser.add_argument("--slotless", action="store_true",
                        help="starfish: each shim both ways, QTRACE_SLOTLESS=0 (context slots) and =1 "
                             "(function items without a slot); else each shim's default")
    parser.add_argument("--items", choices=("f", "block", "both"), default="both",
                        help="starfish: function items, blocks or both (one kind: more rounds in the same time)")
    return parser.parse_args()


def shim_name(path):
    """A shim's name in the tables: its directory's when the file has the usual name."""
    name = os.path.basename(path)
    return os.path.basename(os.path.dirname(os.path.abspath(path))) if name == "libqtrace-shim.so" else name


def build_variant(tmp, define):
    """The preloadable shim compiled as the Makefile does, plus one benchmark-only define."""
    sources = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "CQTraceShim")
    out = os.path.join(tmp, f"libqtrace-shim{define}.so")
    # The recorder (recorder*.c) and the interposer (every shim_*.c and shim_*.S), as the Makefile lists them.
    files = sorted(glob.glob(os.path.join(sources, "recorder*.c"))) + sorted(glob.glob(os.path.join(sources, "shim_*.c"))) \
        + sorted(glob.glob(os.path.join(sources, "shim_*.S")))
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer",
                    "-DQTRACE_PRELOAD=1", define, "-I" + os.path.join(sources, "include"), "-o", out]
                   + files + ["-ldl", "-lpthread"],
                   check=True)
    return out


def main():
    args = parse_args()
    bin_dir = args.bin_dir or subprocess.check_output(
        ["swift", "build", "-c", "release", "--show-bin-path"], text=True).strip()
    fixtures = os.path.join(bin_dir, "qtrace-fixtures")
    shims = [("traced", os.path.join(bin_dir, "libqtrace-shim.so"))]
    shims += [(f"traced ({shim_name(path)})", path) for path in args.shim]
    if args.starfish:
        shim_env = {}
        if args.slotless:
            slotless = [("traced (slotless)" if label == "traced" else label[:-1] + ", slotless)", path)
                        for label, path in shims]
            # Both ways explicitly, whatever each shim's default (slots before the fifth pass).
            shim_env = {label: {"QTRACE_SLOTLESS": "0"} for label, _ in shims}
            shim_env.update({label: {"QTRACE_SLOTLESS": "1"} for label, _ in slotless})
            shims += slotless
        modes = ("f", "block") if args.items == "both" else (args.items,)
        return starfish(args.rounds, args.queues, shims, shim_env, modes)
    for path in [fixtures] + [path for _, path in shims]:
        if not os.path.exists(path):
            sys.exit(f"bench: {path} missing: run `make build CONFIG=release` first")
    tmp = tempfile.mkdtemp(prefix="qtrace-bench-")

    def once(scenario, items, shim, pinned, extra_env=None):
        """(wall ns per item as printed by the program, CPU ns per item)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
        env.update(extra_env or {})
        trace = os.path.join(tmp, "bench.qtrace")
        if shim:
            env["LD_PRELOAD"] = shim
            env["QTRACE_OUTPUT"] = trace
        argv = (["taskset", "-c", "0"] if pinned else []) + [fixtures, scenario, str(items)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if os.path.exists(trace):
            os.unlink(trace)
        return float(re.search(r"ns/item ([0-9.]+)", out).group(1)), cpu_s * 1e9 / items

    try:
        if args.breakdown:
            breakdown(args.rounds, tmp, once, shims[0][1])
        elif args.armed:
            armed(args.rounds, tmp, once, shims[0][1])
        else:
            compare(args.rounds, once, shims)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(rounds, once, shims):
    """Untraced against each shim, both loads, pinned and on all CPUs."""
    print(f"qtrace record benchmark: {rounds} rounds each, medians in ns per item")
    print(f"{'':<50}{'----------- wall -----------':>32}{'----------- cpu ------------':>32}")
    print(f"{'load':<34}{'cpus':>5}{'shim':>11}" + f"{'untraced':>12}{'traced':>12}{'ratio':>8}" * 2)
    for scenario, items in LOADS:
        for pinned in (True, False):
            plain, traced = [], {label: [] for label, _ in shims}
            for _ in range(rounds):
                plain.append(once(scenario, items, None, pinned))
                for label, path in shims:
                    traced[label].append(once(scenario, items, path, pinned))
            for label, _ in shims:
                row = f"{scenario + f' ({items:,} items)':<34}{'1' if pinned else 'all':>5}"
                row += f"{'this' if label == 'traced' else label[8:-1][:10]:>11}"
                for measure in (0, 1):
                    p = statistics.median(r[measure] for r in plain)
                    t = statistics.median(r[measure] for r in traced[label])
                    row += f"{p:>12.1f}{t:>12.1f}{t / p:>8.3f}"
                print(row, flush=True)


def breakdown(rounds, tmp, once, shim):
    """bench-empty under shim builds that leave out one part of the recording at a time."""
    variants = [
        ("untraced", None, {}),
        ("shim loaded, recording off", shim, {"QTRACE_DISABLE": "1"}),
        ("no item records", build_variant(tmp, "-DQT_BENCH_NO_ITEM_RECORDS"), {}),
        ("records without clock reads", build_variant(tmp, "-DQT_BENCH_NO_CLOCK"), {}),
        ("complete", shim, {}),
    ]
    items = LOADS[0][1]
    print(f"where an empty item's cost goes: bench-empty, {rounds} rounds, medians in ns per item")
    print(f"{'variant':<30}{'cpus':>5}{'wall':>10}{'cpu':>10}{'cpu - untraced':>16}")
    for pinned in (True, False):
        results = {label: [] for label, _, _ in variants}
        for _ in range(rounds):
            for label, path, env in variants:
                results[label].append(once(LOADS[0][0], items, path, pinned, env))
        base = statistics.median(r[1] for r in results["untraced"])
        for label, _, _ in variants:
            wall = statistics.median(r[0] for r in results[label])
            cpu = statistics.median(r[1] for r in results[label])
            print(f"{label:<30}{'1' if pinned else 'all':>5}{wall:>10.1f}{cpu:>10.1f}{cpu - base:>+16.1f}", flush=True)


def armed(rounds, tmp, once, shim):
    """Both loads untraced, armed but off, and recording, alternating, on 1 pinned CPU."""
    control = os.path.join(tmp, "bench.ctl")
    with open(control, "wb") as f:
        f.write(bytes(4096))  # word 0 = 0: off
    variants = [("untraced", None, {}), ("armed, off", shim, {"QTRACE_ARMED": "1", "QTRACE_CONTROL": control}),
                ("ring 4 MiB", shim, {"QTRACE_RING_BYTES": str(4 << 20)}), ("recording", shim, {})]
    print(f"recording modes: {rounds} rounds, 1 pinned CPU, medians of CPU ns per item (ratio to untraced)")
    print(f"{'load':<34}" + "".join(f"{label:>22}" for label, _, _ in variants))
    for scenario, items in LOADS:
        results = {label: [] for label, _, _ in variants}
        for _ in range(rounds):
            for label, path, env in variants:
                results[label].append(once(scenario, items, path, True, env)[1])
        base = statistics.median(results["untraced"])
        row = f"{scenario + f' ({items:,} items)':<34}"
        for label, _, _ in variants:
            cpu = statistics.median(results[label])
            row += f"{cpu:>13.1f} ({cpu / base:5.3f})"
        print(row, flush=True)
    os.unlink(control)


def build_starfish(tmp):
    """scripts/bench-starfish.c built with the toolchain's clang (blocks need -fblocks)."""
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    toolchain = os.path.dirname(os.path.dirname(os.path.realpath(swift)))
    clang = os.path.join(toolchain, "bin", "clang")
    lib = os.path.join(toolchain, "lib", "swift", "linux")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-starfish.c")
    out = os.path.join(tmp, "bench-starfish")
    subprocess.run([clang, "-O2", "-fblocks", "-I" + os.path.join(toolchain, "lib", "swift"), "-o", out, source,
                    "-L" + lib, "-ldispatch", "-lBlocksRuntime", "-Wl,-rpath," + lib], check=True)
    return out


def child_cpu(argv, env):
    """(user, system) CPU seconds of the child and all its threads, and its standard output."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    if status != 0:
        sys.exit(f"bench: {argv} failed ({status})")
    return (usage.ru_utime, usage.ru_stime), out


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def starfish(rounds, queues, shims, shim_env, modes):
    """The starfish pattern with `_f` and/or block items (`modes`), untraced and traced
    alternating; `shim_env`: extra environment of a shim's runs, by label (--slotless)."""
    for _, path in shims:
        if not os.path.exists(path):
            sys.exit(f"bench: {path} missing: run `make shim` first")
    tmp = tempfile.mkdtemp(prefix="qtrace-starfish-")
    try:
        program = build_starfish(tmp)
        items = queues * (2 * queues + 1)
        trace = os.path.join(tmp, "starfish.qtrace")
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("QTRACE") and k != "LD_PRELOAD"}
        results = {}
        loads = [load_average()]
        for _ in range(rounds):
            for mode in modes:
                for label, path in [("untraced", None)] + shims:
                    env = dict(base_env, **({"LD_PRELOAD": path, "QTRACE_OUTPUT": trace} if path else {}))
                    env.update(shim_env.get(label, {}))
                    (user, system), _ = child_cpu([program, mode, str(queues)], env)
                    results.setdefault((mode, label), []).append((user * 1e9 / items, system * 1e9 / items))
                    if os.path.exists(trace):
                        os.unlink(trace)
        loads.append(load_average())
        print_starfish(rounds, queues, items, shims, results, loads, modes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def print_starfish(rounds, queues, items, shims, results, loads, modes):
    """Medians of CPU ns per item (user + system, and each part), and the traced/untraced ratio
    of each round (runs of one round are neighbours in time, so the machine's load changes
    less between them than across the run): its median and range. With several shims, each
    one's CPU time against the first `--shim`'s (the baseline) in the same round: the median
    and the middle half of those ratios, steadier on a loaded machine than a difference of
    medians."""
    def cpu(key):
        return [user + system for user, system in results[key]]

    def med(key, part=None):
        values = cpu(key) if part is None else [run[part] for run in results[key]]
        return statistics.median(values)

    print(f"starfish: {queues} queues, {items:,} items, {rounds} rounds, all CPUs, load average "
          f"{loads[0]} -> {loads[1]}; medians of CPU ns per item (user + system)")
    print(f"{'items':<8}{'shim':>14}{'untraced':>11}{'traced':>11}{'ratio':>8}{'round ratios':>16}"
          f"{'added':>9}{'user':>8}{'system':>8}")
    for mode in modes:
        plain = med((mode, "untraced"))
        for label, _ in shims:
            traced = med((mode, label))
            paired = [t / u for t, u in zip(cpu((mode, label)), cpu((mode, "untraced")))]
            added_user = med((mode, label), 0) - med((mode, "untraced"), 0)
            added_system = med((mode, label), 1) - med((mode, "untraced"), 1)
            name = "this" if label == "traced" else label[8:-1][:13]
            print(f"{'_f' if mode == 'f' else 'block':<8}{name:>14}{plain:>11.1f}{traced:>11.1f}"
                  f"{statistics.median(paired):>8.3f}{f'{min(paired):.2f}-{max(paired):.2f}':>16}"
                  f"{traced - plain:>+9.1f}{added_user:>+8.1f}{added_system:>+8.1f}")
    if len(shims) > 1:
        # A slot-less run is compared with the baseline's slot-less run (--slotless).
        plain_baseline = shims[1][0]
        slotless_baseline = plain_baseline[:-1] + ", slotless)"
        for mode in modes:
            for label, _ in shims:
                baseline = slotless_baseline if "slotless" in label else plain_baseline
                if label == baseline or (mode, baseline) not in results:
                    continue
                against = sorted(t / b for t, b in zip(cpu((mode, label)), cpu((mode, baseline))))
                quarter = len(against) // 4
                print(f"{'_f' if mode == 'f' else 'block'} {label[8:-1] or 'this'} / {baseline[8:-1]}, per round: "
                      f"median {statistics.median(against):.3f}, middle half "
                      f"{against[quarter]:.3f}-{against[len(against) - 1 - quarter]:.3f}")
    if len(modes) < 2:
        return
    for label, _ in shims:
        f, b = med(("f", label)), med(("block", label))
        af, ab = f - med(("f", "untraced")), b - med(("block", "untraced"))
        name = "this" if label == "traced" else label[8:-1]
        print(f"{name}: traced _f / traced block per item {f / b:.3f}; added ns per item _f {af:+.1f}, block {ab:+.1f}")


if __name__ == "__main__":
    main()
