// Function items without a slot (ENQUEUE_F/START_F/END_F, format 1.8): the reader gives
// START_F and END_F the id of the ENQUEUE_F they pair with, so every consumer sees ordinary
// ENQUEUE/START/END events. Synthetic records, written as the shim lays them out.
import XCTest
@testable import QTraceFormat

final class SlotlessPairingTests: XCTestCase {
    /// Writes the slot-less records as recorder.h does; times are ns (tscHz 1e9).
    private struct Records {
        let writer: TraceWriter

        func enqueue(_ time: UInt64, tid: Int32 = 1, id: UInt32, queue: UInt64, stub: UInt8, context: UInt64,
                     kind: ItemKind = .async, site: UInt64 = 7) throws {
            try writer.appendRaw(tid: tid, type: TraceLayout.slotlessEnqueueType, flags: stub, arg: id,
                                 tsc: writer.tsc(forTime: time),
                                 words: [queue | UInt64(kind.rawValue) << 48 | site << 52, context])
        }

        func start(_ time: UInt64, tid: Int32, stub: UInt8, context: UInt64, queue: UInt64) throws {
            try writer.appendRaw(tid: tid, type: TraceLayout.slotlessStartType, flags: stub, arg: UInt32(truncatingIfNeeded: queue),
                                 tsc: writer.tsc(forTime: time), words: [context | (queue >> 32) << 48])
        }

        func end(_ time: UInt64, tid: Int32, stub: UInt8) throws {
            try writer.appendRaw(tid: tid, type: TraceLayout.slotlessEndType, flags: stub, tsc: writer.tsc(forTime: time))
        }
    }

    private func trace(_ name: String, _ write: (Records) throws -> Void) throws -> (TraceFile, String) {
        let path = try temporaryDirectory(self) + "/\(name).qtrace"
        let writer = try TraceWriter(path: path, chunkSize: 4096)
        try write(Records(writer: writer))
        try writer.finish()
        return (try TraceFile(path: path), path)
    }

    private func ids(_ events: [Event], _ type: EventType) -> [UInt64] { events.filter { $0.type == type }.map(\.a) }

    func testEnqueueDecodesToItsFullForm() throws {
        let (file, _) = try trace("full") { r in
            try r.enqueue(10, id: 42, queue: 0x7f00_1234_5670, stub: 3, context: 0xdead_beef, kind: .barrierAsync, site: 9)
            try r.start(20, tid: 2, stub: 3, context: 0xdead_beef, queue: 0x7f00_1234_5670)
        }
        XCTAssertEqual(file.readAllEvents(), [
            Event(type: .enqueue, time: 10, tid: 1, arg: ItemKind.barrierAsync.rawValue,
                  flags: EnqueueFlags([.function, .barrier]).rawValue, a: 42, b: 0x7f00_1234_5670, d: 9),
            Event(type: .start, time: 20, tid: 2, arg: ItemKind.barrierAsync.rawValue, a: 42),
        ], "a queue above 32 bits and a context pair")
    }

    /// A serial queue runs its items in order: each START takes the oldest pending ENQUEUE of
    /// its (stub, context, queue), even when every item has the same function and context.
    func testStartsTakeTheOldestPendingEnqueueOfTheirTriple() throws {
        let q: UInt64 = 0x1000, ctx: UInt64 = 0x55
        let (file, _) = try trace("fifo") { r in
            for id: UInt32 in 1...5 { try r.enqueue(UInt64(id), id: id, queue: q, stub: 0, context: ctx) }
            try r.enqueue(6, id: 6, queue: q, stub: 1, context: ctx, kind: .barrierAsync)  // another function
            for n: UInt64 in 0..<3 {
                try r.start(100 + 10 * n, tid: 2, stub: 0, context: ctx, queue: q)
                try r.end(105 + 10 * n, tid: 2, stub: 0)
            }
            try r.start(140, tid: 2, stub: 1, context: ctx, queue: q)
            try r.end(145, tid: 2, stub: 1)
            for n: UInt64 in 0..<2 {
                try r.start(200 + 10 * n, tid: 3, stub: 0, context: ctx, queue: q)
                try r.end(205 + 10 * n, tid: 3, stub: 0)
            }
        }
        let events = file.readAllEvents()
        XCTAssertEqual(ids(events, .start), [1, 2, 3, 6, 4, 5])
        XCTAssertEqual(ids(events, .end), [1, 2, 3, 6, 4, 5])
        let barrier = try XCTUnwrap(events.first { $0.type == .start && $0.a == 6 })
        XCTAssertEqual(barrier.arg, ItemKind.barrierAsync.rawValue, "START takes the ENQUEUE's kind")
        XCTAssertTrue(events.filter { $0.type == .start }.allSatisfy { $0.b == 0 && $0.c == 0 }, "START is its full form")
        XCTAssertTrue(events.filter { $0.type == .enqueue }.allSatisfy { $0.c == 0 && $0.arg < 16 })
    }

