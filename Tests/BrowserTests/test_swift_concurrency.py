"""Swift Concurrency in the report (docs/swift-concurrency.md), on real recordings the Swift
tests wrote (AsyncStackRecordTests): task lanes with their states (ready spans and running
jobs), actor lanes with their visits, and a job's async stack in its details."""
from conftest import recorded_report


def test_task_lanes_show_ready_and_running(driver, fixtures_dir):
    report = recorded_report(driver, fixtures_dir, "real-async-stacks")
    lanes = report.state()["lanes"]
    tasks = [lane for lane in lanes if lane["kind"] == "task"]
    assert len(tasks) == 9, [lane["title"] for lane in tasks]
    titles = " | ".join(lane["title"] for lane in tasks)
    assert "closure #1 in closure #1 in hashChildren(_:)" in titles, titles
    assert "thunk" not in titles and "generic" not in titles, titles
    # Every task has a ready track: one span per job (enqueue → start).
    concurrency = report.js("return window.qtrace.concurrency()")
    assert concurrency["taskReady"] == concurrency["taskJobs"] and sum(concurrency["taskJobs"]) > 9
    report.js("window.qtrace.draw()")
    assert report.severe_logs() == []


def test_item_details_show_the_async_stack(driver, fixtures_dir):
    report = recorded_report(driver, fixtures_dir, "real-async-stacks")
    item = report.js("return window.qtrace.concurrency().stackItem")
    assert item >= 0, "no item with an async stack"
    report.js("window.qtrace.select(arguments[0])", item)
    text = report.js("return document.querySelector('.async-stack').textContent")
    assert "frames" in text and "AsyncStacks.swift:" in text, text
    frames = report.js("return document.querySelectorAll('.async-stack li').length")
    assert frames >= 2
    assert report.severe_logs() == []


def test_actor_lane_shows_its_visits_and_waits(driver, fixtures_dir):
    report = recorded_report(driver, fixtures_dir, "real-actors")
    lanes = [lane for lane in report.state()["lanes"] if lane["kind"] == "actor"]
    assert len(lanes) == 1 and lanes[0]["title"].startswith("actor Ledger 0x"), lanes
    concurrency = report.js("return window.qtrace.concurrency()")
    actor = concurrency["actors"][0]
    assert actor["visits"] == 31 and actor["waitNs"] > 0
    assert concurrency["actorVisits"] == [31]
    report.js("window.qtrace.draw()")
    assert report.severe_logs() == []

