// End to end: a program recorded with the LTTng shim reads back (QTraceCTF) as the same events
// as its embedded-format recording. Every test runs its own session daemon in a private mount
// namespace and stops it by PID.
import Foundation
import QTraceCTF
import QTraceFormat
@testable import QTraceRecording
import XCTest

final class LTTngRecordTests: XCTestCase {
    override class func tearDown() {
        TestPaths.cleanUp()
        super.tearDown()
    }

    /// `LTTngSession` (what `qtrace record --backend lttng` uses) records all-apis; the CTF
    /// reads back with the embedded recording's counts, and its conversion to the embedded
    /// format reads back as exactly the same events.
    func testLTTngRecordingMatchesEmbeddedRecording() throws {
        try requireLTTng()
        let dir = TestPaths.tempDir("session")
        let namespace = try PrivateLTTngNamespace()
        defer { namespace.close() }
        let (recording, programOutput) = try recordThroughLTTngSession(["all-apis"], in: dir, namespace: namespace)
        XCTAssertEqual(recording.status, 0, programOutput)
        XCTAssertTrue(programOutput.contains("allapis counter=20"), programOutput)
        XCTAssertNotEqual(namespace.run(["lttng", "--no-sessiond", "list"]).status, 0, "the session's own daemon is stopped")

        let ctf = try CTFTraceReader(path: recording.traceDirectory).read()
        let embedded = try TraceFile(path: recordEmbedded(["all-apis"], in: dir))
        XCTAssertEqual(EventCensus(ctf.events), EventCensus(embedded.readAllEvents()))
        XCTAssertEqual(EventCensus(ctf.events).itemsPerQueue["fx.serial"], EventCensus(embedded.readAllEvents()).itemsPerQueue["fx.serial"])
        assertHeaderFacts(ctf.process, embedded.header)
        assertTimeOrdered(ctf.events)

        // The conversion (as `qtrace record --backend lttng` does it) is lossless: the embedded
        // reader gives back the very same events.
        let converted = dir.appendingPathComponent("converted.qtrace").path
        let written = try LTTngSession.convert(traceDirectory: recording.traceDirectory, mainPath: converted,
                                               exitStatus: recording.status)
        XCTAssertEqual(written, [converted], "one process, one trace")
        let reread = try TraceFile(path: converted)
        assertSameEventsPerThread(reread.readAllEvents(), ctf.events)
        XCTAssertEqual(reread.header.pid, ctf.process.pid)
        XCTAssertEqual(reread.header.exitStatus, 0)
        XCTAssertEqual(Set(reread.threads.map(\.tid)), Set(ctf.process.threads.map(\.tid)))
        XCTAssertEqual(reread.threads.first?.name, "qtrace-fixtures")

        // Converting every process in one pass (what `qtrace stats DIR` does) gives the same.
        let all = try CTFTraceReader(path: recording.traceDirectory).convertAll { _, pid, _ in dir.appendingPathComponent("all-\(pid).qtrace").path }
        XCTAssertEqual(all.map(\.process.pid), [ctf.process.pid])
        assertSameEventsPerThread(try TraceFile(path: all[0].path).readAllEvents(), ctf.events)
    }

