#!/usr/bin/env python3
"""Benchmark of the HTML report: for synthetic inputs of 100k, 1M and 10M trace events, prints
the report size, bytes per event, time to write, time to first render and the memory of the
tab in headless Chromium.

  scripts/bench-report.py [--events 100000,1000000,10000000] [--queues N] [--out DIR] [--skip-build]

--queues 100000: reports of that many queues (most with one or two items), for the report at
100k queues; the table then also gives the time to open the Stats tab.

The Swift half (generating and writing) is the XCTest QTraceReportTests.ReportBenchmarkTests,
built in release mode into the .build-report scratch path. The browser half needs Debian's
chromium and chromium-driver and `pip install selenium`.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def write_reports(events, out, skip_build, queues=16):
    command = ["swift", "test", "-c", "release", "--scratch-path", ".build-report", "-Xswiftc", "-enable-testing",
               "--filter", "QTraceReportTests.ReportBenchmarkTests"]
    if skip_build:
        command.append("--skip-build")
    env = dict(os.environ, QTRACE_BENCH_OUT=str(out), QTRACE_BENCH_EVENTS=",".join(map(str, events)),
               QTRACE_BENCH_QUEUES=str(queues))
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("BENCH ")]
    if result.returncode != 0 or len(lines) != len(events):
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        sys.exit("the Swift benchmark failed")
    return [dict(field.split("=", 1) for field in line.split()[1:]) for line in lines]


def renderer_rss_kb(root_pid):
    """Resident memory of the renderer processes under root_pid (one tab: one renderer)."""
    parents, cmdlines, rss = {}, {}, {}
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdlines[int(proc.name)] = (proc / "cmdline").read_bytes()
            status = (proc / "status").read_text()
        except OSError:
            continue
        parents[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        rss[int(proc.name)] = int(match.group(1)) if match else 0

    def descends(pid):
        while pid in parents and pid > 1:
            if pid == root_pid:
                return True
            pid = parents[pid]
        return False

    return sum(rss[pid] for pid in rss if b"--type=renderer" in cmdlines[pid] and descends(pid))


def measure_in_browser(path):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    home = tempfile.mkdtemp(prefix="qtrace-bench-")
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[key] = home
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1600,1000",
                f"--user-data-dir={home}/profile", "--enable-precise-memory-info"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    try:
        driver.set_script_timeout(120)
        driver.set_page_load_timeout(120)
        started = time.monotonic()
        driver.get(pathlib.Path(path).as_uri())
        status = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.qtrace.ready.then(() => done('ok'), (e) => done('error: ' + e));")
        wall = time.monotonic() - started
        if status != "ok":
            raise RuntimeError(status)
        timings = driver.execute_script("return window.qtrace.state().timings")
        time.sleep(1.0)  # let the deferred columns decode
        driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
        duration = driver.execute_script("return window.qtrace.state().duration")
        frames = [driver.execute_script("window.qtrace.zoomTo(arguments[0], arguments[1]); return window.qtrace.draw()",
                                        duration * a, duration * b)
                  for a, b in ((0, 1), (0.3, 0.35), (0.5, 0.5005), (0, 1))]
        stats_ms = driver.execute_script(
            "const t0 = performance.now(); window.qtrace.openTab('stats'); return performance.now() - t0")
        return {
            "first_render_ms": timings["firstRender"],
            "wall_s": wall,
            "js_heap_mb": driver.execute_script("return performance.memory.usedJSHeapSize") / 2**20,
            # Typed arrays live outside the JS heap: count their backing stores too.
            "array_buffers_mb": driver.execute_script("return window.qtrace.state().arrayBufferBytes") / 2**20,
            "renderer_rss_mb": renderer_rss_kb(driver.service.process.pid) / 1024,
            "max_frame_ms": max(frames),
            "stats_tab_ms": stats_ms,
        }
    finally:
        driver.quit()
        shutil.rmtree(home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", default="100000,1000000,10000000")
    parser.add_argument("--out", default=None, help="where to keep the reports (default: a temporary directory)")
    parser.add_argument("--queues", type=int, default=16)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    events = [int(e) for e in args.events.split(",")]
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="qtrace-bench-reports-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = write_reports(events, out, args.skip_build, args.queues)
    header = ("events", "items", "queues", "report MB", "bytes/event", "write s", "first render ms", "JS heap MB",
              "typed arrays MB", "tab RSS MB", "max frame ms", "Stats tab ms")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for row in rows:
        size = int(row["bytes"])
        browser = measure_in_browser(row["path"])
        print(" | ".join([
            f"{int(row['events']):,}", f"{int(row['items']):,}", f"{int(row['queues']):,}", f"{size / 1e6:.1f}",
            f"{size / int(row['events']):.2f}",
            row["write_s"], f"{browser['first_render_ms']:.0f}", f"{browser['js_heap_mb']:.0f}",
            f"{browser['array_buffers_mb']:.0f}",
            f"{browser['renderer_rss_mb']:.0f}", f"{browser['max_frame_ms']:.1f}", f"{browser['stats_tab_ms']:.0f}",
        ]), flush=True)
    if not args.out:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
