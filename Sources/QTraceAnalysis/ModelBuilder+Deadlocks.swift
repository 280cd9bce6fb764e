// Deadlock observations that need the live state of threads, queues and items together:
// a sync (or apply) onto a queue the thread holds, a cycle of sync waits across threads, and
// the shim's own deadlock records.
import QTraceFormat

extension ModelBuilder {
    /// Whether thread `t` holds queue `c` exclusively: it runs an item of `c` (of any kind:
    /// a barrier needs it drained) or of a queue below `c` when `c` is serial. The main thread
    /// always holds the main queue (it drains it). No allocation: this runs on every sync.
    func holds(_ t: Int32, _ c: Int32) -> Bool {
        if c == queues.mainQueue && threads.isMain(t) { return true }
        let serial = queues.isSerial(c)
        for f in threads.frames(of: t) where f.kind == .item || f.kind == .handler {
            var cur = items[Int(f.index)].queueIndex
            var steps = 0
            while cur >= 0 && steps < 64 {
                if cur == c && (steps == 0 || serial) { return true }
                cur = queues.target(of: cur)
                steps += 1
            }
        }
        return false
    }

    /// sync (or apply) onto a serial queue the thread already holds, directly or through a
    /// target, can never start: libdispatch would need the thread to finish first.
    mutating func checkSelfDeadlock(thread t: Int32, queue q: Int32, exclusive: Bool, kind: DeadlockReport.Kind,
                                    item: Int32) {
        guard threads.currentItem(of: t) >= 0 || threads.isMain(t) else { return }
        var cur = q
        var steps = 0
        while cur >= 0 && steps < 64 {
            let needsExclusive = queues.isSerial(cur) || (steps == 0 && exclusive)
            if needsExclusive && holds(t, cur) {
                appendObservation(&model.deadlocks, DeadlockReport(time: now, thread: Int(t), kind: kind, origin: .analysis,
                                                                   queue: Int(q), heldQueue: Int(cur),
                                                                   item: item < 0 ? nil : Int(item)))
                return
            }
            cur = queues.target(of: cur)
            steps += 1
        }
    }

    /// Wait-for graph: thread waits on queue → the queue's serial domain is held by a thread →
    /// which waits on a queue ... back to the first thread.
    mutating func checkSyncCycle(thread t: Int32, queue q: Int32) {
        // Fast exit for the common case: nobody else holds the queue's domain.
        let firstDomain = queues.domainRoot(q)
        guard firstDomain >= 0, queues.holder(ofDomain: firstDomain) != t,
              queues.holder(ofDomain: firstDomain) >= 0 || firstDomain == queues.mainQueue else { return }
        var cycleThreads: [Int32] = [t]
        var cycleQueues: [Int32] = [q]
        var wanted = q
        for _ in 0..<16 {
            let domain = queues.domainRoot(wanted)
            guard domain >= 0 else { return }
            var holder = queues.holder(ofDomain: domain)
            if holder < 0, domain == queues.mainQueue,
               let main = threads.liveMainThread(), threads.runState(of: main) == .blocked {
                holder = main // blocked main-thread code holds the main queue
            }
            guard holder >= 0 else { return }
            if holder == t {
                if cycleThreads.count > 1 {
                    appendObservation(&model.syncCycles, SyncCycle(time: now, threads: cycleThreads.map { Int($0) },
                                                                   queues: cycleQueues.map { Int($0) }))
                }
                return
            }
            guard !cycleThreads.contains(holder),
                  let top = threads.frames(of: holder).last, top.kind == .blocked, top.cause == .sync else { return }
            let interval = threads.blockedInterval(holder, top.index)
            cycleThreads.append(holder)
            cycleQueues.append(Int32(interval.object))
            wanted = Int32(interval.object)
        }
    }

    mutating func shimDeadlock(_ e: Event, thread t: Int32) {
        let q: Int32? = e.a == 0 ? nil : queue(address: e.a)
        let held: Int32? = e.b == 0 ? nil : queue(address: e.b)
        let waiting = threads.frames(of: t).last { $0.kind == .blocked && $0.cause == .sync }
        appendObservation(&model.deadlocks, DeadlockReport(
            time: now, thread: Int(t), kind: e.arg == 2 ? .apply : .sync, origin: .shim,
            queue: q.map { Int($0) }, heldQueue: held.map { Int($0) },
            item: waiting.map { Int(threads.blockedInterval(t, $0.index).item ?? -1) }.flatMap { $0 < 0 ? nil : $0 }))
    }
}
