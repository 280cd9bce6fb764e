// Trace -> analysis -> report input, shared by `record`, `report` and `export`.
import QTraceAnalysis
import QTraceFormat
import QTraceReport

enum ReportGeneration {
    /// The report input of the trace at `path` (errors are one line, exit 2).
    static func input(tracePath path: String, command: String) throws -> ReportInput {
        let result = try analyseTrace(path, command: command)
        let header: TraceHeader
        do { header = try TraceFile(path: path).header } catch { throw fail(command, "cannot read trace '\(path)': \(error)") }
        return ReportInput(analysis: result, header: header, qtraceVersion: qtraceVersion)
    }

    /// Writes the HTML report of the first trace (one report per process).
    static func write(tracePaths: [String], to reportPath: String, progress: Bool) throws {
        guard let first = tracePaths.first else { return }
        let input = try input(tracePath: first, command: "record")
        try ReportWriter.write(input, to: reportPath)
    }
}
