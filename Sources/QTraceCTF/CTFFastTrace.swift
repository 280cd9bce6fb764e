// One CTF trace directory prepared for the purpose-built decoder: its metadata parsed and
// every scope compiled into decoding plans, and for each `qtrace:*` event class the ops of
// the members the collector reads.
import Foundation

/// How to decode one event class, and which qtrace event it is (nil: skipped).
final class CTFEventPlan {
    let context: Int32
    let payload: Int32
    /// The stream's event context, this class's context and its payload as one plan.
    let body: Int32
    let kind: QTraceEventKind?
    /// The members `kind` reads, in `EventClassDecoder.neededMembers` order.
    let needed: UnsafeMutableBufferPointer<CTFOp>
    /// record_string: the element op of `words`.
    let wordOp: CTFOp?
    /// qtrace:process: its optional strings.
    let executable: CTFOp?
    let commandLine: CTFOp?

    init(context: Int32, payload: Int32, body: Int32, kind: QTraceEventKind?, needed: [CTFOp], wordOp: CTFOp?,
         executable: CTFOp?, commandLine: CTFOp?) {
        self.context = context
        self.payload = payload
        self.body = body
        self.kind = kind
        self.needed = .allocate(capacity: max(needed.count, 1))
        _ = self.needed.initialize(from: needed)
        self.wordOp = wordOp
        self.executable = executable
        self.commandLine = commandLine
    }

    deinit { needed.deallocate() }
}

/// The plans of one stream class.
struct CTFStreamPlans {
    var packetContext: Int32 = -1
    var eventHeader: Int32 = -1
    var eventContext: Int32 = -1
    var hasVtid = false
    var hasVpid = false
    /// Whether events carry a clock value (else their time is 0, as with babeltrace2).
    var hasClock = false
    /// By event class id (LTTng numbers them densely from 0).
    var events: [CTFEventPlan?] = []
}

final class CTFFastTrace: @unchecked Sendable {
    static let packetMagic: UInt64 = 0xC1FC_1FC1
    /// Event class ids beyond this are not expected from LTTng (fall back to libbabeltrace2).
    static let maxEventID: UInt64 = 1 << 20

    let directory: String
    let program: CTFProgram
    let packetHeader: Int32
    let streams: [UInt64: CTFStreamPlans]
    let uuid: [UInt8]
    /// Per-process buffers name the process in the trace environment.
    let environmentPid: Int32?
    let clock: CTFClock
    let originNs: Int64
    /// Whether any event class is a qtrace event this reader knows.
    let hasQTraceEvents: Bool

    init(directory: String) throws {
        self.directory = directory
        let metadata: CTFMetadata
        do {
            metadata = try TSDLParser.parse(try CTFMetadataFile.text(ofDirectory: directory))
        } catch let error as CTFReadError {
            // Text this parser rejects may still be CTF that libbabeltrace2 reads (or rejects
            // with its own message): not this decoder's call.
            throw CTFUnsupported("\(directory)/metadata: \(error)")
        }
        let program = CTFProgram(byteOrder: metadata.byteOrder)
        self.program = program
        uuid = metadata.uuid ?? []
        environmentPid = metadata.integerEnvironment["vpid"].map { Int32(truncatingIfNeeded: $0) }
        let headerRoles: [String: CTFRole] = ["magic": .magic, "stream_id": .streamClassID,
                                              "stream_instance_id": .streamInstanceID]
        packetHeader = try metadata.packetHeader.map { try program.compile($0, roles: headerRoles).plan } ?? -1
        var streams: [UInt64: CTFStreamPlans] = [:]
        var anyQTrace = false
        for (id, stream) in metadata.streams.sorted(by: { $0.key < $1.key }) {
            var plans = try Self.compileStreamScopes(stream, program: program)
            let classes = metadata.events.filter { $0.streamID == id }
            let maxID = classes.map(\.id).max() ?? 0
            guard maxID < Self.maxEventID else { throw CTFUnsupported("metadata: event class id \(maxID)") }
            plans.events = Array(repeating: nil, count: classes.isEmpty ? 0 : Int(maxID) + 1)
            for eventClass in classes {
                let plan = try Self.compileEvent(eventClass, program: program, streamContext: plans.eventContext)
                anyQTrace = anyQTrace || plan.kind != nil
                plans.events[Int(eventClass.id)] = plan
            }
            streams[id] = plans
        }
        self.streams = streams
        hasQTraceEvents = anyQTrace
        // The default clock: the one timestamps map to (LTTng: "monotonic").
        if let name = program.mappedClocks.first {
            guard let clock = metadata.clocks[name] else { throw CTFReadError.corrupt("metadata: no clock '\(name)'") }
            self.clock = clock
        } else {
            clock = CTFClock(name: "")
        }
        originNs = Self.origin(of: clock)
        program.seal()
    }

