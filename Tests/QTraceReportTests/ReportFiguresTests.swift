// The analysis' figures in the report header (docs/report-data.md, Definitions): per queue and
// thread, and the target-queue forest; kept through merging, -1 when there is no analysis.
import Foundation
import XCTest
import QTraceAnalysis
import QTraceFormat
@testable import QTraceReport
@testable import QTraceViewModel
import QTraceReportTestSupport

final class ReportFiguresTests: XCTestCase {
    /// A synthetic input with figures as the analysis would set them.
    func inputWithFigures(seed: UInt64) -> ReportInput {
        var input = SyntheticReport.make(items: 300, threads: 3, queues: 4, seed: seed)
        for q in input.queues.indices {
            (input.queues[q].items, input.queues[q].busyNs, input.queues[q].busyShare) = (q + 1, Int64(1000 * (q + 1)), 0.25)
        }
        for t in input.threads.indices {
            (input.threads[t].items, input.threads[t].busyNs, input.threads[t].blockedNs) = (t, Int64(10 * t), Int64(7 * t))
        }
        input.queueTree = input.queues.indices.map { ReportQueueTreeNode(queue: $0, parent: $0 == 0 ? -1 : 0, subtreeBusyNs: 5) }
        return input
    }

    func testFiguresAndTreeAreInTheHeader() throws {
        let input = inputWithFigures(seed: 1)
        let report = try WrittenReport(try ReportWriter.html(input))
        let queues = try report.objects("queues")
        XCTAssertEqual(queues.count, input.queues.count)
        for (row, q) in zip(queues, input.queues) {
            XCTAssertEqual(row["label"] as? String, q.label)
            XCTAssertEqual(row["kind"] as? String, q.kind.rawValue)
            XCTAssertEqual(row["qos"] as? String, q.qosName)
            XCTAssertEqual(row["target"] as? Int, q.targetIndex)
            XCTAssertEqual(row["items"] as? Int, q.items)
            XCTAssertEqual(row["busy"] as? Double, Double(q.busyNs))
            XCTAssertEqual(row["busyShare"] as? Double, q.busyShare)
        }
        let threads = try XCTUnwrap(report.header["threads"] as? [[String: Any]])
        for (json, t) in zip(threads, input.threads) {
            XCTAssertEqual(json["busy"] as? Int, Int(t.busyNs))
            XCTAssertEqual(json["blocked"] as? Int, Int(t.blockedNs))
        }
        let tree = try report.objects("queueTree")
        XCTAssertEqual(tree.map { $0["queue"] as? Int }, input.queueTree.map(\.queue))
        XCTAssertEqual(tree.map { $0["parent"] as? Int }, input.queueTree.map(\.parent))
        XCTAssertEqual(tree.map { $0["subtreeBusy"] as? Double }, input.queueTree.map { Double($0.subtreeBusyNs) })
    }

    /// The viewer computes no figure of its own: an input without the analysis' figures is
    /// refused with a one-line reason, not written with the numbers left to the viewer.
    func testAnInputWithoutTheAnalysisFiguresIsRefused() throws {
        var input = SyntheticReport.make(items: 50, threads: 2, queues: 2, seed: 4)
        XCTAssertNoThrow(try ReportWriter.html(input))
        var noQueueFigure = input
        noQueueFigure.queues[1].busyNs = -1
        XCTAssertThrowsError(try ReportWriter.html(noQueueFigure)) {
            XCTAssertEqual("\($0)", "report input: queue 1 has no items, busy time or share from the analysis")
        }
        var noThreadFigure = input
        noThreadFigure.threads[0].blockedNs = -1
        XCTAssertThrowsError(try ReportWriter.html(noThreadFigure)) {
            XCTAssertEqual("\($0)", "report input: thread 0 has no items, busy or blocked time from the analysis")
        }
        input.queueTree = []
        XCTAssertThrowsError(try ReportWriter.html(input)) { XCTAssertTrue("\($0)".contains("no target-queue tree")) }
    }

