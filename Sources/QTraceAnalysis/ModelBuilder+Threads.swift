// Thread records, and the frames of a thread's stack whose closing concerns more than the
// ThreadTable: an item's frame ends its run on its queue too, a wait's ends its blocked
// interval. The table keeps the stacks and states; these say what a push or pop means.
import QTraceFormat

extension ModelBuilder {
    /// The thread index for `tid` (a new thread on first sight or after its exit).
    @inline(__always)
    mutating func thread(for tid: Int32) -> Int32 { threads.thread(for: tid, at: now) }

    mutating func threadExited(_ t: Int32) {
        // Whatever it was doing is over (items without END stay open in the model).
        while let f = threads.frames(of: t).last { abandon(f, thread: t) }
        threads.exited(t, at: now)
    }

    @inline(__always)
    mutating func push(_ frame: Frame, on t: Int32) { threads.push(frame, on: t, at: now) }

    /// Pops the innermost frame of `kind` with `key` (and, with a warning count, any frame left
    /// open above it: an END or wait end was lost).
    mutating func pop(_ kind: FrameKind, key: UInt64, cause: BlockCause? = nil, from t: Int32) -> Frame? {
        // Nearly always the frame is on top: pop it without the search and abandon loop.
        if let top = threads.popIfTop(kind, key: key, cause: cause, from: t, at: now) { return top }
        guard let at = threads.innermost(kind, key: key, cause: cause, in: t) else { return nil }
        while threads.frames(of: t).count > at + 1 { abandon(threads.frames(of: t).last!, thread: t) }
        return threads.popTop(t, at: now)
    }

    /// Closes a frame whose end record never came, at the current time.
    mutating func abandon(_ f: Frame, thread t: Int32) {
        switch f.kind {
        case .item, .handler:
            _ = pop(f.kind, key: f.key, from: t)
            finishExecution(f, thread: t)
            model.anomalies.unclosedItems += 1
        case .blocked:
            _ = pop(.blocked, key: f.key, cause: f.cause, from: t)
            threads.closeBlocked(f, thread: t, timedOut: false, at: now)
            model.anomalies.unmatchedWaitEnds += 1
        case .iteration, .ioHandler:
            _ = pop(f.kind, key: f.key, from: t)
        }
    }

    // Small non-mutating helpers are always inlined: called from a mutating method, an
    // outlined call copied the whole builder (1 KiB memcpy per ENQUEUE).

    /// The innermost item (or handler run) the thread is executing.
    @inline(__always)
    func topItem(of t: Int32) -> Int32 { threads.currentItem(of: t) }

    /// QoS the thread runs at: its innermost item's; user-interactive on the main thread.
    @inline(__always)
    func currentQoS(of t: Int32) -> UInt8 {
        let item = topItem(of: t)
        if item >= 0, items[Int(item)].qosRaw != 0 { return items[Int(item)].qosRaw }
        return threads.isMain(t) ? QoSClass.userInteractive.rawValue : 0
    }

    /// Starts a blocked interval and its frame.
    @inline(__always)
    mutating func beginBlocked(_ t: Int32, cause: BlockCause, object: Int32, item: Int32 = -1, key: UInt64,
                               site: UInt32 = 0) {
        threads.beginBlocked(t, cause: cause, object: object, item: item, key: key, site: site, at: now)
    }

    mutating func endBlocked(_ t: Int32, cause: BlockCause, key: UInt64, timedOut: Bool = false) -> Frame? {
        guard let f = pop(.blocked, key: key, cause: cause, from: t) else {
            model.anomalies.unmatchedWaitEnds += 1
            return nil
        }
        threads.closeBlocked(f, thread: t, timedOut: timedOut, at: now)
        return f
    }
}
