// The tables' CSV: RFC 4180 quoting of whatever a traced program names its queues, NULLs as
// empty fields, and no file at the destination before the table is complete.
import CZlib
import Foundation
import XCTest
@testable import QTraceExport

final class GzipCSVTests: XCTestCase {
    func gunzip(_ path: String) throws -> String {
        let file = try XCTUnwrap(gzopen(path, "rb"))
        defer { gzclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = gzread(file, &buffer, UInt32(buffer.count))
            if n <= 0 { break }
            bytes += buffer[0..<Int(n)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func testHostileTextIsQuotedAndTheFileAppearsOnlyWhenComplete() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-csv-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.csv.gz").path
        let table = try GzipCSVFile(path: path, columns: ["name", "n", "missing"])
        try table.write([.text("plain"), .int(-3), .none])
        try table.write([.text("a,b \"quoted\"\nnext line"), .int(Int64.max), .none])
        try table.write([.text("=cmd|' /C calc'!A0 <script>"), .number(nil), .ns(UInt64.max)])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing at the destination while writing")
        try table.finish()
        XCTAssertEqual(try gunzip(path), """
            name,n,missing
            plain,-3,
            "a,b ""quoted""
            next line",9223372036854775807,
            =cmd|' /C calc'!A0 <script>,,9223372036854775807

            """)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["t.csv.gz"], "no temporary left")
    }

    func testEveryTableStartsWithRunHostAndPid() {
        for (table, columns) in FleetTables.columns {
            XCTAssertEqual(Array(columns.prefix(3)), ["run", "host", "pid"], table)
            XCTAssertEqual(Set(columns).count, columns.count, "\(table): a column twice")
        }
    }
}
