// Work items prepared for drawing: sorted by start time, with the row each one takes on its
// thread lane (nesting depth: a sync item runs inside its caller's item) and on its queue
// lane (running and pending rows, assigned greedily so that boxes in one row never overlap).

/// Flags stored per item in the report.
package struct ItemFlags {
    package static let neverStarted: UInt8 = 1
    package static let neverFinished: UInt8 = 2
}

/// How many rows a lane shows at most; deeper nesting or wider concurrency shares the last row.
package enum Rows {
    package static let thread = 4
    package static let queueRunning = 8
    package static let queuePending = 3
}

package struct ItemLayout {
    /// Sorted row -> index in `ReportInput.items`.
    package let order: [Int32]
    /// Index in `ReportInput.items` -> sorted row.
    package let rank: [Int32]
    /// Times in sorted order, with missing ones filled in (see `effectiveTimes`).
    package let enqueue: [Int64]
    package let start: [Int64]
    package let end: [Int64]
    package let flags: [UInt8]
    package let depth: [UInt8]
    package let runSlot: [UInt8]
    package let pendingSlot: [UInt8]
    /// The last instant of the trace.
    package let traceEnd: Int64

    /// `processEnds`: per item, where its process's part of the timeline ends (see
    /// `processEnds(of:)`); empty, or `.max`, for the report's end.
    package init(_ items: ReportItems, traceEnd: Int64, processEnds: [Int64] = []) {
        var items = items
        self.init(taking: &items, traceEnd: traceEnd, processEnds: processEnds)
    }

    /// The same, taking the items' times (`items` keeps every other column): they are made
    /// effective in place and sorted one column at a time, so that only one of them ever exists
    /// twice (the unsorted copies of all three cost 360 MiB above the model's peak at 20M
    /// items). Freed as they go only if `items` held the only reference to them.
    package init(taking items: inout ReportItems, traceEnd: Int64, processEnds: [Int64] = []) {
        let n = items.count
        var lastTime = traceEnd
        for i in 0..<n {
            lastTime = max(lastTime, items.enqueueNs[i], items.startNs[i], items.endNs[i])
        }
        var (enqueue, start, end) = ([Int64](), [Int64](), [Int64]())
        swap(&enqueue, &items.enqueueNs)
        swap(&start, &items.startNs)
        swap(&end, &items.endNs)
        var flags = [UInt8](repeating: 0, count: n)
        for i in 0..<n {
            let limit = processEnds.indices.contains(i) ? min(lastTime, processEnds[i]) : lastTime
            let t = ItemLayout.effectiveTimes(enqueue: enqueue[i], start: start[i], end: end[i], traceEnd: limit)
            (enqueue[i], start[i], end[i], flags[i]) = (t.enqueue, t.start, t.end, t.flags)
        }
        let order = ItemLayout.sortByStart(&start)
        var rank = [Int32](repeating: 0, count: n)
        for (row, i) in order.enumerated() { rank[Int(i)] = Int32(row) }
        enqueue = ItemLayout.reordered(consume enqueue, by: order)
        end = ItemLayout.reordered(consume end, by: order)
        flags = ItemLayout.reordered(consume flags, by: order)

        self.order = order
        self.rank = rank
        self.enqueue = enqueue
        self.start = start
        self.end = end
        self.flags = flags
        self.traceEnd = lastTime
        // One lane column at a time (4 bytes an item each).
        let threads = order.map { items.thread[Int($0)] }
        depth = ItemLayout.nestingDepth(groups: threads, begin: start, end: end, maxRows: Rows.thread)
        let queues = order.map { items.queue[Int($0)] }
        runSlot = ItemLayout.greedySlots(groups: queues, begin: start, end: end, maxRows: Rows.queueRunning)
        pendingSlot = ItemLayout.greedySlots(groups: queues, begin: enqueue, end: start, maxRows: Rows.queuePending)
    }

    /// `values` in `order` (the value at `order[row]` at `row`), the old array freed as the
    /// new one is returned: one time column is ever held twice, never all three (an in-place
    /// permutation, following its cycles, took 5 times as long: three cache misses a value).
    static func reordered<T>(_ values: consuming [T], by order: [Int32]) -> [T] {
        values.withUnsafeBufferPointer { v in order.map { v[Int($0)] } }
    }

    /// In a report of several processes, the end of each item's process (its threads' latest
    /// end): an item still pending or running when its process exits, is killed or execs ends
    /// there, not at the end of a process that outlived it. Empty for one process.
    package static func processEnds(of input: ReportInput) -> [Int64] {
        guard input.processes.count > 1 else { return [] }
        var ends = [Int64](repeating: .max, count: input.processes.count)
        for thread in input.threads where ends.indices.contains(thread.process) {
            ends[thread.process] = ends[thread.process] == .max ? thread.endNs : max(ends[thread.process], thread.endNs)
        }
        return input.items.queue.map { q in
            let process = input.queues.indices.contains(Int(q)) ? input.queues[Int(q)].process : -1
            return ends.indices.contains(process) ? ends[process] : .max
        }
    }

    /// An item still pending at the end of the trace is drawn pending until the end; one
    /// still running, running until the end. Enqueue never comes after start.
    package static func effectiveTimes(_ items: ReportItems, _ i: Int, traceEnd: Int64)
        -> (enqueue: Int64, start: Int64, end: Int64, flags: UInt8)
    {
        effectiveTimes(enqueue: items.enqueueNs[i], start: items.startNs[i], end: items.endNs[i], traceEnd: traceEnd)
    }

    package static func effectiveTimes(enqueue recordedEnqueue: Int64, start recordedStart: Int64, end recordedEnd: Int64,
                                       traceEnd: Int64) -> (enqueue: Int64, start: Int64, end: Int64, flags: UInt8) {
        var flags: UInt8 = 0
        var start = recordedStart
        var end = recordedEnd
        if start < 0 {
            start = traceEnd
            flags |= ItemFlags.neverStarted | ItemFlags.neverFinished
        }
        if end < 0 {
            end = traceEnd
            flags |= ItemFlags.neverFinished
        }
        end = max(end, start)
        var enqueue = recordedEnqueue
        if enqueue < 0 || enqueue > start { enqueue = start }
        return (enqueue, start, end, flags)
    }

    /// Sorts `start` and returns the item indexes in that order (ties in index order).
    package static func sortByStart(_ start: inout [Int64]) -> [Int32] {
        if zip(start, start.dropFirst()).allSatisfy({ $0 <= $1 }) { return (0..<Int32(start.count)).map { $0 } }
        if let order = StartSort.packedSort(&start) { return order }
        let order = sortedByStart(start)
        start = reordered(consume start, by: order)
        return order
    }

    /// Item indexes in order of start (ties in index order), by comparison through the indexes
    /// (`sortByStart` has already returned when the starts were in order).
    package static func sortedByStart(_ start: [Int64]) -> [Int32] {
        var order = (0..<Int32(start.count)).map { $0 }
        start.withUnsafeBufferPointer { s in
            order.sort { a, b in
                let sa = s[Int(a)], sb = s[Int(b)]
                return sa < sb || (sa == sb && a < b)
            }
        }
        return order
    }

    /// Depth of each item among the items of its group (thread) that are still running when it
    /// starts. Items must be sorted by begin.
    package static func nestingDepth(groups: [Int32], begin: [Int64], end: [Int64], maxRows: Int) -> [UInt8] {
        var stacks = [[Int64]](repeating: [], count: Int(groups.max() ?? -1) + 1)
        var depth = [UInt8](repeating: 0, count: groups.count)
        for i in groups.indices where groups[i] >= 0 {
            let g = Int(groups[i])
            while let top = stacks[g].last, top <= begin[i] { stacks[g].removeLast() }
            depth[i] = UInt8(min(stacks[g].count, maxRows - 1))
            stacks[g].append(end[i])
        }
        return depth
    }

    /// The lowest row of its group (queue) free at the item's begin. Items must be sorted by
    /// begin or by end: either way a row's last end is at most the new begin when it is reused.
    package static func greedySlots(groups: [Int32], begin: [Int64], end: [Int64], maxRows: Int) -> [UInt8] {
        var rowEnds = [[Int64]](repeating: [], count: Int(groups.max() ?? -1) + 1)
        var slot = [UInt8](repeating: 0, count: groups.count)
        for i in groups.indices where groups[i] >= 0 && end[i] > begin[i] {
            let g = Int(groups[i])
            if let free = rowEnds[g].firstIndex(where: { $0 <= begin[i] }) {
                rowEnds[g][free] = end[i]
                slot[i] = UInt8(free)
            } else if rowEnds[g].count < maxRows {
                slot[i] = UInt8(rowEnds[g].count)
                rowEnds[g].append(end[i])
            } else {
                // More than maxRows at once: share the last row (drawn overlapping).
                slot[i] = UInt8(maxRows - 1)
                rowEnds[g][maxRows - 1] = max(rowEnds[g][maxRows - 1], end[i])
            }
        }
        return slot
    }
}
