// Helpers for the LTTng tests: the built programs and shims, running commands, and a private
// mount namespace in which a test's own session daemon cannot meet anyone else's.
import Foundation
import QTraceFormat
import XCTest
@testable import QTraceRecording

enum TestPaths {
    /// The build products directory (where qtrace-fixtures is).
    static let bin: URL = {
        var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("qtrace-fixtures").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var fixtures: String { bin.appendingPathComponent("qtrace-fixtures").path }

    /// The qtrace command line tool.
    static var qtrace: String { bin.appendingPathComponent("qtrace").path }

    /// This test process's scratch directory (removed by `cleanUp()`).
    static let scratch: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-ctf-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }()

    static func tempDir(_ name: String) -> URL {
        let dir = scratch.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: dir)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// LTTNG_HOME for every lttng command the tests run (the client's ~/.lttngrc lives there).
    /// (Made again when a test class's tearDown removed the scratch directory.)
    static var lttngHome: String {
        let dir = scratch.appendingPathComponent("lttng-home")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    static func cleanUp() { try? FileManager.default.removeItem(at: scratch) }

    /// The interposer's sources (every Sources/CQTraceShim/shim_*.c and shim_*.S), as the Makefile lists them.
    static let interposerSources: [String] = {
        let src = repo.appendingPathComponent("Sources/CQTraceShim").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: src)) ?? [])
            .filter { $0.hasPrefix("shim_") && ($0.hasSuffix(".c") || $0.hasSuffix(".S")) }.sorted()
    }()

    /// The embedded recorder's sources (recorder*.c), as the Makefile lists them.
    static let recorderSources: [String] = {
        let src = repo.appendingPathComponent("Sources/CQTraceShim").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: src)) ?? [])
            .filter { $0.hasPrefix("recorder") && $0.hasSuffix(".c") }.sorted()
    }()

    /// The embedded shim: $QTRACE_SHIM, the one beside the binaries, or built here.
    static let embeddedShim: Result<String, Error> = locateOrBuild(
        environment: "QTRACE_SHIM", fileName: "libqtrace-shim.so",
        sources: recorderSources + interposerSources, flags: [], libraries: [])

    /// The LTTng shim: $QTRACE_SHIM_LTTNG, the one `make shim-lttng` put beside the
    /// binaries, or built here with cc (as the Makefile does).
    static let lttngShim: Result<String, Error> = locateOrBuild(
        environment: "QTRACE_SHIM_LTTNG", fileName: "libqtrace-shim-lttng.so",
        sources: interposerSources + ["lttng/recorder_lttng.c", "lttng/qtrace_tp.c"],
        flags: ["-DQTRACE_LTTNG=1", "-I", repo.appendingPathComponent("Sources/CQTraceShim/lttng").path],
        libraries: ["-llttng-ust"])

    private static func locateOrBuild(environment: String, fileName: String, sources: [String], flags: [String],
                                      libraries: [String]) -> Result<String, Error> {
        if let path = ProcessInfo.processInfo.environment[environment], FileManager.default.fileExists(atPath: path) {
            return .success(path)
        }
        let beside = bin.appendingPathComponent(fileName).path
        if FileManager.default.fileExists(atPath: beside) { return .success(beside) }
        let src = repo.appendingPathComponent("Sources/CQTraceShim")
        let out = scratch.appendingPathComponent(fileName).path
        let result = runCommand(["cc", "-O2", "-fPIC", "-shared", "-DQTRACE_PRELOAD=1", "-I", src.appendingPathComponent("include").path]
                                + flags + sources.map { src.appendingPathComponent($0).path }
                                + ["-o", out] + libraries + ["-ldl", "-lpthread"])
        guard result.status == 0 else { return .failure(TestSetupError("building \(fileName) failed: \(result.output)")) }
        return .success(out)
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command (found through PATH) to completion with its output captured, without any
/// qtrace or preload variables from the test's environment unless given in `environment`.
@discardableResult
func runCommand(_ argv: [String], environment: [String: String] = [:]) -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = argv
    var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("QTRACE") && $0.key != "LD_PRELOAD" }
    env.merge(environment) { $1 }
    process.environment = env
    // Another suite's tearDown may have removed the shared scratch directory.
    try? FileManager.default.createDirectory(at: TestPaths.scratch, withIntermediateDirectories: true)
    // A file, not a pipe: nothing to drain while waiting, and daemons that keep the
    // descriptor open cannot make the read hang.
    let outURL = TestPaths.scratch.appendingPathComponent("run-\(UUID().uuidString).out")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: outURL) }
    guard let handle = try? FileHandle(forWritingTo: outURL) else { return (-1, "cannot create \(outURL.path)") }
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    do { try process.run() } catch { return (-1, "\(error)") }
    process.waitUntilExit()
    try? handle.close()
    let output = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
    return (process.terminationStatus, output)
}

