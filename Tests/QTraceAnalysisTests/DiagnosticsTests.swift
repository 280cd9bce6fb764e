import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class DiagnosticsTests: XCTestCase {
    /// A well-behaved program using most of the API: must give no findings.
    static func cleanProgram() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.store")
        s.queue(0x3100, "com.example.rw", concurrent: true)
        // Work fanned out in a group, results posted back to main, notify on main.
        s.add(.groupCreate, 0, tid: mainTid, a: 0x6000)
        s.item(1, on: globalDefault, at: ms(1), runOn: 201, start: ms(1), end: ms(5), kind: .groupAsync, extra: 0x6000)
        s.item(2, on: globalDefault, at: ms(1), runOn: 202, start: ms(1), end: ms(6), kind: .groupAsync, extra: 0x6000)
        s.item(3, on: mainQueueAddress, at: ms(1), runOn: mainTid, start: ms(7), end: ms(8), kind: .groupNotify, extra: 0x6000)
        // A serial queue used as a lock, briefly, from a worker.
        s.item(4, on: 0x3000, at: ms(9), by: 201, runOn: 201, start: ms(9), end: us(9_050), kind: .sync)
        // Readers and a barrier writer on a private concurrent queue.
        s.item(5, on: 0x3100, at: ms(10), runOn: 201, start: ms(10), end: ms(11))
        s.item(6, on: 0x3100, at: ms(10), runOn: 202, start: ms(11), end: ms(12), kind: .barrierAsync)
        // A timer that keeps up, cancelled while running (cancel handler runs).
        s.source(0x5000, type: .timer, queue: 0x3000, at: 0)
        s.add(.sourceSetHandler, 0, tid: mainTid, arg: 1, a: 0x5000)
        s.add(.sourceSetTimer, 0, tid: mainTid, a: 0x5000, b: s.uptime(ms(5)), c: ms(5), d: ms(1))
        s.resume(0x5000, at: 0)
        for k: UInt64 in 1...4 { s.handler(0x5000, data: 1, from: ms(5 * k) + us(100), to: ms(5 * k) + us(200), on: 202) }
        s.add(.sourceCancel, ms(21), tid: mainTid, a: 0x5000)
        s.handler(0x5000, data: 0, from: ms(22), to: us(22_010), on: 202, kind: .cancel)
        // A semaphore that never blocks, a short short wait on a worker.
        s.add(.semCreate, 0, tid: mainTid, a: 0x7000, b: 1)
        s.semWait(0x7000, from: ms(23), to: ms(23), on: 201, blocked: false)
        s.add(.semSignal, ms(24), tid: 201, a: 0x7000)
        // concurrentPerform from a worker, in parallel.
        s.add(.applyBegin, ms(25), tid: 201, a: 50, b: 0, c: 2)
        s.add(.applyIterStart, ms(25), tid: 201, a: 50); s.add(.applyIterEnd, ms(26), tid: 201, a: 50)
        s.add(.applyIterStart, ms(25), tid: 202, a: 50); s.add(.applyIterEnd, ms(26), tid: 202, a: 50)
        s.add(.applyEnd, ms(26), tid: 201, a: 50)
        s.exit(201, at: ms(30)); s.exit(202, at: ms(30))
        return s
    }

    func testCleanProgramHasNoFindings() {
        let r = Self.cleanProgram().analysis()
        XCTAssertEqual(r.findings, [])
        XCTAssertEqual(r.model.anomalies, BuildAnomalies())
    }

    func testSyncOntoTheCurrentSerialQueue() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.db")
        s.enqueue(1, on: 0x3000, at: 0)
        s.start(1, at: 0, on: 201)
        s.enqueue(2, on: 0x3000, at: us(10), by: 201, kind: .sync) // never starts
        s.add(.mark, ms(2000), tid: mainTid, string: "end")
        let r = s.analysis()
        let f = r.findings("deadlock.sync-current-queue")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(f[0].severity, .error)
        XCTAssertEqual(f[0].start, us(10))
        XCTAssertEqual(f[0].objects.map(\.kind), [.thread, .queue, .item])
        XCTAssertEqual(f[0].objects[1].label, "com.example.db")
        XCTAssertTrue(f[0].message.contains("use async"), f[0].message)
        XCTAssertTrue(r.findings("wait.never-finished").isEmpty, "the deadlock explains the stuck wait")
    }

    func testSyncOntoASerialQueueItTargetsAndShimRecordDedupe() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.lock")
        s.queue(0x3100, "com.example.child", target: 0x3000)
        s.enqueue(1, on: 0x3000, at: 0)
        s.start(1, at: 0, on: 201)
        s.enqueue(2, on: 0x3100, at: us(10), by: 201, kind: .sync)
        s.add(.deadlock, us(10), tid: 201, arg: 1, a: 0x3100, b: 0x3000)
        let r = s.analysis()
        XCTAssertEqual(r.model.deadlocks.map(\.origin), [.analysis, .shim])
        let f = r.findings("deadlock.sync-current-queue")
        XCTAssertEqual(f.count, 1, "shim and analysis agree: one finding")
        XCTAssertEqual(f[0].objects.map(\.label).prefix(3), ["worker 201", "com.example.child", "com.example.lock"])
        XCTAssertTrue(f[0].message.contains("targets 'com.example.lock'"), f[0].message)
    }

    func testMainThreadSyncOntoMainDeadlocks() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.enqueue(1, on: mainQueueAddress, at: us(5), kind: .sync)
        XCTAssertEqual(s.analysis().findings("deadlock.sync-current-queue").count, 1)
    }

    func testSyncOntoAConcurrentQueueItRunsIsFineButBarrierSyncIsNot() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3100, "com.example.rw", concurrent: true)
        s.enqueue(1, on: 0x3100, at: 0)
        s.start(1, at: 0, on: 201)
        s.sync(2, on: 0x3100, at: us(1), by: 201, start: us(2), end: us(3))
        XCTAssertTrue(s.analysis().findings("deadlock.sync-current-queue").isEmpty)
        s.enqueue(3, on: 0x3100, at: us(4), by: 201, kind: .barrierSync)
        XCTAssertEqual(s.analysis().findings("deadlock.sync-current-queue").count, 1)
    }

    func testApplyOntoTheCurrentSerialQueue() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.serial")
        s.enqueue(1, on: 0x3000, at: 0)
        s.start(1, at: 0, on: 201)
        s.add(.applyBegin, us(10), tid: 201, a: 50, b: 0x3000, c: 8)
        XCTAssertEqual(s.analysis().findings("deadlock.apply-current-queue").count, 1)
    }

    func testCrossQueueSyncCycle() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.a")
        s.queue(0x3100, "com.example.b")
        s.enqueue(1, on: 0x3000, at: 0); s.start(1, at: 0, on: 201)
        s.enqueue(2, on: 0x3100, at: 0); s.start(2, at: 0, on: 202)
        s.enqueue(3, on: 0x3100, at: us(10), by: 201, kind: .sync)
        s.enqueue(4, on: 0x3000, at: us(20), by: 202, kind: .sync)
        let r = s.analysis()
        let f = r.findings("deadlock.sync-cycle")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(Set(f[0].objects.filter { $0.kind == .queue }.map(\.label)), ["com.example.a", "com.example.b"])
        XCTAssertTrue(r.findings("deadlock.sync-current-queue").isEmpty)
    }

    func testWorkerMainSyncCycle() {
        // A worker holding serial queue Q syncs onto main while main syncs onto Q.
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.q")
        s.enqueue(1, on: 0x3000, at: 0); s.start(1, at: 0, on: 201)
        s.enqueue(2, on: 0x3000, at: us(5), by: mainTid, kind: .sync)
        s.enqueue(3, on: mainQueueAddress, at: us(10), by: 201, kind: .sync)
        XCTAssertEqual(s.analysis().findings("deadlock.sync-cycle").count, 1)
    }

    func testMainThreadLongItemsAndBlockingCalls() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.item(1, on: mainQueueAddress, at: 0, runOn: mainTid, start: 0, end: ms(20))
        s.item(2, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(20), end: ms(40))
        s.item(3, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(40), end: ms(250))
        s.semWait(0x7000, from: ms(300), to: ms(310), on: mainTid)
        s.semWait(0x7000, from: ms(320), to: ms(320), on: mainTid, blocked: false) // fast path: fine
        s.sync(4, on: globalDefault, at: ms(330), by: mainTid, start: ms(330), end: ms(331)) // short sync: fine
        let r = s.analysis()
        let long = r.findings("main.long-item")
        XCTAssertEqual(long.count, 1)
        XCTAssertEqual(long[0].occurrences, 2)
        XCTAssertEqual(long[0].severity, .warning)
        XCTAssertEqual(long[0].start, 0)
        XCTAssertEqual(long[0].end, ms(40))
        let hang = r.findings("main.hang")
        XCTAssertEqual(hang.map(\.severity), [.error])
        XCTAssertTrue(hang[0].message.contains("210 ms"), hang[0].message)
        let blocking = r.findings("main.blocking-call")
        XCTAssertEqual(blocking.count, 1)
        XCTAssertEqual(blocking[0].objects.map(\.kind), [.thread, .semaphore])
    }

    func testThreadExplosion() {
        var s = TraceScript()
        s.info.ncpu = 2
        s.mainAndGlobals()
        // 6 workers on 2 CPUs: clearly more (2× and 4 more); 5 would not be.
        for w: Int32 in 0..<6 {
            let tid = 201 + w
            s.thread(tid, at: ms(1))
            s.item(UInt64(10 + w), on: globalDefault, at: ms(2), runOn: tid, start: ms(2), end: ms(300))
            s.semWait(0x7000, from: ms(3), to: ms(250), on: tid)
        }
        let r = s.analysis()
        let f = r.findings("threads.explosion")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(r.model.threadExplosions, [ThreadExplosion(start: ms(3), end: ms(250), peakWorkers: 6, peakBlockedWorkers: 6)])
        XCTAssertTrue(f[0].message.hasPrefix("6 worker threads for 2 CPUs, 6 of them blocked"), f[0].message)
        // Three workers on 2 CPUs (what issue 15 saw in swift-driver) is no explosion.
        var few = TraceScript()
        few.info.ncpu = 2
        few.mainAndGlobals()
        for w: Int32 in 0..<3 {
            few.thread(201 + w, at: ms(1))
            few.item(UInt64(10 + w), on: globalDefault, at: ms(2), runOn: 201 + w, start: ms(2), end: ms(300))
            few.semWait(0x7000, from: ms(3), to: ms(250), on: 201 + w)
        }
        XCTAssertTrue(few.analysis().findings("threads.explosion").isEmpty)
        // Same program on 8 CPUs: no explosion.
        s.info.ncpu = 8
        XCTAssertTrue(s.analysis().findings("threads.explosion").isEmpty)
    }

    func testPriorityInversion() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.utility-lock", qos: .utility)
        s.item(1, on: 0x3000, at: 0, runOn: 201, start: 0, end: ms(20))
        s.item(2, on: 0x3000, at: ms(1), by: 201, runOn: 201, start: ms(20), end: ms(21))      // same QoS: fine
        s.sync(3, on: 0x3000, at: ms(2), by: mainTid, start: ms(21), end: us(21_100))          // main waits 19 ms
        let r = s.analysis()
        let f = r.findings("qos.priority-inversion")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(r.model.priorityInversions, [PriorityInversion(
            item: r.model.item(id: 3), blocker: r.model.item(id: 2), queue: r.model.queue(labelled: "com.example.utility-lock"),
            waitNs: ms(19), itemQoS: QoSClass.userInteractive.rawValue, blockerQoS: QoSClass.utility.rawValue)])
        XCTAssertTrue(f[0].message.contains("user-interactive item waited 19.0 ms"), f[0].message)
    }

    /// Scheduling noise does not flip the verdict: a few ms of waiting (what a loaded 2-CPU
    /// machine adds to anything) is below the threshold by a wide margin, either way.
    func testShortWaitsBehindLowerQoSAreNoInversion() {
        for waitMs: UInt64 in [1, 2, 5, 9] {
            var s = TraceScript()
            s.mainAndGlobals()
            s.thread(201)
            s.queue(0x3000, "com.example.utility-lock", qos: .utility)
            s.item(1, on: 0x3000, at: 0, runOn: 201, start: 0, end: ms(1 + waitMs))
            s.sync(2, on: 0x3000, at: ms(1), by: mainTid, start: ms(1 + waitMs), end: ms(2 + waitMs))
            XCTAssertEqual(s.analysis().findings("qos.priority-inversion"), [], "\(waitMs) ms")
        }
    }

    /// On the main queue every item runs on the main thread at its priority: FIFO order there
    /// is no inversion, however long the wait.
    func testWaitBehindALowerQoSItemOnTheMainQueueIsNoInversion() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.servesMainQueue(at: 0)
        // A utility worker syncs onto main (its QoS, utility); main's own item waits 38 ms.
        s.item(1, on: globalUtility, at: 0, runOn: 201, start: 0, end: ms(50))
        s.item(2, on: mainQueueAddress, at: ms(1), by: 201, runOn: mainTid, start: ms(1), end: ms(40), kind: .sync)
        s.item(3, on: mainQueueAddress, at: ms(2), runOn: mainTid, start: ms(40), end: ms(41))
        let r = s.analysis()
        XCTAssertEqual(r.model.priorityInversions.map(\.waitNs), [ms(38)], "the model sees the wait")
        XCTAssertEqual(r.findings("qos.priority-inversion"), [])
    }

    func testBarrierOnGlobalQueue() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.item(1, on: globalDefault, at: 0, runOn: 201, start: 0, end: us(5), kind: .barrierAsync)
        let f = s.analysis().findings("barrier.global-queue")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(f[0].objects.map(\.label), ["com.apple.root.default-qos"])
    }

    func testSourceRules() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.source(0x5000, type: .read, queue: globalDefault, at: 0)          // never resumed
        s.source(0x5100, type: .timer, queue: globalDefault, at: 0)
        s.add(.sourceSetHandler, 0, tid: mainTid, arg: 1, a: 0x5100)         // cancel handler
        s.resume(0x5100, at: ms(1))
        s.suspend(0x5100, at: ms(2))
        s.add(.sourceCancel, ms(3), tid: mainTid, a: 0x5100)                  // while suspended
        s.add(.mark, ms(10), tid: mainTid, string: "end")
        let r = s.analysis()
        XCTAssertEqual(r.findings("source.never-resumed").map { $0.objects[0].index }, [0])
        XCTAssertEqual(r.findings("source.cancelled-while-suspended").map { $0.objects[0].index }, [1])
        XCTAssertTrue(r.findings("source.never-resumed")[0].message.contains("resume()"))
        // Resumed after cancel: the cancel handler runs, no finding.
        s.resume(0x5100, at: ms(4))
        s.handler(0x5100, data: 0, from: ms(5), to: ms(5), on: mainTid, kind: .cancel)
        XCTAssertTrue(s.analysis().findings("source.cancelled-while-suspended").isEmpty)
    }

    func testGroupImbalance() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.add(.groupCreate, us(1), tid: mainTid, a: 0x6000)
        s.add(.groupLeave, us(1), tid: mainTid, a: 0x6000)
        // Left without being created or entered by the program: libdispatch's own group (a
        // DispatchWorkItem's), no finding.
        s.add(.groupLeave, us(1), tid: mainTid, a: 0x6800)
        s.add(.groupEnter, us(2), tid: mainTid, a: 0x6100)
        s.add(.groupEnter, us(3), tid: mainTid, a: 0x6100)
        s.add(.groupLeave, us(4), tid: mainTid, a: 0x6100)
        s.enqueue(9, on: mainQueueAddress, at: us(5), kind: .groupNotify, extra: 0x6100)
        let r = s.analysis()
        XCTAssertEqual(r.findings("group.leave-without-enter").map(\.severity), [.error])
        let never = r.findings("group.never-left")
        XCTAssertEqual(never.count, 1)
        XCTAssertTrue(never[0].message.contains("1 enter() never left"), never[0].message)
        XCTAssertTrue(never[0].message.contains("notify never fired"), never[0].message)
    }

    func testBacklogThatDrainsIsNotUnbounded() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.log")
        // 300 items enqueued every 5 ms, drained every 10 ms: the backlog grows for 1.5 s to
        // 150, then drains by 3 s. A burst, however long: no finding.
        for k: UInt64 in 0..<300 {
            s.item(k + 1, on: 0x3000, at: ms(5 * k), runOn: 201, start: ms(10 * k), end: ms(10 * k + 9))
        }
        let r = s.analysis()
        XCTAssertEqual(r.findings("queue.unbounded-backlog"), [])
        let episode = r.model.queues[r.model.queue(labelled: "com.example.log")].longestBacklogEpisode!
        // At 10 ms item 1 starts before item 2 is enqueued: the backlog touches 0, and the
        // long episode runs from 10 ms to the start of the last item (items 2...299).
        XCTAssertEqual(episode.start, ms(10))
        XCTAssertEqual(episode.end, ms(2990))
        XCTAssertEqual(episode.peak, 150)
        XCTAssertEqual(episode.enqueued, 298)
        XCTAssertEqual(episode.started, 298)
    }

    /// `laps` bursts of `burst` items at once onto one serial queue, each drained (1 ms an
    /// item) before the next lap: a fan-out benchmark's shape.
    func laps(_ laps: UInt64, burst: UInt64) -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.node")
        for lap in 0..<laps {
            let t0 = lap * ms(burst + 10)
            for k in 0..<burst {
                let id = lap * burst + k + 1
                s.item(id, on: 0x3000, at: t0, runOn: 201, start: t0 + ms(k), end: t0 + ms(k + 1))
            }
        }
        return s
    }

    func testBurstsThatDrainAreNotUnbounded() {
        let r = laps(6, burst: 400).analysis()
        XCTAssertEqual(r.statistics.queues[r.model.queue(labelled: "com.example.node")].backlogMax, 399)
        XCTAssertGreaterThan(r.statistics.durationNs, ms(2000))
        XCTAssertEqual(r.findings("queue.unbounded-backlog"), [])
    }

    func testProducerOutrunningItsConsumerIsUnbounded() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.log")
        // 600 items every 5 ms over 3 s, the consumer takes 10 ms each: at the end 300 items
        // are still pending, and each quarter's floor is above the last.
        for k: UInt64 in 0..<600 {
            s.enqueue(k + 1, on: 0x3000, at: ms(5 * k))
            if k < 300 { s.start(k + 1, at: ms(10 * k), on: 201); s.end(k + 1, at: ms(10 * k + 10), on: 201) }
        }
        s.add(.mark, ms(3000), tid: mainTid, string: "end")
        let r = s.analysis()
        let f = r.findings("queue.unbounded-backlog")
        XCTAssertEqual(f.count, 1)
        let q = r.model.queue(labelled: "com.example.log")
        let trend = BacklogTrend(r.model.queues[q].backlog, end: r.model.endTime)!
        // The backlog at t ms is t/10 (t/5 enqueued, t/10 started): quarters of
        // 750 ms start at 0, 75, 150 and 225 items.
        XCTAssertEqual(trend.floors, [0, 75, 150, 225])
        XCTAssertEqual(r.statistics.queues[q].pendingAtEnd, 300)
        XCTAssertTrue(f[0].message.contains("at least 0, then 75, then 150, then 225 items pending in each quarter, 300 at the end"), f[0].message)
    }

    func testItemsTooSmall() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.tiny")
        for k: UInt64 in 0..<1000 {
            s.item(k + 1, on: 0x3000, at: us(20 * k), runOn: 201, start: us(20 * k + 10), end: us(20 * k + 11))
        }
        let f = s.analysis().findings("queue.items-too-small")
        XCTAssertEqual(f.map(\.severity), [.info])
        XCTAssertTrue(f[0].message.contains("median run 1.00 µs against median wait 10.0 µs"), f[0].message)
    }

    func testTargetQueueLoop() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.queue(0x3000, "com.example.a")
        s.queue(0x3100, "com.example.b", target: 0x3000)
        s.setTarget(0x3000, 0x3100, at: us(5))
        let r = s.analysis()
        let f = r.findings("queue.target-loop")
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(f[0].objects.map(\.label), ["com.example.a", "com.example.b"])
        XCTAssertFalse(r.statistics.queueTree.isEmpty, "the tree survives a loop")
    }

    func testWaitsNeverFinishedAndLong() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.add(.semWaitBegin, ms(1), tid: 201, a: 0x7000, b: ~0)               // never ends
        s.groupWait(0x6000, from: ms(10), to: ms(1510), on: 202)               // 1.5 s
        s.add(.mark, ms(2000), tid: mainTid, string: "end")
        let r = s.analysis()
        XCTAssertEqual(r.findings("wait.never-finished").map(\.severity), [.error])
        XCTAssertEqual(r.findings("wait.long").count, 1)
        XCTAssertTrue(r.findings("wait.long")[0].message.contains("1.50 s"))
    }

    /// concurrentPerform's caller runs iterations and waits for its peers: 1.5 s of it on a
    /// loaded machine is the iterations' run time, not a thread held idle.
    func testLongConcurrentPerformIsNoLongWait() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.add(.applyBegin, ms(10), tid: 201, a: 50, b: 0, c: 4)
        s.add(.applyEnd, ms(1510), tid: 201, a: 50)
        s.groupWait(0x6000, from: ms(1600), to: ms(3100), on: 201)
        s.add(.mark, ms(3500), tid: mainTid, string: "end")
        let long = s.analysis().findings("wait.long")
        XCTAssertEqual(long.count, 1)
        XCTAssertTrue(long.first?.message.contains("group") ?? false, long.first?.message ?? "none")
    }

    func testApplyWithoutParallelismAndDroppedEvents() {
        var s = TraceScript()
        s.info.droppedEvents = 12
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.serial")
        s.add(.applyBegin, 0, tid: 201, a: 50, b: 0x3000, c: 3)
        for k: UInt64 in 0..<3 {
            s.add(.applyIterStart, us(10 * k), tid: 201, a: 50)
            s.add(.applyIterEnd, us(10 * k + 9), tid: 201, a: 50)
        }
        s.add(.applyEnd, us(30), tid: 201, a: 50)
        let r = s.analysis()
        XCTAssertEqual(r.findings("apply.no-parallelism").count, 1)
        XCTAssertEqual(r.findings("trace.dropped-events").count, 1)
        XCTAssertTrue(r.findings("deadlock.apply-current-queue").isEmpty, "not running on the serial queue")
    }

    func testFindingsAreSortedBySeverityThenTime() {
        var s = TraceScript()
        s.info.droppedEvents = 1
        s.mainAndGlobals()
        s.item(1, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(10), end: ms(30))
        s.item(2, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(30), end: ms(200))
        let r = s.analysis()
        XCTAssertEqual(r.findings.map(\.severity), r.findings.map(\.severity).sorted(by: >))
        XCTAssertEqual(r.findingIds, ["main.hang", "trace.dropped-events", "main.long-item"])
    }
}
