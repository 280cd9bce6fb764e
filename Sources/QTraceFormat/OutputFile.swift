// Every file qtrace writes (reports, exports, summaries, converted traces) goes through
// OutputFile, so that one rule holds everywhere (docs/outputs.md):
// - the bytes go to a new file beside the destination, created with O_CREAT | O_EXCL |
//   O_NOFOLLOW, which is renamed over the destination once complete: a symlink planted at
//   the destination is replaced, never written through, and a failed write (ENOSPC, Ctrl-C)
//   leaves no half file (an older file at the destination stays as it was);
// - "-" is standard output;
// - an existing device or FIFO named directly (/dev/null, a named pipe) is written in place.
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

public struct OutputFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The destination as given ("-" for standard output).
    public var path: String
    public var errno: Int32
    /// What failed, for the message: "create", "write", "rename".
    public var operation: String

    public var description: String {
        let target = path == "-" ? "standard output" : "'\(path)'"
        let reason = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
        return "cannot \(operation == "create" ? "create" : "write") \(target): \(reason)"
    }
}

public final class OutputFile {
    /// The destination as given.
    public let path: String
    /// The descriptor written to: the temporary file, standard output or the device.
    /// TraceWriter writes at offsets through it (pwrite); everyone else uses `write`.
    public let fd: Int32
    /// The name the bytes are written under until `commit` (nil when written in place): an
    /// interrupt handler removes it.
    public let temporaryPath: String?
    private var buffer: [UInt8] = []
    private var isOpen = true

    /// Whether `path` means standard output.
    public static func isStandardOutput(_ path: String) -> Bool { path == "-" }

    /// `willCreate` is told the temporary's name before the file exists, so that an interrupt
    /// handler registered there never misses a file it should remove.
    public init(path: String, willCreate: (String) -> Void = { _ in }) throws {
        self.path = path
        if Self.isStandardOutput(path) {
            (fd, temporaryPath) = (STDOUT_FILENO, nil)
        } else if let device = try Self.openExistingSpecialFile(path) {
            (fd, temporaryPath) = (device, nil)
        } else {
            (fd, temporaryPath) = try Self.createTemporary(beside: path, willCreate: willCreate)
        }
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if isOpen { discard() }
    }

    /// Appends bytes (buffered).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > Self.bufferSize { try flush() }
        if bytes.count >= Self.bufferSize {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    public func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes what is buffered, closes the file and, for a temporary, renames it over the
    /// destination (replacing a symlink there rather than following it).
    public func commit() throws {
        guard isOpen else { return }
        do {
            try flush()
            if let temporaryPath {
                isOpen = false
                guard close(fd) == 0 else { throw failure("write") }
                guard rename(temporaryPath, path) == 0 else { throw failure("rename") }
            } else {
                isOpen = false
                if fd != STDOUT_FILENO { close(fd) }
            }
        } catch {
            discard()
            throw error
        }
    }

    /// Gives up: the temporary file is removed, the destination is left untouched.
    public func discard() {
        if isOpen, fd != STDOUT_FILENO { close(fd) }
        isOpen = false
        if let temporaryPath { unlink(temporaryPath) }
    }

    // MARK: Private

    private static let bufferSize = 1 << 20

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let wrote = systemWrite(fd, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 && errno == EINTR { continue }
            if wrote <= 0 { throw failure("write") }
            done += wrote
        }
    }

    private func failure(_ operation: String) -> OutputFileError {
        OutputFileError(path: path, errno: errno == 0 ? EIO : errno, operation: operation)
    }

    /// A device, FIFO or socket that exists at `path` itself (not through a symlink): opened
    /// for writing in place. nil for anything else (a regular file, a symlink, nothing).
    private static func openExistingSpecialFile(_ path: String) throws -> Int32? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFLNK:
            return nil
        case S_IFDIR:
            throw OutputFileError(path: path, errno: EISDIR, operation: "create")
        default:
            let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw OutputFileError(path: path, errno: errno, operation: "create") }
            return fd
        }
    }

    /// A new file in the destination's directory under a name nobody else can have created
    /// first (O_EXCL) nor pointed elsewhere (O_NOFOLLOW). It keeps the permissions of a
    /// regular file it will replace (0644 otherwise, less the umask).
    private static func createTemporary(beside path: String, willCreate: (String) -> Void) throws -> (Int32, String?) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var replaced = stat()
        let keepMode = lstat(path, &replaced) == 0 && (replaced.st_mode & S_IFMT) == S_IFREG
        for _ in 0..<16 {
            let temporary = directory + "." + name + ".partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            willCreate(temporary)
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd < 0 && errno == EEXIST { continue }
            guard fd >= 0 else { throw OutputFileError(path: path, errno: errno, operation: "create") }
            if keepMode { _ = fchmod(fd, replaced.st_mode & 0o7777) }
            return (fd, temporary)
        }
        throw OutputFileError(path: path, errno: EEXIST, operation: "create")
    }
}
