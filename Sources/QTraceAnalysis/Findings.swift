// Diagnostics: the pitfalls of docs (dispatch-domain.md) detected from the model, each as a
// Finding with a stable id, a severity, the objects involved and a one-line fix.
import QTraceFormat

public enum Severity: String, Sendable, Codable, CaseIterable, Comparable {
    case info, warning, error
    var rank: Int { self == .info ? 0 : self == .warning ? 1 : 2 }
    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

public enum FindingObjectKind: String, Sendable, Codable {
    case queue, thread, item, source, group, semaphore, apply
    /// A code site (index into `TraceModel.sites`): where the call was made, what it ran.
    case site
    /// A Swift actor (index into `TraceStatistics.actors`' `actor` numbers).
    case actor
}

public struct FindingObject: Sendable, Codable, Equatable {
    public var kind: FindingObjectKind
    /// Index into the model's array for that kind.
    public var index: Int
    public var label: String
}

public struct Finding: Sendable, Codable, Equatable {
    /// Stable rule id, e.g. "deadlock.sync-current-queue".
    public var id: String
    public var severity: Severity
    /// Span of the occurrences (ns since trace start).
    public var start: UInt64
    public var end: UInt64
    public var objects: [FindingObject]
    /// One line: what happened, then the fix.
    public var message: String
    /// Occurrences aggregated into this finding (same rule and objects).
    public var occurrences: Int
    /// (1.4) A wait's call stack (the worst occurrence's), innermost first, ≤ 8 frames: the
    /// library call that blocked and the program's lines above it. Nil when not a wait, or
    /// when the trace has only the caller.
    public var stack: [String]? = nil
}

/// Rule thresholds. Values marked † in gcd-talks.md are proposals, not from the talks.
public enum Thresholds {
    /// A frame at 60 Hz: a longer main-thread item drops a frame.
    public static let frameNs: UInt64 = 16_000_000
    /// Users perceive a hang past 100 ms†.
    public static let hangNs: UInt64 = 100_000_000
    /// A sync from the main thread shorter than this (a getter/setter around a lock) is fine†.
    public static let mainSyncAllowanceNs: UInt64 = 1_000_000
    /// A sync or wait without progress this long is reported†.
    public static let longWaitNs: UInt64 = 1_000_000_000
    /// Clearly more workers than CPUs (twice as many, and at least 4 more), with most of
    /// them blocked, for this long: explosion†. libdispatch adds a worker or two beyond the
    /// CPUs in normal operation (3 workers on 2 CPUs is no explosion).
    public static let threadExplosionMinNs: UInt64 = 100_000_000
    public static func threadExplosionMinWorkers(cpus: Int) -> Int { Swift.max(2 * cpus, cpus + 4) }
    /// A higher-QoS item held back less than this by a lower-QoS one is noise†. On a loaded
    /// 2-CPU machine the scheduler alone holds a runnable thread for a few ms (a slice of
    /// each competitor): a verdict at 1 ms flipped with the load, ten times that does not.
    public static let priorityInversionMinWaitNs: UInt64 = 10_000_000
    /// Handler runs that coalesced events (while the source was active) before we call the
    /// handler slower than its events†.
    public static let slowHandlerMinCoalescedRuns = 2
    /// A timer's handler is slow only when its median run takes at least this share of the
    /// period†: a 20 µs handler of a 2 ms timer that coalesced was late to start (a loaded
    /// machine, a busy target queue), not slow (the corpus's timer fixture on a loaded machine).
    public static let slowHandlerMinShareOfPeriod = 0.5
    /// A backlog is unbounded when, over a queue's run of at least this long, the least
    /// backlog of the last of `backlogTrendWindows` windows is above every earlier window's
    /// and at least this deep†: it grew. A burst that drains is not unbounded.
    public static let unboundedBacklogMinNs: UInt64 = 1_000_000_000
    public static let unboundedBacklogMinDepth = 100
    public static let backlogTrendWindows = 4
    /// CPU saturation: windows this long whose busy time (summed over threads) is at least
    /// this share of CPUs × window, in runs at least `saturationMinNs` long†. A tenth of a
    /// second smooths the scheduler's slices; half a second is no passing spike.
    public static let saturationWindowNs: UInt64 = 100_000_000
    public static let saturationBusyShare = 0.9
    public static let saturationMinNs: UInt64 = 500_000_000
    public static let saturationMaxWindows = 1 << 16
    /// Without `--sched`, busy above this share of the CPUs is items blocked inside (more
    /// threads running items than CPUs), not saturation†.
    public static let saturationMaxShareWithoutSched = 1.25
    /// Items too small: at least this many, with median run under this factor × median wait†.
    public static let tinyItemsMinCount = 1000
    public static let tinyItemsRunToWaitFactor: UInt64 = 2
    /// ... and a median run under this†: Dispatch costs about a microsecond per item, so an
    /// item of 87 µs is worth its dispatch however long it waited (a loaded machine makes every
    /// wait long: the corpus's group fixture).
    public static let tinyItemsMaxRunNs: UInt64 = 20_000
}

public enum Diagnostics {
    /// All findings, most severe first, then by time, id and objects (deterministic).
    public static func findings(model: TraceModel, statistics: TraceStatistics) -> [Finding] {
        var rules = RuleContext(model: model, stats: statistics)
        rules.deadlocks()
        rules.syncCycles()
        rules.unfinishedAndLongWaits()
        rules.runningAtEnd()
        rules.mainThread()
        rules.threadExplosion()
        rules.priorityInversions()
        rules.globalBarriers()
        rules.sources()
        rules.groups()
        rules.cpuSaturation()
        rules.queues()
        rules.targetLoops()
        rules.applies()
        rules.droppedEvents()
        rules.inconsistentTrace()
        rules.schedBlockedInItems()
        rules.swiftConcurrency()
        return rules.sorted()
    }
}

/// Accumulates findings, merging occurrences of the same rule on the same objects.
struct RuleContext {
    let model: TraceModel
    let stats: TraceStatistics
    var found: [Finding] = []
    /// How bad each finding's kept occurrence is: its message is the worst occurrence's.
    var weights: [UInt64] = []
    var slotByKey: [String: Int] = [:]
    /// When every CPU was busy: the waits then are the CPUs', not the queues'.
    let saturation: CPUSaturation
    /// Long Swift jobs whose time went mostly to code after a switch (JobStretches.swift).
    let jobStretches: [Int: JobStretch]

