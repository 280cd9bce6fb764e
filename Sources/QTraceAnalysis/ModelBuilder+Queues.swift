// Queues: identity, kinds, targets (serial domains, effective QoS), suspension and backlog.
import QTraceFormat

extension ModelBuilder {
    mutating func newQueue(address: UInt64, label: String, kind: QueueKind, origin: QueueOrigin,
                           qos: QoSClass, target: Int32, inactive: Bool = false, relativePriority: Int = 0) -> Int32 {
        let q = Int32(queues.count)
        let generation = origin == .defaultRoot ? 0 : objects.nextGeneration(address)
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
        queueState.append(state)
        linkToTarget(q)
        if origin != .defaultRoot { objects.store(.queue, q, at: address) }
        // Nothing targets a new queue yet: no cached chain changes (no topology bump, which
        // would make every queue's cache miss in a trace that keeps creating queues), and its
        // target's suspension state already holds for it.
        let suspended = inactive || (target >= 0 && queueState[Int(target)].effectivelySuspended)
        if suspended {
            queueState[Int(q)].effectivelySuspended = true
            queueState[Int(q)].suspended.set(true, at: now)
        }
        return q
    }

    /// The queue at `address` as referenced by another record; unknown addresses become an
    /// implicit queue of unknown kind.
    @inline(__always)
    mutating func queue(address: UInt64) -> Int32 {
        if let known = objects.index(of: .queue, at: address) { return known }
        return newImplicitQueue(address: address)
    }

    mutating func newImplicitQueue(address: UInt64) -> Int32 {
        newQueue(address: address, label: "queue 0x" + String(address, radix: 16), kind: .unknown,
                 origin: .implicit, qos: .unspecified, target: -1)
    }

    /// Where private queues go by default: the default-QoS global queue (a placeholder until
    /// the trace names the real one).
    mutating func defaultRootQueue() -> Int32 {
        if defaultRoot >= 0 { return defaultRoot }
        if let q = queues.firstIndex(where: { isDefaultRoot(kind: $0.kind, qos: $0.qos, label: $0.label) }) {
            defaultRoot = Int32(q)
        } else {
            defaultRoot = newQueue(address: 0, label: "com.apple.root.default-qos", kind: .global,
                                   origin: .defaultRoot, qos: .default, target: -1)
        }
        return defaultRoot
    }

    func isDefaultRoot(kind: QueueKind, qos: QoSClass, label: String) -> Bool {
        kind == .global && qos == .default && !label.contains("overcommit")
    }

    mutating func queueCreated(_ e: Event) {
        let attrs = e.arg
        let target = e.b == 0 ? defaultRootQueue() : queue(address: e.b)
        let kind: QueueKind = attrs & 1 != 0 ? .concurrent : .serial
        let qos = QoSClass(rawValue: UInt8((attrs >> 8) & 0xFF)) ?? .unspecified
        _ = newQueue(address: e.a, label: e.string ?? "", kind: kind, origin: .created, qos: qos, target: target,
                     inactive: attrs & 2 != 0, relativePriority: Int((attrs >> 16) & 0xFF) - 128)
        checkTargetLoop(Int32(queues.count - 1))
    }

