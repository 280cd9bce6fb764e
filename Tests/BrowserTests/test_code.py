"""Code identity in the report: what ran and who asked in the item details, the search box,
the Tasks lanes, the Code table's highlight and findings' site links; symbols are text."""
import time

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys


def test_item_details_show_what_ran_where_and_who_asked(open_report, expectations):
    expect = expectations["small"]
    report = open_report("small")
    assert report.js("return window.qtrace.select(arguments[0])", expect["chainItem"])
    details = report.driver.find_element(By.ID, "details")
    what = details.find_element(By.CSS_SELECTOR, ".what-ran")
    assert expect["chainWhatRan"] in what.text and expect["chainWhatRanWhere"] in what.text
    symbol = [c["symbol"] for c in expect["codes"] if c["name"] == expect["chainWhatRan"]][0]
    assert what.get_attribute("title") == symbol
    enqueued = details.find_element(By.CSS_SELECTOR, ".enqueued-at")
    assert expect["chainEnqueuedAt"] in enqueued.text and expect["chainEnqueuedAtWhere"] in enqueued.text
    chain = details.find_elements(By.CSS_SELECTOR, ".causal-chain li")
    assert len(chain) == expect["chainDepth"]
    assert f"#{expect['chainParent']} {expect['chainParentCode']}" in chain[0].text
    # The chain's links select the enqueuing item.
    chain[0].find_element(By.CSS_SELECTOR, "button.link").click()
    assert report.state()["selected"] == expect["chainParent"]
    assert report.severe_logs() == []


def test_search_box_filters_items(open_report, expectations):
    expect = expectations["small"]
    report = open_report("small")
    box = report.driver.find_element(By.ID, "search")
    box.send_keys("loader.load")
    report.js("return new Promise((resolve) => setTimeout(resolve, 400))")
    state = report.state()
    assert state["filter"]["kind"] == "search"
    assert state["filter"]["count"] == expect["search"]["loader.load"]
    count = report.driver.find_element(By.ID, "search-count")
    assert count.get_attribute("data-count") == str(expect["search"]["loader.load"])
    # Enter jumps to a matching item: one whose code is Loader.load()'s closure.
    box.send_keys(Keys.ENTER)
    first = report.state()["selected"]
    assert first in report.js("return window.qtrace.filteredItems()")
    assert "Loader.load()" in report.driver.find_element(By.CSS_SELECTOR, "#details .what-ran").text
    report.driver.find_element(By.ID, "search").send_keys(Keys.ENTER)
    assert report.state()["selected"] != first
    # Case-insensitive; queue labels match too; no match is no match.
    for text, expected in expect["search"].items():
        assert report.js("return window.qtrace.search(arguments[0])", text) == expected, text
    report.driver.find_element(By.ID, "search").send_keys(Keys.ESCAPE)
    assert report.state()["filter"] is None and report.state()["search"] == ""
    assert report.severe_logs() == []


def test_search_is_fast_on_a_large_report(open_report, expectations):
    report = open_report("medium")
    started = time.perf_counter()
    count = report.js("return window.qtrace.search('loader')")
    elapsed = time.perf_counter() - started
    assert count == expectations["medium"]["search"]["LOADER"]
    frame_ms = report.js("return window.qtrace.draw()")
    print(f"medium report: search over {expectations['medium']['items']} items in {elapsed * 1000:.0f} ms, "
          f"filtered frame {frame_ms:.1f} ms")
    assert report.severe_logs() == []


def test_task_lanes_one_per_task_children_after_their_parent(open_report, expectations):
    expect = expectations["small"]
    report = open_report("small")
    lanes = report.state()["lanes"]
    tasks = [lane for lane in lanes if lane["kind"] == "task"]
    assert len(tasks) == expect["tasks"] > 0
    assert sorted(int(lane["key"].split(":")[1]) for lane in tasks) == list(range(expect["tasks"]))
    assert all(lane["title"].startswith("Task #") for lane in tasks)
    # Many tasks: the group starts collapsed.
    medium = open_report("medium")
    keys = [lane["key"] for lane in medium.state()["lanes"]]
    assert expectations["medium"]["tasks"] > 50
    assert "section:tasks" in keys and not any(k.startswith("task:") for k in keys)


