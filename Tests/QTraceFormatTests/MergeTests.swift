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
}
