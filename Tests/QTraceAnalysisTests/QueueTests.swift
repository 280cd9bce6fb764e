import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class QueueTests: XCTestCase {
    /// Three items on one serial queue, drained by one worker.
    func serialScript() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201, at: us(1))
        s.queue(0x3000, "com.example.serial", at: us(1))
        s.item(1, on: 0x3000, at: us(10), runOn: 201, start: us(20), end: us(50))
        s.item(2, on: 0x3000, at: us(11), runOn: 201, start: us(50), end: us(70))
        s.item(3, on: 0x3000, at: us(12), runOn: 201, start: us(70), end: us(100))
        return s
    }

    func testSerialQueueStatistics() {
        let r = serialScript().analysis()
        let m = r.model
        let q = m.queue(labelled: "com.example.serial")
        let st = r.statistics.queues[q]
        XCTAssertEqual(m.queues[q].kind, .serial)
        XCTAssertEqual(m.queues[q].target, m.queue(labelled: "com.apple.root.default-qos"), "default target")
        XCTAssertEqual(st.items, 3)
        XCTAssertEqual(st.completed, 3)
        // Waits 10, 39, 58 µs; runs 30, 20, 30 µs.
        XCTAssertEqual(st.wait.count, 3)
        XCTAssertEqual(st.wait.minNs, us(10))
        XCTAssertPercentile(st.wait.p50Ns, us(39))
        XCTAssertEqual(st.wait.p99Ns, us(58))
        XCTAssertEqual(st.wait.maxNs, us(58))
        XCTAssertEqual(st.wait.totalNs, us(107))
        XCTAssertEqual(st.wait.meanNs, 35_666)
        XCTAssertEqual(st.run.p50Ns, us(30))
        XCTAssertEqual(st.run.minNs, us(20))
        XCTAssertEqual(st.run.totalNs, us(80))
        // Busy 20..100 of a 100 µs trace; 3 items in 100 µs.
        XCTAssertEqual(st.busyNs, us(80))
        XCTAssertEqual(st.busyShare, 0.8, accuracy: 1e-9)
        XCTAssertEqual(st.throughputPerSecond, 30_000, accuracy: 1e-6)
        XCTAssertEqual(st.widthMax, 1)
        XCTAssertEqual(st.widthMean, 1.0, accuracy: 1e-9)
        XCTAssertEqual(st.threadsServed, 1)
        XCTAssertEqual(st.backlogMax, 3)
        XCTAssertEqual(m.queues[q].backlog.points.map(\.time), [us(10), us(11), us(12), us(20), us(50), us(70)])
        XCTAssertEqual(m.queues[q].backlog.points.map(\.last), [1, 2, 3, 2, 1, 0])
    }

    func testSerialWaitSplitNamesThePreviousItem() {
        let r = serialScript().analysis()
        let m = r.model
        let q = m.queue(labelled: "com.example.serial")
        // Item 2 waits 11..50: 9 µs for a thread (item 1 itself waited), 30 µs behind item 1.
        // Item 3 waits 12..70: 8 µs for a thread, 50 µs behind items 1 and 2 (named: item 2).
        XCTAssertEqual(m.queues[q].waitByCause.behindPreviousNs, us(80))
        XCTAssertEqual(m.queues[q].waitByCause.threadNs, us(27))
        XCTAssertEqual(m.queues[q].waitByCause.suspendedNs, 0)
        let (i1, i2, i3) = (m.item(id: 1), m.item(id: 2), m.item(id: 3))
        XCTAssertEqual(m.items[i1].waitCause, .thread)
        XCTAssertNil(m.items[i1].waitedBehind)
        XCTAssertEqual(m.items[i2].waitCause, .behindPrevious)
        XCTAssertEqual(m.items[i2].waitedBehind, i1)
        XCTAssertEqual(m.items[i3].waitedBehind, i2)
        XCTAssertEqual(m.queues[q].worstWaitBehind, WaitBehind(item: i3, blocker: i2, waitNs: us(50)))
        XCTAssertEqual(r.statistics.queues[q].waitByCause, m.queues[q].waitByCause)
    }

    func testItemFieldsAndParent() {
        var s = serialScript()
        s.thread(202, at: us(1))
        // Item 1 (running on 201) submits item 4 to main: its parent is item 1.
        s.item(4, on: mainQueueAddress, at: us(30), by: 201, runOn: mainTid, start: us(120), end: us(125))
        let m = s.model()
        let i4 = m.item(id: 4)
        XCTAssertEqual(m.items[i4].parent, m.item(id: 1))
        XCTAssertEqual(m.items[i4].submitter, m.thread(tid: 201))
        XCTAssertEqual(m.items[i4].thread, m.thread(tid: mainTid))
        XCTAssertEqual(m.items[i4].queue, m.queue(labelled: "com.apple.main-thread"))
        XCTAssertEqual(m.items[i4].enqueued, us(30))
        XCTAssertEqual(m.items[i4].wait, us(90))
        XCTAssertEqual(m.items[i4].runTime, us(5))
        XCTAssertEqual(m.items[i4].origin, .enqueued)
        XCTAssertEqual(m.items[i4].qos, .userInteractive, "main queue runs at user-interactive")
        XCTAssertNil(m.items[m.item(id: 1)].parent)
    }

    func testConcurrentQueueWidthAndOutOfOrderCompletion() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.concurrent", concurrent: true)
        s.item(1, on: 0x3000, at: us(0), runOn: 201, start: us(0), end: us(30))
        s.item(2, on: 0x3000, at: us(0), runOn: 202, start: us(10), end: us(40))
        s.item(3, on: 0x3000, at: us(0), runOn: 201, start: us(30), end: us(35))
        s.add(.mark, us(50), tid: mainTid, string: "done")
        let r = s.analysis()
        let q = r.model.queue(labelled: "com.example.concurrent")
        let st = r.statistics.queues[q]
        XCTAssertEqual(st.widthMax, 2)
        XCTAssertEqual(st.busyNs, us(40))
        XCTAssertEqual(st.widthMean, Double(us(65)) / Double(us(40)), accuracy: 1e-9)
        XCTAssertEqual(st.threadsServed, 2)
        XCTAssertEqual(r.model.queues[q].waitByCause.behindPreviousNs, 0, "concurrent items do not wait behind each other")
        XCTAssertEqual(r.model.queues[q].waitByCause.threadNs, us(40))
        XCTAssertEqual(r.model.marks, [Mark(time: us(50), thread: r.model.thread(tid: mainTid), name: "done")])
    }

    func testBarrierDrainsEarlierItemsAndHoldsBackLaterOnes() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.rw", concurrent: true)
        s.item(1, on: 0x3000, at: us(0), runOn: 201, start: us(0), end: us(100))
        s.item(2, on: 0x3000, at: us(10), runOn: 202, start: us(100), end: us(150), kind: .barrierAsync)
        s.item(3, on: 0x3000, at: us(20), runOn: 201, start: us(150), end: us(160))
        let r = s.analysis()
        let m = r.model
        let q = m.queue(labelled: "com.example.rw")
        let (i1, i2, i3) = (m.item(id: 1), m.item(id: 2), m.item(id: 3))
        XCTAssertTrue(m.items[i2].isBarrier)
        // The barrier waits 90 µs for item 1 to drain; item 3 waits 130 µs behind the barrier.
        XCTAssertEqual(m.queues[q].waitByCause.behindPreviousNs, us(90))
        XCTAssertEqual(m.queues[q].waitByCause.behindBarrierNs, us(130))
        XCTAssertEqual(m.items[i2].waitedBehind, i1)
        XCTAssertEqual(m.items[i3].waitCause, .behindBarrier)
        XCTAssertEqual(m.items[i3].waitedBehind, i2)
        XCTAssertEqual(r.statistics.queues[q].barrierItems, 1)
        XCTAssertTrue(r.findings("barrier.global-queue").isEmpty)
    }

    func testSuspendedQueueWaitAndInactiveQueue() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.suspended")
        s.suspend(0x3000, at: us(0))
        s.item(1, on: 0x3000, at: us(10), runOn: 201, start: us(105), end: us(110))
        s.resume(0x3000, at: us(100))
        s.queue(0x4000, "com.example.inactive", at: us(0), inactive: true)
        s.item(2, on: 0x4000, at: us(20), runOn: 201, start: us(210), end: us(220))
        s.activate(0x4000, at: us(200))
        let m = s.model()
        let q = m.queue(labelled: "com.example.suspended")
        XCTAssertEqual(m.queues[q].waitByCause.suspendedNs, us(90))
        XCTAssertEqual(m.queues[q].waitByCause.threadNs, us(5))
        XCTAssertEqual(m.items[m.item(id: 1)].waitCause, .suspended)
        XCTAssertEqual(m.queues[q].suspensions, [SuspendInterval(start: 0, end: us(100), initial: false)])
        let inactive = m.queue(labelled: "com.example.inactive")
        XCTAssertTrue(m.queues[inactive].initiallyInactive)
        XCTAssertEqual(m.queues[inactive].suspensions, [SuspendInterval(start: 0, end: us(200), initial: true)])
        XCTAssertEqual(m.queues[inactive].waitByCause.suspendedNs, us(180))
    }

    func testSuspendingATargetSuspendsItsChildren() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.parent")
        s.queue(0x3100, "com.example.child", target: 0x3000)
        s.suspend(0x3000, at: us(0))
        s.item(1, on: 0x3100, at: us(10), runOn: 201, start: us(60), end: us(70))
        s.resume(0x3000, at: us(50))
        let m = s.model()
        XCTAssertEqual(m.queues[m.queue(labelled: "com.example.child")].waitByCause.suspendedNs, us(40))
    }

    /// A serial queue "funnel" that a serial "a" and a concurrent "b" target, threads 201-202.
    static func funnel() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.funnel")
        s.queue(0x3100, "com.example.a", target: 0x3000)
        s.queue(0x3200, "com.example.b", concurrent: true, target: 0x3000)
        return s
    }

    /// A queue's clocks start with its first item (`QueueActivity`): an item enqueued onto a
    /// child before anything ran in the serial target's domain still counts the wait behind
    /// the item that ran there first, and a queue suspended before its first item counts the
    /// suspension from that item's enqueue.
    func testClocksStartingAtTheFirstItemSplitWaitsAsFromCreation() {
        var s = Self.funnel()
        s.queue(0x3300, "com.example.late")
        s.suspend(0x3300, at: us(0))
        s.item(1, on: 0x3100, at: us(0), runOn: 201, start: us(20), end: us(50))
        s.item(2, on: 0x3200, at: us(10), runOn: 202, start: us(50), end: us(60))
        s.item(3, on: 0x3300, at: us(30), runOn: 202, start: us(75), end: us(80))
        s.resume(0x3300, at: us(70))
        let m = s.model()
        let b = m.queue(labelled: "com.example.b")
        XCTAssertEqual(m.queues[b].waitByCause.behindPreviousNs, us(30))
        XCTAssertEqual(m.queues[b].waitByCause.threadNs, us(10))
        XCTAssertEqual(m.items[m.item(id: 2)].waitedBehind, m.item(id: 1))
        let late = m.queue(labelled: "com.example.late")
        XCTAssertEqual(m.queues[late].waitByCause.suspendedNs, us(40))
        XCTAssertEqual(m.queues[late].waitByCause.threadNs, us(5))
        XCTAssertEqual(m.queues[m.queue(labelled: "com.example.funnel")].busyNs, 0, "nothing of its own ran")
        XCTAssertEqual(m.queues[m.queue(labelled: "com.example.a")].busyNs, us(30))
    }

    func testTargetFunnellingSerialisesQueuesAndRollsUp() {
        var s = Self.funnel()
        s.item(1, on: 0x3100, at: us(0), runOn: 201, start: us(0), end: us(50))
        s.item(2, on: 0x3200, at: us(10), runOn: 202, start: us(50), end: us(60))
        let r = s.analysis()
        let m = r.model
        let b = m.queue(labelled: "com.example.b")
        // b is concurrent but targets a serial queue: its item waits behind a's item.
        XCTAssertEqual(m.queues[b].waitByCause.behindPreviousNs, us(40))
        XCTAssertEqual(m.items[m.item(id: 2)].waitedBehind, m.item(id: 1))
        let funnel = m.queue(labelled: "com.example.funnel")
        let node = r.statistics.queueTree.first { $0.queue == funnel }!
        XCTAssertEqual(node.children, [m.queue(labelled: "com.example.a"), b])
        XCTAssertEqual(node.subtreeQueues, 3)
        XCTAssertEqual(node.subtreeItems, 2)
        XCTAssertEqual(node.subtreeRunNs, us(60))
        XCTAssertEqual(node.subtreeWaitNs, us(40))
        let root = r.statistics.queueTree.first { $0.queue == m.queue(labelled: "com.apple.root.default-qos") }!
        XCTAssertEqual(root.depth, 0)
        XCTAssertEqual(node.depth, 1)
        XCTAssertEqual(node.parent, root.queue)
        XCTAssertEqual(r.statistics.queueTree.first?.queue, m.queue(labelled: "com.apple.main-thread"), "main first")
    }

    func testSetTargetIsRecordedAndChangesTheDomain() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.lock")
        s.queue(0x3100, "com.example.other")
        s.setTarget(0x3100, 0x3000, at: us(5))
        s.item(1, on: 0x3000, at: us(10), runOn: 201, start: us(10), end: us(30))
        s.item(2, on: 0x3100, at: us(12), runOn: 202, start: us(30), end: us(40))
        let m = s.model()
        let other = m.queue(labelled: "com.example.other")
        XCTAssertEqual(m.queues[other].targetChanges.count, 1)
        XCTAssertEqual(m.queues[other].targetChanges[0].to, m.queue(labelled: "com.example.lock"))
        XCTAssertEqual(m.queues[other].target, m.queue(labelled: "com.example.lock"))
        XCTAssertEqual(m.queues[other].initialTarget, m.queue(labelled: "com.apple.root.default-qos"))
        XCTAssertEqual(m.queues[other].waitByCause.behindPreviousNs, us(18))
    }

    func testAfterItemWaitsFromItsDeadline() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.item(1, on: globalDefault, at: 0, runOn: 201, start: us(10_500), end: us(10_600), kind: .after,
               extra: s.uptime(ms(10)))
        let r = s.analysis()
        let i = r.model.item(id: 1)
        XCTAssertEqual(r.model.items[i].ready, ms(10))
        XCTAssertEqual(r.model.items[i].wait, us(500))
        XCTAssertEqual(r.model.items[i].waitCause, .unattributed)
        let q = r.model.queue(labelled: "com.apple.root.default-qos")
        XCTAssertEqual(r.statistics.queues[q].backlogMax, 0, "an after item is not in the queue before its deadline")
        XCTAssertEqual(r.model.queues[q].waitByCause.unattributedNs, us(500))
    }

    func testSyncOnSerialQueueWaitsAndRunsOnTheCaller() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.queue(0x3000, "com.example.lock")
        s.item(1, on: 0x3000, at: 0, runOn: 201, start: 0, end: ms(5))
        s.sync(2, on: 0x3000, at: ms(1), by: mainTid, start: ms(5), end: ms(6))
        let r = s.analysis()
        let m = r.model
        let q = m.queue(labelled: "com.example.lock")
        XCTAssertEqual(r.statistics.queues[q].syncItems, 1)
        XCTAssertEqual(r.statistics.queues[q].syncWait.count, 1)
        XCTAssertEqual(r.statistics.queues[q].syncWait.maxNs, ms(4))
        let main = m.thread(tid: mainTid)
        XCTAssertEqual(m.threads[main].blocked, [BlockedInterval(thread: main, start: ms(1), end: ms(5), cause: .sync,
                                                                 object: q, item: m.item(id: 2))])
        XCTAssertEqual(m.items[m.item(id: 2)].thread, main)
        XCTAssertEqual(m.items[m.item(id: 2)].waitedBehind, m.item(id: 1))
        // main (user-interactive) held 4 ms behind a default-QoS item: below the inversion
        // threshold (scheduling on a loaded machine adds as much). The blocking call itself
        // is no finding: this main thread serves no main queue (a tool).
        XCTAssertEqual(r.model.priorityInversions, [], "under priorityInversionMinWaitNs")
        XCTAssertEqual(r.findingIds, [])
    }

    func testSyncRunOnAnotherThreadBlocksTheCallerUntilItsEnd() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        // A worker syncs onto main: main runs it; the worker is blocked until it ends.
        s.item(1, on: mainQueueAddress, at: us(10), by: 201, runOn: mainTid, start: us(20), end: us(30), kind: .sync)
        let m = s.model()
        let worker = m.thread(tid: 201)
        XCTAssertEqual(m.threads[worker].blocked.map(\.start), [us(10)])
        XCTAssertEqual(m.threads[worker].blocked.map(\.end), [us(30)])
        XCTAssertEqual(m.threads[worker].blockedNs, us(20))
    }

    func testWorkItemFlagsPerformAndResubmission() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201); s.thread(202)
        s.queue(0x3000, "com.example.rw", concurrent: true)
        // DispatchWorkItem(flags: .barrier, qos: .userInitiated), id 7.
        s.add(.workItemCreate, 0, tid: mainTid, arg: 0x1 | UInt32(QoSClass.userInitiated.rawValue) << 24, a: 7, b: 0xB10C)
        s.item(7, on: 0x3000, at: us(10), runOn: 201, start: us(11), end: us(20), flags: .workItem)
        // perform() inline on main, then two more submissions of the same item.
        s.add(.workItemPerform, us(30), tid: mainTid, a: 7)
        s.start(7, at: us(30), on: mainTid, kind: .unknown)
        s.end(7, at: us(32), on: mainTid)
        s.enqueue(7, on: 0x3000, at: us(40), flags: .workItem)
        s.enqueue(7, on: 0x3000, at: us(41), flags: .workItem)
        s.start(7, at: us(50), on: 201); s.end(7, at: us(55), on: 201)
        s.start(7, at: us(55), on: 202); s.end(7, at: us(60), on: 202)
        let m = s.model()
        let runs = m.items.enumerated().filter { $0.element.id == 7 }
        XCTAssertEqual(runs.count, 4)
        XCTAssertTrue(runs.allSatisfy { $0.element.isBarrier }, "the barrier flag comes from the work item")
        XCTAssertTrue(runs.allSatisfy { $0.element.qos == .userInitiated })
        XCTAssertEqual(runs.map(\.element.origin), [.enqueued, .performed, .enqueued, .enqueued])
        XCTAssertNil(runs[1].element.queue)
        XCTAssertEqual(runs[2].element.enqueued, us(40))
        XCTAssertEqual(runs[2].element.started, us(50), "first submission starts first")
        XCTAssertEqual(runs[3].element.enqueued, us(41))
        XCTAssertEqual(runs[3].element.started, us(55))
        XCTAssertEqual(m.anomalies.startsWithoutEnqueue, 0)
    }

    func testStartWithoutEnqueueStillCounts() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.start(99, at: us(10), on: 201)
        s.end(99, at: us(30), on: 201)
        let r = s.analysis()
        let i = r.model.item(id: 99)
        XCTAssertEqual(r.model.items[i].origin, .startOnly)
        XCTAssertEqual(r.model.items[i].runTime, us(20))
        XCTAssertEqual(r.model.anomalies.startsWithoutEnqueue, 1)
        XCTAssertEqual(r.statistics.itemsWithoutQueue, 1)
        XCTAssertEqual(r.statistics.threads[r.model.thread(tid: 201)].items, 1)
        XCTAssertEqual(r.statistics.threads[r.model.thread(tid: 201)].busyNs, us(20))
    }

    func testUnknownQueueAndReusedAddress() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(201)
        s.item(1, on: 0x7777, at: us(1), runOn: 201, start: us(2), end: us(3))
        s.queue(0x3000, "com.example.first")
        s.item(2, on: 0x3000, at: us(4), runOn: 201, start: us(5), end: us(6))
        s.queue(0x3000, "com.example.second", at: us(10))
        s.item(3, on: 0x3000, at: us(11), runOn: 201, start: us(12), end: us(13))
        let m = s.model()
        let unknown = m.items[m.item(id: 1)].queue!
        XCTAssertEqual(m.queues[unknown].kind, .unknown)
        XCTAssertEqual(m.queues[unknown].origin, .implicit)
        XCTAssertEqual(m.queues[unknown].label, "queue 0x7777")
        let first = m.queue(labelled: "com.example.first"), second = m.queue(labelled: "com.example.second")
        XCTAssertEqual(m.items[m.item(id: 2)].queue, first)
        XCTAssertEqual(m.items[m.item(id: 3)].queue, second)
        XCTAssertEqual(m.queues[first].generation, 0)
        XCTAssertEqual(m.queues[second].generation, 1)
    }

    func testGlobalQueueQoSAndDefaultRootPlaceholder() {
        var s = TraceScript()
        s.add(.threadStart, 0, tid: mainTid, arg: 0)
        s.thread(201)
        s.queue(0x3000, "com.example.early")   // targets the default root before it is described
        s.add(.queueInfo, us(5), tid: mainTid, arg: 2 | UInt32(QoSClass.default.rawValue) << 8, a: globalDefault,
              string: "com.apple.root.default-qos")
        s.item(1, on: globalDefault, at: us(6), runOn: 201, start: us(7), end: us(8))
        let m = s.model()
        let roots = m.queues.filter { $0.label == "com.apple.root.default-qos" }
        XCTAssertEqual(roots.count, 1, "the placeholder became the real queue")
        XCTAssertEqual(m.queues[m.queue(labelled: "com.example.early")].target, m.queue(labelled: "com.apple.root.default-qos"))
        XCTAssertEqual(m.items[m.item(id: 1)].qos, .default)
    }
}
