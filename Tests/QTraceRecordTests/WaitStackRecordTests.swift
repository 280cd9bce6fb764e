// Waits named at the caller (docs/code-identity.md, "Wait stacks"): a wait made inside a
// library is attributed to the first frame of the program's own code (the focus rule of Swift
// jobs, `--focus`), with its short call stack in the wait table and the finding.
import Foundation
import QTraceAnalysis
import XCTest

final class WaitStackRecordTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    func testWaitInsideALibraryIsNamedByTheProgramsLine() throws {
        let dir = Paths.tempDir("library-waits")
        let (run, trace) = record([Paths.fixtures, "library-waits"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("reply arrived"), run.stdout)
        let lines = try sourceMarkers(in: "Tests/Fixtures/qtrace-fixtures/CodeSites.swift")
        let libraryLine = "Inbound.swift:\(try sourceMarkers(in: "Tests/Fixtures/async-router-kit/Inbound.swift")["library-wait"]!)"
        let s = try statsSummary(trace, cache: dir, focus: "qtrace_fixtures").summary
        let waitSites = s.statistics.waitSites

        let callerLine = "CodeSites.swift:\(lines["library-caller"]!)"
        let wait = try XCTUnwrap(waitSites.first { $0.location.hasSuffix(" at \(callerLine)") },
                                 "no wait named at \(callerLine): \(waitSites.map(\.location))")
        let stack = try XCTUnwrap(wait.stack, "the wait's call stack")
        XCTAssertLessThanOrEqual(stack.count, 8)
        XCTAssertEqual(stack.first, "LibraryWait.untilSignalled(_:) at \(libraryLine)", "innermost: the library's call: \(stack)")
        XCTAssertTrue(stack.dropFirst().first?.hasSuffix(callerLine) ?? false, "\(stack)")
        XCTAssertFalse(waitSites.contains { $0.location.contains("Inbound.swift") }, "\(waitSites.map(\.location))")
        let long = try XCTUnwrap(s.findings.first { $0.id == "wait.long" }, "\(s.findings.map { $0.message })")
        XCTAssertTrue(long.message.contains(callerLine), long.message)
        XCTAssertEqual(long.stack?.first, stack.first)

        // Through a helper of the program's own: the helper's line is the program's first frame;
        // its caller is next in the stack.
        let helperLine = "CodeSites.swift:\(lines["helper-wait"]!)"
        let helper = try XCTUnwrap(waitSites.first { $0.location.hasSuffix(" at \(helperLine)") }, "\(waitSites.map(\.location))")
        XCTAssertTrue(helper.stack?.dropFirst().first?.hasSuffix("CodeSites.swift:\(lines["helper-caller"]!)") ?? false,
                      "\(helper.stack ?? [])")

        // Without --focus every module of the executable is the program: the library's line.
        let unfocused = try statsSummary(trace, cache: dir, focus: "").summary
        XCTAssertTrue(unfocused.statistics.waitSites.contains { $0.location.hasSuffix(" at \(libraryLine)") },
                      "\(unfocused.statistics.waitSites.map(\.location))")
    }

    /// DispatchWorkItem.wait() is a blocking call like a group wait (libdispatch's own wait on
    /// the block's group is invisible to the shim): recorded, named at the program's line, long
    /// enough to be a finding; a wait that timed out is one too, and the program's output is
    /// the same as untraced.
    func testDispatchWorkItemWaitIsABlockingCall() throws {
        let dir = Paths.tempDir("work-item-waits")
        let (run, trace) = record([Paths.fixtures, "work-item-waits"], in: dir)
        XCTAssertEqual(run.status, 0, run.stderr)
        let plain = runProgram([Paths.fixtures, "work-item-waits"])
        XCTAssertEqual(run.stdout, plain.stdout, "output changed under tracing")
        XCTAssertTrue(run.stdout.contains("timed out: true"), run.stdout)
        let lines = try sourceMarkers(in: "Tests/Fixtures/qtrace-fixtures/CodeSites.swift")
        let s = try statsSummary(trace, cache: dir, focus: "").summary
        let waitLine = "CodeSites.swift:\(lines["work-item-wait"]!)"
        let wait = try XCTUnwrap(s.statistics.waitSites.first { $0.location.hasSuffix(" at \(waitLine)") },
                                 "no wait at \(waitLine): \(s.statistics.waitSites.map(\.location))")
        XCTAssertEqual(wait.causes, ["workItemWait"])
        XCTAssertGreaterThanOrEqual(wait.blocked.maxNs, 1_000_000_000, "blocked while the 1.1 s item ran")
        let timeoutLine = "CodeSites.swift:\(lines["work-item-timeout"]!)"
        XCTAssertTrue(s.statistics.waitSites.contains { $0.location.hasSuffix(" at \(timeoutLine)") },
                      "the wait that timed out blocked too: \(s.statistics.waitSites.map(\.location))")
        let long = try XCTUnwrap(s.findings.first { $0.id == "wait.long" }, "\(s.findings.map { $0.message })")
        XCTAssertTrue(long.message.contains("DispatchWorkItem.wait()") && long.message.contains(waitLine), long.message)
    }
}
