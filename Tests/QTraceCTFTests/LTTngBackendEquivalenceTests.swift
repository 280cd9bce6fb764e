// Issue 6's "Done when": the same program recorded with both backends (embedded trace file,
// LTTng through `LTTngSession` and the conversion `qtrace record --backend lttng` does) gives
// the same work items per queue, the same event sequence per item and the same findings.
import Foundation
import QTraceAnalysis
import QTraceCTF
import QTraceFormat
@testable import QTraceRecording
import XCTest

final class LTTngBackendEquivalenceTests: XCTestCase {
    override class func tearDown() {
        TestPaths.cleanUp()
        super.tearDown()
    }

    func testBothBackendsGiveTheSameItemsAndFindings() throws {
        try requireLTTng()
        let dir = TestPaths.tempDir("backends")
        let namespace = try PrivateLTTngNamespace()
        defer { namespace.close() }
        let (recording, output) = try recordThroughLTTngSession(["all-apis"], in: dir, namespace: namespace)
        XCTAssertEqual(recording.status, 0, output)

        // This real trace also checks the purpose-built CTF decoder against libbabeltrace2.
        try assertDecodersAgree(recording.traceDirectory)

        let converted = dir.appendingPathComponent("converted.qtrace").path
        _ = try LTTngSession.convert(traceDirectory: recording.traceDirectory, mainPath: converted, exitStatus: recording.status)
        let embeddedPath = try recordEmbedded(["all-apis"], in: dir)

        let lttng = Analysis.run(file: try TraceFile(path: converted))
        let embedded = Analysis.run(file: try TraceFile(path: embeddedPath))
        let lttngItems = ItemCensus(lttng.model), embeddedItems = ItemCensus(embedded.model)
        XCTAssertEqual(lttngItems.itemsPerQueue.keys.sorted(), embeddedItems.itemsPerQueue.keys.sorted(), "queues with items")
        for (queue, items) in embeddedItems.itemsPerQueue.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(lttngItems.itemsPerQueue[queue] ?? [], items, "items of queue '\(queue)' (kind, origin, event sequence)")
        }
        XCTAssertGreaterThan(embeddedItems.itemsPerQueue["fx.serial"]?.count ?? 0, 0)
        XCTAssertEqual(findingIDs(lttng.findings), findingIDs(embedded.findings))

        // all-apis is a command-line tool (no main-thread rules, docs/findings.md): the
        // code-sites fixture runs from the main queue like an app and always blocks its main
        // thread in a group wait, a finding that does not depend on timing.
        let appDir = TestPaths.tempDir("backends-app")
        let (app, appOutput) = try recordThroughLTTngSession(["code-sites"], in: appDir, namespace: namespace)
        XCTAssertEqual(app.status, 0, appOutput)
        let appConverted = appDir.appendingPathComponent("converted.qtrace").path
        _ = try LTTngSession.convert(traceDirectory: app.traceDirectory, mainPath: appConverted, exitStatus: app.status)
        let appLTTng = Analysis.run(file: try TraceFile(path: appConverted))
        let appEmbedded = Analysis.run(file: try TraceFile(path: try recordEmbedded(["code-sites"], in: appDir)))
        XCTAssertEqual(findingIDs(appLTTng.findings), findingIDs(appEmbedded.findings))
        XCTAssertTrue(findingIDs(appEmbedded.findings).contains("main.blocking-call"), "\(appEmbedded.findings.map(\.id))")
    }

    /// Findings whose presence depends on how long something took or how threads were
    /// scheduled, not on what the program did: a priority inversion is reported only when the
    /// higher-QoS item waited over 1 ms; a slow handler, a long item, a hang, a long wait, an
    /// unbounded backlog, tiny items, a thread explosion and an apply without parallelism all
    /// compare durations or worker counts with thresholds.
    static let timingDependentFindings: Set<String> = [
        "qos.priority-inversion", "source.handler-too-slow", "main.long-item", "main.hang", "wait.long",
        "queue.unbounded-backlog", "queue.items-too-small", "threads.explosion", "apply.no-parallelism",
    ]

    private func findingIDs(_ findings: [Finding]) -> Set<String> {
        Set(findings.map(\.id)).subtracting(Self.timingDependentFindings)
    }
}

/// Work items per queue label: for each, its kind, origin and the events seen for it
/// (ENQUEUE, START, END), as a sorted list (threads and times are left out: they differ
/// between runs). Source handler runs are left out: events coalesce into a varying number
/// of runs (as EventCensus.timingDependent).
struct ItemCensus: Equatable {
    var itemsPerQueue: [String: [String]] = [:]

    init(_ model: TraceModel) {
        for item in model.items where item.origin != .sourceHandler {
            let queue = item.queue.map { model.queues[$0].label } ?? "(no queue)"
            var events: [String] = []
            if item.enqueueTime != noTime { events.append("ENQUEUE") }
            if item.startTime != noTime { events.append("START") }
            if item.endTime != noTime { events.append("END") }
            let signature = "\(item.kind) \(item.origin) \(item.isBarrier ? "barrier " : "")" + events.joined(separator: "→")
            itemsPerQueue[queue, default: []].append(signature)
        }
        for key in itemsPerQueue.keys { itemsPerQueue[key]!.sort() }
    }
}
