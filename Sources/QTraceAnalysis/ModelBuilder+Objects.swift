// Groups, semaphores, sources, apply and Dispatch I/O.
import QTraceFormat

extension ModelBuilder {
    // MARK: Groups

    mutating func newGroup(address: UInt64, createdAt: UInt64?) -> Int32 {
        let g = groups.add(address: address, generation: objects.nextGeneration(address), createdAt: createdAt)
        objects.store(.group, g, at: address)
        return g
    }

    @inline(__always)
    mutating func group(address: UInt64) -> Int32 {
        if let known = objects.index(of: .group, at: address) { return known }
        return newGroup(address: address, createdAt: nil)
    }

    mutating func groupEnter(_ e: Event) {
        let g = group(address: e.a)
        groups.entered(g, at: now)
    }

    /// A leave by the thread's running item, if any.
    mutating func groupLeave(_ e: Event, thread t: Int32) {
        let g = group(address: e.a), item = topItem(of: t)
        groups.left(g, thread: t, item: item, at: now)
    }

    mutating func groupWaitBegin(_ e: Event, thread t: Int32) {
        let g = group(address: e.a)
        groups.countWait(g)
        beginBlocked(t, cause: .groupWait, object: g, key: e.a)
    }

    mutating func groupWaitEnd(_ e: Event, thread t: Int32) {
        let timedOut = e.arg & 1 != 0
        if timedOut {
            let g = group(address: e.a)
            groups.countTimedOutWait(g)
        }
        if let f = endBlocked(t, cause: .groupWait, key: e.a, timedOut: timedOut), e.b != 0 {
            threads.setBlockedSite(t, f.index, site: siteID(e.b))
        }
    }

    // MARK: Semaphores

    mutating func newSemaphore(address: UInt64, value: Int64, createdAt: UInt64?) -> Int32 {
        let s = semaphores.add(address: address, generation: objects.nextGeneration(address), value: value,
                               createdAt: createdAt)
        objects.store(.semaphore, s, at: address)
        return s
    }

    @inline(__always)
    mutating func semaphore(address: UInt64) -> Int32 {
        if let known = objects.index(of: .semaphore, at: address) { return known }
        return newSemaphore(address: address, value: 0, createdAt: nil)
    }

    mutating func semaphoreCreated(_ e: Event) {
        _ = newSemaphore(address: e.a, value: Int64(bitPattern: e.b), createdAt: now)
    }

    // The semaphore handlers take the fields they read, not the event: every other event of
    // a producer throttled by a semaphore is one of theirs, and an event argument is a copy of
    // its 72 bytes (`consume(lent:)`).

    mutating func semaphoreWaitBegin(address: UInt64, thread t: Int32) {
        let s = semaphore(address: address)
        semaphores.countWait(s)
        beginBlocked(t, cause: .semaphore, object: s, key: address)
    }

    /// `outcome`: the record's arg (bit 0 timed out, bit 1 blocked); `site`: its code site id.
    mutating func semaphoreWaitEnd(address: UInt64, outcome: UInt32, site: UInt64, thread t: Int32) {
        let s = semaphore(address: address)
        let timedOut = outcome & 1 != 0, blocked = outcome & 2 != 0
        if timedOut { semaphores.countTimedOutWait(s) }
        guard let f = endBlocked(t, cause: .semaphore, key: address, timedOut: timedOut) else { return }
        if blocked {
            if site != 0 { threads.setBlockedSite(t, f.index, site: siteID(site)) }
            semaphores.blocked(s, for: now - f.start)
        } else {
            threads.discardBlocked(t, f.index) // fast path: the thread never blocked, no blocked interval
        }
    }

    /// `outcome`: the record's arg (bit 0: a waiter was woken).
    mutating func semaphoreSignal(address: UInt64, outcome: UInt32) {
        let s = semaphore(address: address)
        semaphores.signalled(s, wokeWaiter: outcome & 1 != 0)
    }

    // MARK: Sources

    mutating func sourceCreated(_ e: Event) {
        let q = e.d == 0 ? defaultRootQueue() : queue(address: e.d)
        var source = TraceSource(address: e.a, generation: objects.nextGeneration(e.a),
                                 type: SourceType(rawValue: e.arg) ?? .other, handle: e.b, mask: e.c,
                                 queue: Int(q), createdAt: now)
        // Sources are created inactive: nothing is delivered until the first resume/activate.
        source.suspensions.append(SuspendInterval(start: now, end: nil, initial: true))
        let s = sources.add(source)
        objects.store(.source, s, at: e.a)
    }

    func source(address: UInt64) -> Int? {
        objects.index(of: .source, at: address).map { Int($0) }
    }

    mutating func sourceSetTimer(_ e: Event) {
        guard let s = source(address: e.a) else { return }
        let interval: UInt64? = e.c == ~0 || Int64(bitPattern: e.c) < 0 ? nil : Swift.max(e.c, 1)
        sources.timerSet(s, TimerConfig(setAt: now, start: converter.traceTime(e.b, now: now),
                                        intervalNs: interval, leewayNs: e.d))
    }

    mutating func sourceSetHandler(_ e: Event) {
        guard let s = source(address: e.a) else { return }
        if e.arg == 0, e.b != 0 { code.noteSourceHandlerSite(s, siteID(e.b)) }
        sources.handlerSet(s, kind: e.arg)
    }

