// Structure-aware mutations (docs/fuzzing.md): rewrite fields of records that stay well framed,
// so that inputs get past the reader's framing checks and reach the validation boundary, the
// model and the renderers. Byte-level mutation (libFuzzer's own) mostly breaks the framing and
// tests the first, cheapest checks only.
import QTraceFormat

/// Values at the edges that overflow arithmetic, and near-misses of the current value.
func interestingValue(near old: UInt64, _ rng: inout SplitMix64) -> UInt64 {
    let edges: [UInt64] = [0, 1, 2, 0x7F, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 1 << 32, 1 << 50,
                           1 << 52, 1 << 53, 1 << 62, 0x7FFF_FFFF_FFFF_FFFF, 1 << 63, .max, .max - 1]
    switch rng.below(6) {
    case 0, 1: return edges[rng.below(edges.count)]
    case 2: return old &+ UInt64(rng.below(1000)) &- 500
    case 3: return old &+ (1 << UInt64(rng.below(64)))
    case 4: return old &* 2
    default: return rng.next()
    }
}

public enum StructuredMutator {
    /// Mutates `data` in place for `target`, keeping it within `maxSize` bytes. Returns false
    /// when the input has no structure to work on: the caller then mutates bytes.
    public static func mutate(_ target: FuzzTarget, _ data: inout [UInt8], maxSize: Int, seed: UInt32) -> Bool {
        // libFuzzer gives each mutation a seed (SplitMix64, QTraceFormat): a crash is reproduced from its input.
        var rng = SplitMix64(seed: UInt64(seed) &* 0x2545_F491_4F6C_DD1D)
        switch target {
        case .embedded:
            var mutator = EmbeddedTraceMutator(bytes: data)
            guard mutator.mutate(&rng) else { return false }
            data = mutator.bytes
        case .ctf:
            guard var input = CTFInput(data) else { return false }
            let file = rng.below(1 + input.streams.count)
            if file == 0 {
                input.metadata = TextMutator.mutate(input.metadata, &rng)
            } else {
                BinaryMutator.mutate(&input.streams[file - 1], &rng)
            }
            data = input.packed
        case .perf:
            data = TextMutator.mutate(data, &rng)
        }
        if data.count > maxSize { data.removeLast(data.count - maxSize) }
        return true
    }
}

/// Rewrites the embedded format's fields: header, chunk headers, and records found by walking
/// each chunk's framing (time, payload words, arg, flags, type, string lengths; a record
/// duplicated, deleted or moved). Sizes never change: chunks keep their place.
struct EmbeddedTraceMutator {
    var bytes: [UInt8]

    /// Header fields the analysis computes with: (offset, width).
    static let headerFields = [(20, 4), (40, 8), (48, 8), (56, 8), (64, 8), (72, 8), (80, 8), (88, 8), (96, 8),
                               (112, 8), (120, 8), (128, 8), (136, 8), (144, 8), (152, 8), (160, 8)]
    /// Chunk header fields: thread_seq, tid, calibration pair.
    static let chunkFields = [(4, 4), (8, 8), (16, 8), (24, 8)]
    static let knownTypes: [UInt8] = (0...255).map(UInt8.init).filter { EventType(rawValue: $0) != nil } + [120, 121, 122, 123]

    struct Record { let chunkEnd: Int; let offset: Int; let length: Int }

    mutating func mutate(_ rng: inout SplitMix64) -> Bool {
        guard bytes.count >= 4096 + 64 else { return false }
        let headerSize = Int(read(12, 4)), chunkSize = Int(read(16, 4))
        guard headerSize >= 4096, headerSize <= bytes.count, chunkSize >= 4096, chunkSize % 4096 == 0 else { return false }
        let chunks = stride(from: headerSize, to: bytes.count - 64, by: chunkSize).map { ($0, Swift.min($0 + chunkSize, bytes.count)) }
        let records = chunks.flatMap { self.records(start: $0.0 + 64, end: $0.1) }
        let choice = rng.below(records.isEmpty ? 2 : 14)
        if choice == 0 {
            let (offset, width) = Self.headerFields[rng.below(Self.headerFields.count)]
            write(offset, width, interestingValue(near: read(offset, width), &rng))
            return true
        }
        if choice == 1 {
            guard let chunk = chunks.randomElement(using: &rng) else { return false }
            let (field, width) = Self.chunkFields[rng.below(Self.chunkFields.count)]
            write(chunk.0 + field, width, interestingValue(near: read(chunk.0 + field, width), &rng))
            return true
        }
        let record = records[rng.below(records.count)]
        mutateRecord(record, choice: choice, records: records, &rng)
        return true
    }

