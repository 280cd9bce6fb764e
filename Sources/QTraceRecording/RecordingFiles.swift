// The files of a recording (TRACE.qtrace, TRACE.PID.qtrace per other process, TRACE.html) and
// where the recorder's shim is found.
import ArgumentParser
import Foundation
import QTraceFormat
#if canImport(Glibc)
import Glibc
#endif

/// Names and finds the files `qtrace record` writes.
public enum RecordingFiles {
    public static func defaultTracePath(for program: String) -> String {
        let name = URL(fileURLWithPath: program).lastPathComponent
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return "qtrace-\(name)-\(formatter.string(from: Date())).qtrace"
    }

    public static func reportPath(for tracePath: String) -> String { traceStem(tracePath) + ".html" }

    /// Removes a previous trace (and its per-process siblings) so stale files are not mistaken
    /// for this run's.
    public static func prepareOutput(_ path: String) throws {
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: dir.isEmpty ? "." : dir) else {
            throw ValidationError("cannot write the trace: directory '\(dir)' is not writable (choose another with -o)")
        }
        for old in [path] + siblingTraces(of: path) + FlightRecorder.snapshots(ofRecording: path) {
            try? FileManager.default.removeItem(atPath: old)
        }
    }

    /// The traces of this run: the main one and one per other process (TRACE.PID.qtrace, and
    /// TRACE.PID.N.qtrace for a later image of a process that exec'd).
    public static func collectTraces(mainPath: String) -> [String] {
        var result: [String] = []
        if FileManager.default.fileExists(atPath: mainPath) { result.append(mainPath) }
        return result + siblingTraces(of: mainPath)
    }

    /// The trace of the program's last image, the one whose exit status qtrace saw: TRACE.qtrace,
    /// or TRACE.PID.N.qtrace with the highest N when the program exec'd another Dispatch program.
    public static func lastImage(of pid: pid_t, mainPath: String, among traces: [String]) -> String {
        // The siblings are in the main trace's directory: their file names tell them apart.
        let name = URL(fileURLWithPath: mainPath).lastPathComponent
        let prefix = "\(traceStem(name)).\(pid)."
        let images = traces.compactMap { path -> (Int, String)? in
            let file = URL(fileURLWithPath: path).lastPathComponent
            guard file.hasPrefix(prefix), file.hasSuffix(".qtrace"),
                  let image = Int(file.dropFirst(prefix.count).dropLast(7)) else { return nil }
            return (image, path)
        }
        return images.max { $0.0 < $1.0 }?.1 ?? mainPath
    }

    public static func siblingTraces(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        let base = traceStem(url.lastPathComponent)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? []
        return names.filter { name in
            guard name.hasPrefix(base + "."), name.hasSuffix(".qtrace") else { return false }
            let middle = name.dropFirst(base.count + 1).dropLast(7)
            // PID, or PID.N for the Nth image of a process that exec'd a Dispatch program again.
            let parts = middle.split(separator: ".", omittingEmptySubsequences: false)
            return (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        }.sorted().map { (dir.isEmpty ? "" : dir + "/") + $0 }
    }

    /// Whether the trace's directory has less free space than a header and one chunk: the
    /// shim then removes the file it could not start (docs/outputs.md).
    public static func hasNoRoomForATrace(_ tracePath: String) -> Bool {
        let dir = URL(fileURLWithPath: tracePath).deletingLastPathComponent().path
        var info = statvfs()
        guard statvfs(dir.isEmpty ? "." : dir, &info) == 0 else { return false }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize) < UInt64(TraceLayout.headerSize + TraceLayout.defaultChunkSize)
    }
}

/// A trace's path without its `.qtrace`: what the files beside it are named after
/// (TRACE.html, TRACE.PID.qtrace, TRACE.snapshot-N.qtrace, TRACE.lttng, ...).
public func traceStem(_ path: String) -> String {
    path.hasSuffix(".qtrace") ? String(path.dropLast(7)) : path
}

/// One line on stderr.
public func printErr(_ message: String) { writeStderr(message + "\n") }

/// Finds a shim library: the path in an environment variable, beside the qtrace executable,
/// or in ../lib/qtrace.
public enum ShimLocator {
    public static let fileName = "libqtrace-shim.so"

    /// The embedded recorder's shim.
    public static func find() throws -> String {
        try find(fileName: fileName, variable: "QTRACE_SHIM", buildHint: "build it with `make build`")
    }

    public static func find(fileName: String, variable: String, buildHint: String) throws -> String {
        if let explicit = ProcessInfo.processInfo.environment[variable], !explicit.isEmpty {
            guard FileManager.default.fileExists(atPath: explicit) else {
                throw ValidationError("\(variable)=\(explicit) does not exist")
            }
            return URL(fileURLWithPath: explicit).standardizedFileURL.path
        }
        let exeDir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for candidate in [exeDir.appendingPathComponent(fileName), exeDir.appendingPathComponent("../lib/qtrace/\(fileName)")]
        where FileManager.default.fileExists(atPath: candidate.path) {
            return candidate.standardizedFileURL.path
        }
        throw ValidationError("\(fileName) not found next to qtrace: \(buildHint) (or set \(variable)=/path/to/\(fileName))")
    }

    /// LD_PRELOAD with `shim` first, keeping what the user had preloaded.
    public static func preload(_ shim: String, before existing: String?) -> String {
        [shim, existing].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
    }
}
