// A recording of several processes (a program and the children that used Dispatch, or the
// processes of an LTTng session): one row per process, a total, and the findings of all of
// them grouped, so that 40 swift-driver children waiting the same way read as one finding.
// `qtrace stats`/`check` print them, the JSON summary carries them; nothing is recomputed
// by the renderers.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One process of a recording, as the PROCESSES table shows it.
public struct ProcessOverview: Sendable, Codable, Equatable {
    public var pid: Int
    /// The program's name: argv[0]'s file name (the executable's when the command line is
    /// unknown).
    public var executable: String
    /// The command line after the program's own name.
    public var arguments: String
    /// Wall-clock start (ns since the epoch), to order processes and span the recording.
    public var startRealtimeNs: UInt64
    public var durationNs: UInt64
    public var items: Int
    public var threadsSeen: Int
    public var peakThreadsAlive: Int
    /// The queue with the most busy time, and that time.
    public var busiestQueue: String?
    public var busiestQueueBusyNs: UInt64
    public var findings: FindingCounts
    /// Findings after grouping (what FINDINGS lists for this process).
    public var findingGroups: Int

    public init(_ result: AnalysisResult) {
        let info = result.model.info
        // The figures the report's Processes table shows (ProcessSummary): one definition.
        let summary = ProcessSummary(statistics: result.statistics, findings: result.findings)
        pid = info.pid
        executable = Self.programName(executable: info.executable, commandLine: info.commandLine)
        arguments = Self.arguments(info.commandLine)
        startRealtimeNs = info.initRealtimeNs
        durationNs = summary.durationNs
        items = summary.items
        threadsSeen = summary.threads
        peakThreadsAlive = summary.peakThreadsAlive
        busiestQueue = summary.busiestQueue.map { queueName(result.model.queues[$0]) }
        busiestQueueBusyNs = summary.busiestQueueBusyNs
        findings = FindingCounts(result.findings)
        findingGroups = FindingGrouping.groups([(executable, pid, result.findings)]).count
    }

    /// The name a program was run by: argv[0]'s file name (swift-build, not the
    /// swift-package it links to); the executable's when the command line is unknown.
    public static func programName(executable: String, commandLine: String) -> String {
        let argv0 = programWord(commandLine)
        return fileName(argv0.isEmpty ? executable : argv0)
    }

    public static func fileName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }

    static func programWord(_ commandLine: String) -> String {
        commandLine.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
    }

    public static func arguments(_ commandLine: String) -> String {
        let parts = commandLine.split(separator: " ", maxSplits: 1)
        return parts.count == 2 ? String(parts[1]) : ""
    }
}

/// The whole recording: what the processes add up to.
public struct RecordingTotal: Sendable, Codable, Equatable {
    public var processes: Int
    /// First process start to last process end (wall clock).
    public var spanNs: UInt64
    public var items: Int
    /// Threads seen in all processes together, and the most alive at once (processes placed
    /// on the wall clock, each counting 0 once it ended: ProcessTotals, as the report).
    public var threadsSeen: Int
    public var peakThreadsAliveAtOnce: Int
    public var findings: FindingCounts
    public var findingGroups: Int

    public init(_ rows: [ProcessOverview], findingGroups: [FindingGroup], peakThreadsAliveAtOnce: Int) {
        self.peakThreadsAliveAtOnce = peakThreadsAliveAtOnce
        processes = rows.count
        let start = rows.map(\.startRealtimeNs).min() ?? 0
        let end = rows.map { $0.startRealtimeNs &+ $0.durationNs }.max() ?? 0
        spanNs = end >= start ? end - start : 0
        items = rows.reduce(0) { $0 + $1.items }
        threadsSeen = rows.reduce(0) { $0 + $1.threadsSeen }
        findings = FindingCounts(error: rows.reduce(0) { $0 + $1.findings.error },
                                 warning: rows.reduce(0) { $0 + $1.findings.warning },
                                 info: rows.reduce(0) { $0 + $1.findings.info })
        self.findingGroups = findingGroups.count
    }
}

/// Identical findings as one: the same rule on the same code site (or, without one, the same
/// queue labels) in the same executable, whatever the process, group address or thread.
public struct FindingGroup: Sendable, Codable, Equatable {
    public var id: String
    public var severity: Severity
    public var executable: String
    /// The code site or queue labels the findings share ("" when the rule names neither).
    public var subject: String
    /// Occurrences in all the grouped findings.
    public var count: Int
    /// The processes they came from (pids, ascending).
    public var pids: [Int]
    /// The worst one (the longest span; the first on ties): its message is the group's.
    public var worst: Finding
}