    init(model: TraceModel, stats: TraceStatistics) {
        self.model = model; self.stats = stats
        saturation = CPUSaturation(model)
        jobStretches = model.longJobStretches()
    }

    /// For a long Swift job that went on past the function it resumed in: where most of its
    /// time went (" (its longest stretch, 56.7 s of its 57.6 s, in BuildOperation.build(...) at ...)").
    func stretchText(ofJob i: Int) -> String {
        guard let stretch = jobStretches[i] else { return "" }
        let item = model.items[i]
        let run = (item.endTime == noTime ? model.endTime : item.endTime) - item.startTime
        let code = model.actorCode[stretch.resume]?.described ?? "0x" + String(stretch.resume, radix: 16)
        return " (its longest stretch, \(formatDuration(stretch.duration)) of its \(formatDuration(run)), in \(code) from \(formatDuration(stretch.start)) on: its task went on there without suspending after the function it resumed in)"
    }

    /// A flight-recorder snapshot ends while the program runs on: what is open at its end is
    /// under way, not abandoned (docs/flight-recorder.md).
    var endsMidRun: Bool { model.info.flightRecorder?.askedAtNs != nil }
    var traceEnd: String { endsMidRun ? "when the snapshot was taken" : "at the end of the trace" }

    func sorted() -> [Finding] {
        found.sorted { a, b in
            if a.severity != b.severity { return a.severity > b.severity }
            if a.start != b.start { return a.start < b.start }
            if a.id != b.id { return a.id < b.id }
            return a.objects.map(\.index).lexicographicallyPrecedes(b.objects.map(\.index))
        }
    }

