// The report lists identical findings once (issue 15 part 3): within a process by the
// analysis' FindingGrouping, across the processes of a merged report by executable.
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel

final class FindingGroupTests: XCTestCase {
    func finding(_ key: String, process: Int, lengthNs: Int64, count: Int = 1) -> ReportFinding {
        var f = ReportFinding(id: "wait.long", severity: .warning, message: "blocked \(lengthNs) ns", startNs: 0,
                              endNs: lengthNs, threads: [process], process: process)
        f.groupKey = key
        f.count = count
        return f
    }

    func testIdenticalFindingsOfOneExecutableAcrossProcessesAreOne() {
        let processes = [ReportProcess(pid: 1, executable: "swift-driver"), ReportProcess(pid: 2, executable: "swift-driver"),
                         ReportProcess(pid: 3, executable: "swift-frontend")]
        let findings = [finding("wait.long|Process.swift:869", process: 0, lengthNs: 10, count: 2),
                        finding("wait.long|Process.swift:869", process: 1, lengthNs: 30),
                        finding("wait.long|Process.swift:869", process: 2, lengthNs: 50),
                        finding("wait.long|Other.swift:1", process: 0, lengthNs: 5)]
        let grouped = ReportInput.groupedAcrossProcesses(findings, processes)
        XCTAssertEqual(grouped.count, 3, "swift-driver's two, swift-frontend's, the other site")
        XCTAssertEqual(grouped[0].count, 3)
        XCTAssertEqual(grouped[0].processCount, 2)
        XCTAssertEqual(grouped[0].message, "blocked 30 ns", "the worst (longest) one speaks for the group")
        XCTAssertEqual(grouped[0].threads, [1], "with its own objects")
        XCTAssertEqual(grouped[1].process, 2)
        XCTAssertEqual(grouped[2].count, 1)
    }
}
