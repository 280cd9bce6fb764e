// The gallery end to end: every sample runs the same under `qtrace record`, and the analysis
// of its trace shows the property the sample is about (samples/README.md). Also writes reports
// of real recordings for the browser tests (Tests/BrowserTests/test_real_reports.py).
import Foundation
import QTraceAnalysis
import QTraceText
import QTraceFormat
import QTraceReport
import QTraceViewModel
import XCTest

final class GalleryTests: XCTestCase {
    override class func tearDown() {
        Paths.removeTempRoot()
        super.tearDown()
    }

    /// Records `sample` (checking exit status and output against an untraced run) and analyses it,
    /// or takes the recording the findings corpus made of it with the same options.
    func recordSample(_ sample: String, extraArgs: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> AnalysisResult {
        let made = try SampleRecordings.shared.recording([Paths.samples, sample], extraArgs: extraArgs, name: "gallery-\(sample)")
        let plain = made.plain, traced = made.traced
        XCTAssertEqual(plain.status, 0, "\(sample) untraced: \(plain.stderr)", file: file, line: line)
        XCTAssertEqual(traced.status, plain.status, "\(sample): exit status", file: file, line: line)
        XCTAssertEqual(traced.stdout, plain.stdout, "\(sample): output changed under tracing", file: file, line: line)
        try writeGalleryOutputs(sample, made.result, made.header)
        return made.result
    }

    func queue(_ label: String, in model: TraceModel) throws -> Int {
        try XCTUnwrap(model.queues.firstIndex { $0.label == label }, "no queue \(label)")
    }

    func items(on queue: Int, in model: TraceModel) -> [WorkItem] {
        model.items.filter { $0.queue == queue && $0.started != nil && $0.ended != nil }
    }

    /// The most `items` running at once, each counted until `trim` ns before its end.
    func maxOverlap(_ items: [WorkItem], trimmingEndBy trim: UInt64) -> Int {
        let edges = items.flatMap { [($0.startTime, 1), (max($0.startTime, $0.endTime &- trim), -1)] }
        var running = 0, peak = 0
        for (_, delta) in edges.sorted(by: { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }) {
            running += delta
            peak = max(peak, running)
        }
        return peak
    }

    /// No two of `items` overlap in time.
    func assertOneAtATime(_ items: [WorkItem], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let sorted = items.sorted { $0.startTime < $1.startTime }
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            XCTAssertLessThanOrEqual(a.endTime, b.startTime, "\(what): two items overlap", file: file, line: line)
        }
    }

    func findingIds(_ result: AnalysisResult) -> Set<String> { Set(result.findings.map(\.id)) }

    func testSerialQueueGuardingACacheRunsOneItemAtATime() throws {
        let result = try recordSample("serial-cache")
        let q = try queue("com.example.thumbnail-cache", in: result.model)
        XCTAssertEqual(result.statistics.queues[q].widthMax, 1)
        let run = items(on: q, in: result.model)
        XCTAssertGreaterThan(run.count, 50)
        assertOneAtATime(run, "serial queue")
        XCTAssertGreaterThan(Set(run.compactMap(\.submitter)).count, 2, "fed by several threads")
    }

    func testBarrierRunsAloneAfterEarlierItems() throws {
        let result = try recordSample("readers-writer")
        let q = try queue("com.example.settings", in: result.model)
        let all = items(on: q, in: result.model)
        let barriers = all.filter(\.isBarrier)
        XCTAssertGreaterThan(barriers.count, 0)
        XCTAssertGreaterThan(result.statistics.queues[q].widthMax, 1, "readers do run concurrently")
        for barrier in barriers {
            for other in all where other.id != barrier.id {
                XCTAssertTrue(other.endTime <= barrier.startTime || other.startTime >= barrier.endTime,
                              "an item overlapped a barrier")
                if other.enqueueTime < barrier.enqueueTime {
                    XCTAssertLessThanOrEqual(other.endTime, barrier.startTime, "an earlier item ran after the barrier")
                }
            }
        }
    }

    func testFunnelledQueuesRunOneItemAtATime() throws {
        let result = try recordSample("target-funnel")
        let model = result.model
        let funnel = try queue("com.example.funnel", in: model)
        let members = model.queues.indices.filter { q in
            var cursor: Int? = q
            for _ in 0..<8 { if cursor == funnel { return true }; cursor = cursor.flatMap { model.queues[$0].target } }
            return false
        }
        XCTAssertGreaterThanOrEqual(members.count, 3, "the funnel and the queues retargeted to it")
        let funnelled = members.flatMap { items(on: $0, in: model) }
        XCTAssertGreaterThan(funnelled.count, 10)
        assertOneAtATime(funnelled, "funnelled queues")
    }

    func testTimerSuspendedForFourPeriodsRunsWithDataFour() throws {
        let result = try recordSample("timer-suspend")
        let timer = try XCTUnwrap(result.model.sources.first { $0.type == .timer })
        // 4 missed fires; more when a loaded machine resumes the timer late.
        XCTAssertTrue(timer.runs.contains { $0.kind == .event && $0.data >= 4 }, "one handler run with data ≥ 4")
        XCTAssertFalse(timer.suspensions.isEmpty)
    }