    /// Adds an occurrence. Occurrences of one rule on the same objects merge into one finding
    /// that spans them all and keeps the message of the worst (largest `weight`, then first).
    mutating func add(_ id: String, _ severity: Severity, _ start: UInt64, _ end: UInt64,
                      _ objects: [FindingObject], _ message: String, weight: UInt64 = 0, stack: [String]? = nil) {
        let key = id + "|" + objects.map { "\($0.kind.rawValue)\($0.index)" }.joined(separator: ",")
        if let slot = slotByKey[key] {
            found[slot].occurrences += 1
            found[slot].start = Swift.min(found[slot].start, start)
            found[slot].end = Swift.max(found[slot].end, end)
            if weight > weights[slot] {
                weights[slot] = weight
                found[slot].message = message
                found[slot].stack = stack
            }
            return
        }
        slotByKey[key] = found.count
        weights.append(weight)
        found.append(Finding(id: id, severity: severity, start: start, end: end, objects: objects,
                             message: message, occurrences: 1, stack: stack))
    }

    // MARK: Object references

    func queueRef(_ q: Int) -> FindingObject { FindingObject(kind: .queue, index: q, label: queueName(model.queues[q])) }
    func threadRef(_ t: Int) -> FindingObject { FindingObject(kind: .thread, index: t, label: threadName(model.threads[t])) }
    func itemRef(_ i: Int) -> FindingObject { FindingObject(kind: .item, index: i, label: itemName(i)) }
    func sourceRef(_ s: Int) -> FindingObject {
        let src = model.sources[s]
        return FindingObject(kind: .source, index: s, label: "\(src.type) source 0x" + String(src.address, radix: 16))
    }
    func groupRef(_ g: Int) -> FindingObject {
        FindingObject(kind: .group, index: g, label: "group 0x" + String(model.groups[g].address, radix: 16))
    }
    func semaphoreRef(_ s: Int) -> FindingObject {
        FindingObject(kind: .semaphore, index: s, label: "semaphore 0x" + String(model.semaphores[s].address, radix: 16))
    }
    func q(_ q: Int) -> String { "'" + queueName(model.queues[q]) + "'" }

    func siteRef(_ s: Int) -> FindingObject { FindingObject(kind: .site, index: s, label: model.siteDescription(s)) }

    func itemName(_ i: Int) -> String {
        let item = model.items[i]
        let on = item.queue.map { " on '" + queueName(model.queues[$0]) + "'" } ?? ""
        let code = item.site.map { " " + model.siteDescription($0) } ?? ""
        return itemReference(model, i) + code + on
    }

    /// The item's site as finding objects (none when the trace has no code identity).
    func itemSiteObjects(_ i: Int) -> [FindingObject] { model.items[i].site.map { [siteRef($0)] } ?? [] }

    func qosName(_ raw: UInt8) -> String { (QoSClass(rawValue: raw) ?? .unspecified).name }

    // MARK: Rules

    mutating func deadlocks() {
        // Prefer the shim's own record; the analysis finds the same from ENQUEUE.
        var seen = Set<String>()
        let ordered = model.deadlocks.sorted { ($0.origin == .shim ? 0 : 1, $0.time) < ($1.origin == .shim ? 0 : 1, $1.time) }
        for d in ordered {
            let key = "\(d.thread)|\(d.queue ?? -1)|\(d.kind)"
            if d.origin == .analysis && seen.contains(key) { continue }
            seen.insert(key)
            var objects = [threadRef(d.thread)]
            if let q = d.queue { objects.append(queueRef(q)) }
            if let h = d.heldQueue, h != d.queue { objects.append(queueRef(h)) }
            if let i = d.item { objects.append(itemRef(i)) }
            if let i = d.item { objects += itemSiteObjects(i) }
            let target = d.queue.map(q) ?? "a queue"
            let via = d.heldQueue.flatMap { $0 == d.queue ? nil : " (it targets \(q($0)), which the thread is running)" } ?? ""
            let call = d.kind == .sync ? "sync" : "concurrentPerform/apply"
            let id = d.kind == .sync ? "deadlock.sync-current-queue" : "deadlock.apply-current-queue"
            add(id, .error, d.time, d.time, objects,
                "\(threadName(model.threads[d.thread])) calls \(call) onto \(target)\(via) while already running on it: deadlock; use async, or run the work directly when already on the queue")
        }
    }

