// The record list, Sources/CQTraceShim/qtrace_records.h, is read twice: by the C compiler (the
// shim's constants) and by qtrace-generate-schema (QTraceFormat's declarations). These tests
// hold the two readings together, and check that the generator refuses a list it would
// misread instead of generating something else.
import Foundation
import XCTest
import QTraceFormat

final class RecordListTests: XCTestCase {
    /// Every constant: the value C gives it (through the CQTraceRecords module) is the value
    /// of the Swift case generated from the same line. `recordListConstants` is generated too,
    /// one entry per list line: a constant C lacks would not compile.
    func testCConstantsEqualTheGeneratedSwift() {
        XCTAssertGreaterThan(recordListConstants.count, 100, "too few constants generated")
        for constant in recordListConstants {
            XCTAssertEqual(constant.c, constant.swift, "\(constant.name): C and Swift disagree")
        }
        let names = recordListConstants.map(\.name)
        XCTAssertEqual(Set(names).count, names.count, "a constant is generated twice")
        for name in ["QT_KIND_BARRIER_ASYNC_AND_WAIT", "QT_EF_CONCURRENCY", "QT_CODE_SWIFT_CLOSURE", "QT_ONCE_WAITED",
                     "QT_SOURCE_TYPE_INTERVAL", "QT_FLAG_DROPPED_RING_BUSY", "QT_SNAPSHOT_EXPLOSION", "QT_ENQUEUE_CS",
                     "QT_THREAD_KIND_WORKER", "QT_QUEUE_INFO_GLOBAL", "QT_HANDLER_REGISTRATION", "QT_DEADLOCK_APPLY",
                     "QT_CONTINUATION_AWAITED"] {
            XCTAssertTrue(names.contains(name), "\(name) is not compared")
        }
    }

    /// The value sets as Swift sees them (spot checks of what the analysis relies on).
    func testValueSetsKeepTheirSwiftNames() {
        XCTAssertEqual(ItemKind.barrierAsyncAndWait.rawValue, 9)
        XCTAssertEqual(EnqueueFlags.named.map(\.name), ["barrier", "workItem", "function", "swiftConcurrency"])
        XCTAssertEqual(EnqueueFlags(rawValue: 0x1B).names, "barrier,workItem,swiftConcurrency,0x10")
        XCTAssertEqual(TraceHeaderFlags.replacedByExec.rawValue, 1 << 4)
        XCTAssertEqual(SnapshotReason.threadExplosion.description, "thread explosion detected")
        // The dump names a value of a value set by its case, an unknown one by its number.
        XCTAssertEqual(Event(type: .threadStart, time: 0, tid: 1, arg: 1, a: 7).fieldsDescription, "kind=worker creator=7")
        XCTAssertEqual(Event(type: .threadStart, time: 0, tid: 1, arg: 9, a: 7).fieldsDescription, "kind=9 creator=7")
        XCTAssertEqual(Event(type: .deadlock, time: 0, tid: 1, arg: 2, a: 1, b: 2).fieldsDescription, "kind=apply queue=0x1 held=0x2")
    }

    /// The generated value enums convert from and to their raw values by arithmetic (cases
    /// numbered in order): each case comes back from its value, any other value is nil.
    func testValueEnumsConvertEveryRawValueBothWays() {
        checkRawValues(ThreadStartKind.self); checkRawValues(QueueInfoKind.self)
        checkRawValues(SourceHandlerKind.self); checkRawValues(DeadlockKind.self)
        checkRawValues(ContinuationStep.self); checkRawValues(SiteCodeKind.self)
        checkRawValues(ItemKind.self); checkRawValues(OnceOutcome.self)
        checkRawValues(SourceType.self); checkRawValues(SnapshotReason.self)
        XCTAssertEqual(ItemKind(rawValue: 3), .barrierAsync)
        XCTAssertNil(ItemKind(rawValue: 11))
    }

    private func checkRawValues<Value: CaseIterable & RawRepresentable & Equatable>(_ type: Value.Type)
        where Value.RawValue: FixedWidthInteger {
        let values = Set(Value.allCases.map(\.rawValue))
        XCTAssertEqual(values.count, Value.allCases.count, "\(type): two cases share a value")
        for value in Value.allCases { XCTAssertEqual(Value(rawValue: value.rawValue), value, "\(type).\(value)") }
        let highest = values.max() ?? 0
        for raw in Array(0...highest + 2) + [Value.RawValue.max, highest << 8] where !values.contains(raw) {
            XCTAssertNil(Value(rawValue: raw), "\(type)(rawValue: \(raw))")
        }
    }