    func testThreadExplosionExceedsTheCPUCountAndIsFlagged() throws {
        let result = try recordSample("thread-explosion")
        XCTAssertGreaterThan(result.statistics.threadCounts.workers, Int(result.model.info.ncpu))
        XCTAssertTrue(findingIds(result).contains("threads.explosion"))
    }

    func testDeadlockFindingNamesTheQueuesAndThreads() throws {
        let result = try recordSample("deadlock")
        let cycle = try XCTUnwrap(result.findings.first { $0.id == "deadlock.sync-cycle" })
        let labels = Set(cycle.objects.map(\.label))
        XCTAssertTrue(labels.contains("com.example.accounts") && labels.contains("com.example.ledger"), "\(labels)")
        XCTAssertEqual(cycle.objects.filter { $0.kind == .thread }.count, 2)
    }

    func testConcurrentPerformSpreadsIterations() throws {
        let result = try recordSample("concurrent-perform")
        let apply = try XCTUnwrap(result.model.applies.first)
        XCTAssertEqual(UInt64(apply.iterationsRun), apply.iterations)
        XCTAssertGreaterThan(apply.iterations, 1)
    }

    func testSemaphoreLimitsConcurrencyToTwo() throws {
        let result = try recordSample("semaphore-limit")
        let q = try queue("com.example.uploads", in: result.model)
        // An upload signals its slot a moment before its END is recorded, so the next upload may
        // START inside that tail: count each 40 ms upload without its last 10 ms.
        let uploads = items(on: q, in: result.model)
        XCTAssertEqual(uploads.count, 8)
        XCTAssertLessThanOrEqual(maxOverlap(uploads, trimmingEndBy: 10_000_000), 2)
        XCTAssertLessThanOrEqual(result.statistics.queues[q].widthMax, 3)
        XCTAssertGreaterThan(result.model.semaphores.reduce(0) { $0 + $1.blockedWaits }, 0)
    }

    func testOtherSamplesRunUnchangedAndAreSeen() throws {
        for sample in ["global-fanout", "jump-queue", "read-source", "signal-source", "swift-concurrency", "dispatch-io"] {
            let result = try recordSample(sample)
            if sample != "dispatch-io" { XCTAssertGreaterThan(result.model.items.count, 0, sample) }
            switch sample {
            case "read-source": XCTAssertTrue(result.model.sources.contains { $0.type == .read && !$0.runs.isEmpty })
            case "signal-source": XCTAssertTrue(result.model.sources.contains { $0.type == .signal && !$0.runs.isEmpty })
            case "dispatch-io": XCTAssertFalse(result.model.ioOperations.isEmpty)
            case "swift-concurrency": XCTAssertGreaterThanOrEqual(result.model.items.filter { $0.flags.contains(.swiftConcurrency) }.count, 20)
            case "jump-queue": XCTAssertTrue(result.model.queues.contains { !$0.suspensions.isEmpty })
            default: break
            }
        }
    }

    /// Reports of real recordings for the browser tests, with their JSON summaries.
    func testWriteRealReportsForTheBrowserTests() throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] else {
            throw XCTSkip("QTRACE_BROWSER_FIXTURES is not set (make test sets it)")
        }
        let programs: [(String, [String])] = [
            ("real-app", [Paths.samples, "app"]),
            ("real-deadlock", [Paths.samples, "deadlock"]),
            ("real-hostile", [Paths.fixtures, "hostile-labels"]),
        ]
        for (name, argv) in programs {
            let (run, path) = record(argv, in: URL(fileURLWithPath: dir), name: name)
            XCTAssertEqual(run.status, 0, run.stderr)
            let file = try TraceFile(path: path)
            let result = Analysis.run(file: file)
            let input = ReportInput(analysis: result, header: file.header, qtraceVersion: "test")
            try ReportWriter.write(input, to: "\(dir)/\(name).html")
            let summary = AnalysisSummary(result: result, tracePath: path, generator: "test")
            try summary.jsonData().write(to: URL(fileURLWithPath: "\(dir)/\(name).summary.json"))
        }
    }
}

/// With QTRACE_BROWSER_FIXTURES set, the three outputs of each gallery trace for the
/// consistency test (Tests/BrowserTests/test_consistency.py): the report, `qtrace stats
/// --json` and the table `qtrace stats --wide --all` prints.
func writeGalleryOutputs(_ sample: String, _ result: AnalysisResult, _ header: TraceHeader) throws {
    guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] else { return }
    let base = "\(dir)/gallery-\(sample)"
    let input = ReportInput(analysis: result, header: header, qtraceVersion: "test")
    try ReportWriter.write(input, to: base + ".html")
    try AnalysisSummary(result: result, tracePath: sample, generator: "test").jsonData()
        .write(to: URL(fileURLWithPath: base + ".summary.json"))
    let table = StatsText.render(result, tracePath: nil, width: Int.max / 2, limit: 0)
    try Data(table.utf8).write(to: URL(fileURLWithPath: base + ".stats.txt"))
}
