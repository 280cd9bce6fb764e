// The SCHEDULING table of `qtrace stats` (traces recorded with --sched).
import QTraceAnalysis

extension StatsText {
    /// SCHEDULING: per queue, its items' run time split into CPU, runnable and sleeping time
    /// (only for traces recorded with --sched).
    static func scheduling(_ model: TraceModel, _ stats: TraceStatistics, width: Int, limit: Int) -> String {
        guard let sched = stats.sched else { return "" }
        var out = section("SCHEDULING (kernel states while items ran; recorded with --sched)")
        out += "  items: \(formatDuration(sched.itemWallNs)) run time = \(formatDuration(sched.itemCpuNs)) CPU, "
            + "\(formatDuration(sched.itemRunnableNs)) runnable, \(formatDuration(sched.itemSleepingNs)) sleeping; "
            + "\(plural(sched.mostlySleepingItems, "item")) mostly slept\n"
        let rows = sched.queues.sorted { $0.wallNs != $1.wallNs ? $0.wallNs > $1.wallNs : $0.queue < $1.queue }
        guard !rows.isEmpty else { return out }
        var table = TextTable(["queue", "items", "run time", "CPU", "runnable", "sleeping", "CPU/wall", "mostly slept"])
        let (shown, hidden) = limited(rows, limit)
        for q in shown {
            table.add([queueName(model.queues[q.queue]), "\(q.items)", formatDuration(q.wallNs), formatDuration(q.cpuNs),
                       formatDuration(q.runnableNs), formatDuration(q.sleepingNs), formatPercent(q.cpuShare),
                       "\(q.mostlySleepingItems)"])
        }
        return out + table.render(width: width, leftAligned: [0]) + more(hidden, "queues")
    }
}
