// The queue rules: a backlog that grows without bound, and items too small for their
// dispatch cost. Each names the code that fed the queue (its most frequent enqueue site), so
// that the same rule on queues fed by one line (a benchmark's 1000 queues, created anew each
// lap) reads as one finding with a count.
import QTraceFormat

extension RuleContext {
    /// Raised once: when and how long every CPU was busy, and what it explains. Only from
    /// kernel states or CPU samples: item run time cannot tell an item computing from one
    /// sleeping in a system call (its periods still leave waits out of the queue rules).
    mutating func cpuSaturation() {
        guard saturation.isMeasured, let first = saturation.periods.first, let last = saturation.periods.last else { return }
        let measured = saturation.fromSched ? "kernel states: threads on a CPU or waiting for one" : "CPU samples: threads on a CPU"
        add("cpu.saturated", .info, first.start, last.end, [],
            "all \(model.info.ncpu) CPUs were busy for \(formatDuration(saturation.saturatedNs)) of \(formatDuration(model.endTime)) (\(measured) \(formatPercent(Thresholds.saturationBusyShare)) of the time or more, from \(formatDuration(first.start))): items then wait for a CPU whatever their queue, so those waits are not read as queue problems (items too small, unbounded backlog); to go faster, do less work or add CPUs",
            weight: saturation.saturatedNs)
    }

    mutating func queues() {
        let tinyByStats = model.queues.indices.filter(looksTooSmall)
        // With saturated periods, the waits outside them, in one pass over the items.
        let times = saturation.periods.isEmpty ? [:] : unsaturatedTimes(tinyByStats)
        var candidates: [(queue: Int, rule: QueueRule)] = []
        for qi in model.queues.indices where unboundedBacklog(qi) != nil { candidates.append((qi, .backlog)) }
        for qi in tinyByStats {
            let times = times[qi] ?? TinyItemTimes(run: stats.queues[qi].run, wait: stats.queues[qi].wait)
            if tooSmall(times) { candidates.append((qi, .tooSmall(times))) }
        }
        guard !candidates.isEmpty else { return }
        let sites = feedingSites(Set(candidates.map(\.queue)))
        for (qi, rule) in candidates {
            let objects = [queueRef(qi)] + (sites[qi].map { [siteRef($0)] } ?? [])
            switch rule {
            case .backlog: addUnboundedBacklog(qi, objects)
            case .tooSmall(let times): addItemsTooSmall(qi, objects, times)
            }
        }
    }

    enum QueueRule { case backlog, tooSmall(TinyItemTimes) }

    /// The code site that enqueued most items onto each of `queues` (one pass over the items).
    /// (Counted in the statistics' pass instead and kept in `TraceStatistics`, the table cost
    /// more than it saved: a class-typed member there raised the 900k-queue trace's JSON
    /// encoding peak from 369 to 396 MB, 3.12x the trace; docs/performance.md, run (37).)
    func feedingSites(_ queues: Set<Int>) -> [Int: Int] {
        // Most items, then the lowest site index: deterministic.
        siteCounts(of: queues).mapValues { bySite in bySite.max { ($0.value, $1.key) < ($1.value, $0.key) }!.key }
    }

