import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceText
import QTraceAnalysisTestSupport

final class SummaryTests: XCTestCase {
    func summary(_ s: TraceScript) -> AnalysisSummary {
        AnalysisSummary(result: s.analysis(), tracePath: "t.qtrace", generator: "qtrace test")
    }

    func testJSONIsVersionedDeterministicAndRoundTrips() throws {
        let s = DiagnosticsTests.cleanProgram()
        let a = try summary(s).jsonData(), b = try summary(s).jsonData()
        XCTAssertEqual(a, b, "same trace, same bytes")
        let text = String(decoding: a, as: UTF8.self)
        XCTAssertTrue(text.contains("\"schema\" : \"qtrace-summary/1.4\""), String(text.prefix(200)))
        let decoded = try AnalysisSummary.decode(a)
        XCTAssertEqual(decoded.schema, AnalysisSummary.schemaVersion)
        XCTAssertEqual(decoded.trace, summary(s).trace)
        XCTAssertEqual(decoded.statistics.queues.map(\.label), summary(s).statistics.queues.map(\.label))
        XCTAssertEqual(decoded.findings, [])
    }

    func testDecodeRefusesOtherDocuments() {
        XCTAssertThrowsError(try AnalysisSummary.decode(Data("{\"a\": 1}".utf8))) {
            XCTAssertEqual($0 as? SummaryError, .notASummary)
        }
        XCTAssertThrowsError(try AnalysisSummary.decode(Data("{\"schema\": \"qtrace-summary/9\"}".utf8))) {
            XCTAssertEqual($0 as? SummaryError, .unsupportedSchema("qtrace-summary/9"))
        }
    }

    func testFindingCountsAndTraceFacts() {
        var s = TraceScript()
        s.info.droppedEvents = 3
        s.mainAndGlobals()
        s.item(1, on: mainQueueAddress, at: 0, runOn: mainTid, start: 0, end: ms(150))
        let sum = summary(s)
        XCTAssertEqual(sum.findingCounts, FindingCounts(error: 1, warning: 1, info: 0))
        XCTAssertEqual(sum.trace.durationNs, ms(150))
        XCTAssertEqual(sum.trace.droppedEvents, 3)
        XCTAssertEqual(sum.trace.pid, 42)
        XCTAssertEqual(sum.statistics.overhead.estimatedNs, UInt64(sum.trace.events) * 20)
    }

    // MARK: check

    func latencySummary() -> AnalysisSummary {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.db")
        s.queue(0x3100, "com.example.db=shadow")
        s.item(1, on: 0x3000, at: 0, runOn: 201, start: ms(12), end: ms(15))
        s.item(2, on: 0x3100, at: ms(20), runOn: 201, start: ms(21), end: ms(22))
        return summary(s)
    }

    func testBoundParsing() throws {
        XCTAssertEqual(try QueueBound(parsing: "com.example.db=10ms", metric: .waitP99),
                       QueueBound(metric: .waitP99, pattern: "com.example.db", limitNs: ms(10)))
        XCTAssertEqual(try QueueBound(parsing: "a=b=1.5s", metric: .runMax).pattern, "a=b", "split at the last '='")
        for bad in ["com.example.db", "=10ms", "db=10", "db=fast"] {
            XCTAssertThrowsError(try QueueBound(parsing: bad, metric: .waitP99), bad) {
                XCTAssertTrue(($0 as! BoundError).description.hasPrefix("bad bound"))
            }
        }
    }

    func testBoundViolationsOneLineEach() throws {
        let sum = latencySummary()
        let bounds = [try QueueBound(parsing: "com.example.db=10ms", metric: .waitP99),     // 12 ms: broken
                      try QueueBound(parsing: "com.example.db=5ms", metric: .runP99),       // 3 ms: holds
                      try QueueBound(parsing: "com.example.*=2ms", metric: .runMax),        // 3 ms on db: broken
                      try QueueBound(parsing: "com.example.nope=1ms", metric: .waitP50)]    // no such queue
        let lines = BoundCheck.violations(summary: sum, bounds: bounds, failOn: nil)
        XCTAssertEqual(lines, [
            "queue 'com.example.db' (0x3000): wait p99 12.0 ms > 10.0 ms",
            "queue 'com.example.db' (0x3000): run max 3.00 ms > 2.00 ms",
            "wait p50 bound 'com.example.nope': no queue has this label and no code this name",
        ])
        XCTAssertEqual(BoundCheck.violations(summary: sum, bounds: [try QueueBound(parsing: "*=1s", metric: .waitMax)],
                                             failOn: .error), [])
    }

