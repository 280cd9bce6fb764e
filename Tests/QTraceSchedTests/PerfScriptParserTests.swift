// The perf script parser on the lines perf prints, including thread names built to confuse it.
import XCTest
@testable import QTraceSched

final class PerfScriptParserTests: XCTestCase {
    func testSwitchLine() throws {
        let line = "1234/1240 [001]   486.905096701:     sched:sched_switch: prev_comm=my worker prev_pid=1240 prev_prio=120 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120"
        XCTAssertEqual(PerfScriptParser.parse(line), PerfSchedRecord(
            timeNs: 486_905_096_701, cpu: 1, pid: 1234, tid: 1240, kind: .switched(prevState: "R+", nextTid: 0)))
    }

    /// Names (at most 15 bytes) holding the field markers do not move the fields.
    func testNamesThatImitateFields() throws {
        let line = "  7/7 [000] 1.000000002: sched:sched_switch: prev_comm=x prev_state=D prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=a next_pid=9 next_pid=8 next_prio=100"
        XCTAssertEqual(PerfScriptParser.parse(line)?.kind, .switched(prevState: "S", nextTid: 8))
        let wake = "5/6 [003] 2.5: sched:sched_wakeup: comm=w pid=1 x pid=1241 prio=120 target_cpu=003"
        XCTAssertEqual(PerfScriptParser.parse(wake), PerfSchedRecord(
            timeNs: 2_500_000_000, cpu: 3, pid: 5, tid: 6, kind: .wakeup(tid: 1241, isNew: false)))
    }

    func testWakeupNew() {
        let line = "10/10 [000]    3.000000100:      sched:sched_wakeup_new: comm=qtrace-fixtures pid=11 prio=120 target_cpu=001\n"
        XCTAssertEqual(PerfScriptParser.parse(line)?.kind, .wakeup(tid: 11, isNew: true))
        XCTAssertEqual(PerfScriptParser.parse(line)?.timeNs, 3_000_000_100)
    }

    func testInvolves() {
        let out = PerfSchedRecord(timeNs: 0, cpu: 0, pid: 1, tid: 10, kind: .switched(prevState: "S", nextTid: 20))
        XCTAssertTrue(out.involves([10]))
        XCTAssertTrue(out.involves([20]))
        XCTAssertFalse(out.involves([1, 30]))
        let wake = PerfSchedRecord(timeNs: 0, cpu: 0, pid: 1, tid: 10, kind: .wakeup(tid: 20, isNew: false))
        XCTAssertTrue(wake.involves([20]))
        XCTAssertFalse(wake.involves([10]), "the waker's state does not change")
    }

    func testOtherLinesAreNotRecords() {
        for line in ["", "garbage", "10/10 [000] 3.0: cpu-clock: 123",
                     "10/10 [000] 3.0: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=S",
                     "10/10 [000] 3.0: sched:sched_wakeup: comm=a pid=x prio=1 target_cpu=000",
                     "10/10 [000]: sched:sched_wakeup: comm=a pid=1 prio=1 target_cpu=000",
                     "10 [000] 3.0: sched:sched_wakeup: comm=a pid=1 prio=1 target_cpu=000"] {
            XCTAssertNil(PerfScriptParser.parse(line), line)
        }
    }

    /// Timestamps beyond a UInt64 of nanoseconds are no timestamps (they trapped, found by the
    /// perf fuzzer: docs/fuzzing.md).
    func testTimestampsTooLargeForNanosecondsAreNotRecords() {
        let wake = ": sched:sched_wakeup: comm=a pid=1 prio=1 target_cpu=000"
        XCTAssertNil(PerfScriptParser.parse("10/10 [000] 999999999999999999.0" + wake))
        XCTAssertNil(PerfScriptParser.parse("10/10 [000] 18446744073.999999999" + wake))
        XCTAssertEqual(PerfScriptParser.parse("10/10 [000] 18446744073.709551615" + wake)?.timeNs, .max)
    }
}
