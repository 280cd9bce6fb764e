// Each queue's wait and run times as log2 histograms: the distribution the report's Stats tab
// draws beside the percentiles. Not part of the JSON summary (which carries the percentiles):
// a summary of 900k queues would grow by two bucket arrays per queue.
import QTraceFormat

public struct QueueHistograms: Sendable {
    /// One queue's histograms; `wait[b]` and `run[b]` count the durations in
    /// [boundsNs[b], boundsNs[b + 1]) (the first and last buckets also take what lies beyond).
    public struct Queue: Sendable, Equatable {
        public var queue: Int
        public var wait: [Int]
        public var run: [Int]
    }

    /// Log2 bucket bounds from 64 ns to ~17 s.
    public static let boundsNs: [UInt64] = (firstBoundLog2...34).map { UInt64(1) << UInt64($0) }
    static let firstBoundLog2 = 6
    public static var bucketCount: Int { boundsNs.count - 1 }

    /// The queues with an item that waited or ran, in queue order.
    public let queues: [Queue]

    public init(_ model: TraceModel) {
        let empty = [Int](repeating: 0, count: Self.bucketCount)
        // Copies of `empty` share its storage until written: 900k queues without items cost nothing.
        var wait = [[Int]](repeating: empty, count: model.queues.count)
        var run = wait
        for item in model.items {
            guard let q = item.queue else { continue }
            if let w = item.wait { wait[q][Self.bucket(w)] += 1 }
            if let r = item.runTime { run[q][Self.bucket(r)] += 1 }
        }
        queues = model.queues.indices.compactMap { q in
            wait[q] == empty && run[q] == empty ? nil : Queue(queue: q, wait: wait[q], run: run[q])
        }
    }

    /// The bucket of a duration: floor(log2), clamped to the first and last bucket.
    static func bucket(_ ns: UInt64) -> Int {
        let log2 = 64 - ns.leadingZeroBitCount - 1
        return min(max(log2 - firstBoundLog2, 0), bucketCount - 1)
    }
}
