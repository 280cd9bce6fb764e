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
/// never interleaved) when it names the same stub. What a cut trace leaves unpaired (a flight
/// recorder's overwritten chunks, a crash) reads as it does for items with ids: a START whose
/// ENQUEUE is gone gets a fresh id of its own (from `orphanIDBase` up), an END whose START is
/// gone gets id 0.
public struct SlotlessPairing {
    /// Where ENQUEUE_F's stub sits in the half-decoded event's `arg` (the kind below it).
    static let stubShift: UInt32 = 8
    /// ENQUEUE_F's flags, which its flags8 (the stub) leaves out: every such item is a function,
    /// submitted by dispatch_async_f or dispatch_barrier_async_f.
    static let functionFlags = EnqueueFlags.function.rawValue
    static let barrierFlags = EnqueueFlags([.function, .barrier]).rawValue
    /// Ids given to STARTs without an ENQUEUE: far above any id the shim draws.
    public static let orphanIDBase: UInt64 = 1 << 56

    /// The pending items of each triple, oldest first, in a table of its own (a million items
    /// may be pending, many of one triple: a reply to the same sender on the same queue).
    private var pending = PendingItems()
    private var threads = ThreadStacks()
    private var nextOrphanID = SlotlessPairing.orphanIDBase

    public init() {}

    /// Items enqueued and not started yet.
    public var pendingCount: Int { pending.count }

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
        let key = PendingItems.Key(stub: event.arg >> SlotlessPairing.stubShift, context: event.c, queue: event.b)
        pending.append(key, PendingItems.Item(id: event.a, kind: kind))
        event.arg = kind
        event.c = 0
    }

    private mutating func start(_ event: inout Event) {
        let key = PendingItems.Key(stub: event.arg, context: event.b, queue: event.c)
        let item = pending.takeOldest(key) ?? orphan()
        threads.push(tid: event.tid, id: item.id, stub: key.stub)
        event.a = item.id
        event.arg = item.kind
        event.b = 0
        event.c = 0
    }

    /// An END_F of another stub than the innermost START_F's: that START was lost (dropped
    /// on a full disk), and this END is left without one rather than closing the wrong item.
    private mutating func end(_ event: inout Event) {
        event.a = threads.pop(tid: event.tid, stub: event.arg) ?? 0
        event.arg = 0
    }

    private mutating func orphan() -> PendingItems.Item {
        defer { nextOrphanID += 1 }
        return PendingItems.Item(id: nextOrphanID, kind: ItemKind.async.rawValue)
    }
}

/// Each thread's open START_F items (id and stub), innermost last. Events come in runs of one
/// thread's, so the last thread's stack is kept at hand.
private struct ThreadStacks {
    private var stacks: [[(id: UInt64, stub: UInt32)]] = []
    private var indexByTid: [Int32: Int] = [:]
    private var lastTid: Int32 = 0
    private var lastIndex = -1

    private mutating func index(of tid: Int32) -> Int {
        if tid == lastTid && lastIndex >= 0 { return lastIndex }
        let index = indexByTid[tid] ?? {
            stacks.append([])
            indexByTid[tid] = stacks.count - 1
            return stacks.count - 1
        }()
        (lastTid, lastIndex) = (tid, index)
        return index
    }

    mutating func push(tid: Int32, id: UInt64, stub: UInt32) {
        stacks[index(of: tid)].append((id, stub))
    }

    /// The innermost open item's id if it has `stub` (and it is closed), else nil.
    mutating func pop(tid: Int32, stub: UInt32) -> UInt64? {
        let i = index(of: tid)
        guard let innermost = stacks[i].last, innermost.stub == stub else { return nil }
        stacks[i].removeLast()
        return innermost.id
    }
}

/// The pending items by (stub, context, queue): open addressing with linear probing and
/// backward-shift deletion (no tombstones), kept at most half full. A triple's first item sits
/// in its slot; later ones wait in a queue of the slot's own, from a pool.
struct PendingItems {
    struct Key {
        var stub: UInt32
        var context: UInt64
        var queue: UInt64
    }

