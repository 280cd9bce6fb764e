// Synthetic report inputs for tests and the benchmark.
//
// A small simulation of libdispatch scheduling, so that the pictures look like a real program:
// a main thread, the five global queues, private serial and concurrent queues in a target
// tree, a worker pool that grows when workers block and retires idle workers, sync calls
// from main-queue items (nested on the main thread, the caller blocked meanwhile), barriers,
// group fan-outs with a notify, a timer source that is suspended for a while, annotations.
// The simulation decides when each item runs where (its schedule, kept in report columns);
// SyntheticReport+Trace writes that schedule as the shim's records and reads them back through
// the analysis, which computes every figure of the report. Deterministic for a given seed.
import QTraceViewModel
import Foundation

public enum SyntheticReport {
    /// Labels a hostile program could choose; the report must show them as text.
    public static let hostileLabels = [
        "<img src=x onerror=alert(1)>",
        "</script><script>alert(1)</script>",
        "\u{2028}\"'&amp;<!--",
    ]

    /// A report input with about `items` work items, at most `threads` worker threads and
    /// `queues` queues (the main queue and the five global queues included); with
    /// `codeIdentity`, the items' codes and call sites and Swift tasks too.
    public static func make(items: Int, threads: Int = 8, queues: Int = 12, seed: UInt64 = 1,
                            hostile: Bool = false, codeIdentity: Bool = true) -> ReportInput {
        trace(items: items, threads: threads, queues: queues, seed: seed, hostile: hostile, codeIdentity: codeIdentity).input
    }

    /// `make`'s input, with the number of trace events the analysis read to build it.
    public static func trace(items: Int, threads: Int = 8, queues: Int = 12, seed: UInt64 = 1,
                             hostile: Bool = false, codeIdentity: Bool = true) -> (input: ReportInput, events: Int) {
        var simulation = Simulation(itemCount: max(items, 1), maxWorkers: max(threads, 1),
                                    queueCount: max(queues, 6), seed: seed, hostile: hostile)
        simulation.codeIdentity = codeIdentity
        simulation.run()
        return simulation.analysedInput()
    }
}

/// SplitMix64: small, fast and good enough for test data.
package struct SyntheticRandom {
    var state: UInt64

    package init(state: UInt64) { self.state = state }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }

    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// Exponentially distributed with the given mean.
    mutating func exponential(_ mean: Double) -> Double { -mean * log1p(-unit()) }

    /// Log-normal around `median` (sigma in natural-log units).
    mutating func logNormal(median: Double, sigma: Double) -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        return median * exp(sigma * normal)
    }
}

struct Worker {
    var thread: Int
    var freeAt: Int64
    var blockedFrom: Int64 = 0
    var blockedUntil: Int64 = 0
}

/// An item waiting to enter the simulation at a given time (notify blocks, source handlers).
struct Deferred {
    var ready: Int64
    var item: ReportItem
}

struct Simulation {
    let itemCount: Int
    let maxWorkers: Int
    let queueCount: Int
    let hostile: Bool
    var codeIdentity = true
    var random: SyntheticRandom

    let ncpu = 2
    let meanGapNs = 22_000.0
    let idleRetireNs: Int64 = 60_000_000
    /// A burst of work (4x the arrival rate, workers blocking) starts every burstPeriodNs.
    var burstPeriodNs: Int64 { max(400_000_000, Int64(meanGapNs * Double(itemCount)) / 12) }
    let burstNs: Int64 = 14_000_000
    var inBurst: Bool { now % burstPeriodNs >= burstPeriodNs / 2 && now % burstPeriodNs < burstPeriodNs / 2 + burstNs }
    let dispatchLatencyNs: Int64 = 2_500

    var queues: [ReportQueue] = []
    /// The private serial queues (fixed once the queues are made).
    var privateSerials: [Int] = []
    /// Nearest serial queue at or above each queue (the one that serialises it), or -1.
    var serialRoot: [Int] = []
    var serialFreeAt: [Int64] = []
    var lastOnSerialRoot: [Int] = []
    var threads: [ReportThread] = []
    var workers: [Worker] = []
    var mainFreeAt: Int64 = 0
    var items = ReportItems()
    var blocked: [ReportBlockedInterval] = []
    var groups: [ReportGroup] = []
    var deferred: [Deferred] = []
    /// The timer handler items and the fire count each run reports (the source's data).
    var timerData: [Int: Int64] = [:]
    /// The `after` items and the time they were due.
    var afterDeadline: [Int: Int64] = [:]
    var now: Int64 = 0
    /// A sync item made by runOnMain, appended right after its caller.
    var pendingSync: ReportItem?

