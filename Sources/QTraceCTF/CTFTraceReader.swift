// Reading the `qtrace:*` events of an LTTng trace (CTF, docs/lttng.md) into the same `Event`s
// that `TraceFile` reads from the embedded format, through libbabeltrace2.
import Foundation
import QTraceFormat

public enum CTFReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No directory under the path holds a CTF `metadata` file.
    case noTrace(path: String)
    /// CTF traces are there, but none declares a `qtrace:*` event.
    case noQTraceEvents(path: String)
    /// The requested process recorded no qtrace event.
    case noSuchProcess(pid: Int32)
    case babeltrace(String)

    public var description: String {
        switch self {
        case .noTrace(let path): "\(path): no CTF trace (no directory with a 'metadata' file)"
        case .noQTraceEvents(let path): "\(path): the trace has no qtrace:* events (was the program run with libqtrace-shim-lttng.so and `lttng enable-event -u 'qtrace:*'`?)"
        case .noSuchProcess(let pid): "process \(pid) recorded no qtrace event in this trace"
        case .babeltrace(let message): "babeltrace2: \(message)"
        }
    }
}

/// One process's events and summary.
public struct CTFTrace: Sendable {
    public var process: CTFProcess
    /// In time order; times in ns since the process's qtrace:process event.
    public var events: [Event]
}

/// An LTTng trace directory (the session's output, or any directory below it) read for its
/// `qtrace:*` events. Other events (a user's own UST providers, kernel events) are skipped;
/// CTF traces whose metadata declares no qtrace event are not even opened.
public final class CTFTraceReader: Sendable {
    public let path: String
    /// The CTF traces read: directories holding a `metadata` that declares qtrace events.
    public let traceDirectories: [String]

    public init(path: String) throws {
        self.path = path
        let all = Self.ctfDirectories(under: path)
        guard !all.isEmpty else { throw CTFReadError.noTrace(path: path) }
        traceDirectories = all.filter(Self.declaresQTraceEvents)
        guard !traceDirectories.isEmpty else { throw CTFReadError.noQTraceEvents(path: path) }
    }

    /// Calls `body` with every event of one process in time order and returns that process's
    /// summary. `pid` nil: the first process that recorded (the traced program itself when
    /// `qtrace record` ran it; its children follow it).
    @discardableResult
    public func forEachEvent(pid: Int32? = nil, _ body: (Event) throws -> Void) throws -> CTFProcess {
        try withoutActuallyEscaping(body) { body in
            let collector = EventCollector(selection: pid.map { .pid($0) } ?? .first) { _, event in try body(event) }
            return try run(collector, pid: pid)
        }
    }

    /// One process's events and summary (see `forEachEvent`).
    public func read(pid: Int32? = nil) throws -> CTFTrace {
        var events: [Event] = []
        let process = try forEachEvent(pid: pid) { events.append($0) }
        return CTFTrace(process: process, events: events)
    }

    /// Every process of the trace, in order of their first event, in one pass.
    public func readAllProcesses() throws -> [CTFTrace] {
        var events: [Int32: [Event]] = [:]
        let collector = EventCollector(selection: .all) { pid, event in events[pid, default: []].append(event) }
        try BabeltraceGraph(directories: traceDirectories, consumer: collector).run()
        return collector.processes().map { CTFTrace(process: $0, events: events[$0.pid] ?? []) }
    }

    /// The summaries of every process, without keeping events.
    public func processes() throws -> [CTFProcess] {
        let collector = EventCollector(selection: .pid(-1)) { _, _ in }
        try BabeltraceGraph(directories: traceDirectories, consumer: collector).run()
        return collector.processes()
    }

    /// Writes one process's events as an embedded-format trace (docs/trace-format.md) that
    /// `TraceFile` and every qtrace command read: times are kept to the ns (tsc_hz = 1e9),
    /// thread names go into the chunk headers, and the header carries the process facts.
    /// `exitStatus` (as `qtrace record` stores it: 128+N for signal N) marks the file
    /// finalized by the recorder: do not pass the result to `TraceFinalizer`, whose TSC-based
    /// end pair does not fit LTTng's clock.
    @discardableResult
    public func convert(pid: Int32? = nil, to outputPath: String, exitStatus: Int32? = nil) throws -> CTFProcess {
        var writer: TraceWriter?
        func openWriter(_ header: TraceHeader) throws -> TraceWriter {
            if let writer { return writer }
            // The process's own init clock: dispatch_time_t deadlines convert against it.
            let created = try TraceWriter(path: outputPath, pid: header.pid, mainTid: header.mainTid,
                                          initMonoNs: header.initMonoNs)
            writer = created
            return created
        }
        let collector = EventCollector(selection: pid.map { .pid($0) } ?? .first) { pid, event in
            let output = try writer ?? openWriter(TraceHeader(pid: pid, mainTid: pid))
            try output.append(event)
            // A reused tid is a new thread (thread_seq restarts), as the shim would write it.
            if event.type == .threadExit { try output.endThread(event.tid) }
        }
        collector.processAnnounced = { header in _ = try openWriter(header) }
        collector.threadAnnounced = { header, tid, name in try openWriter(header).setThreadName(name, tid: tid) }
        let process = try run(collector, pid: pid)
        let output = try writer ?? openWriter(process.header)
        if let exitStatus {
            output.header.exitStatusRaw = TraceLayout.exitStatusPresent | UInt64(UInt32(bitPattern: exitStatus))
            output.header.flags.insert(.finalizedByRecorder)
        }
        try Self.finish(output, with: process)
        return process
    }

