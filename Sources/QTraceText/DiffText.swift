// The terminal rendering of `qtrace diff`: one block of rows per queue.
import QTraceAnalysis

public enum DiffText {
    public static func render(_ c: RunComparison, width: Int = 100) -> String {
        var out = "duration  \(formatDuration(c.baseDurationNs)) -> \(formatDuration(c.newDurationNs))  \(change(c.baseDurationNs, c.newDurationNs))\n\n"
        var table = TextTable(["queue", "metric", "A", "B", "change"])
        for q in c.queues {
            let status = q.baseQueue == nil ? " (only in B)" : q.newQueue == nil ? " (only in A)" : ""
            table.add([q.key + status, "items", "\(q.baseItems)", "\(q.newItems)",
                       change(UInt64(q.baseItems), UInt64(q.newItems))])
            for m in q.metrics {
                table.add(["", m.name, m.base.map(formatDuration) ?? "-", m.new.map(formatDuration) ?? "-",
                           m.relativeChange.map(percent) ?? "-"])
            }
        }
        out += c.queues.isEmpty ? "no queues with items in either run\n" : table.render(width: width, leftAligned: [0, 1], middleCut: [0])
        if !c.codes.isEmpty {
            var codes = TextTable(["code", "metric", "A", "B", "change"])
            for k in c.codes {
                let status = k.baseQueue == nil ? " (only in B)" : k.newQueue == nil ? " (only in A)" : ""
                codes.add([k.key + status, "items", "\(k.baseItems)", "\(k.newItems)", change(UInt64(k.baseItems), UInt64(k.newItems))])
                for m in k.metrics {
                    codes.add(["", m.name, m.base.map(formatDuration) ?? "-", m.new.map(formatDuration) ?? "-",
                               m.relativeChange.map(percent) ?? "-"])
                }
            }
            out += "\n" + codes.render(width: width, leftAligned: [0, 1])
        }
        if !c.findingsOnlyInBase.isEmpty { out += "\nfindings gone in B: " + c.findingsOnlyInBase.joined(separator: ", ") + "\n" }
        if !c.findingsOnlyInNew.isEmpty { out += "\nnew findings in B: " + c.findingsOnlyInNew.joined(separator: ", ") + "\n" }
        return out
    }

    static func change(_ a: UInt64, _ b: UInt64) -> String {
        a == 0 ? (b == 0 ? "=" : "new") : percent((Double(b) - Double(a)) / Double(a))
    }

    static func percent(_ r: Double) -> String {
        guard r.isFinite else { return "-" }
        if abs(r) < 0.0005 { return "=" }
        let p = (r * 1000).rounded() / 10
        return (p > 0 ? "+" : "") + String(p) + "%"
    }
}
