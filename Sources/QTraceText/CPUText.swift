// `qtrace stats --cpu` (traces recorded with --cpu; docs/cpu.md): where the CPU samples
// fell, and per queue, per code and per Swift task the functions that used the CPU.
import QTraceAnalysis

extension StatsText {
    /// The samples' totals, then one table of top functions per group (queues, codes, tasks;
    /// `limit` groups each, `functions` rows per table).
    public static func cpu(_ profile: CPUProfile?, width: Int, limit: Int, functions: Int = 5) -> String {
        guard let profile else {
            return section("CPU SAMPLES") + "  none: record with qtrace record --cpu -- PROGRAM\n"
        }
        var out = section("CPU SAMPLES (recorded with --cpu at \(profile.hz) Hz)")
        out += "  \(plural(profile.sampleCount, "sample")) ≈ \(formatDuration(profile.process.cpuNs)) CPU: "
            + "\(profile.insideItems) in items, \(profile.outsideItems.samples) outside items\n"
        out += functionsTable("ALL SAMPLES", profile.process, width: width, functions: functions)
        out += functionsTable("OUTSIDE ITEMS", profile.outsideItems, width: width, functions: functions)
        for (title, groups, noun) in [("QUEUE", profile.queues, "queues"), ("CODE", profile.codes, "codes"),
                                      ("TASK", profile.tasks, "tasks")] {
            let (shown, hidden) = limited(groups, limit)
            for group in shown { out += functionsTable("\(title) \(terminalSafe(group.name))", group, width: width, functions: functions) }
            out += more(hidden, noun)
        }
        return out
    }

    /// `HEADING: N samples ≈ time`, then the group's top functions by self samples.
    static func functionsTable(_ heading: String, _ group: CPUGroup, width: Int, functions: Int) -> String {
        guard group.samples > 0 else { return "" }
        var out = "\n\(heading): \(plural(group.samples, "sample")) ≈ \(formatDuration(group.cpuNs)) CPU\n"
        var table = TextTable(["function", "self", "total", "self %", "total %"])
        let (shown, hidden) = limited(group.functions, functions)
        for f in shown {
            table.add([f.function, "\(f.selfSamples)", "\(f.totalSamples)", formatPercent(f.selfShare), formatPercent(f.totalShare)])
        }
        out += table.render(width: width, leftAligned: [0])
        return out + more(hidden, "functions")
    }
}
