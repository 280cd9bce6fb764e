// Collects durations for `DurationStats`: exact percentiles up to `exactLimit` values, beyond
// them an HDR histogram's (3 significant digits), with exact count, min, max and total.

/// Up to `exactLimit` values give exact percentiles; beyond, they are HDR histogram
/// percentiles (3 significant digits, the layout of hdrhistogram-swift's, which the tests
/// compare with), for which a value's bucket (`HDRLayout`) is all that counts. So past
/// `exactLimit` values a recorder keeps each value's bucket (2 bytes, where the value took 8)
/// and selects the percentiles' ranks among them (`OrderStatistics`); past `sortedLimit`, it
/// counts per bucket, whose memory does not grow with the count. Reusable through `reset()`.
///
/// A class over raw buffers (`DurationRecording`): the statistics record every item's wait and
/// run, several times (its queue, its code), and an array in a struct costs a uniqueness check
/// (a runtime call) per value appended, the histogram package's generic `record` another and more.
final class DurationRecorder {
    static let exactLimit = 512
    /// Selecting the ranks of this many buckets costs less than clearing and scanning counts
    /// per queue of a few thousand items.
    static let sortedLimit = 1 << 16
    /// Longer durations count in the histogram as this (about 4.9 hours): a damaged trace's
    /// absurd values must not widen it to the full 64-bit range. min, max, total stay exact.
    static let histogramCeiling: UInt64 = HDRLayout.ceiling

    @exclusivity(unchecked) private var recording = DurationRecording()

    init() {}

    deinit { recording.release() }

    /// `count` recorders, each its own (`Array(repeating:)` would repeat one).
    static func many(_ count: Int) -> [DurationRecorder] { (0..<count).map { _ in DurationRecorder() } }

    @inline(__always)
    func record(_ ns: UInt64) { recording.record(ns) }

    var count: Int { recording.count }
    var isEmpty: Bool { recording.count == 0 }
    /// See `DurationRecording.stats`.
    var stats: DurationStats { recording.stats }
    func reset() { recording.reset() }

    /// The package's rank for percentile `p` of `count` values (one ulp below the
    /// percentile, rounded up, at least 1), as an index into the sorted values.
    static func histogramRankIndex(_ p: Double, count: Int) -> Int {
        let requested = Swift.min(Swift.max(p.nextDown, 0.0), 100.0)
        return Swift.min(Swift.max(1, Int((requested * Double(count) / 100.0).rounded(.up))), count) - 1
    }
}

/// A `DurationRecorder`'s state, whose buffers its owner frees (`release()`): kept inline in
/// a table of tallies (`QueueStats.Accumulation`), a recorder is no object to reach through
/// a pointer first, a cache miss per item on a fan-out over 400 queues.
struct DurationRecording {
    /// What holds the values: the values, their buckets, or counts per bucket.
    private enum Form { case values, buckets, counts }
    private var form = Form.values
    /// Up to `exactLimit` values, while `form` is `.values`.
    private var values: UnsafeMutablePointer<UInt64>?
    private var valuesCapacity = 0
    /// The values' buckets, while `form` is `.buckets`.
    private var buckets: UnsafeMutablePointer<UInt16>?
    private var bucketsCapacity = 0
    /// Values or buckets held.
    private var stored = 0
    /// Counts per bucket, while `form` is `.counts` (kept, cleared, by `reset()`).
    private var counts: UnsafeMutablePointer<UInt32>?
    private(set) var count = 0
    private var total: UInt64 = 0
    private var minValue = UInt64.max
    private var maxValue: UInt64 = 0

    /// Frees the buffers; the recording is not to be used again.
    func release() {
        values?.deallocate()
        buckets?.deallocate()
        counts?.deallocate()
    }

    @inline(__always)
    mutating func record(_ ns: UInt64) {
        count &+= 1
        total &+= ns
        if ns < minValue { minValue = ns }
        if ns > maxValue { maxValue = ns }
        switch form {
        case .counts:
            counts.unsafelyUnwrapped[HDRLayout.bucket(ns)] &+= 1
        case .buckets:
            if stored == bucketsCapacity { return makeRoomForBucket(ns) }
            buckets.unsafelyUnwrapped[stored] = UInt16(truncatingIfNeeded: HDRLayout.bucket(ns))
            stored &+= 1
        case .values:
            if stored == valuesCapacity { return makeRoomForValue(ns) }
            values.unsafelyUnwrapped[stored] = ns
            stored &+= 1
        }
    }

