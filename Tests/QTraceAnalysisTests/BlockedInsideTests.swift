import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

final class BlockedInsideTests: XCTestCase {
    private func code(_ cause: BlockCause) -> UInt8 { UInt8(BlockCause.allCases.firstIndex(of: cause)!) }

    /// An item's blocked time counts its own waits and those of an item nested in it on the
    /// same thread (a sync item run by its caller), and equals the thread's blocked time when
    /// every wait of the thread is inside it.
    func testNestedWaitsOfAThreadAddUpToItsBlockedTime() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.queue(0x3000, "com.example.a")
        s.queue(0x3100, "com.example.b")
        s.thread(201, at: us(1))
        s.thread(202, at: us(1))
        s.item(1, on: 0x3000, at: us(5), runOn: 202, start: us(10), end: us(100))
        s.semWait(0x9000, from: us(20), to: us(30), on: 202)
        s.sync(2, on: 0x3100, at: us(40), by: 202, start: us(50), end: us(70))   // sync waits 40..50
        s.groupWait(0x9100, from: us(55), to: us(60), on: 202)                   // inside item 2
        s.item(3, on: 0x3000, at: us(5), runOn: 201, start: us(10), end: us(20))
        let m = s.model()
        let inside = BlockedInside(m, cause: code)
        let outer = m.items.firstIndex { $0.id == 1 }!, synced = m.items.firstIndex { $0.id == 2 }!
        let idle = m.items.firstIndex { $0.id == 3 }!
        XCTAssertEqual(inside.ns[outer], us(25))
        XCTAssertEqual(inside.causeMasks[outer], 1 << code(.semaphore) | 1 << code(.sync) | 1 << code(.groupWait))
        XCTAssertEqual(inside.ns[synced], us(5))
        XCTAssertEqual(inside.causeMasks[synced], 1 << code(.groupWait))
        XCTAssertEqual(inside.ns[idle], 0)
        XCTAssertEqual(inside.causeMasks[idle], 0)
        XCTAssertEqual(inside.ns[outer], m.threads[m.thread(tid: 202)].blockedNs)
        // The same frames give each thread's busy and blocked time, as the model's thread states do.
        XCTAssertEqual(inside.threadBusyNs, m.threads.map(\.busyNs))
        XCTAssertEqual(inside.threadBlockedNs, m.threads.map(\.blockedNs))
        XCTAssertEqual(inside.threadBusyNs[m.thread(tid: 202)], us(65))
    }

    /// Work the thread runs inside a blocking call (concurrentPerform's iterations on the
    /// caller) is not blocked time: the call's own time is its duration less that work.
    func testWorkInsideABlockingCallIsNotBlocked() {
        let runs = [BlockedInside.Run(thread: 0, start: 0, end: 200),     // the caller's item
                    BlockedInside.Run(thread: 0, start: 10, end: 40),     // an iteration inside the call
                    BlockedInside.Run(thread: 1, start: 0, end: 0),       // nothing on thread 1
                    BlockedInside.Run(thread: -1, start: 0, end: 0)]      // never ran
        let waits = [BlockedInside.Wait(thread: 0, start: 0, end: 100, cause: 3),
                     BlockedInside.Wait(thread: 0, start: 20, end: 30, cause: 1)]
        let inside = BlockedInside(runs: runs, waits: waits, threads: 2)
        XCTAssertEqual(inside.ns, [80, 10, 0, 0])
        XCTAssertEqual(inside.causeMasks, [0b1010, 0b10, 0, 0])
        XCTAssertEqual(inside.threadBlockedNs, [80, 0])
        XCTAssertEqual(inside.threadBusyNs, [120, 0])
    }

    /// Every wait counts, however many (the viewer once stopped at 5,000).
    func testThousandsOfWaitsInsideOneItemAllCount() {
        let waits = (0..<UInt64(6_000)).map { (k: UInt64) -> BlockedInside.Wait in
            let start: UInt64 = 10 + 10 * k
            return BlockedInside.Wait(thread: 7, start: start, end: start + 3, cause: 1)
        }
        let inside = BlockedInside(runs: [BlockedInside.Run(thread: 7, start: 0, end: 100_000)], waits: waits)
        XCTAssertEqual(inside.ns, [18_000])
        XCTAssertEqual(inside.causeMasks, [0b10])
    }
}
