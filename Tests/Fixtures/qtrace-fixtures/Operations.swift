// Foundation's OperationQueue, RunLoop and Thread (issue 26 item 5): the shim names each
// Operation the queue runs (its `name`, else its type) and the operations it depended on.
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
