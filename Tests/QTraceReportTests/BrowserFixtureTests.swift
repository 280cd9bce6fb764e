// Writes the reports the browser tests (Tests/BrowserTests) load, into the directory named by
// QTRACE_BROWSER_FIXTURES. Skipped when it is not set. See Tests/BrowserTests/README.md.
import Foundation
import XCTest
import QTraceReport
import QTraceViewModel
import QTraceExport
import QTraceReportTestSupport
import QTraceFormat

final class BrowserFixtureTests: XCTestCase {
    func testWriteBrowserFixtures() throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"], !dir.isEmpty else {
            throw XCTSkip("set QTRACE_BROWSER_FIXTURES to write the browser test reports")
        }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fixtures: [(String, (input: ReportInput, events: Int))] = [
            ("small", SyntheticReport.trace(items: 3_000, threads: 6, queues: 12, seed: 1)),
            ("hostile", SyntheticReport.trace(items: 2_000, threads: 5, queues: 10, seed: 2, hostile: true)),
            ("medium", SyntheticReport.trace(items: 200_000, threads: 10, queues: 16, seed: 3)),
            ("empty", (ReportInput(meta: ReportMeta(title: "empty trace", durationNs: 0)), 0)),
        ]
        for (name, (input, events)) in fixtures {
            try ReportWriter.write(input, to: "\(dir)/\(name).html")
            try TraceExport.chromeJSON(input, to: "\(dir)/\(name).chrome.json")
            try SyntheticReport.expectations(input, events: events).write(to: URL(fileURLWithPath: "\(dir)/\(name).expect.json"))
        }
        try writeManyQueues(to: dir)
        try ReportWriter.write(Self.byteOrderMarkLabels, to: "\(dir)/bomlabels.html")
        try ReportWriter.write(Self.manyWaitsInsideOneItem, to: "\(dir)/manyblocked.html")
        try ReportWriter.write(ThreadLaneOrderTests.parkedWorkerPool, to: "\(dir)/parkedpool.html")
    }

    /// One item that blocks 6,000 times for 3 µs on a semaphore, then 1.23 ms in a group wait:
    /// 19.23 ms blocked inside it (test_report.py; the viewer once summed 5,000 waits at most).
    static var manyWaitsInsideOneItem: ReportInput {
        var list = EventList()
        let (main, queue, semaphore, group): (Int32, UInt64, UInt64, UInt64) = (1, 0x10_0000, 0x30_0000, 0x20_0000)
        list.add(.threadStart, 0, tid: main)
        list.add(.queueCreate, 0, tid: main, a: queue, string: "com.example.waits")
        list.add(.semCreate, 0, tid: main, a: semaphore)
        list.add(.groupCreate, 0, tid: main, a: group)
        list.add(.enqueue, 0, tid: main, arg: ItemKind.async.rawValue, a: 1, b: queue)
        list.add(.start, 1_000, tid: main, arg: ItemKind.async.rawValue, a: 1)
        for k in 0..<6_000 {
            let start = Int64(10_000 + 10_000 * k)
            list.add(.semWaitBegin, start, tid: main, a: semaphore, b: ~0)
            list.add(.semWaitEnd, start + 3_000, tid: main, arg: 2, a: semaphore)
        }
        list.add(.groupWaitBegin, 70_000_000, tid: main, a: group, b: ~0)
        list.add(.groupWaitEnd, 71_230_000, tid: main, a: group)
        list.add(.end, 90_000_000, tid: main, a: 1)
        list.add(.mark, 100_000_000, tid: main, string: "end")
        return SyntheticReport.analysed(list.sorted, mainTid: main, commandLine: "many-waits")
    }

    /// Queue labels that a careless UTF-8 decoder would change: the strings table's first string
    /// starts with a byte order mark (U+FEFF), which TextDecoder drops by default.
    static var byteOrderMarkLabels: ReportInput {
        var list = EventList()
        list.add(.threadStart, 0, tid: 1)
        for (q, label) in ["\u{FEFF}first", "second \u{FEFF}", "\u{FEFF}"].enumerated() {
            list.add(.queueCreate, 0, tid: 1, a: 0x10_0000 + UInt64(q) * 0x100, string: label)
        }
        list.add(.enqueue, 100, tid: 1, arg: ItemKind.async.rawValue, a: 1, b: 0x10_0000)
        list.add(.start, 200, tid: 1, arg: ItemKind.async.rawValue, a: 1)
        list.add(.end, 300, tid: 1, a: 1)
        list.add(.mark, 1_000, tid: 1, string: "end")
        return SyntheticReport.analysed(list.sorted, mainTid: 1, commandLine: "byte-order-marks")
    }

    /// 100k queues (most with no item or one), and what a few of them must show: their columns
    /// decoded in the page (test_many_queues.py). Each queue's busy time is replaced by a value
    /// distinct per queue (many are 0 in the analysis), so that a column read one row off shows.
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
