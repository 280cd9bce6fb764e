// Programs the end-to-end tests record. Each scenario uses the Dispatch API a known number of
// times so the tests can assert the exact events (see Tests/QTraceRecordTests).
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

setvbuf(stdout, nil, _IOLBF, 0)

/// Every traced API once or a few times, with counts the tests assert.
func allAPIs() {
    let serial = DispatchQueue(label: "fx.serial")
    let concurrent = DispatchQueue(label: "fx.concurrent", qos: .utility, attributes: .concurrent)
    let child = DispatchQueue(label: "fx.child", target: serial)
    let group = DispatchGroup()
    nonisolated(unsafe) var counter = 0  // only touched on the serial queue

    for _ in 0..<10 { serial.async { counter += 1 } }                 // 10 async
    for _ in 0..<5 { serial.sync { counter += 1 } }                   // 5 sync
    for _ in 0..<4 { concurrent.async { usleep(1000) } }              // 4 async
    for _ in 0..<3 { concurrent.async(flags: .barrier) { usleep(500) } } // 3 barrier (work items)
    for _ in 0..<2 { concurrent.sync(flags: .barrier) { counter += 1 } } // 2 barrier sync (work items)
    child.async { counter += 1 }                                      // 1 async on the child
    let workItem = DispatchWorkItem(flags: .barrier) { counter += 1 }
    concurrent.async(execute: workItem)                               // 1 work item
    workItem.wait()

    let afterDone = DispatchSemaphore(value: 0)
    serial.asyncAfter(deadline: .now() + .milliseconds(10)) { afterDone.signal() } // 1 after
    afterDone.wait()

    DispatchQueue.concurrentPerform(iterations: 8) { _ in usleep(100) } // apply of 8

    for _ in 0..<3 { concurrent.async(group: group) { usleep(200) } }  // 3 group async
    group.enter(); group.enter()                                       // 2 enter
    DispatchQueue.global().async { group.leave() }                     // 1 global async
    DispatchQueue.global(qos: .userInitiated).async { group.leave() }  // 1 global async
    let notified = DispatchSemaphore(value: 0)
    group.notify(queue: serial) { notified.signal() }                  // 1 notify
    _ = group.wait(timeout: .distantFuture)                            // 1 group wait (ok)
    notified.wait()

    let sem = DispatchSemaphore(value: 1)
    sem.wait()                                                         // does not block
    let timedOut = sem.wait(timeout: .now() + .milliseconds(5))        // times out
    precondition(timedOut == .timedOut)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { sem.signal() }  // long enough to block
    sem.wait()                                                         // blocks
    sem.signal()                        // libdispatch traps if a semaphore dies below its start value

    serial.suspend()
    serial.async { counter += 1 }                                      // 1 async while suspended
    serial.resume()
    serial.sync { }                                                    // 1 sync

    timerSource(on: serial)
    dataSource(on: serial)
    readSource()
    dispatchIO()
    serial.sync { print("allapis counter=\(counter)") }
}

/// A timer that fires three times, is cancelled, and runs its cancel handler.
func timerSource(on queue: DispatchQueue) {
    let done = DispatchSemaphore(value: 0)
    let timer = DispatchSource.makeTimerSource(queue: queue)
    var fires = 0
    timer.schedule(deadline: .now() + .milliseconds(2), repeating: .milliseconds(5), leeway: .milliseconds(1))
    timer.setEventHandler {
        fires += 1
        if fires == 3 { timer.cancel() }
    }
    timer.setCancelHandler { done.signal() }
    timer.resume()
    done.wait()
}

/// A data-add source merged 5 times from one thread; handler runs coalesce.
func dataSource(on queue: DispatchQueue) {
    let source = DispatchSource.makeUserDataAddSource(queue: queue)
    var total: UInt = 0
    let done = DispatchSemaphore(value: 0)
    source.setEventHandler {
        total += source.data
        if total == 5 { done.signal() }
    }
    source.activate()
    for _ in 0..<5 { source.add(data: 1) }
    done.wait()
    source.cancel()
}

