import ArgumentParser
import QTraceAnalysis

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Per-queue and per-thread statistics and findings for a trace.",
        discussion: """
        Prints tables sized to the terminal. --json writes the versioned summary \
        (docs/summary-schema.md) instead, to stdout or to -o FILE.
        """)

    @Argument(help: "The trace file.")
    var trace: String

    @Flag(help: "Write the JSON summary instead of tables.")
    var json = false

    @Option(name: .shortAndLong, help: "Write the output to FILE instead of stdout.")
    var output: String?

    @Flag(help: "Show every queue and thread, not the busiest 20.")
    var all = false

    func run() throws {
        let result = try analyseTrace(trace, command: "stats")
        if json {
            let summary = AnalysisSummary(result: result, tracePath: trace, generator: "qtrace \(qtraceVersion)")
            try writeOutput(String(decoding: try summary.jsonData(), as: UTF8.self) + "\n", to: output, command: "stats")
            return
        }
        let text = StatsText.render(result, tracePath: trace, width: output == nil ? terminalWidth() : 120,
                                    limit: all ? 0 : 20)
        try writeOutput(text, to: output, command: "stats")
    }
}
