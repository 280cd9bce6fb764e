// One pass over the item array for everything the statistics take from each item: its
// queue's tallies and durations, its thread's, its code's and the main thread's. Each of them
// passed over the millions of items on its own before (seven passes on one load); the item
// array is the largest thing the collector holds, and every pass read all of it.
import QTraceFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct StatisticsItemPass {
    /// Queues whose recorders fit in `itemOrderBudget` take their items as they come; the
    /// others are grouped by queue afterwards (`QueueStats.all`), one queue at a time.
    static let itemOrderBudget = 64 << 20

    var itemsWithoutQueue = 0
    /// Per queue: its items; threads that ran one of them.
    let itemsPerQueue: ColumnBuffer<Int>
    let threadsServed: ColumnBuffer<Int>
    /// The queues' tallies when taken in item order (`accumulatesInItemOrder`), else nil.
    let queueTallies: QueueTallies?
    let threads: ThreadTally
    let codes: CodeTally
    var main: MainThreadTally?

    /// `itemOrder`: whether the queues' tallies are taken in item order (by default, when
    /// `accumulatesInItemOrder`). `twoThreads`: whether the queues' half of the pass and the
    /// threads' and codes' half run side by side (by default with two CPUs and 64k+ items,
    /// the decoding thread's policy); they share no state, so the figures are the same.
    init(_ model: TraceModel, itemOrder: Bool? = nil, twoThreads: DecodingThread = .automatic) {
        itemsPerQueue = ColumnBuffer(count: model.queues.count, repeating: 0)
        threadsServed = ColumnBuffer(count: model.queues.count, repeating: 0)
        queueTallies = itemOrder ?? Self.accumulatesInItemOrder(model) ? QueueTallies(model) : nil
        threads = ThreadTally(model)
        codes = CodeTally(model)
        main = MainThreadTally(model)
        let sideBySide = twoThreads == .always
            || (model.items.count >= Self.minimumItemsSideBySide && twoThreads.wanted(eventCount: model.items.count * 3))
        model.items.withUnsafeBufferPointer { items in
            if sideBySide { addSideBySide(items) } else { for i in items.indices { add(items[i], i) } }
        }
    }

    /// Below this many items a second thread is not worth starting.
    static let minimumItemsSideBySide = 1 << 16

    /// In item order, every queue's recorders are alive at once: at most `exactLimit` values of
    /// each of three recorders per queue, then 2 bytes per value (its bucket) of a wait, a run
    /// and a sync wait per item. Beyond the budget (the starfish's 20M items over 1,000
    /// queues, 900k queues), the grouped way holds 4 bytes per item and one queue's values.
    static func accumulatesInItemOrder(_ model: TraceModel) -> Bool {
        let queues = model.queues.count
        guard queues <= 1 << 16 else { return false }
        return queues * 3 * DurationRecorder.exactLimit * 8 + model.items.count * 6 <= itemOrderBudget
    }

    @inline(__always)
    private mutating func add(_ item: WorkItem, _ i: Int) {
        let facts = ItemFacts(item)
        Self.addToQueue(facts, item, itemsPerQueue, queueTallies, &itemsWithoutQueue)
        Self.addToThreadAndCode(facts, item, i, threads, threadsServed, codes, &main)
    }

    /// The two halves of `add`, each over every item on a thread of its own; each writes only
    /// its own tallies (the locals stand in for `self`, which both closures would capture).
    private mutating func addSideBySide(_ items: UnsafeBufferPointer<WorkItem>) {
        let (perQueue, tallies) = (itemsPerQueue, queueTallies)
        let (threads, served, codes) = (self.threads, threadsServed, self.codes)
        var withoutQueue = 0
        var main = self.main
        SideBySide.run({
            for i in items.indices {
                Self.addToQueue(ItemFacts(items[i]), items[i], perQueue, tallies, &withoutQueue)
            }
        }, {
            for i in items.indices {
                Self.addToThreadAndCode(ItemFacts(items[i]), items[i], i, threads, served, codes, &main)
            }
        })
        itemsWithoutQueue = withoutQueue
        self.main = main
    }

    /// The queues' half: items per queue, their tallies.
    @inline(__always)
    private static func addToQueue(_ facts: ItemFacts, _ item: WorkItem, _ itemsPerQueue: ColumnBuffer<Int>,
                                   _ queueTallies: QueueTallies?, _ itemsWithoutQueue: inout Int) {
        let q = item.queueIndex
        guard q >= 0 else {
            itemsWithoutQueue += 1
            return
        }
        itemsPerQueue[Int(q)] += 1
        queueTallies?.add(facts, queue: q)
    }

    /// The threads' and codes' half: per thread and (thread, queue) pair, the main thread's
    /// items, per code.
    @inline(__always)
    private static func addToThreadAndCode(_ facts: ItemFacts, _ item: WorkItem, _ i: Int, _ threads: ThreadTally,
                                           _ threadsServed: ColumnBuffer<Int>, _ codes: CodeTally,
                                           _ main: inout MainThreadTally?) {
        let q = item.queueIndex, t = item.threadIndex
        if t >= 0 {
            if q >= 0 && threads.add(facts, thread: t, queue: q) { threadsServed[Int(q)] += 1 }
            if q < 0 { threads.add(thread: t) }
            if t == main?.thread && item.depth == 0 { main!.add(facts, item, i) }
        }
        if item.siteRaw != 0 { codes.add(facts, item, site: Int(item.siteRaw) - 1) }
    }
}

