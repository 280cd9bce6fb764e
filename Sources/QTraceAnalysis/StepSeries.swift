// A value over time (backlog depth, running threads...) as a step function with bounded
// memory. Exact while small; past `capacity` points it halves its resolution (power-of-two
// buckets) and keeps, per bucket, the maximum and the value at the bucket's end, so that peaks
// survive down-sampling.

public struct StepSeries: Sendable, Codable, Equatable {
    public struct Point: Sendable, Codable, Equatable {
        public var time: UInt64
        /// Maximum over [time, next point's time).
        public var max: Int32
        /// Value at the end of the span (what carries into the next span).
        public var last: Int32
        public init(time: UInt64, max: Int32, last: Int32) { self.time = time; self.max = max; self.last = last }
    }

    /// Every point but the latest, which is kept inline in `tail`: a queue's backlog changes
    /// at every enqueue and start, and reading the array's header and its last element for
    /// each change were two cache misses per event on item-heavy traces (perf on the
    /// starfish trace: 83% of `backlogChanged`'s samples). With the tail inline, only a new
    /// point touches the array.
    private var closed: [Point] = []
    private var tail = Point(time: 0, max: 0, last: 0)
    private var hasTail = false
    /// 0 = exact change points; otherwise the bucket width in ns (a power of two).
    public private(set) var resolution: UInt64 = 0
    /// Largest value ever recorded (exact).
    public private(set) var peak: Int32 = 0
    /// Down-sampling starts at twice this many points.
    public let capacity: Int

    public init(capacity: Int = 1024) { self.capacity = capacity }

    /// The change points (or, once down-sampled, buckets) in time order.
    public var points: [Point] { hasTail ? closed + [tail] : closed }

    /// The current value (before any point: 0).
    public var current: Int32 { hasTail ? tail.last : 0 }

    /// Records that the value became `value` at `time`. Times must not decrease.
    @inline(__always)
    public mutating func record(_ value: Int32, at time: UInt64) {
        if value > peak { peak = value }
        // The common case once down-sampled, inline: another change inside the last bucket.
        if resolution != 0 && hasTail && tail.time == time & ~(resolution - 1) {
            if value > tail.max { tail.max = value }
            tail.last = value
            return
        }
        recordSlowly(value, at: time)
    }

    @inline(never)
    private mutating func recordSlowly(_ value: Int32, at time: UInt64) {
        if resolution == 0 {
            if hasTail && tail.time == time {
                // Two changes at one instant: the first lasted 0 ns. Drop the point if the
                // value is back to what it was.
                if let previous = closed.last, previous.last == value {
                    tail = closed.removeLast()
                } else {
                    tail.max = value; tail.last = value
                }
                return
            }
            if hasTail && tail.last == value { return }
            append(Point(time: time, max: value, last: value))
        } else {
            let bucket = time & ~(resolution - 1)
            if hasTail && tail.time == bucket {
                if value > tail.max { tail.max = value }
                tail.last = value
                return
            }
            let carried = hasTail ? tail.last : 0
            let held = time > bucket ? Swift.max(value, carried) : value
            append(Point(time: bucket, max: held, last: value))
        }
        if closed.count + 1 >= 2 * capacity { compact() }
    }

    private mutating func append(_ point: Point) {
        if hasTail { closed.append(tail) }
        tail = point
        hasTail = true
    }

    private mutating func compact() {
        let all = points
        guard let first = all.first, let lastPoint = all.last else { return }
        let span = lastPoint.time - first.time
        var newResolution: UInt64 = resolution == 0 ? 1 : resolution * 2
        while span / newResolution >= UInt64(capacity) { newResolution *= 2 }
        var out: [Point] = []
        out.reserveCapacity(capacity + 1)
        for p in all {
            let bucket = p.time & ~(newResolution - 1)
            if let tail = out.last, tail.time == bucket {
                out[out.count - 1].max = Swift.max(tail.max, p.max)
                out[out.count - 1].last = p.last
            } else {
                let carried = out.last?.last ?? 0
                let held = p.time > bucket ? Swift.max(p.max, carried) : p.max
                out.append(Point(time: bucket, max: held, last: p.last))
            }
        }
        tail = out.removeLast()
        closed = out
        resolution = newResolution
    }

    // The same document as when `points` was stored: the tail is the last point.
    private enum CodingKeys: String, CodingKey { case points, resolution, peak, capacity }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var all = try c.decode([Point].self, forKey: .points)
        resolution = try c.decode(UInt64.self, forKey: .resolution)
        peak = try c.decode(Int32.self, forKey: .peak)
        capacity = try c.decode(Int.self, forKey: .capacity)
        if let last = all.popLast() { tail = last; hasTail = true }
        closed = all
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(points, forKey: .points)
        try c.encode(resolution, forKey: .resolution)
        try c.encode(peak, forKey: .peak)
        try c.encode(capacity, forKey: .capacity)
    }

    /// Time-weighted mean of `last` values over [from, to) (exact for exact series).
    public func mean(from: UInt64, to: UInt64) -> Double {
        guard to > from else { return 0 }
        var total: Double = 0
        var value: Int32 = 0
        var t = from
        for p in points {
            if p.time > t {
                let until = Swift.min(p.time, to)
                if until > t { total += Double(value) * Double(until - t); t = until }
            }
            if p.time >= to { break }
            value = p.last
        }
        if to > t { total += Double(value) * Double(to - t) }
        return total / Double(to - from)
    }
}
