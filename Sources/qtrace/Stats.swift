import ArgumentParser
import QTraceAnalysis
import QTraceText
import QTraceRecording

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Per-queue, per-code and per-thread statistics and findings for a trace.",
        discussion: """
        Prints tables sized to the terminal ($COLUMNS when set); into a file or a pipe (> FILE, \
        | grep, -o FILE) names are printed whole, as with --wide. --json writes the \
        versioned summary (docs/summary-schema.md) instead, to stdout or to -o FILE.

        Code is named by symbol and file:line: the recorded addresses are symbolized with the \
        toolchain's llvm-symbolizer and swift-demangle, cached by build-id (a module without \
        one by its path, size and modification time) in $XDG_CACHE_HOME/qtrace/symbols \
        (QTRACE_SYMBOLIZE=0 shows addresses; docs/symbols.md).

        A big trace is read on two threads when a CPU is idle (the same results, sooner); \
        QTRACE_DECODE_THREAD=0 reads it on one.

        TRACE is a .qtrace file, a directory of them (a recording's folder), or a directory \
        holding an LTTng trace (also one recorded with your own lttng commands, or an \
        lttng-relayd's output). A recording's main trace name also stands for its children's \
        TRACE.PID.qtrace files when the program itself made no Dispatch call.

        Several processes (several TRACEs, a directory, a multi-process LTTng trace) print a \
        PROCESSES table, a total and the findings of all of them grouped (the same rule on the \
        same code site or queue in the same executable is one line with a count and the worst \
        case), then the busiest process's tables (--all: every process's). --json then writes a \
        recording summary (each process's summary and the overview); --pid selects one process.
          qtrace stats build.qtrace build.*.qtrace
          qtrace stats out/
        """)

    @Argument(help: ArgumentHelp("The traces: .qtrace files, directories of them, or LTTng trace directories.", valueName: "trace"))
    var traces: [String]

    @Option(help: ArgumentHelp("The process to describe, in a trace directory with several.", valueName: "pid"))
    var pid: Int32?

    @Flag(help: "Write the JSON summary instead of tables.")
    var json = false

    @Option(name: .shortAndLong, help: "Write the output to FILE instead of stdout (- is stdout; a file is renamed into place once complete, a symlink there is replaced).")
    var output: String?

    @Flag(help: "Show every queue and thread, not the busiest 20; with several processes, every process's tables, not the busiest one's.")
    var all = false

    @Flag(help: "Never shorten names to fit the terminal (tables as wide as their longest cell).")
    var wide = false

    @Option(help: ArgumentHelp(
        "The tables to print: queue (queues, threads, the top code and tasks), code (every code site: what ran, where it was enqueued from, and the blocking call sites) or task (Swift Concurrency tasks, and actors) or actor (Swift actors: visits, run time, time tasks waited to get onto each, peak queue).",
        valueName: "queue|code|task|actor"))
    var by: StatsGrouping = .queue

    @Option(help: ArgumentHelp(
        "Swift modules that are the program's own code (comma-separated): a Swift job is named by the first frame of its async stack in them. Default: code outside the toolchain and outside package checkouts (.build/checkouts). Also QTRACE_FOCUS.",
        valueName: "modules"))
    var focus: String?

    @Flag(help: "Print the CPU profile instead (traces recorded with --cpu): top functions per queue, code and task (docs/cpu.md).")
    var cpu = false

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("missing trace: use qtrace stats TRACE [TRACE...]") }
    }

    func run() throws {
        Interruption.install(command: "stats")
        applyFocus(focus)
        let inputs = try TraceInputs.open(traces, command: "stats")
        defer { inputs.removeTemporaryFiles() }
        if pid != nil || inputs.processes.count == 1 {
            let process = try inputs.single(pid: pid, command: "stats")
            if json { return try writeSummary(process) }
            let text = try render(process)
            ProgressLine.shared.finish()
            try writeOutput(text, to: output, command: "stats")
            return
        }
        try renderRecording(inputs.processes)
    }

    /// Several processes: the overview (PROCESSES, total, grouped findings), then the tables of
    /// the process with most items (`--all`: of each one) under a heading naming it. A trace that
    /// cannot be read is reported and left out; the exit status then says so.
    private func renderRecording(_ processes: [TraceInput]) throws {
        var overview = RecordingOverview.Builder()
        var sections: [(items: Int, text: String)] = [], summaries: [AnalysisSummary] = [], unreadable = 0
        for (n, process) in processes.enumerated() {
            let result: AnalysisResult
            do { result = try analyseTrace(process, command: "stats") } catch { unreadable += 1; continue }
            overview.add(result)
            if json {
                summaries.append(AnalysisSummary(result: result, tracePath: process.source, generator: "qtrace \(qtraceVersion)"))
                continue
            }
            let name = "process \(result.model.info.pid)" + (process.host.isEmpty ? "" : " @ \(process.host)")
            let program = ProcessOverview.programName(executable: result.model.info.executable,
                                                      commandLine: result.model.info.commandLine)
            sections.append((result.model.items.count,
                             "\n== \(name): \(program) (\(n + 1) of \(processes.count)) ==\n" + text(result, tracePath: process.source)))
        }
        ProgressLine.shared.phase("writing the summary")
        let recording = overview.build()
        let text = json
            ? String(decoding: try RecordingSummary(overview: recording, processes: summaries,
                                                    generator: "qtrace \(qtraceVersion)").jsonData(), as: UTF8.self) + "\n"
            : StatsText.renderRecording(recording, width: width, limit: all ? 0 : 20) + shownSections(sections)
        ProgressLine.shared.finish()
        try writeOutput(text, to: output, command: "stats")
        if unreadable > 0 {
            throw fail("stats", "\(unreadable) of \(processes.count) traces could not be read (errors above); the rest are shown")
        }
    }

    /// A build's recording has dozens of processes, each with tables: by default only the one
    /// with most items (the first on ties) is shown, so that the output stays readable.
    private func shownSections(_ sections: [(items: Int, text: String)]) -> String {
        guard !all, sections.count > 1, let busiest = sections.indices.max(by: { sections[$0].items < sections[$1].items || (sections[$0].items == sections[$1].items && $0 > $1) }) else {
            return sections.map(\.text).joined()
        }
        return sections[busiest].text
            + "\n... the tables of \(sections.count - 1) other processes (--pid PID shows one, --all every one)\n"
    }

    private func render(_ process: TraceInput) throws -> String {
        text(try analyseTrace(process, command: "stats"), tracePath: process.source)
    }

    /// One process's JSON summary, written in pieces as it is encoded (1.7 GB at 900k queues).
    private func writeSummary(_ process: TraceInput) throws {
        let result = try analyseTrace(process, command: "stats")
        ProgressLine.shared.phase("writing the summary")
        let summary = Phases.time("summary: build") {
            AnalysisSummary(result: result, tracePath: process.source, generator: "qtrace \(qtraceVersion)")
        }
        try Phases.time("summary: JSON encoding and writing") {
            try writeOutputFile(output ?? "-", command: "stats") { file in
                try summary.writeJSON { data in try data.withUnsafeBytes { try file.write($0) } }
                try file.write("\n")
            }
        }
        ProgressLine.shared.finish()
    }

    private func text(_ result: AnalysisResult, tracePath: String) -> String {
        if cpu { return StatsText.cpu(CPUProfile.build(result.model), width: width, limit: all ? 0 : 20, functions: all ? 0 : 5) }
        return StatsText.render(result, tracePath: tracePath, width: width, limit: all ? 0 : 20, by: by)
    }

    private var width: Int {
        wide ? unlimitedTableWidth : tableWidth(toStandardOutput: output == nil || output == "-")
    }
}
extension StatsGrouping: ExpressibleByArgument {}
