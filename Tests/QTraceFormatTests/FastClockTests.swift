// The merge's integer TSC -> ns conversion must give exactly TraceClock.time(ofTSC:) for
// every TSC: statistics compare times to the nanosecond.
import XCTest
@testable import QTraceFormat

final class FastClockTests: XCTestCase {
    /// Clocks like the recorder's (least-squares lines around 1-4 GHz with small offsets)
    /// and unusual ones (identity, slow and fast counters, large offsets).
    private func clocks(_ rng: inout SeededGenerator) -> [TraceClock] {
        var out = [
            TraceClock(baseTsc: 1_000, offsetNs: 0, nsPerTick: 1, method: .identity, pairCount: 1),
            TraceClock(baseTsc: 123_456_789, offsetNs: 0, nsPerTick: 1e9 / 3e9, method: .tscHz, pairCount: 1),
            TraceClock(baseTsc: 1 << 40, offsetNs: -0.5, nsPerTick: 0.5, method: .leastSquares, pairCount: 3),
            TraceClock(baseTsc: 0, offsetNs: 1e12, nsPerTick: 1000, method: .leastSquares, pairCount: 3),
            TraceClock(baseTsc: 77, offsetNs: 3.75, nsPerTick: 1e-6, method: .leastSquares, pairCount: 3),
        ]
        for _ in 0..<40 {
            let ghz = Double.random(in: 0.8...4.5, using: &rng)
            let slope = 1 / ghz * (1 + Double.random(in: -1e-4...1e-4, using: &rng))
            let offset = Double.random(in: -2000...2000, using: &rng)
            out.append(TraceClock(baseTsc: UInt64.random(in: 0...(1 << 50), using: &rng), offsetNs: offset,
                                  nsPerTick: slope, method: .leastSquares, pairCount: 5))
        }
        return out
    }

    func testSameTimeAsTheDoublePathForEveryKindOfTSC() {
        var rng = SeededGenerator(seed: 0xC10C)
        var fastAnswers = 0, checked = 0, slowAnswers = 0
        for clock in clocks(&rng) {
            for spanSeconds in [0.001, 3.0, 600.0, 5000.0] {
                let span = UInt64(spanSeconds * 1e9 / clock.nsPerTick)
                let converter = FastTSCConverter(clock, maxTsc: clock.baseTsc &+ span)
                func check(_ tsc: UInt64) {
                    let expected = clock.time(ofTSC: tsc), got = converter.time(ofTSC: tsc)
                    if got != expected {
                        XCTFail("clock \(clock), tsc \(tsc): double \(expected), fast \(got)")
                    }
                    if converter.fastTime(ofTSC: tsc) != nil { fastAnswers += 1 } else { slowAnswers += 1 }
                    checked += 1
                }
                for _ in 0..<3000 { check(clock.baseTsc &+ UInt64.random(in: 0...span, using: &rng)) }
                // Near-ties: TSCs whose exact time is within a few ticks of n + 0.5 ns.
                for _ in 0..<1500 {
                    let n = Double(UInt64.random(in: 0...UInt64(max(1, Double(span) * clock.nsPerTick)), using: &rng))
                    let ticks = ((n + 0.5 - clock.offsetNs) / clock.nsPerTick).rounded()
                    guard ticks >= 4, ticks < 9e15 else { continue }
                    for delta in -3...3 { check(clock.baseTsc &+ UInt64(Int64(ticks) + Int64(delta))) }
                }
                // Around the start, before it, past the covered range, and the extremes.
                for tsc in [clock.baseTsc, clock.baseTsc &+ 1, clock.baseTsc &- 1, clock.baseTsc &+ span,
                            clock.baseTsc &+ span &+ 1, 0, .max, clock.baseTsc &+ (1 << 62)] {
                    check(tsc)
                }
                for tsc in stride(from: clock.baseTsc, to: clock.baseTsc &+ 5000, by: 1) { check(tsc) }
            }
        }
        XCTAssertGreaterThan(checked, 1_000_000)
        // Both paths were exercised (near-ties must fall back).
        XCTAssertGreaterThan(fastAnswers, checked / 2)
        XCTAssertGreaterThan(slowAnswers, 10_000)
    }

    /// The fast path answers almost always on a recorder-like clock (else it is no faster).
    func testFastPathCoversATypicalTrace() {
        let clock = TraceClock(baseTsc: 5_000_000, offsetNs: -12.375, nsPerTick: 0.3333371, method: .leastSquares, pairCount: 9)
        let converter = FastTSCConverter(clock, maxTsc: 5_000_000 + 30_000_000_000)
        var rng = SeededGenerator(seed: 11)
        var slow = 0
        for _ in 0..<100_000 where converter.fastTime(ofTSC: 5_000_000 + UInt64.random(in: 0...30_000_000_000, using: &rng)) == nil {
            slow += 1
        }
        XCTAssertLessThan(slow, 100)
    }
}
