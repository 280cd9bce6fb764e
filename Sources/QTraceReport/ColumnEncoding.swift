// Binary columns of the report payload (format described in docs/report-data.md).
//
// Every column is a run of bytes in one buffer that is deflated as a whole. Integers are
// LEB128 varints because most values (time deltas, small indexes) fit in one or two bytes,
// and deflate squeezes the repetitive rest. The viewer decodes each column into a typed
// array (Float64Array for times, Int32Array for indexes, Uint8Array for codes).
import QTraceViewModel
import QTraceFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a column's bytes decode. The raw value is the name written in the header.
enum ColumnEncoding: String {
    /// Unsigned LEB128.
    case uvarint
    /// Zig-zag signed LEB128.
    case svarint
    /// Zig-zag LEB128 differences from the previous value (the first from 0).
    case delta
    /// Zig-zag LEB128 of `row - value`, with 0 meaning -1: a reference to an earlier row.
    case relref
    /// Unsigned LEB128 of `value + 1`, so -1 becomes 0.
    case plus1
    /// One byte per row.
    case u8
    /// IEEE 754 double, little-endian, 8 bytes per row.
    case f64
    /// Unsigned values in `width` bytes each, stored as byte planes (all lowest bytes first,
    /// then all second bytes, ...). Deflate compresses the mostly-zero high planes to nothing
    /// and the planes of noisy low bytes better than varints, whose continuation bits mix them.
    case planes
    /// Zig-zag differences from the previous value (the first from 0), as byte planes.
    case deltaPlanes
    /// Zig-zag LEB128 differences from the previous value of the same key (the row's value in
    /// the table's column `ColumnInfo.key`, written before this one; each key's first from 0):
    /// for references that follow their own lane, such as an item's parent, which is near the
    /// parent of the previous item of the same queue but anywhere in the rows before it.
    case keyedDelta
    /// A number that may be missing: LEB128 of 0 for none (NaN in the viewer), else of
    /// zig-zag(v) + 1. For stats columns of integral values with gaps.
    case nullable
    /// Strings: each row's length in UTF-16 code units (LEB128), then every row's UTF-8 bytes
    /// back to back (one TextDecoder call in the viewer, then slices).
    case utf8
}

/// The typed array a column decodes into.
enum ColumnType: String {
    case f64, i32, u8
    /// Indexes into the report's `strings` table (-1: none); the viewer gives the strings.
    case str
    /// The strings themselves (the `strings` table's column).
    case text
}

struct ColumnInfo {
    var name: String
    var encoding: ColumnEncoding
    var type: ColumnType
    var offset: Int
    var length: Int
    /// Bytes per value of a planes column.
    var width: Int = 0
    /// The column of the same table whose value groups the rows of a `keyedDelta` column.
    var key: String?
}

struct TableInfo {
    var name: String
    var rows: Int
    var columns: [ColumnInfo] = []
}

/// Accumulates the tables of one payload, compressed as they come: the bytes go to a fixed
/// buffer that is handed to the deflater whenever it is full, so that neither the raw payload
/// (34 bytes an item) nor one whole column of it (80 MB for a 20M-item column of 4-byte planes)
/// ever exists, and each byte is stored without an array's checks for room and uniqueness.
///
/// Each segment (a column, or a plane of a planes column) starts at the level's usual
/// strategy; when its first MiB shows that deflate's search for repeated strings gains less
/// than `huffmanTolerance` over Huffman coding the bytes alone (noisy low byte planes of
/// times, references to random earlier rows), the rest of the segment is Huffman-coded only,
/// about 3 times as fast for the same size (see docs/performance.md, run (21)).
struct PayloadBuilder {
    /// zlib's compression level of reports: 4 deflates the starfish payloads 40-44 % faster
    /// than 6 (sf10's 755 MB: 9.9 s instead of 17.7) for 1.7-2.1 % more bytes; 3 and below
    /// (up to 60 % faster, 3.6-7 % more) break ReportWriterTests' 6 bytes an event (6.10 at 3).
    static let level: Int32 = 4

    /// Huffman coding alone is chosen for the rest of a segment when its estimated size is at
    /// most this much larger than what deflate made of the segment's first MiB.
    static let huffmanTolerance = 1.08

    /// Bytes not yet compressed: `pending.base[0..<used]`. Its size is also how much of a
    /// segment decides its coding.
    private var pending: PendingBytes
    private var used = 0
    /// Bytes handed to the deflater so far.
    private var fed = 0
    private(set) var tables: [TableInfo] = []
    /// The deflater, on a thread of its own with two CPUs (`DeflateStage`).
    private let compression: DeflateStage
    /// Whether the current segment's coding is decided (at its first full buffer).
    private var segmentDecided = true

