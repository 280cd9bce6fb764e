// Recordings of several processes (the overview, finding groups, pairing for diff) and the
// names a reader can tell apart (issue 15): built from synthetic event streams.
import QTraceFormat
import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class RecordingTests: XCTestCase {
    /// A tool whose worker blocks 2 s in a group wait at one code site.
    func waitingTool(pid: Int, executable: String = "/usr/bin/swift-driver", group: UInt64 = 0x9000,
                     waitMs: UInt64 = 2000) -> AnalysisResult {
        var s = TraceScript()
        s.info.pid = pid
        s.info.executable = executable
        s.info.commandLine = executable + " -c main.swift"
        s.info.initRealtimeNs = UInt64(pid) * 1_000_000
        s.mainAndGlobals()
        s.thread(201)
        s.add(.site, us(1), tid: 201, arg: 7, flags: SiteCodeKind.none.rawValue, c: 0x15000, d: 0x15000)
        s.add(.groupCreate, us(1), tid: 201, a: group)
        s.add(.groupEnter, us(2), tid: 201, a: group)
        s.item(1, on: globalDefault, at: us(2), runOn: 201, start: us(2), end: ms(waitMs + 1))
        s.add(.groupWaitBegin, us(3), tid: 201, a: group, b: .max)
        s.add(.groupLeave, ms(waitMs), tid: mainTid, a: group)
        s.add(.groupWaitEnd, ms(waitMs), tid: 201, a: group, b: 7)
        return s.analysis()
    }

    func testIdenticalFindingsOfOneExecutableAreOneGroupWithTheWorstCase() {
        let results = [waitingTool(pid: 10, group: 0x9000, waitMs: 1500), waitingTool(pid: 11, group: 0x9100, waitMs: 3000),
                       waitingTool(pid: 12, executable: "/usr/bin/swift-frontend", waitMs: 1200)]
        for r in results { XCTAssertEqual(r.findingIds, ["wait.long"]) }
        var builder = RecordingOverview.Builder()
        for r in results { builder.add(r) }
        let overview = builder.build()
        XCTAssertEqual(overview.findingGroups.count, 2, "\(overview.findingGroups)")
        let driver = overview.findingGroups[0]
        XCTAssertEqual(driver.id, "wait.long")
        XCTAssertEqual(driver.executable, "swift-driver")
        XCTAssertEqual(driver.count, 2)
        XCTAssertEqual(driver.pids, [10, 11])
        XCTAssertTrue(driver.worst.message.contains("3.00 s"), driver.worst.message)
        XCTAssertEqual(overview.findingGroups[1].executable, "swift-frontend")
        XCTAssertEqual(overview.total.processes, 3)
        XCTAssertEqual(overview.total.findings.warning, 3)
        XCTAssertEqual(overview.total.findingGroups, 2)
        XCTAssertEqual(overview.processes.map(\.pid), [10, 11, 12], "start order")
        XCTAssertEqual(overview.processes[0].arguments, "-c main.swift")
        XCTAssertEqual(overview.processes[0].items, 1)
        XCTAssertEqual(overview.processes[0].busiestQueue, "com.apple.root.default-qos")
        // Spans from the first start (10 ms) to the last end (11 ms + 3 s).
        XCTAssertEqual(overview.total.spanNs, ms(11) + results[1].statistics.durationNs - ms(10))
    }

    func testDiffPairsProcessesByExecutableAndArguments() {
        func summary(_ r: AnalysisResult) -> AnalysisSummary { AnalysisSummary(result: r, tracePath: nil, generator: "test") }
        let base = [waitingTool(pid: 1), waitingTool(pid: 2), waitingTool(pid: 3, executable: "/bin/ld")].map(summary)
        let new = [waitingTool(pid: 7, executable: "/bin/ld"), waitingTool(pid: 8)].map(summary)
        let pairing = RecordingPairing(base: base, new: new)
        XCTAssertEqual(pairing.pairs.map { [$0.base.trace.pid, $0.new.trace.pid] }, [[1, 8], [3, 7]])
        XCTAssertEqual(pairing.onlyInBase.map(\.trace.pid), [2])
        XCTAssertEqual(pairing.onlyInNew.map(\.trace.pid), [])
    }

    func testAnItemRunningAtTheEndIsShownAndFlagged() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.item(1, on: globalDefault, at: 0, runOn: 201, start: 0, end: ms(2))
        s.thread(202)
        s.enqueue(2, on: globalDefault, at: ms(1))
        s.start(2, at: ms(1), on: 202)
        s.add(.threadExit, ms(3_000), tid: mainTid)
        let r = s.analysis()
        let q = r.statistics.queues[r.model.queue(labelled: "com.apple.root.default-qos")]
        XCTAssertEqual(q.runningAtEnd, 1)
        XCTAssertEqual(q.runningAtEndLongestNs, ms(2_999))
        XCTAssertEqual(q.run.maxNs, ms(2), "the run columns hold finished items only")
        let f = r.findings("item.running-at-end")
        XCTAssertEqual(f.count, 1)
        XCTAssertTrue(f[0].message.hasPrefix("item id=2"), f[0].message)
        XCTAssertTrue(f[0].message.contains("≥ 3.00 s"), f[0].message)
    }

    func testApplyAdviceDependsOnTheQueue() {
        func apply(onto queue: UInt64) -> Finding? {
            var s = TraceScript()
            s.mainAndGlobals()
            s.queue(0x3000, "com.example.serial")
            s.add(.applyBegin, ms(1), tid: mainTid, a: 1, b: queue, c: 3)
            for k: UInt64 in 0..<3 {
                s.add(.applyIterStart, ms(1 + k), tid: mainTid, a: 1)
                s.add(.applyIterEnd, ms(2 + k), tid: mainTid, a: 1)
            }
            s.add(.applyEnd, ms(4), tid: mainTid, a: 1)
            return s.analysis().findings("apply.no-parallelism").first
        }
        let serial = apply(onto: 0x3000)?.message ?? ""
        XCTAssertTrue(serial.hasPrefix("dispatch_apply onto the serial queue 'com.example.serial'"), serial)
        XCTAssertTrue(serial.contains("DISPATCH_APPLY_AUTO"), serial)
        let auto = apply(onto: 0)?.message ?? ""
        XCTAssertTrue(auto.hasPrefix("concurrentPerform (dispatch_apply with DISPATCH_APPLY_AUTO)"), auto)
        XCTAssertFalse(auto.contains("run it from a concurrent queue"), auto)
    }

    func testQueuesSharingALabelAndWorkersAreNamedApart() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.queue(0x3000, "Swift global concurrent queue", concurrent: true, qos: .utility)
        s.queue(0x3100, "Swift global concurrent queue", concurrent: true, qos: .userInitiated)
        s.queue(0x3200, "com.example.twin")
        s.queue(0x3300, "com.example.twin")
        s.thread(201, name: "oot.default-qos")
        s.item(1, on: 0x3000, at: 0, runOn: 201, start: 0, end: ms(1))
        // "-qos.overcommit" ends every overcommit root's label: the items' root decides.
        s.add(.queueInfo, 0, tid: mainTid, arg: 2 | UInt32(QoSClass.utility.rawValue) << 8, a: 0x2400,
              string: "com.apple.root.utility-qos.overcommit")
        s.queue(0x3400, "com.example.io", target: 0x2400)
        s.thread(202, name: "-qos.overcommit")
        s.item(2, on: 0x3400, at: 0, runOn: 202, start: 0, end: ms(1))
        s.thread(203, name: "-qos.overcommit")  // ran nothing: no root to name it by
        let m = s.model()
        let names = Set(m.queues.map(queueName))
        XCTAssertTrue(names.contains("Swift global concurrent queue [utility]"), "\(names)")
        XCTAssertTrue(names.contains("Swift global concurrent queue [user-initiated]"), "\(names)")
        XCTAssertTrue(names.contains("com.example.twin [0x3200]"), "\(names)")
        XCTAssertTrue(names.contains("com.apple.main-thread"), "a unique label stays as it is")
        XCTAssertEqual(threadName(m.threads[m.thread(tid: 201)]), "worker 201 (com.apple.root.default-qos)")
        XCTAssertEqual(threadName(m.threads[m.thread(tid: 202)]), "worker 202 (com.apple.root.utility-qos.overcommit)")
        XCTAssertEqual(threadName(m.threads[m.thread(tid: 203)]), "worker 203 (overcommit root queue)")
    }
}

