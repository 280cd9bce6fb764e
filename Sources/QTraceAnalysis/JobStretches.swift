// Where a long Swift job spent its time. A job runs from one suspension of its task to the
// next; the async functions it passes through meanwhile (a callee returning to its caller, a
// switch to the generic executor or to a free actor) do not suspend it. So the function a job
// resumed in, which names it, may have returned long before the job ended: `swift build`'s
// main task resumed in SwiftPM's dependency resolver and then ran the whole 57 s build in the
// same job. The shim records each switch (ACTOR_HOP) with the function that continues after
// it: the longest stretch between them names the code that held the thread longest.
import QTraceFormat

/// A stretch of a job between two of its task's switches.
public struct JobStretch: Sendable, Equatable {
    /// The function that continued at the switch that began the stretch.
    public var resume: UInt64
    public var start: UInt64
    public var duration: UInt64
}

extension TraceModel {
    /// Swift jobs long enough for `swift.long-job` (run ≥ `longJobNs`) or
    /// `item.running-at-end` (running ≥ `longWaitNs` at the end) whose longest stretch began
    /// at a switch (not at the job's start): the function they resumed in had returned or
    /// called on by then. Item index → stretch.
    public func longJobStretches() -> [Int: JobStretch] {
        // Without switches there is no stretch to find: spare the scan of every item (1.5% of
        // `stats` on Dispatch-only traces, which ask up to three times).
        guard !actorHops.isEmpty else { return [:] }
        let jobs = longSwiftJobs()
        guard !jobs.isEmpty else { return [:] }
        let threads = Set(jobs.compactMap { items[$0].thread })
        var hopsByThread: [Int: [Int]] = [:]
        for (h, hop) in actorHops.enumerated() where threads.contains(hop.thread) { hopsByThread[hop.thread, default: []].append(h) }
        var out: [Int: JobStretch] = [:]
        for i in jobs {
            guard let thread = items[i].thread, let hops = hopsByThread[thread] else { continue }
            if let stretch = longestStretch(ofJob: i, hops: hops) { out[i] = stretch }
        }
        return out
    }

    private func longSwiftJobs() -> [Int] {
        items.indices.filter { i in
            let item = items[i]
            guard item.flags.contains(.swiftConcurrency), item.startTime != noTime, item.thread != nil else { return false }
            if item.endTime == noTime { return endTime >= item.startTime && endTime - item.startTime >= Thresholds.longWaitNs }
            return item.endTime >= item.startTime && item.endTime - item.startTime >= Thresholds.longJobNs
        }
    }

    /// The longest span between the job's start, the switches on its thread and its end; nil
    /// when it is the span from the start (the function the job resumed in held it longest).
    func longestStretch(ofJob i: Int, hops: [Int]) -> JobStretch? {
        let item = items[i]
        let end = item.endTime == noTime ? endTime : item.endTime
        // Switches inside the job: those of any task on its thread while it ran (an item run
        // inline by a sync inside it would be another task's; its switches split nothing long).
        var lo = 0, hi = hops.count
        while lo < hi { let mid = (lo + hi) / 2; if actorHops[hops[mid]].time < item.startTime { lo = mid + 1 } else { hi = mid } }
        var best: JobStretch?
        var from = item.startTime, resume: UInt64 = 0
        var k = lo
        while true {
            let next = k < hops.count && actorHops[hops[k]].time < end ? actorHops[hops[k]] : nil
            let to = next?.time ?? end
            if to > from, to - from > (best?.duration ?? 0) { best = JobStretch(resume: resume, start: from, duration: to - from) }
            guard let hop = next else { break }
            from = hop.time
            resume = hop.resume
            k += 1
        }
        guard let best, best.resume != 0 else { return nil }
        return best
    }
}
