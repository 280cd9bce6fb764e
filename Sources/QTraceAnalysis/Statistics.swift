// Statistics computed from a TraceModel: per queue, per thread, main thread, sources, groups,
// semaphores, apply calls and the tracer's own overhead. Pure function of the model.
import QTraceFormat

public struct TraceStatistics: Sendable, Codable {
    public var durationNs: UInt64 = 0
    public var events = 0
    public var items = 0
    /// Items with no known queue (DispatchWorkItem.perform, START without ENQUEUE).
    public var itemsWithoutQueue = 0
    /// Index-aligned with `model.queues` (rows of queues that ran nothing kept compact).
    public var queues = QueueStatsTable()
    /// The target-queue forest, depth-first (roots: main, global queues by QoS, then others).
    public var queueTree = QueueForest()
    /// Index-aligned with `model.threads`.
    public var threads: [ThreadStats] = []
    public var threadCounts = ThreadCountStats()
    public var mainThread = MainThreadStats()
    public var sources: [SourceStats] = []
    public var groups: [GroupStats] = []
    public var semaphores: [SemaphoreStats] = []
    public var applies: [ApplyStats] = []
    public var overhead = OverheadStats()
    /// Kernel scheduling states; only for traces recorded with `--sched`.
    public var sched: SchedStatistics?
    /// CPU samples attributed to items; only for traces recorded with `--cpu`.
    public var cpu: CPUStatistics?
    /// Per code (what items ran), most total run time first; empty for traces without sites.
    public var sites: [CodeStats] = []
    /// Blocking call sites, most total blocked time first.
    public var waitSites: [WaitSiteStats] = []
    /// Swift Concurrency tasks.
    public var tasks = TaskSummary()
    /// Swift actors (format 1.7: their hops), busiest first.
    public var actors: [ActorStats] = []

    public init() {}

    /// `twoThreads`: whether the pass over the items runs in two halves side by side
    /// (`StatisticsItemPass`; the same figures either way).
    public init(model: TraceModel, twoThreads: DecodingThread = .automatic) {
        durationNs = model.duration
        events = model.eventCount
        items = model.items.count
        addItemFigures(model, twoThreads: twoThreads)
        // The pass's tallies were freed, but the allocator keeps their pages (freed in the
        // middle of its heap): the queue tree and the objects would come on top of them (900k
        // queues: +25-30 MB at the statistics' peak). Giving them back costs a walk of the heap.
        FreeMemory.giveBack()
        queueTree = QueueTreeNode.forest(model, queues)
        threadCounts = ThreadCountStats(model)
        mainThread.mainQueueItems = mainThread.mainQueue.map { queues[$0].items - queues[$0].pendingAtEnd } ?? 0
        Phases.time("statistics: objects, overhead, sched, cpu") { addObjects(model) }
        (waitSites, tasks, actors) = Phases.time("statistics: code sites, tasks, actors") {
            (WaitSiteStats.all(model), TaskSummary(model), ActorStats.all(model))
        }
    }

    /// The figures of the pass over the items, its tallies freed before the rest is computed
    /// (900k queues: a few per-queue columns of the pass held at the statistics' peak).
    private mutating func addItemFigures(_ model: TraceModel, twoThreads: DecodingThread) {
        let pass = Phases.time("statistics: one pass over the items") { StatisticsItemPass(model, twoThreads: twoThreads) }
        itemsWithoutQueue = pass.itemsWithoutQueue
        queues = Phases.time("statistics: queues") { QueueStats.all(model, pass) }
        threads = Phases.time("statistics: threads") { ThreadStats.all(model, pass.threads) }
        mainThread = MainThreadStats(model, pass.main)
        sites = Phases.time("statistics: code sites") { CodeStats.all(model, pass.codes) }
    }

    private mutating func addObjects(_ model: TraceModel) {
        sources = model.sources.indices.map { SourceStats(model, $0) }
        groups = model.groups.indices.map { GroupStats(model, $0) }
        semaphores = SemaphoreStats.all(model)
        applies = model.applies.indices.map { ApplyStats(model, $0) }
        overhead = OverheadStats(model)
        sched = SchedStatistics(model)
        cpu = CPUStatistics(model)
    }
}

