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

    /// Pretty, key-sorted JSON: the same trace always gives the same bytes (JSONEncoder's
    /// with [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]: SummaryJSONEncoder).
    public func jsonData() throws -> Data {
        try SummaryJSONEncoder().encode(self)
    }

    /// `jsonData()`'s bytes, handed to `write` in pieces of about 1 MiB as they are encoded:
    /// a summary of 900k queues is 1.7 GB of JSON, never held whole.
    public func writeJSON(_ write: (Data) throws -> Void) throws {
        try SummaryJSONEncoder().encode(self) { try write(Data($0)) }
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
    public var description: String {
        switch self {
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
