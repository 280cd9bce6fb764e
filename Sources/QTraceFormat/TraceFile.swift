// Reading a trace file: open and validate once, then stream all events in time order.
#if canImport(Glibc)
import Glibc
#endif

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
    /// The STACK_FRAME and CPU_SAMPLE records among them (the samples stream of `qtrace record --cpu`).
    public let sampleEventCount: Int
    /// Chunks the reader looked at (chunks_allocated clamped to the file length).
    public let chunkCount: Int
    /// Chunks allocated but never written (magic 0): a thread died while claiming one.
    public let unwrittenChunkCount: Int
    /// Records of types this reader does not know (newer minor version), skipped.
    public let unknownRecordCount: Int
    /// Records that break the validation rules (docs/trace-format.md, "Validation"): dropped
    /// with a warning, never delivered. Non-zero means the trace is inconsistent.
    public let invalidRecordCount: Int
    /// Chunks with a bad magic or damaged framing (skipped, or their rest): non-zero means the
    /// file was damaged after the recorder wrote it.
    public let damagedChunkCount: Int

    private let bytes: TraceBytes
    private let streams: [ThreadStream]
    private let maxTsc: UInt64

    /// Opens and validates the trace at `path`; throws a `TraceError` if it is not a
    /// readable qtrace trace.
    /// `decodingThread`: whether the validation walk may run on two threads (the same result).
    public convenience init(path: String, decodingThread: DecodingThread = .automatic) throws {
        try self.init(bytes: TraceBytes.mapping(path: path), path: path, decodingThread: decodingThread)
    }

    /// The header of the trace at `path` alone (a live ring's, say: its chunks are being
    /// rewritten); throws a `TraceError` as `init(path:)` does for a bad header.
    public static func readHeader(path: String) throws -> TraceHeader {
        try TraceIndex.readHeader(TraceBytes.mapping(path: path), path: path)
    }

    /// Parses a trace held in memory (`path` only names it in errors).
    public convenience init(contentsOf data: [UInt8], path: String = "<memory>") throws {
        try self.init(bytes: TraceBytes.copying(data), path: path)
    }

    private init(bytes: TraceBytes, path: String, decodingThread: DecodingThread = .automatic) throws {
        let index = try TraceIndex(bytes: bytes, path: path, decodingThread: decodingThread)
        self.path = path
        self.bytes = bytes
        header = index.header
        threads = index.threads
        warnings = index.warnings
        clock = index.clock
        eventCount = index.eventCount
        schedEventCount = index.schedEventCount
        sampleEventCount = index.sampleEventCount
        chunkCount = index.chunkCount
        unwrittenChunkCount = index.unwrittenChunkCount
        unknownRecordCount = index.unknownRecordCount
        invalidRecordCount = index.invalidRecordCount
        damagedChunkCount = index.damagedChunkCount
        streams = index.streams
        maxTsc = index.maxTsc
    }

    /// The threads' CPU time in the last `forEachBatchOfEvents` that decoded on a thread of
    /// its own (nil: none did), for the phase times (`QTRACE_PHASES`): the caller's thread's
    /// is the critical path. Written by the reading thread only.
    public private(set) var lastDecodingThreads: DecodingThreadTimes?

    /// Size of the file in bytes.
    public var fileSize: Int { bytes.count }

    /// The end of the trace (ns since start): the final calibration pair (taken at exit, or
    /// by `qtrace record` after the process ended) or the last event, whichever is later.
    public var endTime: UInt64 {
        let lastEvent = threads.map(\.lastTime).max() ?? 0
        guard header.finalTsc != 0 else { return lastEvent }
        return max(lastEvent, min(clock.time(ofTSC: header.finalTsc), TraceLimits.maxTraceNs))
    }

    /// Calls `body` with every event of the file in time order. Each thread's records are
    /// already in time order; the threads are merged with a binary heap. Equal times keep
    /// each thread's record order, and between threads follow the order of `threads`.
    public func forEachEvent(_ body: (Event) throws -> Void) rethrows {
        var merge = EventMerge(bytes: bytes, streams: streams, clock: FastTSCConverter(clock, maxTsc: maxTsc))
        try merge.runOneByOne(body)
    }

    /// `forEachEvent`, and `announceStart` is called with the item id of each START some
    /// records before `body` receives it: `startLookahead` records ahead in its thread's own
    /// stream (the merge knows no further ahead than each stream's head; a thread's next
    /// records come soon after in time order). The model builder prefetches what the START
    /// will read, its pending entry and its item, both written at the enqueue long before:
    /// their cache misses then overlap the events in between instead of stalling on each.
    /// A hint only: a START may be announced more than once, or not at all. `body` returns
    /// whether it wants the STARTs after its event announced: while it does not, the scouts
    /// stand still (the model wants them only with many items pending; on the flow, which
    /// never has, the scouts' reading ahead was ~4% of `stats`).
    /// The announcements come at most `eventBatchSize` events earlier than the lookahead says:
    /// the events are decoded a batch at a time (`forEachBatchOfEvents`). With a decoding
    /// thread, the STARTs of the batch `announcedPiecesAhead` batches later are announced (in
    /// time order, at most (`announcedPiecesAhead` + 1) x `eventBatchSize` - 1 events ahead),
    /// but for those in the first batches of one of its 1,024-event batches.
    public func forEachEvent(decodingThread: DecodingThread = .automatic, announceStart: (_ id: UInt64) -> Void,
                             _ body: (Event) throws -> Bool) rethrows {
        try forEachBatchOfEvents(decodingThread: decodingThread, announceStart: announceStart) { events in
            var wantsStarts = false
            for i in events.indices { wantsStarts = try events.lending(i, body) }
            return wantsStarts
        }
    }

    /// `forEachEvent(announceStart:_:)`, `eventBatchSize` events at a time (fewer in the last
    /// batch only): the merge decodes a batch into a buffer of its own, then hands it over
    /// in one call, so that the call into the caller's closure (an indirect call, its
    /// context's loads and a thunk: ~4% of `stats` when made per event) is paid once per
    /// batch, and the caller reads each event from memory its stores have long left (the
    /// event handed over in the call's argument was read back while still being stored).
    /// The buffer is valid during the call only (hand its events on with `lending`, or
    /// `inout` as `&events[i]`: they stay initialized, as the merge needs them). `body`
    /// returns whether it wants the STARTs announced while the next batch is decoded (none
    /// are before the first batch's call).
    /// With a second CPU and a big enough trace (`DecodingThread`), the merge and the
    /// decoding run on a thread of their own, ahead of `body` (see `forEachBatchDecodedAhead`);
    /// the batches, their order and the calls are the same either way.
    public func forEachBatchOfEvents(decodingThread: DecodingThread = .automatic, announceStart: (_ id: UInt64) -> Void,
                                     _ body: (UnsafeMutableBufferPointer<Event>) throws -> Bool) rethrows {
        if decodingThread.wanted(eventCount: eventCount),
           try forEachBatchDecodedAhead(announceStart: announceStart, body) {
            return
        }
        var merge = EventMerge(bytes: bytes, streams: streams, clock: FastTSCConverter(clock, maxTsc: maxTsc))
        let batchSize = TraceFile.eventBatchSize
        let batch = UnsafeMutablePointer<Event>.allocate(capacity: batchSize)
        batch.initialize(repeating: Event(type: .end, time: 0, tid: 0), count: batchSize)
        defer { batch.deinitialize(count: batchSize); batch.deallocate() }
        try merge.run(scouting: true, announceStart: announceStart, into: batch, capacity: batchSize) { events in
            (try body(events), batch)
        }
    }

    /// `forEachBatchOfEvents` with the merge and decoding on a thread of their own: it fills
    /// the batches of an `EventBatchRing` while this thread hands them to `body`, in pieces of
    /// `eventBatchSize` events (the calls `body` gets inline). The STARTs are announced from
    /// here, in the piece `announcedPiecesAhead` after the one `body` is given (the decoding thread's scouts could
    /// only prefetch into the other core's cache). Returns false, having read nothing, when
    /// no thread could be started.
    private func forEachBatchDecodedAhead(announceStart: (_ id: UInt64) -> Void,
                                          _ body: (UnsafeMutableBufferPointer<Event>) throws -> Bool) rethrows -> Bool {
        let ring = EventBatchRing()
        let (bytes, streams, clock) = (self.bytes, self.streams, FastTSCConverter(clock, maxTsc: maxTsc))
        guard let decoder = JoinableThread({ Self.decode(bytes, streams, clock, into: ring) }) else { return false }
        let started = threadCPUSeconds()
        defer {
            ring.cancel()
            decoder.join()
            lastDecodingThreads = DecodingThreadTimes(decoderCPUSeconds: ring.decoderCPUSeconds,
                                                      consumerCPUSeconds: threadCPUSeconds() - started)
        }
        let piece = TraceFile.eventBatchSize
        var wantsStarts = false
        while let events = ring.take() {
            var start = 0
            while start < events.count {
                let end = Swift.min(start + piece, events.count)
                if wantsStarts {
                    let first = Swift.min(start + TraceFile.announcedPiecesAhead * piece, events.count)
                    for next in first..<Swift.min(first + piece, events.count) where events[next].type == .start {
                        announceStart(events[next].a)
                    }
                }
                wantsStarts = try body(UnsafeMutableBufferPointer(rebasing: events[start..<end]))
                start = end
            }
            ring.release()
        }
        return true
    }

    /// The decoding thread's work: every event, merged and decoded into the ring's batches.
    private static func decode(_ bytes: TraceBytes, _ streams: [ThreadStream], _ clock: FastTSCConverter,
                               into ring: EventBatchRing) {
        defer { ring.finish(decoderCPUSeconds: threadCPUSeconds()) }
        var merge = EventMerge(bytes: bytes, streams: streams, clock: clock)
        var published = 0
        // No scouts: the consumer announces the STARTs, and their reading ahead for the
        // slot-less pairing's prefetches cost this thread more than it saved (decoding thread
        // 0.12-0.13 s of CPU without them on the slot-less fan-out, 0.15-0.17 with; flood
        // 0.16-0.24 against 0.22-0.40; the model's thread no slower).
        try? merge.run(scouting: false, announceStart: { _ in }, into: ring.batch(0),
                       capacity: EventBatchRing.batchSize) { events in
            guard ring.publish(count: events.count) else { throw DecodingStopped() }
            published += 1
            return (false, ring.batch(published))
        }
    }

    private struct DecodingStopped: Error {}

    /// With a decoding thread, the STARTs announced before `body` gets a piece of
    /// `eventBatchSize` events are those of the piece this many pieces later: two pieces
    /// (~8 us of the model's work on the fan-out) leave the pending entries and items time to
    /// arrive (the slot-less fan-out's model thread 0.905 and 0.945 of one piece's, 11 and
    /// 15 rounds; the fan-out with slots 1.09 and 0.99, flood 0.99).
    public static let announcedPiecesAhead = 2

    /// Events per batch of `forEachBatchOfEvents`: 32 events (2.3 KiB) stay in the L1 cache
    /// between their decoding and their use, and the call per batch costs next to nothing.
    public static let eventBatchSize = 32

    /// How many records of its thread's stream ahead `forEachEvent(announceStart:_:)`
    /// announces a START: a couple of items, enough for the misses to land, short enough for
    /// the lines to stay in the cache until the START.
    public static let startLookahead = 6

    /// All events in time order (see `forEachEvent`).
    public func readAllEvents() -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(eventCount)
        forEachEvent { events.append($0) }
        return events
    }
}

