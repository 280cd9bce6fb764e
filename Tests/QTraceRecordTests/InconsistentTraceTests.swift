// `qtrace check` is a CI gate (issue 26, item 7): a damaged or altered trace must fail it
// (status 2, one line), not pass with "ok". The inputs are a real recording (fixture
// target-chain) rewritten record by record, each corruption one the recorder never writes.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class InconsistentTraceTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    /// The recording every case rewrites, read back.
    func recording(in dir: URL) throws -> TraceFile {
        let (run, path) = record([Paths.fixtures, "target-chain"], in: dir, name: "chain")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("chain done"))
        return try TraceFile(path: path)
    }

    /// Writes `events` as a trace of the same process as `original`.
    func write(_ events: [Event], like original: TraceFile, to path: String) throws {
        let h = original.header
        let writer = try TraceWriter(path: path, pid: h.pid, ncpu: Int(h.ncpu), mainTid: h.mainTid)
        writer.header.mainQueue = h.mainQueue
        writer.header.executablePath = h.executablePath
        try writer.append(contentsOf: events)
        try writer.finish()
    }

    /// `qtrace check` with a bound every honest trace of this program holds.
    func check(_ path: String, _ extra: [String] = []) -> RunResult {
        runProgram([Paths.qtrace, "check", path, "--max-wait-p99", "*=100s"] + extra, environment: ["QTRACE_SYMBOLIZE": "0"])
    }

    func assertRefused(_ path: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let refused = check(path)
        XCTAssertEqual(refused.status, 2, "\(what): \(refused.stdout)\(refused.stderr)", file: file, line: line)
        XCTAssertEqual(refused.stdout, "", what, file: file, line: line)
        let errors = refused.stderr.split(separator: "\n").filter { $0.contains("error") }
        XCTAssertEqual(errors.count, 1, "\(what): \(refused.stderr)", file: file, line: line)
        XCTAssertTrue(errors.first?.contains("inconsistent trace") ?? false, "\(what): \(refused.stderr)", file: file, line: line)
        let allowed = check(path, ["--allow-inconsistent"])
        XCTAssertEqual(allowed.status, 0, "\(what) with --allow-inconsistent: \(allowed.stderr)", file: file, line: line)
    }

    func anomalies(_ path: String) throws -> BuildAnomalies { Analysis.run(file: try TraceFile(path: path)).model.anomalies }

    func testCheckRefusesDamagedAndAlteredTraces() throws {
        let dir = Paths.tempDir("inconsistent")
        let original = try recording(in: dir)
        let events = original.readAllEvents()
        func path(_ name: String) -> String { dir.appendingPathComponent(name + ".qtrace").path }

        // The recording written back unchanged passes: what follows fails for its corruption.
        try write(events, like: original, to: path("unchanged"))
        let honest = check(path("unchanged"))
        XCTAssertEqual(honest.status, 0, honest.stderr)
        XCTAssertEqual(honest.stdout, "ok: 1 bound holds\n")
        XCTAssertEqual(try anomalies(path("unchanged")).inconsistencies, 0)

        // Every item id set to 1.
        try write(events.map { e in
            var e = e
            if [.enqueue, .start, .end].contains(e.type) { e.a = 1 }
            return e
        }, like: original, to: path("ids"))
        XCTAssertGreaterThan(try anomalies(path("ids")).reusedItemIds, 0)
        assertRefused(path("ids"), "every item id 1")

        // START and END records swapped.
        try write(events.map { e in
            var e = e
            if e.type == .start { e.type = .end; e.arg = 0 } else if e.type == .end { e.type = .start }
            return e
        }, like: original, to: path("swapped"))
        XCTAssertGreaterThan(try anomalies(path("swapped")).mismatchedEnds, 0)
        assertRefused(path("swapped"), "START and END swapped")

        // The set-target record of fx.chain.c rewritten onto fx.chain.a: a → b → c → a.
        let address = { (label: String) in events.first { $0.type == .queueCreate && $0.string == label }?.a }
        let a = try XCTUnwrap(address("fx.chain.a")), c = try XCTUnwrap(address("fx.chain.c"))
        XCTAssertEqual(events.filter { $0.type == .setTarget && $0.a == c }.count, 1)
        try write(events.map { e in
            var e = e
            if e.type == .setTarget && e.a == c { e.b = a }
            return e
        }, like: original, to: path("loop"))
        XCTAssertGreaterThan(try anomalies(path("loop")).itemsRunInTargetLoops, 0)
        assertRefused(path("loop"), "target loop")

        // A record far outside the trace's time range (the reader drops it).
        var late = events
        let lastEnd = try XCTUnwrap(late.lastIndex { $0.type == .end })
        late[lastEnd].time = 1 << 51
        try write(late, like: original, to: path("late"))
        assertRefused(path("late"), "a record out of range")

        // A valid header followed by 10 MB of random bytes.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path("unchanged"))).prefix(TraceLayout.headerSize))
        var random = SplitMix64(seed: 26)
        for _ in 0..<(10_000_000 / 8) { withUnsafeBytes(of: random.next()) { bytes += $0 } }
        try Data(bytes).write(to: URL(fileURLWithPath: path("random")))
        assertRefused(path("random"), "random bytes after the header")
    }
}
