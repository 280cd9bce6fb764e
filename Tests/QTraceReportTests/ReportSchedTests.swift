// Scheduling states in merged (multi-process) reports: intervals follow their threads and
// times, per-item times stay aligned with the items.
import QTraceReport
import QTraceViewModel
import XCTest

final class ReportSchedTests: XCTestCase {
    func process(pid: Int, items: Int, sched: ReportSched?) -> ReportInput {
        var input = ReportInput(meta: ReportMeta(title: "p\(pid)", pid: pid, durationNs: 1000),
                                threads: [ReportThread(index: 0, tid: Int64(pid), name: "main", kind: .main, startNs: 0, endNs: 1000)],
                                processes: [ReportProcess(pid: pid, executable: "p\(pid)", realtimeStartNs: Int64(pid) * 100,
                                                          durationNs: 1000)],
                                sched: sched)
        for i in 0..<items {
            input.items.append(ReportItem(queue: -1, kind: .async, submitterThread: 0, thread: 0, enqueueNs: Int64(i),
                                          startNs: Int64(i), endNs: Int64(i) + 10))
        }
        return input
    }

    func testMergedReportKeepsSchedAligned() throws {
        let sched = ReportSched(intervals: [ReportSchedInterval(thread: 0, startNs: 5, endNs: 50, state: .sleeping)],
                                itemCpuNs: [1, 2], itemRunnableNs: [3, 4], itemSleepingNs: [5, 6])
        let merged = ReportInput.merged([process(pid: 1, items: 3, sched: nil), process(pid: 2, items: 2, sched: sched)])
        let s = try XCTUnwrap(merged.sched)
        XCTAssertEqual(s.itemCpuNs, [0, 0, 0, 1, 2])
        XCTAssertEqual(s.itemSleepingNs, [0, 0, 0, 5, 6])
        XCTAssertEqual(s.intervals, [ReportSchedInterval(thread: 1, startNs: 105, endNs: 150, state: .sleeping)])
        XCTAssertNil(ReportInput.merged([process(pid: 1, items: 1, sched: nil), process(pid: 2, items: 1, sched: nil)]).sched)
    }
}
