// Stored fields of the model's per-queue and per-group records in half the bytes (a trace can
// have 900k queues and 200k groups): a count or index as Int32, an absent time as `noTime`.
// Each wrapper reads and writes as the wide type, so the public properties stay as they were.

/// An `Int` stored as Int32: written clamped (counts of a real trace stay far below 2^31).
@propertyWrapper
public struct Int32Clamped: Sendable, Equatable {
    @usableFromInline var raw: Int32

    @inlinable public init(wrappedValue: Int) { raw = Int32(clamping: wrappedValue) }

    public var wrappedValue: Int {
        @inlinable get { Int(raw) }
        @inlinable set { raw = Int32(clamping: newValue) }
    }
}

/// An optional index (`Int?`) stored as Int32, nil as -1 (indices are never negative).
@propertyWrapper
public struct OptionalIndex32: Sendable, Equatable {
    @usableFromInline var raw: Int32

    @inlinable public init(wrappedValue: Int?) { raw = wrappedValue.map { Int32(clamping: $0) } ?? -1 }

    public var wrappedValue: Int? {
        @inlinable get { raw < 0 ? nil : Int(raw) }
        @inlinable set { raw = newValue.map { Int32(clamping: $0) } ?? -1 }
    }
}

/// An optional time (`UInt64?`) stored as 8 bytes, nil as `noTime` (the reader keeps every
/// time within 2^50 ns, so no real time is `noTime`).
@propertyWrapper
public struct AbsentTime: Sendable, Equatable {
    @usableFromInline var raw: UInt64

    @inlinable public init(wrappedValue: UInt64?) { raw = wrappedValue ?? noTime }

    public var wrappedValue: UInt64? {
        @inlinable get { raw == noTime ? nil : raw }
        @inlinable set { raw = newValue ?? noTime }
    }
}
