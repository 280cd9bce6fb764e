// Queue rows taken in item order, each queue's tally alive only from its first item to its
// last. The pass over the items counted every queue's items, so a queue's last item is known
// when it comes, and its row is finished then. Queues that live and die in a stretch of the
// trace (a starfish lap's 1,000 queues; sf10 has ten laps of them) never hold more than one
// stretch's tallies, where grouping the items by queue read each item again at random (a
// cache miss per item, the most costly part of sf10's queue statistics).
import QTraceFormat

extension QueueStats {
    /// Every queue's row, or nil when the tallies alive at once would need more than `budget`
    /// bytes (queues whose items span the trace: the caller groups the items by queue then),
    /// or past `maxQueuesAsTheyEnd` queues.
    static func asQueuesEnd(_ model: TraceModel, _ pass: StatisticsItemPass,
                            budget: Int = StatisticsItemPass.itemOrderBudget) -> QueueStatsTable? {
        guard model.queues.count <= maxQueuesAsTheyEnd else { return nil }
        var out = QueueStatsTable(identitiesFrom: model.queues)
        out.reserveCapacity(model.queues.count)
        // A queue with items holds its bare identity (no packed figures) until its row is set.
        for q in model.queues.indices {
            out.append(pass.itemsPerQueue[q] > 0 ? QueueStats(identityOf: model.queues[q], q) : QueueStats(model, q))
        }
        var live = LiveTallies(model, pass, budget: budget)
        defer { live.release() }
        let complete: Bool = model.items.withUnsafeBufferPointer { items in
            for item in items where item.queueIndex >= 0 {
                let q = Int(item.queueIndex)
                guard let s = live.slot(of: q) else { return false }
                live.tallies[s].add(ItemFacts(item))
                guard live.tallies[s].items == pass.itemsPerQueue[q] else { continue }
                var row = QueueStats(model, q)
                row.apply(live.tallies[s], threadsServed: pass.threadsServed[q], model)
                out[q] = row
                live.close(q, s)
            }
            return true
        }
        return complete ? out : nil
    }

    /// Past this many queues, the rows come from the items grouped by queue: on 900k queues
    /// (bench-scaling's queue-heavy trace) this way cost 0.3-0.6 s more than grouping and
    /// raised the peak by 21 MB (here each row is stored twice, its bare identity first).
    static let maxQueuesAsTheyEnd = 1 << 16

    /// The tallies of the queues between their first and last item. A closed tally is reused
    /// with its buffers (no allocation per queue); the bytes each may reach (from the item
    /// counts of the queues it served) stay under a budget.
    struct LiveTallies {
        /// Per queue: its tally's index, -1 while it has none.
        let slots: ColumnBuffer<Int32>
        let tallies = ColumnBuffer<Accumulation>(capacity: 64)
        /// Per tally: the most bytes its recordings may hold (`bytes(items:)` of its largest queue).
        let tallyBytes = ColumnBuffer<Int>(capacity: 64)
        /// Tallies closed, to be reused.
        var free: [Int] = []
        var bytes = 0
        let budget: Int
        let itemsPerQueue: ColumnBuffer<Int>
        let traceEnd: UInt64

        init(_ model: TraceModel, _ pass: StatisticsItemPass, budget: Int) {
            slots = ColumnBuffer(count: model.queues.count, repeating: -1)
            itemsPerQueue = pass.itemsPerQueue
            traceEnd = model.endTime
            self.budget = budget
        }

        /// Queue q's tally, opened at its first item; nil when opening it would pass the budget.
        @inline(__always)
        mutating func slot(of q: Int) -> Int? {
            let s = slots[q]
            return s >= 0 ? Int(s) : open(q)
        }

        private mutating func open(_ q: Int) -> Int? {
            let needed = Self.bytes(items: itemsPerQueue[q])
            let s: Int
            if let reused = free.popLast() {
                s = reused
                bytes += Swift.max(needed - tallyBytes[s], 0)
                tallyBytes[s] = Swift.max(tallyBytes[s], needed)
            } else {
                s = tallies.count
                bytes += needed
                tallies.append(Accumulation(traceEnd: traceEnd))
                tallyBytes.append(needed)
            }
            guard bytes <= budget else { return nil }
            slots[q] = Int32(s)
            return s
        }

        /// Queue q's tally, after its last item: ready for another queue.
        mutating func close(_ q: Int, _ s: Int) {
            tallies[s].reset()
            free.append(s)
        }

        func release() {
            for s in 0..<tallies.count { tallies[s].release() }
        }

        /// At most what a queue of `items` items makes its three recordings hold: up to
        /// `exactLimit` values of 8 bytes, then a bucket of 2 bytes per value in a buffer grown
        /// by doubling, past `sortedLimit` a count per bucket.
        static func bytes(items: Int) -> Int {
            let values = 8 * Swift.min(items, DurationRecorder.exactLimit)
            let buckets = items > DurationRecorder.exactLimit ? 4 * Swift.min(items, DurationRecorder.sortedLimit) : 0
            let counts = items > DurationRecorder.sortedLimit ? 4 * HDRLayout.bucketCount : 0
            return 3 * (values + buckets + counts)
        }
    }
}
