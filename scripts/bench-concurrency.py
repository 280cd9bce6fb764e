#!/usr/bin/env python3
"""What recording costs a Swift Concurrency program (docs/swift-concurrency.md, "Costs").

  python3 scripts/bench-concurrency.py [--bin BIN_DIR] [--rounds N] [--server PATH]

Untraced and traced runs alternate in one go (the machine's noise falls on both), and every
line prints the traced / untraced ratio of the medians:
- tiny tasks: 200k child tasks that return at once (TaskGroups of 1000): ns per task;
- actor hops: 1M calls of an actor's method from one task (a hop onto it and back): ns per call;
- with --server (the Hummingbird fixture: .build-real/real-nio-server/debug/hb-server,
  built by the browser tests or `swift build --package-path Tests/Fixtures/real-nio-server
  --scratch-path .build-real/real-nio-server`): requests/s and p99 latency under
  `wrk -t2 -c16 -d5s` on /plain and /group, untraced and traced alternately.
"""
import argparse
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys

from bench_support import record_setup


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", help="the build's bin directory (default: the release build's)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating untraced/traced rounds (default 5)")
    parser.add_argument("--server", help="the Hummingbird fixture server to load with wrk")
    return parser.parse_args()


def fixture_ns(argv, pattern, env):
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} failed: {out.stderr[-500:]}")
    match = re.search(pattern + r" ([0-9.]+)", out.stdout)
    if not match:
        sys.exit(f"bench: no '{pattern}' in {out.stdout!r}")
    return float(match.group(1))


def micro(qtrace, fixtures, tmp, env, rounds):
    untraced_env = {k: v for k, v in env.items() if k != "QTRACE_SHIM"}
    for name, args, pattern in [("tiny tasks (200k)", ["bench-tasks", "200000"], "ns/task"),
                                ("actor hops (1M calls)", ["bench-hops", "1000000"], "ns/call")]:
        plain, traced = [], []
        for r in range(rounds):
            plain.append(fixture_ns([fixtures] + args, pattern, untraced_env))
            trace = os.path.join(tmp, f"bench-{r}.qtrace")
            traced.append(fixture_ns([qtrace, "record", "--no-report", "-o", trace, "--", fixtures] + args, pattern, env))
            os.unlink(trace)
        p, t = statistics.median(plain), statistics.median(traced)
        print(f"{name:24} untraced {p:8.1f} {pattern}   traced {t:8.1f}   ratio {t / p:5.2f}x")


def wrk(port, path):
    out = subprocess.run(["wrk", "-t2", "-c16", "-d5s", "--latency", f"http://127.0.0.1:{port}/{path}"],
                         capture_output=True, text=True, timeout=60).stdout
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
    value, unit = re.search(r"99%\s+([0-9.]+)(us|ms|s)", out).groups()
    p99_ms = float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
    return rps, p99_ms


def serve(argv, env, path):
    server = subprocess.Popen(argv + ["0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 120)
        match = ready and re.match(r"listening on (\d+)", server.stdout.readline())
        if not match:
            sys.exit("bench: the server did not start")
        return wrk(int(match.group(1)), path)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=300)


def server_bench(qtrace, server, tmp, env, rounds):
    untraced_env = {k: v for k, v in env.items() if k != "QTRACE_SHIM"}
    for path in ["plain", "group"]:
        plain, traced = [], []
        for r in range(rounds):
            plain.append(serve([server], untraced_env, path))
            trace = os.path.join(tmp, f"server-{r}.qtrace")
            traced.append(serve([qtrace, "record", "--no-report", "-o", trace, "--", server], env, path))
            for name in os.listdir(tmp):
                if name.startswith(f"server-{r}"):
                    os.unlink(os.path.join(tmp, name))
        prps, trps = statistics.median(x[0] for x in plain), statistics.median(x[0] for x in traced)
        pp99, tp99 = statistics.median(x[1] for x in plain), statistics.median(x[1] for x in traced)
        print(f"server /{path:6}  untraced {prps:8.0f} req/s p99 {pp99:7.2f} ms   traced {trps:8.0f} req/s "
              f"p99 {tp99:7.2f} ms   throughput {prps / trps:4.2f}x slower, p99 {tp99 / pp99:4.2f}x")


def main():
    args = parse_args()
    qtrace, fixtures, tmp, env = record_setup(args.bin, "qtrace-bench-concurrency-")
    micro(qtrace, fixtures, tmp, env, args.rounds)
    if args.server:
        if not shutil.which("wrk"):
            sys.exit("bench: --server needs wrk: apt-get install wrk")
        if not os.path.exists(args.server):
            sys.exit(f"bench: {args.server} missing: build it with `swift build --package-path Tests/Fixtures/real-nio-server "
                     "--scratch-path .build-real/real-nio-server`")
        server_bench(qtrace, args.server, tmp, env, args.rounds)


if __name__ == "__main__":
    main()
