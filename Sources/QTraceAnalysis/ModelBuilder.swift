// Builds a TraceModel from events in time order, in one pass with state kept per in-flight
// object only. ModelBuilder is a dispatcher: each record goes to the collaborator that owns
// what it changes (ObjectDirectory, QueueRegistry, ThreadTable, ItemTracker, CodeIdentity,
// and GroupTable, SemaphoreTable, SourceTable, ApplyTracker, IOTracker, OnceTracker,
// OperationTable; docs/architecture.md, "How the model is built"), and the ModelBuilder+*.swift
// files wire them where one record concerns several.
//
// How records become the model (docs/trace-format.md gives the records):
// - Objects are keyed by address; a CREATE/INFO record at a known address starts a new
//   object (generation), except QUEUE_INFO completing a placeholder or repeating itself.
// - An ENQUEUE makes an item pending under its id; START takes the oldest pending entry of
//   that id (a DispatchWorkItem keeps its id across submissions), or follows a
//   WORKITEM_PERFORM on the same thread (inline run, no queue), or else makes an item without
//   queue. END closes the innermost open item of that id on the thread.
// - Each thread keeps a stack (items, handler runs, blocked waits, apply iterations); its
//   top gives the thread's state (running / blocked / idle). A sync caller is blocked from
//   ENQUEUE to START when it runs the block itself, else until the block's END.
// - A queue's serial domain is the outermost serial queue on its target chain; items of one
//   domain run one at a time. Waits are split with cumulative per-queue clocks (domain busy,
//   barrier outstanding, suspended): an item's share of each is the clock's advance between
//   its enqueue and its start, taken in that order of precedence; the rest waited for a thread.
import QTraceFormat

/// Streaming model builder: `var b = ModelBuilder(info: info); b.consume(e) ...; b.finish()`.
public struct ModelBuilder {
    var model: TraceModel
    /// The items: their table, the pending enqueues, DispatchWorkItems, sync callers.
    var items: ItemTracker
    let converter: DispatchTimeConverter
    /// Time of the latest event (events that go back in time are clamped to it).
    var now: UInt64 = 0

    // The collaborators that own their state (moved into `model` by `finish`).
    /// Object identity: every address maps to its most recent object.
    var objects = ObjectDirectory()
    /// The queues: targets, serial domains, suspension, backlog, wait clocks.
    var queues = QueueRegistry()
    /// The threads: their stacks, states, blocked intervals and counters.
    var threads: ThreadTable
    /// The dispatch groups: rounds, waits, notifies.
    var groups = GroupTable()
    /// The dispatch semaphores: signals, waits, time blocked.
    var semaphores = SemaphoreTable()
    /// The Dispatch sources and Foundation timers: configuration, suspension, handler runs.
    var sources = SourceTable()
    /// dispatch_apply calls: iterations, width, each thread's share.
    var applies = ApplyTracker()
    /// Dispatch I/O: channels and operations.
    var io = IOTracker()
    /// dispatch_once calls under way (ModelBuilder+Once.swift).
    var onces = OnceTracker()
    /// SCHED_STATE records (`qtrace record --sched`), matched to threads in `finish`.
    var schedChanges: [PendingSchedChange] = []
    /// STACK_FRAME and CPU_SAMPLE records (`qtrace record --cpu`, ModelBuilder+Samples.swift).
    var samples = SampleBuildState()
    /// Sites, modules and tasks (format 1.4).
    var code = CodeIdentity()
    /// Foundation operations: the Operation each item ran, its dependencies.
    var operations = OperationTable()
    /// Annotated intervals under way, by id.
    var intervalById = IdMap<Int32>()

    /// `expectedEvents` (e.g. from the trace's size) lets the item array be allocated once;
    /// `eventsByTid` (the reader's count of each thread's events), each thread's busy spans.
    public init(info: TraceInfo, expectedEvents: Int = 0, eventsByTid: [Int32: Int] = [:]) {
        model = TraceModel(info: info)
        threads = ThreadTable(info: info, eventsByTid: eventsByTid)
        items = ItemTracker(capacity: expectedEvents > 0 ? expectedEvents / 3 + 16 : 16)
        converter = DispatchTimeConverter(initMonoNs: info.initMonoNs, initRealtimeNs: info.initRealtimeNs)
        if info.mainTid != 0 { _ = thread(for: info.mainTid) }
        if info.mainQueue != 0 {
            let main = newQueue(address: info.mainQueue, label: "com.apple.main-thread", kind: .main,
                                 origin: .header, qos: .userInteractive, target: -1)
            queues.setMainQueue(main)
        }
    }

