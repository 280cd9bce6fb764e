// `qtrace report`: the static HTML report of an existing trace.
import ArgumentParser
import QTraceReport

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the self-contained HTML report of a trace.",
        discussion: """
        The report is one file that opens offline in Chromium or Firefox (no server, no network
        request): a timeline of threads and queues, per-queue and per-thread statistics with
        histograms, the findings, and a replay of the run in the style of the GCD talks.
        """
    )

    @Argument(help: ArgumentHelp("The trace file (.qtrace).", valueName: "trace"))
    var trace: String

    @Option(name: [.short, .long], help: ArgumentHelp("Report file to write (default: TRACE with .html).", valueName: "file"))
    var output: String?

    func run() throws {
        let path = output ?? Record.reportPath(for: trace)
        let input = try ReportGeneration.input(tracePath: trace, command: "report")
        do {
            try ReportWriter.write(input, to: path)
        } catch {
            throw fail("report", "cannot write '\(path)': \(error)")
        }
        writeStderr("qtrace: report: \(path)\n")
    }
}