    /// `level`: zlib's (0-9); `thread`: whether deflate runs on a thread of its own (the same
    /// bytes either way).
    init(level: Int32 = PayloadBuilder.level, thread: DecodingThread = .automatic) {
        compression = DeflateStage(level: level, thread: thread)
        pending = compression.firstBuffer()
    }

    /// The payload's size so far, uncompressed (where the next column starts).
    var count: Int { fed + used }

    /// The whole payload, compressed (one zlib stream, as the pieces it was made in).
    mutating func compressed() throws -> [[UInt8]] {
        segmentDecided = true
        feedPending()
        return try compression.finish()
    }

    /// Hands the pending bytes to the deflater unless `room` more fit.
    @inline(__always)
    private mutating func reserve(_ room: Int) {
        guard used + room > pending.capacity else { return }
        feedPending()
    }

    /// A column, or a plane of one, begins: its bytes start a buffer of their own, at the
    /// level's usual strategy.
    private mutating func beginSegment() {
        segmentDecided = true  // the segment before is over: nothing left to decide for it
        feedPending()
        compression.beginSegment()
        segmentDecided = false
    }

    /// Hands the pending bytes to the deflater (and takes a buffer to fill next); a segment's
    /// first full buffer decides how the rest of the segment is coded (`DeflateStage`).
    private mutating func feedPending() {
        guard used > 0 else { return }
        pending = compression.feed(pending, count: used, mayDecide: !segmentDecided)
        fed += used
        used = 0
        segmentDecided = true
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1)
        pending.base[used] = byte
        used += 1
    }

    mutating func beginTable(_ name: String, rows: Int) {
        tables.append(TableInfo(name: name, rows: rows))
    }

    /// Appends a column to the current table; `values` must have one value per row.
    mutating func column(
        _ name: String, _ encoding: ColumnEncoding, as type: ColumnType, _ values: some Collection<Int64>
    ) {
        precondition(values.count == tables[tables.count - 1].rows, "column \(name) has the wrong length")
        beginSegment()
        let start = count
        var width = 0
        switch encoding {
        case .uvarint:
            for v in values { appendVarint(UInt64(bitPattern: v)) }
        case .svarint:
            for v in values { appendVarint(LEB128.zigzag(v)) }
        case .delta:
            var previous: Int64 = 0
            for v in values {
                appendVarint(LEB128.zigzag(v &- previous))
                previous = v
            }
        case .relref:
            for (row, v) in values.enumerated() { appendVarint(v < 0 ? 0 : LEB128.zigzag(Int64(row) - v)) }
        case .plus1:
            for v in values { appendVarint(UInt64(bitPattern: v &+ 1)) }
        case .u8:
            for v in values { append(UInt8(clamping: v)) }
        case .nullable:
            preconditionFailure("use nullableColumn for missing values")
        case .f64:
            preconditionFailure("use doubleColumn for f64")
        case .utf8:
            preconditionFailure("use textColumn for strings")
        case .planes:
            width = appendPlanes(values, delta: false)
        case .deltaPlanes:
            width = appendPlanes(values, delta: true)
        case .keyedDelta:
            preconditionFailure("use keyedDeltaColumn")
        }
        tables[tables.count - 1].columns.append(
            ColumnInfo(name: name, encoding: encoding, type: type, offset: start, length: count - start, width: width))
    }

    /// Appends the values (or, with `delta`, their zigzagged differences) as byte planes and
    /// returns their width in bytes. The values are read once per plane rather than copied
    /// (8 bytes a row: 150 MB for a 20M-item column).
    private mutating func appendPlanes(_ values: some Collection<Int64>, delta: Bool) -> Int {
        func forEachValue(_ body: (UInt64) -> Void) {
            var previous: Int64 = 0
            for v in values {
                body(delta ? LEB128.zigzag(v &- previous) : UInt64(bitPattern: v))
                previous = v
            }
        }
        var largest: UInt64 = 0
        forEachValue { largest = max(largest, $0) }
        let width = max(1, (64 - largest.leadingZeroBitCount + 7) / 8)
        for plane in 0..<width {
            let shift = UInt64(plane * 8)
            if plane > 0 { beginSegment() }
            forEachValue { append(UInt8(truncatingIfNeeded: $0 >> shift)) }
        }
        return width
    }

    /// A `keyedDelta` column: `keys[row]` is the row's value (-1 or more) in the table's
    /// column `keyName`, which must come before this one.
    mutating func keyedDeltaColumn(_ name: String, key keyName: String, keys: [Int32], as type: ColumnType,
                                   _ values: some Collection<Int64>) {
        precondition(values.count == tables[tables.count - 1].rows && keys.count == values.count,
                     "column \(name) has the wrong length")
        precondition(tables[tables.count - 1].columns.contains { $0.name == keyName }, "no key column \(keyName)")
        beginSegment()
        let start = count
        var previous = [Int64](repeating: 0, count: Int(max(-1, keys.max() ?? -1)) + 2)
        previous.withUnsafeMutableBufferPointer { previous in
            for (key, v) in zip(keys, values) {
                let slot = Int(max(-1, key)) + 1
                appendVarint(LEB128.zigzag(v &- previous[slot]))
                previous[slot] = v
            }
        }
        tables[tables.count - 1].columns.append(
            ColumnInfo(name: name, encoding: .keyedDelta, type: type, offset: start, length: count - start,
                       key: keyName))
    }

    mutating func doubleColumn(_ name: String, _ values: some Collection<Double>) {
        precondition(values.count == tables[tables.count - 1].rows, "column \(name) has the wrong length")
        beginSegment()
        let start = count
        for v in values {
            let bits = v.bitPattern
            reserve(8)
            for shift in stride(from: 0, to: 64, by: 8) {
                pending.base[used] = UInt8(truncatingIfNeeded: bits >> UInt64(shift))
                used += 1
            }
        }
        tables[tables.count - 1].columns.append(
            ColumnInfo(name: name, encoding: .f64, type: .f64, offset: start, length: count - start))
    }

    /// Numbers that may be missing (nil, or not finite: JSON's null): `nullable` varints when
    /// every one is an integer, else f64 with NaN for the missing ones.
    mutating func nullableColumn(_ name: String, _ values: [Double?]) {
        precondition(values.count == tables[tables.count - 1].rows, "column \(name) has the wrong length")
        let present = values.map { $0.flatMap { $0.isFinite ? $0 : nil } }
        guard present.allSatisfy({ $0.map { $0 == $0.rounded() && abs($0) < 9e15 } ?? true }) else {
            doubleColumn(name, present.map { $0 ?? .nan })
            return
        }
        beginSegment()
        let start = count
        for v in present { appendVarint(v.map { LEB128.zigzag(Int64($0)) + 1 } ?? 0) }
        tables[tables.count - 1].columns.append(
            ColumnInfo(name: name, encoding: .nullable, type: .f64, offset: start, length: count - start))
    }

    /// Indexes into the report's string table (-1: none).
    mutating func stringColumn(_ name: String, _ indexes: some Collection<Int64>) {
        column(name, .plus1, as: .i32, indexes)
        tables[tables.count - 1].columns[tables[tables.count - 1].columns.count - 1].type = .str
    }

    /// The strings themselves: their UTF-16 lengths (what JavaScript slices by), then their bytes.
    mutating func textColumn(_ name: String, _ strings: [String]) {
        precondition(strings.count == tables[tables.count - 1].rows, "column \(name) has the wrong length")
        beginSegment()
        let start = count
        for s in strings { appendVarint(UInt64(s.utf16.count)) }
        for s in strings { for byte in s.utf8 { append(byte) } }
        tables[tables.count - 1].columns.append(
            ColumnInfo(name: name, encoding: .utf8, type: .text, offset: start, length: count - start))
    }

    @inline(__always)
    private mutating func appendVarint(_ value: UInt64) {
        reserve(LEB128.maxBytes)
        used += LEB128.store(value, at: pending.base + used)
    }


    /// The header's description of the tables.
    var tablesJSON: JSONValue {
        .object(tables.map { table in
            (table.name, .object([
                ("rows", .int(table.rows)),
                ("columns", .object(table.columns.map { c in
                    (c.name, .object([
                        ("enc", .string(c.encoding.rawValue)), ("type", .string(c.type.rawValue)),
                        ("offset", .int(c.offset)), ("length", .int(c.length)), ("width", .int(c.width)),
                    ] + (c.key.map { [("key", JSONValue.string($0))] } ?? [])))
                })),
            ]))
        })
    }
}

