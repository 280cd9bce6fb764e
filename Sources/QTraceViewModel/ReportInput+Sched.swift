// Kernel scheduling states in the report (traces recorded with `qtrace record --sched`): a
// strip under each thread lane, and each item's CPU / runnable / sleeping time.
import QTraceAnalysis
import QTraceFormat

/// The state code stored in the report ("sched" table, `state` column).
public enum ReportSchedState: UInt8, Sendable, CaseIterable {
    case running = 0, runnable, sleeping

    public var name: String {
        switch self {
        case .running: "running"
        case .runnable: "runnable"
        case .sleeping: "sleeping"
        }
    }
}

/// One stretch of one thread in one state.
public struct ReportSchedInterval: Sendable, Equatable {
    public var thread: Int
    public var startNs: Int64
    public var endNs: Int64
    public var state: ReportSchedState

    public init(thread: Int, startNs: Int64, endNs: Int64, state: ReportSchedState) {
        self.thread = thread; self.startNs = startNs; self.endNs = endNs; self.state = state
    }
}

public struct ReportSched: Sendable {
    public var intervals: [ReportSchedInterval]
    /// Index-aligned with `ReportInput.items`: time on a CPU, waiting for one, and blocked
    /// while the item ran (0 for items that never ran).
    public var itemCpuNs: [Int64]
    public var itemRunnableNs: [Int64]
    public var itemSleepingNs: [Int64]

    public init(intervals: [ReportSchedInterval], itemCpuNs: [Int64], itemRunnableNs: [Int64], itemSleepingNs: [Int64]) {
        self.intervals = intervals
        self.itemCpuNs = itemCpuNs
        self.itemRunnableNs = itemRunnableNs
        self.itemSleepingNs = itemSleepingNs
    }
}

extension AnalysisReportBuilder {
    /// Each thread's state changes as intervals (to its exit or the end of the trace).
    func sched() -> ReportSched? {
        guard let sched = model.sched else { return nil }
        var intervals: [ReportSchedInterval] = []
        for (t, changes) in sched.threads.enumerated() {
            let threadEnd = Int64(model.threads[t].exitedAt ?? model.endTime)
            for (k, change) in changes.enumerated() {
                guard let state = Self.schedState(change.state) else { continue }
                let start = Int64(change.time)
                let stop = min(k + 1 < changes.count ? Int64(changes[k + 1].time) : threadEnd, threadEnd)
                if stop > start { intervals.append(ReportSchedInterval(thread: t, startNs: start, endNs: stop, state: state)) }
            }
        }
        return ReportSched(intervals: intervals, itemCpuNs: sched.items.map { Int64($0.runningNs) },
                           itemRunnableNs: sched.items.map { Int64($0.runnableNs) },
                           itemSleepingNs: sched.items.map { Int64($0.sleepingNs) })
    }

    static func schedState(_ state: SchedState) -> ReportSchedState? {
        switch state {
        case .running: .running
        case .runnable: .runnable
        case .sleeping: .sleeping
        case .exited: nil
        }
    }

    /// Per queue: the items' run time split by kernel state (the JSON summary's statistics.sched.queues).
    static func schedTable(_ stats: TraceStatistics) -> ReportTable? {
        guard let sched = stats.sched else { return nil }
        let columns = [
            ReportColumn(key: "label", title: "Queue"), ReportColumn(key: "items", title: "Items", unit: "count"),
            ReportColumn(key: "wallNs", title: "Run time", unit: "ns"),
            ReportColumn(key: "cpuNs", title: "CPU", unit: "ns"),
            ReportColumn(key: "runnableNs", title: "Runnable", unit: "ns"),
            ReportColumn(key: "sleepingNs", title: "Sleeping", unit: "ns"),
            ReportColumn(key: "cpuShare", title: "CPU / wall", unit: "%"),
            ReportColumn(key: "mostlySleepingItems", title: "Mostly slept", unit: "count"),
        ]
        let rows = sched.queues.map { q in
            ReportRow(values: [
                .text(q.label), .number(Double(q.items)), .number(Double(q.wallNs)), .number(Double(q.cpuNs)),
                .number(Double(q.runnableNs)), .number(Double(q.sleepingNs)), .number(q.cpuShare * 100),
                .number(Double(q.mostlySleepingItems)),
            ], objectIndex: q.queue)
        }
        return ReportTable(id: "sched", title: "Scheduling (CPU vs wall time of items, --sched)", rowObject: .queue,
                           columns: columns, rows: rows)
    }
}
