// Human-readable names and field descriptions of events (used by `qtrace dump` and by
// messages elsewhere). Field names follow docs/trace-format.md.

extension EventType {
    // `name`, the spec's name in lower case (`queue_create`), is generated from the record list.

    /// Looks a type up by its spec name, case-insensitively (`enqueue`, `QUEUE_CREATE`,
    /// `queue-create`), or by its Swift case name (`queueCreate`).
    public init?(name: String) {
        let wanted = name.lowercased().replacingDashes()
        guard let match = EventType.allCases.first(where: {
            $0.name == wanted || String(describing: $0).lowercased() == wanted
        }) else { return nil }
        self = match
    }
}

extension String {
    fileprivate func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}

extension ItemKind {
    /// The spec's name, e.g. `barrier_async`.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .async: "async"
        case .sync: "sync"
        case .barrierAsync: "barrier_async"
        case .barrierSync: "barrier_sync"
        case .after: "after"
        case .groupAsync: "group_async"
        case .groupNotify: "group_notify"
        case .asyncAndWait: "async_and_wait"
        case .barrierAsyncAndWait: "barrier_async_and_wait"
        case .workItemNotify: "workitem_notify"
        }
    }
}

extension EnqueueFlags {
    /// Set flags by name, comma-separated (`barrier,workItem`); empty when none.
    public var names: String {
        var names = Self.named.filter { contains($0.option) }.map(\.name)
        let unknown = subtracting(Self(Self.named.map(\.option))).rawValue
        if unknown != 0 { names.append("0x" + String(unknown, radix: 16)) }
        return names.joined(separator: ",")
    }
}

extension SourceType {
    public var name: String {
        switch self {
        case .other: "other"
        case .timer: "timer"
        case .read: "read"
        case .write: "write"
        case .signal: "signal"
        case .dataAdd: "data_add"
        case .dataOr: "data_or"
        case .dataReplace: "data_replace"
        case .interval: "interval"
        }
    }
}

extension Event {
    /// For records with a string: the recorder cut it at 4096 bytes (flags8 bit 7).
    public var isStringTruncated: Bool { type.hasString && flags & TraceLayout.stringTruncatedFlag != 0 }

    /// ENQUEUE / START: how the item was submitted (`arg`).
    public var itemKind: ItemKind { ItemKind(rawValue: arg) ?? .unknown }

    /// The code site id of an ENQUEUE, APPLY_BEGIN, SOURCE_SET_HANDLER or a wait end (format
    /// 1.4), nil when the record names none.
    public var siteID: UInt32? {
        guard type.hasOptionalSiteWord else { return nil }
        // The site word follows the payload words.
        let word = payloadWord(type.payloadWordCount)
        return word == 0 || word > UInt32.max ? nil : UInt32(word)
    }

    /// Payload word `index` (0 to 3): `a` to `d`.
    public func payloadWord(_ index: Int) -> UInt64 {
        switch index {
        case 0: a
        case 1: b
        case 2: c
        default: d
        }
    }

    /// ENQUEUE: `flags8` as options.
    public var enqueueFlags: EnqueueFlags { EnqueueFlags(rawValue: flags) }

    /// QUEUE_CREATE / QUEUE_INFO: QoS class in bits 8..15 of `arg`, or WORKITEM_CREATE's in bits
    /// 24..31.
    public var qosClass: QoSClass? {
        switch type {
        case .queueCreate, .queueInfo: QoSClass(rawValue: UInt8(truncatingIfNeeded: arg >> 8))
        case .workItemCreate: QoSClass(rawValue: UInt8(truncatingIfNeeded: arg >> 24))
        default: nil
        }
    }

    /// The fields after the type name, e.g. `id=12 queue=0x55d0 kind=async flags=barrier`.
    public var fieldsDescription: String {
        var formatter = EventFieldFormatter(self)
        return formatter.format()
    }
}

extension Event {
    /// `12.345us tid 1234 enqueue id=12 ...` (time in microseconds since trace start). Not
    /// `description`: test failures keep showing every raw field.
    public var summary: String {
        "\(TraceText.microseconds(time))us tid \(tid) \(type.name) \(fieldsDescription)"
    }
}

/// Formatting helpers for terminal output.
public enum TraceText {
    /// `ns` as microseconds with three decimals, computed exactly (no floating point).
    public static func microseconds(_ ns: UInt64) -> String {
        let fraction = String(ns % 1000)
        return "\(ns / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// `0x…` lower-case hex.
    public static func hex<T: BinaryInteger>(_ value: T) -> String { "0x" + String(value, radix: 16) }

    /// A quoted string safe for a terminal: quotes and backslashes escaped, control
    /// characters (C0, DEL, C1) and line/paragraph separators as `\n`, `\t` or `\u{..}`.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            if let escape = backslashEscape(scalar) { out += escape; continue }
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) {
                out += "\\u{" + String(value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The escapes terminal text and JSON strings share: quote, backslash, newline, return, tab.
    package static func backslashEscape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\"": "\\\""
        case "\\": "\\\\"
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        default: nil
        }
    }

