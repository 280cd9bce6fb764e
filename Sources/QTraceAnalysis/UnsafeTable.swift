// A growable array for the builder's hot state (per thread, per queue, per item) without
// copy-on-write: every write into a Swift array held in a struct first asks whether the buffer
// is uniquely referenced (a call into the runtime), and a write into an element's own array
// (a thread's stack) asks twice. The builder changes this state several times per event.
//
// Reference semantics: copies of a table share its elements. The builder is never copied while
// it builds (it is a local of `Analysis.buildModel`), so nothing observes the sharing.
// Indices are not bounds-checked in release builds: they are indices the builder handed out
// itself (thread, queue and item numbers), never values read from a trace.

import QTraceFormat

/// Owns a table's memory: frees it (and deinitializes the elements) when the last copy of the
/// table goes away.
final class UnsafeTableStorage<Element> {
    var base: UnsafeMutablePointer<Element>
    /// Elements to deinitialize at the end; kept up to date only for non-trivial elements
    /// (a trivial type's table writes no class property per append or removal).
    var count = 0

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

struct UnsafeTable<Element>: RandomAccessCollection {
    /// nil while the table fills a buffer lent by its caller (`adopt`).
    private var storage: UnsafeTableStorage<Element>?
    /// The storage's pointer, kept here so that element access never reads the class instance
    /// (whose properties would need exclusivity checks).
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = Swift.max(capacity, 4)
        let storage = UnsafeTableStorage<Element>(capacity: self.capacity)
        self.storage = storage
        base = storage.base
    }

    init(repeating element: Element, count: Int) {
        self.init(capacity: count)
        for _ in 0..<count { append(element) }
    }

    /// Fills `buffer` from now on instead of memory of its own (the table must still be
    /// empty): `Analysis.buildModel(file:)` lends it the final item array's uninitialized
    /// buffer, whose owner takes the elements over. The table cannot grow past the buffer.
    mutating func adopt(_ buffer: UnsafeMutableBufferPointer<Element>) {
        precondition(count == 0 && buffer.baseAddress != nil, "UnsafeTable.adopt after elements were added")
        storage = nil
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(index: Int) -> Element {
        @inline(__always) get {
            assert(index >= 0 && index < count, "UnsafeTable index out of range")
            return base[index]
        }
        @inline(__always) nonmutating _modify {
            assert(index >= 0 && index < count, "UnsafeTable index out of range")
            yield &base[index]
        }
    }

    /// Where element `index` is, until the table grows.
    @inline(__always)
    func address(of index: Int) -> UnsafeMutablePointer<Element> { base + index }

    /// Prefetches the cache lines of element `index` (a hint: any index may be passed).
    @inline(__always)
    func prefetch(_ index: Int) {
        let element = UnsafeRawPointer(base + index)
        prefetchForRead(element)
        prefetchForRead(element + (MemoryLayout<Element>.stride - 1))
    }

    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
        if !_isPOD(Element.self) { storage?.count = count }
    }

    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast on an empty UnsafeTable")
        count -= 1
        if !_isPOD(Element.self) { storage?.count = count }
        return (base + count).move()
    }

    /// The elements in an array; the table is empty afterwards. They are moved a block at a
    /// time, and the table's pages they leave go back to the system as it goes, so that the
    /// table and the array are never both resident (at 900k queues, 130 MB each).
    mutating func moveIntoArray() -> [Element] {
        precondition(storage != nil, "a lent buffer belongs to its lender")
        let total = count
        var pages = ReleasedPages(movingOutOf: UnsafeMutableBufferPointer(start: base, count: total))
        let array = [Element](unsafeUninitializedCapacity: total) { buffer, initialized in
            var moved = 0
            while moved < total {
                let block = Swift.min(4096, total - moved)
                (buffer.baseAddress! + moved).moveInitialize(from: base + moved, count: block)
                moved += block
                pages.release(before: moved)
            }
            initialized = total
        }
        count = 0
        storage?.count = 0
        return array
    }

    private mutating func grow() {
        guard let storage else { preconditionFailure("more elements than the lent buffer holds") }
        capacity *= 2
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        storage.base = bigger
        storage.count = count
        base = bigger
    }
}
