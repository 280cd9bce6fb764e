// Builds the report's input from an analysis result: the timeline columns from the model, the
// tables from the same statistics `qtrace stats --json` prints (so the numbers agree), and
// the findings.
import QTraceAnalysis
import QTraceFormat

extension ReportInput {
    /// `host`: the machine the process ran on (the LTTng trace's hostname; "" if unknown).
    /// The analysis is consumed: the item columns are built last, while the model's items are
    /// released (pass it with `consume` to keep the memory of one copy of the items, not two).
    public init(analysis: consuming AnalysisResult, header: TraceHeader, qtraceVersion: String, host: String = "") {
        self.init(allButItems: copy analysis, header: header, qtraceVersion: qtraceVersion, host: host)
        items = AnalysisReportBuilder.itemColumns(releasing: consume analysis)
    }

    private init(allButItems analysis: AnalysisResult, header: TraceHeader, qtraceVersion: String, host: String) {
        let model = analysis.model
        // Times are within 2^50 ns (the reader's bounds); counts and payload values saturate.
        let end = Int64(clamping: model.endTime)
        let builder = AnalysisReportBuilder(model: model, end: end)
        let profile = CPUProfile.build(model)
        self.init(
            meta: ReportMeta(
                title: AnalysisReportBuilder.title(header), commandLine: header.commandLine, pid: Int(header.pid),
                ncpu: Int(header.ncpu), durationNs: Int64(clamping: model.duration), droppedEvents: Int64(clamping: header.droppedEvents),
                shimOverheadNsPerEvent: Double(header.shimOverheadNs), qtraceVersion: qtraceVersion,
                dropReason: header.dropReason ?? "", invalidEvents: Int64(model.info.invalidEvents)),
            threads: builder.threads(),
            queues: builder.queues(),
            blocked: builder.blocked(),
            sources: builder.sources(),
            groups: builder.groups(),
            annotations: builder.annotations(),
            counters: builder.counters(),
            stats: [AnalysisReportBuilder.queueTable(analysis.statistics), AnalysisReportBuilder.threadTable(analysis.statistics)]
                + [AnalysisReportBuilder.schedTable(analysis.statistics), AnalysisReportBuilder.cpuTable(profile),
                   AnalysisReportBuilder.codeTable(analysis.statistics) { model.queues[safe: $0].map(queueName) },
                   AnalysisReportBuilder.waitSiteTable(analysis.statistics),
                   AnalysisReportBuilder.taskTable(analysis.statistics, model: model)].compactMap { $0 },
            histograms: builder.histograms(),
            findings: FindingGrouping.groups([("", Int(header.pid), analysis.findings)]).map {
                AnalysisReportBuilder.finding($0, traceEnd: end)
            },
            processes: [ReportProcess(
                pid: Int(header.pid), executable: AnalysisReportBuilder.executableName(header), commandLine: header.commandLine,
                host: host, realtimeStartNs: Int64(clamping: header.initRealtimeNs), durationNs: Int64(clamping: model.duration),
                droppedEvents: Int64(clamping: header.droppedEvents))],
            sched: builder.sched()
        )
        codes = builder.codes()
        sites = builder.sites()
        tasks = builder.tasks()
        actors = builder.actors(analysis.statistics)
        cpuFlames = AnalysisReportBuilder.cpuFlames(profile)
        meta.flightRecorder = model.info.flightRecorder?.summaryLine ?? ""
        setFigures(analysis.statistics)
        setProcessFigures(ProcessSummary(statistics: analysis.statistics, findings: analysis.findings))
    }

    /// The process's row of the Processes table, and its peak thread count as the report's.
    mutating func setProcessFigures(_ summary: ProcessSummary) {
        meta.peakThreadsAlive = summary.peakThreadsAlive
        guard !processes.isEmpty else { return }
        processes[0].items = summary.items
        processes[0].threads = summary.threads
        processes[0].peakThreadsAlive = summary.peakThreadsAlive
        processes[0].busyNs = Int64(summary.busyNs)
        processes[0].busiestQueue = summary.busiestQueue ?? -1
        processes[0].findings = summary.findings
    }

