// The per-object data of the report as payload tables rather than header JSON (docs/report-data.md,
// "Object tables"): queues, the target-queue tree, groups, the stats tables, histograms, derived
// backlogs and the strings they refer to. At 100k queues the JSON was ~500 bytes per queue, most
// of the file: parsed twice (as HTML text, then as JSON) and never compressed. As deflated
// columns it is a few bytes per queue, and the viewer decodes what the first frame does not need
// (stats, histograms) only when it is shown.
import QTraceViewModel

extension ReportEncoder {
    /// The string table's indexes of `values` (each string stored once).
    mutating func stringIndexes(_ values: some Sequence<String>) -> [Int64] {
        var out: [Int64] = []
        for s in values { out.append(strings.index(s)) }
        return out
    }

    mutating func writeQueues() {
        let queues = input.queues
        payload.beginTable("queues", rows: queues.count)
        payload.stringColumn("label", stringIndexes(queues.lazy.map(\.label)))
        payload.stringColumn("kind", stringIndexes(queues.lazy.map(\.kind.rawValue)))
        payload.stringColumn("qos", stringIndexes(queues.lazy.map(\.qosName)))
        payload.column("target", .plus1, as: .i32, queues.lazy.map { Int64($0.targetIndex) })
        payload.column("process", .uvarint, as: .i32, queues.lazy.map { Int64(max(0, $0.process)) })
        // The analysis' figures; -1 when there is none (synthetic reports).
        payload.column("items", .plus1, as: .i32, queues.lazy.map { Int64(max(-1, $0.items)) })
        payload.column("busy", .plus1, as: .f64, queues.lazy.map { max(-1, $0.busyNs) })
        payload.doubleColumn("busyShare", queues.lazy.map(\.busyShare))

        let tree = input.queueTree
        payload.beginTable("queueTree", rows: tree.count)
        payload.column("queue", .delta, as: .i32, tree.lazy.map { Int64($0.queue) })
        payload.column("parent", .plus1, as: .i32, tree.lazy.map { Int64(max(-1, $0.parent)) })
        payload.column("subtreeBusy", .uvarint, as: .f64, tree.lazy.map { max(0, $0.subtreeBusyNs) })
    }

    mutating func writeGroups() {
        let groups = input.groups
        payload.beginTable("groups", rows: groups.count)
        payload.stringColumn("label", stringIndexes(groups.lazy.map(\.label)))
        payload.column("firstEnter", .svarint, as: .f64, groups.lazy.map(\.firstEnterNs))
        payload.column("lastLeave", .svarint, as: .f64, groups.lazy.map(\.lastLeaveNs))
        payload.column("notify", .svarint, as: .f64, groups.lazy.map(\.notifyNs))
        payload.column("enters", .uvarint, as: .f64, groups.lazy.map { Int64(max(0, $0.enters)) })
        payload.column("leaves", .uvarint, as: .f64, groups.lazy.map { Int64(max(0, $0.leaves)) })
    }

    /// Queues whose backlog series the viewer derives from the items (see writeCounters).
    mutating func writeDerivedBacklogs(_ queues: [Int]) {
        payload.beginTable("derivedBacklogs", rows: queues.count)
        payload.column("queue", .delta, as: .i32, queues.lazy.map { Int64($0) })
    }

    /// Histograms as rows (queue, metric, bounds, first, how many counts) and their counts, all
    /// histograms' back to back: from the first to the last non-empty bucket only.
    mutating func writeHistograms() {
        let histograms = input.histograms
        let spans = histograms.map { (first: $0.firstBucket, counts: $0.span) }
        payload.beginTable("histograms", rows: histograms.count)
        payload.column("queue", .delta, as: .i32, histograms.lazy.map { Int64($0.queueIndex) })
        payload.stringColumn("metric", stringIndexes(histograms.lazy.map(\.metric.rawValue)))
        let boundsIndex = histogramBoundsIndex
        payload.column("bounds", .uvarint, as: .i32, histograms.lazy.map { Int64(boundsIndex[$0.boundsNs] ?? 0) })
        payload.column("first", .uvarint, as: .i32, spans.lazy.map { Int64($0.first) })
        payload.column("counts", .uvarint, as: .i32, spans.lazy.map { Int64($0.counts.count) })
        let counts = spans.flatMap(\.counts)
        payload.beginTable("histogramCounts", rows: counts.count)
        payload.column("count", .uvarint, as: .f64, counts.lazy.map { Int64(max(0, $0)) })
    }

    /// A stats table as a payload table `statsK` (`object`, then `c0`, `c1`, ... per column:
    /// strings or numbers, either possibly missing) and its header entry. A table with a column
    /// that mixes text and numbers keeps its rows in the header.
    mutating func statsTableJSON(_ table: ReportTable, index k: Int) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .string(table.id)), ("title", .string(table.title)), ("rowObject", .string(table.rowObject.rawValue)),
            ("columns", .array(table.columns.map { c in
                .object([("key", .string(c.key)), ("title", .string(c.title)), ("unit", .string(c.unit))])
            })),
        ]
        // Read column by column as the table holds them (a copy of the cells as `ReportValue`
        // columns was 345 MB at 900k queues).
        guard !table.cells.contains(where: { if case .mixed = $0 { true } else { false } }) else {
            fields.append(("rows", Self.rowsJSON(table)))
            return .object(fields)
        }
        let name = "stats\(k)"
        payload.beginTable(name, rows: table.rowCount)
        payload.column("object", .plus1, as: .i32, table.objects.lazy.map { Int64(max(-1, $0)) })
        for (c, cells) in table.cells.enumerated() {
            switch cells {
            case .texts(let texts, let missing):
                var indexes: [Int64] = []
                indexes.reserveCapacity(texts.count)
                for (text, none) in zip(texts, missing) { indexes.append(none ? -1 : strings.index(text)) }
                payload.stringColumn("c\(c)", indexes)
            case .numbers(let numbers, let missing):
                payload.nullableColumn("c\(c)", zip(numbers, missing).map { $1 ? nil : $0 })
            case .mixed:
                preconditionFailure("mixed columns are written as rows")
            }
        }
        fields.append(("table", .string(name)))
        return .object(fields)
    }

    static func rowsJSON(_ table: ReportTable) -> JSONValue {
        .array(table.rows.map { row in
            .object([
                ("object", .int(row.objectIndex)),
                ("values", .array(row.values.map { v in
                    switch v {
                    case .number(let d): .number(d)
                    case .text(let s): .string(s)
                    case .missing: .null
                    }
                })),
            ])
        })
    }

    /// Last: every string the other tables refer to.
    mutating func writeStrings() {
        payload.beginTable("strings", rows: strings.strings.count)
        payload.textColumn("value", strings.strings)
    }
}
