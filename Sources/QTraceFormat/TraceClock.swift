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

/// `TraceClock.time(ofTSC:)` in integer arithmetic, giving the same result for every TSC:
/// the merge converts every record's TSC, and the floating-point path with its range checks
/// was a fifth of the merge's instructions.
///
/// Why it is exact: the double path computes r + 0.5 = offsetNs + nsPerTick × ticks + 0.5
/// with three roundings and truncates. Its error is at most 3.1 × 2^-53 × (|nsPerTick ×
/// ticks| + |offsetNs| + 1) (each rounding is relative to a value of at most that size), so
/// whenever the exact r + 0.5 is farther than that from an integer, the truncation gives
/// floor(r + 0.5). The fast path computes r + 0.5 in fixed point with 20 fractional bits
/// (nsPerTick and offsetNs are binary fractions: scaled by powers of two they are exact
/// integers, up to half a unit for the offset; the 128-bit product is exact; the shift
/// truncates less than a unit), and answers only when its value is more than `margin`
/// units away from an integer, with `margin` above both errors together. Everything else
/// (near-ties, ticks beyond the trace's range or before the start, unusual clocks) takes the
/// double path. FastClockTests compares both on over a million TSCs, near-ties included.
struct FastTSCConverter {
    private static let fractionBits: UInt64 = 20
    private static let one: Int64 = 1 << 20

    let clock: TraceClock
    private let baseTsc: UInt64
    /// The fast path covers ticks below this (0: none).
    private let tickLimit: UInt64
    /// nsPerTick × 2^(shift + 20), exactly.
    private let slope: UInt64
    private let shift: UInt64
    /// (offsetNs + 0.5) × 2^20, rounded.
    private let offset: Int64
    /// Fractions (in units of 2^-20 ns) within `margin` of an integer go the double path:
    /// the fast path answers when fraction - margin, wrapping, is below `window`.
    private let margin: UInt64
    private let window: UInt64

    /// A converter for TSCs up to `maxTsc` (the trace's last record); later ones are converted
    /// by the double path.
    init(_ clock: TraceClock, maxTsc: UInt64) {
        self.clock = clock
        baseTsc = clock.baseTsc
        let ns = clock.nsPerTick, offsetNs = clock.offsetNs
        // 2^e <= ns < 2^(e+1); slope = ns × 2^(62 - e) lies in [2^62, 2^63) and is an integer.
        let e = ns.isNormal && ns > 0 ? Int(ns.exponent) : Int.min
        let scale = e == Int.min ? 0 : 62 - e
        let span = maxTsc >= baseTsc ? maxTsc - baseTsc : 0
        // Values stay below 2^42 ns (73 minutes) so that fixed point fits 63 bits, and ticks
        // below 2^53 so that the double path converts them exactly.
        let limitNs = Double(UInt64(1) << 42)
        guard e != Int.min, scale >= 21, scale <= 83, abs(offsetNs) < limitNs,
              Double(span) * ns < limitNs, span < (1 << 53) else {
            tickLimit = 0; slope = 0; shift = 0; offset = 0; margin = 0; window = 0
            return
        }
        shift = UInt64(scale) - Self.fractionBits
        slope = UInt64(ns * Double(sign: .plus, exponent: scale, significand: 1))
        offset = Int64((offsetNs * Double(Self.one)).rounded()) + Self.one / 2
        // Double-path error bound (in ns) over the covered range, then in units of 2^-20 ns,
        // doubled, plus the fixed-point error (under 1.5 units) with room to spare.
        let magnitude = Double(span) * ns + abs(offsetNs) + 1
        let doubleError = 3.1 * magnitude / 9_007_199_254_740_992.0   // × 2^-53
        margin = UInt64((2 * doubleError * Double(Self.one)).rounded(.up)) + 4
        window = margin < UInt64(Self.one) / 4 ? UInt64(Self.one) - 2 * margin : 0
        // Past that margin the fast path would rarely answer.
        tickLimit = window > 0 ? span + 1 : 0
    }

    @inline(__always)
    func time(ofTSC tsc: UInt64) -> UInt64 {
        fastTime(ofTSC: tsc) ?? clock.time(ofTSC: tsc)
    }

    /// The time when the fixed-point value decides it; nil when the double path must.
    @inline(__always)
    func fastTime(ofTSC tsc: UInt64) -> UInt64? {
        let ticks = tsc &- baseTsc
        if ticks < tickLimit {
            let (high, low) = slope.multipliedFullWidth(by: ticks)
            // shift is in 1...63: the product's bits from `shift` up, 63 bits at most.
            let scaled = (high &<< (64 &- shift)) | (low &>> shift)
            let value = Int64(bitPattern: scaled) &+ offset
            let fraction = UInt64(bitPattern: value) & UInt64(Self.one - 1)
            if value >= Self.one && fraction &- margin < window {
                return UInt64(value >> Int64(Self.fractionBits))
            }
        }
        return nil
    }
}
