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

        perfetto: Perfetto's own protobuf format (.pftrace; docs/perfetto.md), several times smaller \
        and faster to load: a thread track per thread with each item as a slice named by its code \
        (args: queue, item id, kind, wait, where it was enqueued), flows from each enqueue to its \
        start and between a Swift task's jobs, a track per queue with running and pending items, \
        thread-count and backlog counters, QTrace marks and intervals, blocked time, --sched thread \
        states and findings. Query it with trace_processor.

        TRACE is a .qtrace file or an LTTng trace directory; several traces (or a directory with several processes) export as one file with a process per traced process.
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case chromeJSON = "chrome-json", perfetto

        var fileExtension: String { self == .perfetto ? ".pftrace" : ".json" }
        var phase: String { self == .perfetto ? "writing the Perfetto trace" : "writing the Chrome trace" }
    }

    @Argument(help: ArgumentHelp("The traces (.qtrace files or LTTng trace directories).", valueName: "trace"))
    var traces: [String]

    @Option(name: .long, help: "Output format (chrome-json, perfetto).")
    var format: Format = .chromeJSON

    @Option(name: [.short, .long], help: ArgumentHelp("File to write (default: TRACE with .json, or .pftrace for perfetto).", valueName: "file"))
    var output: String?

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("missing trace: use qtrace export TRACE [TRACE...]") }
    }

    func run() throws {
        let trace = Report.withoutTrailingSlash(traces[0])
        let base = trace.hasSuffix(".qtrace") ? String(trace.dropLast(7)) : trace
        let path = output ?? base + format.fileExtension
        Interruption.install(command: "export")
        let input = try ReportGeneration.input(tracePaths: traces, command: "export")
        ProgressLine.shared.phase(format.phase)
        do {
            try writeAtomically(path) { file in
                switch format {
                case .chromeJSON: try ReportWriter.exportChromeJSON(input, to: file)
                case .perfetto: try ReportWriter.exportPerfetto(input, to: file)
                }
            }
        } catch {
            ProgressLine.shared.finish()
            throw fail("export", "cannot write '\(path)': \(error)")
        }
        ProgressLine.shared.finish()
        writeStderr("qtrace: exported: \(path)\n")
    }
}
