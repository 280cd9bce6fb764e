// The packet layer of the Perfetto export: Perfetto's field numbers (from its protos, the
// subset the export writes), packet sequences with their incremental state (interned strings,
// a delta-encoded clock, default track) and the chunked, zlib-compressed packet stream.
// docs/perfetto.md describes the file this produces.
import Foundation
import QTraceViewModel

/// Field numbers of the Perfetto protos (protos/perfetto/trace/...) the export writes.
enum PF {
    enum Trace { static let packet = 1 }
    enum Packet {
        static let clockSnapshot = 6, timestamp = 8, sequenceID = 10, trackEvent = 11, internedData = 12
        static let sequenceFlags = 13, incrementalStateCleared = 41, compressedPackets = 50
        static let timestampClockID = 58, defaults = 59, trackDescriptor = 60, firstPacketOnSequence = 87
    }
    enum SequenceFlags { static let incrementalStateCleared: UInt64 = 1, needsIncrementalState: UInt64 = 2 }
    enum Defaults { static let timestampClockID = 58, trackEventDefaults = 11, trackUUID = 11 }
    enum Clock {
        static let clocks = 1, clockID = 1, timestamp = 2, isIncremental = 3
        static let boottime: UInt64 = 6
        /// The first sequence-scoped clock id: each sequence's own delta-encoded clock.
        static let sequenceDelta: UInt64 = 64
    }
    enum Event {
        static let debugAnnotations = 4, type = 9, nameIID = 10, trackUUID = 11, counterValue = 30
        static let doubleCounterValue = 44, flowIDs = 47, terminatingFlowIDs = 48
        static let sliceBegin: UInt64 = 1, sliceEnd: UInt64 = 2, instant: UInt64 = 3, counter: UInt64 = 4
    }
    enum Annotation { static let nameIID = 1, uintValue = 3, intValue = 4, stringValueIID = 17 }
    enum Interned { static let eventNames = 2, annotationNames = 3, annotationStrings = 29, iid = 1, name = 2 }
    enum Track {
        static let uuid = 1, name = 2, process = 3, thread = 4, parentUUID = 5, counter = 8
        static let childOrdering = 11, siblingOrderRank = 12
        static let explicitOrdering: UInt64 = 3
    }
    enum Process { static let pid = 1, cmdline = 2, name = 6 }
    enum Thread { static let pid = 1, tid = 2, name = 5 }
}

/// Every distinct string the export interns, numbered once: a sequence's interning id for a
/// string is its number + 1, so events look strings up by index, never by hashing text.
struct PerfettoStrings {
    private(set) var strings: [String] = []
    private var numbers: [String: Int] = [:]

    mutating func number(_ s: String) -> Int {
        if let n = numbers[s] { return n }
        numbers[s] = strings.count
        strings.append(s)
        return strings.count - 1
    }
}

/// What an interning id names: Perfetto keeps one table per kind.
enum PerfettoInternKind: Int {
    case eventName = 0, annotationName, annotationString
}

/// One packet sequence (a TraceWriter in Perfetto's terms) with its incremental state: the
/// strings it has interned, the last timestamp of its delta clock.
struct PerfettoSequence {
    let id: UInt64
    var lastTime: Int64 = 0
    /// Per intern kind, a bit per string number: already sent on this sequence.
    private var sent: [[UInt64]] = [[], [], []]
    /// Strings first used by the packet being written (sent with it, as its interned_data).
    fileprivate var pending: [(kind: PerfettoInternKind, number: Int)] = []

    init(id: UInt64) { self.id = id }

    /// The interning id of string `number` in the table `kind`; queues the string for the
    /// current packet's interned data the first time.
    mutating func iid(_ kind: PerfettoInternKind, _ number: Int) -> UInt64 {
        let word = number >> 6, bit = UInt64(1) << UInt64(number & 63)
        if sent[kind.rawValue].count <= word { sent[kind.rawValue] += [UInt64](repeating: 0, count: word + 1 - sent[kind.rawValue].count) }
        if sent[kind.rawValue][word] & bit == 0 {
            sent[kind.rawValue][word] |= bit
            pending.append((kind, number))
        }
        return UInt64(number) + 1
    }
}

/// The output: packets gathered in ~1 MiB chunks, each written as one TracePacket whose
/// compressed_packets field holds the chunk deflated (zlib), which Perfetto inflates on load.
/// Chunks are deflated and written on a second thread while the next one is encoded (deflate
/// is a third of the export's CPU time).
final class PerfettoPacketStream {
    private var chunk = ProtoBuffer(capacity: Chunking.bytes + (1 << 16))
    private let writer: ChunkWriter
    private var nextSequence: UInt64 = 1
    let strings: PerfettoStringsBox
    /// TrackEvents written (the benchmark's per-event figure).
    private(set) var eventCount = 0

    enum Chunking {
        static let bytes = 1 << 20
        /// Chunks handed to the writer thread and not yet written: bounds the memory in flight.
        static let inFlight = 3
    }

    init(out: any ByteSink, compress: Bool, strings: PerfettoStringsBox) {
        writer = ChunkWriter(out: out, compress: compress)
        self.strings = strings
    }

    func packet(_ body: (inout ProtoBuffer) -> Void) throws {
        chunk.message(PF.Trace.packet, body)
        if chunk.count >= Chunking.bytes { try flush() }
    }

