// Function items without a context slot (format 1.8, the default; QTRACE_SLOTLESS=0 turns it off): dispatch_async_f's
// context passes through a stub per function, and the reader pairs each START with the oldest pending
// ENQUEUE of the same (function, context, queue). The model must hold exactly the items the
// program ran, whatever path each took.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class FunctionItemTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    private static let source = "Tests/Fixtures/c/function_items.c"

    /// The default: without a slot, the reader pairs the items.
    func testFunctionItemsWithoutSlotsByDefaultPairExactlyOnSerialAndConcurrentQueues() throws {
        try checkFunctionItems(slotless: true)
    }

    /// QTRACE_SLOTLESS=0: every function item takes a context slot, and the model is the same.
    func testFunctionItemsWithSlotsWhenSlotlessIsOff() throws {
        try checkFunctionItems(slotless: false)
    }

    private func checkFunctionItems(slotless: Bool) throws {
        let dir = Paths.tempDir(slotless ? "function-items-slotless" : "function-items")
        let exe = buildCProgram(Self.source, in: dir)
        let plain = runProgram([exe])
        let (traced, path) = record([exe], in: dir, environment: slotless ? [:] : ["QTRACE_SLOTLESS": "0"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stdout, plain.stdout, "a traced program behaves as untraced")
        XCTAssertEqual(plain.stdout, """
            serial: 200 items
            two-queues: 100 then 100 items
            concurrent: 100 items, the barrier after 50
            functions: sum 179700

            """)

        let model = Analysis.buildModel(file: try TraceFile(path: path))
        let a = model.anomalies
        XCTAssertEqual([a.startsWithoutEnqueue, a.endsWithoutStart, a.mismatchedEnds, a.reusedItemIds, a.unclosedItems],
                       [0, 0, 0, 0, 0], "every START found its ENQUEUE and every END its START")
        let items = functionItems(model)
        XCTAssertEqual(items.mapValues(\.count), ["fx.f.serial": 200, "fx.f.first": 100, "fx.f.second": 100,
                                                  "fx.f.concurrent": 101, "fx.f.functions": 600])
        for item in items.values.joined() {
            let (enqueued, started, ended) = (try XCTUnwrap(item.enqueued), try XCTUnwrap(item.started), try XCTUnwrap(item.ended))
            XCTAssertLessThan(enqueued, started, "item \(item.id)")
            XCTAssertLessThanOrEqual(started, ended, "item \(item.id)")
        }

        // One (function, context) from two call sites, alternately, onto a suspended serial
        // queue: in the order they ran, the items were enqueued in order, from alternating sites.
        let serial = try XCTUnwrap(items["fx.f.serial"]).sorted { $0.startTime < $1.startTime }
        XCTAssertEqual(serial.map(\.enqueueTime), serial.map(\.enqueueTime).sorted(), "a serial queue is FIFO")
        let sites = serial.map(\.site)
        XCTAssertEqual(Set(sites).count, 2)
        XCTAssertTrue(zip(sites, sites.dropFirst()).allSatisfy { $0 != $1 }, "even and odd call sites alternate")
        XCTAssertTrue(serial.allSatisfy { ($0.wait ?? 0) >= 20_000_000 }, "enqueued onto a queue suspended for 20 ms")

        // The same (function, context) pending on two queues: the second's items all start after
        // the first's ended (the program resumes the second once the first drained).
        let firstEnd = try XCTUnwrap(items["fx.f.first"]?.compactMap(\.ended).max())
        XCTAssertTrue(try XCTUnwrap(items["fx.f.second"]).allSatisfy { $0.startTime > firstEnd })

        // The barrier runs alone, after the 50 items enqueued before it and before the 50 after.
        let concurrent = try XCTUnwrap(items["fx.f.concurrent"])
        let barrier = try XCTUnwrap(concurrent.first { $0.kind == .barrierAsync })
        XCTAssertTrue(barrier.isBarrier)
        let before = concurrent.filter { $0.enqueueTime < barrier.enqueueTime }
        let after = concurrent.filter { $0.enqueueTime > barrier.enqueueTime }
        XCTAssertEqual([before.count, after.count], [50, 50])
        XCTAssertTrue(before.allSatisfy { $0.endTime <= barrier.startTime })
        XCTAssertTrue(after.allSatisfy { $0.startTime >= barrier.endTime })

        // 600 functions: each its own code, whether it got one of the 256 stubs or a slot.
        let functions = try XCTUnwrap(items["fx.f.functions"])
        XCTAssertEqual(Set(functions.compactMap { $0.site.map { model.sites[$0].code } }).count, 600)

        // The paths taken: without slots, count, concurrent_item, barrier and the first 253 of
        // the 600 functions got stubs; the other 347 took context slots. By default, all did.
        let records = try recordCounts(path)
        let stubbed = slotless ? 200 + 200 + 101 + 253 : 0
        XCTAssertEqual(records[TraceLayout.slotlessEnqueueType] ?? 0, stubbed)
        XCTAssertEqual(records[TraceLayout.slotlessStartType] ?? 0, stubbed)
        XCTAssertEqual(records[TraceLayout.slotlessEndType] ?? 0, stubbed)
        XCTAssertEqual(records[TraceLayout.compactStartType].map { $0 >= 1101 - stubbed }, true, "the rest took slots")
    }

    /// The function items of each queue, by label.
    private func functionItems(_ model: TraceModel) -> [String: [WorkItem]] {
        var byQueue: [String: [WorkItem]] = [:]
        for item in model.items where item.flags.contains(.function) {
            guard let q = item.queue else { continue }
            byQueue[model.queues[q].label, default: []].append(item)
        }
        return byQueue
    }

    /// Records per raw type, read straight from the file's chunks (docs/trace-format.md).
    private func recordCounts(_ path: String) throws -> [UInt8: Int] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u64(_ at: Int) -> UInt64 { bytes[at..<at + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        let headerSize = Int(u64(12) & 0xFFFF_FFFF), chunkSize = Int(u64(16) & 0xFFFF_FFFF)
        var counts: [UInt8: Int] = [:]
        var chunk = headerSize
        while chunk + chunkSize <= bytes.count {
            var offset = chunk + 64
            while offset + 16 <= chunk + chunkSize {
                let word0 = u64(offset)
                let length = Int((word0 >> 16) & 0xFFFF)
                guard word0 != 0, length >= 16 else { break }
                counts[UInt8(word0 & 0xFF), default: 0] += 1
                offset += length
            }
            chunk += chunkSize
        }
        return counts
    }
}