/// What the statistics read of an item, each read once.
struct ItemFacts {
    static let batch = 256
    var wait: UInt64 = noTime
    var start: UInt64 = noTime
    var run: UInt64 = noTime
    var thread: Int32 = -1
    var synchronous = false, barrier = false, handler = false

    init() {}

    @inline(__always)
    init(_ item: WorkItem) {
        self.init(wait: item.wait ?? noTime, start: item.startTime, run: item.runTime ?? noTime, thread: item.threadIndex,
                  synchronous: item.kind.isSynchronous, barrier: item.isBarrier, handler: item.origin == .sourceHandler)
    }

    init(wait: UInt64, start: UInt64, run: UInt64, thread: Int32, synchronous: Bool, barrier: Bool, handler: Bool) {
        (self.wait, self.start, self.run, self.thread) = (wait, start, run, thread)
        (self.synchronous, self.barrier, self.handler) = (synchronous, barrier, handler)
    }

    /// A queue's items lie far apart in the item array (a starfish lap: 1,000 items apart),
    /// each read a cache miss: copied a batch at a time in a loop that does nothing else, the
    /// misses overlap instead of waiting one by one behind the recorders' work.
    static func gather(_ items: UnsafeBufferPointer<WorkItem>, _ indices: Slice<UnsafeBufferPointer<Int32>>,
                       into facts: UnsafeMutableBufferPointer<ItemFacts>) {
        var k = 0
        for i in indices {
            facts[k] = ItemFacts(items[Int(i)])
            k += 1
        }
    }
}

/// Each queue's `QueueStats.Accumulation`, made at its first item.
final class QueueTallies {
    /// Per queue: index into `tallies`, -1 before its first item.
    private let slots: ColumnBuffer<Int32>
    private let tallies = ColumnBuffer<QueueStats.Accumulation>(capacity: 16)
    private let traceEnd: UInt64

    init(_ model: TraceModel) {
        slots = ColumnBuffer(count: model.queues.count, repeating: -1)
        traceEnd = model.endTime
    }

    deinit { for k in 0..<tallies.count { tallies[k].release() } }

    @inline(__always)
    func add(_ facts: ItemFacts, queue q: Int32) {
        var slot = slots[Int(q)]
        if slot < 0 {
            slot = Int32(tallies.count)
            slots[Int(q)] = slot
            tallies.append(QueueStats.Accumulation(traceEnd: traceEnd))
        }
        tallies[Int(slot)].add(facts)
    }

    /// The tally of queue `q` (which had items).
    func tally(of q: Int) -> QueueStats.Accumulation { tallies[Int(slots[q])] }
}

/// Per thread: items run; per (thread, queue) pair, items and run time.
final class ThreadTally {
    /// A pair's items and run time.
    struct Pair {
        var items = 0
        var runNs: UInt64 = 0
    }

    /// Pairs held in one table indexed by thread and queue up to this many (16 MiB).
    static let denseLimit = 1 << 20
    let itemsPerThread: ColumnBuffer<Int>
    private let queueCount: Int
    /// Each pair at `thread * queueCount + queue` when threads × queues is at most
    /// `denseLimit` (a fan-out: 256 threads × 400 queues): one cache miss per item, where a
    /// slot table and the pairs' columns took three (a third of the item pass).
    private let dense: ColumnBuffer<Pair>?
    /// Else per pair key (`key`): its index into `sparsePairs`, and the pairs in order of first use.
    @exclusivity(unchecked) private var sparse = IdMap<Int32>()
    private let sparseThreads = ColumnBuffer<Int32>(capacity: 64)
    private let sparseQueues = ColumnBuffer<Int32>(capacity: 64)
    private let sparsePairs = ColumnBuffer<Pair>(capacity: 64)