    func testFindingsGate() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.item(1, on: mainQueueAddress, at: 0, runOn: mainTid, start: 0, end: ms(20))   // warning only
        let sum = summary(s)
        XCTAssertEqual(BoundCheck.violations(summary: sum, bounds: [], failOn: .error), [])
        XCTAssertEqual(BoundCheck.violations(summary: sum, bounds: [], failOn: .warning).count, 1)
        XCTAssertTrue(BoundCheck.violations(summary: sum, bounds: [], failOn: .info)[0].hasPrefix("finding warning main.long-item: "))
    }

    func testGlob() {
        XCTAssertTrue(BoundCheck.globMatch("*", ""))
        XCTAssertTrue(BoundCheck.globMatch("com.*.db", "com.example.db"))
        XCTAssertTrue(BoundCheck.globMatch("q?", "q1"))
        XCTAssertFalse(BoundCheck.globMatch("q?", "q12"))
        XCTAssertFalse(BoundCheck.globMatch("com.example", "com.example.db"))
    }

    // MARK: diff

    func testDiffMatchesQueuesByLabel() {
        func run(_ runMs: UInt64, extraQueue: Bool) -> AnalysisSummary {
            var s = TraceScript()
            s.mainAndGlobals()
            s.thread(201)
            s.queue(0x3000, "com.example.db")
            s.item(1, on: 0x3000, at: 0, runOn: 201, start: ms(1), end: ms(1 + runMs))
            if extraQueue {
                s.queue(0x4000, "com.example.cache")
                s.item(2, on: 0x4000, at: 0, runOn: 201, start: ms(50), end: ms(51))
                s.item(3, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(60), end: ms(260))
            }
            return summary(s)
        }
        let c = RunComparison(base: run(4, extraQueue: false), new: run(6, extraQueue: true))
        XCTAssertEqual(c.queues.map(\.key), ["com.apple.main-thread", "com.example.cache", "com.example.db"])
        let db = c.queues[2]
        XCTAssertEqual(db.baseItems, 1)
        XCTAssertEqual(db.newItems, 1)
        XCTAssertEqual(db.metrics.map(\.name), ["wait p50", "wait p99", "run p50", "run p99"])
        XCTAssertEqual(db.metrics[3].base, ms(4))
        XCTAssertEqual(db.metrics[3].new, ms(6))
        XCTAssertEqual(db.metrics[3].relativeChange!, 0.5, accuracy: 1e-9)
        XCTAssertNil(c.queues[1].baseQueue)
        XCTAssertEqual(c.findingsOnlyInNew, ["main.hang"])
        let text = DiffText.render(c, width: 80)
        XCTAssertTrue(text.contains("com.example.cache (only in B)"), text)
        XCTAssertTrue(text.contains("+50.0%"), text)
        XCTAssertTrue(text.contains("new findings in B: main.hang"), text)
    }

    // MARK: stats text

    func testNamesAreShortenedInTheMiddleOrAtTheEnd() {
        let label = "org.swift.swiftpm.build-delegate"
        XCTAssertEqual(TextTable.shortened(label, to: 20, inMiddle: true), "org.swift.…-delegate")
        XCTAssertEqual(TextTable.shortened(label, to: 20, inMiddle: false), "org.swift.swiftpm.b…")
        XCTAssertEqual(TextTable.shortened(label, to: 40, inMiddle: true), label)
        XCTAssertEqual(TextTable.shortened(label, to: 3, inMiddle: true), "or…")
        var table = TextTable(["queue", "items"])
        table.add([label, "3"])
        XCTAssertTrue(table.render(width: 20, middleCut: [0]).contains("org.sw…legate"), table.render(width: 20, middleCut: [0]))
    }

    func testStatsTextFitsAndEscapes() {
        var s = DiagnosticsTests.cleanProgram()
        s.queue(0x9900, "evil\u{1b}[2Jqueue\nlabel", at: ms(1))
        s.item(99, on: 0x9900, at: ms(2), runOn: 201, start: ms(2), end: ms(3))
        let text = StatsText.render(s.analysis(), tracePath: "t.qtrace", width: 90)
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "no raw control characters")
        XCTAssertTrue(text.contains("evil\\u"), text)  // escaped (names may be cut in the middle)
        for section in ["QUEUES", "WAIT BY CAUSE", "THREADS", "MAIN THREAD", "SOURCES", "GROUPS", "SEMAPHORES", "APPLY", "FINDINGS"] {
            XCTAssertTrue(text.contains("\n" + section), section)
        }
        for line in text.split(separator: "\n") where !line.hasPrefix("  ") && !line.hasPrefix("trace") {
            XCTAssertLessThanOrEqual(line.count, 90, String(line))
        }
    }

    func testDeterministicModelAcrossRuns() {
        let s = DiagnosticsTests.cleanProgram()
        let a = s.analysis(), b = s.analysis()
        XCTAssertEqual(a.findings, b.findings)
        XCTAssertEqual(a.model.items.map(\.startTime), b.model.items.map(\.startTime))
        XCTAssertEqual(a.statistics.queueTree, b.statistics.queueTree)
    }
}