public enum FindingGrouping {
    /// Groups findings of processes (executable, pid, findings), most severe first, then by
    /// count, rule and subject (deterministic).
    public static func groups(_ processes: [(executable: String, pid: Int, findings: [Finding])]) -> [FindingGroup] {
        var groups: [FindingGroup] = []
        var slot: [String: Int] = [:]
        for process in processes {
            for finding in process.findings {
                let subject = subject(of: finding)
                let key = [finding.id, process.executable, subject].joined(separator: "\u{1F}")
                guard let index = slot[key] else {
                    slot[key] = groups.count
                    groups.append(FindingGroup(id: finding.id, severity: finding.severity, executable: process.executable,
                                               subject: subject, count: finding.occurrences, pids: [process.pid],
                                               worst: finding))
                    continue
                }
                groups[index].count += finding.occurrences
                if !groups[index].pids.contains(process.pid) { groups[index].pids.append(process.pid) }
                if span(finding) > span(groups[index].worst) { groups[index].worst = finding }
                groups[index].severity = Swift.max(groups[index].severity, finding.severity)
            }
        }
        for i in groups.indices { groups[i].pids.sort() }
        return groups.sorted { a, b in
            if a.severity != b.severity { return a.severity > b.severity }
            if a.count != b.count { return a.count > b.count }
            if a.id != b.id { return a.id < b.id }
            if a.executable != b.executable { return a.executable < b.executable }
            return a.subject < b.subject
        }
    }

    /// What makes findings of one rule "the same": their code sites, else their queues'
    /// labels (without the suffix that tells queues of one label apart: a queue created
    /// anew each lap of a benchmark is the same queue to its reader).
    public static func subject(of finding: Finding) -> String {
        let sites = finding.objects.filter { $0.kind == .site }.map(\.label)
        if !sites.isEmpty { return sites.joined(separator: ", ") }
        return finding.objects.filter { $0.kind == .queue }.map { queueLabel(ofName: $0.label) }.joined(separator: ", ")
    }

    static func span(_ f: Finding) -> UInt64 { f.end >= f.start ? f.end - f.start : 0 }
}

/// The overview of a recording: every figure `qtrace stats` prints above the per-process
/// sections, computed once.
public struct RecordingOverview: Sendable, Codable, Equatable {
    /// Processes in start order.
    public var processes: [ProcessOverview]
    public var total: RecordingTotal
    public var findingGroups: [FindingGroup]

    /// `results` are analysed one at a time by callers that keep only what this needs: see
    /// `RecordingOverview.Builder`.
    public init(processes: [ProcessOverview], findings: [(executable: String, pid: Int, findings: [Finding])],
                peakThreadsAliveAtOnce: Int = 0) {
        self.processes = processes.sorted { ($0.startRealtimeNs, $0.pid) < ($1.startRealtimeNs, $1.pid) }
        findingGroups = FindingGrouping.groups(findings)
        total = RecordingTotal(self.processes, findingGroups: findingGroups, peakThreadsAliveAtOnce: peakThreadsAliveAtOnce)
    }

    /// Collects the overview while the processes are analysed one after another (a recording
    /// of a build has dozens: their models are not kept).
    public struct Builder: Sendable {
        var rows: [ProcessOverview] = []
        var findings: [(executable: String, pid: Int, findings: [Finding])] = []
        /// Each process's threads alive (times from its own start), to place on the wall clock.
        var alive: [(times: [UInt64], values: [Double])] = []

        public init() {}

        public mutating func add(_ result: AnalysisResult) {
            let row = ProcessOverview(result)
            rows.append(row)
            findings.append((row.executable, row.pid, result.findings))
            let points = result.model.threadActivity.alive.points
            alive.append((points.map(\.time), points.map { Double($0.max) }))
        }

        public func build() -> RecordingOverview {
            let origin = rows.map(\.startRealtimeNs).min() ?? 0
            let parts = zip(rows, alive).map { row, series in
                let offset = Int64(clamping: row.startRealtimeNs &- origin)
                return PlacedSteps(timesNs: series.times.map { offset &+ Int64(clamping: $0) }, values: series.values,
                                   startNs: offset, endNs: offset &+ Int64(clamping: row.durationNs))
            }
            return RecordingOverview(processes: rows, findings: findings, peakThreadsAliveAtOnce: Int(ProcessTotals.peak(parts)))
        }
    }
}