    mutating func sourceCancel(_ e: Event) {
        guard let s = source(address: e.a) else { return }
        sources.cancelled(s, at: now)
    }

    mutating func sourceMergeData(_ e: Event) {
        guard let s = source(address: e.a) else { return }
        sources.merged(s, at: now)
    }

    mutating func sourceHandlerBegin(_ e: Event, thread t: Int32) {
        guard let s = source(address: e.a) else { return }
        let kind = HandlerKind(rawValue: UInt8(truncatingIfNeeded: e.arg)) ?? .event
        let lateness = kind == .event ? sources.timerLateness(s, data: e.b, at: now) : nil
        beginHandlerRun(source: s, kind: kind, data: e.b, lateness: lateness, thread: t)
    }

    /// A handler run of source `s` (a Dispatch source, or a run loop's timer): a work item on
    /// the source's queue.
    mutating func beginHandlerRun(source s: Int, kind: HandlerKind, data: UInt64, lateness: Int64?, thread t: Int32) {
        var item = WorkItem(id: 0, kind: .unknown, origin: .sourceHandler)
        item.relatedIndex = Int32(s)
        item.queueIndex = idx(sources.queue(of: s))
        item.parentIndex = topItem(of: t)
        if kind == .event { item.siteRaw = code.sourceHandlerSite(s) }
        if item.queueIndex >= 0 { item.qosRaw = queues.effectiveQoS(item.queueIndex) }
        let i = items.add(item)
        sources.handlerRunBegan(s, item: i, kind: kind, data: data, lateness: lateness, at: now)
        beginExecution(i, thread: t, kind: .handler, key: sources.address(of: s))
    }

    mutating func sourceHandlerEnd(_ e: Event, thread t: Int32) {
        guard let f = pop(.handler, key: e.a, from: t) else {
            model.anomalies.endsWithoutStart += 1
            return
        }
        finishExecution(f, thread: t)
    }

    // MARK: apply

    mutating func applyBegin(_ e: Event, thread t: Int32) {
        let q: Int32 = e.b == 0 ? -1 : queue(address: e.b)
        let a = applies.began(ApplyCall(id: e.a, queue: opt(q), callerThread: Int(t), iterations: e.c, begin: now))
        if e.d != 0 { code.noteApplySite(a, siteID(e.d)) }
        if q >= 0 { checkSelfDeadlock(thread: t, queue: q, exclusive: false, kind: .apply, item: -1) }
        beginBlocked(t, cause: .apply, object: a, key: e.a, site: siteID(e.d))
    }

    mutating func applyEnd(id: UInt64, thread t: Int32) {
        guard applies.ended(id: id, at: now) else { return }
        _ = endBlocked(t, cause: .apply, key: id)
    }

    mutating func applyIterationStart(id: UInt64, thread t: Int32) {
        guard let a = applies.iterationStarted(id: id) else { return }
        push(Frame(kind: .iteration, index: a, key: id, start: now), on: t)
    }

    mutating func applyIterationEnd(id: UInt64, thread t: Int32) {
        guard let f = pop(.iteration, key: id, from: t) else { return }
        applies.iterationEnded(f.index, thread: t, took: now - f.start)
    }

    // MARK: Dispatch I/O

    mutating func ioCreated(_ e: Event) {
        let c = io.addChannel(IOChannel(address: e.a, generation: objects.nextGeneration(e.a), isRandom: e.arg == 1,
                                        fd: e.b == ~0 ? nil : Int64(bitPattern: e.b), path: e.string,
                                        createdAt: now))
        objects.store(.channel, c, at: e.a)
    }

    /// The channel at `address`; 0 is the pseudo-channel of dispatch_read/dispatch_write.
    mutating func channel(address: UInt64) -> Int32 {
        if address == 0 { return io.plainIOChannel() }
        if let known = objects.index(of: .channel, at: address) { return known }
        let c = io.addChannel(IOChannel(address: address, generation: objects.nextGeneration(address)))
        objects.store(.channel, c, at: address)
        return c
    }

    mutating func ioSubmitted(_ e: Event, thread t: Int32) {
        let c = channel(address: e.a)
        io.submitted(IOOperation(id: e.b, channel: Int(c), isWrite: e.type == .ioWrite, offset: Int64(bitPattern: e.c),
                                 length: e.d, submitted: now, thread: Int(t)))
    }

    mutating func ioHandlerBegin(_ e: Event, thread t: Int32) {
        guard let op = io.handlerBegan(id: e.a, bytes: e.b, flags: e.arg, at: now) else { return }
        push(Frame(kind: .ioHandler, index: op, key: e.a, start: now), on: t)
    }

    mutating func ioHandlerEnd(_ e: Event, thread t: Int32) {
        guard let f = pop(.ioHandler, key: e.a, from: t) else { return }
        io.handlerEnded(f.index, id: e.a, busy: now - f.start)
    }

    mutating func ioBarrier(_ e: Event) {
        let c = channel(address: e.a)
        io.barrier(c)
    }

    mutating func ioClosed(_ e: Event) {
        let c = channel(address: e.a)
        io.closed(c, at: now)
    }

    mutating func ioCleanupBegin(_ e: Event) {
        let c = channel(address: e.a)
        io.cleanup(c, error: Int(e.arg), at: now)
    }
}
