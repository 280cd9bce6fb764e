// The items of no recorded queue: neither theirs nor their source's (DispatchWorkItem.perform
// called inline, a START whose ENQUEUE was lost). The report gathers them on one placeholder
// queue, "(queue not recorded)"; these are its figures, by a queue's definitions
// (docs/report-data.md, Definitions), so that the viewer computes none.

public struct UnrecordedQueueFigures: Sendable, Equatable {
    public var items: Int
    /// The time with at least one of them running (an item still running at the end counts to it).
    public var busyNs: UInt64
    /// busyNs / the trace's duration.
    public var busyShare: Double

    /// Whether an item belongs to no recorded queue.
    public static func isUnrecorded(_ item: WorkItem, in model: TraceModel) -> Bool {
        item.queue == nil && (item.source.flatMap { model.sources.indices.contains($0) ? model.sources[$0].queue : nil }) == nil
    }

    /// Nil when every item has a recorded queue (the report then has no placeholder).
    public init?(_ model: TraceModel) {
        var count = 0
        var runs: [Span] = []
        for item in model.items where Self.isUnrecorded(item, in: model) {
            count += 1
            if let start = item.started { runs.append(Span(start: start, end: Swift.max(start, item.ended ?? model.endTime))) }
        }
        guard count > 0 else { return nil }
        items = count
        busyNs = busyTime(runs)
        busyShare = share(busyNs, of: model.duration)
    }
}

/// The time covered by at least one of the spans (overlaps count once): a queue's busy time
/// from its items' runs.
public func busyTime(_ spans: [Span]) -> UInt64 {
    var total: UInt64 = 0
    var frontier: UInt64 = 0
    for span in spans.sorted(by: { $0.start < $1.start }) {
        let from = Swift.max(span.start, frontier)
        if span.end > from { total += span.end - from }
        frontier = Swift.max(frontier, span.end)
    }
    return total
}
