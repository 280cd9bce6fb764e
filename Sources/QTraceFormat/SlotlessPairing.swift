// Function items recorded without a context slot (format 1.8; docs/trace-format.md,
// "Function items without a slot"): the shim passes dispatch_async_f's own context through a
// stub per function, so START_F and END_F cannot carry the item's id. This type gives them
// the id back, so that every reader delivers the ordinary ENQUEUE/START/END events.

/// Rewrites ENQUEUE_F/START_F/END_F events, in time order, into ENQUEUE/START/END with ids.
///
/// A START_F takes the oldest pending ENQUEUE_F of the same (stub, context, queue): exact on a
/// serial queue, which runs its items in order; on a concurrent queue, two pending items of the
/// same triple may be swapped, but nothing tells them apart (same code, same context, same
/// queue). An END_F closes its thread's innermost open START_F (a thread runs items nested,
/// never interleaved) when it names the same stub. What a cut trace leaves unpaired (a flight recorder's overwritten
/// chunks, a crash) reads as it does for items with ids: a START whose ENQUEUE is gone gets a
/// fresh id of its own (above `orphanIDBase`), an END whose START is gone gets id 0.
public struct SlotlessPairing {
    /// Where ENQUEUE_F's stub sits in the half-decoded event's `arg` (the kind below it).
    static let stubShift: UInt32 = 8
    /// ENQUEUE_F's flags, which its flags8 (the stub) leaves out: every such item is a function,
    /// submitted by dispatch_async_f or dispatch_barrier_async_f.
    static let functionFlags = EnqueueFlags.function.rawValue
    static let barrierFlags = EnqueueFlags([.function, .barrier]).rawValue
    /// Ids given to STARTs without an ENQUEUE: far above any id the shim draws.
    public static let orphanIDBase: UInt64 = 1 << 56

    private struct Key: Hashable {
        var stub: UInt32
        var context: UInt64
        var queue: UInt64
    }

    private struct Pending {
        var id: UInt64
        var kind: UInt32
    }

    /// The oldest pending item of each triple; the later ones of a triple pending more than
    /// once wait in `later`, in order (rare: one dictionary entry per item otherwise).
    private var oldest: [Key: Pending] = [:]
    private var later: [Key: FIFO] = [:]
    /// Each thread's open START_F ids and stubs, innermost last.
    private var running: [Int32: [(id: UInt64, stub: UInt32)]] = [:]
    private var nextOrphanID = SlotlessPairing.orphanIDBase

    public init() {}

    /// Items enqueued and not started yet.
    public var pendingCount: Int { oldest.count + later.values.reduce(0) { $0 + $1.count } }

    /// Rewrites a half-decoded slot-less record's event (see `TraceBytes.decodeEvent`) into its
    /// full form's event.
    public mutating func rewrite(_ event: inout Event) {
        switch event.type {
        case .enqueue: enqueue(&event)
        case .start: start(&event)
        default: end(&event)
        }
    }

    private mutating func enqueue(_ event: inout Event) {
        let kind = event.arg & ((1 << SlotlessPairing.stubShift) - 1)
        let key = Key(stub: event.arg >> SlotlessPairing.stubShift, context: event.c, queue: event.b)
        let pending = Pending(id: event.a, kind: kind)
        if oldest[key] == nil {
            oldest[key] = pending
        } else {
            later[key, default: FIFO()].push(pending)
        }
        event.arg = kind
        event.c = 0
    }

    private mutating func start(_ event: inout Event) {
        let key = Key(stub: event.arg, context: event.b, queue: event.c)
        let item = takeOldest(key) ?? orphan()
        running[event.tid, default: []].append((item.id, key.stub))
        event.a = item.id
        event.arg = item.kind
        event.b = 0
        event.c = 0
    }

    /// An END_F of another stub than the innermost START_F's: that START was lost (dropped
    /// on a full disk), and this END is left without one rather than closing the wrong item.
    private mutating func end(_ event: inout Event) {
        if let innermost = running[event.tid]?.last, innermost.stub == event.arg {
            event.a = innermost.id
            running[event.tid]?.removeLast()
        } else {
            event.a = 0
        }
        event.arg = 0
    }

    private mutating func takeOldest(_ key: Key) -> Pending? {
        guard let first = oldest[key] else { return nil }
        if let next = later[key]?.pop() {
            oldest[key] = next
            if later[key]?.count == 0 { later[key] = nil }
        } else {
            oldest[key] = nil
        }
        return first
    }

    private mutating func orphan() -> Pending {
        defer { nextOrphanID += 1 }
        return Pending(id: nextOrphanID, kind: ItemKind.async.rawValue)
    }

    /// A queue of pending items: an array read from `head`, compacted when half is read.
    private struct FIFO {
        private var items: [Pending] = []
        private var head = 0

        var count: Int { items.count - head }

        mutating func push(_ item: Pending) { items.append(item) }

        mutating func pop() -> Pending? {
            guard head < items.count else { return nil }
            let item = items[head]
            head += 1
            if head > 32 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }
}
