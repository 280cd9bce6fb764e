// Reading the `qtrace:*` events of an LTTng trace (CTF, docs/lttng.md) into the same `Event`s
// that `TraceFile` reads from the embedded format: through the purpose-built decoder
// (FastCTFReader), or libbabeltrace2 when the metadata uses something it does not handle.
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
    /// A stream or metadata file that cannot be decoded (truncated, corrupt).
    case corrupt(String)
    /// The purpose-built decoder was required but the metadata uses something it does not handle.
    case unsupported(String)

    public var description: String {
        switch self {
        case .noTrace(let path): "\(path): no CTF trace (no directory with a 'metadata' file)"
        case .noQTraceEvents(let path): "\(path): the trace has no qtrace:* events (was the program run with libqtrace-shim-lttng.so and `lttng enable-event -u 'qtrace:*'`?)"
        case .noSuchProcess(let pid): "process \(pid) recorded no qtrace event in this trace"
        case .babeltrace(let message): "babeltrace2: \(message)"
        case .corrupt(let message): "CTF: \(message)"
        case .unsupported(let message): "CTF: not handled by the purpose-built decoder: \(message)"
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
    /// Which decoder reads the trace.
    public enum Decoder: String, Sendable {
        /// The purpose-built decoder, or libbabeltrace2 when the metadata uses a construct the
        /// purpose-built one does not handle.
        case automatic
        /// libbabeltrace2 (src.ctf.fs and flt.utils.muxer): the reference.
        case babeltrace
        /// The purpose-built decoder only (`CTFReadError.unsupported` when it cannot).
        case purposeBuilt = "purpose-built"
    }

    public let path: String
    /// The CTF traces read: directories holding a `metadata` that declares qtrace events.
    public let traceDirectories: [String]
    public let decoder: Decoder

    /// `.automatic` can be overridden with $QTRACE_CTF_DECODER (automatic, babeltrace,
    /// purpose-built): a way back to libbabeltrace2 for any qtrace command.
    public init(path: String, decoder: Decoder = .automatic) throws {
        self.path = path
        let override = ProcessInfo.processInfo.environment["QTRACE_CTF_DECODER"].flatMap(Decoder.init(rawValue:))
        self.decoder = decoder == .automatic ? override ?? .automatic : decoder
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

    /// Every process of the trace (an exec'd program being a process of its own), in order of
    /// their first event, in one pass.
    public func readAllProcesses() throws -> [CTFTrace] {
        var events: [Int: [Event]] = [:]
        let collector = EventCollector(selection: .all) { index, event in events[index, default: []].append(event) }
        try decode(into: collector)
        return collector.processes().enumerated().map { CTFTrace(process: $1, events: events[$0] ?? []) }
    }

    /// The summaries of every process, without keeping events.
    public func processes() throws -> [CTFProcess] {
        let collector = EventCollector(selection: .pid(-1)) { _, _ in }
        try decode(into: collector)
        return collector.processes()
    }

    /// Writes every process as an embedded-format trace (docs/trace-format.md) that
    /// `TraceFile` and every qtrace command read, in ONE pass over the CTF trace: times are
    /// kept to the ns (tsc_hz = 1e9), thread names go into the chunk headers, and the header
    /// carries the process facts. `outputPath(number, pid, image)` names each file, asked once
    /// per process: its number (index in the result: 0 is the first process that recorded),
    /// pid, and image (2, 3... for the programs a process exec'd). `exitStatus(number)`, asked
    /// at the end for each process by its number (index in the result), is stored as
    /// `qtrace record` stores it (128+N for signal N) and marks the file finalized by the
    /// recorder: do not pass such a file to `TraceFinalizer`, whose TSC-based end pair does
    /// not fit LTTng's clock. Returns the processes in order of their first event.
    @discardableResult
    public func convertAll(to outputPath: (_ number: Int, _ pid: Int32, _ image: Int) -> String,
                           exitStatus: ([CTFProcess], Int) -> Int32? = { _, _ in nil }) throws -> [(process: CTFProcess, path: String)] {
        try withoutActuallyEscaping(outputPath) { outputPath in
            var writers: [Int: (writer: TraceWriter, path: String)] = [:]
            // The collector's closures reach the collector (for a process's pid and image):
            // the cycle is broken on the way out, or `outputPath` would escape.
            var collector: EventCollector!
            defer { collector = nil }
            func writer(_ index: Int, _ header: TraceHeader) throws -> TraceWriter {
                if let existing = writers[index] { return existing.writer }
                let path = outputPath(index, header.pid, collector.image(of: index))
                // The process's own init clock: dispatch_time_t deadlines convert against it.
                let created = try TraceWriter(path: path, pid: header.pid, mainTid: header.mainTid, initMonoNs: header.initMonoNs)
                writers[index] = (created, path)
                return created
            }
            collector = EventCollector(selection: .all) { index, event in
                let output = try writers[index]?.writer ?? writer(index, collector.header(of: index))
                try output.append(event)
                // A reused tid is a new thread (thread_seq restarts), as the shim would write it.
                if event.type == .threadExit { try output.endThread(event.tid) }
            }
            collector.processAnnounced = { index, header in _ = try writer(index, header) }
            collector.threadAnnounced = { index, header, tid, name in try writer(index, header).setThreadName(name, tid: tid) }
            try decode(into: collector)
            let processes = collector.processes()
            return try processes.enumerated().map { index, process in
                let output = try writers[index]?.writer ?? writer(index, process.header)
                if let status = exitStatus(processes, index) {
                    output.header.exitStatusRaw = TraceLayout.exitStatusPresent | UInt64(UInt32(bitPattern: status))
                    output.header.flags.insert(.finalizedByRecorder)
                }
                try Self.finish(output, with: process)
                return (process, writers[index]!.path)
            }
        }
    }

    // MARK: Internals

    private func run(_ collector: EventCollector, pid: Int32?) throws -> CTFProcess {
        try decode(into: collector)
        let processes = collector.processes()
        guard let process = pid.map({ pid in processes.first { $0.pid == pid } }) ?? processes.first else {
            throw CTFReadError.noSuchProcess(pid: pid ?? 0)
        }
        return process
    }

    /// Feeds every event to `collector` through the chosen decoder. The purpose-built one is
    /// chosen (or refused) before any event is delivered, so a fallback never delivers twice.
    private func decode(into collector: EventCollector) throws {
        if decoder != .babeltrace, let fast = try purposeBuiltReader() {
            try fast.run(collector)
        } else {
            try BabeltraceGraph(directories: traceDirectories, consumer: collector).run()
        }
    }

    /// The purpose-built reader, or nil when it does not handle this trace's metadata.
    private func purposeBuiltReader() throws -> FastCTFReader? {
        do {
            return try FastCTFReader(directories: traceDirectories)
        } catch let unsupported as CTFUnsupported {
            if decoder == .purposeBuilt { throw CTFReadError.unsupported(unsupported.description) }
            return nil
        }
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
