// The slot-less pairing's pending items (SlotlessPairing.swift): each queue's ENQUEUE_F
// items in enqueue order, in chains of cache-line chunks taken from one arena.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif


/// The pending items of each queue in the order they were enqueued. A serial queue starts its
/// oldest pending item, so a START's item is almost always at the head of its queue's list
/// (a concurrent queue's STARTs, written by several threads, may come a few places out of
/// order): one read of memory just read, where a table of a million pending triples costs
/// cache misses per item. Items taken from inside the list are marked, and skipped once the
/// head reaches them.
///
/// A list is a chain of 64-byte chunks (`EntryChunks`) rather than a buffer of its own: with a
/// thousand queues each holding hundreds of items, a thousand buffers put the thousand list
/// ends on a thousand pages, and an ENQUEUE_F's append waited for a page walk (30% of the
/// merge loop on a slot-less starfish trace). Chunks come from one arena, and a chunk the head
/// leaves is the next one handed out: the list ends share a few recently used lines.
struct PendingItems {
    struct Key: Equatable {
        var stub: UInt32
        var context: UInt64
        var queue: UInt64
    }

    struct Item {
        var id: UInt64
        var kind: UInt32
    }

    private var chunks: EntryChunks
    private var lists = PairingBuffer<QueueList>(capacity: 256)
    private var listOfQueue = QueueMap()
    private(set) var count = 0
    /// `startedList`'s last answer (none yet while the list is -1).
    private var lastStartedQueue: UInt64 = 0
    private var lastStartedList: Int32 = -1
    /// `peekedList`'s last two answers (a queue's list never changes: queues are never removed
    /// from the table).
    private var peekedLists = RecentTwo<UInt64>(placeholder: 0)

    /// `arenaChunks`: the chunk arena's first size (tests make it small, to see it grow).
    init(arenaChunks: Int = EntryChunks.initialChunks) { chunks = EntryChunks(capacity: arenaChunks) }

    /// Adds an item of the triple, after those already pending.
    mutating func append(_ key: Key, _ item: Item) {
        let list = listOfQueue.index(of: key.queue) ?? {
            lists.append(QueueList())
            listOfQueue.insert(key.queue, index: Int32(lists.count - 1))
            return Int32(lists.count - 1)
        }()
        lists[Int(list)].append(EntryWord.pending(key, kind: item.kind), id: UInt32(truncatingIfNeeded: item.id), &chunks)
        count += 1
    }

    /// Prefetches the queue's entry in the queue table (a hint: where a lookup starts).
    func prefetchQueue(_ queue: UInt64) { listOfQueue.prefetch(queue) }

    /// The id and position of the triple's oldest pending item at or after position `from`
    /// (positions count a queue's items from its first), left pending.
    mutating func peekOldest(_ key: Key, from: Int) -> (id: UInt64, position: Int)? {
        guard let match = EntryWord.match(key), let list = peekedList(key.queue),
              let found = lists[Int(list)].find(match, from: from, chunks) else { return nil }
        return (UInt64(chunks.id(found.chunk, found.slot)), found.position)
    }

    /// Removes and returns the triple's oldest pending item.
    mutating func takeOldest(_ key: Key) -> Item? {
        guard let match = EntryWord.match(key), let list = startedList(key.queue),
              let found = lists[Int(list)].find(match, from: 0, chunks) else { return nil }
        let word = chunks.word(found.chunk, found.slot)
        let item = Item(id: UInt64(chunks.id(found.chunk, found.slot)), kind: EntryWord.kind(word))
        lists[Int(list)].take(found, &chunks)
        count -= 1
        return item
    }

    /// The list of the queue a scout peeks at: a thread runs a queue's items in a row, and the
    /// scouts of two threads may take turns, so the last two answers are kept at hand (the
    /// queue table outgrows the cache: 10,000 queues on a 60M-event starfish trace).
    private mutating func peekedList(_ queue: UInt64) -> Int32? {
        if let list = peekedLists.recall(queue) { return list }
        guard let list = listOfQueue.index(of: queue) else { return nil }
        peekedLists.remember(queue, list)
        return list
    }

