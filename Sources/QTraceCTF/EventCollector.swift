// Turns the muxed babeltrace2 messages into qtrace `Event`s: ignores every event that is not
// `qtrace:*`, routes each to its process, and keeps the per-process summaries.
import CBabeltrace2
import QTraceFormat

/// Which processes' events are delivered.
enum ProcessSelection {
    /// The first process that recorded a qtrace event.
    case first
    case pid(Int32)
    case all
}

/// Processes are numbered in order of their first event (their index in `processes()`): a pid
/// is not enough, since a process that exec's another Dispatch program goes on as a new image
/// with the same pid.
final class EventCollector: MessageConsumer {
    private let selection: ProcessSelection
    private let deliver: (Int, Event) throws -> Void
    /// Called with a delivered process's number and header facts when its qtrace:process
    /// event comes.
    var processAnnounced: ((Int, TraceHeader) throws -> Void)?
    /// Called when a delivered process's thread announces itself (qtrace:thread), before
    /// that thread's first event: (process number, process header, tid, thread name).
    var threadAnnounced: ((Int, TraceHeader, Int32, String) throws -> Void)?

    /// The mutable state, behind a pointer: class properties pay a run-time exclusivity
    /// check on every access, a measurable share of the per-event cost.
    private struct State {
        var decoders: [OpaquePointer: EventClassDecoder?] = [:]
        var lastClass: OpaquePointer?
        var lastDecoder: EventClassDecoder?
        var accumulators: [ProcessAccumulator] = []
        /// A pid's current image.
        var accumulatorIndex: [Int32: Int] = [:]
        var tidToPid: [Int32: Int32] = [:]
        /// The last lookups (consecutive events mostly come from one thread of one process).
        var cachedTid: Int32?
        var cachedTidPid: Int32 = 0
        var cachedPid: Int32?
        var cachedPidIndex = 0
        var selectedPid: Int32?
        /// The one process delivered (selection .first or .pid): its first image.
        var selectedIndex: Int?
        var lttngDiscarded: UInt64 = 0
    }
    private let state: UnsafeMutablePointer<State> = {
        let state = UnsafeMutablePointer<State>.allocate(capacity: 1)
        state.initialize(to: State())
        return state
    }()

