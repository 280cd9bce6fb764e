// The shim's zero-allocation path for plain blocks: the block's heap copy carries the item
// id (Block_layout.reserved), and blocks that cannot carry it take a context slot. Every
// item must still have one id that links its ENQUEUE, START and END.
import Foundation
import XCTest
import QTraceFormat

final class BlockPathTests: XCTestCase {
    /// Stack, global and shared heap blocks (the same heap block pending 1000 times at once on
    /// two queues) through async, barrier_async, group_async, group_notify and after.
    func testEveryKindOfBlockKeepsOneIdPerItem() throws {
        let dir = Paths.tempDir("block-kinds")
        let exe = buildCProgram("Tests/Fixtures/c/block_kinds.c", in: dir)
        let plain = runProgram([exe])
        let (traced, path) = record([exe], in: dir)
        XCTAssertEqual(plain.status, 0, plain.stdout)
        XCTAssertEqual(traced.status, 0, traced.stdout)
        XCTAssertEqual(traced.stdout, plain.stdout)

        let t = try TraceSummary(path: path)
        let expected = 3004 + 2  // the program's items, plus its two final syncs
        XCTAssertEqual(t.enqueues(on: "fx.c.a").count + t.enqueues(on: "fx.c.b").count, expected)
        let items = t.items()
        XCTAssertEqual(items.count, expected, "one id per item: no two items share an id")
        XCTAssertEqual(t.count(.enqueue), expected)
        XCTAssertEqual(t.count(.start), expected)
        XCTAssertEqual(t.count(.end), expected)
        for (id, item) in items {
            let (enqueue, start, end) = (try XCTUnwrap(item.enqueue, "\(id)"), try XCTUnwrap(item.start, "\(id)"),
                                         try XCTUnwrap(item.end, "\(id)"))
            XCTAssertEqual(start.arg, enqueue.arg, "START carries the ENQUEUE's kind (item \(id))")
            XCTAssertLessThanOrEqual(enqueue.time, start.time)
            XCTAssertEqual(start.tid, end.tid)
        }
        let kinds = Dictionary(grouping: items.values.compactMap { $0.enqueue }, by: { $0.arg }).mapValues(\.count)
        XCTAssertEqual(kinds[ItemKind.async.rawValue], 3000)
        XCTAssertEqual(kinds[ItemKind.barrierAsync.rawValue], 1)
        XCTAssertEqual(kinds[ItemKind.groupAsync.rawValue], 1)
        XCTAssertEqual(kinds[ItemKind.groupNotify.rawValue], 1)
        XCTAssertEqual(kinds[ItemKind.after.rawValue], 1)
        XCTAssertEqual(kinds[ItemKind.sync.rawValue], 2)
    }
}
