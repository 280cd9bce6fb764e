// Turns a ReportInput into the report's data: a JSON header (small objects, strings, table
// layout) and a binary payload of columns (items, blocked intervals, source runs, counters,
// annotations, levels of detail). See docs/report-data.md.
import QTraceAnalysis
import QTraceViewModel

/// Deduplicated strings that binary columns refer to by index.
struct StringTable {
    private(set) var strings: [String] = []
    private var indexes: [String: Int] = [:]

    mutating func index(_ s: String) -> Int64 {
        if let i = indexes[s] { return Int64(i) }
        indexes[s] = strings.count
        strings.append(s)
        return Int64(strings.count - 1)
    }
}

struct EncodedReport {
    /// 2: queues, the queue tree, groups, stats rows, histograms, derived backlogs and strings
    /// moved from the header JSON into payload tables. 3: the items' `parent` as
    /// `keyedDelta` by queue (a `relref` before).
    static let formatVersion = 4

    var header: JSONValue
    /// The payload as one zlib stream (in pieces, in order), and its size uncompressed.
    var compressedPayload: [[UInt8]]
    var rawBytes: Int
    var itemCount: Int
}

struct ReportEncoder {
    /// Counter series longer than this are reduced to min/max/last per time bucket.
    static let maximumCounterPoints = 1 << 16

    /// A variable: the item columns are dropped as soon as they are written (see
    /// `releaseWrittenItemColumns`), which frees them when the encoder holds the only copy.
    var input: ReportInput
    let layout: ItemLayout
    /// The items' queue and thread by layout row (the items table's order), which the tracks
    /// and backlogs read after the item columns are gone: reading the items' own through
    /// `layout.order` is a cache miss a row, on every pass of every level of detail.
    var rowQueue: [Int32] = []
    var rowThread: [Int32] = []
    var payload = PayloadBuilder()
    var strings = StringTable()
    var lod: LevelsOfDetail
    /// The distinct bucket bounds of the histograms (one, usually): written once, not per queue.
    let histogramBounds: [[Double]]
    let histogramBoundsIndex: [[Double]: Int]

    init(_ input: consuming ReportInput) {
        // Columns the report never writes go first (16 bytes an item), and the layout takes
        // the items' times (24 bytes), sorting them in place.
        input.items.waitNs = []
        input.items.traceID = []
        let processEnds = ItemLayout.processEnds(of: input)
        layout = ItemLayout(taking: &input.items, traceEnd: max(0, input.meta.durationNs), processEnds: processEnds)
        lod = LevelsOfDetail(traceDurationNs: max(layout.traceEnd, input.meta.durationNs))
        var bounds: [[Double]] = [], index: [[Double]: Int] = [:]
        for h in input.histograms where index[h.boundsNs] == nil {
            index[h.boundsNs] = bounds.count
            bounds.append(h.boundsNs)
        }
        (histogramBounds, histogramBoundsIndex) = (bounds, index)
        self.input = consume input
    }

    /// Consumes `input`: its item columns are released as the encoding goes (a closure
    /// around the layout's phase would keep a copy of them).
    static func encode(_ input: consuming ReportInput) throws -> EncodedReport {
        let started = Phases.start()
        var encoder = ReportEncoder(consume input)
        Phases.end("report: item layout", started)
        return try Phases.time("report: encode and compress columns and levels of detail") { try encoder.encode() }
    }

