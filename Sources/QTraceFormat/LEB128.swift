// LEB128 numbers (7 bits a byte, low bits first, the high bit set on every byte but the last)
// and zigzag for signed ones: the packed statistics rows, the report's data columns and the
// Perfetto export all write them, and the tests read them back.
//
// @inlinable so that callers in other modules (the report's column builder, the protobuf
// writer) inline the loop as if it were their own: they run it for every value they write.
public enum LEB128 {
    /// A UInt64 takes at most 10 bytes.
    public static let maxBytes = 10

    /// Signed to unsigned, small magnitudes to small numbers: 0, -1, 1, -2 → 0, 1, 2, 3.
    @inlinable @inline(__always)
    public static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    @inlinable @inline(__always)
    public static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }

    /// Appends `value` to `bytes`.
    @inlinable @inline(__always)
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Stores `value` at `p`, which has room for `maxBytes`; returns how many bytes it took.
    @inlinable @inline(__always)
    public static func store(_ value: UInt64, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var v = value, n = 0
        while v >= 0x80 {
            p[n] = UInt8(truncatingIfNeeded: v) | 0x80
            n += 1
            v >>= 7
        }
        p[n] = UInt8(v)
        return n + 1
    }

    /// Reads the number at `index` and moves `index` past it. The bytes must hold a whole
    /// number there (the writers above made them); a reader of untrusted bytes checks bounds.
    @inlinable
    public static func read<Bytes: Collection>(_ bytes: Bytes, at index: inout Bytes.Index) -> UInt64
        where Bytes.Element == UInt8 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
}
