// Actors from their hops (docs/swift-concurrency.md, "Actors"). The shim sees every
// swift_task_switch the program's code makes, whether the runtime then runs the task on the
// actor at once (it was free) or queues it (it was busy); it does not see the actor start a
// queued task. So a task's *visit* to an actor runs from its hop onto it to its next hop (back
// to the generic executor or elsewhere), and since an actor runs one task at a time, the part
// of a visit that overlaps the visits before it was spent waiting for the actor.

/// One swift_task_switch: task `taskID` asked for `executor` (0: the generic executor).
public struct ActorHop: Sendable, Equatable {
    public var time: UInt64
    public var thread: Int
    public var taskID: UInt32
    public var executor: UInt64
    public var metadata: UInt64
    public var resume: UInt64

    public init(time: UInt64, thread: Int, taskID: UInt32, executor: UInt64, metadata: UInt64, resume: UInt64) {
        self.time = time; self.thread = thread; self.taskID = taskID; self.executor = executor
        self.metadata = metadata; self.resume = resume
    }
}

/// A task's time on an actor: from its hop onto it to its next hop.
public struct ActorVisit: Sendable, Equatable {
    /// Index into `TraceStatistics.actors` / `TraceModel.actorList()`.
    public var actor: Int
    public var taskID: UInt32
    public var start: UInt64
    public var end: UInt64
    /// The part spent waiting for the actor (other visits still on it).
    public var waitNs: UInt64 = 0
    /// The code it ran on the actor (the hop's resume function).
    public var resume: UInt64

    public init(actor: Int, taskID: UInt32, start: UInt64, end: UInt64, waitNs: UInt64 = 0, resume: UInt64) {
        self.actor = actor; self.taskID = taskID; self.start = start; self.end = end
        self.waitNs = waitNs; self.resume = resume
    }
    public var runNs: UInt64 { end - start - waitNs }
}

/// Per actor: how often tasks visited, how long they ran on it and waited to get onto it.
public struct ActorStats: Sendable, Codable, Equatable {
    public var actor: Int
    /// "HitCounter 0x5555…" (type and instance); "MainActor" for the main actor.
    public var name: String
    /// The type's qualified name (Swift metadata), when the trace names it.
    public var type: String?
    public var address: String
    public var isMainActor: Bool
    /// Visits: hops onto the actor (one per job it ran for a task, inline hops included).
    public var visits: Int
    /// Distinct tasks that visited.
    public var tasks: Int
    public var runNs: UInt64
    /// Time tasks waited to get onto the actor (its contention).
    public var waitNs: UInt64
    /// Visits that waited.
    public var contendedVisits: Int
    public var wait = DurationStats()
    /// The most tasks waiting for it at once.
    public var peakQueueDepth: Int
    /// Where tasks got onto it: the hops' resume points (the code that continues on the actor:
    /// the caller's continuation around a call to a synchronous actor method), most visits first.
    public var enteredAt: [String]
}

extension TraceModel {
    /// The actors (executor identities other than the generic executor), in first-hop order.
    public func actorAddresses() -> [UInt64] {
        var seen = Set<UInt64>()
        return actorHops.compactMap { $0.executor != 0 && seen.insert($0.executor).inserted ? $0.executor : nil }
    }

    /// Every visit, per actor in start order, with its wait.
    public func actorVisits() -> [[ActorVisit]] {
        let actors = actorAddresses()
        guard !actors.isEmpty else { return [] }
        let index = Dictionary(uniqueKeysWithValues: actors.enumerated().map { ($1, $0) })
        var byTask: [UInt32: [Int]] = [:]
        for (h, hop) in actorHops.enumerated() where hop.taskID != 0 { byTask[hop.taskID, default: []].append(h) }
        var visits = [[ActorVisit]](repeating: [], count: actors.count)
        let jobs = ThreadJobs.byThread(self)
        let taskOfJob = taskIndexByJob()
        for (taskID, hops) in byTask {
            for (k, h) in hops.enumerated() {
                let hop = actorHops[h]
                guard let a = index[hop.executor],
                      let span = visitEnd(hop, next: k + 1 < hops.count ? actorHops[hops[k + 1]] : nil, jobs: jobs,
                                          taskOfJob: taskOfJob), span.end >= hop.time else { continue }
                visits[a].append(ActorVisit(actor: a, taskID: taskID, start: hop.time, end: span.end,
                                            waitNs: span.queuedNs, resume: hop.resume))
            }
        }
        return visits.map(Self.withWaits)
    }

