// Work items: ENQUEUE / START / END, the wait-cause split, sync waits and the deadlock,
// cycle and priority-inversion observations that need the live state.
import QTraceFormat

extension ModelBuilder {
    mutating func enqueue(_ e: Event, thread t: Int32) {
        let kind = ItemKind(rawValue: e.arg) ?? .unknown
        checkItemId(e, thread: t)
        let q = queue(address: e.b)
        let workItem = workItemInfo.count == 0 ? nil : workItemInfo[e.a]
        var item = WorkItem(id: e.a, kind: kind, flags: EnqueueFlags(rawValue: e.flags), origin: .enqueued)
        item.isBarrier = kind.isBarrier || item.flags.contains(.barrier) || (workItem?.isBarrier ?? false)
        item.enqueueTime = now
        item.submitterIndex = t
        item.parentIndex = topItem(of: t)
        item.queueIndex = q
        item.siteRaw = siteID(e.d)
        switch kind {
        case .after:
            // The deadline (never before the call); DISPATCH_TIME_FOREVER never becomes ready.
            item.readyTime = converter.traceTime(e.c, now: now).map { Swift.max($0, now) } ?? noTime
        case .groupNotify, .workItemNotify:
            item.readyTime = noTime // known when it fires
        default:
            item.readyTime = now
        }
        if kind == .groupAsync || kind == .groupNotify { item.relatedIndex = group(address: e.c) }
        item.qosRaw = itemQoS(workItem: workItem, synchronous: kind.isSynchronous, queue: q, caller: t)
        let i = Int32(items.count)
        items.append(item)

        let delayed = kind == .after || kind == .groupNotify || kind == .workItemNotify
        let entry = queues.enqueued(i, queue: q, isBarrier: item.isBarrier, delayed: delayed, at: now)
        if !pending.insertIfAbsent(e.a, entry) { pendingOverflow[e.a, default: []].append(entry) }

        if kind == .groupAsync, item.relatedIndex >= 0 { groupEnter(item.relatedIndex, thread: t, item: i) }
        if kind == .groupNotify, item.relatedIndex >= 0 {
            model.groups[Int(item.relatedIndex)].notifies.append(GroupNotify(item: Int(i), registered: now, fired: nil))
        }
        if kind.isSynchronous {
            beginBlocked(t, cause: .sync, object: q, item: i, key: UInt64(i), site: item.siteRaw)
            checkSelfDeadlock(thread: t, queue: q, exclusive: item.isBarrier, kind: .sync, item: i)
            checkSyncCycle(thread: t, queue: q)
        }
    }

    /// Ids of a thread's ENQUEUEs increase (a DispatchWorkItem's, allocated at its creation,
    /// excepted): a smaller or repeated one was written by something other than the recorder.
    @inline(__always)
    mutating func checkItemId(_ e: Event, thread t: Int32) {
        guard !EnqueueFlags(rawValue: e.flags).contains(.workItem) else { return }
        if !threads.claimEnqueueId(t, e.a) { model.anomalies.reusedItemIds += 1 }
    }

    /// QoS of a new item: a DispatchWorkItem's own; a sync item runs at its caller's; otherwise
    /// the queue's (falling back to the submitter's, which libdispatch propagates).
    mutating func itemQoS(workItem: WorkItemInfo?, synchronous: Bool, queue q: Int32, caller t: Int32) -> UInt8 {
        if let qos = workItem?.qos, qos != 0 { return qos }
        let callerQoS = currentQoS(of: t)
        if synchronous && callerQoS != 0 { return callerQoS }
        let queueQoS = queues.effectiveQoS(q)
        return queueQoS != 0 ? queueQoS : callerQoS
    }

    mutating func takePending(_ id: UInt64) -> PendingItem? {
        guard let entry = pending.remove(id) else { return nil }
        // Checked first: even an empty Dictionary hashes the key (SipHash) on lookup.
        if !pendingOverflow.isEmpty, var more = pendingOverflow[id] {
            _ = pending.insertIfAbsent(id, more.removeFirst())
            pendingOverflow[id] = more.isEmpty ? nil : more
        }
        return entry
    }

    mutating func start(_ e: Event, thread t: Int32) {
        let id = e.a
        let i: Int32
        if threads.takePerforming(t, id: id) {
            i = newUnqueuedItem(id: id, kind: e.arg, origin: .performed, thread: t)
        } else if let entry = takePending(id) {
            i = entry.item
            countIfStuckInTargetLoop(i)
            startQueued(entry)
        } else {
            model.anomalies.startsWithoutEnqueue += 1
            i = newUnqueuedItem(id: id, kind: e.arg, origin: .startOnly, thread: t)
        }
        let item = items[Int(i)]
        if item.kind.isSynchronous, item.submitterIndex >= 0 {
            if item.submitterIndex == t {
                _ = endBlocked(t, cause: .sync, key: UInt64(i)) // the caller runs it itself
            } else {
                syncWaiter[UInt64(i)] = item.submitterIndex
            }
        } else if item.origin == .enqueued, item.submitterIndex != t, threads.isUnclassifiedPreexisting(t) {
            threads.markWorker(t, at: now) // a thread from before tracing that drains queues
        }
        if item.kind == .groupNotify, item.relatedIndex >= 0 {
            let g = Int(item.relatedIndex)
            if let n = model.groups[g].notifies.lastIndex(where: { $0.item == Int(i) }) {
                model.groups[g].notifies[n].fired = now
            }
        }
        beginExecution(i, thread: t, kind: .item, key: id)
    }