    /// Items per site of each of `queues`, counted in a flat (queue, site) table when it is
    /// small, else in one dictionary keyed by the pair: a set lookup and two nested
    /// dictionaries per item were 9% of `stats` on a million items over 400 queues.
    private func siteCounts(of queues: Set<Int>) -> [Int: [Int: Int]] {
        var slot = [Int](repeating: -1, count: model.queues.count)
        let wanted = queues.filter { slot.indices.contains($0) }.sorted()
        for (k, qi) in wanted.enumerated() { slot[qi] = k }
        let siteCount = model.sites.count
        // A buffer, not an array: an array's write costs a uniqueness check, once per item here.
        let table = wanted.count * siteCount <= 1 << 20 ? ColumnBuffer(count: wanted.count * siteCount, repeating: 0) : nil
        var pairs: [Int: Int] = [:]
        model.items.withUnsafeBufferPointer { items in
            for item in items where item.queueIndex >= 0 && Int(item.queueIndex) < slot.count {
                guard slot[Int(item.queueIndex)] >= 0, let s = item.site else { continue }
                let k = slot[Int(item.queueIndex)]
                if let table, s < siteCount { table[k * siteCount + s] += 1 } else { pairs[k << 32 | s, default: 0] += 1 }
            }
        }
        var counts: [Int: [Int: Int]] = [:]
        for i in 0..<(table?.count ?? 0) where table![i] > 0 { counts[wanted[i / siteCount], default: [:]][i % siteCount] = table![i] }
        for (key, count) in pairs { counts[wanted[key >> 32], default: [:]][key & 0xFFFF_FFFF, default: 0] += count }
        return counts
    }

    /// A backlog is unbounded when it grows over the queue's run: the least backlog of the
    /// last window is above that of every earlier window, and at least
    /// `unboundedBacklogMinDepth` items. A burst that drains (however deep, however long it
    /// took) touches a low floor again and does not count; nor does a burst just before the
    /// end (the last window's floor is what was left before it).
    func unboundedBacklog(_ qi: Int) -> BacklogTrend? {
        guard model.queues[qi].backlog.peak >= Int32(Thresholds.unboundedBacklogMinDepth),
              let trend = BacklogTrend(model.queues[qi].backlog, end: model.endTime) else { return nil }
        let floors = trend.floors
        guard trend.endNs - trend.startNs >= Thresholds.unboundedBacklogMinNs,
              floors.last! >= Thresholds.unboundedBacklogMinDepth,
              floors.dropLast().allSatisfy({ $0 < floors.last! }) else { return nil }
        // Grown while every CPU was busy (or, from item time alone, may have been): the
        // consumer waited for a CPU (cpu.saturated).
        return saturation.explains(trend.lastWindowStartNs, trend.endNs) ? nil : trend
    }

    mutating func addUnboundedBacklog(_ qi: Int, _ objects: [FindingObject]) {
        guard let trend = unboundedBacklog(qi) else { return }
        let st = stats.queues[qi]
        let seconds = Double(trend.endNs - trend.startNs) / 1e9
        let inRate = Double(st.items) / seconds, outRate = Double(st.items - st.pendingAtEnd) / seconds
        add("queue.unbounded-backlog", .warning, trend.startNs, trend.endNs, objects,
            "\(q(qi))'s backlog grew over \(formatDuration(trend.endNs - trend.startNs)): at least \(trend.floors.map(String.init).joined(separator: ", then ")) items pending in each quarter, \(st.pendingAtEnd) \(endsMidRun ? "when the snapshot was taken" : "at the end") (\(formatRate(inRate)) in, \(formatRate(outRate)) out): producers outrun the consumer; throttle producers (a semaphore) or coalesce work (a data source)",
            weight: UInt64(trend.floors.last!))
    }

    /// Items too small: median run under `tinyItemsMaxRunNs` and `tinyItemsRunToWaitFactor` × median wait over at
    /// least `tinyItemsMinCount` items, counting only waits outside saturated periods: there
    /// every item waits for a CPU, whatever its size. First on the queue's statistics.
    func looksTooSmall(_ qi: Int) -> Bool {
        let st = stats.queues[qi]
        return st.completed >= Thresholds.tinyItemsMinCount && tooSmall(TinyItemTimes(run: st.run, wait: st.wait))
    }

    func tooSmall(_ times: TinyItemTimes) -> Bool {
        times.waits >= Thresholds.tinyItemsMinCount && times.runP50Ns < Thresholds.tinyItemsMaxRunNs
            && times.runP50Ns < Thresholds.tinyItemsRunToWaitFactor * times.waitP50Ns
    }

