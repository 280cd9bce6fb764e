#!/usr/bin/env python3
"""Scaling benchmark: grows one dimension of a synthetic trace at a time (x1, x4, x16) and
prints the wall time and peak RSS of `qtrace stats --json` and `qtrace report` per step, with
the growth ratio of each x4 step. The goal is at most x5 per x4 step in time and memory:
the analysis must be linear (or n log n) in every dimension, not only in events.

  scripts/bench-scaling.py QTRACE [--dims queues,suspend,...] [--items 100000] [--out DIR]
                           [--timeout 300] [--keep]

open, lanes and tracks also time both exports (`qtrace export --format chrome-json` and
`--format perfetto`); --exports times them for every dimension.

QTRACE is a qtrace binary (release for meaningful numbers: .build/release/qtrace). The traces
are written here, in the embedded trace format (docs/trace-format.md: a 4096-byte header,
64 KiB chunks per thread, records of u64 words), with full (not compact) records, so the
script needs nothing but Python. Dimensions (x1 size; every trace also runs --items items
over a few queues, so the event count stays comparable):

  events     items                       100k items (300k events) -> 1.6M items
  queues     queues created              10k -> 160k (the items spread over them)
  suspend    suspend/resume pairs        10k -> 160k, each on its own queue with a waiting item
  threads    worker threads              100 -> 1,600 (each starts, runs items, exits)
  groups     groups                      10k -> 160k (enter, group_async item, leave, wait)
  semaphores semaphores                  10k -> 160k (wait, signal)
  sources    timer sources               10k -> 160k (activated, one handler run each)
  pending    items pending at once       10k -> 160k (all enqueued before the first starts)
  depth      target-queue chain depth    16 -> 256 (items on every queue, the root suspended now and then)
  labels     queue label length          256 -> 4,096 bytes (1,000 queues)
  open       interval begins with no end 8k -> 128k on the main thread (also times the
             Perfetto export: its lanes were searched one by one, quadratic in open spans)
  lanes      items at once on one queue  16 -> 256 (rounds of that many items pending, then
             running on as many threads: lanes of the queue's tracks)
  tracks     threads with a queue each   250 -> 4k (an item, a mark, an interval and a blocked
             wait on each: tracks of threads and queues)
  processes  traces in one report        1 -> 16 (the items split between them; report only)

  scripts/bench-scaling.py QTRACE --combined queues=900000,groups=200000,suspend=200000 [--browser]

--combined writes one trace growing several dimensions at once (the trace of issue 16: queues
created, of which the first `suspend` are suspended and resumed with an item waiting, groups,
and the --items items spread over all the queues) and times `qtrace dump`, `qtrace stats`,
`qtrace stats --json` and `qtrace report` on it; --browser also opens the report in headless
Chromium (scripts/bench-report.py's measurement: first render, tab RSS, Stats tab).
"""
import argparse
import os
import pathlib
import signal
import struct
import subprocess
import sys
import tempfile
import time

CHUNK_SIZE = 65536
HEADER_SIZE = 4096
CHUNK_HEADER = 64
INIT_MONO_NS = 1_000_000_000
MAIN_TID = 1
MAIN_QUEUE = 0x10
GLOBAL_DEFAULT = 0x20
QOS_DEFAULT = 0x15

# Record types (docs/trace-format.md).
THREAD_START, THREAD_EXIT = 1, 2
QUEUE_CREATE, QUEUE_INFO, SET_TARGET, SUSPEND, RESUME, ACTIVATE = 10, 11, 12, 13, 14, 15
ENQUEUE, START, END = 20, 21, 22
GROUP_CREATE, GROUP_ENTER, GROUP_LEAVE, GROUP_WAIT_BEGIN, GROUP_WAIT_END = 30, 31, 32, 33, 34
SEM_CREATE, SEM_WAIT_BEGIN, SEM_WAIT_END, SEM_SIGNAL = 40, 41, 42, 43
SOURCE_CREATE, SOURCE_SET_TIMER, SOURCE_SET_HANDLER = 50, 51, 52
SOURCE_HANDLER_BEGIN, SOURCE_HANDLER_END = 54, 55
MARK, INTERVAL_BEGIN, INTERVAL_END = 70, 71, 72
KIND_ASYNC, KIND_GROUP_ASYNC = 1, 6
FOREVER = 2**64 - 1  # a dispatch_time_t without timeout


