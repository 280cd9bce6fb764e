// The decoding thread (TraceFile.forEachBatchOfEvents, `DecodingThread`) and the statistics'
// pass over the items in two halves (StatisticsItemPass) on real recordings: what they make
// on two threads is what one thread makes, byte for byte in the JSON summary, on a flood of
// pending items (the STARTs announced ahead) and on a semaphore-windowed pipeline.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class DecodingThreadTests: XCTestCase {
    func testTheModelIsTheSameWithAndWithoutTheDecodingThread() throws {
        let dir = Paths.tempDir("decoding-thread")
        for (name, argv) in [("flood", ["stress", "2", "30000"]), ("flow", ["flow", "2", "20000"])] {
            let (run, path) = record([Paths.fixtures] + argv, in: dir, name: name)
            XCTAssertEqual(run.status, 0, run.stderr)
            let file = try TraceFile(path: path)
            XCTAssertGreaterThan(file.eventCount, 2 * EventBatchRingSize.events, "\(name): the ring goes round")
            let inline = try summary(file, .never)
            XCTAssertNil(file.lastDecodingThreads)
            let threaded = try summary(file, .always)
            XCTAssertNotNil(file.lastDecodingThreads, "\(name): decoded on the thread")
            XCTAssertEqual(String(decoding: threaded, as: UTF8.self), String(decoding: inline, as: UTF8.self), name)
        }
    }

    /// The summary with every step on one thread (`.never`) or on two wherever they can be
    /// (`.always`: the decoding, and the statistics' pass over the items in two halves).
    private func summary(_ file: TraceFile, _ threads: DecodingThread) throws -> Data {
        let model = Analysis.buildModel(file: file, decodingThread: threads)
        let statistics = TraceStatistics(model: model, twoThreads: threads)
        let result = AnalysisResult(model: model, statistics: statistics,
                                    findings: Diagnostics.findings(model: model, statistics: statistics))
        XCTAssertFalse(statistics.sites.isEmpty, "the recorded program's code sites are counted")
        return try AnalysisSummary(result: result, tracePath: nil, generator: "test").jsonData()
    }
}

/// The ring's size in events (8 batches of 1,024), written out: the ring is internal.
private enum EventBatchRingSize {
    static let events = 8 * 1024
}
