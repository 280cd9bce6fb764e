// Encodes the packets the Perfetto export writes most (per work item, a slice begin with its
// five debug annotations and enqueue flow, and a slice end: docs/perfetto.md) with qtrace's
// ProtoBuffer and with swift-protobuf's generated messages, checks that both give the same
// Trace, and prints the median time per item of each over alternating rounds.
//
//   swift run -c release bench-perfetto-encoding [ITEMS] [ROUNDS]
import Foundation
import QTraceExport
import SwiftProtobuf

/// One item's values, varied like a real trace's (small deltas, a few dozen names).
struct ItemValues {
    var beginDelta: UInt64, endDelta: UInt64, name: UInt64, queue: UInt64, id: UInt64
    var kind: UInt64, wait: Int64, site: UInt64, flow: UInt64
}

func makeItems(_ n: Int) -> [ItemValues] {
    var seed: UInt64 = 42
    func next(_ bound: UInt64) -> UInt64 {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (seed >> 33) % bound
    }
    return (0..<n).map { i in
        ItemValues(beginDelta: 200 + next(20_000), endDelta: 500 + next(100_000), name: 1 + next(40), queue: 41 + next(16),
                   id: UInt64(i + 1), kind: 60 + next(4), wait: Int64(next(1_000_000)), site: 70 + next(40), flow: UInt64(i + 1))
    }
}

let chunkBytes = 1 << 20

/// Where the encoded chunks go: counted, and kept when the check needs them.
struct Output {
    let keep: Bool
    var total = 0
    var kept: [UInt8] = []

    /// Takes the chunk when it is full (or `force`d, at the end).
    mutating func take(_ chunk: inout ProtoBuffer, force: Bool = false) {
        guard force || chunk.count >= chunkBytes else { return }
        total += chunk.count
        if keep { kept += chunk.bytes }
        chunk.removeAll()
    }
}

/// qtrace's encoder: fields appended as the export writes them; returns the bytes written.
func handWritten(_ items: [ItemValues], keep: Bool = false) -> (Int, [UInt8]) {
    var chunk = ProtoBuffer(capacity: chunkBytes + (1 << 16))
    var output = Output(keep: keep)
    for v in items {
        chunk.message(1) { p in
            p.uint(8, v.beginDelta)
            p.uint(10, 1)
            p.uint(13, 2)
            p.message(11) { e in
                e.uint(9, 1)
                e.uint(10, v.name)
                e.message(4) { $0.uint(1, 1); $0.uint(17, v.queue) }
                e.message(4) { $0.uint(1, 2); $0.uint(3, v.id) }
                e.message(4) { $0.uint(1, 3); $0.uint(17, v.kind) }
                e.message(4) { $0.uint(1, 4); $0.int(4, v.wait) }
                e.message(4) { $0.uint(1, 5); $0.uint(17, v.site) }
                e.fixed64(48, v.flow)
            }
        }
        chunk.message(1) { p in
            p.uint(8, v.endDelta)
            p.uint(10, 1)
            p.uint(13, 2)
            p.message(11) { $0.uint(9, 2) }
        }
        output.take(&chunk)
    }
    output.take(&chunk, force: true)
    return (output.total, output.kept)
}

func annotation(_ name: UInt64, _ set: (inout Perfetto_Protos_DebugAnnotation) -> Void) -> Perfetto_Protos_DebugAnnotation {
    var a = Perfetto_Protos_DebugAnnotation()
    a.nameIid = name
    set(&a)
    return a
}

/// The two packets of item `v` as swift-protobuf messages.
func packets(_ v: ItemValues) -> (Perfetto_Protos_TracePacket, Perfetto_Protos_TracePacket) {
    var begin = Perfetto_Protos_TracePacket()
    begin.timestamp = v.beginDelta
    begin.trustedPacketSequenceID = 1
    begin.sequenceFlags = 2
    var event = Perfetto_Protos_TrackEvent()
    event.type = .sliceBegin
    event.nameIid = v.name
    event.debugAnnotations = [
        annotation(1) { $0.stringValueIid = v.queue }, annotation(2) { $0.uintValue = v.id },
        annotation(3) { $0.stringValueIid = v.kind }, annotation(4) { $0.intValue = v.wait },
        annotation(5) { $0.stringValueIid = v.site },
    ]
    event.terminatingFlowIds = [v.flow]
    begin.trackEvent = event
    var end = Perfetto_Protos_TracePacket()
    end.timestamp = v.endDelta
    end.trustedPacketSequenceID = 1
    end.sequenceFlags = 2
    var endEvent = Perfetto_Protos_TrackEvent()
    endEvent.type = .sliceEnd
    end.trackEvent = endEvent
    return (begin, end)
}

