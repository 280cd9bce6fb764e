// Code identity for synthetic reports: known codes ("closure #1 in Loader.load()" at
// Loader.swift:42 ...), the call sites that enqueue them, blocking call sites, Swift tasks
// made of jobs, and the CODE table computed from the items the way the analysis would.
// Deterministic, and it draws no random numbers (the simulation stays what it was).
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
}

extension Simulation {
    /// Fills in codes, sites, the items' and blocked intervals' sites, tasks, the CODE table
    /// and a finding naming a site.
    func addCodeIdentity(_ input: inout ReportInput) {
        var codes = SyntheticCodes.all
        if hostile {
            codes[4].name = SyntheticReport.hostileLabels[0]
            codes[4].symbol = SyntheticReport.hostileLabels[1]
        }
        input.codes = codes.map { ReportCode(kind: $0.kind, what: $0.location) }
        // Sites: 2 per dispatch code (callers c % 3 and (c + 1) % 3), 1 per job code, 2 waits.
        var sites: [ReportSite] = []
        for c in 0..<SyntheticCodes.dispatchCount {
            for k in 0..<2 {
                sites.append(ReportSite(code: c, kind: codes[c].kind, from: SyntheticCodes.callers[(c + k) % 3]))
            }
        }
        let jobSites = SyntheticCodes.jobCodes.map { c in
            sites.append(ReportSite(code: c, kind: "job"))
            return sites.count - 1
        }
        sites.append(ReportSite(code: -1, kind: "none", from: SyntheticCodes.syncCaller))
        sites.append(ReportSite(code: -1, kind: "none", from: SyntheticCodes.semaphoreCaller))
        let syncSite = sites.count - 2, semaphoreSite = sites.count - 1
        input.sites = sites

        for i in 0..<input.items.count {
            // One item in ten has no site (recorded before code identity, or not resolved).
            if (i * 7) % 10 == 0 { input.items.site[i] = -1; continue }
            let code = Int(input.items.queue[i]) % SyntheticCodes.dispatchCount
            input.items.site[i] = Int32(code * 2 + (i / 3) % 2)
        }
        input.tasks = makeTasks(&input, jobSites: jobSites)
        for b in input.blocked.indices {
            switch input.blocked[b].cause {
            case .sync: input.blocked[b].site = syncSite
            case .semaphore: input.blocked[b].site = semaphoreSite
            default: break
            }
        }
        for f in input.findings.indices where input.findings[f].id == "main-thread-blocked" {
            input.findings[f].sites = [syncSite]
        }
        if let slow = slowestItemWithSite(input) {
            let site = Int(input.items.site[slow])
            input.findings.append(ReportFinding(
                id: "slow-code", severity: .info,
                message: "The slowest item ran \(codes[sites[site].code].name)",
                startNs: input.items.startNs[slow], endNs: input.items.endNs[slow],
                queues: [Int(input.items.queue[slow])], items: [slow], sites: [site]))
        }
        input.stats.append(SyntheticCodeTable.make(input))
    }

    func slowestItemWithSite(_ input: ReportInput) -> Int? {
        let items = input.items
        return (0..<items.count).filter { items.site[$0] >= 0 && input.sites[Int(items.site[$0])].code >= 0 }
            .max { items.endNs[$0] - items.startNs[$0] < items.endNs[$1] - items.startNs[$1] }
    }