/// A private mount namespace with its own /run/lttng and /dev/shm (tmpfs), held open by a
/// `sleep` process: a session daemon started in it, and the programs it traces, see nothing
/// of the machine's daemons (platform-facts.md §3). Commands enter it with `prefix`.
final class PrivateLTTngNamespace {
    private let holder: Process
    var pid: pid_t { holder.processIdentifier }
    var prefix: [String] { ["nsenter", "-t", "\(pid)", "-m", "--"] }

    /// Throws XCTSkip when this machine cannot make one (no root, no unshare).
    init() throws {
        try? FileManager.default.createDirectory(at: TestPaths.scratch, withIntermediateDirectories: true)
        let ready = TestPaths.scratch.appendingPathComponent("namespace-ready-\(UUID().uuidString)")
        holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // unshare execs sh, which execs sleep: the holder keeps the Process's PID throughout.
        holder.arguments = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "mkdir -p /run/lttng && mount -t tmpfs qtrace-test /run/lttng && mount -t tmpfs qtrace-test /dev/shm"
                            + " && touch '\(ready.path)' && exec sleep 3600"]
        holder.standardInput = FileHandle.nullDevice
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: ready.path) && holder.isRunning && Date() < deadline { usleep(10_000) }
        guard FileManager.default.fileExists(atPath: ready.path) else {
            close()
            throw XCTSkip("lttng cannot run isolated here: `unshare -m` + tmpfs mounts failed (needs root / CAP_SYS_ADMIN)")
        }
    }

    /// Ends the namespace: stops its holder (by PID). Daemons started in it must be stopped first.
    func close() {
        if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
        holder.waitUntilExit()
    }

    /// Runs a command in the namespace. LTTNG_HOME points into the test's scratch directory,
    /// so `lttng create` does not touch the machine's ~/.lttngrc.
    @discardableResult
    func run(_ argv: [String], environment: [String: String] = [:]) -> (status: Int32, output: String) {
        runCommand(prefix + argv, environment: ["LTTNG_HOME": TestPaths.lttngHome].merging(environment) { $1 })
    }
}

/// Whether a process is running (a zombie waiting for its parent is not).
func isAlive(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
        return false
    }
    return !stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
}

/// Skips the test when LTTng is not installed at all.
func requireLTTng() throws {
    for tool in ["lttng", "lttng-sessiond", "unshare", "nsenter"] where runCommand(["sh", "-c", "command -v \(tool)"]).status != 0 {
        throw XCTSkip("\(tool) is not installed (apt-get install lttng-tools liblttng-ust-dev util-linux)")
    }
}

/// What the tests compare between two recordings of the same program.
struct EventCensus: Equatable {
    var typeCounts: [EventType: Int] = [:]
    /// ENQUEUE count per queue label (queues named by QUEUE_CREATE / QUEUE_INFO).
    var itemsPerQueue: [String: Int] = [:]

    /// Types whose counts depend on timing or scheduling, not on the program: worker
    /// threads come and go, source handlers coalesce, I/O handlers see varying chunks, and
    /// all-apis exits without waiting for its last I/O channel's cleanup handler. The module
    /// map differs by backend (the LTTng shim maps liblttng-ust and its dependencies), and a
    /// blocking wait's site, and the frames of the stack above it (ASYNC_FRAME nodes), exist
    /// only when the wait really blocked.
    static let timingDependent: Set<EventType> = [.threadStart, .threadExit, .threadName, .sourceHandlerBegin,
                                                  .sourceHandlerEnd, .ioHandlerBegin, .ioHandlerEnd,
                                                  .ioCleanupBegin, .ioCleanupEnd, .module, .buildID, .site,
                                                  .asyncFrame]

