// The trace model: every Dispatch object and execution the trace shows, as plain structs in
// arrays. Objects refer to each other by index into TraceModel's arrays (queue 3 is
// `model.queues[3]`). Times are ns since the trace started.
import QTraceFormat

/// Sentinel for "no such time" in the compact per-item storage (use the optional accessors).
public let noTime = UInt64.max

public struct TraceModel: Sendable {
    public var info: TraceInfo
    /// Time of the first and last event (end also covers info.durationNs when known).
    public var startTime: UInt64 = 0
    public var endTime: UInt64 = 0
    public var eventCount = 0
    public var queues: [TraceQueue] = []
    public var items: [WorkItem] = []
    public var threads: [TraceThread] = []
    public var groups: [TraceGroup] = []
    public var semaphores: [TraceSemaphore] = []
    public var sources: [TraceSource] = []
    public var applies: [ApplyCall] = []
    public var channels: [IOChannel] = []
    public var ioOperations: [IOOperation] = []
    public var marks: [Mark] = []
    public var intervals: [AnnotatedInterval] = []
    /// Thread counts over time (all threads).
    public var threadActivity = ThreadActivity()
    /// Observations made while building that the findings turn into diagnostics.
    public var deadlocks: [DeadlockReport] = []
    public var syncCycles: [SyncCycle] = []
    public var priorityInversions: [PriorityInversion] = []
    public var threadExplosions: [ThreadExplosion] = []
    public var targetLoops: [TargetLoop] = []
    public var anomalies = BuildAnomalies()
    /// Kernel scheduling states (nil unless the trace was recorded with `--sched`).
    public var sched: SchedModel?
    /// CPU samples with their call stacks (nil unless the trace was recorded with `--cpu`).
    public var cpu: CPUSamples?
    /// Code identity (format 1.4): call sites, the code they submit, modules, Swift tasks.
    public var sites: [CodeSite] = []
    public var codes: [TraceCode] = []
    public var modules: [TraceModule] = []
    public var tasks: [SwiftTask] = []
    /// Actor hops (format 1.7): every swift_task_switch the program made, in time order.
    public var actorHops: [ActorHop] = []
    /// Actor type names by metadata address (ACTOR_TYPE).
    public var actorTypeNames: [UInt64: String] = [:]
    /// Foundation operations (OPERATION) by item index: the Operation each item ran.
    public var operations: [Int: ItemOperation] = [:]
    /// The hops' resume functions, symbolized: onto actors (the actor methods), and those that
    /// began a long Swift job's longest stretch (`longJobStretches`).
    public var actorCode: [UInt64: CodeLocation] = [:]
    /// Swift continuations made and awaited (format 1.7), in time order.
    public var continuations: [ContinuationEvent] = []

    public init(info: TraceInfo) { self.info = info }

    public var duration: UInt64 { endTime >= startTime ? endTime - startTime : 0 }
}

// MARK: Queues

public enum QueueKind: String, Sendable, Codable, CaseIterable {
    /// `runLoop`: a Foundation run loop (its perform blocks and timers), not a Dispatch queue.
    case main, global, serial, concurrent, unknown, runLoop
    /// Runs one item at a time by itself (a concurrent queue can still be serialised by a target).
    public var isSerial: Bool { self == .main || self == .serial || self == .runLoop }
}

/// Where a queue entry came from.
public enum QueueOrigin: String, Sendable, Codable {
    /// QUEUE_CREATE; QUEUE_INFO; the header's main_queue; first referenced by another
    /// record; the default target (default-QoS global queue) that private queues get.
    case created, info, header, implicit, defaultRoot
}

public struct TargetChange: Sendable, Codable, Equatable {
    public var time: UInt64
    public var from: Int?
    public var to: Int?
}

public struct SuspendInterval: Sendable, Codable, Equatable {
    public var start: UInt64
    /// nil: still suspended at the end of the trace.
    public var end: UInt64?
    /// The object was created inactive (or, for sources, not yet resumed) during this interval.
    public var initial: Bool
}

