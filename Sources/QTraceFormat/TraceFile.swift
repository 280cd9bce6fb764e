// Reading a trace file: open and validate once, then stream all events in time order.

/// A trace file opened for reading (mapped read-only). Opening validates the header and
/// bounds every chunk's readable records, so iteration itself cannot fail: damage is
/// reported in `warnings` and everything before it is read.
public final class TraceFile: @unchecked Sendable {
    public let path: String
    public let header: TraceHeader
    /// Recorded threads, in order of their first event.
    public let threads: [ThreadInfo]
    /// Truncation and corruption the reader stepped over.
    public let warnings: [TraceWarning]
    /// The TSC -> ns conversion used for every event time.
    public let clock: TraceClock
    /// Number of events `forEachEvent` delivers.
    public let eventCount: Int
    /// The SCHED_STATE records among them (the scheduler stream of `qtrace record --sched`).
    public let schedEventCount: Int
    /// Chunks the reader looked at (chunks_allocated clamped to the file length).
    public let chunkCount: Int
    /// Chunks allocated but never written (magic 0): a thread died while claiming one.
    public let unwrittenChunkCount: Int
    /// Records of types this reader does not know (newer minor version), skipped.
    public let unknownRecordCount: Int

    private let bytes: TraceBytes
    private let streams: [ThreadStream]

    /// Opens and validates the trace at `path`; throws a `TraceError` if it is not a
    /// readable qtrace trace.
    public convenience init(path: String) throws {
        try self.init(bytes: TraceBytes.mapping(path: path), path: path)
    }

    /// Parses a trace held in memory (`path` only names it in errors).
    public convenience init(contentsOf data: [UInt8], path: String = "<memory>") throws {
        try self.init(bytes: TraceBytes.copying(data), path: path)
    }

    private init(bytes: TraceBytes, path: String) throws {
        let index = try TraceIndex(bytes: bytes, path: path)
        self.path = path
        self.bytes = bytes
        header = index.header
        threads = index.threads
        warnings = index.warnings
        clock = index.clock
        eventCount = index.eventCount
        schedEventCount = index.schedEventCount
        chunkCount = index.chunkCount
        unwrittenChunkCount = index.unwrittenChunkCount
        unknownRecordCount = index.unknownRecordCount
        streams = index.streams
    }

    /// Size of the file in bytes.
    public var fileSize: Int { bytes.count }

    /// The end of the trace (ns since start): the final calibration pair (taken at exit, or
    /// by `qtrace record` after the process ended) or the last event, whichever is later.
    public var endTime: UInt64 {
        let lastEvent = threads.map(\.lastTime).max() ?? 0
        guard header.finalTsc != 0 else { return lastEvent }
        return max(lastEvent, clock.time(ofTSC: header.finalTsc))
    }

    /// Calls `body` with every event of the file in time order. Each thread's records are
    /// already in time order; the threads are merged with a binary heap. Equal times keep
    /// each thread's record order, and between threads follow the order of `threads`.
    public func forEachEvent(_ body: (Event) throws -> Void) rethrows {
        var merge = EventMerge(bytes: bytes, streams: streams, clock: clock)
        try merge.run(body)
    }

    /// All events in time order (see `forEachEvent`).
    public func readAllEvents() -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(eventCount)
        forEachEvent { events.append($0) }
        return events
    }
}

/// Position in one thread's stream of records.
private struct StreamCursor {
    let tid: Int32
    let spans: [RecordSpan]
    var spanIndex = 0
    var offset = 0
    var end = 0
    /// Time of the record at `offset`; valid while `headLayout` is not nil.
    var headTime: UInt64 = 0
    var headLayout: RecordLayout?

    init(_ stream: ThreadStream) {
        tid = stream.tid
        spans = stream.spans
        if let first = spans.first { offset = first.start; end = first.end }
    }

