// The shim's known-queue table (shim_internal.h) holds 8192 queues, four to a set chosen by
// address: a program with more, made one after another, pushes queues out of it and looks them
// up again. Each must keep its name and its items.
import QTraceAnalysis
import QTraceFormat
import XCTest

final class ManyQueuesTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    func testQueuesPushedOutOfTheKnownTableKeepTheirNamesAndItems() throws {
        let dir = Paths.tempDir("many-queues")
        let exe = buildCProgram("Tests/Fixtures/c/many_queues.c", in: dir)
        let plain = runProgram([exe])
        let (traced, path) = record([exe], in: dir)
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stdout, plain.stdout, "a traced program behaves as untraced")
        XCTAssertEqual(plain.stdout, "queues 12000, items 48000, global items 100\n")

        let model = Analysis.buildModel(file: try TraceFile(path: path))
        let a = model.anomalies
        XCTAssertEqual([a.startsWithoutEnqueue, a.endsWithoutStart, a.mismatchedEnds, a.unclosedItems], [0, 0, 0, 0])
        var asyncItems: [String: (functions: Int, blocks: Int)] = [:]
        for item in model.items where item.kind == .async {
            let label = item.queue.map { model.queues[$0].label } ?? "(none)"
            let isFunction = item.flags.contains(.function)
            asyncItems[label, default: (0, 0)].functions += isFunction ? 1 : 0
            asyncItems[label, default: (0, 0)].blocks += isFunction ? 0 : 1
        }
        let many = asyncItems.filter { $0.key.hasPrefix("many.") }
        XCTAssertEqual(Set(many.keys), Set((0..<12000).map { "many.\($0)" }), "every queue named once, by its own label")
        XCTAssertTrue(many.values.allSatisfy { $0 == (2, 2) }, "each queue ran its two function items and two blocks")
        XCTAssertEqual(model.queues.filter { $0.label.hasPrefix("many.") }.count, 12000)
        XCTAssertEqual(asyncItems["com.apple.root.utility-qos"]?.functions, 100,
                       "the global queue, which the shim did not see created, is named")
    }
}
