// Writing version 1 trace files from Swift (tests, benchmarks, synthetic traces). It lays
// bytes out exactly as the shim does, so both kinds of file go through the same reader.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

public enum TraceWriterError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotCreate(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case invalidChunkSize(Int)
    case recordTooLarge(bytes: Int, chunkCapacity: Int)
    case finished

    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): "cannot create trace \(path): \(reason)"
        case .writeFailed(let path, let reason): "cannot write trace \(path): \(reason)"
        case .invalidChunkSize(let size): "chunk size \(size) is not a multiple of 4096 between 4096 and 256 MiB"
        case .recordTooLarge(let bytes, let capacity): "record of \(bytes) bytes does not fit in a chunk (\(capacity) bytes)"
        case .finished: "the trace writer is already finished"
        }
    }
}

/// Writes a trace file. Events are appended per thread (each thread's events in time
/// order; threads may interleave freely); each thread fills its own chunk, which is written
/// out when full, as the shim's threads do. `finish()` writes the last chunks and the header, and
/// only then does the file appear at `path` (a writer dropped unfinished leaves nothing).
///
/// Times map to TSC as `tsc = initTsc + time * tscHz / 1e9`, and every calibration pair
/// lies on that line, so the reader gives back exactly the appended times for tscHz = 1e9.
public final class TraceWriter {
    public let path: String
    public let chunkSize: Int
    public let tscHz: UInt64
    /// Header fields; set them before `finish()`. `chunksAllocated`, `finalTsc` and
    /// `finalMonoNs` are filled in by `finish()`.
    public var header: TraceHeader
    /// Whether `finish()` records an exit: the final calibration pair and the
    /// finalized-by-process flag. Set to false to write what a killed process leaves.
    public var processExited = true

    /// A temporary beside `path` until `finish()` renames it into place (OutputFile).
    private let file: OutputFile
    private var fd: Int32 { file.fd }
    private var threads: [Int32: ThreadChunk] = [:]
    private var lastThread: (tid: Int32, chunk: ThreadChunk)?
    private var chunksWritten = 0
    private var lastTime: UInt64 = 0
    private var isFinished = false

    /// Creates `path` (replacing a file or symlink there once finished; see OutputFile). `initMonoNs` is the CLOCK_MONOTONIC value of time 0;
    /// the TSC starts at the same number, so tsc == mono ns when tscHz = 1e9.
    public init(path: String, pid: Int32 = 1, ncpu: Int = 1, mainTid: Int32 = 1, tscHz: UInt64 = 1_000_000_000,
                chunkSize: Int = TraceLayout.defaultChunkSize, initMonoNs: UInt64 = 1_000_000_000) throws {
        guard chunkSize >= 4096, chunkSize % 4096 == 0, chunkSize <= 1 << 28 else {
            throw TraceWriterError.invalidChunkSize(chunkSize)
        }
        do {
            file = try OutputFile(path: path)
        } catch let error as OutputFileError {
            throw TraceWriterError.cannotCreate(path: path, reason: Self.describe(error.errno))
        }
        self.path = path
        self.chunkSize = chunkSize
        self.tscHz = tscHz
        header = TraceHeader(chunkSize: UInt32(chunkSize), ncpu: UInt32(ncpu), pid: pid,
                             initTsc: initMonoNs, initMonoNs: initMonoNs, mainTid: mainTid,
                             flags: [], tscHz: tscHz)
    }

    deinit {
        for chunk in threads.values { chunk.buffer.deallocate() }
    }

    /// Writes `events` to `path` in one go (each thread's events must be in time order).
    public static func write(_ events: [Event], to path: String, pid: Int32 = 1, mainTid: Int32 = 1,
                             chunkSize: Int = TraceLayout.defaultChunkSize) throws {
        let writer = try TraceWriter(path: path, pid: pid, mainTid: mainTid, chunkSize: chunkSize)
        try writer.append(contentsOf: events)
        try writer.finish()
    }

