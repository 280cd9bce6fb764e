// The plain input model of the HTML report and the Chrome trace export.
//
// It deliberately knows nothing of the trace reader or the analysis: the analysis fills a
// `ReportInput` and `ReportWriter` turns it into a self-contained HTML file. Every index is
// 0-based into the array it names; -1 means "none". Times are nanoseconds since the start
// of the trace. Strings come from the traced program and are untrusted: the writer escapes
// them and the viewer only ever shows them as text.

/// Everything one report shows.
public struct ReportInput: Sendable {
    public var meta: ReportMeta
    public var threads: [ReportThread]
    public var queues: [ReportQueue]
    public var items: ReportItems
    public var blocked: [ReportBlockedInterval]
    public var sources: [ReportSource]
    public var groups: [ReportGroup]
    public var annotations: ReportAnnotations
    public var counters: [ReportCounterSeries]
    /// The tables of `qtrace stats --json` (per queue, per thread, ...), shown as they are.
    public var stats: [ReportTable]
    public var histograms: [ReportHistogram]
    public var findings: [ReportFinding]
    /// The traced processes (one, or several merged by `ReportInput.merged`); threads and
    /// queues name theirs by index.
    public var processes: [ReportProcess]
    /// Kernel scheduling states (traces recorded with --sched), or nil.
    public var sched: ReportSched?
    /// Code identity (traces with sites): what items ran, where they were enqueued, Swift tasks.
    public var codes: [ReportCode] = []
    public var sites: [ReportSite] = []
    /// CPU samples (traces recorded with --cpu): each queue's merged call tree (ReportInput+CPU.swift).
    public var cpuFlames: [ReportFlame] = []
    public var tasks: [ReportTask] = []
    /// Swift actors (format 1.7) with their visits, as the analysis computed them.
    public var actors: [ReportActor] = []
    /// The analysis' target-queue forest, depth-first in its order (docs/report-data.md,
    /// Definitions); ReportWriter refuses an input with queues and no forest.
    public var queueTree: [ReportQueueTreeNode] = []

    public init(
        meta: ReportMeta,
        threads: [ReportThread] = [],
        queues: [ReportQueue] = [],
        items: ReportItems = ReportItems(),
        blocked: [ReportBlockedInterval] = [],
        sources: [ReportSource] = [],
        groups: [ReportGroup] = [],
        annotations: ReportAnnotations = ReportAnnotations(),
        counters: [ReportCounterSeries] = [],
        stats: [ReportTable] = [],
        histograms: [ReportHistogram] = [],
        findings: [ReportFinding] = [],
        processes: [ReportProcess] = [],
        sched: ReportSched? = nil
    ) {
        self.meta = meta
        self.threads = threads
        self.queues = queues
        self.items = items
        self.blocked = blocked
        self.sources = sources
        self.groups = groups
        self.annotations = annotations
        self.counters = counters
        self.stats = stats
        self.histograms = histograms
        self.findings = findings
        self.processes = processes
        self.sched = sched
    }
}

/// One traced process of a report: its lane group's header ("PID executable @ host").
public struct ReportProcess: Sendable, Equatable {
    public var pid: Int
    /// The executable's file name.
    public var executable: String
    public var commandLine: String
    /// The machine it ran on ("" if unknown).
    public var host: String
    /// Wall-clock time (ns since the Unix epoch) of the process's time 0; 0 if unknown.
    public var realtimeStartNs: Int64
    /// Where the process's time 0 is on the report's time axis.
    public var offsetNs: Int64
    public var durationNs: Int64
    public var droppedEvents: Int64
    /// The analysis' figures of the process (its Processes table row, the order of the lane
    /// groups); -1: unknown. `busiestQueue` indexes `ReportInput.queues`.
    public var items = -1
    public var threads = -1
    public var peakThreadsAlive = -1
    public var busyNs: Int64 = -1
    public var busiestQueue = -1
    public var findings = -1

