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

extension RuleContext {
    /// `swift.blocking-in-async`: a Swift job blocked in a Dispatch wait, or ran a `sync` that
    /// held its thread, for at least `blockingInAsyncNs`. One finding per call site.
    mutating func swiftConcurrency() {
        actorContention()
        guard !model.tasks.isEmpty else { return }
        let jobs = ThreadJobs.byThread(model)
        guard !jobs.isEmpty else { return }
        let taskOfJob = model.taskIndexByJob()
        for (t, thread) in model.threads.enumerated() where thread.kind != .main {
            guard let threadJobs = jobs[t] else { continue }
            for b in thread.blocked {
                let length = b.duration(traceEnd: model.endTime)
                guard length >= Thresholds.blockingInAsyncNs, let job = threadJobs.job(at: b.start) else { continue }
                // blockedWhat names the call site already.
                blockingInAsync(job: job, task: taskOfJob[job], thread: t, start: b.start, length: length,
                                what: blockedWhat(b), site: b.site, sayWhere: false)
            }
        }
        for (i, item) in model.items.enumerated() where item.kind.isSynchronous {
            guard let t = item.thread, model.threads[t].kind != .main, let start = item.enqueued ?? item.started,
                  let end = item.ended, end >= start, end - start >= Thresholds.blockingInAsyncNs,
                  let job = jobs[t]?.job(at: start), job != i else { continue }
            let onto = item.queue.map { "sync onto \(q($0))" } ?? "a sync"
            blockingInAsync(job: job, task: taskOfJob[job], thread: t, start: start, length: end - start,
                            what: onto, site: item.site, sayWhere: true)
        }
    }

    /// `swift.actor-contention`: tasks waited for an actor longer than they ran on it.
    mutating func actorContention() {
        for actor in stats.actors where actor.waitNs >= Thresholds.actorContentionNs && actor.waitNs > actor.runNs {
            let entered = actor.enteredAt.first.map { " (entered at \($0))" } ?? ""
            add("swift.actor-contention", .warning, model.startTime, model.endTime,
                [FindingObject(kind: .actor, index: actor.actor, label: actor.name)],
                "tasks waited \(formatDuration(actor.waitNs)) in all to get onto \(actor.name) (\(actor.contendedVisits) of \(actor.visits) visits waited, up to \(actor.peakQueueDepth) at once), longer than they ran on it (\(formatDuration(actor.runNs))): the actor runs one at a time; keep what runs on it short\(entered), move work that needs no isolation out of it, or split its state",
                weight: actor.waitNs)
        }
    }

    private mutating func blockingInAsync(job: Int, task: Int?, thread t: Int, start: UInt64, length: UInt64,
                                          what: String, site: Int?, sayWhere: Bool) {
        let at = sayWhere ? site.map { " (\(model.siteDescription($0)))" } ?? "" : ""
        let code = model.code(ofItem: job).map { " in " + ($0.what?.described ?? $0.name) } ?? ""
        let taskText = task.map { " (task \(model.tasks[$0].id))" } ?? ""
        let objects = (site.map { [siteRef($0)] } ?? []) + [itemRef(job)]
        add("swift.blocking-in-async", .warning, start, start + length, site.map { [siteRef($0)] } ?? objects,
            "a Swift job\(code)\(taskText) blocked \(formatDuration(length)) in \(what)\(at), holding one of the cooperative pool's threads (as many as CPUs): other tasks cannot run on it meanwhile; await instead (an async API, a continuation, or move the blocking work to a Dispatch queue and resume from it)",
            weight: length)
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
