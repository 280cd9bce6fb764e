// The report's payload is compressed in pieces while it is built (PayloadBuilder), Perfetto's
// packets in one go: both must be exactly zlib's compress2 bytes, however the input is split.
import CZlib
import QTraceViewModel
import XCTest

final class CompressionTests: XCTestCase {
    func testPiecesGiveTheBytesOfCompress2() throws {
        let input = Self.payloadLike(count: 3 << 20)
        for level: Int32 in [1, 6] {
            let reference = Self.zlibCompress2(input, level: level)
            XCTAssertEqual(try Zlib.compress(input, level: level), reference, "level \(level), one piece")
            for piece in [777, 65_536, 1 << 20] {
                XCTAssertEqual(try Self.deflated(input, pieces: piece, level: level), reference, "level \(level), pieces of \(piece)")
            }
        }
        let small = Array(input.prefix(100_000))
        XCTAssertEqual(try Self.deflated(small, pieces: 1, level: 6), Self.zlibCompress2(small, level: 6), "byte by byte")
    }

    func testEmptyInput() throws {
        XCTAssertEqual(try Zlib.compress([]), Self.zlibCompress2([], level: 6))
        XCTAssertEqual(try Zlib.decompress(try Zlib.compress([]), expectedSize: 0), [])
    }

    private static func deflated(_ input: [UInt8], pieces: Int, level: Int32) throws -> [UInt8] {
        let deflater = try Deflater(level: level)
        for start in stride(from: 0, to: input.count, by: pieces) {
            try deflater.feed(Array(input[start..<min(start + pieces, input.count)]))
        }
        XCTAssertEqual(deflater.inputCount, input.count)
        return try deflater.finish()
    }

    private static func zlibCompress2(_ input: [UInt8], level: Int32) -> [UInt8] {
        var size = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { CZlib.compress2(out.baseAddress, &size, $0.baseAddress, uLong($0.count), level) }
        }
        XCTAssertEqual(status, Z_OK)
        return Array(output.prefix(Int(size)))
    }

    /// Bytes like a payload's: runs of small varint-sized values with noise and repeats, so that
    /// deflate finds matches at many distances and emits several blocks.
    private static func payloadLike(count: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let r = state >> 33
            if r % 7 == 0, bytes.count > 5000 {
                let from = bytes.count - 1 - Int(r % 4000)
                bytes.append(contentsOf: bytes[from..<min(from + Int(r % 50) + 3, bytes.count)])
            } else {
                bytes.append(UInt8(truncatingIfNeeded: r % (r % 3 == 0 ? 256 : 16)))
            }
        }
        return Array(bytes.prefix(count))
    }
}
