// Several processes in one report: each process is analysed on its own, then their report
// inputs are concatenated here. Times move to a common origin (the earliest process start,
// by each process's wall clock), every index is offset past the processes before it, and
// every thread, queue and finding keeps the process it came from, so the viewer can draw a
// lane group per process.

import QTraceAnalysis

extension ReportInput {
    /// One report of `inputs` (each a single process, as `init(analysis:header:...)` makes
    /// them), in the given order. Processes whose start time is unknown (0) start at the
    /// common origin.
    public static func merged(_ inputs: [ReportInput]) -> ReportInput {
        guard inputs.count > 1 else { return inputs.first ?? ReportInput(meta: ReportMeta(title: "", durationNs: 0)) }
        let processes = inputs.map { $0.processes.first ?? ReportProcess(pid: $0.meta.pid, executable: $0.meta.title) }
        let known = processes.map(\.realtimeStartNs).filter { $0 > 0 }
        let origin = known.min() ?? 0
        var merged = ReportInput(meta: mergedMeta(inputs, processes))
        // One table per id, in first-seen order (a process without code identity has no CODE table).
        var tables: [MergedTable] = []
        for table in inputs.flatMap(\.stats) where !tables.contains(where: { $0.table.id == table.id }) {
            tables.append(MergedTable(template: table))
        }
        for (p, input) in inputs.enumerated() {
            var process = processes[p]
            process.offsetNs = process.realtimeStartNs > 0 ? process.realtimeStartNs - origin : 0
            let shift = ProcessShift(process: p, offsetNs: process.offsetNs, threads: merged.threads.count,
                                     queues: merged.queues.count, items: merged.items.count,
                                     sources: merged.sources.count, groups: merged.groups.count,
                                     codes: merged.codes.count, sites: merged.sites.count, tasks: merged.tasks.count)
            process.busiestQueue = shift.queue(process.busiestQueue)
            merged.processes.append(process)
            merged.append(input, shift: shift, title: process.title)
            merged.cpuFlames += input.cpuFlames.map { ReportFlame(queue: shift.queue($0.queue), item: shift.item($0.item), tree: $0.tree) }
            for table in input.stats {
                guard let t = tables.firstIndex(where: { $0.table.id == table.id }) else { continue }
                tables[t].append(table, shift: shift, processTitle: process.title)
            }
        }
        let totals = mergedThreadCounters(inputs, merged.processes)
        merged.meta.peakThreadsAlive = Int(totals.first { $0.kind == .threadsAlive }?.values.max() ?? -1)
        merged.counters = totals + processRunningCounters(inputs, merged.processes) + merged.counters
        merged.stats = [merged.processTable()] + tables.map(\.table)
        merged.meta.durationNs = merged.processes.map { $0.offsetNs + $0.durationNs }.max() ?? 0
        merged.findings = groupedAcrossProcesses(merged.findings, merged.processes)
        return merged
    }

    /// Identical findings of one executable in several processes (40 swift-driver children
    /// waiting at one call site) as one: the worst (longest) keeps its objects and message,
    /// the counts add up. Same key as `qtrace stats` (FindingGrouping), in first-seen order.
    static func groupedAcrossProcesses(_ findings: [ReportFinding], _ processes: [ReportProcess]) -> [ReportFinding] {
        var grouped: [ReportFinding] = []
        var slot: [String: Int] = [:]
        var seenProcesses: [Set<Int>] = []
        for f in findings {
            let executable = processes.indices.contains(f.process) ? processes[f.process].executable : ""
            let key = f.groupKey.isEmpty ? "\(grouped.count)" : f.groupKey + "\u{1F}" + executable
            guard let i = slot[key] else {
                slot[key] = grouped.count
                grouped.append(f)
                seenProcesses.append([f.process])
                continue
            }
            let count = grouped[i].count + f.count
            seenProcesses[i].insert(f.process)
            if f.endNs - f.startNs > grouped[i].endNs - grouped[i].startNs { grouped[i] = f }
            grouped[i].count = count
            grouped[i].processCount = seenProcesses[i].count
        }
        return grouped
    }

