// Fresh pages of a growing buffer mapped ahead of its writes: one madvise(MADV_POPULATE_WRITE)
// maps a step of zeroed pages, where the writes would take a page fault per 4 KiB (~4 us each
// on the benchmark VM, of which the trap is about a quarter: run (25) of docs/performance.md).
// The same pages are allocated either way; at most one step beyond the writes is resident.
import Glibc

enum PagePopulation {
    /// Bytes populated at once.
    static let step = 1 << 20
    /// Linux's MADV_POPULATE_WRITE (5.14), not in every C library's headers.
    private static let adviceToPopulateWrite: Int32 = 23
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Populates the whole pages from the one holding `first` up to `step` bytes further, but
    /// not past `end` (the buffer's end: a partial last page is left to fault). Returns the
    /// address below which the pages are populated, nil when nothing was (the kernel refused,
    /// as one before 5.14 does, or the buffer's end is near).
    static func populate(from first: UnsafeRawPointer, end: UnsafeRawPointer) -> UnsafeRawPointer? {
        let from = Int(bitPattern: first) & ~(pageSize - 1)
        let to = Int(bitPattern: Swift.min(first + step, end)) & ~(pageSize - 1)
        guard to > Int(bitPattern: first), let start = UnsafeMutableRawPointer(bitPattern: from),
              madvise(start, to - from, adviceToPopulateWrite) == 0 else { return nil }
        return UnsafeRawPointer(bitPattern: to)
    }
}
