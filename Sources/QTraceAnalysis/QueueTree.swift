// The target-queue forest (docs/report-data.md, Definitions): each queue under the queue it
// targets, in the order of `qtrace stats`, the report's tree and its queue lanes.
import QTraceFormat

/// A queue of the forest, in 56 bytes (80 with its indices and counts as Int: 900k queues
/// have as many nodes); the public properties read and write as before.
public struct QueueTreeNode: Sendable, Codable, Equatable {
    private var queueRaw: Int32
    private var depthRaw: Int32
    /// -1: a root.
    private var parentRaw: Int32
    private var subtreeQueuesRaw: Int32 = 1
    public var children: [Int]
    public var subtreeItems = 0
    public var subtreeRunNs: UInt64 = 0
    public var subtreeWaitNs: UInt64 = 0
    public var subtreeBusyNs: UInt64 = 0

    public init(queue: Int, depth: Int, parent: Int?, children: [Int], subtreeQueues: Int = 1, subtreeItems: Int = 0,
                subtreeRunNs: UInt64 = 0, subtreeWaitNs: UInt64 = 0, subtreeBusyNs: UInt64 = 0) {
        queueRaw = Int32(clamping: queue)
        depthRaw = Int32(clamping: depth)
        parentRaw = parent.map { Int32(clamping: $0) } ?? -1
        subtreeQueuesRaw = Int32(clamping: subtreeQueues)
        self.children = children
        self.subtreeItems = subtreeItems
        self.subtreeRunNs = subtreeRunNs
        self.subtreeWaitNs = subtreeWaitNs
        self.subtreeBusyNs = subtreeBusyNs
    }

    public var queue: Int {
        get { Int(queueRaw) }
        set { queueRaw = Int32(clamping: newValue) }
    }
    public var depth: Int {
        get { Int(depthRaw) }
        set { depthRaw = Int32(clamping: newValue) }
    }
    public var parent: Int? {
        get { parentRaw < 0 ? nil : Int(parentRaw) }
        set { parentRaw = newValue.map { Int32(clamping: $0) } ?? -1 }
    }
    /// This queue and everything that targets it, directly or not.
    public var subtreeQueues: Int {
        get { Int(subtreeQueuesRaw) }
        set { subtreeQueuesRaw = Int32(clamping: newValue) }
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
    static func forest(_ model: TraceModel, _ stats: QueueStatsTable) -> [QueueTreeNode] {
        forest(count: model.queues.count, target: { model.queues[$0].target }, precedes: { a, b in
            let qa = model.queues[a], qb = model.queues[b]
            return siblingOrder((qa.kind, qa.qos, qa.label, a), (qb.kind, qb.qos, qb.label, b))
        }, node: { q in
            let s = stats[q]
            return QueueTreeNode(queue: q, depth: 0, parent: nil, children: [], subtreeItems: s.items,
                                 subtreeRunNs: s.run.totalNs, subtreeWaitNs: s.wait.totalNs, subtreeBusyNs: s.busyNs)
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
    public static func forest(_ queues: [Queue]) -> [QueueTreeNode] {
        forest(count: queues.count, target: { queues[$0].target.flatMap { queues.indices.contains($0) ? $0 : nil } },
               precedes: { a, b in
                   let qa = queues[a], qb = queues[b]
                   return siblingOrder((qa.kind, qa.qos, qa.label, a), (qb.kind, qb.qos, qb.label, b))
               }, node: { q in
                   QueueTreeNode(queue: q, depth: 0, parent: nil, children: [], subtreeItems: queues[q].items,
                                 subtreeBusyNs: queues[q].busyNs)
               })
    }

    /// Roots and siblings: the main queue, global queues by QoS (highest first), then by label.
    static func siblingOrder(_ a: (kind: QueueKind, qos: QoSClass, label: String, index: Int),
                             _ b: (kind: QueueKind, qos: QoSClass, label: String, index: Int)) -> Bool {
        func rank(_ kind: QueueKind) -> Int { kind == .main ? 0 : kind == .global ? 1 : 2 }
        if rank(a.kind) != rank(b.kind) { return rank(a.kind) < rank(b.kind) }
        if a.kind == .global && a.qos != b.qos { return a.qos.rawValue > b.qos.rawValue }
        if a.label != b.label { return a.label < b.label }
        return a.index < b.index
    }

    /// The forest of queues 0..<n, depth-first: `node(q)` gives a queue's own figures, which
    /// each node adds up over its subtree.
    private static func forest(count n: Int, target: (Int) -> Int?, precedes order: (Int, Int) -> Bool,
                               node: (Int) -> QueueTreeNode) -> [QueueTreeNode] {
        var children = [[Int]](repeating: [], count: n)
        var isRoot = [Bool](repeating: true, count: n)
        for q in 0..<n {
            if let t = target(q), t != q, !inLoop(q, target) { children[t].append(q); isRoot[q] = false }
        }
        for q in 0..<n { children[q].sort(by: order) }
        var out: [QueueTreeNode] = []
        out.reserveCapacity(n)  // grown by doubling, the old and new buffers were both alive (+40 MB at 900k queues)
        var visited = [Bool](repeating: false, count: n)
        func visit(_ q: Int, depth: Int, parent: Int?) -> Int {
            visited[q] = true
            let slot = out.count
            var own = node(q)
            (own.depth, own.parent, own.children) = (depth, parent, children[q])
            out.append(own)
            for c in children[q] where !visited[c] {
                let child = out[visit(c, depth: depth + 1, parent: q)]
                out[slot].subtreeQueues += child.subtreeQueues
                out[slot].subtreeItems += child.subtreeItems
                out[slot].subtreeRunNs.saturatingIncrement(by: child.subtreeRunNs)
                out[slot].subtreeWaitNs.saturatingIncrement(by: child.subtreeWaitNs)
                out[slot].subtreeBusyNs.saturatingIncrement(by: child.subtreeBusyNs)
            }
            return slot
        }
        for q in (0..<n).filter({ isRoot[$0] }).sorted(by: order) where !visited[q] { _ = visit(q, depth: 0, parent: nil) }
        return out
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
