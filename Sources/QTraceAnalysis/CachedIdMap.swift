// An IdMap with a small direct-mapped cache of recently used entries in front. The builder's
// lookups by object address, by thread id and by item-id block hit a handful of hot keys
// (the queues a program feeds, the threads taking turns, the blocks of the producers running
// at once) far more often than the rest, so most of them end in the cache.

struct CachedIdMap<Value> {
    private var map: IdMap<Value>
    /// A table (reference semantics, so a lookup fills it without being `mutating`): copies of
    /// the map would share it, and the builder never copies its maps.
    private let cache = UnsafeTable(repeating: Slot(key: 0, value: nil), count: cacheSize)
    private static var cacheSize: Int { 64 }

    init(load: IdMap<Value>.Load = .half) { map = IdMap(load: load) }

    private struct Slot {
        var key: UInt64
        var value: Value?
    }

    @inline(__always)
    private static func slot(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58)  // 64 slots
    }

    /// The value of `key` (a hit in the map is cached).
    @inline(__always)
    subscript(key: UInt64) -> Value? {
        let slot = Self.slot(key)
        if cache[slot].key == key, let value = cache[slot].value { return value }
        guard let value = map[key] else { return nil }
        cache[slot] = Slot(key: key, value: value)
        return value
    }

    mutating func store(_ value: Value, at key: UInt64) {
        map[key] = value
        cache[Self.slot(key)] = Slot(key: key, value: value)
    }

    mutating func remove(_ key: UInt64) {
        map.remove(key)
        if cache[Self.slot(key)].key == key { cache[Self.slot(key)].value = nil }
    }
}
