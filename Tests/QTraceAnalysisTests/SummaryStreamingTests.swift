// `AnalysisSummary.writeJSON` (each queue encoded on its own, for summaries of 900k queues)
// must give jsonData()'s bytes exactly: the summary is a versioned, byte-stable document.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest
import QTraceAnalysisTestSupport

final class SummaryStreamingTests: XCTestCase {
    /// The real recordings kept as fuzzing seeds: hostile labels, code sites, Swift tasks, a
    /// flight-recorder ring, every API.
    func testPiecewiseJSONIsTheWholeJSONOnRealTraces() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/embedded")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { $0.hasSuffix(".trace") }.sorted()
        XCTAssertGreaterThanOrEqual(seeds.count, 5)
        for seed in seeds {
            let file = try TraceFile(path: corpus.appendingPathComponent(seed).path)
            let summary = AnalysisSummary(result: Analysis.run(file: file), tracePath: seed, generator: "test")
            var pieces = Data(), writes = 0
            try summary.writeJSON { pieces.append($0); writes += 1 }
            XCTAssertEqual(String(decoding: pieces, as: UTF8.self), String(decoding: try summary.jsonData(), as: UTF8.self), seed)
            if summary.statistics.queues.count > 1 { XCTAssertGreaterThan(writes, 1, "\(seed): written in pieces") }
        }
    }

    /// More queues than one encoder call takes (1024): the pieces join with the same commas.
    func testPiecewiseJSONAcrossSeveralChunksOfQueues() throws {
        var events: [Event] = []
        for q in 0..<2500 as Range<UInt64> {
            let queue = 0x1000 + q * 0x100
            events.append(Event(type: .queueCreate, time: 10 * q + 1, tid: 1, arg: 1, a: queue, string: "com.example.q\(q) \"quoted\" <tag>"))
            events.append(Event(type: .enqueue, time: 10 * q + 2, tid: 1, arg: 1, a: 100 + q, b: queue))
            events.append(Event(type: .start, time: 10 * q + 3, tid: 2, arg: 1, a: 100 + q))
            events.append(Event(type: .end, time: 10 * q + 5 + q % 7, tid: 2, a: 100 + q))
        }
        let summary = AnalysisSummary(result: Analysis.run(info: TraceInfo(pid: 7, mainTid: 1), events: events), tracePath: nil, generator: "test")
        XCTAssertGreaterThan(summary.statistics.queues.count, 2048)
        var pieces = Data()
        try summary.writeJSON { pieces.append($0) }
        XCTAssertEqual(pieces, try summary.jsonData())
    }
}
