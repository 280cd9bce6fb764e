// `qtrace stats`, `check` and `diff` as a user runs them: exit codes, one-line errors on
// stderr, escaped labels, the JSON summary. Runs the qtrace binary built beside this bundle.
import Foundation
import QTraceFormat
import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class CLITests: XCTestCase {
    struct Run { var status: Int32; var stdout: String; var stderr: String }

    static let qtrace: String? = {
        var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("qtrace").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    var dir: URL!

    override func setUpWithError() throws {
        guard Self.qtrace != nil else { throw XCTSkip("qtrace binary not built beside the tests") }
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-cli-tests-\(getpid())-\(name.hashValue)")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    func run(_ args: [String], environment extra: [String: String] = [:]) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.qtrace!)
        p.arguments = args
        var env = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        env["COLUMNS"] = "100"
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// QTRACE_PHASES=1 (scripts/bench-phases.py) adds phase times on stderr and changes nothing else.
    func testPhaseTimesGoToStderrOnly() throws {
        let path = try writeTrace()
        let plain = try run(["stats", "--json", path], environment: ["QTRACE_PHASES": "0"])
        let timed = try run(["stats", "--json", path], environment: ["QTRACE_PHASES": "1"])
        XCTAssertEqual(timed.status, 0, timed.stderr)
        XCTAssertEqual(timed.stdout, plain.stdout)
        XCTAssertFalse(plain.stderr.contains("qtrace phase:"))
        let phases = timed.stderr.split(separator: "\n").filter { $0.hasPrefix("qtrace phase: ") }
        for name in ["open: header, chunk table, validation", "decode and model (merge, consume)", "statistics (total)", "findings",
                     "summary: JSON encoding and writing"] {
            XCTAssertTrue(phases.contains { $0.hasPrefix("qtrace phase: \(name)\t") }, name)
        }
        // NAME, wall, CPU, peak RSS so far and RSS now (KiB). (The kernel's counters behind the
        // two are read at different instants and approximately: no order between them is tested.)
        for line in phases {
            let fields = line.split(separator: "\t")
            XCTAssertEqual(fields.count, 5, String(line))
            XCTAssertGreaterThan(fields.count == 5 ? Int(fields[4]) ?? 0 : 0, 0, String(line))
        }
    }

    /// A trace with a serial queue (waits 0...2.4 ms), an evil label and a 130 ms main item.
    func writeTrace(_ name: String = "app.qtrace", runMs: UInt64 = 1, pid: Int32 = 42) throws -> String {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201, name: "worker")
        s.queue(0x3000, "com.example.db")
        s.queue(0x3100, "evil\u{1b}]0;pwned\u{7}queue")
        for k: UInt64 in 0..<5 {
            s.item(k + 1, on: 0x3000, at: ms(10 * k), runOn: 201, start: ms(10 * k) + us(600 * k), end: ms(10 * k) + us(600 * k) + ms(runMs))
        }
        s.item(10, on: 0x3100, at: ms(60), runOn: 201, start: ms(61), end: ms(62))
        s.item(11, on: mainQueueAddress, at: ms(60), runOn: mainTid, start: ms(70), end: ms(200))
        let path = dir.appendingPathComponent(name).path
        let writer = try TraceWriter(path: path, pid: pid, ncpu: 2, mainTid: mainTid)
        writer.header.mainQueue = mainQueueAddress
        writer.header.executablePath = "/usr/bin/app"
        try writer.append(contentsOf: s.sortedEvents)
        try writer.finish()
        return path
    }

    func testStatsPrintsEscapedTables() throws {
        let r = try run(["stats", try writeTrace()])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("com.example.db"))
        XCTAssertTrue(r.stdout.contains("evil\\u{1b}]0;pwned\\u{7}queue"), r.stdout)
        XCTAssertFalse(r.stdout.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 })
        XCTAssertTrue(r.stdout.contains("ERROR main.hang"))
        XCTAssertEqual(r.stderr, "")
    }

    func testStatsJSONToFile() throws {
        let out = dir.appendingPathComponent("summary.json").path
        let r = try run(["stats", try writeTrace(), "--json", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "")
        let summary = try AnalysisSummary.decode(try Data(contentsOf: URL(fileURLWithPath: out)))
        XCTAssertEqual(summary.schema, "qtrace-summary/1.4")
        XCTAssertEqual(summary.statistics.queues.first { $0.label == "com.example.db" }?.items, 5)
        XCTAssertEqual(summary.findingCounts.error, 1)
    }

    func testCheckBoundsAndFindingsGate() throws {
        let trace = try writeTrace()
        // db waits: 0, 0.6, 1.2, 1.8, 2.4 ms; runs 1 ms.
        let broken = try run(["check", trace, "--max-wait-p99", "com.example.db=2ms", "--max-run-p99", "com.example.db=5ms",
                              "--no-findings", "error"])
        XCTAssertEqual(broken.status, 1)
        let lines = broken.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, broken.stdout)
        XCTAssertEqual(lines[0], "queue 'com.example.db' (0x3000): wait p99 2.40 ms > 2.00 ms")
        XCTAssertTrue(lines[1].hasPrefix("finding error main.hang: "))
        let ok = try run(["check", trace, "--max-wait-p99", "com.example.*=3ms"])
        XCTAssertEqual(ok.status, 0)
        XCTAssertEqual(ok.stdout, "ok: 1 bound holds\n")
    }

    func testBadInputIsOneLineAndNonZero() throws {
        let trace = try writeTrace()
        let corrupt = dir.appendingPathComponent("corrupt.qtrace").path
        try Data("not a trace at all".utf8).write(to: URL(fileURLWithPath: corrupt))
        let cases: [[String]] = [
            ["stats", dir.appendingPathComponent("missing.qtrace").path],
            ["stats", corrupt],
            ["check", trace, "--max-wait-p99", "com.example.db"],
            ["check", trace, "--max-wait-p99", "com.example.db=soon"],
            ["check", trace, "--no-findings", "fatal"],
            ["check", trace],
            ["diff", trace, corrupt],
            ["dump", corrupt],
            ["dump", dir.appendingPathComponent("missing.qtrace").path],
        ]
        for args in cases {
            let r = try run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.hasPrefix("qtrace \(args[0]): error: "), r.stderr)
        }
        let unknown = try run(["stats", trace, "--bogus"])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.hasPrefix("qtrace: error: Unknown option '--bogus'"), unknown.stderr)
        XCTAssertEqual(unknown.stderr.filter { $0 == "\n" }.count, 1, "one line: \(unknown.stderr)")
    }

    func testDiffOfASummaryAndATrace() throws {
        let summary = dir.appendingPathComponent("base.json").path
        XCTAssertEqual(try run(["stats", try writeTrace("a.qtrace"), "--json", "-o", summary]).status, 0)
        let r = try run(["diff", summary, try writeTrace("b.qtrace", runMs: 2)])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("com.example.db"), r.stdout)
        XCTAssertTrue(r.stdout.contains("+100.0%"), r.stdout)
        XCTAssertFalse(r.stdout.unicodeScalars.contains { $0.value == 0x1b })
    }

    /// A recording's folder: the program and two children, each with the same 130 ms main
    /// item (one grouped finding), as `qtrace record` names them.
    func writeRecording() throws -> URL {
        let recording = dir.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: recording, withIntermediateDirectories: true)
        for (name, pid) in [("run.qtrace", 42), ("run.43.qtrace", 43), ("run.1044.qtrace", 1044)] as [(String, Int32)] {
            _ = try writeTrace("run/" + name, pid: pid)
        }
        return recording
    }

    func testStatsOfARecordingDirectoryHasAnOverviewGroupedFindingsAndEachProcess() throws {
        let recording = try writeRecording()
        let r = try run(["stats", recording.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("recording  3 processes over "), r.stdout)
        XCTAssertTrue(r.stdout.contains("PROCESSES"), r.stdout)
        XCTAssertTrue(r.stdout.contains("ERROR main.hang ×3 (3 processes of app): worst: "), r.stdout)
        // The tables of one process (the most items; the first on ties), the others on request.
        XCTAssertEqual(r.stdout.components(separatedBy: "\n== process ").count - 1, 1, r.stdout)
        XCTAssertTrue(r.stdout.contains("... the tables of 2 other processes (--pid PID shows one, --all every one)"), r.stdout)
        let all = try run(["stats", "--all", recording.path])
        for pid in [42, 43, 1044] { XCTAssertTrue(all.stdout.contains("== process \(pid)"), "\(pid): \(all.stdout)") }
        XCTAssertTrue(all.stdout.contains("(3 of 3)"))
        let json = try run(["stats", "--json", recording.path])
        XCTAssertEqual(json.status, 0, json.stderr)
        let summary = try JSONDecoder().decode(RecordingSummary.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(summary.schema, "qtrace-recording/1")
        XCTAssertEqual(summary.processes.map(\.trace.pid), [42, 43, 1044])
        XCTAssertEqual(summary.overview.findingGroups.map(\.count), [3])
        XCTAssertEqual(summary.overview.total.items, 3 * summary.processes[0].statistics.items)
        // Several files name the same recording.
        let files = try run(["stats", recording.appendingPathComponent("run.qtrace").path,
                             recording.appendingPathComponent("run.43.qtrace").path])
        XCTAssertTrue(files.stdout.hasPrefix("recording  2 processes"), files.stdout)
        // --pid picks a child out of the folder.
        let one = try run(["stats", "--pid", "43", recording.path])
        XCTAssertEqual(one.status, 0, one.stderr)
        XCTAssertTrue(one.stdout.contains("(pid 43)"), one.stdout)
    }

    func testAMainTraceNeverWrittenStandsForItsChildren() throws {
        let recording = try writeRecording()
        try FileManager.default.removeItem(at: recording.appendingPathComponent("run.qtrace"))
        let r = try run(["stats", recording.appendingPathComponent("run.qtrace").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("recording  2 processes"), r.stdout)
    }

    func testCheckAndDiffTakeRecordings() throws {
        let recording = try writeRecording()
        let check = try run(["check", recording.path, "--no-findings", "error"])
        XCTAssertEqual(check.status, 1)
        let lines = check.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, check.stdout)
        XCTAssertTrue(lines[1].hasPrefix("pid 43 (app): finding error main.hang: "), check.stdout)
        let diff = try run(["diff", recording.path, recording.path])
        XCTAssertEqual(diff.status, 0, diff.stderr)
        XCTAssertTrue(diff.stdout.hasPrefix("3 processes in A, 3 in B: 3 paired by executable and arguments"), diff.stdout)
        XCTAssertEqual(diff.stdout.components(separatedBy: "\n== app ").count, 4, diff.stdout)
    }
}
