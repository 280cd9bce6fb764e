// The validation boundary (docs/trace-format.md, "Validation"): well-framed records that lie
// are dropped, counted and named in a warning; header fields out of range are ignored.
import XCTest
@testable import QTraceFormat

final class ValidationTests: XCTestCase {
    /// Ten ENDs at 10, 20, ... 100 ns on tid 100, then `lies` written raw by `configure`.
    private func trace(initMonoNs: UInt64 = 1_000_000_000, chunkSize: Int = 4096,
                       _ lies: (TraceWriter) throws -> Void) throws -> TraceFile {
        let directory = try temporaryDirectory(self)
        let path = directory + "/t.qtrace"
        let writer = try TraceWriter(path: path, pid: 1, mainTid: 100, chunkSize: chunkSize, initMonoNs: initMonoNs)
        try writer.append(contentsOf: (1...10).map { Event(type: .end, time: UInt64(10 * $0), tid: 100, a: UInt64($0)) })
        try lies(writer)
        try writer.finish()
        return try TraceFile(path: path)
    }

    func testRecordsOutsideTheTimeRangeAreDroppedCountedAndNamed() throws {
        let file = try trace(initMonoNs: 10_000_000_000) { writer in
            // 2^63 ns after the start, and 10 s before it (the slack is 1 s).
            try writer.appendRaw(tid: 100, type: EventType.end.rawValue, tsc: writer.tsc(forTime: 0) &+ (1 << 63), words: [98])
            try writer.appendRaw(tid: 200, type: EventType.end.rawValue, tsc: 0, words: [99])
            try writer.append(Event(type: .end, time: 110, tid: 200, a: 11))
        }
        XCTAssertEqual(file.invalidRecordCount, 2)
        XCTAssertEqual(file.readAllEvents().map(\.a), Array(1...11))
        XCTAssertEqual(file.eventCount, 11)
        XCTAssertEqual(file.warnings.map(\.description), [
            "chunk 0: tid 100: 1 invalid record dropped, the first: record at byte 304 (end) has TSC 9223372046854775808, outside the trace's time range",
            "chunk 1: tid 200: 1 invalid record dropped, the first: record at byte 64 (end) has TSC 0, outside the trace's time range",
        ])
        XCTAssertLessThan(file.endTime, TraceLimits.maxTraceNs)
    }

    func testARecordEarlierThanTheOneBeforeIsDropped() throws {
        let file = try trace { writer in
            try writer.appendRaw(tid: 100, type: EventType.end.rawValue, tsc: writer.tsc(forTime: 50), words: [50])
            try writer.append(Event(type: .end, time: 120, tid: 100, a: 12))
        }
        XCTAssertEqual(file.invalidRecordCount, 1)
        XCTAssertEqual(file.readAllEvents().map(\.a), Array(1...10) + [12], "the run after the dropped record is read")
        XCTAssertEqual(file.threads.first?.lastTime, 120)
        XCTAssertTrue(file.warnings[0].description.hasSuffix("(end) has TSC 1000000050, earlier than the record before it"))
    }

    func testAStringLongerThanTheRecorderWritesIsDropped() throws {
        let file = try trace(chunkSize: 16384) { writer in
            try writer.appendRaw(tid: 100, type: EventType.mark.rawValue, tsc: writer.tsc(forTime: 200),
                                 string: Array(repeating: UInt8(ascii: "x"), count: TraceLayout.maxStringLength + 1))
        }
        XCTAssertEqual(file.invalidRecordCount, 1)
        XCTAssertEqual(file.eventCount, 10)
        XCTAssertTrue(file.warnings[0].description.hasSuffix("(mark) has a 4097-byte string, over the recorder's 4096"))
    }

    func testImplausibleHeaderFieldsAreIgnoredWithAWarningEach() throws {
        let directory = try temporaryDirectory(self)
        let path = try writeTrace((1...5).map { Event(type: .end, time: UInt64($0), tid: 100, a: UInt64($0)) }, in: directory)
        var bytes = try readBytes(path)
        func put(_ value: UInt64, at offset: Int) {
            for k in 0..<8 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
        }
        typealias H = TraceLayout.Header
        put(.max, at: H.droppedEvents)
        put(1 << 63, at: H.droppedEnd)
        put(.max, at: H.shimOverheadNs)
        put(.max, at: H.tscHz)
        put(1, at: H.finalTsc)   // before init_tsc
        let file = try TraceFile(contentsOf: bytes)
        XCTAssertEqual(file.warnings.map(\.description), [
            "header dropped_events 18446744073709551615 is implausible (over 281474976710656), ignored",
            "header dropped_end 9223372036854775808 is implausible (over 281474976710656), ignored",
            "header shim_overhead_ns 18446744073709551615 is implausible (over 1000000), ignored",
            "header tsc_hz 18446744073709551615 is not a clock rate (1 MHz...100 GHz), ignored",
            "header final calibration pair precedes the start, ignored",
        ])
        XCTAssertEqual([file.header.droppedEvents, file.header.droppedEnd, file.header.shimOverheadNs, file.header.tscHz,
                        file.header.finalTsc], [0, 0, 0, 0, 0])
        XCTAssertEqual(file.readAllEvents().map(\.a), Array(1...5))
        XCTAssertEqual(file.invalidRecordCount, 0)
    }

