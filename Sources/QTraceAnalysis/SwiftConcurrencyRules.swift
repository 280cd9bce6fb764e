// The cooperative pool's rules (docs/findings.md, "Swift Concurrency"): code running as a Swift
// job must never block, since the pool has only as many threads as CPUs; a thread blocked in a
// semaphore, a group wait or a long `sync` is a pool thread no other task can use.
import QTraceFormat

extension Thresholds {
    /// A Swift job blocked at least this long in one call held its pool thread†: shorter waits
    /// (an uncontended lock taken through Dispatch) are noise, longer ones real blocking.
    public static let blockingInAsyncNs: UInt64 = 100_000
    /// Tasks waited at least this long in all for one actor, and longer than they ran on it:
    /// contention†.
    public static let actorContentionNs: UInt64 = 1_000_000
    /// Jobs waited at least this long in all while every pool thread was held blocked: pool
    /// starvation†.
    public static let poolStarvationNs: UInt64 = 10_000_000
    /// A job that ran this long without suspending (its blocking calls not counted: they have a
    /// rule of their own)†: far above what a loaded machine adds to a short job.
    public static let longJobNs: UInt64 = 100_000_000
}

/// The Swift jobs of one thread, by start time, to find the job a moment falls in.
struct ThreadJobs {
    private var starts: [UInt64] = []
    private var ends: [UInt64] = []
    private var items: [Int] = []

    static func byThread(_ model: TraceModel) -> [Int: ThreadJobs] {
        var out: [Int: ThreadJobs] = [:]
        for (i, item) in model.items.enumerated() where item.flags.contains(.swiftConcurrency) {
            guard let t = item.thread, let start = item.started else { continue }
            out[t, default: ThreadJobs()].append(start, item.ended ?? model.endTime, i)
        }
        for t in out.keys { out[t]!.sort() }
        return out
    }

    private mutating func append(_ start: UInt64, _ end: UInt64, _ item: Int) {
        starts.append(start); ends.append(end); items.append(item)
    }

    private mutating func sort() {
        let order = starts.indices.sorted { starts[$0] < starts[$1] }
        starts = order.map { starts[$0] }; ends = order.map { ends[$0] }; items = order.map { items[$0] }
    }

    /// The job running at `time`, if any (jobs of one thread do not overlap).
    func job(at time: UInt64) -> Int? {
        var low = 0, high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0, time < ends[low - 1] else { return nil }
        return items[low - 1]
    }
}

extension TraceModel {
    /// A Swift job that ran on a cooperative-pool thread: not the main actor's (the main queue's,
    /// which a dispatchMain() program drains on a worker thread) and not on the main thread.
    func isPoolJob(_ item: Int) -> Bool {
        guard let t = items[item].thread, threads[t].kind != .main else { return false }
        return !isOnMainQueue(item)
    }

    /// An item of the main queue (for a Swift job: the main actor's).
    func isOnMainQueue(_ item: Int) -> Bool {
        items[item].queue.map { queues[$0].kind == .main } ?? false
    }
}

extension RuleContext {
    /// `swift.blocking-in-async`: a Swift job blocked in a Dispatch wait, or ran a `sync` that
    /// held its thread, for at least `blockingInAsyncNs`. One finding per call site.
    mutating func swiftConcurrency() {
        actorContention()
        continuationsNeverResumed()
        guard !model.tasks.isEmpty else { return }
        let jobs = ThreadJobs.byThread(model)
        guard !jobs.isEmpty else { return }
        let taskOfJob = model.taskIndexByJob()
        var held: [Span] = []  // pool threads held by a blocking call, for pool starvation
        for (t, thread) in model.threads.enumerated() where thread.kind != .main {
            guard let threadJobs = jobs[t] else { continue }
            for b in thread.blocked {
                let length = b.duration(traceEnd: model.endTime)
                guard length >= Thresholds.blockingInAsyncNs, let job = threadJobs.job(at: b.start),
                      model.isPoolJob(job) else { continue }
                held.append(Span(start: b.start, end: b.start + length))
                // blockedWhat names the call site already.
                blockingInAsync(job: job, task: taskOfJob[job], thread: t, start: b.start, length: length,
                                what: blockedWhat(b), site: b.site, sayWhere: false, stack: waitStack(b))
            }
        }
        for (i, item) in model.items.enumerated() where item.kind.isSynchronous {
            guard let t = item.thread, model.threads[t].kind != .main, let start = item.enqueued ?? item.started,
                  let end = item.ended, end >= start, end - start >= Thresholds.blockingInAsyncNs,
                  let job = jobs[t]?.job(at: start), job != i, model.isPoolJob(job) else { continue }
            held.append(Span(start: start, end: end))
            let onto = item.queue.map { "sync onto \(q($0))" } ?? "a sync"
            blockingInAsync(job: job, task: taskOfJob[job], thread: t, start: start, length: end - start,
                            what: onto, site: item.site, sayWhere: true)
        }
        poolStarvation(held: held)
        longJobs(taskOfJob: taskOfJob)
    }

