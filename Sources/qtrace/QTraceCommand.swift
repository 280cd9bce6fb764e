// The qtrace command line: thin layer over QTraceFormat, QTraceAnalysis and QTraceReport.
import ArgumentParser

@main
struct QTraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qtrace",
        abstract: "Trace, analyse and visualise Grand Central Dispatch (libdispatch) programs on Linux.",
        discussion: """
        Typical use:
          qtrace record -- ./app            record ./app and write trace + HTML report
          qtrace stats TRACE                per-queue and per-thread statistics, findings
          qtrace report TRACE -o r.html     write the HTML report for an existing trace
        """,
        version: qtraceVersion,
        subcommands: [Record.self, Dump.self, Stats.self, Check.self, Diff.self, Report.self, Export.self]
    )
}

let qtraceVersion = "0.1.0"
