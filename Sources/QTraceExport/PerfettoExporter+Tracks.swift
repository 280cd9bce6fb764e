// The tracks of the Perfetto export and the events on them. Each track's events are written
// on a sequence of their own in time order, so that every timestamp is a small delta.
import QTraceViewModel

extension PerfettoExportState {
    // MARK: Descriptors

    func writeDescriptors() throws {
        for process in input.exportedProcesses {
            let track = uuid()
            processTrack.append(track)
            let name = (process.executable.isEmpty ? process.title : process.executable)
                + (process.host.isEmpty ? "" : " @ \(process.host)")
            try stream.packet { p in
                p.message(PF.Packet.trackDescriptor) { d in
                    d.uint(PF.Track.uuid, track)
                    d.message(PF.Track.process) { pd in
                        pd.int(PF.Process.pid, Int64(process.pid))
                        if !process.commandLine.isEmpty { pd.string(PF.Process.cmdline, process.commandLine) }
                        pd.string(PF.Process.name, name)
                    }
                }
            }
        }
        for t in input.threads.indices {
            let track = uuid()
            threadTrack.append(track)
            let pid = Int64(input.exportedProcesses[input.exportedProcess(ofThread: t)].pid)
            try stream.packet { p in
                p.message(PF.Packet.trackDescriptor) { d in
                    d.uint(PF.Track.uuid, track)
                    d.message(PF.Track.thread) { td in
                        td.int(PF.Thread.pid, pid)
                        td.int(PF.Thread.tid, input.exportedTID(t))
                        td.string(PF.Thread.name, input.exportedThreadName(t))
                    }
                }
            }
        }
        for q in input.queues.indices {
            queueTrack.append(try childTrack(of: processTrackOf(process: input.queues[q].process),
                                             name: "queue " + input.queues[q].label))
        }
    }

    func processTrackOf(process: Int) -> UInt64? {
        processTrack.indices.contains(process) ? processTrack[process] : processTrack.first
    }

    /// A named track (under `parent` when given); `counter` makes it a counter track.
    func childTrack(of parent: UInt64?, name: String, counter: Bool = false) throws -> UInt64 {
        let track = uuid()
        try stream.packet { p in
            p.message(PF.Packet.trackDescriptor) { d in
                d.uint(PF.Track.uuid, track)
                if let parent { d.uint(PF.Track.parentUUID, parent) }
                d.string(PF.Track.name, name)
                if counter { d.message(PF.Track.counter) { _ in } }
            }
        }
        return track
    }

    // MARK: Threads: item slices, enqueue instants (flow starts) and marks

    func writeThreads() throws {
        let n = input.items.count
        let byThread = Buckets(count: input.threads.count, items: n) { i in times.started(i) ? Int(input.items.thread[i]) : -1 }
        for t in input.threads.indices {
            var slices = byThread.members(t)
            guard !slices.isEmpty else { continue }
            slices.sort { a, b in
                let (sa, sb) = (times.start[Int(a)], times.start[Int(b)])
                return sa != sb ? sa < sb : times.end[Int(a)] > times.end[Int(b)]
            }
            try writeItemSlices(slices, on: threadTrack[t])
        }
        let bySubmitter = Buckets(count: input.threads.count, items: n) { i in hasEnqueueFlow(i) ? Int(input.items.submitterThread[i]) : -1 }
        let marksByThread = Buckets(count: input.threads.count, items: input.annotations.marks.count) { m in
            input.annotations.marks[m].thread
        }
        for t in input.threads.indices {
            // Instants: an enqueue is item i (>= 0), a mark is -(m + 1).
            var instants: [(time: Int64, what: Int)] = bySubmitter.members(t).map { (input.items.enqueueNs[Int($0)], Int($0)) }
            instants += marksByThread.members(t).map { (input.annotations.marks[Int($0)].timeNs, -Int($0) - 1) }
            guard !instants.isEmpty else { continue }
            instants.sort { $0.time < $1.time }
            try writeInstants(instants, on: threadTrack[t])
        }
    }

