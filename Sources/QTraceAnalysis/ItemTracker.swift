// The work items while the model is built: the item table (the model's own array when
// `Analysis.buildModel(file:)` lends its buffer), the enqueues waiting for their START (the
// pending table, keyed by item id), what WORKITEM_CREATE said about DispatchWorkItems, and
// the sync items that run on another thread than their blocked caller.
// Queues, threads and groups an item touches are their collaborators' business; the
// ModelBuilder+Items.swift handlers wire them.
import QTraceFormat

struct ItemTracker {
    /// The model's items: in the final array's own buffer when `Analysis.buildModel(file:)`
    /// lends it (sized for one item per event, the most an event makes; untouched pages cost
    /// no memory), else growing and copied out once by `takeItems`.
    private var table: UnsafeTable<WorkItem>
    /// Enqueued items not started yet, by id.
    private var pending = PendingTable()
    /// Further pending enqueues of an id already pending (a DispatchWorkItem submitted twice).
    private var pendingOverflow: [UInt64: [PendingItem]] = [:]
    private var workItems = IdMap<WorkItemInfo>()
    /// Sync items that run on another thread than their caller: item → caller thread.
    private var syncCallers = IdMap<Int32>()
    /// Below this many pending items, their slots and items are likely cached. Each pending
    /// item holds a line of its own in the item array and one in the slabs (the items done
    /// around it are not read again), so 2,048 of them already fill a core's 256 KiB to
    /// 1 MiB of L2: the fan-out, at 2k-32k pending through most of its STARTs, gained 7%
    /// from announcing them (the threshold was 32k); the flow stays below, at 1,024.
    static let prefetchMinimumPending = 2048
    /// The pending slots of the last two STARTs announced ahead, latest first
    /// (`prefetchForStart`; nil: not in a slab).
    private var announcedSlots: (UnsafeMutablePointer<PendingSlot>?, UnsafeMutablePointer<PendingSlot>?) = (nil, nil)

    /// The buffer lent by `adopt`, whose pages are populated ahead of the items.
    private var lent: UnsafeMutableBufferPointer<WorkItem>?
    /// The first item whose bytes are not all populated yet (`populateAhead`): Int.max when
    /// not populating (no lent buffer, or the kernel refused).
    private var populatedItems = Int.max

    init(capacity: Int = 16) {
        table = UnsafeTable(capacity: capacity)
    }

    var count: Int { table.count }

    subscript(i: Int) -> WorkItem {
        @inline(__always) get { table[i] }
        @inline(__always) nonmutating _modify { yield &table[i] }
    }

    /// The largest raw site id an item was added with (`resolveSites`).
    private var largestSiteRaw: UInt32 = 0

    /// Appends `item`, returning its index.
    @inline(__always)
    mutating func add(_ item: WorkItem) -> Int32 {
        if table.count >= populatedItems { populateAhead() }
        largestSiteRaw = Swift.max(largestSiteRaw, item.siteRaw)
        table.append(item)
        return Int32(table.count - 1)
    }

    /// Fills `buffer` (the model's item array, uninitialized) from now on; see UnsafeTable.adopt.
    mutating func adopt(_ buffer: UnsafeMutableBufferPointer<WorkItem>) {
        table.adopt(buffer)
        lent = buffer
        populatedItems = 0
    }

    /// The item array's fresh pages were a fault each as the items reached them (a 4 KiB page
    /// per 57 items: 17.7k of the fan-out's 30k faults, ~4 us each on this VM): the next
    /// `PagePopulation.step` bytes are mapped at once, without a trap per page.
    @inline(never)
    private mutating func populateAhead() {
        populatedItems = .max
        guard let lent, let base = lent.baseAddress,
              let to = PagePopulation.populate(from: base + table.count, end: base + lent.count) else { return }
        populatedItems = (to - UnsafeRawPointer(base)) / MemoryLayout<WorkItem>.stride
    }

    /// Ends a loan (`adopt`): the buffer's owner holds the items; the tracker is emptied.
    mutating func endLoan() { self = ItemTracker() }

    /// The items, for the model; the tracker is emptied.
    mutating func takeItems() -> [WorkItem] {
        let all = Array(table)
        self = ItemTracker()
        return all
    }

    /// Every item, in order (copies share the table: read only).
    var all: UnsafeTable<WorkItem> { table }

    // MARK: Pending enqueues

    @inline(__always)
    mutating func addPending(_ id: UInt64, _ entry: PendingItem) {
        if !pending.insertIfAbsent(id, entry) { pendingOverflow[id, default: []].append(entry) }
    }

    /// The oldest pending enqueue of `id` (a DispatchWorkItem keeps its id across submissions).
    @inline(__always)
    mutating func takePending(_ id: UInt64) -> PendingItem? {
        guard let entry = pending.remove(id) else { return nil }
        // Checked first: even an empty Dictionary hashes the key (SipHash) on lookup.
        if !pendingOverflow.isEmpty, var more = pendingOverflow[id] {
            _ = pending.insertIfAbsent(id, more.removeFirst())
            pendingOverflow[id] = more.isEmpty ? nil : more
        }
        return entry
    }

