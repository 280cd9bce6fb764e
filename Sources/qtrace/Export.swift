// `qtrace export`: the trace in another tool's format.
import ArgumentParser
import Foundation
import QTraceAnalysis
import QTraceExport
import QTraceRecording

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export a trace for other viewers.",
        discussion: """
        chrome-json: the Chrome trace-event format, opened by Perfetto's UI (ui.perfetto.dev, \
        "Open trace file") and chrome://tracing: one track per thread with a slice per work item, \
        flow arrows from where an item was enqueued to where it ran, and counters for the \
        thread count and queue backlogs.

        tables: the analysis as gzip-compressed CSV tables (processes, queues, items, threads, \
        code_sites, tasks, findings; schema in docs/fleet.md), written to -o DIR as \
        DIR/TABLE/RUN.HOST.PID.csv.gz, so that the exports of many runs and hosts share one \
        directory and DuckDB, Spark, Trino or ClickHouse query them with a glob. Every row \
        carries run (--run, default: the trace's name), host and pid.
          qtrace export build/ --format tables --run v1.2 -o fleet/
          duckdb -c "SELECT host, name, max(wait_p99_ns) FROM 'fleet/queues/*.csv.gz' GROUP BY ALL"

        folded: the CPU samples of a trace recorded with --cpu as folded stacks, one line per \
        distinct stack (`queue;outer;...;leaf COUNT`, the root frame being the item's queue or \
        "outside items"), for flamegraph.pl and speedscope.
          qtrace export app.qtrace --format folded -o app.folded && flamegraph.pl app.folded > app.svg

        perfetto: Perfetto's own protobuf format (.pftrace; docs/perfetto.md), several times smaller \
        and faster to load: a thread track per thread with each item as a slice named by its code \
        (args: queue, item id, kind, wait, where it was enqueued), flows from each enqueue to its \
        start and between a Swift task's jobs, a track per queue with running and pending items, \
        thread-count and backlog counters, QTrace marks and intervals, blocked time, --sched thread \
        states and findings. Query it with trace_processor.

        TRACE is a .qtrace file, a recording's folder or an LTTng trace directory; several \
        traces (or a directory with several processes) export as one file (one set of tables) \
        with a process per traced process.
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case chromeJSON = "chrome-json", perfetto, tables, folded

        var fileExtension: String { self == .perfetto ? ".pftrace" : ".json" }
        var phase: String { self == .perfetto ? "writing the Perfetto trace" : "writing the Chrome trace" }
    }

    @Argument(help: ArgumentHelp("The traces (.qtrace files or LTTng trace directories).", valueName: "trace"))
    var traces: [String]

    @Option(name: .long, help: "Output format: chrome-json, perfetto (docs/perfetto.md), tables (docs/fleet.md) or folded (CPU samples as folded stacks; docs/cpu.md).")
    var format: Format = .chromeJSON

    @Option(name: [.short, .long], help: ArgumentHelp(
        "File to write (default: TRACE with .json, .pftrace for perfetto; - for stdout), or for tables the directory (default: TRACE with .tables). A file is written beside under a temporary name and renamed into place: a symlink there is replaced, never followed.",
        valueName: "path"))
    var output: String?

    @Option(name: .customLong("run"), help: ArgumentHelp("tables: the run column (default: the trace's name), e.g. a build or deploy id.", valueName: "name"))
    var runName: String?

    @Option(help: ArgumentHelp("tables: the host column (default: the host each trace names, or this machine's).", valueName: "name"))
    var host: String?

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("missing trace: use qtrace export TRACE [TRACE...]") }
    }

    func run() throws {
        let trace = Report.withoutTrailingSlash(traces[0])
        let base = traceStem(trace)
        Interruption.install(command: "export")
        if format == .tables { return try exportTables(into: output ?? base + ".tables", runName: runName ?? ProcessOverview.fileName(base)) }
        if format == .folded { return try exportFolded(to: output ?? base + ".folded") }
        let path = output ?? base + format.fileExtension
        let input = try ReportGeneration.input(tracePaths: traces, command: "export")
        ProgressLine.shared.phase(format.phase)
        try writeOutputFile(path, command: "export") { file in
            switch format {
            case .perfetto: try TraceExport.perfetto(input, to: file)
            default: try TraceExport.chromeJSON(input, to: file)
            }
        }
        ProgressLine.shared.finish()
        if let shown = announcedPath(path) { writeStderr("qtrace: exported: \(shown)\n") }
    }

    /// One process at a time: analysed (symbolized), its rows appended, its model released.
    private func exportTables(into directory: String, runName: String) throws {
        let inputs = try TraceInputs.open(traces, command: "export")
        defer { inputs.removeTemporaryFiles() }
        let first = inputs.processes.first
        let firstHost: String = host ?? first?.host ?? ""
        let firstPid: String = first?.pid.map { String($0) } ?? String(ProcessInfo.processInfo.processIdentifier)
        let stem = [runName, firstHost, firstPid].map(safeFileName).joined(separator: ".")
        do {
            let writer = try FleetTables.Writer(directory: directory, run: runName, fileStem: stem)
            for process in inputs.processes {
                let result = try analyseTrace(process, command: "export")
                ProgressLine.shared.phase("writing the tables")
                try writer.add(result, host: host ?? process.host)
            }
            let written = try writer.finish()
            ProgressLine.shared.finish()
            writeStderr("qtrace: exported \(written.count) tables of \(inputs.processes.count) process\(inputs.processes.count == 1 ? "" : "es"): \(directory)/*/\(stem).csv.gz\n")
        } catch let error as TableWriteError {
            throw fail("export", error.description)
        }
    }

    /// Each process analysed (symbolized) in turn.
    private func exportFolded(to path: String) throws {
        let inputs = try TraceInputs.open(traces, command: "export")
        defer { inputs.removeTemporaryFiles() }
        var folded = FoldedStacks(namesProcesses: inputs.processes.count > 1)
        for process in inputs.processes { folded.add(try analyseTrace(process, command: "export").model) }
        guard folded.sampleCount > 0 else {
            throw fail("export", "no CPU samples in \(traces.joined(separator: ", ")): record with qtrace record --cpu -- PROGRAM")
        }
        try writeOutput(folded.text, to: path, command: "export")
        ProgressLine.shared.finish()
        if let shown = announcedPath(path) { writeStderr("qtrace: exported \(folded.sampleCount) samples as folded stacks: \(shown)\n") }
    }

    /// A run or host name as part of a file name: no slash, no leading dot, no control bytes.
    private func safeFileName(_ text: String) -> String {
        let kept = text.unicodeScalars.map { s -> Character in
            s == "/" || s.value < 0x20 || s.value == 0x7F ? "_" : Character(s)
        }
        let name = String(kept.prefix(80))
        return name.isEmpty || name.hasPrefix(".") ? "_" + name : name
    }
}
