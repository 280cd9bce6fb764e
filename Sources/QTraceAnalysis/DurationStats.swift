// Latency distributions: exact for small sets, HDR histogram percentiles (3 significant digits)
// beyond, with exact count, min, max and total.
import Histogram

public struct DurationStats: Sendable, Codable, Equatable {
    public var count = 0
    public var minNs: UInt64 = 0
    public var p50Ns: UInt64 = 0
    public var p90Ns: UInt64 = 0
    public var p95Ns: UInt64 = 0
    public var p99Ns: UInt64 = 0
    public var maxNs: UInt64 = 0
    public var meanNs: UInt64 = 0
    public var totalNs: UInt64 = 0
    public init() {}

    /// Exact statistics of sorted values (nearest-rank percentiles), for small groups where a
    /// histogram per group would cost more memory than the values.
    init<Values: RandomAccessCollection<UInt64>>(sorted values: Values) {
        guard let first = values.first, let last = values.last else { return }
        count = values.count
        minNs = first
        maxNs = last
        totalNs = values.reduce(0, &+)
        meanNs = totalNs / UInt64(count)
        func at(_ p: Double) -> UInt64 {
            let rank = Swift.max(1, Int((p / 100 * Double(count)).rounded(.up)))
            return values[values.index(values.startIndex, offsetBy: Swift.min(rank, count) - 1)]
        }
        p50Ns = at(50); p90Ns = at(90); p95Ns = at(95); p99Ns = at(99)
    }

    /// `init(sorted:)`'s figures for values in any order, which it reorders: only the four
    /// percentiles' ranks are put in place (`OrderStatistics`), not all the values.
    init(unsorted values: UnsafeMutableBufferPointer<UInt64>) {
        guard !values.isEmpty else { return }
        count = values.count
        var least = UInt64.max, greatest: UInt64 = 0
        for v in values {
            totalNs &+= v
            least = Swift.min(least, v)
            greatest = Swift.max(greatest, v)
        }
        (minNs, maxNs) = (least, greatest)
        meanNs = totalNs / UInt64(count)
        let ranks = [50.0, 90, 95, 99].map { Self.nearestRankIndex($0, count: count) }
        OrderStatistics.select(ranks, in: values)
        (p50Ns, p90Ns, p95Ns, p99Ns) = (values[ranks[0]], values[ranks[1]], values[ranks[2]], values[ranks[3]])
    }

    /// The index of the nearest-rank percentile `p` in `count` sorted values.
    static func nearestRankIndex(_ p: Double, count: Int) -> Int {
        Swift.min(Swift.max(1, Int((p / 100 * Double(count)).rounded(.up))), count) - 1
    }
}

/// The values at a few ranks, as if sorted, without sorting: quickselect (median-of-three
/// pivots), each rank's search confined to what lies right of the previous rank. Percentiles of
/// a queue's thousands of waits and runs were sorted whole, 4-5% of `stats --json` on the
/// fan-out trace; this is a few linear passes.
enum OrderStatistics {
    /// Afterwards `values[r]` is the value sorted order puts there, for each r in `ranks`
    /// (ascending); everything left of it is not greater, right of it not less.
    static func select(_ ranks: [Int], in values: UnsafeMutableBufferPointer<UInt64>) {
        var low = 0
        for rank in ranks where rank >= low && rank < values.count {
            select(rank, in: values, from: low, to: values.count)
            low = rank + 1
        }
    }

    private static func select(_ k: Int, in a: UnsafeMutableBufferPointer<UInt64>, from start: Int, to end: Int) {
        var (low, high) = (start, end - 1)
        // Beyond this many partitions (bad pivots on a hostile order), sort what is left.
        var budget = 2 * (Int.bitWidth - (end - start).leadingZeroBitCount) + 8
        while high - low > 16 {
            budget -= 1
            if budget == 0 { break }
            let pivot = medianOfThree(a[low], a[low + (high - low) / 2], a[high])
            // Hoare partition: equal values split between both sides, so repeats stay linear.
            var (i, j) = (low, high)
            while i <= j {
                while a[i] < pivot { i += 1 }
                while a[j] > pivot { j -= 1 }
                if i <= j { a.swapAt(i, j); i += 1; j -= 1 }
            }
            if k <= j { high = j } else if k >= i { low = i } else { return }
        }
        var rest = UnsafeMutableBufferPointer(rebasing: a[low...high])
        rest.sort()
    }

    @inline(__always)
    private static func medianOfThree(_ x: UInt64, _ y: UInt64, _ z: UInt64) -> UInt64 {
        Swift.max(Swift.min(x, y), Swift.min(Swift.max(x, y), z))
    }
}

