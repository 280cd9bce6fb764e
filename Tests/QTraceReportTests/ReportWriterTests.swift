import Foundation
import XCTest
@testable import QTraceReport
@testable import QTraceViewModel
import QTraceReportTestSupport

final class ReportWriterTests: XCTestCase {
    static let hostile = SyntheticReport.make(items: 3000, threads: 6, queues: 10, seed: 7, hostile: true)

    func testReportHasAContentSecurityPolicyThatForbidsTheNetwork() throws {
        let report = try WrittenReport(try ReportWriter.html(SyntheticReport.make(items: 500)))
        let csp = try XCTUnwrap(report.contentSecurityPolicy)
        for directive in ["default-src 'none'", "connect-src 'none'", "img-src data: blob:", "object-src 'none'",
                          "base-uri 'none'", "form-action 'none'", "frame-src 'none'", "worker-src 'none'"] {
            XCTAssertTrue(csp.contains(directive), "CSP lacks \(directive): \(csp)")
        }
        XCTAssertFalse(csp.contains("unsafe-inline"))
        XCTAssertFalse(csp.contains("unsafe-eval"))
        // The inline script and style are allowed by their hashes, and nothing else is.
        let script = try XCTUnwrap(report.inlineScript)
        let style = try XCTUnwrap(report.inlineStyle)
        XCTAssertTrue(csp.contains("script-src '\(try cspHash(script))'"), csp)
        XCTAssertTrue(csp.contains("style-src '\(try cspHash(style))'"), csp)
        // The policy comes before anything it governs.
        let cspAt = try XCTUnwrap(report.html.range(of: "Content-Security-Policy")).lowerBound
        XCTAssertLessThan(cspAt, try XCTUnwrap(report.html.range(of: "<style>")).lowerBound)
        XCTAssertLessThan(cspAt, try XCTUnwrap(report.html.range(of: "<script")).lowerBound)
        // No reference to anything outside the file.
        for needle in ["http://", "https://", "src=\"//", "@import", "url("] {
            let outside = report.html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
            XCTAssertFalse(outside.contains(needle), "report references \(needle)")
        }
    }

    func testHostileLabelsNeverAppearRaw() throws {
        let html = try ReportWriter.html(ReportWriterTests.hostile)
        for label in SyntheticReport.hostileLabels {
            XCTAssertFalse(html.contains(label), "hostile label present raw: \(label)")
        }
        XCTAssertFalse(html.contains("<img"))
        // The label survives only in escaped form, inside the JSON data.
        XCTAssertEqual(html.components(separatedBy: "onerror=alert").count,
                       html.components(separatedBy: "\\u003cimg src=x onerror=alert(1)\\u003e").count)
        XCTAssertFalse(html.contains("<script>alert"))
        // Exactly the three script elements the writer made: header, data, viewer.
        XCTAssertEqual(html.components(separatedBy: "<script").count - 1, 3)
        XCTAssertEqual(html.components(separatedBy: "</script").count - 1, 3)
        // The title is escaped too.
        XCTAssertTrue(html.contains("<title>qtrace — synthetic &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>"))
    }