    private static func compileStreamScopes(_ stream: CTFStreamClass, program: CTFProgram) throws -> CTFStreamPlans {
        var plans = CTFStreamPlans()
        if let context = stream.packetContext {
            let roles: [String: CTFRole] = ["content_size": .contentSize, "packet_size": .packetSize,
                                            "events_discarded": .discarded, "timestamp_end": .timestampEnd]
            plans.packetContext = try program.compile(context, roles: roles).plan
        }
        if let header = stream.eventHeader {
            plans.eventHeader = try program.compile(header, roles: ["id": .eventID]).plan
        }
        plans.hasClock = !program.mappedClocks.isEmpty
        if let context = stream.eventContext {
            let compiled = try program.compile(context, roles: ["vtid": .vtid, "vpid": .vpid])
            plans.eventContext = compiled.plan
            plans.hasVtid = compiled.members["vtid"]?.code == .integer
            plans.hasVpid = compiled.members["vpid"]?.code == .integer
        }
        return plans
    }

    private static func compileEvent(_ eventClass: CTFEventClass, program: CTFProgram, streamContext: Int32) throws -> CTFEventPlan {
        let context = try eventClass.context.map { try program.compile($0).plan } ?? -1
        let payload = try eventClass.payload.map { try program.compile($0) }
        let body = program.concatenate([streamContext, context, payload?.plan ?? -1])
        var kind: QTraceEventKind?
        if eventClass.name.hasPrefix("qtrace:") { kind = EventClassDecoder.kind(of: eventClass.name.dropFirst(7)) }
        guard let known = kind, let payload else {
            return CTFEventPlan(context: context, payload: payload?.plan ?? -1, body: body, kind: nil, needed: [], wordOp: nil,
                                executable: nil, commandLine: nil)
        }
        let names = EventClassDecoder.neededMembers(known)
        let needed = names.compactMap { payload.members[$0] }
        // A foreign provider also called qtrace (members missing): not ours, as libbabeltrace2's path decides.
        guard needed.count == names.count else {
            return CTFEventPlan(context: context, payload: payload.plan, body: body, kind: nil, needed: [], wordOp: nil,
                                executable: nil, commandLine: nil)
        }
        var wordOp: CTFOp?
        for (name, op) in zip(names, needed) {
            switch (name, op.code) {
            case ("words", .array), ("words", .sequence):
                wordOp = program.elementIntegerOp(of: op)
                guard wordOp != nil else { throw CTFUnsupported("qtrace:record_string words are not integers") }
            case ("text", .string), ("text", .text), ("name", .string), ("name", .text): break
            case (_, .integer) where name != "text" && name != "name" && name != "words": break
            default: throw CTFUnsupported("\(eventClass.name): member \(name) has an unexpected type")
            }
        }
        func optionalString(_ name: String) throws -> CTFOp? {
            guard let op = payload.members[name] else { return nil }
            guard op.code == .string || op.code == .text else { throw CTFUnsupported("\(eventClass.name): \(name) is not a string") }
            return op
        }
        let isProcess = if case .process = known { true } else { false }
        return CTFEventPlan(context: context, payload: payload.plan, body: body, kind: known, needed: needed, wordOp: wordOp,
                            executable: isProcess ? try optionalString("executable") : nil,
                            commandLine: isProcess ? try optionalString("command_line") : nil)
    }

    /// Nanoseconds from the clock's origin for a clock value, as babeltrace2 computes them.
    @inline(__always)
    func nanosecondsFromOrigin(_ cycles: UInt64) -> Int64 {
        originNs &+ Int64(truncatingIfNeeded: toNanoseconds(cycles))
    }

    /// The clock's offset in ns (offset_s and offset cycles, normalized as babeltrace2 does).
    private static func origin(of clock: CTFClock) -> Int64 {
        var seconds = clock.offsetSeconds, offsetCycles = clock.offsetCycles
        if offsetCycles >= clock.frequency {
            seconds &+= Int64(truncatingIfNeeded: offsetCycles / clock.frequency)
            offsetCycles %= clock.frequency
        }
        return seconds &* 1_000_000_000 &+ Int64(truncatingIfNeeded: toNanoseconds(offsetCycles, clock.frequency))
    }

    @inline(__always)
    private func toNanoseconds(_ cycles: UInt64) -> UInt64 { Self.toNanoseconds(cycles, clock.frequency) }

    private static func toNanoseconds(_ cycles: UInt64, _ frequency: UInt64) -> UInt64 {
        if frequency == 1_000_000_000 { return cycles }
        let ns = Double(cycles) * 1e9 / Double(frequency)
        return ns < 1.8e19 ? UInt64(ns) : UInt64.max
    }
}
