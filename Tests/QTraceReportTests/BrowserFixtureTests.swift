// Writes the reports the browser tests (Tests/BrowserTests) load, into the directory named by
// QTRACE_BROWSER_FIXTURES. Skipped when it is not set. See Tests/BrowserTests/README.md.
import Foundation
import XCTest
import QTraceReport
import QTraceViewModel
import QTraceExport
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
            try TraceExport.chromeJSON(input, to: "\(dir)/\(name).chrome.json")
            try SyntheticReport.expectations(input).write(to: URL(fileURLWithPath: "\(dir)/\(name).expect.json"))
        }
        try writeManyQueues(to: dir)
        try ReportWriter.write(Self.byteOrderMarkLabels, to: "\(dir)/bomlabels.html")
        try ReportWriter.write(Self.manyWaitsInsideOneItem, to: "\(dir)/manyblocked.html")
    }

    /// One item that blocks 6,000 times for 3 µs on a semaphore, then 1.23 ms in a group wait:
    /// 19.23 ms blocked inside it (test_report.py; the viewer once summed 5,000 waits at most).
    static var manyWaitsInsideOneItem: ReportInput {
        var input = ReportInput(meta: ReportMeta(title: "many waits in one item", durationNs: 100_000_000))
        input.threads = [ReportThread(index: 0, tid: 1, name: "main", kind: .main, startNs: 0, endNs: 100_000_000)]
        input.queues = [ReportQueue(index: 0, label: "com.example.waits", kind: .serial)]
        input.items.append(ReportItem(queue: 0, kind: .async, submitterThread: 0, thread: 0, enqueueNs: 0, startNs: 1_000,
                                      endNs: 90_000_000))
        input.blocked = (0..<6_000).map { k in
            let start = Int64(10_000 + 10_000 * k)
            return ReportBlockedInterval(thread: 0, startNs: start, endNs: start + 3_000, cause: .semaphore, objectLabel: "semaphore #0")
        }
        input.blocked.append(ReportBlockedInterval(thread: 0, startNs: 70_000_000, endNs: 71_230_000, cause: .groupWait,
                                                   objectLabel: "group #0"))
        SyntheticReport.setAnalysisFigures(&input)
        return input
    }

    /// Queue labels that a careless UTF-8 decoder would change: the strings table's first string
    /// starts with a byte order mark (U+FEFF), which TextDecoder drops by default.
    static var byteOrderMarkLabels: ReportInput {
        var input = ReportInput(meta: ReportMeta(title: "byte order marks", durationNs: 1_000))
        input.threads = [ReportThread(index: 0, tid: 1, name: "main", kind: .main, startNs: 0, endNs: 1_000)]
        input.queues = ["\u{FEFF}first", "second \u{FEFF}", "\u{FEFF}"].enumerated().map {
            ReportQueue(index: $0.offset, label: $0.element, kind: .serial)
        }
        input.items.append(ReportItem(queue: 0, kind: .async, submitterThread: 0, thread: 0, enqueueNs: 100, startNs: 200, endNs: 300))
        SyntheticReport.setAnalysisFigures(&input)
        return input
    }

    /// 100k queues (most with no item or one), with the analysis' figures set per queue, and
    /// what a few of them must show: their columns decoded in the page (test_many_queues.py).
    private func writeManyQueues(to dir: String) throws {
        var input = SyntheticReport.make(items: 60_000, threads: 8, queues: 100_000, seed: 5)
        var counts = [Int](repeating: 0, count: input.queues.count)
        for i in 0..<input.items.count { counts[Int(input.items.queue[i])] += 1 }
        for q in input.queues.indices {
            // Distinct per queue, so a column read off by one row shows.
            (input.queues[q].items, input.queues[q].busyNs) = (counts[q], Int64(1_000 * q + 7))
            input.queues[q].busyShare = Double(1_000 * q + 7) / Double(max(1, input.meta.durationNs))
        }
        try ReportWriter.write(input, to: "\(dir)/manyqueues.html")
        let table = try XCTUnwrap(input.stats.first { $0.id == "queues" })
        let withRows = Set(table.rows.map(\.objectIndex))
        let sample = [0, 1, 6, 7, 12_345, 54_321, input.queues.count - 1].filter(withRows.contains)
            + [(6..<input.queues.count).first { !withRows.contains($0) }].compactMap { $0 }
        let expected: [String: Any] = [
            "items": input.items.count, "queues": input.queues.count,
            "sample": sample.map { q -> [String: Any] in
                let row = table.rows.first { $0.objectIndex == q }
                return [
                    "queue": q, "label": input.queues[q].label, "kind": input.queues[q].kind.rawValue,
                    "qos": input.queues[q].qosName, "items": counts[q], "busyNs": input.queues[q].busyNs,
                    "row": row.map { $0.values.map { v -> Any in
                        switch v {
                        case .number(let d): d
                        case .text(let s): s
                        case .missing: NSNull()
                        }
                    } } ?? NSNull(),
                ]
            },
        ]
        try JSONSerialization.data(withJSONObject: expected, options: [.sortedKeys])
            .write(to: URL(fileURLWithPath: "\(dir)/manyqueues.expect.json"))
    }
}
