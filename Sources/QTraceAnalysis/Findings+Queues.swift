// The queue rules: a backlog that grows without bound, and items too small for their
// dispatch cost. Each names the code that fed the queue (its most frequent enqueue site), so
// that the same rule on queues fed by one line (a benchmark's 1000 queues, created anew each
// lap) reads as one finding with a count.
import QTraceFormat

extension RuleContext {
    mutating func queues() {
        var candidates: [(queue: Int, rule: QueueRule)] = []
        for qi in model.queues.indices {
            if unboundedBacklog(qi) != nil { candidates.append((qi, .backlog)) }
            if itemsTooSmall(qi) { candidates.append((qi, .tooSmall)) }
        }
        guard !candidates.isEmpty else { return }
        let sites = feedingSites(Set(candidates.map(\.queue)))
        for (qi, rule) in candidates {
            let objects = [queueRef(qi)] + (sites[qi].map { [siteRef($0)] } ?? [])
            switch rule {
            case .backlog: addUnboundedBacklog(qi, objects)
            case .tooSmall: addItemsTooSmall(qi, objects)
            }
        }
    }

    enum QueueRule { case backlog, tooSmall }

    /// The code site that enqueued most items onto each of `queues` (one pass over the items).
    func feedingSites(_ queues: Set<Int>) -> [Int: Int] {
        var counts: [Int: [Int: Int]] = [:]
        for item in model.items {
            guard let qi = item.queue, let s = item.site, queues.contains(qi) else { continue }
            counts[qi, default: [:]][s, default: 0] += 1
        }
        // Most items, then the lowest site index: deterministic.
        return counts.mapValues { bySite in bySite.max { ($0.value, $1.key) < ($1.value, $0.key) }!.key }
    }

    func unboundedBacklog(_ qi: Int) -> BacklogEpisode? {
        guard let e = model.queues[qi].longestBacklogEpisode else { return nil }
        let end = e.end ?? model.endTime
        return end - e.start >= Thresholds.unboundedBacklogMinNs && e.peak >= Thresholds.unboundedBacklogMinDepth ? e : nil
    }

    mutating func addUnboundedBacklog(_ qi: Int, _ objects: [FindingObject]) {
        guard let e = unboundedBacklog(qi) else { return }
        let end = e.end ?? model.endTime
        let seconds = Double(end - e.start) / 1e9
        let inRate = Double(e.enqueued) / seconds, outRate = Double(e.started) / seconds
        add("queue.unbounded-backlog", .warning, e.start, end, objects,
            "\(q(qi)) had a backlog for \(formatDuration(end - e.start)), up to \(e.peak) items (\(formatRate(inRate)) in, \(formatRate(outRate)) out): unbounded backlog; throttle producers (a semaphore) or coalesce work (a data source)",
            weight: UInt64(e.peak))
    }

    func itemsTooSmall(_ qi: Int) -> Bool {
        let st = stats.queues[qi]
        return st.completed >= Thresholds.tinyItemsMinCount && st.wait.count > 0
            && st.run.p50Ns < Thresholds.tinyItemsRunToWaitFactor * st.wait.p50Ns
    }

    mutating func addItemsTooSmall(_ qi: Int, _ objects: [FindingObject]) {
        let st = stats.queues[qi]
        add("queue.items-too-small", .info, 0, model.endTime, objects,
            "\(q(qi)): \(st.completed) items with median run \(formatDuration(st.run.p50Ns)) against median wait \(formatDuration(st.wait.p50Ns)): items too small for their dispatch cost; batch work into fewer, larger items",
            weight: UInt64(st.completed))
    }
}