final class LiveViewTests: XCTestCase {
    func testWindowRatesAndCurrentPendingAndRunning() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.thread(202)
        s.queue(0x3000, "com.example.work")
        // Before the window (ends at 10 s, window 2 s): 5 short items.
        for k: UInt64 in 0..<5 { s.item(k + 1, on: 0x3000, at: ms(100 * k), runOn: 201, start: ms(100 * k), end: ms(100 * k + 10)) }
        // In the window: 4 items waiting 1 ms and running 2 ms.
        for k: UInt64 in 0..<4 {
            let t = ms(8_500 + 200 * k)
            s.item(k + 10, on: 0x3000, at: t, runOn: 201, start: t + ms(1), end: t + ms(3))
        }
        s.enqueue(20, on: 0x3000, at: ms(9_900))               // pending at the end
        s.enqueue(21, on: 0x3000, at: ms(9_000))
        s.start(21, at: ms(9_950), on: 202)                    // running at the end
        s.thread(203, at: ms(9_990))
        s.add(.threadExit, ms(10_000), tid: 203)              // the last event read
        let live = LiveSnapshot(model: s.model(), windowNs: ms(2_000))
        XCTAssertEqual(live.nowNs, ms(10_000))
        let row = live.queues.first { $0.name == "com.example.work" }
        XCTAssertEqual(row?.pending, 1)
        XCTAssertEqual(row?.running, 1)
        XCTAssertEqual(row?.itemsPerSecond ?? 0, 2.5, accuracy: 1e-9, "5 started in 2 s (4 + the running one)")
        XCTAssertEqual(row?.run.count, 4)
        XCTAssertEqual(row?.run.p99Ns, ms(2))
        XCTAssertEqual(row?.wait.maxNs, ms(950), "the running item waited 950 ms")
        XCTAssertEqual(live.threadsAlive, 3, "main, 201 and 202; 203 exited")
        let model = s.model()
        let recent = LiveSnapshot.recentItems(model, queue: model.queue(labelled: "com.example.work"), limit: 3)
        XCTAssertEqual(recent.map(\.name), ["item id=20", "item id=21", "item id=13"], "pending first, then newest started")
        XCTAssertEqual(recent.map(\.state), ["pending", "running", "done"])
        XCTAssertEqual(recent[2].runNs, ms(2))
        XCTAssertEqual(LiveSortKey.rate.next, .wait)
        XCTAssertEqual(LiveSortKey.pending.next, .rate)
    }
}
