"""The viewer prints durations exactly as the CLI does: fmtDuration (viewer/10-util.js) against the
table Tests/Fixtures/duration-format.json, which SupportTests.testDurationFormatTable holds
Swift's formatDuration to. Rounding ties (13350 ns) are where the two once disagreed."""
import json

from conftest import ROOT

TABLE = json.loads((ROOT / "Tests/Fixtures/duration-format.json").read_text())["durations"]


def test_viewer_formats_durations_as_the_cli(open_report):
    report = open_report("small")
    shown = report.js("return arguments[0].map((ns) => window.qtrace.formatDuration(ns))", [row["ns"] for row in TABLE])
    assert shown == [row["text"] for row in TABLE]
    negative = report.js("return window.qtrace.formatDuration(-1500)")
    assert negative == "-1.50 µs"
