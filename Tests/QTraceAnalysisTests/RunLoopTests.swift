// Foundation run loops in the model (RUNLOOP_TIMER, RUNLOOP_TIMER_FIRE, QUEUE_INFO kind 4):
// a run loop is a queue of kind runLoop, a Timer a timer source of the run loop that fires it,
// and each fire's lateness is measured against the date the run loop programmed for it (CF
// skips missed fires, so it is not start + k × interval as for a Dispatch timer).
import QTraceFormat
import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class RunLoopTests: XCTestCase {
    let runLoop: UInt64 = 0x7000, timer: UInt64 = 0x7100

    /// A dispatch wall time for trace time `t` (the encoding RUNLOOP_TIMER's due uses).
    func wall(_ s: TraceScript, _ t: UInt64) -> UInt64 { 0 &- (s.info.initRealtimeNs + t) }

    func testATimerFiresAsItemsOfItsRunLoopWithLatenessAgainstItsProgrammedDate() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.add(.runLoopTimer, 0, tid: mainTid, a: timer, b: ms(10), c: wall(s, ms(10)), d: 0)
        s.add(.queueInfo, us(1), tid: mainTid, arg: 4, a: runLoop, string: "main run loop")
        // Due at 10 ms, fired 0.3 ms late; the run loop then stalled past 20 and 30 ms: CF's next
        // date is 40 ms, fired 0.1 ms late (a Dispatch-style count would call it 20 ms late).
        s.add(.runLoopTimerFire, us(10_300), tid: mainTid, a: timer, b: runLoop, c: wall(s, ms(10)))
        s.add(.sourceHandlerEnd, us(10_400), tid: mainTid, a: timer)
        s.add(.runLoopTimerFire, us(40_100), tid: mainTid, a: timer, b: runLoop, c: wall(s, ms(40)))
        s.add(.sourceHandlerEnd, us(40_150), tid: mainTid, a: timer)
        let r = s.analysis()
        let q = try! XCTUnwrap(r.model.queues.firstIndex { $0.label == "main run loop" })
        XCTAssertEqual(r.model.queues[q].kind, .runLoop)
        XCTAssertTrue(r.model.queues[q].kind.isSerial)
        let src = r.model.sources[0]
        XCTAssertEqual(src.type, .timer)
        XCTAssertEqual(src.queue, q)
        XCTAssertEqual(src.activatedAt, 0, "a Timer needs no resume")
        XCTAssertEqual(src.timers, [TimerConfig(setAt: 0, start: ms(10), intervalNs: ms(10), leewayNs: 0)])
        XCTAssertEqual(src.runs.map(\.latenessNs), [Int64(us(300)), Int64(us(100))])
        XCTAssertEqual(src.runs.map { r.model.items[$0.item].queue }, [q, q])
        XCTAssertEqual(src.runs.map { r.model.items[$0.item].runTime }, [us(100), us(50)])
        let stats = r.statistics.sources[0]
        XCTAssertEqual(stats.eventRuns, 2)
        XCTAssertEqual(stats.timerIntervalNs, ms(10))
        XCTAssertEqual(stats.suspendedNs, 0, "never counted as suspended")
        XCTAssertEqual(r.statistics.queues[q].items, 2)
    }

    func testAOneShotTimerHasNoInterval() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.add(.runLoopTimer, 0, tid: mainTid, a: timer, b: 0, c: wall(s, ms(5)), d: 0)
        s.add(.queueInfo, 0, tid: mainTid, arg: 4, a: runLoop, string: "main run loop")
        s.add(.runLoopTimerFire, ms(5), tid: mainTid, a: timer, b: runLoop, c: wall(s, ms(5)))
        s.add(.sourceHandlerEnd, ms(6), tid: mainTid, a: timer)
        let src = s.model().sources[0]
        XCTAssertEqual(src.timers.first?.intervalNs, nil)
        XCTAssertEqual(src.runs.map(\.latenessNs), [0])
    }

    func testAFireOfAnUnknownTimerIsIgnored() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.add(.runLoopTimerFire, ms(5), tid: mainTid, a: timer, b: runLoop, c: wall(s, ms(5)))
        s.add(.sourceHandlerEnd, ms(6), tid: mainTid, a: timer)
        let model = s.model()
        XCTAssertTrue(model.sources.isEmpty)
        XCTAssertTrue(model.items.isEmpty)
    }
}
