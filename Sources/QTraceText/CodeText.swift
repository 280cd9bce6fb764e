// The terminal tables of code identity: CODE (what items ran), BLOCKING CALLS and TASKS.
import QTraceAnalysis
import QTraceFormat

/// What `qtrace stats --by` puts first.
public enum StatsGrouping: String, Sendable, CaseIterable {
    case queue, code, task, actor
}

extension StatsText {
    /// CODE: the codes with the most total run time; the top caller of each.
    static func codes(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        guard !stats.sites.isEmpty else { return "" }
        var table = TextTable(["code", "where", "items", "run p50", "run p99", "run max", "run total", "wait p99",
                               "enqueued from"])
        let (shown, hidden) = limited(stats.sites, limit)
        for c in shown {
            let whereText = c.file.flatMap { file in c.line.map { "\(baseName(file)):\($0)" } } ?? (c.module ?? "-")
            let from = c.callers.first.map { $0.location + (c.callers.count > 1 ? " +\(c.callers.count - 1)" : "") } ?? "-"
            table.add([c.name, whereText, "\(c.items)", d(c.run.p50Ns, c.run.count), d(c.run.p99Ns, c.run.count),
                       d(c.run.maxNs, c.run.count), d(c.run.totalNs, c.run.count), d(c.wait.p99Ns, c.wait.count), from])
        }
        return section("CODE (most run time first; where = the code's own line)")
            + table.render(width: width, leftAligned: [0, 1, 8]) + more(hidden, "codes")
    }

    /// CODE BY WAIT: the codes whose items waited longest to start (p99), when that differs
    /// from the run-time order's top.
    static func codesByWait(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        let rows = stats.sites.filter { $0.wait.count > 0 }
            .sorted { ($0.wait.p99Ns, $1.code) > ($1.wait.p99Ns, $0.code) }
        guard !rows.isEmpty else { return "" }
        var table = TextTable(["code", "items", "wait p50", "wait p99", "wait max", "queue"])
        let (shown, hidden) = limited(rows, limit)
        for c in shown {
            let queue = c.queues.first.map { queueName(model.queues[$0]) } ?? "-"
            table.add([c.name, "\(c.items)", d(c.wait.p50Ns, c.wait.count), d(c.wait.p99Ns, c.wait.count),
                       d(c.wait.maxNs, c.wait.count), queue])
        }
        return section("CODE BY WAIT (longest ready-to-start wait first)")
            + table.render(width: width, leftAligned: [0, 5], middleCut: [5]) + more(hidden, "codes")
    }

    /// OPERATIONS: Foundation operations (codes named by an Operation) and the operations each
    /// depended on, in the CODE table's order.
    static func operations(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        let rows = stats.sites.filter { $0.dependencies != nil }
        guard !rows.isEmpty else { return "" }
        var table = TextTable(["operation", "items", "run p50", "queue", "depended on"])
        let (shown, hidden) = limited(rows, limit)
        for c in shown {
            let queue = c.queues.first.map { queueName(model.queues[$0]) } ?? "-"
            let after = c.dependencies?.joined(separator: ", ") ?? ""
            table.add([c.name, "\(c.items)", d(c.run.p50Ns, c.run.count), queue, after.isEmpty ? "-" : after])
        }
        return section("OPERATIONS (Foundation OperationQueue; depended on = what each waited for)")
            + table.render(width: width, leftAligned: [0, 3, 4]) + more(hidden, "operations")
    }

    /// BLOCKING CALLS: where threads blocked (sync, waits, apply), most blocked time first.
    static func waitSites(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        guard !stats.waitSites.isEmpty else { return "" }
        var table = TextTable(["call site", "kind", "calls", "blocked p50", "blocked p99", "max", "total", "on main"])
        let (shown, hidden) = limited(stats.waitSites, limit)
        for w in shown {
            table.add([w.location, w.causes.joined(separator: ","), "\(w.blocked.count)",
                       d(w.blocked.p50Ns, w.blocked.count), d(w.blocked.p99Ns, w.blocked.count),
                       d(w.blocked.maxNs, w.blocked.count), d(w.blocked.totalNs, w.blocked.count),
                       w.onMainThread > 0 ? "\(w.onMainThread)" : "-"])
        }
        return section("BLOCKING CALLS (where callers waited)")
            + table.render(width: width, leftAligned: [0, 1]) + more(hidden, "call sites")
    }

    /// TASKS: a summary line and the longest-lived tasks.
    static func tasks(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        let s = stats.tasks
        guard s.tasks > 0 else { return "" }
        var out = section("TASKS (Swift Concurrency)")
        let runtime = s.runtimeTasks.map { " + \(plural($0, "runtime task")) (Task.sleep timers, not counted)" } ?? ""
        out += "  \(plural(s.tasks, "task")) (\(s.childTasks) child)\(runtime), \(plural(s.jobs, "job")); running \(formatDuration(s.runningNs)), awaiting \(formatDuration(s.awaitingNs))\n"
        var table = TextTable(["task", "parent", "jobs", "lifetime", "running", "awaiting", "async functions"])
        let (shown, hidden) = limited(s.top, limit)
        for t in shown {
            let parent = t.parent.map { "#\(model.tasks[$0].id)" } ?? "-"
            let functions = t.functions.prefix(3).joined(separator: ", ") + (t.functions.count > 3 ? ", +\(t.functions.count - 3)" : "")
            table.add(["#\(t.id)" + (t.onMainActor ? " (main actor)" : ""), parent, "\(t.jobs)", formatDuration(t.lifetimeNs),
                       formatDuration(t.runningNs), formatDuration(t.awaitingNs), functions.isEmpty ? "-" : functions])
        }
        return out + table.render(width: width, leftAligned: [0, 1, 6]) + more(hidden + Swift.max(0, s.tasks - s.top.count), "tasks")
    }

    /// ACTORS: per actor, visits (hops onto it), run and wait time, the deepest queue.
    static func actors(_ stats: TraceStatistics, width: Int, limit: Int) -> String {
        guard !stats.actors.isEmpty else { return "" }
        var table = TextTable(["actor", "visits", "tasks", "run total", "wait total", "wait p99", "waited", "peak queue", "entered at"])
        let (shown, hidden) = limited(stats.actors, limit)
        for a in shown {
            table.add([a.name, "\(a.visits)", "\(a.tasks)", formatDuration(a.runNs), formatDuration(a.waitNs),
                       formatDuration(a.wait.p99Ns), "\(a.contendedVisits)", "\(a.peakQueueDepth)",
                       a.enteredAt.prefix(2).joined(separator: ", ")])
        }
        return section("ACTORS (visits: hops onto the actor; wait: time a task waited for it to be free)")
            + table.render(width: width, leftAligned: [0, 8]) + more(hidden, "actors")
    }

    static func baseName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}
