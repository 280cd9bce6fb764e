// `qtrace export`: the trace in another tool's format.
import ArgumentParser
import QTraceReport

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export a trace for other viewers.",
        discussion: """
        chrome-json: the Chrome trace-event format, opened by Perfetto's UI (ui.perfetto.dev, \
        "Open trace file") and chrome://tracing: one track per thread with a slice per work item, \
        flow arrows from where an item was enqueued to where it ran, and counters for the \
        thread count and queue backlogs.

        TRACE is a .qtrace file or an LTTng trace directory; several traces (or a directory with several processes) export as one file with a process per traced process.
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case chromeJSON = "chrome-json" }

    @Argument(help: ArgumentHelp("The traces (.qtrace files or LTTng trace directories).", valueName: "trace"))
    var traces: [String]

    @Option(name: .long, help: "Output format (chrome-json).")
    var format: Format = .chromeJSON

    @Option(name: [.short, .long], help: ArgumentHelp(
        "File to write (default: TRACE with .json; - for stdout). It is written beside under a temporary name and renamed into place: a symlink there is replaced, never followed.",
        valueName: "file"))
    var output: String?

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("missing trace: use qtrace export TRACE [TRACE...]") }
    }

    func run() throws {
        let trace = Report.withoutTrailingSlash(traces[0])
        let base = trace.hasSuffix(".qtrace") ? String(trace.dropLast(7)) : trace
        let path = output ?? base + ".json"
        Interruption.install(command: "export")
        let input = try ReportGeneration.input(tracePaths: traces, command: "export")
        ProgressLine.shared.phase("writing the Chrome trace")
        try writeOutputFile(path, command: "export") { try ReportWriter.exportChromeJSON(input, to: $0) }
        ProgressLine.shared.finish()
        if let shown = announcedPath(path) { writeStderr("qtrace: exported: \(shown)\n") }
    }
}
