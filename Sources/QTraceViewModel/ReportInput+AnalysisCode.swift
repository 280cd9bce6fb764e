// Code identity from the analysis: the model's codes, sites and Swift tasks as report tables,
// and the CODE, BLOCKING CALLS and TASKS tables from the same statistics `qtrace stats`
// prints (CodeText.swift), so the report's numbers are the terminal's.
import QTraceAnalysis
import QTraceFormat

extension AnalysisReportBuilder {
    static func location(_ l: CodeLocation) -> ReportCodeLocation {
        ReportCodeLocation(name: l.name, symbol: l.function ?? "", file: l.file ?? "", line: l.line ?? 0)
    }

    func codes() -> [ReportCode] {
        model.codes.map { code in
            ReportCode(kind: code.codeKind.name,
                       what: code.what.map(Self.location) ?? ReportCodeLocation(name: code.name))
        }
    }

    func sites() -> [ReportSite] {
        model.sites.map { site in
            let from = site.from.map(Self.location)
                ?? (site.caller == 0 ? nil : ReportCodeLocation(name: "0x" + String(site.caller, radix: 16)))
            return ReportSite(code: site.codeIndex ?? -1, kind: site.codeKind.name, from: from,
                              stack: site.asyncFrames.map(Self.location))
        }
    }