    /// QUEUE_INFO describes a queue not created through the shim (main, global, other). It
    /// completes a placeholder for the same address, repeats of the same description are
    /// ignored, anything else is a new object at a reused address.
    mutating func queueInfo(_ e: Event) {
        let kind: QueueKind
        switch e.arg & 0xFF {
        case 1: kind = .main
        case 2: kind = .global
        case 4: kind = .runLoop
        default: kind = .unknown
        }
        var qos = QoSClass(rawValue: UInt8((e.arg >> 8) & 0xFF)) ?? .unspecified
        if kind == .main && qos == .unspecified { qos = .userInteractive }
        let label = e.string ?? ""
        if let known = objects.index(of: .queue, at: e.a) {
            let q = Int(known)
            let existing = queues[q]
            if existing.origin == .implicit || existing.origin == .header {
                queues[q].label = label.isEmpty ? existing.label : label
                queues[q].kind = kind == .unknown ? existing.kind : kind
                queues[q].qos = qos
                queues[q].origin = .info
                topologyVersion &+= 1
                if kind == .main { mainQueue = known }
                return
            }
            if existing.label == label && existing.kind == kind { return }
        }
        if isDefaultRoot(kind: kind, qos: qos, label: label), defaultRoot >= 0,
           queues[Int(defaultRoot)].origin == .defaultRoot {
            // The placeholder default root turns out to be this queue.
            let q = defaultRoot
            queues[Int(q)].address = e.a
            queues[Int(q)].label = label
            queues[Int(q)].origin = .info
            queues[Int(q)].generation = objects.nextGeneration(e.a)
            objects.store(.queue, q, at: e.a)
            return
        }
        let q = newQueue(address: e.a, label: label, kind: kind, origin: .info, qos: qos, target: -1)
        if kind == .main { mainQueue = q }
        if isDefaultRoot(kind: kind, qos: qos, label: label), defaultRoot < 0 { defaultRoot = q }
    }

    mutating func setTarget(object: UInt64, target: UInt64) {
        guard let ref = objects[object] else { return }
        let newTarget = target == 0 ? defaultRootQueue() : queue(address: target)
        switch ref.kind {
        case .queue:
            let q = Int(ref.index)
            let old = queueState[q].target
            if queueState[q].loopSince != noTime { leaveTargetLoops(of: ref.index) }
            unlinkFromTarget(ref.index)
            queueState[q].target = newTarget
            linkToTarget(ref.index)
            queues[q].target = opt(newTarget)
            queues[q].targetChanges.append(TargetChange(time: now, from: opt(old), to: opt(newTarget)))
            topologyVersion &+= 1
            checkTargetLoop(ref.index)
            updateSuspension(from: ref.index)
        case .source:
            model.sources[Int(ref.index)].queue = Int(newTarget)
        default: break
        }
    }

    /// Records a cycle through `q`'s targets (libdispatch cannot detect it; the program hangs).
    mutating func checkTargetLoop(_ q: Int32) {
        var path: [Int32] = [q]
        var cur = queueState[Int(q)].target
        while cur >= 0 && path.count <= 64 {
            if cur == q {
                Self.appendObservation(&model.targetLoops, TargetLoop(time: now, queues: path.map { Int($0) }))
                for member in path { queueState[Int(member)].loopSince = now }
                return
            }
            if path.contains(cur) { return } // a loop that does not pass through q: already reported
            path.append(cur)
            cur = queueState[Int(cur)].target
        }
    }

    /// `q` is retargeted: the loops through it are broken, their queues drain again.
    mutating func leaveTargetLoops(of q: Int32) {
        for loop in model.targetLoops where loop.queues.contains(Int(q)) {
            for member in loop.queues { queueState[member].loopSince = noTime }
        }
    }

    /// An item enqueued onto a looping queue after the loop formed cannot run (libdispatch
    /// applies a retarget behind the items already queued, which may still run).
    @inline(__always)
    mutating func checkTargetLoopItem(_ i: Int32) {
        let q = items[Int(i)].queueIndex
        guard q >= 0 else { return }
        let since = queueState[Int(q)].loopSince
        if since != noTime && items[Int(i)].enqueueTime > since { model.anomalies.itemsRunInTargetLoops += 1 }
    }

    // MARK: Topology

    /// The outermost serial queue on `q`'s target chain (items of all queues below it run one
    /// at a time), or -1 when nothing on the chain is serial.
    mutating func domainRoot(_ q: Int32) -> Int32 {
        if queueState[Int(q)].cacheVersion != topologyVersion { refreshTopologyCache(q) }
        return queueState[Int(q)].cachedDomain
    }