extension UnsafeMutableBufferPointer where Element == Event {
    /// Calls `body` with the event at `index`, moved out for the call and back after it: an
    /// event read through the buffer (`self[index]`) is copied for the call (the compiler
    /// cannot tell that nothing writes the buffer meanwhile), an outlined copy, a retain of
    /// its string and a release after, per event.
    @inlinable @inline(__always)
    public func lending<Result>(_ index: Int, _ body: (Event) throws -> Result) rethrows -> Result {
        let slot = baseAddress.unsafelyUnwrapped + index
        let event = slot.move()
        defer { slot.initialize(to: event) }
        return try body(event)
    }
}

/// Position in one thread's stream of records.
private struct StreamCursor {
    /// Offset of the head record (of a known type) and its first word; `word0` is 0 once the
    /// stream is read (a valid record's word 0 never is: its length is at least 16).
    var offset = 0
    var word0: UInt64 = 0
    /// The head record's time: the stream's sort key.
    var time: UInt64 = 0
    var end = 0
    let tid: Int32
    var spanIndex = 0
    let spans: [RecordSpan]
    /// The scout (`scoutAhead`): the offset of the next record it reads, how many records it
    /// is ahead of the head, and its span.
    var scout = 0
    var scoutLead = 0
    var scoutSpan = -1
    /// The START_F items the scout peeked at last (SlotlessPairing.peekStart).
    var scoutPeeks = SlotlessPairing.ScoutPeeks()

