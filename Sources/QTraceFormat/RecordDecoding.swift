// Record-level decoding: the shape of each record type, and the hot per-event decode that
// trusts the bounds the validation walk (RecordScan.swift) found.

/// A run of validated records: every record in `start..<end` is well framed and, if of a
/// known type, long enough for its payload and string.
struct RecordSpan {
    var start: Int
    var end: Int
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
    /// A slot-less function item record: its event goes through `SlotlessPairing`.
    let needsPairing: Bool

    private init(decode: Decode, type: EventType, minLength: Int) {
        self.decode = decode; self.type = type; self.minLength = minLength
        isKnown = decode != .unknown
        hasString = decode.rawValue >= Decode.string0.rawValue && decode.rawValue <= Decode.string4.rawValue
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

    /// The validation walk's one check of a record's type, indexed by the raw type byte: the
    /// shortest length of its common path, where a record is known, has no string and is at
    /// least `minLength` long. Unknown types and strings get 2^16, above every length, so
    /// that they take the slow path (a zero word, the end marker, too: length 0).
    static let walkMinimums: [UInt32] = table.map { $0.isKnown && !$0.hasString ? UInt32($0.minLength) : 1 << 16 }
}

extension TraceBytes {
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
