// The threads while the model is built: identity by tid (Linux reuses tids: an exited
// thread's tid names a new thread), a stack per thread of what it is doing (items, handler
// runs, blocked waits, apply iterations, I/O handlers), the running / blocked / idle state
// that the top of the stack gives, the time in each state, and the thread counters behind the
// activity series and the thread-explosion observation.
//
// Closing a frame whose end record never came is the ModelBuilder's (`abandon`): an item's
// frame ends on its queue too. The table pops frames; the builder decides what a pop means.
import QTraceFormat

struct ThreadTable {
    /// The model's threads (moved into it by `finish`): they change several times per event,
    /// which an array in a struct would check for sharing at every write.
    private(set) var threads = UnsafeTable<TraceThread>()
    /// Run-time state, index-aligned with `threads`.
    private var state = UnsafeTable<ThreadState>()
    /// The live thread of each tid (an exited thread's tid is removed).
    private var byTid = CachedIdMap<Int32, 64>()
    /// Most events come in runs from one thread: skip the lookup then.
    private var lastTid: Int32 = 0
    private var lastThread: Int32 = -1

    // Counters for the activity series and the thread-explosion rule.
    private var aliveThreads: Int32 = 0
    private var runningThreads: Int32 = 0
    private var blockedThreads: Int32 = 0
    private var aliveWorkers: Int32 = 0
    private var blockedWorkers: Int32 = 0
    private var explosion: ThreadExplosion?
    private(set) var activity = ThreadActivity()
    private(set) var explosions: [ThreadExplosion] = []

    private let mainTid: Int32
    private let namesFromHeader: [Int32: String]
    private let explosionMinWorkers: Int
    /// Events each tid recorded (the reader's count), taken by the tid's first thread to size
    /// its busy spans once: grown by doubling, their copies and fresh pages were 4-6% of a
    /// 10M-event run (`reserveBusySpans`).
    private var eventsByTid: [Int32: Int]

    init(info: TraceInfo, eventsByTid: [Int32: Int] = [:]) {
        mainTid = info.mainTid
        namesFromHeader = info.threadNames
        explosionMinWorkers = Thresholds.threadExplosionMinWorkers(cpus: info.ncpu)
        self.eventsByTid = eventsByTid
    }

    var count: Int { threads.count }

    // MARK: Identity

    /// The thread index for `tid`, creating the thread on first sight (or after its exit).
    @inline(__always)
    mutating func thread(for tid: Int32, at now: UInt64) -> Int32 {
        let t = tid == lastTid && lastThread >= 0 ? lastThread : switchThread(to: tid, at: now)
        state[Int(t)].lastSeen = now
        return t
    }

    private mutating func switchThread(to tid: Int32, at now: UInt64) -> Int32 {
        let key = UInt64(UInt32(bitPattern: tid))
        let t: Int32
        if let known = byTid[key] {
            t = known
        } else {
            t = newThread(tid: tid, at: now)
            byTid.store(t, at: key)
        }
        lastTid = tid; lastThread = t
        return t
    }

    private mutating func newThread(tid: Int32, at now: UInt64) -> Int32 {
        let t = Int32(threads.count)
        let isMain = tid == mainTid && tid != 0
        var thread = TraceThread(tid: tid, name: namesFromHeader[tid] ?? (isMain ? "main" : ""),
                                 kind: isMain ? .main : .other, firstSeen: now, lastSeen: now)
        var threadState = ThreadState(since: now, lastSeen: now)
        if let events = eventsByTid.removeValue(forKey: tid), Self.reserveBusySpans(&thread, events: events) {
            threadState.busyPopulated = 0
        }
        threads.append(thread)
        state.append(threadState)
        aliveThreads += 1
        activity.alive.record(aliveThreads, at: now)
        return t
    }