extension TraceStatistics {
    /// Semaphores that blocked longest first (then most waits, then first seen): the order
    /// of the SEMAPHORES table, whose default shows the first rows.
    public var semaphoresByBlockedTime: [SemaphoreStats] {
        semaphores.sorted {
            ($0.blocked.totalNs, $0.waits, $1.semaphore) > ($1.blocked.totalNs, $1.waits, $0.semaphore)
        }
    }

    /// Groups with the most enters first (then most waits, then first seen).
    public var groupsByEnters: [GroupStats] { groupIndicesByEnters.map { groups[$0] } }

    /// The indices into `groups` in that order: sorting copies of the statistics held two
    /// copies of every group's (200k groups: +52 MB at the end of `qtrace stats`).
    public var groupIndicesByEnters: [Int] {
        groups.indices.sorted { a, b in
            (groups[a].enters, groups[a].waits, groups[b].group) > (groups[b].enters, groups[b].waits, groups[a].group)
        }
    }

    /// Sources with the most handler runs first (then first created).
    public var sourcesByRuns: [SourceStats] {
        sources.sorted { ($0.eventRuns, $1.source) > ($1.eventRuns, $0.source) }
    }

    /// Applies that took longest first (then first called).
    public var appliesBySpan: [ApplyStats] {
        applies.sorted { ($0.spanNs ?? 0, $1.apply) > ($1.spanNs ?? 0, $0.apply) }
    }

    /// Indices into `queues` of the queues that ran items, busiest first (then most items,
    /// then first created): the order of every queue table and of "busiest queue". Indices,
    /// not copies: a sorted copy of the statistics took ~500 bytes per queue (900k queues:
    /// 460 MB), and the tables show 20 of them.
    public var queueIndicesByBusyTime: [Int] {
        // Each row read once: rows are rebuilt when read (QueueStatsTable).
        let keys = queues.map { (busy: $0.busyNs, items: $0.items, queue: $0.queue) }
        return keys.indices.filter { keys[$0].items > 0 }.sorted { a, b in
            let (ka, kb) = (keys[a], keys[b])
            return ka.busy != kb.busy ? ka.busy > kb.busy : (ka.items != kb.items ? ka.items > kb.items : ka.queue < kb.queue)
        }
    }
}

/// `qtrace stats --json` of several processes: the overview and each process's summary.
public struct RecordingSummary: Sendable, Codable {
    /// Bumped on incompatible changes (docs/summary-schema.md, "Recordings").
    public static let schemaVersion = "qtrace-recording/1"

    public var schema: String
    public var generator: String
    public var overview: RecordingOverview
    /// One summary per process, in the order of `overview.processes`.
    public var processes: [AnalysisSummary]

    public init(overview: RecordingOverview, processes: [AnalysisSummary], generator: String) {
        schema = Self.schemaVersion
        self.generator = generator
        self.overview = overview
        let order = Dictionary(overview.processes.enumerated().map { ($1.pid, $0) }, uniquingKeysWith: { a, _ in a })
        self.processes = processes.sorted { (order[$0.trace.pid] ?? 0) < (order[$1.trace.pid] ?? 0) }
    }

    /// Pretty, key-sorted JSON, like the one-process summary.
    public func jsonData() throws -> Data {
        try SummaryJSONEncoder().encode(self)
    }
}

/// Two recordings' processes paired for `qtrace diff`: by executable and arguments, the n-th
/// occurrence in one with the n-th in the other (PIDs differ between runs).
public struct RecordingPairing: Sendable {
    public var pairs: [(base: AnalysisSummary, new: AnalysisSummary)] = []
    public var onlyInBase: [AnalysisSummary] = []
    public var onlyInNew: [AnalysisSummary] = []

    public init(base: [AnalysisSummary], new: [AnalysisSummary]) {
        func key(_ s: AnalysisSummary) -> String {
            ProcessOverview.programName(executable: s.trace.executable, commandLine: s.trace.commandLine) + " "
                + ProcessOverview.arguments(s.trace.commandLine)
        }
        var waiting: [String: [Int]] = [:]
        for (i, s) in new.enumerated() { waiting[key(s), default: []].append(i) }
        var paired = Set<Int>()
        for s in base {
            if let i = waiting[key(s)]?.first {
                waiting[key(s)]!.removeFirst()
                paired.insert(i)
                pairs.append((s, new[i]))
            } else {
                onlyInBase.append(s)
            }
        }
        onlyInNew = new.indices.filter { !paired.contains($0) }.map { new[$0] }
    }
}
