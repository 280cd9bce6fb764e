import Foundation
import XCTest
@testable import QTraceExport
import QTraceViewModel
import QTraceReportTestSupport

final class ChromeExportTests: XCTestCase {
    func testChromeJSONIsValidTraceEventJSON() throws {
        let input = SyntheticReport.make(items: 2000, threads: 4, queues: 9, seed: 9, hostile: true)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-chrome-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("trace.json").path
        try TraceExport.chromeJSON(input, to: path)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let events = try XCTUnwrap(root["traceEvents"] as? [[String: Any]])
        func count(_ ph: String) -> Int { events.filter { $0["ph"] as? String == ph }.count }
        let started = (0..<input.items.count).filter { input.items.startNs[$0] >= 0 && input.items.thread[$0] >= 0 }.count
        XCTAssertEqual(count("X"), started + input.blocked.count + input.annotations.intervals.count)
        XCTAssertEqual(count("s"), count("f"))
        XCTAssertGreaterThan(count("s"), 0)
        XCTAssertEqual(count("C"), input.counters.reduce(0) { $0 + $1.timesNs.count })
        let names = events.filter { $0["ph"] as? String == "M" && $0["name"] as? String == "thread_name" }
        XCTAssertEqual(names.count, input.threads.count)
        XCTAssertNotNil(events.first { $0["name"] as? String == "process_name" })
        for event in events {
            XCTAssertNotNil(event["ph"] as? String)
            XCTAssertNotNil(event["pid"])
            if event["ph"] as? String != "M" { XCTAssertNotNil(event["ts"] as? Double ?? (event["ts"] as? Int).map(Double.init)) }
        }
        // Every flow start has its finish with the same id, and it binds to the slice's start.
        let flowIDs = Set(events.filter { $0["ph"] as? String == "s" }.compactMap { $0["id"] as? Int })
        XCTAssertEqual(flowIDs, Set(events.filter { $0["ph"] as? String == "f" }.compactMap { $0["id"] as? Int }))
        // Hostile labels survive as data.
        let labels = Set(events.compactMap { $0["name"] as? String })
        XCTAssertTrue(labels.contains(SyntheticReport.hostileLabels[0]))
    }

    func testTimestampsAreExactMicroseconds() throws {
        var input = ReportInput(meta: ReportMeta(title: "t", pid: 7, durationNs: 5_000))
        input.threads = [ReportThread(index: 0, tid: 70, name: "main", kind: .main, startNs: 0, endNs: 5_000)]
        input.queues = [ReportQueue(index: 0, label: "main", kind: .main)]
        input.items.append(ReportItem(queue: 0, kind: .async, submitterThread: 0, thread: 0, enqueueNs: 1, startNs: 1_234, endNs: 3_005))
        let sink = StringSink()
        try ChromeTraceExporter(input: input).write(to: sink)
        XCTAssertTrue(sink.text.contains("\"ts\":1.234,\"dur\":1.771"))
        XCTAssertTrue(sink.text.contains("\"ph\":\"s\",\"id\":0,\"pid\":7,\"tid\":70,\"ts\":0.001"))
    }
}
