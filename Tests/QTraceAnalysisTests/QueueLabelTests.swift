// QueueLabel keeps short labels inline: it must read back, order and compare exactly as the
// Strings it replaces, ASCII or not, inline or not.
import XCTest
@testable import QTraceAnalysis

final class QueueLabelTests: XCTestCase {
    private let samples = [
        "", "a", "b", "ab", "com.example.q1", "com.example.q10", "com.example.q123456", "com.example.q123457",
        "exactly-15-byte", "exactly-16-bytes", "twenty-three-bytes-long", "twenty-four-bytes-long-x",
        "com.apple.root.default-qos.overcommit", "com.apple.root.default-qos", "with\0nul", "é", "e\u{301}",
        "K", "\u{212A}", "Å", "\u{212B}", "zzz", "Z", "ü-longer-than-twenty-three-bytes",
    ]

    func testReadsBackTheString() {
        for s in samples {
            let label = QueueLabel(s)
            XCTAssertEqual(label.string, s)
            XCTAssertEqual(label.isEmpty, s.isEmpty)
            XCTAssertEqual(label.isASCII, s.utf8.allSatisfy { $0 < 0x80 })
            XCTAssertEqual(label.withUTF8 { Array($0) }, Array(s.utf8))
        }
    }

    /// Every pair orders and compares as the Strings do, canonical equivalence included
    /// ("é" precomposed and not, the Kelvin sign and "K").
    func testOrdersAndComparesAsStrings() {
        for a in samples {
            for b in samples {
                XCTAssertEqual(QueueLabel(a) == QueueLabel(b), a == b, "\(a.debugDescription) == \(b.debugDescription)")
                XCTAssertEqual(QueueLabel(a) < QueueLabel(b), a < b, "\(a.debugDescription) < \(b.debugDescription)")
            }
        }
    }

    func testQueueReadsAndWritesItsLabel() {
        var queue = TraceQueue(address: 1, generation: 0, label: "com.example.q123456", kind: .serial, origin: .created, qos: .utility)
        XCTAssertEqual(queue.label, "com.example.q123456")
        queue.label = "com.apple.root.default-qos.overcommit"
        XCTAssertEqual(queue.label, "com.apple.root.default-qos.overcommit")
        XCTAssertEqual(queue.compactLabel, QueueLabel("com.apple.root.default-qos.overcommit"))
    }

    /// Queues sharing a label (all ASCII: by hash and bytes; with a non-ASCII one: by Strings)
    /// are grouped alike, and only those.
    func testQueuesSharingLabels() {
        func queue(_ label: String) -> TraceQueue {
            TraceQueue(address: 1, generation: 0, label: label, kind: .serial, origin: .created, qos: .utility)
        }
        let ascii = ["x", "com.example.q123456", "", "x", "y", "", "com.example.q123456", "x"].map(queue)
        XCTAssertEqual(Set(ModelBuilder.queuesSharingLabels(ascii)), [[0, 3, 7], [1, 6]])
        let unicode = ["\u{212A}", "K", "e\u{301}", "é", "é-alone"].map(queue)
        XCTAssertEqual(Set(ModelBuilder.queuesSharingLabels(unicode)), [[0, 1], [2, 3]])
    }
}