    /// The same (function, context) pending on two queues at once: the queue keeps them apart.
    func testTheSameFunctionAndContextOnTwoQueuesPairByQueue() throws {
        let (file, _) = try trace("two-queues") { r in
            for id: UInt32 in 1...6 { try r.enqueue(UInt64(id), id: id, queue: id % 2 == 0 ? 0xA0 : 0xB0, stub: 2, context: 9) }
            for n: UInt64 in 0..<3 {
                try r.start(100 + 10 * n, tid: 2, stub: 2, context: 9, queue: 0xA0)
                try r.end(104 + 10 * n, tid: 2, stub: 2)
            }
            for n: UInt64 in 0..<3 {
                try r.start(200 + 10 * n, tid: 3, stub: 2, context: 9, queue: 0xB0)
                try r.end(204 + 10 * n, tid: 3, stub: 2)
            }
        }
        XCTAssertEqual(ids(file.readAllEvents(), .start), [2, 4, 6, 1, 3, 5])
    }

    /// An item that runs another on its thread (a nested drain): END closes the innermost.
    func testNestedItemsEndInnermostFirst() throws {
        let (file, _) = try trace("nested") { r in
            try r.enqueue(1, id: 1, queue: 0xA0, stub: 0, context: 1)
            try r.enqueue(2, id: 2, queue: 0xB0, stub: 1, context: 2)
            try r.start(10, tid: 2, stub: 0, context: 1, queue: 0xA0)
            try r.start(20, tid: 2, stub: 1, context: 2, queue: 0xB0)
            try r.end(30, tid: 2, stub: 1)
            try r.end(40, tid: 2, stub: 0)
        }
        XCTAssertEqual(ids(file.readAllEvents(), .end), [2, 1])
    }

    /// Two threads nesting items at the same time: the threads' open items share one table of
    /// entries, handed out again as items end, and each END still closes its own thread's
    /// innermost item.
    func testThreadsNestingAtOnceCloseTheirOwnItems() {
        var pairing = SlotlessPairing()
        for id: UInt64 in 1...6 {
            var enqueue = Event(type: .enqueue, time: 0, tid: 1, arg: 1 | UInt32(id) << SlotlessPairing.stubShift, a: id, b: 0xA0 + id, c: id)
            pairing.rewrite(&enqueue)
        }
        func start(_ tid: Int32, _ id: UInt64) {
            var event = Event(type: .start, time: 0, tid: tid, arg: UInt32(id), b: id, c: 0xA0 + id)
            pairing.rewrite(&event)
            XCTAssertEqual(event.a, id, "START of item \(id)")
        }
        func end(_ tid: Int32, _ id: UInt64, closes expected: UInt64) {
            var event = Event(type: .end, time: 0, tid: tid, arg: UInt32(id))
            pairing.rewrite(&event)
            XCTAssertEqual(event.a, expected, "END of item \(id) on thread \(tid)")
        }
        start(2, 1); start(3, 2); start(2, 3)   // thread 2: 1 > 3, thread 3: 2
        end(3, 2, closes: 2)
        start(3, 4); start(3, 5)                // thread 3: 4 > 5, in entries freed by item 2's end
        end(2, 3, closes: 3)
        end(3, 1, closes: 0)                    // item 1 is thread 2's, not thread 3's: nothing
        end(3, 5, closes: 5); end(3, 4, closes: 4)
        start(2, 6)                             // thread 2: 1 > 6
        end(2, 6, closes: 6); end(2, 1, closes: 1)
        end(2, 1, closes: 0)                    // nothing open any more
    }

