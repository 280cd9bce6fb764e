// Code identity while the model is built: SITE, MODULE, BUILD_ID, ASYNC_FRAME and JOB
// records make the model's sites, codes, modules and tasks. Item, wait, apply, handler and
// continuation records carry raw site ids, resolved to model indexes at the end (a site's
// record may follow its first use on another thread by a clock tick): `siteResolver`.
import QTraceFormat

/// The widest site id a work item or blocked interval stores (Model.swift packs it in 24 bits).
let maxSiteID: UInt32 = 0xFF_FFFF

/// A record's site word as an id the model can keep, 0 when absent or out of range.
@inline(__always) func siteID(_ word: UInt64) -> UInt32 { word <= UInt64(maxSiteID) ? UInt32(word) : 0 }

/// Sites, codes, modules and tasks (moved into the model by `ModelBuilder.closeOpenState`);
/// kept apart so that traces without code identity cost nothing.
struct CodeIdentity {
    private(set) var sites: [CodeSite] = []
    private(set) var codes: [TraceCode] = []
    private(set) var modules: [TraceModule] = []
    private(set) var tasks: [SwiftTask] = []
    private var siteByTraceID: [UInt32: Int32] = [:]
    private var codeByAddress: [UInt64: Int32] = [:]
    private var moduleByBase: [UInt64: Int32] = [:]
    private var taskByID: [UInt32: Int32] = [:]
    private var taskByAddress: [UInt64: Int32] = [:]
    /// ASYNC_FRAME nodes: id → (parent id, code address).
    private var asyncFrames: [UInt32: (parent: UInt32, address: UInt64)] = [:]
    /// Each task's parent's address, resolved at the end: a parent's first job may be
    /// recorded after its children's (the async main's first job does not go through Dispatch).
    private var parentAddress: [Int32: UInt64] = [:]
    /// Raw site ids of applies and source event handlers, resolved at the end.
    private(set) var applySites: [Int32: UInt32] = [:]
    private(set) var sourceHandlerSites: [Int: UInt32] = [:]
    /// Codes made for Foundation operations, by label (`labelledCopy`).
    private var codeByOperationLabel: [String: Int] = [:]

    mutating func noteApplySite(_ a: Int32, _ raw: UInt32) { applySites[a] = raw }
    mutating func noteSourceHandlerSite(_ s: Int, _ raw: UInt32) { sourceHandlerSites[s] = raw }

    /// The raw site of source `s`'s event handler, 0 when unknown.
    @inline(__always)
    func sourceHandlerSite(_ s: Int) -> UInt32 { sourceHandlerSites.isEmpty ? 0 : sourceHandlerSites[s] ?? 0 }

    mutating func siteRecorded(_ e: Event) {
        let kind = SiteCodeKind(rawValue: e.flags) ?? .block
        // A repeated record keeps the first; an id wider than items keep (24 bits) is damage.
        guard siteByTraceID[e.arg] == nil, e.arg != 0, e.arg <= maxSiteID else { return }
        // A job's capture word is its async stack (a leaf ASYNC_FRAME node), not a closure; a
        // wait's is its call stack, in the same nodes.
        let isJob = kind == .job, isWait = kind == .none
        var site = CodeSite(traceID: e.arg, codeKind: kind, code: e.a, capture: isJob || isWait ? 0 : e.b, caller: e.c)
        if isJob, e.b != 0, e.b <= UInt64(UInt32.max) { site.asyncStack = asyncStack(leaf: UInt32(e.b)) }
        if isWait, e.b != 0, e.b <= UInt64(UInt32.max) { site.callStack = asyncStack(leaf: UInt32(e.b)) }
        let address = !isJob && e.b != 0 ? e.b : e.a
        if kind != .none, address != 0 {
            let c: Int32
            if let known = codeByAddress[address] {
                c = known
            } else {
                c = Int32(codes.count)
                codes.append(TraceCode(codeKind: kind, address: address))
                codeByAddress[address] = c
            }
            site.codeIndex = Int(c)
            codes[Int(c)].sites.append(sites.count)
        }
        siteByTraceID[e.arg] = Int32(sites.count)
        sites.append(site)
    }

    /// A node of the async stacks' tree; a stack is read leaf to root when a site names it
    /// (its nodes precede the SITE record in the same stream).
    mutating func asyncFrameRecorded(_ e: Event) {
        guard e.arg != 0, e.b != 0 else { return }
        asyncFrames[e.arg] = (parent: UInt32(truncatingIfNeeded: e.a), address: e.b)
    }

    /// The addresses of the stack ending at `leaf`, innermost first (bounded: a damaged trace's
    /// parent links may loop).
    func asyncStack(leaf: UInt32) -> [UInt64] {
        var out: [UInt64] = []
        var node = leaf
        while node != 0, out.count < 64, let frame = asyncFrames[node] {
            out.append(frame.address)
            node = frame.parent
        }
        return out
    }