    /// The model so far (complete after `finish()`).
    public var currentModel: TraceModel {
        var current = model
        current.threads = Array(threads.threads)
        current.threadActivity = threads.activity
        current.threadExplosions = threads.explosions
        current.queues = queues.queuesSoFar
        current.targetLoops = queues.targetLoops
        current.groups = groups.groups
        current.sources = sources.sources
        current.applies = applies.applies
        (current.channels, current.ioOperations) = (io.channels, io.operations)
        current.operations = operations.operations
        current.semaphores = Array(semaphores.semaphores)
        current.items = Array(items.all)
        if !code.sites.isEmpty || !code.modules.isEmpty || !code.tasks.isEmpty {
            (current.sites, current.codes, current.modules, current.tasks) = (code.sites, code.codes, code.modules, code.tasks)
        }
        return current
    }

    public mutating func consume(_ e: Event) {
        var event = e
        consume(lent: &event)
    }

    /// `consume` of an event read where it lies (`buildModel(file:)`'s batches): `inout` passes
    /// the batch slot's address. An event passed by value was moved out of the batch into the
    /// call's argument and back after it, 72 bytes loaded and stored twice per event (~4% of
    /// flow's samples); stored back only with a string, the destroy of the moved-out event
    /// took as much (two calls through the value witness). A handler called with `e` gets a
    /// copy of the bits (no retain: nothing writes `e` meanwhile), made in its branch only.
    mutating func consume(lent e: inout Event) {
        model.eventCount += 1
        // The scheduler stream (tid 0) is no thread of the process. The tid test first: an
        // integer compare is cheapest for the Dispatch events (all but these).
        if e.tid <= 0, e.type == .schedState { schedStateChanged(e); return }
        if e.tid <= 0, e.type == .stackFrame || e.type == .cpuSample { sampleStreamEvent(e); return }
        if e.time >= now { now = e.time } else { model.anomalies.outOfOrderEvents += 1 }
        if e.tid == TraceLayout.metadataStreamTid { namingRecorded(e); return }
        let t = thread(for: e.tid)
        switch e.type {
        case .queueCreate, .queueInfo, .setTarget, .groupCreate, .semCreate, .sourceCreate, .sourceSetTimer,
             .sourceSetHandler, .ioCreate, .site, .module, .buildID, .asyncFrame, .actorType, .runLoopTimer:
            namingRecorded(e)
        case .threadStart: threads.started(t, kind: e.arg, creator: e.a, at: now)
        case .threadExit: threadExited(t)
        case .threadName: threads.setName(t, e.string ?? "")
        case .suspend: suspend(object: e.a)
        case .resume: resume(object: e.a, activateOnly: false)
        case .activate: resume(object: e.a, activateOnly: true)
        case .enqueue: enqueue(e, thread: t)
        case .start: start(e, thread: t)
        case .end: end(id: e.a, thread: t)
        case .workItemCreate: items.workItemCreated(id: e.a, flagsAndQoS: e.arg)
        case .workItemPerform: threads.setPerforming(t, id: e.a)
        case .applyBegin: applyBegin(e, thread: t)
        case .applyEnd: applyEnd(id: e.a, thread: t)
        case .applyIterStart: applyIterationStart(id: e.a, thread: t)
        case .applyIterEnd: applyIterationEnd(id: e.a, thread: t)
        case .groupEnter: groupEnter(e)
        case .groupLeave: groupLeave(e, thread: t)
        case .groupWaitBegin: groupWaitBegin(e, thread: t)
        case .groupWaitEnd: groupWaitEnd(e, thread: t)
        case .workItemWaitBegin: workItemWaitBegin(e, thread: t)
        case .workItemWaitEnd: workItemWaitEnd(e, thread: t)
        case .semWaitBegin: semaphoreWaitBegin(address: e.a, thread: t)
        case .semWaitEnd: semaphoreWaitEnd(address: e.a, outcome: e.arg, site: e.b, thread: t)
        case .semSignal: semaphoreSignal(address: e.a, outcome: e.arg)
        case .onceBegin: onceBegin(e, thread: t)
        case .onceEnd: onceEnd(e, thread: t)
        case .sourceCancel: sourceCancel(e)
        case .sourceHandlerBegin: sourceHandlerBegin(e, thread: t)
        case .sourceHandlerEnd: sourceHandlerEnd(e, thread: t)
        case .sourceMergeData: sourceMergeData(e)
        case .ioRead, .ioWrite: ioSubmitted(e, thread: t)
        case .ioHandlerBegin: ioHandlerBegin(e, thread: t)
        case .ioHandlerEnd: ioHandlerEnd(e, thread: t)
        case .ioBarrier: ioBarrier(e)
        case .ioClose: ioClosed(e)
        case .ioCleanupBegin: ioCleanupBegin(e)
        case .ioCleanupEnd: break
        case .mark: model.marks.append(Mark(time: now, thread: Int(t), name: e.string ?? ""))
        case .intervalBegin:
            intervalById[e.a] = Int32(model.intervals.count)
            model.intervals.append(AnnotatedInterval(id: e.a, name: e.string ?? "", begin: now, thread: Int(t)))
        case .intervalEnd:
            if let i = intervalById.remove(e.a) {
                model.intervals[Int(i)].end = now
                model.intervals[Int(i)].endThread = Int(t)
            }
        case .deadlock: shimDeadlock(e, thread: t)
        case .schedState, .stackFrame, .cpuSample: break  // the appended streams', handled above; elsewhere meaningless
        case .job: jobRecorded(e, thread: t)
        case .operation: operationRecorded(e, thread: t)
        case .operationDependency: operationDependencyRecorded(e, thread: t)
        case .continuation:
            model.continuations.append(ContinuationEvent(
                time: now, taskID: e.arg, context: e.a, awaited: e.flags == 1, suspends: e.flags == 1 && e.b == 0,
                siteRaw: e.flags == 0 ? siteID(e.c) : 0))
        case .runLoopTimerFire: runLoopTimerFired(e, thread: t)
        case .actorHop:
            model.actorHops.append(ActorHop(time: now, thread: Int(t), taskID: e.arg, executor: e.a, metadata: e.d, resume: e.c))
        }
    }

