// Latency distributions: exact for small sets, HDR histogram percentiles (3 significant digits)
// beyond, with exact count, min, max and total (DurationRecorder).

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
    static func select<Value: Comparable>(_ ranks: [Int], in values: UnsafeMutableBufferPointer<Value>) {
        var low = 0
        for rank in ranks where rank >= low && rank < values.count {
            select(rank, in: values, from: low, to: values.count)
            low = rank + 1
        }
    }

    private static func select<Value: Comparable>(_ k: Int, in a: UnsafeMutableBufferPointer<Value>, from start: Int, to end: Int) {
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
    private static func medianOfThree<Value: Comparable>(_ x: Value, _ y: Value, _ z: Value) -> Value {
        Swift.max(Swift.min(x, y), Swift.min(Swift.max(x, y), z))
    }
}
