// The Perfetto export's lanes: the heap-based assignment against the lane search it replaced,
// on synthetic spans, many never ending (the case that was quadratic), and the overflow track
// of an exported thread with more open intervals than lanes.
import Foundation
import XCTest
@testable import QTraceExport
import QTraceViewModel
import QTraceReportTestSupport

final class PerfettoLaneTests: XCTestCase {
    func testLanesNeverOverlapAndRespectTheCap() {
        // Four spans, the first three overlapping at time 5.
        let start: [Int64] = [0, 1, 2, 10], end: [Int64] = [10, 6, 7, 12]
        XCTAssertEqual(Lanes.assign([0, 1, 2, 3], start: start, end: end, maxLanes: 8), [[0, 3], [1], [2]])
        XCTAssertEqual(Lanes.place([0, 1, 2, 3], start: start, end: end, maxLanes: 2),
                       LaneAssignment(lanes: [[0, 3], [1]], overflow: [2]))
    }

    func testAssignmentIsTheLaneSearchsOnRandomSpans() {
        var random = SplitMix(seed: 24)
        for round in 0..<40 {
            let (spans, start, end) = randomSpans(count: 50 + round * 40, &random)
            for cap in [1, 3, 32, Int.max] {
                let placed = Lanes.place(spans, start: start, end: end, maxLanes: cap)
                XCTAssertEqual(placed, searchedLanes(spans, start: start, end: end, maxLanes: cap), "round \(round), cap \(cap)")
                assertWellFormed(placed, spans: spans, start: start, end: end, cap: cap)
            }
        }
    }

    func testCutEndsNeverOverlapAndNeverGrow() {
        var random = SplitMix(seed: 7)
        let (spans, start, end) = randomSpans(count: 2000, &random)
        let cut = Lanes.cutEnds(spans, start: start, end: end)
        for (k, row) in spans.enumerated() {
            let i = Int(row)
            XCTAssertTrue(start[i] <= cut[k] && cut[k] <= end[i])
            if k + 1 < spans.count { XCTAssertLessThanOrEqual(cut[k], start[Int(spans[k + 1])]) }
        }
    }

    func testOpenIntervalsBeyondTheCapShareOneOverflowTrack() throws {
        var input = SyntheticReport.make(items: 200, threads: 2, queues: 2, seed: 3)
        let open = 100, end = input.meta.durationNs
        input.annotations.intervals = (0..<open).map {
            ReportInterval(startNs: Int64($0) * 10, endNs: end, thread: 0, name: "open \($0)")
        }
        guard let decoded = try exportAndDecode(input) else { throw XCTSkip("perfetto-decode.py failed (is the perfetto package installed?)") }
        let tracks = try XCTUnwrap(decoded["tracks"] as? [[String: Any]])
        let intervalTracks = tracks.filter { ($0["name"] as? String)?.hasPrefix("intervals") == true }
        XCTAssertEqual(intervalTracks.count, PerfettoExporter.maxSpanLanes + 1)
        let overflowName = "intervals (overflow: \(open - PerfettoExporter.maxSpanLanes) more beyond 32 lanes, cut at the next start)"
        let overflow = try XCTUnwrap(intervalTracks.first { $0["name"] as? String == overflowName }?["uuid"] as? Int)
        let uuids = Set(intervalTracks.compactMap { $0["uuid"] as? Int })
        let slices = try XCTUnwrap(decoded["slices"] as? [[String: Any]])
        XCTAssertEqual(slices.filter { uuids.contains($0["track"] as? Int ?? -1) }.count, open, "every interval is a slice")
        XCTAssertEqual(slices.filter { $0["track"] as? Int == overflow }.count, open - PerfettoExporter.maxSpanLanes)
    }

    // MARK: Support

    /// Spans sorted by start; a quarter never end (they run to a far end, as open intervals do).
    private func randomSpans(count: Int, _ random: inout SplitMix) -> ([Int32], [Int64], [Int64]) {
        var start: [Int64] = [], end: [Int64] = []
        var now: Int64 = 0
        for _ in 0..<count {
            now += Int64(random.next() % 5)
            start.append(now)
            end.append(random.next() % 4 == 0 ? 1 << 40 : now + Int64(random.next() % 40))
        }
        return ((0..<Int32(count)).map { $0 }, start, end)
    }

    /// The assignment as the export did it before: search every lane for the first free one.
    private func searchedLanes(_ spans: [Int32], start: [Int64], end: [Int64], maxLanes: Int) -> LaneAssignment {
        var result = LaneAssignment(lanes: [], overflow: [])
        var laneEnd: [Int64] = []
        for row in spans {
            if let k = laneEnd.firstIndex(where: { $0 <= start[Int(row)] }) {
                result.lanes[k].append(row)
                laneEnd[k] = end[Int(row)]
            } else if result.lanes.count < maxLanes {
                result.lanes.append([row])
                laneEnd.append(end[Int(row)])
            } else {
                result.overflow.append(row)
            }
        }
        return result
    }

    /// Every span once; none overlapping on a lane; at most `cap` lanes; a span overflows only
    /// when every lane was busy at its start.
    private func assertWellFormed(_ placed: LaneAssignment, spans: [Int32], start: [Int64], end: [Int64], cap: Int,
                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual((placed.lanes.flatMap { $0 } + placed.overflow).sorted(), spans, file: file, line: line)
        XCTAssertLessThanOrEqual(placed.lanes.count, cap, file: file, line: line)
        for lane in placed.lanes {
            for (a, b) in zip(lane, lane.dropFirst()) where end[Int(a)] > start[Int(b)] {
                XCTFail("spans \(a) and \(b) overlap on a lane", file: file, line: line)
            }
        }
        for row in placed.overflow {
            let busy = placed.lanes.filter { lane in
                lane.contains { $0 < row && end[Int($0)] > start[Int(row)] }
            }
            XCTAssertEqual(busy.count, placed.lanes.count, "span \(row) overflowed beside a free lane", file: file, line: line)
        }
    }

    private func exportAndDecode(_ input: ReportInput) throws -> [String: Any]? {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-lanes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("lanes.pftrace").path
        _ = try TraceExport.perfetto(input, to: path)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/perfetto-decode.py").path
        let decode = Process()
        decode.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        decode.arguments = ["python3", script, path]
        let pipe = Pipe()
        decode.standardOutput = pipe
        try decode.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        decode.waitUntilExit()
        guard decode.terminationStatus == 0 else { return nil }
        return try JSONSerialization.jsonObject(with: output) as? [String: Any]
    }
}

/// A small deterministic generator (the tests need the same spans on every run).
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
