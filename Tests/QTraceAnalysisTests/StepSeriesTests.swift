import Foundation
import XCTest
import QTraceFormat
@testable import QTraceAnalysis

/// StepSeries keeps its latest point inline (a cache miss less per backlog change): the points
/// must be those of the plain array it replaced, kept here as the reference.
final class StepSeriesTests: XCTestCase {
    func testSameAsThePlainArrayOnRandomChanges() {
        var rng = SplitMix64(seed: 24)
        for round in 0..<300 {
            let capacity = [1, 2, 4, 16, 1024][round % 5]
            var series = StepSeries(capacity: capacity), reference = ReferenceSeries(capacity: capacity)
            var time: UInt64 = rng.next() % 1000
            for _ in 0..<(rng.next() % 3000) {
                time += [0, 0, 1, 7, 100, 4096][Int(rng.next() % 6)]
                let value = Int32(truncatingIfNeeded: rng.next() % 9) - 2
                series.record(value, at: time)
                reference.record(value, at: time)
                XCTAssertEqual(series.current, reference.points.last?.last ?? 0)
            }
            XCTAssertEqual(series.points, reference.points, "round \(round)")
            XCTAssertEqual(series.resolution, reference.resolution)
            XCTAssertEqual(series.peak, reference.peak)
            let copy = try! JSONDecoder().decode(StepSeries.self, from: JSONEncoder().encode(series))
            XCTAssertEqual(copy, series)
        }
    }
}

/// StepSeries as it was before the inline tail (commit a2c0cf8): the points in one array.
private struct ReferenceSeries {
    typealias Point = StepSeries.Point
    var points: [Point] = []
    var resolution: UInt64 = 0
    var peak: Int32 = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    mutating func record(_ value: Int32, at time: UInt64) {
        if value > peak { peak = value }
        let n = points.count
        if resolution == 0 {
            if n > 0 && points[n - 1].time == time {
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
            points.append(Point(time: bucket, max: time > bucket ? Swift.max(value, carried) : value, last: value))
        }
        if points.count >= 2 * capacity { compact() }
    }

    mutating func compact() {
        guard let first = points.first, let lastPoint = points.last else { return }
        var newResolution: UInt64 = resolution == 0 ? 1 : resolution * 2
        while (lastPoint.time - first.time) / newResolution >= UInt64(capacity) { newResolution *= 2 }
        // Each bucket: the greatest maximum in it (and the value carried into it when its first
        // point comes after the bucket's start), and its last point's value.
        var out: [Point] = [], carried: Int32 = 0
        for p in points {
            let bucket = p.time & ~(newResolution - 1)
            let entering = p.time > bucket ? Swift.max(p.max, carried) : p.max
            if out.last?.time == bucket {
                out[out.count - 1] = Point(time: bucket, max: Swift.max(out[out.count - 1].max, p.max), last: p.last)
            } else {
                out.append(Point(time: bucket, max: entering, last: p.last))
            }
            carried = p.last
        }
        points = out
        resolution = newResolution
    }
}