    public init(pid: Int, executable: String, commandLine: String = "", host: String = "", realtimeStartNs: Int64 = 0,
                offsetNs: Int64 = 0, durationNs: Int64 = 0, droppedEvents: Int64 = 0) {
        self.pid = pid
        self.executable = executable
        self.commandLine = commandLine
        self.host = host
        self.realtimeStartNs = realtimeStartNs
        self.offsetNs = offsetNs
        self.durationNs = durationNs
        self.droppedEvents = droppedEvents
    }

    /// "PID executable @ host", the lane group's header.
    public var title: String {
        "\(pid) \(executable.isEmpty ? "?" : executable)" + (host.isEmpty ? "" : " @ \(host)")
    }

    /// The command line without its first word (the program): what the Processes table's
    /// Arguments column shows.
    public var arguments: String {
        let line = commandLine.drop { $0 == " " }
        guard let space = line.firstIndex(of: " ") else { return "" }
        return String(line[space...].drop { $0 == " " })
    }
}

/// What was traced and how well.
public struct ReportMeta: Sendable {
    public var title: String
    public var commandLine: String
    public var pid: Int
    public var ncpu: Int
    public var durationNs: Int64
    public var droppedEvents: Int64
    /// Why they were dropped ("disk full", ...), "" when the trace does not say.
    public var dropReason: String
    public var shimOverheadNsPerEvent: Double
    public var qtraceVersion: String
    /// Records the reader dropped as inconsistent (TraceInfo.invalidEvents): the header then
    /// says "inconsistent trace: N events dropped".
    public var invalidEvents: Int64
    /// The most threads alive at once (all processes together); -1 when unknown.
    public var peakThreadsAlive = -1
    /// A flight-recorder ring or snapshot: which window it holds, as the analysis words it
    /// (FlightRecorderWindow.summaryLine); "" for other traces.
    public var flightRecorder = ""

    public init(
        title: String, commandLine: String = "", pid: Int = 0, ncpu: Int = 1, durationNs: Int64,
        droppedEvents: Int64 = 0, shimOverheadNsPerEvent: Double = 0, qtraceVersion: String = "", dropReason: String = "",
        invalidEvents: Int64 = 0
    ) {
        self.dropReason = dropReason
        self.invalidEvents = invalidEvents
        self.title = title
        self.commandLine = commandLine
        self.pid = pid
        self.ncpu = ncpu
        self.durationNs = durationNs
        self.droppedEvents = droppedEvents
        self.shimOverheadNsPerEvent = shimOverheadNsPerEvent
        self.qtraceVersion = qtraceVersion
    }
}

public enum ReportThreadKind: String, Sendable, CaseIterable {
    case main, worker, other
}

public struct ReportThread: Sendable {
    public var index: Int
    public var tid: Int64
    public var name: String
    public var kind: ReportThreadKind
    /// First and last time the thread was seen (its lifetime lane).
    public var startNs: Int64
    public var endNs: Int64
    /// Its process (index into `ReportInput.processes`).
    public var process: Int
    /// The analysis' figures (docs/report-data.md, Definitions); -1 when not computed, which
    /// ReportWriter refuses (the viewer computes no figure).
    public var items = -1
    public var busyNs: Int64 = -1
    public var blockedNs: Int64 = -1

    public init(index: Int, tid: Int64, name: String, kind: ReportThreadKind, startNs: Int64, endNs: Int64, process: Int = 0) {
        self.process = process
        self.index = index
        self.tid = tid
        self.name = name
        self.kind = kind
        self.startNs = startNs
        self.endNs = endNs
    }
}

public enum ReportQueueKind: String, Sendable, CaseIterable {
    case serial, concurrent, main, global
}

