// The purpose-built CTF reader: every stream file of the trace directories, merged in time
// order (a heap; equal times ordered as babeltrace2's muxer orders them: trace uuid, stream
// class id, stream id), each qtrace event handed to the EventCollector exactly as the
// libbabeltrace2 path hands it.
import Foundation
import QTraceFormat

struct FastCTFReader {
    let traces: [CTFFastTrace]

    /// Parses and compiles the metadata of every directory. Throws `CTFUnsupported` when
    /// the metadata uses something this decoder does not handle.
    init(directories: [String]) throws {
        traces = try directories.map { try CTFFastTrace(directory: $0) }
    }

    func run(_ collector: EventCollector) throws {
        var files: [CTFStreamFile] = []
        for trace in traces where trace.hasQTraceEvents {
            for path in try Self.streamFiles(in: trace.directory) {
                files.append(try CTFStreamFile(trace: trace, path: path))
            }
        }
        var live: [CTFStreamFile] = []
        for file in files where try file.advance() { live.append(file) }
        var heap = StreamHeap(files: Self.ranked(live))
        while let file = heap.top {
            try deliver(file, to: collector)
            if try file.advance() { heap.updateTop(file.ns) } else { heap.removeTop() }
        }
        for file in files { collector.discarded(file.discardedEvents) }
    }

    /// The data stream files of a trace directory (all but `metadata`, hidden and empty files).
    static func streamFiles(in directory: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        return names.sorted().compactMap { name in
            guard name != "metadata", !name.hasPrefix(".") else { return nil }
            let path = directory + "/" + name
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  attributes[.type] as? FileAttributeType == .typeRegular,
                  (attributes[.size] as? NSNumber)?.intValue ?? 0 > 0 else { return nil }
            return path
        }
    }

    /// Streams with their tie-break rank: babeltrace2's muxer orders messages of equal time by
    /// trace uuid, then stream class id, then stream id.
    private static func ranked(_ files: [CTFStreamFile]) -> [(file: CTFStreamFile, rank: Int)] {
        let order = files.sorted { a, b in
            if a.trace.uuid != b.trace.uuid { return a.trace.uuid.lexicographicallyPrecedes(b.trace.uuid) }
            if a.streamClassID != b.streamClassID { return a.streamClassID < b.streamClassID }
            if a.streamInstanceID != b.streamInstanceID { return a.streamInstanceID < b.streamInstanceID }
            return a.path < b.path
        }
        return order.enumerated().map { ($0.element, $0.offset) }
    }

    // MARK: Delivery

    private func deliver(_ file: CTFStreamFile, to collector: EventCollector) throws {
        guard let plan = file.event, let kind = plan.kind else { return }
        let needed = plan.needed
        let tid = file.vtid
        let ns = file.ns
        switch kind {
        case .record(let words):
            try collector.record(rawType: UInt8(truncatingIfNeeded: file.value(needed[0])),
                                 flags: UInt8(truncatingIfNeeded: file.value(needed[1])),
                                 arg: UInt32(truncatingIfNeeded: file.value(needed[2])),
                                 a: words > 0 ? file.value(needed[3]) : 0, b: words > 1 ? file.value(needed[4]) : 0,
                                 c: words > 2 ? file.value(needed[5]) : 0, d: words > 3 ? file.value(needed[6]) : 0,
                                 string: nil, ns: ns, tid: tid, pid: pid(file, tid: tid, collector))
        case .recordString:
            let flags = UInt8(truncatingIfNeeded: file.value(needed[1]))
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            if let element = plan.wordOp {
                let count = min(file.element(needed[3], element, 0).count, 4)
                if count > 0 { words.0 = file.element(needed[3], element, 0).value }
                if count > 1 { words.1 = file.element(needed[3], element, 1).value }
                if count > 2 { words.2 = file.element(needed[3], element, 2).value }
                if count > 3 { words.3 = file.element(needed[3], element, 3).value }
            }
            let text = decodeString(file.bytes(needed[4]), truncated: flags & 0x80 != 0)
            try collector.record(rawType: UInt8(truncatingIfNeeded: file.value(needed[0])), flags: flags,
                                 arg: UInt32(truncatingIfNeeded: file.value(needed[2])),
                                 a: words.0, b: words.1, c: words.2, d: words.3, string: text, ns: ns, tid: tid,
                                 pid: pid(file, tid: tid, collector))
        case .process:
            let facts = ProcessFacts(
                pid: Int32(truncatingIfNeeded: file.value(needed[0])), ppid: Int32(truncatingIfNeeded: file.value(needed[1])),
                ncpu: UInt32(truncatingIfNeeded: file.value(needed[2])), mainTid: Int32(truncatingIfNeeded: file.value(needed[3])),
                mainQueue: file.value(needed[4]), initMonoNs: file.value(needed[5]), initRealtimeNs: file.value(needed[6]),
                executable: decodeString(file.bytes(plan.executable)), commandLine: decodeString(file.bytes(plan.commandLine)))
            try collector.process(facts, ns: ns, tid: tid)
        case .thread:
            try collector.thread(pid: Int32(truncatingIfNeeded: file.value(needed[0])), name: decodeString(file.bytes(needed[1])),
                                 ns: ns, tid: tid)
        case .dropped:
            collector.dropped(type: UInt8(truncatingIfNeeded: file.value(needed[0])), pid: pid(file, tid: tid, collector))
        case .processEnd:
            collector.processEnd(ns: ns, pid: pid(file, tid: tid, collector))
        }
    }

    /// The event's process, in the libbabeltrace2 path's order: vpid context, the trace
    /// environment, the thread's announced process.
    @inline(__always)
    private func pid(_ file: CTFStreamFile, tid: Int32, _ collector: EventCollector) -> Int32 {
        if let vpid = file.vpid { return vpid }
        if let pid = file.trace.environmentPid { return pid }
        return collector.pid(ofThread: tid)
    }

    /// A string as the libbabeltrace2 path decodes it (invalid UTF-8 replaced; a truncated
    /// string's partial last character dropped).
    private func decodeString(_ bytes: UnsafeRawBufferPointer?, truncated: Bool = false) -> String {
        guard let bytes else { return "" }
        let kept = truncated ? completeUTF8PrefixLength(bytes) : bytes.count
        return String(decoding: bytes[..<kept], as: UTF8.self)
    }
}

/// A binary min-heap of streams keyed by (time of the current event, rank).
private struct StreamHeap {
    private var entries: [(ns: Int64, rank: Int, file: CTFStreamFile)]

    init(files: [(file: CTFStreamFile, rank: Int)]) {
        entries = files.map { ($0.file.ns, $0.rank, $0.file) }
        for i in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    var top: CTFStreamFile? { entries.first?.file }

    mutating func updateTop(_ ns: Int64) {
        entries[0].ns = ns
        siftDown(0)
    }

    mutating func removeTop() {
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        if !entries.isEmpty { siftDown(0) }
    }

    @inline(__always)
    private func less(_ i: Int, _ j: Int) -> Bool {
        entries[i].ns < entries[j].ns || (entries[i].ns == entries[j].ns && entries[i].rank < entries[j].rank)
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let left = 2 * i + 1, right = left + 1
            var smallest = i
            if left < entries.count && less(left, smallest) { smallest = left }
            if right < entries.count && less(right, smallest) { smallest = right }
            if smallest == i { return }
            entries.swapAt(i, smallest)
            i = smallest
        }
    }
}
