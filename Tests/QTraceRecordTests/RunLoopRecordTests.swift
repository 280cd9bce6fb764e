// Foundation's main run loop recorded end to end (issue 26 item 5): the fixture's "run-loop"
// scenario runs a repeating Timer that stops itself at its 5th fire, a one-shot Timer and 3
// RunLoop.main.perform blocks. Foundation runs them inside CoreFoundation, not Dispatch: the
// shim sees them through CFRunLoopTimerCreate and CFRunLoopPerformBlock (shim_runloop.c).
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class RunLoopRecordTests: XCTestCase {
    func testTimersAndPerformBlocksAreItemsOfTheMainRunLoop() throws {
        let dir = Paths.tempDir("run-loop")
        let plain = runProgram([Paths.fixtures, "run-loop"])
        let (traced, path) = record([Paths.fixtures, "run-loop"], in: dir)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(plain.stdout, "run loop: 5 ticks, 1 one-shot, 3 performed\n")
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stdout, plain.stdout, "tracing changed the program's output")

        let model = Analysis.run(file: try TraceFile(path: path)).model
        let runLoop = try XCTUnwrap(model.queues.firstIndex { $0.label == "main run loop" })
        XCTAssertEqual(model.queues[runLoop].kind, .runLoop)
        // Each timer is a timer source of the run loop; each fire a run, with its lateness.
        let timers = model.sources.filter { $0.queue == runLoop }
        XCTAssertEqual(timers.map(\.type), [.timer, .timer])
        XCTAssertEqual(timers.map(\.runs.count), [5, 1])
        XCTAssertEqual(timers.map { $0.timers.last?.intervalNs }, [10_000_000, nil])
        for timer in timers { XCTAssertTrue(timer.runs.allSatisfy { $0.latenessNs != nil }) }
        // 5 + 1 fires and 3 perform blocks, all run by the main thread.
        let items = model.items.indices.filter { model.items[$0].queue == runLoop }
        XCTAssertEqual(items.count, 9)
        XCTAssertTrue(items.allSatisfy { model.items[$0].thread.map { model.threads[$0].kind } == .main })

        // The text and the JSON name each closure, with its count.
        let env = ["XDG_CACHE_HOME": dir.path, "COLUMNS": "200"]
        let json = runProgram([Paths.qtrace, "stats", "--json", path], environment: env)
        XCTAssertEqual(json.status, 0, json.stderr)
        let summary = try AnalysisSummary.decode(Data(json.stdout.utf8))
        let counts = Dictionary(summary.statistics.sites.map { ($0.name, $0.items) }) { a, _ in a }
        XCTAssertEqual(counts["closure #1 in runLoopWork()"], 5, "the repeating timer: \(counts)")
        XCTAssertEqual(counts["closure #2 in runLoopWork()"], 1, "the one-shot timer: \(counts)")
        XCTAssertEqual(counts["closure #3 in runLoopWork()"], 3, "the perform blocks: \(counts)")
        let stats = try XCTUnwrap(summary.statistics.sources.first { $0.queue == runLoop && $0.eventRuns == 5 })
        XCTAssertEqual(stats.timerIntervalNs, 10_000_000)
        XCTAssertEqual(stats.lateness.count, 5)
        let text = runProgram([Paths.qtrace, "stats", "--all", path], environment: env)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("timer closure #1 in runLoopWork()"), text.stdout)
        XCTAssertTrue(text.stdout.contains("main run loop"), text.stdout)
    }
}