    /// `swift.pool-starvation`: while every pool thread (as many as CPUs) was held by a
    /// blocking call in async code, jobs waited to run. Once per process: the sites are the
    /// blocking-in-async findings'.
    mutating func poolStarvation(held: [Span]) {
        let cpus = Swift.max(1, Int(model.info.ncpu))
        let starved = SpanCoverage.atLeast(cpus, of: held)
        guard !starved.isEmpty else { return }
        var waitedNs: UInt64 = 0, jobsWaiting = 0
        for item in model.items where item.flags.contains(.swiftConcurrency) {
            guard let ready = item.ready, let start = item.started, start > ready else { continue }
            let overlap = SpanCoverage.overlap(Span(start: ready, end: start), with: starved)
            if overlap > 0 { waitedNs += overlap; jobsWaiting += 1 }
        }
        guard waitedNs >= Thresholds.poolStarvationNs else { return }
        let starvedNs = starved.reduce(0) { $0 + $1.duration }
        add("swift.pool-starvation", .warning, starved.first!.start, starved.last!.end, [],
            "for \(formatDuration(starvedNs)) every cooperative-pool thread (\(cpus), one per CPU) was blocked in async code (see swift.blocking-in-async) while \(jobsWaiting) Swift jobs waited \(formatDuration(waitedNs)) in all to run: pool starvation; no task can make progress while its threads wait, and what they wait for may itself need a pool thread (a deadlock); never block in async code",
            weight: waitedNs)
    }

    /// `swift.long-job`: a job that ran `longJobNs` or more without suspending (time blocked
    /// in Dispatch calls left out; with --sched, only its time on a CPU). One finding per code.
    mutating func longJobs(taskOfJob: [Int: Int]) {
        var blockedInThread: [Int: [BlockedInterval]] = [:]
        for (i, item) in model.items.enumerated() where item.flags.contains(.swiftConcurrency) {
            guard let run = codeRunTime(i), run >= Thresholds.longJobNs, model.isPoolJob(i), let t = item.thread,
                  let start = item.started, let end = item.ended else { continue }
            if blockedInThread[t] == nil { blockedInThread[t] = model.threads[t].blocked }
            let blocked = blockedInThread[t]!.reduce(UInt64(0)) { sum, b in
                let e = Swift.min(end, b.end ?? model.endTime), s = Swift.max(start, b.start)
                return sum + (e > s ? e - s : 0)
            }
            // With --sched, what it computed is its time on a CPU: time asleep in the kernel
            // (a read, a lock, a build run synchronously) is blocking the shim does not see.
            // Only where the scheduler's states cover most of the job: perf drops events on a
            // loaded machine, and a thread without states would read as computing nothing.
            let split = model.sched.flatMap { $0.items.indices.contains(i) ? $0.items[i] : nil }
            let computing = split.flatMap { $0.knownNs * 2 >= run ? $0.runningNs : nil }
                ?? (run > blocked ? run - blocked : 0)
            guard computing >= Thresholds.longJobNs else { continue }
            add("swift.long-job", .warning, start, end, itemSiteObjects(i).isEmpty ? [itemRef(i)] : itemSiteObjects(i),
                "\(aSwiftJob(i, task: taskOfJob[i])) ran \(formatDuration(computing)) without suspending\(stretchText(ofJob: i)), holding a cooperative-pool thread (one per CPU) the whole time: other tasks wait; split the work (await Task.yield() between parts) or run it on a Dispatch queue and resume from it",
                weight: computing)
        }
    }

    /// `swift.actor-contention`: tasks waited for an actor longer than they ran on it.
    mutating func actorContention() {
        // Contention is tasks queued behind each other: a main-actor wait with no other visit
        // on the actor is the main thread busy elsewhere (swift build's one 2.5 ms at startup).
        for actor in stats.actors where actor.waitNs >= Thresholds.actorContentionNs && actor.waitNs > actor.runNs
            && actor.peakQueueDepth >= 1 {
            let entered = actor.enteredAt.first.map { " (entered at \($0))" } ?? ""
            add("swift.actor-contention", .warning, model.startTime, model.endTime,
                [FindingObject(kind: .actor, index: actor.actor, label: actor.name)],
                "tasks waited \(formatDuration(actor.waitNs)) in all to get onto \(actor.name) (\(actor.contendedVisits) of \(actor.visits) visits waited, up to \(actor.peakQueueDepth) at once), longer than they ran on it (\(formatDuration(actor.runNs))): the actor runs one at a time; keep what runs on it short\(entered), move work that needs no isolation out of it, or split its state",
                weight: actor.waitNs)
        }
    }

