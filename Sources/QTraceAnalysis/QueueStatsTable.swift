// Every queue's statistics, index-aligned with `model.queues`, in the memory of what they
// say: a row of statistics is ~440 bytes (three DurationStats, four strings), and most queues
// of a queue-heavy trace ran nothing or little (900k queues made `stats` hold 460 MB of rows).
// A queue keeps its identity and, if it ran something, its figures packed (`PackedQueueRow`,
// ~40-100 bytes); its row is rebuilt, equal to the one computed, when read. A table made for a
// model's queues reads each identity from the model's own queue (8 bytes a queue); any other
// keeps it (`QueueIdentity`, 56 bytes).
import QTraceFormat

/// A collection of `QueueStats` as an array of them would be (and encoded the same way).
public struct QueueStatsTable: RandomAccessCollection, MutableCollection, Sendable, Codable, ExpressibleByArrayLiteral {
    /// Per queue: index into `rows` (>= 0), or `-1 - index` into `identities`.
    private var slots: [Int32] = []
    /// Rows that neither form gives back exactly (none that the statistics compute).
    private var rows: [QueueStats] = []
    /// The model's queues, for a table made for them (`init(identitiesFrom:)`): the identity of
    /// the row at q is queue q's, and `identities` stays empty. The model's own array, shared.
    private var modelQueues: [TraceQueue] = []
    private var identities: [QueueIdentity] = []
    /// Per compact row (`-1 - slot`): where the figures start in `packed`, `noFigures` for a
    /// queue that ran nothing.
    private var packedOffsets: [UInt32] = []
    private var packed: [UInt8] = []
    private static let noFigures = UInt32.max

    public init() {}

    public init(_ rows: some Sequence<QueueStats>) {
        for row in rows { append(row) }
    }

    public init(arrayLiteral rows: QueueStats...) { self.init(rows) }

    /// An empty table for the rows of `queues`, in their order: 900k queues' identities cost
    /// 50 MB of `QueueIdentity` beside the queues that hold them already.
    init(identitiesFrom queues: [TraceQueue]) { modelQueues = queues }

