import Foundation
import XCTest
import QTraceFormat
@testable import QTraceAnalysis
import QTraceText
import QTraceAnalysisTestSupport

final class SupportTests: XCTestCase {
    func testStepSeriesExactThenCompacted() {
        var s = StepSeries(capacity: 4)
        s.record(1, at: 10)
        s.record(1, at: 12)            // no change
        s.record(3, at: 20)
        s.record(2, at: 20)            // same instant: the later value wins
        s.record(0, at: 30)
        XCTAssertEqual(s.points, [.init(time: 10, max: 1, last: 1), .init(time: 20, max: 2, last: 2), .init(time: 30, max: 0, last: 0)])
        XCTAssertEqual(s.resolution, 0)
        XCTAssertEqual(s.peak, 3)
        XCTAssertEqual(s.mean(from: 0, to: 40), (1.0 * 10 + 2.0 * 10) / 40, accuracy: 1e-12)
        // Eight changes trigger compaction; the peak survives inside a bucket.
        var c = StepSeries(capacity: 4)
        for (t, v) in [(0, 1), (1, 9), (2, 1), (16, 2), (17, 0), (32, 3), (48, 0), (63, 1)] as [(UInt64, Int32)] {
            c.record(v, at: t)
        }
        XCTAssertGreaterThan(c.resolution, 0)
        XCTAssertLessThanOrEqual(c.points.count, 4)
        XCTAssertEqual(c.points.map(\.max).max(), 9)
        XCTAssertEqual(c.current, 1)
        XCTAssertEqual(c.peak, 9)
    }