    /// Moves to the first record of a known type at or after `offset`, across spans.
    @inline(__always)
    mutating func settle(_ bytes: TraceBytes, _ layouts: UnsafeBufferPointer<RecordLayout?>, _ clock: TraceClock) {
        while true {
            while offset < end {
                let word0 = bytes.u64(offset)
                if let layout = layouts[Int(word0 & 0xFF)] {
                    headLayout = layout
                    headTime = clock.time(ofTSC: bytes.u64(offset + 8))
                    return
                }
                offset += Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
            }
            // This span (a chunk's records) is read: its pages are not needed any more.
            if spanIndex < spans.count { bytes.dropResident(spans[spanIndex].start..<end) }
            spanIndex += 1
            guard spanIndex < spans.count else { headLayout = nil; return }
            offset = spans[spanIndex].start
            end = spans[spanIndex].end
        }
    }
}

/// K-way merge of the thread streams with a binary min-heap of stream indices keyed by
/// (head time, stream index): O(log T) per event, no allocation per event.
private struct EventMerge {
    let bytes: TraceBytes
    let clock: TraceClock
    var cursors: [StreamCursor]

    init(bytes: TraceBytes, streams: [ThreadStream], clock: TraceClock) {
        self.bytes = bytes
        self.clock = clock
        cursors = streams.map(StreamCursor.init)
    }

    mutating func run(_ body: (Event) throws -> Void) rethrows {
        let bytes = self.bytes, clock = self.clock
        try RecordLayout.table.withUnsafeBufferPointer { layouts in
            try cursors.withUnsafeMutableBufferPointer { cursors in
                var heap = MergeHeap(capacity: cursors.count)
                defer { heap.deallocate() }
                for index in cursors.indices {
                    cursors[index].settle(bytes, layouts, clock)
                    if cursors[index].headLayout != nil { heap.push(index, cursors) }
                }
                var event = Event(type: .end, time: 0, tid: 0)
                while heap.count > 0 {
                    let top = heap.top
                    bytes.decodeEvent(at: cursors[top].offset, layout: cursors[top].headLayout.unsafelyUnwrapped,
                                      tid: cursors[top].tid, time: cursors[top].headTime, into: &event)
                    try body(event)
                    let length = Int(truncatingIfNeeded: (bytes.u64(cursors[top].offset) >> 16) & 0xFFFF)
                    cursors[top].offset += length
                    cursors[top].settle(bytes, layouts, clock)
                    if cursors[top].headLayout == nil { heap.removeTop() }
                    heap.siftDown(cursors)
                }
            }
        }
    }
}

/// A fixed-capacity binary min-heap of stream indices, ordered by the cursors' head times.
private struct MergeHeap {
    private let items: UnsafeMutablePointer<Int>
    private(set) var count = 0

    init(capacity: Int) { items = .allocate(capacity: max(capacity, 1)) }
    func deallocate() { items.deallocate() }

    var top: Int { items[0] }

    @inline(__always)
    private func before(_ a: Int, _ b: Int, _ cursors: UnsafeMutableBufferPointer<StreamCursor>) -> Bool {
        let timeA = cursors[a].headTime, timeB = cursors[b].headTime
        return timeA < timeB || (timeA == timeB && a < b)
    }

    mutating func push(_ stream: Int, _ cursors: UnsafeMutableBufferPointer<StreamCursor>) {
        var child = count
        items[child] = stream
        count += 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard before(items[child], items[parent], cursors) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Drops the top; the caller restores the order with `siftDown`.
    mutating func removeTop() {
        count -= 1
        items[0] = items[count]
    }

    /// Restores the heap after the top's key grew (its stream advanced) or it was replaced.
    @inline(__always)
    func siftDown(_ cursors: UnsafeMutableBufferPointer<StreamCursor>) {
        var parent = 0
        while true {
            let left = 2 * parent + 1
            if left >= count { return }
            var smallest = left
            if left + 1 < count && before(items[left + 1], items[left], cursors) { smallest = left + 1 }
            if !before(items[smallest], items[parent], cursors) { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension UnsafeMutablePointer {
    fileprivate func swapAt(_ i: Int, _ j: Int) {
        let held = self[i]
        self[i] = self[j]
        self[j] = held
    }
}
