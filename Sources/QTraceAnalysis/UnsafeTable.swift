// A growable array for the builder's hot run-time state (per thread, per queue) without
// copy-on-write: every write into a Swift array held in a struct first asks whether the buffer
// is uniquely referenced (a call into the runtime), and a write into an element's own array
// (a thread's stack) asks twice. The builder changes this state several times per event.
//
// Reference semantics: copies of a table share its elements. The builder is never copied while
// it builds (it is a local of `Analysis.buildModel`), so nothing observes the sharing.
// Indices are not bounds-checked in release builds: they are indices the builder handed out
// itself (thread and queue numbers), never values read from a trace.

final class UnsafeTableStorage<Element> {
    var base: UnsafeMutablePointer<Element>
    /// Elements to deinitialize at the end; kept up to date only for non-trivial elements
    /// (a trivial type's table writes no class property per append or removal).
    var count = 0
    var capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 4)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

struct UnsafeTable<Element>: RandomAccessCollection {
    private var storage: UnsafeTableStorage<Element>
    /// The storage's pointer and count, kept here so that element access never reads the
    /// class instance (whose properties would need exclusivity checks).
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        storage = UnsafeTableStorage(capacity: capacity)
        base = storage.base
        self.capacity = storage.capacity
    }

    init(repeating element: Element, count: Int) {
        self.init(capacity: count)
        for _ in 0..<count { append(element) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }
    var indices: Range<Int> { 0..<count }

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

    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
        if !_isPOD(Element.self) { storage.count = count }
    }

    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast on an empty UnsafeTable")
        count -= 1
        if !_isPOD(Element.self) { storage.count = count }
        return (base + count).move()
    }

    private mutating func grow() {
        capacity *= 2
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        storage.base = bigger
        storage.capacity = capacity
        storage.count = count
        base = bigger
    }
}

/// The model's work items while building. Each item is written several times (enqueue, start,
/// end, wait split), and a write into `model.items` checked the array for sharing each time.
/// `Analysis.buildModel(file:)` lends the store the final array's own uninitialized buffer,
/// sized for the worst case (one item per event; untouched pages cost no memory), so the
/// items are never copied; otherwise the store grows by itself and is copied out once.
struct ItemStore {
    private var base: UnsafeMutablePointer<WorkItem>
    private(set) var count = 0
    private var capacity: Int
    /// Owns `base` when the store grows by itself (nil while it fills a lent buffer).
    private var owner: UnsafeTableStorage<WorkItem>?

    init(capacity: Int = 16) {
        let storage = UnsafeTableStorage<WorkItem>(capacity: capacity)
        owner = storage
        base = storage.base
        self.capacity = storage.capacity
    }

    /// Fills `buffer` from now on (the store must still be empty).
    mutating func adopt(_ buffer: UnsafeMutableBufferPointer<WorkItem>) {
        precondition(count == 0 && buffer.baseAddress != nil, "ItemStore.adopt after items were added")
        base = buffer.baseAddress!
        capacity = buffer.count
        owner = nil
    }

    subscript(index: Int) -> WorkItem {
        @inline(__always) get {
            assert(index >= 0 && index < count, "ItemStore index out of range")
            return base[index]
        }
        @inline(__always) nonmutating _modify {
            assert(index >= 0 && index < count, "ItemStore index out of range")
            yield &base[index]
        }
    }

    mutating func append(_ item: WorkItem) {
        if count == capacity { grow() }
        (base + count).initialize(to: item)
        count += 1
    }

    private mutating func grow() {
        guard let owner else { preconditionFailure("more work items than the lent buffer holds") }
        capacity *= 2
        let bigger = UnsafeMutablePointer<WorkItem>.allocate(capacity: capacity)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        owner.base = bigger
        owner.capacity = capacity
        base = bigger
    }

    /// A copy of the items as an array.
    var array: [WorkItem] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