    /// A START is announced ahead (`TraceFile.forEachEvent(announceStart:_:)`): it will read
    /// its pending entry, then its item, both written at the enqueue long before (two
    /// dependent cache misses). The entry is prefetched now; the item two announced STARTs
    /// later, when the entry it is found in has arrived; at once as well when the slab can
    /// tell where the item is (`PendingTable.prefetch`). Mutating only so that the tracker is
    /// accessed in place (a non-mutating call from the caller's closure copied it).
    @inline(__always)
    mutating func prefetchForStart(_ id: UInt64) {
        guard wantsStartsAnnounced else { return }
        let found = pending.prefetch(id)
        if let item = found?.item, item >= 0, item < table.count { table.prefetch(item) }
        let slot = found?.slot
        if let earlier = announcedSlots.1 {
            let i = Int(earlier.pointee.item)  // -1 when empty
            if i >= 0 && i < table.count { table.prefetch(i) }
        }
        announcedSlots = (slot, announcedSlots.0)
    }

    /// Whether STARTs are worth announcing: few pending items stay in the cache (the flow,
    /// 1,024 at most, paid ~5% for the announcements and ~4% more for reading ahead).
    @inline(__always)
    var wantsStartsAnnounced: Bool { pending.count >= Self.prefetchMinimumPending }

    // MARK: DispatchWorkItems and sync callers

    /// WORKITEM_CREATE: the block flags (low 24 bits) and QoS (high 8) of a DispatchWorkItem.
    mutating func workItemCreated(id: UInt64, flagsAndQoS arg: UInt32) {
        workItems[id] = WorkItemInfo(blockFlags: arg & 0xFF_FFFF, qos: UInt8(arg >> 24))
    }

    /// What WORKITEM_CREATE said about item id `id` (checked for emptiness first: most traces
    /// have no DispatchWorkItem).
    @inline(__always)
    func workItem(_ id: UInt64) -> WorkItemInfo? { workItems.count == 0 ? nil : workItems[id] }

    /// Sync item `i` runs on another thread than `caller`, which stays blocked until its END.
    mutating func runsElsewhere(_ i: Int32, caller: Int32) { syncCallers[UInt64(i)] = caller }

    /// The blocked caller of sync item `i` when another thread ran it (removed).
    @inline(__always)
    mutating func takeSyncCaller(of i: Int) -> Int32? {
        syncCallers.count > 0 ? syncCallers.remove(UInt64(i)) : nil
    }

    /// The item `id` that thread `t` enqueued last (a JOB follows its ENQUEUE at once).
    func recentItem(id: UInt64, submitter t: Int32) -> Int32? {
        var i = table.count - 1
        let stop = Swift.max(0, table.count - 256)
        while i >= stop {
            if table[i].id == id && table[i].submitterIndex == t { return Int32(i) }
            i -= 1
        }
        return nil
    }

    /// Site ids → model indexes in every item (in the tracker's own table, before it becomes
    /// the model's array: rewriting that array while the lent buffer's owner still holds it
    /// would copy every item).
    /// A resolver that keeps every id the items hold (a shim's trace: site ids 1, 2, 3... in
    /// the order of their SITE records) leaves the items as they are: the pass read and wrote
    /// back every item (72 bytes each: flood's 3.4M items, ~2% of its `stats`).
    mutating func resolveSites(_ resolver: SiteResolver) {
        guard !resolver.keepsEveryID(upTo: largestSiteRaw) else { return }
        let resolve = resolver.resolve
        for i in 0..<table.count where table[i].siteRaw != 0 { table[i].siteRaw = resolve(table[i].siteRaw) }
    }

    /// The largest part of a wait (ties go to the earlier cause).
    static func dominantCause(_ split: WaitSplit) -> WaitCause {
        var cause = WaitCause.behindPrevious, most = split.behindPrevious
        if split.behindBarrier > most { cause = .behindBarrier; most = split.behindBarrier }
        if split.suspended > most { cause = .suspended; most = split.suspended }
        if split.forThread > most { cause = .thread }
        return cause
    }
}

struct WorkItemInfo {
    var blockFlags: UInt32
    var qos: UInt8
    /// DISPATCH_BLOCK_BARRIER.
    var isBarrier: Bool { blockFlags & 0x1 != 0 }
}

/// An enqueued item waiting for its START, with its queue's clocks at the enqueue.
struct PendingItem {
    var item: Int32
    var domain: Int32
    /// Counted in the backlog (after and notify items are not: they are not in the queue yet).
    var inBacklog: Bool
    var domainBusyAt: UInt64
    var runningAt: UInt64
    var barrierAt: UInt64
    var suspendedAt: UInt64
}
