import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class ObjectTests: XCTestCase {
    /// A 10 ms timer source on a serial queue, resumed at 0; its handlers run on thread 201.
    func tenMillisecondTimer() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.timer-queue")
        s.source(0x5000, type: .timer, queue: 0x3000, at: 0)
        s.add(.sourceSetTimer, 0, tid: mainTid, a: 0x5000, b: s.uptime(ms(10)), c: ms(10), d: 0)
        s.resume(0x5000, at: 0)
        return s
    }

    func testTimerLatenessAndCoalescing() {
        var s = tenMillisecondTimer()
        s.handler(0x5000, data: 1, from: us(10_500), to: us(10_600), on: 201)   // fire 1 due 10 ms
        s.handler(0x5000, data: 1, from: us(20_200), to: us(20_300), on: 201)   // fire 2 due 20 ms
        s.handler(0x5000, data: 2, from: ms(41), to: us(41_100), on: 201)       // fires 3-4, due 40 ms
        s.handler(0x5000, data: 2, from: ms(61), to: us(61_100), on: 201)       // fires 5-6, due 60 ms
        let r = s.analysis()
        let src = r.model.sources[0]
        XCTAssertEqual(src.type, .timer)
        XCTAssertEqual(src.activatedAt, 0)
        XCTAssertEqual(src.timers, [TimerConfig(setAt: 0, start: ms(10), intervalNs: ms(10), leewayNs: 0)])
        XCTAssertEqual(src.runs.map(\.latenessNs), [Int64(us(500)), Int64(us(200)), Int64(ms(1)), Int64(ms(1))])
        XCTAssertEqual(src.runs.map(\.coalesced), [false, false, true, true])
        let st = r.statistics.sources[0]
        XCTAssertEqual(st.eventRuns, 4)
        XCTAssertEqual(st.coalescedRuns, 2)
        XCTAssertEqual(st.coalescedRunsWhileActive, 2)
        XCTAssertEqual(st.maxData, 2)
        XCTAssertEqual(st.totalData, 6)
        XCTAssertEqual(st.lateness.maxNs, ms(1))
        XCTAssertEqual(st.lateness.minNs, us(200))
        XCTAssertEqual(st.handlerRun.maxNs, us(100))
        XCTAssertEqual(st.timerIntervalNs, ms(10))
        // Handler runs are items of the source's queue.
        let q = r.model.queue(labelled: "com.example.timer-queue")
        XCTAssertEqual(r.statistics.queues[q].sourceHandlerRuns, 4)
        XCTAssertEqual(r.model.items[src.runs[0].item].source, 0)
        // 100 µs handlers of a 10 ms timer that coalesced started late: not slow.
        XCTAssertEqual(r.findingIds, [])
    }

    func testTimerHandlerTakingHalfItsPeriodIsTooSlow() {
        var s = tenMillisecondTimer()
        s.handler(0x5000, data: 1, from: ms(10), to: ms(17), on: 201)       // fire 1, 7 ms of a 10 ms period
        s.handler(0x5000, data: 2, from: ms(31), to: ms(38), on: 201)       // fires 2-3
        s.handler(0x5000, data: 2, from: ms(51), to: ms(58), on: 201)       // fires 4-5
        let r = s.analysis()
        XCTAssertEqual(r.statistics.sources[0].coalescedRunsWhileActive, 2)
        XCTAssertEqual(r.findingIds, ["source.handler-too-slow"])
    }

    func testSuspendedTimerCoalescesWithoutBlame() {
        // A 1 s timer suspended for 4 s: one run with data 4 after resume (the talks' picture).
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.source(0x5000, type: .timer, queue: globalDefault, at: 0)
        s.add(.sourceSetTimer, 0, tid: mainTid, a: 0x5000, b: s.uptime(ms(1000)), c: ms(1000), d: 0)
        s.resume(0x5000, at: 0)
        s.handler(0x5000, data: 1, from: ms(1000), to: ms(1001), on: 201)
        s.suspend(0x5000, at: ms(1500))
        s.resume(0x5000, at: ms(5100))
        s.handler(0x5000, data: 4, from: ms(5100), to: ms(5101), on: 201)
        let r = s.analysis()
        let src = r.model.sources[0]
        XCTAssertEqual(src.runs.map(\.afterSuspension), [false, true])
        XCTAssertEqual(src.runs[1].latenessNs, Int64(ms(100)), "fire 5 was due at 5 s")
        XCTAssertEqual(src.suspensions, [SuspendInterval(start: 0, end: 0, initial: true),
                                         SuspendInterval(start: ms(1500), end: ms(5100), initial: false)])
        XCTAssertEqual(r.statistics.sources[0].suspendedNs, ms(3600))
        XCTAssertEqual(r.statistics.sources[0].coalescedRunsWhileActive, 0)
        XCTAssertTrue(r.findings.isEmpty, "\(r.findings)")
    }

    func testDataSourceDelayAndMerges() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.source(0x5000, type: .dataAdd, queue: globalDefault, at: 0)
        s.activate(0x5000, at: 0)
        s.add(.sourceMergeData, us(10), tid: mainTid, a: 0x5000, b: 1)
        s.add(.sourceMergeData, us(12), tid: mainTid, a: 0x5000, b: 1)
        s.handler(0x5000, data: 2, from: us(15), to: us(16), on: 201)
        s.add(.sourceMergeData, us(20), tid: mainTid, a: 0x5000, b: 1)
        s.handler(0x5000, data: 1, from: us(21), to: us(22), on: 201)
        let r = s.analysis()
        let runs = r.model.sources[0].runs
        XCTAssertEqual(runs.map(\.merges), [2, 1])
        XCTAssertEqual(runs.map(\.delayNs), [us(5), us(1)])
        XCTAssertEqual(runs.map(\.coalesced), [true, false])
        XCTAssertEqual(r.statistics.sources[0].delay.maxNs, us(5))
        XCTAssertEqual(r.statistics.sources[0].merges, 3)
    }

    func testGroupRoundsNotifyAndLastMember() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.add(.groupCreate, 0, tid: mainTid, a: 0x6000)
        s.item(1, on: globalDefault, at: 0, runOn: 201, start: 0, end: us(10), kind: .groupAsync, extra: 0x6000)
        s.item(2, on: globalDefault, at: us(1), runOn: 202, start: us(1), end: us(20), kind: .groupAsync, extra: 0x6000)
        s.item(3, on: mainQueueAddress, at: us(2), runOn: mainTid, start: us(25), end: us(26), kind: .groupNotify,
               extra: 0x6000)
        // A second round by hand: enter on main, leave inside an item on 201.
        s.add(.groupEnter, us(30), tid: mainTid, a: 0x6000)
        s.enqueue(4, on: globalDefault, at: us(30))
        s.start(4, at: us(31), on: 201)
        s.add(.groupLeave, us(40), tid: 201, a: 0x6000)
        s.end(4, at: us(41), on: 201)
        s.groupWait(0x6000, from: us(30), to: us(40), on: mainTid)
        let r = s.analysis()
        let g = r.model.groups[0]
        XCTAssertEqual(g.enters, 3)
        XCTAssertEqual(g.leaves, 3)
        XCTAssertEqual(g.outstanding, 0)
        XCTAssertEqual(g.rounds, [GroupRound(start: 0, end: us(20), members: 2, lastMember: r.model.item(id: 2),
                                             lastLeaveThread: r.model.thread(tid: 202)),
                                  GroupRound(start: us(30), end: us(40), members: 1, lastMember: r.model.item(id: 4),
                                             lastLeaveThread: r.model.thread(tid: 201))])
        XCTAssertEqual(g.notifies, [GroupNotify(item: r.model.item(id: 3), registered: us(2), fired: us(25))])
        let notify = r.model.items[r.model.item(id: 3)]
        XCTAssertEqual(notify.ready, us(20), "a notify is ready when the group empties")
        XCTAssertEqual(notify.wait, us(5))
        let st = r.statistics.groups[0]
        XCTAssertEqual(st.firstEnterNs, 0)
        XCTAssertEqual(st.lastLeaveNs, us(40))
        XCTAssertEqual(st.enterToLeaveNs, us(40))
        XCTAssertEqual(st.leaveToNotifyNs, us(5))
        XCTAssertEqual(st.lastMember, r.model.item(id: 4))
        XCTAssertEqual(st.notifiesFired, 1)
        XCTAssertEqual(st.waits, 1)
        let main = r.model.thread(tid: mainTid)
        XCTAssertEqual(r.model.threads[main].blocked.map(\.cause), [.groupWait])
        XCTAssertEqual(r.findingIds, ["main.blocking-call"])
    }

    func testSemaphoreWaitsThatBlocked() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.add(.semCreate, 0, tid: mainTid, a: 0x7000, b: 1)
        s.semWait(0x7000, from: us(1), to: us(2), on: 201, blocked: false)
        s.semWait(0x7000, from: us(10), to: us(40), on: 201)
        s.add(.semSignal, us(40), tid: mainTid, arg: 1, a: 0x7000)
        s.semWait(0x7000, from: us(50), to: us(150), on: 201, blocked: true, timedOut: true)
        s.add(.semSignal, us(200), tid: mainTid, arg: 0, a: 0x7000)
        let r = s.analysis()
        let sem = r.model.semaphores[0]
        XCTAssertEqual(sem.initialValue, 1)
        XCTAssertEqual(sem.waits, 3)
        XCTAssertEqual(sem.blockedWaits, 2)
        XCTAssertEqual(sem.timedOutWaits, 1)
        XCTAssertEqual(sem.blockedNs, us(130))
        XCTAssertEqual(sem.maxBlockedNs, us(100))
        XCTAssertEqual(sem.signals, 2)
        XCTAssertEqual(sem.wakeups, 1)
        let st = r.statistics.semaphores[0]
        XCTAssertEqual(st.fastWaits, 1)
        XCTAssertEqual(st.blocked.count, 2)
        XCTAssertEqual(st.blocked.totalNs, us(130))
        let worker = r.model.thread(tid: 201)
        XCTAssertEqual(r.model.threads[worker].blocked.map(\.timedOut), [false, true], "the fast-path wait is not a blocked interval")
    }

    func testApplySpanIterationsAndSpeedup() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.add(.applyBegin, 0, tid: mainTid, a: 50, b: globalDefault, c: 4)
        for (tid, start) in [(mainTid, ms(0)), (mainTid, ms(10)), (Int32(201), ms(1)), (Int32(201), ms(11))] {
            s.add(.applyIterStart, start, tid: tid, a: 50)
            s.add(.applyIterEnd, start + ms(10), tid: tid, a: 50)
        }
        s.add(.applyEnd, ms(22), tid: mainTid, a: 50)
        let r = s.analysis()
        let a = r.statistics.applies[0]
        XCTAssertEqual(a.iterations, 4)
        XCTAssertEqual(a.iterationsRun, 4)
        XCTAssertEqual(a.spanNs, ms(22))
        XCTAssertEqual(a.iterationTotalNs, ms(40))
        XCTAssertEqual(a.iterationMeanNs, ms(10))
        XCTAssertEqual(a.speedup, 40.0 / 22.0, accuracy: 1e-9)
        XCTAssertEqual(a.maxWidth, 2)
        let main = r.model.thread(tid: mainTid), worker = r.model.thread(tid: 201)
        XCTAssertEqual(a.threads, [ApplyThreadShare(thread: main, iterations: 2, busyNs: ms(20)),
                                   ApplyThreadShare(thread: worker, iterations: 2, busyNs: ms(20))])
        XCTAssertEqual(a.queue, r.model.queue(labelled: "com.apple.root.default-qos"))
        XCTAssertEqual(r.model.threads[main].blocked.map(\.cause), [.apply])
        XCTAssertEqual(r.model.threads[main].busyNs, ms(20), "the caller runs iterations too")
        // A command-line tool's main thread (it serves no main queue) may block: no finding.
        XCTAssertEqual(r.findingIds, [])
    }

    func testDispatchIOAndAnnotations() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.add(.ioCreate, 0, tid: mainTid, arg: 0, a: 0x8000, b: 5, string: "")
        s.add(.ioRead, us(1), tid: mainTid, a: 0x8000, b: 900, c: 0, d: 4096)
        s.add(.ioHandlerBegin, us(5), tid: 201, arg: 0, a: 900, b: 1000)
        s.add(.ioHandlerEnd, us(6), tid: 201, a: 900)
        s.add(.ioHandlerBegin, us(8), tid: 201, arg: 1, a: 900, b: 3096)
        s.add(.ioHandlerEnd, us(10), tid: 201, a: 900)
        s.add(.ioClose, us(11), tid: mainTid, a: 0x8000)
        s.add(.ioCleanupBegin, us(12), tid: 201, a: 0x8000)
        s.add(.ioCleanupEnd, us(13), tid: 201, a: 0x8000)
        s.add(.intervalBegin, us(1), tid: mainTid, a: 1, string: "load")
        s.add(.intervalEnd, us(12), tid: 201, a: 1)
        let m = s.model()
        XCTAssertEqual(m.channels.count, 1)
        XCTAssertEqual(m.channels[0].fd, 5)
        XCTAssertEqual(m.channels[0].closedAt, us(11))
        XCTAssertEqual(m.channels[0].cleanupAt, us(12))
        let op = m.ioOperations[0]
        XCTAssertEqual(op.length, 4096)
        XCTAssertEqual(op.bytes, 4096)
        XCTAssertEqual(op.handlerRuns, 2)
        XCTAssertEqual(op.doneAt, us(8))
        XCTAssertEqual(op.handlerBusyNs, us(3))
        XCTAssertEqual(m.threads[m.thread(tid: 201)].busyNs, us(3))
        XCTAssertEqual(m.intervals, [AnnotatedInterval(id: 1, name: "load", begin: us(1), end: us(12),
                                                       thread: m.thread(tid: mainTid), endThread: m.thread(tid: 201))])
    }
}
