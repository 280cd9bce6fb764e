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
    private var latest = CachedIdMap<ObjectRef>()
    private var generations = IdMap<Int32>()

    /// The most recent object at `address`, of any kind.
    @inline(__always)
    subscript(address: UInt64) -> ObjectRef? { latest[address] }

    /// The most recent object at `address` when it is of `kind`.
    @inline(__always)
    func index(of kind: ObjectKind, at address: UInt64) -> Int32? {
        guard let ref = latest[address], ref.kind == kind else { return nil }
        return ref.index
    }

    /// Starts a new object at `address`, returning its generation (0 for the first).
    mutating func nextGeneration(_ address: UInt64) -> Int {
        let g = generations[address] ?? 0
        generations[address] = g + 1
        return Int(g)
    }

    /// `index` of `kind` is the object at `address` from now on.
    mutating func store(_ kind: ObjectKind, _ index: Int32, at address: UInt64) {
        latest.store(ObjectRef(kind: kind, index: index), at: address)
    }
}
