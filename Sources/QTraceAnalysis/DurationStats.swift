// Latency distributions: exact for small sets, HDR histogram percentiles (3 significant digits,
// FixedHistogram) beyond, with exact count, min, max and total.

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
    static let histogramCeiling: UInt64 = FixedHistogram.ceiling

    private var values: [UInt64] = []
    /// In use once more than `exactLimit` values came (non-optional: mutating through an
    /// optional copies it). Allocates nothing until then.
    private var histogram = FixedHistogram()
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
        let values = histogram.valuesAtPercentiles([50, 90, 95, 99]).map { Swift.min(Swift.max($0, minValue), maxValue) }
        s.count = count
        s.minNs = minValue
        s.maxNs = maxValue
        s.totalNs = total
        s.meanNs = total / UInt64(count)
        (s.p50Ns, s.p90Ns, s.p95Ns, s.p99Ns) = (values[0], values[1], values[2], values[3])
        return s
    }

    mutating func reset() {
        values.removeAll(keepingCapacity: true)
        if usesHistogram { histogram.reset(); usesHistogram = false }
        count = 0; total = 0; minValue = .max; maxValue = 0
    }
}
