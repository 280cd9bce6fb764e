// Armed but off (issue 14 part 3): `qtrace record --off` loads the shim recording nothing;
// `qtrace on` / `qtrace off` switch it while the program runs. A fixture works in three
// phases (queues fx.phase.a, .b, .c) and waits between them for the test to switch.
import Foundation
import XCTest

final class ArmedTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    func waitFor(_ path: String, timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: path) {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    func testEventsAppearOnlyBetweenOnAndOff() throws {
        let dir = Paths.tempDir("armed")
        let trace = dir.appendingPathComponent("armed.qtrace").path
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: Paths.qtrace)
        recorder.arguments = ["record", "--off", "--no-report", "-o", trace, "--", Paths.fixtures, "phases", dir.path]
        recorder.environment = ProcessInfo.processInfo.environment.merging(["QTRACE_SHIM": Paths.shim]) { $1 }
        let out = Pipe()
        recorder.standardOutput = out
        recorder.standardError = FileHandle.nullDevice
        try recorder.run()
        defer { if recorder.isRunning { recorder.terminate() } }

        XCTAssertTrue(waitFor(dir.appendingPathComponent("ready-a").path), "phase a never ended")
        XCTAssertFalse(FileManager.default.fileExists(atPath: trace), "armed and off: no trace file yet")
        XCTAssertEqual(runProgram([Paths.qtrace, "on", trace]).status, 0)
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("go-a").path, contents: nil)
        XCTAssertTrue(waitFor(dir.appendingPathComponent("ready-b").path), "phase b never ended")
        XCTAssertEqual(runProgram([Paths.qtrace, "off", trace]).status, 0)
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("go-b").path, contents: nil)
        recorder.waitUntilExit()
        XCTAssertEqual(recorder.terminationStatus, 0)
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(printed, "phase a done\nphase b done\nphase c done\n", "the program ran as without qtrace")

        let summary = try TraceSummary(path: trace)
        let b = try XCTUnwrap(summary.queue("fx.phase.b"), "the queue created while on is named")
        XCTAssertNil(summary.queue("fx.phase.a"))
        XCTAssertNil(summary.queue("fx.phase.c"))
        XCTAssertEqual(summary.count(.enqueue), 51, "phase b's 50 asyncs and 1 sync, nothing else")
        XCTAssertEqual(summary.enqueues(on: "fx.phase.b").count, 51)
        XCTAssertTrue(summary.events.filter { $0.type == .enqueue }.allSatisfy { $0.b == b })
        XCTAssertFalse(FileManager.default.fileExists(atPath: trace + ".ctl"), "the control file is removed at the end")
    }

    func testSwitchingSomethingNotArmedIsAClearError() {
        let notArmed = runProgram([Paths.qtrace, "on", String(getpid())])
        XCTAssertEqual(notArmed.status, 2)
        XCTAssertTrue(notArmed.stderr.contains("was not started armed"), notArmed.stderr)
        let missing = runProgram([Paths.qtrace, "off", "/nonexistent/run.qtrace"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.stderr.filter { $0 == "\n" }.count, 1, missing.stderr)
    }
}
