import ArgumentParser
import QTraceAnalysis
import QTraceText

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two runs queue by queue (items, wait and run p50/p99).",
        discussion: """
        A and B are traces (.qtrace files or LTTng trace directories of one process) or JSON \
        summaries (`qtrace stats --json [--pid PID]`), so a run can be compared with a stored \
        baseline. Queues are matched by label. A write error on stdout is one line on stderr \
        and exit status 2.
        """)

    @Argument(help: "The baseline run (trace or JSON summary).")
    var base: String

    @Argument(help: "The run to compare with it.")
    var new: String

    func run() throws {
        let a = try loadSummary(base, command: "diff")
        let b = try loadSummary(new, command: "diff")
        try writeOutput(DiffText.render(RunComparison(base: a, new: b), width: terminalWidth()), to: nil, command: "diff")
    }
}
