// Memory given back while a big buffer is read for the last time, front to back: the report's
// item columns are built from the model's items (72 bytes each, gigabytes on big traces), and
// the model builder's queue table is moved into the model's array (130 MB each at 900k
// queues); without this both would be resident at once until the old buffer is freed.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Releases the whole pages of a buffer's elements before a given index (madvise
/// MADV_DONTNEED): the kernel drops them, and reading them again gives zeros. Only for elements
/// that hold nothing to release (plain values, or values moved out) and that the buffer's
/// owner reads no more below that index and frees right after: the allocator's own bytes,
/// before the first element and after the last, are never in a released page.
public struct ReleasedPages {
    private let base: UnsafeMutableRawPointer?
    private let stride: Int
    private let pageSize: Int
    /// The address up to which pages are released (page-aligned).
    private var releasedUpTo: Int

    /// For a buffer of plain values, read for the last time.
    public init<T>(_ buffer: UnsafeMutableBufferPointer<T>) {
        precondition(_isPOD(T.self), "only plain values can be released unread")
        self.init(elementsOf: buffer)
    }

    /// For a buffer whose elements are moved out front to back (`moveInitialize`): below
    /// `release(before:)`'s index they are uninitialized memory, whatever their type.
    public init<T>(movingOutOf buffer: UnsafeMutableBufferPointer<T>) {
        self.init(elementsOf: buffer)
    }

    private init<T>(elementsOf buffer: UnsafeMutableBufferPointer<T>) {
        base = UnsafeMutableRawPointer(buffer.baseAddress)
        stride = MemoryLayout<T>.stride
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        pageSize = page
        releasedUpTo = base.map { (Int(bitPattern: $0) + page - 1) / page * page } ?? 0
    }

    /// Releases the whole pages below element `end` not released yet.
    public mutating func release(before end: Int) {
        guard let base else { return }
        let limit = (Int(bitPattern: base) + end * stride) / pageSize * pageSize
        guard limit > releasedUpTo, let start = UnsafeMutableRawPointer(bitPattern: releasedUpTo) else { return }
        _ = madvise(start, limit - releasedUpTo, Int32(MADV_DONTNEED))
        releasedUpTo = limit
    }
}
