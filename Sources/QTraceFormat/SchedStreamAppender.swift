// Adds the scheduler stream (format 1.3: SCHED_STATE records in chunks of tid 0) to a
// finished trace, after its process has ended: `qtrace record --sched` converts perf's
// sched_switch/sched_wakeup events into these records, so `stats`, `report` and `diff`
// read one file.
#if canImport(Glibc)
import Glibc
#endif

public enum SchedStreamAppender {
    public enum Failure: Error, CustomStringConvertible {
        case cannotOpen(path: String, reason: String)
        case notATrace(path: String)
        case writeFailed(path: String, reason: String)

        public var description: String {
            switch self {
            case .cannotOpen(let path, let reason): "cannot open trace \(path): \(reason)"
            case .notATrace(path: let path): "\(path) is not a qtrace trace"
            case .writeFailed(let path, let reason): "cannot write trace \(path): \(reason)"
            }
        }
    }

    /// Appends `events` (SCHED_STATE, in time order; time in ns since the trace start) as new
    /// chunks after the allocated ones, then counts them in chunks_allocated and sets the
    /// minor version to 3. Chunks are written before the header, so a failure leaves the
    /// trace as it was. `clock` is the trace's (TraceFile.clock): times become TSC values on
    /// its line. The chunks' calibration pair is (0, 0), which readers drop (it precedes the
    /// start), so adding them does not move the clock fit.
    public static func append(_ events: [Event], to path: String, clock: TraceClock) throws {
        try append(events, to: path, clock: clock, stream: .sched)
    }

    /// A stream qtrace appends after the run: its chunk tid and name, and the minor version a
    /// file holding it has at least.
    public struct Stream: Sendable {
        public let tid: Int32
        public let name: String
        public let versionMinor: UInt16
        public static let sched = Stream(tid: TraceLayout.schedStreamTid, name: "[sched]", versionMinor: TraceLayout.schedVersionMinor)
        /// `qtrace record --cpu`: STACK_FRAME and CPU_SAMPLE records (format 1.5).
        public static let samples = Stream(tid: TraceLayout.samplesStreamTid, name: "[cpu]", versionMinor: TraceLayout.samplesVersionMinor)
    }

    /// Appends `events` (in time order) as the chunks of `stream`; see `append(_:to:clock:)`.
    public static func append(_ events: [Event], to path: String, clock: TraceClock, stream: Stream) throws {
        guard !events.isEmpty else { return }
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)  // never through a symlink (docs/outputs.md)
        guard fd >= 0 else { throw Failure.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        typealias H = TraceLayout.Header
        guard TraceFinalizer.readU64(fd, H.magic) == TraceLayout.fileMagic else { throw Failure.notATrace(path: path) }
        let chunkSize = Int(TraceFinalizer.readU32(fd, H.chunkSize))
        let headerSize = Int(TraceFinalizer.readU32(fd, H.headerSize))
        let allocated = Int(TraceFinalizer.readU64(fd, H.chunksAllocated))
        guard chunkSize >= 4096, chunkSize % 4096 == 0, headerSize >= 4096 else { throw Failure.notATrace(path: path) }

        let chunks = encodeChunks(events, chunkSize: chunkSize, clock: clock, stream: stream)
        for (index, chunk) in chunks.enumerated() {
            try write(chunk, fd: fd, at: headerSize + (allocated + index) * chunkSize, path: path)
        }
        TraceFinalizer.writeU64(fd, H.chunksAllocated, UInt64(allocated + chunks.count))
        var minor = max(UInt16(truncatingIfNeeded: TraceFinalizer.readU32(fd, H.versionMinor)),
                        stream.versionMinor).littleEndian
        _ = pwrite(fd, &minor, 2, off_t(H.versionMinor))
    }

    /// A stream's chunks: 64-byte header (the stream's tid and name), then records of up to
    /// three payload words and no string (SCHED_STATE: state in arg; TSC; tid, cpu, related
    /// tid), as many as fit in a chunk.
    static func encodeChunks(_ events: [Event], chunkSize: Int, clock: TraceClock, stream: Stream = .sched) -> [[UInt8]] {
        func recordLength(_ e: Event) -> Int { TraceLayout.recordHeaderSize + 8 * e.type.payloadWordCount }
        let room = chunkSize - TraceLayout.chunkHeaderSize
        var chunks: [[UInt8]] = []
        var start = 0
        while start < events.count {
            var end = start, used = 0
            while end < events.count, used + recordLength(events[end]) <= room { used += recordLength(events[end]); end += 1 }
            let slice = events[start..<end]
            var bytes = [UInt8](repeating: 0, count: chunkSize)
            bytes.withUnsafeMutableBytes { raw in
                typealias C = TraceLayout.Chunk
                func put<T: FixedWidthInteger>(_ value: T, _ offset: Int) {
                    raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
                }
                put(UInt32(chunks.count), C.threadSeq)
                put(UInt64(bitPattern: Int64(stream.tid)), C.tid)
                for (i, byte) in stream.name.utf8.prefix(C.threadNameSize - 1).enumerated() { raw[C.threadName + i] = byte }
                var offset = TraceLayout.chunkHeaderSize
                for e in slice {
                    let length = recordLength(e)
                    let word0 = UInt64(e.type.rawValue) | UInt64(e.flags) << 8
                        | UInt64(length) << 16 | UInt64(e.arg) << 32
                    put(word0, offset)
                    put(clock.tsc(ofTime: e.time), offset + 8)
                    for (index, word) in [e.a, e.b, e.c].prefix(e.type.payloadWordCount).enumerated() {
                        put(word, offset + 16 + 8 * index)
                    }
                    offset += length
                }
                put(TraceLayout.chunkMagic, C.magic)
            }
            chunks.append(bytes)
            start = end
        }
        return chunks
    }

    private static func write(_ bytes: [UInt8], fd: Int32, at offset: Int, path: String) throws {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            if wrote < 0 && errno == EINTR { continue }
            if wrote <= 0 { throw Failure.writeFailed(path: path, reason: String(cString: strerror(errno))) }
            done += wrote
        }
    }
}
