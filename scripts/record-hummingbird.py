#!/usr/bin/env python3
"""Records the Hummingbird server of the browser tests (Tests/Fixtures/real-nio-server, hb-server)
under a bounded loopback load, with any extra `qtrace record` options, and prints what a user
reads first: the finding groups and the length of `qtrace stats`.

The runs of docs/findings.md ("Issue 25's done when, on real runs") are made with it, e.g.

  scripts/record-hummingbird.py /tmp/hb/saturated.qtrace --requests 1500 -- --sched
  scripts/record-hummingbird.py /tmp/hb/all.qtrace --routes all --requests 1500 -- --sched
  scripts/record-hummingbird.py /tmp/hb/plain.qtrace

The server is built once (as the browser tests build it, into .build-real/); qtrace and its shim
come from `swift build --show-bin-path` (or QTRACE_BIN / QTRACE_SHIM, as for the tests). The
load is CLIENTS threads (--clients, default the tests' 4), each sending --requests requests
round robin over the routes, on loopback; the server is stopped by PID with SIGTERM.

Usage: scripts/record-hummingbird.py TRACE [--routes clean|all] [--requests N] [--clients N] [-- RECORD_OPTIONS...]
"""
import argparse
import json
import pathlib
import subprocess
import sys

TESTS = pathlib.Path(__file__).resolve().parent.parent / "Tests" / "BrowserTests"
sys.path.insert(0, str(TESTS))

import test_real_programs as real  # noqa: E402  (the tests' own build, load and record helpers)
import test_swift_concurrency_server as hb  # noqa: E402


def parse_args():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description="record the Hummingbird server under a loopback load")
    parser.add_argument("trace", help="the trace to write (its directory is created)")
    parser.add_argument("--routes", choices=("clean", "all"), default="clean",
                        help="clean: plain, group, count; all: also the route that blocks a pool thread")
    parser.add_argument("--requests", type=int, default=hb.REQUESTS_PER_CLIENT, help="requests per client")
    parser.add_argument("--clients", type=int, default=real.CLIENTS, help="client threads")
    args = parser.parse_args(argv)
    args.record_options = extra
    return args


def main():
    args = parse_args()
    hb.REQUESTS_PER_CLIENT = args.requests
    real.CLIENTS = args.clients
    bin_dir = real._bin_dir()
    tools = {"qtrace": str(bin_dir / "qtrace"),
             "shim": real.os.environ.get("QTRACE_SHIM") or str(bin_dir / "libqtrace-shim.so")}
    for path in tools.values():
        if not pathlib.Path(path).exists():
            sys.exit(f"record-hummingbird: {path} is missing: build qtrace and its shim first (make build)")
    print("building the server (Tests/Fixtures/real-nio-server) ...", file=sys.stderr)
    server = str(real._build_package("real-nio-server") / "hb-server")
    trace = pathlib.Path(args.trace)
    trace.parent.mkdir(parents=True, exist_ok=True)
    routes = hb.ALL_ROUTES if args.routes == "all" else hb.CLEAN_ROUTES
    argv = [tools["qtrace"], "record", "--no-report", "-o", str(trace)] + args.record_options + ["--", server]
    status, _, err, answers, seconds = real._serve_and_load(
        argv, real._record_env(tools), load=lambda port, client, answers: hb._load(port, routes, client, answers))
    print(f"server exit status {status}, {len(answers)} answers, load {seconds:.2f} s")
    if status != 0:
        sys.exit(f"record-hummingbird: qtrace record ended with {status}: {err[-2000:]}")
    text = subprocess.run([tools["qtrace"], "stats", str(trace)], capture_output=True, text=True, check=True).stdout
    print(f"qtrace stats: {len(text.splitlines())} lines")
    summary = json.loads(subprocess.run([tools["qtrace"], "stats", "--json", str(trace)],
                                        capture_output=True, text=True, check=True).stdout)
    for group in summary["findingGroups"]:
        print(f"  {group['id']} x{group.get('count', 1)}: {group['worst']['message'][:200]}")


if __name__ == "__main__":
    main()
