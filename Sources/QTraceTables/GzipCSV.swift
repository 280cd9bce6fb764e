// A gzip-compressed CSV file written row by row (zlib's gzip streams), created beside its
// destination and renamed into place when complete: a reader never sees half a table.
import CZlib
#if canImport(Glibc)
import Glibc
#endif

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
    private let partial: String
    private var file: gzFile?
    private var buffer: [UInt8] = []

    /// Opens `path`'s temporary and writes the header row.
    init(path: String, columns: [String]) throws {
        self.path = path
        partial = path + ".partial-\(getpid())"
        // O_EXCL|O_NOFOLLOW: a symlink planted at the temporary's name is never followed.
        let fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TableWriteError(description: "cannot create '\(partial)': \(String(cString: strerror(errno)))") }
        guard let file = gzdopen(fd, "wb6") else {
            close(fd)
            unlink(partial)
            throw TableWriteError(description: "cannot start a gzip stream in '\(partial)'")
        }
        self.file = file
        try write(columns.map { .text($0) })
    }

    deinit {
        if let file {
            gzclose(file)
            unlink(partial)
        }
    }

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
        if buffer.count >= 1 << 16 { try flush() }
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

    private func flush() throws {
        guard let file, !buffer.isEmpty else { return }
        let written = buffer.withUnsafeBytes { gzwrite(file, $0.baseAddress, UInt32($0.count)) }
        guard written == Int32(buffer.count) else { throw TableWriteError(description: "cannot write '\(partial)' (disk full?)") }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Completes the stream and renames it into place.
    func finish() throws {
        try flush()
        guard let file else { return }
        self.file = nil
        guard gzclose(file) == Z_OK else {
            unlink(partial)
            throw TableWriteError(description: "cannot complete '\(partial)' (disk full?)")
        }
        guard rename(partial, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            throw TableWriteError(description: "cannot rename '\(partial)' to '\(path)': \(reason)")
        }
    }
}
