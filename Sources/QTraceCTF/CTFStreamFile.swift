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
    private let plans: CTFPlanTable
    /// The mutable state, behind a pointer: class `var`s pay a run-time exclusivity check on
    /// every access, which dominated the per-event cost.
    private let cursor: UnsafeMutablePointer<Cursor>

    private struct Cursor {
        var state: CTFCursorState
        var stream = CTFStreamPlans()
        var nextPacket = 0
        var streamClassID: UInt64 = 0
        var streamInstanceID: UInt64 = 0
        /// events_discarded of the previous packet (a running count per stream).
        var discardedSnapshot: UInt64?
        var discardedEvents: UInt64 = 0
        var ns: Int64 = 0
        var event: CTFEventPlan?
    }

    /// Packet header facts (tie-breaks between streams, as babeltrace2's muxer does them).
    var streamClassID: UInt64 { cursor.pointee.streamClassID }
    var streamInstanceID: UInt64 { cursor.pointee.streamInstanceID }
    var discardedEvents: UInt64 { cursor.pointee.discardedEvents }
    /// The current event (after `advance()` returned true).
    var ns: Int64 { cursor.pointee.ns }
    var event: CTFEventPlan? { cursor.pointee.event }
    var vtid: Int32 {
        cursor.pointee.stream.hasVtid ? Int32(truncatingIfNeeded: cursor.pointee.state.registers[Int(CTFRole.vtid.rawValue)]) : 0
    }
    var vpid: Int32? {
        cursor.pointee.stream.hasVpid ? Int32(truncatingIfNeeded: cursor.pointee.state.registers[Int(CTFRole.vpid.rawValue)]) : nil
    }

    init(trace: CTFFastTrace, path: String) throws {
        self.trace = trace
        self.path = path
        plans = trace.program.table
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
        let slots = max(trace.program.slotCount, 1)
        let values = UnsafeMutablePointer<UInt64>.allocate(capacity: slots)
        values.initialize(repeating: 0, count: slots)
        let registers = UnsafeMutablePointer<UInt64>.allocate(capacity: CTFRole.count)
        registers.initialize(repeating: 0, count: CTFRole.count)
        let state = CTFCursorState(base: UnsafeRawPointer(mapping ?? UnsafeMutableRawPointer(registers)), values: values,
                                   registers: registers)
        cursor = .allocate(capacity: 1)
        cursor.initialize(to: Cursor(state: state))
    }

    deinit {
        if let mapping { munmap(mapping, size) }
        cursor.pointee.state.values.deallocate()
        cursor.pointee.state.registers.deallocate()
        cursor.deinitialize(count: 1)
        cursor.deallocate()
    }

    /// The value of an integer member of the current event.
    @inline(__always)
    func value(_ op: CTFOp) -> UInt64 { cursor.pointee.state.values[Int(op.slot)] }

    /// The bytes of a string member of the current event (nil: no such member).
    func bytes(_ op: CTFOp?) -> UnsafeRawBufferPointer? {
        guard let op, op.code == .string || op.code == .text else { return nil }
        let values = cursor.pointee.state.values
        let start = Int(values[Int(op.slot)]), length = Int(values[Int(op.slot) + 1])
        return UnsafeRawBufferPointer(start: cursor.pointee.state.base + start, count: length)
    }

    /// Element `index` of an array member whose elements are `element` integers.
    func element(_ array: CTFOp, _ element: CTFOp, _ index: Int) -> (count: Int, value: UInt64) {
        let values = cursor.pointee.state.values
        let start = Int(values[Int(array.slot)]), count = Int(values[Int(array.slot) + 1])
        guard index < count else { return (count, 0) }
        // Elements are fixed-size and unpadded when the plan skipped them (op.size >= 0).
        let position = start + index * Int(element.size)
        let base = cursor.pointee.state.base
        let raw = element.bigEndian ? CTFInterpreter.readBigEndian(base, position, Int(element.size))
                                    : CTFInterpreter.readLittleEndian(base, position, Int(element.size))
        return (count, raw)
    }

    /// Moves to the next `qtrace:*` event; false at the end of the file.
    func advance() throws -> Bool {
        do {
            while true {
                if cursor.pointee.state.position >= cursor.pointee.state.limit {
                    guard try openNextPacket() else { return false }
                    continue
                }
                try decodeEvent()
                if cursor.pointee.event?.kind != nil { return true }
            }
        } catch let error as CTFDecodeError {
            throw CTFReadError.corrupt("\(path): cannot decode \(error.what) at byte \(error.bitPosition / 8)"
                                       + " (truncated or corrupt stream file)")
        }
    }

    @inline(__always)
    private func decodeEvent() throws {
        let registers = cursor.pointee.state.registers
        let header = cursor.pointee.stream.eventHeader
        registers[Int(CTFRole.eventID.rawValue)] = 0
        if header >= 0 { try CTFInterpreter.run(header, &cursor.pointee.state, plans) }
        let id = registers[Int(CTFRole.eventID.rawValue)]
        guard id < UInt64(cursor.pointee.stream.events.count), let plan = cursor.pointee.stream.events[Int(id)] else {
            throw CTFReadError.corrupt("\(path): unknown event id \(id) at byte \(cursor.pointee.state.position / 8)")
        }
        try CTFInterpreter.run(plan.body, &cursor.pointee.state, plans)
        cursor.pointee.event = plan
        cursor.pointee.ns = cursor.pointee.stream.hasClock ? trace.nanosecondsFromOrigin(cursor.pointee.state.clock) : 0
    }

    /// Reads the next packet's header and context; false when there is none.
    private func openNextPacket() throws -> Bool {
        guard cursor.pointee.nextPacket < size else { return false }
        let start = cursor.pointee.nextPacket
        let registers = cursor.pointee.state.registers
        registers[Int(CTFRole.magic.rawValue)] = CTFFastTrace.packetMagic
        registers[Int(CTFRole.streamClassID.rawValue)] = 0
        registers[Int(CTFRole.contentSize.rawValue)] = .max
        registers[Int(CTFRole.packetSize.rawValue)] = .max
        registers[Int(CTFRole.discarded.rawValue)] = .max
        cursor.pointee.state.position = start * 8
        cursor.pointee.state.limit = size * 8
        if trace.packetHeader >= 0 { try CTFInterpreter.run(trace.packetHeader, &cursor.pointee.state, plans) }
        guard registers[Int(CTFRole.magic.rawValue)] == CTFFastTrace.packetMagic else {
            throw CTFReadError.corrupt("\(path): bad packet magic at byte \(start)")
        }
        let classID = registers[Int(CTFRole.streamClassID.rawValue)]
        guard let stream = trace.streams[classID] else {
            throw CTFReadError.corrupt("\(path): packet at byte \(start) names unknown stream class \(classID)")
        }
        cursor.pointee.stream = stream
        cursor.pointee.streamClassID = classID
        cursor.pointee.streamInstanceID = registers[Int(CTFRole.streamInstanceID.rawValue)]
        if stream.packetContext >= 0 { try CTFInterpreter.run(stream.packetContext, &cursor.pointee.state, plans) }
        let remaining = UInt64(size - start) * 8
        let packetBits = registers[Int(CTFRole.packetSize.rawValue)] == .max ? remaining : registers[Int(CTFRole.packetSize.rawValue)]
        let contentBits = registers[Int(CTFRole.contentSize.rawValue)] == .max ? packetBits : registers[Int(CTFRole.contentSize.rawValue)]
        guard packetBits % 8 == 0, packetBits > 0, contentBits <= packetBits,
              contentBits >= UInt64(cursor.pointee.state.position - start * 8) else {
            throw CTFReadError.corrupt("\(path): packet at byte \(start) has bad sizes (content \(contentBits) bits, packet \(packetBits) bits)")
        }
        guard packetBits <= remaining else {
            throw CTFReadError.corrupt("\(path): packet at byte \(start) is truncated (\(packetBits / 8) bytes declared, \(remaining / 8) in the file)")
        }
        cursor.pointee.state.limit = start * 8 + Int(contentBits)
        cursor.pointee.nextPacket = start + Int(packetBits / 8)
        noteDiscarded(registers[Int(CTFRole.discarded.rawValue)])
        return true
    }

    /// babeltrace2's rule: the count is a running total per stream; a packet whose total
    /// differs from the previous packet's reports the difference (the first packet: its total).
    private func noteDiscarded(_ total: UInt64) {
        guard total != .max else { return }
        cursor.pointee.discardedEvents &+= total &- (cursor.pointee.discardedSnapshot ?? 0)
        cursor.pointee.discardedSnapshot = total
    }
}
