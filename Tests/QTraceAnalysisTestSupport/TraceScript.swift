// A small DSL for synthetic event streams: tests write what happened, in any order, and get
// the events sorted by time (stable, so same-time events keep their written order).
import QTraceFormat
import QTraceAnalysis

public let mainTid: Int32 = 100
public let mainQueueAddress: UInt64 = 0x1000
public let globalDefault: UInt64 = 0x2000
public let globalUtility: UInt64 = 0x2100
public let globalUserInitiated: UInt64 = 0x2200

public func us(_ v: UInt64) -> UInt64 { v * 1_000 }
public func ms(_ v: UInt64) -> UInt64 { v * 1_000_000 }

public struct TraceScript {
    public var info = TraceInfo(pid: 42, ncpu: 2, mainTid: mainTid, mainQueue: mainQueueAddress, shimOverheadNs: 20,
                         initMonoNs: 1_000_000_000_000, initRealtimeNs: 1_700_000_000_000_000_000)
    public private(set) var events: [Event] = []

    public init() {}

    public mutating func add(_ type: EventType, _ time: UInt64, tid: Int32, arg: UInt32 = 0, flags: UInt8 = 0,
                      a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0, string: String? = nil) {
        events.append(Event(type: type, time: time, tid: tid, arg: arg, flags: flags, a: a, b: b, c: c, d: d, string: string))
    }

    public var sortedEvents: [Event] {
        events.enumerated().sorted { $0.element.time != $1.element.time ? $0.element.time < $1.element.time : $0.offset < $1.offset }
            .map(\.element)
    }

    public func model() -> TraceModel { Analysis.buildModel(info: info, events: sortedEvents) }
    public func analysis() -> AnalysisResult { Analysis.run(info: info, events: sortedEvents) }

    // MARK: Threads and queues

    public mutating func thread(_ tid: Int32, at t: UInt64 = 0, worker: Bool = true, name: String? = nil) {
        add(.threadStart, t, tid: tid, arg: worker ? 1 : 2, a: UInt64(mainTid))
        if let name { add(.threadName, t, tid: tid, string: name) }
    }

    public mutating func exit(_ tid: Int32, at t: UInt64) { add(.threadExit, t, tid: tid) }

    public mutating func mainAndGlobals(at t: UInt64 = 0) {
        add(.threadStart, t, tid: mainTid, arg: 0)
        add(.queueInfo, t, tid: mainTid, arg: 1, a: mainQueueAddress, string: "com.apple.main-thread")
        add(.queueInfo, t, tid: mainTid, arg: 2 | UInt32(QoSClass.default.rawValue) << 8, a: globalDefault,
            string: "com.apple.root.default-qos")
        add(.queueInfo, t, tid: mainTid, arg: 2 | UInt32(QoSClass.utility.rawValue) << 8, a: globalUtility,
            string: "com.apple.root.utility-qos")
        add(.queueInfo, t, tid: mainTid, arg: 2 | UInt32(QoSClass.userInitiated.rawValue) << 8, a: globalUserInitiated,
            string: "com.apple.root.user-initiated-qos")
    }

    public mutating func queue(_ address: UInt64, _ label: String, at t: UInt64 = 0, concurrent: Bool = false,
                        target: UInt64 = 0, qos: QoSClass = .unspecified, inactive: Bool = false, tid: Int32 = mainTid) {
        let attrs = (concurrent ? 1 : 0) | (inactive ? 2 : 0) | UInt32(qos.rawValue) << 8 | 128 << 16
        add(.queueCreate, t, tid: tid, arg: attrs, a: address, b: target, string: label)
    }

    public mutating func setTarget(_ object: UInt64, _ target: UInt64, at t: UInt64, tid: Int32 = mainTid) {
        add(.setTarget, t, tid: tid, a: object, b: target)
    }

    public mutating func suspend(_ object: UInt64, at t: UInt64, tid: Int32 = mainTid) { add(.suspend, t, tid: tid, a: object) }
    public mutating func resume(_ object: UInt64, at t: UInt64, tid: Int32 = mainTid) { add(.resume, t, tid: tid, a: object) }
    public mutating func activate(_ object: UInt64, at t: UInt64, tid: Int32 = mainTid) { add(.activate, t, tid: tid, a: object) }

