"""The report header's facts (duration, items, threads, ..., overhead, qtrace version) in a 1600x900
window: each one shown is whole inside the window (they used to run past its right edge), the
header stays one line, and when the room is short the least useful facts go first and are listed on
hover instead. Opened on the synthetic reports and on every real report the Swift tests wrote."""
import pytest

from conftest import FIXTURES, Report

FACTS = """
const facts = document.getElementById('run-facts');
return {
  width: window.innerWidth,
  header: document.querySelector('header.topbar').getBoundingClientRect().height,
  title: facts.title,
  facts: [...facts.children].map((div) => {
    const dd = div.querySelector('dd');
    const r = div.getBoundingClientRect();
    return {label: div.querySelector('dt').textContent, shown: getComputedStyle(div).display !== 'none',
            left: r.left, right: r.right, long: div.classList.contains('long'),
            cut: dd.scrollWidth > dd.clientWidth + 0.5};
  }),
};
"""


def _reports(fixtures_dir):
    real = sorted(p.stem for p in fixtures_dir.glob("real-*.html"))
    # The 50-process report's long command line and process count once pushed its facts out.
    if "real-many-processes" not in real:
        pytest.fail("real-many-processes.html missing: run the Swift tests with QTRACE_BROWSER_FIXTURES set (make test)")
    return list(FIXTURES) + real


def _facts_at(driver, fixtures_dir, name, width):
    driver.set_window_size(width, 900)
    try:
        report = Report(driver, fixtures_dir / f"{name}.html")
        return report.js(FACTS)
    finally:
        driver.set_window_size(1600, 1000)


def test_every_fact_shown_is_whole_at_1600(driver, fixtures_dir):
    for name in _reports(fixtures_dir):
        got = _facts_at(driver, fixtures_dir, name, 1600)
        assert got["width"] == 1600, got
        assert got["header"] < 80, f"{name}: the header is {got['header']}px high"
        shown = [f for f in got["facts"] if f["shown"]]
        assert [f["label"] for f in shown][:2] == ["duration", "items"], (name, got)
        for f in shown:
            assert 0 <= f["left"] and f["right"] <= got["width"], (name, f)
            # A sentence (the flight recorder's window) is cut by design, whole on hover.
            assert f["long"] or not f["cut"], (name, f)


def test_a_narrow_window_drops_the_least_useful_facts_first(driver, fixtures_dir):
    got = _facts_at(driver, fixtures_dir, "small", 1200)
    shown = {f["label"] for f in got["facts"] if f["shown"]}
    dropped = [f["label"] for f in got["facts"] if not f["shown"]]
    assert "qtrace" in dropped, got
    assert {"duration", "items", "threads"} <= shown, got
    assert all(f["right"] <= got["width"] for f in got["facts"] if f["shown"]), got
    # What is not shown is still there, on hover.
    for label in dropped:
        assert label in got["title"], got
    # Nothing is dropped when there is room.
    wide = _facts_at(driver, fixtures_dir, "small", 2400)
    assert all(f["shown"] for f in wide["facts"]), wide
    assert wide["title"] == "", wide
