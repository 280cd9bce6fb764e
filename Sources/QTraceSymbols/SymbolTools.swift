// Where llvm-symbolizer, swift-demangle and llvm-nm are, and how they are run.
import Foundation

/// The external tools the symbolizer runs; nil when not found. Tests replace paths to simulate failures.
public struct SymbolTools: Sendable {
    public var symbolizer: URL?
    public var demangler: URL?
    public var nm: URL?

    public init(symbolizer: URL?, demangler: URL?, nm: URL?) {
        self.symbolizer = symbolizer
        self.demangler = demangler
        self.nm = nm
    }

    /// Looks each tool up next to the `swift` on PATH (symlinks resolved: the toolchain's own
    /// tools match its mangling), then on PATH, then in /opt/swift/usr/bin.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> SymbolTools {
        let searchPath = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let toolchainDirectory = find("swift", in: searchPath).map { $0.resolvingSymlinksInPath().deletingLastPathComponent() }
        func tool(_ name: String) -> URL? {
            if let directory = toolchainDirectory, let url = executable(directory.appendingPathComponent(name)) { return url }
            return find(name, in: searchPath) ?? executable(URL(fileURLWithPath: "/opt/swift/usr/bin/\(name)"))
        }
        return SymbolTools(symbolizer: tool("llvm-symbolizer"), demangler: tool("swift-demangle"), nm: tool("llvm-nm"))
    }

    private static func find(_ name: String, in searchPath: [String]) -> URL? {
        for directory in searchPath where !directory.isEmpty {
            if let url = executable(URL(fileURLWithPath: directory).appendingPathComponent(name)) { return url }
        }
        return nil
    }

    private static func executable(_ url: URL) -> URL? {
        FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }
}

/// Runs a tool to completion with stdin, stdout and stderr in temporary files: large batches
/// cannot deadlock on full pipes, and there is no reader thread to manage.
enum ToolRunner {
    struct Output {
        var exitStatus: Int32
        var stdout: Data
        var stderr: String

        /// The first line of stderr, for a problem report.
        var firstErrorLine: String {
            stderr.split(separator: "\n").first.map(String.init) ?? "exit status \(exitStatus)"
        }
    }

    static func run(_ tool: URL, _ arguments: [String], input: Data) throws -> Output {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("qtrace-symbols-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = ["in", "out", "err"].map { directory.appendingPathComponent($0) }
        try input.write(to: paths[0])
        for path in paths.dropFirst() { _ = FileManager.default.createFile(atPath: path.path, contents: nil) }
        let stdin = try FileHandle(forReadingFrom: paths[0])
        let stdout = try FileHandle(forWritingTo: paths[1])
        let stderr = try FileHandle(forWritingTo: paths[2])
        defer { for handle in [stdin, stdout, stderr] { try? handle.close() } }

        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()
        return Output(
            exitStatus: process.terminationStatus,
            stdout: try Data(contentsOf: paths[1]),
            stderr: String(decoding: try Data(contentsOf: paths[2]), as: UTF8.self))
    }
}