    /// Synthetic reports get their figures from the analysis' functions, by its definitions.
    func testSyntheticReportsCarryTheAnalysisFigures() throws {
        let input = SyntheticReport.make(items: 400, threads: 3, queues: 4, seed: 4)
        let report = try WrittenReport(try ReportWriter.html(input))
        let queues = try report.objects("queues")
        XCTAssertEqual(queues.map { $0["items"] as? Int }, input.queues.map(\.items))
        XCTAssertEqual(queues.map { $0["busy"] as? Double }, input.queues.map { Double($0.busyNs) })
        var counts = [Int](repeating: 0, count: input.queues.count)
        for q in input.items.queue { counts[Int(q)] += 1 }
        XCTAssertEqual(input.queues.map(\.items), counts)
        XCTAssertEqual(input.threads.reduce(0) { $0 + $1.items }, (0..<input.items.count).filter { input.items.startNs[$0] >= 0 }.count)
        XCTAssertEqual(Set(input.queueTree.map(\.queue)), Set(input.queues.indices), "every queue in the analysis' forest")
        // A thread's blocked time is what its blocking calls took, less work it ran inside them.
        for t in input.threads.indices {
            let calls = input.blocked.filter { $0.thread == t }.reduce(Int64(0)) { $0 + $1.endNs - $1.startNs }
            XCTAssertLessThanOrEqual(input.threads[t].blockedNs, calls)
        }
    }

    /// Items of no recorded queue (a START whose ENQUEUE was lost) go to the placeholder queue
    /// with the analysis' figures: two overlapping runs and one apart.
    func testThePlaceholderQueueHasTheAnalysisFigures() {
        let events = [
            Event(type: .threadStart, time: 0, tid: 1), Event(type: .threadStart, time: 0, tid: 2),
            Event(type: .start, time: 100, tid: 1, a: 7), Event(type: .start, time: 150, tid: 2, a: 8),
            Event(type: .end, time: 200, tid: 1, a: 7), Event(type: .end, time: 300, tid: 2, a: 8),
            Event(type: .start, time: 500, tid: 1, a: 9), Event(type: .end, time: 600, tid: 1, a: 9),
            Event(type: .mark, time: 1_000, tid: 1, string: "end"),
        ]
        let result = Analysis.run(info: TraceInfo(pid: 1, mainTid: 1), events: events)
        let input = ReportInput(analysis: result, header: TraceHeader(pid: 1), qtraceVersion: "test")
        guard let placeholder = input.queues.last, placeholder.label == "(queue not recorded)" else {
            return XCTFail("no placeholder queue in \(input.queues.map(\.label))")
        }
        XCTAssertEqual(placeholder.items, 3)
        XCTAssertEqual(placeholder.busyNs, 300)   // 100..300 and 500..600
        XCTAssertEqual(placeholder.busyShare, 300.0 / Double(result.model.duration), accuracy: 1e-12)
        XCTAssertTrue(input.queues.allSatisfy { $0.items >= 0 && $0.busyNs >= 0 && $0.busyShare >= 0 })
        XCTAssertFalse(input.queueTree.contains { $0.queue == placeholder.index }, "qtrace stats does not count it")
    }

    func testMergingKeepsFiguresAndShiftsTheTree() {
        let a = inputWithFigures(seed: 1), b = inputWithFigures(seed: 2)
        let merged = ReportInput.merged([a, b])
        XCTAssertEqual(merged.queues.map(\.busyNs), a.queues.map(\.busyNs) + b.queues.map(\.busyNs))
        XCTAssertEqual(merged.threads.map(\.blockedNs), a.threads.map(\.blockedNs) + b.threads.map(\.blockedNs))
        let shifted = b.queueTree.map {
            ReportQueueTreeNode(queue: $0.queue + a.queues.count, parent: $0.parent < 0 ? -1 : $0.parent + a.queues.count,
                                subtreeBusyNs: $0.subtreeBusyNs)
        }
        XCTAssertEqual(merged.queueTree, a.queueTree + shifted)
    }

    /// The wait and run histograms are the analysis' (QueueHistograms) as they are, bounds in
    /// ns: each queue's buckets count its items that waited (a source handler run has no
    /// enqueue, so no wait) and that ran.
    func testHistogramsAreTheAnalysis() throws {
        let input = SyntheticReport.make(items: 400, threads: 3, queues: 8, seed: 6)
        XCTAssertFalse(input.histograms.isEmpty)
        for h in input.histograms {
            XCTAssertEqual(h.boundsNs, QueueHistograms.boundsNs.map { Double($0) })
            XCTAssertEqual(h.boundsNs.first, 64)
            XCTAssertEqual(h.counts.count, QueueHistograms.bucketCount)
            let items = input.items
            let counted = (0..<items.count).filter { i in
                Int(items.queue[i]) == h.queueIndex && (h.metric == .wait ? items.waitNs[i] >= 0 : items.endNs[i] >= 0)
            }
            XCTAssertEqual(h.counts.reduce(0, +), counted.count, "queue \(h.queueIndex) \(h.metric)")
        }
    }
}
