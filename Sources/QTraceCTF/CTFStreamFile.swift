// One CTF data stream file (LTTng: one per CPU and channel), mapped into memory and walked
// packet by packet, event by event. Foreign events are decoded only far enough to skip them.
#if canImport(Glibc)
import Glibc
#endif

final class CTFStreamFile {
    let trace: CTFFastTrace
    let path: String
    private let mapping: UnsafeMutableRawPointer?
    private let size: Int
    private var state: CTFCursorState
    private let program: CTFProgram
    private var stream = CTFStreamPlans()
    private var nextPacket = 0
    /// Packet header facts (tie-breaks between streams, as babeltrace2's muxer does them).
    private(set) var streamClassID: UInt64 = 0
    private(set) var streamInstanceID: UInt64 = 0
    /// events_discarded of the previous packet (a running count per stream).
    private var discardedSnapshot: UInt64?
    private(set) var discardedEvents: UInt64 = 0

    /// The current event (after `advance()` returned true).
    private(set) var ns: Int64 = 0
    private(set) var event: CTFEventPlan?
    var vtid: Int32 { stream.hasVtid ? Int32(truncatingIfNeeded: state.registers[Int(CTFRole.vtid.rawValue)]) : 0 }
    var vpid: Int32? { stream.hasVpid ? Int32(truncatingIfNeeded: state.registers[Int(CTFRole.vpid.rawValue)]) : nil }

    init(trace: CTFFastTrace, path: String) throws {
        self.trace = trace
        self.path = path
        program = trace.program
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CTFReadError.corrupt("\(path): cannot open (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CTFReadError.corrupt("\(path): cannot stat") }
        size = Int(info.st_size)
        if size > 0 {
            guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
                throw CTFReadError.corrupt("\(path): cannot map (\(String(cString: strerror(errno))))")
            }
            madvise(mapped, size, MADV_SEQUENTIAL)
            mapping = mapped
        } else {
            mapping = nil
        }
        let values = UnsafeMutablePointer<UInt64>.allocate(capacity: max(program.slotCount, 1))
        values.initialize(repeating: 0, count: max(program.slotCount, 1))
        let registers = UnsafeMutablePointer<UInt64>.allocate(capacity: CTFRole.count)
        registers.initialize(repeating: 0, count: CTFRole.count)
        state = CTFCursorState(base: UnsafeRawPointer(mapping ?? UnsafeMutableRawPointer(registers)), values: values,
                               registers: registers)
    }

    deinit {
        if let mapping { munmap(mapping, size) }
        state.values.deallocate()
        state.registers.deallocate()
    }

    /// The value of an integer member of the current event.
    @inline(__always)
    func value(_ op: CTFOp) -> UInt64 { state.values[Int(op.slot)] }

    /// The bytes of a string member of the current event (nil: no such member).
    func bytes(_ op: CTFOp?) -> UnsafeRawBufferPointer? {
        guard let op, op.code == .string || op.code == .text else { return nil }
        let start = Int(state.values[Int(op.slot)]), length = Int(state.values[Int(op.slot) + 1])
        return UnsafeRawBufferPointer(start: state.base + start, count: length)
    }

    /// Element `index` of an array member whose elements are `element` integers.
    func element(_ array: CTFOp, _ element: CTFOp, _ index: Int) -> (count: Int, value: UInt64) {
        let start = Int(state.values[Int(array.slot)]), count = Int(state.values[Int(array.slot) + 1])
        guard index < count else { return (count, 0) }
        // Elements are fixed-size and unpadded when the plan skipped them (op.size >= 0).
        let position = start + index * Int(element.size)
        let raw = element.bigEndian ? CTFInterpreter.readBigEndian(state.base, position, Int(element.size))
                                    : CTFInterpreter.readLittleEndian(state.base, position, Int(element.size))
        return (count, raw)
    }

