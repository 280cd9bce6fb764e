// `qtrace top`: a live view of a program's queues and threads, read from its trace while the
// shim writes it (the trace is a MAP_SHARED file: a reader sees every record up to the last
// complete one, without stopping the program).
import ArgumentParser
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceRecording
import QTraceText
#if canImport(Glibc)
import Glibc
#endif

struct Top: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live view of a program's queues, threads and findings while it runs.",
        discussion: """
        qtrace top -- PROGRAM [ARGS]   runs PROGRAM under the tracer (as qtrace record does) and \
        shows, refreshed every --interval seconds: per queue the items pending and running now, \
        items started per second and the wait and run p99 over the last --window seconds; \
        threads alive, workers, threads blocked; and the findings so far (deadlocks, thread \
        explosion, long waits...). The program's stdout and stderr go to --program-output \
        (default: the trace's name with .out) so that they do not break the view. qtrace exits \
        with the program's status; the trace stays for qtrace stats and qtrace report.

        qtrace top TRACE    watches a trace being written (by qtrace record in another \
        terminal, say) until its process exits. qtrace top PID watches a process running under \
        qtrace record (its trace is found from the process's QTRACE_OUTPUT).

        Keys (in a terminal): s sorts by the next column (items/s, wait p99, run p99, \
        pending), j/k or the arrows pick a queue and Enter shows its most recent items (id, \
        state, start, wait, run, code; Enter again goes back), q stops (in program mode the program is interrupted, as by Ctrl-C). When \
        stdout is not a terminal, one summary line is printed per refresh instead. A program \
        that starts children shows its own trace (or, if it makes no Dispatch call, its \
        newest child's).
          qtrace top -- ./server --port 8080
          qtrace top --interval 0.5 --window 2 -- swift build
        """)

    @Option(help: ArgumentHelp("Seconds between refreshes.", valueName: "seconds"))
    var interval: Double = 1

    @Option(help: ArgumentHelp("Seconds of recent activity the rates and percentiles cover.", valueName: "seconds"))
    var window: Double = 5

    @Option(name: [.short, .long], help: ArgumentHelp("Program mode: the trace file to write.", valueName: "path"))
    var output: String?

    @Option(help: ArgumentHelp("Program mode: where the program's stdout and stderr go (default: TRACE with .out).", valueName: "path"))
    var programOutput: String?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp(
        "-- PROGRAM [ARGS], or a TRACE file being written, or the PID of a process under qtrace record.", valueName: "target"))
    var target: [String] = []

    mutating func validate() throws {
        if target.first == "--help" || target.first == "-h" { throw CleanExit.helpRequest(self) }
        guard interval >= 0.05, interval <= 3600 else { throw ValidationError("--interval must be between 0.05 and 3600 seconds") }
        guard window > 0, window <= 86400 else { throw ValidationError("--window must be between 0 and 86400 seconds") }
        if target.first == "--" {
            target.removeFirst()
            guard !target.isEmpty else { throw ValidationError("missing program: use qtrace top -- PROGRAM [ARGS...]") }
            return
        }
        guard target.count == 1 else {
            throw ValidationError("give a program after --, a trace file or a pid: qtrace top -- PROGRAM, qtrace top TRACE, qtrace top PID")
        }
        if target[0].hasPrefix("-") { throw ValidationError("unknown option '\(target[0])' (the program goes after --)") }
    }

    /// Whether `target` is a program to run (after --) rather than a trace or pid.
    private var runsProgram: Bool { CommandLine.arguments.contains("--") }

    func run() throws {
        let view = LiveTerminal(interval: interval, window: UInt64(window * 1e9))
        if runsProgram {
            throw ExitCode(try runProgram(view))
        }
        let trace = try Self.tracePath(watching: target[0])
        view.watch(title: trace) { Self.newestTrace(trace) } isDone: { Self.finished(trace) } onQuit: {}
    }

    // MARK: Program mode

    private func runProgram(_ view: LiveTerminal) throws -> Int32 {
        let tracePath = output ?? RecordingFiles.defaultTracePath(for: target[0])
        try RecordingFiles.prepareOutput(tracePath)
        let logPath = programOutput ?? RecordingFiles.reportPath(for: tracePath).dropLast(5) + ".out"
        let shim = try ShimLocator.find()
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = ShimLocator.preload(shim, before: env["LD_PRELOAD"])
        env["QTRACE_OUTPUT"] = tracePath
        env["QTRACE_ROOT_PPID"] = String(getpid())
        let program = try ChildProcess.start(target, environment: env, outputPath: String(logPath))
        let title = terminalSafe(URL(fileURLWithPath: target[0]).lastPathComponent) + " (pid \(program.pid))"
        view.watch(title: title) { Self.newestTrace(tracePath) } isDone: { program.hasExited() } onQuit: { program.interrupt() }
        let status = program.wait()
        let traces = RecordingFiles.collectTraces(mainPath: tracePath)
        for path in traces { TraceFinalizer.finalize(path: path, exitStatus: path == tracePath ? status : nil) }
        printErr("qtrace top: \(target[0]) exited with status \(status); its output: \(logPath)")
        for path in traces { printErr("qtrace top: trace: \(path) (qtrace report \(path) writes its report)") }
        return status
    }

    // MARK: Finding the trace

    /// A trace path as given, or the trace of a process running under qtrace record.
    static func tracePath(watching target: String) throws -> String {
        if let pid = Int32(target), !FileManager.default.fileExists(atPath: target) {
            guard let main = try environment(ofProcess: pid, command: "top")["QTRACE_OUTPUT"], !main.isEmpty else {
                throw fail("top", "process \(pid) is not running under qtrace record (no QTRACE_OUTPUT in its environment)")
            }
            let ownTrace = traceStem(main) + ".\(pid).qtrace"
            return FileManager.default.fileExists(atPath: ownTrace) ? ownTrace : main
        }
        guard FileManager.default.fileExists(atPath: target) else {
            throw fail("top", "'\(target)' is neither a trace file nor a running process's pid")
        }
        return target
    }

    /// The main trace, or when the program made no Dispatch call, its newest child's.
    static func newestTrace(_ main: String) -> String? {
        if FileManager.default.fileExists(atPath: main) { return main }
        let children = RecordingFiles.siblingTraces(of: main)
        return children.max { modified($0) < modified($1) }
    }

    private static func modified(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }

    /// The traced process finalized its trace (it exited), or the trace is gone.
    static func finished(_ path: String) -> Bool {
        guard let file = try? TraceFile(path: path) else { return true }
        return file.header.flags.contains(.finalizedByProcess) || file.header.flags.contains(.finalizedByRecorder)
    }
}

