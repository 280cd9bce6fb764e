// A small open-addressing hash map for the builder's in-flight lookups (item ids, object
// addresses, thread ids). Swift's Dictionary hashes with SipHash, which alone would cost most
// of the per-event budget (10M events/s); ids and addresses only need a multiplicative hash.

struct IdMap<Value> {
    private var keys: [UInt64]
    private var values: [Value?]
    private var shift: UInt64
    private let load: Load
    /// The count past which the table doubles.
    private var growthLimit: Int
    private(set) var count = 0
    /// UInt64.max marks an empty slot; a real key of that value is kept aside.
    private var maxKeyValue: Value?
    private static var empty: UInt64 { .max }

    /// How full the table gets before it doubles. Half keeps probes short for the maps that
    /// churn on every item (ids in flight; at three quarters the flood trace's 3.4M pending
    /// items cost 4-9% more CPU); three quarters halves a map that only grows (object
    /// addresses: at half, a 900k-queue trace's 1.1M objects took 4M slots, 80 MB).
    enum Load {
        case half, threeQuarters
    }

    init(capacity: Int = 16, load: Load = .half) {
        self.load = load
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = [UInt64](repeating: Self.empty, count: size)
        values = [Value?](repeating: nil, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        growthLimit = load.limit(size)
    }

    @inline(__always) private func slot(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    subscript(key: UInt64) -> Value? {
        get {
            if key == Self.empty { return maxKeyValue }
            let mask = keys.count - 1
            var i = slot(key)
            while true {
                let k = keys[i]
                if k == key { return values[i] }
                if k == Self.empty { return nil }
                i = (i + 1) & mask
            }
        }
        set {
            if let newValue { insert(key, newValue) } else { _ = remove(key) }
        }
    }

    mutating func insert(_ key: UInt64, _ value: Value) {
        if key == Self.empty {
            if maxKeyValue == nil { count += 1 }
            maxKeyValue = value
            return
        }
        if count >= growthLimit { grow() }
        let mask = keys.count - 1
        var i = slot(key)
        while true {
            let k = keys[i]
            if k == key { values[i] = value; return }
            if k == Self.empty { keys[i] = key; values[i] = value; count += 1; return }
            i = (i + 1) & mask
        }
    }

    /// Inserts unless the key is present (one probe sequence); false when it was present.
    mutating func insertIfAbsent(_ key: UInt64, _ value: Value) -> Bool {
        if key == Self.empty {
            if maxKeyValue != nil { return false }
            maxKeyValue = value; count += 1
            return true
        }
        if count >= growthLimit { grow() }
        let mask = keys.count - 1
        var i = slot(key)
        while true {
            let k = keys[i]
            if k == key { return false }
            if k == Self.empty { keys[i] = key; values[i] = value; count += 1; return true }
            i = (i + 1) & mask
        }
    }

    /// Removes and returns the value, keeping probe chains intact (backward-shift deletion).
    @discardableResult
    mutating func remove(_ key: UInt64) -> Value? {
        if key == Self.empty {
            defer { if maxKeyValue != nil { count -= 1 }; maxKeyValue = nil }
            return maxKeyValue
        }
        let mask = keys.count - 1
        var i = slot(key)
        while true {
            let k = keys[i]
            if k == Self.empty { return nil }
            if k == key { break }
            i = (i + 1) & mask
        }
        let removed = values[i]
        var hole = i
        var j = i
        while true {
            j = (j + 1) & mask
            let k = keys[j]
            if k == Self.empty { break }
            let home = slot(k)
            // Move k into the hole unless its home lies cyclically in (hole, j].
            let stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j)
            if !stays {
                keys[hole] = k; values[hole] = values[j]
                hole = j
            }
        }
        keys[hole] = Self.empty; values[hole] = nil
        count -= 1
        return removed
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        let size = keys.count * 2
        keys = [UInt64](repeating: Self.empty, count: size)
        values = [Value?](repeating: nil, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        growthLimit = load.limit(size)
        let mask = size - 1
        for (n, k) in oldKeys.enumerated() where k != Self.empty {
            var i = slot(k)
            while keys[i] != Self.empty { i = (i + 1) & mask }
            keys[i] = k; values[i] = oldValues[n]
        }
    }

    /// All entries in key order (deterministic, for end-of-trace processing).
    func sortedEntries() -> [(key: UInt64, value: Value)] {
        var out: [(key: UInt64, value: Value)] = []
        for (n, k) in keys.enumerated() where k != Self.empty { out.append((k, values[n]!)) }
        if let maxKeyValue { out.append((Self.empty, maxKeyValue)) }
        return out.sorted { $0.key < $1.key }
    }
}

extension IdMap.Load {
    /// The most entries a table of `size` slots holds.
    func limit(_ size: Int) -> Int { self == .half ? size / 2 : size / 4 * 3 }
}