class TraceFile:
    """Writes a trace: one chunk buffer per thread, written out when full; the header last.
    Time is one global clock (ns since start, TSC at 1 GHz), advanced by every record."""

    def __init__(self, path, pid=1):
        self.path = path
        self.pid = pid
        self.out = open(path, "wb")
        self.out.write(bytes(HEADER_SIZE))
        self.chunks = {}  # tid -> [bytearray, used, seq]
        self.written = 0
        self.now = 1_000
        self.events = 0

    def record(self, tid, rtype, arg=0, words=(), string=None, flags=0):
        self.now += 100
        length = 16 + 8 * len(words)
        data = None
        if string is not None:
            data = string.encode()
            length += 4 + len(data)
        length = (length + 7) & ~7
        chunk = self.chunk_with_room(tid, length)
        buf, used = chunk[0], chunk[1]
        tsc = INIT_MONO_NS + self.now
        struct.pack_into("<QQ", buf, used, rtype | flags << 8 | length << 16 | arg << 32, tsc)
        offset = used + 16
        if words:
            struct.pack_into("<%dQ" % len(words), buf, offset, *words)
            offset += 8 * len(words)
        if data is not None:
            struct.pack_into("<I", buf, offset, len(data))
            buf[offset + 4:offset + 4 + len(data)] = data
        chunk[1] = used + length
        self.events += 1

    def chunk_with_room(self, tid, length):
        chunk = self.chunks.get(tid)
        if chunk is not None and chunk[1] + length <= CHUNK_SIZE:
            return chunk
        seq = 0
        if chunk is not None:
            self.write_chunk(chunk)
            seq = chunk[2] + 1
        buf = bytearray(CHUNK_SIZE)
        tsc = INIT_MONO_NS + self.now
        struct.pack_into("<IIQQQ", buf, 0, 0x4B484351, seq, tid, tsc, tsc)
        chunk = [buf, CHUNK_HEADER, seq]
        self.chunks[tid] = chunk
        return chunk

    def write_chunk(self, chunk):
        self.out.write(chunk[0])
        self.written += 1

    def end_thread(self, tid):
        chunk = self.chunks.pop(tid, None)
        if chunk is not None:
            self.write_chunk(chunk)

    def finish(self):
        for tid in sorted(self.chunks):
            self.write_chunk(self.chunks[tid])
        header = bytearray(HEADER_SIZE)
        final = INIT_MONO_NS + self.now
        struct.pack_into("<8sHHIII", header, 0, b"QTRACE\0\0", 1, 2, HEADER_SIZE, CHUNK_SIZE, 4)
        struct.pack_into("<QQQQQQQQQQQQQQQ", header, 24, self.pid, 0, INIT_MONO_NS, INIT_MONO_NS,
                         1_700_000_000_000_000_000, final, final, self.written, 0, MAIN_TID, 1, MAIN_QUEUE, 0, 25,
                         1_000_000_000)
        header[256:256 + 16] = b"/usr/bin/synth\0\0"
        self.out.seek(0)
        self.out.write(header)
        self.out.close()


