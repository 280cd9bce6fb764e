// The versioned JSON summary of `qtrace stats --json` (docs/summary-schema.md).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import QTraceFormat

public struct AnalysisSummary: Sendable, Codable {
    /// Bumped on incompatible changes; readers check the part before the slash.
    /// 1.1 added `statistics.sites`, `statistics.waitSites`, `statistics.tasks` and finding
    /// objects of kind `site`; 1.2 added `queues[].name`, `queues[].runningAtEndLongestNs`,
    /// `mainThread.mainQueueItems` and the rule `item.running-at-end` (docs/summary-schema.md).
    /// 1.3 added `sites[].asyncStack`, `tasks.runtimeTasks`, `tasks.top[].entry/asyncStack`
    /// and the rules `swift.blocking-in-async`, `swift.pool-starvation`, `swift.long-job`,
    /// `swift.actor-contention`, `swift.continuation-never-resumed`.
    /// 1.4 added `findingGroups` and `waitSites[].stack` (docs/summary-schema.md).
    public static let schemaVersion = "qtrace-summary/1.4"

    public var schema: String
    public var generator: String
    public var trace: TraceSummary
    public var findingCounts: FindingCounts
    public var statistics: TraceStatistics
    public var findings: [Finding]
    /// The findings as `qtrace stats` lists them: one rule on one code site or queue label is
    /// one group (absent in summaries before 1.4).
    public var findingGroups: [FindingGroup]?

    public init(result: AnalysisResult, tracePath: String?, generator: String) {
        schema = Self.schemaVersion
        self.generator = generator
        trace = TraceSummary(model: result.model, path: tracePath)
        findingCounts = FindingCounts(result.findings)
        statistics = result.statistics
        findings = result.findings
        findingGroups = FindingGrouping.groups([(result.model.info.executable, result.model.info.pid, result.findings)])
    }