    mutating func syncCycles() {
        for c in model.syncCycles {
            let order = zip(c.threads, c.queues).map { "\(threadName(model.threads[$0.0])) waits on \(q($0.1))" }
            add("deadlock.sync-cycle", .error, c.time, c.time,
                c.threads.sorted().map(threadRef) + Array(Set(c.queues)).sorted().map(queueRef),
                order.joined(separator: ", ") + ", held by the first: sync cycle; make one of the syncs async, or always take the queues in one order")
        }
    }

    /// Threads a deadlock finding already names (on the current queue or in a sync cycle): what
    /// stays open on them at the end is that deadlock, not a finding of its own.
    var deadlockedThreads: Set<Int> { Set(model.deadlocks.map(\.thread) + model.syncCycles.flatMap(\.threads)) }

    mutating func unfinishedAndLongWaits() {
        let deadlocked = deadlockedThreads
        for thread in model.threads {
            for b in thread.blocked {
                let length = b.duration(traceEnd: model.endTime)
                guard length >= Thresholds.longWaitNs else { continue } // the common case: no string work
                let what = blockedWhat(b)
                let t = b.thread
                if b.end == nil {
                    guard !deadlocked.contains(t) else { continue }
                    add("wait.never-finished", .error, b.start, model.endTime, [threadRef(t)] + blockedObjects(b),
                        "\(threadName(model.threads[t])) was still blocked in \(what) \(formatDuration(length)) after it began, \(traceEnd): likely deadlock; find who should signal or release it",
                        weight: length, stack: waitStack(b))
                } else if model.threads[t].kind != .main, b.cause != .apply {
                    // concurrentPerform's caller runs iterations itself and then waits only for
                    // its peers' last ones: its length is its iterations' run time (item and
                    // queue rules), not a thread held idle (1.5 s under a loaded suite's load).
                    add("wait.long", .warning, b.start, b.end!, [threadRef(t)] + blockedObjects(b),
                        "\(threadName(model.threads[t])) blocked \(formatDuration(length)) in \(what): a blocked worker holds a thread; prefer async completion (notify, sources) to waiting",
                        weight: length, stack: waitStack(b))
                }
            }
        }
    }

    /// Items still running when the trace ended, long enough to matter: their run time is
    /// unknown (at least the rest of the trace), so the run columns leave them out.
    mutating func runningAtEnd() {
        guard stats.queues.contains(where: { ($0.runningAtEndLongestNs ?? 0) >= Thresholds.longWaitNs }) else { return }
        let deadlocked = deadlockedThreads
        for (i, item) in model.items.enumerated() where item.startTime != noTime && item.endTime == noTime {
            guard item.depth == 0, let qi = item.queue, model.endTime >= item.startTime else { continue }
            if let t = item.thread, deadlocked.contains(t) { continue }
            let length = model.endTime - item.startTime
            guard length >= Thresholds.longWaitNs else { continue }
            add("item.running-at-end", .warning, item.startTime, model.endTime, [queueRef(qi)] + itemSiteObjects(i),
                "\(itemName(i)) was still running \(traceEnd), ≥ \(formatDuration(length)) after it started\(stretchText(ofJob: i)): it held a thread throughout and the run statistics leave it out; if it waits, make the wait asynchronous, if it computes, split it into smaller items",
                weight: length)
        }
    }

    func blockedWhat(_ b: BlockedInterval) -> String {
        let call: String
        switch b.cause {
        case .sync: call = "sync onto \(q(b.object))"
        case .apply: call = "concurrentPerform/dispatch_apply"
        case .semaphore: call = "a semaphore wait"
        case .groupWait: call = "a group wait"
        case .once: call = "a dispatch_once wait"
        case .workItemWait: call = "DispatchWorkItem.wait()"
        }
        guard let s = b.site else { return call }
        // The call site: the code a sync ran is secondary to where the caller blocked.
        let site = model.sites[s]
        if let from = site.from { return call + " in \(from.name)" + (from.fileLine.map { " at \($0)" } ?? "") }
        guard site.codeIndex != nil || site.caller != 0 else { return call } // no caller recorded
        return call + " at " + model.siteDescription(s)
    }

