// `qtrace record --backend lttng`: an LTTng recording session around the traced program
// (docs/lttng.md). The program runs with libqtrace-shim-lttng.so preloaded, whose `qtrace:*`
// tracepoints this session records; QTraceCTF reads the result.
import ArgumentParser
import Foundation
import QTraceCTF
#if canImport(Glibc)
import Glibc
#endif

/// What `LTTngSession.record` leaves behind.
public struct LTTngRecording {
    /// The program's status (as the `program` closure returned it).
    public var status: Int32
    /// The session's output directory: a CTF trace that `CTFTraceReader` reads.
    public var traceDirectory: String
}

/// One LTTng recording session: uses the running session daemon, or starts one that it owns
/// and stops (by PID) at the end; creates a uniquely named session writing to
/// `traceDirectory`, records `qtrace:*` with the vtid context around the program, then stops
/// and destroys it.
public struct LTTngSession {
    public static let shimFileName = "libqtrace-shim-lttng.so"
    public static let installHint = "apt-get install lttng-tools liblttng-ust-dev"

    public let traceDirectory: String
    /// net://HOST[:CONTROL_PORT[:DATA_PORT]] when the session streams to an lttng-relayd
    /// instead of writing `traceDirectory`.
    public var relaydURL: String?
    public let sessionName: String
    /// Prepended to every lttng and lttng-sessiond command. The tests run everything in a
    /// private mount namespace with `nsenter -t PID -m --`; empty for `qtrace record`.
    public var commandPrefix: [String] = []
    /// Per-CPU ring buffers of the session's channel: 8 x 4 MiB lost no event at 10M events.
    public var subbufferSize = "4M"
    public var subbufferCount = 8

