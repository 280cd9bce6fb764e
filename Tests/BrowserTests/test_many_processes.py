"""A report of 50 processes (written by ManyProcessesTests: `qtrace record` of a shell loop running 50
short Dispatch programs): the header stays one line (a process count that opens the list, not every
pid), the timeline keeps at least half of the 1600x1000 window, the lane groups come busiest first and
collapsed to one summary lane each (but the busiest), the process picker hides and shows groups, and
the Processes table lists every process."""
import pytest
from selenium.webdriver.common.keys import Keys

PROCESSES = 50


@pytest.fixture
def many(driver, fixtures_dir):
    from conftest import recorded_report

    return recorded_report(driver, fixtures_dir, "real-many-processes")


def _process_lanes(report):
    """The lanes of the process groups (a header each: expanded "section" or collapsed "process")."""
    return [lane for lane in report.state()["lanes"] if lane["key"].startswith("section:process:")]


def _rect(report, element_id):
    return report.js("const r = document.getElementById(arguments[0]).getBoundingClientRect();"
                     "return {top: r.top, height: r.height, width: r.width};", element_id)


def test_loads_without_console_errors(many):
    for tab in ("stats", "findings", "replay", "timeline"):
        many.js("window.qtrace.openTab(arguments[0])", tab)
    assert many.severe_logs() == []


def test_the_timeline_keeps_half_the_window(many):
    assert many.js("return [window.outerWidth, window.outerHeight]") == [1600, 1000]
    header = many.js("return document.querySelector('header.topbar').getBoundingClientRect().height")
    assert header < 80, f"the header is {header}px high"
    assert _rect(many, "timeline")["height"] >= 500, _rect(many, "timeline")


def test_the_header_counts_the_processes_and_opens_their_list(many):
    fact = many.driver.find_element("id", "processes-fact")
    assert fact.text.startswith(str(PROCESSES)), fact.text
    panel = many.driver.find_element("id", "process-panel")
    assert not panel.is_displayed()
    fact.click()
    assert panel.is_displayed()
    rows = panel.find_elements("css selector", ".process-list li")
    assert len(rows) == PROCESSES
    assert all(row.find_element("css selector", "input").is_selected() for row in rows)
    # The total thread count's peak, the analysis' figure, beside the threads seen.
    threads = many.js("return [...document.querySelectorAll('#run-facts div')].find("
                      "(d) => d.querySelector('dt').textContent === 'threads').querySelector('dd').textContent")
    assert "peak" in threads, threads
    many.driver.find_element("id", "search").click()  # a click elsewhere closes it
    assert not panel.is_displayed()


def test_groups_come_busiest_first_and_collapsed(many):
    state = many.state()
    processes = many.js("return JSON.parse(document.getElementById('qtrace-header').textContent).header.processes")
    assert len(processes) == PROCESSES
    busy = [p["busy"] for p in processes]
    order = state["processes"]["order"]
    assert sorted(order) == list(range(PROCESSES))
    assert [busy[p] for p in order] == sorted(busy, reverse=True)
    lanes = _process_lanes(many)
    assert [lane["process"] for lane in lanes] == order
    # Only the busiest is expanded; each other process is one summary lane, not a wall of lanes.
    assert lanes[0]["kind"] == "section"
    assert all(lane["kind"] == "process" for lane in lanes[1:])
    # Each source is in its process's group: the collapsed ones show none.
    sources = [lane for lane in state["lanes"] if lane["kind"] == "source"]
    assert all(lanes[0]["top"] < lane["top"] < lanes[1]["top"] for lane in sources), sources
    assert len(state["lanes"]) < 2 * PROCESSES
    assert sorted(state["processes"]["collapsed"]) == sorted(order[1:])


def test_the_picker_hides_and_shows_groups(many):
    many.driver.find_element("id", "process-picker").click()
    panel = many.driver.find_element("id", "process-panel")
    assert panel.is_displayed()
    first, second = many.state()["processes"]["order"][:2]
    box = panel.find_element("css selector", f".process-list li[data-process='{second}'] input")
    box.click()
    assert second not in [lane["process"] for lane in _process_lanes(many)]
    assert many.state()["processes"]["hidden"] == [second]
    assert many.driver.find_element("id", "process-picker").text == f"Processes {PROCESSES - 1}/{PROCESSES}"
    box.click()
    assert second in [lane["process"] for lane in _process_lanes(many)]

    # None, then All; with a filter they apply to the processes it lists only.
    panel.find_element("id", "processes-none").click()
    assert _process_lanes(many) == []
    panel.find_element("id", "processes-all").click()
    assert len(_process_lanes(many)) == PROCESSES
    pid = many.js("return JSON.parse(document.getElementById('qtrace-header').textContent).header.processes[arguments[0]].pid",
                  first)
    field = panel.find_element("css selector", ".popover-head input")
    field.send_keys(str(pid))
    listed = [row for row in panel.find_elements("css selector", ".process-list li") if row.is_displayed()]
    assert [row.get_attribute("data-process") for row in listed] == [str(first)]
    panel.find_element("id", "processes-none").click()
    assert [lane["process"] for lane in _process_lanes(many)] == many.state()["processes"]["order"][1:]
    panel.find_element("id", "processes-all").click()
    assert len(_process_lanes(many)) == PROCESSES

    # Clicking a process's name expands its group and scrolls to it.
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.DELETE)
    last = many.state()["processes"]["order"][-1]
    panel.find_element("css selector", f".process-list li[data-process='{last}'] .process-name").click()
    assert not panel.is_displayed()
    lane = next(lane for lane in _process_lanes(many) if lane["process"] == last)
    assert lane["kind"] == "section"
    canvas = _rect(many, "timeline")
    assert 0 <= lane["top"] < canvas["height"], (lane, canvas)


