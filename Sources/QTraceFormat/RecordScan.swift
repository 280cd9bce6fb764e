// The validation walk (docs/trace-format.md, "Validation"): what bounds each chunk's valid
// records before the merge trusts them. A record's length gives the next record's address, so
// one walk waits on a load per record; `scanChunks` walks two chunks at once so that two of
// those loads are in flight, and the common record costs one table lookup (its type's
// shortest length: `RecordShape.walkMinimums`) and one comparison of its time.

/// What a structural pass over one chunk found.
struct ChunkScan {
    var validEnd: Int
    var eventCount = 0
    var unknownCount = 0
    var firstTsc: UInt64?
    var lastTsc: UInt64 = 0
    /// Offset of the last THREAD_NAME record, whose string names the thread.
    var lastThreadNameOffset: Int?
    var problem: String?
    /// Well-framed records of known types that break the validation rules (time out of the
    /// trace's range or before the record before, an overlong string), in file order: the
    /// spans leave them out, and they are counted in no other field.
    var invalidOffsets: [Int] = []
    /// Why the first of them is invalid.
    var invalidProblem: String?
}

/// One chunk's records walked one at a time (`step`), then summed up (`result`). It stops at
/// the end marker (a zero word) or at the first record that cannot be trusted. Records of
/// known types must also lie within the bounds and not before the previous one.
struct RecordWalk {
    let start: Int
    let end: Int
    /// The next record.
    private(set) var offset: Int
    /// Where the walk stops: the chunk's end, or the record that ended it (end marker, damage).
    private var limit: Int
    /// The earliest TSC the next known record may have: the last valid one's, or the bounds'
    /// low end before it.
    private var floorTsc: UInt64
    private var known = 0
    private var unknown = 0
    private var lastThreadName = -1
    private var damaged = false
    private var invalid: [Int] = []

    init(start: Int, end: Int, bounds: TimeBounds) {
        self.start = start; self.end = end; offset = start; limit = end; floorTsc = bounds.low
    }

    /// Checks the record at `offset` and moves past it; false once the walk has stopped.
    /// Bounds: offset stays within start...end (each step adds a length checked against
    /// end - offset), so the arithmetic cannot overflow.
    /// `minimums`: `RecordShape.walkMinimums`; `highTsc`: the bounds' high end.
    @inline(__always)
    mutating func step(_ bytes: TraceBytes, _ minimums: UnsafeBufferPointer<UInt32>, _ shapes: UnsafeBufferPointer<RecordShape>,
                       highTsc: UInt64) -> Bool {
        guard limit &- offset >= 8 else { return false }
        let word0 = UInt64(littleEndian: bytes.base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let length = Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
        var isThreadName = false
        // While the walk goes on, `limit` is the chunk's end.
        if length < Int(minimums[Int(word0 & 0xFF)]) || length & 7 != 0 || length > limit &- offset {
            // The end marker, damage, strings and unknown types: classified out of line, so
            // that the common case keeps its few values in registers.
            switch bytes.classifySpecial(word0, shapes[Int(word0 & 0xFF)], at: offset, length: length, end: end) {
            case .endMarker:
                limit = offset
                return false
            case .damaged:
                damaged = true
                limit = offset
                return false
            case .unknown:
                unknown &+= 1
                offset &+= length
                return true
            case .invalid:
                drop(length: length)
                return true
            case .threadName:
                isThreadName = true
            case .known:
                break
            }
        }
        // Known records carry a TSC at +8 (length >= 16): in range, and never going back, that
        // is within floorTsc...highTsc (one comparison: below the floor wraps past the span).
        let tsc = UInt64(littleEndian: bytes.base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self))
        if tsc &- floorTsc > highTsc &- floorTsc {
            drop(length: length)
            return true
        }
        floorTsc = tsc
        if isThreadName { lastThreadName = offset }
        known &+= 1
        offset &+= length
        return true
    }

    /// Leaves out the well-framed record at `offset` that breaks a rule.
    @inline(never)
    private mutating func drop(length: Int) {
        invalid.append(offset)
        offset &+= length
    }

