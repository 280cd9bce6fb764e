// CTF read throughput, printed (never asserted: machines and build modes differ). Reads
// $QTRACE_CTF_BENCH_TRACE when set (scripts/bench-lttng.py passes its 3M-event trace, with
// `-c release`), else records a small trace of its own; $QTRACE_CTF_DECODER chooses the
// decoder (automatic, babeltrace, purpose-built).
import Foundation
import QTraceCTF
import QTraceFormat
import XCTest

final class CTFReadThroughputTests: XCTestCase {
    func testReadThroughput() throws {
        let trace = try ProcessInfo.processInfo.environment["QTRACE_CTF_BENCH_TRACE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? recordSmallTrace()
        let choice = ProcessInfo.processInfo.environment["QTRACE_CTF_DECODER"].flatMap(CTFTraceReader.Decoder.init(rawValue:))
        let reader = try CTFTraceReader(path: trace, decoder: choice ?? .automatic)
        let start = Date()
        var count = 0, checksum: UInt64 = 0, ordered = true, last: UInt64 = 0
        let process = try reader.forEachEvent { event in
            count += 1
            checksum &+= event.a
            ordered = ordered && event.time >= last
            last = event.time
        }
        let seconds = Date().timeIntervalSince(start)
        XCTAssertTrue(ordered)
        XCTAssertEqual(count, process.eventCount)
        print(String(format: "ctf-read: %d events in %.3f s: %.2f M events/s (checksum %llu, ",
                     count, seconds, Double(count) / seconds / 1e6, checksum) + "decoder \(reader.decoder.rawValue))")
    }

    /// bench-empty with 20,000 items (60,000 events) through an isolated session.
    private func recordSmallTrace() throws -> String {
        try requireLTTng()
        let dir = TestPaths.tempDir("throughput")
        let shim = try TestPaths.lttngShim.get()
        let namespace = try PrivateLTTngNamespace()
        defer { namespace.close() }
        let pidFile = dir.appendingPathComponent("sessiond.pid").path
        let started = namespace.run(["lttng-sessiond", "--daemonize", "--no-kernel", "--pidfile=\(pidFile)"])
        XCTAssertEqual(started.status, 0, started.output)
        let daemon = try XCTUnwrap(pid_t((try? String(contentsOfFile: pidFile, encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        defer { stopDaemon(daemon) }
        let trace = dir.appendingPathComponent("trace").path
        for command in [["create", "bench", "--output=\(trace)"], ["enable-event", "-u", "-s", "bench", "qtrace:*"],
                        ["add-context", "-u", "-s", "bench", "-t", "vtid"], ["start", "bench"]] {
            let result = namespace.run(["lttng"] + command)
            XCTAssertEqual(result.status, 0, "lttng \(command): \(result.output)")
        }
        let run = namespace.run(["env", "LD_PRELOAD=\(shim)", TestPaths.fixtures, "bench-empty", "20000"])
        XCTAssertEqual(run.status, 0, run.output)
        namespace.run(["lttng", "stop", "bench"])
        namespace.run(["lttng", "destroy", "bench"])
        return trace
    }
}

/// Stops a daemon a test started (SIGTERM, SIGKILL after 5 s), by its PID.
func stopDaemon(_ pid: pid_t) {
    kill(pid, SIGTERM)
    for _ in 0..<500 where isAlive(pid) { usleep(10_000) }
    if isAlive(pid) { kill(pid, SIGKILL) }
}