    mutating func encode() throws -> EncodedReport {
        Phases.time("report: encode: items") { writeItems() }
        releaseWrittenItemColumns()
        let blockedTable = writeBlocked()
        writeSched()
        writeSources()
        writeAnnotations()
        writeTaskJobs()
        writeActorVisits()
        let counters = Phases.time("report: encode: blocked, sched, sources, tasks, counters") { writeCounters() }
        writeQueues()
        writeGroups()
        writeHistograms()
        let stats = input.stats.enumerated().map { statsTableJSON($0.element, index: $0.offset) }
        Phases.time("report: encode: item tracks' levels of detail") { addItemTracks() }
        addBlockedTracks(blockedTable)
        addSourceTracks()
        Phases.time("report: encode: levels of detail") { lod.write(to: &payload) }
        writeStrings()
        let header = headerJSON(counters: counters, stats: stats)
        let rawBytes = payload.count
        return EncodedReport(header: header, compressedPayload: try payload.compressed(), rawBytes: rawBytes,
                             itemCount: layout.order.count)
    }

    // MARK: Items

    private mutating func writeItems() {
        let items = input.items
        let layout = layout
        // Int32 rows, converted where read: a copy as [Int] would cost 8 bytes an item.
        let order = layout.order
        let n = order.count
        let rank = layout.rank
        /// The sorted row of input item `index`, or -1.
        func sortedRow(_ index: Int32) -> Int64 { index >= 0 && Int(index) < n ? Int64(rank[Int(index)]) : -1 }
        payload.beginTable("items", rows: n)
        payload.column("start", .deltaPlanes, as: .f64, layout.start)
        payload.column("run", .planes, as: .f64, (0..<n).lazy.map { layout.end[$0] - layout.start[$0] })
        payload.column("wait", .planes, as: .f64, (0..<n).lazy.map { layout.start[$0] - layout.enqueue[$0] })
        rowQueue = order.map { items.queue[Int($0)] }
        rowThread = order.map { items.thread[Int($0)] }
        payload.column("queue", .plus1, as: .i32, rowQueue.lazy.map { Int64($0) })
        payload.column("thread", .plus1, as: .i32, rowThread.lazy.map { Int64($0) })
        payload.column("submitter", .plus1, as: .i32, order.lazy.map { Int64(items.submitterThread[Int($0)]) })
        payload.column("kind", .u8, as: .u8, order.lazy.map { Int64(items.kind[Int($0)].rawValue) })
        payload.column("flags", .u8, as: .u8, layout.flags.lazy.map { Int64($0) })
        // Each parent's row, from the parent of the previous item of the same queue: those
        // follow each other where the rows between an item and its parent are as many as the
        // items pending then (random, and 37% of sf10's compressed payload as a `relref`).
        payload.keyedDeltaColumn("parent", key: "queue", keys: rowQueue, as: .i32,
                                 order.lazy.map { sortedRow(items.parent[Int($0)]) })
        payload.column("behind", .relref, as: .i32, order.lazy.map { sortedRow(items.waitedBehind[Int($0)]) })
        payload.column("group", .plus1, as: .i32, order.lazy.map { Int64(items.group[Int($0)]) })
        payload.column("source", .plus1, as: .i32, order.lazy.map { Int64(items.source[Int($0)]) })
        payload.column("depth", .u8, as: .u8, layout.depth.lazy.map { Int64($0) })
        payload.column("slot", .u8, as: .u8, layout.runSlot.lazy.map { Int64($0) })
        payload.column("pendingSlot", .u8, as: .u8, layout.pendingSlot.lazy.map { Int64($0) })
        // The analysis' time blocked inside each item (0 where a hand-built input has no column).
        // Whether the columns are whole is asked once, not per item: `[safe:]` is a generic
        // call from this module (0.45 s of sf10's 20M items, with its value witnesses).
        let insideNs = items.blockedInsideNs, insideCauses = items.blockedInsideCauses
        let hasInside = insideNs.count == items.count, hasCauses = insideCauses.count == items.count
        payload.column("blockedInside", .uvarint, as: .f64, order.lazy.map { hasInside ? max(0, insideNs[Int($0)]) : 0 })
        payload.column("blockedCauses", .u8, as: .u8, order.lazy.map { hasCauses ? Int64(insideCauses[Int($0)]) : 0 })
        if order.enumerated().contains(where: { $0.offset != Int($0.element) }) {
            payload.column("inputIndex", .delta, as: .i32, order.lazy.map { Int64($0) })
        }
        writeItemSchedColumns(order: order)
        writeItemSites(order: order)
    }

