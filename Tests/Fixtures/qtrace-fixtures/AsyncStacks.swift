// Swift Concurrency as servers write it (Tests/QTraceRecordTests/AsyncStackRecordTests.swift):
// handlers whose jobs resume inside a library, TaskGroup children that never suspend (their
// task's entry point is a reabstraction thunk), children that sleep, and blocking calls made
// from async code. Lines the tests look for are marked `SITE:`.
import AsyncRouterKit
import Dispatch
import Foundation

/// A request handler: its jobs resume in `Inbound.next` (the library), one frame below it.
func handleOrder(_ inbound: Inbound, _ request: Int) async -> Int {
    let order = await inbound.next(request)  // SITE: handle-order
    return order * 2
}

/// Children that compute without suspending: each task is a single job entering through the
/// TaskGroup's thunk.
func hashChildren(_ count: Int) async -> UInt64 {
    await withTaskGroup(of: UInt64.self) { group in
        for i in 0..<count {
            group.addTask {  // SITE: hash-child
                var h: UInt64 = 1469598103934665603
                for k in 0..<20_000 { h = (h ^ UInt64(k &+ i)) &* 1099511628211 }
                return h
            }
        }
        var all: UInt64 = 0
        for await h in group { all ^= h }
        return all
    }
}

/// The cooperative pool's mistake: a semaphore wait and a `sync` that sleeps, in async code.
func blockingHandler(_ release: DispatchSemaphore) async {
    release.wait()  // SITE: blocking-wait
    DispatchQueue.global().sync { _ = usleep(2_000) }  // SITE: blocking-sync
}

func asyncStacks() {
    let done = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    Task.detached {
        let inbound = Inbound()
        var total = 0
        for r in 0..<20 { total += await handleOrder(inbound, r) }
        let hash = await hashChildren(8)
        print("orders=\(total) hash-nonzero=\(hash != 0)")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { release.signal() }
        await blockingHandler(release)
        print("blocking done")
        done.signal()
    }
    done.wait()
}

/// `count` children that each sleep once: Task.sleep's own timer tasks are the runtime's.
func taskSleepChildren(_ count: Int) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask { try? await Task.sleep(nanoseconds: 1_000_000) }  // SITE: sleep-child
            }
        }
        print("slept children=\(count)")
        done.signal()
    }
    done.wait()
}

/// An actor whose method holds it for a while: `callers` tasks calling it at once wait for it
/// (contended); called one after another they never wait (uncontended).
actor Ledger {
    private var entries = 0
    func post() -> Int {
        var x: UInt64 = 0
        for k in 0..<200_000 { x = x &+ UInt64(k) }  // SITE: ledger-post
        entries += Int(x & 1) + 1
        return entries
    }
}

func actorCalls(callers: Int, contended: Bool) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let ledger = Ledger()
        if contended {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<callers { group.addTask { await ledger.post() } }
                for await _ in group {}
            }
        } else {
            for _ in 0..<callers { _ = await ledger.post() }
        }
        print("ledger entries=\(await ledger.post() - 1)")
        done.signal()
    }
    done.wait()
}

/// A task that hops to the main actor `count` times while dispatchMain() lets worker threads
/// drain the main queue: each visit blocks the main actor 3 ms in a semaphore wait (the main
/// actor's own problem, not a cooperative-pool thread's).
@MainActor private var framesRendered = 0

@MainActor func renderFrame(_ gate: DispatchSemaphore) {
    _ = gate.wait(timeout: .now() + .milliseconds(3))
    framesRendered += 1
}

func mainActorFrames(_ count: Int) -> Never {
    let gate = DispatchSemaphore(value: 0)
    Task.detached {
        for _ in 0..<count { await renderFrame(gate) }
        await MainActor.run { print("frames=\(framesRendered)") }
        exit(0)  // off the main actor: its last visit ends with the hop back
    }
    dispatchMain()
}

// MARK: - Benchmarks (scripts/bench-concurrency.py)

/// `count` tiny child tasks (each returns its index), 1000 per TaskGroup: ns per task.
func benchTasks(_ count: Int) {
    let done = DispatchSemaphore(value: 0)
    let start = DispatchTime.now().uptimeNanoseconds
    Task.detached {
        var sum = 0
        var left = count
        while left > 0 {
            let batch = min(1000, left)
            sum &+= await withTaskGroup(of: Int.self) { group in
                for i in 0..<batch { group.addTask { i } }
                var s = 0
                for await v in group { s &+= v }
                return s
            }
            left -= batch
        }
        let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count)
        print(String(format: "tiny-tasks ns/task %.1f", ns), sum == -1 ? "" : "")
        done.signal()
    }
    done.wait()
}

actor HopCounter {
    var n = 0
    func hop() { n &+= 1 }
}

/// `count` calls of an actor's method from one task: each a hop onto the actor and back.
func benchHops(_ count: Int) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let counter = HopCounter()
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { await counter.hop() }
        let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count)
        print(String(format: "actor-hops ns/call %.1f", ns), await counter.n == count ? "" : "lost")
        done.signal()
    }
    done.wait()
}

/// A task that computes for 250 ms of its thread's CPU time without suspending (however
/// loaded the machine, its job runs at least that long), then the same work cut every 10 ms by
/// a sleep (a Task.yield may return at once, without suspending, when nothing else is ready).
func longJob() {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        var x: UInt64 = 0
        let until = threadCPUNs() + 250_000_000
        while threadCPUNs() < until { x = x &* 6364136223846793005 &+ 1 }  // SITE: long-job
        for _ in 0..<25 {
            let slice = threadCPUNs() + 10_000_000
            while threadCPUNs() < slice { x = x &* 6364136223846793005 &+ 1 }
            try? await Task.sleep(nanoseconds: 100_000)
        }
        print("long job done", x == 42 ? "" : "")
        done.signal()
    }
    done.wait()
}
