// The report benchmark's Swift half (scripts/bench-report.py drives it): writes synthetic
// reports of the sizes in QTRACE_BENCH_EVENTS into QTRACE_BENCH_OUT and prints, per size,
// the time to generate and to write, and the file size (QTRACE_BENCH_QUEUES: with that many queues). Skipped unless QTRACE_BENCH_OUT is set.
import Foundation
import XCTest
import QTraceReport
import QTraceViewModel
import QTraceReportTestSupport

final class ReportBenchmarkTests: XCTestCase {
    func testWriteBenchmarkReports() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let dir = environment["QTRACE_BENCH_OUT"], !dir.isEmpty else {
            throw XCTSkip("set QTRACE_BENCH_OUT to run the report benchmark")
        }
        let sizes = (environment["QTRACE_BENCH_EVENTS"] ?? "100000,1000000,10000000")
            .split(separator: ",").compactMap { Int($0) }
        // QTRACE_BENCH_CODE=0: without code identity (sites, tasks), to measure what it costs.
        let codeIdentity = environment["QTRACE_BENCH_CODE"] != "0"
        // QTRACE_BENCH_QUEUES: how many queues (16 by default; 100000 for a report of many queues).
        let queues = Int(environment["QTRACE_BENCH_QUEUES"] ?? "") ?? 16
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for events in sizes {
            let clock = ContinuousClock()
            var input: ReportInput!, actualEvents = 0
            let generate = clock.measure {
                (input, actualEvents) = SyntheticReport.trace(items: events / 3, threads: 12, queues: queues, seed: 42,
                                                              codeIdentity: codeIdentity)
            }
            let path = "\(dir)/bench-\(events)\(queues == 16 ? "" : "-q\(queues)")\(codeIdentity ? "" : "-nocode").html"
            let write = try clock.measure { try ReportWriter.write(input, to: path) }
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            print("BENCH events=\(actualEvents) items=\(input.items.count) queues=\(input.queues.count) bytes=\(size) "
                + "generate_s=\(seconds(generate)) write_s=\(seconds(write)) path=\(path)")
        }
    }

    private func seconds(_ d: Duration) -> String {
        let (s, attos) = d.components
        return String(format: "%.3f", Double(s) + Double(attos) / 1e18)
    }
}
