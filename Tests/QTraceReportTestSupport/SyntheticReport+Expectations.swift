// What a browser test should find in the report of a given input (written next to the
// fixture as JSON): read off the input the analysis built, never recomputed.
import QTraceViewModel
import Foundation

extension SyntheticReport {
    /// JSON describing what the report of `input` must show.
    /// `events`: how many trace events the input was built from (SyntheticReport.trace).
    public static func expectations(_ input: ReportInput, events: Int) throws -> Data {
        let items = input.items
        var hasChildren = Set<Int>()
        for i in 0..<items.count where items.parent[i] >= 0 { hasChildren.insert(Int(items.parent[i])) }
        var withChildren = -1
        var behind = -1
        for i in 0..<items.count where items.startNs[i] >= 0 {
            if withChildren < 0, hasChildren.contains(i) { withChildren = i }
            if behind < 0, items.waitedBehind[i] >= 0 { behind = i }
        }
        let parentRow = Int32(withChildren)
        let childCount = withChildren >= 0 ? items.parent.filter { $0 == parentRow }.count : 0
        func value(_ v: ReportValue) -> Any {
            switch v {
            case .number(let d): d
            case .text(let s): s
            case .missing: NSNull()
            }
        }
        var object: [String: Any] = [
            "items": items.count,
            "durationNs": input.meta.durationNs,
            "events": events,
            "threads": input.threads.map { ["name": $0.name, "kind": $0.kind.rawValue, "tid": $0.tid] },
            "queues": input.queues.map { ["label": $0.label, "kind": $0.kind.rawValue, "target": $0.targetIndex] },
            "sources": input.sources.map(\.label),
            "groups": input.groups.count,
            "stats": input.stats.map { table in
                ["id": table.id, "columns": table.columns.map(\.key), "rows": table.rows.map { $0.values.map(value) }]
            },
            "findings": input.findings.map { f in
                ["id": f.id, "severity": f.severity.rawValue, "message": f.message, "startNs": f.startNs, "endNs": f.endNs,
                 "queues": f.queues, "threads": f.threads, "items": f.items]
            },
            "itemWithChildren": withChildren,
            "childrenOfItem": childCount,
            "itemWaitingBehind": behind,
            "hostileLabels": hostileLabels,
            // Small inputs only: enough for tests to recount what a range covers.
            "itemStarts": items.count <= 10_000 ? items.startNs : [],
            "itemQueues": items.count <= 10_000 ? items.queue.map(Int.init) : [],
        ]
        object.merge(codeExpectations(input)) { $1 }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
}
