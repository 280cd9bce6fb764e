// CPU samples (format 1.5) on synthetic streams: attribution to the innermost running item,
// per-queue / per-code functions (self and total), folded stacks.
import QTraceFormat
import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

extension TraceScript {
    /// A call-tree node of the samples stream (tid -1).
    mutating func stackFrame(_ id: UInt32, parent: UInt32, address: UInt64, at t: UInt64 = 0) {
        add(.stackFrame, t, tid: TraceLayout.samplesStreamTid, arg: id, a: UInt64(parent), b: address)
    }

    mutating func cpuSample(at t: UInt64, on tid: Int32, leaf: UInt32, hz: UInt32 = 1000) {
        add(.cpuSample, t, tid: TraceLayout.samplesStreamTid, arg: hz, a: UInt64(bitPattern: Int64(tid)), b: UInt64(leaf))
    }
}

final class CPUProfileTests: XCTestCase {
    static let workerA: Int32 = 201, workerB: Int32 = 202
    static let queueA: UInt64 = 0xA000, queueB: UInt64 = 0xB000
    // Code addresses, named below as a symbolizer would.
    static let names: [UInt64: String] = [0x10: "start_thread", 0x20: "Work.hash", 0x30: "Work.mix", 0x40: "Work.primes",
                                          0x50: "Work.isPrime", 0x60: "main", 0x70: "Work.recurse"]

    /// Stacks: 1 start_thread > 2 hash > 3 mix; 1 > 4 primes > 5 isPrime; 6 main;
    /// 1 > 7 recurse > 8 recurse (recursion).
    private func script() -> TraceScript {
        var s = TraceScript()
        s.mainAndGlobals()
        s.thread(Self.workerA)
        s.thread(Self.workerB)
        s.queue(Self.queueA, "q.hash")
        s.queue(Self.queueB, "q.primes")
        s.stackFrame(1, parent: 0, address: 0x10)
        s.stackFrame(2, parent: 1, address: 0x20)
        s.stackFrame(3, parent: 2, address: 0x30)
        s.stackFrame(4, parent: 1, address: 0x40)
        s.stackFrame(5, parent: 4, address: 0x50)
        s.stackFrame(6, parent: 0, address: 0x60)
        s.stackFrame(7, parent: 1, address: 0x70)
        s.stackFrame(8, parent: 7, address: 0x70)
        return s
    }

    private func profile(_ s: TraceScript) -> (CPUProfile, TraceModel) {
        var model = s.model()
        model.cpu?.locations = Self.names.mapValues {
            CodeLocation(function: $0, shortName: $0, file: nil, line: nil, module: "app", offset: 0, status: "ok")
        }
        return (CPUProfile.build(model)!, model)
    }

    func testSamplesGoToTheItemRunningOnTheirThreadElseOutsideItems() {
        var s = script()
        s.item(1, on: Self.queueA, at: ms(1), runOn: Self.workerA, start: ms(2), end: ms(10))
        s.item(2, on: Self.queueB, at: ms(1), runOn: Self.workerB, start: ms(2), end: ms(10))
        for t in 3...8 { s.cpuSample(at: ms(UInt64(t)), on: Self.workerA, leaf: t == 8 ? 2 : 3) }
        for t in 3...6 { s.cpuSample(at: ms(UInt64(t)), on: Self.workerB, leaf: 5) }
        s.cpuSample(at: ms(12), on: Self.workerA, leaf: 3)  // after its item ended
        s.cpuSample(at: ms(4), on: mainTid, leaf: 6)        // the main thread runs no item
        s.cpuSample(at: ms(5), on: 999, leaf: 6)            // a thread the trace does not know
        let (profile, model) = profile(s)
        XCTAssertEqual(profile.hz, 1000)
        XCTAssertEqual(profile.sampleCount, 13)
        XCTAssertEqual(profile.insideItems, 10)
        XCTAssertEqual(profile.outsideItems.samples, 3)
        let itemA = model.items.firstIndex { $0.id == 1 }!, itemB = model.items.firstIndex { $0.id == 2 }!
        XCTAssertEqual(profile.samplesByItem, [itemA: 6, itemB: 4])
        XCTAssertEqual(profile.outsideItems.cpuNs, 3_000_000, "1000 Hz: a sample is 1 ms")

        let hash = profile.queues.first { $0.name == "q.hash" }!
        XCTAssertEqual(hash.samples, 6)
        XCTAssertEqual(hash.functions.first?.function, "Work.mix")
        XCTAssertEqual(hash.functions.first?.selfSamples, 5)
        XCTAssertEqual(hash.functions.first { $0.function == "Work.hash" }.map { [$0.selfSamples, $0.totalSamples] }, [1, 6])
        XCTAssertEqual(hash.functions.first?.selfShare ?? 0, 5.0 / 6.0, accuracy: 1e-9)
        let primes = profile.queues.first { $0.name == "q.primes" }!
        XCTAssertEqual(primes.functions.map(\.function).sorted(), ["Work.isPrime", "Work.primes", "start_thread"],
                       "no cross-attribution: q.primes's samples name only its own functions")
        XCTAssertEqual(profile.queues.map(\.name), ["q.hash", "q.primes"], "most samples first")
    }

    func testASyncRunInlineOwnsItsSamplesThenTheOuterItemAgain() {
        var s = script()
        s.item(1, on: Self.queueA, at: ms(1), runOn: Self.workerA, start: ms(2), end: ms(20))
        s.sync(2, on: Self.queueB, at: ms(5), by: Self.workerA, start: ms(5), end: ms(8))
        s.cpuSample(at: ms(3), on: Self.workerA, leaf: 3)
        s.cpuSample(at: ms(6), on: Self.workerA, leaf: 5)
        s.cpuSample(at: ms(9), on: Self.workerA, leaf: 3)
        let (profile, model) = profile(s)
        let outer = model.items.firstIndex { $0.id == 1 }!, inner = model.items.firstIndex { $0.id == 2 }!
        XCTAssertEqual(profile.itemOfSample, [Int32(outer), Int32(inner), Int32(outer)])
        XCTAssertEqual(profile.queues.first { $0.name == "q.primes" }?.samples, 1)
    }