/// A read source on a pipe, fired by one write.
func readSource() {
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    let queue = DispatchQueue(label: "fx.read")
    let source = DispatchSource.makeReadSource(fileDescriptor: fds[0], queue: queue)
    let done = DispatchSemaphore(value: 0)
    source.setEventHandler {
        var buffer = [UInt8](repeating: 0, count: 64)
        _ = read(fds[0], &buffer, 64)
        source.cancel()
    }
    source.setCancelHandler {
        close(fds[0])
        done.signal()
    }
    source.resume()
    _ = write(fds[1], "ping", 4)
    done.wait()
    close(fds[1])
}

/// Writes a file through a stream channel, then reads it back through a random channel.
func dispatchIO() {
    let path = NSTemporaryDirectory() + "qtrace-fx-\(getpid()).bin"
    let queue = DispatchQueue(label: "fx.io")
    let done = DispatchSemaphore(value: 0)
    let payload = [UInt8](repeating: 0x61, count: 100_000)
    let writer = DispatchIO(type: .stream, path: path, oflag: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644, queue: queue) { _ in
        done.signal()
    }!
    payload.withUnsafeBytes { bytes in
        writer.write(offset: 0, data: DispatchData(bytes: bytes), queue: queue) { finished, _, _ in
            if finished { writer.close() }
        }
    }
    done.wait()
    var read = 0
    let reader = DispatchIO(type: .random, path: path, oflag: O_RDONLY, mode: 0, queue: queue) { _ in done.signal() }!
    reader.read(offset: 0, length: 100_000, queue: queue) { finished, data, _ in
        read += data?.count ?? 0
        if finished { reader.close() }
    }
    done.wait()
    unlink(path)
    print("io read=\(read)")
}

/// `threads` threads each submit `perThread` empty items to one serial queue.
func stress(threads: Int, perThread: Int) {
    let queue = DispatchQueue(label: "fx.stress")
    let group = DispatchGroup()
    nonisolated(unsafe) var ran = 0  // only touched on the serial queue
    let submitters = (0..<threads).map { _ in
        Thread {
            for _ in 0..<perThread { queue.async { ran += 1 } }
            group.leave()
        }
    }
    for thread in submitters { group.enter(); thread.start() }
    group.wait()
    queue.sync { print("stress ran=\(ran)") }
}

/// A steady flow: `threads` producers each feed their own serial queue, at most 256 items
/// ahead of it (a semaphore window), as a pipeline does; the collector benchmark's load.
func flow(threads: Int, perThread: Int) {
    let group = DispatchGroup()
    for t in 0..<threads {
        let queue = DispatchQueue(label: "fx.flow.\(t)")
        let window = DispatchSemaphore(value: 256)
        group.enter()
        Thread {
            for _ in 0..<perThread {
                window.wait()
                queue.async { window.signal() }
            }
            queue.sync { }
            group.leave()
        }.start()
    }
    group.wait()
    print("flow done")
}

/// Submits items forever; the test kills it with SIGKILL.
func spin() {
    let queue = DispatchQueue(label: "fx.spin")
    var submitted = 0
    while true {
        queue.async { usleep(5) }
        submitted += 1
        if submitted == 2000 { queue.sync { }; print("ready") }
        usleep(20)
    }
}

/// A TaskGroup and an actor: Swift Concurrency jobs reach Dispatch through dispatch_async_f.
actor Tally { var n = 0; func add(_ k: Int) { n += k } }

func swiftConcurrency() {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let tally = Tally()
        await withTaskGroup(of: Int.self) { group in
            for i in 0..<10 { group.addTask { i } }
            for await v in group { await tally.add(v) }
        }
        print("tasks sum=\(await tally.n)")
        done.signal()
    }
    done.wait()
}

/// sync onto the current serial queue: the shim reports it at once. (libdispatch on Linux then
/// traps with "dispatch_sync called on queue already owned by current thread"; a watchdog ends
/// the program should it hang instead.)
func deadlock() {
    let queue = DispatchQueue(label: "fx.deadlock")
    queue.async { queue.sync { print("unreachable") } }
    let never = DispatchSemaphore(value: 0)
    _ = never.wait(timeout: .now() + .milliseconds(500))
    print("deadlock watchdog fired")
    exit(0)
}

