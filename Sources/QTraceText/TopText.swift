// `qtrace top`'s screen (a full terminal, redrawn each refresh) and its one-line form for
// pipes and logs. Text from the trace goes through terminalSafe.
import QTraceAnalysis

public enum TopText {
    /// The whole screen, at most `height` lines of at most `width` columns.
    /// `selected`: the highlighted queue row; `recent`: its recent items when opened (Enter).
    public static func screen(_ s: LiveSnapshot, findings: [FindingGroup], title: String, sort: LiveSortKey,
                              width: Int, height: Int, selected: Int? = nil, recent: [LiveItemRow]? = nil) -> String {
        let window = formatDuration(s.windowNs)
        var lines = [
            "qtrace top  \(title)  at \(formatDuration(s.nowNs)), \(s.events) events" + (s.droppedEvents > 0 ? ", \(s.droppedEvents) DROPPED" : ""),
            "threads \(s.threadsAlive) alive (\(s.workersAlive) workers), \(s.threadsBlocked) blocked; \(rate(s.itemsPerSecond)) items/s over the last \(window)",
            "sort: \(sort.rawValue) (s: next)  j/k or arrows: pick a queue, Enter: its recent items  q: quit",
            "",
        ]
        if let recent, let selected, s.queues.indices.contains(selected) {
            return (lines + recentItems(s.queues[selected].name, recent, width: width))
                .prefix(height).map { fit($0, width) }.joined(separator: "\n")
        }
        var table = TextTable(["queue", "pending", "running", "items/s", "wait p99", "run p99"])
        let findingLines = findings.prefix(5).map { g in
            "\(g.severity.rawValue.uppercased()) \(g.id)\(g.count > 1 ? " ×\(g.count)" : ""): " + terminalSafe(g.worst.message)
        }
        let room = Swift.max(height - lines.count - 3 - (findingLines.isEmpty ? 0 : findingLines.count + 2), 1)
        for (n, r) in s.queues.prefix(room).enumerated() {
            table.add([(n == selected ? "> " : "  ") + r.name, "\(r.pending)", "\(r.running)", rate(r.itemsPerSecond),
                       r.wait.count > 0 ? formatDuration(r.wait.p99Ns) : "-", r.run.count > 0 ? formatDuration(r.run.p99Ns) : "-"])
        }
        lines += table.render(width: width, middleCut: [0]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if s.queues.count > room { lines.append("  ... \(s.queues.count - room) more queues") }
        if !findingLines.isEmpty {
            lines += ["FINDINGS"] + findingLines.map { "  " + $0 }
        }
        return lines.prefix(height).map { fit($0, width) }.joined(separator: "\n")
    }

    /// The picked queue's recent items, newest first (Enter again goes back).
    static func recentItems(_ queue: String, _ items: [LiveItemRow], width: Int) -> [String] {
        var table = TextTable(["item", "state", "started", "wait", "run", "code"])
        for i in items {
            table.add([i.name, i.state, i.startNs.map(formatDuration) ?? "-", i.waitNs.map(formatDuration) ?? "-",
                       i.runNs.map(formatDuration) ?? "-", i.code ?? "-"])
        }
        return ["RECENT ITEMS of \(terminalSafe(queue)) (newest first; Enter: back)"]
            + table.render(width: width, leftAligned: [0, 1, 5], middleCut: [5]).split(separator: "\n").map(String.init)
    }

    /// One line per refresh when stdout is not a terminal.
    public static func line(_ s: LiveSnapshot, findings: Int) -> String {
        let busiest = s.queues.first.map { r in
            " busiest=\(terminalSafe(r.name)) (\(rate(r.itemsPerSecond))/s, wait p99 \(r.wait.count > 0 ? formatDuration(r.wait.p99Ns) : "-"))"
        } ?? ""
        return "t=\(formatDuration(s.nowNs)) events=\(s.events) items/s=\(rate(s.itemsPerSecond)) threads=\(s.threadsAlive) blocked=\(s.threadsBlocked) findings=\(findings)" + busiest
    }

    static func rate(_ perSecond: Double) -> String {
        perSecond >= 100 ? String(Int(perSecond.rounded())) : String((perSecond * 10).rounded() / 10)
    }

    static func fit(_ line: String, _ width: Int) -> String {
        line.count <= width ? line : String(line.prefix(Swift.max(width - 1, 0))) + "…"
    }
}