    func testRecursionCountsOnceInTotalAndSelfOnlyAtTheLeaf() {
        var s = script()
        s.item(1, on: Self.queueA, at: ms(1), runOn: Self.workerA, start: ms(2), end: ms(20))
        s.cpuSample(at: ms(3), on: Self.workerA, leaf: 8)
        s.cpuSample(at: ms(4), on: Self.workerA, leaf: 7)
        let (profile, _) = profile(s)
        let recurse = profile.process.functions.first { $0.function == "Work.recurse" }!
        XCTAssertEqual([recurse.selfSamples, recurse.totalSamples], [2, 2])
        XCTAssertEqual(profile.process.functions.first { $0.function == "start_thread" }?.totalSamples, 2)
    }

    func testFoldedStacksStartAtTheQueueAndCountEachDistinctStack() {
        var s = script()
        s.item(1, on: Self.queueA, at: ms(1), runOn: Self.workerA, start: ms(2), end: ms(20))
        s.cpuSample(at: ms(3), on: Self.workerA, leaf: 3)
        s.cpuSample(at: ms(4), on: Self.workerA, leaf: 3)
        s.cpuSample(at: ms(5), on: mainTid, leaf: 6)
        let (profile, model) = profile(s)
        let folded = profile.foldedStacks(model)
        XCTAssertEqual(folded.map(\.stack), ["outside items;main", "q.hash;start_thread;Work.hash;Work.mix"])
        XCTAssertEqual(folded.map(\.count), [1, 2])
        XCTAssertEqual(CPUProfile.foldedName("a;b\nc"), "a:b c", "a name cannot break a line or add a frame")
    }

    func testKernelAndUnsymbolizedFramesKeepAName() {
        var s = script()
        s.stackFrame(9, parent: 3, address: 0)
        s.stackFrame(10, parent: 0, address: 0xDEAD)
        s.cpuSample(at: ms(3), on: mainTid, leaf: 9)
        s.cpuSample(at: ms(4), on: mainTid, leaf: 10)
        let (profile, _) = profile(s)
        XCTAssertEqual(Set(profile.process.functions.filter { $0.selfSamples > 0 }.map(\.function)), ["[kernel]", "0xdead"])
    }

    func testAModelWithoutSamplesHasNoProfile() {
        var s = script()
        s.item(1, on: Self.queueA, at: ms(1), runOn: Self.workerA, start: ms(2), end: ms(20))
        XCTAssertNil(CPUProfile.build(s.model()), "frames without samples")
        s.cpuSample(at: ms(3), on: Self.workerA, leaf: 3)
        XCTAssertTrue(s.model().codeAddresses.contains(0x30), "frame addresses are symbolized with the code sites")
    }

    func testFlameTreeMergesStacksByFunction() {
        var s = script()
        s.item(1, on: Self.queueA, at: ms(1), runOn: Self.workerA, start: ms(2), end: ms(20))
        s.cpuSample(at: ms(3), on: Self.workerA, leaf: 3)
        s.cpuSample(at: ms(4), on: Self.workerA, leaf: 3)
        s.cpuSample(at: ms(5), on: Self.workerA, leaf: 2)
        s.cpuSample(at: ms(6), on: Self.workerA, leaf: 5)
        let (profile, _) = profile(s)
        let tree = try! XCTUnwrap(profile.queues.first).tree
        // root > start_thread > (Work.hash > Work.mix), (Work.primes > Work.isPrime)
        XCTAssertEqual(tree.name, ["", "start_thread", "Work.hash", "Work.mix", "Work.primes", "Work.isPrime"])
        XCTAssertEqual(tree.parent, [-1, 0, 1, 2, 1, 4])
        XCTAssertEqual(tree.total, [4, 4, 3, 2, 1, 1])
        XCTAssertEqual(tree.selfSamples, [0, 0, 1, 2, 0, 1])
        XCTAssertEqual(tree.share[2], 0.75)
        XCTAssertEqual(profile.itemTrees.map(\.item), [profile.itemOfSample[0]].map { Int($0) })
        XCTAssertEqual(profile.itemTrees.first?.tree, tree, "one item: its tree is its queue's")
    }

    /// A damaged stream (a node under an unknown parent, a sample naming no node, a thread the
    /// trace lacks) still gives a profile: such samples count, with the frames that are known.
    func testDamagedSamplesStreamIsCountedNotTrusted() {
        var s = script()
        s.stackFrame(20, parent: 999, address: 0x30)  // parent never written: an outermost frame
        s.cpuSample(at: ms(3), on: Self.workerA, leaf: 20)
        s.cpuSample(at: ms(4), on: Self.workerA, leaf: 12345)  // no such node: no stack
        s.cpuSample(at: ms(5), on: -7, leaf: 3)
        let (profile, model) = profile(s)
        XCTAssertEqual(profile.sampleCount, 3)
        XCTAssertEqual(profile.outsideItems.samples, 3)
        XCTAssertEqual(model.cpu?.stack(leaf: model.cpu!.samples[0].leaf).count, 1)
        XCTAssertEqual(profile.process.functions.first { $0.function == "Work.mix" }?.selfSamples, 2)
        XCTAssertEqual(profile.foldedStacks(model).map(\.count).reduce(0, +), 3)
    }
}
