// The files of a recording as `record` writes them and every command finds them again:
// TRACE.qtrace, TRACE.PID.qtrace per other process, TRACE.PID.N.qtrace for the N-th image of
// a process that exec'd, snapshots beside them. Real files in a temporary directory.
@testable import QTraceRecording
import Foundation
import XCTest

final class RecordingFilesTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-recording-files-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    private func touch(_ names: [String]) {
        for name in names { FileManager.default.createFile(atPath: "\(dir!)/\(name)", contents: Data([0])) }
    }

    func testSiblingsAreTheOtherProcessesAndImagesOnly() {
        touch(["app.qtrace", "app.12.qtrace", "app.12.2.qtrace", "app.7.qtrace", "app.snapshot-1.qtrace",
               "app.x.qtrace", "app.1.2.3.qtrace", "apple.5.qtrace", "app.html"])
        XCTAssertEqual(RecordingFiles.siblingTraces(of: "\(dir!)/app.qtrace"),
                       ["app.12.2.qtrace", "app.12.qtrace", "app.7.qtrace"].map { "\(dir!)/\($0)" })
        XCTAssertEqual(RecordingFiles.collectTraces(mainPath: "\(dir!)/app.qtrace").first, "\(dir!)/app.qtrace")
    }

    func testTheProgramsLastImageGetsItsExitStatus() {
        let traces = ["app.qtrace", "app.12.qtrace", "app.12.2.qtrace", "app.12.10.qtrace", "app.13.3.qtrace"].map { "\(dir!)/\($0)" }
        XCTAssertEqual(RecordingFiles.lastImage(of: 12, mainPath: traces[0], among: traces), "\(dir!)/app.12.10.qtrace")
        XCTAssertEqual(RecordingFiles.lastImage(of: 99, mainPath: traces[0], among: traces), traces[0])
    }

    func testAMainTraceNeverWrittenStandsForItsChildrenInRecordingOrder() {
        touch(["run.100.qtrace", "run.99.qtrace", "run.100.2.qtrace"])
        XCTAssertEqual(TraceInputs.recordingFiles("\(dir!)/run.qtrace"),
                       ["run.99.qtrace", "run.100.qtrace", "run.100.2.qtrace"].map { "\(dir!)/\($0)" })
        XCTAssertNil(TraceInputs.recordingFiles("\(dir!)/other.qtrace"))
    }

    func testThePidOfAChildsTraceIsInItsName() {
        XCTAssertEqual(TraceInputs.pidInName("/x/app.4242.qtrace"), 4242)
        XCTAssertEqual(TraceInputs.pidInName("/x/app.4242.3.qtrace"), 4242)
        XCTAssertNil(TraceInputs.pidInName("/x/app.qtrace"))
        XCTAssertNil(TraceInputs.pidInName("/x/1234.qtrace"))
    }
}