/// A figure's share of a whole (busy share: busy / the trace's duration); 0 of nothing.
public func share(_ part: UInt64, of whole: UInt64) -> Double { whole == 0 ? 0 : Double(part) / Double(whole) }

/// A queue's display name: its label, or its address when it has none.
public func queueName(_ q: TraceQueue) -> String {
    if q.label.isEmpty { return "queue 0x" + String(q.address, radix: 16) }
    return q.nameSuffix.isEmpty ? q.label : q.label + " [" + q.nameSuffix + "]"
}

/// The label part of a `queueName` (what queues of one label share): the name without the
/// " [suffix]" that tells them apart.
public func queueLabel(ofName name: String) -> String {
    guard name.hasSuffix("]"), let open = name.lastIndex(of: "["), open > name.startIndex else { return name }
    let space = name.index(before: open)
    return name[space] == " " ? String(name[..<space]) : name
}

/// How every view names an item: by the id `qtrace dump` prints (`id=`) and the report's
/// search finds; items without one (a source handler run, a Swift job) by their index.
public func itemReference(_ model: TraceModel, _ i: Int) -> String {
    let id = model.items[i].id
    return id != 0 ? "item id=\(id)" : "item #\(i)"
}

/// A thread's display name.
public func threadName(_ t: TraceThread) -> String {
    if t.kind == .main { return "main thread" }
    let kind = t.kind == .worker ? "worker" : "thread"
    return t.name.isEmpty ? "\(kind) \(t.tid)" : "\(kind) \(t.tid) (\(t.name))"
}

// MARK: Queues

public struct QueueStats: Sendable, Codable, Equatable {
    public var queue: Int
    public var label: String
    /// How every view names the queue: the label, told apart from others sharing it by QoS,
    /// kind or address; "queue 0x…" without a label (nil in summaries before qtrace 1.6).
    public var name: String?
    /// "0x..." (with "#generation" when the address was reused).
    public var address: String
    public var kind: QueueKind
    public var qos: String
    public var target: Int?
    /// Items attributed to the queue (including source handler runs).
    public var items = 0
    public var completed = 0
    public var pendingAtEnd = 0
    public var runningAtEnd = 0
    /// The longest run of an item still running at the end (start → trace end): a lower
    /// bound of its run time, which `run` leaves out (nil in summaries before qtrace 1.6).
    public var runningAtEndLongestNs: UInt64?
    public var syncItems = 0
    public var barrierItems = 0
    public var sourceHandlerRuns = 0
    /// Ready → start, and start → end.
    public var wait = DurationStats()
    public var run = DurationStats()
    /// Waits of sync items (how long callers were held up: serial queues used as locks).
    public var syncWait = DurationStats()
    public var waitByCause = WaitBreakdown()
    public var worstWaitBehind: WaitBehind?
    /// Completed items per second of trace.
    public var throughputPerSecond: Double = 0
    public var backlogMax = 0
    public var widthMax = 0
    /// Average items running while busy.
    public var widthMean: Double = 0
    public var busyNs: UInt64 = 0
    /// busyNs / trace duration.
    public var busyShare: Double = 0
    public var threadsServed = 0

    /// Each queue's row from its tally: taken in item order by the pass; else in item order
    /// here, each queue's tally alive from its first item to its last (`asQueuesEnd`), when
    /// the tallies alive at once fit the budget; else one queue at a time through an index of
    /// the items grouped by queue (one set of recorders alive at a time, and no pass over all
    /// the items per queue: a trace of many queues would make that quadratic). One row at a
    /// time, so that the rows of queues that ran nothing are never all full size.
    static func all(_ model: TraceModel, _ pass: StatisticsItemPass) -> QueueStatsTable {
        if let tallies = pass.queueTallies {
            var out = QueueStatsTable(identitiesFrom: model.queues)
            out.reserveCapacity(model.queues.count)
            for q in model.queues.indices {
                var row = QueueStats(model, q)
                if pass.itemsPerQueue[q] > 0 { row.apply(tallies.tally(of: q), threadsServed: pass.threadsServed[q], model) }
                out.append(row)
            }
            return out
        }
        return asQueuesEnd(model, pass) ?? grouped(model, pass)
    }