    /// The list of the queue a START ran on: a thread runs a queue's items in a row, so the
    /// last START's queue is kept at hand.
    private mutating func startedList(_ queue: UInt64) -> Int32? {
        if queue == lastStartedQueue && lastStartedList >= 0 { return lastStartedList }
        guard let list = listOfQueue.index(of: queue) else { return nil }
        (lastStartedQueue, lastStartedList) = (queue, list)
        return list
    }

    /// A pending entry's first word: the context (bits 0..47), the stub (48..55), the kind
    /// (56..59), and two bits that keep it from matching any START: `wide` (the ENQUEUE_F's
    /// context had more than 48 bits, a START_F's never has) and `taken`.
    private enum EntryWord {
        static let contextBits: UInt64 = 0x0000_FFFF_FFFF_FFFF
        static let wide: UInt64 = 1 << 62
        static let taken: UInt64 = 1 << 63
        /// The bits a START's key is compared with.
        static let matched: UInt64 = 0x00FF_FFFF_FFFF_FFFF | wide | taken

        static func pending(_ key: Key, kind: UInt32) -> UInt64 {
            (key.context & contextBits) | UInt64(key.stub & 0xFF) << 48 | UInt64(kind & 0xF) << 56
                | (key.context > contextBits || key.stub > 0xFF ? wide : 0)
        }

        /// What a pending entry of `key`'s triple holds in its `matched` bits; nil when no
        /// entry can (a context or stub wider than a START_F's record holds).
        static func match(_ key: Key) -> UInt64? {
            guard key.context <= contextBits && key.stub <= 0xFF else { return nil }
            return key.context | UInt64(key.stub) << 48
        }

