import ArgumentParser
import QTraceAnalysis
import QTraceText
import QTraceRecording

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fail (exit 1) when queue latencies exceed bounds or findings are present.",
        discussion: """
        Bounds are LABEL=DURATION (units ns, us, ms, s); LABEL may use * and ? wildcards and \
        every queue it matches must hold. LABEL also names code sites (see `qtrace stats --by \
        code`): 'Loader.load=5ms' bounds Loader.load(), Loader.load(id:) and the closures in \
        them. Prints one line per broken bound. Exit status: 0 all bounds hold, 1 some do not, \
        2 unusable input or output (stdout could not be written), or an inconsistent trace: \
        one the reader found damaged (bad chunks, records out of range) or whose records no \
        recording produces (reused item ids, an item ending while another runs, items run on \
        queues whose targets loop), the finding trace.inconsistent. Its figures cannot be \
        trusted, so no bound can hold on it; --allow-inconsistent checks the rest anyway. \
        A recording of several \
        processes (a directory of traces, or a multi-process LTTng trace) is checked process \
        by process; each broken bound's line starts with its process (--pid checks one).
          qtrace check app.qtrace --max-wait-p99 'com.example.db=10ms' --no-findings error
          qtrace check app.qtrace --max-run-p99 'Loader.load=5ms'
        """)

    @Argument(help: "The trace file, a directory of traces (every process must hold), an LTTng trace directory, or a JSON summary from `qtrace stats --json`.")
    var trace: String

    @Option(help: ArgumentHelp("The process to check, in a trace directory with several.", valueName: "pid"))
    var pid: Int32?

    @Option(name: .customLong("max-wait-p50"), help: "LABEL=DURATION bound on the median wait (enqueue to start).")
    var maxWaitP50: [String] = []
    @Option(name: .customLong("max-wait-p90"), help: "LABEL=DURATION bound on the 90th percentile wait.")
    var maxWaitP90: [String] = []
    @Option(name: .customLong("max-wait-p99"), help: "LABEL=DURATION bound on the 99th percentile wait.")
    var maxWaitP99: [String] = []
    @Option(name: .customLong("max-wait"), help: "LABEL=DURATION bound on the longest wait.")
    var maxWait: [String] = []
    @Option(name: .customLong("max-run-p50"), help: "LABEL=DURATION bound on the median run time.")
    var maxRunP50: [String] = []
    @Option(name: .customLong("max-run-p90"), help: "LABEL=DURATION bound on the 90th percentile run time.")
    var maxRunP90: [String] = []
    @Option(name: .customLong("max-run-p99"), help: "LABEL=DURATION bound on the 99th percentile run time.")
    var maxRunP99: [String] = []
    @Option(name: .customLong("max-run"), help: "LABEL=DURATION bound on the longest run time.")
    var maxRun: [String] = []

    @Option(name: .customLong("no-findings"), help: "Fail on findings of this severity or worse: error, warning or info.")
    var noFindings: String?

    @Flag(name: .customLong("allow-inconsistent"), help: "Check a trace with the finding trace.inconsistent (damaged or altered) instead of failing with status 2.")
    var allowInconsistent = false

    func run() throws {
        var bounds: [QueueBound] = []
        let options: [(BoundMetric, [String])] = [
            (.waitP50, maxWaitP50), (.waitP90, maxWaitP90), (.waitP99, maxWaitP99), (.waitMax, maxWait),
            (.runP50, maxRunP50), (.runP90, maxRunP90), (.runP99, maxRunP99), (.runMax, maxRun),
        ]
        do {
            for (metric, texts) in options { for text in texts { bounds.append(try QueueBound(parsing: text, metric: metric)) } }
        } catch let error as BoundError {
            throw fail("check", error.description)
        }
        var severity: Severity?
        if let noFindings {
            guard let s = Severity(rawValue: noFindings.lowercased()) else {
                throw fail("check", "--no-findings takes error, warning or info, not '\(noFindings)'")
            }
            severity = s
        }
        guard !bounds.isEmpty || severity != nil else {
            throw fail("check", "nothing to check: give bounds (e.g. --max-wait-p99 'LABEL=10ms') or --no-findings")
        }
        // Every process of a recording must hold: each line then names its process.
        let summaries = try loadSummaries(trace, command: "check", pid: pid)
        if !allowInconsistent { try refuseInconsistent(summaries) }
        var violations: [String] = []
        for summary in summaries {
            let lines = BoundCheck.violations(summary: summary, bounds: bounds, failOn: severity)
            let process = "pid \(summary.trace.pid) (\(ProcessOverview.programName(executable: summary.trace.executable, commandLine: summary.trace.commandLine))): "
            violations += summaries.count == 1 ? lines : lines.map { process + $0 }
        }
        if violations.isEmpty {
            try writeOutput("ok: \(bounds.count) bound\(bounds.count == 1 ? " holds" : "s hold")" + (severity.map { ", no \($0.rawValue) findings or worse" } ?? "") + "\n",
                            to: nil, command: "check")
            return
        }
        try writeOutput(violations.map { terminalSafe($0) + "\n" }.joined(), to: nil, command: "check")
        throw ExitCode(1)
    }

    /// A gate must not pass a trace it cannot trust: one line and status 2 (unusable input).
    private func refuseInconsistent(_ summaries: [AnalysisSummary]) throws {
        let broken = summaries.filter { $0.findings.contains { $0.id == "trace.inconsistent" } }
        guard let first = broken.first, let finding = first.findings.first(where: { $0.id == "trace.inconsistent" }) else { return }
        let which = summaries.count == 1 ? "'\(trace)'" : "\(broken.count) of \(summaries.count) processes (pid \(first.trace.pid) first)"
        throw fail("check", "\(which): inconsistent trace, bounds not checked (--allow-inconsistent checks it anyway): \(finding.message)")
    }
}