public struct ReportQueue: Sendable {
    public var index: Int
    public var label: String
    public var kind: ReportQueueKind
    /// "user-interactive", "user-initiated", "default", "utility", "background" or "".
    public var qosName: String
    /// The queue this one targets (its parent in the target-queue tree), or -1 for a root.
    public var targetIndex: Int
    /// Its process (index into `ReportInput.processes`).
    public var process: Int
    /// The analysis' figures (docs/report-data.md, Definitions); -1 when not computed, which
    /// ReportWriter refuses (the viewer computes no figure).
    public var items = -1
    public var busyNs: Int64 = -1
    public var busyShare: Double = -1

    public init(index: Int, label: String, kind: ReportQueueKind, qosName: String = "", targetIndex: Int = -1, process: Int = 0) {
        self.process = process
        self.index = index
        self.label = label
        self.kind = kind
        self.qosName = qosName
        self.targetIndex = targetIndex
    }
}

/// One queue of the target-queue forest: its parent (-1 for a root) and the busy time of its
/// subtree (its own plus every queue below it).
public struct ReportQueueTreeNode: Sendable, Equatable {
    public var queue: Int
    public var parent: Int
    public var subtreeBusyNs: Int64

    public init(queue: Int, parent: Int, subtreeBusyNs: Int64) {
        self.queue = queue
        self.parent = parent
        self.subtreeBusyNs = subtreeBusyNs
    }
}

/// How a work item was submitted. The raw value is the code stored in the report.
public enum ReportItemKind: UInt8, Sendable, CaseIterable {
    case async = 0, sync, barrierAsync, barrierSync, after, apply, groupAsync, notify
    case asyncAndWait, sourceHandler, other

    /// The name the viewer and the Chrome export show.
    public var name: String {
        switch self {
        case .async: "async"
        case .sync: "sync"
        case .barrierAsync: "barrier async"
        case .barrierSync: "barrier sync"
        case .after: "after"
        case .apply: "apply"
        case .groupAsync: "group async"
        case .notify: "notify"
        case .asyncAndWait: "async and wait"
        case .sourceHandler: "source handler"
        case .other: "other"
        }
    }
}

/// One work item, for building `ReportItems` one row at a time.
public struct ReportItem: Sendable, Equatable {
    public var queue: Int
    public var kind: ReportItemKind
    public var submitterThread: Int
    public var thread: Int
    public var enqueueNs: Int64
    /// -1 if the item never started (still pending when the trace ended).
    public var startNs: Int64
    /// -1 if the item never finished.
    public var endNs: Int64
    /// The item that was running on the submitter when this one was enqueued, or -1.
    public var parent: Int
    /// The item this one waited behind (the previous item of a serial queue, a barrier), or -1.
    public var waitedBehind: Int
    public var group: Int
    /// The source whose handler this item ran, or -1.
    public var source: Int
    /// Where it was enqueued and what it ran (index into `ReportInput.sites`), or -1.
    public var site: Int
    /// The item id the trace recorded (the one `qtrace dump` prints), 0 when unknown.
    public var traceID: UInt64
    /// The analysis' wait (ready to start), or -1 when unknown.
    public var waitNs: Int64
    /// The analysis' time blocked inside the item (QTraceAnalysis `BlockedInside`) and its
    /// causes (bit `ReportBlockCause.rawValue` set per cause).
    public var blockedInsideNs: Int64
    public var blockedInsideCauses: UInt8

    public init(
        queue: Int, kind: ReportItemKind, submitterThread: Int, thread: Int,
        enqueueNs: Int64, startNs: Int64, endNs: Int64,
        parent: Int = -1, waitedBehind: Int = -1, group: Int = -1, source: Int = -1, site: Int = -1,
        traceID: UInt64 = 0, waitNs: Int64 = -1, blockedInsideNs: Int64 = 0, blockedInsideCauses: UInt8 = 0
    ) {
        self.queue = queue
        self.kind = kind
        self.submitterThread = submitterThread
        self.thread = thread
        self.enqueueNs = enqueueNs
        self.startNs = startNs
        self.endNs = endNs
        self.parent = parent
        self.waitedBehind = waitedBehind
        self.group = group
        self.source = source
        self.site = site
        self.traceID = traceID
        self.waitNs = waitNs
        self.blockedInsideNs = blockedInsideNs
        self.blockedInsideCauses = blockedInsideCauses
    }
}