    init(_ events: [Event]) {
        var labels: [UInt64: String] = [:]
        for e in events where e.type == .queueCreate || e.type == .queueInfo { labels[e.a] = e.string ?? "" }
        for e in events where !Self.timingDependent.contains(e.type) { typeCounts[e.type, default: 0] += 1 }
        for e in events where e.type == .enqueue { itemsPerQueue[labels[e.b] ?? "?", default: 0] += 1 }
    }
}

/// TCP ports on 127.0.0.1 that nothing listens on now (bound to port 0, then released), so a
/// test's relayd never meets the machine's (whose default ports are 5342-5344).
func freeLoopbackPorts(_ count: Int) -> [UInt16] {
    var sockets: [Int32] = [], ports: [UInt16] = []
    defer { sockets.forEach { close($0) } }
    for _ in 0..<count {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        sockets.append(fd)  // held until all are chosen: the ports differ
        ports.append(UInt16(bigEndian: address.sin_port))
    }
    return ports
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func isListening(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// An lttng-relayd on 127.0.0.1 with free control, data and live ports and its own output
/// directory, run in the foreground inside a private namespace (its run directory is the
/// namespace's /run/lttng) and stopped by PID.
final class TestRelayd {
    let process = Process()
    let controlPort: UInt16, dataPort: UInt16
    let outputDirectory: String

    init(namespace: PrivateLTTngNamespace, outputDirectory: String, log: String) throws {
        let ports = freeLoopbackPorts(3)
        (controlPort, dataPort) = (ports[0], ports[1])
        self.outputDirectory = outputDirectory
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // nsenter execs lttng-relayd: the Process's PID is the relayd's.
        process.arguments = namespace.prefix + [
            "lttng-relayd", "-C", "tcp://127.0.0.1:\(ports[0])", "-D", "tcp://127.0.0.1:\(ports[1])",
            "-L", "tcp://127.0.0.1:\(ports[2])", "-o", outputDirectory,
        ]
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                               "LTTNG_HOME": TestPaths.lttngHome]
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while !isListening(controlPort) && process.isRunning && Date() < deadline { usleep(20_000) }
        guard isListening(controlPort) else {
            stop()
            throw TestSetupError("lttng-relayd did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    var url: String { "net://127.0.0.1:\(controlPort):\(dataPort)" }

    /// SIGTERM (the relayd finishes writing what it received), SIGKILL after 10 s.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Runs `qtrace-fixtures ARGUMENTS` with the embedded shim preloaded, writing
/// DIR/embedded.qtrace (the reference the LTTng recordings are compared with); returns its path.
func recordEmbedded(_ arguments: [String], in dir: URL, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let path = dir.appendingPathComponent("embedded.qtrace").path
    let run = runCommand([TestPaths.fixtures] + arguments,
                         environment: ["LD_PRELOAD": try TestPaths.embeddedShim.get(), "QTRACE_OUTPUT": path])
    XCTAssertEqual(run.status, 0, run.output, file: file, line: line)
    return path
}

/// Records `qtrace-fixtures ARGUMENTS` through `LTTngSession` (what `qtrace record --backend
/// lttng` uses) with the session daemon of `namespace`, into DIR/lttng; returns the recording
/// and the program's output.
func recordThroughLTTngSession(_ arguments: [String], in dir: URL,
                               namespace: PrivateLTTngNamespace) throws -> (recording: LTTngRecording, output: String) {
    let lttngShim = try TestPaths.lttngShim.get()
    // The session's lttng commands inherit LTTNG_HOME: keep ~/.lttngrc out of it.
    setenv("LTTNG_HOME", TestPaths.lttngHome, 1)
    defer { unsetenv("LTTNG_HOME") }
    let session = try LTTngSession(traceDirectory: dir.appendingPathComponent("lttng").path, commandPrefix: namespace.prefix)
    var output = ""
    let recording = try session.record {
        let run = namespace.run(["env", "LD_PRELOAD=\(lttngShim)", TestPaths.fixtures] + arguments)
        output = run.output
        return run.status
    }
    return (recording, output)
}
