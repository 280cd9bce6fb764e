// Opening a trace: header validation, the chunk table, calibration, and the per-thread
// streams of validated records that the merge reads.

/// One written chunk (magic QCHK) within the usable part of the file.
struct ChunkEntry {
    let index: Int
    let start: Int
    let end: Int
    let threadSeq: UInt32
    /// A ring's claim order (0 in other traces).
    let claimSeq: UInt64
    let rawTid: UInt64
    let calibration: CalibrationPair
    let name: String?
}

/// The chunks of one OS thread, in order, reduced to their valid record spans.
struct ThreadStream {
    let tid: Int32
    var spans: [RecordSpan]
}

/// Everything `TraceFile` learns at open time.
struct TraceIndex {
    var header: TraceHeader
    var chunkCount = 0
    var unwrittenChunkCount = 0
    var unknownRecordCount = 0
    var eventCount = 0
    /// Records of the scheduler stream (chunk tid 0, format 1.3), included in eventCount.
    var schedEventCount = 0
    var sampleEventCount = 0
    var clock = TraceClock(baseTsc: 0, offsetNs: 0, nsPerTick: 1, method: .identity, pairCount: 0)
    var streams: [ThreadStream] = []
    /// The largest TSC of a record (0 without records): the range the merge's clock covers.
    var maxTsc: UInt64 = 0
    var threads: [ThreadInfo] = []
    var warnings: [TraceWarning] = []
    /// Records dropped by the validation rules (TraceValidation.swift), in no other count.
    var invalidRecordCount = 0
    /// Chunks that are not what the recorder writes: a bad magic (not the zeros of a chunk
    /// never written) or damaged framing, whose rest is skipped.
    var damagedChunkCount = 0
    /// The TSC range of valid records.
    var bounds = TimeBounds.unbounded

    init(bytes: TraceBytes, path: String, decodingThread: DecodingThread = .automatic) throws {
        header = try Self.readHeader(bytes, path: path)
        for problem in header.dropImplausibleFields() { warnings.append(TraceWarning(chunk: nil, message: problem)) }
        let usable = try locateChunks(bytes, path: path)
        var chunks = readChunkHeaders(bytes, usable: usable)
        // A ring reuses chunks, so file order is not the order they were written in.
        if header.flags.contains(.ring) { chunks.sort { ($0.claimSeq, $0.index) < ($1.claimSeq, $1.index) } }
        clock = fitClock(chunks: chunks)
        bounds = TimeBounds(clock: clock, finalTsc: header.finalTsc)
        buildStreams(bytes, chunks: chunks, decodingThread: decodingThread)
    }

    // MARK: Header

    static func readHeader(_ bytes: TraceBytes, path: String) throws -> TraceHeader {
        let size = bytes.count
        if size == 0 { throw TraceError.emptyFile(path: path) }
        let magicBytes = withUnsafeBytes(of: TraceLayout.fileMagic.littleEndian) { Array($0) }
        let present = Array(UnsafeRawBufferPointer(start: bytes.base, count: min(size, 8)))
        if present != Array(magicBytes.prefix(present.count)) { throw TraceError.badMagic(path: path) }
        if size >= 12 {
            let major = bytes.u16(TraceLayout.Header.versionMajor)
            if major != TraceLayout.versionMajor {
                throw TraceError.unsupportedVersion(path: path, major: major, minor: bytes.u16(TraceLayout.Header.versionMinor))
            }
        }
        if size < TraceLayout.headerSize { throw TraceError.truncatedHeader(path: path, bytes: size) }
        let header = decodeHeader(bytes)
        if let problem = sizeProblem(header) { throw TraceError.corruptHeader(path: path, reason: problem) }
        if size < Int(header.headerSize) { throw TraceError.truncatedHeader(path: path, bytes: size) }
        return header
    }

