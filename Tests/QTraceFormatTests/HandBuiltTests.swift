// A trace assembled byte by byte from docs/trace-format.md, with literal offsets and none of
// the library's constants or its writer: it catches mistakes the writer and the reader
// would otherwise share.
import XCTest
import QTraceFormat

private struct ByteBuilder {
    var bytes: [UInt8] = []
    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { for shift in stride(from: 0, to: 16, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt16(shift))) } }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
    mutating func ascii(_ text: String) { bytes.append(contentsOf: Array(text.utf8)) }
    mutating func pad(to length: Int) { bytes.append(contentsOf: [UInt8](repeating: 0, count: length - bytes.count)) }

    /// word 0 | word 1 | payload words | optional string: length, bytes, zero padding.
    mutating func record(type: UInt8, flags: UInt8 = 0, arg: UInt32 = 0, tsc: UInt64, words: [UInt64] = [], string: [UInt8]? = nil) {
        var length = 16 + 8 * words.count
        if let string { length += 4 + string.count }
        length = (length + 7) / 8 * 8
        let start = bytes.count
        u64(UInt64(type) | UInt64(flags) << 8 | UInt64(length) << 16 | UInt64(arg) << 32)
        u64(tsc)
        for word in words { u64(word) }
        if let string {
            u32(UInt32(string.count))
            bytes.append(contentsOf: string)
        }
        pad(to: start + length)
    }
}

final class HandBuiltTests: XCTestCase {
    // TSC runs at 2 GHz from 5_000_000 at CLOCK_MONOTONIC 1_000_000_000 ns.
    let initTsc: UInt64 = 5_000_000, initMono: UInt64 = 1_000_000_000
    func tsc(_ ns: UInt64) -> UInt64 { initTsc + 2 * ns }

    private func handBuiltTrace() -> [UInt8] {
        var file = ByteBuilder()
        file.ascii("QTRACE"); file.u16(0)                 // 0 magic
        file.u16(1); file.u16(0)                          // 8 version 1.0
        file.u32(4096); file.u32(8192); file.u32(4)       // 12 header_size, 16 chunk_size, 20 ncpu
        file.u64(777); file.u64(1)                        // 24 pid, 32 ppid
        file.u64(initTsc); file.u64(initMono); file.u64(1_600_000_000_000_000_000)   // 40, 48, 56
        file.u64(tsc(90_000)); file.u64(initMono + 90_000)   // 64 final_tsc, 72 final_mono_ns
        file.u64(3); file.u64(5)                          // 80 chunks_allocated, 88 dropped_events
        file.u64(777); file.u64(3)                        // 96 main_tid, 104 flags
        file.u64(0xABC0); file.u64(1 << 63 | 2)           // 112 main_queue, 120 exit_status
        file.u64(31); file.u64(2_000_000_000)             // 128 shim_overhead_ns, 136 tsc_hz
        file.pad(to: 256); file.ascii("/bin/handmade")    // 256 exe
        file.pad(to: 512); file.ascii("handmade -v")      // 512 command line
        file.pad(to: 4096)

        // chunk 0: main thread, seq 0
        chunkHeader(&file, seq: 0, tid: 777, ns: 0, name: "main")
        file.record(type: 1, arg: 0, tsc: tsc(10), words: [0])                                   // THREAD_START main
        file.record(type: 10, arg: 0x0011_1101, tsc: tsc(20), words: [0xA0, 0], string: Array("com.hand.q".utf8))
        file.record(type: 20, flags: 0b11, arg: 3, tsc: tsc(30), words: [1025, 0xA0, 0])        // ENQUEUE
        file.record(type: 250, arg: 1, tsc: tsc(35), words: [1, 2])                              // unknown: skipped
        file.record(type: 70, tsc: tsc(60_000), string: Array("mark!".utf8))                     // MARK
        file.pad(to: 4096 + 8192)

        // chunk 1: a worker
        chunkHeader(&file, seq: 0, tid: 778, ns: 32, name: "worker")
        file.record(type: 1, arg: 1, tsc: tsc(32), words: [777])                                  // THREAD_START worker
        file.record(type: 21, arg: 3, tsc: tsc(40), words: [1025])                               // START
        file.record(type: 22, tsc: tsc(50), words: [1025])                                       // END
        file.pad(to: 4096 + 2 * 8192)

        // chunk 2: main again, seq 1; ends at a zero word followed by junk that must be ignored
        chunkHeader(&file, seq: 1, tid: 777, ns: 70_000, name: "main")
        file.record(type: 51, tsc: tsc(70_000), words: [0xB0, 100, 200, 300])                    // SOURCE_SET_TIMER
        file.record(type: 2, tsc: tsc(80_000))                                                   // THREAD_EXIT
        file.u64(0)
        file.u64(0xFFFF_FFFF_FFFF_FFFF)
        file.pad(to: 4096 + 3 * 8192)
        file.pad(to: 4096 + 3 * 8192 + 1000)   // bytes past chunks_allocated are ignored
        return file.bytes
    }

