// The validation boundary (docs/trace-format.md, "Validation"): what a trace may claim before
// the analysis sees it. The reader drops and counts records that break these rules, and
// ignores header fields that are out of range, with a warning each; behind it the analysis
// may rely on every event time lying in 0...TraceLimits.maxTraceNs.

/// The documented limits of a trace the reader accepts.
public enum TraceLimits {
    /// The longest trace: 2^50 ns (about 13 days). Event times never exceed it, so sums of a
    /// few thousand durations cannot overflow a UInt64 (the analysis saturates beyond).
    public static let maxTraceNs: UInt64 = 1 << 50
    /// How far before the start (the header's init pair) a record may lie: the shim takes
    /// the pair before recording anything, so only clock noise puts a record there.
    public static let slackBeforeStartNs: UInt64 = 1_000_000_000
    /// How far after the final calibration pair a record may lie: threads racing the exit.
    public static let slackAfterEndNs: UInt64 = 1_000_000_000
    /// TSC rates outside 1 MHz...100 GHz are not a clock (tsc_hz and the fitted line).
    public static let minTicksPerSecond = 1e6
    public static let maxTicksPerSecond = 1e11
    /// A calibration pair farther than this from the line tsc_hz predicts lies (1%, at least 1 s).
    public static let calibrationTolerance = 0.01
    /// Counts in the header (dropped events) above this are not counts: 2^48.
    public static let maxCount: UInt64 = 1 << 48
    /// The recorder's cost per event above this (1 ms) is not a measurement.
    public static let maxShimOverheadNs: UInt64 = 1_000_000
}

/// The TSC range a record's time must lie in, after the clock is fitted: `low...low + span`.
struct TimeBounds {
    let low: UInt64
    let span: UInt64

    static let unbounded = TimeBounds(low: 0, span: .max)

    /// Whether `tsc` lies in the range (one comparison: below `low` wraps past `span`).
    @inline(__always) func contains(_ tsc: UInt64) -> Bool { tsc &- low <= span }

    /// The range's last TSC (`low + span` never overflows: see the initializers).
    var high: UInt64 { low &+ span }

    /// From 1 s before the start to the end: the final pair plus its slack when the trace has
    /// one, else the longest trace.
    init(clock: TraceClock, finalTsc: UInt64) {
        var endNs = TraceLimits.maxTraceNs
        if finalTsc != 0 {
            endNs = Swift.min(endNs, Swift.min(clock.time(ofTSC: finalTsc), endNs) + TraceLimits.slackAfterEndNs)
        }
        let slackTicks = Double(TraceLimits.slackBeforeStartNs) / clock.nsPerTick
        let start = clock.tsc(ofTime: 0)
        let low = slackTicks < Double(start) ? start - UInt64(slackTicks) : 0
        let high = Swift.max(clock.tsc(ofTime: endNs), low)
        self.init(low: low, span: high - low)
    }

    init(low: UInt64, span: UInt64) { self.low = low; self.span = span }
}

/// Header checks: fields the analysis computes with must be in range, or they are ignored
/// (set to 0, "unknown") with a warning.
extension TraceHeader {
    mutating func dropImplausibleFields() -> [String] {
        var problems: [String] = []
        func count(_ field: inout UInt64, _ name: String, limit: UInt64 = TraceLimits.maxCount) {
            guard field > limit else { return }
            problems.append("header \(name) \(field) is implausible (over \(limit)), ignored")
            field = 0
        }
        count(&droppedEvents, "dropped_events")
        count(&droppedEnqueue, "dropped_enqueue")
        count(&droppedStart, "dropped_start")
        count(&droppedEnd, "dropped_end")
        count(&shimOverheadNs, "shim_overhead_ns", limit: TraceLimits.maxShimOverheadNs)
        if tscHz != 0, !(Double(tscHz) >= TraceLimits.minTicksPerSecond && Double(tscHz) <= TraceLimits.maxTicksPerSecond) {
            problems.append("header tsc_hz \(tscHz) is not a clock rate (1 MHz...100 GHz), ignored")
            tscHz = 0
        }
        if finalTsc != 0, let problem = finalPairProblem() {
            problems.append("header final calibration pair \(problem), ignored")
            finalTsc = 0
            finalMonoNs = 0
        }
        return problems
    }

    private func finalPairProblem() -> String? {
        if finalTsc < initTsc || finalMonoNs < initMonoNs { return "precedes the start" }
        if finalMonoNs - initMonoNs > TraceLimits.maxTraceNs { return "is more than 2^50 ns after the start" }
        return nil
    }
}

extension CalibrationPair {
    /// Why this pair cannot be on the trace's clock line (nil: plausible). `initPair` anchors
    /// the line; `tscHz` (0: unknown) predicts its slope.
    func problem(initPair: CalibrationPair, tscHz: UInt64) -> String? {
        if tsc < initPair.tsc || monoNs < initPair.monoNs { return nil } // dropped by the fit, as before
        let ns = monoNs - initPair.monoNs
        if ns > TraceLimits.maxTraceNs { return "is more than 2^50 ns after the start" }
        guard tscHz != 0 else { return nil }
        let predicted = Double(tsc - initPair.tsc) * 1e9 / Double(tscHz)
        let tolerance = Swift.max(1e9, Double(ns) * TraceLimits.calibrationTolerance)
        return abs(predicted - Double(ns)) > tolerance ? "is off the line tsc_hz predicts by more than 1%" : nil
    }
}

extension TraceClock {
    /// Whether the line is a plausible clock: rate within the limits, offset within the trace.
    var isPlausible: Bool {
        let rate = ticksPerSecond
        return rate >= TraceLimits.minTicksPerSecond && rate <= TraceLimits.maxTicksPerSecond
            && abs(offsetNs) <= Double(TraceLimits.maxTraceNs)
    }
}
