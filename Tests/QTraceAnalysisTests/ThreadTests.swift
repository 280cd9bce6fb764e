import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class ThreadTests: XCTestCase {
    /// A blocked interval packs its cause, time-out and site into one word: each cause comes
    /// back as it went in, beside the other two.
    func testBlockedIntervalKeepsEachCause() {
        for cause in BlockCause.allCases {
            var interval = BlockedInterval(thread: 1, start: 5, end: 9, cause: cause, object: 2, timedOut: true)
            interval.siteRaw = 0xAB_CDEF
            XCTAssertEqual(interval.cause, cause)
            XCTAssertTrue(interval.timedOut)
            XCTAssertEqual(interval.siteRaw, 0xAB_CDEF)
            interval.cause = cause == .sync ? .workItemWait : .sync
            XCTAssertNotEqual(interval.cause, cause)
            XCTAssertEqual(interval.siteRaw, 0xAB_CDEF)
        }
    }

    func testThreadLifetimesStatesAndCounts() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.queue(0x3000, "com.example.a")
        s.queue(0x3100, "com.example.b")
        s.thread(201, at: us(10), name: "worker-1")
        s.thread(202, at: us(20))
        s.item(1, on: 0x3000, at: us(10), runOn: 201, start: us(10), end: us(30))
        s.item(2, on: 0x3100, at: us(10), runOn: 202, start: us(20), end: us(40))
        s.item(3, on: 0x3100, at: us(30), runOn: 201, start: us(30), end: us(50))
        // Worker 202 blocks on a semaphore inside an item, 40..60 blocked.
        s.enqueue(4, on: 0x3000, at: us(35))
        s.start(4, at: us(40), on: 202)
        s.semWait(0x9000, from: us(45), to: us(60), on: 202)
        s.end(4, at: us(70), on: 202)
        s.exit(201, at: us(80))
        s.exit(202, at: us(90))
        s.add(.mark, us(100), tid: mainTid, string: "end")
        let r = s.analysis()
        let m = r.model
        let w1 = m.thread(tid: 201), w2 = m.thread(tid: 202)
        XCTAssertEqual(m.threads[w1].name, "worker-1")
        XCTAssertEqual(m.threads[w1].kind, .worker)
        XCTAssertEqual(m.threads[w1].createdAt, us(10))
        XCTAssertEqual(m.threads[w1].exitedAt, us(80))
        XCTAssertEqual(m.threads[w1].busy, [Span(start: us(10), end: us(50))], "back-to-back items merge")
        XCTAssertEqual(m.threads[w1].busyNs, us(40))
        XCTAssertEqual(m.threads[w2].busy, [Span(start: us(20), end: us(45)), Span(start: us(60), end: us(70))])
        XCTAssertEqual(m.threads[w2].busyNs, us(35))
        XCTAssertEqual(m.threads[w2].blockedNs, us(15))
        XCTAssertEqual(m.threads[w2].blocked.map(\.cause), [.semaphore])
        let t1 = r.statistics.threads[w1]
        XCTAssertEqual(t1.items, 2)
        XCTAssertEqual(t1.queues, [ThreadQueueShare(queue: m.queue(labelled: "com.example.a"), items: 1, runNs: us(20)),
                                   ThreadQueueShare(queue: m.queue(labelled: "com.example.b"), items: 1, runNs: us(20))])
        XCTAssertEqual(t1.busyShare, 40.0 / 70.0, accuracy: 1e-9)
        let c = r.statistics.threadCounts
        XCTAssertEqual(c.seen, 3)
        XCTAssertEqual(c.created, 3)
        XCTAssertEqual(c.exited, 2)
        XCTAssertEqual(c.workers, 2)
        XCTAssertEqual(c.peakAlive, 3)
        XCTAssertEqual(c.peakRunning, 2)
        XCTAssertEqual(c.peakBlocked, 1)
        XCTAssertEqual(c.peakWorkers, 2)
        let running = m.threadActivity.running.points
        XCTAssertEqual(running.map(\.time), [us(10), us(20), us(45), us(50), us(60), us(70)])
        XCTAssertEqual(running.map(\.last), [1, 2, 1, 0, 1, 0])
        XCTAssertEqual(m.threadActivity.alive.points.map(\.last), [1, 2, 3, 2, 1])
    }

    func testThreadSeenWithoutStartAndReusedTid() {
        var s = TraceScript()
        s.mainAndGlobals()
        // A thread from before tracing drains a queue: inferred to be a worker.
        s.item(1, on: globalDefault, at: us(1), runOn: 300, start: us(2), end: us(3))
        s.exit(300, at: us(4))
        // The tid comes back as another thread.
        s.thread(300, at: us(10), worker: false)
        s.add(.mark, us(11), tid: 300, string: "x")
        let m = s.model()
        let threads = m.threads.filter { $0.tid == 300 }
        XCTAssertEqual(threads.count, 2)
        XCTAssertEqual(threads[0].kind, .worker)
        XCTAssertNil(threads[0].createdAt)
        XCTAssertEqual(threads[0].firstSeen, us(2))
        XCTAssertEqual(threads[1].kind, .other)
        XCTAssertEqual(threads[1].createdAt, us(10))
    }

    func testMainThreadStatistics() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.item(1, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(1), end: ms(3))
        s.item(2, on: mainQueueAddress, at: 0, runOn: mainTid, start: ms(3), end: ms(23))
        s.item(3, on: mainQueueAddress, at: ms(30), runOn: mainTid, start: ms(30), end: ms(150))
        let r = s.analysis()
        let main = r.statistics.mainThread
        XCTAssertEqual(main.thread, r.model.thread(tid: mainTid))
        XCTAssertEqual(main.mainQueue, r.model.queue(labelled: "com.apple.main-thread"))
        XCTAssertEqual(main.items, 3)
        XCTAssertEqual(main.itemsOverFrame, 2)
        XCTAssertEqual(main.itemsOverHang, 1)
        XCTAssertEqual(main.run.maxNs, ms(120))
        XCTAssertEqual(main.longestItems.map(\.runNs), [ms(120), ms(20), ms(2)])
        XCTAssertEqual(main.wait.maxNs, ms(3))
        XCTAssertEqual(main.wait.count, 3)
        XCTAssertEqual(main.busyShare, Double(ms(142)) / Double(ms(150)), accuracy: 1e-9)
        XCTAssertEqual(r.findingIds, ["main.hang", "main.long-item"])
    }
}
