// Code identity for synthetic reports: known codes ("closure #1 in Loader.load()" at
// Loader.swift:42 ...), the call sites that enqueue them, blocking call sites and Swift tasks
// made of jobs, written as SITE and JOB records and site words; their symbols are given to the
// model as QTraceSymbols would (`applySymbols`). Deterministic, and it draws no random numbers
// (the simulation stays what it was).
import QTraceAnalysis
import QTraceFormat
import QTraceViewModel

struct SyntheticCode {
    var kind: String
    var name: String
    var symbol: String
    var file: String
    var line: Int

    var location: ReportCodeLocation { ReportCodeLocation(name: name, symbol: symbol, file: file, line: line) }
}

enum SyntheticCodes {
    /// Codes that dispatch items run (the first `dispatchCount`), then the tasks' job codes.
    static let all = [
        SyntheticCode(kind: "swift-closure", name: "closure #1 in Loader.load()",
                      symbol: "closure #1 () -> () in App.Loader.load() -> ()", file: "/src/App/Loader.swift", line: 42),
        SyntheticCode(kind: "swift-closure", name: "closure #2 in ImageCache.decode(_:)",
                      symbol: "closure #2 () -> () in App.ImageCache.decode(Foundation.Data) -> ()",
                      file: "/src/App/ImageCache.swift", line: 88),
        SyntheticCode(kind: "block", name: "__main_block_invoke_3", symbol: "__main_block_invoke_3",
                      file: "/src/legacy/main.m", line: 120),
        SyntheticCode(kind: "function", name: "Database.flush()", symbol: "App.Database.flush() -> ()",
                      file: "/src/App/Database.swift", line: 210),
        SyntheticCode(kind: "swift-closure", name: "closure #1 in Parser.parse(data:)",
                      symbol: "closure #1 () -> () in App.Parser.parse(data: Foundation.Data) -> ()",
                      file: "/src/App/Parser.swift", line: 17),
        // Not symbolized: module + offset only.
        SyntheticCode(kind: "block", name: "libfoo.so+0x1a2b0", symbol: "", file: "", line: 0),
        SyntheticCode(kind: "job", name: "Loader.fetch(url:)",
                      symbol: "(1) suspend resume partial function for App.Loader.fetch(url: Foundation.URL) async throws -> Foundation.Data",
                      file: "/src/App/Loader.swift", line: 61),
        SyntheticCode(kind: "job", name: "ThumbnailRenderer.render(_:)",
                      symbol: "(2) await resume partial function for App.ThumbnailRenderer.render(App.Image) async -> App.Image",
                      file: "/src/App/ThumbnailRenderer.swift", line: 33),
    ]
    static let dispatchCount = 6
    static let jobCodes = [6, 7]

    /// Where dispatch items are enqueued from (two callers per code).
    static let callers = [
        ReportCodeLocation(name: "ViewController.viewDidLoad()", symbol: "App.ViewController.viewDidLoad() -> ()",
                           file: "/src/App/ViewController.swift", line: 17),
        ReportCodeLocation(name: "AppDelegate.application(_:didFinishLaunchingWithOptions:)",
                           symbol: "App.AppDelegate.application(_: UIApplication, didFinishLaunchingWithOptions: [AnyHashable: Any]?) -> Bool",
                           file: "/src/App/AppDelegate.swift", line: 30),
        ReportCodeLocation(name: "Loader.loadAll()", symbol: "App.Loader.loadAll() -> ()", file: "/src/App/Loader.swift", line: 12),
    ]
    /// Blocking call sites: a sync and a semaphore wait.
    static let syncCaller = ReportCodeLocation(name: "ViewController.reload()", symbol: "App.ViewController.reload() -> ()",
                                               file: "/src/App/ViewController.swift", line: 61)
    static let semaphoreCaller = ReportCodeLocation(name: "Worker.waitForResult()", symbol: "App.Worker.waitForResult() -> ()",
                                                    file: "/src/App/Worker.swift", line: 23)

    /// Where code `c` is in the simulated program, and where caller `k` (`callers`, then the
    /// sync and the semaphore wait's callers) returns to.
    static func codeAddress(_ c: Int) -> UInt64 { 0x5000_0000 + UInt64(c) * 0x1000 }
    static func callerAddress(_ k: Int) -> UInt64 { 0x6000_0000 + UInt64(k) * 0x100 }
    static let allCallers = callers + [syncCaller, semaphoreCaller]
    static let syncCallerIndex = callers.count, semaphoreCallerIndex = callers.count + 1
    /// The thunk every Swift closure's block invokes (the closure is its capture).
    static let closureThunk: UInt64 = 0x4000_0000

    /// The codes (the hostile set names one with hostile labels) as the model's symbols.
    static func codes(hostile: Bool) -> [SyntheticCode] {
        var codes = all
        if hostile {
            codes[4].name = SyntheticReport.hostileLabels[0]
            codes[4].symbol = SyntheticReport.hostileLabels[1]
        }
        return codes
    }

    /// What QTraceSymbols would answer for the program's addresses (`TraceModel.applySymbols`).
    static func locations(hostile: Bool) -> [UInt64: CodeLocation] {
        var out: [UInt64: CodeLocation] = [:]
        for (c, code) in codes(hostile: hostile).enumerated() {
            out[codeAddress(c)] = code.file.isEmpty
                ? CodeLocation(function: nil, shortName: nil, file: nil, line: nil, module: "libfoo.so", offset: 0x1a2b0,
                               status: "notSymbolized")
                : location(code.location, address: codeAddress(c))
        }
        for (k, caller) in allCallers.enumerated() { out[callerAddress(k)] = location(caller, address: callerAddress(k)) }
        return out
    }

