// Writes the reports the browser tests (Tests/BrowserTests) load, into the directory named by
// QTRACE_BROWSER_FIXTURES. Skipped when it is not set. See Tests/BrowserTests/README.md.
import Foundation
import XCTest
import QTraceReport
import QTraceReportTestSupport

final class BrowserFixtureTests: XCTestCase {
    func testWriteBrowserFixtures() throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"], !dir.isEmpty else {
            throw XCTSkip("set QTRACE_BROWSER_FIXTURES to write the browser test reports")
        }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fixtures: [(String, ReportInput)] = [
            ("small", SyntheticReport.make(items: 3_000, threads: 6, queues: 12, seed: 1)),
            ("hostile", SyntheticReport.make(items: 2_000, threads: 5, queues: 10, seed: 2, hostile: true)),
            ("medium", SyntheticReport.make(items: 200_000, threads: 10, queues: 16, seed: 3)),
            ("empty", ReportInput(meta: ReportMeta(title: "empty trace", durationNs: 0))),
        ]
        for (name, input) in fixtures {
            try ReportWriter.write(input, to: "\(dir)/\(name).html")
            try ReportWriter.exportChromeJSON(input, to: "\(dir)/\(name).chrome.json")
            try SyntheticReport.expectations(input).write(to: URL(fileURLWithPath: "\(dir)/\(name).expect.json"))
        }
    }
}
