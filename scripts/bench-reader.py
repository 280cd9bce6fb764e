#!/usr/bin/env python3
"""The collector's CPU time on existing traces against a baseline binary, alternating.

For each trace, runs both binaries ROUNDS times in alternating order and prints medians of
wall and CPU time (user + system, getrusage) and peak RSS, with the ratio new / baseline:
- `stats --json TRACE`: the whole collector (read, model, statistics, findings, JSON);
- `dump --type deadlock TRACE`: the reader alone (open, validation, merge of every event;
  nothing is printed on a trace without deadlocks).
CPU time is the number to read on a shared machine; wall time moves with the other jobs.
Usage: scripts/bench-reader.py [--rounds N] BASELINE_QTRACE NEW_QTRACE TRACE...
"""
import os
import statistics
import subprocess
import sys
import time


def run(binary, arguments):
    start = time.monotonic()
    process = subprocess.Popen([binary] + arguments, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit(f"{binary} {' '.join(arguments)} failed (status {status})")
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    arguments = sys.argv[1:]
    rounds = 5
    if arguments[:1] == ["--rounds"]:
        rounds, arguments = max(1, int(arguments[1])), arguments[2:]
    if len(arguments) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    baseline, new, traces = arguments[0], arguments[1], arguments[2:]
    for trace in traces:
        for label, command in (("stats --json", ["stats", "--json", trace]),
                               ("reader (dump --type deadlock)", ["dump", "--type", "deadlock", trace])):
            results = {baseline: [], new: []}
            for index in range(rounds):
                for binary in ((baseline, new) if index % 2 == 0 else (new, baseline)):
                    results[binary].append(run(binary, command))
            medians = {b: [statistics.median(r[i] for r in results[b]) for i in range(3)] for b in results}
            print(f"{os.path.basename(trace)}, {label}, {rounds} rounds:")
            for name, binary in (("baseline", baseline), ("new", new)):
                wall, cpu, rss = medians[binary]
                print(f"  {name:8} wall {wall:.3f} s  cpu {cpu:.3f} s  peak RSS {rss:.0f} MiB")
            print(f"  ratio new/baseline: cpu {medians[new][1] / medians[baseline][1]:.3f}, "
                  f"wall {medians[new][0] / medians[baseline][0]:.3f}")


if __name__ == "__main__":
    main()