    /// The call stack of a wait, for the finding's details.
    func waitStack(_ b: BlockedInterval) -> [String]? { b.site.flatMap(model.callStackDescription) }

    func blockedObjects(_ b: BlockedInterval) -> [FindingObject] {
        var objects: [FindingObject]
        switch b.cause {
        case .sync: objects = [queueRef(b.object)]
        case .apply: objects = model.applies[b.object].queue.map { [queueRef($0)] } ?? [] // aggregate calls per queue
        case .semaphore: objects = [semaphoreRef(b.object)]
        case .groupWait: objects = [groupRef(b.object)]
        case .once, .workItemWait: objects = []  // no tracked object; the site names the wait
        }
        if let s = b.site { objects.append(siteRef(s)) }
        return objects
    }

    /// Frame, hang and blocking rules: only for a main thread that serves events (it ran
    /// main-queue items: a run loop or dispatchMain). A command-line tool's main thread
    /// computing or waiting for its workers drops no frame.
    mutating func mainThread() {
        guard let t = stats.mainThread.thread, stats.mainThread.runsEventLoop else { return }
        let main = Int32(t)
        // Only items over a frame are reported: without any, no pass over all the items.
        let candidates = stats.mainThread.itemsOverFrame > 0 ? model.items : []
        for (i, item) in candidates.enumerated() where item.threadIndex == main && item.depth == 0 {
            guard let run = codeRunTime(i), run > Thresholds.frameNs else { continue }
            let hang = run > Thresholds.hangNs
            let objects = [threadRef(t)] + (item.queue.map { [queueRef($0)] } ?? []) + itemSiteObjects(i)
            add(hang ? "main.hang" : "main.long-item", hang ? .error : .warning, item.startTime, item.endTime, objects,
                "an item on the main thread ran \(formatDuration(run)) (\(itemName(i))), longer than \(hang ? "100 ms: the app hangs" : "a 16 ms frame"); move the work to a background queue and post the result back to main",
                weight: run)
        }
        for b in model.threads[t].blocked {
            let length = b.duration(traceEnd: model.endTime)
            if b.cause == .sync && length < Thresholds.mainSyncAllowanceNs { continue }
            add("main.blocking-call", .warning, b.start, b.end ?? model.endTime, [threadRef(t)] + blockedObjects(b),
                "the main thread blocked \(formatDuration(length)) in \(blockedWhat(b)): it cannot handle events meanwhile; use async and continue in a completion on main",
                weight: length, stack: waitStack(b))
        }
    }

    /// An item's run time, less (with --sched) the time it waited for a CPU: a loaded machine
    /// stretches every item, and the frame and hang rules judge the item's code.
    func codeRunTime(_ i: Int) -> UInt64? {
        guard let run = model.items[i].runTime else { return nil }
        guard let sched = model.sched, sched.items.indices.contains(i) else { return run }
        return run - Swift.min(run, sched.items[i].runnableNs)
    }

    mutating func threadExplosion() {
        for x in model.threadExplosions {
            add("threads.explosion", .warning, x.start, x.end, [],
                "\(x.peakWorkers) worker threads for \(model.info.ncpu) CPUs, \(x.peakBlockedWorkers) of them blocked inside items, for \(formatDuration(x.end - x.start)): thread explosion; don't block in items (use async, sources, Dispatch I/O) or bound concurrency",
                weight: UInt64(x.peakWorkers) << 32 | (x.end - x.start) >> 20)
        }
    }

