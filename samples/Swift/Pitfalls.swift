// Mistakes the GCD talks warn about (gcd-talks.md section 3). Each scenario contains the
// mistake on purpose, then still ends by itself with status 0 so that it can be recorded.
import Foundation

// MARK: - deadlock

/// Two subsystems that call each other synchronously. A transfer runs on the accounts queue
/// and needs the ledger; an audit runs on the ledger queue and needs the accounts. Once each
/// holds its own queue, each `sync` waits for a queue the other thread holds: a cycle that
/// never resolves. The main thread waits with a timeout and reports it.
///
/// The textbook case, `queue.sync` from an item of `queue` itself, cannot end by itself on
/// Linux: libdispatch notices the queue is owned by the calling thread and traps (SIGILL,
/// "dispatch_sync called on queue already owned by current thread"). It is available as
/// `deadlock --self-sync`, which crashes on purpose.
func runDeadlock(selfSync: Bool) {
    if selfSync { runSelfSyncDeadlock() }

    let accounts = DispatchQueue(label: "com.example.accounts")
    let ledger = DispatchQueue(label: "com.example.ledger")
    // Rendezvous so that both items hold their queue before either calls sync: the deadlock
    // then happens on every run instead of only on unlucky ones.
    let transferStarted = DispatchSemaphore(value: 0)
    let auditStarted = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    accounts.async {  // transfer
        transferStarted.signal()
        auditStarted.wait()
        ledger.sync { print("transfer recorded in the ledger") }  // never runs
        finished.signal()
    }
    ledger.async {  // audit
        auditStarted.signal()
        transferStarted.wait()
        accounts.sync { print("audit read the balances") }  // never runs
        finished.signal()
    }

    print("transfer (on com.example.accounts) and audit (on com.example.ledger) started")
    if finished.wait(timeout: .now() + 1) == .timedOut {
        print("deadlock detected: timed out")
        exit(0)  // the two stuck worker threads never return; do not wait for them
    }
    print("no deadlock")
}

/// `deadlock --self-sync`: sync onto the serial queue the caller is running on. libdispatch on
/// Linux detects this and crashes the process, so this variant never reaches its timeout.
func runSelfSyncDeadlock() -> Never {
    let queue = DispatchQueue(label: "com.example.deadlock")
    let finished = DispatchSemaphore(value: 0)
    // stderr: unbuffered, so the line survives the crash.
    note("calling sync onto com.example.deadlock from one of its own items (expect SIGILL)")
    queue.async {
        queue.sync {}
        finished.signal()
    }
    if finished.wait(timeout: .now() + 1) == .timedOut {
        print("deadlock detected: timed out")
    }
    exit(0)
}

// MARK: - priority-inversion

/// One serial queue (a database) used at two QoS levels. A long background "vacuum" holds it,
/// and a user-interactive lookup that needs it must wait behind it: the high-priority work
/// runs at the speed of the low-priority work.
func runPriorityInversion() {
    let database = DispatchQueue(label: "com.example.database")
    let events = Locked<[String]>([])
    let vacuumStarted = DispatchSemaphore(value: 0)
    let lookupDone = DispatchSemaphore(value: 0)

    database.async(qos: .background) {
        vacuumStarted.signal()
        burnCPU(milliseconds: 300)
        events.append("background vacuum finished")
    }
    vacuumStarted.wait()

    DispatchQueue.global(qos: .userInteractive).async {
        let waited = Stopwatch()
        let row = database.sync { () -> String in
            events.append("user-interactive lookup ran")
            return "row 42"
        }
        events.append("user-interactive lookup returned \(row)")
        note(String(format: "the user-interactive sync waited %.0f ms", waited.milliseconds))
        lookupDone.signal()
    }
    lookupDone.wait()

    for (index, event) in events.current.enumerated() {
        print("\(index + 1). \(event)")
    }
}

// MARK: - global-barrier

/// A barrier only means something on a private concurrent queue. The same three steps (a long
/// item, a barrier, a short item) run on a private concurrent queue and on a global queue: only
/// the first one makes the barrier wait for the long item. Assumes at least 2 CPUs.
func runGlobalBarrier() {
    func barrierWaited(on queue: DispatchQueue) -> Bool {
        let running = ConcurrencyGauge()
        let longItemStarted = DispatchSemaphore(value: 0)
        let barrierSawOthers = Locked(false)
        let allDone = DispatchGroup()

        queue.async(group: allDone) {
            running.measure {
                longItemStarted.signal()
                burnCPU(milliseconds: 150)
            }
        }
        longItemStarted.wait()
        queue.async(group: allDone, flags: .barrier) {
            barrierSawOthers.set(running.running > 0)
            running.measure { burnCPU(milliseconds: 10) }
        }
        queue.async(group: allDone) {
            running.measure { burnCPU(milliseconds: 10) }
        }
        allDone.wait()
        return !barrierSawOthers.current
    }

    let privateQueue = DispatchQueue(label: "com.example.photo-library", attributes: .concurrent)
    let yesNo = { (flag: Bool) in flag ? "yes" : "no" }
    print("private concurrent queue: barrier waited for the running item: \(yesNo(barrierWaited(on: privateQueue)))")
    print("global queue: barrier waited for the running item: \(yesNo(barrierWaited(on: .global())))")
}

// MARK: - source-never-resumed

/// A refresh timer is created and given a handler, but the code forgets to activate it:
/// sources start suspended, so the handler never runs.
func runSourceNeverResumed() {
    let fired = Locked(0)
    let refresh = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "com.example.refresh"))
    refresh.schedule(deadline: .now(), repeating: .milliseconds(50))
    refresh.setEventHandler { fired.add() }
    // Bug on purpose: refresh.activate() is never called.

    // Releasing a source that was never activated crashes libdispatch, so keep it to the end.
    keptUntilExit.append(refresh as AnyObject)
    simulateBlockingIO(milliseconds: 300)
    print("refresh timer (every 50 ms) handler runs after 300 ms: \(fired.current)")
}

// MARK: - group-imbalance

/// Two uploads enter a group, but the second one's error path returns without leave(). The
/// group never empties: notify never fires, and wait only returns because it has a timeout.
func runGroupImbalance() {
    let uploads = DispatchGroup()
    let notified = Locked(false)

    uploads.enter()
    DispatchQueue.global().async {
        burnCPU(milliseconds: 20)
        uploads.leave()  // upload 1 succeeded
    }
    uploads.enter()
    DispatchQueue.global().async {
        burnCPU(milliseconds: 20)
        // Bug on purpose: upload 2 "failed" and this path forgets uploads.leave().
    }
    uploads.notify(queue: .global()) { notified.set(true) }

    let result = uploads.wait(timeout: .now() + .milliseconds(300))
    print("group wait: \(result == .timedOut ? "timed out" : "success")")
    print("notify fired: \(notified.current ? "yes" : "no")")
    // A group released while still entered is a use error; keep it to the end.
    keptUntilExit.append(uploads)
}
