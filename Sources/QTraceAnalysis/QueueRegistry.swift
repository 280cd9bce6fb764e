// The queues while the model is built: each queue's record (`TraceQueue`) and run-time state,
// their targets (serial domains, effective QoS, target loops), suspension through target
// chains, backlog episodes and the per-queue clocks that split an item's wait by cause.
// Queues are numbered by the registry; which address names which queue is the
// `ObjectDirectory`'s business (ModelBuilder+Queues.swift wires the two).
import QTraceFormat

struct QueueRegistry {
    /// The model's queues (moved into it by `finish`): they change several times per event,
    /// which an array in a struct would check for sharing at every write. Their figures (the
    /// backlog series, waits and busy time) are in `activity` until `takeQueues`.
    private(set) var queues = UnsafeTable<TraceQueue>()
    /// Backlog changes not yet recorded in their queue's series (by row of `activity`).
    private var backlogLog = BacklogLog()
    /// Run-time state, index-aligned with `queues`.
    private var state = UnsafeTable<QueueState>()
    /// The run-time state of the queues with items (`QueueState.activity`), in the order of
    /// their first item.
    private var activity = UnsafeTable<QueueActivity>()
    /// Bumped when a target changes, invalidating cached serial domains and QoS.
    private var topologyVersion: Int32 = 0
    /// Marks the queues of one target-chain walk (`chainSuspended`).
    private var chainWalkStamp: UInt32 = 0
    /// The default-QoS global queue, -1 until needed or named.
    private(set) var defaultRoot: Int32 = -1
    private(set) var mainQueue: Int32 = -1
    /// Cycles through targets (libdispatch cannot detect them; the program hangs).
    private(set) var targetLoops: [TargetLoop] = []

    var count: Int { queues.count }

    @inline(__always)
    subscript(q: Int32) -> TraceQueue { queues[Int(q)] }

    @inline(__always)
    func target(of q: Int32) -> Int32 { state[Int(q)].target }

    @inline(__always)
    func isSerial(_ q: Int32) -> Bool { queues[Int(q)].kind.isSerial }

    /// The thread running an item of serial domain `d` (-1: none).
    @inline(__always)
    func holder(ofDomain d: Int32) -> Int32 {
        let a = state[Int(d)].activity
        return a < 0 ? -1 : activity[Int(a)].holder
    }

    /// The row of `q` in `activity`, added at its first use.
    @inline(__always)
    private mutating func active(_ q: Int, at now: UInt64) -> Int {
        let a = state[q].activity
        return a >= 0 ? Int(a) : activate(q, at: now)
    }

    @inline(never)
    private mutating func activate(_ q: Int, at now: UInt64) -> Int {
        let a = activity.count
        var fresh = QueueActivity()
        fresh.suspended.set(state[q].effectivelySuspended, at: now)
        activity.append(fresh)
        state[q].activity = Int32(a)
        return a
    }

    /// What `q`'s serial-domain clock reads at `now` (0 before any item ran in its domain).
    @inline(__always)
    private func domainBusy(_ d: Int32, at now: UInt64) -> UInt64 {
        let a = state[Int(d)].activity
        return a < 0 ? 0 : activity[Int(a)].domainBusy.value(at: now)
    }

    mutating func setMainQueue(_ q: Int32) { mainQueue = q }
    mutating func setDefaultRoot(_ q: Int32) { defaultRoot = q }

    /// A new queue at the end of the table (`generation` from the object directory).
    mutating func add(address: UInt64, generation: Int, label: String, kind: QueueKind, origin: QueueOrigin,
                      qos: QoSClass, target: Int32, inactive: Bool, relativePriority: Int, at now: UInt64) -> Int32 {
        let q = Int32(queues.count)
        var queue = TraceQueue(address: address, generation: generation, label: label, kind: kind, origin: origin, qos: qos)
        queue.relativePriority = relativePriority
        queue.createdAt = origin == .created ? now : nil
        queue.initialTarget = opt(target)
        queue.target = opt(target)
        queue.initiallyInactive = inactive
        queues.append(queue)
        var state = QueueState()
        state.target = target
        if inactive {
            state.inactive = true
            state.suspendCount = 1
            queues[Int(q)].suspensions.append(SuspendInterval(start: now, end: nil, initial: true))
        }
        self.state.append(state)
        linkToTarget(q)
        // Nothing targets a new queue yet: no cached chain changes (no topology bump, which
        // would make every queue's cache miss in a trace that keeps creating queues), and its
        // target's suspension state already holds for it.
        let suspended = inactive || (target >= 0 && self.state[Int(target)].effectivelySuspended)
        if suspended { self.state[Int(q)].effectivelySuspended = true }
        return q
    }

