// Code identity in the report: what each item ran (a code), where it was enqueued (a site:
// one code and one call site), and the Swift Concurrency tasks whose jobs are items. Names
// are symbols of the traced program: untrusted text, shown by the viewer as text only.

/// A place in the source, as the symbolizer gave it.
public struct ReportCodeLocation: Sendable, Equatable {
    /// What to show: the short symbol ("closure #1 in Loader.load()"), else `module+0xoffset`.
    public var name: String
    /// The full demangled symbol, "" when unknown.
    public var symbol: String
    /// The source file (as the debug information names it), "" when unknown.
    public var file: String
    /// 0 when unknown.
    public var line: Int

    public init(name: String, symbol: String = "", file: String = "", line: Int = 0) {
        self.name = name
        self.symbol = symbol
        self.file = file
        self.line = max(0, line)
    }
}

/// One piece of code that items ran (a closure, a block, a function, a job's resume function).
public struct ReportCode: Sendable, Equatable {
    /// "block", "function", "swift-closure", "job".
    public var kind: String
    public var what: ReportCodeLocation

    public init(kind: String, what: ReportCodeLocation) {
        self.kind = kind
        self.what = what
    }
}

/// One (code, call site) pair: what ran and where it was enqueued from. A blocking call's
/// site has no code (`code` -1): only where the caller blocked.
public struct ReportSite: Sendable, Equatable {
    /// Index into `ReportInput.codes`, or -1.
    public var code: Int
    /// The code's kind, or "none" for a blocking call site.
    public var kind: String
    /// The call site, when known.
    public var from: ReportCodeLocation?
    /// A Swift job's async stack, innermost first (empty otherwise).
    public var stack: [ReportCodeLocation] = []

    public init(code: Int, kind: String, from: ReportCodeLocation? = nil, stack: [ReportCodeLocation] = []) {
        self.code = code
        self.kind = kind
        self.from = from
        self.stack = stack
    }
}

/// A Swift actor and its visits (ActorStatistics in the analysis: a visit runs from a task's hop
/// onto the actor to its next hop; the part overlapping earlier visits is waiting).
public struct ReportActor: Sendable, Equatable {
    public var name: String
    public var type: String
    public var visits: [ReportActorVisit]
    public var runNs: Int64
    public var waitNs: Int64
    public var peakQueueDepth: Int

    public init(name: String, type: String, visits: [ReportActorVisit], runNs: Int64, waitNs: Int64, peakQueueDepth: Int) {
        self.name = name; self.type = type; self.visits = visits
        self.runNs = runNs; self.waitNs = waitNs; self.peakQueueDepth = peakQueueDepth
    }
}

public struct ReportActorVisit: Sendable, Equatable {
    public var startNs: Int64
    public var endNs: Int64
    public var waitNs: Int64
    /// The visiting task (index into `ReportInput.tasks`), or -1.
    public var task: Int

    public init(startNs: Int64, endNs: Int64, waitNs: Int64, task: Int) {
        self.startNs = startNs; self.endNs = endNs; self.waitNs = waitNs; self.task = task
    }
}

/// A Swift Concurrency task: its jobs are items, run one after another; between them it awaits.
public struct ReportTask: Sendable, Equatable {
    /// The runtime's task id.
    public var id: Int64
    /// The parent task (index into `ReportInput.tasks`), or -1.
    public var parent: Int
    /// Its jobs in order (indexes into `ReportInput.items`).
    public var jobs: [Int]
    public var onMainActor: Bool
    /// The codes its jobs resumed (indexes into `ReportInput.codes`), in first-run order.
    public var functions: [Int]
    /// A task of the Swift runtime itself (Task.sleep's timer), not the program's.
    public var runtime: Bool

    public init(id: Int64, parent: Int = -1, jobs: [Int], onMainActor: Bool = false, functions: [Int] = [],
                runtime: Bool = false) {
        self.id = id
        self.parent = parent
        self.jobs = jobs
        self.onMainActor = onMainActor
        self.functions = functions
        self.runtime = runtime
    }
}