    /// Hundreds of threads, each first seen while the others' items are open: the per-thread
    /// tables grow while a START is being recorded. (The nested per-thread buffers before
    /// them indexed the outer buffer with a call that could grow it: main a214154 crashed on a
    /// slot-less fan-out trace's 300 threads.)
    func testManyThreadsEachWithAnOpenItemCloseTheirOwn() {
        var pairing = SlotlessPairing()
        let threads: UInt64 = 300
        func stub(_ id: UInt64) -> UInt32 { UInt32(id % 200) }  // stubs are 8 bits wide
        for id: UInt64 in 1...threads {
            var enqueue = Event(type: .enqueue, time: 0, tid: 1, arg: 1 | stub(id) << SlotlessPairing.stubShift, a: id, b: 0x1000 + id, c: id)
            pairing.rewrite(&enqueue)
        }
        for id: UInt64 in 1...threads {
            var event = Event(type: .start, time: 0, tid: Int32(100 + id), arg: stub(id), b: id, c: 0x1000 + id)
            pairing.rewrite(&event)
            XCTAssertEqual(event.a, id, "START on thread \(100 + id)")
        }
        for id in stride(from: threads, through: 1, by: -1) {
            var event = Event(type: .end, time: 0, tid: Int32(100 + id), arg: stub(id))
            pairing.rewrite(&event)
            XCTAssertEqual(event.a, id, "END on thread \(100 + id)")
        }
        XCTAssertEqual(pairing.pendingCount, 0)
    }

    /// A START_F lost on a full disk: its END_F must not close the item around it.
    func testAnEndOfAnotherStubClosesNothing() throws {
        let (file, _) = try trace("lost-start") { r in
            try r.enqueue(1, id: 1, queue: 0xA0, stub: 0, context: 1)
            try r.start(10, tid: 2, stub: 0, context: 1, queue: 0xA0)
            try r.end(20, tid: 2, stub: 1)  // the nested item's, whose START_F was dropped
            try r.end(30, tid: 2, stub: 0)
        }
        XCTAssertEqual(ids(file.readAllEvents(), .end), [0, 1])
    }

    /// Where the trace begins after its items did (a flight recorder's overwritten chunks): a
    /// START without its ENQUEUE gets an id of its own, an END without its START id 0 (the
    /// analysis counts both, as for items with ids).
    func testRecordsCutFromTheirBeginningsStayReadable() throws {
        let (file, _) = try trace("cut") { r in
            try r.end(5, tid: 2, stub: 0)
            try r.start(10, tid: 2, stub: 0, context: 1, queue: 0xA0)
            try r.start(12, tid: 3, stub: 0, context: 1, queue: 0xA0)
            try r.end(20, tid: 2, stub: 0)
            try r.end(22, tid: 3, stub: 0)
        }
        let events = file.readAllEvents()
        let starts = ids(events, .start)
        XCTAssertEqual(starts, [SlotlessPairing.orphanIDBase, SlotlessPairing.orphanIDBase + 1])
        XCTAssertEqual(ids(events, .end), [0, SlotlessPairing.orphanIDBase, SlotlessPairing.orphanIDBase + 1])
        XCTAssertEqual(events.filter { $0.type == .start }.map(\.arg), [ItemKind.async.rawValue, ItemKind.async.rawValue])
    }

    /// A trace cut at its end (a crash, a cut file): the items that ran keep their ids, one
    /// still running has START alone, one not started yet ENQUEUE alone.
    func testATruncatedTraceKeepsWhatItHolds() throws {
        let (_, path) = try trace("truncated") { r in
            for id: UInt32 in 1...3 { try r.enqueue(UInt64(id), id: id, queue: 0xA0, stub: 0, context: 5) }
            try r.start(10, tid: 2, stub: 0, context: 5, queue: 0xA0)
            try r.end(11, tid: 2, stub: 0)
            try r.start(20, tid: 2, stub: 0, context: 5, queue: 0xA0)
            try r.end(21, tid: 2, stub: 0)
        }
        // Cut the file inside thread 2's last record (END_F, 16 bytes): the reader warns and
        // reads what is left.
        var bytes = try readBytes(path)
        let cut = try XCTUnwrap(lastRecordOffset(bytes, type: TraceLayout.slotlessEndType))
        bytes.removeSubrange((cut + 8)...)
        try writeBytes(bytes, to: path)
        let events = try TraceFile(path: path).readAllEvents()
        XCTAssertEqual(ids(events, .enqueue), [1, 2, 3])
        XCTAssertEqual(ids(events, .start), [1, 2])
        XCTAssertEqual(ids(events, .end), [1], "item 2 was running at the cut")
    }

