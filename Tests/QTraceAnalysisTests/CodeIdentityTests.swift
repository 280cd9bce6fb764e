// Code identity on synthetic event streams: sites resolve to codes and callers, waits carry
// their call sites, jobs form tasks with parents, and statistics and findings name the code.
import QTraceFormat
import XCTest
@testable import QTraceAnalysis
import QTraceText
import QTraceAnalysisTestSupport

final class CodeIdentityTests: XCTestCase {
    let serial: UInt64 = 0x5000
    let worker: Int32 = 200

    /// Two closures enqueued from two call sites each: site ids 1..3, two codes.
    func script() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(worker)
        s.queue(serial, "com.example.loader")
        s.add(.module, 0, tid: mainTid, a: 0x10000, b: 0x10000, c: 0x90000, string: "/app/Loader")
        s.add(.buildID, 0, tid: mainTid, a: 0x10000, string: "abcd")
        s.add(.site, us(1), tid: mainTid, arg: 1, flags: SiteCodeKind.swiftClosure.rawValue, a: 0x11000, b: 0x12000, c: 0x13000, d: 0x7000)
        s.add(.site, us(1), tid: mainTid, arg: 2, flags: SiteCodeKind.swiftClosure.rawValue, a: 0x11000, b: 0x12000, c: 0x13100, d: 0x7000)
        s.add(.site, us(1), tid: mainTid, arg: 3, flags: SiteCodeKind.function.rawValue, a: 0x14000, c: 0x13200, d: 0x13200)
        for n in 0..<10 {
            let id = UInt64(n + 1), t = us(10 + UInt64(n) * 100)
            s.add(.enqueue, t, tid: mainTid, arg: ItemKind.async.rawValue, a: id, b: serial, d: n < 6 ? 1 : (n < 8 ? 2 : 3))
            s.start(id, at: t + us(5), on: worker)
            s.end(id, at: t + us(5) + us(UInt64(n + 1) * 10), on: worker)
        }
        return s
    }

    func testSitesResolveToCodesAndItems() {
        let model = script().model()
        XCTAssertEqual(model.sites.count, 3)
        XCTAssertEqual(model.codes.count, 2, "sites 1 and 2 run the same closure")
        XCTAssertEqual(model.codes[0].address, 0x12000, "a Swift closure is named by its capture")
        XCTAssertEqual(model.codes[0].sites, [0, 1])
        XCTAssertEqual(model.modules, [TraceModule(path: "/app/Loader", base: 0x10000, start: 0x10000, end: 0x90000, buildID: "abcd")])
        let sites = model.items.compactMap(\.site)
        XCTAssertEqual(sites.count, 10)
        XCTAssertEqual(sites.filter { $0 == 0 }.count, 6)
        XCTAssertEqual(model.codeAddresses, [0x12000, 0x12FFF, 0x130FF, 0x131FF, 0x14000])
    }

    /// Items keep their site ids only when the SITE records gave them in order (1, 2, 3...);
    /// otherwise, or when an item names a site no record gave, the ids are resolved.
    func testItemSitesResolveWhetherOrNotIdsAreInOrder() {
        for (ids, expected) in [([1, 2, 3, 4], [0, 1, 2, nil]), ([5, 7, 9, 4], [0, 1, 2, nil]), ([1, 2, 3, 0], [0, 1, 2, nil])] {
            var s = TraceScript()
            s.mainAndGlobals()
            s.thread(worker)
            s.queue(serial, "com.example.loader")
            for id in ids.prefix(3) {
                s.add(.site, us(1), tid: mainTid, arg: UInt32(id), flags: SiteCodeKind.function.rawValue, a: 0x14000 + UInt64(id), c: 0x13200)
            }
            for (n, site) in ids.enumerated() {
                let id = UInt64(n + 1), t = us(10 + UInt64(n) * 100)
                s.add(.enqueue, t, tid: mainTid, arg: ItemKind.async.rawValue, a: id, b: serial, d: UInt64(site))
                s.start(id, at: t + us(5), on: worker)
                s.end(id, at: t + us(9), on: worker)
            }
            XCTAssertEqual(s.model().items.map(\.site), expected, "site ids \(ids)")
        }
        let site = { (id: UInt32) in CodeSite(traceID: id, codeKind: .function, code: 0x14000, capture: 0, caller: 0) }
        let inOrder = SiteResolver((1...3).map { site(UInt32($0)) })
        XCTAssertTrue(inOrder.keepsEveryID(upTo: 3))
        XCTAssertFalse(inOrder.keepsEveryID(upTo: 4), "an id no record gave becomes 0")
        XCTAssertFalse(SiteResolver([5, 6].map(site)).keepsEveryID(upTo: 1))
    }

    /// The queue rules name the site that fed a queue most.
    func testFeedingSiteOfAQueue() throws {
        let model = script().model()
        let stats = TraceStatistics(model: model)
        let queue = try XCTUnwrap(model.queues.firstIndex { $0.address == serial })
        XCTAssertEqual(RuleContext(model: model, stats: stats).feedingSites([queue]), [queue: 0])
    }

    func testStatisticsPerCodeUseTheSymbols() {
        var model = script().model()
        model.applySymbols([
            0x12000: CodeLocation(function: "closure #1 () -> () in App.Loader.load() -> ()", shortName: "closure #1 in Loader.load()",
                                  file: "/src/Loader.swift", line: 42, module: "Loader", offset: 0x2000, status: "ok"),
            0x12FFF: CodeLocation(function: "App.Loader.load() -> ()", shortName: "Loader.load()", file: "/src/Loader.swift",
                                  line: 40, module: "Loader", offset: 0x3000, status: "ok"),
        ])
        let result = AnalysisResult(model: model)
        let codes = result.statistics.sites
        XCTAssertEqual(codes.count, 2)
        let closure = codes.first { $0.code == 0 }!
        XCTAssertEqual(closure.name, "closure #1 in Loader.load()")
        XCTAssertEqual(closure.line, 42)
        XCTAssertEqual(closure.items, 8)
        XCTAssertEqual(closure.run.maxNs, us(80))
        XCTAssertEqual(closure.callers.map(\.items), [6, 2])
        XCTAssertEqual(closure.callers.first?.location, "Loader.swift:40 in Loader.load()")
        XCTAssertEqual(closure.queues.count, 1)
        let function = codes.first { $0.code == 1 }!
        XCTAssertEqual(function.name, "0x14000", "an unsymbolized code shows its address")
        XCTAssertEqual(function.run.totalNs, us(90) + us(100))
        let text = StatsText.render(result, tracePath: nil, width: 160, by: .code)
        XCTAssertTrue(text.contains("closure #1 in Loader.load()"), text)
        XCTAssertTrue(text.contains("Loader.swift:42"), text)
    }

    func testBlockingWaitNamesItsCallSiteInTheFinding() {
        var s = TraceScript()
        s.mainAndGlobals()
        let group: UInt64 = 0x9000
        s.add(.site, us(1), tid: mainTid, arg: 7, flags: SiteCodeKind.none.rawValue, c: 0x15000, d: 0x15000)
        s.add(.groupCreate, us(1), tid: mainTid, a: group)
        s.add(.groupEnter, us(2), tid: mainTid, a: group)
        // The main thread serves the main queue (an app): main-thread rules apply.
        s.item(99, on: mainQueueAddress, at: us(2), runOn: mainTid, start: us(2), end: us(3))
        s.add(.groupWaitBegin, us(3), tid: mainTid, a: group, b: .max)
        s.add(.groupWaitEnd, ms(200), tid: mainTid, a: group, b: 7)
        var model = s.model()
        model.applySymbols([0x14FFF: CodeLocation(function: "App.main() -> ()", shortName: "main()", file: "/src/App.swift",
                                                  line: 88, module: "App", offset: 0x5000, status: "ok")])
        let blocked = model.threads[0].blocked
        XCTAssertEqual(blocked.count, 1)
        XCTAssertEqual(blocked[0].site, 0)
        let result = AnalysisResult(model: model)
        guard let finding = result.findings.first(where: { $0.id == "main.blocking-call" }) else {
            return XCTFail("no main.blocking-call finding")
        }
        XCTAssertTrue(finding.message.contains("a group wait in main() at App.swift:88"), finding.message)
        XCTAssertTrue(finding.objects.contains { $0.kind == .site })
        XCTAssertEqual(result.statistics.waitSites.first?.location, "main() at App.swift:88")
        XCTAssertEqual(result.statistics.waitSites.first?.onMainThread, 1)
    }

    func testJobsMakeTasksWithParents() {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(worker)
        let parentTask: UInt64 = 0xA000, childTask: UInt64 = 0xB000
        s.add(.site, us(1), tid: mainTid, arg: 1, flags: SiteCodeKind.job.rawValue, a: 0x16000, d: 0x7100)
        var id: UInt64 = 1
        func job(_ s: inout TraceScript, task: UInt32, address: UInt64, parent: UInt64, at t: UInt64) {
            s.add(.enqueue, t, tid: mainTid, arg: ItemKind.async.rawValue, flags: EnqueueFlags([.function, .swiftConcurrency]).rawValue,
                  a: id, b: globalDefault, d: 1)
            s.add(.job, t, tid: mainTid, arg: task, a: id, b: address, c: 0x16000, d: parent)
            s.start(id, at: t + us(2), on: worker)
            s.end(id, at: t + us(12), on: worker)
            id += 1
        }
        job(&s, task: 1, address: parentTask, parent: 0, at: us(10))
        job(&s, task: 2, address: childTask, parent: parentTask, at: us(20))
        job(&s, task: 2, address: childTask, parent: parentTask, at: us(100))
        job(&s, task: 1, address: parentTask, parent: 0, at: us(200))
        let model = s.model()
        XCTAssertEqual(model.tasks.count, 2)
        XCTAssertEqual(model.tasks.map(\.jobs.count), [2, 2])
        XCTAssertEqual(model.tasks[1].parent, 0)
        let stats = AnalysisResult(model: model).statistics.tasks
        XCTAssertEqual(stats.tasks, 2)
        XCTAssertEqual(stats.childTasks, 1)
        let child = stats.top.first { $0.id == 2 }!
        XCTAssertEqual(child.lifetimeNs, us(92))
        XCTAssertEqual(child.runningNs, us(20))
        XCTAssertEqual(child.awaitingNs, us(92) - us(20) - us(4))
    }

    func testCodeBoundsMatchNamesAndClosures() throws {
        var model = script().model()
        model.applySymbols([0x12000: CodeLocation(function: nil, shortName: "closure #1 in Loader.load()", file: nil, line: nil,
                                                  module: "Loader", offset: 0, status: "noDebugInfo")])
        let summary = AnalysisSummary(result: AnalysisResult(model: model), tracePath: nil, generator: "test")
        let bound = try QueueBound(parsing: "Loader.load=50us", metric: .runMax)
        let lines = BoundCheck.violations(summary: summary, bounds: [bound], failOn: nil)
        XCTAssertEqual(lines, ["code 'closure #1 in Loader.load()': run max 80.0 µs > 50.0 µs"])
        let decoded = try AnalysisSummary.decode(summary.jsonData())
        XCTAssertEqual(decoded.statistics.sites.count, 2)
        XCTAssertEqual(decoded.schema, "qtrace-summary/1.4")
    }

    /// Damaged code identity records: ids 0, huge or repeated, sites nobody announced, jobs of
    /// unknown items, tasks that are their own or each other's parents.
    func testHostileCodeIdentityRecordsBuildAModel() {
        var s = script()
        s.add(.site, us(2), tid: mainTid, arg: 0, a: 0x1)                           // id 0
        s.add(.site, us(2), tid: mainTid, arg: .max, a: 0x2)                        // beyond 24 bits
        s.add(.site, us(2), tid: mainTid, arg: 1, flags: 200, a: 0x3)               // repeated id, unknown kind
        s.add(.site, us(2), tid: mainTid, arg: 0xFF_FFFF, a: 0x4)                   // sparse, widest kept
        s.add(.enqueue, us(3), tid: mainTid, arg: ItemKind.async.rawValue, a: 500, b: serial, d: 77)  // unknown site
        s.add(.enqueue, us(3), tid: mainTid, arg: ItemKind.async.rawValue, a: 501, b: serial, d: .max) // too wide
        s.add(.job, us(4), tid: mainTid, arg: 9, a: 12345, b: 0xA0)                 // no such item
        s.add(.enqueue, us(5), tid: mainTid, arg: ItemKind.async.rawValue, a: 502, b: serial)
        s.add(.job, us(5), tid: mainTid, arg: 9, a: 502, b: 0xA0, d: 0xA0)          // its own parent
        s.add(.enqueue, us(6), tid: mainTid, arg: ItemKind.async.rawValue, a: 503, b: serial)
        s.add(.job, us(6), tid: mainTid, arg: 10, a: 503, b: 0xB0, d: 0xA0)
        s.add(.enqueue, us(7), tid: mainTid, arg: ItemKind.async.rawValue, a: 504, b: serial)
        s.add(.job, us(7), tid: mainTid, arg: 11, a: 504, b: 0xC0, d: 0xB0)
        s.add(.module, us(8), tid: mainTid, a: 0, b: .max, c: 0, string: "<img src=x onerror=alert(1)>")
        s.add(.buildID, us(8), tid: mainTid, a: 0x999, string: "zz")               // unknown module
        let result = s.analysis()
        let model = result.model
        XCTAssertEqual(model.sites.map(\.traceID), [1, 2, 3, 0xFF_FFFF], "0 and out-of-range ids dropped, the first of a repeat kept")
        XCTAssertNil(model.items.first { $0.id == 500 }?.site)
        XCTAssertNil(model.items.first { $0.id == 501 }?.site)
        XCTAssertEqual(model.tasks.map(\.id), [9, 10, 11])
        XCTAssertNil(model.tasks[0].parent, "not its own parent")
        XCTAssertEqual(model.tasks[1].parent, 0)
        XCTAssertEqual(model.tasks[2].parent, 1)
        XCTAssertEqual(model.modules.last?.path, "<img src=x onerror=alert(1)>")
        XCTAssertEqual(result.statistics.tasks.tasks, 3)
        _ = StatsText.render(result, tracePath: nil, by: .code)
        _ = StatsText.render(result, tracePath: nil, by: .task)
    }

    func testFormatRoundTripOfCodeIdentityRecords() throws {
        let path = NSTemporaryDirectory() + "code-identity-\(getpid()).qtrace"
        defer { unlink(path) }
        let events = script().sortedEvents
        try TraceWriter.write(events, to: path, pid: 42, mainTid: mainTid)
        let file = try TraceFile(path: path)
        var read: [Event] = []
        file.forEachEvent { read.append($0) }
        let sites = read.filter { $0.type == .site }
        XCTAssertEqual(sites.map(\.arg), [1, 2, 3])
        XCTAssertEqual(sites[0].b, 0x12000)
        XCTAssertEqual(read.filter { $0.type == .enqueue }.map(\.siteID), [1, 1, 1, 1, 1, 1, 2, 2, 3, 3])
        XCTAssertEqual(read.first { $0.type == .module }?.string, "/app/Loader")
        XCTAssertEqual(read.first { $0.type == .enqueue }?.summary.contains("site=1"), true)
    }
}
