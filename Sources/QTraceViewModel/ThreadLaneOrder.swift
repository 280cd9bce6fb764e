// The order of the thread lanes, computed here once; the viewer draws the lanes in it.

import QTraceAnalysis

extension ReportThread {
    /// Whether the thread's lane shows anything of its own: it ran an item or it blocked (the
    /// analysis' definition, which also picks the threads `qtrace stats` lists).
    public var ranOrBlocked: Bool { ThreadStats.ranOrBlocked(items: items, blockedNs: blockedNs) }
}

extension ReportInput {
    /// The thread indexes in lane order: the main thread first, then the threads that ran an
    /// item or blocked, then those that did neither (a pool of parked workers); within each,
    /// workers before other threads, each by when it appeared (ties: by index).
    ///
    /// Idle threads go last because a pool of them hid the busy ones: in libdispatch's starfish
    /// benchmark 256 overcommit workers start first and never run an item, and the two workers
    /// that run all 2M items came 60 lanes down, so the zoomed-out report looked idle.
    public func threadLaneOrder() -> [Int] {
        func rank(_ t: ReportThread) -> Int {
            switch (t.kind, t.ranOrBlocked) {
            case (.main, _): 0
            case (.worker, true): 1
            case (.other, true): 2
            case (.worker, false): 3
            case (.other, false): 4
            }
        }
        return threads.indices.sorted { a, b in
            let (ta, tb) = (threads[a], threads[b])
            if rank(ta) != rank(tb) { return rank(ta) < rank(tb) }
            return ta.startNs != tb.startNs ? ta.startNs < tb.startNs : a < b
        }
    }
}