    /// Whether item `i` gets a flow from its enqueue: not a source handler run (nothing
    /// enqueued it), and not an arrow from a thread to itself at the same instant (an item whose
    /// enqueue was not recorded starts where it was "enqueued").
    func hasEnqueueFlow(_ i: Int) -> Bool {
        let items = input.items
        let submitter = Int(items.submitterThread[i])
        guard times.started(i), items.kind[i] != .sourceHandler, items.enqueueNs[i] >= 0,
              input.threads.indices.contains(submitter) else { return false }
        return submitter != Int(items.thread[i]) || items.enqueueNs[i] != items.startNs[i]
    }

    /// Slices in start order (a parent before the items nested in it); each ends before the
    /// next one starts or, nested, before its parent ends.
    private func writeItemSlices(_ slices: [Int32], on track: UInt64) throws {
        var sequence = try stream.sequence(track: track)
        var open: [Int64] = []
        for row in slices {
            let i = Int(row)
            let start = times.start[i]
            while let top = open.last, top <= start {
                try end(&sequence, at: top)
                open.removeLast()
            }
            try stream.event(&sequence, at: start) { e, s in itemBegin(i, &e, &s) }
            itemSlices += 1
            open.append(min(times.end[i], open.last ?? .max))
        }
        while let top = open.popLast() { try end(&sequence, at: top) }
    }

    private func end(_ sequence: inout PerfettoSequence, at time: Int64) throws {
        try stream.event(&sequence, at: time) { e, _ in e.uint(PF.Event.type, PF.Event.sliceEnd) }
    }

    private func itemBegin(_ i: Int, _ e: inout ProtoBuffer, _ s: inout PerfettoSequence) {
        e.uint(PF.Event.type, PF.Event.sliceBegin)
        e.uint(PF.Event.nameIID, s.iid(.eventName, itemName(i)))
        annotate(&e, &s, names.queue, .string(queueNameOf(i)))
        annotate(&e, &s, names.item, .uint(input.items.traceID[safe: i] ?? 0))
        annotate(&e, &s, names.kind, .string(kindName[Int(input.items.kind[i].rawValue)]))
        if let wait = input.items.waitNs[safe: i], wait >= 0 { annotate(&e, &s, names.wait, .int(wait)) }
        let site = times.site(i)
        if siteOrigin.indices.contains(site), siteOrigin[site] >= 0 { annotate(&e, &s, names.enqueuedAt, .string(siteOrigin[site])) }
        if hasEnqueueFlow(i) { e.fixed64(PF.Event.terminatingFlowIDs, UInt64(i) + 1) }
        if !taskFlowIn.isEmpty, taskFlowIn[i] != 0 { e.fixed64(PF.Event.terminatingFlowIDs, taskFlowIn[i]) }
        if !taskFlowOut.isEmpty, taskFlowOut[i] != 0 {
            e.fixed64(PF.Event.flowIDs, taskFlowOut[i])
            flows += 1
        }
    }

    enum AnnotationValue {
        /// A string number (interned on the sequence).
        case string(Int)
        case uint(UInt64)
        case int(Int64)
    }

    /// One debug annotation named `name` (a string number).
    private func annotate(_ e: inout ProtoBuffer, _ s: inout PerfettoSequence, _ name: Int, _ value: AnnotationValue) {
        let nameIID = s.iid(.annotationName, name)
        let stringIID: UInt64 = if case .string(let number) = value { s.iid(.annotationString, number) } else { 0 }
        e.message(PF.Event.debugAnnotations) { a in
            a.uint(PF.Annotation.nameIID, nameIID)
            switch value {
            case .string: a.uint(PF.Annotation.stringValueIID, stringIID)
            case .uint(let v): a.uint(PF.Annotation.uintValue, v)
            case .int(let v): a.int(PF.Annotation.intValue, v)
            }
        }
    }

    private func writeInstants(_ instants: [(time: Int64, what: Int)], on track: UInt64) throws {
        var sequence = try stream.sequence(track: track)
        for instant in instants {
            let name = instant.what >= 0 ? names.enqueue : strings.number(input.annotations.marks[-instant.what - 1].name)
            try stream.event(&sequence, at: instant.time) { e, s in
                e.uint(PF.Event.type, PF.Event.instant)
                e.uint(PF.Event.nameIID, s.iid(.eventName, name))
                if instant.what >= 0 { e.fixed64(PF.Event.flowIDs, UInt64(instant.what) + 1) }
            }
            if instant.what >= 0 { flows += 1 }
        }
    }

