// `qtrace report`: the static HTML report of existing traces.
import ArgumentParser
import QTraceAnalysis
import QTraceReport
import QTraceRecording
import QTraceViewModel

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the self-contained HTML report of a trace.",
        discussion: """
        The report is one file that opens offline in Chromium or Firefox (no server, no network \
        request): a timeline of threads and queues, per-queue and per-thread statistics with \
        histograms, the findings, and a replay of the run in the style of the GCD talks.

        A trace is a .qtrace file or a directory holding an LTTng trace (qtrace record \
        --backend lttng's TRACE.lttng, a session recorded with your own lttng commands, or an \
        lttng-relayd's output directory). Several traces, or a trace of several processes, make \
        one report with a lane group per process, on a common time axis (each process's \
        wall-clock start).
          qtrace report run.qtrace run.4242.qtrace -o both.html
          qtrace report ~/lttng-traces/HOST/SESSION-20260101-120000
        """
    )

    @Argument(help: ArgumentHelp("The traces (.qtrace files or LTTng trace directories).", valueName: "trace"))
    var traces: [String]

    @Option(name: [.short, .long], help: ArgumentHelp(
        "Report file to write (default: the first TRACE with .html; - for stdout). It is written beside under a temporary name and renamed into place: a symlink there is replaced, never followed.",
        valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp(
        "Swift modules that are the program's own code (comma-separated): a Swift job is named by the first frame of its async stack in them. Default: code outside the toolchain and outside package checkouts (.build/checkouts). Also QTRACE_FOCUS.",
        valueName: "modules"))
    var focus: String?

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("missing trace: use qtrace report TRACE [TRACE...]") }
    }

    func run() throws {
        Interruption.install(command: "report")
        applyFocus(focus)
        let path = output ?? RecordingFiles.reportPath(for: Report.withoutTrailingSlash(traces[0]))
        // Taken out when written, so that the writer holds the only reference to the item
        // columns and frees each as soon as it is written.
        var input: ReportInput? = try ReportGeneration.input(tracePaths: traces, command: "report")
        ProgressLine.shared.phase("writing the report")
        try Phases.time("report: writing (total)") {
            try writeOutputFile(path, command: "report") { try ReportWriter.write(input.take()!, to: $0) }
        }
        ProgressLine.shared.finish()
        if let shown = announcedPath(path) { writeStderr("qtrace: report: \(shown)\n") }
    }

    /// "dir/" -> "dir", so that a directory's report is dir.html beside it.
    static func withoutTrailingSlash(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
