// A gzip-compressed CSV file written row by row (zlib deflate with a gzip wrapper) through
// QTraceFormat's OutputFile, like every file qtrace writes: a reader never sees half a table.
import CZlib
import QTraceFormat

public struct TableWriteError: Error, CustomStringConvertible {
    public var description: String
}

/// One value of a CSV row: text is quoted when it must be; nil is an empty field (NULL).
public enum CSVValue {
    case text(String)
    case int(Int64)
    case none

    static func ns(_ v: UInt64?) -> CSVValue { v.map { .int(Int64(clamping: $0)) } ?? .none }
    static func number(_ v: Int?) -> CSVValue { v.map { .int(Int64($0)) } ?? .none }
}

final class GzipCSVFile {
    let path: String
    /// The file qtrace writes everything through: a temporary beside `path`, renamed into
    /// place by `finish` (a symlink there is replaced, not followed; a failure leaves no file).
    private let file: OutputFile
    private var stream = z_stream()
    private var buffer: [UInt8] = []
    private var compressed = [UInt8](repeating: 0, count: 1 << 16)

    /// Opens `path`'s temporary and writes the header row.
    init(path: String, columns: [String]) throws {
        self.path = path
        do { file = try OutputFile(path: path) } catch { throw TableWriteError(description: "\(error)") }
        // windowBits 15 + 16: deflate with a gzip wrapper (zlib's own otherwise).
        let status = deflateInit2_(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw TableWriteError(description: "cannot start a gzip stream for '\(path)' (zlib \(status))") }
        try write(columns.map { .text($0) })
    }

    deinit { deflateEnd(&stream) }  // an unfinished file is discarded by OutputFile

    func write(_ row: [CSVValue]) throws {
        for (i, value) in row.enumerated() {
            if i > 0 { buffer.append(UInt8(ascii: ",")) }
            switch value {
            case .none: break
            case .int(let v): buffer.append(contentsOf: String(v).utf8)
            case .text(let s): appendQuoted(s)
            }
        }
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 16 { try deflateBuffer(finishing: false) }
    }

    /// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
    private func appendQuoted(_ s: String) {
        let utf8 = s.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }) else {
            buffer.append(contentsOf: utf8)
            return
        }
        buffer.append(UInt8(ascii: "\""))
        for byte in utf8 {
            if byte == UInt8(ascii: "\"") { buffer.append(byte) }
            buffer.append(byte)
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Deflates what is buffered into the file (and, finishing, the gzip trailer).
    private func deflateBuffer(finishing: Bool) throws {
        try buffer.withUnsafeMutableBufferPointer { input in
            stream.next_in = input.baseAddress
            stream.avail_in = uInt(input.count)
            var status: Int32
            repeat {
                status = try compressed.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = deflate(&stream, finishing ? Z_FINISH : Z_NO_FLUSH)
                    guard status != Z_STREAM_ERROR else { throw TableWriteError(description: "gzip failed for '\(path)'") }
                    do {
                        try file.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[..<(out.count - Int(stream.avail_out))]))
                    } catch {
                        throw TableWriteError(description: "\(error)")
                    }
                    return status
                }
            } while stream.avail_out == 0 || (finishing && status != Z_STREAM_END)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Completes the stream and renames the file into place.
    func finish() throws {
        try deflateBuffer(finishing: true)
        do { try file.commit() } catch { throw TableWriteError(description: "\(error)") }
    }
}
