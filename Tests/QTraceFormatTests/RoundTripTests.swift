// TraceWriter -> TraceFile: every field of every record type, header, threads, chunks.
import XCTest
@testable import QTraceFormat

final class RoundTripTests: XCTestCase {
    func testEveryEventTypeRoundTripsWithAllFields() throws {
        let directory = try temporaryDirectory(self)
        var events: [Event] = []
        for (index, type) in EventType.allCases.enumerated() {
            events.append(sampleEvent(type, time: UInt64(index) * 1000 + 7, tid: 100, salt: UInt64(index)))
        }
        let trace = try TraceFile(path: writeTrace(events, in: directory, chunkSize: 65536))
        XCTAssertEqual(trace.readAllEvents(), events)
        XCTAssertEqual(trace.eventCount, events.count)
        XCTAssertEqual(trace.warnings, [])
        XCTAssertEqual(trace.unknownRecordCount, 0)
    }

    func testHeaderFieldsRoundTrip() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/h.qtrace"
        let writer = try TraceWriter(path: path, pid: 31337, ncpu: 8, mainTid: 31337, chunkSize: 8192)
        writer.header.ppid = 1
        writer.header.initRealtimeNs = 1_700_000_000_123_456_789
        writer.header.droppedEvents = 12
        writer.header.mainQueue = 0x7F00_DEAD_BEEF
        writer.header.exitStatusRaw = TraceLayout.exitStatusPresent | 139
        writer.header.shimOverheadNs = 23
        writer.header.flags = [.finalizedByRecorder]
        writer.header.executablePath = "/usr/local/bin/app"
        writer.header.commandLine = "app --flag value"
        try writer.append(Event(type: .threadStart, time: 0, tid: 31337, a: 1))
        try writer.append(Event(type: .mark, time: 2_000, tid: 31337, string: "x"))
        try writer.finish()

