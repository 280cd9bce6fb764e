// Foundation's OperationQueue, RunLoop and Thread (issue 26 item 5): the shim names each
// Operation the queue runs (its `name`, else its type) and the operations it depended on, and
// records the main run loop's timers and perform blocks.
import Foundation

/// An Operation subclass, named like a real importer's steps.
final class ImportOperation: Operation, @unchecked Sendable {
    let index: Int
    init(index: Int) {
        self.index = index
        super.init()
        name = "import-\(index)"
    }
    override func main() { usleep(200) }
}

/// An Operation without a name: shown by its type.
final class UnnamedStep: Operation, @unchecked Sendable {
    override func main() {}
}

/// 20 named operations, each depending on the one before (a chain, so the order is known),
/// one unnamed operation after the last, on a queue named `com.example.importer`; a Thread
/// named with more than the kernel's 15 characters (the kernel refuses it; the trace keeps it). Prints what ran, in order.
func operations() {
    let queue = OperationQueue()
    queue.name = "com.example.importer"
    queue.maxConcurrentOperationCount = 2
    let steps = (1...20).map { ImportOperation(index: $0) }
    for (a, b) in zip(steps, steps.dropFirst()) { b.addDependency(a) }
    let last = UnnamedStep()
    last.addDependency(steps[19])
    queue.addOperations(steps + [last], waitUntilFinished: true)
    print("operations: \(steps.filter(\.isFinished).count) imported, unnamed finished: \(last.isFinished)")

    let done = DispatchSemaphore(value: 0)
    // Foundation on Linux drops a name set before start (no pthread yet): the thread names itself.
    let thread = Thread {
        Thread.current.name = "com.example.thread-with-a-long-name"
        DispatchQueue(label: "fx.from-named-thread").sync { done.signal() }
    }
    thread.start()
    done.wait()
    print("thread done")
}

/// What the run loop scenario counts (its closures run on the main thread only).
final class RunLoopCounts: @unchecked Sendable {
    var ticks = 0, oneShots = 0, performed = 0
}

/// The main run loop's own work, which Foundation runs inside CoreFoundation, not through
/// Dispatch: a repeating Timer that invalidates itself at its 5th fire, a one-shot Timer, and
/// 3 `RunLoop.main.perform` blocks; the main thread runs the run loop until all have run.
func runLoopWork() {
    let counts = RunLoopCounts()
    _ = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: true) { timer in
        counts.ticks += 1
        if counts.ticks == 5 { timer.invalidate() }
    }
    _ = Timer.scheduledTimer(withTimeInterval: 0.005, repeats: false) { _ in counts.oneShots += 1 }
    for _ in 0..<3 { RunLoop.main.perform { counts.performed += 1 } }
    while counts.ticks < 5 || counts.oneShots < 1 || counts.performed < 3 {
        RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.05))
    }
    print("run loop: \(counts.ticks) ticks, \(counts.oneShots) one-shot, \(counts.performed) performed")
}
