// Faults on the output side (issue 18, part 4; docs/outputs.md): recording onto a nearly full
// file system, outputs whose path is a planted symlink, write errors (ENOSPC on a real 2 MiB
// tmpfs, /dev/full on stdout), and `-o -` meaning stdout for every command with -o.
import Foundation
import QTraceFormat
import XCTest

final class OutputFaultTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    /// A small real trace for the output tests (recorded once per test: they are independent).
    private func smallTrace(in dir: URL) throws -> String {
        let (run, path) = record([Paths.fixtures, "stress", "1", "2000"], in: dir, name: "small")
        XCTAssertEqual(run.status, 0, run.stderr)
        return path
    }

    // MARK: The recorder on a full disk

    /// 2 threads x 50k items on a 2 MiB tmpfs (a trace of ~6 MiB would be needed): the program
    /// runs as it would untraced, the trace is valid and says why events are missing, and
    /// recorded + dropped = submitted for every kind of item record.
    func testRecordingOnAFullDiskKeepsAValidTraceAndCountsTheRest() throws {
        let disk = try SmallDisk(name: "fulldisk")
        defer { disk.unmount() }
        let submitted = 100_000
        let argv = [Paths.fixtures, "stress", "2", "50000"]
        let plain = runProgram(argv)
        let path = disk.path("t.qtrace")
        let traced = runProgram([Paths.qtrace, "record", "-o", path, "--"] + argv, environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertEqual(traced.status, plain.status, traced.stderr)
        XCTAssertEqual(traced.stdout, plain.stdout, "the program's output is unchanged")
        XCTAssertTrue(plain.stdout.contains("stress ran=\(submitted)"))

        let trace = try TraceSummary(path: path)
        XCTAssertTrue(trace.header.flags.contains(.droppedDiskFull), "flags \(trace.header.flags)")
        XCTAssertEqual(trace.header.dropReason, "disk full")
        XCTAssertGreaterThan(trace.header.droppedEvents, 0)
        XCTAssertGreaterThan(trace.enqueues(on: "fx.stress").count, 1000, "it kept recording until the disk was full")
        XCTAssertEqual(UInt64(trace.enqueues(on: "fx.stress").count) + trace.header.droppedEnqueue, UInt64(submitted) + 1,
                       "+1: the final sync")
        XCTAssertEqual(UInt64(trace.count(.start)) + trace.header.droppedStart, UInt64(submitted) + 1)
        XCTAssertEqual(UInt64(trace.count(.end)) + trace.header.droppedEnd, UInt64(submitted) + 1)
        XCTAssertTrue(traced.stderr.contains("dropped: disk full"), traced.stderr)

        // The report did not fit either: no half file is left, and the trace is not harmed.
        XCTAssertTrue(traced.stderr.contains("could not write the report"), traced.stderr)
        XCTAssertEqual(disk.entries(), ["t.qtrace"], "no report and no temporary is left on the full disk")

        let stats = runProgram([Paths.qtrace, "stats", path], environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        XCTAssertTrue(stats.stdout.contains("events DROPPED: disk full"), stats.stdout)
        XCTAssertTrue(stats.stdout.contains("(disk full)"), "the finding names the cause")
        let json = runProgram([Paths.qtrace, "stats", "--json", path], environment: ["QTRACE_SYMBOLIZE": "0"])
        let summary = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let traceFacts = summary?["trace"] as? [String: Any]
        XCTAssertEqual(traceFacts?["dropReason"] as? String, "disk full", json.stdout.prefix(600) + "")
        XCTAssertEqual((traceFacts?["droppedEvents"] as? NSNumber)?.uint64Value, trace.header.droppedEvents)
        writeBrowserFixture(trace: path, name: "real-full-disk")

        // No room even for the header: no file at all (not an unreadable one), and a clear line.
        try FileManager.default.removeItem(atPath: path)
        try disk.fill()
        let none = runProgram([Paths.qtrace, "record", "-o", path, "--"] + argv, environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertEqual(none.status, plain.status)
        XCTAssertEqual(none.stdout, plain.stdout)
        XCTAssertTrue(none.stderr.contains("no trace written: the file system of"), none.stderr)
        XCTAssertEqual(disk.entries(), [".filler"])
    }

    /// The other cause the header records: the size cap (--max-size), not a full disk.
    func testSizeCapIsNamedAsTheCause() throws {
        let dir = Paths.tempDir("cap")
        let (run, path) = record([Paths.fixtures, "stress", "1", "50000"], in: dir, name: "capped", extraArgs: ["--max-size", "1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let header = try TraceFile(path: path).header
        XCTAssertTrue(header.flags.contains(.droppedSizeCap))
        XCTAssertFalse(header.flags.contains(.droppedDiskFull))
        XCTAssertEqual(header.dropReason, "trace size limit reached")
        XCTAssertTrue(run.stderr.contains("dropped: trace size limit reached"), run.stderr)
    }

    // MARK: Symlinks at the destination

    /// Every writer replaces a symlink planted at its output path instead of writing through it.
    func testSymlinkAtTheOutputPathIsReplacedNeverFollowed() throws {
        let dir = Paths.tempDir("symlink")
        let trace = try smallTrace(in: dir)
        let commands: [(String, [String])] = [
            ("report.html", ["report", trace, "-o"]),
            ("export.json", ["export", trace, "-o"]),
            ("stats.json", ["stats", "--json", trace, "-o"]),
            ("stats.txt", ["stats", trace, "-o"]),
        ]
        for (name, args) in commands {
            let victim = dir.appendingPathComponent("victim-\(name)").path
            try "precious\n".write(toFile: victim, atomically: false, encoding: .utf8)
            let link = dir.appendingPathComponent(name).path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
            let run = runProgram([Paths.qtrace] + args + [link], environment: ["QTRACE_SYMBOLIZE": "0"])
            XCTAssertEqual(run.status, 0, "\(args): \(run.stderr)")
            XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious\n", "\(args) wrote through the link")
            XCTAssertFalse(isSymlink(link), "\(args): the link is replaced by the output")
            XCTAssertGreaterThan(try String(contentsOfFile: link, encoding: .utf8).count, 100)
        }
        XCTAssertTrue(partials(in: dir).isEmpty, "\(partials(in: dir))")
    }

    /// `qtrace record -o t.qtrace` with links planted at the trace and the report: both are
    /// replaced, their targets untouched (the shim creates the trace with O_EXCL | O_NOFOLLOW).
    func testRecordReplacesSymlinksAtTheTraceAndReportPaths() throws {
        let dir = Paths.tempDir("record-symlink")
        let victim = dir.appendingPathComponent("victim").path
        try "precious\n".write(toFile: victim, atomically: false, encoding: .utf8)
        let tracePath = dir.appendingPathComponent("t.qtrace").path
        let reportPath = dir.appendingPathComponent("t.html").path
        for link in [tracePath, reportPath] {
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        }
        let run = runProgram([Paths.qtrace, "record", "-o", tracePath, "--", Paths.fixtures, "stress", "1", "1000"],
                             environment: ["QTRACE_SHIM": Paths.shim, "QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious\n")
        XCTAssertFalse(isSymlink(tracePath))
        XCTAssertFalse(isSymlink(reportPath))
        XCTAssertEqual(try TraceSummary(path: tracePath).enqueues(on: "fx.stress").count, 1001)

        // Without qtrace record (manual LD_PRELOAD), the shim itself must not follow a link.
        let manual = dir.appendingPathComponent("manual.qtrace").path
        try FileManager.default.createSymbolicLink(atPath: manual, withDestinationPath: victim)
        let direct = runProgram([Paths.fixtures, "stress", "1", "100"],
                                environment: ["LD_PRELOAD": Paths.shim, "QTRACE_OUTPUT": manual])
        XCTAssertEqual(direct.status, 0, direct.stderr)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious\n")
        XCTAssertFalse(isSymlink(manual))
        XCTAssertNoThrow(try TraceFile(path: manual))
    }

    // MARK: ENOSPC and /dev/full

    /// A report, an export and a summary that do not fit on the disk: exit 2 with one line,
    /// the previous file intact, no partial file.
    func testNoSpaceLeavesTheOldFileAndNoPartialOne() throws {
        let dir = Paths.tempDir("enospc")
        let trace = try smallTrace(in: dir)
        let disk = try SmallDisk(name: "enospc-disk")
        defer { disk.unmount() }
        for (name, args) in [("r.html", ["report", trace, "-o"]), ("e.json", ["export", trace, "-o"]),
                             ("s.json", ["stats", "--json", trace, "-o"])] {
            let target = disk.path(name)
            try "old\n".write(toFile: target, atomically: false, encoding: .utf8)
            try disk.fill()
            let run = runProgram([Paths.qtrace] + args + [target], environment: ["QTRACE_SYMBOLIZE": "0"])
            disk.unfill()
            XCTAssertEqual(run.status, 2, "\(args): \(run.stderr)")
            XCTAssertEqual(nonEmptyLines(run.stderr).count, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains("No space left on device"), run.stderr)
            XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "old\n", "\(args): the old file is kept")
        }
        XCTAssertEqual(disk.entries(), ["e.json", "r.html", "s.json"], "no partial file")
    }

    /// stdout write errors: every command that prints exits non-zero with one line on stderr.
    func testWriteErrorsOnStdoutFailTheCommand() throws {
        let dir = Paths.tempDir("devfull")
        let trace = try smallTrace(in: dir)
        let commands: [[String]] = [
            ["stats", trace], ["stats", "--json", trace], ["stats", trace, "-o", "-"], ["dump", trace],
            ["diff", trace, trace], ["check", trace, "--max-wait-p99", "fx.stress=10s"],
            ["report", trace, "-o", "-"], ["export", trace, "-o", "-"], ["report", trace, "-o", "/dev/full"],
        ]
        for args in commands {
            let run = runToDevFull([Paths.qtrace] + args)
            XCTAssertEqual(run.status, 2, "\(args): \(run.stderr)")
            XCTAssertEqual(nonEmptyLines(run.stderr).filter { !$0.contains("warning") }.count, 1, "\(args): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("No space left on device"), "\(args): \(run.stderr)")
        }
    }

    // MARK: -o -

    func testDashMeansStdoutForEveryCommandWithAnOutputOption() throws {
        let dir = Paths.tempDir("dash")
        let trace = try smallTrace(in: dir)
        let report = runProgram([Paths.qtrace, "report", trace, "-o", "-"], environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.hasPrefix("<!DOCTYPE html>"), String(report.stdout.prefix(80)))
        XCTAssertTrue(report.stdout.contains("id=\"qtrace-data\""))
        XCTAssertFalse(report.stderr.contains("qtrace: report:"), "nothing announces a file")

        let export = runProgram([Paths.qtrace, "export", trace, "-o", "-"], environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)))

        let stats = runProgram([Paths.qtrace, "stats", "--json", trace, "-o", "-"], environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)))

        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("-").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "-"), "no file named '-' in the working directory")

        let record = runProgram([Paths.qtrace, "record", "-o", "-", "--", Paths.fixtures, "stress", "1", "10"],
                                environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertNotEqual(record.status, 0)
        XCTAssertTrue(record.stderr.contains("-o -: the trace cannot go to stdout"), record.stderr)
    }

    func testHelpDescribesTheOutputRules() {
        // The help is wrapped to the terminal: compare with single spaces.
        func help(_ args: [String]) -> String {
            runProgram([Paths.qtrace] + args + ["--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        for command in ["report", "export"] {
            let text = help([command])
            XCTAssertTrue(text.contains("- for stdout"), "\(command) --help: \(text)")
            XCTAssertTrue(text.contains("a symlink there is replaced, never followed"), "\(command) --help: \(text)")
        }
        XCTAssertTrue(help([]).contains("-o - is stdout"))
        XCTAssertTrue(help(["dump"]).contains("exit status 2"))
    }

    // MARK: Helpers

    /// The report the browser tests open (Tests/BrowserTests/test_outputs.py), when asked.
    private func writeBrowserFixture(trace: String, name: String) {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"], !dir.isEmpty else { return }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let run = runProgram([Paths.qtrace, "report", trace, "-o", dir + "/\(name).html"],
                             environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    private func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    private func partials(in dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".partial-") }
    }

    private func nonEmptyLines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    /// Runs `argv` with stdout on /dev/full (every write fails with ENOSPC).
    private func runToDevFull(_ argv: [String]) -> RunResult {
        let err = Paths.tempRoot.appendingPathComponent("devfull-\(UUID().uuidString).err").path
        defer { unlink(err) }
        let shell = "exec \"$@\" > /dev/full 2> '\(err)'"
        let run = runProgram(["/bin/sh", "-c", shell, "sh"] + argv, environment: ["QTRACE_SYMBOLIZE": "0"])
        return RunResult(status: run.status, stdout: "", stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

/// A real 2 MiB file system (tmpfs, mounted here; we run as root), unmounted by the test.
private struct SmallDisk {
    let mountPoint: URL

    init(name: String) throws {
        mountPoint = Paths.tempDir(name)
        let mount = runProgram(["/bin/mount", "-t", "tmpfs", "-o", "size=2m", "qtrace-test", mountPoint.path])
        try XCTSkipIf(mount.status != 0, "cannot mount a tmpfs (needs root): \(mount.stderr)")
    }

    func path(_ name: String) -> String { mountPoint.appendingPathComponent(name).path }

    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: mountPoint.path)) ?? []).sorted()
    }

    /// Takes every free block with a filler file.
    func fill() throws {
        let fd = open(path(".filler"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw NSError(domain: "filler", code: Int(errno)) }
        defer { close(fd) }
        let block = [UInt8](repeating: 0xAA, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    func unfill() { unlink(path(".filler")) }

    func unmount() {
        let result = runProgram(["/bin/umount", mountPoint.path])
        XCTAssertEqual(result.status, 0, "umount: \(result.stderr)")
    }
}