    /// The Processes table: a row per process, the analysis' figures (ReportProcess).
    private func processTable() -> ReportTable {
        func number(_ v: Int) -> ReportValue { v < 0 ? .missing : .number(Double(v)) }
        let columns = [
            ReportColumn(key: "pid", title: "PID", unit: "id"), ReportColumn(key: "executable", title: "Executable"),
            ReportColumn(key: "arguments", title: "Arguments"), ReportColumn(key: "duration_ns", title: "Duration", unit: "ns"),
            ReportColumn(key: "items", title: "Items", unit: "count"), ReportColumn(key: "threads", title: "Threads", unit: "count"),
            ReportColumn(key: "peak_threads_alive", title: "Peak alive", unit: "count"),
            ReportColumn(key: "busy_ns", title: "Threads busy", unit: "ns"),
            ReportColumn(key: "busiest_queue", title: "Busiest queue"), ReportColumn(key: "findings", title: "Findings", unit: "count"),
        ]
        let rows = processes.enumerated().map { p, process in
            let busiest = queues.indices.contains(process.busiestQueue) ? ReportValue.text(queues[process.busiestQueue].label) : .missing
            return ReportRow(values: [
                .number(Double(process.pid)), .text(process.executable), .text(process.arguments),
                .number(Double(process.durationNs)), number(process.items), number(process.threads),
                number(process.peakThreadsAlive), process.busyNs < 0 ? .missing : .number(Double(process.busyNs)),
                busiest, number(process.findings),
            ], objectIndex: p)
        }
        return ReportTable(id: "processes", title: "Processes", rowObject: .process, columns: columns, rows: rows)
    }

    private static func mergedMeta(_ inputs: [ReportInput], _ processes: [ReportProcess]) -> ReportMeta {
        let first = inputs[0].meta
        var meta = ReportMeta(
            title: "\(inputs.count) processes: " + executablesSummary(processes), commandLine: first.commandLine,
            pid: first.pid, ncpu: inputs.map(\.meta.ncpu).max() ?? 1, durationNs: 0,
            droppedEvents: inputs.map(\.meta.droppedEvents).reduce(0, +),
            shimOverheadNsPerEvent: first.shimOverheadNsPerEvent, qtraceVersion: first.qtraceVersion,
            dropReason: Set(inputs.map(\.meta.dropReason).filter { !$0.isEmpty }).sorted().joined(separator: ", "),
            invalidEvents: inputs.map(\.meta.invalidEvents).reduce(0, +))
        let windows = inputs.map(\.meta.flightRecorder).filter { !$0.isEmpty }
        meta.flightRecorder = windows.count == 1 ? windows[0] : windows.isEmpty ? "" : "\(windows.count) flight-recorder traces (each process's window: qtrace stats)"
        return meta
    }

    /// The distinct executables, most frequent first, with their counts ("swift-frontend ×30,
    /// swift-build"): a title of one line however many processes there are.
    static func executablesSummary(_ processes: [ReportProcess], shown: Int = 3) -> String {
        var counts: [String: Int] = [:], order: [String] = []
        for p in processes {
            let name = p.executable.isEmpty ? "?" : p.executable
            if counts[name] == nil { order.append(name) }
            counts[name, default: 0] += 1
        }
        let ranked = order.enumerated().sorted { (counts[$1.element]!, $1.offset) < (counts[$0.element]!, $0.offset) }.map(\.element)
        let named = ranked.prefix(shown).map { counts[$0]! > 1 ? "\($0) ×\(counts[$0]!)" : $0 }
        let others = ranked.dropFirst(shown).reduce(0) { $0 + counts[$1]! }
        return named.joined(separator: ", ") + (others > 0 ? ", \(others) more" : "")
    }