    /// What the walk found (once it has stopped).
    func result(_ bytes: TraceBytes, _ shapes: UnsafeBufferPointer<RecordShape>, _ bounds: TimeBounds) -> ChunkScan {
        var scan = ChunkScan(validEnd: offset)
        if damaged {
            // The record at `offset` is the one that stopped the walk: say what is wrong.
            let word0 = bytes.u64(offset)
            let length = Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
            scan.problem = "record at byte \(offset - start + TraceLayout.chunkHeaderSize) "
                + bytes.recordProblem(shapes[Int(word0 & 0xFF)], at: offset, length: length, room: end - offset)
        }
        scan.eventCount = known
        scan.unknownCount = unknown
        if known > 0 {
            // The first valid known record: found again here rather than tracked per record.
            var first = start, skipped = 0
            while !shapes[Int(bytes.u64(first) & 0xFF)].isKnown || (skipped < invalid.count && invalid[skipped] == first) {
                if skipped < invalid.count && invalid[skipped] == first { skipped += 1 }
                first += Int(truncatingIfNeeded: (bytes.u64(first) >> 16) & 0xFFFF)
            }
            scan.firstTsc = bytes.u64(first + 8)
            scan.lastTsc = floorTsc
        }
        if lastThreadName >= 0 { scan.lastThreadNameOffset = lastThreadName }
        if let firstInvalid = invalid.first {
            scan.invalidProblem = "record at byte \(firstInvalid - start + TraceLayout.chunkHeaderSize) "
                + bytes.invalidProblem(shapes[Int(bytes.u64(firstInvalid) & 0xFF)], at: firstInvalid, bounds: bounds)
            scan.invalidOffsets = invalid
        }
        return scan
    }
}

extension TraceBytes {
    /// The walk of every range (each the records after a chunk header; see `RecordWalk`), two
    /// at a time, each step taking one record of each so that their loads overlap (four walks
    /// measured no better: their state no longer fits in registers). A walk that stops hands
    /// its lane to the next range. The results are in the ranges' order.
    func scanChunks(_ ranges: [Range<Int>], shapes: UnsafeBufferPointer<RecordShape>, bounds: TimeBounds) -> [ChunkScan] {
        var scans = [ChunkScan](repeating: ChunkScan(validEnd: 0), count: ranges.count)
        var next = 0
        /// The lane's walk is over: its result, and the next range's walk (an empty one, -1,
        /// when none is left).
        func refill(_ walk: inout RecordWalk, _ range: inout Int) {
            if range >= 0 { scans[range] = walk.result(self, shapes, bounds) }
            if next < ranges.count {
                (walk, range) = (RecordWalk(start: ranges[next].lowerBound, end: ranges[next].upperBound, bounds: bounds), next)
                next += 1
            } else {
                (walk, range) = (RecordWalk(start: 0, end: 0, bounds: bounds), -1)
            }
        }
        let high = bounds.high
        RecordShape.walkMinimums.withUnsafeBufferPointer { minimums in
            var walk0 = RecordWalk(start: 0, end: 0, bounds: bounds), walk1 = walk0
            var range0 = -1, range1 = -1
            refill(&walk0, &range0)
            refill(&walk1, &range1)
            while range0 >= 0 || range1 >= 0 {
                let going0 = walk0.step(self, minimums, shapes, highTsc: high)
                let going1 = walk1.step(self, minimums, shapes, highTsc: high)
                if going0 && going1 { continue }
                if !going0 { refill(&walk0, &range0) }
                if !going1 { refill(&walk1, &range1) }
            }
        }
        return scans
    }

