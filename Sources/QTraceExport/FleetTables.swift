// `qtrace export --format tables`: the analysis of each traced process as columnar tables
// (gzip-compressed CSV, schema in docs/fleet.md) that an existing engine queries across
// thousands of traces: DuckDB on a laptop, Spark, Trino or ClickHouse for a fleet. Every
// row carries run, host and pid. The figures are the analysis' own (QTraceAnalysis): this
// file only lays them out.
import Foundation
import QTraceAnalysis
import QTraceFormat

public enum FleetTables {
    /// Bumped on incompatible changes (docs/fleet.md).
    public static let schemaVersion = "qtrace-tables/1"

    /// Every table, its columns in order.
    public static let columns: [(table: String, columns: [String])] = [
        ("processes", ["run", "host", "pid", "program", "arguments", "start_unix_ns", "duration_ns", "items", "threads_seen",
                       "peak_threads_alive", "busiest_queue", "findings_error", "findings_warning", "findings_info"]),
        ("queues", ["run", "host", "pid", "queue", "name", "label", "kind", "qos", "items", "completed", "running_at_end",
                    "wait_p50_ns", "wait_p90_ns", "wait_p99_ns", "wait_max_ns", "run_p50_ns", "run_p90_ns", "run_p99_ns",
                    "run_max_ns", "busy_ns", "width_max", "backlog_max"]),
        ("items", ["run", "host", "pid", "item_id", "queue", "kind", "code", "tid", "enqueue_ns", "start_ns", "end_ns",
                   "wait_ns", "run_ns", "start_unix_ns"]),
        ("threads", ["run", "host", "pid", "tid", "name", "kind", "items", "busy_ns", "blocked_ns"]),
        ("code_sites", ["run", "host", "pid", "code", "kind", "file", "line", "module", "items", "run_total_ns", "run_p50_ns",
                        "run_p99_ns", "run_max_ns", "wait_p99_ns"]),
        ("tasks", ["run", "host", "pid", "task_id", "parent_task_id", "jobs", "lifetime_ns", "running_ns", "waiting_ns",
                   "awaiting_ns", "functions", "on_main_actor"]),
        ("actors", ["run", "host", "pid", "actor", "type", "address", "visits", "tasks", "run_ns", "wait_ns",
                    "wait_p99_ns", "waited_visits", "peak_queue"]),
        ("findings", ["run", "host", "pid", "rule", "severity", "start_ns", "end_ns", "occurrences", "subject", "message"]),
    ]

    /// Writes the tables of several processes into DIRECTORY/TABLE/FILE.csv.gz, one file per
    /// table for this export (FILE names the run, the host and the first pid, so that exports
    /// of many runs and hosts share a directory and a glob reads them all).
    public final class Writer {
        private var files: [String: GzipCSVFile] = [:]
        private let run: String

        public init(directory: String, run: String, fileStem: String) throws {
            self.run = run
            for (table, columns) in FleetTables.columns {
                let folder = directory + "/" + table
                try makeDirectory(folder)
                files[table] = try GzipCSVFile(path: folder + "/" + fileStem + ".csv.gz", columns: columns)
            }
        }

        /// Appends one analysed process (its model can be released afterwards).
        public func add(_ result: AnalysisResult, host: String) throws {
            let key: [CSVValue] = [.text(run), .text(host), .int(Int64(result.model.info.pid))]
            try processes(result, key)
            try queues(result, key)
            try items(result, key)
            try threads(result, key)
            try codeSites(result, key)
            try tasks(result, key)
            try actors(result, key)
            try findings(result, key)
        }

        /// Completes every file (renamed into place); the paths written.
        public func finish() throws -> [String] {
            for file in files.values { try file.finish() }
            return FleetTables.columns.compactMap { files[$0.table]?.path }
        }

        private func write(_ table: String, _ row: [CSVValue]) throws { try files[table]!.write(row) }

        private func processes(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            let p = ProcessOverview(r)
            try write("processes", key + [
                .text(p.executable), .text(p.arguments), .ns(p.startRealtimeNs), .ns(p.durationNs), .number(p.items),
                .number(p.threadsSeen), .number(p.peakThreadsAlive), p.busiestQueue.map { .text($0) } ?? .none,
                .number(p.findings.error), .number(p.findings.warning), .number(p.findings.info),
            ])
        }

