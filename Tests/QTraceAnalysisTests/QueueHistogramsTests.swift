import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class QueueHistogramsTests: XCTestCase {
    /// Log2 buckets from 64 ns: a duration lands in floor(log2) - 6, what lies below 64 ns in
    /// the first bucket and beyond 2^34 ns in the last; only queues with items have histograms.
    func testEachQueuesWaitsAndRunsInLog2Buckets() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201, at: us(1))
        s.queue(0x3000, "com.example.serial", at: us(1))
        s.queue(0x3100, "com.example.idle", at: us(1))
        // Waits 10 ns, 100 ns, 1,000 ns; runs 63 ns, 64 ns, 40 s.
        s.item(1, on: 0x3000, at: 1_000, runOn: 201, start: 1_010, end: 1_073)
        s.item(2, on: 0x3000, at: 1_000, runOn: 201, start: 1_100, end: 1_164)
        s.item(3, on: 0x3000, at: 1_000, runOn: 201, start: 2_000, end: 2_000 + 40_000_000_000)
        let model = s.model()
        let histograms = QueueHistograms(model)
        let q = model.queue(labelled: "com.example.serial")
        XCTAssertEqual(histograms.queues.map(\.queue), [q], "the idle queue and the global queues have none")
        let h = histograms.queues[0]
        XCTAssertEqual(QueueHistograms.boundsNs.first, 64)
        XCTAssertEqual(QueueHistograms.boundsNs.last, 1 << 34)
        XCTAssertEqual(h.wait.count, QueueHistograms.bucketCount)
        var wait = [Int](repeating: 0, count: QueueHistograms.bucketCount), run = wait
        wait[0] = 2   // 10 ns (below the first bound) and 100 ns (64..<128)
        wait[3] = 1   // 1,000 ns (512..<1,024)
        run[0] = 2    // 63 ns and 64 ns
        run[QueueHistograms.bucketCount - 1] = 1  // 40 s, beyond the last bound
        XCTAssertEqual(h.wait, wait)
        XCTAssertEqual(h.run, run)
    }
}
