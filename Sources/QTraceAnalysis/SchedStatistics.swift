// Scheduling statistics of a trace recorded with `--sched` (statistics.sched in the JSON
// summary, the SCHEDULING table of `qtrace stats`, the sched.blocked-in-items finding).

/// Time in each kernel state of the items of one queue: how much of their run time (wall)
/// was CPU time, waiting for a CPU, or blocked.
public struct QueueSchedStats: Sendable, Codable, Equatable {
    public var queue: Int
    public var label: String
    public var items: Int
    /// Sum of the items' run times (start to end).
    public var wallNs: UInt64
    /// On a CPU (the items' CPU time), runnable (waiting for a CPU), sleeping (blocked).
    public var cpuNs: UInt64
    public var runnableNs: UInt64
    public var sleepingNs: UInt64
    /// cpuNs / wallNs and sleepingNs / wallNs.
    public var cpuShare: Double
    public var sleepShare: Double
    /// Items that slept at least half of their run time (and at least 1 ms).
    public var mostlySleepingItems: Int
}

public struct ThreadSchedStats: Sendable, Codable, Equatable {
    public var thread: Int
    public var tid: Int32
    /// From the thread's first state change to its exit or the end of the trace.
    public var runningNs: UInt64
    public var runnableNs: UInt64
    public var sleepingNs: UInt64
    public var stateChanges: Int
}

/// One item's run split by kernel state (the items that slept the most).
public struct ItemSchedStats: Sendable, Codable, Equatable {
    public var item: Int
    public var queue: Int?
    public var wallNs: UInt64
    public var cpuNs: UInt64
    public var runnableNs: UInt64
    public var sleepingNs: UInt64
}

public struct SchedStatistics: Sendable, Codable, Equatable {
    /// SCHED_STATE records in the trace.
    public var records: Int
    /// Over all items: run time, and its CPU / runnable / sleeping parts.
    public var itemWallNs: UInt64 = 0
    public var itemCpuNs: UInt64 = 0
    public var itemRunnableNs: UInt64 = 0
    public var itemSleepingNs: UInt64 = 0
    public var mostlySleepingItems = 0
    /// Queues with items, in model order.
    public var queues: [QueueSchedStats] = []
    /// Threads with state changes, in model order.
    public var threads: [ThreadSchedStats] = []
    /// The items that slept the longest (up to 10), longest first.
    public var topSleepingItems: [ItemSchedStats] = []

    /// An item sleeping at least this share of its run time, and at least `mostlySleepingMinNs`, mostly sleeps.
    public static let mostlySleepingShare = 0.5
    public static let mostlySleepingMinNs: UInt64 = 1_000_000

    static func mostlySleeps(_ times: SchedTimes, wall: UInt64) -> Bool {
        times.sleepingNs >= mostlySleepingMinNs && Double(times.sleepingNs) >= mostlySleepingShare * Double(wall)
    }

    public init?(_ model: TraceModel) {
        guard let sched = model.sched else { return nil }
        records = sched.recordCount
        var perQueue = [(items: Int, mostly: Int)](repeating: (0, 0), count: model.queues.count)
        var sleepers: [ItemSchedStats] = []
        for (i, item) in model.items.enumerated() {
            guard let start = item.started, item.threadIndex >= 0 else { continue }
            let wall = (item.ended ?? model.endTime) &- start
            let times = sched.items[i]
            itemWallNs &+= wall; itemCpuNs &+= times.runningNs
            itemRunnableNs &+= times.runnableNs; itemSleepingNs &+= times.sleepingNs
            let mostly = Self.mostlySleeps(times, wall: wall)
            if mostly { mostlySleepingItems += 1 }
            if let q = item.queue {
                perQueue[q].items += 1
                if mostly { perQueue[q].mostly += 1 }
            }
            if times.sleepingNs > 0 {
                sleepers.append(ItemSchedStats(item: i, queue: item.queue, wallNs: wall, cpuNs: times.runningNs,
                                               runnableNs: times.runnableNs, sleepingNs: times.sleepingNs))
            }
        }
        queues = model.queues.indices.filter { perQueue[$0].items > 0 }.map { q in
            let t = sched.queues[q]
            return QueueSchedStats(queue: q, label: model.queues[q].label, items: perQueue[q].items, wallNs: t.wallNs,
                                   cpuNs: t.times.runningNs, runnableNs: t.times.runnableNs, sleepingNs: t.times.sleepingNs,
                                   cpuShare: share(t.times.runningNs, of: t.wallNs),
                                   sleepShare: share(t.times.sleepingNs, of: t.wallNs), mostlySleepingItems: perQueue[q].mostly)
        }
        threads = model.threads.indices.filter { !sched.threads[$0].isEmpty }.map { t in
            let times = sched.threadTimes[t]
            return ThreadSchedStats(thread: t, tid: model.threads[t].tid, runningNs: times.runningNs,
                                    runnableNs: times.runnableNs, sleepingNs: times.sleepingNs,
                                    stateChanges: sched.threads[t].count)
        }
        topSleepingItems = Array(sleepers.sorted { ($0.sleepingNs, $1.item) > ($1.sleepingNs, $0.item) }.prefix(10))
    }
}

extension RuleContext {
    /// sched.blocked-in-items: a queue whose items spent most of their run time blocked in
    /// the kernel (sleep, blocking I/O, locks) holds threads without using a CPU.
    mutating func schedBlockedInItems() {
        guard let sched = stats.sched else { return }
        let flagged = sched.queues.filter {
            $0.mostlySleepingItems > 0 && $0.sleepShare >= SchedStatistics.mostlySleepingShare
                && $0.sleepingNs >= Thresholds.blockedInItemsMinNs
        }
        guard !flagged.isEmpty else { return }
        let spans = itemSpans(ofQueues: Set(flagged.map(\.queue)))
        for q in flagged {
            let queue = model.queues[q.queue]
            let severity: Severity = queue.kind == .main ? .error : .warning
            let span = spans[q.queue] ?? (0, model.endTime)
            add("sched.blocked-in-items", severity, span.start, span.end, [queueRef(q.queue)],
                "items of \(self.q(q.queue)) were blocked (sleeping in the kernel) \(formatPercent(q.sleepShare)) of their "
                    + "\(formatDuration(q.wallNs)) run time (\(q.mostlySleepingItems) of \(q.items) items mostly slept): "
                    + "blocking calls inside items hold a thread; make them asynchronous or move them off Dispatch",
                weight: q.sleepingNs)
        }
    }

    /// From the first start to the last end of each queue's started items, in one pass over
    /// the items for all the queues (not one per queue).
    private func itemSpans(ofQueues queues: Set<Int>) -> [Int: (start: UInt64, end: UInt64)] {
        var spans: [Int: (start: UInt64, end: UInt64)] = [:]
        for item in model.items where item.queueIndex >= 0 && queues.contains(Int(item.queueIndex)) {
            guard let start = item.started else { continue }
            let end = item.ended ?? model.endTime
            let q = Int(item.queueIndex)
            if let span = spans[q] {
                spans[q] = (Swift.min(span.start, start), Swift.max(span.end, end))
            } else {
                spans[q] = (start, end)
            }
        }
        return spans
    }
}

extension Thresholds {
    /// A queue's items blocked less than this in total is noise†.
    public static let blockedInItemsMinNs: UInt64 = 10_000_000
}
