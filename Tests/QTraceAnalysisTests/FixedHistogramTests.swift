// FixedHistogram replaced the hdrhistogram package in DurationRecorder on the promise that
// every percentile stays the same: checked here against the package itself, configured as
// the recorder used it, on values spread over the whole range, zeros and repeats included.
import Histogram
import XCTest
@testable import QTraceAnalysis

final class FixedHistogramTests: XCTestCase {
    func testPercentilesAreThePackagesOnRandomValues() {
        var seeded = Seeded(state: 24)
        for round in 0..<60 {
            var fixed = FixedHistogram()
            var reference = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: FixedHistogram.ceiling,
                                              numberOfSignificantValueDigits: .three)
            let count = 1 + Int(seeded.next() % 5000)
            for _ in 0..<count {
                let value = randomValue(&seeded)
                fixed.record(value)
                reference.record(value)
            }
            let percentiles = [0.5, 50.0, 90, 95, 99, 99.9, Double(seeded.next() % 99_999 + 1) / 1000]
            for p in percentiles {
                XCTAssertEqual(fixed.valueAtPercentile(p), reference.valueAtPercentile(p), "round \(round), p\(p), \(count) values")
            }
            let ascending = percentiles.sorted()
            XCTAssertEqual(fixed.valuesAtPercentiles(ascending), ascending.map { reference.valueAtPercentile($0) }, "round \(round)")
        }
    }

    func testResetForgetsEverything() {
        var fixed = FixedHistogram()
        for v: UInt64 in [5, 70_000, 1 << 40] { fixed.record(v) }
        fixed.reset()
        fixed.record(3)
        XCTAssertEqual(fixed.total, 1)
        XCTAssertEqual(fixed.valueAtPercentile(99), 3)
    }

    func testIndexArithmeticIsThePackagesAtBucketEdges() {
        let reference = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: FixedHistogram.ceiling,
                                          numberOfSignificantValueDigits: .three)
        let edges: [UInt64] = (0..<45).flatMap { bit -> [UInt64] in
            let v = UInt64(1) << bit
            return [v - 1, v, v + 1, v * 3 / 2]
        }
        for v in edges where v <= FixedHistogram.ceiling {
            XCTAssertEqual(FixedHistogram.highestEquivalent(v), reference.highestEquivalentForValue(v), "value \(v)")
            XCTAssertEqual(FixedHistogram.value(atIndex: FixedHistogram.index(v)), reference.lowestEquivalentForValue(v), "value \(v)")
        }
    }

    /// Log-uniform over 0...2^44, with a zero or a repeat now and then.
    private func randomValue(_ seeded: inout Seeded) -> UInt64 {
        switch seeded.next() % 20 {
        case 0: return 0
        case 1: return 1_000
        default:
            let bits = seeded.next() % 45
            return bits == 0 ? 1 : Swift.min(FixedHistogram.ceiling, seeded.next() % (UInt64(1) << bits))
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