/// Work, then abort(): the trace must still hold everything recorded before.
func crash() {
    let queue = DispatchQueue(label: "fx.crash")
    for _ in 0..<100 { queue.async { } }
    queue.sync { }
    print("aborting")
    abort()
}

/// fork(): the child uses Dispatch too and must get its own trace file.
func forkChild() {
    let queue = DispatchQueue(label: "fx.parent")
    queue.sync { }
    let pid = fork()
    if pid == 0 {
        let q = DispatchQueue(label: "fx.forked")
        q.sync { }
        _exit(0)
    }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    print("fork child exited")
}

/// Runs a shell child that runs this program again (child processes keep working).
func spawnChild() {
    let queue = DispatchQueue(label: "fx.spawner")
    queue.sync { }
    let me = CommandLine.arguments[0]
    let rc = system("'\(me)' exit-code 0 > /dev/null")
    print("child rc=\(rc)")
}

/// Uses Dispatch (a worker thread still alive), then replaces itself with `argv` (exec). If
/// the exec fails, goes on with Dispatch and exits normally.
func execInto(_ argv: [String]) {
    let queue = DispatchQueue(label: "fx.before-exec")
    queue.async { usleep(1000) }
    DispatchQueue.global().async { usleep(1000) }
    queue.sync { }
    print("exec \(argv.joined(separator: " "))")
    let cArgs = argv.map { strdup($0) } + [nil]
    execv(argv[0], cArgs)
    print("exec failed")
    queue.sync { }
}

/// Cost per item with and without the shim is measured by the benchmark; this is the load.
func benchEmpty(items: Int) {
    let queue = DispatchQueue(label: "fx.bench")
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<items { queue.async { } }
    queue.sync { }
    let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(items)
    print(String(format: "empty-async ns/item %.1f", ns))
}

/// Items of about 10 µs of computation each, on a serial queue.
func benchRealistic(items: Int) {
    let queue = DispatchQueue(label: "fx.bench.realistic")
    nonisolated(unsafe) var sink: UInt64 = 0  // only touched on the serial queue
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<items {
        queue.async {
            let until = DispatchTime.now().uptimeNanoseconds + 10_000
            var x: UInt64 = 1
            while DispatchTime.now().uptimeNanoseconds < until { x = x &* 6364136223846793005 &+ 1 }
            sink &+= x
        }
    }
    queue.sync { }
    let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(items)
    print(String(format: "realistic-10us ns/item %.1f", ns), sink == 42 ? "" : "")
}

/// Which root queue (by its worker thread's name) runs items submitted with different QoS.
func qos() {
    @Sendable func workerName() -> String {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        // /proc/thread-self/stat: field 19 is the nice value (fields after "(comm)" start at 3).
        let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        let nice = fields.count > 16 ? String(fields[16]) : "?"
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) + " nice=\(nice)"
    }
    let queue = DispatchQueue(label: "fx.utility", qos: .utility)
    queue.sync { }
    let plain = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var names: [String] = []  // one item at a time: the semaphore orders them
    queue.async { names.append("plain: " + workerName()); plain.signal() }
    plain.wait()
    let item = DispatchWorkItem(qos: .userInteractive, flags: .enforceQoS) { names.append("enforced: " + workerName()) }
    queue.async(execute: item)
    item.wait()
    DispatchQueue.global(qos: .background).async { names.append("global-background: " + workerName()); plain.signal() }
    plain.wait()
    DispatchQueue.global(qos: .background).async(qos: .userInitiated, flags: .enforceQoS) {
        names.append("global-enforced: " + workerName()); plain.signal()
    }
    plain.wait()
    print(names.joined(separator: "\n"))
}

/// Queue labels with HTML and script in them: the report must show them as text.
func hostileLabels() {
    let labels = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "\u{202E}evil\u{2028}line & \"quotes\""]
    for label in labels {
        let queue = DispatchQueue(label: label)
        queue.sync { }
        queue.async { usleep(200) }
    }
    let huge = DispatchQueue(label: String(repeating: "L", count: 10_000))
    huge.sync { }
    print("hostile labels done")
}