/// All work items as columns (millions of them: one array per field keeps them compact).
/// Item `i` is row `i` of every column; indexes refer to this order.
public struct ReportItems: Sendable {
    public var queue: [Int32] = []
    public var kind: [ReportItemKind] = []
    public var submitterThread: [Int32] = []
    public var thread: [Int32] = []
    public var enqueueNs: [Int64] = []
    public var startNs: [Int64] = []
    public var endNs: [Int64] = []
    public var parent: [Int32] = []
    public var waitedBehind: [Int32] = []
    public var group: [Int32] = []
    public var source: [Int32] = []
    public var site: [Int32] = []
    public var traceID: [UInt64] = []
    public var waitNs: [Int64] = []
    public var blockedInsideNs: [Int64] = []
    public var blockedInsideCauses: [UInt8] = []

    public init() {}

    public var count: Int { queue.count }

    public mutating func reserveCapacity(_ n: Int) {
        queue.reserveCapacity(n)
        kind.reserveCapacity(n)
        submitterThread.reserveCapacity(n)
        thread.reserveCapacity(n)
        enqueueNs.reserveCapacity(n)
        startNs.reserveCapacity(n)
        endNs.reserveCapacity(n)
        parent.reserveCapacity(n)
        waitedBehind.reserveCapacity(n)
        group.reserveCapacity(n)
        source.reserveCapacity(n)
        site.reserveCapacity(n)
        traceID.reserveCapacity(n)
        waitNs.reserveCapacity(n)
        blockedInsideNs.reserveCapacity(n)
        blockedInsideCauses.reserveCapacity(n)
    }

    public mutating func append(_ item: ReportItem) {
        queue.append(Int32(item.queue))
        kind.append(item.kind)
        submitterThread.append(Int32(item.submitterThread))
        thread.append(Int32(item.thread))
        enqueueNs.append(item.enqueueNs)
        startNs.append(item.startNs)
        endNs.append(item.endNs)
        parent.append(Int32(item.parent))
        waitedBehind.append(Int32(item.waitedBehind))
        group.append(Int32(item.group))
        source.append(Int32(item.source))
        site.append(Int32(item.site))
        traceID.append(item.traceID)
        waitNs.append(item.waitNs)
        blockedInsideNs.append(item.blockedInsideNs)
        blockedInsideCauses.append(item.blockedInsideCauses)
    }

    public subscript(i: Int) -> ReportItem {
        ReportItem(
            queue: Int(queue[i]), kind: kind[i], submitterThread: Int(submitterThread[i]), thread: Int(thread[i]),
            enqueueNs: enqueueNs[i], startNs: startNs[i], endNs: endNs[i], parent: Int(parent[i]),
            waitedBehind: Int(waitedBehind[i]), group: Int(group[i]), source: Int(source[i]),
            site: i < site.count ? Int(site[i]) : -1,
            traceID: i < traceID.count ? traceID[i] : 0, waitNs: i < waitNs.count ? waitNs[i] : -1,
            blockedInsideNs: i < blockedInsideNs.count ? blockedInsideNs[i] : 0,
            blockedInsideCauses: i < blockedInsideCauses.count ? blockedInsideCauses[i] : 0
        )
    }
}

public enum ReportBlockCause: UInt8, Sendable, CaseIterable {
    case sync = 0, semaphore, groupWait, apply, other

    public var name: String {
        switch self {
        case .sync: "sync"
        case .semaphore: "semaphore"
        case .groupWait: "group wait"
        case .apply: "apply"
        case .other: "other"
        }
    }
}