    /// The actors and their visits, as `statistics.actors` counts them (same order).
    func actors(_ stats: TraceStatistics) -> [ReportActor] {
        let visits = model.actorVisits()
        let taskByID = Dictionary(model.tasks.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        return stats.actors.compactMap { a in
            guard visits.indices.contains(a.actor) else { return nil }
            return ReportActor(
                name: a.name, type: a.type ?? "",
                visits: visits[a.actor].map {
                    ReportActorVisit(startNs: Int64(clamping: $0.start), endNs: Int64(clamping: $0.end),
                                     waitNs: Int64(clamping: $0.waitNs), task: taskByID[$0.taskID] ?? -1)
                },
                runNs: Int64(clamping: a.runNs), waitNs: Int64(clamping: a.waitNs), peakQueueDepth: a.peakQueueDepth)
        }
    }

    /// The tasks; `functions` as TaskStats names them (`TraceModel.taskFunctionCodes`).
    func tasks() -> [ReportTask] {
        model.tasks.enumerated().map { t, task in
            ReportTask(id: Int64(task.id), parent: task.parent ?? -1, jobs: task.jobs,
                       onMainActor: task.onMainActor, functions: model.taskFunctionCodes(t), runtime: task.isRuntime)
        }
    }

    // MARK: Tables

    static func ns(_ value: UInt64, _ count: Int) -> ReportValue { count > 0 ? .number(Double(value)) : .missing }

    /// CODE: one row per code that ran (`statistics.sites`), most total run time first.
    /// `queueLabel(q)`: the name of queue q, or nil (asked for the two a row names, not made for
    /// every queue: 58 MB of Strings at 900k queues).
    static func codeTable(_ stats: TraceStatistics, queueLabel: (Int) -> String?) -> ReportTable? {
        guard !stats.sites.isEmpty else { return nil }
        let columns = ReportTable.codeColumns
        let rows = stats.sites.map { c in
            let whereText = c.file.flatMap { file in c.line.map { "\(baseName(file)):\($0)" } } ?? (c.module ?? "")
            let queues = c.queues.prefix(2).map { queueLabel($0) ?? "queue \($0)" }.joined(separator: ", ")
                + (c.queues.count > 2 ? " +\(c.queues.count - 2)" : "")
            let callers = c.callers.first.map { $0.location + (c.callers.count > 1 ? " +\(c.callers.count - 1)" : "") } ?? ""
            return ReportRow(values: [
                .text(c.name), .text(whereText), .text(c.kind), .number(Double(c.items)),
                ns(c.run.p50Ns, c.run.count), ns(c.run.p99Ns, c.run.count), ns(c.run.maxNs, c.run.count),
                ns(c.run.totalNs, c.run.count), ns(c.wait.p99Ns, c.wait.count), .text(queues), .text(callers),
            ], objectIndex: c.code)
        }
        return ReportTable(id: "code", title: "Code", rowObject: .code, columns: columns, rows: rows)
    }

    /// BLOCKING CALLS: one row per blocking call site (`statistics.waitSites`).
    static func waitSiteTable(_ stats: TraceStatistics) -> ReportTable? {
        guard !stats.waitSites.isEmpty else { return nil }
        let columns = [
            ReportColumn(key: "location", title: "Call site"), ReportColumn(key: "causes", title: "Kind"),
            ReportColumn(key: "blocked.count", title: "Calls", unit: "count"),
            ReportColumn(key: "blocked.p50Ns", title: "Blocked p50", unit: "ns"),
            ReportColumn(key: "blocked.p99Ns", title: "Blocked p99", unit: "ns"),
            ReportColumn(key: "blocked.maxNs", title: "Blocked max", unit: "ns"),
            ReportColumn(key: "blocked.totalNs", title: "Blocked total", unit: "ns"),
            ReportColumn(key: "onMainThread", title: "On main", unit: "count"),
        ]
        let rows = stats.waitSites.map { w in
            ReportRow(values: [
                .text(w.location), .text(w.causes.joined(separator: ", ")), .number(Double(w.blocked.count)),
                ns(w.blocked.p50Ns, w.blocked.count), ns(w.blocked.p99Ns, w.blocked.count),
                ns(w.blocked.maxNs, w.blocked.count), ns(w.blocked.totalNs, w.blocked.count),
                .number(Double(w.onMainThread)),
            ], objectIndex: w.site)
        }
        return ReportTable(id: "waitSites", title: "Blocking calls", rowObject: .site, columns: columns, rows: rows)
    }

    /// TASKS: the longest-lived Swift tasks (`statistics.tasks.top`).
    static func taskTable(_ stats: TraceStatistics, model: TraceModel) -> ReportTable? {
        guard stats.tasks.tasks > 0 else { return nil }
        let columns = [
            ReportColumn(key: "id", title: "Task", unit: "id"), ReportColumn(key: "parent", title: "Parent"),
            ReportColumn(key: "jobs", title: "Jobs", unit: "count"),
            ReportColumn(key: "lifetimeNs", title: "Lifetime", unit: "ns"),
            ReportColumn(key: "runningNs", title: "Running", unit: "ns"),
            ReportColumn(key: "waitingNs", title: "Waiting", unit: "ns"),
            ReportColumn(key: "awaitingNs", title: "Awaiting", unit: "ns"),
            ReportColumn(key: "onMainActor", title: "Main actor"),
            ReportColumn(key: "functions", title: "Async functions"),
        ]
        let rows = stats.tasks.top.map { t in
            ReportRow(values: [
                .number(Double(t.id)), .text(t.parent.map { "#\(model.tasks[$0].id)" } ?? ""), .number(Double(t.jobs)),
                .number(Double(t.lifetimeNs)), .number(Double(t.runningNs)), .number(Double(t.waitingNs)),
                .number(Double(t.awaitingNs)), .text(t.onMainActor ? "yes" : ""),
                .text(t.functions.joined(separator: ", ")),
            ], objectIndex: t.task)
        }
        return ReportTable(id: "tasks", title: "Tasks", rowObject: .task, columns: columns, rows: rows)
    }

    static func baseName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}

extension ReportTable {
    /// The CODE table's columns: the report's and the synthetic reports' tables share them.
    public static let codeColumns = [
        ReportColumn(key: "name", title: "Code"), ReportColumn(key: "where", title: "Where"),
        ReportColumn(key: "kind", title: "Kind"), ReportColumn(key: "items", title: "Items", unit: "count"),
        ReportColumn(key: "run.p50Ns", title: "Run p50", unit: "ns"),
        ReportColumn(key: "run.p99Ns", title: "Run p99", unit: "ns"),
        ReportColumn(key: "run.maxNs", title: "Run max", unit: "ns"),
        ReportColumn(key: "run.totalNs", title: "Run total", unit: "ns"),
        ReportColumn(key: "wait.p99Ns", title: "Wait p99", unit: "ns"),
        ReportColumn(key: "queues", title: "Queues"), ReportColumn(key: "callers", title: "Enqueued from"),
    ]
}
