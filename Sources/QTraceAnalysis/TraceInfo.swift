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
    }
}
