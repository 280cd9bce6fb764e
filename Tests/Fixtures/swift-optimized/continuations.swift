// Continuations, compiled with -O by Tests/QTraceRecordTests/AsyncStackRecordTests.swift: only
// optimized code inlines withCheckedContinuation and so calls swift_continuation_init/await
// through the PLT (a debug build calls the runtime's generic function, which calls them
// internally, unseen). Lines the test looks for are marked `SITE:`.
import Dispatch
import Glibc

/// Resumed later, from a Dispatch queue: the task suspends, then resumes.
@inline(never) func resumedLater(_ x: Int) async -> Int {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { continuation.resume(returning: x) }
    }
}

/// Resumed before it is awaited: the task does not suspend.
@inline(never) func resumedAtOnce(_ x: Int) async -> Int {
    await withCheckedContinuation { continuation in continuation.resume(returning: x) }
}

/// Never resumed: the callback is lost (the program's bug).
@inline(never) func leaked() async -> Int {
    await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in  // SITE: leaked-continuation
        _ = continuation
    }
}

let done = DispatchSemaphore(value: 0)
Task.detached {
    let a = await resumedLater(1), b = await resumedAtOnce(2)
    print("continuations resumed=\(a + b)")
    done.signal()
    _ = await leaked()
}
done.wait()
usleep(50_000)  // the leaked one stays suspended until the program exits
print("exit with one leaked continuation")
