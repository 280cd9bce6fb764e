// Backlog changes on their way to the queues' backlog series (kept in the queues' activity
// rows, `QueueActivity.backlog`, while the model is built). With a thousand busy queues the
// builder changes one queue's backlog after another's, and recording each change at once
// touched a different series every time (its points array header and last point, both cold
// again by then): ~11% of a starfish lap. The log keeps the changes in one array and hands
// them over grouped by queue every `capacity` changes (a counting sort), so that each series
// is touched once per flush. Each queue still receives its own changes in time order, so the
// series come out the same.
import QTraceFormat

struct BacklogLog {
    struct Change {
        /// The queue's row in the registry's `activity` table.
        var queue: Int32
        var depth: Int32
        var time: UInt64
    }

    /// 16k changes: 256 KiB for the log and as much for the sorted copy, within L2.
    static let capacity = 16 * 1024

    private let storage = BacklogLogStorage(capacity: BacklogLog.capacity)
    /// The storage's buffers, kept here so that an append never reads the class instance.
    private let changes: UnsafeMutablePointer<Change>
    private let sorted: UnsafeMutablePointer<Change>
    private(set) var count = 0
    /// The queue of the log's first change, and whether another queue changed since: a log of
    /// one queue's changes (a flood onto one queue) needs no sorting.
    private var firstQueue: Int32 = -1
    private var mixed = false
    /// Per queue: changes in the log while counting, then where its run goes; 0 between flushes.
    private var slots: [Int32] = []
    /// The queues with changes in the log, in order of their first change.
    private var touched: [Int32] = []

    init() {
        changes = storage.changes
        sorted = storage.sorted
    }

    var isFull: Bool { count == Self.capacity }

    @inline(__always)
    mutating func append(row q: Int, depth: Int32, at time: UInt64) {
        let queue = Int32(truncatingIfNeeded: q)
        changes[count] = Change(queue: queue, depth: depth, time: time)
        if count == 0 { firstQueue = queue } else if queue != firstQueue { mixed = true }
        count += 1
    }

    /// Records every change into its queue's series (grouped by queue, each queue's changes in
    /// order) and empties the log.
    mutating func flush(into queues: UnsafeTable<QueueActivity>) {
        guard count > 0 else { return }
        defer { (count, mixed) = (0, false) }
        guard mixed else {
            let changes = self.changes
            queues[Int(firstQueue)].backlog.record(run: count, value: { changes[$0].depth }, time: { changes[$0].time })
            return
        }
        if slots.count < queues.count { slots.append(contentsOf: repeatElement(0, count: queues.count - slots.count)) }
        slots.withUnsafeMutableBufferPointer { slots in
            for i in 0..<count {
                let q = Int(changes[i].queue)
                if slots[q] == 0 { touched.append(Int32(q)) }
                slots[q] += 1
            }
            var start: Int32 = 0
            for q in touched {
                let run = slots[Int(q)]
                slots[Int(q)] = start
                start += run
            }
            for i in 0..<count {
                let q = Int(changes[i].queue)
                let at = slots[q]  // read once: after the store into `sorted`, it was read again
                sorted[Int(at)] = changes[i]
                slots[q] = at + 1
            }
            var i = 0
            let backlogOffset = MemoryLayout<QueueActivity>.offset(of: \QueueActivity.backlog) ?? 0
            for k in touched.indices {
                // Each queue's series was last touched a flush ago: its row, the points' count
                // and its last point are three dependent misses. Asked for three, two and one
                // queues ahead, each has arrived when the next one's address is read.
                if k + 3 < touched.count {
                    prefetchForRead(UnsafeRawPointer(queues.address(of: Int(touched[k + 3]))) + backlogOffset)
                }
                if k + 2 < touched.count { queues.address(of: Int(touched[k + 2])).pointee.backlog.prefetchPointCount() }
                if k + 1 < touched.count { queues.address(of: Int(touched[k + 1])).pointee.backlog.prefetchLastPoint() }
                let q = touched[k]
                let end = Int(slots[Int(q)])
                let run = sorted + i
                queues[Int(q)].backlog.record(run: end - i, value: { run[$0].depth }, time: { run[$0].time })
                i = end
                slots[Int(q)] = 0
            }
        }
        touched.removeAll(keepingCapacity: true)
    }

    /// Records the changes in the log into `queues` (a copy of the registry's activity rows,
    /// for a model read before the end), in log order; the log stays as it is.
    func replay(into queues: inout [QueueActivity]) {
        for i in 0..<count {
            let change = changes[i]
            queues[Int(change.queue)].backlog.record(change.depth, at: change.time)
        }
    }
}

/// The log's two buffers, freed with the last copy of the log.
final class BacklogLogStorage {
    let changes: UnsafeMutablePointer<BacklogLog.Change>
    let sorted: UnsafeMutablePointer<BacklogLog.Change>

    init(capacity: Int) {
        changes = .allocate(capacity: capacity)
        sorted = .allocate(capacity: capacity)
    }

    deinit {
        changes.deallocate()
        sorted.deallocate()
    }
}
