// End-to-end tests of the shim and `qtrace record` on real libdispatch programs.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class RecordTests: XCTestCase {
    override class func tearDown() {
        Paths.removeTempRoot()
        super.tearDown()
    }

    /// Every traced API with known counts: exact events, linked items, labels, no internal calls.
    func testAllAPIsExactEvents() throws {
        let dir = Paths.tempDir("all-apis")
        let plain = runProgram([Paths.fixtures, "all-apis"])
        let (traced, path) = record([Paths.fixtures, "all-apis"], in: dir)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(traced.status, plain.status)
        XCTAssertEqual(traced.stdout, plain.stdout, "tracing changed the program's output")
        let t = try TraceSummary(path: path)

        // Queues: five created with their labels and kinds, two global queues first seen.
        XCTAssertEqual(t.count(.queueCreate), 5)
        for label in ["fx.serial", "fx.concurrent", "fx.child", "fx.read", "fx.io"] {
            XCTAssertNotNil(t.queue(label), "missing queue \(label)")
        }
        let concurrentCreate = t.events.first { $0.type == .queueCreate && $0.string == "fx.concurrent" }!
        XCTAssertEqual(concurrentCreate.arg & 1, 1, "concurrent attribute")
        XCTAssertEqual((concurrentCreate.arg >> 8) & 0xff, UInt32(QoSClass.utility.rawValue))
        let childCreate = t.events.first { $0.type == .queueCreate && $0.string == "fx.child" }!
        XCTAssertEqual(childCreate.b, t.queue("fx.serial"), "fx.child targets fx.serial")
        XCTAssertEqual(t.count(.queueInfo), 2, "the two global queues used")

        // Work items: 37 submitted, each with exactly one enqueue, start and end.
        XCTAssertEqual(t.count(.enqueue), 37)
        XCTAssertEqual(t.count(.start), 37)
        XCTAssertEqual(t.count(.end), 37)
        let items = t.items()
        XCTAssertEqual(items.count, 37, "item ids are unique")
        for (id, item) in items {
            guard let e = item.enqueue, let s = item.start, let x = item.end else {
                XCTFail("item \(id) lacks an event"); continue
            }
            XCTAssertLessThanOrEqual(e.time, s.time, "enqueue before start (item \(id))")
            XCTAssertLessThanOrEqual(s.time, x.time, "start before end (item \(id))")
            XCTAssertEqual(s.tid, x.tid, "an item starts and ends on one thread")
            if let kind = ItemKind(rawValue: e.arg), kind.isSynchronous {
                XCTAssertEqual(s.tid, e.tid, "a sync item runs on its caller's thread")
            }
        }
        let serial = t.enqueues(on: "fx.serial")
        XCTAssertEqual(serial.filter { $0.arg == ItemKind.async.rawValue }.count, 11)
        XCTAssertEqual(serial.filter { $0.arg == ItemKind.sync.rawValue }.count, 7)
        XCTAssertEqual(serial.filter { $0.arg == ItemKind.after.rawValue }.count, 1)
        XCTAssertNotEqual(serial.first { $0.arg == ItemKind.after.rawValue }?.c, 0, "after carries its deadline")
        XCTAssertEqual(serial.filter { $0.arg == ItemKind.groupNotify.rawValue }.count, 1)
        let concurrent = t.enqueues(on: "fx.concurrent")
        XCTAssertEqual(concurrent.filter { EnqueueFlags(rawValue: $0.flags).contains(.barrier) }.count, 6)
        XCTAssertEqual(concurrent.filter { $0.arg == ItemKind.groupAsync.rawValue }.count, 3)
        let workItem = concurrent.first { EnqueueFlags(rawValue: $0.flags).contains(.workItem) }
        XCTAssertNotNil(workItem, "the DispatchWorkItem is recorded as one")
        XCTAssertEqual(t.count(.workItemCreate), 1)
        XCTAssertEqual(workItem?.a, t.events.first { $0.type == .workItemCreate }?.a, "work item id links create and enqueue")

        // apply: one call of 8 iterations (dispatch_apply's internal apply_f not counted twice).
        XCTAssertEqual(t.count(.applyBegin), 1)
        XCTAssertEqual(t.events.first { $0.type == .applyBegin }?.c, 8)
        XCTAssertEqual(t.count(.applyIterStart), 8)
        XCTAssertEqual(t.count(.applyIterEnd), 8)

        // Groups: 2 enter/leave by the user; async(group:)'s internal leaves are not reported.
        XCTAssertEqual(t.count(.groupCreate), 1)
        XCTAssertEqual(t.count(.groupEnter), 2)
        XCTAssertEqual(t.count(.groupLeave), 2)
        XCTAssertEqual(t.count(.groupWaitBegin), 1)
        XCTAssertEqual(t.events.first { $0.type == .groupWaitEnd }?.arg, 0, "the group wait did not time out")

        // Semaphores: one wait that did not block, one that timed out, one that blocked.
        XCTAssertEqual(t.count(.semCreate), 7)
        XCTAssertEqual(t.count(.semWaitBegin), 10)
        XCTAssertEqual(t.count(.semWaitEnd), 10)
        XCTAssertEqual(t.count(.semSignal), 9)
        let semAddress = t.events.first { $0.type == .semCreate && $0.b == 1 }!.a
        let waits = t.events.filter { $0.type == .semWaitEnd && $0.a == semAddress }.map(\.arg)
        XCTAssertEqual(waits, [0, 3, 2], "not blocked; blocked and timed out; blocked")

        // Sources: asyncAfter's internal timer source and the worker pool's monitor are not reported.
        XCTAssertEqual(t.count(.sourceCreate), 3)
        XCTAssertEqual(Set(t.events.filter { $0.type == .sourceCreate }.map(\.arg)),
                       [SourceType.timer.rawValue, SourceType.dataAdd.rawValue, SourceType.read.rawValue])
        XCTAssertEqual(t.count(.sourceSetTimer), 1)
        XCTAssertEqual(t.count(.sourceSetHandler), 5)
        XCTAssertEqual(t.count(.sourceCancel), 3)
        XCTAssertEqual(t.count(.sourceMergeData), 5)
        let timer = t.events.first { $0.type == .sourceCreate && $0.arg == SourceType.timer.rawValue }!.a
        let timerRuns = t.events.filter { $0.type == .sourceHandlerBegin && $0.a == timer }
        XCTAssertEqual(timerRuns.filter { $0.arg == 0 }.count, 3, "three timer fires")
        XCTAssertEqual(timerRuns.filter { $0.arg == 1 }.count, 1, "one cancel handler run")
        XCTAssertEqual(timerRuns.last?.arg, 1, "the cancel handler runs last")
        let dataSource = t.events.first { $0.type == .sourceCreate && $0.arg == SourceType.dataAdd.rawValue }!.a
        let dataTotal = t.events.filter { $0.type == .sourceHandlerBegin && $0.a == dataSource && $0.arg == 0 }
            .reduce(0) { $0 + $1.b }
        XCTAssertEqual(dataTotal, 5, "handler data adds up to the merged values")
        // Every handler run ends, but one whose thread the process's exit cut off: on a loaded
        // machine, the read source's cancel handler can still be between its signal and its
        // return when the program ends (its thread then begins and ends nothing after it).
        var openRuns: [Int32: Int] = [:]
        var lastFrameEvent: [Int32: EventType] = [:]
        for e in t.events where [.sourceHandlerBegin, .sourceHandlerEnd, .start, .end].contains(e.type) {
            if e.type == .sourceHandlerBegin { openRuns[e.tid, default: 0] += 1 }
            if e.type == .sourceHandlerEnd { openRuns[e.tid, default: 0] -= 1 }
            lastFrameEvent[e.tid] = e.type
        }
        for (tid, open) in openRuns where open != 0 {
            XCTAssertEqual(open, 1, "thread \(tid): handler begins and ends do not pair")
            XCTAssertEqual(lastFrameEvent[tid], .sourceHandlerBegin, "thread \(tid): a handler run without its end, then more runs")
        }
        XCTAssertLessThanOrEqual(t.count(.sourceHandlerBegin) - t.count(.sourceHandlerEnd), 1)
        XCTAssertGreaterThanOrEqual(t.count(.sourceHandlerBegin), t.count(.sourceHandlerEnd))

        // Queue control.
        XCTAssertEqual(t.count(.suspend), 1)
        XCTAssertEqual(t.count(.resume), 3)   // fx.serial, the timer, the read source
        XCTAssertEqual(t.count(.activate), 1) // the data source

        // Dispatch I/O: a stream write channel and a random read channel.
        XCTAssertEqual(t.count(.ioCreate), 2)
        XCTAssertEqual(t.count(.ioWrite), 1)
        XCTAssertEqual(t.count(.ioRead), 1)
        XCTAssertEqual(t.events.first { $0.type == .ioWrite }?.d, 100_000)
        let readOp = t.events.first { $0.type == .ioRead }!.b
        let readBytes = t.events.filter { $0.type == .ioHandlerBegin && $0.a == readOp }.reduce(0) { $0 + $1.b }
        XCTAssertEqual(readBytes, 100_000)
        XCTAssertEqual(t.count(.ioClose), 2)
        XCTAssertEqual(t.count(.ioCleanupBegin), 2)

        // Threads: workers are reported as Dispatch workers, each with its start.
        let workers = t.events.filter { $0.type == .threadStart && $0.arg == 1 }
        XCTAssertGreaterThanOrEqual(workers.count, 2)
        XCTAssertEqual(t.header.droppedEvents, 0)
    }

    /// Swift Concurrency jobs arrive through dispatch_async_f and are marked as such.
    func testSwiftConcurrencyJobs() throws {
        let dir = Paths.tempDir("concurrency")
        let (traced, path) = record([Paths.fixtures, "swift-concurrency"], in: dir)
        XCTAssertEqual(traced.status, 0)
        XCTAssertTrue(traced.stdout.contains("tasks sum=45"))
        let t = try TraceSummary(path: path)
        let jobs = t.events.filter { $0.type == .enqueue && EnqueueFlags(rawValue: $0.flags).contains(.swiftConcurrency) }
        XCTAssertGreaterThanOrEqual(jobs.count, 10, "one job per child task at least")
        XCTAssertTrue(jobs.allSatisfy { EnqueueFlags(rawValue: $0.flags).contains(.function) })
    }

    /// A C program built with clang -fblocks: the C block API is traced the same way.
    func testCProgramWithBlocks() throws {
        let source = Paths.repo.appendingPathComponent("samples/c/blocks_demo.c").path
        try XCTSkipUnless(FileManager.default.fileExists(atPath: source), "samples/c/blocks_demo.c not present")
        let dir = Paths.tempDir("c-blocks")
        let exe = buildCProgram("samples/c/blocks_demo.c", in: dir)
        let plain = runProgram([exe])
        let (traced, path) = record([exe], in: dir)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(traced.status, 0)
        XCTAssertEqual(traced.stdout, plain.stdout)
        let t = try TraceSummary(path: path)
        XCTAssertGreaterThan(t.count(.queueCreate), 0)
        XCTAssertGreaterThan(t.count(.enqueue), 0)
        XCTAssertEqual(t.count(.enqueue), t.count(.start))
        XCTAssertEqual(t.count(.start), t.count(.end))
        XCTAssertEqual(t.count(.applyBegin), t.count(.applyEnd))
    }

    /// SIGKILL mid-run: the trace holds everything recorded before, and reads back.
    func testSigkillLeavesReadableTrace() throws {
        let dir = Paths.tempDir("sigkill")
        let path = dir.appendingPathComponent("spin.qtrace").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.fixtures)
        process.arguments = ["spin"]
        process.environment = ["LD_PRELOAD": Paths.shim, "QTRACE_OUTPUT": path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // Never wait forever: the watchdog kills the program if "ready" does not come.
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { kill(pid, SIGKILL) }
        let line = out.fileHandleForReading.availableDataUntil(contains: "ready", timeout: 60)
        XCTAssertTrue(line.contains("ready"))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)

        // Read as the process left it (not finalized), then as `qtrace record` would finish it.
        let raw = try TraceSummary(path: path)
        XCTAssertFalse(raw.header.flags.contains(.finalizedByProcess))
        XCTAssertGreaterThanOrEqual(raw.enqueues(on: "fx.spin").count, 2000)
        XCTAssertTrue(TraceFinalizer.finalize(path: path, exitStatus: 137))
        let finished = try TraceSummary(path: path)
        XCTAssertEqual(finished.header.exitStatus, 137)
        XCTAssertGreaterThanOrEqual(finished.count(.enqueue), raw.count(.enqueue))
        // Times are consistent after the end-of-run calibration: enqueue <= start <= end.
        for (_, item) in finished.items() {
            if let e = item.enqueue, let s = item.start { XCTAssertLessThanOrEqual(e.time, s.time) }
        }
    }

    /// Ctrl-C in a terminal goes to the foreground process group: the program dies of SIGINT,
    /// qtrace survives it, finishes the trace and exits 130.
    func testCtrlCReachesTheProgramAndTheTraceIsWritten() throws {
        let dir = Paths.tempDir("ctrl-c")
        let path = dir.appendingPathComponent("spin.qtrace").path
        let outPath = dir.appendingPathComponent("stdout.txt").path
        // qtrace leads a process group of its own, as a shell's foreground job does.
        let argv = [Paths.qtrace, "record", "--no-report", "-o", path, "--", Paths.fixtures, "spin"]
        let group = try spawnInNewProcessGroup(argv, environment: ["QTRACE_SHIM": Paths.shim], stdoutPath: outPath)
        defer { kill(-group, SIGKILL) }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "").contains("ready") {
            usleep(20_000)
        }
        kill(-group, SIGINT)  // what the terminal does on Ctrl-C
        var status: Int32 = 0
        while waitpid(group, &status, 0) < 0 && errno == EINTR {}
        XCTAssertEqual(status & 0x7f, 0, "qtrace itself must survive SIGINT")
        XCTAssertEqual((status >> 8) & 0xff, 128 + SIGINT, "qtrace exits with the program's status")
        let t = try TraceSummary(path: path)
        XCTAssertTrue(t.header.flags.contains(.finalizedByRecorder))
        XCTAssertEqual(t.header.exitStatus, 128 + SIGINT)
        XCTAssertGreaterThanOrEqual(t.enqueues(on: "fx.spin").count, 2000)
    }

    /// 4 threads x 250k items: every item is recorded, or counted as dropped.
    func testStressAccountsForEveryItem() throws {
        let dir = Paths.tempDir("stress")
        let submitted = 1_000_000
        // A million items take ~10 s here, over 120 s under load average 14 (then killed: 137).
        let (full, fullPath) = record([Paths.fixtures, "stress", "4", "250000"], in: dir, name: "full", timeout: 900)
        XCTAssertEqual(full.status, 0)
        XCTAssertTrue(full.stdout.contains("stress ran=\(submitted)"))
        let all = try TraceSummary(path: fullPath)
        XCTAssertEqual(all.enqueues(on: "fx.stress").count, submitted + 1, "+1: the final sync")
        XCTAssertEqual(all.count(.start), all.count(.enqueue))
        XCTAssertEqual(all.header.droppedEvents, 0)

        // A 16 MiB cap: most items cannot be recorded, and the counters say how many.
        let (capped, cappedPath) = record([Paths.fixtures, "stress", "4", "250000"], in: dir, name: "capped",
                                          extraArgs: ["--max-size", "16"], timeout: 900)
        XCTAssertEqual(capped.status, 0, "a full trace must not disturb the program")
        XCTAssertTrue(capped.stdout.contains("stress ran=\(submitted)"))
        let part = try TraceSummary(path: cappedPath)
        XCTAssertGreaterThan(part.header.droppedEvents, 0)
        let droppedEnqueue = part.header.droppedEnqueue
        let droppedStart = part.header.droppedStart
        let droppedEnd = part.header.droppedEnd
        XCTAssertEqual(droppedEnqueue, headerU64(cappedPath, offset: 144), "the reader's field is the documented offset")
        XCTAssertEqual(UInt64(part.enqueues(on: "fx.stress").count) + droppedEnqueue, UInt64(submitted) + 1)
        XCTAssertEqual(UInt64(part.count(.start)) + droppedStart, UInt64(submitted) + 1, "+1: the final sync")
        XCTAssertEqual(UInt64(part.count(.end)) + droppedEnd, UInt64(submitted) + 1)
    }

    /// Exit status, signals and aborts pass through; an aborted program still leaves its trace.
    func testExitStatusAndCrash() throws {
        let dir = Paths.tempDir("status")
        let (seven, _) = record([Paths.fixtures, "exit-code", "7"], in: dir, name: "seven")
        XCTAssertEqual(seven.status, 7)
        let plainCrash = runProgram([Paths.fixtures, "crash"])
        let (crash, path) = record([Paths.fixtures, "crash"], in: dir, name: "crash")
        XCTAssertEqual(crash.status, plainCrash.status)
        XCTAssertEqual(crash.status, 128 + SIGABRT)
        let t = try TraceSummary(path: path)
        XCTAssertEqual(t.enqueues(on: "fx.crash").count, 101)
        XCTAssertEqual(t.header.exitStatus, 128 + SIGABRT)
        let missing = runProgram([Paths.qtrace, "record", "--no-report", "--", "/nonexistent/program"],
                          environment: ["QTRACE_SHIM": Paths.shim])
        XCTAssertEqual(missing.status, 127)
        XCTAssertTrue(missing.stderr.contains("cannot run '/nonexistent/program'"))
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, "one line")
        let help = runProgram([Paths.qtrace, "record", "--help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.stdout.contains("--max-size"), "record --help prints the options")
        // Usage errors: one line on stderr, non-zero exit, for every command.
        for argv in [["record"], ["record", "--bogus", "--", "true"], ["stats"], ["nosuch"],
                     ["export", "x.qtrace", "--format", "bogus"], ["check", "--bogus"]] {
            let bad = runProgram([Paths.qtrace] + argv)
            XCTAssertNotEqual(bad.status, 0, "\(argv)")
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, "one line for \(argv): \(bad.stderr)")
            XCTAssertTrue(bad.stderr.hasPrefix("qtrace"), bad.stderr)
        }
    }

    /// sync onto the current serial queue is reported the moment it happens.
    func testDeadlockReportedImmediately() throws {
        let dir = Paths.tempDir("deadlock")
        let plain = runProgram([Paths.fixtures, "deadlock"], timeout: 30)
        let (traced, path) = record([Paths.fixtures, "deadlock"], in: dir)
        XCTAssertEqual(traced.status, plain.status, "same fate as untraced (libdispatch traps or the watchdog exits)")
        XCTAssertTrue(traced.stderr.contains("qtrace: deadlock"), traced.stderr)
        XCTAssertTrue(traced.stderr.contains("\"fx.deadlock\""))
        let t = try TraceSummary(path: path)
        let deadlock = try XCTUnwrap(t.events.first { $0.type == .deadlock })
        XCTAssertEqual(deadlock.a, t.queue("fx.deadlock"))
        XCTAssertEqual(deadlock.b, t.queue("fx.deadlock"))
        // The collector turns it into an error finding naming the queue and the thread.
        let result = Analysis.run(file: try TraceFile(path: path))
        let finding = try XCTUnwrap(result.findings.first { $0.id == "deadlock.sync-current-queue" })
        XCTAssertEqual(finding.severity, .error)
        XCTAssertTrue(finding.objects.contains { $0.kind == .queue && $0.label == "fx.deadlock" })
        XCTAssertTrue(finding.objects.contains { $0.kind == .thread })
    }

    /// Programs that inherit the preload but do not use Dispatch run unaffected and write nothing.
    func testNonDispatchProgramsUnaffected() throws {
        let dir = Paths.tempDir("non-dispatch")
        let cSource = dir.appendingPathComponent("plain.c")
        try "#include <stdio.h>\nint main(void){puts(\"plain c\");return 5;}\n".write(to: cSource, atomically: true, encoding: .utf8)
        let cExe = dir.appendingPathComponent("plain").path
        XCTAssertEqual(runProgram(["/usr/bin/env", "cc", cSource.path, "-o", cExe]).status, 0)
        let programs: [[String]] = [
            ["/bin/sh", "-c", "echo from sh; exit 3"],
            ["/usr/bin/env", "taskset", "-c", "0", "/bin/echo", "pinned"],
            ["/usr/bin/env", "python3", "-c", "import threading; t=threading.Thread(target=print, args=('py',)); t.start(); t.join()"],
            [cExe],
        ]
        for (i, argv) in programs.enumerated() {
            let plain = runProgram(argv)
            let (traced, path) = record(argv, in: dir, name: "p\(i)")
            XCTAssertEqual(traced.status, plain.status, "\(argv)")
            XCTAssertEqual(traced.stdout, plain.stdout, "\(argv)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "no trace for a non-Dispatch program")
            XCTAssertTrue(traced.stderr.contains("no trace written"))
        }
    }

    /// Children keep working: a forked child and an exec'd child each get their own trace.
    func testChildProcessesGetTheirOwnTraces() throws {
        let dir = Paths.tempDir("children")
        let (forked, forkPath) = record([Paths.fixtures, "fork"], in: dir, name: "fork")
        XCTAssertEqual(forked.status, 0)
        XCTAssertTrue(forked.stdout.contains("fork child exited"))
        let parent = try TraceSummary(path: forkPath)
        XCTAssertNotNil(parent.queue("fx.parent"))
        XCTAssertNil(parent.queue("fx.forked"), "the child's events stay out of the parent's trace")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("fork.") && $0 != "fork.qtrace" }
        XCTAssertEqual(siblings.count, 1)
        let child = try TraceSummary(path: dir.appendingPathComponent(siblings[0]).path)
        XCTAssertNotNil(child.queue("fx.forked"))

        let (spawned, _) = record([Paths.fixtures, "spawn-child"], in: dir, name: "spawn")
        XCTAssertEqual(spawned.status, 0)
        XCTAssertTrue(spawned.stdout.contains("child rc=0"))
    }

    /// A DispatchWorkItem(flags: .barrier) still runs alone under the shim.
    func testBarrierWorkItemSemanticsKept() throws {
        let dir = Paths.tempDir("barrier")
        let (traced, path) = record([Paths.fixtures, "all-apis"], in: dir)
        XCTAssertEqual(traced.status, 0)
        let t = try TraceSummary(path: path)
        let items = t.items()
        let concurrent = t.queue("fx.concurrent")!
        let onConcurrent = items.values.filter { $0.enqueue?.b == concurrent }
        let barriers = onConcurrent.filter { EnqueueFlags(rawValue: $0.enqueue!.flags).contains(.barrier) }
        XCTAssertEqual(barriers.count, 6)
        for barrier in barriers {
            let (bs, be) = (barrier.start!.time, barrier.end!.time)
            for other in onConcurrent where other.enqueue!.a != barrier.enqueue!.a {
                let (os, oe) = (other.start!.time, other.end!.time)
                XCTAssertTrue(oe <= bs || os >= be, "an item overlapped a barrier on fx.concurrent")
            }
        }
    }

    /// QoS keeps its effect: items run on the same root queues, at the same thread priority
    /// (libdispatch on Linux maps QoS to the worker's nice value), traced or not.
    func testQoSKeepsItsEffect() throws {
        let dir = Paths.tempDir("qos")
        let plain = runProgram([Paths.fixtures, "qos"])
        let (traced, path) = record([Paths.fixtures, "qos"], in: dir)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(traced.stdout, plain.stdout)
        let lines = plain.stdout.split(separator: "\n")
        let utilityNice = lines.first { $0.hasPrefix("plain:") }?.split(separator: "=").last
        let backgroundNice = lines.first { $0.hasPrefix("global-background:") }?.split(separator: "=").last
        XCTAssertNotNil(utilityNice)
        XCTAssertNotEqual(utilityNice, backgroundNice, "QoS must be observable for this test to mean anything")
        let t = try TraceSummary(path: path)
        let item = try XCTUnwrap(t.events.first { $0.type == .workItemCreate })
        XCTAssertEqual(item.arg >> 24, UInt32(QoSClass.userInteractive.rawValue), "the work item's QoS is recorded")
    }

    /// An app linking QTrace is traced under `qtrace record` (also with the preload present,
    /// without double counting), and its annotations land in the trace.
    func testLinkedAppAndAnnotations() throws {
        let dir = Paths.tempDir("linked")
        let untraced = runProgram([Paths.linkedApp])
        XCTAssertTrue(untraced.stdout.contains("linked enabled=false"), "linked apps do not trace unless asked")
        let (traced, path) = record([Paths.linkedApp], in: dir)
        XCTAssertEqual(traced.status, 0)
        XCTAssertTrue(traced.stdout.contains("linked enabled=true"))
        let t = try TraceSummary(path: path)
        XCTAssertEqual(t.enqueues(on: "linked.serial").count, 6, "5 async + 1 sync, counted once")
        XCTAssertEqual(t.count(.sourceCreate), 0, "no internal calls reported")
        XCTAssertEqual(t.events.filter { $0.type == .mark }.map(\.string), ["start"])
        XCTAssertEqual(Set(t.events.filter { $0.type == .intervalBegin }.compactMap(\.string)), ["load", "pending"])
        XCTAssertEqual(t.count(.intervalEnd), 2)
        XCTAssertTrue(t.events.contains { $0.type == .threadName && $0.string == "linked-main" })

        let direct = dir.appendingPathComponent("direct.qtrace").path
        let alone = runProgram([Paths.linkedApp], environment: ["QTRACE_OUTPUT": direct])
        XCTAssertEqual(alone.status, 0)
        XCTAssertEqual(try TraceSummary(path: direct).enqueues(on: "linked.serial").count, 6)
    }
}

extension FileHandle {
    /// Reads until `marker` appears or `timeout` passes.
    func availableDataUntil(contains marker: String, timeout: TimeInterval) -> String {
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && !text.contains(marker) {
            let data = availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        return text
    }
}