    /// The analysis' busy and blocked figures and target-queue forest, so that the viewer shows
    /// them rather than computing its own (docs/report-data.md, Definitions).
    mutating func setFigures(_ stats: TraceStatistics) {
        for q in stats.queues where queues.indices.contains(q.queue) {
            queues[q.queue].items = q.items
            queues[q.queue].busyNs = Int64(q.busyNs)
            queues[q.queue].busyShare = q.busyShare
        }
        for t in stats.threads where threads.indices.contains(t.thread) {
            threads[t.thread].items = t.items
            threads[t.thread].busyNs = Int64(t.busyNs)
            threads[t.thread].blockedNs = Int64(t.blockedNs)
        }
        queueTree = stats.queueTree.map {
            ReportQueueTreeNode(queue: $0.queue, parent: $0.parent ?? -1, subtreeBusyNs: Int64($0.subtreeBusyNs))
        }
    }
}

/// Conversions from the analysis model (optional indexes, UInt64 ns) to the report's columns
/// (-1 for "none", Int64 ns).
struct AnalysisReportBuilder {
    let model: TraceModel
    let end: Int64
    /// Items whose queue is unknown are drawn on a placeholder queue appended after the real ones.
    var unknownQueue: Int { model.queues.count }

    static func title(_ header: TraceHeader) -> String {
        let exe = executableName(header)
        return exe.isEmpty ? "pid \(header.pid)" : exe
    }

    /// The name the program was run by (argv[0]: swift-build, not swift-package), as in
    /// `qtrace stats`.
    static func executableName(_ header: TraceHeader) -> String {
        ProcessOverview.programName(executable: header.executablePath, commandLine: header.commandLine)
    }

    func threads() -> [ReportThread] {
        model.threads.enumerated().map { i, t in
            let kind: ReportThreadKind = t.kind == .main ? .main : (t.kind == .worker ? .worker : .other)
            let start = Int64(t.createdAt ?? t.firstSeen)
            let stop = Int64(t.exitedAt ?? model.endTime)
            return ReportThread(index: i, tid: Int64(t.tid), name: threadName(t), kind: kind, startNs: start, endNs: max(start, stop))
        }
    }

    func queues() -> [ReportQueue] {
        var result = model.queues.enumerated().map { i, q in
            ReportQueue(index: i, label: queueName(q), kind: Self.queueKind(q.kind), qosName: q.qos.name, targetIndex: q.target ?? -1)
        }
        if let figures = UnrecordedQueueFigures(model) {
            var placeholder = ReportQueue(index: unknownQueue, label: "(queue not recorded)", kind: .concurrent)
            (placeholder.items, placeholder.busyNs, placeholder.busyShare) = (figures.items, Int64(figures.busyNs), figures.busyShare)
            result.append(placeholder)
        }
        return result
    }

    static func queueKind(_ kind: QueueKind) -> ReportQueueKind {
        switch kind {
        case .main: .main
        case .global: .global
        case .serial, .runLoop: .serial
        case .concurrent, .unknown: .concurrent
        }
    }

    static func itemKind(_ item: WorkItem) -> ReportItemKind {
        if item.origin == .sourceHandler { return .sourceHandler }
        switch item.kind {
        case .async, .unknown: return item.isBarrier ? .barrierAsync : .async
        case .sync: return item.isBarrier ? .barrierSync : .sync
        case .barrierAsync: return .barrierAsync
        case .barrierSync, .barrierAsyncAndWait: return .barrierSync
        case .after: return .after
        case .groupAsync: return .groupAsync
        case .groupNotify, .workItemNotify: return .notify
        case .asyncAndWait: return .asyncAndWait
        }
    }

