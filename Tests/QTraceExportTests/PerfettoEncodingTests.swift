// The Perfetto export's building blocks: the protobuf writer's wire format (lanes: PerfettoLaneTests), and
// a synthetic report with hostile labels exported and decoded with Perfetto's protos.
import Foundation
import XCTest
@testable import QTraceExport
import QTraceViewModel
import QTraceReportTestSupport

final class PerfettoEncodingTests: XCTestCase {
    func testWireFormat() {
        var b = ProtoBuffer()
        b.uint(1, 150)                 // the protobuf documentation's example: 08 96 01
        b.int(2, -1)                   // int64 -1: ten bytes of varint
        b.fixed64(47, 0x0102_0304_0506_0708)
        b.string(2, "hi")
        XCTAssertEqual(b.bytes, [0x08, 0x96, 0x01, 0x10] + [UInt8](repeating: 0xFF, count: 9) + [0x01]
            + [0xF9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01] + [0x12, 0x02, 0x68, 0x69])
    }

    func testNestedMessageLongerThan127BytesMovesItsBody() {
        var b = ProtoBuffer()
        b.message(1) { inner in
            inner.message(3) { $0.string(2, String(repeating: "x", count: 200)) }
            inner.uint(4, 1)
        }
        // 1: len 208 (2-byte varint) { 3: len 203 (2 bytes) { 2: len 200 (2 bytes) xxx } 4: 1 }
        XCTAssertEqual(Array(b.bytes.prefix(9)), [0x0A, 0xD0, 0x01, 0x1A, 0xCB, 0x01, 0x12, 0xC8, 0x01])
        XCTAssertEqual(Array(b.bytes.suffix(2)), [0x20, 0x01])
        XCTAssertEqual(b.count, 3 + 208)
    }

    func testHostileLabelsAreDataAndEveryItemIsASlice() throws {
        var input = SyntheticReport.make(items: 3000, threads: 4, queues: 9, seed: 13, hostile: true)
        // --sched states for thread 0: running, runnable, sleeping, running.
        let states: [ReportSchedState] = [.running, .runnable, .sleeping, .running]
        input.sched = ReportSched(intervals: states.enumerated().map { k, state in
            ReportSchedInterval(thread: 0, startNs: Int64(k) * 1000, endNs: Int64(k + 1) * 1000, state: state)
        }, itemCpuNs: [], itemRunnableNs: [], itemSleepingNs: [])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-perfetto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("synthetic.pftrace").path
        let summary = try TraceExport.perfetto(input, to: path)
        let started = (0..<input.items.count).filter { input.items.startNs[$0] >= 0 && input.items.thread[$0] >= 0 }.count
        XCTAssertEqual(summary.itemSlices, started)

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
        guard decode.terminationStatus == 0 else { throw XCTSkip("perfetto-decode.py failed (is the perfetto package installed?)") }
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: output) as? [String: Any])
        let tracks = try XCTUnwrap(root["tracks"] as? [[String: Any]])
        let threadTracks = Set(tracks.filter { $0["kind"] as? String == "thread" }.compactMap { $0["uuid"] as? Int })
        let slices = try XCTUnwrap(root["slices"] as? [[String: Any]])
        XCTAssertEqual(slices.filter { threadTracks.contains($0["track"] as? Int ?? -1) }.count, started)
        let names = Set(tracks.compactMap { $0["name"] as? String })
        XCTAssertTrue(names.contains("queue " + SyntheticReport.hostileLabels[0]), "labels are carried as they are")
        let stateTrack = try XCTUnwrap(tracks.first { $0["name"] as? String == "state" }?["uuid"] as? Int)
        XCTAssertEqual(slices.filter { $0["track"] as? Int == stateTrack }.compactMap { $0["name"] as? String },
                       ["running", "runnable", "sleeping", "running"])
    }
}
