// Field types compiled into flat decoding plans, and the interpreter that runs them over a
// packet's bytes. A plan is built once per trace; running it per event allocates nothing:
// integers land in numbered value slots (sequence lengths, variant tags and the qtrace
// payload are read back from there), strings and arrays record where their bytes are.

/// Integers whose value the stream decoder needs, wherever they are in their scope.
enum CTFRole: Int8 {
    case none = -1
    case eventID, magic, streamClassID, streamInstanceID, contentSize, packetSize, discarded, vtid, vpid
    /// The packet context's end time: clock-mapped, but it must not move the clock (the
    /// events that follow are relative to timestamp_begin).
    case timestampEnd
    static let count = 10
}

struct CTFOp {
    enum Code: UInt8 { case integer, skipBits, string, text, array, sequence, variant, run }
    var code: Code
    /// Bits (integer, skipBits) or element bits (array/sequence/text).
    var size: Int32 = 0
    /// Alignment in bits (a power of two).
    var align: Int32 = 1
    var signed = false
    var bigEndian = false
    var clockMapped = false
    var role = CTFRole.none
    /// Integers: the value slot. Strings/text: slots `slot` (byte offset) and `slot + 1`
    /// (length). Arrays/sequences: `slot` (bit position of element 0) and `slot + 1` (count).
    var slot: Int32 = -1
    /// Array length, the slot holding a sequence's length / a variant's tag, or a run's
    /// number of fields.
    var count: Int32 = 0
    /// Element plan (array, sequence), the first entry of `variantTable` (variant) or of
    /// `runFields` (run).
    var subplan: Int32 = -1
    /// Variant: the number of `variantTable` entries.
    var options: Int32 = 0
}

/// One integer of a run: consecutive byte-aligned little-endian 8/16/32/64-bit integers
/// (most of an LTTng event) decoded with one bounds check.
struct CTFRunField {
    var byteOffset: Int32
    var bytes: UInt8
    var signed: Bool
    var role: CTFRole
    var slot: Int32
}

/// A variant option: tag values `low...high` select `plan`.
struct CTFVariantChoice {
    var low: Int64
    var high: Int64
    var plan: Int32
}

/// Every plan of one trace, and its value slots. Immutable once built; shared by the trace's
/// stream decoders (each has its own slot values).
final class CTFProgram: @unchecked Sendable {
    private(set) var ops: [CTFOp] = []
    /// Plan `i` is `ops[planRanges[i]]`.
    private(set) var planRanges: [Range<Int>] = []
    private(set) var variantTable: [CTFVariantChoice] = []
    private(set) var runFields: [CTFRunField] = []
    private(set) var slotCount = 0
    /// Per slot: the integer's enum mappings, for variants it selects.
    private var enumOfSlot: [Int: [CTFEnumMapping]] = [:]
    /// Fields visible to later sequence lengths and variant tags: (raw name, slot). Names of
    /// earlier scopes stay visible, as CTF's dynamic scope paths allow.
    private var visible: [(name: String, slot: Int)] = []
    private let traceByteOrder: CTFByteOrder
    /// Names of the clocks integers map to (the trace's default clock is the first).
    private(set) var mappedClocks: [String] = []

    // Raw buffers for the interpreter (no reference counting, no exclusivity checks per event).
    private(set) var opsBuffer = UnsafeMutableBufferPointer<CTFOp>(start: nil, count: 0)
    private(set) var rangeStarts = UnsafeMutableBufferPointer<Int32>(start: nil, count: 0)
    private(set) var variantBuffer = UnsafeMutableBufferPointer<CTFVariantChoice>(start: nil, count: 0)
    private(set) var runBuffer = UnsafeMutableBufferPointer<CTFRunField>(start: nil, count: 0)

    init(byteOrder: CTFByteOrder) { traceByteOrder = byteOrder }

    deinit {
        opsBuffer.deallocate()
        rangeStarts.deallocate()
        variantBuffer.deallocate()
        runBuffer.deallocate()
    }

    /// The raw buffers the interpreter reads (valid while the program lives).
    var table: CTFPlanTable {
        CTFPlanTable(ops: UnsafePointer(opsBuffer.baseAddress!), starts: UnsafePointer(rangeStarts.baseAddress!),
                     variants: UnsafePointer(variantBuffer.baseAddress!), runs: UnsafePointer(runBuffer.baseAddress!))
    }

