// The item-kind predicates are bit masks over the raw values: pin them to the kinds they name.
import XCTest
import QTraceFormat

final class ItemKindTests: XCTestCase {
    func testSynchronousKindsAreTheOnesWhoseCallerWaits() {
        let synchronous: Set<ItemKind> = [.sync, .barrierSync, .asyncAndWait, .barrierAsyncAndWait]
        for kind in ItemKind.allCases {
            XCTAssertEqual(kind.isSynchronous, synchronous.contains(kind), "\(kind)")
        }
    }

    func testBarrierKinds() {
        let barriers: Set<ItemKind> = [.barrierAsync, .barrierSync, .barrierAsyncAndWait]
        for kind in ItemKind.allCases {
            XCTAssertEqual(kind.isBarrier, barriers.contains(kind), "\(kind)")
        }
    }
}