class Workload:
    """The common part of every trace: main thread, main and default global queues, workers,
    and `items` async items over a few base queues."""

    def __init__(self, trace, workers=8, base_queues=8):
        self.t = trace
        self.next_id = 1
        self.workers = [10 + w for w in range(workers)]
        self.t.record(MAIN_TID, THREAD_START, 0, (0,))
        self.t.record(MAIN_TID, QUEUE_INFO, 1, (MAIN_QUEUE,), "com.apple.main-thread")
        self.t.record(MAIN_TID, QUEUE_INFO, 2 | QOS_DEFAULT << 8, (GLOBAL_DEFAULT,), "com.apple.root.default-qos")
        for w in self.workers:
            self.t.record(w, THREAD_START, 1, (MAIN_TID,))
        self.base = [self.queue(0x100000 + q * 0x100, "com.example.base%d" % q) for q in range(base_queues)]

    def queue(self, address, label, target=0, concurrent=False):
        attrs = (1 if concurrent else 0) | QOS_DEFAULT << 8 | 128 << 16
        self.t.record(MAIN_TID, QUEUE_CREATE, attrs, (address, target), label)
        return address

    def item(self, queue, worker, kind=KIND_ASYNC, extra=0, between=None):
        """One item enqueued by main and run by `worker`; `between` runs inside it."""
        item = self.new_id()
        self.t.record(MAIN_TID, ENQUEUE, kind, (item, queue, extra))
        self.t.record(worker, START, kind, (item,))
        if between:
            between()
        self.t.record(worker, END, 0, (item,))

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def items(self, count, queues=None, workers=None):
        queues = queues or self.base
        workers = workers or self.workers
        for i in range(count):
            self.item(queues[i % len(queues)], workers[i % len(workers)])


def gen_events(w, n, items):
    w.items(n)


def gen_queues(w, n, items):
    queues = [w.queue(0x10000000 + q * 0x100, "com.example.q%d" % q) for q in range(n)]
    w.items(items, queues)


def suspend_with_item(w, q):
    """Queue q suspended, an item enqueued on it, resumed; the item runs."""
    t, worker, item = w.t, w.workers[0], w.new_id()
    t.record(MAIN_TID, SUSPEND, 0, (q,))
    t.record(MAIN_TID, ENQUEUE, KIND_ASYNC, (item, q, 0))
    t.record(MAIN_TID, RESUME, 0, (q,))
    t.record(worker, START, KIND_ASYNC, (item,))
    t.record(worker, END, 0, (item,))


def gen_suspend(w, n, items):
    # Every queue exists before the first suspension: the cost once grew with them per event.
    queues = [w.queue(0x10000000 + q * 0x100, "com.example.s%d" % q) for q in range(n)]
    for q in queues:
        suspend_with_item(w, q)
    w.items(items)


def gen_combined(w, sizes, items):
    """Several dimensions in one trace: `queues` queues, the first `suspend` of them suspended
    and resumed with an item waiting, `groups` groups, then the items over every queue."""
    queues = [w.queue(0x10000000 + q * 0x100, "com.example.q%d" % q) for q in range(sizes.get("queues", 0))]
    for k in range(sizes.get("suspend", 0)):
        suspend_with_item(w, queues[k] if k < len(queues) else w.queue(0x70000000 + k * 0x100, "com.example.s%d" % k))
    gen_groups(w, sizes.get("groups", 0), 0)
    w.items(items, queues or None)


def gen_threads(w, n, items):
    threads = [1000 + i for i in range(n)]
    for tid in threads:
        w.t.record(tid, THREAD_START, 1, (MAIN_TID,))
    w.items(items, workers=threads)
    for tid in threads:
        w.t.record(tid, THREAD_EXIT)
        w.t.end_thread(tid)


def gen_groups(w, n, items):
    t = w.t
    for g in range(n):
        group = 0x20000000 + g * 0x100
        worker = w.workers[g % len(w.workers)]
        t.record(MAIN_TID, GROUP_CREATE, 0, (group,))
        t.record(MAIN_TID, GROUP_ENTER, 0, (group,))
        w.item(w.base[g % len(w.base)], worker, KIND_GROUP_ASYNC, group)
        t.record(worker, GROUP_LEAVE, 0, (group,))
        t.record(MAIN_TID, GROUP_WAIT_BEGIN, 0, (group, FOREVER))
        t.record(MAIN_TID, GROUP_WAIT_END, 0, (group,))
    w.items(items)


