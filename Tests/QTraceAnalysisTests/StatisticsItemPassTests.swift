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