    /// After the items table, the item columns are freed (42 bytes an item: 800 MiB at 20M
    /// items): what the rest reads of them is in `rowQueue` and `rowThread`.
    private mutating func releaseWrittenItemColumns() {
        input.items = ReportItems()
    }

    /// The sorted row of input item `index`, or -1.
    private func sortedRow(_ index: Int32) -> Int64 {
        index >= 0 && Int(index) < layout.rank.count ? Int64(layout.rank[Int(index)]) : -1
    }

    private func sortedRow(_ index: Int) -> Int64 { sortedRow(Int32(clamping: index)) }

    private mutating func addItemTracks() {
        let (threads, queues) = (rowThread, rowQueue)
        addRunTracks(kind: "threadRun", lanes: input.threads.count, slot: layout.depth) { threads[$0] }
        addRunTracks(kind: "queueRun", lanes: input.queues.count, slot: layout.runSlot) { queues[$0] }
        // Pending items need no levels: zoomed out, the queue's backlog (derived from the
        // same enqueue and start times) shows them.
    }

    /// The running boxes of every lane (a thread's or a queue's), one lane at a time: the rows
    /// are first grouped by lane (a counting sort, 4 bytes a row, each lane's in row order), and
    /// each lane's boxes are read from the layout in place (LaneBoxes), rather than copied for
    /// every lane (21 bytes a row each, plus their arrays' growth: a gigabyte on a 20M-item
    /// trace) or for one (a busy thread's lane holds 10M boxes).
    private mutating func addRunTracks(kind: String, lanes: Int, slot: [UInt8], lane: (Int) -> Int32) {
        let flags = layout.flags
        func laneOf(_ row: Int) -> Int {
            let l = Int(lane(row))
            return flags[row] & ItemFlags.neverStarted == 0 && l >= 0 && l < lanes ? l : -1
        }
        let grouped = Self.rowsByLane(rows: layout.order.count, lanes: lanes, laneOf: laneOf)
        for l in 0..<lanes {
            let rows = grouped.rows[grouped.starts[l]..<grouped.starts[l + 1]]
            lod.addTrack(kind: kind, object: l, boxes: LaneBoxes(rows: rows, layout: layout, slot: slot, colors: rowQueue))
        }
    }

    /// Rows grouped by lane, each lane's in row order; lane l's are `rows[starts[l]..<starts[l + 1]]`.
    /// Rows whose lane is -1 are left out.
    static func rowsByLane(rows n: Int, lanes: Int, laneOf: (Int) -> Int) -> (rows: [Int32], starts: [Int]) {
        var starts = [Int](repeating: 0, count: lanes + 1)
        for row in 0..<n {
            let l = laneOf(row)
            if l >= 0 { starts[l + 1] += 1 }
        }
        for l in 0..<lanes { starts[l + 1] += starts[l] }
        var next = starts
        var rows = [Int32](repeating: 0, count: starts[lanes])
        for row in 0..<n {
            let l = laneOf(row)
            guard l >= 0 else { continue }
            rows[next[l]] = Int32(row)
            next[l] += 1
        }
        return (rows, starts)
    }

    // MARK: Blocked intervals

