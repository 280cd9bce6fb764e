// Report inputs built by hand, for the encoder's edge cases only (an item that never
// started, a stats table of odd values, strings a decoder could mangle): a few objects each,
// too odd or too small for a trace. The writer refuses an input without the analysis' figures,
// so these get them from the analysis' own functions. Everything else goes through a trace
// and the analysis (SyntheticReport).
import QTraceAnalysis
import QTraceFormat
import QTraceViewModel

public enum HandBuiltInput {
    /// Sets the figures the analysis gives a real report (docs/report-data.md, Definitions), by
    /// the analysis' own functions over the input's items and blocked intervals: each item's
    /// blocked time inside it, each thread's items, busy and blocked time (`BlockedInside`),
    /// each queue's items, busy time and share (`busyTime`, `share`), the target-queue forest.
    public static func setAnalysisFigures(_ input: inout ReportInput) {
        let items = input.items, traceEnd = max(0, input.meta.durationNs)
        var runs: [BlockedInside.Run] = []
        var queueRuns = [[Span]](repeating: [], count: input.queues.count)
        var queueItems = [Int](repeating: 0, count: input.queues.count)
        var threadItems = [Int](repeating: 0, count: input.threads.count)
        runs.reserveCapacity(items.count)
        for i in 0..<items.count {
            let q = Int(items.queue[i]), t = Int(items.thread[i]), start = items.startNs[i]
            if queueItems.indices.contains(q) { queueItems[q] += 1 }
            guard start >= 0 else { runs.append(BlockedInside.Run(thread: -1, start: 0, end: 0)); continue }
            if threadItems.indices.contains(t) { threadItems[t] += 1 }
            let run = Span(start: UInt64(start), end: UInt64(max(start, items.endNs[i] < 0 ? traceEnd : items.endNs[i])))
            runs.append(BlockedInside.Run(thread: t, start: run.start, end: run.end))
            if queueRuns.indices.contains(q) { queueRuns[q].append(run) }
        }
        let waits = input.blocked.map {
            BlockedInside.Wait(thread: $0.thread, start: UInt64($0.startNs), end: UInt64(max($0.startNs, $0.endNs)), cause: $0.cause.rawValue)
        }
        let frames = BlockedInside(runs: runs, waits: waits, threads: input.threads.count)
        input.items.blockedInsideNs = frames.ns.map { Int64(clamping: $0) }
        input.items.blockedInsideCauses = frames.causeMasks
        for t in input.threads.indices {
            (input.threads[t].items, input.threads[t].busyNs) = (threadItems[t], Int64(clamping: frames.threadBusyNs[t]))
            input.threads[t].blockedNs = Int64(clamping: frames.threadBlockedNs[t])
        }
        for q in input.queues.indices {
            let busy = busyTime(queueRuns[q])
            (input.queues[q].items, input.queues[q].busyNs) = (queueItems[q], Int64(clamping: busy))
            input.queues[q].busyShare = share(busy, of: UInt64(traceEnd))
        }
        input.queueTree = QueueTreeNode.forest(input.queues.map(forestQueue)).map {
            ReportQueueTreeNode(queue: $0.queue, parent: $0.parent ?? -1, subtreeBusyNs: Int64(clamping: $0.subtreeBusyNs))
        }
    }

    /// What the analysis' forest needs of a queue with its figures set.
    static func forestQueue(_ q: ReportQueue) -> QueueTreeNode.Queue {
        let kind: QueueKind = switch q.kind {
        case .serial: .serial
        case .concurrent: .concurrent
        case .main: .main
        case .global: .global
        }
        return QueueTreeNode.Queue(target: q.targetIndex >= 0 ? q.targetIndex : nil, kind: kind,
                                   qos: QoSClass.allCases.first { $0.name == q.qosName } ?? .unspecified, label: q.label,
                                   items: q.items, busyNs: UInt64(max(0, q.busyNs)))
    }
}