    /// Run and wait of each queue's completed items whose wait lies outside saturated periods.
    /// Swift jobs are left out: their size is the runtime's (one per resumption), not a choice
    /// the program made, so "batch them" is no advice.
    /// A first pass counts each queue's values and marks the items counted (a bit each: the
    /// second pass does not ask the saturated periods again). The second gathers a queue's
    /// values from its first counted item to its last, then takes their medians (all the rule
    /// reads) and hands the buffer to the next queue to start: a starfish lap's queues start and
    /// end within the lap, so a lap's values are held at a time, where a buffer per queue held
    /// all of them at once (320 MB of fresh pages on sf10, on top of the peak).
    func unsaturatedTimes(_ queues: [Int]) -> [Int: TinyItemTimes] {
        guard !queues.isEmpty else { return [:] }
        var slot = [Int32](repeating: -1, count: model.queues.count)
        for (k, qi) in queues.enumerated() where slot.indices.contains(qi) { slot[qi] = Int32(k) }
        /// The slot of the item's queue when the item counts, else -1.
        func counted(_ item: WorkItem) -> Int {
            guard item.queueIndex >= 0 && Int(item.queueIndex) < slot.count else { return -1 }
            let k = Int(slot[Int(item.queueIndex)])
            guard k >= 0, !item.flags.contains(.swiftConcurrency), item.endTime != noTime, item.startTime != noTime,
                  item.readyTime != noTime, item.startTime >= item.readyTime,
                  !saturation.explains(item.readyTime, item.startTime) else { return -1 }
            return k
        }
        let counts = ColumnBuffer<Int>(count: queues.count, repeating: 0)
        let isCounted = ColumnBuffer<UInt64>(count: (model.items.count + 63) / 64, repeating: 0)
        model.items.withUnsafeBufferPointer { items in
            for i in items.indices {
                let k = counted(items[i])
                guard k >= 0 else { continue }
                counts[k] += 1
                isCounted[i >> 6] |= 1 << UInt64(i & 63)
            }
        }
        var out: [Int: TinyItemTimes] = [:]
        for (k, qi) in queues.enumerated() where counts[k] == 0 { out[qi] = TinyItemTimes(waits: 0, runP50Ns: 0, waitP50Ns: 0) }
        var buffers = QueueValueBuffers(queues: queues.count)
        defer { buffers.release() }
        model.items.withUnsafeBufferPointer { items in
            for i in items.indices where isCounted[i >> 6] & (1 << UInt64(i & 63)) != 0 {
                let item = items[i]
                let k = Int(slot[Int(item.queueIndex)])
                // Runs in the first half of the queue's buffer, waits in the second.
                let (buffer, n, filled) = (buffers.buffer(of: k, holding: 2 * counts[k]), counts[k], buffers.filled[k])
                buffer[filled] = item.endTime >= item.startTime ? item.endTime - item.startTime : 0
                buffer[n + filled] = item.startTime - item.readyTime
                buffers.filled[k] = filled + 1
                guard filled + 1 == n else { continue }
                let runs = UnsafeMutableBufferPointer(rebasing: buffer[0..<n])
                let waits = UnsafeMutableBufferPointer(rebasing: buffer[n..<2 * n])
                out[queues[k]] = TinyItemTimes(waits: n, runP50Ns: Self.median(runs), waitP50Ns: Self.median(waits))
                buffers.close(k)
            }
        }
        return out
    }

    /// `DurationStats(unsorted:)`'s p50 of `values` (reordered), 0 of none.
    private static func median(_ values: UnsafeMutableBufferPointer<UInt64>) -> UInt64 {
        guard !values.isEmpty else { return 0 }
        let rank = DurationStats.nearestRankIndex(50, count: values.count)
        OrderStatistics.select([rank], in: values)
        return values[rank]
    }

