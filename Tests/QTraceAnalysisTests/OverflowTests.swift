// The overflow policy (docs/trace-format.md, "Validation"): behind the reader's bounds, sums
// that can still exceed 64 bits saturate. One input per site that trapped on fuzzed traces
// (issue 18), fed straight to the analysis with times the reader would refuse, and the same
// lie written to a file, where the reader drops it and every view says so.
import QTraceFormat
import QTraceText
import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class OverflowTests: XCTestCase {
    static let huge: UInt64 = 1 << 62

    /// Five items enqueued at 0 on a concurrent queue, started ~2^62 ns later: 5 × 2^62 ns of
    /// waiting for a thread (ModelBuilder+Items startQueued; WaitBreakdown.totalNs; StatsText).
    private func hugeWaits() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.queue(0x3000, "com.example.wide", concurrent: true)
        for k: UInt64 in 0..<5 {
            s.thread(Int32(200 + k))
            s.item(k + 1, on: 0x3000, at: 0, runOn: Int32(200 + k), start: Self.huge + k, end: Self.huge + k + 1)
        }
        return s
    }

    func testWaitByCauseSumsSaturate() throws {
        let result = hugeWaits().analysis()
        let queue = try XCTUnwrap(result.statistics.queues.first { result.model.queues[$0.queue].label == "com.example.wide" })
        XCTAssertEqual(queue.waitByCause.threadNs, .max)
        XCTAssertEqual(queue.waitByCause.totalNs, .max)
        XCTAssertTrue(StatsText.render(result, tracePath: nil).contains("com.example.wide"))
    }

    func testWaitBreakdownTotalSaturates() {
        var wait = WaitBreakdown()
        wait.behindPreviousNs = 1 << 63
        wait.threadNs = 1 << 63
        wait.unattributedNs = 1
        XCTAssertEqual(wait.totalNs, .max)
    }

    /// Timer handlers that each claim 2^64-1 fires (ModelBuilder+Objects timerLateness).
    func testTimerFireCountSaturates() throws {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(200)
        s.source(0x5000, type: .timer, queue: globalDefault, at: 0)
        s.add(.sourceSetTimer, 0, tid: mainTid, a: 0x5000, b: s.uptime(ms(10)), c: ms(10), d: 0)
        s.handler(0x5000, data: .max, from: ms(10), to: ms(11), on: 200)
        s.handler(0x5000, data: .max, from: ms(20), to: ms(21), on: 200)
        let runs = try XCTUnwrap(s.model().sources.first).runs
        XCTAssertEqual(runs.count, 2)
        XCTAssertNil(runs[1].latenessNs, "the programmed time of fire 2^64-1 is past any clock")
    }

    /// Two queues targeting one, each with an item running 2^63 ns (Statistics QueueTreeNode.forest).
    func testQueueTreeSubtreeSumsSaturate() throws {
        var s = TraceScript()
        s.mainAndGlobals()
        s.queue(0x3000, "root")
        s.queue(0x3100, "left", target: 0x3000)
        s.queue(0x3200, "right", target: 0x3000)
        s.thread(200)
        s.thread(201)
        s.item(1, on: 0x3100, at: 0, runOn: 200, start: 1, end: (1 << 63) + 1)
        s.item(2, on: 0x3200, at: 0, runOn: 201, start: 1, end: (1 << 63) + 1)
        let result = s.analysis()
        let root = try XCTUnwrap(result.statistics.queueTree.first { result.model.queues[$0.queue].label == "root" })
        XCTAssertEqual(root.subtreeRunNs, .max)
        XCTAssertEqual(root.subtreeQueues, 3)
    }

    /// The same waits written to a trace file: the reader drops the STARTs and ENDs past 2^50 ns,
    /// and the stats header, the JSON summary and the findings give the one count.
    func testALyingTraceFileIsReportedInconsistentEverywhere() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-overflow-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lie.qtrace"
        let writer = try TraceWriter(path: path, pid: 42, mainTid: mainTid)
        writer.processExited = false
        try writer.append(contentsOf: hugeWaits().sortedEvents)
        try writer.finish()
        let file = try TraceFile(path: path)
        XCTAssertEqual(file.invalidRecordCount, 10)
        let result = Analysis.run(file: file)
        XCTAssertEqual(result.model.info.invalidEvents, 10)
        XCTAssertTrue(StatsText.render(result, tracePath: path).contains("WARNING    inconsistent trace: 10 events dropped"))
        XCTAssertEqual(AnalysisSummary(result: result, tracePath: path, generator: "test").trace.invalidEvents, 10)
        let finding = try XCTUnwrap(result.findings.first { $0.id == "trace.inconsistent" })
        XCTAssertTrue(finding.message.hasPrefix("inconsistent trace: 10 events dropped"))
    }
}