    /// The rows through the items grouped by queue (a counting sort of their indices).
    static func grouped(_ model: TraceModel, _ pass: StatisticsItemPass) -> QueueStatsTable {
        var out = QueueStatsTable(identitiesFrom: model.queues)
        out.reserveCapacity(model.queues.count)
        let grouped = itemsByQueue(model, counts: pass.itemsPerQueue)
        var accumulation = Accumulation(traceEnd: model.endTime)
        defer { accumulation.release() }
        var facts = [ItemFacts](repeating: ItemFacts(), count: ItemFacts.batch)
        model.items.withUnsafeBufferPointer { items in
            grouped.items.withUnsafeBufferPointer { order in
                facts.withUnsafeMutableBufferPointer { facts in
                    for q in model.queues.indices {
                        var row = QueueStats(model, q)
                        var next = grouped.starts[q]
                        guard next < grouped.starts[q + 1] else { out.append(row); continue }
                        while next < grouped.starts[q + 1] {
                            let n = Swift.min(ItemFacts.batch, grouped.starts[q + 1] - next)
                            ItemFacts.gather(items, order[next..<next + n], into: facts)
                            for k in 0..<n { accumulation.add(facts[k]) }
                            next += n
                        }
                        row.apply(accumulation, threadsServed: pass.threadsServed[q], model)
                        accumulation.reset()
                        out.append(row)
                    }
                }
            }
        }
        return out
    }

    /// Identity and build-time facts; item statistics come from `apply`.
    init(_ model: TraceModel, _ q: Int) {
        let queue = model.queues[q]
        self.queue = q
        label = queue.label
        name = queueName(queue)
        address = queueAddress(queue.address, generation: queue.generation)
        kind = queue.kind
        qos = queue.qos.name
        target = queue.target
        waitByCause = queue.waitByCause
        worstWaitBehind = queue.worstWaitBehind
        backlogMax = Int(queue.backlog.peak)
        widthMax = queue.maxWidth
        busyNs = queue.busyNs
        busyShare = share(busyNs, of: model.duration)
    }

    /// A queue's item tallies: its items taken one by one, in any order. Its recordings are
    /// inline (a table of them is one block of memory) and freed by `release()`.
    struct Accumulation {
        var items = 0, completed = 0, pending = 0, running = 0, sync = 0, barrier = 0, handlers = 0
        var runSum: UInt64 = 0
        var longestRunning: UInt64 = 0
        let traceEnd: UInt64
        var waits = DurationRecording(), runs = DurationRecording(), syncs = DurationRecording()

        init(traceEnd: UInt64) { self.traceEnd = traceEnd }

        func release() { waits.release(); runs.release(); syncs.release() }

        /// Inlined where it is called, always: with two callers (the pass's tallies and
        /// `asQueuesEnd`), `@inline(__always)` left it out of line in the pass (+0.5-0.9% of sf1).
        @_transparent
        mutating func add(_ item: ItemFacts) {
            items += 1
            if item.synchronous { sync += 1 }
            if item.barrier { barrier += 1 }
            if item.handler { handlers += 1 }
            if item.wait != noTime {
                waits.record(item.wait)
                if item.synchronous { syncs.record(item.wait) }
            }
            if item.start == noTime {
                pending += 1
            } else if item.run != noTime {
                completed += 1
                runs.record(item.run)
                runSum &+= item.run
            } else {
                running += 1
                longestRunning = Swift.max(longestRunning, traceEnd >= item.start ? traceEnd - item.start : 0)
            }
        }

        /// Ready for the next queue, keeping the recordings' buffers.
        mutating func reset() {
            waits.reset(); runs.reset(); syncs.reset()
            items = 0; completed = 0; pending = 0; running = 0; sync = 0; barrier = 0; handlers = 0
            runSum = 0
            longestRunning = 0
        }
    }

    mutating func apply(_ a: Accumulation, threadsServed: Int, _ model: TraceModel) {
        items = a.items
        completed = a.completed
        pendingAtEnd = a.pending
        runningAtEnd = a.running
        runningAtEndLongestNs = a.running > 0 ? a.longestRunning : nil
        syncItems = a.sync
        barrierItems = a.barrier
        sourceHandlerRuns = a.handlers
        self.threadsServed = threadsServed
        wait = a.waits.stats
        run = a.runs.stats
        syncWait = a.syncs.stats
        let duration = model.duration
        throughputPerSecond = duration == 0 ? 0 : Double(completed) * 1e9 / Double(duration)
        widthMean = share(a.runSum, of: busyNs)
    }
}