    /// A record that names an object for the rest of the run: its creation, label, target,
    /// code site or module. None needs the thread that wrote it, so a ring's metadata area
    /// (docs/flight-recorder.md, tid -2: no thread) holds them too; other types cannot be there.
    mutating func namingRecorded(_ e: Event) {
        switch e.type {
        case .queueCreate: queueCreated(e)
        case .queueInfo: queueInfo(e)
        case .setTarget: setTarget(object: e.a, target: e.b)
        case .groupCreate: _ = newGroup(address: e.a, createdAt: now)
        case .semCreate: semaphoreCreated(e)
        case .sourceCreate: sourceCreated(e)
        case .runLoopTimer: runLoopTimerCreated(e)
        case .sourceSetTimer: sourceSetTimer(e)
        case .sourceSetHandler: sourceSetHandler(e)
        case .ioCreate: ioCreated(e)
        case .site: code.siteRecorded(e)
        case .module: code.moduleRecorded(e)
        case .buildID: code.buildIDRecorded(e)
        case .asyncFrame: code.asyncFrameRecorded(e)
        case .actorType: model.actorTypeNames[e.a] = e.string ?? ""
        default: break  // a hostile trace: nothing to attribute it to
        }
    }

    /// Closes what is still open at the end of the trace and returns the model.
    public mutating func finish() -> TraceModel {
        closeOpenState()
        model.items = items.takeItems()
        return finishModel()
    }

    /// Closes what is still open at the end of the trace (items are still in the store).
    mutating func closeOpenState() {
        let end = Swift.max(now, model.info.durationNs ?? 0)
        model.endTime = end
        now = end
        threads.close(at: end)
        queues.close(at: end)
        model.sources = sources.close()
        model.applies = applies.takeApplies()
        (model.channels, model.ioOperations) = io.take()
        model.operations = operations.takeOperations()
        resolveSites()
        applyOperationSites()
        moveCodeIdentityIntoModel()
    }

