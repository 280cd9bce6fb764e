// The target-queue forest (docs/report-data.md, Definitions): each queue under the queue it
// targets, in the order of `qtrace stats`, the report's tree and its queue lanes.
import QTraceFormat

/// A queue of the forest, in 56 bytes (80 with its indices and counts as Int: 900k queues
/// have as many nodes); the public properties read and write as before.
public struct QueueTreeNode: Sendable, Codable, Equatable {
    @Int32Clamped public var queue: Int
    @Int32Clamped public var depth: Int
    /// nil: a root.
    @OptionalIndex32 public var parent: Int?
    /// This queue and everything that targets it, directly or not.
    @Int32Clamped public var subtreeQueues = 1
    public var children: [Int]
    public var subtreeItems = 0
    public var subtreeRunNs: UInt64 = 0
    public var subtreeWaitNs: UInt64 = 0
    public var subtreeBusyNs: UInt64 = 0

    public init(queue: Int, depth: Int, parent: Int?, children: [Int], subtreeQueues: Int = 1, subtreeItems: Int = 0,
                subtreeRunNs: UInt64 = 0, subtreeWaitNs: UInt64 = 0, subtreeBusyNs: UInt64 = 0) {
        self.queue = queue
        self.depth = depth
        self.parent = parent
        self.subtreeQueues = subtreeQueues
        self.children = children
        self.subtreeItems = subtreeItems
        self.subtreeRunNs = subtreeRunNs
        self.subtreeWaitNs = subtreeWaitNs
        self.subtreeBusyNs = subtreeBusyNs
    }

    // Encoded as the Int fields were.
    private enum CodingKeys: String, CodingKey {
        case queue, depth, parent, children, subtreeQueues, subtreeItems, subtreeRunNs, subtreeWaitNs, subtreeBusyNs
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(queue: try c.decode(Int.self, forKey: .queue), depth: try c.decode(Int.self, forKey: .depth),
                  parent: try c.decodeIfPresent(Int.self, forKey: .parent), children: try c.decode([Int].self, forKey: .children),
                  subtreeQueues: try c.decode(Int.self, forKey: .subtreeQueues),
                  subtreeItems: try c.decode(Int.self, forKey: .subtreeItems),
                  subtreeRunNs: try c.decode(UInt64.self, forKey: .subtreeRunNs),
                  subtreeWaitNs: try c.decode(UInt64.self, forKey: .subtreeWaitNs),
                  subtreeBusyNs: try c.decode(UInt64.self, forKey: .subtreeBusyNs))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(queue, forKey: .queue)
        try c.encode(depth, forKey: .depth)
        try c.encodeIfPresent(parent, forKey: .parent)
        try c.encode(children, forKey: .children)
        try c.encode(subtreeQueues, forKey: .subtreeQueues)
        try c.encode(subtreeItems, forKey: .subtreeItems)
        try c.encode(subtreeRunNs, forKey: .subtreeRunNs)
        try c.encode(subtreeWaitNs, forKey: .subtreeWaitNs)
        try c.encode(subtreeBusyNs, forKey: .subtreeBusyNs)
    }

    /// Roots are queues without a target (or in a target loop); children sorted by name.
    static func forest(_ model: TraceModel, _ stats: QueueStatsTable) -> QueueForest {
        forest(count: model.queues.count, target: { model.queues[$0].target }, precedes: { a, b in
            let qa = model.queues[a], qb = model.queues[b]
            return siblingOrder((qa.kind, qa.qos, qa.compactLabel, a), (qb.kind, qb.qos, qb.compactLabel, b))
        }, figures: { q in
            let s = stats[q]
            return .init(items: s.items, runNs: s.run.totalNs, waitNs: s.wait.totalNs, busyNs: s.busyNs)
        })
    }

    /// One queue of a trace given without a model (a synthetic report): what the forest needs.
    public struct Queue: Sendable {
        public var target: Int?
        public var kind: QueueKind
        public var qos: QoSClass
        public var label: String
        public var items: Int
        public var busyNs: UInt64
        public init(target: Int?, kind: QueueKind, qos: QoSClass, label: String, items: Int, busyNs: UInt64) {
            self.target = target; self.kind = kind; self.qos = qos; self.label = label; self.items = items; self.busyNs = busyNs
        }
    }

