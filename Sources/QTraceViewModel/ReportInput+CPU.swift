// CPU samples in the report (traces recorded with `qtrace record --cpu`; docs/cpu.md): the
// Stats tab's "CPU" table, each queue's top functions as `qtrace stats --cpu` lists them.
import QTraceAnalysis

extension AnalysisReportBuilder {
    /// Rows per queue (most samples first): its top `functions` functions by self samples;
    /// a row selects its queue. nil when the trace has no samples.
    static func cpuTable(_ profile: CPUProfile?, functions: Int = 5) -> ReportTable? {
        guard let profile else { return nil }
        let columns = [
            ReportColumn(key: "label", title: "Queue"), ReportColumn(key: "function", title: "Function"),
            ReportColumn(key: "selfSamples", title: "Self samples", unit: "count"),
            ReportColumn(key: "totalSamples", title: "Total samples", unit: "count"),
            ReportColumn(key: "selfShare", title: "Self % of queue", unit: "%"),
            ReportColumn(key: "totalShare", title: "Total % of queue", unit: "%"),
        ]
        let rows = profile.queues.flatMap { queue in
            queue.functions.prefix(functions).map { f in
                ReportRow(values: [.text(queue.name), .text(f.function), .number(Double(f.selfSamples)),
                                   .number(Double(f.totalSamples)), .number(f.selfShare * 100), .number(f.totalShare * 100)],
                          objectIndex: queue.object ?? -1)
            }
        }
        return ReportTable(id: "cpu", title: "CPU (top functions per queue, sampled at \(profile.hz) Hz, --cpu)",
                           rowObject: .queue, columns: columns, rows: rows)
    }
}

/// One queue's or one item's samples as a call tree merged by function (the flame graph of
/// its details).
public struct ReportFlame: Sendable {
    /// The queue (index), or -1 for an item's.
    public var queue: Int
    /// The item (index into `ReportInput.items`), or -1 for a queue's.
    public var item: Int = -1
    public var tree: FlameTree
}

extension AnalysisReportBuilder {
    /// Items whose flame graph the report carries at most (those with the most samples): the
    /// trees are in the header's JSON, and a long run at 999 Hz has samples in ~10⁵ items.
    static let maxItemFlames = 1000

    static func cpuFlames(_ profile: CPUProfile?) -> [ReportFlame] {
        guard let profile else { return [] }
        let kept = Set(profile.samplesByItem.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(maxItemFlames).map(\.key))
        return profile.queues.compactMap { group in group.object.map { ReportFlame(queue: $0, tree: group.tree) } }
            + profile.itemTrees.filter { kept.contains($0.item) }.map { ReportFlame(queue: -1, item: $0.item, tree: $0.tree) }
    }
}