    init(_ model: TraceModel, denseLimit: Int = ThreadTally.denseLimit) {
        itemsPerThread = ColumnBuffer(count: model.threads.count, repeating: 0)
        queueCount = model.queues.count
        let size = model.threads.count * model.queues.count
        dense = size <= denseLimit ? ColumnBuffer(count: size, repeating: Pair()) : nil
    }

    @inline(__always)
    func add(thread t: Int32) { itemsPerThread[Int(t)] += 1 }

    /// Counts the item; true when it is the first of its pair (a thread the queue had not used).
    @inline(__always)
    func add(_ facts: ItemFacts, thread t: Int32, queue q: Int32) -> Bool {
        itemsPerThread[Int(t)] += 1
        let run = facts.run == noTime ? 0 : facts.run
        if let dense {
            let cell = Int(t) * queueCount + Int(q)
            let first = dense[cell].items == 0
            dense[cell].items += 1
            dense[cell].runNs += run
            return first
        }
        return addSparse(run, thread: t, queue: q)
    }

    private func addSparse(_ run: UInt64, thread t: Int32, queue q: Int32) -> Bool {
        let key = UInt64(UInt32(bitPattern: t)) << 32 | UInt64(UInt32(bitPattern: q))
        if let s = sparse[key] {
            sparsePairs[Int(s)].items += 1
            sparsePairs[Int(s)].runNs += run
            return false
        }
        sparse[key] = Int32(sparsePairs.count)
        sparseThreads.append(t); sparseQueues.append(q); sparsePairs.append(Pair(items: 1, runNs: run))
        return true
    }

    /// Each thread's pairs (queues whose items it ran), in no particular order.
    func sharesByThread(threadCount: Int) -> [[ThreadQueueShare]] {
        var byThread = [[ThreadQueueShare]](repeating: [], count: threadCount)
        if let dense {
            for t in 0..<threadCount {
                let row = t * queueCount
                for q in 0..<queueCount where dense[row + q].items > 0 {
                    byThread[t].append(ThreadQueueShare(queue: q, items: dense[row + q].items, runNs: dense[row + q].runNs))
                }
            }
            return byThread
        }
        for s in 0..<sparsePairs.count {
            byThread[Int(sparseThreads[s])].append(ThreadQueueShare(queue: Int(sparseQueues[s]), items: sparsePairs[s].items,
                                                                    runNs: sparsePairs[s].runNs))
        }
        return byThread
    }
}

/// Per code: items, runs, waits, Swift jobs, queues; per site: items.
final class CodeTally {
    /// Per site: its code's index, -1 for none.
    private let codeOfSite: ColumnBuffer<Int32>
    let items: ColumnBuffer<Int>
    let jobs: ColumnBuffer<Int>
    let itemsPerSite: ColumnBuffer<Int>
    let runs: [DurationRecorder], waits: [DurationRecorder]
    @exclusivity(unchecked) var queueCounts: PairCounter

    init(_ model: TraceModel) {
        codeOfSite = ColumnBuffer(count: model.sites.count, repeating: -1)
        for s in model.sites.indices { codeOfSite[s] = model.sites[s].codeIndex.map(Int32.init) ?? -1 }
        items = ColumnBuffer(count: model.codes.count, repeating: 0)
        jobs = ColumnBuffer(count: model.codes.count, repeating: 0)
        itemsPerSite = ColumnBuffer(count: model.sites.count, repeating: 0)
        runs = DurationRecorder.many(model.codes.count)
        waits = DurationRecorder.many(model.codes.count)
        queueCounts = PairCounter(firstCount: model.codes.count, secondCount: model.queues.count)
    }

    @inline(__always)
    func add(_ facts: ItemFacts, _ item: WorkItem, site s: Int) {
        let code = codeOfSite[s]
        guard code >= 0 else { return }
        let c = Int(code)
        items[c] += 1
        itemsPerSite[s] += 1
        if facts.run != noTime { runs[c].record(facts.run) }
        if facts.wait != noTime { waits[c].record(facts.wait) }
        if item.queueIndex >= 0 { queueCounts.add(c, Int(item.queueIndex)) }
        // A task's jobs are all Swift Concurrency submissions (JOB records follow only those).
        if item.flags.contains(.swiftConcurrency) { jobs[c] += 1 }
    }
}