    mutating func newUnqueuedItem(id: UInt64, kind: UInt32, origin: ItemOrigin, thread t: Int32) -> Int32 {
        var item = WorkItem(id: id, kind: ItemKind(rawValue: kind) ?? .unknown, origin: origin)
        let info = workItemInfo.count == 0 ? nil : workItemInfo[id]
        item.qosRaw = info?.qos ?? 0
        item.isBarrier = info?.isBarrier ?? false
        item.parentIndex = topItem(of: t)
        if item.qosRaw == 0 { item.qosRaw = currentQoS(of: t) }
        items.append(item)
        return Int32(items.count - 1)
    }

    /// An enqueued item starts: settle its wait, split by cause.
    mutating func startQueued(_ entry: PendingItem) {
        let i = Int(entry.item)
        let q = Int(items[i].queueIndex)
        if entry.inBacklog { queues.backlogChanged(q, by: -1, at: now) }
        // Fields are read and written one by one: copying the item in and out costs more.
        let kind = items[i].kind
        if kind == .groupNotify, items[i].relatedIndex >= 0 {
            items[i].readyTime = Swift.max(items[i].enqueueTime, groupLastEmptied[Int(items[i].relatedIndex)])
        } else if kind == .workItemNotify {
            items[i].readyTime = noTime
        }
        let ready = items[i].readyTime
        guard ready != noTime, now > ready else { return }
        guard entry.inBacklog else {
            queues.addUnattributedWait(now - ready, queue: q)
            items[i].waitCause = .unattributed
            return
        }
        let split = queues.splitWait(entry, queue: q, isBarrier: items[i].isBarrier, ready: ready, at: now)
        items[i].waitCause = dominantCause(split.behindPrevious, split.behindBarrier, split.suspended, split.forThread)
        let blocker = split.blocker, blockedFor = split.blockedFor
        guard blocker >= 0 && blocker != entry.item else { return }
        items[i].waitedBehindIndex = blocker
        queues.waitedBehind(i, blocker: blocker, for: blockedFor, queue: q)
        let itemQoS = items[i].qosRaw, blockerQoS = items[Int(blocker)].qosRaw
        if itemQoS != 0 && blockerQoS != 0 && itemQoS > blockerQoS && blockedFor >= Thresholds.priorityInversionMinWaitNs {
            Self.appendObservation(&model.priorityInversions,
                              PriorityInversion(item: i, blocker: Int(blocker), queue: q, waitNs: blockedFor,
                                                itemQoS: itemQoS, blockerQoS: blockerQoS))
        }
    }

    /// An item enqueued onto a looping queue after the loop formed cannot run: its start
    /// means the trace was not written by libdispatch as recorded.
    @inline(__always)
    mutating func countIfStuckInTargetLoop(_ i: Int32) {
        let q = items[Int(i)].queueIndex
        if q >= 0, queues.isStuckInTargetLoop(queue: q, enqueuedAt: items[Int(i)].enqueueTime) {
            model.anomalies.itemsRunInTargetLoops += 1
        }
    }

    /// The largest part (ties go to the earlier cause).
    func dominantCause(_ previous: UInt64, _ barrier: UInt64, _ suspended: UInt64, _ thread: UInt64) -> WaitCause {
        var cause = WaitCause.behindPrevious, most = previous
        if barrier > most { cause = .behindBarrier; most = barrier }
        if suspended > most { cause = .suspended; most = suspended }
        if thread > most { cause = .thread }
        return cause
    }

    /// Common to items and source handler runs: the thread starts executing item `i`.
    mutating func beginExecution(_ i: Int32, thread t: Int32, kind: FrameKind, key: UInt64) {
        items[Int(i)].startTime = now
        items[Int(i)].threadIndex = t
        items[Int(i)].depth = threads.itemDepth(of: t)
        let q = items[Int(i)].queueIndex
        let domain = q >= 0 ? queues.itemStarted(i, queue: q, thread: t, at: now) : -1
        push(Frame(kind: kind, index: i, domain: domain, key: key, start: now), on: t)
    }

    mutating func end(id: UInt64, thread t: Int32) {
        guard let f = pop(.item, key: id, from: t) else {
            model.anomalies.endsWithoutStart += 1
            // A START lost with the thread's older records leaves nothing open below this END.
            if topItem(of: t) >= 0 { model.anomalies.mismatchedEnds += 1 }
            return
        }
        finishExecution(f, thread: t)
    }