    func testEmbeddedJSONEscapesWhatCouldEndTheScriptAndKeepsTheStrings() throws {
        let report = try WrittenReport(try ReportWriter.html(ReportWriterTests.hostile))
        for forbidden in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            XCTAssertFalse(report.headerText.contains(forbidden), "header JSON contains \(forbidden.debugDescription)")
        }
        // Labels travel in the payload's strings table (inert base64), whole.
        let labels = try report.objects("queues").compactMap { $0["label"] as? String }
        XCTAssertTrue(labels.contains(SyntheticReport.hostileLabels[0]))
        XCTAssertTrue(labels.contains(SyntheticReport.hostileLabels[1]))
        XCTAssertTrue(labels.contains(SyntheticReport.hostileLabels[2]))
    }

    func testItemsRoundTripThroughThePayload() throws {
        let input = SyntheticReport.make(items: 4000, threads: 5, queues: 11, seed: 3)
        let report = try WrittenReport(try ReportWriter.html(input))
        let start = try report.column("items", "start")
        let run = try report.column("items", "run")
        let wait = try report.column("items", "wait")
        let queue = try report.column("items", "queue")
        let thread = try report.column("items", "thread")
        let kind = try report.column("items", "kind")
        let parent = try report.column("items", "parent")
        let behind = try report.column("items", "behind")
        let group = try report.column("items", "group")
        let order = report.hasColumn("items", "inputIndex")
            ? try report.column("items", "inputIndex") : (0..<Int64(input.items.count)).map { $0 }
        XCTAssertEqual(start.count, input.items.count)
        XCTAssertEqual(start, start.sorted(), "items are sorted by start")
        var rowOf = [Int](repeating: -1, count: order.count)
        for (row, i) in order.enumerated() { rowOf[Int(i)] = row }
        for (row, i64) in order.enumerated() {
            let i = Int(i64)
            let item = input.items[i]
            XCTAssertEqual(start[row], item.startNs)
            XCTAssertEqual(start[row] + run[row], item.endNs)
            XCTAssertEqual(start[row] - wait[row], item.enqueueNs)
            XCTAssertEqual(Int(queue[row]), item.queue)
            XCTAssertEqual(Int(thread[row]), item.thread)
            XCTAssertEqual(kind[row], Int64(item.kind.rawValue))
            XCTAssertEqual(parent[row], item.parent < 0 ? -1 : Int64(rowOf[item.parent]))
            XCTAssertEqual(behind[row], item.waitedBehind < 0 ? -1 : Int64(rowOf[item.waitedBehind]))
            XCTAssertEqual(Int(group[row]), item.group)
        }
    }

    func testItemsThatNeverStartedOrFinishedAreKept() throws {
        var input = ReportInput(meta: ReportMeta(title: "edge", durationNs: 10_000))
        input.threads = [ReportThread(index: 0, tid: 1, name: "main", kind: .main, startNs: 0, endNs: 10_000)]
        input.queues = [ReportQueue(index: 0, label: "q", kind: .serial)]
        input.items.append(ReportItem(queue: 0, kind: .sync, submitterThread: 0, thread: 0, enqueueNs: 100, startNs: 200, endNs: -1))
        input.items.append(ReportItem(queue: 0, kind: .async, submitterThread: 0, thread: -1, enqueueNs: 300, startNs: -1, endNs: -1,
                                      parent: 0, waitedBehind: 0))
        HandBuiltInput.setAnalysisFigures(&input)
        let report = try WrittenReport(try ReportWriter.html(input))
        XCTAssertEqual(try report.column("items", "flags"), [Int64(ItemFlags.neverFinished),
                                                            Int64(ItemFlags.neverStarted | ItemFlags.neverFinished)])
        XCTAssertEqual(try report.column("items", "start"), [200, 10_000])
        XCTAssertEqual(try report.column("items", "parent"), [-1, 0])
        XCTAssertEqual(try report.column("items", "wait"), [100, 9_700])
    }

    /// Histograms name their bounds by index (written once) and keep their non-empty span.
    func testHistogramsShareTheirBoundsAndKeepTheirNonEmptySpan() throws {
        var input = ReportInput(meta: ReportMeta(title: "h", durationNs: 1_000))
        input.queues = [ReportQueue(index: 0, label: "q", kind: .serial), ReportQueue(index: 1, label: "r", kind: .serial)]
        let bounds: [Double] = [64, 128, 256, 512, 1_024, 2_048, 4_096]
        input.histograms = [
            ReportHistogram(queueIndex: 0, metric: .wait, boundsNs: bounds, counts: [0, 0, 3, 0, 1, 0]),
            ReportHistogram(queueIndex: 1, metric: .run, boundsNs: bounds, counts: [0, 0, 0, 0, 0, 0]),
        ]
        HandBuiltInput.setAnalysisFigures(&input)
        let report = try WrittenReport(try ReportWriter.html(input))
        XCTAssertEqual(report.header["histogramBounds"] as? [[Double]], [bounds])
        let written = try report.objects("histograms")
        XCTAssertEqual(written.map { $0["queue"] as? Int }, [0, 1])
        XCTAssertEqual(written.map { $0["metric"] as? String }, ["wait", "run"])
        XCTAssertEqual(written.map { $0["bounds"] as? Int }, [0, 0])
        XCTAssertEqual(written.map { $0["first"] as? Int }, [2, 0])
        XCTAssertEqual(written.map { $0["counts"] as? Int }, [3, 0])
        XCTAssertEqual(try report.column("histogramCounts", "count"), [3, 0, 1])
    }

    func testAnEmptyInputStillMakesAReport() throws {
        let report = try WrittenReport(try ReportWriter.html(ReportInput(meta: ReportMeta(title: "empty", durationNs: 0))))
        XCTAssertEqual(try report.column("items", "start"), [])
        XCTAssertTrue(report.html.contains("id=\"timeline\""))
    }

    /// The trace's data costs at most 6 bytes per event of the trace it was analysed from
    /// (5.9 measured). The viewer (HTML, JS, CSS: what an empty report weighs) is a fixed cost,
    /// not counted: it grows with features, not events.
    func testDataIsAtMostSixBytesPerEvent() throws {
        let items = 100_000
        let (input, events) = SyntheticReport.trace(items: items, threads: 8, queues: 14, seed: 11)
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("report.html").path
        try ReportWriter.write(input, to: path)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let viewer = try ReportWriter.html(ReportInput(meta: ReportMeta(title: "", durationNs: 0))).utf8.count
        let perEvent = Double(size - viewer) / Double(events)
        XCTAssertLessThanOrEqual(perEvent, 6, "\(size - viewer) bytes of data (\(size) in all) for \(events) events")
    }

    func testLevelsOfDetailSummariseLongTracks() throws {
        let input = SyntheticReport.make(items: 60_000, threads: 4, queues: 8, seed: 5)
        let report = try WrittenReport(try ReportWriter.html(input))
        let lod = try XCTUnwrap(report.header["lod"] as? [String: Any])
        let tracks = try XCTUnwrap(lod["tracks"] as? [[String: Any]])
        let withLevels = tracks.filter { ($0["levels"] as? Int ?? 0) > 0 }
        XCTAssertFalse(withLevels.isEmpty)
        // The coarsest level never has more entries than the top level has buckets per row.
        let level = try report.column("lod", "level")
        let coverage = try report.column("lod", "coverage")
        XCTAssertTrue(coverage.allSatisfy { $0 > 0 && $0 <= 255 })
        XCTAssertGreaterThan(level.filter { $0 == 0 }.count, 0)
    }

    func testSummaryOfOneRow() throws {
        var boxes = TrackBoxes()
        boxes.append(begin: 0, end: 50, row: 0, color: 3)       // half of bucket 0
        boxes.append(begin: 100, end: 450, row: 0, color: 4)    // buckets 1..3 full, half of 4
        boxes.append(begin: 500, end: 510, row: 1, color: 5)
        let rows = try XCTUnwrap(LevelsOfDetail.summarize(boxes, bucketNs: 100))
        XCTAssertEqual(rows.map(\.count), [3, 1], "one array per row used")
        XCTAssertNotNil(LevelsOfDetail.summarize(boxes, bucketNs: 100, maxRuns: 4), "4 runs: not more than 4")
        XCTAssertNil(LevelsOfDetail.summarize(boxes, bucketNs: 100, maxRuns: 3), "4 runs: more than 3")
        let runs = rows.flatMap { $0 }
        XCTAssertEqual(runs.map(\.row), [0, 0, 0, 1])
        XCTAssertEqual(runs.map(\.bucket), [0, 1, 4, 5])
        XCTAssertEqual(runs.map(\.length), [1, 3, 1, 1])
        XCTAssertEqual(runs.map(\.color), [3, 4, 4, 5])
        XCTAssertEqual(runs[1].coverage, 255)
        XCTAssertEqual(runs[0].coverage, 8 * 17)
    }

    /// The EmbedViewer plugin embeds every viewer file, verbatim (it re-runs when viewer/ changes).
    func testEmbeddedViewerIsTheViewerDirectory() throws {
        let viewer = packageRoot.appendingPathComponent("Sources/QTraceReport/viewer")
        let names = try FileManager.default.contentsOfDirectory(atPath: viewer.path)
            .filter { [".html", ".css", ".js"].contains(where: $0.hasSuffix) }.sorted()
        XCTAssertEqual(ViewerAssets.files.map(\.name), names, "the embedded viewer is not viewer/'s files")
        for (name, contents) in ViewerAssets.files {
            let onDisk = try String(contentsOf: viewer.appendingPathComponent(name), encoding: .utf8)
            XCTAssertTrue(onDisk == contents, "viewer/\(name) differs from its embedded copy")
        }
    }

    /// `sha256-BASE64` of `text`, computed independently of the build (coreutils' sha256sum),
    /// as a browser checks the report's inline script and style against the CSP.
    func cspHash(_ text: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let hex = Array(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64))
        process.waitUntilExit()
        let bytes = stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(hex[$0...$0 + 1]), radix: 16) }
        XCTAssertEqual(bytes.count, 32)
        return "sha256-" + Data(bytes).base64EncodedString()
    }

    func testJSONEscaping() {
        XCTAssertEqual(JSONValue.quoted("</script>&\u{2028}\u{1}\"\\"), #""\u003c/script\u003e\u0026\u2028\u0001\"\\""#)
        XCTAssertEqual(JSONValue.format(0.1), "0.1")
        XCTAssertEqual(JSONValue.format(12), "12")
        XCTAssertEqual(JSONValue.format(.nan), "null")
    }

    func testCounterSeriesAreReducedWhenLong() {
        let n = 200_000
        let series = ReportCounterSeries(name: "c", kind: .backlog, queueIndex: 0,
                                         timesNs: (0..<n).map { Int64($0) * 10 }, values: (0..<n).map { Double($0 % 7) })
        let steps = CounterSteps(series, maximumPoints: 1000, traceEnd: Int64(n) * 10)
        XCTAssertLessThanOrEqual(steps.time.count, 1000)
        XCTAssertGreaterThan(steps.bucketNs, 0)
        XCTAssertEqual(steps.max.max(), 6)
        XCTAssertEqual(steps.min.min(), 0)
    }
}
