// Object identity while the model is built: Dispatch objects are known to the trace only by
// address, and addresses are reused once an object is freed. Each address maps to its most
// recent object, and counts the objects it has held (their generations), so that a queue
// created at a freed group's address is a new queue, numbered apart from the old one.

enum ObjectKind: UInt8 { case queue, group, semaphore, source, channel }

struct ObjectRef {
    var kind: ObjectKind
    var index: Int32
}

/// Address → latest object (its kind and index in its collaborator's table), and address →
/// generations so far. Owned by `ModelBuilder`, which asks it before handing a record to the
/// collaborator of the object's kind.
struct ObjectDirectory {
    /// Both facts of an address in one map: two maps held a key and a value slot each per
    /// address (at 1.1M objects, 128 MB of the 900k-queue trace's peak; one map, 80 MB), filled
    /// to three quarters (40 MB): it only grows, one entry per address ever seen.
    /// 1,024 cached addresses: a program feeding hundreds of queues in turn (the fan-out's 400)
    /// missed a 64-slot cache on nearly every ENQUEUE.
    private var entries = CachedIdMap<Entry, 1024>(load: .threeQuarters)

    private struct Entry {
        var kind: ObjectKind
        /// -1: a generation was started, its object not stored yet.
        var index: Int32
        var generations: Int32
    }

    /// The most recent object at `address`, of any kind.
    @inline(__always)
    subscript(address: UInt64) -> ObjectRef? {
        guard let entry = entries[address], entry.index >= 0 else { return nil }
        return ObjectRef(kind: entry.kind, index: entry.index)
    }

    /// The most recent object at `address` when it is of `kind`.
    @inline(__always)
    func index(of kind: ObjectKind, at address: UInt64) -> Int32? {
        guard let entry = entries[address], entry.kind == kind, entry.index >= 0 else { return nil }
        return entry.index
    }

    /// `index(of:at:)` in place, for the builder's hottest lookup (the queue of each ENQUEUE):
    /// called on the builder's directory as a non-mutating method, the whole directory was
    /// copied out first (four 16-byte loads and stores per call, a quarter of the ENQUEUE's time).
    @inline(__always)
    mutating func indexInPlace(of kind: ObjectKind, at address: UInt64) -> Int32? {
        index(of: kind, at: address)
    }

    /// Starts a new object at `address`, returning its generation (0 for the first). The
    /// address keeps naming its previous object until `store`.
    mutating func nextGeneration(_ address: UInt64) -> Int {
        let entry = entries[address] ?? Entry(kind: .queue, index: -1, generations: 0)
        entries.store(Entry(kind: entry.kind, index: entry.index, generations: entry.generations + 1), at: address)
        return Int(entry.generations)
    }

    /// `index` of `kind` is the object at `address` from now on.
    mutating func store(_ kind: ObjectKind, _ index: Int32, at address: UInt64) {
        let generations = entries[address]?.generations ?? 0
        entries.store(Entry(kind: kind, index: index, generations: generations), at: address)
    }
}