    /// QoS of `q`: its own, else its target's, else default.
    mutating func effectiveQoS(_ q: Int32) -> UInt8 {
        if queueState[Int(q)].cacheVersion != topologyVersion { refreshTopologyCache(q) }
        return queueState[Int(q)].cachedQoS
    }

    mutating func refreshTopologyCache(_ q: Int32) {
        var root: Int32 = -1
        var qos: UInt8 = 0
        var cur = q
        var steps = 0
        while cur >= 0 && steps < 64 {
            if queues[Int(cur)].kind.isSerial { root = cur }
            if qos == 0 { qos = queues[Int(cur)].qos.rawValue }
            cur = queueState[Int(cur)].target
            steps += 1
        }
        queueState[Int(q)].cachedDomain = root
        queueState[Int(q)].cachedQoS = qos == 0 ? QoSClass.default.rawValue : qos
        queueState[Int(q)].cacheVersion = topologyVersion
    }

    /// `q` and the queues it targets, innermost first.
    func targetChain(_ q: Int32) -> [Int32] {
        var chain: [Int32] = []
        var cur = q
        while cur >= 0 && chain.count < 64 && !chain.contains(cur) {
            chain.append(cur)
            cur = queueState[Int(cur)].target
        }
        return chain
    }

    // MARK: Suspension

    mutating func suspend(object: UInt64) {
        guard let ref = objects[object] else { return }
        switch ref.kind {
        case .queue:
            let q = Int(ref.index)
            queueState[q].suspendCount += 1
            if queueState[q].suspendCount == 1 {
                queues[q].suspensions.append(SuspendInterval(start: now, end: nil, initial: false))
                updateSuspension(from: ref.index)
            }
        case .source:
            let s = Int(ref.index)
            sourceState[s].suspendCount += 1
            sourceState[s].suspendedSinceRun = true
            if sourceState[s].suspendCount == 1 {
                model.sources[s].suspensions.append(SuspendInterval(start: now, end: nil, initial: false))
            }
        default: break
        }
    }

    /// RESUME (or ACTIVATE when `activateOnly`): resuming an inactive object activates it.
    mutating func resume(object: UInt64, activateOnly: Bool) {
        guard let ref = objects[object] else { return }
        switch ref.kind {
        case .queue:
            let q = Int(ref.index)
            if queueState[q].inactive {
                queueState[q].inactive = false
            } else if activateOnly || queueState[q].suspendCount == 0 {
                return
            }
            queueState[q].suspendCount -= 1
            if queueState[q].suspendCount == 0 {
                Self.closeLastSuspension(&queues[q].suspensions, at: now)
                updateSuspension(from: ref.index)
            }
        case .source:
            let s = Int(ref.index)
            if sourceState[s].inactive {
                sourceState[s].inactive = false
                model.sources[s].activatedAt = now
            } else if activateOnly || sourceState[s].suspendCount == 0 {
                return
            }
            sourceState[s].suspendCount -= 1
            if sourceState[s].suspendCount == 0 { Self.closeLastSuspension(&model.sources[s].suspensions, at: now) }
        default: break
        }
    }

    /// Static, as `appendObservation`: a method of self given an inout part of self makes
    /// Swift copy the builder for the call, and the copy shares the model's arrays, so the
    /// write then copied all of them (all sources, per source activation: quadratic).
    static func closeLastSuspension(_ list: inout [SuspendInterval], at time: UInt64) {
        if let last = list.indices.last, list[last].end == nil { list[last].end = time }
    }

