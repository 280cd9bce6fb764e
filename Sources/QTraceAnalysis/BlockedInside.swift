// Each item's time blocked inside it (the details panel's "Blocked inside"): the time its
// thread was blocked while the item ran, by the thread's definition (docs/report-data.md,
// Definitions): in a blocking call of the item or of an item nested in it on the same thread,
// less the time the thread ran work inside the call (a sync item run on the caller is busy).

/// Per item: nanoseconds blocked inside it and the causes of that time (a bit per cause code);
/// per thread, from the same frames: its busy time (an item innermost) and blocked time (a wait
/// innermost), the thread's figures for inputs that have runs and waits but no model.
public struct BlockedInside: Sendable, Equatable {
    public var ns: [UInt64]
    public var causeMasks: [UInt8]
    /// Indexed by thread, for threads 0..<threads of `init(runs:waits:threads:)`.
    public var threadBusyNs: [UInt64]
    public var threadBlockedNs: [UInt64]

    /// An item's run on a thread (thread < 0 or end < start: it never ran, 0 blocked inside).
    public struct Run: Sendable {
        public var thread: Int
        public var start: UInt64
        public var end: UInt64
        public init(thread: Int, start: UInt64, end: UInt64) { self.thread = thread; self.start = start; self.end = end }
    }

    /// A blocking call on a thread; `cause` is the caller's code of its cause, 0...7.
    public struct Wait: Sendable {
        public var thread: Int
        public var start: UInt64
        public var end: UInt64
        public var cause: UInt8
        public init(thread: Int, start: UInt64, end: UInt64, cause: UInt8) {
            self.thread = thread; self.start = start; self.end = end; self.cause = cause
        }
    }

    /// Runs and waits of one thread nest (a thread runs one frame at a time: an item, inside it
    /// a blocking call, inside that a sync item run on the caller...). One sweep per thread in
    /// start order with a stack of open frames: each wait's own time (its duration less its
    /// children's) is blocked, and every enclosing item gets it when the frames close.
    public init(runs: [Run], waits: [Wait], threads: Int = 0) {
        let items = RunColumns(
            thread: runs.map { $0.thread >= 0 && $0.end >= $0.start ? Int32($0.thread) : -1 },
            start: runs.map { Int64($0.start) }, end: runs.map { Int64($0.end) }, endTime: 0)
        self.init(items, waits: waits, threads: threads)
    }

    /// The model's items and blocked intervals; `cause` gives each blocked interval's code.
    public init(_ model: TraceModel, cause: (BlockCause) -> UInt8) {
        let items = RunColumns(thread: model.items.map { Int32($0.thread ?? -1) },
                               start: model.items.map { $0.started.map(Int64.init) ?? -1 },
                               end: model.items.map { $0.ended.map(Int64.init) ?? -1 }, endTime: Int64(model.endTime))
        self.init(items, waits: Self.waits(model, cause: cause), threads: model.threads.count)
    }

    private init(_ items: RunColumns, waits: [Wait], threads: Int) {
        var ns = [UInt64](repeating: 0, count: items.thread.count)
        var masks = [UInt8](repeating: 0, count: items.thread.count)
        (threadBusyNs, threadBlockedNs) = Self.sweep(items, waits: waits, threads: threads) { item, blocked, mask in
            (ns[item], masks[item]) = (blocked, mask)
        }
        (self.ns, causeMasks) = (ns, masks)
    }

    /// The blocked intervals of the model's threads, as waits.
    public static func waits(_ model: TraceModel, cause: (BlockCause) -> UInt8) -> [Wait] {
        let end = model.endTime
        return model.threads.enumerated().flatMap { t, thread in
            thread.blocked.map { Wait(thread: t, start: $0.start, end: Swift.max($0.start, $0.end ?? end), cause: cause($0.cause)) }
        }
    }

    /// Items as columns (the report's): `thread` or `start` -1 for an item that never ran, `end`
    /// -1 for one still running at `endTime`; an item runs from its start to the later of its
    /// start and its end.
    public struct RunColumns {
        public var thread: [Int32]
        public var start: [Int64]
        public var end: [Int64]
        public var endTime: Int64
        public init(thread: [Int32], start: [Int64], end: [Int64], endTime: Int64) {
            self.thread = thread; self.start = start; self.end = end; self.endTime = endTime
        }
    }

    /// The figures of items given as columns, without a copy of them: `record(item, ns, mask)`
    /// is told each item with time blocked inside it or a cause (the others have none), and
    /// the threads' busy and blocked time (for threads `0..<threads`) are returned. The only
    /// memory per item is their order, 4 bytes each: the report's 20M items are converted to
    /// columns first and their figures filled in here, where frames of every item (and their
    /// sorted copy) cost 160 bytes an item on top of the model.
    public static func sweep(_ items: RunColumns, waits: [Wait], threads: Int,
                             record: (Int, UInt64, UInt8) -> Void) -> (busy: [UInt64], blocked: [UInt64]) {
        var busy = [UInt64](repeating: 0, count: threads), blocked = busy
        let (order, starts) = runsByThread(items)
        let waitsByThread = Dictionary(grouping: waits.filter { $0.thread >= 0 && $0.end >= $0.start }, by: \.thread)
        let lanes = Swift.max(starts.count - 1, (waitsByThread.keys.max() ?? -1) + 1)
        for t in 0..<lanes {
            let rows = t + 1 < starts.count ? order[starts[t]..<starts[t + 1]] : []
            let threadWaits = (waitsByThread[t] ?? []).sorted { a, b in a.start != b.start ? a.start < b.start : a.end > b.end }
            sweepThread(t, rows: rows, waits: threadWaits, items: items, busy: &busy, blocked: &blocked, record: record)
        }
        return (busy, blocked)
    }

