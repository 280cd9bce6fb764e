// The flight recorder (issue 14 part 2): `qtrace record --ring 4M` keeps the most recent 4 MiB
// of a 20-second program; `qtrace snapshot` mid-run and the shim at the program's deadlock each
// write a snapshot that must hold the last events before its trigger, checked against the
// program's own log (fixture `flight`: queue fx.flight.N's 201 items ran before N was logged).
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceReport
import QTraceViewModel
import XCTest

final class FlightRecorderTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    /// The numbers the program logged so far, and its "deadlock after N" when it got there.
    func readLog(_ path: String) -> (done: [Int], deadlockAfter: Int?) {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var done: [Int] = [], deadlockAfter: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("deadlock after ") { deadlockAfter = Int(line.dropFirst(15)) } else if let n = Int(line) { done.append(n) }
        }
        return (done, deadlockAfter)
    }

    /// Per fx.flight.N queue: how many of its items have all of ENQUEUE, START and END.
    func completeItemsByQueue(_ summary: TraceSummary) -> [Int: Int] {
        var numberOf: [UInt64: Int] = [:]
        for (address, label) in summary.labels where label.hasPrefix("fx.flight.") {
            numberOf[address] = Int(label.dropFirst(10))
        }
        var result: [Int: Int] = [:]
        for item in summary.items().values {
            guard let enqueue = item.enqueue, item.start != nil, item.end != nil, let n = numberOf[enqueue.b] else { continue }
            result[n, default: 0] += 1
        }
        return result
    }

    func testSnapshotsHoldTheLastEventsBeforeTheirTriggers() throws {
        let dir = Paths.tempDir("flight")
        let trace = dir.appendingPathComponent("flight.qtrace").path
        let log = dir.appendingPathComponent("program.log").path
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: Paths.qtrace)
        recorder.arguments = ["record", "--ring", "4M", "--no-report", "-o", trace, "--", Paths.fixtures, "flight", "20", log]
        recorder.environment = ProcessInfo.processInfo.environment.merging(["QTRACE_SHIM": Paths.shim]) { $1 }
        // A file, not a pipe: the crash report is longer than a pipe holds, and a blocked
        // backtracer would keep the program from dying of its deadlock.
        let errorsPath = dir.appendingPathComponent("stderr.txt").path
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        recorder.standardError = FileHandle(forWritingAtPath: errorsPath)
        recorder.standardOutput = FileHandle.nullDevice
        let started = Date()
        try recorder.run()
        defer { if recorder.isRunning { recorder.terminate() } }

        // Mid-run: ten seconds in, the ring has been overwritten several times over.
        while Date().timeIntervalSince(started) < 10 { usleep(100_000) }
        let loggedBefore = try XCTUnwrap(readLog(log).done.last, "the program logged nothing in 10 s")
        let asked = runProgram([Paths.qtrace, "snapshot", String(recorder.processIdentifier)])
        let loggedAfter = try XCTUnwrap(readLog(log).done.last)
        XCTAssertEqual(asked.status, 0, asked.stderr)
        let firstPath = asked.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(firstPath, dir.appendingPathComponent("flight.snapshot-1.qtrace").path)
        XCTAssertTrue(asked.stderr.contains("flight recorder snapshot 1 (on request)"), asked.stderr)

        recorder.waitUntilExit()
        XCTAssertEqual(recorder.terminationStatus, 128 + SIGILL, "libdispatch traps on the deadlock, as without qtrace")
        let deadlockAfter = try XCTUnwrap(readLog(log).deadlockAfter, "the program never reached its deadlock")

        // Snapshot 1: the queues logged just before the request are complete, the first ones
        // were overwritten (but are still named: labels live in the metadata area).
        let first = try TraceSummary(path: firstPath)
        let firstRing = try XCTUnwrap(first.header.ring)
        XCTAssertTrue(first.header.flags.contains(.snapshot))
        XCTAssertEqual(firstRing.snapshotReason, .request)
        XCTAssertGreaterThan(firstRing.overwrittenEvents, 100_000, "10 s of items do not fit 4 MiB")
        let firstItems = completeItemsByQueue(first)
        for n in (loggedBefore - 20)...loggedBefore {
            XCTAssertEqual(firstItems[n], 201, "fx.flight.\(n) ran before the request: all its items are in the snapshot")
        }
        XCTAssertNil(firstItems[0], "the run's first queue was overwritten long ago")
        XCTAssertNotNil(first.queue("fx.flight.0"), "but it is still named")
        XCTAssertTrue(firstItems.keys.allSatisfy { $0 <= loggedAfter + 1 }, "nothing from after the snapshot")

        // Snapshot 2: taken by the shim at the deadlock, on the thread about to hang.
        let secondPath = dir.appendingPathComponent("flight.snapshot-2.qtrace").path
        let second = try TraceSummary(path: secondPath)
        XCTAssertEqual(second.header.ring?.snapshotReason, .deadlock)
        let secondItems = completeItemsByQueue(second)
        for n in (deadlockAfter - 20)...deadlockAfter {
            XCTAssertEqual(secondItems[n], 201, "fx.flight.\(n) ran before the deadlock")
        }
        XCTAssertEqual(second.count(.deadlock), 1)
        let model = Analysis.buildModel(file: try TraceFile(path: secondPath))
        let window = try XCTUnwrap(model.info.flightRecorder)
        XCTAssertEqual(window.reason, "deadlock detected")
        XCTAssertGreaterThan(window.overwrittenEvents, 0)
        XCTAssertLessThan(window.completeFromNs, try XCTUnwrap(window.askedAtNs))
        let stats = runProgram([Paths.qtrace, "stats", secondPath])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        XCTAssertTrue(stats.stdout.contains("window     flight recorder snapshot 2 (deadlock detected)"), stats.stdout)
        XCTAssertTrue(stats.stdout.contains("earlier events overwritten"), stats.stdout)

        // The program crashed: its ring stays behind as a readable trace.
        let ring = try TraceSummary(path: trace)
        XCTAssertTrue(ring.header.flags.contains(.ring))
        XCTAssertEqual(ring.header.exitStatus, 128 + SIGILL)
        let said = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        XCTAssertTrue(said.contains("qtrace: snapshot: \(secondPath)"), said)
    }

    /// The gallery's thread explosion: the shim snapshots it by itself, and a program that ends
    /// well leaves only its snapshots (the ring is removed at exit).
    func testAThreadExplosionTakesASnapshotAndTheRingGoesAtExit() throws {
        let dir = Paths.tempDir("flight-explosion")
        let untraced = runProgram([Paths.samples, "thread-explosion"])
        let (run, trace) = record([Paths.samples, "thread-explosion"], in: dir, name: "x", extraArgs: ["--ring", "1M"])
        XCTAssertEqual(run.status, untraced.status, run.stderr)
        XCTAssertEqual(run.stdout, untraced.stdout, "the program ran as without qtrace")
        XCTAssertFalse(FileManager.default.fileExists(atPath: trace), "the ring is removed when the program ends well")
        let snapshot = dir.appendingPathComponent("x.snapshot-1.qtrace").path
        let header = try TraceFile.readHeader(path: snapshot)
        XCTAssertEqual(header.ring?.snapshotReason, .threadExplosion)
        let model = Analysis.buildModel(file: try TraceFile(path: snapshot))
        let workers = model.threads.filter { $0.kind == .worker }.count
        XCTAssertGreaterThanOrEqual(workers, Thresholds.threadExplosionMinWorkers(cpus: model.info.ncpu),
                                    "taken once the workers reached the explosion threshold")
        XCTAssertTrue(run.stderr.contains("qtrace: snapshot: \(snapshot): flight recorder snapshot 1 (thread explosion detected)"), run.stderr)

        // The discarded ring's name points at the snapshots; the folder reads them.
        let gone = runProgram([Paths.qtrace, "stats", trace])
        XCTAssertEqual(gone.status, 2)
        XCTAssertTrue(gone.stderr.contains("its snapshots are \(snapshot)"), gone.stderr)
        let folder = runProgram([Paths.qtrace, "stats", dir.path])
        XCTAssertEqual(folder.status, 0, folder.stderr)
        XCTAssertTrue(folder.stdout.contains("window     flight recorder snapshot 1 (thread explosion detected)"), folder.stdout)

        // The snapshot's report, for the browser tests (test_real_reports.py: its window fact).
        if let fixtures = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] {
            let file = try TraceFile(path: snapshot)
            let result = Analysis.run(file: file)
            try ReportWriter.write(ReportInput(analysis: result, header: file.header, qtraceVersion: "test"), to: "\(fixtures)/real-snapshot.html")
            try AnalysisSummary(result: result, tracePath: snapshot, generator: "test").jsonData()
                .write(to: URL(fileURLWithPath: "\(fixtures)/real-snapshot.summary.json"))
        }
    }

    /// --cpu with a ring: the deadlock snapshot gets the samples of its own time range.
    func testSnapshotsGetTheirCPUSamples() throws {
        let dir = Paths.tempDir("flight-cpu")
        let log = dir.appendingPathComponent("program.log").path
        let (run, _) = record([Paths.fixtures, "flight", "2", log], in: dir, name: "c", extraArgs: ["--ring", "4M", "--cpu"])
        XCTAssertEqual(run.status, 128 + SIGILL, run.stderr)
        let snapshot = try TraceFile(path: dir.appendingPathComponent("c.snapshot-1.qtrace").path)
        XCTAssertEqual(snapshot.header.ring?.snapshotReason, .deadlock)
        XCTAssertGreaterThan(snapshot.sampleEventCount, 0, run.stderr)
        XCTAssertEqual(snapshot.invalidRecordCount, 0, "samples within the snapshot's range only")
    }

    func testSnapshotOfSomethingWithoutARingIsAClearError() {
        let noRing = runProgram([Paths.qtrace, "snapshot", String(getpid())])
        XCTAssertEqual(noRing.status, 2)
        XCTAssertTrue(noRing.stderr.contains("records no flight-recorder ring"), noRing.stderr)
        XCTAssertEqual(noRing.stderr.filter { $0 == "\n" }.count, 1, noRing.stderr)
        let badSize = runProgram([Paths.qtrace, "record", "--ring", "lots", "--", "/bin/true"])
        XCTAssertEqual(badSize.status, 64)
        XCTAssertTrue(badSize.stderr.contains("give a size such as 64M"), badSize.stderr)
    }
}