    /// Moves to the next `qtrace:*` event; false at the end of the file.
    func advance() throws -> Bool {
        do {
            while true {
                if state.position >= state.limit {
                    guard try openNextPacket() else { return false }
                    continue
                }
                try decodeEvent()
                if event?.kind != nil { return true }
            }
        } catch let error as CTFDecodeError {
            throw CTFReadError.corrupt("\(path): cannot decode \(error.what) at byte \(error.bitPosition / 8)"
                                       + " (truncated or corrupt stream file)")
        }
    }

    private func decodeEvent() throws {
        let registers = state.registers
        registers[Int(CTFRole.eventID.rawValue)] = 0
        if stream.eventHeader >= 0 { try CTFInterpreter.run(stream.eventHeader, &state, program) }
        let id = registers[Int(CTFRole.eventID.rawValue)]
        guard id < UInt64(stream.events.count), let plan = stream.events[Int(id)] else {
            throw CTFReadError.corrupt("\(path): unknown event id \(id) at byte \(state.position / 8)")
        }
        if stream.eventContext >= 0 { try CTFInterpreter.run(stream.eventContext, &state, program) }
        if plan.context >= 0 { try CTFInterpreter.run(plan.context, &state, program) }
        if plan.payload >= 0 { try CTFInterpreter.run(plan.payload, &state, program) }
        event = plan
        ns = stream.hasClock ? trace.nanosecondsFromOrigin(state.clock) : 0
    }

    /// Reads the next packet's header and context; false when there is none.
    private func openNextPacket() throws -> Bool {
        guard nextPacket < size else { return false }
        let start = nextPacket
        let registers = state.registers
        registers[Int(CTFRole.magic.rawValue)] = CTFFastTrace.packetMagic
        registers[Int(CTFRole.streamClassID.rawValue)] = 0
        registers[Int(CTFRole.contentSize.rawValue)] = .max
        registers[Int(CTFRole.packetSize.rawValue)] = .max
        registers[Int(CTFRole.discarded.rawValue)] = .max
        state.position = start * 8
        state.limit = size * 8
        if trace.packetHeader >= 0 { try CTFInterpreter.run(trace.packetHeader, &state, program) }
        guard registers[Int(CTFRole.magic.rawValue)] == CTFFastTrace.packetMagic else {
            throw CTFReadError.corrupt("\(path): bad packet magic at byte \(start)")
        }
        let classID = registers[Int(CTFRole.streamClassID.rawValue)]
        guard let plans = trace.streams[classID] else {
            throw CTFReadError.corrupt("\(path): packet at byte \(start) names unknown stream class \(classID)")
        }
        stream = plans
        streamClassID = classID
        streamInstanceID = registers[Int(CTFRole.streamInstanceID.rawValue)]
        if plans.packetContext >= 0 { try CTFInterpreter.run(plans.packetContext, &state, program) }
        let remaining = UInt64(size - start) * 8
        let packetBits = registers[Int(CTFRole.packetSize.rawValue)] == .max ? remaining : registers[Int(CTFRole.packetSize.rawValue)]
        let contentBits = registers[Int(CTFRole.contentSize.rawValue)] == .max ? packetBits : registers[Int(CTFRole.contentSize.rawValue)]
        guard packetBits % 8 == 0, packetBits > 0, contentBits <= packetBits,
              contentBits >= UInt64(state.position - start * 8) else {
            throw CTFReadError.corrupt("\(path): packet at byte \(start) has bad sizes (content \(contentBits) bits, packet \(packetBits) bits)")
        }
        guard packetBits <= remaining else {
            throw CTFReadError.corrupt("\(path): packet at byte \(start) is truncated (\(packetBits / 8) bytes declared, \(remaining / 8) in the file)")
        }
        state.limit = start * 8 + Int(contentBits)
        nextPacket = start + Int(packetBits / 8)
        noteDiscarded(registers[Int(CTFRole.discarded.rawValue)])
        return true
    }

    /// babeltrace2's rule: the count is a running total per stream; a packet whose total
    /// differs from the previous packet's reports the difference (the first packet: its total).
    private func noteDiscarded(_ total: UInt64) {
        guard total != .max else { return }
        discardedEvents &+= total &- (discardedSnapshot ?? 0)
        discardedSnapshot = total
    }
}