    /// `scanChunks` of the first ranges (about half the bytes) on a thread of its own, of the
    /// rest on this one, when the trace is big enough and a second CPU may run it (the policy
    /// of `DecodingThread`): the walks of different chunks are independent, and the results
    /// are the same, in the same order. The flow's 250 MB took 57 ms on one core.
    func scanChunksSideBySide(_ ranges: [Range<Int>], shapes: UnsafeBufferPointer<RecordShape>,
                              bounds: TimeBounds, decodingThread: DecodingThread) -> [ChunkScan] {
        let total = ranges.reduce(0) { $0 + $1.count }
        guard ranges.count >= 2, decodingThread.wanted(eventCount: total / 24) else {
            return scanChunks(ranges, shapes: shapes, bounds: bounds)
        }
        var half = 0, bytesSoFar = 0
        while half < ranges.count - 1 && bytesSoFar < total / 2 {
            bytesSoFar += ranges[half].count
            half += 1
        }
        var first: [ChunkScan] = []
        let firstRanges = Array(ranges[..<half])
        let second: [ChunkScan] = withoutActuallyEscaping({ first = self.scanChunks(firstRanges, shapes: shapes, bounds: bounds) }) { work in
            guard let helper = JoinableThread(work) else {
                work()
                return scanChunks(Array(ranges[half...]), shapes: shapes, bounds: bounds)
            }
            let rest = scanChunks(Array(ranges[half...]), shapes: shapes, bounds: bounds)
            helper.join()
            return rest
        }
        return first + second
    }

    /// Why the valid-looking record at `offset` was dropped: its string, its time, or its order.
    fileprivate func invalidProblem(_ shape: RecordShape, at offset: Int, bounds: TimeBounds) -> String {
        if shape.hasString && stringTooLong(shape, at: offset) {
            return "(\(shape.type.name)) has a \(u32(offset + shape.minLength - 4))-byte string, over the recorder's \(TraceLayout.maxStringLength)"
        }
        let tsc = u64(offset + 8)
        if !bounds.contains(tsc) { return "(\(shape.type.name)) has TSC \(tsc), outside the trace's time range" }
        return "(\(shape.type.name)) has TSC \(tsc), earlier than the record before it"
    }

    /// What the walk makes of a record off its common path.
    fileprivate enum SpecialRecord { case endMarker, damaged, unknown, invalid, known, threadName }

    @inline(never)
    fileprivate func classifySpecial(_ word0: UInt64, _ shape: RecordShape, at offset: Int, length: Int, end: Int) -> SpecialRecord {
        if word0 == 0 { return .endMarker }
        if length < shape.minLength || length & 7 != 0 || length > end &- offset
            || (shape.hasString && !stringFits(shape, at: offset, length: length)) {
            return .damaged
        }
        if !shape.isKnown { return .unknown }
        if shape.hasString && stringTooLong(shape, at: offset) { return .invalid }
        return shape.type == .threadName ? .threadName : .known
    }

    /// A string longer than the recorder ever writes (it truncates at maxStringLength).
    @inline(__always)
    private func stringTooLong(_ shape: RecordShape, at offset: Int) -> Bool {
        Int(u32(offset &+ shape.minLength &- 4)) > TraceLayout.maxStringLength
    }

    /// Whether the string of a record of a string type fits in its `length` bytes (at least
    /// `minLength`, within the chunk).
    @inline(__always)
    private func stringFits(_ shape: RecordShape, at offset: Int, length: Int) -> Bool {
        Int(u32(offset &+ shape.minLength &- 4)) <= length &- shape.minLength
    }

    /// Why the record at `offset` cannot be trusted: framing first, then the payload.
    fileprivate func recordProblem(_ shape: RecordShape, at offset: Int, length: Int, room: Int) -> String {
        if length < TraceLayout.recordHeaderSize { return "has length \(length) < 16" }
        if length % 8 != 0 { return "has length \(length), not a multiple of 8" }
        if length > room { return "of \(length) bytes runs past the chunk end (\(room) bytes left)" }
        if length < shape.minLength {
            return "(\(shape.type.name)) of \(length) bytes is too short for its payload (\(shape.minLength))"
        }
        let stringLength = Int(u32(offset + shape.minLength - 4))
        return "(\(shape.type.name)) has a \(stringLength)-byte string that runs past the record"
    }
}
