#!/usr/bin/env python3
"""Bytes per trace event of `qtrace export --format perfetto`, per workload (docs/perfetto.md,
"Size"): each gallery sample (`qtrace-samples --list`) and, with --server, the Hummingbird
fixture server under load: 160 requests over its four routes on one connection (as the browser
tests load it), then `wrk -t2 -c16 -d3s` on /plain and on /group. Each
workload is recorded, exported, and its trace events (`qtrace stats --json`) set against the
.pftrace's size. Deterministic enough to compare: the size depends on what was recorded, not
on time.

  python3 scripts/perfetto-bytes.py [--bin BIN_DIR] [--server .build-real/real-nio-server/debug/hb-server]
"""
import argparse
import http.client
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys

from bench_support import record_setup


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", help="the build's bin directory (default: the release build's)")
    parser.add_argument("--server", help="the Hummingbird fixture server to load with wrk")
    return parser.parse_args()


def events_in(qtrace, trace, env):
    out = subprocess.run([qtrace, "stats", "--json", trace], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["trace"]["events"]


def measure(name, qtrace, trace, env):
    pftrace = trace.replace(".qtrace", ".pftrace")
    subprocess.run([qtrace, "export", "--format", "perfetto", trace, "-o", pftrace], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events, size = events_in(qtrace, trace, env), os.path.getsize(pftrace)
    print(f"{name:28} {events:>10,} events {size:>12,} bytes {size / max(events, 1):6.2f} bytes/event", flush=True)


def samples(qtrace, bin_dir, tmp, env):
    listing = subprocess.run([os.path.join(bin_dir, "qtrace-samples"), "--list"], capture_output=True, text=True,
                             check=True).stdout
    for name in (line.split()[0] for line in listing.splitlines() if line.strip()):
        trace = os.path.join(tmp, f"{name}.qtrace")
        subprocess.run([qtrace, "record", "-q", "--no-report", "-o", trace, "--",
                        os.path.join(bin_dir, "qtrace-samples"), name], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        measure(f"gallery {name}", qtrace, trace, env)


def requests(port):
    """160 requests, the routes in turn, on one keep-alive connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for n in range(160):
            connection.request("GET", "/" + ("plain", "group", "blocking", "count")[n % 4])
            connection.getresponse().read()
    finally:
        connection.close()


def wrk(port, path):
    subprocess.run(["wrk", "-t2", "-c16", "-d3s", f"http://127.0.0.1:{port}/{path}"], capture_output=True, check=True,
                   timeout=60)


def server(qtrace, binary, tmp, env, name, load):
    trace = os.path.join(tmp, "server.qtrace")
    process = subprocess.Popen([qtrace, "record", "--no-report", "-o", trace, "--", binary, "0"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 120)
        match = ready and re.match(r"listening on (\d+)", process.stdout.readline())
        if not match:
            sys.exit("perfetto-bytes: the server did not start")
        load(int(match.group(1)))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=300)
    measure(name, qtrace, trace, env)


def main():
    args = parse_args()
    qtrace, _, tmp, env = record_setup(args.bin, "qtrace-perfetto-bytes-")
    try:
        samples(qtrace, os.path.dirname(qtrace), tmp, env)
        if args.server:
            if not shutil.which("wrk"):
                sys.exit("perfetto-bytes: --server needs wrk: apt-get install wrk")
            server(qtrace, args.server, tmp, env, "server, 160 requests", requests)
            for path in ("plain", "group"):
                server(qtrace, args.server, tmp, env, f"server /{path}, wrk 3 s", lambda port, path=path: wrk(port, path))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
