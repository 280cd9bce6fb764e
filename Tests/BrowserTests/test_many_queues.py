"""A report of 100k queues (the per-queue data in payload columns, docs/report-data.md "Object
tables"): it opens, and a sample of queues shows, in its lane, details panel and Stats row, the
label, kind, item count and busy time the input gave it: a column decoded at the wrong offset or
with the wrong encoding would show another queue's values."""
import json

import pytest


@pytest.fixture(scope="module")
def many(driver, fixtures_dir):
    from conftest import Report
    report = Report(driver, fixtures_dir / "manyqueues.html")
    report.expect = json.loads((fixtures_dir / "manyqueues.expect.json").read_text())
    return report


def _duration(ns):
    """The CLI's formatDuration (Tests/Fixtures/duration-format.json), for the values the
    fixture uses: whole nanoseconds below 1 µs, else three significant digits (no rounding ties)."""
    if ns < 1e3:
        return f"{round(ns)} ns"
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            x = ns / scale
            break
    digits = 0 if x >= 100 else 1 if x >= 10 else 2
    return f"{x:.{digits}f} {unit}"


def test_opens_with_every_queue(many):
    state = many.state()
    assert state["items"] == many.expect["items"]
    section = next(lane for lane in state["lanes"] if lane["key"] == "section:queues")
    assert section["count"] == many.expect["queues"]
    assert many.severe_logs() == []


def test_sampled_queues_show_their_own_figures(many):
    assert len(many.expect["sample"]) >= 5
    for queue in many.expect["sample"]:
        q = queue["queue"]
        shown = many.js("return window.qtrace.showQueue(arguments[0])", q)
        assert shown["title"] == queue["label"], queue
        assert shown["facts"]["Items"] == f"{queue['items']:,}", queue
        assert shown["facts"]["Busy"].startswith(_duration(queue["busyNs"]) + " ("), (queue, shown["facts"])
        # Its lane (revealed out of its folded subtree) carries its label.
        lanes = {lane["key"]: lane for lane in many.state()["lanes"]}
        assert lanes[f"queue:{q}"]["title"] == queue["label"]
        # Its Stats row (a payload table too), cell by cell; None where the queue has no row.
        assert many.js("return window.qtrace.statsRow('queues', arguments[0])", q) == queue["row"], queue


def test_stats_tab_lists_the_rows_with_their_labels(many):
    many.js("window.qtrace.openTab('stats')")
    k = many.js("return document.querySelector(\"table[data-table-id='queues'] th[data-key='items']\").cellIndex")
    shown = many.js("return [...document.querySelectorAll(\"table[data-table-id='queues'] tbody tr\")].slice(0, 5)"
                    ".map((tr) => [Number(tr.dataset.row), tr.cells[0].textContent, Number(tr.cells[arguments[0]].dataset.value)])", k)
    assert len(shown) == 5
    labels = {q["label"]: q for q in many.expect["sample"] if q["row"] is not None}
    for row, label, items in shown:
        if label in labels:
            assert items == labels[label]["row"][k]
    assert many.severe_logs() == []


def test_labels_starting_with_a_byte_order_mark_keep_it(driver, fixtures_dir):
    """The strings table is decoded in one piece: a leading U+FEFF must neither vanish nor shift
    every later string (the report would refuse to open)."""
    from conftest import Report
    report = Report(driver, fixtures_dir / "bomlabels.html")
    # The analysis lists the main and global queues it found too: theirs must stay whole as well.
    queues = sorted(int(lane["key"].split(":")[1]) for lane in report.state()["lanes"] if lane["key"].startswith("queue:"))
    titles = [report.js("return window.qtrace.showQueue(arguments[0]).title", q) for q in queues]
    assert [t for t in titles if "\ufeff" in t] == ["\ufefffirst", "second \ufeff", "\ufeff"]
    assert all(t.startswith("com.apple.") for t in titles if "\ufeff" not in t), titles
    assert report.severe_logs() == []
