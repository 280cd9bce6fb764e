// perf records → SCHED_STATE events, and the model's state times, on hand-computed input.
import QTraceAnalysis
import QTraceFormat
import XCTest
@testable import QTraceSched

final class SchedStateTests: XCTestCase {
    func switched(_ time: UInt64, pid: Int32, from tid: Int32, _ state: String, to next: Int32, cpu: Int = 0) -> PerfSchedRecord {
        PerfSchedRecord(timeNs: time, cpu: cpu, pid: pid, tid: tid, kind: .switched(prevState: state, nextTid: next))
    }

    func woken(_ time: UInt64, _ tid: Int32, by waker: Int32) -> PerfSchedRecord {
        PerfSchedRecord(timeNs: time, cpu: 0, pid: waker, tid: waker, kind: .wakeup(tid: tid, isNew: false))
    }

    func sched(_ time: UInt64, _ tid: Int32, _ state: SchedState, _ flags: SchedFlags = [], cpu: UInt64 = 0, by other: Int32) -> Event {
        Event(type: .schedState, time: time, tid: 0, arg: state.rawValue, flags: flags.rawValue,
              a: UInt64(tid), b: cpu, c: UInt64(other))
    }

    func testConversion() {
        let records = [
            switched(500, pid: 99, from: 99, "S", to: 10),       // before the start: initial state
            switched(2000, pid: 10, from: 10, "S", to: 99),
            woken(3000, 10, by: 99),
            woken(3500, 10, by: 99),                              // already runnable: no change
            switched(4000, pid: 99, from: 99, "R", to: 10),
            switched(5000, pid: 10, from: 10, "R+", to: 11, cpu: 1),
            switched(6000, pid: 10, from: 11, "D", to: 10, cpu: 1),
            switched(7000, pid: 55, from: 11, "S", to: 99),       // tid 11 of another process
            switched(8000, pid: 10, from: 10, "X", to: 99),
            switched(20000, pid: 99, from: 99, "S", to: 11),      // after the end
        ]
        let events = SchedStateConverter.events(from: records, pid: 10, tids: [10, 11], initMonoNs: 1000, endMonoNs: 10000)
        XCTAssertEqual(events, [
            sched(0, 10, .running, .initial, by: 99),
            sched(1000, 10, .sleeping, by: 99),
            sched(2000, 10, .runnable, .woken, by: 99),
            sched(3000, 10, .running, by: 99),
            sched(4000, 10, .runnable, cpu: 1, by: 11),
            sched(4000, 11, .running, cpu: 1, by: 10),
            sched(5000, 11, .sleeping, .uninterruptible, cpu: 1, by: 10),
            sched(5000, 10, .running, cpu: 1, by: 11),
            sched(7000, 10, .exited, by: 99),
        ])
    }

    /// A record out of time order that precedes the start (a damaged perf.data; it trapped,
    /// found by the perf fuzzer) gets time 0 instead of wrapping: the trace reader then drops
    /// it as going back in time.
    func testARecordBeforeTheStartAfterItBecomesTimeZero() {
        let records = [switched(2000, pid: 10, from: 10, "S", to: 99), switched(500, pid: 99, from: 99, "S", to: 10)]
        let events = SchedStateConverter.events(from: records, pid: 10, tids: [10], initMonoNs: 1000, endMonoNs: 10000)
        XCTAssertEqual(events.map(\.time), [1000, 0])
    }

    /// An item from 1000 to 9000 on a thread running 0–2000, sleeping 2000–5000, runnable
    /// 5000–6000, running 6000–8000, sleeping from 8000: 3000 running, 1000 runnable, 4000
    /// sleeping. Another thread's states do not count.
    func testItemAndQueueTimes() throws {
        let q: UInt64 = 0x1000
        let events = [
            sched(0, 10, .running, .initial, by: 1),
            sched(0, 11, .sleeping, .initial, by: 1),
            Event(type: .queueCreate, time: 50, tid: 10, a: q, string: "q"),
            Event(type: .enqueue, time: 100, tid: 10, arg: 1, a: 1, b: q),
            Event(type: .start, time: 1000, tid: 10, arg: 1, a: 1),
            sched(2000, 10, .sleeping, by: 1),
            sched(3000, 11, .running, by: 1),
            sched(5000, 10, .runnable, .woken, by: 11),
            sched(6000, 10, .running, by: 1),
            sched(8000, 10, .sleeping, by: 1),
            Event(type: .end, time: 9000, tid: 10, a: 1),
            sched(9500, 10, .running, by: 1),
        ]
        let model = Analysis.buildModel(info: TraceInfo(pid: 10, mainTid: 10), events: events)
        let sched = try XCTUnwrap(model.sched)
        XCTAssertEqual(model.eventCount, events.count)
        XCTAssertEqual(sched.recordCount, 8)
        XCTAssertFalse(model.threads.contains { $0.tid == 0 })
        let item = try XCTUnwrap(model.items.firstIndex { $0.id == 1 })
        XCTAssertEqual(sched.items[item], SchedTimes(runningNs: 3000, runnableNs: 1000, sleepingNs: 4000))
        let queue = try XCTUnwrap(model.queues.firstIndex { $0.label == "q" })
        XCTAssertEqual(sched.queues[queue].times, sched.items[item])
        XCTAssertEqual(sched.queues[queue].wallNs, 8000)
        let thread10 = try XCTUnwrap(model.threads.firstIndex { $0.tid == 10 })
        XCTAssertEqual(sched.threads[thread10].map(\.state), [.running, .sleeping, .runnable, .running, .sleeping, .running])
        // Thread 10 to the end of the trace (its last Dispatch event, 9000: scheduler records
        // do not extend it): running 2000 + 2000, runnable 1000, sleeping 3000 + 1000.
        XCTAssertEqual(model.endTime, 9000)
        XCTAssertEqual(sched.threadTimes[thread10], SchedTimes(runningNs: 4000, runnableNs: 1000, sleepingNs: 4000))
    }

    func testNoSchedRecordsNoSchedModel() {
        let events = [Event(type: .threadStart, time: 0, tid: 10)]
        XCTAssertNil(Analysis.buildModel(info: TraceInfo(pid: 10, mainTid: 10), events: events).sched)
    }

    /// The appended stream reads back at the same times, is not a thread, and leaves the
    /// clock and the Dispatch events as they were.
    func testAppendedStreamRoundTrip() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-sched-\(getpid()).qtrace").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try TraceWriter(path: path, pid: 10, mainTid: 10, tscHz: 2_500_000_000)
        try writer.append(Event(type: .threadStart, time: 0, tid: 10))
        try writer.append(Event(type: .mark, time: 7_000, tid: 10, string: "m"))
        try writer.finish()
        let before = try TraceFile(path: path)
        // More than one chunk's worth (64 KiB / 40 bytes per record).
        let stream = (0..<4000).map { i in sched(UInt64(i) * 2, 10, i % 2 == 0 ? .running : .sleeping, by: 1) }
        try SchedStreamAppender.append(stream, to: path, clock: before.clock)
        let after = try TraceFile(path: path)
        XCTAssertEqual(after.header.versionMinor, TraceLayout.schedVersionMinor)
        XCTAssertEqual(after.clock, before.clock)
        XCTAssertEqual(after.threads.map(\.tid), [10])
        XCTAssertEqual(after.schedEventCount, 4000)
        XCTAssertTrue(after.warnings.isEmpty, "\(after.warnings)")
        let events = after.readAllEvents()
        XCTAssertEqual(events.filter { $0.type == .schedState }, stream)
        XCTAssertEqual(events.filter { $0.type != .schedState }, before.readAllEvents())
    }
}
