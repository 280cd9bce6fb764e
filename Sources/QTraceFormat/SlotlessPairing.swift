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
/// gone gets id 0. Copies share their tables (`PairingBuffer`): the merge keeps one, and a
/// copy is for reading only (the scouts' `peekStart`, which changes nothing but a cache).
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

    /// A pairing whose chunk arena starts at `arenaChunks` chunks (tests: to see it grow).
    init(arenaChunks: Int) { pending = PendingItems(arenaChunks: arenaChunks) }

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

    /// A START_F's item as seen ahead of the START: its id and where it is pending.
    public struct Peek: Sendable {
        public let id: UInt64
        let key: PendingItems.Key
        let position: Int
    }

    /// The item a START_F record (its word 0 and payload word) will be given, without taking
    /// it: the merge's scouts announce its id ahead of the START, as they do a START's own id,
    /// so that the model prefetches the item's pending entry. `passed`: the STARTs the scout
    /// peeked at before this one, which the merge has not delivered yet; a START of the same
    /// triple as one of them takes an item after that one's (a queue draining replies from one
    /// sender runs a triple many times in a row). A hint: nil when no item of its triple is
    /// pending.
    public mutating func peekStart(word0: UInt64, word: UInt64, passed: ScoutPeeks = ScoutPeeks()) -> Peek? {
        let key = SlotlessPairing.startKey(word0: word0, word: word)
        let from = passed.latest(of: key).map { $0.position + 1 } ?? 0
        return pending.peekOldest(key, from: from).map { Peek(id: $0.id, key: key, position: $0.position) }
    }

    /// Prefetches where an ENQUEUE_F record (its payload word) will be appended: its queue's
    /// entry in the queue table (a thread's ENQUEUE_Fs may name a thousand queues in a row).
    public func prefetchEnqueue(word: UInt64) {
        pending.prefetchQueue(word & 0x0000_FFFF_FFFF_FFFF)
    }

    /// A scout's last few peeks (`peekStart`): as many STARTs as a lookahead of
    /// `TraceFile.startLookahead` records can hold (a START and its END are two records). A
    /// ring: a peek writes one entry (shifting four optional entries down wrote 192 bytes into
    /// the cursor per START_F, and a scout's restart as many).
    public struct ScoutPeeks {
        private static let none = Peek(id: 0, key: PendingItems.Key(stub: 0, context: 0, queue: 0), position: 0)
        private var peeks: (Peek, Peek, Peek, Peek) = (none, none, none, none)
        /// The latest peek's entry, and how many entries hold peeks (the latest and those before).
        private var newest = 0
        private var count = 0

        public init() {}

        /// Forgets every peek (the scout restarts at the head).
        public mutating func forget() { count = 0 }

        /// Adds `peek` as the latest, forgetting the oldest.
        public mutating func remember(_ peek: Peek) {
            newest = (newest &+ 1) & 3
            switch newest {
            case 0: peeks.0 = peek
            case 1: peeks.1 = peek
            case 2: peeks.2 = peek
            default: peeks.3 = peek
            }
            count = Swift.min(count &+ 1, 4)
        }

        /// The latest peek of `key`'s triple.
        func latest(of key: PendingItems.Key) -> Peek? {
            var entry = newest
            for _ in 0..<count {
                let peek: Peek
                switch entry {
                case 0: peek = peeks.0
                case 1: peek = peeks.1
                case 2: peek = peeks.2
                default: peek = peeks.3
                }
                if peek.key == key { return peek }
                entry = (entry &- 1) & 3
            }
            return nil
        }
    }

    /// START_F's (stub, context, queue): the stub in flags8, the context in the word's bits
    /// 0..47, the queue's bits 0..31 in word 0's arg and 32..47 in the word's top 16 bits.
    @inline(__always)
    static func startKey(word0: UInt64, word: UInt64) -> PendingItems.Key {
        PendingItems.Key(stub: UInt32(truncatingIfNeeded: (word0 >> 8) & 0xFF),
                         context: word & 0x0000_FFFF_FFFF_FFFF,
                         queue: (word >> 48) << 32 | word0 >> 32)
    }

    private mutating func orphan() -> PendingItems.Item {
        defer { nextOrphanID += 1 }
        return PendingItems.Item(id: nextOrphanID, kind: ItemKind.async.rawValue)
    }
}

/// Each thread's open START_F items (id and stub): one table of entries, each linked to the
/// item it is nested in, and each thread's innermost entry. Plain values throughout: a buffer
/// per thread inside a buffer of them retained and released the thread's buffer at every
/// push and pop (~1% of a slot-less `stats`). Events come in runs of a few threads', so the
/// last two threads' indices are kept at hand.
private struct ThreadStacks {
    private struct OpenItem {
        var id: UInt64
        var stub: UInt32
        /// The entry of the item this one runs inside, -1 for none.
        var outer: Int32
    }

    private var entries = PairingBuffer<OpenItem>(capacity: 64)
    /// Entries popped, handed out again last-popped first.
    private var freeEntries = PairingBuffer<Int32>(capacity: 64)
    /// Per thread (in order of first START_F): its innermost entry, -1 for none.
    private var innermost = PairingBuffer<Int32>()
    private var indexByTid: [Int32: Int] = [:]
    /// The last two threads looked up: the merge interleaves a few threads' runs, and hashing
    /// a tid into `indexByTid` at each switch was ~0.5% of a slot-less fan-out trace's `stats`.
    private var recentThreads = RecentTwo<Int32>(placeholder: 0)

    private mutating func index(of tid: Int32) -> Int {
        if let index = recentThreads.recall(tid) { return Int(index) }
        let index = indexByTid[tid] ?? {
            innermost.append(-1)
            indexByTid[tid] = innermost.count - 1
            return innermost.count - 1
        }()
        recentThreads.remember(tid, Int32(index))
        return index
    }

    mutating func push(tid: Int32, id: UInt64, stub: UInt32) {
        let thread = index(of: tid)
        let item = OpenItem(id: id, stub: stub, outer: innermost[thread])
        let entry: Int32
        if freeEntries.isEmpty {
            entries.append(item)
            entry = Int32(entries.count - 1)
        } else {
            entry = freeEntries.removeLast()
            entries[Int(entry)] = item
        }
        innermost[thread] = entry
    }

    /// The innermost open item's id if it has `stub` (and it is closed), else nil.
    mutating func pop(tid: Int32, stub: UInt32) -> UInt64? {
        let thread = index(of: tid)
        let entry = innermost[thread]
        guard entry >= 0, entries[Int(entry)].stub == stub else { return nil }
        innermost[thread] = entries[Int(entry)].outer
        freeEntries.append(entry)
        return entries[Int(entry)].id
    }
}