// MARK: Threads

public struct ThreadQueueShare: Sendable, Codable, Equatable {
    public var queue: Int
    public var items: Int
    public var runNs: UInt64
}

public struct ThreadStats: Sendable, Codable {
    public var thread: Int
    public var tid: Int32
    public var name: String
    public var kind: ThreadKind
    public var createdAt: UInt64?
    public var exitedAt: UInt64?
    public var items = 0
    public var busyNs: UInt64 = 0
    public var blockedNs: UInt64 = 0
    /// busyNs over the thread's life within the trace.
    public var busyShare: Double = 0
    public var blockedIntervals = 0
    /// Queues whose items it ran, most run time first.
    public var queues: [ThreadQueueShare] = []

    /// Whether the thread did anything of its own: ran an item or blocked. The threads `qtrace
    /// stats` lists, and those the report's lanes put before idle ones (a parked pool).
    public var ranOrBlocked: Bool { Self.ranOrBlocked(items: items, blockedNs: blockedNs) }
    public static func ranOrBlocked(items: Int, blockedNs: some BinaryInteger) -> Bool { items > 0 || blockedNs > 0 }

    static func all(_ model: TraceModel, _ tally: ThreadTally) -> [ThreadStats] {
        let byThread = tally.sharesByThread(threadCount: model.threads.count)
        return model.threads.indices.map { t in
            let thread = model.threads[t]
            var s = ThreadStats(thread: t, tid: thread.tid, name: thread.name, kind: thread.kind,
                                createdAt: thread.createdAt, exitedAt: thread.exitedAt)
            s.items = tally.itemsPerThread[t]
            s.busyNs = thread.busyNs
            s.blockedNs = thread.blockedNs
            let lifeEnd = thread.exitedAt ?? model.endTime
            let lifeStart = thread.createdAt ?? thread.firstSeen
            s.busyShare = share(thread.busyNs, of: lifeEnd > lifeStart ? lifeEnd - lifeStart : 0)
            s.blockedIntervals = thread.blocked.count
            s.queues = byThread[t].sorted { $0.runNs != $1.runNs ? $0.runNs > $1.runNs : $0.queue < $1.queue }
            return s
        }
    }
}

public struct ThreadCountStats: Sendable, Codable, Equatable {
    public var seen = 0
    /// THREAD_START / THREAD_EXIT records.
    public var created = 0
    public var exited = 0
    public var workers = 0
    public var peakAlive = 0
    public var peakRunning = 0
    public var peakBlocked = 0
    public var peakWorkers = 0
    public init() {}

    init(_ model: TraceModel) {
        seen = model.threads.count
        created = model.threads.reduce(0) { $0 + ($1.createdAt != nil ? 1 : 0) }
        exited = model.threads.reduce(0) { $0 + ($1.exitedAt != nil ? 1 : 0) }
        workers = model.threads.reduce(0) { $0 + ($1.kind == .worker ? 1 : 0) }
        peakAlive = Int(model.threadActivity.alive.peak)
        peakRunning = Int(model.threadActivity.running.peak)
        peakBlocked = Int(model.threadActivity.blocked.peak)
        peakWorkers = Int(model.threadActivity.workers.peak)
    }
}

// MARK: Main thread

public struct ItemSummary: Sendable, Codable, Equatable {
    public var item: Int
    public var queue: Int?
    public var startNs: UInt64
    public var runNs: UInt64
}

public struct MainThreadStats: Sendable, Codable, Equatable {
    public var thread: Int?
    public var mainQueue: Int?
    /// Items run on the main thread (main-queue items and anything else it ran).
    public var items = 0
    public var run = DurationStats()
    /// Main-queue latency: ready → start of main-queue items.
    public var wait = DurationStats()
    /// Longest items, longest first (at most `longestItemCount`).
    public var longestItems: [ItemSummary] = []
    public var itemsOverFrame = 0
    public var itemsOverHang = 0
    public var blockedNs: UInt64 = 0
    public var blockingCalls = 0
    public var busyShare: Double = 0
    /// Main-queue items that ran, on the main thread (a run loop) or, after dispatchMain()
    /// (which ends the main thread on Linux), on a worker (nil in summaries before 1.2). The
    /// frame, hang and blocking rules apply only to programs that serve the main queue (apps);
    /// a command-line tool's main thread may block as it likes.
    public var mainQueueItems: Int?
    public var runsEventLoop: Bool { (mainQueueItems ?? 0) > 0 }
    public static let longestItemCount = 5
    public init() {}

