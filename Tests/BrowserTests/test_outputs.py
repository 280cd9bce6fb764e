"""The report of a trace recorded onto a full disk (written by
OutputFaultTests.testRecordingOnAFullDiskKeepsAValidTraceAndCountsTheRest): its header facts
say how many events were dropped and why, as `qtrace stats` does (docs/outputs.md)."""
import os
import pathlib

import pytest


def test_full_disk_report_says_why_events_were_dropped(driver):
    from conftest import Report

    # Not the fixtures_dir fixture: this report comes from the recording tests only.
    path = pathlib.Path(os.environ.get("QTRACE_BROWSER_FIXTURES", "/nonexistent")) / "real-full-disk.html"
    if not path.exists():
        pytest.skip(f"{path} missing: OutputFaultTests writes it when it can mount a tmpfs (root)")
    report = Report(driver, path)
    # textContent: the page styles the labels in capitals.
    facts = report.js(
        "return [...document.querySelectorAll('#run-facts > div')].map(d =>"
        "  [d.querySelector('dt').textContent, d.querySelector('dd').textContent, d.className]);")
    dropped = {label: (value, cls) for label, value, cls in facts}["dropped"]
    assert dropped[0].endswith(": disk full"), dropped
    assert "bad" in dropped[1].split()
    assert int(dropped[0].split(":")[0].replace(",", "")) > 0
    assert report.severe_logs() == []