    private mutating func mutateRecord(_ r: Record, choice: Int, records: [Record], _ rng: inout SplitMix64) {
        let payloadWords = (r.length - 16) / 8
        switch choice {
        case 2, 3:   // time: an edge, or a neighbour's (equal times, reordering)
            let other = records[rng.below(records.count)]
            write(r.offset + 8, 8, rng.below(2) == 0 ? read(other.offset + 8, 8) : interestingValue(near: read(r.offset + 8, 8), &rng))
        case 4...6 where payloadWords > 0:   // a payload word: an edge, or another record's (ids that link)
            let word = r.offset + 16 + 8 * rng.below(payloadWords)
            let other = records[rng.below(records.count)]
            let spliced = other.length > 16 ? read(other.offset + 16 + 8 * rng.below((other.length - 16) / 8), 8) : 0
            write(word, 8, rng.below(2) == 0 ? spliced : interestingValue(near: read(word, 8), &rng))
        case 7:   // arg (ids of compact records, kinds, outcomes)
            write(r.offset + 4, 4, interestingValue(near: read(r.offset + 4, 4), &rng))
        case 8:   // flags8
            bytes[r.offset + 1] = UInt8(truncatingIfNeeded: rng.next())
        case 9:   // type, keeping the length: another layout read from the same bytes
            bytes[r.offset] = Self.knownTypes[rng.below(Self.knownTypes.count)]
        case 10 where payloadWords > 0:   // a string's length field (u32 at the start of a word)
            write(r.offset + 16 + 8 * rng.below(payloadWords) + 4 * rng.below(2), 4,
                  interestingValue(near: UInt64(r.length), &rng))
        case 11 where r.chunkEnd - (r.offset + r.length) >= r.length:   // duplicate: right after itself (the tail moves)
            let tail = r.offset + r.length
            let moved = Array(bytes[tail..<(r.chunkEnd - r.length)])
            bytes.replaceSubrange((tail + r.length)..<r.chunkEnd, with: moved)
            bytes.replaceSubrange(tail..<(tail + r.length), with: Array(bytes[r.offset..<tail]))
        case 12:  // delete
            let tail = r.offset + r.length
            bytes.replaceSubrange(r.offset..<(r.chunkEnd - r.length), with: Array(bytes[tail..<r.chunkEnd]))
            for index in (r.chunkEnd - r.length)..<r.chunkEnd { bytes[index] = 0 }
        default:  // swap with another record of the same length (another thread's, another time)
            guard let other = records.filter({ $0.length == r.length && $0.offset != r.offset }).randomElement(using: &rng) else {
                write(r.offset + 8, 8, rng.next())
                return
            }
            let mine = Array(bytes[r.offset..<(r.offset + r.length)])
            bytes.replaceSubrange(r.offset..<(r.offset + r.length), with: bytes[other.offset..<(other.offset + r.length)])
            bytes.replaceSubrange(other.offset..<(other.offset + r.length), with: mine)
        }
    }

    /// The well-framed records of a chunk, up to its end marker or first damage.
    private func records(start: Int, end: Int) -> [Record] {
        var out: [Record] = []
        var offset = start
        while end - offset >= 16 {
            let word0 = read(offset, 8)
            let length = Int((word0 >> 16) & 0xFFFF)
            if word0 == 0 || length < 16 || length % 8 != 0 || length > end - offset { break }
            out.append(Record(chunkEnd: end, offset: offset, length: length))
            offset += length
        }
        return out
    }

    private func read(_ offset: Int, _ width: Int) -> UInt64 {
        (0..<width).reversed().reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    private mutating func write(_ offset: Int, _ width: Int, _ value: UInt64) {
        for k in 0..<width { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
    }
}

/// Line-oriented text (perf script output, TSDL metadata): numbers replaced by edges, lines
/// duplicated, dropped, swapped or cut.
enum TextMutator {
    static let numbers = ["0", "1", "-1", "2147483647", "2147483648", "4294967296", "9223372036854775807",
                          "9223372036854775808", "18446744073709551615", "18446744073709551616", "99999999999999999999999",
                          "0.000000001", "4294967295.999999999", "1e309"]

    static func mutate(_ text: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        guard !lines.isEmpty else { return Array(numbers[rng.below(numbers.count)].utf8) }
        let index = rng.below(lines.count)
        switch rng.below(6) {
        case 0: lines.insert(lines[index], at: rng.below(lines.count + 1))
        case 1: lines.remove(at: index)
        case 2: lines.swapAt(index, rng.below(lines.count))
        case 3: lines[index] = Array(lines[index].prefix(rng.below(lines[index].count + 1)))
        default: lines[index] = replaceNumber(in: lines[index], &rng)
        }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }

    /// One run of digits in `line` replaced by an edge value.
    static func replaceNumber(in line: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
        let starts = line.indices.filter { isDigit(line[$0]) && ($0 == 0 || !isDigit(line[$0 - 1])) }
        guard let start = starts.randomElement(using: &rng) else { return line + Array(numbers[rng.below(numbers.count)].utf8) }
        var end = start
        while end < line.count && isDigit(line[end]) { end += 1 }
        return Array(line[..<start]) + Array(numbers[rng.below(numbers.count)].utf8) + Array(line[end...])
    }
}

/// Binary data without a known layout here (CTF packets): aligned words set to edge values.
enum BinaryMutator {
    static func mutate(_ bytes: inout [UInt8], _ rng: inout SplitMix64) {
        guard !bytes.isEmpty else { bytes = [UInt8(truncatingIfNeeded: rng.next())]; return }
        let width = [1, 2, 4, 8][rng.below(4)]
        guard bytes.count >= width else { bytes[0] = UInt8(truncatingIfNeeded: rng.next()); return }
        let offset = rng.below((bytes.count - width) / width + 1) * width
        let old = (0..<width).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
        let value = interestingValue(near: old, &rng)
        for k in 0..<width { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
    }
}