    /// Pretty, key-sorted JSON: the same trace always gives the same bytes.
    public func jsonData() throws -> Data {
        try Self.encoder().encode(self)
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `jsonData()`'s bytes, handed to `write` in pieces: each queue's object is encoded on its
    /// own. A summary of 900k queues is 1.7 GB of JSON, and JSONEncoder held 8.3 GB to encode
    /// it whole. The rest of the summary is encoded around one placeholder queue, whose object
    /// is replaced by the queues' objects, indented as JSONEncoder indents them there.
    public func writeJSON(_ write: (Data) throws -> Void) throws {
        let queues = statistics.queues
        guard var placeholder = queues.first, queues.count > 1 else { return try write(jsonData()) }
        // A queue no trace has (index Int.min): where the queues go in the shell's text.
        placeholder.queue = Int.min
        var shell = self
        shell.statistics.queues = [placeholder]
        let encoder = Self.encoder()
        let text = try encoder.encode(shell)
        guard let span = Self.placeholderSpan(in: text), span.indent >= 4, span.indent % 2 == 0 else { return try write(jsonData()) }
        // Queues go through the encoder a thousand at a time (one call per queue costs twice
        // the whole encoding), as an array nested in as many objects as the summary nests it:
        // the encoder indents its elements as it does there, and they are copied out whole.
        let depth = span.indent / 2 - 1
        for chunkStart in stride(from: 0, to: queues.count, by: 1024) {
            var nested: any Encodable = Array(queues[chunkStart..<min(chunkStart + 1024, queues.count)])
            for _ in 0..<depth { nested = Nest(inner: nested) }
            let wrapped = try encoder.encode(nested)
            guard let elements = wrapped.withUnsafeBytes({ Self.arrayElements(in: $0) }) else {
                // Not the layout this relies on (another JSONEncoder): whole, if nothing is out yet.
                if chunkStart == 0 { return try write(jsonData()) }
                throw SummaryError.unexpectedEncoding
            }
            if chunkStart == 0 { try write(text[text.startIndex..<span.start]) } else { try write(Data(",\n".utf8)) }
            try write(wrapped[(wrapped.startIndex + elements.lowerBound)..<(wrapped.startIndex + elements.upperBound)])
        }
        try write(text[span.end...])
    }

    /// The placeholder queue's object in the encoded shell: from the start of its `{` line to
    /// just after its `}`, and the `{`'s indentation.
    static func placeholderSpan(in data: Data) -> (start: Int, end: Int, indent: Int)? {
        let text = [UInt8](data)[...]
        guard let found = firstIndex(of: Array("\"queue\" : \(Int.min)".utf8), in: text, from: 0) else { return nil }
        // The marker's line is indented one level (2 spaces) deeper than the object's braces.
        let markerLine = (text[..<found].lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
        let indent = found - markerLine - 2
        guard indent >= 0 else { return nil }
        // Whole lines: a newline, exactly `indent` spaces, the brace.
        let spaces = [UInt8](repeating: UInt8(ascii: " "), count: indent)
        let open = [UInt8(ascii: "\n")] + spaces + Array("{\n".utf8)
        let close = [UInt8(ascii: "\n")] + spaces + [UInt8(ascii: "}")]
        guard let start = lastIndex(of: open, in: text, endingBy: markerLine),
              let end = firstIndex(of: close, in: text, from: found) else { return nil }
        return (data.startIndex + start + 1, data.startIndex + end + close.count, indent)
    }

    /// The elements of the only array in `text` (nested objects around it): from the line after
    /// its `[` to the end of its last element.
    static func arrayElements(in text: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let open = text.firstIndex(of: UInt8(ascii: "[")), open + 1 < text.count, text[open + 1] == UInt8(ascii: "\n"),
              let close = text.lastIndex(of: UInt8(ascii: "]")),
              let lastLine = text[..<close].lastIndex(of: UInt8(ascii: "\n")), lastLine > open + 1,
              text[(lastLine + 1)..<close].allSatisfy({ $0 == UInt8(ascii: " ") }) else { return nil }
        return (open + 2)..<lastLine
    }

    /// One level of object around a value: `{ "a" : value }`.
    private struct Nest: Encodable {
        let inner: any Encodable
        enum Key: CodingKey { case a }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(inner, forKey: .a)
        }
    }

    /// Decodes a summary, refusing other schemas.
    public static func decode(_ data: Data) throws -> AnalysisSummary {
        struct Probe: Decodable { var schema: String? }
        let probe = try JSONDecoder().decode(Probe.self, from: data)
        guard let schema = probe.schema, schema.hasPrefix("qtrace-summary/") else {
            throw SummaryError.notASummary
        }
        // Minor versions only add fields: any 1.x decodes.
        guard schema == "qtrace-summary/1" || schema.hasPrefix("qtrace-summary/1.") else {
            throw SummaryError.unsupportedSchema(schema)
        }
        return try JSONDecoder().decode(AnalysisSummary.self, from: data)
    }
}

public enum SummaryError: Error, CustomStringConvertible, Equatable {
    case notASummary
    case unsupportedSchema(String)
    /// JSONEncoder laid out the queues' arrays unlike the first one (writeJSON).
    case unexpectedEncoding
    public var description: String {
        switch self {
        case .unexpectedEncoding: "the JSON encoder laid out the summary's queues unexpectedly"

        case .notASummary: "not a qtrace summary (no \"schema\": \"qtrace-summary/...\")"
        case .unsupportedSchema(let s): "unsupported summary schema \(s) (this qtrace reads \(AnalysisSummary.schemaVersion))"
        }
    }
}

public struct TraceSummary: Sendable, Codable, Equatable {
    public var path: String?
    public var pid: Int
    public var executable: String
    public var commandLine: String
    public var ncpu: Int
    public var durationNs: UInt64
    public var events: Int
    public var droppedEvents: UInt64
    /// Why ("disk full", "trace size limit reached"); absent when the trace does not say.
    public var dropReason: String?
    /// Records the reader dropped as inconsistent; nil in summaries older than this field.
    public var invalidEvents: Int?
    public var shimOverheadNs: UInt64
    public var threads: Int
    public var queues: Int
    public var items: Int
    /// A flight-recorder trace: the window it holds (absent otherwise).
    public var flightRecorder: FlightRecorderWindow?

    init(model: TraceModel, path: String?) {
        self.path = path
        pid = model.info.pid
        executable = model.info.executable
        commandLine = model.info.commandLine
        ncpu = model.info.ncpu
        durationNs = model.duration
        events = model.eventCount
        droppedEvents = model.info.droppedEvents
        dropReason = model.info.droppedEvents > 0 ? model.info.dropReason : nil
        invalidEvents = model.info.invalidEvents
        shimOverheadNs = model.info.shimOverheadNs
        threads = model.threads.count
        queues = model.queues.count
        items = model.items.count
        flightRecorder = model.info.flightRecorder
    }
}

public struct FindingCounts: Sendable, Codable, Equatable {
    public var error = 0
    public var warning = 0
    public var info = 0

    public init(error: Int, warning: Int, info: Int) { self.error = error; self.warning = warning; self.info = info }

    init(_ findings: [Finding]) {
        for f in findings {
            switch f.severity {
            case .error: error += 1
            case .warning: warning += 1
            case .info: info += 1
            }
        }
    }
}