    /// The first queue that is the default root by its description, if any.
    func firstDefaultRoot() -> Int32? {
        queues.firstIndex { Self.isDefaultRoot(kind: $0.kind, qos: $0.qos, label: $0.label) }.map { Int32($0) }
    }

    static func isDefaultRoot(kind: QueueKind, qos: QoSClass, label: String) -> Bool {
        kind == .global && qos == .default && !label.contains("overcommit")
    }

    /// QUEUE_INFO completes a placeholder (implicit or from the header) with its description.
    mutating func complete(_ q: Int32, label: String, kind: QueueKind, qos: QoSClass) {
        let i = Int(q)
        let existing = queues[i]
        queues[i].label = label.isEmpty ? existing.label : label
        queues[i].kind = kind == .unknown ? existing.kind : kind
        queues[i].qos = qos
        queues[i].origin = .info
        topologyVersion &+= 1
    }

    /// The placeholder default root turns out to be the queue at `address`.
    mutating func nameDefaultRoot(address: UInt64, generation: Int, label: String) {
        let i = Int(defaultRoot)
        queues[i].address = address
        queues[i].label = label
        queues[i].origin = .info
        queues[i].generation = generation
    }

    // MARK: Targets

    /// `q` now targets `newTarget`.
    mutating func retarget(_ q: Int32, to newTarget: Int32, at now: UInt64) {
        let i = Int(q)
        let old = state[i].target
        if state[i].loopSince != noTime { leaveTargetLoops(of: q) }
        unlinkFromTarget(q)
        state[i].target = newTarget
        linkToTarget(q)
        queues[i].target = opt(newTarget)
        queues[i].targetChanges.append(TargetChange(time: now, from: opt(old), to: opt(newTarget)))
        topologyVersion &+= 1
        checkTargetLoop(q, at: now)
        updateSuspension(from: q, at: now)
    }

    /// Records a cycle through `q`'s targets.
    mutating func checkTargetLoop(_ q: Int32, at now: UInt64) {
        var path: [Int32] = [q]
        var cur = state[Int(q)].target
        while cur >= 0 && path.count <= 64 {
            if cur == q {
                appendObservation(&targetLoops, TargetLoop(time: now, queues: path.map { Int($0) }))
                for member in path { state[Int(member)].loopSince = now }
                return
            }
            if path.contains(cur) { return } // a loop that does not pass through q: already reported
            path.append(cur)
            cur = state[Int(cur)].target
        }
    }

    /// `q` is retargeted: the loops through it are broken, their queues drain again.
    private mutating func leaveTargetLoops(of q: Int32) {
        for loop in targetLoops where loop.queues.contains(Int(q)) {
            for member in loop.queues { state[member].loopSince = noTime }
        }
    }

    /// Whether an item enqueued onto `q` at `enqueued` cannot run: it came after a target loop
    /// formed (libdispatch applies a retarget behind the items already queued, which may still run).
    @inline(__always)
    func isStuckInTargetLoop(queue q: Int32, enqueuedAt enqueued: UInt64) -> Bool {
        let since = state[Int(q)].loopSince
        return since != noTime && enqueued > since
    }

    /// The outermost serial queue on `q`'s target chain (items of all queues below it run one
    /// at a time), or -1 when nothing on the chain is serial.
    mutating func domainRoot(_ q: Int32) -> Int32 {
        if state[Int(q)].cacheVersion != topologyVersion { refreshTopologyCache(q) }
        return state[Int(q)].cachedDomain
    }

    /// QoS of `q`: its own, else its target's, else default.
    mutating func effectiveQoS(_ q: Int32) -> UInt8 {
        if state[Int(q)].cacheVersion != topologyVersion { refreshTopologyCache(q) }
        return state[Int(q)].cachedQoS
    }

    private mutating func refreshTopologyCache(_ q: Int32) {
        var root: Int32 = -1
        var qos: UInt8 = 0
        var cur = q
        var steps = 0
        while cur >= 0 && steps < 64 {
            if queues[Int(cur)].kind.isSerial { root = cur }
            if qos == 0 { qos = queues[Int(cur)].qos.rawValue }
            cur = state[Int(cur)].target
            steps += 1
        }
        state[Int(q)].cachedDomain = root
        state[Int(q)].cachedQoS = qos == 0 ? QoSClass.default.rawValue : qos
        state[Int(q)].cacheVersion = topologyVersion
    }

