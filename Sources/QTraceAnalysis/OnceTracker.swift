// dispatch_once calls under way while the model is built (ONCE_BEGIN until ONCE_END). What a
// finished call adds is decided in ModelBuilder+Once.swift.

struct OnceTracker {
    /// When each call under way began.
    private var begins: [OnceCall: UInt64] = [:]

    mutating func began(thread t: Int32, predicate: UInt64, at now: UInt64) {
        begins[OnceCall(thread: t, predicate: predicate)] = now
    }

    /// When the call began; nil for an end without its begin.
    mutating func ended(thread t: Int32, predicate: UInt64) -> UInt64? {
        begins.removeValue(forKey: OnceCall(thread: t, predicate: predicate))
    }
}

/// One thread's dispatch_once call on one predicate.
struct OnceCall: Hashable {
    var thread: Int32
    var predicate: UInt64
}