    // MARK: Queues: running and pending items in lanes

    func writeQueues() throws {
        let byQueue = Buckets(count: input.queues.count, items: input.items.count) { Int(input.items.queue[$0]) }
        for q in input.queues.indices {
            let members = byQueue.members(q)
            guard !members.isEmpty else { continue }
            var running = members.filter { times.started(Int($0)) }
            running.sort { times.start[Int($0)] < times.start[Int($1)] }
            var pending = members.filter { times.enqueue[Int($0)] < times.start[Int($0)] }
            pending.sort { times.enqueue[Int($0)] < times.enqueue[Int($1)] }
            try writeLanes(Lanes.assign(running, start: times.start, end: times.end, maxLanes: PerfettoExporter.maxRunningLanes),
                           name: "running", under: queueTrack[q], start: times.start, end: times.end)
            try writeLanes(Lanes.assign(pending, start: times.enqueue, end: times.start, maxLanes: PerfettoExporter.maxPendingLanes),
                           name: "pending", under: queueTrack[q], start: times.enqueue, end: times.start)
        }
    }

    private func writeLanes(_ lanes: [[Int32]], name: String, under parent: UInt64,
                                     start: [Int64], end: [Int64]) throws {
        for (k, lane) in lanes.enumerated() {
            let track = try childTrack(of: parent, name: k == 0 ? name : "\(name) \(k + 1)")
            var sequence = try stream.sequence(track: track)
            for row in lane {
                let i = Int(row)
                try stream.event(&sequence, at: start[i]) { e, s in
                    e.uint(PF.Event.type, PF.Event.sliceBegin)
                    e.uint(PF.Event.nameIID, s.iid(.eventName, itemName(i)))
                    annotate(&e, &s, names.item, .uint(input.items.traceID[safe: i] ?? 0))
                }
                try self.end(&sequence, at: end[i])
            }
        }
    }

    // MARK: Counters, findings

    func writeCounters() throws {
        for series in input.counters {
            let parent = input.queues.indices.contains(series.queueIndex) ? queueTrack[series.queueIndex]
                : (processTrack.count == 1 ? processTrack[0] : nil)
            let track = try childTrack(of: parent, name: series.name, counter: true)
            var sequence = try stream.sequence(track: track)
            for (time, value) in zip(series.timesNs, series.values) {
                try stream.event(&sequence, at: time) { e, _ in
                    e.uint(PF.Event.type, PF.Event.counter)
                    if value == value.rounded(), abs(value) < 1e15 {
                        e.int(PF.Event.counterValue, Int64(value))
                    } else {
                        e.double(PF.Event.doubleCounterValue, value)
                    }
                }
            }
        }
    }

    /// The analysis' findings as instants on one track (per process in a merged file, the
    /// process's), named by rule, with the message as an arg.
    func writeFindings() throws {
        let byProcess = Buckets(count: processTrack.count, items: input.findings.count) { input.findings[$0].process }
        for p in processTrack.indices {
            var members = byProcess.members(p)
            guard !members.isEmpty else { continue }
            members.sort { input.findings[Int($0)].startNs < input.findings[Int($1)].startNs }
            let track = try childTrack(of: processTrack[p], name: "findings")
            var sequence = try stream.sequence(track: track)
            for row in members {
                let finding = input.findings[Int(row)]
                let (name, message) = (strings.number(finding.id), strings.number(finding.message))
                try stream.event(&sequence, at: finding.startNs) { e, s in
                    e.uint(PF.Event.type, PF.Event.instant)
                    e.uint(PF.Event.nameIID, s.iid(.eventName, name))
                    annotate(&e, &s, names.message, .string(message))
                    annotate(&e, &s, names.severity, .string(strings.number(finding.severity.rawValue)))
                }
            }
        }
    }

    // MARK: Spans under each thread: QTrace intervals, blocked time, --sched states

