import XCTest
import QTraceFormat
import QTraceAnalysis
import QTraceAnalysisTestSupport

/// Prints the analysis throughput; never asserts on time (machines are noisy). Run in release
/// for meaningful numbers.
final class ThroughputTests: XCTestCase {
    func testAnalysisThroughputOnOneMillionEvents() {
        let (info, events) = SyntheticWorkload.events(1_000_000)
        let clock = ContinuousClock()
        var result: AnalysisResult?
        let elapsed = clock.measure {
            result = Analysis.run(info: info, events: events)
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(events.count) / seconds
        print("qtrace analysis: \(events.count) events in \(Int(seconds * 1000)) ms = \(Int(rate / 1000)) k events/s (model + statistics + findings)")
        XCTAssertEqual(result?.model.eventCount, events.count)
        XCTAssertGreaterThan(result?.model.items.count ?? 0, 300_000)
    }
}
