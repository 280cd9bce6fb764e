// The CTF 1.8 metadata model the purpose-built decoder works from (FastCTFReader): the
// trace's byte order and uuid, its clocks, stream classes and event classes with their field
// types, as parsed from the TSDL text by `TSDLParser`.
import Foundation

enum CTFByteOrder: Equatable {
    case little, big
    /// The trace's own byte order (resolved when the decoding plans are built).
    case native
}

struct CTFIntegerType: Equatable {
    var size: Int
    var align: Int
    var signed = false
    var byteOrder = CTFByteOrder.native
    /// Whether an 8-bit integer is text (arrays and sequences of them are strings).
    var isText = false
    /// The clock whose value this integer sets (`map = clock.NAME.value`).
    var clock: String?
}

struct CTFEnumMapping: Equatable {
    var label: String
    var low: Int64
    var high: Int64
}

struct CTFField: Equatable {
    /// As written in the metadata (LTTng prefixes payload names with `_`).
    var rawName: String
    var type: CTFType
    /// The name babeltrace2 shows: one leading underscore removed (CTF 1.8's rule).
    var name: String { rawName.hasPrefix("_") ? String(rawName.dropFirst()) : rawName }
}

indirect enum CTFType: Equatable {
    case integer(CTFIntegerType)
    case enumeration(CTFIntegerType, [CTFEnumMapping])
    case floatingPoint(size: Int, align: Int, byteOrder: CTFByteOrder)
    case string
    case structure([CTFField], minAlign: Int)
    /// Selected by the enumeration field `tag` (a name or dotted path) met earlier.
    case variant(tag: String, [CTFField])
    case array(CTFType, length: Int)
    /// Its length is the integer field `length` (a name or dotted path) met earlier.
    case sequence(CTFType, length: String)

    /// Alignment in bits.
    var alignment: Int {
        switch self {
        case .integer(let t), .enumeration(let t, _): t.align
        case .floatingPoint(_, let align, _): align
        case .string: 8
        case .structure(let fields, let minAlign): fields.reduce(max(minAlign, 1)) { max($0, $1.type.alignment) }
        case .variant: 1
        case .array(let element, _), .sequence(let element, _): element.alignment
        }
    }
}

struct CTFClock: Equatable {
    var name: String
    var frequency: UInt64 = 1_000_000_000
    var offsetSeconds: Int64 = 0
    var offsetCycles: UInt64 = 0
}

struct CTFStreamClass {
    var id: UInt64
    var packetContext: CTFType?
    var eventHeader: CTFType?
    var eventContext: CTFType?
}

struct CTFEventClass {
    var id: UInt64
    var streamID: UInt64
    var name: String
    var context: CTFType?
    var payload: CTFType?
}

struct CTFMetadata {
    var byteOrder = CTFByteOrder.little
    var uuid: [UInt8]?
    var packetHeader: CTFType?
    var clocks: [String: CTFClock] = [:]
    var environment: [String: String] = [:]
    /// Integer environment entries (babeltrace2 keeps these as integers: `vpid`).
    var integerEnvironment: [String: Int64] = [:]
    var streams: [UInt64: CTFStreamClass] = [:]
    var events: [CTFEventClass] = []
}

// MARK: The metadata file

/// Reads a trace's `metadata` file: plain TSDL text, or LTTng's packetized form (packets
/// with magic 0x75D11D57 whose contents, concatenated, are the text).
enum CTFMetadataFile {
    static let packetMagic: UInt32 = 0x75D1_1D57
    /// magic, uuid[16], checksum, content_size, packet_size, then five one-byte fields.
    static let packetHeaderBytes = 37

    static func text(ofDirectory directory: String) throws -> String {
        let path = directory + "/metadata"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CTFReadError.corrupt("\(path): cannot read the metadata file")
        }
        return try text(of: data, path: path)
    }

    static func text(of data: Data, path: String) throws -> String {
        guard data.count >= 4 else {
            return String(decoding: data, as: UTF8.self)
        }
        let first = data.prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let bigEndian: Bool
        if first == packetMagic { bigEndian = false } else if first.byteSwapped == packetMagic { bigEndian = true } else {
            return String(decoding: data, as: UTF8.self)
        }
        var text = Data()
        var offset = 0
        while offset < data.count {
            guard data.count - offset >= packetHeaderBytes else {
                throw CTFReadError.corrupt("\(path): truncated metadata packet header at byte \(offset)")
            }
            func word(_ at: Int) -> UInt32 {
                let raw = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) }
                return bigEndian ? raw.byteSwapped : raw
            }
            guard word(offset) == packetMagic else {
                throw CTFReadError.corrupt("\(path): bad metadata packet magic at byte \(offset)")
            }
            let contentBits = Int(word(offset + 24)), packetBits = Int(word(offset + 28))
            guard contentBits % 8 == 0, packetBits % 8 == 0, contentBits >= packetHeaderBytes * 8, packetBits >= contentBits,
                  data.count - offset >= contentBits / 8 else {
                throw CTFReadError.corrupt("\(path): bad metadata packet sizes at byte \(offset)")
            }
            guard data[data.startIndex + offset + 32] == 0 && data[data.startIndex + offset + 33] == 0 else {
                throw CTFUnsupported("\(path): compressed or encrypted metadata")
            }
            text.append(data[(data.startIndex + offset + packetHeaderBytes)..<(data.startIndex + offset + contentBits / 8)])
            offset += max(packetBits / 8, packetHeaderBytes)
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// A construct the purpose-built decoder does not handle: the reader falls back to
/// libbabeltrace2 for the whole trace.
struct CTFUnsupported: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
