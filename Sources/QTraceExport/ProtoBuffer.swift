// A minimal protocol-buffers wire-format writer (varints, fixed64, length-delimited fields and
// nested messages) for the Perfetto export. Hand-written rather than generated: the export
// writes tens of millions of small messages, and appending their fields straight into one
// byte array costs a few nanoseconds each (docs/perfetto.md, "Why a hand-written encoder").

public struct ProtoBuffer {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public var count: Int { bytes.count }

    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    private mutating func tag(_ field: Int, _ wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    /// uint32/uint64/enum/bool fields.
    public mutating func uint(_ field: Int, _ value: UInt64) {
        tag(field, 0)
        varint(value)
    }

    /// int32/int64 fields (two's complement varint, as protobuf encodes them).
    public mutating func int(_ field: Int, _ value: Int64) {
        uint(field, UInt64(bitPattern: value))
    }

    public mutating func bool(_ field: Int, _ value: Bool) { uint(field, value ? 1 : 0) }

    public mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, 1)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func double(_ field: Int, _ value: Double) { fixed64(field, value.bitPattern) }

    public mutating func string(_ field: Int, _ value: String) {
        var text = value
        text.withUTF8 { utf8 in
            tag(field, 2)
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func data(_ field: Int, _ value: UnsafeRawBufferPointer) {
        tag(field, 2)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A nested message: `body` writes its fields; the length is filled in afterwards (one
    /// byte is reserved, the body moves when it turns out longer than 127 bytes).
    public mutating func message(_ field: Int, _ body: (inout ProtoBuffer) -> Void) {
        tag(field, 2)
        let lengthAt = bytes.count
        bytes.append(0)
        body(&self)
        let length = bytes.count - lengthAt - 1
        if length < 0x80 {
            bytes[lengthAt] = UInt8(length)
            return
        }
        var prefix = ProtoBuffer()
        prefix.varint(UInt64(length))
        bytes.replaceSubrange(lengthAt..<(lengthAt + 1), with: prefix.bytes)
    }
}