    private static func decodeHeader(_ bytes: TraceBytes) -> TraceHeader {
        typealias H = TraceLayout.Header
        var header = TraceHeader(
            versionMajor: bytes.u16(H.versionMajor), versionMinor: bytes.u16(H.versionMinor),
            headerSize: bytes.u32(H.headerSize), chunkSize: bytes.u32(H.chunkSize), ncpu: bytes.u32(H.ncpu),
            pid: Int32(truncatingIfNeeded: bytes.u64(H.pid)), ppid: Int32(truncatingIfNeeded: bytes.u64(H.ppid)),
            initTsc: bytes.u64(H.initTsc), initMonoNs: bytes.u64(H.initMonoNs), initRealtimeNs: bytes.u64(H.initRealtimeNs),
            finalTsc: bytes.u64(H.finalTsc), finalMonoNs: bytes.u64(H.finalMonoNs),
            chunksAllocated: bytes.u64(H.chunksAllocated), droppedEvents: bytes.u64(H.droppedEvents),
            mainTid: Int32(truncatingIfNeeded: bytes.u64(H.mainTid)),
            flags: TraceHeaderFlags(rawValue: bytes.u64(H.flags)), mainQueue: bytes.u64(H.mainQueue),
            exitStatusRaw: bytes.u64(H.exitStatus), shimOverheadNs: bytes.u64(H.shimOverheadNs), tscHz: bytes.u64(H.tscHz),
            executablePath: bytes.fixedString(at: H.executablePath, size: H.executablePathSize),
            commandLine: bytes.fixedString(at: H.commandLine, size: H.commandLineSize))
        header.droppedEnqueue = bytes.u64(H.droppedEnqueue)
        header.droppedStart = bytes.u64(H.droppedStart)
        header.droppedEnd = bytes.u64(H.droppedEnd)
        if header.flags.contains(.ring) {
            var ring = RingInfo()
            ring.ringBytes = bytes.u64(H.ringBytes)
            ring.metadataChunks = bytes.u64(H.metadataChunks)
            ring.overwrittenEvents = bytes.u64(H.overwrittenEvents)
            ring.overwrittenChunks = bytes.u64(H.overwrittenChunks)
            ring.completeFromTsc = bytes.u64(H.completeFromTsc)
            ring.snapshotTsc = bytes.u64(H.snapshotTsc)
            ring.snapshotReasonRaw = bytes.u64(H.snapshotReason)
            ring.snapshotCount = bytes.u64(H.snapshotCount)
            header.ring = ring
        }
        return header
    }

    /// header_size and chunk_size must be whole pages of a plausible size: everything else
    /// is computed from them. header_size is honoured as the offset of chunk 0 (4096 in 1.0).
    private static func sizeProblem(_ header: TraceHeader) -> String? {
        let page = UInt32(TraceLayout.headerSize)
        if header.headerSize < page || header.headerSize % page != 0 || header.headerSize > 1 << 20 {
            return "header_size \(header.headerSize), expected \(page)"
        }
        if header.chunkSize < page || header.chunkSize % page != 0 || header.chunkSize > 1 << 28 {
            return "chunk_size \(header.chunkSize) is not a multiple of \(page) between \(page) and 256 MiB"
        }
        return nil
    }

    // MARK: Chunks

    /// How many chunks to read: chunks_allocated, clamped to what the file holds. A last chunk
    /// cut short by truncation still counts if its 64-byte header is there.
    private mutating func locateChunks(_ bytes: TraceBytes, path: String) throws -> Int {
        let chunkSize = Int(header.chunkSize), base = Int(header.headerSize)
        let body = bytes.count - base
        let whole = body / chunkSize
        let partial = body % chunkSize >= TraceLayout.chunkHeaderSize ? 1 : 0
        let held = whole + partial
        let usable = header.chunksAllocated < UInt64(held) ? Int(header.chunksAllocated) : held
        if usable == 0 { throw TraceError.noChunks(path: path) }
        if header.chunksAllocated > UInt64(held) {
            warnings.append(TraceWarning(chunk: nil, message:
                "trace file is truncated: it holds \(held) of \(header.chunksAllocated) allocated chunks"))
        }
        if usable > whole {
            warnings.append(TraceWarning(chunk: nil, message:
                "trace file is truncated: chunk \(whole) is cut short (\(body % chunkSize) of \(chunkSize) bytes)"))
        }
        chunkCount = usable
        return usable
    }

