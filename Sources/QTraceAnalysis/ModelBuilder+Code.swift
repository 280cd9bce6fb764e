// Code identity while building: SITE, MODULE, BUILD_ID and JOB records, and the site ids
// that item, wait, apply and handler records carry (resolved to model indexes at the end,
// since a site's record may follow its first use on another thread by a clock tick).
import QTraceFormat

/// Builder state for code identity (kept apart so that traces without it cost nothing).
struct CodeBuildState {
    var siteByTraceID: [UInt32: Int32] = [:]
    var codeByAddress: [UInt64: Int32] = [:]
    var moduleByBase: [UInt64: Int32] = [:]
    var taskByID: [UInt32: Int32] = [:]
    var taskByAddress: [UInt64: Int32] = [:]
    /// ASYNC_FRAME nodes: id → (parent id, code address).
    var asyncFrames: [UInt32: (parent: UInt32, address: UInt64)] = [:]
    /// Each task's parent's address, resolved at the end: a parent's first job may be
    /// recorded after its children's (the async main's first job does not go through Dispatch).
    var parentAddress: [Int32: UInt64] = [:]
    /// Raw site ids of applies and source event handlers, resolved at the end.
    var applySite: [Int32: UInt32] = [:]
    var sourceHandlerSite: [Int: UInt32] = [:]
}

/// The widest site id a work item or blocked interval stores (Model.swift packs it in 24 bits).
let maxSiteID: UInt32 = 0xFF_FFFF

/// A record's site word as an id the model can keep, 0 when absent or out of range.
@inline(__always) func siteID(_ word: UInt64) -> UInt32 { word <= UInt64(maxSiteID) ? UInt32(word) : 0 }

extension ModelBuilder {
    mutating func siteRecorded(_ e: Event) {
        let kind = SiteCodeKind(rawValue: e.flags) ?? .block
        // A repeated record keeps the first; an id wider than items keep (24 bits) is damage.
        guard code.siteByTraceID[e.arg] == nil, e.arg != 0, e.arg <= maxSiteID else { return }
        // A job's capture word is its async stack (a leaf ASYNC_FRAME node), not a closure; a
        // wait's is its call stack, in the same nodes.
        let isJob = kind == .job, isWait = kind == .none
        var site = CodeSite(traceID: e.arg, codeKind: kind, code: e.a, capture: isJob || isWait ? 0 : e.b, caller: e.c)
        if isJob, e.b != 0, e.b <= UInt64(UInt32.max) { site.asyncStack = asyncStack(leaf: UInt32(e.b)) }
        if isWait, e.b != 0, e.b <= UInt64(UInt32.max) { site.callStack = asyncStack(leaf: UInt32(e.b)) }
        let address = !isJob && e.b != 0 ? e.b : e.a
        if kind != .none, address != 0 {
            let c: Int32
            if let known = code.codeByAddress[address] {
                c = known
            } else {
                c = Int32(model.codes.count)
                model.codes.append(TraceCode(codeKind: kind, address: address))
                code.codeByAddress[address] = c
            }
            site.codeIndex = Int(c)
            model.codes[Int(c)].sites.append(model.sites.count)
        }
        code.siteByTraceID[e.arg] = Int32(model.sites.count)
        model.sites.append(site)
    }

    /// A node of the async stacks' tree; a stack is read leaf to root when a site names it
    /// (its nodes precede the SITE record in the same stream).
    mutating func asyncFrameRecorded(_ e: Event) {
        guard e.arg != 0, e.b != 0 else { return }
        code.asyncFrames[e.arg] = (parent: UInt32(truncatingIfNeeded: e.a), address: e.b)
    }

    /// The addresses of the stack ending at `leaf`, innermost first (bounded: a damaged trace's
    /// parent links may loop).
    func asyncStack(leaf: UInt32) -> [UInt64] {
        var out: [UInt64] = []
        var node = leaf
        while node != 0, out.count < 64, let frame = code.asyncFrames[node] {
            out.append(frame.address)
            node = frame.parent
        }
        return out
    }