    /// Copies the plans into raw buffers; call once every plan is compiled.
    func seal() {
        opsBuffer = .allocate(capacity: max(ops.count, 1))
        _ = opsBuffer.initialize(from: ops)
        rangeStarts = .allocate(capacity: planRanges.count + 1)
        for (i, range) in planRanges.enumerated() { rangeStarts[i] = Int32(range.lowerBound) }
        rangeStarts[planRanges.count] = Int32(ops.count)
        variantBuffer = .allocate(capacity: max(variantTable.count, 1))
        _ = variantBuffer.initialize(from: variantTable)
        runBuffer = .allocate(capacity: max(runFields.count, 1))
        _ = runBuffer.initialize(from: runFields)
    }

    /// The slot of the last visible integer called `name` (or a dotted path ending in it).
    func slot(named path: String) -> Int? {
        let name = path.split(separator: ".").last.map(String.init) ?? path
        return visible.last { $0.name == name }?.slot
    }

    /// Compiles `type` (a scope's root) into a plan; `roles` names the integers the stream
    /// decoder reads. Returns the plan index and, for a structure, the op of each member
    /// that is a single op (integers, strings, arrays), by its shown name.
    func compile(_ type: CTFType, roles: [String: CTFRole] = [:]) throws -> (plan: Int32, members: [String: CTFOp]) {
        var plan: [CTFOp] = []
        var members: [String: CTFOp] = [:]
        if case .structure(let fields, _) = type {
            plan.append(CTFOp(code: .skipBits, size: 0, align: Int32(type.alignment)))
            for field in fields {
                let before = plan.count
                try emit(field.type, name: field.rawName, into: &plan, roles: roles)
                if plan.count == before + 1 { members[field.name] = plan[before] }
            }
        } else {
            try emit(type, name: nil, into: &plan, roles: roles)
        }
        return (addPlan(plan), members)
    }

    /// One plan doing `plans` one after the other (skipping -1), with a run that ends one plan
    /// merged into a run that starts the next: an event's contexts and payload in one go.
    func concatenate(_ plans: [Int32]) -> Int32 {
        var combined: [CTFOp] = []
        for plan in plans where plan >= 0 {
            for op in ops[planRanges[Int(plan)]] {
                guard op.code == .run, let last = combined.last, last.code == .run else {
                    combined.append(op)
                    continue
                }
                // After a run the position is byte-aligned, so the next run's fields follow at
                // fixed offsets.
                var fields = Array(runFields[Int(last.subplan)..<Int(last.subplan + last.count)])
                for field in runFields[Int(op.subplan)..<Int(op.subplan + op.count)] {
                    var shifted = field
                    shifted.byteOffset += last.size / 8
                    fields.append(shifted)
                }
                combined[combined.count - 1] = CTFOp(code: .run, size: last.size + op.size, align: 8, count: Int32(fields.count),
                                                     subplan: Int32(runFields.count))
                runFields.append(contentsOf: fields)
            }
        }
        planRanges.append(ops.count..<(ops.count + combined.count))
        ops.append(contentsOf: combined)
        return Int32(planRanges.count - 1)
    }

    /// The element op of an array or sequence op whose elements are plain integers.
    func elementIntegerOp(of op: CTFOp) -> CTFOp? {
        guard op.code == .array || op.code == .sequence, op.subplan >= 0 else { return nil }
        let sub = ops[planRanges[Int(op.subplan)]]
        guard sub.count == 1, let element = sub.first, element.code == .integer else { return nil }
        return element
    }

    private func addPlan(_ unfused: [CTFOp]) -> Int32 {
        let plan = fuseRuns(unfused)
        planRanges.append(ops.count..<(ops.count + plan.count))
        ops.append(contentsOf: plan)
        return Int32(planRanges.count - 1)
    }

