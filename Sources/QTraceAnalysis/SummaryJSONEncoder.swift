// The summary's JSON encoder: exactly the bytes of Foundation's JSONEncoder with
// [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] (swift-foundation's JSONWriter: keys
// sorted by their UTF-8 bytes, "key" : value, two spaces per level, "[\n\n  ]" for an empty
// array, floats as `description` without a trailing ".0", only `"`, `\` and controls escaped),
// written to the output in pieces as it goes.
//
// Why our own: JSONEncoder builds a tree of the whole document (boxed values, a dictionary per
// object) before writing any of it: 15% of `stats --json` on the fan-out trace, and a summary
// of 900k queues (1.7 GB of JSON) held whole. Here a value is written when its turn in the
// output comes: an object collects its members (the synthesized `encode(to:)` gives them in
// declaration order), sorts them, and writes each, nested values encoded only then; an array
// writes its elements as they come. What is held at any time is one object per level.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

public struct SummaryJSONEncoder {
    /// Bytes gathered before each call of `write`.
    public var pieceSize: Int

    public init(pieceSize: Int = 1 << 20) { self.pieceSize = pieceSize }

    /// The whole document.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        var data = Data()
        try encode(value) { data.append(contentsOf: $0) }
        return data
    }

    /// The document in pieces of about `pieceSize` bytes, in order.
    public func encode<T: Encodable>(_ value: T, to write: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withoutActuallyEscaping(write) { write in
            let output = JSONOutput(pieceSize: pieceSize, write: write)
            try output.value(value, level: 0)
            try output.flush()
        }
    }
}

/// A member of an object, or an element of an array built through a nested container, kept
/// until its turn in the output.
enum PendingJSON {
    case null
    case bool(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case number(String)
    case string(String)
    case value(any Encodable)
    case object(JSONObjectNode)
    case array(JSONArrayNode)
    case slot(JSONSlot)
}

/// An object's members as its `encode(to:)` gave them.
final class JSONObjectNode {
    // Not checked for overlapping access: only the encoder's own calls reach it, one at a
    // time (the checks were a quarter of the encoding).
    @exclusivity(unchecked) var members: [(key: String, value: PendingJSON)] = []
}

/// A nested unkeyed container's elements (the live one of `JSONOutput` writes them at once).
final class JSONArrayNode {
    @exclusivity(unchecked) var elements: [PendingJSON] = []
}

/// The output buffer and the writing of values at their turn. Its state is not checked for
/// overlapping access (the checks, a thread-local lookup per byte appended, were a quarter of
/// the encoding): it is only reached from the encoding's own calls, one at a time.
final class JSONOutput {
    @exclusivity(unchecked) private var bytes: JSONBytes
    private let pieceSize: Int
    private let write: (UnsafeRawBufferPointer) throws -> Void
    /// Encoders for `encode(to:)` calls, one per nesting of calls, reused.
    @exclusivity(unchecked) private var encoders: [ValueEncoder] = []
    @exclusivity(unchecked) private var active = 0
    /// The sorted order of the objects being written, innermost last (`object`).
    @exclusivity(unchecked) private var order: [Int32] = []

    init(pieceSize: Int, write: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.pieceSize = Swift.max(pieceSize, 1)
        self.write = write
        bytes = JSONBytes(capacity: self.pieceSize + 4096)
    }

    deinit { bytes.release() }

    func flush() throws {
        guard bytes.count > 0 else { return }
        try write(bytes.written)
        bytes.count = 0
    }

    // MARK: Values

    /// Writes `value` here, its closing bracket indented `level` steps.
    func value<T: Encodable>(_ value: T, level: Int) throws {
        if try writeScalar(value) { return }
        if try !writeDirect(value, level: level) {
            if T.self == Data.self {
                string((value as! Data).base64EncodedString())
            } else if T.self == URL.self {
                string((value as! URL).absoluteString)
            } else {
                let encoder = acquireEncoder(level: level)
                defer { active -= 1 }
                try value.encode(to: encoder)
                try encoder.finish()
            }
        }
        if bytes.count >= pieceSize { try flush() }
    }

    /// The common leaves without an `encode(to:)` round trip (arrays of Int call the generic
    /// `encode` per element).
    @inline(__always)
    private func writeScalar<T: Encodable>(_ value: T) throws -> Bool {
        if T.self == Int.self { signed(Int64(unsafeBitCast(value, to: Int.self))); return true }
        if T.self == String.self { string(value as! String); return true }
        if T.self == UInt64.self { unsigned(unsafeBitCast(value, to: UInt64.self)); return true }
        if T.self == Double.self { try pending(.double(unsafeBitCast(value, to: Double.self)), level: 0); return true }
        if T.self == Bool.self { literal(unsafeBitCast(value, to: Bool.self) ? "true" : "false"); return true }
        if T.self == Int32.self { signed(Int64(unsafeBitCast(value, to: Int32.self))); return true }
        return false
    }

    private func acquireEncoder(level: Int) -> ValueEncoder {
        if active == encoders.count { encoders.append(ValueEncoder(output: self)) }
        let encoder = encoders[active]
        active += 1
        encoder.reset(level: level)
        return encoder
    }

    func pending(_ item: PendingJSON, level: Int) throws {
        switch item {
        case .null: literal("null")
        case .bool(let b): literal(b ? "true" : "false")
        case .signed(let n): signed(n)
        case .unsigned(let n): unsigned(n)
        case .number(let text): unquoted(text)
        case .string(let s): string(s)
        case .value(let v): try value(v, level: level)
        case .object(let node): try object(node, level: level)
        case .array(let node):
            openArray()
            for (n, element) in node.elements.enumerated() {
                arraySeparator(first: n == 0, level: level + 1)
                try pending(element, level: level + 1)
            }
            closeArray(level: level)
        case .slot(let slot):
            if let value = slot.value { try pending(value, level: level) } else { emptyObject(level: level) }
        }
    }