/// Nanoseconds of item waiting, attributed to one cause each (in this order of precedence
/// when causes overlap: behindPrevious, behindBarrier, suspended, thread).
public struct WaitBreakdown: Sendable, Codable, Equatable {
    /// Behind earlier items of the same serial domain (or, for a barrier, the items it drains).
    public var behindPreviousNs: UInt64 = 0
    /// Behind a barrier item of the same concurrent queue.
    public var behindBarrierNs: UInt64 = 0
    /// While the queue (or a queue it targets) was suspended or inactive.
    public var suspendedNs: UInt64 = 0
    /// The queue was free: waiting for a worker thread (or, on main, for the main thread).
    public var threadNs: UInt64 = 0
    /// Waits of delayed items (after, notify) whose start of readiness is not observable.
    public var unattributedNs: UInt64 = 0
    public init() {}
    public var totalNs: UInt64 {
        [behindBarrierNs, suspendedNs, threadNs, unattributedNs].reduce(behindPreviousNs) { $0.saturatingAdd($1) }
    }
}

public struct WaitBehind: Sendable, Codable, Equatable {
    public var item: Int
    public var blocker: Int
    public var waitNs: UInt64
}

public struct BacklogEpisode: Sendable, Codable, Equatable {
    public var start: UInt64
    /// nil: the backlog was still non-empty at the end of the trace.
    public var end: UInt64?
    public var peak: Int
    public var enqueued: Int
    public var started: Int
}

// MARK: Work items

/// How an item came to run.
public enum ItemOrigin: UInt8, Sendable, Codable {
    /// ENQUEUE then START; `DispatchWorkItem.perform()` inline; a source handler run;
    /// a START without ENQUEUE (enqueue dropped or before tracing).
    case enqueued, performed, sourceHandler, startOnly
}

public enum WaitCause: UInt8, Sendable, Codable, CaseIterable {
    case none, behindPrevious, behindBarrier, suspended, thread, unattributed
    public var name: String {
        switch self {
        case .none: "none"
        case .behindPrevious: "behind-previous"
        case .behindBarrier: "behind-barrier"
        case .suspended: "suspended"
        case .thread: "thread"
        case .unattributed: "unattributed"
        }
    }
}

/// One execution of a block (or source handler). Stored compactly: indexes are Int32 with -1
/// for none, times use `noTime`; the computed properties give the optional views.
public struct WorkItem: Sendable {
    public var id: UInt64
    public var enqueueTime: UInt64 = noTime
    /// When the item could start: the enqueue, the `after` deadline, or the group emptying for
    /// a notify; noTime when unknown.
    public var readyTime: UInt64 = noTime
    public var startTime: UInt64 = noTime
    public var endTime: UInt64 = noTime
    var queueIndex: Int32 = -1
    var submitterIndex: Int32 = -1
    var threadIndex: Int32 = -1
    /// The group (group_async, group notify) or, for handler runs, the source: never both.
    var relatedIndex: Int32 = -1
    var waitedBehindIndex: Int32 = -1
    var parentIndex: Int32 = -1
    /// ENQUEUE flags; `.barrier` is also set for barriers by kind or DispatchWorkItem flags.
    public var flags: EnqueueFlags
    // Packed so that an item stays 72 bytes with its site (items bound the collector's memory):
    // kind (low 4 bits) and wait cause (high 4); QoS (low 6 bits) and origin (high 2); depth
    // (low 8 bits) and site (high 24).
    private var kindAndCause: UInt8
    private var qosAndOrigin: UInt8
    private var depthAndSite: UInt32 = 0