    /// Replaces each stretch of plain byte-aligned integers (and the byte-or-less alignment
    /// markers between them) by one `.run` op. Its alignment to a byte boundary is what the
    /// first integer would have done; after it every position is byte-aligned.
    private func fuseRuns(_ plan: [CTFOp]) -> [CTFOp] {
        func isPlain(_ op: CTFOp) -> Bool {
            op.code == .integer && !op.bigEndian && !op.clockMapped && op.align <= 8 && [8, 16, 32, 64].contains(op.size)
        }
        func isMarker(_ op: CTFOp) -> Bool { op.code == .skipBits && op.size == 0 && op.align <= 8 }
        var result: [CTFOp] = []
        var i = 0
        while i < plan.count {
            var j = i
            while j < plan.count && isMarker(plan[j]) { j += 1 }
            guard j < plan.count, isPlain(plan[j]) else {
                result.append(contentsOf: plan[i..<max(j, i + 1)])
                i = max(j, i + 1)
                continue
            }
            var fields: [CTFRunField] = []
            var bits: Int32 = 0
            while j < plan.count && (isPlain(plan[j]) || isMarker(plan[j])) {
                let op = plan[j]
                if op.code == .integer {
                    fields.append(CTFRunField(byteOffset: bits / 8, bytes: UInt8(op.size / 8), signed: op.signed, role: op.role,
                                              slot: op.slot))
                    bits += op.size
                }
                j += 1
            }
            if j - i == 1 {
                result.append(plan[i])      // a lone integer stays itself (array elements are read back by their op)
            } else {
                result.append(CTFOp(code: .run, size: bits, align: 8, count: Int32(fields.count), subplan: Int32(runFields.count)))
                runFields.append(contentsOf: fields)
            }
            i = j
        }
        return result
    }

    private func newSlots(_ n: Int) -> Int32 {
        slotCount += n
        return Int32(slotCount - n)
    }

    private func bigEndian(_ order: CTFByteOrder) -> Bool {
        (order == .native ? traceByteOrder : order) == .big
    }

    private func emit(_ type: CTFType, name: String?, into plan: inout [CTFOp], roles: [String: CTFRole]) throws {
        switch type {
        case .integer(let integer):
            plan.append(integerOp(integer, name: name, roles: roles))
        case .enumeration(let integer, let mappings):
            let op = integerOp(integer, name: name, roles: roles)
            enumOfSlot[Int(op.slot)] = mappings
            plan.append(op)
        case .floatingPoint(let size, let align, _):
            plan.append(CTFOp(code: .skipBits, size: Int32(size), align: Int32(align)))
        case .string:
            let slot = newSlots(2)
            plan.append(CTFOp(code: .string, align: 8, slot: slot))
        case .structure(let fields, _):
            plan.append(CTFOp(code: .skipBits, size: 0, align: Int32(type.alignment)))
            for field in fields { try emit(field.type, name: field.rawName, into: &plan, roles: roles) }
        case .array(let element, let length):
            plan.append(try arrayOp(element, code: .array, count: Int32(clamping: length), roles: roles))
        case .sequence(let element, let lengthPath):
            guard let lengthSlot = slot(named: lengthPath) else {
                throw CTFUnsupported("metadata: the length of a sequence, '\(lengthPath)', is not a field met before it")
            }
            plan.append(try arrayOp(element, code: .sequence, count: Int32(lengthSlot), roles: roles))
        case .variant(let tagPath, let options):
            guard let tagSlot = slot(named: tagPath), let mappings = enumOfSlot[tagSlot] else {
                throw CTFUnsupported("metadata: a variant tag, '\(tagPath)', is not an enum field met before it")
            }
            var choices: [CTFVariantChoice] = []
            for option in options {
                var sub: [CTFOp] = []
                try emit(option.type, name: option.rawName, into: &sub, roles: roles)
                let plan = addPlan(sub)
                for mapping in mappings where mapping.label == option.rawName || mapping.label == option.name
                        || "_" + mapping.label == option.rawName {
                    choices.append(CTFVariantChoice(low: mapping.low, high: mapping.high, plan: plan))
                }
            }
            let first = Int32(variantTable.count)
            variantTable.append(contentsOf: choices)
            plan.append(CTFOp(code: .variant, count: Int32(tagSlot), subplan: first, options: Int32(choices.count)))
        }
    }

