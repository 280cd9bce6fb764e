// An IdMap with a small direct-mapped cache of recently used entries in front. The builder's
// lookups by object address, by thread id and by item-id block hit a handful of hot keys
// (the queues a program feeds, the threads taking turns, the blocks of the producers running
// at once) far more often than the rest, so most of them end in the cache.

struct CachedIdMap<Value> {
    private var map: IdMap<Value>
    /// A table (reference semantics, so a lookup fills it without being `mutating`): copies of
    /// the map would share it, and the builder never copies its maps.
    private let cache: UnsafeTable<Slot>
    /// 64 - log2 of the cache's slots (a power of two).
    private let slotShift: UInt64

    /// `cacheSlots`: a power of two, at least as many as the keys a program keeps hot.
    init(load: IdMap<Value>.Load = .half, cacheSlots: Int = 64) {
        precondition(cacheSlots > 1 && cacheSlots & (cacheSlots - 1) == 0, "cache slots: a power of two")
        map = IdMap(load: load)
        cache = UnsafeTable(repeating: Slot(key: 0, value: nil), count: cacheSlots)
        slotShift = UInt64(64 - cacheSlots.trailingZeroBitCount)
    }

    private struct Slot {
        var key: UInt64
        var value: Value?
    }

    @inline(__always)
    private func slot(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> slotShift)
    }

    /// The value of `key` (a hit in the map is cached).
    @inline(__always)
    subscript(key: UInt64) -> Value? {
        let slot = slot(key)
        if cache[slot].key == key, let value = cache[slot].value { return value }
        guard let value = map[key] else { return nil }
        cache[slot] = Slot(key: key, value: value)
        return value
    }

    mutating func store(_ value: Value, at key: UInt64) {
        map[key] = value
        cache[slot(key)] = Slot(key: key, value: value)
    }

    mutating func remove(_ key: UInt64) {
        map.remove(key)
        if cache[slot(key)].key == key { cache[slot(key)].value = nil }
    }
}