    /// Room for `count` queues, full rows or identities, reserved once: a table grown by
    /// doubling holds its old and new buffers at once (at 900k queues, +115 MB of rows while
    /// they were copied). Reserved and unused, the room costs address space, not memory.
    public mutating func reserveCapacity(_ count: Int) {
        slots.reserveCapacity(count)
        if modelQueues.isEmpty { identities.reserveCapacity(count) }
        packedOffsets.reserveCapacity(count)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { slots.count }

    public subscript(q: Int) -> QueueStats {
        get {
            let slot = Int(slots[q])
            if slot >= 0 { return rows[slot] }
            let k = -1 - slot
            let offset = packedOffsets[k]
            let bare = modelQueues.isEmpty ? identities[k].row : QueueStats(identityOf: modelQueues[q], q)
            return offset == Self.noFigures ? bare : PackedQueueRow.read(packed, at: Int(offset), onto: bare)
        }
        set { slots[q] = store(newValue, at: q, replacing: slots[q]) }
    }

    public mutating func append(_ row: QueueStats) {
        slots.append(store(row, at: slots.count, replacing: nil))
    }

    /// The row at `q` with its identity alone: from the model's queue, or parsed from `row`
    /// (nil when its address or QoS is not what the statistics write).
    private func identity(of row: QueueStats, at q: Int) -> (bare: QueueStats, kept: QueueIdentity?)? {
        guard modelQueues.isEmpty else {
            return q < modelQueues.count ? (QueueStats(identityOf: modelQueues[q], q), nil) : nil
        }
        return QueueIdentity(row).map { ($0.row, $0) }
    }

    /// Where `row` goes: its identity alone when that rebuilds it exactly, else its identity
    /// and packed figures when they do, else a full row (reusing the slot it replaces when of
    /// the same kind; a replaced row's packed figures stay unused).
    private mutating func store(_ row: QueueStats, at q: Int, replacing old: Int32?) -> Int32 {
        if let found = identity(of: row, at: q) {
            let (bare, identity) = (found.bare, found.kept)
            var offset = Self.noFigures
            if bare != row {
                let start = packed.count
                PackedQueueRow.append(row, to: &packed)
                guard packed.count < Int(Self.noFigures), PackedQueueRow.read(packed, at: start, onto: bare) == row else {
                    packed.removeSubrange(start...)
                    return storeFull(row, replacing: old)
                }
                offset = UInt32(start)
            }
            if let old, old < 0 {
                if let identity { identities[Int(-1 - old)] = identity }
                packedOffsets[Int(-1 - old)] = offset
                return old
            }
            if let identity { identities.append(identity) }
            packedOffsets.append(offset)
            return Int32(-packedOffsets.count)
        }
        return storeFull(row, replacing: old)
    }

    private mutating func storeFull(_ row: QueueStats, replacing old: Int32?) -> Int32 {
        if let old, old >= 0 {
            rows[Int(old)] = row
            return old
        }
        rows.append(row)
        return Int32(rows.count - 1)
    }

    public init(from decoder: any Decoder) throws {
        self.init(try [QueueStats](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for row in self { try container.encode(row) }
    }
}

/// What a row of a queue that ran nothing holds: its identity, every other field at its
/// default. The address ("0x…#generation") and the QoS are kept as the numbers they are
/// written from.
struct QueueIdentity: Sendable {
    var label: String
    var name: String?
    var address: UInt64
    var generation: Int32
    var queue: Int32
    var target: Int32
    var kind: QueueKind
    var qos: QoSClass
    var hasTarget: Bool

    /// nil when the row's address or QoS is not what `QueueStats(model:_:)` writes.
    init?(_ row: QueueStats) {
        guard let (address, generation) = Self.parseAddress(row.address),
              let qos = QoSClass.allCases.first(where: { $0.name == row.qos }) else { return nil }
        label = row.label
        name = row.name
        self.address = address
        self.generation = generation
        self.qos = qos
        queue = Int32(clamping: row.queue)
        target = Int32(clamping: row.target ?? 0)
        kind = row.kind
        hasTarget = row.target != nil
    }

    var row: QueueStats {
        QueueStats(queue: Int(queue), label: label, name: name,
                   address: queueAddress(address, generation: Int(generation)), kind: kind, qos: qos.name,
                   target: hasTarget ? Int(target) : nil)
    }

    /// "0x1f" → (0x1f, 0); "0x1f#2" → (0x1f, 2). Any other text may parse too: the caller
    /// compares the rebuilt row with the original.
    private static func parseAddress(_ text: String) -> (UInt64, Int32)? {
        guard text.hasPrefix("0x") else { return nil }
        let digits = text.utf8.dropFirst(2)
        let hash = digits.firstIndex(of: UInt8(ascii: "#")) ?? digits.endIndex
        guard let address = UInt64(Substring(digits[..<hash]), radix: 16) else { return nil }
        guard hash != digits.endIndex else { return (address, 0) }
        guard let generation = Int32(Substring(digits[digits.index(after: hash)...])) else { return nil }
        return (address, generation)
    }
}

/// A queue's address as the statistics write it: "0x…", with "#generation" when reused.
/// Written digit by digit into the string's own storage: compact rows rebuild it at every read
/// (`QueueIdentity.row`), and three concatenations cost more than the rest of the row.
func queueAddress(_ address: UInt64, generation: Int) -> String {
    let hexDigits = Swift.max(1, (64 - address.leadingZeroBitCount + 3) / 4)
    let suffix = generation > 0 ? String(generation) : ""
    let length = 2 + hexDigits + (suffix.isEmpty ? 0 : 1 + suffix.utf8.count)
    return String(unsafeUninitializedCapacity: length) { out in
        out[0] = UInt8(ascii: "0"); out[1] = UInt8(ascii: "x")
        var value = address
        for i in stride(from: 1 + hexDigits, through: 2, by: -1) {
            let digit = UInt8(value & 0xF)
            out[i] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            value >>= 4
        }
        guard !suffix.isEmpty else { return length }
        out[2 + hexDigits] = UInt8(ascii: "#")
        for (k, byte) in suffix.utf8.enumerated() { out[3 + hexDigits + k] = byte }
        return length
    }
}

extension QueueStats {
    /// Item indices grouped by queue, each queue's in item order (a counting sort of the items,
    /// `counts` per queue); queue q's are `items[starts[q]..<starts[q + 1]]`.
    static func itemsByQueue(_ model: TraceModel, counts: ColumnBuffer<Int>) -> (items: [Int32], starts: [Int]) {
        let n = model.queues.count
        var starts = [Int](repeating: 0, count: n + 1)
        for q in 0..<n { starts[q + 1] = starts[q] + counts[q] }
        let next = ColumnBuffer(count: n, repeating: 0)
        for q in 0..<n { next[q] = starts[q] }
        let items = [Int32](unsafeUninitializedCapacity: starts[n]) { order, initialized in
            model.items.withUnsafeBufferPointer { all in
                for i in all.indices where all[i].queueIndex >= 0 {
                    let q = Int(all[i].queueIndex)
                    order[next[q]] = Int32(i)
                    next[q] += 1
                }
            }
            initialized = starts[n]
        }
        return (items, starts)
    }

    /// The row of `queue`, model queue `q`, with its identity and nothing counted (what
    /// `init(_:_:)` writes of it).
    init(identityOf queue: TraceQueue, _ q: Int) {
        self.init(queue: q, label: queue.label, name: queueName(queue),
                  address: queueAddress(queue.address, generation: queue.generation), kind: queue.kind,
                  qos: queue.qos.name, target: queue.target)
    }

    /// A row with its identity and nothing counted.
    init(queue: Int, label: String, name: String?, address: String, kind: QueueKind, qos: String, target: Int?) {
        self.queue = queue
        self.label = label
        self.name = name
        self.address = address
        self.kind = kind
        self.qos = qos
        self.target = target
    }
}
