// A real recording of 50 processes: `qtrace record` of a shell loop that runs 50 short
// Dispatch programs one after another (the shell itself writes no trace). Their merged report
// has a Processes table row per process with the analysis' figures, and a total thread count
// that goes down as each process ends. The browser tests open it
// (Tests/BrowserTests/test_many_processes.py).
import Foundation
@testable import QTraceRecording
import QTraceReport
import QTraceViewModel
import XCTest

final class ManyProcessesTests: XCTestCase {
    static let processCount = 50

    override class func tearDown() {
        TestPaths.cleanUp()
        super.tearDown()
    }

    /// One child in five runs all-apis, one code-sites, the others qos: processes of different
    /// sizes, so that "busiest first" has something to sort.
    private func recordChildren(in dir: URL) throws -> [String] {
        let trace = dir.appendingPathComponent("many.qtrace").path
        let loop = "for i in $(seq \(Self.processCount)); do case $((i % 5)) in 0) \"$0\" all-apis;; 1) \"$0\" code-sites;;"
            + " *) \"$0\" qos;; esac > /dev/null || exit 1; done"
        let run = runCommand([TestPaths.qtrace, "record", "-o", trace, "--", "sh", "-c", loop, TestPaths.fixtures],
                             environment: ["QTRACE_SHIM": try TestPaths.embeddedShim.get()])
        XCTAssertEqual(run.status, 0, run.output)
        return RecordingFiles.collectTraces(mainPath: trace)
    }

    func testFiftyProcessesMakeOneReportWithAProcessesTable() throws {
        let traces = try recordChildren(in: TestPaths.tempDir("many"))
        XCTAssertEqual(traces.count, Self.processCount, "one trace per child")
        let merged = try ReportGeneration.input(tracePaths: traces, command: "report")
        XCTAssertEqual(merged.processes.count, Self.processCount)
        XCTAssertTrue(merged.meta.title.hasPrefix("\(Self.processCount) processes: qtrace-fixtures ×\(Self.processCount)"),
                      merged.meta.title)

        // The Processes table: a row per process, the analysis' own figures.
        let table = try XCTUnwrap(merged.stats.first)
        XCTAssertEqual(table.id, "processes")
        XCTAssertEqual(table.rows.map(\.objectIndex), Array(0..<Self.processCount))
        let column = { (key: String) throws -> Int in try XCTUnwrap(table.columns.firstIndex { $0.key == key }, key) }
        let (pid, arguments, busiest) = (try column("pid"), try column("arguments"), try column("busiest_queue"))
        for (p, row) in zip(merged.processes, table.rows) {
            XCTAssertEqual(row.values[pid], .number(Double(p.pid)))
            XCTAssertTrue(["qos", "code-sites", "all-apis"].contains(p.arguments), p.arguments)
            XCTAssertEqual(row.values[arguments], .text(p.arguments))
            XCTAssertGreaterThan(p.items, 0, p.title)
            XCTAssertGreaterThan(p.threads, 0, p.title)
            XCTAssertGreaterThan(p.busyNs, 0, p.title)
            let queue = try XCTUnwrap(merged.queues.indices.contains(p.busiestQueue) ? merged.queues[p.busiestQueue] : nil, p.title)
            XCTAssertEqual(merged.processes[queue.process].pid, p.pid, "the busiest queue is the process's own")
            XCTAssertEqual(row.values[busiest], .text(queue.label))
        }

        // The children ran one after another: never more threads alive than the largest child
        // had, and none once the last one ended.
        let alive = try XCTUnwrap(merged.counters.first { $0.kind == .threadsAlive })
        let largest = try XCTUnwrap(merged.processes.map(\.peakThreadsAlive).max())
        XCTAssertEqual(merged.meta.peakThreadsAlive, largest, "the total of processes that did not overlap")
        XCTAssertEqual(alive.values.max(), Double(largest))
        XCTAssertEqual(alive.values.last, 0)
        XCTAssertEqual(merged.counters.filter { $0.kind == .processThreadsRunning }.map(\.process), Array(0..<Self.processCount))

        if let fixtures = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] {
            try ReportWriter.write(merged, to: "\(fixtures)/real-many-processes.html")
        }
    }
}
