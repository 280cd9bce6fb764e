// Latency distributions: exact for small sets, HDR histogram percentiles (3 significant digits)
// beyond, with exact count, min, max and total.

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
    init(sorted values: ArraySlice<UInt64>) {
        guard let first = values.first, let last = values.last else { return }
        count = values.count
        minNs = first
        maxNs = last
        totalNs = values.reduce(0, &+)
        meanNs = totalNs / UInt64(count)
        func at(_ p: Double) -> UInt64 {
            let rank = Swift.max(1, Int((p / 100 * Double(count)).rounded(.up)))
            return values[values.startIndex + Swift.min(rank, count) - 1]
        }
        p50Ns = at(50); p90Ns = at(90); p95Ns = at(95); p99Ns = at(99)
    }
}

/// Collects durations. Up to `exactLimit` values are kept and give exact percentiles; past
/// that they move into an HDR histogram (3 significant digits), whose memory does not grow
/// with the count. Reusable through `reset()`.
struct DurationRecorder {
    static let exactLimit = 512
    /// Longer durations go into the histogram as this (about 4.9 hours): a damaged trace's
    /// absurd values must not grow it to the full 64-bit range. min, max, total stay exact.
    static let histogramCeiling: UInt64 = DurationHistogram.highestTrackableValue

    private var values: [UInt64] = []
    /// In use once more than `exactLimit` values came.
    private var histogram = DurationHistogram()
    private var usesHistogram = false
    private var count = 0
    private var total: UInt64 = 0
    private var minValue = UInt64.max
    private var maxValue: UInt64 = 0

    @inline(__always)
    mutating func record(_ ns: UInt64) {
        count += 1
        total &+= ns
        if ns < minValue { minValue = ns }
        if ns > maxValue { maxValue = ns }
        if usesHistogram {
            histogram.record(Swift.min(ns, Self.histogramCeiling))
            return
        }
        recordExact(ns)
    }

    @inline(never)
    private mutating func recordExact(_ ns: UInt64) {
        values.append(ns)
        if values.count > Self.exactLimit {
            for v in values { histogram.record(Swift.min(v, Self.histogramCeiling)) }
            usesHistogram = true
            values.removeAll(keepingCapacity: true)
        }
    }

    var isEmpty: Bool { count == 0 }

    /// Exact for up to `exactLimit` values; beyond, HDR percentiles (within 0.1%) clamped to
    /// the exact min and max.
    var stats: DurationStats {
        guard count > 0 else { return DurationStats() }
        guard usesHistogram else { return DurationStats(sorted: values.sorted()[...]) }
        var s = DurationStats()
        let p = histogram.values(atPercentiles: (50, 90, 95, 99))
        func clamped(_ value: UInt64) -> UInt64 { Swift.min(Swift.max(value, minValue), maxValue) }
        s.count = count
        s.minNs = minValue
        s.maxNs = maxValue
        s.totalNs = total
        s.meanNs = total / UInt64(count)
        s.p50Ns = clamped(p.0)
        s.p90Ns = clamped(p.1)
        s.p95Ns = clamped(p.2)
        s.p99Ns = clamped(p.3)
        return s
    }

    mutating func reset() {
        values.removeAll(keepingCapacity: true)
        if usesHistogram { histogram = DurationHistogram(); usesHistogram = false }
        count = 0; total = 0; minValue = .max; maxValue = 0
    }
}

