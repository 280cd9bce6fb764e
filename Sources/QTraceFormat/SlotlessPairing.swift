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

/// The pending items of each queue in the order they were enqueued. A serial queue starts its
/// oldest pending item, so a START's item is almost always at the head of its queue's list
/// (a concurrent queue's STARTs, written by several threads, may come a few places out of
/// order): one read of memory just read, where a table of a million pending triples costs
/// cache misses per item. Items taken from inside the list are marked, and skipped once the
/// head reaches them.
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

    private var lists: [QueueList] = []
    private var listOfQueue = QueueMap()
    private(set) var count = 0

    /// Adds an item of the triple, after those already pending.
    mutating func append(_ key: Key, _ item: Item) {
        let list = listOfQueue.index(of: key.queue) ?? {
            lists.append(QueueList())
            listOfQueue.insert(key.queue, index: Int32(lists.count - 1))
            return Int32(lists.count - 1)
        }()
        lists[Int(list)].append(Entry(context: key.context, id: item.id, stub: key.stub,
                                      kind: UInt8(truncatingIfNeeded: item.kind), taken: false))
        count += 1
    }

    /// Removes and returns the triple's oldest pending item.
    mutating func takeOldest(_ key: Key) -> Item? {
        guard let list = listOfQueue.index(of: key.queue),
              let entry = lists[Int(list)].takeFirst(stub: key.stub, context: key.context) else { return nil }
        count -= 1
        return Item(id: entry.id, kind: UInt32(entry.kind))
    }

    private struct Entry {
        var context: UInt64
        var id: UInt64
        var stub: UInt32
        var kind: UInt8
        var taken: Bool
    }

    /// One queue's pending items, read from `head`.
    private struct QueueList {
        private var entries: [Entry] = []
        private var head = 0

        mutating func append(_ entry: Entry) { entries.append(entry) }

        /// How far past the head a START's item is looked for. What lies before it are items
        /// dequeued whose START is not written yet (one per thread at most) or was lost: a
        /// trace made by a program is never near this, and a hostile one cannot make reading
        /// quadratic.
        static let searchLimit = 4096

        /// The first untaken entry of (stub, context), taken.
        mutating func takeFirst(stub: UInt32, context: UInt64) -> Entry? {
            var i = head
            let end = Swift.min(entries.count, head &+ Self.searchLimit)
            while i < end {
                let e = entries[i]
                if !e.taken && e.context == context && e.stub == stub { break }
                i += 1
            }
            guard i < end else { return nil }
            let found = entries[i]
            entries[i].taken = true
            while head < entries.count && entries[head].taken { head += 1 }
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return found
        }
    }

    /// Queue address -> list index: open addressing, linear probing, grown at half full
    /// (queues are never removed: an address reused by a new queue keeps its list).
    private struct QueueMap {
        private var keys = [UInt64](repeating: 0, count: 256)
        private var values = [Int32](repeating: 0, count: 256)
        private var used = 0

        private func home(_ key: UInt64) -> Int {
            Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20) & (keys.count - 1)
        }

        /// Queue 0 (none) is kept apart: 0 marks a free key.
        func index(of key: UInt64) -> Int32? {
            var i = home(key &+ 1)
            while keys[i] != 0 {
                if keys[i] == key &+ 1 { return values[i] }
                i = (i &+ 1) & (keys.count - 1)
            }
            return nil
        }

        mutating func insert(_ key: UInt64, index value: Int32) {
            if (used + 1) * 2 > keys.count { grow() }
            var i = home(key &+ 1)
            while keys[i] != 0 { i = (i &+ 1) & (keys.count - 1) }
            keys[i] = key &+ 1
            values[i] = value
            used += 1
        }

        private mutating func grow() {
            let (oldKeys, oldValues) = (keys, values)
            keys = [UInt64](repeating: 0, count: oldKeys.count * 2)
            values = [Int32](repeating: 0, count: oldKeys.count * 2)
            for (k, v) in zip(oldKeys, oldValues) where k != 0 {
                var i = home(k)
                while keys[i] != 0 { i = (i &+ 1) & (keys.count - 1) }
                keys[i] = k
                values[i] = v
            }
        }
    }
}
