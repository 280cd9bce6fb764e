// SummaryJSONEncoder must write Foundation's JSONEncoder bytes exactly ([.prettyPrinted,
// .sortedKeys, .withoutEscapingSlashes]): the summary is a versioned, byte-stable document,
// and readers (diff, CI gates) compare summaries written by older builds.
import Foundation
@testable import QTraceAnalysis
import QTraceFormat
import XCTest
import QTraceAnalysisTestSupport

final class SummaryJSONEncoderTests: XCTestCase {
    private func foundationJSON<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Whole, and in small pieces (the pieces must join to the same bytes).
    private func assertSameBytes<T: Encodable>(_ value: T, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        let expected = try foundationJSON(value)
        XCTAssertEqual(String(decoding: try SummaryJSONEncoder().encode(value), as: UTF8.self), expected, message, file: file, line: line)
        var pieces = Data(), writes = 0
        try SummaryJSONEncoder(pieceSize: 64).encode(value) { pieces.append(contentsOf: $0); writes += 1 }
        XCTAssertEqual(String(decoding: pieces, as: UTF8.self), expected, message, file: file, line: line)
        if expected.utf8.count > 4 * 64 { XCTAssertGreaterThan(writes, 1, "written in pieces", file: file, line: line) }
    }

    /// The real recordings kept as fuzzing seeds: hostile labels, code sites, Swift tasks, a
    /// flight-recorder ring, every API.
    func testSummariesOfRealTracesAreJSONEncodersBytes() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/embedded")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { $0.hasSuffix(".trace") }.sorted()
        XCTAssertGreaterThanOrEqual(seeds.count, 5)
        for seed in seeds {
            let file = try TraceFile(path: corpus.appendingPathComponent(seed).path)
            let summary = AnalysisSummary(result: Analysis.run(file: file), tracePath: seed, generator: "test")
            try assertSameBytes(summary, seed)
            var written = Data()
            try summary.writeJSON { written.append($0) }
            XCTAssertEqual(written, try summary.jsonData(), seed)
        }
    }

    /// Thousands of queues with quoted, HTML and non-ASCII labels; a recording summary of two.
    func testManyQueuesWithOddLabels() throws {
        var events: [Event] = []
        for q in 0..<600 as Range<UInt64> {
            let queue = 0x1000 + q * 0x100
            let label = ["com.example.q\(q) \"quoted\" <tag>", "</script><b>&amp; q\(q)", "очередь-\(q) 🚀 e\u{301}", "tab\tnew\nline\u{1}\u{1f}\u{7f}/\\\(q)"][Int(q % 4)]
            events.append(Event(type: .queueCreate, time: 10 * q + 1, tid: 1, arg: 1, a: queue, string: label))
            events.append(Event(type: .enqueue, time: 10 * q + 2, tid: 1, arg: 1, a: 100 + q, b: queue))
            events.append(Event(type: .start, time: 10 * q + 3, tid: 2, arg: 1, a: 100 + q))
            if q % 5 != 0 { events.append(Event(type: .end, time: 10 * q + 5 + q % 7, tid: 2, a: 100 + q)) }
        }
        let result = Analysis.run(info: TraceInfo(pid: 7, mainTid: 1), events: events)
        let summary = AnalysisSummary(result: result, tracePath: "/tmp/odd \"path\"/t.qtrace", generator: "test")
        XCTAssertGreaterThan(summary.statistics.queues.count, 500)
        try assertSameBytes(summary)
        var overview = RecordingOverview.Builder()
        overview.add(result)
        let recording = RecordingSummary(overview: overview.build(), processes: [summary, summary], generator: "test")
        XCTAssertEqual(String(decoding: try recording.jsonData(), as: UTF8.self), try foundationJSON(recording))
    }

    /// The types written member by member (SummaryJSONEncoder+Direct.swift), with every
    /// optional member present and absent.
    func testDirectlyWrittenTypesWithAndWithoutOptionalMembers() throws {
        var full = QueueStats(queue: 3, label: "q \"3\"", name: "q \"3\" [serial]", address: "0x10#2", kind: .serial, qos: "utility", target: 1)
        full.runningAtEndLongestNs = 77
        full.worstWaitBehind = WaitBehind(item: 5, blocker: 4, waitNs: 9)
        full.throughputPerSecond = 1234.5
        full.widthMean = 1e-7
        full.busyShare = 1
        full.wait.count = 2
        full.run.p99Ns = .max
        var bare = QueueStats(queue: 0, label: "", name: nil, address: "0x0", kind: .global, qos: "default", target: nil)
        bare.busyShare = 0.25
        try assertSameBytes([full, bare])
        try assertSameBytes([QueueTreeNode(queue: 1, depth: 2, parent: 0, children: [4, 5], subtreeQueues: 3, subtreeItems: 9, subtreeRunNs: 1, subtreeWaitNs: 2, subtreeBusyNs: 3),
                             QueueTreeNode(queue: 0, depth: 0, parent: nil, children: [])])
        try assertSameBytes([ThreadQueueShare(queue: 1, items: 2, runNs: 3)])
        let groups = #"[{"group": 1, "address": "0x1", "enters": 2, "leaves": 1, "outstanding": 1, "leavesWithoutEnter": 0, "rounds": 1, "firstEnterNs": 5, "lastLeaveNs": 9, "enterToLeaveNs": 4, "leaveToNotifyNs": 2, "notifies": 1, "notifiesFired": 1, "lastMember": 7, "waits": 0, "timedOutWaits": 0},"#
            + #"{"group": 2, "address": "0x2", "enters": 0, "leaves": 0, "outstanding": 0, "leavesWithoutEnter": 0, "rounds": 0, "notifies": 0, "notifiesFired": 0, "waits": 1, "timedOutWaits": 1}]"#
        try assertSameBytes(try JSONDecoder().decode([GroupStats].self, from: Data(groups.utf8)))
    }

    func testNumbersStringsAndEmptyContainers() throws {
        try assertSameBytes(Leaves())
        try assertSameBytes([Leaves(), Leaves(doubles: [], text: "")])
        try assertSameBytes(Leaves(doubles: (0..<2000).map { Double($0) * 1.37e-3 - 0.5 }, text: String(repeating: "long \"label\" ✓ ", count: 50_000)))
        try assertSameBytes(Nothing())
        try assertSameBytes([Nothing(), Nothing()])
        try assertSameBytes([[Int]](), "an empty top-level array")
        try assertSameBytes([[Int]()], "an empty nested array")
        try assertSameBytes(["b": 1, "B": 2, "a": 3, "ä": 4, "a1": 5, "a10": 6, "a2": 7, "": 8])
        try assertSameBytes([3: "three", -1: "minus one", 10: "ten"])
        try assertSameBytes([Int?.none, 1, nil])
        try assertSameBytes("a top-level \"string\"")
        try assertSameBytes(42)
    }

    /// Synthesized coding of enums with payloads and custom `encode(to:)` use nested
    /// containers and super-encoders.
    func testNestedContainersAndSuperEncoders() throws {
        try assertSameBytes([Shape.circle(radius: 1.5), .square(side: 2, label: "s"), .empty, .pair(1, "x")])
        try assertSameBytes(Custom())
        try assertSameBytes([Custom(), Custom()])
        try assertSameBytes(NestedInArray())
        try assertSameBytes(["k": NestedInArray()])
    }

    func testNonFiniteNumbersAreRefusedAsJSONEncoderRefusesThem() {
        XCTAssertThrowsError(try SummaryJSONEncoder().encode([Double.nan]))
        XCTAssertThrowsError(try SummaryJSONEncoder().encode(Leaves(doubles: [.infinity], text: "")))
        XCTAssertThrowsError(try foundationJSON([Double.nan]))
    }
}

