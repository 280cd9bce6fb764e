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
