// CPU saturation: periods when the program kept every CPU busy. Then items wait for a CPU
// whatever the queues look like, so the rules that read waits as a design problem (items
// too small for their dispatch cost, a backlog that grows) leave those waits out, and one
// `cpu.saturated` finding says what explains them (docs/findings.md).
import QTraceFormat

public struct CPUSaturation: Sendable, Equatable {
    /// Periods (runs of consecutive saturated windows) at least `saturationMinNs` long.
    public var periods: [Span]
    /// What "busy" was measured from: kernel states (`--sched`) or item run time.
    public var fromSched: Bool
    /// The busiest window's busy time over its capacity (CPUs × window).
    public var peakShare: Double

    public var saturatedNs: UInt64 { periods.reduce(0) { $0 + $1.duration } }

    /// The part of [start, end) inside saturated periods.
    public func overlap(_ start: UInt64, _ end: UInt64) -> UInt64 {
        periods.reduce(0) { sum, p in
            let from = Swift.max(p.start, start), to = Swift.min(p.end, end)
            return to > from ? sum + (to - from) : sum
        }
    }

    /// Whether most of [start, end) was saturated (an instant: whether it lies inside a period).
    public func explains(_ start: UInt64, _ end: UInt64) -> Bool {
        guard end > start else { return periods.contains { $0.start <= start && start < $0.end } }
        return overlap(start, end) * 2 >= end - start
    }

    /// Busy time per `saturationWindowNs` window over [0, endTime): a window is saturated
    /// when it is at least `saturationBusyShare` of CPUs × window. Busy is a thread in the
    /// running state: on a CPU (`--sched`), else running an item and not blocked in a wait
    /// (a sleep or blocking I/O inside an item then counts as busy: only `--sched` tells).
    public init(_ model: TraceModel) {
        // Past `saturationMaxWindows` windows (a trace of hours, or a damaged one claiming
        // years) they widen: memory stays bounded.
        let window = Swift.max(Thresholds.saturationWindowNs, model.endTime / UInt64(Thresholds.saturationMaxWindows))
        let count = Int(model.endTime / window) + 1
        var busy = [UInt64](repeating: 0, count: count)
        fromSched = model.sched != nil
        if let sched = model.sched {
            for changes in sched.threads { Self.spreadRunning(changes, model.endTime, window, into: &busy) }
        } else {
            for thread in model.threads { for span in thread.busy { Self.spread(span, window, into: &busy) } }
        }
        let capacity = Double(Swift.max(model.info.ncpu, 1)) * Double(window)
        peakShare = (busy.max().map { Double($0) / capacity }) ?? 0
        var periods: [Span] = []
        var runStart: Int?
        for w in 0...count {
            let saturated = w < count && Self.saturated(Double(busy[w]) / capacity, fromSched: fromSched)
            if saturated, runStart == nil { runStart = w }
            guard !saturated, let first = runStart else { continue }
            let span = Span(start: UInt64(first) * window, end: Swift.min(UInt64(w) * window, model.endTime))
            if span.duration >= Thresholds.saturationMinNs { periods.append(span) }
            runStart = nil
        }
        self.periods = periods
    }

    /// Busy ≈ every CPU. Without kernel states, far more items "running" than CPUs means
    /// threads sleeping or doing blocking I/O inside items (libdispatch adds workers only
    /// when others block), not CPUs kept busy: that is no saturation.
    static func saturated(_ share: Double, fromSched: Bool) -> Bool {
        share >= Thresholds.saturationBusyShare && (fromSched || share <= Thresholds.saturationMaxShareWithoutSched)
    }

    /// A thread's running kernel states (`--sched`), each until its next change.
    static func spreadRunning(_ changes: [SchedChange], _ endTime: UInt64, _ window: UInt64, into busy: inout [UInt64]) {
        for (k, change) in changes.enumerated() where change.state == .running {
            let end = k + 1 < changes.count ? changes[k + 1].time : endTime
            if end > change.time { spread(Span(start: change.time, end: end), window, into: &busy) }
        }
    }

    static func spread(_ span: Span, _ window: UInt64, into busy: inout [UInt64]) {
        var t = span.start
        while t < span.end {
            let w = Int(t / window)
            guard w < busy.count else { return }
            let until = Swift.min(span.end, UInt64(w + 1) * window)
            busy[w] &+= until - t  // a damaged trace cannot trap here
            t = until
        }
    }
}
