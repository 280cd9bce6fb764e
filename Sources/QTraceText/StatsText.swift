// The terminal rendering of `qtrace stats`: short tables that fit `width` columns. All text
// from the trace goes through terminalSafe (TextTable does it for cells).
import QTraceAnalysis
import QTraceFormat

public enum StatsText {
    /// `limit` caps the rows of the queue and thread tables (0 = all).
    /// `by` chooses the tables: queues and threads (with the top codes), codes and blocking
    /// calls, or tasks.
    public static func render(_ result: AnalysisResult, tracePath: String?, width: Int = 100, limit: Int = 20,
                              by grouping: StatsGrouping = .queue) -> String {
        var out = ""
        let model = result.model, stats = result.statistics
        out += header(model, stats, tracePath: tracePath)
        switch grouping {
        case .code:
            out += codes(model, stats, width: width, limit: limit)
            out += codesByWait(model, stats, width: width, limit: limit > 0 ? Swift.min(limit, 10) : 0)
            out += operations(model, stats, width: width, limit: limit)
            out += waitSites(model, stats, width: width, limit: limit)
            if stats.sites.isEmpty { out += section("CODE") + "  (the trace records no code sites: recorded by a qtrace before 1.4?)\n" }
            return out + findings(result.findings, width: width, limit: limit)
        case .task:
            out += tasks(model, stats, width: width, limit: limit)
            if stats.tasks.tasks == 0 { out += section("TASKS") + "  (no Swift Concurrency tasks in this trace)\n" }
            out += actors(stats, width: width, limit: limit)
            return out + findings(result.findings, width: width, limit: limit)
        case .actor:
            out += actors(stats, width: width, limit: limit)
            if stats.actors.isEmpty { out += section("ACTORS") + "  (no actor hops in this trace: no actors, or recorded by a qtrace before format 1.7)\n" }
            return out + findings(result.findings, width: width, limit: limit)
        case .queue:
            break
        }
        out += queues(model, stats, width: width, limit: limit)
        // The secondary tables show fewer rows: the default output stays under ~200 lines
        // however many objects the program made (StatsTextBoundsTests).
        out += codes(model, stats, width: width, limit: fewer(limit))
        out += waitCauses(model, stats, width: width, limit: fewer(limit))
        out += queueTree(model, stats, width: width, limit: fewer(limit))
        out += threads(model, stats, width: width, limit: limit)
        out += scheduling(model, stats, width: width, limit: fewer(limit))
        out += mainThread(model, stats)
        out += sources(model, stats, width: width, limit: fewer(limit))
        out += groupsAndSemaphores(stats, width: width, limit: fewer(limit))
        out += applies(model, stats, width: width, limit: fewer(limit))
        out += waitSites(model, stats, width: width, limit: fewer(limit))
        out += tasks(model, stats, width: width, limit: fewer(limit))
        out += actors(stats, width: width, limit: fewer(limit))
        out += findings(result.findings, width: width, limit: limit)
        return out
    }