/// The main thread's top-level items (`MainThreadStats`).
struct MainThreadTally {
    let thread: Int32
    /// The main queue's index, -1 without one (an item without a queue then counts as on it).
    let mainQueue: Int32
    var items = 0
    let runs = DurationRecorder(), waits = DurationRecorder()
    var longest: [ItemSummary] = []
    var itemsOverFrame = 0
    var itemsOverHang = 0

    init?(_ model: TraceModel) {
        guard let t = model.threads.firstIndex(where: { $0.kind == .main }) else { return nil }
        thread = Int32(t)
        mainQueue = model.queues.firstIndex { $0.kind == .main }.map(Int32.init) ?? -1
    }

    mutating func add(_ facts: ItemFacts, _ item: WorkItem, _ i: Int) {
        items += 1
        if facts.wait != noTime && item.queueIndex == mainQueue { waits.record(facts.wait) }
        guard facts.run != noTime else { return }
        let run = facts.run
        runs.record(run)
        if run > Thresholds.frameNs { itemsOverFrame += 1 }
        if run > Thresholds.hangNs { itemsOverHang += 1 }
        longest.append(ItemSummary(item: i, queue: item.queue, startNs: item.startTime, runNs: run))
        if longest.count > 4 * MainThreadStats.longestItemCount { Self.trimLongest(&longest) }
    }

    static func trimLongest(_ list: inout [ItemSummary]) {
        list.sort { $0.runNs != $1.runNs ? $0.runNs > $1.runNs : $0.item < $1.item }
        if list.count > MainThreadStats.longestItemCount { list.removeLast(list.count - MainThreadStats.longestItemCount) }
    }
}

/// A growable buffer of values written in place: an array in a struct costs a uniqueness check
/// (a runtime call) per write, and the pass writes several per item.
/// Buffers of 1 MiB or more are mapped on their own (`LargeBlock`), not taken from `malloc`.
final class ColumnBuffer<Element> {
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) private(set) var count: Int
    @exclusivity(unchecked) private var capacity: Int

    init(count: Int, repeating value: Element) {
        capacity = Swift.max(count, 1)
        base = LargeBlock.allocate(capacity: capacity)
        base.initialize(repeating: value, count: count)
        self.count = count
    }

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1)
        base = LargeBlock.allocate(capacity: self.capacity)
        count = 0
    }

    deinit {
        base.deinitialize(count: count)
        LargeBlock.deallocate(base, capacity: capacity)
    }

    subscript(i: Int) -> Element {
        @inline(__always) get { base[i] }
        @inline(__always) _modify { yield &base[i] }
    }

    func append(_ value: Element) {
        if count == capacity {
            let larger: UnsafeMutablePointer<Element> = LargeBlock.allocate(capacity: 2 * capacity)
            larger.moveInitialize(from: base, count: count)
            LargeBlock.deallocate(base, capacity: capacity)
            base = larger
            capacity *= 2
        }
        (base + count).initialize(to: value)
        count += 1
    }

    var array: [Element] { Array(UnsafeBufferPointer(start: base, count: count)) }
}

/// Memory of 1 MiB or more mapped with `mmap` of its own, and unmapped when freed. Freed
/// through `malloc`, such a block raises glibc's threshold for mapping big allocations to its
/// size (up to 32 MiB), and the allocations after it then come from the heap, which only grows:
/// with the statistics' 14 MB table of (thread, queue) pairs freed through `malloc`, the
/// 900k-queue trace's `stats` peaked at 406,500 KiB, mapped this way at 395,992 KiB (the rest
/// of that regression was `TraceStatistics`' own: docs/performance.md, run (37)).
enum LargeBlock {
    static let threshold = 1 << 20

    static func allocate<Element>(capacity: Int) -> UnsafeMutablePointer<Element> {
        let bytes = capacity * MemoryLayout<Element>.stride
        guard bytes >= threshold else { return .allocate(capacity: capacity) }
        guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != MAP_FAILED else {
            fatalError("qtrace: out of memory for \(bytes) bytes of statistics")
        }
        return mapped.bindMemory(to: Element.self, capacity: capacity)
    }

    /// Frees what `allocate` gave for `capacity` elements (its size tells which way it went).
    static func deallocate<Element>(_ base: UnsafeMutablePointer<Element>, capacity: Int) {
        let bytes = capacity * MemoryLayout<Element>.stride
        if bytes >= threshold { munmap(base, bytes) } else { base.deallocate() }
    }
}
