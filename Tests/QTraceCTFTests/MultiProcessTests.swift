// Trace directories as input and multi-process reports: `qtrace record --relayd` streams to an
// lttng-relayd on loopback (started here, in a private namespace, stopped by PID) and the
// relayd's stored output is reported; a program that forks reports as one report with a lane
// group per process; `ReportInput.merged` moves times and indexes.
import Foundation
@testable import QTraceRecording
import QTraceFormat
import QTraceReport
import QTraceViewModel
import XCTest

final class MultiProcessTests: XCTestCase {
    override class func tearDown() {
        TestPaths.cleanUp()
        super.tearDown()
    }

    /// qtrace record --relayd streams all-apis to a relayd on 127.0.0.1 (free ports, own output
    /// directory); the report of what the relayd stored has the program's queues and items, as
    /// many as the embedded recording's report. An unreachable relayd is a one-line error.
    func testRecordThroughRelaydAndReportWhatItStored() throws {
        try requireLTTng()
        guard runCommand(["sh", "-c", "command -v lttng-relayd"]).status == 0 else {
            throw XCTSkip("lttng-relayd is not installed (apt-get install lttng-tools)")
        }
        let dir = TestPaths.tempDir("relayd")
        let namespace = try PrivateLTTngNamespace()
        defer { namespace.close() }

        // Nobody listens on these ports: the recording fails before the program runs.
        let closed = freeLoopbackPorts(2)
        let unreachable = namespace.run([TestPaths.qtrace, "record", "--relayd", "net://127.0.0.1:\(closed[0]):\(closed[1])",
                                         "--", TestPaths.fixtures, "exit-code", "0"])
        XCTAssertEqual(unreachable.status, 64, unreachable.output)
        XCTAssertTrue(unreachable.output.contains("cannot reach lttng-relayd at net://127.0.0.1"), unreachable.output)
        XCTAssertEqual(unreachable.output.split(separator: "\n").count, 1, unreachable.output)
        XCTAssertNotEqual(namespace.run(["lttng", "--no-sessiond", "list"]).status, 0, "qtrace stopped the daemon it started")

        let output = dir.appendingPathComponent("relayd-output").path
        let relayd = try TestRelayd(namespace: namespace, outputDirectory: output, log: dir.appendingPathComponent("relayd.log").path)
        let recorded = namespace.run([TestPaths.qtrace, "record", "--relayd", relayd.url, "--", TestPaths.fixtures, "all-apis"])
        relayd.stop()
        XCTAssertEqual(recorded.status, 0, recorded.output)
        XCTAssertTrue(recorded.output.contains("allapis counter=20"), recorded.output)
        XCTAssertTrue(recorded.output.contains("qtrace: report it with: qtrace report RELAYD_OUTPUT/"), recorded.output)
        XCTAssertNotEqual(namespace.run(["lttng", "--no-sessiond", "list"]).status, 0, "qtrace stopped the daemon it started")

        // The relayd stored it as OUTPUT/HOST/SESSION-DATE-TIME/ust/...
        let host = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: output).first)
        let sessions = try FileManager.default.contentsOfDirectory(atPath: "\(output)/\(host)")
        XCTAssertEqual(sessions.count, 1, "\(sessions)")
        XCTAssertTrue(sessions[0].hasPrefix("qtrace-"), sessions[0])

        let streamed = try ReportGeneration.input(tracePaths: [output], command: "report")
        XCTAssertEqual(streamed.processes.count, 1)
        XCTAssertEqual(streamed.processes.first?.host, host, "the host from the trace's environment")
        XCTAssertEqual(streamed.processes.first?.executable, "qtrace-fixtures")
        let embedded = try recordEmbeddedReport(["all-apis"], in: dir)
        for label in ["fx.serial", "fx.concurrent", "fx.child"] { XCTAssertGreaterThan(itemCount(streamed, label), 0, label) }
        // fx.serial also runs source handlers, whose count depends on timing: compare the others.
        for label in ["fx.concurrent", "fx.child"] {
            XCTAssertEqual(itemCount(streamed, label), itemCount(embedded, label), label)
        }

        // The command line writes the report of the relayd's output directory.
        let report = dir.appendingPathComponent("streamed.html").path
        let cli = runCommand([TestPaths.qtrace, "report", output, "-o", report])
        XCTAssertEqual(cli.status, 0, cli.output)
        XCTAssertGreaterThan((try? FileManager.default.attributesOfItem(atPath: report)[.size] as? Int) ?? 0, 10_000)
    }

    /// A program that forks, both processes using Dispatch: `qtrace record` writes two traces
    /// and one report with a lane group per process, each with its own queue and item.
    func testForkedProcessesMakeOneReportWithALaneGroupEach() throws {
        let dir = TestPaths.tempDir("fork")
        let trace = dir.appendingPathComponent("fork.qtrace").path
        let run = runCommand([TestPaths.qtrace, "record", "-o", trace, "--", TestPaths.fixtures, "fork"],
                             environment: ["QTRACE_SHIM": try TestPaths.embeddedShim.get()])
        XCTAssertEqual(run.status, 0, run.output)
        let traces = RecordingFiles.collectTraces(mainPath: trace)
        XCTAssertEqual(traces.count, 2, "\(traces)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: RecordingFiles.reportPath(for: trace)))

        let merged = try ReportGeneration.input(tracePaths: traces, command: "report")
        XCTAssertEqual(merged.processes.count, 2)
        let parentPid = try TraceFile(path: traces[0]).header.pid, childPid = try TraceFile(path: traces[1]).header.pid
        XCTAssertEqual(merged.processes.map(\.pid), [Int(parentPid), Int(childPid)])
        XCTAssertTrue(merged.processes.allSatisfy { $0.title.hasSuffix("qtrace-fixtures @ \(TraceInputs.localHostName)") },
                      "\(merged.processes.map(\.title))")
        // Per process: its own queue with its one item, on its own threads.
        for (process, label) in [(0, "fx.parent"), (1, "fx.forked")] {
            let queues = merged.queues.filter { $0.label == label }
            XCTAssertEqual(queues.map(\.process), [process], label)
            XCTAssertEqual(itemCount(merged, label), 1, label)
            let item = try XCTUnwrap((0..<merged.items.count).first { merged.queues[Int(merged.items.queue[$0])].label == label })
            XCTAssertEqual(merged.threads[Int(merged.items.thread[item])].process, process)
            // On the common time axis, within the process's own span.
            let p = merged.processes[process]
            XCTAssertGreaterThanOrEqual(merged.items.startNs[item], p.offsetNs)
            XCTAssertLessThanOrEqual(merged.items.endNs[item], p.offsetNs + p.durationNs)
        }
        XCTAssertEqual(merged.processes[0].offsetNs, 0, "the parent started first")
        XCTAssertGreaterThan(merged.processes[1].offsetNs, 0, "the child started after")
        XCTAssertEqual(Set(merged.threads.map(\.process)), [0, 1])
        XCTAssertEqual(merged.stats.first { $0.id == "queues" }?.columns.first?.key, "process")

        // Given together on the command line: one report, and one Chrome trace with a pid per process.
        let both = dir.appendingPathComponent("both").path
        let report = runCommand([TestPaths.qtrace, "report", traces[0], traces[1], "-o", both + ".html"])
        XCTAssertEqual(report.status, 0, report.output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: both + ".html"))
        let export = runCommand([TestPaths.qtrace, "export", traces[0], traces[1], "-o", both + ".json"])
        XCTAssertEqual(export.status, 0, export.output)
        let chrome = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: both + ".json"))) as? [String: Any]
        let events = chrome?["traceEvents"] as? [[String: Any]] ?? []
        let processNames = events.filter { $0["name"] as? String == "process_name" }.compactMap { $0["pid"] as? Int }
        XCTAssertEqual(processNames, [Int(parentPid), Int(childPid)])
        let slicePids = Set(events.filter { $0["ph"] as? String == "X" }.compactMap { $0["pid"] as? Int })
        XCTAssertEqual(slicePids, [Int(parentPid), Int(childPid)], "each item on its own process's track")

        // The browser tests (Tests/BrowserTests/test_merged_report.py) open this report.
        if let fixtures = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] {
            try ReportWriter.write(merged, to: "\(fixtures)/real-merged.html")
        }
    }

    /// Merging moves every time by the process's wall-clock offset (-1 stays "none") and
    /// every index past the processes before it.
    func testMergeShiftsTimesAndIndexes() {
        func process(pid: Int, realtime: Int64, items: Int) -> ReportInput {
            var input = ReportInput(meta: ReportMeta(title: "p\(pid)", pid: pid, durationNs: 1_000))
            input.processes = [ReportProcess(pid: pid, executable: "p\(pid)", realtimeStartNs: realtime, durationNs: 1_000)]
            input.threads = [ReportThread(index: 0, tid: Int64(pid), name: "", kind: .main, startNs: 0, endNs: 1_000)]
            input.queues = [ReportQueue(index: 0, label: "q", kind: .serial), ReportQueue(index: 1, label: "t", kind: .serial, targetIndex: 0)]
            for i in 0..<items {
                input.items.append(ReportItem(queue: 1, kind: .async, submitterThread: 0, thread: 0, enqueueNs: Int64(10 * i),
                                              startNs: i == items - 1 ? -1 : Int64(10 * i + 5), endNs: -1,
                                              parent: i > 0 ? i - 1 : -1))
            }
            input.blocked = [ReportBlockedInterval(thread: 0, startNs: 1, endNs: 2, cause: .sync, item: 0)]
            input.findings = [ReportFinding(id: "x", severity: .warning, message: "m", startNs: 3, endNs: 4, queues: [1], threads: [0], items: [0])]
            input.counters = [ReportCounterSeries(name: "threads alive", kind: .threadsAlive, timesNs: [0, 500], values: [1, 2])]
            input.stats = [ReportTable(id: "queues", title: "Queues", rowObject: .queue, columns: [ReportColumn(key: "label", title: "Queue")],
                                       rows: [ReportRow(values: [.text("t")], objectIndex: 1)])]
            // Figures as the analysis gives every report input (ReportWriter refuses one without).
            (input.queues[0].items, input.queues[0].busyNs, input.queues[0].busyShare) = (0, 0, 0)
            (input.queues[1].items, input.queues[1].busyNs, input.queues[1].busyShare) = (items, 10, 0.01)
            (input.threads[0].items, input.threads[0].busyNs, input.threads[0].blockedNs) = (items - 1, 10, 1)
            input.queueTree = [ReportQueueTreeNode(queue: 0, parent: -1, subtreeBusyNs: 10),
                               ReportQueueTreeNode(queue: 1, parent: 0, subtreeBusyNs: 10)]
            return input
        }
        let merged = ReportInput.merged([process(pid: 1, realtime: 5_000, items: 2), process(pid: 2, realtime: 5_300, items: 3)])
        XCTAssertEqual(merged.processes.map(\.offsetNs), [0, 300])
        XCTAssertEqual(merged.meta.durationNs, 1_300)
        XCTAssertEqual(merged.threads.map(\.process), [0, 1])
        XCTAssertEqual(merged.queues.map(\.targetIndex), [-1, 0, -1, 2])
        XCTAssertEqual(merged.items.count, 5)
        XCTAssertEqual(merged.items[2], ReportItem(queue: 3, kind: .async, submitterThread: 1, thread: 1, enqueueNs: 300,
                                                   startNs: 305, endNs: -1, parent: -1))
        XCTAssertEqual(merged.items[4].parent, 3)
        XCTAssertEqual(merged.items[4].startNs, -1, "never started stays -1")
        XCTAssertEqual(merged.blocked.map(\.item), [0, 2])
        XCTAssertEqual(merged.findings.map(\.items), [[0], [2]])
        XCTAssertEqual(merged.findings.map(\.queues), [[1], [3]])
        XCTAssertEqual(merged.findings.map(\.process), [0, 1])
        XCTAssertEqual(merged.findings[1].startNs, 303)
        XCTAssertTrue(merged.findings[1].message.hasPrefix("2 p2: "), merged.findings[1].message)
        // Threads alive of both processes, summed on the common axis; each counts 0 after its end.
        let alive = merged.counters.first { $0.kind == .threadsAlive }
        XCTAssertEqual(alive?.timesNs, [0, 300, 500, 800, 1_000, 1_300])
        XCTAssertEqual(alive?.values, [1, 2, 3, 4, 2, 0])
        XCTAssertEqual(merged.meta.peakThreadsAlive, 4)
        XCTAssertEqual(merged.stats.map(\.id), ["processes", "queues"], "the Processes table first")
        XCTAssertEqual(merged.stats[1].rows.map(\.objectIndex), [1, 3])
        XCTAssertEqual(merged.stats[1].rows.map { $0.values.first }, [.text("1 p1"), .text("2 p2")])
        // A report of it encodes (indexes in range).
        XCTAssertNoThrow(try ReportWriter.write(merged, to: TestPaths.tempDir("merge").appendingPathComponent("m.html").path))
    }

    // MARK: Helpers

    private func itemCount(_ input: ReportInput, _ label: String) -> Int {
        (0..<input.items.count).filter { input.queues[Int(input.items.queue[$0])].label == label }.count
    }

    private func recordEmbeddedReport(_ arguments: [String], in dir: URL) throws -> ReportInput {
        try ReportGeneration.input(tracePaths: [recordEmbedded(arguments, in: dir)], command: "report")
    }
}