/// A thread waiting (sync, semaphore wait, group wait, apply) instead of running.
public struct ReportBlockedInterval: Sendable {
    public var thread: Int
    public var startNs: Int64
    public var endNs: Int64
    public var cause: ReportBlockCause
    /// The queue, semaphore or group waited on, as the user knows it.
    public var objectLabel: String
    /// The item waited for (e.g. the sync item), or -1.
    public var item: Int
    /// The blocking call's site (index into `ReportInput.sites`), or -1.
    public var site: Int

    public init(thread: Int, startNs: Int64, endNs: Int64, cause: ReportBlockCause, objectLabel: String = "", item: Int = -1,
                site: Int = -1) {
        self.thread = thread
        self.startNs = startNs
        self.endNs = endNs
        self.cause = cause
        self.objectLabel = objectLabel
        self.item = item
        self.site = site
    }
}

public struct ReportSpan: Sendable, Equatable {
    public var startNs: Int64
    public var endNs: Int64

    public init(startNs: Int64, endNs: Int64) {
        self.startNs = startNs
        self.endNs = endNs
    }
}

public struct ReportSourceRun: Sendable, Equatable {
    public var startNs: Int64
    public var endNs: Int64
    /// dispatch_source_get_data() during the run: coalesced events or missed timer fires.
    public var data: Int64

    public init(startNs: Int64, endNs: Int64, data: Int64) {
        self.startNs = startNs
        self.endNs = endNs
        self.data = data
    }
}

public struct ReportSource: Sendable {
    public var index: Int
    public var label: String
    /// "timer", "read", "write", "signal", "data add", "data or", "data replace", ...
    public var type: String
    /// The queue its handlers run on, or -1.
    public var queueIndex: Int
    public var handlerRuns: [ReportSourceRun]
    public var suspended: [ReportSpan]
    /// Times the source fired (kernel side), if known.
    public var events: [Int64]
    /// When it was cancelled, or -1.
    public var cancelNs: Int64

    public init(
        index: Int, label: String, type: String, queueIndex: Int = -1, handlerRuns: [ReportSourceRun] = [],
        suspended: [ReportSpan] = [], events: [Int64] = [], cancelNs: Int64 = -1
    ) {
        self.index = index
        self.label = label
        self.type = type
        self.queueIndex = queueIndex
        self.handlerRuns = handlerRuns
        self.suspended = suspended
        self.events = events
        self.cancelNs = cancelNs
    }
}

public struct ReportGroup: Sendable {
    public var index: Int
    public var label: String
    public var firstEnterNs: Int64
    public var lastLeaveNs: Int64
    /// When notify fired, or -1 if it never did.
    public var notifyNs: Int64
    public var enters: Int
    public var leaves: Int

    public init(
        index: Int, label: String, firstEnterNs: Int64, lastLeaveNs: Int64, notifyNs: Int64 = -1,
        enters: Int = 0, leaves: Int = 0
    ) {
        self.index = index
        self.label = label
        self.firstEnterNs = firstEnterNs
        self.lastLeaveNs = lastLeaveNs
        self.notifyNs = notifyNs
        self.enters = enters
        self.leaves = leaves
    }
}

public struct ReportMark: Sendable {
    public var timeNs: Int64
    public var thread: Int
    public var name: String

    public init(timeNs: Int64, thread: Int, name: String) {
        self.timeNs = timeNs
        self.thread = thread
        self.name = name
    }
}

public struct ReportInterval: Sendable {
    public var startNs: Int64
    public var endNs: Int64
    public var thread: Int
    public var name: String

    public init(startNs: Int64, endNs: Int64, thread: Int, name: String) {
        self.startNs = startNs
        self.endNs = endNs
        self.thread = thread
        self.name = name
    }
}

/// QTrace API annotations: `mark("...")` and `interval("...") { }`.
public struct ReportAnnotations: Sendable {
    public var marks: [ReportMark]
    public var intervals: [ReportInterval]

    public init(marks: [ReportMark] = [], intervals: [ReportInterval] = []) {
        self.marks = marks
        self.intervals = intervals
    }
}