    private mutating func blockingInAsync(job: Int, task: Int?, thread t: Int, start: UInt64, length: UInt64,
                                          what: String, site: Int?, sayWhere: Bool, stack: [String]? = nil) {
        let at = sayWhere ? site.map { " (\(model.siteDescription($0)))" } ?? "" : ""
        let objects = (site.map { [siteRef($0)] } ?? []) + [itemRef(job)]
        add("swift.blocking-in-async", .warning, start, start + length, site.map { [siteRef($0)] } ?? objects,
            "\(aSwiftJob(job, task: task)) blocked \(formatDuration(length)) in \(what)\(at), holding one of the cooperative pool's threads (as many as CPUs): other tasks cannot run on it meanwhile; await instead (an async API, a continuation, or move the blocking work to a Dispatch queue and resume from it)",
            weight: length, stack: stack)
    }

    /// "a Swift job (task 26, resumed in f() at file.swift:32)"; without code identity, the
    /// item's reference in place of the function. The function a job resumed in may be a
    /// library's (NIO's continuation helper, which then returned into the handler that blocked
    /// or computed): it is said as "resumed in", and the finding's own site or stretch says
    /// where the time went.
    private func aSwiftJob(_ job: Int, task: Int?) -> String {
        let code = model.code(ofItem: job).map { "resumed in " + ($0.what?.described ?? $0.name) }
            ?? itemReference(model, job)
        return "a Swift job (" + ([task.map { "task \(model.tasks[$0].id)" }, code].compactMap { $0 }).joined(separator: ", ") + ")"
    }
}

extension TraceModel {
    /// Item index → task index, for the items that are Swift jobs.
    public func taskIndexByJob() -> [Int: Int] {
        var out: [Int: Int] = [:]
        for (t, task) in tasks.enumerated() { for i in task.jobs { out[i] = t } }
        return out
    }
}

/// Where at least k of a set of spans overlap, and how much of a span falls in such places.
enum SpanCoverage {
    /// The maximal spans covered by at least `k` of `spans`, in time order.
    static func atLeast(_ k: Int, of spans: [Span]) -> [Span] {
        guard spans.count >= k else { return [] }
        var events: [(UInt64, Int)] = []
        for s in spans where s.end > s.start { events.append((s.start, 1)); events.append((s.end, -1)) }
        events.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        var depth = 0, openedAt: UInt64 = 0
        var out: [Span] = []
        for (time, delta) in events {
            let before = depth
            depth += delta
            if before < k && depth >= k { openedAt = time }
            if before >= k && depth < k && time > openedAt { out.append(Span(start: openedAt, end: time)) }
        }
        return out
    }

    /// How much of `span` lies in `covered` (sorted, disjoint).
    static func overlap(_ span: Span, with covered: [Span]) -> UInt64 {
        var total: UInt64 = 0
        for c in covered where c.end > span.start && c.start < span.end {
            total += Swift.min(c.end, span.end) - Swift.max(c.start, span.start)
        }
        return total
    }
}

extension RuleContext {
    /// `swift.continuation-never-resumed`: a task suspended on a continuation and showed no
    /// sign of life after it (no job, hop or continuation of its own) until the trace ended.
    /// Not in a flight-recorder snapshot: the program went on after it.
    mutating func continuationsNeverResumed() {
        guard !model.continuations.isEmpty, !endsMidRun else { return }
        var lastSeen: [UInt32: UInt64] = [:]
        for task in model.tasks {
            let last = task.jobs.compactMap { model.items[$0].enqueued ?? model.items[$0].started }.max() ?? 0
            lastSeen[task.id] = Swift.max(lastSeen[task.id] ?? 0, last)
        }
        for hop in model.actorHops { lastSeen[hop.taskID] = Swift.max(lastSeen[hop.taskID] ?? 0, hop.time) }
        var madeAt: [UInt64: Int] = [:]
        var lastAwait: [UInt32: ContinuationEvent] = [:]
        for c in model.continuations {
            if !c.awaited { if let s = c.site { madeAt[c.context] = s } } else { lastAwait[c.taskID] = c }
            lastSeen[c.taskID] = Swift.max(lastSeen[c.taskID] ?? 0, c.time)
        }
        for (taskID, c) in lastAwait.sorted(by: { $0.key < $1.key }) where c.suspends && taskID != 0 {
            guard (lastSeen[taskID] ?? 0) <= c.time else { continue }
            let site = madeAt[c.context]
            let at = site.map { " made in " + model.siteDescription($0) } ?? ""
            let waited = model.endTime > c.time ? model.endTime - c.time : 0
            add("swift.continuation-never-resumed", .warning, c.time, model.endTime, site.map { [siteRef($0)] } ?? [],
                "task \(taskID) awaited a continuation\(at) and was still suspended on it \(traceEnd), \(formatDuration(waited)) later: nothing resumed it; every path of the callback must resume it exactly once (a lost callback, an early return, an error path)",
                weight: waited)
        }
    }
}