    /// Blocked intervals sorted by start (the order of the table).
    private mutating func writeBlocked() -> [ReportBlockedInterval] {
        let blocked = input.blocked.sorted { $0.startNs < $1.startNs }
        payload.beginTable("blocked", rows: blocked.count)
        payload.column("thread", .plus1, as: .i32, blocked.map { Int64($0.thread) })
        payload.column("start", .delta, as: .f64, blocked.map { $0.startNs })
        payload.column("duration", .uvarint, as: .f64, blocked.map { max(0, $0.endNs - $0.startNs) })
        payload.column("cause", .u8, as: .u8, blocked.map { Int64($0.cause.rawValue) })
        var labels: [Int64] = []
        labels.reserveCapacity(blocked.count)
        for b in blocked { labels.append(b.objectLabel.isEmpty ? -1 : strings.index(b.objectLabel)) }
        payload.column("label", .plus1, as: .i32, labels)
        payload.column("item", .plus1, as: .i32, blocked.map { sortedRow($0.item) })
        if blocked.contains(where: { $0.site >= 0 }) {
            payload.column("site", .plus1, as: .i32, blocked.map { Int64($0.site) })
        }
        return blocked
    }

    private mutating func addBlockedTracks(_ blocked: [ReportBlockedInterval]) {
        var perThread = [TrackBoxes](repeating: TrackBoxes(), count: input.threads.count)
        for b in blocked where perThread.indices.contains(b.thread) {
            perThread[b.thread].append(begin: b.startNs, end: b.endNs, row: 0, color: Int32(b.cause.rawValue))
        }
        for (t, boxes) in perThread.enumerated() { lod.addTrack(kind: "threadBlocked", object: t, boxes: boxes) }
    }

    // MARK: Sources

    private mutating func writeSources() {
        var source: [Int64] = [], start: [Int64] = [], duration: [Int64] = [], data: [Int64] = []
        var eventSource: [Int64] = [], eventTime: [Int64] = []
        for s in input.sources {
            for run in s.handlerRuns.sorted(by: { $0.startNs < $1.startNs }) {
                source.append(Int64(s.index))
                start.append(run.startNs)
                duration.append(max(0, run.endNs - run.startNs))
                data.append(run.data)
            }
            for t in s.events.sorted() {
                eventSource.append(Int64(s.index))
                eventTime.append(t)
            }
        }
        payload.beginTable("sourceRuns", rows: source.count)
        payload.column("source", .uvarint, as: .i32, source)
        payload.column("start", .delta, as: .f64, start)
        payload.column("duration", .uvarint, as: .f64, duration)
        payload.column("data", .svarint, as: .f64, data)
        payload.beginTable("sourceEvents", rows: eventSource.count)
        payload.column("source", .uvarint, as: .i32, eventSource)
        payload.column("time", .delta, as: .f64, eventTime)
    }

    private mutating func addSourceTracks() {
        for s in input.sources {
            var boxes = TrackBoxes()
            for run in s.handlerRuns.sorted(by: { $0.startNs < $1.startNs }) {
                boxes.append(begin: run.startNs, end: run.endNs, row: 0, color: Int32(s.queueIndex))
            }
            lod.addTrack(kind: "sourceRun", object: s.index, boxes: boxes)
        }
    }

    // MARK: Annotations

    private mutating func writeAnnotations() {
        let marks = input.annotations.marks.sorted { $0.timeNs < $1.timeNs }
        payload.beginTable("marks", rows: marks.count)
        payload.column("time", .delta, as: .f64, marks.map { $0.timeNs })
        payload.column("thread", .plus1, as: .i32, marks.map { Int64($0.thread) })
        var names: [Int64] = []
        for m in marks { names.append(strings.index(m.name)) }
        payload.column("name", .uvarint, as: .i32, names)

        let intervals = input.annotations.intervals.sorted { $0.startNs < $1.startNs }
        payload.beginTable("intervals", rows: intervals.count)
        payload.column("start", .delta, as: .f64, intervals.map { $0.startNs })
        payload.column("duration", .uvarint, as: .f64, intervals.map { max(0, $0.endNs - $0.startNs) })
        payload.column("thread", .plus1, as: .i32, intervals.map { Int64($0.thread) })
        names = []
        for m in intervals { names.append(strings.index(m.name)) }
        payload.column("name", .uvarint, as: .i32, names)
    }

    // MARK: Counters