# The records of one semaphore's and one source's life: (thread, type, arg, payload), with
# OBJECT for the object's address and WORKER for a worker thread.
OBJECT, WORKER = "object", "worker"
SEMAPHORE_LIFE = [(MAIN_TID, SEM_CREATE, 0, (OBJECT, 0)), (MAIN_TID, SEM_WAIT_BEGIN, 0, (OBJECT, FOREVER)),
                  (WORKER, SEM_SIGNAL, 1, (OBJECT,)), (MAIN_TID, SEM_WAIT_END, 2, (OBJECT,))]
SOURCE_LIFE = [(MAIN_TID, SOURCE_CREATE, 1, (OBJECT, 0, 0, "queue")), (MAIN_TID, SOURCE_SET_TIMER, 0, (OBJECT, 0, 1_000_000, 0)),
               (MAIN_TID, SOURCE_SET_HANDLER, 0, (OBJECT,)), (MAIN_TID, ACTIVATE, 0, (OBJECT,)),
               (WORKER, SOURCE_HANDLER_BEGIN, 0, (OBJECT, 1)), (WORKER, SOURCE_HANDLER_END, 0, (OBJECT,))]


def gen_lives(w, n, items, life, base):
    """n objects living `life` each (their handlers on the base queues), then the items."""
    for k in range(n):
        names = {OBJECT: base + k * 0x100, WORKER: w.workers[k % len(w.workers)], "queue": w.base[k % len(w.base)]}
        for tid, rtype, arg, words in life:
            w.t.record(names.get(tid, tid), rtype, arg, tuple(names.get(x, x) if isinstance(x, str) else x for x in words))
    w.items(items)


def gen_semaphores(w, n, items):
    gen_lives(w, n, items, SEMAPHORE_LIFE, 0x30000000)


def gen_sources(w, n, items):
    gen_lives(w, n, items, SOURCE_LIFE, 0x40000000)


def gen_pending(w, n, items):
    t = w.t
    ids = []
    for i in range(n):
        ids.append(w.new_id())
        t.record(MAIN_TID, ENQUEUE, KIND_ASYNC, (ids[-1], w.base[i % len(w.base)], 0))
    for i, item in enumerate(ids):
        worker = w.workers[i % len(w.workers)]
        t.record(worker, START, KIND_ASYNC, (item,))
        t.record(worker, END, 0, (item,))
    w.items(items)


def gen_depth(w, n, items):
    chain = [w.queue(0x50000000, "com.example.chain0", concurrent=True)]
    for d in range(1, n):
        chain.append(w.queue(0x50000000 + d * 0x100, "com.example.chain%d" % d, target=chain[-1], concurrent=True))
    for i in range(items):
        if i % 1000 == 0:
            w.t.record(MAIN_TID, SUSPEND if i % 2000 == 0 else RESUME, 0, (chain[0],))
        w.item(chain[i % n], w.workers[i % len(w.workers)])
    if (items - 1) // 1000 % 2 == 0:
        w.t.record(MAIN_TID, RESUME, 0, (chain[0],))


def gen_labels(w, n, items):
    queues = [w.queue(0x60000000 + q * 0x100, ("com.example.%d." % q).ljust(n, "x")[:n]) for q in range(1000)]
    w.items(items, queues)


def gen_open(w, n, items):
    """n QTrace intervals begun on the main thread and never ended: each overlaps all the
    others, so every one needs a lane (or the overflow track) of its own."""
    for k in range(n):
        w.t.record(MAIN_TID, INTERVAL_BEGIN, 0, (k + 1,), "open")
    w.items(items)