    /// A dispatch_time_t: `now`, `forever` or the raw value.
    public static func dispatchTime(_ value: UInt64) -> String {
        value == 0 ? "now" : value == .max ? "forever" : String(value)
    }
}

/// Builds `fieldsDescription` for one event, type by type (see the record tables).
private struct EventFieldFormatter {
    let event: Event
    var parts: [String] = []

    init(_ event: Event) { self.event = event }

    mutating func format() -> String {
        switch event.type {
        case .threadStart, .threadName: formatThread()
        case .queueCreate, .queueInfo: formatQueue()
        case .enqueue, .start, .end, .workItemCreate, .workItemPerform: formatItem()
        case .applyBegin, .applyEnd, .applyIterStart, .applyIterEnd: formatApply()
        case .groupWaitBegin, .groupWaitEnd: formatGroup()
        case .workItemWaitBegin, .workItemWaitEnd: formatWorkItemWait()
        case .semCreate, .semWaitBegin, .semWaitEnd, .semSignal: formatSemaphore()
        case .onceBegin, .onceEnd: formatOnce()
        case .sourceCreate, .sourceSetTimer, .sourceSetHandler, .sourceCancel, .sourceHandlerBegin,
             .sourceHandlerEnd, .sourceMergeData: formatSource()
        case .ioCreate, .ioRead, .ioWrite, .ioHandlerBegin, .ioHandlerEnd, .ioClose,
             .ioCleanupBegin, .ioCleanupEnd: formatIO()
        case .mark, .intervalBegin, .intervalEnd, .deadlock: formatAnnotation()
        case .schedState: formatSched()
        case .stackFrame, .cpuSample, .asyncFrame: formatSample()
        case .site, .module, .buildID, .job: formatCodeIdentity()
        case .actorHop, .actorType: formatActor()
        case .operation, .operationDependency: formatOperation()
        case .continuation: formatContinuation()
        case .runLoopTimer, .runLoopTimerFire: formatRunLoopTimer()
        // THREAD_EXIT, SET_TARGET, SUSPEND, RESUME, ACTIVATE, GROUP_CREATE/ENTER/LEAVE,
        // IO_BARRIER, and any record type added to the list without a formatter of its own.
        default: formatWords()
        }
        appendSite()
        return parts.joined(separator: " ")
    }

    private mutating func field(_ name: String, _ value: String) { parts.append("\(name)=\(value)") }
    private mutating func pointer(_ name: String, _ value: UInt64) { field(name, TraceText.hex(value)) }
    private mutating func number(_ name: String, _ value: some BinaryInteger) { field(name, String(value)) }

    private mutating func string(_ name: String) {
        field(name, TraceText.quoted(event.string ?? ""))
        if event.isStringTruncated { parts.append("truncated") }
    }

    private mutating func named(_ name: String, _ value: UInt32, _ names: [UInt32: String]) {
        field(name, names[value] ?? String(value))
    }

    /// A value of one of the record list's value sets by its case name (`kind=worker`), an
    /// unknown one as its number.
    private mutating func value<Value: RawRepresentable>(_ name: String, _ raw: Value.RawValue, as _: Value.Type) {
        field(name, Value(rawValue: raw).map { String(describing: $0) } ?? "\(raw)")
    }

    /// Every payload word under the list's name, in hex, then the string.
    private mutating func formatWords() {
        for (index, name) in event.type.payloadWordNames.enumerated() { pointer(name, event.payloadWord(index)) }
        if event.type.hasString { string("string") }
    }

    /// The optional site word of the 1.4 item, wait and handler records.
    private mutating func appendSite() {
        guard let site = event.siteID else { return }
        number("site", site)
    }

    private mutating func formatCodeIdentity() {
        switch event.type {
        case .site:
            number("site", event.arg)
            field("code_kind", SiteCodeKind(rawValue: event.flags)?.name ?? String(event.flags))
            if event.a != 0 { pointer("code", event.a) }
            if event.b != 0 { pointer("capture", event.b) }
            if event.c != 0 { pointer("caller", event.c) }
            if event.d != 0 { pointer("return", event.d) }
        case .module:
            pointer("base", event.a)
            pointer("start", event.b)
            pointer("end", event.c)
            string("path")
        case .buildID:
            pointer("base", event.a)
            field("build_id", event.string ?? "")
        default:
            number("item", event.a)
            number("task", event.arg)
            named("job_kind", UInt32(event.flags), [0: "task"])
            pointer("task_address", event.b)
            if event.c != 0 { pointer("resume", event.c) }
            if event.d != 0 { pointer("parent", event.d) }
        }
    }

