// Foundation operations (OPERATION, OPERATION_DEP): an OperationQueue runs every Operation as
// the same closure of libFoundation, so the shim names the Operation each item ran. Each
// item gets a code of its own, named by the operation (its `name`, else its type), so that
// `stats --by code`, the JSON summary and the report name operations as the program does.
import QTraceFormat

/// The Operation an item of an OperationQueue ran.
public struct ItemOperation: Sendable, Equatable {
    /// Qualified type name ("App.ImportOperation").
    public var typeName: String
    /// Its `name`, nil when unnamed.
    public var name: String?
    /// The Operation object's address while it ran.
    public var address: UInt64
    /// The items that ran the operations it depended on (those seen in the trace).
    public var dependencies: [Int] = []

    /// The type without its module ("ImportOperation").
    public var shortType: String { typeName.split(separator: ".").last.map(String.init) ?? typeName }
    /// What the code tables call it: `name (Type)`, or the type alone when unnamed.
    public var label: String { name.map { "\($0) (\(shortType))" } ?? shortType }
}

/// The operations while the model is built: the Operation each item ran, and the latest
/// item of each Operation object (dependencies name objects).
struct OperationTable {
    /// The model's operations by item (moved into it by `takeOperations`).
    private(set) var operations: [Int: ItemOperation] = [:]
    private var itemByAddress: [UInt64: Int32] = [:]

    mutating func ran(_ operation: ItemOperation, item: Int32) {
        operations[Int(item)] = operation
        itemByAddress[operation.address] = item
    }

    /// Item `item`'s operation depended on the Operation at `address` (ignored when either
    /// is unknown).
    mutating func dependencyRecorded(item: Int, on address: UInt64) {
        guard operations[item] != nil, let dependency = itemByAddress[address] else { return }
        operations[item]?.dependencies.append(Int(dependency))
    }

    /// The operations for the model; the table is empty afterwards.
    mutating func takeOperations() -> [Int: ItemOperation] {
        defer { self = OperationTable() }
        return operations
    }
}

extension ModelBuilder {
    /// OPERATION follows its item's START on the same thread: the thread's running item.
    mutating func operationRecorded(_ e: Event, thread t: Int32) {
        let i = topItem(of: t)
        guard i >= 0, items[Int(i)].id == e.a else { return }
        let text = e.string ?? ""
        let parts = text.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts.count > 1 && !parts[1].isEmpty ? String(parts[1]) : nil
        operations.ran(ItemOperation(typeName: String(parts.first ?? ""), name: name, address: e.b), item: i)
    }

    /// A dependency is an Operation that finished before this one started: its item is known.
    mutating func operationDependencyRecorded(_ e: Event, thread t: Int32) {
        let i = Int(topItem(of: t))
        guard i >= 0, items[i].id == e.a else { return }
        operations.dependencyRecorded(item: i, on: e.b)
    }

    /// After resolveSites: each operation item moves to a site of its own label (a copy of its
    /// site, whose code is named by the label; one code per label).
    mutating func applyOperationSites() {
        var siteByKey: [String: Int] = [:]
        for (i, operation) in model.operations.sorted(by: { $0.key < $1.key }) {
            guard let s = items[i].site else { continue }
            let key = "\(s)\t\(operation.label)"
            if let known = siteByKey[key] { items[i].site = known; continue }
            let copy = code.labelledCopy(ofSite: s, label: operation.label)
            siteByKey[key] = copy
            items[i].site = copy
        }
    }
}

extension TraceModel {
    /// For each operation code: the labels of the operations its items depended on, first
    /// seen first (one pass over the operations).
    func operationDependenciesByCode() -> [Int: [String]] {
        var labels: [Int: [String]] = [:]
        for (i, operation) in operations.sorted(by: { $0.key < $1.key }) {
            guard let s = items[i].site, let c = sites[s].codeIndex else { continue }
            for d in operation.dependencies {
                guard let label = operations[d]?.label else { continue }
                if !(labels[c]?.contains(label) ?? false) { labels[c, default: []].append(label) }
            }
        }
        return labels
    }
}
