// Decoding one babeltrace2 event: which `qtrace:*` event it is and where its fields are.
// Member positions are looked up by name once per event class, so a trace written by a newer
// provider (fields added or reordered) or with extra contexts still reads.
import CBabeltrace2
import QTraceFormat

/// The `qtrace:*` event classes of lttng/qtrace_tp.h.
enum QTraceEventKind {
    /// record1...record4: a record with that many payload words.
    case record(words: Int)
    /// record_string: payload words (a sequence) and a string.
    case recordString
    case process, thread, dropped, processEnd
}

/// A payload or context member: its position and whether it is a signed integer.
struct MemberRef {
    var index: UInt64
    var signed: Bool
}

/// Field positions of one event class. Built once per class and cached by the reader; all
/// `let`s, which (unlike class `var`s) cost no run-time exclusivity check per event.
final class EventClassDecoder {
    let kind: QTraceEventKind
    private let members: [String: MemberRef]
    /// Payload members in the order the kind needs them (records: type, flags, arg, a, b, c,
    /// d). A raw buffer, not an array: reading it per event costs no reference counting.
    let recordMembers: UnsafeMutableBufferPointer<MemberRef>
    /// vtid (and vpid, if recorded) in the stream's common context.
    let vtid: MemberRef?
    let vpid: MemberRef?
    /// The trace environment's `vpid` (per-process buffers), when the context has none.
    let environmentPid: Int32?
    /// Whether events carry a clock snapshot (LTTng's always do).
    let hasClock: Bool

    /// A decoder for `eventClass`, or nil when it is not a `qtrace:*` event this reader knows
    /// (or a foreign provider also called qtrace, without the members this kind needs).
    init?(eventClass: OpaquePointer, event: OpaquePointer) {
        guard let cName = bt_event_class_get_name(eventClass) else { return nil }
        let name = String(cString: cName)
        guard name.hasPrefix("qtrace:"), let kind = Self.kind(of: name.dropFirst(7)) else { return nil }
        let members = bt_event_class_borrow_payload_field_class_const(eventClass).map(Self.members(of:)) ?? [:]
        let needed = Self.neededMembers(kind).compactMap { members[$0] }
        guard needed.count == Self.neededMembers(kind).count else { return nil }
        self.kind = kind
        self.members = members
        recordMembers = .allocate(capacity: needed.count)
        _ = recordMembers.initialize(from: needed)
        let streamClass = bt_event_class_borrow_stream_class_const(eventClass)
        let context = streamClass.flatMap(bt_stream_class_borrow_event_common_context_field_class_const).map(Self.members(of:)) ?? [:]
        vtid = context["vtid"]
        vpid = context["vpid"]
        hasClock = streamClass.flatMap(bt_stream_class_borrow_default_clock_class_const) != nil
        environmentPid = vpid == nil ? Self.environmentPid(of: event) : nil
    }

    deinit { recordMembers.deallocate() }

    static func kind(of shortName: Substring) -> QTraceEventKind? {
        switch shortName {
        case "record1": .record(words: 1)
        case "record2": .record(words: 2)
        case "record3": .record(words: 3)
        case "record4": .record(words: 4)
        case "record_string": .recordString
        case "process": .process
        case "thread": .thread
        case "dropped": .dropped
        case "process_end": .processEnd
        default: nil
        }
    }

    /// The payload members a kind reads per event, in `recordMembers` order.
    static func neededMembers(_ kind: QTraceEventKind) -> [String] {
        switch kind {
        case .record(let words): ["type", "flags", "arg"] + ["a", "b", "c", "d"].prefix(words)
        case .recordString: ["type", "flags", "arg", "words", "text"]
        case .process: ["pid", "ppid", "ncpu", "main_tid", "main_queue", "init_mono_ns", "init_realtime_ns"]
        case .thread: ["pid", "name"]
        case .dropped: ["type"]
        case .processEnd: []
        }
    }

    func member(_ name: String) -> MemberRef? { members[name] }

    /// Per-process buffers (lttng enable-channel --buffers-pid) name the process in the
    /// trace environment.
    private static func environmentPid(of event: OpaquePointer) -> Int32? {
        guard let stream = bt_event_borrow_stream_const(event), let trace = bt_stream_borrow_trace_const(stream),
              let value = bt_trace_borrow_environment_entry_value_by_name_const(trace, "vpid"),
              bt_value_get_type(value) == BT_VALUE_TYPE_SIGNED_INTEGER else { return nil }
        return Int32(truncatingIfNeeded: bt_value_integer_signed_get(value))
    }

    private static func members(of structureClass: OpaquePointer) -> [String: MemberRef] {
        guard bt_field_class_get_type(structureClass) == BT_FIELD_CLASS_TYPE_STRUCTURE else { return [:] }
        var result: [String: MemberRef] = [:]
        for index in 0..<bt_field_class_structure_get_member_count(structureClass) {
            guard let member = bt_field_class_structure_borrow_member_by_index_const(structureClass, index),
                  let cName = bt_field_class_structure_member_get_name(member) else { continue }
            let memberClass = bt_field_class_structure_member_borrow_field_class_const(member)
            let signed = memberClass.map { bt_field_class_type_is(bt_field_class_get_type($0), BT_FIELD_CLASS_TYPE_SIGNED_INTEGER) != 0 } ?? false
            result[String(cString: cName)] = MemberRef(index: index, signed: signed)
        }
        return result
    }
}

// MARK: Field access

/// Reads an integer member of a structure field (0 when it is missing or not an integer).
@inline(__always)
func integer(_ structure: OpaquePointer?, _ member: MemberRef) -> UInt64 {
    guard let field = bt_field_structure_borrow_member_field_by_index_const(structure, member.index) else { return 0 }
    return member.signed ? UInt64(bitPattern: bt_field_integer_signed_get_value(field))
                         : bt_field_integer_unsigned_get_value(field)
}

/// The bytes of a string member, decoded as UTF-8 with invalid sequences replaced. A string
/// the shim truncated may end inside a character: that partial character is dropped.
func string(_ structure: OpaquePointer?, _ member: MemberRef, truncated: Bool = false) -> String {
    guard let field = bt_field_structure_borrow_member_field_by_index_const(structure, member.index),
          bt_field_get_class_type(field) == BT_FIELD_CLASS_TYPE_STRING,
          let value = bt_field_string_get_value(field) else { return "" }
    let bytes = UnsafeRawBufferPointer(start: value, count: Int(bt_field_string_get_length(field)))
    let kept = truncated ? completeUTF8PrefixLength(bytes) : bytes.count
    return String(decoding: bytes[..<kept], as: UTF8.self)
}

/// The elements of an array member of unsigned integers (at most `limit`).
func unsignedArray(_ structure: OpaquePointer?, _ member: MemberRef, limit: Int, into body: (Int, UInt64) -> Void) {
    guard let field = bt_field_structure_borrow_member_field_by_index_const(structure, member.index) else { return }
    let count = min(Int(bt_field_array_get_length(field)), limit)
    for index in 0..<count {
        if let element = bt_field_array_borrow_element_field_by_index_const(field, UInt64(index)) {
            body(index, bt_field_integer_unsigned_get_value(element))
        }
    }
}
