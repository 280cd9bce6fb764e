// The reader's k-way merge: one global order whatever the number of threads, with ties.
import XCTest
@testable import QTraceFormat

final class MergeTests: XCTestCase {
    /// Many ties across threads and within a thread: order is (time, thread order in the file,
    /// record order within the thread), from 1 to 40 threads.
    func testMergeOrderWithTiesForFewAndManyThreads() throws {
        let directory = try temporaryDirectory(self)
        for threadCount in [1, 3, 16, 17, 40] {
            var rng = SeededGenerator(seed: UInt64(threadCount))
            var events: [Event] = []
            for thread in 0..<threadCount {
                var time: UInt64 = 0
                for index in 0..<(400 + 7 * thread) {
                    time += UInt64.random(in: 0...2, using: &rng)   // many equal times
                    events.append(Event(type: .end, time: time, tid: Int32(500 + thread), a: UInt64(index)))
                }
            }
            // Interleave the threads' records in the file by time so several chunks per thread
            // alternate, as in a real recording.
            let written = events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            let trace = try TraceFile(path: writeTrace(written, in: directory, name: "merge-\(threadCount).qtrace"))
            XCTAssertEqual(trace.threads.count, threadCount)
            let rank = Dictionary(uniqueKeysWithValues: trace.threads.enumerated().map { ($0.element.tid, $0.offset) })
            let expected = events.enumerated().sorted {
                ($0.element.time, rank[$0.element.tid]!, $0.offset) < ($1.element.time, rank[$1.element.tid]!, $1.offset)
            }.map(\.element)
            XCTAssertEqual(trace.readAllEvents(), expected, "\(threadCount) threads")
        }
    }

    /// The START lookahead (`forEachEvent(announceStart:_:)`, which the model builder uses to
    /// prefetch): the same events in the same order as `forEachEvent`, and each START announced
    /// once, before it is delivered, at most `startLookahead` records of its thread ahead;
    /// only a START that opens a span of its thread's records (a chunk) may go unannounced;
    /// none while the body says it wants no announcements.
    func testStartsAreAnnouncedOnceAndAheadOfTheirDelivery() throws {
        let directory = try temporaryDirectory(self)
        var rng = SeededGenerator(seed: 24)
        var events: [Event] = []
        var nextId: UInt64 = 1
        for thread in 0..<5 {
            var time: UInt64 = 0
            for _ in 0..<(3000 + 11 * thread) {
                time += UInt64.random(in: 0...3, using: &rng)
                // Even threads' STARTs are written in the compact form, odd threads' in the full one.
                let id = thread % 2 == 0 ? nextId : 1 << 40 | nextId
                nextId += 1
                let kind = Int.random(in: 0..<4, using: &rng)
                let type: EventType = kind == 0 ? .start : kind == 1 ? .end : kind == 2 ? .enqueue : .semSignal
                events.append(Event(type: type, time: time, tid: Int32(700 + thread), a: id, b: 0x1000))
            }
        }
        let written = events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        let path = directory + "/announce.qtrace"
        let writer = try TraceWriter(path: path, pid: 4242, ncpu: 2, mainTid: 100, chunkSize: 4096)
        for event in written {
            if event.type == .start && event.a >> 32 == 0 {  // the compact START (type 121): the id in the arg
                try writer.appendRaw(tid: event.tid, type: 121, arg: UInt32(event.a), tsc: writer.tsc(forTime: event.time), time: event.time)
            } else {
                try writer.append(event)
            }
        }
        try writer.finish()
        let trace = try TraceFile(path: path)
        let expected = trace.readAllEvents()

        for decodingThread in [DecodingThread.never, .always] {
            try checkAnnouncements(trace, expected: expected, decodingThread: decodingThread)
        }
    }

