// Completes a trace after its process has ended: the shim cannot finish a file when the
// process is killed, so `qtrace record` adds the end-of-run calibration pair, the exit status,
// and trims the unused tail that the shim reserved ahead of time.
import CQTraceSys
#if canImport(Glibc)
import Glibc
#endif

public enum TraceFinalizer {
    // Header offsets: the reader's (docs/trace-format.md).
    typealias H = TraceLayout.Header
    static let chunkSizeOffset = H.chunkSize
    static let initTscOffset = H.initTsc
    static let initNsOffset = H.initMonoNs
    static let finalTscOffset = H.finalTsc
    static let finalNsOffset = H.finalMonoNs
    static let chunksOffset = H.chunksAllocated
    static let flagsOffset = H.flags
    static let exitStatusOffset = H.exitStatus
    static let tscHzOffset = H.tscHz
    static let headerSize = UInt64(TraceLayout.headerSize)

    /// Finalizes the trace at `path`; `exitStatus` (0-255, 128+N for a signal) is stored when given.
    /// Returns false when the file is not a qtrace trace.
    @discardableResult
    public static func finalize(path: String, exitStatus: Int32?) -> Bool {
        // The file the shim just created: never one a symlink put there since (docs/outputs.md).
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 8)
        guard pread(fd, &magic, 8, off_t(H.magic)) == 8,
              UInt64(littleEndian: magic.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }) == TraceLayout.fileMagic
        else { return false }
        let flags = readU64(fd, flagsOffset)
        if flags & 1 == 0 {
            // The process did not exit normally: add the calibration pair it could not write.
            let tsc = qt_sys_timestamp(), ns = qt_sys_monotonic_ns()
            writeU64(fd, finalTscOffset, tsc)
            writeU64(fd, finalNsOffset, ns)
            let initTsc = readU64(fd, initTscOffset), initNs = readU64(fd, initNsOffset)
            if tsc > initTsc, ns > initNs {
                writeU64(fd, tscHzOffset, UInt64(Double(tsc - initTsc) * 1e9 / Double(ns - initNs)))
            }
        }
        writeU64(fd, flagsOffset, flags | 2)
        if let status = exitStatus {
            writeU64(fd, exitStatusOffset, TraceLayout.exitStatusPresent | UInt64(UInt32(bitPattern: status)))
        }
        let chunkSize = UInt64(readU32(fd, chunkSizeOffset))
        let used = headerSize + readU64(fd, chunksOffset) * chunkSize
        var st = stat()
        if fstat(fd, &st) == 0, UInt64(st.st_size) > used { _ = ftruncate(fd, off_t(used)) }
        return true
    }

    static func readU64(_ fd: Int32, _ offset: Int) -> UInt64 {
        var v: UInt64 = 0
        _ = pread(fd, &v, 8, off_t(offset))
        return UInt64(littleEndian: v)
    }

    static func readU32(_ fd: Int32, _ offset: Int) -> UInt32 {
        var v: UInt32 = 0
        _ = pread(fd, &v, 4, off_t(offset))
        return UInt32(littleEndian: v)
    }

    static func writeU64(_ fd: Int32, _ offset: Int, _ value: UInt64) {
        var v = value.littleEndian
        _ = pwrite(fd, &v, 8, off_t(offset))
    }
}
