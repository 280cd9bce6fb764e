// Suspension at scale: many queues suspended and resumed, targets with many children, a
// retarget out of a suspended parent and a target loop. The model is checked, not the time;
// but the size makes work per queue per suspend (the old full recomputation) far too slow.
import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class SuspensionScalingTests: XCTestCase {
    /// 100k queues, each suspended with an item waiting and resumed: every item waits 4 µs
    /// suspended and 1 µs for the thread.
    func testManySuspendResumePairsOnManyQueues() {
        let count = 100_000
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        var t = us(10)
        for q in 0..<count { s.queue(queueAddress(q), "com.example.s\(q)", at: t) }
        for q in 0..<count {
            t += us(10)
            s.suspend(queueAddress(q), at: t)
            s.enqueue(UInt64(q + 1), on: queueAddress(q), at: t + us(1))
            s.resume(queueAddress(q), at: t + us(5))
            s.start(UInt64(q + 1), at: t + us(6), on: 201)
            s.end(UInt64(q + 1), at: t + us(7), on: 201)
        }
        // Written in time order: no sort needed (sorting 500k events costs seconds in debug).
        let m = Analysis.buildModel(info: s.info, events: s.events)
        XCTAssertEqual(m.items.count, count)
        let byLabel = Dictionary(m.queues.indices.map { (m.queues[$0].label, $0) }, uniquingKeysWith: { a, _ in a })
        var t0 = us(10)
        for q in 0..<count {
            t0 += us(10)
            let queue = m.queues[byLabel["com.example.s\(q)"]!]
            XCTAssertEqual(queue.suspensions, [SuspendInterval(start: t0, end: t0 + us(5), initial: false)])
            XCTAssertEqual(queue.waitByCause.suspendedNs, us(4))
            XCTAssertEqual(queue.waitByCause.threadNs, us(1))
            if queue.waitByCause.suspendedNs != us(4) { break } // one failure is enough
        }
        XCTAssertTrue(m.items.allSatisfy { $0.waitCause == .suspended })
    }

    /// A parent with 1,000 children suspended and resumed 100 times, an item on one child
    /// each time; one child retargeted away while the parent is suspended; a target loop.
    func testSuspendingAParentOfManyChildrenAndRetargeting() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        let parent: UInt64 = 0x7000_0000
        s.queue(parent, "com.example.parent", at: us(1))
        for c in 0..<1_000 { s.queue(childAddress(c), "com.example.child\(c)", at: us(2), target: parent) }
        var t = us(10)
        for r in 0..<100 {
            t += us(10)
            s.suspend(parent, at: t)
            s.item(UInt64(r + 1), on: childAddress(r * 10), at: t + us(1), runOn: 201, start: t + us(4), end: t + us(5))
            s.resume(parent, at: t + us(3))
        }
        // Retargeted to the default global queue while the parent is suspended: suspended
        // from its enqueue to the retarget only.
        t += us(10)
        s.suspend(parent, at: t)
        s.item(1_000, on: childAddress(5), at: t + us(1), runOn: 201, start: t + us(5), end: t + us(6))
        s.setTarget(childAddress(5), globalDefault, at: t + us(2))
        s.resume(parent, at: t + us(4))
        // A target loop a → b → a: suspending a suspends b, resuming it ends b's suspension.
        t += us(10)
        s.queue(0x7100_0000, "com.example.loop-a", at: t)
        s.queue(0x7200_0000, "com.example.loop-b", at: t, target: 0x7100_0000)
        s.setTarget(0x7100_0000, 0x7200_0000, at: t + us(1))
        s.suspend(0x7100_0000, at: t + us(2))
        s.item(2_000, on: 0x7200_0000, at: t + us(3), runOn: 201, start: t + us(8), end: t + us(9))
        s.resume(0x7100_0000, at: t + us(7))
        let m = s.model()
        for r in 0..<100 {
            let child = m.queues[m.queue(labelled: "com.example.child\(r * 10)")]
            XCTAssertEqual(child.waitByCause.suspendedNs, us(2), "child \(r * 10)")
            XCTAssertEqual(child.waitByCause.threadNs, us(1), "child \(r * 10)")
        }
        let retargeted = m.queues[m.queue(labelled: "com.example.child5")]
        XCTAssertEqual(retargeted.waitByCause.suspendedNs, us(1))
        XCTAssertEqual(retargeted.waitByCause.threadNs, us(3))
        XCTAssertEqual(m.queues[m.queue(labelled: "com.example.parent")].suspensions.count, 101)
        XCTAssertTrue(m.queues[m.queue(labelled: "com.example.child1")].suspensions.isEmpty)
        let loop = m.queues[m.queue(labelled: "com.example.loop-b")]
        XCTAssertEqual(loop.waitByCause.suspendedNs, us(4))
        XCTAssertEqual(loop.waitByCause.threadNs, us(1))
        XCTAssertEqual(m.targetLoops.count, 1)
    }

    private func queueAddress(_ q: Int) -> UInt64 { 0x1000_0000 + UInt64(q) * 0x100 }
    private func childAddress(_ c: Int) -> UInt64 { 0x6000_0000 + UInt64(c) * 0x100 }
}
