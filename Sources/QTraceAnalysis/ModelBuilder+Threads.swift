// Threads: identity by tid (reused tids start a new thread), a stack of what each thread is
// doing, and the running/blocked state derived from the top of that stack.
import QTraceFormat

extension ModelBuilder {
    /// The thread index for `tid`, creating the thread on first sight (or after its exit:
    /// Linux reuses tids). Runs of one thread's events skip the lookup.
    @inline(__always)
    mutating func thread(for tid: Int32) -> Int32 {
        let t = tid == lastTid && lastThread >= 0 ? lastThread : switchThread(to: tid)
        threadState[Int(t)].lastSeen = now
        return t
    }

    mutating func switchThread(to tid: Int32) -> Int32 {
        let key = UInt64(UInt32(bitPattern: tid))
        let t: Int32
        if let known = threadByTid[key] {
            t = known
        } else {
            t = newThread(tid: tid)
            threadByTid.store(t, at: key)
        }
        lastTid = tid; lastThread = t
        return t
    }

    private mutating func newThread(tid: Int32) -> Int32 {
        let t = Int32(threads.count)
        let isMain = tid == model.info.mainTid && tid != 0
        threads.append(TraceThread(tid: tid, name: model.info.threadNames[tid] ?? (isMain ? "main" : ""),
                                   kind: isMain ? .main : .other, firstSeen: now, lastSeen: now))
        threadState.append(ThreadState(since: now, lastSeen: now))
        aliveThreads += 1
        model.threadActivity.alive.record(aliveThreads, at: now)
        return t
    }

    /// A thread exited: its tid names a new thread from the next event on.
    mutating func forgetTid(of t: Int32) {
        threadByTid.remove(UInt64(UInt32(bitPattern: threads[Int(t)].tid)))
        if lastThread == t { lastThread = -1 }
    }

    mutating func threadStarted(_ t: Int32, kind: UInt32, creator: UInt64) {
        let i = Int(t)
        threads[i].createdAt = now
        threads[i].creatorTid = creator == 0 ? nil : Int32(truncatingIfNeeded: creator)
        switch kind {
        case 0: threads[i].kind = .main
        case 1: markWorker(t)
        default: threads[i].kind = .other
        }
    }

    mutating func markWorker(_ t: Int32) {
        let i = Int(t)
        guard !threadState[i].isWorker else { return }
        threadState[i].isWorker = true
        threads[i].kind = .worker
        aliveWorkers += 1
        if threadState[i].state == .blocked { blockedWorkers += 1 }
        model.threadActivity.workers.record(aliveWorkers, at: now)
        checkThreadExplosionIfNeeded()
    }

    mutating func threadExited(_ t: Int32) {
        let i = Int(t)
        // Whatever it was doing is over (items without END stay open in the model).
        while let f = threadState[i].stack.last { abandon(f, thread: t) }
        setState(t, .dead)
        threads[i].exitedAt = now
        forgetTid(of: t)
    }

    // MARK: Stack

    mutating func push(_ frame: Frame, on t: Int32) {
        let i = Int(t)
        var frame = frame
        frame.outerItem = threadState[i].currentItem
        frame.outerDepth = threadState[i].itemDepth
        if frame.kind == .item || frame.kind == .handler {
            threadState[i].currentItem = frame.index
            threadState[i].itemDepth = frame.outerDepth &+ 1
        }
        threadState[i].stack.append(frame)
        refreshState(t)
    }

    /// Pops the innermost frame of `kind` with `key` (and, with a warning count, any frame left
    /// open above it: an END or wait end was lost).
    mutating func pop(_ kind: FrameKind, key: UInt64, cause: BlockCause? = nil, from t: Int32) -> Frame? {
        let i = Int(t)
        // Nearly always the frame is on top: pop it without the search and abandon loop.
        if let top = threadState[i].stack.last, top.kind == kind, top.key == key, cause == nil || top.cause == cause! {
            threadState[i].stack.removeLast()
            threadState[i].currentItem = top.outerItem
            threadState[i].itemDepth = top.outerDepth
            refreshState(t)
            return top
        }
        var at = threadState[i].stack.count - 1
        while at >= 0 {
            let f = threadState[i].stack[at]
            if f.kind == kind && f.key == key && (cause == nil || f.cause == cause!) { break }
            at -= 1
        }
        guard at >= 0 else { return nil }
        while threadState[i].stack.count > at + 1 {
            abandon(threadState[i].stack[threadState[i].stack.count - 1], thread: t)
        }
        let frame = threadState[i].stack.removeLast()
        threadState[i].currentItem = frame.outerItem
        threadState[i].itemDepth = frame.outerDepth
        refreshState(t)
        return frame
    }

    /// Closes a frame whose end record never came, at the current time.
    mutating func abandon(_ f: Frame, thread t: Int32) {
        switch f.kind {
        case .item, .handler:
            _ = pop(f.kind, key: f.key, from: t)
            finishExecution(f, thread: t)
            model.anomalies.unclosedItems += 1
        case .blocked:
            _ = pop(.blocked, key: f.key, cause: f.cause, from: t)
            closeBlocked(f, thread: t)
            model.anomalies.unmatchedWaitEnds += 1
        case .iteration, .ioHandler:
            _ = pop(f.kind, key: f.key, from: t)
        }
    }

    // Small non-mutating helpers are always inlined: called from a mutating method, an
    // outlined call copied the whole builder (1 KiB memcpy per ENQUEUE).