    func writeThreadSpans() throws {
        let intervals = input.annotations.intervals
        try writeSpans(title: "intervals", count: intervals.count, thread: { intervals[$0].thread },
                       start: intervals.map(\.startNs), end: intervals.map { max($0.startNs, $0.endNs) },
                       name: { strings.number(intervals[$0].name) })
        let blocked = input.blocked
        try writeSpans(title: "blocked", count: blocked.count, thread: { blocked[$0].thread },
                       start: blocked.map(\.startNs), end: blocked.map { max($0.startNs, $0.endNs) },
                       name: { strings.number(blocked[$0].exportedName) })
        guard let sched = input.sched?.intervals else { return }
        let stateName = ReportSchedState.allCases.map { strings.number($0.name) }
        try writeSpans(title: "state", count: sched.count, thread: { sched[$0].thread },
                       start: sched.map(\.startNs), end: sched.map { max($0.startNs, $0.endNs) },
                       name: { stateName[Int(sched[$0].state.rawValue)] })
    }

    /// Spans `0..<count` on child tracks of their threads titled `title` ("title 2", ... when
    /// some overlap, at most `maxSpanLanes`; spans beyond share one more track, `writeOverflow`);
    /// `name` gives a span's string number.
    private func writeSpans(title: String, count: Int, thread: (Int) -> Int, start: [Int64], end: [Int64],
                            name: (Int) -> Int) throws {
        let byThread = Buckets(count: input.threads.count, items: count, key: thread)
        for t in input.threads.indices {
            var members = byThread.members(t)
            guard !members.isEmpty else { continue }
            members.sort { start[Int($0)] < start[Int($1)] }
            let placed = Lanes.place(members, start: start, end: end, maxLanes: PerfettoExporter.maxSpanLanes)
            for (k, lane) in placed.lanes.enumerated() {
                let track = try childTrack(of: threadTrack[t], name: k == 0 ? title : "\(title) \(k + 1)")
                var sequence = try stream.sequence(track: track)
                for row in lane {
                    try spanBegin(&sequence, at: start[Int(row)], name: name(Int(row)))
                    try self.end(&sequence, at: end[Int(row)])
                }
            }
            guard !placed.overflow.isEmpty else { continue }
            try writeOverflow(placed.overflow, title: title, under: threadTrack[t], start: start, end: end, name: name)
        }
    }

    /// Spans that found no lane, on one track, named so that a reader knows their ends were
    /// cut where the next one starts (one track per lane cost the viewer a row each: 490,800
    /// open intervals made as many tracks).
    private func writeOverflow(_ spans: [Int32], title: String, under parent: UInt64, start: [Int64], end: [Int64],
                               name: (Int) -> Int) throws {
        let label = "\(title) (overflow: \(spans.count) more beyond \(PerfettoExporter.maxSpanLanes) lanes, cut at the next start)"
        var sequence = try stream.sequence(track: try childTrack(of: parent, name: label))
        for (row, cut) in zip(spans, Lanes.cutEnds(spans, start: start, end: end)) {
            try spanBegin(&sequence, at: start[Int(row)], name: name(Int(row)))
            try self.end(&sequence, at: cut)
        }
    }

    private func spanBegin(_ sequence: inout PerfettoSequence, at time: Int64, name: Int) throws {
        try stream.event(&sequence, at: time) { e, s in
            e.uint(PF.Event.type, PF.Event.sliceBegin)
            e.uint(PF.Event.nameIID, s.iid(.eventName, name))
        }
    }
}

/// Rows grouped by a key in 0..<count (rows whose key is out of range are left out), each
/// group in row order: a counting sort, no dictionary.
struct Buckets {
    private var offsets: [Int]
    private var rows: [Int32]

    init(count: Int, items: Int, key: (Int) -> Int) {
        var keys = [Int32](repeating: -1, count: items)
        offsets = [Int](repeating: 0, count: count + 1)
        for i in 0..<items {
            let k = key(i)
            guard k >= 0, k < count else { continue }
            keys[i] = Int32(k)
            offsets[k + 1] += 1
        }
        for k in 0..<count { offsets[k + 1] += offsets[k] }
        rows = [Int32](repeating: 0, count: offsets[count])
        var fill = offsets
        for i in 0..<items where keys[i] >= 0 {
            rows[fill[Int(keys[i])]] = Int32(i)
            fill[Int(keys[i])] += 1
        }
    }

    func members(_ key: Int) -> [Int32] { Array(rows[offsets[key]..<offsets[key + 1]]) }
}
