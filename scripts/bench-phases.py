#!/usr/bin/env python3
"""Where `qtrace stats --json` (or `report`) spends its time on one trace, phase by phase.

  scripts/bench-phases.py QTRACE TRACE [TRACE...] [--rounds 3] [--baseline OTHER_QTRACE] [--command report]

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

With --command report, `QTRACE report TRACE -o FILE` runs instead (FILE in a temporary
directory, removed after each run), with the report's phases (input, layout, encoding).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

EXTRA = "decode alone"
PARTS = "statistics: "


def run(qtrace, trace, phases, command="stats"):
    """(whole-run CPU seconds of the child, {phase: (wall, cpu)})."""
    env = dict(os.environ, QTRACE_PHASES="1" if phases else "0")
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as directory:
        arguments = ([qtrace, "report", trace, "-o", os.path.join(directory, "report.html")] if command == "report"
                     else [qtrace, "stats", "--json", trace, "-o", "/dev/null"])
        process = subprocess.Popen(arguments, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stderr = process.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit("%s %s failed (%d):\n%s" % (qtrace, command, process.returncode, stderr))
    found = {}
    for line in stderr.splitlines():
        if line.startswith("qtrace phase: "):
            name, wall, cpu, *peak = line[len("qtrace phase: "):].split("\t")  # peak, and RSS now
            found[name] = (float(wall), float(cpu), int(peak[0]) / 1024 if peak else float("nan"))
    return usage.ru_utime + usage.ru_stime, found


def report(trace, totals, rounds, baseline_totals):
    total = statistics.median(totals)
    print("\n%s: whole run %.3f s CPU (median of %d)" % (trace, total, len(totals)))
    print("| phase | wall s | CPU s | share of the run's CPU | peak RSS so far, MiB |")
    print("|---|---:|---:|---:|---:|")
    for name in rounds[0]:
        walls = [r[name][0] for r in rounds if name in r]
        cpus = [r[name][1] for r in rounds if name in r]
        peaks = [r[name][2] for r in rounds if name in r]
        share = "" if name.startswith(EXTRA) else "%.1f%%" % (100 * statistics.median(cpus) / total)
        print("| %s%s | %.3f | %.3f | %s | %.0f |" % ("  " if name.startswith(PARTS) and "total" not in name else "", name,
                                                  statistics.median(walls), statistics.median(cpus), share, max(peaks)))
    if baseline_totals:
        base = statistics.median(baseline_totals)
        print("baseline whole run %.3f s CPU; this / baseline = %.3f" % (base, total / base))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qtrace")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="another qtrace binary, run alternately for the whole-run CPU ratio")
    parser.add_argument("--command", choices=["stats", "report"], default="stats",
                        help="what to time: stats --json (the default) or report")
    args = parser.parse_args()
    for trace in args.traces:
        totals, rounds, baseline_totals = [], [], []
        for _ in range(args.rounds):
            if args.baseline:
                baseline_totals.append(run(args.baseline, trace, phases=False, command=args.command)[0])
            # The phase pass (with its extra decode pass) and a plain pass for the total.
            rounds.append(run(args.qtrace, trace, phases=True, command=args.command)[1])
            totals.append(run(args.qtrace, trace, phases=False, command=args.command)[0])
        report(trace, totals, rounds, baseline_totals)


if __name__ == "__main__":
    main()
