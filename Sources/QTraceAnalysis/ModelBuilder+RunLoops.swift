// Foundation run loops (RUNLOOP_TIMER, RUNLOOP_TIMER_FIRE; docs/trace-format.md, "Run loops").
// A run loop is a queue of kind `.runLoop` (its QUEUE_INFO names it); a `RunLoop.perform`
// block is an ordinary item of it. A Foundation Timer is a timer source of the run loop that
// fires it: each fire is a handler run, so timers share the Dispatch timers' statistics
// (period, lateness, run time) and name the closure the Timer runs.
import QTraceFormat

extension ModelBuilder {
    mutating func runLoopTimerCreated(_ e: Event) {
        // Its run loop is known when it fires (a timer may be added to any run loop).
        var source = TraceSource(address: e.a, generation: objects.nextGeneration(e.a), type: .timer, handle: 0, mask: 0,
                                 queue: nil, createdAt: now)
        source.activatedAt = now  // a Timer needs no resume: it fires once added to a run loop
        source.hasEventHandler = true
        source.timers.append(TimerConfig(setAt: now, start: converter.traceTime(e.c, now: now),
                                         intervalNs: e.b == 0 ? nil : e.b, leewayNs: 0))
        let s = sources.add(source)
        objects.store(.source, s, at: e.a)
        if e.d != 0 { code.noteSourceHandlerSite(Int(s), siteID(e.d)) }
    }

    /// A fire: lateness is its start minus the date the run loop programmed for it (CF skips
    /// the fires a late run loop missed, so it is not start + k × interval).
    mutating func runLoopTimerFired(_ e: Event, thread t: Int32) {
        guard let s = source(address: e.a) else { return }
        if sources.queue(of: s) == nil {
            let q = queue(address: e.b)
            sources.setQueue(s, q)
        }
        let lateness = converter.traceTime(e.c, now: now).map { Int64(bitPattern: now &- $0) }
        beginHandlerRun(source: s, kind: .event, data: 1, lateness: lateness, thread: t)
    }
}
