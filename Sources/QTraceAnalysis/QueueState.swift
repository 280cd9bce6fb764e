// A queue's run-time state while the model is built (`QueueRegistry`), in two parts: what
// every queue needs (its place in the target tree, its suspension, the topology cache) and
// what only a queue that items were enqueued onto or ran through needs (the clocks that split
// an item's wait, its backlog episode, its last items). A trace of 900k queues, 300k of them
// with items, held 168 bytes for each queue; now 48 each and 200 for each of the 300k (their
// figures included, which the model's queues held for every queue before).

/// What every queue needs (`QueueRegistry.state`): 48 bytes, the 8-byte field first so that
/// none is padded.
struct QueueState {
    /// Since when the queue is part of a target loop (noTime: it is not).
    var loopSince: UInt64 = noTime
    var target: Int32 = -1
    /// The queues that target this one (first of a list linked through their siblings).
    var firstChild: Int32 = -1
    var nextSibling: Int32 = -1
    var previousSibling: Int32 = -1
    var suspendCount: Int32 = 0
    var chainWalkStamp: UInt32 = 0
    var cacheVersion: Int32 = -1
    var cachedDomain: Int32 = -1
    /// Its row in `QueueRegistry.activity`; -1 until an item is enqueued onto it or runs in
    /// its serial domain.
    var activity: Int32 = -1
    var cachedQoS: UInt8 = 0
    var inactive = false
    var effectivelySuspended = false
}

/// What a queue with items needs (`QueueRegistry.activity`), from its first item on: 200
/// bytes (the per-item clocks and counters first, its figures last). Its clocks start at zero
/// then, which is what they would read had they run from the queue's creation: nothing of it
/// was running, busy or behind a barrier before, and its suspended clock is only ever read as
/// a difference between two readings after its start.
struct QueueActivity {
    /// Time with one of its own items running; with one item of its serial domain running;
    /// with a barrier outstanding; suspended (itself or through a target).
    var running = Accumulator()
    var domainBusy = Accumulator()
    var barrier = Accumulator()
    var suspended = Accumulator()
    /// The current backlog episode (pending > 0), kept flat for the per-enqueue update.
    var episodeStart: UInt64 = 0
    var pending: Int32 = 0
    var runningCount: Int32 = 0
    var maxWidth: Int32 = 0
    var domainRunning: Int32 = 0
    var barriersOutstanding: Int32 = 0
    /// Domain roots: the item that started last in the domain, and the thread running one.
    var lastDomainItem: Int32 = -1
    var holder: Int32 = -1
    var lastEndedItem: Int32 = -1
    var lastBarrierItem: Int32 = -1
    var episodeEnqueued: Int32 = 0
    var episodeStarted: Int32 = 0
    var episodePeak: Int32 = 0
    /// The queue's figures, moved into its `TraceQueue` at the end (`takeQueues`): kept here
    /// while the model is built, beside the clocks the per-item writes touch anyway, so that
    /// the queues that ran nothing need no room for them.
    var waitByCause = WaitBreakdown()
    var backlog = StepSeries()
    var busyNs: UInt64 = 0

    var episode: BacklogEpisode? {
        pending > 0 || episodeEnqueued > 0
            ? BacklogEpisode(start: episodeStart, end: nil, peak: Int(episodePeak), enqueued: Int(episodeEnqueued),
                             started: Int(episodeStarted))
            : nil
    }
}

/// Time spent in a state, accumulated so that the overlap of any interval with the state is
/// `value(at: end) - value(at: start)`: O(1) per item for the wait-cause split. 16 bytes:
/// whether the state holds is `since` being set (a time is never `idle`, noTime).
struct Accumulator {
    static let idle = noTime
    var total: UInt64 = 0
    /// When the state began; `idle` while it does not hold.
    var since: UInt64 = Accumulator.idle

    var active: Bool { since != Self.idle }

    @inline(__always) mutating func set(_ on: Bool, at t: UInt64) {
        if on == active { return }
        if on {
            since = Swift.min(t, Self.idle - 1)
        } else {
            total &+= t &- since
            since = Self.idle
        }
    }

    @inline(__always) func value(at t: UInt64) -> UInt64 { active ? total &+ (t &- since) : total }
}
