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
}

extension TraceBytes {
    /// Walks the records of `start..<end` (the bytes after a chunk header) and stops at the
    /// end marker (a zero word) or at the first record that cannot be trusted.
    func scanRecords(start: Int, end: Int, layouts: [RecordLayout?]) -> ChunkScan {
        var scan = ChunkScan(validEnd: start)
        var offset = start
        while end - offset >= 8 {
            let word0 = u64(offset)
            if word0 == 0 { break }
            let length = Int(truncatingIfNeeded: (word0 >> 16) & 0xFFFF)
            if length < TraceLayout.recordHeaderSize || length & 7 != 0 || length > end - offset {
                scan.problem = "record at byte \(offset - start + TraceLayout.chunkHeaderSize) "
                    + framingProblem(length: length, room: end - offset)
                break
            }
            if let layout = layouts[Int(word0 & 0xFF)] {
                if !payloadFits(layout, at: offset, length: length) {
                    scan.problem = "record at byte \(offset - start + TraceLayout.chunkHeaderSize) "
                        + payloadProblem(layout, at: offset, length: length)
                    break
                }
                let tsc = u64(offset + 8)
                if scan.firstTsc == nil { scan.firstTsc = tsc }
                scan.lastTsc = tsc
                scan.eventCount += 1
                if layout.type == .threadName { scan.lastThreadNameOffset = offset }
            } else {
                scan.unknownCount += 1
            }
            offset += length
        }
        scan.validEnd = offset
        return scan
    }

    @inline(__always)
    private func payloadFits(_ layout: RecordLayout, at offset: Int, length: Int) -> Bool {
        if length < layout.fixedLength { return false }
        return !layout.hasString || Int(u32(offset + layout.fixedLength - 4)) <= length - layout.fixedLength
    }

    private func framingProblem(length: Int, room: Int) -> String {
        if length < TraceLayout.recordHeaderSize { return "has length \(length) < 16" }
        if length % 8 != 0 { return "has length \(length), not a multiple of 8" }
        return "of \(length) bytes runs past the chunk end (\(room) bytes left)"
    }

    private func payloadProblem(_ layout: RecordLayout, at offset: Int, length: Int) -> String {
        if length < layout.fixedLength {
            return "(\(layout.type.name)) of \(length) bytes is too short for its payload (\(layout.fixedLength))"
        }
        let stringLength = Int(u32(offset + layout.fixedLength - 4))
        return "(\(layout.type.name)) has a \(stringLength)-byte string that runs past the record"
    }

    /// Decodes a record already validated by `scanRecords`.
    @inline(__always)
    func decodeEvent(at offset: Int, layout: RecordLayout, tid: Int32, clock: TraceClock) -> Event {
        var event = Event(type: layout.type, time: 0, tid: tid)
        decodeEvent(at: offset, layout: layout, tid: tid, time: clock.time(ofTSC: u64(offset + 8)), into: &event)
        return event
    }

    /// Decodes into an existing event, which the merge loop reuses so that handing events to
    /// the caller copies nothing. `time` is the record's TSC already converted (the merge has
    /// it as the stream's sort key).
    @inline(__always)
    func decodeEvent(at offset: Int, layout: RecordLayout, tid: Int32, time: UInt64, into event: inout Event) {
        let word0 = u64(offset)
        let flags = UInt8(truncatingIfNeeded: word0 >> 8)
        let payload = offset + TraceLayout.recordHeaderSize
        let words = layout.words
        event.type = layout.type
        event.flags = flags
        event.arg = UInt32(truncatingIfNeeded: word0 >> 32)
        event.tid = tid
        event.time = time
        event.a = words > 0 ? u64(payload) : 0
        event.b = words > 1 ? u64(payload + 8) : 0
        event.c = words > 2 ? u64(payload + 16) : 0
        event.d = words > 3 ? u64(payload + 24) : 0
        if layout.hasString {
            let lengthOffset = payload + 8 * words
            event.string = recordString(at: lengthOffset + 4, count: Int(u32(lengthOffset)),
                                        truncated: flags & TraceLayout.stringTruncatedFlag != 0)
        } else if event.string != nil {
            event.string = nil
        }
        if let compact = layout.compact { compact.expand(&event) }
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

/// Length of `bytes` without a trailing, incomplete UTF-8 sequence.
func completeUTF8PrefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
    var lead = bytes.count - 1
    while lead >= 0, bytes.count - lead < 4, bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
    guard lead >= 0 else { return bytes.count }
    let byte = bytes[lead]
    let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
    return bytes.count - lead < needed ? lead : bytes.count
}
