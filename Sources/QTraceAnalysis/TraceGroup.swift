// A dispatch group of the model (TraceModel.groups) and its rounds, in the memory a trace of
// 200k groups can afford.
import QTraceFormat

/// A round of a group, in 32 bytes instead of 64 (a 200k-group trace holds a round array for
/// each group): indices and counts as Int32, an open end as `noTime`; the public properties
/// read and write as before, and it is encoded as before.
public struct GroupRound: Sendable, Codable, Equatable {
    /// First enter of the round (count 0 → 1).
    public var start: UInt64
    /// Last leave (count back to 0); nil when never left.
    @AbsentTime public var end: UInt64?
    @Int32Clamped public var members: Int
    /// The item whose end (group_async) or whose leave emptied the group.
    @OptionalIndex32 public var lastMember: Int?
    @OptionalIndex32 public var lastLeaveThread: Int?

    public init(start: UInt64, end: UInt64?, members: Int, lastMember: Int? = nil, lastLeaveThread: Int? = nil) {
        self.start = start
        self.end = end
        self.members = members
        self.lastMember = lastMember
        self.lastLeaveThread = lastLeaveThread
    }

    // Encoded as the fields were.
    private enum CodingKeys: String, CodingKey { case start, end, members, lastMember, lastLeaveThread }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(start: try c.decode(UInt64.self, forKey: .start), end: try c.decodeIfPresent(UInt64.self, forKey: .end),
                  members: try c.decode(Int.self, forKey: .members),
                  lastMember: try c.decodeIfPresent(Int.self, forKey: .lastMember),
                  lastLeaveThread: try c.decodeIfPresent(Int.self, forKey: .lastLeaveThread))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(start, forKey: .start)
        try c.encodeIfPresent(end, forKey: .end)
        try c.encode(members, forKey: .members)
        try c.encodeIfPresent(lastMember, forKey: .lastMember)
        try c.encodeIfPresent(lastLeaveThread, forKey: .lastLeaveThread)
    }
}

/// A group of the model, in 72 bytes instead of 112 (a trace can have 200k): counts as Int32,
/// absent times as `noTime`; the public properties read and write as before.
public struct TraceGroup: Sendable {
    public var address: UInt64
    @AbsentTime public var createdAt: UInt64? = nil
    @AbsentTime public var firstUnbalancedLeave: UInt64? = nil
    public var rounds: [GroupRound] = []
    public var notifies: [GroupNotify] = []
    @Int32Clamped public var generation: Int
    @Int32Clamped public var enters = 0
    @Int32Clamped public var leaves = 0
    /// Members still inside at the end.
    @Int32Clamped public var outstanding = 0
    @Int32Clamped public var leavesWithoutEnter = 0
    @Int32Clamped public var waits = 0
    @Int32Clamped public var timedOutWaits = 0

    public init(address: UInt64, generation: Int) {
        self.address = address
        self.generation = generation
    }
}