def test_a_collapsed_group_draws_its_process_life(many):
    """The summary lane paints the process's life (a band) where it ran, and nothing elsewhere."""
    # Without the expanded group (as high as the window at times), the collapsed ones are on screen.
    order = many.state()["processes"]["order"]
    many.js("window.qtrace.showProcesses(arguments[0])", order[1:])
    many.js("window.qtrace.draw()")
    state = many.state()
    lane = next(lane for lane in _process_lanes(many) if lane["kind"] == "process")
    assert lane["top"] + lane["height"] < _rect(many, "timeline")["height"], lane
    process = many.js("return JSON.parse(document.getElementById('qtrace-header').textContent).header.processes[arguments[0]]",
                      lane["process"])
    v0, v1 = state["visible"]["t0"], state["visible"]["t1"]
    plot = state["plot"]
    x_of = lambda t: plot["left"] + (t - v0) * plot["width"] / (v1 - v0)
    inside = x_of(process["offset"] + process["durationNs"] / 2)
    outside = x_of(process["offset"] + process["durationNs"] + state["duration"] / 20) if process["offset"] < state["duration"] / 2 \
        else x_of(process["offset"] - state["duration"] / 20)
    y = lane["top"] + 6
    pixel = lambda x: many.js(
        "const c = document.getElementById('timeline'); const d = window.devicePixelRatio || 1;"
        "return [...c.getContext('2d').getImageData(Math.round(arguments[0] * d), Math.round(arguments[1] * d), 1, 1).data].slice(0, 3);",
        x, y)
    assert pixel(inside) != pixel(outside), (pixel(inside), pixel(outside))


def test_the_processes_table(many):
    many.js("window.qtrace.openTab('stats')")
    rows = many.js("return window.qtrace.shownFigures().tables.processes")
    assert len(rows) == PROCESSES
    assert {row["cells"]["arguments"]["text"] for row in rows} == {"qos", "code-sites", "all-apis"}
    for row in rows:
        assert int(row["cells"]["items"]["value"]) > 0
        assert row["cells"]["busiest_queue"]["text"]
        assert row["cells"]["executable"]["text"] == "qtrace-fixtures"
    cell = many.driver.find_element("css selector", "table[data-table-id='processes'] tbody td.clip")
    assert cell.get_attribute("title") == cell.text
    # A row opens the timeline at that process's group, expanded.
    target = rows[-1]["object"]
    many.driver.find_element("css selector", f"table[data-table-id='processes'] tbody tr[data-row='{PROCESSES - 1}']").click()
    assert many.state()["tab"] == "timeline"
    lane = next(lane for lane in _process_lanes(many) if lane["process"] == target)
    assert lane["kind"] == "section"


def test_long_tables_are_paged(many):
    """260 queues: the Queues table shows 200 rows and a button for the rest; sorting sorts them all."""
    many.js("window.qtrace.openTab('stats')")
    table = "table[data-table-id='queues']"
    # The table's rows are a payload table (docs/report-data.md, "Object tables"): the header gives its row count.
    total = many.js("const h = JSON.parse(document.getElementById('qtrace-header').textContent).header;"
                    "return h.tables[h.stats.find((t) => t.id === 'queues').table].rows")
    assert total > 200
    count = lambda: many.js(f"return document.querySelectorAll(\"{table} tbody tr\").length")
    assert count() == 200
    more = many.driver.find_element("css selector", f"{table} + button, .table-wrap:has({table}) + button.more")
    assert more.text == f"Show {total - 200} more of {total - 200} rows"
    # Sorting by items (descending) brings the largest to the top, from all rows, not the 200 shown.
    items = many.js(f"return [...document.querySelectorAll(\"{table} th\")].findIndex((th) => th.dataset.key === 'items')")
    header = many.driver.find_elements("css selector", f"{table} th button")[items]
    header.click()
    header.click()
    top = many.js(f"return Number(document.querySelector(\"{table} tbody tr\").cells[arguments[0]].dataset.value)", items)
    assert count() == 200
    more.click()
    assert count() == total
    assert not more.is_displayed()
    largest = many.js(f"return Math.max(...[...document.querySelectorAll(\"{table} tbody tr\")]"
                      ".map((tr) => Number(tr.cells[arguments[0]].dataset.value)))", items)
    assert top == largest
