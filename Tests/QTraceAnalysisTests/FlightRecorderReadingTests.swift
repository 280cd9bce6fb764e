// Reading a flight-recorder ring (docs/flight-recorder.md): reused chunks are out of file
// order and are read in claim order; the metadata stream (tid -2) names queues but is no
// thread. The file is a normal trace made a ring by hand: ring flag, claim_seq, chunks
// reversed in the file.
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceText
import XCTest
import QTraceAnalysisTestSupport

final class FlightRecorderReadingTests: XCTestCase {
    let queue: UInt64 = 0x10

    /// A trace of 1000 items on one thread in 4 KiB chunks (about 14), its queue created in
    /// the metadata stream; as bytes.
    func writtenTrace() throws -> [UInt8] {
        let path = NSTemporaryDirectory() + "ring-reading-\(getpid()).qtrace"
        defer { unlink(path) }
        let writer = try TraceWriter(path: path, mainTid: 7, chunkSize: 4096)
        try writer.append(Event(type: .queueCreate, time: 1, tid: TraceLayout.metadataStreamTid, arg: 1, a: queue, string: "com.example.ring"))
        for i in 0..<1000 as Range<UInt64> {
            let t = 10 + 30 * i
            try writer.append(Event(type: .enqueue, time: t, tid: 7, arg: 1, a: 100 + i, b: queue))
            try writer.append(Event(type: .start, time: t + 10, tid: 7, arg: 1, a: 100 + i))
            try writer.append(Event(type: .end, time: t + 20, tid: 7, a: 100 + i))
        }
        try writer.finish()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Sets claim_seq to the file order, then reverses the chunks in the file.
    func asRing(_ bytes: [UInt8], flag: Bool) -> [UInt8] {
        var out = bytes
        let header = TraceLayout.headerSize, size = 4096
        let chunks = (bytes.count - header) / size
        for i in 0..<chunks {
            let from = header + (chunks - 1 - i) * size, to = header + i * size
            out.replaceSubrange(to..<to + size, with: bytes[from..<from + size])
            let seq = UInt64(chunks - i).littleEndian
            withUnsafeBytes(of: seq) { out.replaceSubrange(to + 48..<to + 56, with: $0) }
        }
        if flag { out[104] |= 1 << 5 }
        return out
    }

    func testRingChunksAreReadInClaimOrderAndMetadataIsNoThread() throws {
        let bytes = try writtenTrace()
        XCTAssertGreaterThan((bytes.count - TraceLayout.headerSize) / 4096, 12, "the test needs many chunks")
        let trace = try TraceFile(contentsOf: asRing(bytes, flag: true))
        XCTAssertEqual(trace.threads.map(\.tid), [7], "one thread; the metadata stream is none")
        XCTAssertEqual(trace.threads.first?.chunkCount, (bytes.count - TraceLayout.headerSize) / 4096 - 1)
        let model = Analysis.buildModel(file: trace)
        let ring = try XCTUnwrap(model.queues.firstIndex { $0.label == "com.example.ring" }, "named from the metadata stream")
        XCTAssertEqual(model.items.filter { $0.queue == ring && $0.endTime != noTime }.count, 1000)
        XCTAssertEqual(model.anomalies.outOfOrderEvents, 0)
        XCTAssertEqual(model.anomalies.startsWithoutEnqueue, 0)
        XCTAssertFalse(model.threads.contains { $0.tid == TraceLayout.metadataStreamTid })

        // Without the ring flag the same bytes are read in file order: one thread per chunk
        // (thread_seq goes down, as for a reused tid). That is what the flag changes.
        let unordered = try TraceFile(contentsOf: asRing(bytes, flag: false))
        XCTAssertGreaterThan(unordered.threads.count, 10)
    }

    /// Drops because every ring chunk was being written say so (header flags bit 7).
    func testABusyRingSaysWhyEventsWereDropped() throws {
        var bytes = asRing(try writtenTrace(), flag: true)
        bytes[104] |= 1 << 7
        withUnsafeBytes(of: UInt64(136).littleEndian) { bytes.replaceSubrange(88..<96, with: $0) }
        let info = TraceInfo(file: try TraceFile(contentsOf: bytes))
        XCTAssertEqual(info.droppedEvents, 136)
        XCTAssertTrue(info.dropReason?.contains("every chunk of the flight-recorder ring in use") ?? false, "\(String(describing: info.dropReason))")
    }
}

final class SnapshotDurationTests: XCTestCase {
    /// A snapshot that lost its start prints its window's length as the duration, not the run's.
    func testStatsOfASnapshotPrintTheWindowsDuration() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.item(1, on: mainQueueAddress, at: ms(2000), runOn: 201, start: ms(2000), end: ms(2001))
        s.info.flightRecorder = FlightRecorderWindow(ringBytes: 1 << 20, snapshot: 1, completeFromNs: ms(1500),
                                                     endNs: ms(2000), overwrittenEvents: 10)
        let text = StatsText.render(s.analysis(), tracePath: nil)
        XCTAssertTrue(text.contains("duration   500 ms (the window),"), text)
        s.info.flightRecorder?.overwrittenEvents = 0  // nothing lost: the whole run
        XCTAssertFalse(StatsText.render(s.analysis(), tracePath: nil).contains("(the window)"))
    }
}
