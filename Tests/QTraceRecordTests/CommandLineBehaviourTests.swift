// The command line around a recording (issue 26): signals sent to `qtrace record` reach the
// program exactly once, `qtrace snapshot` finds a ring however -o named it, and `qtrace
// stats` into a file prints names whole.
import Foundation
import QTraceFormat
import XCTest

final class CommandLineBehaviourTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    /// Waits for `text` in the file a program writes its stdout to (60 s watchdog).
    func waitFor(_ text: String, in path: String) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Runs `argv` in a process group of its own, sends `signal` to that process alone once it
    /// printed "ready", and returns its exit status (the shell's way: 128+N for signal N).
    func statusAfterSignal(_ argv: [String], environment: [String: String] = [:], dir: URL, name: String,
                           signal: Int32) throws -> Int32 {
        let outPath = dir.appendingPathComponent("\(name).out").path
        let pid = try spawnInNewProcessGroup(argv, environment: environment, stdoutPath: outPath)
        defer { kill(-pid, SIGKILL) }
        XCTAssertTrue(waitFor("ready", in: outPath), "\(name): the program never got ready")
        kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f != 0 ? 128 + (status & 0x7f) : (status >> 8) & 0xff
    }

    /// `kill -INT <qtrace pid>`: qtrace passes it on, the program ends as it would untraced,
    /// and the trace is written (before, qtrace swallowed it and waited forever).
    func testSigintSentToQtraceEndsTheProgramAndTheTraceIsWritten() throws {
        let dir = Paths.tempDir("kill-int")
        let path = dir.appendingPathComponent("spin.qtrace").path
        let untraced = try statusAfterSignal([Paths.fixtures, "spin"], dir: dir, name: "untraced", signal: SIGINT)
        XCTAssertEqual(untraced, 128 + SIGINT)
        let traced = try statusAfterSignal([Paths.qtrace, "record", "--no-report", "-o", path, "--", Paths.fixtures, "spin"],
                                           environment: ["QTRACE_SHIM": Paths.shim], dir: dir, name: "traced", signal: SIGINT)
        XCTAssertEqual(traced, untraced, "qtrace exits with the program's status, as untraced")
        let t = try TraceSummary(path: path)
        XCTAssertTrue(t.header.flags.contains(.finalizedByRecorder))
        XCTAssertEqual(t.header.exitStatus, 128 + SIGINT)
        XCTAssertGreaterThanOrEqual(t.enqueues(on: "fx.spin").count, 2000)
    }

    /// A Ctrl-C typed into a terminal reaches the program once: the terminal signals the whole
    /// foreground process group, qtrace included, and qtrace must not pass its copy on. Runs
    /// qtrace on a pseudo-terminal (python's pty module), types Ctrl-C, then "quit".
    func testCtrlCTypedInATerminalReachesTheProgramOnce() throws {
        let dir = Paths.tempDir("pty-ctrl-c")
        let path = dir.appendingPathComponent("count.qtrace").path
        let driver = dir.appendingPathComponent("pty_ctrl_c.py").path
        try Self.ptyDriver.write(toFile: driver, atomically: true, encoding: .utf8)
        let untraced = runProgram(["/usr/bin/env", "python3", driver, Paths.fixtures, "count-sigint"])
        XCTAssertTrue(untraced.stdout.contains("sigint count: 1"), untraced.stdout + untraced.stderr)
        let traced = runProgram(["/usr/bin/env", "python3", driver, Paths.qtrace, "record", "--no-report", "-o", path, "--",
                                 Paths.fixtures, "count-sigint"], environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertTrue(traced.stdout.contains("got sigint"), traced.stdout + traced.stderr)
        XCTAssertTrue(traced.stdout.contains("sigint count: 1"), "exactly one SIGINT: \(traced.stdout)")
        XCTAssertTrue(traced.stdout.contains("status: 0"), traced.stdout)
        XCTAssertEqual(try TraceSummary(path: path).header.exitStatus, 0)
    }

    /// Forks argv on a pty (its controlling terminal), waits for "ready", types Ctrl-C, waits
    /// for the program's "got sigint", types "quit", and prints everything and the status.
    static let ptyDriver = """
    import os, pty, sys
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[1], sys.argv[1:])
    out = b""
    def until(text):
        global out
        while text not in out:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
        return True
    if until(b"ready"):
        os.write(fd, b"\\x03")
        if until(b"got sigint"):
            os.write(fd, b"quit\\n")
    until(b"\\0end of output")
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace"))
    print("status:", os.waitstatus_to_exitcode(status))

    """

    /// `qtrace snapshot PID` finds the ring of `record --ring -o PATH` with and without
    /// .qtrace in PATH, by the program's pid and by qtrace's.
    func testSnapshotFindsTheRingWhateverItsName() throws {
        for name in ["ringx", "ring.qtrace"] {
            let dir = Paths.tempDir("ring-name-\(name)")
            let ring = dir.appendingPathComponent(name).path
            let outPath = dir.appendingPathComponent("stdout.txt").path
            let argv = [Paths.qtrace, "record", "--ring", "4M", "--no-report", "-o", ring, "--", Paths.fixtures, "spin"]
            let recorder = try spawnInNewProcessGroup(argv, environment: ["QTRACE_SHIM": Paths.shim], stdoutPath: outPath)
            defer { kill(-recorder, SIGKILL); waitpid(recorder, nil, 0) }
            XCTAssertTrue(waitFor("ready", in: outPath))
            let program = try XCTUnwrap(childPids(of: recorder).first)
            let stem = name.hasSuffix(".qtrace") ? String(ring.dropLast(7)) : ring
            for (n, target) in [program, recorder].enumerated() {
                let asked = runProgram([Paths.qtrace, "snapshot", String(target)])
                XCTAssertEqual(asked.status, 0, "\(name), pid \(target): \(asked.stderr)")
                XCTAssertEqual(asked.stdout, "\(stem).snapshot-\(n + 1).qtrace\n", name)
                XCTAssertTrue(try TraceFile.readHeader(path: "\(stem).snapshot-\(n + 1).qtrace").flags.contains(.snapshot))
            }
        }
    }

    /// A recording without --ring: the error says so instead of "start it with --ring".
    func testSnapshotOfAFullRecordingSaysWhyNot() throws {
        let dir = Paths.tempDir("ring-none")
        let outPath = dir.appendingPathComponent("stdout.txt").path
        let argv = [Paths.qtrace, "record", "--no-report", "-o", dir.appendingPathComponent("full").path, "--", Paths.fixtures, "spin"]
        let recorder = try spawnInNewProcessGroup(argv, environment: ["QTRACE_SHIM": Paths.shim], stdoutPath: outPath)
        defer { kill(-recorder, SIGKILL); waitpid(recorder, nil, 0) }
        XCTAssertTrue(waitFor("ready", in: outPath))
        let asked = runProgram([Paths.qtrace, "snapshot", String(recorder)])
        XCTAssertEqual(asked.status, 2)
        XCTAssertTrue(asked.stderr.contains("recorded in full"), asked.stderr)
        XCTAssertFalse(asked.stderr.contains("start it with"), asked.stderr)
    }

    func childPids(of pid: pid_t) -> [pid_t] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `qtrace stats T > file`: every name whole (a long queue label, a long function's
    /// closure); COLUMNS=100 still fits them to 100 columns.
    func testStatsIntoAFileKeepsNamesWhole() throws {
        let dir = Paths.tempDir("long-names")
        let (run, trace) = record([Paths.fixtures, "long-names"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let function = "aFunctionWhoseNameIsLongerThanTheCodeColumnOfAHundredColumnTableCanShow"
        let label = "com.example.a-queue-label-far-longer-than-any-terminal-table-leaves-room-for.worker-pool"
        let env = ["XDG_CACHE_HOME": dir.path, "COLUMNS": ""]
        // Table rows start with their name column (findings quote names whole anyway).
        func rows(_ text: String, startingWith name: String) -> Int { text.split(separator: "\n").filter { $0.hasPrefix(name) }.count }
        for args in [["stats", trace], ["stats", "--by", "code", trace]] {
            let names = ["closure #1 in \(function)"] + (args.count == 2 ? [label] : [])
            let whole = runProgram([Paths.qtrace] + args, environment: env)
            XCTAssertEqual(whole.status, 0, whole.stderr)
            let fitted = runProgram([Paths.qtrace] + args, environment: env.merging(["COLUMNS": "100"]) { $1 })
            for name in names {
                XCTAssertGreaterThan(rows(whole.stdout, startingWith: name), 0, "\(args): \(name) whole in \(whole.stdout)")
                XCTAssertEqual(rows(fitted.stdout, startingWith: name), 0, "COLUMNS=100 fits \(name): \(fitted.stdout)")
            }
        }
    }
}
