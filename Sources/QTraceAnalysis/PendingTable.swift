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
//
// A slot is 32 bytes (`PendingSlot`), two to a cache line, rather than the 48 of a
// `PendingItem`, which straddled two lines every other slot: the clock readings keep 48 bits
// each (78 hours of accumulated time); an entry whose readings do not fit goes to the hash map.

import QTraceFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct PendingTable {
    static let blockBits = 10
    static let blockSize = 1 << blockBits
    /// A new slab is allowed while slabs * minimumFill <= count + freeSlabAllowance: at worst
    /// 1/64 of a slab's memory per pending item (512 bytes) beyond a small fixed allowance.
    /// Not less: when one of many queues lags (400 queues fed round robin), its few pending
    /// items keep every slab of the id range alive, a quarter full or less; at 1/256, 6.5% of
    /// the fan-out's items went to the hash map, and every insert then probed it.
    static let minimumFill = 64
    static let freeSlabAllowance = 16 * 256

    /// Each slab's first slot: `blockSize` slots of its own (growing the table never copies
    /// the slots; a slab never grows), aligned to a cache line by `SlabMemory`.
    private var slabStarts = UnsafeTable<UnsafeMutablePointer<PendingSlot>>()
    private var slabMemory = SlabMemory()
    /// Entries per slab (a slab whose count falls to 0 goes back to `freeSlabs`).
    private var slabCounts = UnsafeTable<Int32>()
    /// Per slab: item index - slot of every entry inserted since the slab was handed out, when
    /// they all agree (one thread enqueuing alone: its ids and items both count up), else
    /// `mixedOffsets`; `noOffset` before the first entry. Lets `prefetch` guess the item.
    private var slabItemOffsets = UnsafeTable<Int64>()
    private static let noOffset = Int64.max, mixedOffsets = Int64.min
    private var freeSlabs: [Int32] = []
    /// Each producer thread fills its own block and interleaved producers (with the consumers
    /// behind them) use a few blocks at once: the cache in front answers most lookups.
    private var slabOfBlock = CachedIdMap<Int32, 64>()
    private var others = IdMap<PendingItem>()
    private(set) var count = 0

    /// Inserts unless `id` is present; false when it was.
    mutating func insertIfAbsent(_ id: UInt64, _ entry: PendingItem) -> Bool {
        let block = id >> UInt64(Self.blockBits)
        let slot = Int(truncatingIfNeeded: id) & (Self.blockSize - 1)
        if let slab = slabOfBlock[block] ?? newSlab(for: block) {
            if !slabStarts[Int(slab)][slot].isEmpty || (others.count > 0 && others[id] != nil) { return false }
            if let packed = PendingSlot(entry) {
                slabStarts[Int(slab)][slot] = packed
                slabCounts[Int(slab)] += 1
                noteItemOffset(Int64(entry.item) - Int64(slot), slab: Int(slab))
            } else {
                _ = others.insertIfAbsent(id, entry)
            }
        } else if !others.insertIfAbsent(id, entry) {
            return false
        }
        count += 1
        return true
    }

    /// Removes and returns the entry of `id`. Inline: the entry returned in memory stalled
    /// the START that read it back (16-byte loads of narrower stores).
    @inline(__always)
    mutating func remove(_ id: UInt64) -> PendingItem? {
        let block = id >> UInt64(Self.blockBits)
        if let slab = slabOfBlock[block] {
            let slot = Int(truncatingIfNeeded: id) & (Self.blockSize - 1)
            let packed = slabStarts[Int(slab)][slot]
            if !packed.isEmpty {
                slabStarts[Int(slab)][slot] = .empty
                count -= 1
                slabCounts[Int(slab)] -= 1
                if slabCounts[Int(slab)] == 0 {
                    slabOfBlock.remove(block)
                    freeSlabs.append(slab)
                }
                return packed.entry
            }
        }
        guard others.count > 0, let entry = others.remove(id) else { return nil }
        count -= 1
        return entry
    }

    /// Prefetches `id`'s slot ahead of its removal, and returns where it is (nil when its
    /// block has no slab). Slabs never move nor go away while the table lives, so the address
    /// stays valid; read ahead of the events in between, the slot may still be empty or hold
    /// an earlier id's entry. `item` is the entry's item index when the slab's entries so far
    /// say where it is (else -1): a guess, to be prefetched at once instead of after the slot
    /// has arrived.
    @inline(__always)
    func prefetch(_ id: UInt64) -> (slot: UnsafeMutablePointer<PendingSlot>, item: Int)? {
        guard let slab = slabOfBlock[id >> UInt64(Self.blockBits)] else { return nil }
        let index = Int(truncatingIfNeeded: id) & (Self.blockSize - 1)
        let slot = slabStarts[Int(slab)] + index
        prefetchForRead(slot)
        let offset = slabItemOffsets[Int(slab)]
        let predicted = offset == Self.mixedOffsets || offset == Self.noOffset ? -1 : Int(offset) + index
        return (slot, predicted)
    }

    /// Keeps the slab's item offset while its entries agree (see `slabItemOffsets`).
    @inline(__always)
    private mutating func noteItemOffset(_ offset: Int64, slab: Int) {
        let known = slabItemOffsets[slab]
        if known != offset { slabItemOffsets[slab] = known == Self.noOffset ? offset : Self.mixedOffsets }
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
            slabItemOffsets.append(Self.noOffset)
            slabStarts.append(slabMemory.allocate(slots: Self.blockSize))
        }
        slabItemOffsets[Int(slab)] = Self.noOffset
        slabOfBlock.store(slab, at: block)
        return slab
    }
}