    /// The members sorted by their keys' UTF-8 bytes (a key given twice: the last value).
    func object(_ node: JSONObjectNode, level: Int) throws {
        let members = node.members
        let base = order.count
        defer { order.removeLast(order.count - base) }
        sortMembers(members)
        bytes.append(UInt8(ascii: "{"))
        bytes.append(UInt8(ascii: "\n"))
        var first = true
        for position in base..<order.count {
            let member = Int(order[position])
            // Equal keys are adjacent, in the order given: the last one stays (a dictionary's).
            if position + 1 < order.count && members[Int(order[position + 1])].key == members[member].key { continue }
            if !first { bytes.append(UInt8(ascii: ",")); bytes.append(UInt8(ascii: "\n")) }
            first = false
            indent(level + 1)
            string(members[member].key)
            literal(" : ")
            try pending(members[member].value, level: level + 1)
        }
        bytes.append(UInt8(ascii: "\n"))
        indent(level)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends the members' indices to `order`, sorted by key (stable). Insertion sort: objects
    /// have a few dozen members at most; indices, so that no member is copied.
    private func sortMembers(_ members: [(key: String, value: PendingJSON)]) {
        let base = order.count
        for i in members.indices {
            var j = order.count
            order.append(Int32(i))
            while j > base && Self.precedes(members[i].key, members[Int(order[j - 1])].key) {
                order[j] = order[j - 1]
                j -= 1
            }
            order[j] = Int32(i)
        }
    }

    /// JSONWriter's order: `a.utf8.lexicographicallyPrecedes(b.utf8)`.
    @inline(__always)
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in b.withUTF8 { b in a.lexicographicallyPrecedes(b) } }
    }

    // MARK: Arrays (pretty: "[\n", each element on its own line, "\n]")

    func openArray() {
        bytes.append(UInt8(ascii: "["))
        bytes.append(UInt8(ascii: "\n"))
    }

    func arraySeparator(first: Bool, level: Int) {
        if !first { bytes.append(UInt8(ascii: ",")); bytes.append(UInt8(ascii: "\n")) }
        indent(level)
    }

    func closeArray(level: Int) {
        bytes.append(UInt8(ascii: "\n"))
        indent(level)
        bytes.append(UInt8(ascii: "]"))
    }

    /// An object that encoded nothing (JSONEncoder writes `{}` pretty-printed for it).
    func emptyObject(level: Int) {
        literal("{\n\n")
        indent(level)
        bytes.append(UInt8(ascii: "}"))
    }

    // MARK: Leaves

    @inline(__always)
    func indent(_ level: Int) {
        let spaces: StaticString = "                                                                "
        var count = 2 * level
        while count > 0 {
            let n = Swift.min(count, spaces.utf8CodeUnitCount)
            bytes.append(contentsOf: UnsafeBufferPointer(start: spaces.utf8Start, count: n))
            count -= n
        }
    }

    @inline(__always)
    func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Text written as it is (a number's); `literal` takes the string literals, which would
    /// otherwise be Strings (the default literal type), each a retain, release and copy.
    func unquoted(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    func signed(_ n: Int64) {
        if n < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(n.magnitude)
        } else {
            unsigned(UInt64(n))
        }
    }

    func unsigned(_ n: UInt64) {
        if n < 10 { bytes.append(UInt8(ascii: "0") + UInt8(n)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: UInt64.max has 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var n = n, start = buffer.count
            while n > 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]).assumingMemoryBound(to: UInt8.self))
        }
    }

    /// JSONEncoder's formatting of a float: the shortest round-tripping `description`, "1"
    /// for 1.0 (NaN and infinities are refused before, as it refuses them).
    static func trimmed(_ description: String) -> String {
        description.hasSuffix(".0") ? String(description.dropLast(2)) : description
    }

    /// Quoted, escaping `"`, `\` and the controls below 0x20 (\b \f \n \r \t, else \u00xx).
    func string(_ s: String) {
        var s = s
        bytes.append(UInt8(ascii: "\""))
        s.withUTF8 { utf8 in
            var mark = 0
            for (k, byte) in utf8.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<k]))
                mark = k + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0c: bytes.append(UInt8(ascii: "f"))
                case 0x0a: bytes.append(UInt8(ascii: "n"))
                case 0x0d: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    literal("u00")
                    bytes.append(Self.hexDigit(byte >> 4))
                    bytes.append(Self.hexDigit(byte & 0xf))
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 {
        v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10
    }
}

/// The output buffer: appends without Array's per-call capacity and uniqueness checks (a fifth
/// of the encoding of the 900k-queue summary).
struct JSONBytes {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    var count = 0

    init(capacity: Int = 0) {
        self.capacity = Swift.max(capacity, 64)
        start = .allocate(capacity: self.capacity)
    }

    /// Frees the memory; the buffer is not used afterwards.
    func release() { start.deallocate() }

    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        start[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(contentsOf source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress else { return }
        if count + source.count > capacity { grow(to: count + source.count) }
        (start + count).update(from: base, count: source.count)
        count += source.count
    }

    private mutating func grow(to needed: Int) {
        let larger = Swift.max(needed, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: start, count: count)
        start.deallocate()
        (start, capacity) = (moved, larger)
    }
}
