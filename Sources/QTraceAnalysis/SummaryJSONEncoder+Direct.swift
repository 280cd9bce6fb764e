// The summary's most numerous objects, written member by member instead of through the Encoder
// protocol: there an object costs a container box, a boxed copy of each member and a sort
// (~700 ns), and a fan-out trace has 100k thread/queue shares (in 256 threads' rows), the 900k-queue trace 900k
// queues and tree nodes. Each type writes its members in the sorted order of their keys, as
// its synthesized `encode(to:)` and `.sortedKeys` give them. Debug builds check that order;
// SummaryJSONEncoderTests compare whole summaries with JSONEncoder's, so a member added to one
// of these types and not here fails them.

extension JSONOutput {
    /// `value` written directly if it is one of these types.
    @inline(__always)
    func writeDirect<T: Encodable>(_ value: T, level: Int) throws -> Bool {
        if T.self == ThreadQueueShare.self { (value as! ThreadQueueShare).writeJSON(JSONMembers(self, level: level)); return true }
        if T.self == ThreadStats.self { try (value as! ThreadStats).writeJSON(JSONMembers(self, level: level)); return true }
        if T.self == DurationStats.self { (value as! DurationStats).writeJSON(JSONMembers(self, level: level)); return true }
        if T.self == QueueTreeNode.self { try (value as! QueueTreeNode).writeJSON(JSONMembers(self, level: level)); return true }
        if T.self == QueueStats.self { try (value as! QueueStats).writeJSON(JSONMembers(self, level: level)); return true }
        if T.self == GroupStats.self { (value as! GroupStats).writeJSON(JSONMembers(self, level: level)); return true }
        return false
    }
}

/// An object being written: `"key" : value` lines at `level + 1`, in the order given.
struct JSONMembers {
    private let output: JSONOutput
    private let level: Int
    private var count = 0
    #if DEBUG
    private var lastKey = ""
    #endif

    init(_ output: JSONOutput, level: Int) {
        self.output = output
        self.level = level
        output.literal("{\n")
    }

    private mutating func key(_ key: StaticString) {
        #if DEBUG
        let text = key.description
        precondition(count == 0 || JSONOutput.precedes(lastKey, text), "JSON members out of order: \(lastKey), \(text)")
        lastKey = text
        #endif
        if count > 0 { output.literal(",\n") }
        count += 1
        output.indent(level + 1)
        output.literal("\"")
        output.literal(key)
        output.literal("\" : ")
    }

    mutating func int(_ key: StaticString, _ value: Int) { self.key(key); output.signed(Int64(value)) }
    mutating func int(_ key: StaticString, _ value: Int?) { if let value { int(key, value) } }
    mutating func uint(_ key: StaticString, _ value: UInt64) { self.key(key); output.unsigned(value) }
    mutating func uint(_ key: StaticString, _ value: UInt64?) { if let value { uint(key, value) } }
    mutating func string(_ key: StaticString, _ value: String) { self.key(key); output.string(value) }
    mutating func string(_ key: StaticString, _ value: String?) { if let value { string(key, value) } }
    mutating func double(_ key: StaticString, _ value: Double) throws { self.key(key); try output.pending(.double(value), level: level + 1) }
    mutating func value<T: Encodable>(_ key: StaticString, _ value: T) throws { self.key(key); try output.value(value, level: level + 1) }
    mutating func value<T: Encodable>(_ key: StaticString, _ value: T?) throws { if let value { try self.value(key, value) } }
    /// An array whose elements are written directly (`write` gets each element's members),
    /// not each through `value` and its type checks.
    mutating func array<Element>(_ key: StaticString, _ elements: [Element], _ write: (Element, JSONMembers) -> Void) {
        self.key(key)
        output.openArray()
        for k in elements.indices {
            output.arraySeparator(first: k == 0, level: level + 2)
            write(elements[k], JSONMembers(output, level: level + 2))
        }
        output.closeArray(level: level + 1)
    }

    func end() {
        output.literal("\n")
        output.indent(level)
        output.literal("}")
    }
}