    mutating func moduleRecorded(_ e: Event) {
        code.moduleByBase[e.a] = Int32(model.modules.count)
        model.modules.append(TraceModule(path: e.string ?? "", base: e.a, start: e.b, end: e.c, buildID: nil))
    }

    mutating func buildIDRecorded(_ e: Event) {
        guard let m = code.moduleByBase[e.a], let id = e.string, !id.isEmpty else { return }
        model.modules[Int(m)].buildID = id
    }

    /// A Swift Concurrency job: the item just enqueued by this thread belongs to task `arg`.
    mutating func jobRecorded(_ e: Event, thread t: Int32) {
        guard let i = items.recentItem(id: e.a, submitter: t), e.flags == 0 else { return }  // tasks only
        let taskIndex: Int32
        if let known = code.taskByID[e.arg], model.tasks[Int(known)].address == e.b {
            taskIndex = known
        } else {
            taskIndex = Int32(model.tasks.count)
            var task = SwiftTask(id: e.arg, address: e.b)
            task.firstResume = e.c
            model.tasks.append(task)
            if e.d != 0 { code.parentAddress[taskIndex] = e.d }
            code.taskByID[e.arg] = taskIndex
            code.taskByAddress[e.b] = taskIndex
        }
        model.tasks[Int(taskIndex)].jobs.append(Int(i))
    }

    /// Site ids → model indexes, once every SITE record has been read (closeOpenState).
    mutating func resolveSites() {
        resolveTasks()
        // No early return without sites: site words then name no site and must become 0
        // (a fuzzed trace's raw ids indexed the empty site table).
        // Ids are dense from 1 in a shim's trace; a damaged trace's ids (up to 2^24, the
        // widest an item keeps) must not size the table: only ids of known sites are kept.
        let maxID = model.sites.reduce(0) { Swift.max($0, Int($1.traceID)) }
        let useDense = maxID <= 4 * model.sites.count + 65_536
        var dense = [UInt32](repeating: 0, count: useDense ? maxID + 1 : 0)
        var sparse: [UInt32: UInt32] = [:]
        for (s, site) in model.sites.enumerated() {
            if useDense { dense[Int(site.traceID)] = UInt32(s + 1) } else { sparse[site.traceID] = UInt32(s + 1) }
        }
        func resolve(_ raw: UInt32) -> UInt32 {
            useDense ? (Int(raw) < dense.count ? dense[Int(raw)] : 0) : (sparse[raw] ?? 0)
        }
        items.resolveSites(resolve)
        threads.resolveBlockedSites(resolve)
        for (a, raw) in code.applySite { model.applies[Int(a)].site = opt(Int32(resolve(raw)) - 1) }
        for c in model.continuations.indices where model.continuations[c].siteRaw != 0 {
            model.continuations[c].siteRaw = resolve(model.continuations[c].siteRaw)
        }
        for (s, raw) in code.sourceHandlerSite { model.sources[s].eventHandlerSite = opt(Int32(resolve(raw)) - 1) }
    }

    /// Parents by address, and which tasks ran on the main actor.
    mutating func resolveTasks() {
        for (t, address) in code.parentAddress {
            if let parent = code.taskByAddress[address], parent != t { model.tasks[Int(t)].parent = Int(parent) }
        }
        let mainQueue = queues.mainQueue
        for t in model.tasks.indices where mainQueue >= 0 {
            model.tasks[t].onMainActor = model.tasks[t].jobs.contains { items[$0].queueIndex == mainQueue }
        }
        // Task.sleep's timers and other tasks of the runtime: they resume the runtime's own
        // code and no job of theirs has a site of the program's.
        let runtime = model.modules.filter { $0.path.hasSuffix("/libswift_Concurrency.so") }
        guard !runtime.isEmpty else { return }
        for t in model.tasks.indices {
            let resume = model.tasks[t].firstResume
            let inRuntime = runtime.contains { resume >= $0.start && resume < $0.end }
            model.tasks[t].isRuntime = inRuntime && model.tasks[t].jobs.allSatisfy { items[$0].siteRaw == 0 }
        }
    }
}
