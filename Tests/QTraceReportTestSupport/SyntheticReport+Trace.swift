// The simulation's schedule as the shim records it: threads, queues, ENQUEUE / START / END,
// semaphore waits inside items, group fan-outs and notifies, a timer source suspended for a
// while and a data source never resumed, marks and intervals, and (SyntheticReport+Code) code
// sites and Swift tasks. The records go into a trace file and come back through the trace
// reader, the model builder and the analysis, as a recorded program's do: every figure of a
// synthetic report (counters, Stats tables, histograms, findings) is the analysis'.
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceViewModel

/// Events in the order written, sorted by time at the end (stable: a thread's events at the
/// same instant keep their order).
public struct EventList {
    public private(set) var events: [Event] = []

    public init() {}

    public mutating func add(_ type: EventType, _ time: Int64, tid: Int32, arg: UInt32 = 0, flags: UInt8 = 0,
                      a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0, string: String? = nil) {
        events.append(Event(type: type, time: UInt64(max(0, time)), tid: tid, arg: arg, flags: flags,
                            a: a, b: b, c: c, d: d, string: string))
    }

    public var sorted: [Event] {
        events.indices.sorted { (events[$0].time, $0) < (events[$1].time, $1) }.map { events[$0] }
    }
}

/// Addresses of the simulated program's objects, as its records name them.
public enum SyntheticAddress {
    public static let mainQueue: UInt64 = 0x1000
    static func queue(_ q: Int) -> UInt64 { q == 0 ? mainQueue : 0x10_0000 + UInt64(q) * 0x100 }
    static func group(_ g: Int) -> UInt64 { 0x20_0000 + UInt64(g) * 0x10 }
    static func semaphore(_ s: Int) -> UInt64 { 0x30_0000 + UInt64(s) * 0x10 }
    static let timerSource: UInt64 = 0x40_0000
    static let eventsSource: UInt64 = 0x40_0100
    /// TraceWriter's CLOCK_MONOTONIC at time 0: dispatch times are on that clock.
    static let initMonoNs: Int64 = 1_000_000_000
}

extension SyntheticReport {
    /// What the shim's trace file of `events` (in time order) makes: the report input of its
    /// analysis, as `qtrace report` builds it (trace reader, model, symbols, statistics).
    public static func analysed(_ events: [Event], pid: Int32 = 4242, ncpu: Int = 2, mainTid: Int32,
                                mainQueue: UInt64 = SyntheticAddress.mainQueue, commandLine: String = "./synthetic",
                                symbols: [UInt64: CodeLocation] = [:]) -> ReportInput {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("synthetic-\(UUID().uuidString).qtrace").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let writer = try TraceWriter(path: path, pid: pid, ncpu: ncpu, mainTid: mainTid)
            writer.header.mainQueue = mainQueue
            writer.header.shimOverheadNs = 31
            writer.header.commandLine = commandLine
            let program = commandLine.split(separator: " ").first?.split(separator: "/").last.map(String.init) ?? ""
            writer.header.executablePath = "/opt/synthetic/" + program
            try writer.append(contentsOf: events)
            try writer.finish()
            let file = try TraceFile(path: path)
            var model = Analysis.buildModel(file: file)
            if !symbols.isEmpty { model.applySymbols(symbols) }
            return ReportInput(analysis: AnalysisResult(model: model), header: file.header, qtraceVersion: "0.1.0")
        } catch {
            preconditionFailure("synthetic trace: \(error)")
        }
    }
}

extension Simulation {
    /// The schedule recorded, read back and analysed; the number of events read.
    mutating func analysedInput() -> (input: ReportInput, events: Int) {
        let events = traceEvents(end: traceEnd())
        var input = SyntheticReport.analysed(
            events, ncpu: ncpu, mainTid: mainTid, commandLine: "./synthetic --items \(itemCount) --workers \(maxWorkers)",
            symbols: codeIdentity ? SyntheticCodes.locations(hostile: hostile) : [:])
        // The title is the program's name; a hostile one must reach the page as text.
        input.meta.title = hostile ? "synthetic " + SyntheticReport.hostileLabels[1] : "synthetic workload"
        return (input, events.count)
    }

    func traceEnd() -> Int64 {
        var end: Int64 = 0
        for i in 0..<items.count { end = max(end, items.endNs[i]) }
        return end + 50_000
    }