    /// From the pass's tally of the main thread's top-level items.
    init(_ model: TraceModel, _ tally: MainThreadTally?) {
        guard var tally else { return }
        let t = Int(tally.thread)
        thread = t
        mainQueue = tally.mainQueue >= 0 ? Int(tally.mainQueue) : nil
        items = tally.items
        itemsOverFrame = tally.itemsOverFrame
        itemsOverHang = tally.itemsOverHang
        MainThreadTally.trimLongest(&tally.longest)
        longestItems = tally.longest
        run = tally.runs.stats
        wait = tally.waits.stats
        blockedNs = model.threads[t].blockedNs
        blockingCalls = model.threads[t].blocked.count
        busyShare = share(model.threads[t].busyNs, of: model.duration)
    }
}

// MARK: Sources, groups, semaphores, apply

public struct SourceStats: Sendable, Codable, Equatable {
    public var source: Int
    public var type: String
    public var queue: Int?
    public var eventRuns = 0
    public var cancelHandlerRan = false
    /// Runs that handled more than one event, and those not explained by a suspension.
    public var coalescedRuns = 0
    public var coalescedRunsWhileActive = 0
    public var maxData: UInt64 = 0
    public var totalData: UInt64 = 0
    public var merges = 0
    public var handlerRun = DurationStats()
    /// Data sources: first unhandled merge → handler start.
    public var delay = DurationStats()
    /// Timers: handler start − programmed fire time (early runs count as 0).
    public var lateness = DurationStats()
    public var timerIntervalNs: UInt64?
    public var suspendedNs: UInt64 = 0
    public var cancelled = false
    public var suspendedAtEnd = false

    init(_ model: TraceModel, _ s: Int) {
        let src = model.sources[s]
        source = s
        type = "\(src.type)"
        queue = src.queue
        merges = src.merges
        let runs = DurationRecorder(), delays = DurationRecorder(), late = DurationRecorder()
        for r in src.runs {
            if r.kind == .cancel { cancelHandlerRan = true }
            guard r.kind == .event else { continue }
            eventRuns += 1
            if r.coalesced { coalescedRuns += 1; if !r.afterSuspension { coalescedRunsWhileActive += 1 } }
            maxData = Swift.max(maxData, r.data)
            totalData &+= r.data
            if let run = model.items[r.item].runTime { runs.record(run) }
            if let d = r.delayNs { delays.record(d) }
            if let l = r.latenessNs { late.record(UInt64(Swift.max(l, 0))) }
        }
        handlerRun = runs.stats
        delay = delays.stats
        lateness = late.stats
        timerIntervalNs = src.timers.last?.intervalNs
        suspendedNs = src.suspensions.reduce(0) { $0 + ((($1.end ?? model.endTime) >= $1.start) ? ($1.end ?? model.endTime) - $1.start : 0) }
        cancelled = src.cancelledAt != nil
        suspendedAtEnd = src.suspendCountAtEnd > 0
    }
}

public struct GroupStats: Sendable, Codable, Equatable {
    public var group: Int
    public var address: String
    public var enters: Int
    public var leaves: Int
    public var outstanding: Int
    public var leavesWithoutEnter: Int
    public var rounds: Int
    public var firstEnterNs: UInt64?
    public var lastLeaveNs: UInt64?
    /// First enter → last leave over the whole trace.
    public var enterToLeaveNs: UInt64?
    /// Longest last-leave → notify-fired delay.
    public var leaveToNotifyNs: UInt64?
    public var notifies: Int
    public var notifiesFired: Int
    /// The item that left last in the last completed round.
    public var lastMember: Int?
    public var waits: Int
    public var timedOutWaits: Int

