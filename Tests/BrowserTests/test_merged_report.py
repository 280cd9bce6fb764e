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
    # Groups are ordered busiest first (which process that is depends on timing): each one
    # holds one of the two processes' queues.
    found = set()
    for header, lanes in groups:
        assert header["title"].split(" ")[1] == "qtrace-fixtures", header["title"]
        assert " @ " in header["title"]
        titles = [lane["title"] for lane in lanes]
        mine = {"fx.parent", "fx.forked"} & set(titles)
        assert len(mine) == 1, titles
        found |= mine
        assert any(lane["kind"] == "thread" for lane in lanes)
    assert found == {"fx.parent", "fx.forked"}
    assert groups[0][0]["title"] != groups[1][0]["title"], "two different pids"


def _pixel(report, x, y):
    return report.js(
        "const c = document.getElementById('timeline'); const r = c.getBoundingClientRect();"
        "const d = window.devicePixelRatio || 1;"
        "return [...c.getContext('2d').getImageData(Math.round((arguments[0] - r.left) * d),"
        " Math.round((arguments[1] - r.top) * d), 1, 1).data].slice(0, 3);", x, y)


def test_both_groups_are_drawn_with_their_items(merged):
    merged.js("window.qtrace.draw()")
    lanes = merged.state()["lanes"]
    headers = [lane for lane in lanes if lane["key"].startswith("section:process:")]
    rect = merged.js("const r = document.getElementById('timeline').getBoundingClientRect(); return [r.left, r.top];")
    for header in headers:
        # The header row is painted in its own colour (#1c2433) across the gutter.
        assert _pixel(merged, rect[0] + 5, rect[1] + header["top"] + 3) == [0x1c, 0x24, 0x33]
    # Item 0 is the parent's, item 1 the child's (the merged report keeps process order in its
    # data); the lane groups are drawn busiest first, so find each process's group by its queue.
    bounds = {}
    for g, (header, members) in enumerate(_groups(lanes)):
        low = header["top"]
        high = headers[g + 1]["top"] if g + 1 < len(headers) else 10 ** 9
        for queue in ("fx.parent", "fx.forked"):
            if any(lane["title"] == queue for lane in members):
                bounds[queue] = (low, high)
    for item, queue in ((0, "fx.parent"), (1, "fx.forked")):
        low, high = bounds[queue]
        assert merged.js("return window.qtrace.select(arguments[0])", item)
        merged.js("window.qtrace.draw()")
        point = merged.js("return window.qtrace.locate(arguments[0])", item)
        assert point is not None, f"item {item} not on screen"
        assert low < point["y"] - rect[1] < high, (item, point, low, high)