    /// A user's own session with everything enabled (lttng-ust's own statedump and libc
    /// wrapper events, interleaved on the same threads), per-process buffers (the process is
    /// named by the trace environment) and an extra context: only the qtrace events come
    /// out, with the embedded recording's counts.
    func testForeignEventsAreIgnored() throws {
        try requireLTTng()
        let dir = TestPaths.tempDir("foreign")
        let lttngShim = try TestPaths.lttngShim.get()
        let namespace = try PrivateLTTngNamespace()
        defer { namespace.close() }
        let pidFile = dir.appendingPathComponent("sessiond.pid").path
        let started = namespace.run(["lttng-sessiond", "--daemonize", "--no-kernel", "--pidfile=\(pidFile)"])
        XCTAssertEqual(started.status, 0, started.output)
        let daemonPid = try XCTUnwrap(pid_t((try? String(contentsOfFile: pidFile, encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        defer { stopDaemon(daemonPid) }

        let traceDir = dir.appendingPathComponent("trace").path
        for command in [["create", "mine", "--output=\(traceDir)"],
                        ["enable-channel", "-u", "-s", "mine", "--buffers-pid", "mine-channel"],
                        ["enable-event", "-u", "-s", "mine", "-a", "-c", "mine-channel"],
                        ["add-context", "-u", "-s", "mine", "-c", "mine-channel", "-t", "vtid", "-t", "procname"],
                        ["start", "mine"]] {
            let result = namespace.run(["lttng"] + command)
            XCTAssertEqual(result.status, 0, "lttng \(command): \(result.output)")
        }
        let preload = "/usr/lib/x86_64-linux-gnu/liblttng-ust-libc-wrapper.so:\(lttngShim)"
        let run = namespace.run(["env", "LD_PRELOAD=\(preload)", TestPaths.fixtures, "all-apis"])
        XCTAssertEqual(run.status, 0, run.output)
        namespace.run(["lttng", "stop", "mine"])
        namespace.run(["lttng", "destroy", "mine"])

        let text = namespace.run(["babeltrace2", traceDir]).output
        XCTAssertTrue(text.contains("lttng_ust_libc:malloc"), "the trace should hold foreign events")
        let reader = try CTFTraceReader(path: traceDir)
        let processes = try reader.processes()
        XCTAssertEqual(processes.count, 1, "only the fixture recorded qtrace events")
        let ctf = try reader.read()
        XCTAssertTrue(ctf.process.hasProcessEvent)
        let embedded = try TraceFile(path: recordEmbedded(["all-apis"], in: dir))
        XCTAssertEqual(EventCensus(ctf.events), EventCensus(embedded.readAllEvents()))
        XCTAssertTrue(ctf.events.allSatisfy { $0.tid != 0 })
        // The purpose-built decoder skips the foreign events exactly as libbabeltrace2 does.
        try assertDecodersAgree(traceDir)

        // The qtrace commands take the session's directory as it is.
        let stats = runCommand([TestPaths.qtrace, "stats", "--all", traceDir])
        XCTAssertEqual(stats.status, 0, stats.output)
        for label in ["fx.serial", "fx.concurrent", "fx.child"] { XCTAssertTrue(stats.output.contains(label), stats.output) }
        let json = runCommand([TestPaths.qtrace, "stats", "--json", traceDir])
        XCTAssertEqual(json.status, 0, json.output)
        let summary = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let queues = (summary?["statistics"] as? [String: Any])?["queues"] as? [[String: Any]] ?? []
        let embeddedSummary = runCommand([TestPaths.qtrace, "stats", "--json", dir.appendingPathComponent("embedded.qtrace").path])
        let embeddedQueues = ((try JSONSerialization.jsonObject(with: Data(embeddedSummary.output.utf8)) as? [String: Any])?["statistics"]
            as? [String: Any])?["queues"] as? [[String: Any]] ?? []
        func items(_ queues: [[String: Any]], _ label: String) -> Int? {
            queues.first { $0["label"] as? String == label }?["items"] as? Int
        }
        // (fx.serial also runs source handlers, whose count depends on timing.)
        XCTAssertNotNil(items(queues, "fx.concurrent"))
        XCTAssertEqual(items(queues, "fx.concurrent"), items(embeddedQueues, "fx.concurrent"))
        let check = runCommand([TestPaths.qtrace, "check", traceDir, "--max-wait", "fx.*=3600s"])
        XCTAssertEqual(check.status, 0, check.output)
    }

    /// A process that exec's another Dispatch program: two images with one pid, each a trace of
    /// its own, named as the embedded recorder names them (TRACE.qtrace, TRACE.PID.2.qtrace),
    /// the exit status on the last. (They were one file mixing both programs.)
    func testAnExecdProgramIsAProcessOfItsOwn() throws {
        try requireLTTng()
        let dir = TestPaths.tempDir("exec")
        let namespace = try PrivateLTTngNamespace()
        defer { namespace.close() }
        let (recording, output) = try recordThroughLTTngSession(["exec-into", TestPaths.fixtures, "all-apis"], in: dir, namespace: namespace)
        XCTAssertEqual(recording.status, 0, output)
        XCTAssertTrue(output.contains("allapis counter=20"), output)
        let main = dir.appendingPathComponent("exec.qtrace").path
        let written = try LTTngSession.convert(traceDirectory: recording.traceDirectory, mainPath: main, exitStatus: recording.status)
        XCTAssertEqual(written.count, 2, "\(written)")
        let first = try TraceFile(path: main), second = try TraceFile(path: try XCTUnwrap(written.last))
        XCTAssertEqual(first.header.pid, second.header.pid)
        XCTAssertEqual(written.last, dir.appendingPathComponent("exec.\(first.header.pid).2.qtrace").path)
        XCTAssertTrue(first.header.commandLine.contains("exec-into"), first.header.commandLine)
        XCTAssertTrue(second.header.commandLine.hasSuffix("all-apis"), second.header.commandLine)
        XCTAssertNil(first.header.exitStatus)
        XCTAssertEqual(second.header.exitStatus, 0)
        // all-apis's queues are in its own image only.
        let secondQueues = Set(second.readAllEvents().filter { $0.type == .queueCreate }.compactMap(\.string))
        let firstQueues = Set(first.readAllEvents().filter { $0.type == .queueCreate }.compactMap(\.string))
        XCTAssertTrue(secondQueues.contains("fx.serial"), "\(secondQueues)")
        XCTAssertFalse(firstQueues.contains("fx.serial"), "\(firstQueues)")
    }

    /// Reading a directory without a CTF trace, or one without qtrace events, says so.
    func testNotATraceIsReported() throws {
        let empty = TestPaths.tempDir("empty")
        XCTAssertThrowsError(try CTFTraceReader(path: empty.path)) { error in
            XCTAssertEqual(error as? CTFReadError, .noTrace(path: empty.path))
        }
        let foreign = TestPaths.tempDir("no-qtrace")
        try Data("/* CTF 1.8 */ event { name = \"other:thing\"; };".utf8).write(to: foreign.appendingPathComponent("metadata"))
        XCTAssertThrowsError(try CTFTraceReader(path: foreign.path)) { error in
            XCTAssertEqual(error as? CTFReadError, .noQTraceEvents(path: foreign.path))
        }
        // The commands say so in one line, with the fix, and exit 2.
        for command in ["stats", "report", "export"] {
            let run = runCommand([TestPaths.qtrace, command, foreign.path])
            XCTAssertEqual(run.status, 2, run.output)
            XCTAssertEqual(run.output.split(separator: "\n").count, 1, run.output)
            XCTAssertTrue(run.output.contains("no qtrace events") && run.output.contains("add-context -u -t vtid"), run.output)
        }
        let notATrace = runCommand([TestPaths.qtrace, "stats", empty.path])
        XCTAssertEqual(notATrace.status, 2, notATrace.output)
        XCTAssertTrue(notATrace.output.contains("directory without an LTTng (CTF) trace"), notATrace.output)
    }

    // MARK: Helpers

    private func assertHeaderFacts(_ process: CTFProcess, _ embedded: TraceHeader, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(process.hasProcessEvent, file: file, line: line)
        XCTAssertEqual(process.header.mainTid, process.pid, file: file, line: line)
        XCTAssertEqual(process.header.ncpu, embedded.ncpu, file: file, line: line)
        XCTAssertNotEqual(process.header.mainQueue, 0, file: file, line: line)
        XCTAssertEqual(process.header.executablePath, embedded.executablePath, file: file, line: line)
        XCTAssertTrue(process.header.commandLine.hasSuffix("qtrace-fixtures all-apis"), process.header.commandLine, file: file, line: line)
        XCTAssertTrue(process.header.flags.contains(.finalizedByProcess), "qtrace:process_end was recorded", file: file, line: line)
        XCTAssertEqual(process.header.droppedEvents, 0, file: file, line: line)
        XCTAssertGreaterThan(process.header.initMonoNs, 0, file: file, line: line)
        XCTAssertEqual(process.eventCount, process.threads.map(\.eventCount).reduce(0, +), file: file, line: line)
    }

    private func assertTimeOrdered(_ events: [Event], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(events.isEmpty, file: file, line: line)
        XCTAssertTrue(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time }, "events in time order", file: file, line: line)
    }
}

/// The same events thread by thread (each thread's order is its recording order). Events of
/// different threads with equal times may merge in either order, and a time may round by 1 ns
/// through the TSC calibration of the converted file.
func assertSameEventsPerThread(_ a: [Event], _ b: [Event], file: StaticString = #filePath, line: UInt = #line) {
    let byThreadA = Dictionary(grouping: a, by: \.tid), byThreadB = Dictionary(grouping: b, by: \.tid)
    XCTAssertEqual(Set(byThreadA.keys), Set(byThreadB.keys), "threads", file: file, line: line)
    for (tid, eventsA) in byThreadA.sorted(by: { $0.key < $1.key }) {
        let eventsB = byThreadB[tid] ?? []
        XCTAssertEqual(eventsA.count, eventsB.count, "events of thread \(tid)", file: file, line: line)
        for (x, y) in zip(eventsA, eventsB) {
            var y = y
            if x.time > y.time ? x.time - y.time <= 1 : y.time - x.time <= 1 { y.time = x.time }
            if x != y {
                XCTFail("thread \(tid): \(x) != \(y)", file: file, line: line)
                break
            }
        }
    }
}
