// DurationHistogram reimplements the HdrHistogram library's bucket layout and percentile rule
// for speed: its percentiles must be the library's, to the bit (the JSON summary depends on it).
import XCTest
import Histogram
@testable import QTraceAnalysis

final class HistogramEquivalenceTests: XCTestCase {
    private let percentiles = (50.0, 90.0, 95.0, 99.0)

    /// The library configured as DurationRecorder configured it before.
    private func reference(_ values: [UInt64]) -> (UInt64, UInt64, UInt64, UInt64) {
        var library = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: DurationHistogram.highestTrackableValue,
                                        numberOfSignificantValueDigits: .three)
        for v in values { XCTAssertTrue(library.record(v)) }
        return (library.valueAtPercentile(50), library.valueAtPercentile(90),
                library.valueAtPercentile(95), library.valueAtPercentile(99))
    }

    private func ours(_ values: [UInt64]) -> (UInt64, UInt64, UInt64, UInt64) {
        var histogram = DurationHistogram()
        for v in values { histogram.record(v) }
        return histogram.values(atPercentiles: percentiles)
    }

    private func assertSame(_ values: [UInt64], _ what: String, line: UInt = #line) {
        let expected = reference(values), got = ours(values)
        XCTAssertTrue(expected == got, "\(what): library \(expected), ours \(got)", line: line)
    }

    func testPercentilesMatchTheLibrary() {
        var generator = SplitMix(seed: 0x4844_5248)
        for round in 0..<120 {
            let count = 1 + Int(generator.next() % 3000)
            // Spreads from a few ns to the ceiling, including exact bucket edges and zeros.
            let magnitude = UInt64(1) << (generator.next() % 45)
            let values = (0..<count).map { _ -> UInt64 in
                switch generator.next() % 8 {
                case 0: return 0
                case 1: return DurationHistogram.highestTrackableValue
                case 2: return UInt64(1) << (generator.next() % 45)          // bucket edges
                case 3: return (UInt64(1) << (generator.next() % 44)) &- 1
                default: return generator.next() % magnitude
                }
            }
            assertSame(values, "round \(round), \(count) values")
        }
    }

    func testEdgeCases() {
        assertSame([0], "a single zero")
        assertSame([7], "a single value")
        assertSame([DurationHistogram.highestTrackableValue], "the ceiling")
        assertSame(Array(repeating: 2047, count: 1000) + [2048, 4095, 4096], "bucket boundaries")
        assertSame((0..<100_000).map { UInt64($0) * 7919 }, "100k spread values")
        assertSame((1...4096).map { UInt64($0) }, "unit resolution range")
    }

    /// Every index maps back to the largest value it counts, as the library computes it.
    func testIndexRoundTrip() {
        var library = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: DurationHistogram.highestTrackableValue,
                                        numberOfSignificantValueDigits: .three)
        var generator = SplitMix(seed: 7)
        for _ in 0..<100_000 {
            let value = generator.next() % (DurationHistogram.highestTrackableValue + 1)
            let highest = DurationHistogram.highestValue(at: DurationHistogram.index(of: value))
            XCTAssertEqual(highest, library.highestEquivalentForValue(value), "value \(value)")
            XCTAssertTrue(library.record(value))
        }
    }
}

/// A small deterministic generator (tests must not depend on the system's random source).
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