    private mutating func readChunkHeaders(_ bytes: TraceBytes, usable: Int) -> [ChunkEntry] {
        typealias C = TraceLayout.Chunk
        let chunkSize = Int(header.chunkSize), base = Int(header.headerSize)
        var chunks: [ChunkEntry] = []
        chunks.reserveCapacity(usable)
        for index in 0..<usable {
            let start = base + index * chunkSize
            let magic = bytes.u32(start + C.magic)
            if magic == 0 { unwrittenChunkCount += 1; continue }
            if magic != TraceLayout.chunkMagic {
                warnings.append(TraceWarning(chunk: index, message: "bad chunk magic 0x\(String(magic, radix: 16)), chunk skipped"))
                damagedChunkCount += 1
                continue
            }
            let name = bytes.fixedString(at: start + C.threadName, size: C.threadNameSize)
            chunks.append(ChunkEntry(
                index: index, start: start, end: min(start + chunkSize, bytes.count),
                threadSeq: bytes.u32(start + C.threadSeq), claimSeq: bytes.u64(start + C.claimSeq), rawTid: bytes.u64(start + C.tid),
                calibration: CalibrationPair(tsc: bytes.u64(start + C.calibTsc), monoNs: bytes.u64(start + C.calibMonoNs)),
                name: name.isEmpty ? nil : name))
        }
        return chunks
    }

    /// The clock line through the plausible calibration pairs (a chunk's pair that lies is
    /// left out with a warning); a line that is no clock falls back to tsc_hz or 1 tick = 1 ns.
    private mutating func fitClock(chunks: [ChunkEntry]) -> TraceClock {
        let initPair = CalibrationPair(tsc: header.initTsc, monoNs: header.initMonoNs)
        var pairs = [initPair]
        for chunk in chunks {
            if let problem = chunk.calibration.problem(initPair: initPair, tscHz: header.tscHz) {
                warnings.append(TraceWarning(chunk: chunk.index, message: "calibration pair \(problem), not used"))
            } else {
                pairs.append(chunk.calibration)
            }
        }
        if header.finalTsc != 0 { pairs.append(CalibrationPair(tsc: header.finalTsc, monoNs: header.finalMonoNs)) }
        let clock = TraceClock.fit(initPair: initPair, pairs: pairs, tscHz: header.tscHz)
        if clock.isPlausible { return clock }
        warnings.append(TraceWarning(chunk: nil, message:
            "calibration pairs give no plausible clock (\(clock.ticksPerSecond) ticks/s), using \(header.tscHz == 0 ? "1 tick = 1 ns" : "header tsc_hz")"))
        return TraceClock.fit(initPair: initPair, pairs: [initPair], tscHz: header.tscHz)
    }

    // MARK: Streams

    /// Groups chunks by tid in claim order (file order, but for a ring; a thread claims its
    /// chunks in that order, so this is thread_seq order). A thread_seq that does not increase means the OS
    /// reused the tid for a new thread: that starts a separate stream.
    static func groupByThread(_ chunks: [ChunkEntry]) -> [[ChunkEntry]] {
        var groups: [[ChunkEntry]] = []
        var openGroup: [UInt64: Int] = [:]
        for chunk in chunks {
            if let group = openGroup[chunk.rawTid], let last = groups[group].last, chunk.threadSeq > last.threadSeq {
                groups[group].append(chunk)
            } else {
                openGroup[chunk.rawTid] = groups.count
                groups.append([chunk])
            }
        }
        return groups
    }

    private mutating func buildStreams(_ bytes: TraceBytes, chunks: [ChunkEntry], decodingThread: DecodingThread) {
        RecordShape.table.withUnsafeBufferPointer {
            buildStreams(bytes, chunks: chunks, shapes: $0, decodingThread: decodingThread)
        }
    }