    init(_ stream: ThreadStream) {
        tid = stream.tid
        spans = stream.spans
        if let first = spans.first { offset = first.start; end = first.end }
    }

    /// Moves past the head record to the next record of a known type. Returns false when
    /// the stream is read. The common case (the next record, same span) is inline.
    @inline(__always)
    mutating func advance(_ bytes: TraceBytes, _ shapes: UnsafeBufferPointer<RecordShape>, _ clock: FastTSCConverter) -> Bool {
        // Validated at open: lengths keep offsets within their span, so no overflow checks.
        offset &+= Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
        if offset < end {
            let next = bytes.u64(offset)
            if shapes[Int(next & 0xFF)].isKnown {
                word0 = next
                time = clock.time(ofTSC: bytes.u64(offset &+ 8))
                return true
            }
        }
        return settle(bytes, shapes, clock)
    }

    /// Keeps the scout `TraceFile.startLookahead` records ahead of the head (just moved on by
    /// one record) within the span, and announces each START it passes. Lengths within a span
    /// are validated, like the head's; a scout behind the head or in another span restarts
    /// at the head.
    @inline(__always)
    mutating func scoutAhead(_ bytes: TraceBytes, _ shapes: UnsafeBufferPointer<RecordShape>,
                             _ pairing: inout SlotlessPairing, _ announceStart: (UInt64) -> Void) {
        if scout <= offset || scoutSpan != spanIndex {
            scout = offset
            scoutLead = 0
            scoutSpan = spanIndex
            scoutPeeks.forget()
        } else {
            scoutLead &-= 1
        }
        while scoutLead < TraceFile.startLookahead && scout < end {
            let word0 = bytes.u64(scout)
            let shape = shapes[Int(word0 & 0xFF)]
            // The compact form holds the id in word 0, the full one in `a`; a START_F's is
            // the one its pairing would give it now.
            if shape.decode == .compactStart {
                announceStart(word0 >> 32)
            } else if shape.decode == .words1 && shape.type == .start {
                announceStart(bytes.u64(scout &+ TraceLayout.recordHeaderSize))
            } else if shape.decode == .slotlessStart {
                // The item it will be paired with: its ENQUEUE_F came long before.
                let word = bytes.u64(scout &+ TraceLayout.recordHeaderSize)
                if let peek = pairing.peekStart(word0: word0, word: word, passed: scoutPeeks) {
                    announceStart(peek.id)
                    scoutPeeks.remember(peek)
                }
            } else if shape.decode == .slotlessEnqueue {
                pairing.prefetchEnqueue(word: bytes.u64(scout &+ TraceLayout.recordHeaderSize))
            }
            scout &+= Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
            scoutLead &+= 1
        }
    }

