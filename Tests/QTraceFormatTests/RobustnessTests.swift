// Damaged input: truncation at every byte, random corruption, and the one-line errors.
import XCTest
@testable import QTraceFormat

final class RobustnessTests: XCTestCase {
    /// Two threads, several 4096-byte chunks, a string record.
    private func smallTrace(in directory: String) throws -> (path: String, events: [Event]) {
        var events: [Event] = [Event(type: .queueCreate, time: 1, tid: 1, arg: 1, a: 0x10, b: 0, string: "com.example.q")]
        for index in 0..<150 {
            events.append(Event(type: .enqueue, time: UInt64(10 + 2 * index), tid: 1, arg: 1, a: UInt64(index), b: 0x10))
            events.append(Event(type: .start, time: UInt64(11 + 2 * index), tid: 2, arg: 1, a: UInt64(index)))
        }
        return (try writeTrace(events, in: directory), events)
    }

    func testTruncationAtEveryByteReadsAPrefixPerThread() throws {
        let directory = try temporaryDirectory(self)
        let (path, events) = try smallTrace(in: directory)
        let bytes = try readBytes(path)
        let expected = perThread(events)
        XCTAssertGreaterThan(bytes.count, 3 * 4096)
        var readable = 0
        for length in 0..<bytes.count {
            do {
                let trace = try TraceFile(contentsOf: Array(bytes[..<length]))
                let read = trace.readAllEvents()
                XCTAssertEqual(read.count, trace.eventCount)
                for (tid, got) in perThread(read) {
                    let want = try XCTUnwrap(expected[tid])
                    XCTAssertEqual(got, Array(want.prefix(got.count)), "cut at \(length), tid \(tid)")
                }
                XCTAssertFalse(trace.warnings.isEmpty, "a cut file at \(length) must say it is truncated")
                readable += 1
            } catch let error as TraceError {
                XCTAssertLessThan(length, 4096 + 64, "cut at \(length): \(error)")
            }
        }
        XCTAssertEqual(readable, bytes.count - (4096 + 64))
        XCTAssertEqual(try TraceFile(contentsOf: bytes).readAllEvents(), events.sorted { $0.time < $1.time })
    }

    func testTruncatedLastChunkKeepsItsCompleteRecords() throws {
        let directory = try temporaryDirectory(self)
        let events = (0..<50).map { Event(type: .end, time: UInt64($0), tid: 1, a: UInt64($0)) }
        let bytes = try readBytes(writeTrace(events, in: directory))
        // 64-byte chunk header + 10 records of 24 bytes + half of the 11th.
        let trace = try TraceFile(contentsOf: Array(bytes[..<(4096 + 64 + 10 * 24 + 12)]))
        XCTAssertEqual(trace.readAllEvents().map(\.a), Array(0..<10))
        XCTAssertEqual(trace.warnings.map(\.description), [
            "trace file is truncated: chunk 0 is cut short (316 of 4096 bytes)",
            "chunk 0: tid 1: record at byte 304 of 24 bytes runs past the chunk end (12 bytes left); rest of the chunk skipped",
        ])
    }

