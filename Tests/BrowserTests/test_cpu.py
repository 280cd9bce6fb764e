"""A report recorded with `qtrace record --cpu` (CPURecordTests writes real-cpu.html from the
fixture's cpu-hot): the Stats tab's CPU table names the hot function first for its queue,
with at least half of the queue's samples, and a row selects its queue, whose details draw
the queue's flame graph: the hot function's callee as wide as its share, under its caller;
an item's details draw that item's flame graph."""
import pytest
from selenium.webdriver.common.by import By


@pytest.fixture
def cpu_report(driver, fixtures_dir):
    from conftest import Report
    path = fixtures_dir / "real-cpu.html"
    if not path.exists():
        pytest.fail(f"{path} missing: run the Swift tests with QTRACE_BROWSER_FIXTURES set (make test)")
    return Report(driver, path)


def test_cpu_table_names_the_hot_function_of_the_queue(cpu_report):
    report = cpu_report
    report.js("window.qtrace.openTab('stats')")
    rows = report.js(
        "const t = document.querySelector(\"table[data-table-id='cpu']\");"
        "return t ? [...t.tBodies[0].rows].map(r => [...r.cells].map(c =>"
        "  c.dataset.value !== undefined ? Number(c.dataset.value) : c.textContent)) : null;")
    assert rows, "no CPU table in the Stats tab"
    hot = [row for row in rows if row[0] == "fx.cpu.hot"]
    assert hot, rows
    # Columns: queue, function, self samples, total samples, self %, total %.
    top = max(hot, key=lambda row: row[2])
    assert top[1] == "CPUWork.mixRound(_:_:)"
    assert top[4] >= 50
    assert report.severe_logs() == []


FLAME_FRAMES = (
    "const box = document.querySelector('#details .flame');"
    "if (!box) return null; const width = box.getBoundingClientRect().width;"
    "return [...box.querySelectorAll('.flame-frame')].map(f => { const r = f.getBoundingClientRect();"
    "  return {name: f.textContent, share: r.width / width, top: r.top}; });")


def widest(frames, name):
    return max((f for f in frames if f["name"] == name), key=lambda f: f["share"])


def test_cpu_row_selects_its_queue(cpu_report):
    report = cpu_report
    report.js("window.qtrace.openTab('stats')")
    row = report.driver.find_element(By.CSS_SELECTOR, "table[data-table-id='cpu'] tbody tr")
    row.click()
    assert report.state()["tab"] == "timeline"
    details = report.js("return document.getElementById('details').textContent")
    assert "fx.cpu.hot" in details
    frames = report.js(FLAME_FRAMES)
    assert frames, "no flame graph in the queue's details"
    assert widest(frames, "all samples")["share"] > 0.99
    mix, caller = widest(frames, "CPUWork.mixRound(_:_:)"), widest(frames, "CPUWork.checksumBlock(_:rounds:)")
    assert mix["share"] >= 0.5
    assert caller["top"] < mix["top"], "callers above callees"
    assert report.severe_logs() == []


def test_an_items_details_draw_its_own_flame_graph(cpu_report):
    """cpu-hot's items each spend ~10 ms of CPU in checksumBlock → mixRound: the first item
    with a flame graph shows both, the caller above."""
    report = cpu_report
    report.js("window.qtrace.openTab('timeline')")
    for index in range(200):
        if not report.js("return window.qtrace.select(arguments[0])", index):
            break
        frames = report.js(FLAME_FRAMES)
        if not frames:
            continue
        assert report.js("return document.querySelector('#details .flame').dataset.flame") == f"item:{index}"
        names = {f["name"] for f in frames}
        assert {"CPUWork.mixRound(_:_:)", "CPUWork.checksumBlock(_:rounds:)"} <= names, names
        mix, caller = widest(frames, "CPUWork.mixRound(_:_:)"), widest(frames, "CPUWork.checksumBlock(_:rounds:)")
        assert caller["top"] < mix["top"]
        assert report.severe_logs() == []
        return
    pytest.fail("no item's details draw a flame graph")


def test_clicking_a_function_highlights_the_items_that_ran_it(cpu_report):
    report = cpu_report
    report.js("window.qtrace.openTab('stats')")
    report.driver.find_element(By.CSS_SELECTOR, "table[data-table-id='cpu'] tbody tr").click()
    frame = [f for f in report.driver.find_elements(By.CSS_SELECTOR, "#details .flame .flame-frame")
             if f.text == "CPUWork.mixRound(_:_:)"]
    assert frame
    frame[0].click()
    state = report.state()
    assert state["tab"] == "timeline"
    assert state["filter"]["kind"] == "function"
    items = report.js("return window.qtrace.filteredItems()")
    # 20 items spend their CPU in mixRound; the queue's final empty sync item has no samples.
    assert 15 <= len(items) <= 20, items
    assert report.severe_logs() == []