    public var kind: ItemKind {
        get { ItemKind(rawValue: UInt32(kindAndCause & 0xF)) ?? .unknown }
        set { kindAndCause = (kindAndCause & 0xF0) | UInt8(truncatingIfNeeded: newValue.rawValue & 0xF) }
    }
    /// The cause that accounts for most of the wait.
    public var waitCause: WaitCause {
        get { WaitCause(rawValue: kindAndCause >> 4) ?? .none }
        set { kindAndCause = (kindAndCause & 0x0F) | (newValue.rawValue << 4) }
    }
    var qosRaw: UInt8 {
        get { qosAndOrigin & 0x3F }
        set { qosAndOrigin = (qosAndOrigin & 0xC0) | (newValue & 0x3F) }
    }
    public var origin: ItemOrigin {
        get { ItemOrigin(rawValue: qosAndOrigin >> 6) ?? .enqueued }
        set { qosAndOrigin = (qosAndOrigin & 0x3F) | (newValue.rawValue << 6) }
    }
    /// Nesting on the executing thread: 0 = top level, 1 = inside another item (sync inline).
    public var depth: UInt8 {
        get { UInt8(truncatingIfNeeded: depthAndSite) }
        set { depthAndSite = (depthAndSite & ~0xFF) | UInt32(newValue) }
    }
    /// While building: the trace's site id; after: index + 1 into `TraceModel.sites` (0 = none).
    var siteRaw: UInt32 {
        get { depthAndSite >> 8 }
        set { depthAndSite = (depthAndSite & 0xFF) | (newValue << 8) }
    }

    /// Barrier by kind, by flag, or by DispatchWorkItem flags.
    public var isBarrier: Bool {
        get { flags.contains(.barrier) }
        set { if newValue { flags.insert(.barrier) } else { flags.remove(.barrier) } }
    }

    public init(id: UInt64, kind: ItemKind, flags: EnqueueFlags = [], origin: ItemOrigin) {
        self.id = id; self.flags = flags
        kindAndCause = UInt8(truncatingIfNeeded: kind.rawValue & 0xF)
        qosAndOrigin = origin.rawValue << 6
    }

    public var queue: Int? { get { opt(queueIndex) } set { queueIndex = idx(newValue) } }
    /// Thread that submitted it.
    public var submitter: Int? { get { opt(submitterIndex) } set { submitterIndex = idx(newValue) } }
    /// Thread that ran it.
    public var thread: Int? { get { opt(threadIndex) } set { threadIndex = idx(newValue) } }
    public var group: Int? { origin == .sourceHandler ? nil : opt(relatedIndex) }
    /// The item it waited behind (serial predecessor or barrier), when it waited behind one.
    public var waitedBehind: Int? { get { opt(waitedBehindIndex) } set { waitedBehindIndex = idx(newValue) } }
    /// The item running on the submitter thread when this one was enqueued (flow arrows).
    public var parent: Int? { get { opt(parentIndex) } set { parentIndex = idx(newValue) } }
    /// For source handler runs: the source.
    public var source: Int? { origin == .sourceHandler ? opt(relatedIndex) : nil }
    /// Where it was submitted from and what it ran (index into `TraceModel.sites`).
    public var site: Int? { get { siteRaw == 0 ? nil : Int(siteRaw) - 1 } set { siteRaw = newValue.map { UInt32($0 + 1) } ?? 0 } }
    public var qos: QoSClass { QoSClass(rawValue: qosRaw) ?? .unspecified }

    public var enqueued: UInt64? { enqueueTime == noTime ? nil : enqueueTime }
    public var ready: UInt64? { readyTime == noTime ? nil : readyTime }
    public var started: UInt64? { startTime == noTime ? nil : startTime }
    public var ended: UInt64? { endTime == noTime ? nil : endTime }
    /// Ready to start, when both are known.
    public var wait: UInt64? {
        guard readyTime != noTime, startTime != noTime else { return nil }
        return startTime >= readyTime ? startTime - readyTime : 0
    }
    /// Start to end, when both are known.
    public var runTime: UInt64? {
        guard startTime != noTime, endTime != noTime else { return nil }
        return endTime >= startTime ? endTime - startTime : 0
    }
}

@inline(__always) func opt(_ i: Int32) -> Int? { i < 0 ? nil : Int(i) }
@inline(__always) func idx(_ i: Int?) -> Int32 { i.map { Int32($0) } ?? -1 }

// MARK: Threads