    /// Writes one table per counter series and returns their header entries; backlogs the
    /// viewer can derive go to the `derivedBacklogs` table instead.
    private mutating func writeCounters() -> [JSONValue] {
        var out: [JSONValue] = []
        var derived: [Int] = []
        let rows: (rows: [Int32], starts: [Int]) = input.counters.contains { $0.kind == .backlog } ? rowsByQueue() : ([], [0])
        func rowsOf(_ q: Int) -> ArraySlice<Int32> { rows.rows[rows.starts[q]..<rows.starts[q + 1]] }
        for (k, series) in input.counters.enumerated() {
            if series.kind == .backlog, input.queues.indices.contains(series.queueIndex),
               CounterSteps.normalized(series.timesNs, series.values) == derivedBacklog(rowsOf(series.queueIndex))
            {
                // The viewer recomputes it from the items: no bytes needed but its queue's index.
                derived.append(series.queueIndex)
                continue
            }
            let table = "counter\(k)"
            let steps = CounterSteps(series, maximumPoints: ReportEncoder.maximumCounterPoints,
                                     traceEnd: layout.traceEnd)
            payload.beginTable(table, rows: steps.time.count)
            payload.column("time", .deltaPlanes, as: .f64, steps.time)
            if steps.integral {
                payload.column("value", .delta, as: .f64, steps.last.map { Int64($0) })
                if steps.bucketNs > 0 {
                    payload.column("min", .delta, as: .f64, steps.min.map { Int64($0) })
                    payload.column("max", .delta, as: .f64, steps.max.map { Int64($0) })
                }
            } else {
                payload.doubleColumn("value", steps.last)
                if steps.bucketNs > 0 {
                    payload.doubleColumn("min", steps.min)
                    payload.doubleColumn("max", steps.max)
                }
            }
            var fields: [(String, JSONValue)] = [
                ("name", .string(series.name)), ("kind", .string(series.kind.rawValue)),
                ("queue", .int(series.queueIndex)), ("table", .string(table)),
                ("bucketNs", .int(steps.bucketNs)), ("points", .int(series.timesNs.count)),
            ]
            if series.process >= 0 { fields.append(("process", .int(series.process))) }
            out.append(.object(fields))
        }
        writeDerivedBacklogs(derived)
        return out
    }

    /// The layout rows of each queue's items, in one pass (not one pass per queue).
    private func rowsByQueue() -> (rows: [Int32], starts: [Int]) {
        let (queues, rowQueue) = (input.queues.count, rowQueue)
        return Self.rowsByLane(rows: rowQueue.count, lanes: queues) { row in
            let queue = Int(rowQueue[row])
            return queue < queues ? queue : -1
        }
    }

    /// A queue's backlog as its items' rows give it: +1 at each enqueue, -1 at each start,
    /// one point per time (the value after all its changes), none that repeats the value before.
    /// The rows are in start order, so only the enqueue times need sorting (Int64s, not
    /// (time, change) pairs by a closure), and the two sorted lists are merged.
    private func derivedBacklog(_ rows: ArraySlice<Int32>) -> CounterSteps.Normalized {
        let (enqueue, start, flags) = (layout.enqueue, layout.start, layout.flags)
        var enqueues = rows.map { enqueue[Int($0)] }
        enqueues.sort()
        let starts = rows.lazy.filter { flags[Int($0)] & ItemFlags.neverStarted == 0 }.map { start[Int($0)] }
        var out = CounterSteps.Normalized()
        var (value, previous): (Int64, Int64) = (0, 0)
        var e = 0, s = starts.startIndex
        while e < enqueues.count || s < starts.endIndex {
            let time = Swift.min(e < enqueues.count ? enqueues[e] : .max, s < starts.endIndex ? starts[s] : .max)
            while e < enqueues.count, enqueues[e] == time { (value, e) = (value + 1, e + 1) }
            while s < starts.endIndex, starts[s] == time { (value, s) = (value - 1, starts.index(after: s)) }
            guard value != previous else { continue }
            out.times.append(time)
            out.values.append(Double(value))
            previous = value
        }
        return out
    }

