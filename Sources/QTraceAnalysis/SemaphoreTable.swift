// The dispatch semaphores while the model is built: signals, waits and the time blocked in
// them. The blocked waits themselves are the ThreadTable's; ModelBuilder+Objects.swift wires
// the two.

struct SemaphoreTable {
    /// The model's semaphores (moved into it by `takeSemaphores`): they change several times
    /// per event, which an array would check for sharing at every write.
    private(set) var semaphores = UnsafeTable<TraceSemaphore>()

    mutating func add(address: UInt64, generation: Int, value: Int64, createdAt: UInt64?) -> Int32 {
        let s = Int32(semaphores.count)
        var sem = TraceSemaphore(address: address, generation: generation)
        sem.createdAt = createdAt
        sem.initialValue = value
        semaphores.append(sem)
        return s
    }

    mutating func countWait(_ s: Int32) { semaphores[Int(s)].waits += 1 }

    mutating func countTimedOutWait(_ s: Int32) { semaphores[Int(s)].timedOutWaits += 1 }

    /// A wait that blocked its thread for `waited` ns.
    mutating func blocked(_ s: Int32, for waited: UInt64) {
        let i = Int(s)
        semaphores[i].blockedWaits += 1
        semaphores[i].blockedNs += waited
        semaphores[i].maxBlockedNs = Swift.max(semaphores[i].maxBlockedNs, waited)
    }

    /// A signal; `wokeWaiter` when it woke a blocked thread.
    mutating func signalled(_ s: Int32, wokeWaiter: Bool) {
        semaphores[Int(s)].signals += 1
        if wokeWaiter { semaphores[Int(s)].wakeups += 1 }
    }

    /// The semaphores for the model; the table is empty afterwards.
    mutating func takeSemaphores() -> [TraceSemaphore] {
        defer { semaphores = UnsafeTable() }
        return Array(semaphores)
    }
}
