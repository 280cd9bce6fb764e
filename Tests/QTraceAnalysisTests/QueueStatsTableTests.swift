import XCTest
import QTraceFormat
@testable import QTraceAnalysis

/// `QueueStatsTable` keeps rows as identities, packed figures or full rows: every row must
/// read back equal to the one stored, whatever its values.
final class QueueStatsTableTests: XCTestCase {
    func testRowsReadBackAsStoredWhateverTheirValues() {
        var rng = SystemRandomNumberGenerator()
        var rows: [QueueStats] = []
        for q in 0..<2_000 {
            var row = QueueStats(queue: q, label: "q\(q % 7)", name: q % 3 == 0 ? "q\(q % 7) [utility]" : "q\(q % 7)",
                                 address: Self.address(q), kind: .serial, qos: QoSClass.allCases[q % 6].name,
                                 target: q % 5 == 0 ? nil : q / 2)
            if q % 4 != 0 { Self.fill(&row, using: &rng) }
            rows.append(row)
        }
        var table = QueueStatsTable()
        table.reserveCapacity(rows.count / 2)  // fewer than stored: the table still grows
        for row in rows { table.append(row) }
        XCTAssertEqual(table.count, rows.count)
        for q in rows.indices { XCTAssertEqual(table[q], rows[q], "queue \(q)") }

        // Replacing rows keeps every other row as it was.
        for q in stride(from: 0, to: rows.count, by: 3) {
            var row = rows[(q * 7) % rows.count]
            row.queue = q
            if q % 2 == 0 { Self.fill(&row, using: &rng) }
            table[q] = row
            rows[q] = row
        }
        XCTAssertEqual(Array(table), rows)
    }

    /// A table made for a model's queues reads identities from them: rows of those queues,
    /// with or without figures, and rows that differ from their queue (kept whole) read back
    /// as stored, also after replacing.
    func testRowsOfModelQueuesReadBackAsStored() {
        var rng = SystemRandomNumberGenerator()
        let queues: [TraceQueue] = (0..<1_000).map { q in
            var queue = TraceQueue(address: UInt64(q) * 0x100, generation: q % 3, label: q % 10 == 0 ? "" : "q\(q % 7)",
                                   kind: q % 2 == 0 ? .serial : .concurrent, origin: .created, qos: QoSClass.allCases[q % 6])
            if q % 4 == 1 { queue.nameSuffix = "utility" }
            queue.target = q % 5 == 0 ? nil : q / 2
            return queue
        }
        var rows = queues.indices.map { q in QueueStats(identityOf: queues[q], q) }
        for q in rows.indices where q % 3 != 0 { Self.fill(&rows[q], using: &rng) }
        for q in stride(from: 7, to: rows.count, by: 50) { rows[q].label += " (renamed)" }
        for q in stride(from: 11, to: rows.count, by: 50) { rows[q].queue += 1 }
        var table = QueueStatsTable(identitiesFrom: queues)
        table.reserveCapacity(rows.count)
        for row in rows { table.append(row) }
        for q in rows.indices { XCTAssertEqual(table[q], rows[q], "queue \(q)") }
        for q in stride(from: 0, to: rows.count, by: 3) {
            rows[q] = q % 2 == 0 ? QueueStats(identityOf: queues[q], q) : rows[(q * 7) % rows.count]
            table[q] = rows[q]
        }
        XCTAssertEqual(Array(table), rows)
    }

    /// The address written digit by digit is the one the concatenation wrote.
    func testQueueAddressIsHexWithTheGeneration() {
        var rng = SystemRandomNumberGenerator()
        let addresses: [UInt64] = [0, 1, 0xf, 0x10, UInt64.max] + (0..<500).map { _ in UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng) }
        for address in addresses {
            for generation in [0, 1, 9, 10, 12345, -1] {
                XCTAssertEqual(queueAddress(address, generation: generation),
                               "0x" + String(address, radix: 16) + (generation > 0 ? "#\(generation)" : ""))
            }
        }
    }

    /// Addresses as the statistics write them, and some they never write (kept whole).
    static func address(_ q: Int) -> String {
        switch q % 6 {
        case 0: "0x\(String(q * 256, radix: 16))"
        case 1: "0x\(String(q, radix: 16))#\(q % 4 + 1)"
        case 2: "0x\(String(q, radix: 16, uppercase: true))"
        case 3: "0x1#0"
        case 4: "unknown"
        default: "0x\(String(UInt64.max - UInt64(q), radix: 16))"
        }
    }

    /// Random figures, small and extreme.
    static func fill(_ row: inout QueueStats, using rng: inout SystemRandomNumberGenerator) {
        func n() -> Int { [0, 1, 2, 127, 128, Int.max, Int.min, -1, Int.random(in: -1_000_000...1_000_000, using: &rng)].randomElement(using: &rng)! }
        func ns() -> UInt64 { [0, 1, 100, 1 << 35, UInt64.max, UInt64.max - 1, UInt64.random(in: 0...UInt64.max, using: &rng)].randomElement(using: &rng)! }
        func x() -> Double { [0, -0.0, 1.5, .infinity, .greatestFiniteMagnitude, Double.random(in: 0...1, using: &rng)].randomElement(using: &rng)! }
        func durations() -> DurationStats {
            var d = DurationStats()
            guard Bool.random(using: &rng) else { return d }
            d.count = n(); d.minNs = ns(); d.p50Ns = ns(); d.p90Ns = ns(); d.p95Ns = ns(); d.p99Ns = ns()
            d.maxNs = ns(); d.meanNs = ns(); d.totalNs = ns()
            return d
        }
        row.items = n(); row.completed = n(); row.pendingAtEnd = n(); row.runningAtEnd = n()
        row.runningAtEndLongestNs = Bool.random(using: &rng) ? ns() : nil
        row.syncItems = n(); row.barrierItems = n(); row.sourceHandlerRuns = n()
        row.wait = durations(); row.run = durations(); row.syncWait = durations()
        row.waitByCause.behindPreviousNs = ns(); row.waitByCause.threadNs = ns(); row.waitByCause.unattributedNs = ns()
        row.worstWaitBehind = Bool.random(using: &rng) ? WaitBehind(item: n(), blocker: n(), waitNs: ns()) : nil
        row.throughputPerSecond = x(); row.widthMean = x(); row.busyShare = x()
        row.backlogMax = n(); row.widthMax = n(); row.busyNs = ns(); row.threadsServed = n()
    }
}