    /// Not on the main queue: the main thread runs every main-queue item at its own priority,
    /// so a lower-QoS item there holds nothing at a lower priority (a long one is
    /// main.long-item). With --sched, the time the blocker waited for a CPU is the machine's,
    /// not the inversion's.
    mutating func priorityInversions() {
        for p in model.priorityInversions where model.queues[p.queue].kind != .main {
            let runnable = model.sched.map { $0.items.indices.contains(p.blocker) ? $0.items[p.blocker].runnableNs : 0 } ?? 0
            guard p.waitNs >= runnable &+ Thresholds.priorityInversionMinWaitNs else { continue }
            add("qos.priority-inversion", .warning, model.items[p.item].readyTime, model.items[p.item].startTime,
                [queueRef(p.queue)] + itemSiteObjects(p.blocker),
                "a \(qosName(p.itemQoS)) item waited \(formatDuration(p.waitNs)) on \(q(p.queue)) behind a \(qosName(p.blockerQoS)) item (\(itemName(p.blocker))): priority inversion; use one QoS per shared queue, or raise the queue's QoS",
                weight: p.waitNs)
        }
    }

    mutating func globalBarriers() {
        // Without a barrier counted on a global queue, no pass over all the items.
        guard model.queues.indices.contains(where: { model.queues[$0].kind == .global && stats.queues[$0].barrierItems > 0 })
        else { return }
        for (i, item) in model.items.enumerated() where item.isBarrier {
            guard let qi = item.queue, model.queues[qi].kind == .global else { continue }
            add("barrier.global-queue", .warning, item.enqueueTime == noTime ? item.startTime : item.enqueueTime,
                item.enqueueTime == noTime ? item.startTime : item.enqueueTime, [queueRef(qi)],
                "barrier submitted to the global queue \(q(qi)) (\(itemName(i))) runs like a plain async: barriers only work on private concurrent queues; create one with attributes: .concurrent")
        }
    }

    mutating func sources() {
        for (s, src) in model.sources.enumerated() {
            if src.activatedAt == nil && src.cancelledAt == nil {
                add("source.never-resumed", .warning, src.createdAt, model.endTime, [sourceRef(s)],
                    "\(sourceRef(s).label) was created but never resumed or activated, so its handler never runs; call resume() (or activate()) after setting the handlers")
            }
            if src.cancelledWhileSuspended, let at = src.cancelledAt, !src.runs.contains(where: { $0.kind == .cancel }) {
                add("source.cancelled-while-suspended", .warning, at, at, [sourceRef(s)],
                    "\(sourceRef(s).label) was cancelled while suspended: its cancel handler never runs; resume it after cancel()")
            }
            let st = stats.sources[s]
            if st.coalescedRunsWhileActive >= Thresholds.slowHandlerMinCoalescedRuns, handlerIsSlow(st) {
                let first = src.runs.first { $0.coalesced && !$0.afterSuspension }
                let start = first.map { model.items[$0.item].startTime } ?? src.createdAt
                let period = st.timerIntervalNs.map { " against a \(formatDuration($0)) period" } ?? ""
                add("source.handler-too-slow", .warning, start, model.endTime, [sourceRef(s)],
                    "\(sourceRef(s).label): \(st.coalescedRunsWhileActive) handler runs each covered several events (data up to \(st.maxData)); handler p50 \(formatDuration(st.handlerRun.p50Ns))\(period): the handler is slower than its events; make it cheaper or move work off its queue")
            }
        }
    }

    /// A timer's handler is slower than its events when it runs for a good share of the period;
    /// other sources (reads, data) have no period and coalescing is their only sign.
    func handlerIsSlow(_ st: SourceStats) -> Bool {
        guard let period = st.timerIntervalNs, period > 0 else { return true }
        return Double(st.handlerRun.p50Ns) >= Thresholds.slowHandlerMinShareOfPeriod * Double(period)
    }

    mutating func groups() {
        for (g, group) in model.groups.enumerated() {
            // A group the program neither created nor entered is libdispatch's own: the one
            // dispatch_block_create makes for a DispatchWorkItem is left by a tail call from
            // libdispatch that reaches the shim as if from the program.
            if group.leavesWithoutEnter > 0 && (group.createdAt != nil || group.enters > 0) {
                let at = group.firstUnbalancedLeave ?? 0
                add("group.leave-without-enter", .error, at, at, [groupRef(g)],
                    "\(groupRef(g).label): \(group.leavesWithoutEnter) leave() without a matching enter() (libdispatch crashes on this); pair every leave with one enter")
            }
            if group.outstanding > 0 {
                let start = group.rounds.last?.start ?? 0
                let unfired = group.notifies.contains { $0.fired == nil } ? " and its notify never fired" : ""
                // In a snapshot the program goes on: its groups may well be left later.
                add("group.never-left", endsMidRun ? .info : .warning, start, model.endTime, [groupRef(g)],
                    endsMidRun ? "\(groupRef(g).label): \(group.outstanding) enter() not left yet when the snapshot was taken\(unfired.isEmpty ? "" : " and its notify had not fired")"
                        : "\(groupRef(g).label): \(group.outstanding) enter() never left by the end of the trace\(unfired); call leave() on every path, including errors")
            }
        }
    }

