import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

/// The queue statistics come from tallies taken in item order when their recorders fit in
/// memory, else from the items grouped by queue afterwards: both ways must give the same rows.
final class StatisticsItemPassTests: XCTestCase {
    func testItemOrderAndGroupedQueueTalliesGiveTheSameRows() {
        // Few queues of many items (past the recorders' 64k buckets kept) and more of fewer (past
        // the 512 values kept).
        for (events, queues) in [(450_000, 2), (200_000, 60)] {
            let (info, stream) = SyntheticWorkload.events(events, queues: queues)
            let model = Analysis.buildModel(info: info, events: stream)
            let inItemOrder = QueueStats.all(model, StatisticsItemPass(model, itemOrder: true))
            let grouped = QueueStats.all(model, StatisticsItemPass(model, itemOrder: false))
            XCTAssertGreaterThan(inItemOrder.map(\.items).max() ?? 0, queues == 2 ? DurationRecorder.sortedLimit : DurationRecorder.exactLimit)
            XCTAssertEqual(Array(inItemOrder), Array(grouped), "\(queues) queues")
            XCTAssertTrue(inItemOrder.contains { $0.pendingAtEnd > 0 || $0.syncItems > 0 || $0.runningAtEnd > 0 }
                          || inItemOrder.contains { $0.threadsServed > 1 }, "\(queues) queues: rows with more than waits and runs")
        }
    }

    /// Past the pass's budget, the rows come from tallies alive from a queue's first item to its
    /// last, as long as those alive at once fit their budget: the same rows as grouped.
    func testRowsAsQueuesEndAreTheGroupedRows() throws {
        let (info, stream) = SyntheticWorkload.events(200_000, queues: 60)
        let model = Analysis.buildModel(info: info, events: stream)
        let pass = StatisticsItemPass(model, itemOrder: false)
        let asQueuesEnd = try XCTUnwrap(QueueStats.asQueuesEnd(model, pass))
        XCTAssertEqual(Array(asQueuesEnd), Array(QueueStats.grouped(model, pass)))
        XCTAssertGreaterThan(asQueuesEnd.map(\.items).max() ?? 0, DurationRecorder.exactLimit)
        // Every queue's items spread over the whole trace: all tallies alive at once.
        let all = asQueuesEnd.map { QueueStats.LiveTallies.bytes(items: $0.items) }.reduce(0, +)
        XCTAssertNotNil(QueueStats.asQueuesEnd(model, pass, budget: all).map { _ in true })
        XCTAssertTrue(QueueStats.asQueuesEnd(model, pass, budget: all - 1) == nil, "past the budget")
    }

    /// Queues one after another (the items sorted by queue): each tally is closed at its queue's
    /// last item and its budget freed, so one queue's worth is enough.
    func testTalliesOfQueuesThatEndedAreFreed() throws {
        let (info, stream) = SyntheticWorkload.events(100_000, queues: 30)
        var model = Analysis.buildModel(info: info, events: stream)
        model.items = model.items.enumerated().sorted { ($0.element.queueIndex, $0.offset) < ($1.element.queueIndex, $1.offset) }.map(\.element)
        let pass = StatisticsItemPass(model, itemOrder: false)
        let largest = (0..<model.queues.count).map { QueueStats.LiveTallies.bytes(items: pass.itemsPerQueue[$0]) }.max()!
        let rows = try XCTUnwrap(QueueStats.asQueuesEnd(model, pass, budget: largest))
        XCTAssertEqual(Array(rows), Array(QueueStats.grouped(model, pass)))
        XCTAssertTrue(QueueStats.asQueuesEnd(model, pass, budget: largest - 1) == nil, "past the budget")
    }

    /// The (thread, queue) pairs in a table by thread and queue, or in a hash map past its
    /// size: the same shares, and the same first item of each pair.
    func testThreadPairsDenseOrHashedAreTheSame() {
        let (info, stream) = SyntheticWorkload.events(50_000, queues: 12)
        let model = Analysis.buildModel(info: info, events: stream)
        let dense = ThreadTally(model), hashed = ThreadTally(model, denseLimit: 0)
        var firsts = 0
        for item in model.items where item.threadIndex >= 0 && item.queueIndex >= 0 {
            let facts = ItemFacts(item)
            let first = dense.add(facts, thread: item.threadIndex, queue: item.queueIndex)
            XCTAssertEqual(first, hashed.add(facts, thread: item.threadIndex, queue: item.queueIndex))
            if first { firsts += 1 }
        }
        let order = { (a: ThreadQueueShare, b: ThreadQueueShare) in a.queue < b.queue }
        let byDense = dense.sharesByThread(threadCount: model.threads.count).map { $0.sorted(by: order) }
        let byHash = hashed.sharesByThread(threadCount: model.threads.count).map { $0.sorted(by: order) }
        XCTAssertEqual(byDense, byHash)
        XCTAssertEqual(byDense.map(\.count).reduce(0, +), firsts)
        XCTAssertGreaterThan(firsts, 12, "several threads per queue")
        XCTAssertEqual(byDense.flatMap { $0 }.map(\.items).reduce(0, +),
                       model.items.filter { $0.threadIndex >= 0 && $0.queueIndex >= 0 }.count)
    }

    /// The default: item order for a few queues, grouped for a queue-heavy trace.
    func testTheWayFollowsTheBudget() {
        let (info, stream) = SyntheticWorkload.events(20_000, queues: 8)
        let model = Analysis.buildModel(info: info, events: stream)
        XCTAssertTrue(StatisticsItemPass.accumulatesInItemOrder(model))
        var many = model
        many.queues = Array(repeating: model.queues[0], count: (1 << 16) + 1)
        XCTAssertFalse(StatisticsItemPass.accumulatesInItemOrder(many))
    }
}