    /// The offset of the last record of `type` whose word 0 says 16 bytes.
    private func lastRecordOffset(_ bytes: [UInt8], type: UInt8) -> Int? {
        stride(from: bytes.count - 16, through: 0, by: -8).first { offset in
            bytes[offset] == type && bytes[offset + 2] == 16 && bytes[offset + 3] == 0
        }
    }

    /// Many triples pending at once, some many times, started in random order (far more
    /// disorder than any queue has): the pairing against a plain dictionary of queues.
    func testRandomTraffic() {
        var random = SeededGenerator(seed: 24)
        var pairing = SlotlessPairing()
        var reference: [[UInt64]: [UInt64]] = [:]
        var pending: [[UInt64]] = []
        var nextID: UInt64 = 1
        for step in 0..<40_000 {
            let enqueue = pending.isEmpty || Int.random(in: 0..<100, using: &random) < (step < 20_000 ? 60 : 40)
            if enqueue {
                // Few contexts and queues: collisions in the table, and triples pending many times.
                let key: [UInt64] = [UInt64.random(in: 0..<4, using: &random), UInt64.random(in: 0..<3000, using: &random) * 16,
                                     0x5000 + UInt64.random(in: 0..<300, using: &random) * 64]
                var event = Event(type: .enqueue, time: 0, tid: 1, arg: 1 | UInt32(key[0]) << SlotlessPairing.stubShift,
                                  a: nextID, b: key[2], c: key[1])
                pairing.rewrite(&event)
                reference[key, default: []].append(nextID)
                if reference[key]!.count == 1 { pending.append(key) }
                nextID += 1
            } else {
                let index = Int.random(in: 0..<pending.count, using: &random)
                let key = pending[index]
                // The merge's scouts peek at the id a START_F will get, as its record words say it.
                let peeked = pairing.peekStart(word0: key[0] << 8 | (key[2] & 0xFFFF_FFFF) << 32,
                                               word: key[1] | (key[2] >> 32) << 48)
                var start = Event(type: .start, time: 0, tid: 2, arg: UInt32(key[0]), b: key[1], c: key[2])
                pairing.rewrite(&start)
                XCTAssertEqual(peeked?.id, start.a, "step \(step)")
                XCTAssertEqual(start.a, reference[key]!.removeFirst(), "step \(step)")
                if reference[key]!.isEmpty { pending.swapAt(index, pending.count - 1); pending.removeLast() }
                var end = Event(type: .end, time: 0, tid: 2, arg: UInt32(key[0]))
                pairing.rewrite(&end)
                XCTAssertEqual(end.a, start.a)
            }
        }
        XCTAssertEqual(pairing.pendingCount, reference.values.reduce(0) { $0 + $1.count })
    }

    /// More items pending than an arena of one huge page holds (32,768 chunks of five; the
    /// pairing's own first arena holds a million), over a thousand queues filled in sweeps as
    /// the starfish does, then drained queue by queue: the arena grows under pending lists, and
    /// chunks freed by one queue's head carry another's items without mixing them up.
    func testListsOutgrowTheirFirstArena() {
        var pairing = SlotlessPairing(arenaChunks: 32_768)
        let queues: [UInt64] = (0..<1000).map { 0x7f00_0000 + $0 * 128 }
        var nextID: UInt64 = 1
        func enqueueSweep() {
            for q in queues {
                var event = Event(type: .enqueue, time: 0, tid: 1, arg: 1 | 3 << SlotlessPairing.stubShift, a: nextID, b: q, c: 5)
                pairing.rewrite(&event)
                nextID += 1
            }
        }
        for _ in 0..<170 { enqueueSweep() }
        XCTAssertEqual(pairing.pendingCount, 170_000)
        // Queue i's items are i+1, i+1001, ...: drain half of each, refill, then drain all.
        func drain(_ q: Int, _ count: Int, from first: UInt64) {
            for n in 0..<UInt64(count) {
                var start = Event(type: .start, time: 0, tid: 2, arg: 3, b: 5, c: queues[q])
                pairing.rewrite(&start)
                XCTAssertEqual(start.a, first + n * 1000, "queue \(q)")
            }
        }
        for q in queues.indices { drain(q, 85, from: UInt64(q) + 1) }
        for _ in 0..<10 { enqueueSweep() }
        for q in queues.indices { drain(q, 95, from: UInt64(q) + 1 + 85 * 1000) }
        XCTAssertEqual(pairing.pendingCount, 0)
    }

