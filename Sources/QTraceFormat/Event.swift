// The decoded event model shared by the reader, the analysis and the report.
// The binary layout is specified in docs/trace-format.md; this file is its Swift face.

// EventType and the value sets the shim shares (SiteCodeKind, ItemKind, EnqueueFlags,
// OnceOutcome, SourceType) are generated from Sources/CQTraceShim/qtrace_records.h by the
// GenerateRecordSchema plugin; this file adds their behaviour and the types only Swift writes.

extension SiteCodeKind {
    public var name: String {
        switch self {
        case .none: "none"
        case .block: "block"
        case .function: "function"
        case .swiftClosure: "swift-closure"
        case .job: "job"
        }
    }
}

extension OnceOutcome {
    public var name: String { self == .ran ? "ran" : "waited" }
}

/// SCHED_STATE `arg`: what a thread is doing from the record's time on.
public enum SchedState: UInt32, Sendable, CaseIterable {
    /// On a CPU; waiting for a CPU (woken, or preempted); blocked (sleeping or in an
    /// uninterruptible wait); the thread exited (its tid may be reused afterwards).
    case running = 0, runnable = 1, sleeping = 2, exited = 3
    public var name: String {
        switch self {
        case .running: "running"
        case .runnable: "runnable"
        case .sleeping: "sleeping"
        case .exited: "exited"
        }
    }
}

/// SCHED_STATE `flags8` bits.
public struct SchedFlags: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Sleeping in an uninterruptible wait (state D: usually disk or page-fault I/O).
    public static let uninterruptible = SchedFlags(rawValue: 1 << 0)
    /// Runnable because it was woken (else: preempted while running).
    public static let woken = SchedFlags(rawValue: 1 << 1)
    /// The state held before the trace started (the record is at time 0).
    public static let initial = SchedFlags(rawValue: 1 << 2)
}

extension ItemKind {
    // Inlinable: the analysis asks these per item, across the module boundary.
    /// Items whose submitter waits for them (the caller is blocked from ENQUEUE to END).
    @inlinable @inline(__always) public var isSynchronous: Bool {
        switch self {
        case .sync, .barrierSync, .asyncAndWait, .barrierAsyncAndWait: true
        default: false
        }
    }
    @inlinable @inline(__always) public var isBarrier: Bool {
        switch self {
        case .barrierAsync, .barrierSync, .barrierAsyncAndWait: true
        default: false
        }
    }
}

/// libdispatch QoS class values.
public enum QoSClass: UInt8, Sendable, CaseIterable {
    case unspecified = 0, background = 0x09, utility = 0x11, `default` = 0x15, userInitiated = 0x19, userInteractive = 0x21
    public var name: String {
        switch self {
        case .unspecified: "unspecified"
        case .background: "background"
        case .utility: "utility"
        case .default: "default"
        case .userInitiated: "user-initiated"
        case .userInteractive: "user-interactive"
        }
    }
}

/// One decoded record. Payload words that a type does not use are 0 (see the tables in
/// docs/trace-format.md for what `a`...`d` mean per type).
public struct Event: Sendable, Equatable {
    public var type: EventType
    public var flags: UInt8
    public var arg: UInt32
    /// OS thread id of the thread that recorded the event.
    public var tid: Int32
    /// Nanoseconds since the trace started (header init_mono_ns).
    public var time: UInt64
    public var a: UInt64
    public var b: UInt64
    public var c: UInt64
    public var d: UInt64
    /// The record's string (labels, names, paths), when the type has one.
    public var string: String?

    public init(type: EventType, time: UInt64, tid: Int32, arg: UInt32 = 0, flags: UInt8 = 0,
                a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0, string: String? = nil) {
        self.type = type; self.flags = flags; self.arg = arg; self.tid = tid; self.time = time
        self.a = a; self.b = b; self.c = c; self.d = d; self.string = string
    }
}
