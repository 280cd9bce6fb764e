// What a CTF trace says about one traced process: the embedded format's header facts and
// thread list, rebuilt from qtrace:process, qtrace:thread, qtrace:dropped and
// qtrace:process_end.
import QTraceFormat

/// One traced process of an LTTng trace.
public struct CTFProcess: Sendable, Equatable {
    /// The embedded header's fields as far as LTTng knows them: pid, ppid, ncpu, main tid,
    /// main queue, init clocks, executable and command line from qtrace:process; dropped
    /// counts; `finalMonoNs` and `.finalizedByProcess` when the process exited normally.
    /// Times are LTTng's clock in ns: `initTsc` = `initMonoNs`, `tscHz` = 1e9.
    public var header: TraceHeader
    /// Threads in order of their first event (names from qtrace:thread and THREAD_NAME).
    public var threads: [ThreadInfo]
    /// `qtrace:*` records delivered as events.
    public var eventCount: Int
    /// Time of the last event, or of the exit, in ns since the trace started.
    public var endTime: UInt64
    /// Events LTTng discarded (full ring buffers) in the channels read. LTTng counts them
    /// per buffer, not per process: with per-user buffers this is shared by all processes.
    public var lttngDiscardedEvents: UInt64
    /// qtrace records of a type this reader does not know (a newer shim), skipped.
    public var unknownRecordCount: Int
    /// Whether the qtrace:process event was in the trace (else the header is mostly zeros
    /// and time 0 is the process's first event).
    public var hasProcessEvent: Bool
    /// Which image of the process this is: 1, then 2, 3... for the programs it exec'd (each
    /// announces itself with a qtrace:process event of its own), as the embedded recorder
    /// writes TRACE.PID.N.qtrace for them.
    public var image = 1

    public var pid: Int32 { header.pid }
}

/// Builds a `CTFProcess` while its events stream by.
struct ProcessAccumulator {
    var process: CTFProcess
    /// Clock value (ns from the clock's origin) of time 0.
    var originNs: Int64?
    private var threadIndex: [Int32: Int] = [:]
    /// The last thread looked up: consecutive events mostly come from one thread.
    private var cachedThread: (tid: Int32, index: Int)?
    private var shimDropped: UInt64 = 0

    init(pid: Int32, image: Int = 1) {
        let header = TraceHeader(ncpu: 1, pid: pid, mainTid: pid, tscHz: 1_000_000_000)
        process = CTFProcess(header: header, threads: [], eventCount: 0, endTime: 0, lttngDiscardedEvents: 0,
                             unknownRecordCount: 0, hasProcessEvent: false)
        process.image = image
    }

    /// Trace time of a clock value; the first one seen becomes time 0 if no qtrace:process
    /// event came first.
    /// (A hostile trace's clock values may be 2^64 apart: the difference is taken in UInt64,
    /// where it fits whenever ns is the later, and clamped to the embedded reader's 2^50 bound.)
    mutating func time(of ns: Int64) -> UInt64 {
        if originNs == nil { originNs = ns }
        guard ns > originNs! else { return 0 }
        return Swift.min(UInt64(bitPattern: ns &- originNs!), 1 << 50)
    }

    mutating func setProcessFacts(_ facts: ProcessFacts, at ns: Int64) {
        if originNs == nil || !process.hasProcessEvent { originNs = ns }
        process.hasProcessEvent = true
        var h = process.header
        h.ppid = facts.ppid; h.ncpu = max(facts.ncpu, 1); h.mainTid = facts.mainTid; h.mainQueue = facts.mainQueue
        h.initMonoNs = facts.initMonoNs; h.initTsc = facts.initMonoNs; h.initRealtimeNs = facts.initRealtimeNs
        h.executablePath = facts.executable; h.commandLine = facts.commandLine
        process.header = h
    }

    /// Counts one event of `tid` at `time`; a THREAD_EXIT ends the thread, so a later thread
    /// with the reused tid gets an entry of its own (as in the embedded reader).
    mutating func noteEvent(tid: Int32, time: UInt64, type: EventType?, name: String? = nil) {
        let index = threadEntry(tid: tid, time: time)
        process.threads[index].lastTime = max(process.threads[index].lastTime, time)
        if let name { process.threads[index].name = name }
        guard let type else { return }
        process.threads[index].eventCount += 1
        process.eventCount += 1
        process.endTime = max(process.endTime, time)
        if type == .threadExit {
            threadIndex[tid] = nil
            cachedThread = nil
        }
    }

    /// qtrace:thread: the thread's name at its first record (the chunk header's name).
    mutating func nameThread(tid: Int32, name: String, time: UInt64) {
        let index = threadEntry(tid: tid, time: time)
        if process.threads[index].name == nil || process.threads[index].name!.isEmpty { process.threads[index].name = name }
    }

    private mutating func threadEntry(tid: Int32, time: UInt64) -> Int {
        if let cached = cachedThread, cached.tid == tid { return cached.index }
        let index: Int
        if let known = threadIndex[tid] {
            index = known
        } else {
            process.threads.append(ThreadInfo(tid: tid, name: nil, firstTime: time, lastTime: time, eventCount: 0, chunkCount: 0))
            index = process.threads.count - 1
            threadIndex[tid] = index
        }
        cachedThread = (tid, index)
        return index
    }

    mutating func noteDropped(type: UInt8) {
        shimDropped += 1
        switch EventType(rawValue: type) {
        case .enqueue: process.header.droppedEnqueue += 1
        case .start: process.header.droppedStart += 1
        case .end: process.header.droppedEnd += 1
        default: break
        }
    }

    mutating func noteExit(time: UInt64) {
        process.header.flags.insert(.finalizedByProcess)
        process.endTime = max(process.endTime, time)
    }

    /// The summary once the trace has been read.
    func finished(lttngDiscarded: UInt64) -> CTFProcess {
        var result = process
        result.lttngDiscardedEvents = lttngDiscarded
        result.header.droppedEvents = shimDropped + lttngDiscarded
        if result.header.flags.contains(.finalizedByProcess) {
            result.header.finalMonoNs = result.header.initMonoNs &+ result.endTime
        }
        return result
    }
}

/// The payload of qtrace:process.
struct ProcessFacts {
    var pid: Int32
    var ppid: Int32
    var ncpu: UInt32
    var mainTid: Int32
    var mainQueue: UInt64
    var initMonoNs: UInt64
    var initRealtimeNs: UInt64
    var executable: String
    var commandLine: String
}