    /// A busy span opens and closes on a change of the thread's state, nearly always made by
    /// its own events, two of them at least (an item's START and END; a wait's end then
    /// begin): half its events bound its spans, bar a few (a sync caller woken by another
    /// thread). Only address space until written: untouched pages cost no memory. Beyond it
    /// the array grows as usual. Returns whether it reserved.
    static func reserveBusySpans(_ thread: inout TraceThread, events: Int) -> Bool {
        let spans = events / 2 + 16
        guard spans > 1024 else { return false }
        thread.busy.reserveCapacity(spans)
        return true
    }

    /// The reserved busy spans' pages mapped a step ahead of the appends (`PagePopulation`):
    /// a span per item on a worker running queued items back to back, flood's 3.4M spans
    /// (54 MB) took 45% of its page faults, each span's first touch of a page.
    @inline(never)
    private mutating func populateBusySpans(_ i: Int) {
        let capacity = threads[i].busy.capacity
        state[i].busyPopulated = threads[i].busy.withUnsafeBufferPointer { spans in
            guard let base = spans.baseAddress,
                  let to = PagePopulation.populate(from: base + spans.count, end: base + capacity) else { return .max }
            return (to - UnsafeRawPointer(base)) / MemoryLayout<Span>.stride
        }
    }

    mutating func setName(_ t: Int32, _ name: String) { threads[Int(t)].name = name }

    /// THREAD_START: its creation, creator and kind (0 main, 1 worker, else other).
    mutating func started(_ t: Int32, kind: UInt32, creator: UInt64, at now: UInt64) {
        let i = Int(t)
        threads[i].createdAt = now
        threads[i].creatorTid = creator == 0 ? nil : Int32(truncatingIfNeeded: creator)
        switch kind {
        case 0: threads[i].kind = .main
        case 1: markWorker(t, at: now)
        default: threads[i].kind = .other
        }
    }

    mutating func markWorker(_ t: Int32, at now: UInt64) {
        let i = Int(t)
        guard !state[i].isWorker else { return }
        state[i].isWorker = true
        threads[i].kind = .worker
        aliveWorkers += 1
        if state[i].state == .blocked { blockedWorkers += 1 }
        activity.workers.record(aliveWorkers, at: now)
        checkThreadExplosionIfNeeded(at: now)
    }

    /// A thread from before tracing, of no known kind: one that drains queues is a worker.
    @inline(__always)
    func isUnclassifiedPreexisting(_ t: Int32) -> Bool {
        !state[Int(t)].isWorker && threads[Int(t)].createdAt == nil && threads[Int(t)].kind == .other
    }

    /// THREAD_EXIT, once its open frames are closed: its tid names a new thread from the next
    /// event on.
    mutating func exited(_ t: Int32, at now: UInt64) {
        setState(t, .dead, at: now)
        threads[Int(t)].exitedAt = now
        byTid.remove(UInt64(UInt32(bitPattern: threads[Int(t)].tid)))
        if lastThread == t { lastThread = -1 }
    }

    @inline(__always)
    func isMain(_ t: Int32) -> Bool { threads[Int(t)].kind == .main }

    @inline(__always)
    func runState(of t: Int32) -> RunState { state[Int(t)].state }

    /// The main thread, while it lives.
    func liveMainThread() -> Int32? {
        threads.firstIndex { $0.kind == .main && $0.exitedAt == nil }.map { Int32($0) }
    }

    // MARK: Per-thread marks of the item records

    /// WORKITEM_PERFORM seen: the next START of `id` on this thread runs inline.
    mutating func setPerforming(_ t: Int32, id: UInt64) { state[Int(t)].performId = id }

    /// Whether the START of `id` is the inline run WORKITEM_PERFORM announced (consumed).
    @inline(__always)
    mutating func takePerforming(_ t: Int32, id: UInt64) -> Bool {
        guard state[Int(t)].performId == id else { return false }
        state[Int(t)].performId = nil
        return true
    }

    /// Ids of a thread's ENQUEUEs increase: false for a smaller or repeated one.
    @inline(__always)
    mutating func claimEnqueueId(_ t: Int32, _ id: UInt64) -> Bool {
        if id < state[Int(t)].nextEnqueueId { return false }
        state[Int(t)].nextEnqueueId = id &+ 1
        return true
    }