public enum ReportCounterKind: String, Sendable, CaseIterable {
    case threadsAlive, threadsRunning, threadsBlocked, backlog, other
    /// One process's running threads in a report of several processes (`process` says which):
    /// the curve of its collapsed lane group.
    case processThreadsRunning
}

/// A step function: `values[i]` holds from `timesNs[i]` until the next time.
public struct ReportCounterSeries: Sendable {
    public var name: String
    public var kind: ReportCounterKind
    /// The queue of a backlog series, or -1.
    public var queueIndex: Int
    /// The process of a per-process series, or -1.
    public var process: Int
    public var timesNs: [Int64]
    public var values: [Double]

    public init(name: String, kind: ReportCounterKind, queueIndex: Int = -1, process: Int = -1, timesNs: [Int64], values: [Double]) {
        self.name = name
        self.kind = kind
        self.queueIndex = queueIndex
        self.process = process
        self.timesNs = timesNs
        self.values = values
    }
}

public enum ReportHistogramMetric: String, Sendable {
    case wait, run
}

/// `counts[i]` values fell in `[boundsNs[i], boundsNs[i + 1])`.
public struct ReportHistogram: Sendable {
    public var queueIndex: Int
    public var metric: ReportHistogramMetric
    public var boundsNs: [Double]
    /// The counts from the first bucket that is not 0 to the last (0 and [] when all are): a
    /// queue's durations fill a few of the 28 buckets, and 900k queues' full arrays were 102 MB.
    public private(set) var firstBucket = 0
    public private(set) var span: [Int] = []
    private var bucketCount = 0

    public init(queueIndex: Int, metric: ReportHistogramMetric, boundsNs: [Double], counts: [Int]) {
        self.queueIndex = queueIndex
        self.metric = metric
        self.boundsNs = boundsNs
        self.counts = counts
    }

    /// Every bucket's count.
    public var counts: [Int] {
        get {
            [Int](repeating: 0, count: firstBucket) + span
                + [Int](repeating: 0, count: max(0, bucketCount - firstBucket - span.count))
        }
        set {
            bucketCount = newValue.count
            guard let first = newValue.firstIndex(where: { $0 != 0 }), let last = newValue.lastIndex(where: { $0 != 0 }) else {
                (firstBucket, span) = (0, [])
                return
            }
            (firstBucket, span) = (first, Array(newValue[first...last]))
        }
    }
}

public enum ReportSeverity: String, Sendable, CaseIterable {
    case info, warning, error
}

/// A diagnostic, with what to highlight when the user follows it.
public struct ReportFinding: Sendable {
    /// The rule, e.g. "main-thread-blocked".
    public var id: String
    public var severity: ReportSeverity
    public var message: String
    public var startNs: Int64
    public var endNs: Int64
    public var queues: [Int]
    public var threads: [Int]
    public var items: [Int]
    /// Code sites it names (indexes into `ReportInput.sites`).
    public var sites: [Int]
    /// Its process (index into `ReportInput.processes`).
    public var process: Int
    /// What makes findings "the same" (QTraceAnalysis' FindingGrouping: rule and code site or
    /// queues); identical findings of one executable are one, with these counts.
    public var groupKey = ""
    /// Occurrences grouped into it, and the processes they came from.
    public var count = 1
    public var processCount = 1
    /// A wait's call stack, innermost first (Finding.stack), empty when none.
    public var stack: [String] = []

    public init(
        id: String, severity: ReportSeverity, message: String, startNs: Int64, endNs: Int64,
        queues: [Int] = [], threads: [Int] = [], items: [Int] = [], sites: [Int] = [], process: Int = 0
    ) {
        self.sites = sites
        self.process = process
        self.id = id
        self.severity = severity
        self.message = message
        self.startNs = startNs
        self.endNs = endNs
        self.queues = queues
        self.threads = threads
        self.items = items
    }
}