        static func kind(_ word: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: (word >> 56) & 0xF) }
    }

    /// Where an entry lies: its chunk and slot, and its position in its queue's list.
    private struct Found {
        var chunk: Int32
        var slot: Int
        var position: Int
    }

    /// One queue's pending items: a chain of chunks from `head` (the oldest item at
    /// `headSlot`) to `tail` (`tailCount` slots used); empty when `head` is -1.
    private struct QueueList {
        var head: Int32 = -1
        var tail: Int32 = -1
        var headSlot = 0
        var tailCount = 0
        /// The position of the head chunk's first slot: an entry's position stays the same
        /// while it is pending (the scouts' peeks name items by position).
        var headPosition = 0

        /// How far past the head a START's item is looked for. What lies before it are items
        /// dequeued whose START is not written yet (one per thread at most) or was lost: a
        /// trace made by a program is never near this, and a hostile one cannot make reading
        /// quadratic.
        static let searchLimit = 4096

        mutating func append(_ word: UInt64, id: UInt32, _ chunks: inout EntryChunks) {
            if tail < 0 || tailCount == EntryChunks.slots {
                let fresh = chunks.allocate()
                if tail < 0 { head = fresh; headSlot = 0 } else { chunks.setNext(tail, fresh) }
                tail = fresh
                tailCount = 0
            }
            chunks.set(tail, tailCount, word: word, id: id)
            tailCount &+= 1
        }

        /// The first entry whose `matched` bits are `match`, at or after position `from`
        /// and within the search limit.
        @inline(__always)
        func find(_ match: UInt64, from: Int, _ chunks: EntryChunks) -> Found? {
            guard head >= 0 else { return nil }
            let end = headPosition &+ headSlot &+ Self.searchLimit
            var chunk = head
            var position = headPosition
            var slot = headSlot
            if from > position &+ slot {
                // A peek after an earlier one: skip the chunks before `from`.
                while from >= position &+ EntryChunks.slots && chunk != tail {
                    chunk = chunks.next(chunk)
                    position &+= EntryChunks.slots
                }
                slot = Swift.max(chunk == head ? headSlot : 0, from &- position)
            }
            while true {
                let used = chunk == tail ? tailCount : EntryChunks.slots
                while slot < used {
                    if position &+ slot >= end { return nil }
                    if chunks.word(chunk, slot) & EntryWord.matched == match {
                        // The STARTs after this one take the items after it: a queue's head
                        // chunk was written long ago, and reading it was a cache miss per chunk.
                        if chunk != tail { chunks.prefetch(chunks.next(chunk)) }
                        return Found(chunk: chunk, slot: slot, position: position &+ slot)
                    }
                    slot &+= 1
                }
                if chunk == tail { return nil }
                chunk = chunks.next(chunk)
                position &+= EntryChunks.slots
                slot = 0
            }
        }

        /// Marks `found` taken, and moves the head past the taken entries, giving back the
        /// chunks it leaves.
        mutating func take(_ found: Found, _ chunks: inout EntryChunks) {
            chunks.markTaken(found.chunk, found.slot)
            while chunks.word(head, headSlot) & EntryWord.taken != 0 {
                headSlot &+= 1
                if head == tail && headSlot == tailCount {
                    chunks.release(head)
                    self = QueueList(headPosition: headPosition &+ EntryChunks.slots)
                    return
                }
                if headSlot == EntryChunks.slots {
                    let next = chunks.next(head)
                    chunks.release(head)
                    head = next
                    headSlot = 0
                    headPosition &+= EntryChunks.slots
                }
            }
        }

        private init(headPosition: Int) { self.headPosition = headPosition }
        init() {}
    }

    /// Queue address -> list index: open addressing, linear probing, grown at half full
    /// (queues are never removed: an address reused by a new queue keeps its list). A key and
    /// its value share a 16-byte cell: a lookup touches one line.
    private struct QueueMap {
        private struct Cell {
            var key: UInt64 = 0
            var value: Int32 = 0
        }

        private var cells = [Cell](repeating: Cell(), count: 256)
        private var used = 0

        private func home(_ key: UInt64) -> Int {
            Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20) & (cells.count - 1)
        }

        /// Queue 0 (none) is kept apart: 0 marks a free key.
        func index(of key: UInt64) -> Int32? {
            cells.withUnsafeBufferPointer { cells in
                var i = home(key &+ 1)
                while cells[i].key != 0 {
                    if cells[i].key == key &+ 1 { return cells[i].value }
                    i = (i &+ 1) & (cells.count - 1)
                }
                return nil
            }
        }

        func prefetch(_ key: UInt64) {
            cells.withUnsafeBufferPointer { prefetchForRead($0.baseAddress.unsafelyUnwrapped + home(key &+ 1)) }
        }

        mutating func insert(_ key: UInt64, index value: Int32) {
            if (used + 1) * 2 > cells.count { grow() }
            place(Cell(key: key &+ 1, value: value))
            used += 1
        }

        private mutating func place(_ cell: Cell) {
            var i = home(cell.key)
            while cells[i].key != 0 { i = (i &+ 1) & (cells.count - 1) }
            cells[i] = cell
        }

        private mutating func grow() {
            let old = cells
            cells = [Cell](repeating: Cell(), count: old.count * 2)
            for cell in old where cell.key != 0 { place(cell) }
        }
    }
}

