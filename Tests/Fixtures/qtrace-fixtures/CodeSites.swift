// Code identity fixtures: every way code reaches Dispatch, each on a line marked `// SITE:`
// (CodeIdentityRecordTests finds the lines by their markers, so edits here stay safe).
import AsyncRouterKit
import Dispatch
import Foundation

final class CodeSiteLoader {
    let queue = DispatchQueue(label: "fx.code.loader")

    func loadAll() {
        for i in 0..<3 {
            queue.async { Thread.sleep(forTimeInterval: 0.001 * Double(i + 1)) }  // SITE: closure-async
        }
        queue.sync { _ = 1 }  // SITE: closure-sync
    }
}

func codeSitesWorkItem() {
    let item = DispatchWorkItem { Thread.sleep(forTimeInterval: 0.001) }  // SITE: work-item
    DispatchQueue.global().async(execute: item)
    item.wait()
}

func codeSitesGroupWait() {
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { Thread.sleep(forTimeInterval: 0.02) }  // SITE: group-async
    group.wait()  // SITE: group-wait
}

func codeSitesAfterAndSource() {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) { done.signal() }  // SITE: after
    done.wait()
    let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "fx.code.timer"))
    let fired = DispatchSemaphore(value: 0)
    timer.setEventHandler { fired.signal() }  // SITE: source-handler
    timer.schedule(deadline: .now() + .milliseconds(1))
    timer.resume()
    fired.wait()
    timer.cancel()
}

func codeSites() {
    CodeSiteLoader().loadAll()
    codeSitesWorkItem()
    codeSitesGroupWait()
    codeSitesAfterAndSource()
    print("code sites done")
}

/// A TaskGroup of `children` child tasks, each awaiting twice, and an actor.
actor CodeSiteTally { var n = 0; func add(_ k: Int) { n += k } }

func codeSiteChild(_ i: Int) async -> Int {
    await Task.yield()
    await Task.yield()
    return i
}

func codeSiteTasks(children: Int) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let tally = CodeSiteTally()
        let sum = await withTaskGroup(of: Int.self) { group in
            for i in 0..<children { group.addTask { await codeSiteChild(i) } }
            var sum = 0
            for await v in group { sum += v }
            return sum
        }
        await tally.add(sum)
        print("tasks sum=\(await tally.n)")
        done.signal()
    }
    done.wait()
}

// MARK: - waits made inside a library and through a helper (docs/code-identity.md, "Wait stacks")

/// A worker waits inside a library's blocking call (AsyncRouterKit, outside the program under
/// `--focus qtrace_fixtures`) for 1.1 s, and the main thread for a semaphore through a helper of
/// its own: each wait must be named by the program's line that made it.
func libraryWaits() {
    let done = DispatchGroup()
    let reply = DispatchSemaphore(value: 0)
    DispatchQueue.global().async(group: done) {
        LibraryWait.untilSignalled(reply)  // SITE: library-caller
        print("reply arrived")
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1100)) { reply.signal() }
    let ready = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { ready.signal() }
    waitThroughHelper(ready)  // SITE: helper-caller
    done.wait()
}

@inline(never)
func waitThroughHelper(_ semaphore: DispatchSemaphore) {
    semaphore.wait()  // SITE: helper-wait
}

/// DispatchWorkItem.wait() on a worker: it blocks until the item (1.1 s of sleep on a serial
/// queue) has run; a second wait with a timeout times out before its item runs.
func workItemWaits() {
    let queue = DispatchQueue(label: "com.example.work-item-waits")
    let slow = DispatchWorkItem { usleep(1_100_000) }
    let done = DispatchGroup()
    DispatchQueue.global().async(group: done) {
        queue.async(execute: slow)
        slow.wait()  // SITE: work-item-wait
        print("work item done")
        let late = DispatchWorkItem { print("late item ran") }
        queue.asyncAfter(deadline: .now() + .milliseconds(300), execute: late)
        let result = late.wait(timeout: .now() + .milliseconds(20))  // SITE: work-item-timeout
        print("timed out: \(result == .timedOut)")
        late.wait()
    }
    done.wait()
}
