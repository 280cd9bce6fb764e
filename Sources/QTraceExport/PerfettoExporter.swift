// Perfetto's protobuf trace (`qtrace export --format perfetto`): TracePackets of TrackEvents,
// read by ui.perfetto.dev and trace_processor. A process track per traced process, a thread
// track per thread with each work item as a slice (named by the code it ran, else its queue;
// args: queue, item id, kind, wait, where it was enqueued), a flow from each enqueue to the
// item's start and from each Swift task job to the task's next job, a track per queue with
// its running and pending items in lanes, counters for thread counts and queue backlogs, the
// QTrace API's marks and intervals, blocked time, `--sched` thread states and the findings.
// Every figure comes from the `ReportInput` (the analysis): nothing is recomputed here.
// docs/perfetto.md describes the layout.
import QTraceViewModel

/// What an export wrote (the tests compare it with the decoded file).
public struct PerfettoExportSummary: Sendable {
    /// TrackEvents written (slices count twice: begin and end).
    public var trackEvents: Int
    /// Item slices on thread tracks (one per item that started: `qtrace stats`' item count
    /// less the items still pending at the end).
    public var itemSlices: Int
    public var flows: Int
}

struct PerfettoExporter {
    let input: ReportInput
    var compress = true

    /// Queue lanes: concurrent items beyond these share no lane and are left off the queue's
    /// track (they stay on their threads; the backlog counter counts every pending item).
    static let maxRunningLanes = 32
    static let maxPendingLanes = 8
    /// Lanes of a thread's intervals, blocked time or scheduler states: spans beyond share one
    /// overflow track (a viewer's row per lane would make 490,800 never-ended intervals as many rows).
    static let maxSpanLanes = 32

    func write(to out: any ByteSink) throws -> PerfettoExportSummary {
        let state = PerfettoExportState(input: input, out: out, compress: compress)
        defer { state.stream.drain() }
        try state.writeDescriptors()
        try state.writeThreads()
        try state.writeQueues()
        try state.writeCounters()
        try state.writeFindings()
        try state.writeThreadSpans()
        try state.stream.finish()
        return PerfettoExportSummary(trackEvents: state.stream.eventCount, itemSlices: state.itemSlices, flows: state.flows)
    }
}

/// One export in progress: the track uuids, the names, the item times and flows.
final class PerfettoExportState {
    let input: ReportInput
    let stream: PerfettoPacketStream
    let strings = PerfettoStringsBox()
    let times: PerfettoItemTimes
    var nextUUID: UInt64 = 1
    var processTrack: [UInt64] = []
    var threadTrack: [UInt64] = []
    var queueTrack: [UInt64] = []
    /// String numbers: per queue its label, per code its name, per site where it enqueued.
    var queueName: [Int] = []
    var codeName: [Int] = []
    var siteOrigin: [Int] = []
    var kindName: [Int] = []
    let names: PerfettoNames
    /// Task flows: the flow out of an item to its task's next job, into it from the previous (0: none).
    var taskFlowOut: [UInt64] = []
    var taskFlowIn: [UInt64] = []
    var itemSlices = 0
    var flows = 0

    init(input: ReportInput, out: any ByteSink, compress: Bool) {
        self.input = input
        stream = PerfettoPacketStream(out: out, compress: compress, strings: strings)
        times = PerfettoItemTimes(input)
        names = PerfettoNames(strings)
        queueName = input.queues.indices.map { strings.number(input.exportedQueueLabel($0)) }
        codeName = input.codes.map { strings.number($0.what.name) }
        siteOrigin = input.sites.map { site in site.from.map { strings.number(Self.origin($0)) } ?? -1 }
        kindName = ReportItemKind.allCases.map { strings.number($0.name) }
        linkTaskJobs()
    }

    /// "symbol (file:line)", or the symbol alone when the line is unknown.
    static func origin(_ location: ReportCodeLocation) -> String {
        location.file.isEmpty ? location.name : "\(location.name) (\(location.file):\(location.line))"
    }

    func uuid() -> UInt64 {
        defer { nextUUID += 1 }
        return nextUUID
    }

    private func linkTaskJobs() {
        guard !input.tasks.isEmpty else { return }
        let n = input.items.count
        taskFlowOut = [UInt64](repeating: 0, count: n)
        taskFlowIn = [UInt64](repeating: 0, count: n)
        // Item flows are 1...n; task flows follow.
        var next = UInt64(n) + 1
        for task in input.tasks {
            for (from, to) in zip(task.jobs, task.jobs.dropFirst())
            where times.started(from) && times.started(to) && taskFlowOut[from] == 0 && taskFlowIn[to] == 0 {
                taskFlowOut[from] = next
                taskFlowIn[to] = next
                next += 1
            }
        }
    }

    /// The slice name of item `i`: the code it ran when known, else its queue's label.
    func itemName(_ i: Int) -> Int {
        let site = times.site(i)
        if input.sites.indices.contains(site), codeName.indices.contains(input.sites[site].code) {
            return codeName[input.sites[site].code]
        }
        return queueNameOf(i)
    }

    func queueNameOf(_ i: Int) -> Int {
        let q = Int(input.items.queue[i])
        return queueName.indices.contains(q) ? queueName[q] : names.unknownQueue
    }
}

/// Names the export always uses, numbered once.
struct PerfettoNames {
    let enqueue, unknownQueue, queue, item, kind, wait, enqueuedAt, message, severity: Int

    init(_ strings: PerfettoStringsBox) {
        enqueue = strings.number("enqueue")
        unknownQueue = strings.number("unknown queue")
        queue = strings.number("queue")
        item = strings.number("item")
        kind = strings.number("kind")
        wait = strings.number("wait_ns")
        enqueuedAt = strings.number("enqueued_at")
        message = strings.number("message")
        severity = strings.number("severity")
    }
}

/// Items' times as the report draws them (ItemLayout's rules: an unfinished item runs to the
/// end of the trace, a never-started one is pending until then).
struct PerfettoItemTimes {
    let enqueue: [Int64]
    let start: [Int64]
    let end: [Int64]
    private let startedFlags: [Bool]
    private let sites: [Int32]

    init(_ input: ReportInput) {
        let items = input.items
        var traceEnd = input.meta.durationNs
        for i in 0..<items.count { traceEnd = max(traceEnd, items.enqueueNs[i], items.startNs[i], items.endNs[i]) }
        var enqueue = [Int64](repeating: 0, count: items.count)
        var start = enqueue, end = enqueue
        var started = [Bool](repeating: false, count: items.count)
        for i in 0..<items.count {
            (enqueue[i], start[i], end[i], _) = ItemLayout.effectiveTimes(items, i, traceEnd: traceEnd)
            started[i] = items.startNs[i] >= 0 && input.threads.indices.contains(Int(items.thread[i]))
        }
        (self.enqueue, self.start, self.end, startedFlags, sites) = (enqueue, start, end, started, items.site)
    }

    /// Whether item `i` ran on a known thread (it has a slice).
    func started(_ i: Int) -> Bool { startedFlags[i] }

    func site(_ i: Int) -> Int { i < sites.count ? Int(sites[i]) : -1 }
}
