// QTrace: link qtrace's recorder into an app instead of preloading it, and annotate the trace.
//
// An app that depends on this library contains the shim: its Dispatch calls are recorded when
// the app runs under `qtrace record -- ./app` (or with QTRACE_OUTPUT=path set), or after
// `QTrace.start()`. Otherwise it runs untraced and every call here does nothing.
import CQTraceShim

public enum QTrace {
    /// Whether this process is recording (or will on its first Dispatch call).
    public static var isEnabled: Bool { qtrace_is_enabled() != 0 }

    /// Starts recording into `path` (default: $QTRACE_OUTPUT or ./qtrace-PID.qtrace).
    /// Returns false when the file could not be created.
    @discardableResult
    public static func start(path: String? = nil) -> Bool {
        if let path { return path.withCString { qtrace_start($0) } == 0 }
        return qtrace_start(nil) == 0
    }

    /// The trace being written, if any.
    public static var tracePath: String? { qtrace_trace_path().map { String(cString: $0) } }

    /// Events that could not be recorded (trace full).
    public static var droppedEvents: UInt64 { qtrace_dropped_events() }

    /// An instant event, like os_signpost(.event, ...).
    public static func mark(_ name: String) { name.withCString { qtrace_mark($0) } }

    /// Names the calling thread in the trace.
    public static func nameThread(_ name: String) { name.withCString { qtrace_name_thread($0) } }

    /// Measures `body` as a named interval, like os_signpost(.begin/.end, ...).
    @discardableResult
    public static func interval<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        let interval = Interval(name)
        defer { interval.end() }
        return try body()
    }

    /// An interval that is ended explicitly (e.g. from a completion handler on another thread).
    public struct Interval: Sendable {
        public let id: UInt64
        public init(_ name: String) { id = name.withCString { qtrace_interval_begin($0) } }
        public func end() { qtrace_interval_end(id) }
    }

    /// Writes the end-of-run data now (done automatically at exit).
    public static func finish() { qtrace_finish() }
}
