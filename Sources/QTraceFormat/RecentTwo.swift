// A lookup's last two answers, for the tables the slot-less pairing asks in runs: the merge
// interleaves a few threads' events, and a thread runs a queue's items in a row, so most
// lookups repeat one of the last two (hashing or probing at each switch showed in the merge).

/// The last two answers (key and value) of a lookup whose answers never change, latest first.
struct RecentTwo<Key: Equatable> {
    private var keys: (Key, Key)
    /// -1: an empty entry.
    private var values: (Int32, Int32) = (-1, -1)

    /// `placeholder`: any key (the entries start empty).
    init(placeholder: Key) { keys = (placeholder, placeholder) }

    /// `key`'s value if it is one of the last two answers (it becomes the latest).
    @inline(__always)
    mutating func recall(_ key: Key) -> Int32? {
        if key == keys.0 && values.0 >= 0 { return values.0 }
        guard key == keys.1 && values.1 >= 0 else { return nil }
        remember(key, values.1)
        return values.0
    }

    /// Makes `value` the latest answer, for `key`.
    @inline(__always)
    mutating func remember(_ key: Key, _ value: Int32) {
        (keys, values) = ((key, keys.0), (value, values.0))
    }
}