    /// Appends one process's input, moved by `shift`.
    private mutating func append(_ input: ReportInput, shift s: ProcessShift, title: String) {
        threads += input.threads.map { t in
            var thread = ReportThread(index: s.thread(t.index), tid: t.tid, name: t.name, kind: t.kind,
                                      startNs: s.time(t.startNs), endNs: s.time(t.endNs), process: s.process)
            (thread.items, thread.busyNs, thread.blockedNs) = (t.items, t.busyNs, t.blockedNs)
            return thread
        }
        queues += input.queues.map { q in
            var queue = ReportQueue(index: s.queue(q.index), label: q.label, kind: q.kind, qosName: q.qosName,
                                    targetIndex: s.queue(q.targetIndex), process: s.process)
            // The share stays over the queue's own process' trace (its Stats table's figure).
            (queue.items, queue.busyNs, queue.busyShare) = (q.items, q.busyNs, q.busyShare)
            return queue
        }
        queueTree += input.queueTree.map {
            ReportQueueTreeNode(queue: s.queue($0.queue), parent: s.queue($0.parent), subtreeBusyNs: $0.subtreeBusyNs)
        }
        appendSched(input, shift: s)
        appendItems(input.items, shift: s)
        appendCode(input, shift: s)
        blocked += input.blocked.map { b in
            ReportBlockedInterval(thread: s.thread(b.thread), startNs: s.time(b.startNs), endNs: s.time(b.endNs),
                                  cause: b.cause, objectLabel: b.objectLabel, item: s.item(b.item), site: s.site(b.site))
        }
        sources += input.sources.map { source in
            ReportSource(
                index: s.source(source.index), label: source.label, type: source.type, queueIndex: s.queue(source.queueIndex),
                handlerRuns: source.handlerRuns.map { ReportSourceRun(startNs: s.time($0.startNs), endNs: s.time($0.endNs), data: $0.data) },
                suspended: source.suspended.map { ReportSpan(startNs: s.time($0.startNs), endNs: s.time($0.endNs)) },
                events: source.events.map(s.time), cancelNs: s.time(source.cancelNs))
        }
        groups += input.groups.map { g in
            ReportGroup(index: s.group(g.index), label: g.label, firstEnterNs: s.time(g.firstEnterNs),
                        lastLeaveNs: s.time(g.lastLeaveNs), notifyNs: s.time(g.notifyNs), enters: g.enters, leaves: g.leaves)
        }
        annotations.marks += input.annotations.marks.map {
            ReportMark(timeNs: s.time($0.timeNs), thread: s.thread($0.thread), name: $0.name)
        }
        annotations.intervals += input.annotations.intervals.map {
            ReportInterval(startNs: s.time($0.startNs), endNs: s.time($0.endNs), thread: s.thread($0.thread), name: $0.name)
        }
        // Thread counts are summed over the processes (mergedThreadCounters); backlogs stay per queue.
        counters += input.counters.filter { $0.kind == .backlog || $0.kind == .other }.map { c in
            ReportCounterSeries(name: c.name, kind: c.kind, queueIndex: s.queue(c.queueIndex),
                                timesNs: c.timesNs.map(s.time), values: c.values)
        }
        histograms += input.histograms.map {
            ReportHistogram(queueIndex: s.queue($0.queueIndex), metric: $0.metric, boundsNs: $0.boundsNs, counts: $0.counts)
        }
        findings += input.findings.map { f in
            var shifted = ReportFinding(id: f.id, severity: f.severity, message: "\(title): \(f.message)", startNs: s.time(f.startNs),
                                        endNs: s.time(f.endNs), queues: f.queues.map(s.queue), threads: f.threads.map(s.thread),
                                        items: f.items.map(s.item), sites: f.sites.map(s.site), process: s.process)
            (shifted.groupKey, shifted.count, shifted.stack) = (f.groupKey, f.count, f.stack)
            return shifted
        }
    }

    /// Scheduling states (`--sched`): intervals moved like the threads, per-item times kept
    /// aligned with the items (0 for the items of processes recorded without them).
    private mutating func appendSched(_ input: ReportInput, shift s: ProcessShift) {
        guard input.sched != nil || sched != nil else { return }
        let before = [Int64](repeating: 0, count: s.items)
        var merged = sched ?? ReportSched(intervals: [], itemCpuNs: before, itemRunnableNs: before, itemSleepingNs: before)
        let zeros = [Int64](repeating: 0, count: input.items.count)
        let other = input.sched.flatMap { $0.itemCpuNs.count == input.items.count ? $0 : nil }
        merged.intervals += (input.sched?.intervals ?? []).map {
            ReportSchedInterval(thread: s.thread($0.thread), startNs: s.time($0.startNs), endNs: s.time($0.endNs), state: $0.state)
        }
        merged.itemCpuNs += other?.itemCpuNs ?? zeros
        merged.itemRunnableNs += other?.itemRunnableNs ?? zeros
        merged.itemSleepingNs += other?.itemSleepingNs ?? zeros
        sched = merged
    }

    private mutating func appendItems(_ other: ReportItems, shift s: ProcessShift) {
        items.reserveCapacity(items.count + other.count)
        for i in 0..<other.count {
            let item = other[i]
            items.append(ReportItem(
                queue: s.queue(item.queue), kind: item.kind, submitterThread: s.thread(item.submitterThread),
                thread: s.thread(item.thread), enqueueNs: s.time(item.enqueueNs), startNs: s.time(item.startNs),
                endNs: s.time(item.endNs), parent: s.item(item.parent), waitedBehind: s.item(item.waitedBehind),
                group: s.group(item.group), source: s.source(item.source), site: s.site(item.site),
                traceID: item.traceID, waitNs: item.waitNs, blockedInsideNs: item.blockedInsideNs,
                blockedInsideCauses: item.blockedInsideCauses))
        }
    }

