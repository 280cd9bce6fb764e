// DurationRecorder reads percentiles of up to 64k values from their buckets at the ranks' order,
// the way the HDR histogram would read them, and counts in the histogram's layout (its own
// `HDRLayout`) only beyond: checked here against the hdrhistogram package itself, as the recorder used it
// for every count above 512, on values over the whole range (zeros, repeats and values above
// the histogram's ceiling).
import Histogram
import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class DurationRecorderTests: XCTestCase {
    func testPercentilesAreTheHistogramsAtEveryCount() {
        var seeded = Seeded(state: 24)
        let limit = DurationRecorder.sortedLimit
        for count in [1, 2, 100, 512, 513, 700, 2_500, 9_999, limit, limit + 1, limit + 5_000] {
            let values = (0..<count).map { _ in randomValue(&seeded) }
            let recorder = DurationRecorder()
            for v in values { recorder.record(v) }
            XCTAssertEqual(recorder.stats, reference(values), "\(count) values")
        }
    }

    func testManyRandomSetsAgainstTheHistogram() {
        var seeded = Seeded(state: 7)
        for round in 0..<40 {
            let values = (0..<(513 + Int(seeded.next() % 4000))).map { _ in randomValue(&seeded) }
            let recorder = DurationRecorder()
            for v in values { recorder.record(v) }
            XCTAssertEqual(recorder.stats, reference(values), "round \(round)")
        }
    }

    /// `HDRLayout` is the package's layout: the same bucket (counts index) and the same highest
    /// equivalent value for every value around each power of two, and at random.
    func testTheLayoutIsThePackages() {
        let histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: HDRLayout.ceiling,
                                          numberOfSignificantValueDigits: .three)
        var seeded = Seeded(state: 5)
        var values: [UInt64] = [0, 1, 2047, 2048, 2049, HDRLayout.ceiling]
        for bit in 0...44 {
            let power = UInt64(1) << UInt64(bit)
            values += [power - 1, power, power + 1, power + power / 2].filter { $0 <= HDRLayout.ceiling }
        }
        values += (0..<20_000).map { _ in Swift.min(randomValue(&seeded), HDRLayout.ceiling) }
        var lastBucket = -1
        for v in values.sorted() {
            XCTAssertEqual(HDRLayout.highestEquivalent(v), histogram.highestEquivalentForValue(v), "\(v)")
            let bucket = HDRLayout.bucket(v)
            XCTAssertTrue(bucket >= lastBucket && bucket < HDRLayout.bucketCount, "\(v): bucket \(bucket)")
            XCTAssertEqual(bucket == lastBucket, lastBucket >= 0 && HDRLayout.highestEquivalent(ofBucket: lastBucket) >= v, "\(v)")
            lastBucket = bucket
        }
    }

    /// Past `sortedLimit` the counts answer, also after a reset and a second run past it.
    func testCountsAfterAResetAnswerAsNew() {
        var seeded = Seeded(state: 9)
        let recorder = DurationRecorder()
        for round in 0..<3 {
            let values = (0..<(DurationRecorder.sortedLimit + 1_000 * round + 1)).map { _ in randomValue(&seeded) }
            for v in values { recorder.record(v) }
            XCTAssertEqual(recorder.stats, reference(values), "round \(round)")
            recorder.reset()
        }
    }

    func testAResetRecorderIsANewOne() {
        var seeded = Seeded(state: 3)
        let recorder = DurationRecorder()
        for _ in 0..<(DurationRecorder.sortedLimit + 10) { recorder.record(randomValue(&seeded)) }
        recorder.reset()
        let values = (0..<1_000).map { _ in randomValue(&seeded) }
        for v in values { recorder.record(v) }
        XCTAssertEqual(recorder.stats, reference(values))
    }

    /// The ranks' values are sorted order's, on orders that defeat naive pivots and on repeats.
    func testOrderStatisticsAreTheSortedValuesAtTheirRanks() {
        var seeded = Seeded(state: 11)
        for count in [1, 2, 3, 17, 18, 100, 513, 2_500, 20_000] {
            let random = (0..<count).map { _ in randomValue(&seeded) }
            let orders: [(String, [UInt64])] = [
                ("random", random), ("sorted", random.sorted()), ("reversed", random.sorted().reversed()),
                ("all equal", Array(repeating: 7, count: count)), ("two values", (0..<count).map { UInt64($0 % 2) }),
                ("organ pipe", (0..<count).map { UInt64(min($0, count - $0)) }),
            ]
            for (name, values) in orders {
                var selected = values
                selected.withUnsafeMutableBufferPointer { buffer in
                    XCTAssertEqual(DurationStats(unsorted: buffer), DurationStats(sorted: values.sorted()[...]), "\(name), \(count) values")
                }
                XCTAssertEqual(selected.sorted(), values.sorted(), "\(name): the same values, reordered")
            }
        }
    }

    /// What the recorder answered before it kept sorted values: exact up to 512 values, else
    /// the histogram's percentiles (values clamped to its ceiling) within the exact min and max.
    private func reference(_ values: [UInt64]) -> DurationStats {
        guard values.count > DurationRecorder.exactLimit else { return DurationStats(sorted: values.sorted()[...]) }
        var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: DurationRecorder.histogramCeiling,
                                          numberOfSignificantValueDigits: .three)
        for v in values { histogram.record(Swift.min(v, DurationRecorder.histogramCeiling)) }
        let (least, greatest) = (values.min()!, values.max()!)
        func at(_ p: Double) -> UInt64 { Swift.min(Swift.max(histogram.valueAtPercentile(p), least), greatest) }
        var s = DurationStats()
        s.count = values.count
        s.minNs = least
        s.maxNs = greatest
        s.totalNs = values.reduce(0, &+)
        s.meanNs = s.totalNs / UInt64(values.count)
        (s.p50Ns, s.p90Ns, s.p95Ns, s.p99Ns) = (at(50), at(90), at(95), at(99))
        return s
    }

    /// Log-uniform up to 2^46 (beyond the ceiling now and then), with zeros and repeats.
    private func randomValue(_ seeded: inout Seeded) -> UInt64 {
        switch seeded.next() % 20 {
        case 0: return 0
        case 1: return 1_000
        default:
            let bits = seeded.next() % 47
            return bits == 0 ? 1 : seeded.next() % (UInt64(1) << bits)
        }
    }
}

/// SplitMix64: the same values on every run.
private struct Seeded {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