    /// The item columns, built while the model's items are released: every other part of the
    /// analysis is dropped first, then the items are read front to back and each page of them
    /// read is given back (ReleasedPages), so that the items (72 bytes each) and their columns
    /// (73) are not both resident: 2.7 GB at 20M items. The time blocked inside each item is
    /// filled in last, from the columns (BlockedInside from the model would build frames of
    /// every item on top of it: 160 bytes an item, 3.2 GB at 20M items).
    static func itemColumns(releasing analysis: consuming AnalysisResult) -> ReportItems {
        let sourceQueues = analysis.model.sources.map(\.queue)
        let unknownQueue = analysis.model.queues.count
        let (waits, threads) = (BlockedInside.waits(analysis.model) { blockCause($0).rawValue }, analysis.model.threads.count)
        let endTime = Int64(clamping: analysis.model.endTime)
        var items: [WorkItem] = []
        swap(&items, &analysis.model.items)
        analysis = AnalysisResult(model: TraceModel(info: analysis.model.info), statistics: TraceStatistics(), findings: [])
        FreeMemory.giveBack()
        var columns = ReportItems()
        columns.reserveCapacity(items.count)
        // A copy if the items were shared, whose pages are then the ones released: never the
        // caller's.
        items.withUnsafeMutableBufferPointer { buffer in
            var pages = ReleasedPages(buffer)
            for blockStart in stride(from: 0, to: buffer.count, by: columnBlock) {
                let blockEnd = min(buffer.count, blockStart + columnBlock)
                appendColumns(UnsafeBufferPointer(rebasing: buffer[blockStart..<blockEnd]), to: &columns,
                              sourceQueues: sourceQueues, unknownQueue: unknownQueue)
                pages.release(before: blockEnd)
            }
        }
        items = []
        fillBlockedInside(&columns, waits: waits, threads: threads, endTime: endTime)
        return columns
    }

    /// Items converted a block at a time (288 KiB of them), which stays in the cache while
    /// each column takes its values.
    private static let columnBlock = 4096

    /// Appends `block`'s items to the columns (nothing blocked inside yet: that is filled in
    /// from the columns), one column at a time: each takes the block's values with one check
    /// of its room, where appending item by item checked all 16 columns' room and uniqueness
    /// for each item (1.8 s of sf10's 20M items).
    static func appendColumns(_ block: UnsafeBufferPointer<WorkItem>, to columns: inout ReportItems,
                              sourceQueues: [Int?], unknownQueue: Int) {
        func queue(_ item: WorkItem) -> Int32 {
            Int32(item.queue ?? sourceQueues[safe: item.source].flatMap { $0 } ?? unknownQueue)
        }
        func start(_ item: WorkItem) -> Int64 { item.started.map(Int64.init) ?? -1 }
        columns.queue.append(contentsOf: block.lazy.map(queue))
        columns.kind.append(contentsOf: block.lazy.map(itemKind))
        columns.submitterThread.append(contentsOf: block.lazy.map { Int32($0.submitter ?? $0.thread ?? -1) })
        columns.thread.append(contentsOf: block.lazy.map { Int32($0.thread ?? -1) })
        columns.enqueueNs.append(contentsOf: block.lazy.map { $0.enqueued.map(Int64.init) ?? max(start($0), 0) })
        columns.startNs.append(contentsOf: block.lazy.map(start))
        columns.endNs.append(contentsOf: block.lazy.map { $0.ended.map(Int64.init) ?? -1 })
        columns.parent.append(contentsOf: block.lazy.map { Int32($0.parent ?? -1) })
        columns.waitedBehind.append(contentsOf: block.lazy.map { Int32($0.waitedBehind ?? -1) })
        columns.group.append(contentsOf: block.lazy.map { Int32($0.group ?? -1) })
        columns.source.append(contentsOf: block.lazy.map { Int32($0.source ?? -1) })
        columns.site.append(contentsOf: block.lazy.map { Int32($0.site ?? -1) })
        columns.traceID.append(contentsOf: block.lazy.map(\.id))
        columns.waitNs.append(contentsOf: block.lazy.map { $0.wait.map(Int64.init) ?? -1 })
        columns.blockedInsideNs.append(contentsOf: repeatElement(0, count: block.count))
        columns.blockedInsideCauses.append(contentsOf: repeatElement(0, count: block.count))
    }