/// CPU time of the calling thread.
func threadCPUNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// One item that sleeps 50 ms, then one that spins for 30 ms of its thread's CPU time (CPU
/// time, not wall time: on a loaded machine the spinner also waits for a CPU) (`--sched`).
func schedStates() {
    let group = DispatchGroup()
    DispatchQueue(label: "fx.sleeper").async(group: group) { usleep(50_000) }
    group.wait()
    DispatchQueue(label: "fx.spinner").async(group: group) {
        let until = threadCPUNs() + 30_000_000
        let giveUp = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        var spins = 0
        while threadCPUNs() < until && DispatchTime.now().uptimeNanoseconds < giveUp { spins += 1 }
        if spins == 0 { print("no spin") }
    }
    group.wait()
    print("sched done")
}

// MARK: dispatch_once

/// dispatch_once and dispatch_once_f are not in Swift's Dispatch (which offers lazy globals
/// instead), and on Linux `static let` does not use them (swift_once is the Swift runtime's
/// own once): C callers are what uses them, so the fixture calls them as C does, by symbol.
typealias OnceFunction = @convention(c) (UnsafeMutablePointer<Int>, UnsafeMutableRawPointer?,
                                         @convention(c) (UnsafeMutableRawPointer?) -> Void) -> Void
typealias OnceBlock = @convention(c) (UnsafeMutablePointer<Int>, @convention(block) () -> Void) -> Void

func dispatchSymbol<T>(_ name: String, as type: T.Type) -> T {
    guard let symbol = dlsym(nil, name) else { fatalError("no \(name)") }
    return unsafeBitCast(symbol, to: type)
}


/// A fresh dispatch_once_t (zero: not done), at an address that stays put.
func newOncePredicate() -> UnsafeMutablePointer<Int> {
    let predicate = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    predicate.initialize(to: 0)
    return predicate
}

/// The scenario's state, made on first use (static lets): other scenarios create nothing.
enum OnceFixture {
    nonisolated(unsafe) static let slowPredicate = newOncePredicate()
    nonisolated(unsafe) static let blockPredicate = newOncePredicate()
    /// Signalled by the slow initializer once it runs, so that main calls while it still runs.
    static let initializerStarted = DispatchSemaphore(value: 0)
}

/// Lazy globals use swift_once, not dispatch_once: touching this records no ONCE event.
enum LazyTable { static let value: Int = { usleep(1_000); return 42 }() }

/// A worker runs a 50 ms dispatch_once_f initializer; main calls the same once meanwhile and
/// waits for it. Then main runs a dispatch_once (block) initializer itself, and calls both
/// again (done: nothing recorded).
func onceWait() {
    let onceF = dispatchSymbol("dispatch_once_f", as: OnceFunction.self)
    let once = dispatchSymbol("dispatch_once", as: OnceBlock.self)
    let slowPredicate = OnceFixture.slowPredicate, blockPredicate = OnceFixture.blockPredicate
    let slowInitializer: @convention(c) (UnsafeMutableRawPointer?) -> Void = { _ in
        OnceFixture.initializerStarted.signal()
        usleep(50_000)
    }
    let worker = DispatchGroup()
    DispatchQueue(label: "fx.once").async(group: worker) { onceF(OnceFixture.slowPredicate, nil, slowInitializer) }
    OnceFixture.initializerStarted.wait()
    onceF(slowPredicate, nil, slowInitializer)  // waits for the worker's initializer
    worker.wait()
    var ranBlock = 0
    once(blockPredicate) { ranBlock += 1 }
    onceF(slowPredicate, nil, slowInitializer)
    once(blockPredicate) { ranBlock += 1 }
    print("once done block=\(ranBlock) lazy=\(LazyTable.value)")
}

/// Three phases of 50 items on queues fx.phase.a, .b, .c. Between phases it creates
/// DIR/ready-X and waits for DIR/go-X, so that a test can switch recording (qtrace on/off).
func phases(dir: String) {
    for (n, name) in ["a", "b", "c"].enumerated() {
        let queue = DispatchQueue(label: "fx.phase.\(name)")
        for _ in 0..<50 { queue.async { usleep(100) } }
        queue.sync {}
        print("phase \(name) done")
        fflush(stdout)
        guard n < 2 else { break }
        _ = FileManager.default.createFile(atPath: "\(dir)/ready-\(name)", contents: nil)
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: "\(dir)/go-\(name)") && Date() < deadline { usleep(5_000) }
    }
}