    init(itemCount: Int, maxWorkers: Int, queueCount: Int, seed: UInt64, hostile: Bool) {
        self.itemCount = itemCount
        self.maxWorkers = maxWorkers
        self.queueCount = queueCount
        self.hostile = hostile
        random = SyntheticRandom(state: seed)
        makeQueues()
        threads.append(ReportThread(index: 0, tid: 4242, name: "main", kind: .main, startNs: 0, endNs: 0))
        threads.append(ReportThread(index: 1, tid: 4243, name: hostile ? SyntheticReport.hostileLabels[0] : "net.io",
                                    kind: .other, startNs: 0, endNs: 0))
        items.reserveCapacity(itemCount + itemCount / 8)
    }

    // MARK: Queues

    static let globalQoS = ["user-interactive", "user-initiated", "default", "utility", "background"]
    static let privateNames = [
        "com.example.db", "com.example.images", "com.example.network", "com.example.cache", "com.example.log",
        "com.example.parser", "com.example.render", "com.example.sync", "com.example.audio", "com.example.index",
    ]

    mutating func makeQueues() {
        queues.append(ReportQueue(index: 0, label: "com.apple.main-thread", kind: .main, qosName: "user-interactive"))
        for (i, qos) in Simulation.globalQoS.enumerated() {
            queues.append(ReportQueue(index: i + 1, label: "com.apple.root.\(qos)-qos", kind: .global, qosName: qos))
        }
        var lastSerial: Int?   // the last private serial queue so far (not a search per queue: 100k queues)
        for p in 0..<(queueCount - 6) {
            let index = queues.count
            var label = Simulation.privateNames[p % Simulation.privateNames.count]
            if p >= Simulation.privateNames.count { label += ".\(p / Simulation.privateNames.count)" }
            if hostile, p < SyntheticReport.hostileLabels.count { label = SyntheticReport.hostileLabels[p] }
            let kind: ReportQueueKind = p % 3 == 1 ? .concurrent : .serial
            // The first ones target global queues; later ones funnel into earlier serial ones.
            var target = 1 + [2, 1, 3, 4][p % 4]
            if p >= 4, random.chance(0.5), let parent = lastSerial {
                target = parent
            }
            queues.append(ReportQueue(index: index, label: label, kind: kind, qosName: queues[target].qosName,
                                      targetIndex: target))
            if kind == .serial { lastSerial = index }
        }
        privateSerials = (6..<queues.count).filter { queues[$0].kind == .serial }
        serialRoot = queues.map { q in
            var current = q.index
            while current >= 0 {
                if queues[current].kind == .serial || queues[current].kind == .main { return current }
                current = queues[current].targetIndex
            }
            return -1
        }
        serialFreeAt = Array(repeating: 0, count: queues.count)
        lastOnSerialRoot = Array(repeating: -1, count: queues.count)
    }

    // MARK: Running

    mutating func run() {
        var produced = 0
        var nextArrival: Int64 = 0
        var nextTimer: Int64 = 1_000_000
        let suspended = suspendedWindow
        var missedFires: Int64 = 0
        while produced < itemCount {
            deferred.sort { $0.ready > $1.ready }
            if let d = deferred.last, d.ready <= min(nextArrival, nextTimer) {
                deferred.removeLast()
                now = d.ready
                schedule(d.item, ready: d.ready)
            } else if nextTimer <= nextArrival {
                now = nextTimer
                nextTimer += 1_000_000
                if suspended.contains(now) {
                    missedFires += 1
                    continue
                }
                scheduleTimerHandler(data: missedFires + 1)
                missedFires = 0
            } else {
                now = nextArrival
                produced += produceArrival()
                nextArrival = now + Int64(random.exponential(inBurst ? meanGapNs / 4 : meanGapNs)) + 1
            }
        }
        for d in deferred.sorted(by: { $0.ready < $1.ready }) { schedule(d.item, ready: d.ready) }
        deferred.removeAll()
    }

