// The dispatch groups while the model is built: each group's rounds (from the enter that
// finds it empty to the leave that empties it), its waits and notify blocks, and when it last
// emptied (a notify block is ready from then). The blocked waits themselves are the
// ThreadTable's; ModelBuilder+Objects.swift wires the two.

struct GroupTable {
    /// The model's groups (moved into it by `takeGroups`).
    private(set) var groups: [TraceGroup] = []
    /// When each group last emptied (0 until it does), index-aligned with `groups`.
    private var lastEmptiedAt: [UInt64] = []

    mutating func add(address: UInt64, generation: Int, createdAt: UInt64?) -> Int32 {
        let g = Int32(groups.count)
        var group = TraceGroup(address: address, generation: generation)
        group.createdAt = createdAt
        groups.append(group)
        lastEmptiedAt.append(0)
        return g
    }

    /// When group `g` last emptied: a notify block of it was ready from then.
    @inline(__always)
    func lastEmptied(_ g: Int32) -> UInt64 { lastEmptiedAt[Int(g)] }

    mutating func entered(_ g: Int32, at now: UInt64) {
        let i = Int(g)
        groups[i].enters += 1
        groups[i].outstanding += 1
        if groups[i].outstanding == 1 {
            groups[i].rounds.append(GroupRound(start: now, end: nil, members: 1))
        } else if let last = groups[i].rounds.indices.last {
            groups[i].rounds[last].members += 1
        }
    }

    /// A leave by `item` (-1: none) on thread `t`; one without its enter is counted, not applied.
    mutating func left(_ g: Int32, thread t: Int32, item: Int32, at now: UInt64) {
        let i = Int(g)
        groups[i].leaves += 1
        guard groups[i].outstanding > 0 else {
            groups[i].leavesWithoutEnter += 1
            if groups[i].firstUnbalancedLeave == nil { groups[i].firstUnbalancedLeave = now }
            return
        }
        groups[i].outstanding -= 1
        if groups[i].outstanding == 0, let last = groups[i].rounds.indices.last {
            groups[i].rounds[last].end = now
            groups[i].rounds[last].lastMember = opt(item)
            groups[i].rounds[last].lastLeaveThread = Int(t)
            lastEmptiedAt[i] = now
        }
    }

    mutating func countWait(_ g: Int32) { groups[Int(g)].waits += 1 }

    mutating func countTimedOutWait(_ g: Int32) { groups[Int(g)].timedOutWaits += 1 }

    mutating func notifyRegistered(_ g: Int32, item: Int32, at now: UInt64) {
        groups[Int(g)].notifies.append(GroupNotify(item: Int(item), registered: now, fired: nil))
    }

    mutating func notifyFired(_ g: Int32, item: Int32, at now: UInt64) {
        let i = Int(g)
        if let n = groups[i].notifies.lastIndex(where: { $0.item == Int(item) }) { groups[i].notifies[n].fired = now }
    }

    /// The groups for the model; the table is empty afterwards.
    mutating func takeGroups() -> [TraceGroup] {
        defer { groups = []; lastEmptiedAt = [] }
        return groups
    }
}
