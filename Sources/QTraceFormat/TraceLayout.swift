// Byte layout of the embedded trace format (docs/trace-format.md), shared by the reader and
// the writer so that both agree on every offset by construction.

/// Offsets and constants of trace format version 1.
public enum TraceLayout {
    /// `"QTRACE\0\0"` read as a little-endian u64.
    public static let fileMagic: UInt64 = 0x0000_4543_4152_5451
    public static let versionMajor: UInt16 = 1
    public static let versionMinor: UInt16 = 0
    /// The minor version of a file that holds the scheduler stream (SCHED_STATE records).
    public static let schedVersionMinor: UInt16 = 3
    /// Chunk tid of the scheduler stream: no OS thread has tid 0, so it cannot clash.
    public static let schedStreamTid: Int32 = 0
    /// The minor version of a file that holds the samples stream (STACK_FRAME, CPU_SAMPLE).
    public static let samplesVersionMinor: UInt16 = 5
    /// Chunk tid of the samples stream (`qtrace record --cpu`): -1 is no OS thread either.
    public static let samplesStreamTid: Int32 = -1
    /// Raw types of the compact ENQUEUE/START/END forms (format 1.2): each decodes to the
    /// same `Event` as its full form (type + 100).
    public static let compactEnqueueType: UInt8 = 120, compactStartType: UInt8 = 121, compactEndType: UInt8 = 122
    /// The compact ENQUEUE with a code site (format 1.4): queue bits 0..47, kind bits 48..51,
    /// site id bits 52..63.
    public static let compactSiteEnqueueType: UInt8 = 123
    /// The minor version written by a shim that records code identity.
    public static let codeIdentityVersionMinor: UInt16 = 4
    /// The minor version written by a shim that records async stacks (ASYNC_FRAME).
    public static let asyncStackVersionMinor: UInt16 = 7
    /// The minor version of a flight-recorder ring or its snapshot (header ring fields, chunk
    /// claim_seq, the metadata stream).
    public static let ringVersionMinor: UInt16 = 6
    /// Chunk tid of a ring's metadata area (records that name things, never overwritten).
    public static let metadataStreamTid: Int32 = -2
    public static let headerSize = 4096
    public static let defaultChunkSize = 65536
    /// `"QCHK"` read as a little-endian u32.
    public static let chunkMagic: UInt32 = 0x4B48_4351
    public static let chunkHeaderSize = 64
    public static let recordHeaderSize = 16
    /// Strings longer than this are truncated by the recorder (flags8 bit 7 set).
    public static let maxStringLength = 4096
    /// flags8 bit 7 of a record with a string: the string was truncated.
    public static let stringTruncatedFlag: UInt8 = 0x80
    /// Bit 63 of the header's exit_status: the status is present.
    public static let exitStatusPresent: UInt64 = 1 << 63

    /// Header field offsets.
    enum Header {
        static let magic = 0, versionMajor = 8, versionMinor = 10, headerSize = 12, chunkSize = 16
        static let ncpu = 20, pid = 24, ppid = 32, initTsc = 40, initMonoNs = 48, initRealtimeNs = 56
        static let finalTsc = 64, finalMonoNs = 72, chunksAllocated = 80, droppedEvents = 88
        static let mainTid = 96, flags = 104, mainQueue = 112, exitStatus = 120
        static let shimOverheadNs = 128, tscHz = 136
        static let droppedEnqueue = 144, droppedStart = 152, droppedEnd = 160
        // The flight recorder (1.6).
        static let ringBytes = 168, metadataChunks = 176, overwrittenEvents = 184, overwrittenChunks = 192
        static let completeFromTsc = 200, snapshotTsc = 208, snapshotReason = 216, snapshotCount = 224
        static let executablePath = 256, executablePathSize = 256
        static let commandLine = 512, commandLineSize = 1024
    }

    /// Chunk header field offsets.
    enum Chunk {
        static let magic = 0, threadSeq = 4, tid = 8, calibTsc = 16, calibMonoNs = 24
        static let threadName = 32, threadNameSize = 16
        /// A ring's chunks only: the order they were claimed in (reuse breaks file order).
        static let claimSeq = 48
    }
}

