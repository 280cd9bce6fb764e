// What the analysis needs to know about a trace besides its events: the header facts.
// The CLI fills it from the reader's TraceHeader; tests build it by hand.
import QTraceFormat

public struct TraceInfo: Sendable, Codable, Equatable {
    public var pid: Int
    /// Online CPUs when tracing started (thread-explosion rule compares workers to it).
    public var ncpu: Int
    public var mainTid: Int32
    /// Address of the main queue (0 when unknown).
    public var mainQueue: UInt64
    public var droppedEvents: UInt64
    /// Why they were dropped ("disk full", "trace size limit reached"), when the trace says.
    public var dropReason: String?
    /// Records the reader dropped as inconsistent (TraceFile.invalidRecordCount): non-zero
    /// means the trace lies somewhere, and the analysis saw only its valid part.
    public var invalidEvents = 0
    /// Chunks the reader found damaged (TraceFile.damagedChunkCount): a bad magic or framing.
    public var damagedChunks = 0
    /// Measured cost of recording one event, in ns.
    public var shimOverheadNs: UInt64
    /// CLOCK_MONOTONIC / CLOCK_REALTIME at trace start: convert dispatch_time_t deadlines.
    public var initMonoNs: UInt64
    public var initRealtimeNs: UInt64
    /// Trace length in ns when the process exited normally (final_mono_ns - init_mono_ns).
    public var durationNs: UInt64?
    public var executable: String
    public var commandLine: String
    /// Thread names known from chunk headers, by tid.
    public var threadNames: [Int32: String]
    /// A flight-recorder ring or snapshot (`qtrace record --ring`): which window it holds.
    public var flightRecorder: FlightRecorderWindow?

    public init(pid: Int = 0, ncpu: Int = 1, mainTid: Int32 = 0, mainQueue: UInt64 = 0, droppedEvents: UInt64 = 0,
                shimOverheadNs: UInt64 = 0, initMonoNs: UInt64 = 0, initRealtimeNs: UInt64 = 0,
                durationNs: UInt64? = nil, executable: String = "", commandLine: String = "",
                threadNames: [Int32: String] = [:]) {
        self.pid = pid; self.ncpu = ncpu; self.mainTid = mainTid; self.mainQueue = mainQueue
        self.droppedEvents = droppedEvents; self.shimOverheadNs = shimOverheadNs
        self.initMonoNs = initMonoNs; self.initRealtimeNs = initRealtimeNs; self.durationNs = durationNs
        self.executable = executable; self.commandLine = commandLine; self.threadNames = threadNames
    }
}

/// Converts libdispatch `dispatch_time_t` values (deadlines, timer starts, timeouts) to trace
/// time (ns since the trace started).
///
/// Encoding (swift-corelibs-libdispatch src/shims/time.h): 0 = now, ~0 = forever; top two bits
/// clear = uptime clock, which on Linux is CLOCK_MONOTONIC; bit 63 set and bit 62 clear =
/// "monotonic" clock (CLOCK_BOOTTIME on Linux, taken as CLOCK_MONOTONIC: they differ only
/// across a machine suspend); both bits set = wall clock, stored negated.
public struct DispatchTimeConverter: Sendable {
    public var initMonoNs: UInt64
    public var initRealtimeNs: UInt64

    public init(initMonoNs: UInt64, initRealtimeNs: UInt64) {
        self.initMonoNs = initMonoNs; self.initRealtimeNs = initRealtimeNs
    }

    /// The trace time of `raw`, or nil for DISPATCH_TIME_FOREVER. `now` is used for
    /// DISPATCH_TIME_NOW. Times before the trace started are clamped to 0.
    public func traceTime(_ raw: UInt64, now: UInt64) -> UInt64? {
        if raw == ~0 { return nil }
        if raw == 0 { return now }
        let upOrMonotonic: UInt64 = 1 << 63, wall: UInt64 = 1 << 62
        if raw & upOrMonotonic == 0 { return raw >= initMonoNs ? raw - initMonoNs : 0 }
        if raw & wall != 0 {
            if raw == ~1 { return now } // DISPATCH_WALLTIME_NOW
            let ns = 0 &- raw
            return ns >= initRealtimeNs ? ns - initRealtimeNs : 0
        }
        let ns = raw & ~upOrMonotonic
        return ns >= initMonoNs ? ns - initMonoNs : 0
    }
}

