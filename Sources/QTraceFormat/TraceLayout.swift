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
    // The raw types of the compact ENQUEUE/START/END forms (format 1.2; compactEnqueueType,
    // ...) are generated from the record list, each decoding to its full form's `Event`.
    /// The minor version written by a shim that records code identity.
    public static let codeIdentityVersionMinor: UInt16 = 4
    /// The minor version written by a shim that records async stacks (ASYNC_FRAME).
    public static let asyncStackVersionMinor: UInt16 = 7
    /// The minor version written by a shim that records function items without a slot
    /// (ENQUEUE_F, START_F, END_F).
    public static let slotlessVersionMinor: UInt16 = 8
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

/// One record type as Sources/CQTraceShim/qtrace_records.h lists it: the generated
/// `RecordSchema.all` holds every type, the compact forms included.
struct RecordSchema: Sendable {
    let number: UInt8
    /// The list's upper-case name, e.g. `QUEUE_CREATE`.
    let name: String
    /// The payload words' names, as docs/trace-format.md and `qtrace dump` call them.
    let wordNames: [String]
    /// A payload word added by format 1.4 after the others (the code site).
    let hasOptionalSite: Bool
    let hasString: Bool

    var words: Int { wordNames.count }

    /// The list's record types indexed by the raw type byte; nil for numbers it does not use.
    static let byNumber: [RecordSchema?] = {
        var table = [RecordSchema?](repeating: nil, count: 256)
        for schema in all { table[Int(schema.number)] = schema }
        return table
    }()

    /// The schema of a type of the list.
    static func of(_ type: EventType) -> RecordSchema {
        guard let schema = byNumber[Int(type.rawValue)] else { preconditionFailure("\(type) is not in the record list") }
        return schema
    }
}

/// How a known record type lays out its payload: `words` u64 values, then optionally a string.
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
        words = type.payloadWordCount
        hasString = type.hasString
        hasOptionalSite = type.hasOptionalSiteWord
    }

    init(compact: CompactItemRecord) {
        let schema = RecordSchema.byNumber[Int(compact.rawValue)]!
        self.compact = compact
        type = compact.fullForm
        words = schema.words
        hasString = schema.hasString
        hasOptionalSite = schema.hasOptionalSite
    }

    /// Layouts indexed by the raw type byte; nil for types this reader does not know.
    static let table: [RecordLayout?] = {
        var table = [RecordLayout?](repeating: nil, count: 256)
        for type in EventType.allCases { table[Int(type.rawValue)] = RecordLayout(type) }
        for compact in CompactItemRecord.allCases { table[Int(compact.rawValue)] = RecordLayout(compact: compact) }
        return table
    }()
}

/// The compact work item records (docs/trace-format.md, "Compact work item records"): the
/// 32-bit id is word 0's arg; ENQUEUE_C's one payload word is the queue with the kind in its
/// top byte; START_C's flags8 is the kind. `TraceBytes.decodeEvent` gives each its full
/// form's event.
/// The slot-less function item records (1.8: ENQUEUE_F, START_F, END_F) decode to their full
/// forms too, but carry no id to START and END: `SlotlessPairing` gives them theirs.
enum CompactItemRecord: CaseIterable {
    case enqueue, start, end, siteEnqueue
    case slotlessEnqueue, slotlessStart, slotlessEnd

    /// The record's raw type.
    var rawValue: UInt8 {
        switch self {
        case .enqueue: TraceLayout.compactEnqueueType
        case .start: TraceLayout.compactStartType
        case .end: TraceLayout.compactEndType
        case .siteEnqueue: TraceLayout.compactSiteEnqueueType
        case .slotlessEnqueue: TraceLayout.slotlessEnqueueType
        case .slotlessStart: TraceLayout.slotlessStartType
        case .slotlessEnd: TraceLayout.slotlessEndType
        }
    }

    /// The type of the event it decodes to.
    var fullForm: EventType {
        switch self {
        case .enqueue, .siteEnqueue, .slotlessEnqueue: .enqueue
        case .start, .slotlessStart: .start
        case .end, .slotlessEnd: .end
        }
    }
}

extension EventType {
    // payloadWordCount, hasOptionalSiteWord and hasString are generated.
    /// The payload words' names, in order, as docs/trace-format.md and `qtrace dump` call them.
    public var payloadWordNames: [String] { RecordSchema.of(self).wordNames }
}
