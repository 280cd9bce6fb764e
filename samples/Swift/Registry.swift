// The table of scenarios: name -> (description, entry point). Names are fixed: tests, the README
// and the documentation refer to them.
import Foundation

struct Scenario: Sendable {
    let name: String
    let summary: String
    /// Extra command-line options the scenario accepts (most accept none).
    var options: [String] = []
    /// Runs the scenario. It either returns (and main exits with status 0) or exits by itself,
    /// for the scenarios that hand the main thread to dispatchMain().
    let run: @Sendable (_ options: [String]) -> Void
}

let allScenarios: [Scenario] = [
    // Queues.swift: the talks' pictures of queues.
    Scenario(name: "main-to-serial", summary: "image fetch: main asyncs work to a private serial queue, results async back to main",
             run: { _ in runMainToSerial() }),
    Scenario(name: "global-fanout", summary: "items A..F enqueued in order on a global queue complete out of order",
             run: { _ in runGlobalFanout() }),
    Scenario(name: "serial-cache", summary: "4 threads feed a serial queue guarding a cache: sync reads, async writes",
             run: { _ in runSerialCache() }),
    Scenario(name: "readers-writer", summary: "private concurrent queue: concurrent sync reads, barrier writes",
             run: { _ in runReadersWriter() }),
    Scenario(name: "target-funnel", summary: "two queues and a timer retargeted through one serial queue run one at a time",
             run: { _ in runTargetFunnel() }),
    Scenario(name: "jump-queue", summary: "suspend a low-priority queue, run urgent work on its target, resume",
             run: { _ in runJumpQueue() }),
    Scenario(name: "group-fanout", summary: "DispatchGroup fan-out with notify, and enter/leave around async callbacks",
             run: { _ in runGroupFanout() }),
    // Sources.swift: dispatch sources.
    Scenario(name: "timer-suspend", summary: "100 ms timer suspended for 4 periods: the next handler sees data = 4",
             run: { _ in runTimerSuspend() }),
    Scenario(name: "read-source", summary: "read source on a pipe fed by another thread, cancelled at EOF",
             run: { _ in runReadSource() }),
    Scenario(name: "signal-source", summary: "SIGUSR1 signal source (signal ignored, then sent to ourselves 3 times)",
             run: { _ in runSignalSource() }),
    // Parallelism.swift: using (and overusing) the worker pool.
    Scenario(name: "concurrent-perform", summary: "concurrentPerform over 64 chunks of prime counting",
             run: { _ in runConcurrentPerform() }),
    Scenario(name: "semaphore-limit", summary: "a semaphore keeps at most 2 items of a concurrent queue running",
             run: { _ in runSemaphoreLimit() }),
    Scenario(name: "thread-explosion", summary: "blocking items make libdispatch start more worker threads than CPUs",
             run: { _ in runThreadExplosion() }),
    // Pitfalls.swift: mistakes the talks warn about; each one ends by itself.
    Scenario(name: "deadlock", summary: "two serial queues sync onto each other; main times out waiting",
             options: ["--self-sync"], run: { options in runDeadlock(selfSync: options.contains("--self-sync")) }),
    Scenario(name: "priority-inversion", summary: "a user-interactive sync waits behind a background item on a serial queue",
             run: { _ in runPriorityInversion() }),
    Scenario(name: "global-barrier", summary: "a barrier on a global queue runs alongside other items (it is ignored)",
             run: { _ in runGlobalBarrier() }),
    Scenario(name: "source-never-resumed", summary: "a timer source gets a handler but is never resumed, so it never fires",
             run: { _ in runSourceNeverResumed() }),
    Scenario(name: "group-imbalance", summary: "enter twice, leave once: notify never fires, wait times out",
             run: { _ in runGroupImbalance() }),
    // Concurrency.swift: higher-level APIs that run on Dispatch on Linux.
    Scenario(name: "swift-concurrency", summary: "a TaskGroup of 20 child tasks updating an actor counter",
             run: { _ in runSwiftConcurrency() }),
    Scenario(name: "operation-queue", summary: "OperationQueue with dependencies and maxConcurrentOperationCount = 2",
             run: { _ in runOperationQueue() }),
    // IO.swift
    Scenario(name: "dispatch-io", summary: "uppercase an 8 MB file through DispatchIO channels, compared with read()/write()",
             run: { _ in runDispatchIO() }),
    // App.swift: whole programs.
    Scenario(name: "app", summary: "a mixed app: image fetch, cache, group, timer, concurrentPerform, global items (~2 s)",
             run: { _ in runApp() }),
    Scenario(name: "clean", summary: "a small program with no pitfalls: the no-findings control",
             run: { _ in runClean() }),
]

func findScenario(named name: String) -> Scenario? {
    allScenarios.first { $0.name == name }
}

func printScenarioList() {
    let width = allScenarios.map(\.name.count).max() ?? 0
    for scenario in allScenarios {
        let padding = String(repeating: " ", count: width - scenario.name.count + 2)
        print(scenario.name + padding + scenario.summary)
    }
}

func reportUsageError(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}
