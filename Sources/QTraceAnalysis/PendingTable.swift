// Enqueued items waiting for their START, by item id. A trace can hold millions of them at
// once (a flood onto one serial queue), so this lookup decides the collector's speed.
//
// The shim draws item ids in per-thread blocks of 1024 consecutive values (docs/trace-format.md),
// so the pending ids of one thread are dense runs. Each block in use gets a slab of 1024
// slots indexed by the id's low bits: an insert or a removal touches the slot next to the
// previous one (cache-friendly) instead of a random hash slot, and the only hashed lookup is
// the small block -> slab map. Ids that do not come in blocks (other producers, damaged
// traces) would waste a slab each: slabs are only handed out while they stay well filled on
// average, and everything else goes to an ordinary hash map.

struct PendingTable {
    static let blockBits = 10
    static let blockSize = 1 << blockBits
    /// A new slab is allowed while slabs * minimumFill <= count + freeSlabAllowance: at worst
    /// 1/256 of a slab's memory per pending item (~190 bytes) beyond a small fixed allowance.
    static let minimumFill = 256
    static let freeSlabAllowance = 16 * 256

    /// One array of `blockSize` slots per slab (separate arrays: growing the table never
    /// copies the slots); an empty slot has `item == -1`.
    private var slabs = UnsafeTable<UnsafeTable<PendingItem>>()
    /// Entries per slab (a slab whose count falls to 0 goes back to `freeSlabs`).
    private var slabCounts = UnsafeTable<Int32>()
    private var freeSlabs: [Int32] = []
    /// Each producer thread fills its own block and interleaved producers (with the consumers
    /// behind them) use a few blocks at once: the cache in front answers most lookups.
    private var slabOfBlock = CachedIdMap<Int32>()
    private var others = IdMap<PendingItem>()
    private(set) var count = 0

    private static let emptySlot = PendingItem(item: -1, domain: -1, inBacklog: false, domainBusyAt: 0, runningAt: 0,
                                               barrierAt: 0, suspendedAt: 0)

    /// Inserts unless `id` is present; false when it was.
    mutating func insertIfAbsent(_ id: UInt64, _ entry: PendingItem) -> Bool {
        let block = id >> UInt64(Self.blockBits)
        let slot = Int(truncatingIfNeeded: id) & (Self.blockSize - 1)
        if let slab = slabOfBlock[block] ?? newSlab(for: block) {
            if slabs[Int(slab)][slot].item >= 0 || (others.count > 0 && others[id] != nil) { return false }
            slabs[Int(slab)][slot] = entry
            slabCounts[Int(slab)] += 1
        } else if !others.insertIfAbsent(id, entry) {
            return false
        }
        count += 1
        return true
    }

    /// Removes and returns the entry of `id`.
    mutating func remove(_ id: UInt64) -> PendingItem? {
        let block = id >> UInt64(Self.blockBits)
        if let slab = slabOfBlock[block] {
            let slot = Int(truncatingIfNeeded: id) & (Self.blockSize - 1)
            let entry = slabs[Int(slab)][slot]
            if entry.item >= 0 {
                slabs[Int(slab)][slot].item = -1
                count -= 1
                slabCounts[Int(slab)] -= 1
                if slabCounts[Int(slab)] == 0 {
                    slabOfBlock.remove(block)
                    freeSlabs.append(slab)
                }
                return entry
            }
        }
        guard others.count > 0, let entry = others.remove(id) else { return nil }
        count -= 1
        return entry
    }

    /// A slab for `block`, or nil when slabs would be too sparsely used.
    private mutating func newSlab(for block: UInt64) -> Int32? {
        let inUse = slabCounts.count - freeSlabs.count
        guard inUse * Self.minimumFill <= count + Self.freeSlabAllowance else { return nil }
        let slab: Int32
        if let reused = freeSlabs.popLast() {
            slab = reused
        } else {
            slab = Int32(slabCounts.count)
            slabCounts.append(0)
            slabs.append(UnsafeTable(repeating: Self.emptySlot, count: Self.blockSize))
        }
        slabOfBlock.store(slab, at: block)
        return slab
    }
}