    /// The TSC value the writer records for `time` (ns since trace start).
    public func tsc(forTime time: UInt64) -> UInt64 {
        if tscHz == 1_000_000_000 { return header.initTsc &+ time }
        let (high, low) = time.multipliedFullWidth(by: tscHz)
        guard high < 1_000_000_000 else { return .max }
        return header.initTsc &+ (1_000_000_000 as UInt64).dividingFullWidth((high: high, low: low)).quotient
    }

    /// Appends one event as the record of its type; unused payload words are not written.
    /// Strings longer than 4096 bytes are truncated with flags8 bit 7 set, as the shim does.
    public func append(_ event: Event) throws {
        let layout = RecordLayout(event.type)
        var flags = event.flags
        var text: [UInt8] = []
        if layout.hasString {
            text = Array((event.string ?? "").utf8)
            if text.count > TraceLayout.maxStringLength {
                text.removeLast(text.count - TraceLayout.maxStringLength)
                flags |= TraceLayout.stringTruncatedFlag
            }
        }
        var words = (event.a, event.b, event.c, event.d)
        // The optional site word is written only when set, as by a shim that knows no site.
        let siteWord = layout.hasOptionalSite ? event.payloadWord(layout.words) : 0
        let count = siteWord != 0 ? layout.writtenWords : layout.words
        try withUnsafeBytes(of: &words) { raw in
            let payload = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt64.self), count: count)
            try writeRecord(tid: event.tid, type: event.type.rawValue, flags: flags, arg: event.arg,
                            tsc: tsc(forTime: event.time), words: payload,
                            string: layout.hasString ? text : nil, extraBytes: 0, time: event.time)
        }
        if event.type == .threadName { setThreadName(event.string ?? "", tid: event.tid) }
    }

    public func append(contentsOf events: some Sequence<Event>) throws {
        for event in events { try append(event) }
    }

    /// Appends any record, known or not, exactly as given (tests of forward compatibility
    /// and of malformed input). `time` is the instant used for a chunk's calibration pair.
    public func appendRaw(tid: Int32, type: UInt8, flags: UInt8 = 0, arg: UInt32 = 0, tsc: UInt64,
                          words: [UInt64] = [], string: [UInt8]? = nil, extraBytes: Int = 0, time: UInt64? = nil) throws {
        try words.withUnsafeBufferPointer { payload in
            try writeRecord(tid: tid, type: type, flags: flags, arg: arg, tsc: tsc, words: payload,
                            string: string, extraBytes: extraBytes, time: time)
        }
    }

    /// Lays out one record in the thread's chunk; `extraBytes` of zeros follow the payload.
    private func writeRecord(tid: Int32, type: UInt8, flags: UInt8, arg: UInt32, tsc: UInt64,
                             words: UnsafeBufferPointer<UInt64>, string: [UInt8]?, extraBytes: Int,
                             time: UInt64?) throws {
        if isFinished { throw TraceWriterError.finished }
        var length = TraceLayout.recordHeaderSize + 8 * words.count + extraBytes
        if let string { length += 4 + string.count }
        length = (length + 7) & ~7
        let capacity = chunkSize - TraceLayout.chunkHeaderSize
        guard length <= capacity, length <= 0xFFF8 else {
            throw TraceWriterError.recordTooLarge(bytes: length, chunkCapacity: min(capacity, 0xFFF8))
        }
        let eventTime = time ?? self.time(ofTSC: tsc)
        let chunk = try chunkWithRoom(for: length, tid: tid, tsc: tsc, time: eventTime)
        let record = chunk.buffer + chunk.used
        var offset = TraceLayout.recordHeaderSize
        for word in words {
            record.storeBytes(of: word.littleEndian, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        if let string {
            record.storeBytes(of: UInt32(string.count).littleEndian, toByteOffset: offset, as: UInt32.self)
            string.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress { (record + offset + 4).copyMemory(from: source, byteCount: bytes.count) }
            }
        }
        record.storeBytes(of: tsc.littleEndian, toByteOffset: 8, as: UInt64.self)
        let word0 = UInt64(type) | UInt64(flags) << 8 | UInt64(length) << 16 | UInt64(arg) << 32
        record.storeBytes(of: word0.littleEndian, as: UInt64.self)
        chunk.used += length
        lastTime = max(lastTime, eventTime)
    }

    /// The name put in the thread's next chunk headers (THREAD_NAME events set it too).
    public func setThreadName(_ name: String, tid: Int32) {
        thread(tid).name = name
    }

    /// Writes out the thread's last chunk and forgets it: a later append with the same tid
    /// starts over at thread_seq 0, like a new thread to which the OS gave a reused tid.
    public func endThread(_ tid: Int32) throws {
        guard let chunk = threads.removeValue(forKey: tid) else { return }
        if lastThread?.tid == tid { lastThread = nil }
        defer { chunk.buffer.deallocate() }
        if chunk.used > 0 { try writeChunk(chunk) }
    }

    /// Writes the threads' partial chunks and the header. Further appends throw.
    public func finish() throws {
        if isFinished { throw TraceWriterError.finished }
        isFinished = true
        for tid in threads.keys.sorted() where threads[tid]!.used > 0 {
            try writeChunk(threads[tid]!)
        }
        header.chunksAllocated = UInt64(chunksWritten)
        if processExited {
            header.finalTsc = tsc(forTime: lastTime)
            header.finalMonoNs = header.initMonoNs &+ lastTime
            header.flags.insert(.finalizedByProcess)
        }
        try writeAll(Self.encodeHeader(header), at: 0)
        do {
            try file.commit()
        } catch let error as OutputFileError {
            throw TraceWriterError.writeFailed(path: path, reason: Self.describe(error.errno))
        }
    }

    /// Encodes a header into its 4096 bytes (exposed so tests can craft headers).
    public static func encodeHeader(_ header: TraceHeader) -> [UInt8] {
        typealias H = TraceLayout.Header
        var bytes = [UInt8](repeating: 0, count: TraceLayout.headerSize)
        bytes.withUnsafeMutableBytes { raw in
            func put<T: FixedWidthInteger>(_ value: T, _ offset: Int) {
                raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
            }
            put(TraceLayout.fileMagic, H.magic)
            put(header.versionMajor, H.versionMajor); put(header.versionMinor, H.versionMinor)
            put(header.headerSize, H.headerSize); put(header.chunkSize, H.chunkSize); put(header.ncpu, H.ncpu)
            put(UInt64(bitPattern: Int64(header.pid)), H.pid); put(UInt64(bitPattern: Int64(header.ppid)), H.ppid)
            put(header.initTsc, H.initTsc); put(header.initMonoNs, H.initMonoNs); put(header.initRealtimeNs, H.initRealtimeNs)
            put(header.finalTsc, H.finalTsc); put(header.finalMonoNs, H.finalMonoNs)
            put(header.chunksAllocated, H.chunksAllocated); put(header.droppedEvents, H.droppedEvents)
            put(UInt64(bitPattern: Int64(header.mainTid)), H.mainTid); put(header.flags.rawValue, H.flags)
            put(header.mainQueue, H.mainQueue); put(header.exitStatusRaw, H.exitStatus)
            put(header.shimOverheadNs, H.shimOverheadNs); put(header.tscHz, H.tscHz)
            putCString(header.executablePath, into: raw, at: H.executablePath, size: H.executablePathSize)
            putCString(header.commandLine, into: raw, at: H.commandLine, size: H.commandLineSize)
        }
        return bytes
    }

    // MARK: Chunks

    /// One thread's chunk being filled (a class so the hot path mutates it in place).
    private final class ThreadChunk {
        let tid: Int32
        let buffer: UnsafeMutableRawPointer
        var used = 0
        var seq: UInt32 = 0
        var name = ""

        init(tid: Int32, size: Int) {
            self.tid = tid
            buffer = .allocate(byteCount: size, alignment: 64)
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        }
    }

    private func thread(_ tid: Int32) -> ThreadChunk {
        if let last = lastThread, last.tid == tid { return last.chunk }
        let chunk = threads[tid] ?? ThreadChunk(tid: tid, size: chunkSize)
        threads[tid] = chunk
        lastThread = (tid, chunk)
        return chunk
    }

    /// The thread's chunk, after writing it out and starting the next one if `length` more
    /// bytes do not fit. A new chunk's header takes its calibration pair at this record.
    private func chunkWithRoom(for length: Int, tid: Int32, tsc: UInt64, time: UInt64) throws -> ThreadChunk {
        let chunk = thread(tid)
        if chunk.used > 0 && chunk.used + length <= chunkSize { return chunk }
        if chunk.used > 0 {
            try writeChunk(chunk)
            chunk.seq += 1
        }
        chunk.buffer.initializeMemory(as: UInt8.self, repeating: 0, count: chunkSize)
        startChunk(chunk, tsc: tsc, monoNs: header.initMonoNs &+ time)
        return chunk
    }

    private func startChunk(_ chunk: ThreadChunk, tsc: UInt64, monoNs: UInt64) {
        typealias C = TraceLayout.Chunk
        let raw = UnsafeMutableRawBufferPointer(start: chunk.buffer, count: TraceLayout.chunkHeaderSize)
        raw.storeBytes(of: chunk.seq.littleEndian, toByteOffset: C.threadSeq, as: UInt32.self)
        raw.storeBytes(of: UInt64(bitPattern: Int64(chunk.tid)).littleEndian, toByteOffset: C.tid, as: UInt64.self)
        raw.storeBytes(of: tsc.littleEndian, toByteOffset: C.calibTsc, as: UInt64.self)
        raw.storeBytes(of: monoNs.littleEndian, toByteOffset: C.calibMonoNs, as: UInt64.self)
        putCString(chunk.name, into: raw, at: C.threadName, size: C.threadNameSize)
        raw.storeBytes(of: TraceLayout.chunkMagic.littleEndian, toByteOffset: C.magic, as: UInt32.self)
        chunk.used = TraceLayout.chunkHeaderSize
    }

    private func writeChunk(_ chunk: ThreadChunk) throws {
        let offset = TraceLayout.headerSize + chunksWritten * chunkSize
        try writeAll(UnsafeRawBufferPointer(start: chunk.buffer, count: chunkSize), at: offset)
        chunksWritten += 1
    }

    private func time(ofTSC tsc: UInt64) -> UInt64 {
        let ticks = tsc &- header.initTsc
        if tscHz == 1_000_000_000 || tscHz == 0 { return ticks }
        let (high, low) = ticks.multipliedFullWidth(by: 1_000_000_000)
        return high < tscHz ? tscHz.dividingFullWidth((high: high, low: low)).quotient : .max
    }

    private func writeAll(_ bytes: [UInt8], at offset: Int) throws {
        try bytes.withUnsafeBytes { try writeAll($0, at: offset) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let wrote = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if wrote < 0 && errno == EINTR { continue }
            if wrote <= 0 { throw TraceWriterError.writeFailed(path: path, reason: Self.describe(errno)) }
            done += wrote
        }
    }

    private static func describe(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "error \(code)" }
        return String(cString: message)
    }
}

/// Stores `text` NUL-terminated in a fixed-size field, truncated to `size - 1` bytes.
private func putCString(_ text: String, into raw: UnsafeMutableRawBufferPointer, at offset: Int, size: Int) {
    let bytes = Array(text.utf8.prefix(size - 1))
    for (index, byte) in bytes.enumerated() { raw[offset + index] = byte }
    raw[offset + bytes.count] = 0
}
