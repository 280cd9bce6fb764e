// A queue of the model (TraceModel.queues), in the memory a queue-heavy trace can afford.
import QTraceFormat

/// A queue of the model. Stored compact (72 bytes instead of 304: at 900k queues the model
/// and the builder's table each held 274 MB of them): indices, counts and widths as Int32
/// (the model's item and queue indices are Int32 already), absent times as `noTime`, and the
/// parts most queues never have (a suffix, target changes, suspensions, a wait behind another
/// item, a backlog episode, and the figures of a queue that had items: its backlog series,
/// busy time and waits) in one shared box, allocated by the first of them; the public
/// properties read and write as before. The label is kept inline when short (`QueueLabel`).
public struct TraceQueue: Sendable {
    public var address: UInt64
    @AbsentTime public var createdAt: UInt64? = nil
    /// The label, compared and hashed without making a String (`label` makes one).
    public var compactLabel: QueueLabel
    /// nil until one of the optional parts is set; copied before a write when shared.
    private var rare: TraceQueueRareBox?
    /// 0 for the first object seen at this address, 1 for the next one, ...
    @Int32Clamped public var generation: Int
    @Int32Clamped public var relativePriority = 0
    /// Target at creation and at the end of the trace (nil for roots: main and global queues).
    @OptionalIndex32 public var initialTarget: Int? = nil
    @OptionalIndex32 public var target: Int? = nil
    /// Most items of this queue running at once (its concurrency width).
    @Int32Clamped public var maxWidth = 0
    public var kind: QueueKind
    public var origin: QueueOrigin
    /// Declared QoS (QUEUE_CREATE attrs or QUEUE_INFO); `.unspecified` inherits from the target.
    public var qos: QoSClass
    public var initiallyInactive = false

    init(address: UInt64, generation: Int, label: String, kind: QueueKind, origin: QueueOrigin, qos: QoSClass) {
        self.address = address
        self.generation = generation
        compactLabel = QueueLabel(label)
        self.kind = kind
        self.origin = origin
        self.qos = qos
    }

    public var label: String {
        get { compactLabel.string }
        set { compactLabel = QueueLabel(newValue) }
    }

    /// Items pending (enqueued, not started) over time; max over each point's span.
    public var backlog: StepSeries {
        get { rare?.parts.backlog ?? StepSeries() }
        _modify { yield &uniqueRare().parts.backlog }
    }
    /// Time with at least one of its items running.
    public var busyNs: UInt64 {
        get { rare?.parts.busyNs ?? 0 }
        set { if rare != nil || newValue != 0 { uniqueRare().parts.busyNs = newValue } }
    }
    /// Sum of item waits (ready to start), split by cause.
    public var waitByCause: WaitBreakdown {
        get { rare?.parts.waitByCause ?? WaitBreakdown() }
        _modify { yield &uniqueRare().parts.waitByCause }
    }
    /// Set when other queues share the label: what tells this one apart (QoS, kind or
    /// address), shown after the label.
    public var nameSuffix: String {
        get { rare?.parts.nameSuffix ?? "" }
        set { if rare != nil || !newValue.isEmpty { uniqueRare().parts.nameSuffix = newValue } }
    }
    public var targetChanges: [TargetChange] {
        get { rare?.parts.targetChanges ?? [] }
        _modify { yield &uniqueRare().parts.targetChanges }
    }
    public var suspensions: [SuspendInterval] {
        get { rare?.parts.suspensions ?? [] }
        _modify { yield &uniqueRare().parts.suspensions }
    }
    /// The longest wait of one item behind another on this queue's serial domain.
    public var worstWaitBehind: WaitBehind? {
        get { rare?.parts.worstWait.value }
        set { if rare != nil || newValue != nil { uniqueRare().parts.worstWait = CompactWaitBehind(newValue) } }
    }
    /// The longest period with a non-empty backlog, for the unbounded-backlog rule.
    public var longestBacklogEpisode: BacklogEpisode? {
        get { rare?.parts.longestEpisode.value }
        set { if rare != nil || newValue != nil { uniqueRare().parts.longestEpisode = CompactBacklogEpisode(newValue) } }
    }

    /// The box of optional parts, allocated or copied so that this queue alone holds it
    /// (copies of a queue share their box until one of them writes).
    private mutating func uniqueRare() -> TraceQueueRareBox {
        if rare == nil {
            rare = TraceQueueRareBox()
        } else if !isKnownUniquelyReferenced(&rare) {
            rare = TraceQueueRareBox(rare!.parts)
        }
        return rare!
    }
}

/// What few queues have, out of line (`TraceQueue.rare`): a value, copied whole by `=`. The
/// figures of items live here too: at 900k queues, 600k ran nothing and held 80 zero bytes
/// each, while those with items mostly have a box already (a suspension, a backlog episode).
private struct TraceQueueRareParts {
    var backlog = StepSeries()
    var busyNs: UInt64 = 0
    var waitByCause = WaitBreakdown()
    var nameSuffix = ""
    var targetChanges: [TargetChange] = []
    var suspensions: [SuspendInterval] = []
    var worstWait = CompactWaitBehind()
    var longestEpisode = CompactBacklogEpisode()
}

/// The box that holds a queue's rare parts. Written only through `TraceQueue.uniqueRare`,
/// which copies a shared box first, so that `TraceQueue` stays a value.
private final class TraceQueueRareBox: @unchecked Sendable {
    var parts: TraceQueueRareParts

    init(_ parts: TraceQueueRareParts = TraceQueueRareParts()) { self.parts = parts }
}

/// A `WaitBehind?` in 16 bytes (item -1: none).
private struct CompactWaitBehind {
    var waitNs: UInt64 = 0
    var item: Int32 = -1
    var blocker: Int32 = -1

    init() {}
    init(_ wait: WaitBehind?) {
        guard let wait else { return }
        waitNs = wait.waitNs
        item = Int32(clamping: wait.item)
        blocker = Int32(clamping: wait.blocker)
    }

    var value: WaitBehind? { item < 0 ? nil : WaitBehind(item: Int(item), blocker: Int(blocker), waitNs: waitNs) }
}

/// A `BacklogEpisode?` in 28 bytes (peak -1: none; end `noTime`: still open). Its counts
/// are the builder's Int32 counters.
private struct CompactBacklogEpisode {
    var start: UInt64 = 0
    var end = noTime
    var peak: Int32 = -1
    var enqueued: Int32 = 0
    var started: Int32 = 0

    init() {}
    init(_ episode: BacklogEpisode?) {
        guard let episode else { return }
        start = episode.start
        end = episode.end ?? noTime
        peak = Int32(clamping: Swift.max(episode.peak, 0))
        enqueued = Int32(clamping: episode.enqueued)
        started = Int32(clamping: episode.started)
    }

    var value: BacklogEpisode? {
        peak < 0 ? nil : BacklogEpisode(start: start, end: end == noTime ? nil : end, peak: Int(peak),
                                        enqueued: Int(enqueued), started: Int(started))
    }
}