/// swift-protobuf, one Trace message per chunk (as many packets as the hand-written chunk
/// holds), serialized whole.
func generatedPerChunk(_ items: [ItemValues], keep: Bool = false) throws -> (Int, [UInt8]) {
    var trace = Perfetto_Protos_Trace()
    let packetsPerChunk = 12_000
    trace.packet.reserveCapacity(packetsPerChunk + 2)
    var total = 0, kept: [UInt8] = []
    func flush() throws {
        let bytes: [UInt8] = try trace.serializedBytes()
        total += bytes.count
        if keep { kept += bytes }
        trace.packet.removeAll(keepingCapacity: true)
    }
    for v in items {
        let (begin, end) = packets(v)
        trace.packet.append(begin)
        trace.packet.append(end)
        if trace.packet.count >= packetsPerChunk { try flush() }
    }
    try flush()
    return (total, kept)
}

/// swift-protobuf, each packet serialized on its own and framed as a Trace's field 1 into the
/// chunk (what an exporter streaming packets would do).
func generatedPerPacket(_ items: [ItemValues], keep: Bool = false) throws -> (Int, [UInt8]) {
    var chunk = ProtoBuffer(capacity: chunkBytes + (1 << 16))
    var output = Output(keep: keep)
    for v in items {
        let (begin, end) = packets(v)
        for packet in [begin, end] {
            let bytes: [UInt8] = try packet.serializedBytes()
            bytes.withUnsafeBytes { chunk.data(1, $0) }
        }
        output.take(&chunk)
    }
    output.take(&chunk, force: true)
    return (output.total, output.kept)
}

let arguments = CommandLine.arguments
let itemCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
let items = makeItems(itemCount)

// Both encodings must describe the same Trace (field order differs: swift-protobuf writes
// fields by number, the export in the order it knows them).
let sample = Array(items.prefix(2000))
let fromHand = try Perfetto_Protos_Trace(serializedBytes: handWritten(sample, keep: true).1)
let fromChunks = try Perfetto_Protos_Trace(serializedBytes: generatedPerChunk(sample, keep: true).1)
let fromPackets = try Perfetto_Protos_Trace(serializedBytes: generatedPerPacket(sample, keep: true).1)
guard fromHand == fromChunks, fromHand == fromPackets, fromHand.packet.count == 2 * sample.count else {
    FileHandle.standardError.write(Data("bench-perfetto-encoding: the two encodings differ\n".utf8))
    exit(1)
}

var handTimes: [Double] = [], chunkTimes: [Double] = [], packetTimes: [Double] = []
var handBytes = 0, generatedBytes = 0
let clock = ContinuousClock()
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
for _ in 0..<rounds {
    handTimes.append(seconds(clock.measure { handBytes = handWritten(items).0 }))
    chunkTimes.append(seconds(try clock.measure { generatedBytes = try generatedPerChunk(items).0 }))
    packetTimes.append(seconds(try clock.measure { generatedBytes = try generatedPerPacket(items).0 }))
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let hand = median(handTimes) / Double(itemCount) * 1e9
let perChunk = median(chunkTimes) / Double(itemCount) * 1e9
let perPacket = median(packetTimes) / Double(itemCount) * 1e9
print(String(format: "items=%d rounds=%d hand_written_ns_per_item=%.1f swift_protobuf_per_chunk_ns_per_item=%.1f "
             + "swift_protobuf_per_packet_ns_per_item=%.1f ratio_best=%.2f bytes_per_item=%.1f/%.1f", itemCount, rounds,
             hand, perChunk, perPacket, min(perChunk, perPacket) / hand,
             Double(handBytes) / Double(itemCount), Double(generatedBytes) / Double(itemCount)))