    /// One arrival: usually one item, sometimes a group fan-out. Returns the items made.
    mutating func produceArrival() -> Int {
        if random.chance(0.004) { return fanOut() }
        let q = pickQueue()
        var item = ReportItem(queue: q, kind: .async, submitterThread: 1, thread: -1, enqueueNs: now, startNs: -1, endNs: -1)
        if let parent = runningItem(at: now) {
            item.parent = parent
            item.submitterThread = Int(items.thread[parent])
        } else if random.chance(0.5) {
            item.submitterThread = 0
        }
        switch queues[q].kind {
        case .main: item.kind = random.chance(0.1) ? .after : .async
        case .global: item.kind = random.chance(0.05) ? .after : .async
        case .concurrent: item.kind = random.chance(0.06) ? .barrierAsync : .async
        case .serial: item.kind = .async
        }
        if item.kind == .after {
            deferred.append(Deferred(ready: now + Int64(random.exponential(300_000)), item: item))
            return 1
        }
        schedule(item, ready: now)
        return 1
    }

    mutating func pickQueue() -> Int {
        let r = random.unit()
        if r < 0.12 || queues.count == 6 && r < 0.2 { return 0 }
        if r < 0.4 || queues.count == 6 { return 1 + random.below(5) }
        return 6 + random.below(queues.count - 6)
    }

    /// An item running now on a worker (sampled among recent items), to be the parent.
    func runningItem(at t: Int64) -> Int? {
        let n = items.count
        for i in stride(from: n - 1, through: max(0, n - 24), by: -1)
        where items.startNs[i] >= 0 && items.startNs[i] <= t && items.endNs[i] > t && items.thread[i] > 1 {
            return i
        }
        return nil
    }

    /// N group-async items onto a global queue, with a notify on the main queue.
    mutating func fanOut() -> Int {
        let group = groups.count
        let n = 4 + random.below(12)
        var lastLeave: Int64 = 0
        var first = -1
        for k in 0..<n {
            let item = ReportItem(queue: 2 + random.below(2), kind: .groupAsync, submitterThread: 0, thread: -1,
                                  enqueueNs: now + Int64(k) * 400, startNs: -1, endNs: -1, group: group)
            let index = schedule(item, ready: item.enqueueNs)
            if first < 0 { first = index }
            lastLeave = max(lastLeave, items.endNs[index])
        }
        let label = hostile && group == 0 ? SyntheticReport.hostileLabels[1] : "group \(group)"
        let notifyAt = lastLeave + 3_000
        groups.append(ReportGroup(index: group, label: label, firstEnterNs: now, lastLeaveNs: lastLeave,
                                  notifyNs: notifyAt, enters: n, leaves: n))
        let notify = ReportItem(queue: 0, kind: .notify, submitterThread: 0, thread: -1, enqueueNs: now + 50,
                                startNs: -1, endNs: -1, group: group)
        deferred.append(Deferred(ready: notifyAt, item: notify))
        return n + 1
    }

    mutating func scheduleTimerHandler(data: Int64) {
        let q = queues.count > 6 ? 6 : 1
        let item = ReportItem(queue: q, kind: .sourceHandler, submitterThread: -1, thread: -1, enqueueNs: now,
                              startNs: -1, endNs: -1, source: 0)
        let index = schedule(item, ready: now)
        timerData[index] = data
    }

    /// Decides where and when `item` runs, appends it and returns its index.
    @discardableResult
    mutating func schedule(_ original: ReportItem, ready: Int64) -> Int {
        var item = original
        let root = serialRoot[item.queue]
        var earliest = max(ready, item.enqueueNs) + dispatchLatencyNs
        if root >= 0, serialFreeAt[root] > earliest {
            earliest = serialFreeAt[root]
            item.waitedBehind = lastOnSerialRoot[root]
        }
        var duration = Int64(random.logNormal(median: 18_000, sigma: 0.9))
        if random.chance(0.012) { duration += Int64(random.exponential(2_500_000)) }
        let index = items.count
        if item.kind == .after { afterDeadline[index] = ready }
        if item.queue == 0 {
            (item.startNs, duration) = runOnMain(item, earliest: earliest, duration: duration, index: index)
            item.thread = 0
        } else {
            let (worker, start) = pickWorker(earliest: earliest)
            item.thread = workers[worker].thread
            item.startNs = start
            // Some items block inside (a semaphore wait): the pool grows to compensate.
            if item.kind != .sourceHandler, random.chance(inBurst ? 0.25 : 0.004) {
                let from = start + duration / 2
                let wait = Int64(random.exponential(1_500_000))
                blocked.append(ReportBlockedInterval(thread: item.thread, startNs: from, endNs: from + wait, cause: .semaphore,
                                                     objectLabel: "sem \(index % 7)", item: index))
                workers[worker].blockedFrom = from
                workers[worker].blockedUntil = from + wait
                duration += wait
            }
            workers[worker].freeAt = start + duration
        }
        item.endNs = item.startNs + duration
        if item.kind == .barrierAsync { item.waitedBehind = lastOnQueue(item.queue) }
        if root >= 0 {
            serialFreeAt[root] = item.endNs
            lastOnSerialRoot[root] = index
        } else if item.kind == .barrierAsync {
            serialFreeAt[item.queue] = item.endNs
        }
        items.append(item)
        if let sync = pendingSync {
            items.append(sync)
            pendingSync = nil
        }
        return index
    }

