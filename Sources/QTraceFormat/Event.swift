// The decoded event model shared by the reader, the analysis and the report.
// The binary layout is specified in docs/trace-format.md; this file is its Swift face.

/// Record types of the embedded format (docs/trace-format.md, "Records"). The source of truth is
/// Sources/CQTraceShim/qtrace_records.h; SchemaTests fails when this enum disagrees with it.
public enum EventType: UInt8, Sendable, CaseIterable {
    case threadStart = 1, threadExit = 2, threadName = 3
    case queueCreate = 10, queueInfo = 11, setTarget = 12, suspend = 13, resume = 14, activate = 15
    case enqueue = 20, start = 21, end = 22, workItemCreate = 23, workItemPerform = 24
    case applyBegin = 25, applyEnd = 26, applyIterStart = 27, applyIterEnd = 28
    case groupCreate = 30, groupEnter = 31, groupLeave = 32, groupWaitBegin = 33, groupWaitEnd = 34
    case semCreate = 40, semWaitBegin = 41, semWaitEnd = 42, semSignal = 43
    /// dispatch_once calls that found the predicate not done (ONCE_END `arg`: `OnceOutcome`).
    case onceBegin = 45, onceEnd = 46
    case sourceCreate = 50, sourceSetTimer = 51, sourceSetHandler = 52, sourceCancel = 53
    case sourceHandlerBegin = 54, sourceHandlerEnd = 55, sourceMergeData = 56
    case ioCreate = 60, ioRead = 61, ioWrite = 62, ioHandlerBegin = 63, ioHandlerEnd = 64
    case ioBarrier = 65, ioClose = 66, ioCleanupBegin = 67, ioCleanupEnd = 68
    case mark = 70, intervalBegin = 71, intervalEnd = 72
    case deadlock = 80
    /// Kernel scheduling (format 1.3, `qtrace record --sched`): written by qtrace from perf
    /// into the scheduler stream (chunk tid 0), never by the shim.
    case schedState = 90
    /// CPU samples (format 1.5, `qtrace record --cpu`): written by qtrace from perf into the
    /// samples stream (chunk tid -1), never by the shim. STACK_FRAME `arg` is a call-tree node
    /// id; CPU_SAMPLE names its stack by its leaf node (docs/cpu.md).
    case stackFrame = 91, cpuSample = 92
    /// Code identity (format 1.4): a code site's first use, the module map, Swift Concurrency
    /// jobs. Item, wait and handler records name their site by its id (docs/trace-format.md).
    case site = 100, module = 101, buildID = 102, job = 103
    /// A node of the tree of Swift async stacks (format 1.7): `arg` its id, `a` its parent
    /// node (0 for a root: a task's entry point), `b` the code address. A job SITE's
    /// `capture` names the stack's leaf node.
    case asyncFrame = 104
    /// Actors (format 1.7): ACTOR_HOP is a `swift_task_switch` of task `arg` onto executor `a`
    /// (0: the generic executor; `b` its implementation word, `c` the resume function, `d` the
    /// actor's metadata); ACTOR_TYPE names metadata `a` (string: the type's qualified name).
    case actorHop = 105, actorType = 106
    /// A Swift continuation (format 1.7) of task `arg`: flags8 0 = made (`c` its call site's
    /// id), 1 = awaited (`b` its status then: 0 pending, so the task suspends; 2 resumed).
    case continuation = 109
    /// Foundation operations: OPERATION says item `a` (a DispatchWorkItem of OperationQueue)
    /// runs the Operation at `b` (string: "Type<TAB>name", the name empty when nil);
    /// OPERATION_DEP says item `a`'s operation depended on the Operation at `b`.
    case operation = 107, operationDependency = 108
    /// Foundation run loops: RUNLOOP_TIMER says a Foundation Timer `a` was made (`b` its
    /// interval in ns, 0 for a one-shot; `c` its first fire as a dispatch time; `d` the site
    /// of the closure it runs); RUNLOOP_TIMER_FIRE says timer `a` fires on run loop `b`, due at
    /// `c` (a dispatch time). SOURCE_HANDLER_END of the timer ends the fire.
    case runLoopTimer = 110, runLoopTimerFire = 111
}

/// SITE `flags8`: what the site's `code` address is.
public enum SiteCodeKind: UInt8, Sendable, CaseIterable {
    /// No code (a blocking call: only the caller is known); a block's invoke function; a
    /// `_f` function; a Swift closure (block invoke is a reabstraction thunk, `capture` is the
    /// closure); a Swift Concurrency job's resume function.
    case none = 0, block = 1, function = 2, swiftClosure = 3, job = 4
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

/// ONCE_END `arg`: what the calling thread did in a dispatch_once whose predicate was not done.
public enum OnceOutcome: UInt32, Sendable, CaseIterable {
    /// It ran the initializer; it waited for another thread's initializer to finish.
    case ran = 1, waited = 2
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

/// ENQUEUE / START `arg`: how a work item was submitted.
public enum ItemKind: UInt32, Sendable, CaseIterable {
    case unknown = 0, async = 1, sync = 2, barrierAsync = 3, barrierSync = 4, after = 5
    case groupAsync = 6, groupNotify = 7, asyncAndWait = 8, barrierAsyncAndWait = 9, workItemNotify = 10
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

/// ENQUEUE `flags8` bits.
public struct EnqueueFlags: OptionSet, Sendable {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    // Computed and inlinable (not stored statics, which cost an accessor call per use in
    // another module): the analysis tests them per item.
    @inlinable public static var barrier: EnqueueFlags { EnqueueFlags(rawValue: 1 << 0) }
    @inlinable public static var workItem: EnqueueFlags { EnqueueFlags(rawValue: 1 << 1) }
    @inlinable public static var function: EnqueueFlags { EnqueueFlags(rawValue: 1 << 2) }
    @inlinable public static var swiftConcurrency: EnqueueFlags { EnqueueFlags(rawValue: 1 << 3) }
}

/// SOURCE_CREATE `arg`.
public enum SourceType: UInt32, Sendable, CaseIterable {
    case other = 0, timer = 1, read = 2, write = 3, signal = 4, dataAdd = 5, dataOr = 6, dataReplace = 7, interval = 8
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