/// How a known record type lays out its payload: `words` u64 values, then optionally a string.
/// Mirrors Sources/CQTraceShim/qtrace_records.h (the source of truth; SchemaTests compares).
struct RecordLayout {
    let type: EventType
    let words: Int
    let hasString: Bool
    /// For the compact item records: which full form the decoded event takes.
    let compact: CompactItemRecord?
    /// A payload word added by format 1.4 after the `words` (the code site): read when the
    /// record is long enough, 0 in older records.
    let hasOptionalSite: Bool

    /// The smallest valid record length for this type before the string bytes.
    var fixedLength: Int { TraceLayout.recordHeaderSize + 8 * words + (hasString ? 4 : 0) }

    /// The payload words a writer emits: the optional site word included.
    var writtenWords: Int { words + (hasOptionalSite ? 1 : 0) }

    init(_ type: EventType) {
        self.type = type
        compact = nil
        switch type {
        case .enqueue, .applyBegin, .sourceSetHandler, .groupWaitEnd, .semWaitEnd, .onceEnd: hasOptionalSite = true
        default: hasOptionalSite = false
        }
        switch type {
        case .threadExit: words = 0; hasString = false
        case .threadName, .mark: words = 0; hasString = true
        case .threadStart, .suspend, .resume, .activate, .start, .end, .workItemPerform, .applyEnd,
             .applyIterStart, .applyIterEnd, .groupCreate, .groupEnter, .groupLeave, .groupWaitEnd,
             .semWaitEnd, .semSignal, .sourceSetHandler, .sourceCancel, .sourceHandlerEnd,
             .ioHandlerEnd, .ioBarrier, .ioClose, .ioCleanupBegin, .ioCleanupEnd, .intervalEnd,
             .onceBegin, .onceEnd:
            words = 1; hasString = false
        case .queueInfo, .intervalBegin: words = 1; hasString = true
        case .setTarget, .workItemCreate, .groupWaitBegin, .semCreate, .semWaitBegin,
             .sourceHandlerBegin, .sourceMergeData, .ioHandlerBegin, .deadlock, .stackFrame, .asyncFrame,
             .operationDependency:
            words = 2; hasString = false
        case .queueCreate, .operation: words = 2; hasString = true
        case .ioCreate: words = 3; hasString = true
        case .enqueue, .applyBegin, .schedState, .cpuSample, .continuation, .runLoopTimerFire: words = 3; hasString = false
        case .sourceCreate, .sourceSetTimer, .ioRead, .ioWrite, .site, .job, .actorHop, .runLoopTimer:
            words = 4; hasString = false
        case .module: words = 3; hasString = true
        case .buildID, .actorType: words = 1; hasString = true
        }
    }

    init(compact: CompactItemRecord) {
        self.compact = compact
        hasString = false
        hasOptionalSite = false
        switch compact {
        case .enqueue, .siteEnqueue: type = .enqueue; words = 1
        case .start: type = .start; words = 0
        case .end: type = .end; words = 0
        }
    }

    /// Layouts indexed by the raw type byte; nil for types this reader does not know.
    static let table: [RecordLayout?] = {
        var table = [RecordLayout?](repeating: nil, count: 256)
        for type in EventType.allCases { table[Int(type.rawValue)] = RecordLayout(type) }
        table[Int(TraceLayout.compactEnqueueType)] = RecordLayout(compact: .enqueue)
        table[Int(TraceLayout.compactStartType)] = RecordLayout(compact: .start)
        table[Int(TraceLayout.compactEndType)] = RecordLayout(compact: .end)
        table[Int(TraceLayout.compactSiteEnqueueType)] = RecordLayout(compact: .siteEnqueue)
        return table
    }()
}

/// The compact work item records (docs/trace-format.md, "Compact work item records"): the
/// 32-bit id is word 0's arg; ENQUEUE_C's one payload word is the queue with the kind in its
/// top byte; START_C's flags8 is the kind. `TraceBytes.decodeEvent` gives each its full
/// form's event.
enum CompactItemRecord {
    case enqueue, start, end, siteEnqueue
}

extension EventType {
    /// Number of u64 payload words before the string (see the record tables).
    public var payloadWordCount: Int { RecordLayout(self).words }
    /// Whether records of this type end with a string.
    public var hasString: Bool { RecordLayout(self).hasString }
}
