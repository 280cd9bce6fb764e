// Kernel scheduling states (`qtrace record --sched`, SCHED_STATE records): each thread's
// running / runnable / sleeping timeline, and the time each item and queue spent in each
// state while its items ran. Built after the Dispatch model, only when the trace has
// scheduler records: traces without them cost nothing here.
import QTraceFormat

/// Time in each scheduling state over some interval. `knownNs` is the part of the interval
/// covered by the timeline (before a thread's first state change its state is unknown).
public struct SchedTimes: Sendable, Codable, Equatable {
    public var runningNs: UInt64 = 0
    public var runnableNs: UInt64 = 0
    public var sleepingNs: UInt64 = 0
    public init(runningNs: UInt64 = 0, runnableNs: UInt64 = 0, sleepingNs: UInt64 = 0) {
        self.runningNs = runningNs; self.runnableNs = runnableNs; self.sleepingNs = sleepingNs
    }
    public var knownNs: UInt64 { runningNs + runnableNs + sleepingNs }

    static func + (a: SchedTimes, b: SchedTimes) -> SchedTimes {
        SchedTimes(runningNs: a.runningNs &+ b.runningNs, runnableNs: a.runnableNs &+ b.runnableNs,
                   sleepingNs: a.sleepingNs &+ b.sleepingNs)
    }

    static func - (a: SchedTimes, b: SchedTimes) -> SchedTimes {
        SchedTimes(runningNs: a.runningNs &- b.runningNs, runnableNs: a.runnableNs &- b.runnableNs,
                   sleepingNs: a.sleepingNs &- b.sleepingNs)
    }
}

/// One state change of a thread.
public struct SchedChange: Sendable, Equatable {
    public var time: UInt64
    public var state: SchedState
    public var cpu: Int32
    /// Sleeping in an uninterruptible wait (D).
    public var uninterruptible: Bool
    public init(time: UInt64, state: SchedState, cpu: Int32 = 0, uninterruptible: Bool = false) {
        self.time = time; self.state = state; self.cpu = cpu; self.uninterruptible = uninterruptible
    }
}

/// Per-queue totals over its items' runs.
public struct QueueSchedTimes: Sendable, Codable, Equatable {
    public var times = SchedTimes()
    /// Sum of its items' run times (start to end), the wall time the states split.
    public var wallNs: UInt64 = 0
    public init() {}
}

public struct SchedModel: Sendable {
    /// Index-aligned with `TraceModel.threads`: each thread's state changes in time order.
    public var threads: [[SchedChange]]
    /// Index-aligned with `TraceModel.threads`: time in each state from the first change to
    /// the thread's exit (or the end of the trace).
    public var threadTimes: [SchedTimes]
    /// Index-aligned with `TraceModel.items`: time in each state between start and end.
    public var items: [SchedTimes]
    /// Index-aligned with `TraceModel.queues`.
    public var queues: [QueueSchedTimes]
    /// SCHED_STATE records read.
    public var recordCount: Int
}

extension TraceModel {
    /// Whether the trace holds kernel scheduling states.
    public var hasSched: Bool { sched != nil }
}

/// A SCHED_STATE record kept until the model's threads are known.
struct PendingSchedChange {
    var tid: Int32
    var change: SchedChange
}

extension ModelBuilder {
    /// SCHED_STATE: kept aside (the thread may not be in the model yet), matched in `finish`.
    mutating func schedStateChanged(_ e: Event) {
        guard let state = SchedState(rawValue: e.arg) else { return }
        let flags = SchedFlags(rawValue: e.flags)
        schedChanges.append(PendingSchedChange(
            tid: Int32(truncatingIfNeeded: e.a),
            change: SchedChange(time: e.time, state: state, cpu: Int32(truncatingIfNeeded: e.b),
                                uninterruptible: flags.contains(.uninterruptible))))
    }

    /// Attaches the scheduler timelines to the finished model.
    mutating func attachSched() {
        guard !schedChanges.isEmpty else { return }
        model.sched = SchedModel.build(model: model, changes: schedChanges)
    }
}

extension SchedModel {
    static func build(model: TraceModel, changes: [PendingSchedChange]) -> SchedModel {
        let threads = assignToThreads(changes, model: model)
        let timelines = threads.indices.map { t in
            StateTimeline(threads[t], end: model.threads[t].exitedAt ?? model.endTime)
        }
        var items = [SchedTimes](repeating: SchedTimes(), count: model.items.count)
        var queues = [QueueSchedTimes](repeating: QueueSchedTimes(), count: model.queues.count)
        for (i, item) in model.items.enumerated() {
            guard let t = item.thread, let start = item.started else { continue }
            let end = item.ended ?? model.endTime
            guard end >= start else { continue }
            items[i] = timelines[t].times(from: start, to: end)
            if let q = item.queue {
                queues[q].times = queues[q].times + items[i]
                queues[q].wallNs &+= end - start
            }
        }
        return SchedModel(threads: threads, threadTimes: timelines.map(\.total), items: items, queues: queues,
                          recordCount: changes.count)
    }

    /// Each change goes to the model thread of its tid alive at its time: the latest one
    /// first seen at or before it (Linux reuses tids), or the first one.
    static func assignToThreads(_ changes: [PendingSchedChange], model: TraceModel) -> [[SchedChange]] {
        var byTid: [Int32: [Int]] = [:]
        for (t, thread) in model.threads.enumerated() { byTid[thread.tid, default: []].append(t) }
        var threads = [[SchedChange]](repeating: [], count: model.threads.count)
        for pending in changes {
            guard let candidates = byTid[pending.tid] else { continue }
            let t = candidates.last { model.threads[$0].firstSeen <= pending.change.time } ?? candidates[0]
            var change = pending.change
            // Out-of-order input is clamped, as the builder clamps events: times never go back.
            if let last = threads[t].last, change.time < last.time { change.time = last.time }
            threads[t].append(change)
        }
        return threads
    }
}

/// A thread's states as prefix sums at each change: the time in each state over any
/// interval is two binary searches.
struct StateTimeline {
    let changes: [SchedChange]
    /// Time in each state from the first change to change k.
    let cumulative: [SchedTimes]
    let end: UInt64

    init(_ changes: [SchedChange], end: UInt64) {
        self.changes = changes
        self.end = end
        var sums: [SchedTimes] = []
        sums.reserveCapacity(changes.count)
        var sum = SchedTimes()
        for k in changes.indices {
            if k > 0 { sum = sum + Self.span(changes[k - 1].state, changes[k].time &- changes[k - 1].time) }
            sums.append(sum)
        }
        cumulative = sums
    }

    /// From the first change to the thread's end.
    var total: SchedTimes { at(end) }

    func times(from start: UInt64, to stop: UInt64) -> SchedTimes {
        let a = at(start), b = at(stop)
        return b - a
    }

    /// Time in each state from the first change to `time` (zero before it), capped at `end`.
    func at(_ time: UInt64) -> SchedTimes {
        let time = min(time, max(end, changes.first?.time ?? 0))
        var low = 0, high = changes.count
        while low < high {
            let mid = (low + high) / 2
            if changes[mid].time <= time { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return SchedTimes() }
        let k = low - 1
        return cumulative[k] + Self.span(changes[k].state, time - changes[k].time)
    }

    static func span(_ state: SchedState, _ ns: UInt64) -> SchedTimes {
        switch state {
        case .running: SchedTimes(runningNs: ns)
        case .runnable: SchedTimes(runnableNs: ns)
        case .sleeping: SchedTimes(sleepingNs: ns)
        case .exited: SchedTimes()
        }
    }
}