    /// The analysis' time blocked inside each item and its causes (BlockedInside), from the
    /// columns' threads and times.
    static func fillBlockedInside(_ columns: inout ReportItems, waits: [BlockedInside.Wait], threads: Int, endTime: Int64) {
        let runs = BlockedInside.RunColumns(thread: columns.thread, start: columns.startNs, end: columns.endNs, endTime: endTime)
        var (ns, causes) = ([Int64](), [UInt8]())
        swap(&ns, &columns.blockedInsideNs)
        swap(&causes, &columns.blockedInsideCauses)
        _ = BlockedInside.sweep(runs, waits: waits, threads: threads) { item, blocked, mask in
            (ns[item], causes[item]) = (Int64(clamping: blocked), mask)
        }
        swap(&ns, &columns.blockedInsideNs)
        swap(&causes, &columns.blockedInsideCauses)
    }

    func blocked() -> [ReportBlockedInterval] {
        model.threads.enumerated().flatMap { index, thread in
            thread.blocked.map { b in
                ReportBlockedInterval(thread: index, startNs: Int64(b.start), endNs: Int64(b.end ?? model.endTime),
                                      cause: Self.blockCause(b.cause), objectLabel: objectLabel(b), item: b.item ?? -1,
                                      site: b.site ?? -1)
            }
        }
    }

    static func blockCause(_ cause: BlockCause) -> ReportBlockCause {
        switch cause {
        case .sync: .sync
        case .apply: .apply
        case .semaphore: .semaphore
        case .groupWait: .groupWait
        case .once, .workItemWait: .other
        }
    }

    func objectLabel(_ b: BlockedInterval) -> String {
        switch b.cause {
        case .sync: model.queues[safe: b.object].map(queueName) ?? "queue"
        case .apply: "concurrentPerform"
        case .semaphore: "semaphore #\(b.object)"
        case .groupWait: "group #\(b.object)"
        case .once: "dispatch_once"
        case .workItemWait: "DispatchWorkItem.wait()"
        }
    }

    func sources() -> [ReportSource] {
        model.sources.enumerated().map { i, s in
            let queueLabel = model.queues[safe: s.queue].map(queueName) ?? ""
            let runs = s.runs.compactMap { run -> ReportSourceRun? in
                guard let item = model.items[safe: run.item], let start = item.started else { return nil }
                return ReportSourceRun(startNs: Int64(clamping: start), endNs: Int64(clamping: item.ended ?? model.endTime),
                                       data: Int64(clamping: run.data))
            }
            let suspended = s.suspensions.map { ReportSpan(startNs: Int64($0.start), endNs: Int64($0.end ?? model.endTime)) }
            return ReportSource(index: i, label: "\(s.type.name) source #\(i)" + (queueLabel.isEmpty ? "" : " → \(queueLabel)"),
                                type: s.type.name, queueIndex: s.queue ?? -1, handlerRuns: runs, suspended: suspended,
                                cancelNs: s.cancelledAt.map(Int64.init) ?? -1)
        }
    }

    func groups() -> [ReportGroup] {
        model.groups.enumerated().map { i, g in
            let first = g.rounds.first.map { Int64($0.start) } ?? Int64(g.createdAt ?? 0)
            let last = g.rounds.last.flatMap { $0.end }.map(Int64.init) ?? end
            let notify = g.notifies.compactMap(\.fired).first.map(Int64.init) ?? -1
            return ReportGroup(index: i, label: "group #\(i)", firstEnterNs: first, lastLeaveNs: last, notifyNs: notify,
                               enters: g.enters, leaves: g.leaves)
        }
    }

