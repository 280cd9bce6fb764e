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
}

/// Collects durations. Up to `exactLimit` values give exact percentiles; beyond, they are HDR
/// histogram percentiles (3 significant digits, hdrhistogram-swift's), with exact count, min,
/// max and total. Up to `sortedLimit` values are kept and sorted, and their percentiles read
/// the way the histogram reads its own (`histogramPercentiles`): the same numbers without a
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
        let sorted = usesHistogram ? [] : values.sorted()
        guard usesHistogram || count > Self.exactLimit else { return DurationStats(sorted: sorted[...]) }
        let percentiles: [Double] = [50, 90, 95, 99]
        let hdr = usesHistogram ? percentiles.map { histogram.valueAtPercentile($0) }
            : Self.histogramPercentiles(percentiles, sorted: sorted)
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

    /// What the histogram's `valueAtPercentile` answers for these values (sorted), without
    /// one: the bucket where its count reaches the percentile's rank is the rank-th value's,
    /// and it answers that bucket's highest equivalent value, within the least and greatest
    /// value it holds (values above the ceiling held as the ceiling). DurationRecorderTests
    /// compare the two.
    static func histogramPercentiles(_ percentiles: [Double], sorted: [UInt64]) -> [UInt64] {
        let n = sorted.count
        let (least, greatest) = (Swift.min(sorted[0], histogramCeiling), Swift.min(sorted[n - 1], histogramCeiling))
        return percentiles.map { p in
            // The package's rank: one ulp below the percentile, rounded up, at least 1.
            let requested = Swift.min(Swift.max(p.nextDown, 0.0), 100.0)
            let rank = Swift.max(1, Int((requested * Double(n) / 100.0).rounded(.up)))
            let value = Swift.min(sorted[Swift.min(rank, n) - 1], histogramCeiling)
            return Swift.max(Swift.min(layout.highestEquivalentForValue(value), greatest), least)
        }
    }

    mutating func reset() {
        values.removeAll(keepingCapacity: true)
        if usesHistogram { histogram.reset(); usesHistogram = false }
        count = 0; total = 0; minValue = .max; maxValue = 0
    }
}
