"""Reports of real recorded programs (written by GalleryTests.testWriteRealReportsForTheBrowserTests):
they load without errors, show the program's threads and queues, the stats tables equal
`qtrace stats --json`, findings link to their objects, hostile labels stay text."""
import io
import json
import time

import pytest
from selenium.common.exceptions import NoAlertPresentException

REAL = ("real-app", "real-deadlock", "real-hostile", "real-snapshot")


@pytest.fixture
def open_real(driver, fixtures_dir):
    from conftest import Report

    def opener(name):
        path = fixtures_dir / f"{name}.html"
        if not path.exists():
            pytest.fail(f"{path} missing: run the Swift tests with QTRACE_BROWSER_FIXTURES set (make test)")
        summary = json.loads((fixtures_dir / f"{name}.summary.json").read_text())
        return Report(driver, path), summary
    return opener


@pytest.mark.parametrize("name", REAL)
def test_real_report_loads_without_console_errors(open_real, name):
    report, _ = open_real(name)
    for tab in ("stats", "findings", "replay", "timeline"):
        report.js("window.qtrace.openTab(arguments[0])", tab)
    time.sleep(0.3)
    assert report.severe_logs() == []


def test_real_report_has_main_thread_first_and_the_programs_queues(open_real):
    report, summary = open_real("real-app")
    lanes = report.state()["lanes"]
    threads = [lane for lane in lanes if lane["kind"] == "thread"]
    assert threads and "main" in threads[0]["title"]
    titles = {lane["title"] for lane in lanes}
    for queue in summary["statistics"]["queues"]:
        if queue["items"] > 0:
            assert queue["label"] in titles, queue["label"]


def test_real_stats_tables_equal_the_json_summary(open_real):
    report, summary = open_real("real-app")
    report.js("window.qtrace.openTab('stats')")
    rows = report.js(
        "const t = document.querySelector(\"table[data-table-id='queues']\");"
        "return [...t.tBodies[0].rows].map(r => [...r.cells].map(c =>"
        "  c.dataset.value !== undefined ? Number(c.dataset.value) : c.textContent));")
    by_label = {row[0]: row for row in rows}
    queues = summary["statistics"]["queues"]
    assert len(rows) == len(queues)
    for q in queues:
        row = by_label[q["label"]]
        # Columns: label, kind, qos, items, wait p50/p90/p99/max, run p50/p90/p99/max, ...
        assert row[3] == q["items"]
        # Percentiles of no durations show "-", as `qtrace stats` prints them.
        def shown(stats, keys):
            return [stats[k] if stats["count"] else "-" for k in keys]
        assert row[4:8] == shown(q["wait"], ["p50Ns", "p90Ns", "p99Ns", "maxNs"])
        assert row[8:12] == shown(q["run"], ["p50Ns", "p90Ns", "p99Ns", "maxNs"])


def test_real_deadlock_finding_is_listed_and_followed(open_real):
    report, summary = open_real("real-deadlock")
    ids = [f["id"] for f in summary["findings"]]
    assert "deadlock.sync-cycle" in ids
    report.js("window.qtrace.openTab('findings')")
    text = report.js("return document.body.textContent")
    assert "com.example.accounts" in text and "com.example.ledger" in text
    index = ids.index("deadlock.sync-cycle")
    report.js("window.qtrace.followFinding(arguments[0])", index)
    state = report.state()
    assert state["tab"] == "timeline"
    assert report.severe_logs() == []


def test_real_hostile_labels_are_text(open_real):
    report, summary = open_real("real-hostile")
    for tab in ("stats", "findings", "replay", "timeline"):
        report.js("window.qtrace.openTab(arguments[0])", tab)
    with pytest.raises(NoAlertPresentException):
        report.driver.switch_to.alert.text
    assert report.js("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    titles = {lane["title"] for lane in report.state()["lanes"]}
    assert "<img src=x onerror=alert(1)>" in titles
    assert "</script><script>alert(2)</script>" in titles
    assert report.severe_logs() == []


def test_real_report_screenshot_is_not_blank(open_real):
    from PIL import Image, ImageStat
    report, _ = open_real("real-app")
    image = Image.open(io.BytesIO(report.driver.get_screenshot_as_png())).convert("RGB")
    assert len(image.getcolors(maxcolors=1 << 24)) > 200
    assert max(ImageStat.Stat(image).stddev) > 20


def test_real_snapshot_report_says_which_window_it_holds(open_real):
    """A flight-recorder snapshot (FlightRecorderTests: the shim's own at a thread explosion)."""
    report, summary = open_real("real-snapshot")
    window = summary["trace"]["flightRecorder"]
    assert window["reason"] == "thread explosion detected"
    fact = report.js("return document.getElementById('flight-recorder-fact').textContent")
    assert fact.startswith("flight recorder snapshot 1 (thread explosion detected) at ")
    assert report.severe_logs() == []
