// Several processes side by side: one process's figures (ProcessSummary) and the sum of their
// thread counts on a common axis (ProcessTotals), where a process that ended counts 0.
import XCTest
@testable import QTraceAnalysis
import QTraceFormat
import QTraceAnalysisTestSupport

final class ProcessTests: XCTestCase {
    /// Eight processes one after another, each with 5 threads alive until its end (none exits
    /// its threads): the total is 5 at every moment, never 40 (it used to keep every ended
    /// process's last count).
    func testSequentialProcessesDoNotAddUp() {
        let parts = (0..<8).map { (p: Int) -> PlacedSteps in
            let start = Int64(p) * 1_000
            return PlacedSteps(timesNs: [start, start + 10], values: [1, 5], startNs: start, endNs: start + 900)
        }
        let total = ProcessTotals.summed(parts)
        XCTAssertEqual(ProcessTotals.peak(parts), 5)
        XCTAssertEqual(total.values.last, 0, "nothing alive after the last process ended")
        XCTAssertEqual(Array(total.timesNs.prefix(4)), [0, 10, 900, 1_000])
        XCTAssertEqual(Array(total.values.prefix(4)), [1, 5, 0, 1])
    }

    /// Overlapping processes add up while both live; each drops out at its own end, and a
    /// change recorded at or after the end is ignored.
    func testOverlappingProcessesAddUpWhileBothLive() {
        let a = PlacedSteps(timesNs: [0, 100], values: [2, 3], startNs: 0, endNs: 500)
        let b = PlacedSteps(timesNs: [300, 600, 700], values: [4, 1, 9], startNs: 300, endNs: 600)
        let total = ProcessTotals.summed([a, b])
        XCTAssertEqual(total.timesNs, [0, 100, 300, 500, 600])
        XCTAssertEqual(total.values, [2, 3, 7, 4, 0])
        XCTAssertEqual(ProcessTotals.peak([a, b]), 7)
        XCTAssertEqual(ProcessTotals.summed([]).timesNs, [])
    }

    /// A process's row: items, threads, the busiest queue (most busy time), its findings.
    func testSummaryOfOneProcess() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0xa000, "q.light")
        s.queue(0xb000, "q.heavy")
        s.item(1, on: 0xa000, at: ms(1), runOn: 201, start: ms(1), end: ms(2))
        s.item(2, on: 0xb000, at: ms(2), runOn: 201, start: ms(3), end: ms(9))
        s.item(3, on: 0xb000, at: ms(2), runOn: 201, start: ms(9), end: ms(10))
        let analysis = s.analysis()
        let summary = ProcessSummary(statistics: analysis.statistics, findings: analysis.findings)
        XCTAssertEqual(summary.items, 3)
        XCTAssertEqual(summary.threads, analysis.statistics.threads.count)
        XCTAssertEqual(summary.peakThreadsAlive, analysis.statistics.threadCounts.peakAlive)
        XCTAssertEqual(summary.busiestQueue.map { analysis.model.queues[$0].label }, "q.heavy")
        XCTAssertEqual(summary.busiestQueueBusyNs, ms(7))
        XCTAssertEqual(summary.busyNs, analysis.statistics.threads.reduce(0) { $0 + $1.busyNs })
        XCTAssertEqual(summary.busyNs, ms(8))
        XCTAssertEqual(summary.findings, analysis.findings.count)
        XCTAssertEqual(summary.durationNs, analysis.statistics.durationNs)
    }
}
