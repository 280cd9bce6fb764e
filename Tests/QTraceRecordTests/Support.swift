// Shared helpers for the end-to-end tests: locating the built programs and the shim, running
// programs with and without tracing, and summarising traces.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

enum Paths {
    /// The build products directory (the test bundle lives there).
    static let bin: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("qtrace").path),
              dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var qtrace: String { bin.appendingPathComponent("qtrace").path }
    static var fixtures: String { bin.appendingPathComponent("qtrace-fixtures").path }
    static var samples: String { bin.appendingPathComponent("qtrace-samples").path }
    static var linkedApp: String { bin.appendingPathComponent("qtrace-linked-app").path }

    /// The preloadable shim: $QTRACE_SHIM, the one `make` put beside the binaries, or one built
    /// here with cc from the sources (so `swift test` alone works).
    static let shim: String = {
        if let env = ProcessInfo.processInfo.environment["QTRACE_SHIM"], FileManager.default.fileExists(atPath: env) {
            return env
        }
        let beside = bin.appendingPathComponent("libqtrace-shim.so").path
        if FileManager.default.fileExists(atPath: beside) { return beside }
        let src = repo.appendingPathComponent("Sources/CQTraceShim")
        let out = beside
        // The recorder (recorder*.c) and the interposer (shim_*.c, shim_*.S), as the Makefile builds them.
        let sources = ((try? FileManager.default.contentsOfDirectory(atPath: src.path)) ?? [])
            .filter { ($0.hasPrefix("shim_") && $0.hasSuffix(".S")) || (($0.hasPrefix("shim_") || $0.hasPrefix("recorder")) && $0.hasSuffix(".c")) }.sorted()
            .map { src.appendingPathComponent($0).path }
        let result = runProgram(["/usr/bin/env", "cc", "-O2", "-fPIC", "-shared", "-DQTRACE_PRELOAD=1",
                          "-I", src.appendingPathComponent("include").path]
                          + sources + ["-o", out, "-ldl", "-lpthread"])
        precondition(result.status == 0, "building the shim failed: \(result.stderr)")
        return out
    }()

    /// Every test's files live under this folder, removed when a test class finishes.
    static let tempRoot = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-tests-\(getpid())")

    static func removeTempRoot() { try? FileManager.default.removeItem(at: tempRoot) }

    static func tempDir(_ name: String) -> URL {
        let dir = tempRoot.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: dir)
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program to completion, capturing its output. `timeout` kills it (SIGKILL) if needed.
@discardableResult
func runProgram(_ argv: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: argv[0])
    process.arguments = Array(argv.dropFirst())
    var env = ProcessInfo.processInfo.environment
    for key in ["LD_PRELOAD", "QTRACE_OUTPUT", "QTRACE_ROOT_PPID"] { env.removeValue(forKey: key) }
    env.merge(environment) { $1 }
    process.environment = env
    // Files rather than pipes: nothing to drain concurrently, and a killed program's partial
    // output is still there.
    let dir = FileManager.default.temporaryDirectory
    let outURL = dir.appendingPathComponent("qtrace-run-\(UUID().uuidString).out")
    let errURL = dir.appendingPathComponent("qtrace-run-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: outURL); try? FileManager.default.removeItem(at: errURL) }
    guard let outHandle = try? FileHandle(forWritingTo: outURL), let errHandle = try? FileHandle(forWritingTo: errURL) else {
        return RunResult(status: -1, stdout: "", stderr: "cannot create output files")
    }
    process.standardOutput = outHandle
    process.standardError = errHandle
    process.standardInput = FileHandle.nullDevice
    do { try process.run() } catch { return RunResult(status: -1, stdout: "", stderr: "\(error)") }
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? outHandle.close()
    try? errHandle.close()
    let stdoutData = (try? Data(contentsOf: outURL)) ?? Data()
    let stderrData = (try? Data(contentsOf: errURL)) ?? Data()
    let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    return RunResult(status: status, stdout: String(decoding: stdoutData, as: UTF8.self),
                     stderr: String(decoding: stderrData, as: UTF8.self))
}

/// Builds the C program `source` (a path under the repo) with the toolchain's clang, Blocks
/// and libdispatch into `dir`; returns the executable's path.
func buildCProgram(_ source: String, in dir: URL, extraFlags: [String] = [], file: StaticString = #filePath,
                   line: UInt = #line) -> String {
    let exe = dir.appendingPathComponent(URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent).path
    let toolchain = "/opt/swift/usr"
    let build = runProgram(["\(toolchain)/bin/clang", "-fblocks"] + extraFlags + ["-I\(toolchain)/lib/swift",
                            "-L\(toolchain)/lib/swift/linux", "-Wl,-rpath,\(toolchain)/lib/swift/linux",
                            Paths.repo.appendingPathComponent(source).path, "-ldispatch", "-lBlocksRuntime", "-o", exe])
    XCTAssertEqual(build.status, 0, build.stderr, file: file, line: line)
    return exe
}