    private mutating func formatOperation() {
        number("id", event.a)
        if event.type == .operationDependency { pointer("dependency", event.b); return }
        pointer("operation", event.b)
        string("type_name")
    }

    private mutating func formatRunLoopTimer() {
        pointer("timer", event.a)
        if event.type == .runLoopTimerFire {
            pointer("runloop", event.b)
            field("due", TraceText.dispatchTime(event.c))
            return
        }
        number("interval", event.b)
        field("due", TraceText.dispatchTime(event.c))
        number("site", event.d)
    }

    private mutating func formatContinuation() {
        number("task", event.arg)
        let awaited = event.flags == ContinuationStep.awaited.rawValue
        field("op", awaited ? "await" : "init")
        pointer("context", event.a)
        named("status", UInt32(truncatingIfNeeded: event.b), awaited ? [0: "pending", 1: "awaited", 2: "resumed"] : [:])
        number("site", event.c)
    }

    private mutating func formatActor() {
        if event.type == .actorType {
            pointer("metadata", event.a)
            string("name")
            return
        }
        number("task", event.arg)
        pointer("executor", event.a)
        if event.b != 0 { pointer("implementation", event.b) }
        pointer("resume", event.c)
        if event.d != 0 { pointer("metadata", event.d) }
    }

    private mutating func formatSched() {
        number("thread", Int64(bitPattern: event.a))
        field("state", SchedState(rawValue: event.arg)?.name ?? String(event.arg))
        let flags = SchedFlags(rawValue: event.flags)
        if flags.contains(.uninterruptible) { parts.append("uninterruptible") }
        if flags.contains(.woken) { parts.append("woken") }
        if flags.contains(.initial) { parts.append("initial") }
        number("cpu", Int64(bitPattern: event.b))
        if event.c != 0 { number("by", Int64(bitPattern: event.c)) }
    }

    private mutating func formatSample() {
        if event.type == .stackFrame || event.type == .asyncFrame {
            number("id", event.arg)
            number("parent", event.a)
            pointer("address", event.b)
        } else {
            number("thread", Int64(bitPattern: event.a))
            number("stack", event.b)
            number("cpu", event.c)
            number("hz", event.arg)
        }
    }

    private mutating func formatThread() {
        switch event.type {
        case .threadStart:
            value("kind", event.arg, as: ThreadStartKind.self)
            number("creator", Int64(bitPattern: event.a))
        case .threadName: string("name")
        default: break
        }
    }

    private mutating func formatQueue() {
        switch event.type {
        case .queueCreate:
            pointer("queue", event.a)
            field("target", event.b == 0 ? "default" : TraceText.hex(event.b))
            string("label")
            parts.append(event.arg & 1 != 0 ? "concurrent" : "serial")
            if event.arg & 2 != 0 { parts.append("inactive") }
            qos(UInt8(truncatingIfNeeded: event.arg >> 8))
            let relative = Int(UInt8(truncatingIfNeeded: event.arg >> 16))
            if relative != 0 && relative != 128 { number("relpri", relative - 128) }
        case .queueInfo:
            pointer("queue", event.a)
            value("kind", event.arg & 0xFF, as: QueueInfoKind.self)
            string("label")
            qos(UInt8(truncatingIfNeeded: event.arg >> 8))
        default: break
        }
    }

    private mutating func qos(_ raw: UInt8) {
        guard raw != 0 else { return }
        field("qos", QoSClass(rawValue: raw)?.name ?? TraceText.hex(raw))
    }

    private mutating func formatItem() {
        number("id", event.a)
        switch event.type {
        case .enqueue:
            pointer("queue", event.b)
            kind()
            if event.flags != 0 { field("flags", event.enqueueFlags.names) }
            switch event.itemKind {
            case .after: field("deadline", TraceText.dispatchTime(event.c))
            case .groupAsync, .groupNotify: pointer("group", event.c)
            default: if event.c != 0 { number("extra", event.c) }
            }
        case .start: kind()
        case .workItemCreate:
            pointer("block", event.b)
            let flags = event.arg & 0xFF_FFFF
            if flags != 0 { field("flags", blockFlagNames(flags)) }
            qos(UInt8(truncatingIfNeeded: event.arg >> 24))
        default: break
        }
    }

