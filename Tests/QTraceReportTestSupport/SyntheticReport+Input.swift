// The derived parts of a synthetic report: counters, stats tables, histograms, sources,
// annotations and findings, computed from the simulated items the way the analysis would.
import QTraceAnalysis
import QTraceFormat
import QTraceViewModel

extension Simulation {
    mutating func makeInput() -> ReportInput {
        let end = traceEnd()
        for t in threads.indices {
            if threads[t].kind != .worker || workers.contains(where: { $0.thread == t }) { threads[t].endNs = end }
        }
        let sources = makeSources(end: end)
        var input = ReportInput(
            meta: ReportMeta(title: hostile ? "synthetic " + SyntheticReport.hostileLabels[1] : "synthetic workload",
                             commandLine: "./synthetic --items \(itemCount) --workers \(maxWorkers)", pid: 4242,
                             ncpu: ncpu, durationNs: end, droppedEvents: 0, shimOverheadNsPerEvent: 31.5,
                             qtraceVersion: "0.1.0"),
            threads: threads, queues: queues, items: items, blocked: blocked, sources: sources, groups: groups,
            annotations: makeAnnotations(end: end))
        SyntheticReport.setAnalysisFigures(&input)
        input.counters = makeCounters(end: end)
        input.stats = [queueTable(end: end, figures: input.queues), threadTable(figures: input.threads)]
        input.histograms = makeHistograms()
        input.findings = makeFindings(input)
        if codeIdentity { addCodeIdentity(&input) }
        return input
    }

    func traceEnd() -> Int64 {
        var end: Int64 = 0
        for i in 0..<items.count { end = max(end, items.endNs[i]) }
        return end + 50_000
    }

    var timerQueue: Int { queues.count > 6 ? 6 : 1 }

    func makeSources(end: Int64) -> [ReportSource] {
        let label = hostile ? SyntheticReport.hostileLabels[2] : "com.example.tick"
        var fires: [Int64] = []
        var t: Int64 = 1_000_000
        while t < end {
            fires.append(t)
            t += 1_000_000
        }
        let suspended = suspendedWindow
        return [
            ReportSource(index: 0, label: label, type: "timer", queueIndex: timerQueue, handlerRuns: timerRuns,
                         suspended: [ReportSpan(startNs: suspended.lowerBound, endNs: suspended.upperBound)], events: fires),
            ReportSource(index: 1, label: "com.example.events", type: "data add", queueIndex: 2,
                         suspended: [ReportSpan(startNs: end / 10, endNs: end)]),
        ]
    }

    func makeAnnotations(end: Int64) -> ReportAnnotations {
        var marks: [ReportMark] = []
        for k in 1..<10 {
            let name = hostile && k == 5 ? SyntheticReport.hostileLabels[0] : "checkpoint \(k)"
            marks.append(ReportMark(timeNs: end * Int64(k) / 10, thread: 0, name: name))
        }
        let third = end / 3
        let intervals = [
            ReportInterval(startNs: 0, endNs: third, thread: 0, name: "load"),
            ReportInterval(startNs: third / 4, endNs: third * 3 / 4, thread: 0, name: "parse"),
            ReportInterval(startNs: third, endNs: 2 * third, thread: 0, name: "process"),
            ReportInterval(startNs: 2 * third, endNs: end, thread: 0, name: "save"),
        ]
        return ReportAnnotations(marks: marks, intervals: intervals)
    }

    // MARK: Counters

    /// A step series from +1/-1 changes.
    static func steps(_ changes: [(time: Int64, delta: Int32)], name: String, kind: ReportCounterKind,
                      queue: Int = -1) -> ReportCounterSeries {
        let sorted = changes.sorted { $0.time < $1.time }
        var times: [Int64] = [0], values: [Double] = [0]
        var value: Int64 = 0
        for c in sorted {
            value += Int64(c.delta)
            if times.last == c.time {
                values[values.count - 1] = Double(value)
            } else {
                times.append(c.time)
                values.append(Double(value))
            }
        }
        return ReportCounterSeries(name: name, kind: kind, queueIndex: queue, timesNs: times, values: values)
    }