    init(_ model: TraceModel, _ g: Int) {
        let group = model.groups[g]
        self.group = g
        address = "0x" + String(group.address, radix: 16)
        enters = group.enters
        leaves = group.leaves
        outstanding = group.outstanding
        leavesWithoutEnter = group.leavesWithoutEnter
        rounds = group.rounds.count
        firstEnterNs = group.rounds.first?.start
        let completed = group.rounds.last { $0.end != nil }
        lastLeaveNs = completed?.end
        if let a = firstEnterNs, let b = lastLeaveNs, b >= a { enterToLeaveNs = b - a }
        lastMember = completed?.lastMember
        notifies = group.notifies.count
        notifiesFired = group.notifies.reduce(0) { $0 + ($1.fired != nil ? 1 : 0) }
        for n in group.notifies {
            guard let fired = n.fired, let emptied = group.rounds.last(where: { ($0.end ?? .max) <= fired })?.end else { continue }
            let delay = fired - Swift.max(emptied, n.registered)
            leaveToNotifyNs = Swift.max(leaveToNotifyNs ?? 0, delay)
        }
        waits = group.waits
        timedOutWaits = group.timedOutWaits
    }
}

public struct SemaphoreStats: Sendable, Codable, Equatable {
    public var semaphore: Int
    public var address: String
    public var initialValue: Int64
    public var waits: Int
    public var blockedWaits: Int
    public var fastWaits: Int
    public var timedOutWaits: Int
    public var blocked: DurationStats
    public var signals: Int
    public var wakeups: Int

    /// One pass over the blocked intervals, grouped by semaphore.
    static func all(_ model: TraceModel) -> [SemaphoreStats] {
        var waits = [[UInt64]](repeating: [], count: model.semaphores.count)
        for thread in model.threads {
            for b in thread.blocked where b.cause == .semaphore { waits[b.object].append(b.duration(traceEnd: model.endTime)) }
        }
        return model.semaphores.indices.map { s in
            waits[s].sort()
            return SemaphoreStats(model, s, blocked: DurationStats(sorted: waits[s][...]))
        }
    }

    init(_ model: TraceModel, _ s: Int, blocked: DurationStats) {
        let sem = model.semaphores[s]
        semaphore = s
        address = "0x" + String(sem.address, radix: 16)
        initialValue = sem.initialValue
        waits = sem.waits
        blockedWaits = sem.blockedWaits
        fastWaits = Swift.max(sem.waits - sem.blockedWaits, 0)
        timedOutWaits = sem.timedOutWaits
        self.blocked = blocked
        signals = sem.signals
        wakeups = sem.wakeups
    }
}

public struct ApplyStats: Sendable, Codable, Equatable {
    public var apply: Int
    public var queue: Int?
    public var callerThread: Int
    public var iterations: UInt64
    public var iterationsRun: Int
    public var spanNs: UInt64?
    public var iterationTotalNs: UInt64
    public var iterationMeanNs: UInt64
    /// Sum of iteration times / span: how many iterations ran in parallel on average.
    public var speedup: Double
    public var maxWidth: Int
    public var threads: [ApplyThreadShare]

    init(_ model: TraceModel, _ a: Int) {
        let call = model.applies[a]
        apply = a
        queue = call.queue
        callerThread = call.callerThread
        iterations = call.iterations
        iterationsRun = call.iterationsRun
        if let end = call.end { spanNs = end - call.begin }
        iterationTotalNs = call.iterationTotalNs
        iterationMeanNs = call.iterationsRun == 0 ? 0 : call.iterationTotalNs / UInt64(call.iterationsRun)
        speedup = share(call.iterationTotalNs, of: spanNs ?? 0)
        maxWidth = call.maxWidth
        threads = call.threads.sorted { $0.thread < $1.thread }
    }
}

public struct OverheadStats: Sendable, Codable, Equatable {
    public var events = 0
    public var shimOverheadNsPerEvent: UInt64 = 0
    /// events × per-event cost: time the program spent in the recorder.
    public var estimatedNs: UInt64 = 0
    /// estimatedNs / trace duration (on one thread's time line).
    public var shareOfDuration: Double = 0
    public var droppedEvents: UInt64 = 0
    public var anomalies = BuildAnomalies()
    public init() {}

    init(_ model: TraceModel) {
        events = model.eventCount
        shimOverheadNsPerEvent = model.info.shimOverheadNs
        estimatedNs = UInt64(events) &* model.info.shimOverheadNs
        shareOfDuration = share(estimatedNs, of: model.duration)
        droppedEvents = model.info.droppedEvents
        anomalies = model.anomalies
    }
}
