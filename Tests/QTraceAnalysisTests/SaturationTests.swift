// CPU saturation (cpu.saturated) and the queue rules it silences: waits while every CPU was
// busy are the CPUs', not the queue's (docs/findings.md).
import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

extension TraceScript {
    /// A SCHED_STATE record of the scheduler stream (`--sched`).
    mutating func schedState(_ state: SchedState, at t: UInt64, tid: Int32) {
        add(.schedState, t, tid: 0, arg: state.rawValue, a: UInt64(tid))
    }
}

final class SaturationTests: XCTestCase {
    /// Threads 211... each run one item on the default global queue over [from, to); with
    /// `kernel`, the scheduler's states say what they did meanwhile (`--sched`).
    func busy(_ s: inout TraceScript, threads: Int, from: UInt64, to: UInt64, kernel: SchedState? = nil) {
        for k in 0..<threads {
            let tid = Int32(211 + k)
            s.thread(tid)
            s.item(UInt64(0xB00 + k), on: globalDefault, at: from, runOn: tid, start: from, end: to)
            if let kernel {
                s.schedState(kernel, at: from, tid: tid)
                s.schedState(.sleeping, at: to, tid: tid)
            }
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

    func testTwoThreadsOnCPUsOfTwoSaturateThem() {
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 2, from: 0, to: ms(1200), kernel: .running)
        s.add(.mark, ms(1500), tid: mainTid, string: "end")
        let r = s.analysis()
        XCTAssertEqual(CPUSaturation(r.model).periods, [Span(start: 0, end: ms(1200))])
        let f = r.findings("cpu.saturated")
        XCTAssertEqual(f.count, 1, "raised once")
        XCTAssertEqual(f[0].severity, .info)
        XCTAssertTrue(f[0].message.contains("all 2 CPUs were busy for 1.20 s of 1.50 s (kernel states: threads on a CPU or waiting for one 90% of the time or more"), f[0].message)
        // The same threads on 4 CPUs: half busy, not saturated.
        s.info.ncpu = 4
        XCTAssertEqual(s.analysis().findings("cpu.saturated"), [])
    }

    func testItemTimeAloneRaisesNoSaturation() {
        // Two items "running" on 2 CPUs for 1.2 s: computing or sleeping in a system call,
        // the trace cannot tell. The periods leave waits out of the queue rules (they may be
        // saturation); no finding claims it.
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 2, from: 0, to: ms(1200))
        let r = s.analysis()
        let saturation = CPUSaturation(r.model)
        XCTAssertEqual(saturation.evidence, .itemTime)
        XCTAssertEqual(saturation.periods, [Span(start: 0, end: ms(1200))])
        XCTAssertEqual(r.findings("cpu.saturated"), [])
        // The kernel says they slept: no period at all.
        var sleeping = TraceScript()
        sleeping.mainAndGlobals()
        busy(&sleeping, threads: 2, from: 0, to: ms(1200), kernel: .sleeping)
        XCTAssertEqual(CPUSaturation(sleeping.analysis().model).periods, [])
    }