    /// Common to items and handler runs: item of frame `f` ended on thread `t`.
    mutating func finishExecution(_ f: Frame, thread t: Int32) {
        let i = Int(f.index)
        items[i].endTime = now
        let q = items[i].queueIndex
        if q >= 0 {
            queues.itemEnded(f.index, queue: q, domain: f.domain, isBarrier: items[i].isBarrier, thread: t, at: now)
        }
        if syncWaiter.count > 0, let caller = syncWaiter.remove(UInt64(i)) {
            _ = endBlocked(caller, cause: .sync, key: UInt64(i))
        }
        if items[i].kind == .groupAsync, items[i].relatedIndex >= 0 {
            groupLeave(items[i].relatedIndex, thread: t, item: f.index)
        }
    }

    // MARK: Deadlocks

    /// Whether thread `t` holds queue `c` exclusively: it runs an item of `c` (of any kind:
    /// a barrier needs it drained) or of a queue below `c` when `c` is serial. The main thread
    /// always holds the main queue (it drains it). No allocation: this runs on every sync.
    func holds(_ t: Int32, _ c: Int32) -> Bool {
        if c == queues.mainQueue && threads.isMain(t) { return true }
        let serial = queues.isSerial(c)
        for f in threads.frames(of: t) where f.kind == .item || f.kind == .handler {
            var cur = items[Int(f.index)].queueIndex
            var steps = 0
            while cur >= 0 && steps < 64 {
                if cur == c && (steps == 0 || serial) { return true }
                cur = queues.target(of: cur)
                steps += 1
            }
        }
        return false
    }

    /// sync (or apply) onto a serial queue the thread already holds, directly or through a
    /// target, can never start: libdispatch would need the thread to finish first.
    mutating func checkSelfDeadlock(thread t: Int32, queue q: Int32, exclusive: Bool, kind: DeadlockReport.Kind,
                                    item: Int32) {
        guard threads.currentItem(of: t) >= 0 || threads.isMain(t) else { return }
        var cur = q
        var steps = 0
        while cur >= 0 && steps < 64 {
            let needsExclusive = queues.isSerial(cur) || (steps == 0 && exclusive)
            if needsExclusive && holds(t, cur) {
                Self.appendObservation(&model.deadlocks, DeadlockReport(time: now, thread: Int(t), kind: kind, origin: .analysis,
                                                                   queue: Int(q), heldQueue: Int(cur),
                                                                   item: item < 0 ? nil : Int(item)))
                return
            }
            cur = queues.target(of: cur)
            steps += 1
        }
    }

    /// Wait-for graph: thread waits on queue → the queue's serial domain is held by a thread →
    /// which waits on a queue ... back to the first thread.
    mutating func checkSyncCycle(thread t: Int32, queue q: Int32) {
        // Fast exit for the common case: nobody else holds the queue's domain.
        let firstDomain = queues.domainRoot(q)
        guard firstDomain >= 0, queues.holder(ofDomain: firstDomain) != t,
              queues.holder(ofDomain: firstDomain) >= 0 || firstDomain == queues.mainQueue else { return }
        var cycleThreads: [Int32] = [t]
        var cycleQueues: [Int32] = [q]
        var wanted = q
        for _ in 0..<16 {
            let domain = queues.domainRoot(wanted)
            guard domain >= 0 else { return }
            var holder = queues.holder(ofDomain: domain)
            if holder < 0, domain == queues.mainQueue,
               let main = threads.liveMainThread(), threads.runState(of: main) == .blocked {
                holder = main // blocked main-thread code holds the main queue
            }
            guard holder >= 0 else { return }
            if holder == t {
                if cycleThreads.count > 1 {
                    Self.appendObservation(&model.syncCycles, SyncCycle(time: now, threads: cycleThreads.map { Int($0) },
                                                                   queues: cycleQueues.map { Int($0) }))
                }
                return
            }
            guard !cycleThreads.contains(holder),
                  let top = threads.frames(of: holder).last, top.kind == .blocked, top.cause == .sync else { return }
            let interval = threads.blockedInterval(holder, top.index)
            cycleThreads.append(holder)
            cycleQueues.append(Int32(interval.object))
            wanted = Int32(interval.object)
        }
    }

    mutating func shimDeadlock(_ e: Event, thread t: Int32) {
        let q: Int32? = e.a == 0 ? nil : queue(address: e.a)
        let held: Int32? = e.b == 0 ? nil : queue(address: e.b)
        let waiting = threads.frames(of: t).last { $0.kind == .blocked && $0.cause == .sync }
        Self.appendObservation(&model.deadlocks, DeadlockReport(
            time: now, thread: Int(t), kind: e.arg == 2 ? .apply : .sync, origin: .shim,
            queue: q.map { Int($0) }, heldQueue: held.map { Int($0) },
            item: waiting.map { Int(threads.blockedInterval(t, $0.index).item ?? -1) }.flatMap { $0 < 0 ? nil : $0 }))
    }
}
