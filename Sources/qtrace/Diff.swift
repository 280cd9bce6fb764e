import ArgumentParser
import QTraceAnalysis
import QTraceText
import QTraceRecording

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two runs queue by queue (items, wait and run p50/p99).",
        discussion: """
        A and B are traces (.qtrace files or LTTng trace directories) or JSON summaries \
        (`qtrace stats --json [--pid PID]`), so a run can be compared with a stored baseline. \
        Queues are matched by label. Recordings of several processes (directories of traces, \
        multi-process LTTng traces) are compared process by process, paired by executable and \
        arguments. A write error on stdout is one line on stderr and exit status 2.
        """)

    @Argument(help: "The baseline run (trace or JSON summary).")
    var base: String

    @Argument(help: "The run to compare with it.")
    var new: String

    func run() throws {
        let a = try loadSummaries(base, command: "diff")
        let b = try loadSummaries(new, command: "diff")
        let width = tableWidth()
        if a.count == 1 && b.count == 1 {
            try writeOutput(DiffText.render(RunComparison(base: a[0], new: b[0]), width: width), to: nil, command: "diff")
            return
        }
        // Recordings of several processes: one comparison per process pair.
        let pairing = RecordingPairing(base: a, new: b)
        var out = "\(a.count) processes in A, \(b.count) in B: \(pairing.pairs.count) paired by executable and arguments\n"
        for (x, y) in pairing.pairs {
            out += "\n== \(processName(x, width: width)) (pid \(x.trace.pid) -> \(y.trace.pid)) ==\n"
            out += DiffText.render(RunComparison(base: x, new: y), width: width)
        }
        for s in pairing.onlyInBase { out += "\nonly in A: \(processName(s, width: width)) (pid \(s.trace.pid))\n" }
        for s in pairing.onlyInNew { out += "\nonly in B: \(processName(s, width: width)) (pid \(s.trace.pid))\n" }
        try writeOutput(out, to: nil, command: "diff")
    }

    private func processName(_ s: AnalysisSummary, width: Int) -> String {
        terminalSafe(TextTable.shortened(ProcessOverview.programName(executable: s.trace.executable, commandLine: s.trace.commandLine) + " "
            + ProcessOverview.arguments(s.trace.commandLine), to: width == unlimitedTableWidth ? width : 100, inMiddle: true))
    }
}