/// Line numbers of the `SITE: name` markers in a source file of the repository.
func sourceMarkers(in source: String) throws -> [String: Int] {
    let text = try String(contentsOf: Paths.repo.appendingPathComponent(source), encoding: .utf8)
    var lines: [String: Int] = [:]
    for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        guard let r = line.range(of: "SITE: ") else { continue }
        lines[String(line[r.upperBound...]).trimmingCharacters(in: .whitespaces)] = n + 1
    }
    return lines
}

/// Records `argv` with `qtrace record` into `dir/name.qtrace`.
/// `timeout` only guards against a hang: a loaded machine may need several times the usual.
func record(_ argv: [String], in dir: URL, name: String = "trace", extraArgs: [String] = [],
            environment: [String: String] = [:], timeout: TimeInterval = 120) -> (RunResult, String) {
    let path = dir.appendingPathComponent("\(name).qtrace").path
    let result = runProgram([Paths.qtrace, "record", "--no-report", "-o", path] + extraArgs + ["--"] + argv,
                     environment: ["QTRACE_SHIM": Paths.shim].merging(environment) { $1 }, timeout: timeout)
    return (result, path)
}

/// What the tests assert about a trace.
struct TraceSummary {
    var events: [Event] = []
    var counts: [EventType: Int] = [:]
    var labels: [UInt64: String] = [:]      // queue address -> label
    var header: TraceHeader

    init(path: String) throws {
        let trace = try TraceFile(path: path)
        header = trace.header
        events = trace.readAllEvents()
        for e in events {
            counts[e.type, default: 0] += 1
            if e.type == .queueCreate || e.type == .queueInfo { labels[e.a] = e.string ?? "" }
        }
    }

    func count(_ type: EventType) -> Int { counts[type] ?? 0 }

    func queue(_ label: String) -> UInt64? { labels.first { $0.value == label }?.key }

    func enqueues(on label: String) -> [Event] {
        guard let q = queue(label) else { return [] }
        return events.filter { $0.type == .enqueue && $0.b == q }
    }

    /// Per item id: (enqueue, start, end) events.
    func items() -> [UInt64: (enqueue: Event?, start: Event?, end: Event?)] {
        var map: [UInt64: (enqueue: Event?, start: Event?, end: Event?)] = [:]
        for e in events {
            switch e.type {
            case .enqueue: map[e.a, default: (nil, nil, nil)].enqueue = e
            case .start: map[e.a, default: (nil, nil, nil)].start = e
            case .end: map[e.a, default: (nil, nil, nil)].end = e
            default: break
            }
        }
        return map
    }
}

/// A header counter by offset (docs/trace-format.md), read straight from the file.
func headerU64(_ path: String, offset: Int) -> UInt64 {
    guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
    defer { try? handle.close() }
    try? handle.seek(toOffset: UInt64(offset))
    let data = handle.readData(ofLength: 8)
    return data.count == 8 ? data.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } : 0
}

/// Starts `argv` as the leader of a new process group (stdout to `stdoutPath`) and returns its
/// pid, which is also the group id.
func spawnInNewProcessGroup(_ argv: [String], environment: [String: String], stdoutPath: String) throws -> pid_t {
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    posix_spawnattr_setpgroup(&attr, 0)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    var env = ProcessInfo.processInfo.environment
    for key in ["LD_PRELOAD", "QTRACE_OUTPUT", "QTRACE_ROOT_PPID"] { env.removeValue(forKey: key) }
    env.merge(environment) { $1 }
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (cArgs + cEnv).forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, argv[0], &actions, &attr, cArgs, cEnv)
    guard rc == 0 else { throw NSError(domain: "spawn", code: Int(rc)) }
    return pid
}

/// `qtrace stats --json TRACE` with its own symbol cache, and `--focus FOCUS` when given (""
/// focuses on nothing: every frame counts as the program's): the summary, and what it wrote on
/// standard error.
func statsSummary(_ trace: String, cache: URL, focus: String? = nil, file: StaticString = #filePath,
                  line: UInt = #line) throws -> (summary: AnalysisSummary, stderr: String) {
    var argv = [Paths.qtrace, "stats", "--json", trace]
    if let focus { argv += ["--focus", focus] }
    let result = runProgram(argv, environment: ["XDG_CACHE_HOME": cache.path])
    XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    return (try AnalysisSummary.decode(Data(result.stdout.utf8)), result.stderr)
}