/// An HDR histogram of durations: the bucket layout and percentile rule of the HdrHistogram
/// library (hdrhistogram-swift's `Histogram<UInt64>` with lowest discernible value 1, highest
/// trackable value 2^44 and 3 significant digits), so its percentiles are the library's to
/// the bit; `HistogramEquivalenceTests` checks that against the library itself. It exists
/// for speed: recording is an index computation and an increment (the library's generic
/// `record` was 130 instructions a value), the counts grow with the largest value instead of
/// covering 2^44 up front, and the four percentiles come from one pass over the counts.
struct DurationHistogram {
    static let highestTrackableValue: UInt64 = 1 << 44
    /// 2048 sub-buckets (unit resolution up to 2 × 10^3), half of them per bucket past the first.
    private static let subBucketHalfCountMagnitude = 10
    private static let subBucketHalfCount = 1 << subBucketHalfCountMagnitude
    private static let subBucketMask: UInt64 = 2 * UInt64(subBucketHalfCount) - 1
    /// 64 minus the bits of the largest value of bucket 0 (2047).
    private static let leadingZeroCountBase = 64 - 11

    /// Counts by index; indices past the end count 0 (grown in whole buckets on demand).
    private var counts: [UInt64] = []
    private var totalCount: UInt64 = 0
    private var maxRecorded: UInt64 = 0
    private var minNonZero = UInt64.max

    /// Records `value` (at most `highestTrackableValue`).
    @inline(__always)
    mutating func record(_ value: UInt64) {
        let index = Self.index(of: value)
        if index >= counts.count { grow(toInclude: index) }
        counts.withUnsafeMutableBufferPointer { $0[index] &+= 1 }
        totalCount &+= 1
        if value > maxRecorded { maxRecorded = value }
        if value != 0 && value < minNonZero { minNonZero = value }
    }

    private mutating func grow(toInclude index: Int) {
        let size = (index / Self.subBucketHalfCount + 1) * Self.subBucketHalfCount
        counts.append(contentsOf: repeatElement(0, count: size - counts.count))
    }

    /// The library's `countsIndexForValue`.
    @inline(__always)
    static func index(of value: UInt64) -> Int {
        let bucket = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucket = Int(truncatingIfNeeded: value &>> UInt64(bucket))
        return (bucket + 1) << subBucketHalfCountMagnitude + (subBucket - subBucketHalfCount)
    }

    /// The library's `highestEquivalentForValue(valueFromIndex(index))`: the largest value
    /// counted at `index`.
    static func highestValue(at index: Int) -> UInt64 {
        var bucket = (index >> subBucketHalfCountMagnitude) - 1
        var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucket < 0 {
            subBucket -= subBucketHalfCount
            bucket = 0
        }
        // A sub-bucket below 2048 spans 2^bucket values.
        return (UInt64(subBucket) << UInt64(bucket)) + (UInt64(1) << UInt64(bucket)) - 1
    }

    /// The library's `valueAtPercentile` for four percentiles in increasing order (each in
    /// 0 <.. < 100), in one pass over the counts.
    func values(atPercentiles p: (Double, Double, Double, Double)) -> (UInt64, UInt64, UInt64, UInt64) {
        guard totalCount > 0 else { return (0, 0, 0, 0) }
        let targets = [countAtPercentile(p.0), countAtPercentile(p.1), countAtPercentile(p.2), countAtPercentile(p.3)]
        let lowest = counts[0] > 0 ? 0 : minNonZero
        var found = [UInt64](repeating: 0, count: 4)
        var next = 0
        var cumulative: UInt64 = 0
        for index in counts.indices where counts[index] != 0 {
            cumulative &+= counts[index]
            while next < 4 && cumulative >= targets[next] {
                found[next] = Swift.max(Swift.min(Self.highestValue(at: index), maxRecorded), lowest)
                next += 1
            }
            if next == 4 { break }
        }
        return (found[0], found[1], found[2], found[3])
    }

    /// How many values lie at or below the percentile: the library's rounding, to the ulp.
    private func countAtPercentile(_ percentile: Double) -> UInt64 {
        // One ulp less avoids rounding over into the next bucket.
        let requested = Swift.min(Swift.max(percentile.nextDown, 0.0), 100.0)
        let countAtPercentile = (requested * Double(totalCount)) / 100.0
        return Swift.max(1, UInt64(countAtPercentile.rounded(.up)))
    }
}