/// What Huffman coding alone makes of some bytes, estimated from their counts: a byte of
/// probability p costs about -log2(p) bits, and a code is at least 1 bit long.
enum HuffmanEstimate {
    static func bytes(_ data: UnsafeBufferPointer<UInt8>) -> Double {
        var counts = [Int](repeating: 0, count: 256)
        counts.withUnsafeMutableBufferPointer { counts in
            for byte in data { counts[Int(byte)] &+= 1 }
        }
        let total = Double(data.count)
        var bits = 0.0
        for count in counts where count > 0 {
            bits += Double(count) * max(1, log2(total / Double(count)))
        }
        return bits / 8
    }
}

/// The buffer of a PayloadBuilder's bytes not yet compressed (a class: it frees the memory).
final class PendingBytes {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    deinit { base.deallocate() }
}

/// Decodes a column back (the tests use it to check the writer; the viewer has its own).
enum ColumnDecoder {
    /// `keys`: the decoded key column of a `keyedDelta` column.
    static func decode(_ bytes: ArraySlice<UInt8>, encoding: ColumnEncoding, rows: Int, width: Int = 0,
                       keys: [Int64] = []) -> [Int64] {
        if encoding == .planes || encoding == .deltaPlanes {
            return decodePlanes(bytes, delta: encoding == .deltaPlanes, rows: rows, width: width)
        }
        if encoding == .keyedDelta {
            var previous: [Int64: Int64] = [:]
            return zip(decode(bytes, encoding: .svarint, rows: rows), keys).map { difference, key in
                let v = previous[key, default: 0] &+ difference
                previous[key] = v
                return v
            }
        }
        var out: [Int64] = []
        out.reserveCapacity(rows)
        var i = bytes.startIndex
        func next() -> UInt64 { LEB128.read(bytes, at: &i) }
        var previous: Int64 = 0
        for row in 0..<rows {
            switch encoding {
            case .uvarint: out.append(Int64(bitPattern: next()))
            case .svarint: out.append(LEB128.unzigzag(next()))
            case .delta:
                previous &+= LEB128.unzigzag(next())
                out.append(previous)
            case .relref:
                let v = next()
                out.append(v == 0 ? -1 : Int64(row) - LEB128.unzigzag(v))
            case .plus1: out.append(Int64(bitPattern: next()) - 1)
            case .u8:
                out.append(Int64(bytes[i]))
                i += 1
            case .f64:
                var bits: UInt64 = 0
                for k in 0..<8 { bits |= UInt64(bytes[i + k]) << UInt64(8 * k) }
                i += 8
                out.append(Int64(Double(bitPattern: bits)))
            case .nullable:
                let v = next()
                out.append(v == 0 ? Int64.min : LEB128.unzigzag(v - 1))
            case .planes, .deltaPlanes, .keyedDelta, .utf8:
                preconditionFailure("handled elsewhere")
            }
        }
        return out
    }