    func makeCounters(end: Int64) -> [ReportCounterSeries] {
        var alive: [(time: Int64, delta: Int32)] = []
        for t in threads {
            alive.append((t.startNs, 1))
            if t.endNs < end { alive.append((t.endNs, -1)) }
        }
        var inside: [(time: Int64, delta: Int32)] = []
        var blockedChanges: [(time: Int64, delta: Int32)] = []
        var backlog = [[(time: Int64, delta: Int32)]](repeating: [], count: queues.count)
        for i in 0..<items.count {
            let q = Int(items.queue[i])
            backlog[q].append((items.enqueueNs[i], 1))
            backlog[q].append((items.startNs[i], -1))
            if items.kind[i] != .sync {
                inside.append((items.startNs[i], 1))
                inside.append((items.endNs[i], -1))
            }
        }
        for b in blocked {
            blockedChanges.append((b.startNs, 1))
            blockedChanges.append((b.endNs, -1))
        }
        let running = inside + blockedChanges.map { ($0.time, -$0.delta) }
        var series = [
            Simulation.steps(alive, name: "threads alive", kind: .threadsAlive),
            Simulation.steps(running, name: "threads running", kind: .threadsRunning),
            Simulation.steps(blockedChanges, name: "threads blocked", kind: .threadsBlocked),
        ]
        for q in queues.indices where !backlog[q].isEmpty {
            series.append(Simulation.steps(backlog[q], name: "backlog " + queues[q].label, kind: .backlog, queue: q))
        }
        return series
    }

    // MARK: Stats

