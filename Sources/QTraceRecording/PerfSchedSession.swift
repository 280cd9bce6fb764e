// `qtrace record --sched`: a system-wide perf recording of the kernel's sched_switch and
// sched_wakeup(_new) events around the traced program (docs/sched.md). perf runs in a private
// mount namespace (it mounts tracefs itself) with HOME in a temporary directory (it writes
// ~/.debug), in its own process group (Ctrl-C is for the program), and is stopped by PID.
import ArgumentParser
import Foundation
import QTraceFormat
import QTraceSched
#if canImport(Glibc)
import Glibc
#endif

public final class PerfSchedSession {
    public static let installHint = "apt-get install linux-perf"
    /// How long perf may take to start recording (it took ~5 s on a loaded 2-vCPU VM).
    public static let startTimeoutSeconds = 120.0

    public let directory: String
    public let perfPid: pid_t
    /// The record option this perf serves (`--sched`, `--cpu`): errors start with it.
    public let option: String
    /// perf was stopped and waited for (it must be, exactly once).
    private var reaped = false

    private init(directory: String, perfPid: pid_t, option: String) {
        self.directory = directory
        self.perfPid = perfPid
        self.option = option
    }

    /// `--sched`'s events: the scheduler's tracepoints.
    public static let schedEvents = ["-e", "sched:sched_switch", "-e", "sched:sched_wakeup", "-e", "sched:sched_wakeup_new"]
    public var dataPath: String { directory + "/perf.data" }
    public var errorPath: String { directory + "/perf.err" }