    /// Adds `q` to its target's list of the queues that target it (an intrusive doubly linked
    /// list: relinking on a retarget is O(1)).
    private mutating func linkToTarget(_ q: Int32) {
        let parent = state[Int(q)].target
        guard parent >= 0 else { return }
        let head = state[Int(parent)].firstChild
        state[Int(q)].nextSibling = head
        state[Int(q)].previousSibling = -1
        if head >= 0 { state[Int(head)].previousSibling = q }
        state[Int(parent)].firstChild = q
    }

    private mutating func unlinkFromTarget(_ q: Int32) {
        let parent = state[Int(q)].target
        guard parent >= 0 else { return }
        let previous = state[Int(q)].previousSibling, next = state[Int(q)].nextSibling
        if previous >= 0 { state[Int(previous)].nextSibling = next } else { state[Int(parent)].firstChild = next }
        if next >= 0 { state[Int(next)].previousSibling = previous }
        state[Int(q)].previousSibling = -1
        state[Int(q)].nextSibling = -1
    }
}

// MARK: Suspension

extension QueueRegistry {
    mutating func suspend(_ q: Int32, at now: UInt64) {
        let i = Int(q)
        state[i].suspendCount += 1
        if state[i].suspendCount == 1 {
            queues[i].suspensions.append(SuspendInterval(start: now, end: nil, initial: false))
            updateSuspension(from: q, at: now)
        }
    }

    /// RESUME (or ACTIVATE when `activateOnly`): resuming an inactive queue activates it.
    mutating func resume(_ q: Int32, activateOnly: Bool, at now: UInt64) {
        let i = Int(q)
        if state[i].inactive {
            state[i].inactive = false
        } else if activateOnly || state[i].suspendCount == 0 {
            return
        }
        state[i].suspendCount -= 1
        if state[i].suspendCount == 0 {
            closeLastSuspension(&queues[i].suspensions, at: now)
            updateSuspension(from: q, at: now)
        }
    }

    /// A queue is effectively suspended when it or any queue on its target chain is suspended
    /// (or inactive). Kept incrementally: after a change to `q`'s own count or target, only
    /// `q` and the queues below it can change, and a queue whose state stays as it was shields
    /// everything below it. Cost: the length of `q`'s chain plus the queues that flip.
    private mutating func updateSuspension(from q: Int32, at now: UInt64) {
        let suspended = chainSuspended(q)
        guard suspended != state[Int(q)].effectivelySuspended else { return }
        setEffectivelySuspended(q, suspended, at: now)
        // Every queue reached below q flips to q's new state unless its own count keeps it
        // suspended; q itself is reached again only through a target loop.
        var stack: [Int32] = [q]
        while let parent = stack.popLast() {
            var child = state[Int(parent)].firstChild
            while child >= 0 {
                let next = state[Int(child)].nextSibling
                let childSuspended = suspended || state[Int(child)].suspendCount > 0
                if child != q && childSuspended != state[Int(child)].effectivelySuspended {
                    setEffectivelySuspended(child, childSuspended, at: now)
                    stack.append(child)
                }
                child = next
            }
        }
    }

    /// Whether `q` or a queue on its target chain has a suspend count (a target loop is walked once).
    private mutating func chainSuspended(_ q: Int32) -> Bool {
        chainWalkStamp &+= 1
        var cur = q
        while cur >= 0 && state[Int(cur)].chainWalkStamp != chainWalkStamp {
            if state[Int(cur)].suspendCount > 0 { return true }
            state[Int(cur)].chainWalkStamp = chainWalkStamp
            cur = state[Int(cur)].target
        }
        return false
    }

    private mutating func setEffectivelySuspended(_ q: Int32, _ suspended: Bool, at now: UInt64) {
        state[Int(q)].effectivelySuspended = suspended
        let a = state[Int(q)].activity
        if a >= 0 { activity[Int(a)].suspended.set(suspended, at: now) }
    }
}

// MARK: Items on the queue: backlog, execution, the wait split

/// How an item's wait on its queue splits by cause, and the item it waited behind.
struct WaitSplit {
    var behindPrevious: UInt64
    var behindBarrier: UInt64
    var suspended: UInt64
    var forThread: UInt64
    /// The item it waited behind (-1: none) and for how long.
    var blocker: Int32 = -1
    var blockedFor: UInt64 = 0
}

