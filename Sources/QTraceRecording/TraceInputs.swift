// What a trace argument on the command line names: a .qtrace file (one process), or a
// directory holding an LTTng (CTF) trace: `qtrace record --backend lttng`'s TRACE.lttng, a
// session a user recorded with their own `lttng` commands, or an lttng-relayd's output
// (HOST/SESSION/... below it). Each traced process of a CTF trace is converted into a
// temporary .qtrace file (the conversion is lossless, docs/lttng.md), so every command
// reads one format; `removeTemporaryFiles()` deletes them.
import ArgumentParser
import Foundation
import QTraceCTF
import QTraceFormat
#if canImport(Glibc)
import Glibc
#endif

/// One traced process given on the command line.
public struct TraceInput {
    /// An embedded-format trace: the file given, or a temporary conversion.
    public var path: String
    /// What the user named (the file, or the trace directory).
    public var source: String
    /// The process (nil for a .qtrace file: its header has it).
    public var pid: Int32?
    /// The machine it ran on: the CTF trace's `env.hostname`, or this machine for a .qtrace file.
    public var host: String
}

public final class TraceInputs {
    public let processes: [TraceInput]
    private let temporaryDirectory: String?

    private init(processes: [TraceInput], temporaryDirectory: String?) {
        self.processes = processes
        self.temporaryDirectory = temporaryDirectory
    }

    deinit { removeTemporaryFiles() }

    /// The processes of every path, in order (errors are one line, exit 2).
    public static func open(_ paths: [String], command: String) throws -> TraceInputs {
        var processes: [TraceInput] = []
        var temporary: String?
        do {
            for path in paths {
                if let recording = recordingFiles(path) {
                    processes += recording.map { TraceInput(path: $0, source: $0, pid: pidInName($0), host: localHostName) }
                } else if isDirectory(path) {
                    let directory = try temporary ?? makeTemporaryDirectory(command: command)
                    temporary = directory
                    processes += try convertLTTng(path, into: directory, command: command)
                } else {
                    try explainDiscardedRing(path, command: command)
                    processes.append(TraceInput(path: path, source: path, pid: nil, host: localHostName))
                }
            }
        } catch {
            if let temporary { try? FileManager.default.removeItem(atPath: temporary) }
            throw error
        }
        return TraceInputs(processes: processes, temporaryDirectory: temporary)
    }

    /// The .qtrace files `path` stands for when it is not one trace file: a directory holding
    /// .qtrace files (a recording's folder), or a recording's main trace name that was never
    /// written (its program made no Dispatch call) while its children's TRACE.PID.qtrace were.
    /// Nil otherwise (one file, an LTTng directory, or nothing there: the reader says which).
    public static func recordingFiles(_ path: String) -> [String]? {
        let manager = FileManager.default
        if isDirectory(path) {
            guard let names = try? manager.contentsOfDirectory(atPath: path) else { return nil }
            let all = names.filter { $0.hasSuffix(".qtrace") && !isDirectory(path + "/" + $0) }
            // Flight-recorder snapshots are views of processes, not processes: they count only
            // in a folder that holds nothing else.
            let processes = all.filter { FlightRecorder.snapshotName($0) == nil }
            let traces = processes.isEmpty ? all : processes
            return traces.isEmpty ? nil : recordingOrder(traces).map { (path as NSString).appendingPathComponent($0) }
        }
        guard path.hasSuffix(".qtrace"), !manager.fileExists(atPath: path) else { return nil }
        // The files `record` names TRACE.PID.qtrace (TRACE.PID.N.qtrace after an exec).
        let children = RecordingFiles.siblingTraces(of: path)
        return children.isEmpty ? nil : recordingOrder(children)
    }

    /// A flight recording's trace that is gone (the ring is removed at a normal exit) while
    /// its snapshots are there: say so, rather than "not found".
    public static func explainDiscardedRing(_ path: String, command: String) throws {
        guard path.hasSuffix(".qtrace"), !FileManager.default.fileExists(atPath: path) else { return }
        let snapshots = FlightRecorder.snapshots(ofRecording: path)
        guard !snapshots.isEmpty else { return }
        let names = snapshots.prefix(3).joined(separator: ", ") + (snapshots.count > 3 ? ", ..." : "")
        throw fail(command, "no '\(path)': a flight-recorder ring is removed when its program ends (--ring-keep-on-exit keeps it); its snapshots are \(names)")
    }


