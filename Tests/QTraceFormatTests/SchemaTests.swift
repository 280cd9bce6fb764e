// The record schema has one source, Sources/CQTraceShim/qtrace_records.h: the shim's C enum and
// the Swift declarations (EventType, the record layouts, TraceLayout's compact types) are
// generated from it. These tests read that header with a parser of their own (a second
// reading of the list beside the generator's) and fail when the Swift reader, `qtrace dump`'s
// field names or the record tables of docs/trace-format.md say anything else about a record
// type.
import Foundation
import XCTest
@testable import QTraceFormat

/// One QT_RECORD(...) entry of the header.
struct SchemaRecord {
    let name: String
    let swiftName: String
    let number: Int
    let words: Int
    let wordNames: [String]
    let hasOptionalSite: Bool
    let hasString: Bool
}

enum Schema {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let headerPath = "Sources/CQTraceShim/qtrace_records.h"
    static let specPath = "docs/trace-format.md"

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The header's records, in list order.
    static func records() throws -> [SchemaRecord] {
        let entry = #/QT_RECORD\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*"([^"]*)"\s*,\s*(QT_\w+)\s*,\s*(QT_\w+)\s*\)/#
        return try text(headerPath).matches(of: entry).map { match in
            let (_, name, swiftName, number, words, wordNames, site, string) = match.output
            return SchemaRecord(
                name: String(name), swiftName: String(swiftName), number: Int(number)!, words: Int(words)!,
                wordNames: wordNames.isEmpty ? [] : wordNames.split(separator: ",").map(String.init),
                hasOptionalSite: site == "QT_OPT_SITE", hasString: string == "QT_STRING")
        }
    }

    /// The compact item records, which decode to their full form's EventType.
    static let compactTypes: [String: UInt8] = [
        "ENQUEUE_C": TraceLayout.compactEnqueueType, "START_C": TraceLayout.compactStartType,
        "END_C": TraceLayout.compactEndType, "ENQUEUE_CS": TraceLayout.compactSiteEnqueueType,
        "ENQUEUE_F": TraceLayout.slotlessEnqueueType, "START_F": TraceLayout.slotlessStartType,
        "END_F": TraceLayout.slotlessEndType,
    ]
}

final class SchemaTests: XCTestCase {
    func testHeaderListsEveryRecordOnceWithItsWordNames() throws {
        let records = try Schema.records()
        XCTAssertGreaterThanOrEqual(records.count, 50, "parsed too few QT_RECORD entries from \(Schema.headerPath)")
        XCTAssertEqual(Set(records.map(\.number)).count, records.count, "a record number is used twice")
        XCTAssertEqual(Set(records.map(\.name)).count, records.count, "a record name is used twice")
        for record in records {
            XCTAssertEqual(record.wordNames.count, record.words, "\(record.name): word names do not match the word count")
        }
    }

    func testSwiftEventTypesMatchTheHeader() throws {
        let records = try Schema.records()
        for record in records where Schema.compactTypes[record.name] == nil {
            guard let type = EventType(name: record.name) else {
                XCTFail("\(record.name) (\(record.number)) has no EventType"); continue
            }
            XCTAssertEqual(Int(type.rawValue), record.number, "\(record.name): number")
            XCTAssertEqual(String(describing: type), record.swiftName, "\(record.name): Swift name")
            XCTAssertEqual(type.payloadWordNames, record.wordNames, "\(record.name): word names")
            assertLayout(RecordLayout(type), matches: record)
        }
        let named = Set(records.map(\.name))
        for type in EventType.allCases {
            XCTAssertTrue(named.contains(type.name.uppercased()), "EventType.\(type) is not in \(Schema.headerPath)")
        }
    }

    func testCompactRecordsMatchTheHeader() throws {
        let records = try Schema.records()
        for (name, number) in Schema.compactTypes {
            guard let record = records.first(where: { $0.name == name }) else {
                XCTFail("\(name) is not in \(Schema.headerPath)"); continue
            }
            XCTAssertEqual(record.number, Int(number), "\(name): number")
            guard let layout = RecordLayout.table[Int(number)] else { XCTFail("\(name): no RecordLayout"); continue }
            XCTAssertNotNil(layout.compact, "\(name): not read as a compact record")
            assertLayout(layout, matches: record)
        }
    }

