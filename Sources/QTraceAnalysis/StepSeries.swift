// A value over time (backlog depth, running threads...) as a step function with bounded
// memory. Exact while small; past `capacity` points it halves its resolution (power-of-two
// buckets) and keeps, per bucket, the maximum and the value at the bucket's end, so that peaks
// survive down-sampling.
import QTraceFormat

public struct StepSeries: Sendable, Codable, Equatable {
    public struct Point: Sendable, Codable, Equatable {
        public var time: UInt64
        /// Maximum over [time, next point's time).
        public var max: Int32
        /// Value at the end of the span (what carries into the next span).
        public var last: Int32
        public init(time: UInt64, max: Int32, last: Int32) { self.time = time; self.max = max; self.last = last }
    }

    public private(set) var points: [Point] = []
    /// 0 = exact change points; otherwise the bucket width in ns (a power of two).
    public private(set) var resolution: UInt64 = 0
    /// Largest value ever recorded (exact).
    public private(set) var peak: Int32 = 0
    /// Down-sampling starts at twice this many points.
    public let capacity: Int

    public init(capacity: Int = 1024) { self.capacity = capacity }

    /// The current value (before any point: 0).
    public var current: Int32 { points.last?.last ?? 0 }

    /// Records that the value became `value` at `time`. Times must not decrease.
    @inline(__always)
    public mutating func record(_ value: Int32, at time: UInt64) {
        if value > peak { peak = value }
        // The common case once down-sampled, inline: another change inside the last bucket.
        // The point is written whole: each write into the array checks that its storage is
        // not shared (a call), and two fields written apart made two checks per change.
        let n = points.count
        if resolution != 0 && n > 0 {
            let tail = points[n - 1]
            if tail.time == time & ~(resolution - 1) {
                points[n - 1] = Point(time: tail.time, max: Swift.max(tail.max, value), last: value)
                return
            }
        }
        recordSlowly(value, at: time)
    }

    @inline(never)
    private mutating func recordSlowly(_ value: Int32, at time: UInt64) {
        let n = points.count
        if resolution == 0 {
            if n > 0 && points[n - 1].time == time {
                // Two changes at one instant: the first lasted 0 ns. Drop the point if the
                // value is back to what it was.
                if n > 1 && points[n - 2].last == value {
                    points.removeLast()
                } else {
                    points[n - 1].max = value; points[n - 1].last = value
                }
                return
            }
            if n > 0 && points[n - 1].last == value { return }
            points.append(Point(time: time, max: value, last: value))
        } else {
            let bucket = time & ~(resolution - 1)
            if n > 0 && points[n - 1].time == bucket {
                if value > points[n - 1].max { points[n - 1].max = value }
                points[n - 1].last = value
                return
            }
            let carried = n > 0 ? points[n - 1].last : 0
            let held = time > bucket ? Swift.max(value, carried) : value
            points.append(Point(time: bucket, max: held, last: value))
        }
        if points.count >= 2 * capacity { compact() }
    }

    private mutating func compact() {
        guard let first = points.first, let lastPoint = points.last else { return }
        let span = lastPoint.time - first.time
        var newResolution: UInt64 = resolution == 0 ? 1 : resolution * 2
        while span / newResolution >= UInt64(capacity) { newResolution *= 2 }
        var out: [Point] = []
        out.reserveCapacity(capacity + 1)
        for p in points {
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
        points = out
        resolution = newResolution
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

extension StepSeries {
    /// `record` of each change of a run in turn (`BacklogLog.flush`: one queue's changes, in
    /// time order; change `i` is `value(i)` at `time(i)`). The changes inside the last bucket
    /// of a down-sampled series (nearly all of them) update the point in registers, stored
    /// once: `record` loaded and stored it, and checked that the points' storage was not
    /// shared (a call), per change.
    @inline(__always)
    mutating func record(run count: Int, value: (Int) -> Int32, time: (Int) -> UInt64) {
        var i = 0
        while i < count {
            let n = points.count
            if resolution != 0 && n > 0 {
                let bucketMask = ~(resolution - 1)
                var tail = points[n - 1]
                var top = peak
                var j = i
                while j < count && time(j) & bucketMask == tail.time {
                    let v = value(j)
                    if v > top { top = v }
                    if v > tail.max { tail.max = v }
                    tail.last = v
                    j += 1
                }
                if j > i {
                    points[n - 1] = tail
                    peak = top
                    i = j
                    continue
                }
            }
            record(value(i), at: time(i))
            i += 1
        }
    }

    /// A hint ahead of a run of `record`s (`BacklogLog.flush`): the cache line of the points'
    /// count. An Array is one reference to its storage object, whose header holds the count
    /// (a hint: no value is read there).
    @inline(__always)
    func prefetchPointCount() {
        prefetchForRead(unsafeBitCast(points, to: UnsafeRawPointer.self) + 16)
    }

    /// A hint ahead of a run of `record`s, once the count is cached: the last point's line.
    /// (`withUnsafeBufferPointer` would retain the array: a write to the line being fetched.)
    /// The elements follow the storage object's 32-byte header; a wrong guess only wastes
    /// the hint.
    @inline(__always)
    func prefetchLastPoint() {
        let count = points.count
        guard count > 0 else { return }
        prefetchForRead(unsafeBitCast(points, to: UnsafeRawPointer.self) + 32 + (count - 1) * MemoryLayout<Point>.stride)
    }
}
