// The raw bytes of a trace: a read-only mapping of the file, or an owned copy.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

final class TraceBytes: @unchecked Sendable {
    let base: UnsafeRawPointer
    let count: Int
    /// A file mapping (not an owned copy): its pages can be given back once read.
    private let isMapping: Bool
    private let release: (UnsafeRawPointer, Int) -> Void

    private init(base: UnsafeRawPointer, count: Int, isMapping: Bool = false,
                 release: @escaping (UnsafeRawPointer, Int) -> Void) {
        self.base = base; self.count = count; self.isMapping = isMapping; self.release = release
    }

    deinit { release(base, count) }

    /// A private copy of `bytes` (tests and fuzzing parse traces without touching the disk).
    /// Never empty: a 1-byte allocation backs an empty array so `base` stays valid.
    static func copying(_ bytes: [UInt8]) -> TraceBytes {
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { source in
            if let start = source.baseAddress { storage.copyMemory(from: start, byteCount: source.count) }
        }
        return TraceBytes(base: storage, count: bytes.count) { pointer, _ in pointer.deallocate() }
    }

    /// Maps `path` read-only. Refuses anything but a regular file: opening a FIFO could block
    /// forever and a device has no meaningful length.
    static func mapping(path: String) throws -> TraceBytes {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw openError(path: path, errno: errno) }
        defer { close(fd) }
        var status = stat()
        if fstat(fd, &status) != 0 { throw TraceError.cannotOpen(path: path, reason: describe(errno)) }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            throw TraceError.cannotOpen(path: path, reason: "is a directory, not a trace file")
        }
        if (status.st_mode & S_IFMT) != S_IFREG { throw TraceError.notARegularFile(path: path) }
        let size = Int(status.st_size)
        if size == 0 { throw TraceError.emptyFile(path: path) }
        // No MAP_POPULATE: the validation walk reads every page at once anyway, and mapping
        // them on its faults (the kernel maps 16 pages around each) measured 8 ms less of the
        // open phase on a 250 MB trace than mapping them all in `mmap` (0.061 -> 0.053 s).
        guard let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            return try reading(fd: fd, size: size, path: path)
        }
        return TraceBytes(base: UnsafeRawPointer(mapped), count: size, isMapping: true) { pointer, count in
            _ = munmap(UnsafeMutableRawPointer(mutating: pointer), count)
        }
    }

    /// Fallback when mmap is refused: read the whole file.
    private static func reading(fd: Int32, size: Int, path: String) throws -> TraceBytes {
        let storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        var done = 0
        while done < size {
            let got = pread(fd, storage + done, size - done, off_t(done))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            done += got
        }
        if done == 0 {
            storage.deallocate()
            throw TraceError.cannotOpen(path: path, reason: describe(errno))
        }
        return TraceBytes(base: storage, count: done) { pointer, _ in pointer.deallocate() }
    }

    private static func openError(path: String, errno code: Int32) -> TraceError {
        code == ENOENT ? .fileNotFound(path: path) : .cannotOpen(path: path, reason: describe(code))
    }

    private static func describe(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "error \(code)" }
        return String(cString: message)
    }

    /// Drops the pages of `range` from this process's resident memory once they have been
    /// read: the analysis's model grows while the merge reads on, and a mapped trace would
    /// otherwise stay resident to the end (peak memory = file + model). The data stays in the
    /// page cache; reading the range again faults it back in, so this never changes what is read.
    /// The pages the range only partly covers go too: a chunk's first page (its header and
    /// first records) and its last one (the records' end) were kept before: 2 pages of each
    /// 64 KiB chunk, 138 MB of sf10's 1.1 GB resident to the end of the run. Chunks are whole pages, so those pages
    /// hold nothing of another chunk but where the page is larger than 4 KiB; a page dropped
    /// before another stream has read it is read back from the page cache (a minor fault).
    func dropResident(_ range: Range<Int>) {
        guard isMapping else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = range.lowerBound / page * page
        let last = min((range.upperBound + page - 1) / page * page, (count + page - 1) / page * page)
        guard first < last else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + first), last - first, MADV_DONTNEED)
    }

    // Little-endian loads; callers check bounds.

    @inline(__always) func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always) func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always) func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// A NUL-terminated string stored in a fixed-size field.
    func fixedString(at offset: Int, size: Int) -> String {
        let field = UnsafeRawBufferPointer(start: base + offset, count: size)
        let length = field.firstIndex(of: 0) ?? size
        return String(decoding: field[..<length], as: UTF8.self)
    }
}
