// Work item records (ENQUEUE / START / END) wired across collaborators: the ItemTracker keeps
// the items and pending enqueues, the QueueRegistry the queue clocks that split a wait by
// cause, the ThreadTable the frames and sync waits; the priority-inversion observation needs
// all three.
import QTraceFormat

extension ModelBuilder {
    mutating func enqueue(_ e: Event, thread t: Int32) {
        let kind = ItemKind(rawValue: e.arg) ?? .unknown
        checkItemId(e, thread: t)
        let q = queue(address: e.b)
        let workItem = items.workItem(e.a)
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
        let i = items.add(item)

        let delayed = kind == .after || kind == .groupNotify || kind == .workItemNotify
        let entry = queues.enqueued(i, queue: q, isBarrier: item.isBarrier, delayed: delayed, at: now)
        items.addPending(e.a, entry)

        if kind == .groupAsync, item.relatedIndex >= 0 { groups.entered(item.relatedIndex, at: now) }
        if kind == .groupNotify, item.relatedIndex >= 0 { groups.notifyRegistered(item.relatedIndex, item: i, at: now) }
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

    mutating func start(_ e: Event, thread t: Int32) {
        let id = e.a
        let i: Int32
        if threads.takePerforming(t, id: id) {
            i = newUnqueuedItem(id: id, kind: e.arg, origin: .performed, thread: t)
        } else if let entry = items.takePending(id) {
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
                items.runsElsewhere(i, caller: item.submitterIndex)
            }
        } else if item.origin == .enqueued, item.submitterIndex != t, threads.isUnclassifiedPreexisting(t) {
            threads.markWorker(t, at: now) // a thread from before tracing that drains queues
        }
        if item.kind == .groupNotify, item.relatedIndex >= 0 { groups.notifyFired(item.relatedIndex, item: i, at: now) }
        beginExecution(i, thread: t, kind: .item, key: id)
    }

    mutating func newUnqueuedItem(id: UInt64, kind: UInt32, origin: ItemOrigin, thread t: Int32) -> Int32 {
        var item = WorkItem(id: id, kind: ItemKind(rawValue: kind) ?? .unknown, origin: origin)
        let info = items.workItem(id)
        item.qosRaw = info?.qos ?? 0
        item.isBarrier = info?.isBarrier ?? false
        item.parentIndex = topItem(of: t)
        if item.qosRaw == 0 { item.qosRaw = currentQoS(of: t) }
        return items.add(item)
    }

    /// An enqueued item starts: settle its wait, split by cause.
    mutating func startQueued(_ entry: PendingItem) {
        let i = Int(entry.item)
        let q = Int(items[i].queueIndex)
        if entry.inBacklog { queues.backlogChanged(q, by: -1, at: now) }
        // Fields are read and written one by one: copying the item in and out costs more.
        let kind = items[i].kind
        if kind == .groupNotify, items[i].relatedIndex >= 0 {
            items[i].readyTime = Swift.max(items[i].enqueueTime, groups.lastEmptied(items[i].relatedIndex))
        } else if kind == .workItemNotify {
            items[i].readyTime = noTime
        }
        let ready = items[i].readyTime
        guard ready != noTime, now > ready else { return }
        guard entry.inBacklog else {
            queues.addUnattributedWait(now - ready, queue: q, at: now)
            items[i].waitCause = .unattributed
            return
        }
        let split = queues.splitWait(entry, queue: q, isBarrier: items[i].isBarrier, ready: ready, at: now)
        items[i].waitCause = ItemTracker.dominantCause(split)
        let blocker = split.blocker, blockedFor = split.blockedFor
        guard blocker >= 0 && blocker != entry.item else { return }
        items[i].waitedBehindIndex = blocker
        queues.waitedBehind(i, blocker: blocker, for: blockedFor, queue: q)
        let itemQoS = items[i].qosRaw, blockerQoS = items[Int(blocker)].qosRaw
        if itemQoS != 0 && blockerQoS != 0 && itemQoS > blockerQoS && blockedFor >= Thresholds.priorityInversionMinWaitNs {
            appendObservation(&model.priorityInversions,
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
        if let caller = items.takeSyncCaller(of: i) {
            _ = endBlocked(caller, cause: .sync, key: UInt64(i))
        }
        if items[i].kind == .groupAsync, items[i].relatedIndex >= 0 {
            groups.left(items[i].relatedIndex, thread: t, item: f.index, at: now)
        }
    }
}