public enum ThreadKind: String, Sendable, Codable {
    case main, worker, other
}

public struct Span: Sendable, Codable, Equatable {
    public var start: UInt64
    public var end: UInt64
    public init(start: UInt64, end: UInt64) { self.start = start; self.end = end }
    public var duration: UInt64 { end >= start ? end - start : 0 }
}

public enum BlockCause: String, Sendable, Codable, CaseIterable {
    /// sync / barrier sync / async_and_wait onto `object` (a queue); in apply (`object` = apply);
    /// semaphore wait (`object` = semaphore); group wait (`object` = group); dispatch_once
    /// waiting for another thread's initializer (no object: -1); DispatchWorkItem.wait()
    /// (no object: -1).
    case sync, apply, semaphore, groupWait, once, workItemWait
}

/// One blocking call. Stored in 32 bytes (there can be one per sync); the Int and optional
/// views are computed.
public struct BlockedInterval: Sendable, Equatable {
    public var start: UInt64
    var endTime: UInt64
    var threadIndex: Int32
    var objectIndex: Int32
    var itemIndex: Int32
    /// cause (bits 0..2), timed out (bit 3), site (bits 8..31; as WorkItem.siteRaw): one word,
    /// so that a blocked interval stays 32 bytes.
    private var packed: UInt32
    private static let causeMask: UInt32 = 7, timedOutBit: UInt32 = 8
    public var cause: BlockCause {
        get { Self.cause(bits: packed & Self.causeMask) }
        set { packed = (packed & ~Self.causeMask) | Self.causeBits(newValue) }
    }
    public var timedOut: Bool {
        get { packed & Self.timedOutBit != 0 }
        set { packed = newValue ? packed | Self.timedOutBit : packed & ~Self.timedOutBit }
    }
    var siteRaw: UInt32 {
        get { packed >> 8 }
        set { packed = (packed & 0xFF) | (newValue << 8) }
    }

    public init(thread: Int, start: UInt64, end: UInt64?, cause: BlockCause, object: Int, item: Int? = nil,
                timedOut: Bool = false) {
        self.start = start; endTime = end ?? noTime; threadIndex = Int32(thread); objectIndex = Int32(object)
        itemIndex = idx(item)
        packed = Self.causeBits(cause) | (timedOut ? Self.timedOutBit : 0)
    }

    /// The cause's place in `allCases`, by a switch: `allCases.firstIndex(of:)` searched a
    /// static array at every blocking call (each semaphore wait: ~2% of a pipeline's `stats`).
    @inline(__always)
    private static func causeBits(_ cause: BlockCause) -> UInt32 {
        switch cause {
        case .sync: 0
        case .apply: 1
        case .semaphore: 2
        case .groupWait: 3
        case .once: 4
        case .workItemWait: 5
        }
    }

    @inline(__always)
    private static func cause(bits: UInt32) -> BlockCause {
        switch bits {
        case 0: .sync
        case 1: .apply
        case 2: .semaphore
        case 3: .groupWait
        case 4: .once
        default: .workItemWait
        }
    }

    public var thread: Int { Int(threadIndex) }
    /// nil: still blocked at the end of the trace.
    public var end: UInt64? { get { endTime == noTime ? nil : endTime } set { endTime = newValue ?? noTime } }
    /// Queue, apply, semaphore or group index, by cause.
    public var object: Int { Int(objectIndex) }
    /// The sync item waited for (sync only).
    public var item: Int? { opt(itemIndex) }
    /// Where the blocking call was made (index into `TraceModel.sites`), when recorded.
    public var site: Int? { get { siteRaw == 0 ? nil : Int(siteRaw) - 1 } set { siteRaw = newValue.map { UInt32($0 + 1) } ?? 0 } }

    public func duration(traceEnd: UInt64) -> UInt64 {
        let e = end ?? traceEnd
        return e >= start ? e - start : 0
    }
}

