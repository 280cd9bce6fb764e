// Several processes of one recording (a program and the children it spawned): each process is
// analysed on its own, then these put the processes side by side. `ProcessSummary` is one
// process's row of the Processes table; `ProcessTotals` adds per-process step series (thread
// counts) on the common time axis, a process counting only while it lived. The report, `qtrace
// stats` and its JSON take both from here, so their per-process and total figures agree.

/// One process's figures: what the Processes table shows and the order of its lane group.
public struct ProcessSummary: Sendable, Codable, Equatable {
    public var durationNs: UInt64 = 0
    public var items = 0
    /// Threads seen, and the most alive at once.
    public var threads = 0
    public var peakThreadsAlive = 0
    /// The busy time of all its threads together: how much work it did. The report sorts the
    /// processes' lane groups by it, busiest first.
    public var busyNs: UInt64 = 0
    /// The queue with the most busy time, nil when no queue ran an item.
    public var busiestQueue: Int?
    public var busiestQueueBusyNs: UInt64 = 0
    public var findings = 0

    public init() {}

    public init(statistics: TraceStatistics, findings: [Finding]) {
        durationNs = statistics.durationNs
        items = statistics.items
        threads = statistics.threads.count
        peakThreadsAlive = statistics.threadCounts.peakAlive
        busyNs = statistics.threads.reduce(0) { $0 + $1.busyNs }
        // The first of equals wins, so the choice does not depend on anything but the trace.
        // Read in place: a filtered copy of the rows held 201 MB at 900k queues, at the report's peak.
        for queue in statistics.queues where queue.busyNs > busiestQueueBusyNs {
            busiestQueue = queue.queue
            busiestQueueBusyNs = queue.busyNs
        }
        self.findings = findings.count
    }
}

/// One process's step series (a value from each time until the next) on the common time axis
/// of several processes. The process lived over [startNs, endNs]: it counts 0 outside.
public struct PlacedSteps: Sendable, Equatable {
    public var timesNs: [Int64]
    public var values: [Double]
    public var startNs: Int64
    public var endNs: Int64

    public init(timesNs: [Int64], values: [Double], startNs: Int64, endNs: Int64) {
        self.timesNs = timesNs
        self.values = values
        self.startNs = startNs
        self.endNs = endNs
    }
}

public enum ProcessTotals {
    /// The sum of several processes' step series: at each change of any process, the total of
    /// every process's current value. A process's value drops to 0 at its end (a process that
    /// exited has no threads left, whatever its last recorded count), so the total of processes
    /// that ran one after another never exceeds what was alive at once. Times are sorted; one
    /// point per time (the value after every change at that time). O(n log n) in the points.
    public static func summed(_ parts: [PlacedSteps]) -> (timesNs: [Int64], values: [Double]) {
        var changes: [(time: Int64, part: Int, value: Double)] = []
        changes.reserveCapacity(parts.reduce(0) { $0 + $1.timesNs.count + 1 })
        for (p, part) in parts.enumerated() {
            for (t, v) in zip(part.timesNs, part.values) where t < part.endNs {
                changes.append((max(t, part.startNs), p, v))
            }
            changes.append((part.endNs, p, 0))
        }
        // Stable for equal times (by input order), so the result does not depend on the sort.
        changes = changes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        var current = [Double](repeating: 0, count: parts.count)
        var total = 0.0
        var times: [Int64] = [], values: [Double] = []
        for change in changes {
            total += change.value - current[change.part]
            current[change.part] = change.value
            if times.last == change.time {
                values[values.count - 1] = total
            } else if values.last != total {
                times.append(change.time)
                values.append(total)
            }
        }
        return (times, values)
    }

    /// The largest value of `summed(parts)`: e.g. the most threads alive at once in all processes.
    public static func peak(_ parts: [PlacedSteps]) -> Double {
        summed(parts).values.max() ?? 0
    }
}
