// A queue's label without a heap string of its own when it is short: at 900k queues labelled
// like "com.example.q123456" (19 bytes, past Swift's 15-byte small strings) every label was a
// 64-byte allocation, 57.6 MB of a `stats` peak of 440.

/// A queue's label: up to 23 UTF-8 bytes kept inline (in 24 bytes, the size of the String
/// plus the padding it replaces in `TraceQueue`), a longer one (or one holding a NUL byte) as
/// the String it is. Compared as Strings compare; all-ASCII labels by their bytes, which is
/// the same order without making a String.
public struct QueueLabel: Sendable, Comparable, CustomStringConvertible {
    /// The inline bytes, NUL-padded (23 = 8 + 8 + 4 + 2 + 1: one byte left for the case tag).
    private typealias InlineBytes = (UInt64, UInt64, UInt32, UInt16, UInt8)
    private enum Storage: Sendable {
        case inline(InlineBytes)
        case long(String)
    }
    private static let inlineCapacity = 23
    private var storage: Storage

    public init(_ string: String) {
        var string = string
        storage = string.withUTF8 { utf8 in
            guard utf8.count <= Self.inlineCapacity, !utf8.contains(0) else { return nil }
            var bytes: InlineBytes = (0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(utf8)) }
            return .inline(bytes)
        } ?? .long(string)
    }

    /// The label as a String (a new one for an inline label over 15 bytes: compare labels as
    /// `QueueLabel`s, not through this, where that matters).
    public var string: String {
        switch storage {
        case .long(let string): return string
        case .inline: return withUTF8 { String(decoding: $0, as: UTF8.self) }
        }
    }

    public var description: String { string }

    public var isEmpty: Bool {
        if case .inline(let bytes) = storage { return bytes.0 == 0 }
        return false
    }

    /// Whether every byte is ASCII (then byte order and equality are String's).
    public var isASCII: Bool {
        switch storage {
        case .inline(let b):
            return (b.0 | b.1 | UInt64(b.2) | UInt64(b.3) | UInt64(b.4)) & 0x8080_8080_8080_8080 == 0
        case .long:
            return withUTF8 { $0.allSatisfy { $0 < 0x80 } }
        }
    }

    /// Calls `body` with the label's UTF-8 bytes, without copying them.
    public func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch storage {
        case .inline(var bytes):
            return try withUnsafeBytes(of: &bytes) { raw in
                let count = raw.lastIndex { $0 != 0 }.map { $0 + 1 } ?? 0
                return try body(UnsafeRawBufferPointer(rebasing: raw[..<count]))
            }
        case .long(var string):
            return try string.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
    }

    public static func == (a: QueueLabel, b: QueueLabel) -> Bool {
        if case .inline(let x) = a.storage, case .inline(let y) = b.storage, a.isASCII, b.isASCII {
            return x.0 == y.0 && x.1 == y.1 && x.2 == y.2 && x.3 == y.3 && x.4 == y.4
        }
        return compare(a, b) == 0
    }

    public static func < (a: QueueLabel, b: QueueLabel) -> Bool {
        if case .inline(let x) = a.storage, case .inline(let y) = b.storage, a.isASCII, b.isASCII {
            // Byte order of NUL-padded bytes: the words read big-endian (the first byte highest).
            if x.0 != y.0 { return x.0.bigEndian < y.0.bigEndian }
            if x.1 != y.1 { return x.1.bigEndian < y.1.bigEndian }
            if x.2 != y.2 { return x.2.bigEndian < y.2.bigEndian }
            if x.3 != y.3 { return x.3.bigEndian < y.3.bigEndian }
            return x.4 < y.4
        }
        return compare(a, b) < 0
    }

    /// -1, 0 or 1 as String comparison orders `a` and `b`: by bytes when both are ASCII, else
    /// by the Strings (Unicode canonical equivalence).
    private static func compare(_ a: QueueLabel, _ b: QueueLabel) -> Int {
        let byBytes: Int? = a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.allSatisfy({ $0 < 0x80 }), y.allSatisfy({ $0 < 0x80 }) else { return nil }
                for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
                return x.count == y.count ? 0 : x.count < y.count ? -1 : 1
            }
        }
        if let byBytes { return byBytes }
        let (x, y) = (a.string, b.string)
        return x == y ? 0 : x < y ? -1 : 1
    }

    /// A hash of the bytes (equal labels hash equal when both are ASCII; callers hashing
    /// non-ASCII labels must compare Strings instead).
    var asciiHash: Int {
        withUTF8 { bytes in
            var hasher = Hasher()
            hasher.combine(bytes: bytes)
            return hasher.finalize()
        }
    }
}