    /// Where a visit ends: at the task's next hop, unless the task's job that hopped ended and
    /// a later job of the same task made that hop: then the task suspended on the actor (at an
    /// await, which frees the actor) when that job ended. A next hop made in a job of no task
    /// (the actor's own processing job, which ran the queued task) means the visit waited
    /// and ran until it. The main actor runs a task as the task's own job on the main queue:
    /// a next hop made there means the visit waited in the main queue until that job started
    /// (`queuedNs`) and ran until the hop.
    private func visitEnd(_ hop: ActorHop, next: ActorHop?, jobs: [Int: ThreadJobs],
                          taskOfJob: [Int: Int]) -> (end: UInt64, queuedNs: UInt64)? {
        let hopJob = jobs[hop.thread]?.job(at: hop.time)
        let hopJobEnd = hopJob.flatMap { items[$0].ended }
        guard let next else { return hopJobEnd.map { ($0, 0) } }
        let nextJob = jobs[next.thread]?.job(at: next.time)
        if let nextJob, nextJob != hopJob, isOnMainQueue(nextJob), !(hopJob.map(isOnMainQueue) ?? false),
           let started = items[nextJob].started, started >= hop.time {
            return (next.time, started - hop.time)
        }
        if let hopJob, let nextJob, nextJob != hopJob, taskOfJob[hopJob] != nil, taskOfJob[nextJob] == taskOfJob[hopJob],
           let hopJobEnd, hopJobEnd <= next.time {
            return (hopJobEnd, 0)
        }
        return (next.time, 0)
    }

    /// A serial actor runs one visit at a time: the part of a visit before the earlier ones
    /// left was waiting.
    static func withWaits(_ visits: [ActorVisit]) -> [ActorVisit] {
        var sorted = visits.sorted { ($0.start, $0.taskID) < ($1.start, $1.taskID) }
        var freeAt: UInt64 = 0
        for v in sorted.indices {
            let visit = sorted[v]
            if freeAt > visit.start {
                sorted[v].waitNs = Swift.max(visit.waitNs, Swift.min(freeAt, visit.end) - visit.start)
            }
            freeAt = Swift.max(freeAt, visit.end)
        }
        return sorted
    }


    /// How every view names an actor: its type's short name and its address.
    public func actorName(_ address: UInt64, metadata: UInt64) -> (name: String, type: String?, isMain: Bool) {
        let type = actorTypeNames[metadata].flatMap { $0.isEmpty ? nil : $0 }
        // "Hummingbird.HTTP1Channel<Hummingbird.Router<…>>" → "HTTP1Channel".
        let short = type.map { name -> String in
            let outer = name.prefix { $0 != "<" }
            return String(outer.split(separator: ".").last ?? outer)
        }
        // Swift 6.2+ hops to the main actor name its executor, DispatchMainExecutor.
        if short == "MainActor" || short == "DispatchMainExecutor" { return ("MainActor", type, true) }
        return ((short ?? "actor") + " 0x" + String(address, radix: 16), type, false)
    }
}

extension ActorStats {
    static func all(_ model: TraceModel) -> [ActorStats] {
        let visitsByActor = model.actorVisits()
        guard !visitsByActor.isEmpty else { return [] }
        let addresses = model.actorAddresses()
        var metadata: [UInt64: UInt64] = [:]
        for hop in model.actorHops where hop.executor != 0 && hop.metadata != 0 { metadata[hop.executor] = hop.metadata }
        return visitsByActor.enumerated().map { a, visits in
            let address = addresses[a]
            let naming = model.actorName(address, metadata: metadata[address] ?? 0)
            let waits = DurationRecorder()
            var entryCounts: [String: Int] = [:]
            for v in visits {
                waits.record(v.waitNs)
                let entry = model.actorCode[v.resume]?.described ?? "0x" + String(v.resume, radix: 16)
                entryCounts[entry, default: 0] += 1
            }
            return ActorStats(
                actor: a, name: naming.name, type: naming.type, address: "0x" + String(address, radix: 16),
                isMainActor: naming.isMain, visits: visits.count, tasks: Set(visits.map(\.taskID)).count,
                runNs: visits.reduce(0) { $0 + $1.runNs }, waitNs: visits.reduce(0) { $0 + $1.waitNs },
                contendedVisits: visits.filter { $0.waitNs > 0 }.count, wait: waits.stats,
                peakQueueDepth: peakDepth(visits),
                enteredAt: entryCounts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5).map(\.key))
        }.sorted { ($0.runNs + $0.waitNs, $1.actor) > ($1.runNs + $1.waitNs, $0.actor) }
    }

    /// The most visits waiting at once: overlapping visits beyond the one on the actor.
    static func peakDepth(_ visits: [ActorVisit]) -> Int {
        var events: [(UInt64, Int)] = []
        for v in visits where v.end > v.start { events.append((v.start, 1)); events.append((v.end, -1)) }
        events.sort { ($0.0, $0.1) < ($1.0, $1.1) }  // an end before a start at the same time
        var depth = 0, peak = 0
        for (_, delta) in events { depth += delta; peak = Swift.max(peak, depth) }
        return Swift.max(0, peak - 1)
    }
}
