import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceText
import QTraceAnalysisTestSupport

/// Damaged and hostile input must not trap: random records over small id and address spaces
/// (collisions, ends without starts, waits without begins, reused tids, time going back).
final class RobustnessTests: XCTestCase {

    func testRandomEventsNeverTrap() throws {
        for seed: UInt64 in 1...4 {
            var rng = SplitMix64(seed: seed)
            var events: [Event] = []
            var t: UInt64 = 0
            let types = EventType.allCases
            for _ in 0..<40_000 {
                // Mostly forward, sometimes back in time.
                t = rng.next() % 16 == 0 ? t &- Swift.min(t, rng.next() % 1000) : t + rng.next() % 5000
                let type = types[Int(rng.next() % UInt64(types.count))]
                func small(_ n: UInt64) -> UInt64 { rng.next() % n }
                let address = 0x1000 + small(12) * 0x100
                let arg: UInt32 = UInt32(truncatingIfNeeded: rng.next() % 4 == 0 ? rng.next() : small(12))
                var e = Event(type: type, time: t, tid: Int32(100 + small(6)), arg: arg, flags: UInt8(small(16)),
                              a: small(3) == 0 ? address : small(40), b: small(2) == 0 ? address : rng.next(),
                              c: small(2) == 0 ? small(4) * 1_000_000 : rng.next(), d: address)
                if type == .queueCreate || type == .queueInfo || type == .threadName || type == .mark {
                    e.string = small(5) == 0 ? "\u{1b}[2J\u{0}weird" : "q\(small(5))"
                }
                events.append(e)
            }
            var info = TraceInfo(ncpu: 2, mainTid: 100, mainQueue: 0x1000, droppedEvents: 1, shimOverheadNs: 10)
            info.durationNs = t / 2 // shorter than the events: must not matter
            let r = Analysis.run(info: info, events: events)
            XCTAssertEqual(r.model.eventCount, events.count)
            _ = try AnalysisSummary(result: r, tracePath: nil, generator: "test").jsonData()
            _ = StatsText.render(r, tracePath: nil, width: 80, limit: 0)
            _ = RunComparison(base: AnalysisSummary(result: r, tracePath: nil, generator: "a"),
                              new: AnalysisSummary(result: r, tracePath: nil, generator: "b"))
        }
    }

    func testEmptyTrace() throws {
        let r = Analysis.run(info: TraceInfo(), events: [])
        XCTAssertEqual(r.statistics.items, 0)
        XCTAssertEqual(r.findings, [])
        XCTAssertTrue(StatsText.render(r, tracePath: nil).contains("(no work items)"))
        _ = try AnalysisSummary(result: r, tracePath: nil, generator: "test").jsonData()
    }
}
