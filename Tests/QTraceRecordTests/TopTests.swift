// `qtrace top` as a user runs it: in an 80×24 pseudo-terminal (screens with the program's
// queues and a plausible rate, the program's output kept out of the view) and into a pipe
// (one line per refresh). The program is the gallery's mixed app (~2 s).
import Foundation
import XCTest

final class TopTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    /// Runs `argv` on a pseudo-terminal of 80×24 (Python's pty) and returns what it drew;
    /// `keys` are typed once the first queue table is on screen.
    func runOnTerminal(_ argv: [String], keys: String = "") -> RunResult {
        let script = """
        import fcntl, os, pty, select, struct, sys, termios, time
        argv = sys.argv[1:]
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
            os.execv(argv[0], argv)
        out = b''
        keys = os.environ.get('QTRACE_TEST_KEYS', '').encode()
        deadline = time.time() + 60
        while time.time() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
            if keys and b'items/s' in out:
                os.write(fd, keys)
                keys = b''
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode('utf-8', 'replace'))
        sys.exit(os.waitstatus_to_exitcode(status))
        """
        return runProgram(["/usr/bin/env", "python3", "-c", script] + argv,
                          environment: ["QTRACE_SHIM": Paths.shim, "QTRACE_TEST_KEYS": keys])
    }

    func testTerminalShowsRefreshingScreensWithTheProgramsQueues() throws {
        let dir = Paths.tempDir("top-tty")
        let trace = dir.appendingPathComponent("app.qtrace").path
        let r = runOnTerminal([Paths.qtrace, "top", "--interval", "0.3", "-o", trace, "--", Paths.samples, "app"])
        XCTAssertEqual(r.status, 0, r.stdout)
        // Each screen starts with "home, clear"; the view ends where the cursor comes back.
        let view = r.stdout.components(separatedBy: "\u{1b}[?25h").first ?? ""
        let screens = view.components(separatedBy: "\u{1b}[H\u{1b}[2J").dropFirst()
        let drawn = screens.filter { $0.contains("qtrace top  qtrace-samples") && $0.contains("items/s") }
        XCTAssertGreaterThanOrEqual(drawn.count, 2, "two refreshes at least: \(r.stdout.suffix(2000))")
        // A row of the app's cache queue with a positive rate (items/s is the 4th column).
        let rows = drawn.flatMap { $0.components(separatedBy: "\r\n") }.map { String($0.dropFirst(2)) }
            .filter { $0.hasPrefix("com.example.thumbnail-cache") }
        let rates = rows.compactMap { Double($0.split(separator: " ").dropFirst(3).first ?? "") }
        XCTAssertTrue(rates.contains { $0 > 0 && $0 < 1_000_000 }, "rows: \(rows)")
        for screen in drawn {
            for line in screen.components(separatedBy: "\r\n") { XCTAssertLessThanOrEqual(line.count, 80, line) }
            XCTAssertLessThanOrEqual(screen.components(separatedBy: "\r\n").count, 24)
        }
        XCTAssertFalse(r.stdout.contains("photos shown"), "the program's output goes to its file, not over the view")
        let log = try String(contentsOfFile: dir.appendingPathComponent("app.out").path, encoding: .utf8)
        XCTAssertTrue(log.contains("photos shown: 10"), log)
        XCTAssertTrue(FileManager.default.fileExists(atPath: trace))
    }

    func testPipeGetsOneLinePerRefreshAndTheProgramsStatus() throws {
        let dir = Paths.tempDir("top-pipe")
        let trace = dir.appendingPathComponent("fx.qtrace").path
        let r = runProgram([Paths.qtrace, "top", "--interval", "0.2", "-o", trace, "--", Paths.fixtures, "exit-code", "7"],
                           environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertEqual(r.status, 7, r.stderr)
        XCTAssertTrue(r.stderr.contains("exited with status 7"), r.stderr)
        let app = runProgram([Paths.qtrace, "top", "--interval", "0.3", "-o", dir.appendingPathComponent("app.qtrace").path,
                              "--", Paths.samples, "app"], environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertEqual(app.status, 0, app.stderr)
        let lines = app.stdout.split(separator: "\n").filter { $0.hasPrefix("t=") }
        XCTAssertGreaterThanOrEqual(lines.count, 2, app.stdout)
        XCTAssertTrue(lines.contains { $0.contains("busiest=") }, app.stdout)
        let bad = runProgram([Paths.qtrace, "top", "/nonexistent.qtrace"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr.filter { $0 == "\n" }.count, 1, bad.stderr)
    }

    func testEnterShowsThePickedQueuesRecentItems() throws {
        let dir = Paths.tempDir("top-items")
        let trace = dir.appendingPathComponent("app.qtrace").path
        let r = runOnTerminal([Paths.qtrace, "top", "--interval", "0.3", "-o", trace, "--", Paths.samples, "app"], keys: "\r")
        XCTAssertEqual(r.status, 0, r.stdout)
        let view = r.stdout.components(separatedBy: "\u{1b}[?25h").first ?? ""
        let screens = view.components(separatedBy: "\u{1b}[H\u{1b}[2J").dropFirst()
        XCTAssertTrue(screens.contains { $0.contains("> ") }, "the first queue row is highlighted")
        let opened = screens.filter { $0.contains("RECENT ITEMS of ") }
        XCTAssertFalse(opened.isEmpty, "Enter opens the highlighted queue's items: \(r.stdout.suffix(1500))")
        XCTAssertTrue(opened.contains { $0.contains("item id=") && ($0.contains("done") || $0.contains("running")) },
                      "\(opened.last ?? "")")
    }
}