    mutating func addItemsTooSmall(_ qi: Int, _ objects: [FindingObject], _ times: TinyItemTimes) {
        let outside = saturation.periods.isEmpty ? ""
            : saturation.isMeasured ? " (waits outside saturated periods)" : " (waits outside periods when items ran on every CPU)"
        add("queue.items-too-small", .info, 0, model.endTime, objects,
            "\(q(qi)): \(times.waits) items\(outside) with median run \(formatDuration(times.runP50Ns)) against median wait \(formatDuration(times.waitP50Ns)): items too small for their dispatch cost; batch work into fewer, larger items",
            weight: UInt64(times.waits))
    }
}

/// Each queue's buffer of values between its first value and its last (`unsaturatedTimes`),
/// the buffers of queues that ended handed to those that start.
private struct QueueValueBuffers {
    var buffers: [UnsafeMutableBufferPointer<UInt64>?]
    /// Per queue: the values it holds.
    let filled: ColumnBuffer<Int>
    var spare: [UnsafeMutableBufferPointer<UInt64>] = []

    init(queues: Int) {
        buffers = Array(repeating: nil, count: queues)
        filled = ColumnBuffer(count: queues, repeating: 0)
    }

    /// Queue k's buffer, of at least `count` values: a spare one when large enough.
    @inline(__always)
    mutating func buffer(of k: Int, holding count: Int) -> UnsafeMutableBufferPointer<UInt64> {
        if let buffer = buffers[k] { return buffer }
        var buffer = spare.popLast()
        if let small = buffer, small.count < count {
            small.deallocate()
            buffer = nil
        }
        // Room rounded up: queues of about as many values reuse each other's buffers.
        let made = buffer ?? .allocate(capacity: (count + 1023) & ~1023)
        buffers[k] = made
        return made
    }

    /// Queue k had its last value: its buffer goes to the next queue.
    mutating func close(_ k: Int) {
        spare.append(buffers[k]!)
        buffers[k] = nil
    }

    func release() {
        for buffer in spare { buffer.deallocate() }
        for case let buffer? in buffers { buffer.deallocate() }
    }
}

/// What the items-too-small rule reads of a queue's runs and waits: how many waits, and the
/// median of each.
struct TinyItemTimes {
    var waits: Int
    var runP50Ns: UInt64
    var waitP50Ns: UInt64
}

extension TinyItemTimes {
    init(run: DurationStats, wait: DurationStats) {
        self.init(waits: wait.count, runP50Ns: run.p50Ns, waitP50Ns: wait.p50Ns)
    }
}

/// A queue's backlog over its run, from its first pending item to the end of the trace, in
/// `Thresholds.backlogTrendWindows` equal windows: the least backlog seen in each (its floor).
/// Exact while the series is (StepSeries); once down-sampled, the floor is the least value
/// at the end of a bucket, which can miss a dip inside one.
public struct BacklogTrend: Sendable, Equatable {
    public var startNs: UInt64
    public var endNs: UInt64
    public var floors: [Int]
    public var lastWindowStartNs: UInt64 { startNs + (endNs - startNs) / UInt64(floors.count) * UInt64(floors.count - 1) }

    public init?(_ backlog: StepSeries, end: UInt64, windows: Int = Thresholds.backlogTrendWindows) {
        guard let first = backlog.points.first?.time, end > first, windows > 0 else { return nil }
        startNs = first
        endNs = end
        let width = Swift.max((end - first) / UInt64(windows), 1)
        var floors = [Int32](repeating: .max, count: windows)
        var value: Int32 = 0
        var window = 0
        for p in backlog.points {
            let w = Swift.min(Int((p.time - first) / width), windows - 1)
            // The previous value held through the windows up to this point's (and into its
            // window, unless the point is exactly at its start: counting it errs low).
            while window < w {
                floors[window] = Swift.min(floors[window], value)
                window += 1
                floors[window] = Swift.min(floors[window], value)
            }
            floors[w] = Swift.min(floors[w], p.last)
            value = p.last
        }
        while window < windows { floors[window] = Swift.min(floors[window], value); window += 1 }
        self.floors = floors.map(Int.init)
    }
}