/// The refresh loop: reads the trace, analyses it, draws the screen (or prints a line), and
/// reads keys.
final class LiveTerminal {
    let interval: Double
    let windowNs: UInt64
    let interactive = isatty(STDOUT_FILENO) == 1
    private var sortKey = LiveSortKey.rate
    /// The highlighted queue (kept when the rows move), the row order last drawn, and
    /// whether its recent items are shown (Enter).
    private var selectedQueue: Int?
    private var rowQueues: [Int] = []
    private var showingItems = false

    init(interval: Double, window: UInt64) {
        self.interval = interval
        windowNs = window
    }

    /// Refreshes until `isDone` (then once more) or the q key.
    func watch(title: String, trace: () -> String?, isDone: () -> Bool, onQuit: () -> Void) {
        let keys = interactive ? RawKeyboard() : nil
        if interactive { writeView("\u{1b}[?1049h\u{1b}[?25l") }  // alternate screen, no cursor
        defer {
            if interactive { writeView("\u{1b}[?25h\u{1b}[?1049l") }
            keys?.restore()
        }
        var last = false
        while true {
            let done = isDone()
            refresh(title: title, trace: trace())
            if done || last { return }
            if let key = keys?.read(timeout: interval) {
                handle(key, keys: keys!, onQuit: onQuit, last: &last)
            } else if keys == nil {
                usleep(useconds_t(interval * 1e6))
            }
        }
    }