    func annotations() -> ReportAnnotations {
        ReportAnnotations(
            marks: model.marks.map { ReportMark(timeNs: Int64($0.time), thread: $0.thread, name: $0.name) },
            intervals: model.intervals.map {
                ReportInterval(startNs: Int64($0.begin), endNs: Int64($0.end ?? model.endTime), thread: $0.thread, name: $0.name)
            })
    }

    func counters() -> [ReportCounterSeries] {
        func series(_ s: StepSeries, _ name: String, _ kind: ReportCounterKind, queue: Int = -1) -> ReportCounterSeries {
            ReportCounterSeries(name: name, kind: kind, queueIndex: queue, timesNs: s.points.map { Int64($0.time) },
                                values: s.points.map { Double($0.max) })
        }
        let activity = model.threadActivity
        var result = [series(activity.alive, "threads alive", .threadsAlive),
                      series(activity.running, "threads running", .threadsRunning),
                      series(activity.blocked, "threads blocked", .threadsBlocked)]
        for (i, q) in model.queues.enumerated() where !q.backlog.points.isEmpty {
            result.append(series(q.backlog, "backlog \(queueName(q))", .backlog, queue: i))
        }
        return result
    }

    /// The analysis' per-queue wait and run histograms (`QueueHistograms`), as report rows.
    func histograms() -> [ReportHistogram] {
        let bounds = QueueHistograms.boundsNs.map { Double($0) }  // not map(Double.init): that is init(bitPattern:)
        return QueueHistograms(model).queues.flatMap { h in
            [ReportHistogram(queueIndex: h.queue, metric: .wait, boundsNs: bounds, counts: h.wait),
             ReportHistogram(queueIndex: h.queue, metric: .run, boundsNs: bounds, counts: h.run)]
        }
    }

    // MARK: Tables (keys are the JSON summary's paths, docs/summary-schema.md)

    static func queueTable(_ stats: TraceStatistics) -> ReportTable {
        let columns = [
            ReportColumn(key: "name", title: "Queue"), ReportColumn(key: "kind", title: "Kind"),
            ReportColumn(key: "qos", title: "QoS"),
            ReportColumn(key: "items", title: "Items", unit: "count"),
            ReportColumn(key: "wait.p50Ns", title: "Wait p50", unit: "ns"),
            ReportColumn(key: "wait.p90Ns", title: "Wait p90", unit: "ns"),
            ReportColumn(key: "wait.p99Ns", title: "Wait p99", unit: "ns"),
            ReportColumn(key: "wait.maxNs", title: "Wait max", unit: "ns"),
            ReportColumn(key: "run.p50Ns", title: "Run p50", unit: "ns"),
            ReportColumn(key: "run.p90Ns", title: "Run p90", unit: "ns"),
            ReportColumn(key: "run.p99Ns", title: "Run p99", unit: "ns"),
            ReportColumn(key: "run.maxNs", title: "Run max", unit: "ns"),
            ReportColumn(key: "widthMax", title: "Width max", unit: "count"),
            ReportColumn(key: "backlogMax", title: "Backlog max", unit: "count"),
            ReportColumn(key: "busyShare", title: "Busy", unit: "%"),
            ReportColumn(key: "throughputPerSecond", title: "Throughput", unit: "items/s"),
        ]
        // Columns, not a row of cells per queue (416 bytes a queue: 374 MB at 900k queues).
        var table = QueueTableColumns(capacity: stats.queues.count)
        for q in stats.queues { table.append(q) }
        return ReportTable(id: "queues", title: "Queues", rowObject: .queue, columns: columns,
                           objects: table.objects, cells: table.cells)
    }