    /// Fails with a one-line error when lttng is not installed.
    public init(traceDirectory: String, commandPrefix: [String] = []) throws {
        guard Self.findInPath("lttng") != nil, Self.findInPath("lttng-sessiond") != nil else {
            throw ValidationError("lttng is not installed: \(Self.installHint)")
        }
        self.traceDirectory = URL(fileURLWithPath: traceDirectory).standardizedFileURL.path
        self.commandPrefix = commandPrefix
        sessionName = "qtrace-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// A session that streams to the lttng-relayd at `url` (net://HOST[:CONTROL[:DATA]]).
    public init(relaydURL url: String, commandPrefix: [String] = []) throws {
        try self.init(traceDirectory: "", commandPrefix: commandPrefix)
        relaydURL = url
    }

    /// Checks the form of a --relayd URL (lttng-create(1)'s net:// and net6:// URLs).
    public static func validateRelaydURL(_ url: String) throws {
        guard url.hasPrefix("net://") || url.hasPrefix("net6://"), url.split(separator: "/").count >= 2 else {
            throw ValidationError("--relayd takes net://HOST[:CONTROL_PORT[:DATA_PORT]] (or net6://), not '\(url)'")
        }
    }

    /// Runs `program` (which starts the traced program with `environment(adding:)` and
    /// returns its status) while the session records.
    public func record(_ program: () throws -> Int32) throws -> LTTngRecording {
        if relaydURL == nil { try Self.checkEmpty(traceDirectory) }
        let daemon = try SessionDaemon.useOrStart(prefix: commandPrefix)
        defer { daemon.stopIfOwned() }
        // `lttng create` makes the new session the user's current one in ~/.lttngrc: put back
        // whatever was there, after the session is destroyed.
        let rcPath = Self.lttngrcPath()
        let savedRC = FileManager.default.contents(atPath: rcPath)
        defer { Self.restore(rcPath, savedRC) }
        try lttng("create", sessionName, relaydURL.map { "--set-url=\($0)" } ?? "--output=\(traceDirectory)")
        var created = true
        defer { if created { try? lttng("destroy", sessionName) } }
        // With a relayd, the first command that needs it (enable-channel) fails when it is unreachable.
        try lttng("enable-channel", "--userspace", "--session=\(sessionName)", "--subbuf-size=\(subbufferSize)",
                  "--num-subbuf=\(subbufferCount)", "qtrace")
        try lttng("enable-event", "--userspace", "--session=\(sessionName)", "--channel=qtrace", "qtrace:*")
        try lttng("add-context", "--userspace", "--session=\(sessionName)", "--channel=qtrace", "--type=vtid")
        try lttng("start", sessionName)
        let status: Int32
        do {
            status = try program()
        } catch {
            try? lttng("stop", sessionName)
            throw error
        }
        // stop waits until the consumer has written everything out.
        try lttng("stop", sessionName)
        try lttng("destroy", sessionName)
        created = false
        return LTTngRecording(status: status, traceDirectory: traceDirectory)
    }

    /// LTTng writes into the output directory as it pleases: an old trace there would be read
    /// as part of the new one.
    private static func checkEmpty(_ directory: String) throws {
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        guard contents.isEmpty else {
            throw ValidationError("\(directory) already exists and is not empty: remove it or choose another output")
        }
    }

    private static func lttngrcPath() -> String {
        let env = ProcessInfo.processInfo.environment
        let home = env["LTTNG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? env["HOME"] ?? NSHomeDirectory()
        return home + "/.lttngrc"
    }

    private static func restore(_ path: String, _ contents: Data?) {
        if let contents {
            try? writeFile(path) { file in try contents.withUnsafeBytes { try file.write($0) } }
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Where the CTF trace of TRACE.qtrace goes: TRACE.lttng beside it.
    public static func traceDirectory(for tracePath: String) -> String {
        traceStem(tracePath) + ".lttng"
    }

    /// The traced program's environment: `base` with the LTTng shim preloaded.
    public static func environment(adding shim: String, to base: [String: String]) -> [String: String] {
        var env = base
        env["LD_PRELOAD"] = ShimLocator.preload(shim, before: base["LD_PRELOAD"])
        return env
    }

    /// libqtrace-shim-lttng.so: $QTRACE_SHIM_LTTNG, or beside the qtrace executable (`make shim-lttng`).
    public static func findShim() throws -> String {
        try ShimLocator.find(fileName: shimFileName, variable: "QTRACE_SHIM_LTTNG",
                             buildHint: "build it with `make shim-lttng` (needs \(installHint))")
    }

    /// Converts the recording into embedded-format traces, as the default backend writes
    /// them: the traced program's into `mainPath`, any other process's into MAIN.PID.qtrace,
    /// and a program a process exec'd into MAIN.PID.N.qtrace (its N-th image); the program's
    /// last image gets the exit status. Returns the paths written (main first).
    public static func convert(traceDirectory: String, mainPath: String, exitStatus: Int32) throws -> [String] {
        let reader = try CTFTraceReader(path: traceDirectory)
        let base = traceStem(mainPath)
        let written = try reader.convertAll(to: { number, pid, image in
            number == 0 ? mainPath : image > 1 ? "\(base).\(pid).\(image).qtrace" : "\(base).\(pid).qtrace"
        }, exitStatus: { processes, number in
            let program = processes[0].pid
            let lastImage = processes.lastIndex { $0.pid == program }
            return number == lastImage ? exitStatus : nil
        })
        return written.map(\.path)
    }

    // MARK: Commands

    private func lttng(_ arguments: String...) throws {
        // --no-sessiond: never let the client spawn a daemon that nobody would stop.
        let result = Self.run(commandPrefix + ["lttng", "--no-sessiond"] + arguments)
        guard result.status == 0 else {
            if let relaydURL, result.output.contains("Unable to connect to lttng-relayd") {
                throw ValidationError("cannot reach lttng-relayd at \(relaydURL): start one there (lttng-relayd -o DIR; "
                                      + "default ports 5342 and 5343) or fix the URL (net://HOST[:CONTROL_PORT[:DATA_PORT]])")
            }
            throw ValidationError("lttng \(arguments.first ?? "") failed: \(result.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// Runs a command to completion (found through PATH), with its output captured.
    public static func run(_ argv: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = argv
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(error)") }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    public static func findInPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// The session daemon a recording talks to: an existing one, or one started (and owned)
/// here. Only an owned daemon is stopped, by its PID.
struct SessionDaemon {
    public let ownedPid: pid_t?
    public let prefix: [String]

    public static func useOrStart(prefix: [String]) throws -> SessionDaemon {
        if LTTngSession.run(prefix + ["lttng", "--no-sessiond", "list"]).status == 0 {
            return SessionDaemon(ownedPid: nil, prefix: prefix)
        }
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-sessiond-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pid").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        // --daemonize returns once the daemon accepts commands; --no-kernel: user space only.
        let result = LTTngSession.run(prefix + ["lttng-sessiond", "--daemonize", "--no-kernel", "--pidfile=\(pidFile)"])
        guard result.status == 0, let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ValidationError("cannot start lttng-sessiond: \(result.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return SessionDaemon(ownedPid: pid, prefix: prefix)
    }

    /// Stops the daemon started here (SIGTERM, then SIGKILL after 5 s); it takes its consumer
    /// daemons with it.
    public func stopIfOwned() {
        guard let pid = ownedPid else { return }
        kill(pid, SIGTERM)
        for _ in 0..<500 {
            if kill(pid, 0) != 0 || Self.isZombie(pid) { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
    }

    private static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
    }
}
