"""A report of two processes (written by MultiProcessTests.testForkedProcessesMakeOneReportWithALaneGroupEach:
`qtrace-fixtures fork`, parent and child both using Dispatch): it loads without errors, draws a lane
group per process (a header row, then that process's threads and queues), and each process's item
is drawn inside its own group."""
import pytest


@pytest.fixture
def merged(driver, fixtures_dir):
    from conftest import recorded_report

    return recorded_report(driver, fixtures_dir, "real-merged")


def _groups(lanes):
    """Lanes split at the process headers: [(header, [lanes of that process])]."""
    groups = []
    for lane in lanes:
        if lane["key"].startswith("section:process:"):
            groups.append((lane, []))
        elif groups:
            groups[-1][1].append(lane)
    return groups


def test_merged_report_loads_without_console_errors(merged):
    for tab in ("stats", "findings", "replay", "timeline"):
        merged.js("window.qtrace.openTab(arguments[0])", tab)
    assert merged.severe_logs() == []


def test_a_lane_group_per_process(merged):
    groups = _groups(merged.state()["lanes"])
    assert len(groups) == 2
    for (header, lanes), queue in zip(groups, ("fx.parent", "fx.forked")):
        assert header["title"].split(" ")[1] == "qtrace-fixtures", header["title"]
        assert " @ " in header["title"]
        titles = [lane["title"] for lane in lanes]
        assert queue in titles, titles
        assert any(lane["kind"] == "thread" for lane in lanes)
    assert groups[0][0]["title"] != groups[1][0]["title"], "two different pids"


def _pixel(report, x, y):
    return report.js(
        "const c = document.getElementById('timeline'); const r = c.getBoundingClientRect();"
        "const d = window.devicePixelRatio || 1;"
        "return [...c.getContext('2d').getImageData(Math.round((arguments[0] - r.left) * d),"
        " Math.round((arguments[1] - r.top) * d), 1, 1).data].slice(0, 3);", x, y)


def test_both_groups_are_drawn_with_their_items(merged):
    merged.js("window.qtrace.draw()")
    headers = [lane for lane in merged.state()["lanes"] if lane["key"].startswith("section:process:")]
    rect = merged.js("const r = document.getElementById('timeline').getBoundingClientRect(); return [r.left, r.top];")
    for header in headers:
        # The header row is painted in its own colour (#1c2433) across the gutter.
        assert _pixel(merged, rect[0] + 5, rect[1] + header["top"] + 3) == [0x1c, 0x24, 0x33]
    # Item 0 is the parent's, item 1 the child's (the merged report keeps process order).
    for item, (low, high) in ((0, (headers[0]["top"], headers[1]["top"])), (1, (headers[1]["top"], 10 ** 9))):
        assert merged.js("return window.qtrace.select(arguments[0])", item)
        merged.js("window.qtrace.draw()")
        point = merged.js("return window.qtrace.locate(arguments[0])", item)
        assert point is not None, f"item {item} not on screen"
        assert low < point["y"] - rect[1] < high, (item, point, low, high)