    /// Codes, sites and tasks, their indexes moved past the processes before.
    private mutating func appendCode(_ input: ReportInput, shift s: ProcessShift) {
        codes += input.codes
        sites += input.sites.map { ReportSite(code: s.code($0.code), kind: $0.kind, from: $0.from, stack: $0.stack) }
        tasks += input.tasks.map { t in
            ReportTask(id: t.id, parent: s.task(t.parent), jobs: t.jobs.map(s.item), onMainActor: t.onMainActor,
                       functions: t.functions.map(s.code), runtime: t.runtime)
        }
        actors += input.actors.map { a in
            var shifted = a
            shifted.visits = a.visits.map {
                ReportActorVisit(startNs: s.time($0.startNs), endNs: s.time($0.endNs), waitNs: $0.waitNs, task: s.task($0.task))
            }
            return shifted
        }
    }

    /// "threads alive / running / blocked" of all processes together: each process's step
    /// series on the common axis, 0 after the process ended, summed (ProcessTotals).
    private static func mergedThreadCounters(_ inputs: [ReportInput], _ processes: [ReportProcess]) -> [ReportCounterSeries] {
        let kinds: [(ReportCounterKind, String)] = [(.threadsAlive, "threads alive"), (.threadsRunning, "threads running"),
                                                    (.threadsBlocked, "threads blocked")]
        return kinds.compactMap { kind, name in
            let parts = placedSeries(inputs, processes, kind)
            guard !parts.isEmpty else { return nil }
            let total = ProcessTotals.summed(parts)
            return ReportCounterSeries(name: name, kind: kind, timesNs: total.timesNs, values: total.values)
        }
    }

    /// Each process's running threads, for its collapsed lane group.
    private static func processRunningCounters(_ inputs: [ReportInput], _ processes: [ReportProcess]) -> [ReportCounterSeries] {
        inputs.indices.compactMap { p in
            guard let part = placedSeries([inputs[p]], [processes[p]], .threadsRunning).first else { return nil }
            let steps = ProcessTotals.summed([part])
            return ReportCounterSeries(name: "threads running \(processes[p].title)", kind: .processThreadsRunning,
                                       process: p, timesNs: steps.timesNs, values: steps.values)
        }
    }

    /// The processes' series of `kind`, moved to the common origin, each ending with its process.
    private static func placedSeries(_ inputs: [ReportInput], _ processes: [ReportProcess], _ kind: ReportCounterKind) -> [PlacedSteps] {
        zip(inputs, processes).compactMap { input, process in
            guard let series = input.counters.first(where: { $0.kind == kind }) else { return nil }
            return PlacedSteps(timesNs: series.timesNs.map { $0 + process.offsetNs }, values: series.values,
                               startNs: process.offsetNs, endNs: process.offsetNs + process.durationNs)
        }
    }
}

/// How one process's indexes and times move into the merged report.
private struct ProcessShift {
    var process: Int
    var offsetNs: Int64
    var threads: Int, queues: Int, items: Int, sources: Int, groups: Int
    var codes: Int, sites: Int, tasks: Int

    /// -1 (none, never) stays -1.
    func time(_ t: Int64) -> Int64 { t < 0 ? t : t + offsetNs }
    func thread(_ i: Int) -> Int { i < 0 ? i : i + threads }
    func queue(_ i: Int) -> Int { i < 0 ? i : i + queues }
    func item(_ i: Int) -> Int { i < 0 ? i : i + items }
    func source(_ i: Int) -> Int { i < 0 ? i : i + sources }
    func group(_ i: Int) -> Int { i < 0 ? i : i + groups }
    func code(_ i: Int) -> Int { i < 0 ? i : i + codes }
    func site(_ i: Int) -> Int { i < 0 ? i : i + sites }
    func task(_ i: Int) -> Int { i < 0 ? i : i + tasks }
}

/// A stats table of several processes: the first process's columns behind a "Process" column.
private struct MergedTable {
    var table: ReportTable

    init(template: ReportTable) {
        table = ReportTable(id: template.id, title: template.title, rowObject: template.rowObject,
                            columns: [ReportColumn(key: "process", title: "Process")] + template.columns, rows: [])
    }

    mutating func append(_ other: ReportTable, shift: ProcessShift, processTitle: String) {
        guard other.id == table.id else { return }
        table.rows += other.rows.map { row in
            let object: Int
            switch other.rowObject {
            case .queue: object = shift.queue(row.objectIndex)
            case .thread: object = shift.thread(row.objectIndex)
            case .source: object = shift.source(row.objectIndex)
            case .group: object = shift.group(row.objectIndex)
            case .code: object = shift.code(row.objectIndex)
            case .site: object = shift.site(row.objectIndex)
            case .task: object = shift.task(row.objectIndex)
            case .process: object = shift.process
            case .none: object = row.objectIndex
            }
            return ReportRow(values: [.text(processTitle)] + row.values, objectIndex: object)
        }
    }
}
