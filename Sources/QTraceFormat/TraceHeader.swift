// The decoded file header and per-thread summary.

// TraceHeaderFlags and SnapshotReason are generated from Sources/CQTraceShim/qtrace_records.h
// (the GenerateRecordSchema plugin).

extension SnapshotReason {
    public var description: String {
        switch self {
        case .request: "on request"
        case .deadlock: "deadlock detected"
        case .threadExplosion: "thread explosion detected"
        case .exit: "at exit"
        }
    }
}

/// The flight-recorder fields of a ring or a snapshot (format 1.6).
public struct RingInfo: Sendable, Equatable {
    /// The ring's size in bytes (the metadata area apart).
    public var ringBytes: UInt64 = 0
    public var metadataChunks: UInt64 = 0
    /// Records lost to chunk reuse, and the chunks they were in.
    public var overwrittenEvents: UInt64 = 0
    public var overwrittenChunks: UInt64 = 0
    /// The TSC of the last overwritten record: every event after it is in the trace (0:
    /// nothing was overwritten).
    public var completeFromTsc: UInt64 = 0
    /// When the snapshot was asked for (TSC); 0 for a ring that is no snapshot.
    public var snapshotTsc: UInt64 = 0
    public var snapshotReasonRaw: UInt64 = 0
    /// The ring: snapshots written so far; a snapshot: its number.
    public var snapshotCount: UInt64 = 0

    public init() {}

    public var snapshotReason: SnapshotReason? { SnapshotReason(rawValue: snapshotReasonRaw) }
}

/// Every field of the 4096-byte header, as written (see docs/trace-format.md, "Header").
/// OS ids (pid, ppid, main_tid) are stored as u64 but are `pid_t`s: they are exposed as
/// `Int32` like `Event.tid`.
public struct TraceHeader: Sendable, Equatable {
    public var versionMajor: UInt16
    public var versionMinor: UInt16
    public var headerSize: UInt32
    public var chunkSize: UInt32
    public var ncpu: UInt32
    public var pid: Int32
    public var ppid: Int32
    public var initTsc: UInt64
    public var initMonoNs: UInt64
    public var initRealtimeNs: UInt64
    /// The end-of-run calibration pair, written by the process at exit or by `qtrace record`
    /// after it; 0 when neither happened.
    public var finalTsc: UInt64
    public var finalMonoNs: UInt64
    /// As written; the file may hold fewer (see `TraceFile.chunkCount`).
    public var chunksAllocated: UInt64
    public var droppedEvents: UInt64
    public var mainTid: Int32
    public var flags: TraceHeaderFlags
    public var mainQueue: UInt64
    /// Raw exit_status field; see `exitStatus`.
    public var exitStatusRaw: UInt64
    public var shimOverheadNs: UInt64
    /// TSC ticks per second as calibrated by the shim; 0 = compute from the pairs.
    public var tscHz: UInt64
    /// The ENQUEUE, START and END records among `droppedEvents`: recorded + dropped = submitted.
    public var droppedEnqueue: UInt64 = 0
    public var droppedStart: UInt64 = 0
    public var droppedEnd: UInt64 = 0
    /// The flight recorder's fields; nil unless the trace is a ring or a snapshot of one.
    public var ring: RingInfo?
    public var executablePath: String
    /// Arguments separated by single spaces, possibly truncated.
    public var commandLine: String

    /// The exit status recorded by `qtrace record` (128+N for signal N), nil if absent.
    public var exitStatus: Int32? {
        exitStatusRaw & TraceLayout.exitStatusPresent == 0 ? nil : Int32(truncatingIfNeeded: exitStatusRaw)
    }

    /// Whether the process itself finalized the trace at exit (rather than being killed).
    public var exitedNormally: Bool { flags.contains(.finalizedByProcess) }

    public var version: String { "\(versionMajor).\(versionMinor)" }

    /// Why `droppedEvents` could not be recorded, as the recorder noted it (nil: not said,
    /// as in traces written before 1.4's drop flags).
    public var dropReason: String? {
        if flags.contains(.droppedDiskFull) { return "disk full" }
        if flags.contains(.droppedSizeCap) { return "trace size limit reached" }
        if flags.contains(.droppedRingBusy) { return "every chunk of the flight-recorder ring in use (more threads than chunks: a larger --ring)" }
        return nil
    }

    public init(versionMajor: UInt16 = TraceLayout.versionMajor, versionMinor: UInt16 = TraceLayout.versionMinor,
                headerSize: UInt32 = UInt32(TraceLayout.headerSize), chunkSize: UInt32 = UInt32(TraceLayout.defaultChunkSize),
                ncpu: UInt32 = 1, pid: Int32 = 0, ppid: Int32 = 0,
                initTsc: UInt64 = 0, initMonoNs: UInt64 = 0, initRealtimeNs: UInt64 = 0,
                finalTsc: UInt64 = 0, finalMonoNs: UInt64 = 0, chunksAllocated: UInt64 = 0,
                droppedEvents: UInt64 = 0, mainTid: Int32 = 0, flags: TraceHeaderFlags = [],
                mainQueue: UInt64 = 0, exitStatusRaw: UInt64 = 0, shimOverheadNs: UInt64 = 0,
                tscHz: UInt64 = 0, executablePath: String = "", commandLine: String = "") {
        self.versionMajor = versionMajor; self.versionMinor = versionMinor
        self.headerSize = headerSize; self.chunkSize = chunkSize; self.ncpu = ncpu
        self.pid = pid; self.ppid = ppid
        self.initTsc = initTsc; self.initMonoNs = initMonoNs; self.initRealtimeNs = initRealtimeNs
        self.finalTsc = finalTsc; self.finalMonoNs = finalMonoNs; self.chunksAllocated = chunksAllocated
        self.droppedEvents = droppedEvents; self.mainTid = mainTid; self.flags = flags
        self.mainQueue = mainQueue; self.exitStatusRaw = exitStatusRaw
        self.shimOverheadNs = shimOverheadNs; self.tscHz = tscHz
        self.executablePath = executablePath; self.commandLine = commandLine
    }
}

/// One recorded thread: the chunks of one OS thread, in order. A tid the OS reused for a
/// later thread of the same process yields a second `ThreadInfo` with the same tid.
public struct ThreadInfo: Sendable, Equatable {
    public var tid: Int32
    /// The latest name: from THREAD_NAME records or the chunk headers (15 bytes max there).
    public var name: String?
    /// Time of the thread's first and last event (ns since trace start); both are the
    /// first chunk's claim time when the thread has no readable event.
    public var firstTime: UInt64
    public var lastTime: UInt64
    /// Events of known types the reader will deliver for this thread.
    public var eventCount: Int
    /// Chunks the thread wrote (skipped, unwritten chunks excluded).
    public var chunkCount: Int

    public init(tid: Int32, name: String?, firstTime: UInt64, lastTime: UInt64, eventCount: Int, chunkCount: Int) {
        self.tid = tid; self.name = name; self.firstTime = firstTime; self.lastTime = lastTime
        self.eventCount = eventCount; self.chunkCount = chunkCount
    }
}
