// `qtrace record --sched`: real perf sched events around a real program, stored in the trace
// and turned into per-item CPU / runnable / sleeping time.
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceReport
import QTraceViewModel
import XCTest

final class SchedRecordTests: XCTestCase {
    override class func tearDown() {
        Paths.removeTempRoot()
        super.tearDown()
    }

    /// The item that sleeps 50 ms shows it as sleeping, the one that spins for 30 ms of CPU
    /// time as on a CPU (kernel-measured, so about the same), never sleeping.
    func testBlockingItemShowsSleepingTime() throws {
        let dir = Paths.tempDir("sched")
        let (traced, path) = record([Paths.fixtures, "sched"], in: dir, extraArgs: ["--sched"])
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stdout, "sched done\n")
        XCTAssertTrue(traced.stderr.contains("thread state changes added"), traced.stderr)
        let file = try TraceFile(path: path)
        XCTAssertGreaterThanOrEqual(file.header.versionMinor, TraceLayout.schedVersionMinor)
        XCTAssertGreaterThan(file.schedEventCount, 0)
        XCTAssertFalse(file.threads.contains { $0.tid == 0 }, "the scheduler stream is not a thread")

        // perf's buffers can overflow when the machine is very busy (it records every CPU): the
        // states are then incomplete, and qtrace says so.
        try XCTSkipIf(traced.stderr.contains("perf dropped events"), "perf dropped events: \(traced.stderr)")
        let model = Analysis.buildModel(file: file)
        let sched = try XCTUnwrap(model.sched)
        func item(on label: String) throws -> Int {
            let queue = try XCTUnwrap(model.queues.firstIndex { $0.label == label }, "no queue \(label)")
            return try XCTUnwrap(model.items.firstIndex { $0.queue == queue })
        }
        let ms: UInt64 = 1_000_000
        let sleeper = sched.items[try item(on: "fx.sleeper")]
        XCTAssertGreaterThanOrEqual(sleeper.sleepingNs, 40 * ms, "\(sleeper)")
        XCTAssertLessThan(sleeper.runningNs, 10 * ms, "\(sleeper)")
        // Spinning never sleeps; on a loaded machine part of it may wait for a CPU (runnable).
        let spinnerIndex = try item(on: "fx.spinner")
        let spinner = sched.items[spinnerIndex]
        let wall = try XCTUnwrap(model.items[spinnerIndex].runTime)
        XCTAssertLessThan(spinner.sleepingNs, wall / 10, "\(spinner)")
        XCTAssertGreaterThanOrEqual(spinner.runningNs + spinner.runnableNs, wall * 9 / 10, "\(spinner)")
        XCTAssertGreaterThanOrEqual(spinner.runningNs, 25 * ms, "\(spinner)")
    }

    /// A forked child's trace gets its own threads' states, the parent's trace its own.
    func testEachProcessGetsItsOwnThreadsStates() throws {
        let dir = Paths.tempDir("sched-fork")
        let (run, parentPath) = record([Paths.fixtures, "fork"], in: dir, name: "fork", extraArgs: ["--sched"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let childName = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .first { $0.hasPrefix("fork.") && $0 != "fork.qtrace" })
        var tidsByTrace: [Set<UInt64>] = []
        for path in [parentPath, dir.appendingPathComponent(childName).path] {
            let file = try TraceFile(path: path)
            XCTAssertGreaterThan(file.schedEventCount, 0, path)
            let own = Set(file.threads.map { UInt64(UInt32(bitPattern: $0.tid)) })
            let described = Set(file.readAllEvents().filter { $0.type == .schedState }.map(\.a))
            XCTAssertTrue(described.isSubset(of: own.union([UInt64(UInt32(bitPattern: file.header.mainTid))])),
                          "\(path): states of threads not in the trace: \(described.subtracting(own))")
            XCTAssertTrue(described.contains(UInt64(UInt32(bitPattern: file.header.mainTid))), path)
            tidsByTrace.append(described)
        }
        XCTAssertTrue(tidsByTrace[0].isDisjoint(with: tidsByTrace[1]))
    }

    /// real-sched.html (+ summary) for Tests/BrowserTests/test_sched.py: the state strip.
    func testWriteSchedReportForTheBrowserTests() throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] else {
            throw XCTSkip("QTRACE_BROWSER_FIXTURES is not set (make test sets it)")
        }
        // perf can lose scheduler events on a busy machine (it records every CPU); the browser
        // test reads the states, so a recording whose spinner shows sleep is made again (the
        // same tolerance as testBlockingItemShowsSleepingTime's skip).
        var attempt = 0
        var path = "", file: TraceFile, result: AnalysisResult
        repeat {
            attempt += 1
            let (run, recorded) = record([Paths.fixtures, "sched"], in: URL(fileURLWithPath: dir), name: "real-sched",
                                         extraArgs: ["--sched"])
            XCTAssertEqual(run.status, 0, run.stderr)
            path = recorded
            file = try TraceFile(path: path)
            result = Analysis.run(file: file)
            XCTAssertNotNil(result.statistics.sched)
        } while attempt < 3 && !Self.statesLookComplete(result)
        let input = ReportInput(analysis: result, header: file.header, qtraceVersion: "test")
        try ReportWriter.write(input, to: "\(dir)/real-sched.html")
        let summary = AnalysisSummary(result: result, tracePath: path, generator: "test")
        try summary.jsonData().write(to: URL(fileURLWithPath: "\(dir)/real-sched.summary.json"))
    }

    /// The spinner (30 ms of CPU) shows almost no sleep: perf kept its events.
    static func statesLookComplete(_ result: AnalysisResult) -> Bool {
        guard let spinner = result.statistics.sched?.queues.first(where: { $0.label == "fx.spinner" }) else { return false }
        return spinner.sleepingNs < spinner.wallNs / 10
    }

    /// perf missing: one line, non-zero exit, and the program never ran.
    func testMissingPerfFailsBeforeTheProgramRuns() {
        assertMissingPerfFailsBeforeTheProgramRuns(option: "--sched")
    }
}
