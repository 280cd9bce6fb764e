import QTraceFormat

// A minimal protocol-buffers wire-format writer (varints, fixed64, length-delimited fields and
// nested messages) for the Perfetto export. Hand-written rather than generated: the export
// writes tens of millions of small messages, and appending their fields straight into one
// byte array costs a few nanoseconds each (docs/perfetto.md, "Why a hand-written encoder").
//
// The methods are @inlinable (and the storage @usableFromInline) so that a caller in another
// module inlines them as the export, in this module, does: Benchmarks/PerfettoEncoding links
// this encoder, and measured it 2.5-3x slower per item through plain cross-module calls.
public struct ProtoBuffer {
    @usableFromInline var storage: [UInt8] = []

    /// The encoded bytes.
    public var bytes: [UInt8] { storage }

    @inlinable public init(capacity: Int = 0) { storage.reserveCapacity(capacity) }

    @inlinable public var count: Int { storage.count }

    @inlinable public mutating func removeAll() { storage.removeAll(keepingCapacity: true) }

    @inlinable public mutating func varint(_ value: UInt64) { LEB128.append(value, to: &storage) }

    @inlinable mutating func tag(_ field: Int, _ wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    /// uint32/uint64/enum/bool fields.
    @inlinable public mutating func uint(_ field: Int, _ value: UInt64) {
        tag(field, 0)
        varint(value)
    }

    /// int32/int64 fields (two's complement varint, as protobuf encodes them).
    @inlinable public mutating func int(_ field: Int, _ value: Int64) {
        uint(field, UInt64(bitPattern: value))
    }

    @inlinable public mutating func bool(_ field: Int, _ value: Bool) { uint(field, value ? 1 : 0) }

    @inlinable public mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, 1)
        withUnsafeBytes(of: value.littleEndian) { storage.append(contentsOf: $0) }
    }

    @inlinable public mutating func double(_ field: Int, _ value: Double) { fixed64(field, value.bitPattern) }

    @inlinable public mutating func string(_ field: Int, _ value: String) {
        var text = value
        text.withUTF8 { utf8 in
            tag(field, 2)
            varint(UInt64(utf8.count))
            storage.append(contentsOf: utf8)
        }
    }

    @inlinable public mutating func data(_ field: Int, _ value: UnsafeRawBufferPointer) {
        tag(field, 2)
        varint(UInt64(value.count))
        storage.append(contentsOf: value)
    }

    /// A nested message: `body` writes its fields; the length is filled in afterwards (one
    /// byte is reserved, the body moves when it turns out longer than 127 bytes).
    @inlinable public mutating func message(_ field: Int, _ body: (inout ProtoBuffer) -> Void) {
        tag(field, 2)
        let lengthAt = storage.count
        storage.append(0)
        body(&self)
        let length = storage.count - lengthAt - 1
        if length < 0x80 {
            storage[lengthAt] = UInt8(length)
            return
        }
        var prefix = ProtoBuffer()
        prefix.varint(UInt64(length))
        storage.replaceSubrange(lengthAt..<(lengthAt + 1), with: prefix.bytes)
    }
}
