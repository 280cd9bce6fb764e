#!/usr/bin/env python3
"""Where `qtrace stats --json` (or `report`) spends its time on one trace, phase by phase.

  scripts/bench-phases.py QTRACE TRACE [TRACE...] [--rounds 3] [--baseline OTHER_QTRACE] [--baseline-env N=V] [--command report]

Runs `QTRACE_PHASES=1 QTRACE stats --json TRACE -o /dev/null` ROUNDS times and prints the
median wall and CPU seconds of each phase the binary reports on stderr (Sources/QTraceAnalysis/
Phases.swift: open, decode and model, model finish, symbolize, statistics and their parts,
findings, summary build, JSON encoding), with each phase's share of the whole run's CPU time and
the process's peak resident memory at the end of the phase.
"decode alone" is an extra pass the variable adds (merge and decode without the model builder),
so that the decoder's share of "decode and model" can be read; it is left out of the total.

With --baseline, another qtrace binary (which may not report phases) runs the same trace in
alternation, and the ratio of the two whole-run CPU medians is printed: on a shared machine
only ratios measured in the same run mean anything.

With --baseline-env NAME=VALUE (repeatable), the baseline runs with those variables set; without
--baseline it is the same binary (e.g. `--baseline-env QTRACE_DECODE_THREAD=0`: one thread
against two). Whole-run wall times and their ratio are printed too: on two cores, the
decoding thread shortens the wall time and adds CPU time, and the wall ratio means something
only on an otherwise idle machine (the load average is printed before and after).
"decode and model" then has two parts: each thread's own CPU time.

With --command report, `QTRACE report TRACE -o FILE` runs instead (FILE in a temporary
directory, removed after each run), with the report's phases (input, layout, encoding).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

EXTRA = "decode alone"
PARTS = "statistics: "


def run(qtrace, trace, phases, command="stats", extra_env=None, walls=None):
    """(whole-run CPU seconds of the child, {phase: (wall, cpu)}); the whole run's wall seconds
    are appended to `walls` when given."""
    env = dict(os.environ, QTRACE_PHASES="1" if phases else "0", **(extra_env or {}))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as directory:
        arguments = ([qtrace, "report", trace, "-o", os.path.join(directory, "report.html")] if command == "report"
                     else [qtrace, "stats", "--json", trace, "-o", "/dev/null"])
        process = subprocess.Popen(arguments, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stderr = process.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(process.pid, 0)
    if walls is not None:
        walls.append(time.monotonic() - started)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit("%s %s failed (%d):\n%s" % (qtrace, command, process.returncode, stderr))
    found = {}
    for line in stderr.splitlines():
        if line.startswith("qtrace phase: "):
            name, wall, cpu, *peak = line[len("qtrace phase: "):].split("\t")  # peak, and RSS now
            found[name] = (float(wall), float(cpu), int(peak[0]) / 1024 if peak else float("nan"))
    return usage.ru_utime + usage.ru_stime, found


def report(trace, totals, rounds, baseline_totals, walls=None, baseline_walls=None):
    total = statistics.median(totals)
    wall = " (wall %.3f s)" % statistics.median(walls) if walls else ""
    print("\n%s: whole run %.3f s CPU%s (median of %d)" % (trace, total, wall, len(totals)))
    print("| phase | wall s | CPU s | share of the run's CPU | peak RSS so far, MiB |")
    print("|---|---:|---:|---:|---:|")
    for name in rounds[0]:
        phase_walls = [r[name][0] for r in rounds if name in r]
        cpus = [r[name][1] for r in rounds if name in r]
        peaks = [r[name][2] for r in rounds if name in r]
        share = "" if name.startswith(EXTRA) else "%.1f%%" % (100 * statistics.median(cpus) / total)
        print("| %s%s | %.3f | %.3f | %s | %.0f |" % ("  " if name.startswith(PARTS) and "total" not in name else "", name,
                                                  statistics.median(phase_walls), statistics.median(cpus), share, max(peaks)))
    if baseline_totals:
        base = statistics.median(baseline_totals)
        print("baseline whole run %.3f s CPU; this / baseline = %.3f" % (base, total / base))
    if baseline_walls and walls:
        base_wall = statistics.median(baseline_walls)
        print("baseline whole run %.3f s wall; this / baseline = %.3f (wall time: only on an otherwise idle "
              "machine, the load average printed above)" % (base_wall, statistics.median(walls) / base_wall))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qtrace")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="another qtrace binary, run alternately for the whole-run CPU ratio")
    parser.add_argument("--command", choices=["stats", "report"], default="stats",
                        help="what to time: stats --json (the default) or report")
    parser.add_argument("--baseline-env", action="append", default=[], metavar="NAME=VALUE",
                        help="set in the baseline's environment (e.g. QTRACE_DECODE_THREAD=0, the same binary "
                             "on one thread when --baseline is not given)")
    args = parser.parse_args()
    baseline_env = dict(setting.split("=", 1) for setting in args.baseline_env)
    baseline = args.baseline or (args.qtrace if baseline_env else None)
    print("load average %s" % open("/proc/loadavg").read().split()[0])
    for trace in args.traces:
        totals, rounds, baseline_totals, walls, baseline_walls = [], [], [], [], []
        for _ in range(args.rounds):
            if baseline:
                baseline_totals.append(run(baseline, trace, phases=False, command=args.command,
                                           extra_env=baseline_env, walls=baseline_walls)[0])
            # The phase pass (with its extra decode pass) and a plain pass for the total.
            rounds.append(run(args.qtrace, trace, phases=True, command=args.command)[1])
            totals.append(run(args.qtrace, trace, phases=False, command=args.command, walls=walls)[0])
        report(trace, totals, rounds, baseline_totals, walls, baseline_walls)
    print("load average %s" % open("/proc/loadavg").read().split()[0])


if __name__ == "__main__":
    main()
