// Statistics per code (what items ran), per blocking call site and per Swift task. Pure
// function of the model; names come from the symbols applied to it (if any).
import QTraceFormat

/// Where a piece of code was submitted from, with how many items.
public struct CodeCaller: Sendable, Codable, Equatable {
    /// Index into `TraceModel.sites`.
    public var site: Int
    public var location: String
    public var items: Int
}

/// One code site as users read it: a closure, block or function and its items.
public struct CodeStats: Sendable, Codable {
    /// Index into `TraceModel.codes`.
    public var code: Int
    public var kind: String
    /// Short symbol, else module+offset, else the raw address.
    public var name: String
    /// Full demangled symbol, when known.
    public var symbol: String?
    /// `file:line` of the code (the closure's own line), when known.
    public var file: String?
    public var line: Int?
    public var module: String?
    public var address: String
    public var symbolStatus: String
    public var items = 0
    public var run = DurationStats()
    /// Ready → start waits of its items.
    public var wait = DurationStats()
    /// Queues its items ran on (indexes, by item count).
    public var queues: [Int] = []
    /// Where it was submitted from, most items first.
    public var callers: [CodeCaller] = []
    /// Items of Swift Concurrency jobs (tasks' partial functions).
    public var jobs = 0
    /// For Swift jobs: the async stack of its busiest site, innermost first ("name at File:line").
    public var asyncStack: [String]?
    /// For Foundation operations: the operations its items depended on (their labels, in the
    /// order first seen), nil for other codes.
    public var dependencies: [String]?
}

/// A blocking call site (sync, group wait, semaphore wait, apply): how long callers blocked.
public struct WaitSiteStats: Sendable, Codable {
    public var site: Int
    public var location: String
    public var file: String?
    public var line: Int?
    public var causes: [String]
    public var blocked = DurationStats()
    /// Blocked intervals on the main thread.
    public var onMainThread = 0
    /// (1.4) The call stack of the wait that blocked longest, innermost first, ≤ 8 frames
    /// ("Process.waitUntilExit() at Process.swift:869", then its callers); nil when the trace
    /// has only the caller.
    public var stack: [String]?
}

public struct TaskStats: Sendable, Codable {
    public var task: Int
    public var id: UInt32
    public var parent: Int?
    public var jobs: Int
    /// First job's enqueue → last job's end.
    public var lifetimeNs: UInt64
    public var runningNs: UInt64
    /// Jobs ready but not started (waiting for a thread or the actor).
    public var waitingNs: UInt64
    /// The rest of the lifetime: suspended at an `await`.
    public var awaitingNs: UInt64
    /// Its async functions (the codes its jobs resumed), in first-run order.
    public var functions: [String]
    public var onMainActor: Bool
    /// Where its first job entered: the focus frame of its async stack, with file:line.
    public var entry: String?
    /// The async stack of its first job with a stack, innermost first ("name at File:line").
    public var asyncStack: [String]?
}

public struct TaskSummary: Sendable, Codable {
    public var tasks = 0
    public var jobs = 0
    public var childTasks = 0
    /// Tasks of the Swift runtime itself (Task.sleep's timers), counted apart from `tasks`.
    public var runtimeTasks: Int?
    public var runningNs: UInt64 = 0
    public var awaitingNs: UInt64 = 0
    /// The longest-lived tasks first (at most 200).
    public var top: [TaskStats] = []
    public init() {}
}