        let trace = try TraceFile(path: path)
        let header = trace.header
        XCTAssertEqual(header.version, "1.0")
        XCTAssertEqual(header.headerSize, 4096)
        XCTAssertEqual(header.chunkSize, 8192)
        XCTAssertEqual(header.ncpu, 8)
        XCTAssertEqual(header.pid, 31337)
        XCTAssertEqual(header.ppid, 1)
        XCTAssertEqual(header.mainTid, 31337)
        XCTAssertEqual(header.initRealtimeNs, 1_700_000_000_123_456_789)
        XCTAssertEqual(header.droppedEvents, 12)
        XCTAssertEqual(header.mainQueue, 0x7F00_DEAD_BEEF)
        XCTAssertEqual(header.exitStatus, 139)
        XCTAssertEqual(header.shimOverheadNs, 23)
        XCTAssertEqual(header.flags, [.finalizedByRecorder, .finalizedByProcess])
        XCTAssertEqual(header.executablePath, "/usr/local/bin/app")
        XCTAssertEqual(header.commandLine, "app --flag value")
        XCTAssertEqual(header.chunksAllocated, 1)
        XCTAssertEqual(header.tscHz, 1_000_000_000)
        XCTAssertTrue(header.exitedNormally)
        XCTAssertEqual(header.finalMonoNs - header.initMonoNs, 2_000)
        XCTAssertEqual(trace.endTime, 2_000)
        XCTAssertEqual(trace.clock.method, .leastSquares)
    }

    func testExitStatusAbsentAndKilledProcess() throws {
        let directory = try temporaryDirectory(self)
        let path = try writeTrace([Event(type: .mark, time: 50, tid: 1, string: "m")], in: directory) {
            $0.processExited = false
        }
        let trace = try TraceFile(path: path)
        XCTAssertNil(trace.header.exitStatus)
        XCTAssertFalse(trace.header.exitedNormally)
        XCTAssertEqual(trace.header.flags, [])
        XCTAssertEqual(trace.readAllEvents().map(\.time), [50])
    }

    func testMergeOrderAcrossThreads() throws {
        let directory = try temporaryDirectory(self)
        var rng = SeededGenerator(seed: 7)
        var events: [Event] = []
        for tid: Int32 in [10, 11, 12, 13] {
            var time: UInt64 = UInt64(tid)
            for index in 0..<3000 {
                time += UInt64.random(in: 1...50, using: &rng) * 4   // distinct per thread modulo 4
                events.append(Event(type: .start, time: time, tid: tid, arg: 1, a: UInt64(index)))
            }
        }
        // Append thread by thread: the file holds each thread's chunks interleaved with the
        // others' only as they fill, yet the reader must merge them globally.
        let trace = try TraceFile(path: writeTrace(events, in: directory))
        let read = trace.readAllEvents()
        XCTAssertEqual(read, events.sorted { $0.time < $1.time })
        XCTAssertGreaterThan(trace.chunkCount, 4)
    }

    func testEqualTimesKeepPerThreadOrderAndThreadOrder() throws {
        let directory = try temporaryDirectory(self)
        var events: [Event] = []
        for index in 0..<200 {   // many chunks per thread with 4096-byte chunks
            let time = UInt64(index / 10)
            events.append(Event(type: .end, time: time, tid: 2, a: UInt64(index)))
            events.append(Event(type: .end, time: time, tid: 1, a: UInt64(1000 + index)))
        }
        let trace = try TraceFile(path: writeTrace(events, in: directory))
        let read = trace.readAllEvents()
        XCTAssertEqual(trace.threads.map(\.tid), [2, 1], "tie: the thread whose chunk comes first in the file")
        let expected = events.enumerated().sorted {
            ($0.element.time, $0.element.tid == 2 ? 0 : 1, $0.offset) < ($1.element.time, $1.element.tid == 2 ? 0 : 1, $1.offset)
        }.map(\.element)
        XCTAssertEqual(read, expected)
    }

    func testMultiChunkThreadsAndThreadInfo() throws {
        let directory = try temporaryDirectory(self)
        var events: [Event] = []
        for index in 0..<5000 {
            events.append(Event(type: .enqueue, time: UInt64(index) * 10 + 5, tid: 7, arg: 1, a: UInt64(index), b: 0x1000, c: 0))
            if index % 3 == 0 {
                events.append(Event(type: .start, time: UInt64(index) * 10 + 6, tid: 8, arg: 1, a: UInt64(index)))
            }
        }
        let path = try writeTrace(events, in: directory) { writer in
            writer.setThreadName("main", tid: 7)
        }
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.readAllEvents(), events.sorted { $0.time < $1.time })
        XCTAssertEqual(trace.threads.count, 2)
        let main = try XCTUnwrap(trace.threads.first { $0.tid == 7 })
        XCTAssertEqual(main.name, "main")
        XCTAssertEqual(main.firstTime, 5)
        XCTAssertEqual(main.lastTime, 49_995)
        XCTAssertEqual(main.eventCount, 5000)
        XCTAssertEqual(main.chunkCount, 50, "100 records of 40 bytes per 4096-byte chunk")
        let worker = try XCTUnwrap(trace.threads.first { $0.tid == 8 })
        XCTAssertNil(worker.name)
        XCTAssertEqual(worker.firstTime, 6)
        XCTAssertEqual(trace.chunkCount, main.chunkCount + worker.chunkCount)
    }

    func testThreadNamesFromRecordsAndChunkHeaders() throws {
        let directory = try temporaryDirectory(self)
        var events = [Event(type: .threadName, time: 1, tid: 3, string: "a-much-longer-name-than-15")]
        for index in 0..<400 { events.append(Event(type: .end, time: UInt64(2 + index), tid: 3, a: 1)) }
        let trace = try TraceFile(path: writeTrace(events, in: directory))
        // Later chunk headers carry the name cut to 15 bytes: the full name must win.
        XCTAssertGreaterThan(trace.threads[0].chunkCount, 1)
        XCTAssertEqual(trace.threads[0].name, "a-much-longer-name-than-15")

        let renamed = events + [Event(type: .threadName, time: 5000, tid: 3, string: "second")]
        let again = try TraceFile(path: writeTrace(renamed, in: directory, name: "r.qtrace"))
        XCTAssertEqual(again.threads[0].name, "second")
    }

    func testReusedTidBecomesASeparateThread() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/reuse.qtrace"
        let writer = try TraceWriter(path: path, chunkSize: 4096)
        for index in 0..<300 { try writer.append(Event(type: .end, time: UInt64(index), tid: 9, a: 1)) }
        try writer.endThread(9)
        for index in 0..<300 { try writer.append(Event(type: .end, time: UInt64(1000 + index), tid: 9, a: 2)) }
        try writer.finish()
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.threads.map(\.tid), [9, 9])
        XCTAssertEqual(trace.threads.map(\.firstTime), [0, 1000])
        let read = trace.readAllEvents()
        XCTAssertEqual(read.map(\.a), Array(repeating: 1, count: 300) + Array(repeating: 2, count: 300))
    }

    func testUnknownTypesAreSkippedAndLongerKnownRecordsDecode() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/u.qtrace"
        let writer = try TraceWriter(path: path)
        try writer.append(Event(type: .mark, time: 1, tid: 1, string: "before"))
        try writer.appendRaw(tid: 1, type: 200, flags: 3, arg: 9, tsc: writer.tsc(forTime: 2), words: [1, 2, 3], string: [65, 66])
        try writer.appendRaw(tid: 1, type: 0, tsc: writer.tsc(forTime: 3), words: [7])   // type 0 is unknown too
        // A future minor may append words to a known record: the reader ignores them (the 4th
        // word of an ENQUEUE is its code site since 1.4; the 5th is ignored).
        try writer.appendRaw(tid: 1, type: EventType.enqueue.rawValue, arg: 1, tsc: writer.tsc(forTime: 4), words: [11, 22, 33, 44, 55])
        try writer.append(Event(type: .mark, time: 5, tid: 1, string: "after"))
        try writer.finish()
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.readAllEvents(), [
            Event(type: .mark, time: 1, tid: 1, string: "before"),
            Event(type: .enqueue, time: 4, tid: 1, arg: 1, a: 11, b: 22, c: 33, d: 44),
            Event(type: .mark, time: 5, tid: 1, string: "after"),
        ])
        XCTAssertEqual(trace.unknownRecordCount, 2)
        XCTAssertEqual(trace.warnings, [])
    }

    func testTooShortKnownRecordEndsTheChunkWithAWarning() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/short.qtrace"
        let writer = try TraceWriter(path: path)
        try writer.append(Event(type: .end, time: 1, tid: 1, a: 5))
        try writer.appendRaw(tid: 1, type: EventType.enqueue.rawValue, tsc: writer.tsc(forTime: 2), words: [1])
        try writer.append(Event(type: .end, time: 3, tid: 1, a: 6))
        try writer.finish()
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.readAllEvents().map(\.a), [5])
        XCTAssertEqual(trace.warnings.count, 1)
        XCTAssertEqual(trace.warnings.first?.chunk, 0)
        XCTAssertTrue(trace.warnings[0].message.contains("too short"), trace.warnings[0].message)
    }

    func testEmptyStreamsAndManyThreads() throws {
        let directory = try temporaryDirectory(self)
        var events: [Event] = []
        for tid in Int32(1)...64 {
            for index in 0..<50 { events.append(Event(type: .semSignal, time: UInt64(index) * 64 + UInt64(tid), tid: tid, a: 1)) }
        }
        let trace = try TraceFile(path: writeTrace(events, in: directory))
        XCTAssertEqual(trace.threads.count, 64)
        XCTAssertEqual(trace.readAllEvents(), events.sorted { $0.time < $1.time })
    }

    func testForEachEventCanStopEarly() throws {
        struct Stop: Error {}
        let directory = try temporaryDirectory(self)
        let events = (0..<100).map { Event(type: .end, time: UInt64($0), tid: 1, a: UInt64($0)) }
        let trace = try TraceFile(path: writeTrace(events, in: directory))
        var seen = 0
        XCTAssertThrowsError(try trace.forEachEvent { _ in
            seen += 1
            if seen == 10 { throw Stop() }
        })
        XCTAssertEqual(seen, 10)
    }

    func testInMemoryParsingMatchesFile() throws {
        let directory = try temporaryDirectory(self)
        let events = EventType.allCases.enumerated().map { sampleEvent($1, time: UInt64($0), tid: 5) }
        let path = try writeTrace(events, in: directory)
        let trace = try TraceFile(contentsOf: readBytes(path), path: path)
        XCTAssertEqual(trace.readAllEvents(), events)
    }

    func testStaticWriteConvenience() throws {
        let directory = try temporaryDirectory(self)
        let events = [Event(type: .threadStart, time: 0, tid: 1, arg: 0), Event(type: .threadExit, time: 9, tid: 1)]
        try TraceWriter.write(events, to: directory + "/s.qtrace")
        XCTAssertEqual(try TraceFile(path: directory + "/s.qtrace").readAllEvents(), events)
    }

    func testWriterRejectsBadChunkSizeAndOversizedRecords() throws {
        let directory = try temporaryDirectory(self)
        XCTAssertThrowsError(try TraceWriter(path: directory + "/x", chunkSize: 5000)) {
            XCTAssertEqual($0 as? TraceWriterError, .invalidChunkSize(5000))
        }
        let writer = try TraceWriter(path: directory + "/y", chunkSize: 4096)
        let label = String(repeating: "x", count: 4096)
        XCTAssertThrowsError(try writer.append(Event(type: .mark, time: 0, tid: 1, string: label)))
        try writer.finish()
        XCTAssertThrowsError(try writer.append(Event(type: .end, time: 0, tid: 1)))
    }
}
