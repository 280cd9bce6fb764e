// In a report of several processes, an item still running (or pending) when its process
// ends (exit, kill, exec) is drawn to its own process's end, not to the end of a process
// that outlived it (issue 15: an exec'd process's item ran on to the end of the timeline).
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel

final class MergedItemEndTests: XCTestCase {
    /// One process of `durationNs` with one thread and one queue, and an item on it.
    private func process(pid: Int, durationNs: Int64, item: ReportItem) -> ReportInput {
        var items = ReportItems()
        items.append(item)
        return ReportInput(
            meta: ReportMeta(title: "p\(pid)", durationNs: durationNs),
            threads: [ReportThread(index: 0, tid: Int64(pid), name: "main", kind: .main, startNs: 0, endNs: durationNs)],
            queues: [ReportQueue(index: 0, label: "q\(pid)", kind: .serial)],
            items: items,
            processes: [ReportProcess(pid: pid, executable: "p\(pid)", realtimeStartNs: 1_000_000, durationNs: durationNs)])
    }

    func testAnUnfinishedItemEndsWithItsProcess() {
        let execd = process(pid: 1, durationNs: 100, item: ReportItem(
            queue: 0, kind: .async, submitterThread: 0, thread: 0, enqueueNs: 5, startNs: 10, endNs: -1))
        let pending = process(pid: 2, durationNs: 300, item: ReportItem(
            queue: 0, kind: .async, submitterThread: 0, thread: -1, enqueueNs: 20, startNs: -1, endNs: -1))
        let outliving = process(pid: 3, durationNs: 1000, item: ReportItem(
            queue: 0, kind: .async, submitterThread: 0, thread: 0, enqueueNs: 40, startNs: 50, endNs: -1))
        let merged = ReportInput.merged([execd, pending, outliving])
        XCTAssertEqual(merged.meta.durationNs, 1000)
        let layout = ItemLayout(merged.items, traceEnd: merged.meta.durationNs, processEnds: ItemLayout.processEnds(of: merged))
        func row(_ item: Int) -> Int { Int(layout.rank[item]) }
        XCTAssertEqual(layout.end[row(0)], 100, "running at its process's end (exec): drawn to there")
        XCTAssertEqual(layout.start[row(1)], 300, "pending at its process's end")
        XCTAssertEqual(layout.end[row(1)], 300)
        XCTAssertEqual(layout.end[row(2)], 1000, "the last process still runs to the report's end")
        for i in 0..<3 { XCTAssertNotEqual(layout.flags[row(i)] & ItemFlags.neverFinished, 0, "still marked unfinished") }
        // One process: the report's end, as before.
        let single = ItemLayout(execd.items, traceEnd: 100, processEnds: ItemLayout.processEnds(of: execd))
        XCTAssertEqual(single.end[0], 100)
    }
}