    /// Writes every process as an embedded-format trace (as `convert` does, without exit
    /// status) in ONE pass over the CTF trace: `outputPath(pid)` names each file, asked once per
    /// process. Returns the processes in order of their first event with the files written.
    @discardableResult
    public func convertAll(to outputPath: (Int32) -> String) throws -> [(process: CTFProcess, path: String)] {
        try withoutActuallyEscaping(outputPath) { outputPath in
            var writers: [Int32: (writer: TraceWriter, path: String)] = [:]
            func writer(_ header: TraceHeader) throws -> TraceWriter {
                if let existing = writers[header.pid] { return existing.writer }
                let path = outputPath(header.pid)
                let created = try TraceWriter(path: path, pid: header.pid, mainTid: header.mainTid, initMonoNs: header.initMonoNs)
                writers[header.pid] = (created, path)
                return created
            }
            let collector = EventCollector(selection: .all) { pid, event in
                let output = try writers[pid]?.writer ?? writer(TraceHeader(pid: pid, mainTid: pid))
                try output.append(event)
                if event.type == .threadExit { try output.endThread(event.tid) }
            }
            collector.processAnnounced = { header in _ = try writer(header) }
            collector.threadAnnounced = { header, tid, name in try writer(header).setThreadName(name, tid: tid) }
            try BabeltraceGraph(directories: traceDirectories, consumer: collector).run()
            return try collector.processes().map { process in
                let output = try writers[process.pid]?.writer ?? writer(process.header)
                try Self.finish(output, with: process)
                return (process, writers[process.pid]!.path)
            }
        }
    }

    // MARK: Internals

    private func run(_ collector: EventCollector, pid: Int32?) throws -> CTFProcess {
        try BabeltraceGraph(directories: traceDirectories, consumer: collector).run()
        let processes = collector.processes()
        guard let process = pid.map({ pid in processes.first { $0.pid == pid } }) ?? processes.first else {
            throw CTFReadError.noSuchProcess(pid: pid ?? 0)
        }
        return process
    }

    /// Copies the process facts into the writer's header (its own init clock pair stays:
    /// event times are already relative) and writes it.
    private static func finish(_ writer: TraceWriter, with process: CTFProcess) throws {
        let facts = process.header
        writer.header.pid = facts.pid
        writer.header.ppid = facts.ppid
        writer.header.ncpu = facts.ncpu
        writer.header.mainTid = facts.mainTid
        writer.header.mainQueue = facts.mainQueue
        writer.header.initRealtimeNs = facts.initRealtimeNs
        writer.header.droppedEvents = facts.droppedEvents
        writer.header.droppedEnqueue = facts.droppedEnqueue
        writer.header.droppedStart = facts.droppedStart
        writer.header.droppedEnd = facts.droppedEnd
        writer.header.executablePath = facts.executablePath
        writer.header.commandLine = facts.commandLine
        writer.processExited = facts.flags.contains(.finalizedByProcess)
        try writer.finish()
    }

    /// Directories at or below `path` that hold a CTF `metadata` file.
    static func ctfDirectories(under path: String) -> [String] {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [] }
        let root = URL(fileURLWithPath: path).standardizedFileURL.path
        var result: [String] = []
        if fm.fileExists(atPath: root + "/metadata") { result.append(root) }
        guard let walker = fm.enumerator(atPath: root) else { return result }
        for case let relative as String in walker where (relative as NSString).lastPathComponent == "metadata" {
            let directory = (root as NSString).appendingPathComponent((relative as NSString).deletingLastPathComponent)
            if directory != root { result.append(directory) }
        }
        return result.sorted()
    }

    /// Whether a CTF metadata file declares a `qtrace:` event (its TSDL text is stored
    /// verbatim, also inside LTTng's packetized metadata).
    static func declaresQTraceEvents(directory: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: directory + "/metadata") else { return false }
        return data.range(of: Data("\"qtrace:".utf8)) != nil
    }
}