    static func threadTable(_ stats: TraceStatistics) -> ReportTable {
        let columns = [
            ReportColumn(key: "name", title: "Thread"), ReportColumn(key: "tid", title: "TID", unit: "id"),
            ReportColumn(key: "kind", title: "Kind"), ReportColumn(key: "items", title: "Items", unit: "count"),
            ReportColumn(key: "busyNs", title: "Busy", unit: "ns"),
            ReportColumn(key: "blockedNs", title: "Blocked", unit: "ns"),
            ReportColumn(key: "busyShare", title: "Busy share", unit: "%"),
            ReportColumn(key: "queues", title: "Queues served", unit: "count"),
        ]
        let rows = stats.threads.map { t in
            ReportRow(values: [
                .text(t.name), .number(Double(t.tid)), .text(t.kind.rawValue), .number(Double(t.items)),
                .number(Double(t.busyNs)), .number(Double(t.blockedNs)), .number(t.busyShare * 100),
                .number(Double(t.queues.count)),
            ], objectIndex: t.thread)
        }
        return ReportTable(id: "threads", title: "Threads", rowObject: .thread, columns: columns, rows: rows)
    }

    /// A finding whose range has no end (a deadlock lasts to the end of the trace) spans to `traceEnd`.
    /// A group of identical findings as one: the worst one's objects and message, the count.
    static func finding(_ g: FindingGroup, traceEnd: Int64) -> ReportFinding {
        let f = g.worst
        let severity: ReportSeverity = g.severity == .error ? .error : (g.severity == .warning ? .warning : .info)
        let endNs = f.end > f.start ? Int64(f.end) : max(traceEnd, Int64(f.start))
        var finding = ReportFinding(
            id: f.id, severity: severity, message: f.message, startNs: Int64(f.start), endNs: endNs,
            queues: f.objects.filter { $0.kind == .queue }.map(\.index),
            threads: f.objects.filter { $0.kind == .thread }.map(\.index),
            items: f.objects.filter { $0.kind == .item }.map(\.index),
            sites: f.objects.filter { $0.kind == .site }.map(\.index))
        finding.groupKey = g.id + "\u{1F}" + g.subject
        finding.count = g.count
        finding.stack = f.stack ?? []
        return finding
    }
}

/// The queues table's columns, filled queue by queue in one pass (key paths per cell made the
/// report's input phase four times slower at 900k queues).
private struct QueueTableColumns {
    var objects: [Int] = []
    /// Name, kind, QoS.
    var texts = [[String]](repeating: [], count: 3)
    /// Items, wait p50/p90/p99/max, run p50/p90/p99/max, width max, backlog max, busy %, throughput.
    var numbers = [[Double]](repeating: [], count: 13)
    var missing = [[Bool]](repeating: [], count: 13)

    init(capacity n: Int) {
        objects.reserveCapacity(n)
        for c in texts.indices { texts[c].reserveCapacity(n) }
        for c in numbers.indices { numbers[c].reserveCapacity(n); missing[c].reserveCapacity(n) }
    }

    mutating func append(_ q: QueueStats) {
        objects.append(q.queue)
        texts[0].append(q.name ?? q.label)
        texts[1].append(q.kind.rawValue)
        texts[2].append(q.qos)
        add(0, Double(q.items))
        // Percentiles of no durations are missing ("-"), as in `qtrace stats`.
        for (c, d) in [(1, q.wait), (5, q.run)] {
            add(c, Double(d.p50Ns), missing: d.count == 0)
            add(c + 1, Double(d.p90Ns), missing: d.count == 0)
            add(c + 2, Double(d.p99Ns), missing: d.count == 0)
            add(c + 3, Double(d.maxNs), missing: d.count == 0)
        }
        add(9, Double(q.widthMax))
        add(10, Double(q.backlogMax))
        add(11, q.busyShare * 100)
        add(12, q.throughputPerSecond)
    }

    private mutating func add(_ c: Int, _ value: Double, missing none: Bool = false) {
        numbers[c].append(value)
        missing[c].append(none)
    }

    var cells: [ReportCells] {
        let none = [Bool](repeating: false, count: objects.count)
        return texts.map { ReportCells.texts($0, missing: none) }
            + numbers.indices.map { ReportCells.numbers(numbers[$0], missing: missing[$0]) }
    }
}

extension Array {
    package subscript(safe index: Int?) -> Element? {
        guard let index, index >= 0, index < count else { return nil }
        return self[index]
    }
}