    /// Starts perf and returns once it is recording (its control FIFO acknowledged `enable`),
    /// or fails with one line saying why and how to fix it, before the program runs.
    /// `events`: perf record's event options (`--cpu` passes its sampling options).
    public static func start(option: String = "--sched", events: [String] = schedEvents) throws -> PerfSchedSession {
        guard let perf = findInPath("perf") else { throw ValidationError("\(option) needs perf, which is not installed: \(installHint)") }
        var template = Array("/tmp/qtrace-perf-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ValidationError("\(option): cannot create a temporary directory: \(errnoText())") }
        let directory = String(cString: made)
        let control = directory + "/control", ack = directory + "/ack"
        guard mkfifo(control, 0o600) == 0, mkfifo(ack, 0o600) == 0 else {
            throw ValidationError("\(option): cannot create perf's control FIFOs: \(errnoText())")
        }
        // 8 MiB per CPU for root (perf's default is 512 KiB, also others' locked-memory limit):
        // a busy machine's scheduler events must not overflow it while perf writes them out.
        let buffer = getuid() == 0 ? ["-m", "8M"] : []
        var argv = [perf, "record", "-q", "-a", "-k", "CLOCK_MONOTONIC", "-B", "-N", "--synth=no", "-D", "-1"] + buffer
            + ["--control", "fifo:\(control),\(ack)", "-o", directory + "/perf.data"] + events
        // If qtrace dies, perf gets SIGINT (and stops) rather than recording on forever.
        if let setpriv = findInPath("setpriv") { argv = [setpriv, "--pdeathsig", "INT", "--"] + argv }
        // A private mount namespace keeps perf's tracefs mount to itself (root only).
        if getuid() == 0, let unshare = findInPath("unshare") { argv = [unshare, "-m", "--propagation", "private", "--"] + argv }
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory
        environment.removeValue(forKey: "LD_PRELOAD")
        // Opened before perf starts: read-write so that neither side blocks on the other.
        let controlFd = open(control, O_RDWR | O_CLOEXEC), ackFd = open(ack, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        defer { close(controlFd); close(ackFd) }
        let pid = try spawn(argv, environment: environment, stdoutPath: "/dev/null", stderrPath: directory + "/perf.err", option: option)
        let session = PerfSchedSession(directory: directory, perfPid: pid, option: option)
        let enable = Array("enable\n".utf8)
        _ = write(controlFd, enable, enable.count)
        try session.waitForAck(ackFd)
        return session
    }

    private func waitForAck(_ fd: Int32) throws {
        let deadline = Date().addingTimeInterval(Self.startTimeoutSeconds)
        var received: [UInt8] = []
        while Date() < deadline {
            var status: Int32 = 0
            if waitpid(perfPid, &status, WNOHANG) == perfPid {
                reaped = true
                throw failure("perf stopped before it started recording")
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 100) > 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(fd, &buffer, buffer.count)
                if count > 0 { received += buffer[..<count] }
                if String(decoding: received, as: UTF8.self).contains("ack") { return }
            }
        }
        stopPerf()
        throw failure("perf did not start recording within \(Int(Self.startTimeoutSeconds)) s")
    }

    /// Stops perf (SIGINT, as Ctrl-C would) and waits for it to write its file.
    public func stop() throws {
        stopPerf()
        guard FileManager.default.fileExists(atPath: dataPath) else { throw failure("perf wrote no data") }
    }

    private func stopPerf() {
        guard !reaped else { return }
        reaped = true
        kill(perfPid, SIGINT)
        var status: Int32 = 0
        while waitpid(perfPid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Stops perf if still running and removes its files (the run failed before its end).
    public func abandon() {
        stopPerf()
        cleanUp()
    }

    /// The scheduler records perf captured that involve one of `tids` (the machine's other
    /// threads are dropped while reading), in time order (`perf script`).
    public func records(involving tids: Set<Int32>) throws -> [PerfSchedRecord] {
        var records: [PerfSchedRecord] = []
        try script(["--ns", "-F", PerfScriptParser.fields]) { line in
            if let record = PerfScriptParser.parse(utf8: line), record.involves(tids) { records.append(record) }
        }
        // perf script orders by time already; a stable sort makes sure of it.
        return records.enumerated().sorted { ($0.element.timeNs, $0.offset) < ($1.element.timeNs, $1.offset) }.map(\.element)
    }

    /// Runs `perf script` on the recording and hands each output line to `line` (without its
    /// newline); sets `lossReport`.
    public func script(_ arguments: [String], line: (ArraySlice<UInt8>) -> Void) throws {
        guard let perf = Self.findInPath("perf") else { throw ValidationError("\(option): perf disappeared: \(Self.installHint)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: perf)
        process.arguments = ["script", "-i", dataPath] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory
        environment.removeValue(forKey: "LD_PRELOAD")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        let scriptErrors = directory + "/script.err"
        _ = FileManager.default.createFile(atPath: scriptErrors, contents: nil)  // else no handle: stderr is dropped
        process.standardError = FileHandle(forWritingAtPath: scriptErrors)
        try process.run()
        var pending: [UInt8] = []
        let handle = output.fileHandleForReading
        while true {
            let data = handle.availableData
            if data.isEmpty { break }
            pending.append(contentsOf: data)
            var lineStart = 0
            for index in pending.indices where pending[index] == UInt8(ascii: "\n") {
                line(pending[lineStart..<index])
                lineStart = index + 1
            }
            pending.removeFirst(lineStart)
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("\(option): perf script failed (status \(process.terminationStatus)) on \(dataPath)")
        }
        lossReport = Self.lossReport(in: (try? String(contentsOfFile: scriptErrors, encoding: .utf8)) ?? "")
    }

    /// perf's own words when its buffers overflowed and it dropped events ("Processed N events
    /// and lost M chunks!"), set by `records(involving:)`: states are then missing.
    private(set) var lossReport: String?

    public static func lossReport(in scriptErrors: String) -> String? {
        scriptErrors.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.contains("lost") && ($0.contains("chunks") || $0.contains("events")) }
    }

    /// Removes the temporary directory (perf.data included).
    public func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }

    private func failure(_ what: String) -> ValidationError {
        let log = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        let reason = log.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
        cleanUp()
        let needs = option == "--sched" ? "root or kernel.perf_event_paranoid=-1, and tracefs" : "root or kernel.perf_event_paranoid<=0"
        return ValidationError("\(option): \(what)\(reason.map { ": \($0)" } ?? "") (perf needs \(needs))")
    }

    public static func findInPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// posix_spawn in a process group of its own, with stdout/stderr to files.
    private static func spawn(_ argv: [String], environment: [String: String], stdoutPath: String, stderrPath: String,
                              option: String) throws -> pid_t {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setpgroup(&attr, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attr, cArgs, cEnv)
        guard rc == 0 else { throw ValidationError("\(option): cannot run \(argv[0]): \(String(cString: strerror(rc)))") }
        return pid
    }
}

private func errnoText() -> String { String(cString: strerror(errno)) }

extension PerfSchedSession {
    /// Converts the session's records into each trace's scheduler stream: a trace gets the
    /// states of its own process's threads, between its start and its end.
    /// A failure here (after the program ran) is one line on stderr: the traces stay as they
    /// are, without scheduler data, and qtrace still exits with the program's status.
    public static func addSchedStreams(from session: PerfSchedSession, to traces: [String], quiet: Bool) {
        do {
            try convertSched(from: session, to: traces, quiet: quiet)
        } catch {
            printErr("qtrace: error: \(error) (the trace has no scheduling states)")
        }
    }

    private static func convertSched(from session: PerfSchedSession, to traces: [String], quiet: Bool) throws {
        defer { session.abandon() }
        try session.stop()
        let files = try traces.map { try TraceFile(path: $0) }
        let tidsByTrace = files.map(tracedTids)
        let records = try session.records(involving: tidsByTrace.reduce(into: Set<Int32>()) { $0.formUnion($1) })
        for (trace, tids) in zip(files, tidsByTrace) {
            let path = trace.path
            let end = trace.header.initMonoNs &+ trace.endTime
            let events = SchedStateConverter.events(from: records, pid: trace.header.pid, tids: tids,
                                                    initMonoNs: trace.header.initMonoNs, endMonoNs: end)
            try SchedStreamAppender.append(events, to: path, clock: trace.clock)
            if !quiet { printErr("qtrace: sched: \(events.count) thread state changes added to \(path)") }
        }
        if let loss = session.lossReport {
            // Said even with --quiet: the states of some threads are then wrong for a while.
            printErr("qtrace: warning: sched: perf dropped events (\(loss)): some thread states are missing; "
                     + "record again on a less busy machine")
        }
    }

    /// The threads whose states a trace keeps: its recorded threads and its main thread.
    private static func tracedTids(_ trace: TraceFile) -> Set<Int32> {
        var tids = Set(trace.threads.map(\.tid))
        tids.insert(trace.header.mainTid)
        tids.insert(trace.header.pid)
        tids.remove(TraceLayout.schedStreamTid)
        return tids
    }
}
