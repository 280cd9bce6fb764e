"""One number, one place: for every gallery trace (written by GalleryTests with
QTRACE_BROWSER_FIXTURES set), the CLI table (`qtrace stats --wide --all`, <name>.stats.txt),
`qtrace stats --json` (<name>.summary.json) and the report agree on every queue, thread and
code figure they show; the details panels and the target-queue tree show the Stats tables'
figures; a range over the whole trace aggregates to the Stats figures.
Definitions: docs/report-data.md."""
import json
import re

import pytest

from conftest import Report

UNITS = {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def gallery_names(fixtures_dir):
    return sorted(p.name[: -len(".summary.json")] for p in fixtures_dir.glob("gallery-*.summary.json"))


def pytest_generate_tests(metafunc):
    if "gallery" in metafunc.fixturenames:
        import os
        import pathlib
        given = os.environ.get("QTRACE_BROWSER_FIXTURES")
        names = gallery_names(pathlib.Path(given)) if given else []
        metafunc.parametrize("gallery", names or [None])


def test_every_gallery_sample_has_its_outputs(fixtures_dir):
    """The consistency tests run on every gallery sample the findings corpus records (a sample
    whose outputs nobody writes would silently drop out of them)."""
    from conftest import ROOT
    corpus = (ROOT / "Tests/Fixtures/findings-corpus.txt").read_text()
    samples = sorted(set(re.findall(r"^\[gallery/([^\]\s]+)\]", corpus, re.M)))
    assert len(samples) > 20
    assert [s for s in samples if f"gallery-{s}" not in gallery_names(fixtures_dir)] == []


@pytest.fixture
def outputs(gallery, fixtures_dir, driver):
    if gallery is None:
        pytest.skip("no gallery reports: run GalleryTests with QTRACE_BROWSER_FIXTURES set (make test)")
    summary = json.loads((fixtures_dir / f"{gallery}.summary.json").read_text())
    text = (fixtures_dir / f"{gallery}.stats.txt").read_text()
    report = Report(driver, fixtures_dir / f"{gallery}.html")
    return summary, text, report


# MARK: Parsing what people read

def duration_ns(text):
    """'6.08 ms' -> 6.08e6; '-' (no durations) -> None."""
    text = text.strip()
    if text in ("-", "–"):
        return None
    number, unit = text.split()
    return float(number) * UNITS[unit]


def percent(text):
    """'98%', '98.5 %' -> 98.0, 98.5."""
    return float(text.replace("%", "").strip())


def close(shown, exact, digits=3):
    """A shown duration (3 significant digits) against the exact one; None means no durations."""
    if exact is None or shown is None:
        return shown == exact
    return abs(shown - exact) <= max(0.5, abs(exact) * 0.5 * 10 ** (1 - digits) + 1e-9)


def cli_table(text, section, columns, left):
    """The rows of one table of `qtrace stats` as {column: cell}: cells of right-aligned columns
    end where their header ends, those of left-aligned ones start where their header starts."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(section))
    h = start + 1
    while h < len(lines) and lines[h].strip() and not (lines[h].startswith(columns[0]) and columns[-1] in lines[h]):
        h += 1
    if h >= len(lines) or not lines[h].strip():
        return []  # no table ("(no work items)")
    header = lines[h]
    spans, at = [], 0
    for name in columns:
        at = header.index(name, at)
        spans.append((at, at + len(name)))
        at += len(name)
    rows = []
    for line in lines[h + 2:]:
        if not line.strip() or line.startswith("  ..."):
            break
        cells = {}
        for k, name in enumerate(columns):
            if name in left:
                # Left-aligned: the first column runs to the next header; others are one word.
                end = spans[k + 1][0] if k + 1 < len(columns) else len(line)
                cells[name] = line[spans[k][0]:end].strip() if k == 0 else line[spans[k][0]:].split()[0]
            elif columns[k - 1] in left:
                # After a one-word left-aligned cell (which may be wider than its header).
                cells[name] = line[spans[k - 1][0]:spans[k][1]].split(None, 1)[1].strip()
            else:
                cells[name] = line[spans[k - 1][1]:spans[k][1]].strip()
        rows.append(cells)
    return rows


def queue_rows(text):
    cols = ["queue", "kind", "items", "wait p50", "wait p99", "run p50", "run p99", "run max", "busy", "width", "backlog"]
    return cli_table(text, "QUEUES", cols, {"queue", "kind"})


def thread_rows(text):
    cols = ["thread", "kind", "items", "busy", "blocked"]
    return cli_table(text, "THREADS", cols, {"thread", "kind"})


def active_queues(summary):
    """The queues the CLI lists, in its order (StatsText.activeQueues)."""
    qs = [q for q in summary["statistics"]["queues"] if q["items"] > 0]
    return sorted(qs, key=lambda q: (-q["busyNs"], -q["items"], q["queue"]))


def listed_threads(summary):
    ts = [t for t in summary["statistics"]["threads"] if t["items"] > 0 or t["blockedNs"] > 0]
    return sorted(ts, key=lambda t: (-t["busyNs"], t["thread"]))


def p(stats, key):
    """A percentile of a DurationStats, None when it has no durations (shown as '-')."""
    return stats[key] if stats["count"] > 0 else None


# MARK: The tests

def test_cli_table_agrees_with_the_json(outputs):
    summary, text, _ = outputs
    queues = active_queues(summary)
    rows = queue_rows(text)
    assert len(rows) == len(queues)
    for row, q in zip(rows, queues):
        assert int(row["items"]) == q["items"], q["label"]
        for col, stats, key in (("wait p50", "wait", "p50Ns"), ("wait p99", "wait", "p99Ns"),
                                ("run p50", "run", "p50Ns"), ("run p99", "run", "p99Ns")):
            assert close(duration_ns(row[col]), p(q[stats], key)), (q["label"], col, row[col], q[stats])
        assert abs(percent(row["busy"]) - q["busyShare"] * 100) <= 0.5 + 1e-9, (q["label"], row["busy"])
    threads = listed_threads(summary)
    rows = thread_rows(text)
    assert len(rows) == len(threads)
    for row, t in zip(rows, threads):
        assert int(row["items"]) == t["items"], t["name"]
        busy = re.match(r"(.+) \((.+)\)$", row["busy"])
        assert close(duration_ns(busy.group(1)), t["busyNs"]), (t["name"], row["busy"])
        assert abs(percent(busy.group(2)) - t["busyShare"] * 100) <= 0.5 + 1e-9
        assert close(duration_ns(row["blocked"]), t["blockedNs"] or None), (t["name"], row["blocked"])


def cell_number(cell):
    return None if cell["value"] is None else float(cell["value"])


def test_report_tables_agree_with_the_json_and_the_cli(outputs):
    summary, text, report = outputs
    shown = report.js("return window.qtrace.shownFigures()")
    stats = summary["statistics"]
    cli = dict(zip((q["queue"] for q in active_queues(summary)), queue_rows(text)))
    for row in shown["tables"]["queues"]:
        q = stats["queues"][row["object"]]
        c = row["cells"]
        assert cell_number(c["items"]) == q["items"]
        for key, stats_key, pkey in (("wait.p50Ns", "wait", "p50Ns"), ("wait.p99Ns", "wait", "p99Ns"),
                                     ("run.p50Ns", "run", "p50Ns"), ("run.p99Ns", "run", "p99Ns")):
            assert cell_number(c[key]) == p(q[stats_key], pkey), (q["label"], key, c[key])
            # One rendering of "no durations": "-" in the CLI and in the report.
            if p(q[stats_key], pkey) is None:
                assert c[key]["text"] == "-"
            assert close(duration_ns(c[key]["text"]), p(q[stats_key], pkey)), (q["label"], key, c[key])
        assert cell_number(c["busyShare"]) == pytest.approx(q["busyShare"] * 100, abs=1e-9)
        if q["queue"] in cli:
            cli_row = cli[q["queue"]]
            for col, key in (("wait p50", "wait.p50Ns"), ("run p99", "run.p99Ns")):
                assert close(duration_ns(cli_row[col]), duration_ns(c[key]["text"]) if c[key]["value"] else None)
            assert abs(percent(cli_row["busy"]) - percent(c["busyShare"]["text"])) <= 0.55
    for row in shown["tables"]["threads"]:
        t = stats["threads"][row["object"]]
        c = row["cells"]
        assert cell_number(c["items"]) == t["items"]
        assert cell_number(c["busyNs"]) == t["busyNs"]
        assert cell_number(c["blockedNs"]) == t["blockedNs"]
        assert close(duration_ns(c["busyNs"]["text"]), t["busyNs"])


def test_code_table_agrees_with_the_json(outputs):
    summary, _, report = outputs
    shown = report.js("return window.qtrace.shownFigures()")
    sites = summary["statistics"].get("sites", [])
    rows = shown["tables"].get("code", [])
    assert len(rows) == len(sites)
    for row, site in zip(rows, sites):
        c = row["cells"]
        assert cell_number(c["items"]) == site["items"]
        assert cell_number(c["run.p50Ns"]) == p(site["run"], "p50Ns")
        assert cell_number(c["run.p99Ns"]) == p(site["run"], "p99Ns")
        assert cell_number(c["wait.p99Ns"]) == p(site["wait"], "p99Ns")


def test_details_and_tree_show_the_stats_figures(outputs):
    _, _, report = outputs
    shown = report.js("return window.qtrace.shownFigures()")
    by_queue = {row["object"]: row["cells"] for row in shown["tables"]["queues"]}
    for q, details in enumerate(shown["queues"]):
        if q not in by_queue:
            continue  # the placeholder for items of no recorded queue
        cells = by_queue[q]
        assert details["Items"] == cells["items"]["text"]
        assert details["Busy"].endswith(f"({cells['busyShare']['text']} of the trace)"), (details, cells["busyShare"])
        assert details["Backlog max"] == cells["backlogMax"]["text"]
    tree = {row["queue"]: row["busy"] for row in shown["tree"]}
    for q, cells in by_queue.items():
        assert tree[q] == cells["busyShare"]["text"]
    by_thread = {row["object"]: row["cells"] for row in shown["tables"]["threads"]}
    for t, details in enumerate(shown["threads"]):
        cells = by_thread[t]
        assert details["Items run"] == cells["items"]["text"]
        assert details["Busy"] == cells["busyNs"]["text"]
        assert details["Blocked"] == cells["blockedNs"]["text"]


def test_tree_is_the_analysis_order(outputs):
    summary, _, report = outputs
    shown = report.js("return window.qtrace.shownFigures()")
    analysis = [node["queue"] for node in summary["statistics"]["queueTree"]]
    assert [row["queue"] for row in shown["tree"]][: len(analysis)] == analysis
    # The timeline's queue lanes follow the same order (those it shows).
    lanes = [int(lane["key"].split(":")[1]) for lane in report.state()["lanes"]
             if lane["kind"] == "queue" and str(lane.get("key", "")).startswith("queue:")]
    shown_lanes = set(lanes)
    assert [q for q in lanes if q < len(analysis)] == [q for q in analysis if q in shown_lanes]


def test_range_over_the_whole_trace_equals_the_stats(outputs):
    summary, _, report = outputs
    stats = summary["statistics"]
    duration = stats["durationNs"]
    agg = report.js("return window.qtrace.selectRange(arguments[0], arguments[1])", 0, duration)
    busy = {row["queue"]: row["busy"] for row in agg["queues"]}
    started = {row["queue"]: row["started"] for row in agg["queues"]}
    for q in stats["queues"]:
        assert busy.get(q["queue"], 0) == pytest.approx(q["busyNs"], abs=1), q["label"]
        assert started.get(q["queue"], 0) == q["items"] - q["pendingAtEnd"], q["label"]
    # Time in blocking calls covers every call's whole duration; the BLOCKING CALLS table leaves
    # out calls without a site or still blocked at the end: its total is at most the range's.
    calls = sum(w["blocked"]["totalNs"] for w in stats.get("waitSites", []))
    assert agg["blocked"] >= calls - len(stats.get("waitSites", []))


def test_section_counts_are_the_analysis_counts(outputs):
    summary, text, report = outputs
    stats = summary["statistics"]
    report.js("window.qtrace.openTab('timeline')")
    sections = {lane["key"]: lane.get("count") for lane in report.state()["lanes"] if lane["kind"] == "section"}
    assert sections["section:threads"] == len(stats["threads"])
    if stats["queues"]:
        assert sections["section:queues"] == len(stats["queues"])
    # The CLI's header line says the same.
    assert f"{len(stats['queues'])} queues, {len(stats['threads'])} threads" in text