    func lastOnQueue(_ q: Int) -> Int {
        var i = items.count - 1
        while i >= 0, i >= items.count - 200 {
            if items.queue[i] == Int32(q) { return i }
            i -= 1
        }
        return -1
    }

    /// Main-queue items run on the main thread; some sync onto a private serial queue, which
    /// runs nested on the main thread while the main thread is blocked waiting for it; a few
    /// wait on a semaphore.
    mutating func runOnMain(_ item: ReportItem, earliest: Int64, duration: Int64, index: Int) -> (Int64, Int64) {
        let start = max(earliest, mainFreeAt)
        var total = duration
        let privates = privateSerials
        if !privates.isEmpty, random.chance(0.15) {
            let q = privates[random.below(privates.count)]
            let root = serialRoot[q]
            let syncEnqueue = start + duration / 3
            let syncStart = max(syncEnqueue + 800, serialFreeAt[root])
            let syncDuration = Int64(random.logNormal(median: 12_000, sigma: 0.7))
            let sync = ReportItem(queue: q, kind: .sync, submitterThread: 0, thread: 0, enqueueNs: syncEnqueue,
                                  startNs: syncStart, endNs: syncStart + syncDuration, parent: index,
                                  waitedBehind: syncStart > syncEnqueue + 800 ? lastOnSerialRoot[root] : -1)
            if syncStart > syncEnqueue + 800 {
                blocked.append(ReportBlockedInterval(thread: 0, startNs: syncEnqueue, endNs: syncStart, cause: .sync,
                                                     objectLabel: queues[q].label, item: index + 1))
            }
            total = (syncStart + syncDuration - start) + duration * 2 / 3
            pendingSync = sync
            serialFreeAt[root] = sync.endNs
            lastOnSerialRoot[root] = index + 1
        } else if index % 50 == 7 {
            // Now and then a main-queue item waits on a semaphore (a pitfall the analysis names).
            let from = start + duration / 2, wait = 1_200_000 + Int64(index % 5) * 100_000
            blocked.append(ReportBlockedInterval(thread: 0, startNs: from, endNs: from + wait, cause: .semaphore,
                                                 objectLabel: "sem \(index % 7)", item: index))
            total += wait
        }
        mainFreeAt = start + total
        return (start, total)
    }

    /// An idle worker (most recently used first), a new one, or the first to become free.
    mutating func pickWorker(earliest: Int64) -> (Int, Int64) {
        retireIdleWorkers(before: earliest)
        var best = -1
        for (w, worker) in workers.enumerated() where worker.freeAt <= earliest {
            if best < 0 || worker.freeAt > workers[best].freeAt { best = w }
        }
        if best >= 0 { return (best, earliest) }
        let blockedNow = workers.filter { $0.blockedFrom <= earliest && $0.blockedUntil > earliest }.count
        if workers.count < min(maxWorkers, ncpu + blockedNow) {
            let index = threads.count
            threads.append(ReportThread(index: index, tid: Int64(4300 + index), name: "qos.overcommit",
                                        kind: .worker, startNs: earliest, endNs: earliest))
            workers.append(Worker(thread: index, freeAt: earliest))
            return (workers.count - 1, earliest + 15_000)
        }
        let w = workers.indices.min { workers[$0].freeAt < workers[$1].freeAt }!
        return (w, workers[w].freeAt)
    }

    mutating func retireIdleWorkers(before t: Int64) {
        workers.removeAll { worker in
            guard worker.freeAt + idleRetireNs < t else { return false }
            threads[worker.thread].endNs = worker.freeAt + idleRetireNs
            return true
        }
    }
}