    var mainTid: Int32 { Int32(threads[0].tid) }
    func tid(_ thread: Int) -> Int32 { Int32(threads[thread].tid) }
    var timerQueue: Int { queues.count > 6 ? 6 : 1 }

    func traceEvents(end: Int64) -> [Event] {
        var list = EventList()
        addThreads(&list)
        addQueues(&list)
        addSources(&list, end: end)
        let plan = codeIdentity ? CodePlan(self) : nil
        if let plan { plan.addSites(&list, tid: mainTid) }
        addItems(&list, plan: plan)
        addAnnotations(&list, end: end)
        return list.sorted
    }

    func addThreads(_ list: inout EventList) {
        let retired = Set(threads.indices.filter { t in threads[t].kind == .worker && !workers.contains { $0.thread == t } })
        for t in threads.indices {
            let thread = threads[t]
            let kind: UInt32 = thread.kind == .main ? 0 : thread.kind == .worker ? 1 : 2
            list.add(.threadStart, thread.startNs, tid: tid(t), arg: kind, a: UInt64(mainTid))
            list.add(.threadName, thread.startNs, tid: tid(t), string: thread.name)
            if retired.contains(t) { list.add(.threadExit, thread.endNs, tid: tid(t)) }
        }
    }

    func addQueues(_ list: inout EventList) {
        for queue in queues {
            let qos = UInt32(QoSClass.allCases.first { $0.name == queue.qosName }?.rawValue ?? 0)
            let address = SyntheticAddress.queue(queue.index)
            switch queue.kind {
            case .main: list.add(.queueInfo, 0, tid: mainTid, arg: 1, a: address, string: queue.label)
            case .global: list.add(.queueInfo, 0, tid: mainTid, arg: 2 | qos << 8, a: address, string: queue.label)
            case .serial, .concurrent:
                let attributes = (queue.kind == .concurrent ? 1 : 0) | qos << 8 | 128 << 16
                list.add(.queueCreate, 0, tid: mainTid, arg: attributes, a: address,
                         b: SyntheticAddress.queue(queue.targetIndex), string: queue.label)
            }
        }
        for s in 0..<7 { list.add(.semCreate, 0, tid: mainTid, a: SyntheticAddress.semaphore(s)) }
    }

    /// A 1 ms timer on `timerQueue`, suspended for `suspendedWindow` (its next run reports the
    /// fires it missed), and a data source suspended from a tenth of the run on, never resumed.
    func addSources(_ list: inout EventList, end: Int64) {
        let timer = SyntheticAddress.timerSource, events = SyntheticAddress.eventsSource
        list.add(.sourceCreate, 0, tid: mainTid, arg: SourceType.timer.rawValue, a: timer,
                 d: SyntheticAddress.queue(timerQueue))
        list.add(.sourceSetTimer, 0, tid: mainTid, a: timer, b: UInt64(SyntheticAddress.initMonoNs + 1_000_000), c: 1_000_000)
        list.add(.sourceSetHandler, 0, tid: mainTid, a: timer, b: UInt64(codeIdentity ? CodePlan.timerHandlerSite(self) : 0))
        list.add(.resume, 0, tid: mainTid, a: timer)
        list.add(.suspend, suspendedWindow.lowerBound, tid: mainTid, a: timer)
        list.add(.resume, suspendedWindow.upperBound, tid: mainTid, a: timer)
        list.add(.sourceCreate, 0, tid: mainTid, arg: SourceType.dataAdd.rawValue, a: events, d: SyntheticAddress.queue(2))
        list.add(.sourceSetHandler, 0, tid: mainTid, a: events)
        list.add(.resume, 0, tid: mainTid, a: events)
        list.add(.suspend, end / 10, tid: mainTid, a: events)
    }

    /// Each item's records; a sync item run by a main-queue item is written inside it.
    func addItems(_ list: inout EventList, plan: CodePlan?) {
        var waitsOfItem: [Int: [ReportBlockedInterval]] = [:]
        for b in blocked where b.cause == .semaphore { waitsOfItem[b.item, default: []].append(b) }
        let ids = itemIDs()
        for g in groups.indices {
            list.add(.groupCreate, groups[g].firstEnterNs, tid: mainTid, a: SyntheticAddress.group(g))
        }
        var i = 0
        while i < items.count {
            let nestedSync = i + 1 < items.count && items.kind[i + 1] == .sync && items.parent[i + 1] == Int32(i)
            addItem(i, &list, id: ids[i], waits: waitsOfItem[i] ?? [], plan: plan,
                    inside: nestedSync ? { addItem(i + 1, &$0, id: ids[i + 1], waits: [], plan: plan) } : nil)
            i += nestedSync ? 2 : 1
        }
    }