extension CodeStats {
    /// From the pass's tally of each code's items.
    static func all(_ model: TraceModel, _ tally: CodeTally) -> [CodeStats] {
        guard !model.codes.isEmpty else { return [] }
        let (counts, jobCounts, perSite, runs, waits) = (tally.items, tally.jobs, tally.itemsPerSite, tally.runs, tally.waits)
        let queuesOfCode = tally.queueCounts.byFirst(count: model.codes.count)
        let dependencies = model.operationDependenciesByCode()
        return model.codes.indices.compactMap { c -> CodeStats? in
            guard counts[c] > 0 else { return nil }
            let code = model.codes[c]
            let what = code.what
            var stats = CodeStats(code: c, kind: code.codeKind.name, name: code.name, symbol: what?.function,
                                  file: what?.file, line: what?.line.flatMap { $0 > 0 ? $0 : nil }, module: what?.module,
                                  address: "0x" + String(code.address, radix: 16), symbolStatus: what?.status ?? "notSymbolized")
            stats.items = counts[c]
            stats.run = runs[c].stats
            stats.wait = waits[c].stats
            stats.jobs = jobCounts[c]
            stats.queues = queuesOfCode[c].sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
            if let busiest = code.sites.filter({ !model.sites[$0].asyncFrames.isEmpty }).max(by: { perSite[$0] < perSite[$1] }) {
                stats.asyncStack = model.asyncStackDescription(busiest)
            }
            if code.label != nil { stats.dependencies = dependencies[c] ?? [] }
            stats.callers = code.sites.filter { perSite[$0] > 0 }
                .map { CodeCaller(site: $0, location: model.callerDescription($0), items: perSite[$0]) }
                .sorted { ($0.items, $1.site) > ($1.items, $0.site) }
            return stats
        }.sorted { ($0.run.totalNs, $1.code) > ($1.run.totalNs, $0.code) }
    }
}

/// Counts (code, queue) pairs. Items of one code mostly come in runs on one queue: a run is
/// counted in place and added when it ends, into a table of every pair when there are at most
/// `denseLimit` (an index), else hashed (on a fan-out, where every item ends a run, a hash per
/// item was 2.5% of its `stats --json`).
struct PairCounter {
    private static let denseLimit = 1 << 20
    private let secondCount: Int
    /// Nil when hashed. A buffer, not an array: a run ends at every item of a fan-out, and an
    /// array's write costs a uniqueness check.
    private let dense: ColumnBuffer<Int>?
    private var counts: [UInt64: Int] = [:]
    private var run = (first: -1, second: -1)
    private var runLength = 0

    init(firstCount: Int, secondCount: Int) {
        self.secondCount = secondCount
        let size = firstCount.multipliedReportingOverflow(by: secondCount)
        dense = !size.overflow && size.partialValue <= Self.denseLimit ? ColumnBuffer(count: size.partialValue, repeating: 0) : nil
    }

    @inline(__always)
    mutating func add(_ first: Int, _ second: Int) {
        if first == run.first && second == run.second { runLength += 1; return }
        flush()
        run = (first, second)
        runLength = 1
    }

    @inline(__always)
    private mutating func flush() {
        guard runLength > 0 else { return }
        if let dense {
            dense[run.first * secondCount + run.second] += runLength
        } else {
            counts[UInt64(run.first) << 32 | UInt64(UInt32(truncatingIfNeeded: run.second)), default: 0] += runLength
        }
        runLength = 0
    }

    /// The counts per first element: `[first][second] = count`.
    mutating func byFirst(count: Int) -> [[Int: Int]] {
        flush()
        var out = [[Int: Int]](repeating: [:], count: count)
        for index in 0..<(dense?.count ?? 0) where dense![index] > 0 { out[index / secondCount][index % secondCount] = dense![index] }
        for (key, n) in counts { out[Int(key >> 32)][Int(UInt32(truncatingIfNeeded: key))] = n }
        return out
    }
}