        private func queues(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            for q in r.statistics.queues where q.items > 0 {
                try write("queues", key + [
                    .number(q.queue), .text(q.name ?? q.label), .text(q.label), .text(q.kind.rawValue), .text(q.qos), .number(q.items),
                    .number(q.completed), .number(q.runningAtEnd),
                ] + percentiles(q.wait, [\.p50Ns, \.p90Ns, \.p99Ns, \.maxNs])
                  + percentiles(q.run, [\.p50Ns, \.p90Ns, \.p99Ns, \.maxNs])
                  + [.ns(q.busyNs), .number(q.widthMax), .number(q.backlogMax)])
            }
        }

        /// Percentiles of no durations are NULL, as `qtrace stats` prints "-".
        private func percentiles(_ d: DurationStats, _ keys: [KeyPath<DurationStats, UInt64>]) -> [CSVValue] {
            keys.map { d.count == 0 ? .none : .ns(d[keyPath: $0]) }
        }

        private func items(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            let model = r.model
            let codeNames = model.sites.indices.map { model.siteDescription($0) }
            let queueNames = model.queues.map(queueName)
            let start = model.info.initRealtimeNs
            for item in model.items {
                func time(_ t: UInt64) -> CSVValue { t == noTime ? .none : .ns(t) }
                try write("items", key + [
                    item.id == 0 ? .none : .ns(item.id), item.queue.map { .text(queueNames[$0]) } ?? .none,
                    .text(item.kind.name), item.site.map { .text(codeNames[$0]) } ?? .none,
                    item.thread.map { .int(Int64(model.threads[$0].tid)) } ?? .none,
                    time(item.enqueueTime), time(item.startTime), time(item.endTime), .ns(item.wait), .ns(item.runTime),
                    item.startTime == noTime || start == 0 ? .none : .ns(start &+ item.startTime),
                ])
            }
        }

        private func threads(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            for t in r.statistics.threads {
                try write("threads", key + [.int(Int64(t.tid)), .text(threadName(r.model.threads[t.thread])),
                                            .text(t.kind.rawValue), .number(t.items), .ns(t.busyNs), .ns(t.blockedNs)])
            }
        }

        private func codeSites(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            for c in r.statistics.sites {
                try write("code_sites", key + [
                    .text(c.name), .text(c.kind), c.file.map { .text($0) } ?? .none, .number(c.line),
                    c.module.map { .text($0) } ?? .none, .number(c.items), .ns(c.run.totalNs),
                ] + percentiles(c.run, [\.p50Ns, \.p99Ns, \.maxNs]) + percentiles(c.wait, [\.p99Ns]))
            }
        }

        private func tasks(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            let top = r.statistics.tasks.top
            for t in top {
                let parent = t.parent.flatMap { p in top.first { $0.task == p }?.id }
                try write("tasks", key + [
                    .int(Int64(t.id)), parent.map { .int(Int64($0)) } ?? .none, .number(t.jobs), .ns(t.lifetimeNs),
                    .ns(t.runningNs), .ns(t.waitingNs), .ns(t.awaitingNs), .text(t.functions.joined(separator: "; ")),
                    .text(t.onMainActor ? "true" : "false"),
                ])
            }
        }

        private func actors(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            for a in r.statistics.actors {
                try write("actors", key + [
                    .text(a.name), a.type.map { .text($0) } ?? .none, .text(a.address), .number(a.visits), .number(a.tasks),
                    .ns(a.runNs), .ns(a.waitNs), .ns(a.wait.p99Ns), .number(a.contendedVisits), .number(a.peakQueueDepth),
                ])
            }
        }

        private func findings(_ r: AnalysisResult, _ key: [CSVValue]) throws {
            for f in r.findings {
                try write("findings", key + [
                    .text(f.id), .text(f.severity.rawValue), .ns(f.start), .ns(f.end), .number(f.occurrences),
                    .text(FindingGrouping.subject(of: f)), .text(f.message),
                ])
            }
        }
    }
}

/// `path` and the folders above it (an export into a new DIR makes DIR too).
private func makeDirectory(_ path: String) throws {
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        throw TableWriteError(description: "cannot create the directory '\(path)': \(error.localizedDescription)")
    }
}