    /// The PID of a child's TRACE.PID.qtrace or TRACE.PID.N.qtrace (an image after exec);
    /// nil for the main trace (its header has it).
    public static func pidInName(_ path: String) -> Int32? {
        let parts = URL(fileURLWithPath: path).lastPathComponent.split(separator: ".").dropLast()
        let numeric = parts.reversed().prefix { $0.allSatisfy(\.isNumber) }
        guard parts.count > numeric.count, (1...2).contains(numeric.count) else { return nil }
        return Int32(numeric.last!)
    }

    /// Names in the order `record` wrote them: shorter (the main trace) first, then by name,
    /// with PIDs compared as numbers.
    private static func recordingOrder(_ names: [String]) -> [String] {
        names.sorted { a, b in
            a.count != b.count ? a.count < b.count : a < b
        }
    }

    public func removeTemporaryFiles() {
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }

    /// The one process a command that reads a single trace works on: `pid` when given, else
    /// the only one (a trace directory with several processes needs --pid).
    public func single(pid: Int32?, command: String) throws -> TraceInput {
        if let pid {
            // A .qtrace file is one process: --pid only selects among a directory's.
            guard let match = processes.first(where: { $0.pid == pid || ($0.pid == nil && processes.count == 1) }) else {
                throw fail(command, "no process \(pid) in the trace (it has \(pidList))")
            }
            return match
        }
        guard processes.count == 1 else {
            // diff compares two runs: it takes a summary of the one process instead.
            let fix = command == "diff" ? "compare one process's summary (qtrace stats --json --pid PID TRACE > run.json)"
                                        : "choose one with --pid PID"
            throw fail(command, "the trace holds \(processes.count) processes (\(pidList)): \(fix)")
        }
        return processes[0]
    }

    private var pidList: String { "PIDs " + processes.map { $0.pid.map(String.init) ?? "?" }.joined(separator: ", ") }

    // MARK: LTTng directories

    /// Converts every qtrace process of the CTF trace under `path` into `directory`.
    private static func convertLTTng(_ path: String, into directory: String, command: String) throws -> [TraceInput] {
        let reader: CTFTraceReader
        do {
            reader = try CTFTraceReader(path: path)
        } catch CTFReadError.noTrace {
            throw fail(command, "'\(path)' is a directory without an LTTng (CTF) trace: give a .qtrace file or an LTTng trace directory")
        } catch CTFReadError.noQTraceEvents {
            throw fail(command, "'\(path)': the LTTng trace has no qtrace events: run the program with libqtrace-shim-lttng.so "
                + "preloaded in a session with `lttng enable-event -u 'qtrace:*'` and `lttng add-context -u -t vtid` "
                + "(or use qtrace record --backend lttng)")
        }
        do {
            let host = hostName(of: reader)
            // One pass over the CTF trace writes every process (a directory can hold several
            // given paths' worth: keep each path's files apart).
            let prefix = "\(directory)/\(UInt32.random(in: 0...UInt32.max))"
            let written = try reader.convertAll { _, pid, image in image > 1 ? "\(prefix)-\(pid).\(image).qtrace" : "\(prefix)-\(pid).qtrace" }
            guard !written.isEmpty else { throw fail(command, "'\(path)': the LTTng trace recorded no qtrace process") }
            return written.map { TraceInput(path: $0.path, source: path, pid: $0.process.pid, host: host) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(command, "cannot read the LTTng trace '\(path)': \(error)")
        }
    }

    /// The hostname LTTng wrote into the trace's environment (`env { hostname = "..."; }` in
    /// the CTF metadata, whose text is stored verbatim), or "".
    public static func hostName(of reader: CTFTraceReader) -> String {
        for directory in reader.traceDirectories {
            guard let data = FileManager.default.contents(atPath: directory + "/metadata") else { continue }
            let text = String(decoding: data, as: UTF8.self)
            guard let key = text.range(of: "hostname = \"") else { continue }
            let rest = text[key.upperBound...]
            if let end = rest.firstIndex(of: "\"") { return String(rest[..<end]) }
        }
        return ""
    }

    // MARK: Helpers

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// This machine's name (uname's nodename): a .qtrace file's processes ran here, or on a
    /// machine the file does not name.
    public static let localHostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }()

    private static func makeTemporaryDirectory(command: String) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("qtrace-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw fail(command, "cannot create a temporary directory for the converted trace: \(error)")
        }
        return path
    }
}
