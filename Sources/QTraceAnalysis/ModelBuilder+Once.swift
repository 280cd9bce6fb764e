// dispatch_once calls that found the predicate not done (ONCE_BEGIN/ONCE_END). The thread
// that runs the initializer is working, not blocked: only a thread that waited for another
// thread's initializer gets a blocked interval (cause `.once`), so the long-wait and
// blocked-main-thread findings apply to it as to any other wait.
//
// Which of the two a call was is known only at ONCE_END, so the interval is added then, from
// the ONCE_BEGIN time, and the thread's busy and blocked totals are corrected for it. It is
// not a frame of the thread's stack: the thread-activity series (blocked threads over time)
// does not count once waits, rather than count the initializer's runner as blocked while it
// works. A call still under way at the end of the trace adds nothing.
import QTraceFormat

extension ModelBuilder {
    mutating func onceBegin(_ e: Event, thread t: Int32) {
        onces.began(thread: t, predicate: e.a, at: now)
    }

    mutating func onceEnd(_ e: Event, thread t: Int32) {
        guard let start = onces.ended(thread: t, predicate: e.a) else {
            model.anomalies.unmatchedWaitEnds += 1
            return
        }
        guard OnceOutcome(rawValue: e.arg) == .waited else { return }
        var interval = BlockedInterval(thread: Int(t), start: start, end: now, cause: .once, object: -1)
        if e.b != 0 { interval.siteRaw = siteID(e.b) }
        threads.addOnceWait(interval, thread: t, since: start, at: now)
    }
}