    private func checkAnnouncements(_ trace: TraceFile, expected: [Event], decodingThread: DecodingThread) throws {
        var delivered: [Event] = []
        var announcedAt: [UInt64: Int] = [:]   // START id -> events delivered when announced
        var announcedTwice = 0
        trace.forEachEvent(decodingThread: decodingThread, announceStart: { id in
            if announcedAt.updateValue(delivered.count, forKey: id) != nil { announcedTwice += 1 }
        }) { delivered.append($0); return true }

        XCTAssertEqual(delivered, expected)
        XCTAssertEqual(announcedTwice, 0)
        let starts = Dictionary(uniqueKeysWithValues: delivered.enumerated().filter { $0.element.type == .start }.map { ($0.element.a, $0.offset) })
        XCTAssertEqual(Set(announcedAt.keys).subtracting(starts.keys), [], "only STARTs are announced")
        for (id, at) in announcedAt { XCTAssertLessThanOrEqual(at, starts[id]!, "announced after its delivery") }
        // Chunks of 4 KiB hold ~170 records: all but a few STARTs per chunk are announced.
        XCTAssertGreaterThan(announcedAt.count, starts.count * 9 / 10)
        // Inline, ahead in its own thread's records by at most the lookahead, plus the events
        // decoded but not yet delivered (part of a batch); with a decoding thread, the STARTs
        // of the batch `announcedPiecesAhead` batches later, no sooner and no later.
        for (index, event) in delivered.enumerated() where event.type == .start {
            guard let at = announcedAt[event.a] else { continue }
            if decodingThread == .always {
                XCTAssertGreaterThanOrEqual(index - at, TraceFile.announcedPiecesAhead * TraceFile.eventBatchSize)
                XCTAssertLessThan(index - at, (TraceFile.announcedPiecesAhead + 1) * TraceFile.eventBatchSize)
            } else {
                let sameThreadBetween = delivered[at..<index].filter { $0.tid == event.tid }.count
                XCTAssertLessThanOrEqual(sameThreadBetween, TraceFile.startLookahead + TraceFile.eventBatchSize - 1)
            }
        }

        // While the body wants no announcements, the scouts stand still; the events are the same.
        var quietlyDelivered: [Event] = []
        var announcedUnwanted = 0
        trace.forEachEvent(decodingThread: decodingThread, announceStart: { _ in announcedUnwanted += 1 }) {
            quietlyDelivered.append($0)
            return false
        }
        XCTAssertEqual(quietlyDelivered, expected)
        XCTAssertEqual(announcedUnwanted, 0)
    }

    /// The batches of `forEachBatchOfEvents`: the events of `forEachEvent` in the same order,
    /// with their strings, `eventBatchSize` at a time (only the last batch shorter), and each
    /// event lent out by `lending` unchanged and still in the buffer after the call.
    func testBatchesHoldTheEventsInOrderAndLendingKeepsThem() throws {
        let directory = try temporaryDirectory(self)
        var events: [Event] = []
        for index in 0..<(5 * TraceFile.eventBatchSize + 7) {
            let tid = Int32(300 + index % 3)
            events.append(index % 5 == 0
                ? Event(type: .mark, time: UInt64(index), tid: tid, string: "mark \(index)")
                : Event(type: .end, time: UInt64(index), tid: tid, a: UInt64(index)))
        }
        let trace = try TraceFile(path: writeTrace(events, in: directory, name: "batches.qtrace"))
        let expected = trace.readAllEvents()
        XCTAssertEqual(expected.count, events.count)
        var delivered: [Event] = []
        var sizes: [Int] = []
        trace.forEachBatchOfEvents(announceStart: { _ in }) { batch in
            sizes.append(batch.count)
            for i in batch.indices {
                let lent = batch.lending(i) { $0 }
                XCTAssertEqual(lent, batch[i], "lent unchanged, back in the buffer")
                delivered.append(lent)
            }
            return false
        }
        XCTAssertEqual(delivered, expected)
        XCTAssertEqual(sizes, Array(repeating: TraceFile.eventBatchSize, count: 5) + [7])
    }

    /// The decoding thread (`DecodingThread.always`): over many of its ring's batches, with
    /// strings, the batches `body` gets are the inline ones, event for event and size for
    /// size; a `body` that throws halfway stops the decoder (no hang), its error comes out,
    /// and the file reads again in full afterwards.
    func testTheDecodingThreadDeliversTheInlineBatchesAndStopsOnError() throws {
        let directory = try temporaryDirectory(self)
        var events: [Event] = []
        let count = EventBatchRing.batchSize * (EventBatchRing.slotCount * 3 + 1) + 13
        for index in 0..<count {
            let tid = Int32(300 + index % 7)
            events.append(index % 11 == 0
                ? Event(type: .mark, time: UInt64(index / 3), tid: tid, string: "mark \(index)")
                : Event(type: .end, time: UInt64(index / 3), tid: tid, a: UInt64(index)))
        }
        let trace = try TraceFile(path: writeTrace(events, in: directory, name: "thread.qtrace"))
        func batches(_ decodingThread: DecodingThread) -> [[Event]] {
            var delivered: [[Event]] = []
            trace.forEachBatchOfEvents(decodingThread: decodingThread, announceStart: { _ in }) { batch in
                delivered.append(Array(batch))
                return false
            }
            return delivered
        }
        let inline = batches(.never)
        XCTAssertNil(trace.lastDecodingThreads)
        XCTAssertEqual(inline.reduce(0) { $0 + $1.count }, count)
        XCTAssertEqual(batches(.always), inline)
        XCTAssertNotNil(trace.lastDecodingThreads, "the events went through the decoding thread")

        struct Stop: Error {}
        var seen = 0
        XCTAssertThrowsError(try trace.forEachBatchOfEvents(decodingThread: .always, announceStart: { _ in }) { batch in
            seen += batch.count
            if seen >= count / 2 { throw Stop() }
            return false
        }) { XCTAssertTrue($0 is Stop) }
        XCTAssertEqual(batches(.always), inline)
    }
}