def gen_lanes(w, n, items):
    """Rounds of n items on one concurrent queue, each round's items all pending at once and
    then all running at once on n threads: the queue's running and pending tracks need n lanes
    (or their overflow) while the items stay the same."""
    q = w.queue(0x58000000, "com.example.wide", concurrent=True)
    threads = [2000 + k for k in range(n)]
    for tid in threads:
        w.t.record(tid, THREAD_START, 1, (MAIN_TID,))
    for first in range(0, items, n):
        ids = [w.new_id() for _ in range(min(n, items - first))]
        for item in ids:
            w.t.record(MAIN_TID, ENQUEUE, KIND_ASYNC, (item, q, 0))
        for tid, item in zip(threads, ids):
            w.t.record(tid, START, KIND_ASYNC, (item,))
        for tid, item in zip(threads, ids):
            w.t.record(tid, END, 0, (item,))


def gen_tracks(w, n, items):
    """n threads, each with a queue of its own: an item of that queue on the thread, inside it
    a mark, an interval and a semaphore wait. Every thread and queue is a track or several
    (items, intervals, blocked time; running and pending), with few events each."""
    for k in range(n):
        tid, q, sem = 3000 + k, w.queue(0x68000000 + k * 0x100, "com.example.t%d" % k), 0x78000000 + k * 0x100
        w.t.record(tid, THREAD_START, 1, (MAIN_TID,))

        def inside():
            w.t.record(tid, MARK, 0, (), "mark")
            w.t.record(tid, INTERVAL_BEGIN, 0, (k + 1,), "interval")
            w.t.record(tid, SEM_CREATE, 0, (sem, 0))
            w.t.record(tid, SEM_WAIT_BEGIN, 0, (sem, FOREVER))
            w.t.record(MAIN_TID, SEM_SIGNAL, 1, (sem,))
            w.t.record(tid, SEM_WAIT_END, 2, (sem,))
            w.t.record(tid, INTERVAL_END, 0, (k + 1,))
        w.item(q, tid, between=inside)
        w.t.record(tid, THREAD_EXIT)
        w.t.end_thread(tid)
    w.items(items)


DIMENSIONS = {
    # name: (generator, x1 size, what grows)
    "events": (gen_events, 100_000, "items"),
    "queues": (gen_queues, 10_000, "queues"),
    "suspend": (gen_suspend, 10_000, "suspend/resume pairs"),
    "threads": (gen_threads, 100, "threads"),
    "groups": (gen_groups, 10_000, "groups"),
    "semaphores": (gen_semaphores, 10_000, "semaphores"),
    "sources": (gen_sources, 10_000, "sources"),
    "pending": (gen_pending, 10_000, "pending items"),
    "depth": (gen_depth, 16, "target depth"),
    "labels": (gen_labels, 256, "label bytes"),
    "open": (gen_open, 8_000, "open intervals"),
    "lanes": (gen_lanes, 16, "items at once on one queue"),
    "tracks": (gen_tracks, 250, "threads with a queue each"),
    "processes": (None, 1, "processes"),
}


# Dimensions whose exports are always timed: lanes and tracks are what the exports lay out.
EXPORTED = ("open", "lanes", "tracks")


def write_traces(dim, n, items, out):
    """The trace files of one step (several for `processes`), and their total event count."""
    if dim == "processes":
        paths, events = [], 0
        for p in range(n):
            path = out / ("processes-%d-%d.qtrace" % (n, p))
            trace = TraceFile(str(path), pid=100 + p)
            Workload(trace).items(items // n)
            trace.finish()
            paths.append(str(path))
            events += trace.events
        return paths, events
    path = out / ("%s-%d.qtrace" % (dim, n))
    trace = TraceFile(str(path))
    generator = DIMENSIONS[dim][0]
    generator(Workload(trace), n, items if dim != "events" else 0)
    trace.finish()
    return [str(path)], trace.events


def measure(command, timeout, out):
    """Wall seconds and peak RSS (MiB) of one run, or None after `timeout` seconds. The RSS
    comes from /usr/bin/time: a child forked from this script starts with the script's own
    peak (Linux keeps the high-water mark across exec), its grandchild does not."""
    usage = out / "time.txt"
    start = time.monotonic()
    # A session of its own: on a timeout the whole group goes (time and qtrace).
    process = subprocess.Popen(["/usr/bin/time", "-o", str(usage), "-f", "%U %S %M", *command], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None
    elapsed = time.monotonic() - start
    if process.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(command), stderr.decode(errors="replace")))
    user, system, rss = usage.read_text().split()[-3:]
    return elapsed, int(rss) / 1024, float(user) + float(system)