    /// A queue is effectively suspended when it or any queue on its target chain is suspended
    /// (or inactive). Kept incrementally: after a change to `q`'s own count or target, only
    /// `q` and the queues below it can change, and a queue whose state stays as it was shields
    /// everything below it. Cost: the length of `q`'s chain plus the queues that flip.
    mutating func updateSuspension(from q: Int32) {
        let suspended = chainSuspended(q)
        guard suspended != queueState[Int(q)].effectivelySuspended else { return }
        setEffectivelySuspended(q, suspended)
        // Every queue reached below q flips to q's new state unless its own count keeps it
        // suspended; q itself is reached again only through a target loop.
        var stack: [Int32] = [q]
        while let parent = stack.popLast() {
            var child = queueState[Int(parent)].firstChild
            while child >= 0 {
                let next = queueState[Int(child)].nextSibling
                let childSuspended = suspended || queueState[Int(child)].suspendCount > 0
                if child != q && childSuspended != queueState[Int(child)].effectivelySuspended {
                    setEffectivelySuspended(child, childSuspended)
                    stack.append(child)
                }
                child = next
            }
        }
    }

    /// Whether `q` or a queue on its target chain has a suspend count (a target loop is walked once).
    mutating func chainSuspended(_ q: Int32) -> Bool {
        chainWalkStamp &+= 1
        var cur = q
        while cur >= 0 && queueState[Int(cur)].chainWalkStamp != chainWalkStamp {
            if queueState[Int(cur)].suspendCount > 0 { return true }
            queueState[Int(cur)].chainWalkStamp = chainWalkStamp
            cur = queueState[Int(cur)].target
        }
        return false
    }

    mutating func setEffectivelySuspended(_ q: Int32, _ suspended: Bool) {
        queueState[Int(q)].effectivelySuspended = suspended
        queueState[Int(q)].suspended.set(suspended, at: now)
    }

    /// Adds `q` to its target's list of the queues that target it (an intrusive doubly linked
    /// list: relinking on a retarget is O(1)).
    mutating func linkToTarget(_ q: Int32) {
        let parent = queueState[Int(q)].target
        guard parent >= 0 else { return }
        let head = queueState[Int(parent)].firstChild
        queueState[Int(q)].nextSibling = head
        queueState[Int(q)].previousSibling = -1
        if head >= 0 { queueState[Int(head)].previousSibling = q }
        queueState[Int(parent)].firstChild = q
    }

    mutating func unlinkFromTarget(_ q: Int32) {
        let parent = queueState[Int(q)].target
        guard parent >= 0 else { return }
        let previous = queueState[Int(q)].previousSibling, next = queueState[Int(q)].nextSibling
        if previous >= 0 { queueState[Int(previous)].nextSibling = next } else { queueState[Int(parent)].firstChild = next }
        if next >= 0 { queueState[Int(next)].previousSibling = previous }
        queueState[Int(q)].previousSibling = -1
        queueState[Int(q)].nextSibling = -1
    }

    // MARK: Backlog

    /// The backlog (pending items) of `q` grows by one (enqueue) or shrinks by one (start).
    /// An episode runs from the backlog leaving 0 to its return to 0.
    mutating func backlogChanged(_ q: Int, by delta: Int32) {
        queueState[q].pending += delta
        let depth = queueState[q].pending
        queues[q].backlog.record(depth, at: now)
        if delta > 0 {
            if queueState[q].episodeEnqueued == 0 { queueState[q].episodeStart = now }
            queueState[q].episodeEnqueued += 1
            if depth > queueState[q].episodePeak { queueState[q].episodePeak = depth }
        } else if queueState[q].episodeEnqueued > 0 {
            queueState[q].episodeStarted += 1
            if depth <= 0 {
                let longest = queues[q].longestBacklogEpisode
                if longest == nil || longest!.end! - longest!.start < now - queueState[q].episodeStart {
                    var episode = queueState[q].episode!
                    episode.end = now
                    queues[q].longestBacklogEpisode = episode
                }
                queueState[q].episodeEnqueued = 0
                queueState[q].episodeStarted = 0
                queueState[q].episodePeak = 0
            }
        }
    }

    /// At the end of the trace: an open episode competes with the longest closed one.
    mutating func closeBacklogEpisode(_ q: Int) {
        guard let episode = queueState[q].episode else { return }
        if let best = queues[q].longestBacklogEpisode, best.end! - best.start >= model.endTime - episode.start { return }
        queues[q].longestBacklogEpisode = episode
    }
}
