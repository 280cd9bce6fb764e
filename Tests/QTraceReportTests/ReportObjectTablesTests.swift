// The per-object data as payload tables (docs/report-data.md, "Object tables"): stats rows,
// groups, derived backlogs and the strings table decode back to what the input held.
import Foundation
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel
import QTraceReportTestSupport

final class ReportObjectTablesTests: XCTestCase {
    func testStatsTablesRoundTripWithTextNumbersAndGaps() throws {
        var input = ReportInput(meta: ReportMeta(title: "stats", durationNs: 1_000))
        input.queues = [ReportQueue(index: 0, label: "q", kind: .serial), ReportQueue(index: 1, label: "r", kind: .serial)]
        let columns = [ReportColumn(key: "label", title: "Label"), ReportColumn(key: "items", title: "Items", unit: "count"),
                       ReportColumn(key: "share", title: "Share", unit: "%"), ReportColumn(key: "note", title: "Note")]
        input.stats = [ReportTable(id: "queues", title: "Queues", rowObject: .queue, columns: columns, rows: [
            ReportRow(values: [.text("q ✓ 𝄞"), .number(12), .number(0.125), .missing], objectIndex: 0),
            ReportRow(values: [.text(""), .missing, .number(Double.nan), .text("r")], objectIndex: 1),
            ReportRow(values: [.text("q ✓ 𝄞"), .number(-3), .number(1e300), .text("")], objectIndex: -1),
        ])]
        HandBuiltInput.setAnalysisFigures(&input)
        let report = try WrittenReport(try ReportWriter.html(input))
        let rows = try report.statsRows("queues")
        XCTAssertEqual(rows.map(\.object), [0, 1, -1])
        XCTAssertEqual(rows.map { $0.values[0] as? String }, ["q ✓ 𝄞", "", "q ✓ 𝄞"])
        XCTAssertEqual(rows.map { $0.values[1] as? Double }, [12, nil, -3])
        XCTAssertTrue(rows[1].values[1] is NSNull)
        // Not integral: stored as doubles, NaN (JSON's null) missing.
        XCTAssertEqual(rows.map { $0.values[2] as? Double }, [0.125, nil, 1e300])
        XCTAssertTrue(rows[1].values[2] is NSNull)
        XCTAssertEqual(rows.map { $0.values[3] as? String }, [nil, "r", ""])
        XCTAssertTrue(rows[0].values[3] is NSNull)
    }

    func testATableMixingTextAndNumbersInAColumnKeepsItsRowsInTheHeader() throws {
        var input = ReportInput(meta: ReportMeta(title: "mixed", durationNs: 1_000))
        input.stats = [ReportTable(id: "odd", title: "Odd", columns: [ReportColumn(key: "v", title: "V")], rows: [
            ReportRow(values: [.text("a")]), ReportRow(values: [.number(2)]),
        ])]
        let report = try WrittenReport(try ReportWriter.html(input))
        let table = try XCTUnwrap((report.header["stats"] as? [[String: Any]])?.first)
        XCTAssertNil(table["table"])
        XCTAssertEqual(try report.statsRows("odd").map { "\($0.values[0])" }, ["a", "2"])
    }

    func testGroupsAndDerivedBacklogsAreTables() throws {
        let input = SyntheticReport.make(items: 2_000, threads: 4, queues: 12, seed: 7)
        let report = try WrittenReport(try ReportWriter.html(input))
        let groups = try report.objects("groups")
        XCTAssertEqual(groups.count, input.groups.count)
        for (row, g) in zip(groups, input.groups) {
            XCTAssertEqual(row["label"] as? String, g.label)
            XCTAssertEqual(row["firstEnter"] as? Double, Double(g.firstEnterNs))
            XCTAssertEqual(row["notify"] as? Double, Double(g.notifyNs))
            XCTAssertEqual(row["leaves"] as? Double, Double(g.leaves))
        }
        // A backlog the viewer can derive from the items is a table row; one it cannot (the
        // `after` items and notifies of the main and global queues join it when due, not when
        // enqueued) is written in the header. Each queue's once, none lost.
        let backlogs = input.counters.filter { $0.kind == .backlog }.map { Int64($0.queueIndex) }
        let derived = try report.column("derivedBacklogs", "queue")
        let counters = try XCTUnwrap(report.header["counters"] as? [[String: Any]])
        let written = counters.filter { $0["kind"] as? String == "backlog" }.compactMap { ($0["queue"] as? Int).map(Int64.init) }
        XCTAssertFalse(derived.isEmpty)
        XCTAssertFalse(written.isEmpty)
        XCTAssertEqual((derived + written).sorted(), backlogs.sorted())
    }

    func testTheStringsTableKeepsEveryStringWhole() throws {
        var input = ReportInput(meta: ReportMeta(title: "strings", durationNs: 1_000))
        let labels = ["\u{FEFF}first", "", "plain", "é", "日本語", "😀 emoji", "a\u{0}b", "</script><script>alert(1)</script>", "\u{2028}"]
        input.queues = labels.enumerated().map { ReportQueue(index: $0.offset, label: $0.element, kind: .serial) }
        HandBuiltInput.setAnalysisFigures(&input)
        let report = try WrittenReport(try ReportWriter.html(input))
        XCTAssertEqual(try report.objects("queues").map { $0["label"] as? String }, labels)
        XCTAssertFalse(report.html.contains("</script><script>alert"))
    }
}
