"""A report recorded with `qtrace record --sched` (SchedRecordTests writes real-sched.html):
each thread lane has a scheduling-state strip, the item that slept 50 ms is drawn over a
sleeping strip and the spinning one over a running/runnable one, and item details give the
CPU / runnable / sleeping split."""
import json
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

SCHED_COLORS = {"running": (0x3F, 0xB9, 0x50), "runnable": (0xF0, 0xB4, 0x29), "sleeping": (0x4A, 0x6F, 0xA5)}


@pytest.fixture
def sched_report(driver, fixtures_dir):
    from conftest import Report
    path = fixtures_dir / "real-sched.html"
    if not path.exists():
        pytest.fail(f"{path} missing: run the Swift tests with QTRACE_BROWSER_FIXTURES set (make test)")
    summary = json.loads((fixtures_dir / "real-sched.summary.json").read_text())
    return Report(driver, path), summary


def strip_colours(report, lane, t0, t1):
    """Counts of each state's colour along the lane's strip between times t0 and t1."""
    state = report.state()
    plot, visible = state["plot"], state["visible"]
    scale = plot["width"] / (visible["t1"] - visible["t0"])
    x0 = int(plot["left"] + (t0 - visible["t0"]) * scale) + 2
    x1 = int(plot["left"] + (t1 - visible["t0"]) * scale) - 2
    y = lane["schedStrip"] + 2
    dpr = plot["dpr"]
    pixels = report.js(
        "const c = document.getElementById('timeline').getContext('2d');"
        "return Array.from(c.getImageData(arguments[0], arguments[1], arguments[2], 1).data);",
        int(x0 * dpr), int(y * dpr), max(1, int((x1 - x0) * dpr)))
    counts = {name: 0 for name in SCHED_COLORS}
    for k in range(0, len(pixels), 4):
        rgb = tuple(pixels[k:k + 3])
        for name, colour in SCHED_COLORS.items():
            if all(abs(a - b) <= 6 for a, b in zip(rgb, colour)):
                counts[name] += 1
    return counts, max(1, (x1 - x0) * dpr)


def test_sched_strip_is_drawn_under_the_threads(sched_report):
    report, summary = sched_report
    report.js("window.qtrace.openTab('timeline')")
    time.sleep(0.2)
    state = report.state()
    assert state["schedStates"] == ["running", "runnable", "sleeping"]
    assert report.severe_logs() == []
    legend = report.js("return document.getElementById('legend').textContent")
    assert "sleeping" in legend and "runnable" in legend
    threads = summary["statistics"]["threads"]
    lanes = {lane["key"]: lane for lane in state["lanes"] if lane["kind"] == "thread"}
    assert all("schedStrip" in lane for lane in lanes.values())

    def lane_serving(label):
        queue = next(q["queue"] for q in summary["statistics"]["queues"] if q["label"] == label)
        thread = next(t for t in threads if any(s["queue"] == queue for s in t["queues"]))
        return lanes[f"thread:{thread['thread']}"]

    # The sleeper's item: its run is (almost) all sleeping in the strip.
    sleeper = summary["statistics"]["sched"]["topSleepingItems"][0]
    q = next(q for q in summary["statistics"]["sched"]["queues"] if q["label"] == "fx.sleeper")
    assert q["sleepingNs"] >= 40_000_000
    report.js("window.qtrace.select(arguments[0])", sleeper["item"])
    details = report.js("return document.getElementById('details').textContent")
    assert "Sleeping" in details and "On CPU" in details
    report.js("window.qtrace.zoomTo(0, arguments[0])", summary["statistics"]["durationNs"])
    time.sleep(0.2)
    start, end = report.js("return window.qtrace.itemTimes(arguments[0])", sleeper["item"])
    lane = lane_serving("fx.sleeper")
    counts, width = strip_colours(report, lane, start, end)
    assert counts["sleeping"] >= 0.8 * width, counts
    # Hovering the strip names the state.
    state = report.state()
    plot, visible = state["plot"], state["visible"]
    x = plot["left"] + ((start + end) / 2 - visible["t0"]) * plot["width"] / (visible["t1"] - visible["t0"])
    canvas = report.driver.find_element(By.ID, "timeline")
    rect = canvas.rect
    ActionChains(report.driver).move_to_element_with_offset(
        canvas, x - rect["width"] / 2, lane["schedStrip"] + 2 - rect["height"] / 2).perform()
    tooltip = report.driver.find_element(By.ID, "tooltip")
    assert "Thread sleeping" in tooltip.text, tooltip.text
    spinner = next(q for q in summary["statistics"]["sched"]["queues"] if q["label"] == "fx.spinner")
    assert spinner["sleepingNs"] < spinner["wallNs"] / 10