    /// Grows the values up to `exactLimit`; beyond, holds their buckets instead.
    private mutating func makeRoomForValue(_ ns: UInt64) {
        guard stored < DurationRecorder.exactLimit else {
            if buckets == nil { Self.grow(&buckets, &bucketsCapacity, keeping: 0, to: 2 * DurationRecorder.exactLimit) }
            for k in 0..<stored { buckets.unsafelyUnwrapped[k] = UInt16(truncatingIfNeeded: HDRLayout.bucket(values.unsafelyUnwrapped[k])) }
            form = .buckets
            return record(bucketOf: ns)
        }
        Self.grow(&values, &valuesCapacity, keeping: stored,
                  to: Swift.min(Swift.max(16, 2 * valuesCapacity), DurationRecorder.exactLimit))
        values.unsafelyUnwrapped[stored] = ns
        stored &+= 1
    }

    /// Grows the buckets up to `sortedLimit`; beyond, counts them instead.
    private mutating func makeRoomForBucket(_ ns: UInt64) {
        guard stored < DurationRecorder.sortedLimit else {
            if counts == nil {
                counts = .allocate(capacity: HDRLayout.bucketCount)
                counts.unsafelyUnwrapped.initialize(repeating: 0, count: HDRLayout.bucketCount)
            }
            for k in 0..<stored { counts.unsafelyUnwrapped[Int(buckets.unsafelyUnwrapped[k])] &+= 1 }
            form = .counts
            stored = 0
            counts.unsafelyUnwrapped[HDRLayout.bucket(ns)] &+= 1
            return
        }
        Self.grow(&buckets, &bucketsCapacity, keeping: stored, to: 2 * bucketsCapacity)
        record(bucketOf: ns)
    }

    private mutating func record(bucketOf ns: UInt64) {
        buckets.unsafelyUnwrapped[stored] = UInt16(truncatingIfNeeded: HDRLayout.bucket(ns))
        stored &+= 1
    }

    private static func grow<T>(_ buffer: inout UnsafeMutablePointer<T>?, _ capacity: inout Int, keeping: Int, to grown: Int) {
        let larger = UnsafeMutablePointer<T>.allocate(capacity: grown)
        if let old = buffer {
            larger.moveInitialize(from: old, count: keeping)
            old.deallocate()
        }
        buffer = larger
        capacity = grown
    }

    /// Exact for up to `exactLimit` values; beyond, HDR percentiles (within 0.1%) clamped to
    /// the exact min and max. Reorders what it holds (their order means nothing).
    var stats: DurationStats {
        guard count > 0 else { return DurationStats() }
        let ceiling = DurationRecorder.histogramCeiling
        let least = Swift.min(minValue, ceiling), greatest = Swift.min(maxValue, ceiling)
        let ranks = Self.percentiles.map { DurationRecorder.histogramRankIndex($0, count: count) }
        let found: [Int]
        switch form {
        case .values:
            return DurationStats(unsorted: UnsafeMutableBufferPointer(start: values, count: stored))
        case .buckets:
            found = Self.bucketsAt(ranks, in: UnsafeBufferPointer(start: buckets, count: stored))
        case .counts:
            found = Self.bucketsAt(ranks, in: counts.unsafelyUnwrapped, from: least, to: greatest)
        }
        return stats(percentiles: found.map { Self.clamp(HDRLayout.highestEquivalent(ofBucket: $0), least, greatest) })
    }

    private static let percentiles: [Double] = [50, 90, 95, 99]