    /// Tasks from every fifth item on a global queue (and a few main-queue ones, the main
    /// actor): a task takes the next candidate that starts after its last job ended, up to a
    /// few jobs; every fourth task is a child of the task made before it.
    func makeTasks(_ input: inout ReportInput, jobSites: [Int]) -> [ReportTask] {
        let items = input.items
        let limit = 30 + items.count / 1000
        let candidates = (0..<items.count).filter { i in
            let q = items.queue[i]
            guard i % 5 == 1, items.startNs[i] >= 0, items.endNs[i] >= items.startNs[i] else { return false }
            return (1...5).contains(q) || (q == 0 && i % 3 == 0)
        }.sorted { (items.startNs[$0], $0) < (items.startNs[$1], $1) }
        var tasks: [ReportTask] = []
        var lastEnd: [Int64] = []
        var open: [Int] = []
        for i in candidates {
            let t: Int
            if let free = open.first(where: { lastEnd[$0] <= items.startNs[i] }) {
                t = free
            } else if tasks.count < limit {
                t = tasks.count
                let parent = t % 4 == 3 ? t - 1 : -1
                tasks.append(ReportTask(id: Int64(t + 1), parent: parent, jobs: []))
                lastEnd.append(0)
                open.append(t)
            } else {
                continue
            }
            tasks[t].jobs.append(i)
            lastEnd[t] = items.endNs[i]
            if items.queue[i] == 0 { tasks[t].onMainActor = true }
            // Even tasks alternate between both async functions, odd ones stay in one.
            let code = t % 2 == 0 ? tasks[t].jobs.count % 2 : 1
            input.items.site[i] = Int32(jobSites[code])
            if !tasks[t].functions.contains(SyntheticCodes.jobCodes[code]) {
                tasks[t].functions.append(SyntheticCodes.jobCodes[code])
            }
            if tasks[t].jobs.count >= 3 + t % 3 { open.removeAll { $0 == t } }
        }
        return tasks
    }
}

/// The CODE table of a synthetic input, as `AnalysisReportBuilder.codeTable` lays it out.
enum SyntheticCodeTable {
    static func make(_ input: ReportInput) -> ReportTable {
        let items = input.items
        var runs = [[Int64]](repeating: [], count: input.codes.count)
        var waits = runs
        var queues = [[Int: Int]](repeating: [:], count: input.codes.count)
        var perSite = [Int](repeating: 0, count: input.sites.count)
        for i in 0..<items.count where items.site[i] >= 0 {
            let s = Int(items.site[i])
            let c = input.sites[s].code
            guard c >= 0 else { continue }
            perSite[s] += 1
            runs[c].append(items.endNs[i] - items.startNs[i])
            waits[c].append(items.startNs[i] - items.enqueueNs[i])
            queues[c][Int(items.queue[i]), default: 0] += 1
        }
        let columns = ReportTable.codeColumns
        var rows: [(total: Int64, row: ReportRow)] = []
        for (c, code) in input.codes.enumerated() where !runs[c].isEmpty {
            let r = runs[c].sorted(), w = waits[c].sorted()
            let total = r.reduce(0, +)
            let file = code.what.file.split(separator: "/").last.map(String.init) ?? ""
            let byCount = queues[c].sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
            let queueText = byCount.prefix(2).map { input.queues[$0].label }.joined(separator: ", ")
                + (byCount.count > 2 ? " +\(byCount.count - 2)" : "")
            let callers = input.sites.indices.filter { input.sites[$0].code == c && perSite[$0] > 0 }
                .sorted { (perSite[$0], $1) > (perSite[$1], $0) }
            let callerText = callers.first.flatMap { input.sites[$0].from }
                .map { "\($0.file.split(separator: "/").last ?? ""):\($0.line) in \($0.name)" + (callers.count > 1 ? " +\(callers.count - 1)" : "") } ?? ""
            rows.append((total, ReportRow(values: [
                .text(code.what.name), .text(file.isEmpty ? "" : "\(file):\(code.what.line)"), .text(code.kind),
                .number(Double(r.count)), .number(Simulation.percentile(r, 0.5)), .number(Simulation.percentile(r, 0.99)),
                .number(Double(r.last ?? 0)), .number(Double(total)), .number(Simulation.percentile(w, 0.99)),
                .text(queueText), .text(callerText),
            ], objectIndex: c)))
        }
        return ReportTable(id: "code", title: "Code", rowObject: .code, columns: columns,
                           rows: rows.sorted { $0.total > $1.total }.map(\.row))
    }
}