public struct TraceThread: Sendable {
    public var tid: Int32
    public var name: String
    public var kind: ThreadKind
    /// THREAD_START (nil when the thread predates tracing: see firstSeen).
    public var createdAt: UInt64?
    public var creatorTid: Int32?
    public var exitedAt: UInt64?
    public var firstSeen: UInt64
    public var lastSeen: UInt64
    /// Running items, handlers, iterations (merged when back to back).
    public var busy: [Span] = []
    public var blocked: [BlockedInterval] = []
    public var busyNs: UInt64 = 0
    public var blockedNs: UInt64 = 0
}

/// Counts over time; each point's value is the maximum over [point.time, next point).
public struct ThreadActivity: Sendable {
    public var alive = StepSeries()
    public var running = StepSeries()
    public var blocked = StepSeries()
    /// Alive Dispatch worker threads.
    public var workers = StepSeries()
    public init() {}
}

// MARK: Groups, semaphores

public struct GroupNotify: Sendable, Codable, Equatable {
    public var item: Int
    public var registered: UInt64
    public var fired: UInt64?
}


public struct TraceSemaphore: Sendable {
    public var address: UInt64
    public var generation: Int
    public var createdAt: UInt64?
    public var initialValue: Int64 = 0
    public var waits = 0
    /// Waits that went to the kernel (the thread blocked).
    public var blockedWaits = 0
    public var timedOutWaits = 0
    public var blockedNs: UInt64 = 0
    public var maxBlockedNs: UInt64 = 0
    public var signals = 0
    /// Signals that woke a waiter.
    public var wakeups = 0
}

// MARK: Sources

public enum HandlerKind: UInt8, Sendable, Codable {
    case event, cancel, registration
}

public struct TimerConfig: Sendable, Codable, Equatable {
    public var setAt: UInt64
    /// First fire in trace time (nil = never: DISPATCH_TIME_FOREVER).
    public var start: UInt64?
    /// nil for a one-shot timer (interval DISPATCH_TIME_FOREVER).
    public var intervalNs: UInt64?
    public var leewayNs: UInt64
}

public struct SourceHandlerRun: Sendable, Codable, Equatable {
    /// The work item of this run (on the source's queue).
    public var item: Int
    public var kind: HandlerKind
    public var data: UInt64
    /// Data merges (dispatch_source_merge_data) since the previous run.
    public var merges: Int
    /// First unhandled merge → handler start, for data sources.
    public var delayNs: UInt64?
    /// Handler start − programmed fire time of the latest fire it covers (timers). Negative: early.
    public var latenessNs: Int64?
    /// More than one event in this run (timer/signal data > 1; more than one merge).
    public var coalesced: Bool
    /// The source was suspended since the previous run (explains coalescing).
    public var afterSuspension: Bool
}

public struct TraceSource: Sendable {
    public var address: UInt64
    public var generation: Int
    public var type: SourceType
    public var handle: UInt64
    public var mask: UInt64
    public var queue: Int?
    public var createdAt: UInt64
    public var timers: [TimerConfig] = []
    public var hasEventHandler = false
    public var hasCancelHandler = false
    public var hasRegistrationHandler = false
    /// First resume/activate.
    public var activatedAt: UInt64?
    public var suspensions: [SuspendInterval] = []
    public var cancelledAt: UInt64?
    public var cancelledWhileSuspended = false
    public var merges = 0
    public var runs: [SourceHandlerRun] = []
    /// Suspend count at the end (> 0: suspended or never resumed).
    public var suspendCountAtEnd = 0
    /// The event handler's site (index into `TraceModel.sites`): where it was set, what it runs.
    public var eventHandlerSite: Int?
}

// MARK: apply

public struct ApplyThreadShare: Sendable, Codable, Equatable {
    public var thread: Int
    public var iterations: Int
    public var busyNs: UInt64
}

public struct ApplyCall: Sendable {
    public var id: UInt64
    public var queue: Int?
    public var callerThread: Int
    public var iterations: UInt64
    public var begin: UInt64
    public var end: UInt64?
    public var iterationsRun = 0
    public var iterationTotalNs: UInt64 = 0
    public var iterationMinNs: UInt64 = .max
    public var iterationMaxNs: UInt64 = 0
    public var threads: [ApplyThreadShare] = []
    /// The parallel width actually reached (iterations running at once).
    public var maxWidth = 0
    /// Where it was called from and what each iteration runs (index into `TraceModel.sites`).
    public var site: Int?
}

