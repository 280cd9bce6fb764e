// The slot-less pairing's tables (SlotlessPairing.swift) without copy-on-write: a write into
// a Swift array held in a struct first asks the runtime whether the buffer is uniquely
// referenced, and a write into an array inside an array asks twice. The pairing writes its
// tables three to four times per function item; as arrays, those calls were ~5% of `stats`
// on a slot-less starfish trace.

/// A growable buffer whose copies share their elements (the pairing is never copied while it
/// pairs: it is a local of the merge), freed with the last copy. Indices are the pairing's
/// own (queue and thread numbers, positions it keeps), never values read from a trace.
struct PairingBuffer<Element> {
    private final class Memory {
        let base: UnsafeMutablePointer<Element>
        /// Elements to deinitialize at the end: kept up to date for non-trivial elements only
        /// (a trivial element's buffer writes nothing here per append).
        var initialized = 0

        init(capacity: Int) { base = .allocate(capacity: capacity) }

        deinit {
            base.deinitialize(count: initialized)
            base.deallocate()
        }
    }

    private var memory: Memory
    /// The memory's pointer, kept here so that element access never reads the class instance.
    private var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = Swift.max(capacity, 4)
        memory = Memory(capacity: self.capacity)
        base = memory.base
    }

    var isEmpty: Bool { count == 0 }

    subscript(i: Int) -> Element {
        @inline(__always) get { base[i] }
        @inline(__always) nonmutating _modify { yield &base[i] }
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count &+= 1
        if !_isPOD(Element.self) { memory.initialized = count }
    }

    /// Removes and returns the last element (the buffer must not be empty).
    @inline(__always)
    mutating func removeLast() -> Element {
        count &-= 1
        if !_isPOD(Element.self) { memory.initialized = count }
        return (base + count).move()
    }

    private mutating func grow() {
        capacity *= 2
        let larger = Memory(capacity: capacity)
        larger.base.moveInitialize(from: base, count: count)
        memory.initialized = 0  // moved out
        larger.initialized = _isPOD(Element.self) ? 0 : count
        memory = larger
        base = larger.base
    }
}
