// dispatch_apply calls while the model is built: each call's iterations, their widest
// concurrency and each thread's share. The caller's wait and the iteration frames are the
// ThreadTable's; ModelBuilder+Objects.swift wires them.

struct ApplyTracker {
    /// The model's apply calls (moved into it by `takeApplies`).
    private(set) var applies: [ApplyCall] = []
    /// Iterations running now, per call.
    private var running: [Int32] = []
    /// The calls under way by id.
    private var byId = IdMap<Int32>()

    mutating func began(_ call: ApplyCall) -> Int32 {
        let a = Int32(applies.count)
        applies.append(call)
        running.append(0)
        byId[call.id] = a
        return a
    }

    /// The call's end; false for an id not under way.
    mutating func ended(id: UInt64, at now: UInt64) -> Bool {
        guard let a = byId.remove(id) else { return false }
        applies[Int(a)].end = now
        return true
    }

    /// An iteration of call `id` starts: the call, nil for an id not under way.
    mutating func iterationStarted(id: UInt64) -> Int32? {
        guard let a = byId[id] else { return nil }
        let i = Int(a)
        running[i] += 1
        applies[i].maxWidth = Swift.max(applies[i].maxWidth, Int(running[i]))
        return a
    }

    mutating func iterationEnded(_ call: Int32, thread t: Int32, took: UInt64) {
        let a = Int(call)
        running[a] -= 1
        applies[a].iterationsRun += 1
        applies[a].iterationTotalNs += took
        applies[a].iterationMinNs = Swift.min(applies[a].iterationMinNs, took)
        applies[a].iterationMaxNs = Swift.max(applies[a].iterationMaxNs, took)
        if let n = applies[a].threads.firstIndex(where: { $0.thread == Int(t) }) {
            applies[a].threads[n].iterations += 1
            applies[a].threads[n].busyNs += took
        } else {
            applies[a].threads.append(ApplyThreadShare(thread: Int(t), iterations: 1, busyNs: took))
        }
    }

    /// The apply calls for the model; the tracker is empty afterwards.
    mutating func takeApplies() -> [ApplyCall] {
        defer { self = ApplyTracker() }
        return applies
    }
}