    // MARK: Stack

    /// The innermost item (or handler run) the thread is executing (-1: none).
    @inline(__always)
    func currentItem(of t: Int32) -> Int32 { state[Int(t)].currentItem }

    /// How many items (and handler runs) the thread has nested.
    @inline(__always)
    func itemDepth(of t: Int32) -> UInt8 { state[Int(t)].itemDepth }

    /// The thread's frames, outermost first (a table shared with the thread: read only).
    @inline(__always)
    func frames(of t: Int32) -> UnsafeTable<Frame> { state[Int(t)].stack }

    /// Inline: a frame built by the caller and passed in memory was read back in 16-byte
    /// loads of narrower stores, a store-forwarding stall on every item (~40% of the call).
    @inline(__always)
    mutating func push(_ frame: Frame, on t: Int32, at now: UInt64) {
        let i = Int(t)
        var frame = frame
        frame.outerItem = state[i].currentItem
        frame.outerDepth = state[i].itemDepth
        if frame.kind == .item || frame.kind == .handler {
            state[i].currentItem = frame.index
            state[i].itemDepth = frame.outerDepth &+ 1
        }
        state[i].stack.append(frame)
        refreshState(t, at: now)
    }

    /// Pops the top frame when it is of `kind` with `key` (nearly always the case).
    @inline(__always)
    mutating func popIfTop(_ kind: FrameKind, key: UInt64, cause: BlockCause?, from t: Int32,
                           at now: UInt64) -> Frame? {
        guard let top = state[Int(t)].stack.last, top.kind == kind, top.key == key,
              cause == nil || top.cause == cause! else { return nil }
        return popTop(t, at: now)
    }

    /// Depth of the innermost frame of `kind` with `key`, if any.
    func innermost(_ kind: FrameKind, key: UInt64, cause: BlockCause?, in t: Int32) -> Int? {
        var at = state[Int(t)].stack.count - 1
        while at >= 0 {
            let f = state[Int(t)].stack[at]
            if f.kind == kind && f.key == key && (cause == nil || f.cause == cause!) { return at }
            at -= 1
        }
        return nil
    }

    /// Pops the top frame, restoring the thread's innermost item.
    @inline(__always)
    mutating func popTop(_ t: Int32, at now: UInt64) -> Frame {
        let i = Int(t)
        let frame = state[i].stack.removeLast()
        state[i].currentItem = frame.outerItem
        state[i].itemDepth = frame.outerDepth
        refreshState(t, at: now)
        return frame
    }

    // MARK: Blocked intervals

    /// Starts a blocked interval and its frame.
    mutating func beginBlocked(_ t: Int32, cause: BlockCause, object: Int32, item: Int32, key: UInt64,
                               site: UInt32, at now: UInt64) {
        let i = Int(t)
        let index = Int32(threads[i].blocked.count)
        var interval = BlockedInterval(thread: i, start: now, end: nil, cause: cause, object: Int(object),
                                       item: item < 0 ? nil : Int(item))
        interval.siteRaw = site
        threads[i].blocked.append(interval)
        push(Frame(kind: .blocked, cause: cause, index: index, key: key, start: now), on: t, at: now)
    }

    /// Ends the blocked interval of frame `f`.
    mutating func closeBlocked(_ f: Frame, thread t: Int32, timedOut: Bool, at now: UInt64) {
        let i = Int(t)
        threads[i].blocked[Int(f.index)].end = now
        if timedOut { threads[i].blocked[Int(f.index)].timedOut = true }
    }

    @inline(__always)
    func blockedInterval(_ t: Int32, _ index: Int32) -> BlockedInterval { threads[Int(t)].blocked[Int(index)] }

    /// The wait's site, known only when it ended (a wait records its site only when it blocked).
    mutating func setBlockedSite(_ t: Int32, _ index: Int32, site: UInt32) {
        threads[Int(t)].blocked[Int(index)].siteRaw = site
    }