/// The chunks of every queue's pending list, 64 bytes each and aligned to a cache line: five
/// entry words (`PendingItems.EntryWord`), their five 32-bit ids, and the index of the list's
/// next chunk. Freed chunks are handed out again last-freed first (a chunk is freed as the
/// head leaves it, just read), from a stack of their indices apart from the chunks (popping
/// a chain threaded through the freed chunks read a cold line per allocation: 0.4 s of a
/// 60M-event trace's `stats`). Copies share the memory, as `PairingBuffer`'s do.
struct EntryChunks {
    static let slots = 5
    private static let chunkSize = 64
    private static let idsOffset = 40
    private static let nextOffset = 60
    /// The arena grows in whole huge pages, which it asks for: a million pending items span
    /// 13 MB, and the thousand list ends an ENQUEUE_F's append lands on lay on a thousand
    /// 4 KiB pages, a page walk per append (perf of a 60M-event trace's `stats`: the merge's
    /// own samples 14.1K with 4 KiB pages, 11.6K with huge ones).
    private static let hugePage = 1 << 21
    /// The arena's first size: 64 MiB of address space (a million chunks, five million items
    /// pending), of which only the pages used are ever touched. Starting at one huge page, its
    /// doublings on a 6M-event starfish trace wrote every chunk again into freshly faulted
    /// pages (the memmove and its page faults: ~2% of a slot-less `stats`).
    static let initialChunks = 1 << 20

    private final class Memory {
        let base: UnsafeMutableRawPointer
        init(chunks: Int) {
            let bytes = chunks * EntryChunks.chunkSize
            var memory: UnsafeMutableRawPointer?
            guard posix_memalign(&memory, EntryChunks.hugePage, bytes) == 0, let memory else {
                fatalError("out of memory: \(bytes) bytes for the slot-less items' lists")
            }
            _ = madvise(memory, bytes, Int32(MADV_HUGEPAGE))
            base = memory
        }
        deinit { free(base) }
    }

    private var memory: Memory
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// Chunks handed out at least once; those below it and not in use are on `freed`.
    private var used = 0
    private var freed = PairingBuffer<Int32>(capacity: 1024)

    init(capacity: Int = EntryChunks.initialChunks) {
        self.capacity = capacity
        memory = Memory(chunks: capacity)
        base = memory.base
    }

    @inline(__always)
    private func chunk(_ c: Int32) -> UnsafeMutableRawPointer { base + Int(c) &* Self.chunkSize }

    @inline(__always)
    func word(_ c: Int32, _ slot: Int) -> UInt64 { chunk(c).load(fromByteOffset: slot &* 8, as: UInt64.self) }

    @inline(__always)
    func id(_ c: Int32, _ slot: Int) -> UInt32 { chunk(c).load(fromByteOffset: Self.idsOffset &+ slot &* 4, as: UInt32.self) }

    @inline(__always)
    func prefetch(_ c: Int32) { prefetchForRead(chunk(c)) }

    @inline(__always)
    func next(_ c: Int32) -> Int32 { chunk(c).load(fromByteOffset: Self.nextOffset, as: Int32.self) }

    @inline(__always)
    func setNext(_ c: Int32, _ next: Int32) { chunk(c).storeBytes(of: next, toByteOffset: Self.nextOffset, as: Int32.self) }

    @inline(__always)
    func set(_ c: Int32, _ slot: Int, word: UInt64, id: UInt32) {
        chunk(c).storeBytes(of: word, toByteOffset: slot &* 8, as: UInt64.self)
        chunk(c).storeBytes(of: id, toByteOffset: Self.idsOffset &+ slot &* 4, as: UInt32.self)
    }

    func markTaken(_ c: Int32, _ slot: Int) {
        chunk(c).storeBytes(of: word(c, slot) | 1 << 63, toByteOffset: slot &* 8, as: UInt64.self)
    }

    /// A chunk whose next is -1.
    mutating func allocate() -> Int32 {
        let c: Int32
        if !freed.isEmpty {
            c = freed.removeLast()
        } else {
            if used == capacity { grow() }
            c = Int32(used)
            used += 1
        }
        setNext(c, -1)
        return c
    }

    mutating func release(_ c: Int32) { freed.append(c) }

    private mutating func grow() {
        capacity *= 2
        let larger = Memory(chunks: capacity)
        larger.base.copyMemory(from: base, byteCount: used * Self.chunkSize)
        memory = larger
        base = larger.base
    }
}
