import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Through a real trace file: TraceWriter → TraceFile → Analysis.run(file:).
final class FileTests: XCTestCase {
    func testAnalysisOfAWrittenTraceFile() throws {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201, name: "worker")
        s.queue(0x3000, "com.example.db")
        s.item(1, on: 0x3000, at: us(10), runOn: 201, start: us(20), end: us(50))
        s.item(2, on: 0x3000, at: us(11), runOn: 201, start: us(50), end: us(70))
        let path = "/tmp/qtrace-analysis-test-\(getpid()).qtrace"
        defer { unlink(path) }
        let writer = try TraceWriter(path: path, pid: 42, ncpu: 2, mainTid: mainTid)
        writer.header.mainQueue = mainQueueAddress
        writer.header.shimOverheadNs = 20
        writer.header.droppedEvents = 2
        try writer.append(contentsOf: s.sortedEvents)
        try writer.finish()

        let file = try TraceFile(path: path)
        let info = TraceInfo(file: file)
        XCTAssertEqual(info.pid, 42)
        XCTAssertEqual(info.ncpu, 2)
        XCTAssertEqual(info.mainTid, mainTid)
        XCTAssertEqual(info.mainQueue, mainQueueAddress)
        XCTAssertEqual(info.droppedEvents, 2)
        XCTAssertEqual(info.threadNames[201], "worker")
        let r = Analysis.run(file: file)
        XCTAssertEqual(r.model.eventCount, s.events.count)
        let q = r.model.queue(labelled: "com.example.db")
        XCTAssertEqual(r.statistics.queues[q].items, 2)
        XCTAssertEqual(r.statistics.queues[q].wait.maxNs, us(39))
        XCTAssertEqual(r.model.queues[q].waitByCause.behindPreviousNs, us(30))
        XCTAssertEqual(r.model.threads[r.model.thread(tid: 201)].name, "worker")
        XCTAssertEqual(r.findingIds, ["trace.dropped-events"])
    }

    func testAggregatedFindingKeepsTheWorstOccurrence() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.item(1, on: mainQueueAddress, at: 0, runOn: mainTid, start: 0, end: ms(20))
        s.item(2, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(20), end: ms(70))
        s.item(3, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(70), end: ms(90))
        let f = s.analysis().findings("main.long-item")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(f[0].occurrences, 3)
        XCTAssertTrue(f[0].message.contains("ran 50.0 ms"), f[0].message)
        XCTAssertEqual(f[0].start, 0)
        XCTAssertEqual(f[0].end, ms(90))
    }
}
