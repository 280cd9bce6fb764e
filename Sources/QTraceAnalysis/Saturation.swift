// CPU saturation: periods when the program kept every CPU busy. Then items wait for a CPU
// whatever the queues look like, so the rules that read waits as a design problem (items
// too small for their dispatch cost, a backlog that grows) leave those waits out, and one
// `cpu.saturated` finding says what explains them (docs/findings.md).
//
// Only the kernel's states (`--sched`) and CPU samples (`--cpu`) show a thread on a CPU.
// Item run time does not: an item that sleeps or blocks in a system call "runs" without
// using a CPU. So without either, the periods are what item time allows (every CPU may have
// been busy): enough to leave waits out of the queue rules, not to claim saturation.
import QTraceFormat

public struct CPUSaturation: Sendable, Equatable {
    /// What "busy" was measured from, most direct first.
    public enum Evidence: Sendable, Equatable {
        /// Kernel states (`--sched`): threads on a CPU or runnable (waiting for one).
        case sched
        /// CPU samples (`--cpu`): a sample stands for 1/Hz s on a CPU.
        case cpuSamples
        /// Item run time outside Dispatch waits: an upper bound (items may sleep inside).
        case itemTime
    }

    /// Periods (runs of consecutive saturated windows) at least `saturationMinNs` long, in
    /// time order and apart (what `overlap` searches by halves).
    public internal(set) var periods: [Span]
    public var evidence: Evidence
    /// The busiest window's busy time over its capacity (CPUs × window).
    public var peakShare: Double

    public var fromSched: Bool { evidence == .sched }
    /// Whether the periods show CPUs in use (kernel states, samples), not only item time:
    /// only then is `cpu.saturated` raised.
    public var isMeasured: Bool { evidence != .itemTime }
    public var saturatedNs: UInt64 { periods.reduce(0) { $0 + $1.duration } }

    /// The part of [start, end) inside saturated periods: from the first period ending after
    /// `start`, found by halves (the items-too-small rule asks for each of millions of items,
    /// and a loaded recording has hundreds of periods).
    public func overlap(_ start: UInt64, _ end: UInt64) -> UInt64 {
        var sum: UInt64 = 0
        var k = firstPeriod(endingAfter: start)
        while k < periods.count && periods[k].start < end {
            let from = Swift.max(periods[k].start, start), to = Swift.min(periods[k].end, end)
            if to > from { sum += to - from }
            k += 1
        }
        return sum
    }

    /// Whether most of [start, end) was saturated (an instant: whether it lies inside a period).
    public func explains(_ start: UInt64, _ end: UInt64) -> Bool {
        guard end > start else {
            let k = firstPeriod(endingAfter: start)
            return k < periods.count && periods[k].start <= start
        }
        return overlap(start, end) * 2 >= end - start
    }

    /// The index of the first period that ends after `t` (`periods.count` if none does).
    private func firstPeriod(endingAfter t: UInt64) -> Int {
        var (low, high) = (0, periods.count)
        while low < high {
            let middle = (low + high) / 2
            if periods[middle].end > t { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Busy time per `saturationWindowNs` window over [0, endTime): a window is saturated
    /// when it is at least `saturationBusyShare` of CPUs × window. Busy is a thread on a CPU
    /// or runnable (`--sched`: a runnable thread means every CPU was taken), else sampled on
    /// a CPU (`--cpu`), else running an item and not blocked in a Dispatch wait (a sleep or
    /// blocking I/O inside an item then counts as busy: an upper bound, see `isMeasured`).
    public init(_ model: TraceModel) {
        // Past `saturationMaxWindows` windows (a trace of hours, or a damaged one claiming
        // years) they widen: memory stays bounded.
        let window = Swift.max(Thresholds.saturationWindowNs, model.endTime / UInt64(Thresholds.saturationMaxWindows))
        let count = Int(model.endTime / window) + 1
        var busy = [UInt64](repeating: 0, count: count)
        if let sched = model.sched {
            evidence = .sched
            for (t, changes) in sched.threads.enumerated() {
                // A thread's last state lasts until it exited (the kernel's states stop there), as in SchedModel.
                let end = model.threads.indices.contains(t) ? model.threads[t].exitedAt ?? model.endTime : model.endTime
                Self.spreadWantingCPU(changes, end, window, into: &busy)
            }
        } else if let cpu = model.cpu, cpu.hz > 0, !cpu.samples.isEmpty {
            evidence = .cpuSamples
            Self.spreadSamples(cpu, window, into: &busy)
        } else {
            evidence = .itemTime
            for thread in model.threads { Self.spread(thread.busy, window, into: &busy) }
        }
        let capacity = Double(Swift.max(model.info.ncpu, 1)) * Double(window)
        peakShare = (busy.max().map { Double($0) / capacity }) ?? 0
        var periods: [Span] = []
        var runStart: Int?
        for w in 0...count {
            let saturated = w < count && Self.saturated(Double(busy[w]) / capacity, evidence)
            if saturated, runStart == nil { runStart = w }
            guard !saturated, let first = runStart else { continue }
            let span = Span(start: UInt64(first) * window, end: Swift.min(UInt64(w) * window, model.endTime))
            if span.duration >= Thresholds.saturationMinNs { periods.append(span) }
            runStart = nil
        }
        self.periods = periods
    }

    /// Busy ≈ every CPU. From item time, far more items "running" than CPUs means threads
    /// sleeping or doing blocking I/O inside items (libdispatch adds workers only when others
    /// block), not CPUs kept busy: that is no saturation.
    static func saturated(_ share: Double, _ evidence: Evidence) -> Bool {
        share >= Thresholds.saturationBusyShare && (evidence != .itemTime || share <= Thresholds.saturationMaxShareWithoutSched)
    }

    /// A thread's running and runnable kernel states (`--sched`), each until its next change
    /// (the last until `endTime`, the thread's end).
    /// Runnable counts: the thread wanted a CPU and every CPU was taken (on a machine shared
    /// with other programs, by them: the program's items then wait for a CPU all the same).
    static func spreadWantingCPU(_ changes: [SchedChange], _ endTime: UInt64, _ window: UInt64, into busy: inout [UInt64]) {
        for (k, change) in changes.enumerated() where change.state == .running || change.state == .runnable {
            let end = k + 1 < changes.count ? changes[k + 1].time : endTime
            if end > change.time { spread(Span(start: change.time, end: end), window, into: &busy) }
        }
    }

    /// Each CPU sample as 1/Hz s on a CPU in its window.
    static func spreadSamples(_ cpu: CPUSamples, _ window: UInt64, into busy: inout [UInt64]) {
        let period = 1_000_000_000 / UInt64(cpu.hz)
        for sample in cpu.samples {
            let w = Int(sample.time / window)
            if w < busy.count { busy[w] &+= period }
        }
    }

    /// `spread` of each span, in time order: a span in the window of the one before needs no
    /// division to find it (one per item's span was most of the findings' time on a flood of
    /// 3.4M items).
    static func spread(_ spans: [Span], _ window: UInt64, into busy: inout [UInt64]) {
        busy.withUnsafeMutableBufferPointer { busy in
            var w = 0, windowStart: UInt64 = 0, windowEnd: UInt64 = 0
            for span in spans {
                var t = span.start
                while t < span.end {
                    if t < windowStart || t >= windowEnd {
                        w = Int(t / window)
                        guard w < busy.count else { break }
                        windowStart = UInt64(w) * window
                        windowEnd = UInt64(w + 1) * window
                    }
                    let until = Swift.min(span.end, windowEnd)
                    busy[w] &+= until - t  // a damaged trace cannot trap here
                    t = until
                }
            }
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