    /// Item ids in enqueue order, as a thread's ids increase (the model checks it).
    func itemIDs() -> [UInt64] {
        let order = (0..<items.count).sorted { (items.enqueueNs[$0], $0) < (items.enqueueNs[$1], $1) }
        var ids = [UInt64](repeating: 0, count: items.count)
        for (rank, i) in order.enumerated() { ids[i] = UInt64(rank + 1) }
        return ids
    }

    func addItem(_ i: Int, _ list: inout EventList, id: UInt64, waits: [ReportBlockedInterval], plan: CodePlan?,
                 inside: ((inout EventList) -> Void)? = nil) {
        let thread = tid(Int(items.thread[i]))
        let (start, end) = (items.startNs[i], items.endNs[i])
        if items.kind[i] == .sourceHandler {
            let timer = SyntheticAddress.timerSource
            list.add(.sourceHandlerBegin, start, tid: thread, a: timer, b: UInt64(timerData[i] ?? 1))
            list.add(.sourceHandlerEnd, end, tid: thread, a: timer)
            return
        }
        let kind = itemKind(i)
        let submitter = tid(Int(items.submitterThread[i]))
        var extra: UInt64 = 0
        if kind == .after { extra = UInt64(SyntheticAddress.initMonoNs + (afterDeadline[i] ?? items.enqueueNs[i])) }
        if kind == .groupAsync || kind == .groupNotify { extra = SyntheticAddress.group(Int(items.group[i])) }
        list.add(.enqueue, items.enqueueNs[i], tid: submitter, arg: kind.rawValue, a: id, b: SyntheticAddress.queue(Int(items.queue[i])),
                 c: extra, d: UInt64(plan?.site(ofItem: i) ?? 0))
        if let job = plan?.job(ofItem: i) { list.add(.job, items.enqueueNs[i], tid: submitter, arg: job.arg, a: id, b: job.b, c: job.c, d: job.d) }
        list.add(.start, start, tid: thread, arg: kind.rawValue, a: id)
        for wait in waits {
            let semaphore = SyntheticAddress.semaphore(i % 7)
            list.add(.semWaitBegin, wait.startNs, tid: thread, a: semaphore, b: ~0)
            list.add(.semWaitEnd, wait.endNs, tid: thread, arg: 2, a: semaphore, b: UInt64(plan?.semaphoreWaitSite ?? 0))
        }
        inside?(&list)
        list.add(.end, end, tid: thread, a: id)
    }

    func itemKind(_ i: Int) -> ItemKind {
        switch items.kind[i] {
        case .sync: .sync
        case .barrierAsync: .barrierAsync
        case .barrierSync: .barrierSync
        case .after: .after
        case .groupAsync: .groupAsync
        case .notify: .groupNotify
        case .asyncAndWait: .asyncAndWait
        case .async, .apply, .sourceHandler, .other: .async
        }
    }

    func addAnnotations(_ list: inout EventList, end: Int64) {
        for k in 1..<10 {
            let name = hostile && k == 5 ? SyntheticReport.hostileLabels[0] : "checkpoint \(k)"
            list.add(.mark, end * Int64(k) / 10, tid: mainTid, string: name)
        }
        let third = end / 3
        let intervals: [(Int64, Int64, String)] = [
            (0, third, "load"), (third / 4, third * 3 / 4, "parse"), (third, 2 * third, "process"), (2 * third, end, "save"),
        ]
        for (n, (from, to, name)) in intervals.enumerated() {
            list.add(.intervalBegin, from, tid: mainTid, a: UInt64(n + 1), string: name)
            list.add(.intervalEnd, to, tid: mainTid, a: UInt64(n + 1))
        }
    }

    /// When the timer source is suspended (see run()).
    var suspendedWindow: Range<Int64> {
        let from = Int64(meanGapNs * Double(itemCount) * 0.4)
        return from..<(from + 4_000_000)
    }
}
