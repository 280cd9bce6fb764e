// TSC -> ns: least squares over the pairs, and the fallbacks.
import XCTest
@testable import QTraceFormat

final class ClockTests: XCTestCase {
    func testLeastSquaresThroughNoisyPairs() {
        let initPair = CalibrationPair(tsc: 1_000_000, monoNs: 50_000_000)
        var pairs = [initPair]
        var rng = SeededGenerator(seed: 3)
        for step in 1...100 {
            let ns = UInt64(step) * 10_000_000
            let jitter = UInt64.random(in: 0...40, using: &rng)
            pairs.append(CalibrationPair(tsc: initPair.tsc + ns * 3 + jitter, monoNs: initPair.monoNs + ns))
        }
        let clock = TraceClock.fit(initPair: initPair, pairs: pairs, tscHz: 0)
        XCTAssertEqual(clock.method, .leastSquares)
        XCTAssertEqual(clock.pairCount, 101)
        XCTAssertEqual(clock.ticksPerSecond, 3e9, accuracy: 10)
        let oneSecond = clock.time(ofTSC: initPair.tsc + 3_000_000_000)
        XCTAssertEqual(Double(oneSecond), 1e9, accuracy: 100)
    }

    func testSinglePairUsesTscHz() {
        let initPair = CalibrationPair(tsc: 500, monoNs: 7_000)
        let clock = TraceClock.fit(initPair: initPair, pairs: [initPair], tscHz: 2_500_000_000)
        XCTAssertEqual(clock.method, .tscHz)
        XCTAssertEqual(clock.time(ofTSC: 500 + 2_500), 1_000)
    }

    func testDegenerateFitFallsBack() {
        let initPair = CalibrationPair(tsc: 500, monoNs: 7_000)
        let same = [initPair, initPair, initPair]
        XCTAssertEqual(TraceClock.fit(initPair: initPair, pairs: same, tscHz: 1_000_000_000).method, .tscHz)
        let identity = TraceClock.fit(initPair: initPair, pairs: same, tscHz: 0)
        XCTAssertEqual(identity.method, .identity)
        XCTAssertEqual(identity.time(ofTSC: 1_500), 1_000)
        // A clock that runs backwards is not a fit.
        let backwards = [initPair, CalibrationPair(tsc: 600, monoNs: 7_000), CalibrationPair(tsc: 700, monoNs: 7_000)]
        XCTAssertEqual(TraceClock.fit(initPair: initPair, pairs: backwards, tscHz: 0).method, .identity)
    }

    func testPairsBeforeTheStartAreIgnoredAndTimesClampAtZero() {
        let initPair = CalibrationPair(tsc: 1_000, monoNs: 1_000)
        let pairs = [initPair, CalibrationPair(tsc: 2_000, monoNs: 2_000), CalibrationPair(tsc: 1, monoNs: 99_999_999)]
        let clock = TraceClock.fit(initPair: initPair, pairs: pairs, tscHz: 0)
        XCTAssertEqual(clock.pairCount, 2)
        XCTAssertEqual(clock.time(ofTSC: 1_500), 500)
        XCTAssertEqual(clock.time(ofTSC: 10), 0)
        XCTAssertEqual(clock.time(ofTSC: 1_000 + 1 << 62), 1 << 62)
    }

    func testWriterAtThreeGigahertzRoundTripsWithinANanosecond() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/3ghz.qtrace"
        let writer = try TraceWriter(path: path, tscHz: 3_000_000_000, chunkSize: 4096)
        let times = (0..<2000).map { UInt64($0) * 12_345 + 17 }
        for time in times { try writer.append(Event(type: .end, time: time, tid: 1, a: time)) }
        try writer.finish()
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.clock.method, .leastSquares)
        for event in trace.readAllEvents() {
            XCTAssertLessThanOrEqual(max(event.time, event.a) - min(event.time, event.a), 1)
        }
    }

    func testHeaderTscHzZeroWithOnePairMeansOneTickPerNanosecond() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/raw.qtrace"
        let writer = try TraceWriter(path: path, tscHz: 2_000_000_000)
        writer.header.tscHz = 0
        writer.processExited = false
        try writer.append(Event(type: .end, time: 0, tid: 1))   // chunk pair == init pair
        try writer.append(Event(type: .end, time: 100, tid: 1))
        try writer.finish()
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.clock.method, .identity)
        XCTAssertEqual(trace.readAllEvents().map(\.time), [0, 200])
    }
}