    /// An ENQUEUE_F whose context has more than the 48 bits a START_F records can be paired
    /// with no START: the START reads as one without its ENQUEUE, never as another item's.
    func testAContextWiderThanAStartsNeverPairs() {
        var pairing = SlotlessPairing()
        var wide = Event(type: .enqueue, time: 0, tid: 1, arg: 1 | 2 << SlotlessPairing.stubShift, a: 9, b: 0xA0, c: 1 << 48 | 7)
        pairing.rewrite(&wide)
        var start = Event(type: .start, time: 0, tid: 2, arg: 2, b: 7, c: 0xA0)
        pairing.rewrite(&start)
        XCTAssertEqual(start.a, SlotlessPairing.orphanIDBase)
        XCTAssertEqual(pairing.pendingCount, 1)
    }

    /// A START whose item lies beyond the search limit (thousands of STARTs lost before it)
    /// is read as one without its ENQUEUE: reading stays linear whatever the input.
    func testTheSearchStopsAtItsLimit() {
        var pairing = SlotlessPairing()
        let limit = 4096
        for id in 1...UInt64(limit + 1) {
            var enqueue = Event(type: .enqueue, time: 0, tid: 1, arg: 1 | UInt32(id == UInt64(limit + 1) ? 1 : 0) << SlotlessPairing.stubShift,
                                a: id, b: 0xA0, c: 7)
            pairing.rewrite(&enqueue)
        }
        var far = Event(type: .start, time: 0, tid: 2, arg: 1, b: 7, c: 0xA0)
        pairing.rewrite(&far)
        XCTAssertEqual(far.a, SlotlessPairing.orphanIDBase)
        var near = Event(type: .start, time: 0, tid: 2, arg: 0, b: 7, c: 0xA0)
        pairing.rewrite(&near)
        XCTAssertEqual(near.a, 1)
    }

    /// The merge's scouts announce a START_F ahead with the id its pairing will give it (the
    /// oldest pending item of its triple, after those of the STARTs the scout passed), so that
    /// the model prefetches its pending entry as it does a START's with an id; peeking leaves
    /// the pending items as they were.
    func testStartsAreAnnouncedWithTheIdsTheyWillBePairedWith() throws {
        let q: UInt64 = 0x7f00_1234_5670
        let (file, _) = try trace("announce") { r in
            // Two triples, alternating: the scout passes STARTs of one triple before the first is delivered.
            for id: UInt32 in 1...40 { try r.enqueue(UInt64(id), id: id, queue: q, stub: UInt8(id % 2), context: 7) }
            for n: UInt64 in 1...40 {
                try r.start(100 + 2 * n, tid: 2, stub: UInt8(n % 2), context: 7, queue: q)
                try r.end(101 + 2 * n, tid: 2, stub: UInt8(n % 2))
            }
        }
        var announced: [UInt64] = []
        var delivered: [Event] = []
        file.forEachEvent(announceStart: { announced.append($0) }) { delivered.append($0); return true }
        XCTAssertEqual(delivered, file.readAllEvents())
        XCTAssertEqual(ids(delivered, .start), Array(1...40))
        // The thread's first START opens its records (the scouts start behind it); every later
        // one is announced once, with its own id, before it is delivered.
        XCTAssertEqual(announced, Array(2...40))
    }

    /// A trace written before 1.8 reads exactly as before: the pairing only sees its records.
    func testItemsWithIdsAreUntouched() throws {
        let (file, _) = try trace("ids") { r in
            try r.writer.append(Event(type: .enqueue, time: 1, tid: 1, arg: 1, a: 77, b: 0xA0))
            try r.writer.append(Event(type: .start, time: 2, tid: 2, arg: 1, a: 77))
            try r.writer.append(Event(type: .end, time: 3, tid: 2, a: 77))
        }
        XCTAssertEqual(file.readAllEvents().map(\.a), [77, 77, 77])
    }
}