    // MARK: Header

    private func headerJSON(counters: [JSONValue], stats: [JSONValue]) -> JSONValue {
        let m = input.meta
        return .object([
            ("format", .string("qtrace-report")),
            ("version", .int(EncodedReport.formatVersion)),
            ("meta", .object([
                ("title", .string(m.title)), ("commandLine", .string(m.commandLine)), ("pid", .int(m.pid)),
                ("ncpu", .int(m.ncpu)), ("durationNs", .int(max(m.durationNs, layout.traceEnd))),
                ("droppedEvents", .int(m.droppedEvents)), ("shimOverheadNs", .number(m.shimOverheadNsPerEvent)),
                ("qtraceVersion", .string(m.qtraceVersion)), ("peakThreadsAlive", .int(m.peakThreadsAlive)),
            // Only when said: reports of traces without drops or lies stay as they were.
            ] + (m.dropReason.isEmpty ? [] : [("dropReason", .string(m.dropReason))])
              + (m.invalidEvents > 0 ? [("invalidEvents", .int(m.invalidEvents))] : [])
              + (m.flightRecorder.isEmpty ? [] : [("flightRecorder", .string(m.flightRecorder))]))),
            ("processes", .array(input.processes.map { p in
                .object([
                    ("pid", .int(p.pid)), ("executable", .string(p.executable)), ("commandLine", .string(p.commandLine)),
                    ("host", .string(p.host)), ("title", .string(p.title)), ("realtimeStartNs", .int(p.realtimeStartNs)),
                    ("offset", .int(p.offsetNs)), ("durationNs", .int(p.durationNs)), ("droppedEvents", .int(p.droppedEvents)),
                    ("arguments", .string(p.arguments)), ("items", .int(p.items)), ("threads", .int(p.threads)),
                    ("peakThreadsAlive", .int(p.peakThreadsAlive)), ("busy", .int(p.busyNs)),
                    ("busiestQueue", .int(p.busiestQueue)), ("findings", .int(p.findings)),
                ])
            })),
            ("itemKinds", .array(ReportItemKind.allCases.map { .string($0.name) })),
            ("blockCauses", .array(ReportBlockCause.allCases.map { .string($0.name) })),
            ("schedStates", .array(input.sched == nil ? [] : ReportSchedState.allCases.map { .string($0.name) })),
            ("rows", .object([
                ("thread", .int(Rows.thread)), ("queueRunning", .int(Rows.queueRunning)),
                ("queuePending", .int(Rows.queuePending)),
            ])),
            ("threads", .array(input.threads.map { t in
                .object([
                    ("tid", .int(t.tid)), ("name", .string(t.name)), ("kind", .string(t.kind.rawValue)),
                    ("start", .int(t.startNs)), ("end", .int(t.endNs)), ("process", .int(t.process)),
                    ("items", .int(t.items)), ("busy", .int(t.busyNs)), ("blocked", .int(t.blockedNs)),
                ])
            })),
            ("threadOrder", .ints(input.threadLaneOrder())),
            ("sources", .array(input.sources.map { s in
                .object([
                    ("label", .string(s.label)), ("type", .string(s.type)), ("queue", .int(s.queueIndex)),
                    ("cancel", .int(s.cancelNs)), ("runs", .int(s.handlerRuns.count)),
                    ("suspended", .array(s.suspended.map { .array([.int($0.startNs), .int($0.endNs)]) })),
                ])
            })),
            ("counters", .array(counters)),
            ("stats", .array(stats)),
            ("histogramBounds", .array(histogramBounds.map { .array($0.map { .number($0) }) })),
            ("findings", .array(input.findings.map { f in
                .object([
                    ("id", .string(f.id)), ("severity", .string(f.severity.rawValue)), ("message", .string(f.message)),
                    ("start", .int(f.startNs)), ("end", .int(f.endNs)), ("queues", .ints(f.queues)),
                    ("threads", .ints(f.threads)), ("items", .array(f.items.map { .int(sortedRow($0)) })),
                    ("sites", .ints(f.sites)), ("process", .int(f.process)),
                    ("count", .int(Int64(f.count))), ("processCount", .int(Int64(f.processCount))),
                ] + (f.stack.isEmpty ? [] : [("stack", .array(f.stack.map { .string($0) }))]))
            })),
            ("codes", .array(input.codes.map(codeJSON))),
            ("sites", .array(input.sites.map(siteJSON))),
            ("tasks", .array(input.tasks.map(taskJSON))),
            ("actors", .array(input.actors.map(actorJSON))),
            ("lod", lod.headerJSON),
            ("tables", payload.tablesJSON),
        ] + cpuFlamesHeader())
    }
}