extension TraceInfo {
    /// The analysis' view of a trace file's header (and thread names from its chunks).
    public init(file: TraceFile) {
        let h = file.header
        var names: [Int32: String] = [:]
        for t in file.threads { if let name = t.name, !name.isEmpty { names[t.tid] = name } }
        self.init(pid: Int(h.pid), ncpu: Int(Swift.max(h.ncpu, 1)), mainTid: h.mainTid, mainQueue: h.mainQueue,
                  droppedEvents: h.droppedEvents, shimOverheadNs: h.shimOverheadNs, initMonoNs: h.initMonoNs,
                  initRealtimeNs: h.initRealtimeNs, durationNs: file.endTime, executable: h.executablePath,
                  commandLine: h.commandLine, threadNames: names)
        dropReason = h.dropReason
        invalidEvents = file.invalidRecordCount
        damagedChunks = file.damagedChunkCount
        if let ring = h.ring { flightRecorder = FlightRecorderWindow(ring: ring, clock: file.clock, endNs: file.endTime) }
    }
}

/// What a flight-recorder trace holds: the most recent events of a ring of `ringBytes`, all of
/// them from `completeFromNs` on (earlier ones in part: some threads' chunks were reused), up
/// to the snapshot (docs/flight-recorder.md). Times are ns since the trace started.
public struct FlightRecorderWindow: Sendable, Codable, Equatable {
    public var ringBytes: UInt64
    /// The snapshot's number (TRACE.snapshot-N.qtrace); 0: the ring itself (kept at exit, or
    /// left by a program that crashed).
    public var snapshot: Int
    /// "asked for (signal / qtrace snapshot)", "deadlock detected", ...; nil: no snapshot.
    public var reason: String?
    /// When the snapshot was asked for; nil for the ring itself.
    public var askedAtNs: UInt64?
    /// Every event from here on is in the trace (0: nothing was overwritten).
    public var completeFromNs: UInt64
    public var endNs: UInt64
    public var overwrittenEvents: UInt64
    public var overwrittenChunks: UInt64

    public init(ringBytes: UInt64, snapshot: Int = 0, reason: String? = nil, askedAtNs: UInt64? = nil,
                completeFromNs: UInt64 = 0, endNs: UInt64 = 0, overwrittenEvents: UInt64 = 0, overwrittenChunks: UInt64 = 0) {
        self.ringBytes = ringBytes; self.snapshot = snapshot; self.reason = reason; self.askedAtNs = askedAtNs
        self.completeFromNs = completeFromNs; self.endNs = endNs
        self.overwrittenEvents = overwrittenEvents; self.overwrittenChunks = overwrittenChunks
    }

    init(ring: RingInfo, clock: TraceClock, endNs: UInt64?) {
        // The ring kept at exit ended with the program: it is no snapshot of a running one.
        let isSnapshot = ring.snapshotTsc != 0 && ring.snapshotReason != .exit
        self.init(ringBytes: ring.ringBytes, snapshot: isSnapshot ? Int(clamping: ring.snapshotCount) : 0,
                  reason: ring.snapshotReason?.description, askedAtNs: isSnapshot ? clock.time(ofTSC: ring.snapshotTsc) : nil,
                  completeFromNs: ring.completeFromTsc == 0 ? 0 : clock.time(ofTSC: ring.completeFromTsc),
                  endNs: endNs ?? 0, overwrittenEvents: ring.overwrittenEvents, overwrittenChunks: ring.overwrittenChunks)
    }

    /// The span of which every event is in the trace.
    public var completeNs: UInt64 { endNs > completeFromNs ? endNs - completeFromNs : 0 }

    /// One line: "flight recorder snapshot 2 (deadlock detected) at 12.40 s: ..." (stats, record).
    public var summaryLine: String {
        let what = snapshot > 0 ? "flight recorder snapshot \(snapshot)" : "flight recorder ring"
        let why = reason.map { " (\($0))" } ?? ""
        let at = askedAtNs.map { " at \(formatDuration($0))" } ?? ""
        let window = overwrittenEvents == 0
            ? "holds the whole run (nothing overwritten)"
            : "complete from \(formatDuration(completeFromNs)) to \(formatDuration(endNs)) (\(formatDuration(completeNs))), \(overwrittenEvents) earlier events overwritten"
        return "\(what)\(why)\(at): \(window); ring \(ringBytes / 1024) KiB"
    }
}
