// Write and read throughput, printed (never asserted: machines and build modes differ).
// QTRACE_BENCH_EVENTS sets the event count; run with `-c release` for meaningful numbers.
import XCTest
import QTraceFormat
#if canImport(Glibc)
import Glibc
#endif

final class ThroughputTests: XCTestCase {
    func testThroughput() throws {
        let count = ProcessInfo.processInfo.environment["QTRACE_BENCH_EVENTS"].flatMap(Int.init) ?? 1_000_000
        let directory = try temporaryDirectory(self)
        let path = directory + "/bench.qtrace"
        let threads: Int32 = 8

        let writeStart = now()
        let writer = try TraceWriter(path: path, ncpu: 2, mainTid: 1)
        for index in 0..<count {
            let tid = Int32(index % Int(threads)) + 1
            let time = UInt64(index) * 10
            switch index % 4 {
            case 0: try writer.append(Event(type: .enqueue, time: time, tid: tid, arg: 1, a: UInt64(index), b: 0x1000, c: 0))
            case 1: try writer.append(Event(type: .start, time: time, tid: tid, arg: 1, a: UInt64(index)))
            case 2: try writer.append(Event(type: .end, time: time, tid: tid, a: UInt64(index)))
            default: try writer.append(Event(type: .semSignal, time: time, tid: tid, arg: 1, a: 0x2000))
            }
        }
        try writer.finish()
        let writeSeconds = now() - writeStart

        let readStart = now()
        let trace = try TraceFile(path: path)
        let openSeconds = now() - readStart
        var checksum: UInt64 = 0, read = 0, lastTime: UInt64 = 0, ordered = true
        trace.forEachEvent { event in
            checksum &+= event.a
            ordered = ordered && event.time >= lastTime
            lastTime = event.time
            read += 1
        }
        let readSeconds = now() - readStart
        XCTAssertEqual(read, count)
        XCTAssertTrue(ordered)
        XCTAssertNotEqual(checksum, 0)
        print(String(format: "throughput: wrote %d events in %.3f s (%.1f M events/s), read+merged %d threads in %.3f s (%.1f M events/s; open %.3f s), file %.1f MB",
                     count, writeSeconds, Double(count) / writeSeconds / 1e6, threads, readSeconds,
                     Double(count) / readSeconds / 1e6, openSeconds, Double(trace.fileSize) / 1e6))
    }

    /// The reader alone on a real trace: $QTRACE_READ_BENCH_TRACE (skipped when unset, as in
    /// CI). Open (validation) and merge are timed apart; run in release for meaningful numbers:
    /// `QTRACE_READ_BENCH_TRACE=/tmp/q3/flow.qtrace swift test -c release --filter testReadRealTrace`.
    func testReadRealTrace() throws {
        guard let path = ProcessInfo.processInfo.environment["QTRACE_READ_BENCH_TRACE"], !path.isEmpty else {
            throw XCTSkip("set QTRACE_READ_BENCH_TRACE to a .qtrace file")
        }
        let rounds = ProcessInfo.processInfo.environment["QTRACE_READ_BENCH_ROUNDS"].flatMap(Int.init) ?? 3
        for round in 1...max(rounds, 1) {
            let openStart = now()
            let trace = try TraceFile(path: path)
            let openSeconds = now() - openStart
            var checksum: UInt64 = 0, read = 0, lastTime: UInt64 = 0, ordered = true
            let readStart = now()
            trace.forEachEvent { event in
                checksum &+= event.a &+ event.time
                ordered = ordered && event.time >= lastTime
                lastTime = event.time
                read += 1
            }
            let readSeconds = now() - readStart
            XCTAssertEqual(read, trace.eventCount)
            XCTAssertTrue(ordered)
            print(String(format: "read-trace round %d: %d events, open %.3f s (%.1f M events/s), merge %.3f s (%.1f M events/s), total %.1f M events/s (checksum %llu)",
                         round, read, openSeconds, Double(read) / openSeconds / 1e6, readSeconds,
                         Double(read) / readSeconds / 1e6, Double(read) / (openSeconds + readSeconds) / 1e6, checksum))
        }
    }

    private func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