extension WaitSiteStats {
    static func all(_ model: TraceModel) -> [WaitSiteStats] {
        guard !model.sites.isEmpty else { return [] }
        // Sites whose waits name one line are one row (a wait reached from one program line
        // through different library paths has a site per stack); keyed by the first site.
        var rowOfSite: [Int: Int] = [:], rowOfName: [String: Int] = [:]
        func row(_ s: Int) -> Int {
            if let known = rowOfSite[s] { return known }
            let r = rowOfName[model.siteDescription(s)] ?? s
            rowOfName[model.siteDescription(s)] = r
            rowOfSite[s] = r
            return r
        }
        var blocked: [Int: DurationRecorder] = [:]
        var causes: [Int: Set<String>] = [:]
        var main: [Int: Int] = [:]
        var longest: [Int: (ns: UInt64, site: Int)] = [:]
        for thread in model.threads {
            for b in thread.blocked {
                guard let s = b.site, let end = b.end else { continue }
                let r = row(s), length = end >= b.start ? end - b.start : 0
                if blocked[r] == nil { blocked[r] = DurationRecorder() }
                blocked[r]!.record(length)
                causes[r, default: []].insert(b.cause.rawValue)
                if thread.kind == .main { main[r, default: 0] += 1 }
                if length >= longest[r]?.ns ?? 0 { longest[r] = (length, s) }
            }
        }
        return blocked.keys.map { s in
            let from = model.sites[s].from
            return WaitSiteStats(site: s, location: model.siteDescription(s), file: from?.file,
                                 line: from?.line.flatMap { $0 > 0 ? $0 : nil },
                                 causes: causes[s, default: []].sorted(), blocked: blocked[s]!.stats,
                                 onMainThread: main[s, default: 0],
                                 stack: longest[s].flatMap { model.callStackDescription($0.site) })
        }.sorted { ($0.blocked.totalNs, $1.site) > ($1.blocked.totalNs, $0.site) }
    }
}

extension TaskSummary {
    static let topLimit = 200

    init(_ model: TraceModel) {
        self.init()
        guard !model.tasks.isEmpty else { return }
        let runtime = model.tasks.filter(\.isRuntime).count
        tasks = model.tasks.count - runtime
        runtimeTasks = runtime > 0 ? runtime : nil
        var all: [TaskStats] = []
        for (t, task) in model.tasks.enumerated() where !task.isRuntime {
            let stats = TaskStats(model, t)
            jobs += task.jobs.count
            if task.parent != nil { childTasks += 1 }
            runningNs += stats.runningNs
            awaitingNs += stats.awaitingNs
            all.append(stats)
        }
        top = Array(all.sorted { ($0.lifetimeNs, $1.task) > ($1.lifetimeNs, $0.task) }.prefix(Self.topLimit))
    }
}

extension TaskStats {
    init(_ model: TraceModel, _ t: Int) {
        let task = model.tasks[t]
        var first = UInt64.max, last: UInt64 = 0, running: UInt64 = 0, waiting: UInt64 = 0
        for i in task.jobs {
            let item = model.items[i]
            if let e = item.enqueued ?? item.started { first = Swift.min(first, e) }
            if let end = item.ended { last = Swift.max(last, end) }
            running += item.runTime ?? 0
            waiting += item.wait ?? 0
        }
        let functions = model.taskFunctionCodes(t).map { model.codes[$0].name }
        let stackSite = task.jobs.lazy.compactMap { model.items[$0].site }.first { !model.sites[$0].asyncFrames.isEmpty }
        let lifetime = first == .max || last < first ? 0 : last - first
        self.init(task: t, id: task.id, parent: task.parent, jobs: task.jobs.count, lifetimeNs: lifetime,
                  runningNs: running, waitingNs: waiting,
                  awaitingNs: lifetime > running + waiting ? lifetime - running - waiting : 0,
                  functions: functions, onMainActor: task.onMainActor,
                  entry: task.jobs.first.flatMap { model.code(ofItem: $0) }.map { $0.what?.described ?? $0.name },
                  asyncStack: stackSite.map { model.asyncStackDescription($0) })
    }
}

extension TraceModel {
    /// A site's call site for the callers list: "Loader.swift:12 in Loader.load()".
    public func callerDescription(_ s: Int) -> String {
        let site = sites[s]
        guard let from = site.from else {
            if site.caller == 0 { return site.codeKind == .job ? "Swift task" : "unknown" }
            return "0x" + String(site.caller, radix: 16)
        }
        if let line = from.fileLine { return "\(line) in \(from.name)" }
        return from.name
    }
}
