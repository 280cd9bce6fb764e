// Findings grouped within one process (the same rule on the same code site, else the same
// queue label), and `qtrace stats`' default text bounded however many objects a program made.
import XCTest
import QTraceFormat
import QTraceText
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class FindingGroupingTests: XCTestCase {
    /// `n` serial queues, each one item still running at the end (item.running-at-end), fed
    /// from code site 1 when `site`, labelled `label(k)`.
    func stuckQueues(_ n: Int, site: Bool, label: (Int) -> String) -> TraceScript {
        var s = TraceScript()
        s.info.ncpu = 512  // as many CPUs as stuck threads: no cpu.saturated in these counts
        s.mainAndGlobals()
        if site { s.add(.site, 0, tid: mainTid, arg: 1, flags: SiteCodeKind.function.rawValue, a: 0x14000, c: 0x13200, d: 0x13200) }
        for k in 0..<n {
            let tid = Int32(300 + k), queue = UInt64(0x10_0000 + k * 0x100)
            s.thread(tid)
            s.queue(queue, label(k))
            s.add(.enqueue, us(1), tid: mainTid, arg: ItemKind.async.rawValue, a: UInt64(k + 1), b: queue, d: site ? 1 : 0)
            s.start(UInt64(k + 1), at: us(2) + us(UInt64(k)), on: tid)
        }
        s.add(.mark, ms(2000), tid: mainTid, string: "end")
        return s
    }

    func testOneSiteFeedingManyQueuesIsOneGroup() {
        let r = stuckQueues(30, site: true) { "com.example.node#\($0)" }.analysis()
        XCTAssertEqual(r.findings("item.running-at-end").count, 30, "the analysis keeps every occurrence")
        let groups = FindingGrouping.groups([("", 0, r.findings)])
        XCTAssertEqual(groups.map(\.id), ["item.running-at-end"])
        XCTAssertEqual(groups[0].count, 30)
        // The worst is the longest: the first item started first.
        XCTAssertEqual(groups[0].worst.start, us(2))
        let text = StatsText.render(r, tracePath: nil)
        XCTAssertTrue(text.contains("WARNING item.running-at-end ×30: worst: "), text)
    }

    func testQueuesOfOneLabelAreOneGroupWithoutSites() {
        // One label, 30 queues (a queue created anew each lap): told apart by address in the
        // tables, one finding to read.
        let r = stuckQueues(30, site: false) { _ in "com.example.lap" }.analysis()
        XCTAssertNotEqual(r.findings("item.running-at-end")[0].objects[0].label, "com.example.lap", "names carry a suffix")
        let groups = FindingGrouping.groups([("", 0, r.findings)])
        XCTAssertEqual(groups.map(\.count), [30])
        XCTAssertEqual(groups[0].subject, "com.example.lap")
    }

    func testQueueLabelOfName() {
        XCTAssertEqual(queueLabel(ofName: "com.example.a [0x3000#2]"), "com.example.a")
        XCTAssertEqual(queueLabel(ofName: "com.example.a"), "com.example.a")
        XCTAssertEqual(queueLabel(ofName: "[x]"), "[x]")
    }

    /// 300 of everything: distinct queues with findings, semaphores, groups, sources, applies.
    func crowdedProgram() -> TraceScript {
        var s = stuckQueues(300, site: false) { "com.example.q\($0)" }
        for k in 0..<300 {
            let object = UInt64(0x900_0000 + k * 0x10)
            s.add(.semCreate, us(1), tid: mainTid, a: object, b: 0)
            s.semWait(object, from: us(3), to: us(4), on: mainTid)
            s.add(.groupEnter, us(3), tid: mainTid, a: object + 0x100_0000)
            s.add(.groupLeave, us(4), tid: mainTid, a: object + 0x100_0000)
            s.source(object + 0x200_0000, type: .read, queue: globalDefault, at: us(1))
            s.resume(object + 0x200_0000, at: us(1))
            let at = us(1000 + 2 * UInt64(k)), apply = UInt64(1000 + k)
            s.add(.applyBegin, at, tid: mainTid, a: apply, b: 0, c: 1)
            s.add(.applyIterStart, at, tid: mainTid, a: apply); s.add(.applyIterEnd, at + us(1), tid: mainTid, a: apply)
            s.add(.applyEnd, at + us(1), tid: mainTid, a: apply)
        }
        return s
    }

    func testDefaultStatsTextIsBounded() {
        let r = crowdedProgram().analysis()
        XCTAssertEqual(r.statistics.semaphores.count, 300)
        XCTAssertEqual(FindingGrouping.groups([("", 0, r.findings)]).count, 300)
        let text = StatsText.render(r, tracePath: nil)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        XCTAssertLessThanOrEqual(lines, 200, text)
        for what in ["queues", "threads", "semaphores", "groups", "sources", "applies", "findings"] {
            XCTAssertTrue(text.contains(" more \(what) (--all shows them)"), "\(what) bounded:\n\(text)")
        }
        XCTAssertTrue(text.contains("280 more findings"), text)
        // --all shows everything.
        let all = StatsText.render(r, tracePath: nil, limit: 0)
        XCTAssertGreaterThan(all.split(separator: "\n").count, 1500)
        XCTAssertFalse(all.contains("--all shows them"))
    }

    func testBusiestSemaphoresFirst() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.add(.semCreate, 0, tid: mainTid, a: 0x7000, b: 0)
        s.add(.semCreate, 0, tid: mainTid, a: 0x7100, b: 0)
        s.semWait(0x7000, from: us(1), to: us(2), on: mainTid)
        s.semWait(0x7100, from: us(3), to: us(30), on: mainTid)
        let r = s.analysis()
        XCTAssertEqual(r.statistics.semaphoresByBlockedTime.map(\.address), ["0x7100", "0x7000"])
    }
}
