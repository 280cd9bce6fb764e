// The exports of a report's data for other viewers: Chrome's trace-event JSON and Perfetto's
// protobuf trace, each to a path ("-": standard output) or into an OutputFile the caller commits.
import QTraceFormat
import QTraceViewModel

public enum TraceExport {
    /// Writes the Chrome trace-event JSON (`qtrace export --format chrome-json`) that Perfetto
    /// UI and chrome://tracing open.
    public static func chromeJSON(_ input: ReportInput, to path: String) throws {
        let file = try OutputFile(path: path)
        try chromeJSON(input, to: file)
        try file.commit()
    }

    /// Writes the Chrome trace-event JSON into `file`; the caller commits it.
    public static func chromeJSON(_ input: ReportInput, to file: OutputFile) throws {
        try ChromeTraceExporter(input: input).write(to: file)
    }

    /// Writes Perfetto's protobuf trace (`qtrace export --format perfetto`, docs/perfetto.md).
    /// `compress: false` leaves the packets uncompressed (for measuring what compression saves).
    @discardableResult
    public static func perfetto(_ input: ReportInput, to path: String, compress: Bool = true) throws -> PerfettoExportSummary {
        let file = try OutputFile(path: path)
        let summary = try perfetto(input, to: file, compress: compress)
        try file.commit()
        return summary
    }

    /// Writes Perfetto's protobuf trace into `file`; the caller commits it.
    @discardableResult
    public static func perfetto(_ input: ReportInput, to file: OutputFile, compress: Bool = true) throws -> PerfettoExportSummary {
        try PerfettoExporter(input: input, compress: compress).write(to: file)
    }
}