    init(selection: ProcessSelection, deliver: @escaping (Int, Event) throws -> Void) {
        self.selection = selection
        self.deliver = deliver
        if case .pid(let pid) = selection { state.pointee.selectedPid = pid }
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The image number of process `index` (1, or 2, 3... after exec).
    func image(of index: Int) -> Int { state.pointee.accumulators[index].process.image }

    /// The header facts of process `index` so far.
    func header(of index: Int) -> TraceHeader { state.pointee.accumulators[index].process.header }

    /// The processes seen, in order of their first qtrace event.
    func processes() -> [CTFProcess] {
        state.pointee.accumulators.map { $0.finished(lttngDiscarded: state.pointee.lttngDiscarded) }
    }

    func consume(_ message: OpaquePointer) throws {
        let type = bt_message_get_type(message)
        if type == BT_MESSAGE_TYPE_EVENT {
            try consumeEvent(message)
        } else if type == BT_MESSAGE_TYPE_DISCARDED_EVENTS {
            var count: UInt64 = 0
            if bt_message_discarded_events_get_count(message, &count) == BT_PROPERTY_AVAILABILITY_AVAILABLE {
                discarded(count)
            }
        }
    }

    private func consumeEvent(_ message: OpaquePointer) throws {
        guard let event = bt_message_event_borrow_event_const(message),
              let eventClass = bt_event_borrow_class_const(event),
              let decoder = decoder(for: eventClass, event: event) else { return }
        var ns: Int64 = 0
        if decoder.hasClock {
            _ = bt_clock_snapshot_get_ns_from_origin(bt_message_event_borrow_default_clock_snapshot_const(message), &ns)
        }
        let context = bt_event_borrow_common_context_field_const(event)
        let tid = decoder.vtid.map { Int32(truncatingIfNeeded: integer(context, $0)) } ?? 0
        let payload = bt_event_borrow_payload_field_const(event)
        switch decoder.kind {
        case .record(let words): try consumeRecord(decoder, payload, words: words, ns: ns, tid: tid, context: context)
        case .recordString: try consumeRecord(decoder, payload, words: -1, ns: ns, tid: tid, context: context)
        case .process: try consumeProcess(decoder, payload, ns: ns, tid: tid)
        case .thread: try consumeThread(decoder, payload, ns: ns, tid: tid)
        case .dropped:
            dropped(type: UInt8(truncatingIfNeeded: integer(payload, decoder.recordMembers[0])), pid: pid(decoder, context, tid: tid))
        case .processEnd:
            processEnd(ns: ns, pid: pid(decoder, context, tid: tid))
        }
    }

    /// record1..record4 (`words` payload words) or record_string (`words` < 0).
    private func consumeRecord(_ decoder: EventClassDecoder, _ payload: OpaquePointer?, words: Int, ns: Int64, tid: Int32,
                               context: OpaquePointer?) throws {
        let members = decoder.recordMembers
        let rawType = UInt8(truncatingIfNeeded: integer(payload, members[0]))
        let flags = UInt8(truncatingIfNeeded: integer(payload, members[1]))
        let arg = UInt32(truncatingIfNeeded: integer(payload, members[2]))
        var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0
        var text: String?
        if words >= 0 {
            if words > 0 { a = integer(payload, members[3]) }
            if words > 1 { b = integer(payload, members[4]) }
            if words > 2 { c = integer(payload, members[5]) }
            if words > 3 { d = integer(payload, members[6]) }
        } else {
            unsignedArray(payload, members[3], limit: 4) { slot, value in
                switch slot {
                case 0: a = value
                case 1: b = value
                case 2: c = value
                default: d = value
                }
            }
            text = string(payload, members[4], truncated: flags & 0x80 != 0)
        }
        try record(rawType: rawType, flags: flags, arg: arg, a: a, b: b, c: c, d: d, string: text, ns: ns, tid: tid,
                   pid: pid(decoder, context, tid: tid))
    }

    private func consumeProcess(_ decoder: EventClassDecoder, _ payload: OpaquePointer?, ns: Int64, tid: Int32) throws {
        func value(_ name: String) -> UInt64 { decoder.member(name).map { integer(payload, $0) } ?? 0 }
        func text(_ name: String) -> String { decoder.member(name).map { string(payload, $0) } ?? "" }
        let facts = ProcessFacts(
            pid: Int32(truncatingIfNeeded: value("pid")), ppid: Int32(truncatingIfNeeded: value("ppid")),
            ncpu: UInt32(truncatingIfNeeded: value("ncpu")), mainTid: Int32(truncatingIfNeeded: value("main_tid")),
            mainQueue: value("main_queue"), initMonoNs: value("init_mono_ns"), initRealtimeNs: value("init_realtime_ns"),
            executable: text("executable"), commandLine: text("command_line"))
        try process(facts, ns: ns, tid: tid)
    }

    private func consumeThread(_ decoder: EventClassDecoder, _ payload: OpaquePointer?, ns: Int64, tid: Int32) throws {
        try thread(pid: Int32(truncatingIfNeeded: integer(payload, decoder.recordMembers[0])),
                   name: string(payload, decoder.recordMembers[1]), ns: ns, tid: tid)
    }

    // MARK: Decoded events (both decoders end here)

    /// A qtrace:record* event of process `pid`.
    @inline(__always)
    func record(rawType: UInt8, flags: UInt8, arg: UInt32, a: UInt64, b: UInt64, c: UInt64, d: UInt64, string: String?,
                ns: Int64, tid: Int32, pid: Int32) throws {
        let index = accumulator(for: pid)
        let time = state.pointee.accumulators[index].time(of: ns)
        guard let type = EventType(rawValue: rawType) else {
            state.pointee.accumulators[index].process.unknownRecordCount += 1
            return
        }
        let event = Event(type: type, time: time, tid: tid, arg: arg, flags: flags, a: a, b: b, c: c, d: d, string: string)
        state.pointee.accumulators[index].noteEvent(tid: tid, time: time, type: type,
                                      name: type == .threadName ? event.string : nil)
        if isDelivered(index) { try deliver(index, event) }
    }

    /// qtrace:process. A second one for a pid is the program that process exec'd: a new image.
    func process(_ facts: ProcessFacts, ns: Int64, tid: Int32) throws {
        assign(tid: tid, to: facts.pid)
        var index = accumulator(for: facts.pid)
        if state.pointee.accumulators[index].process.hasProcessEvent {
            index = addAccumulator(facts.pid, image: state.pointee.accumulators[index].process.image + 1)
        }
        state.pointee.accumulators[index].setProcessFacts(facts, at: ns)
        if isDelivered(index) { try processAnnounced?(index, state.pointee.accumulators[index].process.header) }
    }

    /// qtrace:thread.
    func thread(pid: Int32, name: String, ns: Int64, tid: Int32) throws {
        assign(tid: tid, to: pid)
        let index = accumulator(for: pid)
        state.pointee.accumulators[index].nameThread(tid: tid, name: name, time: state.pointee.accumulators[index].time(of: ns))
        if isDelivered(index) { try threadAnnounced?(index, state.pointee.accumulators[index].process.header, tid, name) }
    }

    /// qtrace:dropped.
    func dropped(type: UInt8, pid: Int32) {
        let index = accumulator(for: pid)
        state.pointee.accumulators[index].noteDropped(type: type)
    }

    /// qtrace:process_end.
    func processEnd(ns: Int64, pid: Int32) {
        let index = accumulator(for: pid)
        state.pointee.accumulators[index].noteExit(time: state.pointee.accumulators[index].time(of: ns))
    }

    /// Events LTTng discarded (ring buffer full).
    func discarded(_ count: UInt64) {
        state.pointee.lttngDiscarded &+= count
    }

    // MARK: Processes

    /// The event's process: its vpid context, the trace's per-process environment, the
    /// process its thread announced (qtrace:thread), or else the first process seen.
    @inline(__always)
    private func pid(_ decoder: EventClassDecoder, _ context: OpaquePointer?, tid: Int32) -> Int32 {
        if let vpid = decoder.vpid { return Int32(truncatingIfNeeded: integer(context, vpid)) }
        if let pid = decoder.environmentPid { return pid }
        return pid(ofThread: tid)
    }

    /// The process a thread announced (qtrace:process, qtrace:thread), else the first process.
    @inline(__always)
    func pid(ofThread tid: Int32) -> Int32 {
        if tid == state.pointee.cachedTid { return state.pointee.cachedTidPid }
        let pid = state.pointee.tidToPid[tid] ?? state.pointee.accumulators.first?.process.pid ?? 0
        state.pointee.cachedTid = tid
        state.pointee.cachedTidPid = pid
        return pid
    }

    /// Records which process a thread belongs to (qtrace:process, qtrace:thread).
    private func assign(tid: Int32, to pid: Int32) {
        state.pointee.tidToPid[tid] = pid
        state.pointee.cachedTid = nil
    }

    @inline(__always)
    private func accumulator(for pid: Int32) -> Int {
        if pid == state.pointee.cachedPid { return state.pointee.cachedPidIndex }
        let index = state.pointee.accumulatorIndex[pid] ?? addAccumulator(pid)
        state.pointee.cachedPid = pid
        state.pointee.cachedPidIndex = index
        return index
    }

    private func addAccumulator(_ pid: Int32, image: Int = 1) -> Int {
        let index = state.pointee.accumulators.count
        state.pointee.accumulators.append(ProcessAccumulator(pid: pid, image: image))
        state.pointee.accumulatorIndex[pid] = index
        state.pointee.cachedPid = pid
        state.pointee.cachedPidIndex = index
        if case .first = selection, state.pointee.selectedPid == nil { state.pointee.selectedPid = pid }
        if state.pointee.selectedIndex == nil, pid == state.pointee.selectedPid { state.pointee.selectedIndex = index }
        return index
    }

    @inline(__always)
    private func isDelivered(_ index: Int) -> Bool {
        if case .all = selection { return true }
        return index == state.pointee.selectedIndex
    }

    /// The decoder of an event class (nil: not a qtrace event), built on first sight.
    @inline(__always)
    private func decoder(for eventClass: OpaquePointer, event: OpaquePointer) -> EventClassDecoder? {
        if eventClass == state.pointee.lastClass { return state.pointee.lastDecoder }
        let decoder: EventClassDecoder?
        if let cached = state.pointee.decoders[eventClass] {
            decoder = cached
        } else {
            decoder = EventClassDecoder(eventClass: eventClass, event: event)
            state.pointee.decoders[eventClass] = decoder
        }
        state.pointee.lastClass = eventClass
        state.pointee.lastDecoder = decoder
        return decoder
    }
}
