// The report's conversions to its signed 64-bit columns (ReportInput+Analysis.swift) saturate
// (docs/trace-format.md, "Validation"): a source's data or the header's dropped count beyond
// Int64 still give a report. And a trace the reader found inconsistent
// says so in the report's header data.
import QTraceAnalysis
import QTraceFormat
import QTraceReport
import QTraceViewModel
import XCTest

final class ReportOverflowTests: XCTestCase {
    /// Times stay within the reader's bound (2^50 ns, so every Int64 conversion of a time
    /// holds); payload values and header counts do not.
    func testValuesBeyondInt64Saturate() throws {
        let end = TraceLimits.maxTraceNs
        let events = [
            Event(type: .threadStart, time: 0, tid: 1),
            Event(type: .sourceCreate, time: 0, tid: 1, arg: SourceType.dataOr.rawValue, a: 0x5000, d: 0),
            Event(type: .sourceSetHandler, time: 0, tid: 1, a: 0x5000),
            Event(type: .sourceHandlerBegin, time: 10, tid: 1, a: 0x5000, b: .max),
            Event(type: .sourceHandlerEnd, time: 20, tid: 1, a: 0x5000),
            Event(type: .mark, time: end, tid: 1, string: "late"),
        ]
        let result = Analysis.run(info: TraceInfo(pid: 1, mainTid: 1, droppedEvents: .max), events: events)
        let input = ReportInput(analysis: result, header: TraceHeader(pid: 1, droppedEvents: .max), qtraceVersion: "test")
        XCTAssertEqual(input.meta.droppedEvents, .max)
        XCTAssertEqual(input.meta.durationNs, Int64(end))
        XCTAssertEqual(input.sources.first?.handlerRuns.first?.data, .max)
        XCTAssertFalse(try ReportWriter.html(input).isEmpty)
    }

    func testAnInconsistentTraceSaysSoInTheReportHeader() throws {
        var info = TraceInfo(pid: 1, mainTid: 1)
        info.invalidEvents = 3
        let result = Analysis.run(info: info, events: [Event(type: .threadStart, time: 0, tid: 1)])
        let input = ReportInput(analysis: result, header: TraceHeader(pid: 1), qtraceVersion: "test")
        XCTAssertEqual(input.meta.invalidEvents, 3)
        XCTAssertTrue(input.findings.contains { $0.message.hasPrefix("inconsistent trace: 3 events dropped") })
        let plain = ReportInput(analysis: Analysis.run(info: TraceInfo(pid: 1, mainTid: 1), events: []),
                                header: TraceHeader(pid: 1), qtraceVersion: "test")
        XCTAssertEqual(plain.meta.invalidEvents, 0)
    }
}
