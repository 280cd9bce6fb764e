// The Dispatch sources and Foundation timers while the model is built: their configuration,
// suspension (sources are created inactive), merges and handler runs, with the run-time state
// that sorts a run's figures (merges since the last run, fires since the timer was set). The
// handler runs' items are the ItemTracker's; ModelBuilder+Objects.swift and +RunLoops wire them.

struct SourceTable {
    /// The model's sources (moved into it by `close`).
    private(set) var sources: [TraceSource] = []
    /// Run-time state, index-aligned with `sources`.
    private var state: [SourceState] = []

    mutating func add(_ source: TraceSource) -> Int32 {
        let s = Int32(sources.count)
        sources.append(source)
        state.append(SourceState())
        return s
    }

    func queue(of s: Int) -> Int? { sources[s].queue }
    func address(of s: Int) -> UInt64 { sources[s].address }

    mutating func setQueue(_ s: Int, _ q: Int32) { sources[s].queue = Int(q) }

    mutating func timerSet(_ s: Int, _ timer: TimerConfig) {
        sources[s].timers.append(timer)
        state[s].firesSinceTimerSet = 0
    }

    /// dispatch_source_set_*_handler: 0 event, 1 cancel, else registration.
    mutating func handlerSet(_ s: Int, kind: UInt32) {
        switch kind {
        case 0: sources[s].hasEventHandler = true
        case 1: sources[s].hasCancelHandler = true
        default: sources[s].hasRegistrationHandler = true
        }
    }

    mutating func cancelled(_ s: Int, at now: UInt64) {
        guard sources[s].cancelledAt == nil else { return }
        sources[s].cancelledAt = now
        sources[s].cancelledWhileSuspended = state[s].suspendCount > 0
    }

    mutating func merged(_ s: Int, at now: UInt64) {
        sources[s].merges += 1
        state[s].mergesSinceRun += 1
        if state[s].firstUnhandledMerge == nil { state[s].firstUnhandledMerge = now }
    }

    mutating func suspended(_ s: Int, at now: UInt64) {
        state[s].suspendCount += 1
        state[s].suspendedSinceRun = true
        if state[s].suspendCount == 1 {
            sources[s].suspensions.append(SuspendInterval(start: now, end: nil, initial: false))
        }
    }

    /// RESUME (or ACTIVATE when `activateOnly`): resuming an inactive source activates it.
    mutating func resumed(_ s: Int, activateOnly: Bool, at now: UInt64) {
        if state[s].inactive {
            state[s].inactive = false
            sources[s].activatedAt = now
        } else if activateOnly || state[s].suspendCount == 0 {
            return
        }
        state[s].suspendCount -= 1
        if state[s].suspendCount == 0 { closeLastSuspension(&sources[s].suspensions, at: now) }
    }

    /// A handler run of source `s` as item `item`: an event handler's run takes the merges
    /// since the previous one.
    mutating func handlerRunBegan(_ s: Int, item: Int32, kind: HandlerKind, data: UInt64, lateness: Int64?,
                                  at now: UInt64) {
        var run = SourceHandlerRun(item: Int(item), kind: kind, data: data, merges: 0, delayNs: nil, latenessNs: nil,
                                   coalesced: false, afterSuspension: false)
        if kind == .event {
            let since = state[s]
            run.merges = since.mergesSinceRun
            run.afterSuspension = since.suspendedSinceRun
            if let first = since.firstUnhandledMerge { run.delayNs = now - first }
            switch sources[s].type {
            case .timer, .interval, .signal: run.coalesced = data > 1
            case .dataAdd, .dataOr, .dataReplace: run.coalesced = since.mergesSinceRun > 1
            default: run.coalesced = false
            }
            run.latenessNs = lateness
            state[s].mergesSinceRun = 0
            state[s].firstUnhandledMerge = nil
            state[s].suspendedSinceRun = state[s].suspendCount > 0
        }
        sources[s].runs.append(run)
    }

    /// Handler start minus the programmed time of the latest fire this run covers: fire k
    /// (0-based) is due at start + k * interval, and each run covers `data` fires.
    mutating func timerLateness(_ s: Int, data: UInt64, at now: UInt64) -> Int64? {
        guard sources[s].type == .timer || sources[s].type == .interval,
              let timer = sources[s].timers.last, let start = timer.start else { return nil }
        // `data` is the payload's fire count: saturating, so k stays >= 0 whatever it claims.
        state[s].firesSinceTimerSet.saturatingIncrement(by: Swift.max(data, 1))
        let k = state[s].firesSinceTimerSet - 1
        let (offset, overflow) = (timer.intervalNs ?? 0).multipliedReportingOverflow(by: k)
        guard !overflow, timer.intervalNs != nil || k == 0 else { return nil }
        let due = start &+ offset
        return Int64(bitPattern: now &- due)
    }

    /// The sources for the model, with their suspend counts at the end; the table is empty
    /// afterwards.
    mutating func close() -> [TraceSource] {
        for s in state.indices { sources[s].suspendCountAtEnd = Int(state[s].suspendCount) }
        defer { sources = []; state = [] }
        return sources
    }
}

/// A source's run-time state.
struct SourceState {
    var suspendCount: Int32 = 1
    var inactive = true
    var mergesSinceRun = 0
    var firstUnhandledMerge: UInt64?
    var suspendedSinceRun = false
    var firesSinceTimerSet: UInt64 = 0
}