    /// The bucket at each rank (ascending) of `held`, as if sorted: counted in two rounds, by
    /// the buckets' high byte (at most 144 of them), then, in the groups the ranks fell in, by
    /// the low byte. Two passes over the buckets, where selecting the ranks took several.
    private static func bucketsAt(_ ranks: [Int], in held: UnsafeBufferPointer<UInt16>) -> [Int] {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256 * (1 + ranks.count)) { counts in
            counts.initialize(repeating: 0)
            for b in held { counts[Int(b >> 8)] += 1 }
            // Per rank: its group (high byte), and its rank among the group's buckets.
            var groups: [(group: Int, rankInGroup: Int)] = []
            var group = 0, before = 0
            for rank in ranks {
                while before + counts[group] <= rank {
                    before += counts[group]
                    group += 1
                }
                groups.append((group, rank - before))
            }
            // Each rank's group counted by low byte in its own 256 counters (after the first).
            var slotOfGroup = [Int](repeating: -1, count: 256)
            for (k, g) in groups.enumerated() where slotOfGroup[g.group] < 0 { slotOfGroup[g.group] = 256 * (1 + k) }
            for b in held {
                let slot = slotOfGroup[Int(b >> 8)]
                if slot >= 0 { counts[slot + Int(b & 0xFF)] += 1 }
            }
            return groups.map { g in
                let slot = slotOfGroup[g.group]
                var low = 0, seen = 0
                while seen + counts[slot + low] <= g.rankInGroup {
                    seen += counts[slot + low]
                    low += 1
                }
                return g.group << 8 | low
            }
        }
    }

    /// The bucket of each rank (ascending): where the counts summed from the first reach it.
    /// Only the buckets between the least and greatest value's hold any.
    private static func bucketsAt(_ ranks: [Int], in counts: UnsafeMutablePointer<UInt32>,
                                  from least: UInt64, to greatest: UInt64) -> [Int] {
        var found: [Int] = []
        var seen = 0
        var bucket = HDRLayout.bucket(least)
        let last = HDRLayout.bucket(greatest)
        for rank in ranks {
            while bucket < last && seen + Int(counts[bucket]) <= rank {
                seen += Int(counts[bucket])
                bucket += 1
            }
            found.append(bucket)
        }
        return found
    }

    /// Past `exactLimit` values: the exact count, min, max, total and mean, with these
    /// percentiles clamped to the min and max.
    private func stats(percentiles hdr: [UInt64]) -> DurationStats {
        let at = hdr.map { Self.clamp($0, minValue, maxValue) }
        var s = DurationStats()
        s.count = count
        s.minNs = minValue
        s.maxNs = maxValue
        s.totalNs = total
        s.meanNs = total / UInt64(count)
        (s.p50Ns, s.p90Ns, s.p95Ns, s.p99Ns) = (at[0], at[1], at[2], at[3])
        return s
    }

    private static func clamp(_ v: UInt64, _ least: UInt64, _ greatest: UInt64) -> UInt64 {
        Swift.max(Swift.min(v, greatest), least)
    }

    /// Ready for other values; keeps its buffers (the counts cleared where they were used).
    mutating func reset() {
        if form == .counts, let counts {
            let first = HDRLayout.bucket(minValue), last = HDRLayout.bucket(maxValue)
            (counts + first).update(repeating: 0, count: last - first + 1)
        }
        form = .values
        stored = 0
        count = 0; total = 0; minValue = .max; maxValue = 0
    }
}

/// hdrhistogram-swift's bucket layout for 1 ns to `ceiling` at 3 significant digits: values
/// below 2048 exact, then 1024 buckets per power of two, each 2^k wide. Written out because
/// the package's generic code runs unspecialized from here (its `record` cost more than the
/// rest of the statistics on a queue of millions of items).
enum HDRLayout {
    static let ceiling: UInt64 = 1 << 44
    /// 2048 exact buckets, then 1024 for each power of two up to the ceiling's.
    static let bucketCount = 36 * 1024

    /// The bucket of `ns` (at most the ceiling's): the package's `countsIndexForValue`.
    @inline(__always)
    static func bucket(_ ns: UInt64) -> Int {
        let v = Swift.min(ns, ceiling)
        let shift = 53 - (v | 2047).leadingZeroBitCount
        return (shift << 10) + Int(truncatingIfNeeded: v >> UInt64(shift))
    }

    /// The highest value counted in `bucket`: the package's `highestEquivalentForValue` of any.
    static func highestEquivalent(ofBucket bucket: Int) -> UInt64 {
        let shift = Swift.max((bucket >> 10) - 1, 0)
        let subBucket = bucket < 2048 ? bucket : (bucket & 1023) + 1024
        return (UInt64(subBucket) << UInt64(shift)) + (UInt64(1) << UInt64(shift)) - 1
    }

    static func highestEquivalent(_ ns: UInt64) -> UInt64 { highestEquivalent(ofBucket: bucket(ns)) }
}