def test_clicking_a_code_row_highlights_exactly_its_items(open_report, expectations):
    expect = expectations["small"]
    report = open_report("small")
    report.js("window.qtrace.openTab('stats')")
    rows = report.driver.find_elements(By.CSS_SELECTOR, "table[data-table-id='code'] tbody tr")
    assert len(rows) == sum(1 for n in expect["codeItems"] if n > 0)
    code = int(rows[1].get_attribute("data-object"))
    rows[1].click()
    state = report.state()
    assert state["tab"] == "timeline"
    assert state["filter"]["kind"] == "code" and state["filter"]["object"] == code
    assert state["filter"]["count"] == expect["codeItems"][code]
    assert len(report.js("return window.qtrace.filteredItems()")) == expect["codeItems"][code]
    report.js("window.qtrace.draw()")
    # The same row again clears it; so does Escape.
    report.js("window.qtrace.openTab('stats')")
    row = report.driver.find_element(By.CSS_SELECTOR, f"table[data-table-id='code'] tr[data-object='{code}']")
    assert "active" in row.get_attribute("class")
    row.click()
    assert report.state()["filter"] is None
    report.js("window.qtrace.highlightCode(arguments[0])", code)
    report.driver.find_element(By.ID, "timeline").send_keys(Keys.ESCAPE)
    assert report.state()["filter"] is None
    assert report.severe_logs() == []


def test_finding_site_links_highlight_items_or_blocked_intervals(open_report, expectations):
    expect = expectations["small"]
    report = open_report("small")
    report.js("window.qtrace.openTab('findings')")
    links = report.driver.find_elements(By.CSS_SELECTOR, "#findings .site-link")
    assert links
    by_site = {int(link.get_attribute("data-site")): link for link in links}
    item_site = [s for s in by_site if expect["sites"][s]["code"] >= 0][0]
    wait_site = [s for s in by_site if expect["sites"][s]["code"] < 0][0]
    by_site[item_site].click()
    state = report.state()
    assert state["filter"]["kind"] == "site" and state["filter"]["count"] == expect["siteItems"][item_site]
    assert state["highlight"] is None, "the link does not follow the finding itself"
    report.js("window.qtrace.openTab('findings')")
    report.driver.find_element(By.CSS_SELECTOR, f"#findings .site-link[data-site='{wait_site}']").click()
    state = report.state()
    assert state["filter"]["blocked"] == expect["siteBlocked"][wait_site] > 0
    assert len(report.js("return window.qtrace.filteredBlocked()")) == expect["siteBlocked"][wait_site]
    assert "Call site" in report.driver.find_element(By.ID, "details").text
    assert report.severe_logs() == []


def test_hostile_symbols_are_text(open_report, expectations):
    expect = expectations["hostile"]
    report = open_report("hostile")
    hostile = expect["hostileLabels"][0]
    code = [c for c, entry in enumerate(expect["codes"]) if entry["name"] == hostile][0]
    report.js("window.qtrace.highlightCode(arguments[0])", code)
    item = report.js("return window.qtrace.filteredItems()[0]")
    report.js("window.qtrace.select(arguments[0])", item)
    assert hostile in report.driver.find_element(By.CSS_SELECTOR, "#details .what-ran").text
    assert report.js("return window.qtrace.search(arguments[0])", "<img") > 0
    for tab in ("stats", "findings", "timeline"):
        report.js("window.qtrace.openTab(arguments[0])", tab)
    with pytest.raises(NoAlertPresentException):
        report.driver.switch_to.alert.text
    assert report.js("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert report.js("return document.scripts.length") == 3
    assert hostile in report.js("return document.getElementById('stats').textContent")
    assert report.severe_logs() == []
