// The stats tables of the report: columns of cells, each column stored by the kind of its
// cells (numbers, or text), not rows of enum cells.

/// A cell of a stats table.
public enum ReportValue: Sendable, Equatable {
    case number(Double)
    case text(String)
    case missing
}

public struct ReportColumn: Sendable {
    /// Stable key, as in `qtrace stats --json` ("p50_wait_ns").
    public var key: String
    public var title: String
    /// "ns", "count", "%", "items/s", "" (text) ...: how the viewer formats the number.
    public var unit: String

    public init(key: String, title: String, unit: String = "") {
        self.key = key
        self.title = title
        self.unit = unit
    }
}

public enum ReportRowObject: String, Sendable {
    case queue, thread, source, group, none
    /// Index into `ReportInput.processes`.
    case process
    /// Index into `ReportInput.codes`, `ReportInput.sites`, `ReportInput.tasks`.
    case code, site, task
}

public struct ReportRow: Sendable {
    public var values: [ReportValue]
    /// The queue, thread, ... the row is about (see `ReportTable.rowObject`), or -1.
    public var objectIndex: Int

    public init(values: [ReportValue], objectIndex: Int = -1) {
        self.values = values
        self.objectIndex = objectIndex
    }
}

/// The cells of one column of a stats table, by the kind they have: a column of numbers (or of
/// nothing) is 9 bytes a cell, of text 17, rather than 24 for a `ReportValue` and a row's array
/// per row (416 bytes a queue of the queues table: 374 MB of the 900k-queue report).
public enum ReportCells: Sendable {
    /// `missing[i]`: the cell is empty ("-"); its number is then 0.
    case numbers([Double], missing: [Bool])
    case texts([String], missing: [Bool])
    /// Text and numbers in one column (no table of the analysis has one).
    case mixed([ReportValue])

    public var count: Int {
        switch self {
        case .numbers(let v, _): v.count
        case .texts(let v, _): v.count
        case .mixed(let v): v.count
        }
    }

    public subscript(row: Int) -> ReportValue {
        switch self {
        case .numbers(let v, let missing): missing[row] ? .missing : .number(v[row])
        case .texts(let v, let missing): missing[row] ? .missing : .text(v[row])
        case .mixed(let v): v[row]
        }
    }

    /// The cells of `values` in the narrowest kind that holds them all.
    public init(_ values: [ReportValue]) {
        var text = false, number = false
        for v in values {
            switch v {
            case .number: number = true
            case .text: text = true
            case .missing: break
            }
        }
        let missing = values.map { $0 == .missing }
        if text && number {
            self = .mixed(values)
        } else if text {
            self = .texts(values.map { if case .text(let s) = $0 { s } else { "" } }, missing: missing)
        } else {
            self = .numbers(values.map { if case .number(let d) = $0 { d } else { 0 } }, missing: missing)
        }
    }
}

public struct ReportTable: Sendable {
    /// "queues", "threads", ...
    public var id: String
    public var title: String
    public var rowObject: ReportRowObject
    public var columns: [ReportColumn]
    /// The object of each row (see `rowObject`), or -1.
    public private(set) var objects: [Int]
    /// One per column, each `objects.count` long.
    public private(set) var cells: [ReportCells]

    public init(id: String, title: String, rowObject: ReportRowObject = .none, columns: [ReportColumn],
                objects: [Int], cells: [ReportCells]) {
        precondition(cells.count == columns.count && cells.allSatisfy { $0.count == objects.count },
                     "stats table \(id): a column per column title, a cell per row")
        self.id = id
        self.title = title
        self.rowObject = rowObject
        self.columns = columns
        self.objects = objects
        self.cells = cells
    }

    public init(id: String, title: String, rowObject: ReportRowObject = .none, columns: [ReportColumn], rows: [ReportRow]) {
        self.id = id
        self.title = title
        self.rowObject = rowObject
        self.columns = columns
        (objects, cells) = ([], [])
        self.rows = rows
    }

    public var rowCount: Int { objects.count }

    /// The table row by row (a row shorter than the columns ends in missing cells).
    public var rows: [ReportRow] {
        get {
            objects.indices.map { r in ReportRow(values: cells.map { $0[r] }, objectIndex: objects[r]) }
        }
        set {
            objects = newValue.map(\.objectIndex)
            cells = columns.indices.map { c in
                ReportCells(newValue.map { $0.values.indices.contains(c) ? $0.values[c] : .missing })
            }
        }
    }
}
