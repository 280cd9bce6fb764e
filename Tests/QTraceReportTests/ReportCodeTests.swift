// Code identity in the report data: codes, sites and tasks in the header, the items' and
// blocked intervals' site columns, the taskJobs table, findings' sites, merged reports.
import Foundation
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel
import QTraceReportTestSupport

final class ReportCodeTests: XCTestCase {
    static let input = SyntheticReport.make(items: 4000, threads: 5, queues: 11, seed: 3)

    /// Sorted row -> input index, and its inverse.
    func order(_ report: WrittenReport, _ input: ReportInput) throws -> (order: [Int], rowOf: [Int]) {
        let order = report.hasColumn("items", "inputIndex")
            ? try report.column("items", "inputIndex").map(Int.init) : Array(0..<input.items.count)
        var rowOf = [Int](repeating: -1, count: order.count)
        for (row, i) in order.enumerated() { rowOf[i] = row }
        return (order, rowOf)
    }

    func testCodesSitesAndTasksRoundTripThroughTheHeader() throws {
        let input = Self.input
        let report = try WrittenReport(try ReportWriter.html(input))
        let codes = try XCTUnwrap(report.header["codes"] as? [[String: Any]])
        XCTAssertEqual(codes.count, input.codes.count)
        for (json, code) in zip(codes, input.codes) {
            XCTAssertEqual(json["name"] as? String, code.what.name)
            XCTAssertEqual(json["symbol"] as? String, code.what.symbol)
            XCTAssertEqual(json["file"] as? String, code.what.file)
            XCTAssertEqual(json["line"] as? Int, code.what.line)
            XCTAssertEqual(json["kind"] as? String, code.kind)
        }
        XCTAssertEqual(codes[0]["name"] as? String, "closure #1 in Loader.load()")
        let sites = try XCTUnwrap(report.header["sites"] as? [[String: Any]])
        XCTAssertEqual(sites.count, input.sites.count)
        for (json, site) in zip(sites, input.sites) {
            XCTAssertEqual(json["code"] as? Int, site.code)
            XCTAssertEqual(json["kind"] as? String, site.kind)
            if let from = site.from {
                let f = try XCTUnwrap(json["from"] as? [String: Any])
                XCTAssertEqual(f["name"] as? String, from.name)
                XCTAssertEqual(f["file"] as? String, from.file)
                XCTAssertEqual(f["line"] as? Int, from.line)
            } else {
                XCTAssertTrue(json["from"] is NSNull)
            }
        }
        let tasks = try XCTUnwrap(report.header["tasks"] as? [[String: Any]])
        XCTAssertEqual(tasks.count, input.tasks.count)
        XCTAssertGreaterThan(tasks.count, 0)
        for (json, task) in zip(tasks, input.tasks) {
            XCTAssertEqual(json["id"] as? Int, Int(task.id))
            XCTAssertEqual(json["parent"] as? Int, task.parent)
            XCTAssertEqual(json["jobs"] as? Int, task.jobs.count)
            XCTAssertEqual(json["functions"] as? [Int], task.functions)
            XCTAssertEqual(json["onMainActor"] as? Bool, task.onMainActor)
        }
    }

    func testItemAndBlockedSitesRoundTripThroughThePayload() throws {
        let input = Self.input
        let report = try WrittenReport(try ReportWriter.html(input))
        let (order, _) = try order(report, input)
        let site = try report.column("items", "site")
        XCTAssertEqual(site.count, input.items.count)
        for (row, i) in order.enumerated() { XCTAssertEqual(site[row], Int64(input.items.site[i])) }
        XCTAssertTrue(site.contains(-1), "items without a site are kept as -1")
        // Blocked intervals are sorted by start in the table.
        let blocked = input.blocked.sorted { $0.startNs < $1.startNs }
        XCTAssertEqual(try report.column("blocked", "site"), blocked.map { Int64($0.site) })
    }

    func testTaskJobsAreItemRowsInRunOrder() throws {
        let input = Self.input
        let report = try WrittenReport(try ReportWriter.html(input))
        let (_, rowOf) = try order(report, input)
        let task = try report.column("taskJobs", "task")
        let item = try report.column("taskJobs", "item")
        let expected = input.tasks.enumerated().flatMap { t, swiftTask in swiftTask.jobs.map { (Int64(t), Int64(rowOf[$0])) } }
        XCTAssertEqual(task, expected.map(\.0))
        XCTAssertEqual(item, expected.map(\.1))
    }