    /// Drops the thread's latest blocked interval if it is `index`: a wait that never blocked.
    @inline(__always)
    mutating func discardBlocked(_ t: Int32, _ index: Int32) {
        if Int(index) == threads[Int(t)].blocked.count - 1 { threads[Int(t)].blocked.removeLast() }
    }

    /// A dispatch_once wait known only at its end (ModelBuilder+Once.swift): the interval, and
    /// the thread's time since its start moved from busy (or idle) to blocked. The thread
    /// recorded nothing meanwhile, so its state was the same all along.
    mutating func addOnceWait(_ interval: BlockedInterval, thread t: Int32, since start: UInt64, at now: UInt64) {
        let i = Int(t)
        // Nothing ran on the thread while it waited: appending keeps `blocked` in start order.
        threads[i].blocked.append(interval)
        closeStateTime(t, at: now)
        let waited = now - start
        if state[i].state == .running, let last = threads[i].busy.last, last.end == now {
            let moved = Swift.min(waited, last.duration)
            threads[i].busyNs -= moved
            threads[i].busy[threads[i].busy.count - 1].end = now - moved
            if moved == last.duration { threads[i].busy.removeLast() }
            state[i].lastBusyEnd = threads[i].busy.last?.end ?? ThreadState.noBusySpan
        }
        threads[i].blockedNs += waited
    }

    /// Site ids → model indexes in every blocked interval (at the end, when all sites are known).
    mutating func resolveBlockedSites(_ resolve: (UInt32) -> UInt32) {
        for t in 0..<threads.count where !threads[t].blocked.isEmpty {
            for b in threads[t].blocked.indices where threads[t].blocked[b].siteRaw != 0 {
                threads[t].blocked[b].siteRaw = resolve(threads[t].blocked[b].siteRaw)
            }
        }
    }

    // MARK: State

    @inline(__always)
    private mutating func refreshState(_ t: Int32, at now: UInt64) {
        let i = Int(t)
        let n = state[i].stack.count
        let new: RunState = n == 0 ? .idle : (state[i].stack[n - 1].kind == .blocked ? .blocked : .running)
        if new != state[i].state { setState(t, new, at: now) }
    }

    private mutating func setState(_ t: Int32, _ new: RunState, at now: UInt64) {
        let i = Int(t)
        let old = state[i].state
        guard old != new else { return }
        closeStateTime(t, at: now)
        state[i].state = new
        state[i].since = now
        let worker = state[i].isWorker
        switch old {
        case .running: runningThreads -= 1; activity.running.record(runningThreads, at: now)
        case .blocked:
            blockedThreads -= 1; activity.blocked.record(blockedThreads, at: now)
            if worker { blockedWorkers -= 1 }
        default: break
        }
        switch new {
        case .running: runningThreads += 1; activity.running.record(runningThreads, at: now)
        case .blocked:
            blockedThreads += 1; activity.blocked.record(blockedThreads, at: now)
            if worker { blockedWorkers += 1 }
        case .dead:
            aliveThreads -= 1; activity.alive.record(aliveThreads, at: now)
            if worker { aliveWorkers -= 1; activity.workers.record(aliveWorkers, at: now) }
        case .idle: break
        }
        if worker { checkThreadExplosionIfNeeded(at: now) }
    }

    /// Adds the time spent in the current state (up to now) to the thread's totals.
    @inline(__always)
    private mutating func closeStateTime(_ t: Int32, at now: UInt64) {
        let i = Int(t)
        let since = state[i].since
        guard now > since else { return }
        switch state[i].state {
        case .running:
            threads[i].busyNs += now - since
            if state[i].lastBusyEnd == since {
                threads[i].busy[threads[i].busy.count - 1].end = now
            } else {
                if threads[i].busy.count >= state[i].busyPopulated { populateBusySpans(i) }
                threads[i].busy.append(Span(start: since, end: now))
            }
            state[i].lastBusyEnd = now
        case .blocked: threads[i].blockedNs += now - since
        default: break
        }
        state[i].since = now
    }

