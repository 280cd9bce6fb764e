// Strings in records: padding, Unicode, invalid UTF-8, truncation at 4096 bytes.
import XCTest
@testable import QTraceFormat

final class StringTests: XCTestCase {
    func testEveryPaddingLengthRoundTrips() throws {
        let directory = try temporaryDirectory(self)
        let labels = (0...24).map { String(repeating: "q", count: $0) }
        let events = labels.enumerated().map {
            Event(type: .queueCreate, time: UInt64($0.offset), tid: 1, arg: 1, a: 0x100 + UInt64($0.offset), b: 0, string: $0.element)
        }
        let path = try writeTrace(events, in: directory)
        XCTAssertEqual(try TraceFile(path: path).readAllEvents(), events)

        // The bytes themselves: u32 length right after the payload words, zero padding to 8.
        let bytes = try readBytes(path)
        var offset = 4096 + 64
        for label in labels {
            let word0 = bytes[offset..<offset + 8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            let length = Int((word0 >> 16) & 0xFFFF)
            XCTAssertEqual(length, (16 + 16 + 4 + label.utf8.count + 7) / 8 * 8)
            XCTAssertEqual(Int(bytes[offset + 32]) | Int(bytes[offset + 33]) << 8, label.utf8.count)
            let padding = bytes[(offset + 36 + label.utf8.count)..<(offset + length)]
            XCTAssertTrue(padding.allSatisfy { $0 == 0 })
            offset += length
        }
    }

    func testUnicodeLabels() throws {
        let directory = try temporaryDirectory(self)
        let names = ["com.exämple.ñ", "日本語のキュー", "rocket 🚀 queue", "e\u{301}", "nul\u{0}inside", ""]
        let events = names.enumerated().map { Event(type: .mark, time: UInt64($0.offset), tid: 1, string: $0.element) }
        XCTAssertEqual(try TraceFile(path: writeTrace(events, in: directory)).readAllEvents(), events)
    }

    func testInvalidUTF8IsReplaced() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/bad-utf8.qtrace"
        let writer = try TraceWriter(path: path)
        try writer.appendRaw(tid: 1, type: EventType.mark.rawValue, tsc: writer.tsc(forTime: 1), string: [0x61, 0xFF, 0x62, 0xC3])
        try writer.appendRaw(tid: 1, type: EventType.intervalBegin.rawValue, tsc: writer.tsc(forTime: 2), words: [5],
                             string: [0xED, 0xA0, 0x80, 0x7A])   // an encoded surrogate is invalid
        try writer.finish()
        let events = try TraceFile(path: path).readAllEvents()
        XCTAssertEqual(events.map(\.string), ["a\u{FFFD}b\u{FFFD}", "\u{FFFD}\u{FFFD}\u{FFFD}z"])
        XCTAssertEqual(events[1].a, 5)
    }

    func testHugeLabelIsTruncatedAndFlagged() throws {
        let directory = try temporaryDirectory(self)
        let long = String(repeating: "abcdefgh", count: 1000)   // 8000 bytes
        let events = [
            Event(type: .queueCreate, time: 1, tid: 1, arg: 0x1101, a: 0xAB, b: 0xCD, string: long),
            Event(type: .mark, time: 2, tid: 1, string: "short"),
        ]
        let read = try TraceFile(path: writeTrace(events, in: directory, chunkSize: 65536)).readAllEvents()
        XCTAssertEqual(read[0].string, String(long.prefix(4096)))
        XCTAssertTrue(read[0].isStringTruncated)
        XCTAssertEqual(read[0].flags, 0x80)
        XCTAssertEqual(read[0].a, 0xAB)
        XCTAssertEqual(read[0].b, 0xCD)
        XCTAssertFalse(read[1].isStringTruncated)
        XCTAssertEqual(read[1].string, "short")
        XCTAssertTrue(read[0].fieldsDescription.hasSuffix("\" truncated concurrent qos=utility"), read[0].fieldsDescription)
    }

    func testTruncationInsideACharacterDropsThePartialCharacter() throws {
        let directory = try temporaryDirectory(self)
        let euros = String(repeating: "€", count: 2000)   // 3 bytes each: 4096 = 1365 * 3 + 1
        let read = try TraceFile(path: writeTrace([Event(type: .mark, time: 0, tid: 1, string: euros)],
                                                  in: directory, chunkSize: 65536)).readAllEvents()
        XCTAssertEqual(read[0].string, String(repeating: "€", count: 1365))
        XCTAssertTrue(read[0].isStringTruncated)
    }

    func testExactly4096BytesIsNotTruncated() throws {
        let directory = try temporaryDirectory(self)
        let label = String(repeating: "z", count: 4096)
        let read = try TraceFile(path: writeTrace([Event(type: .mark, time: 0, tid: 1, string: label)],
                                                  in: directory, chunkSize: 65536)).readAllEvents()
        XCTAssertEqual(read[0].string, label)
        XCTAssertFalse(read[0].isStringTruncated)
    }

    func testCompleteUTF8Prefix() {
        func kept(_ bytes: [UInt8]) -> Int { bytes.withUnsafeBytes { completeUTF8PrefixLength($0) } }
        XCTAssertEqual(kept([]), 0)
        XCTAssertEqual(kept([0x61]), 1)
        XCTAssertEqual(kept([0x61, 0xE2, 0x82]), 1)
        XCTAssertEqual(kept([0x61, 0xE2, 0x82, 0xAC]), 4)
        XCTAssertEqual(kept([0xF0, 0x9F, 0x9A]), 0)
        XCTAssertEqual(kept([0xF0, 0x9F, 0x9A, 0x80]), 4)
        XCTAssertEqual(kept([0x80, 0x80, 0x80, 0x80]), 4, "invalid, not incomplete: left to replacement")
    }
}
