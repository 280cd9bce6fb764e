// A dispatch group of the model (TraceModel.groups) and its rounds, in the memory a trace of
// 200k groups can afford.
import QTraceFormat

/// A round of a group, in 32 bytes instead of 64 (a 200k-group trace holds a round array for
/// each group): indices and counts as Int32, an open end as `noTime`; the public properties
/// read and write as before, and it is encoded as before.
public struct GroupRound: Sendable, Codable, Equatable {
    /// First enter of the round (count 0 → 1).
    public var start: UInt64
    private var endRaw: UInt64
    private var membersRaw: Int32
    private var lastMemberRaw: Int32
    private var lastLeaveThreadRaw: Int32

    public init(start: UInt64, end: UInt64?, members: Int, lastMember: Int? = nil, lastLeaveThread: Int? = nil) {
        self.start = start
        endRaw = end ?? noTime
        membersRaw = Int32(clamping: members)
        lastMemberRaw = lastMember.map { Int32(clamping: $0) } ?? -1
        lastLeaveThreadRaw = lastLeaveThread.map { Int32(clamping: $0) } ?? -1
    }

    /// Last leave (count back to 0); nil when never left.
    public var end: UInt64? {
        get { endRaw == noTime ? nil : endRaw }
        set { endRaw = newValue ?? noTime }
    }
    public var members: Int {
        get { Int(membersRaw) }
        set { membersRaw = Int32(clamping: newValue) }
    }
    /// The item whose end (group_async) or whose leave emptied the group.
    public var lastMember: Int? {
        get { lastMemberRaw < 0 ? nil : Int(lastMemberRaw) }
        set { lastMemberRaw = newValue.map { Int32(clamping: $0) } ?? -1 }
    }
    public var lastLeaveThread: Int? {
        get { lastLeaveThreadRaw < 0 ? nil : Int(lastLeaveThreadRaw) }
        set { lastLeaveThreadRaw = newValue.map { Int32(clamping: $0) } ?? -1 }
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
    private var createdAtRaw = noTime
    private var firstUnbalancedLeaveRaw = noTime
    public var rounds: [GroupRound] = []
    public var notifies: [GroupNotify] = []
    private var generationRaw: Int32
    private var entersRaw: Int32 = 0
    private var leavesRaw: Int32 = 0
    private var outstandingRaw: Int32 = 0
    private var leavesWithoutEnterRaw: Int32 = 0
    private var waitsRaw: Int32 = 0
    private var timedOutWaitsRaw: Int32 = 0

    public init(address: UInt64, generation: Int) {
        self.address = address
        generationRaw = Int32(clamping: generation)
    }

    public var generation: Int {
        get { Int(generationRaw) }
        set { generationRaw = Int32(clamping: newValue) }
    }
    public var createdAt: UInt64? {
        get { createdAtRaw == noTime ? nil : createdAtRaw }
        set { createdAtRaw = newValue ?? noTime }
    }
    public var enters: Int {
        get { Int(entersRaw) }
        set { entersRaw = Int32(clamping: newValue) }
    }
    public var leaves: Int {
        get { Int(leavesRaw) }
        set { leavesRaw = Int32(clamping: newValue) }
    }
    /// Members still inside at the end.
    public var outstanding: Int {
        get { Int(outstandingRaw) }
        set { outstandingRaw = Int32(clamping: newValue) }
    }
    public var leavesWithoutEnter: Int {
        get { Int(leavesWithoutEnterRaw) }
        set { leavesWithoutEnterRaw = Int32(clamping: newValue) }
    }
    public var firstUnbalancedLeave: UInt64? {
        get { firstUnbalancedLeaveRaw == noTime ? nil : firstUnbalancedLeaveRaw }
        set { firstUnbalancedLeaveRaw = newValue ?? noTime }
    }
    public var waits: Int {
        get { Int(waitsRaw) }
        set { waitsRaw = Int32(clamping: newValue) }
    }
    public var timedOutWaits: Int {
        get { Int(timedOutWaitsRaw) }
        set { timedOutWaitsRaw = Int32(clamping: newValue) }
    }
}