    private func chunkHeader(_ file: inout ByteBuilder, seq: UInt32, tid: UInt64, ns: UInt64, name: String) {
        let start = file.bytes.count
        file.u32(0x4B48_4351); file.u32(seq)         // "QCHK", thread_seq
        file.u64(tid); file.u64(tsc(ns)); file.u64(initMono + ns)
        file.ascii(name)
        file.pad(to: start + 64)
    }

    func testHandBuiltFileDecodes() throws {
        let trace = try TraceFile(contentsOf: handBuiltTrace(), path: "hand")
        let header = trace.header
        XCTAssertEqual(header.pid, 777)
        XCTAssertEqual(header.ppid, 1)
        XCTAssertEqual(header.ncpu, 4)
        XCTAssertEqual(header.chunkSize, 8192)
        XCTAssertEqual(header.initRealtimeNs, 1_600_000_000_000_000_000)
        XCTAssertEqual(header.droppedEvents, 5)
        XCTAssertEqual(header.mainTid, 777)
        XCTAssertEqual(header.flags, [.finalizedByProcess, .finalizedByRecorder])
        XCTAssertEqual(header.mainQueue, 0xABC0)
        XCTAssertEqual(header.exitStatus, 2)
        XCTAssertEqual(header.shimOverheadNs, 31)
        XCTAssertEqual(header.executablePath, "/bin/handmade")
        XCTAssertEqual(header.commandLine, "handmade -v")
        XCTAssertEqual(trace.clock.method, .leastSquares)
        XCTAssertEqual(trace.clock.pairCount, 5)
        XCTAssertEqual(trace.clock.ticksPerSecond, 2e9, accuracy: 1)
        XCTAssertEqual(trace.unknownRecordCount, 1)
        XCTAssertEqual(trace.warnings, [])
        XCTAssertEqual(trace.endTime, 90_000)

        XCTAssertEqual(trace.readAllEvents(), [
            Event(type: .threadStart, time: 10, tid: 777, arg: 0, a: 0),
            Event(type: .queueCreate, time: 20, tid: 777, arg: 0x0011_1101, a: 0xA0, b: 0, string: "com.hand.q"),
            Event(type: .enqueue, time: 30, tid: 777, arg: 3, flags: 0b11, a: 1025, b: 0xA0, c: 0),
            Event(type: .threadStart, time: 32, tid: 778, arg: 1, a: 777),
            Event(type: .start, time: 40, tid: 778, arg: 3, a: 1025),
            Event(type: .end, time: 50, tid: 778, a: 1025),
            Event(type: .mark, time: 60_000, tid: 777, string: "mark!"),
            Event(type: .sourceSetTimer, time: 70_000, tid: 777, a: 0xB0, b: 100, c: 200, d: 300),
            Event(type: .threadExit, time: 80_000, tid: 777),
        ])
        XCTAssertEqual(trace.threads, [
            ThreadInfo(tid: 777, name: "main", firstTime: 10, lastTime: 80_000, eventCount: 6, chunkCount: 2),
            ThreadInfo(tid: 778, name: "worker", firstTime: 32, lastTime: 50, eventCount: 3, chunkCount: 1),
        ])
    }