    mutating func moduleRecorded(_ e: Event) {
        moduleByBase[e.a] = Int32(modules.count)
        modules.append(TraceModule(path: e.string ?? "", base: e.a, start: e.b, end: e.c, buildID: nil))
    }

    mutating func buildIDRecorded(_ e: Event) {
        guard let m = moduleByBase[e.a], let id = e.string, !id.isEmpty else { return }
        modules[Int(m)].buildID = id
    }

    /// A Swift Concurrency job: item `i`, just enqueued, belongs to task `arg`.
    mutating func jobRecorded(_ e: Event, item i: Int32) {
        let taskIndex: Int32
        if let known = taskByID[e.arg], tasks[Int(known)].address == e.b {
            taskIndex = known
        } else {
            taskIndex = Int32(tasks.count)
            var task = SwiftTask(id: e.arg, address: e.b)
            task.firstResume = e.c
            tasks.append(task)
            if e.d != 0 { parentAddress[taskIndex] = e.d }
            taskByID[e.arg] = taskIndex
            taskByAddress[e.b] = taskIndex
        }
        tasks[Int(taskIndex)].jobs.append(Int(i))
    }

    /// Parents by address, which tasks ran on the main actor, and which are the runtime's own.
    /// Before the items' sites are resolved: a job's raw site tells whether it had one.
    mutating func resolveTasks(mainQueue: Int32, items: ItemTracker) {
        for (t, address) in parentAddress {
            if let parent = taskByAddress[address], parent != t { tasks[Int(t)].parent = Int(parent) }
        }
        for t in tasks.indices where mainQueue >= 0 {
            tasks[t].onMainActor = tasks[t].jobs.contains { items[$0].queueIndex == mainQueue }
        }
        // Task.sleep's timers and other tasks of the runtime: they resume the runtime's own
        // code and no job of theirs has a site of the program's.
        let runtime = modules.filter { $0.path.hasSuffix("/libswift_Concurrency.so") }
        guard !runtime.isEmpty else { return }
        for t in tasks.indices {
            let resume = tasks[t].firstResume
            let inRuntime = runtime.contains { resume >= $0.start && resume < $0.end }
            tasks[t].isRuntime = inRuntime && tasks[t].jobs.allSatisfy { items[$0].siteRaw == 0 }
        }
    }

    /// Raw site ids → model site indexes + 1 (0: no site), once every SITE record is read.
    func siteResolver() -> SiteResolver { SiteResolver(sites) }

    /// A copy of site `s` under a code of its own named `label` (one code per label): a
    /// Foundation operation's items all run libFoundation's closure.
    mutating func labelledCopy(ofSite s: Int, label: String) -> Int {
        var site = sites[s]
        site.traceID = 0
        let c = codeByOperationLabel[label] ?? codes.count
        if c == codes.count {
            var code = TraceCode(codeKind: site.codeIndex.map { codes[$0].codeKind } ?? .block, address: 0)
            code.label = label
            codes.append(code)
            codeByOperationLabel[label] = c
        }
        site.codeIndex = c
        codes[c].sites.append(sites.count)
        sites.append(site)
        return sites.count - 1
    }
}

/// Raw site ids → model site indexes + 1 (0: no site).
struct SiteResolver {
    private var dense: [UInt32] = []
    private var sparse: [UInt32: UInt32] = [:]
    private let useDense: Bool

    init(_ sites: [CodeSite]) {
        // No early return without sites: site words then name no site and must become 0
        // (a fuzzed trace's raw ids indexed the empty site table).
        // Ids are dense from 1 in a shim's trace; a damaged trace's ids (up to 2^24, the
        // widest an item keeps) must not size the table: only ids of known sites are kept.
        let maxID = sites.reduce(0) { Swift.max($0, Int($1.traceID)) }
        useDense = maxID <= 4 * sites.count + 65_536
        dense = [UInt32](repeating: 0, count: useDense ? maxID + 1 : 0)
        for (s, site) in sites.enumerated() {
            if useDense { dense[Int(site.traceID)] = UInt32(s + 1) } else { sparse[site.traceID] = UInt32(s + 1) }
        }
    }

    func resolve(_ raw: UInt32) -> UInt32 {
        useDense ? (Int(raw) < dense.count ? dense[Int(raw)] : 0) : (sparse[raw] ?? 0)
    }

    /// Whether `resolve` returns every id from 1 to `largest` unchanged.
    func keepsEveryID(upTo largest: UInt32) -> Bool {
        guard largest > 0 else { return true }
        guard useDense, Int(largest) < dense.count else { return false }
        for raw in 1...Int(largest) where dense[raw] != UInt32(raw) { return false }
        return true
    }
}