    /// The check below changes nothing while no explosion is open or starting: skip the call
    /// then (workers change state twice per item).
    @inline(__always)
    private mutating func checkThreadExplosionIfNeeded(at now: UInt64) {
        let exploding = Int(aliveWorkers) >= explosionMinWorkers && blockedWorkers * 2 > aliveWorkers
        if exploding || explosion != nil { checkThreadExplosion(at: now) }
    }

    /// Thread explosion: clearly more live workers than CPUs while most of them are blocked.
    private mutating func checkThreadExplosion(at now: UInt64) {
        let exploding = Int(aliveWorkers) >= explosionMinWorkers && blockedWorkers * 2 > aliveWorkers
        if exploding {
            if explosion == nil {
                explosion = ThreadExplosion(start: now, end: now, peakWorkers: 0, peakBlockedWorkers: 0)
            }
            explosion!.peakWorkers = Swift.max(explosion!.peakWorkers, Int(aliveWorkers))
            explosion!.peakBlockedWorkers = Swift.max(explosion!.peakBlockedWorkers, Int(blockedWorkers))
        } else if explosion != nil {
            closeExplosion(at: now)
        }
    }

    private mutating func closeExplosion(at now: UInt64) {
        guard var x = explosion else { return }
        x.end = now
        if x.end - x.start >= Thresholds.threadExplosionMinNs { appendObservation(&explosions, x) }
        explosion = nil
    }

    /// At the end of the trace: each live thread's time up to `end`, and an open explosion.
    mutating func close(at end: UInt64) {
        for t in state.indices {
            if state[t].state != .dead { closeStateTime(Int32(t), at: end) }
            threads[t].lastSeen = state[t].lastSeen
        }
        closeExplosion(at: end)
    }

    /// The threads, for the model; the table is empty afterwards.
    mutating func takeThreads() -> [TraceThread] {
        (state, byTid) = (UnsafeTable(), CachedIdMap())
        let all = Array(threads)
        threads = UnsafeTable()
        return all
    }
}

enum FrameKind: UInt8 { case item, handler, blocked, iteration, ioHandler }

/// One entry of a thread's stack: what it is doing, innermost last.
struct Frame {
    var kind: FrameKind
    var cause: BlockCause = .sync
    /// Item index (item, handler), blocked-interval index, apply index or I/O op index.
    var index: Int32
    /// Serial domain the item counted in (items and handlers).
    var domain: Int32 = -1
    /// Matching key: item id, source address, wait key, apply id, op id.
    var key: UInt64
    var start: UInt64
    /// The thread's innermost item and item depth before this frame was pushed (restored on pop).
    var outerItem: Int32 = -1
    var outerDepth: UInt8 = 0

    init(kind: FrameKind, cause: BlockCause = .sync, index: Int32, domain: Int32 = -1, key: UInt64, start: UInt64) {
        self.kind = kind; self.cause = cause; self.index = index; self.domain = domain; self.key = key; self.start = start
    }
}

enum RunState: UInt8 { case idle, running, blocked, dead }

struct ThreadState {
    var stack = UnsafeTable<Frame>(capacity: 4)
    var state: RunState = .idle
    var since: UInt64 = 0
    var isWorker = false
    /// Innermost item or handler run being executed (-1: none) and how many are nested.
    var currentItem: Int32 = -1
    var itemDepth: UInt8 = 0
    var lastSeen: UInt64 = 0
    /// WORKITEM_PERFORM seen: the next START of this id runs inline, not from a queue.
    var performId: UInt64?
    /// The smallest id the thread's next ENQUEUE may have (BuildAnomalies.reusedItemIds).
    var nextEnqueueId: UInt64 = 0
    /// Busy spans below this count have their pages populated (`populateBusySpans`); Int.max:
    /// not populating (spans not reserved, or the kernel refused).
    var busyPopulated = Int.max
    /// The end of the thread's last busy span (`noBusySpan` before the first): whether a span
    /// extends the last one is read here, in the row `setState` reads anyway, instead of from
    /// the spans' last element (a cache miss after the one on the spans' count, per item).
    var lastBusyEnd = ThreadState.noBusySpan
    static let noBusySpan = UInt64.max
}