    struct Item {
        var id: UInt64
        var kind: UInt32
    }

    private struct Slot {
        var context: UInt64 = 0
        var queue: UInt64 = 0
        var id: UInt64 = 0
        var stub: UInt32 = 0
        /// The index of the triple's later items in `queues`, or -1.
        var later: Int32 = -1
        var kind: UInt8 = 0
        var used = false
    }

    private var slots = [Slot](repeating: Slot(), count: 1024)
    private var mask = 1023
    private var queues: [FIFO] = []
    private var freeQueues: [Int32] = []
    /// Pending items, and slots in use (triples).
    private(set) var count = 0
    private var occupied = 0

    private static func home(_ stub: UInt32, _ context: UInt64, _ queue: UInt64, _ mask: Int) -> Int {
        var h = (context ^ UInt64(stub) << 40) &* 0x9E37_79B9_7F4A_7C15
        h ^= queue &* 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 31
        return Int(truncatingIfNeeded: h) & mask
    }

    private func find(_ key: Key) -> Int? {
        var i = Self.home(key.stub, key.context, key.queue, mask)
        while slots[i].used {
            let s = slots[i]
            if s.context == key.context && s.queue == key.queue && s.stub == key.stub { return i }
            i = (i &+ 1) & mask
        }
        return nil
    }

    /// Adds an item of the triple, after those already pending.
    mutating func append(_ key: Key, _ item: Item) {
        count += 1
        if let i = find(key) {
            if slots[i].later < 0 { slots[i].later = newQueue() }
            queues[Int(slots[i].later)].push(item)
            return
        }
        occupied += 1
        if occupied * 2 > slots.count { grow() }
        var i = Self.home(key.stub, key.context, key.queue, mask)
        while slots[i].used { i = (i &+ 1) & mask }
        slots[i] = Slot(context: key.context, queue: key.queue, id: item.id, stub: key.stub, later: -1,
                        kind: UInt8(truncatingIfNeeded: item.kind), used: true)
    }

    /// Removes and returns the triple's oldest pending item.
    mutating func takeOldest(_ key: Key) -> Item? {
        guard let i = find(key) else { return nil }
        count -= 1
        let s = slots[i]
        let oldest = Item(id: s.id, kind: UInt32(s.kind))
        guard s.later >= 0 else {
            remove(at: i)
            return oldest
        }
        let next = queues[Int(s.later)].pop()
        slots[i].id = next.id
        slots[i].kind = UInt8(truncatingIfNeeded: next.kind)
        if queues[Int(s.later)].count == 0 {
            freeQueues.append(s.later)
            slots[i].later = -1
        }
        return oldest
    }

    private mutating func newQueue() -> Int32 {
        if let free = freeQueues.popLast() { return free }
        queues.append(FIFO())
        return Int32(queues.count - 1)
    }

    /// Backward-shift deletion: later slots of the probe run move up into the hole unless
    /// their home lies cyclically after it.
    private mutating func remove(at index: Int) {
        var hole = index
        var j = index
        while true {
            j = (j &+ 1) & mask
            guard slots[j].used else { break }
            let s = slots[j]
            let home = Self.home(s.stub, s.context, s.queue, mask)
            let stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j)
            if stays { continue }
            slots[hole] = s
            hole = j
        }
        slots[hole].used = false
        occupied -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count * 2)
        mask = slots.count - 1
        for s in old where s.used {
            var i = Self.home(s.stub, s.context, s.queue, mask)
            while slots[i].used { i = (i &+ 1) & mask }
            slots[i] = s
        }
    }

    /// A triple's later items: an array read from `head`, emptied when all are read and
    /// compacted when more than half is.
    private struct FIFO {
        private var items: [Item] = []
        private var head = 0

        var count: Int { items.count - head }

        mutating func push(_ item: Item) { items.append(item) }

        /// The oldest item; the caller checks `count` first.
        mutating func pop() -> Item {
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 32 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }
}
