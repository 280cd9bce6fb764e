// Memory given back while a big buffer is read for the last time, front to back: the report's
// item columns are built from the model's items (72 bytes each, gigabytes on big traces), and
// without this both would be resident at once until the items are freed at the end.
#if canImport(Glibc)
import Glibc
#endif

/// Releases the whole pages of a buffer's elements before a given index (madvise
/// MADV_DONTNEED): the kernel drops them, and reading them again gives zeros. Only for a buffer
/// of plain values (no references to release) that its owner reads no more below that index
/// and frees right after: the allocator's own bytes, before the first element and after the
/// last, are never in a released page.
struct ReleasedPages {
    private let base: UnsafeMutableRawPointer?
    private let stride: Int
    private let pageSize: Int
    /// The address up to which pages are released (page-aligned).
    private var releasedUpTo: Int

    init<T>(_ buffer: UnsafeMutableBufferPointer<T>) {
        precondition(_isPOD(T.self), "only plain values can be released unread")
        base = UnsafeMutableRawPointer(buffer.baseAddress)
        stride = MemoryLayout<T>.stride
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        pageSize = page
        releasedUpTo = base.map { (Int(bitPattern: $0) + page - 1) / page * page } ?? 0
    }

    /// Releases the whole pages below element `end` not released yet.
    mutating func release(before end: Int) {
        guard let base else { return }
        let limit = (Int(bitPattern: base) + end * stride) / pageSize * pageSize
        guard limit > releasedUpTo, let start = UnsafeMutableRawPointer(bitPattern: releasedUpTo) else { return }
        _ = madvise(start, limit - releasedUpTo, Int32(MADV_DONTNEED))
        releasedUpTo = limit
    }

}