extension QueueRegistry {
    /// Item `i` is enqueued onto `q`: its pending entry holds the queue's clocks now, so that
    /// its start can split the wait. `delayed` items (after, notify) are not in the backlog yet.
    mutating func enqueued(_ i: Int32, queue q: Int32, isBarrier: Bool, delayed: Bool,
                           at now: UInt64) -> PendingItem {
        let domain = domainRoot(q)
        let a = active(Int(q), at: now)
        let entry = PendingItem(item: i, domain: domain, inBacklog: !delayed,
                                domainBusyAt: domain >= 0 ? domainBusy(domain, at: now) : 0,
                                runningAt: activity[a].running.value(at: now),
                                barrierAt: activity[a].barrier.value(at: now),
                                suspendedAt: activity[a].suspended.value(at: now))
        if !delayed { backlogChanged(Int(q), by: 1, at: now) }
        if isBarrier {
            activity[a].barriersOutstanding += 1
            activity[a].barrier.set(true, at: now)
            activity[a].lastBarrierItem = i
        }
        return entry
    }

    /// The wait of an item of `q` that started now after being ready at `ready`, split with
    /// the queue's clocks since its enqueue (in that order of precedence: the domain busy, a
    /// barrier outstanding, suspended; the rest waited for a thread), added to the queue's sums.
    mutating func splitWait(_ entry: PendingItem, queue q: Int, isBarrier: Bool, ready: UInt64,
                            at now: UInt64) -> WaitSplit {
        let total = now - ready
        let domain = domainRoot(Int32(q))
        let a = active(q, at: now)
        var occupied: UInt64 = 0
        if isBarrier && domain < 0 {
            occupied = activity[a].running.value(at: now) - entry.runningAt // draining earlier items
        } else if domain >= 0 && domain == entry.domain {
            occupied = domainBusy(domain, at: now) - entry.domainBusyAt
        }
        let barrier = isBarrier ? 0 : activity[a].barrier.value(at: now) - entry.barrierAt
        let suspended = activity[a].suspended.value(at: now) - entry.suspendedAt
        let behindPrevious = Swift.min(occupied, total)
        let behindBarrier = Swift.min(barrier, total - behindPrevious)
        let whileSuspended = Swift.min(suspended, total - behindPrevious - behindBarrier)
        var split = WaitSplit(behindPrevious: behindPrevious, behindBarrier: behindBarrier, suspended: whileSuspended,
                              forThread: total - behindPrevious - behindBarrier - whileSuspended)
        // Sums over every item of the queue: saturating (Saturating.swift).
        activity[a].waitByCause.behindPreviousNs.saturatingIncrement(by: split.behindPrevious)
        activity[a].waitByCause.behindBarrierNs.saturatingIncrement(by: split.behindBarrier)
        activity[a].waitByCause.suspendedNs.saturatingIncrement(by: split.suspended)
        activity[a].waitByCause.threadNs.saturatingIncrement(by: split.forThread)
        if behindPrevious > 0 {
            // Serial domain: the item that ran just before; a barrier draining: the last to end.
            let sameDomain = domain >= 0 && domain == entry.domain
            let blocking = sameDomain ? active(Int(domain), at: now) : a
            split.blocker = sameDomain ? activity[blocking].lastDomainItem : activity[blocking].lastEndedItem
            split.blockedFor = behindPrevious
        } else if behindBarrier > 0 {
            split.blocker = activity[a].lastBarrierItem
            split.blockedFor = behindBarrier
        }
        return split
    }

    /// A wait the clocks cannot split (a delayed item: it was never in the backlog), of an
    /// item of `q` that starts now (which would add the queue's activity row now anyway).
    mutating func addUnattributedWait(_ ns: UInt64, queue q: Int, at now: UInt64) {
        let a = active(q, at: now)
        activity[a].waitByCause.unattributedNs.saturatingIncrement(by: ns)
    }

    /// Item `i` of `q` waited `ns` behind `blocker`: the queue keeps its worst such wait.
    mutating func waitedBehind(_ i: Int, blocker: Int32, for ns: UInt64, queue q: Int) {
        // Read into a local first: optional chaining through the array copied the whole queue.
        let worst = queues[q].worstWaitBehind
        if ns > (worst?.waitNs ?? 0) {
            queues[q].worstWaitBehind = WaitBehind(item: i, blocker: Int(blocker), waitNs: ns)
        }
    }

