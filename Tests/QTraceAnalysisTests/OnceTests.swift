// dispatch_once: only a thread that waited for another thread's initializer is blocked.
import XCTest
@testable import QTraceAnalysis
import QTraceFormat
import QTraceAnalysisTestSupport

final class OnceTests: XCTestCase {
    /// Worker 201 runs a 50 ms initializer; main calls dispatch_once meanwhile and waits.
    func onceScript() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.once(0x9000, from: ms(1), to: ms(51), on: 201, outcome: .ran)
        s.once(0x9000, from: ms(11), to: ms(51), on: mainTid, outcome: .waited)
        return s
    }

    func testAWaitIsABlockedIntervalOfCauseOnce() {
        let model = onceScript().model()
        let main = model.thread(tid: mainTid)
        let waits = model.threads[main].blocked
        XCTAssertEqual(waits.map(\.cause), [.once])
        XCTAssertEqual(waits.first?.start, ms(11))
        XCTAssertEqual(waits.first?.end, ms(51))
    }

    func testRunningTheInitializerIsNoWait() {
        let model = onceScript().model()
        XCTAssertEqual(model.threads[model.thread(tid: 201)].blocked, [])
    }

    func testAWaitOnMainIsAFindingNamingDispatchOnce() {
        var s = onceScript()
        s.servesMainQueue(at: ms(1))
        let r = s.analysis()
        let blocking = r.findings("main.blocking-call")
        XCTAssertEqual(blocking.count, 1)
        XCTAssertTrue(blocking.first?.message.contains("a dispatch_once wait") ?? false, "\(blocking)")
    }

    func testAnUnmatchedEndIsAnAnomalyNotACrash() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.add(.onceEnd, ms(1), tid: mainTid, arg: OnceOutcome.waited.rawValue, a: 0x9000)
        let model = s.model()
        XCTAssertEqual(model.anomalies.unmatchedWaitEnds, 1)
        XCTAssertEqual(model.threads[model.thread(tid: mainTid)].blocked, [])
    }
}