    /// Hands the packets so far to the writer thread.
    func flush() throws {
        guard chunk.count > 0 else { return }
        try writer.enqueue(chunk.bytes)
        chunk = ProtoBuffer(capacity: Chunking.bytes + (1 << 16))
    }

    /// Writes what is left and waits for the writer thread; throws its first error.
    func finish() throws {
        try flush()
        try writer.finish()
    }

    /// Waits for the writer thread (an export that failed must not leave it writing).
    func drain() { writer.drain() }

    /// Starts a sequence whose events default to `track` and whose timestamps are deltas on
    /// its own clock (a ClockSnapshot ties it to the trace's clock: both 0 at the trace start).
    func sequence(track: UInt64) throws -> PerfettoSequence {
        let sequence = PerfettoSequence(id: nextSequence)
        nextSequence += 1
        try packet { p in
            p.uint(PF.Packet.sequenceID, sequence.id)
            p.bool(PF.Packet.firstPacketOnSequence, true)
            p.bool(PF.Packet.incrementalStateCleared, true)
            p.uint(PF.Packet.sequenceFlags, PF.SequenceFlags.incrementalStateCleared)
            p.message(PF.Packet.defaults) { d in
                d.uint(PF.Defaults.timestampClockID, PF.Clock.sequenceDelta)
                d.message(PF.Defaults.trackEventDefaults) { $0.uint(PF.Defaults.trackUUID, track) }
            }
        }
        try packet { p in
            p.uint(PF.Packet.sequenceID, sequence.id)
            p.message(PF.Packet.clockSnapshot) { s in
                s.message(PF.Clock.clocks) { c in
                    c.uint(PF.Clock.clockID, PF.Clock.sequenceDelta)
                    c.uint(PF.Clock.timestamp, 0)
                    c.bool(PF.Clock.isIncremental, true)
                }
                s.message(PF.Clock.clocks) { c in
                    c.uint(PF.Clock.clockID, PF.Clock.boottime)
                    c.uint(PF.Clock.timestamp, 0)
                }
            }
        }
        return sequence
    }

    /// One TrackEvent at `time` on `sequence` (times on a sequence never go back: an earlier
    /// time is written as the sequence's last one). `body` writes the event's fields.
    func event(_ sequence: inout PerfettoSequence, at time: Int64,
               _ body: (inout ProtoBuffer, inout PerfettoSequence) -> Void) throws {
        let delta = max(0, time - sequence.lastTime)
        sequence.lastTime += delta
        eventCount += 1
        try packet { p in
            p.uint(PF.Packet.timestamp, UInt64(delta))
            p.uint(PF.Packet.sequenceID, sequence.id)
            p.uint(PF.Packet.sequenceFlags, PF.SequenceFlags.needsIncrementalState)
            p.message(PF.Packet.trackEvent) { body(&$0, &sequence) }
            guard !sequence.pending.isEmpty else { return }
            p.message(PF.Packet.internedData) { interned in
                for entry in sequence.pending { writeInterned(entry.kind, entry.number, into: &interned) }
            }
            sequence.pending.removeAll(keepingCapacity: true)
        }
    }

    private func writeInterned(_ kind: PerfettoInternKind, _ number: Int, into interned: inout ProtoBuffer) {
        let field = switch kind {
        case .eventName: PF.Interned.eventNames
        case .annotationName: PF.Interned.annotationNames
        case .annotationString: PF.Interned.annotationStrings
        }
        interned.message(field) { e in
            e.uint(PF.Interned.iid, UInt64(number) + 1)
            e.string(PF.Interned.name, strings.value.strings[number])
        }
    }
}

/// The string table, shared by reference between the exporter and its packet stream.
final class PerfettoStringsBox {
    var value = PerfettoStrings()
    func number(_ s: String) -> Int { value.number(s) }
}

/// Deflates and writes chunks in order on its own serial queue: only that queue touches the
/// sink; `failure` (its first error) is shared under a lock.
private final class ChunkWriter: @unchecked Sendable {
    private let out: any ByteSink
    private let compress: Bool
    private let queue = DispatchQueue(label: "qtrace.perfetto.writer")
    private let slots = DispatchSemaphore(value: PerfettoPacketStream.Chunking.inFlight)
    private let lock = NSLock()
    private var failure: (any Error)?

    private var firstFailure: (any Error)? {
        get { lock.withLock { failure } }
        set { lock.withLock { if failure == nil { failure = newValue } } }
    }

    init(out: any ByteSink, compress: Bool) {
        self.out = out
        self.compress = compress
    }

    func enqueue(_ bytes: [UInt8]) throws {
        if let failure = firstFailure { throw failure }
        slots.wait()
        queue.async {
            defer { self.slots.signal() }
            guard self.firstFailure == nil else { return }
            do { try self.write(bytes) } catch { self.firstFailure = error }
        }
    }

    /// Waits until every chunk handed over is written.
    func drain() { queue.sync {} }

    func finish() throws {
        drain()
        if let failure = firstFailure { throw failure }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard compress else { return try out.write(bytes) }
        let deflated = try Zlib.compress(bytes, level: 1)
        var framed = ProtoBuffer(capacity: deflated.count + 16)
        framed.message(PF.Trace.packet) { p in
            deflated.withUnsafeBytes { p.data(PF.Packet.compressedPackets, $0) }
        }
        try out.write(framed.bytes)
    }
}