    // MARK: Items

    public mutating func enqueue(_ id: UInt64, on queue: UInt64, at t: UInt64, by tid: Int32 = mainTid,
                          kind: ItemKind = .async, flags: EnqueueFlags = [], extra: UInt64 = 0) {
        add(.enqueue, t, tid: tid, arg: kind.rawValue, flags: flags.rawValue, a: id, b: queue, c: extra)
    }

    public mutating func start(_ id: UInt64, at t: UInt64, on tid: Int32, kind: ItemKind = .async) {
        add(.start, t, tid: tid, arg: kind.rawValue, a: id)
    }

    public mutating func end(_ id: UInt64, at t: UInt64, on tid: Int32) { add(.end, t, tid: tid, a: id) }

    /// enqueue at `at`, run on `tid` from `start` to `end`.
    public mutating func item(_ id: UInt64, on queue: UInt64, at t: UInt64, by submitter: Int32 = mainTid,
                       runOn tid: Int32, start: UInt64, end: UInt64, kind: ItemKind = .async,
                       flags: EnqueueFlags = [], extra: UInt64 = 0) {
        enqueue(id, on: queue, at: t, by: submitter, kind: kind, flags: flags, extra: extra)
        self.start(id, at: start, on: tid, kind: kind)
        self.end(id, at: end, on: tid)
    }

    /// The main thread runs a main-queue item (a run loop or dispatchMain): an app, to which
    /// the frame, hang and blocking rules apply.
    public mutating func servesMainQueue(at t: UInt64, id: UInt64 = 0xA11) {
        item(id, on: mainQueueAddress, at: t, runOn: mainTid, start: t, end: t + 1)
    }

    /// sync from `tid` onto `queue`: waits from `at` to `start`, runs inline until `end`.
    public mutating func sync(_ id: UInt64, on queue: UInt64, at t: UInt64, by tid: Int32, start: UInt64, end: UInt64,
                       kind: ItemKind = .sync) {
        item(id, on: queue, at: t, by: tid, runOn: tid, start: start, end: end, kind: kind)
    }

    // MARK: Objects

    public mutating func semWait(_ sem: UInt64, from t0: UInt64, to t1: UInt64, on tid: Int32, blocked: Bool = true,
                          timedOut: Bool = false) {
        add(.semWaitBegin, t0, tid: tid, a: sem, b: ~0)
        add(.semWaitEnd, t1, tid: tid, arg: (timedOut ? 1 : 0) | (blocked ? 2 : 0), a: sem)
    }

    public mutating func groupWait(_ group: UInt64, from t0: UInt64, to t1: UInt64, on tid: Int32, timedOut: Bool = false) {
        add(.groupWaitBegin, t0, tid: tid, a: group, b: ~0)
        add(.groupWaitEnd, t1, tid: tid, arg: timedOut ? 1 : 0, a: group)
    }

    /// A dispatch_once call that found `predicate` not done: it ran the initializer or waited.
    public mutating func once(_ predicate: UInt64, from t0: UInt64, to t1: UInt64, on tid: Int32, outcome: OnceOutcome) {
        add(.onceBegin, t0, tid: tid, a: predicate)
        add(.onceEnd, t1, tid: tid, arg: outcome.rawValue, a: predicate)
    }

    public mutating func source(_ address: UInt64, type: SourceType, queue: UInt64, at t: UInt64, handle: UInt64 = 0) {
        add(.sourceCreate, t, tid: mainTid, arg: type.rawValue, a: address, b: handle, c: 0, d: queue)
        add(.sourceSetHandler, t, tid: mainTid, arg: 0, a: address)
    }

    public mutating func handler(_ source: UInt64, data: UInt64, from t0: UInt64, to t1: UInt64, on tid: Int32,
                          kind: HandlerKind = .event) {
        add(.sourceHandlerBegin, t0, tid: tid, arg: UInt32(kind.rawValue), a: source, b: data)
        add(.sourceHandlerEnd, t1, tid: tid, arg: UInt32(kind.rawValue), a: source)
    }

    /// A dispatch_time_t on the uptime clock for trace time `t`.
    public func uptime(_ t: UInt64) -> UInt64 { info.initMonoNs + t }
}
