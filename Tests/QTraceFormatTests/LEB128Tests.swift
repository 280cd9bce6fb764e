import XCTest
@testable import QTraceFormat

/// The one LEB128 coder the packed statistics rows, the report's columns and the Perfetto
/// export share: its edges, where a one-off slip in a shift or a mask would show.
final class LEB128Tests: XCTestCase {
    private let edges: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 1 << 32, (1 << 56) - 1, 1 << 63, .max - 1, .max]

    func testAppendStoreAndReadAgree() {
        var appended: [UInt8] = []
        for v in edges { LEB128.append(v, to: &appended) }
        var stored = [UInt8](repeating: 0xEE, count: edges.count * LEB128.maxBytes)
        var used = 0
        stored.withUnsafeMutableBufferPointer { p in
            for v in edges { used += LEB128.store(v, at: p.baseAddress! + used) }
        }
        XCTAssertEqual(Array(stored[..<used]), appended)
        var index = appended.startIndex
        XCTAssertEqual(edges.map { _ in LEB128.read(appended, at: &index) }, edges)
        XCTAssertEqual(index, appended.endIndex)
    }

    func testByteLengthsAtTheSevenBitBoundaries() {
        func length(_ v: UInt64) -> Int { var b: [UInt8] = []; LEB128.append(v, to: &b); return b.count }
        XCTAssertEqual([0x7F, 0x80, 0x3FFF, 0x4000, .max].map(length), [1, 2, 2, 3, LEB128.maxBytes])
        var b: [UInt8] = []
        LEB128.append(300, to: &b)
        XCTAssertEqual(b, [0xAC, 0x02], "the protobuf documentation's example")
    }

    func testZigzagOrdersByMagnitude() {
        XCTAssertEqual([0, -1, 1, -2, 2].map(LEB128.zigzag), [0, 1, 2, 3, 4])
        for v: Int64 in [0, -1, 1, .min, .max, -300, 300] { XCTAssertEqual(LEB128.unzigzag(LEB128.zigzag(v)), v) }
    }

    func testReadsFromASlice() {
        var b: [UInt8] = [0xFF]
        LEB128.append(123_456, to: &b)
        let slice = b[1...]
        var index = slice.startIndex
        XCTAssertEqual(LEB128.read(slice, at: &index), 123_456)
        XCTAssertEqual(index, b.endIndex)
    }
}