    /// Moves to the first record of a known type at or after `offset`, across spans.
    @inline(never)
    mutating func settle(_ bytes: TraceBytes, _ shapes: UnsafeBufferPointer<RecordShape>, _ clock: FastTSCConverter) -> Bool {
        while true {
            while offset < end {
                let next = bytes.u64(offset)
                if shapes[Int(next & 0xFF)].isKnown {
                    word0 = next
                    time = clock.time(ofTSC: bytes.u64(offset &+ 8))
                    return true
                }
                offset &+= Int(truncatingIfNeeded: (next >> 16) & 0xFFFF)
            }
            // This span (a chunk's records) is read: its pages are not needed any more.
            if spanIndex < spans.count { bytes.dropResident(spans[spanIndex].start..<end) }
            spanIndex += 1
            guard spanIndex < spans.count else { word0 = 0; return false }
            offset = spans[spanIndex].start
            end = spans[spanIndex].end
        }
    }
}

/// K-way merge of the thread streams with a binary min-heap keyed by (head time, stream
/// index): O(log T) per event, no allocation per event. While the top stream's next record
/// still comes before both of the top's children, the heap is not touched at all (a thread
/// usually records several events in a row).
private struct EventMerge {
    let bytes: TraceBytes
    let clock: FastTSCConverter
    var cursors: [StreamCursor]

