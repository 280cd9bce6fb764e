// Stats tables held as columns (ReportCells): what goes in as rows comes out as rows, each
// column in the narrowest kind, and a column that mixes text and numbers is written as rows.
import Foundation
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel

final class ReportTableTests: XCTestCase {
    let columns = [ReportColumn(key: "name", title: "Name"), ReportColumn(key: "n", title: "N", unit: "count"),
                   ReportColumn(key: "mixed", title: "Mixed"), ReportColumn(key: "none", title: "None")]

    func testRowsRoundTripThroughColumnsOfTheirKind() {
        let rows = [
            ReportRow(values: [.text("a"), .number(1.5), .text("x"), .missing], objectIndex: 3),
            ReportRow(values: [.missing, .missing, .number(2)], objectIndex: -1),  // short: the rest missing
            ReportRow(values: [.text(""), .number(-0.0), .missing, .missing], objectIndex: 0),
        ]
        let table = ReportTable(id: "t", title: "T", rowObject: .queue, columns: columns, rows: rows)
        XCTAssertEqual(table.rowCount, 3)
        XCTAssertEqual(table.objects, [3, -1, 0])
        guard case .texts(let names, let noName) = table.cells[0] else { return XCTFail("\(table.cells[0])") }
        XCTAssertEqual(names, ["a", "", ""])
        XCTAssertEqual(noName, [false, true, false])
        guard case .numbers(_, let noNumber) = table.cells[1] else { return XCTFail("\(table.cells[1])") }
        XCTAssertEqual(noNumber, [false, true, false])
        guard case .mixed = table.cells[2] else { return XCTFail("\(table.cells[2])") }
        guard case .numbers(_, let all) = table.cells[3], all == [true, true, true] else { return XCTFail("\(table.cells[3])") }
        let padded = rows.map { ReportRow(values: $0.values + Array(repeating: .missing, count: 4 - $0.values.count), objectIndex: $0.objectIndex) }
        XCTAssertEqual(table.rows.map(\.values), padded.map(\.values))
        XCTAssertEqual(table.rows.map(\.objectIndex), rows.map(\.objectIndex))
    }

    /// Written, a table of text and number columns becomes a payload table; one with a mixed
    /// column keeps its rows in the header, as before the tables were columns.
    func testAMixedColumnIsWrittenAsRowsAndTheOthersAsColumns() throws {
        var encoder = ReportEncoder(ReportInput(meta: ReportMeta(title: "t", durationNs: 10)))
        let plain = ReportTable(id: "p", title: "P", columns: Array(columns[0...1]),
                                rows: [ReportRow(values: [.text("a"), .number(2)], objectIndex: 1)])
        let mixed = ReportTable(id: "m", title: "M", columns: columns,
                                rows: [ReportRow(values: [.text("a"), .number(2), .text("x")]), ReportRow(values: [.missing, .missing, .number(1)])])
        guard case .object(let p) = encoder.statsTableJSON(plain, index: 0), case .object(let m) = encoder.statsTableJSON(mixed, index: 1)
        else { return XCTFail("not objects") }
        guard case .string(let name)? = p.first(where: { $0.0 == "table" })?.1 else { return XCTFail("no payload table") }
        XCTAssertEqual(name, "stats0")
        XCTAssertNil(p.first { $0.0 == "rows" })
        XCTAssertNil(m.first { $0.0 == "table" })
        XCTAssertNotNil(m.first { $0.0 == "rows" })
    }
}
