// Kernel scheduling states in the report's data (traces recorded with `qtrace record --sched`):
// the "sched" table, the thread strips and each item's CPU / runnable / sleeping columns.
import QTraceViewModel

extension ReportEncoder {
    /// The "sched" table (thread, start, duration, state), the threadSched tracks, and the
    /// items' cpu / runnable / sleep columns (written by writeItems).
    mutating func writeSched() {
        guard let sched = input.sched else { return }
        let intervals = sched.intervals.sorted { ($0.startNs, $0.thread) < ($1.startNs, $1.thread) }
        payload.beginTable("sched", rows: intervals.count)
        payload.column("thread", .plus1, as: .i32, intervals.map { Int64($0.thread) })
        payload.column("start", .delta, as: .f64, intervals.map { $0.startNs })
        payload.column("duration", .uvarint, as: .f64, intervals.map { max(0, $0.endNs - $0.startNs) })
        payload.column("state", .u8, as: .u8, intervals.map { Int64($0.state.rawValue) })
        var perThread = [TrackBoxes](repeating: TrackBoxes(), count: input.threads.count)
        for s in intervals where perThread.indices.contains(s.thread) {
            perThread[s.thread].append(begin: s.startNs, end: s.endNs, row: 0, color: Int32(s.state.rawValue))
        }
        for (t, boxes) in perThread.enumerated() { lod.addTrack(kind: "threadSched", object: t, boxes: boxes) }
    }

    /// Item columns in the items table's (sorted) order; called while that table is open.
    mutating func writeItemSchedColumns(order: [Int32]) {
        guard let sched = input.sched, sched.itemCpuNs.count == input.items.count else { return }
        payload.column("cpu", .uvarint, as: .f64, order.lazy.map { max(0, sched.itemCpuNs[Int($0)]) })
        payload.column("runnable", .uvarint, as: .f64, order.lazy.map { max(0, sched.itemRunnableNs[Int($0)]) })
        payload.column("sleep", .uvarint, as: .f64, order.lazy.map { max(0, sched.itemSleepingNs[Int($0)]) })
    }
}