    /// A record type the dump has no formatter for still shows every word under its list name.
    func testDumpNamesTheWordsOfEveryType() {
        for type in EventType.allCases {
            let event = Event(type: type, time: 0, tid: 1, a: 0xA, b: 0xB, c: 0xC, d: 0xD, string: type.hasString ? "s" : nil)
            XCTAssertEqual(type.payloadWordNames.count, type.payloadWordCount, "\(type)")
            if type == .setTarget { XCTAssertEqual(event.fieldsDescription, "object=0xa target=0xb") }
        }
    }

    /// Every type with the 1.4 site word keeps it through the writer and the reader, wherever
    /// its payload words end (the decoder has a case for each layout the list allows), and
    /// reads as no site when the record stops before it.
    func testEveryTypeWithASiteWordRoundTripsIt() throws {
        let directory = try temporaryDirectory(self)
        let types = EventType.allCases.filter(\.hasOptionalSiteWord)
        XCTAssertGreaterThanOrEqual(types.count, 6)
        var events: [Event] = []
        for (index, type) in types.enumerated() {
            var withSite = sampleEvent(type, time: UInt64(index) * 2000 + 1, tid: 100)
            switch type.payloadWordCount {
            case 0: withSite.a = 77
            case 1: withSite.b = 77
            case 2: withSite.c = 77
            default: withSite.d = 77
            }
            events += [withSite, sampleEvent(type, time: UInt64(index) * 2000 + 2, tid: 100)]
        }
        let read = try TraceFile(path: writeTrace(events, in: directory, chunkSize: 65536)).readAllEvents()
        XCTAssertEqual(read, events)
        XCTAssertEqual(read.map(\.siteID), events.indices.map { $0 % 2 == 0 ? 77 : nil })
    }

    /// Lines the generator would misread stop the build with the file, the line and why.
    func testGeneratorRefusesWhatItDoesNotUnderstand() throws {
        let header = try Schema.text(Schema.headerPath)
        let cases: [(from: String, to: String, message: String)] = [
            ("QT_RECORD(SUSPEND, suspend, 13,", "QT_RECORD(SUSPEND, suspend, 12,", "SUSPEND: number 12 is used twice"),
            ("\"id,queue,extra\"", "\"id,queue\"", "ENQUEUE: 3 payload words but 2 word names"),
            ("QT_VALUE(QT_EF_FUNCTION, function, 1 << 2)", "QT_VALUE(QT_EF_FUNCTION, function, 3)", "an option must be one bit"),
            ("QT_VALUE(QT_KIND_AFTER, after, 5)", "QT_VALUE(QT_KIND_AFTER, after, 5 + 0)", "must be a decimal, 0x hex or 1 << N"),
            ("QT_VALUE(QT_KIND_AFTER, after, 5)", "QT_VALUE(QT_KIND_AFTER, after, 0x1_0000_0000)", "must be a decimal"),
            ("QT_VALUE(QT_CODE_JOB, job, 4)", "QT_VALUE(QT_CODE_JOB, job, 256)", "does not fit SiteCodeKind's UInt8"),
            ("    QT_VALUE_SET(QT_ONCE_LIST, OnceOutcome, UInt32, QT_ENUM) \\\n", "",
             "QT_ONCE_LIST is in no QT_VALUE_SET entry"),
            ("QT_RECORD(MARK, mark, 70, 0, \"\", QT_NO_SITE, QT_STRING)", "QT_RECORD(MARK, mark, 70, 0, \"\", QT_OPT_SITE, QT_STRING)",
             "a record with a string has no site word"),
            ("#endif", "int stray;\n#endif", "not a comment, a preprocessor line or an enum expansion: int stray;"),
        ]
        let directory = try temporaryDirectory(self)
        for (from, to, message) in cases {
            XCTAssertTrue(header.contains(from), "the header no longer has \(from)")
            let path = directory + "/qtrace_records.h"
            try header.replacingOccurrences(of: from, with: to).write(toFile: path, atomically: true, encoding: .utf8)
            let (status, output) = try runGenerator(path, output: directory + "/out.swift")
            XCTAssertNotEqual(status, 0, "accepted: \(to)")
            XCTAssertTrue(output.hasPrefix(path + ":") && output.contains(": error: ") && output.contains(message),
                          "for \(to): \(output)")
            XCTAssertEqual(output.split(separator: "\n").count, 1, "not one line: \(output)")
        }
        let (status, output) = try runGenerator(Schema.packageRoot.appendingPathComponent(Schema.headerPath).path,
                                                output: directory + "/out.swift")
        XCTAssertEqual(status, 0, output)
    }

    /// The generator as the plugin runs it (SwiftPM builds it beside the test bundle).
    private func runGenerator(_ list: String, output: String) throws -> (status: Int32, output: String) {
        let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        guard let tool = ["qtrace-generate-schema-tool", "qtrace-generate-schema"].map({ products.appendingPathComponent($0) })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            XCTFail("qtrace-generate-schema is not in \(products.path)")
            return (0, "")
        }
        let process = Process()
        process.executableURL = tool
        process.arguments = ["--declarations", list, output]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