// MARK: Dispatch I/O

public struct IOChannel: Sendable {
    public var address: UInt64
    public var generation: Int
    /// nil for the pseudo-channel of plain dispatch_read/dispatch_write.
    public var isRandom: Bool?
    public var fd: Int64?
    public var path: String?
    public var createdAt: UInt64?
    public var closedAt: UInt64?
    public var cleanupAt: UInt64?
    public var cleanupError: Int = 0
    public var barriers = 0
    public var operations: [Int] = []
}

public struct IOOperation: Sendable {
    public var id: UInt64
    public var channel: Int
    public var isWrite: Bool
    public var offset: Int64
    public var length: UInt64
    public var submitted: UInt64
    public var thread: Int
    public var handlerRuns = 0
    public var bytes: UInt64 = 0
    public var doneAt: UInt64?
    public var error: Int = 0
    public var handlerBusyNs: UInt64 = 0
}

// MARK: Annotations

public struct Mark: Sendable, Codable, Equatable {
    public var time: UInt64
    public var thread: Int
    public var name: String
}

public struct AnnotatedInterval: Sendable, Codable, Equatable {
    public var id: UInt64
    public var name: String
    public var begin: UInt64
    public var end: UInt64?
    public var thread: Int
    public var endThread: Int?
}

// MARK: Observations for diagnostics

public struct DeadlockReport: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable { case sync, apply }
    public enum Origin: String, Sendable, Codable { case shim, analysis }
    public var time: UInt64
    public var thread: Int
    public var kind: Kind
    public var origin: Origin
    /// The queue the thread tried to sync/apply onto, and the queue it was already holding.
    public var queue: Int?
    public var heldQueue: Int?
    public var item: Int?
}

public struct SyncCycle: Sendable, Codable, Equatable {
    public var time: UInt64
    /// Threads and the queues each waits on, in cycle order.
    public var threads: [Int]
    public var queues: [Int]
}

public struct PriorityInversion: Sendable, Codable, Equatable {
    public var item: Int
    public var blocker: Int
    public var queue: Int
    public var waitNs: UInt64
    public var itemQoS: UInt8
    public var blockerQoS: UInt8
}

public struct ThreadExplosion: Sendable, Codable, Equatable {
    public var start: UInt64
    public var end: UInt64
    public var peakWorkers: Int
    public var peakBlockedWorkers: Int
}

public struct TargetLoop: Sendable, Codable, Equatable {
    public var time: UInt64
    public var queues: [Int]
}

/// Records that did not fit the model (dropped or truncated traces produce some).
public struct BuildAnomalies: Sendable, Codable, Equatable {
    public var endsWithoutStart = 0
    /// Items still open when an outer item or the thread ended (their END was lost).
    public var unclosedItems = 0
    public var startsWithoutEnqueue = 0
    public var unmatchedWaitEnds = 0
    /// Events earlier than the one before (clamped to it).
    public var outOfOrderEvents = 0
    // What no recording produces, lost records included (the trace was altered):
    /// ENQUEUEs whose id is not above the thread's previous one (ids come from per-thread
    /// increasing blocks; only a DispatchWorkItem's id is submitted again).
    public var reusedItemIds = 0
    /// ENDs of an item that is not running on the thread while another item is (a thread's
    /// records are a suffix of its history, so a lost START leaves nothing open below).
    public var mismatchedEnds = 0
    /// Items enqueued onto a queue of a target loop after it formed that still ran (they
    /// cannot: libdispatch never drains such a queue).
    public var itemsRunInTargetLoops = 0
    public init() {}

    /// The sum of the counts that mean the trace was altered (trace.inconsistent).
    public var inconsistencies: Int { reusedItemIds + mismatchedEnds + itemsRunInTargetLoops }
}