    func testFindingsNameTheirSites() throws {
        let input = Self.input
        let report = try WrittenReport(try ReportWriter.html(input))
        let findings = try XCTUnwrap(report.header["findings"] as? [[String: Any]])
        XCTAssertEqual(findings.map { $0["sites"] as? [Int] ?? [] }, input.findings.map(\.sites))
        XCTAssertTrue(input.findings.contains { !$0.sites.isEmpty })
    }

    func testCodeTableRowsNameTheirCodes() throws {
        let input = Self.input
        let table = try XCTUnwrap(input.stats.first { $0.id == "code" })
        XCTAssertEqual(table.rowObject, .code)
        let itemsColumn = try XCTUnwrap(table.columns.firstIndex { $0.key == "items" })
        for row in table.rows {
            let count = (0..<input.items.count).filter { input.items.site[$0] >= 0 && input.sites[Int(input.items.site[$0])].code == row.objectIndex }.count
            XCTAssertEqual(row.values[itemsColumn], .number(Double(count)))
        }
        let report = try WrittenReport(try ReportWriter.html(input))
        let stats = try XCTUnwrap(report.header["stats"] as? [[String: Any]])
        XCTAssertEqual(stats.first { $0["id"] as? String == "code" }?["rowObject"] as? String, "code")
    }

    func testWithoutCodeIdentityThereIsNoSiteColumnAndEmptyTables() throws {
        let input = SyntheticReport.make(items: 1000, seed: 4, codeIdentity: false)
        let report = try WrittenReport(try ReportWriter.html(input))
        XCTAssertFalse(report.hasColumn("items", "site"))
        XCTAssertFalse(report.hasColumn("blocked", "site"))
        XCTAssertFalse(report.hasColumn("taskJobs", "task"))
        XCTAssertEqual((report.header["codes"] as? [Any])?.count, 0)
        XCTAssertEqual((report.header["sites"] as? [Any])?.count, 0)
        XCTAssertEqual((report.header["tasks"] as? [Any])?.count, 0)
    }

    func testHostileSymbolsStayInertJSONStrings() throws {
        let input = SyntheticReport.make(items: 1000, seed: 9, hostile: true)
        let html = try ReportWriter.html(input)
        XCTAssertFalse(html.contains(SyntheticReport.hostileLabels[0]))
        XCTAssertFalse(html.contains(SyntheticReport.hostileLabels[1]))
        let report = try WrittenReport(html)
        let names = (report.header["codes"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        XCTAssertTrue(names.contains(SyntheticReport.hostileLabels[0]))
    }

    func testMergedReportsShiftSitesCodesAndTasks() throws {
        let a = SyntheticReport.make(items: 600, threads: 4, queues: 8, seed: 1)
        let b = SyntheticReport.make(items: 500, threads: 4, queues: 8, seed: 2)
        let merged = ReportInput.merged([a, b])
        XCTAssertEqual(merged.codes.count, a.codes.count + b.codes.count)
        XCTAssertEqual(merged.sites.count, a.sites.count + b.sites.count)
        XCTAssertEqual(merged.tasks.count, a.tasks.count + b.tasks.count)
        for i in 0..<b.items.count {
            let s = Int(b.items.site[i])
            XCTAssertEqual(Int(merged.items.site[a.items.count + i]), s < 0 ? -1 : s + a.sites.count)
        }
        for (k, site) in b.sites.enumerated() {
            XCTAssertEqual(merged.sites[a.sites.count + k].code, site.code < 0 ? -1 : site.code + a.codes.count)
        }
        for (k, task) in b.tasks.enumerated() {
            let m = merged.tasks[a.tasks.count + k]
            XCTAssertEqual(m.parent, task.parent < 0 ? -1 : task.parent + a.tasks.count)
            XCTAssertEqual(m.jobs, task.jobs.map { $0 + a.items.count })
            XCTAssertEqual(m.functions, task.functions.map { $0 + a.codes.count })
        }
        let blockedSites = merged.blocked.suffix(b.blocked.count).map(\.site)
        XCTAssertEqual(blockedSites, b.blocked.map { $0.site < 0 ? -1 : $0.site + a.sites.count })
        let code = try XCTUnwrap(merged.stats.first { $0.id == "code" })
        XCTAssertEqual(code.rows.count, (a.stats.first { $0.id == "code" }?.rows.count ?? 0) + (b.stats.first { $0.id == "code" }?.rows.count ?? 0))
        XCTAssertTrue(code.rows.suffix(b.stats.first { $0.id == "code" }!.rows.count).allSatisfy { $0.objectIndex >= a.codes.count })
        XCTAssertTrue(try WrittenReport(try ReportWriter.html(merged)).hasColumn("items", "site"))
    }
}
