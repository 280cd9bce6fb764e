// Chrome trace-event JSON ("JSON Array/Object Format") for Perfetto UI and chrome://tracing:
// process and thread names (M), one complete slice (X) per work item on the thread that ran
// it, a flow (s -> f) from each enqueue to the item's start, blocked intervals as slices,
// counters (C) for thread counts and queue backlogs, and annotations and findings as
// instant events (i). Timestamps are microseconds with nanosecond decimals.
import QTraceViewModel

struct ChromeTraceExporter {
    let input: ReportInput

    func write(to out: some ByteSink) throws {
        var writer = EventWriter(out: out)
        try writer.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"qtrace\",\"version\":"
            + JSONValue.quoted(input.meta.qtraceVersion) + ",\"command\":" + JSONValue.quoted(input.meta.commandLine)
            + "},\"traceEvents\":[\n")
        try writeMetadata(&writer)
        try writeItems(&writer)
        try writeBlocked(&writer)
        try writeCounters(&writer)
        try writeAnnotations(&writer)
        try writer.raw("\n]}\n")
        try writer.flush()
    }

    private var pid: String { String(input.meta.pid) }

    /// The pid of a thread's process (several in a merged report); the report's otherwise.
    private func pid(ofThread thread: Int) -> String {
        guard input.processes.count > 1, input.threads.indices.contains(thread),
              input.processes.indices.contains(input.threads[thread].process) else { return pid }
        return String(input.processes[input.threads[thread].process].pid)
    }

    private func tid(_ thread: Int) -> String { String(input.exportedTID(thread)) }

    private func queueLabel(_ q: Int) -> String { input.exportedQueueLabel(q) }

    private func writeMetadata(_ w: inout EventWriter) throws {
        if input.processes.count > 1 {
            for p in input.processes {
                try w.event("{\"ph\":\"M\",\"pid\":\(p.pid),\"name\":\"process_name\",\"args\":{\"name\":\(JSONValue.quoted(p.title))}}")
            }
        } else {
            try w.event("{\"ph\":\"M\",\"pid\":\(pid),\"name\":\"process_name\",\"args\":{\"name\":\(JSONValue.quoted(input.meta.title))}}")
        }
        for (i, t) in input.threads.enumerated() {
            let name = input.exportedThreadName(i)
            try w.event("{\"ph\":\"M\",\"pid\":\(pid(ofThread: i)),\"tid\":\(tid(i)),\"name\":\"thread_name\",\"args\":{\"name\":\(JSONValue.quoted(name))}}")
            let order = t.kind == .main ? 0 : i + 1
            try w.event("{\"ph\":\"M\",\"pid\":\(pid(ofThread: i)),\"tid\":\(tid(i)),\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":\(order)}}")
        }
    }

    private func writeItems(_ w: inout EventWriter) throws {
        let items = input.items
        for i in 0..<items.count {
            let thread = Int(items.thread[i])
            let start = items.startNs[i]
            guard start >= 0, input.threads.indices.contains(thread) else { continue }
            let end = items.endNs[i] >= start ? items.endNs[i] : max(start, input.meta.durationNs)
            let enqueue = items.enqueueNs[i]
            let label = JSONValue.quoted(queueLabel(Int(items.queue[i])))
            let kind = items.kind[i].name
            try w.event("{\"ph\":\"X\",\"pid\":\(pid(ofThread: thread)),\"tid\":\(tid(thread)),\"ts\":\(us(start)),\"dur\":\(us(end - start)),"
                + "\"name\":\(label),\"cat\":\"\(kind)\",\"args\":{\"item\":\(i),\"kind\":\"\(kind)\",\"queue\":\(label),"
                + "\"wait_us\":\(us(max(0, start - enqueue)))}}")
            let submitter = Int(items.submitterThread[i])
            if enqueue >= 0, input.threads.indices.contains(submitter) {
                try w.event("{\"ph\":\"s\",\"id\":\(i),\"pid\":\(pid(ofThread: submitter)),\"tid\":\(tid(submitter)),\"ts\":\(us(enqueue)),"
                    + "\"name\":\"enqueue\",\"cat\":\"flow\"}")
                try w.event("{\"ph\":\"f\",\"bp\":\"e\",\"id\":\(i),\"pid\":\(pid(ofThread: thread)),\"tid\":\(tid(thread)),\"ts\":\(us(start)),"
                    + "\"name\":\"enqueue\",\"cat\":\"flow\"}")
            }
        }
    }

    private func writeBlocked(_ w: inout EventWriter) throws {
        for b in input.blocked where input.threads.indices.contains(b.thread) {
            let name = JSONValue.quoted(b.exportedName)
            try w.event("{\"ph\":\"X\",\"pid\":\(pid(ofThread: b.thread)),\"tid\":\(tid(b.thread)),\"ts\":\(us(b.startNs)),"
                + "\"dur\":\(us(max(0, b.endNs - b.startNs))),\"name\":\(name),\"cat\":\"blocked\"}")
        }
    }

    private func writeCounters(_ w: inout EventWriter) throws {
        for series in input.counters {
            let name = JSONValue.quoted(series.name)
            // A process's own series goes on that process's track.
            let track = input.processes.indices.contains(series.process) ? String(input.processes[series.process].pid) : pid
            for (t, v) in zip(series.timesNs, series.values) {
                try w.event("{\"ph\":\"C\",\"pid\":\(track),\"ts\":\(us(t)),\"name\":\(name),\"args\":{\"value\":\(JSONValue.format(v))}}")
            }
        }
    }

    private func writeAnnotations(_ w: inout EventWriter) throws {
        for m in input.annotations.marks {
            try w.event("{\"ph\":\"i\",\"s\":\"p\",\"pid\":\(pid(ofThread: m.thread)),\"tid\":\(tid(m.thread)),\"ts\":\(us(m.timeNs)),"
                + "\"name\":\(JSONValue.quoted(m.name)),\"cat\":\"mark\"}")
        }
        for r in input.annotations.intervals {
            try w.event("{\"ph\":\"X\",\"pid\":\(pid(ofThread: r.thread)),\"tid\":\(tid(r.thread)),\"ts\":\(us(r.startNs)),"
                + "\"dur\":\(us(max(0, r.endNs - r.startNs))),\"name\":\(JSONValue.quoted(r.name)),\"cat\":\"interval\"}")
        }
        for f in input.findings {
            try w.event("{\"ph\":\"i\",\"s\":\"g\",\"pid\":\(pid),\"ts\":\(us(f.startNs)),\"name\":\(JSONValue.quoted(f.id)),"
                + "\"cat\":\"finding\",\"args\":{\"severity\":\"\(f.severity.rawValue)\",\"message\":\(JSONValue.quoted(f.message))}}")
        }
    }

    /// Nanoseconds as exact decimal microseconds.
    private func us(_ ns: Int64) -> String {
        let sign = ns < 0 ? "-" : ""
        let magnitude = ns.magnitude
        let fraction = magnitude % 1000
        if fraction == 0 { return sign + String(magnitude / 1000) }
        let digits = String(fraction)
        return sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    /// Separates events with commas and writes in large blocks.
    struct EventWriter {
        let out: any ByteSink
        var buffer = ""
        var first = true

        init(out: any ByteSink) { self.out = out }

        mutating func event(_ json: String) throws {
            if !first { buffer += ",\n" }
            first = false
            buffer += json
            if buffer.utf8.count > 1 << 20 { try flush() }
        }

        mutating func raw(_ text: String) throws { buffer += text }

        mutating func flush() throws {
            try out.write(buffer)
            buffer = ""
        }
    }
}