/// Collects durations. Up to `exactLimit` values give exact percentiles; beyond, they are HDR
/// histogram percentiles (3 significant digits, hdrhistogram-swift's), with exact count, min,
/// max and total. Up to `sortedLimit` values are kept, and their percentiles read the way the
/// histogram reads its own (`histogramValue`, at ranks found by `OrderStatistics`): the same numbers without a
/// histogram. The histogram, whose memory does not grow with the count, takes over beyond.
/// Reusable through `reset()`.
struct DurationRecorder {
    static let exactLimit = 512
    /// The package's generic code runs unspecialized from here, and each histogram clears and
    /// scans 36,864 buckets per use: per queue of a few thousand items, that was ~45% of
    /// `qtrace stats` on 1M items over 400 queues. Sorting 64k values costs less than that.
    static let sortedLimit = 1 << 16
    /// Longer durations go into the histogram as this (about 4.9 hours): a damaged trace's
    /// absurd values must not grow it to the full 64-bit range. min, max, total stay exact.
    static let histogramCeiling: UInt64 = 1 << 44
    /// The histogram's layout, for its bucket bounds (`highestEquivalentForValue`) only.
    private static let layout = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: histogramCeiling,
                                                  numberOfSignificantValueDigits: .three)

    /// Stands in for a recorder's histogram until it needs one: copies share its counts, so a
    /// recorder that never passes `sortedLimit` allocates none.
    private static let unused = Histogram<UInt64>(numberOfSignificantValueDigits: .three)

    private var values: [UInt64] = []
    /// In use once more than `sortedLimit` values came (non-optional, not in a class: mutating
    /// through an optional copies it, through a class costs an exclusivity check per value).
    private var histogram = DurationRecorder.unused
    private var usesHistogram = false
    private var count = 0
    private var total: UInt64 = 0
    private var minValue = UInt64.max
    private var maxValue: UInt64 = 0

    mutating func record(_ ns: UInt64) {
        count += 1
        total &+= ns
        if ns < minValue { minValue = ns }
        if ns > maxValue { maxValue = ns }
        if usesHistogram {
            histogram.record(Swift.min(ns, Self.histogramCeiling))
            return
        }
        values.append(ns)
        if values.count > Self.sortedLimit { moveIntoHistogram() }
    }

    private mutating func moveIntoHistogram() {
        // Sized for the ceiling at once: growing it value by value (auto-resize) runs the
        // library's unspecialised generic append, which cost more than all the recording.
        histogram = Histogram(lowestDiscernibleValue: 1, highestTrackableValue: Self.histogramCeiling,
                              numberOfSignificantValueDigits: .three)
        for v in values { histogram.record(Swift.min(v, Self.histogramCeiling)) }
        usesHistogram = true
        values.removeAll(keepingCapacity: true)
    }

    var isEmpty: Bool { count == 0 }

    /// Exact for up to `exactLimit` values; beyond, HDR percentiles (within 0.1%) clamped to
    /// the exact min and max.
    var stats: DurationStats {
        guard count > 0 else { return DurationStats() }
        guard !usesHistogram else {
            return stats(percentiles: Self.percentiles.map { histogram.valueAtPercentile($0) })
        }
        var scratch = values
        return scratch.withUnsafeMutableBufferPointer { values in
            guard count > Self.exactLimit else { return DurationStats(unsorted: values) }
            let ranks = Self.percentiles.map { Self.histogramRankIndex($0, count: count) }
            OrderStatistics.select(ranks, in: values)
            let (least, greatest) = (Swift.min(minValue, Self.histogramCeiling), Swift.min(maxValue, Self.histogramCeiling))
            return stats(percentiles: ranks.map { Self.histogramValue(values[$0], least: least, greatest: greatest) })
        }
    }

    private static let percentiles: [Double] = [50, 90, 95, 99]

    /// Past `exactLimit` values: the exact count, min, max, total and mean, with these
    /// percentiles clamped to the min and max.
    private func stats(percentiles hdr: [UInt64]) -> DurationStats {
        let at = hdr.map { Swift.min(Swift.max($0, minValue), maxValue) }
        var s = DurationStats()
        s.count = count
        s.minNs = minValue
        s.maxNs = maxValue
        s.totalNs = total
        s.meanNs = total / UInt64(count)
        (s.p50Ns, s.p90Ns, s.p95Ns, s.p99Ns) = (at[0], at[1], at[2], at[3])
        return s
    }

    /// The package's rank for percentile `p` of `count` values (one ulp below the
    /// percentile, rounded up, at least 1), as an index into the sorted values.
    static func histogramRankIndex(_ p: Double, count: Int) -> Int {
        let requested = Swift.min(Swift.max(p.nextDown, 0.0), 100.0)
        return Swift.min(Swift.max(1, Int((requested * Double(count) / 100.0).rounded(.up))), count) - 1
    }

    /// What the histogram's `valueAtPercentile` answers, without one: the bucket where its
    /// count reaches the percentile's rank is the rank-th value's, and it answers that bucket's
    /// highest equivalent value, within the least and greatest value it holds (values above
    /// the ceiling held as the ceiling). DurationRecorderTests compare the two.
    static func histogramValue(_ value: UInt64, least: UInt64, greatest: UInt64) -> UInt64 {
        Swift.max(Swift.min(layout.highestEquivalentForValue(Swift.min(value, histogramCeiling)), greatest), least)
    }

    mutating func reset() {
        values.removeAll(keepingCapacity: true)
        if usesHistogram { histogram.reset(); usesHistogram = false }
        count = 0; total = 0; minValue = .max; maxValue = 0
    }
}