    func testALyingChunkCalibrationPairIsLeftOutOfTheClock() throws {
        let directory = try temporaryDirectory(self)
        let events = (1...300).map { Event(type: .end, time: UInt64(1000 * $0), tid: 100, a: UInt64($0)) }
        let path = try writeTrace(events, in: directory)
        var bytes = try readBytes(path)
        // Chunk 1's pair claims 2^49 ns passed in one tick.
        let chunk1 = TraceLayout.headerSize + 4096
        let initTsc = bytes[40..<48].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let initMono = bytes[48..<56].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        for (offset, value) in [(16, initTsc + 1), (24, initMono + (1 << 49))] {
            for k in 0..<8 { bytes[chunk1 + offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
        }
        let file = try TraceFile(contentsOf: bytes)
        XCTAssertEqual(file.warnings.map(\.description), ["chunk 1: calibration pair is off the line tsc_hz predicts by more than 1%, not used"])
        XCTAssertEqual(file.clock.ticksPerSecond, 1e9, accuracy: 1e3)
        XCTAssertEqual(file.readAllEvents().map(\.time), events.map(\.time))
    }

    /// The open phase walks two chunks at a time (`TraceBytes.scanChunks`): each chunk's result
    /// must be what a walk of that chunk alone finds (damage, end markers, unknown and invalid
    /// records), in the chunks' order, whichever lane walked it and whenever the lanes changed
    /// hands; and on two threads, each walking half the chunks. Three threads' records in 4 KiB
    /// chunks, each copy with a few records rewritten.
    func testWalkingTwoChunksAtATimeFindsWhatEachChunksOwnWalkFinds() throws {
        let directory = try temporaryDirectory(self)
        let events = (0..<3000).map { (i: Int) -> Event in
            let tid = Int32(100 + i % 3 * (i % 7))   // 100...112, unevenly
            return Event(type: .end, time: UInt64(10 * i), tid: tid, a: UInt64(i))
        }
        let original = try readBytes(writeTrace(events, in: directory))
        let records = recordOffsets(original)
        let unknownType = UInt8(RecordLayout.table.firstIndex { $0 == nil }!)
        var rng = SeededGenerator(seed: 0x2A1C)
        var found = (problems: 0, invalid: 0, unknown: 0, ends: 0)
        for _ in 0..<60 {
            var bytes = original
            for _ in 0..<8 {
                let offset = records.randomElement(using: &rng)!
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[offset] = unknownType                                  // an unknown type
                case 1: for i in 0..<8 { bytes[offset + i] = 0 }                     // the end marker
                case 2: bytes[offset + 2] |= 4                                       // a length not a multiple of 8
                default: for i in 8..<16 { bytes[offset + i] = 0 }                   // a TSC going back
                }
            }
            let trace = TraceBytes.copying(bytes)
            let header = try TraceIndex.readHeader(trace, path: "t")
            let (base, size) = (Int(header.headerSize), Int(header.chunkSize))
            let ranges = stride(from: base, to: bytes.count, by: size).map { ($0 + TraceLayout.chunkHeaderSize)..<min($0 + size, bytes.count) }
            let bounds = TimeBounds.unbounded
            RecordShape.table.withUnsafeBufferPointer { shapes in
                let together = trace.scanChunks(ranges, shapes: shapes, bounds: bounds)
                let alone = ranges.map { (range: Range<Int>) -> ChunkScan in
                    var walk = RecordWalk(start: range.lowerBound, end: range.upperBound, bounds: bounds)
                    RecordShape.walkMinimums.withUnsafeBufferPointer { minimums in
                        while walk.step(trace, minimums, shapes, highTsc: bounds.high) {}
                    }
                    return walk.result(trace, shapes, bounds)
                }
                // And on two threads (`scanChunksSideBySide`): the same results, in order.
                let twoThreads = trace.scanChunksSideBySide(ranges, shapes: shapes, bounds: bounds, decodingThread: .always)
                XCTAssertEqual(together.count, alone.count)
                XCTAssertEqual(twoThreads.count, alone.count)
                for (chunk, (both, own)) in zip(together, alone).enumerated() {
                    XCTAssertEqual(String(describing: both), String(describing: own), "chunk \(chunk)")
                    XCTAssertEqual(String(describing: twoThreads[chunk]), String(describing: own), "chunk \(chunk), two threads")
                }
                found.problems += alone.filter { $0.problem != nil }.count
                found.invalid += alone.map(\.invalidOffsets.count).reduce(0, +)
                found.unknown += alone.map(\.unknownCount).reduce(0, +)
                found.ends += zip(alone, ranges).filter { $0.0.problem == nil && $0.0.validEnd < $0.1.upperBound - 8 }.count
            }
        }
        XCTAssertTrue(found.problems > 0 && found.invalid > 0 && found.unknown > 0 && found.ends > 0, "\(found)")
    }

    /// Where the records of every chunk of an unmutated trace start.
    private func recordOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        for chunk in stride(from: 4096, to: bytes.count, by: 4096) {
            var offset = chunk + TraceLayout.chunkHeaderSize
            while offset + 16 <= min(chunk + 4096, bytes.count) {
                let length = Int(bytes[offset + 2]) | Int(bytes[offset + 3]) << 8
                if length == 0 { break }
                offsets.append(offset)
                offset += length
            }
        }
        return offsets
    }
}