    /// Moves the run-time tables into the model (its items must be there already) and adds
    /// what needs the whole model.
    mutating func finishModel() -> TraceModel {
        // The run-time state is done with, and each table goes once the model's array holds a
        // copy: at 900k queues the per-queue state and the table were half the peak memory.
        objects = ObjectDirectory()
        model.threadActivity = threads.activity
        model.threadExplosions = threads.explosions
        model.threads = threads.takeThreads()
        model.targetLoops = queues.targetLoops
        model.queues = queues.takeQueues()
        Self.distinguishSharedLabels(&model.queues)
        Self.expandWorkerNames(&model.threads, queues: model.queues, items: model.items)
        model.groups = groups.takeGroups()
        model.semaphores = semaphores.takeSemaphores()
        attachSched()
        attachSamples()
        return model
    }
}

/// Convenience entry points.
public enum Analysis {
    /// Builds the model from events already in time order.
    public static func buildModel<S: Sequence>(info: TraceInfo, events: S) -> TraceModel where S.Element == Event {
        var builder = ModelBuilder(info: info)
        for e in events { builder.consume(e) }
        return builder.finish()
    }

    /// Builds the model of a trace file. `progress` is called every `progressEvery` events
    /// (a power of two) with the number consumed so far.
    /// `decodingThread`: whether the events are decoded on a thread of their own, ahead of
    /// the model (`TraceFile.forEachBatchOfEvents`); the model is the same either way.
    public static func buildModel(file: TraceFile, decodingThread: DecodingThread = .automatic,
                                  progressEvery: Int = 1 << 20, progress: ((Int) -> Void)? = nil) -> TraceModel {
        var eventsByTid: [Int32: Int] = [:]
        for thread in file.threads { eventsByTid[thread.tid, default: 0] += thread.eventCount }
        var builder = ModelBuilder(info: TraceInfo(file: file), eventsByTid: eventsByTid)
        var count = 0
        let mask = Swift.max(progressEvery, 1) - 1
        // Every event makes at most one item: the items go straight into the model's array.
        let items = [WorkItem](unsafeUninitializedCapacity: file.eventCount + 16) { buffer, initialized in
            builder.items.adopt(buffer)
            Phases.time("decode and model (merge, consume)") {
                // In batches: one call of this closure per 32 events, `consume` called directly.
                file.forEachBatchOfEvents(decodingThread: decodingThread, announceStart: { builder.items.prefetchForStart($0) }) { events in
                    for i in events.indices {
                        builder.consume(lent: &events[i])
                        count &+= 1
                        if count & mask == 0 { progress?(count) }
                    }
                    return builder.items.wantsStartsAnnounced
                }
            }
            if let threads = file.lastDecodingThreads {
                // Both threads' CPU time is in the phase's; this thread's is its critical path.
                Phases.note("  of which the decoding thread (CPU)", wall: 0, cpu: threads.decoderCPUSeconds)
                Phases.note("  of which the model's thread (CPU)", wall: 0, cpu: threads.consumerCPUSeconds)
            }
            Phases.time("model: close open state, resolve sites") { builder.closeOpenState() }
            initialized = builder.items.count
        }
        builder.items.endLoan()
        builder.model.items = items
        return Phases.time("model: finish (names, sched, samples)") { builder.finishModel() }
    }

    /// Model, statistics and findings of a trace file.
    public static func run(file: TraceFile) -> AnalysisResult {
        AnalysisResult(model: buildModel(file: file))
    }

    /// Model, statistics and findings in one go.
    public static func run<S: Sequence>(info: TraceInfo, events: S) -> AnalysisResult where S.Element == Event {
        AnalysisResult(model: buildModel(info: info, events: events))
    }
}

/// Everything `qtrace stats` shows: the model, its statistics and the findings.
public struct AnalysisResult: Sendable {
    public var model: TraceModel
    public var statistics: TraceStatistics
    public var findings: [Finding]

    public init(model: TraceModel) {
        let statistics = TraceStatistics(model: model)
        self.init(model: model, statistics: statistics,
                  findings: Diagnostics.findings(model: model, statistics: statistics))
    }

    /// From parts computed one by one (e.g. to show each phase's progress).
    public init(model: TraceModel, statistics: TraceStatistics, findings: [Finding]) {
        self.model = model
        self.statistics = statistics
        self.findings = findings
    }
}