    /// The innermost item (or handler run) the thread is executing.
    @inline(__always)
    func topItem(of t: Int32) -> Int32 { threadState[Int(t)].currentItem }

    /// QoS the thread runs at: its innermost item's; user-interactive on the main thread.
    @inline(__always)
    func currentQoS(of t: Int32) -> UInt8 {
        let item = topItem(of: t)
        if item >= 0, items[Int(item)].qosRaw != 0 { return items[Int(item)].qosRaw }
        return threads[Int(t)].kind == .main ? QoSClass.userInteractive.rawValue : 0
    }

    // MARK: Blocked intervals

    /// Starts a blocked interval and its frame.
    mutating func beginBlocked(_ t: Int32, cause: BlockCause, object: Int32, item: Int32 = -1, key: UInt64,
                               site: UInt32 = 0) {
        let i = Int(t)
        let index = Int32(threads[i].blocked.count)
        var interval = BlockedInterval(thread: i, start: now, end: nil, cause: cause, object: Int(object),
                                       item: item < 0 ? nil : Int(item))
        interval.siteRaw = site
        threads[i].blocked.append(interval)
        push(Frame(kind: .blocked, cause: cause, index: index, key: key, start: now), on: t)
    }

    /// Ends the blocked interval of `frame`.
    mutating func closeBlocked(_ f: Frame, thread t: Int32, timedOut: Bool = false) {
        let i = Int(t)
        threads[i].blocked[Int(f.index)].end = now
        if timedOut { threads[i].blocked[Int(f.index)].timedOut = true }
    }

    mutating func endBlocked(_ t: Int32, cause: BlockCause, key: UInt64, timedOut: Bool = false) -> Frame? {
        guard let f = pop(.blocked, key: key, cause: cause, from: t) else {
            model.anomalies.unmatchedWaitEnds += 1
            return nil
        }
        closeBlocked(f, thread: t, timedOut: timedOut)
        return f
    }

    // MARK: State

    @inline(__always)
    mutating func refreshState(_ t: Int32) {
        let i = Int(t)
        let n = threadState[i].stack.count
        let state: RunState = n == 0 ? .idle : (threadState[i].stack[n - 1].kind == .blocked ? .blocked : .running)
        if state != threadState[i].state { setState(t, state) }
    }

    mutating func setState(_ t: Int32, _ new: RunState) {
        let i = Int(t)
        let old = threadState[i].state
        guard old != new else { return }
        closeStateTime(t)
        threadState[i].state = new
        threadState[i].since = now
        let worker = threadState[i].isWorker
        switch old {
        case .running: runningThreads -= 1; model.threadActivity.running.record(runningThreads, at: now)
        case .blocked:
            blockedThreads -= 1; model.threadActivity.blocked.record(blockedThreads, at: now)
            if worker { blockedWorkers -= 1 }
        default: break
        }
        switch new {
        case .running: runningThreads += 1; model.threadActivity.running.record(runningThreads, at: now)
        case .blocked:
            blockedThreads += 1; model.threadActivity.blocked.record(blockedThreads, at: now)
            if worker { blockedWorkers += 1 }
        case .dead:
            aliveThreads -= 1; model.threadActivity.alive.record(aliveThreads, at: now)
            if worker { aliveWorkers -= 1; model.threadActivity.workers.record(aliveWorkers, at: now) }
        case .idle: break
        }
        if worker { checkThreadExplosionIfNeeded() }
    }

    /// Adds the time spent in the current state (up to now) to the thread's totals.
    @inline(__always)
    mutating func closeStateTime(_ t: Int32) {
        let i = Int(t)
        let since = threadState[i].since
        guard now > since else { return }
        switch threadState[i].state {
        case .running:
            threads[i].busyNs += now - since
            if let last = threads[i].busy.last, last.end == since {
                threads[i].busy[threads[i].busy.count - 1].end = now
            } else {
                threads[i].busy.append(Span(start: since, end: now))
            }
        case .blocked: threads[i].blockedNs += now - since
        default: break
        }
        threadState[i].since = now
    }

    /// The check below changes nothing while no explosion is open or starting: skip the call
    /// then (workers change state twice per item).
    @inline(__always)
    mutating func checkThreadExplosionIfNeeded() {
        let exploding = Int(aliveWorkers) >= explosionMinWorkers && blockedWorkers * 2 > aliveWorkers
        if exploding || explosion != nil { checkThreadExplosion() }
    }

    var explosionMinWorkers: Int { Thresholds.threadExplosionMinWorkers(cpus: model.info.ncpu) }

    /// Thread explosion: clearly more live workers than CPUs while most of them are blocked.
    mutating func checkThreadExplosion() {
        let exploding = Int(aliveWorkers) >= explosionMinWorkers && blockedWorkers * 2 > aliveWorkers
        if exploding {
            if explosion == nil {
                explosion = ThreadExplosion(start: now, end: now, peakWorkers: 0, peakBlockedWorkers: 0)
            }
            explosion!.peakWorkers = Swift.max(explosion!.peakWorkers, Int(aliveWorkers))
            explosion!.peakBlockedWorkers = Swift.max(explosion!.peakBlockedWorkers, Int(blockedWorkers))
        } else if var x = explosion {
            x.end = now
            if x.end - x.start >= Thresholds.threadExplosionMinNs { Self.appendObservation(&model.threadExplosions, x) }
            explosion = nil
        }
    }
}
