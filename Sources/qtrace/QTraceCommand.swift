// The qtrace command line: thin layer over QTraceFormat, QTraceAnalysis and QTraceReport.
import ArgumentParser
import Foundation
import QTraceAnalysis
import QTraceRecording

@main
struct QTraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qtrace",
        abstract: "Trace, analyse and visualise Grand Central Dispatch (libdispatch) programs on Linux.",
        discussion: """
        Typical use:
          qtrace record -- ./app            record ./app and write trace + HTML report
          qtrace top -- ./app               watch ./app's queues and threads live
          qtrace stats TRACE                per-queue/thread statistics, findings
          qtrace report TRACE -o r.html     write the HTML report for an existing trace

        Outputs: -o - is stdout (report, export, stats). Files are written beside under a \
        temporary name and renamed into place: a symlink at the path is replaced, never \
        followed, and a failed write leaves no half file. A write error (full disk, \
        > /dev/full) is one line on stderr and exit status 2 (docs/outputs.md).
        """,
        version: qtraceVersion,
        subcommands: [Record.self, Top.self, Snapshot.self, On.self, Off.self, Dump.self, Stats.self, Check.self, Diff.self, Report.self, Export.self]
    )

    /// Like ArgumentParser's main, but a usage error (unknown option, missing argument, bad
    /// value) is one line on stderr, not the whole usage text.
    static func main() {
        do {
            var command = try parseAsRoot(CPUSampling.expandingRate(Array(CommandLine.arguments.dropFirst())))
            try command.run()
        } catch {
            let code = exitCode(for: error)
            let text = message(for: error)
            if code == .success || text.isEmpty {
                exit(withError: error)  // --help, --version, or a command's own exit status
            }
            let firstLine = text.split(separator: "\n").first.map(String.init) ?? text
            let trimmed = firstLine.hasPrefix("Error: ") ? String(firstLine.dropFirst(7)) : firstLine
            writeStderr("qtrace: error: \(terminalSafe(trimmed)) (see qtrace --help)\n")
            Foundation.exit(code.rawValue)
        }
    }
}
