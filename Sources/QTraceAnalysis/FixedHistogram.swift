// The HDR histogram of `DurationRecorder`, written out for its one configuration (values 1 to
// 2^44, 3 significant digits). The hdrhistogram package's generic code ran unspecialized from
// here (its `bitWidth`, `_lowWord`, `reset` and `valueAtPercentile` were ~45% of `qtrace stats`
// on a trace of 400 queues), and every recorder allocated its counts up front. This one gives
// the same buckets and the same percentiles (HdrHistogram-swift 0.2's `valueAtPercentile`,
// followed step by step), so summaries do not change; it allocates its counts when first
// used, and clears and scans only the range of buckets that was used.

struct FixedHistogram {
    // The package's derived constants for lowestDiscernibleValue 1 (unit magnitude 0) and 3
    // digits: unit resolution up to 2,000 needs 2,048 sub-buckets (magnitude 11).
    private static let subBucketHalfCountMagnitude = 10
    private static let subBucketHalfCount = 1 << 10
    private static let subBucketCount = 1 << 11
    private static let subBucketMask: UInt64 = (1 << 11) - 1
    private static let leadingZeroCountBase = 64 - 11
    static let ceiling: UInt64 = 1 << 44
    private static let length = index(ceiling) + 1

    private var counts: [UInt64] = []
    /// The range of `counts` that may be non-zero (empty when `low > high`).
    private var low = Int.max
    private var high = -1
    private(set) var total: UInt64 = 0
    private var minValue = UInt64.max
    private var maxValue: UInt64 = 0

    /// Counts `value` (at most `ceiling`: the caller clamps).
    @inline(__always)
    mutating func record(_ value: UInt64) {
        if counts.isEmpty { counts = [UInt64](repeating: 0, count: Self.length) }
        let i = Self.index(value)
        counts[i] &+= 1
        if i < low { low = i }
        if i > high { high = i }
        total &+= 1
        if value < minValue { minValue = value }
        if value > maxValue { maxValue = value }
    }

    /// Empty again, keeping the counts' memory.
    mutating func reset() {
        if low <= high {
            counts.withUnsafeMutableBufferPointer { buffer in
                for i in low...high { buffer[i] = 0 }
            }
        }
        (low, high, total, minValue, maxValue) = (.max, -1, 0, .max, 0)
    }

    /// The package's value at `percentile` (0 < percentile < 100): the highest value equivalent
    /// to the bucket where the count reaches the percentile's rank, within the recorded min and max.
    func valueAtPercentile(_ percentile: Double) -> UInt64 {
        valuesAtPercentiles([percentile])[0]
    }

    /// `valueAtPercentile` of each of `percentiles` (ascending), in one scan of the buckets
    /// instead of one per percentile (the scans were 2% of `stats` on 400 busy queues).
    func valuesAtPercentiles(_ percentiles: [Double]) -> [UInt64] {
        var values = [UInt64](repeating: 0, count: percentiles.count)
        guard low <= high else { return values }
        var next = 0, rank = rank(percentiles[0]), cumulative: UInt64 = 0
        for i in low...high {
            cumulative &+= counts[i]
            while cumulative >= rank {
                values[next] = Swift.max(Swift.min(Self.highestEquivalent(Self.value(atIndex: i)), maxValue), minValue)
                next += 1
                guard next < percentiles.count else { return values }
                rank = self.rank(percentiles[next])
            }
        }
        return values
    }

    /// The package's count at a percentile: one ulp less (no round-off into the next bucket),
    /// rounded up, at least 1.
    private func rank(_ percentile: Double) -> UInt64 {
        let requested = Swift.min(Swift.max(percentile.nextDown, 0.0), 100.0)
        return Swift.max(1, UInt64((requested * Double(total) / 100.0).rounded(.up)))
    }

    // MARK: The package's index arithmetic (`countsIndexForValue`, `valueFromIndex`, ...)

    @inline(__always)
    private static func bucket(_ value: UInt64) -> Int {
        leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
    }

    @inline(__always)
    static func index(_ value: UInt64) -> Int {
        let bucket = bucket(value)
        let subBucket = Int(value >> bucket)
        return ((bucket + 1) << subBucketHalfCountMagnitude) + subBucket - subBucketHalfCount
    }

    static func value(atIndex index: Int) -> UInt64 {
        var bucket = (index >> subBucketHalfCountMagnitude) - 1
        var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucket < 0 {
            subBucket -= subBucketHalfCount
            bucket = 0
        }
        return UInt64(subBucket) << bucket
    }

    static func highestEquivalent(_ value: UInt64) -> UInt64 {
        let bucket = bucket(value)
        let subBucket = Int(value >> bucket)
        let lowest = UInt64(subBucket) << bucket
        let size = UInt64(1) << (subBucket >= subBucketCount ? bucket + 1 : bucket)
        return lowest + size - 1
    }
}