    /// The forest of queues given without a model, by the same rules (run and wait totals 0).
    public static func forest(_ queues: [Queue]) -> QueueForest {
        let labels = queues.map { QueueLabel($0.label) }
        return forest(count: queues.count, target: { queues[$0].target.flatMap { queues.indices.contains($0) ? $0 : nil } },
               precedes: { a, b in
                   let qa = queues[a], qb = queues[b]
                   return siblingOrder((qa.kind, qa.qos, labels[a], a), (qb.kind, qb.qos, labels[b], b))
               }, figures: { q in .init(items: queues[q].items, busyNs: queues[q].busyNs) })
    }

    /// Roots and siblings: the main queue, global queues by QoS (highest first), then by label
    /// (as Strings order them; compared without making one).
    static func siblingOrder(_ a: (kind: QueueKind, qos: QoSClass, label: QueueLabel, index: Int),
                             _ b: (kind: QueueKind, qos: QoSClass, label: QueueLabel, index: Int)) -> Bool {
        func rank(_ kind: QueueKind) -> Int { kind == .main ? 0 : kind == .global ? 1 : 2 }
        if rank(a.kind) != rank(b.kind) { return rank(a.kind) < rank(b.kind) }
        if a.kind == .global && a.qos != b.qos { return a.qos.rawValue > b.qos.rawValue }
        if a.label != b.label { return a.label < b.label }
        return a.index < b.index
    }

    /// The forest of queues 0..<n, depth-first: `figures(q)` gives a queue's own figures, which
    /// each node adds up over its subtree.
    private static func forest(count n: Int, target: (Int) -> Int?, precedes order: (Int, Int) -> Bool,
                               figures own: (Int) -> QueueForest.SubtreeFigures) -> QueueForest {
        let (roots, childStarts, children) = sortedChildren(count: n, target: target, precedes: order)
        func childrenOf(_ q: Int) -> ArraySlice<Int32> { children[Int(childStarts[q])..<Int(childStarts[q + 1])] }
        var out = QueueForest(reservingCapacity: n, children: children.count)
        var visited = [Bool](repeating: false, count: n)
        func visit(_ q: Int, depth: Int, parent: Int?) -> (queues: Int, figures: QueueForest.SubtreeFigures) {
            visited[q] = true
            let slot = out.append(queue: q, depth: depth, parent: parent, children: childrenOf(q))
            var subtree = (queues: 1, figures: own(q))
            for c in childrenOf(q) where !visited[Int(c)] {
                let child = visit(Int(c), depth: depth + 1, parent: q)
                subtree.queues += child.queues
                subtree.figures.add(child.figures)
            }
            out.setSubtree(slot, queues: subtree.queues, figures: subtree.figures)
            return subtree
        }
        for q in roots where !visited[Int(q)] { _ = visit(Int(q), depth: 0, parent: nil) }
        return out
    }

    /// The roots and each queue's children, sorted: those of `q` are
    /// `children[starts[q]..<starts[q + 1]]` (one array for all, where an array per queue took
    /// 24 bytes each at 900k queues).
    private static func sortedChildren(count n: Int, target: (Int) -> Int?, precedes order: (Int, Int) -> Bool)
        -> (roots: [Int32], starts: [Int32], children: [Int32]) {
        var parent = [Int32](repeating: -1, count: n)
        var starts = [Int32](repeating: 0, count: n + 1)
        var roots: [Int32] = []
        for q in 0..<n {
            if let t = target(q), t != q, !inLoop(q, target) {
                parent[q] = Int32(t)
                starts[t + 1] += 1
            } else {
                roots.append(Int32(q))
            }
        }
        roots.sort { order(Int($0), Int($1)) }
        for q in 0..<n { starts[q + 1] += starts[q] }
        var children = [Int32](repeating: 0, count: Int(starts[n]))
        var next = starts
        for q in 0..<n where parent[q] >= 0 {
            let p = Int(parent[q])
            children[Int(next[p])] = Int32(q)
            next[p] += 1
        }
        children.withUnsafeMutableBufferPointer { all in
            for q in 0..<n where starts[q + 1] - starts[q] > 1 {
                all[Int(starts[q])..<Int(starts[q + 1])].sort { order(Int($0), Int($1)) }
            }
        }
        return (roots, starts, children)
    }

    static func inLoop(_ q: Int, _ target: (Int) -> Int?) -> Bool {
        var cur = target(q)
        var steps = 0
        while let c = cur, steps < 64 {
            if c == q { return true }
            cur = target(c)
            steps += 1
        }
        return false
    }
}