    /// s sorts, j/k (or the arrows) move the highlight, Enter opens or closes the highlighted
    /// queue's recent items, q quits.
    private func handle(_ key: UInt8, keys: RawKeyboard, onQuit: () -> Void, last: inout Bool) {
        switch key {
        case UInt8(ascii: "q"): onQuit(); last = true
        case UInt8(ascii: "s"): sortKey = sortKey.next
        case UInt8(ascii: "j"): moveSelection(by: 1)
        case UInt8(ascii: "k"): moveSelection(by: -1)
        case 10, 13: showingItems.toggle()
        case 27:  // an arrow: ESC [ A (up) or ESC [ B (down)
            guard keys.read(timeout: 0.05) == UInt8(ascii: "["), let arrow = keys.read(timeout: 0.05) else { return }
            if arrow == UInt8(ascii: "A") { moveSelection(by: -1) }
            if arrow == UInt8(ascii: "B") { moveSelection(by: 1) }
        default: break
        }
    }

    private func moveSelection(by step: Int) {
        guard !rowQueues.isEmpty else { return }
        let row = selectedQueue.flatMap { rowQueues.firstIndex(of: $0) } ?? 0
        selectedQueue = rowQueues[min(max(row + step, 0), rowQueues.count - 1)]
    }

    private func refresh(title: String, trace path: String?) {
        guard let path, let file = try? TraceFile(path: path) else {
            show("qtrace top  \(title)  waiting for the program's first Dispatch call...")
            return
        }
        var model = Analysis.buildModel(file: file)
        symbolize(&model, command: "top")
        let statistics = TraceStatistics(model: model)
        let findings = Diagnostics.findings(model: model, statistics: statistics).filter { !rulesSettledAtExit.contains($0.id) }
        let snapshot = LiveSnapshot(model: model, windowNs: windowNs, sortedBy: sortKey)
        guard interactive else {
            writeView(TopText.line(snapshot, findings: findings.count) + "\n")
            return
        }
        let groups = FindingGrouping.groups([("", Int(model.info.pid), findings)])
        rowQueues = snapshot.queues.map(\.queue)
        let selected = selectedQueue.flatMap { rowQueues.firstIndex(of: $0) } ?? 0
        if !rowQueues.isEmpty { selectedQueue = rowQueues[selected] }
        let recent = showingItems && snapshot.queues.indices.contains(selected)
            ? LiveSnapshot.recentItems(model, queue: snapshot.queues[selected].queue, limit: max(terminalHeight() - 8, 3)) : nil
        show(TopText.screen(snapshot, findings: groups, title: title, sort: sortKey, width: terminalWidth(),
                            height: terminalHeight(), selected: selected, recent: recent))
    }

    private func show(_ text: String) {
        // The terminal keeps its output processing (only ICANON and ECHO are off): "\n" is
        // a new line there.
        writeView(interactive ? "\u{1b}[H\u{1b}[2J" + text : text + "\n")
    }
}

/// The terminal's rows (24 when unknown).
func terminalHeight() -> Int {
    var size = winsize()
    if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row >= 5 { return Int(size.ws_row) }
    return 24
}

/// Keys one at a time without echo while the view runs (Ctrl-C still interrupts).
final class RawKeyboard {
    private var saved = termios()
    private let active: Bool

    init?() {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        active = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
    }

    /// The next key, or nil after `timeout` seconds.
    func read(timeout: Double) -> UInt8? {
        var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var byte: UInt8 = 0
        return Glibc.read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    func restore() {
        if active { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }
}

/// The view's output: a terminal or pipe that went away ends qtrace top by SIGPIPE, as for
/// any pipe reader; other write errors only lose a frame.
@discardableResult
private func writeView(_ text: String) -> Bool { writeAll(STDOUT_FILENO, text) }