    static func location(_ l: ReportCodeLocation, address: UInt64) -> CodeLocation {
        CodeLocation(function: l.symbol, shortName: l.name, file: l.file, line: l.line, module: "synthetic", offset: address,
                     status: "ok", swiftModule: "App")
    }
}

/// Which site and task each simulated item gets, and the SITE records naming them. Sites
/// (trace ids from 1): three per dispatch code (enqueued from callers c % 3 and (c + 1) % 3,
/// and a sync from ViewController.reload()), one per job code, one semaphore wait.
struct CodePlan {
    struct Job {
        var arg: UInt32, b: UInt64, c: UInt64, d: UInt64
    }

    let kindOfItem: [ReportItemKind]
    let queueOfItem: [Int32]
    /// Item index → its task's JOB record.
    var jobs: [Int: (job: Job, site: Int)] = [:]

    static let sitesPerCode = 3
    static var jobSiteBase: Int { 1 + SyntheticCodes.dispatchCount * sitesPerCode }
    var semaphoreWaitSite: Int { Self.jobSiteBase + SyntheticCodes.jobCodes.count }

    init(_ simulation: Simulation) {
        kindOfItem = simulation.items.kind
        queueOfItem = simulation.items.queue
        jobs = Self.tasks(simulation)
    }

    static func dispatchSite(code: Int, caller k: Int) -> Int { 1 + code * sitesPerCode + k }

    static func timerHandlerSite(_ simulation: Simulation) -> Int {
        dispatchSite(code: simulation.timerQueue % SyntheticCodes.dispatchCount, caller: 0)
    }

    /// An item's site: its task's job site; none for one item in ten (recorded before code
    /// identity, or not resolved); else its queue's code, from one of two callers.
    func site(ofItem i: Int) -> Int {
        if let job = jobs[i] { return job.site }
        if (i * 7) % 10 == 0 { return 0 }
        let code = Int(queueOfItem[i]) % SyntheticCodes.dispatchCount
        return Self.dispatchSite(code: code, caller: kindOfItem[i] == .sync ? 2 : (i / 3) % 2)
    }

    func job(ofItem i: Int) -> Job? { jobs[i]?.job }

    func addSites(_ list: inout EventList, tid: Int32) {
        let codes = SyntheticCodes.all
        func add(_ id: Int, code c: Int?, caller k: Int?) {
            let kind: SiteCodeKind = c.map { Self.siteKind(codes[$0].kind) } ?? .none
            let address = c.map(SyntheticCodes.codeAddress) ?? 0
            let closure = kind == .swiftClosure
            list.add(.site, 0, tid: tid, arg: UInt32(id), flags: kind.rawValue, a: closure ? SyntheticCodes.closureThunk : address,
                     b: closure ? address : 0, c: k.map { SyntheticCodes.callerAddress($0) + 1 } ?? 0)
        }
        for c in 0..<SyntheticCodes.dispatchCount {
            add(Self.dispatchSite(code: c, caller: 0), code: c, caller: c % 3)
            add(Self.dispatchSite(code: c, caller: 1), code: c, caller: (c + 1) % 3)
            add(Self.dispatchSite(code: c, caller: 2), code: c, caller: SyntheticCodes.syncCallerIndex)
        }
        for (j, c) in SyntheticCodes.jobCodes.enumerated() { add(Self.jobSiteBase + j, code: c, caller: nil) }
        add(semaphoreWaitSite, code: nil, caller: SyntheticCodes.semaphoreCallerIndex)
    }

    static func siteKind(_ name: String) -> SiteCodeKind {
        switch name {
        case "swift-closure": .swiftClosure
        case "function": .function
        case "job": .job
        default: .block
        }
    }

    /// Tasks from every fifth item on a global queue (and a few main-queue ones, the main
    /// actor): a task takes the next candidate that starts after its last job ended, up to a
    /// few jobs; every fourth task is a child of the task made before it. Even tasks alternate
    /// between both async functions, odd ones stay in one.
    static func tasks(_ simulation: Simulation) -> [Int: (job: Job, site: Int)] {
        let items = simulation.items
        let limit = 30 + items.count / 1000
        let candidates = (0..<items.count).filter { i in
            let q = items.queue[i]
            guard i % 5 == 1, items.kind[i] != .sourceHandler, items.submitterThread[i] >= 0,
                  items.endNs[i] >= items.startNs[i] else { return false }
            return (1...5).contains(q) || (q == 0 && i % 3 == 0)
        }.sorted { (items.startNs[$0], $0) < (items.startNs[$1], $1) }
        func address(_ t: Int) -> UInt64 { 0x7000_0000 + UInt64(t) * 0x100 }
        var jobs: [Int: (job: Job, site: Int)] = [:]
        var jobCount: [Int] = [], lastEnd: [Int64] = [], open: [Int] = []
        for i in candidates {
            let t: Int
            if let free = open.first(where: { lastEnd[$0] <= items.startNs[i] }) {
                t = free
            } else if jobCount.count < limit {
                t = jobCount.count
                jobCount.append(0)
                lastEnd.append(0)
                open.append(t)
            } else {
                continue
            }
            jobCount[t] += 1
            lastEnd[t] = items.endNs[i]
            let code = t % 2 == 0 ? jobCount[t] % 2 : 1
            let parent = t % 4 == 3 ? address(t - 1) : 0
            jobs[i] = (Job(arg: UInt32(t + 1), b: address(t), c: SyntheticCodes.codeAddress(SyntheticCodes.jobCodes[code]), d: parent),
                       jobSiteBase + code)
            if jobCount[t] >= 3 + t % 3 { open.removeAll { $0 == t } }
        }
        return jobs
    }
}
