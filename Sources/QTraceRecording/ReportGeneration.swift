// Traces -> analysis -> report input, shared by `record`, `report` and `export`.
import QTraceAnalysis
import QTraceFormat
import QTraceReport
import QTraceViewModel

/// The version reports, summaries and `qtrace --version` name.
public let qtraceVersion = "0.1.0"

public enum ReportGeneration {
    /// The report input of every process the paths name (.qtrace files, LTTng trace
    /// directories; errors are one line, exit 2): each process is analysed on its own, and
    /// several are merged into one report with a lane group per process.
    public static func input(tracePaths: [String], command: String) throws -> ReportInput {
        let inputs = try TraceInputs.open(tracePaths, command: command)
        defer { inputs.removeTemporaryFiles() }
        let perProcess = try inputs.processes.map { try input(process: $0, command: command) }
        return ReportInput.merged(perProcess)
    }

    /// The report input of one process; `analysed` sees its analysis (record's summary line).
    public static func input(process: TraceInput, command: String,
                      analysed: (AnalysisResult) -> Void = { _ in }) throws -> ReportInput {
        let file = try openTrace(process.path, named: process.source, command: command)
        let analysis = analyse(file, command: command)
        analysed(analysis)
        ProgressLine.shared.phase("preparing the report")
        // Consumed, not copied: the report's item columns are built while the model's items
        // are released, which needs the only reference to them.
        let started = Phases.start()
        let input = ReportInput(analysis: consume analysis, header: file.header, qtraceVersion: qtraceVersion,
                                host: process.host)
        Phases.end("report: input from the analysis", started)
        return input
    }

    /// Writes one HTML report of all the traces of a recording (the program and every child
    /// process that used Dispatch, a lane group each).
    /// A child's trace that cannot be read (the error is printed) is left out of the report
    /// rather than costing the program's own. `analysed` is told each trace's analysis.
    public static func write(tracePaths: [String], to reportPath: String, progress: Bool,
                      analysed: (String, AnalysisResult) -> Void = { _, _ in }) throws {
        guard let main = tracePaths.first else { return }
        defer { ProgressLine.shared.finish() }
        var perProcess = [try input(process: process(main), command: "record") { analysed(main, $0) }]
        for path in tracePaths.dropFirst() {
            do { perProcess.append(try input(process: process(path), command: "record") { analysed(path, $0) }) } catch {}
        }
        ProgressLine.shared.phase("writing the report")
        // The per-process inputs are dropped once merged (one process: it is the report's
        // input), so that the writer holds the only reference to the item columns.
        var input: ReportInput? = ReportInput.merged(perProcess)
        perProcess = []
        try writeFile(reportPath) { try ReportWriter.write(input.take()!, to: $0) }
    }

    /// A .qtrace file that `qtrace record` wrote here.
    private static func process(_ path: String) -> TraceInput {
        TraceInput(path: path, source: path, pid: nil, host: TraceInputs.localHostName)
    }
}
