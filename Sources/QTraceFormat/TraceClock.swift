// TSC -> nanoseconds since trace start, fitted from the calibration pairs.

/// One (TSC, CLOCK_MONOTONIC ns) pair taken at the same instant.
public struct CalibrationPair: Sendable, Equatable {
    public var tsc: UInt64
    public var monoNs: UInt64
    public init(tsc: UInt64, monoNs: UInt64) { self.tsc = tsc; self.monoNs = monoNs }
}

/// The line `ns = offsetNs + nsPerTick * (tsc - baseTsc)`, where ns counts from the header's
/// init_mono_ns. Values are kept relative to the init pair so that the Double math works on
/// trace-length numbers (exact below 2^53 ticks) rather than on uptime-sized ones.
public struct TraceClock: Sendable, Equatable {
    public enum Method: String, Sendable {
        /// Least-squares line through all pairs.
        case leastSquares = "least squares"
        /// The header's tsc_hz (a single pair, or a degenerate fit).
        case tscHz = "header tsc_hz"
        /// Neither a usable fit nor tsc_hz: one tick is taken as one nanosecond.
        case identity = "1 tick = 1 ns"
    }

    public let baseTsc: UInt64
    public let offsetNs: Double
    public let nsPerTick: Double
    public let method: Method
    /// Pairs that were used (or available, for the fallbacks).
    public let pairCount: Int

    public init(baseTsc: UInt64, offsetNs: Double, nsPerTick: Double, method: Method, pairCount: Int) {
        self.baseTsc = baseTsc; self.offsetNs = offsetNs; self.nsPerTick = nsPerTick
        self.method = method; self.pairCount = pairCount
    }

    /// TSC ticks per second implied by the line.
    public var ticksPerSecond: Double { 1e9 / nsPerTick }

    /// Nanoseconds since trace start; clamped to 0 for instants before it.
    @inline(__always)
    public func time(ofTSC tsc: UInt64) -> UInt64 {
        let ticks = Double(Int64(bitPattern: tsc &- baseTsc))
        let ns = offsetNs + nsPerTick * ticks
        if !(ns > 0) { return 0 }
        if ns >= 18_446_744_073_709_551_616.0 { return .max }
        return UInt64(ns + 0.5)
    }

    /// The TSC value whose time is `time` (the inverse of `time(ofTSC:)`, rounded): what a
    /// record added after the fact (the scheduler stream) stores to land at `time`.
    public func tsc(ofTime time: UInt64) -> UInt64 {
        let ticks = ((Double(time) - offsetNs) / nsPerTick).rounded()
        guard ticks.isFinite else { return baseTsc }
        if ticks <= -Double(baseTsc) { return 0 }
        if ticks >= 9.2e18 { return .max }
        return ticks >= 0 ? baseTsc &+ UInt64(ticks) : baseTsc &- UInt64(-ticks)
    }

    /// Fits the clock. `initPair` is the header's start pair and anchors the fallbacks;
    /// `pairs` are all pairs including it. Pairs before the start are dropped as corrupt.
    public static func fit(initPair: CalibrationPair, pairs: [CalibrationPair], tscHz: UInt64) -> TraceClock {
        let base = initPair.tsc, origin = initPair.monoNs
        let usable = pairs.filter { $0.tsc >= base && $0.monoNs >= origin }
        if usable.count >= 2, let line = leastSquares(usable, base: base, origin: origin) {
            return TraceClock(baseTsc: base, offsetNs: line.offset, nsPerTick: line.slope,
                              method: .leastSquares, pairCount: usable.count)
        }
        if tscHz > 0 {
            return TraceClock(baseTsc: base, offsetNs: 0, nsPerTick: 1e9 / Double(tscHz),
                              method: .tscHz, pairCount: usable.count)
        }
        return TraceClock(baseTsc: base, offsetNs: 0, nsPerTick: 1, method: .identity, pairCount: usable.count)
    }

    /// Ordinary least squares on centered values; nil when the line is degenerate (all
    /// pairs at one TSC, or a non-increasing clock).
    private static func leastSquares(_ pairs: [CalibrationPair], base: UInt64, origin: UInt64) -> (offset: Double, slope: Double)? {
        let xs = pairs.map { Double($0.tsc - base) }
        let ys = pairs.map { Double($0.monoNs - origin) }
        let count = Double(pairs.count)
        let meanX = xs.reduce(0, +) / count
        let meanY = ys.reduce(0, +) / count
        var sxx = 0.0, sxy = 0.0
        for (x, y) in zip(xs, ys) {
            sxx += (x - meanX) * (x - meanX)
            sxy += (x - meanX) * (y - meanY)
        }
        guard sxx > 0 else { return nil }
        let slope = sxy / sxx
        guard slope.isFinite, slope > 0 else { return nil }
        let offset = meanY - slope * meanX
        guard offset.isFinite else { return nil }
        return (offset, slope)
    }
}