extension CounterSteps {
    struct Normalized: Equatable {
        var times: [Int64] = []
        var values: [Double] = []
    }

    /// The same step function with one point per time (the last) and no point that repeats
    /// the value before it (the value before the first point is 0).
    static func normalized(_ times: [Int64], _ values: [Double]) -> Normalized {
        var collapsed = Normalized()
        for (t, v) in zip(times, values) {
            if collapsed.times.last == t {
                collapsed.values[collapsed.values.count - 1] = v
            } else {
                collapsed.times.append(t)
                collapsed.values.append(v)
            }
        }
        var out = Normalized()
        var previous = 0.0
        for (t, v) in zip(collapsed.times, collapsed.values) where v != previous {
            out.times.append(t)
            out.values.append(v)
            previous = v
        }
        return out
    }
}

/// A counter series as steps, reduced to one point per bucket (with the bucket's minimum and
/// maximum) when it has too many points to be worth their bytes.
struct CounterSteps {
    var time: [Int64] = []
    var last: [Double] = []
    var min: [Double] = []
    var max: [Double] = []
    /// 0 when the points are the original ones.
    var bucketNs: Int64 = 0
    var integral = true

    init(_ series: ReportCounterSeries, maximumPoints: Int, traceEnd: Int64) {
        let n = Swift.min(series.timesNs.count, series.values.count)
        integral = series.values.prefix(n).allSatisfy { $0 == $0.rounded() && abs($0) < 9e15 }
        if n <= maximumPoints {
            time = Array(series.timesNs.prefix(n))
            last = Array(series.values.prefix(n))
            return
        }
        var bucket: Int64 = 1
        while traceEnd / bucket > Int64(maximumPoints) { bucket <<= 1 }
        bucketNs = bucket
        var previous = series.values[0]
        for i in 0..<n {
            let b = series.timesNs[i] / bucket * bucket
            let v = series.values[i]
            if let t = time.last, t == b {
                last[last.count - 1] = v
                min[min.count - 1] = Swift.min(min[min.count - 1], v)
                max[max.count - 1] = Swift.max(max[max.count - 1], v)
            } else {
                // The bucket starts with the value held before its first point.
                time.append(b)
                last.append(v)
                min.append(Swift.min(previous, v))
                max.append(Swift.max(previous, v))
            }
            previous = v
        }
    }
}

/// One lane's running boxes, read from the item layout: its rows (sorted by start), their
/// times and slots, colored by their items' queues.
struct LaneBoxes: TrackBoxSource {
    let rows: ArraySlice<Int32>
    let layout: ItemLayout
    let slot: [UInt8]
    /// The items' queues, by layout row.
    let colors: [Int32]

    var count: Int { rows.count }

    func box(_ i: Int) -> (begin: Int64, end: Int64, row: UInt8, color: Int32) {
        let row = Int(rows[rows.startIndex + i])
        return (layout.start[row], layout.end[row], slot[row], colors[row])
    }
}
