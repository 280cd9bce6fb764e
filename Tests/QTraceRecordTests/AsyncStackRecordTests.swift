// Swift Concurrency as servers write it, recorded for real (Tests/Fixtures/qtrace-fixtures/
// AsyncStacks.swift): jobs named by the program's own frame of their async stack (never a
// thunk), `--focus` choosing which modules are the program, Task.sleep's timer tasks counted
// apart, and blocking calls in async code raised with their line.
import Foundation
import QTraceAnalysis
import XCTest

final class AsyncStackRecordTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    static let source = "Tests/Fixtures/qtrace-fixtures/AsyncStacks.swift"

    func markers() throws -> [String: Int] {
        let text = try String(contentsOf: Paths.repo.appendingPathComponent(Self.source), encoding: .utf8)
        var lines: [String: Int] = [:]
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard let r = line.range(of: "SITE: ") else { continue }
            lines[String(line[r.upperBound...]).trimmingCharacters(in: .whitespaces)] = n + 1
        }
        return lines
    }

    func testJobsAreNamedByTheProgramsOwnFrame() throws {
        let dir = Paths.tempDir("async-stacks")
        let (run, trace) = record([Paths.fixtures, "async-stacks"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("blocking done"), run.stdout)
        let lines = try markers()
        let s = try statsSummary(trace, cache: dir).summary
        let names = s.statistics.sites.map(\.name)
        for bad in ["thunk", "generic", "partial apply"] {
            XCTAssertFalse(names.contains { $0.contains(bad) }, "a code named '\(bad)': \(names)")
        }
        // Children that never suspend: one job each, entering through the TaskGroup's thunk.
        let child = try XCTUnwrap(s.statistics.sites.first { $0.name == "closure #1 in closure #1 in hashChildren(_:)" }, "\(names)")
        XCTAssertEqual(child.items, 8)
        XCTAssertEqual(child.line, lines["hash-child"])
        // Every module of this program is the program by default: the innermost frame names it.
        let next = try XCTUnwrap(s.statistics.sites.first { $0.name == "Inbound.next(_:) (await #1)" }, "\(names)")
        // One job per request resumes there (20) when its Task.yield suspends; the runtime may
        // skip the suspension when nothing else is ready (14 seen on a loaded machine). The
        // names, not that count, are what this test is about.
        XCTAssertTrue((1...20).contains(next.items), "\(next.items)")
        let stack = try XCTUnwrap(next.asyncStack)
        XCTAssertTrue(stack.first?.hasPrefix("Inbound.next(_:) (await #1) at Inbound.swift:") ?? false, "\(stack)")
        XCTAssertTrue(stack.contains("handleOrder(_:_:) (await #1) at AsyncStacks.swift:\(lines["handle-order"]!)"), "\(stack)")

        // With the library's module left out, the handler that awaited it names the jobs.
        let focused = try statsSummary(trace, cache: dir, focus: "qtrace_fixtures").summary
        let handler = try XCTUnwrap(focused.statistics.sites.first { $0.name == "handleOrder(_:_:) (await #1)" },
                                    "\(focused.statistics.sites.map(\.name))")
        XCTAssertEqual(handler.items, next.items, "the same jobs, named by their handler")
        XCTAssertEqual(handler.line, lines["handle-order"])
        XCTAssertFalse(focused.statistics.sites.contains { $0.name.hasPrefix("Inbound.next") })

        // The blocking calls made from async code, each at its own line.
        let blocking = s.findings.filter { $0.id == "swift.blocking-in-async" }
        XCTAssertEqual(blocking.count, 2, "\(blocking.map(\.message))")
        for marker in ["blocking-wait", "blocking-sync"] {
            let line = "AsyncStacks.swift:\(lines[marker]!)"
            XCTAssertTrue(blocking.contains { $0.message.contains(line) }, "\(marker): \(blocking.map(\.message))")
        }
    }

    func testTaskSleepTimersAreTheRuntimesTasks() throws {
        let dir = Paths.tempDir("task-sleep")
        let children = 10
        let (run, trace) = record([Paths.fixtures, "task-sleep", "\(children)"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let s = try statsSummary(trace, cache: dir).summary
        let tasks = s.statistics.tasks
        XCTAssertEqual(tasks.tasks, children + 1, "\(tasks.top.map { ($0.id, $0.functions) })")
        XCTAssertEqual(tasks.childTasks, children)
        XCTAssertEqual(tasks.runtimeTasks, children, "one timer task per Task.sleep")
        for child in tasks.top where child.parent != nil {
            XCTAssertTrue(child.functions.first?.hasPrefix("closure #1 in closure #1 in") ?? false, "\(child.functions)")
            XCTAssertTrue(child.functions.allSatisfy { $0.contains("taskSleepChildren") }, "\(child.functions)")
        }
        XCTAssertFalse(s.findings.contains { $0.id.hasPrefix("swift.") }, "\(s.findings.map(\.message))")
    }

    /// The clean Swift Concurrency fixture raises none of the pool's rules.
    func testCleanTaskGroupRaisesNoPoolFinding() throws {
        let dir = Paths.tempDir("task-group-clean")
        let (run, trace) = record([Paths.fixtures, "task-group", "6"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let s = try statsSummary(trace, cache: dir).summary
        XCTAssertFalse(s.findings.contains { $0.id.hasPrefix("swift.") }, "\(s.findings.map(\.message))")
        XCTAssertFalse(s.statistics.sites.contains { $0.name.contains("thunk") }, "\(s.statistics.sites.map(\.name))")
    }
}

extension AsyncStackRecordTests {
    /// An actor called from 100 tasks at once: every visit counted, contention > 0; called by
    /// one task after another: the same visits, no wait. `stats --by actor` and JSON agree.
    func testActorVisitsAndContention() throws {
        let dir = Paths.tempDir("actor-calls")
        var byMode: [String: ActorStats] = [:]
        for mode in ["contended", "serial"] {
            let (run, trace) = record([Paths.fixtures, "actor-calls", "100", mode], in: dir, name: mode)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stdout.contains("ledger entries=100"), run.stdout)
            let s = try statsSummary(trace, cache: dir).summary
            let ledger = try XCTUnwrap(s.statistics.actors.first { $0.type?.hasSuffix(".Ledger") ?? false },
                                       "\(s.statistics.actors.map(\.name))")
            XCTAssertEqual(ledger.visits, 101, "100 posts and the last one: \(mode)")
            XCTAssertTrue(ledger.name.hasPrefix("Ledger 0x"), ledger.name)
            let text = runProgram([Paths.qtrace, "stats", "--by", "actor", "--wide", trace], environment: ["XDG_CACHE_HOME": dir.path])
            XCTAssertEqual(text.status, 0, text.stderr)
            let row = try XCTUnwrap(text.stdout.split(separator: "\n").first { $0.hasPrefix(ledger.name) }, text.stdout)
            XCTAssertTrue(row.contains(" 101 "), String(row))
            XCTAssertTrue(row.contains(formatDuration(ledger.waitNs)), "\(row) vs \(ledger.waitNs)")
            byMode[mode] = ledger
            let contention = s.findings.filter { $0.id == "swift.actor-contention" }
            XCTAssertEqual(contention.count, mode == "contended" ? 1 : 0, "\(mode): \(contention.map(\.message))")
        }
        let contended = try XCTUnwrap(byMode["contended"]), serial = try XCTUnwrap(byMode["serial"])
        XCTAssertGreaterThan(contended.waitNs, 0)
        XCTAssertGreaterThan(contended.contendedVisits, 0)
        XCTAssertEqual(contended.tasks, 101)
        XCTAssertEqual(serial.waitNs, 0)
        XCTAssertEqual(serial.contendedVisits, 0)
        XCTAssertEqual(serial.peakQueueDepth, 0)
        XCTAssertEqual(serial.tasks, 1)
    }
}

extension AsyncStackRecordTests {
    /// A task hopping to the main actor of a dispatchMain() program, whose main queue worker
    /// threads drain: the main executor is the actor "MainActor"; each visit runs from the hop
    /// to the hop back (the 3 ms wait inside it is run time, the time before the main queue ran
    /// it is wait); blocking the main actor is not blocking a cooperative-pool thread.
    func testMainActorVisitsAreNotPoolJobs() throws {
        let dir = Paths.tempDir("main-actor")
        let (run, trace) = record([Paths.fixtures, "main-actor", "20"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("frames=20"), run.stdout)
        let s = try statsSummary(trace, cache: dir).summary
        let main = try XCTUnwrap(s.statistics.actors.first { $0.isMainActor }, "\(s.statistics.actors.map(\.name))")
        XCTAssertEqual(main.name, "MainActor")
        XCTAssertEqual(main.visits, 21, "20 frames and MainActor.run")
        XCTAssertGreaterThanOrEqual(main.runNs, 20 * 3_000_000, "each frame waited 3 ms on the main actor")
        let pool = s.findings.filter { ["swift.blocking-in-async", "swift.pool-starvation"].contains($0.id) }
        XCTAssertEqual(pool.map(\.message), [])
    }
}

extension AsyncStackRecordTests {
    /// real-async-stacks.html and real-actors.html for Tests/BrowserTests/test_swift_concurrency.py.
    func testWriteSwiftConcurrencyReportsForTheBrowserTests() throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] else {
            throw XCTSkip("QTRACE_BROWSER_FIXTURES is not set (make test sets it)")
        }
        for (name, argv) in [("real-async-stacks", ["async-stacks"]), ("real-actors", ["actor-calls", "30", "contended"])] {
            let (run, path) = record([Paths.fixtures] + argv, in: URL(fileURLWithPath: dir), name: name)
            XCTAssertEqual(run.status, 0, run.stderr)
            let report = runProgram([Paths.qtrace, "report", path, "-o", "\(dir)/\(name).html"])
            XCTAssertEqual(report.status, 0, report.stderr)
        }
    }
}

extension AsyncStackRecordTests {
    /// A job that computes 250 ms of CPU time without suspending raises swift.long-job at its
    /// closure; the same work cut by a sleep every 10 ms does not. With --sched: on a loaded
    /// machine a 10 ms slice can take over 100 ms of wall time, and only scheduler states tell
    /// the time it waited for a CPU from the time it computed.
    func testLongJobWithoutSuspending() throws {
        let dir = Paths.tempDir("long-job")
        let (run, trace) = record([Paths.fixtures, "long-job"], in: dir, extraArgs: ["--sched"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let s = try statsSummary(trace, cache: dir).summary
        let long = s.findings.filter { $0.id == "swift.long-job" }
        XCTAssertEqual(long.count, 1, "\(long.map(\.message)); record's stderr: \(run.stderr)")
        let line = try XCTUnwrap(markers()["long-job"])
        let closure = try XCTUnwrap(s.statistics.sites.first { $0.name == "closure #1 in longJob()" }, "\(s.statistics.sites.map(\.name))")
        XCTAssertLessThanOrEqual(abs((closure.line ?? 0) - line), 3, "the closure's own line, just above the loop")
        // Named by the function it resumed in, said as such ("resumed in", as swift.blocking-in-async).
        XCTAssertTrue(long.first?.message.contains("resumed in closure #1 in longJob()") ?? false, long.first?.message ?? "")
    }
}

extension AsyncStackRecordTests {
    /// Three continuations (an -O program: only optimized code calls the runtime's continuation
    /// entry points through the PLT): resumed later, resumed before the await, never resumed.
    /// Only the last raises swift.continuation-never-resumed, at the line that made it; the
    /// program's output is the same traced.
    func testContinuationNeverResumed() throws {
        let dir = Paths.tempDir("continuations")
        let source = Paths.repo.appendingPathComponent("Tests/Fixtures/swift-optimized/continuations.swift").path
        let exe = dir.appendingPathComponent("continuations").path
        let build = runProgram(["/opt/swift/usr/bin/swiftc", "-O", "-g", source, "-o", exe], timeout: 300)
        XCTAssertEqual(build.status, 0, build.stderr)
        let plain = runProgram([exe])
        let (run, trace) = record([exe], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, plain.stdout)
        XCTAssertTrue(run.stdout.contains("continuations resumed=3"), run.stdout)
        let s = try statsSummary(trace, cache: dir).summary
        let never = s.findings.filter { $0.id == "swift.continuation-never-resumed" }
        XCTAssertEqual(never.count, 1, "\(s.findings.map(\.message))")
        let text = try String(contentsOfFile: source, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let line = try XCTUnwrap(text.firstIndex { $0.contains("SITE: leaked-continuation") }) + 1
        let message = never.first?.message ?? ""
        XCTAssertTrue(message.contains("made in leaked()") && message.contains("at continuations.swift:\(line)"), message)
    }
}
