// CPU saturation (cpu.saturated) and the queue rules it silences: waits while every CPU was
// busy are the CPUs', not the queue's (docs/findings.md).
import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class SaturationTests: XCTestCase {
    /// Threads 211... each run one item on the default global queue over [from, to): busy.
    func busy(_ s: inout TraceScript, threads: Int, from: UInt64, to: UInt64) {
        for k in 0..<threads {
            let tid = Int32(211 + k)
            s.thread(tid)
            s.item(UInt64(0xB00 + k), on: globalDefault, at: from, runOn: tid, start: from, end: to)
        }
    }

    /// 1000 items of 1 µs each waiting 10 µs on a serial queue, from `at` on: too small.
    func tinyItems(_ s: inout TraceScript, at t0: UInt64) {
        s.thread(201)
        s.queue(0x3000, "com.example.tiny")
        for k: UInt64 in 0..<1000 {
            s.item(k + 1, on: 0x3000, at: t0 + us(20 * k), runOn: 201, start: t0 + us(20 * k + 10), end: t0 + us(20 * k + 11))
        }
    }

    func testTwoBusyThreadsOnTwoCPUsSaturateThem() {
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 2, from: 0, to: ms(1200))
        s.add(.mark, ms(1500), tid: mainTid, string: "end")
        let r = s.analysis()
        XCTAssertEqual(CPUSaturation(r.model).periods, [Span(start: 0, end: ms(1200))])
        let f = r.findings("cpu.saturated")
        XCTAssertEqual(f.count, 1, "raised once")
        XCTAssertEqual(f[0].severity, .info)
        XCTAssertTrue(f[0].message.contains("all 2 CPUs were busy for 1.20 s of 1.50 s"), f[0].message)
        // The same threads on 4 CPUs: half busy, not saturated.
        s.info.ncpu = 4
        XCTAssertEqual(s.analysis().findings("cpu.saturated"), [])
    }

    func testFarMoreRunningItemsThanCPUsAreBlockedNotSaturated() {
        // Eight workers "running" items on 2 CPUs: without kernel states, they sleep or do
        // I/O inside their items (libdispatch adds workers when others block).
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 8, from: 0, to: ms(1200))
        XCTAssertEqual(s.analysis().findings("cpu.saturated"), [])
    }

    func testAShortSpikeIsNoSaturation() {
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 2, from: 0, to: ms(400))
        s.add(.mark, ms(1500), tid: mainTid, string: "end")
        XCTAssertEqual(s.analysis().findings("cpu.saturated"), [])
    }

    func testWaitsInsideSaturationAreNotItemsTooSmall() {
        var saturated = TraceScript()
        saturated.mainAndGlobals()
        busy(&saturated, threads: 2, from: 0, to: ms(1000))
        tinyItems(&saturated, at: ms(100))
        let r = saturated.analysis()
        XCTAssertEqual(r.findings("cpu.saturated").count, 1)
        XCTAssertEqual(r.findings("queue.items-too-small"), [], "every wait lies in the saturated period")
        // Control: the same items once the CPUs are free again.
        var after = TraceScript()
        after.mainAndGlobals()
        busy(&after, threads: 2, from: 0, to: ms(1000))
        tinyItems(&after, at: ms(1200))
        let f = after.analysis().findings("queue.items-too-small")
        XCTAssertEqual(f.count, 1)
        XCTAssertTrue(f[0].message.contains("1000 items (waits outside saturated periods) with median run 1.00 µs against median wait 10.0 µs"), f[0].message)
    }

    /// 600 items every 5 ms onto a serial queue whose consumer takes 10 ms each: the backlog
    /// grows to the end (queue.unbounded-backlog unless explained).
    func outrunConsumer(_ s: inout TraceScript) {
        s.thread(201)
        s.queue(0x3000, "com.example.log")
        for k: UInt64 in 0..<600 {
            s.enqueue(k + 1, on: 0x3000, at: ms(5 * k))
            if k < 300 { s.start(k + 1, at: ms(10 * k), on: 201); s.end(k + 1, at: ms(10 * k + 10), on: 201) }
        }
        s.add(.mark, ms(3000), tid: mainTid, string: "end")
    }

    func testBacklogGrownWhileSaturatedIsExplainedBySaturation() {
        var s = TraceScript()
        s.mainAndGlobals()
        outrunConsumer(&s)
        busy(&s, threads: 1, from: 0, to: ms(3000))  // with the consumer: both CPUs busy
        let r = s.analysis()
        XCTAssertEqual(r.findings("cpu.saturated").count, 1)
        XCTAssertEqual(r.findings("queue.unbounded-backlog"), [])
        // Saturated only in the first half: the growth in the last quarter still counts.
        var half = TraceScript()
        half.mainAndGlobals()
        outrunConsumer(&half)
        busy(&half, threads: 1, from: 0, to: ms(1500))
        let h = half.analysis()
        XCTAssertEqual(h.findings("cpu.saturated").count, 1)
        XCTAssertEqual(h.findings("queue.unbounded-backlog").count, 1)
    }

    func testSaturationFromKernelStatesWhenRecorded() {
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 2, from: 0, to: ms(1200))
        let r = s.analysis()
        var model = r.model
        // The kernel says the two threads slept half the time: not saturated.
        let threads = model.threads.indices.filter { model.threads[$0].tid >= 211 }
        var changes = [[SchedChange]](repeating: [], count: model.threads.count)
        for t in threads {
            changes[t] = stride(from: UInt64(0), to: ms(1200), by: Int(ms(10))).map {
                SchedChange(time: $0, state: ($0 / ms(10)) % 2 == 0 ? .running : .sleeping)
            }
        }
        model.sched = SchedModel(threads: changes, threadTimes: [], items: [], queues: [], recordCount: 0)
        XCTAssertEqual(CPUSaturation(model).periods, [])
        XCTAssertTrue(CPUSaturation(model).fromSched)
        XCTAssertEqual(CPUSaturation(r.model).periods.count, 1)
    }
}