    /// The items that ran, grouped by thread (a counting sort), each thread's by start, longer
    /// first, the later item first.
    private static func runsByThread(_ items: RunColumns) -> (order: [Int32], starts: [Int]) {
        let n = items.thread.count
        func lane(_ i: Int) -> Int { items.thread[i] >= 0 && items.start[i] >= 0 ? Int(items.thread[i]) : -1 }
        var starts = [Int](repeating: 0, count: Int(items.thread.max() ?? -1) + 2)
        for i in 0..<n where lane(i) >= 0 { starts[lane(i) + 1] += 1 }
        for t in starts.indices.dropFirst() { starts[t] += starts[t - 1] }
        var next = starts, order = [Int32](repeating: 0, count: starts.last ?? 0)
        for i in 0..<n where lane(i) >= 0 {
            order[next[lane(i)]] = Int32(i)
            next[lane(i)] += 1
        }
        items.start.withUnsafeBufferPointer { start in
            let ends = ItemEnds(items)
            for t in starts.indices.dropLast() {
                // Items are nearly in start order already: runs for the merge sort.
                order[starts[t]..<starts[t + 1]].sort { a, b in
                    let (sa, sb) = (start[Int(a)], start[Int(b)])
                    if sa != sb { return sa < sb }
                    let (ea, eb) = (ends[Int(a)], ends[Int(b)])
                    if ea != eb { return ea > eb }
                    return a > b
                }
            }
        }
        return (order, starts)
    }

    /// Each item's end as the sweep sees it: the later of its start and its end (or the trace's).
    struct ItemEnds {
        let items: RunColumns
        init(_ items: RunColumns) { self.items = items }
        subscript(i: Int) -> Int64 {
            let end = items.end[i] < 0 ? items.endTime : items.end[i]
            return Swift.max(items.start[i], end)
        }
    }

    private struct Frame {
        var start: UInt64
        var end: UInt64
        /// The item's index, or -1 for a wait.
        var item: Int
        var cause: UInt8
        /// Blocked time inside the frame so far, its causes, and the time its children covered.
        var blocked: UInt64 = 0
        var mask: UInt8 = 0
        var covered: UInt64 = 0
    }

    /// One thread's frames, outer before inner: by start, longer first, an item before a wait
    /// of the same span (a wait that fills its item is the item's own call). The items (in
    /// that order already) and the waits (sorted by start, longer first, in their order
    /// otherwise) are merged as they are swept, with a stack of the open frames.
    private static func sweepThread(_ thread: Int, rows: ArraySlice<Int32>, waits: [Wait], items: RunColumns,
                                    busy: inout [UInt64], blocked: inout [UInt64], record: (Int, UInt64, UInt8) -> Void) {
        let ends = ItemEnds(items)
        var stack: [Frame] = []
        var row = rows.startIndex, w = 0
        while row < rows.endIndex || w < waits.count {
            var next: Frame
            if row < rows.endIndex {
                let i = Int(rows[row])
                let item = Frame(start: UInt64(items.start[i]), end: UInt64(ends[i]), item: i, cause: 0)
                if w < waits.count, waits[w].start < item.start || (waits[w].start == item.start && waits[w].end > item.end) {
                    next = Frame(start: waits[w].start, end: waits[w].end, item: -1, cause: waits[w].cause & 7)
                    w += 1
                } else {
                    next = item
                    row += 1
                }
            } else {
                next = Frame(start: waits[w].start, end: waits[w].end, item: -1, cause: waits[w].cause & 7)
                w += 1
            }
            while let top = stack.last, top.end <= next.start {
                close(&stack, thread: thread, busy: &busy, blocked: &blocked, record: record)
            }
            stack.append(next)
        }
        while !stack.isEmpty { close(&stack, thread: thread, busy: &busy, blocked: &blocked, record: record) }
    }

    /// Closes the innermost open frame: its own time (its span less its children's) is the
    /// thread's busy time for an item, blocked time for a wait; an item records the blocked time
    /// inside it; both pass what is inside them to the frame around them.
    private static func close(_ stack: inout [Frame], thread: Int, busy: inout [UInt64], blocked: inout [UInt64],
                              record: (Int, UInt64, UInt8) -> Void) {
        var f = stack.removeLast()
        let span = f.end - f.start
        let own = span > f.covered ? span - f.covered : 0
        if f.item < 0 {
            if own > 0 {
                f.blocked += own
                f.mask |= 1 << f.cause
            }
            if thread < blocked.count { blocked[thread] += own }
        } else {
            if f.blocked != 0 || f.mask != 0 { record(f.item, f.blocked, f.mask) }
            if thread < busy.count { busy[thread] += own }
        }
        guard !stack.isEmpty else { return }
        let p = stack.count - 1
        stack[p].blocked += f.blocked
        stack[p].mask |= f.mask
        // A frame that outlives its parent (a trace with lost events) covers it only up to its end.
        stack[p].covered += Swift.min(f.end, stack[p].end) - f.start
    }
}
