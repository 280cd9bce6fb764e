// `qtrace export --format perfetto` on real recordings, checked by decoding the file with
// Perfetto's official protos (scripts/perfetto-decode.py, the `perfetto` PyPI package): every
// item a slice on its thread with its id and run time, every enqueue and task flow, the
// counters, QTrace marks and intervals, one process per traced process.
import Foundation
import XCTest
import QTraceAnalysis
import QTraceFormat
import QTraceReport
import QTraceViewModel

final class PerfettoExportTests: XCTestCase {
    func testEveryItemIsASliceOnItsThreadWithItsFlow() throws {
        let dir = Paths.tempDir("perfetto-items")
        let (run, path) = record([Paths.fixtures, "all-apis"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let decoded = try export([path], in: dir)
        let result = Analysis.run(file: try TraceFile(path: path))
        let model = result.model

        let threadTracks = decoded.tracks.filter { $0.kind == "thread" }
        let tidOfTrack = Dictionary(uniqueKeysWithValues: threadTracks.map { ($0.uuid, $0.tid ?? 0) })
        // (item id, tid, run time) of every slice on a thread track, against the model's items.
        let itemSlices = decoded.slices.filter { tidOfTrack[$0.track] != nil }
        let slices = itemSlices.map { "\($0.args.item ?? 0) \(tidOfTrack[$0.track]!) \($0.dur)" }
        let started = model.items.filter { $0.started != nil && $0.thread != nil }
        // An item still running at the end (a loaded machine can leave one on the main thread)
        // runs to the end of the trace, as the report draws it (ItemLayout.effectiveTimes).
        let traceEnd = model.items.reduce(model.duration) { max($0, $1.enqueued ?? 0, $1.started ?? 0, $1.ended ?? 0) }
        let expected = started.map { "\($0.id) \(model.threads[$0.thread!].tid) \(($0.ended ?? traceEnd) - $0.started!)" }
        XCTAssertEqual(slices.sorted(), expected.sorted())
        XCTAssertEqual(started.count, model.items.count, "every item of the fixture ran")
        XCTAssertEqual(itemSlices.count, try statsItemCount(path), "one slice per item `qtrace stats` counts")

        // A flow from the enqueue (on the submitter's thread) to the item's start; none for
        // source handler runs (nothing enqueued them).
        let flows = decoded.flows.map { "\($0.to.item ?? 0) \(tidOfTrack[$0.from.track] ?? -1) \($0.to.ts - $0.from.ts)" }
        let enqueued = started.compactMap { item -> String? in
            guard let submitter = item.submitter, let enqueue = item.enqueued,
                  submitter != item.thread || enqueue != item.started else { return nil }
            return "\(item.id) \(model.threads[submitter].tid) \(item.started! - enqueue)"
        }
        XCTAssertEqual(flows.sorted(), enqueued.sorted())
        XCTAssertGreaterThan(flows.count, 20)

        // The counters: the thread counts and each queue's backlog, every point.
        let input = ReportInput(analysis: result, header: try TraceFile(path: path).header, qtraceVersion: "test")
        let counterNames = Dictionary(uniqueKeysWithValues: decoded.tracks.filter { $0.kind == "counter" }.map { ($0.uuid, $0.name) })
        let counters = decoded.counters.map { "\(counterNames[$0.track] ?? "?"): \($0.points.map { "\($0[1])" })" }
        let series = input.counters.map { "\($0.name): \($0.values.map { "\($0)" })" }
        XCTAssertEqual(counters.sorted(), series.sorted())
        XCTAssertTrue(decoded.tracks.contains { $0.name.hasPrefix("backlog") || $0.name.contains("backlog") })

        // Blocked time under the threads, findings under the process: all of them.
        let blockedTracks = Set(decoded.tracks.filter { $0.name.hasPrefix("blocked") }.map(\.uuid))
        XCTAssertEqual(decoded.slices.filter { blockedTracks.contains($0.track) }.count, input.blocked.count)
        XCTAssertGreaterThan(input.blocked.count, 0)
        // A clean run has no findings track (the fixture's findings depend on the rules' thresholds).
        if let findings = decoded.tracks.first(where: { $0.name == "findings" }) {
            XCTAssertEqual(decoded.instants.filter { $0.track == findings.uuid }.map(\.name).sorted(), input.findings.map(\.id).sorted())
        } else {
            XCTAssertEqual(input.findings.map(\.id), [])
        }

        // Queue tracks: the serial queue's items run in one lane, in the order they ran.
        let serial = try XCTUnwrap(decoded.tracks.first { $0.name == "queue fx.serial" })
        let lanes = decoded.tracks.filter { $0.parent == serial.uuid && $0.name.hasPrefix("running") }
        XCTAssertEqual(lanes.count, 1)
        let onLane = decoded.slices.filter { $0.track == lanes[0].uuid }.map { $0.args.item ?? 0 }
        let serialQueue = try XCTUnwrap(model.queues.firstIndex { $0.label == "fx.serial" })
        let ran = model.items.filter { $0.queue == serialQueue && $0.started != nil }.sorted { $0.started! < $1.started! }
        XCTAssertEqual(onLane, ran.map(\.id))
    }

    func testTaskFlowsLinkEachJobToTheNext() throws {
        let dir = Paths.tempDir("perfetto-tasks")
        // Whether a child task suspends (several jobs) depends on the actor being busy when it
        // calls it: a run where every task ran in one job is recorded again (a few times).
        var path = "", taskSteps = 0
        for _ in 0..<5 where taskSteps == 0 {
            let (run, recorded) = record([Paths.fixtures, "swift-concurrency"], in: dir)
            XCTAssertEqual(run.status, 0, run.stderr)
            path = recorded
            let input = ReportInput(analysis: Analysis.run(file: try TraceFile(path: path)), header: try TraceFile(path: path).header,
                                    qtraceVersion: "test")
            taskSteps = input.tasks.reduce(0) { $0 + max(0, $1.jobs.count - 1) }
        }
        XCTAssertGreaterThan(taskSteps, 0, "the fixture's tasks await between jobs")
        let decoded = try export([path], in: dir)
        let model = Analysis.run(file: try TraceFile(path: path)).model
        let enqueueFlows = model.items.filter { $0.started != nil && $0.thread != nil && $0.submitter != nil && $0.enqueued != nil }.count
        XCTAssertEqual(decoded.flows.count, enqueueFlows + taskSteps)
        // A task flow goes from one job's slice to the next job's, in time order.
        let taskFlows = decoded.flows.filter { $0.id > UInt64(model.items.count) }
        XCTAssertEqual(taskFlows.count, taskSteps)
        XCTAssertTrue(taskFlows.allSatisfy { $0.to.ts >= $0.from.ts })
    }

    func testMarksIntervalsAndSeveralProcesses() throws {
        let dir = Paths.tempDir("perfetto-procs")
        let (linkedRun, linked) = record([Paths.linkedApp], in: dir, name: "linked")
        XCTAssertEqual(linkedRun.status, 0, linkedRun.stderr)
        let (fixtureRun, fixture) = record([Paths.fixtures, "all-apis"], in: dir, name: "fixture")
        XCTAssertEqual(fixtureRun.status, 0, fixtureRun.stderr)
        let decoded = try export([linked, fixture], in: dir)

        let processes = decoded.tracks.filter { $0.kind == "process" }
        XCTAssertEqual(processes.count, 2)
        XCTAssertEqual(Set(processes.compactMap(\.pid)).count, 2)
        let pids = Set(processes.compactMap(\.pid))
        XCTAssertTrue(decoded.tracks.filter { $0.kind == "thread" }.allSatisfy { pids.contains($0.pid ?? -1) })
        let items = try statsItemCount(linked) + statsItemCount(fixture)
        let threadTracks = Set(decoded.tracks.filter { $0.kind == "thread" }.map(\.uuid))
        XCTAssertEqual(decoded.slices.filter { threadTracks.contains($0.track) }.count, items)

        // QTrace.mark("start") on the linked app's main thread, its intervals on tracks under its threads.
        let app = try XCTUnwrap(processes.first { $0.name.hasPrefix("qtrace-linked-app") })
        let main = try XCTUnwrap(decoded.tracks.first { $0.kind == "thread" && $0.pid == app.pid && $0.tid == Int32(app.pid ?? 0) })
        XCTAssertTrue(decoded.instants.contains { $0.track == main.uuid && $0.name == "start" })
        let intervalTracks = Set(decoded.tracks.filter { $0.name.hasPrefix("intervals") && threadTracks.contains($0.parent ?? 0) }.map(\.uuid))
        XCTAssertEqual(Set(decoded.slices.filter { intervalTracks.contains($0.track) }.map(\.name)), ["load", "pending"])
    }

    func testBadInputIsAOneLineError() throws {
        let dir = Paths.tempDir("perfetto-bad")
        let bogus = dir.appendingPathComponent("bogus.qtrace").path
        try Data("not a trace".utf8).write(to: URL(fileURLWithPath: bogus))
        let out = dir.appendingPathComponent("bogus.pftrace").path
        let result = runProgram([Paths.qtrace, "export", "--format", "perfetto", bogus, "-o", out])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    // MARK: Support

    private func export(_ traces: [String], in dir: URL) throws -> DecodedPerfetto {
        let out = dir.appendingPathComponent("export-\(traces.count).pftrace").path
        let exported = runProgram([Paths.qtrace, "export", "--format", "perfetto"] + traces + ["-o", out],
                                  environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        let script = Paths.repo.appendingPathComponent("scripts/perfetto-decode.py").path
        let decoded = runProgram(["/usr/bin/env", "python3", script, out])
        guard decoded.status == 0 else {
            if decoded.stderr.contains("No module named 'perfetto'") {
                throw XCTSkip("install the perfetto Python package (scripts/install-deps.sh --test)")
            }
            throw DecodeFailure(decoded.stderr)
        }
        return try JSONDecoder().decode(DecodedPerfetto.self, from: Data(decoded.stdout.utf8))
    }

    private func statsItemCount(_ path: String) throws -> Int {
        let stats = runProgram([Paths.qtrace, "stats", "--json", path], environment: ["QTRACE_SYMBOLIZE": "0"])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let trace = try XCTUnwrap(root["trace"] as? [String: Any])
        return try XCTUnwrap(trace["items"] as? Int)
    }
}

struct DecodeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// scripts/perfetto-decode.py's JSON.
struct DecodedPerfetto: Decodable {
    struct Track: Decodable {
        var uuid: UInt64
        var name: String
        var parent: UInt64?
        var kind: String
        var pid: Int?
        var tid: Int32?
    }
    struct Args: Decodable {
        var item: UInt64?
        var queue: String?
    }
    struct Slice: Decodable {
        var track: UInt64
        var ts: Int64
        var dur: UInt64
        var name: String
        var args: Args
    }
    struct Instant: Decodable {
        var track: UInt64
        var ts: Int64
        var name: String
    }
    struct End: Decodable {
        var track: UInt64
        var ts: Int64
        var item: UInt64?
    }
    struct Flow: Decodable {
        var id: UInt64
        var from: End
        var to: End
    }
    struct Counter: Decodable {
        var track: UInt64
        var points: [[Double]]
    }
    var tracks: [Track]
    var slices: [Slice]
    var instants: [Instant]
    var flows: [Flow]
    var counters: [Counter]
}
