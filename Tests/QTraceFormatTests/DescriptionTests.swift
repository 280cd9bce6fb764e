// Names and field descriptions used by `qtrace dump`.
import XCTest
import QTraceFormat

final class DescriptionTests: XCTestCase {
    func testTypeNamesRoundTrip() {
        for type in EventType.allCases {
            XCTAssertEqual(EventType(name: type.name), type)
            XCTAssertEqual(EventType(name: type.name.uppercased()), type)
            XCTAssertEqual(EventType(name: String(describing: type)), type)
        }
        XCTAssertEqual(EventType(name: "queue-create"), .queueCreate)
        XCTAssertNil(EventType(name: "nope"))
        XCTAssertEqual(Set(EventType.allCases.map(\.name)).count, EventType.allCases.count)
    }

    func testFieldDescriptions() {
        let enqueue = Event(type: .enqueue, time: 1_234_567, tid: 9, arg: 1, flags: 0b011, a: 12, b: 0x55D0, c: 0)
        XCTAssertEqual(enqueue.fieldsDescription, "id=12 queue=0x55d0 kind=async flags=barrier,workItem")
        XCTAssertEqual(enqueue.summary, "1234.567us tid 9 enqueue id=12 queue=0x55d0 kind=async flags=barrier,workItem")
        let create = Event(type: .queueCreate, time: 0, tid: 1, arg: 0x1101, a: 0xA, b: 0xB, string: "com.x")
        XCTAssertEqual(create.fieldsDescription, "queue=0xa target=0xb label=\"com.x\" concurrent qos=utility")
        let after = Event(type: .enqueue, time: 0, tid: 1, arg: 5, a: 1, b: 2, c: 999)
        XCTAssertEqual(after.fieldsDescription, "id=1 queue=0x2 kind=after deadline=999")
        let relative = Event(type: .queueCreate, time: 0, tid: 1, arg: 0x7E_1500, a: 1, b: 0, string: "")
        XCTAssertEqual(relative.fieldsDescription, "queue=0x1 target=default label=\"\" serial qos=default relpri=-2")
        XCTAssertEqual(Event(type: .semWaitEnd, time: 0, tid: 1, arg: 3, a: 0x10).fieldsDescription, "sem=0x10 result=timed_out blocked")
        XCTAssertEqual(Event(type: .groupWaitBegin, time: 0, tid: 1, a: 0x20, b: .max).fieldsDescription, "group=0x20 timeout=forever")
        XCTAssertEqual(Event(type: .ioRead, time: 0, tid: 1, a: 0, b: 4, c: UInt64(bitPattern: -1), d: 512).fieldsDescription,
                       "channel=0x0 op=4 offset=-1 length=512")
        XCTAssertEqual(Event(type: .enqueue, time: 0, tid: 1, arg: 77, a: 1, b: 2).fieldsDescription, "id=1 queue=0x2 kind=77")
        for type in EventType.allCases {   // every type has a description, whatever the values
            _ = Event(type: type, time: .max, tid: -1, arg: .max, flags: .max, a: .max, b: .max, c: .max, d: .max, string: "s").summary
        }
    }

    func testQuotedEscapesControlCharacters() {
        XCTAssertEqual(TraceText.quoted("plain é 🚀"), "\"plain é 🚀\"")
        XCTAssertEqual(TraceText.quoted("a\"b\\c"), "\"a\\\"b\\\\c\"")
        XCTAssertEqual(TraceText.quoted("line\nfeed\ttab\u{1B}[31mred\u{7F}\u{85}\u{202E}"),
                       "\"line\\nfeed\\ttab\\u{1b}[31mred\\u{7f}\\u{85}\\u{202e}\"")
    }

    func testMicroseconds() {
        XCTAssertEqual(TraceText.microseconds(0), "0.000")
        XCTAssertEqual(TraceText.microseconds(5), "0.005")
        XCTAssertEqual(TraceText.microseconds(1_234_567), "1234.567")
        XCTAssertEqual(TraceText.microseconds(1_000), "1.000")
    }
}
