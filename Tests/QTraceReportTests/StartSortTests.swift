// The layout's order by start: the packed radix sort gives the comparison sort's order (ties
// by index), and starts too far apart to pack fall back to it.
import QTraceReportTestSupport
import XCTest
@testable import QTraceViewModel

final class StartSortTests: XCTestCase {
    private func check(_ start: [Int64], packs: Bool, file: StaticString = #filePath, line: UInt = #line) {
        let expectedOrder = ItemLayout.sortedByStart(start)
        var packed = start
        let order = StartSort.packedSort(&packed)
        XCTAssertEqual(order != nil, packs, "packed", file: file, line: line)
        if let order {
            XCTAssertEqual(order, expectedOrder, file: file, line: line)
            XCTAssertEqual(packed, expectedOrder.map { start[Int($0)] }, file: file, line: line)
        } else {
            XCTAssertEqual(packed, start, "left as it was", file: file, line: line)
        }
        var sorted = start
        XCTAssertEqual(ItemLayout.sortByStart(&sorted), expectedOrder, file: file, line: line)
        XCTAssertEqual(sorted, expectedOrder.map { start[Int($0)] }, file: file, line: line)
    }

    func testPackedOrderIsTheComparisonOrderWithTiesByIndex() {
        var random = SyntheticRandom(state: 24)
        // Many ties (64 distinct starts), a span needing three digits, and one offset from 0.
        check((0..<50_000).map { _ in Int64(random.next() % 64) * 1_000_000 }, packs: true)
        check((0..<50_000).map { _ in Int64(random.next() % (1 << 33)) }, packs: true)
        check((0..<50_000).map { _ in 5_000_000_000 + Int64(random.next() % 997) }, packs: true)
        // Nearly in order, as items are: each start a little after its enqueue order.
        check((0..<50_000).map { Int64($0) * 100 + Int64(random.next() % 5_000) }, packs: true)
    }

    func testStartsTooFarApartFallBackToTheComparisonSort() {
        var random = SyntheticRandom(state: 7)
        // 2^50 ns apart (the reader's bound) and 2^16 items need 66 bits.
        check((0..<70_000).map { _ in Int64(random.next() % (1 << 50)) }, packs: false)
        check([3, -1, .max, .min, 0], packs: false)
    }

    func testEqualAndTinyInputs() {
        check([7, 7, 7, 7], packs: true)
        check([2, 1], packs: true)
    }
}
