// Record-level decoding: the structural check that bounds a chunk's valid records, and the
// hot per-event decode that trusts those bounds.

/// A run of validated records: every record in `start..<end` is well framed and, if of a
/// known type, long enough for its payload and string.
struct RecordSpan {
    var start: Int
    var end: Int
}

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

/// How the hot paths read a raw record type: one table entry per type byte, so that the
/// validation scan and the merge need a single lookup and no optional unwrapping per record.
struct RecordShape {
    /// The payload layout, as one switch of the decoder.
    enum Decode: UInt8 {
        case unknown
        case words0, words1, words2, words3, words4
        case string0, string1, string2, string3, string4
        case compactEnqueue, compactStart, compactEnd, compactSiteEnqueue
        /// Slot-less function items: decoded half-way, then rewritten by `SlotlessPairing`.
        case slotlessEnqueue, slotlessStart, slotlessEnd
        /// Zero to three words, then the optional site word when the record holds it.
        case words0Site, words1Site, words2Site, words3Site
    }

    let decode: Decode
    /// The decoded event's type (unused for unknown types).
    let type: EventType
    /// The smallest valid length: the record header and payload words, plus the string's
    /// length field. 16 (a bare header) for unknown types, which are only framed.
    let minLength: Int
    /// A type this reader decodes (others are skipped).
    let isKnown: Bool
    let hasString: Bool
    /// Unknown, or with a string: the validation scan's slow path.
    let isSpecial: Bool
    /// A slot-less function item record: its event goes through `SlotlessPairing`.
    let needsPairing: Bool

    private init(decode: Decode, type: EventType, minLength: Int) {
        self.decode = decode; self.type = type; self.minLength = minLength
        isKnown = decode != .unknown
        hasString = decode.rawValue >= Decode.string0.rawValue && decode.rawValue <= Decode.string4.rawValue
        isSpecial = !isKnown || hasString
        needsPairing = decode == .slotlessEnqueue || decode == .slotlessStart || decode == .slotlessEnd
    }

    private init(_ layout: RecordLayout?) {
        guard let layout else {
            self.init(decode: .unknown, type: .threadStart, minLength: TraceLayout.recordHeaderSize)
            return
        }
        let decode: Decode
        switch (layout.compact, layout.hasString) {
        case (.enqueue?, _): decode = .compactEnqueue
        case (.start?, _): decode = .compactStart
        case (.end?, _): decode = .compactEnd
        case (.siteEnqueue?, _): decode = .compactSiteEnqueue
        case (.slotlessEnqueue?, _): decode = .slotlessEnqueue
        case (.slotlessStart?, _): decode = .slotlessStart
        case (.slotlessEnd?, _): decode = .slotlessEnd
        // The record list allows any layout an Event holds (at most four words a...d, the site
        // word included; no site word beside a string): each has its case.
        case (nil, false) where layout.hasOptionalSite: decode = Decode(rawValue: Decode.words0Site.rawValue + UInt8(layout.words))!
        case (nil, false): decode = Decode(rawValue: Decode.words0.rawValue + UInt8(layout.words))!
        case (nil, true): decode = Decode(rawValue: Decode.string0.rawValue + UInt8(layout.words))!
        }
        self.init(decode: decode, type: layout.type, minLength: layout.fixedLength)
    }

    /// Shapes indexed by the raw type byte (from `RecordLayout.table`).
    static let table: [RecordShape] = RecordLayout.table.map(RecordShape.init)
}

