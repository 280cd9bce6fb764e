// A process's trace follows its life as the program lives it (issue 15, part 5): an exec ends
// the image's trace where the image goes, a failed exec keeps it going, a later Dispatch image
// of the same process gets a file of its own, and a top-level program that never calls
// Dispatch (a shell script) still gets the report of the children that did.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class ProcessLifecycleRecordTests: XCTestCase {
    override class func tearDown() {
        Paths.removeTempRoot()
        super.tearDown()
    }

    /// The per-process files a recording wrote beside `dir/name.qtrace` (TRACE.PID[.N].qtrace).
    private func siblings(of name: String, in dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasPrefix(name + ".") && $0.hasSuffix(".qtrace") && $0 != name + ".qtrace" }
            .sorted().map { dir.appendingPathComponent($0).path }
    }

    /// `sh -c 'FIXTURE exec-into /bin/true; sleep 2'`: the fixture's trace ends at its exec,
    /// finalized by the shim and flagged, and its threads end there, not when sh exits 2 s later.
    func testExecEndsTheTraceWhereTheImageIsReplaced() throws {
        let dir = Paths.tempDir("exec")
        let (result, _) = record(["/bin/sh", "-c", "'\(Paths.fixtures)' exec-into /bin/true; sleep 2"], in: dir)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "exec /bin/true\n")
        let traces = try siblings(of: "trace", in: dir)
        XCTAssertEqual(traces.count, 1, "only the fixture used Dispatch: \(traces)")
        let file = try TraceFile(path: try XCTUnwrap(traces.first))
        XCTAssertTrue(file.header.flags.contains(.finalizedByProcess), "the shim finalized the trace at exec")
        XCTAssertTrue(file.header.flags.contains(.replacedByExec))
        // The image lived a few ms; the shell went on for 2 s after it. Anything near 2 s would
        // mean the trace ran on to the end of the recording.
        XCTAssertLessThan(file.endTime, 1_000_000_000, "the trace must end at the exec")
        let model = Analysis.buildModel(file: file)
        // 3 items; the global one may still be running when the image goes (nothing waits for it).
        XCTAssertEqual(model.items.count, 3)
        XCTAssertGreaterThanOrEqual(model.items.filter { $0.ended != nil }.count, 2)
        for item in model.items { XCTAssertLessThanOrEqual(item.ended ?? 0, model.endTime) }
        for thread in model.threads { XCTAssertLessThanOrEqual(thread.lastSeen, model.endTime) }
        XCTAssertLessThanOrEqual(model.endTime, file.endTime)
        let dump = runProgram([Paths.qtrace, "dump", traces[0]])
        XCTAssertTrue(dump.stdout.contains("the process replaced its image with exec()"), dump.stdout)
    }

    /// Every member of the exec family ends the trace (glibc's call each other internally, not
    /// through the exported names, so each is wrapped); the new image gets its arguments and
    /// environment as given.
    func testEveryExecFormEndsTheTrace() throws {
        let dir = Paths.tempDir("exec-forms")
        let exe = buildCProgram("Tests/Fixtures/c/exec_forms.c", in: dir)
        for form in ["execl", "execlp", "execle", "execv", "execvp", "execvpe", "execve", "fexecve"] {
            let (result, path) = record([exe, form], in: dir, name: form)
            XCTAssertEqual(result.status, 0, "\(form): \(result.stderr)")
            XCTAssertEqual(result.stdout, form == "execle" ? "FORM=execle ran\n" : "\(form) ran\n")
            let trace = try TraceSummary(path: path)
            XCTAssertTrue(trace.header.flags.contains(.replacedByExec), form)
            XCTAssertNotNil(trace.queue("fx.c.exec"), form)
        }
        // A vfork child shares the parent's memory until it execs: the parent's trace goes on.
        let (result, path) = record([exe, "vfork"], in: dir, name: "vfork")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "vfork ran\n")
        let parent = try TraceSummary(path: path)
        XCTAssertFalse(parent.header.flags.contains(.replacedByExec), "the vfork child's exec is not the parent's")
        XCTAssertTrue(parent.header.flags.contains(.finalizedByProcess))
        XCTAssertEqual(parent.enqueues(on: "fx.c.exec").count, 2, "the sync after the child's exec is recorded")
    }

    /// `sh -c 'exec FIXTURE'`: the shell (no Dispatch) becomes the fixture in the same process,
    /// whose trace is then the main one, with the program's exit status.
    func testShellExecingTheProgramWritesTheMainTrace() throws {
        let dir = Paths.tempDir("sh-exec")
        let (result, path) = record(["/bin/sh", "-c", "exec '\(Paths.fixtures)' fork"], in: dir)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "fork child exited\n")
        let trace = try TraceSummary(path: path)
        XCTAssertNotNil(trace.queue("fx.parent"))
        XCTAssertEqual(trace.header.exitStatus, 0)
        XCTAssertFalse(trace.header.flags.contains(.replacedByExec), "the fixture exited; only sh exec'd, untraced")
        XCTAssertEqual(try siblings(of: "trace", in: dir).count, 1, "the fixture's forked child")
    }

    /// An exec that fails returns: the process goes on tracing and finalizes at its real exit.
    func testFailedExecKeepsTracing() throws {
        let dir = Paths.tempDir("exec-fails")
        let (result, path) = record([Paths.fixtures, "exec-into", "/nonexistent/program"], in: dir)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "exec /nonexistent/program\nexec failed\n")
        let trace = try TraceSummary(path: path)
        XCTAssertTrue(trace.header.flags.contains(.finalizedByProcess))
        XCTAssertFalse(trace.header.flags.contains(.replacedByExec), "the exec did not happen")
        XCTAssertEqual(trace.enqueues(on: "fx.before-exec").count, 3, "the sync after the failed exec is recorded")
    }

    /// A Dispatch program that execs another Dispatch program (same pid, same file name): the
    /// first image's trace is kept, and the second writes TRACE.PID.2.qtrace.
    func testEachImageOfAnExecChainKeepsItsTrace() throws {
        let dir = Paths.tempDir("exec-chain")
        let (result, path) = record([Paths.fixtures, "exec-into", Paths.fixtures, "fork"], in: dir)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("fork child exited"))
        let first = try TraceSummary(path: path)
        XCTAssertTrue(first.header.flags.contains(.replacedByExec))
        XCTAssertNotNil(first.queue("fx.before-exec"), "the first image's events were kept")
        let pid = first.header.pid
        let second = try TraceSummary(path: dir.appendingPathComponent("trace.\(pid).2.qtrace").path)
        XCTAssertEqual(second.header.pid, pid)
        XCTAssertNotNil(second.queue("fx.parent"), "the second image (fork scenario) wrote its own file")
        XCTAssertNil(second.queue("fx.before-exec"))
        XCTAssertNil(first.header.exitStatus, "the first image did not exit")
        XCTAssertEqual(second.header.exitStatus, 0, "the exit status is the last image's")
        XCTAssertEqual(try siblings(of: "trace", in: dir).count, 2, "the second image and its forked child")
    }

    /// A shell script at the top level (no Dispatch call of its own) running a Dispatch child:
    /// the report is written and named, and the trace path printed opens with `qtrace stats`.
    func testReportWhenOnlyAChildUsedDispatch() throws {
        let dir = Paths.tempDir("script-parent")
        let script = dir.appendingPathComponent("run.sh")
        try "#!/bin/sh\n'\(Paths.fixtures)' fork\necho script done\n".write(to: script, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(script.path, 0o755), 0)
        let out = dir.appendingPathComponent("out.qtrace").path
        let result = runProgram([Paths.qtrace, "record", "-o", out, "--", script.path], environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "fork child exited\nscript done\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "sh made no Dispatch call")
        let report = dir.appendingPathComponent("out.html").path
        XCTAssertTrue(result.stderr.contains("qtrace: report: \(report)"), result.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: report))
        XCTAssertTrue(result.stderr.contains("made no Dispatch call itself; 2 of its child processes did"), result.stderr)
        let printed = result.stderr.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("qtrace: trace: ") ? String(line.dropFirst("qtrace: trace: ".count)) : nil
        }
        XCTAssertEqual(printed.sorted(), try siblings(of: "out", in: dir), "the fixture and its forked child")
        for path in printed {
            let stats = runProgram([Paths.qtrace, "stats", path])
            XCTAssertEqual(stats.status, 0, "\(path): \(stats.stderr)")
        }
        let html = try String(contentsOfFile: report, encoding: .utf8)
        XCTAssertTrue(html.contains("qtrace-fixtures"), "the report shows the child processes")
    }
}