private struct Leaves: Codable {
    var doubles: [Double] = [0, -0.0, 1, 1.5, 0.1, 1e-5, 4.2e-05, 1e16, 1.7976931348623157e308, 5e-324, -2.5, 123456789.125, 1e21, 3e-7]
    var floats: [Float] = [0, 1, 0.1, 3.4028235e38, 1e-40, -7.25]
    var signed: [Int64] = [0, -1, .min, .max]
    var unsigned: [UInt64] = [0, 9, 10, .max]
    var small: [Int8] = [-128, 127]
    var smallUnsigned: [UInt16] = [0, 65535]
    var int: Int = -42
    var uint: UInt = 42
    var int32: Int32 = .min
    var uint32: UInt32 = .max
    var bool = true
    var nope = false
    var optional: Int? = nil
    var present: Double? = 2.0
    var text = "quote \" backslash \\ slash / controls \u{0}\u{8}\u{9}\u{a}\u{b}\u{c}\u{d}\u{1b}\u{1f} del \u{7f} html <a href=\"x\">&amp;</a> unicode é 日本 🇫🇷 \u{2028}\u{2029} \u{feff}"
    var strings: [String] = ["", "a", "<script>alert(1)</script>", "\u{10}"]
    var empty: [String] = []
    var emptyObjects: [Nothing] = [Nothing()]
    var nested: [[Int]] = [[], [1, 2], []]
    var Capital = "sorted before lower case"
    var _underscore = 1
    var zebra = 0
    init() {}
    init(doubles: [Double], text: String) { self.doubles = doubles; self.text = text }
}

private struct Nothing: Codable {
    var absent: String? = nil
}

private enum Shape: Codable {
    case circle(radius: Double)
    case square(side: Int, label: String)
    case empty
    case pair(Int, String)
}

/// Nested containers and super-encoders, as hand-written `encode(to:)`s use them.
private struct Custom: Encodable {
    enum Key: String, CodingKey { case zed, alpha, inner, list, parent }
    enum Inner: String, CodingKey { case y, x }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(1, forKey: .zed)
        var inner = c.nestedContainer(keyedBy: Inner.self, forKey: .inner)
        try inner.encode("why", forKey: .y)
        try inner.encode(0.25, forKey: .x)
        var list = c.nestedUnkeyedContainer(forKey: .list)
        try list.encode(1)
        var element = list.nestedContainer(keyedBy: Inner.self)
        try element.encode(true, forKey: .x)
        var deeper = list.nestedUnkeyedContainer()
        try deeper.encode("d")
        try list.encodeNil()
        try "super".encode(to: c.superEncoder(forKey: .parent))
        try c.encode("a", forKey: .alpha)
        var array = encoder.container(keyedBy: Key.self)
        try array.encode(2, forKey: .zed)
    }
}

/// Nested containers in an array written as it goes: each element is complete only when the
/// next one starts (the last one, when the array ends).
private struct NestedInArray: Encodable {
    func encode(to encoder: Encoder) throws {
        var array = encoder.unkeyedContainer()
        try array.encode(1)
        var object = array.nestedContainer(keyedBy: Custom.Inner.self)
        try object.encode("v", forKey: .x)
        var inner = array.nestedUnkeyedContainer()
        try inner.encode(2)
        try "super".encode(to: array.superEncoder())
        try array.encode("last but one")
        var last = array.nestedContainer(keyedBy: Custom.Inner.self)
        try last.encode(3, forKey: .y)
    }
}