    private func integerOp(_ integer: CTFIntegerType, name: String?, roles: [String: CTFRole]) -> CTFOp {
        let slot = newSlots(1)
        if let name { visible.append((name, Int(slot))) }
        if let clock = integer.clock, !mappedClocks.contains(clock) { mappedClocks.append(clock) }
        let shownName = name.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 }
        let role = shownName.flatMap { roles[$0] } ?? .none
        return CTFOp(code: .integer, size: Int32(integer.size), align: Int32(integer.align), signed: integer.signed,
                     bigEndian: bigEndian(integer.byteOrder), clockMapped: integer.clock != nil && role != .timestampEnd,
                     role: role, slot: slot)
    }

    /// An array or sequence; 8-bit text elements make a string (as babeltrace2 reads them:
    /// the value ends at the first NUL byte).
    private func arrayOp(_ element: CTFType, code: CTFOp.Code, count: Int32, roles: [String: CTFRole]) throws -> CTFOp {
        let slot = newSlots(2)
        if case .integer(let integer) = element, integer.isText, integer.align <= 8 {
            return CTFOp(code: .text, size: 8, align: 8, slot: slot, count: code == .array ? count : -1 - count)
        }
        var sub: [CTFOp] = []
        try emit(element, name: nil, into: &sub, roles: [:])
        let plan = addPlan(sub)
        return CTFOp(code: code, size: Int32(Self.fixedBits(element) ?? -1), align: Int32(element.alignment), slot: slot,
                     count: count, subplan: plan)
    }

    /// The size of a type whose instances all have the same size and need no padding between
    /// array elements (integers and floats whose size is a multiple of their alignment).
    static func fixedBits(_ type: CTFType) -> Int? {
        switch type {
        case .integer(let t), .enumeration(let t, _): t.size % t.align == 0 ? t.size : nil
        case .floatingPoint(let size, let align, _): size % align == 0 ? size : nil
        default: nil
        }
    }

}

// MARK: Running plans

/// A sealed program's plans as plain pointers: reading them per op costs no reference
/// counting and no exclusivity check.
struct CTFPlanTable {
    let ops: UnsafePointer<CTFOp>
    let starts: UnsafePointer<Int32>
    let variants: UnsafePointer<CTFVariantChoice>
    let runs: UnsafePointer<CTFRunField>
}

/// Where a stream decoder is: the mapped bytes, the bit position, the limit of the current
/// packet's content, the clock, and the slot values.
struct CTFCursorState {
    var base: UnsafeRawPointer
    var position = 0
    var limit = 0
    var clock: UInt64 = 0
    let values: UnsafeMutablePointer<UInt64>
    let registers: UnsafeMutablePointer<UInt64>
}

struct CTFDecodeError: Error {
    var bitPosition: Int
    var what: String
}

