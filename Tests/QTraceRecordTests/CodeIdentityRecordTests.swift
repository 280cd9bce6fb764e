// Code identity end to end: real programs with code on known lines (marked `// SITE:` in
// their sources) are recorded, symbolized by `qtrace stats --json`, and every site must name
// its function and exact file:line; tasks, stripped and rebuilt binaries are checked too.
import Foundation
import QTraceAnalysis
import XCTest

final class CodeIdentityRecordTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    /// Line numbers of the `SITE: name` markers in a source file of the repository.
    func markers(in source: String) throws -> [String: Int] { try sourceMarkers(in: source) }

    func code(_ s: AnalysisSummary, calledFrom file: String, line: Int) -> CodeStats? {
        s.statistics.sites.first { $0.callers.contains { $0.location.hasPrefix("\(file):\(line) ") } }
    }

    func testSwiftSitesNameTheirFunctionAndLine() throws {
        let dir = Paths.tempDir("code-sites")
        let (run, trace) = record([Paths.fixtures, "code-sites"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("code sites done"))
        let lines = try markers(in: "Tests/Fixtures/qtrace-fixtures/CodeSites.swift")
        let (s, _) = try statsSummary(trace, cache: dir)
        let file = "CodeSites.swift"
        let expected: [(String, String)] = [
            ("closure-async", "closure #1 in CodeSiteLoader.loadAll()"),
            ("closure-sync", "closure in CodeSiteLoader.loadAll()"),
            ("work-item", "closure #1 in codeSitesWorkItem()"),
            ("group-async", "closure #1 in codeSitesGroupWait()"),
            ("after", "closure #1 in codeSitesAfterAndSource()"),
            ("source-handler", "closure #2 in codeSitesAfterAndSource()"),
        ]
        for (marker, name) in expected {
            let line = try XCTUnwrap(lines[marker], marker)
            let c = try XCTUnwrap(code(s, calledFrom: file, line: line), "no code enqueued from \(file):\(line) (\(marker)): \(s.statistics.sites.map(\.name))")
            XCTAssertEqual(c.name, name, marker)
            XCTAssertEqual(c.line, line, "\(marker): the closure's own line")
            XCTAssertEqual(c.file.map { URL(fileURLWithPath: $0).lastPathComponent }, file, marker)
            XCTAssertEqual(c.symbolStatus, "ok", marker)
        }
        let loader = try XCTUnwrap(code(s, calledFrom: file, line: lines["closure-async"]!))
        XCTAssertEqual(loader.items, 3)
        XCTAssertTrue(loader.symbol?.contains("CodeSiteLoader.loadAll") ?? false, loader.symbol ?? "")
        // The blocking group wait names its line, in the wait table and in the finding.
        let waitLine = lines["group-wait"]!
        XCTAssertTrue(s.statistics.waitSites.contains { $0.location == "codeSitesGroupWait() at \(file):\(waitLine)" },
                      "\(s.statistics.waitSites.map(\.location))")
        let finding = s.findings.first { $0.id == "main.blocking-call" && $0.message.contains("group wait") }
        XCTAssertTrue(finding?.message.contains("in codeSitesGroupWait() at \(file):\(waitLine)") ?? false,
                      finding?.message ?? "no finding: \(s.findings.map(\.message))")
        XCTAssertTrue(finding?.objects.contains { $0.kind == .site } ?? false)
    }

    func testTaskGroupGivesOneTaskPerChildWithItsJobs() throws {
        let dir = Paths.tempDir("task-group")
        let children = 4
        let (run, trace) = record([Paths.fixtures, "task-group", "\(children)"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("tasks sum=6"), run.stdout)
        let (s, _) = try statsSummary(trace, cache: dir)
        let tasks = s.statistics.tasks
        XCTAssertEqual(tasks.tasks, children + 1, "the detached task and its children: \(tasks.top.map { ($0.id, $0.jobs, $0.functions) })")
        XCTAssertEqual(tasks.childTasks, children)
        let childStats = tasks.top.filter { $0.parent != nil }
        XCTAssertEqual(childStats.count, children)
        for child in childStats {
            XCTAssertEqual(child.jobs, 3, "a start and two resumptions after awaits: \(child.functions)")
            XCTAssertTrue(child.functions.contains { $0.hasPrefix("codeSiteChild(_:)") }, "\(child.functions)")
        }
        let parent = try XCTUnwrap(tasks.top.first { $0.parent == nil })
        XCTAssertTrue(parent.functions.contains { $0.contains("codeSiteTasks(children:)") }, "\(parent.functions)")
        let text = runProgram([Paths.qtrace, "stats", "--by", "task", trace], environment: ["XDG_CACHE_HOME": dir.path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("TASKS (Swift Concurrency)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("\(children + 1) tasks (\(children) child)"), text.stdout)
    }

    func testCBlocksAndFunctionsNameTheirLines() throws {
        let dir = Paths.tempDir("c-sites")
        let exe = buildCProgram("Tests/Fixtures/c/code_sites.c", in: dir, extraFlags: ["-g"])
        let (run, trace) = record([exe], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = try markers(in: "Tests/Fixtures/c/code_sites.c")
        let (s, _) = try statsSummary(trace, cache: dir)
        let block = try XCTUnwrap(code(s, calledFrom: "code_sites.c", line: lines["c-block"]!), "\(s.statistics.sites.map(\.callers))")
        XCTAssertEqual(block.items, 4)
        XCTAssertEqual(block.line, lines["c-block"])
        XCTAssertTrue(block.name.contains("submit_blocks"), block.name)
        let function = try XCTUnwrap(code(s, calledFrom: "code_sites.c", line: lines["c-function"]!))
        XCTAssertEqual(function.name, "work_fn")
        XCTAssertEqual(function.items, 4, "3 async and 1 sync")
        XCTAssertEqual(function.callers.map(\.items), [3, 1])
        let sync = try XCTUnwrap(code(s, calledFrom: "code_sites.c", line: lines["c-sync"]!))
        XCTAssertEqual(sync.code, function.code, "the same function from another site: one code, two callers")
        XCTAssertTrue(s.statistics.waitSites.contains { $0.location == "main at code_sites.c:\(lines["c-semaphore-wait"]!)" },
                      "\(s.statistics.waitSites.map(\.location))")
    }

    /// A forked child writes its own trace: its sites must be announced there again, or its
    /// items would name sites whose records are in the parent's file.
    func testForkedChildAnnouncesItsOwnSites() throws {
        let dir = Paths.tempDir("fork-sites")
        let (run, parent) = record([Paths.fixtures, "fork"], in: dir, name: "fork")
        XCTAssertEqual(run.status, 0, run.stderr)
        let childName = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .first { $0.hasPrefix("fork.") && $0 != "fork.qtrace" && $0.hasSuffix(".qtrace") })
        for trace in [parent, dir.appendingPathComponent(childName).path] {
            let (s, _) = try statsSummary(trace, cache: dir)
            XCTAssertFalse(s.statistics.sites.isEmpty, "\(trace): no code sites")
            XCTAssertTrue(s.statistics.sites.allSatisfy { $0.symbolStatus == "ok" || $0.symbolStatus == "noDebugInfo" },
                          "\(trace): \(s.statistics.sites.map { ($0.name, $0.symbolStatus) })")
            XCTAssertTrue(s.statistics.sites.contains { $0.callers.contains { $0.location.contains("main.swift:") } },
                          "\(trace): \(s.statistics.sites.map(\.callers))")
        }
    }

    func testStrippedAndRebuiltBinariesAreReportedNotMisnamed() throws {
        let dir = Paths.tempDir("c-stripped")
        let exe = buildCProgram("Tests/Fixtures/c/code_sites.c", in: dir, extraFlags: ["-g", "-Wl,--build-id=0x1111"])
        // Stripped: module+offset, no crash, exit 0.
        let stripped = dir.appendingPathComponent("code_sites_stripped").path
        XCTAssertEqual(runProgram(["/opt/swift/usr/bin/llvm-objcopy", "--strip-all", exe, stripped]).status, 0)
        let (run1, trace1) = record([stripped], in: dir, name: "stripped")
        XCTAssertEqual(run1.status, 0, run1.stderr)
        let (s1, _) = try statsSummary(trace1, cache: dir)
        let mine = s1.statistics.sites.filter { $0.module == "code_sites_stripped" }
        XCTAssertFalse(mine.isEmpty, "\(s1.statistics.sites.map { ($0.name, $0.module ?? "-") })")
        for c in mine {
            XCTAssertTrue(c.name.hasPrefix("code_sites_stripped+0x"), c.name)
            XCTAssertNil(c.line)
        }
        // Rebuilt after recording (another build-id): reported, and shown as module+offset.
        let (run2, trace2) = record([exe], in: dir, name: "rebuilt")
        XCTAssertEqual(run2.status, 0, run2.stderr)
        _ = buildCProgram("Tests/Fixtures/c/code_sites.c", in: dir, extraFlags: ["-g", "-Wl,--build-id=0x2222"])
        let (s2, stderr) = try statsSummary(trace2, cache: dir.appendingPathComponent("empty-cache"))
        XCTAssertTrue(stderr.contains("code_sites") && stderr.contains("build-id"), stderr)
        let rebuilt = s2.statistics.sites.filter { $0.module == "code_sites" }
        XCTAssertFalse(rebuilt.isEmpty)
        for c in rebuilt {
            XCTAssertEqual(c.symbolStatus, "buildIDMismatch")
            XCTAssertTrue(c.name.hasPrefix("code_sites+0x"), c.name)
        }
    }
}