def fmt(result, previous):
    if result is None:
        return "timeout", "", ""
    seconds, mib = result[:2]
    if previous is None:
        return "%.2f s" % seconds, "%.0f MiB" % mib, ""
    return "%.2f s" % seconds, "%.0f MiB" % mib, "x%.1f / x%.1f" % (seconds / max(previous[0], 1e-3), mib / previous[1])


def compare_export(args, paths, out, new, previous):
    """The baseline binary's Perfetto export of the same trace: its CPU time, its growth over
    the previous step, and the new binary's CPU time as a fraction of it (measured in the same
    run, so the machine's load cancels out as far as it can)."""
    old = measure([args.baseline, "export", *paths, "--format", "perfetto", "-o", str(out / "export-base.pftrace")],
                  args.timeout, out)
    if old is None:
        print("|   baseline export | timeout (> %.0f s) |" % args.timeout, flush=True)
        return None
    growth = "x%.1f" % (old[2] / max(previous[2], 1e-3)) if previous else ""
    versus = "%.3f" % (new[2] / max(old[2], 1e-3)) if new else "–"
    print("|   CPU s: baseline export %.2f %s, this one %.2f, this / baseline %s |" % (
        old[2], growth, new[2] if new else float("nan"), versus), flush=True)
    return old


def run_combined(args):
    """One trace of several dimensions at once: dump, stats and report times (and the report in
    the browser with --browser)."""
    sizes = {}
    for part in args.combined.split(","):
        name, _, value = part.partition("=")
        if name not in ("queues", "groups", "suspend") or not value.isdigit():
            sys.exit("--combined takes queues=N,groups=N,suspend=N (got %r)" % part)
        sizes[name] = int(value)
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="qtrace-scaling-"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "combined.qtrace"
    started = time.monotonic()
    trace = TraceFile(str(path))
    gen_combined(Workload(trace), sizes, args.items)
    trace.finish()
    print("trace: %s (%s), %s events, %.1f MB, written in %.0f s" % (
        path, ", ".join("%s %s" % ("{:,}".format(v), k) for k, v in sizes.items()), "{:,}".format(trace.events),
        path.stat().st_size / 1e6, time.monotonic() - started), flush=True)
    report = out / "combined.html"
    commands = [("dump", ["dump", str(path)]),  # its output goes to /dev/null
                ("stats", ["stats", str(path), "-o", str(out / "stats.txt")]),
                ("stats --json", ["stats", "--json", str(path), "-o", str(out / "stats.json")]),
                ("report", ["report", str(path), "-o", str(report)])]
    print("| command | wall | peak RSS |")
    print("|---|---:|---:|")
    for name, command in commands:
        result = measure([args.qtrace, *command], args.timeout, out)
        seconds, mib, _ = fmt(result, None)
        print("| `qtrace %s` | %s | %s |" % (name, seconds, mib), flush=True)
    print("report: %.1f MB" % (report.stat().st_size / 1e6), flush=True)
    if args.browser:
        import importlib.util
        spec = importlib.util.spec_from_file_location("bench_report", pathlib.Path(__file__).with_name("bench-report.py"))
        bench_report = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench_report)
        b = bench_report.measure_in_browser(report)
        print("browser: first render %.0f ms, JS heap %.0f MB, typed arrays %.0f MB, tab RSS %.0f MB, max frame %.1f ms, "
              "Stats tab %.0f ms" % (b["first_render_ms"], b["js_heap_mb"], b["array_buffers_mb"], b["renderer_rss_mb"],
                                     b["max_frame_ms"], b["stats_tab_ms"]), flush=True)
    if not args.keep:
        for leftover in out.iterdir():
            leftover.unlink()
        if not args.out:
            out.rmdir()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qtrace", help="the qtrace binary to measure")
    parser.add_argument("--dims", default=",".join(DIMENSIONS), help="dimensions to grow (default: all)")
    parser.add_argument("--items", type=int, default=100_000, help="async items in every trace (default 100000)")
    parser.add_argument("--steps", type=int, default=3, help="steps of x4 (default 3: x1, x4, x16)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds before a run counts as too slow")
    parser.add_argument("--out", help="directory for the traces and outputs (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the traces")
    parser.add_argument("--exports", "--perfetto", action="store_true",
                        help="also time `qtrace export` to chrome-json and perfetto (always done for open, lanes, tracks)")
    parser.add_argument("--baseline", help="another qtrace binary: for `open`, its export is timed on the same traces "
                        "and the ratios printed side by side")
    parser.add_argument("--combined", help="one trace of several dimensions: queues=N,groups=N,suspend=N")
    parser.add_argument("--browser", action="store_true", help="with --combined: open the report in headless Chromium")
    args = parser.parse_args()
    if args.combined:
        run_combined(args)
        return
    dims = args.dims.split(",")
    for dim in dims:
        if dim not in DIMENSIONS:
            sys.exit("unknown dimension %s (known: %s)" % (dim, ", ".join(DIMENSIONS)))
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="qtrace-scaling-"))
    out.mkdir(parents=True, exist_ok=True)
    print("| dimension | size | events | stats --json | RSS | ratio (time / RSS) | report | RSS | ratio (time / RSS) "
          "| chrome-json export | RSS | ratio (time / RSS) | perfetto export | RSS | ratio (time / RSS) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for dim in dims:
        exports = args.exports or dim in EXPORTED
        previous_stats = previous_report = previous_chrome = previous_perfetto = previous_baseline = None
        for step in range(args.steps):
            n = DIMENSIONS[dim][1] * 4 ** step
            paths, events = write_traces(dim, n, args.items, out)
            stats = None
            if dim != "processes":
                stats = measure([args.qtrace, "stats", "--json", paths[0], "-o", str(out / "stats.json")], args.timeout, out)
            report = measure([args.qtrace, "report", *paths, "-o", str(out / "report.html")], args.timeout, out)
            chrome = perfetto = None
            if exports:
                chrome = measure([args.qtrace, "export", *paths, "--format", "chrome-json", "-o", str(out / "export.json")],
                                 args.timeout, out)
                perfetto = measure([args.qtrace, "export", *paths, "--format", "perfetto", "-o", str(out / "export.pftrace")],
                                   args.timeout, out)
            s = fmt(stats, previous_stats) if dim != "processes" else ("–", "", "")
            r = fmt(report, previous_report)
            c = fmt(chrome, previous_chrome) if exports else ("–", "", "")
            p = fmt(perfetto, previous_perfetto) if exports else ("–", "", "")
            print("| %s | %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                dim, "{:,}".format(n), DIMENSIONS[dim][2], "{:,}".format(events), *s, *r, *c, *p), flush=True)
            previous_stats, previous_report, previous_chrome, previous_perfetto = stats, report, chrome, perfetto
            if args.baseline and dim == "open":
                previous_baseline = compare_export(args, paths, out, perfetto, previous_baseline)
            if not args.keep:
                for path in paths:
                    os.unlink(path)
    if not args.keep and not args.out:
        for leftover in out.iterdir():
            leftover.unlink()
        out.rmdir()


if __name__ == "__main__":
    main()