    func testRunnableThreadsMeanEveryCPUWasTaken() {
        // One thread on a CPU, one waiting for one (another program holds the other CPU):
        // the program's items wait for a CPU all the same.
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 1, from: 0, to: ms(1200), kernel: .running)
        s.thread(299)
        s.item(0xBFF, on: globalDefault, at: 0, runOn: 299, start: 0, end: ms(1200))
        s.schedState(.runnable, at: 0, tid: 299)
        s.schedState(.sleeping, at: ms(1200), tid: 299)
        XCTAssertEqual(s.analysis().findings("cpu.saturated").count, 1)
    }

    func testAThreadStopsCountingWhenItExits() {
        // Short-lived threads whose last kernel state was "running" (perf records no state
        // after the exit): they count until they exit, not to the end of the trace (a
        // `swift build` read 50.5 s of its 50.9 s as saturated from 1 s of CPU).
        var s = TraceScript()
        s.mainAndGlobals()
        for k: Int32 in 0..<4 {
            s.thread(221 + k)
            s.schedState(.running, at: ms(10), tid: 221 + k)
            s.exit(221 + k, at: ms(50))
        }
        s.add(.mark, ms(2000), tid: mainTid, string: "end")
        XCTAssertEqual(CPUSaturation(s.analysis().model).periods, [])
    }

    func testSaturationFromCPUSamples() {
        // perf's samples at 1000 Hz: each stands for 1 ms on a CPU.
        func sampled(every step: UInt64) -> AnalysisResult {
            var s = TraceScript()
            s.mainAndGlobals()
            busy(&s, threads: 2, from: 0, to: ms(1200))
            for t in stride(from: UInt64(0), to: ms(1200), by: Int(ms(step))) {
                s.cpuSample(at: t, on: 211, leaf: 0)
                s.cpuSample(at: t, on: 212, leaf: 0)
            }
            return s.analysis()
        }
        let onCPUs = sampled(every: 1)
        XCTAssertEqual(CPUSaturation(onCPUs.model).evidence, .cpuSamples)
        XCTAssertEqual(onCPUs.findings("cpu.saturated").count, 1)
        XCTAssertTrue(onCPUs.findings("cpu.saturated")[0].message.contains("(CPU samples: threads on a CPU 90%"))
        // Sampled half the time: the items slept the other half.
        XCTAssertEqual(sampled(every: 2).findings("cpu.saturated"), [])
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
        busy(&saturated, threads: 2, from: 0, to: ms(1000), kernel: .running)
        tinyItems(&saturated, at: ms(100))
        let r = saturated.analysis()
        XCTAssertEqual(r.findings("cpu.saturated").count, 1)
        XCTAssertEqual(r.findings("queue.items-too-small"), [], "every wait lies in the saturated period")
        // Control: the same items once the CPUs are free again.
        var after = TraceScript()
        after.mainAndGlobals()
        busy(&after, threads: 2, from: 0, to: ms(1000), kernel: .running)
        tinyItems(&after, at: ms(1200))
        let f = after.analysis().findings("queue.items-too-small")
        XCTAssertEqual(f.count, 1)
        XCTAssertTrue(f[0].message.contains("1000 items (waits outside saturated periods) with median run 1.00 µs against median wait 10.0 µs"), f[0].message)
    }

    /// Queues one after another and side by side, of more or fewer items (the rule gathers a
    /// queue's values from its first item to its last, in a buffer an earlier queue may have
    /// left, too small or larger): each queue's medians are its own.
    func testItemsTooSmallOfQueuesAfterEachOtherHaveTheirOwnMedians() {
        var s = TraceScript()
        s.mainAndGlobals()
        busy(&s, threads: 2, from: 0, to: ms(1000), kernel: .running)
        // (queue, items, first enqueue, run, wait) in µs; each queue's items on a thread of its own.
        let queues: [(UInt64, UInt64, UInt64, UInt64, UInt64)] = [
            (0x3000, 1000, 1_200_000, 1, 10), (0x3100, 3000, 1_300_000, 2, 20),
            (0x3200, 1200, 1_300_000, 3, 40), (0x3300, 1000, 1_500_000, 1, 30),
        ]
        var id: UInt64 = 1
        for (k, (queue, count, first, run, wait)) in queues.enumerated() {
            let tid = Int32(301 + k)
            s.thread(tid)
            s.queue(queue, "com.example.tiny\(k)")
            for n in 0..<count {
                let ready = us(first + n * (run + wait + 9))
                s.item(id, on: queue, at: ready, runOn: tid, start: ready + us(wait), end: ready + us(wait + run))
                id += 1
            }
        }
        let messages = s.analysis().findings("queue.items-too-small").map(\.message)
        XCTAssertEqual(messages.count, 4, "\(messages)")
        for (k, expected) in ["1000 items (waits outside saturated periods) with median run 1.00 µs against median wait 10.0 µs",
                              "3000 items (waits outside saturated periods) with median run 2.00 µs against median wait 20.0 µs",
                              "1200 items (waits outside saturated periods) with median run 3.00 µs against median wait 40.0 µs",
                              "1000 items (waits outside saturated periods) with median run 1.00 µs against median wait 30.0 µs"].enumerated() {
            XCTAssertTrue(messages.contains { $0.contains("tiny\(k)") && $0.contains(expected) }, "\(expected): \(messages)")
        }
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
        busy(&s, threads: 1, from: 0, to: ms(3000), kernel: .running)
        s.schedState(.running, at: 0, tid: 201)  // the consumer: both CPUs busy
        let r = s.analysis()
        XCTAssertEqual(r.findings("cpu.saturated").count, 1)
        XCTAssertEqual(r.findings("queue.unbounded-backlog"), [])
        // Saturated only in the first half: the growth in the last quarter still counts.
        var half = TraceScript()
        half.mainAndGlobals()
        outrunConsumer(&half)
        busy(&half, threads: 1, from: 0, to: ms(1500), kernel: .running)
        half.schedState(.running, at: 0, tid: 201)
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

    /// `overlap` and `explains` search the periods by halves: the same answers as summing every
    /// period's share, for intervals and instants before, between, across and inside periods.
    func testOverlapOverManyPeriodsIsEveryPeriodsShare() {
        var saturation = CPUSaturation(TraceScript().analysis().model)
        let periods: [Span] = (1...7).map { (k: UInt64) -> Span in
            let start: UInt64 = 100 * k + 10 * (k % 3)
            return Span(start: start, end: 100 * k + 60)
        }
        saturation.periods = periods
        var times: Set<UInt64> = [0, 777]
        for p in periods { times.formUnion([p.start - 1, p.start, p.start + 1, p.end - 1, p.end, p.end + 1]) }
        let sortedTimes = times.sorted()
        for start in sortedTimes {
            XCTAssertEqual(saturation.explains(start, start), saturation.periods.contains { $0.start <= start && start < $0.end }, "instant \(start)")
            for end in sortedTimes where end > start {
                let every = saturation.periods.reduce(UInt64(0)) { sum, p in
                    let from = max(p.start, start), to = min(p.end, end)
                    return to > from ? sum + (to - from) : sum
                }
                XCTAssertEqual(saturation.overlap(start, end), every, "[\(start), \(end))")
                XCTAssertEqual(saturation.explains(start, end), every * 2 >= end - start, "[\(start), \(end))")
            }
        }
    }
}
