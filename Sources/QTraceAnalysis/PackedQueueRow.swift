import QTraceFormat

// A queue's statistics row without its identity, as variable-length integers: what
// `QueueStatsTable` keeps of a queue that ran something. A row is ~440 bytes of mostly small
// numbers (a queue of a few items: counts under 128, durations of a few bytes, three
// `DurationStats`, one of them often empty); packed, ~40-100 bytes. The table keeps a packed
// row only when unpacking gives back the row it was given, so nothing can be lost.

enum PackedQueueRow {
    /// Appends the figures of `row` (every field but the identity's) to `bytes`.
    static func append(_ row: QueueStats, to bytes: inout [UInt8]) {
        var writer = VarintWriter()
        swap(&writer.bytes, &bytes)  // the writer holds the only reference: appends in place
        defer { swap(&writer.bytes, &bytes) }
        writer.int(row.items); writer.int(row.completed); writer.int(row.pendingAtEnd); writer.int(row.runningAtEnd)
        writer.optional(row.runningAtEndLongestNs)
        writer.int(row.syncItems); writer.int(row.barrierItems); writer.int(row.sourceHandlerRuns)
        writer.durations(row.wait); writer.durations(row.run); writer.durations(row.syncWait)
        let causes = row.waitByCause
        writer.unsigned(causes.behindPreviousNs); writer.unsigned(causes.behindBarrierNs); writer.unsigned(causes.suspendedNs)
        writer.unsigned(causes.threadNs); writer.unsigned(causes.unattributedNs)
        if let worst = row.worstWaitBehind {
            writer.unsigned(1); writer.int(worst.item); writer.int(worst.blocker); writer.unsigned(worst.waitNs)
        } else {
            writer.unsigned(0)
        }
        writer.double(row.throughputPerSecond)
        writer.int(row.backlogMax); writer.int(row.widthMax)
        writer.double(row.widthMean)
        writer.unsigned(row.busyNs)
        writer.double(row.busyShare)
        writer.int(row.threadsServed)
    }

    /// The row packed at `offset` of `bytes`, on top of `identity` (a row with its identity and
    /// nothing counted).
    static func read(_ bytes: [UInt8], at offset: Int, onto identity: QueueStats) -> QueueStats {
        var row = identity
        bytes.withUnsafeBufferPointer { buffer in
            var reader = VarintReader(bytes: buffer, offset: offset)
            row.items = reader.int(); row.completed = reader.int(); row.pendingAtEnd = reader.int(); row.runningAtEnd = reader.int()
            row.runningAtEndLongestNs = reader.optional()
            row.syncItems = reader.int(); row.barrierItems = reader.int(); row.sourceHandlerRuns = reader.int()
            row.wait = reader.durations(); row.run = reader.durations(); row.syncWait = reader.durations()
            row.waitByCause.behindPreviousNs = reader.unsigned()
            row.waitByCause.behindBarrierNs = reader.unsigned()
            row.waitByCause.suspendedNs = reader.unsigned()
            row.waitByCause.threadNs = reader.unsigned()
            row.waitByCause.unattributedNs = reader.unsigned()
            if reader.unsigned() == 1 {
                row.worstWaitBehind = WaitBehind(item: reader.int(), blocker: reader.int(), waitNs: reader.unsigned())
            }
            row.throughputPerSecond = reader.double()
            row.backlogMax = reader.int(); row.widthMax = reader.int()
            row.widthMean = reader.double()
            row.busyNs = reader.unsigned()
            row.busyShare = reader.double()
            row.threadsServed = reader.int()
        }
        return row
    }
}

/// LEB128 numbers; signed ones zigzag-encoded, doubles as their bit patterns.
private struct VarintWriter {
    var bytes: [UInt8] = []

    mutating func unsigned(_ value: UInt64) { LEB128.append(value, to: &bytes) }

    mutating func int(_ value: Int) { unsigned(LEB128.zigzag(Int64(value))) }

    mutating func double(_ value: Double) { unsigned(value.bitPattern) }

    /// 0 for nil, else the value + 2 (the two largest values, which have no + 2, as 1 then the value).
    mutating func optional(_ value: UInt64?) {
        guard let value else { return unsigned(0) }
        if value >= .max - 1 { unsigned(1); unsigned(value) } else { unsigned(value + 2) }
    }

    /// 0 for empty statistics (a queue without sync items), else 1 and the figures.
    mutating func durations(_ d: DurationStats) {
        guard d != DurationStats() else { return unsigned(0) }
        unsigned(1)
        int(d.count)
        unsigned(d.minNs); unsigned(d.p50Ns); unsigned(d.p90Ns); unsigned(d.p95Ns)
        unsigned(d.p99Ns); unsigned(d.maxNs); unsigned(d.meanNs); unsigned(d.totalNs)
    }
}

private struct VarintReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset: Int

    mutating func unsigned() -> UInt64 { LEB128.read(bytes, at: &offset) }

    mutating func int() -> Int { Int(LEB128.unzigzag(unsigned())) }

    mutating func double() -> Double { Double(bitPattern: unsigned()) }

    mutating func optional() -> UInt64? {
        switch unsigned() {
        case 0: nil
        case 1: unsigned()
        case let v: v - 2
        }
    }

    mutating func durations() -> DurationStats {
        var d = DurationStats()
        guard unsigned() == 1 else { return d }
        d.count = int()
        d.minNs = unsigned(); d.p50Ns = unsigned(); d.p90Ns = unsigned(); d.p95Ns = unsigned()
        d.p99Ns = unsigned(); d.maxNs = unsigned(); d.meanNs = unsigned(); d.totalNs = unsigned()
        return d
    }
}