    /// Item `i` of `q` starts on thread `t`: returns the serial domain it counts in.
    @inline(__always)
    mutating func itemStarted(_ i: Int32, queue q: Int32, thread t: Int32, at now: UInt64) -> Int32 {
        let domain = domainRoot(q)
        let a = active(Int(q), at: now)
        activity[a].runningCount += 1
        activity[a].running.set(true, at: now)
        if activity[a].runningCount > activity[a].maxWidth {
            activity[a].maxWidth = activity[a].runningCount
            queues[Int(q)].maxWidth = Int(activity[a].runningCount)
        }
        if domain >= 0 {
            let d = active(Int(domain), at: now)
            activity[d].domainRunning += 1
            activity[d].domainBusy.set(true, at: now)
            activity[d].lastDomainItem = i
            activity[d].holder = t
        }
        return domain
    }

    /// Item `i` of `q`, counted in serial domain `domain`, ended on thread `t`.
    @inline(__always)
    mutating func itemEnded(_ i: Int32, queue q: Int32, domain: Int32, isBarrier: Bool, thread t: Int32,
                            at now: UInt64) {
        let a = active(Int(q), at: now)
        activity[a].runningCount -= 1
        if activity[a].runningCount <= 0 { activity[a].running.set(false, at: now) }
        activity[a].lastEndedItem = i
        if isBarrier {
            activity[a].barriersOutstanding -= 1
            if activity[a].barriersOutstanding <= 0 { activity[a].barrier.set(false, at: now) }
        }
        if domain >= 0 {
            let d = active(Int(domain), at: now)
            activity[d].domainRunning -= 1
            if activity[d].domainRunning <= 0 { activity[d].domainBusy.set(false, at: now) }
            if activity[d].holder == t { activity[d].holder = -1 }
        }
    }

    /// A copy of the queues with their figures so far (a model read before the end).
    var queuesSoFar: [TraceQueue] {
        var copy = Array(queues)
        var rows = Array(activity)
        backlogLog.replay(into: &rows)
        for q in state.indices where state[q].activity >= 0 { Self.moveFigures(of: &rows[Int(state[q].activity)], into: &copy[q]) }
        return copy
    }

    /// What an activity row kept for its queue's record, moved there.
    private static func moveFigures(of row: inout QueueActivity, into queue: inout TraceQueue) {
        queue.waitByCause = row.waitByCause
        queue.busyNs = row.busyNs
        queue.backlog = row.backlog
        row.backlog = StepSeries()
    }

    /// The backlog (pending items) of `q` grows by one (enqueue) or shrinks by one (start).
    /// An episode runs from the backlog leaving 0 to its return to 0.
    mutating func backlogChanged(_ q: Int, by delta: Int32, at now: UInt64) {
        let a = active(q, at: now)
        activity[a].pending += delta
        let depth = activity[a].pending
        backlogLog.append(row: a, depth: depth, at: now)
        if backlogLog.isFull { backlogLog.flush(into: activity) }
        if delta > 0 {
            if activity[a].episodeEnqueued == 0 { activity[a].episodeStart = now }
            activity[a].episodeEnqueued += 1
            if depth > activity[a].episodePeak { activity[a].episodePeak = depth }
        } else if activity[a].episodeEnqueued > 0 {
            activity[a].episodeStarted += 1
            if depth <= 0 {
                let longest = queues[q].longestBacklogEpisode
                if longest == nil || longest!.end! - longest!.start < now - activity[a].episodeStart {
                    var episode = activity[a].episode!
                    episode.end = now
                    queues[q].longestBacklogEpisode = episode
                }
                activity[a].episodeEnqueued = 0
                activity[a].episodeStarted = 0
                activity[a].episodePeak = 0
            }
        }
    }

    /// At the end of the trace: each queue's busy time, and an open backlog episode competes
    /// with the longest closed one.
    mutating func close(at end: UInt64) {
        backlogLog.flush(into: activity)
        for q in state.indices where state[q].activity >= 0 {
            let a = Int(state[q].activity)
            activity[a].busyNs = activity[a].running.value(at: end)
            guard let episode = activity[a].episode else { continue }
            if let best = queues[q].longestBacklogEpisode, best.end! - best.start >= end - episode.start { continue }
            queues[q].longestBacklogEpisode = episode
        }
    }

    /// The queues, for the model; the registry is empty afterwards (at 900k queues the
    /// per-queue state and the table were half the peak memory).
    mutating func takeQueues() -> [TraceQueue] {
        backlogLog.flush(into: activity)
        for q in state.indices where state[q].activity >= 0 {
            Self.moveFigures(of: &activity[Int(state[q].activity)], into: &queues[q])
        }
        state = UnsafeTable()
        activity = UnsafeTable()
        let all = queues.moveIntoArray()
        queues = UnsafeTable()
        return all
    }
}
