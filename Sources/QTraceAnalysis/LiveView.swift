// `qtrace top`: what a trace being written says about its last few seconds. Computed from the
// model of everything recorded so far, so that a queue's pending and running items are exact
// and its rates and percentiles cover only the recent window.

/// One queue in the live view.
public struct LiveQueueRow: Sendable, Equatable {
    public var queue: Int
    public var name: String
    /// Enqueued and not started, at the end of what was read.
    public var pending: Int
    /// Started and not ended.
    public var running: Int
    /// Items that started in the window, per second.
    public var itemsPerSecond: Double
    /// Waits of items that started in the window, runs of items that ended in it.
    public var wait: DurationStats
    public var run: DurationStats
}

/// Rules that judge the state at the end of a trace ("never left by the end"): while the
/// program runs they are not settled yet (a wait still open is not yet one that never
/// finished; deadlocks have rules of their own), so the live view leaves them out.
public let rulesSettledAtExit: Set<String> = [
    "group.never-left", "source.never-resumed", "item.running-at-end", "wait.never-finished",
]

public enum LiveSortKey: String, CaseIterable, Sendable {
    case rate, wait, run, pending

    /// The next key (the `s` key of `qtrace top` cycles through them).
    public var next: LiveSortKey {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

/// The live view's figures at one refresh.
public struct LiveSnapshot: Sendable {
    /// Trace time of the last event read, and the window before it.
    public var nowNs: UInt64
    public var windowNs: UInt64
    public var queues: [LiveQueueRow]
    public var threadsAlive: Int
    public var workersAlive: Int
    /// Threads blocked (sync, semaphore, group wait, apply, once) right now.
    public var threadsBlocked: Int
    public var itemsPerSecond: Double
    public var events: Int
    public var droppedEvents: UInt64

    /// `windowNs` before the last event (the whole trace when it is shorter). Queues with no
    /// recent or current work are left out.
    public init(model: TraceModel, windowNs: UInt64, sortedBy key: LiveSortKey = .rate) {
        nowNs = model.endTime
        self.windowNs = Swift.min(windowNs, Swift.max(model.endTime, 1))
        let from = nowNs > windowNs ? nowNs - windowNs : 0
        var rows = model.queues.indices.map {
            LiveQueueRow(queue: $0, name: queueName(model.queues[$0]), pending: 0, running: 0, itemsPerSecond: 0,
                         wait: DurationStats(), run: DurationStats())
        }
        let waits = DurationRecorder.many(rows.count), runs = DurationRecorder.many(rows.count)
        var started = [Int](repeating: 0, count: rows.count)
        var allStarted = 0
        for item in model.items {
            let startedRecently = item.startTime != noTime && item.startTime >= from
            if startedRecently { allStarted += 1 }
            guard let q = item.queue else { continue }
            if item.startTime == noTime {
                if item.enqueueTime != noTime { rows[q].pending += 1 }
                continue
            }
            if item.endTime == noTime { rows[q].running += 1 }
            if startedRecently {
                started[q] += 1
                if let w = item.wait { waits[q].record(w) }
            }
            if item.endTime != noTime && item.endTime >= from, let r = item.runTime { runs[q].record(r) }
        }
        let seconds = Double(self.windowNs) / 1e9
        for q in rows.indices {
            rows[q].itemsPerSecond = Double(started[q]) / seconds
            rows[q].wait = waits[q].stats
            rows[q].run = runs[q].stats
        }
        queues = rows.filter { $0.pending + $0.running + started[$0.queue] + $0.run.count > 0 }
        itemsPerSecond = Double(allStarted) / seconds
        let alive = model.threads.filter { $0.exitedAt == nil }
        threadsAlive = alive.count
        workersAlive = alive.filter { $0.kind == .worker }.count
        threadsBlocked = alive.filter { $0.blocked.last.map { $0.end == nil } ?? false }.count
        events = model.eventCount
        droppedEvents = model.info.droppedEvents
        sort(by: key)
    }

    /// Busiest first by the key; ties by name (a stable screen).
    public mutating func sort(by key: LiveSortKey) {
        func value(_ r: LiveQueueRow) -> Double {
            switch key {
            case .rate: r.itemsPerSecond
            case .wait: Double(r.wait.count > 0 ? r.wait.p99Ns : 0)
            case .run: Double(r.run.count > 0 ? r.run.p99Ns : 0)
            case .pending: Double(r.pending)
            }
        }
        queues.sort { value($0) != value($1) ? value($0) > value($1) : ($0.name, $0.queue) < ($1.name, $1.queue) }
    }
}

/// One of a queue's recent items in the live view (the one picked with Enter).
public struct LiveItemRow: Sendable, Equatable {
    /// As every view names it: `item id=N` (the id `qtrace dump` prints) or `item #index`.
    public var name: String
    public var code: String?
    public var startNs: UInt64?
    public var waitNs: UInt64?
    /// Run time, nil while it runs or waits.
    public var runNs: UInt64?
    public var state: String
}

extension LiveSnapshot {
    /// The queue's `limit` most recent items, newest first (by start, pending ones first).
    public static func recentItems(_ model: TraceModel, queue: Int, limit: Int) -> [LiveItemRow] {
        var picked: [(key: UInt64, index: Int)] = []
        for (i, item) in model.items.enumerated() where item.queue == queue {
            // Pending items sort above everything that started (they are the newest news).
            picked.append((item.startTime == noTime ? .max : item.startTime, i))
            if picked.count > 4 * limit {
                picked.sort { $0.key > $1.key }
                picked.removeLast(picked.count - limit)
            }
        }
        return picked.sorted { ($0.key, $0.index) > ($1.key, $1.index) }.prefix(limit).map { key, i in
            let item = model.items[i]
            let state = item.startTime == noTime ? "pending" : item.endTime == noTime ? "running" : "done"
            return LiveItemRow(name: itemReference(model, i), code: item.site.map { model.siteDescription($0) },
                               startNs: item.startTime == noTime ? nil : item.startTime, waitNs: item.wait,
                               runNs: item.runTime, state: state)
        }
    }
}
