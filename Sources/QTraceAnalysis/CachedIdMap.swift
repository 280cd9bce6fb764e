// An IdMap with a small direct-mapped cache of recently used entries in front. The builder's
// lookups by object address, by thread id and by item-id block hit a handful of hot keys
// (the queues a program feeds, the threads taking turns, the blocks of the producers running
// at once) far more often than the rest, so most of them end in the cache.

struct CachedIdMap<Value, let cacheSlots: Int> {
    private var map: IdMap<Value>
    /// A table (reference semantics, so a lookup fills it without being `mutating`): copies of
    /// the map would share it, and the builder never copies its maps.
    private let cache = UnsafeTable(repeating: Slot(key: 0, value: nil), count: cacheSlots)

    /// `cacheSlots` (a power of two: at least as many as the keys a program keeps hot) is a
    /// type parameter so that the slot's shift is a constant: read from the map, it cost the
    /// thread lookup of every event ~1-2% of the flow's model phase (7-9 rounds, load ~4.5).
    init(load: IdMap<Value>.Load = .half) {
        precondition(cacheSlots > 1 && cacheSlots & (cacheSlots - 1) == 0, "cache slots: a power of two")
        map = IdMap(load: load)
    }

    private struct Slot {
        var key: UInt64
        var value: Value?
    }

    @inline(__always)
    private func slot(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - cacheSlots.trailingZeroBitCount))
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