    private mutating func buildStreams(_ bytes: TraceBytes, chunks: [ChunkEntry], shapes: UnsafeBufferPointer<RecordShape>,
                                       decodingThread: DecodingThread) {
        var built: [(stream: ThreadStream, info: ThreadInfo, order: Int)] = []
        let groups = Self.groupByThread(chunks)
        // Every chunk's records validated first (two chunks at a time), in the groups' order.
        let ranges = groups.joined().map { ($0.start + TraceLayout.chunkHeaderSize)..<$0.end }
        let scans = bytes.scanChunksSideBySide(ranges, shapes: shapes, bounds: bounds, decodingThread: decodingThread)
        var scanned = 0
        for group in groups {
            let tid = Int32(truncatingIfNeeded: group[0].rawTid)
            var stream = ThreadStream(tid: tid, spans: [])
            var name: String?
            var firstTsc: UInt64?, lastTsc: UInt64 = 0, count = 0
            for chunk in group {
                if let headerName = chunk.name, !(name ?? "").hasPrefix(headerName) { name = headerName }
                let recordsStart = chunk.start + TraceLayout.chunkHeaderSize
                let scan = scans[scanned]
                scanned += 1
                if let problem = scan.problem {
                    warnings.append(TraceWarning(chunk: chunk.index, message: "tid \(tid): \(problem); rest of the chunk skipped"))
                    damagedChunkCount += 1
                }
                if let problem = scan.invalidProblem {
                    let count = scan.invalidOffsets.count
                    warnings.append(TraceWarning(chunk: chunk.index, message:
                        "tid \(tid): \(count) invalid record\(count == 1 ? "" : "s") dropped, the first: \(problem)"))
                    invalidRecordCount += count
                }
                if let offset = scan.lastThreadNameOffset { name = bytes.threadName(record: offset) }
                stream.spans += bytes.spans(from: recordsStart, to: scan.validEnd, excluding: scan.invalidOffsets)
                if firstTsc == nil { firstTsc = scan.firstTsc }
                if scan.eventCount > 0 { lastTsc = scan.lastTsc; maxTsc = max(maxTsc, scan.lastTsc) }
                count += scan.eventCount
                unknownRecordCount += scan.unknownCount
            }
            eventCount += count
            // A chunk's claim TSC is only a fallback, and may lie: kept within the bounds.
            let claim = Swift.min(Swift.max(group[0].calibration.tsc, bounds.low), bounds.low &+ bounds.span)
            let first = clock.time(ofTSC: firstTsc ?? claim)
            let last = firstTsc == nil ? first : clock.time(ofTSC: lastTsc)
            let info = ThreadInfo(tid: tid, name: name, firstTime: first, lastTime: last, eventCount: count, chunkCount: group.count)
            built.append((stream, info, group[0].index))
        }
        // Threads in order of appearance; this order also breaks time ties in the merge.
        built.sort { ($0.info.firstTime, $0.order) < ($1.info.firstTime, $1.order) }
        streams = built.map(\.stream)
        // The scheduler stream is merged like a thread's but is no thread of the process.
        let sched = TraceLayout.schedStreamTid, samples = TraceLayout.samplesStreamTid
        let metadata = TraceLayout.metadataStreamTid
        threads = built.filter { ![sched, samples, metadata].contains($0.info.tid) }.map(\.info)
        schedEventCount = built.filter { $0.info.tid == sched }.reduce(0) { $0 + $1.info.eventCount }
        sampleEventCount = built.filter { $0.info.tid == samples }.reduce(0) { $0 + $1.info.eventCount }
    }
}

extension TraceBytes {
    /// The valid record runs of `start..<end`: the whole range less the dropped records.
    fileprivate func spans(from start: Int, to end: Int, excluding dropped: [Int]) -> [RecordSpan] {
        var spans: [RecordSpan] = []
        var runStart = start
        for offset in dropped {
            if offset > runStart { spans.append(RecordSpan(start: runStart, end: offset)) }
            runStart = offset + Int(truncatingIfNeeded: (u64(offset) >> 16) & 0xFFFF)
        }
        if end > runStart { spans.append(RecordSpan(start: runStart, end: end)) }
        return spans
    }

    /// The name in a validated THREAD_NAME record.
    fileprivate func threadName(record offset: Int) -> String {
        let layout = RecordLayout(.threadName)
        let lengthOffset = offset + layout.fixedLength - 4
        let flags = UInt8(truncatingIfNeeded: u64(offset) >> 8)
        return recordString(at: lengthOffset + 4, count: Int(u32(lengthOffset)),
                            truncated: flags & TraceLayout.stringTruncatedFlag != 0)
    }
}
