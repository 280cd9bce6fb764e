// dispatch_once recorded end to end: the fixture's "once-wait" scenario (a worker runs a 50 ms
// initializer, main waits for it; then main runs a block initializer; then both again, done).
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class OnceRecordTests: XCTestCase {
    func testAWaitForAnotherThreadsInitializerIsABlockedInterval() throws {
        let dir = Paths.tempDir("once-wait")
        let plain = runProgram([Paths.fixtures, "once-wait"])
        let (traced, path) = record([Paths.fixtures, "once-wait"], in: dir)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stdout, plain.stdout, "tracing changed the program's output")

        // Three slow calls (worker ran, main waited, main ran the block); the calls on done
        // predicates and the lazy global (swift_once) record nothing.
        let t = try TraceSummary(path: path)
        XCTAssertEqual(t.count(.onceBegin), 3)
        let outcomes = t.events.filter { $0.type == .onceEnd }.map { OnceOutcome(rawValue: $0.arg) }
        XCTAssertEqual(outcomes.filter { $0 == .ran }.count, 2)
        XCTAssertEqual(outcomes.filter { $0 == .waited }.count, 1)

        let model = Analysis.run(file: try TraceFile(path: path)).model
        let main = try XCTUnwrap(model.threads.first { $0.kind == .main })
        let waits = main.blocked.filter { $0.cause == .once }
        XCTAssertEqual(waits.count, 1)
        let waited = waits.first?.duration(traceEnd: model.endTime) ?? 0
        XCTAssertGreaterThan(waited, 30_000_000, "main waited for most of the 50 ms initializer")
        XCTAssertLessThan(waited, 2_000_000_000)
        XCTAssertNotNil(waits.first?.site, "a wait has its call site")
        for thread in model.threads where thread.kind != .main {
            XCTAssertFalse(thread.blocked.contains { $0.cause == .once }, "the initializer's runner did not wait")
        }
    }
}
