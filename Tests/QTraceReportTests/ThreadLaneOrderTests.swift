// The thread lanes' order in the report (the header's threadOrder) and the shading of a busy
// worker's lane zoomed out, on a trace shaped like libdispatch's starfish benchmark: a pool of
// workers that start first and never run an item, and two later workers that run every item,
// each a few tens of ns long.
import Foundation
import XCTest
import QTraceFormat
@testable import QTraceReport
@testable import QTraceViewModel
import QTraceReportTestSupport

final class ThreadLaneOrderTests: XCTestCase {
    static let parkedWorkers = 20
    static let itemsPerBusyWorker = 5_000
    static let itemSpacingNs: Int64 = 300
    static let itemRunNs: Int64 = 20
    static let busyStartNs: Int64 = 50_000

    /// The main thread enqueues every item, then the busy workers ("busy worker") run their
    /// queue's items back to back, one every 300 ns for 20 ns; the parked ones ("parked
    /// worker") start earlier and do nothing.
    static var parkedWorkerPool: ReportInput {
        var list = EventList()
        let main: Int32 = 1
        list.add(.threadStart, 0, tid: main)
        for k in 0..<parkedWorkers {
            let tid = Int32(100 + k)
            list.add(.threadStart, Int64(1_000 + 10 * k), tid: tid, arg: 1, a: UInt64(main))
            list.add(.threadName, Int64(1_000 + 10 * k), tid: tid, string: "parked worker \(k)")
        }
        var item: UInt64 = 1
        for w in 0..<2 {
            let tid = Int32(200 + w), queue = 0x10_0000 + UInt64(w) * 0x100
            let start = busyStartNs + Int64(w) * 10_000
            list.add(.threadStart, start, tid: tid, arg: 1, a: UInt64(main))
            list.add(.threadName, start, tid: tid, string: "busy worker \(w)")
            list.add(.queueCreate, 0, tid: main, a: queue, string: "starfish.node#\(w)")
            for k in 0..<itemsPerBusyWorker {
                let begin = start + 100 + Int64(k) * itemSpacingNs
                list.add(.enqueue, 100, tid: main, arg: ItemKind.async.rawValue, a: item, b: queue)
                list.add(.start, begin, tid: tid, arg: ItemKind.async.rawValue, a: item)
                list.add(.end, begin + itemRunNs, tid: tid, a: item)
                item += 1
            }
        }
        list.add(.mark, busyStartNs + 10_000 + 100 + Int64(itemsPerBusyWorker) * itemSpacingNs + 1_000, tid: main, string: "end")
        return SyntheticReport.analysed(list.sorted, mainTid: main, commandLine: "./bench-starfish f")
    }

    /// Main first, then the two workers that ran items, then the parked pool in start order:
    /// before, the lanes went by start alone and the pool hid the busy workers below it.
    func testWorkersThatRanItemsComeBeforeAParkedPool() throws {
        let input = Self.parkedWorkerPool
        let report = try WrittenReport(try ReportWriter.html(input))
        let order = try XCTUnwrap(report.header["threadOrder"] as? [Int], "the header names the lane order")
        let names = order.map { input.threads[$0].name }
        XCTAssertEqual(input.threads[order[0]].kind, .main)
        XCTAssertEqual(Array(names[1...2]), ["worker 200 (busy worker 0)", "worker 201 (busy worker 1)"])
        XCTAssertEqual(Array(names[3...]), (0..<Self.parkedWorkers).map { "worker \(100 + $0) (parked worker \($0))" })
        XCTAssertEqual(order, input.threadLaneOrder())
        XCTAssertEqual(Set(order), Set(input.threads.indices), "every thread has one lane")
    }

    /// Items of 20 ns every 300 ns shade every top-level bucket of the worker's lane they fall
    /// in (about a fifteenth covered: the lightest shade, never none), from the first item's
    /// bucket to the last's: zoomed out, a busy lane of short items does not look idle.
    func testShortItemsShadeEveryBucketOfABusyLane() throws {
        let input = Self.parkedWorkerPool
        let report = try WrittenReport(try ReportWriter.html(input))
        let lod = try XCTUnwrap(report.header["lod"] as? [String: Any])
        let tracks = try XCTUnwrap(lod["tracks"] as? [[String: Any]])
        let topBucketNs = try XCTUnwrap((lod["topBucketNs"] as? NSNumber)?.int64Value, "\(lod)")
        let (track, level, bucket, length, coverage) = (
            try report.column("lod", "track"), try report.column("lod", "level"), try report.column("lod", "bucket"),
            try report.column("lod", "length"), try report.column("lod", "coverage"))
        for w in 0..<2 {
            let thread = try XCTUnwrap(input.threads.firstIndex { $0.name.hasSuffix("(busy worker \(w))") })
            let id = try XCTUnwrap(tracks.firstIndex { $0["kind"] as? String == "threadRun" && $0["object"] as? Int == thread },
                                   "a lane of \(Self.itemsPerBusyWorker) items has levels of detail")
            var shaded = Set<Int64>()
            for e in track.indices where track[e] == Int64(id) && level[e] == 0 {
                XCTAssertGreaterThan(coverage[e], 0)
                for b in bucket[e]..<(bucket[e] + length[e]) { shaded.insert(b) }
            }
            let first = input.threads[thread].startNs + 100
            let last = first + Int64(Self.itemsPerBusyWorker - 1) * Self.itemSpacingNs + Self.itemRunNs - 1
            XCTAssertEqual(shaded, Set((first / topBucketNs)...(last / topBucketNs)), "busy worker \(w)")
        }
    }
}