    static func percentile(_ sorted: [Int64], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return Double(sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))])
    }

    func queueTable(end: Int64, figures: [ReportQueue]) -> ReportTable {
        var waits = [[Int64]](repeating: [], count: queues.count)
        var runs = [[Int64]](repeating: [], count: queues.count)
        for i in 0..<items.count {
            let q = Int(items.queue[i])
            waits[q].append(items.startNs[i] - items.enqueueNs[i])
            runs[q].append(items.endNs[i] - items.startNs[i])
        }
        let columns = [
            ReportColumn(key: "queue", title: "Queue"), ReportColumn(key: "kind", title: "Kind"),
            ReportColumn(key: "items", title: "Items", unit: "count"),
            ReportColumn(key: "wait_p50_ns", title: "Wait p50", unit: "ns"),
            ReportColumn(key: "wait_p90_ns", title: "Wait p90", unit: "ns"),
            ReportColumn(key: "wait_p99_ns", title: "Wait p99", unit: "ns"),
            ReportColumn(key: "wait_max_ns", title: "Wait max", unit: "ns"),
            ReportColumn(key: "run_p50_ns", title: "Run p50", unit: "ns"),
            ReportColumn(key: "run_p90_ns", title: "Run p90", unit: "ns"),
            ReportColumn(key: "run_p99_ns", title: "Run p99", unit: "ns"),
            ReportColumn(key: "run_max_ns", title: "Run max", unit: "ns"),
            ReportColumn(key: "busy_pct", title: "Busy", unit: "%"),
            ReportColumn(key: "throughput", title: "Throughput", unit: "items/s"),
        ]
        var rows: [ReportRow] = []
        for q in queues.indices where !runs[q].isEmpty {
            let w = waits[q].sorted(), r = runs[q].sorted()
            let busy = figures[q].busyShare * 100
            rows.append(ReportRow(values: [
                .text(queues[q].label), .text(queues[q].kind.rawValue), .number(Double(r.count)),
                .number(Simulation.percentile(w, 0.5)), .number(Simulation.percentile(w, 0.9)),
                .number(Simulation.percentile(w, 0.99)), .number(Double(w.last ?? 0)),
                .number(Simulation.percentile(r, 0.5)), .number(Simulation.percentile(r, 0.9)),
                .number(Simulation.percentile(r, 0.99)), .number(Double(r.last ?? 0)),
                .number((busy * 100).rounded() / 100), .number(Double(r.count) / (Double(end) / 1e9)),
            ], objectIndex: q))
        }
        return ReportTable(id: "queues", title: "Queues", rowObject: .queue, columns: columns, rows: rows)
    }

    /// The threads' table of the analysis' figures (setAnalysisFigures).
    func threadTable(figures: [ReportThread]) -> ReportTable {
        let columns = [
            ReportColumn(key: "thread", title: "Thread"), ReportColumn(key: "tid", title: "TID", unit: "id"),
            ReportColumn(key: "kind", title: "Kind"), ReportColumn(key: "items", title: "Items", unit: "count"),
            ReportColumn(key: "busy_ns", title: "Busy", unit: "ns"),
            ReportColumn(key: "blocked_ns", title: "Blocked", unit: "ns"),
            ReportColumn(key: "lifetime_ns", title: "Lifetime", unit: "ns"),
        ]
        let rows = threads.map { t in
            ReportRow(values: [
                .text(t.name), .number(Double(t.tid)), .text(t.kind.rawValue), .number(Double(figures[t.index].items)),
                .number(Double(figures[t.index].busyNs)), .number(Double(figures[t.index].blockedNs)),
                .number(Double(t.endNs - t.startNs)),
            ], objectIndex: t.index)
        }
        return ReportTable(id: "threads", title: "Threads", rowObject: .thread, columns: columns, rows: rows)
    }

    func makeHistograms() -> [ReportHistogram] {
        let bounds = (8...31).map { Double(Int64(1) << Int64($0)) }
        func bucket(_ v: Int64) -> Int {
            var b = 0
            while b + 1 < bounds.count - 1, Double(v) >= bounds[b + 1] { b += 1 }
            return b
        }
        var wait = [[Int]](repeating: Array(repeating: 0, count: bounds.count - 1), count: queues.count)
        var run = wait
        for i in 0..<items.count {
            let q = Int(items.queue[i])
            wait[q][bucket(items.startNs[i] - items.enqueueNs[i])] += 1
            run[q][bucket(items.endNs[i] - items.startNs[i])] += 1
        }
        var out: [ReportHistogram] = []
        for q in queues.indices where run[q].contains(where: { $0 > 0 }) {
            out.append(ReportHistogram(queueIndex: q, metric: .wait, boundsNs: bounds, counts: wait[q]))
            out.append(ReportHistogram(queueIndex: q, metric: .run, boundsNs: bounds, counts: run[q]))
        }
        return out
    }

    // MARK: Findings

    func makeFindings(_ input: ReportInput) -> [ReportFinding] {
        var findings: [ReportFinding] = []
        if let longest = blocked.filter({ $0.thread == 0 }).max(by: { $0.endNs - $0.startNs < $1.endNs - $1.startNs }) {
            let ms = Double(longest.endNs - longest.startNs) / 1e6
            let q = longest.item >= 0 ? Int(items.queue[longest.item]) : -1
            findings.append(ReportFinding(
                id: "main-thread-blocked", severity: ms > 16 ? .error : .warning,
                message: "The main thread waited \(formatMs(ms)) in sync onto \(longest.objectLabel)",
                startNs: longest.startNs, endNs: longest.endNs, queues: q >= 0 ? [q] : [], threads: [0],
                items: longest.item >= 0 ? [longest.item] : []))
        }
        if let alive = input.counters.first(where: { $0.kind == .threadsAlive }),
           let peak = alive.values.indices.max(by: { alive.values[$0] < alive.values[$1] }),
           alive.values[peak] > Double(ncpu + 2)
        {
            let t = alive.timesNs[peak]
            let involved = threads.filter { $0.kind == .worker && $0.startNs <= t && $0.endNs >= t }.map(\.index)
            findings.append(ReportFinding(
                id: "thread-explosion", severity: .warning,
                message: "\(Int(alive.values[peak]) - 2) worker threads alive on \(ncpu) CPUs: items block inside (semaphore waits)",
                startNs: max(0, t - 2_000_000), endNs: t + 2_000_000, threads: involved))
        }
        var longestSerial = -1
        for i in 0..<items.count where queues[Int(items.queue[i])].kind == .serial {
            if longestSerial < 0 || items.endNs[i] - items.startNs[i] > items.endNs[longestSerial] - items.startNs[longestSerial] {
                longestSerial = i
            }
        }
        if longestSerial >= 0 {
            let q = Int(items.queue[longestSerial])
            let ms = Double(items.endNs[longestSerial] - items.startNs[longestSerial]) / 1e6
            findings.append(ReportFinding(
                id: "serial-queue-blocked", severity: .warning,
                message: "An item ran \(formatMs(ms)) on serial queue \(queues[q].label) while later items waited behind it",
                startNs: items.startNs[longestSerial], endNs: items.endNs[longestSerial], queues: [q],
                items: [longestSerial]))
        }
        if let run = timerRuns.first(where: { $0.data > 1 }) {
            findings.append(ReportFinding(
                id: "timer-coalesced", severity: .info,
                message: "Timer handler ran with data=\(run.data): \(run.data - 1) fires were merged while the source was suspended",
                startNs: suspendedWindow.lowerBound, endNs: run.endNs, queues: [timerQueue]))
        }
        findings.append(ReportFinding(
            id: "source-never-resumed", severity: .warning,
            message: "Source com.example.events (data add) was suspended at the end of the trace",
            startNs: input.meta.durationNs / 10, endNs: input.meta.durationNs, queues: [2]))
        return findings
    }

    func formatMs(_ ms: Double) -> String {
        let rounded = (ms * 100).rounded() / 100
        return "\(rounded) ms"
    }

    /// When the timer source is suspended (see run()).
    var suspendedWindow: Range<Int64> {
        let from = Int64(meanGapNs * Double(itemCount) * 0.4)
        return from..<(from + 4_000_000)
    }
}