extension ThreadQueueShare {
    func writeJSON(_ members: JSONMembers) {
        var m = members
        m.int("items", items)
        m.int("queue", queue)
        m.uint("runNs", runNs)
        m.end()
    }
}

extension ThreadStats {
    /// A fan-out's 256 threads hold 100k thread/queue shares: written here, not each through
    /// the array's `encode(to:)` and `value`'s type checks.
    func writeJSON(_ members: JSONMembers) throws {
        var m = members
        m.int("blockedIntervals", blockedIntervals)
        m.uint("blockedNs", blockedNs)
        m.uint("busyNs", busyNs)
        try m.double("busyShare", busyShare)
        m.uint("createdAt", createdAt)
        m.uint("exitedAt", exitedAt)
        m.int("items", items)
        m.string("kind", kind.rawValue)
        m.string("name", name)
        m.array("queues", queues) { share, members in share.writeJSON(members) }
        m.int("thread", thread)
        m.int("tid", Int(tid))
        m.end()
    }
}

extension DurationStats {
    func writeJSON(_ members: JSONMembers) {
        var m = members
        m.int("count", count)
        m.uint("maxNs", maxNs)
        m.uint("meanNs", meanNs)
        m.uint("minNs", minNs)
        m.uint("p50Ns", p50Ns)
        m.uint("p90Ns", p90Ns)
        m.uint("p95Ns", p95Ns)
        m.uint("p99Ns", p99Ns)
        m.uint("totalNs", totalNs)
        m.end()
    }
}

extension QueueTreeNode {
    func writeJSON(_ members: JSONMembers) throws {
        var m = members
        try m.value("children", children)
        m.int("depth", depth)
        m.int("parent", parent)
        m.int("queue", queue)
        m.uint("subtreeBusyNs", subtreeBusyNs)
        m.int("subtreeItems", subtreeItems)
        m.int("subtreeQueues", subtreeQueues)
        m.uint("subtreeRunNs", subtreeRunNs)
        m.uint("subtreeWaitNs", subtreeWaitNs)
        m.end()
    }
}

extension QueueStats {
    func writeJSON(_ members: JSONMembers) throws {
        var m = members
        m.string("address", address)
        m.int("backlogMax", backlogMax)
        m.int("barrierItems", barrierItems)
        m.uint("busyNs", busyNs)
        try m.double("busyShare", busyShare)
        m.int("completed", completed)
        m.int("items", items)
        m.string("kind", kind.rawValue)
        m.string("label", label)
        m.string("name", name)
        m.int("pendingAtEnd", pendingAtEnd)
        m.string("qos", qos)
        m.int("queue", queue)
        try m.value("run", run)
        m.int("runningAtEnd", runningAtEnd)
        m.uint("runningAtEndLongestNs", runningAtEndLongestNs)
        m.int("sourceHandlerRuns", sourceHandlerRuns)
        m.int("syncItems", syncItems)
        try m.value("syncWait", syncWait)
        m.int("target", target)
        m.int("threadsServed", threadsServed)
        try m.double("throughputPerSecond", throughputPerSecond)
        try m.value("wait", wait)
        try m.value("waitByCause", waitByCause)
        m.int("widthMax", widthMax)
        try m.double("widthMean", widthMean)
        try m.value("worstWaitBehind", worstWaitBehind)
        m.end()
    }
}

extension GroupStats {
    func writeJSON(_ members: JSONMembers) {
        var m = members
        m.string("address", address)
        m.uint("enterToLeaveNs", enterToLeaveNs)
        m.int("enters", enters)
        m.uint("firstEnterNs", firstEnterNs)
        m.int("group", group)
        m.uint("lastLeaveNs", lastLeaveNs)
        m.int("lastMember", lastMember)
        m.uint("leaveToNotifyNs", leaveToNotifyNs)
        m.int("leaves", leaves)
        m.int("leavesWithoutEnter", leavesWithoutEnter)
        m.int("notifies", notifies)
        m.int("notifiesFired", notifiesFired)
        m.int("outstanding", outstanding)
        m.int("rounds", rounds)
        m.int("timedOutWaits", timedOutWaits)
        m.int("waits", waits)
        m.end()
    }
}