    /// Every type the reader decodes is in the header: nothing is known to Swift alone.
    func testReaderKnowsNoOtherTypes() throws {
        let numbers = Set(try Schema.records().map(\.number))
        for (number, layout) in RecordLayout.table.enumerated() where layout != nil {
            XCTAssertTrue(numbers.contains(number), "the reader decodes type \(number), which the header lacks")
        }
    }

    /// The dump names each payload word as the header does (decoded event words a...d).
    func testDumpFieldNamesAreTheHeaderWordNames() throws {
        // Words the dump leaves out: IO_CREATE's cleanup id (shown on IO_CLEANUP_BEGIN/END).
        let notDumped: Set<String> = ["IO_CREATE.cleanup"]
        // Words the dump labels otherwise: SCHED_STATE's other thread reads "by" (the thread
        // that took the CPU or woke it).
        let dumpLabel: [String: String] = ["SCHED_STATE.other": "by"]
        for record in try Schema.records() where Schema.compactTypes[record.name] == nil {
            guard let type = EventType(name: record.name) else { continue }
            let words: [UInt64] = [0x1111, 0x2222, 0x3333, 0x4444]
            let event = Event(type: type, time: 0, tid: 1, a: words[0], b: words[1], c: words[2], d: words[3],
                              string: record.hasString ? "s" : nil)
            let fields = event.fieldsDescription
            for word in record.wordNames where !notDumped.contains("\(record.name).\(word)") {
                let label = dumpLabel["\(record.name).\(word)"] ?? word
                XCTAssertTrue(fields.contains("\(label)="), "\(record.name): dump lacks \(label)= in \(fields)")
            }
        }
    }

    /// docs/trace-format.md has a table row for every record type, with the header's name, and
    /// its payload column agrees on the words, the string and the [1.4] site.
    func testSpecTablesMatchTheHeader() throws {
        let rows = try SpecTables.rows(try Schema.text(Schema.specPath))
        let records = try Schema.records()
        for record in records {
            guard let row = rows[record.number] else { XCTFail("\(Schema.specPath) has no row for type \(record.number)"); continue }
            XCTAssertEqual(row.name, record.name, "type \(record.number): name in \(Schema.specPath)")
            SpecTables.assertPayload(row, matches: record)
        }
        let numbers = Set(records.map(\.number))
        for number in rows.keys where !numbers.contains(number) {
            XCTFail("\(Schema.specPath) documents type \(number), which the header lacks")
        }
    }

    private func assertLayout(_ layout: RecordLayout, matches record: SchemaRecord,
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(layout.words, record.words, "\(record.name): payload words", file: file, line: line)
        XCTAssertEqual(layout.hasString, record.hasString, "\(record.name): string", file: file, line: line)
        XCTAssertEqual(layout.hasOptionalSite, record.hasOptionalSite, "\(record.name): optional site word",
                       file: file, line: line)
    }
}

/// The record tables of docs/trace-format.md: rows `| type | NAME | ... |`.
enum SpecTables {
    struct Row {
        let name: String
        /// The payload column (4-column tables), or the compact tables' length and payload.
        let payload: String
        let length: Int?
    }

    static func rows(_ markdown: String) throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        for line in markdown.split(separator: "\n") where line.hasPrefix("| ") {
            // `\|` inside a cell is a literal bar, not a column break.
            let cells = line.replacingOccurrences(of: "\\|", with: "¦").split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5, let number = Int(cells[1]), cells[2].allSatisfy({ $0.isUppercase || $0 == "_" })
            else { continue }
            let compact = cells.count == 8  // | type | name | length | word 0 | payload | decodes to |
            rows[number] = Row(name: cells[2], payload: compact ? cells[5] : cells[4],
                               length: compact ? Int(cells[3]) : nil)
        }
        return rows
    }

    static func assertPayload(_ row: Row, matches record: SchemaRecord) {
        let where_ = "\(Schema.specPath), type \(record.number) \(record.name)"
        if let length = row.length {
            XCTAssertEqual(length, 16 + 8 * record.words, "\(where_): length")
            return
        }
        let site = row.payload.contains("[1.4] u64 site")
        let words = row.payload.matches(of: #/\b[ui]64\b/#).count - (site ? 1 : 0)
        XCTAssertEqual(words, record.words, "\(where_): payload words in \(row.payload)")
        XCTAssertEqual(site, record.hasOptionalSite, "\(where_): [1.4] site word")
        XCTAssertEqual(row.payload.contains("string"), record.hasString, "\(where_): string")
    }
}