    private mutating func kind() {
        // A START says its kind only when the shim's trampoline knows it (tagged blocks); a
        // wrapped block or DispatchWorkItem's kind is on its ENQUEUE: no "kind=unknown".
        if event.type == .start && event.arg == 0 { return }
        field("kind", ItemKind(rawValue: event.arg)?.name ?? String(event.arg))
    }

    /// dispatch_block_flags_t names.
    private func blockFlagNames(_ flags: UInt32) -> String {
        let known: [(UInt32, String)] = [(0x1, "barrier"), (0x2, "detached"), (0x4, "assignCurrent"),
                                         (0x8, "noQoS"), (0x10, "inheritQoS"), (0x20, "enforceQoS")]
        var names = known.filter { flags & $0.0 != 0 }.map(\.1)
        let unknown = flags & ~0x3F
        if unknown != 0 { names.append(TraceText.hex(unknown)) }
        return names.joined(separator: ",")
    }

    private mutating func formatApply() {
        number("id", event.a)
        switch event.type {
        case .applyBegin:
            pointer("queue", event.b)
            number("iterations", event.c)
        case .applyIterStart, .applyIterEnd: number("index", event.arg)
        default: break
        }
    }

    private mutating func formatGroup() {
        pointer("group", event.a)
        switch event.type {
        case .groupWaitBegin: field("timeout", TraceText.dispatchTime(event.b))
        case .groupWaitEnd: named("result", event.arg, [0: "ok", 1: "timed_out"])
        default: break
        }
    }

    private mutating func formatWorkItemWait() {
        pointer("id", event.a)
        switch event.type {
        case .workItemWaitBegin: field("timeout", TraceText.dispatchTime(event.b))
        case .workItemWaitEnd: named("result", event.arg, [0: "ok", 1: "timed_out"])
        default: break
        }
    }

    private mutating func formatSemaphore() {
        pointer("sem", event.a)
        switch event.type {
        case .semCreate: number("value", Int64(bitPattern: event.b))
        case .semWaitBegin: field("timeout", TraceText.dispatchTime(event.b))
        case .semWaitEnd:
            field("result", event.arg & 1 != 0 ? "timed_out" : "ok")
            if event.arg & 2 != 0 { parts.append("blocked") }
        case .semSignal: if event.arg & 1 != 0 { parts.append("woke") }
        default: break
        }
    }

    private mutating func formatOnce() {
        pointer("predicate", event.a)
        if event.type == .onceEnd { field("outcome", OnceOutcome(rawValue: event.arg)?.name ?? "\(event.arg)") }
    }

    private mutating func formatSource() {
        pointer("source", event.a)
        switch event.type {
        case .sourceCreate:
            field("type", SourceType(rawValue: event.arg)?.name ?? String(event.arg))
            number("handle", event.b)
            pointer("mask", event.c)
            pointer("queue", event.d)
        case .sourceSetTimer:
            field("start", TraceText.dispatchTime(event.b))
            number("interval", event.c)
            number("leeway", event.d)
        case .sourceSetHandler, .sourceHandlerEnd: value("handler", event.arg, as: SourceHandlerKind.self)
        case .sourceHandlerBegin:
            value("handler", event.arg, as: SourceHandlerKind.self)
            number("data", event.b)
        case .sourceMergeData: number("value", event.b)
        default: break
        }
    }

    private mutating func formatIO() {
        switch event.type {
        case .ioCreate:
            pointer("channel", event.a)
            named("type", event.arg, [0: "stream", 1: "random"])
            if event.b != .max { number("fd", Int64(bitPattern: event.b)) }
            string("path")
        case .ioRead, .ioWrite:
            pointer("channel", event.a)
            number("op", event.b)
            number("offset", Int64(bitPattern: event.c))
            number("length", event.d)
        case .ioHandlerBegin:
            number("op", event.a)
            if event.arg & 1 != 0 { parts.append("done") }
            let error = event.arg >> 8
            if error != 0 { number("error", error) }
            number("bytes", event.b)
        case .ioHandlerEnd: number("op", event.a)
        case .ioClose:
            pointer("channel", event.a)
            if event.arg != 0 { pointer("flags", UInt64(event.arg)) }
        case .ioCleanupBegin:
            number("cleanup", event.a)
            if event.arg != 0 { number("error", event.arg) }
        case .ioCleanupEnd: number("cleanup", event.a)
        default: break
        }
    }

    private mutating func formatAnnotation() {
        switch event.type {
        case .mark: string("name")
        case .intervalBegin:
            number("interval", event.a)
            string("name")
        case .intervalEnd: number("interval", event.a)
        default:
            value("kind", event.arg, as: DeadlockKind.self)
            pointer("queue", event.a)
            pointer("held", event.b)
        }
    }
}