    init(bytes: TraceBytes, streams: [ThreadStream], clock: FastTSCConverter) {
        self.bytes = bytes
        self.clock = clock
        cursors = streams.map(StreamCursor.init)
    }

    /// `scouting`: whether the cursors' scouts run and call `announceStart` while `body` last
    /// returned true. The events go to `body` in batches of `TraceFile.eventBatchSize` (the last
    /// one shorter), decoded into a buffer in place.
    /// `into` is the first batch's buffer (`capacity` initialized events); `body` returns,
    /// with its answer, the buffer of the next batch (the same one, inline; the ring's next).
    @inline(__always)
    mutating func run(scouting: Bool, announceStart: (UInt64) -> Void,
                      into firstBatch: UnsafeMutablePointer<Event>, capacity batchSize: Int,
                      _ body: (UnsafeMutableBufferPointer<Event>) throws -> (Bool, UnsafeMutablePointer<Event>)) rethrows {
        let bytes = self.bytes, clock = self.clock
        var batch = firstBatch
        try RecordShape.table.withUnsafeBufferPointer { shapes in
            try cursors.withUnsafeMutableBufferPointer { cursors in
                var heap = MergeHeap(settling: cursors, bytes, shapes, clock)
                defer { heap.deallocate() }
                var pairing = SlotlessPairing()
                var decoded = 0
                var scout = false
                var limit = heap.smallerChild
                while heap.count > 0 {
                    let top = heap.top.stream
                    let cursor = cursors.baseAddress.unsafelyUnwrapped + top
                    let word0 = cursor.pointee.word0
                    let shape = shapes[Int(word0 & 0xFF)]
                    let event = batch + decoded
                    bytes.decodeEvent(at: cursor.pointee.offset, word0: word0, shape: shape,
                                      tid: cursor.pointee.tid, time: cursor.pointee.time, into: &event.pointee)
                    if shape.needsPairing { pairing.rewrite(&event.pointee) }
                    decoded &+= 1
                    if decoded == batchSize {
                        (scout, batch) = try body(UnsafeMutableBufferPointer(start: batch, count: decoded))
                        decoded = 0
                    }
                    if cursor.pointee.advance(bytes, shapes, clock) {
                        if scouting && scout { cursor.pointee.scoutAhead(bytes, shapes, &pairing, announceStart) }
                        let key = MergeKey(time: cursor.pointee.time, stream: top)
                        if key < limit { heap.top.time = key.time; continue }
                        heap.replaceTop(key)
                    } else {
                        heap.removeTop()
                    }
                    limit = heap.smallerChild
                }
                if decoded > 0 { _ = try body(UnsafeMutableBufferPointer(start: batch, count: decoded)) }
            }
        }
    }
}

