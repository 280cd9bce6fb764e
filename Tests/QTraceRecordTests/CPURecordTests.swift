// `qtrace record --cpu`: real perf samples of a real program, stored in its trace, symbolized
// and attributed to the queues whose items were running (the "done when" checks).
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class CPURecordTests: XCTestCase {
    override class func tearDown() {
        Paths.removeTempRoot()
        super.tearDown()
    }

    /// Folded stacks (`qtrace export --format folded`): per root (queue), the leaf functions'
    /// counts (self) and how many samples contain each function (total).
    struct Folded {
        var samples: [String: Int] = [:]
        var selfCounts: [String: [String: Int]] = [:]
        var totalCounts: [String: [String: Int]] = [:]

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                guard let space = line.lastIndex(of: " "), let count = Int(line[line.index(after: space)...]) else { continue }
                let frames = line[..<space].split(separator: ";").map(String.init)
                guard let root = frames.first, let leaf = frames.last else { continue }
                samples[root, default: 0] += count
                selfCounts[root, default: [:]][leaf, default: 0] += count
                for function in Set(frames.dropFirst()) { totalCounts[root, default: [:]][function, default: 0] += count }
            }
        }

        func share(_ function: String, of root: String, total: Bool = false) -> Double {
            let counts = total ? totalCounts[root] : selfCounts[root]
            return Double(counts?[function] ?? 0) / Double(max(samples[root] ?? 0, 1))
        }

        /// Every function the root's samples contain.
        func functions(of root: String) -> Set<String> { Set(totalCounts[root]?.keys.map { $0 } ?? []) }
    }

    private func recordWithSamples(_ scenario: String, file: StaticString = #filePath, line: UInt = #line) throws -> (String, Folded) {
        let dir = Paths.tempDir("cpu-\(scenario)")
        let (traced, path) = record([Paths.fixtures, scenario], in: dir, extraArgs: ["--cpu"])
        XCTAssertEqual(traced.status, 0, traced.stderr, file: file, line: line)
        XCTAssertEqual(traced.stdout.hasPrefix("\(scenario) done"), true, traced.stdout, file: file, line: line)
        XCTAssertTrue(traced.stderr.contains("samples"), traced.stderr, file: file, line: line)
        let trace = try TraceFile(path: path)
        XCTAssertGreaterThanOrEqual(trace.header.versionMinor, TraceLayout.samplesVersionMinor, file: file, line: line)
        XCTAssertGreaterThan(trace.sampleEventCount, 0, file: file, line: line)
        XCTAssertFalse(trace.threads.contains { $0.tid == TraceLayout.samplesStreamTid }, "the samples stream is no thread")
        let folded = dir.appendingPathComponent("trace.folded").path
        let exported = runProgram([Paths.qtrace, "export", path, "--format", "folded", "-o", folded],
                                  environment: ["XDG_CACHE_HOME": dir.path])
        XCTAssertEqual(exported.status, 0, exported.stderr, file: file, line: line)
        return (path, Folded(try String(contentsOfFile: folded, encoding: .utf8)))
    }

    /// fx.cpu.hot's items spend their CPU in checksumBlock → mixRound: mixRound is the queue's
    /// top function with at least half of its samples, and checksumBlock is on most stacks.
    func testQueueTopFunctionIsTheHotFunction() throws {
        let (path, folded) = try recordWithSamples("cpu-hot")
        let queue = "fx.cpu.hot"
        XCTAssertGreaterThanOrEqual(folded.samples[queue] ?? 0, 100, "20 items × 10 ms CPU at 999 Hz: \(folded.samples)")
        let top = try XCTUnwrap(folded.selfCounts[queue]?.max { ($0.value, $1.key) < ($1.value, $0.key) })
        XCTAssertEqual(top.key, "CPUWork.mixRound(_:_:)", "\(folded.selfCounts[queue] ?? [:])")
        XCTAssertGreaterThanOrEqual(folded.share("CPUWork.mixRound(_:_:)", of: queue), 0.5)
        XCTAssertGreaterThanOrEqual(folded.share("CPUWork.checksumBlock(_:rounds:)", of: queue, total: true), 0.8,
                                    "complete stacks through the callee: \(folded.totalCounts[queue] ?? [:])")

        // `stats --cpu` names the same function first for the queue.
        let stats = runProgram([Paths.qtrace, "stats", "--cpu", "--wide", path])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        let section = try XCTUnwrap(stats.stdout.components(separatedBy: "QUEUE fx.cpu.hot:").dropFirst().first, stats.stdout)
        let firstRow = section.split(separator: "\n").dropFirst(3).first.map(String.init) ?? ""
        XCTAssertTrue(firstRow.hasPrefix("CPUWork.mixRound(_:_:)"), stats.stdout)

        // So does the JSON summary's statistics.cpu.
        let json = runProgram([Paths.qtrace, "stats", "--json", path])
        XCTAssertEqual(json.status, 0, json.stderr)
        let summary = try AnalysisSummary.decode(Data(json.stdout.utf8))
        let cpu = try XCTUnwrap(summary.statistics.cpu)
        XCTAssertEqual(cpu.hz, 999)
        XCTAssertEqual(cpu.insideItems + cpu.outsideItems, cpu.samples)
        let hot = try XCTUnwrap(cpu.queues.first { $0.name == queue })
        XCTAssertEqual(hot.functions.first?.function, "CPUWork.mixRound(_:_:)")
        XCTAssertGreaterThanOrEqual(hot.functions.first?.selfShare ?? 0, 0.5)
    }

    /// Two queues at once doing different work: each queue's samples name its own functions.
    func testTwoQueuesGetTheirOwnFunctions() throws {
        let (_, folded) = try recordWithSamples("cpu-two-queues")
        let mix = "fx.cpu.mix", primes = "fx.cpu.primes"
        for queue in [mix, primes] { XCTAssertGreaterThanOrEqual(folded.samples[queue] ?? 0, 60, "\(folded.samples)") }
        XCTAssertGreaterThanOrEqual(folded.share("CPUWork.checksumBlock(_:rounds:)", of: mix, total: true), 0.8)
        XCTAssertGreaterThanOrEqual(folded.share("CPUWork.countPrimes(below:)", of: primes, total: true), 0.8)
        // No cross-attribution beyond sampling noise (a sample at an item's very edge).
        XCTAssertLessThanOrEqual(folded.share("CPUWork.countPrimes(below:)", of: mix, total: true), 0.02)
        XCTAssertLessThanOrEqual(folded.share("CPUWork.checksumBlock(_:rounds:)", of: primes, total: true), 0.02)
    }

    func testBadRateIsOneLineBeforeTheProgramRuns() {
        let dir = Paths.tempDir("cpu-bad")
        let (run, path) = record([Paths.fixtures, "exit-code", "0"], in: dir, extraArgs: ["--cpu=0"])
        XCTAssertEqual(run.status, 64, "a usage error")
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("--cpu=0"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// A program that never uses Dispatch writes no trace: nothing to add samples to, no error.
    func testAProgramWithoutDispatchIsNoError() {
        let dir = Paths.tempDir("cpu-nodispatch")
        let (run, _) = record(["/bin/true"], in: dir, extraArgs: ["--cpu"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("error"), run.stderr)
    }

    func testFoldedExportOfATraceWithoutSamplesIsAnError() {
        let dir = Paths.tempDir("cpu-none")
        let (run, path) = record([Paths.fixtures, "sched"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let exported = runProgram([Paths.qtrace, "export", path, "--format", "folded", "-o", dir.appendingPathComponent("x").path])
        XCTAssertEqual(exported.status, 2)
        XCTAssertTrue(exported.stderr.contains("no CPU samples"), exported.stderr)
    }
}

extension CPURecordTests {
    func testMissingPerfFailsBeforeTheProgramRuns() {
        assertMissingPerfFailsBeforeTheProgramRuns(option: "--cpu")
    }

    /// real-cpu.html for Tests/BrowserTests/test_cpu.py: the report (symbolized by `qtrace
    /// report`, as users get it) of cpu-hot recorded with --cpu.
    func testWriteCPUReportForTheBrowserTests() throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] else {
            throw XCTSkip("QTRACE_BROWSER_FIXTURES is not set (make test sets it)")
        }
        let (run, path) = record([Paths.fixtures, "cpu-hot"], in: URL(fileURLWithPath: dir), name: "real-cpu", extraArgs: ["--cpu"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = runProgram([Paths.qtrace, "report", path, "-o", "\(dir)/real-cpu.html"])
        XCTAssertEqual(report.status, 0, report.stderr)
    }
}

/// `record OPTION` without perf: one line, non-zero exit, and the program never ran (--sched, --cpu).
func assertMissingPerfFailsBeforeTheProgramRuns(option: String, file: StaticString = #filePath, line: UInt = #line) {
    let dir = Paths.tempDir("noperf\(option)")
    let marker = dir.appendingPathComponent("ran").path
    let (result, _) = record(["/bin/sh", "-c", "touch \(marker)"], in: dir, extraArgs: [option],
                             environment: ["PATH": "/nonexistent"])
    XCTAssertNotEqual(result.status, 0, file: file, line: line)
    XCTAssertTrue(result.stderr.contains("\(option) needs perf, which is not installed"), result.stderr, file: file, line: line)
    XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr, file: file, line: line)
    XCTAssertFalse(FileManager.default.fileExists(atPath: marker), file: file, line: line)
}
