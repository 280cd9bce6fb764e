import ArgumentParser
import QTraceAnalysis
import QTraceText

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Per-queue, per-code and per-thread statistics and findings for a trace.",
        discussion: """
        Prints tables sized to the terminal (--wide: never shortened). --json writes the \
        versioned summary (docs/summary-schema.md) instead, to stdout or to -o FILE.

        Code is named by symbol and file:line: the recorded addresses are symbolized with the \
        toolchain's llvm-symbolizer and swift-demangle, cached by build-id in \
        $XDG_CACHE_HOME/qtrace/symbols (QTRACE_SYMBOLIZE=0 shows addresses; docs/symbols.md).

        TRACE is a .qtrace file or a directory holding an LTTng trace (also one recorded with \
        your own lttng commands, or an lttng-relayd's output). The tables are printed for each \
        process in it; --json describes one process: choose it with --pid when there are several.
        """)

    @Argument(help: "The trace file (.qtrace) or LTTng trace directory.")
    var trace: String

    @Option(help: ArgumentHelp("The process to describe, in a trace directory with several.", valueName: "pid"))
    var pid: Int32?

    @Flag(help: "Write the JSON summary instead of tables.")
    var json = false

    @Option(name: .shortAndLong, help: "Write the output to FILE instead of stdout (- is stdout; a file is renamed into place once complete, a symlink there is replaced).")
    var output: String?

    @Flag(help: "Show every queue and thread, not the busiest 20.")
    var all = false

    @Flag(help: "Never shorten names to fit the terminal (tables as wide as their longest cell).")
    var wide = false

    @Option(help: ArgumentHelp(
        "The tables to print: queue (queues, threads, the top code and tasks), code (every code site: what ran, where it was enqueued from, and the blocking call sites) or task (Swift Concurrency tasks).",
        valueName: "queue|code|task"))
    var by: StatsGrouping = .queue

    func run() throws {
        Interruption.install(command: "stats")
        let inputs = try TraceInputs.open([trace], command: "stats")
        defer { inputs.removeTemporaryFiles() }
        if json || pid != nil || inputs.processes.count == 1 {
            let process = try inputs.single(pid: pid, command: "stats")
            let text = try render(process)
            ProgressLine.shared.finish()
            try writeOutput(text, to: output, command: "stats")
            return
        }
        // Several processes: each one's tables under a heading naming it.
        var text = ""
        for process in inputs.processes {
            let name = "process \(process.pid.map(String.init) ?? "?")" + (process.host.isEmpty ? "" : " @ \(process.host)")
            text += "== \(name) ==\n" + (try render(process)) + "\n"
        }
        ProgressLine.shared.finish()
        try writeOutput(text, to: output, command: "stats")
    }

    private func render(_ process: TraceInput) throws -> String {
        let result = try analyseTrace(process, command: "stats")
        ProgressLine.shared.phase("writing the summary")
        if json {
            let summary = AnalysisSummary(result: result, tracePath: trace, generator: "qtrace \(qtraceVersion)")
            return String(decoding: try summary.jsonData(), as: UTF8.self) + "\n"
        }
        return StatsText.render(result, tracePath: trace, width: wide ? Int.max / 2 : (output == nil ? terminalWidth() : 120), limit: all ? 0 : 20, by: by)
    }
}
extension StatsGrouping: ExpressibleByArgument {}