extension EventMerge {
    /// The plain merge, one event at a time and no scouts, for `forEachEvent(_:)` (the
    /// decoding alone, `qtrace dump`). A loop of its own: its event is never stored but into
    /// the call's argument, from registers (see `paired`); lent out of the batches instead,
    /// the decoding alone took 1.06x, and with the heap's loop shared through an inline
    /// closure, 1.9-2.4x (the captured event lived in memory).
    @inline(__always)
    mutating func runOneByOne(_ body: (Event) throws -> Void) rethrows {
        let bytes = self.bytes, clock = self.clock
        try RecordShape.table.withUnsafeBufferPointer { shapes in
            try cursors.withUnsafeMutableBufferPointer { cursors in
                var heap = MergeHeap(settling: cursors, bytes, shapes, clock)
                defer { heap.deallocate() }
                var event = Event(type: .end, time: 0, tid: 0)
                var pairing = SlotlessPairing()
                var limit = heap.smallerChild
                while heap.count > 0 {
                    let top = heap.top.stream
                    let cursor = cursors.baseAddress.unsafelyUnwrapped + top
                    let shape = shapes[Int(cursor.pointee.word0 & 0xFF)]
                    bytes.decodeEvent(at: cursor.pointee.offset, word0: cursor.pointee.word0, shape: shape,
                                      tid: cursor.pointee.tid, time: cursor.pointee.time, into: &event)
                    // Two calls, not one of a conditional value: that was a copy of the event.
                    if shape.needsPairing { try body(Self.paired(event, &pairing)) } else { try body(event) }
                    guard cursor.pointee.advance(bytes, shapes, clock) else {
                        heap.removeTop()
                        limit = heap.smallerChild
                        continue
                    }
                    let key = MergeKey(time: cursor.pointee.time, stream: top)
                    if key < limit { heap.top.time = key.time; continue }
                    heap.replaceTop(key)
                    limit = heap.smallerChild
                }
            }
        }
    }

    /// A slot-less record's event, rewritten by the pairing, as a copy: `event` rewritten in
    /// place (`inout`) would have its address taken, which keeps it in memory for every
    /// record, the decoder's narrow stores read back at other widths by the call (a
    /// store-forwarding stall per event; run (19) in docs/performance.md).
    @inline(__always)
    static func paired(_ event: Event, _ pairing: inout SlotlessPairing) -> Event {
        var paired = event
        pairing.rewrite(&paired)
        return paired
    }
}

/// A stream's position in the merge: equal times keep the order of the streams.
private struct MergeKey {
    var time: UInt64
    var stream: Int

    static let last = MergeKey(time: .max, stream: .max)

    @inline(__always)
    static func < (a: MergeKey, b: MergeKey) -> Bool {
        a.time < b.time || (a.time == b.time && a.stream < b.stream)
    }
}

/// A fixed-capacity binary min-heap of the streams' keys (held inline: comparing two
/// entries touches no cursor).
private struct MergeHeap {
    private let items: UnsafeMutablePointer<MergeKey>
    private(set) var count = 0

    init(capacity: Int) { items = .allocate(capacity: max(capacity, 1)) }

    /// The heap of the streams with a record to read, each cursor settled on its first.
    init(settling cursors: UnsafeMutableBufferPointer<StreamCursor>, _ bytes: TraceBytes,
         _ shapes: UnsafeBufferPointer<RecordShape>, _ clock: FastTSCConverter) {
        self.init(capacity: cursors.count)
        for index in cursors.indices where cursors[index].settle(bytes, shapes, clock) {
            push(MergeKey(time: cursors[index].time, stream: index))
        }
    }
    func deallocate() { items.deallocate() }

    var top: MergeKey {
        get { items[0] }
        nonmutating set { items[0] = newValue }
    }

    /// The key the top must stay before to remain the minimum: the smaller of its children's.
    var smallerChild: MergeKey {
        if count > 2 { return items[2] < items[1] ? items[2] : items[1] }
        return count == 2 ? items[1] : .last
    }

    mutating func push(_ key: MergeKey) {
        var child = count
        count += 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard key < items[parent] else { break }
            items[child] = items[parent]
            child = parent
        }
        items[child] = key
    }

    /// Drops the top and restores the order.
    mutating func removeTop() {
        count -= 1
        if count > 0 { replaceTop(items[count]) }
    }

    /// Replaces the top's key (its stream advanced) and sifts it down to its place.
    func replaceTop(_ key: MergeKey) {
        var parent = 0
        while true {
            let left = 2 &* parent &+ 1
            if left >= count { break }
            var smallest = left
            if left &+ 1 < count && items[left &+ 1] < items[left] { smallest = left &+ 1 }
            if !(items[smallest] < key) { break }
            items[parent] = items[smallest]
            parent = smallest
        }
        items[parent] = key
    }
}