extension TraceBytes {
    /// Walks the records of `start..<end` (the bytes after a chunk header) and stops at the
    /// end marker (a zero word) or at the first record that cannot be trusted.
    /// Records of known types must also lie within `bounds` and not before the previous one.
    func scanRecords(start: Int, end: Int, shapes: UnsafeBufferPointer<RecordShape>,
                     bounds: TimeBounds = .unbounded) -> ChunkScan {
        let base = self.base
        var offset = start
        var known = 0, unknown = 0
        var lastKnown = -1, lastThreadName = -1
        var damaged = false
        var previousTsc: UInt64 = 0
        var invalid: [Int] = []
        // Bounds: offset stays within start...end (each step adds a length checked against
        // end - offset), so the arithmetic below cannot overflow.
        scanning: while end &- offset >= 8 {
            let word0 = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if word0 == 0 { break }
            let length = Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
            let shape = shapes[Int(word0 & 0xFF)]
            var isThreadName = false
            if length < shape.minLength || length & 7 != 0 || length > end &- offset || shape.isSpecial {
                // Damage, strings and unknown types: classified out of line, so that the
                // common case keeps its few values in registers.
                switch classifySpecial(shape, at: offset, length: length, end: end) {
                case .damaged:
                    damaged = true
                    break scanning
                case .unknown:
                    unknown &+= 1
                    offset &+= length
                    continue scanning
                case .invalid:
                    invalid.append(offset)
                    offset &+= length
                    continue scanning
                case .threadName:
                    isThreadName = true
                case .known:
                    break
                }
            }
            // Known records carry a TSC at +8 (length >= 16): in range, and never going back.
            let tsc = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self))
            if tsc < previousTsc || !bounds.contains(tsc) {
                invalid.append(offset)
                offset &+= length
                continue scanning
            }
            previousTsc = tsc
            if isThreadName { lastThreadName = offset }
            lastKnown = offset
            known &+= 1
            offset &+= length
        }
        var scan = ChunkScan(validEnd: offset)
        if damaged {
            // The record at `offset` is the one that stopped the scan: say what is wrong.
            let word0 = u64(offset)
            let length = Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
            scan.problem = "record at byte \(offset - start + TraceLayout.chunkHeaderSize) "
                + recordProblem(shapes[Int(word0 & 0xFF)], at: offset, length: length, room: end - offset)
        }
        scan.eventCount = known
        scan.unknownCount = unknown
        if lastKnown >= 0 {
            // The first valid known record: found again here rather than tracked per record.
            var first = start, skipped = 0
            while !shapes[Int(u64(first) & 0xFF)].isKnown || (skipped < invalid.count && invalid[skipped] == first) {
                if skipped < invalid.count && invalid[skipped] == first { skipped += 1 }
                first += Int(truncatingIfNeeded: (u64(first) >> 16) & 0xFFFF)
            }
            scan.firstTsc = u64(first + 8)
            scan.lastTsc = u64(lastKnown + 8)
        }
        if lastThreadName >= 0 { scan.lastThreadNameOffset = lastThreadName }
        if let firstInvalid = invalid.first {
            scan.invalidProblem = "record at byte \(firstInvalid - start + TraceLayout.chunkHeaderSize) "
                + invalidProblem(shapes[Int(u64(firstInvalid) & 0xFF)], at: firstInvalid, bounds: bounds)
            scan.invalidOffsets = invalid
        }
        return scan
    }

    /// Why the valid-looking record at `offset` was dropped: its string, its time, or its order.
    private func invalidProblem(_ shape: RecordShape, at offset: Int, bounds: TimeBounds) -> String {
        if shape.hasString && stringTooLong(shape, at: offset) {
            return "(\(shape.type.name)) has a \(u32(offset + shape.minLength - 4))-byte string, over the recorder's \(TraceLayout.maxStringLength)"
        }
        let tsc = u64(offset + 8)
        if !bounds.contains(tsc) { return "(\(shape.type.name)) has TSC \(tsc), outside the trace's time range" }
        return "(\(shape.type.name)) has TSC \(tsc), earlier than the record before it"
    }

    /// What the scan makes of a record off its common path.
    enum SpecialRecord { case damaged, unknown, invalid, known, threadName }

    @inline(never)
    private func classifySpecial(_ shape: RecordShape, at offset: Int, length: Int, end: Int) -> SpecialRecord {
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
    private func recordProblem(_ shape: RecordShape, at offset: Int, length: Int, room: Int) -> String {
        if length < TraceLayout.recordHeaderSize { return "has length \(length) < 16" }
        if length % 8 != 0 { return "has length \(length), not a multiple of 8" }
        if length > room { return "of \(length) bytes runs past the chunk end (\(room) bytes left)" }
        if length < shape.minLength {
            return "(\(shape.type.name)) of \(length) bytes is too short for its payload (\(shape.minLength))"
        }
        let stringLength = Int(u32(offset + shape.minLength - 4))
        return "(\(shape.type.name)) has a \(stringLength)-byte string that runs past the record"
    }

    /// Decodes a validated record of a known type into an existing event, which the merge
    /// loop reuses so that handing events to the caller copies nothing. `time` is the
    /// record's TSC already converted (the merge has it as the stream's sort key). Every
    /// field is written: payload words the type does not use become 0, and the compact item
    /// records take their full forms (docs/trace-format.md, "Compact work item records").
    @inline(__always)
    func decodeEvent(at offset: Int, word0: UInt64, shape: RecordShape, tid: Int32, time: UInt64, into event: inout Event) {
        let payload = offset &+ TraceLayout.recordHeaderSize
        let flags = UInt8(truncatingIfNeeded: word0 >> 8)
        // Written field by field straight into the event (the compact forms then overwrite
        // some): building the values apart first made the compiler spill and copy them.
        event.type = shape.type
        event.flags = flags
        event.arg = UInt32(truncatingIfNeeded: word0 >> 32)
        event.tid = tid
        event.time = time
        event.a = 0
        event.b = 0
        event.c = 0
        event.d = 0
        var stringWords = -1
        switch shape.decode {
        case .words0, .unknown: break
        case .words1: event.a = u64(payload)
        case .words2: event.a = u64(payload); event.b = u64(payload &+ 8)
        case .words3: event.a = u64(payload); event.b = u64(payload &+ 8); event.c = u64(payload &+ 16)
        case .words4:
            event.a = u64(payload); event.b = u64(payload &+ 8); event.c = u64(payload &+ 16); event.d = u64(payload &+ 24)
        case .string0: stringWords = 0
        case .string1: event.a = u64(payload); stringWords = 1
        case .string2: event.a = u64(payload); event.b = u64(payload &+ 8); stringWords = 2
        case .string3: event.a = u64(payload); event.b = u64(payload &+ 8); event.c = u64(payload &+ 16); stringWords = 3
        case .string4:
            event.a = u64(payload); event.b = u64(payload &+ 8); event.c = u64(payload &+ 16); event.d = u64(payload &+ 24)
            stringWords = 4
        case .compactEnqueue:
            // The 32-bit id is the arg; the payload word is the queue with the kind on top.
            let word = u64(payload)
            event.a = word0 >> 32
            event.b = word & 0x00FF_FFFF_FFFF_FFFF
            event.arg = UInt32(truncatingIfNeeded: word >> 56)
        case .words0Site:
            if (word0 >> 16) & 0xFFFF >= 24 { event.a = u64(payload) }
        case .words1Site:
            event.a = u64(payload)
            if (word0 >> 16) & 0xFFFF >= 32 { event.b = u64(payload &+ 8) }
        case .words2Site:
            event.a = u64(payload); event.b = u64(payload &+ 8)
            if (word0 >> 16) & 0xFFFF >= 40 { event.c = u64(payload &+ 16) }
        case .words3Site:
            event.a = u64(payload); event.b = u64(payload &+ 8); event.c = u64(payload &+ 16)
            if (word0 >> 16) & 0xFFFF >= 48 { event.d = u64(payload &+ 24) }
        case .compactSiteEnqueue:
            // queue bits 0..47, kind bits 48..51, site bits 52..63 (in `d`, as the full form's).
            let word = u64(payload)
            event.a = word0 >> 32
            event.b = word & 0x0000_FFFF_FFFF_FFFF
            event.arg = UInt32(truncatingIfNeeded: (word >> 48) & 0xF)
            event.d = word >> 52
        case .compactStart:
            event.a = word0 >> 32
            event.arg = UInt32(flags)
            event.flags = 0
        case .compactEnd:
            event.a = word0 >> 32
            event.arg = 0
        case .slotlessEnqueue:
            // As ENQUEUE_CS, plus the context in `c`; the stub (flags8) goes above the kind in
            // `arg` until SlotlessPairing.rewrite, and the flags are a function's.
            let word = u64(payload)
            let kind = UInt32(truncatingIfNeeded: (word >> 48) & 0xF)
            event.a = word0 >> 32
            event.b = word & 0x0000_FFFF_FFFF_FFFF
            event.c = u64(payload &+ 8)
            event.d = word >> 52
            event.arg = kind | UInt32(flags) << SlotlessPairing.stubShift
            event.flags = kind == ItemKind.barrierAsync.rawValue ? SlotlessPairing.barrierFlags : SlotlessPairing.functionFlags
        case .slotlessStart:
            // The stub in `arg`, the context and the queue in `b` and `c`, until
            // SlotlessPairing.rewrite: word = context (bits 0..47) | queue bits 32..47 << 48.
            let key = SlotlessPairing.startKey(word0: word0, word: u64(payload))
            event.arg = key.stub
            event.b = key.context
            event.c = key.queue
            event.flags = 0
        case .slotlessEnd:
            event.arg = UInt32(flags)  // the stub, until SlotlessPairing.rewrite
            event.flags = 0
        }
        if stringWords >= 0 {
            let lengthOffset = payload &+ 8 &* stringWords
            event.string = recordString(at: lengthOffset &+ 4, count: Int(u32(lengthOffset)),
                                        truncated: flags & TraceLayout.stringTruncatedFlag != 0)
        } else if event.string != nil {
            event.string = nil
        }
    }

    /// Decodes string bytes, replacing invalid UTF-8. A string the recorder truncated may end
    /// inside a multi-byte character: that partial character is dropped rather than shown
    /// as a replacement character.
    func recordString(at offset: Int, count: Int, truncated: Bool) -> String {
        let bytes = UnsafeRawBufferPointer(start: base + offset, count: count)
        let kept = truncated ? completeUTF8PrefixLength(bytes) : count
        return String(decoding: bytes[..<kept], as: UTF8.self)
    }
}

/// Length of `bytes` without a trailing, incomplete UTF-8 sequence. Public so that the CTF
/// reader drops a truncated string's partial character exactly as the embedded reader does.
public func completeUTF8PrefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
    var lead = bytes.count - 1
    while lead >= 0, bytes.count - lead < 4, bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
    guard lead >= 0 else { return bytes.count }
    let byte = bytes[lead]
    let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
    return bytes.count - lead < needed ? lead : bytes.count
}