    static func header(_ model: TraceModel, _ stats: TraceStatistics, tracePath: String?) -> String {
        var lines: [String] = []
        if let tracePath { lines.append("trace      " + terminalSafe(tracePath)) }
        if !model.info.commandLine.isEmpty || !model.info.executable.isEmpty {
            let command = model.info.commandLine.isEmpty ? model.info.executable : model.info.commandLine
            lines.append("program    " + terminalSafe(command) + (model.info.pid != 0 ? "  (pid \(model.info.pid))" : ""))
        }
        lines.append("duration   \(durationText(model, stats)), \(stats.events) events, \(stats.items) items, \(model.queues.count) queues, \(model.threads.count) threads, \(model.info.ncpu) CPUs")
        let o = stats.overhead
        var overhead = "tracing    ~\(formatDuration(o.estimatedNs)) recorder time (\(o.shimOverheadNsPerEvent) ns/event)"
        if o.droppedEvents > 0 {
            overhead += ", \(o.droppedEvents) events DROPPED" + (model.info.dropReason.map { ": " + $0 } ?? "")
        }
        lines.append(overhead)
        if let window = model.info.flightRecorder { lines.append("window     " + window.summaryLine) }
        let invalid = model.info.invalidEvents
        if invalid > 0 { lines.append("WARNING    " + inconsistentTraceMessage(invalid)) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The run's duration; for a flight-recorder snapshot that lost its start, the window it
    /// holds completely (the run's own length is on the `window` line).
    static func durationText(_ model: TraceModel, _ stats: TraceStatistics) -> String {
        guard let window = model.info.flightRecorder, window.overwrittenEvents > 0 else { return formatDuration(stats.durationNs) }
        return formatDuration(window.completeNs) + " (the window)"
    }

    static func section(_ title: String) -> String { "\n" + title + "\n" }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)" + (n == 1 ? "" : word.hasSuffix("s") ? "es" : "s") }

    /// Queues with items, busiest first.
    /// Indices into `stats.queues`, busiest first.
    static func activeQueues(_ stats: TraceStatistics) -> [Int] { stats.queueIndicesByBusyTime }

    static func limited<T>(_ rows: [T], _ limit: Int) -> (shown: [T], hidden: Int) {
        limit > 0 && rows.count > limit ? (Array(rows.prefix(limit)), rows.count - limit) : (rows, 0)
    }

    /// The rows of a secondary table: at most 10 by default (0 = all, with --all).
    static func fewer(_ limit: Int) -> Int { limit > 0 ? Swift.min(limit, 10) : 0 }

    static func more(_ hidden: Int, _ what: String) -> String {
        hidden > 0 ? "  ... \(hidden) more \(what) (--all shows them)\n" : ""
    }

    static func d(_ ns: UInt64, _ count: Int) -> String { count == 0 ? "-" : formatDuration(ns) }

    static func queues(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        let rows = activeQueues(stats)
        guard !rows.isEmpty else { return section("QUEUES") + "  (no work items)\n" }
        var table = TextTable(["queue", "kind", "items", "wait p50", "wait p99", "run p50", "run p99", "run max", "busy",
                               "width", "backlog"])
        let (shown, hidden) = limited(rows, limit)
        for q in shown.map({ stats.queues[$0] }) {
            table.add([queueName(model.queues[q.queue]), q.kind == .concurrent ? "conc" : q.kind.rawValue, "\(q.items)",
                       d(q.wait.p50Ns, q.wait.count), d(q.wait.p99Ns, q.wait.count),
                       d(q.run.p50Ns, q.run.count), d(q.run.p99Ns, q.run.count), runMax(q),
                       formatPercent(q.busyShare), "\(q.widthMax)", "\(q.backlogMax)"])
        }
        return section("QUEUES (busiest first; wait = ready to start, run = start to end)")
            + table.render(width: width, leftAligned: [0, 1], middleCut: [0]) + more(hidden, "queues")
    }

    /// The longest run, or "≥ X running" when an item still running at the end ran longer.
    static func runMax(_ q: QueueStats) -> String {
        if let running = q.runningAtEndLongestNs, q.run.count == 0 || running > q.run.maxNs {
            return "≥" + formatDuration(running) + " running"
        }
        return d(q.run.maxNs, q.run.count)
    }

    static func waitCauses(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        // Indices: the statistics are ~500 bytes a queue, and only `limit` rows are shown.
        let totals = stats.queues.map { $0.waitByCause.totalNs }
        let rows = activeQueues(stats).filter { totals[$0] > 0 }.sorted { totals[$0] != totals[$1] ? totals[$0] > totals[$1] : $0 < $1 }
        guard !rows.isEmpty else { return "" }
        var table = TextTable(["queue", "total", "previous", "barrier", "suspended", "thread", "longest behind"])
        let (shown, hidden) = limited(rows, limit)
        for q in shown.map({ stats.queues[$0] }) {
            let w = q.waitByCause
            let total = w.totalNs
            func part(_ ns: UInt64) -> String { ns == 0 ? "-" : formatPercent(Double(ns) / Double(total)) }
            var worst = "-"
            if let b = q.worstWaitBehind {
                worst = "\(formatDuration(b.waitNs)) behind \(itemReference(model, b.blocker)) (started \(formatDuration(model.items[b.blocker].startTime)))"
            }
            table.add([queueName(model.queues[q.queue]), formatDuration(total), part(w.behindPreviousNs),
                       part(w.behindBarrierNs), part(w.suspendedNs), part(w.threadNs + w.unattributedNs), worst])
        }
        return section("WAIT BY CAUSE (behind the previous item or a barrier, suspended, for a thread)")
            + table.render(width: width, leftAligned: [0, 6], middleCut: [0]) + more(hidden, "queues")
    }

    static func queueTree(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        // Only subtrees with work, and only when some queue targets another non-root queue or
        // several private queues share a target: otherwise the queue table says it all.
        let nodes = stats.queueTree.filter { $0.subtreeItems > 0 }
        guard nodes.contains(where: { $0.depth >= 2 }) else { return "" }
        var table = TextTable(["target tree", "queues", "items", "run total", "busy"])
        let (shown, hidden) = limited(nodes, limit > 0 ? limit * 2 : 0)
        for n in shown {
            let name = String(repeating: "  ", count: n.depth) + queueName(model.queues[n.queue])
            table.add([name, "\(n.subtreeQueues)", "\(n.subtreeItems)", formatDuration(n.subtreeRunNs),
                       formatPercent(Double(n.subtreeBusyNs) / Double(max(stats.durationNs, 1)))])
        }
        return section("TARGET QUEUES (rolled up)") + table.render(width: width, middleCut: [0]) + more(hidden, "rows")
    }

    static func threads(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        let c = stats.threadCounts
        var out = section("THREADS")
        out += "  \(c.seen) seen (\(plural(c.workers, "worker"))), \(c.created) created, \(c.exited) exited; peak \(c.peakAlive) alive, \(c.peakRunning) running, \(c.peakBlocked) blocked, \(plural(c.peakWorkers, "worker"))\n"
        let rows = stats.threads.filter(\.ranOrBlocked)
            .sorted { $0.busyNs != $1.busyNs ? $0.busyNs > $1.busyNs : $0.thread < $1.thread }
        guard !rows.isEmpty else { return out }
        var table = TextTable(["thread", "kind", "items", "busy", "blocked", "queues served"])
        let (shown, hidden) = limited(rows, limit)
        for t in shown {
            let served = t.queues.prefix(3).map { queueName(model.queues[$0.queue]) }.joined(separator: ", ")
                + (t.queues.count > 3 ? ", +\(t.queues.count - 3)" : "")
            table.add([threadName(model.threads[t.thread]), t.kind.rawValue, "\(t.items)",
                       "\(formatDuration(t.busyNs)) (\(formatPercent(t.busyShare)))", d(t.blockedNs, t.blockedNs > 0 ? 1 : 0),
                       served])
        }
        return out + table.render(width: width, leftAligned: [0, 1, 5], middleCut: [0]) + more(hidden, "threads")
    }

    static func mainThread(_ model: TraceModel, _ stats: TraceStatistics) -> String {
        let m = stats.mainThread
        guard m.thread != nil, m.items > 0 || m.blockingCalls > 0 else { return "" }
        var out = section("MAIN THREAD")
        out += "  \(plural(m.items, "item")): run p50 \(d(m.run.p50Ns, m.run.count)), p95 \(d(m.run.p95Ns, m.run.count)), max \(d(m.run.maxNs, m.run.count)); \(m.itemsOverFrame) over 16 ms, \(m.itemsOverHang) over 100 ms\n"
        if m.wait.count > 0 { out += "  main-queue latency p50 \(formatDuration(m.wait.p50Ns)), p99 \(formatDuration(m.wait.p99Ns))\n" }
        out += "  busy \(formatPercent(m.busyShare)); blocked \(formatDuration(m.blockedNs)) in \(m.blockingCalls) calls\n"
        for item in m.longestItems.prefix(3) {
            let queue = item.queue.map { queueName(model.queues[$0]) } ?? "no queue"
            out += "  longest: \(formatDuration(item.runNs)) at \(formatDuration(item.startNs)) (\(itemReference(model, item.item)), \(terminalSafe(queue)))\n"
        }
        return out
    }

    static func sources(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        guard !stats.sources.isEmpty else { return "" }
        var table = TextTable(["source", "queue", "runs", "coalesced", "max data", "handler p50", "delay p99", "late p99"])
        let (shown, hidden) = limited(stats.sourcesByRuns, limit)
        for s in shown {
            let src = model.sources[s.source]
            // The code its handler runs names it best (a RunLoop Timer's closure); else its address.
            let handler = src.eventHandlerSite.flatMap { model.sites[$0].codeIndex }.map { model.codes[$0].name }
            table.add(["\(s.type) " + (handler ?? "0x" + String(src.address, radix: 16)), s.queue.map { queueName(model.queues[$0]) } ?? "-",
                       "\(s.eventRuns)", "\(s.coalescedRuns)", "\(s.maxData)", d(s.handlerRun.p50Ns, s.handlerRun.count),
                       d(s.delay.p99Ns, s.delay.count), d(s.lateness.p99Ns, s.lateness.count)])
        }
        return section("SOURCES (most handler runs first)") + table.render(width: width, leftAligned: [0, 1], middleCut: [1])
            + more(hidden, "sources")
    }

    static func groupsAndSemaphores(_ stats: TraceStatistics, width: Int, limit: Int) -> String {
        var out = ""
        if !stats.groups.isEmpty {
            var table = TextTable(["group", "enters", "leaves", "open", "enter→leave", "leave→notify", "waits"])
            let (shown, hidden) = limited(stats.groupIndicesByEnters, limit)
            for g in shown.lazy.map({ stats.groups[$0] }) {
                table.add([g.address, "\(g.enters)", "\(g.leaves)", "\(g.outstanding)",
                           g.enterToLeaveNs.map(formatDuration) ?? "-", g.leaveToNotifyNs.map(formatDuration) ?? "-",
                           "\(g.waits)"])
            }
            out += section("GROUPS (most enters first)") + table.render(width: width) + more(hidden, "groups")
        }
        if !stats.semaphores.isEmpty {
            var table = TextTable(["semaphore", "waits", "blocked", "timed out", "blocked p50", "max", "signals"])
            let (shown, hidden) = limited(stats.semaphoresByBlockedTime, limit)
            for s in shown {
                table.add([s.address, "\(s.waits)", "\(s.blockedWaits)", "\(s.timedOutWaits)",
                           d(s.blocked.p50Ns, s.blocked.count), d(s.blocked.maxNs, s.blocked.count), "\(s.signals)"])
            }
            out += section("SEMAPHORES (longest blocked first)") + table.render(width: width) + more(hidden, "semaphores")
        }
        return out
    }

    static func applies(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        guard !stats.applies.isEmpty else { return "" }
        var table = TextTable(["apply (concurrentPerform, dispatch_apply)", "iterations", "span", "threads", "width", "speedup"])
        let (shown, hidden) = limited(stats.appliesBySpan, limit)
        for a in shown {
            table.add(["#\(a.apply) from " + threadName(model.threads[a.callerThread]), "\(a.iterationsRun)/\(a.iterations)",
                       a.spanNs.map(formatDuration) ?? "-", "\(a.threads.count)", "\(a.maxWidth)",
                       String((a.speedup * 100).rounded() / 100) + "x"])
        }
        return section("APPLY (longest first)") + table.render(width: width) + more(hidden, "applies")
    }

    /// The findings of one process, identical ones grouped (FindingGrouping).
    static func findings(_ findings: [Finding], width: Int, limit: Int) -> String {
        findingGroups(FindingGrouping.groups([("", 0, findings)]), acrossProcesses: false, limit: limit)
    }

    /// One line per group: severity, rule, how many and where, then the worst case's message
    /// (what happened, why it matters, what to change).
    static func findingGroups(_ groups: [FindingGroup], acrossProcesses: Bool, limit: Int = 0) -> String {
        var out = section(acrossProcesses ? "FINDINGS (all processes; the same rule, code site or queue and executable grouped)"
                                          : "FINDINGS")
        guard !groups.isEmpty else { return out + "  none\n" }
        let (shown, hidden) = limited(groups, limit)
        for g in shown {
            var count = g.count > 1 ? " ×\(g.count)" : ""
            if acrossProcesses {
                let processes = g.pids.count == 1 ? "pid \(g.pids[0])" : "\(g.pids.count) processes"
                count += " (\(processes) of \(g.executable.isEmpty ? "?" : g.executable))"
            }
            let worst = g.count > 1 ? "worst: " : ""
            out += "  \(g.severity.rawValue.uppercased()) \(g.id)\(count): " + worst + terminalSafe(g.worst.message) + "\n"
        }
        return out + more(hidden, "findings")
    }

    // MARK: Recordings of several processes

    /// The overview above the per-process sections: the PROCESSES table, the total and the
    /// findings of all processes grouped.
    public static func renderRecording(_ overview: RecordingOverview, width: Int = 100, limit: Int = 20) -> String {
        let t = overview.total
        var out = "recording  \(plural(t.processes, "process")) over \(formatDuration(t.spanNs)): \(t.items) items, "
            + "\(t.threadsSeen) threads (at most \(t.peakThreadsAliveAtOnce) alive at once), findings \(t.findings.error) errors, \(t.findings.warning) warnings, "
            + "\(t.findings.info) info (\(plural(t.findingGroups, "group")))\n"
        var table = TextTable(["pid", "program", "arguments", "start", "duration", "items", "threads", "peak",
                               "busiest queue", "findings"])
        let start = overview.processes.map(\.startRealtimeNs).min() ?? 0
        let (shown, hidden) = limited(overview.processes, limit)
        for p in shown {
            let f = p.findings
            table.add(["\(p.pid)", p.executable, p.arguments, "+" + formatDuration(p.startRealtimeNs &- start),
                       formatDuration(p.durationNs), "\(p.items)", "\(p.threadsSeen)", "\(p.peakThreadsAlive)",
                       p.busiestQueue ?? "-", f.error + f.warning + f.info == 0 ? "-" : "\(f.error)E \(f.warning)W \(f.info)I"])
        }
        out += section("PROCESSES (in start order; threads = seen, peak = most alive at once)")
            + table.render(width: width, leftAligned: [1, 2, 8], middleCut: [2, 8]) + more(hidden, "processes")
        out += findingGroups(overview.findingGroups, acrossProcesses: true, limit: limit)
        return out
    }
}
