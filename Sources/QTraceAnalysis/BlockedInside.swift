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
        ns = [UInt64](repeating: 0, count: runs.count)
        causeMasks = [UInt8](repeating: 0, count: runs.count)
        threadBusyNs = [UInt64](repeating: 0, count: threads)
        threadBlockedNs = threadBusyNs
        for (thread, frames) in Self.framesByThread(runs: runs, waits: waits) { sweep(frames, thread: thread) }
    }

    /// The model's items and blocked intervals; `cause` gives each blocked interval's code.
    public init(_ model: TraceModel, cause: (BlockCause) -> UInt8) {
        let end = model.endTime
        let runs = model.items.map { item -> Run in
            guard let thread = item.thread, let start = item.started else { return Run(thread: -1, start: 0, end: 0) }
            return Run(thread: thread, start: start, end: Swift.max(start, item.ended ?? end))
        }
        let waits = model.threads.enumerated().flatMap { t, thread in
            thread.blocked.map { Wait(thread: t, start: $0.start, end: Swift.max($0.start, $0.end ?? end), cause: cause($0.cause)) }
        }
        self.init(runs: runs, waits: waits, threads: model.threads.count)
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

    /// Each thread's frames, outer before inner: by start, longer first, an item before a wait
    /// of the same span (a wait that fills its item is the item's own call).
    private static func framesByThread(runs: [Run], waits: [Wait]) -> [(thread: Int, frames: [Frame])] {
        let threads = Swift.max(runs.lazy.map(\.thread).max() ?? -1, waits.lazy.map(\.thread).max() ?? -1) + 1
        var byThread = [[Frame]](repeating: [], count: threads)
        for (i, r) in runs.enumerated() where r.thread >= 0 && r.end >= r.start {
            byThread[r.thread].append(Frame(start: r.start, end: r.end, item: i, cause: 0))
        }
        for w in waits where w.thread >= 0 && w.end >= w.start {
            byThread[w.thread].append(Frame(start: w.start, end: w.end, item: -1, cause: w.cause & 7))
        }
        return byThread.indices.compactMap { t in
            guard !byThread[t].isEmpty else { return nil }
            // Items and waits are each nearly in start order already: two runs for the merge sort.
            return (t, byThread[t].sorted { a, b in
                if a.start != b.start { return a.start < b.start }
                if a.end != b.end { return a.end > b.end }
                return a.item > b.item
            })
        }
    }

    private mutating func sweep(_ frames: [Frame], thread: Int) {
        var stack: [Frame] = []
        for f in frames {
            while let top = stack.last, top.end <= f.start { close(&stack, thread: thread) }
            stack.append(f)
        }
        while !stack.isEmpty { close(&stack, thread: thread) }
    }

    /// Closes the innermost open frame: its own time (its span less its children's) is the
    /// thread's busy time for an item, blocked time for a wait; an item records the blocked time
    /// inside it; both pass what is inside them to the frame around them.
    private mutating func close(_ stack: inout [Frame], thread: Int) {
        var f = stack.removeLast()
        let span = f.end - f.start
        let own = span > f.covered ? span - f.covered : 0
        if f.item < 0 {
            if own > 0 {
                f.blocked += own
                f.mask |= 1 << f.cause
            }
            if thread < threadBlockedNs.count { threadBlockedNs[thread] += own }
        } else {
            ns[f.item] = f.blocked
            causeMasks[f.item] = f.mask
            if thread < threadBusyNs.count { threadBusyNs[thread] += own }
        }
        guard !stack.isEmpty else { return }
        let p = stack.count - 1
        stack[p].blocked += f.blocked
        stack[p].mask |= f.mask
        // A frame that outlives its parent (a trace with lost events) covers it only up to its end.
        stack[p].covered += Swift.min(f.end, stack[p].end) - f.start
    }
}
