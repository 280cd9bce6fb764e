// `qtrace dump`: the raw events of a trace as text, one line each, for eyes and for grep.
import ArgumentParser
import QTraceFormat
import QTraceRecording
#if canImport(Glibc)
import Glibc
#endif

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a trace's header and its events in time order, one line per event.",
        discussion: """
        The header summary comes first, each of its lines starting with '#'. Then one line \
        per event: the time since the start of the trace in microseconds, the id of the \
        thread that recorded it, the event type and its fields by name:

            12.345   4242 enqueue id=12 queue=0x55d0c2a0 kind=async flags=barrier
            13.002   4242 queue_create queue=0x55d0c2b0 target=default label="com.x"

        Labels are quoted, with control characters escaped. Pointers are object \
        addresses; id is the work-item id shared by enqueue, start and end.

        A trace that cannot be read (missing, not a trace, a damaged header) and a write error \
        on stdout (a full disk, > /dev/full) end the dump with one line on stderr and exit \
        status 2, as for the other commands.

        Event types (for --type): \(EventType.allCases.map(\.name).joined(separator: ", ")).
        """
    )

    @Argument(help: ArgumentHelp("The trace file to read (written by 'qtrace record').", valueName: "trace"))
    var trace: String

    @Option(help: ArgumentHelp("Print at most N events (counted after --type and --tid).", valueName: "N"))
    var limit: Int?

    @Option(name: .customLong("type"),
            help: ArgumentHelp("Only events of this type, e.g. enqueue or queue_create; repeat the option or separate types with commas.",
                               valueName: "type"))
    var types: [String] = []

    @Option(name: .customLong("tid"),
            help: ArgumentHelp("Only events recorded by this thread id; repeat the option for several threads.", valueName: "tid"))
    var tids: [Int32] = []

    func run() throws {
        let filter = try eventFilter()
        if let limit, limit < 0 { throw Self.failure("--limit must be 0 or more (got \(limit))", code: .validationFailure) }
        let file: TraceFile
        do {
            file = try TraceFile(path: trace)
        } catch {
            // Exit 2 and the same line as stats, check and the others for an unusable trace.
            throw fail("dump", "cannot read trace '\(trace)': \(error)")
        }
        // Standard output: a write error (a full disk, /dev/full) is one line and exit 2.
        try writeOutputFile("-", command: "dump") { output in
            try printSummary(file, to: output)
            try printEvents(file, filter: filter, to: output)
        }
    }

    // MARK: Filtering

    private struct EventFilter {
        var types: Set<EventType>?
        var tids: Set<Int32>?

        func accepts(_ event: Event) -> Bool {
            (types?.contains(event.type) ?? true) && (tids?.contains(event.tid) ?? true)
        }
    }

    private func eventFilter() throws -> EventFilter {
        var selected: Set<EventType> = []
        for name in types.flatMap({ $0.split(separator: ",") }) {
            let trimmed = name.trimmedOfSpaces()
            guard let type = EventType(name: trimmed) else {
                throw Self.failure("unknown event type '\(trimmed)' for --type (see qtrace dump --help for the list)",
                                   code: .validationFailure)
            }
            selected.insert(type)
        }
        return EventFilter(types: types.isEmpty ? nil : selected, tids: tids.isEmpty ? nil : Set(tids))
    }

    // MARK: Output

    private func printSummary(_ file: TraceFile, to output: OutputFile) throws {
        let header = file.header
        try output.line("# trace \(file.path): format \(header.version), \(Self.bytes(file.fileSize)), "
            + "\(file.chunkCount) chunks of \(Self.bytes(Int(header.chunkSize))) (\(header.chunksAllocated) allocated, \(file.unwrittenChunkCount) unwritten)")
        try output.line("# process \(header.pid) (parent \(header.ppid)): \(TraceText.quoted(header.executablePath))")
        try output.line("# command line: \(TraceText.quoted(header.commandLine))")
        try output.line("# started \(Self.wallClock(header.initRealtimeNs)), \(header.ncpu) CPUs, "
            + "duration \(TraceText.microseconds(file.endTime)) us")
        try output.line("# main thread \(header.mainTid), main queue \(TraceText.hex(header.mainQueue))")
        try output.line("# clock: TSC at \(Self.gigahertz(file.clock.ticksPerSecond)) GHz (\(file.clock.method.rawValue), "
            + "\(file.clock.pairCount) calibration pairs), shim overhead \(header.shimOverheadNs) ns/event")
        try output.line("# end: \(Self.ending(header))")
        try output.line("# \(file.eventCount) events in \(file.threads.count) threads, \(header.droppedEvents) dropped, "
            + "\(file.unknownRecordCount) unknown records skipped")
        for thread in file.threads {
            let name = thread.name.map { " " + TraceText.quoted($0) } ?? ""
            try output.line("# thread \(thread.tid)\(name): \(thread.eventCount) events, "
                + "\(TraceText.microseconds(thread.firstTime))..\(TraceText.microseconds(thread.lastTime)) us, \(thread.chunkCount) chunks")
        }
        for warning in file.warnings { try output.line("# warning: \(warning)") }
    }

    private func printEvents(_ file: TraceFile, filter: EventFilter, to output: OutputFile) throws {
        struct LimitReached: Error {}
        let limit = self.limit ?? .max
        guard limit > 0 else { return }
        var printed = 0
        do {
            try file.forEachEvent { event in
                guard filter.accepts(event) else { return }
                try output.line(Self.pad(TraceText.microseconds(event.time), 12) + " " + Self.pad(String(event.tid), 7)
                    + " " + event.type.name + Self.fields(event))
                printed += 1
                if printed == limit { throw LimitReached() }
            }
        } catch let error as OutputFileError {
            throw error
        } catch {
            // The limit, or damage the reader already reported in the summary's warnings.
        }
    }

    private static func fields(_ event: Event) -> String {
        let fields = event.fieldsDescription
        return fields.isEmpty ? "" : " " + fields
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    private static func ending(_ header: TraceHeader) -> String {
        var parts: [String] = []
        if header.flags.contains(.replacedByExec) {
            parts.append("the process replaced its image with exec() (the trace ends there)")
        } else if header.flags.contains(.finalizedByProcess) {
            parts.append("the process finalized the trace at exit")
        } else {
            parts.append("the process did not reach its exit handler (killed, crashed or still running)")
        }
        if header.flags.contains(.finalizedByRecorder) { parts.append("finalized by qtrace record") }
        if let status = header.exitStatus {
            parts.append(status > 128 && status < 128 + 65 ? "exit status \(status) (signal \(status - 128))" : "exit status \(status)")
        }
        return parts.joined(separator: "; ")
    }

    private static func bytes(_ count: Int) -> String {
        if count >= 1 << 20 { return "\(count / (1 << 20)).\(count % (1 << 20) * 10 / (1 << 20)) MiB" }
        if count >= 1 << 10 { return "\(count / (1 << 10)) KiB" }
        return "\(count) B"
    }

    private static func gigahertz(_ ticksPerSecond: Double) -> String {
        let milli = Int((ticksPerSecond / 1e6).rounded())
        let fraction = String(milli % 1000)
        return "\(milli / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// CLOCK_REALTIME ns as a UTC date.
    private static func wallClock(_ ns: UInt64) -> String {
        var seconds = time_t(ns / 1_000_000_000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "at \(ns) ns" }
        var text = [CChar](repeating: 0, count: 64)
        let length = strftime(&text, text.count, "%Y-%m-%d %H:%M:%S", &parts)
        let millis = String(ns / 1_000_000 % 1000)
        let date = String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return date + "." + String(repeating: "0", count: 3 - millis.count) + millis + " UTC"
    }

    /// Prints `qtrace: error: message` and returns the exit to throw.
    private static func failure(_ message: String, code: ExitCode) -> ExitCode {
        writeStderr("qtrace: error: \(message)\n")
        return code
    }
}

extension OutputFile {
    /// One line of dump output (OutputFile buffers: millions of lines are not millions of writes).
    fileprivate func line(_ text: String) throws {
        try write(text)
        try write("\n")
    }
}

extension Substring {
    fileprivate func trimmedOfSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
