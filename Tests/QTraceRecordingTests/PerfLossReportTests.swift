// `record --sched` warns when perf dropped events: its report is found in perf script's stderr.
@testable import QTraceRecording
import XCTest

final class PerfLossReportTests: XCTestCase {
    func testLossReportIsFoundInPerfScriptWarnings() {
        let stderr = "Warning:\nProcessed 182736 events and lost 3 chunks!\n\nCheck IO/CPU overload!\n\n"
        XCTAssertEqual(PerfSchedSession.lossReport(in: stderr), "Processed 182736 events and lost 3 chunks!")
    }

    func testNoLossReportWithoutLoss() {
        XCTAssertNil(PerfSchedSession.lossReport(in: ""))
        XCTAssertNil(PerfSchedSession.lossReport(in: "Warning:\nsome unrelated message\n"))
    }
}
