// Ctrl-C during `qtrace report`: exit status 130, one line on stderr, no partial report left.
import Foundation
import QTraceFormat
import XCTest
import QTraceAnalysisTestSupport

final class InterruptTests: XCTestCase {
    func testInterruptedReportLeavesNoPartialFile() throws {
        guard let qtrace = CLITests.qtrace else { throw XCTSkip("qtrace binary not built beside the tests") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-interrupt-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Large enough that writing the report takes a while (seconds in a debug build).
        let trace = dir.appendingPathComponent("big.qtrace").path
        let (_, events) = SyntheticWorkload.events(1_000_000)
        try TraceWriter.write(events, to: trace)

        let report = Process()
        report.executableURL = URL(fileURLWithPath: qtrace)
        report.arguments = ["report", trace, "-o", dir.appendingPathComponent("big.html").path]
        let err = Pipe()
        report.standardError = err
        try report.run()
        // The report is written under a temporary name: interrupt once it exists.
        let deadline = Date().addingTimeInterval(120)
        while report.isRunning && Date() < deadline && !files(in: dir).contains(where: { $0.contains("partial") }) {
            usleep(2_000)
        }
        XCTAssertTrue(report.isRunning, "the report was written before it could be interrupted")
        kill(report.processIdentifier, SIGINT)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        report.waitUntilExit()

        XCTAssertEqual(report.terminationReason, .exit)
        XCTAssertEqual(report.terminationStatus, 130)
        XCTAssertEqual(stderr, "qtrace report: interrupted\n")
        XCTAssertEqual(files(in: dir), ["big.qtrace"])
    }

    private func files(in dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }
}