enum CTFInterpreter {
    /// Runs plan `plan` at `state.position`.
    static func run(_ plan: Int32, _ state: inout CTFCursorState, _ program: CTFPlanTable) throws {
        let ops = program.ops
        var index = Int(program.starts[Int(plan)])
        let end = Int(program.starts[Int(plan) + 1])
        while index < end {
            let op = ops[index]
            index += 1
            let align = Int(op.align)
            state.position = (state.position + align - 1) & ~(align - 1)
            switch op.code {
            case .run:
                guard state.position + Int(op.size) <= state.limit else { throw CTFDecodeError(bitPosition: state.position, what: "an event's fields") }
                let bytes = state.base + (state.position >> 3)
                let fields = program.runs + Int(op.subplan)
                for i in 0..<Int(op.count) {
                    let field = fields[i]
                    let at = Int(field.byteOffset)
                    var value: UInt64
                    switch field.bytes {
                    case 1: value = UInt64(bytes.load(fromByteOffset: at, as: UInt8.self))
                    case 2: value = UInt64(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
                    case 4: value = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                    default: value = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                    }
                    if field.signed && field.bytes < 8 {
                        let shift = UInt64(64 - 8 * Int(field.bytes))
                        value = UInt64(bitPattern: Int64(bitPattern: value << shift) >> shift)
                    }
                    state.values[Int(field.slot)] = value
                    if field.role != .none { state.registers[Int(field.role.rawValue)] = value }
                }
                state.position += Int(op.size)
            case .integer:
                let size = Int(op.size)
                guard state.position + size <= state.limit else { throw CTFDecodeError(bitPosition: state.position, what: "an integer") }
                var value = op.bigEndian ? readBigEndian(state.base, state.position, size)
                                         : readLittleEndian(state.base, state.position, size)
                state.position += size
                if op.clockMapped { updateClock(&state.clock, value, size) }
                if op.signed && size < 64 {
                    value = UInt64(bitPattern: Int64(bitPattern: value << (64 - size)) >> (64 - size))
                }
                state.values[Int(op.slot)] = value
                if op.role != .none { state.registers[Int(op.role.rawValue)] = value }
            case .skipBits:
                guard state.position + Int(op.size) <= state.limit else { throw CTFDecodeError(bitPosition: state.position, what: "a field") }
                state.position += Int(op.size)
            case .string:
                let start = state.position >> 3, limit = state.limit >> 3
                var byte = start
                while byte < limit && state.base.load(fromByteOffset: byte, as: UInt8.self) != 0 { byte += 1 }
                guard byte < limit else { throw CTFDecodeError(bitPosition: state.position, what: "an unterminated string") }
                state.values[Int(op.slot)] = UInt64(start)
                state.values[Int(op.slot) + 1] = UInt64(byte - start)
                state.position = (byte + 1) << 3
            case .text:
                let count = op.count >= 0 ? Int(op.count) : lengthValue(state.values[Int(-1 - op.count)])
                guard count <= (state.limit - state.position) >> 3 else {
                    throw CTFDecodeError(bitPosition: state.position, what: "a text array longer than its packet")
                }
                let start = state.position >> 3
                var length = 0
                while length < count && state.base.load(fromByteOffset: start + length, as: UInt8.self) != 0 { length += 1 }
                state.values[Int(op.slot)] = UInt64(start)
                state.values[Int(op.slot) + 1] = UInt64(length)
                state.position += count << 3
            case .array, .sequence:
                let count = op.code == .array ? Int(op.count) : lengthValue(state.values[Int(op.count)])
                state.values[Int(op.slot)] = UInt64(state.position)
                state.values[Int(op.slot) + 1] = UInt64(count)
                if op.size >= 0 {
                    // Fixed-size elements: no need to decode them one by one.
                    guard op.size == 0 || count <= (state.limit - state.position) / Int(op.size) else {
                        throw CTFDecodeError(bitPosition: state.position, what: "an array longer than its packet")
                    }
                    state.position += count * Int(op.size)
                } else {
                    for _ in 0..<count {
                        let before = state.position
                        try run(op.subplan, &state, program)
                        // An element of no bits repeated a huge number of times would hang.
                        if state.position == before && count > 1 << 20 {
                            throw CTFDecodeError(bitPosition: state.position, what: "an array of \(count) empty elements")
                        }
                    }
                }
            case .variant:
                let tag = Int64(bitPattern: state.values[Int(op.count)])
                let choices = program.variants + Int(op.subplan)
                var selected: Int32 = -1
                for i in 0..<Int(op.options) where choices[i].low <= tag && tag <= choices[i].high {
                    selected = choices[i].plan
                    break
                }
                guard selected >= 0 else { throw CTFDecodeError(bitPosition: state.position, what: "a variant tag \(tag) with no option") }
                try run(selected, &state, program)
            }
        }
    }

    @inline(__always)
    private static func lengthValue(_ value: UInt64) -> Int {
        value > UInt64(Int32.max) ? Int(Int32.max) : Int(value)
    }

    /// CTF's rule for a clock-mapped integer of `size` bits: it replaces the low bits of the
    /// clock, and a value below the previous low bits means they wrapped around.
    @inline(__always)
    static func updateClock(_ clock: inout UInt64, _ value: UInt64, _ size: Int) {
        if size >= 64 { clock = value; return }
        let mask: UInt64 = (1 << UInt64(size)) - 1
        let previous = clock & mask
        clock = (clock & ~mask) | value
        if value < previous { clock &+= 1 << UInt64(size) }
    }

    @inline(__always)
    static func readLittleEndian(_ base: UnsafeRawPointer, _ position: Int, _ size: Int) -> UInt64 {
        let byte = position >> 3, shift = position & 7
        if shift == 0 {
            switch size {
            case 8: return UInt64(base.load(fromByteOffset: byte, as: UInt8.self))
            case 16: return UInt64(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: byte, as: UInt16.self)))
            case 32: return UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: byte, as: UInt32.self)))
            case 64: return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: byte, as: UInt64.self))
            default: break
            }
        }
        let bytes = (shift + size + 7) >> 3
        var value: UInt128 = 0
        for i in 0..<bytes { value |= UInt128(base.load(fromByteOffset: byte + i, as: UInt8.self)) << UInt128(8 * i) }
        value >>= UInt128(shift)
        return UInt64(truncatingIfNeeded: value) & (size == 64 ? ~0 : (1 << UInt64(size)) - 1)
    }

    /// Big-endian bit fields start at the most significant bit of their first byte.
    static func readBigEndian(_ base: UnsafeRawPointer, _ position: Int, _ size: Int) -> UInt64 {
        let byte = position >> 3, shift = position & 7
        let bytes = (shift + size + 7) >> 3
        var value: UInt128 = 0
        for i in 0..<bytes { value = (value << 8) | UInt128(base.load(fromByteOffset: byte + i, as: UInt8.self)) }
        value >>= UInt128(bytes * 8 - shift - size)
        return UInt64(truncatingIfNeeded: value) & (size == 64 ? ~0 : (1 << UInt64(size)) - 1)
    }
}