extension SyntheticReport {
    /// Sets the figures the analysis gives a real report (docs/report-data.md, Definitions), by
    /// the analysis' own functions over the input's items and blocked intervals: each item's
    /// blocked time inside it, each thread's items, busy and blocked time (`BlockedInside`),
    /// each queue's items, busy time and share (`busyTime`, `share`).
    public static func setAnalysisFigures(_ input: inout ReportInput) {
        let items = input.items, traceEnd = max(0, input.meta.durationNs)
        var runs: [BlockedInside.Run] = []
        var queueRuns = [[Span]](repeating: [], count: input.queues.count)
        var queueItems = [Int](repeating: 0, count: input.queues.count)
        var threadItems = [Int](repeating: 0, count: input.threads.count)
        runs.reserveCapacity(items.count)
        for i in 0..<items.count {
            let q = Int(items.queue[i]), t = Int(items.thread[i]), start = items.startNs[i]
            if queueItems.indices.contains(q) { queueItems[q] += 1 }
            guard start >= 0 else { runs.append(BlockedInside.Run(thread: -1, start: 0, end: 0)); continue }
            if threadItems.indices.contains(t) { threadItems[t] += 1 }
            let run = Span(start: UInt64(start), end: UInt64(max(start, items.endNs[i] < 0 ? traceEnd : items.endNs[i])))
            runs.append(BlockedInside.Run(thread: t, start: run.start, end: run.end))
            if queueRuns.indices.contains(q) { queueRuns[q].append(run) }
        }
        let waits = input.blocked.map {
            BlockedInside.Wait(thread: $0.thread, start: UInt64($0.startNs), end: UInt64(max($0.startNs, $0.endNs)), cause: $0.cause.rawValue)
        }
        let frames = BlockedInside(runs: runs, waits: waits, threads: input.threads.count)
        input.items.blockedInsideNs = frames.ns.map { Int64(clamping: $0) }
        input.items.blockedInsideCauses = frames.causeMasks
        for t in input.threads.indices {
            (input.threads[t].items, input.threads[t].busyNs) = (threadItems[t], Int64(clamping: frames.threadBusyNs[t]))
            input.threads[t].blockedNs = Int64(clamping: frames.threadBlockedNs[t])
        }
        for q in input.queues.indices {
            let busy = busyTime(queueRuns[q])
            (input.queues[q].items, input.queues[q].busyNs) = (queueItems[q], Int64(clamping: busy))
            input.queues[q].busyShare = share(busy, of: UInt64(traceEnd))
        }
        input.queueTree = QueueTreeNode.forest(input.queues.map(forestQueue)).map {
            ReportQueueTreeNode(queue: $0.queue, parent: $0.parent ?? -1, subtreeBusyNs: Int64(clamping: $0.subtreeBusyNs))
        }
    }

    /// What the analysis' forest needs of a queue with its figures set.
    static func forestQueue(_ q: ReportQueue) -> QueueTreeNode.Queue {
        let kind: QueueKind = switch q.kind {
        case .serial: .serial
        case .concurrent: .concurrent
        case .main: .main
        case .global: .global
        }
        return QueueTreeNode.Queue(target: q.targetIndex >= 0 ? q.targetIndex : nil, kind: kind,
                                   qos: QoSClass.allCases.first { $0.name == q.qosName } ?? .unspecified, label: q.label,
                                   items: q.items, busyNs: UInt64(max(0, q.busyNs)))
    }
}