/// The flight recorder's program (FlightRecorderTests): for `seconds`, every 10 ms a new serial
/// queue fx.flight.N runs 200 asyncs and a sync, then N goes to its own log (unbuffered, so
/// the log is up to date whenever the test reads it). Then it logs "deadlock after N" and
/// deadlocks: a sync onto the queue its item runs on (the shim sees it; libdispatch traps).
func flight(seconds: Double, log: String) {
    let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
    func note(_ line: String) { _ = line.withCString { write(fd, $0, strlen($0)) } }
    var queues: [DispatchQueue] = []  // alive to the end: no queue address is reused
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        let queue = DispatchQueue(label: "fx.flight.\(queues.count)")
        queues.append(queue)
        for _ in 0..<200 { queue.async { } }
        queue.sync { }
        note("\(queues.count - 1)\n")
        usleep(10_000)
    }
    note("deadlock after \(queues.count - 1)\n")
    let last = queues[queues.count - 1]
    last.async { last.sync { } }
    // A loop: a crash handler's signals (Swift's backtracer suspends every thread) interrupt
    // sleep(), and an early exit(0) would race the trap.
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline { usleep(100_000) }
    exit(0)
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first ?? "" {
case "all-apis": allAPIs()
case "qos": qos()
case "once-wait": onceWait()
case "hostile-labels": hostileLabels()
case "stress": stress(threads: Int(args[1]) ?? 4, perThread: Int(args[2]) ?? 250_000)
case "spin": spin()
case "count-sigint": countSigint()
case "long-names": WidthScenario.run()
case "target-chain": targetChain()
case "sched": schedStates()
case "cpu-hot": cpuHot()
case "cpu-two-queues": cpuTwoQueues()
case "flow": flow(threads: Int(args[1]) ?? 4, perThread: Int(args[2]) ?? 100_000)
case "swift-concurrency": swiftConcurrency()
case "code-sites":
    // Run like an app, from the main queue drained by the main thread's run loop: the main.*
    // rules apply to programs that serve it.
    DispatchQueue.main.async { codeSites(); exit(0) }
    RunLoop.main.run()
case "library-waits": libraryWaits()
case "work-item-waits": workItemWaits()
case "async-stacks": asyncStacks()
case "long-job": longJob()
case "bench-tasks": benchTasks(args.count > 1 ? Int(args[1]) ?? 1_000_000 : 1_000_000)
case "bench-hops": benchHops(args.count > 1 ? Int(args[1]) ?? 1_000_000 : 1_000_000)
case "operations": operations()
case "run-loop": runLoopWork()
case "actor-calls": actorCalls(callers: args.count > 1 ? Int(args[1]) ?? 100 : 100, contended: args.count > 2 && args[2] == "contended")
case "main-actor": mainActorFrames(args.count > 1 ? Int(args[1]) ?? 20 : 20)
case "task-sleep": taskSleepChildren(args.count > 1 ? Int(args[1]) ?? 10 : 10)
case "task-group": codeSiteTasks(children: args.count > 1 ? Int(args[1]) ?? 4 : 4)
case "deadlock": deadlock()
case "crash": crash()
case "fork": forkChild()
case "spawn-child": spawnChild()
case "phases": phases(dir: args.count > 1 ? args[1] : ".")
case "flight": flight(seconds: args.count > 1 ? Double(args[1]) ?? 20 : 20, log: args.count > 2 ? args[2] : "flight.log")
case "exec-into": execInto(Array(args.dropFirst()))
case "exit-code": exit(Int32(args.count > 1 ? Int(args[1]) ?? 0 : 0))
case "bench-empty": benchEmpty(items: args.count > 1 ? Int(args[1]) ?? 1_000_000 : 1_000_000)
case "bench-realistic": benchRealistic(items: args.count > 1 ? Int(args[1]) ?? 100_000 : 100_000)
default:
    FileHandle.standardError.write(Data("qtrace-fixtures: unknown scenario '\(args.first ?? "")'\n".utf8))
    exit(2)
}
