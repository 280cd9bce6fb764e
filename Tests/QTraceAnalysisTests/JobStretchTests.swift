// A long Swift job is named where its time went: a job runs on through the functions its task
// continues in (a callee returning, a switch to a free executor) until the task suspends, so
// the function it resumed in may have returned long before (`swift build`'s main task resumed
// in SwiftPM's resolver, then ran the 57 s build in the same job).
import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class JobStretchTests: XCTestCase {
    let worker: Int32 = 301

    /// Task 1's job on a worker over [0, `end`), resumed in 0xF0, with switches (time, resume).
    func job(end: UInt64?, switches: [(UInt64, UInt64)]) -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(worker)
        s.add(.enqueue, 0, tid: mainTid, arg: ItemKind.async.rawValue, flags: EnqueueFlags([.function, .swiftConcurrency]).rawValue,
              a: 1, b: globalDefault)
        s.add(.job, 0, tid: mainTid, arg: 1, a: 1, b: 0xA000, c: 0xF0)
        s.start(1, at: us(1), on: worker)
        for (t, resume) in switches { s.add(.actorHop, t, tid: worker, arg: 1, a: 0, c: resume) }
        if let end { s.end(1, at: end, on: worker) }
        s.add(.mark, ms(3000), tid: mainTid, string: "end")
        return s
    }

    func testLongJobNamesWhereItsTimeWent() {
        let r = job(end: ms(600), switches: [(ms(50), 0xF1), (ms(60), 0xF2)]).analysis()
        XCTAssertEqual(r.model.longJobStretches()[0], JobStretch(resume: 0xF2, start: ms(60), duration: ms(540)))
        let f = r.findings("swift.long-job")
        XCTAssertEqual(f.count, 1)
        XCTAssertTrue(f[0].message.contains("(its longest stretch, 540 ms of its 600 ms, in 0xf2 from 60.0 ms on: its task went on there"), f[0].message)
        // Its task, and (no code identity here) the item in place of the function it resumed in.
        XCTAssertTrue(f[0].message.hasPrefix("a Swift job (task 1, item "), f[0].message)
    }

    /// With --sched, the job's time on a CPU decides; where the scheduler's states do not cover
    /// the job (perf dropped events, or never saw its thread), its run less blocked time does,
    /// as without --sched, instead of "computed nothing".
    func testLongJobWithoutSchedulerStatesForItsThread() {
        var other = job(end: ms(600), switches: [])
        other.schedState(.running, at: 0, tid: mainTid)
        other.schedState(.sleeping, at: ms(700), tid: mainTid)
        XCTAssertNotNil(other.analysis().model.sched)
        XCTAssertEqual(other.analysis().findings("swift.long-job").count, 1, "no states for the worker: its run counts")
        var waiting = job(end: ms(600), switches: [])
        waiting.schedState(.runnable, at: 0, tid: worker)
        waiting.schedState(.running, at: ms(550), tid: worker)
        waiting.schedState(.sleeping, at: ms(700), tid: worker)
        XCTAssertEqual(waiting.analysis().findings("swift.long-job").count, 0, "50 ms on a CPU, the rest waiting for one")
    }

    func testAJobItsOwnFunctionHeldIsNamedAsBefore() {
        // The longest stretch is the one from the job's start: no other name.
        let r = job(end: ms(600), switches: [(ms(500), 0xF1)]).analysis()
        XCTAssertEqual(r.model.longJobStretches(), [:])
        XCTAssertFalse(r.findings("swift.long-job")[0].message.contains("of its"))
        // Time spread over switches: the longest stretch is named, however short of half.
        let spread = job(end: ms(600), switches: [(ms(100), 0xF1), (ms(150), 0xF2), (ms(300), 0xF3), (ms(450), 0xF4)]).analysis()
        XCTAssertEqual(spread.model.longJobStretches()[0], JobStretch(resume: 0xF2, start: ms(150), duration: ms(150)))
    }

    func testAJobRunningAtTheEndNamesItsLongestStretch() {
        let r = job(end: nil, switches: [(ms(20), 0xF1), (ms(100), 0xF3)]).analysis()
        let f = r.findings("item.running-at-end")
        XCTAssertEqual(f.count, 1)
        XCTAssertTrue(f[0].message.contains("(its longest stretch, 2.90 s of its 3.00 s, in 0xf3 from 100 ms on"), f[0].message)
    }
}
