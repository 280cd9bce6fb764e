// The target-queue forest stored as columns (`TraceStatistics.queueTree`): a 900k-queue trace
// has as many nodes, which as an array of `QueueTreeNode` took 56 bytes each (50 MB) and a
// children array per parent. Here a node takes 28 bytes (Int32 columns, the children of all
// nodes in one array) and its subtree's figures 32 more only when they are not all zero.
// Read as a collection of `QueueTreeNode`, and encoded as their array was.
import QTraceFormat

public struct QueueForest: Sendable, RandomAccessCollection, Codable, Equatable {
    /// A subtree's sums: items, run, wait and busy time (saturating, as the nodes' were).
    struct SubtreeFigures: Sendable {
        var items = 0
        var runNs: UInt64 = 0
        var waitNs: UInt64 = 0
        var busyNs: UInt64 = 0

        var isZero: Bool { items == 0 && runNs == 0 && waitNs == 0 && busyNs == 0 }

        mutating func add(_ other: SubtreeFigures) {
            items += other.items
            runNs.saturatingIncrement(by: other.runNs)
            waitNs.saturatingIncrement(by: other.waitNs)
            busyNs.saturatingIncrement(by: other.busyNs)
        }
    }

    private var queues: [Int32] = []
    private var depths: [Int32] = []
    /// -1: a root.
    private var parents: [Int32] = []
    private var subtreeQueueCounts: [Int32] = []
    /// Node i's children are `childQueues[childStarts[i]..<childStarts[i + 1]]`.
    private var childStarts: [Int32] = [0]
    private var childQueues: [Int32] = []
    /// Node i's row in `figures`; -1: its subtree's figures are all zero.
    private var figureRows: [Int32] = []
    private var figures: [SubtreeFigures] = []

    public init() {}

    /// The given nodes, in their order.
    public init<S: Sequence>(_ nodes: S) where S.Element == QueueTreeNode {
        for node in nodes {
            let slot = append(queue: node.queue, depth: node.depth, parent: node.parent,
                              children: node.children.lazy.map { Int32(clamping: $0) })
            setSubtree(slot, queues: node.subtreeQueues,
                       figures: SubtreeFigures(items: node.subtreeItems, runNs: node.subtreeRunNs,
                                               waitNs: node.subtreeWaitNs, busyNs: node.subtreeBusyNs))
        }
    }

    /// Room for `n` nodes and `children` children at once (grown by doubling, a column held
    /// its old and new buffers at once); the figures get room for every node, of which only
    /// the pages written become resident.
    init(reservingCapacity n: Int, children: Int) {
        for column in [\QueueForest.queues, \.depths, \.parents, \.subtreeQueueCounts, \.figureRows] {
            self[keyPath: column].reserveCapacity(n)
        }
        childStarts.reserveCapacity(n + 1)
        childQueues.reserveCapacity(children)
        figures.reserveCapacity(n)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { queues.count }

    public subscript(i: Int) -> QueueTreeNode {
        let row = Int(figureRows[i])
        let sums = row < 0 ? SubtreeFigures() : figures[row]
        let children = childQueues[Int(childStarts[i])..<Int(childStarts[i + 1])].map { Int($0) }
        return QueueTreeNode(queue: Int(queues[i]), depth: Int(depths[i]), parent: parents[i] < 0 ? nil : Int(parents[i]),
                             children: children, subtreeQueues: Int(subtreeQueueCounts[i]), subtreeItems: sums.items,
                             subtreeRunNs: sums.runNs, subtreeWaitNs: sums.waitNs, subtreeBusyNs: sums.busyNs)
    }

    /// A node at the end (its subtree: itself, no figures, until `setSubtree`); returns its index.
    mutating func append<C: Collection>(queue: Int, depth: Int, parent: Int?, children: C) -> Int
    where C.Element == Int32 {
        queues.append(Int32(clamping: queue))
        depths.append(Int32(clamping: depth))
        parents.append(parent.map { Int32(clamping: $0) } ?? -1)
        subtreeQueueCounts.append(1)
        figureRows.append(-1)
        childQueues.append(contentsOf: children)
        childStarts.append(Int32(clamping: childQueues.count))
        return queues.count - 1
    }

    mutating func setSubtree(_ i: Int, queues count: Int, figures sums: SubtreeFigures) {
        subtreeQueueCounts[i] = Int32(clamping: count)
        guard !sums.isZero else { return }
        figureRows[i] = Int32(figures.count)
        figures.append(sums)
    }

    /// Equal when the nodes are (the columns of two equal forests can differ in their figures'
    /// order: built depth-first they are added after the subtree, decoded in node order).
    public static func == (a: QueueForest, b: QueueForest) -> Bool { a.elementsEqual(b) }

    // Encoded as the array of nodes it replaces.
    public init(from decoder: any Decoder) throws {
        self.init(try [QueueTreeNode](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        for node in self { try c.encode(node) }
    }
}