    func testRandomCorruptionNeverCrashes() throws {
        let directory = try temporaryDirectory(self)
        let (path, _) = try smallTrace(in: directory)
        let original = try readBytes(path)
        let seed = ProcessInfo.processInfo.environment["QTRACE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED
        var rng = SeededGenerator(seed: seed)
        var opened = 0, total = 0
        let rounds = ProcessInfo.processInfo.environment["QTRACE_FUZZ_ROUNDS"].flatMap(Int.init) ?? 3000
        for round in 0..<rounds {
            var bytes = original
            mutate(&bytes, round: round, using: &rng)
            guard let trace = try? TraceFile(contentsOf: bytes) else { continue }
            opened += 1
            var count = 0
            trace.forEachEvent { event in
                count += 1
                _ = event.fieldsDescription   // the formatter must cope with any values too
            }
            XCTAssertEqual(count, trace.eventCount)
            XCTAssertEqual(trace.threads.reduce(0) { $0 + $1.eventCount }, count)
            total += count
        }
        XCTAssertGreaterThan(opened, rounds / 3)
        print("fuzz: \(opened) of \(rounds) mutated traces opened, \(total) events read")
    }

    /// Byte flips anywhere, word rewrites where records are, header field rewrites, cuts.
    private func mutate(_ bytes: inout [UInt8], round: Int, using rng: inout SeededGenerator) {
        switch round % 4 {
        case 0:
            for _ in 0..<Int.random(in: 1...16, using: &rng) {
                bytes[Int.random(in: 4096..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
        case 1:
            let offset = 4096 + Int.random(in: 0..<(bytes.count - 4096) / 8, using: &rng) * 8
            let word = UInt64.random(in: 0...UInt64.max, using: &rng) & [0xFFFF_FFFF_FFFF_FFFF, 0xFF_FFFF, 0xFFFF_00FF][round / 4 % 3]
            withUnsafeBytes(of: word.littleEndian) { for (index, byte) in $0.enumerated() { bytes[offset + index] = byte } }
        case 2:
            let fields = [12, 16, 80, 40, 48, 64, 136, 8]
            let offset = fields[Int.random(in: 0..<fields.count, using: &rng)]
            for index in 0..<4 { bytes[offset + index] = UInt8.random(in: 0...255, using: &rng) }
            if Bool.random(using: &rng) { bytes[8] = 1; bytes[9] = 0 }   // keep the version readable mostly
        default:
            bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
            if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= 0xFF }
        }
    }

    func testArbitraryBytesNeverCrash() {
        var rng = SeededGenerator(seed: 99)
        var header = TraceWriter.encodeHeader(TraceHeader(chunkSize: 4096, chunksAllocated: 3))
        for _ in 0..<500 {
            let body = (0..<Int.random(in: 0...(3 * 4096), using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            header[80] = UInt8.random(in: 0...255, using: &rng)
            if let trace = try? TraceFile(contentsOf: header + body) {
                XCTAssertEqual(trace.readAllEvents().count, trace.eventCount)
            }
        }
    }

    func testChunksAllocatedIsClampedAndRespected() throws {
        let directory = try temporaryDirectory(self)
        let (path, events) = try smallTrace(in: directory)
        var bytes = try readBytes(path)
        let chunks = (bytes.count - 4096) / 4096
        setU64(&bytes, at: 80, 1000)
        let clamped = try TraceFile(contentsOf: bytes)
        XCTAssertEqual(clamped.chunkCount, chunks)
        XCTAssertEqual(clamped.readAllEvents().count, events.count)
        XCTAssertEqual(clamped.warnings.map(\.description), ["trace file is truncated: it holds \(chunks) of 1000 allocated chunks"])

        setU64(&bytes, at: 80, 1)
        let fewer = try TraceFile(contentsOf: bytes + [UInt8](repeating: 0xEE, count: 10_000))
        XCTAssertEqual(fewer.chunkCount, 1)
        XCTAssertEqual(fewer.warnings, [])
        XCTAssertLessThan(fewer.eventCount, events.count)
    }

    func testUnwrittenAndBadMagicChunksAreSkipped() throws {
        let directory = try temporaryDirectory(self)
        let (path, _) = try smallTrace(in: directory)
        var bytes = try readBytes(path)
        let full = try TraceFile(contentsOf: bytes)
        for index in 0..<4 { bytes[4096 + index] = 0 }
        let unwritten = try TraceFile(contentsOf: bytes)
        XCTAssertEqual(unwritten.unwrittenChunkCount, 1)
        XCTAssertEqual(unwritten.warnings, [])
        XCTAssertLessThan(unwritten.eventCount, full.eventCount)
        bytes[4096] = 0x42
        let bad = try TraceFile(contentsOf: bytes)
        XCTAssertEqual(bad.warnings.map(\.description), ["chunk 0: bad chunk magic 0x42, chunk skipped"])
        XCTAssertEqual(bad.eventCount, unwritten.eventCount)
    }

    func testAllChunksUnwrittenIsAnEmptyTraceNotAnError() throws {
        var bytes = TraceWriter.encodeHeader(TraceHeader(chunkSize: 4096, chunksAllocated: 2))
        bytes += [UInt8](repeating: 0, count: 2 * 4096)
        let trace = try TraceFile(contentsOf: bytes)
        XCTAssertEqual(trace.eventCount, 0)
        XCTAssertEqual(trace.threads, [])
        XCTAssertEqual(trace.readAllEvents(), [])
        XCTAssertEqual(trace.unwrittenChunkCount, 2)
    }

    // MARK: Errors

    func testOneLineErrors() throws {
        let directory = try temporaryDirectory(self)
        let valid = try readBytes(smallTrace(in: directory).path)
        func message(_ bytes: [UInt8]?, name: String) -> String {
            let path = directory + "/" + name
            if let bytes { try? writeBytes(bytes, to: path) }
            do {
                _ = try TraceFile(path: path)
                return "opened"
            } catch {
                let text = String(describing: error)
                XCTAssertFalse(text.contains("\n"), text)
                return text
            }
        }
        XCTAssertEqual(message(nil, name: "missing.qtrace"), "trace file not found: \(directory)/missing.qtrace")
        XCTAssertEqual(message([], name: "empty"), "empty file (0 bytes), not a qtrace trace: \(directory)/empty")
        XCTAssertEqual(message(Array("hello world, this is text\n".utf8), name: "text"),
                       "not a qtrace trace (bad magic): \(directory)/text")
        XCTAssertEqual(message(Array(valid.prefix(5)), name: "five"),
                       "truncated qtrace trace (header is 5 of 4096 bytes): \(directory)/five")
        XCTAssertEqual(message(Array(valid.prefix(100)), name: "hundred"),
                       "truncated qtrace trace (header is 100 of 4096 bytes): \(directory)/hundred")
        var newer = valid
        newer[8] = 2; newer[10] = 3
        XCTAssertEqual(message(newer, name: "v2"), "trace version 2.3 is newer than this qtrace (reads 1.x): upgrade qtrace")
        var older = valid
        older[8] = 0
        XCTAssertEqual(message(older, name: "v0"),
                       "trace version 0.0 is not supported (this qtrace reads 1.x): \(directory)/v0")
        var minor = valid
        minor[10] = 7
        XCTAssertEqual(message(minor, name: "v1.7"), "opened", "unknown minors are read")
        XCTAssertEqual(message(Array(valid.prefix(4096)), name: "header-only"),
                       "trace holds no events, only a header (the process may have died before recording anything): \(directory)/header-only")
        var chunkSize = valid
        chunkSize[16] = 0x10
        XCTAssertEqual(message(chunkSize, name: "cs"),
                       "corrupt qtrace trace header (chunk_size 4112 is not a multiple of 4096 between 4096 and 256 MiB): \(directory)/cs")
        var headerSize = valid
        headerSize[12] = 8
        XCTAssertEqual(message(headerSize, name: "hs"), "corrupt qtrace trace header (header_size 4104, expected 4096): \(directory)/hs")
        XCTAssertEqual(message(nil, name: ""), "cannot read trace \(directory)/: is a directory, not a trace file")
        XCTAssertEqual(message(nil, name: "../../dev/null"), "not a regular file (a trace is a file written by qtrace record): \(directory)/../../dev/null")
    }

    func testFIFODoesNotHang() throws {
        let directory = try temporaryDirectory(self)
        let path = directory + "/fifo"
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        XCTAssertThrowsError(try TraceFile(path: path)) {
            XCTAssertEqual($0 as? TraceError, .notARegularFile(path: path))
        }
    }

    private func setU64(_ bytes: inout [UInt8], at offset: Int, _ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { for (index, byte) in $0.enumerated() { bytes[offset + index] = byte } }
    }
}
