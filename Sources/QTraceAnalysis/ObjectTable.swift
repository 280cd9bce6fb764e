// Dispatch objects by address: the hashed map plus a small direct-mapped cache of the latest
// object stored per slot. A program's hot objects (the queues it feeds, the semaphores it
// waits on) are few, so most lookups (one or two per event) end in the cache.

struct ObjectTable {
    private var map = IdMap<ObjectRef>()
    private var cache = [CachedObject](repeating: CachedObject(address: 0, ref: nil), count: cacheSize)
    private static let cacheSize = 64

    private struct CachedObject {
        var address: UInt64
        var ref: ObjectRef?
    }

    @inline(__always)
    private static func slot(_ address: UInt64) -> Int {
        Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }

    /// The object most recently stored at `address`.
    @inline(__always)
    subscript(address: UInt64) -> ObjectRef? {
        let cached = cache[Self.slot(address)]
        if cached.address == address, let ref = cached.ref { return ref }
        return map[address]
    }

    /// Stores the object now at `address` (a new object at a reused address replaces the old
    /// one; objects are never removed).
    mutating func store(_ ref: ObjectRef, at address: UInt64) {
        map[address] = ref
        cache[Self.slot(address)] = CachedObject(address: address, ref: ref)
    }
}
