// The payload's segments (columns, planes) are Huffman-coded alone when deflate's search for
// repeated strings gains nothing on their first MiB: the payload still inflates to the same
// bytes, and the next segment is deflated as usual again.
import QTraceFormat
import QTraceViewModel
import XCTest
@testable import QTraceReport

final class PayloadCodingTests: XCTestCase {
    private static let rows = 3 << 20

    func testANoisyColumnIsHuffmanCodedAndTheNextDeflatedAgain() throws {
        // Repeats (deflate's best case), then 6-bit noise (no repeated strings to find), then zeros.
        var state: UInt64 = 21
        let pattern = (0..<100).map { _ in Self.next(&state) }
        let repeats = (0..<Self.rows).map { Int64(pattern[$0 % 100]) }
        let noise = (0..<Self.rows).map { _ in Int64(Self.next(&state) % 64) }
        let zeros = [Int64](repeating: 0, count: Self.rows)
        func payload(_ thread: DecodingThread) throws -> [[UInt8]] {
            var builder = PayloadBuilder(thread: thread)
            builder.beginTable("t", rows: Self.rows)
            builder.column("repeats", .u8, as: .u8, repeats)
            builder.column("noise", .u8, as: .u8, noise)
            builder.column("zeros", .u8, as: .u8, zeros)
            builder.beginTable("small", rows: pattern.count)
            builder.column("pattern", .u8, as: .u8, pattern.map { Int64($0) })
            return try builder.compressed()
        }
        // Compressed on a thread of its own (`DeflateStage`), the stream is the same, piece
        // for piece: the deflater gets the same calls in the same order.
        let pieces = try payload(.never)
        XCTAssertEqual(try payload(.always), pieces)
        let compressed = Array(pieces.joined())
        let raw = (repeats + noise + zeros + pattern.map { Int64($0) }).map { UInt8($0) }

        XCTAssertEqual(try Zlib.decompress(compressed, expectedSize: raw.count), raw, "the same bytes inflate")
        XCTAssertNotEqual(compressed, try Zlib.compress(raw, level: PayloadBuilder.level), "the noise was coded otherwise")
        // 6 bits a byte of noise; the repeats and zeros deflated as usual (Huffman coding them
        // alone would cost at least a bit a byte: 768 KiB more for the zeros).
        XCTAssertLessThan(compressed.count, Self.rows * 6 / 8 + 64 << 10, "\(compressed.count) bytes")
    }

    func testHuffmanEstimateCountsAtLeastABitAByte() {
        let zeros = [UInt8](repeating: 0, count: 1000)
        let halves = (0..<1000).map { UInt8($0 % 2) }
        let all = (0..<1024).map { UInt8($0 % 256) }
        zeros.withUnsafeBufferPointer { XCTAssertEqual(HuffmanEstimate.bytes($0), 125) }
        halves.withUnsafeBufferPointer { XCTAssertEqual(HuffmanEstimate.bytes($0), 125) }
        all.withUnsafeBufferPointer { XCTAssertEqual(HuffmanEstimate.bytes($0), 1024) }
    }

    /// A keyed column is written as differences within each key (-1 a key of its own): the
    /// references of one queue that follow each other cost a byte each, wherever they point.
    func testAKeyedColumnStoresDifferencesWithinEachKey() throws {
        let keys: [Int32] = [-1, 0, 1, 0, 1, -1, 0, 2, 1]
        let values: [Int64] = [-1, 500_000, 900_000, 500_001, 900_003, -1, 500_001, -1, 899_999]
        var builder = PayloadBuilder()
        builder.beginTable("t", rows: keys.count)
        builder.column("queue", .plus1, as: .i32, keys.map { Int64($0) })
        builder.keyedDeltaColumn("parent", key: "queue", keys: keys, as: .i32, values)
        let info = try XCTUnwrap(builder.tables.first?.columns.last)
        XCTAssertEqual(info.key, "queue")
        let compressed = Array(try builder.compressed().joined())
        let raw = try Zlib.decompress(compressed, expectedSize: builder.count)
        let bytes = raw[info.offset..<(info.offset + info.length)]
        // Each key's first value from 0 (three bytes for 500,000 and 900,000), then 1-byte steps.
        XCTAssertEqual(bytes.count, 1 + 3 + 3 + 1 + 1 + 1 + 1 + 1 + 1)
        XCTAssertEqual(ColumnDecoder.decode(bytes, encoding: .keyedDelta, rows: keys.count, keys: keys.map { Int64($0) }),
                       values)
    }

    /// An LCG's high byte: no repeated strings for deflate to find.
    private static func next(_ state: inout UInt64) -> UInt8 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}