    mutating func targetLoops() {
        for loop in model.targetLoops {
            let names = (loop.queues + [loop.queues[0]]).map(q).joined(separator: " → ")
            add("queue.target-loop", .error, loop.time, loop.time, loop.queues.sorted().map(queueRef),
                "target queues form a loop: \(names); items there never run; make the hierarchy a tree")
        }
    }

    /// An apply whose iterations never overlapped. The advice depends on where it ran: onto a
    /// serial queue it cannot overlap; onto a concurrent queue or DISPATCH_APPLY_AUTO
    /// (concurrentPerform) the pool gave it no second thread.
    mutating func applies() {
        for call in model.applies where call.iterationsRun > 1 && call.maxWidth == 1 {
            let objects = (call.queue.map { [queueRef($0)] } ?? []) + (call.site.map { [siteRef($0)] } ?? [])
            let ran = "ran its \(call.iterationsRun) iterations one at a time"
            let message: String
            if let qi = call.queue, model.queues[qi].kind == .serial {
                message = "dispatch_apply onto the serial queue \(q(qi)) \(ran): a serial queue runs one iteration at a time; pass DISPATCH_APPLY_AUTO (or a concurrent queue), or use a plain loop"
            } else {
                let what = call.queue.map { "dispatch_apply onto \(q($0))" } ?? "concurrentPerform (dispatch_apply with DISPATCH_APPLY_AUTO)"
                message = "\(what) \(ran): no worker thread joined it (the CPUs were busy, or it was nested in another apply); look at what else ran meanwhile, or use a plain loop if the iterations are small"
            }
            add("apply.no-parallelism", .info, call.begin, call.end ?? model.endTime, objects, message)
        }
    }

    /// What no recorder writes, even one that lost records: the reader's dropped records and
    /// damaged chunks, and the analysis's impossible sequences (BuildAnomalies).
    mutating func inconsistentTrace() {
        let info = model.info, a = model.anomalies
        var reasons: [String] = []
        if info.invalidEvents > 0 {
            reasons.append(inconsistentTraceMessage(info.invalidEvents) + ": records out of the trace's time range or order")
        }
        if info.damagedChunks > 0 { reasons.append("\(info.damagedChunks) damaged chunk\(info.damagedChunks == 1 ? "" : "s") (bad magic or framing) skipped") }
        if a.reusedItemIds > 0 { reasons.append("\(a.reusedItemIds) enqueues reuse an item id their thread used before") }
        if a.mismatchedEnds > 0 { reasons.append("\(a.mismatchedEnds) item ends while another item runs on the thread") }
        if a.itemsRunInTargetLoops > 0 {
            reasons.append("\(a.itemsRunInTargetLoops) items ran on queues whose targets loop (such queues never run their items)")
        }
        guard !reasons.isEmpty else { return }
        add("trace.inconsistent", .error, 0, model.endTime, [],
            reasons.joined(separator: "; ") + "; the trace was damaged or altered after recording, figures cover what could be read")
    }

    mutating func droppedEvents() {
        guard model.info.droppedEvents > 0 else { return }
        let why = model.info.dropReason.map { " (\($0))" } ?? ""
        let fix = model.info.dropReason == "disk full" ? "free space on the trace's file system (or record elsewhere with -o)"
            : "give the recorder more room"
        add("trace.dropped-events", .warning, 0, model.endTime, [],
            "\(model.info.droppedEvents) events could not be recorded\(why): statistics undercount; \(fix)")
    }
}