    /// An `f64` column's doubles (NaN included, which `decode` cannot give as an integer).
    static func decodeDoubles(_ bytes: ArraySlice<UInt8>, rows: Int) -> [Double] {
        (0..<rows).map { row in
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(bytes[bytes.startIndex + 8 * row + k]) << UInt64(8 * k) }
            return Double(bitPattern: bits)
        }
    }

    /// A `utf8` column back into its strings.
    static func decodeText(_ bytes: ArraySlice<UInt8>, rows: Int) -> [String] {
        var i = bytes.startIndex
        var lengths: [Int] = []
        for _ in 0..<rows {
            var length = 0, shift = 0
            while true {
                let b = bytes[i]
                i += 1
                length |= Int(b & 0x7f) << shift
                if b < 0x80 { break }
                shift += 7
            }
            lengths.append(length)
        }
        let text = String(decoding: bytes[i...], as: UTF8.self).utf16
        var out: [String] = [], at = text.startIndex
        for length in lengths {
            let end = text.index(at, offsetBy: length)
            out.append(String(text[at..<end])!)
            at = end
        }
        return out
    }

    static func decodePlanes(_ bytes: ArraySlice<UInt8>, delta: Bool, rows: Int, width: Int) -> [Int64] {
        var values = [UInt64](repeating: 0, count: rows)
        for plane in 0..<width {
            let base = bytes.startIndex + plane * rows
            for row in 0..<rows { values[row] |= UInt64(bytes[base + row]) << UInt64(plane * 8) }
        }
        guard delta else { return values.map { Int64(bitPattern: $0) } }
        var previous: Int64 = 0
        return values.map { v in
            previous &+= Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
            return previous
        }
    }
}