    /// `record(run:)` (the backlog log's flush) makes the series that `record` makes one
    /// change at a time: exact first, then down-sampled, with runs within one bucket, across
    /// buckets and across a compaction, same-instant changes and repeated values among them.
    func testStepSeriesRunsRecordLikeOneByOne() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % bound
        }
        var changes: [(value: Int32, time: UInt64)] = []
        var time: UInt64 = 0
        for _ in 0..<5_000 {
            time += next(40)
            changes.append((Int32(next(20)), time))
        }
        var oneByOne = StepSeries(capacity: 16), inRuns = StepSeries(capacity: 16)
        for change in changes { oneByOne.record(change.value, at: change.time) }
        var start = 0
        while start < changes.count {
            let count = min(Int(next(300)) + 1, changes.count - start)
            inRuns.record(run: count, value: { changes[start + $0].value }, time: { changes[start + $0].time })
            start += count
        }
        XCTAssertGreaterThan(oneByOne.resolution, 0, "down-sampled along the way")
        XCTAssertEqual(inRuns, oneByOne)
    }

    /// Pages are populated a step at a time from the page holding the first byte, never past
    /// the buffer's end, and nothing is left once the end is reached.
    func testPagePopulationStepsWithinTheBuffer() throws {
        let size = 3 * PagePopulation.step
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1 << 16)
        defer { buffer.deallocate() }
        let end = UnsafeRawPointer(buffer + size)
        guard let first = PagePopulation.populate(from: buffer + 100, end: end) else {
            throw XCTSkip("the kernel refuses MADV_POPULATE_WRITE (before 5.14)")
        }
        XCTAssertEqual(first - UnsafeRawPointer(buffer), PagePopulation.step)
        XCTAssertEqual(PagePopulation.populate(from: end - 5_000, end: end), end)
        XCTAssertNil(PagePopulation.populate(from: end, end: end))
    }

    func testIdMapMatchesDictionary() {
        var map = IdMap<Int>()
        var reference: [UInt64: Int] = [:]
        var rng = SystemRandomNumberGenerator()
        let keys = (0..<400).map { _ in UInt64.random(in: 0..<600, using: &rng) * 0x1000 } + [UInt64.max, 0]
        for (n, k) in keys.enumerated() {
            if n % 3 == 2 {
                XCTAssertEqual(map.remove(k), reference.removeValue(forKey: k))
            } else {
                map[k] = n; reference[k] = n
            }
        }
        XCTAssertEqual(map.count, reference.count)
        for k in Set(keys) { XCTAssertEqual(map[k], reference[k]) }
        XCTAssertEqual(map.sortedEntries().map(\.key), reference.keys.sorted())
    }

    /// Dense per-thread id blocks go to slabs, scattered ids to the hash map, and the table
    /// behaves like a dictionary whichever holds an id (including a block that gets a slab
    /// after some of its ids went to the hash map, and slabs reused after emptying).
    func testPendingTableReusesAFreedSlabForAnotherBlock() {
        var table = PendingTable()
        func entry(_ n: Int) -> PendingItem {
            PendingItem(item: Int32(n), domain: -1, inBacklog: true, domainBusyAt: 0, runningAt: 0, barrierAt: 0,
                        suspendedAt: 0)
        }
        // Block 5 fills a slab and empties it; blocks 21 (same cache slot) and 6 then reuse slabs:
        // no id of block 5 may be found through a stale cache entry.
        for low in UInt64(0)..<1024 { XCTAssertTrue(table.insertIfAbsent(5 << 10 | low, entry(Int(low)))) }
        for low in UInt64(0)..<1024 { XCTAssertEqual(table.remove(5 << 10 | low)?.item, Int32(low)) }
        for block: UInt64 in [21, 6] {
            for low in UInt64(0)..<1024 where low % 2 == 0 {
                XCTAssertTrue(table.insertIfAbsent(block << 10 | low, entry(Int(block * 10_000 + low))))
            }
        }
        for low in UInt64(0)..<1024 { XCTAssertNil(table.remove(5 << 10 | low)) }
        for block: UInt64 in [6, 21] {
            for low in UInt64(0)..<1024 {
                XCTAssertEqual(table.remove(block << 10 | low)?.item, low % 2 == 0 ? Int32(block * 10_000 + low) : nil)
            }
        }
        XCTAssertEqual(table.count, 0)
    }

    /// Packed pending slots give back every field, and an entry whose readings need more than
    /// 48 bits is kept whole (in the hash map).
    func testPendingTableKeepsEveryFieldOfAnEntry() {
        var table = PendingTable()
        let entries = [
            PendingItem(item: 0, domain: -1, inBacklog: false, domainBusyAt: 0, runningAt: 0, barrierAt: 0, suspendedAt: 0),
            PendingItem(item: .max, domain: .max - 1, inBacklog: true, domainBusyAt: 1 << 48 - 1, runningAt: 1 << 47 + 5,
                        barrierAt: 123_456_789, suspendedAt: 1 << 48 - 2),
            PendingItem(item: 7, domain: 3, inBacklog: true, domainBusyAt: 1, runningAt: 2, barrierAt: 3,
                        suspendedAt: 0xAAAA_5555_F0F0),
            PendingItem(item: 8, domain: 4, inBacklog: false, domainBusyAt: 1 << 48, runningAt: 2, barrierAt: 3,
                        suspendedAt: .max),
        ]
        func fields(_ e: PendingItem?) -> [UInt64]? {
            e.map { [UInt64(UInt32(bitPattern: $0.item)), UInt64(UInt32(bitPattern: $0.domain)), $0.inBacklog ? 1 : 0,
                     $0.domainBusyAt, $0.runningAt, $0.barrierAt, $0.suspendedAt] }
        }
        for (n, e) in entries.enumerated() { XCTAssertTrue(table.insertIfAbsent(UInt64(3 << 10 | n), e)) }
        XCTAssertFalse(table.insertIfAbsent(3 << 10 | 3, entries[0]))
        for (n, e) in entries.enumerated() { XCTAssertEqual(fields(table.remove(UInt64(3 << 10 | n))), fields(e)) }
        XCTAssertEqual(table.count, 0)
    }


    /// A slab filled by one producer alone (ids and items counting up together) names the
    /// item of each of its ids; once an entry breaks the pattern, or before any entry, it names
    /// none; a slab handed out again starts over.
    func testPendingTableGuessesTheItemOfASlabFilledInStep() {
        var table = PendingTable()
        func entry(_ item: Int) -> PendingItem {
            PendingItem(item: Int32(item), domain: -1, inBacklog: true, domainBusyAt: 0, runningAt: 0, barrierAt: 0,
                        suspendedAt: 0)
        }
        XCTAssertNil(table.prefetch(9 << 10 | 3), "no slab yet")
        for low in 0..<100 { XCTAssertTrue(table.insertIfAbsent(UInt64(9 << 10 | low), entry(5_000 + low))) }
        XCTAssertEqual(table.prefetch(9 << 10 | 42)?.item, 5_042)
        XCTAssertEqual(table.prefetch(9 << 10 | 700)?.item, 5_700, "an id not enqueued yet: the same guess")
        XCTAssertTrue(table.insertIfAbsent(9 << 10 | 100, entry(7)))  // another producer's item in between
        XCTAssertEqual(table.prefetch(9 << 10 | 42)?.item, -1)
        for low in 0...100 { XCTAssertNotNil(table.remove(UInt64(9 << 10 | low))) }
        XCTAssertTrue(table.insertIfAbsent(4 << 10 | 10, entry(300)))  // the freed slab again
        XCTAssertEqual(table.prefetch(4 << 10 | 11)?.item, 301)
        XCTAssertEqual(table.remove(4 << 10 | 10)?.item, 300)
        XCTAssertEqual(table.count, 0)
    }

    /// A cache larger than the default in front of the map: every key found, through
    /// collisions, overwrites and removals.
    func testCachedIdMapWithALargeCacheAgreesWithADictionary() {
        var map = CachedIdMap<Int32, 1024>()
        var reference: [UInt64: Int32] = [:]
        for n in 0..<5_000 {
            let key = UInt64(n) &* 0x1_0000_0040 | 1  // many keys per cache slot
            map.store(Int32(n), at: key)
            reference[key] = Int32(n)
        }
        for (n, key) in reference.keys.sorted().enumerated() where n % 3 == 0 {
            map.remove(key)
            reference[key] = nil
        }
        for (n, key) in reference.keys.sorted().enumerated() where n % 5 == 0 {
            map.store(-Int32(n), at: key)
            reference[key] = -Int32(n)
        }
        for round in 0..<2 {
            for n in 0..<5_000 {
                let key = UInt64(n) &* 0x1_0000_0040 | 1
                XCTAssertEqual(map[key], reference[key], "key \(n), round \(round)")
            }
        }
    }

    func testUnsafeTableGrowsAndKeepsElements() {
        var table = UnsafeTable<String>(capacity: 2)
        for n in 0..<100 { table.append("item \(n)") }
        XCTAssertEqual(table.count, 100)
        XCTAssertEqual(table[57], "item 57")
        table[57] += "!"
        XCTAssertEqual(Array(table.suffix(44).prefix(1)), ["item 56"])
        XCTAssertEqual(table[57], "item 57!")
        XCTAssertEqual(table.removeLast(), "item 99")
        XCTAssertEqual(table.count, 99)
        XCTAssertEqual(table.last, "item 98")
        XCTAssertEqual(Array(UnsafeTable(repeating: 7, count: 3)), [7, 7, 7])
    }

    /// Many entries, removed and reinserted, in tables filled to half and to three quarters:
    /// probe chains must survive the backward-shift deletion and every growth.
    func testIdMapMatchesDictionaryThroughGrowth() {
        for load in [IdMap<Int>.Load.half, .threeQuarters] {
            var map = IdMap<Int>(load: load)
            var reference: [UInt64: Int] = [:]
            var rng = SystemRandomNumberGenerator()
            for n in 0..<60_000 {
                let k = UInt64.random(in: 0..<40_000, using: &rng) &* 0x40
                if n % 4 == 3 {
                    XCTAssertEqual(map.remove(k), reference.removeValue(forKey: k))
                } else {
                    map[k] = n; reference[k] = n
                }
            }
            XCTAssertEqual(map.count, reference.count)
            for k in 0..<UInt64(40_000) where map[k &* 0x40] != reference[k &* 0x40] {
                XCTFail("\(load), key \(k &* 0x40): \(String(describing: map[k &* 0x40])), expected \(String(describing: reference[k &* 0x40]))")
                break
            }
        }
    }

    /// Moving out gives every element once, in order, and leaves the table empty (its storage
    /// must not release the moved elements again).
    func testUnsafeTableMovesItsElementsIntoAnArray() {
        var table = UnsafeTable<String>(capacity: 2)
        for n in 0..<20_000 { table.append("element \(n)") }
        let array = table.moveIntoArray()
        XCTAssertEqual(array.count, 20_000)
        XCTAssertEqual(array.first, "element 0")
        XCTAssertEqual(array[12_345], "element 12345")
        XCTAssertEqual(array.last, "element 19999")
        XCTAssertEqual(table.count, 0)
        table.append("again")
        XCTAssertEqual(table.moveIntoArray(), ["again"])
    }

    func testUnsafeTableFillsALentBuffer() {
        let lent = [WorkItem](unsafeUninitializedCapacity: 4) { buffer, initialized in
            var table = UnsafeTable<WorkItem>()
            table.adopt(buffer)
            for n in 0..<3 { table.append(WorkItem(id: UInt64(n), kind: .sync, origin: .enqueued)) }
            table[1].endTime = 7
            initialized = table.count
        }
        XCTAssertEqual(lent.map(\.id), [0, 1, 2])
        XCTAssertEqual(lent[1].ended, 7)
    }

    func testPendingTableMatchesDictionary() {
        var table = PendingTable()
        var reference: [UInt64: Int32] = [:]
        var rng = SystemRandomNumberGenerator()
        func entry(_ n: Int) -> PendingItem {
            PendingItem(item: Int32(n), domain: -1, inBacklog: true, domainBusyAt: 0, runningAt: UInt64(n), barrierAt: 0,
                        suspendedAt: 0)
        }
        var n = 0
        for round in 0..<6 {
            // Scattered ids in many blocks first (they exhaust the slab allowance), then dense
            // runs in blocks some of which already hold a scattered id.
            for _ in 0..<3000 {
                let id = UInt64.random(in: 0..<(1 << 40), using: &rng)
                n += 1
                XCTAssertEqual(table.insertIfAbsent(id, entry(n)), reference[id] == nil)
                if reference[id] == nil { reference[id] = Int32(n) }
            }
            let scattered = Array(reference.keys)
            for id in scattered.prefix(50) {
                let block = id >> 10
                for low in 0..<UInt64(64) {
                    let dense = block << 10 | (UInt64(round) * 100 + low) % 1024
                    n += 1
                    XCTAssertEqual(table.insertIfAbsent(dense, entry(n)), reference[dense] == nil)
                    if reference[dense] == nil { reference[dense] = Int32(n) }
                }
            }
            for block in UInt64(0)..<40 {
                for low in UInt64(0)..<1024 where low % 3 != UInt64(round % 3) {
                    let id = (7 << 20 | block) << 10 | low
                    n += 1
                    XCTAssertEqual(table.insertIfAbsent(id, entry(n)), reference[id] == nil)
                    if reference[id] == nil { reference[id] = Int32(n) }
                }
            }
            XCTAssertEqual(table.count, reference.count)
            // Remove most (emptying whole slabs), and some ids that were never there.
            for (id, item) in reference where id % 5 != 0 {
                XCTAssertEqual(table.remove(id)?.item, item)
                reference[id] = nil
            }
            XCTAssertNil(table.remove(UInt64.random(in: 1 << 41..<1 << 42, using: &rng)))
            XCTAssertEqual(table.count, reference.count)
        }
        for (id, item) in reference { XCTAssertEqual(table.remove(id)?.item, item) }
        XCTAssertEqual(table.count, 0)
    }

    /// Per-item storage is what bounds memory (peak under 3× the trace size): keep it compact.
    func testCompactLayouts() {
        XCTAssertLessThanOrEqual(MemoryLayout<WorkItem>.stride, 72)
        XCTAssertLessThanOrEqual(MemoryLayout<BlockedInterval>.stride, 32)
        XCTAssertEqual(MemoryLayout<Span>.stride, 16)
        // Per queue too: a trace of 900k queues holds them twice while the model is built,
        // beside each queue's run-time state.
        // (72 with its label inline: 8 more than a String, 64 fewer than a label's allocation.)
        XCTAssertEqual(MemoryLayout<TraceQueue>.stride, 72)
        XCTAssertEqual(MemoryLayout<QueueLabel>.size, 24)
        XCTAssertLessThanOrEqual(MemoryLayout<QueueState>.stride, 48)
        XCTAssertLessThanOrEqual(MemoryLayout<QueueActivity>.stride, 200)
        XCTAssertEqual(MemoryLayout<Accumulator>.stride, 16)
        XCTAssertEqual(MemoryLayout<QueueTreeNode>.stride, 56)
        // And per group: a trace can have 200k, each with an array of rounds. Equal, not at
        // most: the compact-field wrappers (CompactFields.swift) must add no byte.
        XCTAssertEqual(MemoryLayout<TraceGroup>.stride, 72)
        XCTAssertEqual(MemoryLayout<GroupRound>.stride, 32)
    }

    /// The optional parts live in a box that copies of a queue share: a write through one
    /// copy must leave the other as it was (a value, as if stored inline).
    func testTraceQueueCopiesDoNotShareWrites() {
        var a = TraceQueue(address: 0x10, generation: 0, label: "a", kind: .serial, origin: .created, qos: .utility)
        a.suspensions.append(SuspendInterval(start: 1, end: nil, initial: false))
        var b = a
        b.suspensions[0].end = 5
        b.targetChanges.append(TargetChange(time: 2, from: nil, to: 3))
        b.nameSuffix = "utility"
        b.worstWaitBehind = WaitBehind(item: 1, blocker: 0, waitNs: 7)
        XCTAssertNil(a.suspensions[0].end)
        XCTAssertEqual(b.suspensions[0].end, 5)
        XCTAssertEqual(a.targetChanges, [])
        XCTAssertEqual(b.targetChanges.count, 1)
        XCTAssertEqual(a.nameSuffix, "")
        XCTAssertEqual(b.nameSuffix, "utility")
        XCTAssertNil(a.worstWaitBehind)
        a.longestBacklogEpisode = BacklogEpisode(start: 0, end: 4, peak: 2, enqueued: 2, started: 2)
        XCTAssertNil(b.longestBacklogEpisode)
        XCTAssertEqual(b.worstWaitBehind?.waitNs, 7)
    }

    /// A queue's figures (busy time, waits, backlog) live in the box too: a queue without them
    /// has no box, and a write through one copy leaves the other as it was.
    func testTraceQueueFiguresAreValuesWithoutABoxWhenZero() {
        var a = TraceQueue(address: 0x10, generation: 0, label: "a", kind: .serial, origin: .created, qos: .utility)
        a.busyNs = 0
        XCTAssertEqual(a.waitByCause, WaitBreakdown())
        XCTAssertEqual(a.backlog, StepSeries())
        var b = a
        b.busyNs = 9
        b.waitByCause.threadNs = 4
        b.backlog.record(1, at: 3)
        XCTAssertEqual(a.busyNs, 0)
        XCTAssertEqual(a.waitByCause.totalNs, 0)
        XCTAssertTrue(a.backlog.points.isEmpty)
        var c = b
        c.backlog.record(0, at: 5)
        c.waitByCause.threadNs += 1
        XCTAssertEqual([b.busyNs, b.waitByCause.threadNs, UInt64(b.backlog.points.count)], [9, 4, 1])
        XCTAssertEqual([c.busyNs, c.waitByCause.threadNs, UInt64(c.backlog.points.count)], [9, 5, 2])
    }

    /// The forest's columns read back as the nodes they were given, encode as their array did
    /// (a root has no parent key), and compare by node whatever order their figures were added in.
    func testQueueForestReadsAndEncodesAsItsNodes() throws {
        let nodes = [QueueTreeNode(queue: 3, depth: 0, parent: nil, children: [4, 5], subtreeQueues: 3, subtreeItems: 1 << 40,
                                   subtreeRunNs: 7, subtreeWaitNs: .max, subtreeBusyNs: 9),
                     QueueTreeNode(queue: 4, depth: 1, parent: 3, children: []),
                     QueueTreeNode(queue: 5, depth: 1, parent: 3, children: [], subtreeItems: 1, subtreeBusyNs: 2)]
        let forest = QueueForest(nodes)
        XCTAssertEqual(Array(forest), nodes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(forest)
        XCTAssertEqual(json, try encoder.encode(nodes))
        XCTAssertEqual(try JSONDecoder().decode(QueueForest.self, from: json), forest)
        var postOrder = QueueForest()
        for node in nodes { _ = postOrder.append(queue: node.queue, depth: node.depth, parent: node.parent, children: node.children.map { Int32($0) }) }
        for i in [2, 1, 0] {
            postOrder.setSubtree(i, queues: nodes[i].subtreeQueues,
                                 figures: .init(items: nodes[i].subtreeItems, runNs: nodes[i].subtreeRunNs,
                                                waitNs: nodes[i].subtreeWaitNs, busyNs: nodes[i].subtreeBusyNs))
        }
        XCTAssertEqual(postOrder, forest)
        XCTAssertNotEqual(QueueForest(nodes.dropLast()), forest)
    }

    /// A group round keeps its fields in Int32s and `noTime`, reads back what was set, and is
    /// encoded as when they were Ints and optionals.
    func testGroupRoundReadsAndEncodesAsBefore() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var round = GroupRound(start: 5, end: nil, members: 1)
        XCTAssertNil(round.end)
        XCTAssertNil(round.lastMember)
        XCTAssertNil(round.lastLeaveThread)
        XCTAssertEqual(String(decoding: try encoder.encode(round), as: UTF8.self), #"{"members":1,"start":5}"#)
        round.members += 2
        (round.end, round.lastMember, round.lastLeaveThread) = (9, 0, 7)
        let json = try encoder.encode(round)
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"{"end":9,"lastLeaveThread":7,"lastMember":0,"members":3,"start":5}"#)
        XCTAssertEqual(try JSONDecoder().decode(GroupRound.self, from: json), round)
        var group = TraceGroup(address: 0x20, generation: 1)
        XCTAssertNil(group.createdAt)
        XCTAssertNil(group.firstUnbalancedLeave)
        group.outstanding -= 1
        group.firstUnbalancedLeave = 0
        XCTAssertEqual(group.outstanding, -1)
        XCTAssertEqual(group.firstUnbalancedLeave, 0)
    }

    /// The tree node keeps its indices in Int32s and is encoded as when they were Ints.
    func testQueueTreeNodeRoundTripsThroughJSON() throws {
        let nodes = [QueueTreeNode(queue: 3, depth: 2, parent: 1, children: [4, 5], subtreeQueues: 3, subtreeItems: 1 << 40,
                                   subtreeRunNs: 7, subtreeWaitNs: .max, subtreeBusyNs: 9),
                     QueueTreeNode(queue: 0, depth: 0, parent: nil, children: [])]
        let json = String(decoding: try JSONEncoder().encode(nodes), as: UTF8.self)
        XCTAssertTrue(json.contains("\"parent\":1"))
        XCTAssertEqual(json.components(separatedBy: "\"parent\"").count, 2, "a root has no parent key")
        XCTAssertEqual(try JSONDecoder().decode([QueueTreeNode].self, from: Data(json.utf8)), nodes)
        XCTAssertNil(nodes[1].parent)
        XCTAssertEqual(nodes[0].subtreeQueues, 3)
    }

    /// The 16-byte accumulator measures the time a state held, across repeated sets.
    func testAccumulatorAddsTheTimeItsStateHeld() {
        var clock = Accumulator()
        XCTAssertEqual(clock.value(at: 100), 0)
        clock.set(true, at: 10)
        clock.set(true, at: 20)          // already on: changes nothing
        XCTAssertEqual(clock.value(at: 15), 5)
        clock.set(false, at: 30)
        clock.set(false, at: 40)
        XCTAssertEqual(clock.value(at: 50), 20)
        clock.set(true, at: 60)
        XCTAssertEqual(clock.value(at: 61), 21)
    }

    /// The queue's compact storage reads back what was stored, absent values included.
    func testTraceQueueStoresItsOptionalPartsCompactly() {
        var q = TraceQueue(address: 0x10, generation: 3, label: "a", kind: .serial, origin: .created, qos: .utility)
        XCTAssertEqual(q.generation, 3)
        XCTAssertNil(q.createdAt); XCTAssertNil(q.target); XCTAssertNil(q.initialTarget)
        XCTAssertNil(q.worstWaitBehind); XCTAssertNil(q.longestBacklogEpisode)
        q.createdAt = 0; q.target = 0; q.initialTarget = 7; q.relativePriority = -15; q.maxWidth = 64
        XCTAssertEqual(q.createdAt, 0); XCTAssertEqual(q.target, 0); XCTAssertEqual(q.initialTarget, 7)
        XCTAssertEqual(q.relativePriority, -15); XCTAssertEqual(q.maxWidth, 64)
        let wait = WaitBehind(item: 0, blocker: 5, waitNs: .max - 1)
        q.worstWaitBehind = wait
        XCTAssertEqual(q.worstWaitBehind, wait)
        let open = BacklogEpisode(start: 0, end: nil, peak: 0, enqueued: 1, started: 0)
        q.longestBacklogEpisode = open
        XCTAssertEqual(q.longestBacklogEpisode, open)
        let closed = BacklogEpisode(start: 5, end: 9, peak: Int(Int32.max), enqueued: 2_000_000, started: 2_000_000)
        q.longestBacklogEpisode = closed
        XCTAssertEqual(q.longestBacklogEpisode, closed)
        q.target = nil; q.createdAt = nil; q.worstWaitBehind = nil; q.longestBacklogEpisode = nil
        XCTAssertNil(q.target); XCTAssertNil(q.createdAt); XCTAssertNil(q.worstWaitBehind); XCTAssertNil(q.longestBacklogEpisode)
    }

    func testDispatchTimeConversion() {
        let c = DispatchTimeConverter(initMonoNs: 1_000, initRealtimeNs: 1_000_000)
        XCTAssertNil(c.traceTime(~0, now: 5))
        XCTAssertEqual(c.traceTime(0, now: 5), 5)
        XCTAssertEqual(c.traceTime(1_500, now: 5), 500)                      // uptime clock
        XCTAssertEqual(c.traceTime(500, now: 5), 0)                          // before the trace
        XCTAssertEqual(c.traceTime(0 &- 1_000_250, now: 5), 250)             // wall clock, negated
        XCTAssertEqual(c.traceTime((1 << 63) | 2_000, now: 5), 1_000)        // monotonic clock
    }

    /// The table the viewer's fmtDuration is held to as well (test_duration_format.py).
    func testDurationFormatTable() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/duration-format.json")
        struct Table: Decodable { struct Row: Decodable { let ns: UInt64; let text: String }; let durations: [Row] }
        let table = try JSONDecoder().decode(Table.self, from: Data(contentsOf: url))
        XCTAssertGreaterThan(table.durations.count, 10)
        for row in table.durations { XCTAssertEqual(formatDuration(row.ns), row.text, "\(row.ns) ns") }
    }

    func testFormatting() {
        XCTAssertEqual(formatDuration(0), "0 ns")
        XCTAssertEqual(formatDuration(999), "999 ns")
        XCTAssertEqual(formatDuration(1_000), "1.00 µs")
        XCTAssertEqual(formatDuration(12_345), "12.3 µs")
        XCTAssertEqual(formatDuration(4_560_000), "4.56 ms")
        XCTAssertEqual(formatDuration(120_000_000), "120 ms")
        XCTAssertEqual(formatDuration(95_000_000_000), "95.0 s")
        XCTAssertEqual(formatSignedDuration(-1_500), "-1.50 µs")
        XCTAssertEqual(formatRate(850), "850/s")
        XCTAssertEqual(formatRate(12_300), "12.3k/s")
        XCTAssertEqual(formatPercent(0.8), "80%")
        XCTAssertEqual(formatPercent(0.0123), "1.2%")
    }

    func testParseDuration() {
        XCTAssertEqual(parseDuration("10ms"), 10_000_000)
        XCTAssertEqual(parseDuration("1.5s"), 1_500_000_000)
        XCTAssertEqual(parseDuration("250us"), 250_000)
        XCTAssertEqual(parseDuration("250µs"), 250_000)
        XCTAssertEqual(parseDuration("100ns"), 100)
        XCTAssertEqual(parseDuration(" 2m "), 120_000_000_000)
        for bad in ["", "10", "ms", "1.2.3ms", "-5ms", "10 parsecs", "1e3ms"] { XCTAssertNil(parseDuration(bad), bad) }
    }

    func testTerminalSafeEscapesControlCharacters() {
        XCTAssertEqual(terminalSafe("com.example.db"), "com.example.db")
        XCTAssertEqual(terminalSafe("a\u{1b}[31mred\u{7}"), "a\\u{1b}[31mred\\u{7}")
        XCTAssertEqual(terminalSafe("x\ny\tz\r"), "x\\ny\\tz\\r")
        XCTAssertEqual(terminalSafe("\u{9b}2J"), "\\u{9b}2J")
        XCTAssertEqual(terminalSafe("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe")
        XCTAssertEqual(terminalSafe("café ☕"), "café ☕")
    }

    func testTextTableFitsTheWidth() {
        var t = TextTable(["queue", "items"])
        t.add([String(repeating: "x", count: 200), "12"])
        t.add(["evil\u{1b}]0;title\u{7}", "3"])
        let text = t.render(width: 40)
        for line in text.split(separator: "\n") { XCTAssertLessThanOrEqual(line.count, 40, String(line)) }
        XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 })
        XCTAssertTrue(text.contains("…"))
    }

    /// Backlog changes logged and flushed by queue make the same series as recording each at once.
    func testBacklogLogMakesTheSameSeriesAsDirectRecording() {
        let queueCount = 300
        func table() -> UnsafeTable<QueueActivity> {
            var t = UnsafeTable<QueueActivity>()
            for _ in 0..<queueCount { t.append(QueueActivity()) }
            return t
        }
        let direct = table(), logged = table()
        var log = BacklogLog()
        var depth = [Int32](repeating: 0, count: queueCount)
        var rng = SystemRandomNumberGenerator()
        var time: UInt64 = 0
        var midway: [QueueActivity] = []
        for n in 0..<(BacklogLog.capacity * 3 + 500) {
            // A few hot queues and a long tail; times repeat sometimes (changes at one instant).
            let q = Bool.random(using: &rng) ? Int.random(in: 0..<4, using: &rng) : Int.random(in: 0..<queueCount, using: &rng)
            depth[q] = Swift.max(0, depth[q] + (Bool.random(using: &rng) ? 1 : -1))
            time += UInt64.random(in: 0..<3, using: &rng)
            direct[q].backlog.record(depth[q], at: time)
            log.append(row: q, depth: depth[q], at: time)
            if log.isFull { log.flush(into: logged) }
            if n == BacklogLog.capacity + 77 {
                midway = Array(logged)
                log.replay(into: &midway)
                XCTAssertEqual(midway.map(\.backlog), direct.map(\.backlog))
            }
        }
        log.flush(into: logged)
        XCTAssertEqual(logged.map(\.backlog), direct.map(\.backlog))
        XCTAssertTrue(direct.contains { $0.backlog.resolution != 0 }, "some series compacted")
    }
}
