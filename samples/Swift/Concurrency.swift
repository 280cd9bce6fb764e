// Higher-level APIs that run on Dispatch on Linux: Swift Concurrency (every job goes through
// dispatch_async_f) and Foundation's OperationQueue (built on Dispatch queues).
import Foundation

// MARK: - swift-concurrency

/// Counts the pages that have been processed; an actor, so increments from many child tasks
/// never race.
actor PageCounter {
    private(set) var pages = 0
    func increment() { pages += 1 }
}

/// Processes 20 "pages" in a TaskGroup; each child task does some CPU work and reports to an
/// actor. The synchronous main thread starts a Task and waits for it with a semaphore.
func runSwiftConcurrency() {
    let finished = DispatchSemaphore(value: 0)
    let outcome = Locked((primes: 0, pages: 0))

    Task {
        let counter = PageCounter()
        let primes = await withTaskGroup(of: Int.self) { group in
            for page in 1...20 {
                group.addTask {
                    let primes = primeCount(in: (page - 1) * 5_000..<page * 5_000)
                    await counter.increment()
                    return primes
                }
            }
            var total = 0
            for await primes in group { total += primes }
            return total
        }
        let pages = await counter.pages
        outcome.set((primes, pages))
        finished.signal()
    }
    finished.wait()

    print("child tasks: 20, pages counted by the actor: \(outcome.current.pages)")
    print("primes below 100000: \(outcome.current.primes)")
}

// MARK: - operation-queue

/// A small publishing pipeline as operations: three downloads, a parse that needs two of them,
/// a thumbnail that needs the third, and a publish that needs both. At most two run at once.
func runOperationQueue() {
    let queue = OperationQueue()
    queue.name = "com.example.pipeline"
    queue.maxConcurrentOperationCount = 2

    let running = ConcurrencyGauge()
    let finishOrder = Locked<[String]>([])
    func step(_ name: String, milliseconds: Int) -> BlockOperation {
        let operation = BlockOperation {
            running.measure { simulateBlockingIO(milliseconds: milliseconds) }
            finishOrder.append(name)
        }
        operation.name = name
        return operation
    }

    let downloadA = step("download-a", milliseconds: 40)
    let downloadB = step("download-b", milliseconds: 60)
    let downloadC = step("download-c", milliseconds: 30)
    let parse = step("parse", milliseconds: 20)
    parse.addDependency(downloadA)
    parse.addDependency(downloadB)
    let thumbnail = step("thumbnail", milliseconds: 20)
    thumbnail.addDependency(downloadC)
    let publish = step("publish", milliseconds: 10)
    publish.addDependency(parse)
    publish.addDependency(thumbnail)

    let pipeline = [downloadA, downloadB, downloadC, parse, thumbnail, publish]
    // Added in reverse on purpose: dependencies, not the order of adding, decide what runs.
    queue.addOperations(pipeline.reversed(), waitUntilFinished: true)

    let order = finishOrder.current
    for operation in pipeline {
        let name = operation.name ?? "?"
        let dependencies = operation.dependencies.compactMap(\.name).sorted()
        let respected = dependencies.allSatisfy { dependency in
            (order.firstIndex(of: dependency) ?? .max) < (order.firstIndex(of: name) ?? .min)
        }
        let after = dependencies.isEmpty ? "no dependencies" : "after " + dependencies.joined(separator: ", ")
        print("\(name): \(after): \(respected ? "ok" : "VIOLATED")")
    }
    print("operations finished: \(order.count); never more than 2 running at once: \(running.peak <= 2 ? "yes" : "no")")
    note("finish order (varies): \(order.joined(separator: " "))")
}