/// The slabs' memory, freed with the table. Each slab starts on a cache line, so that a slot
/// (32 bytes) never straddles two: `malloc` aligns to 16 bytes only, and with a slab at 16 or
/// 48 past a line every other slot of it spanned two lines, the second a miss of its own after
/// the announced START had prefetched the first (the slots' loads were 41% of `start`).
/// Slabs are cut from regions of several, whose pages are mapped at once (`PagePopulation`):
/// a slab of its own took 8 page faults when its slots were first written, 65% of flood's
/// faults (3.4M items pending at once: 3.3k slabs). Regions grow from 8 slabs to 64 (2 MiB),
/// so that a small trace maps little ahead.
/// The regions are mapped by `mmap` of their own, not `malloc`: glibc raises its threshold for
/// mapping an allocation of its own to the size of the largest mapped chunk freed (2 MiB
/// regions freed with the builder), and later allocations then come from its heap. Measured,
/// this alone moved the 900k-queue trace's `stats` peak by little (408,780 -> 406,500 KiB);
/// the regression it was aimed at came from elsewhere (docs/performance.md, run (37)).
private final class SlabMemory {
    private var regions: [UnsafeMutableRawBufferPointer] = []
    /// The current region's next slab and its end.
    private var next: UnsafeMutableRawPointer?
    private var end: UnsafeMutableRawPointer?
    private var regionSlabs = 8
    private static let largestRegionSlabs = 64

    func allocate(slots: Int) -> UnsafeMutablePointer<PendingSlot> {
        let bytes = slots * MemoryLayout<PendingSlot>.stride
        if next == nil || next! + bytes > end! { newRegion(slabBytes: bytes) }
        let slab = next!.bindMemory(to: PendingSlot.self, capacity: slots)
        next = next! + bytes
        slab.initialize(repeating: .empty, count: slots)
        return slab
    }

    private func newRegion(slabBytes: Int) {
        let bytes = regionSlabs * slabBytes
        // Page-aligned, so the slabs' 64-byte alignment holds; fresh anonymous pages are zeros.
        guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != MAP_FAILED else {
            fatalError("qtrace: out of memory for \(bytes) bytes of pending items")
        }
        regions.append(UnsafeMutableRawBufferPointer(start: mapped, count: bytes))
        (next, end) = (mapped, mapped + bytes)
        var from = UnsafeRawPointer(mapped)
        while let to = PagePopulation.populate(from: from, end: mapped + bytes) { from = to }
        regionSlabs = Swift.min(2 * regionSlabs, Self.largestRegionSlabs)
    }

    deinit { for region in regions { munmap(region.baseAddress, region.count) } }
}

/// A `PendingItem` in 32 bytes. `head`: the item (low 32 bits; all ones: an empty slot), the
/// domain + 1 (31 bits), in the backlog (top bit). The low 48 bits of `lows` hold the domain
/// busy, running and barrier readings; their top 16 bits hold the suspended reading in thirds.
struct PendingSlot {
    private var head: UInt64
    private var lows: (UInt64, UInt64, UInt64)

    private static let mask48: UInt64 = (1 << 48) - 1
    static let empty = PendingSlot(head: .max, lows: (0, 0, 0))

    private init(head: UInt64, lows: (UInt64, UInt64, UInt64)) {
        self.head = head
        self.lows = lows
    }

    /// nil when a reading needs more than 48 bits or the item or domain is out of range.
    @inline(__always)
    init?(_ entry: PendingItem) {
        guard entry.item >= 0, entry.domain >= -1, entry.domain < Int32.max,
              (entry.domainBusyAt | entry.runningAt | entry.barrierAt | entry.suspendedAt) <= Self.mask48
        else { return nil }
        head = UInt64(UInt32(entry.item)) | UInt64(UInt32(entry.domain + 1)) << 32
            | (entry.inBacklog ? 1 << 63 : 0)
        let s = entry.suspendedAt
        lows = (entry.domainBusyAt | s << 48, entry.runningAt | (s >> 16) << 48, entry.barrierAt | (s >> 32) << 48)
    }

    @inline(__always)
    var isEmpty: Bool { head == .max }

    @inline(__always)
    var item: Int32 { Int32(truncatingIfNeeded: head) }

    @inline(__always)
    var entry: PendingItem {
        let suspended = lows.0 >> 48 | (lows.1 >> 48) << 16 | (lows.2 >> 48) << 32
        return PendingItem(item: Int32(truncatingIfNeeded: head), domain: Int32(truncatingIfNeeded: (head >> 32) & 0x7FFF_FFFF) - 1,
                           inBacklog: head >> 63 != 0, domainBusyAt: lows.0 & Self.mask48,
                           runningAt: lows.1 & Self.mask48, barrierAt: lows.2 & Self.mask48, suspendedAt: suspended)
    }
}
