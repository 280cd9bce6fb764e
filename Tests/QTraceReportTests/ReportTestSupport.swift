// Helpers for the report tests: take a written report apart again.
import Foundation
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel

/// The parts of a written HTML report.
struct WrittenReport {
    let html: String
    let headerText: String
    let header: [String: Any]
    let payload: [UInt8]

    init(_ html: String) throws {
        self.html = html
        headerText = try XCTUnwrap(WrittenReport.element(html, open: "<script type=\"application/json\" id=\"qtrace-header\">"))
        let wrapper = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(headerText.utf8)) as? [String: Any])
        header = try XCTUnwrap(wrapper["header"] as? [String: Any])
        let info = try XCTUnwrap(wrapper["payload"] as? [String: Any])
        let base64 = try XCTUnwrap(WrittenReport.element(html, open: "<script type=\"application/octet-stream\" id=\"qtrace-data\">"))
        let compressed = try XCTUnwrap(Data(base64Encoded: base64))
        payload = try Zlib.decompress([UInt8](compressed), expectedSize: try XCTUnwrap(info["rawBytes"] as? Int))
    }

    static func element(_ html: String, open: String) -> String? {
        guard let start = html.range(of: open), let end = html.range(of: "</script>", range: start.upperBound..<html.endIndex)
        else { return nil }
        return String(html[start.upperBound..<end.lowerBound])
    }

    /// The viewer's inline script (the last <script> element).
    var inlineScript: String? {
        guard let open = html.range(of: "<script>", options: .backwards),
              let close = html.range(of: "</script>", range: open.upperBound..<html.endIndex) else { return nil }
        return String(html[open.upperBound..<close.lowerBound])
    }

    var inlineStyle: String? {
        guard let open = html.range(of: "<style>"), let close = html.range(of: "</style>") else { return nil }
        return String(html[open.upperBound..<close.lowerBound])
    }

    var contentSecurityPolicy: String? {
        guard let start = html.range(of: "http-equiv=\"Content-Security-Policy\" content=\""),
              let end = html.range(of: "\"", range: start.upperBound..<html.endIndex) else { return nil }
        return String(html[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&#39;", with: "'")
    }

    /// A decoded column of a table, as integers (f64 columns truncated).
    func column(_ table: String, _ name: String) throws -> [Int64] {
        let tables = try XCTUnwrap(header["tables"] as? [String: Any])
        let t = try XCTUnwrap(tables[table] as? [String: Any], "no table \(table)")
        let rows = try XCTUnwrap(t["rows"] as? Int)
        let columns = try XCTUnwrap(t["columns"] as? [String: Any])
        let c = try XCTUnwrap(columns[name] as? [String: Any], "no column \(table).\(name)")
        let offset = try XCTUnwrap(c["offset"] as? Int), length = try XCTUnwrap(c["length"] as? Int)
        let encoding = try XCTUnwrap(ColumnEncoding(rawValue: try XCTUnwrap(c["enc"] as? String)))
        let keys = try (c["key"] as? String).map { try column(table, $0) } ?? []
        return ColumnDecoder.decode(payload[offset..<(offset + length)], encoding: encoding, rows: rows,
                                    width: c["width"] as? Int ?? 0, keys: keys)
    }

    /// The report's string table (the `strings` payload table).
    func strings() throws -> [String] {
        let (rows, c) = try columnInfo("strings", "value")
        let offset = try XCTUnwrap(c["offset"] as? Int), length = try XCTUnwrap(c["length"] as? Int)
        return ColumnDecoder.decodeText(payload[offset..<(offset + length)], rows: rows)
    }

    /// A payload table's rows as dictionaries: strings for `str` columns (NSNull for none),
    /// Doubles for `f64` and `nullable` ones (NSNull for missing), Ints otherwise.
    func objects(_ table: String) throws -> [[String: Any]] {
        let tables = try XCTUnwrap(header["tables"] as? [String: Any])
        let t = try XCTUnwrap(tables[table] as? [String: Any], "no table \(table)")
        let rows = try XCTUnwrap(t["rows"] as? Int)
        var out = [[String: Any]](repeating: [:], count: rows)
        let strings = try strings()
        for name in try XCTUnwrap(t["columns"] as? [String: Any]).keys {
            let (_, c) = try columnInfo(table, name)
            if c["enc"] as? String == "f64" {
                let offset = try XCTUnwrap(c["offset"] as? Int)
                let doubles = ColumnDecoder.decodeDoubles(payload[offset...], rows: rows)
                for row in 0..<rows { out[row][name] = doubles[row].isNaN ? NSNull() : doubles[row] }
                continue
            }
            let values = try column(table, name)
            for row in 0..<rows {
                out[row][name] = try Self.cell(values[row], column: c, strings: strings)
            }
        }
        return out
    }

    private static func cell(_ v: Int64, column c: [String: Any], strings: [String]) throws -> Any {
        switch (c["type"] as? String, c["enc"] as? String) {
        case ("str", _): return v >= 0 ? strings[Int(v)] : NSNull()
        case (_, "nullable"): return v == Int64.min ? NSNull() : Double(v)
        case ("f64", _): return Double(v)   // a varint column decoded into doubles
        default: return Int(v)
        }
    }

    /// A stats table's rows (object, values) however they are stored (header rows or a payload table).
    func statsRows(_ id: String) throws -> [(object: Int, values: [Any])] {
        let stats = try XCTUnwrap(header["stats"] as? [[String: Any]])
        let table = try XCTUnwrap(stats.first { $0["id"] as? String == id }, "no stats table \(id)")
        if let rows = table["rows"] as? [[String: Any]] {
            return rows.map { ($0["object"] as? Int ?? -1, $0["values"] as? [Any] ?? []) }
        }
        let columns = try XCTUnwrap(table["columns"] as? [Any]).count
        let objects = try self.objects(try XCTUnwrap(table["table"] as? String))
        return objects.map { row in (row["object"] as? Int ?? -1, (0..<columns).map { row["c\($0)"] ?? NSNull() }) }
    }

    private func columnInfo(_ table: String, _ name: String) throws -> (rows: Int, column: [String: Any]) {
        let tables = try XCTUnwrap(header["tables"] as? [String: Any])
        let t = try XCTUnwrap(tables[table] as? [String: Any], "no table \(table)")
        let columns = try XCTUnwrap(t["columns"] as? [String: Any])
        return (try XCTUnwrap(t["rows"] as? Int), try XCTUnwrap(columns[name] as? [String: Any], "no column \(table).\(name)"))
    }

    func hasColumn(_ table: String, _ name: String) -> Bool {
        let tables = header["tables"] as? [String: Any]
        let columns = (tables?[table] as? [String: Any])?["columns"] as? [String: Any]
        return columns?[name] != nil
    }
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-report-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The package root (Tests/QTraceReportTests/ is two levels below it).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