    /// Format 1.2's compact ENQUEUE_C / START_C / END_C (types 120-122) decode to exactly the
    /// events of their full forms: the same item written both ways reads back the same.
    func testCompactItemRecordsDecodeToTheirFullForms() throws {
        var file = ByteBuilder()
        file.ascii("QTRACE"); file.u16(0)
        file.u16(1); file.u16(2)                          // version 1.2
        file.u32(4096); file.u32(8192); file.u32(2)
        file.u64(777); file.u64(1)
        file.u64(initTsc); file.u64(initMono); file.u64(0)
        file.u64(0); file.u64(0)
        file.u64(2); file.u64(0)                          // chunks_allocated 2
        file.u64(777); file.u64(0)
        file.u64(0); file.u64(0)
        file.u64(0); file.u64(2_000_000_000)
        file.pad(to: 4096)
        let queue: UInt64 = 0x7F12_3456_78A0
        chunkHeader(&file, seq: 0, tid: 777, ns: 0, name: "main")
        file.record(type: 20, flags: 0b1001, arg: 3, tsc: tsc(10), words: [4000, queue, 0])     // ENQUEUE (full)
        file.record(type: 120, flags: 0b1001, arg: 4001, tsc: tsc(20), words: [queue | 3 << 56]) // ENQUEUE_C
        file.record(type: 120, arg: 0xFFFF_FFFF, tsc: tsc(25), words: [queue | 1 << 56])        // largest compact id
        file.pad(to: 4096 + 8192)
        chunkHeader(&file, seq: 0, tid: 778, ns: 30, name: "worker")
        file.record(type: 21, arg: 3, tsc: tsc(30), words: [4000])                             // START (full)
        file.record(type: 22, tsc: tsc(40), words: [4000])                                     // END (full)
        file.record(type: 121, flags: 3, arg: 4001, tsc: tsc(50))                              // START_C
        file.record(type: 122, arg: 4001, tsc: tsc(60))                                        // END_C
        file.pad(to: 4096 + 2 * 8192)

        let trace = try TraceFile(contentsOf: file.bytes, path: "compact")
        XCTAssertEqual(trace.unknownRecordCount, 0)
        XCTAssertEqual(trace.warnings, [])
        XCTAssertEqual(trace.readAllEvents(), [
            Event(type: .enqueue, time: 10, tid: 777, arg: 3, flags: 0b1001, a: 4000, b: queue, c: 0),
            Event(type: .enqueue, time: 20, tid: 777, arg: 3, flags: 0b1001, a: 4001, b: queue, c: 0),
            Event(type: .enqueue, time: 25, tid: 777, arg: 1, a: 0xFFFF_FFFF, b: queue, c: 0),
            Event(type: .start, time: 30, tid: 778, arg: 3, a: 4000),
            Event(type: .end, time: 40, tid: 778, a: 4000),
            Event(type: .start, time: 50, tid: 778, arg: 3, a: 4001),
            Event(type: .end, time: 60, tid: 778, a: 4001),
        ])
    }

    func testWriterProducesTheHandBuiltBytes() throws {
        // The writer, given the same content, must lay out chunk 1 (the worker) identically.
        let directory = try temporaryDirectory(self)
        let path = directory + "/w.qtrace"
        let writer = try TraceWriter(path: path, pid: 777, ncpu: 4, mainTid: 777, tscHz: 2_000_000_000,
                                     chunkSize: 8192, initMonoNs: initMono)
        writer.setThreadName("worker", tid: 778)
        try writer.append(Event(type: .threadStart, time: 32, tid: 778, arg: 1, a: 777))
        try writer.append(Event(type: .start, time: 40, tid: 778, arg: 3, a: 1025))
        try writer.append(Event(type: .end, time: 50, tid: 778, a: 1025))
        try writer.finish()
        let written = try readBytes(path)
        let hand = handBuiltTrace()
        // initTsc differs (the writer starts its TSC at initMonoNs), so compare record words
        // after rebasing the TSC, and the chunk header fields one by one.
        let chunk = Array(written[4096..<(4096 + 8192)])
        let expected = Array(hand[(4096 + 8192)..<(4096 + 2 * 8192)])
        XCTAssertEqual(chunk[0..<16], expected[0..<16])            // magic, seq, tid
        XCTAssertEqual(chunk[24..<64], expected[24..<64])          // calib mono, name, reserved
        XCTAssertEqual(rebasedRecords(chunk, tscBase: initMono), rebasedRecords(expected, tscBase: initTsc))
    }

    /// The record words with each tsc replaced by its distance from `tscBase`.
    private func rebasedRecords(_ chunk: [UInt8], tscBase: UInt64) -> [UInt64] {
        let words = stride(from: 64, to: chunk.count, by: 8).map { offset in
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(chunk[offset + $1]) << (8 * UInt64($1)) }
        }
        var result: [UInt64] = []
        var index = 0
        while index < words.count, words[index] != 0 {
            let length = Int((words[index] >> 16) & 0xFFFF) / 8
            result.append(words[index])
            result.append(words[index + 1] - tscBase)
            result.append(contentsOf: words[(index + 2)..<(index + length)])
            index += length
        }
        return result
    }
}
